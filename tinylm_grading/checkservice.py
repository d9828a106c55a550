"""The check service: the course's checks, run for learners whose environment holds no answers.

A class's learners work in an environment without the reference (``make learner-env``); their ``check_x(obj)`` is
a request to this service (:mod:`tinylm_checks.client`). The service holds the reference and the checks, runs
``check_x`` here, and reaches the learner's ``obj`` through the same agent protocol as the grader
(:func:`tinylm_grading.remote.verdict`): requests go to the agent in the learner's kernel over the connection, the
answers come back as data (a tensor as its dtype, shape and raw elements), never as pickled objects. So a
learner's check names the same mistakes, with the same words, as in the full environment.

One process imports torch, the checks and the reference once, then forks a child for each connection
(``socketserver.ForkingMixIn``): a check starts in milliseconds, and one learner's check cannot disturb another's
(language, random state). The capstone's commands run in a sandbox of their own, as when grading
(:mod:`tinylm_grading.workspace`). In a class it runs as its own user, so that a learner can connect to its
socket but not read its files.

``tinylm-check-service [--socket PATH]`` (``make check-service`` starts it in the background).
"""
from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import resource
import signal
import socket
import socketserver
import struct
import sys
from pathlib import Path

import torch

import tinylm_checks
from tinylm_checks import client
from tinylm_checks._text import say
from tinylm_solutions import i18n
from tinylm_solutions.cli import UsageError, _fail, _help, _Parser

from . import learnerenv, registry, remote, workspace

IDLE = 120.0
"""Seconds a connection may wait for the learner's side's next answer (a learner's function that runs longer is
stopped; the learner sees the service break off)."""
FIRST = 10.0
"""Seconds to send the request, and its most bytes (``FIRST_BYTES``): an idle connection does not hold a child."""
FIRST_BYTES = 4096
DEADLINE = 600
"""Seconds a connection's child lives at most, whatever comes in (the capstone's checks run 2 to 4 commands)."""
CHILDREN, PER_USER = 32, 4
"""Checks running at once: in all, and for one Unix user (the socket tells the service who connects). More are
refused at once with a "busy" answer; the service never waits for a child to end before it accepts."""
MEMORY = 3 << 30
"""Bytes of address space a child may add to the warm process's (a soft limit: the capstone's sandboxed commands
set their own)."""
SEEDS = range(1 << 16)


def checks(released: str | None = None) -> frozenset[str]:
    """What a learner may ask for: the checks of the exercises of the stages up to ``released`` (None: all)."""
    stage = learnerenv.stage(released) if released else None
    return frozenset(e.check for e in registry.EXERCISES if e.check and (stage is None or e.stage <= stage))


class SocketTransport:
    """Requests to the agent in the learner's kernel, over the connection (:mod:`tinylm_checks.client`'s wire)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock

    def request(self, payload: dict) -> dict:
        client.send(self.sock, {"agent": payload})
        try:
            reply = client.receive(self.sock)
        except (ValueError, ConnectionError, OSError) as e:
            raise remote.AgentError(f"the learner's side did not answer ({type(e).__name__}: {e})") from None
        if not isinstance(reply, dict):
            raise remote.AgentError("the agent's answer is not an object")
        return reply


def judge(request, sock: socket.socket, allowed: frozenset[str]) -> dict:
    """The verdict on one request ``{"check", "name", "seed", "lang"}``: ``{"passed", "text", "failure"}``. A check
    not in ``allowed`` (a stage not released yet: its check would run the reference), a seed outside ``SEEDS`` (a
    capstone check sizes its model by it) or a malformed request is refused."""
    if not isinstance(request, dict) or request.get("check") not in allowed or \
            not isinstance(request.get("name"), str) or not request["name"].isidentifier() or \
            type(request.get("seed", 0)) is not int or request.get("seed", 0) not in SEEDS or \
            request.get("lang", "en") not in i18n.LANGUAGES:
        return {"passed": False, "text": f"not a request this service answers: {str(request)[:200]}",
                "failure": None}
    i18n.set_language(request.get("lang", "en"))
    check = getattr(tinylm_checks, request["check"])
    passed, text, failure = remote.verdict(check, SocketTransport(sock), request["name"],
                                           seeds=(request.get("seed", 0),))
    return {"passed": passed, "text": text, "failure": failure.to_data() if failure is not None else None}


class Handler(socketserver.BaseRequestHandler):
    """One connection, in a child of its own: a deadline for the whole of it, a memory limit, one verdict."""

    def handle(self):
        signal.alarm(DEADLINE)
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = _address_space() + MEMORY
        if soft == resource.RLIM_INFINITY or soft > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        try:
            self.request.settimeout(FIRST)
            request = client.receive(self.request, FIRST_BYTES)
            self.request.settimeout(IDLE)
            client.send(self.request, {"done": judge(request, self.request, self.server.allowed)})
        except (ConnectionError, OSError, ValueError):
            pass  # the learner's side went away (an interrupted cell) or spoke another protocol: nothing to answer
        except Exception as e:  # noqa: BLE001 - one line in the log, not a traceback a client can repeat at will
            print(f"tinylm-check-service: a connection ended with {type(e).__name__}", file=sys.stderr, flush=True)


def _address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _peer_uid(sock: socket.socket) -> int | None:
    """The Unix user at the other end of a Unix socket (None over TCP)."""
    if sock.family != socket.AF_UNIX:
        return None
    return struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[1]


class _Forking(socketserver.ForkingMixIn):
    """A child per connection, at most ``CHILDREN`` (``PER_USER`` for one Unix user); one more is answered "busy"
    at once (socketserver's own limit would stop accepting until a child ends: 64 idle connections froze it)."""

    max_children = 1 << 30  # socketserver's blocking limit, never reached: process_request keeps the real one
    allowed: frozenset[str] = frozenset()

    def process_request(self, request, client_address):
        self.collect_children()
        children = self.active_children or set()
        self.owners = {pid: uid for pid, uid in getattr(self, "owners", {}).items() if pid in children}
        uid = _peer_uid(request)
        if len(children) >= CHILDREN or (uid is not None and list(self.owners.values()).count(uid) >= PER_USER):
            try:
                request.settimeout(1)
                client.send(request, {"busy": True})
            except OSError:
                pass
            self.shutdown_request(request)
            return
        pid = os.fork()
        if pid:
            self.active_children = children | {pid}
            self.owners[pid] = uid
            self.close_request(request)
            return
        status = 1
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            self.finish_request(request, client_address)
            status = 0
        finally:
            try:
                self.shutdown_request(request)
            finally:
                os._exit(status)


class Server(_Forking, socketserver.UnixStreamServer):
    pass


class TCPServer(_Forking, socketserver.TCPServer):
    """Across machines (a Kubernetes service): anyone who can reach the port can ask for checks, as on the socket."""
    allow_reuse_address = True


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


def _stop(*_):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: a second SIGTERM while closing changes nothing
    raise SystemExit(0)


def serve(where: str, ready=None, released: str | None = None) -> None:
    """Listen at ``where`` (a Unix socket's path, or ``tcp://HOST:PORT``) until SIGTERM or SIGINT, answering the checks
    of the stages up to ``released`` (None: all); a socket file is removed on the way out. ``ready()`` is called once
    it accepts connections."""
    hostport, path = client.tcp(str(where)), Path(where)
    if not hostport and (path.is_socket() or path.is_symlink()):
        path.unlink()  # a socket left by a service that was killed (a live one would answer: see main)
    workspace.install()
    warm()
    if hostport:
        server = TCPServer(hostport, Handler)
    else:
        server = Server(str(path), Handler)
        os.chmod(path, 0o666)  # learners connect to it; what it answers is what their own check cell would show
    server.allowed = checks(released)
    signal.signal(signal.SIGTERM, _stop)
    if ready:
        ready()
    try:
        server.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.server_close()
        if not hostport:
            path.unlink(missing_ok=True)


def running(where: str) -> bool:
    """Whether a service answers at ``where``."""
    try:
        client.connect(str(where)).close()
    except (OSError, ValueError):
        return False
    return True


def main(argv=None) -> int:
    """``tinylm-check-service [--socket PATH]``: serve until stopped (exit 0); 2 when one already answers there."""
    parser = _Parser(prog="tinylm-check-service", description=_help(say("grading.service.description")))
    parser.add_argument("--socket", default=client.address(),
                        help=_help(say("grading.service.help.socket", env=client.ENV, default=client.address())))
    parser.add_argument("--released", help=_help(say("grading.service.help.released")))
    args = parser.parse_args(argv)
    try:
        client.tcp(args.socket)
        checks(args.released)
    except ValueError as e:
        parser.error(str(e))
    if running(args.socket):
        return _fail(parser.prog, UsageError(say("grading.service.running", path=args.socket)))
    serve(args.socket, ready=lambda: print(say("grading.service.ready", path=args.socket, pid=os.getpid()), flush=True),
          released=args.released)
    return 0


if __name__ == "__main__":
    sys.exit(main())
