"""Checks leave no trace (RNG state, default dtype, grad mode, the learner's objects), and a
CheckFailure renders in IPython/JupyterLab as the short message, not a traceback."""
import random

import numpy as np
import pytest
import torch

from tinylm_checks._text import MISTAKE_PLACES
from tinylm_checks import MISTAKES, CheckFailure, show_fix, check_multi_head_attention, check_self_attention, check_softmax

from mutants import LATE_FAILURE, REFERENCE, STUB
from mutants import attention as at
from mutants import multihead as mh
from test_checks_mutants import CHECK_BUGS, ROWS, _name, run_check
from test_checks_mutants import single_thread  # noqa: F401 - autouse fixture: run the checks on one thread

CHECKS = list(REFERENCE)
IDS = [c.__name__ for c in CHECKS]


def _global_state():
    return (torch.get_rng_state(), random.getstate(), np.random.get_state()[1].copy(),
            torch.get_default_dtype(), torch.is_grad_enabled())


def _assert_same_state(before, after):
    assert torch.equal(before[0], after[0]), "the check changed torch's global RNG state"
    assert before[1] == after[1], "the check changed Python's random state"
    assert np.array_equal(before[2], after[2]), "the check changed numpy's global RNG state"
    assert before[3] == after[3], f"the check changed the default dtype to {after[3]}"
    assert before[4] == after[4], f"the check changed grad mode to {after[4]}"


def _run(check, obj):
    try:
        check(obj, quiet=True)
    except CheckFailure:
        pass


@pytest.fixture
def restore_globals():
    """Whatever a test does to global state is undone afterwards."""
    state = _global_state()
    yield
    torch.set_rng_state(state[0])
    random.setstate(state[1])
    torch.set_default_dtype(state[3])
    torch.set_grad_enabled(state[4])


@pytest.mark.parametrize("learner", ["reference", "late_failure"])
@pytest.mark.parametrize("check", CHECKS, ids=IDS)
def test_check_leaves_global_state_alone(check, learner, restore_globals):
    torch.manual_seed(1234)
    random.seed(1234)
    before = _global_state()
    _run(check, REFERENCE[check] if learner == "reference" else LATE_FAILURE[check])
    _assert_same_state(before, _global_state())
    # the next random numbers are the ones the caller would have drawn without the check
    torch.manual_seed(1234)
    random.seed(1234)
    expected = (torch.rand(3), random.random())
    torch.set_rng_state(before[0])
    random.setstate(before[1])
    got = (torch.rand(3), random.random())
    assert torch.equal(expected[0], got[0]) and expected[1] == got[1]


@pytest.mark.parametrize("check", CHECKS, ids=IDS)
def test_check_keeps_a_non_default_caller_state(check, restore_globals):
    """Default dtype float64 and grad disabled (as after an inference cell) come back unchanged."""
    torch.set_default_dtype(torch.float64)
    torch.set_grad_enabled(False)
    before = _global_state()
    _run(check, LATE_FAILURE[check])
    _assert_same_state(before, _global_state())


def test_check_undoes_what_the_learner_code_does_to_global_state(restore_globals):
    def meddling_softmax(x):
        """Correct, but reseeds the global RNGs and changes the default dtype."""
        torch.manual_seed(0)
        random.seed(0)
        torch.set_default_dtype(torch.float64)
        return torch.softmax(x, dim=-1)

    torch.manual_seed(1234)
    before = _global_state()
    check_softmax(meddling_softmax, quiet=True)
    _assert_same_state(before, _global_state())


CHECK_BUGS_HARMLESS: dict[str, str] = {}  # check -> why it is not harmless (none known)


@pytest.mark.parametrize("check", [
    pytest.param(c, id=c.__name__, marks=[pytest.mark.xfail(strict=True, reason=CHECK_BUGS_HARMLESS[c.__name__])]
                 if c.__name__ in CHECK_BUGS_HARMLESS else []) for c in CHECKS])
def test_reference_passes_when_the_caller_disabled_gradients(check, restore_globals):
    torch.set_grad_enabled(False)  # e.g. a generation cell earlier in the notebook
    try:
        check(REFERENCE[check], quiet=True)
    except CheckFailure as exc:
        pytest.fail(f"the reference failed with grad disabled:\n{exc}")
    assert not torch.is_grad_enabled()


@pytest.mark.parametrize("mutant", [at.self_attention_instance, mh.multi_head_attention_instance],
                         ids=["SelfAttention", "MultiHeadSelfAttention"])
def test_check_does_not_touch_a_learner_instance(mutant):
    """Passed an object instead of the class, the check fails without changing it."""
    check = check_self_attention if mutant is at.self_attention_instance else check_multi_head_attention
    mutant.eval()
    for p in mutant.parameters():
        p.grad = torch.full_like(p, 0.5)
    params = {n: p.detach().clone() for n, p in mutant.named_parameters()}
    run_check(check, mutant)
    assert not mutant.training
    for n, p in mutant.named_parameters():
        assert torch.equal(p, params[n]) and p.dtype == torch.float32, n
        assert torch.equal(p.grad, torch.full_like(p, 0.5)), n
    mutant.train()
    for p in mutant.parameters():
        p.grad = None


# ---- how a failure looks in JupyterLab

@pytest.mark.parametrize("check", CHECKS, ids=IDS)
@pytest.mark.parametrize("kind", ["late_failure", "None", "stub"])
def test_failure_renders_without_traceback(check, kind):
    obj = {"late_failure": LATE_FAILURE[check], "None": None, "stub": STUB[check]}[kind]
    exc = run_check(check, obj)
    rendered = exc._render_traceback_()
    assert isinstance(rendered, list) and rendered and all(isinstance(line, str) for line in rendered)
    assert "CheckFailure" in rendered[0]
    assert f"{check.__name__} failed: " in rendered[0]
    assert not any('File "' in line or "Traceback" in line for line in rendered), rendered
    assert [line.replace("\x1b[31m", "").replace("\x1b[0m", "") for line in rendered] == \
        [f"CheckFailure: {str(exc).splitlines()[0]}", *str(exc).splitlines()[1:]]


def test_failure_renders_in_an_ipython_shell(capsys, monkeypatch):
    """The real thing: IPython's shell shows the rendered message and no frames."""
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell
    import sys
    monkeypatch.setattr(sys, "displayhook", sys.displayhook)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    shell = InteractiveShell.instance()
    try:
        from mutants.masks import causal_mask_upper
        from tinylm_checks import check_causal_mask
        shell.user_ns.update(check_causal_mask=check_causal_mask, causal_mask_upper=causal_mask_upper)
        shell.run_cell("check_causal_mask(causal_mask_upper)")
    finally:
        InteractiveShell.clear_instance()
    out = capsys.readouterr()
    text = out.out + out.err
    assert "CheckFailure" in text and "check_causal_mask failed: the mask is wrong" in text, text
    assert 'File "' not in text and "Traceback" not in text and "_core.py" not in text, text


# ---- a known mistake is named, and comes with a hint

KNOWN = [(c, m, mistake) for c, m, mistake, _ in ROWS if mistake is not None
         and (c.__name__, _name(m)) not in CHECK_BUGS]


@pytest.mark.parametrize("check, mutant, mistake", [
    pytest.param(c, m, mistake, id=f"{c.__name__}-{_name(m)}") for c, m, mistake in KNOWN])
def test_known_mistake_is_named_with_where_to_look_and_its_fix_waits(check, mutant, mistake, capsys):
    """Feedback that lets the learner think first (issue 41, item 1): the first failure of a mistake names it and
    says where to look, and keeps its fix (the hint) back; show_fix() prints it; the same mistake shown again
    comes with it."""
    exc = run_check(check, mutant)
    msg = str(exc)
    assert exc.mistake == mistake and exc.hint and exc.fix == exc.hint
    assert f"\n  likely mistake: {MISTAKES[mistake]}\n  look at:  {MISTAKE_PLACES[mistake]}" in msg, msg
    assert exc.hint not in msg and "hint:" not in msg.split(f"likely mistake: {MISTAKES[mistake]}")[1], msg
    assert msg.endswith("\n  think first: when you want the line that fixes it, run show_fix()"), msg
    first = exc._render_traceback_()
    assert exc.hint not in "\n".join(first)
    show_fix()
    assert f"the fix: {exc.hint}" in capsys.readouterr().out
    again = run_check(check, mutant)._render_traceback_()  # the same mistake again: the fix comes with it
    assert f"  hint:     {exc.hint}" in [line.replace("\x1b[0m", "") for line in again]


def test_every_registered_mistake_is_exercised_by_a_mutant():
    """'Honest': every mistake these checks register has a mutant in tests/test_checks_mutants.py that
    expects it (rows a check gets wrong are there too, marked xfail)."""
    registered = set(MISTAKES)  # the message table's mistakes (tinylm_checks.messages)
    assert registered
    expected = {mistake for _, _, mistake, _ in ROWS if mistake is not None}
    missing = registered - expected
    assert not missing, f"registered mistakes with no mutant in tests/test_checks_mutants.py: {sorted(missing)}"
