"""``tinylm-course`` (tinylm_solutions.course): the learner notebooks written out on any platform, a learner's work
never written over, JupyterLab started as ``make lab`` starts it, every line in both languages, one line for bad
input; and the first cell of every learner notebook, which installs the course in a hosted notebook that lacks it.
The wheel, a clean venv and a notebook run from what the command wrote: tests/test_learner_wheel.py."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest

from tinylm_solutions import course, i18n
from tinylm_solutions.messages import say

ROOT = Path(__file__).resolve().parent.parent
STAGES = sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.is_dir())
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def english(monkeypatch):
    """Each test speaks English unless it says otherwise, and leaves the process's language as it found it."""
    monkeypatch.setenv("TINYLM_LANG", "en")
    yield
    i18n.set_language(None)


def run(*args: str, env: dict | None = None, cwd: Path | None = None, encoding: str = "utf-8"
        ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tinylm_solutions.course", *args], capture_output=True,
                          env={**os.environ, "PYTHONIOENCODING": encoding, **(env or {})}, cwd=cwd, encoding=encoding)


# ---- release

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_release_writes_every_stage_s_learner_notebook(tmp_path, capsys, lang):
    folder = tmp_path / "my course"  # a space in the path, as in many home folders
    assert course.main(["release", str(folder), "--lang", lang]) == 0
    assert sorted(p.name for p in folder.iterdir()) == STAGES  # nothing else: no partial folder left
    for stage in STAGES:
        written = folder / stage / f"{stage}.ipynb"
        assert written.read_bytes() == (course.NOTEBOOKS / lang / stage / f"{stage}.ipynb").read_bytes()
    nb = nbformat.read(folder / "01_attention" / "01_attention.ipynb", as_version=4)
    assert nb.metadata.get("tinylm", {}).get("lang") == (lang if lang != "en" else None)
    assert capsys.readouterr().out == say("course.wrote", count=len(STAGES), folder=folder) + "\n"


def test_a_learner_s_work_is_never_written_over(tmp_path, capsys):
    folder = tmp_path / "course"
    work = folder / "01_attention" / "01_attention.ipynb"
    work.parent.mkdir(parents=True)
    work.write_text("my work")
    (folder / "13_capstone").mkdir()  # a stage folder without its notebook (the learner deleted or renamed it)
    (folder / "13_capstone" / "tiny-transformer").mkdir()
    assert course.main(["release", str(folder)]) == 0
    assert work.read_text() == "my work" and not (folder / "13_capstone" / "13_capstone.ipynb").exists()
    assert capsys.readouterr().out.splitlines() == [
        say("course.wrote", count=len(STAGES) - 2, folder=folder),
        say("course.kept", stages="01_attention, 13_capstone", folder=folder)]
    assert course.main(["release", str(folder)]) == 0  # again: everything is kept, in one line
    assert capsys.readouterr().out.splitlines() == [say("course.kept_all", count=len(STAGES), folder=folder)]
    assert work.read_text() == "my work"


def test_a_stage_that_appears_while_it_is_written_is_kept(tmp_path, monkeypatch, capsys):
    """Two ``release`` runs on one folder: the stage the other one wrote first stays, and no partial folder is left."""
    folder = tmp_path / "course"
    rename = os.rename

    def theirs_first(source, target):
        if Path(target).name == "02_multihead":
            Path(target).mkdir()
            (Path(target) / "02_multihead.ipynb").write_text("theirs")
        rename(source, target)

    monkeypatch.setattr(course.os, "rename", theirs_first)
    assert course.main(["release", str(folder)]) == 0
    assert (folder / "02_multihead" / "02_multihead.ipynb").read_text() == "theirs"
    assert sorted(p.name for p in folder.iterdir()) == STAGES
    assert say("course.kept", stages="02_multihead", folder=folder) in capsys.readouterr().out


@pytest.mark.parametrize("case", ["a file", "under a file"])
def test_a_folder_that_cannot_hold_the_notebooks_gets_one_line(tmp_path, case):
    (tmp_path / "notes.txt").write_text("not a folder")
    target = tmp_path / "notes.txt" if case == "a file" else tmp_path / "notes.txt" / "course"
    out = run("release", str(target))
    if case == "a file":
        expected = say("course.error.not_a_folder", folder=target)
    else:
        with pytest.raises(OSError) as e:  # what this system says (Linux: "Not a directory")
            target.mkdir(parents=True)
        expected = say("course.error.cannot_write", folder=target, reason=e.value.strerror)
    assert (out.returncode, out.stdout, out.stderr) == (2, "", f"tinylm-course: error: {expected}\n")


def test_the_command_speaks_the_notebooks_language(tmp_path):
    out = run("release", str(tmp_path / "c"), "--lang", "zh", env={"TINYLM_LANG": "en"})
    assert out.returncode == 0 and out.stdout.startswith("已把 14 本笔记本写进"), out.stdout


@pytest.mark.parametrize("encoding", ["gb18030", "cp1252"])
def test_chinese_lines_never_fail_on_a_stream_of_another_encoding(tmp_path, encoding):
    """A Chinese Windows writes GB18030 (code page 936); an English one's pipes cp1252, which has no Chinese: there the
    characters come out as escapes, and the command still does its work."""
    out = run("release", str(tmp_path / "c"), "--lang", "zh", encoding=encoding)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    i18n.set_language("zh")
    wrote = say("course.wrote", count=len(STAGES), folder=tmp_path / "c") + "\n"
    assert out.stdout == (wrote if encoding == "gb18030" else wrote.encode("cp1252", "backslashreplace").decode())
    assert (tmp_path / "c" / "00_setup" / "00_setup.ipynb").exists()


# ---- help, bad input, Python

@pytest.mark.parametrize("args", [[], ["lab"], ["release"]])
def test_the_help_is_in_the_user_s_language(args):
    en, zh = (run(*args, "--help", env={"TINYLM_LANG": lang}) for lang in ("en", "zh"))
    assert en.returncode == zh.returncode == 0
    assert "usage: tinylm-course" in en.stdout and not CJK.search(en.stdout)
    assert "用法：tinylm-course" in zh.stdout and {(): "自学", ("lab",): "JupyterLab 会一直运行",
                                                    ("release",): "别的什么也不做"}[tuple(args)] in zh.stdout
    if args == ["lab"]:
        assert "tinylm-course lab -- --no-browser --port 8890" in " ".join(en.stdout.split())


@pytest.mark.parametrize("args, problem", [
    ([], "the following arguments are required"),
    (["release"], "the following arguments are required: DIR"),
    (["release", "x", "--lang", "fr"], "invalid choice: 'fr'"),
    (["release", "x", "--", "--port", "1"], "-- --port 1: only tinylm-course lab takes options after --"),
])
def test_bad_input_gets_one_line(tmp_path, args, problem):
    out = run(*args, cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == "" and len(out.stderr.splitlines()) == 1, out.stderr
    assert out.stderr.startswith("tinylm-course") and problem in out.stderr
    assert not (tmp_path / "x").exists()


def test_an_old_python_gets_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(sys, "version_info", (3, 10, 12, "final", 0))
    assert course.main(["release", str(tmp_path / "c")]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err == "tinylm-course: error: " + say(
        "course.error.python", needed="3.11", version="3.10.12", python=sys.executable) + "\n"
    assert not (tmp_path / "c").exists()


def test_the_python_it_needs_is_the_package_s():
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == ">=" + ".".join(map(str, course.PYTHON))


def old_python() -> str | None:
    """A Python 3.10 that runs (pyenv's shims are on PATH even where the version is not chosen), or None."""
    for candidate in [shutil.which("python3.10"), *map(str, Path.home().glob(".pyenv/versions/3.10*/bin/python3.10"))]:
        if candidate and subprocess.run([candidate, "-c", "import sys; assert sys.version_info[:2] == (3, 10)"],
                                        capture_output=True).returncode == 0:
            return candidate
    return None


def test_under_an_old_python_the_module_runs_far_enough_to_say_so(tmp_path):
    """Someone who runs the checkout's module with an older Python (python3.10 -m tinylm_solutions.course) reads one
    line, not a SyntaxError: the module and what it imports parse on Python 3.10."""
    old = old_python()
    if old is None:
        pytest.skip("no Python 3.10 here")
    out = subprocess.run([old, "-m", "tinylm_solutions.course", "lab", str(tmp_path / "c")], capture_output=True,
                         text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "TINYLM_LANG": "zh"})
    assert out.returncode == 2 and out.stdout == "" and len(out.stderr.splitlines()) == 1, out.stderr
    assert re.fullmatch(r"tinylm-course: error: the TinyLM course needs Python 3\.11 or newer, and this is Python "
                        r"3\.10\.\d+ \(.*\): install a newer Python \(python\.org\) and run the course with it\n",
                        out.stderr)  # in English: that Python has no Babel to read the Chinese


def test_the_command_imports_no_pytorch():
    out = subprocess.run([sys.executable, "-c", "import sys, tinylm_solutions.course; print('torch' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout == "False\n"


def test_the_package_installs_the_command():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["tinylm-course"] == "tinylm_solutions.course:main"


# ---- lab

class Started(Exception):
    pass


@pytest.fixture
def started(monkeypatch):
    """What ``lab`` would start: the command and its environment (nothing is started)."""
    seen = {}

    def popen(command, env):
        seen.update(command=command, env=env)
        raise Started

    monkeypatch.setattr(course.subprocess, "Popen", popen)
    return seen


@pytest.mark.parametrize("lang, locale", [("en", "en"), ("zh", "zh_CN")])
def test_lab_writes_the_notebooks_and_runs_jupyterlab_in_the_notebooks_language(tmp_path, started, lang, locale):
    folder = tmp_path / "course"
    with pytest.raises(Started):
        course.main(["lab", str(folder), "--lang", lang, "--", "--no-browser", "--port", "8890"])
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == STAGES
    root = ["--allow-root"] if getattr(course.os, "geteuid", lambda: None)() == 0 else []  # Windows: no root
    assert started["command"] == [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={folder}", *root,
                                  "--no-browser", "--port", "8890"]
    settings = Path(started["env"]["JUPYTERLAB_SETTINGS_DIR"])
    assert settings == folder / ".jupyter-lab" / lang and started["env"]["TINYLM_LANG"] == lang
    plugin = settings / "@jupyterlab" / "translation-extension" / "plugin.jupyterlab-settings"
    assert json.loads(plugin.read_text()) == {"locale": locale}
    news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    assert json.loads(news.read_text()) == {"fetchNews": "false"}


def test_lab_s_default_folder_is_tinylm_course_in_the_current_folder(tmp_path, started, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Started):
        course.main(["lab"])
    assert started["command"][3] == f"--ServerApp.root_dir={tmp_path / 'tinylm-course'}"


def test_lab_without_jupyterlab_gets_one_line(tmp_path, monkeypatch, capsys, started):
    find_spec = course.importlib.util.find_spec
    monkeypatch.setattr(course.importlib.util, "find_spec", lambda name: None if name == "jupyterlab" else find_spec(name))
    assert course.main(["lab", str(tmp_path / "c")]) == 2
    assert capsys.readouterr().err == ("tinylm-course: error: " +
                                       say("course.error.no_jupyterlab", python=sys.executable) + "\n")
    assert (tmp_path / "c" / "00_setup").is_dir() and not started  # the notebooks are written all the same


@pytest.mark.skipif(shutil.which("make") is None, reason="no make here (Windows)")
def test_make_lab_and_make_release_are_the_command():
    made = {target: subprocess.run(["make", "-n", "-o", ".venv/.installed", target], capture_output=True, text=True,
                                   cwd=ROOT).stdout for target in ("lab", "release")}
    assert "-m tinylm_solutions.course release release" in made["release"]
    assert "-m tinylm_solutions.course lab release" in made["lab"] and "jupyter lab" not in made["lab"]


# ---- the first cell of every learner notebook

def first_cell(lang: str, course_from: str) -> str:
    nb = nbformat.read(course.NOTEBOOKS / lang / "00_setup" / "00_setup.ipynb", as_version=4)
    source = nb.cells[0].source
    assert source.count('COURSE = ""') == 1
    return source.replace('COURSE = ""', f"COURSE = {json.dumps(course_from)}")


@pytest.fixture
def shell(monkeypatch):
    """An IPython shell whose ``%pip`` only records its command line, in a process where the course is importable
    or not (``missing``)."""
    from IPython.core.interactiveshell import InteractiveShell

    ipython = InteractiveShell()
    ipython.commands = []
    monkeypatch.setattr(ipython, "system", ipython.commands.append)
    monkeypatch.delenv("TINYLM_LANG")
    yield ipython
    InteractiveShell.clear_instance()


def run_cell(shell, source: str, monkeypatch, *, missing: bool):
    if missing:
        monkeypatch.setitem(sys.modules, "tinylm_checks", None)  # import tinylm_checks: ModuleNotFoundError
    result = shell.run_cell(source, silent=True)
    return result.error_in_exec


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_where_the_course_is_installed_the_first_cell_installs_nothing(shell, monkeypatch, lang):
    assert run_cell(shell, first_cell(lang, "git+https://example.org/tinylm.git"), monkeypatch, missing=False) is None
    assert shell.commands == [] and os.environ["TINYLM_LANG"] == lang  # the checks speak the notebook's language


def test_where_it_is_missing_the_first_cell_installs_it_from_course(shell, monkeypatch):
    wheel = r"C:\Users\张三\Downloads\tinylm_course-0.1.0-py3-none-any.whl"
    error = run_cell(shell, first_cell("en", wheel), monkeypatch, missing=True)
    assert len(shell.commands) == 1
    assert shell.commands[0].endswith(f' -m pip install --quiet "{wheel}"')  # the kernel's Python; quoted: spaces
    assert isinstance(error, ModuleNotFoundError)  # nothing was installed (the pip above only recorded its line)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_where_it_is_missing_and_no_address_is_given_one_line_says_so(shell, monkeypatch, lang):
    error = run_cell(shell, first_cell(lang, ""), monkeypatch, missing=True)
    assert isinstance(error, RuntimeError) and shell.commands == []
    i18n.set_language(lang)
    assert str(error) == say("course.cell.no_source") and (lang == "en") != bool(CJK.search(str(error)))


def test_on_an_old_python_the_first_cell_says_so_and_installs_nothing(shell, monkeypatch):
    monkeypatch.setattr(sys, "version_info", (3, 10, 12, "final", 0))
    monkeypatch.setattr(sys, "version", "3.10.12 (main, Jun 11 2023) [GCC 11.3.0]")
    error = run_cell(shell, first_cell("en", "git+https://example.org/tinylm.git"), monkeypatch, missing=True)
    assert isinstance(error, RuntimeError) and shell.commands == []
    assert str(error) == say("course.cell.python", needed="3.11", version="3.10.12")


def test_every_learner_notebook_starts_with_the_same_first_cell():
    for lang in ("en", "zh"):
        cells = {nbformat.read(course.NOTEBOOKS / lang / s / f"{s}.ipynb", as_version=4).cells[0].source
                 for s in STAGES}
        assert len(cells) == 1 and "%pip install" in cells.pop()
