import torch
import torch.nn.functional as F

from model import scaled_dot_product_attention


def test_equals_pytorchs_attention():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 4)
    out, _ = scaled_dot_product_attention(q, k, v)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-5)


def test_weights_are_a_distribution_over_the_keys():
    torch.manual_seed(1)
    q, k, v = torch.randn(4, 6, 8), torch.randn(4, 6, 8), torch.randn(4, 6, 8)
    _, weights = scaled_dot_product_attention(q, k, v)
    assert weights.shape == (4, 6, 6)
    assert torch.allclose(weights.sum(dim=-1), torch.ones(4, 6), atol=1e-6)
    assert (weights >= 0).all()
