"""The check service: the course's checks, run for learners whose environment holds no answers.

A class's learners work in an environment without the reference (``make learner-env``); their ``check_x(obj)`` is
a request to this service (:mod:`tinylm_checks.client`). The service holds the reference and the checks, runs
``check_x`` here, and reaches the learner's ``obj`` through the same agent protocol as the grader
(:func:`tinylm_grading.remote.verdict`): requests go to the agent in the learner's kernel over the connection, the
answers come back as data (tensors through ``torch.load(weights_only=True)``), never as pickled objects. So a
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
import signal
import socket
import socketserver
import sys
from pathlib import Path

import tinylm_checks
from tinylm_checks import client
from tinylm_checks._text import say
from tinylm_solutions import i18n
from tinylm_solutions.cli import UsageError, _fail, _help, _Parser

from . import learnerenv, remote, workspace

IDLE = 600.0
"""Seconds a connection may wait for the learner's side (a learner's function that runs this long is stopped by
the learner, with an interrupt; the service's child then goes away)."""

CHECKS = frozenset(learnerenv.check_names())
"""What a learner may ask for: the exercises' checks, by name."""


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


def judge(request, sock: socket.socket) -> dict:
    """The verdict on one request ``{"check", "name", "seed", "lang"}``: ``{"passed", "text", "failure"}``."""
    if not isinstance(request, dict) or request.get("check") not in CHECKS or \
            not isinstance(request.get("name"), str) or not request["name"].isidentifier() or \
            type(request.get("seed", 0)) is not int or request.get("lang", "en") not in i18n.LANGUAGES:
        return {"passed": False, "text": f"not a request this service answers: {str(request)[:200]}",
                "failure": None}
    i18n.set_language(request.get("lang", "en"))
    check = getattr(tinylm_checks, request["check"])
    passed, text, failure = remote.verdict(check, SocketTransport(sock), request["name"], seeds=(request.get("seed", 0),))
    return {"passed": passed, "text": text, "failure": failure.to_data() if failure is not None else None}


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.settimeout(IDLE)
        try:
            verdict = judge(client.receive(self.request), self.request)
            client.send(self.request, {"done": verdict})
        except (ConnectionError, OSError, ValueError):
            pass  # the learner's side went away (an interrupted cell) or spoke another protocol: nothing to answer


class Server(socketserver.ForkingMixIn, socketserver.UnixStreamServer):
    max_children = 64


class TCPServer(socketserver.ForkingMixIn, socketserver.TCPServer):
    """Across machines (a Kubernetes service): anyone who can reach the port can ask for checks, as on the socket."""
    max_children = 64
    allow_reuse_address = True


def warm() -> None:
    """Import what the checks import on first use (every reference module), once, before the children fork."""
    import tinylm_solutions
    for info in pkgutil.iter_modules(tinylm_solutions.__path__):
        importlib.import_module(f"tinylm_solutions.{info.name}")


def _stop(*_):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: a second SIGTERM while closing changes nothing
    raise SystemExit(0)


def serve(where: str, ready=None) -> None:
    """Listen at ``where`` (a Unix socket's path, or ``tcp://HOST:PORT``) until SIGTERM or SIGINT; a socket file is
    removed on the way out. ``ready()`` is called once it accepts connections."""
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
    args = parser.parse_args(argv)
    try:
        client.tcp(args.socket)
    except ValueError as e:
        parser.error(str(e))
    if running(args.socket):
        return _fail(parser.prog, UsageError(say("grading.service.running", path=args.socket)))
    serve(args.socket, ready=lambda: print(say("grading.service.ready", path=args.socket, pid=os.getpid()), flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
