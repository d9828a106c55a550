"""How long the checks and the notebooks take, on this machine. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/bench_checks.py             # every check: first call and warm median
    .venv/bin/python benchmarks/bench_checks.py --slowest 10  # the ten slowest first calls (make test prints them)
    .venv/bin/python benchmarks/bench_checks.py --notebooks # instead: execute every solution notebook, both languages
                                                            # (short training runs, TINYLM_QUICK=1, as make test's)
    .venv/bin/python benchmarks/bench_checks.py --service   # also each check through the check service (class mode)

"First call" (the default table) is a check's first call in a fresh process that has imported the checks and built
the objects but run no check: each check runs in a child forked from such a process, so it pays PyTorch's one-time
warm-up of the operations it uses, every lazy import, and (the capstone's checks) the start of the process their
commands are forked from. "Warm" is the median of ``--repeats`` more calls in the same child (other seeds). The
goals (issue 5 of 5): first call under 0.3 s, warm under 0.05 s; the rows over them are marked. The objects timed
are the reference implementations the tests register in tests/mutants/ (``REFERENCE``).

``--notebooks`` also prints each check's first call *in its notebook*: the seconds of the cell that first calls it,
run in the kernel that ran every cell above it, as a learner's is. That kernel has paid what earlier cells paid (the
notebook's optimizers import ``torch._dynamo`` before its checks do; the capstone's ``Repository(...)`` starts the
process its checks fork their commands from, about 1.5 s before it is ready: a learner writes ``model.py`` meanwhile,
this run only a few quick cells, so its first capstone check still waits for part of that). Each check cell runs
without its hidden tests, which the grader adds and the learner's notebook does not have; they run next, in a cell of
their own.
"""
from __future__ import annotations

import argparse
import json
import os
import re
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
    proc = subprocess.Popen([sys.executable, "-m", "tinylm_grading.checkservice", "--socket", where,
                             "--released", "13_capstone"],
                            stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()  # ready
    os.environ[client.ENV] = where
    return proc


def notebooks() -> None:
    """Execute every stage's solution notebook in both languages (built from course/ as make notebooks builds them),
    each in a copy of its folder, as nbval does in make test; print each one's seconds and the totals, then each
    check's first call in its notebook (what a learner meets: the kernel has run the cells above it)."""
    import shutil
    import tempfile

    from nbclient import NotebookClient

    sys.path.insert(0, str(ROOT / "tools"))
    import build_notebooks

    from tinylm_grading.kernel import SlicedPollKernelManager
    os.environ.setdefault("TINYLM_QUICK", "1")  # as make test runs them (conftest.py): the kernels inherit it
    totals, calls = {}, {}
    print(f"\n{'notebook':<40} {'en s':>8} {'zh s':>8}")
    for source in sorted((ROOT / "course").glob("[0-9][0-9]_*.py")):
        seconds = {}
        for lang in ("en", "zh"):
            nb = split_hidden_tests(build_notebooks.build(source, lang=lang))
            with tempfile.TemporaryDirectory(prefix="bench_notebook_") as tmp:
                folder = Path(tmp) / source.stem
                shutil.copytree(ROOT / "notebooks" / source.stem, folder)
                t = time.perf_counter()
                NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                               kernel_manager_class=SlicedPollKernelManager,
                               resources={"metadata": {"path": str(folder)}}).execute()
                seconds[lang] = time.perf_counter() - t
            for name, cell_seconds in first_check_calls(nb).items():
                calls.setdefault(name, {})[lang] = cell_seconds
            totals[lang] = totals.get(lang, 0.0) + seconds[lang]
        print(f"{source.stem:<40} {seconds['en']:8.1f} {seconds['zh']:8.1f}", flush=True)
    print(f"{'in all':<40} {totals['en']:8.1f} {totals['zh']:8.1f}   both: {sum(totals.values()):.0f} s "
          f"(goal: 240 s)")
    rows = sorted(calls.items(), key=lambda item: -max(item[1].values()))
    over = sum(max(times.values()) >= FIRST_GOAL for times in calls.values())
    print(f"\n{len(rows)} checks, each one's first call in its notebook (the seconds of the cell that first calls "
          f"it, in the kernel that ran the cells above it): {over} of {FIRST_GOAL} s or more")
    print(f"{'check':<40} {'en s':>8} {'zh s':>8}")
    for name, times in rows[:12]:
        mark = "  over the goal" if max(times.values()) >= FIRST_GOAL else ""
        print(f"{name:<40} {times.get('en', float('nan')):8.3f} {times.get('zh', float('nan')):8.3f}{mark}")


CHECK_CALL = re.compile(r"^(check_\w+)\(", re.M)
HIDDEN = "### BEGIN HIDDEN TESTS"


def split_hidden_tests(nb):
    """``nb`` with each check cell cut in two before its hidden tests (the grader's second call, on a freshly loaded
    copy of the checks): the same code in the same order, and the first cell's seconds are the learner's call alone
    (the learner's notebook has no hidden tests)."""
    import nbformat
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code" and HIDDEN in cell.source:
            visible, hidden = cell.source.split(HIDDEN, 1)
            cells += [nbformat.v4.new_code_cell(visible.rstrip("\n"), metadata=dict(cell.metadata)),
                      nbformat.v4.new_code_cell(HIDDEN + hidden)]
        else:
            cells.append(cell)
    nb.cells = cells
    return nb


def first_check_calls(nb) -> dict[str, float]:
    """{check: seconds of the executed code cell that calls it first} (a check cell's visible part: its import, then
    the call); from the timings nbclient records in each cell's metadata."""
    from datetime import datetime
    found = {}
    for cell in nb.cells:
        timing = cell.get("metadata", {}).get("execution", {})
        if cell.cell_type != "code" or not {"iopub.execute_input", "shell.execute_reply"} <= set(timing):
            continue
        seconds = (datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
                   - datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))).total_seconds()
        for name in CHECK_CALL.findall(cell.source):
            found.setdefault(name, seconds)
    return found


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
