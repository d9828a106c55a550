"""The supported PyTorch range: check_environment's verdict on each kind of version (pinned, supported, too old,
newer than tested), the range stated alike in pyproject.toml, the lock, notebook 00 and the checks, and (slow tier)
the reference and the checks tested at both ends of the range, each end in a venv of its own with that PyTorch beside
the course's learner-side dependencies (tools/torch_venv.py: built once into the cache folder, about a minute and 5 GB
each, then reused)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import torch

from tinylm_checks import CheckFailure, set_language
from tinylm_checks.environment import NEWEST_TORCH, OLDEST_TORCH, PINNED_TORCH, check_environment, torch_release

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import torch_venv  # noqa: E402

ENDS = {"oldest": "2.5.0", "newest": "2.15.0"}
"""The versions tested at the range's ends: the first release of OLDEST_TORCH, the newest on PyPI of NEWEST_TORCH."""
CJK = re.compile(r"[\u4e00-\u9fff]")


def run(monkeypatch, capsys, version: str) -> list[str]:
    """check_environment's lines under a PyTorch that says it is ``version``."""
    monkeypatch.setattr(torch, "__version__", version)
    check_environment()
    out, err = capsys.readouterr()
    assert err == ""
    return out.splitlines()


def test_the_pinned_torch_passes_without_a_warning(monkeypatch, capsys):
    lines = run(monkeypatch, capsys, PINNED_TORCH + "+cpu")
    assert len(lines) == 6  # python, torch, threads, cores, executable; the verdict
    assert lines[1].endswith(f": {PINNED_TORCH}")
    assert lines[-1] == f"✔ check_environment passed: PyTorch {PINNED_TORCH} on {torch.get_num_threads()} CPU threads"


@pytest.mark.parametrize("version", ["2.5.0+cu121", "2.15.0", "2.12.1"])
def test_a_supported_torch_passes_with_a_warning_that_names_the_numbers_that_may_differ(monkeypatch, capsys, version):
    installed = version.split("+")[0]
    lines = run(monkeypatch, capsys, version)
    assert len(lines) == 7
    assert lines[5] == f"✔ check_environment passed: PyTorch {installed} on {torch.get_num_threads()} CPU threads"
    assert lines[6].startswith(
        f"⚠ the course's runs were made on PyTorch {PINNED_TORCH}, not {installed}: the checks work on {installed} "
        "(they are tested on 2.5 to 2.15), but the numbers and samples the notebooks state from those runs may "
        "differ from yours, and a sentence about them may not hold: the losses, perplexities, gradient norms and "
        "generated samples of notebooks 09, 10 and 11, the model answers of notebook 12 that quote them, and the "
        "example losses of notebook 13. ")
    assert lines[6].endswith(f'%pip install "torch=={PINNED_TORCH}", then restart the kernel')


@pytest.mark.parametrize("version", ["2.4.1+cu121", "2.4.0", "1.13.1", "2.0.0a0+gitabcdef"])
def test_a_torch_below_the_range_fails_in_one_line_with_the_range_and_the_upgrade(monkeypatch, capsys, version):
    monkeypatch.setattr(torch, "__version__", version)
    with pytest.raises(CheckFailure) as failure:
        check_environment()
    assert failure.value.message_id == "environment.old_torch" and failure.value.mistake is None
    assert str(failure.value) == (
        f"check_environment failed: PyTorch {version.split('+')[0]} is older than the course supports (PyTorch 2.5 "
        f"or newer; its runs were made on {PINNED_TORCH}): upgrade it in a cell with %pip install \"torch>=2.5\" (or "
        "start JupyterLab with `make lab`, which uses the course's .venv), then restart the kernel")
    assert "✔" not in capsys.readouterr().out


def test_a_torch_newer_than_tested_passes_with_both_warnings(monkeypatch, capsys):
    lines = run(monkeypatch, capsys, "2.16.0.dev20260101+cpu")
    assert lines[5].startswith("✔ check_environment passed: PyTorch 2.16.0.dev20260101 on ")
    assert lines[6] == ("⚠ PyTorch 2.16.0.dev20260101 is newer than the course was tested on (2.5 to 2.15): if a "
                        f"check fails in a way your code cannot explain, try PyTorch {PINNED_TORCH}: %pip install "
                        f"\"torch=={PINNED_TORCH}\", then restart the kernel")
    assert lines[7].startswith(f"⚠ the course's runs were made on PyTorch {PINNED_TORCH}, not 2.16.0.dev20260101")
    assert len(lines) == 8


def test_the_verdicts_speak_chinese(monkeypatch, capsys):
    set_language("zh")
    try:
        lines = run(monkeypatch, capsys, "2.16.0")
        monkeypatch.setattr(torch, "__version__", "2.4.1")
        with pytest.raises(CheckFailure) as failure:
            check_environment()
    finally:
        set_language(None)
    for line in (*lines[5:], str(failure.value)):
        assert CJK.search(line) and "course" not in line, line
    assert "2.5" in str(failure.value) and '%pip install "torch>=2.5"' in str(failure.value)


@pytest.mark.parametrize("version, release", [("2.13.0+cpu", (2, 13)), ("2.16.0.dev20260101", (2, 16)),
                                              ("2.6.0a0+git1234", (2, 6)), ("10.0", (10, 0))])
def test_torch_release(version, release):
    assert torch_release(version) == release


def test_a_version_that_is_no_version_is_a_value_error():
    with pytest.raises(ValueError, match="not a PyTorch version: 'nightly'"):
        torch_release("nightly")


def test_the_range_is_stated_alike_everywhere():
    """pyproject.toml's torch requirement, the lock's pin, the ends tested here and notebook 00's text (both languages)
    say the range and the pin that tinylm_checks.environment says."""
    oldest, newest = (".".join(map(str, r)) for r in (OLDEST_TORCH, NEWEST_TORCH))
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert [r for r in dependencies if torch_venv._names(r, "torch")] == [f"torch>={oldest}"]
    pins = [line.split("#")[0].strip() for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()]
    assert f"torch=={PINNED_TORCH}" in pins
    assert ENDS == {"oldest": f"{oldest}.0", "newest": f"{newest}.0"}
    assert OLDEST_TORCH <= torch_release(PINNED_TORCH) <= NEWEST_TORCH
    source = (ROOT / "course" / "00_setup.py").read_text(encoding="utf-8")
    section = source[source.index("# ## 1. Your environment"):source.index("check_environment()\n")]
    english, chinese = section.split('# %% [markdown] lang="zh"')
    for text in (english, chinese):
        assert f"PyTorch {PINNED_TORCH}" in text and f"PyTorch {oldest}" in text and f" {newest}" in text, text
        assert f"低于 {oldest}" in text or f"older than {oldest}" in text, text


def test_venvs_are_reused_while_their_key_holds_and_rebuilt_when_the_lock_changes(monkeypatch, tmp_path):
    """The key covers Python, the version and the requirement lines: a changed pin gives another key."""
    first = torch_venv.key("2.5.0")
    assert first == torch_venv.key("2.5.0") != torch_venv.key("2.15.0")
    reqs, constraints = torch_venv.requirements("2.5.0")
    assert reqs[0] == "torch==2.5.0" and not any(torch_venv._names(r, "torch") for r in reqs[1:] + constraints)
    assert "numpy==2.4.6" in constraints and "pytest" in reqs
    pins = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    (tmp_path / "constraints.txt").write_text(pins.replace("numpy==", "numpy==1"), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(torch_venv, "ROOT", tmp_path)
    assert torch_venv.key("2.5.0") != first


def test_a_venv_is_built_once_reused_rebuilt_for_a_new_key_and_never_half_built(monkeypatch, tmp_path):
    """venv() with pip and venv stood in for: the first call builds, the next reuses, a changed key rebuilds, and a pip
    that fails leaves no venv behind (the next call builds again)."""
    calls = []

    def fake_run(command, check, **kwargs):
        calls.append(command[1:3])
        if command[1:3] == ["-m", "venv"]:
            (Path(command[-1]) / "bin").mkdir(parents=True)
        elif fail:
            raise subprocess.CalledProcessError(1, command)

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(torch_venv.subprocess, "run", fake_run)
    fail = False
    place = torch_venv.venv("2.5.0")
    assert place == tmp_path / "tinylm-course" / "torch-2.5.0"
    assert (place / torch_venv.KEY_FILE).read_text() == torch_venv.key("2.5.0")
    assert calls == [["-m", "venv"], ["-m", "pip"]]
    assert torch_venv.venv("2.5.0") == place and len(calls) == 2  # reused
    monkeypatch.setattr(torch_venv, "key", lambda version: "another lock")
    torch_venv.venv("2.5.0")
    assert len(calls) == 4 and (place / torch_venv.KEY_FILE).read_text() == "another lock"  # rebuilt
    monkeypatch.setattr(torch_venv, "key", lambda version: "a third lock")
    fail = True
    with pytest.raises(subprocess.CalledProcessError):
        torch_venv.venv("2.5.0")
    assert sorted(p.name for p in (tmp_path / "tinylm-course").iterdir()) == ["torch-2.5.0", "torch-2.5.0.lock"]
    assert (place / torch_venv.KEY_FILE).read_text() == "another lock"  # the last complete one, never half a build


def test_pip_asks_pypi_whatever_this_machine_s_pip_configuration_says(monkeypatch):
    monkeypatch.setenv("PIP_FIND_LINKS", "/opt/wheels")
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:1/simple")
    monkeypatch.setenv("PIP_CONSTRAINT", "/etc/xdg/pip/constraints.txt")
    env = torch_venv.pip_env()
    assert env["PIP_CONFIG_FILE"] == os.devnull
    assert not {"PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_CONSTRAINT"} & set(env)


# ---- slow tier: each end of the range in a venv of its own. One class per end, so that xdist runs them side by side.

REFERENCE_TESTS = ["tests/test_checks_reference.py", "tests/test_checks_mutants.py",
                   *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_ref_*.py")
                           if p.name != "test_ref_capstone.py")]  # the capstone's: slow, and it needs the sandbox
"""The reference-vs-checks tests, the mutants and the reference's fast tests (``-m "not slow"``)."""


def _env(tmp: Path, **more: str) -> dict[str, str]:
    """A run in a venv of the range: the checkout on PYTHONPATH; bytecode written (into the cached venv: imports
    compile once), and a capstone cache of its own (the session's holds results of the pinned PyTorch)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(ROOT), "TINYLM_CAPSTONE_CACHE": str(tmp), **more}


def _pytest(python: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q", "-m", "not slow",
                           *args, *REFERENCE_TESTS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> int:
    """How many of REFERENCE_TESTS the course's own venv runs: each end must pass exactly as many."""
    out = _pytest(sys.executable, _env(tmp_path_factory.mktemp("cache")), "--collect-only")
    assert out.returncode == 0, out.stdout[-3000:]
    return int(re.search(r"^(\d+)/\d+ tests collected", out.stdout, re.M)[1])


@pytest.fixture(scope="class")
def python(request, tmp_path_factory) -> str:
    """The venv of the class's ``version`` (built now if the cache has none for the current lock)."""
    version = request.cls.version
    log = tmp_path_factory.mktemp("pip") / "pip.log"
    with open(log, "w", encoding="utf-8") as f:
        try:
            place = torch_venv.venv(version, log=f)
        except subprocess.CalledProcessError:
            said = log.read_text(encoding="utf-8", errors="replace")[-3000:]
            pytest.fail(f"building the venv of torch {version} failed:\n{said}")
    return str(place / "bin" / "python")


class _End:
    version: str

    def test_the_venv_has_that_torch(self, python, tmp_path):
        out = subprocess.run([python, "-c", "import torch, numpy; print(torch.__version__, numpy.__version__)"],
                             env=_env(tmp_path), capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split()[0].split("+")[0] == self.version

    def test_check_environment_passes_with_the_warning(self, python, tmp_path):
        out = subprocess.run([python, "-c", "from tinylm_checks import check_environment; check_environment()"],
                             cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert lines[5].startswith(f"✔ check_environment passed: PyTorch {self.version} on ")
        assert lines[6].startswith(f"⚠ the course's runs were made on PyTorch {PINNED_TORCH}, not {self.version}")

    def test_the_reference_passes_the_checks_and_the_checks_reject_the_mutants(self, python, collected, tmp_path):
        out = _pytest(python, _env(tmp_path))
        summary = out.stdout.strip().splitlines()[-1]
        assert out.returncode == 0, out.stdout[-5000:]
        # a known seed-dependent diagnosis is a strict xfail (tests/test_checks_mutants.py SEED_BUGS): it counts
        found = re.fullmatch(r"(\d+) passed, \d+ deselected(?:, (\d+) xfailed)?(?:, \d+ warnings?)? in .*", summary)
        assert found and int(found[1]) + int(found[2] or 0) == collected, (collected, summary)


@pytest.mark.slow
class TestOldest(_End):
    version = ENDS["oldest"]

    def test_the_notebooks_run(self, python, tmp_path):
        """Every cell of every notebook (the given code, the answers, the hidden checks) runs on the oldest PyTorch, as
        nbval runs them on the pinned one (TINYLM_QUICK=1). On a copy: notebook 13 writes its repository beside
        itself, where the suite's own nbval run of it may be writing at the same time."""
        for notebook in (ROOT / "notebooks").glob("*/*.ipynb"):  # not what a run of notebook 13 left beside it
            (tmp_path / "notebooks" / notebook.parent.name).mkdir(parents=True)
            shutil.copy(notebook, tmp_path / "notebooks" / notebook.parent.name)
        (tmp_path / "runs").mkdir()
        env = _env(tmp_path / "cache", TINYLM_QUICK="1", TINYLM_RUNS=str(tmp_path / "runs"))
        (tmp_path / "cache").mkdir()
        out = subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval-lax", "notebooks"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3600)
        summary = out.stdout.strip().splitlines()[-1]
        assert out.returncode == 0, out.stdout[-5000:]
        cells = sum(len([c for c in json.loads(p.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"])
                    for p in (ROOT / "notebooks").glob("*/*.ipynb"))
        assert re.fullmatch(rf"{cells} passed(, \d+ warnings?)? in .*", summary), summary


@pytest.mark.slow
class TestNewest(_End):
    version = ENDS["newest"]
