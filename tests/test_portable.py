"""The learner's side on machines the suite does not run on (issue 39, items 3 and 5), in stand-ins for them.

- Windows: a process whose course code sees Python without its Unix-only APIs (``os.fork``, ``os.register_at_fork``,
  ``signal.SIGKILL``, ``socket.AF_UNIX``, ``resource``, ``fcntl``, ``pwd``...: :mod:`tests.standin.sitecustomize`,
  ``TINYLM_STANDIN=no-unix``), where the learner side is imported and the checks' tests run (:class:`TestWithoutUnix`).
- A Chinese Windows: the fast tier under a GB18030 locale with ``PYTHONUTF8=0``, where ``open()`` without an encoding
  reads and writes GB18030 (as code page 936 does there) and an ``EncodingWarning`` raised in the course's packages is
  an error (:class:`TestGB18030`). The locale is made with ``localedef`` (Debian's ``locales``, which ``.ci/run``
  installs) into a folder of the test's (``LOCPATH``: no root needed).
- A new learner on a Chinese Windows whose home folder is ``张 三``: both at once (:class:`TestNewLearner`).

Each stand-in's pytest run ends with a line from ``-p standin_report`` saying what it took away, checked in that
process; the run fails if something was not.
"""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from tinylm_checks import Repository

ROOT = Path(__file__).resolve().parents[1]
STANDIN = ROOT / "tests" / "standin"
BIN = Path(sys.executable).parent


def standin_env(standins: str, locales: Path | None = None, **extra: str) -> dict[str, str]:
    """This process's environment for a process with the stand-ins ``standins`` (``no-unix``, ``encoding``, both with a
    comma), without this session's pytest and capstone-cache variables (the run makes its own) and locale (this test
    may run in the GB18030 stand-in)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_", "LC_", "PYTHON"))
           and k not in ("TINYLM_CAPSTONE_CACHE", "LANG", "LOCPATH", "TINYLM_STANDIN")}
    env.update(PYTHONPATH=str(STANDIN), TINYLM_STANDIN=standins, PYTHONDONTWRITEBYTECODE="1")
    if "encoding" in standins:
        env.update(LOCPATH=str(locales), LANG="zh_CN.GB18030", LC_ALL="zh_CN.GB18030", PYTHONUTF8="0",
                   PYTHONWARNDEFAULTENCODING="1",
                   TINYLM_LANG="en")  # as on Windows, where no LANG says Chinese: the tests' expectations are English
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str], cwd: Path = ROOT, timeout: float = 1800) -> tuple[int, str]:
    """``args`` run with ``env``: (exit code, output), read in the encoding the stand-in's locale writes."""
    done = subprocess.run(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=timeout)
    return done.returncode, done.stdout.decode("gb18030" if "LC_ALL" in env else "utf-8", "replace")


def standin_pytest(standins: str, args: list[str], locales: Path | None = None) -> str:
    """``pytest *args`` in the stand-ins: its output, after checking it passed and said what the stand-ins did."""
    code, out = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "standin_report", *args],
                    standin_env(standins, locales))
    assert code == 0, out[-8000:]
    return out


@pytest.fixture(scope="module")
def gb18030(tmp_path_factory) -> Path:
    """A folder holding the locale zh_CN.GB18030, for ``LOCPATH``."""
    if shutil.which("localedef") is None or not Path("/usr/share/i18n/locales/zh_CN").is_file():
        if os.environ.get("TINYLM_REQUIRE_BROWSER") == "1":
            raise RuntimeError("the GB18030 stand-in needs localedef and Debian's locales (.ci/run installs them)")
        pytest.skip("needs localedef and the locales' sources: apt-get install locales")
    folder = tmp_path_factory.mktemp("locales")
    made = subprocess.run(["localedef", "-i", "zh_CN", "-f", "GB18030", str(folder / "zh_CN.GB18030")],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stdout + made.stderr
    return folder


# --------------------------------------------------------------------------- fast: the stand-in itself, the repository

def test_the_learner_side_imports_where_there_are_no_unix_apis(tmp_path):
    """Every module of the learner's side imports in the Windows stand-in (but the capstone repository's scripts, run
    below, and the grader's fresh copy of the checks); none imports the grading package (Linux only); the checks'
    commands run as new pythons, with what they print in UTF-8."""
    script = textwrap.dedent("""
        import os, pkgutil, sys, importlib
        import sitecustomize
        SCRIPTS = tuple(f"tinylm_solutions.capstone.{name}" for name in ("model", "train", "generate", "evaluate", "tests"))
        for package in ("tinylm_checks", "tinylm_solutions"):
            root = importlib.import_module(package)
            for module in pkgutil.walk_packages(root.__path__, package + "."):
                if module.name != "tinylm_checks.grading" and not module.name.startswith(SCRIPTS):
                    importlib.import_module(module.name)
        from tinylm_checks import _forked
        ours = [m for m in sys.modules if m.startswith("tinylm_")]
        grading = [m for m in ours if m.startswith("tinylm_grading")]
        print(len(ours) > 80, all(m in sitecustomize.SEEN for m in ours), grading)
        print(_forked.FORKS, hasattr(_forked.os, "register_at_fork"), hasattr(os, "fork"))
        print(_forked.run(["-c", "print('张三 ✔')"], os.getcwd(), dict(os.environ), 60))
    """)
    (tmp_path / "imports.py").write_text(script, encoding="utf-8")  # (a command line is in the locale's encoding)
    assert run([sys.executable, str(tmp_path / "imports.py")], standin_env("no-unix")) == (
        0, "True True []\nFalse False False\n(0, '张三 ✔\\n')\n")


def test_the_stand_in_takes_the_apis_from_the_course_s_code_only():
    """The course's modules and the script a process runs see Windows' view; the libraries keep Linux's (PyTorch
    calls os.register_at_fork as it is imported)."""
    script = textwrap.dedent("""
        import os, signal, socket, sys
        try:
            import fcntl
        except ImportError as e:
            print(e)
        print(hasattr(os, "fork"), hasattr(signal, "SIGKILL"), hasattr(socket, "AF_UNIX"))
        print(hasattr(sys.modules["os"], "register_at_fork"), hasattr(sys.modules["signal"], "SIGKILL"))
    """)
    assert run([sys.executable, "-c", script], standin_env("no-unix")) == (
        0, "No module named 'fcntl' (tests/standin: as on Windows)\nFalse False False\nTrue True\n")


def test_without_unix_sockets_the_check_service_is_reached_over_tcp_only():
    """Windows has no AF_UNIX: a learner's environment says where to set the service's TCP address (over TCP the
    credential is the hub's: tests below run a check that way)."""
    script = ("from tinylm_checks import client\n"
              "try:\n    client.run('check_attention_scores', print)\n"
              "except client.ServiceUnavailable as e:\n    print(e)\n")
    code, out = run([sys.executable, "-c", script], standin_env("no-unix", TINYLM_CHECK_SERVICE=""))
    from tinylm_checks import client
    from tinylm_checks._text import say
    where = Path(tempfile.gettempdir()) / "tinylm-0" / "checks.sock"  # (Windows has no uid)
    assert (code, out) == (0, say("client.no_unix_sockets", path=where, env=client.ENV) + "\n")


TEXT_OPENS = ("open", "read_text", "write_text", "fdopen", "TextIOWrapper")


def unnamed_encodings(tree: ast.AST) -> list[int]:
    """The lines of ``tree`` that open a text without naming its encoding: ``open``, ``Path.open``, ``read_text``,
    ``write_text``, ``os.fdopen``, ``io.TextIOWrapper`` (not in a binary mode), ``subprocess``'s ``text=True``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or any(k.arg in ("encoding", None) for k in node.keywords):
            continue
        f = node.func
        name, owner = (f.id, None) if isinstance(f, ast.Name) else \
            (f.attr, getattr(f.value, "id", None)) if isinstance(f, ast.Attribute) else (None, None)
        if name in ("run", "Popen", "check_output") and owner == "subprocess":
            found += [node.lineno] if any(k.arg in ("text", "universal_newlines") for k in node.keywords) else []
            continue
        if name not in TEXT_OPENS or (owner, name) == ("os", "open"):
            continue
        at = 0 if name == "open" and owner not in (None, "io") else 1  # Path.open(mode), open(file, mode)
        mode = next((k.value for k in node.keywords if k.arg == "mode"), node.args[at] if len(node.args) > at else None)
        if name in ("open", "fdopen") and isinstance(mode, ast.Constant) and "b" in str(mode.value):
            continue
        found.append(node.lineno)
    return found


def test_every_text_the_learner_side_opens_names_its_encoding():
    """Where the stand-ins cannot look: code the tests do not run (an error's path, what only runs on Windows), and the
    scripts the checks run (the code strings that start with ``# code:``)."""
    found = []
    for path in sorted([*(ROOT / "tinylm_checks").rglob("*.py"), *(ROOT / "tinylm_solutions").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scripts = [ast.parse(node.value) for node in ast.walk(tree) if isinstance(node, ast.Constant)
                   and isinstance(node.value, str) and node.value.lstrip("\n").startswith("# code:")]
        found += [f"{path.relative_to(ROOT)}:{line}" for t in (tree, *scripts) for line in unnamed_encodings(t)]
    assert found == []
    assert unnamed_encodings(ast.parse("open(p)\nPath(p).open('w')\nopen(p, 'rb')\np.read_text()\n"
                                       "subprocess.run(a, text=True)\nos.open(p, 1)\np.open('rb')\n")) == [1, 2, 4, 5]


NAMES = ["model.py", "tests/test_attention.py", "configs/tiny.yaml", "notes/笔记 一.md"]


@pytest.mark.parametrize("folder", ["tiny-transformer", "张 三/课程 release/13_capstone/tiny-transformer"])
def test_a_repository_round_trips_utf8_in_any_folder(tmp_path, folder):
    """What the learner's notebook writes (Chinese comments in model.py) reads back the same, and model.py imports,
    wherever the learner's home is; the files are UTF-8 whatever the locale."""
    files = {name: f"# 张三的 {name}：因果掩码 ✔\nVALUE = '猫追狗'\n" for name in NAMES}
    repo = Repository(tmp_path / folder)
    repo.write(files)
    assert repo() == files
    assert (tmp_path / folder / "model.py").read_bytes() == files["model.py"].encode("utf-8")
    done = subprocess.run([sys.executable, "-c", "import model; print(model.VALUE == '猫追狗')"],
                          cwd=tmp_path / folder, capture_output=True)
    assert (done.returncode, done.stdout) == (0, b"True\n")


def test_a_repository_drops_an_editor_s_byte_order_mark(tmp_path):
    (tmp_path / "model.py").write_bytes("\ufeff# 模型\nx = 1\n".encode("utf-8"))
    assert Repository(tmp_path)() == {"model.py": "# 模型\nx = 1\n"}


def test_a_file_not_in_utf8_is_one_clear_line(tmp_path):
    """An editor that saved model.py in the system's encoding (GBK on a Chinese Windows)."""
    from tinylm_checks._text import say
    (tmp_path / "model.py").write_bytes("# 张三\nx = 1\n".encode("gbk"))  # 张: d5 c5, no UTF-8
    with pytest.raises(ValueError) as e:
        Repository(tmp_path)()
    assert str(e.value) == say("lab.repository.not_utf8", name="model.py", position=3)


# --------------------------------------------------------------------------- slow: the stand-ins' runs

@pytest.mark.slow
class TestWithoutUnix:
    def test_the_checks_pass_the_reference_and_fail_the_mutants(self):
        """The checks' tests (the capstone's reference at the learner's seed included: its commands run as new pythons)
        in a process without the Unix-only APIs. About 90 s on 2 cores."""
        out = standin_pytest("no-unix", ["tests/test_checks_reference.py", "tests/test_checks_mutants.py",
                                         "-k", "not capstone and not _tests- or reference and -0]"])
        assert "stand-in no-unix: " in out and "stand-in problem" not in out, out[-3000:]

    def test_a_check_reaches_the_service_over_tcp_with_the_learner_s_credential(self, tmp_path):
        """A class's service (on Linux, as in a cluster) and a learner on Windows: the credential the hub issued."""
        from test_classmode import SECRET, end, start, tcp_port

        from tinylm_grading import checkservice
        (tmp_path / "secret").write_bytes(SECRET)
        port = tcp_port()
        proc, _ = start(f"tcp://127.0.0.1:{port}", "--released", "01", "--secret", str(tmp_path / "secret"))
        try:
            script = ("from tinylm_checks import client\nfrom tinylm_solutions.attention import attention_scores\n"
                      "client.run('check_attention_scores', attention_scores)\n")
            for credential, want in (("ann:" + "0" * 64, "ServiceUnavailable"),
                                     (checkservice.credential(SECRET, "ann"), "✔ check_attention_scores passed")):
                env = standin_env("no-unix", TINYLM_CHECK_SERVICE=f"tcp://127.0.0.1:{port}",
                                  TINYLM_CHECK_TOKEN=credential)
                code, out = run([sys.executable, "-c", script], env, timeout=300)
                assert want in out, out
        finally:
            end(proc)


@pytest.mark.slow
class TestGB18030:
    def test_the_fast_tier_passes(self, gb18030):
        """What a Chinese Windows does to open(): every test of the fast tier, and the commands they run. About
        2.5 minutes on 2 cores."""
        out = standin_pytest("encoding", ["-n", "2", "-m", "not slow", "tests"], gb18030)
        assert "stand-in encoding: open() without an encoding reads GB18030" in out, out[-3000:]


LEARNER = '''
# A new learner on a Chinese Windows, home folder "张 三": stage 01's check, the capstone repository written, imported,
# trained and checked, the trainer's command lines. The home's name is made here: a name given from outside would
# reach this process as the UTF-8 bytes its parent wrote, which it reads as GB18030 (on Windows, names are Unicode).
import os, subprocess, sys
from pathlib import Path
home = Path.cwd() / "张 三"
(home / "tmp").mkdir(parents=True)
os.environ.update(HOME=str(home), USERPROFILE=str(home), TMPDIR=str(home / "tmp"))
os.chdir(home)
from tinylm_checks import Repository, check_attention_scores, check_capstone_model, check_capstone_train
from tinylm_checks import check_capstone_generate, lab
from tinylm_solutions.attention import attention_scores
from tinylm_solutions.capstone import repo as reference

bin_ = Path(sys.argv[1])
check_attention_scores(attention_scores)
work = home / "tinylm course" / "release" / "13_capstone"
work.mkdir(parents=True)
os.chdir(work)
files = reference()
files["model.py"] = "# 张三的模型：因果掩码、注意力和 TinyLM\\n" + files["model.py"]
Repository("tiny-transformer").write(files)
repository = Repository("tiny-transformer")
check_capstone_model(repository)
check_capstone_train(repository)
check_capstone_generate(repository)
corpus = home / "语料 一.txt"
corpus.write_text("春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。\\n" * 40, encoding="utf-8")

def python(*args, cwd):
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True)  # as a learner would
    return done.returncode, (done.stdout.strip().splitlines() or [""])[-1], done.stderr.strip()[-2000:]

print(python("-c", "import model; print(model.TinyLM.__name__)", cwd="tiny-transformer"))
print(python("train.py", "--config", "configs/tiny.yaml", "--steps", "3", "--data", str(corpus), "--out",
             str(home / "检查点 1.pt"), cwd="tiny-transformer"))
code, out, err = python("generate.py", "--checkpoint", str(home / "检查点 1.pt"), "--prompt", "春眠",
                        "--max-new-tokens", "5", "--top-k", "1", cwd="tiny-transformer")
print(code, out[:2], len(out), err)
(home / "运行 1").mkdir()
trained = subprocess.run([str(bin_ / "tinylm-train"), "--corpus", str(corpus), "--steps", "3", "--eval-interval", "3",
                          "--no-progress", "--checkpoint", str(home / "运行 1" / "run.pt")], capture_output=True,
                         text=True)
print(trained.returncode, trained.stderr.strip()[-2000:])
generated = subprocess.run([str(bin_ / "tinylm-generate"), "--checkpoint", str(home / "运行 1" / "run.pt"),
                            "--prompt", "春眠", "--tokens", "5"], capture_output=True, text=True)
print(generated.returncode, generated.stdout[:2], len(generated.stdout.strip()), generated.stderr.strip()[-2000:])
lab.record_run("09_train", loss=1.5, note="张三的第一次训练")
print(lab.load_runs()["09_train"]["note"], lab.runs_dir().is_relative_to(home))
'''


@pytest.mark.slow
class TestNewLearner:
    def test_a_new_learner_on_a_chinese_windows_in_a_home_named_zhang_san(self, tmp_path, gb18030):
        """Both stand-ins at once, in a home folder with a space and Chinese in its name (its temporary folder there
        too, where the capstone's checks run the learner's files). About 40 s."""
        (tmp_path / "learner.py").write_text(LEARNER, encoding="utf-8")
        env = standin_env("no-unix,encoding", gb18030, OMP_NUM_THREADS="1")
        env.pop("TINYLM_RUNS", None)
        code, out = run([sys.executable, "learner.py", str(BIN)], env, cwd=tmp_path, timeout=900)
        home = tmp_path / "张 三"
        lines = out.splitlines()
        assert code == 0, out
        assert [line.split(" passed")[0] for line in lines[:4]] == [
            "✔ check_attention_scores", "✔ check_capstone_model", "✔ check_capstone_train", "✔ check_capstone_generate"]
        assert lines[4:] == ["(0, 'TinyLM', '')", f"(0, 'saved {home / '检查点 1.pt'}', '')", "0 春眠 7 ",
                             "0 ", "0 春眠 7 ", "张三的第一次训练 True"], out
