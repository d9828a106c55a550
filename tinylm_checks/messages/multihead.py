"""Stage 02: splitting and merging heads, multi-head self-attention."""

MISTAKES = {
    "split_without_transpose": (
        "heads are split with .view(B, H, T, d_k) and no transpose, which mixes positions and features",
        "x.view(B, T, H, d_k).transpose(1, 2): split the features, then move heads before time"),
    "split_not_transposed": (
        "the split returns (B, T, H, d_k): heads must come before time",
        "add .transpose(1, 2) after the view: (B, T, H, d_k) -> (B, H, T, d_k)"),
    "merge_without_transpose": (
        "heads are merged with .reshape(B, T, D) without transposing (B, H, T, d_k) back to (B, T, H, d_k) first",
        "x.transpose(1, 2).reshape(B, T, H * d_k): undo the transpose before merging"),
    "w_o_not_applied": (
        "the output projection W_O is never applied to the merged heads",
        "return self.W_O(merge_heads(out)), weights"),
    "weights_averaged_over_heads": (
        "the weights are averaged (or summed) over heads; return one (T, T) map per head",
        "return the weights exactly as scaled_dot_product_attention gives them: (B, H, T, T)"),
    "no_divisibility_check": (
        "no ValueError when d_model is not divisible by num_heads",
        "in __init__: if d_model % num_heads != 0: raise ValueError(...), before building anything"),
    "float_d_k": (
        "d_k is computed with / (a float) instead of // (an int)",
        "d_k = d_model // num_heads (integer division); .view() needs ints"),
    "heads_repeated": (
        "every head reads the same d_k features (one slice copied H times with repeat or expand): head h must "
        "read features h*d_k ... (h+1)*d_k - 1",
        "split the features, don't copy them: x.view(B, T, H, d_k).transpose(1, 2) (repeat and expand copy one "
        "slice; a view cuts D into H slices)"),
    "split_interleaved": (
        "the features are split as (d_k, H) instead of (H, d_k): each head gets every H-th feature",
        "x.view(B, T, H, d_k): head h takes the h-th block of d_k consecutive features"),
    "scale_by_d_model": (
        "the scores are divided by d_model instead of sqrt(d_k): d_model is the width of all the heads together, and "
        "the square root is missing too",
        "each head's scores are scaled by that head's own width, under a square root: look at where the scale is "
        "computed, and at which width it reads"),
    "causal_mask_hides_diagonal": (
        "the causal mask hides the diagonal too (triu(diagonal=0), or tril(diagonal=-1)): no position may attend to "
        "itself, and position 0 may attend to no key at all, so its softmax over -inf only gives NaN",
        "a position may attend to itself and to every position before it; only the keys after the query are "
        "hidden: look at the diagonal argument where the mask is built"),
    "merge_interleaved": (
        "the heads are merged as (d_k, H) instead of (H, d_k), interleaving their features",
        "x.transpose(1, 2).reshape(B, T, H * d_k): heads first, then each head's d_k features"),
}

MESSAGES = {
    # in MultiHeadSelfAttention the learner calls the imported scaled_dot_product_attention and writes no
    # masked_fill: hints about the mask say what to do with it there
    "multi_head_attention.hints": {
        "mask_inverted": "pass the mask on unchanged to scaled_dot_product_attention: in this course True = may attend "
                         "(nn.MultiheadAttention's attn_mask is the one where True = blocked)",
        "mask_reshaped": "pass the mask on unchanged: a (T, T) causal mask and a (B, 1, 1, T) padding mask both "
                         "broadcast to the scores (B, H, T, T) as they are",
        "mask_transposed": "pass the mask on unchanged (no .transpose): its rows are the queries, its columns the keys",
    },
    # ---- split_heads
    "split_heads.tried": "x {shape}, num_heads={H}, float64, seed {seed}",
    "split_heads.what": "the split",
    "split_heads.shape_hint": "(B, T, D) -> (B, H, T, d_k): print the shape after each step",
    "split_heads.fallback": "head h must hold features h*d_k ... (h+1)*d_k - 1 of every position: print split_heads of "
                            "the small x of the demo above (x[0, t, f] = 10 t + f) and read where each number went",
    "split_heads.passed": "(B, T, D) -> (B, H, T, d_k) with head h holding features h*d_k ... (h+1)*d_k - 1",
    # ---- merge_heads
    "merge_heads.fallback": "merge_heads must undo split_heads: merge_heads(split_heads(x, H)) gives x back; try it on "
                            "the small x of the demo above",
    "merge_heads.tried_split": "x {shape} (the output of split_heads), float64, seed {seed}",
    "merge_heads.tried_fresh": "x {shape} (a new contiguous tensor), float64, seed {seed}",
    "merge_heads.what": "the merge",
    "merge_heads.shape_hint": "(B, H, T, d_k) -> (B, T, H * d_k)",
    "merge_heads.round_trip": "merge_heads(split_heads(x)) (it must give x back)",
    "merge_heads.passed": "(B, H, T, d_k) -> (B, T, H * d_k), and merge_heads(split_heads(x)) == x",
    # ---- MultiHeadSelfAttention
    "multi_head_attention.created": "MultiHeadSelfAttention(d_model={D}, num_heads={H}) was created",
    "heads.wrong_error": {
        "problem": "{cls}{bad} raised {error}, not ValueError",
        "mistake_hint": "raise ValueError yourself, with a message, before building anything",
    },
    "heads.no_error": {
        "problem": "{cls}{bad} was created without complaint",
        "expected": "ValueError: d_model must be divisible by num_heads",
    },
    "multi_head_attention.param_count": {
        "problem": "wrong number of parameters",
        "expected": "4 (D^2 + D) = {expected_n} for D = {D}",
        "mistake_hint": "are some of W_Q, W_K, W_V, W_O the same layer? they must be four separate layers",
        "hint": "the module holds exactly W_Q, W_K, W_V, W_O = nn.Linear(d_model, d_model); heads share these layers "
                "and split their outputs",
    },
    "multi_head_attention.no_mask": ", mask=None",
    "multi_head_attention.causal": ", causal mask (T, T)",
    "multi_head_attention.padding": ", key-padding mask (B, 1, 1, T)",
    "multi_head_attention.tried": "d_model={D}, num_heads={H}, x {shape}, float64, seed {seed}{label}",
    "multi_head_attention.weights_averaged": {
        "problem": "the weights have shape (B, T, T)",
        "expected": "(B, H, T, T) = {shape}",
    },
    "multi_head_attention.out_what": "the output W_O(merge_heads(weights @ v))",
    "multi_head_attention.after_weights": "the merge of the heads (transpose back, then reshape) and W_O",
    "multi_head_attention.passed": "ValueError for d_model % num_heads != 0; 4 (D^2 + D) = {n} parameters; out (B, T, D) "
                                   "and weights (B, H, T, T) equal the reference with copied weights, without a mask "
                                   "and with causal and padding masks",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "split_without_transpose":
        "the view in split_heads: the order of the sizes you split into, and what comes after",
    "split_not_transposed":
        "the end of split_heads: the axis order of the tensor you return",
    "merge_without_transpose":
        "the lines of merge_heads before the reshape: where the head axis sits",
    "w_o_not_applied":
        "the return line of your forward: what happens to the merged heads",
    "weights_averaged_over_heads":
        "what your forward returns as the weights: any mean or sum over an axis on the way",
    "no_divisibility_check":
        "the start of your __init__: what it does with a d_model the heads can't share evenly",
    "float_d_k":
        "the line that computes d_k, and the sizes you pass to .view()",
    "heads_repeated":
        "the step that makes the head axis: which features each head ends up with",
    "split_interleaved":
        "the order of the sizes in your view: which one is the head axis?",
    "scale_by_d_model":
        "where your forward computes the scale: which width it reads, and what it does with it",
    "causal_mask_hides_diagonal":
        "the line that builds your causal mask: its diagonal argument and which triangle it keeps",
    "merge_interleaved":
        "the reshape (or permute) in merge_heads: the axis order before the features are flattened",
}
