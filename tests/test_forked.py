"""tinylm_checks._forked: a command forked from a server that has imported PyTorch gives what ``python`` gives; so does
the new ``python`` it starts where it does not fork (``mode``: macOS, Windows; here with ``FORKS`` off)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tinylm_checks import _forked

SCRIPTS = {
    "show.py": "import os, sys\nprint(sys.argv, sys.path[0] == os.path.dirname(__file__), __file__, __name__,\n"
               "      os.getcwd(), os.environ.get('TINYLM_TEST_VALUE'), 'TINYLM_ZYGOTE_ONLY' in os.environ)\n",
    "exit3.py": "print('before')\nimport sys\nsys.exit(3)\n",
    "exit_message.py": "import sys\nsys.exit('a message')\n",
    "raises.py": "def f():\n    raise ValueError('a learner error')\n\nprint('printed first', flush=True)\nf()\n",
    "threads.py": "import torch\nprint(torch.get_num_threads())\n",
    "at_exit.py": "import atexit, tempfile, weakref\nclass A: pass\na = A()\n"
                  "weakref.finalize(a, print, 'finalized at exit')\natexit.register(print, 'atexit ran')\n"
                  "d = tempfile.TemporaryDirectory()\natexit.register(lambda: print(os.path.isdir(d.name)))\n"
                  "import os\nprint('registered')\n",
    "mymodule.py": "import sys\nprint('as a module', sys.argv[1:], __name__)\nraise SystemExit(0 if sys.argv[1:] == ['x'] else 4)\n",
    "tests/test_model.py": "from model import VALUE\n\ndef test_value():\n    assert VALUE == 1\n",
    "model.py": "VALUE = 1\n",
}
COMMANDS = [["show.py", "a", "b c"], ["at_exit.py"], ["exit3.py"], ["exit_message.py"], ["raises.py"], ["threads.py"],
            ["-m", "mymodule", "x"], ["-m", "mymodule", "y"], ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]]


@pytest.fixture(params=["forked", pytest.param("new python", marks=pytest.mark.slow)])
def mode(request, monkeypatch):
    """How :func:`_forked.run` runs a command: forked from its server (Linux), or as a new ``python`` (elsewhere; in
    the slow tier: each starts a Python that imports PyTorch, about 10 s in all)."""
    if request.param == "new python":
        monkeypatch.setattr(_forked, "FORKS", False)
    return request.param


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("forked")
    for name, text in SCRIPTS.items():
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text(text)
    return folder


def environ(**extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return {**env, "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "TINYLM_TEST_VALUE": "seen", **extra}


def python(args, folder, env, timeout=60) -> tuple[int, str]:
    done = subprocess.run([sys.executable, *args], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return done.returncode, done.stdout.decode()


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_forked_command_gives_what_python_gives(folder, args, mode):
    got = _forked.run(args, folder, environ(), 60)
    want = python(args, folder, environ())
    if args[:2] == ["-m", "pytest"]:  # the seconds it took differ
        got, want = ((code, text.rsplit(" in ", 1)[0]) for code, text in (got, want))
    assert got == want
    assert got[0] == {"exit3.py": 3, "exit_message.py": 1, "raises.py": 1}.get(args[0], 4 if args[-1] == "y" else 0)


def test_the_server_runs_the_commands(folder):
    _forked.run(["show.py"], folder, environ(), 60)
    server = next(s for key, s in _forked._SERVERS.items() if key[0] == _forked.PRELOAD)
    assert server.proc.poll() is None  # one process, still there for the next command
    start = time.perf_counter()
    assert _forked.run(["threads.py"], folder, environ(), 60) == (0, "1\n")
    assert time.perf_counter() - start < 1.0  # torch was imported already (a new python takes about 1.5 s)


def test_what_the_server_imported_is_not_finalized_at_a_command_s_exit(folder):
    """PyTorch's imports leave 174 finalizers (its operator libraries'): run at each command's exit, they took
    26-37 ms of a 45 ms command. A command's own finalizers still run (at_exit.py, above)."""
    (folder / "finalizers.py").write_text("import weakref\nprint(sum(f.atexit for f in weakref.finalize._registry))\n")
    assert python(["-c", "import torch, weakref\nprint(len(weakref.finalize._registry) > 100)"], folder,
                  environ()) == (0, "True\n")
    assert _forked.run(["finalizers.py"], folder, environ(), 60) == (0, "0\n")


def test_the_environment_is_the_command_s_own(folder):
    code, out = _forked.run(["show.py"], folder, environ(TINYLM_ZYGOTE_ONLY="1"), 60)
    assert out.rstrip().endswith("seen True")
    code, out = _forked.run(["show.py"], folder, environ(), 60)
    assert out.rstrip().endswith("seen False")


def test_nothing_a_command_does_reaches_the_next(folder):
    (folder / "sets.py").write_text("import torch, sys\ntorch.tinylm_marker = 1\nsys.modules['model'] = 'stale'\n"
                                    "print(torch.rand(1).item())\n")
    (folder / "reads.py").write_text("import torch\nprint(hasattr(torch, 'tinylm_marker'), torch.rand(1).item())\n"
                                     "import model\nprint(model.VALUE)\n")
    first = _forked.run(["sets.py"], folder, environ(), 60)
    second = _forked.run(["reads.py"], folder, environ(), 60)
    assert second[0] == 0 and second[1].startswith("False ") and second[1].endswith("\n1\n")
    assert first[1].strip() != second[1].split()[1]  # unseeded generators: afresh each time, as in a new python


def test_a_command_past_its_timeout_is_killed_with_what_it_printed(folder, mode):
    (folder / "slow.py").write_text(
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', 'tinylm_forked_leftover'])\n"
        "print('started', flush=True)\ntime.sleep(60)\n")
    start = time.perf_counter()
    assert _forked.run(["slow.py"], folder, environ(), 2) == (-9, "started\n")
    assert time.perf_counter() - start < 10
    time.sleep(0.5)
    leftovers = subprocess.run(["pgrep", "-f", "tinylm_forked_leftover"], capture_output=True, text=True).stdout
    assert leftovers == ""  # the command's own children went with it


def test_other_commands_start_a_new_python(folder):
    assert _forked.run(["-c", "print('new')"], folder, environ(), 60) == (0, "new\n")


def test_what_a_command_prints_comes_back_as_it_printed(folder, mode):
    """The output is read as UTF-8, and the command writes UTF-8 whatever the locale's encoding (a Chinese Windows'
    is code page 936; tests/test_portable.py runs this file under GB18030)."""
    (folder / "prints.py").write_text("print('张三 ✔ 猫追狗')\n", encoding="utf-8")
    assert _forked.run(["prints.py"], folder, environ(), 60) == (0, "张三 ✔ 猫追狗\n")


WAIT_FOR = ("import os, pathlib, sys, time\n"
            "pathlib.Path(sys.argv[1]).write_text(str(os.getpid()))  # started: its pid\n"
            "for _ in range(600):\n"
            "    if pathlib.Path(sys.argv[2]).exists():\n"
            "        print('saw', sys.argv[2]); sys.exit(0)\n"
            "    time.sleep(0.05)\n"
            "sys.exit(7)\n")


def test_commands_from_two_threads_run_at_once(folder, mode):
    """Each of the two commands waits for the other to start: they both end well only if they run at the same time
    (one after the other, the first would wait its 30 s and exit 7)."""
    import concurrent.futures
    (folder / "wait_for.py").write_text(WAIT_FOR)
    for name in ("a", "b"):
        (folder / name).unlink(missing_ok=True)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        first = pool.submit(_forked.run, ["wait_for.py", "a", "b"], folder, environ(), 60)
        second = pool.submit(_forked.run, ["wait_for.py", "b", "a"], folder, environ(), 60)
        assert (first.result(), second.result()) == ((0, "saw b\n"), (0, "saw a\n"))


def test_a_server_that_ends_fails_the_commands_it_ran_and_the_next_starts_anew(folder):
    import concurrent.futures
    (folder / "wait_for.py").write_text(WAIT_FOR)
    (folder / "never").unlink(missing_ok=True)
    server = _forked.Forkserver(("torch",), environ())
    assert server.run(["threads.py"], folder, environ(), 60) == (0, "1\n")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(server.run, ["wait_for.py", "started", "never"], folder, environ(), 60)
        for _ in range(200):
            if (folder / "started").exists():
                break
            time.sleep(0.05)
        first = server.proc
        first.kill()
        with pytest.raises(RuntimeError, match="the forkserver ended"):
            waiting.result(timeout=30)
    assert server.run(["threads.py"], folder, environ(), 60) == (0, "1\n")
    assert server.proc is not first and server.proc.poll() is None
    server.proc.kill()


def test_when_its_client_ends_the_server_ends_with_the_commands_it_runs(folder):
    """A kernel that exits closes the server's requests: the server kills what it runs and ends."""
    script = (f"import sys, threading, time\nsys.path.insert(0, {str(_forked.Path(_forked.__file__).parents[1])!r})\n"
              "from pathlib import Path\nfrom tinylm_checks import _forked\n"
              "server = _forked.Forkserver(('torch',), {'PATH': '/usr/bin:/bin', 'OMP_NUM_THREADS': '1'})\n"
              f"folder = Path({str(folder)!r})\n"
              "threading.Thread(target=server.run, args=(['wait_for.py', 'child_started', 'never'], folder, "
              "{'OMP_NUM_THREADS': '1'}, 60), daemon=True).start()\n"
              "while not (folder / 'child_started').exists():\n    time.sleep(0.05)\n"
              "print(server.proc.pid, flush=True)\n")
    (folder / "wait_for.py").write_text(WAIT_FOR)
    (folder / "child_started").unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    pids = [int(done.stdout), int((folder / "child_started").read_text())]  # the server's, its command's
    for _ in range(100):
        if not any(running(pid) for pid in pids):
            break
        time.sleep(0.1)
    assert [running(pid) for pid in pids] == [False, False]


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is no zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_process_forked_after_the_server_started_runs_commands_on_a_server_of_its_own(folder):
    """The check service forks a child per request: the parent's server (and the thread reading its replies) stay
    the parent's."""
    assert _forked.run(["threads.py"], folder, environ(), 60) == (0, "1\n")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write, repr(_forked.run(["threads.py"], folder, environ(), 60)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        assert f.read() == "(0, '1\\n')"
    os.waitpid(pid, 0)
    assert _forked.run(["threads.py"], folder, environ(), 60) == (0, "1\n")


def test_a_server_nobody_holds_ends(folder):
    """Autograding starts a server per worker and drops them when the class is graded: each must end then."""
    import gc
    server = _forked.Forkserver(("torch",), environ())
    assert server.run(["threads.py"], folder, environ(), 60) == (0, "1\n")
    proc = server.proc
    del server
    gc.collect()
    assert proc.wait(timeout=30) == 0


def test_the_commands_start_with_an_optimizer_s_imports_done(folder):
    """A process's first torch.optim optimizer imports torch._dynamo (0.75 s): the learner's overfit test and train.py
    each build one."""
    (folder / "dynamo.py").write_text("import sys\nprint('torch._dynamo' in sys.modules)\n")
    assert _forked.run(["dynamo.py"], folder, environ(), 60) == (0, "True\n")


def test_a_repository_starts_the_capstone_checks_server_unless_the_grader_runs_them(folder, tmp_path, monkeypatch):
    from tinylm_checks import Repository, capstone  # (today's modules: a test of grading.fresh may have loaded anew)
    forked = capstone._forked
    monkeypatch.setattr(forked, "_SERVERS", {})
    monkeypatch.setattr(capstone, "WORKSPACE", capstone.Workspace)  # (a test of the grader may have installed its own)
    Repository(tmp_path)
    [server] = forked._SERVERS.values()
    started = server.proc
    assert started.poll() is None  # started, in the background
    with capstone.Workspace({"threads.py": SCRIPTS["threads.py"]}) as ws:
        assert ws.run(["threads.py"]) == (0, "1\n")
    assert list(forked._SERVERS.values()) == [server] and server.proc is started  # the one the commands then use
    started.kill()

    class Sandboxed(capstone.Workspace):
        pass
    monkeypatch.setattr(forked, "_SERVERS", {})
    monkeypatch.setattr(capstone, "WORKSPACE", Sandboxed)
    Repository(tmp_path)
    assert forked._SERVERS == {}


@pytest.mark.parametrize("when", ["once they run", "at once"])
def test_an_interrupted_check_ends_the_commands_it_waits_for(folder, when, mode):
    """A learner who stops a capstone check (Kernel > Interrupt) gets the kernel back at once, and the commands the
    check's threads wait for end with it (each would run to its 300 s timeout). "At once": the interrupt comes as the
    check starts its threads."""
    script = (f"import os, signal, sys, threading, time\n"
              f"sys.path.insert(0, {str(_forked.Path(_forked.__file__).parents[1])!r})\n"
              "from tinylm_checks import capstone\n"
              f"capstone._forked.FORKS = {mode == 'forked'}\n"
              "signal.signal(signal.SIGINT, signal.default_int_handler)  # as a kernel has (an xdist worker ignores it)\n"
              f"ws = capstone.Workspace({{'wait_for.py': {WAIT_FOR!r}}})\n"
              "sent = []\n"
              "def interrupt():  # 10 ms in, as the check starts its threads; or once as many commands run as slots\n"
              "    time.sleep(0.01)\n"
              f"    while {when == 'once they run'} and sum((ws.path / n).exists() for n in 'abcde') < capstone.WORKERS:\n"
              "        time.sleep(0.05)\n"
              "    sent.append(time.perf_counter())\n"
              "    os.kill(os.getpid(), signal.SIGINT)\n"
              "try:\n"
              "    threading.Thread(target=interrupt, daemon=True).start()\n"
              "    capstone._at_once([lambda n=name: ws.run(['wait_for.py', n, 'never']) for name in 'abcde'])\n"
              "except KeyboardInterrupt:\n"
              "    print('interrupted within 5 s:', time.perf_counter() - sent[0] < 5)\n"
              "time.sleep(0.5)\n"
              "started = [name for name in 'abcde' if (ws.path / name).exists()]\n"
              "print('started all but', 5 - len(started) if len(started) == capstone.WORKERS else 'none')\n"
              "pids = [int((ws.path / name).read_text()) for name in started]\n"
              "for _ in range(50):\n"
              "    if not any(os.path.exists(f'/proc/{pid}') for pid in pids):\n"
              "        break\n"
              "    time.sleep(0.1)\n"
              "print('running:', [os.path.exists(f'/proc/{pid}') for pid in pids])  # while this kernel lives on\n"
              "ws.__exit__(None, None, None)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    if when == "at once":  # the commands may or may not have started: those that did have ended
        assert lines[0] == "interrupted within 5 s: True" and lines[-1].replace("True", "") == lines[-1], done.stdout
        return
    want = ["interrupted within 5 s: True", f"started all but {5 - min(_capstone_workers(), 5)}",
            f"running: {[False] * min(_capstone_workers(), 5)}"]
    assert lines == want, done.stdout + done.stderr  # the others, waiting for a slot, never start


def _capstone_workers() -> int:
    from tinylm_checks import capstone
    return capstone.WORKERS


def test_the_server_imports_the_pytest_plugins_a_run_would():
    """PYTEST_PLUGINS is what pytest's default plugins leave to each run to import, with this pytest."""
    code, out = python(["-c", "import sys, pytest\nfrom _pytest.config import default_plugins\n"
                              "print(' '.join(p for p in default_plugins if '_pytest.' + p not in sys.modules))"],
                       "/", environ())
    assert (code, out.split()) == (0, list(_forked.PYTEST_PLUGINS))
