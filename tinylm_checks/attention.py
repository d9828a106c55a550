"""Stage 01 checks: attention scores, scaled dot-product attention, single-head self-attention.

The attention machinery here (known variants of attention, comparing an (out, weights) pair) is shared
with the multi-head check of stage 02.
"""
from __future__ import annotations

import functools
import itertools
import math

import torch
import torch.nn.functional as F

from ._core import CheckFailure, Ctx, check, close, compare, diagnose, fmt_shape, fmt_values, reference, where
from ._modules import check_gradients, copy_linears, expect_param_count, randomise
from ._text import MISTAKE, hints, say


ref = reference("attention")

__all__ = ["check_attention_scores", "check_scaled_dot_product_attention", "check_self_attention"]

# ---- the mistakes these checks can name, each with the hint a learner reads when it is named


SCORE_AXES = {3: ("batch", "query", "key"), 4: ("batch", "head", "query", "key")}
OUT_AXES = {3: ("batch", "query", "feature"), 4: ("batch", "head", "query", "feature")}
SOFTMAX_AXIS_MISTAKE = {"batch": MISTAKE.softmax_over_batch, "head": MISTAKE.softmax_over_heads, "query": MISTAKE.softmax_over_queries}
LARGE = 1000.0  # q and k times LARGE: scores in the millions, beyond any finite fill value a learner might pick


def _softmax(scores, mask, mode="fill", dim=-1):
    """The masked softmax, done right (``mode="fill"``) or in one of the known wrong ways."""
    if mask is None or mode == "ignored":
        return torch.softmax(scores, dim=dim)
    if mode == "after":
        return torch.softmax(scores, dim=dim).masked_fill(~mask, 0.0)
    if mode in ("renormalised", "renormalised_eps"):  # zero the masked weights after the softmax, divide by the new sum
        w = torch.softmax(scores, dim=dim).masked_fill(~mask, 0.0)
        if mode == "renormalised_eps":  # ... kept from 0 / 0 by a small floor: a sum that underflowed stays about 0
            return w / w.sum(dim=-1, keepdim=True).clamp_min(1e-12)
        return (w / w.sum(dim=-1, keepdim=True)).nan_to_num(0.0)
    filled = {"fill": lambda: scores.masked_fill(~mask, float("-inf")),
              "inverted": lambda: scores.masked_fill(mask, float("-inf")),
              "transposed": lambda: scores.masked_fill(~mask.transpose(-2, -1), float("-inf")),
              "multiplied": lambda: scores * mask,
              "added": lambda: scores + mask,
              "finite": lambda: scores.masked_fill(~mask, -1e9),
              "weak": lambda: scores.masked_fill(~mask, -1e4)}[mode]()
    weights = torch.softmax(filled, dim=dim).nan_to_num(0.0)
    return weights.masked_fill(~mask.any(-1, keepdim=True), 0.0) if mode == "weak" else weights


def _broadcasts(a: torch.Tensor, shape) -> bool:
    """Whether ``a`` broadcasts with ``shape`` (NumPy's rule: aligned from the right, each pair of sizes equal or one
    of them 1). Written out: ``torch.broadcast_shapes`` imports SymPy on its first call, 0.7 s of a learner's first
    check."""
    return all(x == y or 1 in (x, y) for x, y in zip(reversed(a.shape), reversed(tuple(shape))))


def weight_variants(scores, mask):
    """Known ways of turning (masked) scores into wrong weights: a list of (mistake, weights)."""
    axes = SCORE_AXES.get(scores.dim(), ("batch",) * (scores.dim() - 2) + ("query", "key"))
    cands = [(SOFTMAX_AXIS_MISTAKE[axis], _softmax(scores, mask, dim=dim)) for dim, axis in enumerate(axes[:-1])]
    if mask is None:
        cands.append((MISTAKE.weights_are_scores, scores))
    if mask is not None:
        cands += [(MISTAKE.mask_renormalised_after_softmax, _softmax(scores, mask, "renormalised")),
                  # before mask_after_softmax, which gives the same weights once every allowed weight underflowed
                  (MISTAKE.mask_renormalised_after_softmax, _softmax(scores, mask, "renormalised_eps")),
                  (MISTAKE.mask_after_softmax, _softmax(scores, mask, "after")), (MISTAKE.mask_multiplied, _softmax(scores, mask, "multiplied")),
                  (MISTAKE.mask_ignored, _softmax(scores, mask, "ignored")), (MISTAKE.mask_inverted, _softmax(scores, mask, "inverted")),
                  (MISTAKE.mask_added, _softmax(scores, mask, "added")), (MISTAKE.finite_fill, _softmax(scores, mask, "finite")),
                  (MISTAKE.fill_too_weak, _softmax(scores, mask, "weak"))]
        if _broadcasts(mask.transpose(-2, -1), scores.shape):
            cands.append((MISTAKE.mask_transposed, _softmax(scores, mask, "transposed")))
    return cands


def _sdpa_variant(q, k, v, mask=None, *, scale=None, softmax_dim=-1):
    """The reference attention, with another scale or softmax axis (used to name a learner's mistake)."""
    scale = 1 / math.sqrt(q.size(-1)) if scale is None else scale
    weights = _softmax(q @ k.transpose(-2, -1) * scale, mask, dim=softmax_dim)
    return weights @ v, weights


def _candidates(q, k, v, mask=None, extra=()):
    """Known mistakes for these inputs: a list of (name, (out, weights)); out may be None."""
    d_k, T_q, T_k = q.size(-1), q.size(-2), k.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    variant = functools.partial(_sdpa_variant, q, k, v, mask)
    cands = [
        (MISTAKE.no_scaling, variant(scale=1.0)),
        (MISTAKE.scale_by_d_k, variant(scale=1 / d_k)),
        (MISTAKE.scale_multiplied, variant(scale=math.sqrt(d_k))),
        (MISTAKE.sqrt_precedence, variant(scale=2 / d_k)),  # / (d_k ** 1/2)
        (MISTAKE.sqrt_precedence, variant(scale=1 / (2 * d_k))),  # / d_k ** 1/2
        (MISTAKE.int_sqrt, variant(scale=1 / int(math.sqrt(d_k)))),
        (MISTAKE.d_k_from_wrong_dim, variant(scale=1 / math.sqrt(T_q))),
        (MISTAKE.d_k_from_wrong_dim, variant(scale=1 / math.sqrt(T_k))),
        (MISTAKE.d_k_from_wrong_dim, variant(scale=1 / math.sqrt(v.size(-1)))),
        (MISTAKE.weights_are_scores, (None, scores)),
    ] + [(name, (w @ v, w)) for name, w in weight_variants(scores, mask)]
    if mask is None and T_q == T_k:
        cands.append((MISTAKE.always_causal, _sdpa_variant(q, k, v, torch.ones(T_q, T_k, dtype=torch.bool).tril())))
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


def padding_mask(lengths, T: int, heads: bool) -> torch.Tensor:
    """A right-padding key mask, (B, 1, 1, T) with a head axis or (B, 1, T) without."""
    m = torch.arange(T)[None, :] < torch.as_tensor(lengths)[:, None]  # (B, T)
    return m[:, None, None, :] if heads else m[:, None, :]


def _unpack_pair(ctx: Ctx, result, what: str, out_shape, w_shape, mask=None, tried=None,
                 returns="return weights @ v, weights"):  # code
    """Learner returned (out, weights)? Check both shapes; name a swapped pair or an inverted mask's NaN.
    ``returns`` is the code of the exercise's last line (for hints)."""
    end_with = say("attention.pair.end_with", returns=returns)
    if isinstance(result, torch.Tensor) and tuple(result.shape) == tuple(out_shape):
        ctx.fail("attention.pair.one_tensor", what=what, shape=fmt_shape(result.shape),
                 expected=say("attention.pair.a_pair"), mistake=MISTAKE.weights_not_returned, mistake_hint=end_with)
    if result is None:
        ctx.fail("attention.pair.none", what=what, expected=say("attention.pair.a_pair"), mistake=MISTAKE.missing_return,
                 mistake_hint=end_with)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        ctx.fail("attention.pair.not_a_pair", what=what, hint=end_with,
                 got=say("attention.pair.of_length", kind=type(result).__name__, n=len(result))
                 if isinstance(result, (tuple, list)) else type(result).__name__)
    out, weights = result
    if (isinstance(out, torch.Tensor) and isinstance(weights, torch.Tensor)
            and tuple(out.shape) == tuple(w_shape) and tuple(weights.shape) == tuple(out_shape)
            and tuple(out_shape) != tuple(w_shape)):
        ctx.fail("attention.pair.swapped", what=what, out_shape=fmt_shape(out_shape), w_shape=fmt_shape(w_shape),
                 got=f"({fmt_shape(out.shape)}, {fmt_shape(weights.shape)})", mistake=MISTAKE.swapped_outputs)
    if mask is not None and isinstance(weights, torch.Tensor) and tuple(weights.shape) == tuple(w_shape):
        nan_rows = torch.isnan(weights).any(-1)
        full_rows = mask.expand(w_shape).all(-1)
        if bool(nan_rows.any()) and bool((nan_rows == full_rows).all()):
            ctx.fail("attention.pair.nan_where_all_allowed", tried=tried, mistake=MISTAKE.mask_inverted)
    if mask is not None and isinstance(weights, torch.Tensor) and tuple(weights.shape) == tuple(w_shape):
        nan_rows = torch.isnan(weights).any(-1)
        empty_rows = ~mask.expand(w_shape).any(-1)
        if bool(nan_rows.any()) and bool((nan_rows == empty_rows).all()):
            i = empty_rows.nonzero()[0].tolist()
            ctx.fail("attention.pair.nan_where_none_allowed", tried=tried, at=where(i, SCORE_AXES.get(len(w_shape))),
                     mistake=MISTAKE.nan_fully_masked_row)
    if isinstance(weights, torch.Tensor) and tuple(weights.shape) == tuple(w_shape) and len(w_shape) in SCORE_AXES \
            and bool(torch.isnan(weights).any()):
        bad = torch.isnan(weights).nonzero()[0].tolist()
        ctx.fail("attention.pair.nan", tried=tried, at=where(bad, SCORE_AXES[len(w_shape)]))
    out = ctx.tensor(out, say("attention.pair.out_returned_by", what=what), out_shape, tried=tried)
    weights = ctx.tensor(weights, say("attention.pair.weights_returned_by", what=what), w_shape, tried=tried)
    return out, weights


def check_weights(ctx: Ctx, weights, ref_w, w_cands, tried, mask=None, large=False, fallback=None):
    """Compare attention weights with the reference's: masked keys first, then rows with no allowed key,
    dropout, row sums, values. ``w_cands`` are (mistake, weights) pairs; ``large`` says the scores are
    large (a masked key that gets weight then shows a fill value that is too weak); ``fallback`` is the hint
    for weights that are wrong in no known way (by default: look at the scores)."""
    fallback = fallback or say("attention.weights.fallback")
    w_axes = SCORE_AXES.get(weights.dim())
    if mask is not None:
        allowed = mask.expand_as(weights)
        full = ~allowed.any(-1)  # queries that may attend to no key: checked below
        leak = (weights.abs() > 1e-12) & ~allowed & ~full[..., None]
        if bool(leak.any()):
            i = leak.nonzero()[0].tolist()
            inverted = bool((weights.masked_select(allowed).abs() <= 1e-12).all())
            ctx.fail("attention.weights.masked_key", tried=tried, at=where(i, w_axes), weight=weights[tuple(i)].item(),
                     when=say("attention.weights.when_large") if large else "",
                     inverted=say("attention.weights.allowed_got_zero") if inverted else "",
                     # with large scores (tried last, after small ones passed) only a scale-dependent mistake is
                     # left that lets masked keys through: a finite fill value that real scores outweigh
                     mistake=MISTAKE.fill_too_weak if large else diagnose(weights, w_cands) or (MISTAKE.mask_inverted if inverted else None))
        if bool(full.any()):
            rows = weights[full]
            if not bool((rows == 0).all()):
                i = full.nonzero()[0].tolist()
                uniform = bool(((rows - 1 / weights.size(-1)).abs() <= 1e-9).all())
                ctx.fail("attention.weights.no_key_allowed", tried=tried, at=where(i, w_axes),
                         values=fmt_values(weights[tuple(i)]),
                         uniform=say("attention.weights.uniform") if uniform else "",
                         mistake=MISTAKE.finite_fill if uniform else diagnose(weights, w_cands))
    dropped = (weights == 0) & (ref_w > 1e-12)
    if bool(dropped.any()) and bool((weights != 0).any()):
        ratio = weights[weights != 0] / ref_w[weights != 0]
        if float(ratio.min()) > 1 + 1e-6 and float(ratio.max() - ratio.min()) <= 1e-6:
            ctx.fail("attention.weights.dropout", tried=tried, n=int(dropped.sum()), ratio=float(ratio.mean()),
                     mistake=MISTAKE.dropout_on_weights)
    sums = weights.sum(-1)
    expected_sums = (ref_w.sum(-1) > 0.5).to(sums.dtype)  # 1, or 0 for a query with no allowed key
    if not bool(((sums - expected_sums).abs() <= 1e-6).all()):
        bad = ((sums - expected_sums).abs() > 1e-6).nonzero()[0].tolist()
        ctx.fail("attention.weights.row_sum", tried=tried, at=where(bad, w_axes), total=sums[tuple(bad)].item(),
                 # large scores come last: a softmax that passed with small scores and loses its rows here
                 # is not shift-invariant, i.e. exp() of the raw scores
                 mistake=diagnose(weights, w_cands) or (MISTAKE.softmax_unstable if large else None),
                 hint=say("attention.weights.row_sum_hint_mask" if mask is not None else "attention.weights.row_sum_hint"))
    compare(ctx, weights, ref_w, say("attention.weights.what"), tried, w_cands, axes=w_axes,
            fallback=say("attention.weights.fallback_mask", fallback=fallback) if mask is not None else fallback)


def _check_pair(ctx: Ctx, out, weights, ref_out, ref_w, cands, tried, mask=None, large=False,
                out_what=None, after_weights=None):
    """Compare weights first (:func:`check_weights`), then the output (``out_what``: by default "the output
    (weights @ v)").

    ``after_weights`` says, for this exercise, what turns right weights into the output: the place to
    look when the weights are right and the output is not (by default the last step, out = weights @ v).
    """
    check_weights(ctx, weights, ref_w, [(n, w) for n, (_, w) in cands if w is not None], tried, mask, large)
    compare(ctx, out, ref_out, out_what or say("attention.out.what"), tried,
            [(n, o) for n, (o, _) in cands if o is not None], axes=OUT_AXES.get(out.dim()),
            fallback=say("attention.out.fallback", after_weights=after_weights or say("attention.out.after_weights")))


@check
def check_attention_scores(ctx: Ctx, attention_scores) -> str:
    """Check ``attention_scores(q, k) -> q @ k^T / sqrt(d_k)`` on 3-D, then 4-D inputs, T_q != T_k."""
    fn = ctx.function(attention_scores, "attention_scores")
    s = _sizes(ctx.seed)
    for lead, size in (((s["B"],), 1.0), ((s["B"], s["H"]), 1.0), ((s["B"],), 8.0)):  # 8.0: scores in the tens
        q = ctx.randn(*lead, s["T_q"], s["d_k"]) * size
        k = ctx.randn(*lead, s["T_k"], s["d_k"]) * size
        tried = say("attention_scores.tried", q=fmt_shape(q.shape), k=fmt_shape(k.shape), seed=ctx.seed)
        try:
            got = ctx.call(fn, q, k, what=say("core.called_with", tried=tried), names=("q", "k"),
                           mistake_if_raises=MISTAKE.hard_coded_axes if len(lead) == 2 else None)  # 3-D worked before
        except CheckFailure as failure:
            sq, sk = ctx.randn(*lead, s["d_k"], s["d_k"]), ctx.randn(*lead, s["d_k"], s["d_k"])  # T_q = T_k = d_k
            raise keys_not_transposed(ctx, failure, lambda: fn(sq.clone(), sk.clone()),
                                      sq @ sk / math.sqrt(s["d_k"])) from None
        expected = ref.attention_scores(q, k)
        transposed = isinstance(got, torch.Tensor) and tuple(got.shape) == (*lead, s["T_k"], s["T_q"])
        got = ctx.tensor(got, say("attention_scores.what"), expected.shape, tried=tried,
                         mistake=MISTAKE.transposed_scores if transposed else None, hint=say("attention_scores.shape_hint"))
        d_k = s["d_k"]
        raw = q @ k.transpose(-2, -1)
        compare(ctx, got, expected, say("attention_scores.what"), tried,
                [(MISTAKE.no_scaling, raw), (MISTAKE.scale_by_d_k, raw / d_k), (MISTAKE.scale_multiplied, raw * math.sqrt(d_k)),
                 (MISTAKE.sqrt_precedence, raw * 2 / d_k), (MISTAKE.sqrt_precedence, raw / (2 * d_k)), (MISTAKE.int_sqrt, raw / int(math.sqrt(d_k))),
                 (MISTAKE.d_k_from_wrong_dim, raw / math.sqrt(s["T_q"])), (MISTAKE.d_k_from_wrong_dim, raw / math.sqrt(s["T_k"]))],
                axes=SCORE_AXES[q.dim()], fallback=say("attention_scores.fallback"))
    ctx.differentiable(fn, q, k, what=say("core.called_with", tried=tried), names=("q", "k"))
    ctx.dtype_follows(fn, q, k, what=say("core.called_with", tried=tried), names=("q", "k"))
    return say("attention_scores.passed")


@check
def check_scaled_dot_product_attention(ctx: Ctx, scaled_dot_product_attention) -> str:
    """Check ``(out, weights)`` on 3-D then 4-D inputs without a mask, then with masks: a padding mask, a
    random mask, a query with no allowed key, and large scores."""
    fn = ctx.function(scaled_dot_product_attention, "scaled_dot_product_attention")
    s = _sizes(ctx.seed)
    B, H, T_q, T_k, d_k, d_v = (s[n] for n in ("B", "H", "T_q", "T_k", "d_k", "d_v"))

    def run(q, k, v, mask, label, mistake_if_raises=None, large=False):
        tried = say("sdpa.tried", q=fmt_shape(q.shape), k=fmt_shape(k.shape), v=fmt_shape(v.shape), seed=ctx.seed,
                    label=label)
        args = (q, k, v) if mask is None else (q, k, v, mask)
        res = ctx.call(fn, *args, what=say("core.called_with", tried=tried), names=("q", "k", "v", "mask"),
                       mistake_if_raises=mistake_if_raises)
        lead = q.shape[:-2]
        out, weights = _unpack_pair(ctx, res, "scaled_dot_product_attention", (*lead, q.size(-2), v.size(-1)),
                                    (*lead, q.size(-2), k.size(-2)), mask, tried)
        _check_pair(ctx, out, weights, *ref.scaled_dot_product_attention(q, k, v, mask),
                    _candidates(q, k, v, mask), tried, mask, large=large)
        return tried

    q3, k3, v3 = ctx.randn(B, T_q, d_k), ctx.randn(B, T_k, d_k), ctx.randn(B, T_k, d_v)
    run(q3, k3, v3, None, say("sdpa.no_mask"))
    q, k, v = ctx.randn(B, H, T_q, d_k), ctx.randn(B, H, T_k, d_k), ctx.randn(B, H, T_k, d_v)
    tried = run(q, k, v, None, say("sdpa.no_mask"), mistake_if_raises=MISTAKE.hard_coded_axes)  # the same code worked on 3-D
    ctx.differentiable(fn, q, k, v, what=say("core.called_with", tried=tried), names=("q", "k", "v"))
    ctx.dtype_follows(fn, q, k, v, what=say("core.called_with", tried=tried), names=("q", "k", "v"))

    # self-attention shapes (T_q = T_k) with a key-padding mask: a mask used on the wrong axis shows here
    lengths = ([T_k - 2, T_k, 1, T_k - 1] + [T_k] * B)[:B]
    pad = padding_mask(lengths, T_k, heads=True)  # (B, 1, 1, T_k)
    run(ctx.randn(B, H, T_k, d_k), k, v, pad, say("sdpa.padding", shape=fmt_shape(pad.shape)),
        mistake_if_raises=MISTAKE.mask_reshaped)  # the same code worked without a mask
    mask = _random_mask(ctx, B, 1, T_q, T_k)  # broadcast over heads
    run(q, k, v, mask, say("sdpa.random_mask", shape=fmt_shape(mask.shape)), mistake_if_raises=MISTAKE.mask_reshaped)
    mask[0, 0, 0] = False  # batch 0, query 0: every key masked (as padding can do)
    run(q, k, v, mask, say("sdpa.empty_row", shape=fmt_shape(mask.shape)))
    # every score large and negative: a finite fill value (-1e4, -1e9 / scale...) is then above every real score
    run((q.abs() + 1) * LARGE, -(k.abs() + 1) * LARGE, v, mask,
        say("sdpa.large", large=LARGE, shape=fmt_shape(mask.shape)), large=True)
    return say("sdpa.passed")


def keys_not_transposed(ctx: Ctx, failure: CheckFailure, again, untransposed: torch.Tensor) -> CheckFailure:
    """The kind "a batched matmul with the keys not transposed" (``q @ k`` where ``q @ k.transpose(-2, -1)`` was
    meant): it raises whenever the keys' length differs from their width, which hides what it is. ``failure`` is what
    the learner's code raised; ``again()`` runs the same code where the keys are square (length = width), and
    ``untransposed`` is what ``q @ k`` gives there. The failure comes back renamed when they agree, else as it was."""
    try:
        got = again()
    except Exception:  # noqa: BLE001 - learner code; the first failure is the one reported
        return failure
    if isinstance(got, torch.Tensor) and close(got.detach(), untransposed):
        return ctx.renamed(failure, mistake=MISTAKE.keys_not_transposed)
    return failure


def projection_mixups(x, layers, attend):
    """Outputs of attention whose q, k, v come from the wrong layers, as (name, (out, weights)) pairs.

    ``layers`` maps "W_Q", "W_K", "W_V" to the reference's layers; ``attend(q, k, v)`` runs the rest of
    the module. Covers a reused layer (k = W_Q(x)), swapped queries and keys, x used as the values, and a
    layer's weight used transposed (x @ W.weight).
    """
    proj = {n: layers[n](x) for n in ("W_Q", "W_K", "W_V")}
    cands = [(MISTAKE.values_not_projected, attend(proj["W_Q"], proj["W_K"], x)),
             (MISTAKE.q_k_swapped, attend(proj["W_K"], proj["W_Q"], proj["W_V"]))]
    for n in proj:  # x @ W.weight (+ bias): the kind "a weight used transposed", one layer at a time
        wrong = {**proj, n: F.linear(x, layers[n].weight.T, layers[n].bias)}
        cands.append((MISTAKE.weight_transposed, attend(wrong["W_Q"], wrong["W_K"], wrong["W_V"])))
    for combo in itertools.product(proj, repeat=3):
        if len(set(combo)) < 3:  # one layer used twice
            cands.append((MISTAKE.projection_reused, attend(*(proj[n] for n in combo))))
    return cands


@check
def check_self_attention(ctx: Ctx, SelfAttention) -> str:
    """Check ``SelfAttention(d_model)``: W_Q, W_K, W_V sizes, 3(D^2+D) parameters, output with copied weights."""
    ctx.hints = hints("attention.module_hints")
    cls = ctx.module_class(SelfAttention, "SelfAttention")
    B, T, D = (3, 5, 8) if ctx.seed == 0 else (2 + ctx.seed % 3, 4 + ctx.seed % 3, 10)
    learner = ctx.build(cls, D, what=say("self_attention.created", D=D))
    reference = ref.SelfAttention(D).double()
    randomise(ctx, reference)
    names = ("W_Q", "W_K", "W_V")
    copy_linears(ctx, learner, reference, names, D, D)
    n = expect_param_count(ctx, learner, 3 * (D * D + D), "self_attention.param_count", D=D,
                           mistakes={D * D + D: MISTAKE.shared_projection, 4 * (D * D + D): MISTAKE.extra_output_projection}.get)

    x = ctx.randn(B, T, D)
    lengths = torch.tensor([T, T - 2, 1] * B)[:B]
    for mask, label in ((None, say("self_attention.no_mask")), (ref.causal_mask(T), say("self_attention.causal")),
                        (padding_mask(lengths, T, heads=False), say("self_attention.padding"))):
        tried = say("self_attention.tried", shape=fmt_shape(x.shape), seed=ctx.seed, label=label)
        res = ctx.call(learner, x, mask, what=say("core.forward_called", tried=tried), names=("x", "mask"),
                       mistake_if_raises=MISTAKE.mask_reshaped if mask is not None else None)
        out, weights = _unpack_pair(ctx, res, "SelfAttention.forward", (B, T, D), (B, T, T), mask, tried,
                                    returns="return scaled_dot_product_attention(q, k, v, mask)")  # code
        with torch.no_grad():
            layers = {n_: getattr(reference, n_) for n_ in names}
            cands = _candidates(*(layers[n_](x) for n_ in names), mask,
                                extra=projection_mixups(x, layers, lambda q, k, v: ref.scaled_dot_product_attention(q, k, v, mask)))
            ref_out, ref_w = reference(x, mask)
        _check_pair(ctx, out.detach(), weights.detach(), ref_out, ref_w, cands, tried, mask,
                    after_weights=say("self_attention.after_weights"))
    check_gradients(ctx, learner, out, names, tried)
    return say("self_attention.passed", n=n)
