"""The check service: the course's checks, run for learners whose environment holds no answers.

A class's learners work in an environment without the reference (``make learner-env``); their ``check_x(obj)`` is
a request to this service (:mod:`tinylm_checks.client`). The service holds the reference and the checks, runs
``check_x`` here, and reaches the learner's ``obj`` through the same agent protocol as the grader
(:func:`tinylm_grading.remote.verdict`): requests go to the agent in the learner's kernel over the connection, the
answers come back as data (a tensor as its dtype, shape and raw elements), never as pickled objects. So a
learner's check names the same mistakes, with the same words, as in the full environment.

One process imports torch, the checks and the reference once, then forks a child for each check: a check starts in
milliseconds, and one learner's check cannot disturb another's (language, random state). The capstone's commands run
in a sandbox of their own, as when grading (:mod:`tinylm_grading.workspace`). In a class it runs as its own user, so
that a learner can connect to its socket but not read its files.

What a learner who knows Linux can do to it is bounded (each was tried: ``tests/test_classmode.py``):

- **Only the released stages' checks.** It answers the checks of the stages up to ``--released``, which it needs: a
  later stage's check runs the reference's code of that stage.
- **Who asks.** On a Unix socket the kernel says which user connects (``SO_PEERCRED``). The service a user starts for
  themselves listens in their private folder (``<tmp>/tinylm-<uid>/``, 0700, checked) and answers only them; a
  class's socket answers every user and counts each one's checks by uid. Over TCP (Kubernetes), a request carries
  the learner's credential, ``NAME:TOKEN`` with TOKEN an HMAC of the name under a secret the service reads from a file
  (:func:`credential`: the hub issues it); a request without a valid one is refused, and the limits count by that name.
- **How much.** The parent reads each connection's request itself, at most :data:`FIRST_BYTES` within :data:`FIRST`
  seconds, without waiting on any one connection (:data:`PENDING_PER_PEER` such connections per user or address).
  Then a child runs the check: :data:`PER_LEARNER` at once per learner and :data:`CHILDREN` in all, of which one
  capstone check per learner (its commands run up to 3 at once) and :data:`CAPSTONE` in all; one more is answered
  "busy" at once. A learner's answers are read up to :data:`tinylm_checks.client.MAX_MESSAGE` bytes, the rest never.
- **Until when.** A child lives :data:`DEADLINE` seconds. Its check's commands (the capstone's) and its waits for the
  learner's side end :data:`WRAP_UP` seconds before, and it answers that the check ran past that limit; should it
  still run at :data:`DEADLINE`, the parent kills it and everything it started, and gives the same answer. Either
  way the parent removes what it leaves: its folder on /dev/shm (where its workspaces are) and the cgroups its
  commands ran in.

``tinylm-check-service --released STAGE [--socket PATH | --socket tcp://HOST:PORT --secret FILE]`` (``make
check-service RELEASED=NN`` starts it in the background).
"""
from __future__ import annotations

import hashlib
import hmac
import importlib
import json
import os
import pkgutil
import resource
import selectors
import signal
import socket
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

import tinylm_checks
from tinylm_checks import capstone, client
from tinylm_checks._text import say
from tinylm_solutions import i18n
from tinylm_solutions.cli import UsageError, _fail, _help, _Parser

from . import learnerenv, registry, remote, workspace
from .limits import CGROUP_ROOTS, remove_cgroups
from .sandbox import remove_tree

IDLE = 120.0
"""Seconds a connection may wait for the learner's side's next answer (a learner's function that runs longer is
stopped; the learner sees the service break off)."""
FIRST = 10.0
"""Seconds to send the request, and its most bytes (``FIRST_BYTES``): an idle connection holds no child."""
FIRST_BYTES = 4096
DEADLINE = 600
"""Seconds a check's child lives at most, whatever comes in (the capstone's checks run 2 to 4 commands, each of up to
300 s). The learner's side then reads that the check ran past this limit (:func:`timed_out`)."""
WRAP_UP = 10.0
"""Seconds before :data:`DEADLINE` when the child's check ends by itself: its capstone commands end there, and so
does a wait for the learner's side; it then sends :func:`timed_out` itself (a command's sandbox takes up to a few
seconds to end and be removed)."""
CHILDREN, PER_LEARNER = 32, 4
"""Checks running at once: in all, and for one learner. More are refused at once with a "busy" answer; the service
never waits for a child to end before it accepts."""
CAPSTONE, CAPSTONE_PER_LEARNER = 8, 1
"""Of those, capstone checks (each runs the learner's files in sandboxes of up to 4 GiB, up to 3 at once)."""
PENDING, PENDING_PER_PEER = 64, 4
"""Connections whose request has not come yet: in all, and from one user (a Unix socket) or address (TCP)."""
MEMORY = 3 << 30
"""Bytes of address space a child may add to the warm process's (a soft limit: the capstone's sandboxed commands
set their own)."""
SEEDS = range(1 << 16)
TICK = 0.25
"""Seconds between the parent's rounds of ending children and requests past their time."""
STAGE_OF = {e.check: e.stage for e in registry.EXERCISES if e.check}
CAPSTONE_CHECKS = frozenset(e.check for e in registry.EXERCISES if e.check and e.module == "capstone")


def checks(released: str) -> frozenset[str]:
    """What a learner may ask for: the checks of the exercises of the stages up to ``released``.

    Raises:
        ValueError: ``released`` is no stage.
    """
    stage = learnerenv.stage(released)
    return frozenset(check for check, at in STAGE_OF.items() if at <= stage)


def token(secret: bytes, learner: str) -> str:
    """The learner's token under the class's ``secret``: HMAC-SHA256 of the name, in hex."""
    return hmac.new(secret, learner.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def credential(secret: bytes, learner: str) -> str:
    """``NAME:TOKEN``, what the hub puts in a learner's ``$TINYLM_CHECK_TOKEN`` (``deploy/z2jh-values.yaml`` computes
    the same with the standard library): only the holder of ``secret`` can make one, and it is good for that name
    only."""
    return f"{learner}:{token(secret, learner)}"


class SocketTransport:
    """Requests to the agent in the learner's kernel, over the connection (:mod:`tinylm_checks.client`'s wire): each
    waits :data:`IDLE` seconds at most, and not past ``until`` (``time.monotonic()``; None: no such limit), where it
    raises :class:`~tinylm_checks.capstone.DeadlineReached`."""

    def __init__(self, sock: socket.socket, until: float | None = None):
        self.sock, self.until = sock, until

    def request(self, payload: dict) -> dict:
        wait = IDLE if self.until is None else min(IDLE, self.until - time.monotonic())
        if wait <= 0:
            raise capstone.DeadlineReached
        self.sock.settimeout(wait)
        try:
            client.send(self.sock, {"agent": payload})
            reply = client.receive(self.sock)
        except (ValueError, ConnectionError, OSError) as e:
            if self.until is not None and time.monotonic() >= self.until:
                raise capstone.DeadlineReached from None
            raise remote.AgentError(f"the learner's side did not answer ({type(e).__name__}: {e})") from None
        if not isinstance(reply, dict):
            raise remote.AgentError("the agent's answer is not an object")
        return reply


def _refusal(text: str) -> dict:
    return {"passed": False, "text": text, "failure": None}


def judge(request, sock: socket.socket, released: str, until: float | None = None) -> dict:
    """The verdict on one request ``{"check", "name", "seed", "lang"}``: ``{"passed", "text", "failure"}``. A check
    of a stage after ``released`` (its check would run the reference of that stage), a seed outside ``SEEDS`` (a
    capstone check sizes its model by it) or a malformed request is refused. The check's commands and its requests to
    the learner's side end by ``until`` (``time.monotonic()``; None: no such limit).

    Raises:
        capstone.DeadlineReached: the check was still running at ``until``.
    """
    if isinstance(request, dict) and request.get("lang", "en") in i18n.LANGUAGES:
        i18n.set_language(request.get("lang", "en"))
    check = request.get("check") if isinstance(request, dict) else None
    if isinstance(check, str) and check in STAGE_OF and check not in checks(released):
        return _refusal(say("grading.service.not_released", check=check, stage=STAGE_OF[check], released=released))
    if not isinstance(request, dict) or check not in STAGE_OF or \
            not isinstance(request.get("name"), str) or not request["name"].isidentifier() or \
            type(request.get("seed", 0)) is not int or request.get("seed", 0) not in SEEDS or \
            request.get("lang", "en") not in i18n.LANGUAGES:
        shown = {k: v for k, v in request.items() if k != "token"} if isinstance(request, dict) else request
        return _refusal(say("grading.service.bad_request", request=str(shown)[:200]))
    with capstone.deadline(None if until is None else until - time.monotonic()):
        passed, text, failure = remote.verdict(getattr(tinylm_checks, check), SocketTransport(sock, until),
                                               request["name"], seeds=(request.get("seed", 0),))
    return {"passed": passed, "text": text, "failure": failure.to_data() if failure is not None else None}


def _address_space() -> int:
    with open("/proc/self/statm", encoding="utf-8") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` now (Linux: ``/proc/PID/task/TID/children``)."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{parent}/task/{task}/children")
                kids = [int(k) for k in children.read_text(encoding="utf-8").split()]
            except OSError:
                continue
            new = [k for k in kids if k not in found]
            found += new
            todo += new
    return found


def _cgroups(pids: list[int]) -> set[str]:
    """The names of the sandboxes' cgroups (``tinylm-*``, at the top of a hierarchy) that ``pids`` are in."""
    found = set()
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            name = line.split(":", 2)[-1].strip("/")
            if name.startswith("tinylm-") and "/" not in name:
                found.add(name)
    return found


def _cgroup_exists(name: str) -> bool:
    return any((root / name).is_dir() for roots in CGROUP_ROOTS.values() for root in roots)


def _remove(path: Path) -> None:
    """Delete a child's folder and all in it, whatever the commands did to its folders' modes or depth."""
    remove_tree(path)


@dataclass
class _Pending:
    """A connection whose request has not all come."""
    peer: object  # the uid (a Unix socket) or the address (TCP) that connected
    uid: int | None
    until: float
    data: bytearray = field(default_factory=bytearray)


@dataclass
class _Child:
    """A check running in a child: whose, which kind, until when, its folder, the pipe it closes once it has its verdict
    (or when it dies), the learner's connection (the parent's copy: for :func:`timed_out` when it kills the child), the
    cgroups its commands were seen in."""
    learner: str
    capstone: bool
    until: float
    folder: Path
    working: int
    sock: socket.socket
    cgroups: set[str] = field(default_factory=set)
    killed: bool = False

    def busy(self) -> bool:
        """Whether it still counts as a running check: it has not closed its pipe. (It closes it before it sends its
        verdict, so that the learner's next check, sent on reading the verdict, finds the place free, exited or not.)"""
        if self.working < 0:
            return False
        try:
            if os.read(self.working, 1) != b"":
                return True
        except BlockingIOError:
            return True
        os.close(self.working)
        self.working = -1
        return False


class Service:
    """The parent: accepts, reads each request, counts, forks a child per check, and ends and cleans up after them."""

    def __init__(self, listener: socket.socket, released: str, owner_only: bool = False, secret: bytes | None = None):
        self.listener, self.released, self.owner_only, self.secret = listener, released, owner_only, secret
        self.listener.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ)
        self.pending: dict[socket.socket, _Pending] = {}
        self.children: dict[int, _Child] = {}
        self.leftover: set[str] = set()  # cgroups whose last processes had not ended when their child was cleaned up
        self.scratch = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        self.stopping = False

    def stop(self, *_) -> None:
        """SIGTERM's and SIGINT's handler: the loop ends within :data:`TICK`. (Raising there instead was lost when the
        signal came during a fork: Python runs it in fork's hooks, which ignore exceptions; the service then ran on.)"""
        self.stopping = True

    def serve_forever(self) -> None:
        try:
            while not self.stopping:
                for key, _ in self.selector.select(TICK):
                    try:
                        if key.fileobj is self.listener:
                            self._accept()
                        else:
                            self._read(key.fileobj)
                    except Exception as e:  # noqa: BLE001 - no request may stop the service
                        _log(say("grading.service.log_error", error=type(e).__name__))
                        if key.fileobj in self.pending:
                            self._drop(key.fileobj)
                self._tend()
        finally:
            self.close()

    # ---- the request, read by the parent

    def _accept(self) -> None:
        try:
            sock, address = self.listener.accept()
        except OSError:  # gone before it was accepted, or out of files (the limits keep them far below)
            return
        uid = client.peer_uid(sock)
        if self.owner_only and uid != os.getuid():
            return self._answer(sock, {"refused": "user"})
        peer = uid if uid is not None else address[0]
        if len(self.pending) >= PENDING or sum(p.peer == peer for p in self.pending.values()) >= PENDING_PER_PEER:
            return self._answer(sock, {"busy": True})
        sock.setblocking(False)
        self.pending[sock] = _Pending(peer, uid, time.monotonic() + FIRST)
        self.selector.register(sock, selectors.EVENT_READ)

    def _read(self, sock: socket.socket) -> None:
        pending = self.pending[sock]
        try:
            chunk = sock.recv(4 + FIRST_BYTES - len(pending.data))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        pending.data += chunk
        have = len(pending.data)
        size = struct.unpack(">I", pending.data[:4])[0] if have >= 4 else 0
        if not chunk or size > FIRST_BYTES or (have >= 4 and have > 4 + size):  # gone, too long, or more than asked
            return self._drop(sock)
        if have < 4 or have < 4 + size:
            return
        self._forget(sock)
        try:
            request = json.loads(bytes(pending.data[4:]))
        except Exception:  # noqa: BLE001 - not JSON, nested too deep: another protocol, nothing to answer
            return sock.close()
        self._start(sock, pending, request)

    def _learner(self, pending: _Pending, request) -> str | None:
        """Who asks: the Unix user, or the name a valid TCP credential is for (None: no valid one)."""
        if pending.uid is not None:
            return f"uid {pending.uid}"
        name, given = (request.get("learner"), request.get("token")) if isinstance(request, dict) else (None, None)
        if self.secret is None or not isinstance(name, str) or not isinstance(given, str) or not name:
            return None
        if not name.isprintable() or not given.isascii() or \
                not hmac.compare_digest(token(self.secret, name).encode(), given.encode()):
            return None
        return f"learner {name}"

    def _start(self, sock: socket.socket, pending: _Pending, request) -> None:
        learner = self._learner(pending, request)
        if learner is None:
            return self._answer(sock, {"refused": "credential"})
        capstone = isinstance(request, dict) and request.get("check") in CAPSTONE_CHECKS
        running = [c for c in self.children.values() if c.busy()]
        theirs = [c for c in running if c.learner == learner]
        if len(self.children) >= CHILDREN + PER_LEARNER or len(running) >= CHILDREN or len(theirs) >= PER_LEARNER \
                or capstone and (sum(c.capstone for c in running) >= CAPSTONE
                                 or sum(c.capstone for c in theirs) >= CAPSTONE_PER_LEARNER):
            return self._answer(sock, {"busy": True})
        folder = Path(tempfile.mkdtemp(prefix="tinylm-check-", dir=self.scratch))
        working, done = os.pipe()
        until = time.monotonic() + DEADLINE
        pid = os.fork()
        if pid == 0:
            os.close(working)
            self._child(sock, request, folder, done, learner, until - WRAP_UP)  # never returns
        os.close(done)
        os.set_blocking(working, False)
        self.children[pid] = _Child(learner, capstone, until, folder, working, sock)

    def _answer(self, sock: socket.socket, message: dict) -> None:
        """A short answer without waiting (it fits the socket's buffer), then the connection is closed."""
        try:
            sock.setblocking(False)
            try:
                sock.recv(4 + FIRST_BYTES)  # what has come of the request: closed unread, TCP would reset the answer
            except OSError:
                pass
            _tell(sock, message)
        finally:
            sock.close()

    def _forget(self, sock: socket.socket) -> None:
        self.selector.unregister(sock)
        del self.pending[sock]

    def _drop(self, sock: socket.socket) -> None:
        self._forget(sock)
        sock.close()

    # ---- the children

    def _child(self, sock: socket.socket, request, folder: Path, done: int, learner: str, until: float) -> None:
        """Run the check until ``until`` at most, close ``done``, answer (the verdict, or :func:`timed_out`), exit
        (never returns). The parent ends it at its deadline and removes ``folder``."""
        status, language = 1, i18n.language()
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.alarm(DEADLINE + 60)  # should the parent be gone (it ends the child at DEADLINE)
            self.selector.close()
            self.listener.close()
            for other in self.pending:
                other.close()
            for child in self.children.values():
                if child.working >= 0:
                    os.close(child.working)
                child.sock.close()  # the other learners' connections: theirs end when their check does
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            limit = _address_space() + MEMORY
            if soft == resource.RLIM_INFINITY or soft > limit:
                resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
            workspace.SandboxWorkspace.root = str(folder)
            sock.setblocking(True)
            sock.settimeout(IDLE)
            try:
                try:
                    answer = {"done": judge(request, sock, self.released, until)}
                except capstone.DeadlineReached:
                    with i18n.using(language):  # the log's, not the learner's (judge set that)
                        _log(say("grading.service.log_deadline", learner=learner, seconds=DEADLINE))
                    answer = timed_out()
                os.close(done)
                sock.settimeout(IDLE)
                client.send(sock, answer)
            except (ConnectionError, OSError, ValueError):
                pass  # the learner's side went away (an interrupted cell) or spoke another protocol: nothing to answer
            except Exception as e:  # noqa: BLE001 - one line in the log, not a traceback a client can repeat at will
                _log(say("grading.service.log_error", error=type(e).__name__))
            status = 0
        finally:
            os._exit(status)

    def _tend(self) -> None:
        """End requests and children past their time, reap the children that ended, remove what they left."""
        now = time.monotonic()
        for sock in [s for s, p in self.pending.items() if now > p.until]:
            self._drop(sock)
        for pid, child in self.children.items():
            if child.capstone or now > child.until:  # the cgroups its commands run in, seen while they run
                tree = _descendants(pid)
                child.cgroups |= _cgroups(tree)
                if now > child.until and not child.killed:
                    _log(say("grading.service.log_deadline", learner=child.learner, seconds=DEADLINE))
                    _kill([pid, *tree])
                    child.killed = True
        while self.children:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            child = self.children.pop(pid, None)
            if child is not None:
                if child.working >= 0:
                    os.close(child.working)
                if child.killed:  # dead now: nothing else writes on the connection
                    _tell(child.sock, timed_out())
                child.sock.close()
                _remove(child.folder)
                self.leftover |= child.cgroups
        for name in list(self.leftover):
            remove_cgroups(name, wait=0)
            if not _cgroup_exists(name):
                self.leftover.discard(name)

    def close(self) -> None:
        """Stop: every child ended, what they left removed, the sockets closed."""
        for pid, child in self.children.items():
            tree = _descendants(pid)
            child.cgroups |= _cgroups(tree)
            _kill([pid, *tree])
        for pid, child in self.children.items():
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            child.sock.close()
            _remove(child.folder)
            self.leftover |= child.cgroups
        self.children.clear()
        for name in self.leftover:
            remove_cgroups(name)
        for sock in list(self.pending):
            self._drop(sock)
        self.selector.close()
        self.listener.close()


def timed_out() -> dict:
    """The answer to a check that ran past :data:`DEADLINE` (ended :data:`WRAP_UP` before it, or killed there): the
    learner's side says so, with the seconds, in the learner's language."""
    return {"timeout": round(DEADLINE)}


def _tell(sock: socket.socket, message: dict) -> None:
    """Send a short ``message`` without waiting (it fits the socket's buffer; a learner's side that reads nothing more
    does not get it)."""
    try:
        sock.setblocking(False)
        data = json.dumps(message).encode()
        sock.send(struct.pack(">I", len(data)) + data)
    except OSError:
        pass


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _log(line: str) -> None:
    print(f"tinylm-check-service: {line}", file=sys.stderr, flush=True)


def warm() -> None:
    """Before the children fork: import every reference module, and run every check but the capstone's (which run
    commands) once on its reference, through the agent's wire as a learner's request is. A check's first run
    imports and builds what later runs reuse (the first optimizer step alone imports ``torch._dynamo``, about
    1.4 s), and each child starts from this warm process. About 3 s, once."""
    import tinylm_solutions
    for info in pkgutil.iter_modules(tinylm_solutions.__path__):
        importlib.import_module(f"tinylm_solutions.{info.name}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: OpenMP's pool, once started, hangs a forked child's first parallel op
    try:
        for e in registry.checked():
            if e.module != "capstone":
                remote.verdict(getattr(tinylm_checks, e.check), remote.LoopbackTransport({e.name: e.reference()}),
                               e.name, seeds=(0,))
    finally:
        torch.set_num_threads(threads)


def socket_folder(path: Path) -> bool:
    """Check the folder of the Unix socket ``path`` before listening there; whether only this user may connect.

    The default socket's folder (:func:`tinylm_checks.client.private_folder`) is made here, 0700, and must be this
    user's own; another socket's folder must belong to this user too, since the learners' side accepts a service that
    runs as the folder's owner (a class's folder), and others may not write in it.

    Raises:
        UsageError: the folder is missing, or it fails those rules.
    """
    folder = path.parent
    if str(path) == client.private_address():
        folder.mkdir(mode=0o700, exist_ok=True)
        problem = client.private_problem(folder)
        if problem:
            raise UsageError(say("grading.service.not_private", folder=folder, problem=problem))
        return True
    try:
        found = folder.stat()
    except OSError as e:
        raise UsageError(say("grading.service.no_folder", folder=folder, error=e.strerror)) from None
    if found.st_uid != os.getuid():
        raise UsageError(say("grading.service.folder_not_yours", folder=folder, owner=found.st_uid, uid=os.getuid()))
    if found.st_mode & 0o002:  # anyone could put their socket there (learners' sides would refuse it: checks stop)
        raise UsageError(say("grading.service.folder_open", folder=folder))
    return False


def serve(where: str, released: str, ready=None, secret: bytes | None = None) -> None:
    """Listen at ``where`` (a Unix socket's path, or ``tcp://HOST:PORT``) until SIGTERM or SIGINT, answering the checks
    of the stages up to ``released``; over TCP, only requests with a credential made with ``secret``. A socket file is
    removed on the way out. ``ready()`` is called once it accepts connections.

    Raises:
        UsageError: the socket's folder is not fit (:func:`socket_folder`), or TCP without a secret.
    """
    released = learnerenv.stage(released)
    hostport, path = client.tcp(str(where)), Path(where)
    if hostport and not secret:
        raise UsageError(say("grading.service.needs_secret"))
    owner_only = False if hostport else socket_folder(path)
    if not hostport and not owner_only:
        reference = learnerenv.ROOT / "tinylm_solutions" / "__init__.py"
        if learnerenv.readable_by_others(reference):
            _log(say("grading.service.course_open", folder=learnerenv.ROOT))
    if not hostport and (path.is_socket() or path.is_symlink()):
        path.unlink()  # a socket left by a service that was killed (a live one would answer: see main)
    workspace.install()
    warm()
    if hostport:
        listener = socket.create_server(hostport, backlog=128)
    else:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        # learners connect to a class's socket (what it answers is what their own check cell would show)
        os.chmod(path, 0o600 if owner_only else 0o666)
        listener.listen(128)
    service = Service(listener, released, owner_only, secret)
    signal.signal(signal.SIGTERM, service.stop)
    signal.signal(signal.SIGINT, service.stop)
    if ready:
        ready()
    try:
        service.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        if not hostport:
            path.unlink(missing_ok=True)


def running(where: str) -> bool:
    """Whether a service answers at ``where``."""
    try:
        client.connect(str(where)).close()
    except (OSError, ValueError, client.ServiceUnavailable):
        return False
    return True


def main(argv=None) -> int:
    """``tinylm-check-service --released STAGE [--socket PATH] [--secret FILE]``: serve until stopped (exit 0); 2 for
    bad arguments, or when one already answers there."""
    parser = _Parser(prog="tinylm-check-service", description=_help(say("grading.service.description")))
    parser.add_argument("--socket", default=client.address(),
                        help=_help(say("grading.service.help.socket", env=client.ENV, default=client.address())))
    parser.add_argument("--released", help=_help(say("grading.service.help.released")))
    parser.add_argument("--secret", type=Path, help=_help(say("grading.service.help.secret", env=client.TOKEN_ENV)))
    args = parser.parse_args(argv)
    if not args.released:
        parser.error(say("grading.service.needs_released"))
    try:
        hostport = client.tcp(args.socket)
        released = learnerenv.stage(args.released)
    except ValueError as e:
        parser.error(str(e))
    secret = None
    if hostport and args.secret is None:
        return _fail(parser.prog, UsageError(say("grading.service.needs_secret")))
    if hostport:
        try:
            secret = args.secret.read_bytes().strip()
        except OSError as e:
            secret, error = b"", e.strerror
        else:
            error = say("grading.service.short_secret")
        if len(secret) < 16:
            return _fail(parser.prog, UsageError(say("grading.service.no_secret", path=args.secret, error=error)))
    if running(args.socket):
        return _fail(parser.prog, UsageError(say("grading.service.running", path=args.socket)))
    try:
        serve(args.socket, released, secret=secret,
              ready=lambda: print(say("grading.service.ready", path=args.socket, pid=os.getpid()), flush=True))
    except UsageError as e:
        return _fail(parser.prog, e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
