# %% [markdown]
# # 00 · How this course works
#
# In this course you build **TinyLM**, a tiny decoder-only Transformer language model, from scratch in
# PyTorch, one component at a time. Every component you write is checked straight away by a *check
# cell* that compares it with a reference implementation.
#
# This first notebook has one small exercise (a softmax). It shows you:
#
# 1. that your environment is the course's environment;
# 2. how an exercise and its check cell work, and how to read a check that fails;
# 3. why Transformers use attention instead of a recurrent network (RNN).

# %%
import time
import timeit

import torch

from tinylm_checks import check_environment, check_softmax

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. Your environment
#
# The course pins its versions (PyTorch included) so that your results match the reference and the
# checks. Run the next cell: it prints what you are running on and fails if PyTorch is not the
# course's version.
#
# Everything in this course runs on a CPU; 2 cores are enough.

# %%
check_environment()

# %% [markdown]
# ## 2. Exercises and check cells
#
# Each exercise is a code cell with a function (or class) to complete. The signature and the
# docstring are given; the body says
#
# ```python
# # YOUR CODE HERE
# raise NotImplementedError()
# ```
#
# Replace those two lines with your code. Right under the exercise is its **check cell**. The flow is:
#
# 1. edit the exercise cell, run it with **Shift+Enter** (this runs the cell and moves to the next one);
# 2. run the check cell under it with **Shift+Enter** again;
# 3. read what the check printed.
#
# Above each exercise you'll find its difficulty (★☆☆ to ★★★) and about how long it takes, and hints
# folded away in three steps: **Hint 1** names the idea, **Hint 2** points to the place (which line,
# which tensor, which dimension, which function), and the last fold, whose title says it is the answer,
# shows the code. Click one open only when you want it, and the next one only if you are still stuck.
# Trying first, even for a few minutes, is how the ideas stick.
#
# When the check passes it prints one line starting with ✔ that says what it verified. When it fails it
# raises a `CheckFailure` with a message made of these lines:
#
# | line | what it tells you |
# |---|---|
# | `check_... failed: ...` | what went wrong, in one sentence |
# | `tried:` | the input the check gave your code (shapes, dtype, seed), so you can reproduce it |
# | `expected:` | what the reference returned (a row of it) |
# | `got:` | what your code returned, and the largest difference from the reference |
# | `likely mistake:` | when the mistake is a well-known one, its name |
# | `hint:` | what to look at, or how to fix it |
#
# Not every failure has every line: a NaN or a wrong shape, for example, needs no "expected" row.
#
# **If things get weird** (a function you fixed still fails, or a name is "not defined" although you
# can see it), you probably ran cells out of order or an old definition is still in memory. Use
# *Kernel → Restart Kernel and Run All Cells…* (or *Run up to Selected Cell*) and the notebook runs
# again from a clean state, top to bottom.

# %% [markdown]
# ### The warm-up: softmax
#
# Attention turns scores into weights with a **softmax**. For a vector $x = (x_1, \dots, x_N)$:
#
# $$\mathrm{softmax}(x)_i = \frac{e^{x_i}}{\sum_{j=1}^{N} e^{x_j}}$$
#
# Every output is positive and the outputs sum to 1: a softmax turns any scores into a probability
# distribution. Bigger scores get bigger weights.
#
# Our tensors have several dimensions, e.g. scores of shape `(B, T, N)`. The softmax must run over the
# **last** dimension: each row of `N` numbers is normalised on its own. Here is PyTorch's built-in
# softmax, so you can see what the result should look like:

# %%
x = torch.tensor([[1.0, 2.0, 3.0],
                  [1.0, 1.0, 1.0]])  # (2, 3): two rows of three scores
p = torch.softmax(x, dim=-1)  # (2, 3)
print(p)
print("row sums:", p.sum(dim=-1))

# %% [markdown]
# ### A check that fails, on purpose
#
# Before you write your own softmax, let's see a check fail. The function below has a classic bug: it
# normalises over the **first** dimension (`dim=0`) instead of the last. Run the definition, then the
# check under it. The check cell is *meant* to fail, so the error you'll see is expected.

# %%
def softmax_wrong_dim(x):
    """A buggy softmax: sums over dim 0 instead of the last dimension."""
    e = torch.exp(x)
    return e / e.sum(dim=0, keepdim=True)


# %% tags=["raises-exception"]
check_softmax(softmax_wrong_dim)

# %% [markdown]
# Read the message line by line:
#
# - **tried** gave an input of shape `(2, 3, 5)` of random scores (`float64`, seed 0).
# - **expected** shows one row of the reference's answer: five numbers that sum to 1.
# - **got** shows the same row of our answer: the numbers don't sum to 1, and the largest difference
#   from the reference is printed.
# - **likely mistake** names the bug: the softmax normalises over the wrong dimension.
# - **hint** says what to do: `.sum(dim=-1, keepdim=True)`.
#
# Here is a second classic bug. The formula above, typed in as is, breaks for large scores:
# $e^{1000}$ does not fit in a float, it becomes `inf`, and `inf / inf` is `NaN`.

# %%
big = torch.tensor([1000.0, 1001.0, 1002.0])
naive = torch.exp(big) / torch.exp(big).sum()
print("exp(big):      ", torch.exp(big))
print("naive softmax: ", naive)
print("torch.softmax: ", torch.softmax(big, dim=-1))

# %% [markdown]
# The fix is an identity: subtracting the same number $m$ from every score changes nothing, because
#
# $$\frac{e^{x_i - m}}{\sum_j e^{x_j - m}} = \frac{e^{x_i}\, e^{-m}}{e^{-m} \sum_j e^{x_j}} = \frac{e^{x_i}}{\sum_j e^{x_j}}.$$
#
# Choose $m = \max_j x_j$ (the row's maximum): the largest exponent becomes $e^0 = 1$ and nothing
# overflows. The check tries large scores too, so it catches a naive softmax:

# %%
def softmax_naive(x):
    """A buggy softmax: right dimension, but exp() overflows for large scores."""
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


# %% tags=["raises-exception"]
check_softmax(softmax_naive)

# %% [markdown]
# This time the check found NaN in the output for large scores, named the mistake and gave the fix.
#
# ### Exercise: `softmax(x)`
#
# Write a numerically stable softmax over the last dimension, **without** `torch.softmax` (that's the
# point of the exercise). `x` has shape `(..., N)` (any number of leading dimensions); return a tensor of
# the same shape in which every row (the last dimension) is positive and sums to 1.
#
# The check compares your function with `torch.softmax(x, dim=-1)` on random scores and on large ones
# (rows around 1000, -1000 and 0, and one row spanning -1000 to 1000), checks that gradients flow
# through it, and that float32 inputs give float32 outputs.
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint 1: the idea</summary>
#
# The identity above: subtracting the same number from every score of a row leaves the softmax unchanged.
# Subtract each row's largest score first, so that the largest exponent is $e^0 = 1$ and nothing
# overflows. After that it is the plain formula: exponentiate, then divide by the row's sum.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# Three operations, all over the last dimension (`dim=-1`): the maximum of each row (`x.max` returns a
# pair; the maxima are its `.values`), `torch.exp`, and the sum of each row (`.sum`). Give both reductions
# `keepdim=True`: it keeps the reduced dimension with size 1, so the maxima and the sums are `(..., 1)` and
# broadcast row by row against `(..., N)`. Without it, a `(2, 3)` tensor minus its `(2,)` maxima fails, and
# a `(3, 3)` one minus its `(3,)` maxima runs but pairs the wrong numbers (each row's maximum is subtracted
# from a column).
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `x = x - x.max(dim=-1, keepdim=True).values`, then `e = torch.exp(x)`, then
# `return e / e.sum(dim=-1, keepdim=True)`.
# </details>

# %% solution="softmax"
def softmax(x: torch.Tensor) -> torch.Tensor:
    """Numerically stable softmax over the last dimension.

    Args:
        x: scores, a float tensor of shape (..., N).

    Returns:
        A tensor of the same shape (..., N): every entry is positive and every row (the last
        dimension) sums to 1. Equal to torch.softmax(x, dim=-1), also for scores around 1000.
    """
    ### BEGIN SOLUTION
    x = x - x.max(dim=-1, keepdim=True).values  # (..., N), the largest score of each row is now 0
    e = torch.exp(x)  # (..., N), every entry in (0, 1]
    return e / e.sum(dim=-1, keepdim=True)  # (..., N), each row sums to 1
    ### END SOLUTION


# %% test="softmax_check"
from tinylm_checks import check_softmax
check_softmax(softmax)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_softmax(softmax, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If your check fails:** read the `tried:` line and rebuild that input in a new cell (for instance
# `x = torch.randn(2, 3, 5, dtype=torch.float64)`), then print `softmax(x)` next to
# `torch.softmax(x, dim=-1)` and compare. A message saying `NotImplementedError` means the exercise
# cell still contains `raise NotImplementedError()`, or that you edited it without running it again.

# %% [markdown]
# ## 3. Why attention replaces RNNs
#
# Before Transformers, language models were mostly **recurrent networks** (RNNs, LSTMs). An RNN reads
# the sequence one token at a time and carries everything it knows in a hidden state $h$:
#
# $$h_t = \tanh(h_{t-1} W_h + x_t W_x)$$
#
# Two things follow from that one line:
#
# 1. **It is sequential.** $h_t$ needs $h_{t-1}$, which needs $h_{t-2}$, … so $T$ tokens take $T$
#    steps one after the other, however many cores you have.
# 2. **Information travels a long way.** What token 0 says reaches position $T-1$ only through $T-1$
#    updates of $h$, each of which can blur or shrink it. The path length between two tokens is
#    $O(T)$.
#
# **Attention** computes every position's output as a weighted average over *all* positions, with
# weights from a softmax of scores (you'll build it in notebook 01). All positions are computed at once
# with a few matrix multiplications, and any token reaches any other in **one** step: the path length
# is $O(1)$.
#
# The price, to be honest about it: attention compares every position with every other, so it costs
# $O(T^2)$ time and memory in the sequence length, where an RNN costs $O(T)$. For the short contexts of
# this course (a few hundred tokens) that's cheap; it is why very long contexts are expensive.
#
# Let's see both effects on a random (untrained) RNN and a random attention layer, `T = 256` tokens of
# width `D = 64`.

# %%
T, D = 256, 64
x = torch.randn(T, D)  # (T, D): one sequence of T token vectors
W_h, W_x, W_q, W_k = (torch.randn(D, D) / D**0.5 for _ in range(4))  # (D, D) each


def rnn(x):
    """h_t = tanh(h_{t-1} W_h + x_t W_x), one step per token. Returns all hidden states (T, D)."""
    h = torch.zeros(D)  # (D,)
    states = []
    for t in range(x.shape[0]):  # T steps, each waits for the previous one
        h = torch.tanh(h @ W_h + x[t] @ W_x)  # (D,)
        states.append(h)
    return torch.stack(states)  # (T, D)


def attention(x):
    """Every position at once: a weighted average of all positions. Returns (T, D)."""
    scores = (x @ W_q) @ (x @ W_k).T / D**0.5  # (T, T): every position scored against every other
    return torch.softmax(scores, dim=-1) @ x  # (T, D)


for f in (rnn, attention):
    # best of 7 rounds of 10 calls: the first calls (and a busy machine) are slower than the rest
    ms = min(timeit.repeat(lambda: f(x), number=10, repeat=7)) / 10 * 1e3
    print(f"{f.__name__:>9}: {ms:6.2f} ms for T = {T} tokens")

# %% [markdown]
# Your timings will differ, but attention is usually many times faster here although it does *more*
# arithmetic ($T^2 D$ multiply-adds for the scores versus $T D^2$ for the RNN): a few big matrix
# products keep the CPU busy, while the RNN's 256 small steps must wait for each other.
#
# Now the path length. How much does the **last** output depend on a token `d` positions back? We
# measure the size of the gradient of the last output with respect to each input token.

# %%
for f in (rnn, attention):
    x_ = x.clone().requires_grad_()
    f(x_)[-1].sum().backward()  # the last position's output
    sensitivity = x_.grad.norm(dim=-1)  # (T,): how much each input token moves it
    row = "  ".join(f"d={d}: {sensitivity[T - 1 - d]:.0e}" for d in (1, 5, 20, 50, 100, 255))
    print(f"{f.__name__:>9}  {row}")

# %% [markdown]
# In the RNN, the influence of a token shrinks exponentially with its distance: 50 tokens back it is
# practically zero. With attention, a token 255 positions back matters about as much as one 5 positions
# back: distance plays no role. (This is a random, untrained RNN; LSTMs and GRUs were invented to
# slow this decay down, but their path is still $T$ steps long and still sequential.)
#
# Attention alone also ignores word order, since a weighted average doesn't care where a token sits.
# Notebook 04 adds positions back in.
#
# **Next:** notebook 01 builds attention itself: queries, keys, values, and the scaled dot product.
