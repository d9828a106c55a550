"""Wrong ``sinusoidal_position_encoding``, ``PositionalEncoding``, ``LearnedPositionalEmbedding`` and
``apply_rope`` (stage 04)."""
import math

import numpy as np
import torch
from torch import nn

from tinylm_checks import (check_apply_rope, check_learned_positional_embedding, check_positional_encoding,
                           check_sinusoidal_position_encoding)
from tinylm_solutions import position as ref


# --------------------------------------------------------------------------- sinusoidal_position_encoding

def _interleave(sin, cos):
    pe = torch.zeros(sin.shape[0], 2 * sin.shape[1])
    pe[:, 0::2] = sin
    pe[:, 1::2] = cos
    return pe


def table_sin_cos_swapped(max_len, d_model):
    """Puts the cosines in the even columns and the sines in the odd ones."""
    pos = torch.arange(max_len).float()[:, None]
    angles = pos / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    return _interleave(torch.cos(angles), torch.sin(angles))


def table_concatenated(max_len, d_model):
    """Concatenates all the sines, then all the cosines (tensor2tensor's layout)."""
    pos = torch.arange(max_len).float()[:, None]
    angles = pos / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)


def table_exponent_i_over_d(max_len, d_model):
    """Uses the pair index i in 10000^(i/D), forgetting the 2."""
    pos = torch.arange(max_len).float()[:, None]
    i = torch.arange(d_model // 2)
    angles = pos / 10000 ** (i / d_model)
    return _interleave(torch.sin(angles), torch.cos(angles))


def table_exponent_doubled(max_len, d_model):
    """Loops over even columns i = 0, 2, 4, ... and still writes 2 * i / d_model (a bug of many blog posts)."""
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            pe[pos, i] = math.sin(pos / 10000 ** (2 * i / d_model))
            pe[pos, i + 1] = math.cos(pos / 10000 ** (2 * i / d_model))
    return pe


def table_base_1000(max_len, d_model):
    """Types 1000 instead of 10000."""
    pos = torch.arange(max_len).float()[:, None]
    angles = pos / 1000 ** (torch.arange(0, d_model, 2) / d_model)
    return _interleave(torch.sin(angles), torch.cos(angles))


def table_log10(max_len, d_model):
    """The exp/log form with math.log10 instead of math.log: base e^4 (about 54.6) instead of 10000."""
    pos = torch.arange(max_len).float()[:, None]
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log10(10000.0) / d_model))
    return _interleave(torch.sin(pos * div_term), torch.cos(pos * div_term))


def table_exp_without_minus(max_len, d_model):
    """The exp/log form without the minus sign: frequencies 10000^(+2i/D) that grow."""
    pos = torch.arange(max_len).float()[:, None]
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (math.log(10000.0) / d_model))
    return _interleave(torch.sin(pos * div_term), torch.cos(pos * div_term))


def table_integer_exponent(max_len, d_model):
    """Writes 2 * i // d_model: the exponent is always 0, every pair has frequency 1."""
    pos = torch.arange(max_len).float()[:, None]
    i = torch.arange(d_model // 2)
    angles = pos / 10000 ** (2 * i // d_model)
    return _interleave(torch.sin(angles), torch.cos(angles))


def table_floor_angle(max_len, d_model):
    """Divides the positions with //, which floors every angle."""
    pos = torch.arange(max_len).float()[:, None]
    angles = pos // 10000 ** (torch.arange(0, d_model, 2) / d_model)
    return _interleave(torch.sin(angles), torch.cos(angles))


def table_cos_own_exponent(max_len, d_model):
    """Loops over every column c with 10000^(c/D): the cos of column 2i+1 gets exponent (2i+1)/D."""
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for c in range(d_model):
            angle = pos / 10000 ** (c / d_model)
            pe[pos, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return pe


def table_cos_next_exponent(max_len, d_model):
    """Loops over even columns i and gives the cos column i+1 the exponent 2(i+1)/D of the next pair."""
    pe = torch.zeros(max_len, d_model)
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            pe[pos, i] = math.sin(pos / 10000 ** (i / d_model))
            pe[pos, i + 1] = math.cos(pos / 10000 ** ((i + 2) / d_model))
    return pe


def table_positions_from_one(max_len, d_model):
    """Counts positions 1 .. max_len."""
    pos = torch.arange(1, max_len + 1).float()[:, None]
    angles = pos / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    return _interleave(torch.sin(angles), torch.cos(angles))


def table_pairs_from_one(max_len, d_model):
    """Numbers the pairs 1 .. D/2, so pair 0 turns by 10000^(-2/D) instead of 1."""
    pos = torch.arange(max_len).float()[:, None]
    i = torch.arange(1, d_model // 2 + 1)
    angles = pos / 10000 ** (2 * i / d_model)
    return _interleave(torch.sin(angles), torch.cos(angles))


def table_float64(max_len, d_model):
    """Computes and returns the table in float64."""
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    angles = pos / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe


def table_long(max_len, d_model):
    """Creates the table with torch.zeros_like of the integer positions: every sin and cos is truncated."""
    pos = torch.arange(max_len)[:, None]
    pe = torch.zeros_like(pos).repeat(1, d_model)
    angles = pos / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe


def table_transposed(max_len, d_model):
    """Returns the table transposed, (d_model, max_len)."""
    return ref.sinusoidal_position_encoding(max_len, d_model).T


def table_hard_coded_width(max_len, d_model):
    """Hard-codes 14 columns (the width of the notebook's example) in the frequencies."""
    pos = torch.arange(max_len).float()[:, None]
    angles = pos / 10000 ** (torch.arange(0, 14, 2) / d_model)
    return _interleave(torch.sin(angles), torch.cos(angles))


def table_exponent_over_max_len(max_len, d_model):
    """Copy-paste slip: divides the exponent by max_len instead of d_model."""
    pos = torch.arange(max_len)[:, None]
    angles = pos / 10000 ** (torch.arange(0, d_model, 2) / max_len)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def table_exponent_over_512(max_len, d_model):
    """Hard-codes the paper's d_model = 512 in the exponent."""
    pos = torch.arange(max_len)[:, None]
    angles = pos / 10000 ** (torch.arange(0, d_model, 2) / 512)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def table_base_e(max_len, d_model):
    """The exp form without log(10000): exp(-2i/D), i.e. base e."""
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    omega = torch.exp(-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    return _interleave(torch.sin(pos * omega), torch.cos(pos * omega))


def table_numpy(max_len, d_model):
    """Builds the table in numpy and returns the numpy array."""
    pos = np.arange(max_len)[:, None]
    angles = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((max_len, d_model), dtype=np.float32)
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


def table_no_return(max_len, d_model):
    """Builds the table and forgets `return`."""
    pe = ref.sinusoidal_position_encoding(max_len, d_model)  # noqa: F841


def table_stub(max_len, d_model):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


# --------------------------------------------------------------------------- PositionalEncoding

class _PE(nn.Module):
    """Correct __init__ (a persistent buffer pe (1, max_len, D)); forward overridden by the mutants."""

    def __init__(self, d_model, max_len=512):
        super().__init__()
        self.d_model = d_model
        self.register_buffer("pe", ref.sinusoidal_position_encoding(max_len, d_model)[None])

    def forward(self, x):
        return x + self.pe[:, :x.size(1)]


class PENotSliced(_PE):
    """Adds the whole table: x + self.pe."""

    def forward(self, x):
        return x + self.pe


class PESlicedOnBatch(_PE):
    """Slices the first axis: self.pe[:T] (the batch axis, of size 1)."""

    def forward(self, x):
        return x + self.pe[:x.size(1)]


class PEParameter(_PE):
    """Stores the table as an nn.Parameter (with requires_grad=False)."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.pe = nn.Parameter(ref.sinusoidal_position_encoding(max_len, d_model)[None], requires_grad=False)


class PEPlainAttribute(_PE):
    """Stores the table as a plain attribute, self.pe = table."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.pe = ref.sinusoidal_position_encoding(max_len, d_model)[None]


class PENotPersistent(_PE):
    """Registers the buffer with persistent=False."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.register_buffer("pe", ref.sinusoidal_position_encoding(max_len, d_model)[None], persistent=False)


class PENoBatchAxis(_PE):
    """Keeps the table (max_len, D), without the batch axis, and adds self.pe[:T]."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.register_buffer("pe", ref.sinusoidal_position_encoding(max_len, d_model))

    def forward(self, x):
        return x + self.pe[:x.size(1)]


class PEMultiplied(_PE):
    """Multiplies x by the table."""

    def forward(self, x):
        return x * self.pe[:, :x.size(1)]


class PEScaledBySqrtD(_PE):
    """Scales x by sqrt(d_model) first (the embedding's job, stage 08)."""

    def forward(self, x):
        return x * math.sqrt(self.d_model) + self.pe[:, :x.size(1)]


class PEDropout(_PE):
    """Copies the PyTorch tutorial: dropout(x + pe) with p = 0.1."""

    def __init__(self, d_model, max_len=512, dropout=0.1):
        super().__init__(d_model, max_len)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x):
        return self.dropout(x + self.pe[:, :x.size(1)])


class PETFromBatch(_PE):
    """Reads T with x.size(0), the batch axis."""

    def forward(self, x):
        T = x.size(0)
        return x + self.pe[:, :T]


class PEReturnsTable(_PE):
    """Returns the sliced table and forgets x."""

    def forward(self, x):
        return self.pe[:, :x.size(1)]


class PEOwnTableSwapped(_PE):
    """Builds pe from a table whose sin and cos are swapped (exercise 1's bug, carried over)."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.register_buffer("pe", table_sin_cos_swapped(max_len, d_model)[None])


class PEInPlace(_PE):
    """Adds in place: x += pe, which changes the caller's tensor."""

    def forward(self, x):
        x += self.pe[:, :x.size(1)]
        return x


class PEOtherName(_PE):
    """Registers the table under another name, pos_table."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.register_buffer("pos_table", ref.sinusoidal_position_encoding(max_len, d_model)[None])

    def forward(self, x):
        return x + self.pos_table[:, :x.size(1)]


class PEArgsSwapped(_PE):
    """Takes (max_len, d_model), the other order."""

    def __init__(self, max_len, d_model):
        super().__init__(d_model, max_len)


class PENoSuperInit(_PE):
    """Registers the buffer before calling super().__init__()."""

    def __init__(self, d_model, max_len=512):
        self.register_buffer("pe", ref.sinusoidal_position_encoding(max_len, d_model)[None])
        super().__init__(d_model, max_len)


class PEDetached(_PE):
    """Detaches x (x.detach() + pe): no gradient flows back to the embeddings."""

    def forward(self, x):
        return x.detach() + self.pe[:, :x.size(1)]


class PEFloat64Table(_PE):
    """Builds the table in float32, then stores it as float64 (.double()): float32 x comes back float64."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.register_buffer("pe", ref.sinusoidal_position_encoding(max_len, d_model).double()[None])


class PEFloat64Forward(_PE):
    """Casts the positions to float64 in forward "for precision": float32 x comes back float64."""

    def forward(self, x):
        return x + self.pe[:, :x.size(1)].double()


class PETableArgsSwapped(_PE):
    """Calls the table builder with (d_model, max_len): the buffer is (1, D, max_len)."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.register_buffer("pe", ref.sinusoidal_position_encoding(d_model, max_len)[None])


class PEReturnsTableExpanded(_PE):
    """Returns the table expanded to x's shape and forgets to add x."""

    def forward(self, x):
        return self.pe[:, :x.size(1)].expand_as(x)


class PEReversed(_PE):
    """Adds the positions backwards (T-1 down to 0), 'distance from the end'."""

    def forward(self, x):
        return x + self.pe[:, :x.size(1)].flip(1)


class PETableInForward(nn.Module):
    """Stores nothing and rebuilds the table in every forward."""

    def __init__(self, d_model, max_len=512):
        super().__init__()
        self.d_model, self.max_len = d_model, max_len

    def forward(self, x):
        return x + ref.sinusoidal_position_encoding(x.size(1), self.d_model).to(x)[None]


class PEStub(nn.Module):
    """The untouched learner stub."""

    def __init__(self, d_model, max_len=512):
        super().__init__()
        # YOUR CODE HERE
        raise NotImplementedError()

    def forward(self, x):
        # YOUR CODE HERE
        raise NotImplementedError()


class PEForwardStub(_PE):
    """__init__ done, forward still the untouched stub."""

    def forward(self, x):
        # YOUR CODE HERE
        raise NotImplementedError()


def positional_encoding_function(x):
    """A function passed where the class PositionalEncoding is expected."""
    return x + ref.sinusoidal_position_encoding(x.size(1), x.size(2))


# --------------------------------------------------------------------------- LearnedPositionalEmbedding

class _Learned(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        self.emb = nn.Embedding(max_len, d_model)

    def forward(self, x):
        return x + self.emb(torch.arange(x.size(1)))


class LearnedNotSliced(_Learned):
    """Adds the whole weight matrix: x + self.emb.weight."""

    def forward(self, x):
        return x + self.emb.weight


class LearnedFromOne(_Learned):
    """Looks up positions 1 .. T."""

    def forward(self, x):
        return x + self.emb(torch.arange(1, x.size(1) + 1))


class LearnedMultiplied(_Learned):
    """Multiplies x by the position vectors."""

    def forward(self, x):
        return x * self.emb(torch.arange(x.size(1)))


class LearnedSizesSwapped(_Learned):
    """Creates nn.Embedding(d_model, max_len)."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.emb = nn.Embedding(d_model, max_len)


class LearnedOldArgumentOrder(_Learned):
    """Takes (max_len, d_model), the reference's old order."""

    def __init__(self, max_len, d_model):
        super().__init__(d_model, max_len)


class LearnedDetached(_Learned):
    """Uses self.emb.weight[:T].detach(): the position vectors never learn."""

    def forward(self, x):
        return x + self.emb.weight[:x.size(1)].detach()


class LearnedRawParameter(_Learned):
    """Stores a raw nn.Parameter(max_len, d_model) instead of an nn.Embedding."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.emb = nn.Parameter(torch.randn(max_len, d_model))

    def forward(self, x):
        return x + self.emb[:x.size(1)]


class LearnedTFromBatch(_Learned):
    """Reads T with x.shape[0], the batch axis."""

    def forward(self, x):
        return x + self.emb(torch.arange(x.shape[0]))


class LearnedReturnsPositions(_Learned):
    """Returns the position vectors and forgets x."""

    def forward(self, x):
        return self.emb(torch.arange(x.size(1)))


class LearnedDropout(_Learned):
    """Adds nanoGPT's dropout after the sum (p = 0.1)."""

    def __init__(self, d_model, max_len=512):
        super().__init__(d_model, max_len)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(x + self.emb(torch.arange(x.size(1))))


class LearnedWithPE(_Learned):
    """Also adds the sinusoidal table on top of the learned positions."""

    def forward(self, x):
        T, D = x.size(1), x.size(2)
        return x + self.emb(torch.arange(T)) + ref.sinusoidal_position_encoding(T, D, dtype=x.dtype)


class LearnedPaddingIdx(_Learned):
    """Creates nn.Embedding(max_len, d_model, padding_idx=0) by habit: position 0 never gets a gradient."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.emb = nn.Embedding(max_len, d_model, padding_idx=0)


class LearnedReturnsPositionsExpanded(_Learned):
    """Returns the position vectors expanded to x's shape and forgets to add x."""

    def forward(self, x):
        return self.emb(torch.arange(x.size(1))).expand_as(x)


class LearnedReversed(_Learned):
    """Looks the positions up backwards, T-1 down to 0."""

    def forward(self, x):
        return x + self.emb(torch.arange(x.size(1) - 1, -1, -1))


class LearnedExtraBias(_Learned):
    """Adds a bias parameter of its own on top of the positions."""

    def __init__(self, d_model, max_len=512):
        super().__init__(d_model, max_len)
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        return x + self.emb(torch.arange(x.size(1))) + self.bias


class LearnedExtraRow(_Learned):
    """Makes max_len + 1 rows to 'reserve a padding position'."""

    def __init__(self, d_model, max_len=512):
        nn.Module.__init__(self)
        self.emb = nn.Embedding(max_len + 1, d_model)


class LearnedOtherName(nn.Module):
    """Names the embedding self.pos_emb instead of self.emb."""

    def __init__(self, d_model, max_len=512):
        super().__init__()
        self.pos_emb = nn.Embedding(max_len, d_model)

    def forward(self, x):
        return x + self.pos_emb(torch.arange(x.size(1)))


class LearnedStub(nn.Module):
    """The untouched learner stub."""

    def __init__(self, d_model, max_len=512):
        super().__init__()
        # YOUR CODE HERE
        raise NotImplementedError()


# --------------------------------------------------------------------------- apply_rope

def _theta(d, base=10000.0, exponent=1.0):
    return base ** (-exponent * torch.arange(0, d, 2, dtype=torch.float64) / d)


def _rope(x, positions=None, theta=None, sign=1.0):
    T, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T)
    theta = _theta(d) if theta is None else theta
    angles = positions[:, None].to(x.dtype) * theta.to(x.dtype)  # (T, d/2)
    cos, sin = torch.cos(angles), sign * torch.sin(angles)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


def rope_rotate_half(x, positions=None):
    """LLaMA's layout: pairs (i, i + d/2), rotate_half(x) = cat(-x2, x1)."""
    T, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T)
    angles = positions[:, None].to(x.dtype) * _theta(d).to(x.dtype)
    emb = torch.cat((angles, angles), dim=-1)  # (T, d)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()


def rope_wrong_direction(x, positions=None):
    """Writes out_2i = x_2i cos + x_2i+1 sin, out_2i+1 = -x_2i sin + x_2i+1 cos: rotates by -m theta."""
    return _rope(x, positions, sign=-1.0)


def rope_exponent_i_over_d(x, positions=None):
    """theta_i = 10000^(-i/d) with i the pair index."""
    return _rope(x, positions, theta=_theta(x.shape[-1], exponent=0.5))


def rope_base_1000(x, positions=None):
    """theta_i = 1000^(-2i/d)."""
    return _rope(x, positions, theta=_theta(x.shape[-1], base=1000.0))


def rope_integer_exponent(x, positions=None):
    """theta_i = 10000 ** (-(2 * i // d)): the exponent rounds to 0, every pair turns by 1 per position."""
    d = x.shape[-1]
    i = torch.arange(d // 2)
    return _rope(x, positions, theta=10000.0 ** (-(2 * i // d)).double())


def rope_positions_from_one(x, positions=None):
    """Default positions 1 .. T."""
    if positions is None:
        positions = torch.arange(1, x.shape[-2] + 1)
    return _rope(x, positions)


def rope_positions_ignored(x, positions=None):
    """Always rotates by arange(T), whatever positions says."""
    return _rope(x, None)


def rope_added(x, positions=None):
    """Adds the sinusoidal table instead of rotating."""
    T, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T)
    return x + ref.sinusoidal_position_encoding(int(positions.max()) + 1, d, dtype=x.dtype)[positions]


def rope_mixed_layout(x, positions=None):
    """Mixes layouts: interleaved pairs, but cos and sin repeated LLaMA-style (cat(angles, angles))."""
    T, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T)
    angles = positions[:, None].to(x.dtype) * _theta(d).to(x.dtype)
    emb = torch.cat((angles, angles), dim=-1)  # (T, d): pair (2i, 2i+1) gets two different angles
    rotated = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)
    return x * emb.cos() + rotated * emb.sin()


def rope_4d_only(x, positions=None):
    """Unpacks B, H, T, d = x.shape: works on (B, H, T, d_k) only."""
    B, H, T, d = x.shape
    return _rope(x, positions)


def rope_in_place(x, positions=None):
    """Writes the rotated pairs back into x."""
    out = _rope(x, positions)
    x[...] = out
    return x


def rope_detached(x, positions=None):
    """Goes through numpy for the rotation: no gradient."""
    return torch.from_numpy(_rope(x.detach(), positions).numpy())


def rope_float64(x, positions=None):
    """Computes in float64 and returns float64 whatever x is."""
    return _rope(x.double(), positions)


def rope_identity(x, positions=None):
    """Returns x as it is: nothing is rotated."""
    return x.clone()


def rope_d_k_from_axis_1(x, positions=None):
    """Reads d_k from x.shape[1] (thinking of (B, d_k)) in the exponent, instead of x.shape[-1]."""
    d_k = x.shape[1]
    theta = 10000.0 ** (-torch.arange(0, x.shape[-1], 2, dtype=torch.float64) / d_k)
    return _rope(x, positions, theta=theta)


def rope_d_k_64(x, positions=None):
    """Hard-codes d_k = 64 (GPT-2's head size) in the exponent."""
    return _rope(x, positions, theta=10000.0 ** (-torch.arange(0, x.shape[-1], 2, dtype=torch.float64) / 64))


def rope_halves_concatenated(x, positions=None):
    """Puts the rotated halves back with torch.cat (all evens, then all odds) instead of interleaving them."""
    T, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T)
    angles = positions[:, None].to(x.dtype) * _theta(d).to(x.dtype)
    cos, sin = torch.cos(angles), torch.sin(angles)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


def rope_odd_sign_slip(x, positions=None):
    """Copy-paste sign slip in the odd line: x_odd * cos - x_even * sin."""
    T, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T)
    angles = positions[:, None].to(x.dtype) * _theta(d).to(x.dtype)
    cos, sin = torch.cos(angles), torch.sin(angles)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x2 * cos - x1 * sin), dim=-1).flatten(-2)


def rope_reads_overwritten_evens(x, positions=None):
    """Writes into a copy through views of it: the odd line reads the evens already rotated."""
    T, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T)
    angles = positions[:, None].to(x.dtype) * _theta(d).to(x.dtype)
    cos, sin = torch.cos(angles), torch.sin(angles)
    out = x.clone()
    x1, x2 = out[..., 0::2], out[..., 1::2]
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x1 * sin + x2 * cos
    return out


def rope_angles_transposed(x, positions=None):
    """Builds the angles as theta[:, None] * positions, (d_k/2, T), and forgets to transpose them."""
    T, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T)
    angles = _theta(d).to(x.dtype)[:, None] * positions[None, :].to(x.dtype)  # (d/2, T)
    cos, sin = torch.cos(angles), torch.sin(angles)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


def rope_sin_cos_swapped(x, positions=None):
    """Swaps cos and sin in the formula: x_even * sin - x_odd * cos, x_even * cos + x_odd * sin."""
    T, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T)
    angles = positions[:, None].to(x.dtype) * _theta(d).to(x.dtype)
    cos, sin = torch.cos(angles), torch.sin(angles)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * sin - x2 * cos, x1 * cos + x2 * sin), dim=-1).flatten(-2)


def rope_stub(x, positions=None):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


class LearnedEmbedsX(nn.Module):
    """Looks up the embedding with x itself instead of the positions (a new learner's first try)."""

    def __init__(self, d_model, max_len=512):
        super().__init__()
        self.emb = nn.Embedding(max_len, d_model)

    def forward(self, x):
        return x + self.emb(x)


# --------------------------------------------------------------------------- what the tests feed the checks
# (check, mutant, expected mistake id or None, key phrase of the problem): see tests/test_checks_mutants.py
ROWS = [
    # ---- sinusoidal_position_encoding
    (check_sinusoidal_position_encoding, table_sin_cos_swapped, "sin_cos_swapped", "row 0 (position 0)"),
    (check_sinusoidal_position_encoding, table_concatenated, "concatenated_layout", "row 0 (position 0)"),
    (check_sinusoidal_position_encoding, table_exponent_i_over_d, "exponent_i_over_d", "frequencies"),
    (check_sinusoidal_position_encoding, table_exponent_doubled, "exponent_doubled", "frequencies"),
    (check_sinusoidal_position_encoding, table_base_1000, "wrong_base", "frequencies"),
    (check_sinusoidal_position_encoding, table_log10, "wrong_base", "frequencies"),
    (check_sinusoidal_position_encoding, table_base_e, "wrong_base", "frequencies"),
    (check_sinusoidal_position_encoding, table_exponent_over_max_len, "exponent_denominator", "frequencies"),
    (check_sinusoidal_position_encoding, table_exponent_over_512, "exponent_denominator", "frequencies"),
    (check_sinusoidal_position_encoding, table_exp_without_minus, "exponent_sign", "frequencies"),
    (check_sinusoidal_position_encoding, table_integer_exponent, "integer_division", "frequencies"),
    (check_sinusoidal_position_encoding, table_floor_angle, "integer_division", "frequencies"),
    (check_sinusoidal_position_encoding, table_cos_own_exponent, "cos_own_frequency", "sin^2 + cos^2 is not 1"),
    (check_sinusoidal_position_encoding, table_cos_next_exponent, "cos_own_frequency", "sin^2 + cos^2 is not 1"),
    (check_sinusoidal_position_encoding, table_positions_from_one, "positions_from_one", "row 0 (position 0)"),
    (check_sinusoidal_position_encoding, table_pairs_from_one, "wrong_frequencies", "frequencies"),
    (check_sinusoidal_position_encoding, table_float64, "table_dtype", "has dtype torch.float64"),
    (check_sinusoidal_position_encoding, table_long, "table_dtype", "has dtype torch.int64"),
    (check_sinusoidal_position_encoding, table_transposed, "table_transposed", "has the wrong shape"),
    (check_sinusoidal_position_encoding, table_hard_coded_width, None, "the table has the wrong shape"),
    (check_sinusoidal_position_encoding, table_numpy, "numpy_output", "is not a tensor"),
    (check_sinusoidal_position_encoding, table_no_return, "missing_return", "is not a tensor"),
    (check_sinusoidal_position_encoding, table_stub, "not_implemented", "raised NotImplementedError"),
    (check_sinusoidal_position_encoding, None, None, "expected the function sinusoidal_position_encoding, got None"),
    (check_sinusoidal_position_encoding, ref.PositionalEncoding, None, "got a class"),
    # ---- PositionalEncoding
    (check_positional_encoding, PENotSliced, "positions_not_sliced", "raised RuntimeError"),
    (check_positional_encoding, PESlicedOnBatch, "positions_not_sliced", "raised RuntimeError"),
    (check_positional_encoding, PEParameter, "pe_parameter", "pe is a parameter"),
    (check_positional_encoding, PEPlainAttribute, "pe_plain_attribute", "not a registered buffer"),
    (check_positional_encoding, PENotPersistent, "pe_not_persistent", "not in state_dict()"),
    (check_positional_encoding, PENoBatchAxis, "pe_no_batch_axis", "pe has the wrong shape"),
    (check_positional_encoding, PEMultiplied, "positions_multiplied", "not equal to the reference"),
    (check_positional_encoding, PEScaledBySqrtD, "scaled_by_sqrt_d_model", "not equal to the reference"),
    (check_positional_encoding, PEDropout, "positions_dropout", "are 0 and the others are scaled up"),
    (check_positional_encoding, PETFromBatch, "t_from_wrong_axis", "raised RuntimeError"),
    (check_positional_encoding, PEReturnsTable, "positions_returned_alone", "the output has the wrong shape"),
    (check_positional_encoding, PEOwnTableSwapped, "sin_cos_swapped", "the buffer pe (the table of your exercise 1): not equal to the reference"),
    (check_positional_encoding, PEInPlace, "input_modified_in_place", "changed its input x in place"),
    (check_positional_encoding, PEOtherName, "attribute_name", "has no attribute pe"),
    (check_positional_encoding, PEArgsSwapped, "table_transposed", "pe has the wrong shape"),
    (check_positional_encoding, PETableArgsSwapped, "table_transposed", "pe has the wrong shape"),
    (check_positional_encoding, PEFloat64Table, "table_dtype", "pe has dtype torch.float64"),
    (check_positional_encoding, PEFloat64Forward, "dtype_changed", "the output has dtype torch.float64"),
    (check_positional_encoding, PEReturnsTableExpanded, "positions_returned_alone", "not equal to the reference"),
    (check_positional_encoding, PEReversed, "positions_reversed", "not equal to the reference"),
    (check_positional_encoding, PETableInForward, "pe_not_stored", "has no attribute pe"),
    (check_positional_encoding, PENoSuperInit, "missing_super_init", "raised AttributeError"),
    (check_positional_encoding, PEDetached, "no_gradient", "carries no gradient"),
    (check_positional_encoding, PEStub, "not_implemented", "raised NotImplementedError | tried: PositionalEncoding("),
    (check_positional_encoding, PEForwardStub, "not_implemented", "raised NotImplementedError"),
    (check_positional_encoding, None, None, "expected the class PositionalEncoding (a subclass of nn.Module), got None"),
    (check_positional_encoding, positional_encoding_function, None, "got function"),
    # ---- LearnedPositionalEmbedding
    (check_learned_positional_embedding, LearnedNotSliced, "positions_not_sliced", "raised RuntimeError"),
    (check_learned_positional_embedding, LearnedFromOne, "positions_from_one", "not equal to the reference"),
    (check_learned_positional_embedding, LearnedMultiplied, "positions_multiplied", "not equal to the reference"),
    (check_learned_positional_embedding, LearnedSizesSwapped, "embedding_sizes_swapped", "emb has the wrong size"),
    (check_learned_positional_embedding, LearnedOldArgumentOrder, "embedding_sizes_swapped", "emb has the wrong size"),
    (check_learned_positional_embedding, LearnedDetached, "no_gradient", "no gradient reaches emb.weight"),
    (check_learned_positional_embedding, LearnedRawParameter, "emb_raw_parameter", "not an nn.Embedding"),
    (check_learned_positional_embedding, LearnedPaddingIdx, "embedding_padding_idx", "gets no gradient"),
    (check_learned_positional_embedding, LearnedReturnsPositionsExpanded, "positions_returned_alone",
     "not equal to the reference"),
    (check_learned_positional_embedding, LearnedReversed, "positions_reversed", "not equal to the reference"),
    (check_learned_positional_embedding, LearnedExtraBias, None, "wrong number of parameters"),
    (check_learned_positional_embedding, LearnedExtraRow, None, "emb has the wrong size"),
    (check_learned_positional_embedding, LearnedOtherName, "attribute_name", "has no attribute emb"),
    (check_learned_positional_embedding, LearnedTFromBatch, "t_from_wrong_axis", "raised RuntimeError"),
    (check_learned_positional_embedding, LearnedReturnsPositions, "positions_returned_alone", "wrong shape"),
    (check_learned_positional_embedding, LearnedDropout, "positions_dropout", "are 0 and the others are scaled up"),
    (check_learned_positional_embedding, LearnedWithPE, None, "not equal to the reference"),
    (check_learned_positional_embedding, LearnedStub, "not_implemented", "raised NotImplementedError"),
    (check_learned_positional_embedding, None, None, "got None"),
    (check_learned_positional_embedding, ref.LearnedPositionalEmbedding(4, 6), None, "got an instance of"),
    # ---- apply_rope (bonus)
    (check_apply_rope, rope_rotate_half, "rope_rotate_half", "not equal to the reference"),
    (check_apply_rope, rope_wrong_direction, "rope_wrong_direction", "not equal to the reference"),
    (check_apply_rope, rope_exponent_i_over_d, "exponent_i_over_d", "not equal to the reference"),
    (check_apply_rope, rope_base_1000, "wrong_base", "not equal to the reference"),
    (check_apply_rope, rope_d_k_from_axis_1, "exponent_denominator", "not equal to the reference"),
    (check_apply_rope, rope_d_k_64, "exponent_denominator", "not equal to the reference"),
    (check_apply_rope, rope_halves_concatenated, "rope_not_interleaved", "position 0 changed"),
    (check_apply_rope, rope_odd_sign_slip, "rope_sin_sign", "changed the length of a vector"),
    (check_apply_rope, rope_reads_overwritten_evens, "rope_overwritten_before_read", "changed the length of a vector"),
    (check_apply_rope, rope_angles_transposed, "rope_angles_transposed", "raised RuntimeError"),
    (check_apply_rope, rope_sin_cos_swapped, "rope_sin_cos_swapped", "position 0 changed"),
    (check_apply_rope, rope_integer_exponent, "integer_division", "not equal to the reference"),
    (check_apply_rope, rope_positions_from_one, "positions_from_one", "position 0 changed"),
    (check_apply_rope, rope_positions_ignored, "rope_positions_ignored", "not equal to the reference"),
    (check_apply_rope, rope_added, "rope_added", "position 0 changed"),
    (check_apply_rope, rope_mixed_layout, None, "changed the length of a vector"),
    (check_apply_rope, rope_4d_only, "hard_coded_axes", "raised ValueError"),
    (check_apply_rope, rope_in_place, "input_modified_in_place", "changed its input x in place"),
    (check_apply_rope, rope_detached, "no_gradient", "carries no gradient"),
    (check_apply_rope, rope_float64, "dtype_changed", "float32 inputs gave a torch.float64 output"),
    (check_apply_rope, rope_identity, None, "not equal to the reference"),
    (check_apply_rope, rope_stub, "not_implemented", "raised NotImplementedError"),
    (check_apply_rope, None, None, "expected the function apply_rope, got None"),
    (check_learned_positional_embedding, LearnedEmbedsX, "embedding_of_floats", "raised RuntimeError"),
]
LATE_FAILURE = {check_sinusoidal_position_encoding: table_hard_coded_width, check_positional_encoding: PEDetached,
                check_learned_positional_embedding: LearnedDetached,
                check_apply_rope: rope_float64}  # fails late, after the check did most of its work
STUB = {check_sinusoidal_position_encoding: table_stub, check_positional_encoding: PEStub,
        check_learned_positional_embedding: LearnedStub, check_apply_rope: rope_stub}  # check -> the untouched learner stub
