"""Stage 09's answers: the loss of a batch, one training step, evaluation, perplexity. The training loop that
uses them is :mod:`tinylm_solutions.trainer`; the command line, :mod:`tinylm_solutions.cli` (``tinylm-train``,
or ``torchrun ... -m tinylm_solutions.train`` through this module's ``__main__``).

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
    """One optimization step: train mode, zero grads, loss, backward, clip, step.

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


@torch.no_grad()
def evaluate(model: torch.nn.Module, data: torch.Tensor, batch_size: int = 32, block_size: int | None = None,
             max_batches: int | None = None) -> float:
    """Mean next-token loss over the non-overlapping windows of ``data`` (:func:`~tinylm_solutions.data.lm_batches`).

    Args:
        data: ``(N,)`` token ids; block_size: window length (default ``model.max_seq_len``);
        max_batches: stop after this many batches (None: all).

    Returns:
        Token-weighted mean loss (float). Runs in eval mode under ``no_grad`` and restores the mode.
    """
    block_size = block_size or model.max_seq_len
    was_training = model.training
    model.eval()
    total, n_tokens = 0.0, 0
    try:
        for i, batch in enumerate(lm_batches(data, batch_size, block_size)):
            if max_batches is not None and i >= max_batches:
                break
            total += batch_loss(model, batch).item() * batch[1].numel()
            n_tokens += batch[1].numel()
    finally:
        model.train(was_training)
    return total / n_tokens


def perplexity(loss: float | torch.Tensor) -> float:
    """``exp(loss)`` for a mean cross-entropy in nats: the effective number of equally likely next tokens."""
    return math.exp(float(loss))


if __name__ == "__main__":  # python -m tinylm_solutions.train, or torchrun ... -m tinylm_solutions.train
    from .cli import train_main
    raise SystemExit(train_main())
