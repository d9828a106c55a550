"""Position-wise feed-forward networks.

- ``FeedForward``: ``linear2(GELU(linear1(x)))``, the FFN of Vaswani et al. (2017), §3.3, with GELU
  (Hendrycks & Gimpel 2016) instead of ReLU as in GPT/BERT; the same layout as the feed-forward part
  of ``torch.nn.TransformerEncoderLayer(activation="gelu")``.
- ``SwiGLU``: Shazeer (2020), "GLU Variants Improve Transformer", eq. 6 (``FFN_SwiGLU``, no biases).

"Position-wise": every token is transformed independently; no information moves between positions.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    """``linear2(dropout(GELU(linear1(x))))`` applied to every position independently.

    Args:
        d_model: model width ``D``.
        d_ff: hidden width (``4 * D`` in the paper and in GPT-2).
        dropout: dropout probability after the activation (default 0, i.e. off).

    Attributes ``linear1 = nn.Linear(D, d_ff)``, ``act = nn.GELU()`` (exact erf form, PyTorch's default),
    ``linear2 = nn.Linear(d_ff, D)``. Parameters: ``2 * D * d_ff + d_ff + D`` (``8 D^2 + 5 D`` at
    ``d_ff = 4 D``). ``forward(x (..., D)) -> (..., D)``, any dtype the weights have.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.act = nn.GELU()
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.linear1(x))  # (B, T, d_ff)
        return self.linear2(self.dropout(h))  # (B, T, D)


def swiglu_hidden_size(d_ff: int, multiple_of: int = 1) -> int:
    """Hidden width that makes :class:`SwiGLU` cost what a 2-matrix FFN of width ``d_ff`` costs.

    SwiGLU has three ``D x h`` matrices instead of two ``D x d_ff``, so ``3 D h = 2 D d_ff`` gives
    ``h = 2/3 * d_ff`` (Shazeer 2020, §2: "we reduce the number of hidden units ... by a factor of 2/3").
    The result is ``round(2 * d_ff / 3)``, then rounded *up* to a multiple of ``multiple_of`` (LLaMA uses
    256 for hardware efficiency). Weight counts match exactly when ``3`` divides ``2 * d_ff`` and
    ``multiple_of == 1``; biases (which SwiGLU does not have) are not part of the match.

    Raises:
        ValueError: if ``d_ff`` or ``multiple_of`` is not a positive int.
    """
    if d_ff < 1 or multiple_of < 1:
        raise ValueError(f"d_ff and multiple_of must be positive, got {d_ff}, {multiple_of}")
    h = round(2 * d_ff / 3)
    return multiple_of * -(-h // multiple_of)


class SwiGLU(nn.Module):
    """``down_proj(SiLU(gate_proj(x)) * up_proj(x))`` (Shazeer 2020, eq. 6; Swish_1 = SiLU), no biases.

    Args:
        d_model: model width ``D``.
        d_ff: hidden width ``h`` used as is; pass ``swiglu_hidden_size(4 * D)`` for a param-matched
            replacement of ``FeedForward(D, 4 * D)``.

    Attributes ``gate_proj, up_proj: nn.Linear(D, h, bias=False)``, ``down_proj: nn.Linear(h, D, bias=False)``
    (the names of Hugging Face's LLaMA). Parameters: ``3 * D * h``. ``forward(x (..., D)) -> (..., D)``.
    """

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.gate_proj = nn.Linear(d_model, d_ff, bias=False)
        self.up_proj = nn.Linear(d_model, d_ff, bias=False)
        self.down_proj = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.silu(self.gate_proj(x)) * self.up_proj(x)  # (B, T, h)
        return self.down_proj(h)  # (B, T, D)
