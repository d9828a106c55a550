"""Training utilities: the loss of a batch, one training step, evaluation, perplexity, and a training loop
(the command line that drives it is :mod:`tinylm_solutions.cli`, ``tinylm-train``).

Loss: next-token cross-entropy; perplexity = exp(mean loss) (Jurafsky & Martin, SLP3 §3.2.1). Optimizer:
AdamW (Loshchilov & Hutter 2019, ``torch.optim.AdamW``). Gradient clipping: ``torch.nn.utils.clip_grad_norm_``
on the global L2 norm (Pascanu et al. 2013).

A batch is either ``(x, y)`` from :func:`~tinylm_solutions.data.get_batch` (``y`` already shifted: scored
position by position, no second shift) or a single ``(B, T)`` tensor used as Hugging Face-style
``input_ids = labels`` (the model shifts).
"""
from __future__ import annotations

import math
import time

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from .data import get_batch, lm_batches


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


def train(model: torch.nn.Module, train_data: torch.Tensor, val_data: torch.Tensor | None = None, *,
          steps: int = 300, batch_size: int = 16, block_size: int | None = None, lr: float = 3e-3,
          max_grad_norm: float | None = 1.0, eval_interval: int = 100, eval_batches: int | None = 20,
          seed: int = 0, progress: bool = True, callback=None, optimizer: torch.optim.Optimizer | None = None,
          generator: torch.Generator | None = None, start_step: int = 0,
          history: dict[str, list] | None = None, shard: tuple[int, int] = (0, 1)) -> dict[str, list]:
    """Train with AdamW on random batches, reporting loss, grad norm and tokens/s on a tqdm bar.

    Args:
        train_data, val_data: ``(N,)`` token ids (``val_data`` optional).
        steps, batch_size, lr, max_grad_norm: the usual; block_size defaults to ``model.max_seq_len``.
        eval_interval: evaluate ``val_data`` every this many steps and after the last one.
        eval_batches: cap on validation batches per evaluation.
        seed: seeds the batch sampler (a private ``torch.Generator``; the global RNG is not touched).
        progress: show the tqdm bar.
        callback: optional ``callback(step, record)`` after every step (e.g. a live loss plot, a checkpoint).
        optimizer, generator, start_step, history: to continue a run that stopped after ``start_step`` steps
            (its optimizer, its batch sampler's generator and its history, restored): the same batches
            follow as if it had not stopped. By default a new AdamW, a generator seeded with ``seed``, step 0.
        shard: ``(rank, world_size)`` of a data-parallel run (``model`` wrapped in DistributedDataParallel):
            every process draws the same global batch of ``batch_size`` rows and trains on rows
            ``rank::world_size``, so that the averaged gradients are those of the global batch.

    Returns:
        History ``{"step", "loss", "grad_norm", "tokens_per_s", "val_step", "val_loss"}`` (lists).
    """
    block_size = block_size or model.max_seq_len
    gen = generator if generator is not None else torch.Generator().manual_seed(seed)
    optimizer = optimizer if optimizer is not None else torch.optim.AdamW(model.parameters(), lr=lr)
    hist = history if history is not None else \
        {"step": [], "loss": [], "grad_norm": [], "tokens_per_s": [], "val_step": [], "val_loss": []}
    bar = tqdm(range(start_step + 1, steps + 1), initial=start_step, total=steps, disable=not progress,
               desc="train")
    for step in bar:
        t0 = time.perf_counter()
        x, y = get_batch(train_data, batch_size, block_size, gen)  # (batch_size, T) each
        rank, world = shard
        record = train_step(model, (x[rank::world], y[rank::world]), optimizer, max_grad_norm)
        record["tokens_per_s"] = batch_size * block_size / (time.perf_counter() - t0)
        for key in ("loss", "grad_norm", "tokens_per_s"):
            hist[key].append(record[key])
        hist["step"].append(step)
        if val_data is not None and (step % eval_interval == 0 or step == steps):
            record["val_loss"] = evaluate(model, val_data, batch_size, block_size, eval_batches)
            hist["val_step"].append(step)
            hist["val_loss"].append(record["val_loss"])
        bar.set_postfix(loss=f"{record['loss']:.3f}", gnorm=f"{record['grad_norm']:.2f}",
                        tok_s=f"{record['tokens_per_s']:.0f}")
        if callback is not None:
            callback(step, record)
    return hist


if __name__ == "__main__":  # python -m tinylm_solutions.train, or torchrun ... -m tinylm_solutions.train
    from .cli import train_main
    raise SystemExit(train_main())
