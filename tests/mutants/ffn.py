"""Wrong ``FeedForward`` and ``SwiGLU`` (stage 05)."""
import math

import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_feed_forward, check_swiglu


# --------------------------------------------------------------------------- FeedForward

class _FFNBase(nn.Module):
    """Correct __init__ shared by the forward-only mutants."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


class FFNTanhGelu(_FFNBase):
    """Not a mistake: GELU's tanh approximation, which the check accepts (see ACCEPTED)."""

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x), approximate="tanh"))


class FFNHandWrittenGelu(_FFNBase):
    """Not a mistake: the exact GELU written by hand with erf."""

    def forward(self, x):
        h = self.linear1(x)
        return self.linear2(0.5 * h * (1 + torch.erf(h / math.sqrt(2))))


class FFNNoActivation(_FFNBase):
    """Forgets the activation: linear2(linear1(x))."""

    def forward(self, x):
        return self.linear2(self.linear1(x))


class FFNIdentityActivation(_FFNBase):
    """Keeps the activation slot but fills it with nn.Identity() (a placeholder never replaced), and adds x."""

    def __init__(self, d_model, d_ff):
        super().__init__(d_model, d_ff)
        self.act = nn.Identity()

    def forward(self, x):
        return x + self.linear2(self.act(self.linear1(x)))


class FFNReLU(_FFNBase):
    """Uses ReLU, as in the original Transformer paper, where GELU was asked."""

    def forward(self, x):
        return self.linear2(F.relu(self.linear1(x)))


class FFNReLUModule(_FFNBase):
    """Uses nn.ReLU() as a layer attribute."""

    def __init__(self, d_model, d_ff):
        super().__init__(d_model, d_ff)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.linear2(self.act(self.linear1(x)))


class FFNSiLU(_FFNBase):
    """Uses SiLU (Swish) instead of GELU."""

    def forward(self, x):
        return self.linear2(F.silu(self.linear1(x)))


class FFNTanh(_FFNBase):
    """Uses tanh instead of GELU (tanh appears in GELU's approximation formula)."""

    def forward(self, x):
        return self.linear2(torch.tanh(self.linear1(x)))


class FFNSigmoidGelu(_FFNBase):
    """Approximates GELU as h * sigmoid(1.702 h) (Hendrycks & Gimpel's faster approximation)."""

    def forward(self, x):
        h = self.linear1(x)
        return self.linear2(h * torch.sigmoid(1.702 * h))


class FFNFourD(nn.Module):
    """Ignores d_ff and uses 4 * d_model, the usual value."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, 4 * d_model)
        self.linear2 = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class FFNDropout(_FFNBase):
    """Adds nn.Dropout(0.1) after the activation, as GPT-2 does: in training mode the output is random."""

    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.linear2(self.dropout(F.gelu(self.linear1(x))))


class FFNFunctionalDropout(_FFNBase):
    """Calls F.dropout(h, 0.1), whose training=True default ignores the module's mode."""

    def forward(self, x):
        return self.linear2(F.dropout(F.gelu(self.linear1(x)), 0.1))


class FFNGeluTwice(_FFNBase):
    """Applies GELU after linear2 as well."""

    def forward(self, x):
        return F.gelu(self.linear2(F.gelu(self.linear1(x))))


class FFNGeluAtEnd(_FFNBase):
    """Applies GELU after linear2 instead of between the layers."""

    def forward(self, x):
        return F.gelu(self.linear2(self.linear1(x)))


class FFNCentredOverDim1(_FFNBase):
    """Subtracts the mean over dim=1, meaning the features, which in (B, T, D) are the positions."""

    def forward(self, x):
        h = F.gelu(self.linear1(x))
        return self.linear2(h - h.mean(dim=1, keepdim=True))


class FFNResidual(_FFNBase):
    """Adds the residual inside the FFN: x + linear2(GELU(linear1(x)))."""

    def forward(self, x):
        return x + self.linear2(F.gelu(self.linear1(x)))


class FFNNoLinear2(_FFNBase):
    """Creates linear2 but returns GELU(linear1(x)) without applying it."""

    def forward(self, x):
        return F.gelu(self.linear1(x))


class FFNSequential(nn.Module):
    """Builds an nn.Sequential (self.net) instead of the named layers linear1 and linear2."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        return self.net(x)


class FFNSwappedSizes(nn.Module):
    """Writes nn.Linear(d_ff, d_model) for linear1 (arguments swapped)."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_ff, d_model)
        self.linear2 = nn.Linear(d_model, d_ff)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class FFNSwappedNames(nn.Module):
    """Swaps the names: linear1 is the d_ff -> d_model layer and linear2 the first one (applied in the right order)."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear2 = nn.Linear(d_model, d_ff)
        self.linear1 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear1(F.gelu(self.linear2(x)))


class FFNLayersInForward(nn.Module):
    """Creates the layers inside forward: new random layers at every call."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.d_model, self.d_ff = d_model, d_ff

    def forward(self, x):
        self.linear1 = nn.Linear(self.d_model, self.d_ff)
        self.linear2 = nn.Linear(self.d_ff, self.d_model)
        return self.linear2(F.gelu(self.linear1(x)))


class FFNScaledHidden(_FFNBase):
    """Divides the hidden activations by sqrt(d_ff), like attention scores, 'to keep it stable'."""

    def __init__(self, d_model, d_ff):
        super().__init__(d_model, d_ff)
        self.d_ff = d_ff

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)) / math.sqrt(self.d_ff))


class FFNExtraNorm(_FFNBase):
    """Adds a LayerNorm inside the FFN (parameters the exercise does not have)."""

    def __init__(self, d_model, d_ff):
        super().__init__(d_model, d_ff)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(self.norm(x))))


class FFNReshape3D(_FFNBase):
    """Reads B, T, D = x.shape and reshapes to (B * T, D): breaks on a 2-D input."""

    def forward(self, x):
        B, T, D = x.shape
        h = F.gelu(self.linear1(x.reshape(B * T, D)))
        return self.linear2(h).reshape(B, T, D)


class FFNDetached(_FFNBase):
    """Detaches the hidden layer (h.detach()): no gradient reaches linear1."""

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)).detach())


class FFNNoGrad(_FFNBase):
    """Runs forward under torch.no_grad() (copied from an inference cell)."""

    def forward(self, x):
        with torch.no_grad():
            return self.linear2(F.gelu(self.linear1(x)))


class FFNNoSuperInit(nn.Module):
    """Creates layers before calling super().__init__()."""

    def __init__(self, d_model, d_ff):
        self.linear1 = nn.Linear(d_model, d_ff)
        super().__init__()
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class FFNStub(nn.Module):
    """The untouched learner stub (both __init__ and forward)."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        # YOUR CODE HERE
        raise NotImplementedError()

    def forward(self, x):
        # YOUR CODE HERE
        raise NotImplementedError()


class FFNForwardStub(_FFNBase):
    """__init__ done, forward still the untouched stub."""

    def forward(self, x):
        # YOUR CODE HERE
        raise NotImplementedError()


class FFNNoReturn(_FFNBase):
    """Computes the output and forgets `return`."""

    def forward(self, x):
        out = self.linear2(F.gelu(self.linear1(x)))  # noqa: F841


def feed_forward_function(x, d_ff=16):
    """A function passed where the class FeedForward is expected."""
    return x


feed_forward_instance = _FFNBase(6, 20)
"""An instance, FeedForward(6, 20), passed instead of the class."""


# --------------------------------------------------------------------------- SwiGLU

class _SwiGLUBase(nn.Module):
    """Correct __init__ shared by the forward-only mutants."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.gate_proj = nn.Linear(d_model, d_ff, bias=False)
        self.up_proj = nn.Linear(d_model, d_ff, bias=False)
        self.down_proj = nn.Linear(d_ff, d_model, bias=False)


class SwiGLUWrongBranch(_SwiGLUBase):
    """Puts SiLU on up_proj's branch: silu(up) * gate."""

    def forward(self, x):
        return self.down_proj(F.silu(self.up_proj(x)) * self.gate_proj(x))


class SwiGLUSiluBoth(_SwiGLUBase):
    """Applies SiLU to both branches."""

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * F.silu(self.up_proj(x)))


class SwiGLUGelu(_SwiGLUBase):
    """Uses GELU on the gate (that is GEGLU), carried over from FeedForward."""

    def forward(self, x):
        return self.down_proj(F.gelu(self.gate_proj(x)) * self.up_proj(x))


class SwiGLUSigmoid(_SwiGLUBase):
    """Uses sigmoid on the gate (the original GLU), reading 'gated' as 'sigmoid gate'."""

    def forward(self, x):
        return self.down_proj(torch.sigmoid(self.gate_proj(x)) * self.up_proj(x))


class SwiGLUNoGate(_SwiGLUBase):
    """Forgets the product with up_proj: down_proj(silu(gate_proj(x)))."""

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)))


class SwiGLUAdded(_SwiGLUBase):
    """Adds the branches instead of multiplying them."""

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) + self.up_proj(x))


class SwiGLUBiases(nn.Module):
    """Keeps nn.Linear's default bias=True."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.gate_proj = nn.Linear(d_model, d_ff)
        self.up_proj = nn.Linear(d_model, d_ff)
        self.down_proj = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class SwiGLUHidden(nn.Module):
    """Computes its own hidden width, int(2 * 4 * d_model / 3), and ignores d_ff."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        h = int(2 * 4 * d_model / 3)
        self.gate_proj = nn.Linear(d_model, h, bias=False)
        self.up_proj = nn.Linear(d_model, h, bias=False)
        self.down_proj = nn.Linear(h, d_model, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class SwiGLUHandWrittenSilu(_SwiGLUBase):
    """Not a mistake: SiLU written by hand as g * sigmoid(g)."""

    def forward(self, x):
        g = self.gate_proj(x)
        return self.down_proj(g * torch.sigmoid(g) * self.up_proj(x))


class SwiGLUInPlaceSilu(_SwiGLUBase):
    """Not a mistake: an in-place SiLU on a tensor of its own, F.silu(gate_proj(x), inplace=True)."""

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x), inplace=True) * self.up_proj(x))


class SwiGLUSiluOnProduct(_SwiGLUBase):
    """Applies SiLU to the product gate * up instead of to the gate alone."""

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x) * self.up_proj(x)))


class SwiGLUSiluAtEnd(_SwiGLUBase):
    """Puts a SiLU on the output of down_proj too, as if it were another layer."""

    def forward(self, x):
        return F.silu(self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x)))


class SwiGLUTwoThirds(nn.Module):
    """Shrinks the hidden width to int(2 * d_ff / 3) inside the class, though d_ff is the hidden width as given."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        h = int(2 * d_ff / 3)
        self.gate_proj = nn.Linear(d_model, h, bias=False)
        self.up_proj = nn.Linear(d_model, h, bias=False)
        self.down_proj = nn.Linear(h, d_model, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class SwiGLUGateTwice(_SwiGLUBase):
    """Uses gate_proj on both branches (a copy-paste): up_proj is never used."""

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.gate_proj(x))


class SwiGLUReshape3D(_SwiGLUBase):
    """Reads B, T, D = x.shape and reshapes to (B * T, D): breaks on a 2-D input."""

    def forward(self, x):
        B, T, D = x.shape
        x2 = x.reshape(B * T, D)
        return self.down_proj(F.silu(self.gate_proj(x2)) * self.up_proj(x2)).reshape(B, T, D)


class SwiGLUDropout(_SwiGLUBase):
    """Adds nn.Dropout(0.1) on the hidden product, as some LLaMA ports do: in training mode the output is random."""

    def __init__(self, d_model, d_ff):
        super().__init__(d_model, d_ff)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.down_proj(self.dropout(F.silu(self.gate_proj(x)) * self.up_proj(x)))


class SwiGLUScaled(_SwiGLUBase):
    """Divides the hidden product by sqrt(d_ff) 'to keep it stable'."""

    def forward(self, x):
        h = F.silu(self.gate_proj(x)) * self.up_proj(x)
        return self.down_proj(h / math.sqrt(h.size(-1)))


class SwiGLUMeanOverDim1(_SwiGLUBase):
    """Centres the hidden product over dim=1, meaning the features, which in (B, T, d_ff) are the positions."""

    def forward(self, x):
        h = F.silu(self.gate_proj(x)) * self.up_proj(x)
        return self.down_proj(h - h.mean(dim=1, keepdim=True))


class SwiGLUDownSwapped(nn.Module):
    """Writes down_proj = nn.Linear(d_model, d_ff, bias=False), copying the line above (arguments swapped)."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.gate_proj = nn.Linear(d_model, d_ff, bias=False)
        self.up_proj = nn.Linear(d_model, d_ff, bias=False)
        self.down_proj = nn.Linear(d_model, d_ff, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class SwiGLUStub(nn.Module):
    """The untouched learner stub."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        # YOUR CODE HERE
        raise NotImplementedError()

    def forward(self, x):
        # YOUR CODE HERE
        raise NotImplementedError()


class SwiGLUDetachedGate(_SwiGLUBase):
    """Detaches the gate (a 'stop-gradient' idea): no gradient reaches gate_proj."""

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)).detach() * self.up_proj(x))


# --------------------------------------------------------------------------- what the tests feed the checks
# (check, mutant, expected mistake id or None, key phrase of the problem): see tests/test_checks_mutants.py
ROWS = [
    # ---- FeedForward: named mistakes
    (check_feed_forward, FFNNoActivation, "no_nonlinearity", "affine function of the input"),
    (check_feed_forward, FFNIdentityActivation, "no_nonlinearity", "affine function of the input"),
    (check_feed_forward, FFNReLU, "relu_not_gelu", "not equal to the reference"),
    (check_feed_forward, FFNReLUModule, "relu_not_gelu", "not equal to the reference"),
    (check_feed_forward, FFNSiLU, "other_activation", "not equal to the reference"),
    (check_feed_forward, FFNTanh, "other_activation", "not equal to the reference"),
    (check_feed_forward, FFNSigmoidGelu, "gelu_sigmoid_approximation", "not equal to the reference"),
    (check_feed_forward, FFNFourD, "hidden_width_not_d_ff", "not d_ff"),
    (check_feed_forward, FFNDropout, "dropout_left_on", "two calls on the same input"),
    (check_feed_forward, FFNFunctionalDropout, "dropout_left_on", "two calls on the same input"),
    (check_feed_forward, FFNGeluTwice, "activation_misplaced", "not equal to the reference"),
    (check_feed_forward, FFNGeluAtEnd, "activation_misplaced", "not equal to the reference"),
    (check_feed_forward, FFNCentredOverDim1, "token_mixing", "changed the output at"),
    (check_feed_forward, FFNResidual, "residual_inside_ffn", "not equal to the reference"),
    (check_feed_forward, FFNNoLinear2, "linear2_not_applied", "the output has the wrong shape"),
    (check_feed_forward, FFNSequential, "attribute_name", "has no attribute linear1"),
    (check_feed_forward, FFNReshape3D, "hard_coded_axes", "raised ValueError"),
    (check_feed_forward, FFNDetached, "no_gradient", "no gradient reaches linear1"),
    (check_feed_forward, FFNNoGrad, "no_gradient", "carries no gradient"),
    (check_feed_forward, FFNNoSuperInit, "missing_super_init", "raised AttributeError"),
    (check_feed_forward, FFNSwappedSizes, "linear_sizes_swapped", "linear1 has the wrong size"),
    (check_feed_forward, FFNSwappedNames, "linear_sizes_swapped", "linear1 has the wrong size"),
    (check_feed_forward, FFNLayersInForward, "layers_created_in_forward", "forward creates it"),
    (check_feed_forward, FFNScaledHidden, "extra_scale_factor", "not equal to the reference"),
    # ---- FeedForward: no mistake named
    (check_feed_forward, FFNExtraNorm, None, "wrong number of parameters"),
    # ---- FeedForward: robustness
    (check_feed_forward, None, None, "expected the class FeedForward (a subclass of nn.Module), got None"),
    (check_feed_forward, feed_forward_function, None, "got function"),
    (check_feed_forward, feed_forward_instance, None, "got an instance of"),
    (check_feed_forward, FFNStub, "not_implemented", "raised NotImplementedError | tried: FeedForward("),
    (check_feed_forward, FFNForwardStub, "not_implemented", "raised NotImplementedError"),
    (check_feed_forward, FFNNoReturn, "missing_return", "is not a tensor"),
    # ---- SwiGLU (bonus)
    (check_swiglu, SwiGLUWrongBranch, "gate_wrong_branch", "not equal to the reference"),
    (check_swiglu, SwiGLUSiluBoth, "silu_on_both_branches", "not equal to the reference"),
    (check_swiglu, SwiGLUGelu, "swiglu_not_silu", "not equal to the reference"),
    (check_swiglu, SwiGLUSigmoid, "swiglu_not_silu", "not equal to the reference"),
    (check_swiglu, SwiGLUNoGate, "no_gate", "not equal to the reference"),
    (check_swiglu, SwiGLUAdded, "no_gate", "not equal to the reference"),
    (check_swiglu, SwiGLUBiases, "linear_with_bias", "has a bias it should not have"),
    (check_swiglu, SwiGLUHidden, "hidden_width_not_d_ff", "not d_ff"),
    (check_swiglu, SwiGLUDetachedGate, "no_gradient", "no gradient reaches gate_proj"),
    (check_swiglu, SwiGLUSiluOnProduct, "silu_misplaced", "not equal to the reference"),
    (check_swiglu, SwiGLUSiluAtEnd, "silu_misplaced", "not equal to the reference"),
    (check_swiglu, SwiGLUTwoThirds, "hidden_width_not_d_ff", "has hidden width"),
    (check_swiglu, SwiGLUGateTwice, "branch_projection_reused", "not equal to the reference"),
    (check_swiglu, SwiGLUReshape3D, "hard_coded_axes", "raised ValueError"),
    (check_swiglu, SwiGLUDropout, "dropout_left_on", "two calls on the same input"),
    (check_swiglu, SwiGLUScaled, "extra_scale_factor", "not equal to the reference"),
    (check_swiglu, SwiGLUMeanOverDim1, "token_mixing", "changed the output at"),
    (check_swiglu, SwiGLUDownSwapped, "linear_sizes_swapped", "down_proj has the wrong size"),
    (check_swiglu, None, None, "expected the class SwiGLU (a subclass of nn.Module), got None"),
    (check_swiglu, SwiGLUStub, "not_implemented", "raised NotImplementedError | tried: SwiGLU("),
]
LATE_FAILURE = {check_feed_forward: FFNDetached, check_swiglu: SwiGLUDetachedGate}  # fails late, after most of the work
STUB = {check_feed_forward: FFNStub, check_swiglu: SwiGLUStub}  # check -> the untouched learner stub
# correct in another spelling: must pass (test_ref_ffn)
ACCEPTED = {check_feed_forward: [FFNTanhGelu, FFNHandWrittenGelu],
            check_swiglu: [SwiGLUHandWrittenSilu, SwiGLUInPlaceSilu]}
