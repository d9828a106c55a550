"""Autoregressive sampling with temperature and top-k (as nanoGPT's ``GPT.generate``).

Temperature divides the logits before the softmax (Hinton et al. 2015; Ackley et al. 1985); top-k keeps the
``k`` most likely tokens (Fan et al. 2018, "Hierarchical Neural Story Generation", §5.4).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


@torch.no_grad()
def generate(model: torch.nn.Module, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
    """Append ``max_new_tokens`` tokens to each row of ``idx``, one at a time.

    At each step the context is cropped to the last ``model.max_seq_len`` tokens, the model's logits at the
    last position are divided by ``temperature``, all but the ``top_k`` largest are set to ``-inf``, and a
    token is drawn from the softmax (``torch.multinomial`` with ``generator``).

    Args:
        model: returns ``(logits (B, T, V), ...)`` from ``model(idx)``; must have ``max_seq_len``.
        idx: ``(B, T)`` long prompt, ``T >= 1``.
        max_new_tokens: number of tokens to add (``>= 0``).
        temperature: ``> 0`` to sample; ``0`` means greedy decoding (argmax, ``top_k`` irrelevant).
        top_k: keep only the ``k`` most likely tokens (None: all). ``top_k=1`` is greedy.
        generator: optional ``torch.Generator`` for reproducible sampling.

    Returns:
        ``(B, T + max_new_tokens)`` long tensor, starting with ``idx``. Runs under ``no_grad`` in eval mode
        and restores the model's train/eval mode afterwards.

    Raises:
        ValueError: if ``idx`` is not 2-D with ``T >= 1``, ``max_new_tokens < 0``, ``temperature < 0`` or
            ``top_k < 1``.
    """
    if idx.dim() != 2 or idx.size(1) == 0:
        raise ValueError(f"idx must be a (B, T) tensor with T >= 1, got shape {tuple(idx.shape)}")
    if max_new_tokens < 0 or temperature < 0 or (top_k is not None and top_k < 1):
        raise ValueError(f"need max_new_tokens >= 0, temperature >= 0, top_k >= 1; got "
                         f"{max_new_tokens}, {temperature}, {top_k}")
    was_training = model.training
    model.eval()
    try:
        for _ in range(max_new_tokens):
            idx_cond = idx[:, -model.max_seq_len:]  # (B, <= L)
            logits = model(idx_cond)[0][:, -1, :]  # (B, V)
            if temperature == 0:
                idx_next = logits.argmax(dim=-1, keepdim=True)  # (B, 1)
            else:
                logits = logits / temperature  # (B, V)
                if top_k is not None:
                    kth = torch.topk(logits, min(top_k, logits.size(-1)), dim=-1).values[:, [-1]]  # (B, 1)
                    logits = logits.masked_fill(logits < kth, float("-inf"))  # (B, V)
                probs = F.softmax(logits, dim=-1)  # (B, V)
                idx_next = torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)
            idx = torch.cat((idx, idx_next), dim=1)  # (B, T + 1)
    finally:
        model.train(was_training)
    return idx
