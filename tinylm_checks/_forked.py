"""Python commands run as processes forked from one that has already imported PyTorch.

``python -m pytest`` or ``python train.py`` spends about 1.5 CPU seconds importing PyTorch before it runs a line of
its own, and the capstone's checks run many such commands (a test file against the reference and each broken
model, ``train.py`` twice, ``generate.py`` four times). A :class:`Forkserver` is one Python process, started on first
use, that imports the modules it is given (:data:`PRELOAD` for the checks) and then forks a child per command (the
idea of :mod:`multiprocessing`'s forkserver, whose preload list is one setting for the whole process). Each child
is a process of its own, as ``python`` would start it:

- its working folder, environment and ``sys.argv`` are the command's; ``sys.path[0]`` is the script's folder
  (``python script.py``) or the working folder (``python -m module``, run with :mod:`runpy`), and the script runs
  as ``__main__``;
- its exit code is Python's: 0, the ``SystemExit`` code (a message is printed and gives 1), 1 after an uncaught
  exception, whose traceback is printed from the script's first frame on, as ``python`` prints it;
- stdout and stderr go to one file, read back whole; stdin is empty;
- after ``timeout`` seconds the child's process group is killed and the exit code is -9 (what
  :func:`subprocess.run` gives a killed child), with the output it had written;
- Python's, NumPy's and PyTorch's default random generators are seeded afresh from the system, as in a new process
  (an unseeded ``torch.rand`` differs from one ``python`` to the next).

What a command does to its process (globals, imported modules such as the learner's ``model``) ends with the child.
Commands given from several threads run at the same time, each a child of its own. The server freezes what its
imports made (:func:`gc.freeze`), so a child's garbage collections skip it: pytest collects 2 to 5 times per run,
0.18 s of a 0.23 s run of a one-test file before it; nor does a command's exit run the finalizers they registered
(PyTorch's operator libraries: 26-37 ms of a 45 ms command before). When the process that started the server ends,
the server ends, and kills what it still runs; a process forked from that one starts a server of its own. A caller
interrupted while it waits (a learner stops a check) ends its command (:meth:`Forkserver.cancel`).

Linux only (:data:`FORKS`: ``fork`` after importing PyTorch is what its own DataLoader workers do there, and the server
waits for its children with Linux's ``pidfd_open``). Elsewhere (macOS, Windows), or when the server cannot start,
:func:`run` starts a new ``python`` per command with :mod:`subprocess`, which gives the same exit code and output; at
its timeout it kills the command's process group where there is one (macOS), the command alone on Windows. Importing
this module needs none of the Unix-only functions. Either way the command prints UTF-8 (``PYTHONIOENCODING``), and
its output is read as UTF-8 whatever the locale's encoding (a Chinese Windows' is code page 936).
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import weakref
from pathlib import Path

SERVER = r'''
# code: the forkserver's own program, run as python -c SERVER <requests fd> <replies fd> <modules to import>
import json, os, select, signal, sys, time
requests, replies = int(sys.argv[1]), os.fdopen(int(sys.argv[2]), "w", encoding="utf-8")
for name in sys.argv[3:]:
    try:
        __import__(name)
    except Exception:  # a module that cannot be imported is imported by the command itself, or fails there
        pass
del name
import gc
gc.freeze()  # what the imports made is never garbage: a child's gc.collect() (pytest calls it 2-5 times) skips it
import weakref
for f in list(getattr(weakref.finalize, "_registry", ())):  # nor is it finalized at a child's exit: PyTorch's
    f.atexit = False  # 174 operator libraries took 26-37 ms of each command's 45 (a command's own still are)
f = None


def _main(request):
    import runpy, traceback
    args = request["args"]
    try:
        if args[0] == "-m":
            sys.argv = [args[1], *args[2:]]
            sys.path[0] = os.getcwd()
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv, path = list(args), os.path.abspath(args[0])
            sys.path[0] = os.path.dirname(path)
            with open(path, "rb") as f:  # as python runs a script: __main__ with an absolute __file__, argv as given
                code = compile(f.read(), path, "exec")
            main = type(sys)("__main__")
            main.__file__, main.__builtins__ = path, __builtins__
            sys.modules["__main__"] = main
            exec(code, main.__dict__)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        if not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename.startswith(("<string>", "<frozen runpy")):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        code = 130 if isinstance(e, KeyboardInterrupt) else 1
    try:
        import atexit
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code & 0xFF)


def _child(request):
    os.setsid()
    for fd in (requests, *running):
        os.close(fd)
    replies.close()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    out = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    import random
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if "torch" in sys.modules:
        sys.modules["torch"].seed()
    _main(request)


def _end(fd, ended):
    """The command whose pidfd is ``fd`` ended (or reached its timeout): its group killed, its exit code replied."""
    pid, number, _ = running.pop(fd)
    os.close(fd)
    for kill in (os.killpg, os.kill):  # its group: at its timeout, or what it left running; and the command itself,
        try:  # cancelled before it made its group (a request and its cancel read at once), which killpg misses
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    replies.write(json.dumps({"id": number, "code": code if ended else -9}) + "\n")
    replies.flush()


running = {}  # pidfd: (pid, request id, deadline): the commands running now, each a child of this process
pending = b""
while True:
    deadlines = [deadline for _, _, deadline in running.values()]
    wait = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
    ready = select.select([requests, *running], [], [], wait)[0]
    for fd in [fd for fd in running if fd in ready or running[fd][2] <= time.monotonic()]:
        _end(fd, fd in ready)
    if requests not in ready:
        continue
    chunk = os.read(requests, 1 << 16)
    if not chunk:  # the client's end closed (its process ended): what still runs goes with this server
        for fd in list(running):
            _end(fd, False)
        break
    *lines, pending = (pending + chunk).split(b"\n")
    for line in lines:
        request = json.loads(line)
        if "cancel" in request:  # the client was interrupted: the command ends now, as at its timeout
            for fd, (pid, number, _) in list(running.items()):
                if number == request["cancel"]:
                    _end(fd, False)
            continue
        pid = os.fork()
        if pid == 0:
            try:
                _child(request)
            finally:
                os._exit(1)
        running[os.pidfd_open(pid)] = (pid, request["id"], time.monotonic() + request["timeout"])
'''


class Forkserver:
    """A process that has imported ``preload`` (started on first use, with ``env``), and runs commands as its forked
    children (see the module docstring). Thread-safe: commands given from several threads run at once."""

    def __init__(self, preload: tuple[str, ...], env: dict[str, str]):
        self.preload, self.env = preload, env
        self.proc, self.lock, self.asked = None, threading.Lock(), 0
        self.waiting: dict[int, queue.SimpleQueue] | None = None  # request id: where its reply goes (None: no server)
        _ALL.add(self)

    def _forget(self) -> None:
        """In a child forked from the process that started the server: the server and the thread reading its replies
        are the parent's, so this process starts a server of its own when it needs one."""
        self.lock = threading.Lock()  # another thread may have held it at the fork
        if self.waiting is not None:
            try:
                self.requests.close()  # the server ends when the parent's end closes, whatever this child does
            except OSError:
                pass
        self.proc, self.waiting = None, None

    def _start(self) -> None:
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER, str(requests_r), str(replies_w), *self.preload],
                                     pass_fds=(requests_r, replies_w), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env,
                                     cwd="/")  # its imports come from the environment, never from a folder's files
        os.close(requests_r)
        os.close(replies_w)
        self.requests, self.waiting = os.fdopen(requests_w, "w", encoding="utf-8"), {}
        replies = os.fdopen(replies_r, "r", encoding="utf-8")
        threading.Thread(target=_replies, args=(weakref.ref(self), self.lock, replies, self.waiting),
                         daemon=True, name="tinylm-forkserver-replies").start()

    def start(self) -> None:
        """Start the server now, if it is not running, without waiting for its imports."""
        with self.lock:
            if self.waiting is None or self.proc.poll() is not None:
                self._start()

    def cancel(self, number: int | None = None) -> None:
        """End the command of request ``number`` now (None: every command this process is waiting for); each one's
        caller gets exit code -9, as at a timeout."""
        with self.lock:
            if self.waiting is None:
                return
            try:
                for asked in list(self.waiting) if number is None else [number]:
                    self.requests.write(json.dumps({"cancel": asked}) + "\n")
                self.requests.flush()
            except OSError:
                pass  # the server ended: so did its commands

    def run(self, args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
        """``python *args`` in ``cwd`` with ``env``: (exit code, stdout and stderr). RuntimeError if the server
        ended (it is started again on the next call)."""
        with tempfile.TemporaryDirectory(prefix="tinylm-command-") as scratch:
            output, box = Path(scratch) / "output", queue.SimpleQueue()
            with self.lock:
                if self.waiting is None or self.proc.poll() is not None:
                    self._start()
                self.asked += 1
                number, proc, self.waiting[self.asked] = self.asked, self.proc, box
                try:
                    self.requests.write(json.dumps({"id": number, "args": list(args), "cwd": str(cwd), "env": env,
                                                    "output": str(output), "timeout": timeout}) + "\n")
                    self.requests.flush()
                except OSError:
                    self.waiting.pop(number, None)
                    box.put(None)
            try:
                while True:  # in short waits: a signal another thread received is handled within 0.1 s
                    try:
                        code = box.get(timeout=0.1)
                        break
                    except queue.Empty:
                        pass
            except BaseException:  # interrupted (a learner stops the check): the command ends with it
                self.cancel(number)
                raise
            if code is None:
                proc.kill()
                raise RuntimeError("the forkserver ended")
            text = output.read_bytes().decode("utf-8", "replace") if output.is_file() else ""
            return code, text


def _replies(server: weakref.ref, lock: threading.Lock, replies, waiting: dict[int, queue.SimpleQueue]) -> None:
    """Hand each reply of one server to the thread that waits for it; when the server ends, None to each. It holds
    no reference to the :class:`Forkserver`: one that is dropped closes its end of the requests, and its server ends."""
    with replies:
        for line in replies:
            reply = json.loads(line)
            with lock:
                box = waiting.pop(reply["id"], None)
            if box is not None:
                box.put(reply["code"])
    with lock:
        owner = server()
        if owner is not None and owner.waiting is waiting:
            owner.waiting = None
        for box in waiting.values():
            box.put(None)
        waiting.clear()


FORKS = sys.platform == "linux" and all(hasattr(os, name) for name in ("fork", "register_at_fork", "pidfd_open",
                                                                         "setsid", "killpg"))
"""Whether :func:`run` forks its commands from a :class:`Forkserver` (Linux); else each is a new ``python``."""

_ALL: weakref.WeakSet[Forkserver] = weakref.WeakSet()
if FORKS:
    os.register_at_fork(after_in_child=lambda: [server._forget() for server in list(_ALL)])

_SERVERS: dict[tuple, Forkserver] = {}


PYTEST_PLUGINS = ("helpconfig", "unittest", "skipping", "pastebin", "junitxml", "setuponly", "setupplan", "stepwise",
                  "unraisableexception", "threadexception", "warnings", "faulthandler")
"""pytest's default plugins that ``import pytest`` leaves for each run to import (8 ms of a 50 ms run)."""
PRELOAD = ("torch", "torch._dynamo", "pytest", *(f"_pytest.{name}" for name in PYTEST_PLUGINS), "yaml")
"""What the commands' server imports: PyTorch; ``torch._dynamo``, which a process's first ``torch.optim`` optimizer
imports (0.75 s: a test that overfits a batch, ``train.py``); pytest and its default plugins; PyYAML (``train.py``'s
config)."""


def cancel() -> None:
    """End every command this process runs (a check interrupted while its commands run in threads): those of its
    servers, and the new ``python`` processes of :func:`run` where it does not fork."""
    for server in list(_ALL):
        server.cancel()
    with _CHILDREN_LOCK:
        for proc in list(_CHILDREN):
            _kill(proc)


def _server(env: dict[str, str], preload: tuple[str, ...]) -> Forkserver:
    key = (preload, *(env.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONDONTWRITEBYTECODE")))
    return _SERVERS.get(key) or _SERVERS.setdefault(key, Forkserver(preload, env))


def start(env: dict[str, str], preload: tuple[str, ...] = PRELOAD) -> None:
    """Start the server that :func:`run` would use for ``env`` now, in the background: its imports (about 1.5 s) are
    then done before the first command. Only where :data:`FORKS`; elsewhere, nothing."""
    if FORKS:
        try:
            _server(_utf8(env), preload).start()
        except OSError:
            pass  # the first command starts a new python instead, as run() does


def _utf8(env: dict[str, str]) -> dict[str, str]:
    return {**env, "PYTHONIOENCODING": "utf-8"}


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float,
        preload: tuple[str, ...] = PRELOAD) -> tuple[int, str]:
    """``python *args`` (a script and its arguments, or ``-m module ...``) in ``cwd`` with ``env`` (and
    ``PYTHONIOENCODING=utf-8``), as a child of this process's :class:`Forkserver` for ``preload`` (one per preload list
    and environment's thread settings) where :data:`FORKS`, else as a new ``python``: (exit code, stdout and stderr;
    -9 after ``timeout`` seconds)."""
    env = _utf8(env)
    if FORKS and args and (args[0] == "-m" and len(args) > 1 or args[0].endswith(".py")):
        server = _server(env, preload)
        try:
            return server.run(args, cwd, env, timeout)
        except RuntimeError:
            pass  # the server could not start or ended: a new process, as below
    return _python(args, cwd, env, timeout)


KILLED = -9
"""The exit code :func:`run` gives a command stopped at its timeout, on every platform (what :func:`subprocess.run`
reports on Linux for a child killed by SIGKILL)."""

_CHILDREN: set[subprocess.Popen] = set()
"""The new ``python`` processes :func:`run` waits for now, in any thread (:func:`cancel` ends them)."""
_CHILDREN_LOCK = threading.Lock()


def _kill(proc: subprocess.Popen) -> None:
    """End ``proc`` and, where there are process groups (it leads its own), what it started."""
    if hasattr(os, "killpg") and proc.returncode is None:
        try:
            os.killpg(proc.pid, 9)  # SIGKILL (which Windows' signal module does not name)
        except OSError:
            pass
    proc.kill()


def _python(args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
    """``python *args`` as a new process, its output in a file as the server's children write theirs (what the command
    started and left running cannot hold a pipe open). At ``timeout``, when the caller is interrupted, or at
    :func:`cancel`, it is killed with its process group (the process alone on Windows, which has no such groups)."""
    with tempfile.TemporaryFile() as output:
        proc = subprocess.Popen([sys.executable, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=output,
                                stderr=subprocess.STDOUT, start_new_session=hasattr(os, "killpg"))
        with _CHILDREN_LOCK:
            _CHILDREN.add(proc)
        try:
            code = proc.wait(timeout)
        except BaseException as e:  # its timeout, or a learner who stops the check: the command ends now
            _kill(proc)
            proc.wait()
            if not isinstance(e, subprocess.TimeoutExpired):
                raise
            code = KILLED
        finally:
            with _CHILDREN_LOCK:
                _CHILDREN.discard(proc)
        output.seek(0)
        return code, output.read().decode("utf-8", "replace")
