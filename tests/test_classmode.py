"""Class mode against a learner who knows Linux (issue 38, items 2, 3 and 7): each attack a security review made on
the check service, the learners' side of it and their environment, made again here; each must fail.

- A service started without its released stage answered every stage's checks (the capstone's printed the reference's
  files): it now refuses to start without one, and ``make check-service``, the manifests and the docs give it.
- The default socket had a name anyone could work out in the shared temp folder: a learner who made it first received
  a classmate's checks (their whole capstone repository), ran their functions on her inputs and showed them a fake
  "passed". The learner's side now sends nothing unless its folder is its own private one, or, for a class's socket,
  unless the kernel says the service runs as the folder's owner; a service started for oneself answers its user only.
- Over TCP one learner held all 32 places, and 64 MB answers cost gigabytes: a request now needs a credential the hub
  issues, each learner has 4 places (and 4 connections that have not asked yet), and an answer over 4 MiB is refused
  before it is read.
- A capstone command that wrote to its folder and slept past the deadline left its folder in /dev/shm and its cgroups:
  the service's parent now removes them.
- jieba's cache in the shared /tmp changed other learners' Chinese words: each learner has a temporary folder of their
  own. The learners' environment was built inside the course folder, from a Python under /root: it is now refused there,
  and built from a Python every user can run.

The other side of a socket is played by a forked child of this process that becomes another user (``as_user``): that
user cannot read the venv (/root is 0700), so the child runs only what this process has imported.
"""
from __future__ import annotations

import json
import marshal
import os
import re
import select
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tinylm_checks import CheckFailure, client
from tinylm_checks._text import say
from tinylm_grading import checkservice, hubclass, learnerenv
from tinylm_grading.limits import CGROUP_ROOTS

ROOT = Path(__file__).resolve().parent.parent
OTHER = 54321  # a uid no user has: the other learner
SECRET = b"the class's secret: 32 bytes, hex"


def attention_scores(q, k):
    return q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5


# ---- helpers

def as_user(fn, uid: int = OTHER) -> tuple[int, int]:
    """Start ``fn()`` in a forked child that becomes ``uid`` (no groups); (its pid, the pipe its result comes on)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            out = {"ok": fn(lambda message: os.write(w, (json.dumps(message) + "\n").encode()))}
        except BaseException as e:  # noqa: BLE001 - reported to the test
            out = {"error": f"{type(e).__name__}: {e}"}
        os.write(w, (json.dumps(out) + "\n").encode())
        os._exit(0)
    os.close(w)
    return pid, r


def results(pid: int, r: int, timeout: float = 60) -> list:
    """What the child said, once it ended (killed after ``timeout`` seconds)."""
    data, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([r], [], [], 0.2)
        if ready:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            data += chunk
    else:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(r)
    return [json.loads(line) for line in data.decode().splitlines()]


def stop(pid: int, r: int) -> list:
    """End the child now; what it had said."""
    os.kill(pid, signal.SIGKILL)
    return results(pid, r, timeout=10)


def fake_service(where: str):
    """A learner's own server at ``where``: it reports the request it receives, then says the check passed."""
    def serve(report):
        Path(where).parent.mkdir(exist_ok=True)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(where)
        os.chmod(where, 0o777)
        server.listen()
        conn, _ = server.accept()
        try:
            report({"received": client.receive(conn)})
        except ConnectionError:
            return "nothing came"
        client.send(conn, {"done": {"passed": True, "text": "✔ check_attention_scores passed\n", "failure": None}})
        return "answered"
    return serve


def wait_for(condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds} s"
        time.sleep(0.05)


def start(where: str, *args: str, code: str = "pass") -> tuple[subprocess.Popen, list[str]]:
    """A check service at ``where`` (``code`` runs first, in its module ``s``), and the lines it said until ready."""
    program = f"import sys; import tinylm_grading.checkservice as s; {code}; sys.exit(s.main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", program, "--socket", where, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    said = []
    while not said or "answers at" not in said[-1]:
        said.append(proc.stdout.readline())
        assert said[-1], "".join(said)
    return proc, said


def end(proc: subprocess.Popen) -> str:
    """Stop the service; what it said after it was ready."""
    proc.terminate()
    try:
        said, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"the service did not stop within 60 s: {proc.communicate()[0]}") from None
    assert proc.returncode == 0, said
    return said


@pytest.fixture
def shared_tmp():
    """A temporary folder every user may write in, as /tmp is (mode 1777)."""
    folder = Path(tempfile.mkdtemp(prefix="tinylm-shared-", dir="/tmp"))
    os.chmod(folder, 0o1777)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)])


def tcp_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="plays another Unix user")


# ---- 2. the released stage, everywhere

def test_the_service_will_not_start_without_its_released_stage(tmp_path):
    out = subprocess.run([sys.executable, "-m", "tinylm_grading.checkservice", "--socket",
                          str(tmp_path / "checks.sock")], capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == (f"tinylm-check-service: error: {say('grading.service.needs_released')} "
                          "(see tinylm-check-service --help)\n")


def test_make_and_the_manifests_give_the_service_its_released_stage():
    made = subprocess.run(["make", "-n", "check-service", "RELEASED=02"], capture_output=True, text=True, cwd=ROOT)
    assert "-m tinylm_grading.checkservice --released 02 >" in made.stdout
    values = yaml.safe_load((ROOT / "deploy/z2jh-values.yaml").read_text())
    manifests = {d["kind"]: d for d in yaml.safe_load_all((ROOT / "deploy/check-service.yaml").read_text())}
    pod = manifests["Deployment"]["spec"]["template"]["spec"]
    command = pod["containers"][0]["command"]
    assert command[command.index("--released") + 1] == values["singleuser"]["image"]["tag"]  # the learners' stage
    assert command[command.index("--secret") + 1] == "/etc/tinylm/secret"
    assert pod["containers"][0]["volumeMounts"] == [{"name": "secret", "mountPath": "/etc/tinylm", "readOnly": True}]
    assert "CMD" not in (ROOT / "deploy/service.Dockerfile").read_text()  # no default that would start without it


def test_the_hub_issues_the_credential_the_service_accepts(tmp_path):
    """deploy/z2jh-values.yaml computes each learner's credential with the standard library (the hub's image has no
    course): the same as checkservice.credential."""
    values = yaml.safe_load((ROOT / "deploy/z2jh-values.yaml").read_text())
    (tmp_path / "secret").write_bytes(SECRET + b"\n")
    environment = {}
    namespace = {"c": SimpleNamespace(KubeSpawner=SimpleNamespace(environment=environment))}
    exec(values["hub"]["extraConfig"]["tinylm-credentials"], namespace)
    namespace["TINYLM_SECRET"] = str(tmp_path / "secret")
    issue = environment[client.TOKEN_ENV]
    assert issue(SimpleNamespace(user=SimpleNamespace(name="learner7"))) == checkservice.credential(SECRET, "learner7")
    assert values["hub"]["extraVolumeMounts"] == [{"name": "tinylm-checks", "mountPath": "/etc/tinylm",
                                                   "readOnly": True}]
    assert values["hub"]["extraVolumes"][0]["secret"] == {"secretName": "tinylm-checks"}


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_later_stage_s_check_is_refused_in_the_learner_s_words(tmp_path, monkeypatch, lang):
    where = str(tmp_path / "checks.sock")
    proc, said = start(where, "--released", "02")
    monkeypatch.setenv(client.ENV, where)
    from tinylm_solutions import i18n
    try:
        with i18n.using(lang), pytest.raises(CheckFailure) as e:
            client.run("check_attention_tests", lambda: {"tests/test_attention.py": "def test_x(): assert False"})
        with i18n.using(lang):
            assert e.value.problem == say("grading.service.not_released", check="check_attention_tests",
                                          stage="13_capstone", released="02_multihead")
    finally:
        end(proc)
    # a class's service says so when this course folder is open to other users (a clone usually is; CI's may not be)
    warned = f"tinylm-check-service: {say('grading.service.course_open', folder=ROOT)}\n" in said
    assert warned == learnerenv.readable_by_others(ROOT / "tinylm_solutions/__init__.py")


# ---- 3. each learner reaches only their own service calls

@needs_root
def test_a_learner_who_makes_the_default_socket_first_receives_nothing(shared_tmp, monkeypatch, capsys):
    """Another user works out where this user's own service would listen and listens there first."""
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))
    monkeypatch.delenv(client.ENV, raising=False)
    where = client.address()
    pid, r = as_user(fake_service(where))
    wait_for(lambda: Path(where).is_socket())
    try:
        with pytest.raises(client.ServiceUnavailable) as e:
            client.run("check_attention_scores", attention_scores)
    finally:
        said = stop(pid, r)
    assert said == []  # nothing reached the other user: not the request, nor the function
    assert capsys.readouterr().out == ""  # no "passed" from them
    folder = Path(where).parent
    assert str(e.value) == say("client.not_private", folder=folder,
                               problem=say("client.problem.owner", uid=OTHER, mode="0755"))


@needs_root
def test_a_socket_another_user_made_where_the_service_should_be_receives_nothing(shared_tmp, monkeypatch, capsys):
    """A class's socket must be in a folder only the service's user can write; named in one anyone can (as /tmp), the
    kernel still says who listens, and the learner's side talks only to the folder's owner."""
    where = str(shared_tmp / "checks.sock")
    monkeypatch.setenv(client.ENV, where)
    pid, r = as_user(fake_service(where))
    wait_for(lambda: Path(where).is_socket())
    try:
        with pytest.raises(client.ServiceUnavailable) as e:
            client.run("check_attention_scores", attention_scores)
    finally:
        said = stop(pid, r)
    assert [m for m in said if "received" in m] == [] and capsys.readouterr().out == ""
    assert str(e.value) == say("client.not_the_service", path=where, uid=OTHER, owner=0)


@needs_root
@pytest.mark.slow
def test_a_service_started_for_oneself_answers_no_one_else(shared_tmp):
    """Its folder is made private (0700); should its owner open it, another user is still refused."""
    proc, said = start_default(shared_tmp)
    try:
        where = said[-1].split("answers at ")[1].split()[0]
        folder = Path(where).parent
        found = folder.stat()
        assert (found.st_uid, stat.S_IMODE(found.st_mode), folder.is_symlink()) == (0, 0o700, False)
        os.chmod(folder, 0o755)  # opened by mistake
        os.chmod(where, 0o666)

        def ask(report):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(where)
            try:
                client.send(sock, {"check": "check_attention_scores", "name": "f"})
            except BrokenPipeError:
                pass  # answered and closed at once: the answer is there to read
            return client.receive(sock)

        assert results(*as_user(ask)) == [{"ok": {"refused": "user"}}]
    finally:
        end(proc)


def start_default(tmp: Path) -> tuple[subprocess.Popen, list[str]]:
    """A service at the default address of a user whose temporary folder is ``tmp``."""
    env = {**os.environ, "TMPDIR": str(tmp)}
    env.pop(client.ENV, None)
    proc = subprocess.Popen([sys.executable, "-m", "tinylm_grading.checkservice", "--released", "01"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    said = [proc.stdout.readline()]
    assert "answers at" in said[-1], said
    return proc, said


@needs_root
def test_a_class_s_service_listens_only_where_learners_cannot_put_a_socket(shared_tmp, tmp_path):
    """The learners' side trusts the owner of the socket's folder: the service refuses a folder that is another user's,
    or one anyone can write in (anyone's socket there would be refused by the learners' side: no checks)."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, OTHER, OTHER)
    for folder, message in ((shared_tmp, say("grading.service.folder_open", folder=shared_tmp)),
                            (theirs, say("grading.service.folder_not_yours", folder=theirs, owner=OTHER, uid=0))):
        out = subprocess.run([sys.executable, "-m", "tinylm_grading.checkservice", "--released", "01", "--socket",
                              str(folder / "checks.sock")], capture_output=True, text=True, timeout=120)
        assert (out.returncode, out.stderr) == (2, f"tinylm-check-service: error: {message}\n")
        assert not (folder / "checks.sock").exists()


@pytest.fixture
def tcp_service(tmp_path):
    """A check service over TCP (the Kubernetes form), answering stage 01, with the class's secret."""
    (tmp_path / "secret").write_bytes(SECRET)
    port = tcp_port()
    proc, _ = start(f"tcp://127.0.0.1:{port}", "--released", "01", "--secret", str(tmp_path / "secret"))
    yield port
    end(proc)


def request(learner: str, secret: bytes = SECRET) -> dict:
    return {"check": "check_attention_scores", "name": "f", "learner": learner,
            "token": checkservice.token(secret, learner)}


@pytest.mark.slow
def test_over_tcp_a_request_needs_the_learner_s_credential(tcp_service, monkeypatch):
    where = f"tcp://127.0.0.1:{tcp_service}"
    monkeypatch.setenv(client.ENV, where)
    for credential in (None, "ann:" + "0" * 64, "bo:" + checkservice.token(SECRET, "ann"),
                       checkservice.credential(b"another class's secret", "ann")):
        if credential is None:
            monkeypatch.delenv(client.TOKEN_ENV, raising=False)
        else:
            monkeypatch.setenv(client.TOKEN_ENV, credential)
        with pytest.raises(client.ServiceUnavailable) as e:
            client.run("check_attention_scores", attention_scores)
        assert str(e.value) == say("client.no_credential", path=where, env=client.TOKEN_ENV)
    monkeypatch.setenv(client.TOKEN_ENV, checkservice.credential(SECRET, "ann"))
    client.run("check_attention_scores", attention_scores, quiet=True)


@pytest.mark.slow
def test_over_tcp_one_learner_cannot_hold_every_place(tcp_service, monkeypatch):
    """Ann, from her pod's address, asks for 32 checks and never answers them, and opens 10 connections that never
    ask; Bo still gets his check."""
    held, idle = [], []
    try:
        for _ in range(checkservice.CHILDREN):
            sock = socket.create_connection(("127.0.0.1", tcp_service), source_address=("127.0.0.2", 0))
            client.send(sock, request("ann"))
            held.append(sock)
        first = [client.receive(sock) for sock in held]
        assert ["agent" in m for m in first] == [True] * 4 + [False] * (checkservice.CHILDREN - 4)
        assert all(m == {"busy": True} for m in first[4:])
        for _ in range(10):
            idle.append(socket.create_connection(("127.0.0.1", tcp_service), source_address=("127.0.0.2", 0)))
        for sock in idle[4:]:
            assert client.receive(sock) == {"busy": True}
        monkeypatch.setenv(client.ENV, f"tcp://127.0.0.1:{tcp_service}")
        monkeypatch.setenv(client.TOKEN_ENV, checkservice.credential(SECRET, "bo"))
        client.run("check_attention_scores", attention_scores, quiet=True)
    finally:
        for sock in held + idle:
            sock.close()


@pytest.mark.slow
def test_over_tcp_a_learner_runs_one_capstone_check_at_a_time(tmp_path):
    """Each capstone check runs the learner's files in sandboxes of up to 4 GiB: one at a time per learner."""
    (tmp_path / "secret").write_bytes(SECRET)
    port = tcp_port()
    proc, _ = start(f"tcp://127.0.0.1:{port}", "--released", "13", "--secret", str(tmp_path / "secret"))
    held = []
    try:
        for learner in ("ann", "ann", "bo"):
            sock = socket.create_connection(("127.0.0.1", port))
            client.send(sock, {**request(learner), "check": "check_attention_tests"})
            held.append(sock)
        assert ["agent" in client.receive(sock) for sock in held] == [True, False, True]
    finally:
        for sock in held:
            sock.close()
        end(proc)


@pytest.mark.slow
def test_a_learner_s_checks_one_after_another_are_never_told_busy(tmp_path, monkeypatch):
    """A check counts until its verdict is sent, not until its process has ended: "run all cells" asks for the next
    check as soon as the last one's verdict arrives (the capstone's were told "busy")."""
    where = str(tmp_path / "checks.sock")
    proc, _ = start(where, "--released", "13")
    monkeypatch.setenv(client.ENV, where)
    try:
        for _ in range(20):
            with pytest.raises(CheckFailure, match="report.md"):
                client.run("check_capstone_report", lambda: {"model.py": ""})  # one capstone check at a time
    finally:
        end(proc)


@pytest.mark.slow
def test_an_answer_over_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """64 MB of JSON per answer took a child about 1.5 GB; now its length is read, the rest never. An honest learner's
    side says so itself, as their code's error."""
    where = str(tmp_path / "checks.sock")
    proc, _ = start(where, "--released", "01")
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(where)
        client.send(sock, {"check": "check_attention_scores", "name": "f"})
        assert "agent" in client.receive(sock)
        size, sent = 64 << 20, 0
        sock.sendall(struct.pack(">I", size) + b'"')
        chunk = b"x" * (1 << 20)
        try:
            while sent < size:
                sent += sock.send(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert sent < 16 << 20  # what the socket's buffers take before the service hangs up
        done = client.receive(sock)["done"]
        assert done["passed"] is False
        assert f"a message of {size} bytes (at most {client.MAX_MESSAGE})" in done["text"]
        sock.close()

        import torch
        monkeypatch.setenv(client.ENV, where)
        with pytest.raises(CheckFailure) as e:
            client.run("check_attention_scores", lambda q, k: torch.zeros(1100, 1000))  # 5.9 MB as JSON
        size = int(re.search(r"MessageTooLarge: \D*(\d+)", str(e.value)).group(1))
        assert size > client.MAX_MESSAGE
        assert say("client.too_large", size=size, limit=client.MAX_MESSAGE) in str(e.value)
    finally:
        end(proc)


def cgroup_exists(path: str) -> bool:
    name = path.strip("/")
    return any((root / name).is_dir() for roots in CGROUP_ROOTS.values() for root in roots)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_check_past_the_service_s_time_says_so_in_the_learner_s_words(tmp_path, monkeypatch, lang):
    """A check's child lives DEADLINE seconds (5 here, 600 in a class), and its waits for the learner's side end
    WRAP_UP seconds before (2 here): the learner reads that the check ran past the service's limit. (They read "the
    check service broke off", as when it fails.)"""
    where = str(tmp_path / "checks.sock")
    proc, _ = start(where, "--released", "01", code="s.DEADLINE = 5; s.WRAP_UP = 2")
    monkeypatch.setenv(client.ENV, where)

    def slow(q, k):
        time.sleep(4)
        return attention_scores(q, k)

    from tinylm_solutions import i18n
    try:
        with i18n.using(lang), pytest.raises(client.CheckTimeout) as e:
            client.run("check_attention_scores", slow)
    finally:
        log = end(proc)
    assert str(e.value) == {
        "en": "check_attention_scores ran past the check service's 5 s limit and was stopped: your code was not "
              "judged. Time your code yourself (for the capstone: its tests, train.py and generate.py in "
              "tiny-transformer/), make it faster, then run the cell again",
        "zh": "check_attention_scores 运行超过了检查服务（check service）5 秒的时间上限，已被停止，这次没有得出你代码的检查"
              "结果。先自己给代码计时（综合项目的话，在 tiny-transformer/ 里自己运行它的测试、train.py 和 generate.py），让它"
              "快一些，再重新运行这个单元格"}[lang]
    assert f"tinylm-check-service: {say('grading.service.log_deadline', learner=f'uid {os.getuid()}', seconds=5)}" \
        in log


@needs_root
@pytest.mark.slow
@pytest.mark.parametrize("ends", ["child", "parent"])
def test_a_check_past_its_deadline_leaves_nothing_behind(tmp_path, monkeypatch, ends):
    """The learner's test writes 20 MB into its folder, closes a folder of it (mode 0) and sleeps. The check's child
    ends its commands WRAP_UP seconds before its deadline (6 before 14 here, 10 before 600 in a class; they had 300 s
    each); should it still run at its deadline (8 s here, its own end taken away), the parent kills it. Either way
    the learner reads that the check ran past the service's limit (they read "broke off"), and nothing is left."""
    from tinylm_solutions import capstone
    marker = f"marker-{uuid.uuid4().hex[:8]}"
    repo = capstone.repo()
    repo["tests/test_attention.py"] = (
        "import os, time\nfrom pathlib import Path\n\ndef test_slow():\n"
        f"    Path({marker!r}).write_text('x')\n    Path('big').write_bytes(b'x' * 20_000_000)\n"
        "    os.makedirs('closed/inner')\n    Path('closed/inner/f').write_text('x')\n    os.chmod('closed', 0)\n"
        "    time.sleep(1000)\n")
    where = str(tmp_path / "checks.sock")
    deadline, wrap_up = (14, 6) if ends == "child" else (8, -100)
    proc, _ = start(where, "--released", "13", code=f"s.DEADLINE = {deadline}; s.WRAP_UP = {wrap_up}")
    monkeypatch.setenv(client.ENV, where)
    seen = {"folders": set(), "cgroups": set()}
    started, done = time.monotonic(), threading.Event()

    def watch():  # the folders the commands work in, and the cgroups their processes are in
        while not done.is_set():
            for found in Path("/dev/shm").glob(f"**/{marker}"):
                work = str(found.parent)
                seen["folders"].add(work)
                for pid in filter(str.isdigit, os.listdir("/proc")):
                    try:
                        if os.readlink(f"/proc/{pid}/cwd") == work:
                            seen["cgroups"] |= {line.split(":", 2)[-1] for line in
                                                Path(f"/proc/{pid}/cgroup").read_text().splitlines()
                                                if "tinylm-" in line}
                    except OSError:
                        pass
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        with pytest.raises(client.CheckTimeout) as e:
            client.run("check_attention_tests", lambda: repo)
        took = time.monotonic() - started
        assert 8 <= took < (deadline if ends == "child" else 30), took
        assert str(e.value) == say("client.timed_out", check="check_attention_tests", seconds=deadline)
    finally:
        done.set()
        watcher.join()
        time.sleep(2)
        log = end(proc)
    assert seen["folders"] and seen["cgroups"]  # the commands ran, in cgroups of their own
    assert [f for f in seen["folders"] if os.path.lexists(f)] == []
    assert [c for c in seen["cgroups"] if cgroup_exists(c)] == []
    assert f"tinylm-check-service: {say('grading.service.log_deadline', learner='uid 0', seconds=deadline)}" in log


@pytest.mark.slow
def test_a_service_stopped_while_it_forks_stops(tmp_path, monkeypatch):
    """SIGTERM during a fork: Python runs the handler in fork's hooks, which ignore exceptions. A handler that raised
    SystemExit was lost there, and the service ran on with SIGTERM ignored (3 of 30 stops in a row, right after a
    check)."""
    where = str(tmp_path / "checks.sock")
    stop_in_fork = ("import os, signal; forking = s.Service._start; s.Service._start = lambda self, *a: ("
                    "os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.SIGTERM)), "
                    "forking(self, *a))[1]")
    proc, _ = start(where, "--released", "01", code=stop_in_fork)
    monkeypatch.setenv(client.ENV, where)
    try:
        client.run("check_attention_scores", attention_scores, quiet=True)
    except client.ServiceUnavailable:
        pass  # (the service may stop before it answers)
    try:
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
    assert not Path(where).exists()


# ---- 7. a private temporary folder per learner; the learners' environment outside the course

def poisoned_jieba_cache(folder: Path) -> None:
    """jieba's cache (its dictionary, marshalled) with one made-up word, 我爱北, where jieba looks by default."""
    words = {"我": 0, "我爱": 0, "我爱北": 10 ** 6, "爱": 1, "北": 1, "京": 1, "天": 1, "安": 1, "门": 1,
             "北京": 1, "天安": 0, "天安门": 1}
    with open(folder / "jieba.cache", "wb") as f:
        marshal.dump((words, sum(words.values())), f)
    os.utime(folder / "jieba.cache", (time.time() + 3600, time.time() + 3600))  # newer than jieba's dictionary


@pytest.mark.slow
def test_a_learner_s_chinese_words_are_not_another_s_to_change(tmp_path, shared_tmp, monkeypatch):
    """A learner's server gets TMPDIR, a folder of their own (0700) in the class folder: jieba's cache, which another
    learner had poisoned in the shared /tmp, is theirs."""
    root = tmp_path / "class"
    root.mkdir()
    home = tmp_path / "home"
    monkeypatch.setattr(hubclass.pwd, "getpwnam", lambda name: SimpleNamespace(pw_uid=OTHER, pw_gid=OTHER,
                                                                               pw_dir=str(home)))
    spawner = SimpleNamespace(user=SimpleNamespace(name="tinylm-learner2"), environment={})
    hubclass.spawn_hook(str(root), str(ROOT))(spawner)
    poisoned_jieba_cache(shared_tmp)
    env = {**os.environ, "TMPDIR": str(shared_tmp), **spawner.environment, "PATH": os.environ["PATH"]}
    out = subprocess.run([sys.executable, "-c", "from tinylm_solutions.segment import split_words; "
                                                "print(split_words('我爱北京天安门'))"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.stdout == "['我', '爱', '北京', '天安门']\n", out.stderr  # poisoned: ['我爱北', '京', '天安门']
    tmp = Path(spawner.environment.get("TMPDIR", shared_tmp))
    assert tmp == root / "tmp" / "tinylm-learner2"
    assert (tmp.stat().st_uid, stat.S_IMODE(tmp.stat().st_mode)) == (OTHER, 0o700)
    assert (tmp.parent.stat().st_uid, stat.S_IMODE(tmp.parent.stat().st_mode)) == (0, 0o711)
    assert (tmp / "jieba.cache").is_file()  # jieba's own cache, in the learner's folder


def test_the_learners_environment_is_not_built_inside_the_course_folder(monkeypatch, capsys):
    monkeypatch.setattr(learnerenv, "build", lambda *a, **k: pytest.fail("built inside the course folder"))
    assert learnerenv.main(["--venv", str(ROOT / ".venv-learner"), "--released", "02"]) == 2
    assert capsys.readouterr().err == ("learner-env: error: " + say("grading.learnerenv.inside_course",
                                                                    venv=ROOT / ".venv-learner", course=ROOT) + "\n")
    made = subprocess.run(["make", "-n", "learner-env", "RELEASED=02"], capture_output=True, text=True, cwd=ROOT)
    venv = Path(made.stdout.split("--venv ")[1].split()[0])
    assert not venv.is_relative_to(ROOT)


def test_the_learners_environment_is_one_every_user_can_run(tmp_path, monkeypatch):
    """Built from a Python no folder closed to others leads to (pyenv's is under /root, 0700), readable by everyone
    whatever the builder's umask, and a folder on its way that others cannot enter is named."""
    python = learnerenv.shared_python()
    assert python is not None  # (Debian's python3-venv: .ci/run installs it)
    assert all(p.stat().st_mode & 0o005 == 0o005 for p in [Path(python).resolve(), *Path(python).resolve().parents])
    ran, real = [], subprocess.run

    class Made(Exception):
        pass

    def run(args, **kwargs):
        if list(args[1:3]) == ["-m", "venv"]:
            ran.append(list(args))
            raise Made
        return real(args, **kwargs)

    monkeypatch.setattr(subprocess, "run", run)
    with pytest.raises(Made):
        learnerenv.build(tmp_path / "venv", "01")
    monkeypatch.undo()
    assert ran == [[python, "-m", "venv", str(tmp_path / "venv")]]

    old = os.umask(0o077)
    try:
        (tmp_path / "venv/bin").mkdir(parents=True)
        (tmp_path / "venv/bin/tool").write_text("#!/bin/sh\n")
        os.chmod(tmp_path / "venv/bin/tool", 0o700)
        (tmp_path / "venv/lib.py").write_text("")
    finally:
        os.umask(old)
    learnerenv.open_to_learners(tmp_path / "venv")
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in [tmp_path / "venv", *(tmp_path / "venv").rglob("*")]} == \
        {"venv": 0o755, "bin": 0o755, "tool": 0o755, "lib.py": 0o644}

    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    warnings = learnerenv.check_place(closed / "venv")
    assert say("grading.learnerenv.closed", folder=learnerenv.closed_folder(closed / "venv"), venv=closed / "venv") \
        in warnings
