"""Stage 13's answer: the capstone repository, ``tiny-transformer/``, as a learner would write it.

``repo()`` maps each file's path (relative to the repository's root) to its text (a learner's notebook passes
``Repository("tiny-transformer")``, which answers the same way): ``model.py``, ``train.py``, ``generate.py``,
``evaluate.py``, ``tests/test_attention.py``, ``tests/test_causal_mask.py``, ``tests/test_overfit_batch.py``,
``configs/tiny.yaml``, ``report.md``, ``README.md``, ``pyproject.toml``, ``.gitignore`` and the text it trains on,
``data/train.txt`` and ``data/valid.txt`` (the course's corpus, split nine tenths to one, as notebook 13 writes it:
:func:`corpus_files`). The other files sit next to this one; none of them imports the course.
"""
from pathlib import Path

_HERE = Path(__file__).resolve().parent
FILES = ("model.py", "train.py", "generate.py", "evaluate.py", "tests/test_attention.py", "tests/test_causal_mask.py",
         "tests/test_overfit_batch.py", "configs/tiny.yaml", "report.md", "README.md", "pyproject.toml", ".gitignore")
VALID_FRACTION = 0.1
"""The share of the corpus, at its end, that ``data/valid.txt`` holds (training never sees it)."""


def corpus_files(text: str) -> dict[str, str]:
    """``{"data/train.txt": ..., "data/valid.txt": ...}``: ``text`` split at its last tenth."""
    split = round(len(text) * (1 - VALID_FRACTION))
    return {"data/train.txt": text[:split], "data/valid.txt": text[split:]}


def repo() -> dict[str, str]:
    """{path: text} of the reference repository's files."""
    from tinylm_solutions.data import default_corpus

    return {**{name: (_HERE / name).read_text(encoding="utf-8") for name in FILES}, **corpus_files(default_corpus())}
