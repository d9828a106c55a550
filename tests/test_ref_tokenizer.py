"""tinylm_solutions.tokenizer: vocabularies, round trips, errors."""
import pytest

from tinylm_solutions.tokenizer import (SPECIALS, CharTokenizer, WordTokenizer, build_word_vocab, char_tokenizer,
                                        unk_rate, word_encode)

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
    assert tok.itos == ["<pad>", "<unk>", "<eos>", "the", "cat", "!", ",", ".", "dog"]  # by frequency, ties abc
    assert (tok.pad_id, tok.unk_id, tok.eos_id, tok.vocab_size) == (0, 1, 2, 9)


def test_word_round_trip_at_token_level():
    tok = WordTokenizer(TEXT)
    ids = tok.encode(TEXT)
    assert tok.unk_id not in ids
    assert tok.tokenize(tok.decode(ids)) == tok.tokenize(TEXT)
    assert tok.decode(tok.encode("To be, or not")) == "To be , or not"


def test_word_unk_and_min_freq():
    tok = WordTokenizer("a a b", min_freq=2)
    assert tok.itos == [*SPECIALS, "a"]
    assert tok.encode("a b zebra") == [3, 1, 1]
    assert tok.encode("a b", add_eos=True) == [3, 1, 2]
    assert WordTokenizer("A a", lower=True).itos == [*SPECIALS, "a"]
    assert WordTokenizer("A a", lower=True).encode("A") == [3]
    with pytest.raises(ValueError):
        WordTokenizer("a", min_freq=0)
    with pytest.raises(ValueError):
        tok.decode([4])
    assert tok.decode([3, 0, 0]) == "a"  # <pad> is dropped


def test_from_vocab_round_trip_and_errors():
    tok = WordTokenizer(TEXT)
    again = WordTokenizer.from_vocab(tok.itos)
    assert again.encode(TEXT) == tok.encode(TEXT)
    with pytest.raises(ValueError, match="<pad>"):
        WordTokenizer.from_vocab(["<unk>", "a"])


def test_char_tokenizer_function():
    vocab, ids = char_tokenizer("banana!\n")
    assert vocab == ["\n", "!", "a", "b", "n"] and ids == [3, 2, 4, 2, 4, 2, 1, 0]
    assert "".join(vocab[i] for i in ids) == "banana!\n"
    for bad in ("", None, 3):
        with pytest.raises(ValueError):
            char_tokenizer(bad)


def test_word_encode_function():
    vocab = build_word_vocab("the cat. the dog")
    assert vocab == [*SPECIALS, "the", ".", "cat", "dog"]
    assert word_encode("the zebra, the cat.", vocab) == [3, 1, 1, 3, 5, 4, 2]  # unknown -> 1, <eos> = 2 at the end
    assert word_encode("", vocab) == [2]
    assert word_encode("The", vocab) == [1, 2]  # case is kept
    with pytest.raises(ValueError, match="starts with"):
        word_encode("the", ["<unk>", "the"])
    with pytest.raises(ValueError):
        build_word_vocab("a", min_freq=0)


def test_unk_rate():
    assert unk_rate([3, 1, 1, 3, 2, 0]) == 0.5  # <eos> and <pad> are not counted
    assert unk_rate([2, 0]) == 0.0
