"""Grading's time limits name themselves (issue 38, item 8): the capstone's notebook has three notebook_timeouts (its
checks run the learner's commands, which a busy machine slows), and a check whose request to the kernel was cut short
by what was left of the notebook's time says so, instead of naming the cell's timeout it never had."""
import nbformat
from nbgrader.preprocessors import Execute

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
