"""TinyLM: a decoder-only Transformer language model (GPT-2 layout, nanoGPT-style code).

token embedding + position embedding -> N Pre-LN blocks with a causal mask -> final LayerNorm ->
``lm_head`` whose weight *is* the token embedding matrix (weight tying: Press & Wolf 2017; Vaswani
et al. 2017, §3.4). Positions are learned (``nn.Embedding(max_seq_len, D)``, as GPT-2) by default.

Labels follow the Hugging Face convention: ``labels`` are aligned with ``input_ids`` and the model
shifts them itself, so ``logits[:, t]`` is scored against ``labels[:, t + 1]``; label ``-100`` is
ignored (``F.cross_entropy``'s default ``ignore_index``).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .block import TransformerBlock
from .attention import causal_mask
from .norm import LayerNorm
from .position import RotarySelfAttention, sinusoidal_position_encoding

IGNORE_INDEX = -100


def shift_labels(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Align next-token predictions with their targets: ``(logits[:, :-1], labels[:, 1:])``.

    Args:
        logits: ``(B, T, V)``; ``logits[:, t]`` is the prediction made after reading tokens ``0..t``.
        labels: ``(B, T)`` long, aligned with the inputs (usually ``labels = input_ids``).

    Returns:
        ``(logits (B, T-1, V), targets (B, T-1))``: the last position has no next token to predict.
    """
    return logits[:, :-1, :], labels[:, 1:]  # (B, T-1, V), (B, T-1)


def causal_lm_loss(logits: torch.Tensor, labels: torch.Tensor, ignore_index: int = IGNORE_INDEX) -> torch.Tensor:
    """Mean next-token cross-entropy over the non-ignored targets, after :func:`shift_labels`.

    ``loss = mean over (b, t) with labels[b, t + 1] != ignore_index of
    -log softmax(logits[b, t])[labels[b, t + 1]]``: the raw logits go in (``F.cross_entropy`` applies
    ``log_softmax`` itself; PyTorch docs, ``torch.nn.functional.cross_entropy``).

    Args:
        logits: ``(B, T, V)`` float, unnormalised scores; ``logits[:, t]`` predicts token ``t + 1``.
        labels: ``(B, T)`` integer, aligned with the inputs (usually ``labels = input_ids``); the value
            ``ignore_index`` (-100, PyTorch's default) marks targets that are not scored (padding).

    Returns:
        Scalar tensor of ``logits``' dtype (NaN if every target is ``ignore_index``, as ``F.cross_entropy``).

    Raises:
        ValueError: if ``logits`` is not 3-D float, ``labels`` is not an integer tensor of shape ``(B, T)``,
            or ``T < 2`` (no next token to predict).
    """
    if not isinstance(logits, torch.Tensor) or logits.dim() != 3 or not logits.is_floating_point():
        got = f"{tuple(logits.shape)} {logits.dtype}" if isinstance(logits, torch.Tensor) else type(logits).__name__
        raise ValueError(f"logits must be a 3-D float tensor (B, T, V), got {got}")
    if not isinstance(labels, torch.Tensor) or labels.shape != logits.shape[:2] or labels.is_floating_point() \
            or labels.dtype == torch.bool:
        got = f"{tuple(labels.shape)} {labels.dtype}" if isinstance(labels, torch.Tensor) else type(labels).__name__
        raise ValueError(f"labels must be an integer tensor of shape (B, T) = {tuple(logits.shape[:2])}, got {got}")
    if logits.size(1) < 2:
        raise ValueError(f"need T >= 2 positions to predict a next token, got T = {logits.size(1)}")
    logits, targets = shift_labels(logits, labels.long())  # (B, T-1, V), (B, T-1)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=ignore_index)


def parameter_table(model: nn.Module) -> dict[str, int]:
    """Where a TinyLM's parameters are: ``{"token_emb", "pos_emb", "blocks", "norm", "lm_head", "total"}``.

    Counts every parameter (trainable or frozen), each tensor once: ``lm_head`` is 0 when its weight *is*
    ``token_emb``'s (tied), ``pos_emb`` 0 when the model has none (``pos_emb is None``), and ``total`` is the
    number of elements of ``model.parameters()`` (equal to ``get_num_params(non_embedding=False)``). For
    ``d_ff = 4 D``, ``blocks = num_layers (12 D^2 + 13 D)`` (Kaplan et al. 2020, §2.1: ``N ≈ 12 L D^2``).

    Args:
        model: a module with ``token_emb, pos_emb (or None), blocks, norm, lm_head``.

    Returns:
        dict of plain ints.
    """
    seen: set[int] = set()

    def count(module: nn.Module | None) -> int:  # each tensor once across the parts
        if module is None:
            return 0
        n = 0
        for p in module.parameters():
            if id(p) not in seen:
                seen.add(id(p))
                n += p.numel()
        return n

    table = {name: count(getattr(model, name)) for name in ("token_emb", "pos_emb", "blocks", "norm", "lm_head")}
    table["total"] = sum(p.numel() for p in model.parameters())
    return table


def small_init_std(d_model: int) -> float:
    """``sqrt(2 / (5 * d_model))``: the "small init" std for a width ``d_model`` (a float, no unit).

    From Nguyen & Salazar (2019), "Transformers without Tears" (arXiv:1910.05895), as GPT-NeoX's
    ``small_init_init_method``. It is 0.0228 at GPT-2's ``d_model = 768``, where GPT-2 uses 0.02, and 0.0559 at
    ``d_model = 128``: there, on nanoGPT's CPU recipe, ``TinyLM(init_std=small_init_std(128))`` reaches a
    validation loss about 0.15 lower than with 0.02 (``benchmarks/bench_nanogpt.py``).

    Raises:
        ValueError: ``d_model`` is not a positive integer.
    """
    if isinstance(d_model, bool) or not isinstance(d_model, int) or d_model <= 0:
        raise ValueError(f"d_model must be a positive integer, got {d_model!r}")
    return math.sqrt(2 / (5 * d_model))


class TinyLM(nn.Module):
    """Decoder-only Transformer language model.

    Args:
        vocab_size: ``V``; max_seq_len: longest input ``L``; d_model: ``D``; num_heads: ``H``;
        num_layers: number of blocks; d_ff: FFN hidden width.
        norm_first: Pre-LN blocks (default) or Post-LN (for the stage 11 ablation).
        dropout: embedding and residual dropout (default 0).
        tie_weights: share ``lm_head.weight`` with ``token_emb.weight`` (default True).
        positions: ``"learned"`` (default, ``nn.Embedding``), ``"sinusoidal"`` (the same embedding frozen
            to the Vaswani table, with the token embeddings multiplied by ``sqrt(d_model)`` as in Vaswani et
            al. 2017, §3.4: unscaled, the table's rows, of norm ``sqrt(d_model / 2)``, swamp embeddings of std
            ``init_std``), ``"rope"`` (``pos_emb`` is None and every block's ``attn`` is a
            :class:`~tinylm_solutions.position.RotarySelfAttention`: queries and keys rotated by position, as in
            LLaMA) or ``"none"`` (``pos_emb`` is None; the "no positions" ablation).
        init_std: the std ``σ`` of the GPT-2 init (default 0.02, GPT-2's and the course's): N(0, σ) for every
            linear and embedding weight, N(0, σ / sqrt(2 * num_layers)) for the two projections that write
            into the residual stream, zero biases. GPT-2's 0.02 was set for ``D = 768``; a small model trains
            better with the width's own :func:`small_init_std` (the reference trainer's default).

    Attributes ``token_emb`` (``nn.Embedding(V, D)``), ``pos_emb`` (``nn.Embedding(L, D)``), ``blocks``
    (``nn.ModuleList`` of :class:`TransformerBlock`), ``norm`` (final :class:`LayerNorm`), ``lm_head``
    (``nn.Linear(D, V, bias=False)``), ``config`` (the constructor arguments: ``TinyLM(**m.config)``
    rebuilds the architecture).

    ``forward(input_ids (B, T) integer, labels=None) -> (logits (B, T, V), loss or None)``.

    Raises:
        ValueError: (forward) if ``input_ids`` is not a 2-D integer tensor, ``T > max_seq_len``, or
            ``labels`` does not have the shape of ``input_ids``.
    """

    def __init__(self, vocab_size: int, max_seq_len: int, d_model: int, num_heads: int, num_layers: int,
                 d_ff: int, norm_first: bool = True, dropout: float = 0.0, tie_weights: bool = True,
                 positions: str = "learned", init_std: float = 0.02):
        super().__init__()
        if positions not in ("learned", "sinusoidal", "rope", "none"):
            raise ValueError(f"positions must be 'learned', 'sinusoidal', 'rope' or 'none', got {positions!r}")
        if isinstance(init_std, bool) or not (isinstance(init_std, (int, float)) and init_std > 0):
            raise ValueError(f"init_std must be a positive number, got {init_std!r}")
        self.config = dict(vocab_size=vocab_size, max_seq_len=max_seq_len, d_model=d_model, num_heads=num_heads,
                           num_layers=num_layers, d_ff=d_ff, norm_first=norm_first, dropout=dropout,
                           tie_weights=tie_weights, positions=positions, init_std=init_std)
        self.vocab_size, self.max_seq_len = vocab_size, max_seq_len
        self.token_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_seq_len, d_model) if positions in ("learned", "sinusoidal") else None
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            [TransformerBlock(d_model, num_heads, d_ff, norm_first, dropout) for _ in range(num_layers)])
        if positions == "rope":
            if (d_model // num_heads) % 2:
                raise ValueError(f"RoPE rotates pairs: d_k = d_model / num_heads = {d_model // num_heads} must be even")
            for block in self.blocks:
                block.attn.__class__ = RotarySelfAttention  # the same module and weights, q and k rotated
        self.norm = LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.token_emb.weight  # one tensor, V * D parameters
        # nanoGPT / GPT-2 init: N(0, σ = 0.02) for linear and embedding weights, zero biases; the projections
        # that write into the residual stream get std σ / sqrt(2 * num_layers) (GPT-2 paper, §2.3).
        def init_weights(module: nn.Module) -> None:  # nanoGPT's _init_weights, with std σ
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0, std=init_std)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

        self.apply(init_weights)
        for name, p in self.named_parameters():
            if name.endswith(("attn.W_O.weight", "ffn.linear2.weight")):
                nn.init.normal_(p, mean=0.0, std=init_std / math.sqrt(2 * num_layers))
        if positions == "sinusoidal":
            self.pos_emb.weight.data.copy_(sinusoidal_position_encoding(max_seq_len, d_model))
            self.pos_emb.weight.requires_grad_(False)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor | None = None):
        if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2 or input_ids.is_floating_point() \
                or input_ids.is_complex() or input_ids.dtype == torch.bool:
            got = (f"{tuple(input_ids.shape)} {input_ids.dtype}" if isinstance(input_ids, torch.Tensor)
                   else type(input_ids).__name__)
            raise ValueError(f"input_ids must be a 2-D integer tensor (B, T), got {got}")
        B, T = input_ids.shape
        if T > self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}; crop the input")
        input_ids = input_ids.long()
        x = self.token_emb(input_ids)  # (B, T, D)
        if self.config["positions"] == "sinusoidal":
            x = x * math.sqrt(x.size(-1))  # Vaswani et al. §3.4: the embeddings, not the fixed table, are scaled
        if self.pos_emb is not None:
            x = x + self.pos_emb(torch.arange(T, device=input_ids.device))  # (B, T, D) + (T, D)
        x = self.drop(x)  # (B, T, D)
        mask = causal_mask(T, device=input_ids.device)  # (T, T), True = may attend
        for block in self.blocks:
            x = block(x, mask)  # (B, T, D)
        logits = self.lm_head(self.norm(x))  # (B, T, V)
        loss = None
        if labels is not None:
            if labels.shape != input_ids.shape:
                raise ValueError(f"labels must have the shape of input_ids {tuple(input_ids.shape)}, "
                                 f"got {tuple(labels.shape)}")
            loss = causal_lm_loss(logits, labels)
        return logits, loss

    def get_num_params(self, non_embedding: bool = True) -> int:
        """Number of parameters, each shared tensor counted once (tied weights count once).

        With ``non_embedding=True`` (nanoGPT's default) the position embedding is subtracted; the token
        embedding stays counted because, tied, it is also the output layer's weight.
        """
        n = sum(p.numel() for p in self.parameters())
        if non_embedding and self.pos_emb is not None:
            n -= self.pos_emb.weight.numel()
        return n

    def parameter_table(self) -> dict[str, int]:
        """:func:`parameter_table` of this model (``lm_head`` is 0 when tied; the parts add up to ``total``)."""
        return parameter_table(self)

    def get_attention_weights(self) -> list[torch.Tensor | None]:
        """Attention weights of the last forward, one ``(B, H, T, T)`` tensor per layer (detached)."""
        return [block.last_attn_weights for block in self.blocks]
