"""Stage 02 checks: splitting and merging heads, multi-head self-attention."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ._core import CheckFailure, Ctx, check, compare, fmt_shape, reference, within
from ._modules import check_gradients, copy_linears, expect_param_count, randomise
from ._text import MISTAKE, hints, say
from .attention import _candidates, _check_pair, _unpack_pair, padding_mask, projection_mixups

ref = reference("multihead")
ref_attention = reference("attention")

__all__ = ["check_split_heads", "check_merge_heads", "check_multi_head_attention"]


def _split_candidates(x, H):
    B, T, D = x.shape
    d_k = D // H
    return [(MISTAKE.split_without_transpose, x.reshape(B, H, T, d_k)),
            (MISTAKE.split_interleaved, x.reshape(B, T, d_k, H).permute(0, 3, 1, 2))] + [
        (MISTAKE.heads_repeated, x[..., j * d_k:(j + 1) * d_k].unsqueeze(1).repeat(1, H, 1, 1)) for j in range(H)]


def _sizes(seed: int) -> tuple[int, int, int, int]:
    """(B, T, H, d_k), all different and none equal to D = H * d_k."""
    if seed == 0:
        return 2, 5, 3, 6
    return (3, 7, 4, 5) if seed % 2 else (4, 7, 2, 6)  # d_k never a square, D = H * d_k differs from all


HEAD_AXES = ("batch", "head", "position", "feature")
MERGED_AXES = ("batch", "position", "feature")


@check
def check_split_heads(ctx: Ctx, split_heads) -> str:
    """Check ``split_heads(x (B, T, D), num_heads) -> (B, H, T, d_k)`` against the reference."""
    fn = ctx.function(split_heads, "split_heads")
    B, T, H, d_k = _sizes(ctx.seed)
    x = ctx.randn(B, T, H * d_k)
    tried = say("split_heads.tried", shape=fmt_shape(x.shape), H=H, seed=ctx.seed)
    what = say("core.called_with", tried=tried)
    got = ctx.call(fn, x, H, what=what, names=("x",))
    not_transposed = isinstance(got, torch.Tensor) and tuple(got.shape) == (B, T, H, d_k)
    got = ctx.tensor(got, say("split_heads.what"), (B, H, T, d_k), tried=tried,
                     mistake=MISTAKE.split_not_transposed if not_transposed else None, hint=say("split_heads.shape_hint"))
    compare(ctx, got, ref.split_heads(x, H), say("split_heads.what"), tried, _split_candidates(x, H), axes=HEAD_AXES,
            fallback=say("split_heads.fallback"))
    ctx.differentiable(fn, x, H, what=what, names=("x",))
    ctx.dtype_follows(fn, x, H, what=what, names=("x",))
    return say("split_heads.passed")


@check
def check_merge_heads(ctx: Ctx, merge_heads) -> str:
    """Check ``merge_heads(x (B, H, T, d_k)) -> (B, T, H*d_k)`` and that it undoes the reference split."""
    fn = ctx.function(merge_heads, "merge_heads")
    B, T, H, d_k = _sizes(ctx.seed)
    x = ctx.randn(B, T, H * d_k)
    heads = ref.split_heads(x, H)  # (B, H, T, d_k), not contiguous: as it is inside attention
    fallback = say("merge_heads.fallback")
    tried = say("merge_heads.tried_split", shape=fmt_shape(heads.shape), seed=ctx.seed)
    got = ctx.call(fn, heads, what=say("core.called_with", tried=tried), names=("x",))
    got = ctx.tensor(got, say("merge_heads.what"), (B, T, H * d_k), hint=say("merge_heads.shape_hint"), tried=tried)
    compare(ctx, got, x, say("merge_heads.round_trip"), tried,
            {MISTAKE.merge_without_transpose: heads.reshape(B, T, H * d_k),
             MISTAKE.merge_interleaved: heads.permute(0, 2, 3, 1).reshape(B, T, H * d_k)}, axes=MERGED_AXES, fallback=fallback)
    fresh = ctx.randn(B, H, T, d_k)  # contiguous, like the output of weights @ v
    tried = say("merge_heads.tried_fresh", shape=fmt_shape(fresh.shape), seed=ctx.seed)
    what = say("core.called_with", tried=tried)
    got = ctx.tensor(ctx.call(fn, fresh, what=what, names=("x",)), say("merge_heads.what"), (B, T, H * d_k),
                     tried=tried)
    compare(ctx, got, ref.merge_heads(fresh), say("merge_heads.what"), tried,
            {MISTAKE.merge_without_transpose: fresh.reshape(B, T, H * d_k)}, axes=MERGED_AXES, fallback=fallback)
    ctx.differentiable(fn, fresh, what=what, names=("x",))
    ctx.dtype_follows(fn, fresh, what=what, names=("x",))
    return say("merge_heads.passed")


def heads_repeated(x, layers, H: int, attend) -> list:
    """The kind "every head reads the same features" (heads made with repeat or expand of one d_k slice, where a
    view splits the features): for each slice j, the output when every head reads slice j of q, k and v, as
    (MISTAKE.heads_repeated, output) pairs. ``attend(q, k, v)`` runs the rest of the module on (B, T, D) tensors."""
    proj = [layers[n](x) for n in ("W_Q", "W_K", "W_V")]
    d_k = x.size(-1) // H
    return [(MISTAKE.heads_repeated, attend(*(t[..., j * d_k:(j + 1) * d_k].repeat(1, 1, H) for t in proj)))
            for j in range(H)]


def expect_divisibility_error(ctx: Ctx, cls, name: str, D: int, H: int) -> None:
    """``cls(D + 1, H)`` must raise ValueError (``d_model`` not divisible by ``num_heads``): fail otherwise, naming
    ``no_divisibility_check``. Shared by the multi-head modules' checks (``name`` is the class as the learner names it)."""
    bad = (D + 1, H)
    tried = f"{name}(d_model={bad[0]}, num_heads={bad[1]})"
    try:
        cls(*bad)
    except ValueError:
        return
    except Exception as e:  # noqa: BLE001 - learner code may raise anything
        ctx.fail("heads.wrong_error", cls=name, bad=bad, error=type(e).__name__, tried=tried,
                 got=f"{type(e).__name__}: {e}", mistake=MISTAKE.no_divisibility_check)
    ctx.fail("heads.no_error", cls=name, bad=bad, tried=tried, mistake=MISTAKE.no_divisibility_check)


def head_variants(q, k, v, H: int, mask=None) -> list:
    """The head and scale mistakes of multi-head attention: one table for stage 02's MultiHeadSelfAttention and the
    fused CausalSelfAttention of stage 07.

    From the projections ``q, k, v`` (B, T, D) and the mask the module applies (None, or one that broadcasts to
    (B, H, T, T), True = may attend), a list of (mistake, (merged, weights)): the heads merged back to (B, T, D),
    before the output projection, and the weights (B, H, T, T). The scale by sqrt(d_model) or by d_model, the
    softmax over the heads, a causal mask that also hides the diagonal, and heads split without the transpose or as
    (d_k, H), each merged back in the three ways a learner writes. Nothing is cleaned up: a variant that gives NaN
    keeps it, so that a learner's NaN can be named too (:func:`nan_named`)."""
    B, T, D = q.shape
    d = D // H
    right = lambda t: t.reshape(B, T, H, d).transpose(1, 2)  # noqa: E731 - (B, T, D) -> (B, H, T, d)
    splits = {MISTAKE.split_without_transpose: lambda t: t.reshape(B, H, T, d),
              MISTAKE.split_interleaved: lambda t: t.reshape(B, T, d, H).permute(0, 3, 1, 2)}
    merges = (lambda y: y.transpose(1, 2).reshape(B, T, D), lambda y: y.reshape(B, T, D),
              lambda y: y.permute(0, 2, 3, 1).reshape(B, T, D))  # right, no transpose, interleaved

    def attend(split=right, scale=d ** -0.5, dim=-1, m=mask, merge=merges[0], clean=False):
        qh, kh, vh = split(q), split(k), split(v)
        scores = qh @ kh.transpose(-2, -1) * scale
        weights = torch.softmax(scores if m is None else scores.masked_fill(~m, float("-inf")), dim=dim)
        weights = weights.nan_to_num(0.0) if clean else weights  # a softmax over -inf only, guarded
        return merge(weights @ vh), weights

    below = torch.ones(T, T, dtype=torch.bool).tril(-1)  # triu(diagonal=0) masked: the diagonal hidden too
    return [(MISTAKE.scale_by_sqrt_d_model, attend(scale=D ** -0.5)), (MISTAKE.scale_by_d_model, attend(scale=1 / D)),
            (MISTAKE.softmax_over_heads, attend(dim=1)),
            (MISTAKE.causal_mask_hides_diagonal, attend(m=below if mask is None else below & mask)),
            (MISTAKE.causal_mask_hides_diagonal, attend(m=below if mask is None else below & mask, clean=True))] + [
        (name, attend(split=split, merge=merge)) for name, split in splits.items() for merge in merges]


def nan_named(ctx: Ctx, failure: CheckFailure, got, candidates) -> CheckFailure:
    """``failure`` (NaN in what the learner returned, ``got``) renamed when a known mistake gives the same values
    wherever ``got`` has none, and NaN where it has NaN, or the zeros that mistake's cleaned-up form gives there (a
    softmax over -inf only, with nan_to_num); else ``failure`` as it was. ``candidates``: (mistake, tensor) pairs."""
    if failure.mistake is not None or not isinstance(got, torch.Tensor) or not bool(torch.isnan(got).any()):
        return failure
    got = got.detach()
    nan = got.isnan()
    for name, c in candidates:
        if c is not None and c.shape == got.shape and bool((c.isnan() | (c == 0))[nan].all()) \
                and not bool(c.isnan()[~nan].any()) and within(got.nan_to_num(0.0), c.nan_to_num(0.0).masked_fill(nan, 0.0)):
            return ctx.renamed(failure, mistake=name)
    return failure


def _mha_candidates(reference, x, H, mask):
    """Known multi-head mistakes: a list of (name, (out, weights)), with the reference's own weights."""
    B, T, D = x.shape
    q, k, v = (ref.split_heads(getattr(reference, n)(x), H) for n in ("W_Q", "W_K", "W_V"))
    W_O = reference.W_O
    project = lambda o: None if o is None else W_O(ref.merge_heads(o))  # noqa: E731
    out, w = ref_attention.scaled_dot_product_attention(q, k, v, mask)

    def attend(q_, k_, v_):  # the rest of the module, after the projections
        o, w_ = ref_attention.scaled_dot_product_attention(ref.split_heads(q_, H), ref.split_heads(k_, H),
                                                 ref.split_heads(v_, H), mask)
        return W_O(ref.merge_heads(o)), w_

    layers = {n: getattr(reference, n) for n in ("W_Q", "W_K", "W_V")}
    heads = head_variants(*(getattr(reference, n)(x) for n in ("W_Q", "W_K", "W_V")), H, mask)
    cands = [(n, (project(o), w_)) for n, (o, w_) in _candidates(q, k, v, mask)] + [
        (n, (W_O(o), w_)) for n, (o, w_) in heads] + [
        (MISTAKE.merge_without_transpose, (W_O(out.reshape(B, T, D)), w)),
        (MISTAKE.w_o_not_applied, (ref.merge_heads(out), w)),
        (MISTAKE.weight_transposed, (F.linear(ref.merge_heads(out), W_O.weight.T, W_O.bias), w)),
    ] + heads_repeated(x, layers, H, attend) + projection_mixups(x, layers, attend)
    return [(n, (None if o is None else o.detach(), w_.detach())) for n, (o, w_) in cands]


@check
def check_multi_head_attention(ctx: Ctx, MultiHeadSelfAttention) -> str:
    """Check ``MultiHeadSelfAttention(d_model, num_heads)``: ValueError when D % H != 0, W_Q/W_K/W_V/W_O,
    4(D^2+D) parameters, out (B, T, D) and weights (B, H, T, T) equal to the reference with copied
    weights, without a mask, with a causal mask and with a key-padding mask, and gradients reaching
    every projection."""
    ctx.hints = {**hints("attention.module_hints"), **hints("multi_head_attention.hints")}
    cls = ctx.module_class(MultiHeadSelfAttention, "MultiHeadSelfAttention")
    B, T, H, d_k = _sizes(ctx.seed)
    D = H * d_k

    learner = ctx.build(cls, D, H, what=say("multi_head_attention.created", D=D, H=H))
    expect_divisibility_error(ctx, cls, "MultiHeadSelfAttention", D, H)

    reference = ref.MultiHeadSelfAttention(D, H).double()
    randomise(ctx, reference)
    names = ("W_Q", "W_K", "W_V", "W_O")
    copy_linears(ctx, learner, reference, names, D, D)
    full = 4 * (D * D + D)
    n = expect_param_count(ctx, learner, full, "multi_head_attention.param_count", D=D,
                           mistakes=lambda n: MISTAKE.shared_projection if n < full and n % (D * D + D) == 0 else None)

    x = ctx.randn(B, T, D)
    for mask, label in ((None, say("multi_head_attention.no_mask")),
                        (ref_attention.causal_mask(T), say("multi_head_attention.causal")),
                        (padding_mask(torch.tensor([T, T - 2, 1] * B)[:B], T, heads=True),
                         say("multi_head_attention.padding"))):
        tried = say("multi_head_attention.tried", D=D, H=H, shape=fmt_shape(x.shape), seed=ctx.seed, label=label)
        res = ctx.call(learner, x, mask, what=say("core.forward_called", tried=tried), names=("x", "mask"),
                       mistake_if_raises=MISTAKE.mask_reshaped if mask is not None else None)
        if isinstance(res, (tuple, list)) and len(res) == 2 and isinstance(res[1], torch.Tensor) \
                and tuple(res[1].shape) == (B, T, T):
            ctx.fail("multi_head_attention.weights_averaged", tried=tried, shape=fmt_shape((B, H, T, T)),
                     got=fmt_shape(res[1].shape), mistake=MISTAKE.weights_averaged_over_heads)
        with torch.no_grad():
            ref_out, ref_w = reference(x, mask)
            cands = _mha_candidates(reference, x, H, mask)
        try:
            out, weights = _unpack_pair(ctx, res, "MultiHeadSelfAttention.forward", (B, T, D), (B, H, T, T), mask,
                                        tried, returns="return self.W_O(merge_heads(out)), weights")  # code
        except CheckFailure as failure:  # NaN in the weights: a known mistake may give NaN just there
            got = res[1] if isinstance(res, (tuple, list)) and len(res) == 2 else None
            raise nan_named(ctx, failure, got, [(n, w_) for n, (_, w_) in cands]) from None
        _check_pair(ctx, out.detach(), weights.detach(), ref_out, ref_w, cands, tried, mask,
                    out_what=say("multi_head_attention.out_what"),
                    after_weights=say("multi_head_attention.after_weights"))
    check_gradients(ctx, learner, out, names, tried)
    return say("multi_head_attention.passed", n=n)
