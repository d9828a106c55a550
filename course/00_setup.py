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

# %% [markdown] lang="zh"
# # 00 · 这门课怎么学
#
# 这门课里，你要用 PyTorch 从零搭出 **TinyLM**：一个很小的仅解码器（decoder-only）Transformer 语言模型（language model）。模型要一个部件一个部件地搭起来：每写完一个部件，紧跟在后面的*检查单元格*（check cell）会马上拿它和参考实现比对。
#
# 这是第一本笔记本，只有一个小练习（exercise）：写一个 softmax。通过它你会：
#
# 1. 确认你的环境就是课程要求的环境；
# 2. 弄清练习和检查单元格怎么配合，以及检查没通过时报错信息怎么读；
# 3. 明白 Transformer 为什么用注意力（attention），而不用循环神经网络（RNN）。

# %%
import time
import timeit

import torch

from tinylm_checks import check_environment, check_softmax

_ = torch.manual_seed(0)

# %% [markdown]
# ## 1. Your environment
#
# The course's runs were made on PyTorch 2.13.0 (what `make lab` installs): on it, your numbers are the
# ones the notebooks state. Its checks are also tested on PyTorch 2.5, the oldest it supports, and on 2.15,
# so the PyTorch a hosted notebook already has will usually do. Run the next cell: it prints what you are
# running on. On PyTorch 2.13.0 it passes; on another version from 2.5 on it passes with a warning that says
# which of the notebooks' numbers may then differ from yours; on a PyTorch older than 2.5 it fails and says
# how to upgrade.
#
# Everything in this course runs on a CPU; 2 cores are enough.

# %% [markdown] lang="zh"
# ## 1. 你的环境
#
# 笔记本里的结果都是在 PyTorch 2.13.0 上跑出来的（`make lab` 安装的正是这个版本）；用这个版本，你得到的数字会和笔记本里写的一样。检查本身还在 PyTorch 2.5（课程支持的最低版本）和 2.15 上测试过，所以在线笔记本平台（hosted notebook）自带的 PyTorch 一般也能直接用。运行下一个单元格，它会打印你当前的环境：PyTorch 2.13.0 直接通过；2.5 及以上的其他版本也能通过，但会给出一条警告，列出笔记本里哪些数字可能和你跑出来的不同；低于 2.5 时它会报错，并告诉你怎样升级。
#
# 整门课都在 CPU 上运行，2 个核就够用。

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
# | `look at:` | where in your code to look for that mistake |
# | `hint:` | when no mistake is named: what to look at |
#
# Not every failure has every line: a NaN or a wrong shape, for example, needs no "expected" row. In
# JupyterLab the message is drawn as a small table, and when the check compared matrices (a mask,
# attention weights, a table of positions) your matrix and the expected one stand side by side as
# heatmaps, the cells that differ marked ✕.
#
# For a named mistake, the line that fixes it waits until you ask for it: open the fold **show the fix**
# under the message, or run `show_fix()`. Think first; if the same mistake comes back, its fix comes with
# the message.
#
# **If things get weird** (a function you fixed still fails, or a name is "not defined" although you
# can see it), you probably ran cells out of order or an old definition is still in memory. Use
# *Kernel → Restart Kernel and Run All Cells…* (or *Run up to Selected Cell*) and the notebook runs
# again from a clean state, top to bottom.

# %% [markdown] lang="zh"
# ## 2. 练习和检查单元格
#
# 每个练习都是一个代码单元格，里面有一个等你补全的函数（或类）。函数签名和文档字符串（docstring）都已经写好，函数体里只有这两行：
#
# ```python
# # 在这里写你的代码
# raise NotImplementedError()
# ```
#
# 把这两行换成你的代码。练习正下方就是它的**检查单元格**。流程是：
#
# 1. 改好练习单元格，按 **Shift+Enter** 运行（运行当前单元格并跳到下一个）；
# 2. 再按一次 **Shift+Enter**，运行它下面的检查单元格；
# 3. 看检查打印了什么。
#
# 每个练习上方都标着难度（★☆☆ 到 ★★★）和大约要花的时间，还有分三层折叠起来的提示（hint）：**提示 1** 点明思路，**提示 2** 指出位置（哪一行、哪个张量（tensor）、哪一维、哪个函数），最后一层的标题写明是“答案”，里面直接给出代码。卡住了再点开一层，还是想不出来再看下一层。先自己动手试一试，哪怕只试几分钟，学到的东西也会记得更牢。
#
# 检查通过时，会打印一行以 ✔ 开头的信息，说明它验证了哪些内容。没通过时，它会抛出 `CheckFailure`，报错信息由下面这几行组成（括号里是英文版笔记本的写法，只在这里列一次；后面的笔记本都只用中文的叫法，比如“尝试”那一行）：
#
# | 行 | 告诉你什么 |
# |---|---|
# | `check_... 未通过：...`（英文版是 `check_... failed: ...`） | 出了什么错，一句话说清 |
# | `尝试：`（英文版是 `tried:`） | 检查给你的代码喂了什么输入（形状（shape）、dtype、随机种子（random seed）），方便你复现 |
# | `期望：`（英文版是 `expected:`） | 参考实现返回的结果（其中一行） |
# | `实际：`（英文版是 `got:`） | 你的代码返回的结果，以及和参考实现的最大差值 |
# | `可能的错误：`（英文版是 `likely mistake:`） | 如果是常见错误，直接说出它的名字 |
# | `看看：`（英文版是 `look at:`） | 这个错误该到你代码的哪里去找 |
# | `提示：`（英文版是 `hint:`） | 没有点出具体错误时，告诉你该看哪里 |
#
# 并不是每次失败都有全部这几行：比如出现 NaN 或者形状不对时，就用不着“期望”那一行。在 JupyterLab 里，报错信息会画成一张小表格；如果检查比较的是矩阵（掩码、注意力权重、位置编码表），还会把你的矩阵和期望的矩阵画成两张热力图并排摆着，不一样的格子用 ✕ 标出来。
#
# 如果报错点出了具体错误，改正的那行代码不会马上给你，想看时再看：点开报错下面的折叠项 **看改法**，或者运行 `show_fix()`。先自己想一想；同一个错误如果再犯，改法会直接附在报错里。
#
# **如果遇到怪事**（明明改好的函数还是不通过，或者明明定义过的名字却报 `NameError`，说它没有定义），多半是因为你没有按顺序运行单元格，或者内存里还留着旧的定义。点菜单 *内核 → 重启并运行所有单元格…*（或 *内核 → 重启内核并运行到所选单元格…*），笔记本就会从干净的状态自上而下重新跑一遍。

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

# %% [markdown] lang="zh"
# ### 热身：softmax
#
# 注意力用 **softmax** 把分数变成权重。对一个向量 $x = (x_1, \dots, x_N)$：
#
# $$\mathrm{softmax}(x)_i = \frac{e^{x_i}}{\sum_{j=1}^{N} e^{x_j}}$$
#
# 每个输出都是正数，所有输出加起来等于 1：不管分数是多少，softmax 都能把它们变成一个概率分布。分数越大，权重越大。
#
# 我们的张量有好几维，比如形状为 `(B, T, N)` 的分数。softmax 必须沿**最后一维**计算：每一行的 `N` 个数各自归一化。下面是 PyTorch 自带的 softmax，先看看结果应该是什么样子：

# %%
x = torch.tensor([[1.0, 2.0, 3.0],
                  [1.0, 1.0, 1.0]])  # (2, 3): two rows of three scores
p = torch.softmax(x, dim=-1)  # (2, 3)
print(p)
print("row sums:", p.sum(dim=-1))

# %% lang="zh"
x = torch.tensor([[1.0, 2.0, 3.0],
                  [1.0, 1.0, 1.0]])  # (2, 3)：两行，每行三个分数
p = torch.softmax(x, dim=-1)  # (2, 3)
print(p)
print("row sums:", p.sum(dim=-1))

# %% [markdown]
# ### A check that fails, on purpose
#
# Before you write your own softmax, let's see a check fail. The function below has a classic bug: it
# normalises over the **first** dimension (`dim=0`) instead of the last. Run the definition, then the
# check under it. The check cell is *meant* to fail, so the error you'll see is expected.

# %% [markdown] lang="zh"
# ### 一个故意失败的检查
#
# 在写自己的 softmax 之前，先看看检查失败是什么样子。下面这个函数有个典型 bug：它沿**第一维**（`dim=0`）归一化，而不是沿最后一维。先运行函数定义，再运行下面的检查。这个检查单元格*本来就该*失败，所以看到报错是正常的。

# %%
def softmax_wrong_dim(x):
    """A buggy softmax: sums over dim 0 instead of the last dimension."""
    e = torch.exp(x)
    return e / e.sum(dim=0, keepdim=True)


# %% lang="zh"
def softmax_wrong_dim(x):
    """有 bug 的 softmax：沿第 0 维求和，而不是沿最后一维。"""
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
# - **look at** says where: the `dim` of each reduction in the softmax.
# - **show the fix** (the fold under the message, or `show_fix()`) holds the line that fixes it. Open it
#   once you have an idea of your own: here, sum over the last dimension, `dim=-1`.
#
# Here is a second classic bug. The formula above, typed in as is, breaks for large scores:
# $e^{1000}$ does not fit in a float, it becomes `inf`, and `inf / inf` is `NaN`.

# %% [markdown] lang="zh"
# 逐行读一下这条报错：
#
# - **尝试** 那一行：给的输入是形状为 `(2, 3, 5)` 的随机分数（`float64`，随机种子 0）。
# - **期望** 那一行列出参考答案里的一行：五个数，加起来等于 1。
# - **实际** 那一行列出我们的答案里同一行：这几个数加起来不等于 1，后面还打印了和参考实现的最大差值。
# - **可能的错误** 那一行点出了 bug 的名字：softmax 归一化的维度不对。
# - **看看** 那一行告诉你该去哪里找：softmax 里每次归约用的 `dim`。
# - **看改法**（报错下面的折叠项，或者运行 `show_fix()`）里是改正的那一行。自己先有了想法再点开：这里应该沿最后一维求和，也就是 `dim=-1`。
#
# 再看第二个典型 bug。把上面的公式原样敲进代码，遇到大分数就会出问题：$e^{1000}$ 超出了浮点数的表示范围，变成 `inf`，而 `inf / inf` 就是 `NaN`。

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

# %% [markdown] lang="zh"
# 解决办法来自一个恒等式：每个分数都减去同一个数 $m$，结果不变，因为
#
# $$\frac{e^{x_i - m}}{\sum_j e^{x_j - m}} = \frac{e^{x_i}\, e^{-m}}{e^{-m} \sum_j e^{x_j}} = \frac{e^{x_i}}{\sum_j e^{x_j}}.$$
#
# 取 $m = \max_j x_j$（这一行的最大值）：最大的指数项变成 $e^0 = 1$，什么都不会溢出。检查也会用大分数来测，所以朴素写法的 softmax 逃不过它：

# %%
def softmax_naive(x):
    """A buggy softmax: right dimension, but exp() overflows for large scores."""
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


# %% lang="zh"
def softmax_naive(x):
    """有 bug 的 softmax：维度对了，但分数很大时 exp() 会溢出。"""
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)

# %% tags=["raises-exception"]
check_softmax(softmax_naive)

# %% [markdown]
# This time the check found NaN in the output for large scores, named the mistake and said where to look; its
# fix waits in the fold.
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

# %% [markdown] lang="zh"
# 这一次，检查在大分数的输出里发现了 NaN，点出了错误的名字，告诉了你该看哪里，也备好了改法（在“看改法”里）。
#
# ### 练习：`softmax(x)`
#
# 写一个沿最后一维计算、数值稳定的 softmax，**不许**用 `torch.softmax`（这正是这个练习要练的）。`x` 的形状是 `(..., N)`（前面可以有任意多维）；返回一个形状相同的张量，其中每一行（最后一维）都是正数，并且加起来等于 1。
#
# 检查会在随机分数和大分数上（几行分别在 1000、-1000 和 0 附近，还有一行从 -1000 跨到 1000）把你的函数和 `torch.softmax(x, dim=-1)` 比对，还会检查梯度（gradient）能否穿过它反传，以及 float32 的输入是否得到 float32 的输出。
#
# **难度：** ★☆☆ · **用时：** 约 5 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 就是上面那个恒等式：一行里的每个分数都减去同一个数，softmax 的结果不变。所以先让每一行减去它自己的最大分数，这样最大的指数项就是 $e^0 = 1$，不会溢出。剩下的就是普通公式：先取指数，再除以这一行的和。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 三个操作，都沿最后一维（`dim=-1`）：每一行的最大值（`x.max` 返回一对结果，最大值在它的 `.values` 里）、`torch.exp`、每一行的和（`.sum`）。两个归约操作都要加上 `keepdim=True`：它把被归约的那一维保留下来，大小为 1，于是最大值和行和的形状（shape）都是 `(..., 1)`，能和 `(..., N)` 逐行广播（broadcasting）。不加的话，`(2, 3)` 的张量（tensor）减去它 `(2,)` 的最大值会报错；而 `(3, 3)` 的张量减去它 `(3,)` 的最大值虽然能跑，配对却是错的（每一行的最大值被减到了一列上）。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `x = x - x.max(dim=-1, keepdim=True).values`，然后 `e = torch.exp(x)`，最后 `return e / e.sum(dim=-1, keepdim=True)`。
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


# %% lang="zh"
def softmax(x: torch.Tensor) -> torch.Tensor:
    """数值稳定的 softmax，沿最后一维计算。

    参数：
        x: 分数，形状为 (..., N) 的浮点张量。

    返回：
        形状相同 (..., N) 的张量：每个元素都为正，每一行（最后一维）之和为 1。
        结果等于 torch.softmax(x, dim=-1)，分数在 1000 左右时也一样。
    """
    ### BEGIN SOLUTION
    x = x - x.max(dim=-1, keepdim=True).values  # (..., N)，现在每行最大的分数是 0
    e = torch.exp(x)  # (..., N)，每个元素都在 (0, 1] 之间
    return e / e.sum(dim=-1, keepdim=True)  # (..., N)，每行之和为 1
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

# %% [markdown] lang="zh"
# **如果检查没通过：** 看“尝试”那一行，在一个新单元格里把同样的输入造出来（比如 `x = torch.randn(2, 3, 5, dtype=torch.float64)`），然后把 `softmax(x)` 和 `torch.softmax(x, dim=-1)` 并排打印出来比一比。如果报错信息里是 `NotImplementedError`，说明练习单元格里还留着 `raise NotImplementedError()`，或者你改完以后没有重新运行它。

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

# %% [markdown] lang="zh"
# ## 3. 为什么注意力取代了 RNN
#
# 在 Transformer 出现之前，语言模型大多是**循环神经网络**（RNN、LSTM）。RNN 一次只读一个 token，它知道的一切都装在一个隐藏状态 $h$ 里：
#
# $$h_t = \tanh(h_{t-1} W_h + x_t W_x)$$
#
# 光这一行公式，就带来两个后果：
#
# 1. **只能顺序计算。** $h_t$ 要等 $h_{t-1}$，$h_{t-1}$ 又要等 $h_{t-2}$……所以 $T$ 个 token 就得一步接一步地走 $T$ 步，CPU 核再多也没用。
# 2. **信息要走很远的路。** token 0 带来的信息，要经过 $h$ 的 $T-1$ 次更新才能传到位置 $T-1$，每次更新都可能把它弄模糊、变弱。两个 token 之间的路径长度是 $O(T)$。
#
# **注意力**则把每个位置的输出算成*所有*位置的加权平均，权重由分数经过 softmax 得到（你会在笔记本 01 里亲手实现）。几次矩阵乘法（matrix multiplication）就能把所有位置一起算完，任意两个 token 之间**一步**可达：路径长度是 $O(1)$。
#
# 注意力也有代价，而且不能回避：它要把每个位置和其他所有位置都比较一遍，所以时间和内存开销随序列长度（sequence length）按 $O(T^2)$ 增长，而 RNN 只是 $O(T)$。这门课用的上下文很短（几百个 token），这点开销不算什么；超长上下文之所以昂贵，原因也正在这里。
#
# 下面用一个随机初始化、没有训练过的 RNN 和一个同样随机的注意力层，实际看看这两点：`T = 256` 个 token，宽度 `D = 64`。

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

# %% lang="zh"
T, D = 256, 64
x = torch.randn(T, D)  # (T, D)：一个序列，T 个 token 向量
W_h, W_x, W_q, W_k = (torch.randn(D, D) / D**0.5 for _ in range(4))  # 形状都是 (D, D)


def rnn(x):
    """h_t = tanh(h_{t-1} W_h + x_t W_x)，每个 token 走一步。返回全部隐藏状态 (T, D)。"""
    h = torch.zeros(D)  # (D,)
    states = []
    for t in range(x.shape[0]):  # T 步，每一步都要等上一步算完
        h = torch.tanh(h @ W_h + x[t] @ W_x)  # (D,)
        states.append(h)
    return torch.stack(states)  # (T, D)


def attention(x):
    """所有位置一次算完：每个位置的输出是所有位置的加权平均。返回 (T, D)。"""
    scores = (x @ W_q) @ (x @ W_k).T / D**0.5  # (T, T)：每个位置都和其他每个位置算一个分数
    return torch.softmax(scores, dim=-1) @ x  # (T, D)


for f in (rnn, attention):
    # 10 次调用为一轮，共 7 轮，取最快的一轮：最初几次调用（以及机器忙的时候）会比其余的慢
    ms = min(timeit.repeat(lambda: f(x), number=10, repeat=7)) / 10 * 1e3
    print(f"{f.__name__:>9}: {ms:6.2f} ms for T = {T} tokens")

# %% [markdown]
# Your timings will differ, but attention is usually many times faster here although it does *more*
# arithmetic ($T^2 D$ multiply-adds for the scores versus $T D^2$ for the RNN): a few big matrix
# products keep the CPU busy, while the RNN's 256 small steps must wait for each other.
#
# Now the path length. How much does the **last** output depend on a token `d` positions back? We
# measure the size of the gradient of the last output with respect to each input token.

# %% [markdown] lang="zh"
# 你测出的时间会不一样，但在这里注意力通常要快好几倍，尽管它做的运算其实*更多*（算分数要 $T^2 D$ 次乘加，RNN 是 $T D^2$ 次）：几个大的矩阵乘积能让 CPU 一直忙着，而 RNN 的 256 个小步骤只能一个等一个。
#
# 再看路径长度。**最后一个**输出有多依赖往回数第 `d` 个位置上的 token？我们对每个输入 token 求最后一个输出的梯度，用梯度的大小来衡量。

# %%
for f in (rnn, attention):
    x_ = x.clone().requires_grad_()
    f(x_)[-1].sum().backward()  # the last position's output
    sensitivity = x_.grad.norm(dim=-1)  # (T,): how much each input token moves it
    row = "  ".join(f"d={d}: {sensitivity[T - 1 - d]:.0e}" for d in (1, 5, 20, 50, 100, 255))
    print(f"{f.__name__:>9}  {row}")

# %% lang="zh"
for f in (rnn, attention):
    x_ = x.clone().requires_grad_()
    f(x_)[-1].sum().backward()  # 最后一个位置的输出
    sensitivity = x_.grad.norm(dim=-1)  # (T,)：每个输入 token 让它变化了多少
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

# %% [markdown] lang="zh"
# 在 RNN 里，一个 token 的影响随距离指数衰减：往回 50 个 token，影响几乎已经是零。在注意力里，往回 255 个位置的 token 和往回 5 个位置的 token 影响差不多：距离完全不起作用。（这里的 RNN 是随机、未训练的；LSTM 和 GRU 正是为了减缓这种衰减才发明的，但它们的路径仍然长达 $T$ 步，也仍然只能顺序计算。）
#
# 光有注意力还会忽略词序，因为加权平均不在乎 token 排在哪里。笔记本 04 会把位置信息加回来。
#
# **下一步：** 笔记本 01 亲手搭出注意力本身：查询（query）、键（key）、值（value），以及缩放点积。

# %% [markdown]
# ## Glossary (English · 中文)
#
# The course's technical terms with their Chinese names, as the Chinese notebooks and messages write them (the
# course runs in Chinese with `TINYLM_LANG=zh`).
#
# <!-- glossary -->

# %% [markdown] lang="zh"
# ## 术语表（中英对照）
#
# 课程里的技术术语和它们的英文名。中文笔记本和检查信息都用这里的译法（用 `TINYLM_LANG=zh` 打开中文版课程）；搜索资料时，英文名往往更好用。
#
# <!-- glossary -->
