"""Key-padding masks, combining masks, and the softmax that applies them (notebook 03).

Convention (PyTorch's, for bool masks in ``torch.nn.functional.scaled_dot_product_attention``):
``True`` = this query may attend to this key. Every mask here broadcasts against multi-head scores
``(B, H, T_q, T_k)``: a causal mask is ``(T, T)``, a key-padding mask ``(B, 1, 1, T)``, and their
combination ``(B, 1, T, T)``.
"""
from __future__ import annotations

import torch

PADDING_SIDES = ("right", "left")


def key_padding_mask(lengths: torch.Tensor, T: int, padding_side: str = "right") -> torch.Tensor:
    """Mask out padding keys: sequence ``b`` has ``lengths[b]`` real tokens, the rest is padding.

    Args:
        lengths: int tensor ``(B,)`` with ``0 <= lengths[b] <= T`` (a list is accepted too).
        T: padded sequence length.
        padding_side: ``"right"`` (real tokens first, padding after: training batches) or ``"left"``
            (padding first, real tokens last: batched generation), as Hugging Face tokenizers call it.

    Returns:
        bool tensor ``(B, 1, 1, T)``: True for real keys. The two size-1 axes are the heads and the
        queries, so it broadcasts against multi-head scores ``(B, H, T_q, T)`` (and single-head
        scores ``(B, T_q, T)`` after ``mask[:, 0]``): every query of sequence ``b`` sees the same keys.

    Raises:
        ValueError: if ``lengths`` is not 1-D, a length is outside ``[0, T]``, or ``padding_side`` is
            neither "right" nor "left".
    """
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1 or lengths.is_floating_point() or bool((lengths < 0).any()) or bool((lengths > T).any()):
        raise ValueError(f"lengths must be a 1-D int tensor of values in [0, {T}], got {lengths.tolist()}")
    if padding_side not in PADDING_SIDES:
        raise ValueError(f"padding_side must be 'right' or 'left', got {padding_side!r}")
    positions = torch.arange(T, device=lengths.device)  # (T,)
    if padding_side == "right":
        real = positions[None, :] < lengths[:, None]  # (B, T): the first lengths[b] positions
    else:
        real = positions[None, :] >= T - lengths[:, None]  # (B, T): the last lengths[b] positions
    return real[:, None, None, :]  # (B, 1, 1, T): broadcast over heads and queries


def combine_masks(*masks: torch.Tensor | None) -> torch.Tensor | None:
    """Logical AND of bool masks that broadcast together; ``None`` entries are skipped.

    A key is allowed only if *every* mask allows it (e.g. it is in the past **and** it is not padding).

    Args:
        *masks: bool tensors (True = may attend) or None, e.g. ``key_padding_mask(...) (B, 1, 1, T)``
            and ``causal_mask(T) (T, T)``.

    Returns:
        A new bool tensor of the broadcast shape (e.g. ``(B, 1, T, T)``), or None if every mask is None.
        The inputs are not modified.

    Raises:
        TypeError: if a mask is not a bool tensor.
    """
    out = None
    for m in masks:
        if m is None:
            continue
        if not isinstance(m, torch.Tensor) or m.dtype != torch.bool:
            raise TypeError(f"masks must be bool tensors (True = may attend) or None, got {getattr(m, 'dtype', type(m))}")
        out = m if out is None else out & m  # & builds a new tensor: the inputs stay as they are
    return out


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the keys (the last axis) in which masked keys get weight exactly 0.

    Masked scores are set to ``-inf`` before the softmax, so no score, however large, outweighs them.
    A query with no allowed key (every score ``-inf``) would give ``0/0 = NaN``; it gets all-zero
    weights instead, as ``torch.nn.functional.scaled_dot_product_attention`` gives it (PyTorch >= 2.5).

    Args:
        scores: float tensor ``(..., T_q, T_k)``.
        mask: optional bool tensor broadcastable to ``scores``; True = may attend.

    Returns:
        Weights of the shape of ``scores``: each row sums to 1 over its allowed keys, or is all zero
        when no key is allowed.

    Raises:
        TypeError: if ``mask`` is not a bool tensor.
    """
    if mask is None:
        return torch.softmax(scores, dim=-1)  # (..., T_q, T_k)
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a bool tensor (True = may attend), got dtype {mask.dtype}")
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # (..., T_q, T_k)
    return weights.nan_to_num(0.0)  # rows with every key masked: 0/0 -> 0
