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
    "keys_not_transposed": (
        "the keys are not transposed: q @ k multiplies (T_q, d_k) by (T_k, d_k), which only runs when T_k = d_k, "
        "and then gives the wrong scores",
        "q @ k.transpose(-2, -1): every query row meets every key row (counted from the end, for any batch axes)"),
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
    # how a module that calls the attention function (SelfAttention here, MultiHeadSelfAttention in stage 02)
    # makes some of these mistakes: the module exercises' wording of their hints
    "attention.module_hints": {
        "mask_ignored": "forward(x, mask) must use its mask: pass it on to scaled_dot_product_attention(q, k, v, mask)",
        "mask_inverted": "True = may attend: pass the mask on unchanged (no ~mask), and inside the attention fill where "
                         "it is False: scores.masked_fill(~mask, float('-inf'))",
    },
    # ---- an (out, weights) pair
    "attention.pair.end_with": "end with `{returns}`",
    "attention.pair.a_pair": "a pair (out, weights)",
    "attention.pair.one_tensor": {
        "problem": "{what} returned one tensor",
        "got": "a tensor {shape}",
    },
    "attention.pair.none": {
        "problem": "{what} returned None",
    },
    "attention.pair.not_a_pair": {
        "problem": "{what} must return a pair (out, weights)",
    },
    "attention.pair.of_length": "{kind} of length {n}",
    "attention.pair.swapped": {
        "problem": "{what} returned its outputs in the wrong order",
        "expected": "(out {out_shape}, weights {w_shape})",
    },
    "attention.pair.nan_where_all_allowed": {
        "problem": "the weights are NaN exactly in the rows where the mask allows every key",
        "expected": "True in the mask = may attend",
    },
    "attention.pair.nan_where_none_allowed": {
        "problem": "NaN in the weights where a query may attend to no key",
        "expected": "finite values: the reference gives that query zero weights and a zero output",
        "got": "NaN at {at}: the softmax of a row of -inf is 0/0",
    },
    "attention.pair.nan": {
        "problem": "the attention weights contain NaN",
        "got": "NaN at {at}",
        "hint": "NaN comes from 0/0 or inf - inf: a softmax over a row where every score is -inf, or a -inf multiplied "
                "by 0",
    },
    "attention.pair.out_returned_by": "out returned by {what}",
    "attention.pair.weights_returned_by": "weights returned by {what}",
    # ---- comparing the weights
    "attention.weights.fallback": "the weights come from the scores: look at how q and k are made and multiplied, the "
                                  "scale and the softmax",
    "attention.weights.fallback_mask": "{fallback} and the mask",
    "attention.weights.masked_key": {
        "problem": "a masked key got attention weight{when}",
        "expected": "weight 0 where the mask is False (e.g. {at})",
        "got": "weight {weight:.4g}{inverted}",
        "hint": "masked keys must end up with weight 0: is the mask used (passed on, if your code calls the attention "
                "function), and are masked scores set to -inf before the softmax?",
    },
    "attention.weights.when_large": " when the scores are large",
    "attention.weights.allowed_got_zero": "; and every key the mask allows got weight 0",
    "attention.weights.no_key_allowed": {
        "problem": "a query that may attend to no key got non-zero weights",
        "expected": "all-zero weights at {at} (as torch.nn.functional.scaled_dot_product_attention gives)",
        "got": "{values}{uniform}",
        "hint": "fill masked scores with float('-inf'), then weights.nan_to_num(0.0)",
    },
    "attention.weights.uniform": "; uniform weights",
    "attention.weights.dropout": {
        "problem": "some attention weights are 0 and the others are scaled up",
        "got": "{n} weights set to 0, the rest multiplied by {ratio:.4f}",
    },
    "attention.weights.row_sum": {
        "problem": "a row of the attention weights does not sum to 1",
        "expected": "each row of weights (one query's weights over all keys) sums to 1",
        "got": "the row of {at} sums to {total:.4f}",
    },
    "attention.weights.row_sum_hint": "the softmax must run over the keys (dim=-1)",
    "attention.weights.row_sum_hint_mask": "the softmax must run over the keys (dim=-1), and the mask must be applied "
                                           "to the scores before it",
    "attention.weights.what": "the attention weights",
    "attention.out.what": "the output (weights @ v)",
    "attention.out.after_weights": "the last step, out = weights @ v",
    "attention.out.fallback": "the weights are right, so look after them: {after_weights}",
    # ---- attention_scores
    "attention_scores.tried": "q {q}, k {k}, float64, seed {seed}",
    "attention_scores.what": "the scores",
    "attention_scores.shape_hint": "scores have one row per query and one column per key: (..., T_q, T_k)",
    "attention_scores.fallback": "scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]): compare your expression "
                                 "with this, term by term",
    "attention_scores.passed": "shape (..., T_q, T_k) and q @ k^T / sqrt(d_k) on 3-D and 4-D inputs with T_q != T_k",
    # ---- scaled_dot_product_attention
    "sdpa.tried": "q {q}, k {k}, v {v}, float64, seed {seed}, {label}",
    "sdpa.no_mask": "no mask",
    "sdpa.padding": "key-padding mask {shape} (True = real key)",
    "sdpa.random_mask": "bool mask {shape} (True = may attend)",
    "sdpa.empty_row": "bool mask {shape} in which query 0 of batch 0 may attend to no key",
    "sdpa.large": "large negative scores (q > 0, k < 0, both times {large:g}), bool mask {shape}",
    "sdpa.passed": "out and weights equal the reference on 3-D and 4-D inputs; rows sum to 1; masked keys get weight "
                   "exactly 0, also with large scores; a query with no allowed key gets zero weights and a zero output",
    # ---- SelfAttention
    "self_attention.created": "SelfAttention(d_model={D}) was created",
    "self_attention.param_count": {
        "problem": "wrong number of parameters",
        "expected": "3 (D^2 + D) = {expected_n} for D = {D}",
        "hint": "SelfAttention holds exactly W_Q, W_K, W_V = nn.Linear(d_model, d_model); no other parameters",
    },
    "self_attention.tried": "x {shape}, float64, seed {seed}{label}",
    "self_attention.no_mask": ", mask=None",
    "self_attention.causal": ", causal mask (T, T)",
    "self_attention.padding": ", key-padding mask (B, 1, T)",
    "self_attention.after_weights": "out = weights @ v, with v = self.W_V(x)",
    "self_attention.passed": "3 (D^2 + D) = {n} parameters; out (B, T, D) and weights (B, T, T) equal the reference "
                             "with copied weights",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "no_scaling":
        "the line that computes the scores, after the matrix product: is anything dividing it?",
    "scale_by_d_k":
        "the divisor on the line that computes the scores: what you do to d_k before dividing",
    "scale_multiplied":
        "the operator between q @ k^T and the scale on the line that computes the scores",
    "scale_by_sqrt_d_model":
        "the width you take the square root of: one head's width, or the whole model's?",
    "keys_not_transposed":
        "the matrix product that computes the scores: which axis of k meets the queries' features?",
    "transposed_scores":
        "the matrix product on your scores line: which operand comes first, which is transposed",
    "softmax_over_queries":
        "the dim argument of your softmax: which axis of the scores holds the keys?",
    "softmax_over_heads":
        "the dim of your softmax: counted on 4-D scores, which axis holds the keys?",
    "softmax_over_batch":
        "the dim of your softmax: which axis of the scores holds the keys, however many come first?",
    "mask_after_softmax":
        "the order of two steps: where the mask meets the scores, and where the softmax runs",
    "mask_multiplied":
        "the line where the mask meets the scores: the value the masked positions end up with",
    "mask_ignored":
        "the lines between the scores and the softmax: which one reads the mask argument?",
    "mask_inverted":
        "every place your code builds or reads a mask: what True stands for there",
    "mask_added":
        "the operation that joins the mask and the scores: what does a bool become in a sum?",
    "mask_transposed":
        "the mask on its way to the scores: any step that swaps its last two axes",
    "mask_reshaped":
        "the lines between receiving mask and using it: every change to its shape",
    "finite_fill":
        "the fill value for masked scores, and what a row with no allowed key gets from the softmax",
    "mask_renormalised_after_softmax":
        "the step that uses the mask: does it act on the scores or on the weights?",
    "fill_too_weak":
        "the value you fill masked scores with, next to the largest score a query can get",
    "swapped_outputs":
        "the return statement at the end of your function: the order of the pair",
    "values_not_projected":
        "the lines of your forward that make q, k and v: where v comes from",
    "q_k_swapped":
        "the lines of your forward that make q and k: which layer each one calls",
    "projection_reused":
        "the layer each of q, k and v calls in your forward (copy-pasted lines above all)",
    "sqrt_precedence":
        "the exponent in your scale: which does Python evaluate first, ** or /?",
    "int_sqrt":
        "the line that takes the square root: any int(), round(), // or integer math on the way",
    "d_k_from_wrong_dim":
        "the line that sets d_k: which tensor and which axis it reads",
    "weights_are_scores":
        "the variable you return as the weights: which line last assigned it?",
    "always_causal":
        "any mask your function builds by itself, and the path taken when mask is None",
    "weights_not_returned":
        "the return line of your function (or forward): what it hands back",
    "shared_projection":
        "your __init__: how many layers it creates for W_Q, W_K and W_V",
    "nan_fully_masked_row":
        "the lines right after the softmax: what becomes of a row that was all -inf",
    "dropout_on_weights":
        "anything between your softmax and the product with v: a dropout layer or call",
    "extra_output_projection":
        "the layers your __init__ creates, and how many the exercise names",
}
