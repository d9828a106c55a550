"""One Transformer block: multi-head self-attention and a feed-forward network, each wrapped in a
residual connection and a LayerNorm.

- Post-LN (the original; Vaswani et al. 2017, §3.1 and §5.4): ``x = norm1(x + attn(x))``,
  ``x = norm2(x + ffn(x))``.
- Pre-LN (GPT-2; Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture"):
  ``x = x + attn(norm1(x))``, ``x = x + ffn(norm2(x))``.

Both equal ``torch.nn.TransformerEncoderLayer(d_model, nhead, d_ff, dropout=0.0, activation="gelu",
batch_first=True, norm_first=...)`` given the same weights (its ``in_proj_weight`` is ``W_Q, W_K, W_V``
stacked; ``out_proj`` is ``W_O``).

Parameters per block (:func:`block_parameter_counts` counts them): attention ``4 (D^2 + D)``, FFN
``2 D d_ff + d_ff + D`` (``8 D^2 + 5 D`` at ``d_ff = 4 D``), two LayerNorms ``2 x 2 D``: ``12 D^2 + 13 D`` at
``d_ff = 4 D``, "about 12 D^2 per layer" (the rule of Kaplan et al. 2020, §2.1, which leaves out biases and
norms).
"""
from __future__ import annotations

import torch
from torch import nn

from .multihead import MultiHeadSelfAttention
from .ffn import FeedForward
from .norm import LayerNorm


class TransformerBlock(nn.Module):
    """A Pre-LN (default) or Post-LN Transformer block.

    Args:
        d_model: model width ``D``.
        num_heads: attention heads ``H`` (must divide ``D``).
        d_ff: feed-forward hidden width (usually ``4 * D``).
        norm_first: True for Pre-LN, False for Post-LN.
        dropout: residual dropout on the attention and FFN outputs, and inside the FFN (default 0).

    Attributes ``norm1, norm2`` (:class:`LayerNorm`), ``attn`` (:class:`MultiHeadSelfAttention`), ``ffn``
    (:class:`FeedForward`). Parameters: ``4(D^2+D) + 2 D d_ff + d_ff + D + 4 D`` = ``12 D^2 + 13 D`` at
    ``d_ff = 4 D``.

    ``forward(x (B, T, D), mask=None) -> (B, T, D)``; ``mask`` is bool, True = may attend, broadcastable
    to ``(B, H, T, T)`` (e.g. ``causal_mask(T)``). After each forward, ``last_attn_weights`` holds the
    detached attention weights ``(B, H, T, T)`` of that call (for heatmaps; None before the first call).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, norm_first: bool = True, dropout: float = 0.0):
        super().__init__()
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.norm2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.dropout = nn.Dropout(dropout)
        self.last_attn_weights: torch.Tensor | None = None

    def _attend(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        out, weights = self.attn(x, mask)  # (B, T, D), (B, H, T, T)
        self.last_attn_weights = None if weights is None else weights.detach()  # None: attn's fast path
        return self.dropout(out)  # (B, T, D)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if self.norm_first:
            x = x + self._attend(self.norm1(x), mask)  # (B, T, D)
            x = x + self.dropout(self.ffn(self.norm2(x)))  # (B, T, D)
        else:
            x = self.norm1(x + self._attend(x, mask))  # (B, T, D)
            x = self.norm2(x + self.dropout(self.ffn(x)))  # (B, T, D)
        return x


def _count(params) -> int:
    """Elements of the given parameters, each tensor counted once (a shared tensor is one tensor)."""
    return sum(p.numel() for p in {id(p): p for p in params}.values())


def block_parameter_counts(block: nn.Module) -> dict[str, int]:
    """Count a block's parameters by part, from the module itself (not from a formula).

    Args:
        block: a module with submodules ``attn``, ``ffn``, ``norm1`` and ``norm2`` (a
            :class:`TransformerBlock`, or any block with those attributes).

    Returns:
        ``{"attn": ..., "ffn": ..., "norms": ..., "total": ...}`` as ints: the elements (``numel``) of the
        parameters of ``attn``, of ``ffn``, of ``norm1`` and ``norm2`` together, and of the whole block. Every
        parameter counts, trainable or frozen; a tensor shared by two submodules counts once (as in
        ``block.parameters()``). ``total`` covers everything the block holds, so it can exceed the sum of
        the parts.

    Raises:
        AttributeError: if ``block`` lacks one of the four submodules.
    """
    return {"attn": _count(block.attn.parameters()),
            "ffn": _count(block.ffn.parameters()),
            "norms": _count([*block.norm1.parameters(), *block.norm2.parameters()]),
            "total": _count(block.parameters())}
