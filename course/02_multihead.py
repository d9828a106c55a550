# %% [markdown]
# # 02 · Multi-head attention
#
# One attention layer gives each query **one** set of weights over the keys, i.e. one weighted average.
# Multi-head attention runs several smaller attentions ("heads") side by side, each with its own
# queries, keys and values, and combines their results. In this notebook you write:
#
# 1. `split_heads(x, num_heads)`: `(B, T, D) -> (B, H, T, d_k)`;
# 2. `merge_heads(x)`: `(B, H, T, d_k) -> (B, T, D)`;
# 3. `MultiHeadSelfAttention(d_model, num_heads)`, the attention layer of a Transformer.
#
# Then you check it against PyTorch's own `nn.MultiheadAttention`.

# %%
import matplotlib.pyplot as plt
import torch
from torch import nn

from tinylm_checks import (check_merge_heads, check_multi_head_attention, check_split_heads, plot_attention,
                           plot_heads_split)
from tinylm_solutions.attention import causal_mask, scaled_dot_product_attention  # the course's versions (see below)

_ = torch.manual_seed(0)

# %% [markdown]
# **About the imports.** You wrote `scaled_dot_product_attention(q, k, v, mask=None) -> (out, weights)`
# and `causal_mask(T)` in notebook 01. Here we import the course's reference versions of both, from
# `tinylm_solutions`, so that every notebook stands on its own: a bug left in notebook 01 can't block
# this one. They behave exactly like the ones you wrote (same signature, same mask convention: bool,
# True = may attend).

# %% [markdown]
# ## 1. Why several heads
#
# A softmax row is one distribution over the keys. If a token needs two different things at once, say
# the previous word *and* the subject of the sentence, a single head has to blur them into one average.
# With `H` heads, each head has its own queries and keys and so its own attention pattern; one head can
# track the previous word while another tracks the subject.
#
# It costs nothing extra. Instead of one head of width `D`, we use `H` heads of width `d_k = D // H`:
# the same `W_Q, W_K, W_V` of size `D × D` produce queries, keys and values of width `D`, and we simply
# **cut** each token's vector into `H` slices of `d_k` features, one slice per head. After attention,
# the heads' outputs are glued back into a vector of width `D`, and one more linear layer, `W_O`, mixes
# them.
#
# Here is one token of width `D = 12` cut into `H = 3` heads of `d_k = 4` features, and glued back.
# Feature `f` keeps its place; each head sees only its own slice:

# %%
plot_heads_split(d_model=12, num_heads=3)
plt.show()

# %% [markdown]
# ## 2. The shape flow
#
# ```
# x                          (B, T, D)
# W_Q(x), W_K(x), W_V(x)     (B, T, D)        each
#   view                     (B, T, H, d_k)   cut the features of each token into H slices
#   transpose(1, 2)          (B, H, T, d_k)   heads in front of time: one (T, d_k) matrix per head
# attention per head         (B, H, T, d_k)   weights (B, H, T, T)
#   transpose(1, 2)          (B, T, H, d_k)   back to time first
#   reshape                  (B, T, D)        glue the H slices together
# W_O                        (B, T, D)
# ```
#
# `scaled_dot_product_attention` already works on any leading dimensions, so with `(B, H, T, d_k)`
# inputs it attends within each head independently. That's why the heads go in front of `T`.
#
# **`d_k` must be an int.** `D / H` is a float in Python even when it divides evenly, and `.view` refuses
# floats; use integer division `D // H`. And `D` must be divisible by `H`, otherwise the slices don't
# fit.

# %%
D, H = 16, 4
print("D / H  =", D / H, type(D / H).__name__)
print("D // H =", D // H, type(D // H).__name__)
try:
    torch.zeros(2, 3, D).view(2, 3, H, D / H)
except TypeError as e:
    print("TypeError:", e)

# %% [markdown]
# ### Why `view` then `transpose`, and not just `view(B, H, T, d_k)`
#
# `view` never moves data: it reads the same numbers in memory order with new sizes. Let's make a tiny
# `x` with `T = 3` tokens of `D = 4` features where the entry of token `t`, feature `f` is `10 t + f`,
# so you can read where each number came from. With `H = 2` heads, head 0 should get features 0, 1 and
# head 1 features 2, 3, **of every token**.

# %%
B, T, D, H = 1, 3, 4, 2
d_k = D // H
x = (10 * torch.arange(T)[:, None] + torch.arange(D)).reshape(B, T, D)  # (B, T, D): x[0, t, f] = 10 t + f
print("x:\n", x[0])

right = x.view(B, T, H, d_k).transpose(1, 2)  # (B, H, T, d_k)
print("\nview(B, T, H, d_k).transpose(1, 2), head 0:\n", right[0, 0])
print("head 1:\n", right[0, 1])

wrong = x.view(B, H, T, d_k)  # (B, H, T, d_k) in shape only
print("\nview(B, H, T, d_k), head 0:\n", wrong[0, 0])
print("head 1:\n", wrong[0, 1])

# %% [markdown]
# With `view` + `transpose`, head 0 holds features 0–1 of tokens 0, 1, 2 (rows `0 1`, `10 11`,
# `20 21`): right. The single `view(B, H, T, d_k)` has the right *shape* but head 0's "token 1" is
# features 2–3 of token 0 (`2, 3`), and token 1 ended up split across heads: positions and features are
# mixed. Nothing crashes; the model just silently attends over garbage. That's why shape checks alone
# aren't enough, and the checks compare values.
#
# ### Exercise: `split_heads(x, num_heads)`
#
# Return `x` of shape `(B, T, D)` cut into heads: shape `(B, H, T, d_k)` with `d_k = D // num_heads`,
# where head `h` holds features `h*d_k ... (h+1)*d_k - 1` of every token, exactly as the `view` +
# `transpose` of the demo above.
#
# The check compares your split with the reference on a random `x` whose sizes all differ
# (`B != T != H != d_k`), so that a mix-up of axes cannot hide.
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Two steps, as in the demo: first cut the last dimension into `(H, d_k)`, then move the head axis in
# front of time. Doing it in one reshape gives the right shape and the wrong values (the demo's single
# `view`).
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# Read the sizes with `B, T, D = x.shape`; the width of a head is `D // num_heads`. The cut is a `.view` to
# four sizes, `(B, T, H, d_k)`: time is still dimension 1 and the heads are dimension 2. Then swap those two
# with `.transpose`, which gives `(B, H, T, d_k)`.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `x.view(B, T, num_heads, D // num_heads).transpose(1, 2)`
# </details>

# %% solution="split_heads"
def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Split the features of each token into heads.

    Args:
        x: (B, T, D), with D divisible by num_heads.
        num_heads: the number of heads H.

    Returns:
        (B, H, T, d_k) with d_k = D // H; head h holds features h*d_k ... (h+1)*d_k - 1 of every token.
    """
    ### BEGIN SOLUTION
    B, T, D = x.shape
    d_k = D // num_heads
    return x.view(B, T, num_heads, d_k).transpose(1, 2)  # (B, H, T, d_k)
    ### END SOLUTION


# %% test="split_heads_check"
from tinylm_checks import check_split_heads
check_split_heads(split_heads)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_split_heads(split_heads, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** a result of shape `(B, T, H, d_k)` means the transpose is missing; right shape
# but wrong values usually means the `view(B, H, T, d_k)` shortcut from the demo above.
#
# ## 3. Merging the heads back
#
# `merge_heads` undoes `split_heads`: transpose `(B, H, T, d_k)` back to `(B, T, H, d_k)`, then glue the
# last two dimensions into `H * d_k = D`.
#
# **Careful with `.view` after a transpose.** A transpose doesn't move data either; it only changes the
# order in which PyTorch walks through memory. The result is *not contiguous*, and `.view` can't always
# reinterpret a non-contiguous tensor. Attention's output is a new, contiguous `(B, H, T, d_k)` tensor,
# so after the transpose, `.view` fails:

# %%
heads = torch.arange(24.0).view(1, 2, 3, 4)  # (B, H, T, d_k), contiguous like an attention output
back = heads.transpose(1, 2)  # (B, T, H, d_k)
print("contiguous after transpose?", back.is_contiguous())
try:
    back.view(1, 3, 8)
except RuntimeError as e:
    print("RuntimeError:", e)
print(back.reshape(1, 3, 8))  # (B, T, D): reshape copies when it has to

# %% [markdown]
# Use `.reshape(B, T, H * d_k)`, which copies when it has to, or `.contiguous().view(B, T, H * d_k)`.
#
# ### Exercise: `merge_heads(x)`
#
# Undo `split_heads`: `(B, H, T, d_k) -> (B, T, H * d_k)`, so that `merge_heads(split_heads(x, H))`
# gives `x` back.
#
# The check merges the output of the reference `split_heads` (not contiguous, as inside attention) and
# a fresh contiguous tensor (like the output of `weights @ v`).
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Undo `split_heads` step by step, in reverse order. It cut D into `(H, d_k)` and then moved the heads in
# front of time; so first put time back in front of the heads, then glue the last two dimensions
# together. Mind the warning about `.view` just above.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# Read the four sizes from `x.shape`: `(B, H, T, d_k)`. The heads are dimension 1 and time is dimension
# 2: swap those two, which gives `(B, T, H, d_k)`. Then make the last two dimensions one, of size
# `H * d_k`, with `.reshape` (after the transpose the tensor is not contiguous, so `.view` can fail).
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `x.transpose(1, 2).reshape(B, T, H * d_k)` with `B, H, T, d_k = x.shape`
# </details>

# %% solution="merge_heads"
def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Glue the heads back together: the inverse of split_heads.

    Args:
        x: (B, H, T, d_k).

    Returns:
        (B, T, H * d_k), where features h*d_k ... (h+1)*d_k - 1 of each token come from head h.
    """
    ### BEGIN SOLUTION
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d_k)  # (B, T, D)
    ### END SOLUTION


# %% test="merge_heads_check"
from tinylm_checks import check_merge_heads
check_merge_heads(merge_heads)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_merge_heads(merge_heads, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** it splits a random `x` with the reference `split_heads` and expects your
# `merge_heads` to return `x` exactly. Right shape but wrong values usually means a `reshape` without
# the transpose back.
#
# ## 4. Multi-head self-attention
#
# Put together (Vaswani et al., 2017, §3.2.2):
#
# 1. `q, k, v = W_Q(x), W_K(x), W_V(x)`, each `(B, T, D)`, then `split_heads` each into `(B, H, T, d_k)`;
# 2. `out, weights = scaled_dot_product_attention(q, k, v, mask)`: `(B, H, T, d_k)` and `(B, H, T, T)`.
#    The scale is `1 / sqrt(d_k)`, the width of **one head**, and the function takes it from `q` itself;
# 3. `merge_heads(out)`: `(B, T, D)`; then `W_O`: `(B, T, D)`.
#
# A mask of shape `(T, T)` (e.g. `causal_mask(T)`) broadcasts to `(B, H, T, T)` as is: broadcasting
# lines shapes up from the right, so the mask's two axes meet the query and key axes, and every head of
# every sequence gets the same mask. You pass it on unchanged:

# %%
B, H, T = 2, 3, 4
scores = torch.zeros(B, H, T, T)  # (B, H, T, T): one (T, T) map per head and sequence
mask = causal_mask(T)  # (T, T)
print("(T, T) against (B, H, T, T) ->", tuple(torch.broadcast_shapes(mask.shape, scores.shape)))
masked = scores.masked_fill(~mask, float("-inf"))  # (B, H, T, T)
print("sequence 1, head 2 after masking:\n", masked[1, 2])
print("every head of every sequence got the same mask:", bool((masked.isinf() == ~mask).all()))

# %% [markdown]
# (Notebook 03 builds masks that differ per sequence, for padding: `(B, 1, 1, T)`, with size-1 axes
# where they must broadcast.)
#
# **Why `W_O`?** After the merge, features `h*d_k ... (h+1)*d_k - 1` of each token come from head `h`
# alone: the heads sit side by side but have not talked to each other. `W_O` mixes them, so that every
# output feature can draw on every head. Written per head, `W_O(merge(heads))` is a sum over heads,
# $\sum_h \mathrm{head}_h W_O^{(h)}$, where $W_O^{(h)}$ is the slice of `W_O` that reads head `h`'s
# features:

# %%
D, H = 6, 3
d_k = D // H
W_O = nn.Linear(D, D, bias=False)
heads = torch.randn(1, H, 1, d_k)  # (B, H, T, d_k): one token, three heads
merged = heads.transpose(1, 2).reshape(1, 1, D)  # (B, T, D)
per_head = sum(heads[0, h, 0] @ W_O.weight[:, h * d_k:(h + 1) * d_k].T for h in range(H))  # (D,)
print("W_O(merged)            :", W_O(merged)[0, 0].detach())
print("sum over heads of parts:", per_head.detach())

# %% [markdown]
# Four `nn.Linear(D, D)` layers: $4(D^2 + D)$ parameters, whatever `H` is. Heads don't add parameters,
# they split the existing ones.
#
# ### Exercise: `MultiHeadSelfAttention(d_model, num_heads)`
#
# A module with four layers `W_Q`, `W_K`, `W_V`, `W_O`, each `nn.Linear(d_model, d_model)`, that raises
# `ValueError` (with a message) when `d_model % num_heads != 0`. `forward(x, mask=None)` takes `x` of
# shape `(B, T, D)` and returns `(out (B, T, D), weights (B, H, T, T))`: the three steps above, with the
# imported `scaled_dot_product_attention`, and the weights of every head (not averaged).
#
# The check builds your class with its own sizes, expects `MultiHeadSelfAttention(D + 1, H)` to raise
# `ValueError`, copies its weights into your four layers and compares the outputs without a mask, with a
# causal mask `(T, T)` and with a key-padding mask `(B, 1, 1, T)`; it also counts the parameters and
# checks that gradients reach every layer.
#
# **Difficulty:** ★★★ · **Time:** about 20 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Multi-head attention is H narrow attentions side by side, over the same tokens: project, split into
# heads, attend, merge, project. Your `split_heads` and `merge_heads` do the reshaping (or write their
# one-liners again), and the `scaled_dot_product_attention` of notebook 01 (imported here) runs on all
# heads at once, because it works on any leading dimensions. The mask needs no work: pass it on as it is,
# it already broadcasts to `(B, H, T, T)`.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - `__init__`, in this order: `nn.Module`'s `__init__` (through `super()`); the divisibility test, a
#   `ValueError` with a message when `d_model % num_heads != 0`; store `self.num_heads` and `self.d_k`, the
#   width of one head, `d_model // num_heads` (an int); create the four layers `W_Q`, `W_K`, `W_V`, `W_O`,
#   each an `nn.Linear` from `d_model` to `d_model`.
# - `forward`: apply `W_Q`, `W_K`, `W_V` to `x` and split each result into `self.num_heads` heads:
#   `(B, H, T, d_k)`. The imported `scaled_dot_product_attention` takes them and the mask, and returns the
#   output `(B, H, T, d_k)` and the weights `(B, H, T, T)`. Merge the output back to `(B, T, D)`, apply
#   `W_O`, and return it with the weights of every head (not averaged).
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `q = split_heads(self.W_Q(x), self.num_heads)` (and `k`, `v` likewise);
# `out, weights = scaled_dot_product_attention(q, k, v, mask)`;
# `return self.W_O(merge_heads(out)), weights`
# </details>

# %% solution="multi_head_attention"
class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention.

    Args:
        d_model: the width D of a token vector.
        num_heads: the number of heads H; each head has width d_k = D // H.

    Attributes:
        W_Q, W_K, W_V, W_O: nn.Linear(d_model, d_model) each, so 4 (D^2 + D) parameters in all.

    forward(x, mask=None):
        x: (B, T, D); mask: optional bool, broadcastable to (B, H, T, T), True = may attend.
        Returns (out, weights): out (B, T, D), weights (B, H, T, T).

    Raises:
        ValueError: if d_model is not divisible by num_heads.
    """

    def __init__(self, d_model: int, num_heads: int):
        ### BEGIN SOLUTION
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)
        ### END SOLUTION

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        ### BEGIN SOLUTION
        # split_heads / merge_heads written out, so that this exercise is graded on its own
        # (a learner may simply call their split_heads and merge_heads).
        B, T, D = x.shape
        H, d_k = self.num_heads, self.d_k
        q = self.W_Q(x).view(B, T, H, d_k).transpose(1, 2)  # (B, H, T, d_k)
        k = self.W_K(x).view(B, T, H, d_k).transpose(1, 2)  # (B, H, T, d_k)
        v = self.W_V(x).view(B, T, H, d_k).transpose(1, 2)  # (B, H, T, d_k)
        out, weights = scaled_dot_product_attention(q, k, v, mask)  # (B, H, T, d_k), (B, H, T, T)
        out = out.transpose(1, 2).reshape(B, T, D)  # (B, T, D): heads merged back
        return self.W_O(out), weights  # (B, T, D), (B, H, T, T)
        ### END SOLUTION


# %% test="multi_head_attention_check"
from tinylm_checks import check_multi_head_attention
check_multi_head_attention(MultiHeadSelfAttention)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_multi_head_attention(MultiHeadSelfAttention, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** the `tried:` line says which input failed (no mask, causal or padding).
# `likely mistake:` recognises, among others, a missing `W_O`, weights averaged over heads, dividing by
# `sqrt(d_model)` instead of `sqrt(d_k)`, split or merge without the transpose, and a mask inverted or
# reshaped on its way to `scaled_dot_product_attention`. When the weights are right and the output is
# not, the problem is after the attention: the merge or `W_O`. If the error is a `view` failure, look
# at `merge_heads` (section 3).
#
# The parameter count, for `D = 16`, `H = 4`:

# %%
D, H = 16, 4
mha = MultiHeadSelfAttention(D, H)
n_params = sum(p.numel() for p in mha.parameters())
print(f"{n_params} parameters; 4 (D^2 + D) = {4 * (D * D + D)}")

# %% [markdown]
# ## 5. Same as PyTorch's `nn.MultiheadAttention`
#
# PyTorch's layer has the same four projections, stored differently: `in_proj_weight` is `W_Q`, `W_K`,
# `W_V` stacked into one `(3D, D)` matrix (and `in_proj_bias` likewise, `(3D,)`), and `out_proj` is
# `W_O`. Copy your weights in and the two layers should agree to within float32 rounding (often exactly).
#
# Two details: `batch_first=True` makes it take `(B, T, D)` like ours, and `average_attn_weights=False`
# makes it return one map per head, `(B, H, T, T)`, instead of their average.
#
# **Watch the mask.** `nn.MultiheadAttention`'s bool `attn_mask` uses the **opposite** convention: True
# means "may **not** attend". So we pass `~causal_mask(T)`. (The functional
# `F.scaled_dot_product_attention` uses True = may attend, like this course.) Mixing the two up is a
# classic bug: it gives a model that can only see the future.

# %%
B, T = 2, 6
torch_mha = nn.MultiheadAttention(D, H, batch_first=True)
with torch.no_grad():
    torch_mha.in_proj_weight.copy_(torch.cat([mha.W_Q.weight, mha.W_K.weight, mha.W_V.weight]))  # (3D, D)
    torch_mha.in_proj_bias.copy_(torch.cat([mha.W_Q.bias, mha.W_K.bias, mha.W_V.bias]))  # (3D,)
    torch_mha.out_proj.weight.copy_(mha.W_O.weight)  # (D, D)
    torch_mha.out_proj.bias.copy_(mha.W_O.bias)  # (D,)
print("parameters:", sum(p.numel() for p in torch_mha.parameters()), "(PyTorch) vs", n_params, "(yours)")

x = torch.randn(B, T, D)  # (B, T, D)
with torch.no_grad():
    out, w = mha(x)  # (B, T, D), (B, H, T, T)
    out_t, w_t = torch_mha(x, x, x, need_weights=True, average_attn_weights=False)
    print(f"no mask:     out max abs diff = {(out - out_t).abs().max():.2e}, weights max abs diff = {(w - w_t).abs().max():.2e}")

    out, w = mha(x, causal_mask(T))
    out_t, w_t = torch_mha(x, x, x, attn_mask=~causal_mask(T), need_weights=True, average_attn_weights=False)
    print(f"causal mask: out max abs diff = {(out - out_t).abs().max():.2e}, weights max abs diff = {(w - w_t).abs().max():.2e}")

# %% [markdown]
# ## 6. One map per head
#
# The same sentence as in notebook 01, through a multi-head layer with a causal mask. The layer is
# untrained, so the patterns mean nothing yet; we scale `W_Q` and `W_K` up by 3 only to make the
# differences between heads easier to see. Each head already has its **own** pattern: that's the point
# of several heads. (Notebook 10 shows the heads of a trained model.)

# %%
torch.manual_seed(0)
tokens = "the cat sat on the mat".split()
vocab = sorted(set(tokens))
ids = torch.tensor([[vocab.index(t) for t in tokens]])  # (1, T)
x = nn.Embedding(len(vocab), D)(ids).detach()  # (1, T, D)
T = len(tokens)

mha = MultiHeadSelfAttention(D, H)
with torch.no_grad():
    mha.W_Q.weight.mul_(3)
    mha.W_K.weight.mul_(3)
    _, weights = mha(x, causal_mask(T))  # (1, H, T, T)

fig, axes = plt.subplots(1, H, figsize=(4.2 * H, 4))
for h in range(H):
    plot_attention(weights[0, h], tokens, title=f"head {h}", ax=axes[h])
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Summary
#
# - `H` heads of width `d_k = D // H` (an int; `D % H` must be 0) share the `D × D` projections by
#   splitting their outputs: $4(D^2 + D)$ parameters, whatever `H` is.
# - Split: `view(B, T, H, d_k).transpose(1, 2)`; merge: `transpose(1, 2).reshape(B, T, D)`. A `view`
#   alone has the right shape and the wrong data.
# - Attention runs per head on `(B, H, T, d_k)`, scaled by `1 / sqrt(d_k)`; the weights are
#   `(B, H, T, T)`.
# - `nn.MultiheadAttention` computes the same thing, but its bool `attn_mask` means True = **blocked**.
#
# **Next:** notebook 03 is about masks: causal masks, padding, and what happens when a row has nothing
# left to attend to.
