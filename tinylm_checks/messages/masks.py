"""Stages 01 and 03: the causal mask, the key-padding mask, combining masks, the masked softmax."""

MISTAKES = {
    "causal_mask_upper": (
        "the mask is upper-triangular: position t may see the future and not the past",
        "use torch.tril (lower triangle): row t (the query) may see columns 0..t (the keys)"),
    "diagonal_masked": (
        "the diagonal is masked: a position must be allowed to attend to itself",
        "keep the diagonal: torch.tril(torch.ones(T, T, dtype=torch.bool)) with the default diagonal=0"),
    "mask_not_bool": (
        "the mask is not a bool tensor",
        "create it with dtype=torch.bool, or compare (positions < lengths gives a bool tensor)"),
    "mask_peeks_ahead": (
        "the mask lets position t see position t + 1 (tril with diagonal=1)",
        "torch.tril(..., diagonal=0): the diagonal is the last allowed position"),
    "mask_all_true": (
        "the mask allows every position: nothing is masked",
        "keep only the lower triangle: torch.tril(torch.ones(T, T, dtype=torch.bool))"),
    "additive_float_mask": (
        "the mask is an additive float mask (0 / -inf); this course uses bool masks",
        "return True where attention is allowed: torch.tril(torch.ones(T, T, dtype=torch.bool))"),
    "padding_on_query_axis": (
        "the padding mask is put on the query axis, (B, 1, T, 1): it hides whole rows (queries) instead of "
        "columns (keys)",
        "padding hides keys, the last axis of the scores: index it as [:, None, None, :] -> (B, 1, 1, T)"),
    "padding_mask_2d": (
        "the padding mask's batch axis lines up with the queries ((B, T), or (1, 1, B, T), against scores (B, "
        "H, T, T)), so it only works when B == T",
        "add the two size-1 axes for heads and queries: mask[:, None, None, :] -> (B, 1, 1, T)"),
    "padding_mask_expanded": (
        "the padding mask is expanded to (B, 1, T, T): it broadcasts, but only to T queries; the exercise asks "
        "for (B, 1, 1, T), which fits any number of queries",
        "leave the query axis at size 1: real[:, None, None, :] -> (B, 1, 1, T)"),
    "padding_mask_3d": (
        "the padding mask is (B, 1, T): against scores (B, H, T, T) its batch axis lines up with the heads, so "
        "it only works for single-head scores or when B == H",
        "one more size-1 axis, for the heads: (B, 1, 1, T)"),
    "padding_off_by_one": (
        "the padding mask is off by one: it keeps one position too many or too few",
        "sequence b has lengths[b] real tokens, at positions 0 .. lengths[b] - 1 (right padding): positions < "
        "lengths[b], with a strict <"),
    "padding_mask_inverted": (
        "the padding mask is True on padding (nn.MultiheadAttention's key_padding_mask convention); here True = "
        "a real token that may be attended to",
        "return True for real tokens and False for padding"),
    "padding_side_ignored": (
        "padding_side='left' gives the right-padding mask: with left padding the real tokens are the last "
        "lengths[b] positions",
        "for padding_side='left', real positions are those >= T - lengths[b]"),
    "left_padding_from_lengths": (
        "with left padding the real tokens are taken to start at position lengths[b]; they start at T - lengths[b]",
        "for padding_side='left', real positions are those >= T - lengths[b]"),
    "padding_sides_swapped": (
        "'left' and 'right' are swapped: right padding means the padding comes after the real tokens",
        "padding_side='right': real tokens first (positions < lengths[b]); 'left': real tokens last (positions "
        ">= T - lengths[b])"),
    "padding_width_from_lengths": (
        "the mask's width comes from the lengths (lengths.max()) instead of T",
        "the mask has T key positions: torch.arange(T), whatever the longest sequence is"),
    "combine_or": (
        "the masks are combined with | (or): a key is then allowed if ANY mask allows it, so padding and future "
        "keys leak in",
        "a key may be attended to only if every mask allows it: combine with & (and)"),
    "combine_xor": (
        "the masks are combined with ^ (exclusive or)",
        "a key may be attended to only if every mask allows it: combine with & (and)"),
    "combine_drops_a_mask": (
        "a mask is dropped: the result combines only some of the masks (the first, the last, or the first two)",
        "loop over every mask in *masks and AND each one that is not None into the result"),
    "combine_none_not_skipped": (
        "a None mask is not skipped: None means 'no mask', and & with None raises TypeError",
        "skip the masks that are None: `if m is None: continue`"),
    "combine_stops_at_none": (
        "combining stops at the first None (break or return) instead of skipping it, so the masks after it are "
        "dropped",
        "skip a None with `continue` and keep combining the masks after it"),
    "combine_all_none": (
        "with every mask None the result must be None (no mask at all)",
        "start from out = None, and return out unchanged when every mask is None"),
    "combine_two_masks_only": (
        "combine_masks takes exactly two masks; it must take any number (*masks)",
        "def combine_masks(*masks): loop over masks"),
    "mask_times_inf": (
        "the mask is turned into scores by multiplying it with -inf ((~mask) * -inf): the allowed keys get 0 x "
        "-inf = NaN",
        "set the masked scores with scores.masked_fill(~mask, float('-inf')) (or torch.where), which never "
        "multiplies by infinity"),
    "mask_none_not_handled": (
        "masked_softmax(scores) without a mask raises: mask=None must give the plain softmax",
        "start with `if mask is None: return torch.softmax(scores, dim=-1)`"),
}

MESSAGES = {
}
