"""The training loop: AdamW on random batches with a tqdm bar, periodic evaluation and a history.

Given code from stage 09 on (stage 09's own notebook writes its loop by hand): the command line
(:mod:`tinylm_solutions.cli`), the benchmarks and the ablations of stage 11 use it.
"""
from __future__ import annotations

import time

import torch
from tqdm.auto import tqdm

from .data import get_batch
from .train import evaluate, train_step


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
