"""A sandbox of its own for each capstone command, entered by a child forked from a process that imported PyTorch.

A root grader runs the capstone's commands (:mod:`tinylm_grading.workspace`) as children of a forkserver
(:class:`tinylm_checks._forked.Forkserver`: trusted code that imports PyTorch and pytest once, nothing of the course).
Before the command runs, the child calls :func:`enter`, which builds the sandbox that bubblewrap's arguments describe
(:meth:`~tinylm_grading.sandbox.SandboxKernelManager.bwrap_args`, the one description of what a sandbox shows,
hides and limits) with the same system calls bubblewrap makes:

1. still root, in the host's namespaces: the command's cgroups and per-process limits (:mod:`tinylm_grading.limits`),
   then new mount, PID, network, IPC, UTS and cgroup namespaces (those the arguments' ``--unshare-*`` ask for);
2. a fork: the new PID namespace's init (PID 1), whose parent waits for it and exits with its status. The init mounts
   the sandbox's root (a tmpfs), everything the arguments bind, the tmpfs folders and ``/proc``; pivots into it;
   detaches the host's root; brings the loopback up; drops the capability bounding set and every uid and gid to the
   sandbox's unprivileged one (every capability gone); asks for SIGKILL when its parent dies; sets no_new_privs and
   the course's seccomp filter (:mod:`tinylm_grading.seccomp`); closes every descriptor but 0-2;
3. a second fork: the command, PID 2, as bubblewrap's. The init reaps what the command's orphans leave and exits with
   the command's status as bubblewrap does (128 + the signal that ended it); the kernel then ends every process left
   in the namespace.

Every command has new namespaces, a new ``/tmp``, ``/dev/shm`` and ``/proc``: nothing one leaves (a process, a socket,
a file outside its workspace, a counter of its namespaces) is there for the next. What one command writes in the
workspace's folder the next sees, as with bubblewrap (the checks' commands share a folder by design).

Standard library only: the forkserver imports this module beside PyTorch, and nothing of the course's answers or
checks may be in its memory (a command could read it). Linux, as root (the grader's other users run bubblewrap).
"""
from __future__ import annotations

import ctypes
import os
import platform
import re
import signal
import socket
import struct
import sys

CLONE = {"--unshare-pid": 0x20000000, "--unshare-net": 0x40000000, "--unshare-ipc": 0x08000000,
         "--unshare-uts": 0x04000000, "--unshare-cgroup-try": 0x02000000, "--unshare-cgroup": 0x02000000}
CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = \
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 24, 38, 22, 2
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
"""What bubblewrap's ``--dev`` binds from the host's ``/dev``."""
DEV_LINKS = {"stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
             "fd": "/proc/self/fd", "core": "/proc/kcore", "ptmx": "pts/ptmx"}
IGNORED = {"--die-with-parent": 0, "--new-session": 0, "--cap-drop": 1, "--cap-add": 1, "--clearenv": 0,
           "--setenv": 2, "--chdir": 1}
"""bubblewrap's options that build no mount: the environment and the working folder are the command's (its request),
the session is the forked child's own (``setsid``), and no capability is kept (the uid is dropped)."""
NEW_ROOT = ".root"
"""The folder, in the command's scratch folder, where the sandbox's root is mounted (in its own mount namespace: the
host sees an empty folder)."""

libc = ctypes.CDLL(None, use_errno=True)


class SandboxError(OSError):
    """A step of building the sandbox failed: the command does not run."""


def _ok(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise SandboxError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _ok(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def options(args: list[str]) -> dict:
    """What bubblewrap's ``args`` ask for beside mounts: the namespaces' clone flags, the working folder, the
    environment (``--clearenv`` then each ``--setenv``), as ``{"clone": int, "chdir": str, "env": dict}``.

    Raises:
        ValueError: an option this module does not build (it fails closed).
    """
    out, i = {"clone": CLONE_NEWNS, "chdir": "/", "env": {}}, 0
    while i < len(args):
        option = args[i]
        if option in CLONE:
            out["clone"] |= CLONE[option]
        elif option == "--chdir":
            out["chdir"] = args[i + 1]
        elif option == "--clearenv":
            out["env"] = {}
        elif option == "--setenv":
            out["env"][args[i + 1]] = args[i + 2]
        elif option not in MOUNTS and option not in IGNORED:
            raise ValueError(f"forkbox: bubblewrap's option {option} is not built here")
        i += 1 + (MOUNTS.get(option) or IGNORED.get(option) or 0)
    return out


MOUNTS = {"--dev": 1, "--proc": 1, "--tmpfs": 1, "--dir": 1, "--symlink": 2, "--bind": 2, "--ro-bind": 2,
          "--bind-try": 2, "--ro-bind-try": 2, "--remount-ro": 1, "--perms": 1, "--size": 1}


def _flags(path: str) -> int:
    """The flags a bind remount of ``path`` must keep: noexec, where the mount it comes from has it."""
    return MS_NOEXEC if os.statvfs(path).f_flag & os.ST_NOEXEC else 0


def _mounts_under(path: str) -> list[str]:
    """The mount points at ``path`` and below it (this mount namespace's ``/proc/self/mountinfo``), outermost first."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line.split()[4])  # \040: a space
            if point == path or point.startswith(path.rstrip("/") + "/"):
                found.append(point)
    return sorted(set(found), key=len)


def _bind(source: str, target: str, readonly: bool) -> None:
    """bubblewrap's ``--bind``/``--ro-bind``: recursive, every mount in it nosuid and nodev (and read-only)."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.lexists(target):
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o444))
    _mount(source, target, None, MS_BIND | MS_REC)
    for point in _mounts_under(target):
        _mount(None, point, None, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | (MS_RDONLY if readonly else 0)
               | _flags(point))


def _tmpfs(target: str, mode: int, size: str | None) -> None:
    """bubblewrap's ``--tmpfs``; with a size, also at most one file per 4 KiB of it (a red-teamer's command made 3
    million empty files in its /tmp, whose removal at its end took seconds)."""
    os.makedirs(target, exist_ok=True)
    limits = f",size={size},nr_inodes={max(1024, int(size) // 4096)}" if size else ""
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode:o}{limits}")


def _dev(new: str, target: str) -> None:
    """bubblewrap's ``--dev``: a tmpfs with the harmless devices bound from the host's, and the usual links."""
    root = new + target
    os.makedirs(root, exist_ok=True)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID, "mode=0755")
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            os.close(os.open(f"{root}/{name}", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o444))
            _mount(f"/dev/{name}", f"{root}/{name}", None, MS_BIND)
            _mount(None, f"{root}/{name}", None, MS_BIND | MS_REMOUNT | MS_NOSUID)
    for name, points_to in DEV_LINKS.items():
        os.symlink(points_to, f"{root}/{name}")
    for name in ("shm", "pts"):
        os.mkdir(f"{root}/{name}", 0o755)
    try:
        _mount("devpts", f"{root}/pts", "devpts", MS_NOSUID | MS_NOEXEC,
               "newinstance,ptmxmode=0666,mode=620,max=8")  # the machine's terminals are shared by every sandbox
    except SandboxError:
        pass  # no pseudo-terminals: nothing the course runs needs one


def build(new: str, args: list[str]) -> list[str]:
    """Mount, below ``new`` (a folder, in a mount namespace of this process's own), what bubblewrap's ``args`` mount,
    in their order; sources are the host's paths. Returns the paths to remount read-only after the pivot (``/``)."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing below propagates to the host
    os.makedirs(new, mode=0o700, exist_ok=True)
    _mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    perms, size, later, i = None, None, [], 0
    while i < len(args):
        option = args[i]
        operands = args[i + 1:i + 1 + (MOUNTS.get(option) or IGNORED.get(option) or 0)]
        i += 1 + len(operands)
        if option == "--perms":
            perms = int(operands[0], 8)
            continue
        if option == "--size":
            size = operands[0]
            continue
        if option == "--dev":
            _dev(new, operands[0])
        elif option == "--proc":
            os.makedirs(new + operands[0], exist_ok=True)
            _mount("proc", new + operands[0], "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        elif option == "--tmpfs":
            _tmpfs(new + operands[0], 0o755 if perms is None else perms, size)
        elif option == "--dir":
            os.makedirs(new + operands[0], exist_ok=True)
            os.chmod(new + operands[0], 0o755 if perms is None else perms)
        elif option == "--symlink":
            os.symlink(operands[0], new + operands[1])
        elif option in ("--bind", "--ro-bind", "--bind-try", "--ro-bind-try"):
            if not (option.endswith("-try") and not os.path.exists(operands[0])):
                _bind(operands[0], new + operands[1], readonly=option.startswith("--ro"))
        elif option == "--remount-ro":
            if operands[0] == "/":
                later.append("/")
            else:
                target = new + operands[0]
                _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | _flags(target))
        perms, size = None, None
    return later


def mount_tmpfs(path: str, size_mb: int, inodes: int) -> bool:
    """Mount a tmpfs of ``size_mb`` MiB and ``inodes`` files at the folder ``path`` (mode 0700), in this process's
    mount namespace (the host's, for the grader); False where this process may not mount."""
    try:
        _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,nr_inodes={inodes},mode=0700")
    except SandboxError:
        return False
    return True


def unmount_under(path: str) -> None:
    """Detach every mount at ``path`` and below it (innermost first), as :func:`mount_tmpfs` made them."""
    for point in reversed(_mounts_under(os.path.realpath(path))):
        libc.umount2(point.encode(), MNT_DETACH)


def _loopback_up() -> None:
    """The network namespace's ``lo`` up, as bubblewrap leaves it (SIOCGIFFLAGS, then SIOCSIFFLAGS with IFF_UP)."""
    import fcntl
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, 0x8913, request))[1]
        fcntl.ioctl(s, 0x8914, struct.pack("16sH14x", b"lo", flags | 0x1))


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _drop(uid: int, parent_fd: int, seccomp: bytes | None) -> None:
    """Give up root for good: the bounding set, the groups, every uid and gid; SIGKILL when the parent (outside the
    namespace) dies; no_new_privs and the seccomp filter. Checks that no capability is left."""
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22:
            break
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    with open("/proc/self/status", encoding="ascii") as f:
        status = dict(line.split(":", 1) for line in f)
    if os.getresuid() != (uid,) * 3 or os.getresgid() != (uid,) * 3 or os.getgroups() or \
            any(int(status[k], 16) for k in ("CapPrm", "CapEff", "CapBnd", "CapAmb")):
        raise SandboxError(1, "privileges left after dropping them: not starting")
    _ok(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death signal")  # after the uid change (it resets it)
    import select
    if select.select([parent_fd], [], [], 0)[0]:  # the parent ended before the line above: end too
        os._exit(1)
    _ok(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if seccomp:
        program = ctypes.create_string_buffer(seccomp)
        _ok(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
                       ctypes.byref(_SockFprog(len(seccomp) // 8, ctypes.addressof(program))), 0, 0), "seccomp")


def _status(wait_status: int) -> int:
    """An exit status as bubblewrap gives it: the code, or 128 + the signal that ended the process."""
    return os.waitstatus_to_exitcode(wait_status) if os.WIFEXITED(wait_status) else 128 + os.WTERMSIG(wait_status)


def _init(command: int) -> None:
    """PID 1 of the sandbox: reap every process that ends until the command (``command``) does; exit with its status."""
    while True:
        try:
            pid, wait_status = os.wait()
        except ChildProcessError:
            os._exit(1)
        if pid == command:
            os._exit(_status(wait_status))


def enter(spec: dict) -> None:
    """In a child just forked by the forkserver (its descriptors 0-2 already the command's): build the sandbox
    ``spec`` describes and return in it, as PID 2, unprivileged, ready to run the command. ``spec``: ``args``
    (bubblewrap's arguments), ``uid``, ``scratch`` (a folder of the grader's, root-owned, for the new root),
    ``cgroup`` (a name), ``memory_mb``, ``processes``, ``cpu_seconds``, ``seccomp`` (a file holding the program, or
    None). Never returns in the processes that wait (they exit with the command's status). Any failure ends this
    process with exit status 125 and one line on its output, before the command runs.
    """
    try:
        _enter(spec)
    except Exception as e:  # noqa: BLE001 - the sandbox could not be built: the command must not run
        detail = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        os.write(2, f"sandbox: {detail}\n".encode())
        os._exit(125)


def _enter(spec: dict) -> None:
    from .limits import join_cgroups, set_limits
    args, uid = spec["args"], int(spec["uid"])
    if uid <= 0:
        raise SandboxError(1, "the sandbox's uid must be an unprivileged one")
    wanted = options(args)
    seccomp = open(spec["seccomp"], "rb").read() if spec.get("seccomp") else None  # noqa: SIM115 - read once
    held = join_cgroups(spec["cgroup"], spec["memory_mb"], spec["processes"]) if spec.get("cgroup") else set()
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # nothing ever dumps core from here (as root: in "/")
    set_limits(spec["memory_mb"], spec["processes"], spec["cpu_seconds"], count_processes="pids" not in held, uid=uid)
    parent_fd = os.pidfd_open(os.getpid())  # for the init: whether this process has ended
    _ok(libc.unshare(wanted["clone"]), "unshare")
    init = os.fork()
    if init:  # outside the namespace: wait for its init, exit with its status
        os.close(parent_fd)
        _, wait_status = os.waitpid(init, 0)
        os._exit(_status(wait_status))
    new = os.path.join(spec["scratch"], NEW_ROOT)
    later = build(new, args)
    if wanted["clone"] & CLONE["--unshare-net"]:
        _loopback_up()
    os.makedirs(new + "/.oldroot")
    _ok(libc.syscall(PIVOT_ROOT[platform.machine()], new.encode(), f"{new}/.oldroot".encode()), "pivot_root")
    os.chdir("/")
    _ok(libc.umount2(b"/.oldroot", MNT_DETACH), "detach the host's root")
    os.rmdir("/.oldroot")
    for path in later:
        _mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(wanted["chdir"])
    _drop(uid, parent_fd, seccomp)
    os.closerange(3, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)
    command = os.fork()
    if command:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the init only waits
        _init(command)


def is_usable() -> bool:
    """Whether this process may build such sandboxes: Linux, root, an architecture :data:`PIVOT_ROOT` knows."""
    return sys.platform == "linux" and os.geteuid() == 0 and platform.machine() in PIVOT_ROOT and \
        hasattr(os, "pidfd_open")
