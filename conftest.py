"""Every test session gets an empty runs folder of its own (``TINYLM_RUNS``), so that no test, and no notebook
that nbval or nbgrader executes, reads a learner's real records or writes into ``~/.cache/tinylm/runs``."""
import os
import shutil
import tempfile

import pytest

_FOLDER = tempfile.mkdtemp(prefix="tinylm-runs-")


def pytest_configure(config):
    """Set before any test or notebook kernel starts: kernels that nbval and nbgrader launch inherit it (they
    are not pytest tests, so a fixture alone would not reach them)."""
    os.environ["TINYLM_RUNS"] = _FOLDER


def pytest_unconfigure(config):
    shutil.rmtree(_FOLDER, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def empty_runs_folder():
    """The session's runs folder: empty at the start (CI's case: stage 12 recomputes what it needs)."""
    assert os.environ["TINYLM_RUNS"] == _FOLDER
    yield _FOLDER
