"""Words of a text for the word tokenizer: a regex for text with spaces between words, and jieba for Chinese, which
writes none. Given code (no stage's exercise): stage 09's notebook shows :func:`split_words` on Chinese beside its own
exercises, and :mod:`tinylm_solutions.tokenizer` (stage 09's answers) builds its word vocabularies with it.
"""
from __future__ import annotations

import re
from functools import lru_cache

WORD_PATTERN = re.compile(r"\w+|[^\w\s]")  # a run of word characters, or one punctuation character
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff"  # CJK ideographs (ext. A-H, compatibility)
HAN_RUN = re.compile(f"[{HAN}]+")
CJK_TEXT = re.compile(f"[{HAN}\u3000-\u303f\uff00-\uffef]")  # ideographs and full-width punctuation: decode


@lru_cache(maxsize=None)
def _jieba():
    """A jieba segmenter of its own default dictionary (what ``jieba.lcut`` uses, untouched by ``jieba.add_word``
    or ``jieba.load_userdict`` elsewhere in the process); jieba's start-up log is silenced."""
    import logging

    import jieba

    jieba.setLogLevel(logging.CRITICAL)
    segmenter = jieba.Tokenizer()
    segmenter.initialize()  # loads the dictionary (about a second) once per process, no network
    return segmenter


@lru_cache(maxsize=2 ** 18)
def _segment(run: str) -> tuple[str, ...]:
    """jieba's words of a run of Chinese characters (``jieba.lcut(run)``, with its HMM for unknown words)."""
    return tuple(_jieba().lcut(run))


def split_words(text: str) -> list[str]:
    """The word tokens of ``text``: ``WORD_PATTERN``'s runs of word characters and single punctuation characters,
    with every run of Chinese characters cut into words by jieba (Chinese writes no spaces between words).

    Without Chinese characters (CJK ideographs, :data:`HAN`) this is exactly ``WORD_PATTERN.findall(text)``, and
    jieba is not even imported. A run of word characters that has some is cut into its Chinese and other parts
    (``"GPT模型"`` -> ``"GPT"``, then jieba's words of ``"模型"``); full-width punctuation (``，``, ``。``) is one token
    each, like ASCII punctuation. jieba is deterministic (its own dictionary, no network), so the same text always
    gives the same tokens; ``"".join(split_words(t))`` is ``t`` without its whitespace.

    Example: ``split_words("春风不度玉门关。") == ["春风", "不度", "玉门关", "。"]``.
    """
    tokens = WORD_PATTERN.findall(text)
    if HAN_RUN.search(text) is None:
        return tokens
    out: list[str] = []
    for token in tokens:
        if HAN_RUN.search(token) is None:
            out.append(token)
            continue
        at = 0
        for m in HAN_RUN.finditer(token):
            if m.start() > at:
                out.append(token[at:m.start()])
            out.extend(_segment(m.group()))
            at = m.end()
        if at < len(token):
            out.append(token[at:])
    return out


def _chinese(token: str) -> bool:
    """A token of Chinese writing (its first character an ideograph or full-width punctuation): no space is
    written between two of them."""
    return CJK_TEXT.match(token) is not None
