"""Wrong ``LayerNorm`` (stage 06)."""
import torch
from torch import nn

from tinylm_checks import check_layer_norm


class _LNBase(nn.Module):
    """Correct __init__ shared by the forward-only mutants."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))


class LNTorchVar(_LNBase):
    """Not a mistake: x.var(unbiased=False) (used to show the check accepts other correct spellings)."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNUnbiased(_LNBase):
    """Uses x.var(dim=-1), which divides by D - 1 (torch.var's default)."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNStdPlusEps(_LNBase):
    """Divides by x.std(dim=-1) + eps: unbiased std and eps outside the square root (a common tutorial line)."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        std = x.std(dim=-1, keepdim=True)
        return self.weight * (x - mean) / (std + self.eps) + self.bias


class LNEpsOutside(_LNBase):
    """Divides by sqrt(var) + eps: eps outside the square root."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / (torch.sqrt(var) + self.eps) * self.weight + self.bias


class LNNoEps(_LNBase):
    """Leaves eps out: a constant row gives 0 / 0."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var) * self.weight + self.bias


class LNEpsHardCoded(_LNBase):
    """Writes 1e-5 in forward instead of self.eps."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + 1e-5) * self.weight + self.bias


class LNNoEpsArgument(nn.Module):
    """Has no eps argument: __init__(self, d_model), with 1e-5 in forward."""

    def __init__(self, d_model):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + 1e-5) * self.weight + self.bias


class LNEpsDefault(_LNBase):
    """Gives eps the default 1e-6 (as some models do) instead of nn.LayerNorm's 1e-5."""

    def __init__(self, d_model, eps=1e-6):
        super().__init__(d_model, eps)

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNEpsNoDefault(_LNBase):
    """Makes eps a required argument: __init__(self, d_model, eps), so LayerNorm(d_model) raises."""

    def __init__(self, d_model, eps):
        super().__init__(d_model, eps)

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNSqrtEpsOutside(_LNBase):
    """Divides by sqrt(var) + sqrt(eps), taking it for sqrt(var + eps) (eps outside the root, another spelling)."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / (torch.sqrt(var) + self.eps ** 0.5) * self.weight + self.bias


class LNAffineFirst(_LNBase):
    """Applies weight and bias before normalising: normalise(x * weight + bias)."""

    def forward(self, x):
        x = x * self.weight + self.bias
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps)


class LNOverPositions(_LNBase):
    """Normalises over dim=1, meaning the features, which in (B, T, D) are the positions."""

    def forward(self, x):
        mean = x.mean(dim=1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNOverBatch(_LNBase):
    """Normalises over the batch (dim=0), like BatchNorm."""

    def forward(self, x):
        mean = x.mean(dim=0, keepdim=True)
        var = x.var(dim=0, keepdim=True, unbiased=False)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNOverTokenAndFeatures(_LNBase):
    """Normalises over the last two dimensions (dim=(-2, -1)): one statistic per sequence."""

    def forward(self, x):
        mean = x.mean(dim=(-2, -1), keepdim=True)
        var = ((x - mean) ** 2).mean(dim=(-2, -1), keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNNoCentring(_LNBase):
    """Divides x (not x - mean) by the standard deviation."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return x / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNRMSNorm(_LNBase):
    """Writes RMSNorm (x / sqrt(mean(x^2) + eps)), which skips the centring."""

    def forward(self, x):
        ms = (x * x).mean(dim=-1, keepdim=True)
        return x / torch.sqrt(ms + self.eps) * self.weight + self.bias


class LNNoSqrt(_LNBase):
    """Divides by var + eps instead of its square root."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / (var + self.eps) * self.weight + self.bias


class LNNoKeepdim(_LNBase):
    """Computes the mean without keepdim=True: (B, T) does not broadcast against (B, T, D)."""

    def forward(self, x):
        mean = x.mean(dim=-1)
        var = ((x - mean) ** 2).mean(dim=-1)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNSwapped(_LNBase):
    """Multiplies by bias and adds weight."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.bias + self.weight


class LNNoAffine(_LNBase):
    """Creates weight and bias but returns the normalised x without them."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps)


class LNPlainTensors(nn.Module):
    """Stores weight and bias as plain tensors (torch.ones(d_model)), not nn.Parameter."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.ones(d_model)
        self.bias = torch.zeros(d_model)

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNBuffers(nn.Module):
    """Registers weight and bias as buffers (register_buffer), not parameters."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", torch.ones(d_model))
        self.register_buffer("bias", torch.zeros(d_model))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNRandomInit(_LNBase):
    """Initialises weight with torch.randn (like a linear layer) instead of ones."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__(d_model, eps)
        self.weight = nn.Parameter(torch.randn(d_model))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNZerosInit(_LNBase):
    """Initialises weight with zeros: a new LayerNorm then outputs only the bias."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__(d_model, eps)
        self.weight = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNGammaBeta(nn.Module):
    """Calls the parameters gamma and beta (the paper's names) instead of weight and bias."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.gamma + self.beta


class LNReshape3D(_LNBase):
    """Reads B, T, D = x.shape (breaks on a 2-D input)."""

    def forward(self, x):
        B, T, D = x.shape
        mean = x.mean(dim=2, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=2, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNInPlace(_LNBase):
    """Subtracts the mean in place (x -= mean), changing the caller's tensor."""

    def forward(self, x):
        x -= x.mean(dim=-1, keepdim=True)
        var = (x ** 2).mean(dim=-1, keepdim=True)
        return x / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNDetachedStats(_LNBase):
    """Detaches the statistics (mean and std treated as constants): the input's gradient is wrong."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True).detach()
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True).detach()
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNNoGrad(_LNBase):
    """Runs forward under torch.no_grad()."""

    def forward(self, x):
        with torch.no_grad():
            mean = x.mean(dim=-1, keepdim=True)
            var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
            return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LNStub(nn.Module):
    """The untouched learner stub."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        # YOUR CODE HERE
        raise NotImplementedError()

    def forward(self, x):
        # YOUR CODE HERE
        raise NotImplementedError()


class LNForwardStub(_LNBase):
    """__init__ done, forward still the untouched stub."""

    def forward(self, x):
        # YOUR CODE HERE
        raise NotImplementedError()


class LNNoReturn(_LNBase):
    """Computes the output and forgets `return`."""

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        out = (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias  # noqa: F841


def layer_norm_function(x, eps=1e-5):
    """A function passed where the class LayerNorm is expected."""
    return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=eps)


# --------------------------------------------------------------------------- what the tests feed the checks
# (check, mutant, expected mistake id or None, key phrase of the problem): see tests/test_checks_mutants.py
ROWS = [
    # ---- named mistakes
    (check_layer_norm, LNUnbiased, "unbiased_variance", "not equal to the reference"),
    (check_layer_norm, LNStdPlusEps, "unbiased_variance", "not equal to the reference"),
    (check_layer_norm, LNEpsOutside, "eps_outside_sqrt", "not equal to the reference"),
    (check_layer_norm, LNNoEps, "eps_ignored", "contains NaN or inf"),
    (check_layer_norm, LNEpsHardCoded, "eps_hard_coded", "not equal to the reference"),
    (check_layer_norm, LNNoEpsArgument, "eps_hard_coded", "raised TypeError"),
    (check_layer_norm, LNEpsDefault, "eps_default", "but LayerNorm(d_model="),
    (check_layer_norm, LNEpsNoDefault, "eps_default", "raised TypeError"),
    (check_layer_norm, LNSqrtEpsOutside, "eps_outside_sqrt", "not equal to the reference"),
    (check_layer_norm, LNAffineFirst, "affine_before_normalising", "not equal to the reference"),
    (check_layer_norm, LNOverPositions, "norm_wrong_axis", "not equal to the reference"),
    (check_layer_norm, LNOverBatch, "norm_wrong_axis", "not equal to the reference"),
    (check_layer_norm, LNOverTokenAndFeatures, "norm_wrong_axis", "not equal to the reference"),
    (check_layer_norm, LNNoCentring, "no_centring", "not equal to the reference"),
    (check_layer_norm, LNRMSNorm, "no_centring", "not equal to the reference"),
    (check_layer_norm, LNNoSqrt, "no_sqrt", "not equal to the reference"),
    (check_layer_norm, LNNoKeepdim, "no_keepdim", "raised RuntimeError"),
    (check_layer_norm, LNSwapped, "weight_bias_swapped", "not equal to the reference"),
    (check_layer_norm, LNNoAffine, "weight_bias_not_applied", "not equal to the reference"),
    (check_layer_norm, LNPlainTensors, "weight_bias_not_parameters", "not an nn.Parameter"),
    (check_layer_norm, LNBuffers, "weight_bias_not_parameters", "is a buffer, not an nn.Parameter"),
    (check_layer_norm, LNRandomInit, "weight_bias_init", "do not start at ones and zeros"),
    (check_layer_norm, LNZerosInit, "weight_bias_init", "do not start at ones and zeros"),
    (check_layer_norm, LNGammaBeta, "attribute_name", "has no parameter weight"),
    (check_layer_norm, LNReshape3D, "hard_coded_axes", "raised ValueError"),
    (check_layer_norm, LNInPlace, "input_modified_in_place", "changed its input x in place"),
    (check_layer_norm, LNNoGrad, "no_gradient", "carries no gradient"),
    # ---- no mistake named
    (check_layer_norm, LNDetachedStats, None, "gradient of the input x differs"),
    # ---- robustness
    (check_layer_norm, None, None, "expected the class LayerNorm (a subclass of nn.Module), got None"),
    (check_layer_norm, layer_norm_function, None, "got function"),
    (check_layer_norm, LNStub, "not_implemented", "raised NotImplementedError | tried: LayerNorm("),
    (check_layer_norm, LNForwardStub, "not_implemented", "raised NotImplementedError"),
    (check_layer_norm, LNNoReturn, "missing_return", "is not a tensor"),
]
LATE_FAILURE = {check_layer_norm: LNDetachedStats}  # fails late, after the check did most of its work
STUB = {check_layer_norm: LNStub}  # check -> the untouched learner stub
ACCEPTED = {check_layer_norm: [LNTorchVar, nn.LayerNorm]}  # correct in another spelling: must pass (test_ref_norm)
