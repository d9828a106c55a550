"""The reference multi-head attention's fast path (``need_weights = False``: PyTorch's fused
``F.scaled_dot_product_attention``) equals the taught path: outputs and every gradient, without a mask, with a
causal mask and with an arbitrary boolean mask (fully masked rows included), in float32 and float64."""
import pytest
import torch

from tinylm_solutions.attention import causal_mask
from tinylm_solutions.multihead import MultiHeadSelfAttention

TOL = {torch.float32: dict(atol=1e-5, rtol=1e-5), torch.float64: dict(atol=1e-12, rtol=1e-12)}
B, T, D, H = 3, 7, 16, 4


def _mask(kind: str) -> torch.Tensor | None:
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(T)  # (T, T)
    mask = torch.rand(B, 1, T, T, generator=torch.Generator().manual_seed(2)) < 0.6  # (B, 1, T, T)
    mask[0, 0, 3] = False  # a query that may attend to nothing: zero weights, zero output on both paths
    return mask


def _run(layer, x, mask, need_weights):
    layer.need_weights = need_weights
    layer.zero_grad(set_to_none=True)
    x = x.clone().requires_grad_(True)
    out, weights = layer(x, mask)
    (out * torch.linspace(-1, 1, out.numel(), dtype=out.dtype).view_as(out)).sum().backward()
    return out.detach(), weights, x.grad, {n: p.grad for n, p in layer.named_parameters()}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind", ["none", "causal", "padded"])
def test_fast_path_equals_the_taught_one(dtype, kind):
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(D, H).to(dtype)
    x = torch.randn(B, T, D, dtype=dtype)
    mask = _mask(kind)
    out, weights, gx, gp = _run(layer, x, mask, need_weights=True)
    out_f, weights_f, gx_f, gp_f = _run(layer, x, mask, need_weights=False)
    assert weights.shape == (B, H, T, T) and weights_f is None
    torch.testing.assert_close(out_f, out, **TOL[dtype])
    torch.testing.assert_close(gx_f, gx, **TOL[dtype])
    assert gp_f.keys() == gp.keys()
    for name in gp:
        torch.testing.assert_close(gp_f[name], gp[name], **TOL[dtype], msg=name)
    if kind == "padded":
        assert torch.all(weights[0, :, 3] == 0)


def test_the_taught_path_is_the_default_and_the_fast_one_checks_the_mask():
    layer = MultiHeadSelfAttention(D, H)
    assert layer.need_weights is True
    layer.need_weights = False
    with pytest.raises(TypeError, match="mask must be a bool tensor"):
        layer(torch.randn(1, T, D), causal_mask(T).float())
