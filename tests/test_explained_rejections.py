"""Legitimate rejections, explained (issue 41): correct code written in another way, which the checks must reject,
read as what it is, not as a wrong size or a call the check did not make. Each is a kind, ruled out across checks."""
import pytest
import torch
from torch import nn

from tinylm_checks import CheckFailure, _core, check_causal_self_attention, check_multi_head_attention, check_self_attention
from tinylm_solutions.attention import SelfAttention
from tinylm_solutions.causal_attention import CausalSelfAttention
from tinylm_solutions.multihead import MultiHeadSelfAttention

from mutants import REFERENCE
from test_checks_mutants import run_check
from test_checks_mutants import single_thread  # noqa: F401 - autouse fixture: run the checks on one thread

CHECKS = [c for c in REFERENCE if c.__module__ != "tinylm_checks.capstone"]  # the capstone's run processes


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_the_tried_line_shows_every_argument_the_check_passes(check, monkeypatch):
    """Whatever a check passes to the learner's code, the line that says how it was called shows: an argument given
    as None (a forward's mask=None) is there as None, so a forward without that parameter reads as what it is."""
    untold = []
    call = _core.Ctx.call

    def recording(self, fn, *args, what, names=(), **kwargs):
        nones = [names[i] if i < len(names) else str(i) for i, a in enumerate(args) if a is None]
        if what.count("None") < len(nones):
            untold.append(f"{nones} not in {what!r}")
        return call(self, fn, *args, what=what, names=names, **kwargs)

    monkeypatch.setattr(_core.Ctx, "call", recording)
    check(REFERENCE[check], quiet=True)
    assert not untold, untold


class SelfAttentionWithoutMask(SelfAttention):
    """Right, with a forward that takes no mask (the 87 third-party cases had one)."""

    def forward(self, x):
        return super().forward(x)


class MultiHeadWithoutMask(MultiHeadSelfAttention):
    def forward(self, x):
        return super().forward(x)


@pytest.mark.parametrize("check, module", [(check_self_attention, SelfAttentionWithoutMask),
                                           (check_multi_head_attention, MultiHeadWithoutMask)])
def test_a_forward_without_a_mask_parameter_is_shown_the_mask_none_it_was_given(check, module):
    exc = run_check(check, module)
    assert exc.problem == "your code raised TypeError", exc.problem
    assert exc.tried.startswith("forward was called with ") and exc.tried.endswith(", mask=None"), exc.tried


def _lazy(cls, *names):
    """``cls`` with the named nn.Linear layers made nn.LazyLinear (same out_features and bias)."""
    def __init__(self, *args, **kwargs):
        cls.__init__(self, *args, **kwargs)
        for n in names:
            old = getattr(self, n)
            setattr(self, n, nn.LazyLinear(old.out_features, bias=old.bias is not None))
    return type(f"Lazy{cls.__name__}", (cls,), {"__init__": __init__})


@pytest.mark.parametrize("check, module, attr", [
    (check_self_attention, _lazy(SelfAttention, "W_Q", "W_K", "W_V"), "W_Q"),
    (check_multi_head_attention, _lazy(MultiHeadSelfAttention, "W_O"), "W_O"),
    (check_causal_self_attention, _lazy(CausalSelfAttention, "qkv", "out"), "qkv")])
def test_a_lazy_layer_is_named_as_one_not_as_a_wrong_size(check, module, attr):
    exc = run_check(check, module)
    assert exc.problem == f"{module.__name__}.{attr} is a lazy layer (LazyLinear): it has no weight until its first " \
                          "call, so its input size is not known yet", str(exc)
    assert "in_features not known" in exc.got and "wrong size" not in str(exc), str(exc)
    assert "nn.Linear(" not in exc.hint, exc.hint  # concept and place, not the fixing line


class CausalConvQKV(CausalSelfAttention):
    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__(d_model, num_heads, dropout)
        self.qkv = nn.Conv1d(d_model, 3 * d_model, 1, bias=False)


class SelfAttentionConvQ(SelfAttention):
    def __init__(self, d_model):
        super().__init__(d_model)
        self.W_Q = nn.Conv1d(d_model, d_model, 1)


@pytest.mark.parametrize("check, module, bias", [(check_causal_self_attention, CausalConvQKV, False),
                                                 (check_self_attention, SelfAttentionConvQ, True)])
def test_the_not_a_linear_hint_says_bias_as_the_exercise_has_it(check, module, bias):
    """The hint of "not an nn.Linear" follows the exercise: no bias suggested where it needs bias=False."""
    exc = run_check(check, module)
    assert "is a Conv1d, not an nn.Linear" in exc.problem, str(exc)
    assert exc.expected.endswith(f"bias={bias})"), str(exc)
    assert ("without a bias" in exc.hint) is (not bias), exc.hint
    assert "nn.Linear(" not in exc.hint, exc.hint
