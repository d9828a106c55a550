"""Stage 01 checks: attention scores, scaled dot-product attention, single-head self-attention."""
from __future__ import annotations

import functools
import math

import torch

from tinylm_solutions import attention as ref
from tinylm_solutions.masks import causal_mask

from ._core import Ctx, check, compare, diagnose, fmt_shape, known_mistake

# ---- the mistakes these checks can name, with the hint a learner reads
NO_SCALING = known_mistake("no_scaling", "the scores are not scaled: q @ k^T must be divided by sqrt(d_k)")
SCALE_BY_D_K = known_mistake("scale_by_d_k", "the scores are divided by d_k instead of sqrt(d_k)")
SCALE_MULTIPLIED = known_mistake("scale_multiplied", "the scores are multiplied by sqrt(d_k) instead of divided")
SCALE_BY_SQRT_D = known_mistake("scale_by_sqrt_d_model",
                                "the scores are divided by sqrt(d_model) instead of sqrt(d_k) = sqrt(d_model // num_heads)")
TRANSPOSED_SCORES = known_mistake("transposed_scores", "the scores are k @ q^T (keys x queries) instead of q @ k^T")
SOFTMAX_OVER_QUERIES = known_mistake("softmax_over_queries",
                                     "the softmax runs over the queries (dim=-2) instead of over the keys (dim=-1)")
MASK_AFTER_SOFTMAX = known_mistake("mask_after_softmax",
                                   "the mask is applied after the softmax, so the remaining weights no longer sum to 1")
MASK_MULTIPLIED = known_mistake("mask_multiplied",
                                "masked scores are set to 0 (mask multiplied in, or filled with 0); "
                                "a score of 0 still gets weight after the softmax")
MASK_IGNORED = known_mistake("mask_ignored", "the mask argument is ignored")
MASK_INVERTED = known_mistake("mask_inverted", "the mask is inverted: True must mean 'may attend' (PyTorch's convention)")
MASK_ADDED = known_mistake("mask_added", "the bool mask is added to the scores instead of setting masked scores to -inf")
SWAPPED_OUTPUTS = known_mistake("swapped_outputs", "the function returns (weights, out) instead of (out, weights)")
VALUES_NOT_PROJECTED = known_mistake("values_not_projected", "the values are x itself: W_V is not applied")
Q_K_SWAPPED = known_mistake("q_k_swapped", "queries and keys are swapped (W_K(x) used as the queries)")
SQRT_PRECEDENCE = known_mistake("sqrt_precedence", "d_k ** 1/2 is (d_k ** 1) / 2 = d_k / 2, not sqrt(d_k)")
INT_SQRT = known_mistake("int_sqrt", "sqrt(d_k) is rounded to an integer")
D_K_WRONG_DIM = known_mistake("d_k_from_wrong_dim", "d_k is read from the wrong dimension (it is the last one: q.shape[-1])")
WEIGHTS_ARE_SCORES = known_mistake("weights_are_scores", "the returned weights are the scores before the softmax")
ALWAYS_CAUSAL = known_mistake("always_causal", "a causal mask is applied even when no mask is passed")
WEIGHTS_NOT_RETURNED = known_mistake("weights_not_returned", "only the output is returned, not (out, weights)")
SHARED_PROJECTION = known_mistake("shared_projection", "the projections are one shared layer, not separate layers")
NAN_FULLY_MASKED = known_mistake("nan_fully_masked_row",
                                 "a query whose keys are all masked gets NaN weights (softmax of a row of -inf)")
DROPOUT_ON_WEIGHTS = known_mistake("dropout_on_weights",
                                   "dropout is applied to the weights (some are 0, the rest scaled up by 1/(1-p))")
EXTRA_PROJECTION = known_mistake("extra_output_projection",
                                 "SelfAttention has an output projection; in this course that is W_O, in stage 02")

HINTS = {
    NO_SCALING: "divide the scores by math.sqrt(d_k), where d_k = q.shape[-1] (the width of a query)",
    SCALE_BY_D_K: "use math.sqrt(d_k), not d_k",
    SQRT_PRECEDENCE: "write math.sqrt(d_k) or d_k ** 0.5",
    INT_SQRT: "keep the square root a float: math.sqrt(d_k)",
    D_K_WRONG_DIM: "d_k = q.shape[-1] (or q.size(-1)): the width of one query vector",
    WEIGHTS_ARE_SCORES: "return the softmax of the (masked) scores as the weights",
    ALWAYS_CAUSAL: "apply the mask you are given, and none when mask is None",
    NAN_FULLY_MASKED: "after the softmax: weights = weights.nan_to_num(0.0)",
    DROPOUT_ON_WEIGHTS: "no dropout in this exercise: the check compares exact values",
    SCALE_MULTIPLIED: "divide by math.sqrt(d_k); scaling keeps the scores' variance near 1",
    SCALE_BY_SQRT_D: "each head has width d_k = d_model // num_heads; take q.shape[-1] inside the attention function",
    TRANSPOSED_SCORES: "row i of the scores belongs to query i: q @ k.transpose(-2, -1)",
    SOFTMAX_OVER_QUERIES: "use torch.softmax(scores, dim=-1): each query's weights over the keys sum to 1",
    MASK_AFTER_SOFTMAX: "set masked scores to float('-inf') with scores.masked_fill(~mask, float('-inf')) before the softmax",
    MASK_MULTIPLIED: "a score of 0 is not 'no attention': use scores.masked_fill(~mask, float('-inf'))",
    MASK_IGNORED: "when mask is not None, fill the scores where mask is False with float('-inf') before the softmax",
    MASK_INVERTED: "fill where the mask is False: scores.masked_fill(~mask, float('-inf'))",
    MASK_ADDED: "use scores.masked_fill(~mask, float('-inf')) rather than adding the mask",
    VALUES_NOT_PROJECTED: "v = self.W_V(x)",
    Q_K_SWAPPED: "q = self.W_Q(x) and k = self.W_K(x); the scores are q @ k^T",
}


MODULE_HINTS = {**HINTS, MASK_IGNORED: "forward(x, mask) must use its mask: pass it on to "
                                       "scaled_dot_product_attention(q, k, v, mask)"}


def _sdpa_variant(q, k, v, mask=None, *, scale=None, softmax_dim=-1, mask_mode="fill"):
    """The reference attention, with one deliberate change (used to name a learner's mistake)."""
    scale = 1 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    if mask is not None:
        if mask_mode == "fill":
            scores = scores.masked_fill(~mask, float("-inf"))
        elif mask_mode == "inverted":
            scores = scores.masked_fill(mask, float("-inf"))
        elif mask_mode == "multiplied":
            scores = scores * mask
        elif mask_mode == "added":
            scores = scores + mask
    weights = torch.softmax(scores, dim=softmax_dim)
    if mask is not None and mask_mode == "after":
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


def _candidates(q, k, v, mask=None, extra=()):
    """Known mistakes for these inputs: a list of (name, (out, weights)); out may be None."""
    d_k, T_q, T_k = q.size(-1), q.size(-2), k.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    variant = functools.partial(_sdpa_variant, q, k, v, mask)
    cands = [
        (NO_SCALING, variant(scale=1.0)),
        (SCALE_BY_D_K, variant(scale=1 / d_k)),
        (SCALE_MULTIPLIED, variant(scale=math.sqrt(d_k))),
        (SQRT_PRECEDENCE, variant(scale=2 / d_k)),  # / (d_k ** 1/2)
        (SQRT_PRECEDENCE, variant(scale=1 / (2 * d_k))),  # / d_k ** 1/2
        (INT_SQRT, variant(scale=1 / int(math.sqrt(d_k)))),
        (D_K_WRONG_DIM, variant(scale=1 / math.sqrt(T_q))),
        (D_K_WRONG_DIM, variant(scale=1 / math.sqrt(T_k))),
        (D_K_WRONG_DIM, variant(scale=1 / math.sqrt(v.size(-1)))),
        (SOFTMAX_OVER_QUERIES, variant(softmax_dim=-2)),
        (WEIGHTS_ARE_SCORES, (None, scores)),
    ]
    if mask is None and T_q == T_k:
        cands.append((ALWAYS_CAUSAL, _sdpa_variant(q, k, v, torch.ones(T_q, T_k, dtype=torch.bool).tril())))
    if mask is not None:
        cands += [
            (MASK_AFTER_SOFTMAX, variant(mask_mode="after")),
            (MASK_MULTIPLIED, variant(mask_mode="multiplied")),
            (MASK_IGNORED, _sdpa_variant(q, k, v, None)),
            (MASK_INVERTED, variant(mask_mode="inverted")),
            (MASK_ADDED, variant(mask_mode="added")),
        ]
    return cands + list(extra)


def _sizes(seed: int) -> dict[str, int]:
    """All different, so that a mixed-up dimension cannot go unnoticed (B, H, T_q, T_k, d_k, d_v)."""
    if seed == 0:
        return dict(B=2, H=4, T_q=5, T_k=7, d_k=6, d_v=3)  # sqrt(d_v) != int(sqrt(d_k)) = 2
    # d_k is never a perfect square, so sqrt(d_k) differs from d_k ** 1/2 (= d_k / 2) and int(sqrt(d_k)).
    g = torch.Generator().manual_seed(seed)
    d_k = (5, 6, 7)[int(torch.randint(0, 3, (1,), generator=g))]  # int(sqrt(d_k)) = 2, not 1
    pool = [n for n in (2, 3, 5, 6, 7, 8, 10, 11) if n != d_k]  # no 4 or 9: sqrt(4) = int(sqrt(d_k)) = 2
    others = [pool[int(i)] for i in torch.randperm(len(pool), generator=g)][:5]
    return dict(zip(("B", "H", "T_q", "T_k", "d_v"), others), d_k=d_k)


def _random_mask(ctx: Ctx, *shape: int) -> torch.Tensor:
    """A bool mask where every row has at least one True and one False (so inversion cannot hide)."""
    m = torch.rand(*shape, generator=ctx.gen) < 0.6
    T_k = shape[-1]
    keep = torch.randint(0, T_k, shape[:-1], generator=ctx.gen)
    drop = (keep + 1 + torch.randint(0, T_k - 1, shape[:-1], generator=ctx.gen)) % T_k
    m.scatter_(-1, keep[..., None], True)
    m.scatter_(-1, drop[..., None], False)
    return m


def _unpack_pair(ctx: Ctx, result, what: str, out_shape, w_shape, mask=None, tried=None,
                 returns="return weights @ v, weights"):
    """Learner returned (out, weights)? Check both shapes; name a swapped pair or an inverted mask's NaN."""
    if isinstance(result, torch.Tensor) and tuple(result.shape) == tuple(out_shape):
        ctx.fail(f"{what} returned one tensor", expected="a pair (out, weights)", got=f"a tensor {fmt_shape(result.shape)}",
                 mistake=WEIGHTS_NOT_RETURNED, hint=f"end with `{returns}`")
    if result is None:
        ctx.fail(f"{what} returned None", expected="a pair (out, weights)", mistake="missing_return",
                 hint=f"end with `{returns}`")
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        ctx.fail(f"{what} must return a pair (out, weights)",
                 got=f"{type(result).__name__}" + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""),
                 hint="end with `return weights @ v, weights`")
    out, weights = result
    if (isinstance(out, torch.Tensor) and isinstance(weights, torch.Tensor)
            and tuple(out.shape) == tuple(w_shape) and tuple(weights.shape) == tuple(out_shape)
            and tuple(out_shape) != tuple(w_shape)):
        ctx.fail(f"{what} returned its outputs in the wrong order", expected=f"(out {fmt_shape(out_shape)}, "
                 f"weights {fmt_shape(w_shape)})", got=f"({fmt_shape(out.shape)}, {fmt_shape(weights.shape)})",
                 mistake=SWAPPED_OUTPUTS, hint="return out first, then weights")
    if mask is not None and isinstance(weights, torch.Tensor) and tuple(weights.shape) == tuple(w_shape):
        nan_rows = torch.isnan(weights).any(-1)
        full_rows = mask.expand(w_shape).all(-1)
        if bool(nan_rows.any()) and bool((nan_rows == full_rows).all()):
            ctx.fail("the weights are NaN exactly in the rows where the mask allows every key",
                     expected="True in the mask = may attend", mistake=MASK_INVERTED, hint=HINTS[MASK_INVERTED])
    out = ctx.tensor(out, f"out returned by {what}", out_shape, tried=tried)
    weights = ctx.tensor(weights, f"weights returned by {what}", w_shape, tried=tried)
    return out, weights


def _check_pair(ctx: Ctx, out, weights, ref_out, ref_w, cands, tried, mask=None, hints=HINTS,
                out_what="the output (weights @ v)"):
    """Compare weights first (masked keys, row sums, values), then the output."""
    w_cands = [(n, w) for n, (_, w) in cands if w is not None]
    o_cands = [(n, o) for n, (o, _) in cands if o is not None]
    if mask is not None:
        allowed = mask.expand_as(weights)
        leak = (weights.abs() > 1e-12) & ~allowed
        if bool(leak.any()):
            i = leak.nonzero()[0].tolist()
            inverted = bool((weights.masked_select(allowed).abs() <= 1e-12).all())
            ctx.fail("a masked key got attention weight", tried=tried,
                     expected=f"weight 0 where the mask is False (e.g. index {i})",
                     got=f"weight {weights[tuple(i)].item():.4f}" + (
                         "; and every key the mask allows got weight 0" if inverted else ""),
                     mistake=MASK_INVERTED if inverted else diagnose(weights, w_cands),
                     hint=hints[MASK_INVERTED] if inverted else hints[MASK_IGNORED])
    dropped = (weights == 0) & (ref_w > 1e-12)
    if bool(dropped.any()) and bool((weights != 0).any()):
        ratio = weights[weights != 0] / ref_w[weights != 0]
        if float(ratio.min()) > 1 + 1e-6 and float(ratio.max() - ratio.min()) <= 1e-6:
            ctx.fail("some attention weights are 0 and the others are scaled up", tried=tried,
                     got=f"{int(dropped.sum())} weights set to 0, the rest multiplied by {float(ratio.mean()):.4f}",
                     mistake=DROPOUT_ON_WEIGHTS, hint=hints[DROPOUT_ON_WEIGHTS])
    sums = weights.sum(-1)
    if not bool(((sums - 1).abs() <= 1e-6).all()):
        bad = ((sums - 1).abs() > 1e-6).nonzero()[0].tolist()
        mistake = diagnose(weights, w_cands)
        ctx.fail("a row of the attention weights does not sum to 1", tried=tried,
                 expected="each weights row (a query's weights over all keys) sums to 1",
                 got=f"row {bad} sums to {sums[tuple(bad)].item():.4f}", mistake=mistake,
                 hint=hints.get(mistake) or hints[SOFTMAX_OVER_QUERIES] + "; mask before the softmax, not after")
    compare(ctx, weights, ref_w, "the attention weights", tried, w_cands, hints)
    compare(ctx, out, ref_out, out_what, tried, o_cands, hints)


@check
def check_attention_scores(ctx: Ctx, attention_scores) -> str:
    """Check ``attention_scores(q, k) -> q @ k^T / sqrt(d_k)`` on 3-D and 4-D inputs, T_q != T_k."""
    fn = ctx.function(attention_scores, "attention_scores")
    s = _sizes(ctx.seed)
    for lead, size in (((s["B"],), 1.0), ((s["B"], s["H"]), 1.0), ((s["B"],), 8.0)):  # 8.0: scores in the tens
        q = ctx.randn(*lead, s["T_q"], s["d_k"]) * size
        k = ctx.randn(*lead, s["T_k"], s["d_k"]) * size
        tried = f"q {fmt_shape(q.shape)}, k {fmt_shape(k.shape)}, float64, seed {ctx.seed}"
        got = ctx.call(fn, q, k, what=f"called with {tried}", names=("q", "k"))
        expected = ref.attention_scores(q, k)
        transposed = isinstance(got, torch.Tensor) and tuple(got.shape) == (*lead, s["T_k"], s["T_q"])
        got = ctx.tensor(got, "the scores", expected.shape, tried=tried, mistake=TRANSPOSED_SCORES if transposed else None,
                         hint=HINTS[TRANSPOSED_SCORES] if transposed else
                         "scores have one row per query and one column per key: (..., T_q, T_k)")
        d_k = s["d_k"]
        raw = q @ k.transpose(-2, -1)
        compare(ctx, got, expected, "the scores", tried,
                [(NO_SCALING, raw), (SCALE_BY_D_K, raw / d_k), (SCALE_MULTIPLIED, raw * math.sqrt(d_k)),
                 (SQRT_PRECEDENCE, raw * 2 / d_k), (SQRT_PRECEDENCE, raw / (2 * d_k)), (INT_SQRT, raw / int(math.sqrt(d_k))),
                 (D_K_WRONG_DIM, raw / math.sqrt(s["T_q"])), (D_K_WRONG_DIM, raw / math.sqrt(s["T_k"]))], HINTS)
    ctx.differentiable(fn, q, k, what=f"called with {tried}", names=("q", "k"))
    ctx.dtype_follows(fn, q, k, what=f"called with {tried}", names=("q", "k"))
    return "shape (..., T_q, T_k) and q @ k^T / sqrt(d_k) on 3-D and 4-D inputs with T_q != T_k"


@check
def check_scaled_dot_product_attention(ctx: Ctx, scaled_dot_product_attention) -> str:
    """Check ``(out, weights)`` without a mask, then with a random bool mask (True = may attend)."""
    fn = ctx.function(scaled_dot_product_attention, "scaled_dot_product_attention")
    s = _sizes(ctx.seed)
    q = ctx.randn(s["B"], s["H"], s["T_q"], s["d_k"])
    k = ctx.randn(s["B"], s["H"], s["T_k"], s["d_k"])
    v = ctx.randn(s["B"], s["H"], s["T_k"], s["d_v"])
    out_shape, w_shape = (s["B"], s["H"], s["T_q"], s["d_v"]), (s["B"], s["H"], s["T_q"], s["T_k"])
    shapes = f"q {fmt_shape(q.shape)}, k {fmt_shape(k.shape)}, v {fmt_shape(v.shape)}, float64, seed {ctx.seed}"

    tried = f"{shapes}, no mask"
    res = ctx.call(fn, q, k, v, what=f"called with {tried}", names=("q", "k", "v"))
    out, weights = _unpack_pair(ctx, res, "scaled_dot_product_attention", out_shape, w_shape, tried=tried)
    _check_pair(ctx, out, weights, *ref.scaled_dot_product_attention(q, k, v), _candidates(q, k, v), tried)
    ctx.differentiable(fn, q, k, v, what=f"called with {tried}", names=("q", "k", "v"))
    ctx.dtype_follows(fn, q, k, v, what=f"called with {tried}", names=("q", "k", "v"))

    mask = _random_mask(ctx, s["B"], 1, s["T_q"], s["T_k"])  # broadcast over heads
    tried = f"{shapes}, bool mask {fmt_shape(mask.shape)} (True = may attend)"
    res = ctx.call(fn, q, k, v, mask, what=f"called with {tried}", names=("q", "k", "v", "mask"))
    out, weights = _unpack_pair(ctx, res, "scaled_dot_product_attention", out_shape, w_shape, mask, tried)
    _check_pair(ctx, out, weights, *ref.scaled_dot_product_attention(q, k, v, mask),
                _candidates(q, k, v, mask), tried, mask)

    mask[0, 0, 0] = False  # batch 0, query 0: every key masked (as padding can do)
    tried = f"{shapes}, bool mask {fmt_shape(mask.shape)} in which query 0 of batch 0 may attend to no key"
    res = ctx.call(fn, q, k, v, mask, what=f"called with {tried}", names=("q", "k", "v", "mask"))
    if isinstance(res, (tuple, list)) and len(res) == 2 and all(isinstance(t, torch.Tensor) for t in res) \
            and not all(bool(torch.isfinite(t).all()) for t in res):
        ctx.fail("NaN in the output when a query may attend to no key", tried=tried,
                 expected="finite values (the reference gives that query zero weights and a zero output)",
                 got="NaN: the softmax of a row of -inf is 0/0", mistake=NAN_FULLY_MASKED, hint=HINTS[NAN_FULLY_MASKED])
    out, weights = _unpack_pair(ctx, res, "scaled_dot_product_attention", out_shape, w_shape, None, tried)
    ref_out, ref_w = ref.scaled_dot_product_attention(q, k, v, mask)
    keep = mask.expand(w_shape).any(-1)  # rows with at least one key: compare those
    compare(ctx, weights[keep], ref_w[keep], "the attention weights (rows with an allowed key)", tried)
    return "out and weights equal the reference, rows sum to 1, masked keys get weight 0, no NaN"


def _copy_linears(ctx: Ctx, learner, reference, names, D):
    with torch.no_grad():
        for name in names:
            ctx.linear(learner, name, D, D).weight.copy_(getattr(reference, name).weight)
            ctx.linear(learner, name, D, D).bias.copy_(getattr(reference, name).bias)


def _randomise(ctx: Ctx, module) -> None:
    """Non-zero, distinct weights and biases in every parameter of the reference module."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(ctx.randn(*p.shape) * 0.3)


def count_params(module) -> int:
    return sum(p.numel() for p in module.parameters())


def check_gradients(ctx: Ctx, module, out, names, tried):
    """The output must depend differentiably on each named projection."""
    module.zero_grad(set_to_none=True)
    if not out.requires_grad:
        ctx.fail("the output carries no gradient", tried=tried, mistake="no_gradient",
                 hint="don't use torch.no_grad(), .detach(), .item() or numpy inside forward")
    out.sum().backward()
    for name in names:
        grad = getattr(module, name).weight.grad
        if grad is None or not bool((grad != 0).any()):
            ctx.fail(f"no gradient reaches {name}.weight", tried=tried, mistake="no_gradient",
                     hint=f"the output must be computed through self.{name}, without .detach() or numpy")


@check
def check_self_attention(ctx: Ctx, SelfAttention) -> str:
    """Check ``SelfAttention(d_model)``: W_Q, W_K, W_V sizes, 3(D^2+D) parameters, output with copied weights."""
    cls = ctx.module_class(SelfAttention, "SelfAttention")
    B, T, D = (3, 5, 8) if ctx.seed == 0 else (2 + ctx.seed % 3, 4 + ctx.seed % 3, 10)
    learner = ctx.build(cls, D, what=f"SelfAttention(d_model={D}) was created")
    reference = ref.SelfAttention(D).double()
    _randomise(ctx, reference)
    names = ("W_Q", "W_K", "W_V")
    _copy_linears(ctx, learner, reference, names, D)
    n = count_params(learner)
    if n != 3 * (D * D + D):
        ctx.fail("wrong number of parameters", expected=f"3 (D^2 + D) = {3 * (D * D + D)} for D = {D}", got=str(n),
                 mistake=SHARED_PROJECTION if n == D * D + D else EXTRA_PROJECTION if n == 4 * (D * D + D) else None,
                 hint="are W_Q, W_K, W_V the same layer? they must be three separate nn.Linear(d_model, d_model)"
                 if n == D * D + D else
                 "SelfAttention holds exactly W_Q, W_K, W_V = nn.Linear(d_model, d_model); no other parameters")

    x = ctx.randn(B, T, D)
    q, k, v = (getattr(reference, n)(x).detach() for n in names)
    padding = torch.arange(T)[None, None, :] < torch.tensor([T, T - 2, 1] * B)[:B, None, None]  # (B, 1, T)
    for mask, label in ((None, ""), (causal_mask(T), ", causal mask (T, T)"), (padding, ", key-padding mask (B, 1, T)")):
        tried = f"x {fmt_shape(x.shape)}, float64, seed {ctx.seed}{label}"
        res = ctx.call(learner, x, mask, what=f"forward was called with {tried}", names=("x", "mask"))
        out, weights = _unpack_pair(ctx, res, "SelfAttention.forward", (B, T, D), (B, T, T), mask, tried,
                                    returns="return scaled_dot_product_attention(q, k, v, mask)")
        cands = _candidates(q, k, v, mask, extra=[
            (VALUES_NOT_PROJECTED, ref.scaled_dot_product_attention(q, k, x, mask)),
            (Q_K_SWAPPED, ref.scaled_dot_product_attention(k, q, v, mask))])
        with torch.no_grad():
            ref_out, ref_w = reference(x, mask)
        _check_pair(ctx, out.detach(), weights.detach(), ref_out, ref_w, cands, tried, mask, MODULE_HINTS)
    check_gradients(ctx, learner, out, names, tried)
    return f"3 (D^2 + D) = {n} parameters; out (B, T, D) and weights (B, T, T) equal the reference with copied weights"
