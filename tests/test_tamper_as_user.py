"""The tamper attacks against `nbgrader autograde` run by an ordinary user, not root (stage 01).

tests/test_tamper.py attacks a root grader, as CI and `make class` run it. An instructor may as well grade as
themselves: bubblewrap then runs unprivileged, in a user namespace, and learner code is the instructor's user inside
it. The same attacks, with the same promise: each loses only its exercise, honest work keeps full marks, nothing
outside `autograded/` and the gradebook changes, nothing reaches the instructor's terminal. tests/as_user.py stands in
for the ordinary user (the suite runs as root).
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

import as_user
from test_tamper import (ATTACKS, EXERCISE, FORGED, WRONG, A, cells_by_id, changed_files, fingerprint, points,
                         scores)

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
UID = 4243  # an ordinary user of no other test
STUDENTS = ["m_core_pattern", "m_gradebook", "m_submitted", "m_checks", "m_kill_grader", "m_terminal", "m_runpy"]
pytestmark = [pytest.mark.slow, pytest.mark.notebooks,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to become an ordinary user")]


def nbgrader(course: Path, *args: str):
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(course.parent / "home"), "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", "JUPYTER_RUNTIME_DIR": str(course.parent / "home" / "runtime")}
    return as_user.run(UID, [str(BIN / "nbgrader"), *args, "--log-level=WARN"],
                       [Path(sys.base_prefix), Path(sys.prefix), ROOT, course.parent], env, timeout=1500,
                       cwd=course)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    top = tmp_path_factory.mktemp("as_user")
    course, home = top / "course", top / "home"
    course.mkdir()
    home.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "notebooks" / A, course / "notebooks" / A)
    for path in [top, *top.rglob("*")]:
        os.lchown(path, UID, UID)
    done = nbgrader(course, "generate_assignment", A, "--force")
    assert done.returncode == 0, done.stderr[-3000:]
    source = nbformat.read(course / "notebooks" / A / f"{A}.ipynb", as_version=4)
    index = cells_by_id(source)
    for student in ["a_honest", *STUDENTS]:
        nb = nbformat.from_dict(source)
        if student != "a_honest":
            nb.cells[index[EXERCISE]].source = f"COURSE = {str(course)!r}\n" + WRONG + ATTACKS[student]
        folder = course / "submitted" / student / A
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{A}.ipynb")
    for path in [course / "submitted", *(course / "submitted").rglob("*")]:
        os.lchown(path, UID, UID)
    watched = [ROOT / "tinylm_checks", ROOT / "tinylm_solutions", ROOT / "tinylm_grading", ROOT / ".venv",
               course / "notebooks", course / "release", course / "submitted"]
    before = fingerprint(*watched)
    proc = nbgrader(course, "autograde", A, "--force", "--Execute.timeout=15", "--GradingExecute.notebook_timeout=60")
    return course, source, proc, before, fingerprint(*watched)


def test_an_ordinary_users_grading_ends_well(graded):
    assert graded[2].returncode == 0, graded[2].stderr[-3000:]


def test_honest_work_keeps_full_marks(graded):
    course, source = graded[:2]
    assert scores(course, "a_honest") == points(source)


@pytest.mark.parametrize("student", STUDENTS)
def test_each_attack_loses_its_exercise_only(graded, student):
    course, source = graded[:2]
    expected = {gid: (0 if gid == f"{EXERCISE}_check" else pts) for gid, pts in points(source).items()}
    assert scores(course, student) == expected


def test_nothing_outside_autograded_changed_and_nothing_reached_the_terminal(graded):
    proc, before, after = graded[2:]
    assert changed_files(before, after) == []
    assert FORGED not in proc.stdout and FORGED not in proc.stderr
