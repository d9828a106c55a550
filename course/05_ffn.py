# %% [markdown]
# # 05 · The feed-forward network
#
# Attention lets tokens exchange information; it is a weighted average, and it doesn't transform a token
# much on its own. The second half of every Transformer block is a small two-layer network applied to
# **each token separately**: the position-wise feed-forward network (FFN). By the end of this notebook
# you can:
#
# 1. write `FeedForward(d_model, d_ff)`: `linear2(GELU(linear1(x)))`, and say why the GELU is needed;
# 2. show that it is *position-wise*: no information moves between tokens;
# 3. count its parameters, `2·D·d_ff + d_ff + D` (about `8D²` at `d_ff = 4D`: most of a block's parameters);
# 4. (bonus) write `SwiGLU`, the gated variant of LLaMA-style models, with the same parameter budget.
#
# Shapes as before: `B` batch, `T` positions, `D` = `d_model`, and `d_ff` the hidden width of the FFN.

# %%
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_feed_forward, check_swiglu
from tinylm_checks import plot_activations

_ = torch.manual_seed(0)

# %% [markdown]
# The demos after each exercise use *your* class: finish the exercise (its check passes) before running
# the cells below it.
#
# ## 1. The formula and its shapes
#
# Vaswani et al. (2017, §3.3) apply "two linear transformations with a ReLU activation in between" to
# every position; GPT and BERT swap the ReLU for GELU, and so do we:
#
# $$\mathrm{FFN}(x) = W_2\,\mathrm{GELU}(W_1 x + b_1) + b_2$$
#
# ```
# x                 (B, T, D)
# linear1           (B, T, d_ff)    W_1: d_ff x D, b_1: d_ff    widen
# GELU              (B, T, d_ff)    elementwise
# linear2           (B, T, D)       W_2: D x d_ff, b_2: D       back to the model width
# ```
#
# The hidden width is usually `d_ff = 4 * d_model` (the paper: 512 → 2048; GPT-2: 768 → 3072). In this
# course `d_ff` is an argument, so the module works for any width.
#
# **`nn.Linear` only touches the last dimension.** Given `(B, T, D)` it applies the same `D → d_ff` map to
# each of the `B·T` token vectors; every leading dimension is just "more tokens". So the FFN never needs
# a `reshape`:

# %%
B, T, D, d_ff = 2, 4, 8, 32
lin = nn.Linear(D, d_ff)
x = torch.randn(B, T, D)  # (B, T, D)
with torch.no_grad():
    all_at_once = lin(x)  # (B, T, d_ff)
    one_token = lin(x[1, 2])  # (d_ff,): token 2 of sequence 1, alone
print(all_at_once.shape, one_token.shape)
print("same result for that token:", torch.allclose(all_at_once[1, 2], one_token))

# %% [markdown]
# ## 2. Why the nonlinearity
#
# Without an activation, two linear layers are **one** linear layer:
# $W_2(W_1 x + b_1) + b_2 = (W_2 W_1)\,x + (W_2 b_1 + b_2)$. All those `2·D·d_ff` parameters would buy
# nothing a single `D × D` matrix can't do. Let's verify it by merging the two layers:

# %%
lin1, lin2 = nn.Linear(D, d_ff), nn.Linear(d_ff, D)
with torch.no_grad():
    W, b = lin2.weight @ lin1.weight, lin2.weight @ lin1.bias + lin2.bias  # (D, D), (D,)
    two_layers = lin2(lin1(x))  # (B, T, D)
    one_layer = x @ W.T + b  # (B, T, D)
print("linear2(linear1(x)) == one merged layer:", torch.allclose(two_layers, one_layer, atol=1e-6))

# %% [markdown]
# A test that needs no access to the weights: an affine map `f` satisfies
# `f(a) + f(b) - f(0) = f(a + b)` for all inputs. Put a nonlinearity between the layers and this breaks.
# (The check uses this probe to tell you when your activation is missing.)

# %%
def affine_gap(f, a, b):
    """max |f(a) + f(b) - f(0) - f(a + b)|: 0 (up to rounding) exactly when f is affine on these inputs."""
    with torch.no_grad():
        return (f(a) + f(b) - f(torch.zeros_like(a)) - f(a + b)).abs().max().item()


a, b2 = torch.randn(B, T, D), torch.randn(B, T, D)
print(f"no activation: gap = {affine_gap(lambda t: lin2(lin1(t)), a, b2):.1e}")
print(f"with GELU:     gap = {affine_gap(lambda t: lin2(F.gelu(lin1(t))), a, b2):.1e}")

# %% [markdown]
# ## 3. GELU
#
# ReLU zeroes every negative input and passes positives unchanged. GELU (Hendrycks & Gimpel, 2016)
# weighs its input by the probability that a standard normal variable is smaller:
#
# $$\mathrm{GELU}(x) = x\,\Phi(x), \qquad \Phi(x) = \tfrac{1}{2}\left(1 + \mathrm{erf}(x/\sqrt{2})\right)$$
#
# It is smooth, close to ReLU for large `|x|`, and slightly negative for small negative inputs (its
# minimum is about -0.17 near x = -0.75). In PyTorch: `F.gelu(x)` or the layer `nn.GELU()`, both exact.
# GPT-2's code used a faster tanh approximation, `F.gelu(x, approximate="tanh")`, which differs from the
# exact form by at most 5·10⁻⁴ (right panel below); the check accepts either.

# %%
plot_activations()
plt.tight_layout()
plt.show()

# %% [markdown]
# ### Exercise: `FeedForward(d_model, d_ff)`
#
# - `__init__(self, d_model, d_ff)`: call `super().__init__()`, then create `self.linear1 = nn.Linear(d_model, d_ff)`
#   and `self.linear2 = nn.Linear(d_ff, d_model)`. Exactly these names: the check copies its weights into
#   them by name.
# - `forward(self, x)`: `(..., D) -> (..., D)`: `linear1`, then GELU, then `linear2`. No dropout, no
#   residual (the block of notebook 07 adds the residual), nothing that touches other positions.
#
# The check builds your class with its own sizes (`B`, `T`, `D`, `d_ff` all different, and `d_ff` is not
# `4 * D`) **in training mode**, copies random weights in and compares your output with the reference.
# It also calls it twice on the same input (the outputs must agree: no dropout), changes one token (no
# other token's output may move), tries a 2-D input `(N, D)`, counts the parameters and checks that
# gradients reach both layers.
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Two linear maps with a nonlinearity between them, applied to each token on its own: widen to `d_ff`,
# GELU, narrow back to `D`. The layers are created once, in `__init__`; `forward` only uses them.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# `__init__` is spelled out in the exercise. GELU has no parameters, so you can call `F.gelu` directly in
# `forward` (or create `self.act = nn.GELU()` in `__init__`). `forward` is one expression, read from the
# inside out: `x` into `self.linear1` (`(..., d_ff)`), that into GELU, that into `self.linear2`
# (`(..., D)`). An `nn.Linear` acts on the last dimension only, so `(B, T, D)` and `(N, D)` inputs both work.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `return self.linear2(F.gelu(self.linear1(x)))  # (..., D)`
# </details>

# %% solution="feed_forward"
class FeedForward(nn.Module):
    """The position-wise feed-forward network: linear2(GELU(linear1(x))).

    Args:
        d_model: the width D of a token vector.
        d_ff: the hidden width (often 4 * d_model).

    Attributes:
        linear1: nn.Linear(d_model, d_ff); linear2: nn.Linear(d_ff, d_model).
        2 * D * d_ff + d_ff + D parameters in all.

    forward(x): x (..., D) -> (..., D), each token transformed on its own.
    """

    def __init__(self, d_model: int, d_ff: int):
        ### BEGIN SOLUTION
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        h = F.gelu(self.linear1(x))  # (..., d_ff)
        return self.linear2(h)  # (..., D)
        ### END SOLUTION


# %% test="feed_forward_check"
from tinylm_checks import check_feed_forward
check_feed_forward(FeedForward)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_feed_forward(FeedForward, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** `likely mistake:` recognises, among others, a missing activation, ReLU or
# another activation instead of GELU, a hidden width of `4 * d_model` instead of `d_ff`, dropout, an
# activation after `linear2`, a residual added inside the FFN, and code that mixes positions.
#
# ## 4. Position-wise: no token sees another
#
# Change the input of one token and only that token's output moves (your `FeedForward`):

# %%
ffn = FeedForward(D, d_ff)
x = torch.randn(1, 6, D)  # (1, T, D)
x_changed = x.clone()
x_changed[0, 3] = torch.randn(D)  # a new token at position 3
with torch.no_grad():
    moved = (ffn(x_changed) - ffn(x)).abs().amax(dim=-1)[0]  # (T,): largest change per position
for t, m in enumerate(moved.tolist()):
    print(f"position {t}: output changed by {m:.3f}")

# %% [markdown]
# So in a Transformer block, attention is the **only** place where tokens exchange information; the FFN
# then processes what each token has gathered. A model of FFNs alone would treat every token as if it
# were the only one.
#
# ## 5. Parameter count
#
# `linear1` has `D·d_ff` weights and `d_ff` biases; `linear2` has `d_ff·D` weights and `D` biases:
#
# $$2\,D\,d_{ff} + d_{ff} + D \;=\; 8D^2 + 5D \quad\text{at } d_{ff} = 4D.$$
#
# Multi-head attention has $4(D^2 + D)$. So at `d_ff = 4D` the FFN holds about two thirds of a block's
# parameters:

# %%
for D_ in (64, 256, 768):
    n_ffn = sum(p.numel() for p in FeedForward(D_, 4 * D_).parameters())
    n_attn = 4 * (D_ * D_ + D_)
    print(f"D = {D_:4d}: FFN {n_ffn:9,d} (8D^2 + 5D = {8 * D_ * D_ + 5 * D_:9,d}), attention {n_attn:9,d}, "
          f"FFN share {n_ffn / (n_ffn + n_attn):.0%}")

# %% [markdown]
# ## 6. Bonus: SwiGLU
#
# Shazeer (2020), "GLU Variants Improve Transformer", replaces the activation by a **gate**: two linear maps
# of `x`, one passed through SiLU (`SiLU(z) = z·sigmoid(z)`, also called Swish) and multiplied elementwise
# with the other, then a third map back to `D` (his eq. 6; no biases):
#
# $$\mathrm{SwiGLU}(x) = W_{down}\left(\mathrm{SiLU}(W_{gate}\,x) \odot W_{up}\,x\right)$$
#
# ```
# x                                  (B, T, D)
# gate_proj(x), up_proj(x)           (B, T, h)   each; nn.Linear(D, h, bias=False)
# SiLU(gate) * up                    (B, T, h)   the gate decides, per feature, how much of `up` passes
# down_proj                          (B, T, D)   nn.Linear(h, D, bias=False)
# ```
#
# LLaMA, Mistral and PaLM use it. It has **three** `D × h` matrices instead of two, so to spend the same
# parameters as `FeedForward(D, 4D)` the hidden width shrinks to `h = 2/3 · 4D`
# (`3·D·h = 2·D·d_ff`), rounded to an integer: `h = round(2 * 4 * D / 3)` (LLaMA also rounds it up to a
# multiple of 256).
#
# ### Bonus exercise: `SwiGLU(d_model, d_ff)`
#
# Attributes `gate_proj`, `up_proj` (`nn.Linear(d_model, d_ff, bias=False)`) and `down_proj`
# (`nn.Linear(d_ff, d_model, bias=False)`); `forward(x)` as above, with `d_ff` used as the hidden width
# `h` as given. The check copies weights in by name, compares outputs, and tells the branches apart: SiLU
# belongs on `gate_proj`'s branch. Like the FFN's check, it also calls your module twice in training mode
# (no dropout), changes one token (no other token may move), and tries a 2-D input `(N, D)`. Not graded.
#
# **Difficulty:** ★★☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# A gate: two linear maps of the same `x`, only one of them through SiLU, multiplied feature by feature;
# the product `(..., h)` goes through the third map, back to `D`. The SiLU goes on the gate's branch only:
# the other branch stays linear.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# The gate is `self.gate_proj(x)`: that is what goes into `F.silu`. The other branch, `self.up_proj(x)`,
# stays linear. Multiply them with `*` (elementwise), not `@`: both are `(..., d_ff)`. Then apply
# `self.down_proj`. `__init__` creates the three `nn.Linear` of the exercise, each with `bias=False`.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `F.silu(self.gate_proj(x))` times `self.up_proj(x)`, then `down_proj`:
# `return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))  # (..., D)`
# </details>

# %% solution="swiglu"
class SwiGLU(nn.Module):
    """The SwiGLU feed-forward network: down_proj(SiLU(gate_proj(x)) * up_proj(x)), no biases.

    Args:
        d_model: the width D of a token vector.
        d_ff: the hidden width h (pass round(2 * 4 * d_model / 3) to match FeedForward(D, 4D)).

    Attributes:
        gate_proj, up_proj: nn.Linear(d_model, d_ff, bias=False); down_proj: nn.Linear(d_ff, d_model, bias=False).
        3 * D * d_ff parameters in all.

    forward(x): x (..., D) -> (..., D).
    """

    def __init__(self, d_model: int, d_ff: int):
        ### BEGIN SOLUTION
        super().__init__()
        self.gate_proj = nn.Linear(d_model, d_ff, bias=False)
        self.up_proj = nn.Linear(d_model, d_ff, bias=False)
        self.down_proj = nn.Linear(d_ff, d_model, bias=False)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        h = F.silu(self.gate_proj(x)) * self.up_proj(x)  # (..., d_ff)
        return self.down_proj(h)  # (..., D)
        ### END SOLUTION


# %%
check_swiglu(SwiGLU)

# %% [markdown]
# The parameter budgets side by side (your classes). When 3 divides `2·d_ff` (here `D = 48`:
# `d_ff = 192`, `h = 128`), SwiGLU's three matrices hold exactly as many weights as FeedForward's two;
# otherwise `h` is rounded and the counts differ slightly (`D = 64`). FeedForward has `d_ff + D` biases
# on top.

# %%
for D_ in (48, 64):
    h = round(2 * 4 * D_ / 3)  # SwiGLU's hidden width for the budget of FeedForward(D, 4D)
    n_ff = sum(p.numel() for p in FeedForward(D_, 4 * D_).parameters())
    n_sw = sum(p.numel() for p in SwiGLU(D_, h).parameters())
    print(f"D = {D_}: FeedForward(D, {4 * D_}) {n_ff:,d} parameters ({n_ff - 5 * D_:,d} weights); "
          f"SwiGLU(D, h={h}) {n_sw:,d}")

# %% [markdown]
# ## Summary
#
# - `FeedForward`: `(..., D) → linear1 → (..., d_ff) → GELU → linear2 → (..., D)`, applied to every token
#   on its own (position-wise); attention is the only place where tokens mix.
# - Without the nonlinearity the two layers collapse into one affine map.
# - GELU(x) = x·Φ(x), exact in `F.gelu`; the tanh form is within 5·10⁻⁴.
# - Parameters: `2·D·d_ff + d_ff + D`, i.e. `8D² + 5D` at `d_ff = 4D`, about two thirds of a block.
# - SwiGLU: `down(SiLU(gate(x)) ⊙ up(x))`, `3·D·h` parameters; `h = 2/3 · d_ff` matches the budget.
#
# **Next:** notebook 06 adds the other two ingredients of a block: LayerNorm and residual connections.
