"""How long the checks and the notebooks take, on this machine. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/bench_checks.py             # every check: first call and warm median
    .venv/bin/python benchmarks/bench_checks.py --notebooks # also execute every source notebook (nbclient)
    .venv/bin/python benchmarks/bench_checks.py --service   # also each check through the check service (class mode)

The course promises that no check takes over a second on a 2-core CPU; "first call" is what a learner
meets in a fresh kernel (it includes PyTorch's one-time warm-up of the operations used). The objects
timed are the reference implementations the tests register in tests/mutants/ (``REFERENCE``).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FIRST_CALL = """
import sys, time
sys.path.insert(0, {tests!r})
from mutants import REFERENCE
check = next(c for c in REFERENCE if c.__name__ == {name!r})
t = time.perf_counter(); check(REFERENCE[check], quiet=True); print(time.perf_counter() - t)
"""


def first_call(name: str) -> float:
    code = FIRST_CALL.format(tests=str(ROOT / "tests"), name=name)
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                cwd=ROOT).stdout)


def warm(check, obj, repeats: int = 20) -> float:
    times = []
    for seed in range(repeats):
        t = time.perf_counter()
        check(obj, seed=seed, quiet=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


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
    import nbformat
    from nbclient import NotebookClient

    from tinylm_grading.kernel import SlicedPollKernelManager
    print(f"\n{'notebook':<40} {'seconds':>8}")
    for path in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        t = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                       kernel_manager_class=SlicedPollKernelManager,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        print(f"{path.relative_to(ROOT).as_posix():<40} {time.perf_counter() - t:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", action="store_true", help="also time every source notebook")
    parser.add_argument("--service", action="store_true", help="also time each check through the check service")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from mutants import REFERENCE
    service = None
    if args.service:
        import tempfile
        service = start_service(Path(tempfile.mkdtemp()))
    print(f"{'check (on the reference)':<40} {'first call s':>12} {'warm median s':>14}"
          + (f" {'service median s':>17}" if service else ""))
    try:
        for check, obj in REFERENCE.items():
            row = f"{check.__name__:<40} {first_call(check.__name__):12.3f} {warm(check, obj):14.4f}"
            if service:
                row += f" {through_service(check, obj):17.3f}"
            print(row, flush=True)
    finally:
        if service:
            service.terminate()
    if args.notebooks:
        notebooks()


if __name__ == "__main__":
    main()
