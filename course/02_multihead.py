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

# %% [markdown] lang="zh"
# # 02 · 多头注意力
#
# 一个注意力（attention）层只给每个查询（query）**一组**针对键（key）的权重，也就是只做一次加权平均。多头注意力（multi-head attention）把几个更小的注意力（叫作“头”，head）并排运行，每个头有自己的查询、键和值（value），最后把它们的结果合起来。这本笔记本里，你要完成下面几个练习（exercise）：
#
# 1. `split_heads(x, num_heads)`：`(B, T, D) -> (B, H, T, d_k)`；
# 2. `merge_heads(x)`：`(B, H, T, d_k) -> (B, T, D)`；
# 3. `MultiHeadSelfAttention(d_model, num_heads)`，也就是 Transformer 里的注意力层。
#
# 最后，你会拿它和 PyTorch 自带的 `nn.MultiheadAttention` 对照一下。

# %%
import matplotlib.pyplot as plt
import torch
from torch import nn

from tinylm_checks import (check_merge_heads, check_multi_head_attention, check_split_heads, plot_attention,
                           plot_heads_split)
from tinylm_solutions.attention import causal_mask, scaled_dot_product_attention  # the course's versions (see below)

_ = torch.manual_seed(0)

# %% lang="zh"
import matplotlib.pyplot as plt
import torch
from torch import nn

from tinylm_checks import (check_merge_heads, check_multi_head_attention, check_split_heads, plot_attention,
                           plot_heads_split)
from tinylm_solutions.attention import causal_mask, scaled_dot_product_attention  # 课程自带的版本（见下文）

_ = torch.manual_seed(0)

# %% [markdown]
# **About the imports.** You wrote `scaled_dot_product_attention(q, k, v, mask=None) -> (out, weights)`
# and `causal_mask(T)` in notebook 01. Here we import the course's reference versions of both, from
# `tinylm_solutions`, so that every notebook stands on its own: a bug left in notebook 01 can't block
# this one. They behave exactly like the ones you wrote (same signature, same mask convention: bool,
# True = may attend).

# %% [markdown] lang="zh"
# **关于导入。** 你在笔记本 01 里写过 `scaled_dot_product_attention(q, k, v, mask=None) -> (out, weights)` 和 `causal_mask(T)`。这里我们从 `tinylm_solutions` 导入这两个函数的课程参考版本，好让每本笔记本都能独立运行：就算笔记本 01 里还留着 bug，也不会卡住这一本。它们的行为和你写的完全一样（签名相同，掩码（mask）约定也相同：布尔型，True = 可以关注）。

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

# %% [markdown] lang="zh"
# ## 1. 为什么要多个头
#
# softmax 输出的一行，就是所有键上的一个概率分布。如果一个 token 同时需要两样不同的东西，比如前一个词*和*句子的主语，单个头只能把它们糊成一个平均值。有了 `H` 个头，每个头有自己的查询和键，也就有自己的注意力模式；一个头可以盯着前一个词，另一个头盯着主语。
#
# 多头并不会多花什么代价。我们不用一个宽度为 `D` 的头，而是用 `H` 个宽度为 `d_k = D // H` 的头：还是那几个 `D × D` 的 `W_Q, W_K, W_V`，生成宽度为 `D` 的查询、键和值，我们只是把每个 token 的向量**切**成 `H` 段，每段 `d_k` 个特征，每个头分一段。做完注意力后，再把各个头的输出拼回一个宽度为 `D` 的向量，然后再用一个线性层 `W_O` 把它们混合起来。
#
# 下面是一个宽度为 `D = 12` 的 token，被切成 `H = 3` 个头，每个头 `d_k = 4` 个特征，然后再拼回去。特征 `f` 始终待在原来的位置上；每个头只看得到属于自己的那一段：

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

# %% [markdown] lang="zh"
# ## 2. 形状的变化过程
#
# ```
# x                          (B, T, D)
# W_Q(x), W_K(x), W_V(x)     (B, T, D)        三个都是这个形状
#   view                     (B, T, H, d_k)   把每个 token 的特征切成 H 段
#   transpose(1, 2)          (B, H, T, d_k)   把头放到时间前面：每个头一个 (T, d_k) 矩阵
# 每个头各做注意力           (B, H, T, d_k)   weights (B, H, T, T)
#   transpose(1, 2)          (B, T, H, d_k)   时间重新回到前面
#   reshape                  (B, T, D)        把 H 段拼到一起
# W_O                        (B, T, D)
# ```
#
# `scaled_dot_product_attention` 本来就支持任意前导维度，所以输入是 `(B, H, T, d_k)` 时，它会在每个头内部各自独立地做注意力。这就是要把头放在 `T` 前面的原因。
#
# **`d_k` 必须是 int。** 在 Python 里，`D / H` 即使能整除也是 float，而 `.view` 不接受 float；要用整除 `D // H`。另外，`D` 必须能被 `H` 整除，否则切不成大小相同的段。

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

# %% [markdown] lang="zh"
# ### 为什么先 `view` 再 `transpose`，而不是直接 `view(B, H, T, d_k)`
#
# `view` 从来不移动数据：它只是按内存顺序、换一组尺寸去读同一批数字。我们造一个很小的 `x`：`T = 3` 个 token，每个 token 有 `D = 4` 个特征，token `t` 的特征 `f` 的值是 `10 t + f`，这样你一眼就能看出每个数是从哪来的。用 `H = 2` 个头时，头 0 应该拿到**每个 token** 的特征 0、1，头 1 拿到特征 2、3。

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

# %% lang="zh"
B, T, D, H = 1, 3, 4, 2
d_k = D // H
x = (10 * torch.arange(T)[:, None] + torch.arange(D)).reshape(B, T, D)  # (B, T, D): x[0, t, f] = 10 t + f
print("x:\n", x[0])

right = x.view(B, T, H, d_k).transpose(1, 2)  # (B, H, T, d_k)
print("\nview(B, T, H, d_k).transpose(1, 2), head 0:\n", right[0, 0])
print("head 1:\n", right[0, 1])

wrong = x.view(B, H, T, d_k)  # 只在形状上是 (B, H, T, d_k)
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

# %% [markdown] lang="zh"
# 用 `view` + `transpose` 时，头 0 拿到的是 token 0、1、2 的特征 0–1（各行分别是 `0 1`、`10 11`、`20 21`）：正确。只用一次 `view(B, H, T, d_k)`，*形状*（shape）是对的，但头 0 的“token 1”其实是 token 0 的特征 2–3（`2, 3`），而 token 1 被拆到了两个头里：位置和特征搅在了一起。程序不会报错，注意力照样算得出来，只是算的是一堆搅乱了的数。所以光看形状是不够的，检查（check）还会比较数值。
#
# ### 练习：`split_heads(x, num_heads)`
#
# 把形状为 `(B, T, D)` 的 `x` 切成多个头后返回：形状为 `(B, H, T, d_k)`，其中 `d_k = D // num_heads`，头 `h` 拿到每个 token 的特征 `h*d_k ... (h+1)*d_k - 1`，和上面演示里 `view` + `transpose` 的结果完全一样。
#
# 检查会在一个各维尺寸互不相同（`B != T != H != d_k`）的随机 `x` 上，把你的切分结果和参考实现比对，这样轴一旦弄混就藏不住。
#
# **难度：** ★☆☆ · **用时：** 约 5 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 分两步，和演示里一样：先把最后一维切成 `(H, d_k)`，再把头（head）所在的轴挪到时间前面。一次 reshape 做完的话，形状（shape）对，数值却是错的（就是演示里那个只用一次的 `view`）。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 用 `B, T, D = x.shape` 读出各维尺寸；一个头（head）的宽度是 `D // num_heads`。切分就是用 `.view` 变成四个尺寸 `(B, T, H, d_k)`：这时时间还是第 1 维，头是第 2 维。再用 `.transpose` 交换这两维，就得到 `(B, H, T, d_k)`。
# </details>
#
# <details><summary>提示 3：答案</summary>
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


# %% lang="zh"
def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """把每个 token 的特征分给各个头。

    参数：
        x: (B, T, D)，D 能被 num_heads 整除。
        num_heads: 头的个数 H。

    返回：
        (B, H, T, d_k)，其中 d_k = D // H；第 h 个头拿到每个 token 的第 h*d_k ... (h+1)*d_k - 1 个特征。
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

# %% [markdown] lang="zh"
# **如果检查没通过：** 结果的形状是 `(B, T, H, d_k)`，说明少了转置；形状对但数值不对，通常是用了上面演示里 `view(B, H, T, d_k)` 那条捷径。
#
# ## 3. 把头合并回去
#
# `merge_heads` 是 `split_heads` 的逆操作：先把 `(B, H, T, d_k)` 转置回 `(B, T, H, d_k)`，再把最后两维拼成 `H * d_k = D`。
#
# **转置之后用 `.view` 要小心。** 转置同样不移动数据，它只改变 PyTorch 遍历内存的顺序。结果*不是连续的*（not contiguous），而 `.view` 并不总能重新解释一个不连续的张量（tensor）。注意力的输出是一个新建的、连续的 `(B, H, T, d_k)` 张量，所以转置之后再 `.view` 就会失败：

# %%
heads = torch.arange(24.0).view(1, 2, 3, 4)  # (B, H, T, d_k), contiguous like an attention output
back = heads.transpose(1, 2)  # (B, T, H, d_k)
print("contiguous after transpose?", back.is_contiguous())
try:
    back.view(1, 3, 8)
except RuntimeError as e:
    print("RuntimeError:", e)
print(back.reshape(1, 3, 8))  # (B, T, D): reshape copies when it has to

# %% lang="zh"
heads = torch.arange(24.0).view(1, 2, 3, 4)  # (B, H, T, d_k)，和注意力的输出一样是连续存储的
back = heads.transpose(1, 2)  # (B, T, H, d_k)
print("contiguous after transpose?", back.is_contiguous())
try:
    back.view(1, 3, 8)
except RuntimeError as e:
    print("RuntimeError:", e)
print(back.reshape(1, 3, 8))  # (B, T, D)：reshape 在必要时会复制数据

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

# %% [markdown] lang="zh"
# 用 `.reshape(B, T, H * d_k)`，它会在必要时复制数据；或者用 `.contiguous().view(B, T, H * d_k)`。
#
# ### 练习：`merge_heads(x)`
#
# 撤销 `split_heads`：`(B, H, T, d_k) -> (B, T, H * d_k)`，使 `merge_heads(split_heads(x, H))` 能还原出 `x`。
#
# 检查会合并两种输入：参考实现 `split_heads` 的输出（不连续，和注意力内部的情况一样），以及一个新建的连续张量（就像 `weights @ v` 的输出）。
#
# **难度：** ★☆☆ · **用时：** 约 5 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 按相反的顺序，一步一步撤销 `split_heads`。它先把 D 切成 `(H, d_k)`，再把头（head）挪到时间前面；所以你要先把时间放回头的前面，再把最后两维拼到一起。留意上面刚讲过的 `.view` 的坑。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 从 `x.shape` 读出四个尺寸：`(B, H, T, d_k)`。头（head）是第 1 维，时间是第 2 维：交换这两维，得到 `(B, T, H, d_k)`。然后用 `.reshape` 把最后两维合成一维，大小为 `H * d_k`（转置之后张量（tensor）不是连续的，`.view` 可能会失败）。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `x.transpose(1, 2).reshape(B, T, H * d_k)`，其中 `B, H, T, d_k = x.shape`
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


# %% lang="zh"
def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """把各个头重新拼回去：split_heads 的逆操作。

    参数：
        x: (B, H, T, d_k)。

    返回：
        (B, T, H * d_k)，其中每个 token 的第 h*d_k ... (h+1)*d_k - 1 个特征来自第 h 个头。
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

# %% [markdown] lang="zh"
# **如果检查没通过：** 检查会用参考实现 `split_heads` 切分一个随机的 `x`，并要求你的 `merge_heads` 原样还原出 `x`。形状对而数值不对，通常是 `reshape` 之前没有先转置回来。
#
# ## 4. 多头自注意力
#
# 把前面的拼起来就是（Vaswani 等人，2017，§3.2.2）：
#
# 1. `q, k, v = W_Q(x), W_K(x), W_V(x)`，每个都是 `(B, T, D)`，再用 `split_heads` 把它们各自切成 `(B, H, T, d_k)`；
# 2. `out, weights = scaled_dot_product_attention(q, k, v, mask)`：得到 `(B, H, T, d_k)` 和 `(B, H, T, T)`。缩放因子是 `1 / sqrt(d_k)`，用的是**一个头**的宽度，函数直接从 `q` 本身取得这个宽度；
# 3. `merge_heads(out)`：`(B, T, D)`；然后过 `W_O`：`(B, T, D)`。
#
# 形状为 `(T, T)` 的掩码（比如 `causal_mask(T)`）可以原样广播（broadcasting）到 `(B, H, T, T)`：广播从右边开始对齐形状，所以掩码的两个轴正好对上查询轴和键轴，每个序列的每个头都拿到同一个掩码。你只要把它原封不动地传下去：

# %%
B, H, T = 2, 3, 4
scores = torch.zeros(B, H, T, T)  # (B, H, T, T): one (T, T) map per head and sequence
mask = causal_mask(T)  # (T, T)
print("(T, T) against (B, H, T, T) ->", tuple(torch.broadcast_shapes(mask.shape, scores.shape)))
masked = scores.masked_fill(~mask, float("-inf"))  # (B, H, T, T)
print("sequence 1, head 2 after masking:\n", masked[1, 2])
print("every head of every sequence got the same mask:", bool((masked.isinf() == ~mask).all()))

# %% lang="zh"
B, H, T = 2, 3, 4
scores = torch.zeros(B, H, T, T)  # (B, H, T, T)：每个头、每个序列各一张 (T, T) 的图
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

# %% [markdown] lang="zh"
# （笔记本 03 会构造每个序列各不相同的掩码，用来处理填充（padding）：`(B, 1, 1, T)`，需要广播的地方放大小为 1 的轴。）
#
# **为什么要 `W_O`？** 合并之后，每个 token 的特征 `h*d_k ... (h+1)*d_k - 1` 只来自头 `h`：各个头并排放在一起，但彼此还没有交流过。`W_O` 把它们混合起来，让每个输出特征都能用上所有头的信息。按头拆开来写，`W_O(merge(heads))` 就是对各个头求和，$\sum_h \mathrm{head}_h W_O^{(h)}$，其中 $W_O^{(h)}$ 是 `W_O` 里读取头 `h` 那部分特征的切片：

# %%
D, H = 6, 3
d_k = D // H
W_O = nn.Linear(D, D, bias=False)
heads = torch.randn(1, H, 1, d_k)  # (B, H, T, d_k): one token, three heads
merged = heads.transpose(1, 2).reshape(1, 1, D)  # (B, T, D)
per_head = sum(heads[0, h, 0] @ W_O.weight[:, h * d_k:(h + 1) * d_k].T for h in range(H))  # (D,)
print("W_O(merged)            :", W_O(merged)[0, 0].detach())
print("sum over heads of parts:", per_head.detach())

# %% lang="zh"
D, H = 6, 3
d_k = D // H
W_O = nn.Linear(D, D, bias=False)
heads = torch.randn(1, H, 1, d_k)  # (B, H, T, d_k)：一个 token，三个头
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

# %% [markdown] lang="zh"
# 四个 `nn.Linear(D, D)` 层：不管 `H` 是多少，都是 $4(D^2 + D)$ 个参数（parameter）。多头不会增加参数，只是把已有的参数分开来用。
#
# ### 练习：`MultiHeadSelfAttention(d_model, num_heads)`
#
# 写一个模块，包含四个层 `W_Q`、`W_K`、`W_V`、`W_O`，每个都是 `nn.Linear(d_model, d_model)`；当 `d_model % num_heads != 0` 时抛出 `ValueError`（要带上说明信息）。`forward(x, mask=None)` 接收形状为 `(B, T, D)` 的 `x`，返回 `(out (B, T, D), weights (B, H, T, T))`：就是上面那三步，用导入的 `scaled_dot_product_attention`，并返回每个头各自的权重（不要取平均）。
#
# 检查会用它自己的尺寸构造你的类，要求 `MultiHeadSelfAttention(D + 1, H)` 抛出 `ValueError`，再把它自己的权重复制到你的四个层里，然后在三种情况下比较输出：不带掩码、带因果掩码（causal mask）`(T, T)`、带键填充掩码（key-padding mask）`(B, 1, 1, T)`；它还会数参数个数，并检查梯度（gradient）能不能传到每一层。
#
# **难度：** ★★★ · **用时：** 约 20 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 多头注意力（multi-head attention）就是 H 个窄的注意力（attention）在同一批 token 上并排运行：投影、切成多个头（head）、做注意力、合并、再投影。变形交给你的 `split_heads` 和 `merge_heads`（或者把它们各自的那一行再写一遍）；笔记本 01 的 `scaled_dot_product_attention`（这里已经导入）能一次处理所有的头，因为它支持任意前导维度。掩码（mask）不用做任何处理：原样传下去就行，它本来就能广播（broadcasting）到 `(B, H, T, T)`。
# </details>
#
# <details><summary>提示 2：各部分写在哪里</summary>
#
# - `__init__`，按这个顺序：通过 `super()` 调用 `nn.Module` 的 `__init__`；检查能否整除，`d_model % num_heads != 0` 时抛出带说明信息的 `ValueError`；保存 `self.num_heads` 和 `self.d_k`，即一个头（head）的宽度 `d_model // num_heads`（是 int）；创建四个层 `W_Q`、`W_K`、`W_V`、`W_O`，每个都是从 `d_model` 到 `d_model` 的 `nn.Linear`。
# - `forward`：把 `W_Q`、`W_K`、`W_V` 作用在 `x` 上，再把每个结果切成 `self.num_heads` 个头：`(B, H, T, d_k)`。导入的 `scaled_dot_product_attention` 接收它们和掩码（mask），返回输出 `(B, H, T, d_k)` 和权重 `(B, H, T, T)`。把输出合并回 `(B, T, D)`，过一遍 `W_O`，再和每个头各自的权重（不取平均）一起返回。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `q = split_heads(self.W_Q(x), self.num_heads)`（`k`、`v` 同理）；`out, weights = scaled_dot_product_attention(q, k, v, mask)`；`return self.W_O(merge_heads(out)), weights`
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


# %% lang="zh"
class MultiHeadSelfAttention(nn.Module):
    """多头自注意力。

    构造参数：
        d_model: 一个 token 向量的宽度 D。
        num_heads: 头的个数 H；每个头的宽度为 d_k = D // H。

    属性：
        W_Q, W_K, W_V, W_O: 各是一个 nn.Linear(d_model, d_model)，所以一共 4 (D^2 + D) 个参数。

    forward(x, mask=None)：
        x: (B, T, D)；mask: 可选的 bool 张量，能广播到 (B, H, T, T)，True 表示可以关注。
        返回 (out, weights)：out 为 (B, T, D)，weights 为 (B, H, T, T)。

    异常：
        ValueError: d_model 不能被 num_heads 整除时。
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
        # 这里把 split_heads / merge_heads 完整写出来，这样这个练习可以单独评分
        # （学习者也可以直接调用自己写的 split_heads 和 merge_heads）。
        B, T, D = x.shape
        H, d_k = self.num_heads, self.d_k
        q = self.W_Q(x).view(B, T, H, d_k).transpose(1, 2)  # (B, H, T, d_k)
        k = self.W_K(x).view(B, T, H, d_k).transpose(1, 2)  # (B, H, T, d_k)
        v = self.W_V(x).view(B, T, H, d_k).transpose(1, 2)  # (B, H, T, d_k)
        out, weights = scaled_dot_product_attention(q, k, v, mask)  # (B, H, T, d_k), (B, H, T, T)
        out = out.transpose(1, 2).reshape(B, T, D)  # (B, T, D)：各个头又拼回来了
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

# %% [markdown] lang="zh"
# **如果检查没通过：** “尝试”那一行会告诉你是哪个输入出了问题（不加掩码、因果掩码还是键填充掩码）。“可能的错误”那一行能认出的错误包括：漏了 `W_O`；把各个头的权重取了平均；除以的是 `sqrt(d_model)` 而不是 `sqrt(d_k)`；切分或合并时没有转置；掩码在传给 `scaled_dot_product_attention` 的路上被取反或改了形状。如果权重对而输出不对，问题出在注意力之后：合并那一步或者 `W_O`。如果报错是 `view` 失败，去看 `merge_heads`（第 3 节）。
#
# `D = 16`、`H = 4` 时的参数个数：

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

# %% [markdown] lang="zh"
# ## 5. 和 PyTorch 的 `nn.MultiheadAttention` 结果一致
#
# PyTorch 的这个层也有同样的四个投影，只是存法不同：`in_proj_weight` 是把 `W_Q`、`W_K`、`W_V` 叠在一起的一个 `(3D, D)` 矩阵（`in_proj_bias` 也一样，是 `(3D,)`），`out_proj` 就是 `W_O`。把你的权重复制进去，两个层的结果应该在 float32 的舍入误差以内一致（往往完全相同）。
#
# 有两个细节：`batch_first=True` 让它和我们一样接收 `(B, T, D)`；`average_attn_weights=False` 让它为每个头各返回一张图，形状为 `(B, H, T, T)`，而不是返回它们的平均。
#
# **注意掩码。** `nn.MultiheadAttention` 的布尔 `attn_mask` 用的是**相反**的约定：True 表示“**不可以**关注”。所以我们传进去的是 `~causal_mask(T)`。（函数式的 `F.scaled_dot_product_attention` 和本课程一样，True 表示可以关注。）把两种约定弄混是个经典 bug：会得到一个只能看到未来的模型。

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

# %% [markdown] lang="zh"
# ## 6. 每个头一张图
#
# 还是笔记本 01 里的那个句子，这次送进一个带因果掩码的多头层。这个层没有训练过，所以图上的模式暂时没有任何含义；我们把 `W_Q` 和 `W_K` 放大 3 倍，只是为了让各个头之间的差别更容易看出来。每个头已经有了**自己的**模式：这正是用多个头的意义所在。（笔记本 10 会展示一个训练好的模型里的各个头。）

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

# %% [markdown] lang="zh"
# ## 小结
#
# - `H` 个宽度为 `d_k = D // H` 的头（`d_k` 是 int；`D % H` 必须为 0）共用同一组 `D × D` 投影，每个头只取投影输出里属于自己的一段：不管 `H` 是多少，都是 $4(D^2 + D)$ 个参数。
# - 切分：`view(B, T, H, d_k).transpose(1, 2)`；合并：`transpose(1, 2).reshape(B, T, D)`。只用一个 `view`，形状对，数据却是错的。
# - 注意力在 `(B, H, T, d_k)` 上按头分别计算，缩放因子是 `1 / sqrt(d_k)`；权重的形状是 `(B, H, T, T)`。
# - `nn.MultiheadAttention` 算的是同一件事，但它的布尔 `attn_mask` 里 True = **被遮住**。
#
# **下一步：** 笔记本 03 专门讲掩码：因果掩码、填充，以及一行里已经没有任何键可以关注时会发生什么。
