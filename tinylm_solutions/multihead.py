"""Multi-head self-attention: splitting and merging heads, and the layer itself (notebook 02).

Vaswani et al. (2017), "Attention Is All You Need", §3.2.2. Masks follow PyTorch's convention for
boolean masks: ``True`` means "may attend".
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .attention import scaled_dot_product_attention


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Split the last dimension into heads: ``(B, T, D) -> (B, H, T, d_k)`` with ``d_k = D // H``.

    The reshape gives ``(B, T, H, d_k)``; the transpose moves heads in front of time so that each
    head attends over its own ``(T, d_k)`` slice.

    Raises:
        ValueError: if ``D`` is not divisible by ``num_heads``.
    """
    B, T, D = x.shape
    if D % num_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by num_heads={num_heads}")
    return x.view(B, T, num_heads, D // num_heads).transpose(1, 2)  # (B, H, T, d_k)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Undo :func:`split_heads`: ``(B, H, T, d_k) -> (B, T, H * d_k)``."""
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d_k)  # (B, T, D)


class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention (Vaswani et al. 2017, §3.2.2).

    Args:
        d_model: model width ``D``.
        num_heads: number of heads ``H``; each head has width ``d_k = D // H``.

    Attributes ``W_Q, W_K, W_V, W_O`` are ``nn.Linear(D, D)`` with bias: ``4 (D^2 + D)`` parameters,
    the same layout as ``nn.MultiheadAttention`` (whose ``in_proj_weight`` is ``W_Q, W_K, W_V``
    stacked and whose ``out_proj`` is ``W_O``).

    ``forward(x (B, T, D), mask=None) -> (out (B, T, D), weights (B, H, T, T))``; ``mask`` is bool,
    True = may attend, broadcastable to ``(B, H, T, T)`` (a ``(T, T)`` causal mask works as is).

    ``need_weights`` (attribute, default True) chooses the path. True: the taught one, the course's own
    :func:`~tinylm_solutions.attention.scaled_dot_product_attention`, which forms the weights and returns
    them. False: a fast path for training, PyTorch's fused ``torch.nn.functional.scaled_dot_product_attention``
    (same formula, same mask convention, fully masked rows give zeros as well), which never forms the
    weights and returns None in their place. Both give the same outputs and gradients up to rounding
    (``tests/test_ref_attention_fast.py``); :func:`tinylm_solutions.trainer.fast_attention` switches a
    whole model for the duration of a training run.

    Raises:
        ValueError: if ``d_model`` is not divisible by ``num_heads``.
    """

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)
        self.need_weights = True  # False: the fused fast path, which returns None for the weights

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        q = split_heads(self.W_Q(x), self.num_heads)  # (B, H, T, d_k)
        k = split_heads(self.W_K(x), self.num_heads)  # (B, H, T, d_k)
        v = split_heads(self.W_V(x), self.num_heads)  # (B, H, T, d_k)
        if self.need_weights:
            out, weights = scaled_dot_product_attention(q, k, v, mask)  # (B, H, T, d_k), (B, H, T, T)
        else:
            if mask is not None and mask.dtype != torch.bool:
                raise TypeError(f"mask must be a bool tensor (True = may attend), got dtype {mask.dtype}")
            out, weights = F.scaled_dot_product_attention(q, k, v, attn_mask=mask), None  # (B, H, T, d_k)
        return self.W_O(merge_heads(out)), weights  # (B, T, D), (B, H, T, T) or None
