"""Stage 00: the learner's environment (Python, PyTorch, threads), checked where the learner works.

Apart from the checks that compare with the reference: it judges the learner's own kernel, so a learner's environment
without answers runs it there too (it is no request to the check service).

PyTorch: the course's runs were made, and its stated numbers measured, on :data:`PINNED_TORCH` (what ``make venv``
installs); its reference and checks are tested on :data:`OLDEST_TORCH` and :data:`NEWEST_TORCH` as well
(tests/test_torch_range.py, each in a venv of its own). 2.5 is the floor because from 2.5 on
``F.scaled_dot_product_attention`` gives a query with no allowed key zero weights, not NaN: notebook 03 teaches that
rule and shows it, and the reference's fused attention path (``need_weights = False``) relies on it (on 2.4.0 that path
and tests/test_ref_masks.py's comparison with PyTorch give NaN, measured).
"""
from __future__ import annotations

import os
import platform
import re
import sys

import torch

from tinylm_solutions.i18n import pad

from ._text import fill, say
from .failure import CheckFailure

__all__ = ["check_environment"]

PINNED_TORCH = "2.13.0"
"""The PyTorch the course's runs were made on (pyproject.toml's lock pins it)."""
OLDEST_TORCH = (2, 5)
"""The oldest PyTorch (major, minor) the course supports: pyproject.toml says ``torch>=2.5``."""
NEWEST_TORCH = (2, 15)
"""The newest PyTorch (major, minor) the reference and the checks were tested on."""


def torch_release(version: str) -> tuple[int, int]:
    """The (major, minor) of a PyTorch version string: ``"2.13.0+cpu"`` -> ``(2, 13)``, ``"2.16.0.dev20260101"`` ->
    ``(2, 16)``.

    Raises:
        ValueError: ``version`` does not start with ``major.minor``.
    """
    found = re.match(r"(\d+)\.(\d+)", version)
    if found is None:
        raise ValueError(f"not a PyTorch version: {version!r}")
    return int(found[1]), int(found[2])


def _shown(release: tuple[int, int]) -> str:
    return ".".join(map(str, release))


def environment_report() -> dict[str, str]:
    """What the course runs on: Python, PyTorch, CPU threads."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__.split("+")[0],
        "threads": str(torch.get_num_threads()),
        "cores": str(os.cpu_count()),
        "executable": sys.executable,
    }


def check_environment() -> None:
    """Print the environment; fail on a PyTorch older than the course supports, warn on any other than the pinned one.

    The pinned PyTorch passes silently. A supported one (from :data:`OLDEST_TORCH` on) passes with a warning naming the
    numbers the notebooks state from the course's runs, which may then differ a little; one newer than
    :data:`NEWEST_TORCH` gets a second warning, that it was not tested.

    Raises:
        CheckFailure: PyTorch is older than :data:`OLDEST_TORCH` (``message_id`` ``"environment.old_torch"``), one line
            that says the supported range and how to upgrade.
    """
    report = environment_report()
    for k, v in report.items():
        print(f"{pad(say('environment.' + k), 20, right=True)}: {v}")  # by columns: a Chinese label is wider
    installed = report["torch"]
    release = torch_release(installed)
    values = {"installed": installed, "pinned": PINNED_TORCH, "oldest": _shown(OLDEST_TORCH),
              "newest": _shown(NEWEST_TORCH)}
    if release < OLDEST_TORCH:
        raise CheckFailure("check_environment", fill("environment.old_torch.problem", values),
                           message_id="environment.old_torch")
    print(say("core.passed", check="check_environment",
              summary=say("environment.passed", installed=installed, threads=report["threads"])))
    if release > NEWEST_TORCH:
        print(fill("environment.untested_torch", values))
    if installed != PINNED_TORCH:
        print(fill("environment.other_torch", values))
