"""Stage 11's given code: the ablated models, the short runs that measure them, and the debugging lab's model
with swappable parts. Nothing here is an exercise answer (those are in :mod:`tinylm_solutions.debugging`).

- :class:`NoResidualBlock`: a Pre-LN block without its two residual connections, ``x = attn(norm1(x))``,
  ``x = ffn(norm2(x))`` (He et al. 2016 for why residuals let deep stacks train; Vaswani et al. 2017, §3.1).
- :func:`without_residuals`: a :class:`~tinylm_solutions.model.TinyLM` whose blocks are all such blocks.
- :func:`layer_grad_norms`: the L2 norm of each block's parameter gradients, first block first.
- :func:`lab_train`: a short AdamW loop that scores the model with the loss its own forward computes
  (``model(ids, labels=ids)``), so a broken loss or label shift inside the model shows in its history.
- :class:`LabTinyLM`: a TinyLM whose causal mask, attention function and loss are arguments.
- :func:`sequence_loss`: the mean next-token loss of a model on one sequence (the order test).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .attention import causal_mask, scaled_dot_product_attention
from .block import TransformerBlock
from .data import get_batch
from .model import TinyLM, causal_lm_loss
from .multihead import merge_heads, split_heads
from .trainer import train

#: The debugging lab's bug names: the learner names each bug with one of these (four are real, the rest
#: are plausible decoys). See :mod:`tinylm_solutions.debugging`.
BUG_NAMES = ("exp_overflow", "learning_rate_too_high", "missing_scale", "elementwise_scores",
             "softmax_over_queries", "mask_sees_future", "mask_hides_past", "labels_not_shifted",
             "labels_shifted_twice", "dropout_left_on")


class NoResidualBlock(TransformerBlock):
    """A Pre-LN :class:`~tinylm_solutions.block.TransformerBlock` with both residual connections removed.

    ``forward(x (B, T, D), mask=None) -> (B, T, D)``: ``x = attn(norm1(x))`` then ``x = ffn(norm2(x))``;
    the same parameters as the block it ablates.
    """

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self._attend(self.norm1(x), mask)  # (B, T, D): no "x +"
        return self.dropout(self.ffn(self.norm2(x)))  # (B, T, D)


def without_residuals(model: TinyLM) -> TinyLM:
    """Turn every block of ``model`` into a :class:`NoResidualBlock` (same parameters, same values), in place.

    Returns ``model``. Raises ValueError if a block is Post-LN (only Pre-LN blocks are ablated here)."""
    for block in model.blocks:
        if not block.norm_first:
            raise ValueError("without_residuals expects Pre-LN blocks (norm_first=True)")
        block.__class__ = NoResidualBlock  # the same module, another forward
    return model


class PartialBlock(TransformerBlock):
    """A Pre-LN :class:`~tinylm_solutions.block.TransformerBlock` in which a removed sub-layer is None and skipped:
    ``x = x + attn(norm1(x))`` when ``attn`` is set, then ``x = x + ffn(norm2(x))`` when ``ffn`` is set. A norm set to
    ``nn.Identity()`` is no normalisation. ``forward(x (B, T, D), mask=None) -> (B, T, D)``."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if self.attn is not None:
            x = x + self._attend(self.norm1(x), mask)  # (B, T, D)
        if self.ffn is not None:
            x = x + self.dropout(self.ffn(self.norm2(x)))  # (B, T, D)
        return x


PARTS = ("attention", "ffn", "residual", "norm")
"""What :func:`without` removes from every block (positions are removed by ``TinyLM(positions="none")``)."""


def without(model: TinyLM, part: str) -> TinyLM:
    """Remove ``part`` (one of :data:`PARTS`) from every block of the Pre-LN ``model``, in place, and return it.

    - ``"attention"``: the attention sub-layer and its norm (``attn = norm1 = None``): no token reads another;
    - ``"ffn"``: the feed-forward sub-layer and its norm (``ffn = norm2 = None``);
    - ``"residual"``: :func:`without_residuals`;
    - ``"norm"``: every LayerNorm, the final one too, becomes ``nn.Identity()``.

    The parts removed take their parameters with them (``get_num_params`` drops); nothing else changes.

    Raises:
        ValueError: ``part`` is not one of :data:`PARTS`, or a block is Post-LN.
    """
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}")
    if part == "residual":
        return without_residuals(model)
    for block in model.blocks:
        if not block.norm_first:
            raise ValueError("without expects Pre-LN blocks (norm_first=True)")
        block.__class__ = PartialBlock
        if part == "attention":
            block.attn = block.norm1 = None
        elif part == "ffn":
            block.ffn = block.norm2 = None
        else:
            block.norm1, block.norm2 = nn.Identity(), nn.Identity()
    if part == "norm":
        model.norm = nn.Identity()
    return model


def layer_grad_norms(model: TinyLM) -> list[float]:
    """L2 norm of the gradients of each block's parameters (block 0 first); 0.0 for a block without any."""
    norms = []
    for block in model.blocks:
        grads = [p.grad.detach().double().flatten() for p in block.parameters() if p.grad is not None]
        norms.append(float(torch.cat(grads).norm()) if grads else 0.0)
    return norms


FAST = dict(fast=True, fused=True)
"""How the ablations train: PyTorch's fused attention and fused AdamW (:func:`~tinylm_solutions.trainer.train`'s
``fast`` and ``fused``), the same updates up to rounding and about twice as fast at this size, where Python's
overhead is most of a step."""

SEEDS = (0, 1, 2)
"""Every ablation trains one model per seed: at this size one run's noise is as large as many effects, so a result
counts when it holds in every seed, by more than the spread between them."""


def unigram_loss(data: torch.Tensor, vocab_size: int) -> float:
    """The loss, in nats, of predicting every token by its frequency in ``data`` ``(N,)``: the entropy of the token
    frequencies. A model that learns nothing from the context ends here."""
    freq = torch.bincount(data, minlength=vocab_size).double() / len(data)  # (V,)
    freq = freq[freq > 0]
    return float(-(freq * freq.log()).sum())


def _mean_last(losses: list[float], n: int = 10) -> float:
    tail = losses[-n:]
    return sum(tail) / len(tail)


def residual_ablation(train_data: torch.Tensor, size: dict, *, steps: int, depths=(2, 8), seeds=SEEDS,
                      lr: float = 3e-3, grad_steps: int = 10) -> dict:
    """TinyLM with and without residual connections (:func:`without_residuals`) at each depth, one run per seed:
    AdamW at ``lr``, batch 16, no gradient clipping, the same batches for every model of a seed.

    Args:
        size: TinyLM's arguments but ``num_layers``. steps: training steps per run. grad_steps: the per-block
            gradient norms (:func:`layer_grad_norms`) are averaged over the first ``grad_steps`` steps.

    Returns:
        ``{"steps", "seeds", "runs": {"<L> layers, residual" | "<L> layers, no residual": {"final_loss": [one per
        seed: the mean training loss of the last 10 steps], "grad_norms": [one list per seed: block 0 first]}}}``.
    """
    runs = {}
    for layers in depths:
        for residual in (True, False):
            final, norms = [], []
            for seed in seeds:
                torch.manual_seed(seed)
                model = TinyLM(num_layers=layers, **size)
                if not residual:
                    without_residuals(model)
                seen = []

                def callback(step, record, model=model, seen=seen):
                    if step <= grad_steps:
                        seen.append(layer_grad_norms(model))

                hist = train(model, train_data, steps=steps, batch_size=16, lr=lr, max_grad_norm=None, seed=seed,
                             progress=False, callback=callback, **FAST)
                final.append(_mean_last(hist["loss"]))
                norms.append([sum(col) / len(col) for col in zip(*seen)])
            runs[f"{layers} layers, {'residual' if residual else 'no residual'}"] = {"final_loss": final,
                                                                                   "grad_norms": norms}
    return {"steps": steps, "seeds": list(seeds), "runs": runs}


def norm_placement_sweep(train_data: torch.Tensor, size: dict, *, steps: int, lrs, seeds=SEEDS, num_layers: int = 4,
                         warmup_lrs=(), warmup_steps: int | None = None) -> dict:
    """Pre-LN against Post-LN over learning rates, and Post-LN with a linear warm-up (Xiong et al. 2020) at
    ``warmup_lrs``: one run per seed and rate, AdamW, batch 16, no gradient clipping; everything else equal.

    Args:
        size: TinyLM's arguments but ``num_layers`` and ``norm_first``. warmup_steps: of the warm-up runs (default
            a quarter of ``steps``).

    Returns:
        ``{"steps", "seeds", "warmup_steps", "runs": {"Pre-LN" | "Post-LN" | "Post-LN, warm-up": {"lrs": [...],
        "final_loss": [per seed: [per rate: the mean training loss of the last 10 steps]], "curves": [per seed:
        [per rate: the training losses]]}}}`` (no warm-up entry without ``warmup_lrs``).
    """
    warmup_steps = steps // 4 if warmup_steps is None else warmup_steps
    runs = {}
    for name, norm_first, warmup, rates in (("Pre-LN", True, 0, lrs), ("Post-LN", False, 0, lrs),
                                            ("Post-LN, warm-up", False, warmup_steps, warmup_lrs)):
        if not rates:
            continue
        final, curves = [], []
        for seed in seeds:
            final.append([])
            curves.append([])
            for lr in rates:
                torch.manual_seed(seed)
                model = TinyLM(num_layers=num_layers, norm_first=norm_first, **size)
                hist = train(model, train_data, steps=steps, batch_size=16, lr=lr, max_grad_norm=None, seed=seed,
                             progress=False, warmup_steps=warmup, **FAST)
                final[-1].append(_mean_last(hist["loss"]))
                curves[-1].append(hist["loss"])
        runs[name] = {"lrs": list(rates), "final_loss": final, "curves": curves}
    return {"steps": steps, "seeds": list(seeds), "warmup_steps": warmup_steps, "runs": runs}


def order_test(train_data: torch.Tensor, val_data: torch.Tensor, size: dict, *, steps: int, seeds=SEEDS,
               num_layers: int = 2, lr: float = 1e-2, windows: int = 100) -> dict:
    """TinyLM with learned positions and without any, one run per seed; then each model's mean loss on ``windows``
    held-out windows as they are and reversed ("A B C D" against "D C B A", :func:`sequence_loss`).

    Returns:
        ``{"steps", "seeds", "unigram_loss", "runs": {"learned positions" | "no positions": {"forward": [per seed],
        "reversed": [per seed]}}}``; ``unigram_loss`` is the loss on the same windows of predicting each character by
        its frequency in ``train_data`` (the same in either order): held-out text is less like the training text than
        the training text itself, so this line sits higher than :func:`unigram_loss` of the training data.
    """
    T = size["max_seq_len"]
    chunks = [val_data[i: i + T] for i in range(0, windows * T, T)]  # windows x (T,)
    runs = {}
    for name, positions in (("learned positions", "learned"), ("no positions", "none")):
        forward, reversed_ = [], []
        for seed in seeds:
            torch.manual_seed(seed)
            model = TinyLM(num_layers=num_layers, positions=positions, **size)
            train(model, train_data, steps=steps, batch_size=16, lr=lr, seed=seed, progress=False, **FAST)
            forward.append(sum(sequence_loss(model, w) for w in chunks) / len(chunks))
            reversed_.append(sum(sequence_loss(model, w.flip(0)) for w in chunks) / len(chunks))
        runs[name] = {"forward": forward, "reversed": reversed_}
    freq = torch.bincount(train_data, minlength=size["vocab_size"]).double() / len(train_data)  # (V,)
    targets = torch.cat([w[1:] for w in chunks])  # what sequence_loss scores: every token but a window's first
    held_out = float(-freq[targets].clamp_min(1e-12).log().mean())
    return {"steps": steps, "seeds": list(seeds), "unigram_loss": held_out, "runs": runs}


class _LabAttention(nn.Module):
    """Multi-head attention whose core, ``attention_fn(q, k, v, mask) -> (out, weights)``, is an argument."""

    def __init__(self, attn: nn.Module, attention_fn):
        super().__init__()
        self.W_Q, self.W_K, self.W_V, self.W_O = attn.W_Q, attn.W_K, attn.W_V, attn.W_O
        self.num_heads, self.attention_fn = attn.num_heads, attention_fn

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        q = split_heads(self.W_Q(x), self.num_heads)  # (B, H, T, d_k)
        k = split_heads(self.W_K(x), self.num_heads)  # (B, H, T, d_k)
        v = split_heads(self.W_V(x), self.num_heads)  # (B, H, T, d_k)
        out, weights = self.attention_fn(q, k, v, mask)  # (B, H, T, d_k), (B, H, T, T)
        return self.W_O(merge_heads(out)), weights  # (B, T, D), (B, H, T, T)


class LabTinyLM(TinyLM):
    """A :class:`~tinylm_solutions.model.TinyLM` with three swappable parts, for the debugging lab.

    Args (besides TinyLM's):
        mask_fn: ``mask_fn(T) -> bool (T, T)``, True = may attend (default: the causal mask).
        attention_fn: ``attention_fn(q, k, v, mask) -> (out (B, H, T, d_k), weights (B, H, T, T))``
            (default: scaled dot-product attention).
        loss_fn: ``loss_fn(logits (B, T, V), labels (B, T)) -> scalar``, labels aligned with the inputs
            (default: the shifted next-token loss, :func:`~tinylm_solutions.model.causal_lm_loss`).

    ``forward(input_ids (B, T), labels=None) -> (logits (B, T, V), loss or None)``, as TinyLM's.
    """

    def __init__(self, *args, mask_fn=None, attention_fn=None, loss_fn=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.mask_fn = mask_fn or causal_mask
        self.loss_fn = loss_fn or causal_lm_loss
        for block in self.blocks:
            block.attn = _LabAttention(block.attn, attention_fn or scaled_dot_product_attention)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor | None = None):
        B, T = input_ids.shape
        if T > self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}; crop the input")
        x = self.token_emb(input_ids.long())  # (B, T, D)
        if self.pos_emb is not None:
            x = x + self.pos_emb(torch.arange(T, device=input_ids.device))  # (B, T, D)
        mask = self.mask_fn(T)  # (T, T)
        for block in self.blocks:
            x = block(x, mask)  # (B, T, D)
        logits = self.lm_head(self.norm(x))  # (B, T, V)
        loss = None if labels is None else self.loss_fn(logits, labels.long())
        return logits, loss


def lab_train(model: nn.Module, data: torch.Tensor, *, steps: int, batch_size: int = 16, lr: float = 3e-3,
              seed: int = 0, max_grad_norm: float | None = None) -> dict[str, list[float]]:
    """Train ``model`` with AdamW on random windows of ``data`` scored by the model's own loss.

    Each step draws ``batch_size`` windows of ``model.max_seq_len`` tokens (``get_batch`` with a generator
    seeded by ``seed``) and minimises ``model(ids, labels=ids)[1]``. A non-finite loss ends the run early.

    Returns ``{"step": [...], "loss": [...]}`` (floats; the last loss may be nan or inf).
    """
    gen = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    hist = {"step": [], "loss": []}
    model.train()
    for step in range(1, steps + 1):
        ids, _ = get_batch(data, batch_size, model.max_seq_len, gen)  # (B, T)
        optimizer.zero_grad(set_to_none=True)
        loss = model(ids, labels=ids)[1]
        hist["step"].append(step)
        hist["loss"].append(loss.item())
        if not math.isfinite(hist["loss"][-1]):
            break
        loss.backward()
        if max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
    return hist


@torch.no_grad()
def sequence_loss(model: nn.Module, ids: torch.Tensor) -> float:
    """Mean next-token cross-entropy of ``model`` on the ``(T,)`` token sequence ``ids`` (eval mode, restored)."""
    was_training = model.training
    model.eval()
    try:
        logits = model(ids[None, :])[0]  # (1, T, V)
        return float(F.cross_entropy(logits[0, :-1], ids[1:].long()))
    finally:
        model.train(was_training)
