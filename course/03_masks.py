# %% [markdown]
# # 03 · Masks: padding, combining, and a query with nothing to see
#
# A language model trains on **batches** of sentences, and sentences have different lengths. To stack
# them into one `(B, T)` tensor we pad the short ones, and then we must make sure that no token ever
# attends to padding, and that no token in a decoder sees the future. By the end of this notebook you
# will be able to:
#
# 1. build the **key-padding mask** of a batch, for right and left padding: `key_padding_mask`;
# 2. **combine** it with the causal mask: `combine_masks`;
# 3. write the **masked softmax** that gives masked keys exactly zero weight and never returns `NaN`,
#    even for a query that may attend to no key at all, and whatever the scores: `masked_softmax`.
#
# Conventions, as in notebooks 01 and 02: masks are `bool`, **True = may attend**, and they broadcast
# against multi-head scores of shape `(B, H, T_q, T_k)`.

# %%
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_combine_masks, check_key_padding_mask, check_masked_softmax, plot_attention
from tinylm_solutions.attention import causal_mask  # notebook 01's mask, the course's version
from tinylm_solutions.multihead import MultiHeadSelfAttention  # notebook 02's layer, the course's version

_ = torch.manual_seed(0)

# %% [markdown]
# **About the imports.** `MultiHeadSelfAttention` and `causal_mask` are the course's reference versions
# of what you wrote in notebooks 01 and 02 (same names, same behaviour), so that this notebook stands on
# its own. This notebook's own exercises have no such stand-in: the demos after an exercise use your
# version, so finish each exercise before running the cells below it.
#
# ## 1. Padding a batch
#
# Three "sentences" of token ids, of lengths 4, 6 and 2. To stack them we append a padding id (here 0)
# until each has `T = 6` tokens. That is **right padding**: real tokens first, padding after.

# %%
PAD = 0
sentences = [[5, 8, 2, 9], [3, 3, 7, 1, 4, 6], [7, 2]]
T = max(len(s) for s in sentences)
lengths = torch.tensor([len(s) for s in sentences])  # (B,)
right = torch.tensor([s + [PAD] * (T - len(s)) for s in sentences])  # (B, T)
left = torch.tensor([[PAD] * (T - len(s)) + s for s in sentences])  # (B, T)
print("lengths:", lengths.tolist())
print("right padding:\n", right)
print("left padding:\n", left)

# %% [markdown]
# **Left padding** puts the padding first. It is what batched *generation* uses: every sequence then
# ends at the same column, so the next token of every row is appended at position `T` (Hugging Face
# tokenizers call this `padding_side="left"`).
#
# Padding is not text: a real token must not attend to a padding token, or its output would depend on
# how long the *other* sentences of the batch are. So we mask padding **keys**.
#
# ## 2. Which axis the mask goes on
#
# Multi-head scores have shape `(B, H, T_q, T_k)`: batch, head, query, key. A padding mask says, for each
# sequence `b`, which **keys** are real. It is the same for every head and every query of that sequence,
# so it has size 1 on those axes: `(B, 1, 1, T_k)`. Broadcasting copies it across heads and queries:

# %%
B, H = 3, 2
print("(B, 1, 1, T) against (B, H, T, T):", torch.broadcast_shapes((B, 1, 1, T), (B, H, T, T)))
for wrong in [(B, T), (B, 1, T)]:
    try:
        print(f"{wrong} against (B, H, T, T):", torch.broadcast_shapes(wrong, (B, H, T, T)))
    except RuntimeError as e:
        print(f"{wrong} against (B, H, T, T): RuntimeError:", e)

# %% [markdown]
# Broadcasting lines shapes up **from the right**. A `(B, T)` mask is read as `(1, 1, B, T)`: its batch
# axis lands on the *queries*. With `B = 3` and `T = 6` that fails loudly, which is lucky; in a batch
# where `B == T` it would run and silently give sequence `i`'s padding to query `i` of every sequence. A
# `(B, 1, T)` mask lands its batch axis on the *heads* (`(1, B, 1, T)`): it works for single-head
# scores `(B, T, T)` and breaks, or is silently wrong when `B == H`, with several heads. `(B, 1, 1, T)`
# is right for every `B`, `H` and `T`.
#
# And a padding mask goes on the **last** axis, the keys. `(B, 1, T, 1)` would hide whole *rows*
# (queries) instead of columns (keys): padded positions would still be attended to.
#
# ### Exercise 1: `key_padding_mask(lengths, T, padding_side="right")`
#
# Return a bool tensor of shape `(B, 1, 1, T)`: `True` where the key is a real token. Sequence `b` has
# `lengths[b]` real tokens: the first ones with `padding_side="right"`, the last ones with
# `padding_side="left"`. `lengths` is an int tensor of shape `(B,)`; a length may be 0.
#
# The check tries `lengths = [4, 6, 1]` with `T = 7` on both sides and a sequence of length 0, then
# uses your mask in multi-head attention: padded keys must get weight exactly 0, and changing what sits
# at the padded positions must change nothing at the real ones.
#
# **Difficulty:** ★★☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# A key is real when its position is among the first `lengths[b]` (right padding) or the last `lengths[b]`
# (left padding) of its sequence. Compare every position with every length at once: one comparison,
# broadcast, gives a `(B, T)` bool table, True at the real tokens. Then give it the head and query axes
# of the shape `(B, 1, 1, T)` explained above.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# `torch.arange(T)` has shape `(T,)` and `lengths` has shape `(B,)`; give them shapes `(1, T)` and
# `(B, 1)` (index with `None`) and a comparison broadcasts to a `(B, T)` bool table. Right padding: a
# position is real when it is smaller than the length. Left padding: the real tokens are the last
# `lengths[b]`, i.e. positions `>= T - lengths[b]`. (A length of 0 gives a row of False either way, with no
# special case.) Then add the head and query axes: index the table with `None` at dimensions 1 and 2.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# With `positions = torch.arange(T)`: right padding, `positions[None, :] < lengths[:, None]`; left padding,
# `positions[None, :] >= T - lengths[:, None]`. Then `real[:, None, None, :]`.
# </details>

# %% solution="key_padding_mask"
def key_padding_mask(lengths: torch.Tensor, T: int, padding_side: str = "right") -> torch.Tensor:
    """The mask of the real (non-padding) keys of a padded batch.

    Args:
        lengths: int tensor (B,): the number of real tokens of each sequence, 0 <= lengths[b] <= T.
        T: the padded length.
        padding_side: "right" (real tokens first) or "left" (real tokens last).

    Returns:
        A bool tensor of shape (B, 1, 1, T): True where the key is a real token (may be attended to).
    """
    ### BEGIN SOLUTION
    positions = torch.arange(T)  # (T,)
    if padding_side == "right":
        real = positions[None, :] < lengths[:, None]  # (B, T)
    else:
        real = positions[None, :] >= T - lengths[:, None]  # (B, T)
    return real[:, None, None, :]  # (B, 1, 1, T)
    ### END SOLUTION


# %% test="key_padding_mask_check"
from tinylm_checks import check_key_padding_mask
check_key_padding_mask(key_padding_mask)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_key_padding_mask(key_padding_mask, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails**, read the shape first: it names a mask on the query axis, a `(B, T)` or a
# `(B, 1, T)` mask. Then the values: `expected:` and `got:` show one sequence as 1s (real) and 0s
# (padding).
#
# Careful when you meet PyTorch's `nn.MultiheadAttention`: its `key_padding_mask` argument uses the
# **opposite** convention, True = padding (ignore). Pass it `~mask[:, 0, 0]`.
#
# ## 3. Padding and the future: combining masks
#
# A decoder on a padded batch needs both rules at once: query `t` may attend to key `j` only if `j <= t`
# (causal) **and** key `j` is a real token. Both masks are True where attending is allowed, so we want
# their logical **and**, `&`. Broadcasting does the rest: `(B, 1, 1, T) & (T, T)` gives `(B, 1, T, T)`,
# one `(T, T)` mask per sequence, shared by all heads.
#
# Here are the three masks of the third sentence (length 2), left-padded (1 = may attend; rows are
# queries, columns keys), with your `key_padding_mask`:

# %%
pad_left = key_padding_mask(lengths, T, "left")  # (B, 1, 1, T)
both = pad_left & causal_mask(T)  # (B, 1, T, T)
print("shapes:", tuple(pad_left.shape), "&", tuple(causal_mask(T).shape), "->", tuple(both.shape))
b = 2  # the sentence of length 2: four padding tokens, then two real ones
fig, axes = plt.subplots(1, 3, figsize=(13, 4))
plot_attention(pad_left[b, 0].expand(T, T).float(), title=f"padding (sequence {b})", ax=axes[0])
plot_attention(causal_mask(T).float(), title="causal", ax=axes[1])
plot_attention(both[b, 0].float(), title="padding & causal", ax=axes[2])
plt.tight_layout()
plt.show()

# %% [markdown]
# Look at the top rows of the right-hand map: queries 0 to 3 are padding, and under the causal rule
# query `t` may only look at keys `0..t`, which are all padding too. **Those rows are all False**: these queries may
# attend to no key at all. Section 4 is about what attention does with such a row.
#
# ### Exercise 2: `combine_masks(*masks)`
#
# Return the logical AND of any number of bool masks that broadcast together. An argument may be `None`
# (meaning "no mask"): skip it. If every argument is `None`, return `None`. Do not change the masks you
# are given.
#
# The check combines a padding mask with a causal mask, mixes in `None`s, passes three masks at once,
# and runs the reference multi-head attention with your combined mask (changing tokens after position
# `t` must leave the outputs up to `t` alone).
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Two masks combine with a logical AND, `&`: a query may attend to a key only where every mask allows it,
# and broadcasting gives the combined shape. For any number of masks, fold them in one at a time: `*masks`
# collects the arguments in a tuple; start from "no mask yet" and skip the `None`s.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# A running result, say `out`, that starts as `None`, and a loop over `masks` that skips every `None`.
# For the first real mask, the result becomes that mask; for each later one, the result becomes the
# result AND the mask, as a **new** tensor: the operator `&`, not the in-place `&=`. The in-place form
# would write into the caller's mask (the result *is* the first mask you met) and fails when the combined
# shape is bigger than `out`'s. At the end, return the result: still `None` if every argument was.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `out = None`, then for each `m` that is not `None`: `out = m if out is None else out & m`; then
# `return out`.
# </details>

# %% solution="combine_masks"
def combine_masks(*masks):
    """The logical AND of bool masks (True = may attend); None arguments are skipped.

    Args:
        *masks: bool tensors that broadcast together (e.g. (B, 1, 1, T) and (T, T)), or None.

    Returns:
        A new bool tensor of the broadcast shape (e.g. (B, 1, T, T)), or None if every mask is None.
    """
    ### BEGIN SOLUTION
    out = None
    for m in masks:
        if m is None:
            continue
        out = m if out is None else out & m  # a new tensor: the inputs stay as they are
    return out
    ### END SOLUTION


# %% test="combine_masks_check"
from tinylm_checks import check_combine_masks
check_combine_masks(combine_masks)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_combine_masks(combine_masks, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ## 4. A query with nothing to attend to
#
# Masking means setting the scores of forbidden keys to $-\infty$ before the softmax. A row in which
# **every** key is forbidden is all $-\infty$, and its softmax is $0/0$:

# %%
row = torch.full((4,), float("-inf"))
print("softmax of a row of -inf:", torch.softmax(row, dim=-1))

# %% [markdown]
# Such rows are not exotic: you just saw them, the padded queries of a left-padded batch under a causal
# mask. Their outputs are thrown away later (the loss ignores padding), so why care? Because a `NaN`
# does not stay where it is. In the **next** layer, the padded position is a key with a `NaN` value,
# and a weight of exactly 0 does not save you: $0 \times \mathrm{NaN} = \mathrm{NaN}$.

# %%
weights = torch.tensor([[0.7, 0.3, 0.0]])  # (1, 3): key 2 is masked, weight exactly 0
values = torch.tensor([[1.0], [2.0], [float("nan")]])  # (3, 1): key 2 came out NaN from the layer below
print("weights @ values =", (weights @ values).item())

# %% [markdown]
# One `NaN` in a padded position of layer 1 turns every real token of that sequence into `NaN` in layer
# 2, and the loss with it. So a query with no allowed key must get **all-zero weights** (and so a zero
# output), not `NaN`. That is what PyTorch's own `F.scaled_dot_product_attention` has done since version
# 2.5, and what the course's attention does. (PyTorch's older module `nn.MultiheadAttention` still
# returns `NaN` there.)

# %%
q = k = v = torch.randn(1, 1, 3, 4)  # (B, H, T, d_k)
no_key_for_query_0 = torch.tensor([[False, False, False], [True, True, False], [True, True, True]])
print(F.scaled_dot_product_attention(q, k, v, attn_mask=no_key_for_query_0)[0, 0])

# %% [markdown]
# ### Why $-\infty$ and not a big negative number
#
# Many code bases fill masked scores with a finite number, `-1e9` or `-1e4` (the second because `-1e9`
# does not fit in float16). Both go wrong somewhere:
#
# - with **`-1e9`**, a row where every key is masked is a row of equal numbers: its softmax is
#   **uniform**, so the padded query attends to every key evenly, future tokens included, instead of to
#   none;
# - with **`-1e4`**, once real scores are large (say all around `-1e5`, as happens in a diverging
#   model), the masked keys have the **highest** scores and take all the weight.

# %%
scores = torch.tensor([-2e5, -1e5, -3e5])  # (3,): three keys with large (negative) scores
mask = torch.tensor([True, True, False])  # key 2 is masked
for fill in (-1e4, -1e9, float("-inf")):
    w = torch.softmax(scores.masked_fill(~mask, fill), dim=-1)
    print(f"fill {fill:>6g}: weights {[round(x, 4) for x in w.tolist()]}")
no_key = torch.zeros(3, dtype=torch.bool)
print("fill  -1e9, no key allowed:", [round(x, 4) for x in torch.softmax(scores.masked_fill(~no_key, -1e9), dim=-1).tolist()])

# %% [markdown]
# So the rule of this course: fill with $-\infty$, so that no score can outweigh it, then turn the
# `NaN` of rows with no allowed key into zeros.
#
# ### Exercise 3: `masked_softmax(scores, mask=None)`
#
# Return the softmax of `scores` over the keys (the last axis), in which keys where `mask` is False get
# weight **exactly** 0, and a query whose keys are all masked gets **all-zero** weights. With
# `mask=None`, it is the plain softmax. `scores` has shape `(..., T_q, T_k)`; `mask` broadcasts to it.
# Don't change `scores` in place.
#
# The check tries a random mask, no mask, a left-padded causal mask (with a sequence that is all
# padding) and scores around $-10^7$, where any finite fill value is too weak.
#
# **Difficulty:** ★★☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Three steps: fill the masked scores with $-\infty$, softmax over the keys, then clean up the rows that
# came out `NaN` (a row whose keys are all masked is all $-\infty$, and its softmax is 0/0). Section 3 of
# notebook 01 did the first two. With no mask there is nothing to fill and nothing to clean.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# Start with the case `mask is None`: the plain softmax over the last dimension. Otherwise, `masked_fill`
# writes its value where its condition is True, and your mask is True where a key is *allowed*: the
# condition is `~mask`, the value `float("-inf")`. `masked_fill` without the underscore returns a new
# tensor, so `scores` is not changed in place. Then `torch.softmax` over `dim=-1` (the keys), then
# `.nan_to_num` with 0.0 turns the `NaN` rows into zeros.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# Start with `if mask is None: return torch.softmax(scores, dim=-1)`. Then
# `scores.masked_fill(~mask, float("-inf"))`, then `torch.softmax(..., dim=-1)`, then `.nan_to_num(0.0)`.
# </details>

# %% solution="masked_softmax"
def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the keys in which masked keys get weight exactly 0.

    Args:
        scores: float tensor (..., T_q, T_k).
        mask: optional bool tensor broadcastable to scores; True = may attend.

    Returns:
        Weights of the shape of scores: each row sums to 1 over its allowed keys, or is all zero when no
        key is allowed (never NaN).
    """
    ### BEGIN SOLUTION
    if mask is None:
        return torch.softmax(scores, dim=-1)  # (..., T_q, T_k)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # (..., T_q, T_k)
    return weights.nan_to_num(0.0)  # rows with every key masked: 0/0 -> 0
    ### END SOLUTION


# %% test="masked_softmax_check"
from tinylm_checks import check_masked_softmax
check_masked_softmax(masked_softmax)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_masked_softmax(masked_softmax, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ## 5. All together
#
# The left-padded batch, through a multi-head attention layer with the combined mask (the course's
# versions of the three functions, so this runs whatever state your exercises are in). Every output is
# finite; the padded queries get zero weights; and changing what sits at the padded positions changes
# nothing at the real tokens.

# %%
D = 8
embedding = nn.Embedding(10, D)
mha = MultiHeadSelfAttention(D, H)
x = embedding(left).detach()  # (B, T, D)
with torch.no_grad():
    out, w = mha(x, both)  # (B, T, D), (B, H, T, T)
    x_other_padding = x.clone()
    x_other_padding[~pad_left[:, 0, 0]] = torch.randn(int((~pad_left).sum()), D)  # new vectors where padding sits
    out_other, _ = mha(x_other_padding, both)
real = pad_left[:, 0, 0]  # (B, T)
print("all outputs finite:", bool(torch.isfinite(out).all()))
print("largest change at a real token when the padding changes:", (out_other - out)[real].abs().max().item())
plot_attention(w[2, 0], [str(t) for t in left[2].tolist()], title="sequence 2, head 0 (left padding & causal)")
plt.show()

# %% [markdown]
# ## Recap
#
# | what | shape | True means |
# |---|---|---|
# | scores, weights (multi-head) | `(B, H, T_q, T_k)` | |
# | causal mask | `(T, T)` | key `j <= t` |
# | key-padding mask | `(B, 1, 1, T)` | key is a real token |
# | combined (`&`) | `(B, 1, T, T)` | both |
#
# - Masks go on the **keys** (the last axis) and line up with the scores from the right: `(B, 1, 1, T)`,
#   not `(B, T)` or `(B, 1, T)`.
# - Masks combine with `&`: a key is allowed only if every mask allows it.
# - Fill masked scores with $-\infty$ (no score can outweigh it), softmax over the keys, and give a
#   query with no allowed key zero weights instead of `NaN`.
# - Masks have no parameters: they cost nothing to learn, and they are the only thing that keeps a
#   language model from reading the answer.
#
# **Next:** notebook 04 gives attention what it still lacks: the order of the tokens.
