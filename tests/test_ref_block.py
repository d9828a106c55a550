"""tinylm_solutions.block: TransformerBlock against nn.TransformerEncoderLayer with copied weights, and
block_parameter_counts against the formulas and PyTorch's own layer."""
import pytest
import torch
from torch import nn

from tinylm_solutions.multihead import MultiHeadSelfAttention
from tinylm_solutions.block import TransformerBlock, block_parameter_counts
from tinylm_solutions.ffn import FeedForward
from tinylm_solutions.attention import causal_mask
from tinylm_solutions.norm import LayerNorm

TOL = dict(atol=1e-6, rtol=0.0)
B, T, D, H, D_FF = 3, 5, 12, 3, 20  # all different, d_k = 4


def make_pair(norm_first):
    """Our block and a PyTorch encoder layer holding the same (random, non-trivial) weights."""
    torch.manual_seed(0)
    ours = TransformerBlock(D, H, D_FF, norm_first=norm_first).double()
    with torch.no_grad():
        for p in ours.parameters():
            p.copy_(torch.randn_like(p) * 0.3)
    ref = nn.TransformerEncoderLayer(D, H, D_FF, dropout=0.0, activation="gelu", batch_first=True,
                                     norm_first=norm_first).double().eval()
    a = ours.attn
    with torch.no_grad():
        ref.self_attn.in_proj_weight.copy_(torch.cat([a.W_Q.weight, a.W_K.weight, a.W_V.weight]))
        ref.self_attn.in_proj_bias.copy_(torch.cat([a.W_Q.bias, a.W_K.bias, a.W_V.bias]))
        ref.self_attn.out_proj.load_state_dict(a.W_O.state_dict())
        ref.linear1.load_state_dict(ours.ffn.linear1.state_dict())
        ref.linear2.load_state_dict(ours.ffn.linear2.state_dict())
        ref.norm1.load_state_dict(ours.norm1.state_dict())
        ref.norm2.load_state_dict(ours.norm2.state_dict())
    return ours, ref


def test_attributes_are_our_components():
    blk = TransformerBlock(D, H, D_FF)
    assert isinstance(blk.norm1, LayerNorm) and isinstance(blk.norm2, LayerNorm)
    assert isinstance(blk.attn, MultiHeadSelfAttention) and isinstance(blk.ffn, FeedForward)
    assert blk.norm_first is True


@pytest.mark.parametrize("D_", [8, 16, 24])
def test_param_count_12D2_13D(D_):
    assert sum(p.numel() for p in TransformerBlock(D_, 4, 4 * D_).parameters()) == 12 * D_ ** 2 + 13 * D_


@pytest.mark.parametrize("norm_first", [True, False])
def test_equals_encoder_layer_no_mask(norm_first):
    ours, ref = make_pair(norm_first)
    x = torch.randn(B, T, D, dtype=torch.float64)
    out = ours(x)
    assert out.shape == (B, T, D)
    torch.testing.assert_close(out, ref(x), **TOL)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("mask_kind", ["bool", "float"])
def test_equals_encoder_layer_causal(norm_first, mask_kind):
    ours, ref = make_pair(norm_first)
    x = torch.randn(B, T, D, dtype=torch.float64)
    ours_mask = causal_mask(T)  # True = may attend
    if mask_kind == "bool":
        ref_mask = ~ours_mask  # PyTorch's src_mask: True = NOT allowed
    else:
        ref_mask = nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)  # -inf above diagonal
    torch.testing.assert_close(ours(x, ours_mask), ref(x, src_mask=ref_mask), **TOL)


def test_causal_when_asked():
    ours, _ = make_pair(True)
    x = torch.randn(1, T, D, dtype=torch.float64)
    x2 = x.clone()
    x2[0, 3:] = torch.randn(T - 3, D, dtype=torch.float64)
    mask = causal_mask(T)
    torch.testing.assert_close(ours(x, mask)[0, :3], ours(x2, mask)[0, :3], **TOL)
    assert (ours(x)[0, :3] - ours(x2)[0, :3]).abs().max().item() > 1e-3  # without a mask the future leaks


def test_last_attn_weights_exposed():
    ours, _ = make_pair(True)
    assert ours.last_attn_weights is None
    x = torch.randn(B, T, D, dtype=torch.float64, requires_grad=True)
    ours(x, causal_mask(T))
    w = ours.last_attn_weights
    assert w.shape == (B, H, T, T) and not w.requires_grad
    torch.testing.assert_close(w.sum(-1), torch.ones(B, H, T, dtype=torch.float64), **TOL)
    assert w.triu(1).abs().max().item() == 0.0
    _, expected = ours.attn(ours.norm1(x), causal_mask(T))
    torch.testing.assert_close(w, expected.detach(), **TOL)


# ---- block_parameter_counts

def test_parameter_counts_at_d_128():
    """The numbers the notebook quotes: at D = 128, d_ff = 4 D."""
    counts = block_parameter_counts(TransformerBlock(128, 4, 512))
    assert counts == {"attn": 66_048, "ffn": 131_712, "norms": 512, "total": 198_272}
    assert counts["total"] == 12 * 128 ** 2 + 13 * 128


@pytest.mark.parametrize("D_, H_, d_ff", [(12, 3, 20), (16, 4, 64), (10, 2, 7)])
def test_parameter_counts_match_formulas_and_pytorch(D_, H_, d_ff):
    counts = block_parameter_counts(TransformerBlock(D_, H_, d_ff))
    assert counts == {"attn": 4 * (D_ * D_ + D_), "ffn": 2 * D_ * d_ff + d_ff + D_, "norms": 4 * D_,
                      "total": 4 * (D_ * D_ + D_) + 2 * D_ * d_ff + d_ff + D_ + 4 * D_}
    layer = nn.TransformerEncoderLayer(D_, H_, d_ff, batch_first=True)
    assert counts["total"] == sum(p.numel() for p in layer.parameters())
    assert all(type(v) is int for v in counts.values())


def test_parameter_counts_every_tensor_once_frozen_or_not():
    blk = TransformerBlock(8, 2, 24)
    plain = block_parameter_counts(blk)
    blk.scale = nn.Parameter(torch.ones(8))  # outside the parts: only in total
    blk.attn.requires_grad_(False)  # frozen: still counted
    assert block_parameter_counts(blk) == {**plain, "total": plain["total"] + 8}
    blk.norm2 = blk.norm1  # shared: counted once, in norms and in total
    assert block_parameter_counts(blk) == {**plain, "norms": 16, "total": plain["total"] + 8 - 16}


# ---- the check accepts blocks built from PyTorch's own parts

def test_check_accepts_pytorch_parts(capsys):
    """nn.LayerNorm, nn.MultiheadAttention(batch_first=True) and an nn.Sequential FFN are accepted (the check
    copies weights into them by their own names), at every seed."""
    from mutants.block import _TorchBlock
    from tinylm_checks import check_transformer_block
    for seed in range(3):
        check_transformer_block(_TorchBlock, seed=seed)
    assert capsys.readouterr().out.count("✔ check_transformer_block passed") == 3
