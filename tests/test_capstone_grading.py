"""The capstone's test checks, attacked (issue 38): test theatre earns nothing, a test that prints model.py gets
nothing of it back, and a command stopped by a time limit says which limit, with its value. Each runs on this
machine's workspace (a forked process, as in a learner's kernel) and, in the slow tier, in the grader's sandboxed one
(tinylm_grading.workspace), at the two seeds the grader runs a check with."""
import json
import re
import time

import nbformat
import pytest

from mutants.capstone import mask_tests_print_the_model, theatre
from tinylm_checks import CheckFailure, capstone
from tinylm_grading import registry
from tinylm_grading.workspace import SandboxWorkspace
from tinylm_solutions.capstone import repo

TEST_CHECKS = {"tests/test_attention.py": capstone.check_attention_tests,
               "tests/test_causal_mask.py": capstone.check_causal_mask_tests,
               "tests/test_overfit_batch.py": capstone.check_overfit_tests}


@pytest.fixture(params=[capstone.Workspace, pytest.param(SandboxWorkspace, marks=pytest.mark.slow)],
                ids=["forked", "sandboxed"])
def workspace(request, monkeypatch):
    monkeypatch.setattr(capstone, "WORKSPACE", request.param)
    return request.param


def failure(check, files, seed: int = 0) -> CheckFailure:
    with pytest.raises(CheckFailure) as caught:
        check(lambda: files, quiet=True, seed=seed)
    return caught.value


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("test", list(TEST_CHECKS))
def test_tests_that_compare_a_hash_of_model_py_score_nothing(test, seed, workspace):
    """The review's "test theatre": each test file asserts sha256(model.py) == the reference's. It passed every test
    check (6 points); the correct files it now runs on are written differently, at either seed."""
    found = failure(TEST_CHECKS[test], theatre(), seed)
    assert found.problem == f"{test} fails on a correct model.py: a test failed", found


@pytest.mark.parametrize("seed", [0, 1])
def test_a_test_that_prints_model_py_gets_nothing_of_it_back(seed, workspace):
    """A test that prints model.py and fails on purpose: the failure shows how pytest ended, not what it printed."""
    files = mask_tests_print_the_model()
    tests = {k: v for k, v in files.items() if k.startswith("tests/")}
    found = failure(capstone.check_causal_mask_tests, files, seed)
    text = str(found)
    assert found.problem == "tests/test_causal_mask.py fails on a correct model.py: a test failed"
    correct, broken = capstone.models(seed, tests, "tests/test_causal_mask.py")
    for model in (repo()["model.py"], *correct, *broken.values()):
        for line in model.splitlines():
            if len(line.strip()) > 16:  # every line of code (shorter ones are words any message may hold)
                assert line.strip() not in text, (line, text)


def test_a_test_that_sleeps_past_the_time_limit_says_so(workspace, monkeypatch):
    monkeypatch.setattr(capstone, "TIMEOUT", 3)
    files = {**repo(), "tests/test_attention.py": "import time\n\n\ndef test_waits():\n    time.sleep(60)\n"}
    found = failure(capstone.check_attention_tests, files)
    assert found.problem == ("python -m pytest tests/test_attention.py on a correct model.py timed out after 3 s, "
                             "the time each command of the check may take"), found
    assert found.message_id == "capstone.timed_out"


def test_a_test_that_computes_past_the_cpu_limit_says_so(workspace, monkeypatch):
    monkeypatch.setattr(capstone, "CPU_SECONDS", 2)
    files = {**repo(), "tests/test_overfit_batch.py": "def test_spins():\n    while True:\n        pass\n"}
    found = failure(capstone.check_overfit_tests, files)
    assert found.problem == ("python -m pytest tests/test_overfit_batch.py on a correct model.py was stopped at 2 s "
                             "of CPU time, the most each command of the check may use"), found
    assert found.message_id == "capstone.out_of_cpu"


@pytest.mark.slow  # the overfit check's seven runs, the broken models' each to its 4 s of CPU: about 18 s
def test_a_test_that_never_ends_on_a_broken_model_says_so(monkeypatch):
    """An overfit test that trains until the loss is small ends on a correct model.py; on one that cannot learn it
    would run for ever: the check names the run and the limit, not "passes on a broken model"."""
    monkeypatch.setattr(capstone, "WORKSPACE", capstone.Workspace)  # not one another test left behind
    monkeypatch.setattr(capstone, "CPU_SECONDS", 4)
    files = repo()
    files["tests/test_overfit_batch.py"] = files["tests/test_overfit_batch.py"].replace(
        "    for _ in range(100):\n", "    loss = None\n    while loss is None or loss.item() > 0.01:\n")
    found = failure(capstone.check_overfit_tests, files)
    assert found.problem.startswith("python -m pytest tests/test_overfit_batch.py on a model.py whose ")
    assert found.problem.endswith(" was stopped at 4 s of CPU time, the most each command of the check may use")


SLEEPS_IN_THE_CHECK = ("import os, time\nif os.path.exists('_check_run.py'):  # the check's folder only\n"
                       "    time.sleep(1000)\n")


def graded_cell(exercise: str):
    """A test cell of notebook 13, as the build writes it: its exercise's hidden check, graded."""
    e = registry.BY_ID[exercise]
    return nbformat.v4.new_code_cell("import runpy\n" + e.hidden_check, metadata={"nbgrader": {
        "grade": True, "grade_id": e.test_id, "locked": True, "points": e.points, "schema_version": 3,
        "solution": False, "task": False}})


@pytest.mark.slow  # a kernel, and the grader's sandboxes
def test_a_capstone_check_ends_with_the_notebook_s_time(tmp_path, monkeypatch):
    """The red team's 07: tests/test_attention.py sleeps at import, in the check's folder only (the notebook's own
    cells stay quick). Each command had 300 s of its own whatever was left of the notebook's time, and a test check
    runs all its commands before it reads one: a notebook that had 45 s took 424 s, and the check passed. Now the
    commands end with the notebook's time: the check scores 0 naming that limit, and the cells after it do not run."""
    from tinylm_grading.kernel import SlicedPollKernelManager
    from tinylm_grading.preprocessors import GradingExecute  # (its verdicts make the sandboxed workspace the checks')
    monkeypatch.setattr(capstone, "WORKSPACE", SandboxWorkspace)
    monkeypatch.setattr(capstone, "TIMEOUT", 30)  # without the notebook's limit: 3 rounds of 2 runs, 90 s
    files = repo()
    files["tests/test_attention.py"] = SLEEPS_IN_THE_CHECK + files["tests/test_attention.py"]
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(f"import json\nrepo = lambda: json.loads({json.dumps(files)!r})"),
        graded_cell("attention_tests"), graded_cell("capstone_report")])
    grading = GradingExecute(notebook_timeout=5, timeout=120, kernel_name="python3",
                             kernel_manager_class=SlicedPollKernelManager)
    start = time.monotonic()
    grading.preprocess(nb, {"nbgrader": {"assignment": "13_capstone"}, "metadata": {"path": str(tmp_path)}})
    took = time.monotonic() - start
    assert grading._deadline.seconds == 15
    assert took < 15 + 5, took
    _, tests, report = nb.cells
    (out,) = tests.outputs
    had = re.fullmatch(r"grading of this notebook ran out of time while check_attention_tests ran your code \(the "
                       r"(\d+) s that were left\)", out.evalue)
    assert out.ename == "NotebookTimeout" and had and 0 < int(had.group(1)) <= 15, out
    assert tests.metadata["tinylm"]["verdict"]["passed"] is False
    assert [(o.ename, o.evalue) for o in report.outputs] == [
        ("NotebookTimeout", "grading of this notebook stopped after 15 s in all; this cell was not run")]


def test_the_notebook_states_the_limits_the_checks_use():
    """Notebook 13 tells the learner each run's limits, in both languages: the checks' own numbers."""
    from pathlib import Path
    source = (Path(__file__).resolve().parent.parent / "course" / "13_capstone.py").read_text(encoding="utf-8")
    assert (f"Each run may use {capstone.CPU_SECONDS} s of CPU time and take {capstone.TIMEOUT} s in all"
            in source.replace("\n# ", " "))
    assert f"每次运行最多用 {capstone.CPU_SECONDS} 秒 CPU 时间，总共最多 {capstone.TIMEOUT} 秒" in source
    assert capstone.CORRECT_MODELS == 2 and "two **correct**" in source and "两个**正确的**" in source
