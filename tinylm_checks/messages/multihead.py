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
    "split_interleaved": (
        "the features are split as (d_k, H) instead of (H, d_k): each head gets every H-th feature",
        "x.view(B, T, H, d_k): head h takes the h-th block of d_k consecutive features"),
    "merge_interleaved": (
        "the heads are merged as (d_k, H) instead of (H, d_k), interleaving their features",
        "x.transpose(1, 2).reshape(B, T, H * d_k): heads first, then each head's d_k features"),
}

MESSAGES = {
}
