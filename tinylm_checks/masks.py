"""Masks: the causal mask (taught in stage 01), and stage 03's key-padding mask, combining masks and the
masked softmax.

Every mask is bool, True = may attend, and broadcasts to multi-head scores ``(B, H, T_q, T_k)``.
"""
from __future__ import annotations

import itertools

import torch

from ._core import Ctx, check, fmt_shape, known_mistake, reference, where
from .setup import SOFTMAX_UNSTABLE
from ._modules import randomise as _randomise
from .attention import (MASK_INVERTED, MASK_RENORMALISED, MASK_RESHAPED, NAN_FULLY_MASKED, SCORE_AXES, check_weights,
                        weight_variants)

ref = reference("masks")
ref_attention = reference("attention")
ref_multihead = reference("multihead")

__all__ = ["check_causal_mask", "check_key_padding_mask", "check_combine_masks", "check_masked_softmax"]

MASK_UPPER = known_mistake("causal_mask_upper")
DIAGONAL_MASKED = known_mistake("diagonal_masked")
MASK_NOT_BOOL = known_mistake("mask_not_bool")
PEEKS_AHEAD = known_mistake("mask_peeks_ahead")
NO_MASKING = known_mistake("mask_all_true")
ADDITIVE_MASK = known_mistake("additive_float_mask")

# ---- stage 03
PAD_QUERY_AXIS = known_mistake("padding_on_query_axis")
PAD_2D = known_mistake("padding_mask_2d")
PAD_EXPANDED = known_mistake("padding_mask_expanded")
PAD_3D = known_mistake("padding_mask_3d")
PAD_OFF_BY_ONE = known_mistake("padding_off_by_one")
PAD_INVERTED = known_mistake("padding_mask_inverted")
PAD_SIDE_IGNORED = known_mistake("padding_side_ignored")
PAD_LEFT_FROM_LENGTHS = known_mistake("left_padding_from_lengths")
PAD_SIDE_SWAPPED = known_mistake("padding_sides_swapped")
PAD_WIDTH_FROM_LENGTHS = known_mistake("padding_width_from_lengths")
COMBINE_OR = known_mistake("combine_or")
COMBINE_XOR = known_mistake("combine_xor")
COMBINE_DROPS_MASK = known_mistake("combine_drops_a_mask")
COMBINE_NONE = known_mistake("combine_none_not_skipped")
COMBINE_STOPS_AT_NONE = known_mistake("combine_stops_at_none")
COMBINE_ALL_NONE = known_mistake("combine_all_none")
COMBINE_TWO_ONLY = known_mistake("combine_two_masks_only")
MASK_TIMES_INF = known_mistake("mask_times_inf")
MASK_NONE_NOT_HANDLED = known_mistake("mask_none_not_handled")

HINTS = {MASK_INVERTED: "True on and below the diagonal: torch.tril(...), not its complement"}
LEFT_OFF_BY_ONE = ("with left padding sequence b's real tokens are the last lengths[b]: positions T - lengths[b] .. T - 1, "
                   "i.e. positions >= T - lengths[b]")


def _diagnose_causal(got: torch.Tensor, T: int) -> str | None:
    tril = torch.ones(T, T, dtype=torch.bool).tril()
    g = got.detach()
    if g.dtype != torch.bool:
        if g.is_floating_point() and bool(torch.isinf(g).any()):
            return ADDITIVE_MASK
        return MASK_NOT_BOOL if bool(((g != 0) == tril).all()) else None
    ones = torch.ones(T, T, dtype=torch.bool)
    for name, cand in ((MASK_UPPER, tril.T), (DIAGONAL_MASKED, tril.tril(-1)), (MASK_INVERTED, ~tril),
                       (PEEKS_AHEAD, ones.tril(1)), (NO_MASKING, ones)):
        if bool((g == cand).all()):
            return name
    return None


@check
def check_causal_mask(ctx: Ctx, causal_mask) -> str:
    """Check ``causal_mask(T) -> bool (T, T)``, True on and below the diagonal, for several T."""
    ctx.hints = HINTS
    fn = ctx.function(causal_mask, "causal_mask")
    lengths = (5, 1, 40) if ctx.seed == 0 else (3 + ctx.seed % 5, 1, 33)  # 40 > a 16- or 32-row cached table
    for T in lengths:
        got = ctx.call(fn, T, what=f"called with T={T}")
        expected = ref_attention.causal_mask(T)
        if not isinstance(got, torch.Tensor):
            ctx.tensor(got, "the mask", (T, T), dtype=torch.bool)  # names a missing return or a numpy array
        if tuple(got.shape) != (T, T):
            ctx.fail("the mask has the wrong shape", tried=f"T={T}", expected=fmt_shape((T, T)), got=fmt_shape(got.shape),
                     hint="one row per query position, one column per key position")
        mistake = _diagnose_causal(got, T)
        if got.dtype != torch.bool:
            ctx.fail(f"the mask has dtype {got.dtype}", tried=f"T={T}", expected="torch.bool", got=str(got.dtype),
                     mistake=mistake or MASK_NOT_BOOL)
        if not bool((got == expected).all()):
            r = int((got != expected).any(1).nonzero()[0])
            ctx.fail("the mask is wrong", tried=f"T={T}",
                     expected=f"row {r} (query {r}): {expected[r].int().tolist()} (1 = may attend)",
                     got=f"row {r} (query {r}): {got[r].int().tolist()}", mistake=mistake,
                     hint="row t must be True in columns 0..t and False after")
    return f"bool (T, T), True on and below the diagonal, for T in {lengths}"


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
    cands = [(PAD_INVERTED, ~good), (PAD_OFF_BY_ONE, pos <= L if side == "right" else pos > T - 1 - L),
             (PAD_OFF_BY_ONE, pos < L - 1 if side == "right" else pos > T - L),
             (PAD_OFF_BY_ONE, pos < L + 1 if side == "right" else pos >= T - L - 1)]
    if side == "left":
        cands += [(PAD_SIDE_IGNORED, right), (PAD_LEFT_FROM_LENGTHS, pos >= L)]
    else:
        cands.append((PAD_SIDE_SWAPPED, left))
    return cands


def _padding_shape_mistake(shape, B: int, T: int) -> str | None:
    shape = tuple(shape)
    if shape in ((B, 1, T, 1), (B, T, 1)):
        return PAD_QUERY_AXIS
    if shape in ((B, T), (1, 1, B, T)):
        return PAD_2D
    if shape == (B, 1, T, T):
        return PAD_EXPANDED
    if shape == (B, 1, T):
        return PAD_3D
    if len(shape) in (2, 3, 4) and shape[0] == B and shape[-1] < T and all(s == 1 for s in shape[1:-1]):
        return PAD_WIDTH_FROM_LENGTHS
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
        tried = f"lengths={lens}, T={T}, padding_side={side!r} (B = {B})"
        got = ctx.call(fn, lengths, T, what=f"called with {tried}", names=("lengths",),
                       **({} if side == "right" else {"padding_side": side}))
        if isinstance(got, torch.Tensor) and tuple(got.shape) != (B, 1, 1, T):
            ctx.fail("the mask has the wrong shape", tried=tried,
                     expected=f"(B, 1, 1, T) = {fmt_shape((B, 1, 1, T))}: it must broadcast to scores (B, H, T_q, T)",
                     got=fmt_shape(got.shape), mistake=_padding_shape_mistake(got.shape, B, T),
                     hint="batch first, then size-1 axes for heads and queries, then the keys: (B, 1, 1, T)")
        got = ctx.tensor(got, "the mask", (B, 1, 1, T), dtype=got.dtype if isinstance(got, torch.Tensor) else torch.bool,
                         tried=tried)
        expected = ref.key_padding_mask(lengths, T, side)
        values = got[:, 0, 0] if got.dtype == torch.bool else got[:, 0, 0] != 0
        mistake = next((n for n, c in _pad_variants(lengths, T, side) if bool((values == c).all())), None)
        if got.dtype != torch.bool:
            ctx.fail(f"the mask has dtype {got.dtype}", tried=tried, expected="torch.bool (True = real token)",
                     got=str(got.dtype), mistake=MASK_NOT_BOOL)
        if not bool((got == expected).all()):
            b = int((got != expected).reshape(B, T).any(1).nonzero()[0])
            ctx.fail("the mask is wrong", tried=tried,
                     expected=f"sequence {b} (length {lens[b]}): {expected[b, 0, 0].int().tolist()} (1 = real token)",
                     got=f"sequence {b}: {got[b, 0, 0].int().tolist()}", mistake=mistake,
                     mistake_hint=LEFT_OFF_BY_ONE if mistake == PAD_OFF_BY_ONE and side == "left" else None,
                     hint="True for the lengths[b] real tokens of sequence b: the first ones with right padding, "
                          "the last ones with left padding")
        masks[side] = got
    for side in ("right", "left"):
        tried = f"lengths={[0] + lens[1:]}, T={T}, padding_side={side!r} (sequence 0 has no real token)"
        got = ctx.call(fn, torch.tensor([0] + lens[1:]), T, side, what=f"called with {tried}", names=("lengths",))
        if not (isinstance(got, torch.Tensor) and tuple(got.shape) == (B, 1, 1, T) and not bool(got[0].any())):
            ctx.fail("a sequence of length 0 must be all padding", tried=tried,
                     expected=f"sequence 0: {[0] * T}", got=str(got[0].int().flatten().tolist())
                     if isinstance(got, torch.Tensor) and got.dim() >= 1 else repr(got),
                     hint="a length of 0 needs no special case with a comparison (positions < 0 and positions >= T "
                          "are False everywhere); with slicing, x[-0:] is the whole tensor, not an empty one")

    # in multi-head attention: padded keys get weight 0; changing padded tokens changes nothing real
    H, D = 2, 6
    mha = ref_multihead.MultiHeadSelfAttention(D, H).double()
    _randomise(ctx, mha)
    x = ctx.randn(B, T, D)
    for side, mask in masks.items():
        tried = f"reference MultiHeadSelfAttention(d_model={D}, num_heads={H}), x {fmt_shape(x.shape)}, your " \
                f"{side}-padding mask for lengths={lens}"
        with torch.no_grad():
            out, w = mha(x, mask)
            x2 = torch.where(mask[:, 0, 0, :, None], x, ctx.randn(B, T, D))  # new values at the padded positions
            out2, _ = mha(x2, mask)
        real = mask[:, 0, 0]  # (B, T)
        leak = (w != 0) & ~mask
        if bool(leak.any()):
            i = leak.nonzero()[0].tolist()
            ctx.fail("a padded key got attention weight", tried=tried,
                     expected=f"weight 0 at {where(i, SCORE_AXES[4])}", got=f"{w[tuple(i)].item():.4f}")
        diff = (out2 - out).abs().amax(-1)[real]
        if bool((diff > 0).any()):
            ctx.fail("changing the padded tokens changed the output at a real token", tried=tried,
                     got=f"largest change {float(diff.max()):.3g}", hint="padding must be invisible to real tokens")
    return (f"bool (B, 1, 1, T), True on real tokens, for right and left padding; in multi-head attention padded "
            f"keys get weight 0 and changing them changes nothing at the real tokens")


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
    labels = {id(pad): f"left-padding mask {fmt_shape(pad.shape)}", id(causal): f"causal mask {fmt_shape(causal.shape)}",
              id(extra): f"random mask {fmt_shape(extra.shape)}", id(full): f"random mask {fmt_shape(full.shape)}"}

    returned = []  # whether an earlier call gave a tensor: then a None result is not a missing `return`

    def run(*masks, mistake_if_raises=None):
        tried = "combine_masks(" + ", ".join("None" if m is None else labels[id(m)] for m in masks) + f"), B = {B}, T = {T}"
        got = ctx.call(fn, *masks, what=f"called as {tried}", names=tuple(f"mask {i + 1}" for i in range(len(masks))),
                       mistake_if_raises=mistake_if_raises)
        real = [m for m in masks if m is not None]
        expected = ref.combine_masks(*masks)
        if expected is None:
            if got is not None:
                ctx.fail("combine_masks of only None must return None", tried=tried, expected="None",
                         got=fmt_shape(got.shape) + " tensor" if isinstance(got, torch.Tensor) else repr(got),
                         mistake=COMBINE_ALL_NONE)
            return None
        if got is None and any(returned):  # it has a `return`: this path gives None
            ctx.fail("combine_masks returned None although some masks are not None", tried=tried,
                     expected=f"the AND of the masks that are not None, shape {fmt_shape(expected.shape)}",
                     got="None", mistake=COMBINE_STOPS_AT_NONE if any(m is None for m in masks) else None,
                     hint="every path through the function must return the combined mask")
        returned.append(isinstance(got, torch.Tensor))
        partial = [ref.combine_masks(*subset) for n in range(1, len(real))
                   for subset in itertools.combinations(real, n)]  # the AND of some of the masks only
        if isinstance(got, torch.Tensor) and tuple(got.shape) != tuple(expected.shape) \
                and any(tuple(got.shape) == tuple(m.shape) and bool((got == m).all()) for m in partial):
            ctx.fail("combine_masks dropped a mask", tried=tried,
                     expected=f"the AND of every mask, of the broadcast shape {fmt_shape(expected.shape)}",
                     got=f"a mask of shape {fmt_shape(got.shape)}: the AND of only some of them", mistake=COMBINE_DROPS_MASK)
        got = ctx.tensor(got, "the combined mask", expected.shape, dtype=got.dtype if isinstance(got, torch.Tensor)
                         else torch.bool, tried=tried, hint="the masks broadcast together: (B, 1, 1, T) and (T, T) "
                                                            "give (B, 1, T, T); & does that")
        if got.dtype != torch.bool:
            ctx.fail(f"the combined mask has dtype {got.dtype}", tried=tried, expected="torch.bool", got=str(got.dtype),
                     mistake=MASK_NOT_BOOL)
        if not bool((got == expected).all()):
            i = (got != expected).nonzero()[0].tolist()
            variants = [(COMBINE_OR, lambda a, b: a | b), (COMBINE_XOR, lambda a, b: a ^ b)]
            mistake = None
            for name, op in variants:
                acc = real[0]
                for m in real[1:]:
                    acc = op(acc, m)
                if bool((got == acc).all()):
                    mistake = name
            if mistake is None and any(bool((got == m.expand_as(got)).all()) for m in partial):
                mistake = COMBINE_DROPS_MASK
            ctx.fail("the combined mask is wrong", tried=tried,
                     expected=f"{bool(expected[tuple(i)])} at {where(i, ('batch', 'head', 'query', 'key'))}: a key "
                              "is allowed only where every mask allows it",
                     got=str(bool(got[tuple(i)])), mistake=mistake,
                     hint="a key is allowed only where every mask allows it: AND every mask that is not None")
        return got

    run(full, causal)  # same shape as the result: an in-place & would change the caller's mask
    run(pad, causal)
    run(None, causal, mistake_if_raises=COMBINE_NONE)
    run(pad, None, mistake_if_raises=COMBINE_NONE)
    run(None, None, mistake_if_raises=COMBINE_NONE)
    run(causal, extra, pad, mistake_if_raises=COMBINE_TWO_ONLY)
    mask = run(pad, causal)

    # end to end: the reference multi-head attention with your combined mask
    H, D = 2, 6
    mha = ref_multihead.MultiHeadSelfAttention(D, H).double()
    _randomise(ctx, mha)
    x = ctx.randn(B, T, D)
    tried = (f"reference MultiHeadSelfAttention(d_model={D}, num_heads={H}), x {fmt_shape(x.shape)}, your "
             f"combine_masks(left padding for lengths={lens}, causal)")
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
        ctx.fail(f"changing the tokens after position {t} changed the output at position {t} or before", tried=tried,
                 hint="the combined mask must keep the causal mask: no key after the query")
    moved = (out_earlier[:, t] - out[:, t]).abs().amax(-1) > 0  # (B,)
    should = real[:, t - 1] & real[:, t]
    if not bool((moved | ~should).all()):
        ctx.fail(f"changing the token at position {t - 1} did not change the output at position {t}", tried=tried,
                 hint="a real token must see the real tokens before it: the mask hides too much")
    return ("the AND of any number of masks, None skipped (None if all are None), inputs unchanged; in multi-head "
            "attention with left padding and a causal mask, later tokens change nothing and earlier real ones do")


# --------------------------------------------------------------------------- stage 03: the masked softmax

@check
def check_masked_softmax(ctx: Ctx, masked_softmax) -> str:
    """Check ``masked_softmax(scores, mask=None)``: the softmax over the keys with masked keys at exactly 0,
    a query with no allowed key all zeros, no mask a plain softmax, and large scores (where a finite
    fill value stops masking)."""
    ctx.hints = {SOFTMAX_UNSTABLE: "use torch.softmax on the masked scores: it subtracts each row's maximum for you, "
                                   "so exp() neither overflows nor underflows to all zeros"}
    fn = ctx.function(masked_softmax, "masked_softmax")
    B, T, lens = _pad_sizes(ctx.seed)
    H = 2
    scores = ctx.randn(B, H, T, T) * 3
    random = torch.rand(B, 1, T, T, generator=ctx.gen) < 0.6
    random |= torch.eye(T, dtype=torch.bool)  # every query may attend to itself: no empty row yet
    left = ref.key_padding_mask(torch.tensor([0] + lens[1:]), T, "left")  # sequence 0: nothing real
    cases = [(random, "random mask", 1.0),
             (None, "mask=None", 1.0),
             (ref.combine_masks(left, ref_attention.causal_mask(T)), "left padding & causal (padded queries may attend to no "
                                                           "key; sequence 0 is all padding)", 1.0),
             (random, "random mask, large negative scores (around -1e7)", 1e6)]
    for mask, label, scale in cases:
        s = scores if scale == 1 else scores * scale - 1e7  # below any finite fill value a learner might pick
        tried = (f"scores {fmt_shape(s.shape)}, float64, seed {ctx.seed}, "
                 + (f"bool mask {fmt_shape(mask.shape)}: {label}" if mask is not None else label))
        got = ctx.call(fn, s, *([] if mask is None else [mask]), what=f"called with {tried}", names=("scores", "mask"),
                       mistake_if_raises=MASK_NONE_NOT_HANDLED if mask is None else None)  # it worked with a mask
        if mask is not None and isinstance(got, torch.Tensor) and got.shape == s.shape and bool(torch.isnan(got).any()):
            empty = ~mask.expand_as(s).any(-1)
            nan_rows = torch.isnan(got).any(-1)
            i = nan_rows.nonzero()[0].tolist()
            ctx.fail("the weights contain NaN", tried=tried, got=f"NaN in the row of {where(i, SCORE_AXES[4])}",
                     mistake=NAN_FULLY_MASKED if bool((nan_rows == empty).all())
                     else MASK_TIMES_INF if bool(nan_rows.all())
                     else MASK_RENORMALISED if scale > 1 else None,
                     hint="NaN comes from 0 / 0 (a row whose weights are all 0 before dividing) or from 0 x inf (a "
                          "mask multiplied by -inf)")
        reshaped = mask is not None and isinstance(got, torch.Tensor) and got.dim() > s.dim()
        got = ctx.tensor(got, "the weights", s.shape, tried=tried, mistake=MASK_RESHAPED if reshaped else None,
                         hint="the weights have the shape of the scores")
        check_weights(ctx, got, ref.masked_softmax(s, mask), weight_variants(s, mask), tried, mask, large=scale > 1,
                      fallback="fill the masked scores with float('-inf'), softmax over the keys (dim=-1), then "
                               "turn the NaN of rows with no allowed key into 0")
    ctx.differentiable(fn, scores, random, what=f"called with {tried}", names=("scores",))
    ctx.dtype_follows(fn, scores, random, what=f"called with {tried}", names=("scores",))
    return ("softmax over the keys; masked keys get exactly 0, also with large scores; a query with no allowed key "
            "gets all zeros, never NaN; mask=None is the plain softmax")
