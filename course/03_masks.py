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

# %% [markdown] lang="zh"
# # 03 · 掩码：填充、合并，以及什么都看不到的查询
#
# 语言模型（language model）是按**批次**（batch）训练的，而句子有长有短。要把它们叠成一个 `(B, T)` 的张量（tensor），就得把短句子补齐（填充，padding）。补齐之后要守住两条规矩：在注意力（attention）里，任何 token 都不能关注填充位置；在解码器里，任何 token 都不能看到未来。学完这本笔记本，你将能够：
#
# 1. 为一个批次构造**键填充掩码**（key-padding mask），右填充和左填充都要支持：`key_padding_mask`；
# 2. 把它和因果掩码（causal mask）**合并**：`combine_masks`；
# 3. 写出**带掩码的 softmax**：被遮住的键（key）权重严格为零；不管分数是多少，哪怕某个查询（query）一个键都不能关注，也绝不返回 `NaN`：`masked_softmax`。
#
# 约定和笔记本 01、02 一样：掩码（mask）是 `bool` 类型，**True = 可以关注**；它们要能和多头注意力（multi-head attention）的分数广播（broadcasting），分数的形状（shape）是 `(B, H, T_q, T_k)`。

# %%
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_combine_masks, check_key_padding_mask, check_masked_softmax, plot_attention
from tinylm_solutions.attention import causal_mask  # notebook 01's mask, the course's version
from tinylm_solutions.multihead import MultiHeadSelfAttention  # notebook 02's layer, the course's version

_ = torch.manual_seed(0)

# %% lang="zh"
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_combine_masks, check_key_padding_mask, check_masked_softmax, plot_attention
from tinylm_solutions.attention import causal_mask  # 笔记本 01 的掩码，课程自带的版本
from tinylm_solutions.multihead import MultiHeadSelfAttention  # 笔记本 02 的层，课程自带的版本

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

# %% [markdown] lang="zh"
# **关于导入。** `MultiHeadSelfAttention` 和 `causal_mask` 是课程提供的参考版本，对应你在笔记本 01 和 02 里写的代码（名字相同，行为相同），这样这本笔记本可以独立运行。本笔记本自己的练习（exercise）就没有这种替身了：练习后面的演示用的都是你写的版本，所以每个练习都要先做完，再运行它下面的单元格。
#
# ## 1. 给批次做填充
#
# 这里有三句由 token id 组成的“句子”，长度分别是 4、6 和 2。为了把它们叠在一起，我们在每句后面补上填充 id（这里是 0），直到每句都有 `T = 6` 个 token。这叫**右填充**（right padding）：真实 token 在前，填充在后。

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

# %% [markdown] lang="zh"
# **左填充**（left padding）把填充放在前面。批量*生成*时用的就是它：这样每个序列都在同一列结束，每一行的下一个 token 都接在位置 `T` 上（Hugging Face 的分词器（tokenizer）把它叫作 `padding_side="left"`）。
#
# 填充不是文本。真实 token 不能关注填充 token，否则它的输出就会取决于同一批次里*别的*句子有多长。所以我们要遮住填充位置的**键**。
#
# ## 2. 掩码放在哪个轴上
#
# 多头分数的形状是 `(B, H, T_q, T_k)`：批次、头（head）、查询、键。填充掩码（padding mask）告诉我们，每个序列 `b` 里哪些**键**是真实 token。同一个序列里，它对每个头、每个查询都一样，所以在这两个轴上的大小是 1：`(B, 1, 1, T_k)`。广播会把它复制到所有头和所有查询上：

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

# %% [markdown] lang="zh"
# 广播是**从右往左**对齐形状的。`(B, T)` 的掩码会被看成 `(1, 1, B, T)`：它的批次轴落到了*查询*轴上。在 `B = 3`、`T = 6` 时这会直接报错，算你运气好；要是哪个批次恰好 `B == T`，代码照样能跑，却会悄悄把序列 `i` 的填充情况套到每个序列的第 `i` 个查询上。`(B, 1, T)` 的掩码则把批次轴落到了*头*轴上（`(1, B, 1, T)`）：对单头分数 `(B, T, T)` 没问题，换成多头就会报错，或者在 `B == H` 时悄悄算错。只有 `(B, 1, 1, T)` 不管 `B`、`H`、`T` 取什么值都正确。
#
# 还有，填充掩码要放在**最后一个**轴上，也就是键轴。`(B, 1, T, 1)` 遮住的是整*行*（查询），而不是整列（键）：填充位置照样会被关注。
#
# ### 练习 1：`key_padding_mask(lengths, T, padding_side="right")`
#
# 返回一个形状为 `(B, 1, 1, T)` 的 bool 张量：键是真实 token 的地方为 `True`。序列 `b` 有 `lengths[b]` 个真实 token：`padding_side="right"` 时是开头那几个，`padding_side="left"` 时是末尾那几个。`lengths` 是形状为 `(B,)` 的整数张量；长度可以是 0。
#
# 检查（check）会在 `T = 7` 时用 `lengths = [4, 6, 1]` 把左右两种填充都试一遍，再试一个长度为 0 的序列；然后把你的掩码用到多头注意力里：填充位置的键权重必须严格为 0，而且改动填充位置上的内容，真实位置上的输出必须纹丝不动。
#
# **难度：** ★★☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 一个键如果位于本序列的前 `lengths[b]` 个位置（右填充），或后 `lengths[b]` 个位置（左填充），它就是真实 token。把每个位置和每个长度一次性比较：只要一次比较，靠广播（broadcasting）就能得到一张 `(B, T)` 的 bool 表，真实 token 处为 True。然后按上面讲过的形状（shape）`(B, 1, 1, T)`，给它补上头（head）轴和查询（query）轴。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# `torch.arange(T)` 的形状（shape）是 `(T,)`，`lengths` 的形状是 `(B,)`；把它们变成 `(1, T)` 和 `(B, 1)`（用 `None` 做索引），一次比较就能广播（broadcasting）成 `(B, T)` 的 bool 表。右填充：位置小于长度就是真实 token。左填充：真实 token 是最后 `lengths[b]` 个，也就是位置 `>= T - lengths[b]` 的那些。（长度为 0 时，两种情况都自然得到一整行 False，不用特殊处理。）最后补上头（head）轴和查询（query）轴：在第 1 维和第 2 维用 `None` 索引这张表。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# 设 `positions = torch.arange(T)`。右填充：`positions[None, :] < lengths[:, None]`；左填充：`positions[None, :] >= T - lengths[:, None]`。然后取 `real[:, None, None, :]`。
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


# %% lang="zh"
def key_padding_mask(lengths: torch.Tensor, T: int, padding_side: str = "right") -> torch.Tensor:
    """填充过的批次中真实（非填充）键的掩码。

    参数：
        lengths: 形状为 (B,) 的整数张量：每个序列真实 token 的个数，0 <= lengths[b] <= T。
        T: 填充后的长度。
        padding_side: "right"（真实 token 在前）或 "left"（真实 token 在后）。

    返回：
        形状为 (B, 1, 1, T) 的 bool 张量：键是真实 token 的位置为 True（可以被关注）。
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

# %% [markdown] lang="zh"
# **如果检查没通过**，先看形状：报错信息会指出掩码放在了查询轴上，或者用的是 `(B, T)`、`(B, 1, T)` 的掩码。再看数值：“期望”和“实际”这两行会把一个序列显示成 1（真实）和 0（填充）。
#
# 以后用到 PyTorch 的 `nn.MultiheadAttention` 时要当心：它的 `key_padding_mask` 参数用的是**相反**的约定，True = 填充（忽略）。传给它的应该是 `~mask[:, 0, 0]`。
#
# ## 3. 填充加上未来：合并掩码
#
# 解码器处理填充过的批次时，两条规则要同时满足：只有 `j <= t`（因果），**并且**键 `j` 是真实 token 时，查询 `t` 才能关注键 `j`。两个掩码都是 True 表示允许关注，所以我们要的是它们的逻辑**与**，也就是 `&`。剩下的交给广播：`(B, 1, 1, T) & (T, T)` 得到 `(B, 1, T, T)`，每个序列一张 `(T, T)` 的掩码，所有头共用。
#
# 下面是第三句（长度 2）左填充后的三张掩码，用的是你的 `key_padding_mask`（1 = 可以关注；行是查询，列是键）：

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

# %% lang="zh"
pad_left = key_padding_mask(lengths, T, "left")  # (B, 1, 1, T)
both = pad_left & causal_mask(T)  # (B, 1, T, T)
print("shapes:", tuple(pad_left.shape), "&", tuple(causal_mask(T).shape), "->", tuple(both.shape))
b = 2  # 长度为 2 的那句话：先是四个填充 token，然后是两个真实 token
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

# %% [markdown] lang="zh"
# 看右边那张图最上面几行：查询 0 到 3 都是填充；按因果规则，查询 `t` 只能看键 `0..t`，而这些也全是填充。**这几行全是 False**：这些查询一个键都不能关注。注意力遇到这样的行会怎么样，就是第 4 节要讲的内容。
#
# ### 练习 2：`combine_masks(*masks)`
#
# 返回任意多个 bool 掩码的逻辑与，这些掩码之间可以互相广播。参数可以是 `None`（表示“没有掩码”）：跳过它。如果所有参数都是 `None`，就返回 `None`。不要修改传进来的掩码。
#
# 检查会把一个填充掩码和一个因果掩码合并，中间混进几个 `None`，还会一次传入三个掩码；然后用你合并出的掩码运行参考版的多头注意力（改动位置 `t` 之后的 token，`t` 及之前的输出必须不受影响）。
#
# **难度：** ★☆☆ · **用时：** 约 5 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 两个掩码（mask）用逻辑与 `&` 合并：只有每个掩码都允许的地方，查询（query）才能关注键（key）；合并后的形状（shape）由广播（broadcasting）决定。掩码个数不定时，就一个一个地并进来：`*masks` 会把所有参数收进一个元组；从“还没有掩码”开始，遇到 `None` 就跳过。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 用一个累积结果，比如叫 `out`，初始为 `None`；循环遍历 `masks`，跳过每个 `None`。遇到第一个真正的掩码（mask）时，结果就是它；之后每遇到一个，结果就变成“结果与这个掩码”，而且要生成一个**新**张量（tensor）：用运算符 `&`，不要用原地运算 `&=`。原地写法会改写调用者传进来的掩码（这时结果*就是*你遇到的第一个掩码），而且当合并后的形状（shape）比 `out` 大时会报错。最后返回结果：如果所有参数都是 `None`，它仍然是 `None`。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# 先 `out = None`，然后对每个不是 `None` 的 `m`：`out = m if out is None else out & m`；最后 `return out`。
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


# %% lang="zh"
def combine_masks(*masks):
    """若干 bool 掩码的逻辑与（True 表示可以关注）；为 None 的参数跳过。

    参数：
        *masks: 能互相广播的 bool 张量（例如 (B, 1, 1, T) 和 (T, T)），或 None。

    返回：
        一个新的 bool 张量，形状为广播后的形状（例如 (B, 1, T, T)）；所有掩码都是 None 时返回 None。
    """
    ### BEGIN SOLUTION
    out = None
    for m in masks:
        if m is None:
            continue
        out = m if out is None else out & m  # 一个新张量：输入保持原样
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

# %% [markdown] lang="zh"
# ## 4. 没有键可关注的查询
#
# 加掩码，就是在 softmax 之前把被禁止的键的分数设成 $-\infty$。如果某一行里**每个**键都被禁止，这一行就全是 $-\infty$，它的 softmax 就成了 $0/0$：

# %%
row = torch.full((4,), float("-inf"))
print("softmax of a row of -inf:", torch.softmax(row, dim=-1))

# %% [markdown]
# Such rows are not exotic: you just saw them, the padded queries of a left-padded batch under a causal
# mask. Their outputs are thrown away later (the loss ignores padding), so why care? Because a `NaN`
# does not stay where it is. In the **next** layer, the padded position is a key with a `NaN` value,
# and a weight of exactly 0 does not save you: $0 \times \mathrm{NaN} = \mathrm{NaN}$.

# %% [markdown] lang="zh"
# 这种行一点也不稀奇，你刚刚就见过：左填充的批次再加上因果掩码，填充位置的查询就是这样。它们的输出后面反正会被丢掉（损失会忽略填充），那为什么还要在意？因为 `NaN` 不会老老实实待在原地。到了**下一**层，这个填充位置就成了一个值（value）为 `NaN` 的键，而权重恰好是 0 也救不了你：$0 \times \mathrm{NaN} = \mathrm{NaN}$。

# %%
weights = torch.tensor([[0.7, 0.3, 0.0]])  # (1, 3): key 2 is masked, weight exactly 0
values = torch.tensor([[1.0], [2.0], [float("nan")]])  # (3, 1): key 2 came out NaN from the layer below
print("weights @ values =", (weights @ values).item())

# %% lang="zh"
weights = torch.tensor([[0.7, 0.3, 0.0]])  # (1, 3)：第 2 个键被遮住，权重恰好为 0
values = torch.tensor([[1.0], [2.0], [float("nan")]])  # (3, 1)：第 2 个键从下面一层出来时就是 NaN
print("weights @ values =", (weights @ values).item())

# %% [markdown]
# One `NaN` in a padded position of layer 1 turns every real token of that sequence into `NaN` in layer
# 2, and the loss with it. So a query with no allowed key must get **all-zero weights** (and so a zero
# output), not `NaN`. That is what PyTorch's own `F.scaled_dot_product_attention` has done since version
# 2.5, and what the course's attention does. (PyTorch's older module `nn.MultiheadAttention` still
# returns `NaN` there.)

# %% [markdown] lang="zh"
# 第 1 层某个填充位置上出一个 `NaN`，到第 2 层就会把这个序列的每个真实 token 都变成 `NaN`，损失也跟着变成 `NaN`。所以，没有任何可关注键的查询必须得到**全零权重**（输出也就是零），而不是 `NaN`。PyTorch 自己的 `F.scaled_dot_product_attention` 从 2.5 版起就是这么做的，本课程的注意力也一样。（PyTorch 较早的模块 `nn.MultiheadAttention` 在这种情况下仍然返回 `NaN`。）

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

# %% [markdown] lang="zh"
# ### 为什么用 $-\infty$，而不用一个很大的负数
#
# 很多代码库往被遮住的分数里填一个有限的数：`-1e9` 或 `-1e4`（用后者是因为 `-1e9` 超出了 float16 的范围）。这两种做法都会在某些情况下出错：
#
# - 填 **`-1e9`** 时，所有键都被遮住的那一行就是一排相等的数：它的 softmax 是**均匀分布**，于是填充位置的查询会平均地关注每一个键，连未来的 token 也不放过，而不是一个都不关注；
# - 填 **`-1e4`** 时，一旦真实分数的量级很大（比如都在 `-1e5` 附近，模型发散时就会出现），被遮住的键反而分数**最高**，把权重全部抢走。

# %%
scores = torch.tensor([-2e5, -1e5, -3e5])  # (3,): three keys with large (negative) scores
mask = torch.tensor([True, True, False])  # key 2 is masked
for fill in (-1e4, -1e9, float("-inf")):
    w = torch.softmax(scores.masked_fill(~mask, fill), dim=-1)
    print(f"fill {fill:>6g}: weights {[round(x, 4) for x in w.tolist()]}")
no_key = torch.zeros(3, dtype=torch.bool)
print("fill  -1e9, no key allowed:", [round(x, 4) for x in torch.softmax(scores.masked_fill(~no_key, -1e9), dim=-1).tolist()])

# %% lang="zh"
scores = torch.tensor([-2e5, -1e5, -3e5])  # (3,)：三个键，分数都很大（负数）
mask = torch.tensor([True, True, False])  # 第 2 个键被遮住
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

# %% [markdown] lang="zh"
# 所以本课程的规则是：被遮住的分数填 $-\infty$，这样任何分数都压不过它；然后把没有可关注键的那些行产生的 `NaN` 改成零。
#
# ### 练习 3：`masked_softmax(scores, mask=None)`
#
# 返回 `scores` 在键上（最后一个轴）的 softmax：`mask` 为 False 的键，权重**严格**为 0；所有键都被遮住的查询，得到**全零**权重。`mask=None` 时就是普通的 softmax。`scores` 的形状是 `(..., T_q, T_k)`；`mask` 能广播到这个形状。不要原地修改 `scores`。
#
# 检查会试一个随机掩码、不加掩码、一个左填充的因果掩码（其中有一个序列全是填充），还有 $-10^7$ 左右的分数：在这个量级下，任何有限的填充值都压不住。
#
# **难度：** ★★☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 分三步：把被遮住的分数填成 $-\infty$，在键（key）上做 softmax，再清理结果为 `NaN` 的行（键全被遮住的行全是 $-\infty$，它的 softmax 是 0/0）。前两步你在笔记本 01 的第 3 节已经做过。没有掩码（mask）时，既不用填，也不用清理。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 先处理 `mask is None` 的情况：在最后一维上做普通的 softmax。否则，`masked_fill` 会在条件为 True 的地方写入给定的值，而你的掩码（mask）在键（key）*允许*关注的地方才是 True：所以条件是 `~mask`，值是 `float("-inf")`。不带下划线的 `masked_fill` 返回一个新张量（tensor），`scores` 不会被原地修改。接着在 `dim=-1`（键）上调用 `torch.softmax`，最后调用 `.nan_to_num`，传入 0.0，把 `NaN` 的行变成零。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# 先写 `if mask is None: return torch.softmax(scores, dim=-1)`。然后依次是 `scores.masked_fill(~mask, float("-inf"))`、`torch.softmax(..., dim=-1)`、`.nan_to_num(0.0)`。
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


# %% lang="zh"
def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """对键做 softmax，被遮住的键权重恰好为 0。

    参数：
        scores: 浮点张量 (..., T_q, T_k)。
        mask: 可选的 bool 张量，能广播到 scores 的形状；True 表示可以关注。

    返回：
        和 scores 形状相同的权重：每一行在允许关注的键上求和为 1；
        没有任何键可以关注时整行为 0（绝不会是 NaN）。
    """
    ### BEGIN SOLUTION
    if mask is None:
        return torch.softmax(scores, dim=-1)  # (..., T_q, T_k)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # (..., T_q, T_k)
    return weights.nan_to_num(0.0)  # 所有键都被遮住的行：0/0 -> 0
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
# The left-padded batch, through the course's multi-head attention layer with the combined mask that
# section 3 built from your `key_padding_mask` (so this runs once that exercise does). Every output is
# finite; the padded queries get zero weights; and changing what sits at the padded positions changes
# nothing at the real tokens.

# %% [markdown] lang="zh"
# ## 5. 合在一起
#
# 把左填充的批次送进课程自带的多头注意力层，用上第 3 节用你的 `key_padding_mask` 合并出来的掩码（所以要等那个练习能运行了，这里才能运行）。所有输出都是有限值；填充位置的查询权重为零；改动填充位置上的内容，真实 token 上的输出一点不变。

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

# %% lang="zh"
D = 8
embedding = nn.Embedding(10, D)
mha = MultiHeadSelfAttention(D, H)
x = embedding(left).detach()  # (B, T, D)
with torch.no_grad():
    out, w = mha(x, both)  # (B, T, D), (B, H, T, T)
    x_other_padding = x.clone()
    x_other_padding[~pad_left[:, 0, 0]] = torch.randn(int((~pad_left).sum()), D)  # 填充 token 所在的位置得到了新的向量
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
# - Masks have no parameters: there is nothing in them to learn, and they are the only thing that keeps a
#   language model from reading the answer.
#
# **Next:** notebook 04 gives attention what it still lacks: the order of the tokens.

# %% [markdown] lang="zh"
# ## 小结
#
# | 是什么 | 形状 | True 表示 |
# |---|---|---|
# | 分数、权重（多头） | `(B, H, T_q, T_k)` | |
# | 因果掩码 | `(T, T)` | 键 `j <= t` |
# | 键填充掩码 | `(B, 1, 1, T)` | 键是真实 token |
# | 合并后（`&`） | `(B, 1, T, T)` | 两者都满足 |
#
# - 掩码作用在**键**上（最后一个轴），并且从右边和分数对齐：要用 `(B, 1, 1, T)`，而不是 `(B, T)` 或 `(B, 1, T)`。
# - 掩码用 `&` 合并：只有每个掩码都允许，这个键才能被关注。
# - 被遮住的分数填 $-\infty$（任何分数都压不过它），在键上做 softmax；没有可关注键的查询给全零权重，而不是 `NaN`。
# - 掩码没有参数（parameter），里面没有任何要学的东西；可要拦住语言模型、不让它偷看答案，靠的只有掩码。
#
# **下一步：** 笔记本 04 给注意力补上它还缺的东西：token 的顺序。
