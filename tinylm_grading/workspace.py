"""The capstone's commands, run by the grader in one sandbox per submission.

The capstone's checks (:mod:`tinylm_checks.capstone`) run a learner's repository: their tests with ``pytest``,
``train.py``, ``generate.py``, a probe script that imports ``model.py``. When the grader computes a verdict, that
code must not run in the grader's process nor see anything a kernel could not. A :class:`Sandbox` is one bubblewrap
sandbox (:class:`~tinylm_grading.sandbox.SandboxKernelManager`'s mounts, namespaces and limits, the stage's answers
hidden: for the capstone, every stage's) whose only long-lived process is a forkserver
(:mod:`tinylm_checks._forked`) that has imported PyTorch once; each command is a child forked from it. A command
used to be a sandbox of its own, importing PyTorch again: 23 commands of one learner's capstone spent about 35 s
doing that.

One command at a time, and none sees what the one before it did:

- a command runs in a folder of its own, ``work/<random>``, which the grader fills with a fresh copy of the
  workspace's files just before it starts (:attr:`SandboxWorkspace.path` holds them, outside the sandbox);
- when it ends (or reaches its time), the server kills every other process of the sandbox's PID namespace and reaps
  them (it is their subreaper: whatever a command starts stays its descendant), empties ``/tmp``, its home, and
  ``/dev/shm``, and removes the SysV IPC objects of the sandbox's IPC namespace; then it replies. The grader moves the
  command's folder out of the sandbox (:meth:`SandboxWorkspace.load` reads from there: data, with
  ``torch.load(weights_only=True)``), and empties the folders it shares with the sandbox;
- the server runs as the commands' uid but is not dumpable (``PR_SET_DUMPABLE``): a command can neither trace it nor
  open its descriptors or memory. It can kill or stop it: its own command then fails or reaches its time, and the
  grader ends that sandbox and starts a new one for the next command, as it does whenever the server's sweep was not
  complete.

Which commands share a sandbox: those run within :func:`one_sandbox` (the grader's notebook: every check of one
submission; the check service: one learner's check); outside it, each workspace's commands (a test's).

:func:`install` makes :class:`SandboxWorkspace` the checks' workspace; :mod:`tinylm_grading.verdicts` calls it.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import select
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from tinylm_checks import _forked, capstone

from .limits import remove_cgroups
from .sandbox import SandboxKernelManager, walk_owned

STAGE = "13_capstone"
OUTPUT_BYTES = 64_000  # the most of a command's printed text the check reads
GRACE = 30.0
"""Seconds past a command's own time the grader waits for the server's reply (its sweep included) before it ends the
sandbox: a server a command stopped (SIGSTOP) never answers."""
ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8", **capstone.THREADS}
"""The commands' environment, besides the sandbox's own: set when the server starts (its imports read the thread
settings), inherited by every command."""


class SandboxDied(RuntimeError):
    """The sandbox's server ended or stopped answering before a command's reply."""


class Sandbox:
    """One sandbox running commands one at a time (see the module docstring); started on the first command, again
    after :meth:`end`."""

    MANAGER = SandboxKernelManager

    def __init__(self, root: str | None = None, manager: type | None = None):
        self.root, self.lock, self.proc = root, threading.Lock(), None
        if manager is not None:
            self.MANAGER = manager
        self.started = 0  # how many times a server was started (a test reads it)

    # ---- starting and ending

    def _start(self) -> None:
        manager = self.MANAGER(stage=STAGE)
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        self.box = Path(tempfile.mkdtemp(prefix="tinylm-sandbox-", dir=self.root or SandboxWorkspace.root or shm))
        self.work, self.conn, scratch = self.box / "work", self.box / "conn", self.box / "scratch"
        for folder in (self.work, self.conn, scratch):
            folder.mkdir()
        self.work.chmod(0o755)  # the grader's: a command cannot rename its own folder, nor make the next one's
        self.uid = uid = manager.learner_uid()
        if uid is not None:
            manager._check_readable()
        bwrap = manager.bwrap_args(self.work, scratch, self.conn, uid, writable=True)
        at = bwrap.index("--clearenv") + 1
        bwrap[at:at] = [arg for name, value in ENV.items() for arg in ("--setenv", name, value)]
        self.cgroup = f"tinylm-{uuid.uuid4().hex[:12]}"
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        server = [sys.executable, "-c", _forked.SERVER, str(requests_r), str(replies_w), "--sandbox", *_forked.PRELOAD]
        # the sandbox's own CPU limit per process, a backstop above each command's (the launcher sets 60 s): the
        # server's imports count against it, and each command starts from zero
        command = manager.command(bwrap, server, self.cgroup, int(capstone.TIMEOUT) * 2, uid, scratch)
        try:
            with open(self.box / "stderr.log", "wb") as stderr:
                self.proc = subprocess.Popen(command, pass_fds=(requests_r, replies_w), stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=stderr)
        finally:
            os.close(requests_r)
            os.close(replies_w)
        self.requests, self.replies, self.pending, self.asked = requests_w, replies_r, b"", 0
        self.started += 1

    def end(self) -> None:
        """End the sandbox, everything in it, and remove its folder and cgroups (a new one starts for the next
        command)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for fd in (self.requests, self.replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        if proc.poll() is None:
            proc.kill()  # bubblewrap: the sandbox's init dies with it (--die-with-parent), and with it every process
        proc.wait()
        remove_cgroups(self.cgroup)
        shutil.rmtree(self.box, ignore_errors=True)

    close = end

    # ---- one command

    def run(self, files: Path, args: list[str], timeout: float, results: Path) -> tuple[int, str]:
        """``python *args`` in a fresh copy of the folder ``files``, in this sandbox: (exit code, printed text); -9
        at ``timeout``. The command's folder as it left it is moved to ``results`` (replacing what was there).

        Raises:
            SandboxDied: the server ended or stopped answering (the sandbox is ended: the next command gets a new
                one).
        """
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self.end()
                self._start()
            try:
                return self._run(files, args, timeout, results)
            except BaseException:  # interrupted (a learner stops the check), or the server is gone: all of it ends
                self.end()
                raise

    def _run(self, files: Path, args: list[str], timeout: float, results: Path) -> tuple[int, str]:
        folder, output = self.work / uuid.uuid4().hex, self.conn / f"{uuid.uuid4().hex}.out"
        shutil.copytree(files, folder, symlinks=True)
        if self.uid is not None:  # the command's own, and only its own (work/ itself stays the grader's)
            walk_owned(folder, lambda fd, st: os.fchown(fd, self.uid, self.uid))
        self.asked += 1
        request = {"id": self.asked, "args": list(args), "cwd": str(folder), "env": None, "output": str(output),
                   "timeout": timeout}
        try:
            os.write(self.requests, (json.dumps(request) + "\n").encode())
        except OSError as e:
            raise SandboxDied("the sandbox's server ended") from e
        reply = self._reply(self.asked, timeout + GRACE)
        text = _tail(output)
        shutil.rmtree(results, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):  # (gone: a command of a grader that is not root may remove it)
            if stat.S_ISDIR(os.lstat(folder).st_mode):  # no command is left to swap it for a link: all were killed
                os.rename(folder, results)
        for top in (self.work, self.conn):  # what else it left where the grader looks
            _empty(top)
        if not reply.get("clean"):
            self.end()
        return reply["code"], text

    def _reply(self, number: int, seconds: float) -> dict:
        ends = time.monotonic() + seconds
        while True:
            line, _, rest = self.pending.partition(b"\n")
            if _:
                self.pending = rest
                reply = json.loads(line)
                if reply.get("id") == number:
                    return reply
                continue
            left = ends - time.monotonic()
            if left <= 0 or not select.select([self.replies], [], [], min(left, 0.1))[0]:
                if left <= 0:
                    raise SandboxDied("the sandbox's server stopped answering")
                continue
            chunk = os.read(self.replies, 1 << 16)
            if not chunk:
                raise SandboxDied("the sandbox's server ended")
            self.pending += chunk


def _tail(path: Path) -> str:
    """The last :data:`OUTPUT_BYTES` of the command's output file, read without following a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        size = os.fstat(fd).st_size
        f.seek(max(0, size - OUTPUT_BYTES))
        return f.read(OUTPUT_BYTES).decode("utf-8", "replace")


def _empty(folder: Path) -> None:
    """Remove everything in ``folder`` (links are removed, never followed)."""
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)


_CURRENT: Sandbox | None = None
"""The sandbox :func:`one_sandbox` opened, which every :class:`SandboxWorkspace` uses while it is open."""


@contextlib.contextmanager
def one_sandbox(root: str | None = None):
    """Within it, every :class:`SandboxWorkspace`'s commands run in one :class:`Sandbox` (started on the first
    command), which ends with it."""
    global _CURRENT
    previous, _CURRENT = _CURRENT, Sandbox(root)
    try:
        yield _CURRENT
    finally:
        sandbox, _CURRENT = _CURRENT, previous
        sandbox.end()


class SandboxWorkspace(capstone.Workspace):
    """A :class:`~tinylm_checks.capstone.Workspace` whose commands run in a :class:`Sandbox` (see the module
    docstring). :attr:`path` holds its files, outside the sandbox; :attr:`results` the last command's folder as it
    left it."""

    MANAGER = SandboxKernelManager
    """The sandbox's maker: its mounts, namespaces, limits and the uid commands run as."""

    root: str | None = None
    """The folder new workspaces and sandboxes are made in; None: /dev/shm where it can be written. The check service
    gives each of its children a folder of its own here, and removes it however the child ended (killed at its deadline
    before ``__exit__`` could run, say)."""

    def _folder(self) -> Path:
        """``files/`` in a new scratch folder in :attr:`root` (the last command's folder goes beside it)."""
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        self.box = Path(tempfile.mkdtemp(prefix="tinylm-workspace-", dir=self.root or shm))
        self.results = self.box / "results"
        (self.box / "files").mkdir()
        self._own: Sandbox | None = None
        return self.box / "files"

    def __exit__(self, *exc):
        if self._own is not None:
            self._own.end()
        shutil.rmtree(self.box, ignore_errors=True)

    def _sandbox(self) -> Sandbox:
        if _CURRENT is not None and _CURRENT.MANAGER is self.MANAGER:
            return _CURRENT
        if self._own is None:
            self._own = Sandbox(self.root, self.MANAGER)
        return self._own

    def run(self, args: list[str], timeout: float = capstone.TIMEOUT) -> tuple[int, str]:
        manager = self.MANAGER(stage=STAGE)
        if not manager.sandbox or os.environ.get("TINYLM_GRADING_SANDBOX", "").lower() in ("off", "0", "no"):
            return super().run(args, timeout)  # trusted and single-user (docs/grading.md): here, as a learner's
        try:
            return self._sandbox().run(self.path, args, timeout, self.results)
        except SandboxDied:
            return _forked.KILLED, ""

    def load(self, name: str):
        """``torch.load(name, weights_only=True)`` of a file the last command left in its folder, or None."""
        import torch
        folder = self.results if self.results.is_dir() else self.path
        try:
            fd = os.open(folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        with open(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > capstone.MAX_OUTPUT_BYTES:
                return None
            return torch.load(io.BytesIO(f.read()), weights_only=True)


def install() -> None:
    """Make the capstone's checks run their commands in :class:`SandboxWorkspace` (in this process), one at a time:
    they share the submission's sandbox."""
    capstone.WORKSPACE = SandboxWorkspace
    capstone.WORKERS = 1
