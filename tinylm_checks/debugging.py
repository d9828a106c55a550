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

from .attention import MASK_AFTER_SOFTMAX, MASK_INVERTED, SOFTMAX_OVER_QUERIES
from .masks import MASK_NOT_BOOL
from .model import IGNORED_SCORED as IGNORE_INDEX_DROPPED, LOSS_SUMMED
from .model import NOT_SHIFTED as LABELS_NOT_SHIFTED, SHIFT_REVERSED, SHIFTED_TWICE as LABELS_SHIFTED_TWICE
from .setup import SOFTMAX_WRONG_DIM
from ._core import Ctx, check, compare, diagnose, known_mistake, max_abs_diff, reference, within

ref = reference("debugging")
given = reference("ablations")

__all__ = ["check_nan_loss_bug", "check_uniform_attention_bug", "check_future_mask_bug", "check_unshifted_labels_bug",
           "check_stable_cross_entropy", "check_fixed_attention", "check_fixed_causal_mask", "check_fixed_lm_loss"]

# ---- naming the bug
UNKNOWN_BUG_NAME = known_mistake("unknown_bug_name")
WRONG_BUG_NAMED = known_mistake("wrong_bug_named")

# For each symptom, the hint a learner reads after choosing each wrong name: why that name does not explain it.
WRONG_NAME_HINTS = {
    "nan_loss": {
        "learning_rate_too_high": "the probe needs no training at all: the same logits, scaled up, give NaN at any "
                                  "learning rate. Look at what the loss does with large logits",
        "*": "the NaN appears in the loss itself, on fixed logits, once they are large: look at the first line of "
             "naive_cross_entropy and at what exp(100) is in float32",
    },
    "uniform_attention": {
        "missing_scale": "without the 1/sqrt(d_k) the weights get *sharper*, not uniform; here every allowed key "
                         "gets exactly the same weight: print the shape of `scores` before the mask",
        "softmax_over_queries": "the softmax is over dim=-1, the keys; print the shape of `scores` before the mask",
        "*": "the weights do not change when the keys change: look at how the scores are computed and at their shape",
    },
    "low_loss_poor_samples": {
        "mask_hides_past": "a mask that hides the past would make the loss worse, not better; print "
                           "broken_causal_mask(4) and read row 0: which positions may token 0 see?",
        "*": "the loss is lower than a model that reads only the past can reach: print broken_causal_mask(4)",
    },
    "copying_loss": {
        "labels_shifted_twice": "shifted twice, the model would predict two tokens ahead: harder, not easier. "
                                "The probe shows it predicts the token it is reading",
        "mask_sees_future": "the lab's mask is the healthy one here; the probe shows the model predicts the token "
                            "at its own position: look at which label logits[:, t] is scored against",
        "*": "the model learned to output the token it reads: look at which label logits[:, t] is compared with",
    },
}


def _bug_name(ctx: Ctx, fn, symptom: str, fn_name: str) -> str:
    """Call the learner's ``fn()`` and compare its answer with the bug behind ``symptom``."""
    ctx.function(fn, fn_name)
    got = ctx.call(fn, what=f"{fn_name}() was called")
    names = tuple(given.BUG_NAMES)
    if not isinstance(got, str):
        ctx.fail(f"{fn_name}() returned {type(got).__name__}, not a str",
                 expected="one of the strings in BUG_NAMES", got=repr(got)[:80],
                 mistake="missing_return" if got is None else UNKNOWN_BUG_NAME)
    if got not in names:
        ctx.fail(f"{fn_name}() returned {got[:60]!r}, which is not one of the bug names",
                 expected="one of " + ", ".join(names), got=repr(got[:60]), mistake=UNKNOWN_BUG_NAME)
    right = ref.ANSWERS[symptom]
    if got != right:
        hints = WRONG_NAME_HINTS[symptom]
        ctx.fail(f"{got!r} does not explain this symptom", tried=f"{fn_name}()", got=repr(got),
                 mistake=WRONG_BUG_NAMED, mistake_hint=hints.get(got, hints["*"]))
    return right


@check
def check_nan_loss_bug(ctx: Ctx, fn):
    """The bug behind the NaN loss is named."""
    return f"{_bug_name(ctx, fn, 'nan_loss', 'nan_loss_bug')!r} is the bug behind the NaN loss"


@check
def check_uniform_attention_bug(ctx: Ctx, fn):
    """The bug behind the uniform attention is named."""
    return f"{_bug_name(ctx, fn, 'uniform_attention', 'uniform_attention_bug')!r} is the bug behind the uniform attention"


@check
def check_future_mask_bug(ctx: Ctx, fn):
    """The bug behind the suspiciously low loss is named."""
    return (f"{_bug_name(ctx, fn, 'low_loss_poor_samples', 'future_mask_bug')!r} is the bug behind the "
            "suspiciously low loss")


@check
def check_unshifted_labels_bug(ctx: Ctx, fn):
    """The bug behind the loss that falls to ~0 at once is named."""
    return f"{_bug_name(ctx, fn, 'copying_loss', 'unshifted_labels_bug')!r} is the bug behind the copying model"


# ---- stable_cross_entropy
EXP_OVERFLOW = known_mistake("exp_overflow")
SHIFT_NOT_MAX = known_mistake("shift_not_max")
LOG_OF_SOFTMAX = known_mistake("log_of_softmax")
MAX_NOT_ADDED_BACK = known_mistake("max_not_added_back")
PROBABILITY_CLAMPED = known_mistake("probability_clamped")
MISSING_MINUS = known_mistake("missing_minus_sign")


def _ce_candidates(logits, targets):
    lp = torch.log_softmax(logits, dim=-1)  # (N, V)
    pick = lambda t: t.gather(-1, targets[:, None]).squeeze(-1)  # noqa: E731
    m = logits.max(dim=-1, keepdim=True).values
    return [(LOSS_SUMMED, -pick(lp).sum()), (MISSING_MINUS, pick(lp).mean()),
            (SOFTMAX_WRONG_DIM, -pick(torch.log_softmax(logits, dim=0)).mean()),
            (MAX_NOT_ADDED_BACK, -pick(lp).mean() - m.squeeze(-1).mean()),
            (MAX_NOT_ADDED_BACK, -(pick(logits - m) - torch.logsumexp(logits, -1)).mean()),
            *((PROBABILITY_CLAMPED, -pick(torch.softmax(logits, -1) + eps).log().mean())
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
    for logits, what in ((near, "logits near 1000"), (far, "a row [0, -1000, -1] whose target logit is -1000")):
        got = ctx.call(fn, logits, targets, what=f"it was called with {what}, shape (2, 3)",
                       names=("logits", "targets"))
        results.append(isinstance(got, torch.Tensor) and got.numel() == 1 and bool(torch.isfinite(got).all()))
    return results[0] and not results[1]


def _ce_call(ctx, fn, logits, targets, tried, *, overflow=None):
    got = ctx.call(fn, logits, targets, what=f"it was called with {tried}", names=("logits", "targets"))
    if isinstance(got, torch.Tensor) and got.dim() == 0 and got.dtype == logits.dtype and not bool(torch.isfinite(got)):
        # a non-finite loss: an exp that overflowed (no shift, or a wrong one), or a probability that underflowed
        # to 0 and was logged (whatever the shift): the probes tell which
        ctx.fail(f"the loss is {got.item()} for {tried}", tried=tried,
                 expected=f"{F.cross_entropy(logits, targets).item():.6g}, as F.cross_entropy", got=str(got.item()),
                 mistake=(LOG_OF_SOFTMAX if overflow is not None and _logs_probability(ctx, fn)
                          else overflow))
    return ctx.tensor(got, "the loss", (), dtype=logits.dtype, tried=tried,
                      hint="return the mean over the N rows: a scalar tensor, shape ()")


@check
def check_stable_cross_entropy(ctx: Ctx, fn):
    """stable_cross_entropy(logits (N, V), targets (N,)) equals F.cross_entropy, also for huge logits."""
    ctx.function(fn, "stable_cross_entropy")
    ctx.hints[SOFTMAX_WRONG_DIM] = "normalise each row over its V classes: max, exp-sum and log-softmax with dim=-1"
    N, V = [(7, 11), (5, 13), (9, 6)][ctx.seed % 3]
    targets = torch.randint(V, (N,), generator=ctx.gen)  # (N,)
    cases = [("logits ~ N(0, 9)", 3 * ctx.randn(N, V), None),
             ("logits ~ 1000 + N(0, 1) (all large)", 1000 + ctx.randn(N, V), EXP_OVERFLOW),
             ("logits ~ -1000 + N(0, 1) (all very negative)", -1000 + ctx.randn(N, V), EXP_OVERFLOW),
             ("logits ~ N(0, 1000^2) (far apart)", 1000 * ctx.randn(N, V), SHIFT_NOT_MAX),
             ("row n ~ 2000 n + N(0, 1) (rows far apart: one shift for all rows fails)",
              2000.0 * torch.arange(N, dtype=torch.float64)[:, None] + ctx.randn(N, V), SHIFT_NOT_MAX)]
    for what, logits, overflow in cases:  # (N, V) each, float64
        tried = f"{what}, shape ({N}, {V}), float64, targets of shape ({N},)"
        got = _ce_call(ctx, fn, logits, targets, tried, overflow=overflow)
        compare(ctx, got, F.cross_entropy(logits, targets), "the loss", tried, _ce_candidates(logits, targets),
                fallback="the loss is the mean over rows of logsumexp(logits[n]) - logits[n, targets[n]]")
    logits32 = (100 + 3 * ctx.randn(N, V)).float()  # (N, V) float32: exp(100) overflows in float32
    tried32 = f"logits ~ 100 + N(0, 9) in float32, shape ({N}, {V})"
    got32 = _ce_call(ctx, fn, logits32, targets, tried32, overflow=EXP_OVERFLOW)
    compare(ctx, got32, F.cross_entropy(logits32.double(), targets).float(), "the float32 loss", tried32, atol=1e-4)
    big = (1000 * ctx.randn(N, V)).requires_grad_(True)  # (N, V)
    with torch.enable_grad():
        loss = ctx.call(fn, big, targets, what="its gradient was computed", names=("logits", "targets"))
        if not (isinstance(loss, torch.Tensor) and loss.requires_grad):
            ctx.fail("the loss carries no gradient", tried="logits ~ N(0, 1000^2) with requires_grad=True",
                     mistake="no_gradient")
        (grad,) = torch.autograd.grad(loss, big)
    expected = (torch.softmax(big.detach(), -1) - F.one_hot(targets, V).double()) / N  # (N, V)
    if not bool(torch.isfinite(grad).all()) or not within(grad, expected):
        err = float((grad - expected).abs().nan_to_num(float("inf")).max())
        ctx.fail("the gradient is wrong for large logits", tried="logits ~ N(0, 1000^2), d loss / d logits",
                 expected="(softmax(logits) - one_hot(targets)) / N, finite", got=f"largest difference {err:.3g}",
                 hint="compute the loss with tensor operations only; the gradient follows")
    return ("equals F.cross_entropy for logits of 1, 1000 and -1000, far apart, rows far apart, in float64 and "
            "float32, with its gradient")


# ---- fixed_attention
ELEMENTWISE_SCORES = known_mistake("elementwise_scores")
MISSING_SCALE = known_mistake("missing_scale")

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
    out = [(ELEMENTWISE_SCORES, attend((q * k).sum(-1, keepdim=True) / math.sqrt(d_k))),
           (ELEMENTWISE_SCORES, attend((q * k).sum(-1, keepdim=True))),
           (MISSING_SCALE, attend(s)), (SOFTMAX_OVER_QUERIES, attend(s / math.sqrt(d_k), dim=-2))]
    if mask is not None:
        out.append((MASK_INVERTED, attend_inverted(s / math.sqrt(d_k))))
        out.append((MASK_AFTER_SOFTMAX, torch.softmax(s / math.sqrt(d_k), -1).masked_fill(~mask, 0.0)))
    return [(n, w.expand(*q.shape[:-1], k.size(-2)).nan_to_num()) for n, w in out]


def _attn_call(ctx, fn, q, k, v, mask, tried):
    got = ctx.call(fn, q, k, v, mask, what=f"it was called with {tried}", names=("q", "k", "v", "mask"))
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        ctx.fail("the result is not a pair (out, weights)", tried=tried, expected="(out, weights)",
                 got=type(got).__name__ if got is not None else "None (did you forget `return`?)",
                 mistake="missing_return" if got is None else None, hint="return out, weights")
    B, H, T, d_v = v.shape
    w = got[1]
    if (mask is not None and isinstance(w, torch.Tensor) and tuple(w.shape) == (B, H, T, T)
            and w.is_floating_point() and bool(torch.isnan(w).any())):
        empty = torch.isnan(w).any(-1).any(0).any(0)  # (T,): query rows with NaN weights
        if bool((empty == mask.all(-1)).all()):  # NaN exactly in the rows where the mask allows every key
            rows = [i for i in range(T) if bool(empty[i])]
            ctx.fail(f"the weights are NaN in query row(s) {rows}, where the mask allows every key: a causal "
                     "mask never empties a row", tried=tried, expected="no NaN",
                     got="NaN rows: filling where the mask is True fills the allowed keys; fill where ~mask",
                     mistake=MASK_INVERTED)
    weights = ctx.tensor(got[1], "weights", (B, H, T, T), tried=tried)
    out = ctx.tensor(got[0], "out", (B, H, T, d_v), tried=tried)
    return out, weights


@check
def check_fixed_attention(ctx: Ctx, fn):
    """fixed_attention(q, k, v, mask) -> (out, weights): weights depend on the keys; equal to the reference."""
    ctx.function(fn, "fixed_attention")
    B, H, T, d_k, d_v = [(2, 3, 5, 4, 6), (3, 2, 4, 6, 5), (2, 2, 6, 3, 4)][ctx.seed % 3]
    q, k, v = ctx.randn(B, H, T, d_k), ctx.randn(B, H, T, d_k), ctx.randn(B, H, T, d_v)
    mask = torch.ones(T, T, dtype=torch.bool).tril()  # (T, T) causal
    tried = f"q, k ({B}, {H}, {T}, {d_k}), v ({B}, {H}, {T}, {d_v}), float64, a causal mask ({T}, {T})"
    out, weights = _attn_call(ctx, fn, q, k, v, mask, tried)
    k2 = ctx.randn(B, H, T, d_k)
    _, weights2 = _attn_call(ctx, fn, q, k2, v, mask, tried + ", then new keys")
    if within(weights2, weights):
        allowed = mask.sum(-1).double()  # (T,): keys each query may see
        uniform = within(weights, (mask / allowed[:, None]).expand_as(weights))
        ctx.fail("the attention weights do not change when the keys change", tried=tried + ", then k replaced",
                 expected="new keys, new weights", got="the same weights" + (", uniform over the allowed keys "
                 "(1/(t+1) in row t)" if uniform else ""), mistake=ELEMENTWISE_SCORES if uniform else None,
                 hint="each weight must come from its own query-key dot product")
    ref_out, ref_w = ref.fixed_attention(q, k, v, mask)
    compare(ctx, weights, ref_w, "weights", tried, _attn_candidates(q, k, v, mask), axes=ATTN_AXES,
            fallback="weights = softmax(q @ k^T / sqrt(d_k)), masked with -inf before the softmax")
    compare(ctx, out, ref_out, "out", tried, axes=("batch", "head", "query", "feature"),
            fallback="out = weights @ v")
    triedn = tried.replace(f", a causal mask ({T}, {T})", ", mask=None")
    out_n, w_n = _attn_call(ctx, fn, q, k, v, None, triedn)
    compare(ctx, w_n, ref.fixed_attention(q, k, v)[1], "weights without a mask", triedn,
            _attn_candidates(q, k, v, None), axes=ATTN_AXES)
    ctx.differentiable(fn, q, k, v, mask, what="gradients were taken through it", names=("q", "k", "v"))
    return "weights follow the keys (not uniform), equal to softmax(q k^T / sqrt(d_k)) with and without a mask"


# ---- fixed_causal_mask
MASK_SEES_FUTURE = known_mistake("mask_sees_future")
MASK_HIDES_SELF = known_mistake("mask_hides_self")
MASK_HIDES_PAST = known_mistake("mask_hides_past")


def _mask_candidates(T):
    ones = torch.ones(T, T, dtype=torch.bool)
    return [(MASK_SEES_FUTURE, ones.tril(1)), (MASK_SEES_FUTURE, ones.triu()), (MASK_SEES_FUTURE, ones.triu(1)),
            (MASK_SEES_FUTURE, ones), (MASK_HIDES_SELF, ones.tril(-1)), (MASK_HIDES_PAST, torch.eye(T).bool())]


def _mask_name(m: torch.Tensor) -> str | None:
    """The known mistake a wrong (T, T) bool mask is, or None."""
    return next((n for n, c in _mask_candidates(m.size(0)) if bool((c == m).all())), None)


@check
def check_fixed_causal_mask(ctx: Ctx, fn):
    """fixed_causal_mask(T) -> bool (T, T): a TinyLM using it reads no future token; equal to tril."""
    ctx.function(fn, "fixed_causal_mask")
    ctx.hints[MASK_NOT_BOOL] = "make it bool: torch.ones(T, T, dtype=torch.bool).tril(); True = may attend"
    masks = {}
    for T in (1, 4, 7):
        m = ctx.call(fn, T, what=f"fixed_causal_mask({T}) was called")
        if isinstance(m, torch.Tensor) and m.dtype != torch.bool and tuple(m.shape) == (T, T):
            ctx.fail(f"fixed_causal_mask({T}) has dtype {m.dtype}", tried=f"fixed_causal_mask({T})",
                     expected="torch.bool", got=str(m.dtype), mistake=MASK_NOT_BOOL)
        masks[T] = ctx.tensor(m, f"fixed_causal_mask({T})", (T, T), dtype=torch.bool, tried=f"fixed_causal_mask({T})")
    # behaviour: a small LabTinyLM using the learner's mask
    V, L, T = 13, 8, 7
    torch.manual_seed(ctx.seed)  # the decorator restores the global RNG afterwards
    model = given.LabTinyLM(V, L, 12, 2, 2, 24, mask_fn=fn).double().eval()
    ids = torch.randint(V, (2, T), generator=ctx.gen)  # (2, T)
    t = 3
    changed = ids.clone()
    changed[:, t + 1:] = (changed[:, t + 1:] + 1 + torch.randint(V - 1, (2, T - t - 1), generator=ctx.gen)) % V
    tried = f"a 2-layer TinyLM using your mask, input ids (2, {T}), then tokens {t + 1}..{T - 1} changed"
    with torch.no_grad():
        a = ctx.call(model, ids, what="a TinyLM using your mask ran forward")[0]  # (2, T, V)
        b = ctx.call(model, changed, what="a TinyLM using your mask ran forward")[0]  # (2, T, V)
    err, idx = max_abs_diff(a[:, :t + 1], b[:, :t + 1])
    if err > 1e-9:
        ctx.fail(f"the logits at positions 0..{t} changed when only later tokens changed", tried=tried,
                 expected="no change before position " + str(t + 1), got=f"change up to {err:.3g}, at position {idx[1]}",
                 mistake=MASK_SEES_FUTURE, hint="position t may read positions 0..t only")
    for T, m in sorted(masks.items(), reverse=True):  # the largest first: at T = 1 many masks look alike
        expected = torch.ones(T, T, dtype=torch.bool).tril()
        if not bool((m == expected).all()):
            rows = [i for i in range(T) if not bool((m[i] == expected[i]).all())]
            ctx.fail(f"fixed_causal_mask({T}) is not the causal mask", tried=f"fixed_causal_mask({T})",
                     expected=f"row {rows[0]}: {expected[rows[0]].int().tolist()} (True on and below the diagonal)",
                     got=f"row {rows[0]}: {m[rows[0]].int().tolist()}", mistake=_mask_name(m),
                     hint="torch.ones(T, T, dtype=torch.bool).tril()")
    return "a TinyLM using it ignores later tokens; equal to tril(ones(T, T)) for T = 1, 4, 7"


# ---- fixed_lm_loss
def _lm_call(ctx: Ctx, fn, logits, labels, tried, **kw):
    """Call ``fn(logits, labels)`` (a .view() on the sliced logits is named by the core: view_after_transpose,
    worded for slices and transposes alike)."""
    return ctx.call(fn, logits, labels, what="it was called with " + tried, names=("logits", "labels"), **kw)


def _lm_candidates(logits, labels):
    def ce(lg, lb, **kw):
        return F.cross_entropy(lg.reshape(-1, lg.size(-1)), lb.reshape(-1), **kw)
    return [(LABELS_NOT_SHIFTED, ce(logits, labels)), (SHIFT_REVERSED, ce(logits[:, 1:], labels[:, :-1])),
            (LABELS_SHIFTED_TWICE, ce(logits[:, :-2], labels[:, 2:])),
            (LOSS_SUMMED, ce(logits[:, :-1], labels[:, 1:], reduction="sum"))]


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
    tried_c = f"logits (B={B}, T={T}, V={V}) = 10 * one_hot(input_ids): a model copying its input, labels = input_ids"
    got_c = ctx.tensor(_lm_call(ctx, fn, copying, ids, tried_c),
                       "the loss", (), tried=tried_c, hint="return a scalar tensor, the mean over the targets")
    expected_c = float(ref.fixed_lm_loss(copying, ids))
    if float(got_c) < 1.0:
        ctx.fail(f"a model that copies its input gets a loss of {float(got_c):.3g}", tried=tried_c,
                 expected=f"{expected_c:.4g}: copying the input is no help in predicting the next token",
                 got=f"{float(got_c):.4g}", mistake=_lm_name(got_c, copying, ids))
    logits = ctx.randn(B, T, V)  # (B, T, V)
    labels = ids.clone()
    labels[0, -2:] = -100  # padding at the end of sequence 0
    tried = f"random logits ({B}, {T}, {V}) float64, labels ({B}, {T}) with -100 at the last two positions of row 0"
    got = ctx.tensor(_lm_call(ctx, fn, logits, labels, tried, mistake_if_raises=IGNORE_INDEX_DROPPED), "the loss", (),
                     tried=tried)
    compare(ctx, got, ref.fixed_lm_loss(logits, labels), "the loss", tried, _lm_candidates(logits, labels),
            fallback="F.cross_entropy over logits[:, :-1] and labels[:, 1:], flattened, ignore_index=-100")
    tried_p = tried_c.replace("one_hot(input_ids): a model copying its input", "one_hot(next token): a model "
                              "predicting the next token")
    got_p = ctx.tensor(_lm_call(ctx, fn, predicting, ids, tried_p),
                       "the loss", (), tried=tried_p)
    compare(ctx, got_p, ref.fixed_lm_loss(predicting, ids), "the loss of a model predicting the next token", tried_p,
            fallback="logits[:, t] predicts labels[:, t + 1]: these logits should score a loss near 0")
    ctx.differentiable(fn, logits, labels, what="gradients were taken through it", names=("logits",))
    return "copying the input scores badly, predicting the next token well; equal to the shifted cross-entropy"


def _lm_name(got, logits, labels):
    return diagnose(got, _lm_candidates(logits, labels)) or LABELS_NOT_SHIFTED
