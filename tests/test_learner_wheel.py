"""A learner's path from a wheel, with no checkout beside it (issue 39, item 5): the wheel built from the repository,
installed into a clean venv the way a hosted notebook's first cell installs it, ``tinylm-course release`` writing the
notebooks out, stage 00 executed from what it wrote in both languages, ``tinylm-course lab`` serving JupyterLab in
Chinese, and pip refusing a Python older than the course's.

The venv is made from the base Python (not the course's .venv, whose editable install would show the checkout) and
holds only what it installs. Its packages come from a wheelhouse of the course's dependencies at constraints.txt's
versions, made once with pip (from its usual indexes) and kept in ``~/.cache/tinylm/wheelhouse/<key>`` (or
``$TINYLM_WHEELHOUSE``); every install in the test is ``--no-index`` from it. Measured on the 2-core machine: the
wheelhouse 18 s the first time (395 MB, PyTorch's CPU wheel included), then the whole module about 80 s.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import nbformat
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parent.parent
BASE_PYTHON = Path(getattr(sys, "_base_executable", sys.executable))
CONSTRAINTS = ROOT / "constraints.txt"
CJK = re.compile(r"[\u4e00-\u9fff]")
HOSTED = ["pip==26.3", "torch", "ipykernel", "nbclient", "nbformat"]
"""What the clean venv starts with, as a hosted notebook does: Jupyter's kernel and PyTorch, not the course."""
RUNNER = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
               resources={"metadata": {"path": sys.argv[3]}}).execute()
nbformat.write(nb, sys.argv[2])
"""


def pip(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """This Python's pip (the course's .venv has it), with the given environment."""
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})})


def requirements(*extras: str) -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *(r for e in extras for r in project["optional-dependencies"][e])]


@pytest.fixture(scope="module")
def wheelhouse() -> Path:
    """Wheels of everything the venv installs, at constraints.txt's versions (cached: see the module's docstring)."""
    wanted = [*requirements("lab"), *HOSTED]
    key = hashlib.sha256((CONSTRAINTS.read_text() + "\n".join(wanted)).encode()).hexdigest()[:16]
    home = Path(os.environ.get("TINYLM_WHEELHOUSE") or Path.home() / ".cache" / "tinylm" / "wheelhouse")
    house = home / key
    if not house.is_dir():
        partial = home / f".{key}.{os.getpid()}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        made = pip("wheel", "--quiet", "-c", str(CONSTRAINTS), "-w", str(partial), *wanted)
        assert made.returncode == 0, made.stderr
        try:
            partial.rename(house)
        except OSError:  # another worker made it meanwhile
            shutil.rmtree(partial, ignore_errors=True)
    return house


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The course's wheel, built from a copy of what it is made of (a build in the checkout would leave build/)."""
    source, dist = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source)
    for name in ("tinylm_solutions", "tinylm_checks", "tinylm_grading", "assets"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "learner.json"))
    built = pip("wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(dist), str(source))
    assert built.returncode == 0, built.stderr
    return next(dist.glob("tinylm_course-*.whl"))


@pytest.fixture(scope="module")
def learner(tmp_path_factory, wheelhouse, wheel) -> dict:
    """A clean venv that has what a hosted notebook has; the course gets in through a learner notebook's first cell,
    run in that venv's kernel, from the wheel (offline, from the wheelhouse, at the pinned versions)."""
    home = tmp_path_factory.mktemp("learner")  # no checkout here, nor on any path the venv knows
    venv = home / "venv"
    subprocess.run([str(BASE_PYTHON), "-m", "venv", "--without-pip", str(venv)], check=True)
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_CONSTRAINT": str(CONSTRAINTS)}
    made = pip("--python", str(venv / "bin" / "python"), "install", "--quiet", "--no-compile", *HOSTED, env=offline)
    assert made.returncode == 0, made.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "TINYLM_LANG")}
    env.update(offline, PATH=f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin")
    learner = {"home": home, "venv": venv, "env": env, "wheel": wheel}
    # the hosted notebook: stage 00 as the package ships it, its first cell told where the course is
    with zipfile.ZipFile(wheel) as z:
        nb = nbformat.reads(z.read("tinylm_solutions/learner_notebooks/en/00_setup/00_setup.ipynb").decode(), 4)
    assert 'COURSE = ""' in nb.cells[0].source
    nb.cells = [nb.cells[0]]
    nb.cells[0].source = nb.cells[0].source.replace('COURSE = ""', f"COURSE = {json.dumps(str(wheel))}")
    learner["first_cell"] = execute(learner, nb, home)
    return learner


def execute(learner: dict, nb: nbformat.NotebookNode, folder: Path) -> nbformat.NotebookNode:
    """``nb`` run in the venv's kernel, in ``folder``, every cell whatever the ones before did."""
    given, ran = folder / "given.ipynb", folder / "ran.ipynb"
    nbformat.write(nb, given)
    runner = learner["home"] / "run_notebook.py"
    runner.write_text(RUNNER)
    subprocess.run([str(learner["venv"] / "bin" / "python"), str(runner), str(given), str(ran), str(folder)],
                   check=True, cwd=folder, env=learner["env"], capture_output=True, timeout=600)
    given.unlink()
    return nbformat.read(ran, as_version=4)


def command(learner: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(learner["venv"] / "bin" / "tinylm-course"), *args], capture_output=True, text=True,
                          cwd=learner["home"], env=learner["env"])


def errors(nb: nbformat.NotebookNode) -> dict[int, tuple[str, str]]:
    """Cell index -> (exception name, its message) of every cell that raised."""
    return {i: (o.ename, o.evalue) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for o in c.get("outputs", []) if o.output_type == "error"}


def test_the_first_cell_installs_the_course_from_the_wheel(learner):
    assert errors(learner["first_cell"]) == {}
    shown = subprocess.run([str(learner["venv"] / "bin" / "python"), "-c",
                            "import tinylm_checks, tinylm_solutions.course as c; print(tinylm_checks.__file__); "
                            "print(c.NOTEBOOKS)"], capture_output=True, text=True, check=True, env=learner["env"],
                           cwd=learner["home"]).stdout.splitlines()
    site = learner["venv"] / "lib"
    assert all(Path(line).is_relative_to(site) for line in shown), shown  # the wheel's files, not the checkout's
    assert (learner["venv"] / "bin" / "tinylm-course").exists()


def test_release_writes_the_notebooks_and_keeps_them_the_second_time(learner):
    first = command(learner, "release", "course")
    assert first.returncode == 0 and first.stdout.startswith("wrote the notebooks of 14 stages into "), first
    again = command(learner, "release", "course")
    assert again.returncode == 0 and again.stdout.startswith("kept all 14 stages in "), again
    assert sorted(p.name for p in (learner["home"] / "course").iterdir()) == \
        sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.is_dir())


def test_lab_without_jupyterlab_says_so_in_one_line(learner):
    out = command(learner, "lab", "lab-course")
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1
    assert out.stderr.startswith("tinylm-course: error: JupyterLab is not installed in this Python (")


def solution(stage: str, grade_id: str) -> str:
    nb = nbformat.read(ROOT / "notebooks" / stage / f"{stage}.ipynb", as_version=4)
    return next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_stage_00_runs_from_what_the_command_wrote(learner, lang):
    """As released, every cell runs; the cells that show a failing check (tagged raises-exception) and the check of
    the exercise not yet done fail with a CheckFailure in the notebook's language, nothing crashes. The exercise then
    filled in (the source's solution) passes its check."""
    folder = learner["home"] / f"course-{lang}"
    assert command(learner, "release", str(folder), "--lang", lang).returncode == 0
    stage = folder / "00_setup"
    nb = nbformat.read(stage / "00_setup.ipynb", as_version=4)
    check = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "softmax_check")
    failing = {i for i, c in enumerate(nb.cells) if "raises-exception" in c.metadata.get("tags", [])} | {check}
    nb.cells += [nbformat.v4.new_code_cell(solution("00_setup", "softmax")),
                 nbformat.v4.new_code_cell("check_softmax(softmax)")]
    ran = execute(learner, nb, stage)
    found = errors(ran)
    assert set(found) == failing and {name for name, _ in found.values()} == {"CheckFailure"}, found
    assert all(bool(CJK.search(message)) == (lang == "zh") for _, message in found.values()), found
    assert "".join(o.get("text", "") for o in ran.cells[-1].outputs).startswith("✔")
    assert not any(c.get("outputs") for c in ran.cells[:1])  # the first cell: the course is there, nothing to do


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lab_serves_the_notebooks_with_jupyterlab_in_chinese(learner):
    made = pip("--python", str(learner["venv"] / "bin" / "python"), "install", "--quiet", "--no-compile",
               f"{learner['wheel']}[lab]", env=learner["env"])
    assert made.returncode == 0, made.stderr
    port, token = free_port(), "t" + hashlib.sha256(os.urandom(8)).hexdigest()[:16]
    lab = subprocess.Popen([str(learner["venv"] / "bin" / "tinylm-course"), "lab", "lab-zh", "--lang", "zh", "--",
                            "--no-browser", f"--port={port}", "--ip=127.0.0.1", f"--IdentityProvider.token={token}"],
                           cwd=learner["home"], env=learner["env"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/lab/api"
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"{url}/settings/@jupyterlab/translation-extension:plugin?token={token}",
                                            timeout=5) as r:
                    settings = json.load(r)
                break
            except OSError:
                assert lab.poll() is None, lab.stdout.read().decode()
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within 120 s")
        assert settings["settings"]["locale"] == "zh_CN"
        with urllib.request.urlopen(f"{url}/translations?token={token}", timeout=10) as r:
            assert "zh_CN" in json.load(r)["data"]  # the language pack is there to speak it
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents/00_setup?token={token}", timeout=10) as r:
            assert [f["name"] for f in json.load(r)["content"]] == ["00_setup.ipynb"]
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        lab.wait(timeout=30)
    nb = nbformat.read(learner["home"] / "lab-zh" / "00_setup" / "00_setup.ipynb", as_version=4)
    assert nb.metadata["tinylm"]["lang"] == "zh"


def test_pip_refuses_a_python_older_than_the_course_s(tmp_path, wheel):
    old = next((str(p) for p in Path.home().glob(".pyenv/versions/3.10*/bin/python3.10")), shutil.which("python3.10"))
    if old is None or subprocess.run([old, "-c", "import sys; assert sys.version_info[:2] == (3, 10)"]).returncode:
        pytest.skip("no Python 3.10 here")
    subprocess.run([old, "-m", "venv", "--without-pip", str(tmp_path / "old")], check=True)
    out = pip("--python", str(tmp_path / "old" / "bin" / "python"), "install", "--no-deps", "--no-index", str(wheel))
    assert out.returncode == 1
    assert re.search(r"Package 'tinylm-course' requires a different Python: 3\.10\.\d+ not in '>=3\.11'", out.stderr)
