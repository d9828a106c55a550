"""Where the capstone's grading time goes: its checks' commands, each in a sandbox of its own.

    .venv/bin/python benchmarks/bench_capstone.py [--record benchmarks/results/grading_capstone.json]

The grader runs each capstone check twice (at seed 0, the learner's visible check, and at the hidden check's seed),
and every command of a check in a sandbox of its own (:class:`tinylm_grading.workspace.SandboxWorkspace`): a root
grader forks it from a process that imported PyTorch once (:mod:`tinylm_grading.forkbox`); with ``--bubblewrap``, or
a grader that is not root, it is bubblewrap and a new Python, which imports PyTorch again. This prints, on the
reference repository:

- what a sandboxed command costs before its own work: an empty one, one that imports PyTorch, one that imports
  PyTorch and pytest (the median of 5 each);
- for each check the grader runs, at both seeds: its commands, their seconds summed, and the check's wall seconds
  (a check runs up to ``tinylm_checks.capstone.WORKERS`` commands at once);
- the total, and how much of it is the commands' PyTorch imports (their number times the median import).

Run as root it is the grader's sandbox as an instructor runs it (each command as a uid of its own). Timings depend on
the machine and its load: run it on a quiet one. Asserts nothing. ``--record FILE`` keeps the run in FILE (JSON) under
``--label`` (default: the commit), beside the runs kept there.
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
sys.path.insert(0, str(ROOT))

from tinylm_checks import capstone  # noqa: E402
from tinylm_grading import registry, workspace  # noqa: E402
from tinylm_solutions.capstone import repo  # noqa: E402

TIMES: list[float] = []
"""Each command's wall seconds, as a workspace's ``run`` appends them (:class:`Timed`, or another design's)."""


class Timed(workspace.SandboxWorkspace):
    """The grader's workspace, each command's wall seconds kept in :data:`TIMES`."""

    def run(self, args, timeout=capstone.TIMEOUT):
        start = time.perf_counter()
        try:
            return super().run(args, timeout)
        finally:
            TIMES.append(time.perf_counter() - start)


def bare(code: str, n: int = 5) -> float:
    """The median wall seconds of ``python -c code``'s file run as a check's command is (``_check_run.py``)."""
    seconds = []
    for _ in range(n):
        with Timed({"probe.py": code, "_check_run.py": capstone.LAUNCHER}) as ws:
            start = time.perf_counter()
            code_, output = ws.run(["_check_run.py", str(capstone.CPU_SECONDS), "probe.py"])
            seconds.append(time.perf_counter() - start)
            if code_ != 0:
                sys.exit(f"the sandboxed command {code!r} failed ({code_}):\n{output[-1500:]}")
    TIMES.clear()
    return statistics.median(seconds)


def time_checks(how: str) -> dict[str, dict]:
    """Run every capstone check the grader runs on the reference repository, at both of its seeds, with the commands
    in ``capstone.WORKSPACE`` (whose ``run`` appends each command's seconds to :data:`TIMES`); print a row per check and
    seed, and return them: ``{"check_x seed N": {"commands", "command_s", "wall_s"}}``."""
    files = repo()
    print(f"\nThe capstone's checks on the reference repository, {how} ({capstone.WORKERS} commands at once)")
    print(f"| {'check':<26} | {'seed':>4} | {'commands':>8} | {'command s':>9} | {'wall s':>6} |")
    checks = {}
    for e in [e for e in registry.EXERCISES if e.stage == "13_capstone" and e.check]:
        for seed in (0, e.hidden_seed):
            TIMES.clear()
            start = time.perf_counter()
            getattr(capstone, e.check)(lambda: files, seed=seed, quiet=True)
            wall = time.perf_counter() - start
            print(f"| {e.check:<26} | {seed:>4} | {len(TIMES):8d} | {sum(TIMES):9.1f} | {wall:6.1f} |", flush=True)
            checks[f"{e.check} seed {seed}"] = {"commands": len(TIMES), "command_s": round(sum(TIMES), 1),
                                               "wall_s": round(wall, 1)}
    print(f"| {'all':<26} | {'':>4} | {sum(c['commands'] for c in checks.values()):8d} | "
          f"{sum(c['command_s'] for c in checks.values()):9.1f} | {sum(c['wall_s'] for c in checks.values()):6.1f} |")
    return checks


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--record", type=Path, help="keep the run in this JSON file, beside the runs there")
    p.add_argument("--label", help="the run's name in --record's file (default: the commit, from git describe)")
    p.add_argument("--bubblewrap", action="store_true",
                   help="each command in bubblewrap and a new Python, as a grader that is not root runs them (a root "
                        "grader forks them from a process that imported PyTorch once: tinylm_grading.forkbox)")
    a = p.parse_args()
    workspace.install()
    capstone.WORKSPACE = Timed
    if a.bubblewrap:
        Timed.MANAGER = type("Bubblewrap", (workspace.SandboxKernelManager,), {"fork_commands": False})
    forked = os.geteuid() == 0 and not a.bubblewrap
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
          + ("as root: each command forked into a sandbox of its own, as a uid of its own" if forked else
             "each command in bubblewrap and a new Python" + (", as a uid of its own" if os.geteuid() == 0 else "")))
    print("\nA sandboxed command before its own work (median of 5)")
    print(f"| {'command':<30} | {'s':>6} |")
    costs = {}
    for name, code in (("empty", "pass"), ("import torch", "import torch"),
                       ("import torch, pytest", "import torch, pytest")):
        costs[name] = bare(code)
        print(f"| {name:<30} | {costs[name]:6.2f} |", flush=True)

    checks = time_checks("as the grader runs them")
    total_n, total_s = sum(c["commands"] for c in checks.values()), sum(c["command_s"] for c in checks.values())
    total_wall = sum(c["wall_s"] for c in checks.values())
    imports = total_n * costs["import torch"]
    print(f"\nPyTorch imported {total_n} times: {imports:.1f} s ({total_n} x {costs['import torch']:.2f} s), "
          f"{imports / total_s:.0%} of the commands' {total_s:.1f} s" if not forked else
          f"\nPyTorch imported once, by the process the {total_n} commands are forked from ({total_s:.1f} s of commands)")
    if a.record:
        label = a.label or subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                                          text=True).stdout.strip()
        kept = json.loads(a.record.read_text(encoding="utf-8")) if a.record.is_file() else {"runs": {}}
        kept["runs"][label] = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), "workers": capstone.WORKERS,
                               "sandbox": "forked" if forked else "bubblewrap",
                               "command_s": {k: round(v, 2) for k, v in costs.items()}, "checks": checks,
                               "commands": total_n, "commands_s": round(total_s, 1), "wall_s": round(total_wall, 1)}
        a.record.write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")
        print(f"\nThe runs kept in {a.record}, side by side:")
        print(f"| {'run':<40} | {'sandbox':<10} | {'commands':>8} | {'command s':>9} | {'wall s':>6} | {'import torch s':>14} |")
        for name, run in kept["runs"].items():
            print(f"| {name[:40]:<40} | {run.get('sandbox', 'bubblewrap'):<10} | {run['commands']:8d} | "
                  f"{run['commands_s']:9.1f} | {run['wall_s']:6.1f} | {run['command_s']['import torch']:14.2f} |")


if __name__ == "__main__":
    main()
