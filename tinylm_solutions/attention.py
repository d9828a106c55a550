"""Attention scores, scaled dot-product attention, single-head self-attention and the causal mask (notebook 01).

The formulas are those of Vaswani et al. (2017), "Attention Is All You Need", §3.2.1 (scaled
dot-product attention) and §3.2.2 (multi-head attention). Masks follow PyTorch's convention for
boolean masks in ``torch.nn.functional.scaled_dot_product_attention``: ``True`` means "may attend".
"""
from __future__ import annotations

import math

import torch
from torch import nn

def attention_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Scaled dot products between every query and every key.

    Args:
        q: queries, float tensor of shape ``(..., T_q, d_k)``.
        k: keys, float tensor of shape ``(..., T_k, d_k)``; leading dimensions broadcast with ``q``.

    Returns:
        Scores of shape ``(..., T_q, T_k)``: ``q @ k^T / sqrt(d_k)`` (Vaswani et al. 2017, eq. 1).
    """
    d_k = q.size(-1)
    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., T_q, T_k)


def scaled_dot_product_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, returning the weights too.

    Args:
        q: ``(..., T_q, d_k)`` queries.
        k: ``(..., T_k, d_k)`` keys.
        v: ``(..., T_k, d_v)`` values.
        mask: optional bool tensor broadcastable to ``(..., T_q, T_k)``; ``True`` = may attend
            (as in ``torch.nn.functional.scaled_dot_product_attention``). Masked scores are set to
            ``-inf`` *before* the softmax. A query row with no allowed key gets all-zero weights and a
            zero output instead of NaN, as PyTorch's function gives them (notebook 03 makes this
            softmax a function of its own, :func:`tinylm_solutions.masks.masked_softmax`).

    Returns:
        ``(out, weights)``: ``out`` is ``(..., T_q, d_v)``; ``weights`` is ``(..., T_q, T_k)`` and each
        row sums to 1 over the keys (the last dimension), except fully masked rows (all zero).

    Raises:
        TypeError: if ``mask`` is not a bool tensor.
    """
    scores = attention_scores(q, k)  # (..., T_q, T_k)
    if mask is not None:
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be a bool tensor (True = may attend), got dtype {mask.dtype}")
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # (..., T_q, T_k)
        if not mask.any(dim=-1).all():  # a row with every key masked (never in a causal mask): 0/0 -> 0
            weights = weights.nan_to_num(0.0)
    else:
        weights = torch.softmax(scores, dim=-1)  # (..., T_q, T_k), softmax over the keys
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


class SelfAttention(nn.Module):
    """Single-head self-attention: queries, keys and values are projections of the same ``x``.

    Args:
        d_model: model width ``D``; ``W_Q``, ``W_K``, ``W_V`` are ``nn.Linear(D, D)`` (with bias),
            so the module has ``3 (D^2 + D)`` parameters.

    ``forward(x (B, T, D), mask=None) -> (out (B, T, D), weights (B, T, T))``.
    """

    def __init__(self, d_model: int):
        super().__init__()
        self.d_model = d_model
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        q, k, v = self.W_Q(x), self.W_K(x), self.W_V(x)  # (B, T, D) each
        return scaled_dot_product_attention(q, k, v, mask)  # (B, T, D), (B, T, T)


def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """The causal (look-ahead) mask of a decoder: position ``t`` may attend to positions ``<= t``.

    Args:
        T: sequence length (a positive int).

    Returns:
        bool tensor ``(T, T)``, True on and below the diagonal (``torch.tril``). It broadcasts against
        scores ``(B, T, T)`` and ``(B, H, T, T)``.

    Raises:
        ValueError: if ``T`` is not a positive int.
    """
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise ValueError(f"T must be a positive int, got {T!r}")
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)
