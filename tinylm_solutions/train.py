"""Training utilities and a small CPU trainer with a CLI (``tinylm-train``, or ``python -m tinylm_solutions.train``).

Loss: next-token cross-entropy; perplexity = exp(mean loss) (Jurafsky & Martin, SLP3 §3.2.1). Optimizer:
AdamW (Loshchilov & Hutter 2019, ``torch.optim.AdamW``). Gradient clipping: ``torch.nn.utils.clip_grad_norm_``
on the global L2 norm (Pascanu et al. 2013).

A batch is either ``(x, y)`` from :func:`~tinylm_solutions.data.get_batch` (``y`` already shifted: scored
position by position, no second shift) or a single ``(B, T)`` tensor used as Hugging Face-style
``input_ids = labels`` (the model shifts).
"""
from __future__ import annotations

import argparse
import math
import time

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from .data import default_corpus, get_batch, lm_batches, train_val_split
from .generate import generate
from .model import TinyLM
from .tokenizer import CharTokenizer, WordTokenizer


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
          seed: int = 0, progress: bool = True, callback=None) -> dict[str, list]:
    """Train with AdamW on random batches, reporting loss, grad norm and tokens/s on a tqdm bar.

    Args:
        train_data, val_data: ``(N,)`` token ids (``val_data`` optional).
        steps, batch_size, lr, max_grad_norm: the usual; block_size defaults to ``model.max_seq_len``.
        eval_interval: evaluate ``val_data`` every this many steps and after the last one.
        eval_batches: cap on validation batches per evaluation.
        seed: seeds the batch sampler (a private ``torch.Generator``; the global RNG is not touched).
        progress: show the tqdm bar.
        callback: optional ``callback(step, record)`` after every step (e.g. a live loss plot).

    Returns:
        History ``{"step", "loss", "grad_norm", "tokens_per_s", "val_step", "val_loss"}`` (lists).
    """
    block_size = block_size or model.max_seq_len
    gen = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    hist = {"step": [], "loss": [], "grad_norm": [], "tokens_per_s": [], "val_step": [], "val_loss": []}
    bar = tqdm(range(1, steps + 1), disable=not progress, desc="train")
    for step in bar:
        t0 = time.perf_counter()
        record = train_step(model, get_batch(train_data, batch_size, block_size, gen), optimizer, max_grad_norm)
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


def main(argv: list[str] | None = None) -> int:
    """CLI: train a TinyLM on :func:`~tinylm_solutions.data.default_corpus` and print a sample."""
    p = argparse.ArgumentParser(prog="tinylm-train", description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--block-size", type=int, default=64, help="context length = max_seq_len")
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--num-heads", type=int, default=4)
    p.add_argument("--num-layers", type=int, default=2)
    p.add_argument("--d-ff", type=int, default=None, help="default: 4 * d_model")
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--max-grad-norm", type=float, default=1.0)
    p.add_argument("--eval-interval", type=int, default=100)
    p.add_argument("--tokenizer", choices=("char", "word"), default="char")
    p.add_argument("--max-chars", type=int, default=None, help="truncate the corpus")
    p.add_argument("--sample-tokens", type=int, default=200)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--top-k", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default=None, help="write {'config', 'state_dict'} here with torch.save")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)

    text = default_corpus(max_chars=args.max_chars)
    tok = CharTokenizer(text) if args.tokenizer == "char" else WordTokenizer(text, min_freq=2)
    data = torch.tensor(tok.encode(text), dtype=torch.long)  # (N,)
    train_data, val_data = train_val_split(data, 0.1)
    torch.manual_seed(args.seed)
    model = TinyLM(tok.vocab_size, args.block_size, args.d_model, args.num_heads, args.num_layers,
                   args.d_ff or 4 * args.d_model, dropout=args.dropout)
    print(f"corpus: {len(text):,} chars -> {len(data):,} tokens, vocab {tok.vocab_size}; "
          f"model: {model.get_num_params(non_embedding=False):,} parameters")
    hist = train(model, train_data, val_data, steps=args.steps, batch_size=args.batch_size,
                 block_size=args.block_size, lr=args.lr, max_grad_norm=args.max_grad_norm,
                 eval_interval=args.eval_interval, seed=args.seed, progress=not args.no_progress)
    val = hist["val_loss"][-1]
    print(f"step {args.steps}: train loss {hist['loss'][-1]:.4f}, val loss {val:.4f}, "
          f"val perplexity {perplexity(val):.2f}")
    if args.save:
        torch.save({"config": model.config, "state_dict": model.state_dict()}, args.save)
    if args.sample_tokens > 0:
        prompt = data[:1].view(1, 1)  # (1, 1)
        gen = torch.Generator().manual_seed(args.seed)
        out = generate(model, prompt, args.sample_tokens, args.temperature, args.top_k, generator=gen)
        print("sample:\n" + tok.decode(out[0].tolist()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
