"""A tiny decoder-only Transformer language model (GPT-style, Pre-LN), in one file.

Shapes: B batch, T positions, D = d_model, H = num_heads, d_k = D / H, V = vocab_size.
Sources: Vaswani et al. 2017 (attention, §3.2); Radford et al. 2019 (GPT-2: Pre-LN, init); PyTorch's
``F.scaled_dot_product_attention`` and ``F.cross_entropy`` docs.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


def causal_mask(T, device=None):
    """(T, T) bool, True where query t may attend to key s: s <= t."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v over the last two dims; mask True = may attend. Returns (out, weights)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)  # each query's weights over the keys sum to 1
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape

        def split(t):  # (B, T, D) -> (B, H, T, d_k)
            return t.view(B, T, self.num_heads, self.d_k).transpose(1, 2)

        out, _ = scaled_dot_product_attention(split(self.W_Q(x)), split(self.W_K(x)), split(self.W_V(x)), mask)
        return self.W_O(out.transpose(1, 2).reshape(B, T, D))  # (B, T, D)


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))  # (B, T, D)


class TransformerBlock(nn.Module):
    """Pre-LN: x + attn(norm1(x)), then x + ffn(norm2(x))."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(d_model), MultiHeadSelfAttention(d_model, num_heads)
        self.norm2, self.ffn = nn.LayerNorm(d_model), FeedForward(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.norm1(x), mask)
        return x + self.ffn(self.norm2(x))  # (B, T, D)


def causal_lm_loss(logits, labels):
    """Next-token cross-entropy: logits at t against labels at t + 1, -100 ignored. logits (B, T, V), labels (B, T)."""
    V = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), ignore_index=-100)


class TinyLM(nn.Module):
    """Token and learned position embeddings, num_layers Pre-LN blocks, a final LayerNorm, a head tied to the token
    embedding. forward(input_ids (B, T), labels=None) -> (logits (B, T, V), loss or None)."""

    def __init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff):
        super().__init__()
        self.max_seq_len = max_seq_len
        self.token_emb, self.pos_emb = nn.Embedding(vocab_size, d_model), nn.Embedding(max_seq_len, d_model)
        self.blocks = nn.ModuleList(TransformerBlock(d_model, num_heads, d_ff) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.token_emb.weight  # weight tying: one matrix
        for name, p in self.named_parameters():  # GPT-2's init: N(0, 0.02), residual projections scaled down
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * num_layers) if name.endswith(("W_O.weight", "linear2.weight")) else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, input_ids, labels=None):
        B, T = input_ids.shape
        if T > self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}")
        x = self.token_emb(input_ids) + self.pos_emb(torch.arange(T, device=input_ids.device))  # (B, T, D)
        mask = causal_mask(T, device=input_ids.device)
        for block in self.blocks:
            x = block(x, mask)
        logits = self.lm_head(self.norm(x))  # (B, T, V)
        return logits, None if labels is None else causal_lm_loss(logits, labels)
