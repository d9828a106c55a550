"""Where `make test`'s time goes: wall and CPU seconds of the suite, and each module's share. Prints numbers; asserts
nothing.

    .venv/bin/python benchmarks/bench_tests.py                 # the whole suite, as `make test` runs it
    .venv/bin/python benchmarks/bench_tests.py --workers 6     # another number of xdist workers
    .venv/bin/python benchmarks/bench_tests.py tests/test_ref_norm.py -- -m "not slow"   # a part of it

The suite runs under pytest-xdist as the Makefile runs it (``--dist loadscope --no-loadscope-reorder``) with
``--durations=0``. Printed: wall seconds; the CPU seconds the whole machine spent meanwhile (``/proc/stat``: run it
on a quiet machine), and how busy that kept the cores; the CPU seconds of the run's processes, by kind (pytest and
every process it started: kernels, nbgrader commands, the capstone's subprocesses...; :class:`ProcessPoller` reads
``/proc`` ten times a second, so the sandboxed kernels count too, and the kernel's own threads do not); then the
modules by the seconds their tests' setup, call and teardown took on their workers (under the run's load, so a
module's seconds are longer than it would take alone). (The run's own rusage is not the measure: a sandboxed kernel's CPU never reaches it. One autograde of stage 01
measured 4.5 CPU s by rusage and 9.9 by /proc/stat.)
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DURATION = re.compile(r"^([0-9.]+)s (?:setup|call|teardown) +(\S+?)(?:::|$)", re.M)


def busy_seconds() -> float:
    """CPU seconds the machine has spent busy since boot, all cores (Linux's /proc/stat: all but idle and iowait)."""
    ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


KINDS = (  # (kind, pattern in the command line): the first that matches
    ("kernel", re.compile(r"ipykernel_launcher")),
    # tinylm_checks._forked: the capstone's unsandboxed commands, and the tests' nbgrader commands (a forked child
    # keeps its server's command line)
    ("forkserver and the commands forked from it", re.compile(r"# code: the forkserver")),
    ("nbgrader {}", re.compile(r"bin/nbgrader (\w+)")),
    ("pytest worker", re.compile(r"-c import sys;exec\(eval|xdist")),
    ("pytest subprocess (the capstone's tests)", re.compile(r"-m pytest")),
    ("capstone train.py / generate.py", re.compile(r"\b(train|generate)\.py\b")),
    ("tinylm-train / tinylm-generate", re.compile(r"tinylm_solutions\.cli|tinylm-(train|generate)|torchrun")),
    ("chromium", re.compile(r"chrom")),
    ("jupyter server", re.compile(r"jupyter")),
    ("alembic (gradebook migrations)", re.compile(r"alembic")),
    ("sandbox wrappers (bwrap, limits)", re.compile(r"bwrap|tinylm_grading\.limits")),
)


def kind(cmdline: str) -> str:
    """What a process is, from its command line (``KINDS``); an empty one had ended (a zombie) when first read."""
    if not cmdline.strip():
        return "command line unreadable (ended before it was read)"
    for name, pattern in KINDS:
        match = pattern.search(cmdline)
        if match:
            return name.format(*match.groups()) if "{}" in name else name
    return "other: " + cmdline[:50]


def _test(pid: str) -> str:
    """The test that started a process: PYTEST_CURRENT_TEST in its environment when it began (the test's
    module and class or function), or "" (a sandboxed kernel's cleared environment: its parent's counts)."""
    try:
        for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
            if item.startswith(b"PYTEST_CURRENT_TEST="):
                test = item.split(b"=", 1)[1].decode(errors="replace").split(" ")[0]
                return re.sub(r"\[.*", "", test).rsplit("::", 1)[0] if "::" in test else test
    except OSError:
        pass
    return ""


class ProcessPoller(threading.Thread):
    """Every process seen in ``/proc`` while it runs, with the CPU seconds (user + system) it had used when last
    seen: a process shorter than the interval may be missed, and one's last tenth of a second is."""

    def __init__(self, interval: float = 0.1):
        super().__init__(daemon=True)
        self.interval, self.stopped, self.seen = interval, threading.Event(), {}
        self.ticks = os.sysconf("SC_CLK_TCK")

    def run(self):
        while not self.stopped.wait(self.interval):
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    stat = Path(f"/proc/{pid}/stat").read_text()
                    fields = stat[stat.rfind(")") + 2:].split()
                    key, cpu = (int(pid), int(fields[19])), (int(fields[11]) + int(fields[12])) / self.ticks
                    if key not in self.seen:
                        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                        self.seen[key] = [kind(cmdline), cpu, int(fields[1]), _test(pid)]
                    self.seen[key][1] = cpu
                except (OSError, ValueError, IndexError):  # ended meanwhile, or not ours to read
                    continue

    def by_test(self) -> dict[str, tuple[int, float]]:
        """test -> (how many processes, CPU seconds) of the processes a test started (a worker's own CPU is not
        here: its tests' seconds are the durations below); a process with no test of its own is its parent's (so a
        forkserver's children, which it starts for later tests too, count for the test that started it)."""
        info = {pid: (ppid, test, cpu, name) for (pid, _), (name, cpu, ppid, test) in self.seen.items()}
        table: dict[str, list] = collections.defaultdict(lambda: [0, 0.0])
        for pid, (ppid, test, cpu, name) in info.items():
            for _ in range(64):
                if test or ppid not in info:
                    break
                ppid, test = info[ppid][0], info[ppid][1]
            if test and name != "pytest worker":
                table[test][0] += 1
                table[test][1] += cpu
        return {test: (n, cpu) for test, (n, cpu) in table.items()}

    def by_kind(self, root: int) -> dict[str, tuple[int, float]]:
        """kind -> (how many processes, CPU seconds), for ``root`` and the processes it started, theirs included."""
        parent = {pid: ppid for (pid, _), (_, _, ppid, _) in self.seen.items()}

        def descends(pid: int) -> bool:
            for _ in range(64):  # a reused pid could make a loop
                if pid == root:
                    return True
                if pid not in parent:
                    return False
                pid = parent[pid]
            return False

        table: dict[str, list] = collections.defaultdict(lambda: [0, 0.0])
        for (pid, _), (name, cpu, _, _) in self.seen.items():
            if descends(pid):
                name = "pytest controller" if pid == root else name
                table[name][0] += 1
                table[name][1] += cpu
        return {name: (n, cpu) for name, (n, cpu) in table.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="test paths (default: the suite's testpaths)")
    parser.add_argument("--workers", type=int, default=int(os.environ.get("WORKERS", 4)))
    parser.add_argument("--top", type=int, default=25, help="how many modules to list")
    args, extra = parser.parse_known_args(argv)
    extra = [a for a in extra if a != "--"]
    command = [sys.executable, "-m", "pytest", "-n", str(args.workers), "--dist", "loadscope",
               "--no-loadscope-reorder", "--durations=0", "-q", "-p", "no:cacheprovider", *extra, *args.paths]
    poller = ProcessPoller()
    poller.start()
    start, busy = time.perf_counter(), busy_seconds()
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as run:
        stdout, stderr = run.communicate()
    proc = subprocess.CompletedProcess(command, run.returncode, stdout, stderr)
    wall, cpu = time.perf_counter() - start, busy_seconds() - busy
    poller.stopped.set()
    poller.join()
    print(proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:])
    cores = os.cpu_count() or 1
    print(f"wall {wall:.0f} s, the machine busy {cpu:.0f} CPU s on {cores} cores: the cores were busy "
          f"{cpu / (wall * cores):.0%} of the time; {args.workers} workers")
    kinds = poller.by_kind(run.pid)
    print(f"\n{'CPU seconds':>18}  {'procs':>5}  the run's processes, by kind")
    for name, (n, value) in sorted(kinds.items(), key=lambda kv: -kv[1][1])[:args.top]:
        print(f"{value:18.0f}  {n:5d}  {name}")
    print(f"{sum(v for _, v in kinds.values()):18.0f}  {sum(n for n, _ in kinds.values()):5d}  in all")
    tests = poller.by_test()
    print(f"\n{'CPU seconds':>18}  {'procs':>5}  the processes each test started (kernels, commands), by test")
    for name, (n, value) in sorted(tests.items(), key=lambda kv: -kv[1][1])[:args.top]:
        print(f"{value:18.0f}  {n:5d}  {name}")
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
