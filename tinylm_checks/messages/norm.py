"""Stage 06: LayerNorm."""

MISTAKES = {
    "unbiased_variance": (
        "the variance is the unbiased one (divided by D - 1); LayerNorm divides by D",
        "torch.var and torch.std divide by D - 1 unless told otherwise: x.var(dim=-1, keepdim=True, "
        "unbiased=False), or ((x - mean) ** 2).mean(dim=-1, keepdim=True)"),
    "eps_outside_sqrt": (
        "eps is added outside the square root: (x - mean) / (std + eps), or std + sqrt(eps), instead of (x - "
        "mean) / sqrt(var + eps)",
        "(x - mean) / torch.sqrt(var + self.eps): eps goes inside the square root (sqrt(var) + sqrt(eps) is not "
        "sqrt(var + eps))"),
    "eps_default": (
        "eps does not default to 1e-5 (another default, or none): LayerNorm(d_model) must equal "
        "nn.LayerNorm(d_model)",
        "def __init__(self, d_model, eps=1e-5): the default of nn.LayerNorm"),
    "affine_before_normalising": (
        "weight and bias are applied before normalising, normalise(x * weight + bias), instead of to the "
        "normalised x",
        "normalise first, then scale and shift: x_hat = (x - mean) / torch.sqrt(var + self.eps); return x_hat * "
        "self.weight + self.bias"),
    "eps_ignored": (
        "eps is missing from the denominator: a constant row (variance 0) gives 0 / 0 = NaN",
        "divide by torch.sqrt(var + self.eps): eps keeps the denominator away from 0"),
    "eps_hard_coded": (
        "the eps argument is not used: 1e-5 is written into the code (or __init__ takes no eps)",
        "def __init__(self, d_model, eps=1e-5): store self.eps = eps and use self.eps in forward"),
    "norm_wrong_axis": (
        "the mean and variance are taken over the wrong axis (the positions, the batch, or more than the "
        "features of one token)",
        "one mean and one variance per token, over its features: dim=-1, keepdim=True"),
    "no_centring": (
        "the mean is not subtracted (from x, or inside the variance)",
        "x_hat = (x - mean) / torch.sqrt(var + self.eps), with var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)"),
    "no_sqrt": (
        "x - mean is divided by the variance, not by its square root (the standard deviation)",
        "(x - mean) / torch.sqrt(var + self.eps)"),
    "no_keepdim": (
        "the mean or variance is computed without keepdim=True, so it no longer lines up with x",
        "x.mean(dim=-1, keepdim=True): the statistics keep a size-1 last axis, (..., 1), and broadcast over the "
        "features"),
    "weight_bias_swapped": (
        "weight and bias are swapped: x_hat * bias + weight",
        "x_hat * self.weight + self.bias: weight scales, bias shifts"),
    "weight_bias_not_applied": (
        "weight or bias is created but not applied to the normalised x",
        "return x_hat * self.weight + self.bias"),
    "weight_bias_not_parameters": (
        "weight or bias is a plain tensor (or a buffer), not an nn.Parameter: the optimiser never sees it, so "
        "it never learns",
        "self.weight = nn.Parameter(torch.ones(d_model)) and self.bias = nn.Parameter(torch.zeros(d_model))"),
    "weight_bias_init": (
        "weight and bias are initialised wrong: they must start as ones and zeros, so that a new LayerNorm only "
        "normalises",
        "nn.Parameter(torch.ones(d_model)) for weight, nn.Parameter(torch.zeros(d_model)) for bias"),
}

MESSAGES = {
    "layer_norm.hints": {
        "hard_coded_axes": "LayerNorm works on any number of leading dimensions: reduce over dim=-1 and don't read "
                           "B, T = x.shape or reshape to 3-D",
    },
    # ---- building it, and its parameters
    "layer_norm.buffer": "a buffer",
    "layer_norm.plain_tensor": "a plain tensor",
    "layer_norm.none": "none",
    "layer_norm.not_a_parameter": {
        "problem": "LayerNorm.{name} is {kind}, not an nn.Parameter",
        "got": "{kind} of shape {shape}; parameters: {params}",
    },
    "layer_norm.parameter_renamed": {
        "problem": "LayerNorm has no parameter {name}",
        "got": "parameters {others}",
        "mistake_hint": "call them weight and bias, like nn.LayerNorm: the check (and load_state_dict of a model that "
                        "uses your LayerNorm) finds them by name",
    },
    "layer_norm.parameter_missing": {
        "problem": "LayerNorm has no parameter {name}",
        "expected": "self.{name} = nn.Parameter({init}) in __init__",
        "got": "parameters: {params}",
        "hint": "create self.{name} = nn.Parameter({init}) in __init__, after super().__init__()",
    },
    "layer_norm.parameter_shape": {
        "problem": "LayerNorm.{name} has the wrong shape",
        "hint": "one value per feature: torch.ones(d_model); broadcasting lines it up with (..., D)",
    },
    "layer_norm.param_count": {
        "problem": "wrong number of parameters",
        "expected": "2 D = {expected_n} for D = {D}",
        "got": "{n}; besides weight and bias: {extra}",
        "hint": "LayerNorm holds exactly weight and bias; mean and variance are computed in forward, not stored",
    },
    "layer_norm.init": {
        "problem": "weight and bias do not start at ones and zeros",
        "expected": "weight = [1, 1, ...], bias = [0, 0, ...] (like nn.LayerNorm)",
    },
    # ---- the input: rows of five kinds, in turn
    "layer_norm.row_kinds": "mean 0.5 and spread 1; mean -40, spread 30; mean 3, spread 1e-3; constant 2.5; mean 10, "
                            "spread 4",
    "layer_norm.tried": "{made}, weight and bias random (copied into nn.LayerNorm too), x {shape}, float64, seed {seed}; "
                        "the rows (tokens) of x take turns, batch by batch: {rows}",
    "layer_norm.two_d": "{shape} (2-D)",
    "layer_norm.constant_row": "a constant row (variance 0)",
    "layer_norm.row": "a row with spread about {std:.1g}, mean {mean:.3g}",
    # ---- the output
    "layer_norm.output": "the output",
    "layer_norm.shape_hint": "LayerNorm keeps the shape of its input: the statistics have shape (..., 1) and "
                             "broadcast over the features",
    "layer_norm.not_finite": {
        "problem": "the output contains NaN or inf, at {at}",
        "expected": "finite values: the reference gives a constant row the output bias (x - mean = 0 there, divided "
                    "by sqrt(0 + eps))",
        "got": "{values} for {row}",
        "hint": "NaN or inf comes from a division by 0: what is the variance of this row, and what keeps the "
                "denominator away from 0?",
    },
    "layer_norm.fallback": "per token: mean and biased variance over the last dimension (keepdim=True), x_hat = (x - "
                           "mean) / sqrt(var + eps), then x_hat * weight + bias; the tried: line says which kinds of "
                           "rows the input has",
    # ---- eps
    "layer_norm.eps_default": {
        "problem": "{made} is not equal to nn.LayerNorm(d_model={D}), but {made_eps} is",
        "expected": "eps = 1e-5 when no eps is given (nn.LayerNorm's default)",
    },
    "layer_norm.another_default": "another default",
    "layer_norm.eps_argument_hint": "the signature is __init__(self, d_model, eps=1e-5), like nn.LayerNorm: store "
                                    "self.eps = eps and use it in forward",
    # ---- gradients
    "layer_norm.input_x": "the input x",
    "layer_norm.backward_tried": "{tried}, (out * random).sum().backward()",
    "layer_norm.no_gradient_to": {
        "problem": "no gradient reaches {what}",
        "mistake_hint": "compute the output from x, weight and bias with tensor operations (no .detach(), .item() or "
                        "numpy)",
    },
    "layer_norm.gradient_tried": "{tried}; then (out * r).sum().backward() with a random r of the same shape",
    "layer_norm.gradient": {
        "problem": "the gradient of {what} differs from nn.LayerNorm's",
        "expected": "{ref_value:.4f} at {at} (nn.LayerNorm's gradient)",
        "got": "{value:.4f}; largest difference {err:.3g}",
        "hint": "the outputs are right, so part of the computation is cut from the gradient: look for .detach(), "
                ".item() or .data on the mean or the variance",
    },
    "layer_norm.passed": "weight (ones) and bias (zeros), 2 D = {n} parameters; equal to nn.LayerNorm(d_model={D}) "
                         "with copied weight and bias on rows with large mean and spread, tiny spread and constant "
                         "rows, with eps=1e-5 and eps={eps:g}, on (B, T, D) and (N, D); gradients equal "
                         "nn.LayerNorm's",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "unbiased_variance":
        "the line that computes the variance: what it divides by, a function's default included",
    "eps_outside_sqrt":
        "the denominator of your normalisation: where eps enters it",
    "eps_default":
        "the signature of your __init__: the eps parameter",
    "affine_before_normalising":
        "the order of the steps in your forward: when weight and bias come in",
    "eps_ignored":
        "the denominator of your normalisation: what is under the square root",
    "eps_hard_coded":
        "your __init__'s parameters, and where your forward takes its eps from",
    "norm_wrong_axis":
        "the dim of your mean and variance: which axis holds one token's features?",
    "no_centring":
        "the lines that compute x_hat and the variance: where the mean is used",
    "no_sqrt":
        "the denominator of your normalisation, and the step that turns the variance into it",
    "no_keepdim":
        "the reductions that compute the mean and variance: the shape each returns, next to x's",
    "weight_bias_swapped":
        "the return line of your forward: which one multiplies and which one is added",
    "weight_bias_not_applied":
        "the return line of your forward: what the returned tensor is made of",
    "weight_bias_not_parameters":
        "the lines of your __init__ that create self.weight and self.bias: what type each is",
    "weight_bias_init":
        "the values self.weight and self.bias start from in your __init__",
}
