"""tinylm-autograde: a class graded with 2 workers on a PostgreSQL gradebook gets the grades, verdicts and named
mistakes that the same class gets graded one learner at a time on SQLite; bad input is one line in the user's
language.

Needs PostgreSQL's server (Debian: postgresql): skipped without it, unless TINYLM_REQUIRE_BROWSER=1 (set by .ci/run,
which installs it), where its absence is a failure."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from test_nbgrader import CHEATS, WRONG, submit, with_cells
from tinylm_grading import classreport, postgres
from tinylm_grading.autograde import main
from tinylm_solutions import i18n

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
STAGE = "01_attention"
pytestmark = pytest.mark.slow


def postgres_or_skip() -> None:
    try:
        postgres.bin_dir()
    except postgres.PostgresMissing as e:
        if os.environ.get("TINYLM_REQUIRE_BROWSER") == "1":
            raise RuntimeError(f"{e} (TINYLM_REQUIRE_BROWSER=1: .ci/run installs it)") from None
        pytest.skip(str(e))


def command(*args: str, course: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **env}
    return subprocess.run([str(BIN / "tinylm-autograde"), *args], cwd=course, env=environ, capture_output=True,
                          text=True, timeout=900)


def a_class(folder: Path, **env: str) -> Path:
    """Stage 01 generated (into the gradebook ``env`` names) and five learners' submissions: right, untouched, one
    known mistake, a check rebound in the kernel, and the Chinese notebook right."""
    folder.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", folder)
    shutil.copytree(ROOT / "notebooks" / STAGE, folder / "notebooks" / STAGE)
    subprocess.run([str(BIN / "nbgrader"), "generate_assignment", STAGE, "--log-level=WARN"], cwd=folder, check=True,
                   env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **env})
    source = nbformat.read(folder / "notebooks" / STAGE / f"{STAGE}.ipynb", as_version=4)
    submit(folder, "perfect", STAGE, source)
    submit(folder, "untouched", STAGE, nbformat.read(folder / "release" / STAGE / f"{STAGE}.ipynb", as_version=4))
    submit(folder, "one_wrong", STAGE, with_cells(source, {WRONG[STAGE][0]: WRONG[STAGE][1]}))
    submit(folder, "cheater", STAGE, with_cells(source, CHEATS[STAGE]))
    return folder


def grades(db_url: str) -> dict[tuple[str, str], float]:
    """(learner, cell) -> score, every autograded cell of the stage."""
    with Gradebook(db_url, "tinylm") as gb:
        return {(s.student.id, g.name): g.score for s in gb.find_assignment(STAGE).submissions
                for nb in s.notebooks for g in nb.grades}


def test_two_workers_on_postgresql_grade_as_one_on_sqlite(tmp_path):
    postgres_or_skip()
    serial = a_class(tmp_path / "serial")
    done = command(STAGE, course=serial)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "4 autogrades" in done.stdout and "1 at a time; 0 failed" in done.stdout
    with postgres.temporary_server() as url:
        parallel = a_class(tmp_path / "parallel", TINYLM_GRADEBOOK=url)
        done = command(STAGE, "--workers", "2", course=parallel, TINYLM_GRADEBOOK=url)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "4 autogrades" in done.stdout and "2 at a time; 0 failed" in done.stdout
        assert sorted(line.split(":")[0] for line in done.stdout.splitlines()[:4]) == [
            f"{STAGE} {s}" for s in ("cheater", "one_wrong", "perfect", "untouched")]
        got = grades(url)
        os.environ["TINYLM_GRADEBOOK"] = url  # the class report reads the course's gradebook, as nbgrader does
        try:
            report = classreport.summary(classreport.verdicts(parallel, STAGE))
        finally:
            del os.environ["TINYLM_GRADEBOOK"]
    expected = grades(f"sqlite:///{serial / 'gradebook.db'}")
    assert got == expected
    assert report == classreport.summary(classreport.verdicts(serial, STAGE))
    # what the class did, as graded: the perfect learner has every point, the others lost some
    by_learner = {s: sum(v for (who, _), v in expected.items() if who == s) for s, _ in expected}
    assert by_learner["perfect"] > by_learner["one_wrong"] > by_learner["untouched"] == 0
    assert by_learner["cheater"] < by_learner["perfect"]
    assert report["attention_scores_check"] == {"learners": 4, "passed": 1,
                                                "mistakes": {"no_scaling": 2, "not_implemented": 1}}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_input_gives_one_line_in_the_user_s_language(tmp_path, capsys, lang):
    empty = tmp_path / "empty"
    empty.mkdir()
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    (course / "submitted" / "ann" / STAGE).mkdir(parents=True)
    lines = {}
    with i18n.using(lang):
        for name, argv in {"workers": [STAGE, "--workers", "0", "--course", str(course)],
                           "sqlite": [STAGE, "--workers", "2", "--course", str(course)],
                           "no_course": [STAGE, "--course", str(empty)],
                           "nobody": ["02_multihead", "--course", str(course)],
                           "student": [STAGE, "--student", "bob", "--course", str(course)]}.items():
            assert main(argv) == 2, name
            lines[name] = capsys.readouterr().err
        os.environ["TINYLM_GRADEBOOK"] = "postgresql://grader:secret@/gradebook?host=/nonexistent"
        try:
            assert main([STAGE, "--workers", "2", "--course", str(course)]) == 2
        finally:
            del os.environ["TINYLM_GRADEBOOK"]
        lines["unreachable"] = capsys.readouterr().err
    for name, line in lines.items():
        assert line.startswith({"en": "tinylm-autograde: error: ", "zh": "tinylm-autograde：错误："}[lang]), (name, line)
        assert line.count("\n") == 1, (name, line)
    assert "secret" not in lines["unreachable"] and "grader:***@" in lines["unreachable"]
    assert "/nonexistent" in lines["unreachable"]
    assert "nbgrader_config.py" in lines["no_course"] and "--course" in lines["no_course"]
    assert "02_multihead" in lines["nobody"] and "bob" in lines["student"]
    words = {"en": ("1 or more", "SQLite", "nobody has submitted", "cannot open the gradebook"),
             "zh": ("至少为 1", "SQLite", "还没有人提交", "无法打开成绩册")}[lang]
    assert all(w in lines[k] for w, k in zip(words, ("workers", "sqlite", "nobody", "unreachable")))
    assert "PostgreSQL" in lines["sqlite"] and "--workers 1" in lines["sqlite"]


@pytest.mark.parametrize("stages", [["01_attention", "13_capstone", "09_training"],
                                    ["13_capstone", "01_attention", "09_training"]])
def test_the_last_stages_start_first_whatever_order_they_are_named_in(tmp_path, stages):
    """The capstone and the training stages take the longest to grade: started first, no worker is left alone with
    one of them at the end."""
    from tinylm_grading.autograde import course_directory, plan
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    for learner in ("ann", "bo"):
        for stage in stages:
            (tmp_path / "submitted" / learner / stage).mkdir(parents=True)
    assert plan(course_directory(tmp_path), stages, None) == [
        ("13_capstone", "ann"), ("13_capstone", "bo"), ("09_training", "ann"), ("09_training", "bo"),
        ("01_attention", "ann"), ("01_attention", "bo")]
    assert plan(course_directory(tmp_path), stages, ["bo"]) == [("13_capstone", "bo"), ("09_training", "bo"),
                                                                ("01_attention", "bo")]
