"""Masks: the causal mask (taught in stage 01), and stage 03's key-padding mask, combining masks and the
masked softmax.

Every mask is bool, True = may attend, and broadcasts to multi-head scores ``(B, H, T_q, T_k)``.
"""
from __future__ import annotations

import itertools

import torch

from ._core import Ctx, check, fmt_shape, matrices_around, reference, where
from ._modules import randomise
from ._text import MISTAKE, hints, say
from .attention import SCORE_AXES, check_weights, weight_variants

ref = reference("masks")
ref_attention = reference("attention")
ref_multihead = reference("multihead")

__all__ = ["check_causal_mask", "check_key_padding_mask", "check_combine_masks", "check_masked_softmax"]


# ---- stage 03


def _diagnose_causal(got: torch.Tensor, T: int) -> str | None:
    tril = torch.ones(T, T, dtype=torch.bool).tril()
    g = got.detach()
    if g.dtype != torch.bool:
        if g.is_floating_point() and bool(torch.isinf(g).any()):
            return MISTAKE.additive_float_mask
        return MISTAKE.mask_not_bool if bool(((g != 0) == tril).all()) else None
    ones = torch.ones(T, T, dtype=torch.bool)
    for name, cand in ((MISTAKE.causal_mask_upper, tril.T), (MISTAKE.diagonal_masked, tril.tril(-1)), (MISTAKE.mask_inverted, ~tril),
                       (MISTAKE.mask_peeks_ahead, ones.tril(1)), (MISTAKE.mask_all_true, ones)):
        if bool((g == cand).all()):
            return name
    return None


@check
def check_causal_mask(ctx: Ctx, causal_mask) -> str:
    """Check ``causal_mask(T) -> bool (T, T)``, True on and below the diagonal, for several T."""
    ctx.hints = hints("causal_mask.hints")
    fn = ctx.function(causal_mask, "causal_mask")
    lengths = (5, 1, 40) if ctx.seed == 0 else (3 + ctx.seed % 5, 1, 33)  # 40 > a 16- or 32-row cached table
    for T in lengths:
        got = ctx.call(fn, T, what=say("core.called_with", tried=f"T={T}"))
        expected = ref_attention.causal_mask(T)
        if not isinstance(got, torch.Tensor):
            ctx.tensor(got, say("masks.what"), (T, T), dtype=torch.bool)  # names a missing return or a numpy array
        if tuple(got.shape) != (T, T):
            ctx.fail("causal_mask.wrong_shape", tried=f"T={T}", expected=fmt_shape((T, T)), got=fmt_shape(got.shape))
        mistake = _diagnose_causal(got, T)
        if got.dtype != torch.bool:
            ctx.fail("causal_mask.wrong_dtype", dtype=got.dtype, tried=f"T={T}", expected="torch.bool", got=str(got.dtype),
                     mistake=mistake or MISTAKE.mask_not_bool)
        if not bool((got == expected).all()):
            r = int((got != expected).any(1).nonzero()[0])
            c = int((got[r] != expected[r]).nonzero()[0])
            ctx.fail("causal_mask.wrong", tried=f"T={T}", row=r, expected_row=expected[r].int().tolist(),
                     got_row=got[r].int().tolist(), mistake=mistake,
                     matrices=matrices_around(got.double(), expected.double(), [r, c]))
    return say("causal_mask.passed", lengths=lengths)


# --------------------------------------------------------------------------- stage 03: padding

def _pad_sizes(seed: int) -> tuple[int, int, list[int]]:
    """(B, T, lengths): B != T, lengths below T (so that T cannot come from lengths.max()), one length 0
    is avoided (the check tries that separately) and one length equals T."""
    if seed == 0:
        return 3, 7, [4, 6, 1]
    B, T = (4, 9) if seed % 2 else (2, 6)
    return B, T, [T - 1, 2, 5, 3][:B]


def _pad_variants(lengths: torch.Tensor, T: int, side: str) -> list[tuple[str, torch.Tensor]]:
    """Wrong key-padding masks (values only, as (B, T)) for these lengths."""
    pos, L = torch.arange(T)[None, :], lengths[:, None]
    right, left = pos < L, pos >= T - L
    good = right if side == "right" else left
    cands = [(MISTAKE.padding_mask_inverted, ~good), (MISTAKE.padding_off_by_one, pos <= L if side == "right" else pos > T - 1 - L),
             (MISTAKE.padding_off_by_one, pos < L - 1 if side == "right" else pos > T - L),
             (MISTAKE.padding_off_by_one, pos < L + 1 if side == "right" else pos >= T - L - 1)]
    if side == "left":
        cands += [(MISTAKE.padding_side_ignored, right), (MISTAKE.left_padding_from_lengths, pos >= L)]
    else:
        cands.append((MISTAKE.padding_sides_swapped, left))
    return cands


def _padding_shape_mistake(shape, B: int, T: int) -> str | None:
    shape = tuple(shape)
    if shape in ((B, 1, T, 1), (B, T, 1)):
        return MISTAKE.padding_on_query_axis
    if shape in ((B, T), (1, 1, B, T)):
        return MISTAKE.padding_mask_2d
    if shape == (B, 1, T, T):
        return MISTAKE.padding_mask_expanded
    if shape == (B, 1, T):
        return MISTAKE.padding_mask_3d
    if len(shape) in (2, 3, 4) and shape[0] == B and shape[-1] < T and all(s == 1 for s in shape[1:-1]):
        return MISTAKE.padding_width_from_lengths
    return None


@check
def check_key_padding_mask(ctx: Ctx, key_padding_mask) -> str:
    """Check ``key_padding_mask(lengths (B,), T, padding_side="right") -> bool (B, 1, 1, T)``: right and left
    padding, then in multi-head attention (padded keys get weight exactly 0, and changing the padded
    tokens changes nothing at the real ones)."""
    fn = ctx.function(key_padding_mask, "key_padding_mask")
    B, T, lens = _pad_sizes(ctx.seed)
    lengths = torch.tensor(lens)
    masks = {}
    for side in ("right", "left"):
        tried = say("key_padding_mask.tried", lengths=lens, T=T, padding_side=repr(side), B=B)
        got = ctx.call(fn, lengths, T, what=say("core.called_with", tried=tried), names=("lengths",),
                       **({} if side == "right" else {"padding_side": side}))
        if isinstance(got, torch.Tensor) and tuple(got.shape) != (B, 1, 1, T):
            ctx.fail("key_padding_mask.wrong_shape", tried=tried, shape=fmt_shape((B, 1, 1, T)),
                     got=fmt_shape(got.shape), mistake=_padding_shape_mistake(got.shape, B, T))
        got = ctx.tensor(got, say("masks.what"), (B, 1, 1, T), dtype=got.dtype if isinstance(got, torch.Tensor) else torch.bool,
                         tried=tried)
        expected = ref.key_padding_mask(lengths, T, side)
        values = got[:, 0, 0] if got.dtype == torch.bool else got[:, 0, 0] != 0
        mistake = next((n for n, c in _pad_variants(lengths, T, side) if bool((values == c).all())), None)
        if got.dtype != torch.bool:
            ctx.fail("key_padding_mask.wrong_dtype", dtype=got.dtype, tried=tried, got=str(got.dtype),
                     mistake=MISTAKE.mask_not_bool)
        if not bool((got == expected).all()):
            b = int((got != expected).reshape(B, T).any(1).nonzero()[0])
            ctx.fail("key_padding_mask.wrong", tried=tried, sequence=b, length=lens[b],
                     expected_row=expected[b, 0, 0].int().tolist(), got_row=got[b, 0, 0].int().tolist(), mistake=mistake,
                     mistake_hint=say("key_padding_mask.left_off_by_one")
                     if mistake == MISTAKE.padding_off_by_one and side == "left" else None)
        masks[side] = got
    for side in ("right", "left"):
        tried = say("key_padding_mask.tried_empty", lengths=[0] + lens[1:], T=T, padding_side=repr(side))
        got = ctx.call(fn, torch.tensor([0] + lens[1:]), T, side, what=say("core.called_with", tried=tried),
                       names=("lengths",))
        if not (isinstance(got, torch.Tensor) and tuple(got.shape) == (B, 1, 1, T) and not bool(got[0].any())):
            ctx.fail("key_padding_mask.empty_sequence", tried=tried, zeros=[0] * T,
                     got=str(got[0].int().flatten().tolist()) if isinstance(got, torch.Tensor) and got.dim() >= 1
                     else repr(got))

    # in multi-head attention: padded keys get weight 0; changing padded tokens changes nothing real
    H, D = 2, 6
    mha = ref_multihead.MultiHeadSelfAttention(D, H).double()
    randomise(ctx, mha)
    x = ctx.randn(B, T, D)
    for side, mask in masks.items():
        padding = say("key_padding_mask.right_padding_mask" if side == "right" else "key_padding_mask.left_padding_mask")
        tried = say("key_padding_mask.tried_attention", D=D, H=H, shape=fmt_shape(x.shape), padding_mask=padding,
                    lengths=lens)
        with torch.no_grad():
            out, w = mha(x, mask)
            x2 = torch.where(mask[:, 0, 0, :, None], x, ctx.randn(B, T, D))  # new values at the padded positions
            out2, _ = mha(x2, mask)
        real = mask[:, 0, 0]  # (B, T)
        leak = (w != 0) & ~mask
        if bool(leak.any()):
            i = leak.nonzero()[0].tolist()
            ctx.fail("key_padding_mask.padded_key_weight", tried=tried, at=where(i, SCORE_AXES[4]),
                     got=f"{w[tuple(i)].item():.4f}")
        diff = (out2 - out).abs().amax(-1)[real]
        if bool((diff > 0).any()):
            ctx.fail("key_padding_mask.padding_visible", tried=tried, change=float(diff.max()))
    return say("key_padding_mask.passed")


# --------------------------------------------------------------------------- stage 03: combining masks

@check
def check_combine_masks(ctx: Ctx, combine_masks) -> str:
    """Check ``combine_masks(*masks)``: the AND of bool masks, None skipped, None when all are None, any number
    of masks, inputs unchanged; then causality and padding end to end in multi-head attention with left
    padding and a causal mask (where a padded query may attend to no key)."""
    fn = ctx.function(combine_masks, "combine_masks")
    B, T, lens = _pad_sizes(ctx.seed)
    pad = ref.key_padding_mask(torch.tensor(lens), T, "left")  # (B, 1, 1, T)
    causal = ref_attention.causal_mask(T)  # (T, T)
    extra = torch.rand(1, 1, T, T, generator=ctx.gen) < 0.8  # (1, 1, T, T)
    extra |= torch.eye(T, dtype=torch.bool)
    full = (torch.rand(B, 1, T, T, generator=ctx.gen) < 0.7) | torch.eye(T, dtype=torch.bool)  # (B, 1, T, T)
    labels = {id(pad): say("combine_masks.left_padding", shape=fmt_shape(pad.shape)),
              id(causal): say("combine_masks.causal", shape=fmt_shape(causal.shape)),
              id(extra): say("combine_masks.random", shape=fmt_shape(extra.shape)),
              id(full): say("combine_masks.random", shape=fmt_shape(full.shape))}

    returned = []  # whether an earlier call gave a tensor: then a None result is not a missing `return`

    def run(*masks, mistake_if_raises=None):
        tried = say("combine_masks.tried", masks=", ".join("None" if m is None else labels[id(m)] for m in masks), B=B, T=T)
        got = ctx.call(fn, *masks, what=say("core.called_as", tried=tried),
                       names=tuple(say("combine_masks.argument", n=i + 1) for i in range(len(masks))),
                       mistake_if_raises=mistake_if_raises)
        real = [m for m in masks if m is not None]
        expected = ref.combine_masks(*masks)
        if expected is None:
            if got is not None:
                ctx.fail("combine_masks.all_none", tried=tried, expected="None",
                         got=say("combine_masks.a_tensor", shape=fmt_shape(got.shape)) if isinstance(got, torch.Tensor)
                         else repr(got), mistake=MISTAKE.combine_all_none)
            return None
        if got is None and any(returned):  # it has a `return`: this path gives None
            ctx.fail("combine_masks.returned_none", tried=tried, shape=fmt_shape(expected.shape),
                     got="None", mistake=MISTAKE.combine_stops_at_none if any(m is None for m in masks) else None)
        returned.append(isinstance(got, torch.Tensor))
        partial = [ref.combine_masks(*subset) for n in range(1, len(real))
                   for subset in itertools.combinations(real, n)]  # the AND of some of the masks only
        if isinstance(got, torch.Tensor) and tuple(got.shape) != tuple(expected.shape) \
                and any(tuple(got.shape) == tuple(m.shape) and bool((got == m).all()) for m in partial):
            ctx.fail("combine_masks.dropped_mask", tried=tried, shape=fmt_shape(expected.shape),
                     got_shape=fmt_shape(got.shape), mistake=MISTAKE.combine_drops_a_mask)
        got = ctx.tensor(got, say("combine_masks.what"), expected.shape, dtype=got.dtype if isinstance(got, torch.Tensor)
                         else torch.bool, tried=tried, hint=say("combine_masks.shape_hint"))
        if got.dtype != torch.bool:
            ctx.fail("combine_masks.wrong_dtype", dtype=got.dtype, tried=tried, expected="torch.bool", got=str(got.dtype),
                     mistake=MISTAKE.mask_not_bool)
        if not bool((got == expected).all()):
            i = (got != expected).nonzero()[0].tolist()
            variants = [(MISTAKE.combine_or, lambda a, b: a | b), (MISTAKE.combine_xor, lambda a, b: a ^ b)]
            mistake = None
            for name, op in variants:
                acc = real[0]
                for m in real[1:]:
                    acc = op(acc, m)
                if bool((got == acc).all()):
                    mistake = name
            if mistake is None and any(bool((got == m.expand_as(got)).all()) for m in partial):
                mistake = MISTAKE.combine_drops_a_mask
            ctx.fail("combine_masks.wrong", tried=tried, expected_value=bool(expected[tuple(i)]),
                     at=where(i, ("batch", "head", "query", "key")), got=str(bool(got[tuple(i)])), mistake=mistake)
        return got

    run(full, causal)  # same shape as the result: an in-place & would change the caller's mask
    run(pad, causal)
    run(None, causal, mistake_if_raises=MISTAKE.combine_none_not_skipped)
    run(pad, None, mistake_if_raises=MISTAKE.combine_none_not_skipped)
    run(None, None, mistake_if_raises=MISTAKE.combine_none_not_skipped)
    run(causal, extra, pad, mistake_if_raises=MISTAKE.combine_two_masks_only)
    mask = run(pad, causal)

    # end to end: the reference multi-head attention with your combined mask
    H, D = 2, 6
    mha = ref_multihead.MultiHeadSelfAttention(D, H).double()
    randomise(ctx, mha)
    x = ctx.randn(B, T, D)
    tried = say("combine_masks.tried_attention", D=D, H=H, shape=fmt_shape(x.shape), lengths=lens)
    with torch.no_grad():
        out, w = mha(x, mask)
    t = T // 2
    with torch.no_grad():
        later = x.clone()
        later[:, t + 1:] = ctx.randn(B, T - t - 1, D)
        earlier = x.clone()
        earlier[:, t - 1] = ctx.randn(B, D)
        out_later, _ = mha(later, mask)
        out_earlier, _ = mha(earlier, mask)
    real = pad[:, 0, 0]  # (B, T)
    if bool(((out_later[:, : t + 1] - out[:, : t + 1]).abs() > 0).any()):
        ctx.fail("combine_masks.future_visible", position=t, tried=tried)
    moved = (out_earlier[:, t] - out[:, t]).abs().amax(-1) > 0  # (B,)
    should = real[:, t - 1] & real[:, t]
    if not bool((moved | ~should).all()):
        ctx.fail("combine_masks.past_hidden", earlier=t - 1, position=t, tried=tried)
    return say("combine_masks.passed")


# --------------------------------------------------------------------------- stage 03: the masked softmax

@check
def check_masked_softmax(ctx: Ctx, masked_softmax) -> str:
    """Check ``masked_softmax(scores, mask=None)``: the softmax over the keys with masked keys at exactly 0,
    a query with no allowed key all zeros, no mask a plain softmax, and large scores (where a finite
    fill value stops masking)."""
    ctx.hints = hints("masked_softmax.hints")
    fn = ctx.function(masked_softmax, "masked_softmax")
    B, T, lens = _pad_sizes(ctx.seed)
    H = 2
    scores = ctx.randn(B, H, T, T) * 3
    random = torch.rand(B, 1, T, T, generator=ctx.gen) < 0.6
    random |= torch.eye(T, dtype=torch.bool)  # every query may attend to itself: no empty row yet
    left = ref.key_padding_mask(torch.tensor([0] + lens[1:]), T, "left")  # sequence 0: nothing real
    cases = [(random, say("masked_softmax.random"), 1.0),
             (None, say("masked_softmax.no_mask"), 1.0),
             (ref.combine_masks(left, ref_attention.causal_mask(T)), say("masked_softmax.padding_causal"), 1.0),
             (random, say("masked_softmax.random_large"), 1e6)]
    for mask, label, scale in cases:
        s = scores if scale == 1 else scores * scale - 1e7  # below any finite fill value a learner might pick
        tried = say("masked_softmax.tried", shape=fmt_shape(s.shape), seed=ctx.seed,
                    label=say("masked_softmax.with_mask", shape=fmt_shape(mask.shape), label=label)
                    if mask is not None else label)
        got = ctx.call(fn, s, *([] if mask is None else [mask]), what=say("core.called_with", tried=tried),
                       names=("scores", "mask"),
                       mistake_if_raises=MISTAKE.mask_none_not_handled if mask is None else None)  # it worked with a mask
        if mask is not None and isinstance(got, torch.Tensor) and got.shape == s.shape and bool(torch.isnan(got).any()):
            empty = ~mask.expand_as(s).any(-1)
            nan_rows = torch.isnan(got).any(-1)
            i = nan_rows.nonzero()[0].tolist()
            ctx.fail("masked_softmax.nan", tried=tried, at=where(i, SCORE_AXES[4]),
                     mistake=MISTAKE.nan_fully_masked_row if bool((nan_rows == empty).all())
                     else MISTAKE.mask_times_inf if bool(nan_rows.all())
                     else MISTAKE.mask_renormalised_after_softmax if scale > 1 else None)
        reshaped = mask is not None and isinstance(got, torch.Tensor) and got.dim() > s.dim()
        got = ctx.tensor(got, say("masked_softmax.what"), s.shape, tried=tried, mistake=MISTAKE.mask_reshaped if reshaped else None,
                         hint=say("masked_softmax.shape_hint"))
        check_weights(ctx, got, ref.masked_softmax(s, mask), weight_variants(s, mask), tried, mask, large=scale > 1,
                      fallback=say("masked_softmax.fallback"))
    ctx.differentiable(fn, scores, random, what=say("core.called_with", tried=tried), names=("scores",))
    ctx.dtype_follows(fn, scores, random, what=say("core.called_with", tried=tried), names=("scores",))
    return say("masked_softmax.passed")
