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
    # each exercise's wording of shared hints
    "feed_forward.hints": {
        "hard_coded_axes": "nn.Linear and F.gelu work on any number of leading dimensions: apply them to x as it "
                           "comes, without reading B, T, D = x.shape or reshaping to 3-D",
        "linear_sizes_swapped": "linear1 = nn.Linear(d_model, d_ff) is applied first and linear2 = nn.Linear(d_ff, "
                                "d_model) second (nn.Linear(in_features, out_features)): forward is "
                                "linear2(GELU(linear1(x)))",
    },
    "swiglu.hints": {
        "hard_coded_axes": "nn.Linear, F.silu and * work on any number of leading dimensions: apply them to x as it "
                           "comes, without reading B, T, D = x.shape or reshaping to 3-D",
        "token_mixing": "SwiGLU treats every token on its own: only gate_proj, up_proj, down_proj, SiLU and the "
                        "elementwise product, no mean, sum, softmax or reshape across positions (in a (B, T, D) input, "
                        "dim=1 is the positions)",
        "hidden_width_not_d_ff": "gate_proj and up_proj = nn.Linear(d_model, d_ff, bias=False), down_proj = "
                                 "nn.Linear(d_ff, d_model, bias=False): d_ff is the hidden width as given (the 2/3 "
                                 "rescaling, swiglu_hidden_size, happens outside the class, when d_ff is chosen)",
        "linear_sizes_swapped": "gate_proj and up_proj = nn.Linear(d_model, d_ff, bias=False) map d_model -> d_ff, "
                                "down_proj = nn.Linear(d_ff, d_model, bias=False) maps back (nn.Linear(in_features, "
                                "out_features))",
        "layers_created_in_forward": "create gate_proj, up_proj and down_proj once, in __init__; forward only applies "
                                     "them",
        "extra_scale_factor": "remove the factor: self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x)), nothing "
                              "else",
    },
    # ---- what both checks share: building the module, its layers, calling forward
    "ffn.layer_elsewhere": {
        "problem": "{cls} has no attribute {attr}",
        "expected": "self.{attr} = {layer}",
        "got": "linear layers named {linears}",
        "mistake_hint": "the check copies weights by name: create {attrs} directly in __init__ (not inside an "
                        "nn.Sequential or under other names)",
    },
    "ffn.layer_in_forward": {
        "problem": "{cls} has no attribute {attr} after __init__; forward creates it",
        "expected": "self.{attr} = {layer} in __init__",
        "got": "{cls}.{attr} appears only after a call of forward",
    },
    "ffn.layer_in_forward_tried": "{made}, then forward on a random x {shape}",
    "ffn.sizes_swapped": {
        "problem": "{cls}.{attr} has the wrong size: in and out are swapped",
    },
    "ffn.hidden_width": {
        "problem": "{cls}.{attr} has hidden width {width}, not d_ff = {d_ff}",
    },
    "ffn.output": "the output",
    "ffn.output_shape_hint": "the output has the shape of the input, (..., d_model): the last layer maps the hidden "
                             "width back to d_model",
    "ffn.second_call": "{tried} (second call)",
    "ffn.called_twice": "{tried}, called twice",
    "ffn.not_deterministic": {
        "problem": "two calls on the same input gave different outputs",
        "expected": "the same output both times",
        "got": "outputs differ by up to {err:.3g}, at {at}",
    },
    "ffn.token_replaced": "{tried}, token {t} of batch {b} replaced",
    "ffn.token_mixing_tried": "{tried}; then the same x with position {t} of batch {b} replaced by new random values",
    "ffn.token_mixing": {
        "problem": "changing the input at {changed} changed the output at {moved}",
        "expected": "only the output at the changed position moves (position-wise: no token mixing)",
        "got": "the output at {moved} moved by up to {change:.3g}",
    },
    "ffn.two_d_tried": "{made}, weights copied from the reference, x {shape} (2-D), float64, seed {seed}",
    "ffn.two_d_what": "the output on a 2-D input",
    "ffn.two_d_fallback": "the same module was right on a (B, T, D) input: look for code that assumes three "
                          "dimensions (B, T, D = x.shape, reshape, view, dim=1, dim=2)",
    # ---- FeedForward
    "feed_forward.param_count": {
        "problem": "wrong number of parameters",
        "expected": "2 D d_ff + d_ff + D = {expected_n} for D = {D}, d_ff = {d_ff}",
        "hint": "FeedForward holds exactly linear1 = nn.Linear(d_model, d_ff) and linear2 = nn.Linear(d_ff, d_model); "
                "the activation has no parameters",
    },
    "feed_forward.param_count_besides": "{n}; parameters besides linear1 and linear2: {extra}",
    "feed_forward.tried": "{made} in training mode, weights copied from the reference, x {shape}, float64, seed {seed}",
    "feed_forward.affine": {
        "problem": "the output is an affine function of the input: f(a) + f(b) - f(0) = f(a + b) for random inputs a, b",
        "expected": "a nonlinear function: GELU between linear1 and linear2",
    },
    "feed_forward.affine_tried": "{tried}; then random a, b, 0 and a + b",
    "feed_forward.both_gelus": "{tried} (the exact GELU and its tanh approximation both pass)",
    "feed_forward.fallback": "shapes, parameters and position-wise behaviour are right, so look at the computation "
                             "itself: out = linear2(GELU(linear1(x))), nothing else",
    "feed_forward.passed": "linear1 {D}->{d_ff}, linear2 {d_ff}->{D}, 2 D d_ff + d_ff + D = {n} parameters; shape kept "
                           "on (B, T, D) and (N, D); deterministic in training mode; position-wise; equal to "
                           "linear2(GELU(linear1(x))) with copied weights; gradients reach both layers",
    # ---- SwiGLU
    "swiglu.param_count": {
        "problem": "wrong number of parameters",
        "expected": "3 D d_ff = {expected_n} for D = {D}, d_ff = {d_ff}",
        "hint": "SwiGLU holds exactly gate_proj, up_proj and down_proj, without biases",
    },
    "swiglu.tried": "{made}, weights copied from the reference, x {shape}, float64, seed {seed}",
    "swiglu.fallback": "look at the three lines of forward: SiLU on gate_proj(x), times up_proj(x), then down_proj",
    "swiglu.passed": "gate_proj, up_proj {D}->{d_ff} and down_proj {d_ff}->{D} without biases, 3 D d_ff = {n} "
                     "parameters; shape kept on (B, T, D) and (N, D); deterministic in training mode; position-wise; "
                     "down_proj(SiLU(gate_proj(x)) * up_proj(x)) equal to the reference with copied weights; "
                     "gradients reach all three layers",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "no_nonlinearity":
        "your forward: what happens to the hidden layer between linear1 and linear2",
    "relu_not_gelu":
        "the activation your forward applies to the hidden layer (or the one your __init__ creates)",
    "other_activation":
        "the activation your forward applies to the hidden layer (or the one your __init__ creates)",
    "gelu_sigmoid_approximation":
        "the line of your forward that computes the activation of the hidden layer",
    "hidden_width_not_d_ff":
        "the sizes of the two nn.Linear in your __init__: where does the hidden width come from?",
    "linear_sizes_swapped":
        "the two nn.Linear(...) lines of your __init__, and the order your forward applies them in",
    "layers_created_in_forward":
        "the nn.Linear(...) calls inside your forward",
    "extra_scale_factor":
        "every multiplication or division in your forward besides the layers themselves",
    "dropout_left_on":
        "every dropout in your module, in __init__ and in forward",
    "activation_misplaced":
        "the nesting of calls in your forward: how many activations, and what each one wraps",
    "token_mixing":
        "each step of your forward besides the layers and the activation: which axis does it touch?",
    "residual_inside_ffn":
        "the return line of your forward: what is added to the layers' output",
    "linear2_not_applied":
        "the last line of your forward: which layers the returned tensor went through",
    "gate_wrong_branch":
        "the line that multiplies the two branches: which projection the SiLU wraps",
    "silu_on_both_branches":
        "the line that multiplies the two branches: what each side of the product is wrapped in",
    "swiglu_not_silu":
        "the activation on the gate branch of your forward",
    "silu_misplaced":
        "the lines of your forward: what exactly the SiLU receives as its input",
    "branch_projection_reused":
        "the two branches of your forward: which layer each one calls",
    "no_gate":
        "the line that combines the branches: what is done with gate_proj(x) and up_proj(x)",
}
