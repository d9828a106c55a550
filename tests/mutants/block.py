"""Wrong ``TransformerBlock`` and ``block_parameter_counts`` (stage 07, the Transformer block).

The blocks are built, as the notebook asks, from the course's LayerNorm, MultiHeadSelfAttention and
FeedForward (imported from tinylm_solutions), unless the mutant is about another choice of parts.
"""
import torch
from torch import nn

import torch.nn.functional as F

from tinylm_checks import check_block_parameter_counts, check_causal_self_attention, check_transformer_block

from mutants import attention as at
from mutants.attention import calling
from tinylm_solutions import block as ref
from tinylm_solutions.causal_attention import CausalSelfAttention
from tinylm_solutions.multihead import MultiHeadSelfAttention
from tinylm_solutions.ffn import FeedForward
from tinylm_solutions.attention import causal_mask
from tinylm_solutions.norm import LayerNorm


# --------------------------------------------------------------------------- TransformerBlock

class _Block(nn.Module):
    """Correct __init__ (and forward) shared by the mutants that change one thing."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.norm2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.attn(self.norm1(x), mask)[0]
            x = x + self.ffn(self.norm2(x))
        else:
            x = self.norm1(x + self.attn(x, mask)[0])
            x = self.norm2(x + self.ffn(x))
        return x


class BlockResidualFromNormed(_Block):
    """Pre-LN that overwrites x with norm1(x) first, so the residual adds the normalised tensor."""

    def forward(self, x, mask=None):
        if self.norm_first:
            x = self.norm1(x)
            x = x + self.attn(x, mask)[0]
            x = self.norm2(x)
            x = x + self.ffn(x)
            return x
        return super().forward(x, mask)


class BlockNoResidual(_Block):
    """Chains the sublayers without adding their inputs back (no residual connections)."""

    def forward(self, x, mask=None):
        if self.norm_first:
            x = self.attn(self.norm1(x), mask)[0]
            return self.ffn(self.norm2(x))
        x = self.norm1(self.attn(x, mask)[0])
        return self.norm2(self.ffn(x))


class BlockAttnResidualMissing(_Block):
    """Forgets the '+ x' around the attention sublayer; the FFN's residual is there."""

    def forward(self, x, mask=None):
        if self.norm_first:
            x = self.attn(self.norm1(x), mask)[0]
            return x + self.ffn(self.norm2(x))
        x = self.norm1(self.attn(x, mask)[0])
        return self.norm2(x + self.ffn(x))


class BlockFFNResidualMissing(_Block):
    """Forgets the '+ x' around the FFN sublayer; the attention's residual is there."""

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.attn(self.norm1(x), mask)[0]
            return self.ffn(self.norm2(x))
        x = self.norm1(x + self.attn(x, mask)[0])
        return self.norm2(self.ffn(x))


class BlockSharedNormModule(_Block):
    """Creates one LayerNorm and assigns it to both names: self.norm1 = self.norm2 = LayerNorm(d_model)."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__(d_model, num_heads, d_ff, norm_first)
        self.norm1 = self.norm2 = LayerNorm(d_model)


class BlockOneNorm(nn.Module):
    """Has a single self.norm, used before (or after) both sublayers."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        self.norm_first = norm_first
        self.norm = LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.norm(x), mask)[0]
        return x + self.ffn(self.norm(x))


class BlockNorm1Twice(_Block):
    """Creates norm1 and norm2 but uses norm1 for both sublayers (a copy-paste)."""

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.attn(self.norm1(x), mask)[0]
            return x + self.ffn(self.norm1(x))
        x = self.norm1(x + self.attn(x, mask)[0])
        return self.norm1(x + self.ffn(x))


class BlockNorm2Twice(_Block):
    """Creates norm1 and norm2 but uses norm2 for both sublayers (a copy-paste the other way round)."""

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.attn(self.norm2(x), mask)[0]
            return x + self.ffn(self.norm2(x))
        x = self.norm2(x + self.attn(x, mask)[0])
        return self.norm2(x + self.ffn(x))


class BlockNormsSwapped(_Block):
    """Uses norm2 with the attention and norm1 with the FFN."""

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.attn(self.norm2(x), mask)[0]
            return x + self.ffn(self.norm1(x))
        x = self.norm2(x + self.attn(x, mask)[0])
        return self.norm1(x + self.ffn(x))


class BlockPrePostSwapped(_Block):
    """Reads norm_first backwards: `if not self.norm_first:` for the Pre-LN branch."""

    def forward(self, x, mask=None):
        if not self.norm_first:
            x = x + self.attn(self.norm1(x), mask)[0]
            x = x + self.ffn(self.norm2(x))
        else:
            x = self.norm1(x + self.attn(x, mask)[0])
            x = self.norm2(x + self.ffn(x))
        return x


class BlockAlwaysPreLN(_Block):
    """Accepts norm_first but always does Pre-LN."""

    def forward(self, x, mask=None):
        x = x + self.attn(self.norm1(x), mask)[0]
        return x + self.ffn(self.norm2(x))


class BlockAlwaysPostLN(_Block):
    """Accepts norm_first but always does Post-LN (the wiring of the 2017 paper)."""

    def forward(self, x, mask=None):
        x = self.norm1(x + self.attn(x, mask)[0])
        return self.norm2(x + self.ffn(x))


class BlockNormFirstString(_Block):
    """Stores norm_first but tests `if self.norm_first is not None:`, which is True for False too."""

    def forward(self, x, mask=None):
        if self.norm_first is not None:
            x = x + self.attn(self.norm1(x), mask)[0]
            return x + self.ffn(self.norm2(x))
        return super().forward(x, mask)


class BlockMaskNotPassed(_Block):
    """Calls self.attn(h) without the mask."""

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.attn(self.norm1(x))[0]
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.attn(x)[0])
        return self.norm2(x + self.ffn(x))


class BlockMaskInverted(_Block):
    """Passes ~mask to the attention, reading True as 'blocked' (nn.TransformerEncoderLayer's src_mask)."""

    def forward(self, x, mask=None):
        return super().forward(x, None if mask is None else ~mask)


class BlockAlwaysCausal(_Block):
    """Builds its own causal mask when none is given."""

    def forward(self, x, mask=None):
        if mask is None:
            mask = causal_mask(x.size(1))
        return super().forward(x, mask)


class BlockDropout(_Block):
    """Adds residual dropout, nn.Dropout(0.1), after each sublayer (as GPT-2 does when training)."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__(d_model, num_heads, d_ff, norm_first)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.dropout(self.attn(self.norm1(x), mask)[0])
            return x + self.dropout(self.ffn(self.norm2(x)))
        x = self.norm1(x + self.dropout(self.attn(x, mask)[0]))
        return self.norm2(x + self.dropout(self.ffn(x)))


class BlockFFNDropout(_Block):
    """Creates the FFN with dropout: FeedForward(d_model, d_ff, 0.1)."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__(d_model, num_heads, d_ff, norm_first)
        self.ffn = FeedForward(d_model, d_ff, 0.1)


class BlockExtraFinalNorm(_Block):
    """Pre-LN that normalises its output at the end with a third LayerNorm (the model's final norm, per block)."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__(d_model, num_heads, d_ff, norm_first)
        self.norm3 = LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = super().forward(x, mask)
        return self.norm3(x) if self.norm_first else x


class BlockNormAtEnd(_Block):
    """Pre-LN that ends with norm2 once more: return self.norm2(x)."""

    def forward(self, x, mask=None):
        x = super().forward(x, mask)
        return self.norm2(x) if self.norm_first else x


class BlockParallel(_Block):
    """Computes both sublayers from the block's input (x + attn(...) + ffn(norm2(x))): the FFN never sees
    the attention's output."""

    def forward(self, x, mask=None):
        if self.norm_first:
            return x + self.attn(self.norm1(x), mask)[0] + self.ffn(self.norm2(x))
        h = self.norm1(x + self.attn(x, mask)[0])
        return self.norm2(h + self.ffn(x))


class BlockNormInsideResidual(_Block):
    """Post-LN written as x + norm(sublayer(x)): the norm on the sublayer's output, inside the residual."""

    def forward(self, x, mask=None):
        if self.norm_first:
            return super().forward(x, mask)
        x = x + self.norm1(self.attn(x, mask)[0])
        return x + self.norm2(self.ffn(x))


class BlockAttnPairNotUnpacked(_Block):
    """Adds self.attn(...) to x directly: the attention returns (out, weights)."""

    def forward(self, x, mask=None):
        x = x + self.attn(self.norm1(x), mask)
        return x + self.ffn(self.norm2(x))


class BlockAttnWeights(_Block):
    """Takes element [1] of the attention's pair (the weights) instead of [0] (the output)."""

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.attn(self.norm1(x), mask)[1]
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.attn(x, mask)[1])
        return self.norm2(x + self.ffn(x))


class BlockFFNResidualFromInput(_Block):
    """Pre-LN whose FFN residual adds the block's input x instead of the updated stream x1."""

    def forward(self, x, mask=None):
        if self.norm_first:
            x1 = x + self.attn(self.norm1(x), mask)[0]
            return x + self.ffn(self.norm2(x1))
        return super().forward(x, mask)


class BlockPostFFNResidualFromInput(_Block):
    """Post-LN whose FFN residual adds the block's input: norm2(x + ffn(x1)) with x1 = norm1(x + attn(x))."""

    def forward(self, x, mask=None):
        if self.norm_first:
            return super().forward(x, mask)
        x1 = self.norm1(x + self.attn(x, mask)[0])
        return self.norm2(x + self.ffn(x1))


class BlockReturnsPair(_Block):
    """Returns (x, weights) like the attention does."""

    def forward(self, x, mask=None):
        out, weights = self.attn(self.norm1(x), mask)
        x = x + out
        return x + self.ffn(self.norm2(x)), weights


class BlockHardCodedDff(_Block):
    """Creates the FFN with 4 * d_model hidden units, ignoring d_ff."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__(d_model, num_heads, d_ff, norm_first)
        self.ffn = FeedForward(d_model, 4 * d_model)


class BlockSequentialReLU(_Block):
    """Writes its own FFN, nn.Sequential(Linear, ReLU, Linear): ReLU instead of GELU."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__(d_model, num_heads, d_ff, norm_first)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class BlockTanhGELU(_Block):
    """Writes its own FFN with nn.GELU(approximate="tanh") (GPT-2's approximation)."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__(d_model, num_heads, d_ff, norm_first)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(approximate="tanh"), nn.Linear(d_ff, d_model))


class BlockInPlaceResidual(_Block):
    """Adds the residual in place, x += ..., which changes the caller's tensor."""

    def forward(self, x, mask=None):
        x += self.attn(self.norm1(x), mask)[0]
        x += self.ffn(self.norm2(x))
        return x


class BlockNoNormFirst(nn.Module):
    """__init__(d_model, num_heads, d_ff) without norm_first; always Pre-LN."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.norm2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.norm1(x), mask)[0]
        return x + self.ffn(self.norm2(x))


class BlockForwardWithoutMask(_Block):
    """forward(self, x) takes no mask (and attends to every position)."""

    def forward(self, x):
        return super().forward(x)


class BlockNormsNotCreated(nn.Module):
    """Forgets to create the LayerNorms in __init__ (forward would use them)."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.ffn = FeedForward(d_model, d_ff)


class BlockDefaultPostLN(_Block):
    """Correct wiring, but norm_first defaults to False."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=False):
        super().__init__(d_model, num_heads, d_ff, norm_first)


class BlockDetached(_Block):
    """Detaches the attention's output (out.detach()) before adding it."""

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.attn(self.norm1(x), mask)[0].detach()
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.attn(x, mask)[0].detach())
        return self.norm2(x + self.ffn(x))


class BlockGPT2Names(nn.Module):
    """Names its parts as GPT-2 does (ln_1, attn, ln_2, mlp)."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        self.ln_1 = LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.ln_2 = LayerNorm(d_model)
        self.mlp = FeedForward(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.ln_1(x), mask)[0]
        return x + self.mlp(self.ln_2(x))


class BlockFloat32(_Block):
    """Casts its output to float32 (x.float())."""

    def forward(self, x, mask=None):
        return super().forward(x, mask).float()


class BlockNoReturn(_Block):
    """Computes the block and forgets `return`."""

    def forward(self, x, mask=None):
        x = super().forward(x, mask)  # noqa: F841


class BlockExtraUnusedNorm(_Block):
    """Correct forward, but keeps an unused LayerNorm (self.final_norm) from an earlier attempt."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__(d_model, num_heads, d_ff, norm_first)
        self.final_norm = LayerNorm(d_model)


class BlockStub(nn.Module):
    """The untouched learner stub."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        # YOUR CODE HERE
        raise NotImplementedError()

    def forward(self, x, mask=None):
        # YOUR CODE HERE
        raise NotImplementedError()


class BlockForwardStub(_Block):
    """__init__ done, forward still the untouched stub."""

    def forward(self, x, mask=None):
        # YOUR CODE HERE
        raise NotImplementedError()


def block_function(x, mask=None):
    """A function passed where the class TransformerBlock is expected."""
    return x


transformer_block_instance = _Block(12, 3, 20)
"""An instance, TransformerBlock(12, 3, 20), passed instead of the class."""


# ---- built from PyTorch's parts

class _TorchBlock(nn.Module):
    """A correct block from nn.LayerNorm, nn.MultiheadAttention and an nn.Sequential FFN (passes the check)."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        self.norm_first = norm_first
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def sa(self, h, mask):
        return self.attn(h, h, h, attn_mask=None if mask is None else ~mask)[0]

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.sa(self.norm1(x), mask)
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.sa(x, mask))
        return self.norm2(x + self.ffn(x))


class TorchBlockMaskNotInverted(_TorchBlock):
    """nn.MultiheadAttention given attn_mask=mask: there True means blocked, so the mask is inverted."""

    def sa(self, h, mask):
        return self.attn(h, h, h, attn_mask=mask)[0]


class TorchBlockAttnWeights(_TorchBlock):
    """nn.MultiheadAttention's pair indexed with [1]: the averaged weights (B, T, T), not the output."""

    def sa(self, h, mask):
        return self.attn(h, h, h, attn_mask=None if mask is None else ~mask)[1]


class TorchBlockNotBatchFirst(_TorchBlock):
    """nn.MultiheadAttention without batch_first=True: it reads (B, T, D) as (T, B, D)."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__(d_model, num_heads, d_ff, norm_first)
        self.attn = nn.MultiheadAttention(d_model, num_heads)


class TorchBlockNoNormBias(_TorchBlock):
    """nn.LayerNorm(d_model, bias=False): the LayerNorms have no bias."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__(d_model, num_heads, d_ff, norm_first)
        self.norm1 = nn.LayerNorm(d_model, bias=False)
        self.norm2 = nn.LayerNorm(d_model, bias=False)


# --------------------------------------------------------------------------- block_parameter_counts

def _n(module):
    return sum(p.numel() for p in module.parameters())


def counts_formula(block):
    """Returns the d_ff = 4 D formulas, with D read from the block."""
    D = block.norm1.weight.numel()
    return {"attn": 4 * (D * D + D), "ffn": 8 * D * D + 5 * D, "norms": 4 * D, "total": 12 * D * D + 13 * D}


def counts_12_d_squared(block):
    """Counts the parts, but reports the rule of thumb 12 D^2 as the total."""
    D = block.norm1.weight.numel()
    return {"attn": _n(block.attn), "ffn": _n(block.ffn), "norms": _n(block.norm1) + _n(block.norm2),
            "total": 12 * D * D}


def counts_weights_only(block):
    """Counts only the matrices (p.dim() == 2): biases and LayerNorm parameters are left out."""
    n = lambda m: sum(p.numel() for p in m.parameters() if p.dim() == 2)  # noqa: E731
    return {"attn": n(block.attn), "ffn": n(block.ffn), "norms": n(block.norm1) + n(block.norm2), "total": n(block)}


def counts_weights_by_name(block):
    """Counts only the parameters whose name ends in 'weight'."""
    n = lambda m: sum(p.numel() for name, p in m.named_parameters() if name.endswith("weight"))  # noqa: E731
    return {"attn": n(block.attn), "ffn": n(block.ffn), "norms": n(block.norm1) + n(block.norm2), "total": n(block)}


def counts_one_norm(block):
    """Counts norm1 only under norms."""
    return {"attn": _n(block.attn), "ffn": _n(block.ffn), "norms": _n(block.norm1), "total": _n(block)}


def counts_tensors(block):
    """Counts parameter tensors, len(list(m.parameters())), instead of their elements."""
    n = lambda m: len(list(m.parameters()))  # noqa: E731
    return {"attn": n(block.attn), "ffn": n(block.ffn), "norms": n(block.norm1) + n(block.norm2), "total": n(block)}


def counts_rows(block):
    """Adds len(p), the first dimension of each tensor, instead of p.numel()."""
    n = lambda m: sum(len(p) for p in m.parameters())  # noqa: E731
    return {"attn": n(block.attn), "ffn": n(block.ffn), "norms": n(block.norm1) + n(block.norm2), "total": n(block)}


def counts_general_formula(block):
    """Uses the general formulas with the real d_ff read from ffn.linear1 (not the block's parameters)."""
    D, d_ff = block.ffn.linear1.in_features, block.ffn.linear1.out_features
    c = {"attn": 4 * (D * D + D), "ffn": 2 * D * d_ff + d_ff + D, "norms": 4 * D}
    return {**c, "total": sum(c.values())}


def counts_size_product(block):
    """Counts each tensor as p.size(0) * p.size(-1), which squares the size of a 1-D tensor."""
    n = lambda m: sum(p.size(0) * p.size(-1) for p in m.parameters())  # noqa: E731
    norms = nn.ModuleList([block.norm1, block.norm2])
    return {"attn": n(block.attn), "ffn": n(block.ffn), "norms": n(norms), "total": n(block)}


def counts_norms_each(block):
    """Adds count(norm1) + count(norm2), so a shared LayerNorm counts twice; total from block.parameters()."""
    return {"attn": _n(block.attn), "ffn": _n(block.ffn), "norms": _n(block.norm1) + _n(block.norm2),
            "total": _n(block)}


def counts_norm1_doubled(block):
    """Counts norm1 and doubles it, since the two norms have the same size."""
    return {"attn": _n(block.attn), "ffn": _n(block.ffn), "norms": 2 * _n(block.norm1), "total": _n(block)}


def counts_unfreezes(block):
    """Calls block.requires_grad_(True) 'so nothing is skipped', then counts the trainable parameters."""
    block.requires_grad_(True)
    n = lambda m: sum(p.numel() for p in m.parameters() if p.requires_grad)  # noqa: E731
    norms = nn.ModuleList([block.norm1, block.norm2])
    return {"attn": n(block.attn), "ffn": n(block.ffn), "norms": n(norms), "total": n(block)}


def counts_sets_eval(block):
    """Calls block.eval() first, as before an inference, which changes the block's mode."""
    block.eval()
    norms = nn.ModuleList([block.norm1, block.norm2])
    return {"attn": _n(block.attn), "ffn": _n(block.ffn), "norms": _n(norms), "total": _n(block)}


def counts_int_tensors(block):
    """Computes numel as torch.tensor(p.shape).prod(): the counts are 0-d int tensors, not ints."""
    n = lambda m: sum(torch.tensor(p.shape).prod() for p in m.parameters())  # noqa: E731
    norms = nn.ModuleList([block.norm1, block.norm2])
    return {"attn": n(block.attn), "ffn": n(block.ffn), "norms": n(norms), "total": n(block)}


def counts_total_from_parts(block):
    """Adds up the three parts as the total (misses anything else the block holds)."""
    c = {"attn": _n(block.attn), "ffn": _n(block.ffn), "norms": _n(block.norm1) + _n(block.norm2)}
    return {**c, "total": c["attn"] + c["ffn"] + c["norms"]}


def counts_total_forgets_norms(block):
    """total = attn + ffn: the norms are left out of the total."""
    c = {"attn": _n(block.attn), "ffn": _n(block.ffn), "norms": _n(block.norm1) + _n(block.norm2)}
    return {**c, "total": c["attn"] + c["ffn"]}


def counts_shared_twice(block):
    """Adds norm1's and norm2's counts (a shared LayerNorm counts twice), and the parts plus the rest into the total."""
    c = {"attn": _n(block.attn), "ffn": _n(block.ffn), "norms": _n(block.norm1) + _n(block.norm2)}
    parts = ("attn", "ffn", "norm1", "norm2")
    rest = sum(p.numel() for n, p in block.named_parameters() if n.split(".")[0] not in parts)
    return {**c, "total": c["attn"] + c["ffn"] + c["norms"] + rest}


def counts_no_dedup(block):
    """Counts the total with named_parameters(remove_duplicate=False): a shared tensor counts twice."""
    norms = sum(p.numel() for p in nn.ModuleList([block.norm1, block.norm2]).parameters())
    return {"attn": _n(block.attn), "ffn": _n(block.ffn), "norms": norms,
            "total": sum(p.numel() for _, p in block.named_parameters(remove_duplicate=False))}


def counts_trainable_only(block):
    """The usual snippet: sum(p.numel() for p in m.parameters() if p.requires_grad)."""
    n = lambda m: sum(p.numel() for p in m.parameters() if p.requires_grad)  # noqa: E731
    return {"attn": n(block.attn), "ffn": n(block.ffn), "norms": n(block.norm1) + n(block.norm2), "total": n(block)}


def counts_norm_with_sublayer(block):
    """Counts each sublayer with its LayerNorm (attn = norm1 + attn, ffn = norm2 + ffn)."""
    return {"attn": _n(block.attn) + _n(block.norm1), "ffn": _n(block.ffn) + _n(block.norm2),
            "norms": _n(block.norm1) + _n(block.norm2), "total": _n(block)}


def counts_wrong_key(block):
    """Uses the key "norm" instead of "norms"."""
    return {"attn": _n(block.attn), "ffn": _n(block.ffn), "norm": _n(block.norm1) + _n(block.norm2), "total": _n(block)}


def counts_tuple(block):
    """Returns a tuple (attn, ffn, norms, total) instead of a dict."""
    return _n(block.attn), _n(block.ffn), _n(block.norm1) + _n(block.norm2), _n(block)


def counts_tensor_values(block):
    """Adds the counts as float tensors: torch.tensor(p.shape).prod() in float."""
    n = lambda m: sum(torch.tensor(p.shape, dtype=torch.float32).prod() for p in m.parameters())  # noqa: E731
    return {"attn": n(block.attn), "ffn": n(block.ffn), "norms": n(block.norm1) + n(block.norm2), "total": n(block)}


def counts_no_return(block):
    """Builds the dict and forgets `return`."""
    counts = {"attn": _n(block.attn), "ffn": _n(block.ffn), "norms": _n(block.norm1) + _n(block.norm2),  # noqa: F841
              "total": _n(block)}


def counts_stub(block):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


# --------------------------------------------------------------------------- what the tests feed the checks
# (check, mutant, expected mistake id or None, key phrase of the problem): see tests/test_checks_mutants.py

# --------------------------------------------------------------------------- CausalSelfAttention

class _CSA(CausalSelfAttention):
    """The reference, with the steps of forward as methods a mutant overrides one at a time."""

    def heads(self, t, B, T):
        return t.view(B, T, self.num_heads, self.d_head).transpose(1, 2)  # (B, H, T, d_head)

    def attend(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                              is_causal=True)

    def merge(self, y, B, T, D):
        return y.transpose(1, 2).reshape(B, T, D)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.split(self.qkv(x))
        y = self.attend(*(self.heads(t, B, T) for t in (q, k, v)))
        return self.project(self.merge(y, B, T, D))

    def split(self, qkv):
        return qkv.chunk(3, dim=-1)

    def project(self, y):
        return self.out(y)


class CSAOrderKQV(_CSA):
    """Splits the fused output as k, q, v."""

    def split(self, qkv):
        k, q, v = qkv.chunk(3, dim=-1)
        return q, k, v


class CSANotCausal(_CSA):
    """Forgets is_causal=True."""

    def attend(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0)


class CSADropoutInEval(_CSA):
    """Passes dropout_p=self.dropout always: the functional call does not read self.training."""

    def attend(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout, is_causal=True)


class CSANoDropout(_CSA):
    """Never drops anything: dropout_p left out."""

    def attend(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class CSAOutputDropout(_CSA):
    """Drops elements of the output (nn.Dropout after self.out) instead of attention weights."""

    def attend(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def project(self, y):
        return F.dropout(self.out(y), self.dropout, training=self.training)


class CSAManualNotRescaled(_CSA):
    """Writes attention by hand and drops weights with a bernoulli mask, without dividing by 1 - p."""

    def attend(self, q, k, v):
        T = q.size(-2)
        scores = q @ k.transpose(-2, -1) / self.d_head ** 0.5  # (B, H, T, T)
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
        w = scores.softmax(-1)
        if self.training and self.dropout:
            w = w * (torch.rand_like(w) >= self.dropout)
        return w @ v


class CSAOutTransposed(_CSA):
    """Multiplies by the out weight directly, y @ self.out.weight: the matrix transposed."""

    def project(self, y):
        return y @ self.out.weight


class CSAScaleByDModel(_CSA):
    """Scales the scores by 1/sqrt(d_model) instead of 1/sqrt(d_head)."""

    def attend(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=(self.num_heads * self.d_head) ** -0.5,
                                              dropout_p=self.dropout if self.training else 0.0)


class CSASplitNoTranspose(_CSA):
    """Splits heads with .view(B, H, T, d_head), no transpose."""

    def heads(self, t, B, T):
        return t.reshape(B, self.num_heads, T, self.d_head)


class CSAMergeNoTranspose(_CSA):
    """Merges heads with .reshape(B, T, D), no transpose back."""

    def merge(self, y, B, T, D):
        return y.reshape(B, T, D)


class CSANoOut(_CSA):
    """Forgets the output projection."""

    def project(self, y):
        return y


class CSABiases(CausalSelfAttention):
    """Keeps nn.Linear's default biases."""

    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__(d_model, num_heads, dropout)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)


class CSANoValueError(_CSA):
    """Lets d_model % num_heads != 0 through (d_head rounds down)."""

    def __init__(self, d_model, num_heads, dropout=0.0):
        nn.Module.__init__(self)
        self.num_heads, self.d_head, self.dropout = num_heads, d_model // num_heads, float(dropout)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)


class CSADropoutModule(_CSA):
    """Stores nn.Dropout(dropout) as self.dropout instead of the probability."""

    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__(d_model, num_heads, dropout)
        self.dropout = nn.Dropout(dropout)

    def attend(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.dropout.p if self.training else 0.0)


class CSAKeysNotTransposed(_CSA):
    """Writes the scores as q @ k by hand: the keys not transposed (runs only when T = d_head)."""

    def attend(self, q, k, v):
        T = q.size(-2)
        scores = (q @ k / self.d_head ** 0.5).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
        return F.dropout(scores.softmax(-1), self.dropout, self.training) @ v


class CSAHeadsRepeated(_CSA):
    """Every head reads the first d_head features (repeat of one slice)."""

    def heads(self, t, B, T):
        return t[..., :self.d_head].unsqueeze(1).repeat(1, self.num_heads, 1, 1)


class CSASplitAndMergeNoTranspose(_CSA):
    """Splits with .reshape(B, H, T, d_head) and merges with .reshape(B, T, D): neither transposes (a new learner's
    second attempt, after .view raised)."""

    def heads(self, t, B, T):
        return t.reshape(B, self.num_heads, T, self.d_head)

    def merge(self, y, B, T, D):
        return y.reshape(B, T, D)


class CSAViewStraightToHeads(_CSA):
    """Splits with .view(B, H, T, d_head) on chunk's output: raises (the chunks are not contiguous)."""

    def heads(self, t, B, T):
        return t.view(B, self.num_heads, T, self.d_head)


class CSAMergeInterleaved(_CSA):
    """Merges with permute(0, 2, 3, 1): each head's features interleaved."""

    def merge(self, y, B, T, D):
        return y.permute(0, 2, 3, 1).reshape(B, T, D)


class _CSACalling(_CSA):
    """Right, around an attention function ``sdpa`` given the causal mask (tests/mutants/attention.py's
    :func:`calling`)."""

    def attend(self, q, k, v):
        T = q.size(-2)
        return self.sdpa(q, k, v, torch.ones(T, T, dtype=torch.bool).tril())[0]


# issue 41's four unnamed families, here and in stage 02's multi-head check (tests/mutants/multihead.py)
class CSAScaleByDModelNotSqrt(_CSA):
    """Scales the scores by 1/d_model: neither the square root nor the head's width."""

    def attend(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1 / (self.num_heads * self.d_head),
                                              dropout_p=self.dropout if self.training else 0.0)


class CSASplitDHeadFirst(_CSA):
    """Splits with .view(B, T, d_head, H), heads last, then permutes them to the front: each head reads every H-th
    feature, not a block."""

    def heads(self, t, B, T):
        return t.view(B, T, self.d_head, self.num_heads).permute(0, 3, 1, 2)


class CSASoftmaxOverHeads(_CSA):
    """Writes attention by hand with the softmax over dim=1, the heads."""

    def attend(self, q, k, v):
        T = q.size(-2)
        scores = (q @ k.transpose(-2, -1) / self.d_head ** 0.5).masked_fill(
            ~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
        return F.dropout(scores.softmax(dim=1), self.dropout, self.training) @ v


class CSATriuDiagonal0(_CSA):
    """Masks with triu(diagonal=0): the diagonal is hidden too, and the first query may attend to no key (NaN)."""

    def attend(self, q, k, v):
        T = q.size(-2)
        scores = (q @ k.transpose(-2, -1) / self.d_head ** 0.5).masked_fill(
            torch.ones(T, T, dtype=torch.bool).triu(diagonal=0), float("-inf"))
        return F.dropout(scores.softmax(-1), self.dropout, self.training) @ v


class CSATriuDiagonal0Guarded(_CSA):
    """Masks with triu(diagonal=0) and guards the softmax with nan_to_num: no NaN, the first position attends to
    nothing and every other one not to itself."""

    def attend(self, q, k, v):
        T = q.size(-2)
        scores = (q @ k.transpose(-2, -1) / self.d_head ** 0.5).masked_fill(
            torch.ones(T, T, dtype=torch.bool).triu(diagonal=0), float("-inf"))
        return F.dropout(scores.softmax(-1).nan_to_num(0.0), self.dropout, self.training) @ v


class CSAStub(CausalSelfAttention):
    """The untouched stub."""

    def __init__(self, d_model, num_heads, dropout=0.0):
        nn.Module.__init__(self)
        # YOUR CODE HERE
        raise NotImplementedError()


class CSAManual(CausalSelfAttention):
    """Honest: attention by hand, F.dropout(training=self.training) on the weights, torch.split, reshape."""

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (t.reshape(B, T, self.num_heads, self.d_head).transpose(1, 2) for t in self.qkv(x).split(D, dim=-1))
        scores = q @ k.transpose(-2, -1) / self.d_head ** 0.5  # (B, H, T, T)
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=x.device).tril(), float("-inf"))
        w = F.dropout(scores.softmax(-1), self.dropout, training=self.training)
        return self.out((w @ v).transpose(1, 2).reshape(B, T, D))


class CSAEinsum(CausalSelfAttention):
    """Honest: einsum heads, unflatten."""

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (t.unflatten(-1, (self.num_heads, self.d_head)) for t in self.qkv(x).chunk(3, dim=-1))  # (B, T, H, d)
        scores = torch.einsum("bthd,bshd->bhts", q, k) * self.d_head ** -0.5
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        w = F.dropout(scores.softmax(-1), self.dropout, self.training)
        return self.out(torch.einsum("bhts,bshd->bthd", w, v).reshape(B, T, D))


HONEST_CSA = [CSAManual, CSAEinsum]  # other ways to write it, which the check must accept

ROWS = [
    # ---- TransformerBlock: the named mistakes
    (check_transformer_block, BlockResidualFromNormed, "residual_from_normalised", "not equal to the reference"),
    (check_transformer_block, BlockNoResidual, "missing_residual", "not equal to the reference"),
    (check_transformer_block, BlockSharedNormModule, "shared_layer_norm", "are the same module"),
    (check_transformer_block, BlockOneNorm, "shared_layer_norm", "has no attribute norm1: it has one LayerNorm"),
    (check_transformer_block, BlockNorm1Twice, "norm2_unused", "not equal to the reference"),
    (check_transformer_block, BlockNorm2Twice, "norm1_unused", "not equal to the reference"),
    (check_transformer_block, BlockPrePostSwapped, "pre_post_swapped", "norm_first=True gave the Post-LN output"),
    (check_transformer_block, BlockMaskNotPassed, "mask_not_passed_on", "changing the tokens after position"),
    # ---- TransformerBlock: more named mistakes
    (check_transformer_block, BlockAttnResidualMissing, "attn_residual_missing", "not equal to the reference"),
    (check_transformer_block, BlockFFNResidualMissing, "ffn_residual_missing", "not equal to the reference"),
    (check_transformer_block, BlockNormsSwapped, "norms_swapped", "not equal to the reference"),
    (check_transformer_block, BlockAlwaysPreLN, "norm_first_ignored", "gave the same output, the Pre-LN"),
    (check_transformer_block, BlockAlwaysPostLN, "norm_first_ignored", "gave the same output, the Post-LN"),
    (check_transformer_block, BlockNormFirstString, "norm_first_ignored", "gave the same output"),
    (check_transformer_block, BlockMaskInverted, "mask_inverted", "changing the tokens after position"),
    (check_transformer_block, BlockAlwaysCausal, "always_causal", "not equal to the reference"),
    (check_transformer_block, BlockDropout, "dropout_in_block", "two calls on the same input"),
    (check_transformer_block, BlockFFNDropout, "dropout_in_block", "two calls on the same input"),
    (check_transformer_block, BlockExtraFinalNorm, "extra_final_norm", "not equal to the reference"),
    (check_transformer_block, BlockNormAtEnd, "extra_final_norm", "not equal to the reference"),
    (check_transformer_block, BlockParallel, "ffn_reads_block_input", "not equal to the reference"),
    (check_transformer_block, BlockNormInsideResidual, "norm_inside_residual", "Post-LN (norm_first=False) output"),
    (check_transformer_block, BlockAttnPairNotUnpacked, "attn_pair_not_unpacked", "raised TypeError"),
    (check_transformer_block, BlockReturnsPair, "block_returns_pair", "forward returned a pair"),
    (check_transformer_block, BlockAttnWeights, "attn_weights_used", "raised RuntimeError"),
    (check_transformer_block, TorchBlockAttnWeights, "attn_weights_used", "raised RuntimeError"),
    (check_transformer_block, BlockFFNResidualFromInput, "ffn_residual_adds_block_input",
     "Pre-LN (norm_first=True) output"),
    (check_transformer_block, BlockPostFFNResidualFromInput, "ffn_residual_adds_block_input",
     "Post-LN (norm_first=False) output"),
    (check_transformer_block, BlockHardCodedDff, "d_ff_ignored", "hidden width"),
    (check_transformer_block, BlockSequentialReLU, "ffn_activation", "not equal to the reference"),
    (check_transformer_block, BlockTanhGELU, "ffn_activation", "not equal to the reference"),
    (check_transformer_block, BlockInPlaceResidual, "input_modified_in_place", "changed its input x in place"),
    (check_transformer_block, BlockDetached, "no_gradient", "no gradient reaches norm1.weight"),
    (check_transformer_block, BlockGPT2Names, "attribute_name", "has no attribute norm1 (its submodules: ln_1"),
    (check_transformer_block, BlockFloat32, "dtype_changed", "has dtype torch.float32"),
    (check_transformer_block, BlockNoReturn, "missing_return", "is not a tensor"),
    (check_transformer_block, TorchBlockMaskNotInverted, "mask_inverted", "output is NaN exactly at the positions"),
    # ---- TransformerBlock: unnamed, with a hint that says where to look
    (check_transformer_block, BlockNoNormFirst, None, "has no argument norm_first"),
    (check_transformer_block, BlockDefaultPostLN, None, "created without norm_first is not Pre-LN"),
    (check_transformer_block, BlockForwardWithoutMask, None, "raised TypeError"),
    (check_transformer_block, BlockNormsNotCreated, None, "has no attribute norm1 (its submodules: attn, ffn)"),
    (check_transformer_block, BlockExtraUnusedNorm, None, "wrong number of parameters"),
    (check_transformer_block, TorchBlockNotBatchFirst, None, "without batch_first=True"),
    (check_transformer_block, TorchBlockNoNormBias, None, "is not a LayerNorm over d_model"),
    # ---- TransformerBlock: robustness
    (check_transformer_block, None, None, "expected the class TransformerBlock (a subclass of nn.Module), got None"),
    (check_transformer_block, block_function, None, "got function"),
    (check_transformer_block, transformer_block_instance, None, "got an instance of"),
    (check_transformer_block, BlockStub, "not_implemented", "raised NotImplementedError | tried: TransformerBlock("),
    (check_transformer_block, BlockForwardStub, "not_implemented", "raised NotImplementedError"),
    # ---- block_parameter_counts: named mistakes
    (check_block_parameter_counts, counts_formula, "count_from_formula", "the count for 'ffn' is wrong"),
    (check_block_parameter_counts, counts_12_d_squared, "count_from_formula", "the count for 'total' is wrong"),
    (check_block_parameter_counts, counts_weights_only, "biases_not_counted", "the count for 'attn' is wrong"),
    (check_block_parameter_counts, counts_weights_by_name, "biases_not_counted", "the count for 'attn' is wrong"),
    (check_block_parameter_counts, counts_one_norm, "one_norm_counted", "the count for 'norms' is wrong"),
    (check_block_parameter_counts, counts_tensors, "count_not_numel", "the count for 'attn' is wrong"),
    (check_block_parameter_counts, counts_rows, "count_not_numel", "the count for 'attn' is wrong"),
    (check_block_parameter_counts, counts_total_from_parts, "total_not_sum", "the count for 'total' is wrong"),
    (check_block_parameter_counts, counts_total_forgets_norms, "total_not_sum", "the count for 'total' is wrong"),
    (check_block_parameter_counts, counts_shared_twice, "shared_counted_twice", "the count for 'norms' is wrong"),
    (check_block_parameter_counts, counts_no_dedup, "shared_counted_twice", "the count for 'total' is wrong"),
    (check_block_parameter_counts, counts_trainable_only, "trainable_only", "the count for 'attn' is wrong"),
    (check_block_parameter_counts, counts_norm_with_sublayer, "norm_counted_in_sublayer",
     "the count for 'attn' is wrong"),
    (check_block_parameter_counts, counts_general_formula, "count_from_formula", "the count for 'total' is wrong"),
    (check_block_parameter_counts, counts_size_product, "count_not_numel", "the count for 'attn' is wrong"),
    (check_block_parameter_counts, counts_norms_each, "shared_counted_twice", "the count for 'norms' is wrong"),
    (check_block_parameter_counts, counts_norm1_doubled, "shared_counted_twice", "the count for 'norms' is wrong"),
    (check_block_parameter_counts, counts_unfreezes, "block_changed", "changed the block it was given"),
    (check_block_parameter_counts, counts_sets_eval, "block_changed", "changed the block it was given"),
    (check_block_parameter_counts, counts_int_tensors, "count_not_int", "is not an int"),
    (check_block_parameter_counts, counts_tensor_values, "count_not_int", "is not an int"),
    # ---- block_parameter_counts: robustness
    (check_block_parameter_counts, counts_wrong_key, None, "the dict has no key 'norms'"),
    (check_block_parameter_counts, counts_tuple, None, "the result is not a dict"),
    (check_block_parameter_counts, counts_no_return, "missing_return", "the result is not a dict"),
    (check_block_parameter_counts, counts_stub, "not_implemented", "raised NotImplementedError"),
    (check_block_parameter_counts, None, None, "expected the function block_parameter_counts, got None"),
    (check_block_parameter_counts, ref.TransformerBlock, None, "got a class"),
    # ---- CausalSelfAttention
    (check_causal_self_attention, CSAOrderKQV, "qkv_order", "not equal to the reference"),
    (check_causal_self_attention, CSANotCausal, "not_causal", "not equal to the reference"),
    (check_causal_self_attention, CSADropoutInEval, "sdpa_dropout_in_eval", "in eval() two calls"),
    (check_causal_self_attention, CSANoDropout, "dropout_not_in_training", "all give the same output"),
    (check_causal_self_attention, CSAOutputDropout, "output_dropout", "exactly 0 in rows that are not all 0"),
    (check_causal_self_attention, CSAManualNotRescaled, "dropout_not_rescaled", "is not the eval output"),
    (check_causal_self_attention, CSAOutTransposed, "weight_transposed", "not equal to the reference"),
    (check_causal_self_attention, CSAScaleByDModel, "scale_by_sqrt_d_model", "not equal to the reference"),
    (check_causal_self_attention, CSASplitNoTranspose, "split_without_transpose", "not equal to the reference"),
    (check_causal_self_attention, CSAMergeNoTranspose, "merge_without_transpose", "not equal to the reference"),
    (check_causal_self_attention, CSANoOut, "w_o_not_applied", "not equal to the reference"),
    (check_causal_self_attention, CSABiases, "linear_with_bias", "bias"),
    (check_causal_self_attention, CSANoValueError, "no_divisibility_check", "was created without complaint"),
    (check_causal_self_attention, CSADropoutModule, None, "CSADropoutModule.dropout is an nn.Dropout module, not the number 0.0"),
    (check_causal_self_attention, CSAKeysNotTransposed, "keys_not_transposed", "raised RuntimeError"),
    (check_causal_self_attention, CSAHeadsRepeated, "heads_repeated", "not equal to the reference"),
    (check_causal_self_attention, CSAMergeInterleaved, "merge_interleaved", "not equal to the reference"),
    # ---- issue 41: the four families it found unnamed (one table with stage 02's check: multihead.head_variants)
    (check_causal_self_attention, CSAScaleByDModelNotSqrt, "scale_by_d_model", "not equal to the reference"),
    (check_causal_self_attention, CSASplitDHeadFirst, "split_interleaved", "not equal to the reference"),
    (check_causal_self_attention, CSASoftmaxOverHeads, "softmax_over_heads", "contains NaN"),
    (check_causal_self_attention, CSATriuDiagonal0, "causal_mask_hides_diagonal", "contains NaN"),
    (check_causal_self_attention, CSATriuDiagonal0Guarded, "causal_mask_hides_diagonal", "not equal to the reference"),
    # ---- issue 41: every mistake this check can name has a mutant of this check; these are the module
    # around the learner's own attention function with a slip (tests/mutants/attention.py's calling)
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_d_k_from_wrong_dim, "CSA"), "d_k_from_wrong_dim", "not equal to the reference"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_int_sqrt, "CSA"), "int_sqrt", "not equal to the reference"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_mask_added, "CSA"), "mask_added", "not equal to the reference"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_mask_after_softmax, "CSA"), "mask_after_softmax", "not equal to the reference"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_mask_inverted, "CSA"), "mask_inverted", "contains NaN"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_mask_multiplied, "CSA"), "mask_multiplied", "not equal to the reference"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_mask_transposed, "CSA"), "mask_transposed", "not equal to the reference"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_no_scaling, "CSA"), "no_scaling", "not equal to the reference"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_scale_by_d_k, "CSA"), "scale_by_d_k", "not equal to the reference"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_scale_multiplied, "CSA"), "scale_multiplied", "not equal to the reference"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_softmax_dim_0, "CSA"), "softmax_over_batch", "not equal to the reference"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_softmax_over_queries, "CSA"), "softmax_over_queries", "not equal to the reference"),
    (check_causal_self_attention, calling(_CSACalling, at.sdpa_sqrt_precedence, "CSA"), "sqrt_precedence", "not equal to the reference"),
    (check_causal_self_attention, CSASplitAndMergeNoTranspose, "split_without_transpose", "not equal to the reference"),
    (check_causal_self_attention, CSAViewStraightToHeads, "view_after_transpose", "raised RuntimeError"),
    (check_causal_self_attention, CSAStub, "not_implemented", "raised NotImplementedError"),
    (check_causal_self_attention, None, None, "got None"),
]
LATE_FAILURE = {check_transformer_block: BlockExtraUnusedNorm, check_causal_self_attention: CSAManualNotRescaled,
                check_block_parameter_counts: counts_trainable_only}  # fails late, after the check did most of its work
STUB = {check_transformer_block: BlockStub, check_block_parameter_counts: counts_stub,
        check_causal_self_attention: CSAStub}  # check -> the untouched stub
