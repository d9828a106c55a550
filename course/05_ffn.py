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

# %% [markdown] lang="zh"
# # 05 · 前馈网络
#
# 注意力（attention）让 token 之间互相交换信息；但它说到底是一个加权平均，单靠它，对一个 token 本身做不了多少变换。每个 Transformer 块（Transformer block）的后半部分，是一个**对每个 token 单独**作用的两层小网络：逐位置前馈网络（position-wise feed-forward network，FFN）。学完这本笔记本，你将能够：
#
# 1. 写出 `FeedForward(d_model, d_ff)`：`linear2(GELU(linear1(x)))`，并说清楚为什么少不了 GELU；
# 2. 证明它是*逐位置*的：token 之间没有任何信息流动；
# 3. 数出它的参数（parameter）量，`2·D·d_ff + d_ff + D`（`d_ff = 4D` 时约为 `8D²`：一个块的大部分参数都在这里）；
# 4. （附加题）写出 `SwiGLU`，也就是 LLaMA 一类模型用的门控变体，参数预算保持不变。
#
# 形状（shape）约定同前：`B` 是批次（batch）大小，`T` 是位置，`D` = `d_model`，`d_ff` 是前馈网络的隐藏层宽度。

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

# %% [markdown] lang="zh"
# 每个练习（exercise）后面的演示用的都是*你*写的类：先把练习做完，让它的检查（check）通过，再运行它下面的单元格。
#
# ## 1. 公式和形状
#
# Vaswani 等人（2017，§3.3）在每个位置上做“两次线性变换，中间夹一个 ReLU 激活”；GPT 和 BERT 把 ReLU 换成了 GELU，我们也这么做：
#
# $$\mathrm{FFN}(x) = W_2\,\mathrm{GELU}(W_1 x + b_1) + b_2$$
#
# ```
# x                 (B, T, D)
# linear1           (B, T, d_ff)    W_1: d_ff x D, b_1: d_ff    扩宽
# GELU              (B, T, d_ff)    逐元素
# linear2           (B, T, D)       W_2: D x d_ff, b_2: D       压回模型宽度
# ```
#
# 隐藏层宽度通常取 `d_ff = 4 * d_model`（原论文：512 → 2048；GPT-2：768 → 3072）。在本课程里，`d_ff` 由调用者传入，所以这个模块对任何宽度都适用。
#
# **`nn.Linear` 只作用在最后一维上。** 输入是 `(B, T, D)` 时，它对 `B·T` 个 token 向量中的每一个都做同一个 `D → d_ff` 映射；前面那些维度都只是“更多的 token”而已。所以前馈网络从来不需要 `reshape`：

# %%
B, T, D, d_ff = 2, 4, 8, 32
lin = nn.Linear(D, d_ff)
x = torch.randn(B, T, D)  # (B, T, D)
with torch.no_grad():
    all_at_once = lin(x)  # (B, T, d_ff)
    one_token = lin(x[1, 2])  # (d_ff,): token 2 of sequence 1, alone
print(all_at_once.shape, one_token.shape)
print("same result for that token:", torch.allclose(all_at_once[1, 2], one_token))

# %% lang="zh"
B, T, D, d_ff = 2, 4, 8, 32
lin = nn.Linear(D, d_ff)
x = torch.randn(B, T, D)  # (B, T, D)
with torch.no_grad():
    all_at_once = lin(x)  # (B, T, d_ff)
    one_token = lin(x[1, 2])  # (d_ff,)：第 1 个序列的第 2 个 token，单独算
print(all_at_once.shape, one_token.shape)
print("same result for that token:", torch.allclose(all_at_once[1, 2], one_token))

# %% [markdown]
# ## 2. Why the nonlinearity
#
# Without an activation, two linear layers are **one** linear layer:
# $W_2(W_1 x + b_1) + b_2 = (W_2 W_1)\,x + (W_2 b_1 + b_2)$. All those `2·D·d_ff` parameters would buy
# nothing a single `D × D` matrix can't do. Let's verify it by merging the two layers:

# %% [markdown] lang="zh"
# ## 2. 为什么需要非线性
#
# 没有激活函数（activation function）时，两个线性层就等于**一个**线性层：
# $W_2(W_1 x + b_1) + b_2 = (W_2 W_1)\,x + (W_2 b_1 + b_2)$。那 `2·D·d_ff` 个参数就白花了：它们能做的，一个 `D × D` 矩阵全都能做。我们把两层合并起来验证一下：

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

# %% [markdown] lang="zh"
# 还有一个不用看权重的检验：仿射映射 `f` 对任意输入都满足 `f(a) + f(b) - f(0) = f(a + b)`。在两层之间加上非线性，这个等式就不成立了。（检查就是用这个办法来发现你漏掉了激活函数。）

# %%
def affine_gap(f, a, b):
    """max |f(a) + f(b) - f(0) - f(a + b)|: 0 (up to rounding) exactly when f is affine on these inputs."""
    with torch.no_grad():
        return (f(a) + f(b) - f(torch.zeros_like(a)) - f(a + b)).abs().max().item()


a, b2 = torch.randn(B, T, D), torch.randn(B, T, D)
print(f"no activation: gap = {affine_gap(lambda t: lin2(lin1(t)), a, b2):.1e}")
print(f"with GELU:     gap = {affine_gap(lambda t: lin2(F.gelu(lin1(t))), a, b2):.1e}")

# %% lang="zh"
def affine_gap(f, a, b):
    """max |f(a) + f(b) - f(0) - f(a + b)|：当且仅当 f 在这些输入上是仿射函数时为 0（舍入误差以内）。"""
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

# %% [markdown] lang="zh"
# ## 3. GELU
#
# ReLU 把所有负输入置零，正输入原样通过。GELU（Hendrycks & Gimpel，2016）则给输入乘上一个权重，这个权重是标准正态变量小于该输入的概率：
#
# $$\mathrm{GELU}(x) = x\,\Phi(x), \qquad \Phi(x) = \tfrac{1}{2}\left(1 + \mathrm{erf}(x/\sqrt{2})\right)$$
#
# 它是光滑的；`|x|` 很大时和 ReLU 很接近；输入是绝对值较小的负数时，输出略小于零（最小值约为 -0.17，在 x = -0.75 附近）。在 PyTorch 里可以写 `F.gelu(x)`，也可以用层 `nn.GELU()`，两者都是精确形式。GPT-2 的代码用的是更快的 tanh 近似 `F.gelu(x, approximate="tanh")`，它和精确形式最多相差 5·10⁻⁴（见下面的右图）；两种写法检查都接受。

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

# %% [markdown] lang="zh"
# ### 练习：`FeedForward(d_model, d_ff)`
#
# - `__init__(self, d_model, d_ff)`：调用 `super().__init__()`，然后创建 `self.linear1 = nn.Linear(d_model, d_ff)` 和 `self.linear2 = nn.Linear(d_ff, d_model)`。名字必须一字不差：检查会按名字把权重拷进去。
# - `forward(self, x)`：`(..., D) -> (..., D)`：先 `linear1`，再 GELU，最后 `linear2`。不要 dropout，不要残差连接（residual connection）：残差由笔记本 07 的块来加；也不要任何会碰到其他位置的操作。
#
# 检查会用它自己的尺寸构造你的类（`B`、`T`、`D`、`d_ff` 各不相同，而且 `d_ff` 不是 `4 * D`），并且是在**训练模式**下；它拷入随机权重，再把你的输出和参考实现比较。它还会用同一个输入调用两次（两次输出必须一致：不能有 dropout），改动一个 token（其他 token 的输出一点都不能变），试一个 2 维输入 `(N, D)`，数参数个数，并检查梯度（gradient）能传到两个层。
#
# **难度：** ★☆☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 两个线性映射，中间夹一个非线性的激活函数（activation function），对每个 token 单独作用：先扩宽到 `d_ff`，过 GELU，再压回 `D`。层只在 `__init__` 里创建一次；`forward` 只管使用它们。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# `__init__` 在练习里已经写明了。GELU 没有参数（parameter），所以可以在 `forward` 里直接调用 `F.gelu`（也可以在 `__init__` 里创建 `self.act = nn.GELU()`）。`forward` 就是一个表达式，从里往外读：`x` 进 `self.linear1`（得到 `(..., d_ff)`），结果进 GELU，再进 `self.linear2`（得到 `(..., D)`）。`nn.Linear` 只作用在最后一维上，所以 `(B, T, D)` 和 `(N, D)` 两种输入都能用。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# 一行就够：
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


# %% lang="zh"
class FeedForward(nn.Module):
    """逐位置的前馈网络：linear2(GELU(linear1(x)))。

    构造参数：
        d_model: 一个 token 向量的宽度 D。
        d_ff: 隐藏层宽度（通常是 4 * d_model）。

    属性：
        linear1: nn.Linear(d_model, d_ff)；linear2: nn.Linear(d_ff, d_model)。
        一共 2 * D * d_ff + d_ff + D 个参数。

    forward(x)：x 为 (..., D) -> (..., D)，每个 token 各自变换，互不相干。
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

# %% [markdown] lang="zh"
# **如果检查没通过：** “可能的错误”那一行能认出的错误包括：漏了激活函数；用了 ReLU 或别的激活函数，而不是 GELU；隐藏层宽度写成了 `4 * d_model`，而不是 `d_ff`；加了 dropout；在 `linear2` 之后又加了激活；在前馈网络内部加了残差；以及会把不同位置混在一起的代码。
#
# ## 4. 逐位置：token 之间互不相见
#
# 只改动一个 token 的输入，就只有这个 token 的输出会变（用的是你的 `FeedForward`）：

# %%
ffn = FeedForward(D, d_ff)
x = torch.randn(1, 6, D)  # (1, T, D)
x_changed = x.clone()
x_changed[0, 3] = torch.randn(D)  # a new token at position 3
with torch.no_grad():
    moved = (ffn(x_changed) - ffn(x)).abs().amax(dim=-1)[0]  # (T,): largest change per position
for t, m in enumerate(moved.tolist()):
    print(f"position {t}: output changed by {m:.3f}")

# %% lang="zh"
ffn = FeedForward(D, d_ff)
x = torch.randn(1, 6, D)  # (1, T, D)
x_changed = x.clone()
x_changed[0, 3] = torch.randn(D)  # 在位置 3 换一个新 token
with torch.no_grad():
    moved = (ffn(x_changed) - ffn(x)).abs().amax(dim=-1)[0]  # (T,)：每个位置上最大的变化
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

# %% [markdown] lang="zh"
# 所以在一个 Transformer 块里，注意力是 token 之间交换信息的**唯一**地方；前馈网络随后加工的，是每个 token 已经收集到的信息。一个只由前馈网络组成的模型，会把每个 token 都当成序列里只有它自己。
#
# ## 5. 参数量
#
# `linear1` 有 `D·d_ff` 个权重和 `d_ff` 个偏置；`linear2` 有 `d_ff·D` 个权重和 `D` 个偏置：
#
# $$2\,D\,d_{ff} + d_{ff} + D \;=\; 8D^2 + 5D \quad\text{at } d_{ff} = 4D.$$
#
# 多头注意力（multi-head attention）有 $4(D^2 + D)$ 个参数。所以在 `d_ff = 4D` 时，一个块里大约三分之二的参数都在前馈网络里：

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

# %% [markdown] lang="zh"
# ## 6. 附加：SwiGLU
#
# Shazeer（2020）在《GLU Variants Improve Transformer》里把激活函数换成了一个**门**：对 `x` 做两个线性映射，其中一个过 SiLU（`SiLU(z) = z·sigmoid(z)`，也叫 Swish），再和另一个逐元素相乘，最后用第三个映射变回 `D`（见论文式 6；不带偏置）：
#
# $$\mathrm{SwiGLU}(x) = W_{down}\left(\mathrm{SiLU}(W_{gate}\,x) \odot W_{up}\,x\right)$$
#
# ```
# x                                  (B, T, D)
# gate_proj(x), up_proj(x)           (B, T, h)   各一个；nn.Linear(D, h, bias=False)
# SiLU(gate) * up                    (B, T, h)   门逐个特征决定 up 能通过多少
# down_proj                          (B, T, D)   nn.Linear(h, D, bias=False)
# ```
#
# LLaMA、Mistral 和 PaLM 都用它。它有**三个** `D × h` 矩阵，而不是两个；所以要和 `FeedForward(D, 4D)` 花同样多的参数，隐藏层宽度得缩到 `h = 2/3 · 4D`（`3·D·h = 2·D·d_ff`），再取整：`h = round(2 * 4 * D / 3)`（LLaMA 还会再把它向上取到 256 的倍数）。
#
# ### 附加练习：`SwiGLU(d_model, d_ff)`
#
# 属性有 `gate_proj`、`up_proj`（`nn.Linear(d_model, d_ff, bias=False)`）和 `down_proj`（`nn.Linear(d_ff, d_model, bias=False)`）；`forward(x)` 按上面的图来写，隐藏宽度 `h` 就直接用传进来的 `d_ff`。检查会按名字拷入权重、比较输出，还能分辨两条分支：SiLU 应该放在 `gate_proj` 那条分支上。和前馈网络的检查一样，它也会在训练模式下调用你的模块两次（不能有 dropout），改动一个 token（其他 token 都不能变），并试一个 2 维输入 `(N, D)`。这道题不计分。
#
# **难度：** ★★☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 门控的意思是：对同一个 `x` 做两个线性映射，只让其中一个过 SiLU，再逐个特征相乘；乘积 `(..., h)` 经过第三个映射，回到 `D`。SiLU 只放在门那条分支上：另一条分支保持线性。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 门就是 `self.gate_proj(x)`：送进 `F.silu` 的是它。另一条分支 `self.up_proj(x)` 保持线性。两者用 `*`（逐元素）相乘，不是 `@`：两个都是 `(..., d_ff)`。然后再过 `self.down_proj`。`__init__` 里创建练习中说的三个 `nn.Linear`，每个都带 `bias=False`。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `F.silu(self.gate_proj(x))` 乘以 `self.up_proj(x)`，再过 `down_proj`：
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


# %% lang="zh"
class SwiGLU(nn.Module):
    """SwiGLU 前馈网络：down_proj(SiLU(gate_proj(x)) * up_proj(x))，没有偏置。

    构造参数：
        d_model: 一个 token 向量的宽度 D。
        d_ff: 隐藏层宽度 h（传入 round(2 * 4 * d_model / 3)，参数量就和 FeedForward(D, 4D) 相当）。

    属性：
        gate_proj, up_proj: nn.Linear(d_model, d_ff, bias=False)；down_proj: nn.Linear(d_ff, d_model,
        bias=False)。
        一共 3 * D * d_ff 个参数。

    forward(x)：x 为 (..., D) -> (..., D)。
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

# %% [markdown] lang="zh"
# 把两种参数预算放在一起比一比（用的是你的类）。当 3 能整除 `2·d_ff` 时（这里 `D = 48`：`d_ff = 192`，`h = 128`），SwiGLU 的三个矩阵和 FeedForward 的两个矩阵权重数完全相同；否则 `h` 要取整，参数量就会略有差别（`D = 64`）。另外，FeedForward 还多出 `d_ff + D` 个偏置。

# %%
for D_ in (48, 64):
    h = round(2 * 4 * D_ / 3)  # SwiGLU's hidden width for the budget of FeedForward(D, 4D)
    n_ff = sum(p.numel() for p in FeedForward(D_, 4 * D_).parameters())
    n_sw = sum(p.numel() for p in SwiGLU(D_, h).parameters())
    print(f"D = {D_}: FeedForward(D, {4 * D_}) {n_ff:,d} parameters ({n_ff - 5 * D_:,d} weights); "
          f"SwiGLU(D, h={h}) {n_sw:,d}")

# %% lang="zh"
for D_ in (48, 64):
    h = round(2 * 4 * D_ / 3)  # 在 FeedForward(D, 4D) 的参数预算下 SwiGLU 的隐藏层宽度
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

# %% [markdown] lang="zh"
# ## 小结
#
# - `FeedForward`：`(..., D) → linear1 → (..., d_ff) → GELU → linear2 → (..., D)`，对每个 token 单独作用（逐位置）；注意力是 token 之间唯一发生混合的地方。
# - 没有非线性，两层就会塌缩成一个仿射映射。
# - GELU(x) = x·Φ(x)，`F.gelu` 给出的是精确值；tanh 近似与它相差不超过 5·10⁻⁴。
# - 参数量：`2·D·d_ff + d_ff + D`，即 `d_ff = 4D` 时为 `8D² + 5D`，约占一个块的三分之二。
# - SwiGLU：`down(SiLU(gate(x)) ⊙ up(x))`，`3·D·h` 个参数；取 `h = 2/3 · d_ff` 就能对齐预算。
#
# **下一步：** 笔记本 06 加上块的另外两个组成部分：层归一化（LayerNorm）和残差连接。
