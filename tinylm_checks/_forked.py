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
- stdout and stderr go to one file, read back whole (or its end only: the grader's ``tail``); stdin is empty;
- after ``timeout`` seconds the child's process group is killed and the exit code is -9 (what
  :func:`subprocess.run` gives a killed child), with the output it had written;
- Python's, NumPy's and PyTorch's default random generators are seeded afresh from the system, as in a new process
  (an unseeded ``torch.rand`` differs from one ``python`` to the next).

What a command does to its process (globals, imported modules such as the learner's ``model``) ends with the child.
A request reaches the server as a small order (its number and timeout) with a descriptor of an in-memory file holding
the rest (arguments, folder, environment), which only the forked child reads: nothing of one command's request is in
the memory of the next. The grader's commands also enter a sandbox of their own first (``sandbox``:
:mod:`tinylm_grading.forkbox`).
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
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path

SERVER = r'''
# code: the forkserver's own program, run as python -c SERVER <socket fd> <path to listen at, or ""> <modules to import>
import json, os, select, signal, socket, struct, sys, time
primary, path = socket.socket(fileno=int(sys.argv[1])), sys.argv[2]
SERVER_PID = os.getpid()
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


def _child(request_fd):
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: this server's end ends its commands, whatever it was
    if os.getppid() != SERVER_PID:  # it ended before the line above
        os._exit(1)
    os.setsid()
    for other in (*clients.values(), *([listener] if listener else [])):
        other.close()
    for fd in [*running, *dying]:
        os.close(fd)
    for table in (running, dying, zombies, clients):  # nothing of the other commands the server runs (a kernel read
        table.clear()  # another learner's pid and start time here)
    for name in ("message", "order", "peer", "connection", "path", "fds"):
        globals().pop(name, None)
    with os.fdopen(request_fd, "rb") as f:  # the command's own request: this server's memory never held it
        request = json.loads(f.read())
    out = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    if request.get("sandbox") is not None:  # the grader's: a sandbox of the command's own, or no command
        box = sys.modules.get("tinylm_grading.forkbox")
        if box is None:
            os.write(2, b"sandbox: tinylm_grading.forkbox is not among the server's imports\n")
            os._exit(125)
        box.enter(request["sandbox"])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    import random
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    if "torch" in sys.modules:
        sys.modules["torch"].seed()
    _main(request)


def _end(fd, ended):
    """The command whose pidfd is ``fd`` ended (or reached its timeout). Its children are killed first (a sandbox's
    init, whose end ends its namespace: reaped by the command, its parent, not left to the machine's init), then, once
    they have ended, its group and itself; its exit code is replied once it has ended. Nothing here waits: a process
    may take seconds to end (a namespace whose /tmp held millions of files), and the server serves the other commands
    meanwhile (:func:`_gone`)."""
    pid, number, _, client = running.pop(fd)
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            children = [int(child) for child in f.read().split()]
    except (OSError, ValueError):
        children = []
    ending = {"pid": pid, "fd": fd, "number": number, "client": client, "ended": ended, "left": set(),
              "until": time.monotonic() + 30, "last": False}
    for child in children:
        try:
            child_fd = os.pidfd_open(child)
        except OSError:
            continue
        ending["left"].add(child_fd)
        dying[child_fd] = ending
        try:
            os.kill(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if not ending["left"]:
        _last(ending)


def _last(ending):
    """The command's children have ended: its group and itself now (at its timeout, or what it left running; the command
    itself too, cancelled before it made its group, which killpg misses)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(ending["pid"], signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    ending.update(left={ending["fd"]}, until=time.monotonic() + 30, last=True)
    dying[ending["fd"]] = ending


def _gone(fd, expired=False):
    """A process of an ended command has ended (or, ``expired``, 30 s have passed): once its children all have, the
    command is killed (:func:`_last`); once it has, it is reaped and its exit code replied."""
    ending = dying.pop(fd)
    ending["left"].discard(fd)
    if ending["left"] and not expired:
        if fd != ending["fd"]:
            os.close(fd)
        return
    for other in {fd, *ending["left"]} - {ending["fd"]}:
        dying.pop(other, None)
        os.close(other)
    ending["left"] = set()
    if not ending["last"]:
        _last(ending)
        return
    dying.pop(ending["fd"], None)
    os.close(ending["fd"])
    try:
        done, status = os.waitpid(ending["pid"], os.WNOHANG)
    except ChildProcessError:
        done, status = ending["pid"], 0
    if not done:
        zombies.append(ending["pid"])  # past its time: replied now, reaped when it ends at last
    code = os.waitstatus_to_exitcode(status) if done and ending["ended"] else -9
    try:
        ending["client"].send(json.dumps({"id": ending["number"], "code": code}).encode())
    except OSError:
        pass  # that client has gone


listener = None
if path:  # also a server for other processes of this user (the grader's, each with a connection of its own)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
primary.send(b'{"ready": true}')
clients = {primary.fileno(): primary}  # the connections orders come from: the first one's end ends this server
running = {}  # pidfd: (pid, request id, deadline, connection): the commands running now, each a child of this process
dying = {}  # pidfd of a process of an ended command: that command's ending (see _end)
zombies = []  # commands replied past their time to end, to reap
while True:
    if primary.fileno() not in clients:  # the first client ended: so does everything, and then this server
        for other in [*clients.values(), *([listener] if listener else [])]:
            other.close()
        clients, listener = {}, None
        for fd in list(running):
            _end(fd, False)
        if not dying:
            break
    for pid in list(zombies):
        if os.waitpid(pid, os.WNOHANG)[0]:
            zombies.remove(pid)
    deadlines = [entry[2] for entry in running.values()] + [ending["until"] for ending in dying.values()]
    wait = max(0.0, min(deadlines) - time.monotonic()) if deadlines else (1.0 if zombies else None)
    ready = select.select([*clients.values(), *([listener] if listener else []), *running, *dying], [], [], wait)[0]
    for fd in [fd for fd in dying if fd in ready]:
        if fd in dying:
            _gone(fd)
    for fd in [fd for fd, ending in dying.items() if ending["until"] <= time.monotonic()]:
        if fd in dying:
            _gone(fd, expired=True)
    for fd in [fd for fd in running if fd in ready or running[fd][2] <= time.monotonic()]:
        _end(fd, fd in ready)
    if listener is not None and listener in ready:
        connection, _ = listener.accept()
        peer = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        if peer[1] == os.getuid():
            clients[connection.fileno()] = connection
        else:
            connection.close()
    for client in [client for client in clients.values() if client in ready]:
        # a message: {"id", "timeout"} with the descriptor of a file holding the request (read by the child alone: a
        # command forked later finds nothing of another's in its copy of this process), or {"cancel": id}
        try:
            message, fds, _, _ = socket.recv_fds(client, 1024, 1)
        except OSError:  # reset: as closed
            message, fds = b"", []
        if not message:  # that client's end closed (its process ended): what it still runs ends with it
            for fd in [fd for fd, entry in running.items() if entry[3] is client]:
                _end(fd, False)
            del clients[client.fileno()]
            client.close()
            continue
        order = json.loads(message)
        if "cancel" in order:  # the client was interrupted: the command ends now, as at its timeout
            for fd, (pid, number, _, owner) in list(running.items()):
                if number == order["cancel"] and owner is client:
                    _end(fd, False)
            continue
        if not fds:
            continue
        pid = os.fork()
        if pid == 0:
            try:
                _child(fds[0])
            finally:
                os._exit(1)
        os.close(fds[0])
        running[os.pidfd_open(pid)] = (pid, order["id"], time.monotonic() + order["timeout"], client)
if path:
    os.unlink(path)
'''


class Forkserver:
    """A process that has imported ``preload`` (started on first use, with ``env``), and runs commands as its forked
    children (see the module docstring). Thread-safe: commands given from several threads run at once."""

    def __init__(self, preload: tuple[str, ...], env: dict[str, str], listen: str | None = None,
                 connect: str | None = None):
        """``listen``: the server also takes other processes' connections (of this user only) at that path, a Unix
        socket in a folder no one else may enter; ``connect``: no server of its own, a connection to one that listens
        there."""
        self.preload, self.env, self.listen, self.connect = preload, env, listen, connect
        self.proc, self.lock, self.asked = None, threading.Lock(), 0
        self.waiting: dict[int, queue.SimpleQueue] | None = None  # request id: where its reply goes (None: no server)
        self.ready = threading.Event()  # set when the server has imported its modules (and listens)
        _ALL.add(self)

    def _alive(self) -> bool:
        return self.waiting is not None and (self.proc is None or self.proc.poll() is None)

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
        """Start the server (or connect to it): orders go and replies come back on one socket."""
        if self.connect:
            requests = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                requests.connect(self.connect)
            except OSError:
                requests.close()
                raise
            self.ready.set()
        else:
            requests, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            with theirs:
                self.proc = subprocess.Popen([sys.executable, "-c", SERVER, str(theirs.fileno()), self.listen or "",
                                              *self.preload], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env,
                                             cwd="/")  # its imports: the environment's, never a folder's
        self.requests, self.waiting = requests, {}
        # the thread below holds the socket too: when this object goes, the server must still see its client end
        weakref.finalize(self, _hang_up, requests, os.getpid())
        threading.Thread(target=_replies, args=(weakref.ref(self), self.lock, requests, self.waiting, self.ready),
                         daemon=True, name="tinylm-forkserver-replies").start()

    def start(self, wait: float | None = None) -> bool:
        """Start the server now, if it is not running; with ``wait``, wait up to that many seconds for its imports.
        Returns whether it is ready."""
        with self.lock:
            if not self._alive():
                self._start()
        end = time.monotonic() + (wait or 0)
        while not self.ready.wait(0.1 if wait else 0) and time.monotonic() < end:
            if self.proc is not None and self.proc.poll() is not None:  # it ended before it was ready
                return False
        return self.ready.is_set()

    def cancel(self, number: int | None = None) -> None:
        """End the command of request ``number`` now (None: every command this process is waiting for); each one's
        caller gets exit code -9, as at a timeout."""
        with self.lock:
            if self.waiting is None:
                return
            try:
                for asked in list(self.waiting) if number is None else [number]:
                    self.requests.send(json.dumps({"cancel": asked}).encode())
            except OSError:
                pass  # the server ended: so did its commands

    def spawn(self, args: list[str], cwd: Path, env: dict[str, str], output: Path, timeout: float,
              sandbox: dict | None = None) -> Spawned:
        """Start ``python *args`` in ``cwd`` with ``env``, its stdout and stderr written to the file ``output``, ended
        after ``timeout`` seconds; return it without waiting. ``sandbox``: the child first enters the sandbox it
        describes (:func:`tinylm_grading.forkbox.enter`, which the server must have imported)."""
        box = queue.SimpleQueue()
        with self.lock:
            if not self._alive():
                self._start()
            self.asked += 1
            number, proc, self.waiting[self.asked] = self.asked, self.proc, box
            request = os.memfd_create("tinylm-request", os.MFD_CLOEXEC)  # read by the forked child alone
            try:
                os.write(request, json.dumps({"args": list(args), "cwd": str(cwd), "env": env, "output": str(output),
                                              "sandbox": sandbox}).encode())
                os.lseek(request, 0, os.SEEK_SET)
                socket.send_fds(self.requests, [json.dumps({"id": number, "timeout": timeout}).encode()], [request])
            except OSError:
                self.waiting.pop(number, None)
                box.put(None)
            finally:
                os.close(request)
        return Spawned(self, number, proc, box)

    def run(self, args: list[str], cwd: Path, env: dict[str, str], timeout: float,
            sandbox: dict | None = None, tail: int | None = None) -> tuple[int, str]:
        """``python *args`` in ``cwd`` with ``env``: (exit code, stdout and stderr; with ``tail``, their last ``tail``
        bytes only, the rest never read). RuntimeError if the server ended (it is started again on the next call).
        ``sandbox``: as :meth:`spawn`'s; the output's file is then in the sandbox's ``scratch`` folder."""
        with tempfile.TemporaryDirectory(prefix="tinylm-command-", dir=sandbox and sandbox["scratch"]) as scratch:
            output = Path(scratch) / "output"
            command = self.spawn(args, cwd, env, output, timeout, sandbox)
            try:
                while (code := command.wait(0.1)) is None:
                    pass  # short waits: a signal another thread received is handled within 0.1 s
            except BaseException:  # interrupted (a learner stops the check): the command ends with it
                command.kill()
                raise
            return code, read_tail(output, tail).decode("utf-8", "replace")


def read_tail(path: Path, limit: int | None) -> bytes:
    """The last ``limit`` bytes of the file ``path`` (None: all of it; no file: none)."""
    try:
        with open(path, "rb") as f:
            if limit is not None:
                f.seek(max(0, f.seek(0, os.SEEK_END) - limit))
            return f.read()
    except FileNotFoundError:
        return b""


class Spawned:
    """A command :meth:`Forkserver.spawn` started: what :class:`subprocess.Popen` offers a kernel's provisioner
    (``poll``, ``wait``, ``kill``, ``terminate``, ``send_signal``, ``returncode``). Any signal ends it, as at its
    timeout (exit code -9): the server kills the command's process group and children."""

    stdin = stdout = stderr = None
    pid = None

    def __init__(self, server: Forkserver, number: int, proc: subprocess.Popen, box: queue.SimpleQueue):
        self.server, self.number, self.proc, self.box, self.returncode = server, number, proc, box, None

    def wait(self, timeout: float | None = None) -> int | None:
        """The exit code; None if ``timeout`` seconds pass first. RuntimeError if the server ended."""
        if self.returncode is None:
            try:
                code = self.box.get(timeout=timeout)
            except queue.Empty:
                return None
            if code is None:
                if self.proc is not None:
                    self.proc.kill()
                raise RuntimeError("the forkserver ended")
            self.returncode = code
        return self.returncode

    def poll(self) -> int | None:
        try:
            return self.wait(0)
        except RuntimeError:
            self.returncode = KILLED
            return self.returncode

    def send_signal(self, signum: int) -> None:
        self.server.cancel(self.number)

    def kill(self) -> None:
        self.server.cancel(self.number)

    terminate = kill


def _hang_up(requests: socket.socket, owner: int) -> None:
    """End the connection to a server, for the server and for the thread reading its replies: in the process that made
    it only (a forked child's copy of the object must leave its parent's connection alone)."""
    if os.getpid() == owner:
        try:  # this side only: the replies still come until the server, its commands ended, closes the other
            requests.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _replies(server: weakref.ref, lock: threading.Lock, requests: socket.socket,
             waiting: dict[int, queue.SimpleQueue], ready: threading.Event) -> None:
    """Hand each reply of one server to the thread that waits for it; when the server ends, None to each. It holds
    no reference to the :class:`Forkserver`: one that is dropped closes its end of the requests, and its server ends."""
    while True:
        try:
            message = requests.recv(4096)
        except OSError:  # closed by this process (a fork's child forgetting the server)
            break
        if not message:
            break
        reply = json.loads(message)
        if "ready" in reply:
            ready.set()
            continue
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
                                                                         "setsid", "killpg", "memfd_create"))
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
        preload: tuple[str, ...] = PRELOAD, sandbox: dict | None = None, tail: int | None = None) -> tuple[int, str]:
    """``python *args`` (a script and its arguments, or ``-m module ...``) in ``cwd`` with ``env`` (and
    ``PYTHONIOENCODING=utf-8``), as a child of this process's :class:`Forkserver` for ``preload`` (one per preload list
    and environment's thread settings) where :data:`FORKS`, else as a new ``python``: (exit code, stdout and stderr;
    -9 after ``timeout`` seconds). With ``sandbox`` (the grader's, :mod:`tinylm_grading.forkbox`), forked only:
    RuntimeError where it cannot be; with ``tail``, only the output's last ``tail`` bytes are read."""
    env = _utf8(env)
    if sandbox is not None:
        if not FORKS:
            raise RuntimeError("a sandboxed command is forked, and this system cannot fork one")
        return _server(env, preload).run(args, cwd, env, timeout, sandbox, tail)
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
