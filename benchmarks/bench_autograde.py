"""Seconds of `nbgrader autograde` per learner per stage: before this course's grading set-up and with it.

    .venv/bin/python benchmarks/bench_autograde.py [STAGE ...] [--learners N]

For each stage, two temporary courses get N copies of the solution notebook as submissions, and each
learner is autograded by its own `nbgrader autograde --student` command (what an instructor's loop over a
class costs), alternating between two set-ups:

- **before**: nbgrader's own ``Execute`` in an unsandboxed kernel, the checks judged inside it (the set-up
  before the sandbox: ``nbgrader_config.py`` with the lines of ``MODES["before"]`` appended);
- **after**: ``nbgrader_config.py`` as it is: sandbox, and every verdict computed in nbgrader's process.

The median seconds per learner are printed, with the ratio after / before. A benchmark, not a test:
numbers depend on the machine.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
MODES = {
    "before": '\nc.Autograde.autograde_preprocessors = ["nbgrader.preprocessors.Execute" if p.endswith("GradingExecute") '
              'else p for p in c.Autograde.autograde_preprocessors]\n'
              'c.Execute.kernel_manager_class = "tinylm_grading.kernel.SlicedPollKernelManager"\n',
    "after": "",
}


def autograde_seconds(course: Path, stage: str, student: str) -> float:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    start = time.perf_counter()
    proc = subprocess.run([str(BIN / "nbgrader"), "autograde", stage, "--student", student, "--force",
                           "--log-level=ERROR"], cwd=course, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"autograde failed for {course.name}: {stage}/{student}:\n{proc.stderr[-2000:]}")
    return seconds


def make_course(tmp: Path, mode: str, stage: str, learners: int) -> Path:
    course = tmp / mode
    course.mkdir()
    (course / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text() + MODES[mode])
    shutil.copytree(ROOT / "notebooks" / stage, course / "notebooks" / stage)
    subprocess.run([str(BIN / "nbgrader"), "generate_assignment", stage, "--log-level=ERROR"], cwd=course,
                   env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}, check=True)
    for i in range(learners):
        folder = course / "submitted" / f"learner{i}" / stage
        folder.mkdir(parents=True)
        shutil.copy(ROOT / "notebooks" / stage / f"{stage}.ipynb", folder)
    return course


def main() -> None:
    stages = sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.is_dir() and p.name[:2].isdigit())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stages", nargs="*", default=[s for s in stages if s != "00_setup"])
    parser.add_argument("--learners", type=int, default=3)
    args = parser.parse_args()
    print(f"{'stage':<14}" + "".join(f"{m + ' s':>11}" for m in MODES) + f"{'after/before':>14}")
    for stage in args.stages:
        with tempfile.TemporaryDirectory() as tmp:
            courses = {mode: make_course(Path(tmp), mode, stage, args.learners) for mode in MODES}
            seconds = {mode: [] for mode in MODES}
            for i in range(args.learners):
                for mode, course in courses.items():
                    seconds[mode].append(autograde_seconds(course, stage, f"learner{i}"))
        median = {mode: statistics.median(s) for mode, s in seconds.items()}
        print(f"{stage:<14}" + "".join(f"{median[m]:>11.1f}" for m in MODES)
              + f"{median['after'] / median['before']:>14.2f}", flush=True)


if __name__ == "__main__":
    main()
