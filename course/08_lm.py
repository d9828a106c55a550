# %% [markdown]
# # 08 · The language model
#
# A stack of Transformer blocks turns a sequence of vectors into another. A **language model** adds what
# is needed to read token ids and to predict the next token: embeddings at the bottom, an output layer at
# the top, and a loss that scores every position's guess. By the end of this notebook you can:
#
# 1. write the **causal language-model loss**: shift the labels by one, cross-entropy on the raw logits,
#    targets marked `-100` left out;
# 2. write `TinyLM(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)`, a GPT-2-style
#    decoder: token and position embeddings, blocks with a causal mask, a final LayerNorm, and an output
#    layer **tied** to the token embedding, initialised as GPT-2 is;
# 3. check the numbers every language model should show at initialisation: logits `(B, T, V)`, a loss near
#    `ln V`, and no position seeing the future;
# 4. count where the parameters are (embeddings vs blocks, about `12·L·D² + V·D`).
#
# Shapes: `B` batch, `T` positions, `D` = `d_model`, `V` = `vocab_size`, `L` = `num_layers`.

# %%
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_causal_lm_loss, check_parameter_table, check_tiny_lm
from tinylm_solutions.attention import causal_mask  # given code from earlier notebooks
from tinylm_solutions.block import TransformerBlock
from tinylm_solutions.data import default_corpus, get_batch
from tinylm_solutions.norm import LayerNorm

_ = torch.manual_seed(0)

# %% [markdown]
# **About the imports.** The parts come from the course's reference package, so that a bug left in an
# earlier notebook can't block this one: `TransformerBlock(d_model, num_heads, d_ff)` is notebook 07's
# Pre-LN block (`block(x, mask) -> (B, T, D)`), `LayerNorm(d_model)` notebook 06's, `causal_mask(T)` notebook
# 01's (bool `(T, T)`, True = may attend). `default_corpus()` and `get_batch` give text and batches; notebook
# 09 looks at them closely. The demos after each exercise use *your* code: finish an exercise (its check
# passes) before running the cells below it.
#
# ## 1. From token ids to vectors
#
# A model reads **token ids**: integers in `0 .. V-1`, one per token (this notebook uses characters; notebook
# 09 builds tokenizers). An `nn.Embedding(V, D)` is a table of `V` rows of width `D`; calling it on ids
# looks the rows up. It is the same as multiplying a one-hot vector by the table, without building the
# one-hot vectors:

# %%
text = default_corpus(max_chars=20_000)
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}  # character -> id
itos = {i: c for c, i in stoi.items()}  # id -> character
data = torch.tensor([stoi[c] for c in text])  # (N,) token ids
V = len(chars)
print(f"{len(text):,} characters, vocabulary V = {V}; the first 40: {text[:40]!r}")

emb = nn.Embedding(V, 8)
ids = data[:5][None, :]  # (1, 5)
with torch.no_grad():
    looked_up = emb(ids)  # (1, 5, 8)
    one_hot = F.one_hot(ids, V).float() @ emb.weight  # (1, 5, V) @ (V, 8) -> (1, 5, 8)
print(ids.tolist(), "->", tuple(looked_up.shape), "; same as one-hot @ table:", torch.allclose(looked_up, one_hot))

# %% [markdown]
# Attention has no notion of order (notebook 04), so GPT-2 adds a second table, a **learned position
# embedding** `nn.Embedding(max_seq_len, D)`: row `t` is added to the token at position `t`. That table has
# `max_seq_len` rows and no more: a model built for `max_seq_len` positions **cannot** read a longer input.
# Indexing row `max_seq_len` fails deep inside PyTorch with an `IndexError` that doesn't say why; your model
# will check the length itself and raise a `ValueError` that does.
#
# ## 2. What a language model is trained to do
#
# At every position `t`, after reading tokens `0 .. t`, the model outputs **logits**: `V` unnormalised
# scores, one per possible next token. Softmax turns them into a probability distribution. Training asks
# for a high probability on the token that actually comes next, `t + 1`, with the **cross-entropy**
# $-\log p(x_{t+1} \mid x_{\le t})$, averaged over positions. One sequence of `T` tokens thus gives `T - 1`
# training examples at once, thanks to the causal mask: position `t` cannot peek at `t + 1`.
#
# ```
# input_ids   h   e   l   l   o          logits (B, T, V): row t scores every candidate for token t + 1
# position    0   1   2   3   4
# target      e   l   l   o   -          logits[:, :-1] is scored against labels[:, 1:]
# ```
#
# **Labels aligned with the inputs.** Following Hugging Face's convention, the model receives
# `labels = input_ids` (aligned, not shifted) and does the shift itself: the last position has no next token
# (drop `logits[:, -1]`), the first token is nobody's target (drop `labels[:, 0]`).
#
# **Ignored targets.** Sequences of different lengths are padded to one length; a padded position must not
# be scored. The convention: its label is **-100**, the default `ignore_index` of `F.cross_entropy`, which
# leaves those targets out of the sum *and* of the count. (Writing the pad id, often 0, into the labels
# instead would train the model to predict padding, and token 0 is a real token.)
#
# **Raw logits go in.** `F.cross_entropy(logits, targets)` applies `log_softmax` itself (PyTorch docs:
# "input is expected to contain the unnormalized logits"). It wants the classes in dimension 1: flatten
# `(B, T-1, V)` to `(B·(T-1), V)` and the targets to `(B·(T-1),)`.
#
# A uniform guess gives every token probability `1/V`, so its loss is $-\log(1/V) = \ln V$: the loss
# an untrained model should start near.

# %%
B, T = 2, 6
uniform = torch.zeros(B, T, V)  # (B, T, V): equal scores for every token
targets = torch.randint(V, (B, T - 1))  # (B, T-1)
print(f"uniform logits: loss {F.cross_entropy(uniform[:, :-1].reshape(-1, V), targets.reshape(-1)).item():.4f}, "
      f"ln V = {math.log(V):.4f}")

# %% [markdown]
# ### Exercise 1: `causal_lm_loss(logits, labels)`
#
# - `logits`: `(B, T, V)` float, the model's raw scores; `labels`: `(B, T)` integer, **aligned with the
#   inputs**, some entries possibly `-100`.
# - Return the mean cross-entropy of `logits[:, t]` against `labels[:, t + 1]` over every target that is
#   not `-100`: a 0-dim tensor of the logits' dtype, with gradients flowing to the logits (a tensor, not
#   `.item()`'s Python number: `loss.backward()` needs the graph).
#
# **What the check tries:** random logits of its own sizes (`B`, `T`, `V` all different) in float64 and in
# float32, labels that are all token ids (0 among them), then labels with some targets set to `-100` (it also
# changes the logits of those positions and expects the same loss). It compares with the reference and names
# the usual slips: no shift, a shift by two or the wrong way, a softmax before the loss, `-100` scored as a
# token, `ignore_index=0`, a sum instead of a mean.
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Two slices, one reshape. The prediction made at position `t` is scored against the token at `t + 1`: drop
# the last prediction (it has no next token) and the first label (it has no predecessor), and the two line
# up. What is left is an ordinary classification loss over all `B × (T-1)` positions at once, which wants
# them flattened into one list.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# Both slices are along dimension 1 (time): the logits without their last position, `(B, T-1, V)`, and the
# labels without their first, `(B, T-1)`. `F.cross_entropy` wants `(N, V)` and `(N,)`; its default
# `ignore_index` is already -100, and it averages over the targets it does not ignore. Flatten with
# `.reshape` (`-1` for `N`; `V` is `logits.size(-1)`): a slice along time is not contiguous, and `.view`
# refuses it. Return the loss tensor itself, not `.item()`.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `logits[:, :-1]` (the predictions that have a next token) against `labels[:, 1:]` (the tokens that have a
# predecessor):
# `return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1), ignore_index=-100)`
# </details>

# %% solution="causal_lm_loss"
def causal_lm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy: logits[:, t] scored against labels[:, t + 1], labels -100 left out.

    Args:
        logits: (B, T, V) float, unnormalised scores.
        labels: (B, T) integer, aligned with the inputs (usually labels = input_ids); -100 = not a target.

    Returns:
        0-dim tensor, the mean over the targets that are not -100 (F.cross_entropy, ignore_index=-100).
    """
    ### BEGIN SOLUTION
    V = logits.size(-1)
    shifted_logits = logits[:, :-1]  # (B, T-1, V): positions that have a next token
    targets = labels[:, 1:]  # (B, T-1): the next token of each
    return F.cross_entropy(shifted_logits.reshape(-1, V), targets.reshape(-1), ignore_index=-100)
    ### END SOLUTION


# %% test="causal_lm_loss_check"
from tinylm_checks import check_causal_lm_loss
check_causal_lm_loss(causal_lm_loss)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_causal_lm_loss(causal_lm_loss, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** the `expected:` line gives the reference value; compare it with what you get on
# the `tried:` input, then print `logits[:, :-1].shape` and `labels[:, 1:].shape` in your function.
#
# Your loss with ignored targets: the same loss whatever the logits say at the positions whose target is
# `-100`, and the same as leaving those positions out by hand.

# %%
logits = torch.randn(1, 6, V)  # (1, T, V)
labels = data[:6][None, :].clone()  # (1, T)
labels[0, 4:] = -100  # the last two targets are padding
changed = logits.clone()
changed[0, 3:] = 100 * torch.randn(3, V)  # wild predictions where nothing is scored
print(f"with -100 targets: {causal_lm_loss(logits, labels).item():.4f}; "
      f"wild logits where nothing is scored: {causal_lm_loss(changed, labels).item():.4f}; "
      f"padding cut off by hand: {causal_lm_loss(logits[:, :4], labels[:, :4]).item():.4f}")

# %% [markdown]
# ## 3. The model: TinyLM
#
# ```
# input_ids (B, T) ─> token_emb ─> (B, T, D) ─┐
# positions 0..T-1 ─> pos_emb   ─> (T, D) ────(+)─> x (B, T, D)
# x ─> blocks[0](x, mask) ─> ... ─> blocks[L-1](x, mask) ─> norm ─> lm_head ─> logits (B, T, V)
# ```
#
# - **One causal mask**, `causal_mask(T)`, built once per forward and handed to every block.
# - **A final LayerNorm.** In a Pre-LN stack the residual stream is never normalised and grows with depth
#   (notebook 07); GPT-2 normalises it once after the last block (its `ln_f`), before the output layer.
# - **Weight tying.** The output layer `lm_head = nn.Linear(D, V, bias=False)` maps a vector to a score per
#   token; its weight is `(V, D)`, the shape of the token embedding. Press & Wolf (2017) use **one** matrix
#   for both (Vaswani et al. §3.4 and GPT-2 do too): `V·D` parameters fewer, and a token's input and output
#   vectors learn together. "One matrix" means one `nn.Parameter` object used twice:
#   `self.lm_head.weight = self.token_emb.weight`. A copy (`.clone()`, `copy_`) has equal values at first, but
#   it is a second tensor, and the first optimizer step makes the two different. A second Parameter over the
#   same storage (`nn.Parameter(self.token_emb.weight)`, or assigning `.data`) keeps the values shared, yet
#   `model.parameters()` lists the matrix twice: the parameter count counts `V·D` twice, and an optimizer
#   updates it twice per step (Adam with two sets of moments for one matrix).
# - **GPT-2's initialisation** (Radford et al. 2019, §2.3; nanoGPT's `_init_weights`): every `nn.Linear` and
#   `nn.Embedding` weight `N(0, 0.02)`, every bias 0; the two projections that write into the residual stream
#   in each block (the weights of `attn.W_O` and `ffn.linear2`; their biases stay 0) get std `0.02 / sqrt(2·L)`,
#   so that the `2L` contributions added to the stream don't grow its size with depth. PyTorch's defaults are
#   different: `nn.Embedding` starts at `N(0, 1)`, which with tied weights makes the initial logits huge.
#
# ### Exercise 2: `TinyLM`
#
# `__init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)`: call `super().__init__()`,
# store `self.max_seq_len`, and create, under exactly these names (the check copies weights in by name):
# `self.token_emb = nn.Embedding(vocab_size, d_model)`, `self.pos_emb = nn.Embedding(max_seq_len, d_model)`,
# `self.blocks = nn.ModuleList(...)` of `num_layers` `TransformerBlock(d_model, num_heads, d_ff)`,
# `self.norm = LayerNorm(d_model)` and `self.lm_head = nn.Linear(d_model, vocab_size, bias=False)`. Tie
# `lm_head`'s weight to `token_emb`'s, then initialise as GPT-2 does (above).
#
# `forward(self, input_ids, labels=None)`: `input_ids (B, T)` integer. Raise a `ValueError` that names
# `max_seq_len` when `T > self.max_seq_len`. The positions are `0 .. T-1` for this input's `T` (where a token
# sits, not which token it is), and the causal mask is `T x T`: `max_seq_len` is only the upper limit. Return the pair `(logits (B, T, V), loss)`, where `loss` is
# **your** `causal_lm_loss(logits, labels)` when `labels` is given and `None` otherwise.
#
# `get_num_params` is given (nanoGPT's): it counts each tensor once, and without the position embedding
# unless you ask for `non_embedding=False`.
#
# **What the check tries:** it builds your class with its own sizes, checks the five parts and that
# `lm_head.weight` **is** `token_emb.weight`, copies random weights in and compares the logits with the
# reference's; it changes the tokens after a position (nothing before may move), compares the loss with
# labels of token ids and with `-100` targets, feeds `max_seq_len` tokens (must work) and `max_seq_len + 1`
# (must raise `ValueError`), takes one SGD step on both models (the tie must hold and the logits stay equal),
# and on a fresh model of its own measures the initialisation's standard deviations and the loss at init
# (within 0.25 of `ln V`).
#
# **Difficulty:** ★★☆ · **Time:** about 25 min
#
# <details><summary>Hint 1: the idea</summary>
#
# `forward` is the diagram above, left to right: the token and position embeddings added, the blocks in
# turn with one causal mask, the final norm, the output layer, then the loss. `__init__` does three things
# after creating the layers, in this order: tie (one Parameter object used twice, not a copy), then
# initialise every weight as GPT-2 does, then give the two projections that write into the residual
# stream of each block their smaller standard deviation.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - The tie: assign `token_emb`'s weight, the Parameter object itself, to `lm_head`'s `weight` attribute.
# - The initialisation: a loop over `self.modules()` (or `self.apply(fn)`): for every `nn.Linear` and
#   `nn.Embedding`, `nn.init.normal_` on its weight with mean 0 and std 0.02; `nn.init.zeros_` on its bias
#   where a bias exists. Then a loop over `self.named_parameters()`: the names ending in
#   `"attn.W_O.weight"` or `"ffn.linear2.weight"` get `nn.init.normal_` again, with std
#   `0.02 / sqrt(2 * num_layers)`.
# - `forward`, in order: `B` and `T` from `input_ids.shape`; the length check (`T > self.max_seq_len`
#   raises the `ValueError`); the positions `0 .. T-1`, a `(T,)` tensor on `input_ids`'s device; the two
#   embeddings added, `(B, T, D) + (T, D)`; `causal_mask(T)`, once; each block of `self.blocks` on `x` and
#   the mask; `self.norm`, then `self.lm_head`: the logits `(B, T, V)`; your `causal_lm_loss` when
#   `labels` is given, `None` otherwise; return the pair.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# In `__init__`: `self.lm_head.weight = self.token_emb.weight`; in the loop over the modules,
# `nn.init.normal_(m.weight, mean=0.0, std=0.02)` and `nn.init.zeros_(m.bias)`; in the loop over the
# named parameters, `nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * num_layers))`.
#
# In `forward`: `B, T = input_ids.shape`; the length check;
# `x = self.token_emb(input_ids) + self.pos_emb(torch.arange(T, device=input_ids.device))`;
# `mask = causal_mask(T)`; `for block in self.blocks: x = block(x, mask)`;
# `logits = self.lm_head(self.norm(x))`; `loss = None if labels is None else causal_lm_loss(logits, labels)`;
# `return logits, loss`.
# </details>

# %% solution="tiny_lm"
class TinyLM(nn.Module):
    """A decoder-only Transformer language model, GPT-2 style.

    Args:
        vocab_size: V; max_seq_len: the longest input; d_model: D; num_heads: H; num_layers: L; d_ff: the
        FFN's hidden width.

    Attributes:
        token_emb: nn.Embedding(V, D); pos_emb: nn.Embedding(max_seq_len, D); blocks: nn.ModuleList of L
        TransformerBlock; norm: the final LayerNorm(D); lm_head: nn.Linear(D, V, bias=False), its weight
        *is* token_emb.weight.

    forward(input_ids (B, T) integer, labels (B, T) or None) -> (logits (B, T, V), loss or None).
    Raises ValueError if T > max_seq_len.
    """

    def __init__(self, vocab_size: int, max_seq_len: int, d_model: int, num_heads: int, num_layers: int,
                 d_ff: int):
        ### BEGIN SOLUTION
        super().__init__()
        self.max_seq_len = max_seq_len
        self.token_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_seq_len, d_model)
        self.blocks = nn.ModuleList([TransformerBlock(d_model, num_heads, d_ff) for _ in range(num_layers)])
        self.norm = LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.token_emb.weight  # tied: one Parameter, V x D
        for m in self.modules():  # GPT-2 init
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        for name, p in self.named_parameters():  # the projections into the residual stream
            if name.endswith(("attn.W_O.weight", "ffn.linear2.weight")):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * num_layers))
        ### END SOLUTION

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor | None = None):
        ### BEGIN SOLUTION
        B, T = input_ids.shape
        if T > self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}; crop the input")
        positions = torch.arange(T, device=input_ids.device)  # (T,)
        x = self.token_emb(input_ids) + self.pos_emb(positions)  # (B, T, D) + (T, D)
        mask = causal_mask(T)  # (T, T), True = may attend
        for block in self.blocks:
            x = block(x, mask)  # (B, T, D)
        logits = self.lm_head(self.norm(x))  # (B, T, V)
        loss = None if labels is None else causal_lm_loss(logits, labels)
        return logits, loss
        ### END SOLUTION

    def get_num_params(self, non_embedding: bool = True) -> int:
        """Number of parameters, each tensor once (so the tied weight once); minus the position embedding when
        non_embedding is True (nanoGPT's convention: the token embedding stays, it is also the output layer)."""
        n = sum(p.numel() for p in self.parameters())
        return n - self.pos_emb.weight.numel() if non_embedding else n


# %% test="tiny_lm_check"
from tinylm_checks import check_tiny_lm
check_tiny_lm(TinyLM)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_tiny_lm(TinyLM, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** read the `tried:` line first. The check runs your model with *your*
# `causal_lm_loss`, so fix exercise 1 before this one. `likely mistake:` recognises, among others, a copy
# instead of a tie, a missing final norm, positions not added, no causal mask, labels not shifted or shifted
# twice, a softmax before the loss, `-100` scored, a missing length check and PyTorch's default
# initialisation.
#
# ## 4. Your model at initialisation
#
# A model for our characters (`V` from section 1), its logits, its loss next to `ln V`, and the tie:

# %%
torch.manual_seed(0)
model = TinyLM(vocab_size=V, max_seq_len=64, d_model=64, num_heads=4, num_layers=2, d_ff=256)  # yours
x, y = get_batch(data, batch_size=8, block_size=64, generator=torch.Generator().manual_seed(0))  # (8, 64) each
with torch.no_grad():
    logits, loss = model(x, labels=x)
print(f"logits {tuple(logits.shape)}; loss at init {loss.item():.3f}, ln V = {math.log(V):.3f}")
print("lm_head.weight is token_emb.weight:", model.lm_head.weight is model.token_emb.weight,
      "| one storage:", model.lm_head.weight.data_ptr() == model.token_emb.weight.data_ptr())

# %% [markdown]
# **Causal, end to end.** Change the characters from position 40 on; the logits at positions 0–39 must not
# move (each block is causal, and nothing else mixes positions):

# %%
x2 = x.clone()
x2[:, 40:] = torch.randint(V, (8, 24))
with torch.no_grad():
    moved = (model(x2)[0] - model(x)[0]).abs().amax(dim=(0, 2))  # (T,): largest change per position
print("largest change at positions 0-39:", f"{moved[:40].max().item():.1e}", "| at 40-63:", f"{moved[40:].min().item():.2f} or more")

# %% [markdown]
# **Too long.** A model built for 64 positions refuses 65, with your message:

# %% tags=["raises-exception"]
model(torch.zeros(1, 65, dtype=torch.long))

# %% [markdown]
# **The shift, once.** `get_batch` (nanoGPT's) returns `(x, y)` with `y` **already shifted**:
# `y[:, t] = x[:, t + 1]`. Your model shifts `labels` itself, so it takes `labels=x`. Passing `y` as labels
# shifts twice: position `t` is scored against the token two steps ahead. Both run without an error; only
# the alignment tells them apart:

# %%
show = lambda ids: "".join(itos[i] for i in ids.tolist()).replace("\n", "⏎")  # noqa: E731
print("input   x[0, :12]         :", show(x[0, :12]))
print("scored  labels=x  (x[1:13]):", show(x[0, 1:13]), "  the next character: right")
print("scored  labels=y  (y[1:13]):", show(y[0, 1:13]), "  two ahead: wrong")
with torch.no_grad():
    print(f"loss with labels=x: {model(x, labels=x)[1].item():.3f}; with labels=y: {model(x, labels=y)[1].item():.3f} "
          "(both about ln V now: the difference shows only in training, where labels=y learns the wrong task)")

# %% [markdown]
# ## 5. Where the parameters are
#
# Counting, part by part, for a model with tied weights (`d_ff = 4D`):
#
# | part | holds | parameters |
# |---|---|---|
# | `token_emb` | `(V, D)`, also the output layer's weight | $V D$ |
# | `pos_emb` | `(max_seq_len, D)` | $T_{max} D$ |
# | `blocks` | `L` blocks of `12 D² + 13 D` (notebook 07) | $L(12D^2 + 13D)$ |
# | `norm` | weight and bias | $2D$ |
# | `lm_head` | nothing of its own when tied | $0$ |
#
# So, roughly, **`12·L·D² + V·D`**: the blocks plus the (tied) embedding matrix. For a small vocabulary the
# blocks dominate; for GPT-2's 50,257 tokens the embedding is a third of the small model.
#
# ### Exercise 3: `parameter_table(model)`
#
# Return a dict of plain ints, counted from the model's parameters: `"token_emb"`, `"pos_emb"`, `"blocks"`,
# `"norm"`, `"lm_head"` (the parameters of each of those parts) and `"total"` (all the model's parameters).
# Each tensor counts **once**: when `lm_head.weight` *is* `token_emb.weight`, it belongs to `token_emb` and
# `lm_head` counts 0. A part may be `None` (a model without positions: `pos_emb is None`): it counts 0. Every
# parameter counts, trainable or frozen.
#
# **What the check tries:** the reference TinyLM tied, untied (`lm_head` has its own `(V, D)` weight), without
# positions (`pos_emb is None`) and with frozen sinusoidal positions (`requires_grad=False`). Each model must
# come back unchanged.
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# A tensor that two parts share (the tied matrix) must be counted once, by the first part that reaches it.
# So remember which tensors you have already counted, by identity (the same object, not equal values), and
# count the parts in the order of the table: `token_emb`'s weight is counted first, so when `lm_head`
# reaches the same tensor it is skipped. `"total"` needs no such care: `model.parameters()` yields a
# shared tensor once.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - Before any counting: a set of the `id(p)` already counted.
# - One helper, used for every part: 0 for `None` (a model without `pos_emb`); otherwise it goes through the
#   part's `.parameters()` and, for each `p` whose `id(p)` is not in the set yet, adds `p.numel()` and puts
#   the id in the set.
# - The parts by name, with `getattr(model, name)`, in the order `token_emb`, `pos_emb`, `blocks`, `norm`,
#   `lm_head`.
# - `"total"`: `p.numel()` summed over `model.parameters()`, with no `requires_grad` filter (frozen
#   parameters count too).
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `seen = set()`; a helper `count(module)` that returns 0 for `None` and otherwise, for each `p` in
# `module.parameters()`, does `if id(p) not in seen:` then `seen.add(id(p))` and adds `p.numel()`;
# the table maps each of the five names to `count(getattr(model, name))`, in the table's order; and
# `table["total"] = sum(p.numel() for p in model.parameters())`.
# </details>

# %% solution="parameter_table"
def parameter_table(model: nn.Module) -> dict[str, int]:
    """Parameters per part of a language model, each tensor counted once.

    Args:
        model: a module with token_emb, pos_emb (may be None), blocks, norm, lm_head.

    Returns:
        {"token_emb", "pos_emb", "blocks", "norm", "lm_head", "total"} -> int; lm_head is 0 when its weight is
        token_emb's; total counts every parameter of the model once.
    """
    ### BEGIN SOLUTION
    seen = set()

    def count(module):
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
    ### END SOLUTION


# %% test="parameter_table_check"
from tinylm_checks import check_parameter_table
check_parameter_table(parameter_table)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_parameter_table(parameter_table, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** `expected:` and `got:` show the six counts side by side for the model of the
# `tried:` line; see which part is off, and by how much (`V·D` is the tied matrix).
#
# Your table, next to the model's own `get_num_params()` and to the rule `12·L·D² + V·D`, for the model of
# section 4, a wider one, and GPT-2 small (`V = 50,257`, 1,024 positions, `D = 768`, 12 layers, 12 heads). The
# GPT-2 model is built on PyTorch's `"meta"` device: its tensors have shapes but no memory, enough to count
# 124 million parameters without allocating them.

# %%
configs = {"section 4": (V, 64, 64, 4, 2), "wider": (V, 256, 256, 8, 6), "GPT-2 small": (50257, 1024, 768, 12, 12)}
rows = {}
print(f"{'model':<12} {'token_emb':>11} {'pos_emb':>9} {'blocks':>11} {'norm':>5} {'lm_head':>7} {'total':>12} "
      f"{'get_num_params()':>16} {'12LD²+VD':>12}")
for label, (V_, T_, D_, H_, L_) in configs.items():
    with torch.device("meta"):
        m = TinyLM(V_, T_, D_, H_, L_, 4 * D_)  # yours
    t = parameter_table(m)  # yours
    rows[label] = t
    rule = 12 * L_ * D_ ** 2 + V_ * D_
    print(f"{label:<12} {t['token_emb']:>11,} {t['pos_emb']:>9,} {t['blocks']:>11,} {t['norm']:>5,} {t['lm_head']:>7,} "
          f"{t['total']:>12,} {m.get_num_params():>16,} {rule:>12,}")
    assert t["total"] == m.get_num_params(non_embedding=False) and t["total"] - t["pos_emb"] == m.get_num_params()

fig, ax = plt.subplots(figsize=(7, 2.6))
for i, (label, t) in enumerate(rows.items()):
    left = 0.0
    for part, color in (("token_emb", "tab:blue"), ("pos_emb", "tab:cyan"), ("blocks", "tab:orange"), ("norm", "tab:gray")):
        share = t[part] / t["total"]
        ax.barh(i, share, left=left, color=color, label=part if i == 0 else None)
        left += share
ax.set_yticks(range(len(rows)), list(rows))
ax.set_xlabel("share of the parameters")
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=4, frameon=False)
plt.tight_layout()
plt.show()

# %% [markdown]
# GPT-2 small comes out at 124,439,808 parameters, the number OpenAI's checkpoint has. `get_num_params()`
# leaves the position embedding out (nanoGPT prints GPT-2 small's size that way: 123.65M); the rule
# `12·L·D² + V·D` misses only the biases, the LayerNorms and the position table. With our vocabulary of under 100
# characters the embedding is a sliver; with a 50k-token vocabulary it is almost a third of GPT-2 small.
#
# ## Summary
#
# - `causal_lm_loss`: `logits[:, :-1]` against `labels[:, 1:]`, `F.cross_entropy` on the raw logits,
#   `ignore_index=-100`; labels are aligned with the inputs, and the shift happens in one place only
#   (`get_batch`'s `y` is already shifted: it is not `labels`).
# - `TinyLM`: token + position embeddings, `L` blocks with one causal mask, a final LayerNorm, `lm_head` tied to
#   `token_emb` (one Parameter), GPT-2's init (`N(0, 0.02)`, residual projections `0.02/sqrt(2L)`, zero
#   biases); `T > max_seq_len` raises a `ValueError`.
# - At init: logits `(B, T, V)`, loss `≈ ln V`, and no position sees the future.
# - Parameters: about `12·L·D² + V·D`, the tied matrix counted once.
#
# **Next:** notebook 09 builds tokenizers and trains this model on real text.
