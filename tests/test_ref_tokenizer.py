"""tinylm_solutions.tokenizer: vocabularies, round trips, errors; Chinese words cut by jieba."""
import re
from collections import Counter

import pytest

from tinylm_solutions import segment as segment_module
from tinylm_solutions.tokenizer import (SPECIALS, WORD_PATTERN, CharTokenizer, WordTokenizer, build_word_vocab,
                                        char_tokenizer, split_words, unk_rate, word_encode)

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


# ---- Chinese: jieba's words; English exactly as before

ENGLISH = [TEXT, "the cat, the dog. the cat!", "Ünïcödé lines, ünïcödé words.\n", "snake_case x2 = 3.14; l'été",
           "", "   \n", "<eos> </s> ...", "ｆｕｌｌ－ｗｉｄｔｈ Ｌａｔｉｎ", "かなとカナ"]


@pytest.mark.parametrize("text", ENGLISH)
def test_split_words_without_chinese_is_the_regex_and_never_calls_jieba(text, monkeypatch):
    monkeypatch.setattr(segment_module, "_segment", lambda run: pytest.fail(f"jieba called on {run!r}"))
    assert split_words(text) == WORD_PATTERN.findall(text)
    counts = Counter(WORD_PATTERN.findall(text))  # the vocabulary of before, by frequency, ties alphabetically
    assert build_word_vocab(text) == [*SPECIALS, *sorted((t for t in counts if t not in SPECIALS),
                                                         key=lambda t: (-counts[t], t))]
    assert word_encode(text, build_word_vocab(text)) == [build_word_vocab(text).index(t) if t not in SPECIALS else
                                                         SPECIALS.index(t) for t in WORD_PATTERN.findall(text)] + [2]


def test_split_words_cuts_chinese_with_jieba():
    import jieba

    assert split_words("春风不度玉门关。") == ["春风", "不度", "玉门关", "。"]
    assert split_words("春风又绿江南岸，明月何时照我还？") == [*jieba.lcut("春风又绿江南岸"), "，", *jieba.lcut("明月何时照我还"), "？"]
    assert split_words("用 PyTorch 训练GPT模型_v2：loss 1.5") == \
        ["用", "PyTorch", "训练", "GPT", "模型", "_v2", "：", "loss", "1", ".", "5"]
    text = "李白《静夜思》\n床前看月光，疑是地上霜。\n举头望山月，低头思故乡。"
    assert "".join(split_words(text)) == re.sub(r"\s", "", text)  # nothing lost but the whitespace
    assert all(len(w) <= 4 for w in split_words(text))


def test_jieba_is_used_with_its_own_dictionary():
    """Words added to jieba's global dictionary elsewhere (a learner's notebook) do not change the tokens."""
    import jieba

    before = split_words("疑是地上霜")
    segment_module._segment.cache_clear()
    jieba.add_word("疑是地上霜")
    try:
        assert split_words("疑是地上霜") == before != ["疑是地上霜"]
    finally:
        jieba.del_word("疑是地上霜")


def test_word_functions_on_chinese():
    poem = "春风不度玉门关。春风又绿江南岸，明月何时照我还？"
    vocab = build_word_vocab(poem)
    assert vocab[:4] == [*SPECIALS, "春风"]  # the only word seen twice
    ids = word_encode("春风吹。", vocab)
    assert ids == [3, 1, vocab.index("。"), 2]  # 吹 is not in the vocabulary
    tok = WordTokenizer(poem + " the cat.")
    ids = tok.encode("春风不度玉门关。明月 the cat.")
    assert tok.unk_id not in ids
    assert tok.decode(ids) == "春风不度玉门关。明月 the cat ."  # no spaces between Chinese tokens
    assert tok.tokenize(tok.decode(ids)) == tok.tokenize("春风不度玉门关。明月 the cat.")


@pytest.mark.slow
def test_on_the_chinese_corpus_words_are_short_and_the_sequence_shorter():
    """On the Chinese corpus (10,622 Tang poems): jieba's words average 1.75 characters (at most 3); the word
    vocabulary is 15 times the character one (77,072 against 5,155 tokens), the sequence 0.58 times as long (377,116
    tokens against 650,852: the words and punctuation marks, no newlines)."""
    from tinylm_solutions.data import chinese_corpus

    text = chinese_corpus()
    words = split_words(text)
    chinese = [w for w in words if segment_module.HAN_RUN.fullmatch(w)]
    average = sum(map(len, chinese)) / len(chinese)
    assert average <= 3 and sum(map(len, words)) / len(words) <= 3
    assert average == pytest.approx(1.75, abs=0.05)
    chars, word = CharTokenizer(text), WordTokenizer(text)
    assert (chars.vocab_size, len(chars.encode(text))) == (5_155, 650_852)
    assert word.vocab_size == pytest.approx(77_072, rel=0.02) and len(word.encode(text)) == len(words)
    assert len(words) == pytest.approx(377_116, rel=0.02)
    assert word.vocab_size > 10 * chars.vocab_size and len(words) < 0.6 * len(text)
    assert WordTokenizer(text, min_freq=2).vocab_size == pytest.approx(22_340, rel=0.02)  # tinylm-train's
