"""The registry of exercises (tinylm_grading/registry.py) agrees with everything it stands for: the checks, the
reference, the mutants, the notebooks' grading metadata; and the hidden check line has one reading."""
import json
from pathlib import Path

import pytest

import tinylm_checks
from tinylm_grading import registry

from mutants import LATE_FAILURE, ROWS, STUB

ROOT = Path(__file__).resolve().parent.parent


def test_ids_are_unique_and_stages_known():
    ids = [e.id for e in registry.EXERCISES]
    assert len(ids) == len(set(ids))
    assert {e.stage for e in registry.EXERCISES} <= set(registry.STAGE)
    assert [s.name for s in registry.STAGES] == sorted(s.name for s in registry.STAGES)
    for e in registry.EXERCISES:
        assert all(registry.BY_ID[u].stage == e.stage for u in e.uses), e.id  # built on its own notebook's work
        assert (e.written or e.check) and e.points >= 0, e.id  # a written answer's check, if any, gives feedback


def test_every_check_is_the_registry_s_and_passes_its_reference():
    public = {name for name in tinylm_checks.__all__ if name.startswith("check_")} - {"check_environment"}
    assert public == {e.check for e in registry.checked()} | set(registry.FEEDBACK_CHECKS)
    for e in registry.checked():
        assert e.reference() is not None and e.name == e.reference().__name__, e.id
        if e.stage != "13_capstone":  # the capstone's checks run processes: tests/test_ref_capstone.py (slow tier)
            getattr(tinylm_checks, e.check)(e.reference(), quiet=True)


def test_every_check_has_its_mutants():
    checks = {getattr(tinylm_checks, e.check) for e in registry.checked()}
    assert set(STUB) == set(LATE_FAILURE) == checks
    per_check = {}
    for check, mutant, _, _ in ROWS:
        per_check.setdefault(check, set()).add(mutant)
    feedback = {getattr(tinylm_checks, name) for name in registry.FEEDBACK_CHECKS}
    assert set(per_check) == checks | feedback and all(len(m) >= 3 for m in per_check.values())


@pytest.mark.parametrize("stage", [s.name for s in registry.STAGES])
def test_each_notebook_grades_what_the_registry_says(stage):
    nb = json.loads((ROOT / "notebooks" / stage / f"{stage}.ipynb").read_text(encoding="utf-8"))
    meta = [c["metadata"]["nbgrader"] for c in nb["cells"] if "nbgrader" in c["metadata"]]
    points = {m["grade_id"]: m["points"] for m in meta if m["grade"]}
    assert points == {e.test_id: e.points for e in registry.graded(stage)}
    solutions = {m["grade_id"] for m in meta if m["solution"]}
    assert solutions == {e.id for e in registry.stage_exercises(stage)}


def test_the_hidden_check_line_has_one_reading():
    e = registry.BY_ID["attention_scores"]
    fresh = 'runpy.run_module("tinylm_checks.grading")["fresh"]()'
    assert registry.hidden_calls(f"import runpy\n{e.hidden_check}") == [("check_attention_scores", "attention_scores", 1)]
    # spacing, quotes and line breaks do not change what is read
    assert registry.hidden_calls("runpy.run_module( 'tinylm_checks.grading' )['fresh']( ).check_x(\n  f , seed = 2 )") \
        == [("check_x", "f", 2)]
    assert registry.hidden_calls(f"{fresh}.check_x(f, seed=1)\n{fresh}.check_y(g, seed=3)") == \
        [("check_x", "f", 1), ("check_y", "g", 3)]
    # what cannot be read is found anyway, as unreadable: the grader fails it, it is never left to the kernel
    assert registry.hidden_calls(f"{fresh}.check_x(f, seed=s)") == [("check_x", "f", None)]
    assert registry.hidden_calls(f"{fresh}.check_x(obj.f, seed=1)") == [("check_x", None, 1)]
    assert registry.hidden_calls('g = runpy.run_module("tinylm_checks.grading")') == [("", "", None)]
    assert registry.hidden_calls(f"{fresh}.check_x(f, seed=1") == [("", "", None)]  # does not parse
    assert registry.hidden_calls("check_x(f)") == []  # no hidden check: an instructor's own test


def test_a_test_check_s_summary_counts_the_broken_models_it_runs():
    """The README's words for a capstone test check say how many broken models it must fail on: the number of
    ``capstone.BROKEN_MODELS`` (the overfit test's summary said three after a fourth was added)."""
    from tinylm_checks import capstone

    words = {2: "two", 3: "three", 4: "four", 5: "five"}
    checked = {e.check: e for e in registry.EXERCISES if e.check.endswith("_tests")}
    by_check = {capstone.check_attention_tests: "tests/test_attention.py",
                capstone.check_causal_mask_tests: "tests/test_causal_mask.py",
                capstone.check_overfit_tests: "tests/test_overfit_batch.py"}
    assert sorted(checked) == sorted(check.__name__ for check in by_check)
    for check, test in by_check.items():
        summary = checked[check.__name__].summary
        assert summary.startswith(f"`{test}`"), summary
        assert f"fails on {words[len(capstone.BROKEN_MODELS[test])]} " in summary, summary
