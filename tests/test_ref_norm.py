"""tinylm_solutions.norm.LayerNorm against torch.nn.LayerNorm."""
import pytest
import torch
from torch import nn

from tinylm_solutions.norm import LayerNorm

TOL = dict(atol=1e-6, rtol=0.0)


def test_params_init_and_count():
    ln = LayerNorm(10)
    assert [n for n, _ in ln.named_parameters()] == ["weight", "bias"]
    assert ln.weight.tolist() == [1.0] * 10 and ln.bias.tolist() == [0.0] * 10
    assert sum(p.numel() for p in ln.parameters()) == 20
    assert ln.eps == 1e-5


@pytest.mark.parametrize("shape", [(7,), (4, 7), (2, 5, 7), (2, 3, 5, 7)])
@pytest.mark.parametrize("eps", [1e-5, 1e-1])
def test_equals_nn_layernorm_with_copied_weights(shape, eps):
    torch.manual_seed(0)
    ours, ref = LayerNorm(7, eps=eps).double(), nn.LayerNorm(7, eps=eps).double()
    with torch.no_grad():
        ref.weight.copy_(torch.randn(7))
        ref.bias.copy_(torch.randn(7))
    ours.load_state_dict(ref.state_dict())
    x = 3 * torch.randn(*shape, dtype=torch.float64) + 2
    torch.testing.assert_close(ours(x), ref(x), **TOL)


def test_per_token_statistics_batch_of_one():
    """Each token is normalized alone: the result for a token does not depend on the rest of the batch."""
    torch.manual_seed(0)
    ln = LayerNorm(7).double()
    x = torch.randn(4, 3, 7, dtype=torch.float64)
    torch.testing.assert_close(ln(x)[2:3, 1:2], ln(x[2:3, 1:2]), **TOL)
    out = ln(x)
    torch.testing.assert_close(out.mean(-1), torch.zeros(4, 3, dtype=torch.float64), **TOL)


def test_gradients_match_nn_layernorm():
    torch.manual_seed(0)
    ours, ref = LayerNorm(5).double(), nn.LayerNorm(5).double()
    x = torch.randn(3, 5, dtype=torch.float64)
    w = torch.randn(3, 5, dtype=torch.float64)
    (ours(x) * w).sum().backward()
    (ref(x) * w).sum().backward()
    torch.testing.assert_close(ours.weight.grad, ref.weight.grad, **TOL)
    torch.testing.assert_close(ours.bias.grad, ref.bias.grad, **TOL)


def test_wrong_width_raises():
    with pytest.raises(ValueError):
        LayerNorm(4)(torch.zeros(2, 5))
