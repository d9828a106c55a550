"""Stage 01 checks: attention scores, scaled dot-product attention, single-head self-attention."""
from __future__ import annotations

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
                                "the mask is multiplied into the scores; a score of 0 still gets weight after softmax")
MASK_IGNORED = known_mistake("mask_ignored", "the mask argument is ignored")
MASK_INVERTED = known_mistake("mask_inverted", "the mask is inverted: True must mean 'may attend' (PyTorch's convention)")
MASK_ADDED = known_mistake("mask_added", "the bool mask is added to the scores instead of setting masked scores to -inf")
SWAPPED_OUTPUTS = known_mistake("swapped_outputs", "the function returns (weights, out) instead of (out, weights)")
VALUES_NOT_PROJECTED = known_mistake("values_not_projected", "the values are x itself: W_V is not applied")
Q_K_SWAPPED = known_mistake("q_k_swapped", "queries and keys are swapped (W_K(x) used as the queries)")

HINTS = {
    NO_SCALING: "divide the scores by math.sqrt(d_k), where d_k = q.shape[-1] (the width of a query)",
    SCALE_BY_D_K: "use math.sqrt(d_k), not d_k",
    SCALE_MULTIPLIED: "divide by math.sqrt(d_k); scaling keeps the scores' variance near 1",
    SCALE_BY_SQRT_D: "each head has width d_k = d_model // num_heads; take q.shape[-1] inside the attention function",
    TRANSPOSED_SCORES: "row i of the scores belongs to query i: q @ k.transpose(-2, -1)",
    SOFTMAX_OVER_QUERIES: "use torch.softmax(scores, dim=-1): each query's weights over the keys sum to 1",
    MASK_AFTER_SOFTMAX: "set masked scores to float('-inf') with scores.masked_fill(~mask, float('-inf')) before the softmax",
    MASK_MULTIPLIED: "multiplying by 0 gives a score of 0, not -inf; use scores.masked_fill(~mask, float('-inf'))",
    MASK_IGNORED: "when mask is not None, fill the scores where mask is False with float('-inf') before the softmax",
    MASK_INVERTED: "fill where the mask is False: scores.masked_fill(~mask, float('-inf'))",
    MASK_ADDED: "use scores.masked_fill(~mask, float('-inf')) rather than adding the mask",
    VALUES_NOT_PROJECTED: "v = self.W_V(x)",
    Q_K_SWAPPED: "q = self.W_Q(x) and k = self.W_K(x); the scores are q @ k^T",
}


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


def _candidates(q, k, v, mask=None, **extra):
    """Known mistakes -> (out, weights) for these inputs."""
    d_k = q.size(-1)
    cands = {
        NO_SCALING: _sdpa_variant(q, k, v, mask, scale=1.0),
        SCALE_BY_D_K: _sdpa_variant(q, k, v, mask, scale=1 / d_k),
        SCALE_MULTIPLIED: _sdpa_variant(q, k, v, mask, scale=math.sqrt(d_k)),
        SOFTMAX_OVER_QUERIES: _sdpa_variant(q, k, v, mask, softmax_dim=-2),
    }
    if mask is not None:
        cands.update({
            MASK_AFTER_SOFTMAX: _sdpa_variant(q, k, v, mask, mask_mode="after"),
            MASK_MULTIPLIED: _sdpa_variant(q, k, v, mask, mask_mode="multiplied"),
            MASK_IGNORED: _sdpa_variant(q, k, v, None),
            MASK_INVERTED: _sdpa_variant(q, k, v, mask, mask_mode="inverted"),
            MASK_ADDED: _sdpa_variant(q, k, v, mask, mask_mode="added"),
        })
    cands.update(extra)
    return cands


def _sizes(seed: int) -> dict[str, int]:
    """All different, so that a mixed-up dimension cannot go unnoticed (B, H, T_q, T_k, d_k, d_v)."""
    if seed == 0:
        return dict(B=2, H=3, T_q=5, T_k=7, d_k=4, d_v=6)
    g = torch.Generator().manual_seed(seed)
    vals = torch.randperm(7, generator=g)[:6] + 2  # six distinct sizes in 2..8
    return dict(zip(("B", "H", "T_q", "T_k", "d_k", "d_v"), (int(x) for x in vals)))


def _random_mask(ctx: Ctx, *shape: int) -> torch.Tensor:
    """A bool mask where every row has at least one True and one False (so inversion cannot hide)."""
    m = torch.rand(*shape, generator=ctx.gen) < 0.6
    T_k = shape[-1]
    keep = torch.randint(0, T_k, shape[:-1], generator=ctx.gen)
    drop = (keep + 1 + torch.randint(0, T_k - 1, shape[:-1], generator=ctx.gen)) % T_k
    m.scatter_(-1, keep[..., None], True)
    m.scatter_(-1, drop[..., None], False)
    return m


def _unpack_pair(ctx: Ctx, result, what: str, out_shape, w_shape, candidates=None):
    """Learner returned (out, weights)? Check both shapes; name a swapped pair."""
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
    out = ctx.tensor(out, f"out returned by {what}", out_shape)
    weights = ctx.tensor(weights, f"weights returned by {what}", w_shape)
    return out, weights


def _check_pair(ctx: Ctx, out, weights, ref_out, ref_w, cands, tried, mask=None):
    """Compare weights first (row sums, masked keys, values), then the output."""
    sums = weights.sum(-1)
    if not bool(((sums - 1).abs() <= 1e-6).all()):
        bad = ((sums - 1).abs() > 1e-6).nonzero()[0].tolist()
        ctx.fail("a row of the attention weights does not sum to 1", tried=tried,
                 expected="each weights row (a query's weights over all keys) sums to 1",
                 got=f"row {bad} sums to {sums[tuple(bad)].item():.4f}",
                 mistake=diagnose(weights, {n: c[1] for n, c in cands.items()}),
                 hint=HINTS[SOFTMAX_OVER_QUERIES] + "; mask before the softmax, not after")
    if mask is not None:
        leak = (weights.abs() > 1e-12) & ~mask.expand_as(weights)
        if bool(leak.any()):
            i = leak.nonzero()[0].tolist()
            ctx.fail("a masked key got attention weight", tried=tried,
                     expected=f"weight 0 where the mask is False (e.g. index {i})",
                     got=f"weight {weights[tuple(i)].item():.4f}",
                     mistake=diagnose(weights, {n: c[1] for n, c in cands.items()}),
                     hint=HINTS[MASK_IGNORED])
    compare(ctx, weights, ref_w, "the attention weights", tried,
            {n: c[1] for n, c in cands.items()}, HINTS)
    compare(ctx, out, ref_out, "the output (weights @ v)", tried,
            {n: c[0] for n, c in cands.items()}, HINTS)


@check
def check_attention_scores(ctx: Ctx, attention_scores) -> str:
    """Check ``attention_scores(q, k) -> q @ k^T / sqrt(d_k)`` on 3-D and 4-D inputs, T_q != T_k."""
    fn = ctx.function(attention_scores, "attention_scores")
    s = _sizes(ctx.seed)
    for lead in ((s["B"],), (s["B"], s["H"])):
        q = ctx.randn(*lead, s["T_q"], s["d_k"])
        k = ctx.randn(*lead, s["T_k"], s["d_k"])
        tried = f"q {fmt_shape(q.shape)}, k {fmt_shape(k.shape)}, float64, seed {ctx.seed}"
        got = ctx.call(fn, q, k, what=f"called with {tried}")
        expected = ref.attention_scores(q, k)
        transposed = isinstance(got, torch.Tensor) and tuple(got.shape) == (*lead, s["T_k"], s["T_q"])
        got = ctx.tensor(got, "the scores", expected.shape, mistake=TRANSPOSED_SCORES if transposed else None,
                         hint=HINTS[TRANSPOSED_SCORES] if transposed else
                         "scores have one row per query and one column per key: (..., T_q, T_k)")
        d_k = s["d_k"]
        raw = q @ k.transpose(-2, -1)
        compare(ctx, got, expected, "the scores", tried,
                {NO_SCALING: raw, SCALE_BY_D_K: raw / d_k, SCALE_MULTIPLIED: raw * math.sqrt(d_k)}, HINTS)
    return f"shape (..., T_q, T_k) and q @ k^T / sqrt(d_k) on 3-D and 4-D inputs with T_q != T_k"


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
    res = ctx.call(fn, q, k, v, what=f"called with {tried}")
    out, weights = _unpack_pair(ctx, res, "scaled_dot_product_attention", out_shape, w_shape)
    _check_pair(ctx, out, weights, *ref.scaled_dot_product_attention(q, k, v), _candidates(q, k, v), tried)

    mask = _random_mask(ctx, s["B"], 1, s["T_q"], s["T_k"])  # broadcast over heads
    tried = f"{shapes}, bool mask {fmt_shape(mask.shape)} (True = may attend)"
    res = ctx.call(fn, q, k, v, mask, what=f"called with {tried}")
    out, weights = _unpack_pair(ctx, res, "scaled_dot_product_attention", out_shape, w_shape)
    _check_pair(ctx, out, weights, *ref.scaled_dot_product_attention(q, k, v, mask),
                _candidates(q, k, v, mask), tried, mask)
    return "out and weights equal the reference, rows sum to 1, masked keys get weight 0"


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
        ctx.fail("the output carries no gradient", tried=tried,
                 hint="don't use torch.no_grad(), .detach(), .item() or numpy inside forward")
    out.sum().backward()
    for name in names:
        grad = getattr(module, name).weight.grad
        if grad is None or not bool((grad != 0).any()):
            ctx.fail(f"no gradient reaches {name}.weight", tried=tried,
                     mistake=VALUES_NOT_PROJECTED if name == "W_V" else None,
                     hint=f"the output must be computed through self.{name}")


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
                 hint="SelfAttention holds exactly W_Q, W_K, W_V = nn.Linear(d_model, d_model); no other parameters")

    x = ctx.randn(B, T, D)
    q, k, v = (getattr(reference, n)(x).detach() for n in names)
    for mask in (None, causal_mask(T)):
        tried = f"x {fmt_shape(x.shape)}, float64, seed {ctx.seed}" + (", causal mask (T, T)" if mask is not None else "")
        res = ctx.call(learner, x, mask, what=f"forward was called with {tried}")
        out, weights = _unpack_pair(ctx, res, "SelfAttention.forward", (B, T, D), (B, T, T))
        cands = _candidates(q, k, v, mask, **{
            VALUES_NOT_PROJECTED: ref.scaled_dot_product_attention(q, k, x, mask),
            Q_K_SWAPPED: ref.scaled_dot_product_attention(k, q, v, mask)})
        with torch.no_grad():
            ref_out, ref_w = reference(x, mask)
        _check_pair(ctx, out.detach(), weights.detach(), ref_out, ref_w, cands, tried, mask)
    check_gradients(ctx, learner, out, names, tried)
    return f"3 (D^2 + D) = {n} parameters; out (B, T, D) and weights (B, T, T) equal the reference with copied weights"
