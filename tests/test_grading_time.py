"""Grading's time limits name themselves (issue 38, item 8): the capstone's notebook has three notebook_timeouts (its
checks run the learner's commands, which a busy machine slows), and a check whose request to the kernel was cut short
by what was left of the notebook's time says so, instead of naming the cell's timeout it never had. So does a capstone
check whose commands that time ended (red team, 07)."""
import ast
import time

import nbformat
from nbgrader.preprocessors import Execute

from tinylm_checks import capstone
from tinylm_checks.agent import Agent
from tinylm_grading import registry
from tinylm_grading.preprocessors import GradingExecute
from tinylm_grading.verdicts import Verdicts


def deadline(monkeypatch, assignment) -> float:
    """The seconds GradingExecute gives a notebook of ``assignment`` (nbgrader's resources name it)."""
    monkeypatch.setattr(Execute, "preprocess", lambda self, nb, resources=None, km=None: (nb, resources))
    grading = GradingExecute(notebook_timeout=100)
    grading.preprocess(nbformat.v4.new_notebook(), {"nbgrader": {"assignment": assignment}})
    return grading._deadline.seconds


def test_the_capstone_notebook_may_take_three_notebook_timeouts(monkeypatch):
    assert deadline(monkeypatch, "13_capstone") == 300
    assert deadline(monkeypatch, "01_attention") == deadline(monkeypatch, "not_a_stage") == 100
    assert [s.name for s in registry.STAGES if s.grading_time != 1] == ["13_capstone"]


class SilentKernel:
    """A kernel that never answers in time."""

    def evaluate(self, expression, timeout, code=""):
        raise TimeoutError(f"no answer within {timeout} s")


def verdict(left: float):
    source = "import runpy\n" + registry.BY_ID["attention_scores"].hidden_check
    found = Verdicts().judge(source, SilentKernel(), lambda: min(120.0, left), 120)
    (output,) = found.outputs
    return output.ename, output.evalue, found.replace_kernel


def test_a_request_cut_short_by_the_notebook_s_time_names_that_limit():
    assert verdict(left=2.4) == ("NotebookTimeout", "grading of this notebook ran out of time while "
                                 "check_attention_scores ran your code (the 2 s that were left)", True)


def test_a_request_that_had_the_cell_s_time_names_the_cell_timeout():
    assert verdict(left=500) == ("CellTimeoutError", "your code did not finish within 120 s while "
                                 "check_attention_scores ran it", True)


def test_a_chinese_notebook_reads_its_timeouts_in_chinese():
    from tinylm_solutions import i18n
    with i18n.using("zh"):
        assert verdict(left=2.4)[:2] == ("NotebookTimeout", "check_attention_scores 运行你的代码时，这个笔记本的评分时间用完了"
                                         "（当时只剩 2 秒）")
        assert verdict(left=500)[:2] == ("CellTimeoutError", "check_attention_scores 运行你的代码时，你的代码在 120 秒内没有结束")


class LocalKernel:
    """A kernel that answers at once: the agent's requests are handled here, on ``namespace``."""

    def __init__(self, namespace: dict):
        self.agent = Agent(namespace)

    def evaluate(self, expression, timeout, code=""):
        if expression == "None":  # the agent's set-up
            return "None"
        return repr(self.agent.handle(ast.literal_eval(expression.removeprefix("__tinylm_agent__.handle")[1:-1])))


def test_a_capstone_check_whose_commands_the_notebook_s_time_ended_names_that_limit(monkeypatch):
    """tests/test_attention.py sleeps, in the check's folder only: each of the check's commands had 300 s of its own,
    and the check ran them all (a notebook that had 45 s took 424 s, and the check passed). Now they end with the
    notebook's time (3 s left here), and the verdict names it; the kernel, which answered, is kept."""
    monkeypatch.setattr(capstone, "WORKSPACE", capstone.Workspace)  # forked here; sandboxed in test_capstone_grading
    monkeypatch.setattr(capstone, "TIMEOUT", 20)  # without the notebook's limit: 3 rounds of 2 runs, 60 s
    from tinylm_solutions.capstone import repo
    files = repo()
    files["tests/test_attention.py"] = ("import os, time\nif os.path.exists('_check_run.py'):\n    time.sleep(1000)\n"
                                        + files["tests/test_attention.py"])
    with capstone.Workspace({"warm.py": ""}) as ws:  # the commands' fork server, started before the clock does
        ws.run(["warm.py"])
    source = "import runpy\n" + registry.BY_ID["attention_tests"].hidden_check
    start = time.monotonic()
    found = Verdicts().judge(source, LocalKernel({"repo": lambda: files}), lambda: 120.0, 120, left=lambda: 3.0)
    took = time.monotonic() - start
    (output,) = found.outputs
    assert (output.ename, output.evalue, found.replace_kernel) == (
        "NotebookTimeout", "grading of this notebook ran out of time while check_attention_tests ran your code (the 3 s "
        "that were left)", False)
    assert found.record["verdict"]["passed"] is False
    assert 3 <= took < 3 + 2, took
