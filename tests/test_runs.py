"""tinylm_checks.lab.runs: the records stage 12's report reads back."""
import json

import pytest
import torch

from tinylm_checks.lab import runs


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TINYLM_RUNS", str(tmp_path / "runs"))
    monkeypatch.setattr(runs, "_SESSION", {})
    return tmp_path / "runs"


def test_a_record_round_trips_with_tensors_as_lists(folder):
    saved = runs.record_run("09_train", losses=torch.tensor([2.5, 1.5]), config={"d_model": 64}, note=None)
    assert json.loads((folder / "09_train.json").read_text()) == saved
    assert saved["losses"] == [2.5, 1.5] and saved["config"] == {"d_model": 64} and saved["note"] is None
    assert runs.load_runs() == {"09_train": saved}


def test_a_record_replaces_the_earlier_one_and_bad_files_are_skipped(folder):
    runs.record_run("11_ablations", value=1)
    runs.record_run("11_ablations", value=2)
    (folder / "broken.json").write_text("{not json")
    assert {k: v["value"] for k, v in runs.load_runs().items()} == {"11_ablations": 2}


def test_an_unwritable_folder_warns_and_keeps_the_record_for_the_session(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("TINYLM_RUNS", str(blocker / "runs"))
    monkeypatch.setattr(runs, "_SESSION", {})
    with pytest.warns(UserWarning, match="kept for this session only"):
        runs.record_run("09_overfit", final_loss=0.01)
    assert runs.load_runs()["09_overfit"]["final_loss"] == 0.01


@pytest.mark.parametrize("name", ["", "../x", "a b", "a/b"])
def test_bad_names_are_refused(folder, name):
    with pytest.raises(ValueError, match="letters, digits"):
        runs.record_run(name, x=1)


def test_no_folder_means_no_records(folder):
    assert runs.load_runs() == {}


def test_a_record_can_hold_a_name_of_its_own(folder):
    saved = runs.record_run("11_first_bug", name="exp_overflow", evidence="NaN at x30")
    assert (saved["record"], saved["name"]) == ("11_first_bug", "exp_overflow")


def test_quick_runs_never_land_where_the_real_runs_go(tmp_path, monkeypatch):
    """TINYLM_QUICK=1 shortens every run to a few steps: its records go to runs-quick, so a report never reads them
    as the learner's real runs (issue 17)."""
    monkeypatch.delenv("TINYLM_RUNS", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("TINYLM_QUICK", raising=False)
    assert runs.runs_dir() == tmp_path / ".cache" / "tinylm" / "runs"
    monkeypatch.setenv("TINYLM_QUICK", "1")
    assert runs.runs_dir() == tmp_path / ".cache" / "tinylm" / "runs-quick"
