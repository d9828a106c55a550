"""Layer normalization from scratch (Ba, Kiros & Hinton 2016, "Layer Normalization", §3).

``y = (x - mean) / sqrt(var + eps) * weight + bias`` over the last dimension of each token, with the
*biased* variance (divide by ``D``, not ``D - 1``) and ``eps`` *inside* the square root, exactly as
documented for ``torch.nn.LayerNorm``. Statistics are per token, so (unlike BatchNorm) the result does
not depend on the batch and works the same at batch size 1, in training and in eval.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class LayerNorm(nn.Module):
    """LayerNorm over the last dimension, equal to ``nn.LayerNorm(d_model, eps)``.

    Args:
        d_model: size ``D`` of the normalized (last) dimension.
        eps: added to the variance inside the square root (default ``1e-5``, as PyTorch).

    Parameters ``weight`` (ones) and ``bias`` (zeros), each ``(D,)``: ``2 D`` parameters.
    ``forward(x (..., D)) -> (..., D)``, same dtype as ``x``.

    ``fused`` (attribute, default False): True computes the same formula with PyTorch's one-kernel
    ``F.layer_norm`` (the trainer's fast path; ``tests/test_ref_norm.py`` shows the two agree).

    Raises:
        ValueError: (forward) if ``x.size(-1) != d_model``.
    """

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.d_model, self.eps = d_model, eps
        self.fused = False  # True: F.layer_norm, the same formula in one kernel (training speed only)
        self.weight = nn.Parameter(torch.ones(d_model))  # (D,)
        self.bias = nn.Parameter(torch.zeros(d_model))  # (D,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.size(-1) != self.d_model:
            raise ValueError(f"expected last dimension {self.d_model}, got shape {tuple(x.shape)}")
        if self.fused:
            return F.layer_norm(x, (self.d_model,), self.weight, self.bias, self.eps)  # (..., D)
        centered = x - x.mean(dim=-1, keepdim=True)  # (..., D): x - mean
        var = (centered ** 2).mean(dim=-1, keepdim=True)  # (..., 1), biased
        # (x - mean) / sqrt(var + eps), written as a product with 1 / sqrt: the same value (to rounding), and the
        # backward of a product is cheaper than a division's (benchmarks/bench_nanogpt.py's "taught" run)
        x_hat = centered * torch.rsqrt(var + self.eps)  # (..., D)
        return x_hat * self.weight + self.bias  # (..., D)

    def extra_repr(self) -> str:
        return f"{self.d_model}, eps={self.eps}"
