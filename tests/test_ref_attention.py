"""The reference attention and masks against PyTorch's own, in float64, max abs difference <= 1e-6."""
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_solutions.attention import SelfAttention, attention_scores, causal_mask, scaled_dot_product_attention
from tinylm_solutions.multihead import MultiHeadSelfAttention, merge_heads, split_heads

ATOL = 1e-6
B, H, T_q, T_k, d_k, d_v = 2, 3, 5, 7, 4, 6


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def max_diff(a, b):
    return (a - b).abs().max().item()


def test_scores_are_scaled_dot_products():
    q, k = randn(B, H, T_q, d_k, seed=1), randn(B, H, T_k, d_k, seed=2)
    s = attention_scores(q, k)
    assert s.shape == (B, H, T_q, T_k)
    assert max_diff(s[1, 2, 3, 4], q[1, 2, 3] @ k[1, 2, 4] / math.sqrt(d_k)) <= 1e-12


@pytest.mark.parametrize("masked", [False, True])
def test_sdpa_equals_torch(masked):
    q, k, v = randn(B, H, T_q, d_k, seed=1), randn(B, H, T_k, d_k, seed=2), randn(B, H, T_k, d_v, seed=3)
    mask = (torch.rand(B, 1, T_q, T_k, generator=torch.Generator().manual_seed(4)) < 0.7) if masked else None
    if masked:
        mask[..., 0] = True  # every query keeps at least one key
    out, w = scaled_dot_product_attention(q, k, v, mask)
    assert out.shape == (B, H, T_q, d_v) and w.shape == (B, H, T_q, T_k)
    assert max_diff(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask)) <= ATOL
    assert max_diff(w.sum(-1), torch.ones(B, H, T_q, dtype=torch.float64)) <= 1e-12
    if masked:
        assert (w.masked_select(~mask.expand_as(w)) == 0).all()


def test_sdpa_causal_equals_torch_is_causal():
    q, k, v = randn(B, H, T_q, d_k, seed=1), randn(B, H, T_q, d_k, seed=2), randn(B, H, T_q, d_v, seed=3)
    out, _ = scaled_dot_product_attention(q, k, v, causal_mask(T_q))
    assert max_diff(out, F.scaled_dot_product_attention(q, k, v, is_causal=True)) <= ATOL


def test_fully_masked_row_gives_zeros_not_nan():
    q, k, v = randn(1, 3, d_k), randn(1, 4, d_k, seed=1), randn(1, 4, d_v, seed=2)
    mask = torch.tensor([[True, True, False, False], [False] * 4, [True] * 4])
    out, w = scaled_dot_product_attention(q, k, v, mask)
    assert torch.isfinite(out).all() and (w[0, 1] == 0).all() and (out[0, 1] == 0).all()


def test_sdpa_rejects_non_bool_mask():
    q = randn(1, 2, d_k)
    with pytest.raises(TypeError, match="bool"):
        scaled_dot_product_attention(q, q, q, torch.ones(2, 2))


def test_self_attention_params_and_output():
    D = 8
    m = SelfAttention(D).double()
    assert sum(p.numel() for p in m.parameters()) == 3 * (D * D + D)
    x = randn(3, 5, D)
    out, w = m(x)
    assert out.shape == (3, 5, D) and w.shape == (3, 5, 5)
    expected = F.scaled_dot_product_attention(m.W_Q(x), m.W_K(x), m.W_V(x))
    assert max_diff(out, expected) <= ATOL


def test_split_and_merge_heads():
    x = randn(B, T_q, H * d_k)
    heads = split_heads(x, H)
    assert heads.shape == (B, H, T_q, d_k)
    assert torch.equal(heads[1, 2, 3], x[1, 3, 2 * d_k:3 * d_k])  # head h holds features h*d_k ... (h+1)*d_k - 1
    assert torch.equal(merge_heads(heads), x)
    with pytest.raises(ValueError, match="divisible"):
        split_heads(randn(B, T_q, 10), 3)


def copy_into_torch_mha(m: MultiHeadSelfAttention) -> nn.MultiheadAttention:
    D = m.d_model
    mha = nn.MultiheadAttention(D, m.num_heads, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([m.W_Q.weight, m.W_K.weight, m.W_V.weight]))
        mha.in_proj_bias.copy_(torch.cat([m.W_Q.bias, m.W_K.bias, m.W_V.bias]))
        mha.out_proj.weight.copy_(m.W_O.weight)
        mha.out_proj.bias.copy_(m.W_O.bias)
    return mha


@pytest.mark.parametrize("masked", [False, True])
def test_multi_head_equals_nn_multihead_attention(masked):
    D, T = H * d_k, 5
    torch.manual_seed(0)
    m = MultiHeadSelfAttention(D, H).double()
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0, 0.3)  # non-zero biases too
    mha = copy_into_torch_mha(m)
    x = randn(B, T, D, seed=5)
    mask = causal_mask(T) if masked else None
    out, w = m(x, mask)
    ref_out, ref_w = mha(x, x, x, attn_mask=None if mask is None else ~mask, average_attn_weights=False)
    assert out.shape == (B, T, D) and w.shape == (B, H, T, T)
    assert max_diff(out, ref_out) <= ATOL
    assert max_diff(w, ref_w) <= ATOL


def test_multi_head_param_count_and_divisibility():
    D = 12
    assert sum(p.numel() for p in MultiHeadSelfAttention(D, 3).parameters()) == 4 * (D * D + D)
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadSelfAttention(10, 3)
