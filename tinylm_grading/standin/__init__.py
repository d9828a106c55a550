"""What ``import tinylm_checks`` gives a notebook while it is autograded (the sandbox mounts this package,
with the course's ``lab`` subpackage, its ``probes`` module and its message table (``_text``, ``messages``), in place of ``tinylm_checks``).

The course's checks hold the reference's equivalents (the variants a check compares a learner's answer
with, the right one among them), so they stay outside the learner's kernel: every verdict is computed by
the grader, in its own process (:mod:`tinylm_grading.remote`). A notebook keeps working: its plotting
helpers are the real ones, and a ``check_*`` call (the visible line of a check cell, or an ungraded bonus
check) only prints where the verdict comes from.
"""
from .lab import *  # noqa: F401,F403 - the learner's tools (figures, widgets, records of runs), unchanged
from .lab import __all__ as _LAB

ATOL = 1e-6
MISTAKES: dict = {}
MISTAKE_HINTS: dict = {}
NOTE = "{name}: while this notebook is autograded, the grader runs this check outside your notebook's kernel"


class CheckFailure(AssertionError):
    """The checks' failure (raised by nothing here)."""


def _stand_in(name: str):
    def check(*args, **kwargs):
        print(NOTE.format(name=name))
    check.__name__ = check.__qualname__ = name
    return check


def __getattr__(name: str):  # `from tinylm_checks import check_x` for every check of the course
    if name.startswith("check_"):
        return _stand_in(name)
    raise AttributeError(f"module 'tinylm_checks' has no attribute {name!r}")


__all__ = ["ATOL", "MISTAKES", "MISTAKE_HINTS", "CheckFailure", *_LAB]
