"""Two minimal tokenizers: characters (lossless) and words (lossy: whitespace is not kept).

``CharTokenizer`` is the one of Karpathy's char-rnn / nanoGPT's shakespeare_char: the vocabulary is the
sorted set of characters of a text. ``WordTokenizer`` splits words and punctuation (:func:`split_words`: a regex,
and jieba for Chinese, which writes no spaces between words), keeps three special tokens first (``<pad>`` 0,
``<unk>`` 1, ``<eos>`` 2) and maps rare or unseen words to ``<unk>``.

Stage 09's exercises are the functions on plain data: :func:`char_tokenizer` and :func:`word_encode`
(the classes build on them).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from .segment import CJK_TEXT, HAN, HAN_RUN, WORD_PATTERN, _chinese, split_words  # noqa: F401 - re-exported

PAD, UNK, EOS = "<pad>", "<unk>", "<eos>"
SPECIALS = (PAD, UNK, EOS)  # ids 0, 1, 2 of every word vocabulary
PAD_ID, UNK_ID, EOS_ID = 0, 1, 2


def char_tokenizer(text: str) -> tuple[list[str], list[int]]:
    """The character vocabulary of ``text`` and ``text`` encoded with it.

    Args:
        text: a non-empty ``str``.

    Returns:
        ``(vocab, ids)``: ``vocab = sorted(set(text))`` (a list of one-character strings, so ids do not
        depend on the order characters first appear), and ``ids[i] = vocab.index(text[i])``; decoding is
        ``"".join(vocab[i] for i in ids) == text``.

    Raises:
        ValueError: if ``text`` is empty or not a ``str``.
    """
    if not isinstance(text, str) or not text:
        raise ValueError(f"char_tokenizer needs a non-empty str, got {text!r:.40}")
    vocab = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(vocab)}
    return vocab, [stoi[ch] for ch in text]


def build_word_vocab(text: str, min_freq: int = 1, lower: bool = False) -> list[str]:
    """``SPECIALS``, then the :func:`split_words` tokens of ``text`` seen at least ``min_freq`` times, by
    decreasing frequency, ties alphabetically (deterministic). For text without Chinese characters the tokens are
    ``WORD_PATTERN``'s.

    Raises:
        ValueError: if ``min_freq < 1``.
    """
    if min_freq < 1:
        raise ValueError(f"min_freq must be >= 1, got {min_freq}")
    counts = Counter(split_words(text.lower() if lower else text))
    kept = sorted((t for t, c in counts.items() if c >= min_freq and t not in SPECIALS),
                  key=lambda t: (-counts[t], t))
    return [*SPECIALS, *kept]


def word_encode(text: str, vocab: list[str]) -> list[int]:
    """Encode ``text`` with a word vocabulary: :func:`split_words` tokens (``WORD_PATTERN``'s, and jieba's words
    for Chinese) -> ids, unknown tokens -> ``<unk>``, then one ``<eos>`` at the end.

    Args:
        text: any ``str`` (case is kept: lowercase it first if the vocabulary was built lowercased).
        vocab: ``itos``, a list of distinct tokens starting with ``["<pad>", "<unk>", "<eos>"]``.

    Returns:
        ``list[int]`` of length ``len(split_words(text)) + 1``; ``<pad>`` never appears (it only
        fills batches of sequences of different lengths).

    Raises:
        ValueError: if ``vocab`` does not start with the three special tokens.
    """
    if list(vocab[:3]) != list(SPECIALS):
        raise ValueError(f"a word vocabulary starts with {list(SPECIALS)}, got {list(vocab[:3])}")
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, UNK_ID) for t in split_words(text)] + [EOS_ID]


def unk_rate(ids) -> float:
    """Share of ``<unk>`` among the ids that are not ``<pad>`` or ``<eos>``: 0.0 for no such ids."""
    words = [int(i) for i in ids if int(i) not in (PAD_ID, EOS_ID)]
    return sum(i == UNK_ID for i in words) / len(words) if words else 0.0


class CharTokenizer:
    """Character-level tokenizer: id ``i`` is the ``i``-th character of ``sorted(set(text))``.

    ``encode(str) -> list[int]``, ``decode(list[int]) -> str``; ``decode(encode(s)) == s`` for any ``s``
    made of known characters.

    Raises:
        ValueError: if ``text`` is empty; (encode) on characters not in the vocabulary; (decode) on ids
            outside ``[0, vocab_size)``.
    """

    def __init__(self, text: str):
        if not text:
            raise ValueError("CharTokenizer needs a non-empty text to build its vocabulary")
        self.chars, _ = char_tokenizer(text)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list[int]:
        unknown = sorted(set(text) - self.stoi.keys())
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {unknown[:10]!r}")
        return [self.stoi[ch] for ch in text]

    def decode(self, ids: Iterable[int]) -> str:
        ids = [int(i) for i in ids]
        bad = [i for i in ids if not 0 <= i < self.vocab_size]
        if bad:
            raise ValueError(f"token ids out of range [0, {self.vocab_size}): {bad[:10]}")
        return "".join(self.chars[i] for i in ids)


class WordTokenizer:
    """Word-level tokenizer: ``<pad>`` (0), ``<unk>`` (1), ``<eos>`` (2), then the :func:`split_words` tokens
    seen at least ``min_freq`` times (:func:`build_word_vocab`; Chinese is cut into words by jieba).

    Args:
        text: training text for the vocabulary.
        min_freq: rarer tokens map to ``<unk>`` (default 1: keep everything seen).
        lower: lowercase text before splitting (default False).

    Ids ``3..`` go to tokens by decreasing frequency, ties alphabetically (deterministic).
    ``encode(str, add_eos=False) -> list[int]`` (unknown tokens -> ``unk_id``); ``decode(list[int]) -> str``
    joins tokens with single spaces, dropping ``<pad>``, but writes none between two Chinese tokens (words of
    Chinese characters, full-width punctuation: Chinese has no spaces), so the round trip holds at the token level:
    ``tokenize(decode(encode(s))) == tokenize(s)`` when every token of ``s`` is in the vocabulary (and ``s`` has no
    whitespace between two Chinese tokens, which jieba might then cut differently).

    Raises:
        ValueError: if ``min_freq < 1``; (decode) on ids outside ``[0, vocab_size)``.
    """

    PAD, UNK, EOS = PAD, UNK, EOS
    pad_id, unk_id, eos_id = PAD_ID, UNK_ID, EOS_ID

    def __init__(self, text: str, min_freq: int = 1, lower: bool = False):
        self.lower = lower
        self.itos = build_word_vocab(text, min_freq, lower)
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def from_vocab(cls, itos: list[str], lower: bool = False) -> "WordTokenizer":
        """The tokenizer whose vocabulary is ``itos`` (starting with ``SPECIALS``), e.g. from a checkpoint.

        Raises:
            ValueError: if ``itos`` does not start with ``["<pad>", "<unk>", "<eos>"]``.
        """
        if list(itos[:3]) != list(SPECIALS):
            raise ValueError(f"a word vocabulary starts with {list(SPECIALS)}")
        tok = cls.__new__(cls)
        tok.lower, tok.itos = lower, list(itos)
        tok.stoi = {t: i for i, t in enumerate(tok.itos)}
        return tok

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def tokenize(self, text: str) -> list[str]:
        return split_words(text.lower() if self.lower else text)

    def encode(self, text: str, add_eos: bool = False) -> list[int]:
        ids = word_encode(text.lower() if self.lower else text, self.itos)  # ends with <eos>
        return ids if add_eos else ids[:-1]

    def decode(self, ids: Iterable[int]) -> str:
        ids = [int(i) for i in ids]
        bad = [i for i in ids if not 0 <= i < self.vocab_size]
        if bad:
            raise ValueError(f"token ids out of range [0, {self.vocab_size}): {bad[:10]}")
        tokens = [self.itos[i] for i in ids if i != self.pad_id]
        return "".join(t if k == 0 or (_chinese(tokens[k - 1]) and _chinese(t)) else " " + t
                       for k, t in enumerate(tokens))
