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

# %% [markdown] lang="zh"
# # 04 · 位置
#
# 注意力（attention）会把每个 token 和其他所有 token 逐一比较，却完全不知道每个 token 在**哪里**：把 token 的顺序打乱，得到的还是同样那些输出，只是跟着换了顺序。这本笔记本要给 Transformer 加上位置编码（positional encoding），让它有顺序感。学完之后，你将能够：
#
# 1. 构造《Attention Is All You Need》里的正弦位置编码（sinusoidal positional encoding）表 `sinusoidal_position_encoding(max_len, d_model)`，并说清楚它的每一列是什么（一只有很多根指针的钟）；
# 2. 把它包装成模块 `PositionalEncoding(d_model, max_len)`：把表存成一个**缓冲区**（buffer），加到任意长度 `T <= max_len` 的 token 嵌入（embedding）上；
# 3. 像 GPT-2 那样构造**可学习**的位置向量，也就是可学习位置嵌入（learned positional embedding）：`LearnedPositionalEmbedding(d_model, max_len)`，并说出两种做法各自的代价和好处；
# 4. （附加题）不往输入上加任何东西，而是旋转查询（query）和键（key）：旋转位置编码（rotary position embedding，RoPE），`apply_rope(x, positions=None)`。
#
# 形状（shape）约定同前：`B` 是批次（batch）大小，`T` 是序列长度（sequence length），`D` = `d_model`，`max_len` 是这张表能覆盖的最长序列。

# %%
import math

import matplotlib.pyplot as plt
import torch
from torch import nn

from tinylm_checks import (check_apply_rope, check_learned_positional_embedding, check_positional_encoding,
                           check_sinusoidal_position_encoding, plot_position_encoding, position_explorer)
from tinylm_solutions.multihead import MultiHeadSelfAttention  # the course's version of notebook 02's

_ = torch.manual_seed(0)

# %% lang="zh"
import math

import matplotlib.pyplot as plt
import torch
from torch import nn

from tinylm_checks import (check_apply_rope, check_learned_positional_embedding, check_positional_encoding,
                           check_sinusoidal_position_encoding, plot_position_encoding, position_explorer)
from tinylm_solutions.multihead import MultiHeadSelfAttention  # 课程自带的、笔记本 02 里的那个版本

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

# %% [markdown] lang="zh"
# **关于导入。** `MultiHeadSelfAttention` 是课程版的实现，对应你在笔记本 02 里写的代码（签名相同，行为相同），这样这本笔记本可以独立运行。每个练习（exercise）后面的演示用的都是*你*写的版本：先把练习做完，让它的检查（check）通过，再运行它下面的单元格。
#
# ## 1. 注意力分不清顺序
#
# 在笔记本 01 里，“the cat sat on the mat”中的两个“the”得到了一模一样的注意力权重（attention weights）行：注意力看到的是两个相等的向量，无从知道一个排第一、一个排第五。下面换成整句话再看一次。“猫 追 狗”和“狗 追 猫”：三个 token 完全相同，意思正好相反。我们把两句话都做嵌入，送进多头自注意力（multi-head self-attention），不加掩码（mask）：

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

# %% lang="zh"
vocab = {"猫": 0, "追": 1, "狗": 2}  # 猫、追、狗
sentence_a, sentence_b = ["猫", "追", "狗"], ["狗", "追", "猫"]
perm = [2, 1, 0]  # sentence_b[i] == sentence_a[perm[i]]
D, H = 8, 2

embedding = nn.Embedding(len(vocab), D)
mha = MultiHeadSelfAttention(D, H)
ids_a = torch.tensor([[vocab[w] for w in sentence_a]])  # (1, T)
ids_b = torch.tensor([[vocab[w] for w in sentence_b]])  # (1, T)
with torch.no_grad():
    x_a, x_b = embedding(ids_a), embedding(ids_b)  # 形状都是 (1, T, D)
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

# %% [markdown] lang="zh"
# 每个字在两句话里得到的输出**完全**相同，只是换了位置：“猫”在一句里是追的一方，在另一句里是被追的一方，注意力却分不出来。（差值是 0，或者是约 1e-7 的舍入误差。）用数学的话说：自注意力（self-attention）是*置换等变*（permutation-equivariant）的。把输入的行重新排列，输出的行也按同样的方式重新排列，因为分数、softmax 和加权求和看的都只是 token 两两之间的关系，从来不看一个 token 排在哪个位置。
#
# （因果掩码（causal mask）会稍微打破这种对称，因为 token `t` 能看到 `t + 1` 个 token，语言模型单凭这一点就能学到一些顺序信息；不过本课程的所有模型都和原始 Transformer 一样，会明确地把位置告诉模型。）
#
# 解决办法：在第一个注意力层之前，给每个 token 的向量加上一个由它的**位置**决定的向量。这样，“位置 0 的猫”和“位置 2 的猫”就是两个不同的向量了。
#
# ## 2. 正弦表：一只有很多根指针的钟
#
# 位置 `pos` 该用什么向量？直接把 `pos` 写进某个特征可不是好主意：这个数会无限增大，到了位置 1000，它就会把 token 自己的特征淹没。Vaswani 等人（2017，§3.5）改用一张正弦和余弦组成的表。想象一只有 `D/2` 根指针的钟。位置每前进一步，指针 `i` 就转过角度 $\omega_i$；快的指针负责区分相邻的位置，慢的指针负责区分相距很远的位置，所有指针合起来，给每个位置一个独一无二的读数。表里把每根指针存成一对（sin, cos）：
#
# $$PE[pos, 2i] = \sin(pos \cdot \omega_i), \qquad PE[pos, 2i+1] = \cos(pos \cdot \omega_i), \qquad
# \omega_i = \frac{1}{10000^{2i/D}}$$
#
# - 列是**交错**成对的：第 `2i` 列（偶数列）是 sin，第 `2i+1` 列（奇数列）是**同一个**角度的 cos。（有些库把所有正弦放在前面、所有余弦放在后面：这种排法也没错，但本课程不这么排。）
# - 频率按**等比数列**变化：$\omega_0 = 1$，即每个位置转 1 弧度（每隔 $2\pi \approx 6.3$ 个位置转满一圈）；后一根指针的转速是前一根的 $10000^{-2/D}$ 倍（这个倍数小于 1：越转越慢），一直到 $\omega_{D/2-1} = 10000^{-(D-2)/D}$，`D` 很大时接近 $1/10000$（这时转满一圈要几万个位置）。
# - 第 0 行（位置 0，所有角度都是 0）是 `[0, 1, 0, 1, ...]`，因为 $\sin 0 = 0$，$\cos 0 = 1$。
# - 不管位置是多少，每个值都在 $[-1, 1]$ 之内。
#
# 下面是一张 `D = 6` 的小表的前几个位置：三根指针，频率 $\omega_0, \omega_1, \omega_2$ 分别是 1、0.046 和 0.0022（表中数值保留 3 位小数）：
#
# | pos | sin(pos ω₀) | cos(pos ω₀) | sin(pos ω₁) | cos(pos ω₁) | sin(pos ω₂) | cos(pos ω₂) |
# |---:|---:|---:|---:|---:|---:|---:|
# | 0 | 0.000 | 1.000 | 0.000 | 1.000 | 0.000 | 1.000 |
# | 1 | 0.841 | 0.540 | 0.046 | 0.999 | 0.002 | 1.000 |
# | 2 | 0.909 | −0.416 | 0.093 | 0.996 | 0.004 | 1.000 |
# | 3 | 0.141 | −0.990 | 0.139 | 0.990 | 0.006 | 1.000 |
# | 4 | −0.757 | −0.654 | 0.185 | 0.983 | 0.009 | 1.000 |
#
# 一列一列地看：第一对转得很快（它的 cos 从位置 2 起变成负数，sin 从位置 4 起变成负数），最后一对几乎没动。
#
# ### 练习：`sinusoidal_position_encoding(max_len, d_model)`
#
# 对偶数的 `d_model`，返回上面这张 `(max_len, d_model)` 的表，类型用 torch 的**默认浮点 dtype**（float32，和 `torch.zeros(max_len, d_model)` 一样；float64 的表加到 float32 的嵌入上，会把结果也变成 float64）。
#
# 一种不用循环的做法：
#
# - 位置 `pos`：一列 `(max_len, 1)`，转成浮点数；
# - 频率 $\omega_i$：一行 `(D/2,)`，每对一个；
# - 角度 `pos * omega`：靠广播（broadcasting）得到 `(max_len, D/2)`；
# - 一张 `(max_len, D)` 的全零表，偶数列 `[:, 0::2]` 填 `sin(angles)`，奇数列 `[:, 1::2]` 填 `cos(angles)`。
#
# 检查会分别在 `max_len > d_model` 和 `max_len < d_model` 时调用你的函数（`d_model` 从不取 2 的幂），然后检查：形状和 dtype；第 0 行是不是 `[0, 1, 0, 1, ...]`；每一对列是否都满足 $\sin^2 + \cos^2 = 1$；从第 1 行反推出的频率是不是 $10000^{-2i/D}$。如果不是，它会告诉你实际是什么：换了底数、指数差了 2 倍、用了整数除法……
#
# **难度：** ★★☆ · **用时：** 约 15 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 不用循环：照上面的四步，用广播（broadcasting）把整张表造出来。一列位置乘以一行频率，一次就得到所有角度；然后偶数列放这些角度的正弦，奇数列放它们的余弦。算频率时注意：公式里的 `2i` 取的是 `0, 2, 4, ...`，也就是小于 `D` 的偶数；第 `i` 对的指数就是这个数除以 `D`。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# - 位置：对 `max_len` 调用 `torch.arange`，再用 `[:, None]` 索引，变成一列 `(max_len, 1)`。
# - 频率：从 0 到 `d_model`、步长为 2 的 `torch.arange` 直接给出公式里的 `2i`：`0, 2, 4, ...`，形状（shape）是 `(D/2,)`。把它们除以 `d_model`（不是 `2 * ... / d_model`：那样 2 就算了两次）；$\omega_i$ 等于 1 除以 10000 的这个次方，也可以等价地写成 `torch.exp`：负的指数乘以 `math.log(10000.0)`。
# - 用 `/`，千万别用 `//`：整数除法会把指数全都舍成 0。（`/` 还会顺便把整数的 `arange` 转成 torch 的默认浮点 dtype。）
# - 表：`torch.zeros(max_len, d_model)`；把角度的 `torch.sin` 赋给偶数列 `[:, 0::2]`，同一组角度的 `torch.cos` 赋给奇数列 `[:, 1::2]`。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# 频率：设 `two_i = torch.arange(0, d_model, 2)`，则 `omega = 1 / 10000 ** (two_i / d_model)`，也可以写成等价的 `torch.exp(-two_i * math.log(10000.0) / d_model)`。整张表：
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


# %% lang="zh"
def sinusoidal_position_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """Vaswani 等人（2017）§3.5 的正弦位置表，交错排列。

    参数：
        max_len: 位置的个数（行数）。
        d_model: 一个 token 向量的宽度 D（偶数）。

    返回：
        形状为 (max_len, d_model) 的张量，dtype 为 torch 默认的浮点类型（float32），其中
        PE[pos, 2i] = sin(pos / 10000^(2i/D))，PE[pos, 2i+1] = cos(pos / 10000^(2i/D))。
    """
    ### BEGIN SOLUTION
    pos = torch.arange(max_len)[:, None]  # (max_len, 1)，整数
    omega = 10000.0 ** (-torch.arange(0, d_model, 2) / d_model)  # (D/2,)，用 / 得到的是默认浮点类型
    angles = pos * omega  # (max_len, D/2)
    pe = torch.zeros(max_len, d_model)  # (max_len, D)
    pe[:, 0::2] = torch.sin(angles)  # 偶数列：sin
    pe[:, 1::2] = torch.cos(angles)  # 奇数列：同一个角度的 cos
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

# %% [markdown] lang="zh"
# **如果检查没通过：** “实际”那一行显示的是它从你的表里读出来的数字。第 0 行是 `[1, 0, 1, 0, ...]`，说明 sin 和 cos 放反了；是 `[0, 0, ..., 1, 1]`，说明用了“先全部正弦、再全部余弦”的排法；频率是 `[1, 1, 1, ...]`，说明用了整数除法。
#
# 下面把整张表画成热力图：64 个位置，`D = 32`，由你的函数生成（等它的检查通过后再运行）。每一列是钟的一根指针：左边的快指针每一行都在变，闪个不停；越往右转得越慢，到最后几列，64 个位置下来几乎没有变化。

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

# %% [markdown] lang="zh"
# ## 3. 为什么要成对：平移就是旋转
#
# 为什么每根指针要存成一对（sin, cos），而不是只存 sin？因为往后移动 `k` 个位置时，不管从哪个位置出发，每一对都会转过同一个固定角度 $k\,\omega_i$：
#
# $$\begin{pmatrix} \sin((pos + k)\,\omega) \\ \cos((pos + k)\,\omega) \end{pmatrix} =
# \begin{pmatrix} \cos k\omega & \sin k\omega \\ -\sin k\omega & \cos k\omega \end{pmatrix}
# \begin{pmatrix} \sin(pos\,\omega) \\ \cos(pos\,\omega) \end{pmatrix}$$
#
# （这就是正弦和余弦的和角公式。）所以“往后 k 个位置”在每个位置上都是同一个线性变换：某一层只要学会一次“往回看 3 个 token”，放到哪里都管用。我们在表上验证一下，取 `k = 5`，所有位置一起算：

# %%
k = 5
omega = 10000.0 ** (-torch.arange(0, 32, 2) / 32)  # (D/2,)
c, s = torch.cos(k * omega), torch.sin(k * omega)  # (D/2,) each
sin_now, cos_now = table[:-k, 0::2], table[:-k, 1::2]  # (64 - k, D/2) each
sin_later = c * sin_now + s * cos_now  # rotate every pair by k * omega
cos_later = -s * sin_now + c * cos_now
print("max |rotated - table|:", max((sin_later - table[k:, 0::2]).abs().max().item(),
                                   (cos_later - table[k:, 1::2]).abs().max().item()))

# %% lang="zh"
k = 5
omega = 10000.0 ** (-torch.arange(0, 32, 2) / 32)  # (D/2,)
c, s = torch.cos(k * omega), torch.sin(k * omega)  # 形状都是 (D/2,)
sin_now, cos_now = table[:-k, 0::2], table[:-k, 1::2]  # 形状都是 (64 - k, D/2)
sin_later = c * sin_now + s * cos_now  # 把每一对都旋转 k * omega
cos_later = -s * sin_now + c * cos_now
print("max |rotated - table|:", max((sin_later - table[k:, 0::2]).abs().max().item(),
                                   (cos_later - table[k:, 1::2]).abs().max().item()))

# %% [markdown]
# A consequence: the dot product of two rows depends only on their **distance**,
# $PE[m] \cdot PE[n] = \sum_i \cos((m - n)\,\omega_i)$, largest (`D/2`) at distance 0 and smaller, with
# ripples, further away. Explore it below: move `position` and `dimension`. The left plot is one column
# of the table (one hand); the right one shows `PE[position] · PE[p]` against the distance `p - position`:
# moving `position` shifts the window, but the curve stays the same.

# %% [markdown] lang="zh"
# 由此可以推出：两行的点积只取决于它们之间的**距离**，$PE[m] \cdot PE[n] = \sum_i \cos((m - n)\,\omega_i)$：距离为 0 时最大（`D/2`），距离越远越小，还带着波纹。在下面动手试试：拖动 `position` 和 `dimension`。左图是表里的一列（一根指针）；右图画的是 `PE[position] · PE[p]` 随距离 `p - position` 的变化：移动 `position` 会让窗口平移，但曲线不变。

# %%
position_explorer(table)

# %% [markdown]
# ## 4. A module: `PositionalEncoding`
#
# In a model the table is added to the token embeddings `x` of shape `(B, T, D)`. The table never
# changes, so we compute it **once**, in `__init__`, for the longest sequence we'll ever see (`max_len`),
# and in `forward` take its first `T` rows.
#
# Where to keep it? A module can hold a tensor in four ways:
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

# %% [markdown] lang="zh"
# ## 4. 做成模块：`PositionalEncoding`
#
# 在模型里，这张表要加到形状为 `(B, T, D)` 的 token 嵌入 `x` 上。表本身不会变，所以我们在 `__init__` 里按可能遇到的最长序列（`max_len`）**只算一次**，然后在 `forward` 里取它的前 `T` 行。
#
# 表存在哪里？模块持有一个张量（tensor）有四种方式：
#
# | 写法 | 由优化器（optimizer）训练 | 在 `state_dict()` 里（会被保存） | 随 `.to()` / `.double()` 一起转换 |
# |---|---|---|---|
# | `self.w = nn.Parameter(t)` | 是 | 是 | 是 |
# | `self.register_buffer("b", t)` | 否 | 是 | 是 |
# | `self.register_buffer("b", t, persistent=False)` | 否 | 否 | 是 |
# | `self.t = t`（普通属性） | 否 | 否 | **否** |
#
# 固定的表没有什么要学的，所以它不是参数（parameter）；而普通属性在模型搬到 GPU 上或转成 float64 时会被落下，这是个经典 bug。所以它应该是**缓冲区**。这里用持久（persistent）缓冲区，这样保存下来的模型会带着自己的表（有些代码用 `persistent=False` 来省空间，因为表随时可以重新算出来；本课程选择把它保存下来）。

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

# %% [markdown] lang="zh"
# 缓冲区的形状是 `(1, max_len, D)`：最前面那个大小为 1 的轴会在批次上广播，所以 `x + pe[:, :T]` 会给每个序列加上同样的位置向量：`(B, T, D) + (1, T, D) -> (B, T, D)`。要切的是**第二个**轴：`pe[:T]` 切的是批次轴（大小为 1），`max_len` 行一行都没少。
#
# ### 练习：`PositionalEncoding(d_model, max_len)`
#
# - `__init__(self, d_model, max_len=512)`：构造 `(max_len, d_model)` 的表，作为名为 `pe` 的**缓冲区**存进模块，形状为 `(1, max_len, d_model)`。用你在练习 1 里写的 `sinusoidal_position_encoding(max_len, d_model)` 来构造：这个检查会拿 `pe` 和课程的表比较，所以要先让练习 1 的检查通过。
# - `forward(self, x)`：`x` 是 `(B, T, D)`，且 `T <= max_len`；把表的前 `T` 行加上去，返回 `(B, T, D)` 的结果。
#
# 检查会用它自己的尺寸构造你的模块，然后检查：`pe` 是缓冲区而不是参数；它在 `state_dict()` 里，并且会跟着 `.double()` 转换；它的形状和数值；以及 `T < max_len` 和 `T = max_len` 时的输出（`B != T`）。常见的错误它都能点出来：用了参数、用了普通属性、`persistent=False`、表没有切片、从教程里照抄来的 dropout、乘了 `sqrt(D)` 做缩放。
#
# **难度：** ★★☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 表只在 `__init__` 里算一次，从不学习，但它必须跟着模型移动、跟着模型保存：所以它是一个**缓冲区**（buffer），而且是持久的（上面那张表列出了模块持有张量（tensor）的几种方式）。给它在最前面加一个大小为 1 的批次（batch）轴，这样加到 `x` 上时就会在批次上广播（broadcasting）。`forward` 加上它的前 `T` 行。
# </details>
#
# <details><summary>提示 2：各部分写在哪里</summary>
#
# - `__init__`：先调用 `nn.Module` 的 `__init__`（通过 `super()`），再用你的 `sinusoidal_position_encoding` 构造 `(max_len, d_model)` 的表。大小为 1 的批次（batch）轴只差一次索引：用 `None` 做索引会在最前面加一个大小为 1 的轴，得到 `(1, max_len, D)`。用 `self.register_buffer` 把结果注册为 `"pe"`，保持默认的 `persistent=True`。
# - `forward`：`T` 是 `x.size(1)`。前 `T` 行要在 `pe` 的**第二个**轴上切：它的第一个轴就是那个批次轴。`(B, T, D) + (1, T, D)` 会广播（broadcasting）成 `(B, T, D)`。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# 在 `__init__` 里，`super().__init__()` 之后：
# `self.register_buffer("pe", sinusoidal_position_encoding(max_len, d_model)[None])  # (1, max_len, D)`。在 `forward` 里：`return x + self.pe[:, :x.size(1)]  # (B, T, D) + (1, T, D)`
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


# %% lang="zh"
class PositionalEncoding(nn.Module):
    """把正弦位置表加到 token 嵌入上。

    构造参数：
        d_model: 一个 token 向量的宽度 D（偶数）。
        max_len: 支持的最长序列。

    属性：
        pe: 存放这张表的缓冲区（buffer），形状 (1, max_len, d_model)；会持久保存（在 state_dict() 里），但不是
        参数。

    forward(x)：x 为 (B, T, D)，T <= max_len -> x + pe[:, :T]，形状 (B, T, D)。
    """

    def __init__(self, d_model: int, max_len: int = 512):
        ### BEGIN SOLUTION
        super().__init__()
        table = sinusoidal_position_encoding(max_len, d_model)  # (max_len, D)，练习 1
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

# %% [markdown] lang="zh"
# **如果检查没通过：** 如果 `T < max_len` 时报错而 `T = max_len` 时不报错，说明表没有切到 `T`（或者切在了批次轴上）；看到“pe 不在 state_dict() 里”，说明你用了 `persistent=False`。
#
# ## 5. 再看一次顺序演示，这回带上位置
#
# 嵌入和注意力层都和第 1 节一样，只是先加上你的 `PositionalEncoding`：

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

# %% [markdown] lang="zh"
# 现在，位置 0 的“猫”和位置 2 的“猫”是两个不同的向量，即使把排列还原回去，两句话的输出也不一样了。模型现在可以学到：“追”前面的那个 token 才是追的一方。
#
# ## 6. 可学习的位置
#
# GPT-2（Radford 等人，2019）不用公式，而是给每个位置一个专属的可训练向量：一个 `nn.Embedding(max_len, D)`，在位置 `0, 1, ..., T-1` 处查表；这些向量应该是什么样，交给训练去找。
#
# | | 正弦（固定） | 可学习 |
# |---|---|---|
# | 参数 | 0（一个缓冲区） | `max_len × D` |
# | 超出 `max_len` 的位置 | 公式对任意 `pos` 都有定义（模型能不能应付是另一回事） | 没有：表里根本没有这些行 |
# | 位置偏移 | 按构造就是每一对的旋转 | 训练学到什么就是什么 |
# | 很少出现的位置 | 和其他位置一样好 | 靠近 `max_len` 的行只有长序列才训练得到 |
#
# 实际上，在训练时见过的长度之内，两种做法效果差不多（Vaswani 等人得到的是“几乎相同的结果”，见 §3.5 和表 3 的 E 行）；差别全在这些长度之外。
#
# ### 练习：`LearnedPositionalEmbedding(d_model, max_len)`
#
# - `__init__(self, d_model, max_len=512)`：每个位置一个可学习的向量，含 `d_model` 个数，都放在名为 `emb` 的 `nn.Embedding` 里：共 `max_len * d_model` 个参数。
# - `forward(self, x)`：`x` 是 `(B, T, D)`；把位置 `0 .. T-1` 的向量加上去，返回 `(B, T, D)` 的结果。（嵌入表是用位置来索引的，不是用 `x`。）
#
# 参数的顺序和 `PositionalEncoding` 一样。检查会数参数个数，往 `emb.weight` 里拷入随机值，在 `T < max_len` 和 `T = max_len` 时把你的输出和参考实现比较，还会检查长度为 `T` 的序列是否恰好只把梯度（gradient）传给前 `T` 行。
#
# **难度：** ★☆☆ · **用时：** 约 5 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 位置 `0 .. T-1` 的向量就是嵌入（embedding）表的第 `0 .. T-1` 行，而 `nn.Embedding` 接收整数索引，返回对应的行。所以要查的是位置本身（不是 `x`），得到一个 `(T, D)` 的张量（tensor），再加到 `x` 上：广播（broadcasting）会把同一行 `t` 加到批次（batch）里每个序列的位置 `t` 上。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# - `__init__`：先调用 `nn.Module` 的 `__init__`（通过 `super()`），再建一个 `max_len` 行、每行 `d_model` 个数的 `nn.Embedding`，存为 `self.emb`。
# - `forward`：`T` 是 `x.size(1)`。索引就是对 `T` 调用 `torch.arange`，要建在 `x` 所在的设备上（`device=x.device`，这样在 GPU 上也能用）；把它传给 `self.emb`，得到 `(T, D)`，也就是位置 `0 .. T-1` 的向量。返回 `x` 加上它：`(B, T, D) + (T, D)`。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `self.emb(torch.arange(T))` 是 `(T, D)`。`forward` 的关键一行：
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


# %% lang="zh"
class LearnedPositionalEmbedding(nn.Module):
    """可学习的绝对位置（GPT-2）：x + emb(arange(T))。

    构造参数：
        d_model: 一个 token 向量的宽度 D。
        max_len: 位置的个数。

    属性：
        emb: nn.Embedding(max_len, d_model)，共 max_len * d_model 个参数。

    forward(x)：x 为 (B, T, D)，T <= max_len -> (B, T, D)。
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

# %% [markdown] lang="zh"
# 对比一下参数量，取 `max_len = 512`、`D = 64`：

# %%
for module in (PositionalEncoding(64, 512), LearnedPositionalEmbedding(64, 512)):  # yours
    n_params = sum(p.numel() for p in module.parameters())
    n_buffer = sum(b.numel() for b in module.buffers())
    print(f"{type(module).__name__:27} {n_params:6} parameters, {n_buffer:6} buffer values")

# %% lang="zh"
for module in (PositionalEncoding(64, 512), LearnedPositionalEmbedding(64, 512)):  # 你写的两个类
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

# %% [markdown] lang="zh"
# ## 7. 附加：旋转位置编码（RoPE）
#
# 第 3 节讲过：在正弦表里，移动 `k` 个位置就是把每一对旋转一下。RoPE（Su 等人，2021，RoFormer）干脆把整个机制都建立在这一点上：不往 `x` 上加任何东西，而是在注意力内部，按位置把每个查询和每个键**旋转**一下。位置 `m` 上的向量，它的第 `(2i, 2i+1)` 对转过角度 $m\,\theta_i$，频率沿用正弦表的 $\theta_i = 10000^{-2i/d_k}$：
#
# $$\text{out}_{2i} = x_{2i} \cos m\theta_i - x_{2i+1} \sin m\theta_i, \qquad
# \text{out}_{2i+1} = x_{2i} \sin m\theta_i + x_{2i+1} \cos m\theta_i$$
#
# 旋转不改变长度；把 `q` 转 $m\theta$、把 `k` 转 $n\theta$ 之后，它们的点积只取决于两者之差 $(m - n)\theta$。所以注意力分数直接看到的就是**相对**位置，而且从头到尾都不用往 token 上加位置向量。LLaMA、Mistral、Qwen 以及大多数新模型都用 RoPE。（很多实现，包括 GPT-NeoX 和 Hugging Face 的 LLaMA，是把特征 `i` 和 `i + d_k/2` 配成一对，也就是所谓的前后两半配对（rotate half）排法：思路一样，只是特征的顺序不同。本课程按 RoFormer 论文的写法，把 `2i` 和 `2i+1` 配对。）
#
# **注意第 3 节的那个矩阵。** 那里的一对写成 (sin, cos)，也就是 (y, x)，所以那个矩阵看上去像是往反方向转。如果一对写成 $(x_{2i}, x_{2i+1})$，转过角度 $\alpha$ 就是 $\begin{pmatrix} \cos\alpha & -\sin\alpha \\ \sin\alpha & \cos\alpha \end{pmatrix}$：正好是上面那两行公式。
#
# ### 附加练习：`apply_rope(x, positions=None)`
#
# `x` 的形状是 `(..., T, d_k)`（查询或键，例如 `(B, H, T, d_k)`），`d_k` 为偶数；`positions` 是可选的 `(T,)` 整数位置张量，为 None 时取 `torch.arange(T)`。返回旋转后的 `x`，形状和 dtype 都不变。轴要从后往前数，这样 `(B, T, d_k)` 也能用。
#
# 检查会验证：位置 0 保持不变，长度保持不变，分数只取决于 `m - n`；然后在 4 维和 3 维输入上，带和不带 `positions` 两种情况，都和参考实现比较。它能认出前后两半配对（rotate half）的排法、转反了方向和频率不对这几种错误。这道题不计分。
#
# **难度：** ★★★ · **用时：** 约 20 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 每一对特征 `(2i, 2i+1)` 都是平面上的一个点，公式把它转过一个角度：位置乘以这一对的频率。所以你需要：每个位置、每一对各一个角度，也就是一张 `(T, d_k/2)` 的表；把 `x` 的偶数特征和奇数特征分开取出来；用广播（broadcasting）把公式的两行一次作用到所有对上；最后把两个结果交错放回偶数列和奇数列。
# </details>
#
# <details><summary>提示 2：各部分写在哪里</summary>
#
# - 从后往前取尺寸：`T` 是 `x.shape[-2]`，`d_k` 是 `x.shape[-1]`；`positions` 为 `None` 时，用 `torch.arange(T)`。
# - 频率：从 0 到 `d_k`、步长为 2 的 `torch.arange` 给出 `2i`，是一个 `(d_k/2,)` 的张量（tensor）；$\theta_i = 10000^{-2i/d_k}$。让它用 `x` 的 dtype（并放在 `x` 所在的设备上）。
# - 角度：把位置转成 `x` 的 dtype，变成一列 `(T, 1)`，乘以频率 `(d_k/2,)`，得到 `(T, d_k/2)`。它们的 `torch.cos` 和 `torch.sin` 各是 `(T, d_k/2)`。
# - 配对：偶数特征是最后一维上从 0 开始、步长为 2 的切片，奇数特征从 1 开始；两者都是 `(..., T, d_k/2)`，能和 cos、sin 广播（broadcasting）。
# - 拼回去：用 `torch.stack` 沿一个新的最后一维把偶数结果和奇数结果叠起来，得到 `(..., T, d_k/2, 2)`，再把最后两维 `flatten`：`(..., T, d_k)`，偶数结果正好落在偶数列上。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# - `positions is None` 时，`positions = torch.arange(T, device=x.device)`
# - `theta = 10000.0 ** (-torch.arange(0, d_k, 2, dtype=x.dtype, device=x.device) / d_k)`，`(d_k/2,)`
# - `angles = positions.to(x.dtype)[:, None] * theta`，`(T, d_k/2)`
# - `cos, sin = torch.cos(angles), torch.sin(angles)`，各为 `(T, d_k/2)`
# - `x_even, x_odd = x[..., 0::2], x[..., 1::2]`，各为 `(..., T, d_k/2)`
# - `out_even = x_even * cos - x_odd * sin`，`out_odd = x_even * sin + x_odd * cos`
# - `return torch.stack((out_even, out_odd), dim=-1).flatten(-2)`，`(..., T, d_k)`
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


# %% lang="zh"
def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
    """把 x 中每一对交错排列的分量 (2i, 2i+1) 旋转 position * theta_i 的角度（RoFormer，式 34）。

    参数：
        x: (..., T, d_k) 的浮点张量，d_k 为偶数。
        positions: 可选，形状为 (T,) 的整数位置；为 None 时用 torch.arange(T)。

    返回：
        和 x 形状、dtype 都相同的张量。
    """
    ### BEGIN SOLUTION
    T, d_k = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T, device=x.device)
    theta = 10000.0 ** (-torch.arange(0, d_k, 2, dtype=x.dtype, device=x.device) / d_k)  # (d_k/2,)
    angles = positions.to(x.dtype)[:, None] * theta  # (T, d_k/2)
    cos, sin = torch.cos(angles), torch.sin(angles)  # 形状都是 (T, d_k/2)
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # 形状都是 (..., T, d_k/2)
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

# %% [markdown] lang="zh"
# 直接看相对位置：把同一个查询向量和同一个键向量放在位置 `(m, n)` 上，再把两者一起往后挪 100 个位置。用你的 `apply_rope`（等它的检查通过后）来算，分数只取决于 `m - n`：

# %%
q, k = torch.randn(16), torch.randn(16)  # one query and one key, d_k = 16
for m, n in [(3, 1), (103, 101), (10, 0), (110, 100)]:
    q_m = apply_rope(q[None], torch.tensor([m]))[0]  # (d_k,)
    k_n = apply_rope(k[None], torch.tensor([n]))[0]  # (d_k,)
    print(f"m = {m:3}, n = {n:3}, m - n = {m - n:2}:  score = {(q_m @ k_n).item():+.5f}   "
          f"|q| = {q.norm():.4f}, |rope(q)| = {q_m.norm():.4f}")

# %% lang="zh"
q, k = torch.randn(16), torch.randn(16)  # 一个查询和一个键，d_k = 16
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

# %% [markdown] lang="zh"
# ## 小结
#
# - 自注意力是置换等变的：没有位置信息时，“猫 追 狗”和“狗 追 猫”得到的是同样的输出，只是顺序换了。位置信息要加到 token 嵌入上（用 RoPE 时则改为旋转 `q` 和 `k`）。
# - 正弦表：`(max_len, D)`，`PE[pos, 2i] = sin(pos ω_i)`，`PE[pos, 2i+1] = cos(pos ω_i)`，`ω_i = 10000^(-2i/D)` 从 1 等比递减到约 1/10000；第 0 行是 `[0, 1, 0, 1, ...]`。移动 `k` 个位置，就是把每一对转过 `k ω_i`；`PE[m] · PE[n]` 只取决于 `m - n`。
# - `PositionalEncoding(d_model, max_len)`：**0 个参数**，一个持久缓冲区 `pe`，形状为 `(1, max_len, D)`；`forward(x (B, T, D)) = x + pe[:, :T]`。
# - `LearnedPositionalEmbedding(d_model, max_len)`：`nn.Embedding(max_len, D)`，**`max_len × D` 个参数**（512 × 64 时是 32,768 个）；超出 `max_len` 的位置没有向量可用。
# - RoPE：0 个参数；把 `q` 和 `k`（`(B, H, T, d_k)`）的每一对 `(2i, 2i+1)` 转过 `m θ_i`，长度不变，分数只取决于 `m - n`。
#
# **下一步：** 笔记本 05 加上前馈网络（feed-forward network，FFN），也就是 Transformer 块的另一半。
