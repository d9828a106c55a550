"""Every test session gets an empty runs folder of its own (``TINYLM_RUNS``), so that no test, and no notebook
that nbval or nbgrader executes, reads a learner's real records or writes into ``~/.cache/tinylm/runs``.

Tiers: a test module that runs kernels, notebooks, nbgrader, a browser, training subprocesses or the whole grading
path says ``pytestmark = pytest.mark.slow``; nbval's notebook items are slow too. ``make test-fast`` runs the rest
(``-m "not slow"``, spread test by test). ``make test`` spreads them with pytest-xdist's ``--dist loadscope``: the
tests of one module (or of one class) run on one worker, so a module-scoped fixture is made once, and a module that
wants its tests on several workers puts them in classes (the nbgrader round trip: one class per stage). Units are
handed out in collection order (``--no-loadscope-reorder``; by default xdist starts with the units of most tests),
which :data:`LONG_FIRST` makes longest first. (pytest-xdist
3.8's ``--dist loadgroup`` groups nothing under pytest 9: it renames ``item._nodeid``, which pytest 9 no longer reads.)
"""
import os
import shutil
import tempfile

import pytest

# One thread per process: the suite runs several workers, each starting kernels, on few cores. With more threads
# than cores, PyTorch's OpenMP threads spin at every barrier and every process slows down many times over. Set before
# any test imports torch; kernels that nbval and nbgrader start inherit it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

_FOLDER = tempfile.mkdtemp(prefix="tinylm-runs-")
# The capstone's checks run the reference repository's commands (pytest, train.py, generate.py) in many tests and in the
# graders the round trips start; they are deterministic, so one run per (files, commands) serves the whole session:
# the first process to run them keeps the results in this folder (tinylm_checks.capstone.SHARED). The controller
# makes it; xdist's workers, and the processes they start, inherit it.
_MADE_CAPSTONE_CACHE = "TINYLM_CAPSTONE_CACHE" not in os.environ
if _MADE_CAPSTONE_CACHE:
    os.environ["TINYLM_CAPSTONE_CACHE"] = tempfile.mkdtemp(prefix="tinylm-capstone-cache-")


PERTURB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests", "perturb")
"""``TINYLM_PERTURB=threads4,mkldnn_off``: the claims tests under stand-ins for another machine (``make
claims-perturbed``; tests/perturb/sitecustomize.py says what each does)."""


def _perturb():
    """Check ``TINYLM_PERTURB``'s names (a UsageError of one line for an unknown one), apply them here, and put
    tests/perturb on ``PYTHONPATH`` so that every process started from here (xdist's workers, the notebooks' kernels)
    applies them before its code runs. The perturbations applied, or None."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("tinylm_perturb", os.path.join(PERTURB, "sitecustomize.py"))
    perturb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(perturb)
    try:
        names = perturb.parse(os.environ.get("TINYLM_PERTURB", ""))
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    if names:
        paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if PERTURB not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([PERTURB, *filter(None, paths)])
        perturb.apply(names)
        return perturb.state()
    return None


def pytest_report_header(config):
    return f"TINYLM_PERTURB={os.environ['TINYLM_PERTURB']}: torch {config._tinylm_perturbed}" \
        if getattr(config, "_tinylm_perturbed", None) else None


def pytest_configure(config):
    """Set before any test or notebook kernel starts: kernels that nbval and nbgrader launch inherit it (they
    are not pytest tests, so a fixture alone would not reach them)."""
    config._tinylm_perturbed = _perturb()
    os.environ["TINYLM_RUNS"] = _FOLDER
    # The notebooks' training cells (09, 10, 11) take a few steps under nbval and nbgrader: the tests check that every
    # cell runs, not what a run shows. What the notebooks say a run shows is tests/test_claims.py's business: it runs
    # those experiments at the notebooks' full length, once.
    os.environ.setdefault("TINYLM_QUICK", "1")


def pytest_unconfigure(config):
    shutil.rmtree(_FOLDER, ignore_errors=True)
    if _MADE_CAPSTONE_CACHE and not hasattr(config, "workerinput"):  # the controller made it; the workers have ended
        shutil.rmtree(os.environ["TINYLM_CAPSTONE_CACHE"], ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def empty_runs_folder():
    """The session's runs folder: empty at the start (CI's case: stage 12 recomputes what it needs)."""
    assert os.environ["TINYLM_RUNS"] == _FOLDER
    yield _FOLDER


# The longest units of the slow tier, first: a worker takes the next unit as it frees up, so a long unit that starts
# late runs on alone at the end. The order is that of their lengths under the whole suite's load on 2 cores (one
# run: the tamper autograde about 9 minutes, the browser tests 4, the others 1 to 3.5 each).
LONG_FIRST = ("tests/test_tamper.py",  # one autograde of all the attacks
              "tests/test_portable.py::TestGB18030",  # the fast tier again, under GB18030 (about 4 minutes here)
              "tests/test_claims.py",  # stage 11's ablations at full length, three seeds (about 4 minutes here)
              "tests/test_portable.py::TestWithoutUnix",  # the checks' tests without Unix-only APIs (about 3 minutes)
              "tests/test_claims_lab.py",  # notebook 11's claims lab at full length, three seeds (about 2 minutes)
              "tests/test_browser.py",  # JupyterLab and Chromium
              "tests/test_torch_range.py::TestOldest",  # a venv of PyTorch 2.5 (built once: 1-4 minutes), its tests, nbval
              "tests/test_torch_range.py::TestNewest",  # the same for 2.15, without the notebooks
              "tests/test_class.py::TestClassSimulation",
              "tests/test_remote.py",
              "tests/test_class.py::TestExchange",
              "tests/test_nbgrader.py::test_",  # the module's own tests (the hidden check's forms)
              "tests/test_nbgrader.py::TestStage13",  # the capstone's round trip runs processes in sandboxes
              "tests/test_nbgrader.py::TestStage",
              "tests/test_grading.py",
              "tests/test_ref_capstone.py",
              "notebooks/09_training", "notebooks/11_ablations", "notebooks/13_capstone")


def _rank(item) -> int:
    return next((i for i, prefix in enumerate(LONG_FIRST) if item.nodeid.startswith(prefix)), len(LONG_FIRST))


def _runs_processes(item) -> bool:
    """A test of a capstone check (or of a capstone mutant): the check runs the repository as processes (pytest,
    train.py, generate.py), seconds each."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return any(getattr(v, "__module__", "") in ("tinylm_checks.capstone", "mutants.capstone") for v in params.values())


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.suffix == ".ipynb" or _runs_processes(item):  # nbval: a notebook's cells, run in one kernel
            item.add_marker(pytest.mark.slow)
    items.sort(key=_rank)  # stable: a unit's tests keep their order


@pytest.fixture(autouse=True)
def _fresh_failures():
    """Each test starts as a kernel does: no mistake shown yet, so a failure keeps its fix back
    (tinylm_checks.failure: the same mistake shown again comes with its fix)."""
    from tinylm_checks import failure
    failure._SHOWN.clear()
    failure._LAST.clear()
    yield
