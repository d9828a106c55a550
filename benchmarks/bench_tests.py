"""Where `make test`'s time goes: wall and CPU seconds of the suite, and each module's share. Prints numbers; asserts
nothing.

    .venv/bin/python benchmarks/bench_tests.py                 # the whole suite, as `make test` runs it
    .venv/bin/python benchmarks/bench_tests.py --workers 6     # another number of xdist workers
    .venv/bin/python benchmarks/bench_tests.py tests/test_ref_norm.py -- -m "not slow"   # a part of it

The suite runs under pytest-xdist as the Makefile runs it (``--dist loadscope --no-loadscope-reorder``) with
``--durations=0``. Printed: wall seconds; the CPU seconds the whole machine spent meanwhile (``/proc/stat``: run it
on a quiet machine), and how busy that kept the cores; then the modules by the seconds their tests' setup, call and
teardown took on their workers (under the run's load, so a module's seconds are longer than it would take alone).
(The run's own rusage is not the measure: a sandboxed kernel's CPU never reaches it. One autograde of stage 01
measured 4.5 CPU s by rusage and 9.9 by /proc/stat.)
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DURATION = re.compile(r"^([0-9.]+)s (?:setup|call|teardown) +(\S+?)(?:::|$)", re.M)


def busy_seconds() -> float:
    """CPU seconds the machine has spent busy since boot, all cores (Linux's /proc/stat: all but idle and iowait)."""
    ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="test paths (default: the suite's testpaths)")
    parser.add_argument("--workers", type=int, default=int(os.environ.get("WORKERS", 4)))
    parser.add_argument("--top", type=int, default=25, help="how many modules to list")
    args, extra = parser.parse_known_args(argv)
    extra = [a for a in extra if a != "--"]
    command = [sys.executable, "-m", "pytest", "-n", str(args.workers), "--dist", "loadscope",
               "--no-loadscope-reorder", "--durations=0", "-q", "-p", "no:cacheprovider", *extra, *args.paths]
    start, busy = time.perf_counter(), busy_seconds()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, busy_seconds() - busy
    print(proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:])
    cores = os.cpu_count() or 1
    print(f"wall {wall:.0f} s, the machine busy {cpu:.0f} CPU s on {cores} cores: the cores were busy "
          f"{cpu / (wall * cores):.0%} of the time; {args.workers} workers")
    seconds: dict[str, float] = collections.Counter()
    for value, module in DURATION.findall(proc.stdout):
        seconds[module] += float(value)
    total = sum(seconds.values())
    print(f"\n{'seconds on workers':>18}  {'share':>5}  module")
    for module, value in sorted(seconds.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{value:18.0f}  {value / total:5.0%}  {module}")
    print(f"{total:18.0f}  100%  in all ({total / args.workers:.0f} s per worker)")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
