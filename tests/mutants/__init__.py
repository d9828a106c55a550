"""Wrong implementations of the course exercises, one module per stage's checks.

Each mutant is a small, realistic learner mistake, written the way a learner would write it; its
docstring names the mistake in one line. Each module ends with what the tests feed the checks:

- ``ROWS``: ``(check, mutant, expected mistake id or None, key phrase of the problem)``;
  ``tests/test_checks_mutants.py`` asserts the diagnosis of every row;
- ``LATE_FAILURE``: check -> a mutant that fails late, after the check did most of its work;
- ``STUB``: check -> the untouched learner stub;
- ``MULTI`` (optional): ``(check, mutant, [mistake ids])`` for a learner's first attempt with several independent
  slips, which one report names together (``Ctx.slips``).

``REFERENCE`` (check -> the object that must pass it) comes from the course's registry of exercises.
"""
import importlib

import tinylm_checks
from tinylm_grading import registry

MODULES = ("softmax", "attention", "multihead", "masks", "position", "ffn", "norm", "block", "model", "training", "checklist", "generate",
           "debugging", "report", "capstone")


def _collect(name: str):
    modules = [importlib.import_module(f"mutants.{m}") for m in MODULES]
    if name in ("ROWS", "MULTI"):
        return [row for m in modules for row in getattr(m, name, [])]
    out = {}
    for m in modules:
        out.update(getattr(m, name))
    return out


ROWS = _collect("ROWS")
MULTI = _collect("MULTI")
REFERENCE = {getattr(tinylm_checks, e.check): e.reference() for e in registry.checked()}
LATE_FAILURE = _collect("LATE_FAILURE")
STUB = _collect("STUB")
