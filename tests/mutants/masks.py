"""Wrong ``causal_mask(T)`` implementations (stage 03)."""
import numpy as np
import torch

from tinylm_checks import check_causal_mask, check_combine_masks, check_key_padding_mask, check_masked_softmax


def causal_mask_upper(T):
    """Uses torch.triu (upper triangle): a position sees the future, not the past."""
    return torch.triu(torch.ones(T, T, dtype=torch.bool))


def causal_mask_diagonal_masked(T):
    """Uses tril(diagonal=-1): a position may not attend to itself."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)


def causal_mask_inverted(T):
    """Returns the future (triu(diagonal=1)), True = masked, the opposite of PyTorch's convention."""
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def causal_mask_peeks_ahead(T):
    """Uses tril(diagonal=1): position t may also see position t + 1."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def causal_mask_all_true(T):
    """Forgets the tril: every position may see every other."""
    return torch.ones(T, T, dtype=torch.bool)


def causal_mask_float(T):
    """Forgets dtype=torch.bool: a float 0/1 lower triangle."""
    return torch.tril(torch.ones(T, T))


def causal_mask_int(T):
    """Builds the triangle from an int tensor (torch.ones(..., dtype=torch.long))."""
    return torch.tril(torch.ones(T, T, dtype=torch.long))


def causal_mask_additive(T):
    """Returns an additive float mask: 0 where allowed, -inf above the diagonal."""
    return torch.zeros(T, T).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))


def causal_mask_wrong_shape(T):
    """Returns a (1, T, T) mask with an extra batch dimension."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool))[None]


def causal_mask_numpy(T):
    """Builds the mask with numpy (np.tril) and returns a numpy array."""
    return np.tril(np.ones((T, T), dtype=bool))


def causal_mask_no_return(T):
    """Builds the mask and forgets `return`."""
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))  # noqa: F841


def causal_mask_stub(T):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


def causal_mask_wrong_arg(T):
    """Calls torch.tril with a keyword it does not have (raises TypeError)."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool), lower=True)


class CausalMask(torch.nn.Module):
    """A module class passed where the function causal_mask is expected."""

    def forward(self, T):
        return torch.tril(torch.ones(T, T, dtype=torch.bool))


_TABLE = torch.ones(16, 16, dtype=torch.bool).tril()


def causal_mask_cached_table(T):
    """Slices a precomputed 16 x 16 table (nanoGPT's block_size), wrong for T > 16."""
    return _TABLE[:T, :T]


# --------------------------------------------------------------------------- key_padding_mask (stage 03)

def _positions(lengths, T):
    return torch.arange(T)[None, :], torch.as_tensor(lengths)[:, None]


def kpm_query_axis(lengths, T, padding_side="right"):
    """Puts the padding on the query axis: (B, 1, T, 1), hiding rows instead of columns."""
    pos, L = _positions(lengths, T)
    real = pos < L if padding_side == "right" else pos >= T - L
    return real[:, None, :, None]


def kpm_2d(lengths, T, padding_side="right"):
    """Returns (B, T) without the head and query axes (only broadcasts when B == T)."""
    pos, L = _positions(lengths, T)
    return pos < L if padding_side == "right" else pos >= T - L


def kpm_3d(lengths, T, padding_side="right"):
    """Returns (B, 1, T): right for single-head scores, but its batch axis meets the heads of (B, H, T, T)."""
    pos, L = _positions(lengths, T)
    return (pos < L if padding_side == "right" else pos >= T - L)[:, None, :]


def kpm_less_equal(lengths, T, padding_side="right"):
    """Uses <= instead of <: one padding position too many counts as real."""
    pos, L = _positions(lengths, T)
    return (pos <= L if padding_side == "right" else pos >= T - L)[:, None, None, :]


def kpm_inverted(lengths, T, padding_side="right"):
    """True on the padding, as nn.MultiheadAttention's key_padding_mask wants it."""
    pos, L = _positions(lengths, T)
    return (pos >= L if padding_side == "right" else pos < T - L)[:, None, None, :]


def kpm_side_ignored(lengths, T, padding_side="right"):
    """Accepts padding_side and always builds the right-padding mask."""
    pos, L = _positions(lengths, T)
    return (pos < L)[:, None, None, :]


def kpm_sides_swapped(lengths, T, padding_side="right"):
    """Builds the left-padding mask for 'right' and the right-padding one for 'left'."""
    pos, L = _positions(lengths, T)
    return (pos >= T - L if padding_side == "right" else pos < L)[:, None, None, :]


def kpm_int(lengths, T, padding_side="right"):
    """Returns 1/0 integers (Hugging Face's attention_mask style) instead of bools."""
    pos, L = _positions(lengths, T)
    return (pos < L if padding_side == "right" else pos >= T - L).long()[:, None, None, :]


def kpm_width_from_lengths(lengths, T, padding_side="right"):
    """Takes the width from lengths.max() instead of T."""
    L = torch.as_tensor(lengths)
    width = int(L.max())
    pos = torch.arange(width)[None, :]
    return (pos < L[:, None] if padding_side == "right" else pos >= width - L[:, None])[:, None, None, :]


def kpm_no_side_parameter(lengths, T):
    """Forgets the padding_side parameter (TypeError when it is passed)."""
    pos, L = _positions(lengths, T)
    return (pos < L)[:, None, None, :]


def kpm_stub(lengths, T, padding_side="right"):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


def kpm_python_loop(lengths, T, padding_side="right"):
    """Fills a mask in a Python loop, but only up to lengths[b] - 1 (an off-by-one in range)."""
    mask = torch.zeros(len(lengths), 1, 1, T, dtype=torch.bool)
    for b, n in enumerate(torch.as_tensor(lengths).tolist()):
        if padding_side == "right":
            mask[b, 0, 0, : max(n - 1, 0)] = True
        else:
            mask[b, 0, 0, T - n:] = n > 0
    return mask


# --------------------------------------------------------------------------- combine_masks (stage 03)

def combine_or(*masks):
    """Combines with | (or): a key is allowed if any mask allows it."""
    out = None
    for m in masks:
        if m is not None:
            out = m if out is None else out | m
    return out


def combine_xor(*masks):
    """Combines with ^ (exclusive or)."""
    out = None
    for m in masks:
        if m is not None:
            out = m if out is None else out ^ m
    return out


def combine_first_only(*masks):
    """Returns the first mask that is not None and drops the others."""
    return next((m for m in masks if m is not None), None)


def combine_none_not_skipped(*masks):
    """ANDs every argument, None included (TypeError on None)."""
    out = masks[0]
    for m in masks[1:]:
        out = out & m
    return out


def combine_from_first_none(*masks):
    """Skips the None masks in its loop but starts from masks[0], which may be None (a new learner's slip: the
    place to look is the mask it starts from, not the loop body)."""
    out = masks[0]
    for m in masks[1:]:
        if m is not None:
            out = out & m
    return out


def combine_two(a, b):
    """Takes exactly two masks (skips None properly)."""
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def combine_in_place(*masks):
    """ANDs into the first mask in place (&=), changing the caller's mask."""
    out = None
    for m in masks:
        if m is not None:
            if out is None:
                out = m
            else:
                out &= m
    return out


def combine_in_place_broadcast(*masks):
    """ANDs in place into a copy of the first mask (out = masks[0].clone(); out &= m): the (B, 1, 1, T) copy
    cannot hold the (B, 1, T, T) result."""
    real = [m for m in masks if m is not None]
    if not real:
        return None
    out = real[0].clone()
    for m in real[1:]:
        out &= m
    return out


def combine_float(*masks):
    """Multiplies float versions of the masks: the right values, but a float tensor."""
    out = None
    for m in masks:
        if m is not None:
            out = m.float() if out is None else out * m.float()
    return out


def combine_all_none_true(*masks):
    """Starts from a True scalar tensor: with every mask None it returns tensor(True), not None."""
    out = torch.tensor(True)
    for m in masks:
        if m is not None:
            out = out & m
    return out


def combine_stub(*masks):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


# --------------------------------------------------------------------------- masked_softmax (stage 03)

# issue 41: every mistake this check can name has a mutant of this check
def msm_mask_added(scores, mask=None):
    """Adds the bool mask to the scores, as if it were an additive 0 / -inf mask."""
    weights = torch.softmax(scores if mask is None else scores + mask, dim=-1)
    return weights if mask is None else weights.masked_fill(~mask.any(-1, keepdim=True), 0.0)


def msm_mask_ignored(scores, mask=None):
    """Never reads the mask: a plain softmax."""
    return torch.softmax(scores, dim=-1)


def msm_mask_multiplied(scores, mask=None):
    """Multiplies the scores by the mask: a masked score becomes 0, not -inf."""
    weights = torch.softmax(scores if mask is None else scores * mask, dim=-1)
    return weights if mask is None else weights.masked_fill(~mask.any(-1, keepdim=True), 0.0)


def msm_mask_transposed(scores, mask=None):
    """Reads the mask transposed, as if its rows were the keys."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores.masked_fill(~mask.transpose(-2, -1), float("-inf")), dim=-1).nan_to_num(0.0)


def msm_softmax_dim_0(scores, mask=None):
    """Takes the softmax over dim=0, the batch."""
    return torch.softmax(scores if mask is None else scores.masked_fill(~mask, float("-inf")), dim=0).nan_to_num(0.0)


def msm_softmax_dim_1(scores, mask=None):
    """Takes the softmax over dim=1, the heads of (B, H, T, T) scores."""
    return torch.softmax(scores if mask is None else scores.masked_fill(~mask, float("-inf")), dim=1).nan_to_num(0.0)


def msm_finite_fill(scores, mask=None):
    """Fills masked scores with -1e9: rows with no allowed key get uniform weights."""
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)


def msm_finfo_min(scores, mask=None):
    """Fills with torch.finfo(dtype).min: rows with no allowed key get uniform weights."""
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1)


def msm_fill_minus_1e4_rows_zeroed(scores, mask=None):
    """Fills with -1e4 and zeroes rows with no allowed key: large scores outweigh -1e4."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    weights = torch.softmax(scores.masked_fill(~mask, -1e4), dim=-1)
    return weights.masked_fill(~mask.any(-1, keepdim=True), 0.0)


def msm_no_nan_to_num(scores, mask=None):
    """Fills with -inf and leaves NaN in rows with no allowed key."""
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def msm_renormalised(scores, mask=None):
    """Softmax over every key, then zeroes the masked weights and renormalises: 0/0 when a masked key has
    the largest score by far."""
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights.masked_fill(~mask, 0.0)
    return weights / weights.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def msm_renormalised_nan(scores, mask=None):
    """Renormalises after the softmax without guarding the division: 0 / 0 = NaN when a masked key has the
    largest score by far."""
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    weights = weights * mask
    return weights / weights.sum(dim=-1, keepdim=True)


def msm_after_softmax(scores, mask=None):
    """Zeroes the masked weights after the softmax, without renormalising."""
    weights = torch.softmax(scores, dim=-1)
    return weights if mask is None else weights * mask


def msm_inverted(scores, mask=None):
    """Fills -inf where the mask is True."""
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)


def msm_none_not_handled(scores, mask=None):
    """Forgets mask=None: ~None raises TypeError."""
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(0.0)


def msm_in_place(scores, mask=None):
    """Fills the caller's scores in place (masked_fill_)."""
    if mask is not None:
        scores.masked_fill_(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0)


def msm_wrong_dim(scores, mask=None):
    """Softmax over dim=-2 (the queries)."""
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-2).nan_to_num(0.0)


def msm_stub(scores, mask=None):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


# ---- found by a blind round (a tester who wrote mistakes from the release notebook, never seeing the checks)

def kpm_left_negative_slice(lengths, T, padding_side="right"):
    """Fills left padding with mask[b, -n:] = True: for n = 0, -0: is every position."""
    mask = torch.zeros(len(lengths), 1, 1, T, dtype=torch.bool)
    for b, n in enumerate(torch.as_tensor(lengths).tolist()):
        if padding_side == "right":
            mask[b, 0, 0, :n] = True
        else:
            mask[b, 0, 0, -n:] = True
    return mask


def kpm_left_from_lengths(lengths, T, padding_side="right"):
    """For left padding compares positions with lengths instead of T - lengths."""
    pos, L = _positions(lengths, T)
    return (pos < L if padding_side == "right" else pos >= L)[:, None, None, :]


def kpm_left_off_by_one(lengths, T, padding_side="right"):
    """Left padding with > T - lengths instead of >=: the first real token is lost."""
    pos, L = _positions(lengths, T)
    return (pos < L if padding_side == "right" else pos > T - L)[:, None, None, :]


def combine_breaks_at_none(*masks):
    """Stops at the first None with break instead of continue."""
    out = None
    for m in masks:
        if m is None:
            break
        out = m if out is None else out & m
    return out


def combine_first_two(*masks):
    """Combines only the first two arguments (it always gets padding and causal, doesn't it?)."""
    a = masks[0] if len(masks) > 0 else None
    b = masks[1] if len(masks) > 1 else None
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def msm_mask_times_inf(scores, mask=None):
    """Adds (~mask) * -inf to the scores: 0 * -inf = NaN on the allowed keys."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores + (~mask) * float("-inf"), dim=-1)


def msm_naive_exp(scores, mask=None):
    """Hand-written exp(s) * mask / sum without subtracting the row maximum."""
    e = torch.exp(scores)
    if mask is not None:
        e = e * mask
    return (e / e.sum(dim=-1, keepdim=True)).nan_to_num(0.0)


def msm_scores_without_mask(scores, mask=None):
    """Returns the raw scores when mask is None (forgets the softmax on that path)."""
    if mask is None:
        return scores
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(0.0)


def kpm_axes_in_front(lengths, T, padding_side="right"):
    """Adds the two size-1 axes in front, (1, 1, B, T), instead of in the middle."""
    pos, L = _positions(lengths, T)
    return (pos < L if padding_side == "right" else pos >= T - L)[None, None]


def kpm_expanded(lengths, T, padding_side="right"):
    """Expands the mask to (B, 1, T, T) instead of leaving the query axis at size 1."""
    pos, L = _positions(lengths, T)
    real = pos < L if padding_side == "right" else pos >= T - L
    return real[:, None, None, :].expand(len(L), 1, T, T)


def combine_python_and(*masks):
    """Combines with Python's `and` instead of &."""
    out = None
    for m in masks:
        if m is not None:
            out = m if out is None else (out and m)
    return out


def msm_mask_unsqueezed(scores, mask=None):
    """Adds a head axis to the mask (mask.unsqueeze(1)), which breaks masks that already have one."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores.masked_fill(~mask.unsqueeze(1), float("-inf")), dim=-1).nan_to_num(0.0)


# --------------------------------------------------------------------------- what the tests feed the checks
# (check, mutant, expected mistake id or None, key phrase of the problem): see tests/test_checks_mutants.py
ROWS = [
    (check_causal_mask, causal_mask_cached_table, None, "wrong shape"),
    # ---- causal_mask: named mistakes
    (check_causal_mask, causal_mask_upper, "causal_mask_upper", "the mask is wrong"),
    (check_causal_mask, causal_mask_diagonal_masked, "diagonal_masked", "the mask is wrong"),
    (check_causal_mask, causal_mask_inverted, "mask_inverted", "the mask is wrong"),
    (check_causal_mask, causal_mask_peeks_ahead, "mask_peeks_ahead", "the mask is wrong"),
    (check_causal_mask, causal_mask_all_true, "mask_all_true", "the mask is wrong"),
    (check_causal_mask, causal_mask_float, "mask_not_bool", "has dtype torch.float32"),
    (check_causal_mask, causal_mask_int, "mask_not_bool", "has dtype torch.int64"),
    (check_causal_mask, causal_mask_additive, "additive_float_mask", "has dtype torch.float32"),
    # ---- causal_mask: robustness
    (check_causal_mask, None, None, "expected the function causal_mask, got None"),
    (check_causal_mask, CausalMask, None, "expected the function causal_mask, got a class"),
    (check_causal_mask, causal_mask_stub, "not_implemented", "raised NotImplementedError"),
    (check_causal_mask, causal_mask_wrong_arg, None, "raised TypeError"),
    (check_causal_mask, causal_mask_wrong_shape, None, "has the wrong shape"),
    (check_causal_mask, causal_mask_numpy, "numpy_output", "is not a tensor"),
    (check_causal_mask, causal_mask_no_return, "missing_return", "is not a tensor"),
    # ---- key_padding_mask (stage 03)
    (check_key_padding_mask, kpm_query_axis, "padding_on_query_axis", "wrong shape"),
    (check_key_padding_mask, kpm_2d, "padding_mask_2d", "wrong shape"),
    (check_key_padding_mask, kpm_3d, "padding_mask_3d", "wrong shape"),
    (check_key_padding_mask, kpm_less_equal, "padding_off_by_one", "the mask is wrong"),
    (check_key_padding_mask, kpm_python_loop, "padding_off_by_one", "the mask is wrong"),
    (check_key_padding_mask, kpm_inverted, "padding_mask_inverted", "the mask is wrong"),
    (check_key_padding_mask, kpm_side_ignored, "padding_side_ignored", "the mask is wrong"),
    (check_key_padding_mask, kpm_sides_swapped, "padding_sides_swapped", "the mask is wrong"),
    (check_key_padding_mask, kpm_int, "mask_not_bool", "has dtype torch.int64"),
    (check_key_padding_mask, kpm_width_from_lengths, "padding_width_from_lengths", "wrong shape"),
    (check_key_padding_mask, kpm_no_side_parameter, None, "raised TypeError"),
    (check_key_padding_mask, kpm_stub, "not_implemented", "raised NotImplementedError"),
    (check_key_padding_mask, None, None, "expected the function key_padding_mask, got None"),
    # ---- combine_masks (stage 03)
    (check_combine_masks, combine_or, "combine_or", "combined mask is wrong"),
    (check_combine_masks, combine_xor, "combine_xor", "combined mask is wrong"),
    (check_combine_masks, combine_first_only, "combine_drops_a_mask", "combined mask is wrong"),
    (check_combine_masks, combine_none_not_skipped, "combine_none_not_skipped", "raised TypeError"),
    (check_combine_masks, combine_from_first_none, "combine_none_not_skipped", "raised TypeError"),
    (check_combine_masks, combine_two, "combine_two_masks_only", "raised TypeError"),
    (check_combine_masks, combine_in_place_broadcast, "in_place_broadcast", "raised RuntimeError"),
    (check_combine_masks, combine_in_place, "input_modified_in_place", "changed its input mask 1 in place"),
    (check_combine_masks, combine_float, "mask_not_bool", "has dtype torch.float32"),
    (check_combine_masks, combine_all_none_true, "combine_all_none", "must return None"),
    (check_combine_masks, combine_stub, "not_implemented", "raised NotImplementedError"),
    (check_combine_masks, None, None, "expected the function combine_masks, got None"),
    # ---- masked_softmax (stage 03)
    (check_masked_softmax, msm_finite_fill, "finite_fill", "may attend to no key got non-zero"),
    (check_masked_softmax, msm_mask_added, "mask_added", "masked key got attention"),
    (check_masked_softmax, msm_mask_ignored, "mask_ignored", "masked key got attention"),
    (check_masked_softmax, msm_mask_multiplied, "mask_multiplied", "masked key got attention"),
    (check_masked_softmax, msm_mask_transposed, "mask_transposed", "masked key got attention"),
    (check_masked_softmax, msm_softmax_dim_0, "softmax_over_batch", "does not sum to 1"),
    (check_masked_softmax, msm_softmax_dim_1, "softmax_over_heads", "does not sum to 1"),
    (check_masked_softmax, msm_finfo_min, "finite_fill", "may attend to no key got non-zero"),
    (check_masked_softmax, msm_fill_minus_1e4_rows_zeroed, "fill_too_weak", "when the scores are large"),
    (check_masked_softmax, msm_no_nan_to_num, "nan_fully_masked_row", "weights contain NaN"),
    (check_masked_softmax, msm_renormalised, "mask_renormalised_after_softmax", "does not sum to 1"),
    (check_masked_softmax, msm_renormalised_nan, "nan_fully_masked_row", "weights contain NaN"),
    (check_masked_softmax, msm_after_softmax, "mask_after_softmax", "does not sum to 1"),
    (check_masked_softmax, msm_inverted, "mask_inverted", "masked key got attention"),
    (check_masked_softmax, msm_none_not_handled, "mask_none_not_handled", "raised TypeError"),
    (check_masked_softmax, msm_in_place, "input_modified_in_place", "changed its input scores in place"),
    (check_masked_softmax, msm_wrong_dim, "softmax_over_queries", "does not sum to 1"),
    (check_masked_softmax, msm_stub, "not_implemented", "raised NotImplementedError"),
    (check_masked_softmax, None, None, "expected the function masked_softmax, got None"),
    # ---- found by a blind round
    (check_key_padding_mask, kpm_left_negative_slice, None, "length 0 must be all padding"),
    (check_key_padding_mask, kpm_left_from_lengths, "left_padding_from_lengths", "the mask is wrong"),
    (check_key_padding_mask, kpm_left_off_by_one, "padding_off_by_one", "the mask is wrong"),
    (check_combine_masks, combine_breaks_at_none, "combine_stops_at_none", "returned None although"),
    (check_combine_masks, combine_first_two, "combine_drops_a_mask", "dropped a mask"),
    (check_masked_softmax, msm_mask_times_inf, "mask_times_inf", "weights contain NaN"),
    (check_masked_softmax, msm_naive_exp, "softmax_unstable", "does not sum to 1"),
    (check_masked_softmax, msm_scores_without_mask, "weights_are_scores", "does not sum to 1"),
    (check_key_padding_mask, kpm_axes_in_front, "padding_mask_2d", "wrong shape"),
    (check_key_padding_mask, kpm_expanded, "padding_mask_expanded", "wrong shape"),
    (check_combine_masks, combine_python_and, "tensor_truth_value", "raised RuntimeError"),
    (check_masked_softmax, msm_mask_unsqueezed, "mask_reshaped", "wrong shape"),
]
LATE_FAILURE = {check_causal_mask: causal_mask_upper, check_key_padding_mask: kpm_sides_swapped,
                check_combine_masks: combine_two, check_masked_softmax: msm_fill_minus_1e4_rows_zeroed}  # fails late, after the check did most of its work
STUB = {check_causal_mask: causal_mask_stub, check_key_padding_mask: kpm_stub, check_combine_masks: combine_stub,
        check_masked_softmax: msm_stub}  # check -> the untouched learner stub
