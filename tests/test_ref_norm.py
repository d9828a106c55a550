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


@pytest.mark.parametrize("D", [2, 3, 5, 8])
def test_small_width_constant_and_spread_rows_tight(D):
    """At small D the biased variance matters most; constant rows (variance 0) and tiny spreads test eps."""
    torch.manual_seed(D)
    ours, ref = LayerNorm(D).double(), nn.LayerNorm(D).double()
    with torch.no_grad():
        ref.weight.copy_(1 + 0.5 * torch.randn(D))
        ref.bias.copy_(0.5 * torch.randn(D))
    ours.load_state_dict(ref.state_dict())
    z = torch.randn(5, D, dtype=torch.float64)
    x = torch.stack([z[0], 30 * z[1] - 40, 1e-3 * z[2] + 3, torch.full((D,), 2.5, dtype=torch.float64), 4 * z[4] + 10])
    out = ours(x)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, ref(x), atol=1e-9, rtol=1e-9)
    torch.testing.assert_close(out[3], ref.bias.detach(), atol=0.0, rtol=0.0)  # a constant row gives the bias


def test_same_in_train_and_eval_and_independent_of_the_batch():
    """Unlike BatchNorm: no running statistics, and a token's output does not depend on its neighbours."""
    torch.manual_seed(0)
    ln = LayerNorm(6).double()
    x = torch.randn(4, 3, 6, dtype=torch.float64)
    out_train = ln.train()(x)
    torch.testing.assert_close(ln.eval()(x), out_train, atol=0.0, rtol=0.0)
    padded = torch.cat([x, torch.zeros(4, 2, 6, dtype=torch.float64)], dim=1)  # (B, T + 2, D)
    torch.testing.assert_close(ln(padded)[:, :3], out_train, atol=0.0, rtol=0.0)
    assert list(ln.buffers()) == []


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_check_accepts_other_correct_spellings(seed):
    """x.var(unbiased=False) and nn.LayerNorm itself pass the check."""
    from mutants.norm import ACCEPTED
    from tinylm_checks import check_layer_norm
    for cls in ACCEPTED[check_layer_norm]:
        check_layer_norm(cls, seed=seed, quiet=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_fused_path_equals_the_taught_one_with_its_gradients(dtype):
    """The trainer's fast path (fused = True: F.layer_norm) computes the taught formula: outputs and gradients."""
    torch.manual_seed(0)
    norm = LayerNorm(12).to(dtype)
    with torch.no_grad():
        norm.weight.normal_(), norm.bias.normal_()
    x = torch.randn(3, 5, 12, dtype=dtype) * 4 + 2
    runs = []
    for fused in (False, True):
        norm.fused = fused
        norm.zero_grad(set_to_none=True)
        xi = x.clone().requires_grad_(True)
        out = norm(xi)
        (out * torch.linspace(-1, 1, out.numel(), dtype=dtype).view_as(out)).sum().backward()
        runs.append((out.detach(), xi.grad, norm.weight.grad, norm.bias.grad))
    tol = dict(atol=1e-5, rtol=1e-5) if dtype == torch.float32 else dict(atol=1e-12, rtol=1e-12)
    for taught, fused in zip(*runs):
        torch.testing.assert_close(fused, taught, **tol)
