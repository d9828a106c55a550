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
of UTF-8 JSON (:func:`send`, :func:`receive`). The learner's side sends ``{"check", "name", "seed", "lang"}``,
then answers each ``{"agent": request}`` with the agent's reply, until ``{"done": {"passed", "text",
"failure"}}``.
"""
from __future__ import annotations

import json
import os
import socket
import struct
import tempfile
from pathlib import Path

from tinylm_solutions import i18n

from ._text import say
from .agent import Agent
from .failure import CheckFailure

MAX_MESSAGE = 64 << 20
"""Bytes: the longest message either side reads (a check's tensors are a few MB at most)."""

ENV = "TINYLM_CHECK_SERVICE"


class ServiceUnavailable(RuntimeError):
    """The check service cannot be reached, or broke off: the learner's code is not judged."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"\x1b[31mServiceUnavailable\x1b[0m: {self}"]


def address() -> str:
    """Where the check service listens: ``$TINYLM_CHECK_SERVICE`` (a Unix socket's path, or ``tcp://HOST:PORT``), else
    ``<tmp>/tinylm-check-service-<uid>.sock`` (the service a user started for themselves with ``make check-service``)."""
    return os.environ.get(ENV) or str(Path(tempfile.gettempdir()) / f"tinylm-check-service-{os.getuid()}.sock")


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
    """A connection to ``where`` (see :func:`address`). Raises OSError when nothing answers there."""
    hostport = tcp(where)
    if hostport:
        sock = socket.create_connection(hostport, timeout=10)
        sock.settimeout(None)  # the learner's code runs while the service waits: no limit on this side
        return sock
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(where)
    except OSError:
        sock.close()
        raise
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
    bytes or not JSON."""
    (n,) = struct.unpack(">I", _exactly(sock, 4))
    if n > limit:
        raise ValueError(f"a message of {n} bytes (at most {limit})")
    return json.loads(_exactly(sock, n))


def _name(obj) -> str:
    name = getattr(obj, "__name__", None)
    return name if isinstance(name, str) and name.isidentifier() else "learner_object"


def run(check: str, obj, seed: int = 0, quiet: bool = False) -> None:
    """Run the service's ``check`` on ``obj``: print the line a passed check prints (unless ``quiet``), or raise the
    check's :class:`CheckFailure`.

    Raises:
        CheckFailure: the check failed.
        ServiceUnavailable: no check service listens at :func:`address`, or it broke off.
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
                send(sock, {"check": check, "name": name, "seed": int(seed), "lang": i18n.language()})
            except (BrokenPipeError, ConnectionResetError):
                pass  # a full service answers "busy" and closes without reading: that answer is still there to read
            while True:
                message = receive(sock)
                if not isinstance(message, dict):
                    raise ValueError("not a message of the protocol")
                if "agent" in message:
                    send(sock, json.loads(agent.handle(json.dumps(message["agent"]))))
                    continue
                if message.get("busy") is True:
                    raise ServiceUnavailable(say("client.busy", path=path))
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
