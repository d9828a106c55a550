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
from tinylm_grading.autograde import main, shard
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


def test_two_shards_on_postgresql_grade_as_one_process_on_sqlite(tmp_path):
    """Issue 5 of 5: a class graded by shards, as separate processes at once on one PostgreSQL gradebook (a Kubernetes
    Indexed Job's pods: deploy/grade-job.yaml), gets the grades of one serial run. Shard 0 is named by --shard and
    grades with 2 workers; shard 1 by JOB_COMPLETION_INDEX, as Kubernetes gives it, with one."""
    postgres_or_skip()
    serial = a_class(tmp_path / "serial")
    done = command(STAGE, course=serial)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "4 autogrades" in done.stdout and "1 at a time; 0 failed" in done.stdout
    with postgres.temporary_server() as url:
        parallel = a_class(tmp_path / "parallel", TINYLM_GRADEBOOK=url)
        environ = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "TINYLM_GRADEBOOK": url}
        shards = [subprocess.Popen([str(BIN / "tinylm-autograde"), STAGE, "--shards", "2", *args], cwd=parallel,
                                   env={**environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for args, env in ((["--shard", "0", "--workers", "2"], {}), ([], {"JOB_COMPLETION_INDEX": "1"}))]
        outputs = [shard.communicate(timeout=900) for shard in shards]
        for shard, (out, err) in zip(shards, outputs):
            assert shard.returncode == 0, err[-3000:]
        assert "2 autogrades" in outputs[0][0] and "2 at a time; 0 failed" in outputs[0][0]
        assert "2 autogrades" in outputs[1][0] and "1 at a time; 0 failed" in outputs[1][0]
        assert [sorted(line.split(":")[0] for line in out.splitlines()[:2]) for out, _ in outputs] == [
            [f"{STAGE} cheater", f"{STAGE} perfect"], [f"{STAGE} one_wrong", f"{STAGE} untouched"]]
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


def test_shards_split_the_learners_keeping_each_learner_s_stages_together():
    jobs = [(stage, s) for stage in ("13_capstone", "01_attention") for s in ("a", "b", "c", "d", "e")]
    parts = [shard(jobs, i, 3) for i in range(3)]
    assert [sorted({s for _, s in part}) for part in parts] == [["a", "d"], ["b", "e"], ["c"]]
    assert sorted(j for part in parts for j in part) == sorted(jobs)
    assert parts[0] == [("13_capstone", "a"), ("13_capstone", "d"), ("01_attention", "a"), ("01_attention", "d")]
    assert shard(jobs, 0, 1) == jobs and shard(jobs, 5, 6) == []


@pytest.mark.parametrize("args, env, says", [
    (["--shards", "2"], {}, "--shard must be a whole number from 0 to 1 (--shards 2), not None; without --shard it is "
                            "read from $JOB_COMPLETION_INDEX"),
    (["--shards", "2", "--shard", "2"], {}, "not 2;"),
    (["--shards", "2"], {"JOB_COMPLETION_INDEX": "x"}, "not x;"),
    (["--shards", "0"], {}, "--shards must be 1 or more, not 0"),
    (["--shards", "2", "--shard", "1"], {}, "2 shards need a gradebook that takes concurrent writers"),
    ([], {"JOB_COMPLETION_INDEX": "3"}, "nobody has submitted 01_attention"),  # one shard: the index is not read
])
def test_a_shard_that_cannot_be_is_one_line(tmp_path, capsys, monkeypatch, args, env, says):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)  # a course folder (its gradebook SQLite): nothing is graded
    course = tmp_path
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    monkeypatch.delenv("TINYLM_GRADEBOOK", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main([STAGE, "--course", str(course), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err


@pytest.mark.parametrize("given, read", [
    ("postgresql://grader:secret@db.example.org/tinylm", "postgresql+psycopg://grader:secret@db.example.org/tinylm"),
    ("postgresql+psycopg://grader@/tinylm?host=/run", "postgresql+psycopg://grader@/tinylm?host=/run"),
    (None, "sqlite:///{course}/gradebook.db"),
])
def test_a_postgresql_gradebook_is_read_with_psycopg_3(given, read, tmp_path, monkeypatch):
    """The course installs psycopg 3; SQLAlchemy 2.0 reads postgresql:// as psycopg2's (only 2.1 as psycopg 3's), so
    nbgrader_config.py names the driver: an instructor's usual URL works with either."""
    from sqlalchemy.engine import make_url

    from tinylm_grading.autograde import course_directory

    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    if given is None:
        monkeypatch.delenv("TINYLM_GRADEBOOK", raising=False)
    else:
        monkeypatch.setenv("TINYLM_GRADEBOOK", given)
    url = course_directory(tmp_path).db_url
    assert url == read.format(course=tmp_path.resolve())
    if given:
        assert make_url(url).get_dialect().driver == "psycopg"


@pytest.mark.parametrize("files, cores", [
    ({"cpu.max": "200000 100000\n"}, 2),  # cgroup v2, a pod limited to 2 CPUs
    ({"cpu.max": "150000 100000\n"}, 2),  # 1.5 CPUs: rounded up
    ({"cpu.max": "max 100000\n"}, None),  # no limit: the cores it may run on
    ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),  # cgroup v1
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    ({"cpu.max": "not a quota\n"}, None),
    ({}, None),
])
def test_the_cores_a_grader_uses_are_its_cgroup_s(files, cores, tmp_path):
    """A container sees its node's cores: tinylm-autograde gave each of 2 workers' kernels 16 threads in a pod of 2 CPUs
    on a 32-core node (its threads and the capstone's commands at once now come from the pod's CPU quota)."""
    from tinylm_checks.capstone import usable_cpus

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    affinity = len(os.sched_getaffinity(0))
    assert usable_cpus(str(tmp_path)) == (affinity if cores is None else min(cores, affinity))
