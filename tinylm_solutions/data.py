"""Text data for the course: an English and a Chinese corpus, a split, and LM batches.

``default_corpus()`` concatenates the docstrings (English prose) of a fixed list of pure-Python standard
library modules and of their public classes and functions: no download, deterministic for a given Python
version (about 200 KB on 3.11). ``chinese_corpus()`` is the Chinese one: 10,622 Tang poems (五言 / 七言 绝句 and
律诗, simplified characters, 650,852 characters) in ``assets/tang_poems_zh.txt``, which
``tools/make_zh_corpus.py`` builds from the npm package chinese-poetry 2.0.1. ``corpus("en")``, ``corpus("zh")``
or ``corpus(path)`` names either, or a text file. Batching follows nanoGPT's ``get_batch``: ``y`` is ``x`` shifted
by one.
"""
from __future__ import annotations

import importlib
import inspect
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import torch

ZH_CORPUS = next((p for p in (Path(__file__).resolve().parent / "corpora" / "tang_poems_zh.txt",  # a wheel's
                              Path(__file__).resolve().parent.parent / "assets" / "tang_poems_zh.txt")  # the repository's
                  if p.exists()), Path(__file__).resolve().parent.parent / "assets" / "tang_poems_zh.txt")
"""The Chinese corpus: Tang poems, one per paragraph (the line ``作者《标题》``, then one line per couplet). In the
repository, ``assets/tang_poems_zh.txt``; a wheel of the package carries it as ``tinylm_solutions/corpora/``."""
CORPORA = ("en", "zh")
"""The names :func:`corpus` knows: ``"en"`` the English docstrings, ``"zh"`` the Tang poems."""

CORPUS_MODULES = (
    "abc", "argparse", "base64", "bisect", "calendar", "collections", "contextlib", "copy", "csv", "dataclasses",
    "difflib", "enum", "fractions", "functools", "glob", "heapq", "html", "inspect", "itertools", "json",
    "logging", "operator", "pathlib", "pprint", "queue", "random", "re", "statistics", "string", "textwrap",
    "timeit", "typing", "unittest", "urllib.parse", "warnings", "weakref", "zipfile",
)


def default_corpus(modules: tuple[str, ...] = CORPUS_MODULES, max_chars: int | None = None) -> str:
    """Docstrings of ``modules`` and of their public classes/functions, in a fixed order.

    Each module contributes its own docstring, then those of its public names (sorted) defined in that
    module (``obj.__module__ == name``), via ``inspect.getdoc`` (dedented). Pieces are separated by blank
    lines.

    Args:
        modules: standard-library module names, in order.
        max_chars: optional cap on the returned length.

    Returns:
        The corpus as one ``str``.

    Raises:
        RuntimeError: if no docstring is available (Python run with ``-OO`` strips them).
    """
    parts = []
    with warnings.catch_warnings():  # typing.io / typing.re warn when their docstrings are read
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in modules:
            mod = importlib.import_module(name)
            parts.append(inspect.getdoc(mod) or "")
            for attr in sorted(vars(mod)):
                obj = vars(mod)[attr]
                if not attr.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj)) \
                        and getattr(obj, "__module__", None) == name:
                    parts.append(inspect.getdoc(obj) or "")
    text = "\n\n".join(p for p in parts if p)
    if not text:
        raise RuntimeError("no docstrings found (was Python started with -OO?)")
    return text[:max_chars] if max_chars is not None else text


def chinese_corpus(max_chars: int | None = None) -> str:
    """The Chinese corpus: 10,622 Tang poems in simplified characters, one per paragraph (``作者《标题》``, then one
    line per couplet, ``春风不度玉门关。``), paragraphs separated by a blank line; 650,852 characters, 5,155 of them
    distinct. See ``assets/README.md`` for its source (the npm package chinese-poetry 2.0.1, MIT; the poems are
    public domain) and selection.

    Args:
        max_chars: optional cap on the returned length.

    Raises:
        FileNotFoundError: :data:`ZH_CORPUS` is not there (it is in the course's repository and in a wheel of the
            package; ``tools/make_zh_corpus.py`` rebuilds it).
    """
    text = ZH_CORPUS.read_text(encoding="utf-8")
    return text[:max_chars] if max_chars is not None else text


def corpus(name_or_path: str | os.PathLike = "en", max_chars: int | None = None) -> str:
    """A text to train on: ``"en"`` the English corpus (:func:`default_corpus`), ``"zh"`` the Chinese one
    (:func:`chinese_corpus`); any other value is the path of a UTF-8 text file (write ``./zh`` for a file named
    ``zh``).

    Args:
        name_or_path: ``"en"``, ``"zh"``, or a path (``str`` or ``pathlib.Path``).
        max_chars: optional cap on the returned length.

    Returns:
        The text as one ``str`` (a file's text as it is, newlines untranslated).

    Raises:
        FileNotFoundError: no such file (or the Chinese corpus is not there).
        UnicodeDecodeError: the file is not UTF-8.
    """
    if isinstance(name_or_path, str) and name_or_path in CORPORA:
        return default_corpus(max_chars=max_chars) if name_or_path == "en" else chinese_corpus(max_chars)
    text = Path(name_or_path).read_bytes().decode("utf-8")
    return text[:max_chars] if max_chars is not None else text


def train_val_split(data: torch.Tensor, val_fraction: float = 0.1) -> tuple[torch.Tensor, torch.Tensor]:
    """Contiguous split: the first ``1 - val_fraction`` of the tokens train, the rest validate.

    Args:
        data: ``(N,)`` token ids.
        val_fraction: in ``(0, 1)``.

    Returns:
        ``(train (N - n_val,), val (n_val,))`` views, ``n_val = int(N * val_fraction)``.

    Raises:
        ValueError: if ``val_fraction`` is not in ``(0, 1)`` or a part would be empty.
    """
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction}")
    n_val = int(len(data) * val_fraction)
    if n_val == 0 or n_val == len(data):
        raise ValueError(f"{len(data)} tokens are too few for val_fraction={val_fraction}")
    return data[: len(data) - n_val], data[len(data) - n_val:]


def get_batch(data: torch.Tensor, batch_size: int, block_size: int,
              generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """A random batch of windows, nanoGPT style: ``y[b, t] == x[b, t + 1]`` in ``data``.

    Args:
        data: ``(N,)`` long token ids, ``N > block_size``.
        batch_size: ``B``; block_size: ``T``.
        generator: optional ``torch.Generator`` for reproducible starts.

    Returns:
        ``(x (B, T), y (B, T))`` long. ``y`` is already the next token: score ``logits`` against ``y``
        directly (do not pass ``y`` as HF-style ``labels``, which the model would shift again).

    Raises:
        ValueError: if ``data`` is not 1-D or has ``<= block_size`` tokens.
    """
    if data.dim() != 1 or len(data) <= block_size:
        raise ValueError(f"data must be 1-D with more than block_size={block_size} tokens, got {tuple(data.shape)}")
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)  # (B,)
    x = torch.stack([data[i: i + block_size] for i in starts.tolist()])  # (B, T)
    y = torch.stack([data[i + 1: i + 1 + block_size] for i in starts.tolist()])  # (B, T)
    return x.long(), y.long()


def lm_batches(data: torch.Tensor, batch_size: int, block_size: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Every non-overlapping window of ``data`` once, in order (for evaluation): ``(x (b, T), y (b, T))``.

    Window ``j`` is ``data[j*T : (j+1)*T]`` with targets shifted by one; windows are grouped ``batch_size``
    at a time (the last batch may be smaller); trailing tokens that do not fill a window are dropped.

    Raises:
        ValueError: if ``data`` has fewer than ``block_size + 1`` tokens.
    """
    n_windows = (len(data) - 1) // block_size
    if data.dim() != 1 or n_windows == 0:
        raise ValueError(f"data must be 1-D with at least block_size + 1 = {block_size + 1} tokens")
    x_all = data[: n_windows * block_size].view(n_windows, block_size)  # (W, T)
    y_all = data[1: n_windows * block_size + 1].view(n_windows, block_size)  # (W, T)
    for i in range(0, n_windows, batch_size):
        yield x_all[i: i + batch_size].long(), y_all[i: i + batch_size].long()
