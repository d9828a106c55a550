"""Start a command with limits on memory, processes and CPU time (the sandbox's outer launcher).

    python -m tinylm_grading.limits --memory-mb 4096 --processes 128 --cpu-seconds 1800 [--cgroup NAME] [--uid UID]
        [--seccomp FILE] -- CMD...

Runs as the grader (trusted), before the sandbox exists: it puts itself in fresh cgroups when it may
(a ``pids`` and a ``memory`` cgroup, cgroup v1 or v2: a root grader), sets resource limits
(``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_FSIZE``, and ``RLIMIT_NPROC`` when no pids cgroup holds the
process count), then replaces itself with ``CMD`` (bubblewrap), so that every process of the
sandbox inherits them. Limits are per process (``RLIMIT_*``) or for the whole sandbox (cgroups).
:func:`remove_cgroups` deletes the cgroups once the sandbox has ended.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

CGROUP_ROOTS = {  # controller -> (cgroup v1 mount, v2 mount): the first that accepts a child with the limit file
    "pids": (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")),
    "memory": (Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup")),
}
LIMIT_FILES = {"pids": ("pids.max", "pids.max"), "memory": ("memory.limit_in_bytes", "memory.max")}
CPU_GRACE = 5  # seconds of CPU between SIGXCPU (the soft limit) and SIGKILL (the hard one)


def _cgroup_dir(controller: str, name: str) -> tuple[Path, str] | None:
    """Create the cgroup ``name`` under ``controller``; return it and its limit file, or None if we may not."""
    for root in CGROUP_ROOTS[controller]:
        if not (root / "cgroup.procs").is_file():
            continue
        try:
            (root / name).mkdir(exist_ok=True)
        except OSError:
            continue
        for limit in LIMIT_FILES[controller]:  # v1's name, then v2's (present only if the controller is enabled)
            if (root / name / limit).is_file():
                return root / name, limit
        _rmdir(root / name)
    return None


def join_cgroups(name: str, memory_mb: int, processes: int) -> set[str]:
    """Move this process into new cgroups ``name`` with those limits; return the controllers that hold."""
    held = set()
    for controller, value in (("pids", processes), ("memory", memory_mb * 2**20)):
        found = _cgroup_dir(controller, name)
        if found is None:
            continue
        folder, limit = found
        try:
            (folder / limit).write_text(str(value), encoding="utf-8")
            (folder / "cgroup.procs").write_text(str(os.getpid()), encoding="utf-8")
        except OSError:
            continue
        held.add(controller)
    return held


def remove_cgroups(name: str, wait: float = 5.0) -> None:
    """Delete the cgroups called ``name``, waiting up to ``wait`` seconds for their last processes to end
    (a kernel just killed may still be exiting)."""
    deadline = time.monotonic() + wait
    for roots in CGROUP_ROOTS.values():
        for root in roots:
            folder = root / name
            while folder.is_dir() and _has_processes(folder) and time.monotonic() < deadline:
                time.sleep(0.05)
            _rmdir(folder)


def _has_processes(folder: Path) -> bool:
    try:
        return bool((folder / "cgroup.procs").read_text(encoding="utf-8").strip())
    except OSError:
        return False


def _rmdir(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def set_limits(memory_mb: int, processes: int, cpu_seconds: int, count_processes: bool,
               uid: int | None = None) -> None:
    """Per-process limits, inherited by everything the command starts. ``RLIMIT_NPROC`` counts the processes of
    the user the command runs as: ``uid`` (the unprivileged uid a root grader's sandbox becomes), else this one."""
    limits = [(resource.RLIMIT_AS, memory_mb * 2**20), (resource.RLIMIT_CPU, cpu_seconds),
              (resource.RLIMIT_FSIZE, memory_mb * 2**20)]
    if count_processes:  # counts all of that user's processes: leave room for the ones already running
        owner = os.getuid() if uid is None else uid
        mine = sum(1 for p in Path("/proc").iterdir() if p.name.isdigit() and _owner(p) == owner)
        limits.append((resource.RLIMIT_NPROC, mine + processes))
    for kind, value in limits:
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        # CPU time: SIGXCPU at the soft limit, which a check names as a time limit; SIGKILL 5 s later, at the hard one
        # (alone it could not be told from an out-of-memory kill)
        over = CPU_GRACE if kind == resource.RLIMIT_CPU and (hard == resource.RLIM_INFINITY or value + CPU_GRACE <= hard) \
            else 0
        resource.setrlimit(kind, (value, value + over))


def _owner(p: Path) -> int | None:
    try:
        return p.stat().st_uid
    except OSError:
        return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tinylm_grading.limits", description=__doc__.splitlines()[0])
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--processes", type=int, required=True)
    parser.add_argument("--cpu-seconds", type=int, required=True)
    parser.add_argument("--cgroup", default=None, help="name of the cgroups to create and join")
    parser.add_argument("--seccomp", default=None, help="a file holding a seccomp program: passed to CMD, bubblewrap, "
                                                        "as --seccomp FD")
    parser.add_argument("--uid", type=int, default=None, help="the uid the command becomes (RLIMIT_NPROC counts its "
                                                              "processes)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    held = join_cgroups(args.cgroup, args.memory_mb, args.processes) if args.cgroup else set()
    set_limits(args.memory_mb, args.processes, args.cpu_seconds, count_processes="pids" not in held, uid=args.uid)
    if args.seccomp:  # bubblewrap reads the program from a descriptor it inherits
        fd = os.open(args.seccomp, os.O_RDONLY)
        os.set_inheritable(fd, True)
        command = [command[0], "--seccomp", str(fd), *command[1:]]
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
