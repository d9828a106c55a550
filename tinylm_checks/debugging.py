"""Stage 11 checks: the debugging lab. For each of four broken parts, one check of the bug's name and one of
the fix, which confirms the fix by behaviour before comparing it with the reference
(:mod:`tinylm_solutions.debugging`):

- ``check_stable_cross_entropy``: finite and right for logits of 1000 and -1000, as ``F.cross_entropy``;
- ``check_fixed_attention``: the weights move when the keys move (not uniform), then equal the reference;
- ``check_fixed_causal_mask``: inside a small TinyLM, changing the tokens after t leaves logits 0..t alone;
- ``check_fixed_lm_loss``: logits that copy the input score badly, logits that predict the next token well.

A bug's name is the return value of a function of no arguments (``nan_loss_bug() -> "..."``): a function is
what the grader can call in the learner's kernel.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F


from ._core import Ctx, check, compare, diagnose, max_abs_diff, reference, within
from ._text import MISTAKE, hints, say

ref = reference("debugging")
given = reference("ablations")

__all__ = ["check_nan_loss_bug", "check_uniform_attention_bug", "check_future_mask_bug", "check_unshifted_labels_bug",
           "check_stable_cross_entropy", "check_fixed_attention", "check_fixed_causal_mask", "check_fixed_lm_loss"]

# ---- naming the bug


def _bug_name(ctx: Ctx, fn, symptom: str, fn_name: str, why_not: dict[str, str], why_not_other: str) -> str:
    """Call the learner's ``fn()`` and compare its answer with the bug behind ``symptom``. A wrong name's hint says
    why that name does not explain the symptom: the message ``why_not[name]``, or ``why_not_other``."""
    ctx.function(fn, fn_name)
    call = f"{fn_name}()"
    got = ctx.call(fn, what=say("debugging.was_called", call=call))
    names = tuple(given.BUG_NAMES)
    if not isinstance(got, str):
        ctx.fail("bug_name.not_a_str", call=call, kind=type(got).__name__, got=repr(got)[:80],
                 mistake=MISTAKE.missing_return if got is None else MISTAKE.unknown_bug_name)
    if got not in names:
        ctx.fail("bug_name.unknown", call=call, answer=repr(got[:60]), names=", ".join(names), got=repr(got[:60]),
                 mistake=MISTAKE.unknown_bug_name)
    right = ref.ANSWERS[symptom]
    if got != right:
        ctx.fail("bug_name.wrong", answer=repr(got), tried=call, got=repr(got), mistake=MISTAKE.wrong_bug_named,
                 mistake_hint=say(why_not.get(got, why_not_other)))
    return right


# The four "name the bug" exercises, as data: (check, what the bug shows, the learner's function, the wrong names
# that get a hint of their own -> that hint's message, the hint for any other wrong name, the pass line).
BUG_CHECKS = (
    ("check_nan_loss_bug", "nan_loss", "nan_loss_bug",
     {"learning_rate_too_high": "nan_loss_bug.why_not.learning_rate_too_high"},
     "nan_loss_bug.why_not.other", "nan_loss_bug.passed"),
    ("check_uniform_attention_bug", "uniform_attention", "uniform_attention_bug",
     {"missing_scale": "uniform_attention_bug.why_not.missing_scale",
      "softmax_over_queries": "uniform_attention_bug.why_not.softmax_over_queries"},
     "uniform_attention_bug.why_not.other", "uniform_attention_bug.passed"),
    ("check_future_mask_bug", "low_loss_poor_samples", "future_mask_bug",
     {"mask_hides_past": "future_mask_bug.why_not.mask_hides_past"},
     "future_mask_bug.why_not.other", "future_mask_bug.passed"),
    ("check_unshifted_labels_bug", "copying_loss", "unshifted_labels_bug",
     {"labels_shifted_twice": "unshifted_labels_bug.why_not.labels_shifted_twice",
      "mask_sees_future": "unshifted_labels_bug.why_not.mask_sees_future"},
     "unshifted_labels_bug.why_not.other", "unshifted_labels_bug.passed"),
)


def _bug_check(name: str, symptom: str, fn_name: str, why_not: dict[str, str], why_not_other: str, passed: str):
    def run(ctx: Ctx, fn) -> str:
        return say(passed, answer=repr(_bug_name(ctx, fn, symptom, fn_name, why_not, why_not_other)))
    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"Check ``{fn_name}()``: it returns the name of the bug behind {symptom} (one of BUG_NAMES)."
    return check(run)


check_nan_loss_bug, check_uniform_attention_bug, check_future_mask_bug, check_unshifted_labels_bug = (
    _bug_check(*row) for row in BUG_CHECKS)


# ---- stable_cross_entropy


def _ce_candidates(logits, targets):
    lp = torch.log_softmax(logits, dim=-1)  # (N, V)
    pick = lambda t: t.gather(-1, targets[:, None]).squeeze(-1)  # noqa: E731
    m = logits.max(dim=-1, keepdim=True).values
    return [(MISTAKE.loss_summed, -pick(lp).sum()), (MISTAKE.missing_minus_sign, pick(lp).mean()),
            (MISTAKE.softmax_wrong_dim, -pick(torch.log_softmax(logits, dim=0)).mean()),
            (MISTAKE.max_not_added_back, -pick(lp).mean() - m.squeeze(-1).mean()),
            (MISTAKE.max_not_added_back, -(pick(logits - m) - torch.logsumexp(logits, -1)).mean()),
            *((MISTAKE.probability_clamped, -pick(torch.softmax(logits, -1) + eps).log().mean())
              for eps in (1e-12, 1e-9, 1e-8, 1e-7, 1e-6))]


def _logs_probability(ctx, fn) -> bool:
    """Does ``fn`` take the log of a probability? Two probes in float64 decide it by behaviour: logits near
    1000 (finite: ``fn`` shifts them somehow) and a row whose maximum is 0 with the target at -1000 (no exp can
    overflow there, yet exp(-1000) underflows to 0: a loss built as -log(p) is inf, logsumexp - z[target] is
    1000 + log(...))."""
    targets = torch.tensor([1, 0])  # (2,)
    near = torch.tensor([[1000.0, 999.0, 998.0], [1001.0, 1000.0, 1002.0]], dtype=torch.float64)  # (2, 3)
    far = torch.tensor([[0.0, -1000.0, -1.0], [0.0, -2.0, -1.0]], dtype=torch.float64)  # (2, 3): target 1 of row 0
    results = []
    for logits, label in ((near, "stable_cross_entropy.probe_near"), (far, "stable_cross_entropy.probe_far")):
        got = ctx.call(fn, logits, targets, what=say("debugging.called_with", inputs=say(label)),
                       names=("logits", "targets"))
        results.append(isinstance(got, torch.Tensor) and got.numel() == 1 and bool(torch.isfinite(got).all()))
    return results[0] and not results[1]


def _ce_call(ctx, fn, logits, targets, tried, *, overflow=None):
    got = ctx.call(fn, logits, targets, what=say("debugging.called_with", inputs=tried), names=("logits", "targets"))
    if isinstance(got, torch.Tensor) and got.dim() == 0 and got.dtype == logits.dtype and not bool(torch.isfinite(got)):
        # a non-finite loss: an exp that overflowed (no shift, or a wrong one), or a probability that underflowed
        # to 0 and was logged (whatever the shift): the probes tell which
        ctx.fail("stable_cross_entropy.not_finite", loss=got.item(), inputs=tried, tried=tried,
                 reference=F.cross_entropy(logits, targets).item(), got=str(got.item()),
                 mistake=(MISTAKE.log_of_softmax if overflow is not None and _logs_probability(ctx, fn)
                          else overflow))
    return ctx.tensor(got, say("debugging.the_loss"), (), dtype=logits.dtype, tried=tried,
                      hint=say("stable_cross_entropy.shape_hint"))


@check
def check_stable_cross_entropy(ctx: Ctx, fn):
    """stable_cross_entropy(logits (N, V), targets (N,)) equals F.cross_entropy, also for huge logits."""
    ctx.function(fn, "stable_cross_entropy")
    ctx.hints = hints("stable_cross_entropy.hints")  # this exercise's wording of SOFTMAX_WRONG_DIM
    N, V = [(7, 11), (5, 13), (9, 6)][ctx.seed % 3]
    targets = torch.randint(V, (N,), generator=ctx.gen)  # (N,)
    cases = [("stable_cross_entropy.normal", 3 * ctx.randn(N, V), None),
             ("stable_cross_entropy.large", 1000 + ctx.randn(N, V), MISTAKE.exp_overflow),
             ("stable_cross_entropy.negative", -1000 + ctx.randn(N, V), MISTAKE.exp_overflow),
             ("stable_cross_entropy.far_apart", 1000 * ctx.randn(N, V), MISTAKE.shift_not_max),
             ("stable_cross_entropy.rows_far_apart",
              2000.0 * torch.arange(N, dtype=torch.float64)[:, None] + ctx.randn(N, V), MISTAKE.shift_not_max)]
    for label, logits, overflow in cases:  # (N, V) each, float64
        tried = say("stable_cross_entropy.tried", logits=say(label), N=N, V=V)
        got = _ce_call(ctx, fn, logits, targets, tried, overflow=overflow)
        compare(ctx, got, F.cross_entropy(logits, targets), say("debugging.the_loss"), tried,
                _ce_candidates(logits, targets), fallback=say("stable_cross_entropy.fallback"))
    logits32 = (100 + 3 * ctx.randn(N, V)).float()  # (N, V) float32: exp(100) overflows in float32
    tried32 = say("stable_cross_entropy.tried_float32", N=N, V=V)
    got32 = _ce_call(ctx, fn, logits32, targets, tried32, overflow=MISTAKE.exp_overflow)
    compare(ctx, got32, F.cross_entropy(logits32.double(), targets).float(), say("stable_cross_entropy.float32_loss"),
            tried32, atol=1e-4)
    big = (1000 * ctx.randn(N, V)).requires_grad_(True)  # (N, V)
    with torch.enable_grad():
        loss = ctx.call(fn, big, targets, what=say("stable_cross_entropy.gradient_computed"),
                        names=("logits", "targets"))
        if not (isinstance(loss, torch.Tensor) and loss.requires_grad):
            ctx.fail("stable_cross_entropy.no_gradient", tried=say("stable_cross_entropy.tried_requires_grad"),
                     mistake=MISTAKE.no_gradient)
        (grad,) = torch.autograd.grad(loss, big)
    expected = (torch.softmax(big.detach(), -1) - F.one_hot(targets, V).double()) / N  # (N, V)
    if not bool(torch.isfinite(grad).all()) or not within(grad, expected):
        err = float((grad - expected).abs().nan_to_num(float("inf")).max())
        ctx.fail("stable_cross_entropy.wrong_gradient", tried=say("stable_cross_entropy.tried_gradient"), err=err)
    return say("stable_cross_entropy.passed")


# ---- fixed_attention


ATTN_AXES = ("batch", "head", "query", "key")


def _attn_candidates(q, k, v, mask):
    d_k = q.size(-1)

    def attend(scores, dim=-1):
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=dim)
        return w

    def attend_inverted(scores):  # filled where True (= may attend); the NaN of emptied rows zeroed
        return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    s = q @ k.transpose(-2, -1)
    out = [(MISTAKE.elementwise_scores, attend((q * k).sum(-1, keepdim=True) / math.sqrt(d_k))),
           (MISTAKE.elementwise_scores, attend((q * k).sum(-1, keepdim=True))),
           (MISTAKE.missing_scale, attend(s)), (MISTAKE.softmax_over_queries, attend(s / math.sqrt(d_k), dim=-2))]
    if mask is not None:
        out.append((MISTAKE.mask_inverted, attend_inverted(s / math.sqrt(d_k))))
        out.append((MISTAKE.mask_after_softmax, torch.softmax(s / math.sqrt(d_k), -1).masked_fill(~mask, 0.0)))
    return [(n, w.expand(*q.shape[:-1], k.size(-2)).nan_to_num()) for n, w in out]


def _attn_call(ctx, fn, q, k, v, mask, tried):
    got = ctx.call(fn, q, k, v, mask, what=say("debugging.called_with", inputs=tried), names=("q", "k", "v", "mask"))
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        ctx.fail("fixed_attention.not_a_pair", tried=tried,
                 got=type(got).__name__ if got is not None else say("core.got_none"),
                 mistake=MISTAKE.missing_return if got is None else None)
    B, H, T, d_v = v.shape
    w = got[1]
    if (mask is not None and isinstance(w, torch.Tensor) and tuple(w.shape) == (B, H, T, T)
            and w.is_floating_point() and bool(torch.isnan(w).any())):
        empty = torch.isnan(w).any(-1).any(0).any(0)  # (T,): query rows with NaN weights
        if bool((empty == mask.all(-1)).all()):  # NaN exactly in the rows where the mask allows every key
            rows = [i for i in range(T) if bool(empty[i])]
            ctx.fail("fixed_attention.nan_where_all_allowed", rows=rows, tried=tried, mistake=MISTAKE.mask_inverted)
    weights = ctx.tensor(got[1], say("fixed_attention.weights"), (B, H, T, T), tried=tried)
    out = ctx.tensor(got[0], say("fixed_attention.out"), (B, H, T, d_v), tried=tried)
    return out, weights


@check
def check_fixed_attention(ctx: Ctx, fn):
    """fixed_attention(q, k, v, mask) -> (out, weights): weights depend on the keys; equal to the reference."""
    ctx.function(fn, "fixed_attention")
    B, H, T, d_k, d_v = [(2, 3, 5, 4, 6), (3, 2, 4, 6, 5), (2, 2, 6, 3, 4)][ctx.seed % 3]
    q, k, v = ctx.randn(B, H, T, d_k), ctx.randn(B, H, T, d_k), ctx.randn(B, H, T, d_v)
    mask = torch.ones(T, T, dtype=torch.bool).tril()  # (T, T) causal
    sizes = dict(B=B, H=H, T=T, d_k=d_k, d_v=d_v)
    tried = say("fixed_attention.tried", **sizes, mask=say("fixed_attention.causal_mask", T=T))
    out, weights = _attn_call(ctx, fn, q, k, v, mask, tried)
    k2 = ctx.randn(B, H, T, d_k)
    _, weights2 = _attn_call(ctx, fn, q, k2, v, mask, say("fixed_attention.then_new_keys", inputs=tried))
    if within(weights2, weights):
        allowed = mask.sum(-1).double()  # (T,): keys each query may see
        uniform = within(weights, (mask / allowed[:, None]).expand_as(weights))
        ctx.fail("fixed_attention.keys_ignored", tried=say("fixed_attention.then_k_replaced", inputs=tried),
                 uniform=say("fixed_attention.uniform") if uniform else "",
                 mistake=MISTAKE.elementwise_scores if uniform else None)
    ref_out, ref_w = ref.fixed_attention(q, k, v, mask)
    compare(ctx, weights, ref_w, say("fixed_attention.weights"), tried, _attn_candidates(q, k, v, mask),
            axes=ATTN_AXES, fallback=say("fixed_attention.weights_fallback"))
    compare(ctx, out, ref_out, say("fixed_attention.out"), tried, axes=("batch", "head", "query", "feature"),
            fallback=say("fixed_attention.out_fallback"))
    triedn = say("fixed_attention.tried", **sizes, mask="mask=None")
    out_n, w_n = _attn_call(ctx, fn, q, k, v, None, triedn)
    compare(ctx, w_n, ref.fixed_attention(q, k, v)[1], say("fixed_attention.weights_without_mask"), triedn,
            _attn_candidates(q, k, v, None), axes=ATTN_AXES)
    ctx.differentiable(fn, q, k, v, mask, what=say("debugging.gradients_taken"), names=("q", "k", "v"))
    return say("fixed_attention.passed")


# ---- fixed_causal_mask


def _mask_candidates(T):
    ones = torch.ones(T, T, dtype=torch.bool)
    return [(MISTAKE.mask_sees_future, ones.tril(1)), (MISTAKE.mask_sees_future, ones.triu()), (MISTAKE.mask_sees_future, ones.triu(1)),
            (MISTAKE.mask_sees_future, ones), (MISTAKE.mask_hides_self, ones.tril(-1)), (MISTAKE.mask_hides_past, torch.eye(T).bool())]


def _mask_name(m: torch.Tensor) -> str | None:
    """The known mistake a wrong (T, T) bool mask is, or None."""
    return next((n for n, c in _mask_candidates(m.size(0)) if bool((c == m).all())), None)


@check
def check_fixed_causal_mask(ctx: Ctx, fn):
    """fixed_causal_mask(T) -> bool (T, T): a TinyLM using it reads no future token; equal to tril."""
    ctx.function(fn, "fixed_causal_mask")
    ctx.hints = hints("fixed_causal_mask.hints")  # this exercise's wording of MASK_NOT_BOOL
    masks = {}
    for T in (1, 4, 7):
        m = ctx.call(fn, T, what=say("debugging.was_called", call=f"fixed_causal_mask({T})"))
        if isinstance(m, torch.Tensor) and m.dtype != torch.bool and tuple(m.shape) == (T, T):
            ctx.fail("fixed_causal_mask.not_bool", call=f"fixed_causal_mask({T})", dtype=m.dtype,
                     tried=f"fixed_causal_mask({T})", expected="torch.bool", got=str(m.dtype), mistake=MISTAKE.mask_not_bool)
        masks[T] = ctx.tensor(m, f"fixed_causal_mask({T})", (T, T), dtype=torch.bool, tried=f"fixed_causal_mask({T})")
    # behaviour: a small LabTinyLM using the learner's mask
    V, L, T = 13, 8, 7
    torch.manual_seed(ctx.seed)  # the decorator restores the global RNG afterwards
    model = given.LabTinyLM(V, L, 12, 2, 2, 24, mask_fn=fn).double().eval()
    ids = torch.randint(V, (2, T), generator=ctx.gen)  # (2, T)
    t = 3
    changed = ids.clone()
    changed[:, t + 1:] = (changed[:, t + 1:] + 1 + torch.randint(V - 1, (2, T - t - 1), generator=ctx.gen)) % V
    tried = say("fixed_causal_mask.tried", T=T, first=t + 1, last=T - 1)
    with torch.no_grad():
        a = ctx.call(model, ids, what=say("fixed_causal_mask.forward"))[0]  # (2, T, V)
        b = ctx.call(model, changed, what=say("fixed_causal_mask.forward"))[0]  # (2, T, V)
    err, idx = max_abs_diff(a[:, :t + 1], b[:, :t + 1])
    if err > 1e-9:
        ctx.fail("fixed_causal_mask.reads_future", t=t, first=t + 1, err=err, position=idx[1], tried=tried,
                 mistake=MISTAKE.mask_sees_future)
    for T, m in sorted(masks.items(), reverse=True):  # the largest first: at T = 1 many masks look alike
        expected = torch.ones(T, T, dtype=torch.bool).tril()
        if not bool((m == expected).all()):
            rows = [i for i in range(T) if not bool((m[i] == expected[i]).all())]
            ctx.fail("fixed_causal_mask.not_causal", call=f"fixed_causal_mask({T})", row=rows[0],
                     values=expected[rows[0]].int().tolist(), values_got=m[rows[0]].int().tolist(),
                     tried=f"fixed_causal_mask({T})", mistake=_mask_name(m))
    return say("fixed_causal_mask.passed")


# ---- fixed_lm_loss
def _lm_call(ctx: Ctx, fn, logits, labels, tried, **kw):
    """Call ``fn(logits, labels)`` (a .view() on the sliced logits is named by the core: view_after_transpose,
    worded for slices and transposes alike)."""
    return ctx.call(fn, logits, labels, what=say("debugging.called_with", inputs=tried), names=("logits", "labels"),
                    **kw)


def _lm_candidates(logits, labels):
    def ce(lg, lb, **kw):
        return F.cross_entropy(lg.reshape(-1, lg.size(-1)), lb.reshape(-1), **kw)
    return [(MISTAKE.labels_not_shifted, ce(logits, labels)), (MISTAKE.shift_reversed, ce(logits[:, 1:], labels[:, :-1])),
            (MISTAKE.labels_shifted_twice, ce(logits[:, :-2], labels[:, 2:])),
            (MISTAKE.loss_summed, ce(logits[:, :-1], labels[:, 1:], reduction="sum"))]


@check
def check_fixed_lm_loss(ctx: Ctx, fn):
    """fixed_lm_loss(logits (B, T, V), labels (B, T)): copying logits score badly, next-token logits well."""
    ctx.function(fn, "fixed_lm_loss")
    B, T, V = [(2, 6, 5), (3, 5, 7), (2, 7, 6)][ctx.seed % 3]
    ids = torch.randint(V, (B, T), generator=ctx.gen)  # (B, T)
    ids[:, 1:] = torch.where(ids[:, 1:] == ids[:, :-1], (ids[:, 1:] + 1) % V, ids[:, 1:])  # no token repeats
    copying = 10.0 * F.one_hot(ids, V).double()  # (B, T, V): predicts the token it reads
    nxt = torch.cat([ids[:, 1:], ids[:, :1]], dim=1)  # (B, T): the next token (the last one's is arbitrary)
    predicting = 10.0 * F.one_hot(nxt, V).double()  # (B, T, V): predicts the next token
    tried_c = say("fixed_lm_loss.tried_copying", B=B, T=T, V=V)
    got_c = ctx.tensor(_lm_call(ctx, fn, copying, ids, tried_c),
                       say("debugging.the_loss"), (), tried=tried_c, hint=say("fixed_lm_loss.shape_hint"))
    expected_c = float(ref.fixed_lm_loss(copying, ids))
    if float(got_c) < 1.0:
        ctx.fail("fixed_lm_loss.copying_scores_well", loss=float(got_c), reference=expected_c, tried=tried_c,
                 got=f"{float(got_c):.4g}", mistake=_lm_name(got_c, copying, ids))
    logits = ctx.randn(B, T, V)  # (B, T, V)
    labels = ids.clone()
    labels[0, -2:] = -100  # padding at the end of sequence 0
    tried = say("fixed_lm_loss.tried_padding", B=B, T=T, V=V)
    got = ctx.tensor(_lm_call(ctx, fn, logits, labels, tried, mistake_if_raises=MISTAKE.ignored_targets_scored),
                     say("debugging.the_loss"), (), tried=tried)
    compare(ctx, got, ref.fixed_lm_loss(logits, labels), say("debugging.the_loss"), tried,
            _lm_candidates(logits, labels), fallback=say("fixed_lm_loss.fallback"))
    tried_p = say("fixed_lm_loss.tried_predicting", B=B, T=T, V=V)
    got_p = ctx.tensor(_lm_call(ctx, fn, predicting, ids, tried_p),
                       say("debugging.the_loss"), (), tried=tried_p)
    compare(ctx, got_p, ref.fixed_lm_loss(predicting, ids), say("fixed_lm_loss.predicting_loss"), tried_p,
            fallback=say("fixed_lm_loss.predicting_fallback"))
    ctx.differentiable(fn, logits, labels, what=say("debugging.gradients_taken"), names=("logits",))
    return say("fixed_lm_loss.passed")


def _lm_name(got, logits, labels):
    return diagnose(got, _lm_candidates(logits, labels)) or MISTAKE.labels_not_shifted
