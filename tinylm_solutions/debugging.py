"""Stage 11's answers: the debugging lab. Four broken parts of a language model, each named and fixed.

| symptom | bug (its name in :data:`BUG_NAMES`) | the fix here |
|---|---|---|
| the loss becomes NaN | ``exp_overflow``: softmax as ``exp(z) / sum(exp(z))`` overflows for logits above ~88 (float32) | :func:`stable_cross_entropy` |
| every attention row is uniform | ``elementwise_scores``: ``(q * k).sum(-1)`` gives one score per query, the same for every key | :func:`fixed_attention` |
| suspiciously low loss, poor samples | ``mask_sees_future``: ``tril(diagonal=1)`` lets position t see token t+1 | :func:`fixed_causal_mask` |
| loss near 0 at once, samples repeat one token | ``labels_not_shifted``: logits at t are scored against token t itself | :func:`fixed_lm_loss` |

Sources: log-sum-exp trick (Goodfellow et al. 2016, *Deep Learning* §4.1; ``torch.logsumexp``); scaled
dot-product attention (Vaswani et al. 2017, §3.2.1); causal mask and next-token loss (Radford et al. 2018;
``torch.tril``; the label shift of Hugging Face's causal LMs).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .ablations import BUG_NAMES  # noqa: F401 - the names the answers are chosen from

IGNORE_INDEX = -100


#: The right name for each symptom of the lab.
ANSWERS = {"nan_loss": "exp_overflow", "uniform_attention": "elementwise_scores",
           "low_loss_poor_samples": "mask_sees_future", "copying_loss": "labels_not_shifted"}


def nan_loss_bug() -> str:
    """The name (one of :data:`BUG_NAMES`) of the bug behind the NaN loss."""
    return "exp_overflow"


def uniform_attention_bug() -> str:
    """The name of the bug behind the uniform attention."""
    return "elementwise_scores"


def future_mask_bug() -> str:
    """The name of the bug behind the suspiciously low loss and poor samples."""
    return "mask_sees_future"


def unshifted_labels_bug() -> str:
    """The name of the bug behind a loss that falls to ~0 while samples repeat one token."""
    return "labels_not_shifted"


def stable_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy ``-log softmax(logits)[target]``, finite for logits of any size.

    Args:
        logits: ``(N, V)`` float; targets: ``(N,)`` integer class ids in ``[0, V)``.

    Returns:
        A scalar tensor of the logits' dtype, ``mean_n (logsumexp(logits[n]) - logits[n, targets[n]])``;
        subtracting the row maximum first keeps every ``exp`` in ``(0, 1]`` (the log-sum-exp trick),
        so it equals ``F.cross_entropy(logits, targets)``.

    Raises:
        ValueError: if the shapes are not ``(N, V)`` and ``(N,)``.
    """
    if logits.dim() != 2 or targets.shape != logits.shape[:1]:
        raise ValueError(f"expected logits (N, V) and targets (N,), got {tuple(logits.shape)} and "
                         f"{tuple(targets.shape)}")
    m = logits.max(dim=-1, keepdim=True).values.detach()  # (N, 1): any constant works; no gradient needed
    log_z = m.squeeze(-1) + (logits - m).exp().sum(dim=-1).log()  # (N,): logsumexp of each row
    target_logit = logits.gather(-1, targets.long()[:, None]).squeeze(-1)  # (N,)
    return (log_z - target_logit).mean()


def fixed_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None):
    """Scaled dot-product attention, ``softmax(q k^T / sqrt(d_k)) v`` (Vaswani et al. 2017, eq. 1).

    Args:
        q: ``(..., T_q, d_k)``; k: ``(..., T_k, d_k)``; v: ``(..., T_k, d_v)``;
        mask: optional bool, broadcastable to ``(..., T_q, T_k)``, True = may attend.

    Returns:
        ``(out (..., T_q, d_v), weights (..., T_q, T_k))``; each row of ``weights`` sums to 1.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (..., T_q, T_k): one score per (query, key)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # (..., T_q, T_k)
    weights = torch.softmax(scores, dim=-1)  # (..., T_q, T_k)
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


def fixed_causal_mask(T: int) -> torch.Tensor:
    """The causal mask: ``(T, T)`` bool, True on and below the diagonal (position t sees 0..t).

    Raises:
        ValueError: if ``T`` is not a positive int.
    """
    if not isinstance(T, int) or T < 1:
        raise ValueError(f"T must be a positive int, got {T!r}")
    return torch.ones(T, T, dtype=torch.bool).tril()  # (T, T)


def fixed_lm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Next-token loss: ``logits[:, t]`` scored against ``labels[:, t + 1]``; labels ``-100`` ignored.

    Args:
        logits: ``(B, T, V)`` float; labels: ``(B, T)`` long, aligned with the inputs (``labels = input_ids``).

    Returns:
        The mean cross-entropy over the ``B * (T - 1)`` shifted targets that are not ``-100``.

    Raises:
        ValueError: if the shapes are not ``(B, T, V)`` and ``(B, T)``.
    """
    if logits.dim() != 3 or labels.shape != logits.shape[:2]:
        raise ValueError(f"expected logits (B, T, V) and labels (B, T), got {tuple(logits.shape)} and "
                         f"{tuple(labels.shape)}")
    logits, targets = logits[:, :-1], labels[:, 1:]  # (B, T-1, V), (B, T-1)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1).long(),
                           ignore_index=IGNORE_INDEX)
