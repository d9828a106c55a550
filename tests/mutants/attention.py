"""Wrong ``attention_scores``, ``scaled_dot_product_attention`` and ``SelfAttention`` (stage 01)."""
import math

import torch
from torch import nn

from tinylm_checks import check_attention_scores, check_scaled_dot_product_attention, check_self_attention


# --------------------------------------------------------------------------- attention_scores

def scores_no_scaling(q, k):
    """Forgets to scale: q @ k^T."""
    return q @ k.transpose(-2, -1)


def scores_scale_by_d_k(q, k):
    """Divides by d_k instead of sqrt(d_k)."""
    d_k = q.size(-1)
    return q @ k.transpose(-2, -1) / d_k


def scores_scale_multiplied(q, k):
    """Multiplies by sqrt(d_k) instead of dividing."""
    d_k = q.size(-1)
    return q @ k.transpose(-2, -1) * math.sqrt(d_k)


def scores_sqrt_precedence(q, k):
    """Computes the scale as d_k ** 1/2, which Python reads as (d_k ** 1) / 2."""
    scale = q.size(-1) ** 1/2
    return q @ k.transpose(-2, -1) / scale


def scores_sqrt_precedence_inline(q, k):
    """Writes ... / d_k ** 1/2 inline, which Python reads as ((q @ k^T) / d_k) / 2."""
    d_k = q.size(-1)
    return q @ k.transpose(-2, -1) / d_k ** 1/2


def scores_int_sqrt(q, k):
    """Rounds the square root to an int with math.isqrt(d_k)."""
    d_k = q.size(-1)
    return q @ k.transpose(-2, -1) / math.isqrt(d_k)


def scores_transposed(q, k):
    """Computes k @ q^T (keys x queries) instead of q @ k^T."""
    d_k = q.size(-1)
    return k @ q.transpose(-2, -1) / math.sqrt(d_k)


def scores_d_k_from_wrong_dim(q, k):
    """Reads d_k from q.size(1) (a length or the heads) instead of q.size(-1)."""
    d_k = q.size(1)
    return q @ k.transpose(-2, -1) / math.sqrt(d_k)


def scores_dot_T(q, k):
    """Uses k.T, which reverses all dimensions of a 3-D tensor (raises inside matmul)."""
    return q @ k.T / math.sqrt(q.size(-1))


def scores_scales_q_in_place(q, k):
    """Scales the caller's queries in place (q /= sqrt(d_k)): right scores, but the input is modified."""
    q /= math.sqrt(q.size(-1))
    return q @ k.transpose(-2, -1)


def scores_under_no_grad(q, k):
    """Computes the scores under torch.no_grad() "to save memory": no gradient reaches q and k."""
    with torch.no_grad():
        return q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))


def scores_stub(q, k):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


def scores_float32(q, k):
    """Builds the result in a float32 tensor (torch.zeros default dtype)."""
    out = torch.zeros(*q.shape[:-1], k.shape[-2])
    out[:] = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    return out


def scores_numpy(q, k):
    """Computes with numpy and returns a numpy array."""
    return (q.numpy() @ k.numpy().swapaxes(-2, -1)) / math.sqrt(q.shape[-1])


def scores_no_return(q, k):
    """Computes the scores and forgets `return`."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # noqa: F841


# --------------------------------------------------------------------------- scaled_dot_product_attention

def sdpa_softmax_over_queries(q, k, v, mask=None):
    """Softmax over dim=-2 (the queries) instead of dim=-1 (the keys)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-2)
    return weights @ v, weights


def sdpa_no_scaling(q, k, v, mask=None):
    """Forgets to divide the scores by sqrt(d_k)."""
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_scale_by_d_k(q, k, v, mask=None):
    """Divides the scores by d_k instead of sqrt(d_k)."""
    scores = q @ k.transpose(-2, -1) / q.size(-1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_d_k_from_wrong_dim(q, k, v, mask=None):
    """Reads d_k from q.size(-2) (the number of queries) instead of q.size(-1)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-2))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_weights_are_scores(q, k, v, mask=None):
    """Returns the scores (before the softmax) as the weights."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, scores


def sdpa_mask_after_softmax(q, k, v, mask=None):
    """Applies the mask to the weights after the softmax (rows no longer sum to 1)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


def sdpa_mask_multiplied(q, k, v, mask=None):
    """Multiplies the scores by the mask (a masked score becomes 0, not -inf)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores * mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_mask_ignored(q, k, v, mask=None):
    """Accepts mask and never uses it."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_mask_inverted(q, k, v, mask=None):
    """Fills -inf where the mask is True (True read as 'masked out')."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_mask_added(q, k, v, mask=None):
    """Adds the bool mask to the scores (as if it were an additive 0 / -inf mask)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores + mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_swapped_outputs(q, k, v, mask=None):
    """Returns (weights, out) instead of (out, weights)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights, weights @ v


def sdpa_only_out(q, k, v, mask=None):
    """Returns only the output, not the pair (out, weights)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def sdpa_scales_q_in_place(q, k, v, mask=None):
    """Scales the caller's queries in place (q /= sqrt(d_k)) before the scores: the input is modified."""
    q /= math.sqrt(q.size(-1))
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_softmax_in_float64(q, k, v, mask=None):
    """Asks the softmax for float64 (dtype=torch.float64): float32 inputs give float64 outputs."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1, dtype=torch.float64)
    return weights @ v.double(), weights


def sdpa_mask_filled_with_zero(q, k, v, mask=None):
    """Fills masked scores with 0 instead of -inf."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_stub(q, k, v, mask=None):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


def sdpa_mask_assumed_2d(q, k, v, mask=None):
    """Assumes a (T_q, T_k) mask: mask.view(T_q, T_k) raises RuntimeError for a batched mask."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        T_q, T_k = scores.shape[-2:]
        scores = scores.masked_fill(~mask.view(T_q, T_k), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_nan(q, k, v, mask=None):
    """Fills masked scores with -inf and then also multiplies by the mask: -inf * 0 is NaN."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf")) * mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_float32(q, k, v, mask=None):
    """Casts the weights to float32 (torch.softmax(..., dtype=torch.float32))."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32)
    return weights.double() @ v, weights


def sdpa_no_return(q, k, v, mask=None):
    """Computes everything and forgets `return`."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v  # noqa: F841


# --------------------------------------------------------------------------- SelfAttention

class _SelfAttentionBase(nn.Module):
    """Correct __init__ shared by the SelfAttention mutants (only forward is wrong)."""

    def __init__(self, d_model):
        super().__init__()
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)


def _attend(q, k, v, mask=None, scale=True):
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


class SelfAttentionValuesNotProjected(_SelfAttentionBase):
    """Uses x itself as the values: W_V is never applied."""

    def forward(self, x, mask=None):
        return _attend(self.W_Q(x), self.W_K(x), x, mask)


class SelfAttentionQKSwapped(_SelfAttentionBase):
    """Uses W_K(x) as the queries and W_Q(x) as the keys."""

    def forward(self, x, mask=None):
        return _attend(self.W_K(x), self.W_Q(x), self.W_V(x), mask)


class SelfAttentionNoScaling(_SelfAttentionBase):
    """Forgets to divide the scores by sqrt(d_k)."""

    def forward(self, x, mask=None):
        return _attend(self.W_Q(x), self.W_K(x), self.W_V(x), mask, scale=False)


class SelfAttentionMaskIgnored(_SelfAttentionBase):
    """Does not pass the mask on to the attention."""

    def forward(self, x, mask=None):
        return _attend(self.W_Q(x), self.W_K(x), self.W_V(x))


class SelfAttentionAlwaysCausal(_SelfAttentionBase):
    """Applies a causal mask even when mask is None."""

    def forward(self, x, mask=None):
        if mask is None:
            T = x.size(1)
            mask = torch.ones(T, T, dtype=torch.bool).tril()
        return _attend(self.W_Q(x), self.W_K(x), self.W_V(x), mask)


class SelfAttentionSharedProjection(nn.Module):
    """Creates one layer and uses it for queries, keys and values (self.W_K = self.W_V = self.W_Q)."""

    def __init__(self, d_model):
        super().__init__()
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = self.W_Q
        self.W_V = self.W_Q

    def forward(self, x, mask=None):
        return _attend(self.W_Q(x), self.W_K(x), self.W_V(x), mask)


class SelfAttentionLowercaseNames(nn.Module):
    """Names the layers w_q, w_k, w_v instead of W_Q, W_K, W_V."""

    def __init__(self, d_model):
        super().__init__()
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        return _attend(self.w_q(x), self.w_k(x), self.w_v(x), mask)


class SelfAttentionNoMaskParameter(_SelfAttentionBase):
    """Defines forward(self, x) without the mask parameter."""

    def forward(self, x):
        return _attend(self.W_Q(x), self.W_K(x), self.W_V(x))


class SelfAttentionExtraOutputLayer(_SelfAttentionBase):
    """Adds an output projection W_O that single-head SelfAttention does not have."""

    def __init__(self, d_model):
        super().__init__(d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        out, weights = _attend(self.W_Q(x), self.W_K(x), self.W_V(x), mask)
        return self.W_O(out), weights


class SelfAttentionNoBias(nn.Module):
    """Creates the projections with bias=False."""

    def __init__(self, d_model):
        super().__init__()
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        return _attend(self.W_Q(x), self.W_K(x), self.W_V(x), mask)


class SelfAttentionDetached(_SelfAttentionBase):
    """Runs forward under torch.no_grad(), so no gradient reaches the projections."""

    def forward(self, x, mask=None):
        with torch.no_grad():
            return _attend(self.W_Q(x), self.W_K(x), self.W_V(x), mask)


class SelfAttentionValuesDetached(_SelfAttentionBase):
    """Detaches the values (self.W_V(x).detach()), so no gradient reaches W_V."""

    def forward(self, x, mask=None):
        return _attend(self.W_Q(x), self.W_K(x), self.W_V(x).detach(), mask)


class SelfAttentionStub(nn.Module):
    """The untouched learner stub (both __init__ and forward)."""

    def __init__(self, d_model):
        super().__init__()
        # YOUR CODE HERE
        raise NotImplementedError()

    def forward(self, x, mask=None):
        # YOUR CODE HERE
        raise NotImplementedError()


class SelfAttentionForwardStub(_SelfAttentionBase):
    """__init__ done, forward still the untouched stub."""

    def forward(self, x, mask=None):
        # YOUR CODE HERE
        raise NotImplementedError()


class SelfAttentionNotAModule:
    """A plain class that forgets to subclass nn.Module."""

    def __init__(self, d_model):
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)

    def __call__(self, x, mask=None):
        return _attend(self.W_Q(x), self.W_K(x), self.W_V(x), mask)


def self_attention_function(x, mask=None):
    """A function passed where the class SelfAttention is expected."""
    return _attend(x, x, x, mask)


# An object where the class is expected: even a correct module, instantiated, is the wrong argument.
self_attention_instance = _SelfAttentionBase(16)
"""An instance, SelfAttention(16), passed instead of the class SelfAttention."""


# --------------------------------------------------------------------------- found by the second blind round

def scores_clamped(q, k):
    """Clamps the scores to [-5, 5] "for stability"."""
    return (q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))).clamp(-5, 5)


def sdpa_no_nan_to_num(q, k, v, mask=None):
    """Masks with -inf but leaves NaN where a query may attend to no key."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_scale_by_sqrt_d_v(q, k, v, mask=None):
    """Takes the scale from the values' width."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights


class SelfAttentionDropout(nn.Module):
    """Adds dropout on the attention weights (and the check builds it in training mode)."""

    def __init__(self, d_model):
        super().__init__()
        self.W_Q, self.W_K, self.W_V = (nn.Linear(d_model, d_model) for _ in range(3))
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, mask=None):
        q, k, v = self.W_Q(x), self.W_K(x), self.W_V(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return weights @ v, weights


class SelfAttentionNoSuperInit(nn.Module):
    """Forgets super().__init__(), so assigning the first layer fails."""

    def __init__(self, d_model):
        self.W_Q, self.W_K, self.W_V = (nn.Linear(d_model, d_model) for _ in range(3))

    def forward(self, x, mask=None):
        raise AssertionError("never reached")


def scores_transpose_1_2(q, k):
    """Transposes with k.transpose(1, 2): right for 3-D keys, wrong axes for 4-D (B, H, T, d_k)."""
    return q @ k.transpose(1, 2) / math.sqrt(q.size(-1))


def _masked(scores, mask):
    return scores if mask is None else scores.masked_fill(~mask, float("-inf"))


def sdpa_softmax_dim_1(q, k, v, mask=None):
    """Softmax over dim=1: the queries of 3-D scores, the heads of 4-D ones."""
    weights = torch.softmax(_masked(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), mask), dim=1).nan_to_num(0.0)
    return weights @ v, weights


def sdpa_softmax_dim_0(q, k, v, mask=None):
    """Softmax over dim=0: the batch."""
    weights = torch.softmax(_masked(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), mask), dim=0).nan_to_num(0.0)
    return weights @ v, weights


def sdpa_bool_index(q, k, v, mask=None):
    """Masks by bool indexing, scores[~mask] = -inf, which does not broadcast a (B, 1, T_q, T_k) mask."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores[~mask] = float("-inf")
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights


def sdpa_fill_minus_1e9(q, k, v, mask=None):
    """Fills masked scores with -1e9 (a common habit): a query with no allowed key gets uniform weights."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def sdpa_fill_minus_1e4_rows_zeroed(q, k, v, mask=None):
    """Fills with -1e4 (the fp16 habit) and zeroes the rows with no allowed key: large scores outweigh -1e4."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e4)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask.any(-1, keepdim=True), 0.0)
    return weights @ v, weights


def sdpa_mask_transposed(q, k, v, mask=None):
    """Uses the mask transposed (~mask.transpose(-2, -1)), as if its rows were the keys."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask.transpose(-2, -1), float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights


def sdpa_scale_multiplied(q, k, v, mask=None):
    """Multiplies the scores by sqrt(d_k) instead of dividing."""
    weights = torch.softmax(_masked(q @ k.transpose(-2, -1) * math.sqrt(q.size(-1)), mask), dim=-1).nan_to_num(0.0)
    return weights @ v, weights


def sdpa_sqrt_precedence(q, k, v, mask=None):
    """Divides by q.size(-1) ** 1/2, which Python reads as (d_k ** 1) / 2."""
    weights = torch.softmax(_masked(q @ k.transpose(-2, -1) / (q.size(-1) ** 1/2), mask), dim=-1).nan_to_num(0.0)
    return weights @ v, weights


def sdpa_int_sqrt(q, k, v, mask=None):
    """Rounds the square root down with math.isqrt(d_k)."""
    weights = torch.softmax(_masked(q @ k.transpose(-2, -1) / math.isqrt(q.size(-1)), mask), dim=-1).nan_to_num(0.0)
    return weights @ v, weights


def sdpa_mask_renormalised(q, k, v, mask=None):
    """Zeroes the masked weights after the softmax, then divides each row by its new sum."""
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1)
    if mask is not None:
        weights = weights * mask
        weights = (weights / weights.sum(-1, keepdim=True)).nan_to_num(0.0)
    return weights @ v, weights


def sdpa_mask_multiplied_renormalised_eps(q, k, v, mask=None):
    """Masks by multiplying the exponentials by the mask and renormalising, with a small floor against 0 / 0 (a
    common third-party form): a row whose masked key has the largest score by far underflows to about 0."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    e = (scores - scores.max(dim=-1, keepdim=True).values).exp()
    if mask is not None:
        e = e * mask
    weights = e / (e.sum(dim=-1, keepdim=True) + 1e-9)
    return weights @ v, weights


def sdpa_dropout_on_weights(q, k, v, mask=None):
    """Drops attention weights with F.dropout(weights, 0.1), whose training argument is True by default."""
    weights = torch.softmax(_masked(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), mask), dim=-1).nan_to_num(0.0)
    weights = torch.nn.functional.dropout(weights, 0.1)
    return weights @ v, weights


def sdpa_transpose_1_2(q, k, v, mask=None):
    """Transposes the keys with k.transpose(1, 2): right for 3-D keys, the wrong axes for 4-D (B, H, T_k, d_k)."""
    weights = torch.softmax(_masked(q @ k.transpose(1, 2) / math.sqrt(q.size(-1)), mask), dim=-1).nan_to_num(0.0)
    return weights @ v, weights


class SelfAttentionMaskMultiplied(_SelfAttentionBase):
    """Multiplies the scores by the mask inside forward (a masked score becomes 0, not -inf)."""

    def forward(self, x, mask=None):
        q, k, v = self.W_Q(x), self.W_K(x), self.W_V(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            scores = scores * mask
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class SelfAttentionMaskTransposed(_SelfAttentionBase):
    """Masks with ~mask.transpose(-2, -1): a (B, 1, T) padding mask then hides queries, not keys."""

    def forward(self, x, mask=None):
        q, k, v = self.W_Q(x), self.W_K(x), self.W_V(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            scores = scores.masked_fill(~mask.transpose(-2, -1), float("-inf"))
        weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        return weights @ v, weights


class SelfAttentionKeysFromWQ(_SelfAttentionBase):
    """Copy-pastes the query line for the keys: k = self.W_Q(x)."""

    def forward(self, x, mask=None):
        return _attend(self.W_Q(x), self.W_Q(x), self.W_V(x), mask)


# --------------------------------------------------------------------------- modules on top of a wrong function
# A learner's SelfAttention (and MultiHeadSelfAttention, CausalSelfAttention) calls their own attention function:
# a slip there reaches the module's check, which must name it as the function's check does.

def calling(module, sdpa, prefix: str):
    """``module`` (a class whose forward calls ``self.sdpa``) with ``sdpa``, a wrong attention function, named
    ``<prefix>_<sdpa's name>`` and documented by the function's docstring."""
    cls = type(f"{prefix}_{sdpa.__name__}", (module,), {"sdpa": staticmethod(sdpa),
                                                       "__doc__": f"Its attention function: {sdpa.__doc__}"})
    cls.__module__ = module.__module__
    return cls


class _SelfAttentionCalling(_SelfAttentionBase):
    """Right, around an attention function ``sdpa`` (see :func:`calling`)."""

    def forward(self, x, mask=None):
        return self.sdpa(self.W_Q(x), self.W_K(x), self.W_V(x), mask)


# --------------------------------------------------------------------------- what the tests feed the checks
# (check, mutant, expected mistake id or None, key phrase of the problem): see tests/test_checks_mutants.py

def scores_keys_not_transposed(q, k):
    """q @ k: the keys not transposed (runs only when T_k = d_k)."""
    return q @ k / math.sqrt(q.size(-1))


class SelfAttentionQTransposed(nn.Module):
    """Computes the queries as x @ W_Q.weight + b: the weight used transposed."""

    def __init__(self, d_model):
        super().__init__()
        self.W_Q, self.W_K, self.W_V = (nn.Linear(d_model, d_model) for _ in range(3))

    def forward(self, x, mask=None):
        q, k, v = x @ self.W_Q.weight + self.W_Q.bias, self.W_K(x), self.W_V(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights

ROWS = [
    # ---- issue 17's kinds: keys not transposed, a weight used transposed
    (check_attention_scores, scores_keys_not_transposed, "keys_not_transposed", "raised RuntimeError"),
    (check_self_attention, SelfAttentionQTransposed, "weight_transposed", "not equal to the reference"),
    # ---- attention_scores: named mistakes
    (check_attention_scores, scores_no_scaling, "no_scaling", "not equal to the reference"),
    (check_attention_scores, scores_clamped, None, "not equal to the reference"),
    (check_scaled_dot_product_attention, sdpa_no_nan_to_num, "nan_fully_masked_row", "NaN in the weights"),
    (check_scaled_dot_product_attention, sdpa_scale_by_sqrt_d_v, "d_k_from_wrong_dim", "not equal to the reference"),
    (check_self_attention, SelfAttentionDropout, "dropout_on_weights", "scaled up"),
    (check_self_attention, SelfAttentionNoSuperInit, "missing_super_init", "raised AttributeError"),
    (check_attention_scores, scores_scale_by_d_k, "scale_by_d_k", "not equal to the reference"),
    (check_attention_scores, scores_scale_multiplied, "scale_multiplied", "not equal to the reference"),
    (check_attention_scores, scores_sqrt_precedence, "sqrt_precedence", "not equal to the reference"),
    (check_attention_scores, scores_sqrt_precedence_inline, "sqrt_precedence", "not equal to the reference"),
    (check_attention_scores, scores_int_sqrt, "int_sqrt", "not equal to the reference"),
    (check_attention_scores, scores_d_k_from_wrong_dim, "d_k_from_wrong_dim", "not equal to the reference"),
    (check_attention_scores, scores_transposed, "transposed_scores", "has the wrong shape"),
    (check_attention_scores, scores_dot_T, "batched_T", "raised RuntimeError"),
    (check_attention_scores, scores_scales_q_in_place, "input_modified_in_place", "changed its input q in place"),
    (check_attention_scores, scores_under_no_grad, "no_gradient", "carries no gradient"),
    # ---- attention_scores: robustness
    (check_attention_scores, None, None, "expected the function attention_scores, got None"),
    (check_attention_scores, SelfAttentionNoScaling, None, "expected the function attention_scores, got a class"),
    (check_attention_scores, scores_stub, "not_implemented", "raised NotImplementedError"),
    (check_attention_scores, scores_float32, "dtype_changed", "has dtype torch.float32"),
    (check_attention_scores, scores_numpy, "numpy_output", "is not a tensor"),
    (check_attention_scores, scores_no_return, "missing_return", "is not a tensor"),
    # ---- scaled_dot_product_attention: named mistakes
    (check_scaled_dot_product_attention, sdpa_softmax_over_queries, "softmax_over_queries", "does not sum to 1"),
    (check_scaled_dot_product_attention, sdpa_no_scaling, "no_scaling", "not equal to the reference"),
    (check_scaled_dot_product_attention, sdpa_scale_by_d_k, "scale_by_d_k", "not equal to the reference"),
    (check_scaled_dot_product_attention, sdpa_d_k_from_wrong_dim, "d_k_from_wrong_dim", "not equal to the reference"),
    (check_scaled_dot_product_attention, sdpa_weights_are_scores, "weights_are_scores", "does not sum to 1"),
    (check_scaled_dot_product_attention, sdpa_mask_after_softmax, "mask_after_softmax", "does not sum to 1"),
    (check_scaled_dot_product_attention, sdpa_mask_multiplied, "mask_multiplied", "masked key got attention"),
    (check_scaled_dot_product_attention, sdpa_mask_filled_with_zero, "mask_multiplied", "masked key got attention"),
    (check_scaled_dot_product_attention, sdpa_mask_ignored, "mask_ignored", "masked key got attention"),
    (check_scaled_dot_product_attention, sdpa_mask_inverted, "mask_inverted", "NaN exactly in the rows"),
    (check_scaled_dot_product_attention, sdpa_mask_added, "mask_added", "masked key got attention"),
    (check_scaled_dot_product_attention, sdpa_swapped_outputs, "swapped_outputs", "in the wrong order"),
    (check_scaled_dot_product_attention, sdpa_only_out, "weights_not_returned", "returned one tensor"),
    (check_scaled_dot_product_attention, sdpa_scales_q_in_place, "input_modified_in_place", "changed its input q"),
    (check_scaled_dot_product_attention, sdpa_softmax_in_float64, "dtype_changed", "float32 inputs gave a torch.float64"),
    # ---- scaled_dot_product_attention: robustness
    (check_scaled_dot_product_attention, None, None, "expected the function scaled_dot_product_attention, got None"),
    (check_scaled_dot_product_attention, SelfAttentionMaskIgnored, None, "got a class"),
    (check_scaled_dot_product_attention, sdpa_stub, "not_implemented", "raised NotImplementedError"),
    (check_scaled_dot_product_attention, sdpa_mask_assumed_2d, "mask_reshaped", "raised RuntimeError"),
    (check_scaled_dot_product_attention, sdpa_nan, None, "weights contain NaN"),
    (check_scaled_dot_product_attention, sdpa_float32, "dtype_changed", "has dtype torch.float32"),
    (check_scaled_dot_product_attention, sdpa_no_return, "missing_return", "returned None"),
    # ---- SelfAttention: named mistakes
    (check_self_attention, SelfAttentionValuesNotProjected, "values_not_projected", "not equal to the reference"),
    (check_self_attention, SelfAttentionQKSwapped, "q_k_swapped", "not equal to the reference"),
    (check_self_attention, SelfAttentionNoScaling, "no_scaling", "not equal to the reference"),
    (check_self_attention, SelfAttentionMaskIgnored, "mask_ignored", "masked key got attention"),
    (check_self_attention, SelfAttentionAlwaysCausal, "always_causal", "not equal to the reference"),
    (check_self_attention, SelfAttentionSharedProjection, "shared_projection", "wrong number of parameters"),
    (check_self_attention, SelfAttentionExtraOutputLayer, "extra_output_projection", "wrong number of parameters"),
    (check_self_attention, SelfAttentionLowercaseNames, "attribute_name", "has no attribute W_Q (it has w_q)"),
    (check_self_attention, SelfAttentionNoBias, "linear_without_bias", "W_Q has no bias"),
    (check_self_attention, SelfAttentionDetached, "no_gradient", "the output carries no gradient"),
    (check_self_attention, SelfAttentionValuesDetached, "no_gradient", "no gradient reaches W_V"),
    # ---- SelfAttention: robustness
    (check_self_attention, None, None, "expected the class SelfAttention (a subclass of nn.Module), got None"),
    (check_self_attention, self_attention_function, None, "got function"),
    (check_self_attention, self_attention_instance, None, "got an instance of"),
    (check_self_attention, SelfAttentionNotAModule, None, "(a subclass of nn.Module)"),
    (check_self_attention, SelfAttentionNoMaskParameter, None, "raised TypeError"),
    (check_self_attention, SelfAttentionStub, "not_implemented", "raised NotImplementedError | tried: SelfAttention("),
    (check_self_attention, SelfAttentionForwardStub, "not_implemented", "raised NotImplementedError"),
    # ---- reported by learners: each must be named, with the hint of the mistake it names
    (check_self_attention, SelfAttentionMaskMultiplied, "mask_multiplied", "masked key got attention"),
    (check_self_attention, SelfAttentionMaskTransposed, "mask_transposed", "masked key got attention"),
    (check_self_attention, SelfAttentionKeysFromWQ, "projection_reused", "not equal to the reference"),
    (check_attention_scores, scores_transpose_1_2, "hard_coded_axes", "raised RuntimeError"),
    (check_scaled_dot_product_attention, sdpa_softmax_dim_1, "softmax_over_queries", "does not sum to 1"),
    (check_scaled_dot_product_attention, sdpa_softmax_dim_0, "softmax_over_batch", "does not sum to 1"),
    (check_scaled_dot_product_attention, sdpa_bool_index, "bool_index_mask", "raised IndexError"),
    (check_scaled_dot_product_attention, sdpa_fill_minus_1e9, "finite_fill", "may attend to no key got non-zero"),
    (check_scaled_dot_product_attention, sdpa_fill_minus_1e4_rows_zeroed, "fill_too_weak", "when the scores are large"),
    (check_scaled_dot_product_attention, sdpa_mask_transposed, "mask_transposed", "masked key got attention"),
    # ---- issue 41: every mistake this check can name has a mutant of this check
    (check_scaled_dot_product_attention, sdpa_scale_multiplied, "scale_multiplied", "not equal to the reference"),
    (check_scaled_dot_product_attention, sdpa_sqrt_precedence, "sqrt_precedence", "not equal to the reference"),
    (check_scaled_dot_product_attention, sdpa_int_sqrt, "int_sqrt", "not equal to the reference"),
    (check_scaled_dot_product_attention, sdpa_mask_renormalised, "mask_renormalised_after_softmax", "does not sum to 1"),
    (check_scaled_dot_product_attention, sdpa_transpose_1_2, "hard_coded_axes", "raised RuntimeError"),
    (check_scaled_dot_product_attention, sdpa_dropout_on_weights, "dropout_on_weights", "scaled up"),
    (check_scaled_dot_product_attention, sdpa_mask_multiplied_renormalised_eps, "mask_renormalised_after_softmax",
     "does not sum to 1"),  # was named mask_after_softmax
    # ---- issue 41: every mistake this check can name has a mutant of this check; these are the module
    # around the learner's own attention function with a slip (tests/mutants/attention.py's calling)
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_d_k_from_wrong_dim, "SelfAttention"), "d_k_from_wrong_dim", "not equal to the reference"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_int_sqrt, "SelfAttention"), "int_sqrt", "not equal to the reference"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_mask_added, "SelfAttention"), "mask_added", "masked key got attention"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_mask_after_softmax, "SelfAttention"), "mask_after_softmax", "does not sum to 1"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_mask_inverted, "SelfAttention"), "mask_inverted", "NaN exactly in the rows"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_mask_assumed_2d, "SelfAttention"), "mask_reshaped", "raised RuntimeError"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_scale_by_d_k, "SelfAttention"), "scale_by_d_k", "not equal to the reference"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_scale_multiplied, "SelfAttention"), "scale_multiplied", "not equal to the reference"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_softmax_dim_0, "SelfAttention"), "softmax_over_batch", "does not sum to 1"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_softmax_over_queries, "SelfAttention"), "softmax_over_queries", "does not sum to 1"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_sqrt_precedence, "SelfAttention"), "sqrt_precedence", "not equal to the reference"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_weights_are_scores, "SelfAttention"), "weights_are_scores", "does not sum to 1"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_only_out, "SelfAttention"), "weights_not_returned", "returned one tensor"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_no_return, "SelfAttention"), "missing_return", "returned None"),
    (check_self_attention, calling(_SelfAttentionCalling, sdpa_swapped_outputs, "SelfAttention"), "swapped_outputs", "in the wrong order"),
]
LATE_FAILURE = {check_attention_scores: scores_no_scaling, check_scaled_dot_product_attention: sdpa_mask_ignored, check_self_attention: SelfAttentionDetached}  # fails late, after the check did most of its work
STUB = {check_attention_scores: scores_stub, check_scaled_dot_product_attention: sdpa_stub, check_self_attention: SelfAttentionStub}  # check -> the untouched learner stub
