"""Python commands run as processes forked from one that has already imported PyTorch.

``python -m pytest`` or ``python train.py`` spends about 1.5 CPU seconds importing PyTorch before it runs a line of
its own, and the capstone's checks run many such commands (a test file against the reference and each broken
model, ``train.py`` twice, ``generate.py`` four times). A :class:`Forkserver` is one Python process, started on first
use, that imports the modules it is given (``torch``, ``pytest``, ``yaml``) and then forks a child per command (the
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
Linux only (``fork`` after importing PyTorch is what its own DataLoader workers do there); elsewhere, or when the
server cannot start, :func:`run` starts a new ``python`` per command with :mod:`subprocess`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

SERVER = r'''
# code: the forkserver's own program, run as python -c SERVER <requests fd> <replies fd> <modules to import>
import json, os, select, signal, sys, time
requests, replies = os.fdopen(int(sys.argv[1]), "r"), os.fdopen(int(sys.argv[2]), "w")
for name in sys.argv[3:]:
    try:
        __import__(name)
    except Exception:  # a module that cannot be imported is imported by the command itself, or fails there
        pass
del name


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
    requests.close()
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


for line in requests:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            _child(request)
        finally:
            os._exit(1)
    ended = os.pidfd_open(pid)
    ended = select.select([ended], [], [], request["timeout"])[0] or os.close(ended)
    if ended:
        os.close(ended[0])
    try:
        os.killpg(pid, signal.SIGKILL)  # at its timeout; or what it left running
    except (ProcessLookupError, PermissionError):
        pass
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    replies.write(json.dumps({"code": code if ended else -9}) + "\n")
    replies.flush()
'''


class Forkserver:
    """A process that has imported ``preload`` (started on first use, with ``env``), and runs commands as its forked
    children (see the module docstring). One command at a time; thread-safe."""

    def __init__(self, preload: tuple[str, ...], env: dict[str, str]):
        self.preload, self.env = preload, env
        self.proc, self.lock = None, threading.Lock()

    def _start(self) -> None:
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER, str(requests_r), str(replies_w), *self.preload],
                                     pass_fds=(requests_r, replies_w), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env,
                                     cwd="/")  # its imports come from the environment, never from a folder's files
        os.close(requests_r)
        os.close(replies_w)
        self.requests, self.replies = os.fdopen(requests_w, "w"), os.fdopen(replies_r, "r")

    def run(self, args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
        """``python *args`` in ``cwd`` with ``env``: (exit code, stdout and stderr). RuntimeError if the server
        ended (it is started again on the next call)."""
        with self.lock, tempfile.TemporaryDirectory(prefix="tinylm-command-") as scratch:
            output = Path(scratch) / "output"
            if self.proc is None or self.proc.poll() is not None:
                self._start()
            try:
                self.requests.write(json.dumps({"args": list(args), "cwd": str(cwd), "env": env,
                                                "output": str(output), "timeout": timeout}) + "\n")
                self.requests.flush()
                reply = self.replies.readline()
            except OSError:
                reply = ""
            if not reply:
                self.proc.kill()
                raise RuntimeError("the forkserver ended")
            text = output.read_bytes().decode("utf-8", "replace") if output.is_file() else ""
            return json.loads(reply)["code"], text


_SERVERS: dict[tuple, Forkserver] = {}


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float,
        preload: tuple[str, ...] = ("torch", "pytest", "yaml")) -> tuple[int, str]:
    """``python *args`` (a script and its arguments, or ``-m module ...``) in ``cwd`` with exactly ``env``, as a child
    of this process's :class:`Forkserver` for ``preload`` (one per preload list and environment's thread settings):
    (exit code, stdout and stderr; -9 after ``timeout`` seconds)."""
    if sys.platform == "linux" and args and (args[0] == "-m" and len(args) > 1 or args[0].endswith(".py")):
        key = (preload, *(env.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONDONTWRITEBYTECODE")))
        server = _SERVERS.get(key) or _SERVERS.setdefault(key, Forkserver(preload, env))
        try:
            return server.run(args, cwd, env, timeout)
        except RuntimeError:
            pass  # the server could not start or ended: a new process, as below
    try:
        done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return -9, (e.stdout or b"").decode("utf-8", "replace")
    return done.returncode, done.stdout.decode("utf-8", "replace")
