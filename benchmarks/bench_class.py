"""A class's grading, side by side: nbgrader's own command, tinylm-autograde with one worker, and with two on a
PostgreSQL gradebook. Prints numbers and whether the grades agree; asserts nothing.

    .venv/bin/python benchmarks/bench_class.py                        # 100 learners x stage 01, then one learner's course
    .venv/bin/python benchmarks/bench_class.py --learners 20 --stage 02_multihead
    .venv/bin/python benchmarks/bench_class.py --only class --no-nbgrader     # 100 learners, 1 worker against 2
    .venv/bin/python benchmarks/bench_class.py --only class --stage 13_capstone --no-nbgrader --serial 3 \
        --record benchmarks/results/grading_class.json   # 100 learners at the capstone, about 80 minutes here
    .venv/bin/python benchmarks/bench_class.py --only course
    .venv/bin/python benchmarks/bench_class.py --only course --no-nbgrader --record benchmarks/results/grading_course.json

- **class**: ``--learners`` copies of the stage's solution notebook, every third one with the known mistake of the
  stage's round-trip test (tests/test_nbgrader.py's ``WRONG``), graded three ways, each in a course of its
  own: ``nbgrader autograde STAGE`` (one command, SQLite: what an instructor types), ``tinylm-autograde STAGE``
  (one worker, SQLite) and ``tinylm-autograde STAGE --workers 2`` on a throwaway PostgreSQL server
  (:mod:`tinylm_grading.postgres`). Each run's wall seconds, seconds per learner, the speed-up over the first, and
  whether every cell's score equals the first run's. ``--serial K``: the one-worker run grades the first K learners
  only (a serial run of 100 at the capstone would take hours), and the two workers' grades are compared learner by
  learner with the grades it gave the same notebook.
- **course**: one learner's whole course (every stage's solution notebook) graded by ``nbgrader autograde`` stage
  after stage, and by ``tinylm-autograde`` with 2 workers on PostgreSQL: its wall seconds, each stage's, and the
  grades' digest.

``--record FILE`` keeps the run in FILE (JSON; one file per benchmark) under ``--label`` (default: the commit), beside
the runs recorded there before, and prints them side by side: a run of another commit (``git worktree add``, then
``PYTHONPATH=<worktree>``) is the baseline of a change.

Timings depend on the machine and its load: run it on a quiet one; only ratios within one run mean anything.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from test_nbgrader import WRONG, submit, with_cells  # noqa: E402 - the round-trip test's known mistakes
from tinylm_grading import postgres  # noqa: E402


def environ(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TINYLM_QUICK"}  # the grader's default decides
    return {**env, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **extra}


def make_course(folder: Path, stages: list[str], learners: int, env: dict[str, str]) -> Path:
    folder.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", folder)
    for stage in stages:
        shutil.copytree(ROOT / "notebooks" / stage, folder / "notebooks" / stage)
        subprocess.run([str(BIN / "nbgrader"), "generate_assignment", stage, "--log-level=ERROR"], cwd=folder,
                       env=env, check=True)
        source = nbformat.read(folder / "notebooks" / stage / f"{stage}.ipynb", as_version=4)
        for i in range(learners):
            submit(folder, f"learner{i:03d}", stage, with_cells(source, dict([WRONG[stage]])) if wrong(stage, i)
                   else source)
    return folder


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    return timed_output(cmd, cwd, env)[0]


def timed_output(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """``cmd``'s wall seconds and what it printed; a failure ends the benchmark with its output's end."""
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
    return seconds, done.stdout


def scores(db_url: str) -> dict[tuple, float]:
    from nbgrader.api import Gradebook
    with Gradebook(db_url, "tinylm") as gb:
        return {(a.name, s.student.id, g.name): g.score for a in gb.assignments for s in a.submissions
                for nb in s.notebooks for g in nb.grades}


def digest(got: dict[tuple, float]) -> str:
    """The grades in a few characters (every cell's score, in order), and their total: runs of other commits of the
    course compare by it."""
    import hashlib
    text = repr(sorted(got.items()))
    return f"{hashlib.sha256(text.encode()).hexdigest()[:10]}, {sum(v or 0 for v in got.values()):g} points"


def row(name: str, seconds: float, n: int, base: float | None, same: bool | None, one: float | None = None) -> None:
    """A table row: the speed-up over nbgrader's command (``base``) and over one worker (``one``), when given."""
    ratios = [f"{b / seconds:10.2f}x" if b else f"{'-':>11}" for b in (base, one)]
    agree = "" if same is None else ("yes" if same else "NO")
    print(f"| {name:<44} | {seconds:8.1f} | {seconds / n:9.2f} | {ratios[0]} | {ratios[1]} | {agree:>11} |",
          flush=True)


def header(title: str, unit: str) -> None:
    print(f"\n{title}\n| {'run':<44} | {'wall s':>8} | {unit:>9} | {'vs nbgrader':>11} | {'vs 1 worker':>11} | "
          f"{'same grades':>11} |")
    print(f"|{'-' * 46}|{'-' * 10}|{'-' * 11}|{'-' * 13}|{'-' * 13}|{'-' * 13}|")


def wrong(stage: str, i: int) -> bool:
    """Whether learner ``i`` of a class hands in the stage's known mistake (every third one, where there is one)."""
    return stage in WRONG and i % 3 == 2


def per_learner(grades: dict[tuple, float]) -> dict[str, dict[tuple, float]]:
    """``scores``' grades by learner: learner id -> {(assignment, cell): score}."""
    out: dict[str, dict[tuple, float]] = {}
    for (assignment, student, cell), score in grades.items():
        out.setdefault(student, {})[assignment, cell] = score
    return out


def as_served(got: dict[tuple, float], stage: str, serial: dict[tuple, float]) -> bool:
    """Whether every learner got, cell by cell, the scores the serial run gave each learner who handed in the same
    notebook (a class's learners are copies of the solution and, every third one, of the stage's known mistake)."""
    number = lambda student: int(student.removeprefix("learner"))  # noqa: E731
    twins: dict[bool, list[dict]] = {}
    for student, cells in per_learner(serial).items():
        twins.setdefault(wrong(stage, number(student)), []).append(cells)
    return bool(got) and all(cells == twin for student, cells in per_learner(got).items()
                             for twin in twins.get(wrong(stage, number(student)), [None]))


def bench_class(tmp: Path, stage: str, learners: int, with_nbgrader: bool = True, serial: int | None = None,
                keep: Path | None = None) -> dict:
    """``serial``: the one-worker run grades that many learners only (the first ones, both kinds of notebook among
    them when ``serial`` >= 3), and the two workers' grades are compared with the grades it gave the same notebook.
    Returns what ``--record`` keeps."""
    load = os.getloadavg()[0]
    header(f"{learners} learners x {stage} ({os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f})",
           "s/learner")
    sqlite = lambda course: f"sqlite:///{course / 'gradebook.db'}"  # noqa: E731
    base = None
    if with_nbgrader:
        a = make_course(tmp / "nbgrader", [stage], learners, environ())
        base = timed([str(BIN / "nbgrader"), "autograde", stage, "--log-level=ERROR"], a, environ())
        row("nbgrader autograde (SQLite)", base, learners, None, None)
    n_one = serial or learners
    b = make_course(tmp / "one", [stage], n_one, environ())
    one = timed([str(BIN / "tinylm-autograde"), stage], b, environ())
    expected = scores(sqlite(a)) if with_nbgrader else scores(sqlite(b))
    name = "tinylm-autograde, 1 worker (SQLite)" if serial is None else f"tinylm-autograde, 1 worker, {serial} learners"
    row(name, one, n_one, base, scores(sqlite(b)) == expected if base else None)
    with postgres.temporary_server() as url:
        env = environ(TINYLM_GRADEBOOK=url)
        c = make_course(tmp / "two", [stage], learners, env)
        seconds = timed([str(BIN / "tinylm-autograde"), stage, "--workers", "2"], c, env)
        got = scores(url)
        same = as_served(got, stage, expected) if serial else got == expected
        row("tinylm-autograde, 2 workers (PostgreSQL)", seconds, learners, base, same,
            one / n_one * learners)
        print(f"grades: {digest(got)}; {len({s for _, s, _ in got})} learners graded")
    if keep:  # every learner's every score, of the first run (the one compared with) and of the two workers'
        import json
        runs = {"compared with": per_learner(expected), "2 workers": per_learner(got)}
        keep.write_text(json.dumps({run: {s: {" ".join(k): v for k, v in cells.items()} for s, cells in grades.items()}
                                    for run, grades in runs.items()}, indent=1) + "\n", encoding="utf-8")
    return {"stage": stage, "learners": learners, "one_worker_learners": n_one,
            "one_worker_s_per_learner": round(one / n_one, 1), "two_workers_wall_s": round(seconds, 1),
            "two_workers_s_per_learner": round(seconds / learners, 1), "same_grades": same, "grades": digest(got),
            "load_average_start": round(load, 1)}


def bench_course(tmp: Path, with_nbgrader: bool = True) -> dict:
    """The course benchmark; returns what ``--record`` keeps."""
    stages = sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.is_dir() and p.name[:2].isdigit())
    load = os.getloadavg()[0]
    header(f"one learner's course: {len(stages)} stages ({stages[0]} to {stages[-1]}; load average {load:.1f})",
           "s/stage")
    base, expected = None, None
    if with_nbgrader:
        a = make_course(tmp / "course-nbgrader", stages, 1, environ())
        base = 0.0
        for stage in stages:
            base += timed([str(BIN / "nbgrader"), "autograde", stage, "--log-level=ERROR"], a, environ())
        expected = scores(f"sqlite:///{a / 'gradebook.db'}")
        row("nbgrader autograde, stage after stage", base, len(stages), None, None)
    with postgres.temporary_server() as url:
        env = environ(TINYLM_GRADEBOOK=url)
        b = make_course(tmp / "course-two", stages, 1, env)
        seconds, output = timed_output([str(BIN / "tinylm-autograde"), *stages, "--workers", "2"], b, env)
        got = scores(url)
        row("tinylm-autograde, 2 workers (PostgreSQL)", seconds, len(stages), base,
            None if expected is None else got == expected)
    per_stage = {m[1]: float(m[2]) for m in re.finditer(r"^(\S+) \S+: graded in ([\d.]+) s", output, re.M)}
    print(f"grades: {digest(got)}")
    return {"wall_s": round(seconds, 1), "stages_s": per_stage, "grades": digest(got),
            "load_average_start": round(load, 1)}


def record(path: Path, label: str, run: dict) -> None:
    """Keep ``run`` in ``path`` under ``label``, and print every run kept there, side by side."""
    import json
    kept = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"runs": {}}
    kept["runs"][label] = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), **run}
    path.write_text(json.dumps(kept, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if "stages_s" in run:
        print(f"\n{path}: one learner's course, 2 workers")
        print(f"| {'run':<48} | {'wall s':>7} | {'capstone s':>10} | {'grades':<24} |")
        for name, r in kept["runs"].items():
            print(f"| {name:<48} | {r['wall_s']:7.1f} | {r['stages_s'].get('13_capstone', 0):10.1f} | "
                  f"{r['grades']:<24} |")
        return
    print(f"\n{path}: a class at one stage, seconds per learner")
    print(f"| {'run':<40} | {'stage':<12} | {'learners':>8} | {'1 worker':>8} | {'2 workers':>9} | same grades |")
    for name, r in kept["runs"].items():
        print(f"| {name:<40} | {r['stage']:<12} | {r['learners']:8d} | {r['one_worker_s_per_learner']:8.1f} | "
              f"{r['two_workers_s_per_learner']:9.1f} | {'yes' if r['same_grades'] else 'NO':>11} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--learners", type=int, default=100)
    p.add_argument("--stage", default="01_attention")
    p.add_argument("--only", choices=["class", "course"], help="one of the two benchmarks")
    p.add_argument("--no-nbgrader", action="store_true", help="leave out nbgrader's own command (a third of the "
                   "time): in class, the two workers are then compared with one, and their grades with one worker's; "
                   "in course, the grades are printed as a digest, to compare with another commit's run")
    p.add_argument("--serial", type=int, help="class: the one-worker run grades only this many learners (3 or more "
                   "holds both kinds of notebook); the two workers' grades are compared learner by learner with the "
                   "grades it gave the same notebook, and its time per learner stands for the whole class's")
    p.add_argument("--keep-scores", type=Path, help="class: write every learner's scores in both runs to this "
                   "JSON file")
    p.add_argument("--record", type=Path, help="keep the run in this JSON file, beside the runs there (one file per "
                   "benchmark: class or course)")
    p.add_argument("--label", help="the run's name in --record's file (default: the commit, from git describe)")
    a = p.parse_args()
    if a.record and a.only is None:
        p.error("--record keeps one benchmark's runs: give --only class or --only course")
    label = a.label or subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                                      text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="bench_class_") as tmp:
        if a.only in (None, "class"):
            run = bench_class(Path(tmp), a.stage, a.learners, with_nbgrader=not a.no_nbgrader, serial=a.serial,
                              keep=a.keep_scores)
        if a.only in (None, "course"):
            run = bench_course(Path(tmp), with_nbgrader=not a.no_nbgrader)
        if a.record:
            record(a.record, label, run)


if __name__ == "__main__":
    main()
