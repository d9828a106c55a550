"""tinylm_solutions.masks against PyTorch's own attention: F.scaled_dot_product_attention (bool attn_mask,
True = may attend) and nn.MultiheadAttention (key_padding_mask, True = ignore), in float64."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_solutions.attention import causal_mask, scaled_dot_product_attention
from tinylm_solutions.masks import combine_masks, key_padding_mask, masked_softmax
from tinylm_solutions.multihead import MultiHeadSelfAttention

B, H, T, D = 3, 2, 6, 8


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_causal_mask():
    m = causal_mask(4)
    assert m.dtype == torch.bool
    assert m.tolist() == [[True, False, False, False], [True, True, False, False],
                          [True, True, True, False], [True, True, True, True]]
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError):
            causal_mask(bad)


def test_causal_attention_ignores_future_tokens():
    torch.manual_seed(0)
    m = MultiHeadSelfAttention(12, 3).double()
    x = randn(1, 6, 12)
    x2 = x.clone()
    x2[:, 4:] = randn(1, 2, 12, seed=9)  # change tokens 4 and 5
    out, _ = m(x, causal_mask(6))
    out2, _ = m(x2, causal_mask(6))
    assert (out[:, :4] - out2[:, :4]).abs().max().item() == 0.0
    assert (out[:, 4:] - out2[:, 4:]).abs().max().item() > 1e-3


def test_key_padding_mask_right_and_left():
    right = key_padding_mask(torch.tensor([3, 5, 0]), 5)
    left = key_padding_mask(torch.tensor([3, 5, 0]), 5, padding_side="left")
    assert right.shape == left.shape == (3, 1, 1, 5) and right.dtype == left.dtype == torch.bool
    assert right[:, 0, 0].int().tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]]
    assert left[:, 0, 0].int().tolist() == [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]]
    assert torch.equal(key_padding_mask([3, 5, 0], 5), right)  # a list works too


@pytest.mark.parametrize("lengths, T, side", [([6], 5, "right"), ([-1], 5, "right"), ([[1, 2]], 5, "right"),
                                             ([1.5], 5, "right"), ([2], 5, "middle")])
def test_key_padding_mask_rejects_bad_input(lengths, T, side):
    with pytest.raises(ValueError):
        key_padding_mask(torch.tensor(lengths), T, side)


@pytest.mark.parametrize("side", ["right", "left"])
def test_padding_and_causal_equal_torch(side):
    """Our mask in our multi-head attention equals nn.MultiheadAttention with key_padding_mask = ~ours and
    attn_mask = ~causal (PyTorch's module uses True = ignore), on the rows that have an allowed key."""
    torch.manual_seed(0)
    ours = MultiHeadSelfAttention(D, H).double()
    theirs = nn.MultiheadAttention(D, H, batch_first=True).double()
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_Q.weight, ours.W_K.weight, ours.W_V.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_Q.bias, ours.W_K.bias, ours.W_V.bias]))
        theirs.out_proj.weight.copy_(ours.W_O.weight)
        theirs.out_proj.bias.copy_(ours.W_O.bias)
    x = randn(B, T, D)
    lengths = torch.tensor([4, 6, 2])
    pad = key_padding_mask(lengths, T, side)  # (B, 1, 1, T)
    mask = combine_masks(pad, causal_mask(T))  # (B, 1, T, T)
    out, w = ours(x, mask)
    out_t, w_t = theirs(x, x, x, key_padding_mask=~pad[:, 0, 0], attn_mask=~causal_mask(T), need_weights=True,
                        average_attn_weights=False)
    rows = mask.expand(B, H, T, T).any(-1)  # (B, H, T): queries with an allowed key
    assert torch.allclose(w[rows], w_t[rows], atol=1e-12)
    assert torch.allclose(out[rows[:, 0]], out_t[rows[:, 0]], atol=1e-12)
    # where nn.MultiheadAttention gives NaN (a left-padded query with no allowed key), ours gives zeros
    if side == "left":
        assert bool((~rows).any()) and bool(torch.isnan(w_t[~rows]).all())
    assert bool((w[~rows] == 0).all()) and bool(torch.isfinite(out).all())


def test_combine_masks():
    assert combine_masks(None, None) is None
    a = causal_mask(3)
    assert combine_masks(a, None) is a
    assert torch.equal(combine_masks(a, a.T), torch.eye(3, dtype=torch.bool))
    pad = key_padding_mask(torch.tensor([2, 3]), 3)
    both = combine_masks(pad, None, a, a)
    assert both.shape == (2, 1, 3, 3) and torch.equal(both, pad & a)
    before = pad.clone()
    combine_masks(pad, a)
    assert torch.equal(pad, before)  # inputs untouched
    with pytest.raises(TypeError):
        combine_masks(a.float())


def test_masked_softmax_equals_torch_sdpa_weights():
    """F.scaled_dot_product_attention with v = identity returns the weights themselves: compare those,
    including a fully masked row (zeros in both since PyTorch 2.5) and large scores."""
    scores = randn(B, H, T, T) * 3
    mask = torch.rand(B, 1, T, T, generator=torch.Generator().manual_seed(1)) < 0.5
    mask[0, 0, 2] = False  # batch 0, query 2: no allowed key
    eye = torch.eye(T, dtype=torch.float64).expand(B, H, T, T)
    for s in (scores, scores * 1e4):
        # sdpa computes softmax(q k^T * scale) v: q = s, k = I, scale = 1 gives softmax(s) @ v
        theirs = F.scaled_dot_product_attention(s, eye, eye, attn_mask=mask, scale=1.0)
        ours = masked_softmax(s, mask)
        assert torch.allclose(ours, theirs, atol=1e-12)
        assert bool((ours[0, :, 2] == 0).all()) and bool((ours.masked_select(~mask.expand_as(ours)) == 0).all())
    assert torch.equal(masked_softmax(scores), torch.softmax(scores, dim=-1))
    with pytest.raises(TypeError):
        masked_softmax(scores, mask.float())


def test_sdpa_uses_masked_softmax():
    q, k, v = randn(B, H, T, 4), randn(B, H, T, 4, seed=1), randn(B, H, T, 5, seed=2)
    mask = combine_masks(key_padding_mask(torch.tensor([0, 3, 6]), T, "left"), causal_mask(T))
    out, w = scaled_dot_product_attention(q, k, v, mask)
    assert torch.equal(w, masked_softmax(q @ k.transpose(-2, -1) / 2.0, mask))
    assert bool(torch.isfinite(out).all()) and bool((out[0] == 0).all())
