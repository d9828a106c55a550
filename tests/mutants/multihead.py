"""Wrong ``split_heads``, ``merge_heads`` and ``MultiHeadSelfAttention`` (stage 02)."""
import math

import torch
from torch import nn

from tinylm_checks import check_split_heads, check_merge_heads, check_multi_head_attention

from mutants import attention as at
from mutants.attention import calling


# --------------------------------------------------------------------------- split_heads

def split_view_no_transpose(x, num_heads):
    """Splits with x.view(B, H, T, d_k) directly: no transpose, positions and features get mixed."""
    B, T, D = x.shape
    return x.view(B, num_heads, T, D // num_heads)


def split_forgets_transpose(x, num_heads):
    """Views as (B, T, H, d_k) and forgets the transpose: heads stay after time."""
    B, T, D = x.shape
    return x.view(B, T, num_heads, D // num_heads)


def split_float_d_k(x, num_heads):
    """Computes d_k with / (a float), which .view() refuses."""
    B, T, D = x.shape
    d_k = D / num_heads
    return x.view(B, T, num_heads, d_k).transpose(1, 2)


def split_d_k_before_heads(x, num_heads):
    """Views as (B, T, d_k, H) and permutes: each head gets every H-th feature instead of a block."""
    B, T, D = x.shape
    return x.view(B, T, D // num_heads, num_heads).permute(0, 3, 1, 2)


def split_wrong_transpose(x, num_heads):
    """Transposes dims (1, 3) instead of (1, 2)."""
    B, T, D = x.shape
    return x.view(B, T, num_heads, D // num_heads).transpose(1, 3)


def split_detached(x, num_heads):
    """Detaches the input before splitting (x.detach().view(...)): no gradient flows back."""
    B, T, D = x.shape
    return x.detach().view(B, T, num_heads, D // num_heads).transpose(1, 2)


def split_stub(x, num_heads):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


def split_no_return(x, num_heads):
    """Computes the split and forgets `return`."""
    B, T, D = x.shape
    heads = x.view(B, T, num_heads, D // num_heads).transpose(1, 2)  # noqa: F841


def split_numpy(x, num_heads):
    """Splits with numpy and returns a numpy array."""
    B, T, D = x.shape
    return x.numpy().reshape(B, T, num_heads, D // num_heads).transpose(0, 2, 1, 3)


# --------------------------------------------------------------------------- merge_heads

def merge_without_transpose(x):
    """Reshapes (B, H, T, d_k) straight to (B, T, H * d_k) without transposing back first."""
    B, H, T, d_k = x.shape
    return x.reshape(B, T, H * d_k)


def merge_view_after_transpose(x):
    """Calls .view() right after .transpose(1, 2): the tensor is not contiguous."""
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).view(B, T, H * d_k)


def merge_wrong_transpose(x):
    """Transposes (2, 3) instead of (1, 2) before reshaping."""
    B, H, T, d_k = x.shape
    return x.transpose(2, 3).reshape(B, T, H * d_k)


def merge_interleaved(x):
    """Permutes to (B, T, d_k, H) before reshaping, interleaving the heads' features."""
    B, H, T, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, H * d_k)


def merge_takes_num_heads(x, num_heads):
    """Asks for num_heads as a second argument (the contract is merge_heads(x))."""
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).reshape(B, T, num_heads * d_k)


def merge_stub(x):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


def merge_float32(x):
    """Copies into a float32 buffer created with torch.empty (default dtype)."""
    B, H, T, d_k = x.shape
    out = torch.empty(B, T, H * d_k)
    out[:] = x.transpose(1, 2).reshape(B, T, H * d_k)
    return out


# --------------------------------------------------------------------------- MultiHeadSelfAttention

def _attend(q, k, v, mask=None, scale=None, softmax_dim=-1):
    scale = 1 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=softmax_dim)
    return weights @ v, weights


def _split(x, H):
    B, T, D = x.shape
    return x.view(B, T, H, D // H).transpose(1, 2)


def _merge(x):
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d_k)


class _MHABase(nn.Module):
    """Correct __init__ shared by the forward-only mutants."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("d_model must be divisible by num_heads")
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def qkv(self, x):
        return (_split(self.W_Q(x), self.num_heads), _split(self.W_K(x), self.num_heads),
                _split(self.W_V(x), self.num_heads))


class MHANoScaling(_MHABase):
    """Forgets to divide the scores by sqrt(d_k)."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask, scale=1.0)
        return self.W_O(_merge(out)), weights


class MHAScaleBySqrtDModel(_MHABase):
    """Divides the scores by sqrt(d_model) instead of sqrt(d_k)."""

    def forward(self, x, mask=None):
        d_model = x.size(-1)
        out, weights = _attend(*self.qkv(x), mask, scale=1 / math.sqrt(d_model))
        return self.W_O(_merge(out)), weights


class MHAScaleByDK(_MHABase):
    """Divides the scores by d_k instead of sqrt(d_k)."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask, scale=1 / self.d_k)
        return self.W_O(_merge(out)), weights


class MHASharedProjection(_MHABase):
    """Reuses one layer for W_Q, W_K and W_V (self.W_K = self.W_V = self.W_Q)."""

    def __init__(self, d_model, num_heads):
        super().__init__(d_model, num_heads)
        self.W_K = self.W_Q
        self.W_V = self.W_Q

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask)
        return self.W_O(_merge(out)), weights


class MHASoftmaxOverQueries(_MHABase):
    """Softmax over dim=-2 (the queries) instead of the keys."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask, softmax_dim=-2)
        return self.W_O(_merge(out)), weights


class MHASoftmaxOverHeads(_MHABase):
    """Softmax over dim=1 (the heads) instead of the keys."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask, softmax_dim=1)
        return self.W_O(_merge(out)), weights


class _MHACalling(_MHABase):
    """Right, around an attention function ``sdpa`` (tests/mutants/attention.py's :func:`calling`)."""

    def forward(self, x, mask=None):
        out, weights = self.sdpa(*self.qkv(x), mask)
        return self.W_O(_merge(out)), weights


class MHAAlwaysCausal(_MHABase):
    """Applies a causal mask even when mask is None."""

    def forward(self, x, mask=None):
        T = x.size(1)
        out, weights = _attend(*self.qkv(x), torch.ones(T, T, dtype=torch.bool).tril() if mask is None else mask)
        return self.W_O(_merge(out)), weights


class MHAQKSwapped(_MHABase):
    """Uses W_K(x) as the queries and W_Q(x) as the keys."""

    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        out, weights = _attend(k, q, v, mask)
        return self.W_O(_merge(out)), weights


class MHAValuesNotProjected(_MHABase):
    """Uses x itself, split into heads, as the values: W_V is never applied."""

    def forward(self, x, mask=None):
        q, k, _ = self.qkv(x)
        out, weights = _attend(q, k, _split(x, self.num_heads), mask)
        return self.W_O(_merge(out)), weights


class MHAOnlyOut(_MHABase):
    """Returns only the output, not the pair (out, weights)."""

    def forward(self, x, mask=None):
        out, _ = _attend(*self.qkv(x), mask)
        return self.W_O(_merge(out))


class MHANoReturn(_MHABase):
    """Computes everything and forgets `return`."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask)
        out = self.W_O(_merge(out))  # noqa: F841


class MHASwappedOutputs(_MHABase):
    """Returns (weights, out) instead of (out, weights)."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask)
        return weights, self.W_O(_merge(out))


# issue 41's head and scale families, as in the fused CausalSelfAttention's check (tests/mutants/block.py)
class MHAScaleByDModelNotSqrt(_MHABase):
    """Divides the scores by d_model: neither the square root nor the head's width."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask, scale=1 / x.size(-1))
        return self.W_O(_merge(out)), weights


class MHASplitDHeadFirst(_MHABase):
    """Splits with .view(B, T, d_k, H), heads last, then permutes them to the front: each head reads every H-th
    feature, not a block."""

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q, k, v = (f(x).view(B, T, self.d_k, self.num_heads).permute(0, 3, 1, 2) for f in (self.W_Q, self.W_K, self.W_V))
        out, weights = _attend(q, k, v, mask)
        return self.W_O(_merge(out)), weights


class MHATriuDiagonal0(_MHABase):
    """Builds its own causal mask with triu(diagonal=0), which hides the diagonal too (NaN in the first row)."""

    def forward(self, x, mask=None):
        T = x.size(1)
        q, k, v = self.qkv(x)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(self.d_k)).masked_fill(
            torch.ones(T, T, dtype=torch.bool).triu(diagonal=0), float("-inf"))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.W_O(_merge(weights @ v)), weights


class MHASplitWithoutTranspose(_MHABase):
    """Splits heads with .view(B, H, T, d_k) and no transpose."""

    def forward(self, x, mask=None):
        B, T, D = x.shape
        H = self.num_heads
        q = self.W_Q(x).view(B, H, T, self.d_k)
        k = self.W_K(x).view(B, H, T, self.d_k)
        v = self.W_V(x).view(B, H, T, self.d_k)
        out, weights = _attend(q, k, v, mask)
        return self.W_O(out.reshape(B, T, D)), weights


class MHAMergeWithoutTranspose(_MHABase):
    """Merges heads with .reshape(B, T, D) without transposing back first."""

    def forward(self, x, mask=None):
        B, T, D = x.shape
        out, weights = _attend(*self.qkv(x), mask)
        return self.W_O(out.reshape(B, T, D)), weights


class MHAMergeViewAfterTranspose(_MHABase):
    """Merges with out.transpose(1, 2).view(B, T, D): view on a non-contiguous tensor raises."""

    def forward(self, x, mask=None):
        B, T, D = x.shape
        out, weights = _attend(*self.qkv(x), mask)
        return self.W_O(out.transpose(1, 2).view(B, T, D)), weights


class MHAMissingWO(nn.Module):
    """Never creates W_O (the attribute is absent) and returns the merged heads."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("d_model must be divisible by num_heads")
        self.num_heads = num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q = _split(self.W_Q(x), self.num_heads)
        k = _split(self.W_K(x), self.num_heads)
        v = _split(self.W_V(x), self.num_heads)
        out, weights = _attend(q, k, v, mask)
        return _merge(out), weights


class MHAWONotApplied(_MHABase):
    """Creates W_O but returns the merged heads without applying it."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask)
        return _merge(out), weights


class MHAWeightsAveraged(_MHABase):
    """Returns the weights averaged over heads, (B, T, T), like nn.MultiheadAttention's default."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask)
        return self.W_O(_merge(out)), weights.mean(dim=1)


class MHAMaskIgnored(_MHABase):
    """Does not pass the mask on to the attention."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x))
        return self.W_O(_merge(out)), weights


class MHANoDivisibilityCheck(nn.Module):
    """Never checks d_model % num_heads: d_k = d_model // num_heads silently drops features."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q = _split(self.W_Q(x), self.num_heads)
        k = _split(self.W_K(x), self.num_heads)
        v = _split(self.W_V(x), self.num_heads)
        out, weights = _attend(q, k, v, mask)
        return self.W_O(_merge(out)), weights


class MHAAssertInsteadOfValueError(_MHABase):
    """Uses `assert d_model % num_heads == 0` (AssertionError) instead of raising ValueError."""

    def __init__(self, d_model, num_heads):
        assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
        super().__init__(d_model, num_heads)

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask)
        return self.W_O(_merge(out)), weights


class MHAFloatDK(_MHABase):
    """Stores d_k = d_model / num_heads (a float); .view() in forward refuses it."""

    def __init__(self, d_model, num_heads):
        super().__init__(d_model, num_heads)
        self.d_k = d_model / num_heads

    def forward(self, x, mask=None):
        B, T, D = x.shape
        H = self.num_heads
        q = self.W_Q(x).view(B, T, H, self.d_k).transpose(1, 2)
        k = self.W_K(x).view(B, T, H, self.d_k).transpose(1, 2)
        v = self.W_V(x).view(B, T, H, self.d_k).transpose(1, 2)
        out, weights = _attend(q, k, v, mask)
        return self.W_O(_merge(out)), weights


class MHADetached(_MHABase):
    """Detaches the output (out.detach()), so no gradient flows back."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask)
        return self.W_O(_merge(out)).detach(), weights.detach()


class MHAStub(nn.Module):
    """The untouched learner stub (both __init__ and forward)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        # YOUR CODE HERE
        raise NotImplementedError()

    def forward(self, x, mask=None):
        # YOUR CODE HERE
        raise NotImplementedError()


class MHAForwardStub(_MHABase):
    """__init__ done, forward still the untouched stub."""

    def forward(self, x, mask=None):
        # YOUR CODE HERE
        raise NotImplementedError()


def multi_head_attention_function(x, num_heads, mask=None):
    """A function passed where the class MultiHeadSelfAttention is expected."""
    return _attend(_split(x, num_heads), _split(x, num_heads), _split(x, num_heads), mask)


# An object where the class is expected.
multi_head_attention_instance = _MHABase(12, 3)
"""An instance, MultiHeadSelfAttention(12, 3), passed instead of the class."""


class MHAMaskInverted(_MHABase):
    """Passes ~mask on, reading True as 'blocked' (nn.MultiheadAttention's attn_mask convention)."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), None if mask is None else ~mask)
        return self.W_O(_merge(out)), weights


class MHAMaskUnsqueezed(_MHABase):
    """Adds a head axis to the mask (mask.unsqueeze(1)), which it already broadcasts over."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), None if mask is None else mask.unsqueeze(1))
        return self.W_O(_merge(out)), weights


class MHAKeysFromWQ(_MHABase):
    """Copy-pastes the query line for the keys: k from self.W_Q(x)."""

    def forward(self, x, mask=None):
        q, _, v = self.qkv(x)
        out, weights = _attend(q, _split(self.W_Q(x), self.num_heads), v, mask)
        return self.W_O(_merge(out)), weights


class MHAMaskMultiplied(_MHABase):
    """Multiplies the scores by the mask (a masked score becomes 0, not -inf)."""

    def forward(self, x, mask=None):
        q, k, v = self.qkv(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        weights = torch.softmax(scores if mask is None else scores * mask, dim=-1)
        return self.W_O(_merge(weights @ v)), weights


# --------------------------------------------------------------------------- what the tests feed the checks
# (check, mutant, expected mistake id or None, key phrase of the problem): see tests/test_checks_mutants.py

def split_heads_repeated(x, num_heads):
    """Builds the heads with repeat: every head gets the first d_k features."""
    B, T, D = x.shape
    return x[..., :D // num_heads].unsqueeze(1).repeat(1, num_heads, 1, 1)


class MHAHeadsRepeated(_MHABase):
    """Every head reads the first d_k features (expand of one slice, where a view splits D)."""

    def forward(self, x, mask=None):
        H, d_k = self.num_heads, self.d_k
        heads = [t[..., :d_k].unsqueeze(1).expand(-1, H, -1, -1) for t in (self.W_Q(x), self.W_K(x), self.W_V(x))]
        out, weights = _attend(*heads, mask)
        return self.W_O(_merge(out)), weights


class MHAOutTransposed(_MHABase):
    """Applies W_O as merged @ W_O.weight + bias: the weight used transposed."""

    def forward(self, x, mask=None):
        out, weights = _attend(*self.qkv(x), mask)
        return _merge(out) @ self.W_O.weight + self.W_O.bias, weights


class MHAKeyTransposed(_MHABase):
    """Computes the keys as x @ W_K.weight + b: the weight used transposed."""

    def forward(self, x, mask=None):
        q, _, v = self.qkv(x)
        k = _split(x @ self.W_K.weight + self.W_K.bias, self.num_heads)
        out, weights = _attend(q, k, v, mask)
        return self.W_O(_merge(out)), weights

ROWS = [
    # ---- issue 17's kinds: heads made by copying one slice, a weight used transposed
    (check_split_heads, split_heads_repeated, "heads_repeated", "not equal to the reference"),
    (check_multi_head_attention, MHAHeadsRepeated, "heads_repeated", "not equal to the reference"),
    (check_multi_head_attention, MHAOutTransposed, "weight_transposed", "not equal to the reference"),
    (check_multi_head_attention, MHAKeyTransposed, "weight_transposed", "not equal to the reference"),
    # ---- split_heads
    (check_split_heads, split_view_no_transpose, "split_without_transpose", "not equal to the reference"),
    (check_split_heads, split_forgets_transpose, "split_not_transposed", "has the wrong shape"),
    (check_split_heads, split_d_k_before_heads, "split_interleaved", "not equal to the reference"),
    (check_split_heads, split_float_d_k, "float_d_k", "raised TypeError"),
    (check_split_heads, split_detached, "no_gradient", "carries no gradient"),
    (check_split_heads, split_wrong_transpose, None, "has the wrong shape"),
    (check_split_heads, None, None, "expected the function split_heads, got None"),
    (check_split_heads, split_stub, "not_implemented", "raised NotImplementedError"),
    (check_split_heads, split_no_return, "missing_return", "is not a tensor"),
    (check_split_heads, split_numpy, "numpy_output", "is not a tensor"),
    # ---- merge_heads
    (check_merge_heads, merge_without_transpose, "merge_without_transpose", "not equal to the reference"),
    (check_merge_heads, merge_view_after_transpose, "view_after_transpose", "raised RuntimeError"),
    (check_merge_heads, merge_interleaved, "merge_interleaved", "not equal to the reference"),
    (check_merge_heads, merge_wrong_transpose, None, "not equal to the reference"),
    (check_merge_heads, merge_takes_num_heads, None, "raised TypeError"),
    (check_merge_heads, None, None, "expected the function merge_heads, got None"),
    (check_merge_heads, merge_stub, "not_implemented", "raised NotImplementedError"),
    (check_merge_heads, merge_float32, "dtype_changed", "has dtype torch.float32"),
    # ---- MultiHeadSelfAttention: named mistakes
    (check_multi_head_attention, MHANoScaling, "no_scaling", "not equal to the reference"),
    (check_multi_head_attention, MHAScaleBySqrtDModel, "scale_by_sqrt_d_model", "not equal to the reference"),
    (check_multi_head_attention, MHAScaleByDK, "scale_by_d_k", "not equal to the reference"),
    (check_multi_head_attention, MHASoftmaxOverQueries, "softmax_over_queries", "does not sum to 1"),
    (check_multi_head_attention, MHASoftmaxOverHeads, "softmax_over_heads", "does not sum to 1"),
    (check_multi_head_attention, MHASplitWithoutTranspose, "split_without_transpose", "not equal to the reference"),
    (check_multi_head_attention, MHAMergeWithoutTranspose, "merge_without_transpose", "not equal to the reference"),
    (check_multi_head_attention, MHAMergeViewAfterTranspose, "view_after_transpose", "raised RuntimeError"),
    (check_multi_head_attention, MHAMissingWO, "missing_projection", "has no attribute W_O"),
    (check_multi_head_attention, MHAWONotApplied, "w_o_not_applied", "not equal to the reference"),
    (check_multi_head_attention, MHASharedProjection, "shared_projection", "wrong number of parameters"),
    (check_multi_head_attention, MHAWeightsAveraged, "weights_averaged_over_heads", "weights have shape (B, T, T)"),
    (check_multi_head_attention, MHAMaskIgnored, "mask_ignored", "masked key got attention"),
    (check_multi_head_attention, MHANoDivisibilityCheck, "no_divisibility_check", "created without complaint"),
    (check_multi_head_attention, MHAAssertInsteadOfValueError, "no_divisibility_check", "raised AssertionError, not ValueError"),
    (check_multi_head_attention, MHAFloatDK, "float_d_k", "raised TypeError"),
    (check_multi_head_attention, MHADetached, "no_gradient", "the output carries no gradient"),
    # ---- MultiHeadSelfAttention: robustness
    (check_multi_head_attention, None, None, "expected the class MultiHeadSelfAttention (a subclass of nn.Module), got None"),
    (check_multi_head_attention, multi_head_attention_function, None, "got function"),
    (check_multi_head_attention, multi_head_attention_instance, None, "got an instance of"),
    (check_multi_head_attention, MHAStub, "not_implemented", "raised NotImplementedError | tried: MultiHeadSelfAttention("),
    (check_multi_head_attention, MHAForwardStub, "not_implemented", "raised NotImplementedError"),
    # ---- reported by a new learner on stage 02: named, with a hint that fits this exercise
    (check_multi_head_attention, MHAMaskInverted, "mask_inverted", "NaN exactly in the rows"),
    (check_multi_head_attention, MHAMaskUnsqueezed, "mask_reshaped", "raised RuntimeError"),
    (check_multi_head_attention, MHAKeysFromWQ, "projection_reused", "not equal to the reference"),
    (check_multi_head_attention, MHAMaskMultiplied, "mask_multiplied", "masked key got attention"),
    # ---- issue 41: the head and scale families, named here as in the fused CausalSelfAttention's check
    (check_multi_head_attention, MHAScaleByDModelNotSqrt, "scale_by_d_model", "not equal to the reference"),
    (check_multi_head_attention, MHASplitDHeadFirst, "split_interleaved", "not equal to the reference"),
    (check_multi_head_attention, MHATriuDiagonal0, "causal_mask_hides_diagonal", "contain NaN"),
    # ---- issue 41: every mistake this check can name has a mutant of this check; these are the module
    # around the learner's own attention function with a slip (tests/mutants/attention.py's calling)
    (check_multi_head_attention, calling(_MHACalling, at.sdpa_d_k_from_wrong_dim, "MHA"), "d_k_from_wrong_dim", "not equal to the reference"),
    (check_multi_head_attention, calling(_MHACalling, at.sdpa_int_sqrt, "MHA"), "int_sqrt", "not equal to the reference"),
    (check_multi_head_attention, calling(_MHACalling, at.sdpa_mask_added, "MHA"), "mask_added", "masked key got attention"),
    (check_multi_head_attention, calling(_MHACalling, at.sdpa_mask_after_softmax, "MHA"), "mask_after_softmax", "does not sum to 1"),
    (check_multi_head_attention, calling(_MHACalling, at.sdpa_mask_transposed, "MHA"), "mask_transposed", "masked key got attention"),
    (check_multi_head_attention, calling(_MHACalling, at.sdpa_scale_multiplied, "MHA"), "scale_multiplied", "not equal to the reference"),
    (check_multi_head_attention, calling(_MHACalling, at.sdpa_softmax_dim_0, "MHA"), "softmax_over_batch", "does not sum to 1"),
    (check_multi_head_attention, calling(_MHACalling, at.sdpa_sqrt_precedence, "MHA"), "sqrt_precedence", "not equal to the reference"),
    (check_multi_head_attention, calling(_MHACalling, at.sdpa_weights_are_scores, "MHA"), "weights_are_scores", "does not sum to 1"),
    (check_multi_head_attention, MHAAlwaysCausal, "always_causal", "not equal to the reference"),
    (check_multi_head_attention, MHAQKSwapped, "q_k_swapped", "not equal to the reference"),
    (check_multi_head_attention, MHAValuesNotProjected, "values_not_projected", "not equal to the reference"),
    (check_multi_head_attention, MHAOnlyOut, "weights_not_returned", "returned one tensor"),
    (check_multi_head_attention, MHANoReturn, "missing_return", "returned None"),
    (check_multi_head_attention, MHASwappedOutputs, "swapped_outputs", "in the wrong order"),
    (check_multi_head_attention, calling(_MHACalling, at.sdpa_dropout_on_weights, "MHA"), "dropout_on_weights", "scaled up"),
]
LATE_FAILURE = {check_split_heads: split_view_no_transpose, check_merge_heads: merge_without_transpose, check_multi_head_attention: MHADetached}  # fails late, after the check did most of its work
STUB = {check_split_heads: split_stub, check_merge_heads: merge_stub, check_multi_head_attention: MHAStub}  # check -> the untouched learner stub
