"""tinylm_grading.classreport.summary: per exercise, who passed and the named mistakes of the rest (the records come
from autograded notebooks: test_class's simulation and test_tamper read real ones)."""
import collections
import os
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from tinylm_grading.classreport import main, summary
from tinylm_grading.verdicts import record
from tinylm_solutions import i18n


class Failure:
    def __init__(self, message_id, mistakes):
        self.message_id, self.mistakes = message_id, mistakes


def test_a_class_s_mistakes_are_counted_per_exercise():
    passed = record("check_attention_scores", True)
    no_scale = record("check_attention_scores", False, "CheckFailure: ...", Failure("attention.values", ["no_scale"]))
    unnamed = record("check_attention_scores", False, "CheckFailure: ...", Failure("attention.values", []))
    timeout = record("check_causal_mask", False, "CellTimeoutError: your code did not finish")
    records = {"a": {"scores_check": passed, "mask_check": passed},
               "b": {"scores_check": no_scale, "mask_check": timeout},
               "c": {"scores_check": no_scale},
               "d": {"scores_check": unnamed, "mask_check": passed}}
    assert summary(records) == {
        "scores_check": {"learners": 4, "passed": 1, "mistakes": collections.Counter(no_scale=2, unnamed=1)},
        "mask_check": {"learners": 3, "passed": 2, "mistakes": collections.Counter(CellTimeoutError=1)},
    }
    assert no_scale == {"passed": False, "check": "check_attention_scores", "error": "CheckFailure",
                        "message_id": "attention.values", "mistakes": ["no_scale"]}
    assert passed["error"] is None and timeout["message_id"] is None and timeout["mistakes"] == []


@pytest.mark.slow  # nbgrader's gradebook (alembic)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_input_gives_one_line_in_the_user_s_language(tmp_path, capsys, monkeypatch, lang):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # nbgrader's alembic
    with i18n.using(lang):
        assert main(["01_attention", "--course", str(tmp_path)]) == 2
        no_gradebook = capsys.readouterr().err
        with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
            gb.add_assignment("01_attention")
        assert main(["09_training", "--course", str(tmp_path)]) == 2
        no_assignment = capsys.readouterr().err
        assert main(["01_attention", "--course", str(tmp_path)]) == 2
        none_graded = capsys.readouterr().err
        assert main(["01_attention", "--course", str(tmp_path), "--csv", str(tmp_path / "no" / "a.csv")]) == 2
        no_folder = capsys.readouterr().err
    for line in (no_gradebook, no_assignment, none_graded, no_folder):
        assert line.startswith({"en": "tinylm-class-report: error: ", "zh": "tinylm-class-report：错误："}[lang])
        assert line.count("\n") == 1
    assert "gradebook.db" in no_gradebook and "--course" in no_gradebook
    assert "09_training" in no_assignment and "01_attention" in no_assignment
    assert "nbgrader autograde 01_attention" in none_graded
    words = {"en": ("has no gradebook.db", "has no assignment", "autograded yet"),
             "zh": ("没有 gradebook.db", "没有作业", "还没有自动评分过的提交")}[lang]
    assert all(w in line for w, line in zip(words, (no_gradebook, no_assignment, none_graded)))
    assert str(tmp_path / "no" / "a.csv") in no_folder and ("does not exist" if lang == "en" else "不存在") in no_folder
