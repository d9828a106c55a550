# %% [markdown]
# # 04 · Positions
#
# Attention compares every token with every other token, but it has no idea **where** each token is: shuffle
# the tokens and you get the same outputs, shuffled. This notebook gives a Transformer a sense of order. At
# the end you will be able to:
#
# 1. build the sinusoidal position table of "Attention Is All You Need", `sinusoidal_position_encoding(max_len, d_model)`,
#    and explain what its columns are (a clock with many hands);
# 2. wrap it in a module, `PositionalEncoding(d_model, max_len)`, that stores the table as a **buffer** and
#    adds it to token embeddings of any length `T <= max_len`;
# 3. build **learned** positions, `LearnedPositionalEmbedding(d_model, max_len)`, as GPT-2 does, and say
#    what each kind costs and gains;
# 4. (bonus) rotate queries and keys instead of adding anything: RoPE, `apply_rope(x, positions=None)`.
#
# Shapes as before: `B` batch, `T` sequence length, `D` = `d_model`, `max_len` the longest sequence the
# table covers.

# %%
import math

import matplotlib.pyplot as plt
import torch
from torch import nn

from tinylm_checks import (check_apply_rope, check_learned_positional_embedding, check_positional_encoding,
                           check_sinusoidal_position_encoding, plot_position_encoding, position_explorer)
from tinylm_solutions.multihead import MultiHeadSelfAttention  # the course's version of notebook 02's

_ = torch.manual_seed(0)

# %% [markdown]
# **About the imports.** `MultiHeadSelfAttention` is the course's version of what you wrote in notebook
# 02 (same signature, same behaviour), so this notebook stands on its own. The demos after each exercise
# use *your* version of it: finish an exercise (its check passes) before running the cells below it.
#
# ## 1. Attention can't tell the order
#
# In notebook 01 the two "the" of "the cat sat on the mat" got identical rows of attention weights:
# attention saw two equal vectors and had no way to know that one is first and the other fifth. Here's the
# same thing with a whole sentence. "猫 追 狗" is "cat chases dog"; "狗 追 猫" is "dog chases cat": the
# same three tokens, opposite meanings. We embed both and run them through multi-head self-attention (no
# mask):

# %%
vocab = {"猫": 0, "追": 1, "狗": 2}  # cat, chase, dog
sentence_a, sentence_b = ["猫", "追", "狗"], ["狗", "追", "猫"]
perm = [2, 1, 0]  # sentence_b[i] == sentence_a[perm[i]]
D, H = 8, 2

embedding = nn.Embedding(len(vocab), D)
mha = MultiHeadSelfAttention(D, H)
ids_a = torch.tensor([[vocab[w] for w in sentence_a]])  # (1, T)
ids_b = torch.tensor([[vocab[w] for w in sentence_b]])  # (1, T)
with torch.no_grad():
    x_a, x_b = embedding(ids_a), embedding(ids_b)  # (1, T, D) each
    out_a, _ = mha(x_a)  # (1, T, D)
    out_b, _ = mha(x_b)  # (1, T, D)

for word, row_a, row_b in zip(sentence_a, out_a[0], out_b[0, perm]):
    print(f"{word}: in '{' '.join(sentence_a)}' {row_a[:4].numpy().round(4)}   in '{' '.join(sentence_b)}' "
          f"{row_b[:4].numpy().round(4)}")
print("max difference after un-permuting:", (out_b[:, perm] - out_a).abs().max().item())

# %% [markdown]
# Each word gets **exactly** the same output in both sentences, only at another position: "猫" is the
# chaser in one and the chased in the other, and attention can't tell. (The difference is 0 or a rounding
# error of about 1e-7.) In maths: self-attention is *permutation-equivariant*. Permute the input rows and
# the output rows are permuted the same way, because scores, softmax and weighted sums only ever look at
# pairs of tokens, never at where a token sits.
#
# (A causal mask breaks the symmetry a little, since token `t` sees `t + 1` tokens, and language models
# can pick up some order from that alone; but every model in this course, like the original Transformer,
# is told the positions explicitly.)
#
# The fix: add to each token's vector a vector that depends on its **position**, before the first
# attention layer. Then "猫 at position 0" and "猫 at position 2" are different vectors.
#
# ## 2. The sinusoidal table: a clock with many hands
#
# Which vector for position `pos`? Just writing `pos` into a feature is a bad idea: the number grows without
# bound, and at position 1000 it would drown the token's own features. Vaswani et al. (2017, §3.5) use a table of sines and
# cosines instead. Think of a clock with `D/2` hands. Hand `i` turns by an angle $\omega_i$ for every step
# in position; the fast hands tell nearby positions apart, the slow ones far-apart positions, and
# together the hands give every position its own reading. The table stores each hand as its (sin, cos)
# pair:
#
# $$PE[pos, 2i] = \sin(pos \cdot \omega_i), \qquad PE[pos, 2i+1] = \cos(pos \cdot \omega_i), \qquad
# \omega_i = \frac{1}{10000^{2i/D}}$$
#
# - Columns come in **interleaved** pairs: column `2i` (even) is the sin and column `2i+1` (odd) the cos of
#   the **same** angle. (Some libraries put all sines first and all cosines after: a valid layout, but not
#   this course's.)
# - The frequencies are **geometric**: $\omega_0 = 1$ radian per position (a full turn every $2\pi \approx 6.3$
#   positions), and each next hand turns at $10000^{-2/D}$ times the speed of the one before (a factor
#   below 1: slower and slower), down to $\omega_{D/2-1} = 10000^{-(D-2)/D}$, close to $1/10000$ when `D` is
#   large (a full turn then takes tens of thousands of positions).
# - Row 0 (position 0, every angle 0) is `[0, 1, 0, 1, ...]`, since $\sin 0 = 0$ and $\cos 0 = 1$.
# - Every value is in $[-1, 1]$, whatever the position.
#
# The first positions of a small table, with `D = 6`: three hands with frequencies
# $\omega_0, \omega_1, \omega_2$ = 1, 0.046 and 0.0022 (rounded to 3 decimals):
#
# | pos | sin(pos ω₀) | cos(pos ω₀) | sin(pos ω₁) | cos(pos ω₁) | sin(pos ω₂) | cos(pos ω₂) |
# |---:|---:|---:|---:|---:|---:|---:|
# | 0 | 0.000 | 1.000 | 0.000 | 1.000 | 0.000 | 1.000 |
# | 1 | 0.841 | 0.540 | 0.046 | 0.999 | 0.002 | 1.000 |
# | 2 | 0.909 | −0.416 | 0.093 | 0.996 | 0.004 | 1.000 |
# | 3 | 0.141 | −0.990 | 0.139 | 0.990 | 0.006 | 1.000 |
# | 4 | −0.757 | −0.654 | 0.185 | 0.983 | 0.009 | 1.000 |
#
# Read it column by column: the first pair turns fast (its cos is negative from position 2 on, its sin
# from position 4), the last pair has hardly moved.
#
# ### Exercise: `sinusoidal_position_encoding(max_len, d_model)`
#
# Return the `(max_len, d_model)` table above, for an even `d_model`, in torch's **default float dtype**
# (float32, like `torch.zeros(max_len, d_model)`; a float64 table would turn float32 embeddings into
# float64 when added).
#
# One way, without loops:
#
# - positions `pos`: a column `(max_len, 1)`, as floats;
# - frequencies $\omega_i$: a row `(D/2,)`, one per pair;
# - angles `pos * omega`: `(max_len, D/2)` by broadcasting;
# - a `(max_len, D)` table of zeros whose even columns `[:, 0::2]` get `sin(angles)` and odd columns
#   `[:, 1::2]` get `cos(angles)`.
#
# The check calls your function with `max_len > d_model` and with `max_len < d_model` (`d_model` never a
# power of two), then checks the shape and dtype, that row 0 is `[0, 1, 0, 1, ...]`, that
# $\sin^2 + \cos^2 = 1$ in every pair of columns, and that the frequencies it reads back from row 1 are
# $10000^{-2i/D}$. When they aren't, it tells you what they are: another base, an exponent that is off by
# a factor 2, an integer division...
#
# **Difficulty:** ★★☆ · **Time:** about 15 min
#
# <details><summary>Hint 1: the idea</summary>
#
# No loops: broadcasting builds the table, as in the four steps above. A column of positions times a row of
# frequencies is every angle at once; then the even columns get the sines of the angles and the odd columns
# their cosines. For the frequencies, note that the `2i` of the formula runs over `0, 2, 4, ...`, the even
# numbers below `D`: the exponent of pair `i` is that number divided by `D`.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# - Positions: `torch.arange` of `max_len`, made a column `(max_len, 1)` by indexing with `[:, None]`.
# - Frequencies: `torch.arange` from 0 to `d_model` with a step of 2 gives the `2i` of the formula directly:
#   `0, 2, 4, ...`, `(D/2,)`. Divide them by `d_model` (not `2 * ... / d_model`: that would count the 2
#   twice); $\omega_i$ is 1 over 10000 to that power, or the same, `torch.exp` of minus the exponent times
#   `math.log(10000.0)`.
# - Use `/`, never `//`: an integer division rounds the exponents to 0. (`/` also turns the integer
#   `arange` into torch's default float dtype.)
# - The table: `torch.zeros(max_len, d_model)`; assign `torch.sin` of the angles to its even columns
#   `[:, 0::2]` and `torch.cos` of the same angles to its odd columns `[:, 1::2]`.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# The frequencies: with `two_i = torch.arange(0, d_model, 2)`, `omega = 1 / 10000 ** (two_i / d_model)`, or
# the same as `torch.exp(-two_i * math.log(10000.0) / d_model)`. The whole table:
#
# ```python
# pos = torch.arange(max_len)[:, None]                              # (max_len, 1)
# angles = pos / 10000 ** (torch.arange(0, d_model, 2) / d_model)   # (max_len, D/2), float
# pe = torch.zeros(max_len, d_model)
# pe[:, 0::2] = torch.sin(angles)
# pe[:, 1::2] = torch.cos(angles)
# ```
# </details>

# %% solution="sinusoidal_position_encoding"
def sinusoidal_position_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """The sinusoidal position table of Vaswani et al. (2017), §3.5, interleaved.

    Args:
        max_len: the number of positions (rows).
        d_model: the width D of a token vector (even).

    Returns:
        (max_len, d_model) tensor in torch's default float dtype (float32) with
        PE[pos, 2i] = sin(pos / 10000^(2i/D)) and PE[pos, 2i+1] = cos(pos / 10000^(2i/D)).
    """
    ### BEGIN SOLUTION
    pos = torch.arange(max_len)[:, None]  # (max_len, 1), integers
    omega = 10000.0 ** (-torch.arange(0, d_model, 2) / d_model)  # (D/2,), / gives the default float dtype
    angles = pos * omega  # (max_len, D/2)
    pe = torch.zeros(max_len, d_model)  # (max_len, D)
    pe[:, 0::2] = torch.sin(angles)  # even columns: sin
    pe[:, 1::2] = torch.cos(angles)  # odd columns: cos of the same angle
    return pe
    ### END SOLUTION


# %% test="sinusoidal_position_encoding_check"
from tinylm_checks import check_sinusoidal_position_encoding
check_sinusoidal_position_encoding(sinusoidal_position_encoding)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_sinusoidal_position_encoding(sinusoidal_position_encoding, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** `got:` shows the numbers it read from your table. Row 0 `[1, 0, 1, 0, ...]`
# means sin and cos are swapped; `[0, 0, ..., 1, 1]` the sines-then-cosines layout; frequencies
# `[1, 1, 1, ...]` an integer division.
#
# The whole table as a heatmap, 64 positions and `D = 32`, built by your function (run this once its check
# passes). Each column is one hand of the clock: on the left the fast hands flicker
# from row to row, to the right they slow down until the last columns barely change over 64 positions.

# %%
table = sinusoidal_position_encoding(64, 32)  # (64, 32)
plot_position_encoding(table, title="sinusoidal table, max_len = 64, D = 32")
plt.show()

# %% [markdown]
# ## 3. Why pairs: an offset is a rotation
#
# Why store each hand as a (sin, cos) pair, and not just the sin? Because moving `k` positions forward
# turns every pair by a fixed angle $k\,\omega_i$, whatever the starting position:
#
# $$\begin{pmatrix} \sin((pos + k)\,\omega) \\ \cos((pos + k)\,\omega) \end{pmatrix} =
# \begin{pmatrix} \cos k\omega & \sin k\omega \\ -\sin k\omega & \cos k\omega \end{pmatrix}
# \begin{pmatrix} \sin(pos\,\omega) \\ \cos(pos\,\omega) \end{pmatrix}$$
#
# (the addition formulas for sin and cos). So "k positions later" is the same linear map at every
# position: a layer can learn to look "3 tokens back" once, and it works everywhere. Check it on the
# table, for `k = 5`, from every position at once:

# %%
k = 5
omega = 10000.0 ** (-torch.arange(0, 32, 2) / 32)  # (D/2,)
c, s = torch.cos(k * omega), torch.sin(k * omega)  # (D/2,) each
sin_now, cos_now = table[:-k, 0::2], table[:-k, 1::2]  # (64 - k, D/2) each
sin_later = c * sin_now + s * cos_now  # rotate every pair by k * omega
cos_later = -s * sin_now + c * cos_now
print("max |rotated - table|:", max((sin_later - table[k:, 0::2]).abs().max().item(),
                                   (cos_later - table[k:, 1::2]).abs().max().item()))

# %% [markdown]
# A consequence: the dot product of two rows depends only on their **distance**,
# $PE[m] \cdot PE[n] = \sum_i \cos((m - n)\,\omega_i)$, largest (`D/2`) at distance 0 and smaller, with
# ripples, further away. Explore it below: move `position` and `dimension`. The left plot is one column
# of the table (one hand); the right one shows `PE[position] · PE[p]` against the distance `p - position`:
# moving `position` shifts the window, but the curve stays the same.

# %%
position_explorer(table)

# %% [markdown]
# ## 4. A module: `PositionalEncoding`
#
# In a model the table is added to the token embeddings `x` of shape `(B, T, D)`. The table never
# changes, so we compute it **once**, in `__init__`, for the longest sequence we'll ever see (`max_len`),
# and in `forward` take its first `T` rows.
#
# Where to keep it? A module can hold a tensor in three ways:
#
# | how | trained by the optimizer | in `state_dict()` (saved) | moved by `.to()` / `.double()` |
# |---|---|---|---|
# | `self.w = nn.Parameter(t)` | yes | yes | yes |
# | `self.register_buffer("b", t)` | no | yes | yes |
# | `self.register_buffer("b", t, persistent=False)` | no | no | yes |
# | `self.t = t` (a plain attribute) | no | no | **no** |
#
# A fixed table is not a parameter (nothing to learn), and a plain attribute is left behind when the model
# moves to a GPU or to float64, a classic bug. It's a **buffer**. Here, a persistent one, so that a saved
# model carries its table with it (some code uses `persistent=False` to save space, since the table can
# be recomputed; this course saves it).

# %%
class Demo(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(2))
        self.register_buffer("table", torch.zeros(3))
        self.plain = torch.zeros(4)


demo = Demo().double()
print("parameters:", [name for name, _ in demo.named_parameters()])
print("buffers:   ", [name for name, _ in demo.named_buffers()])
print("state_dict:", list(demo.state_dict()))
print("dtypes after .double():", demo.weight.dtype, demo.table.dtype, demo.plain.dtype)

# %% [markdown]
# The buffer has shape `(1, max_len, D)`: the leading axis of size 1 broadcasts over the batch, so
# `x + pe[:, :T]` adds the same position vectors to every sequence: `(B, T, D) + (1, T, D) -> (B, T, D)`.
# Slice the **second** axis: `pe[:T]` slices the batch axis (of size 1) and leaves all `max_len` rows.
#
# ### Exercise: `PositionalEncoding(d_model, max_len)`
#
# - `__init__(self, d_model, max_len=512)`: build the `(max_len, d_model)` table and keep it in the module
#   as a **buffer** named `pe`, of shape `(1, max_len, d_model)`. Build it with your
#   `sinusoidal_position_encoding(max_len, d_model)` from exercise 1: this check compares `pe` with the
#   course's table, so make exercise 1's check pass first.
# - `forward(self, x)`: `x` is `(B, T, D)` with `T <= max_len`; add the first `T` rows of the table to it
#   and return the `(B, T, D)` result.
#
# The check builds your module with its own sizes, then checks that `pe` is a buffer, not a parameter,
# that it is in `state_dict()` and follows `.double()`, its shape and values, and the output for
# `T < max_len` and `T = max_len`, with `B != T`. It names the usual mistakes: a parameter, a plain
# attribute, `persistent=False`, a table that isn't sliced, dropout copied from a tutorial, a scale by
# `sqrt(D)`.
#
# **Difficulty:** ★★☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# The table is computed once, in `__init__`, and never learned, but it must move and be saved with the
# model: it is a **buffer**, a persistent one (the table above shows the ways a module keeps a tensor). It
# gets a leading batch axis of size 1, so that adding it to `x` broadcasts over the batch. `forward` adds
# its first `T` rows.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - `__init__`: after `nn.Module`'s `__init__` (through `super()`), build the `(max_len, d_model)` table
#   with your `sinusoidal_position_encoding`. The batch axis of size 1 is one indexing away: indexing with
#   `None` adds an axis of size 1 in front, `(1, max_len, D)`. Register the result with
#   `self.register_buffer` under the name `"pe"`, keeping the default `persistent=True`.
# - `forward`: `T` is `x.size(1)`. The first `T` rows are a slice of the **second** axis of `pe`: its
#   first axis is that batch axis. `(B, T, D) + (1, T, D)` broadcasts to `(B, T, D)`.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# In `__init__`, after `super().__init__()`:
# `self.register_buffer("pe", sinusoidal_position_encoding(max_len, d_model)[None])  # (1, max_len, D)`.
# In `forward`: `return x + self.pe[:, :x.size(1)]  # (B, T, D) + (1, T, D)`
# </details>

# %% solution="positional_encoding"
class PositionalEncoding(nn.Module):
    """Adds the sinusoidal position table to token embeddings.

    Args:
        d_model: the width D of a token vector (even).
        max_len: the longest sequence supported.

    Attributes:
        pe: buffer (1, max_len, d_model) holding the table; persistent (in state_dict()), not a parameter.

    forward(x): x (B, T, D) with T <= max_len -> x + pe[:, :T], (B, T, D).
    """

    def __init__(self, d_model: int, max_len: int = 512):
        ### BEGIN SOLUTION
        super().__init__()
        table = sinusoidal_position_encoding(max_len, d_model)  # (max_len, D), exercise 1
        self.register_buffer("pe", table[None])  # (1, max_len, D)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        T = x.size(1)
        return x + self.pe[:, :T]  # (B, T, D) + (1, T, D) -> (B, T, D)
        ### END SOLUTION


# %% test="positional_encoding_check"
from tinylm_checks import check_positional_encoding
check_positional_encoding(PositionalEncoding)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_positional_encoding(PositionalEncoding, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** an error raised for `T < max_len` but not for `T = max_len` means the table
# isn't cut to `T` (or is cut on the batch axis); `pe is not in state_dict()` means `persistent=False`.
#
# ## 5. The order demo again, with positions
#
# Same embeddings, same attention layer as in section 1, but now with your `PositionalEncoding` added
# first:

# %%
pos_enc = PositionalEncoding(D, max_len=16)
with torch.no_grad():
    out_a, _ = mha(pos_enc(x_a))  # (1, T, D)
    out_b, _ = mha(pos_enc(x_b))  # (1, T, D)

for word, row_a, row_b in zip(sentence_a, out_a[0], out_b[0, perm]):
    print(f"{word}: in '{' '.join(sentence_a)}' {row_a[:4].numpy().round(4)}   in '{' '.join(sentence_b)}' "
          f"{row_b[:4].numpy().round(4)}")
print("max difference after un-permuting:", (out_b[:, perm] - out_a).abs().max().item())

# %% [markdown]
# Now "猫" at position 0 and "猫" at position 2 are different vectors, and the two sentences give
# different outputs even after un-permuting. The model can now learn that the token before "追" is the one
# chasing.
#
# ## 6. Learned positions
#
# GPT-2 (Radford et al., 2019) doesn't use a formula: it gives every position its own trainable vector,
# an `nn.Embedding(max_len, D)` looked up at positions `0, 1, ..., T-1`, and lets training find out what
# they should be.
#
# | | sinusoidal (fixed) | learned |
# |---|---|---|
# | parameters | 0 (a buffer) | `max_len × D` |
# | positions beyond `max_len` | the formula is defined for any `pos` (whether the model copes is another matter) | none: there is no row for them |
# | offsets | a rotation of each pair, by construction | whatever training finds |
# | rarely seen positions | same quality as the others | rows near `max_len` are trained only by long sequences |
#
# In practice both work about equally well at the lengths they were trained on (Vaswani et al. found
# "nearly identical results", §3.5 and Table 3, row E); what differs is everything outside those lengths.
#
# ### Exercise: `LearnedPositionalEmbedding(d_model, max_len)`
#
# - `__init__(self, d_model, max_len=512)`: one learned vector of `d_model` numbers per position, held in an
#   `nn.Embedding` named `emb`: `max_len * d_model` parameters.
# - `forward(self, x)`: `x` is `(B, T, D)`; add the vectors of positions `0 .. T-1` to it and return the
#   `(B, T, D)` result. (The embedding is indexed by positions, not by `x`.)
#
# The arguments come in the same order as `PositionalEncoding`'s. The check counts the parameters,
# copies random values into `emb.weight`, compares your output with the reference for `T < max_len` and
# `T = max_len`, and checks that a sequence of length `T` sends gradients to exactly the first `T` rows.
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint 1: the idea</summary>
#
# The vectors of positions `0 .. T-1` are rows `0 .. T-1` of the embedding's table, and `nn.Embedding`
# takes integer indices and returns their rows. So look up the positions themselves (not `x`), which gives
# one `(T, D)` tensor, and add it to `x`: broadcasting adds the same row `t` to position `t` of every
# sequence of the batch.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# - `__init__`: `nn.Module`'s `__init__` (through `super()`), then one `nn.Embedding` of `max_len` rows of
#   `d_model` numbers, stored as `self.emb`.
# - `forward`: `T` is `x.size(1)`. The indices are `torch.arange` of `T`, made on `x`'s device
#   (`device=x.device`, so that it also works on a GPU); `self.emb` of them is `(T, D)`, the vectors of
#   positions `0 .. T-1`. Return `x` plus that: `(B, T, D) + (T, D)`.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `self.emb(torch.arange(T))` is `(T, D)`. The key line of `forward`:
# `return x + self.emb(torch.arange(x.size(1), device=x.device))  # (B, T, D) + (T, D)`
# </details>

# %% solution="learned_positional_embedding"
class LearnedPositionalEmbedding(nn.Module):
    """Learned absolute positions (GPT-2): x + emb(arange(T)).

    Args:
        d_model: the width D of a token vector.
        max_len: the number of positions.

    Attributes:
        emb: nn.Embedding(max_len, d_model), max_len * d_model parameters.

    forward(x): x (B, T, D) with T <= max_len -> (B, T, D).
    """

    def __init__(self, d_model: int, max_len: int = 512):
        ### BEGIN SOLUTION
        super().__init__()
        self.emb = nn.Embedding(max_len, d_model)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        positions = torch.arange(x.size(1), device=x.device)  # (T,)
        return x + self.emb(positions)  # (B, T, D) + (T, D)
        ### END SOLUTION


# %% test="learned_positional_embedding_check"
from tinylm_checks import check_learned_positional_embedding
check_learned_positional_embedding(LearnedPositionalEmbedding)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_learned_positional_embedding(LearnedPositionalEmbedding, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# The parameter counts, for `max_len = 512` and `D = 64`:

# %%
for module in (PositionalEncoding(64, 512), LearnedPositionalEmbedding(64, 512)):  # yours
    n_params = sum(p.numel() for p in module.parameters())
    n_buffer = sum(b.numel() for b in module.buffers())
    print(f"{type(module).__name__:27} {n_params:6} parameters, {n_buffer:6} buffer values")

# %% [markdown]
# ## 7. Bonus: rotary position embeddings (RoPE)
#
# Section 3 showed that in the sinusoidal table, moving `k` positions is a rotation of each pair. RoPE
# (Su et al., 2021, RoFormer) makes that the whole mechanism: add nothing to `x`, and instead **rotate** each
# query and each key by its position, inside attention. Pair `(2i, 2i+1)` of the vector at position
# `m` turns by the angle $m\,\theta_i$, with the table's frequencies $\theta_i = 10000^{-2i/d_k}$:
#
# $$\text{out}_{2i} = x_{2i} \cos m\theta_i - x_{2i+1} \sin m\theta_i, \qquad
# \text{out}_{2i+1} = x_{2i} \sin m\theta_i + x_{2i+1} \cos m\theta_i$$
#
# A rotation keeps lengths, and rotating `q` by $m\theta$ and `k` by $n\theta$ leaves their dot product
# depending only on the difference, $(m - n)\theta$. So attention scores see **relative** positions
# directly, and no position vector is ever added to the token. LLaMA, Mistral, Qwen and most recent models
# use RoPE. (Many implementations, GPT-NeoX's and Hugging Face's LLaMA among them, pair feature `i` with
# `i + d_k/2`, the "rotate half" layout: the same idea with the features in another order. This course
# pairs `2i` with `2i+1`, as RoFormer writes it.)
#
# **Careful with section 3's matrix.** There a pair was written (sin, cos), i.e. (y, x), which is why its
# matrix looks like a rotation the other way. With a pair written $(x_{2i}, x_{2i+1})$, turning by the angle
# $\alpha$ is $\begin{pmatrix} \cos\alpha & -\sin\alpha \\ \sin\alpha & \cos\alpha \end{pmatrix}$: exactly the
# two lines above.
#
# ### Bonus exercise: `apply_rope(x, positions=None)`
#
# `x` is `(..., T, d_k)` (queries or keys, e.g. `(B, H, T, d_k)`), `d_k` even; `positions` is an optional
# `(T,)` tensor of integer positions, `torch.arange(T)` when None. Return the rotated `x`, same shape and
# dtype. Count axes from the end so that `(B, T, d_k)` works too.
#
# The check verifies that position 0 is unchanged, that lengths are kept, that scores depend only on
# `m - n`, then compares with the reference on 4-D and 3-D inputs, with and without `positions`. It
# recognises the rotate-half layout, a rotation in the wrong direction and wrong frequencies. Not graded.
#
# **Difficulty:** ★★★ · **Time:** about 20 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Each pair of features `(2i, 2i+1)` is a point in the plane, and the formula turns it by an angle:
# position times the pair's frequency. So you need one angle per position and per pair, a `(T, d_k/2)`
# table; the even and the odd features of `x`, taken apart; the two lines of the formula, applied to every
# pair at once by broadcasting; and the two results woven back into the even and odd columns.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - Sizes from the end: `T` is `x.shape[-2]`, `d_k` is `x.shape[-1]`; when `positions` is `None`, use
#   `torch.arange(T)`.
# - The frequencies: `torch.arange` from 0 to `d_k` in steps of 2 gives the `2i`, a `(d_k/2,)` tensor;
#   $\theta_i = 10000^{-2i/d_k}$. Make it in `x`'s dtype (and on its device).
# - The angles: the positions, converted to `x`'s dtype and made a column `(T, 1)`, times the frequencies
#   `(d_k/2,)`: `(T, d_k/2)`. Their `torch.cos` and `torch.sin` are `(T, d_k/2)` each.
# - The pairs: the even features are a slice of the last dimension that starts at 0 with a step of 2, the
#   odd ones start at 1; each is `(..., T, d_k/2)` and broadcasts against the cos and sin.
# - Back together: `torch.stack` the even and odd results along a new last dimension, `(..., T, d_k/2, 2)`,
#   then `flatten` the last two dimensions: `(..., T, d_k)`, with the even results in the even columns.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# - `positions = torch.arange(T, device=x.device)` when `positions is None`
# - `theta = 10000.0 ** (-torch.arange(0, d_k, 2, dtype=x.dtype, device=x.device) / d_k)`, `(d_k/2,)`
# - `angles = positions.to(x.dtype)[:, None] * theta`, `(T, d_k/2)`
# - `cos, sin = torch.cos(angles), torch.sin(angles)`, each `(T, d_k/2)`
# - `x_even, x_odd = x[..., 0::2], x[..., 1::2]`, each `(..., T, d_k/2)`
# - `out_even = x_even * cos - x_odd * sin` and `out_odd = x_even * sin + x_odd * cos`
# - `return torch.stack((out_even, out_odd), dim=-1).flatten(-2)`, `(..., T, d_k)`
# </details>

# %% solution="apply_rope"
def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
    """Rotate each interleaved pair (2i, 2i+1) of x by the angle position * theta_i (RoFormer, eq. 34).

    Args:
        x: (..., T, d_k) float tensor, d_k even.
        positions: optional (T,) integer positions; torch.arange(T) when None.

    Returns:
        Tensor of the same shape and dtype as x.
    """
    ### BEGIN SOLUTION
    T, d_k = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T, device=x.device)
    theta = 10000.0 ** (-torch.arange(0, d_k, 2, dtype=x.dtype, device=x.device) / d_k)  # (d_k/2,)
    angles = positions.to(x.dtype)[:, None] * theta  # (T, d_k/2)
    cos, sin = torch.cos(angles), torch.sin(angles)  # (T, d_k/2) each
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., T, d_k/2) each
    out_even = x_even * cos - x_odd * sin
    out_odd = x_even * sin + x_odd * cos
    return torch.stack((out_even, out_odd), dim=-1).flatten(-2)  # (..., T, d_k)
    ### END SOLUTION


# %%
check_apply_rope(apply_rope)

# %% [markdown]
# Relative positions, seen directly: the same query and key vectors placed at positions `(m, n)`, and
# then both moved 100 positions further. With your `apply_rope` (once its check passes), the score only
# depends on `m - n`:

# %%
q, k = torch.randn(16), torch.randn(16)  # one query and one key, d_k = 16
for m, n in [(3, 1), (103, 101), (10, 0), (110, 100)]:
    q_m = apply_rope(q[None], torch.tensor([m]))[0]  # (d_k,)
    k_n = apply_rope(k[None], torch.tensor([n]))[0]  # (d_k,)
    print(f"m = {m:3}, n = {n:3}, m - n = {m - n:2}:  score = {(q_m @ k_n).item():+.5f}   "
          f"|q| = {q.norm():.4f}, |rope(q)| = {q_m.norm():.4f}")

# %% [markdown]
# ## Summary
#
# - Self-attention is permutation-equivariant: without positions, "猫 追 狗" and "狗 追 猫" give the same
#   outputs, permuted. Positions are added to the token embeddings (or, with RoPE, rotate `q` and `k`).
# - Sinusoidal table: `(max_len, D)`, `PE[pos, 2i] = sin(pos ω_i)`, `PE[pos, 2i+1] = cos(pos ω_i)`,
#   `ω_i = 10000^(-2i/D)` geometric from 1 down to ~1/10000; row 0 is `[0, 1, 0, 1, ...]`. Moving `k`
#   positions rotates each pair by `k ω_i`; `PE[m] · PE[n]` depends only on `m - n`.
# - `PositionalEncoding(d_model, max_len)`: **0 parameters**, one persistent buffer `pe` of shape
#   `(1, max_len, D)`; `forward(x (B, T, D)) = x + pe[:, :T]`.
# - `LearnedPositionalEmbedding(d_model, max_len)`: `nn.Embedding(max_len, D)`, **`max_len × D`
#   parameters** (32,768 for 512 × 64); no positions beyond `max_len`.
# - RoPE: 0 parameters; rotates each pair `(2i, 2i+1)` of `q` and `k` (`(B, H, T, d_k)`) by `m θ_i`,
#   keeps lengths, makes scores depend on `m - n`.
#
# **Next:** notebook 05 adds the feed-forward network, the other half of a Transformer block.
