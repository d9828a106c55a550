"""Stage 13's answer: the capstone repository, ``tiny-transformer/``, as a learner would write it.

``repo()`` maps each file's path (relative to the repository's root) to its text (a learner's notebook passes
``Repository("tiny-transformer")``, which answers the same way): ``model.py``, ``train.py``,
``generate.py``, ``tests/test_attention.py``, ``tests/test_causal_mask.py``, ``tests/test_overfit_batch.py``,
``configs/tiny.yaml`` and ``report.md``. The files sit next to this one; ``train.py`` reads the course's corpus.
"""
from pathlib import Path

_HERE = Path(__file__).resolve().parent
FILES = ("model.py", "train.py", "generate.py", "tests/test_attention.py", "tests/test_causal_mask.py",
         "tests/test_overfit_batch.py", "configs/tiny.yaml", "report.md")


def repo() -> dict[str, str]:
    """{path: text} of the reference repository's files."""
    return {name: (_HERE / name).read_text(encoding="utf-8") for name in FILES}
