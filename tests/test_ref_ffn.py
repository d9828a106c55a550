"""tinylm_solutions.ffn against nn.TransformerEncoderLayer's feed-forward part and the param formulas."""
import pytest
import torch
import torch.nn.functional as F

from tinylm_solutions.ffn import FeedForward, SwiGLU, swiglu_hidden_size

TOL = dict(atol=1e-6, rtol=0.0)


def n_params(m):
    return sum(p.numel() for p in m.parameters())


@pytest.mark.parametrize("D, d_ff", [(8, 32), (12, 20), (48, 192)])
def test_param_count_formula(D, d_ff):
    assert n_params(FeedForward(D, d_ff)) == 2 * D * d_ff + d_ff + D


def test_equals_pytorch_gelu_mlp():
    torch.manual_seed(0)
    ffn = FeedForward(6, 20).double()
    x = torch.randn(2, 5, 6, dtype=torch.float64)
    expected = F.linear(F.gelu(F.linear(x, ffn.linear1.weight, ffn.linear1.bias)), ffn.linear2.weight, ffn.linear2.bias)
    assert ffn(x).shape == (2, 5, 6)
    torch.testing.assert_close(ffn(x), expected, **TOL)


def test_position_wise():
    """Changing token 3 changes only output position 3."""
    torch.manual_seed(0)
    ffn = FeedForward(6, 20).double()
    x = torch.randn(1, 5, 6, dtype=torch.float64)
    x2 = x.clone()
    x2[0, 3] += 1.0
    diff = (ffn(x) - ffn(x2)).abs().amax(dim=-1)[0]  # (T,)
    assert diff[[0, 1, 2, 4]].max().item() == 0.0
    assert diff[3].item() > 0.0


def test_dropout_only_in_train_mode():
    torch.manual_seed(0)
    ffn = FeedForward(6, 20, dropout=0.5).double()
    ref = FeedForward(6, 20).double()
    ref.load_state_dict(ffn.state_dict())
    x = torch.randn(2, 5, 6, dtype=torch.float64)
    assert (ffn.train()(x) - ref(x)).abs().max().item() > 1e-3
    torch.testing.assert_close(ffn.eval()(x), ref(x), **TOL)


def test_swiglu_formula_and_param_match():
    torch.manual_seed(0)
    D, d_ff = 48, 192
    h = swiglu_hidden_size(d_ff)
    assert h == 128
    sw = SwiGLU(D, h).double()
    ff = FeedForward(D, d_ff)
    assert n_params(sw) == 3 * D * h == ff.linear1.weight.numel() + ff.linear2.weight.numel()
    x = torch.randn(2, 3, D, dtype=torch.float64)
    expected = (F.silu(x @ sw.gate_proj.weight.T) * (x @ sw.up_proj.weight.T)) @ sw.down_proj.weight.T
    torch.testing.assert_close(sw(x), expected, **TOL)


def test_swiglu_hidden_size_rounding():
    assert swiglu_hidden_size(100) == 67  # round(66.67)
    assert swiglu_hidden_size(100, multiple_of=8) == 72
    assert swiglu_hidden_size(4 * 4096, multiple_of=256) == 11008  # LLaMA-7B
    with pytest.raises(ValueError):
        swiglu_hidden_size(0)


def test_equals_feed_forward_part_of_nn_transformer_encoder_layer():
    """PyTorch's own FFN: in a Pre-LN nn.TransformerEncoderLayer whose attention output is zeroed,
    layer(x) = x + linear2(gelu(linear1(norm2(x)))); ours with the same weights gives the same."""
    torch.manual_seed(0)
    D, d_ff = 8, 24
    layer = torch.nn.TransformerEncoderLayer(D, 2, d_ff, dropout=0.0, activation="gelu", batch_first=True,
                                             norm_first=True).double().eval()
    with torch.no_grad():
        layer.self_attn.out_proj.weight.zero_()
        layer.self_attn.out_proj.bias.zero_()
        layer.norm2.weight.copy_(torch.rand(D) + 0.5)
        layer.norm2.bias.copy_(torch.randn(D))
    ffn = FeedForward(D, d_ff).double()
    ffn.linear1.load_state_dict(layer.linear1.state_dict())
    ffn.linear2.load_state_dict(layer.linear2.state_dict())
    x = torch.randn(3, 5, D, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(x + ffn(layer.norm2(x)), layer(x), **TOL)


def test_param_count_is_about_8_d_squared():
    D = 64
    assert n_params(FeedForward(D, 4 * D)) == 8 * D * D + 5 * D


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_check_accepts_other_correct_spellings(seed):
    """The check's reference GELU is the exact one; the tanh approximation and a hand-written erf pass too
    (and, for SwiGLU, a hand-written or in-place SiLU)."""
    from mutants.ffn import ACCEPTED
    for check, classes in ACCEPTED.items():
        for cls in classes:
            check(cls, seed=seed, quiet=True)
