"""A learner's environment without answers (tinylm_grading.learnerenv) and its checks, run by the check service
(tinylm_grading.checkservice, reached through tinylm_checks.client).

- For every stage released last, the learner's files hold no answer of that stage or a later one: no module of
  theirs, and no function's or class's body from them in any file (the search is shown to find one that is there).
- Python in those files alone imports the checks and the given code the released notebooks import, not the answers.
- Through the service, every check passes the reference and names the same mistake as the direct check on each
  check's late-failing mutant; a learner's process with only the learner's files gets the same verdicts, in English
  and in Chinese, and one clear line when no service answers.
"""
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

import tinylm_checks
from tinylm_checks import CheckFailure, client
from tinylm_grading import learnerenv, registry

from mutants import LATE_FAILURE, REFERENCE, ROWS

ROOT = Path(__file__).resolve().parent.parent
SITE = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())


def answer_modules(released: str) -> list[str]:
    return sorted({m for s in registry.STAGES if s.name >= released for m in s.answers})


def bodies(module: str) -> list[str]:
    """The body of every function and class the reference module (or package: the capstone's repository) defines,
    docstrings left out, whitespace folded."""
    path = ROOT / "tinylm_solutions" / module
    found = []
    for file in sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]:
        found += _bodies(file.read_text(encoding="utf-8"))
    return found


def _bodies(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = [n for n in node.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
            text = "\n".join(ast.get_source_segment(source, n) for n in body)
            if len(text) > 40:  # a one-liner such as `return x` is no answer
                found.append(" ".join(text.split()))
    return found


def holding(tree: Path, texts: list[str]) -> list[str]:
    """The files under ``tree`` that contain one of ``texts`` (whitespace folded)."""
    hits = []
    for path in tree.rglob("*"):
        if path.is_file():
            folded = " ".join(path.read_bytes().decode("utf-8", "replace").split())
            hits += [f"{path.relative_to(tree)}" for t in texts if t in folded]
    return hits


@pytest.mark.parametrize("released", [s.name for s in registry.STAGES])
def test_the_learner_files_hold_no_answer_of_a_stage_not_yet_done(tmp_path, released):
    written = learnerenv.write(tmp_path, released)
    secret = answer_modules(released)
    assert not [p for p in written if Path(p).stem in secret and p.startswith("tinylm_solutions/")]
    assert not (tmp_path / "tinylm_solutions/capstone").exists()
    given = " ".join(" ".join((ROOT / f"tinylm_solutions/{m}.py").read_text(encoding="utf-8").split())
                     for m in learnerenv.given_modules(released))  # the capstone repeats 01's causal_mask: given code
    assert holding(tmp_path, [b for m in secret for b in bodies(m) if b not in given]) == []
    learner = json.loads((tmp_path / "tinylm_checks/learner.json").read_text(encoding="utf-8"))
    assert learner["checks"] == learnerenv.check_names()
    check_code = {p.stem for p in (ROOT / "tinylm_checks").glob("*.py")} - \
        {Path(p).stem for p in written if p.startswith("tinylm_checks/")}
    assert {"attention", "position", "_core", "grading", "capstone"} <= check_code  # no check's own code


def test_the_search_finds_an_answer_that_is_there(tmp_path):
    learnerenv.write(tmp_path, "01_attention")
    body = bodies("attention")[0]
    (tmp_path / "tinylm_checks/lab/notes.txt").write_text(  # re-indented: still found
        (ROOT / "tinylm_solutions/attention.py").read_text(encoding="utf-8").replace("    ", "  "), encoding="utf-8")
    assert holding(tmp_path, [body]) == ["tinylm_checks/lab/notes.txt"]
    assert len(bodies("attention")) >= 3 and all(len(b) > 40 for b in bodies("attention"))


def test_given_code_comes_with_the_stage_that_imports_it():
    assert learnerenv.given_modules("01_attention") == {"i18n", "messages"}  # the learner's words
    assert learnerenv.given_modules("02") == {"i18n", "messages", "attention"}  # 02's notebook imports 01's attention
    assert "model" not in learnerenv.given_modules("08_lm") and "model" in learnerenv.given_modules("09_training")
    assert "train" in learnerenv.given_modules("10_generation")  # the trainer imports it: 09's answer, given in 10
    assert not {"capstone", "cli", "flops", "debugging"} & learnerenv.given_modules("13_capstone")


def test_a_stage_that_would_ship_an_answer_is_refused(monkeypatch):
    stages = tuple(registry.Stage(s.name, s.title, s.answers, s.imports + (("masks",) if s.name == "02_multihead"
                                                                         else ()), s.own_code)
                   for s in registry.STAGES)
    monkeypatch.setattr(registry, "STAGES", stages)
    with pytest.raises(ValueError, match="imports answers of 02_multihead or later: masks"):
        learnerenv.given_modules("02_multihead")
    with pytest.raises(ValueError, match="no stage '7'"):
        learnerenv.given_modules("7")


def learner_python(tree: Path, code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``code`` run by Python with only the learner's files and the venv's libraries (no .pth: not the editable
    install of the whole course)."""
    prelude = f"import sys; sys.path[:0] = [{str(tree)!r}, {SITE!r}]\n"
    return subprocess.run([sys.executable, "-S", "-c", prelude + textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=tree, env={**os.environ, **(env or {})}, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("released", ["00_setup", "07_block", "13_capstone"])
def test_python_in_the_learner_files_imports_the_given_code_and_not_the_answers(tmp_path, released):
    learnerenv.write(tmp_path, released)
    given = sorted(learnerenv.given_modules(released))
    out = learner_python(tmp_path, f"""
        import importlib, importlib.util, json
        import tinylm_checks
        for m in {given!r}:
            importlib.import_module("tinylm_solutions." + m)
        print(json.dumps({{"absent": [m for m in {answer_modules(released)!r}
                                      if importlib.util.find_spec("tinylm_solutions." + m)],
                          "checks": sorted(n for n in tinylm_checks.__all__ if n.startswith("check_")),
                          "file": tinylm_checks.__file__}}))""")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result == {"absent": [], "checks": sorted([*learnerenv.check_names(), "check_environment"]),
                      "file": str(tmp_path / "tinylm_checks/__init__.py")}


# ---- the check service

def start_service(path, *args: str, released: str = "13") -> subprocess.Popen:
    """A check service at ``path`` answering the stages up to ``released``, once it says it is ready (the lines before
    that, such as the warning that this course folder is open to other users, are skipped)."""
    proc = subprocess.Popen([sys.executable, "-m", "tinylm_grading.checkservice", "--socket", str(path),
                             "--released", released, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    said = []
    while not said or f"answers at {path}" not in said[-1]:
        said.append(proc.stdout.readline())
        assert said[-1], "".join(said)
    return proc


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    path = tmp_path_factory.mktemp("service") / "checks.sock"
    proc = start_service(path)
    old = os.environ.get(client.ENV)
    os.environ[client.ENV] = str(path)
    yield path
    proc.terminate()
    assert proc.wait(timeout=30) == 0
    assert not path.exists()  # the socket goes with the service
    os.environ.pop(client.ENV) if old is None else os.environ.__setitem__(client.ENV, old)


NOT_CAPSTONE = [c for c in REFERENCE if c.__module__ != "tinylm_checks.capstone"]


def through_service(check, obj, seed=0):
    try:
        client.run(check.__name__, obj, seed=seed, quiet=True)
    except CheckFailure as e:
        return "fail", e.mistake, e.problem, str(e)
    return "pass", None, "", ""


@pytest.mark.slow
@pytest.mark.parametrize("check", NOT_CAPSTONE, ids=lambda c: c.__name__)
def test_through_the_service_a_check_passes_the_reference_and_names_the_mistake(service, check):
    assert through_service(check, REFERENCE[check])[0] == "pass"
    row = next(r for r in ROWS if r[0] is check and r[1] is LATE_FAILURE[check])
    got = through_service(check, row[1])
    assert got[:2] == ("fail", row[2]), got
    assert row[3] in got[2]
    try:  # the headline is the direct check's (numbers masked: a measured speed ratio differs from run to run)
        check(row[1], quiet=True)
    except CheckFailure as e:
        masked = [re.sub(r"\d+(\.\d+)?", "#", text.splitlines()[0]) for text in (got[3], str(e))]
        assert masked[0] == masked[1]


@pytest.mark.slow
def test_a_learner_without_answers_gets_the_same_verdicts(service, tmp_path):
    learnerenv.write(tmp_path, "01_attention")
    out = learner_python(tmp_path, """
        import math, time, torch
        from tinylm_checks import CheckFailure, check_attention_scores, set_language
        def attention_scores(q, k):
            return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        start = time.perf_counter()
        check_attention_scores(attention_scores)
        print("seconds", time.perf_counter() - start)
        def attention_scores(q, k):
            return q @ k.transpose(-2, -1)
        for lang in ("en", "zh"):
            set_language(lang)
            try:
                check_attention_scores(attention_scores)
            except CheckFailure as e:
                print(e.mistakes, e.message_id)
                print(e)
        """, env={client.ENV: str(service)})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("✔ check_attention_scores passed")
    assert float(lines[1].split()[1]) < 5  # about a second (benchmarks/bench_checks.py prints the figures)
    assert lines.count("['no_scaling'] core.not_equal") == 2
    assert "likely mistake: the scores are not scaled" in out.stdout and "可能的错误：分数没有缩放" in out.stdout


@pytest.mark.slow
def test_the_environment_check_runs_in_the_learner_s_own_kernel(tmp_path):
    """It judges the learner's PyTorch, so it needs no service; a wrong version fails with the table's words."""
    learnerenv.write(tmp_path, "00_setup")
    out = learner_python(tmp_path, """
        import torch
        from tinylm_checks import CheckFailure, check_environment
        check_environment()
        torch.__version__ = "2.0.0+cpu"
        try:
            check_environment()
        except CheckFailure as e:
            print(e.message_id, "|", e)""", env={client.ENV: str(tmp_path / "no-service.sock")})
    assert out.returncode == 0, out.stderr
    assert "✔ check_environment passed: PyTorch 2.13.0" in out.stdout
    assert ("environment.old_torch | check_environment failed: PyTorch 2.0.0 is older than the course supports "
            "(PyTorch 2.5 or newer; its runs were made on 2.13.0): upgrade it in a cell with %pip install \"torch>=2.5\""
            in out.stdout)


@pytest.mark.slow
def test_without_a_service_a_check_says_how_to_start_one(tmp_path):
    learnerenv.write(tmp_path, "00_setup")
    missing = tmp_path / "no-service.sock"
    out = learner_python(tmp_path, """
        import torch
        from tinylm_checks import check_softmax
        check_softmax(torch.softmax)""", env={client.ENV: str(missing)})
    assert out.returncode == 1
    assert f"ServiceUnavailable: no check service answers at {missing}" in out.stderr
    assert "make check-service" in out.stderr
    zh = learner_python(tmp_path, """
        import torch
        from tinylm_checks import check_softmax, set_language
        set_language("zh")
        check_softmax(torch.softmax)""", env={client.ENV: str(missing)})
    assert f"{missing} 上没有检查服务（check service）响应" in zh.stderr


@pytest.mark.slow
def test_a_second_service_on_the_same_socket_is_refused(service):
    out = subprocess.run([sys.executable, "-m", "tinylm_grading.checkservice", "--socket", str(service),
                          "--released", "01"], capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == f"tinylm-check-service: error: a check service already answers at {service}\n"


@pytest.mark.slow
def test_the_service_refuses_what_is_not_a_check(service):
    import socket
    for request in ({"check": "fresh", "name": "x"}, {"check": "check_softmax", "name": "__import__('os')"},
                    {"check": "check_softmax", "name": "x", "lang": "fr"}, ["not", "a", "dict"]):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(service))
            client.send(sock, request)
            reply = client.receive(sock)
        assert reply["done"]["passed"] is False and reply["done"]["failure"] is None
        assert reply["done"]["text"].startswith("not a request this service answers")


@pytest.mark.slow
def test_across_machines_the_service_answers_over_tcp(monkeypatch, tmp_path):
    """In Kubernetes the learners' pods reach the service's pod by name: TINYLM_CHECK_SERVICE=tcp://HOST:PORT, with the
    learner's credential in TINYLM_CHECK_TOKEN."""
    import socket

    from tinylm_grading.checkservice import credential
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    where = f"tcp://127.0.0.1:{port}"
    (tmp_path / "secret").write_bytes(b"0123456789abcdef0123")
    proc = start_service(where, "--secret", str(tmp_path / "secret"))
    try:
        monkeypatch.setenv(client.ENV, where)
        monkeypatch.setenv(client.TOKEN_ENV, credential(b"0123456789abcdef0123", "ann"))
        check = next(c for c in NOT_CAPSTONE if c.__name__ == "check_attention_scores")
        assert through_service(check, REFERENCE[check])[0] == "pass"
        row = next(r for r in ROWS if r[0] is check and r[1] is LATE_FAILURE[check])
        assert through_service(check, row[1])[:2] == ("fail", row[2])
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    monkeypatch.setenv(client.ENV, "tcp://no-port")
    with pytest.raises(client.ServiceUnavailable, match="no check service answers at tcp://no-port"):
        client.run("check_softmax", lambda x: x)


def raw(where: Path, request, limit: int = client.MAX_MESSAGE):
    """One request as a learner's side could send it, and the service's first answer (None: it hung up)."""
    import socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(where))
        client.send(sock, request)
        try:
            return client.receive(sock, limit)
        except ConnectionError:
            return None


def children(pid: int) -> list[str]:
    """The pids of a process's children (Linux)."""
    return Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="utf-8").split()


def wait_for(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds} s"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_class_s_service_refuses_what_a_learner_should_not_have(tmp_path, monkeypatch):
    """Found by attacking it: a check of a stage not released yet runs the reference (the capstone's test checks
    printed its model.py), 4 idle connections per user froze it for everyone, a huge first message or seed cost
    gigabytes."""
    import socket
    where = tmp_path / "checks.sock"
    proc = start_service(where, released="01")
    monkeypatch.setenv(client.ENV, str(where))
    try:
        for check, stage in (("check_split_heads", "02_multihead"), ("check_attention_tests", "13_capstone")):
            assert raw(where, {"check": check, "name": "f"})["done"]["text"] == (
                f"{check} is a check of stage {stage}, which this check service does not answer yet: it answers the "
                "stages up to 01_attention")
        request = {"check": "check_attention_scores", "name": "f", "seed": 1 << 20}
        assert raw(where, request)["done"]["text"].startswith("not a request this service answers"), request
        assert raw(where, {"check": "check_attention_scores", "name": "f", "pad": "x" * 5000}) is None  # > 4096 bytes
        check = next(c for c in NOT_CAPSTONE if c.__name__ == "check_attention_scores")
        # the children that answered have ended (on a loaded machine a child can still be exiting after its answer,
        # and would hold a place that belongs to the idle connections below)
        wait_for(lambda: len(children(proc.pid)) == 0)
        idle = []
        for _ in range(4):  # a learner's 4 connections that send nothing hold their 4 places...
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(where))
            idle.append(sock)
        with pytest.raises(client.ServiceUnavailable, match="running as many checks as it may"):
            client.run("check_attention_scores", REFERENCE[check])  # ...the fifth is told at once, not queued
        assert children(proc.pid) == []  # (a connection holds no child until its request has come)
        for sock in idle:
            sock.close()
        time.sleep(1)  # the service has seen them go
        assert through_service(check, REFERENCE[check])[0] == "pass"
        idle = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(2)]
        for sock in idle:
            sock.connect(str(where))
        time.sleep(11)  # an idle connection is dropped after 10 s
        assert all(sock.recv(1) == b"" for sock in idle)
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def test_a_busy_answer_sent_before_the_request_is_read_says_busy(tmp_path, monkeypatch):
    """A full service answers "busy" and closes at once, without reading the request: a client whose request then
    meets a closed socket (BrokenPipeError) still reads that answer (CI's run of the test above once said "broke
    off" instead)."""
    import socket
    import threading
    where = str(tmp_path / "checks.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(where)
    server.listen()
    closed = threading.Event()

    def busy():
        conn, _ = server.accept()
        client.send(conn, {"busy": True})
        conn.close()
        closed.set()

    threading.Thread(target=busy, daemon=True).start()
    connect = client.connect

    def connect_then_wait(path):  # the request is sent only after the service has closed the connection
        sock = connect(path)
        assert closed.wait(10)
        return sock

    monkeypatch.setattr(client, "connect", connect_then_wait)
    monkeypatch.setenv(client.ENV, where)
    try:
        with pytest.raises(client.ServiceUnavailable, match="running as many checks as it may"):
            client.run("check_attention_scores", lambda q, k: q)
    finally:
        server.close()


def test_a_repository_that_cannot_be_written_leaves_no_folder_behind(tmp_path, monkeypatch):
    """Found by attacking the service: 'tests/a.py' and 'tests/a.py/b.py' stopped the workspace half-written, and
    its folder stayed in /dev/shm (memory) for good."""
    from tinylm_checks import capstone
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(OSError):
        capstone.Workspace({"tests/a.py": "", "tests/a.py/b.py": ""})
    assert list(tmp_path.iterdir()) == []


def test_what_a_capstone_failure_shows_of_a_learner_s_value_is_cut_short_while_it_is_built():
    """Found by attacking the service: repr() of a YAML value with nested aliases (485 bytes) took 430 MB."""
    import yaml
    from tinylm_checks import capstone
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
    value = yaml.safe_load(bomb)  # 9^9 leaves: its full repr would take gigabytes
    start = time.perf_counter()
    shown = capstone._shown(value)
    assert len(shown) <= 300 and time.perf_counter() - start < 1
    assert capstone._shown({"d_model": 32}) == "{'d_model': 32}"


def test_a_file_too_large_to_parse_is_refused_by_its_size():
    """Found by attacking the service: parsing takes about 700 bytes of memory per character of source."""
    from tinylm_checks import capstone
    from tinylm_checks._core import Ctx
    with pytest.raises(CheckFailure) as e:
        capstone._own_code(Ctx("check_capstone_model", 0), {"model.py": "x = 1\n" * 50_000}, "model.py")
    assert e.value.message_id == "capstone.file_too_large" and "300000 characters" in str(e.value)


# ---- make class speaks the instructor's language (tinylm_grading.hubclass.main; the class itself: tests/test_hub.py)

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_make_class_says_what_it_needs_in_the_instructor_s_language(lang, monkeypatch, capsys):
    from tinylm_grading import hubclass
    from tinylm_solutions import i18n
    with i18n.using(lang):
        with pytest.raises(SystemExit) as e:
            hubclass.main(["--help"])
        assert e.value.code == 0
        assert tinylm_checks._text.say("grading.class.help.learners", default=3) in capsys.readouterr().out
        monkeypatch.setattr(hubclass.os, "geteuid", lambda: 1000)
        assert hubclass.main([]) == 2
        error = {"en": "make class: error: ", "zh": "make class：错误："}[lang]  # argparse's word, in the language too
        assert capsys.readouterr().err == f"{error}{tinylm_checks._text.say('grading.class.needs_root')}\n"
        monkeypatch.setattr(hubclass.os, "geteuid", lambda: 0)
        monkeypatch.setattr(hubclass.shutil, "which", lambda name: None)
        assert hubclass.main([]) == 2
        err = capsys.readouterr().err
        assert err == f"{error}{tinylm_checks._text.say('grading.class.needs_npm')}\n"
        assert bool(re.search(r"[\u4e00-\u9fff]", err)) == (lang == "zh")
