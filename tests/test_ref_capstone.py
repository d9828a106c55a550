"""The capstone's reference repository (stage 13): its own tests pass, every capstone check passes it in the grader's
sandboxed workspace (locally: tests/test_checks_harmless.py and the notebook); the sandbox a capstone command runs in hides the course's answers, the course and
the network, and lets it write only its own folder."""
import re

import pytest

import tinylm_checks
from mutants.capstone import train_labels_shifted
from tinylm_checks import CheckFailure
from tinylm_grading import registry
from tinylm_grading.workspace import SandboxWorkspace
from tinylm_checks import capstone
from tinylm_solutions.capstone import repo

pytestmark = pytest.mark.slow
CHECKS = [getattr(tinylm_checks, e.check) for e in registry.checked("13_capstone")]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_the_reference_passes_in_the_sandbox(check, monkeypatch):
    monkeypatch.setattr(capstone, "WORKSPACE", SandboxWorkspace)
    check(repo, quiet=True, seed=1)


def test_the_numbers_notebook_13_states_are_the_reference_s(capsys):
    """Notebook 13 says of check_capstone_train: 40 steps of the reference take the corpus loss from ln V (4.6) to about
    3.2; on the cycle text a right loop ends at about 0.01, and targets shifted twice far above ln V, at 8 to 9."""
    capstone.check_capstone_train(repo)
    found = re.search(r"loss on the corpus is ([\d.]+) \(ln V = ([\d.]+)\).* next-token loss is ([\d.]+)",
                      capsys.readouterr().out)
    loss, ln_v, cycle = map(float, found.groups())
    assert round(ln_v, 1) == 4.6 and round(loss, 1) == 3.2 and cycle <= 0.015
    for seed in (0, 1):  # "8 to 9 in the course's runs, depending on the shuffle" (9.16 and 8.01)
        with pytest.raises(CheckFailure) as failure:
            capstone.check_capstone_train(train_labels_shifted, seed=seed)
        assert round(float(re.search(r"next-token loss of ([\d.]+)", str(failure.value)).group(1))) in (8, 9)


def test_the_reference_repository_runs_as_a_stranger_runs_it_in_the_sandbox(monkeypatch):
    """Plain pytest, train.py and generate.py in a venv holding only what its pyproject.toml declares (issue 41)."""
    monkeypatch.setattr(capstone, "WORKSPACE", SandboxWorkspace)
    capstone.check_capstone_repository(repo, quiet=True)


def test_the_reference_repository_tests_itself():
    files = repo()
    with capstone.Workspace({k: v for k, v in files.items() if k.endswith(".py")}) as ws:
        code, output = ws.run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
    assert code == 0 and "5 passed" in output, output


PROBE = '''
import os, socket
found = []
for module in ("tinylm_solutions.model", "tinylm_solutions.attention", "tinylm_solutions.capstone"):
    try:
        __import__(module)
        found.append(module + " importable")
    except ImportError:
        pass
import tinylm_solutions, pathlib
answer = pathlib.Path(tinylm_solutions.__file__).parent / "capstone" / "model.py"
if answer.exists():
    found.append("the answer's model.py readable")
for path in ("/work", "/root", os.path.expanduser("~/.cache/tinylm")):
    try:
        open(os.path.join(path, "tinylm-capstone-probe.txt"), "w").write("x")
        found.append("wrote " + path)
    except OSError:
        pass
try:
    socket.create_connection(("pypi.org", 443), timeout=3)
    found.append("network")
except OSError:
    pass
open("mine.txt", "w").write("x")
print(found)
'''


def test_a_capstone_command_sees_and_writes_only_its_folder():
    with SandboxWorkspace({"probe.py": PROBE}) as ws:
        code, output = ws.run(["probe.py"], timeout=60)
        assert (code, output.strip()) == (0, "[]")
        assert (ws.path / "mine.txt").read_text() == "x"


def test_a_command_that_runs_too_long_is_stopped():
    with SandboxWorkspace({"loop.py": "while True:\n    pass\n"}) as ws:
        code, _ = ws.run(["loop.py"], timeout=3)
    assert code == -9


def test_a_repository_on_disk_is_read_with_its_gitignore(tmp_path):
    """Repository reads what the checks judge, .gitignore included (its suffix is ''; notebook 13's repository
    check said 'the repository has no .gitignore' next to the file), and leaves generated files out."""
    from tinylm_checks import Repository
    Repository(tmp_path).write({".gitignore": "*.pt\n", "model.py": "x = 1\n", "tests/test_a.py": "", "data/t.txt": "ab"})
    (tmp_path / "checkpoint.pt").write_bytes(b"\x80")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.txt").write_text("[core]")
    assert Repository(tmp_path)() == {".gitignore": "*.pt\n", "data/t.txt": "ab", "model.py": "x = 1\n",
                                      "tests/test_a.py": ""}
