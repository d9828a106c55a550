"""Attention masks. Convention (PyTorch's, for bool masks): ``True`` = this query may attend to this key."""
from __future__ import annotations

import torch


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


def key_padding_mask(lengths: torch.Tensor, T: int) -> torch.Tensor:
    """Mask out padding keys: sequence ``b`` has ``lengths[b]`` real tokens followed by padding.

    Args:
        lengths: int tensor ``(B,)`` with ``0 <= lengths[b] <= T``.
        T: padded sequence length.

    Returns:
        bool tensor ``(B, 1, T)``: True for real keys. It broadcasts against scores ``(B, T, T)``;
        use ``mask[:, None]`` (``(B, 1, 1, T)``) against multi-head scores ``(B, H, T, T)``.

    Raises:
        ValueError: if a length is negative or larger than ``T``.
    """
    lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1 or bool((lengths < 0).any()) or bool((lengths > T).any()):
        raise ValueError(f"lengths must be a 1-D tensor of values in [0, {T}], got {lengths.tolist()}")
    return (torch.arange(T, device=lengths.device)[None, :] < lengths[:, None])[:, None, :]  # (B, 1, T)


def combine_masks(*masks: torch.Tensor | None) -> torch.Tensor | None:
    """Logical AND of broadcastable bool masks (None entries are skipped); None if all are None."""
    out = None
    for m in masks:
        if m is not None:
            out = m if out is None else out & m
    return out
