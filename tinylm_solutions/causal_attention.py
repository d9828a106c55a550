"""Causal self-attention in its production form (notebook 07): one fused Q/K/V projection and one call of
PyTorch's fused ``F.scaled_dot_product_attention``, as in nanoGPT's ``CausalSelfAttention``.

It computes what stage 02's :class:`~tinylm_solutions.multihead.MultiHeadSelfAttention` computes with a causal
mask (Vaswani et al. 2017, §3.2.2), without biases, plus dropout on the attention weights while training
(Vaswani et al. §5.4 apply dropout to sub-layer outputs; attention-weight dropout is BERT's and GPT-2's).
The trap: ``F.scaled_dot_product_attention`` is a function, not a module, so it does not read
``self.training``; ``dropout_p`` must be set to 0 by hand outside training (PyTorch docs,
``torch.nn.functional.scaled_dot_product_attention``: "dropout_p ... set to 0.0 during evaluation").
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with a fused ``qkv`` projection.

    Args:
        d_model: model width ``D``.
        num_heads: number of heads ``H``; each head has width ``d_head = D // H``.
        dropout: probability of dropping an attention weight while training (default 0).

    Attributes ``qkv = nn.Linear(D, 3 D, bias=False)`` (its output split in the order q, k, v),
    ``out = nn.Linear(D, D, bias=False)``, ``num_heads``, ``d_head``, ``dropout`` (the float).
    Parameters: ``4 D²``.

    ``forward(x (B, T, D)) -> (B, T, D)``: token ``t`` attends to tokens ``0..t``. Deterministic in
    ``eval()``; random in ``train()`` when ``dropout > 0``.

    Raises:
        ValueError: if ``d_model`` is not divisible by ``num_heads``, or ``dropout`` is not in [0, 1).
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")
        self.num_heads, self.d_head, self.dropout = num_heads, d_model // num_heads, float(dropout)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)  # 3 x (B, T, D)
        q, k, v = (t.view(B, T, self.num_heads, self.d_head).transpose(1, 2) for t in (q, k, v))  # (B, H, T, d_head)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                           is_causal=True)  # (B, H, T, d_head)
        return self.out(y.transpose(1, 2).reshape(B, T, D))  # (B, T, D)
