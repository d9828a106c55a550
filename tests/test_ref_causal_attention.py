"""The production-form attention (tinylm_solutions.causal_attention) against PyTorch's own and against stage 02's
multi-head attention, and the check accepting honest other ways to write it."""
import pytest
import torch
from torch import nn

from tinylm_solutions.attention import causal_mask
from tinylm_solutions.causal_attention import CausalSelfAttention
from tinylm_solutions.multihead import MultiHeadSelfAttention

B, T, D, H = 2, 7, 12, 3


def _pair():
    torch.manual_seed(0)
    ours, mha = CausalSelfAttention(D, H).double().eval(), MultiHeadSelfAttention(D, H).double()
    with torch.no_grad():
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            getattr(mha, name).bias.zero_()
        ours.qkv.weight.copy_(torch.cat([mha.W_Q.weight, mha.W_K.weight, mha.W_V.weight]))
        ours.out.weight.copy_(mha.W_O.weight)
    return ours, mha


def test_equals_stage_02_attention_with_a_causal_mask():
    ours, mha = _pair()
    x = torch.randn(B, T, D, dtype=torch.float64)
    assert torch.allclose(ours(x), mha(x, causal_mask(T))[0], atol=1e-12)


def test_equals_nn_multihead_attention_without_biases():
    ours, _ = _pair()
    torch_mha = nn.MultiheadAttention(D, H, bias=False, batch_first=True).double()
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(ours.qkv.weight)  # (3D, D): W_Q, W_K, W_V stacked, the same layout
        torch_mha.out_proj.weight.copy_(ours.out.weight)
    x = torch.randn(B, T, D, dtype=torch.float64)
    want, _ = torch_mha(x, x, x, attn_mask=~causal_mask(T), need_weights=False)  # True = blocked there
    assert torch.allclose(ours(x), want, atol=1e-12)


def test_shape_count_and_errors():
    m = CausalSelfAttention(D, H, dropout=0.1)
    assert (m.num_heads, m.d_head, m.dropout) == (H, D // H, 0.1)
    assert sum(p.numel() for p in m.parameters()) == 4 * D * D
    assert m(torch.randn(B, T, D)).shape == (B, T, D)
    with pytest.raises(ValueError, match="divisible"):
        CausalSelfAttention(D + 1, H)
    with pytest.raises(ValueError, match="dropout"):
        CausalSelfAttention(D, H, dropout=1.0)


def test_dropout_only_while_training():
    torch.manual_seed(0)
    m, x = CausalSelfAttention(D, H, dropout=0.5), torch.randn(B, T, D)
    m.eval()
    assert torch.equal(m(x), m(x))
    m.train()
    assert not torch.equal(m(x), m(x))


@pytest.mark.parametrize("name", ["CSAManual", "CSAEinsum"])
def test_check_accepts_honest_alternatives(name, capsys):
    """Attention by hand with F.dropout(training=self.training), torch.split, reshape, einsum heads: all pass, at
    every seed."""
    from mutants import block
    from tinylm_checks import check_causal_self_attention
    assert name in {c.__name__ for c in block.HONEST_CSA}
    for seed in range(3):
        check_causal_self_attention(getattr(block, name), seed=seed)
    assert capsys.readouterr().out.count("✔ check_causal_self_attention passed") == 3
