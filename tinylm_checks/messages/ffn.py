"""Stage 05: the feed-forward layer and SwiGLU."""

MISTAKES = {
    "no_nonlinearity": (
        "there is no nonlinearity: the module is affine (f(a) + f(b) - f(0) = f(a + b)), and two linear layers "
        "in a row are no more expressive than one",
        "apply GELU to the hidden layer, between the two linear layers: self.linear2(F.gelu(self.linear1(x)))"),
    "relu_not_gelu": (
        "the activation is ReLU; this exercise asks for GELU",
        "use F.gelu(h) or nn.GELU() (the tanh approximation, F.gelu(h, approximate='tanh'), is accepted too)"),
    "other_activation": (
        "the activation is another function (SiLU, sigmoid, tanh, ELU, softplus, ...) instead of GELU",
        "use F.gelu(h) or nn.GELU(): GELU(h) = h * Phi(h), Phi the standard normal CDF"),
    "gelu_sigmoid_approximation": (
        "GELU is approximated as h * sigmoid(1.702 h), which is off by up to 0.02",
        "use F.gelu(h), the exact form; the tanh approximation F.gelu(h, approximate='tanh') is accepted too"),
    "hidden_width_not_d_ff": (
        "the hidden width is not the d_ff argument as given: the layers use a width of their own (4 * d_model, "
        "d_model, 2/3 of d_ff, ...)",
        "nn.Linear(d_model, d_ff) and nn.Linear(d_ff, d_model): the hidden width is the d_ff argument, used as "
        "it comes"),
    "linear_sizes_swapped": (
        "a layer has its two sizes the wrong way round: nn.Linear(d_ff, d_model) where nn.Linear(d_model, d_ff) "
        "belongs, or the reverse (swapped arguments, or two layers' names swapped)",
        "nn.Linear(in_features, out_features): the layer applied first maps d_model -> d_ff, the last d_ff -> "
        "d_model"),
    "layers_created_in_forward": (
        "the layers are created in forward, so every call makes new random layers (the check cannot copy "
        "weights into them, and an optimiser would never train them)",
        "create the layers once, in __init__ (self.linear1 = nn.Linear(...)); forward only applies them"),
    "extra_scale_factor": (
        "the hidden activations (or the output) are multiplied by an extra constant factor (such as "
        "1/sqrt(d_ff)): the FFN has no scaling",
        "remove the factor: out = linear2(GELU(linear1(x))); the 1/sqrt(d_k) scale belongs to the attention "
        "scores, not to the FFN"),
    "dropout_left_on": (
        "dropout is on in training mode: two calls on the same input give different outputs",
        "no dropout in this exercise (the check compares exact values, in training mode): remove nn.Dropout or "
        "F.dropout, or give it p=0.0"),
    "activation_misplaced": (
        "the activation is applied after linear2 (too), or before linear1: it belongs between the two layers only",
        "exactly one activation, on the hidden layer: self.linear2(F.gelu(self.linear1(x)))"),
    "token_mixing": (
        "information moves between positions: changing one token changes the output at other tokens",
        "the FFN treats every token on its own: only the two nn.Linear layers and the activation, no mean, sum, "
        "softmax or reshape across positions (in a (B, T, D) input, dim=1 is the positions)"),
    "residual_inside_ffn": (
        "the FFN adds its input back (x + ...): the residual connection belongs to the Transformer block "
        "(notebook 07), not to the FFN",
        "return self.linear2(F.gelu(self.linear1(x))) without adding x"),
    "linear2_not_applied": (
        "linear2 is never applied: the output has d_ff features instead of d_model",
        "return self.linear2(F.gelu(self.linear1(x))): linear2 maps the d_ff hidden features back to d_model"),
    "gate_wrong_branch": (
        "SiLU is applied to up_proj(x) instead of gate_proj(x): the gate is on the wrong branch",
        "h = F.silu(self.gate_proj(x)) * self.up_proj(x): the activation goes on gate_proj's branch"),
    "silu_on_both_branches": (
        "SiLU is applied to both branches; only the gate gets it",
        "h = F.silu(self.gate_proj(x)) * self.up_proj(x): up_proj's branch stays linear"),
    "swiglu_not_silu": (
        "the gate's activation is not SiLU (GELU, sigmoid, ReLU or none give GEGLU, GLU, ReGLU or a bilinear "
        "layer)",
        "F.silu(self.gate_proj(x)): SiLU(z) = z * sigmoid(z), also called Swish"),
    "silu_misplaced": (
        "SiLU is applied in the wrong place (to the product gate * up, after down_proj, or to x before the "
        "projections): it belongs on gate_proj(x) alone",
        "h = F.silu(self.gate_proj(x)) * self.up_proj(x), then self.down_proj(h) with nothing after it"),
    "branch_projection_reused": (
        "one projection is used on both branches (gate_proj(x) twice, or up_proj(x) twice): the other one is "
        "never used",
        "each branch has its own layer: F.silu(self.gate_proj(x)) * self.up_proj(x)"),
    "no_gate": (
        "the two branches are not multiplied: the output uses only one of gate_proj(x) and up_proj(x), or adds "
        "them",
        "multiply the branches elementwise, then project down: self.down_proj(F.silu(self.gate_proj(x)) * "
        "self.up_proj(x))"),
}

MESSAGES = {
}
