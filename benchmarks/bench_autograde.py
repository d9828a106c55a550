"""Seconds of `nbgrader autograde` per learner per stage, without and with the sandbox.

    .venv/bin/python benchmarks/bench_autograde.py [STAGE ...] [--learners N]

For each stage, a temporary course gets N copies of the solution notebook as submissions; each learner
is autograded by its own `nbgrader autograde --student` command (what an instructor's loop over a class
costs), once with ``TINYLM_GRADING_SANDBOX=off`` and once with the sandbox, alternating, and the median
seconds per learner are printed with their ratio. A benchmark, not a test: numbers depend on the machine.
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


def autograde_seconds(course: Path, stage: str, student: str, sandbox: bool) -> float:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
           "TINYLM_GRADING_SANDBOX": "on" if sandbox else "off"}
    start = time.perf_counter()
    proc = subprocess.run([str(BIN / "nbgrader"), "autograde", stage, "--student", student, "--force",
                           "--log-level=ERROR"], cwd=course, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"autograde failed for {stage}/{student}:\n{proc.stderr[-2000:]}")
    return seconds


def main() -> None:
    stages = sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.is_dir() and p.name[:2].isdigit())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stages", nargs="*", default=[s for s in stages if s != "00_setup"])
    parser.add_argument("--learners", type=int, default=3)
    args = parser.parse_args()
    print(f"{'stage':<14} {'no sandbox s':>13} {'sandbox s':>10} {'ratio':>6}")
    for stage in args.stages:
        with tempfile.TemporaryDirectory() as tmp:
            course = Path(tmp)
            shutil.copy(ROOT / "nbgrader_config.py", course)
            shutil.copytree(ROOT / "notebooks" / stage, course / "notebooks" / stage)
            subprocess.run([str(BIN / "nbgrader"), "generate_assignment", stage, "--log-level=ERROR"], cwd=course,
                           env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}, check=True)
            for i in range(args.learners):
                folder = course / "submitted" / f"learner{i}" / stage
                folder.mkdir(parents=True)
                shutil.copy(ROOT / "notebooks" / stage / f"{stage}.ipynb", folder)
            plain, boxed = [], []
            for i in range(args.learners):
                plain.append(autograde_seconds(course, stage, f"learner{i}", sandbox=False))
                boxed.append(autograde_seconds(course, stage, f"learner{i}", sandbox=True))
        a, b = statistics.median(plain), statistics.median(boxed)
        print(f"{stage:<14} {a:>13.1f} {b:>10.1f} {b / a:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
