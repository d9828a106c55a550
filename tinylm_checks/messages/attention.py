"""Stage 01: attention scores, scaled dot-product attention, single-head self-attention."""

MISTAKES = {
    "no_scaling": (
        "the scores are not scaled: q @ k^T must be divided by sqrt(d_k)",
        "divide the scores by math.sqrt(d_k), where d_k = q.shape[-1] (the width of a query)"),
    "scale_by_d_k": (
        "the scores are divided by d_k instead of sqrt(d_k)",
        "use math.sqrt(d_k), not d_k"),
    "scale_multiplied": (
        "the scores are multiplied by sqrt(d_k) instead of divided",
        "divide by math.sqrt(d_k); scaling keeps the scores' variance near 1"),
    "scale_by_sqrt_d_model": (
        "the scores are divided by sqrt(d_model) instead of sqrt(d_k) = sqrt(d_model // num_heads)",
        "each head has width d_k = d_model // num_heads; take q.shape[-1] inside the attention function"),
    "transposed_scores": (
        "the scores are k @ q^T (keys x queries) instead of q @ k^T",
        "row i of the scores belongs to query i: q @ k.transpose(-2, -1)"),
    "softmax_over_queries": (
        "the softmax runs over the queries (dim=-2, which is dim=1 of 3-D scores) instead of over the keys "
        "(dim=-1)",
        "use torch.softmax(scores, dim=-1): each query's weights over the keys sum to 1"),
    "softmax_over_heads": (
        "the softmax runs over the heads (dim=1) instead of the keys",
        "torch.softmax(scores, dim=-1): over the keys, the last axis, whatever the leading axes are"),
    "softmax_over_batch": (
        "the softmax runs over the batch (dim=0) instead of the keys",
        "torch.softmax(scores, dim=-1): over the keys, the last axis"),
    "mask_after_softmax": (
        "the mask is applied after the softmax, so the remaining weights no longer sum to 1",
        "set masked scores to float('-inf') with scores.masked_fill(~mask, float('-inf')) before the softmax"),
    "mask_multiplied": (
        "masked scores are set to 0 (mask multiplied in, or filled with 0); a score of 0 still gets weight "
        "after the softmax",
        "a score of 0 is not 'no attention': use scores.masked_fill(~mask, float('-inf'))"),
    "mask_ignored": (
        "the mask argument is ignored",
        "when mask is not None, fill the scores where mask is False with float('-inf') before the softmax"),
    "mask_inverted": (
        "the mask is inverted: in this course True means 'may attend', as in F.scaled_dot_product_attention "
        "(nn.MultiheadAttention's attn_mask is the opposite)",
        "fill where the mask is False: scores.masked_fill(~mask, float('-inf'))"),
    "mask_added": (
        "the bool mask is added to the scores instead of setting masked scores to -inf",
        "use scores.masked_fill(~mask, float('-inf')) rather than adding the mask"),
    "mask_transposed": (
        "the mask is applied along the wrong axis (transposed): its rows must be the queries and its columns "
        "the keys",
        "use the mask as it comes, without .transpose or .T: it already broadcasts to (..., T_q, T_k), one row "
        "per query"),
    "mask_reshaped": (
        "the mask's shape is changed (unsqueeze, view, [:, None]) before it is used; it already broadcasts to "
        "the scores",
        "use the mask unchanged: a (T, T) causal mask and a padding mask with size-1 axes both broadcast to the "
        "scores as they are"),
    "finite_fill": (
        "masked scores are filled with a large negative number instead of -inf, so a query that may attend to "
        "no key gets uniform weights instead of zeros",
        "fill with float('-inf'), then weights.nan_to_num(0.0): a query with no allowed key then gets zero "
        "weights and a zero output"),
    "mask_renormalised_after_softmax": (
        "the softmax runs over every key, then the masked weights are zeroed and the rest renormalised: when a "
        "masked key has the largest score, the allowed weights underflow to 0 and the row becomes 0 / 0",
        "mask the scores before the softmax: scores.masked_fill(~mask, float('-inf'))"),
    "fill_too_weak": (
        "masked scores are filled with a finite number (like -1e4) that large scores outweigh, so masked keys "
        "get weight",
        "fill with float('-inf'): no score can outweigh it"),
    "swapped_outputs": (
        "the function returns (weights, out) instead of (out, weights)",
        "return out first, then weights"),
    "values_not_projected": (
        "the values are x itself: W_V is not applied",
        "v = self.W_V(x)"),
    "q_k_swapped": (
        "queries and keys are swapped (W_K(x) used as the queries)",
        "q = self.W_Q(x) and k = self.W_K(x); the scores are q @ k^T"),
    "projection_reused": (
        "one projection is used for two of q, k, v (e.g. k = self.W_Q(x) after a copy-paste)",
        "q = self.W_Q(x), k = self.W_K(x), v = self.W_V(x): three different layers"),
    "sqrt_precedence": (
        "d_k ** 1/2 is (d_k ** 1) / 2 = d_k / 2, not sqrt(d_k)",
        "write math.sqrt(d_k) or d_k ** 0.5"),
    "int_sqrt": (
        "sqrt(d_k) is rounded to an integer",
        "keep the square root a float: math.sqrt(d_k)"),
    "d_k_from_wrong_dim": (
        "d_k is read from the wrong dimension (it is the last one: q.shape[-1])",
        "d_k = q.shape[-1] (or q.size(-1)): the width of one query vector"),
    "weights_are_scores": (
        "the returned weights are the scores before the softmax",
        "return the softmax of the (masked) scores as the weights"),
    "always_causal": (
        "a causal mask is applied even when no mask is passed",
        "apply the mask you are given, and none when mask is None"),
    "weights_not_returned": (
        "only the output is returned, not (out, weights)",
        "end with `return out, weights`"),
    "shared_projection": (
        "the projections are one shared layer, not separate layers",
        "create a separate nn.Linear(d_model, d_model) for each of W_Q, W_K, W_V"),
    "nan_fully_masked_row": (
        "a query whose keys are all masked gets NaN weights (softmax of a row of -inf)",
        "after the softmax: weights = weights.nan_to_num(0.0)"),
    "dropout_on_weights": (
        "dropout is applied to the weights (some are 0, the rest scaled up by 1/(1-p))",
        "no dropout in this exercise: the check compares exact values"),
    "extra_output_projection": (
        "SelfAttention has an output projection; in this course that is W_O, in stage 02",
        "SelfAttention holds exactly W_Q, W_K, W_V = nn.Linear(d_model, d_model); no other parameters"),
}

MESSAGES = {
}
