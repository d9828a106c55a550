"""What a capstone command could cost: a sandbox entered by a forked child of a process that imported PyTorch once,
against the grader's (bubblewrap, a new Python per command). A design prototype for issue 42, item 1; grading does
not use it.

    sudo .venv/bin/python benchmarks/bench_forked_sandbox.py [--commands 20] [--capstone]

The grader runs each of a capstone's commands in a sandbox of its own, which imports PyTorch again: about 1 s of
each command (``benchmarks/bench_capstone.py``). A sandbox shared by a submission's commands was tried and taken
back: a command could pass what it saw to the next through kernel state no sweep resets (the PID counter, TCP
TIME_WAIT, an abstract socket, tmpfs inode numbers, the server's own /proc entry). This prototype keeps one fresh
sandbox per command and moves only the import: the preloaded process (trusted code: PyTorch, pytest, nothing of the
course's answers) forks; the child, still root, makes new mount, PID, network, IPC and UTS namespaces, forks again
(PID 1 of the new namespace), builds a root of read-only binds with a writable work folder, a fresh /tmp, /dev/shm
and /proc, pivots into it, drops the capability bounding set, becomes an unprivileged uid (every capability gone),
sets no_new_privs and the course's seccomp filter (``tinylm_grading.seccomp``), and runs the command in the Python
it already has. It prints what a command sees from inside (its uid, its PID, the processes it can see, the network,
its capabilities) and that a file or a process counter one command leaves is not there for the next, then the
seconds per command of both designs. ``--capstone`` then runs the capstone's checks on the reference repository as
the grader does (both seeds), each command forked so: compare with ``benchmarks/bench_capstone.py``.

What it leaves out, which the grader's sandbox has: the stage's answers hidden by stubs, cgroup limits (memory,
processes), the course's own launcher and CPU limit, a non-root grader (user namespaces). Linux, as root only.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x4000000, 0x8000000, 0x20000000, \
    0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, \
    1 << 18
LOCKED = {os.ST_NOSUID: MS_NOSUID, os.ST_NODEV: MS_NODEV, os.ST_NOEXEC: MS_NOEXEC}
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 24, 38, 22, 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
UID = 60123


def ok(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: s.encode() if s else None  # noqa: E731
    ok(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def enter(new: str, work: str, shown: list[str], seccomp: bytes | None) -> None:
    """In a forked child of the preloaded process: become PID 1 of a sandbox of its own (see the module docstring)."""
    import platform
    ok(libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    child = os.fork()
    if child:  # the namespace's PID 1 is the child: this one waits and passes its status on
        _, status = os.waitpid(child, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for path in shown:
        target = new + path
        if os.path.isdir(path):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            Path(target).touch()
        mount(path, target, None, MS_BIND | MS_REC)
        locked = sum(flag for bit, flag in LOCKED.items() if os.statvfs(target).f_flag & bit)
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | locked)
    for name in ("bin", "sbin"):
        if os.path.islink("/" + name):
            os.symlink(os.readlink("/" + name), f"{new}/{name}")
    for folder in ("/dev", "/tmp", "/dev/shm", "/proc", "/box", "/oldroot"):
        os.makedirs(new + folder, exist_ok=True)
    for device in ("null", "zero", "urandom", "random", "full"):
        Path(f"{new}/dev/{device}").touch()
        mount(f"/dev/{device}", f"{new}/dev/{device}", None, MS_BIND)
    mount(work, new + "/box", None, MS_BIND | MS_NOSUID | MS_NODEV)
    for folder in ("/tmp", "/dev/shm"):
        mount("tmpfs", new + folder, "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
    mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # this PID namespace's processes only
    ok(libc.syscall(SYS_PIVOT_ROOT[platform.machine()], new.encode(), f"{new}/oldroot".encode()), "pivot_root")
    os.chdir("/")
    ok(libc.umount2(b"/oldroot", 2), "umount the old root")  # MNT_DETACH
    os.rmdir("/oldroot")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir("/box")
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22:
            break
    os.setgroups([])
    os.setresgid(UID, UID, UID)
    os.setresuid(UID, UID, UID)  # every uid non-zero: the permitted and effective capabilities go
    ok(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if seccomp:
        program = ctypes.create_string_buffer(seccomp)
        ok(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(SockFprog(len(seccomp) // 8,
                                                                               ctypes.addressof(program))), 0, 0),
           "seccomp")


def forked(code: str, work: str, shown: list[str], seccomp: bytes | None) -> tuple[int, str, float]:
    """``code`` run in a new sandbox by a forked child: (exit status, what it printed, wall seconds)."""
    read, write = os.pipe()
    start = time.perf_counter()
    new = tempfile.mkdtemp(prefix="tinylm-root-")  # the sandbox's root mounts here, in its own mount namespace
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.dup2(write, 1)
            os.dup2(write, 2)
            enter(new, work, shown, seccomp)
            exec(compile(code, "command.py", "exec"), {"__name__": "__main__"})
            sys.stdout.flush()
            os._exit(0)
        except SystemExit as e:  # sys.exit(n), as python's own exit status
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(e.code if isinstance(e.code, int) else 0 if e.code is None else 1)
        except BaseException as e:  # noqa: BLE001 - the command's failure, as its output
            os.write(2, f"{type(e).__name__}: {e}\n".encode())
            os._exit(1)
    os.close(write)
    out = b""
    while chunk := os.read(read, 65536):
        out += chunk
    os.close(read)
    _, status = os.waitpid(pid, 0)
    os.rmdir(new)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace"), time.perf_counter() - start


PROBE = """import os, socket, subprocess, sys
print("uid", os.getuid(), "| pid", os.getpid(), "| processes seen", [p for p in os.listdir("/proc") if p.isdigit()])
print("a child's pid", subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
      capture_output=True, text=True).stdout.strip(), "| /tmp holds", os.listdir("/tmp"))
open("/tmp/left-behind", "w").write("x")
try:
    socket.create_connection(("10.0.0.1", 80), timeout=1)
except OSError as e:
    print("network:", e.strerror)
print([line.strip() for line in open("/proc/self/status") if line.startswith(("CapEff", "CapBnd", "NoNewPrivs",
                                                                            "Seccomp:"))])
"""
def capstone_checks(shown: list[str], seccomp: bytes | None) -> None:
    """The capstone's checks on the reference repository at both of the grader's seeds, their commands run by
    :func:`forked` (the workspace's folder as the command's), printed as ``benchmarks/bench_capstone.py`` prints the
    grader's."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_capstone
    from tinylm_checks import capstone

    class Forked(capstone.Workspace):
        def run(self, args, timeout=capstone.TIMEOUT):
            for path in [self.path, *self.path.rglob("*")]:
                os.chown(path, UID, UID)
            code = (f"import os, runpy, sys, torch\ntorch.set_num_threads(1)\nos.environ.update({capstone.THREADS!r})\n"
                    f"sys.argv = {list(args)!r}\nsys.path.insert(0, '/box')\n"
                    "runpy.run_path('/box/_check_run.py', run_name='__main__')\n")
            status, out, seconds = forked(code, str(self.path), shown, seccomp)
            bench_capstone.TIMES.append(seconds)
            return status, out

    capstone.WORKSPACE = Forked
    bench_capstone.time_checks("each command forked into its own sandbox")


WORK = "import torch\nx = torch.nn.Linear(64, 64)(torch.randn(16, 64)).sum()\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=20)
    p.add_argument("--capstone", action="store_true", help="also run the capstone's checks with forked commands")
    a = p.parse_args()
    if sys.platform != "linux" or os.geteuid() != 0:
        sys.exit("bench_forked_sandbox.py: Linux and root only (it builds namespaces with root's privileges)")
    start = time.perf_counter()
    import pytest  # noqa: F401 - the preloaded process's imports: what every command would import again
    import torch  # noqa: F401
    sys.path.insert(0, str(ROOT))
    from tinylm_grading.seccomp import program
    seccomp = program()
    print(f"the preloaded process's imports: {time.perf_counter() - start:.2f} s "
          f"({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})")
    shown = [p for p in ("/usr", "/lib", "/lib64", "/etc/ld.so.cache", sys.base_prefix, sys.prefix, str(ROOT))
             if os.path.exists(p)]
    with tempfile.TemporaryDirectory(prefix="tinylm-forked-") as work:
        os.chown(work, UID, UID)
        print("\nTwo commands, one after the other, as each sees its sandbox:")
        for _ in range(2):
            code, out, _ = forked(PROBE, work, shown, seccomp)
            print(f"  exit {code}: " + out.strip().replace("\n", "\n           "))
        times = []
        for _ in range(a.commands):
            code, out, seconds = forked(WORK, work, shown, seccomp)
            if code != 0:
                sys.exit(f"a command failed: {out}")
            times.append(seconds)
    from tinylm_checks import capstone
    from tinylm_grading import workspace
    bwrap = []
    with workspace.SandboxWorkspace({"command.py": WORK, "_check_run.py": capstone.LAUNCHER}) as ws:
        for _ in range(min(a.commands, 10)):
            t = time.perf_counter()
            code, out = ws.run(["_check_run.py", str(capstone.CPU_SECONDS), "command.py"])
            bwrap.append(time.perf_counter() - t)
            if code != 0:
                sys.exit(f"a command failed in the grader's sandbox: {out}")
    print(f"\nA command that imports PyTorch and runs a small layer (median of {a.commands}; the grader's: of "
          f"{len(bwrap)}):")
    print(f"| {'sandbox':<52} | {'s':>6} |")
    print(f"| {'forked from the preloaded process (this prototype)':<52} | {statistics.median(times):6.3f} |")
    theirs = "the grader's: bubblewrap, a new Python"
    print(f"| {theirs:<52} | {statistics.median(bwrap):6.3f} |")
    if a.capstone:
        capstone_checks(shown, seccomp)


if __name__ == "__main__":
    main()
