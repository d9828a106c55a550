"""The instructor's ``nbgrader`` commands, as the round-trip tests run them: ``python -m nbgrader`` (what the
``nbgrader`` script runs) in a process forked from one that has imported nbgrader, the grader's preprocessors and
PyTorch already (:mod:`tinylm_checks._forked`): about 3 CPU s less per command, and a test round trip runs a few
hundred. test_tamper runs the ``nbgrader`` script itself: it measures that process and attacks it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tinylm_checks import _forked
from tinylm_grading.autograde import PRELOAD  # what tinylm-autograde's workers import before they fork

BIN = Path(sys.executable).parent


def nbgrader(*args: str, cwd: Path, timeout: float = 1500, **env: str) -> subprocess.CompletedProcess:
    """``nbgrader *args --log-level=WARN`` in ``cwd`` with ``env`` added to this process's (the venv's bin/ first on
    PATH: nbgrader runs ``alembic`` by name); fails the test with its output unless it exits 0."""
    environ = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **env}
    code, output = _forked.run(["-m", "nbgrader", *args, "--log-level=WARN"], cwd, environ, timeout, preload=PRELOAD)
    assert code == 0, f"nbgrader {' '.join(args)} exited {code}:\n{output[-3000:]}"
    return subprocess.CompletedProcess(["nbgrader", *args], code, output, output)
