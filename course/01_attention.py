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

# %% [markdown] lang="zh"
# # 01 · 注意力
#
# Transformer 里，token 与 token 之间交换信息只有一种途径：注意力（attention）。在这本笔记本里，你要通过四个练习（exercise）把它一步步搭起来：
#
# 1. `attention_scores(q, k)`：每个查询（query）和每个键（key）有多匹配；
# 2. `scaled_dot_product_attention(q, k, v, mask=None)`：分数 → 权重 → 对值（value）的加权平均；
# 3. `SelfAttention(d_model)`：一个模块，从同一个输入算出查询、键和值；
# 4. `causal_mask(T)`：不让语言模型（language model）偷看未来的掩码（mask）。
#
# 形状（shape）的记号沿用这个领域的惯例：`B` 是批次（batch）大小，`T` 是序列长度（sequence length），也就是 token 的个数，`D` = `d_model` 是一个 token 向量的宽度，`d_k` 是一个查询/键的宽度。

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

# %% [markdown] lang="zh"
# ## 1. 查询、键和值：图书馆的比喻
#
# 想象一座图书馆。
#
# - **查询**是你要找的东西：“一本讲做菜的书”。
# - **键**是目录卡片上的标签，每本书一张：“烹饪”“足球”“运动员饮食”。
# - **值**是书的内容，也就是你真正借回家的东西。
#
# 你拿自己的查询去和每个标签比。真实的图书馆只会递给你最合适的那一本书；注意力递给你的却是所有书的**混合**，每本书占多少分量，取决于它的标签和你的查询有多匹配。匹配程度用点积 $q \cdot k$ 来衡量，权重是这些匹配值的 softmax，所以权重都是正数，加起来等于 1。
#
# 下面手算一遍。标签放在一个 2 维的“主题空间”（烹饪、运动）里；内容用 one-hot 向量表示，这样从输出里就能直接读出混合比例。

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

# %% lang="zh"
k = torch.tensor([[1.0, 0.0],   # 第 0 本书：烹饪
                  [0.0, 1.0],   # 第 1 本书：足球
                  [0.7, 0.7]])  # 第 2 本书：运动员的饮食       k: (T_k=3, d_k=2)
v = torch.tensor([[1.0, 0.0, 0.0],   # 第 0 本书的内容
                  [0.0, 1.0, 0.0],   # 第 1 本书的内容
                  [0.0, 0.0, 1.0]])  # 第 2 本书的内容               v: (T_k=3, d_v=3)
q = torch.tensor([[2.0, 0.0]])  # “我想找讲做菜的书”               q: (T_q=1, d_k=2)

scores = q @ k.T  # (1, 3)：每本书一个分数
weights = torch.softmax(scores, dim=-1)  # (1, 3)：都为正，和为 1
out = weights @ v  # (1, 3)：各本书内容的加权混合
print("scores: ", scores)
print("weights:", weights)
print("out:    ", out)

# %% [markdown]
# The cookbook wins (weight 0.59), "food for athletes" gets a good share (0.33) because its label is
# half about cooking, and the football book gets almost nothing.
#
# Nothing changes with several queries at once: stack them as rows of `q`. Row `i` of the scores
# belongs to query `i`, column `j` to key `j`, so `q @ k.T` has shape `(T_q, T_k)`.

# %% [markdown] lang="zh"
# 烹饪书胜出（权重 0.59）；“运动员饮食”也分到不少（0.33），因为它的标签有一半是关于烹饪的；足球书几乎什么也没分到。
#
# 同时有好几个查询，做法也一样：把它们作为 `q` 的行叠起来就行。分数的第 `i` 行属于查询 `i`，第 `j` 列属于键 `j`，所以 `q @ k.T` 的形状是 `(T_q, T_k)`。

# %%
q = torch.tensor([[2.0, 0.0],   # cooking
                  [0.0, 2.0],   # sport
                  [2.0, 2.0]])  # both                               q: (T_q=3, d_k=2)
scores = q @ k.T  # (3, 3) = (T_q, T_k)
weights = torch.softmax(scores, dim=-1)  # (3, 3): each row sums to 1
print(weights)
print("row sums:", weights.sum(dim=-1))

# %% lang="zh"
q = torch.tensor([[2.0, 0.0],   # 烹饪
                  [0.0, 2.0],   # 运动
                  [2.0, 2.0]])  # 两样都要                           q: (T_q=3, d_k=2)
scores = q @ k.T  # (3, 3) = (T_q, T_k)
weights = torch.softmax(scores, dim=-1)  # (3, 3)：每行之和为 1
print(weights)
print("row sums:", weights.sum(dim=-1))

# %% [markdown]
# ### Batches: `.transpose(-2, -1)` instead of `.T`
#
# In a model, queries and keys come in batches: `q` has shape `(B, T_q, d_k)` (later `(B, H, T_q, d_k)`
# with heads). We want `q @ kᵀ` for every batch element, where `kᵀ` swaps only the **last two**
# dimensions. `k.transpose(-2, -1)` does exactly that, whatever the leading dimensions are; `@` then
# multiplies matrix by matrix over all leading dimensions at once. (`.T` is only for 2-D tensors.)

# %% [markdown] lang="zh"
# ### 批次：用 `.transpose(-2, -1)`，不用 `.T`
#
# 在模型里，查询和键都是成批出现的：`q` 的形状是 `(B, T_q, d_k)`。等后面有了多个头（head），形状会变成 `(B, H, T_q, d_k)`。我们要对批次里的每个元素都算 `q @ kᵀ`，这里的 `kᵀ` 只交换**最后两维**。不管前面有几维，`k.transpose(-2, -1)` 做的恰好就是这件事；然后 `@` 会在所有前导维度上一次性做矩阵乘法（matrix multiplication）。另外，`.T` 只适用于 2 维张量（tensor）。

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

# %% [markdown] lang="zh"
# ## 2. 为什么要除以 $\sqrt{d_k}$
#
# 两个宽度为 $d_k$ 的向量做点积，就是把 $d_k$ 个乘积加起来。如果向量的元素是方差（variance）为 1 的随机数，那么每个乘积的方差是 1，加起来的方差就是 $d_k$：向量越宽，分数越大。

# %%
for d_k in (4, 64, 1024):
    dots = (torch.randn(2000, d_k) * torch.randn(2000, d_k)).sum(dim=-1)  # 2000 dot products q.k
    print(f"d_k = {d_k:4}:  var(q.k) = {dots.var():7.1f}   var(q.k / sqrt(d_k)) = {(dots / math.sqrt(d_k)).var():.2f}")

# %% lang="zh"
for d_k in (4, 64, 1024):
    dots = (torch.randn(2000, d_k) * torch.randn(2000, d_k)).sum(dim=-1)  # 2000 个点积 q.k
    print(f"d_k = {d_k:4}:  var(q.k) = {dots.var():7.1f}   var(q.k / sqrt(d_k)) = {(dots / math.sqrt(d_k)).var():.2f}")

# %% [markdown]
# Big scores are a problem for the softmax: it becomes almost one-hot, one key takes all the weight,
# and the gradients through the other keys vanish, so the model learns slowly. Dividing by
# $\sqrt{d_k}$ brings the variance back to about 1 whatever $d_k$ is:

# %% [markdown] lang="zh"
# 分数太大，softmax 就吃不消了：它几乎变成 one-hot，一个键拿走全部权重，流经其他键的梯度（gradient）几乎消失，模型学得很慢。除以 $\sqrt{d_k}$ 以后，不管 $d_k$ 是多少，方差都回到 1 左右：

# %%
s = torch.randn(6)  # six scores with variance 1
print("scores with variance 1:   ", torch.softmax(s, dim=-1))
print("scores with variance 1024:", torch.softmax(s * math.sqrt(1024), dim=-1))

# %% lang="zh"
s = torch.randn(6)  # 六个方差为 1 的分数
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

# %% [markdown] lang="zh"
# 这就是缩放点积注意力（scaled dot-product attention）里“缩放”二字的来历（Vaswani 等人，2017）：
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V$$
#
# ### 练习：`attention_scores(q, k)`
#
# 返回缩放后的分数 `q @ kᵀ / sqrt(d_k)`。`q` 的形状是 `(..., T_q, d_k)`，`k` 的形状是 `(..., T_k, d_k)`，其中 `...` 表示任意多个前导维度（可以没有，可以是 `B`，也可以是 `B, H`）；结果的形状是 `(..., T_q, T_k)`：每个查询一行，每个键一列。
#
# 检查（check）会先用 3 维输入试，再用 4 维输入试（同一份代码必须两种都能处理），并且让 `T_q != T_k`，这样一旦把查询和键弄混，形状就会露馅；分数也会大到几十。
#
# **难度：** ★☆☆ · **用时：** 约 5 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 每个分数是一个查询（query）和一个键（key）的点积，一次矩阵乘法（matrix multiplication）就能把它们全部算出来：`(..., T_q, d_k)` 乘以 `(..., d_k, T_k)` 得到 `(..., T_q, T_k)`。所以先把键转置成列，相乘，再把每个分数除以 $\sqrt{d_k}$，和上面的公式一样。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# `d_k` 是一个查询（query）的宽度，也就是 `q` 的最后一维（`q.shape[-1]`）。转置只能交换 `k` 的最后两维，前面是什么都不能动：给 `k.transpose` 传从末尾数起的维度 `-2` 和 `-1`，同一行代码就能同时处理 3 维和 4 维输入。`@` 对最后两维做矩阵乘法（matrix multiplication），前导维度保持不变。`d_k` 是 Python 的 int，所以开平方用 `math.sqrt`（`math` 已经导入了）。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])`；或者先写 `d_k = q.shape[-1]`，再 `return q @ k.transpose(-2, -1) / math.sqrt(d_k)`。
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


# %% lang="zh"
def attention_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """每个查询与每个键之间的缩放点积。

    参数：
        q: 查询，形状 (..., T_q, d_k)。
        k: 键，形状 (..., T_k, d_k)；前面的维度与 q 的相同。

    返回：
        形状为 (..., T_q, T_k) 的分数：q @ k^T / sqrt(d_k)。
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

# %% [markdown] lang="zh"
# **如果检查没通过**，先看“尝试”那一行给出的形状（检查故意让 `T_q != T_k`，所以 `q` 和 `k` 写反了会表现为形状不对），再看“可能的错误”那一行：漏了缩放或者缩放写错，它都能认出来并点名。

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

# %% [markdown] lang="zh"
# ## 3. 从分数到输出，以及掩码
#
# 注意力剩下的部分，就是你在第 1 节手算过的那些：
#
# 1. `weights = softmax(scores)`，沿**键**的方向，也就是最后一维（`dim=-1`）：每个查询那一行的权重加起来等于 1。（如果沿 `dim=-2` 做 softmax，就变成每个*键*那一列加起来等于 1，在这里没有任何意义。）
# 2. `out = weights @ v`：`(..., T_q, T_k) @ (..., T_k, d_v) -> (..., T_q, d_v)`，每个查询得到一份值的混合。
#
# ### 掩码：True = 可以关注
#
# 有时候，查询不能看某些键：比如语言模型里未来的位置（第 5 节），又比如填充（padding）出来的位置。我们传入一个**布尔掩码**，它能广播（broadcasting）到分数的形状 `(..., T_q, T_k)`，其中 `True` 表示“这个查询**可以**关注这个键”。PyTorch 的 `torch.nn.functional.scaled_dot_product_attention` 对布尔掩码也是这个约定（在那里，`attn_mask` 为 True 表示“参与注意力计算”），所以我们的函数和 PyTorch 的可以互相替换。
#
# 要禁止某个键，就在 softmax **之前**把它的分数设成 $-\infty$：$e^{-\infty} = 0$，所以它的权重恰好是 0，全部权重由允许的那些键来分。`scores.masked_fill(cond, value)` 返回 `scores` 的一个副本，在 `cond` 为 True 的地方填上 `value`；我们要填的是掩码为 **False** 的地方，也就是 `~mask` 为 True 的地方：

# %%
scores = torch.tensor([[2.0, 1.0, 0.5, -1.0]])  # (1, 4): one query, four keys
mask = torch.tensor([[True, True, False, True]])  # (1, 4): key 2 is forbidden

masked = scores.masked_fill(~mask, float("-inf"))  # (1, 4)
print("masked scores:         ", masked)
print("softmax(masked scores):", torch.softmax(masked, dim=-1))

# %% lang="zh"
scores = torch.tensor([[2.0, 1.0, 0.5, -1.0]])  # (1, 4)：一个查询，四个键
mask = torch.tensor([[True, True, False, True]])  # (1, 4)：第 2 个键不许看

masked = scores.masked_fill(~mask, float("-inf"))  # (1, 4)
print("masked scores:         ", masked)
print("softmax(masked scores):", torch.softmax(masked, dim=-1))

# %% [markdown]
# Two tempting alternatives are wrong:

# %% [markdown] lang="zh"
# 有两种看上去很顺手的写法，其实都是错的：

# %%
after = torch.softmax(scores, dim=-1) * mask
print("mask AFTER the softmax:   ", after, f"<- the row sums to {after.sum().item():.3f}, not 1")
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

# %% [markdown] lang="zh"
# 还有一个边界情况：如果一行里的**所有**键都被遮住，这一行就全是 $-\infty$，softmax 得到 $0/0$ = `NaN`。因果掩码（causal mask）不会出现这种情况，但填充有可能（笔记本 03）。课程自己的实现（也就是检查拿来和你的代码比对的那个*参考实现*）在 softmax 之后用 `weights.nan_to_num(0.0)` 把这样的行变成全零权重；你也照这样做。检查里就有这样的一行，遇到 `NaN` 就判为失败。
#
# ### 练习：`scaled_dot_product_attention(q, k, v, mask=None)`
#
# 返回二元组 `(out, weights)`：`weights` 是缩放分数沿键方向的 softmax，形状为 `(..., T_q, T_k)`，被遮住的键（`mask` 为 False 的地方）权重恰好为 0；`out = weights @ v`，形状为 `(..., T_q, d_v)`。如果一个查询的所有键都被遮住，它的权重就全是 0（输出因此也全是 0），绝不能是 `NaN`。`mask` 是可选的布尔张量，能广播到分数的形状。
#
# 检查会先试不带掩码的 3 维和 4 维输入，然后依次试：键填充掩码（key-padding mask）`(B, 1, 1, T_k)`；随机掩码 `(B, 1, T_q, T_k)`（在各个头上广播）；一个让某个查询一个键都不能关注的掩码；以及非常大的分数（这时只有 $-\infty$ 还能起到遮挡作用）。
#
# **难度：** ★★☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 分四步：算分数（用你的 `attention_scores`，或者把那一行再写一遍）；如果有掩码（mask），在 softmax *之前*把被禁止的键（key）的分数设成 $-\infty$；沿键的方向做 softmax；对值（value）加权求和。然后处理边界情况：全是 $-\infty$ 的一行经过 softmax 会变成 `NaN`（$0/0$），必须把它变成全零的一行。
# </details>
#
# <details><summary>提示 2：各部分写在哪里</summary>
#
# - 掩码（mask），只在 `mask` 不是 `None` 时处理：`masked_fill` 在条件为 True 的地方填值，而你要填的是掩码为 **False** 的地方，所以条件是用 `~` 取反后的掩码；填的值是 `float("-inf")`。
# - softmax：对形状为 `(..., T_q, T_k)` 的分数做 `torch.softmax`，沿最后一维，也就是键（key）的方向（`dim=-1`）。
# - 边界情况，只在有掩码时处理：softmax 之后紧接着用张量（tensor）方法 `nan_to_num` 把权重里的 `NaN` 变成 0。
# - 输出：一次矩阵乘法（matrix multiplication），权重 `(..., T_q, T_k)` 乘以值（value）`(..., T_k, d_v)`。返回这一对结果，输出在前。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])`；当 `mask is not None` 时，`scores = scores.masked_fill(~mask, float("-inf"))`；`weights = torch.softmax(scores, dim=-1)`，有掩码（mask）时再加一步 `weights = weights.nan_to_num(0.0)`；最后 `return weights @ v, weights`。
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


# %% lang="zh"
def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d_k)) v，同时返回注意力权重。

    参数：
        q: 查询，形状 (..., T_q, d_k)。
        k: 键，形状 (..., T_k, d_k)。
        v: 值，形状 (..., T_k, d_v)。
        mask: 可选的 bool 张量，能广播到 (..., T_q, T_k)；True 表示可以关注。
            被掩码遮住的分数在 softmax 之前设为 -inf。

    返回：
        (out, weights)：out 的形状为 (..., T_q, d_v)；weights 的形状为 (..., T_q, T_k)，
        每一行对所有键求和为 1（如果一行的键全被遮住，这一行全为 0）。
    """
    ### BEGIN SOLUTION
    # 这里把步骤完整写出来，而不是调用 attention_scores，这样这个练习可以单独评分。
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # (..., T_q, T_k)
    weights = torch.softmax(scores, dim=-1)  # (..., T_q, T_k)，沿键的方向做 softmax
    if mask is not None:
        weights = weights.nan_to_num(0.0)  # 所有键都被遮住的一行：0/0 -> 0
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

# %% [markdown] lang="zh"
# **如果检查没通过**，“尝试”那一行会告诉你是哪个输入出了问题。如果报错说“注意力权重有一行加起来不等于 1”（注意力权重即 attention weights），通常是 softmax 沿错了维度，或者掩码加在了 softmax 之后；如果说“被掩码遮住的键分到了注意力权重”，说明掩码被忽略了、取反了、用错了维度，或者是用乘法乘上去的；如果说“一个不能关注任何键的查询得到了非零权重”，那就是上面讲的边界情况。
#
# ### 和 PyTorch 对照
#
# PyTorch 内置了这个函数：`torch.nn.functional.scaled_dot_product_attention`，掩码约定也相同。它只返回输出（只要能避免，它就根本不构造权重矩阵；快速注意力内核就是这样省内存的）。你的输出应该和它一致，差别只在 float32 的舍入误差以内：

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

# %% lang="zh"
q = torch.randn(2, 3, 5, 4)  # (B, H, T_q, d_k)
k = torch.randn(2, 3, 7, 4)  # (B, H, T_k, d_k)
v = torch.randn(2, 3, 7, 6)  # (B, H, T_k, d_v)
mask = torch.rand(2, 1, 5, 7) < 0.7  # (B, 1, T_q, T_k)，在各个头上广播
mask[..., 0] = True  # 每个查询至少能关注一个键

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

# %% [markdown] lang="zh"
# ## 4. 自注意力
#
# 在**自**注意力（self-attention）里，查询、键和值都来自同一个形状为 `(B, T, D)` 的序列 `x`：每个 token 提出一个问题（它的查询），亮出自己有什么（它的键），并提供内容（它的值）。它们由三个可学习的线性映射得到：
#
# $$q = x W_Q + b_Q, \qquad k = x W_K + b_K, \qquad v = x W_V + b_V$$
#
# 在 PyTorch 里，每个映射都是一个 `nn.Linear(D, D)`；把它用在 `x (B, T, D)` 上，它只变换最后一维，返回 `(B, T, D)`。一个 `nn.Linear(D, D)` 有一个 `D × D` 的权重和一个长度为 `D` 的偏置，所以整个模块共有 $3(D^2 + D)$ 个参数（parameter）。
#
# ### 练习：`SelfAttention(d_model)`
#
# 写一个模块，包含三个层 `W_Q`、`W_K`、`W_V`，每个都是带默认偏置的 `nn.Linear(d_model, d_model)`，除此之外没有别的参数。`forward(x, mask=None)` 接收形状为 `(B, T, D)` 的 `x`，返回 `(out (B, T, D), weights (B, T, T))`：用它从 `x` 算出的查询、键和值做注意力；如果有掩码，就按第 3 节的方式使用。
#
# 检查会自己构造一个 `SelfAttention(D)`，把它自己的权重复制到你的三个层里（所以名字必须一字不差），然后在三种情况下比较输出：不带掩码、带因果掩码、带键填充掩码；它还会数参数个数，并检查梯度能不能传到每一层。
#
# **难度：** ★★☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 自注意力（self-attention）就是第 3 节的注意力（attention），只不过 `q`、`k`、`v` 都由同一个 `x` 经过三个可学习的层得到。所以这个模块只拥有这三个层，别的什么都没有；`forward` 只是把 `x` 投影三次：注意力本身不用再写一遍。和所有 `nn.Module` 一样，它必须先运行父类的 `__init__`，再创建任何层。
# </details>
#
# <details><summary>提示 2：各部分写在哪里</summary>
#
# - `__init__`：第一行通过 `super()` 调用 `nn.Module` 的 `__init__`；少了这一行，你给第一个层赋值时就会报 `AttributeError: cannot assign module before Module.__init__() call`。接着是三个属性，名字必须正好是 `W_Q`、`W_K`、`W_V`，每个都是从 `d_model` 到 `d_model` 的 `nn.Linear`，带默认偏置。
# - `forward`：每个层作用在 `x` 上，都得到 `(B, T, D)`：这就是第 3 节里的 `q`、`k`、`v`。等你的 `scaled_dot_product_attention` 通过了检查（check），就把它们连同原封不动的 `mask` 一起交给它。它本来就返回 `(out (B, T, D), weights (B, T, T))` 这一对结果：把它的返回值直接返回就行。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# 先 `super().__init__()`，再 `self.W_Q = nn.Linear(d_model, d_model)`（`W_K`、`W_V` 同理）；在 `forward` 里：`return scaled_dot_product_attention(self.W_Q(x), self.W_K(x), self.W_V(x), mask)`。
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


# %% lang="zh"
class SelfAttention(nn.Module):
    """单头自注意力。

    构造参数：
        d_model: 一个 token 向量的宽度 D。

    属性：
        W_Q, W_K, W_V: 各是一个 nn.Linear(d_model, d_model)，所以一共 3 (D^2 + D) 个参数。

    forward(x, mask=None)：
        x: (B, T, D)；mask: 可选的 bool 张量，能广播到 (B, T, T)，True 表示可以关注。
        返回 (out, weights)：out 为 (B, T, D)，weights 为 (B, T, T)。
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
        # 和 scaled_dot_product_attention 的步骤相同，这里完整写出来，这样这个练习可以单独评分
        # （学习者也可以直接调用自己写的 scaled_dot_product_attention）。
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T, T)，只有一个头时 d_k = D
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

# %% [markdown] lang="zh"
# **如果检查没通过：** 检查会自己构造 `SelfAttention(d_model)`，把它自己的权重复制到你的 `W_Q`、`W_K`、`W_V` 里，再比较输出，所以属性名和尺寸必须和上面完全一致。参数个数不对，说明少了或多了某个层（或者用了 `bias=False`）；如果报错说“梯度传不到 W_V.weight”，说明输出并不是经过这一层算出来的。
#
# `D = 16` 时的参数个数：

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

# %% [markdown] lang="zh"
# ### 看看注意力权重
#
# 我们喂进去一个句子。每个不同的词从一个 `nn.Embedding`（一张可学习的查找表，笔记本 08 会细讲）里拿到一个随机向量，所以 `x` 的形状是 `(1, T, D)`。`plot_attention(weights, tokens)` 会画出一张 `(T, T)` 的图：行是查询 token，列是它所关注的键 token。
#
# 左边是一个刚完成初始化（initialization）、还没训练过的层。右边是同一个层，只是把 `W_Q` 和 `W_K` 设成了单位矩阵：这样每个 token 的查询就是它自己的嵌入（embedding），于是 token 会去找*和自己相像*的 token。

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

# %% [markdown] lang="zh"
# 有两点值得注意：
#
# - 右图里，每个 token 主要关注它自己，而两个“the”把注意力分给了彼此：嵌入相同，键也就相同。
# - **两张**图里，两个“the”对应的行都完全一样。注意力看到的是一组向量，而不是一个序列：它根本不知道一个“the”排在第一位，另一个排在第五位。笔记本 04 会加入位置信息。

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

# %% [markdown] lang="zh"
# ## 5. 因果掩码
#
# 语言模型根据前面的 token 预测下一个 token。训练时，它一次读入整个句子，并行地预测每一个“下一个 token”，所以位置 `t` 不能偷看 `t` 之后的位置：那等于直接看答案。**因果掩码**只让查询 `t` 关注键 `0, 1, …, t`：对角线及其下方为 True，上方为 False。
#
# `torch.tril`（triangle, lower，即下三角）保留矩阵的下三角部分（包括对角线），其余位置设为 0（对布尔张量来说就是 False）：

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

# %% [markdown] lang="zh"
# 第 `t` 行就是查询 `t`，它在第 `0..t` 列为 True。对角线是保留的：token 可以关注它自己。`(T, T)` 的掩码能和形状为 `(B, T, T)` 的分数广播（之后还会和 `(B, H, T, T)` 的分数广播）。
#
# ### 练习：`causal_mask(T)`
#
# 返回一个形状为 `(T, T)` 的布尔张量，对角线及其下方为 True。它必须是 `bool` 张量：由 0 和 1 组成的浮点掩码并不是布尔掩码，对它用 `~` 会报 TypeError。
#
# 检查会试 `T = 5`、`T = 1`，以及较长的 `T = 40`。
#
# **难度：** ★☆☆ · **用时：** 约 3 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 查询（query）`t` 能看到键（key）`0..t`：对角线以及它下方的所有位置。从一个全是 `True` 的 `(T, T)` 张量（tensor）出发，像上面那个单元格一样，只保留它的下三角。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 两个函数，一个套在另一个里面：先用 `torch.ones` 造一个尺寸为 `T, T` 的张量（tensor），`dtype` 要设成布尔型，不设的话张量是浮点型，掩码（mask）也就跟着成了浮点型；再对它调用 `torch.tril`，它会保留对角线。上面那个单元格打印的第二个结果，就是 `T = 4` 时这样做出来的。
# </details>
#
# <details><summary>提示 3：答案</summary>
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


# %% lang="zh"
def causal_mask(T: int) -> torch.Tensor:
    """解码器的因果掩码：查询 t 可以关注键 0..t。

    参数：
        T: 序列长度。

    返回：
        形状为 (T, T) 的 bool 张量，对角线及其下方为 True（True 表示可以关注）。
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

# %% [markdown] lang="zh"
# **如果检查没通过**，对比“期望”和“实际”这两行：上三角掩码（`triu`）、对角线被遮住、掩码取反，这几种错误检查都能认出来并点名。
#
# 现在把同一个句子送进上面那个用单位矩阵的层，并加上因果掩码。上三角恰好全是 0；位置 0 的“the”只能看到它自己，而位置 4 的“the”仍然能找到第一个“the”，因为那个“the”在它的过去。

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

# %% [markdown] lang="zh"
# 掩码保证了一件事：改动一个 token，只会影响它自己和它后面那些位置的输出。把最后一个词换掉，比较一下：

# %%
x_changed = x.clone()
x_changed[0, -1] = torch.randn(D)  # a different last token
with torch.no_grad():
    out_changed, _ = attn(x_changed, causal_mask(T))
print("change per position:", (out_changed - out_causal).abs().amax(dim=-1)[0])

# %% lang="zh"
x_changed = x.clone()
x_changed[0, -1] = torch.randn(D)  # 换了最后一个 token
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

# %% [markdown] lang="zh"
# 只有最后一个位置变了。要是没有掩码，每个位置都会变。
#
# ## 小结
#
# - 分数是 `q @ kᵀ / sqrt(d_k)`，形状为 `(..., T_q, T_k)`；缩放让分数的方差保持在 1 附近。
# - 权重 = 沿键方向（`dim=-1`）的 softmax，每一行加起来等于 1；`out = weights @ v`。
# - 掩码是布尔型，True = 可以关注；被禁止的分数在 softmax **之前**变成 `-inf`。
# - 自注意力：`q, k, v` 是同一个 `x` 的三个线性映射，共 $3(D^2 + D)$ 个参数。
# - 因果掩码就是 `tril`：位置 `t` 能看到 `0..t`。
#
# **下一步：** 笔记本 02 会让多个注意力头并排运行。
