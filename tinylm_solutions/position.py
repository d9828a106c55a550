"""Position information: sinusoidal table, learned positions, and rotary embeddings (RoPE).

Self-attention is permutation-equivariant, so a model needs to be told where each token sits.

- Sinusoidal encoding: Vaswani et al. (2017), "Attention Is All You Need", §3.5, in the
  *interleaved* layout of the paper: ``PE[pos, 2i] = sin(pos / 10000^(2i/D))``,
  ``PE[pos, 2i+1] = cos(pos / 10000^(2i/D))``.
- Learned positions: one trainable vector per position (GPT-2; Radford et al. 2019).
- RoPE: Su et al. (2021), "RoFormer", §3.4 (eq. 34): rotate each interleaved pair ``(2i, 2i+1)`` of a
  query/key by the angle ``pos * theta_i``, with the same ``theta_i = 10000^(-2i/d)`` as the table.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .attention import scaled_dot_product_attention
from .multihead import MultiHeadSelfAttention, merge_heads, split_heads


def sinusoidal_position_encoding(max_len: int, d_model: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    """The fixed sinusoidal table of Vaswani et al. (2017), §3.5, interleaved sin/cos.

    Args:
        max_len: number of positions ``L`` (positive int).
        d_model: model width ``D`` (positive, even int).
        dtype: float dtype of the result (default: ``torch.get_default_dtype()``); computed in float64.

    Returns:
        ``(max_len, d_model)`` tensor with ``PE[pos, 2i] = sin(pos / 10000^(2i/D))`` and
        ``PE[pos, 2i+1] = cos(pos / 10000^(2i/D))``; row 0 is ``[0, 1, 0, 1, ...]``.

    Raises:
        ValueError: if a size is not a positive int, or ``d_model`` is odd.
    """
    for name, n in (("max_len", max_len), ("d_model", d_model)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{name} must be a positive int, got {n!r}")
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even (sin/cos pairs), got {d_model}")
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (L, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (D/2,)
    angles = pos / 10000.0 ** (two_i / d_model)  # (L, D/2)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)  # (L, D)
    pe[:, 0::2] = torch.sin(angles)  # even columns
    pe[:, 1::2] = torch.cos(angles)  # odd columns
    return pe.to(dtype or torch.get_default_dtype())


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal table to token embeddings: ``x + pe[:, :T]``.

    Args:
        d_model: model width ``D`` (even).
        max_len: longest sequence supported.

    The table is a buffer ``pe`` of shape ``(1, max_len, D)`` registered with ``register_buffer`` (persistent):
    it moves with ``.to()``/``.double()``, is saved in ``state_dict()`` and is not a parameter (nothing to
    train). The leading axis of size 1 broadcasts over the batch. ``forward(x (B, T, D)) -> (B, T, D)``.

    Raises:
        ValueError: (forward) if ``T > max_len`` or ``x.size(-1) != d_model``.
    """

    def __init__(self, d_model: int, max_len: int = 512):
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.register_buffer("pe", sinusoidal_position_encoding(max_len, d_model)[None])  # (1, L, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.size(-2)
        if T > self.max_len:
            raise ValueError(f"sequence length {T} exceeds max_len={self.max_len} of the positional table")
        if x.size(-1) != self.d_model:
            raise ValueError(f"expected last dimension d_model={self.d_model}, got shape {tuple(x.shape)}")
        return x + self.pe[:, :T]  # (B, T, D) + (1, T, D)


class LearnedPositionalEmbedding(nn.Module):
    """Learned absolute positions (GPT-2 style): ``x + emb(arange(T))``.

    Args:
        d_model: model width ``D``.
        max_len: number of positions (rows of the ``nn.Embedding``).

    The same argument order as :class:`PositionalEncoding`. Attribute ``emb = nn.Embedding(max_len, d_model)``:
    ``max_len * D`` parameters, of which a sequence of length ``T`` uses (and trains) the first ``T`` rows.
    ``forward(x (B, T, D)) -> (B, T, D)``.

    Raises:
        ValueError: (forward) if ``T > max_len``.
    """

    def __init__(self, d_model: int, max_len: int = 512):
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.emb = nn.Embedding(max_len, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.size(-2)
        if T > self.max_len:
            raise ValueError(f"sequence length {T} exceeds max_len={self.max_len} of the position embedding")
        return x + self.emb(torch.arange(T, device=x.device))  # (B, T, D) + (T, D)


def rope_frequencies(d_k: int, base: float = 10000.0, dtype: torch.dtype | None = None) -> torch.Tensor:
    """RoPE angular frequencies ``theta_i = base^(-2i/d_k)``, ``i = 0 .. d_k/2 - 1`` (RoFormer §3.4).

    The same frequencies as the sinusoidal table's columns ``2i`` / ``2i+1``.

    Returns:
        ``(d_k / 2,)`` float tensor.

    Raises:
        ValueError: if ``d_k`` is not a positive even int.
    """
    if isinstance(d_k, bool) or not isinstance(d_k, int) or d_k < 2 or d_k % 2:
        raise ValueError(f"d_k must be a positive even int, got {d_k!r}")
    two_i = torch.arange(0, d_k, 2, dtype=torch.float64)  # (d_k/2,)
    return (base ** (-two_i / d_k)).to(dtype or torch.get_default_dtype())


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """Rotate interleaved pairs of ``x`` by position-dependent angles (RoFormer eq. 34).

    ``out[2i]   = x[2i] cos(m theta_i) - x[2i+1] sin(m theta_i)``
    ``out[2i+1] = x[2i] sin(m theta_i) + x[2i+1] cos(m theta_i)`` for the token at position ``m``.
    Applied to queries and keys (not values), it makes ``<rope(q, m), rope(k, n)>`` depend on ``m - n``.

    Args:
        x: ``(..., T, d_k)`` float tensor, ``d_k`` even (e.g. queries ``(B, H, T, d_k)``).
        positions: optional ``(T,)`` positions (default ``arange(T)``).
        base: frequency base (10000 in the paper).

    Returns:
        Tensor of the same shape and dtype as ``x``.

    Raises:
        ValueError: if ``d_k`` is odd or ``positions`` does not have shape ``(T,)``.
    """
    T, d_k = x.shape[-2], x.shape[-1]
    theta = rope_frequencies(d_k, base, dtype=x.dtype).to(x.device)  # (d_k/2,)
    if positions is None:
        positions = torch.arange(T, device=x.device)
    if positions.shape != (T,):
        raise ValueError(f"positions must have shape ({T},), got {tuple(positions.shape)}")
    angles = positions.to(x.dtype)[:, None] * theta  # (T, d_k/2)
    cos, sin = torch.cos(angles), torch.sin(angles)  # (T, d_k/2) each
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., T, d_k/2) each
    out_even = x_even * cos - x_odd * sin  # (..., T, d_k/2)
    out_odd = x_even * sin + x_odd * cos  # (..., T, d_k/2)
    return torch.stack((out_even, out_odd), dim=-1).flatten(-2)  # (..., T, d_k), pairs re-interleaved


class RotarySelfAttention(MultiHeadSelfAttention):
    """:class:`~tinylm_solutions.multihead.MultiHeadSelfAttention` with RoPE: queries and keys are rotated by
    :func:`apply_rope` after the heads are split, values are not (Su et al. 2021, §3.4; as in LLaMA).

    The same parameters, layout and ``need_weights`` paths as the layer it extends; ``forward(x (B, T, D),
    mask=None) -> (out (B, T, D), weights (B, H, T, T) or None)``. Positions are ``0 .. T-1``, so a model that
    uses it needs no position embedding (``TinyLM(positions="rope")``).

    Raises:
        ValueError: if ``d_model`` is not divisible by ``num_heads`` or ``d_k`` is odd.
        TypeError: (forward, fast path) if ``mask`` is not bool.
    """

    def __init__(self, d_model: int, num_heads: int):
        super().__init__(d_model, num_heads)
        if self.d_k % 2:
            raise ValueError(f"RoPE rotates pairs: d_k = d_model / num_heads = {self.d_k} must be even")

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        q = apply_rope(split_heads(self.W_Q(x), self.num_heads))  # (B, H, T, d_k), rotated by position
        k = apply_rope(split_heads(self.W_K(x), self.num_heads))  # (B, H, T, d_k), rotated by position
        v = split_heads(self.W_V(x), self.num_heads)  # (B, H, T, d_k): values carry no position
        if self.need_weights:
            out, weights = scaled_dot_product_attention(q, k, v, mask)  # (B, H, T, d_k), (B, H, T, T)
        else:
            if mask is not None and mask.dtype != torch.bool:  # as the layer it extends: True = may attend, only
                raise TypeError(f"mask must be a bool tensor (True = may attend), got dtype {mask.dtype}")
            out, weights = F.scaled_dot_product_attention(q, k, v, attn_mask=mask), None  # (B, H, T, d_k)
        return self.W_O(merge_heads(out)), weights  # (B, T, D), (B, H, T, T) or None
