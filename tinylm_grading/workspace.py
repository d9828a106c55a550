"""The capstone's commands, run by the grader in a sandbox of their own.

The capstone's checks (:mod:`tinylm_checks.capstone`) run a learner's repository: their tests with ``pytest``,
``train.py``, ``generate.py``, a probe script that imports ``model.py``. When the grader computes a verdict, that
code must not run in the grader's process nor see anything a kernel could not: :class:`SandboxWorkspace` runs
each command in the same sandbox as a graded kernel (:class:`~tinylm_grading.sandbox.SandboxKernelManager`'s
mounts, namespaces and limits, the stage's answers hidden: for the capstone, every stage's), with the workspace's
folder (on ``/dev/shm``: memory the sandbox's cgroup is charged for) as the only place it can write. A root grader
forks each command from a process that imported PyTorch once, and the child builds that sandbox itself
(:mod:`tinylm_grading.forkbox`: about 1 s less per command); otherwise it is bubblewrap and a new Python. What the
check reads back is data: an exit code, the end of the printed text, and files it loads with
``torch.load(weights_only=True)``.

:func:`install` makes it the checks' workspace; :mod:`tinylm_grading.verdicts` calls it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path

from tinylm_checks import _forked, capstone

from . import forkbox
from .limits import remove_cgroups
from .sandbox import SandboxKernelManager, remove_tree, walk_owned

STAGE = "13_capstone"
OUTPUT_BYTES = 64_000  # the most of a command's printed text the check reads
PRELOAD = (*_forked.PRELOAD, "tinylm_grading.forkbox")
"""What the root grader's server imports before it forks each command into its sandbox: the checks' own list (PyTorch,
pytest, PyYAML), and the code that builds the sandbox (standard library only)."""
_LOCK = threading.Lock()


class SandboxWorkspace(capstone.Workspace):
    """A :class:`~tinylm_checks.capstone.Workspace` whose commands run sandboxed (see the module docstring)."""

    MANAGER = SandboxKernelManager
    """The sandbox's maker: its mounts, namespaces, limits and the uid commands run as."""

    root: str | None = None
    """The folder new workspaces are made in; None: /dev/shm where it can be written. The check service gives each of
    its children a folder of its own here, and removes it however the child ended (killed at its deadline before
    ``__exit__`` could run, say)."""

    def _folder(self) -> Path:
        """``work/`` in a new scratch folder in :attr:`root` (the sandbox's scratch copies go beside it)."""
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        self.box = Path(tempfile.mkdtemp(prefix="tinylm-workspace-", dir=self.root or shm))
        if os.geteuid() == 0 and forkbox.is_usable():  # bounded: what all its commands leave, files and inodes
            manager = self.MANAGER(stage=STAGE)
            forkbox.mount_tmpfs(str(self.box), manager.workspace_mb, manager.workspace_inodes)
        (self.box / "work").mkdir()
        return self.box / "work"

    def __exit__(self, *exc):
        remove_tree(self.box)

    def _uid(self, manager: SandboxKernelManager) -> int | None:
        """The uid this workspace's commands run as (one for all of them, which owns the folder), or None when the
        grader is not root (see :meth:`SandboxKernelManager.learner_uid`)."""
        with _LOCK:  # a check's commands start from several threads at once
            if not hasattr(self, "uid"):
                uid = manager.learner_uid()
                if uid is not None:  # before any command runs here: the check's files, written by the grader
                    manager._check_readable()
                    walk_owned(self.path, lambda fd, st: os.fchown(fd, uid, uid))
                self.uid = uid
        return self.uid

    def run(self, args: list[str], timeout: float = capstone.TIMEOUT) -> tuple[int, str]:
        manager = self.MANAGER(stage=STAGE)
        if not manager.sandbox or os.environ.get("TINYLM_GRADING_SANDBOX", "").lower() in ("off", "0", "no"):
            return super().run(args, timeout)
        conn = self.box / "conn"
        conn.mkdir(exist_ok=True)
        scratch = self.box / f"scratch-{uuid.uuid4().hex[:8]}"
        scratch.mkdir()
        uid = self._uid(manager)
        bwrap = manager.bwrap_args(self.path, scratch, conn, uid, writable=True)
        at = bwrap.index("--clearenv") + 1
        bwrap[at:at] = [arg for name, value in capstone.THREADS.items() for arg in ("--setenv", name, value)]
        cgroup = f"tinylm-{uuid.uuid4().hex[:12]}"
        # the sandbox's own CPU limit, a backstop above the command's (the capstone's launcher sets 60 s): from the
        # command's full time, not one a deadline shortened, which would stop a command early and be named wrongly
        cpu_seconds = int(capstone.TIMEOUT) * 2
        try:
            if manager.forks(uid):
                return self._forked(manager, bwrap, args, uid, scratch, cgroup, cpu_seconds, timeout)
            command = manager.command(bwrap, [sys.executable, *args], cgroup, cpu_seconds, uid, scratch)
            # the output in a file the sandbox writes (in its memory cgroup), of which only the end is read: a command
            # that printed 3.7 GB took that much of the grader's memory when it was read whole (a red-teamer's)
            with open(scratch / "output", "wb") as out:
                try:
                    code = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                          timeout=timeout).returncode
                except subprocess.TimeoutExpired:
                    code = -9
            return code, _forked.read_tail(scratch / "output", OUTPUT_BYTES).decode("utf-8", "replace")
        finally:
            remove_cgroups(cgroup)
            remove_tree(scratch)

    def _forked(self, manager: SandboxKernelManager, bwrap: list[str], args: list[str], uid: int, scratch: Path,
                cgroup: str, cpu_seconds: int, timeout: float) -> tuple[int, str]:
        """The command forked from the grader's server, which imported PyTorch once, into a sandbox of its own built
        from the same arguments (:mod:`tinylm_grading.forkbox`)."""
        wanted = forkbox.options(bwrap)
        spec = manager.fork_spec(bwrap, uid, scratch, cgroup, cpu_seconds)
        return _forked.run([*args], Path(wanted["chdir"]), wanted["env"], timeout, PRELOAD, sandbox=spec,
                           tail=OUTPUT_BYTES)


def install() -> None:
    """Make the capstone's checks run their commands in :class:`SandboxWorkspace` (in this process)."""
    capstone.WORKSPACE = SandboxWorkspace
