"""tinylm_checks.capstone.session: the same files and commands run once per process, and once per folder that
TINYLM_CAPSTONE_CACHE names (the test suite's workers and the graders they start share one)."""
import threading
import time

import pytest
import torch

from tinylm_checks import capstone


class CountingWorkspace:
    """A workspace that runs nothing: it counts the commands it is asked to run."""

    runs: list = []

    def __init__(self, files):
        self.files = files

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def run(self, command, timeout):
        launcher, seconds, *command = command  # each command comes through the check's launcher, with its limits
        assert (launcher, seconds, timeout) == ("_check_run.py", str(capstone.CPU_SECONDS), capstone.TIMEOUT)
        assert self.files[launcher] == capstone.LAUNCHER
        CountingWorkspace.runs.append(command)
        return 0, f"ran {' '.join(command)} on {sorted(self.files)}"

    def load(self, name):
        return {"weights": torch.arange(3.0)} if name == "ckpt.pt" else None


@pytest.fixture
def counting(monkeypatch):
    CountingWorkspace.runs = []
    monkeypatch.setattr(capstone, "WORKSPACE", CountingWorkspace)
    monkeypatch.setattr(capstone, "_SESSIONS", {})
    return CountingWorkspace.runs


def test_once_per_process_without_a_shared_folder(counting, monkeypatch):
    monkeypatch.delenv(capstone.SHARED, raising=False)
    first = capstone.session({"a.py": "x = 1"}, [["a.py"]], load=("ckpt.pt",))
    again = capstone.session({"a.py": "x = 1"}, [["a.py"]], load=("ckpt.pt",))
    assert again is first and counting == [["a.py"]]
    capstone.session({"a.py": "x = 2"}, [["a.py"]], load=("ckpt.pt",))  # other files: another run
    assert len(counting) == 2


def test_a_shared_folder_serves_another_process(counting, monkeypatch, tmp_path):
    monkeypatch.setenv(capstone.SHARED, str(tmp_path))
    runs, loaded = capstone.session({"a.py": "x = 1"}, [["a.py"], ["a.py", "--x"]], load=("ckpt.pt", "none.pt"))
    assert len(counting) == 2 and len(list(tmp_path.glob("*.pt"))) == 1 and not list(tmp_path.glob("*.part"))
    monkeypatch.setattr(capstone, "_SESSIONS", {})  # another process: nothing in memory, the folder holds it
    again_runs, again_loaded = capstone.session({"a.py": "x = 1"}, [["a.py"], ["a.py", "--x"]],
                                                load=("ckpt.pt", "none.pt"))
    assert len(counting) == 2  # nothing ran again
    assert again_runs == runs and again_loaded["none.pt"] is None
    torch.testing.assert_close(again_loaded["ckpt.pt"]["weights"], loaded["ckpt.pt"]["weights"])


def test_the_workspace_kind_is_part_of_the_key(counting, monkeypatch, tmp_path):
    monkeypatch.setenv(capstone.SHARED, str(tmp_path))
    capstone.session({"a.py": "x = 1"}, [["a.py"]])

    class SandboxedCounting(CountingWorkspace):
        pass

    monkeypatch.setattr(capstone, "WORKSPACE", SandboxedCounting)
    capstone.session({"a.py": "x = 1"}, [["a.py"]])
    assert len(counting) == 2  # a sandboxed run is not served by an unsandboxed one


def test_the_limits_are_part_of_the_key(counting, monkeypatch):
    """A run stopped at a shortened limit is not served to a run with the usual ones."""
    monkeypatch.delenv(capstone.SHARED, raising=False)
    capstone.session({"a.py": "x = 1"}, [["a.py"]])
    monkeypatch.setattr(capstone, "TIMEOUT", 3)
    capstone.session({"a.py": "x = 1"}, [["a.py"]])
    monkeypatch.setattr(capstone, "CPU_SECONDS", 2)
    capstone.session({"a.py": "x = 1"}, [["a.py"]])
    assert len(counting) == 3


def test_a_folder_that_is_gone_is_no_cache(counting, monkeypatch, tmp_path):
    monkeypatch.setenv(capstone.SHARED, str(tmp_path / "gone"))
    capstone.session({"a.py": "x = 1"}, [["a.py"]])
    assert len(counting) == 1 and not (tmp_path / "gone").exists()


def test_processes_asking_at_once_wait_for_one_run(counting, monkeypatch, tmp_path):
    """Two callers at the same moment (two xdist workers): one runs the commands, the other waits and reads."""
    monkeypatch.setenv(capstone.SHARED, str(tmp_path))

    class SlowCounting(CountingWorkspace):
        def run(self, command, timeout):
            time.sleep(0.3)
            return super().run(command, timeout)

    monkeypatch.setattr(capstone, "WORKSPACE", SlowCounting)
    results = []

    def ask():
        results.append(capstone.session({"a.py": "x = 1"}, [["a.py"]]))
        capstone._SESSIONS.clear()  # as if each caller were its own process

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(counting) == 1 and results[0] == results[1]
