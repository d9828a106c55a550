"""Every test session gets an empty runs folder of its own (``TINYLM_RUNS``), so that no test, and no notebook
that nbval or nbgrader executes, reads a learner's real records or writes into ``~/.cache/tinylm/runs``.

Tiers: a test module that runs kernels, notebooks, nbgrader, a browser, training subprocesses or the whole grading
path says ``pytestmark = pytest.mark.slow``; nbval's notebook items are slow too. ``make test-fast`` runs the rest
(``-m "not slow"``). Under ``make test`` (pytest-xdist, ``--dist loadgroup``) tests spread one by one over the
workers, except those of one ``xdist_group``, which run on one worker: a module whose module-scoped fixture is
expensive names its group (the graded class of test_tamper, the sandbox's probe notebook, the browser's
JupyterLab), the nbgrader round trip has one per stage, and a notebook's cells (nbval) one per notebook."""
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


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.suffix == ".ipynb":  # nbval: a notebook's cells run in order, in one kernel
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
