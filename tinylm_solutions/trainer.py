"""The training loop: AdamW on random batches with a tqdm bar, periodic evaluation and a history.

Given code from stage 09 on (stage 09's own notebook writes its loop by hand): the command line
(:mod:`tinylm_solutions.cli`), the benchmarks and the ablations of stage 11 use it.

Optional, off by default (the defaults train as before): nanoGPT's recipe of a linear warmup then a cosine
decay of the learning rate to ``min_lr`` (:func:`lr_at`; Loshchilov & Hutter 2017, "SGDR"; nanoGPT's
``get_lr``), AdamW betas and weight decay on the 2-D weights only (:func:`make_optimizer`, as nanoGPT's
``configure_optimizers``), and the fused attention path for training (:func:`fast_attention`).
"""
from __future__ import annotations

import math
import time
from contextlib import contextmanager

import torch
from tqdm.auto import tqdm

from .data import get_batch
from .multihead import MultiHeadSelfAttention
from .norm import LayerNorm
from .train import evaluate, train_step


def lr_at(done: int, lr: float, warmup_steps: int = 0, min_lr: float | None = None,
          decay_steps: int | None = None) -> float:
    """The learning rate of the step that follows ``done`` finished steps (nanoGPT's ``get_lr(done)``).

    - warmup, ``done < warmup_steps``: ``lr * (done + 1) / (warmup_steps + 1)``;
    - then, if ``min_lr`` is given, cosine decay: ``min_lr + (lr - min_lr) * (1 + cos(pi * r)) / 2`` with
      ``r = (done - warmup_steps) / (decay_steps - warmup_steps)``, and ``min_lr`` once ``done > decay_steps``;
    - otherwise ``lr`` (constant).

    Args:
        done: steps already taken (0 for the first step), an int >= 0.
        lr: peak learning rate; warmup_steps: length of the linear warmup;
        min_lr: the floor of the cosine decay (None: no decay); decay_steps: where the decay reaches
            ``min_lr`` (counted from step 0, warmup included; needed with ``min_lr``).

    Raises:
        ValueError: ``done`` or ``warmup_steps`` negative, or ``min_lr`` given without ``decay_steps >
            warmup_steps``.
    """
    if done < 0 or warmup_steps < 0:
        raise ValueError(f"done and warmup_steps must be >= 0, got {done} and {warmup_steps}")
    if min_lr is not None and (decay_steps is None or decay_steps <= warmup_steps):
        raise ValueError(f"a cosine decay to min_lr needs decay_steps > warmup_steps={warmup_steps}, got {decay_steps}")
    if done < warmup_steps:
        return lr * (done + 1) / (warmup_steps + 1)
    if min_lr is None:
        return lr
    if done > decay_steps:
        return min_lr
    ratio = (done - warmup_steps) / (decay_steps - warmup_steps)  # 0 .. 1
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def make_optimizer(model: torch.nn.Module, lr: float, betas: tuple[float, float] = (0.9, 0.999),
                   weight_decay: float = 0.01, decay_2d_only: bool = False,
                   fused: bool = False) -> torch.optim.AdamW:
    """AdamW over ``model``'s trainable parameters (Loshchilov & Hutter 2019; ``torch.optim.AdamW``).

    The defaults are ``torch.optim.AdamW``'s (decay 0.01 on every parameter). With ``decay_2d_only``, only
    the parameters with 2 or more dimensions (the matrices of the linear layers and the embeddings) are
    decayed; biases and LayerNorm gains are not (nanoGPT's ``configure_optimizers``). A tied weight is one
    parameter and is counted once. ``fused``: PyTorch's fused AdamW kernel (the same update in one pass over
    all parameters, equal up to rounding; faster than the default per-tensor loop on CPU).
    """
    params = [p for p in model.parameters() if p.requires_grad]
    fused = {"fused": True} if fused else {}
    if not decay_2d_only:
        return torch.optim.AdamW(params, lr=lr, betas=betas, weight_decay=weight_decay, **fused)
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=betas, **fused)


@contextmanager
def fast_attention(model: torch.nn.Module, enabled: bool = True):
    """Within the block, every :class:`~tinylm_solutions.multihead.MultiHeadSelfAttention` of ``model`` takes
    the fused path (``need_weights = False``: no attention weights are formed or kept) and every
    :class:`~tinylm_solutions.norm.LayerNorm` computes with ``F.layer_norm`` (``fused = True``); afterwards each
    layer's setting is restored, so the taught path and ``get_attention_weights()`` are back.
    ``enabled=False`` changes nothing.
    """
    switches = [(m, "need_weights", False) for m in model.modules() if isinstance(m, MultiHeadSelfAttention)]
    switches += [(m, "fused", True) for m in model.modules() if isinstance(m, LayerNorm)]
    switches = switches if enabled else []
    saved = [getattr(m, attr) for m, attr, _ in switches]
    for m, attr, value in switches:
        setattr(m, attr, value)
    try:
        yield model
    finally:
        for (m, attr, _), value in zip(switches, saved):
            setattr(m, attr, value)


def peak_memory_mb(model: torch.nn.Module | None = None) -> float:
    """The peak memory so far, in MB: ``torch.cuda.max_memory_allocated`` when ``model`` is on a GPU, else the
    process's peak resident set size (``ru_maxrss``: KB on Linux, bytes on macOS; on Windows, which has no
    :mod:`resource`, the peak working set from psutil, which IPython installs; NaN where neither is there). The
    notebooks' own is ``tinylm_checks.peak_memory_mb``."""
    device = next(model.parameters()).device if model is not None else torch.device("cpu")
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2 ** 20
    try:
        import resource
    except ImportError:
        try:
            import psutil
        except ImportError:
            return float("nan")
        memory = psutil.Process().memory_info()
        return getattr(memory, "peak_wset", memory.rss) / 2 ** 20
    import sys
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)


def train(model: torch.nn.Module, train_data: torch.Tensor, val_data: torch.Tensor | None = None, *,
          steps: int = 300, batch_size: int = 16, block_size: int | None = None, lr: float = 3e-3,
          max_grad_norm: float | None = 1.0, eval_interval: int = 100, eval_batches: int | None = 20,
          seed: int = 0, progress: bool = True, callback=None, optimizer: torch.optim.Optimizer | None = None,
          generator: torch.Generator | None = None, start_step: int = 0,
          history: dict[str, list] | None = None, shard: tuple[int, int] = (0, 1), warmup_steps: int = 0,
          min_lr: float | None = None, lr_decay_steps: int | None = None,
          betas: tuple[float, float] = (0.9, 0.999), weight_decay: float = 0.01, decay_2d_only: bool = False,
          fused: bool = False, fast: bool = False) -> dict[str, list]:
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
            ``rank::world_size``, so that the averaged gradients are those of the global batch; the recorded
            loss is averaged over the processes too (the global batch's).
        warmup_steps, min_lr, lr_decay_steps: the learning-rate schedule, :func:`lr_at` with
            ``decay_steps = lr_decay_steps or steps``: step ``s`` (1-based) uses ``lr_at(s - 1, lr, ...)``, set
            on every parameter group of the optimizer (a given one too). Default: constant ``lr``, and the
            optimizer's rates are left alone.
        betas, weight_decay, decay_2d_only, fused: of the new AdamW (:func:`make_optimizer`; ignored when
            ``optimizer`` is given). Defaults: ``torch.optim.AdamW``'s.
        fast: train (and evaluate) with the fused attention path (:func:`fast_attention`); the model's
            setting is restored at the end.

    Returns:
        History ``{"step", "loss", "grad_norm", "tokens_per_s", "lr", "peak_memory_mb", "activation_rms",
        "val_step", "val_loss"}`` (lists, one entry per step but for the validation ones): the learning rate of the
        step, the peak memory so far (:func:`peak_memory_mb`), and the RMS of each block's output in the step's
        forward (a list per step, block 0 first; empty for a model without ``blocks``). The record passed to
        ``callback`` has the step's values of these keys.
    """
    block_size = block_size or model.max_seq_len
    gen = generator if generator is not None else torch.Generator().manual_seed(seed)
    optimizer = optimizer if optimizer is not None else make_optimizer(model, lr, betas, weight_decay, decay_2d_only,
                                                                              fused)
    decay_steps = lr_decay_steps or steps
    schedule = warmup_steps > 0 or min_lr is not None  # else the optimizer's rates are left alone
    hist = history if history is not None else \
        {"step": [], "loss": [], "grad_norm": [], "tokens_per_s": [], "lr": [], "peak_memory_mb": [],
         "activation_rms": [], "val_step": [], "val_loss": []}
    for key in ("lr", "peak_memory_mb", "activation_rms"):  # a history saved before these were kept
        hist.setdefault(key, [])
    rms: list[float] = []  # this step's RMS of each block's output (the residual stream), block 0 first

    def record_rms(module, inputs, output):
        if module.training:  # training forwards only, not evaluations
            rms.append(float(output.detach().float().pow(2).mean().sqrt()))

    blocks = getattr(model, "blocks", None) or getattr(getattr(model, "module", None), "blocks", None) or []
    hooks = [block.register_forward_hook(record_rms) for block in blocks]
    bar = tqdm(range(start_step + 1, steps + 1), initial=start_step, total=steps, disable=not progress,
               desc="train")
    try:
        with fast_attention(model, fast):  # the taught path is restored afterwards
            for step in bar:
                rms.clear()
                t0 = time.perf_counter()
                if schedule:
                    for group in optimizer.param_groups:
                        group["lr"] = lr_at(step - 1, lr, warmup_steps, min_lr, decay_steps)
                x, y = get_batch(train_data, batch_size, block_size, gen)  # (batch_size, T) each
                rank, world = shard
                record = train_step(model, (x[rank::world], y[rank::world]), optimizer, max_grad_norm)
                if world > 1:  # each rank's loss is its half's mean: the global batch's is their average
                    loss = torch.tensor([record["loss"]])
                    torch.distributed.all_reduce(loss)
                    record["loss"] = loss.item() / world
                record["tokens_per_s"] = batch_size * block_size / (time.perf_counter() - t0)
                record["lr"] = optimizer.param_groups[0]["lr"]
                record["peak_memory_mb"] = peak_memory_mb(model)
                record["activation_rms"] = list(rms)
                for key in ("loss", "grad_norm", "tokens_per_s", "lr", "peak_memory_mb", "activation_rms"):
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
    finally:
        for hook in hooks:
            hook.remove()
    return hist
