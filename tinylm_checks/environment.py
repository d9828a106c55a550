"""Stage 00: the learner's environment (Python, PyTorch, threads), checked where the learner works.

Apart from the checks that compare with the reference: it judges the learner's own kernel, so a learner's environment
without answers runs it there too (it is no request to the check service).
"""
from __future__ import annotations

import os
import platform
import sys

import torch

from tinylm_solutions.i18n import pad

from ._text import fill, say
from .failure import CheckFailure

__all__ = ["check_environment"]

EXPECTED_TORCH = "2.13.0"


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
    """Print the environment and fail with a clear message if PyTorch is not the course's version."""
    report = environment_report()
    for k, v in report.items():
        print(f"{pad(say('environment.' + k), 20, right=True)}: {v}")  # by columns: a Chinese label is wider
    if report["torch"] != EXPECTED_TORCH:
        values = {"installed": report["torch"], "pinned": EXPECTED_TORCH}
        raise CheckFailure("check_environment", fill("environment.wrong_torch.problem", values),
                           hint=fill("environment.wrong_torch.hint", values), message_id="environment.wrong_torch")
    print(say("core.passed", check="check_environment",
              summary=say("environment.passed", pinned=EXPECTED_TORCH, threads=report["threads"])))
