"""How long the checks and the notebooks take, on this machine. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/bench_checks.py             # every check: first call and warm median
    .venv/bin/python benchmarks/bench_checks.py --slowest 10  # the ten slowest first calls (make test prints them)
    .venv/bin/python benchmarks/bench_checks.py --notebooks # instead: execute every solution notebook, both languages
    .venv/bin/python benchmarks/bench_checks.py --service   # also each check through the check service (class mode)

"First call" is what a learner meets in a fresh kernel that has run its notebook's imports: each check runs in a
child forked from a process that has imported the checks and built the objects but run no check, so it pays
PyTorch's one-time warm-up of the operations it uses and every lazy import; "warm" is the median of ``--repeats``
more calls in the same child (other seeds). The goals (issue 5 of 5): first call under 0.3 s, warm under 0.05 s;
the rows over them are marked. The objects timed are the reference implementations the tests register in
tests/mutants/ (``REFERENCE``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

import torch  # noqa: E402

FIRST_GOAL, WARM_GOAL = 0.3, 0.05
THREADS = torch.get_num_threads()


def first_and_warm(check, obj, repeats: int) -> tuple[float, float]:
    """(first call, median of ``repeats`` warm calls) of ``check`` on ``obj``, in a forked child (this process stays
    cold for the next check)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            torch.set_num_threads(THREADS)  # a learner's kernel's threads (this process computed on one: below)
            times = []
            for seed in range(repeats + 1):
                t = time.perf_counter()
                check(obj, seed=seed, quiet=True)
                times.append(time.perf_counter() - t)
            os.write(write, json.dumps([times[0], statistics.median(times[1:])]).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    os.waitpid(pid, 0)
    if not text:
        raise RuntimeError(f"{check.__name__} failed on its reference")
    return tuple(json.loads(text))


def through_service(check, obj, repeats: int = 5) -> float:
    """The median time of ``check`` on ``obj`` run by the check service (what a learner without answers waits)."""
    from tinylm_checks import client
    times = []
    for seed in range(repeats):
        t = time.perf_counter()
        client.run(check.__name__, obj, seed=seed, quiet=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def start_service(folder: Path) -> subprocess.Popen:
    import os

    from tinylm_checks import client
    where = str(folder / "checks.sock")
    proc = subprocess.Popen([sys.executable, "-m", "tinylm_grading.checkservice", "--socket", where],
                            stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()  # ready
    os.environ[client.ENV] = where
    return proc


def notebooks() -> None:
    """Execute every stage's solution notebook in both languages (built from course/ as make notebooks builds them),
    each in a copy of its folder, as nbval does in make test; print each one's seconds and the totals."""
    import shutil
    import tempfile

    from nbclient import NotebookClient

    sys.path.insert(0, str(ROOT / "tools"))
    import build_notebooks

    from tinylm_grading.kernel import SlicedPollKernelManager
    totals = {}
    print(f"\n{'notebook':<40} {'en s':>8} {'zh s':>8}")
    for source in sorted((ROOT / "course").glob("[0-9][0-9]_*.py")):
        seconds = {}
        for lang in ("en", "zh"):
            nb = build_notebooks.build(source, lang=lang)
            with tempfile.TemporaryDirectory(prefix="bench_notebook_") as tmp:
                folder = Path(tmp) / source.stem
                shutil.copytree(ROOT / "notebooks" / source.stem, folder)
                t = time.perf_counter()
                NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                               kernel_manager_class=SlicedPollKernelManager,
                               resources={"metadata": {"path": str(folder)}}).execute()
                seconds[lang] = time.perf_counter() - t
            totals[lang] = totals.get(lang, 0.0) + seconds[lang]
        print(f"{source.stem:<40} {seconds['en']:8.1f} {seconds['zh']:8.1f}", flush=True)
    print(f"{'in all':<40} {totals['en']:8.1f} {totals['zh']:8.1f}   both: {sum(totals.values()):.0f} s "
          f"(goal: 240 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slowest", type=int, help="print only the N slowest first calls")
    parser.add_argument("--repeats", type=int, default=5, help="warm calls per check (default 5)")
    parser.add_argument("--notebooks", action="store_true", help="time every solution notebook instead")
    parser.add_argument("--service", action="store_true", help="also time each check through the check service")
    args = parser.parse_args()
    if args.notebooks:
        return notebooks()
    sys.path.insert(0, str(ROOT / "tests"))
    # Building the objects computes a little: on one thread, so that no OpenMP pool starts here (a pool started
    # before a fork hangs the child's first parallel operation); each child computes on THREADS.
    torch.set_num_threads(1)
    from mutants import REFERENCE
    start = time.perf_counter()
    rows = sorted(((check.__name__, *first_and_warm(check, obj, args.repeats)) for check, obj in REFERENCE.items()),
                  key=lambda r: -r[1])
    over = [sum(r[i] >= goal for r in rows) for i, goal in ((1, FIRST_GOAL), (2, WARM_GOAL))]
    print(f"{len(rows)} checks on their references, each in a fresh process ({time.perf_counter() - start:.0f} s): "
          f"{over[0]} first calls of {FIRST_GOAL} s or more, {over[1]} warm calls of {WARM_GOAL} s or more")
    shown = rows[:args.slowest] if args.slowest else rows
    print(f"{'check':<40} {'first call s':>12} {'warm median s':>14}")
    for name, first, warm in shown:
        marks = (" first" if first >= FIRST_GOAL else "") + (" warm" if warm >= WARM_GOAL else "")
        print(f"{name:<40} {first:12.3f} {warm:14.4f}{'  over the goal:' + marks if marks else ''}")
    if args.service:
        import tempfile
        service = start_service(Path(tempfile.mkdtemp()))
        print(f"\n{'check':<40} {'service median s':>17}")
        try:
            for check, obj in REFERENCE.items():
                print(f"{check.__name__:<40} {through_service(check, obj):17.3f}", flush=True)
        finally:
            service.terminate()


if __name__ == "__main__":
    main()
