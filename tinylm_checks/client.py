"""A check that runs in the check service: the learner's side, for an environment that holds no answers.

In a class, the learner's environment has no reference code (``make learner-env``): ``check_x(obj)`` cannot
compare ``obj`` with an answer that is not there. Instead it asks the check service
(:mod:`tinylm_grading.checkservice`, which holds the reference and the checks, as its own user) to run
``check_x`` on it. The service reaches ``obj`` the way the grader reaches a learner's object: it sends requests
to an :class:`~tinylm_checks.agent.Agent` that holds ``obj`` here, in the learner's kernel ("call it on these
tensors"), and reads the answers back as data. When the check ends, the service sends its verdict: the line a
passed check prints, or the parts of the :class:`~tinylm_checks.CheckFailure` it raised, which is raised here with
the same text, mistake ids and message id. One body of check code answers both environments.

The wire: a Unix socket, or TCP between machines (:func:`address`: a Kubernetes cluster's learner pods reach the
service's pod by name); each message is a 4-byte big-endian length, then that many bytes
of UTF-8 JSON (:func:`send`, :func:`receive`), at most :data:`MAX_MESSAGE`. The learner's side sends ``{"check",
"name", "seed", "lang"}`` (over TCP with ``"learner"`` and ``"token"``: the credential the hub issued, from
``$TINYLM_CHECK_TOKEN``), then answers each ``{"agent": request}`` with the agent's reply, until ``{"done":
{"passed", "text", "failure"}}`` (or ``{"busy": true}``, ``{"refused": why}``, ``{"timeout": seconds}``: the check ran
past the service's limit).

Whom the learner's side talks to: everything it sends (the learner's functions run on the service's inputs, the
capstone's whole repository) goes only to the course's service. On a Unix socket the kernel says which user listens
(``SO_PEERCRED``): for the default socket, in this user's private folder, it must be this user; for another path
(a class's, ``$TINYLM_CHECK_SERVICE``), the owner of the socket's folder, where a learner cannot make files.
"""
from __future__ import annotations

import json
import os
import socket
import stat
import struct
import tempfile
from pathlib import Path

from tinylm_solutions import i18n

from ._text import say
from .agent import Agent
from .failure import CheckFailure

MAX_MESSAGE = 4 << 20
"""Bytes: the longest message either side reads. The course's largest is 0.78 MB (``check_generate``'s reference
answering a call), its capstone repository 13 kB (a learner's may hold 64 files of up to 200 kB: most of those fit);
a JSON message of 4 MiB takes at most about 100 MB to parse."""

ENV = "TINYLM_CHECK_SERVICE"
TOKEN_ENV = "TINYLM_CHECK_TOKEN"
"""``NAME:TOKEN``, the learner's credential over TCP (the hub sets it:
:func:`tinylm_grading.checkservice.credential`)."""


class ServiceUnavailable(RuntimeError):
    """The check service cannot be reached, or broke off: the learner's code is not judged."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


class CheckTimeout(ServiceUnavailable):
    """The check ran past the service's time limit and was stopped: the learner's code is not judged."""


def private_folder() -> Path:
    """``<tmp>/tinylm-<uid>``: the folder of the service a user starts for themselves (mode 0700, theirs)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"tinylm-{uid}"


def private_address() -> str:
    return str(private_folder() / "checks.sock")


def address() -> str:
    """Where the check service listens: ``$TINYLM_CHECK_SERVICE`` (a Unix socket's path, or ``tcp://HOST:PORT``), else
    ``<tmp>/tinylm-<uid>/checks.sock`` (the service a user started for themselves with ``make check-service``)."""
    return os.environ.get(ENV) or private_address()


def private_problem(folder: Path) -> str | None:
    """What makes ``folder`` no private folder of this user's (None: it is one: a folder, no symbolic link, this user's,
    no permission for anyone else). Another user could have made it first under the predictable name, to receive this
    user's checks.

    Raises:
        OSError: it does not exist.
    """
    found = os.lstat(folder)
    if not stat.S_ISDIR(found.st_mode):
        return say("client.problem.link" if stat.S_ISLNK(found.st_mode) else "client.problem.not_folder")
    if found.st_uid != os.getuid() or found.st_mode & 0o077:
        return say("client.problem.owner", uid=found.st_uid, mode=f"{stat.S_IMODE(found.st_mode):04o}")
    return None


def peer_uid(sock: socket.socket) -> int | None:
    """The user at the other end of a Unix socket, as the kernel says (None where it cannot: over TCP, or a system
    without ``SO_PEERCRED``)."""
    if not hasattr(socket, "SO_PEERCRED") or sock.family != getattr(socket, "AF_UNIX", None):
        return None
    return struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[1]


def tcp(where: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``tcp://HOST:PORT`` address, None for a Unix socket's path.

    Raises:
        ValueError: a ``tcp://`` address without a port number.
    """
    if not where.startswith("tcp://"):
        return None
    host, _, port = where[len("tcp://"):].rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"not tcp://HOST:PORT: {where!r}")
    return host.strip("[]"), int(port)


def connect(where: str) -> socket.socket:
    """A connection to the service at ``where`` (see :func:`address`).

    Raises:
        OSError: nothing answers there.
        ServiceUnavailable: this system has no Unix sockets, or what answers is not the course's service (the default
            socket's folder is not this user's private one, or the user listening is not the one expected).
    """
    hostport = tcp(where)
    if hostport:
        sock = socket.create_connection(hostport, timeout=10)
        sock.settimeout(None)  # the learner's code runs while the service waits: no limit on this side
        return sock
    if not hasattr(socket, "AF_UNIX"):
        raise ServiceUnavailable(say("client.no_unix_sockets", path=where, env=ENV))
    folder = Path(where).parent
    if where == private_address():
        problem = private_problem(folder)
        if problem:
            raise ServiceUnavailable(say("client.not_private", folder=folder, problem=problem))
        owner = os.getuid()
    else:
        owner = os.stat(folder).st_uid  # a class's folder, which only the service's user can write
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(where)
        uid = peer_uid(sock)
    except OSError:
        sock.close()
        raise
    if uid is not None and uid != owner:
        sock.close()
        raise ServiceUnavailable(say("client.not_the_service", path=where, uid=uid, owner=owner))
    return sock


def send(sock: socket.socket, message) -> None:
    data = json.dumps(message).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)


def _exactly(sock: socket.socket, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(sock: socket.socket, limit: int = MAX_MESSAGE):
    """The next message. Raises ConnectionError when the other side closed, ValueError for one longer than ``limit``
    bytes (its length is read first: the rest is never read) or not JSON."""
    (n,) = struct.unpack(">I", _exactly(sock, 4))
    if n > limit:
        raise ValueError(f"a message of {n} bytes (at most {limit})")
    return json.loads(_exactly(sock, n))


def _name(obj) -> str:
    name = getattr(obj, "__name__", None)
    return name if isinstance(name, str) and name.isidentifier() else "learner_object"


def _answer(agent: Agent, request) -> bytes:
    """The agent's reply to the service's ``request``, as JSON; one over :data:`MAX_MESSAGE` becomes an error the check
    reports as the learner's code's (the service would not read it)."""
    reply = agent.handle(json.dumps(request)).encode()
    if len(reply) > MAX_MESSAGE:
        reply = json.dumps({"error": "MessageTooLarge", "builtin": False,
                            "message": say("client.too_large", size=len(reply), limit=MAX_MESSAGE)}).encode()
    return reply


def _request(check: str, name: str, seed: int, where: str) -> dict:
    request = {"check": check, "name": name, "seed": int(seed), "lang": i18n.language()}
    if tcp(where):  # a Unix socket says who connects; over TCP the learner's credential does
        learner, _, token = os.environ.get(TOKEN_ENV, "").rpartition(":")
        request.update(learner=learner, token=token)
    return request


def run(check: str, obj, seed: int = 0, quiet: bool = False) -> None:
    """Run the service's ``check`` on ``obj``: print the line a passed check prints (unless ``quiet``), or raise the
    check's :class:`CheckFailure`.

    Raises:
        CheckFailure: the check failed.
        ServiceUnavailable: no check service listens at :func:`address`, it is not the course's, it refused, or it
            broke off.
        CheckTimeout: the check ran past the service's time limit (a ServiceUnavailable).
    """
    name, path = _name(obj), address()
    agent = Agent({name: obj})
    try:
        sock = connect(path)
    except (OSError, ValueError):
        raise ServiceUnavailable(say("client.no_service", path=path)) from None
    with sock:
        try:
            try:
                send(sock, _request(check, name, seed, path))
            except (BrokenPipeError, ConnectionResetError):
                pass  # a full service answers "busy" and closes without reading: that answer is still there to read
            while True:
                message = receive(sock)
                if not isinstance(message, dict):
                    raise ValueError("not a message of the protocol")
                if "agent" in message:
                    data = _answer(agent, message["agent"])
                    try:
                        sock.sendall(struct.pack(">I", len(data)) + data)
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the service ended the check meanwhile (its time was up): its answer is there to read
                    continue
                if message.get("busy") is True:
                    raise ServiceUnavailable(say("client.busy", path=path))
                if message.get("refused") == "credential":
                    raise ServiceUnavailable(say("client.no_credential", path=path, env=TOKEN_ENV))
                if "refused" in message:
                    raise ServiceUnavailable(say("client.refused", path=path))
                if type(message.get("timeout")) is int:
                    raise CheckTimeout(say("client.timed_out", check=check, seconds=message["timeout"]))
                done = message.get("done")
                if not isinstance(done, dict):
                    raise ValueError("not a message of the protocol")
                break
        except (OSError, ValueError) as e:
            raise ServiceUnavailable(say("client.broke_off", path=path, error=f"{type(e).__name__}: {e}")) from None
    if done.get("passed") is True:
        if not quiet:
            print(str(done.get("text", "")), end="")
        return None
    if done.get("failure") is not None:
        raise CheckFailure.from_data(done["failure"])
    raise CheckFailure(check, str(done.get("text", "")), text=say("core.headline", check=check,
                                                                   problem=str(done.get("text", ""))))


def remote_check(check: str):
    """``check_x(obj, seed=0, quiet=False)`` for the learner's environment: :func:`run` with that check's name."""
    def check_x(obj, *, seed: int = 0, quiet: bool = False) -> None:
        return run(check, obj, seed=seed, quiet=quiet)
    check_x.__name__ = check_x.__qualname__ = check
    check_x.__doc__ = f"Run the course's ``{check}`` on ``obj`` in the check service (see tinylm_checks.client)."
    return check_x
