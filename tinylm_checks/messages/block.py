"""Stage 07: the Transformer block and its parameter counts."""

MISTAKES = {
    "residual_from_normalised": (
        "the residual adds the normalised tensor instead of the block's input: h = norm1(x); x = h + attn(h)",
        "keep x and add to it: x = x + attn(norm1(x)); the LayerNorm only feeds the sublayer, the residual "
        "stream itself is never normalised in a Pre-LN block"),
    "missing_residual": (
        "neither sublayer adds its input back: both residual connections are missing",
        "each sublayer's output is added to what went in: Pre-LN x = x + attn(norm1(x)), then x = x + "
        "ffn(norm2(x)); Post-LN x = norm1(x + attn(x)), then x = norm2(x + ffn(x))"),
    "attn_residual_missing": (
        "the attention sublayer has no residual: its input x is not added back",
        "Pre-LN: x = x + attn(norm1(x)); Post-LN: x = norm1(x + attn(x)). The FFN line already has its '+'"),
    "ffn_residual_missing": (
        "the feed-forward sublayer has no residual: its input is not added back",
        "Pre-LN: x = x + ffn(norm2(x)); Post-LN: x = norm2(x + ffn(x)). The attention line already has its '+'"),
    "shared_layer_norm": (
        "one LayerNorm is used for both sublayers; each sublayer needs its own",
        "create two: self.norm1 = LayerNorm(d_model) goes with the attention, self.norm2 = LayerNorm(d_model) "
        "with the FFN, each with its own weight and bias"),
    "norm2_unused": (
        "norm2 is created but never used: forward applies norm1 where norm2 belongs (a copy-paste)",
        "the FFN's line uses self.norm2, the attention's self.norm1 (each norm used once): Pre-LN x = x + "
        "ffn(norm2(x)); Post-LN x = norm2(x + ffn(x))"),
    "norm1_unused": (
        "norm1 is created but never used: forward applies norm2 where norm1 belongs (a copy-paste)",
        "the attention's line uses self.norm1, the FFN's self.norm2 (each norm used once): Pre-LN x = x + "
        "attn(norm1(x)); Post-LN x = norm1(x + attn(x))"),
    "norms_swapped": (
        "norm1 and norm2 are used in each other's place",
        "norm1 goes with the attention, norm2 with the FFN (the names nn.TransformerEncoderLayer uses)"),
    "pre_post_swapped": (
        "Pre-LN and Post-LN are swapped: norm_first=True gives the Post-LN wiring and False the Pre-LN one",
        "norm_first=True is Pre-LN, the norm *first*: x = x + attn(norm1(x)); norm_first=False is Post-LN: x = "
        "norm1(x + attn(x))"),
    "norm_first_ignored": (
        "norm_first is ignored: the block is wired the same way for True and False",
        "store self.norm_first = norm_first in __init__ and branch on it in forward: `if self.norm_first:` "
        "Pre-LN, `else:` Post-LN"),
    "mask_not_passed_on": (
        "the mask is not passed on to the attention, so every position sees the future",
        "forward(x, mask) must hand its mask to the attention: self.attn(h, mask)"),
    "dropout_in_block": (
        "the block applies dropout: two calls on the same input give different outputs",
        "no dropout in this exercise (the check compares with nn.TransformerEncoderLayer(dropout=0.0)): remove "
        "nn.Dropout, and create FeedForward(d_model, d_ff) without a dropout argument"),
    "extra_final_norm": (
        "the output is normalised once more at the end of the block",
        "a Pre-LN block returns the residual stream as it is, x = x + ffn(norm2(x)); the model adds one final "
        "LayerNorm after the last block (stage 08), not each block"),
    "ffn_reads_block_input": (
        "the FFN sublayer reads the block's input x instead of the output of the attention sublayer",
        "the sublayers run one after the other: update x with the attention line first, then the FFN line reads "
        "that new x"),
    "norm_inside_residual": (
        "the LayerNorm is applied to the sublayer's output inside the residual, x + norm(attn(x)), instead of "
        "to the sum (Post-LN) or to the sublayer's input (Pre-LN)",
        "Post-LN normalises the sum: x = norm1(x + attn(x)); Pre-LN normalises the input: x = x + attn(norm1(x))"),
    "attn_pair_not_unpacked": (
        "the attention returns a pair (out, weights) and the block uses the pair as a tensor",
        "unpack it: out, _ = self.attn(h, mask) (or self.attn(h, mask)[0]), then add out"),
    "attn_weights_used": (
        "the block uses the attention weights, element [1] of the pair (out, weights) the attention returns, "
        "instead of its output, element [0]",
        "the attention returns (out, weights): unpack it, out, _ = self.attn(...), or take [0], and add out, "
        "the (B, T, D) output; the weights stay unused in the block"),
    "ffn_residual_adds_block_input": (
        "the FFN sublayer's residual adds the block's input x instead of the stream after the attention "
        "sublayer: the attention's contribution is lost",
        "keep one running x: x = x + attn(norm1(x)), then x = x + ffn(norm2(x)), each line reading and adding "
        "the x the line before produced (Post-LN: x = norm1(x + attn(x)), then x = norm2(x + ffn(x)))"),
    "block_returns_pair": (
        "forward returns a pair; a block returns one tensor (B, T, D)",
        "return x alone; the attention weights stay inside the block"),
    "d_ff_ignored": (
        "the FFN's hidden width is 4 * d_model instead of the d_ff argument",
        "pass d_ff on: self.ffn = FeedForward(d_model, d_ff)"),
    "ffn_activation": (
        "the FFN's activation is not the exact GELU",
        "use nn.GELU() (the exact, erf form: nn.TransformerEncoderLayer's activation='gelu'), or simply the "
        "course's FeedForward(d_model, d_ff)"),
    "count_from_formula": (
        "a count comes from a formula (such as 12 D^2 + 13 D at d_ff = 4 D) instead of from the block's parameters",
        "count what the module holds: sum(p.numel() for p in block.attn.parameters()), and so on; the check "
        "uses d_ff != 4 D, where the formulas for d_ff = 4 D do not hold, and blocks that differ from the "
        "formulas"),
    "biases_not_counted": (
        "only the weight matrices are counted: the biases (and LayerNorm parameters) are left out",
        "count every parameter: block.attn.parameters() yields the biases too; don't filter by name or dimension"),
    "one_norm_counted": (
        "norms counts only one of the two LayerNorms",
        "norms is norm1 and norm2 together: 4 D for a block of width D"),
    "count_not_numel": (
        "a tensor's size is not counted as its number of elements (1 per tensor, len(p), p.size(0) * "
        "p.size(-1), ...): right for some shapes, wrong for others",
        "the number of parameters in a tensor p is p.numel() (all its elements), whatever its number of dimensions"),
    "total_not_sum": (
        "total is not the number of all the block's parameters",
        "total = sum(p.numel() for p in block.parameters()): every parameter of the block, also those outside "
        "attn, ffn and the norms"),
    "shared_counted_twice": (
        "a tensor shared by two submodules is counted twice",
        "count each tensor once: block.parameters() already does; for norms, nn.ModuleList([block.norm1, "
        "block.norm2]).parameters() yields a shared LayerNorm's tensors once"),
    "trainable_only": (
        "only trainable parameters (requires_grad=True) are counted",
        "count every parameter, frozen or not: drop the `if p.requires_grad` filter"),
    "norm_counted_in_sublayer": (
        "a LayerNorm is counted with its sublayer (attn includes norm1, or ffn norm2)",
        "attn is block.attn alone and ffn is block.ffn alone; the two norms are counted under norms"),
    "count_not_int": (
        "a count is not a plain Python int (a tensor, a float or a numpy number)",
        "p.numel() is an int and sum(...) of ints is an int; torch.tensor(p.shape).prod(), numpy or / give "
        "other types (use p.numel(), or int(...) at the end)"),
    "block_changed": (
        "the function changes the block it is given (requires_grad flags, parameters, train/eval mode): "
        "counting must only read it",
        "don't call requires_grad_(), train(), eval(), .double() or change parameters in the function; to count "
        "frozen parameters too, drop the `if p.requires_grad` filter instead of unfreezing them"),
}

MESSAGES = {
}
