"""tinylm_solutions.tokenizer: vocabularies, round trips, errors."""
import pytest

from tinylm_solutions.tokenizer import CharTokenizer, WordTokenizer

TEXT = "To be, or not to be: that is the question.\nWhether 'tis nobler..."


def test_char_vocab_is_sorted_unique_chars():
    tok = CharTokenizer("banana!")
    assert tok.chars == ["!", "a", "b", "n"] and tok.vocab_size == 4
    assert tok.encode("nab!") == [3, 1, 2, 0]


def test_char_round_trip():
    tok = CharTokenizer(TEXT)
    ids = tok.encode(TEXT)
    assert len(ids) == len(TEXT) and max(ids) == tok.vocab_size - 1
    assert tok.decode(ids) == TEXT


def test_char_errors():
    tok = CharTokenizer("abc")
    with pytest.raises(ValueError, match="'z'"):
        tok.encode("abz")
    with pytest.raises(ValueError):
        tok.decode([0, 3])
    with pytest.raises(ValueError):
        CharTokenizer("")


def test_word_split_and_vocab_order():
    tok = WordTokenizer("the cat, the dog. the cat!")
    assert tok.tokenize("the cat, the") == ["the", "cat", ",", "the"]
    assert tok.itos == ["<unk>", "the", "cat", "!", ",", ".", "dog"]  # by frequency, ties alphabetical
    assert tok.unk_id == 0 and tok.vocab_size == 7


def test_word_round_trip_at_token_level():
    tok = WordTokenizer(TEXT)
    ids = tok.encode(TEXT)
    assert tok.unk_id not in ids
    assert tok.tokenize(tok.decode(ids)) == tok.tokenize(TEXT)
    assert tok.decode(tok.encode("To be, or not")) == "To be , or not"


def test_word_unk_and_min_freq():
    tok = WordTokenizer("a a b", min_freq=2)
    assert tok.itos == ["<unk>", "a"]
    assert tok.encode("a b zebra") == [1, 0, 0]
    assert WordTokenizer("A a", lower=True).itos == ["<unk>", "a"]
    with pytest.raises(ValueError):
        WordTokenizer("a", min_freq=0)
    with pytest.raises(ValueError):
        tok.decode([2])
