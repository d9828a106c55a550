# %% [markdown]
# # 06 · LayerNorm and residual connections
#
# A Transformer block is attention and a feed-forward network, plus two pieces of plumbing that make a
# deep stack of them trainable: **layer normalisation** and **residual connections**. By the end of this
# notebook you can:
#
# 1. write `LayerNorm(d_model, eps=1e-5)` from scratch, equal to PyTorch's `nn.LayerNorm`, including the
#    two details most versions get wrong (the biased variance and where `eps` goes);
# 2. explain why Transformers normalise each token on its own (LayerNorm) rather than each feature
#    over the batch (BatchNorm), with a batch of one and with padding;
# 3. wire a residual connection, Post-LN or Pre-LN, and see what it does to the gradients of a 32-layer
#    stack.

# %% [markdown] lang="zh"
# # 06 · 层归一化与残差连接
#
# 一个 Transformer 块（Transformer block）由注意力（attention）和前馈网络（feed-forward network，FFN）组成。要把很多块堆得很深还训练得动，得靠两个不起眼却少不了的部件：**层归一化**（LayerNorm）和**残差连接**（residual connection）。学完这本笔记本，你将能够：
#
# 1. 从零写出 `LayerNorm(d_model, eps=1e-5)`，结果和 PyTorch 的 `nn.LayerNorm` 完全一致，包括大多数自己写的版本都会弄错的两个细节：有偏的方差（variance），以及 `eps` 放在哪里；
# 2. 讲清楚 Transformer 为什么对每个 token 单独归一化（LayerNorm），而不是让每个特征在整个批次（batch）上归一化（BatchNorm），并用“只有一个 token 的批次”和“带填充的批次”两个例子说明；
# 3. 接好残差连接，用后置层归一化（Post-LN）或前置层归一化（Pre-LN）两种接法，看看它对一个 32 层堆叠的梯度（gradient）有什么影响。

# %%
import matplotlib.pyplot as plt
import torch
from torch import nn

from tinylm_checks import check_layer_norm
from tinylm_checks import plot_changes, plot_depth_profile, plot_token_vectors
from tinylm_solutions.ffn import FeedForward  # notebook 05's module (the course's version)

_ = torch.manual_seed(0)

# %% lang="zh"
import matplotlib.pyplot as plt
import torch
from torch import nn

from tinylm_checks import check_layer_norm
from tinylm_checks import plot_changes, plot_depth_profile, plot_token_vectors
from tinylm_solutions.ffn import FeedForward  # 笔记本 05 的模块（课程自带的版本）

_ = torch.manual_seed(0)

# %% [markdown]
# **About the imports.** `FeedForward` is the course's version of the module you wrote in notebook 05
# (same signature), so this notebook stands on its own. The demos after the exercise use *your*
# `LayerNorm`: make its check pass before running the cells below it.
#
# ## 1. What LayerNorm computes
#
# Each layer of a deep network changes the scale of what passes through it, and over many layers those
# changes multiply: activations drift towards huge or tiny values, and so do the gradients. LayerNorm
# (Ba, Kiros & Hinton, 2016) resets the scale of **every token vector** on its own. For one token
# $x \in \mathbb{R}^D$:
#
# $$\mu = \frac{1}{D}\sum_{i=1}^{D} x_i, \qquad
#   \sigma^2 = \frac{1}{D}\sum_{i=1}^{D} (x_i - \mu)^2, \qquad
#   \hat{x}_i = \frac{x_i - \mu}{\sqrt{\sigma^2 + \epsilon}}, \qquad
#   y_i = \mathrm{weight}_i\,\hat{x}_i + \mathrm{bias}_i$$
#
# $\hat{x}$ has mean 0 and variance (almost) 1. Then the learned `weight` and `bias` (the paper's gain
# $\gamma$ and bias $\beta$, one per feature) let the model pick whatever scale and shift it needs; they
# start at ones and zeros, so a new LayerNorm only normalises. Parameters: $2D$.
#
# ```
# x                          (B, T, D)
# mean, var over dim=-1      (B, T, 1)   keepdim=True: one mean and one variance per token
# x_hat                      (B, T, D)   (x - mean) / sqrt(var + eps)
# x_hat * weight + bias      (B, T, D)   weight, bias: (D,), broadcast over B and T
# ```

# %% [markdown] lang="zh"
# **关于导入。** `FeedForward` 是课程版的实现，对应你在笔记本 05 里写的模块（签名相同），这样这本笔记本可以独立运行。练习（exercise）之后的演示用的是*你自己*的 `LayerNorm`：先让它的检查（check）通过，再运行后面的单元格。
#
# ## 1. 层归一化算的是什么
#
# 在深层网络里，数值每经过一层，尺度就会变一次。层数一多，这些变化会连乘起来：激活值不是越来越大，就是越来越小，梯度也一样。层归一化（Ba、Kiros 和 Hinton，2016）把**每个 token 向量**各自拉回统一的尺度。对单个 token $x \in \mathbb{R}^D$：
#
# $$\mu = \frac{1}{D}\sum_{i=1}^{D} x_i, \qquad
#   \sigma^2 = \frac{1}{D}\sum_{i=1}^{D} (x_i - \mu)^2, \qquad
#   \hat{x}_i = \frac{x_i - \mu}{\sqrt{\sigma^2 + \epsilon}}, \qquad
#   y_i = \mathrm{weight}_i\,\hat{x}_i + \mathrm{bias}_i$$
#
# $\hat{x}$ 的均值为 0，方差（几乎）为 1。接着，可学习的 `weight` 和 `bias`（论文里的增益 $\gamma$ 和偏置 $\beta$，每个特征各一个）让模型自己决定需要什么尺度和平移。它们的初始值是全 1 和全 0，所以刚建好的层归一化只做归一化。参数（parameter）量：$2D$。
#
# ```
# x                          (B, T, D)
# mean, var over dim=-1      (B, T, 1)   keepdim=True：每个 token 一个均值、一个方差
# x_hat                      (B, T, D)   (x - mean) / sqrt(var + eps)
# x_hat * weight + bias      (B, T, D)   weight、bias 形状为 (D,)，在 B 和 T 上广播
# ```

# %%
x = torch.tensor([[[-10.0, 20.0, 35.0, 70.0, 40.0, 75.0]]])  # (B=1, T=1, D=6): mean about 38, spread about 29
ln = nn.LayerNorm(6)
with torch.no_grad():
    y = ln(x)  # (1, 1, 6)
print("x:    ", x[0, 0].tolist())
print("y:    ", [round(v, 3) for v in y[0, 0].tolist()])
print(f"y has mean {y.mean().item():.2e} and variance (divided by D) {y.var(unbiased=False).item():.5f}")

# %% lang="zh"
x = torch.tensor([[[-10.0, 20.0, 35.0, 70.0, 40.0, 75.0]]])  # (B=1, T=1, D=6)：均值约 38，离散程度约 29
ln = nn.LayerNorm(6)
with torch.no_grad():
    y = ln(x)  # (1, 1, 6)
print("x:    ", x[0, 0].tolist())
print("y:    ", [round(v, 3) for v in y[0, 0].tolist()])
print(f"y has mean {y.mean().item():.2e} and variance (divided by D) {y.var(unbiased=False).item():.5f}")

# %% [markdown]
# ## 2. Two details that must match `nn.LayerNorm`
#
# **The variance divides by D, not D − 1.** `torch.var` and `torch.std` default to the *unbiased*
# estimate, which divides by `D − 1`. LayerNorm uses the plain average, dividing by `D` (PyTorch's
# documentation says so: "the variance is calculated via the biased estimator"). At `D = 768` the two
# variances differ by 0.13% and the outputs by 0.07%; at small `D` by a lot, which is why the check tests at `D ≤ 8`:

# %% [markdown] lang="zh"
# ## 2. 必须和 `nn.LayerNorm` 一致的两个细节
#
# **方差除以 D，不是 D − 1。** `torch.var` 和 `torch.std` 默认算的是*无偏*估计，除以 `D − 1`。层归一化用的是普通的平均，除以 `D`（PyTorch 文档写得很清楚：方差按有偏估计计算）。`D = 768` 时两种方差只差 0.13%，输出只差 0.07%；`D` 很小时就差得多了，所以检查专门在 `D ≤ 8` 时测试：

# %%
x = torch.tensor([[1.0, 2.0, 4.0, 9.0]])  # (1, D=4): one token
mean = x.mean(dim=-1, keepdim=True)  # (1, 1)
print("x.var(dim=-1)                 =", x.var(dim=-1).item(), "  divides by D - 1 (unbiased)")
print("x.var(dim=-1, unbiased=False) =", x.var(dim=-1, unbiased=False).item(), " divides by D: what LayerNorm uses")
with torch.no_grad():
    print("nn.LayerNorm(4):      ", nn.LayerNorm(4)(x)[0].tolist())
for name, var in (("with the biased variance:  ", x.var(dim=-1, keepdim=True, unbiased=False)),
                  ("with the unbiased variance:", x.var(dim=-1, keepdim=True))):
    print(name, ((x - mean) / torch.sqrt(var + 1e-5))[0].tolist())

# %% lang="zh"
x = torch.tensor([[1.0, 2.0, 4.0, 9.0]])  # (1, D=4)：一个 token
mean = x.mean(dim=-1, keepdim=True)  # (1, 1)
print("x.var(dim=-1)                 =", x.var(dim=-1).item(), "  divides by D - 1 (unbiased)")
print("x.var(dim=-1, unbiased=False) =", x.var(dim=-1, unbiased=False).item(), " divides by D: what LayerNorm uses")
with torch.no_grad():
    print("nn.LayerNorm(4):      ", nn.LayerNorm(4)(x)[0].tolist())
for name, var in (("with the biased variance:  ", x.var(dim=-1, keepdim=True, unbiased=False)),
                  ("with the unbiased variance:", x.var(dim=-1, keepdim=True))):
    print(name, ((x - mean) / torch.sqrt(var + 1e-5))[0].tolist())

# %% [markdown]
# **`eps` goes inside the square root.** It is there for rows whose variance is 0 or nearly 0: a
# constant row (all features equal) would otherwise give 0 / 0. `nn.LayerNorm` divides by
# $\sqrt{\sigma^2 + \epsilon}$; a common variant, $(x - \mu) / (\sigma + \epsilon)$, gives the same on
# ordinary rows but not when $\sigma^2$ is near $\epsilon$:

# %% [markdown] lang="zh"
# **`eps` 放在平方根里面。** 它是为方差为 0 或接近 0 的行准备的：一行如果是常数（所有特征都相等），不加它就会出现 0 / 0。`nn.LayerNorm` 除以的是 $\sqrt{\sigma^2 + \epsilon}$。还有一种常见写法 $(x - \mu) / (\sigma + \epsilon)$，在普通的行上结果一样，但当 $\sigma^2$ 接近 $\epsilon$ 时就不一样了：

# %%
rows = torch.tensor([[2.5, 2.5, 2.5, 2.5],           # constant: variance exactly 0
                     [3.0, 3.001, 2.999, 3.0004],     # nearly constant: variance about 5e-7, below eps
                     [1.0, 2.0, 4.0, 9.0]],           # ordinary
                    dtype=torch.float64)  # (3, D=4)
eps = 1e-5
mean = rows.mean(dim=-1, keepdim=True)  # (3, 1)
var = ((rows - mean) ** 2).mean(dim=-1, keepdim=True)  # (3, 1), biased
with torch.no_grad():
    reference = nn.LayerNorm(4, eps=eps).double()(rows)
torch.set_printoptions(precision=4, sci_mode=False)
print("nn.LayerNorm:\n", reference)
print("(x - mean) / sqrt(var + eps), eps inside:\n", (rows - mean) / torch.sqrt(var + eps))
print("(x - mean) / (sqrt(var) + eps), eps outside:\n", (rows - mean) / (torch.sqrt(var) + eps))
print("(x - mean) / sqrt(var), no eps:\n", (rows - mean) / torch.sqrt(var))
torch.set_printoptions(profile="default")

# %% lang="zh"
rows = torch.tensor([[2.5, 2.5, 2.5, 2.5],           # 常数：方差恰好为 0
                     [3.0, 3.001, 2.999, 3.0004],     # 几乎是常数：方差约 5e-7，比 eps 还小
                     [1.0, 2.0, 4.0, 9.0]],           # 普通的一行
                    dtype=torch.float64)  # (3, D=4)
eps = 1e-5
mean = rows.mean(dim=-1, keepdim=True)  # (3, 1)
var = ((rows - mean) ** 2).mean(dim=-1, keepdim=True)  # (3, 1)，有偏方差
with torch.no_grad():
    reference = nn.LayerNorm(4, eps=eps).double()(rows)
torch.set_printoptions(precision=4, sci_mode=False)
print("nn.LayerNorm:\n", reference)
print("(x - mean) / sqrt(var + eps), eps inside:\n", (rows - mean) / torch.sqrt(var + eps))
print("(x - mean) / (sqrt(var) + eps), eps outside:\n", (rows - mean) / (torch.sqrt(var) + eps))
print("(x - mean) / sqrt(var), no eps:\n", (rows - mean) / torch.sqrt(var))
torch.set_printoptions(profile="default")

# %% [markdown]
# Inside: equal to `nn.LayerNorm` on every row. Outside: the nearly constant row is blown up to the
# size of an ordinary one. No eps: the constant row is `nan`, and a single `nan` spreads through every
# later layer.
#
# **`keepdim=True`.** `x.mean(dim=-1)` of a `(B, T, D)` tensor is `(B, T)`, which doesn't line up with `x`
# for broadcasting (trailing dimensions `T` vs `D`); `x.mean(dim=-1, keepdim=True)` is `(B, T, 1)` and
# broadcasts over the features.
#
# ### Exercise: `LayerNorm(d_model, eps=1e-5)`
#
# - `__init__(self, d_model, eps=1e-5)`: call `super().__init__()`; store `self.eps = eps`; create
#   `self.weight = nn.Parameter(torch.ones(d_model))` and `self.bias = nn.Parameter(torch.zeros(d_model))`
#   (`nn.Parameter` registers them, so `model.parameters()` and the optimiser see them).
# - `forward(self, x)`: `(..., D) -> (..., D)`: mean and biased variance over the last dimension with
#   `keepdim=True`, `x_hat = (x - mean) / torch.sqrt(var + self.eps)`, return `x_hat * self.weight + self.bias`.
#
# The check builds your class with `D ≤ 8`, copies random `weight` and `bias` into it and into
# `nn.LayerNorm`, and compares outputs (in float64, to about 1e-6) on rows with a large mean and spread,
# a tiny spread of about 1e-3, and constant rows; again with `eps` other than the default (so `1e-5`
# written into `forward` fails); on a 2-D input `(N, D)`; and compares the gradients of `weight`, `bias`
# and `x` with `nn.LayerNorm`'s. It also checks the parameters: names, shapes `(D,)`, ones and zeros at
# the start, `2D` in all.
#
# **Difficulty:** ★★☆ · **Time:** about 15 min
#
# <details><summary>Hint 1: the idea</summary>
#
# LayerNorm works on each token on its own: over that token's D features it takes the mean and the
# variance, subtracts the mean, divides by the standard deviation, then applies the learned scale and
# shift. The two details of section 2 decide whether it matches `nn.LayerNorm`: the variance divides by D
# (biased), and `eps` goes inside the square root.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# - Both statistics are means over the last dimension (`dim=-1`) with `keepdim=True`, so both are
#   `(..., 1)` and broadcast over the features. The variance is the mean of the squared differences from
#   the mean; if you prefer `x.var`, pass `unbiased=False`.
# - The square root is `torch.sqrt`, of the variance plus `self.eps` (the check changes `eps`, so a written
#   `1e-5` fails).
# - `self.weight` and `self.bias` are `(D,)` and broadcast over `(..., D)`: multiply the normalised `x` by
#   the weight, then add the bias.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `mean = x.mean(dim=-1, keepdim=True)` and `var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)`, both
# `(..., 1)`; then `return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias  # (..., D)`.
# </details>

# %% [markdown] lang="zh"
# 放在里面：每一行都和 `nn.LayerNorm` 相同。放在外面：那行几乎是常数的输入被放大到和普通行一样的量级。不加 eps：常数行变成 `nan`，而只要出现一个 `nan`，它就会一路传到后面的每一层。
#
# **`keepdim=True`。** 对形状（shape）为 `(B, T, D)` 的张量（tensor），`x.mean(dim=-1)` 得到 `(B, T)`，它和 `x` 对不齐，没法广播（broadcasting）：两者最后一维一个是 `T`，一个是 `D`。`x.mean(dim=-1, keepdim=True)` 得到 `(B, T, 1)`，就能在特征维上广播了。
#
# ### 练习：`LayerNorm(d_model, eps=1e-5)`
#
# - `__init__(self, d_model, eps=1e-5)`：调用 `super().__init__()`；保存 `self.eps = eps`；创建 `self.weight = nn.Parameter(torch.ones(d_model))` 和 `self.bias = nn.Parameter(torch.zeros(d_model))`（`nn.Parameter` 会把它们注册到模块里，这样 `model.parameters()` 和优化器（optimizer）才能看到它们）。
# - `forward(self, x)`：`(..., D) -> (..., D)`。在最后一维上用 `keepdim=True` 求均值和有偏方差，算出 `x_hat = (x - mean) / torch.sqrt(var + self.eps)`，返回 `x_hat * self.weight + self.bias`。
#
# 检查会用 `D ≤ 8` 构造你的类，把随机的 `weight` 和 `bias` 同时复制到你的类和 `nn.LayerNorm` 里，然后比较两者的输出（用 float64，误差约 1e-6 以内）。输入里有三类行：均值和离散程度都很大的行、离散程度只有约 1e-3 的行、常数行。然后换一个非默认的 `eps` 再测一遍（所以在 `forward` 里写死 `1e-5` 会失败）；再测 2 维输入 `(N, D)`；最后把 `weight`、`bias` 和 `x` 的梯度与 `nn.LayerNorm` 的梯度比较。它还会检查参数：名字、形状 `(D,)`、初始值为全 1 和全 0、一共 `2D` 个。
#
# **难度：** ★★☆ · **用时：** 约 15 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 层归一化（LayerNorm）对每个 token 单独处理：在这个 token 的 D 个特征上求均值和方差（variance），减去均值，除以标准差，再乘上可学习的缩放、加上可学习的平移。能不能和 `nn.LayerNorm` 对上，取决于第 2 节的两个细节：方差除以 D（有偏），`eps` 放在平方根里面。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# - 两个统计量都是在最后一维（`dim=-1`）上、带 `keepdim=True` 求的平均，所以形状（shape）都是 `(..., 1)`，能在特征维上广播（broadcasting）。方差（variance）就是“与均值之差的平方”的平均；如果你想用 `x.var`，要传 `unbiased=False`。
# - 平方根用 `torch.sqrt`，对方差加上 `self.eps` 之后开方（检查（check）会改 `eps`，写死的 `1e-5` 过不了）。
# - `self.weight` 和 `self.bias` 的形状是 `(D,)`，会在 `(..., D)` 上广播：先把归一化后的 `x` 乘以 weight，再加上 bias。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `mean = x.mean(dim=-1, keepdim=True)`，`var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)`，两者形状（shape）都是 `(..., 1)`；然后 `return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias  # (..., D)`。
# </details>

# %% solution="layer_norm"
class LayerNorm(nn.Module):
    """Layer normalisation over the last dimension, equal to nn.LayerNorm(d_model, eps).

    Args:
        d_model: the size D of the normalised (last) dimension.
        eps: added to the variance inside the square root (default 1e-5, as nn.LayerNorm).

    Attributes:
        weight: nn.Parameter (D,), starts at ones; bias: nn.Parameter (D,), starts at zeros. 2 D parameters.

    forward(x): x (..., D) -> (..., D); mean and biased variance over the last dimension of each token.
    """

    def __init__(self, d_model: int, eps: float = 1e-5):
        ### BEGIN SOLUTION
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))  # (D,)
        self.bias = nn.Parameter(torch.zeros(d_model))  # (D,)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        mean = x.mean(dim=-1, keepdim=True)  # (..., 1)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # (..., 1), biased: divided by D
        x_hat = (x - mean) / torch.sqrt(var + self.eps)  # (..., D)
        return x_hat * self.weight + self.bias  # (..., D)
        ### END SOLUTION


# %% lang="zh"
class LayerNorm(nn.Module):
    """沿最后一维做层归一化，结果等于 nn.LayerNorm(d_model, eps)。

    构造参数：
        d_model: 被归一化的（最后一）维的大小 D。
        eps: 开平方前加到方差上的数（默认 1e-5，和 nn.LayerNorm 一样）。

    属性：
        weight: nn.Parameter (D,)，初始全为 1；bias: nn.Parameter (D,)，初始全为 0。共 2 D 个参数。

    forward(x)：x 为 (..., D) -> (..., D)；对每个 token 沿最后一维求均值和有偏方差。
    """

    def __init__(self, d_model: int, eps: float = 1e-5):
        ### BEGIN SOLUTION
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))  # (D,)
        self.bias = nn.Parameter(torch.zeros(d_model))  # (D,)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        mean = x.mean(dim=-1, keepdim=True)  # (..., 1)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # (..., 1)，有偏方差：除以 D
        x_hat = (x - mean) / torch.sqrt(var + self.eps)  # (..., D)
        return x_hat * self.weight + self.bias  # (..., D)
        ### END SOLUTION

# %% test="layer_norm_check"
from tinylm_checks import check_layer_norm
check_layer_norm(LayerNorm)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_layer_norm(LayerNorm, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** the `tried:` line lists the kinds of rows in the input, in the order they take
# turns, so the position in `expected:` tells you which kind of row went wrong. `likely mistake:`
# recognises, among others, the unbiased variance, `eps` outside the square root or missing, a
# hard-coded `1e-5`, statistics over the wrong axis, no centring, `weight` and `bias` swapped or not
# applied, and parameters that are plain tensors or start at the wrong values.
#
# ## 3. Per token, not per batch: LayerNorm vs BatchNorm
#
# BatchNorm (Ioffe & Szegedy, 2015), the normalisation of convolutional networks, works the other way
# round: it normalises each **feature** with a mean and variance taken **over the batch** (for sequences,
# over the batch and the positions). In training it uses the current batch's statistics and keeps running
# averages of them; in eval mode it uses those running averages. For a language model that means three
# problems, which LayerNorm (statistics over one token's own features) doesn't have.
#
# `nn.BatchNorm1d(D)` expects the features in dimension 1, `(B, D, T)`, so we transpose in and out.
#
# **1. A batch of one token.** Generating text one token at a time, the batch may be a single token.
# BatchNorm in training mode can't estimate a variance from one value per feature:

# %% [markdown] lang="zh"
# **如果检查没通过：** 输入里的几类行是轮流排列的，“尝试”这一行按这个顺序把它们列出来；看“期望”那一行里出错的位置，就知道是哪一类行出了问题。“可能的错误”那一行能认出的错误包括：无偏方差，`eps` 放在平方根外面或者漏掉，写死的 `1e-5`，在错误的轴上求统计量，没有减去均值，`weight` 和 `bias` 用反了或者没用上，以及参数用的是普通张量或初始值不对。
#
# ## 3. 按 token 归一化，不按批次：层归一化与 BatchNorm
#
# 批归一化（BatchNorm，Ioffe 和 Szegedy，2015）是卷积网络里的归一化，它的方向正好相反：对每个**特征**做归一化，均值和方差取自**整个批次**（对序列来说，是整个批次加上所有位置）。训练时它用当前批次的统计量，同时维护这些统计量的滑动平均；eval 模式下改用滑动平均。放到语言模型（language model）里，这会带来三个问题。层归一化的统计量只来自单个 token 自己的特征，所以没有这些问题。
#
# `nn.BatchNorm1d(D)` 要求特征放在第 1 维，即 `(B, D, T)`，所以我们在进出时各转置一次。
#
# **1. 只有一个 token 的批次。** 一次生成一个 token 时，一个批次里可能只有一个 token。训练模式下的 BatchNorm 没法从每个特征仅有的一个值估计出方差：

# %%
D = 8


def batch_norm_tokens(bn: nn.BatchNorm1d, x: torch.Tensor) -> torch.Tensor:
    """Apply BatchNorm1d to tokens: (B, T, D) -> (B, D, T), the layout it expects, and back to (B, T, D)."""
    return bn(x.transpose(1, 2)).transpose(1, 2)  # (B, T, D)


bn = nn.BatchNorm1d(D)  # normalises each of the D features over the batch and the positions
ln = LayerNorm(D)  # yours: normalises each token over its D features

one_token = torch.randn(1, 1, D)  # (B=1, T=1, D)
bn.train()
try:
    batch_norm_tokens(bn, one_token)
except ValueError as e:
    print("BatchNorm1d (training mode):", e)
with torch.no_grad():
    print("LayerNorm:", tuple(ln(one_token).shape), "- fine: it only needs the token's own features")

# %% lang="zh"
D = 8


def batch_norm_tokens(bn: nn.BatchNorm1d, x: torch.Tensor) -> torch.Tensor:
    """对 token 做 BatchNorm1d：(B, T, D) -> (B, D, T)（它要求的排列），再变回 (B, T, D)。"""
    return bn(x.transpose(1, 2)).transpose(1, 2)  # (B, T, D)


bn = nn.BatchNorm1d(D)  # 对 D 个特征中的每一个，在整个批次和所有位置上归一化
ln = LayerNorm(D)  # 你写的：对每个 token 在它自己的 D 个特征上归一化

one_token = torch.randn(1, 1, D)  # (B=1, T=1, D)
bn.train()
try:
    batch_norm_tokens(bn, one_token)
except ValueError as e:
    print("BatchNorm1d (training mode):", e)
with torch.no_grad():
    print("LayerNorm:", tuple(ln(one_token).shape), "- fine: it only needs the token's own features")

# %% [markdown]
# **2. Padding.** Sentences of different lengths are batched by padding the short ones (notebook 03).
# BatchNorm's statistics then include the padding, so a sentence's output depends on what it is batched
# with. **3. Train vs eval.** BatchNorm switches from batch statistics to running averages, so the same
# sentence gives another output when the model generates than when it trained. Below, a 3-token
# sentence alone, and the same sentence padded to 6 tokens in a batch with a 6-token sentence:

# %% [markdown] lang="zh"
# **2. 填充。** 长短不一的句子要组成一个批次，就得把短句填充（padding）到一样长（笔记本 03）。这时 BatchNorm 的统计量里混进了填充，一句话的输出取决于它和谁分在同一个批次。**3. 训练模式与 eval 模式。** BatchNorm 会从批次统计量切换到滑动平均，所以同一句话，模型生成时的输出和训练时不一样。下面对比两种情况：一句 3 个 token 的短句单独输入；同一句话填充到 6 个 token，和一句 6 个 token 的长句放在同一个批次里：

# %%
torch.manual_seed(1)
short = torch.randn(1, 3, D) * 2 + 1  # (1, 3, D): a sentence of 3 tokens
long = torch.randn(1, 6, D) * 2 + 1  # (1, 6, D): a sentence of 6 tokens
padded = torch.cat([torch.cat([short, torch.zeros(1, 3, D)], dim=1), long])  # (2, 6, D): short + 3 padding tokens

with torch.no_grad():
    bn.train()
    bn_alone = batch_norm_tokens(bn, short)[0]  # (3, D)
    bn_padded = batch_norm_tokens(bn, padded)[0, :3]  # (3, D): the same 3 real tokens, inside the padded batch
    bn.eval()
    bn_eval = batch_norm_tokens(bn, short)[0]  # (3, D): with the running averages
    ln.train()
    ln_alone, ln_padded = ln(short)[0], ln(padded)[0, :3]  # (3, D) each
    ln.eval()
    ln_eval = ln(short)[0]  # (3, D)

fig, axes = plt.subplots(1, 3, figsize=(16, 3.8))
plot_token_vectors({"alone (train)": bn_alone[0], "padded batch (train)": bn_padded[0], "alone (eval)": bn_eval[0]},
                   "BatchNorm1d: token 0 of the short sentence", ax=axes[0])
plot_token_vectors({"alone (train)": ln_alone[0], "padded batch (train)": ln_padded[0], "alone (eval)": ln_eval[0]},
                   "LayerNorm: token 0 of the short sentence", ax=axes[1])
plot_changes({"BatchNorm: alone vs padded batch": (bn_alone - bn_padded).abs().max(),
              "BatchNorm: train vs eval": (bn_alone - bn_eval).abs().max(),
              "LayerNorm: alone vs padded batch": (ln_alone - ln_padded).abs().max(),
              "LayerNorm: train vs eval": (ln_alone - ln_eval).abs().max()},
             "largest change at the 3 real tokens", ax=axes[2])
plt.tight_layout()
plt.show()

# %% lang="zh"
torch.manual_seed(1)
short = torch.randn(1, 3, D) * 2 + 1  # (1, 3, D)：一句 3 个 token 的话
long = torch.randn(1, 6, D) * 2 + 1  # (1, 6, D)：一句 6 个 token 的话
padded = torch.cat([torch.cat([short, torch.zeros(1, 3, D)], dim=1), long])  # (2, 6, D)：短句 + 3 个填充 token

with torch.no_grad():
    bn.train()
    bn_alone = batch_norm_tokens(bn, short)[0]  # (3, D)
    bn_padded = batch_norm_tokens(bn, padded)[0, :3]  # (3, D)：同样那 3 个真实 token，放在填充过的批次里
    bn.eval()
    bn_eval = batch_norm_tokens(bn, short)[0]  # (3, D)：用滑动平均
    ln.train()
    ln_alone, ln_padded = ln(short)[0], ln(padded)[0, :3]  # 形状都是 (3, D)
    ln.eval()
    ln_eval = ln(short)[0]  # (3, D)

fig, axes = plt.subplots(1, 3, figsize=(16, 3.8))
plot_token_vectors({"alone (train)": bn_alone[0], "padded batch (train)": bn_padded[0], "alone (eval)": bn_eval[0]},
                   "BatchNorm1d: token 0 of the short sentence", ax=axes[0])
plot_token_vectors({"alone (train)": ln_alone[0], "padded batch (train)": ln_padded[0], "alone (eval)": ln_eval[0]},
                   "LayerNorm: token 0 of the short sentence", ax=axes[1])
plot_changes({"BatchNorm: alone vs padded batch": (bn_alone - bn_padded).abs().max(),
              "BatchNorm: train vs eval": (bn_alone - bn_eval).abs().max(),
              "LayerNorm: alone vs padded batch": (ln_alone - ln_padded).abs().max(),
              "LayerNorm: train vs eval": (ln_alone - ln_eval).abs().max()},
             "largest change at the 3 real tokens", ax=axes[2])
plt.tight_layout()
plt.show()

# %% [markdown]
# LayerNorm's three lines are one line, and its changes are exactly 0: each token's statistics come from
# that token alone, so neither the batch, the padding nor the mode can change them. That is why every
# Transformer in this course (and GPT, BERT, LLaMA, which uses its cousin RMSNorm) normalises per token.
#
# ## 4. Residual connections
#
# A residual connection (He et al., 2016) adds a sublayer's input to its output: `x = x + f(x)`. Its
# derivative is $I + \partial f/\partial x$: besides the path **through** `f`, the gradient has a path
# **around** it. In a stack of $L$ layers without residuals, the gradient at the bottom is a product of
# $L$ Jacobians; if each one shrinks vectors a little, the product shrinks exponentially and the lower
# layers stop learning. With residuals there is always the identity term.
#
# Transformers combine the residual with a LayerNorm in one of two ways:
#
# - **Post-LN** (the original Transformer, Vaswani et al. 2017): `x = norm(x + f(x))`;
# - **Pre-LN** (GPT-2 and most models since): `x = x + f(norm(x))`: the residual path itself is never
#   normalised, so it runs unchanged from the embeddings to the output.
#
# Let's measure it: 32 layers of `FeedForward(64, 256)` with PyTorch's default initialisation, wired five
# ways. We record the spread (std) of the activations after each layer and the norm of the gradient that
# reaches each layer's `linear1.weight`, for a loss whose gradient at the top is the same random tensor
# for every wiring. In float64, so that tiny gradients stay visible instead of rounding to 0.

# %% [markdown] lang="zh"
# 层归一化的三条线重合成了一条，变化量恰好是 0：每个 token 的统计量只来自它自己，批次、填充、模式都改变不了它。所以本课程里的每个 Transformer（还有 GPT、BERT，以及用它的近亲 RMSNorm 的 LLaMA）都按 token 做归一化。
#
# ## 4. 残差连接
#
# 残差连接（He 等人，2016）把子层的输入加到它的输出上：`x = x + f(x)`。它的导数是 $I + \partial f/\partial x$：梯度除了**穿过** `f` 的那条路，还有一条**绕过**它的路。一个 $L$ 层、没有残差的堆叠，底部的梯度是 $L$ 个雅可比矩阵的乘积；只要每个矩阵都把向量缩小一点，乘积就会按指数缩小，下面的层也就学不动了。有了残差，导数里始终留着恒等矩阵那一项，梯度总有路可走。
#
# Transformer 把残差和层归一化组合起来，有两种方式：
#
# - **Post-LN**（原始 Transformer，Vaswani 等人，2017）：`x = norm(x + f(x))`；
# - **Pre-LN**（GPT-2 及之后的大多数模型）：`x = x + f(norm(x))`。残差路径本身从不做归一化，从嵌入（embedding）一路原样通到输出。
#
# 我们来实际测一下：32 层 `FeedForward(64, 256)`，用 PyTorch 的默认初始化（initialization），按五种方式连接。我们记录每一层之后激活值的离散程度（std），以及传到每一层 `linear1.weight` 的梯度的范数。损失是这样设计的：不管哪种接法，顶部的梯度都是同一个随机张量。计算用 float64，这样极小的梯度依然看得见，不会被舍入成 0。

# %%
L, D, d_ff = 32, 64, 256
torch.manual_seed(0)
ffns = [FeedForward(D, d_ff).double() for _ in range(L)]
norms = [LayerNorm(D).double() for _ in range(L)]  # yours
x0 = torch.randn(8, 16, D, dtype=torch.float64)  # (B, T, D)
r = torch.randn(8, 16, D, dtype=torch.float64)  # the gradient arriving at the top (up to a constant)

activation_std, grad_norm = {}, {}
for wiring, layer in (  # a wiring's name and one layer of the stack wired that way, (B, T, D) -> (B, T, D)
        ("plain", lambda x, f, norm: f(x)),
        ("LayerNorm, no residual", lambda x, f, norm: norm(f(x))),
        ("residual, no norm", lambda x, f, norm: x + f(x)),
        ("Post-LN", lambda x, f, norm: norm(x + f(x))),
        ("Pre-LN", lambda x, f, norm: x + f(norm(x)))):
    x, activation_std[wiring] = x0, []
    for f, norm in zip(ffns, norms):
        x = layer(x, f, norm)  # (B, T, D)
        activation_std[wiring].append(x.std().item())
    for f in ffns:
        f.zero_grad()
    (x * r).mean().backward()
    grad_norm[wiring] = [f.linear1.weight.grad.norm().item() for f in ffns]

plot_depth_profile(activation_std, grad_norm)
plt.tight_layout()
plt.show()
for wiring, g in grad_norm.items():
    print(f"{wiring:24s} gradient norm at layer 0: {g[0]:.1e}, at layer {L - 1}: {g[-1]:.1e}")

# %% lang="zh"
L, D, d_ff = 32, 64, 256
torch.manual_seed(0)
ffns = [FeedForward(D, d_ff).double() for _ in range(L)]
norms = [LayerNorm(D).double() for _ in range(L)]  # 你写的 LayerNorm
x0 = torch.randn(8, 16, D, dtype=torch.float64)  # (B, T, D)
r = torch.randn(8, 16, D, dtype=torch.float64)  # 到达最顶层的梯度（差一个常数）

activation_std, grad_norm = {}, {}
for wiring, layer in (  # 接法的名字，以及按这种接法连起来的一层，(B, T, D) -> (B, T, D)
        ("plain", lambda x, f, norm: f(x)),
        ("LayerNorm, no residual", lambda x, f, norm: norm(f(x))),
        ("residual, no norm", lambda x, f, norm: x + f(x)),
        ("Post-LN", lambda x, f, norm: norm(x + f(x))),
        ("Pre-LN", lambda x, f, norm: x + f(norm(x)))):
    x, activation_std[wiring] = x0, []
    for f, norm in zip(ffns, norms):
        x = layer(x, f, norm)  # (B, T, D)
        activation_std[wiring].append(x.std().item())
    for f in ffns:
        f.zero_grad()
    (x * r).mean().backward()
    grad_norm[wiring] = [f.linear1.weight.grad.norm().item() for f in ffns]

plot_depth_profile(activation_std, grad_norm)
plt.tight_layout()
plt.show()
for wiring, g in grad_norm.items():
    print(f"{wiring:24s} gradient norm at layer 0: {g[0]:.1e}, at layer {L - 1}: {g[-1]:.1e}")

# %% [markdown]
# What the plot shows, at initialisation:
#
# - **plain**: each layer shrinks its input (PyTorch's default init and GELU both do), so the activations
#   fade to what the biases alone produce, and the gradient loses a factor of about 5 per layer on its
#   way down: layer 0 gets more than 20 orders of magnitude less than layer 31. Its weights would not move.
# - **residual, no norm**: the identity path carries the gradient down unchanged; every layer gets a
#   gradient of the same size. The activations grow instead, since each layer adds to them.
# - **Pre-LN**: the same flat gradients, with each `f` seeing a normalised input.
# - **Post-LN** and **LayerNorm, no residual**: the norm after each layer keeps the activations at
#   std 1 and the gradients within a small factor, here. Post-LN's known troubles (Xiong et al., 2020)
#   show up in training: Xiong et al. find it needs a learning-rate warm-up where Pre-LN doesn't.
#   Notebook 11 trains both over a learning-rate sweep: Pre-LN ends lower at every rate, and a warm-up does
#   not rescue Post-LN in runs that short.
#
# ## Summary
#
# - `LayerNorm`: per token, over the last dimension: `(x - mean) / sqrt(var + eps) * weight + bias` with the
#   **biased** variance (divide by `D`) and `eps` **inside** the square root; statistics `(B, T, 1)` with
#   `keepdim=True`; `weight`, `bias` of shape `(D,)`, ones and zeros at the start: `2D` parameters.
# - Per-token statistics make LayerNorm independent of the batch size, of padding and of train/eval
#   mode; BatchNorm is none of these.
# - A residual `x + f(x)` gives the gradient a path around `f`; without it, gradients vanish through a
#   deep stack. Post-LN: `norm(x + f(x))`; Pre-LN: `x + f(norm(x))`.
#
# **Next:** notebook 07 puts attention, the FFN, two LayerNorms and two residuals into one
# `TransformerBlock`, with `4(D² + D) + 8D² + 5D + 4D = 12D² + 13D` parameters at `d_ff = 4D`.

# %% [markdown] lang="zh"
# 图里是初始化时的情况：
#
# - **直接堆叠**（不加残差也不加归一化）：每一层都会把输入缩小（PyTorch 的默认初始化和 GELU 都会），所以激活值逐渐衰减到只剩偏置产生的部分；梯度往下传时，每层大约缩小 5 倍：第 0 层拿到的梯度比第 31 层小 20 多个数量级。它的权重根本动不了。
# - **只有残差**：恒等路径把梯度原封不动地传下去，每一层拿到的梯度都一样大。但激活值反而会增长，因为每一层都在往上加。
# - **Pre-LN**：梯度同样平坦，而且每个 `f` 看到的都是归一化后的输入。
# - **Post-LN** 和**只有层归一化**：每层之后的归一化把激活值的 std 保持在 1，这里梯度的差别也只在一个不大的倍数之内。Post-LN 那些为人熟知的问题（Xiong 等人，2020）要到训练时才会显现：Xiong 等人发现它需要学习率预热（warmup），而 Pre-LN 不需要。笔记本 11 会在一系列学习率（learning rate）下训练这两种接法：每个学习率下都是 Pre-LN 的最终损失更低，而且在这么短的训练里，预热也救不了 Post-LN。
#
# ## 小结
#
# - `LayerNorm`：对每个 token，在最后一维上计算 `(x - mean) / sqrt(var + eps) * weight + bias`。方差用**有偏**估计（除以 `D`），`eps` 放在平方根**里面**；统计量的形状是 `(B, T, 1)`，靠 `keepdim=True` 得到；`weight`、`bias` 的形状是 `(D,)`，初始为全 1 和全 0：一共 `2D` 个参数。
# - 统计量按 token 计算，所以层归一化与批次大小、填充以及 train/eval 模式都无关；这几条 BatchNorm 一条也做不到。
# - 残差 `x + f(x)` 给梯度留了一条绕过 `f` 的路；没有它，梯度穿过很深的堆叠时会消失。Post-LN：`norm(x + f(x))`；Pre-LN：`x + f(norm(x))`。
#
# **下一步：** 笔记本 07 把注意力、前馈网络、两个层归一化和两个残差连接组装成一个 `TransformerBlock`，在 `d_ff = 4D` 时共有 `4(D² + D) + 8D² + 5D + 4D = 12D² + 13D` 个参数。
