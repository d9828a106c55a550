# %% [markdown]
# # 01 · Attention
#
# Attention is the one operation that lets tokens in a Transformer exchange information. In this
# notebook you build it in four exercises:
#
# 1. `attention_scores(q, k)`: how well each query matches each key;
# 2. `scaled_dot_product_attention(q, k, v, mask=None)`: scores → weights → a weighted average of values;
# 3. `SelfAttention(d_model)`: a module that computes queries, keys and values from the same input;
# 4. `causal_mask(T)`: the mask that stops a language model from looking at the future.
#
# Shapes are written the way the field writes them: `B` batch size, `T` sequence length (number of
# tokens), `D` = `d_model` the width of a token vector, `d_k` the width of a query/key.

# %%
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import (check_attention_scores, check_causal_mask, check_scaled_dot_product_attention,
                           check_self_attention, plot_attention)

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. Queries, keys and values: a library
#
# Think of a library.
#
# - A **query** is what you're looking for: "a book about cooking".
# - The **keys** are the catalogue labels, one per book: "cooking", "football", "food for athletes".
# - The **values** are the books' contents, what you actually take home.
#
# You compare your query with every label. A real library hands you the one best book; attention hands
# you a **blend** of all the books, each weighted by how well its label matches your query. The match is
# a dot product $q \cdot k$, and the weights are a softmax of the matches, so they are positive and sum
# to 1.
#
# Here it is by hand. The labels live in a 2-D "topic space" (cooking, sport); the contents are one-hot
# vectors so you can read the blend directly in the output.

# %%
k = torch.tensor([[1.0, 0.0],   # book 0: cooking
                  [0.0, 1.0],   # book 1: football
                  [0.7, 0.7]])  # book 2: food for athletes       k: (T_k=3, d_k=2)
v = torch.tensor([[1.0, 0.0, 0.0],   # contents of book 0
                  [0.0, 1.0, 0.0],   # contents of book 1
                  [0.0, 0.0, 1.0]])  # contents of book 2           v: (T_k=3, d_v=3)
q = torch.tensor([[2.0, 0.0]])  # "I want cooking"                  q: (T_q=1, d_k=2)

scores = q @ k.T  # (1, 3): one score per book
weights = torch.softmax(scores, dim=-1)  # (1, 3): positive, sums to 1
out = weights @ v  # (1, 3): the blend of contents
print("scores: ", scores)
print("weights:", weights)
print("out:    ", out)

# %% [markdown]
# The cookbook wins (weight 0.59), "food for athletes" gets a good share (0.33) because its label is
# half about cooking, and the football book gets almost nothing.
#
# Nothing changes with several queries at once: stack them as rows of `q`. Row `i` of the scores
# belongs to query `i`, column `j` to key `j`, so `q @ k.T` has shape `(T_q, T_k)`.

# %%
q = torch.tensor([[2.0, 0.0],   # cooking
                  [0.0, 2.0],   # sport
                  [2.0, 2.0]])  # both                               q: (T_q=3, d_k=2)
scores = q @ k.T  # (3, 3) = (T_q, T_k)
weights = torch.softmax(scores, dim=-1)  # (3, 3): each row sums to 1
print(weights)
print("row sums:", weights.sum(dim=-1))

# %% [markdown]
# ### Batches: `.transpose(-2, -1)` instead of `.T`
#
# In a model, queries and keys come in batches: `q` has shape `(B, T_q, d_k)` (later `(B, H, T_q, d_k)`
# with heads). We want `q @ kᵀ` for every batch element, where `kᵀ` swaps only the **last two**
# dimensions. `k.transpose(-2, -1)` does exactly that, whatever the leading dimensions are; `@` then
# multiplies matrix by matrix over all leading dimensions at once. (`.T` is only for 2-D tensors.)

# %%
q = torch.randn(2, 5, 4)  # (B, T_q, d_k)
k = torch.randn(2, 7, 4)  # (B, T_k, d_k)
print(k.transpose(-2, -1).shape)  # (B, d_k, T_k)
print((q @ k.transpose(-2, -1)).shape)  # (B, T_q, T_k)

# %% [markdown]
# ## 2. Why divide by $\sqrt{d_k}$
#
# A dot product of two vectors of width $d_k$ is a sum of $d_k$ products. If the entries are random with
# variance 1, each product has variance 1 and the sum has variance $d_k$: the wider the vectors, the
# bigger the scores.

# %%
for d_k in (4, 64, 1024):
    dots = (torch.randn(2000, d_k) * torch.randn(2000, d_k)).sum(dim=-1)  # 2000 dot products q.k
    print(f"d_k = {d_k:4}:  var(q.k) = {dots.var():7.1f}   var(q.k / sqrt(d_k)) = {(dots / math.sqrt(d_k)).var():.2f}")

# %% [markdown]
# Big scores are a problem for the softmax: it becomes almost one-hot, one key takes all the weight,
# and the gradients through the other keys vanish, so the model learns slowly. Dividing by
# $\sqrt{d_k}$ brings the variance back to about 1 whatever $d_k$ is:

# %%
s = torch.randn(6)  # six scores with variance 1
print("scores with variance 1:   ", torch.softmax(s, dim=-1))
print("scores with variance 1024:", torch.softmax(s * math.sqrt(1024), dim=-1))

# %% [markdown]
# This is the *scaled* in scaled dot-product attention (Vaswani et al., 2017):
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V$$
#
# ### Exercise: `attention_scores(q, k)`
#
# Return the scaled scores `q @ kᵀ / sqrt(d_k)`. `q` has shape `(..., T_q, d_k)` and `k` has shape
# `(..., T_k, d_k)`, where `...` is any number of leading dimensions (none, `B`, or `B, H`); the result
# has shape `(..., T_q, T_k)`: one row per query, one column per key.
#
# The check tries 3-D inputs, then 4-D ones (the same code must work for both), with `T_q != T_k` so
# that a mix-up of queries and keys shows in the shape, and scores in the tens.
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Each score is the dot product of one query with one key, and one matrix product computes them all at
# once: `(..., T_q, d_k)` times `(..., d_k, T_k)` is `(..., T_q, T_k)`. So turn the keys into columns
# (transpose them), multiply, and divide every score by $\sqrt{d_k}$, as in the formula above.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# `d_k` is the width of one query, the last dimension of `q` (`q.shape[-1]`). The transpose must swap only
# the last two dimensions of `k`, whatever comes before them: give `k.transpose` the dimensions counted
# from the end, `-2` and `-1`, and the same line works for 3-D and 4-D inputs. `@` multiplies the last two
# dimensions and keeps the leading ones. `d_k` is a Python int, so its square root is `math.sqrt`'s
# (`math` is imported).
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])`, or with `d_k = q.shape[-1]` first:
# `return q @ k.transpose(-2, -1) / math.sqrt(d_k)`.
# </details>

# %% solution="attention_scores"
def attention_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Scaled dot products between every query and every key.

    Args:
        q: queries, shape (..., T_q, d_k).
        k: keys, shape (..., T_k, d_k); the leading dimensions match those of q.

    Returns:
        Scores of shape (..., T_q, T_k): q @ k^T / sqrt(d_k).
    """
    ### BEGIN SOLUTION
    d_k = q.shape[-1]
    return q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., T_q, T_k)
    ### END SOLUTION


# %% test="attention_scores_check"
from tinylm_checks import check_attention_scores
check_attention_scores(attention_scores)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_attention_scores(attention_scores, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails**, look at the shapes in the `tried:` line (the check uses `T_q != T_k` on
# purpose, so swapping `q` and `k` shows up as a wrong shape) and at `likely mistake:`: a missing or
# wrong scale is recognised and named.

# %% [markdown]
# ## 3. From scores to an output, and masks
#
# The rest of attention is what you did by hand in section 1:
#
# 1. `weights = softmax(scores)` over the **keys**, i.e. the last dimension (`dim=-1`): each query's
#    row of weights sums to 1. (A softmax over `dim=-2` would make each *key's* column sum to 1, which
#    means nothing here.)
# 2. `out = weights @ v`: `(..., T_q, T_k) @ (..., T_k, d_v) -> (..., T_q, d_v)`, one blend of values
#    per query.
#
# ### Masks: True = may attend
#
# Sometimes a query must not look at some keys: the future, in a language model (section 5), or
# padding. We pass a **bool mask** that broadcasts to the scores' shape `(..., T_q, T_k)`, where
# `True` means "this query **may** attend to this key". This is PyTorch's convention for bool masks in
# `torch.nn.functional.scaled_dot_product_attention` (there, `attn_mask` True = "takes part in
# attention"), so our function and PyTorch's can be swapped.
#
# To forbid a key, set its score to $-\infty$ **before** the softmax: $e^{-\infty} = 0$, so it gets
# weight exactly 0 and the allowed keys share all of the weight. `scores.masked_fill(cond, value)`
# returns a copy of `scores` with `value` wherever `cond` is True; we want to fill where the mask is
# **False**, i.e. where `~mask` is True:

# %%
scores = torch.tensor([[2.0, 1.0, 0.5, -1.0]])  # (1, 4): one query, four keys
mask = torch.tensor([[True, True, False, True]])  # (1, 4): key 2 is forbidden

masked = scores.masked_fill(~mask, float("-inf"))  # (1, 4)
print("masked scores:         ", masked)
print("softmax(masked scores):", torch.softmax(masked, dim=-1))

# %% [markdown]
# Two tempting alternatives are wrong:

# %%
after = torch.softmax(scores, dim=-1) * mask
print("mask AFTER the softmax:  ", after, f"<- the row sums to {after.sum().item():.3f}, not 1")
print("scores MULTIPLIED by mask:", torch.softmax(scores * mask, dim=-1), "<- a score of 0 still gets weight")

# %% [markdown]
# One corner case: if **every** key of a row is masked, the row is all $-\infty$ and the softmax gives
# $0/0$ = `NaN`. Causal masks never do that, but padding can (notebook 03). The course's own
# implementation (the *reference* the checks compare your code with) turns such rows into zero weights
# with `weights.nan_to_num(0.0)` after the softmax; do the same. The check includes such a row and
# fails on a `NaN`.
#
# ### Exercise: `scaled_dot_product_attention(q, k, v, mask=None)`
#
# Return the pair `(out, weights)`: `weights` is the softmax of the scaled scores over the keys,
# shape `(..., T_q, T_k)`, with masked keys (where `mask` is False) at exactly 0; `out = weights @ v`,
# shape `(..., T_q, d_v)`. A query whose keys are all masked gets all-zero weights (and so a zero
# output), never `NaN`. `mask` is optional, bool, and broadcasts to the scores.
#
# The check tries 3-D and 4-D inputs without a mask, then a key-padding mask `(B, 1, 1, T_k)`, a random
# mask `(B, 1, T_q, T_k)` (broadcast over the heads), a mask in which one query may attend to no key,
# and very large scores (where only $-\infty$ still masks).
#
# **Difficulty:** ★★☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Four steps: the scores (your `attention_scores`, or its one line again); if there is a mask, the scores
# of the forbidden keys set to $-\infty$, *before* the softmax; the softmax over the keys; the weighted sum
# of the values. Then the corner case: a row that is all $-\infty$ comes out of the softmax as `NaN`
# ($0/0$), and must become a row of zeros.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - The mask, only when `mask` is not `None`: `masked_fill` fills where its condition is True, and you want
#   to fill where the mask is **False**, so its condition is the mask inverted with `~`; the value is
#   `float("-inf")`.
# - The softmax: `torch.softmax` over the last dimension of the `(..., T_q, T_k)` scores, the keys
#   (`dim=-1`).
# - The corner case, only when there is a mask: right after the softmax, turn the weights' `NaN`s into 0
#   with the tensor method `nan_to_num`.
# - The output: a matrix product, weights `(..., T_q, T_k)` times values `(..., T_k, d_v)`. Return the pair,
#   the output first.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])`;
# `scores = scores.masked_fill(~mask, float("-inf"))` when `mask is not None`;
# `weights = torch.softmax(scores, dim=-1)`, then `weights = weights.nan_to_num(0.0)` when there is a
# mask; `return weights @ v, weights`.
# </details>

# %% solution="scaled_dot_product_attention"
def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d_k)) v, returning the weights too.

    Args:
        q: queries, shape (..., T_q, d_k).
        k: keys, shape (..., T_k, d_k).
        v: values, shape (..., T_k, d_v).
        mask: optional bool tensor broadcastable to (..., T_q, T_k); True = may attend.
            Masked scores are set to -inf before the softmax.

    Returns:
        (out, weights): out has shape (..., T_q, d_v); weights has shape (..., T_q, T_k) and each row
        sums to 1 over the keys (a row whose keys are all masked is all zeros).
    """
    ### BEGIN SOLUTION
    # Written out rather than calling attention_scores, so that this exercise is graded on its own.
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # (..., T_q, T_k)
    weights = torch.softmax(scores, dim=-1)  # (..., T_q, T_k), softmax over the keys
    if mask is not None:
        weights = weights.nan_to_num(0.0)  # a row with every key masked: 0/0 -> 0
    out = weights @ v  # (..., T_q, d_v)
    return out, weights
    ### END SOLUTION


# %% test="scaled_dot_product_attention_check"
from tinylm_checks import check_scaled_dot_product_attention
check_scaled_dot_product_attention(scaled_dot_product_attention)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_scaled_dot_product_attention(scaled_dot_product_attention, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails**, the `tried:` line says which of its inputs failed. "A row of the attention
# weights does not sum to 1" usually means the softmax runs over the wrong dimension or the mask is
# applied after it; "a masked key got attention weight" means the mask is ignored, inverted, used on
# the wrong axis or multiplied in; "a query that may attend to no key got non-zero weights" is about
# the corner case above.
#
# ### Compare with PyTorch
#
# PyTorch has this function built in, `torch.nn.functional.scaled_dot_product_attention`, with the same
# mask convention. It returns only the output (it never builds the weights if it can avoid it; that is
# how fast attention kernels save memory). Your output should agree up to float32 rounding:

# %%
q = torch.randn(2, 3, 5, 4)  # (B, H, T_q, d_k)
k = torch.randn(2, 3, 7, 4)  # (B, H, T_k, d_k)
v = torch.randn(2, 3, 7, 6)  # (B, H, T_k, d_v)
mask = torch.rand(2, 1, 5, 7) < 0.7  # (B, 1, T_q, T_k), broadcast over heads
mask[..., 0] = True  # every query may attend to at least one key

mine, _ = scaled_dot_product_attention(q, k, v)
print("no mask:   max abs diff =", (mine - F.scaled_dot_product_attention(q, k, v)).abs().max().item())
mine, _ = scaled_dot_product_attention(q, k, v, mask)
print("with mask: max abs diff =", (mine - F.scaled_dot_product_attention(q, k, v, attn_mask=mask)).abs().max().item())

# %% [markdown]
# ## 4. Self-attention
#
# In **self**-attention the queries, keys and values all come from the same sequence `x` of shape
# `(B, T, D)`: each token asks a question (its query), advertises what it holds (its key) and offers
# content (its value). Three learned linear maps make them:
#
# $$q = x W_Q + b_Q, \qquad k = x W_K + b_K, \qquad v = x W_V + b_V$$
#
# In PyTorch each is an `nn.Linear(D, D)`; applied to `x (B, T, D)` it acts on the last dimension and
# returns `(B, T, D)`. An `nn.Linear(D, D)` holds a `D × D` weight and a bias of `D`, so the module has
# $3(D^2 + D)$ parameters.
#
# ### Exercise: `SelfAttention(d_model)`
#
# A module with three layers `W_Q`, `W_K`, `W_V`, each `nn.Linear(d_model, d_model)` with its default
# bias, and no other parameters. `forward(x, mask=None)` takes `x` of shape `(B, T, D)` and returns
# `(out (B, T, D), weights (B, T, T))`: attention over the queries, keys and values it computes from
# `x`, with the mask (if any) applied as in section 3.
#
# The check builds `SelfAttention(D)` itself, copies its own weights into your three layers (so the
# names must be exactly these) and compares the outputs without a mask, with a causal mask and with a
# key-padding mask; it also counts the parameters and checks that gradients reach every layer.
#
# **Difficulty:** ★★☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Self-attention is section 3's attention with `q`, `k` and `v` all made from the same `x`, by three
# learned layers. So the module owns the three layers and nothing else, and `forward` only projects `x`
# three times: you don't need to write attention again. Like every `nn.Module`, it must run the parent
# class's `__init__` before it creates any layer.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - `__init__`: its first line calls `nn.Module`'s `__init__` (through `super()`); without it, the first
#   layer you assign raises `AttributeError: cannot assign module before Module.__init__() call`. Then
#   three attributes named exactly `W_Q`, `W_K`, `W_V`, each an `nn.Linear` from `d_model` to `d_model`
#   with its default bias.
# - `forward`: each layer applied to `x` gives `(B, T, D)`: these are the `q`, `k`, `v` of section 3. Hand
#   them, with `mask` unchanged, to your `scaled_dot_product_attention` once that function passes its
#   check. It already returns the pair `(out (B, T, D), weights (B, T, T))`: return what it returns.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `super().__init__()`, then `self.W_Q = nn.Linear(d_model, d_model)` (and the same for `W_K`, `W_V`);
# in `forward`, `return scaled_dot_product_attention(self.W_Q(x), self.W_K(x), self.W_V(x), mask)`.
# </details>

# %% solution="self_attention"
class SelfAttention(nn.Module):
    """Single-head self-attention.

    Args:
        d_model: the width D of a token vector.

    Attributes:
        W_Q, W_K, W_V: nn.Linear(d_model, d_model) each, so 3 (D^2 + D) parameters in all.

    forward(x, mask=None):
        x: (B, T, D); mask: optional bool, broadcastable to (B, T, T), True = may attend.
        Returns (out, weights): out (B, T, D), weights (B, T, T).
    """

    def __init__(self, d_model: int):
        ### BEGIN SOLUTION
        super().__init__()
        self.d_model = d_model
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        ### END SOLUTION

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        ### BEGIN SOLUTION
        q = self.W_Q(x)  # (B, T, D)
        k = self.W_K(x)  # (B, T, D)
        v = self.W_V(x)  # (B, T, D)
        # The same steps as scaled_dot_product_attention, written out so that this exercise is graded
        # on its own (a learner may simply call their scaled_dot_product_attention).
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T, T), d_k = D for one head
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))  # (B, T, T)
        weights = torch.softmax(scores, dim=-1)  # (B, T, T)
        if mask is not None:
            weights = weights.nan_to_num(0.0)  # (B, T, T)
        return weights @ v, weights  # (B, T, D), (B, T, T)
        ### END SOLUTION


# %% test="self_attention_check"
from tinylm_checks import check_self_attention
check_self_attention(SelfAttention)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_self_attention(SelfAttention, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** the check builds `SelfAttention(d_model)` itself, copies its own weights into
# your `W_Q`, `W_K`, `W_V` and compares outputs, so the attribute names and sizes must be exactly as
# above. A wrong parameter count means a missing or extra layer (or `bias=False`); "no gradient reaches
# W_V" means the output is not computed through that layer.
#
# The parameter count, for `D = 16`:

# %%
D = 16
attn = SelfAttention(D)
n_params = sum(p.numel() for p in attn.parameters())
print(f"{n_params} parameters; 3 (D^2 + D) = {3 * (D * D + D)}")

# %% [markdown]
# ### Looking at the weights
#
# Let's feed a sentence. Each distinct word gets a random vector from an `nn.Embedding` (a learnable
# lookup table; notebook 08 explains it), so `x` has shape `(1, T, D)`. `plot_attention(weights,
# tokens)` draws one `(T, T)` map: row = the query token, column = the key token it attends to.
#
# On the left, a newly initialised (untrained) layer. On the right, the same layer with `W_Q` and `W_K`
# set to the identity: now each token's query is its own embedding, so a token looks for tokens *like
# itself*.

# %%
torch.manual_seed(0)
tokens = "the cat sat on the mat".split()
vocab = sorted(set(tokens))  # ['cat', 'mat', 'on', 'sat', 'the']
ids = torch.tensor([[vocab.index(t) for t in tokens]])  # (1, T)
embedding = nn.Embedding(len(vocab), D)
x = embedding(ids).detach()  # (1, T, D)

attn = SelfAttention(D)
with torch.no_grad():
    _, w_random = attn(x)  # (1, T, T)
    for layer in (attn.W_Q, attn.W_K):
        layer.weight.copy_(torch.eye(D))
        layer.bias.zero_()
    _, w_identity = attn(x)  # (1, T, T)

fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
plot_attention(w_random[0], tokens, title="untrained", ax=axes[0])
plot_attention(w_identity[0], tokens, title="W_Q = W_K = identity", ax=axes[1])
plt.tight_layout()
plt.show()

# %% [markdown]
# Two things to notice:
#
# - On the right, each token attends mostly to itself, and the two "the" split their attention between
#   each other: same embedding, same key.
# - In **both** maps, the rows of the two "the" are identical. Attention sees a set of vectors, not a
#   sequence: it has no idea that one "the" is first and the other fifth. Notebook 04 adds positions.

# %% [markdown]
# ## 5. The causal mask
#
# A language model predicts the next token from the previous ones. While training, it reads a whole
# sentence at once and predicts every next token in parallel, so position `t` must not peek at positions
# after `t`: that would be reading the answer. The **causal mask** lets query `t` attend to keys
# `0, 1, …, t` only: True on and below the diagonal, False above it.
#
# `torch.tril` (triangle, lower) keeps the lower triangle of a matrix, diagonal included, and sets the
# rest to 0 (False for a bool tensor):

# %%
print(torch.tril(torch.ones(4, 4)))
print(torch.tril(torch.ones(4, 4, dtype=torch.bool)))

# %% [markdown]
# Row `t` is query `t`; it is True in columns `0..t`. The diagonal is kept: a token may attend to
# itself. A `(T, T)` mask broadcasts against scores `(B, T, T)` (and later `(B, H, T, T)`).
#
# ### Exercise: `causal_mask(T)`
#
# Return a bool tensor of shape `(T, T)` that is True on and below the diagonal. It must be a `bool`
# tensor: a float mask of 0s and 1s is not a bool mask, and `~` on it raises a TypeError.
#
# The check tries `T = 5`, `T = 1` and a long `T = 40`.
#
# **Difficulty:** ★☆☆ · **Time:** about 3 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Query `t` may see keys `0..t`: the diagonal and everything below it. Start from a `(T, T)` tensor of
# `True` and keep its lower triangle, as in the cell above.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# Two functions, one inside the other: `torch.ones` with the sizes `T, T` and a bool `dtype` (without it the
# tensor is float, and so is the mask), then `torch.tril` of that, which keeps the diagonal. The second
# line the cell above prints does it for `T = 4`.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `torch.tril(torch.ones(T, T, dtype=torch.bool))`
# </details>

# %% solution="causal_mask"
def causal_mask(T: int) -> torch.Tensor:
    """The causal mask of a decoder: query t may attend to keys 0..t.

    Args:
        T: the sequence length.

    Returns:
        A bool tensor of shape (T, T), True on and below the diagonal (True = may attend).
    """
    ### BEGIN SOLUTION
    return torch.tril(torch.ones(T, T, dtype=torch.bool))  # (T, T)
    ### END SOLUTION


# %% test="causal_mask_check"
from tinylm_checks import check_causal_mask
check_causal_mask(causal_mask)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_causal_mask(causal_mask, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails**, compare the `expected:` and `got:` rows: an upper-triangular mask (`triu`), a
# masked diagonal and an inverted mask are recognised by name.
#
# Now the same sentence through the identity layer from above, with the causal mask. The upper triangle
# is exactly 0; "the" at position 0 can only see itself, while the "the" at position 4 still finds the
# first one, which is in its past.

# %%
T = len(tokens)
with torch.no_grad():
    out_causal, w_causal = attn(x, causal_mask(T))  # (1, T, D), (1, T, T)
print("largest weight above the diagonal:", w_causal[0].triu(diagonal=1).abs().max().item())
plot_attention(w_causal[0], tokens, title="with the causal mask")
plt.show()

# %% [markdown]
# The promise of the mask: changing a token can only change the outputs at its own position and after.
# Replace the last word and compare:

# %%
x_changed = x.clone()
x_changed[0, -1] = torch.randn(D)  # a different last token
with torch.no_grad():
    out_changed, _ = attn(x_changed, causal_mask(T))
print("change per position:", (out_changed - out_causal).abs().amax(dim=-1)[0])

# %% [markdown]
# Only the last position changed. Without the mask, every position would have.
#
# ## Summary
#
# - Scores `q @ kᵀ / sqrt(d_k)`, shape `(..., T_q, T_k)`; the scale keeps their variance near 1.
# - Weights = softmax over the keys (`dim=-1`), each row sums to 1; `out = weights @ v`.
# - Masks are bool, True = may attend; forbidden scores become `-inf` **before** the softmax.
# - Self-attention: `q, k, v` are three linear maps of the same `x`, $3(D^2 + D)$ parameters.
# - The causal mask is `tril`: position `t` sees `0..t`.
#
# **Next:** notebook 02 runs several attention heads side by side.
