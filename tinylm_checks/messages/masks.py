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
        "skip every mask that is None, the first one too: start from None and combine only the masks that are "
        "not None (`if m is None: continue` in the loop)"),
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
    # ---- shared by the mask exercises
    "masks.what": "the mask",
    # ---- causal_mask
    "causal_mask.hints": {
        "mask_inverted": "True on and below the diagonal: torch.tril(...), not its complement",
    },
    "causal_mask.wrong_shape": {
        "problem": "the mask has the wrong shape",
        "hint": "one row per query position, one column per key position",
    },
    "causal_mask.wrong_dtype": {
        "problem": "the mask has dtype {dtype}",
    },
    "causal_mask.wrong": {
        "problem": "the mask is wrong",
        "expected": "row {row} (query {row}): {expected_row} (1 = may attend)",
        "got": "row {row} (query {row}): {got_row}",
        "hint": "row t must be True in columns 0..t and False after",
    },
    "causal_mask.passed": "bool (T, T), True on and below the diagonal, for T in {lengths}",
    # ---- key_padding_mask
    "key_padding_mask.tried": "lengths={lengths}, T={T}, padding_side={padding_side} (B = {B})",
    "key_padding_mask.wrong_shape": {
        "problem": "the mask has the wrong shape",
        "expected": "(B, 1, 1, T) = {shape}: it must broadcast to scores (B, H, T_q, T)",
        "hint": "batch first, then size-1 axes for heads and queries, then the keys: (B, 1, 1, T)",
    },
    "key_padding_mask.wrong_dtype": {
        "problem": "the mask has dtype {dtype}",
        "expected": "torch.bool (True = real token)",
    },
    "key_padding_mask.wrong": {
        "problem": "the mask is wrong",
        "expected": "sequence {sequence} (length {length}): {expected_row} (1 = real token)",
        "got": "sequence {sequence}: {got_row}",
        "hint": "True for the lengths[b] real tokens of sequence b: the first ones with right padding, the last ones "
                "with left padding",
    },
    "key_padding_mask.left_off_by_one": "with left padding sequence b's real tokens are the last lengths[b]: positions "
                                        "T - lengths[b] .. T - 1, i.e. positions >= T - lengths[b]",
    "key_padding_mask.tried_empty": "lengths={lengths}, T={T}, padding_side={padding_side} (sequence 0 has no real "
                                    "token)",
    "key_padding_mask.empty_sequence": {
        "problem": "a sequence of length 0 must be all padding",
        "expected": "sequence 0: {zeros}",
        "hint": "a length of 0 needs no special case with a comparison (positions < 0 and positions >= T are False "
                "everywhere); with slicing, x[-0:] is the whole tensor, not an empty one",
    },
    "key_padding_mask.right_padding_mask": "right-padding mask",
    "key_padding_mask.left_padding_mask": "left-padding mask",
    "key_padding_mask.tried_attention": "reference MultiHeadSelfAttention(d_model={D}, num_heads={H}), x {shape}, your "
                                        "{padding_mask} for lengths={lengths}",
    "key_padding_mask.padded_key_weight": {
        "problem": "a padded key got attention weight",
        "expected": "weight 0 at {at}",
    },
    "key_padding_mask.padding_visible": {
        "problem": "changing the padded tokens changed the output at a real token",
        "got": "largest change {change:.3g}",
        "hint": "padding must be invisible to real tokens",
    },
    "key_padding_mask.passed": "bool (B, 1, 1, T), True on real tokens, for right and left padding; in multi-head "
                               "attention padded keys get weight 0 and changing them changes nothing at the real tokens",
    # ---- combine_masks
    "combine_masks.left_padding": "left-padding mask {shape}",
    "combine_masks.causal": "causal mask {shape}",
    "combine_masks.random": "random mask {shape}",
    "combine_masks.tried": "combine_masks({masks}), B = {B}, T = {T}",
    "combine_masks.argument": "mask {n}",
    "combine_masks.all_none": {
        "problem": "combine_masks of only None must return None",
    },
    "combine_masks.a_tensor": "{shape} tensor",
    "combine_masks.returned_none": {
        "problem": "combine_masks returned None although some masks are not None",
        "expected": "the AND of the masks that are not None, shape {shape}",
        "hint": "every path through the function must return the combined mask",
    },
    "combine_masks.dropped_mask": {
        "problem": "combine_masks dropped a mask",
        "expected": "the AND of every mask, of the broadcast shape {shape}",
        "got": "a mask of shape {got_shape}: the AND of only some of them",
    },
    "combine_masks.what": "the combined mask",
    "combine_masks.shape_hint": "the masks broadcast together: (B, 1, 1, T) and (T, T) give (B, 1, T, T); & does that",
    "combine_masks.wrong_dtype": {
        "problem": "the combined mask has dtype {dtype}",
    },
    "combine_masks.wrong": {
        "problem": "the combined mask is wrong",
        "expected": "{expected_value} at {at}: a key is allowed only where every mask allows it",
        "hint": "a key is allowed only where every mask allows it: AND every mask that is not None",
    },
    "combine_masks.tried_attention": "reference MultiHeadSelfAttention(d_model={D}, num_heads={H}), x {shape}, your "
                                     "combine_masks(left padding for lengths={lengths}, causal)",
    "combine_masks.future_visible": {
        "problem": "changing the tokens after position {position} changed the output at position {position} or before",
        "hint": "the combined mask must keep the causal mask: no key after the query",
    },
    "combine_masks.past_hidden": {
        "problem": "changing the token at position {earlier} did not change the output at position {position}",
        "hint": "a real token must see the real tokens before it: the mask hides too much",
    },
    "combine_masks.passed": "the AND of any number of masks, None skipped (None if all are None), inputs unchanged; in "
                            "multi-head attention with left padding and a causal mask, later tokens change nothing and "
                            "earlier real ones do",
    # ---- masked_softmax
    "masked_softmax.hints": {
        "softmax_unstable": "use torch.softmax on the masked scores: it subtracts each row's maximum for you, so exp() "
                            "neither overflows nor underflows to all zeros",
    },
    "masked_softmax.random": "random mask",
    "masked_softmax.no_mask": "mask=None",
    "masked_softmax.padding_causal": "left padding & causal (padded queries may attend to no key; sequence 0 is all "
                                     "padding)",
    "masked_softmax.random_large": "random mask, large negative scores (around -1e7)",
    "masked_softmax.with_mask": "bool mask {shape}: {label}",
    "masked_softmax.tried": "scores {shape}, float64, seed {seed}, {label}",
    "masked_softmax.nan": {
        "problem": "the weights contain NaN",
        "got": "NaN in the row of {at}",
        "hint": "NaN comes from 0 / 0 (a row whose weights are all 0 before dividing) or from 0 x inf (a mask "
                "multiplied by -inf)",
    },
    "masked_softmax.what": "the weights",
    "masked_softmax.shape_hint": "the weights have the shape of the scores",
    "masked_softmax.fallback": "fill the masked scores with float('-inf'), softmax over the keys (dim=-1), then turn "
                               "the NaN of rows with no allowed key into 0",
    "masked_softmax.passed": "softmax over the keys; masked keys get exactly 0, also with large scores; a query with "
                             "no allowed key gets all zeros, never NaN; mask=None is the plain softmax",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "causal_mask_upper":
        "the triangle (or comparison) that builds your mask: which side of the diagonal it keeps",
    "diagonal_masked":
        "the diagonal argument (or comparison) that builds your mask: is row t, column t kept?",
    "mask_not_bool":
        "the line that creates your mask: the dtype of the tensor it produces",
    "mask_peeks_ahead":
        "the diagonal argument of your tril: which column is the last one row t may see?",
    "mask_all_true":
        "the line that builds your mask: where does the full matrix become a triangle?",
    "additive_float_mask":
        "what your function returns: its dtype and the values it holds",
    "padding_on_query_axis":
        "the indexing that adds the size-1 axes: which position the T axis ends up in",
    "padding_mask_2d":
        "the return line: how many axes your mask has, and where the size-1 ones go",
    "padding_mask_expanded":
        "any expand, repeat or comparison that gives your mask a full-size query axis",
    "padding_mask_3d":
        "the size-1 axes you add before returning: how many, next to the axes of the scores?",
    "padding_off_by_one":
        "the comparison between positions and lengths[b]: its operator and any ± 1 on either side",
    "padding_mask_inverted":
        "the comparison that builds your mask: which tokens it makes True",
    "padding_side_ignored":
        "the branch on padding_side: does the 'left' case build anything different?",
    "left_padding_from_lengths":
        "the comparison in your padding_side='left' branch: where it makes the real positions start",
    "padding_sides_swapped":
        "the branches on padding_side: which comparison 'left' runs and which 'right' runs",
    "padding_width_from_lengths":
        "the range of positions you compare with the lengths: what sets its length",
    "combine_or":
        "the operator that joins two masks in your loop: when should a key survive?",
    "combine_xor":
        "the operator that joins the masks: what it gives when both masks allow a key",
    "combine_drops_a_mask":
        "your loop over masks: does every mask, first, last and in between, reach the result?",
    "combine_none_not_skipped":
        "every mask your code combines, the one it starts from included: what happens when it is None",
    "combine_stops_at_none":
        "the statement your loop runs on a None mask, and what becomes of the masks after it",
    "combine_all_none":
        "the value your result starts from, and what you return when the loop added nothing",
    "combine_two_masks_only":
        "the def line of combine_masks: its parameter list",
    "mask_times_inf":
        "the line where the mask meets the scores: which arithmetic touches the allowed keys",
    "mask_none_not_handled":
        "the first lines of masked_softmax: the path taken when mask is None",
}
