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
        "weight and bias are initialised wrong: weight starts at ones and bias at zeros, so that a new "
        "LayerNorm only normalises",
        "nn.Parameter(torch.ones(d_model)) for weight, nn.Parameter(torch.zeros(d_model)) for bias"),
}

MESSAGES = {
}
