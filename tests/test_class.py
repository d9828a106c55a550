"""A class, end to end, with the instructor's and the learners' real nbgrader commands (stage 01).

- The exchange flow: release_assignment -> fetch_assignment (three learners) -> submit -> collect ->
  autograde -> generate_feedback -> export, in a temporary exchange.
- A class simulation: 30 synthetic learners, each with a random set of known mistakes (wrong
  implementations from tests/mutants that the checks name), whose predicted scores must equal the
  gradebook's exactly.
"""
from __future__ import annotations

import collections
import csv
import inspect
import random
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from tinylm_grading import classreport, registry
from tinylm_solutions import i18n

from mutants import ROWS
from nbgrader_cli import nbgrader

ROOT = Path(__file__).resolve().parent.parent
A = "01_attention"
pytestmark = [pytest.mark.slow, pytest.mark.notebooks]


def points(nb) -> dict[str, float]:
    return {c.metadata.nbgrader["grade_id"]: c.metadata.nbgrader["points"] for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"}


def scores(course: Path, student: str) -> dict[str, float]:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {g.name: g.score for g in gb.find_submission_notebook(A, A, student).grades}


def new_course(tmp: Path, exchange: Path | None = None) -> Path:
    course = tmp / "course"
    course.mkdir()
    config = (ROOT / "nbgrader_config.py").read_text()
    if exchange is not None:
        config += f"\nc.Exchange.root = {str(exchange)!r}\n"
    (course / "nbgrader_config.py").write_text(config)
    shutil.copytree(ROOT / "notebooks" / A, course / "notebooks" / A)
    nbgrader("generate_assignment", A, "--force", cwd=course)
    return course


def solve(nb, replacements: dict[str, str]):
    """The learner's work: the solution notebook's cells for every exercise, some replaced."""
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in replacements:
            cell.source = replacements[gid]
    return nb


# ---------------------------------------------------------------- the exchange flow

class TestExchange:  # a class each: the two tests run on two workers under --dist loadscope
    def test_release_fetch_submit_collect_autograde_feedback_export(self, tmp_path):
        exchange = tmp_path / "exchange"
        exchange.mkdir()
        exchange.chmod(0o777)
        course = new_course(tmp_path, exchange)
        source = nbformat.read(course / "notebooks" / A / f"{A}.ipynb", as_version=4)
        nbgrader("release_assignment", A, cwd=course)
        work = {"alice": {}, "bob": {"attention_scores": "def attention_scores(q, k):\n    return q @ k.transpose(-2, -1)\n"},
                "carol": None}  # carol submits the release untouched
        for learner, wrong in work.items():
            home = tmp_path / learner
            home.mkdir()
            nbgrader("fetch_assignment", A, "--course", "tinylm", f"--Exchange.root={exchange}", cwd=home)
            path = home / A / f"{A}.ipynb"
            fetched = nbformat.read(path, as_version=4)
            assert "BEGIN SOLUTION" not in "".join(c.source for c in fetched.cells)
            if wrong is not None:
                nbformat.write(solve(source, wrong), path)
            # on a hub each learner is their own login; here one login submits for three (--student)
            nbgrader("submit", A, "--course", "tinylm", f"--Exchange.root={exchange}", f"--student={learner}", cwd=home)
        # one login submitted for three, none of them a Unix user: collect is told to trust the names
        # (tests/test_exchange.py holds collect's check of who submitted, with real users)
        nbgrader("collect", A, "--RegularFilesCollect.check_owner=False", cwd=course)
        assert sorted(p.name for p in (course / "submitted").iterdir()) == ["alice", "bob", "carol"]
        nbgrader("autograde", A, cwd=course)
        full = points(source)
        assert scores(course, "alice") == full
        assert scores(course, "bob") == {**full, "attention_scores_check": 0}
        assert set(scores(course, "carol").values()) == {0}
        nbgrader("generate_feedback", A, cwd=course)
        html = (course / "feedback" / "bob" / A / f"{A}.html").read_text()
        assert "likely mistake" in html and "scal" in html  # the diagnosis of the unscaled scores
        nbgrader("export", cwd=course)
        with open(course / "grades.csv", newline="") as f:
            rows = {r["student_id"]: float(r["score"]) for r in csv.DictReader(f) if r["assignment"] == A}
        assert rows == {"alice": sum(full.values()), "bob": sum(full.values()) - 1, "carol": 0.0}


    # ---------------------------------------------------------------- the class simulation

    # The stage's function exercises (a class's mutants lean on their module's helpers, so they cannot be pasted alone).
EXERCISES = {e.id: e for e in registry.graded(A) if e.name[:1].islower()}


def known_mistakes(exercise: registry.Exercise) -> list[tuple[str, str]]:
    """(source, the mistake named) of the mutants whose mistake the exercise's check names, renamed to the exercise's
    name and self-contained (they run in the notebook with only its imports)."""
    out, name = [], exercise.name
    for check, wrong, mistake, _ in ROWS:
        if check.__name__ != exercise.check or mistake is None or not inspect.isfunction(wrong):
            continue
        src = inspect.getsource(wrong)
        src = re.sub(rf"^def {wrong.__name__}\(", f"def {name}(", src, count=1)
        namespace = {}
        try:  # self-contained: the notebook's imports are enough
            exec("import math\nimport torch\nimport numpy as np\nfrom torch import nn\n" + src, namespace)
            check(namespace[name], quiet=True)
        except AssertionError as e:
            if getattr(e, "mistake", None) == mistake:
                out.append((src, mistake))
        except Exception:  # noqa: BLE001 - needs a helper of the mutants module: not for a notebook
            continue
    return out


class TestClassSimulation:
    LEARNERS = 12  # one autograde run, each learner in a kernel of its own (about 6 s of CPU each)

    def test_a_class_s_scores_equal_the_prediction(self, tmp_path, capsys):
        course = new_course(tmp_path)
        source = nbformat.read(course / "notebooks" / A / f"{A}.ipynb", as_version=4)
        full = points(source)
        pools = {gid: known_mistakes(e) for gid, e in EXERCISES.items()}
        assert len(pools) == 3
        assert all(len(pool) >= 3 for pool in pools.values()), {g: len(p) for g, p in pools.items()}
        rng = random.Random(2026)
        predicted, named = {}, {}
        for i in range(self.LEARNERS):
            learner = f"learner{i:02d}"
            wrong = {gid: rng.choice(pool) for gid, pool in pools.items() if rng.random() < 0.4}
            folder = course / "submitted" / learner / A
            folder.mkdir(parents=True)
            nbformat.write(solve(source, {gid: src for gid, (src, _) in wrong.items()}), folder / f"{A}.ipynb")
            predicted[learner] = {gid: (0 if gid in {EXERCISES[w].test_id for w in wrong} else pts) for gid, pts in full.items()}
            named[learner] = {EXERCISES[gid].test_id: mistake for gid, (_, mistake) in wrong.items()}
        nbgrader("autograde", A, cwd=course)
        got = {learner: scores(course, learner) for learner in predicted}
        assert got == predicted
        assert len({tuple(sorted(p.items())) for p in predicted.values()}) > 4  # the mistakes do vary
        # what the class got wrong, as the grader recorded it: each wrong exercise's named mistake, the rest passed
        records = classreport.verdicts(course, A)
        assert {learner: {gid: (v["passed"], (v["mistakes"] or [None])[0]) for gid, v in by_cell.items()}
                for learner, by_cell in records.items()} == \
            {learner: {gid: (gid not in named[learner], named[learner].get(gid)) for gid in full} for learner in predicted}
        summary = classreport.summary(records)
        for gid in full:
            mistakes = [named[learner][gid] for learner in predicted if gid in named[learner]]
            assert summary[gid] == {"learners": self.LEARNERS, "passed": self.LEARNERS - len(mistakes),
                                    "mistakes": collections.Counter(mistakes)}
        # tinylm-class-report: the same counts as a table, a CSV file and a chart, in either language
        assert classreport.main([A, "--course", str(course), "--csv", str(tmp_path / "class.csv"),
                                 "--plot", str(tmp_path / "class.png")]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == f"{A}: {self.LEARNERS} learners autograded" and lines[1].startswith("exercise")
        for gid in full:
            row = next(line for line in lines if line.startswith(gid + " "))
            assert f"{summary[gid]['passed']}/{self.LEARNERS}" in row
            for mistake, n in sorted(summary[gid]["mistakes"].items(), key=lambda kv: (-kv[1], kv[0]))[:3]:
                assert f"{mistake} ({n}, {n / self.LEARNERS:.0%})" in row
        with open(tmp_path / "class.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert {(r["exercise"], r["mistake"]): int(r["mistake_learners"]) for r in rows if r["mistake"]} == \
            {(gid, m): n for gid in full for m, n in summary[gid]["mistakes"].items()}
        assert (tmp_path / "class.png").read_bytes()[:4] == b"\x89PNG"
        with i18n.using("zh"):
            assert classreport.main([A, "--course", str(course)]) == 0
        assert capsys.readouterr().out.startswith(f"{A}：{self.LEARNERS} 名学员的作业已自动评分\n练习")
