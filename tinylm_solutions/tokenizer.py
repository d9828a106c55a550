"""Two minimal tokenizers: characters (lossless) and words (lossy: whitespace is not kept).

``CharTokenizer`` is the one of Karpathy's char-rnn / nanoGPT's shakespeare_char: the vocabulary is the
sorted set of characters of a text. ``WordTokenizer`` splits words and punctuation with a regex and maps
rare or unseen words to ``<unk>``.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

WORD_PATTERN = re.compile(r"\w+|[^\w\s]")  # a run of word characters, or one punctuation character


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
        self.chars = sorted(set(text))
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
    """Word-level tokenizer: ``WORD_PATTERN`` tokens seen at least ``min_freq`` times, plus ``<unk>`` (id 0).

    Args:
        text: training text for the vocabulary.
        min_freq: rarer tokens map to ``<unk>`` (default 1: keep everything seen).
        lower: lowercase text before splitting (default False).

    Ids ``1..`` go to tokens by decreasing frequency, ties alphabetically (deterministic).
    ``encode(str) -> list[int]`` (unknown tokens -> ``unk_id``); ``decode(list[int]) -> str`` joins tokens
    with single spaces, so the round trip holds at the token level: ``tokenize(decode(encode(s))) ==
    tokenize(s)`` when every token of ``s`` is in the vocabulary.

    Raises:
        ValueError: if ``min_freq < 1``; (decode) on ids outside ``[0, vocab_size)``.
    """

    UNK = "<unk>"

    def __init__(self, text: str, min_freq: int = 1, lower: bool = False):
        if min_freq < 1:
            raise ValueError(f"min_freq must be >= 1, got {min_freq}")
        self.lower = lower
        counts = Counter(self.tokenize(text))
        kept = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
        self.itos = [self.UNK] + kept
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.unk_id = 0

    @classmethod
    def from_vocab(cls, itos: list[str], lower: bool = False) -> "WordTokenizer":
        """The tokenizer whose vocabulary is ``itos`` (``itos[0]`` is ``<unk>``), e.g. from a checkpoint.

        Raises:
            ValueError: if ``itos`` does not start with ``<unk>``.
        """
        if not itos or itos[0] != cls.UNK:
            raise ValueError(f"a word vocabulary starts with {cls.UNK!r}")
        tok = cls.__new__(cls)
        tok.lower, tok.itos, tok.unk_id = lower, list(itos), 0
        tok.stoi = {t: i for i, t in enumerate(tok.itos)}
        return tok

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def tokenize(self, text: str) -> list[str]:
        return WORD_PATTERN.findall(text.lower() if self.lower else text)

    def encode(self, text: str) -> list[int]:
        return [self.stoi.get(t, self.unk_id) for t in self.tokenize(text)]

    def decode(self, ids: Iterable[int]) -> str:
        ids = [int(i) for i in ids]
        bad = [i for i in ids if not 0 <= i < self.vocab_size]
        if bad:
            raise ValueError(f"token ids out of range [0, {self.vocab_size}): {bad[:10]}")
        return " ".join(self.itos[i] for i in ids)
