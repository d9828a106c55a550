"""tinylm_solutions.position against the formulas of Vaswani et al. (2017) §3.5 and RoFormer §3.4."""
import math

import pytest
import torch

from tinylm_solutions.position import (LearnedPositionalEmbedding, PositionalEncoding, apply_rope,
                                       rope_frequencies, sinusoidal_position_encoding)

TOL = dict(atol=1e-6, rtol=0.0)


def test_row0_is_0101_exactly():
    pe = sinusoidal_position_encoding(7, 10)
    assert pe.shape == (7, 10)
    assert pe.dtype == torch.get_default_dtype()
    assert pe[0].tolist() == [0.0, 1.0] * 5


def test_values_match_direct_formula():
    L, D = 50, 12
    pe = sinusoidal_position_encoding(L, D, dtype=torch.float64)
    expected = torch.tensor([[math.sin(p / 10000 ** (c / D)) if c % 2 == 0 else math.cos(p / 10000 ** ((c - 1) / D))
                              for c in range(D)] for p in range(L)], dtype=torch.float64)
    torch.testing.assert_close(pe, expected, **TOL)


@pytest.mark.parametrize("max_len, d_model", [(10, 7), (0, 8), (10, 0), (-1, 8)])
def test_bad_sizes_raise(max_len, d_model):
    with pytest.raises(ValueError):
        sinusoidal_position_encoding(max_len, d_model)


def test_buffer_not_parameter_but_in_state_dict():
    m = PositionalEncoding(16, max_len=32)
    assert m.pe.shape == (1, 32, 16)
    assert list(m.parameters()) == []
    assert dict(m.named_buffers())["pe"] is m.pe
    assert set(m.state_dict()) == {"pe"}  # persistent: saved with the model
    torch.testing.assert_close(m.state_dict()["pe"], sinusoidal_position_encoding(32, 16)[None], **TOL)
    assert m.double().pe.dtype == torch.float64  # buffers follow the module


def test_state_dict_round_trip():
    a, b = PositionalEncoding(8, max_len=10), PositionalEncoding(8, max_len=10)
    with torch.no_grad():
        b.pe.zero_()
    b.load_state_dict(a.state_dict())
    assert torch.equal(a.pe, b.pe)


def test_forward_adds_sliced_table_for_short_T():
    torch.manual_seed(0)
    m = PositionalEncoding(8, max_len=20).double()
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    torch.testing.assert_close(m(x), x + sinusoidal_position_encoding(20, 8, torch.float64)[:5], **TOL)


def test_forward_too_long_raises():
    m = PositionalEncoding(8, max_len=4)
    with pytest.raises(ValueError, match="max_len"):
        m(torch.zeros(1, 5, 8))


def test_order_sensitivity():
    """Permuting the tokens changes the encoded sequence beyond a permutation ("A B C D" vs "D C B A")."""
    torch.manual_seed(0)
    m = PositionalEncoding(8, max_len=4).double()
    x = torch.randn(1, 4, 8, dtype=torch.float64)
    out_rev = m(x.flip(1))
    assert (out_rev.flip(1) - m(x)).abs().max().item() > 0.1


def test_learned_positional_embedding():
    torch.manual_seed(0)
    m = LearnedPositionalEmbedding(6, 10).double()  # (d_model, max_len), like PositionalEncoding
    assert isinstance(m.emb, torch.nn.Embedding) and m.emb.weight.shape == (10, 6)
    assert sum(p.numel() for p in m.parameters()) == 60
    x = torch.randn(2, 4, 6, dtype=torch.float64)
    torch.testing.assert_close(m(x), x + m.emb.weight[:4], **TOL)
    with pytest.raises(ValueError):
        m(torch.zeros(1, 11, 6, dtype=torch.float64))


def test_learned_positions_equal_nn_embedding_with_copied_weights():
    """PyTorch's own nn.Embedding, looked up at positions 0..T-1, with the same weights."""
    torch.manual_seed(0)
    m = LearnedPositionalEmbedding(5, 9)
    emb = torch.nn.Embedding(9, 5)
    with torch.no_grad():
        emb.weight.copy_(m.emb.weight)
    x = torch.randn(3, 7, 5)
    torch.testing.assert_close(m(x), x + emb(torch.arange(7))[None], **TOL)
    m(x).sum().backward()
    assert bool((m.emb.weight.grad[:7] == 3).all()) and bool((m.emb.weight.grad[7:] == 0).all())


def test_table_equals_the_pytorch_tutorial_formula():
    """The exp/log form of the PyTorch tutorial's PositionalEncoding (interleaved, same frequencies)."""
    L, D = 40, 18
    position = torch.arange(L, dtype=torch.float64)[:, None]
    div_term = torch.exp(torch.arange(0, D, 2, dtype=torch.float64) * (-math.log(10000.0) / D))
    expected = torch.zeros(L, D, dtype=torch.float64)
    expected[:, 0::2] = torch.sin(position * div_term)
    expected[:, 1::2] = torch.cos(position * div_term)
    torch.testing.assert_close(sinusoidal_position_encoding(L, D, torch.float64), expected, atol=1e-12, rtol=0.0)


def test_offset_is_a_rotation_of_each_pair():
    """PE[pos + k] pair i = R(k w_i) PE[pos] pair i: the reason relative offsets are easy to read."""
    L, D, k = 30, 8, 5
    pe = sinusoidal_position_encoding(L, D, torch.float64)
    w = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)  # (D/2,)
    c, s = torch.cos(k * w), torch.sin(k * w)
    sin_, cos_ = pe[:-k, 0::2], pe[:-k, 1::2]
    torch.testing.assert_close(pe[k:, 0::2], sin_ * c + cos_ * s, **TOL)  # sin(a + b)
    torch.testing.assert_close(pe[k:, 1::2], cos_ * c - sin_ * s, **TOL)  # cos(a + b)
    dots = pe @ pe.T  # (L, L): depends only on the offset
    torch.testing.assert_close(torch.diagonal(dots, k), torch.full((L - k,), float(torch.cos(k * w).sum()),
                                                                   dtype=torch.float64), **TOL)


def test_rope_frequencies_match_table():
    theta = rope_frequencies(12, dtype=torch.float64)
    pe = sinusoidal_position_encoding(5, 12, torch.float64)
    torch.testing.assert_close(torch.sin(3 * theta), pe[3, 0::2], **TOL)
    with pytest.raises(ValueError):
        rope_frequencies(5)


def test_rope_rotates_pairs_consistently_with_table():
    """Rotating (1, 0) pairs by pos * theta_i gives (cos, sin): the table's odd and even columns."""
    L, d = 9, 8
    x = torch.tensor([1.0, 0.0] * (d // 2), dtype=torch.float64).expand(L, d)  # (T, d_k)
    out = apply_rope(x)
    pe = sinusoidal_position_encoding(L, d, torch.float64)
    torch.testing.assert_close(out[:, 0::2], pe[:, 1::2], **TOL)
    torch.testing.assert_close(out[:, 1::2], pe[:, 0::2], **TOL)


def test_rope_matches_roformer_eq34():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 5, 6, dtype=torch.float64)  # (B, H, T, d_k)
    m = torch.arange(5, dtype=torch.float64)[:, None]
    theta = torch.repeat_interleave(rope_frequencies(6, dtype=torch.float64), 2)  # (d_k,)
    rotated_half = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)  # (-x2, x1, -x4, x3, ...)
    expected = x * torch.cos(m * theta) + rotated_half * torch.sin(m * theta)
    torch.testing.assert_close(apply_rope(x), expected, **TOL)


def test_rope_relative_positions_and_norm():
    torch.manual_seed(0)
    q, k = torch.randn(4, 8, dtype=torch.float64), torch.randn(4, 8, dtype=torch.float64)
    pos = torch.tensor([0, 3, 5, 9])
    scores = apply_rope(q, pos) @ apply_rope(k, pos).T
    shifted = apply_rope(q, pos + 7) @ apply_rope(k, pos + 7).T
    torch.testing.assert_close(scores, shifted, **TOL)
    torch.testing.assert_close(apply_rope(q, pos).norm(dim=-1), q.norm(dim=-1), **TOL)
    with pytest.raises(ValueError):
        apply_rope(q, torch.arange(3))


def test_rope_matches_complex_multiplication():
    """RoFormer's complex form: pair (x_2i, x_2i+1) as x_2i + i x_2i+1, multiplied by exp(i m theta_i)."""
    torch.manual_seed(0)
    x = torch.randn(2, 7, 10, dtype=torch.float64)  # (B, T, d_k)
    pos = torch.tensor([0, 1, 2, 5, 8, 13, 21])
    z = torch.view_as_complex(x.reshape(2, 7, 5, 2).contiguous())  # (B, T, d_k/2)
    rot = torch.polar(torch.ones(7, 5, dtype=torch.float64), pos[:, None] * rope_frequencies(10, dtype=torch.float64))
    expected = torch.view_as_real(z * rot).reshape(2, 7, 10)
    torch.testing.assert_close(apply_rope(x, pos), expected, **TOL)
