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
    # ---- CausalSelfAttention (the production form)
    "qkv_order": (
        "the fused projection's output is split in another order than q, k, v",
        "q, k, v = self.qkv(x).chunk(3, dim=-1): the first D columns are the queries, the next D the keys, the "
        "last D the values"),
    "not_causal": (
        "the attention is not causal: every token also attends to the tokens after it",
        "pass is_causal=True to F.scaled_dot_product_attention (or mask the scores above the diagonal with -inf)"),
    "sdpa_dropout_in_eval": (
        "in eval() the output changes from call to call: dropout_p=self.dropout is passed even when not training "
        "(F.scaled_dot_product_attention is a function: it does not read module.training)",
        "dropout_p=self.dropout if self.training else 0.0"),
    "dropout_not_in_training": (
        "in train() with dropout > 0 every call gives the same output: the attention weights are never dropped",
        "pass dropout_p=self.dropout when self.training is True (or F.dropout(weights, self.dropout, "
        "training=self.training) on the weights)"),
    "output_dropout": (
        "dropout is applied to the module's output (single elements of it are exactly 0); this module drops "
        "attention weights, and its contract has no dropout on the output",
        "drop attention weights only: dropout_p=... inside F.scaled_dot_product_attention, nothing after self.out"),
    "dropout_not_rescaled": (
        "the kept attention weights are not scaled up by 1/(1-p): averaged over many training calls the output is "
        "about (1-p) times the eval output",
        "use dropout_p (or F.dropout), which divides the kept weights by 1-p, instead of a hand-made mask"),

}

MESSAGES = {
    # ---- what a counting function changed in the block (or model) it was given
    "block.changes.removed": "parameter {name} was removed",
    "block.changes.added": "parameter {name} was added",
    "block.changes.replaced": "parameter {name} was replaced by another tensor",
    "block.changes.requires_grad": "{name}.requires_grad went from {before} to {after}",
    "block.changes.values": "the values (or dtype) of {name} changed",
    "block.changes.mode": "{module} went from {before} to {after} mode",
    "block.changes.the_block": "the block",
    "block.mode.train": "train",
    "block.mode.eval": "eval",
    # ---- TransformerBlock
    "transformer_block.hints": {
        "mask_inverted": "pass the mask on unchanged, self.attn(h, mask): in this course True = may attend "
                         "(nn.TransformerEncoderLayer's src_mask is the one where True = blocked)",
        "always_causal": "apply the mask you are given (pass it on to self.attn), and none when mask is None: the model "
                         "(stage 08) builds the causal mask and hands it to every block",
    },
    # when the learner's attn is nn.MultiheadAttention
    "transformer_block.torch_mha_hints": {
        "mask_inverted": "nn.MultiheadAttention's bool attn_mask means True = blocked, the opposite of this course: call "
                         "self.attn(h, h, h, attn_mask=~mask)[0] (and attn_mask=None when mask is None)",
    },
    "transformer_block.pre_ln": "Pre-LN (norm_first=True)",
    "transformer_block.post_ln": "Post-LN (norm_first=False)",
    # the learner's layout: which submodules hold which weights
    "transformer_block.not_a_module": {
        "problem": "{cls}.{attr} is a {kind}, not a module",
        "expected": "self.{attr} = {layer}",
        "hint": "create self.{attr} = {layer} in __init__",
    },
    "transformer_block.one_norm": {
        "problem": "{cls} has no attribute {attr}: it has one LayerNorm, {norm}",
        "expected": "self.norm1 and self.norm2, two LayerNorm(d_model)",
    },
    "transformer_block.no_submodule": {
        "problem": "{cls} has no attribute {attr}{submodules}",
        "expected": "self.{attr} = {layer} in __init__",
        "hint": "create self.{attr} = {layer} in __init__ (after super().__init__())",
        "mistake_hint": "the check copies weights by name: call the submodules norm1, attn, norm2, ffn",
    },
    "transformer_block.its_submodules": " (its submodules: {names})",
    "transformer_block.same_norm": {
        "problem": "{cls}.norm1 and {cls}.norm2 are the same module",
        "expected": "two LayerNorm(d_model), created separately",
    },
    "transformer_block.not_a_norm": {
        "problem": "{cls}.{attr} is not a LayerNorm over d_model = {D} features with a weight and a bias",
        "expected": "LayerNorm({D}): parameters weight ({D},) and bias ({D},)",
        "got": "{kind} with {params}",
        "hint": "self.{attr} = LayerNorm(d_model) (the course's, imported above) or nn.LayerNorm(d_model)",
    },
    "transformer_block.torch_not_batch_first": {
        "problem": "{cls}.attn is nn.MultiheadAttention without batch_first=True",
        "expected": "(B, T, D) inputs",
        "got": "batch_first=False: it reads x as (T, B, D)",
        "hint": "nn.MultiheadAttention(d_model, num_heads, batch_first=True), or the course's "
                "MultiHeadSelfAttention(d_model, num_heads)",
    },
    "transformer_block.torch_not_mha": {
        "problem": "{cls}.attn is not nn.MultiheadAttention({D}, num_heads) with biases",
        "hint": "nn.MultiheadAttention(d_model, num_heads, batch_first=True)",
    },
    "transformer_block.torch_heads": {
        "problem": "{cls}.attn has {heads} heads",
        "expected": "num_heads = {H}",
        "hint": "pass num_heads on to the attention",
    },
    "transformer_block.heads": {
        "problem": "{cls}.attn has {heads} heads",
        "expected": "num_heads = {H}",
        "hint": "pass num_heads on: MultiHeadSelfAttention(d_model, num_heads)",
    },
    "transformer_block.not_attention": {
        "problem": "{cls}.attn is a {kind} without W_Q, W_K, W_V, W_O",
        "expected": "MultiHeadSelfAttention(d_model, num_heads) (the course's, imported above), or "
                    "nn.MultiheadAttention(d_model, num_heads, batch_first=True)",
        "hint": "self.attn = MultiHeadSelfAttention(d_model, num_heads)",
    },
    "transformer_block.not_ffn": {
        "problem": "{cls}.ffn is a {kind} without linear1 and linear2",
        "expected": "FeedForward(d_model, d_ff) (the course's, imported above), or nn.Sequential(nn.Linear(d_model, "
                    "d_ff), nn.GELU(), nn.Linear(d_ff, d_model))",
        "hint": "self.ffn = FeedForward(d_model, d_ff)",
    },
    "transformer_block.d_ff_ignored": {
        "problem": "{cls}.ffn has hidden width {width} = 4 * d_model",
        "expected": "hidden width d_ff = {d_ff}",
    },
    "transformer_block.shared_tensor": {
        "problem": "{name} and {other} are the same tensor: writing one changes the other",
        "hint": "create each layer separately in __init__",
    },
    "transformer_block.another_tensor": "another one",
    # ---- running the learner's block
    "transformer_block.mask_argument_hint": "forward must take the mask and hand it to the attention: def "
                                            "forward(self, x, mask=None)",
    "transformer_block.returns_pair": {
        "problem": "forward returned a pair",
        "expected": "one tensor {shape}",
        "got": "a {kind} of {n}",
    },
    "transformer_block.nan_where_all_allowed": {
        "problem": "the output is NaN exactly at the positions whose mask row allows every key",
        "expected": "True in the mask = may attend",
    },
    "transformer_block.output": "the block's output",
    "transformer_block.shape_hint": "a block keeps the shape of its input: (B, T, D) in, (B, T, D) out",
    # causal by perturbation
    "transformer_block.tried_later": "{tried}, tokens after position {t} changed",
    "transformer_block.tried_earlier": "{tried}, token {position} changed",
    "transformer_block.leak": {
        "problem": "changing the tokens after position {t} changed the output at position {position}",
        "expected": "no change at positions 0 .. {t}: the causal mask hides later tokens",
        "got": "a change of {change:.3g} at {at}",
        "hint": "the block must pass its mask to the attention, unchanged",
    },
    "transformer_block.not_moved": {
        "problem": "changing the token at position {position} did not change the output at position {t}",
        "expected": "position t sees the tokens before it",
        "hint": "the causal mask allows keys 0 .. t: pass it unchanged, True = may attend",
    },
    "transformer_block.no_gradient_to": {
        "problem": "no gradient reaches {name}",
        "mistake_hint": "compute the output through self.{layer}, without .detach(), torch.no_grad() or numpy",
    },
    "transformer_block.created": "TransformerBlock({args}) was created",
    # ---- the check itself
    "transformer_block.no_norm_first": {
        "problem": "TransformerBlock has no argument norm_first",
        "hint": "add norm_first=True to __init__'s arguments and store it: self.norm_first = norm_first",
    },
    "transformer_block.sizes": "d_model={D}, num_heads={H}, d_ff={d_ff}, x {shape} (mean about 2), float64, seed {seed}",
    "transformer_block.tried_no_mask": "{ln}, {sizes}, no mask",
    "transformer_block.tried_again": "{tried}, called a second time",
    "transformer_block.not_deterministic": {
        "problem": "two calls on the same input gave different outputs",
        "got": "largest difference between the calls {err:.3g}",
    },
    "transformer_block.tried_both": "{pre_ln} and {post_ln}, {sizes}, no mask",
    "transformer_block.pre_post_swapped": {
        "problem": "norm_first=True gave the Post-LN output and norm_first=False the Pre-LN one",
    },
    "transformer_block.norm_first_ignored": {
        "problem": "norm_first=True and norm_first=False gave the same output, the {ln} one",
    },
    "transformer_block.output_of": "the {ln} output",
    "transformer_block.tried_reference": "{tried}; the reference is nn.TransformerEncoderLayer holding the same weights",
    "transformer_block.fallback_pre": "Pre-LN is x = x + attn(norm1(x)), then x = x + ffn(norm2(x)): check which "
                                      "tensor each line reads, normalises and adds",
    "transformer_block.fallback_post": "Post-LN is x = norm1(x + attn(x)), then x = norm2(x + ffn(x)): check which "
                                       "tensor each line reads, normalises and adds",
    "transformer_block.tried_default": "TransformerBlock(d_model={D}, num_heads={H}, d_ff={d_ff}) without norm_first, "
                                       "x {shape}, seed {seed}, no mask",
    "transformer_block.not_pre_ln_by_default": {
        "problem": "a block created without norm_first is not Pre-LN",
        "expected": "the Pre-LN output: norm_first defaults to True",
        "hint": "give norm_first the default True: def __init__(self, d_model, num_heads, d_ff, norm_first=True)",
    },
    "transformer_block.got_post_ln": "the Post-LN output",
    "transformer_block.got_other": "another output",
    "transformer_block.tried_causal": "{ln}, {sizes}, causal mask {shape} (True = may attend)",
    "transformer_block.output_with_mask": "the {ln} output with a causal mask",
    "transformer_block.fallback_mask": "the output without a mask was right, so look at the mask: pass it to self.attn "
                                       "unchanged",
    "transformer_block.param_count": {
        "problem": "wrong number of parameters",
        "expected": "{formula} = {want:,}: attn {attn:,}, ffn {ffn:,}, norms {norms}",
        "got": "{n:,}: {parts}{outside}",
        "hint": "the block holds exactly norm1, attn, norm2, ffn{remove}",
    },
    "transformer_block.outside_parts": "; outside them: {names}",
    "transformer_block.remove": ": remove {names}",
    "transformer_block.passed": "equal to nn.TransformerEncoderLayer with the same weights, Pre-LN and Post-LN, without a "
                                "mask and with a causal mask (later tokens change nothing earlier); Pre-LN by default; "
                                "12 D^2 + 13 D = {n:,} parameters at d_ff = 4 D; gradients reach every weight",
    # ---- block_parameter_counts
    "block_parameter_counts.changed": {
        "problem": "your function changed the block it was given",
        "expected": "the block exactly as it was: counting only reads it",
        "got": "{changes}{more}",
    },
    "block_parameter_counts.more_changes": " (and {n} more changes)",
    "block_parameter_counts.not_a_dict": {
        "problem": "the result is not a dict",
        "expected": "a dict with keys \"attn\", \"ffn\", \"norms\", \"total\"",
        "hint": "return {{\"attn\": ..., \"ffn\": ..., \"norms\": ..., \"total\": ...}}",
    },
    "block_parameter_counts.missing_keys": {
        "problem": "the dict has no key {missing}",
        "expected": "keys \"attn\", \"ffn\", \"norms\", \"total\"",
        "got": "keys {present}",
        "hint": "use exactly these four keys (lowercase, plural norms)",
    },
    "block_parameter_counts.not_an_int": {
        "problem": "the count for {key} is not an int",
        "expected": "plain Python ints",
        "hint": "p.numel() is an int; add them with sum(...), without converting to float or tensor",
    },
    "block_parameter_counts.wrong_count": {
        "problem": "the count for {key} is wrong",
        "got": "{counts}{also}",
        "hint": "count the elements of the tensors in {place}: sum(p.numel() for p in ...parameters()), each tensor once",
    },
    "block_parameter_counts.both_norms": "block.norm1 and block.norm2",
    "block_parameter_counts.every_other_block": "every other block",
    "block_parameter_counts.also_wrong": "; the counts are also wrong for {blocks}",
    # the blocks tried: long labels (tried:) and short ones (naming the other blocks whose counts are wrong)
    "block_parameter_counts.first_block": "the first block",
    "block_parameter_counts.post_ln_block": "the Post-LN block",
    "block_parameter_counts.extra": "{block} with one more parameter, block.scale ({D},), outside attn, ffn and the norms",
    "block_parameter_counts.extra_block": "the block with block.scale",
    "block_parameter_counts.frozen": "{block} whose attention is frozen (block.attn.requires_grad_(False))",
    "block_parameter_counts.frozen_block": "the frozen block",
    "block_parameter_counts.shared": "{block} whose norm2 is norm1 (one LayerNorm shared by both sublayers)",
    "block_parameter_counts.shared_block": "the shared-norm block",
    "block_parameter_counts.no_bias": "{block} whose LayerNorms have no bias (nn.LayerNorm(d_model, bias=False))",
    "block_parameter_counts.no_bias_block": "the block with bias-free norms",
    "block_parameter_counts.passed": "\"attn\", \"ffn\", \"norms\", \"total\" counted from the parameters, as ints, for "
                                     "blocks of two widths with d_ff != 4 D, one with an extra parameter, one with a "
                                     "frozen attention, one with a shared LayerNorm and one with bias-free LayerNorms; "
                                     "the blocks left unchanged",
    # ---- CausalSelfAttention
    "causal_self_attention.hints": {
        "w_o_not_applied": "return self.out(y) with y the merged heads (B, T, D)",
        "split_without_transpose": "t.view(B, T, H, d_head).transpose(1, 2): split the features, then move heads "
                                   "before time",
        "merge_without_transpose": "y.transpose(1, 2).reshape(B, T, D): heads back behind time, then merge",
        "scale_by_sqrt_d_model": "leave the scale to F.scaled_dot_product_attention: its default is 1/sqrt(d_head), the "
                                 "width of one head",
        "no_scaling": "divide the scores by sqrt(d_head) (F.scaled_dot_product_attention does it by default)",
        "no_divisibility_check": "raise ValueError when d_model % num_heads != 0, before building the layers",
        "weight_transposed": "call the layer itself, self.out(y) (or F.linear(y, self.out.weight))",
        # a .view that fails here is most often a split straight to (B, H, T, d_head): .reshape would hide it
        "view_after_transpose": "to split the heads, t.view(B, T, H, d_head).transpose(1, 2): view cuts D into H slices, "
                                "the transpose moves the heads before time (a view or reshape straight to (B, H, T, "
                                "d_head) runs but mixes positions); to merge them, y.transpose(1, 2).reshape(B, T, D)",
    },
    "causal_self_attention.created": "CausalSelfAttention(d_model={D}, num_heads={H}{extra}) was created",
    "causal_self_attention.attribute": {
        "problem": "{cls}.{attr} is not {want}",
        "expected": "self.{attr} = {want}",
        "hint": "store num_heads, d_head = d_model // num_heads and the dropout probability (a float) under these names",
    },
    "causal_self_attention.attribute_module": {
        "problem": "{cls}.{attr} is an nn.{kind} module, not the number {want}",
        "expected": "self.{attr} = {want}, a number",
        "got": "self.{attr} = nn.{kind}(...), a module",
        "hint": "store the dropout probability itself, a float: self.dropout = dropout; this class drops attention "
                "weights with F.scaled_dot_product_attention(..., dropout_p=self.dropout), which takes a number, not "
                "an nn.Dropout module",
    },
    "causal_self_attention.param_count": {
        "problem": "wrong number of parameters",
        "expected": "4 D^2 = {expected_n} for D = {D}: qkv (3 D^2) and out (D^2), no biases",
        "hint": "the module holds exactly qkv = nn.Linear(D, 3 D, bias=False) and out = nn.Linear(D, D, bias=False)",
    },
    "causal_self_attention.tried": "d_model={D}, num_heads={H}, x {shape}, float64, seed {seed}, {mode}",
    "causal_self_attention.eval": "eval()",
    "causal_self_attention.eval_dropout": "dropout={p}, eval()",
    "causal_self_attention.train_dropout": "dropout={p}, train(), {n} calls",
    "causal_self_attention.out_what": "the output out(attention(q, k, v)) (B, T, D)",
    "causal_self_attention.fallback": "compare with stage 02: qkv.weight is W_Q, W_K, W_V stacked (3 D, D), out.weight is "
                                      "W_O, and the causal output must equal MultiHeadSelfAttention(x, causal_mask(T))[0]; "
                                      "print the shapes after each step of forward",
    "causal_self_attention.eval_random": {
        "problem": "in eval() two calls on the same input give different outputs",
        "expected": "the same output: no dropout outside training",
        "got": "largest difference {err:.3g}",
    },
    "causal_self_attention.train_fixed": {
        "problem": "in train() with dropout={p}, {n} calls on the same input all give the same output",
        "expected": "outputs that differ from call to call: attention weights dropped at random",
    },
    "causal_self_attention.output_zeros": {
        "problem": "in train() {share:.0%} of the output's elements are exactly 0 in rows that are not all 0",
        "expected": "whole attention weights dropped: a zero can only come from a query whose every weight was dropped",
    },
    "causal_self_attention.not_rescaled": {
        "problem": "averaged over {n} calls in train(), the output is not the eval output",
        "expected": "the eval output on average (dropout divides the kept weights by 1 - p)",
        "got": "the average is closer to {scale:.2f} x the eval output",
    },
    "causal_self_attention.passed": "ValueError for d_model % num_heads != 0; qkv (3 D, D) and out (D, D) without biases, "
                                    "4 D^2 = {n} parameters; in eval() equal to stage 02's MultiHeadSelfAttention with "
                                    "a causal mask and the same weights, and deterministic; in train() with dropout, "
                                    "random, weights (not outputs) dropped, right on average; gradients reach qkv and "
                                    "out",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "residual_from_normalised":
        "the Pre-LN branch of your forward: which tensor each sublayer's output is added to",
    "missing_residual":
        "the two sublayer lines of each branch of forward: what becomes of the x each line reads",
    "attn_residual_missing":
        "the attention line in each branch of your forward: what becomes of the x it reads",
    "ffn_residual_missing":
        "the FFN line in each branch of your forward: what becomes of the x it reads",
    "shared_layer_norm":
        "your __init__: how many LayerNorm objects it creates, and what norm1 and norm2 refer to",
    "norm2_unused":
        "the FFN line in each branch of your forward: the norm it calls",
    "norm1_unused":
        "the attention line in each branch of your forward: the norm it calls",
    "norms_swapped":
        "the two norm calls in each branch of your forward: which sublayer each one goes with",
    "pre_post_swapped":
        "the if on norm_first in your forward: which wiring sits under which branch",
    "norm_first_ignored":
        "the norm_first argument: where your __init__ keeps it and where your forward reads it",
    "mask_not_passed_on":
        "the call of self.attn in your forward: which arguments it receives",
    "dropout_in_block":
        "every dropout your block holds or calls, also inside the parts your __init__ builds",
    "extra_final_norm":
        "the end of your forward: what happens to x after the FFN line, before return",
    "ffn_reads_block_input":
        "the FFN line of your forward: which tensor goes into the FFN, and which line last set it",
    "norm_inside_residual":
        "each sublayer line of your forward: which tensor the norm is applied to",
    "attn_pair_not_unpacked":
        "the line that calls self.attn: what you take from its return value before adding it",
    "attn_weights_used":
        "the line that calls self.attn: which element of its return value you keep",
    "ffn_residual_adds_block_input":
        "the FFN line of your forward: which x its residual adds back, and where it was set",
    "block_returns_pair":
        "the return line of your forward: how many values it hands back",
    "d_ff_ignored":
        "the line in your __init__ that builds self.ffn: which hidden width it is given",
    "ffn_activation":
        "the activation inside the FFN your __init__ builds as self.ffn",
    "count_from_formula":
        "the lines that compute your counts: do they read the block's tensors, or only its sizes?",
    "biases_not_counted":
        "the tensors your counts go over: which of the block's tensors are left out, and by what",
    "one_norm_counted":
        "the line that computes norms: which modules it goes over",
    "count_not_numel":
        "the expression that turns one tensor into its count",
    "total_not_sum":
        "the line that computes total: which parameters it goes over",
    "shared_counted_twice":
        "how your counts collect tensors: what happens when the same tensor turns up twice",
    "trainable_only":
        "the condition in your counting loop: which parameters it skips",
    "norm_counted_in_sublayer":
        "the lines that compute attn and ffn: which modules each one goes over",
    "count_not_int":
        "the value behind each key of the dict you return: where its type comes from",
    "block_changed":
        "each call your function makes on the block or its parameters: does any of them write?",
    "qkv_order":
        "the line that splits the output of self.qkv: which piece you name q, which k, which v",
    "not_causal":
        "the arguments of your F.scaled_dot_product_attention call: what makes it causal?",
    "sdpa_dropout_in_eval":
        "the dropout_p of your attention call: what it is when the module is not training",
    "dropout_not_in_training":
        "where your forward drops attention weights: the probability it gets in train()",
    "output_dropout":
        "the last lines of your forward: what happens to the output after self.out",
    "dropout_not_rescaled":
        "the line that drops attention weights: what happens to the weights it keeps",
}
