"""Stage 00's answer: a numerically stable softmax over the last dimension (the warm-up exercise)."""
from __future__ import annotations

import torch


def softmax(x: torch.Tensor) -> torch.Tensor:
    """``exp(x - max) / sum(exp(x - max))`` over the last dimension: equal to ``torch.softmax(x, dim=-1)``, and
    finite for scores of any size (subtracting each row's maximum leaves the softmax unchanged; Goodfellow et al.,
    Deep Learning §4.1).

    Args:
        x: scores, a float tensor of shape (..., N), N >= 1.

    Returns:
        A tensor of the same shape and dtype: positive entries, each row (the last dimension) summing to 1.
    """
    x = x - x.max(dim=-1, keepdim=True).values  # (..., N), each row's largest score is 0
    e = torch.exp(x)  # (..., N), in (0, 1]
    return e / e.sum(dim=-1, keepdim=True)  # (..., N)
