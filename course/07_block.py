# %% [markdown]
# # 07 · The Transformer block
#
# You have built every part of a Transformer layer: multi-head attention (02), masks (03), the
# feed-forward network (05), LayerNorm and the residual connection (06). A **block** puts them together,
# and a language model is little more than a stack of identical blocks. By the end of this notebook you
# will be able to:
#
# 1. write `TransformerBlock(d_model, num_heads, d_ff, norm_first=True)`, wired either way: **Pre-LN**
#    (GPT-2 and most models since) or **Post-LN** (the original Transformer);
# 2. say why today's models put the LayerNorm first (Xiong et al., 2020);
# 3. show that your block computes exactly what PyTorch's `nn.TransformerEncoderLayer` computes;
# 4. count a block's parameters, part by part, and use the rule of thumb **"about 12 D² per layer"**;
# 5. write attention the way production code does (one fused `qkv` layer, one fused attention call, dropout)
#    and avoid its trap: a function does not know whether the model is training.

# %%
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_block_parameter_counts, check_causal_self_attention, check_transformer_block
from tinylm_checks import plot_depth_profile, plot_parameter_ratio
from tinylm_solutions.attention import causal_mask  # the course's versions (see below)
from tinylm_solutions.ffn import FeedForward
from tinylm_solutions.multihead import MultiHeadSelfAttention
from tinylm_solutions.norm import LayerNorm

_ = torch.manual_seed(0)

# %% [markdown]
# **About the imports.** The parts come from the course's reference package, `tinylm_solutions`, so that
# this notebook stands on its own: a bug left in an earlier notebook can't block this one. They behave
# exactly like the ones you wrote:
#
# | part | made with | holds | call | returns |
# |---|---|---|---|---|
# | attention | `MultiHeadSelfAttention(d_model, num_heads)` | `W_Q, W_K, W_V, W_O` | `attn(x, mask)` | a **pair** `(out (B, T, D), weights (B, H, T, T))` |
# | feed-forward | `FeedForward(d_model, d_ff)` | `linear1, linear2` (GELU between) | `ffn(x)` | `(B, T, D)` |
# | LayerNorm | `LayerNorm(d_model)` | `weight, bias` | `norm(x)` | `(B, T, D)` |
# | mask | `causal_mask(T)` | | | bool `(T, T)`, True = may attend |
#
# The first demo uses PyTorch's own block, `nn.TransformerEncoderLayer` (section 4 shows that it computes
# exactly what yours will); the demos after each exercise use *your* code, so finish an exercise (its
# check passes) before running the cells below it.
#
# ## 1. What a block does
#
# A block has two **sublayers**, and they do different jobs:
#
# - **attention** is the only place where positions exchange information: token `t` gathers what it needs
#   from the tokens it may see;
# - the **feed-forward network** then transforms each position on its own (no mixing between positions).
#
# Each sublayer is wrapped in a **residual connection**: its output is *added* to its input instead of
# replacing it. Think of a stream of vectors `x (B, T, D)` flowing through the model (the **residual
# stream**): each sublayer reads the stream and adds a correction to it. Each sublayer also gets a
# **LayerNorm**, which keeps the numbers it sees at a steady scale. Every tensor in a block is `(B, T, D)`,
# so a block's output has the shape of its input, and blocks can be stacked as deep as you like.
#
# ## 2. Where the LayerNorm goes: Post-LN and Pre-LN
#
# There are two ways to combine the residual and the norm. Write $\mathrm{Attn}(h)$ for the attention's
# output (the first element of the pair) and $\mathrm{LN}_1, \mathrm{LN}_2$ for the two LayerNorms.
#
# **Post-LN**, the original Transformer (Vaswani et al., 2017, §3.1), normalises *after* adding:
#
# $$x' = \mathrm{LN}_1\big(x + \mathrm{Attn}(x)\big), \qquad y = \mathrm{LN}_2\big(x' + \mathrm{FFN}(x')\big)$$
#
# **Pre-LN** (GPT-2 and most language models since) normalises only what goes *into* each sublayer; the
# stream itself is never normalised:
#
# $$x' = x + \mathrm{Attn}\big(\mathrm{LN}_1(x)\big), \qquad y = x' + \mathrm{FFN}\big(\mathrm{LN}_2(x')\big)$$
#
# ```
#  Post-LN (norm_first=False)                     Pre-LN (norm_first=True)
#
#  x ──┬──────────────────┐                       x ──┬────────────────────────────┐
#      └──> attn ──────> (+) ──> norm1 ──> x'         └──> norm1 ──> attn ──────> (+) ──> x'
#  x'──┬──────────────────┐                       x'──┬────────────────────────────┐
#      └──> ffn ───────> (+) ──> norm2 ──> y          └──> norm2 ──> ffn ───────> (+) ──> y
# ```
#
# In Pre-LN there is a clean path from the block's input to its output: `x` reaches `y` through two
# additions and nothing else. Stack 12 blocks and the input still reaches the output through additions
# only. In Post-LN every path, including the residual one, goes through a LayerNorm in every block.
#
# **Why it matters.** Xiong et al. (2020), *On Layer Normalization in the Transformer Architecture*,
# show that at initialisation a Post-LN Transformer has large gradients for the parameters near its
# output. That is why Post-LN models need a learning-rate **warm-up** (a tiny learning rate at first,
# increased over thousands of steps) to train at all. Pre-LN's gradients are well behaved from the start,
# and Pre-LN trains without warm-up. The price: in Pre-LN the stream grows with depth, since every block
# adds to it, so a Pre-LN model applies **one final LayerNorm** after its last block (you will add it in
# notebook 08).
#
# Let's look at both in an untrained stack of 12 blocks (PyTorch's `nn.TransformerEncoderLayer`, set up
# as the course's block, with its default initialisation): the size of the stream after each block, and the size of each block's gradients for a
# language-model-like loss (a random readout to 100 "words" and a cross-entropy).

# %%
D, H, L, B, T, V = 64, 4, 12, 16, 32, 100
x = torch.randn(B, T, D)  # (B, T, D)
readout = torch.randn(D, V) / D ** 0.5  # (D, V): stands in for the model's output layer
targets = torch.randint(V, (B, T))  # (B, T)

stream, grads = {}, {}
for name, norm_first in (("Post-LN", False), ("Pre-LN", True)):
    torch.manual_seed(1)  # the same initial weights for both wirings
    blocks = [nn.TransformerEncoderLayer(D, H, 4 * D, dropout=0.0, activation="gelu", batch_first=True,
                                         norm_first=norm_first) for _ in range(L)]
    h, sizes = x, []
    for blk in blocks:
        h = blk(h, src_mask=~causal_mask(T))  # (B, T, D); PyTorch's bool mask: True = blocked
        sizes.append(h.norm(dim=-1).mean().item())  # mean length of one token's vector
    if norm_first:
        h = F.layer_norm(h, (D,))  # the final LayerNorm a Pre-LN model adds after its last block
    loss = F.cross_entropy((h @ readout).flatten(0, 1), targets.flatten())
    loss.backward()
    stream[name] = sizes
    grads[name] = [torch.cat([p.grad.flatten() for p in blk.parameters()]).norm().item() for blk in blocks]
    print(f"{name}: stream size after blocks 0, 5, 11 = {sizes[0]:.1f}, {sizes[5]:.1f}, {sizes[11]:.1f}; "
          f"gradient norm of blocks 0, 5, 11 = {grads[name][0]:.3f}, {grads[name][5]:.3f}, {grads[name][11]:.3f}")

plot_depth_profile(stream, grads, forward_label="mean norm of a token's vector",
                   backward_label="gradient norm of the block's parameters", log=False,
                   hline=(D ** 0.5, f"sqrt(D) = {D ** 0.5:.0f}"))
plt.tight_layout()
plt.show()

# %% [markdown]
# In Post-LN every block ends with a LayerNorm (weight 1, bias 0 at initialisation), so the stream's size
# is pinned at $\sqrt{D} = 8$; its gradients are larger than Pre-LN's, most of all near the output. In
# Pre-LN the stream grows block after block, and the gradients are smaller and even shrink a little
# towards the output. The differences are modest (from a few per cent at the first block to about 50 % at
# the last; mind the y axes, which do not start at 0):
# this small untrained stack only hints at the effect the paper analyses; notebook 11
# trains both wirings over a range of learning rates and shows where Post-LN breaks down.
#
# `nn.TransformerEncoderLayer` can do both: `norm_first=False` (its default) is Post-LN,
# `norm_first=True` is Pre-LN. Your block takes the same flag, with the default of language models:
# Pre-LN.
#
# ## 3. Exercise: `TransformerBlock`
#
# Write `TransformerBlock(d_model, num_heads, d_ff, norm_first=True)`:
#
# - `__init__`: call `super().__init__()`, store `self.norm_first = norm_first`, and create the four parts
#   under exactly these names (the check copies weights into them by name):
#   `self.norm1 = LayerNorm(d_model)`, `self.attn = MultiHeadSelfAttention(d_model, num_heads)`,
#   `self.norm2 = LayerNorm(d_model)`, `self.ffn = FeedForward(d_model, d_ff)`. Two separate LayerNorms:
#   each has its own weight and bias.
# - `forward(x, mask=None)`: `x (B, T, D)`; `mask` is `None` or a bool mask that broadcasts to
#   `(B, H, T, T)` (True = may attend), handed to the attention unchanged. Wire the block as Pre-LN when
#   `self.norm_first` is True and as Post-LN otherwise (the equations of section 2), and return one tensor
#   `(B, T, D)`. The attention returns a pair `(out, weights)`: add `out`, not the pair.
#
# Norm 1 belongs to the attention, norm 2 to the FFN, in both wirings. No dropout here: the check compares
# exact values.
#
# **What the check tries:** it builds your block with its own sizes (`d_ff ≠ 4 D`), writes random weights
# into it (LayerNorm weights and biases too) and the same weights into
# `nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0.0, activation="gelu", batch_first=True,
# norm_first=...)`, and compares the outputs for inputs whose mean is far from 0, with `norm_first=True`,
# `False` and left out, without a mask and with `causal_mask(T)`. With the causal mask it also changes the
# tokens after a position and expects no change at or before it. Then it counts parameters and checks
# that gradients reach every weight. If you prefer PyTorch's own parts, `nn.LayerNorm(d_model)`,
# `nn.MultiheadAttention(d_model, num_heads, batch_first=True)` and an `nn.Sequential(nn.Linear, nn.GELU(),
# nn.Linear)` are accepted too, under the same four names (mind `nn.MultiheadAttention`'s mask convention:
# True = *blocked*).
#
# **Difficulty:** ★★☆ · **Time:** about 20 min
#
# <details><summary>Hint 1: the idea</summary>
#
# A block is two sublayers, attention then the FFN, each inside a residual connection, and a LayerNorm for
# each. The flag only moves the norm. Pre-LN normalises what goes *into* the sublayer and adds the
# sublayer's output to the stream as it is; Post-LN adds first and normalises the sum. In both, the FFN
# reads the `x` the attention line produced.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - `forward` is one `if` on `self.norm_first` with two lines in each branch, one per sublayer, and then
#   `return x`. Each line reads the `x` the line before produced.
# - Pre-LN: two lines of the form `x = x + ...`, where `...` is the sublayer applied to the normalised `x`
#   (attention with `self.norm1`, the FFN with `self.norm2`). Don't overwrite `x` with the normalised copy
#   first: the residual adds the block's input, not its normalised copy.
# - Post-LN: two lines of the form `x = norm(x + ...)`, where `...` is the sublayer applied to `x` itself.
# - `self.attn` takes the mask as its second argument and returns a pair `(out, weights)`: add its element
#   0, `out` `(B, T, D)`, not the pair. `self.ffn` returns one tensor.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# Pre-LN: `x = x + self.attn(self.norm1(x), mask)[0]` then `x = x + self.ffn(self.norm2(x))`.
# Post-LN: `x = self.norm1(x + self.attn(x, mask)[0])` then `x = self.norm2(x + self.ffn(x))`.
# </details>

# %% solution="transformer_block"
class TransformerBlock(nn.Module):
    """One Transformer block: attention and a feed-forward network, each with a residual and a LayerNorm.

    Args:
        d_model: the width D of a token vector.
        num_heads: attention heads H (D must be divisible by H).
        d_ff: the feed-forward hidden width (4 * D in most models).
        norm_first: True for Pre-LN, x = x + attn(norm1(x)); False for Post-LN, x = norm1(x + attn(x)).

    Attributes:
        norm1, norm2: LayerNorm(d_model); attn: MultiHeadSelfAttention(d_model, num_heads);
        ffn: FeedForward(d_model, d_ff).

    forward(x, mask=None):
        x: (B, T, D); mask: optional bool, broadcastable to (B, H, T, T), True = may attend.
        Returns (B, T, D).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, norm_first: bool = True):
        ### BEGIN SOLUTION
        super().__init__()
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.norm2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        ### END SOLUTION

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        ### BEGIN SOLUTION
        if self.norm_first:  # Pre-LN
            x = x + self.attn(self.norm1(x), mask)[0]  # (B, T, D)
            x = x + self.ffn(self.norm2(x))  # (B, T, D)
        else:  # Post-LN
            x = self.norm1(x + self.attn(x, mask)[0])  # (B, T, D)
            x = self.norm2(x + self.ffn(x))  # (B, T, D)
        return x
        ### END SOLUTION


# %% test="transformer_block_check"
from tinylm_checks import check_transformer_block
check_transformer_block(TransformerBlock)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_transformer_block(TransformerBlock, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** read the `tried:` line first. "no mask" failures are about the wiring; the
# `likely mistake:` line recognises, among others, a residual that adds the normalised tensor, a missing
# residual, one LayerNorm used twice, Pre-LN and Post-LN swapped, a mask that is not passed on, dropout,
# and an extra LayerNorm at the end.
#
# ## 4. The same as PyTorch's `nn.TransformerEncoderLayer`
#
# PyTorch's encoder layer is this very block. Its attention stores `W_Q, W_K, W_V` stacked into one
# `in_proj_weight (3D, D)` (and `in_proj_bias (3D,)`), with `out_proj` as `W_O`; its FFN is `linear1`,
# `linear2`; its norms are `norm1`, `norm2`. Three arguments must be set to match the course's block:
# `dropout=0.0` (its default is 0.1), `activation="gelu"` (its default is ReLU) and `batch_first=True`.
#
# **Watch the mask.** Its bool `src_mask` means True = **blocked**, the opposite of this course, so it
# gets `~causal_mask(T)`.
#
# The cell below compares your `TransformerBlock` with it.

# %%
D, H, d_ff, B, T = 16, 4, 48, 2, 6
x = torch.randn(B, T, D) + 1.0  # (B, T, D), mean 1
for norm_first in (True, False):
    ours = TransformerBlock(D, H, d_ff, norm_first=norm_first)  # yours
    with torch.no_grad():  # random LayerNorm parameters too, so that nothing matches by luck
        for p in ours.parameters():
            p.add_(0.1 * torch.randn_like(p))
    torch_layer = nn.TransformerEncoderLayer(D, H, d_ff, dropout=0.0, activation="gelu", batch_first=True,
                                             norm_first=norm_first)
    a = ours.attn
    with torch.no_grad():
        torch_layer.self_attn.in_proj_weight.copy_(torch.cat([a.W_Q.weight, a.W_K.weight, a.W_V.weight]))  # (3D, D)
        torch_layer.self_attn.in_proj_bias.copy_(torch.cat([a.W_Q.bias, a.W_K.bias, a.W_V.bias]))  # (3D,)
        torch_layer.self_attn.out_proj.load_state_dict(a.W_O.state_dict())
        for name in ("linear1", "linear2"):
            getattr(torch_layer, name).load_state_dict(getattr(ours.ffn, name).state_dict())
        for name in ("norm1", "norm2"):
            getattr(torch_layer, name).load_state_dict(getattr(ours, name).state_dict())
        no_mask = (ours(x) - torch_layer(x)).abs().max().item()
        causal = (ours(x, causal_mask(T)) - torch_layer(x, src_mask=~causal_mask(T))).abs().max().item()
    label = "Pre-LN " if norm_first else "Post-LN"
    print(f"{label}: max abs difference {no_mask:.1e} without a mask, {causal:.1e} with a causal mask")
print("parameters:", sum(p.numel() for p in torch_layer.parameters()), "(PyTorch) vs",
      sum(p.numel() for p in ours.parameters()), "(ours)")

# %% [markdown]
# Differences below `1e-6` are float32 rounding: the two compute the same function.
#
# ## 5. Causal, when given a causal mask
#
# A block mixes positions only inside the attention, so with a causal mask the output at position `t`
# depends on tokens `0 .. t` only. Change the tokens from position 4 on and see which outputs move:

# %%
D, H, T = 16, 4, 8
blk = TransformerBlock(D, H, 4 * D)  # yours
x = torch.randn(1, T, D)  # (1, T, D)
x_changed = x.clone()
x_changed[:, 4:] = torch.randn(1, T - 4, D)  # new tokens at positions 4 .. 7
with torch.no_grad():
    for mask, label in ((causal_mask(T), "causal mask"), (None, "no mask   ")):
        change = (blk(x_changed, mask) - blk(x, mask)).abs().amax(-1)[0]  # (T,): largest change per position
        print(f"{label}: change of the output at positions 0 .. {T - 1}:", [f"{c:.2f}" for c in change.tolist()])

# %% [markdown]
# With the causal mask, positions 0–3 don't move at all: they can't see the future. Without a mask, every
# position sees every token and everything changes. The block builds no mask of its own: the model does,
# once, and hands it to every block (notebook 08).
#
# ## 6. Counting parameters
#
# Where are a block's parameters? An `nn.Linear(n_in, n_out)` holds `n_in × n_out` weights and `n_out`
# biases; a LayerNorm over `D` features holds a weight and a bias of `D` each.
#
# | part | holds | parameters | at `d_ff = 4 D` |
# |---|---|---|---|
# | `attn` | `W_Q, W_K, W_V, W_O`, each `nn.Linear(D, D)` | $4(D^2 + D)$ | $4D^2 + 4D$ |
# | `ffn` | `linear1 = nn.Linear(D, d_ff)`, `linear2 = nn.Linear(d_ff, D)` | $2 D\, d_\text{ff} + d_\text{ff} + D$ | $8D^2 + 5D$ |
# | norms | `norm1`, `norm2`, weight and bias each | $2 \times 2D = 4D$ | $4D$ |
# | **block** | | | $12D^2 + 13D$ |
#
# The formulas hold for *this* block. A program that reports parameter counts (or a memory estimate)
# should count what a module actually holds: a model may have another `d_ff`, extra parameters, a
# shared tensor, or frozen parts. `p.numel()` is the number of elements of a tensor `p`, and
# `module.parameters()` yields every parameter tensor of a module and its submodules, each tensor once
# even when two submodules share it.
#
# ### Exercise: `block_parameter_counts(block)`
#
# Return a dict of plain ints, counted from the block's parameters (not from the formulas):
#
# - `"attn"`: the parameters of `block.attn`; `"ffn"`: those of `block.ffn`;
# - `"norms"`: those of `block.norm1` and `block.norm2` together;
# - `"total"`: every parameter of the whole block.
#
# Every parameter counts, trainable or frozen (`requires_grad=False`), and a tensor counts once even if two
# submodules share it: when `norm2` *is* `norm1`, adding a count of `norm1` to a count of `norm2` counts the
# same tensors twice. `"total"` is *not* simply the sum of the three parts: a block may hold parameters
# outside them.
#
# **What the check tries:** reference blocks of two widths with `d_ff ≠ 4 D` (so the formulas for
# `d_ff = 4 D` won't pass), a block with one extra parameter `block.scale (D,)`, a block whose attention is
# frozen, a block whose `norm2` *is* `norm1` (one LayerNorm shared by both sublayers: its tensors count
# once), and a block whose LayerNorms have no bias (`nn.LayerNorm(d_model, bias=False)`), where the formulas
# don't hold either. Every block must come back unchanged: count, don't touch (no `requires_grad_()`,
# `eval()`, ...).
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Count, don't compute: one small helper that adds up the sizes of every parameter tensor of a module does
# most of it; apply it to the parts and to the block. Every tensor counts, trainable or frozen. The one trap
# is the pair of norms: to count a shared tensor once, count the two norms together, as one module, instead
# of adding two counts.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# - The helper: the sum of `p.numel()` over every `p` in `module.parameters()` (a `def` or a `lambda`), with
#   no `if p.requires_grad` filter. `"attn"`, `"ffn"` and `"total"` are the helper on `block.attn`,
#   `block.ffn` and `block` itself.
# - `"norms"`: put `block.norm1` and `block.norm2` in one `nn.ModuleList` and count that. An `nn.ModuleList`
#   yields a shared LayerNorm's tensors once, where `count(block.norm1) + count(block.norm2)` would count
#   them twice.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `count = lambda m: sum(p.numel() for p in m.parameters())`, applied to the parts and to the block; the two
# norms are `count(nn.ModuleList([block.norm1, block.norm2]))`.
# </details>

# %% solution="block_parameter_counts"
def block_parameter_counts(block: nn.Module) -> dict[str, int]:
    """Count a block's parameters by part, from the module itself.

    Args:
        block: a module with submodules attn, ffn, norm1, norm2 (such as a TransformerBlock).

    Returns:
        {"attn": ..., "ffn": ..., "norms": ..., "total": ...}: the number of parameter elements in block.attn,
        in block.ffn, in block.norm1 and block.norm2 together, and in the whole block. Every parameter
        counts (trainable or not), each tensor once.
    """
    ### BEGIN SOLUTION
    def count(module: nn.Module) -> int:
        return sum(p.numel() for p in module.parameters())  # parameters() yields each tensor once

    return {"attn": count(block.attn), "ffn": count(block.ffn),
            "norms": count(nn.ModuleList([block.norm1, block.norm2])), "total": count(block)}
    ### END SOLUTION


# %% test="block_parameter_counts_check"
from tinylm_checks import check_block_parameter_counts
check_block_parameter_counts(block_parameter_counts)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_block_parameter_counts(block_parameter_counts, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** the `tried:` line says which block it counted, and `expected:` / `got:` show all
# four counts side by side, so you can see which part is off and by how much.
#
# ## 7. About 12 D² per layer
#
# Now the table for widths from 32 to 512, with `d_ff = 4 D`, next to the formula $12D^2 + 13D$ and the
# ratio to $12D^2$, counted by your `block_parameter_counts` on your `TransformerBlock`.

# %%
widths = (32, 64, 128, 256, 512)
totals = []
print(f"{'D':>5} {'attn':>10} {'ffn':>10} {'norms':>7} {'total':>10} {'12D²+13D':>10} {'total/12D²':>11}")
for D in widths:
    counts = block_parameter_counts(TransformerBlock(D, 4, 4 * D))  # yours
    totals.append(counts["total"])
    print(f"{D:>5} {counts['attn']:>10,} {counts['ffn']:>10,} {counts['norms']:>7,} {counts['total']:>10,} "
          f"{12 * D * D + 13 * D:>10,} {counts['total'] / (12 * D * D):>11.4f}")

plot_parameter_ratio(widths, totals)
plt.show()

# %% [markdown]
# At `D = 128`: attention 66,048, FFN 131,712, norms 512, in all 198,272 parameters. The ratio to $12D^2$
# is $1 + 13/(12D)$: 1.034 at `D = 32`, 1.002 at `D = 512`. The `13D` (biases and norms) fades as `D`
# grows, which is why people say a block has **about 12 D² parameters**: a third in the attention
# ($4D^2$), two thirds in the FFN ($8D^2$). Kaplan et al. (2020, §2.1) count a model's non-embedding
# parameters as $N \approx 12\, n_\text{layer} D^2$. GPT-2 small, for instance, has `D = 768` and 12
# blocks: $12 \times 12 \times 768^2 \approx 85$ million parameters in its blocks (the rest of its 124
# million are the embeddings).
#
# Note that the count does not depend on `num_heads` (heads split the projections, they don't add to
# them) nor on the sequence length `T`.
#
# ## 8. The production form: `CausalSelfAttention`
#
# Your `MultiHeadSelfAttention` spells every step out, which is what makes it readable. The attention in
# nanoGPT, GPT-2's code and most models you will open is written differently, for speed, and it is worth
# knowing it when you see it:
#
# - **one fused projection** `qkv = nn.Linear(D, 3 D, bias=False)`: one matrix multiply instead of three,
#   split afterwards with `.chunk(3, dim=-1)` into `q, k, v` (its weight is `W_Q, W_K, W_V` stacked, exactly
#   like `nn.MultiheadAttention`'s `in_proj_weight` in section 4); `out = nn.Linear(D, D, bias=False)` is `W_O`.
#   nanoGPT leaves the biases out: they add little, and the layers are simpler without them;
# - **one fused attention call**, `F.scaled_dot_product_attention(q, k, v, is_causal=True)`: scores, scale
#   `1/sqrt(d_head)`, causal mask, softmax and `@ v` in one function, which may never form the `(T, T)` weights
#   at all (FlashAttention, Dao et al. 2022). `is_causal=True` stands for the causal mask;
# - **dropout on the attention weights** while training. Dropout (Srivastava et al. 2014) sets each weight to 0
#   with probability `p` and divides the kept ones by `1 - p`, so that the output is right *on average*; outside
#   training it does nothing.
#
# **The trap.** An `nn.Dropout` module reads `self.training`, which `model.train()` and `model.eval()` switch.
# `F.scaled_dot_product_attention` is a *function*: its `dropout_p=` is applied whenever it is not 0, in
# evaluation too. The module must pass `dropout_p=self.dropout if self.training else 0.0` itself (the PyTorch
# docs of the function say so). Forget it and your validation loss and your generated text are random, and a
# little worse, with nothing to tell you why.
#
# ### Exercise: `CausalSelfAttention(d_model, num_heads, dropout=0.0)`
#
# - `__init__`: `ValueError` when `d_model % num_heads != 0`; attributes `qkv` and `out` (the layers above),
#   `num_heads`, `d_head = d_model // num_heads` and `dropout` (the probability, a float).
# - `forward(x)`: `x (B, T, D)` -> `(B, T, D)`. Split `qkv(x)` in the order q, k, v, give each the shape
#   `(B, H, T, d_head)`, make **one** `F.scaled_dot_product_attention` call with `is_causal=True` and the right
#   `dropout_p`, merge the heads back to `(B, T, D)` and apply `out`.
#
# **What the check tries:** a `ValueError` for `d_model % num_heads != 0`; the layers and attributes, `4 D²`
# parameters; then it copies the weights of stage 02's `MultiHeadSelfAttention` (biases 0) into yours and, in
# `eval()`, expects its output with `causal_mask(T)`. With `dropout=0.5` it expects two `eval()` calls to agree,
# and in `train()` 40 calls to differ, to drop whole weights (not single elements of the output) and to average
# out to the `eval()` output. A version written by hand (masked scores, softmax,
# `F.dropout(weights, self.dropout, training=self.training)`) passes as well, and so do `torch.split`, `reshape` and
# `einsum` heads.
#
# **Difficulty:** ★★☆ · **Time:** about 15 min
#
# <details><summary>Hint 1: the idea</summary>
#
# It is your `MultiHeadSelfAttention` with two changes: the three projections become one layer whose output you
# cut in three, and `scaled_dot_product_attention` plus the causal mask become one call of PyTorch's function.
# The heads are split and merged exactly as in stage 02.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# Cut the output of `self.qkv(x)` into three along its last dimension (`.chunk`); give each piece the heads'
# shape the way stage 02's `split_heads` did (split D, *then* move the heads before time); merge back the way
# `merge_heads` did. The dropout goes *into* the attention call, through `dropout_p`, and its value depends on
# `self.training`.
# </details>
#
# <details><summary>Hint 3: the answer, forward line by line</summary>
#
# `q, k, v = self.qkv(x).chunk(3, dim=-1)`; then for each, `.view(B, T, self.num_heads, self.d_head).transpose(1, 2)`;
# `y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)`;
# `return self.out(y.transpose(1, 2).reshape(B, T, D))`
# </details>

# %% solution="causal_self_attention"
class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention, production form (nanoGPT's CausalSelfAttention).

    Args:
        d_model: D; num_heads: H (D must be divisible by H); dropout: probability of dropping an attention
        weight while training.

    Attributes:
        qkv: nn.Linear(D, 3 D, bias=False), split in the order q, k, v; out: nn.Linear(D, D, bias=False);
        num_heads; d_head = D // H; dropout (a float).

    forward(x (B, T, D)) -> (B, T, D). Raises ValueError if D % H != 0.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0):
        ### BEGIN SOLUTION
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.num_heads, self.d_head, self.dropout = num_heads, d_model // num_heads, float(dropout)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)  # 3 x (B, T, D)
        q, k, v = (t.view(B, T, self.num_heads, self.d_head).transpose(1, 2) for t in (q, k, v))  # (B, H, T, d_head)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                           is_causal=True)  # (B, H, T, d_head)
        return self.out(y.transpose(1, 2).reshape(B, T, D))  # (B, T, D)
        ### END SOLUTION


# %% test="causal_self_attention_check"
from tinylm_checks import check_causal_self_attention
check_causal_self_attention(CausalSelfAttention)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_causal_self_attention(CausalSelfAttention, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** `likely mistake:` names, among others, q, k, v split in another order, heads split or
# merged without the transpose, a missing `is_causal=True`, dropout left on in `eval()`, dropout never applied,
# dropout on the output instead of the weights, a weight used transposed (`y @ self.out.weight`) and the scale of
# `sqrt(d_model)`.
#
# **See the trap for yourself.** `TrapAttention` below is your class with one change: it always passes
# `dropout_p=self.dropout`. Both get `dropout=0.2`, the same weights and the same input, in `eval()`:

# %%
class TrapAttention(CausalSelfAttention):
    """Your CausalSelfAttention, but dropout_p=self.dropout always: the functional call ignores self.training."""

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (t.view(B, T, self.num_heads, self.d_head).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout, is_causal=True)  # the trap
        return self.out(y.transpose(1, 2).reshape(B, T, D))


torch.manual_seed(0)
yours, trap = CausalSelfAttention(32, 4, dropout=0.2), TrapAttention(32, 4, dropout=0.2)
trap.load_state_dict(yours.state_dict())
x = torch.randn(2, 16, 32)  # (B, T, D)
with torch.no_grad():
    for name, module in (("yours", yours), ("trap ", trap)):
        module.eval()
        a, b = module(x), module(x)
        print(f"{name} in eval(): two calls differ by {(a - b).abs().max().item():.3f}")
    yours.train()
    a, b = yours(x), yours(x)
    print(f"yours in train(): two calls differ by {(a - b).abs().max().item():.3f}")
    yours.eval()
    reference = yours(x)
    yours.train()
    mean = torch.stack([yours(x) for _ in range(500)]).mean(0)  # (B, T, D): the average of 500 training calls
    print(f"yours in train(), averaged over 500 calls: largest difference from eval() {(mean - reference).abs().max().item():.3f}, "
          f"output scale {reference.abs().mean().item():.3f}")

# %% [markdown]
# In `eval()` your module gives the same output twice and the trap does not: that is the bug, in the part of a
# run (evaluation, generation) where nothing else looks random. In `train()` yours is random too, as it should
# be, and its average over many calls comes close to the `eval()` output: dropping weights and dividing the
# kept ones by `1 - p` changes nothing on average.
#
# ## Summary
#
# - A block is attention (positions exchange information) then a position-wise FFN, each wrapped in a
#   residual connection and a LayerNorm; `(B, T, D)` in, `(B, T, D)` out, so blocks stack.
# - Post-LN: `x = norm1(x + attn(x))`, `x = norm2(x + ffn(x))`. Pre-LN: `x = x + attn(norm1(x))`,
#   `x = x + ffn(norm2(x))`: the stream is never normalised, gradients behave at initialisation and no
#   warm-up is needed (Xiong et al., 2020), and the model adds a final LayerNorm.
# - It is `nn.TransformerEncoderLayer(..., dropout=0.0, activation="gelu", batch_first=True,
#   norm_first=...)`, whose bool `src_mask` means True = blocked.
# - The mask comes from outside and is passed on unchanged; with a causal mask, later tokens change
#   nothing earlier.
# - Parameters: attention $4(D^2 + D)$, FFN $2 D d_\text{ff} + d_\text{ff} + D$, norms $4D$; at
#   `d_ff = 4 D`, $12D^2 + 13D$, **about 12 D² per layer**.
# - Production attention: one fused `qkv` layer, `.chunk(3, dim=-1)`, one `F.scaled_dot_product_attention(...,
#   is_causal=True)`; the function does not read `self.training`, so `dropout_p` must be 0 outside training.
#
# **Next:** notebook 08 stacks `num_layers` blocks between token and position embeddings and an output
# layer, and makes a language model, TinyLM.
