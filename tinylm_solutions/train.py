"""Stage 09's answers: the loss of a batch, one training step, evaluation, perplexity. The training loop that
uses them is :mod:`tinylm_solutions.trainer`; the command line, :mod:`tinylm_solutions.cli` (``tinylm-train``,
or ``torchrun ... -m tinylm_solutions.cli``).

Loss: next-token cross-entropy; perplexity = exp(mean loss) (Jurafsky & Martin, SLP3 §3.2.1). Optimizer:
AdamW (Loshchilov & Hutter 2019, ``torch.optim.AdamW``). Gradient clipping: ``torch.nn.utils.clip_grad_norm_``
on the global L2 norm (Pascanu et al. 2013).

A batch is either ``(x, y)`` from :func:`~tinylm_solutions.data.get_batch` (``y`` already shifted: scored
position by position, no second shift) or a single ``(B, T)`` tensor used as Hugging Face-style
``input_ids = labels`` (the model shifts).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from .data import lm_batches


def batch_loss(model: torch.nn.Module, batch) -> torch.Tensor:
    """Mean next-token cross-entropy of ``model`` on ``batch`` (see the module docstring for the two forms)."""
    if isinstance(batch, torch.Tensor):
        return model(batch, labels=batch)[1]
    x, y = batch  # (B, T), (B, T) with y[:, t] = next token after x[:, t]
    logits = model(x)[0]  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), ignore_index=-100)


def train_step(model: torch.nn.Module, batch, optimizer: torch.optim.Optimizer,
               max_grad_norm: float | None = 1.0) -> dict[str, float]:
    """One optimization step: train mode, zero grads, loss, backward, clip, step (in that order).

    Args:
        model: a :class:`~tinylm_solutions.model.TinyLM` (or anything with its forward signature).
        batch: ``(x, y)`` or ``input_ids``, see :func:`batch_loss`.
        optimizer: over ``model``'s parameters.
        max_grad_norm: clip the global gradient L2 norm to this value (None: no clipping).

    Returns:
        ``{"loss": float, "grad_norm": float}``; ``grad_norm`` is the norm *before* clipping.
    """
    model.train()
    optimizer.zero_grad(set_to_none=True)
    loss = batch_loss(model, batch)
    loss.backward()
    params = [p for p in model.parameters() if p.grad is not None]
    grad_norm = torch.nn.utils.clip_grad_norm_(params, max_grad_norm if max_grad_norm is not None else math.inf)
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": grad_norm.item()}


def evaluate(model: torch.nn.Module, data, batch_size: int = 32, block_size: int | None = None,
             max_batches: int | None = None) -> float:
    """Mean next-token loss per counted target token, in eval mode under ``torch.no_grad()``.

    Args:
        model: forward ``model(x) -> (logits (B, T, V), ...)``.
        data: ``(N,)`` token ids, cut into the non-overlapping windows of
            :func:`~tinylm_solutions.data.lm_batches` (``block_size`` defaults to ``model.max_seq_len``);
            or an iterable of ``(x (B, T), y (B, T))`` batches, whose targets may be ``-100`` (not counted).
        max_batches: stop after this many batches (None: all).

    Returns:
        ``total loss / counted tokens`` (float): the sum of every counted target's cross-entropy divided
        by how many targets are not ``-100``, so batches of different sizes weigh by their tokens, not
        one batch one vote. ``perplexity(evaluate(...))`` is then the corpus perplexity. The model's
        train/eval mode is restored afterwards, whatever it was.

    Raises:
        ValueError: if no target is counted.
    """
    if isinstance(data, torch.Tensor):
        data = lm_batches(data, batch_size, block_size or model.max_seq_len)
    was_training = model.training
    model.eval()  # dropout off
    total, n_tokens = 0.0, 0
    try:
        with torch.no_grad():  # no graph: evaluation never calls backward
            for i, batch in enumerate(data):
                if max_batches is not None and i >= max_batches:
                    break
                x, y = batch  # (B, T), (B, T)
                logits = model(x)[0]  # (B, T, V)
                total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1),
                                         ignore_index=-100, reduction="sum").item()
                n_tokens += int((y != -100).sum())
    finally:
        model.train(was_training)
    if n_tokens == 0:
        raise ValueError("evaluate counted no target token (every target is -100, or there is no batch)")
    return total / n_tokens


def perplexity(loss: float | torch.Tensor) -> float:
    """``exp(loss)`` for a mean cross-entropy in nats (natural log, as ``F.cross_entropy``): the effective
    number of equally likely next tokens (Jurafsky & Martin, SLP3 §3.2.1). ``perplexity(log(V)) == V``.

    Raises:
        ValueError: if ``loss`` is not a finite number >= 0 (a 0-dim tensor is accepted).
    """
    value = float(loss)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"perplexity needs a mean cross-entropy, a finite number >= 0, got {value}")
    return math.exp(value)
