# %% [markdown]
# # 07 · The Transformer block
#
# You have built every part of a Transformer layer: multi-head attention (02), masks (03), the
# feed-forward network (05), LayerNorm and the residual connection (06). A **block** puts them together,
# and a language model is little more than a stack of identical blocks. By the end of this notebook you
# will be able to:
#
# 1. write `TransformerBlock(d_model, num_heads, d_ff, norm_first=True)`, wired either way: **Pre-LN**
#    (GPT-2 and most models since) or **Post-LN** (the original Transformer);
# 2. say why today's models put the LayerNorm first (Xiong et al., 2020);
# 3. show that your block computes exactly what PyTorch's `nn.TransformerEncoderLayer` computes;
# 4. count a block's parameters, part by part, and use the rule of thumb **"about 12 D² per layer"**;
# 5. write attention the way production code does (one fused `qkv` layer, one fused attention call, dropout)
#    and avoid its trap: a function does not know whether the model is training.

# %% [markdown] lang="zh"
# # 07 · Transformer 块
#
# Transformer 层的每个部件你都已经做过了：笔记本 02 的多头注意力（multi-head attention）、笔记本 03 的掩码（mask）、笔记本 05 的前馈网络（feed-forward network，FFN）、笔记本 06 的层归一化（LayerNorm）和残差连接（residual connection）。**块**（Transformer block）把它们组装到一起，而语言模型（language model）基本上就是一摞完全相同的块。学完这一课，你应该能：
#
# 1. 写出 `TransformerBlock(d_model, num_heads, d_ff, norm_first=True)`，两种接法都支持：GPT-2
#    及之后大多数模型用的**前置层归一化（Pre-LN）**，以及原始 Transformer 用的**后置层归一化（Post-LN）**；
# 2. 说清楚为什么如今的模型都把层归一化放在前面（Xiong 等人，2020）；
# 3. 证明你的块和 PyTorch 的 `nn.TransformerEncoderLayer` 算出的结果完全一样；
# 4. 逐个部件数出一个块的参数（parameter），并会用经验法则 **“每层约 12 D²”**；
# 5. 按生产代码的方式写注意力（attention）：一个融合的 `qkv`
#    层、一次融合的注意力调用、dropout；并避开其中的陷阱：函数并不知道模型是不是在训练。

# %%
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_block_parameter_counts, check_causal_self_attention, check_transformer_block
from tinylm_checks import plot_depth_profile, plot_parameter_ratio
from tinylm_solutions.attention import causal_mask  # the course's versions (see below)
from tinylm_solutions.ffn import FeedForward
from tinylm_solutions.multihead import MultiHeadSelfAttention
from tinylm_solutions.norm import LayerNorm

_ = torch.manual_seed(0)

# %% lang="zh"
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_block_parameter_counts, check_causal_self_attention, check_transformer_block
from tinylm_checks import plot_depth_profile, plot_parameter_ratio
from tinylm_solutions.attention import causal_mask  # 课程自带的版本（见下文）
from tinylm_solutions.ffn import FeedForward
from tinylm_solutions.multihead import MultiHeadSelfAttention
from tinylm_solutions.norm import LayerNorm

_ = torch.manual_seed(0)

# %% [markdown]
# **About the imports.** The parts come from the course's reference package, `tinylm_solutions`, so that
# this notebook stands on its own: a bug left in an earlier notebook can't block this one. They behave
# exactly like the ones you wrote:
#
# | part | made with | holds | call | returns |
# |---|---|---|---|---|
# | attention | `MultiHeadSelfAttention(d_model, num_heads)` | `W_Q, W_K, W_V, W_O` | `attn(x, mask)` | a **pair** `(out (B, T, D), weights (B, H, T, T))` |
# | feed-forward | `FeedForward(d_model, d_ff)` | `linear1, linear2` (GELU between) | `ffn(x)` | `(B, T, D)` |
# | LayerNorm | `LayerNorm(d_model)` | `weight, bias` | `norm(x)` | `(B, T, D)` |
# | mask | `causal_mask(T)` | | | bool `(T, T)`, True = may attend |
#
# The first demo uses PyTorch's own block, `nn.TransformerEncoderLayer` (section 4 shows that it computes
# exactly what yours will); the demos after each exercise use *your* code, so finish an exercise (its
# check passes) before running the cells below it.
#
# ## 1. What a block does
#
# A block has two **sublayers**, and they do different jobs:
#
# - **attention** is the only place where positions exchange information: token `t` gathers what it needs
#   from the tokens it may see;
# - the **feed-forward network** then transforms each position on its own (no mixing between positions).
#
# Each sublayer is wrapped in a **residual connection**: its output is *added* to its input instead of
# replacing it. Think of a stream of vectors `x (B, T, D)` flowing through the model (the **residual
# stream**): each sublayer reads the stream and adds a correction to it. Each sublayer also gets a
# **LayerNorm**, which keeps the numbers it sees at a steady scale. Every tensor in a block is `(B, T, D)`,
# so a block's output has the shape of its input, and blocks can be stacked as deep as you like.
#
# ## 2. Where the LayerNorm goes: Post-LN and Pre-LN
#
# There are two ways to combine the residual and the norm. Write $\mathrm{Attn}(h)$ for the attention's
# output (the first element of the pair) and $\mathrm{LN}_1, \mathrm{LN}_2$ for the two LayerNorms.
#
# **Post-LN**, the original Transformer (Vaswani et al., 2017, §3.1), normalises *after* adding:
#
# $$x' = \mathrm{LN}_1\big(x + \mathrm{Attn}(x)\big), \qquad y = \mathrm{LN}_2\big(x' + \mathrm{FFN}(x')\big)$$
#
# **Pre-LN** (GPT-2 and most language models since) normalises only what goes *into* each sublayer; the
# stream itself is never normalised:
#
# $$x' = x + \mathrm{Attn}\big(\mathrm{LN}_1(x)\big), \qquad y = x' + \mathrm{FFN}\big(\mathrm{LN}_2(x')\big)$$
#
# ```
#  Post-LN (norm_first=False)                     Pre-LN (norm_first=True)
#
#  x ──┬──────────────────┐                       x ──┬────────────────────────────┐
#      └──> attn ──────> (+) ──> norm1 ──> x'         └──> norm1 ──> attn ──────> (+) ──> x'
#  x'──┬──────────────────┐                       x'──┬────────────────────────────┐
#      └──> ffn ───────> (+) ──> norm2 ──> y          └──> norm2 ──> ffn ───────> (+) ──> y
# ```
#
# In Pre-LN there is a clean path from the block's input to its output: `x` reaches `y` through two
# additions and nothing else. Stack 12 blocks and the input still reaches the output through additions
# only. In Post-LN every path, including the residual one, goes through a LayerNorm in every block.
#
# **Why it matters.** Xiong et al. (2020), *On Layer Normalization in the Transformer Architecture*,
# show that at initialisation a Post-LN Transformer has large gradients for the parameters near its
# output. That is why Post-LN models need a learning-rate **warm-up** (a tiny learning rate at first,
# increased over thousands of steps) to train at all. Pre-LN's gradients are well behaved from the start,
# and Pre-LN trains without warm-up. The price: in Pre-LN the stream grows with depth, since every block
# adds to it, so a Pre-LN model applies **one final LayerNorm** after its last block (you will add it in
# notebook 08).
#
# Let's look at both in an untrained stack of 12 blocks (PyTorch's `nn.TransformerEncoderLayer`, set up
# as the course's block, with its default initialisation): the size of the stream after each block, and the size of each block's gradients for a
# language-model-like loss (a random readout to 100 "words" and a cross-entropy).

# %% [markdown] lang="zh"
# **关于导入。** 各个部件都来自课程的参考实现包 `tinylm_solutions`，这样这个笔记本可以独立运行，前面笔记本里留下的 bug 不会卡住这里。它们的行为和你写的完全一样：
#
# | 部件 | 构造 | 包含 | 调用 | 返回 |
# |---|---|---|---|---|
# | 注意力 | `MultiHeadSelfAttention(d_model, num_heads)` | `W_Q, W_K, W_V, W_O` | `attn(x, mask)` | 一个**二元组** `(out (B, T, D), weights (B, H, T, T))` |
# | 前馈网络 | `FeedForward(d_model, d_ff)` | `linear1, linear2`（中间是 GELU） | `ffn(x)` | `(B, T, D)` |
# | 层归一化 | `LayerNorm(d_model)` | `weight, bias` | `norm(x)` | `(B, T, D)` |
# | 掩码 | `causal_mask(T)` | | | bool `(T, T)`，True = 可以关注 |
#
# 第一个演示用的是 PyTorch 自带的块 `nn.TransformerEncoderLayer`（第 4 节会证明它和你的块算的完全一样）；每个练习（exercise）之后的演示用的都是*你自己*的代码，所以先完成练习，让它的检查（check）通过，再运行后面的单元格。
#
# ## 1. 一个块做什么
#
# 一个块有两个**子层**，分工不同：
#
# - **注意力**是各个位置之间交换信息的唯一地方：token `t` 从它能看到的那些 token 里收集自己需要的信息；
# - **前馈网络**接着对每个位置单独做变换（位置之间不混合）。
#
# 每个子层都包在一个**残差连接**里：子层的输出*加*到输入上，而不是替换掉输入。可以想象有一股向量流 `x (B, T, D)` 贯穿整个模型，这就是**残差流**（residual stream）：每个子层从这股流里读取信息，再往里加一点修正。每个子层还配了一个**层归一化**，让它看到的数值保持在稳定的尺度上。块里的每个张量（tensor）都是
# `(B, T, D)`，所以块的输出和输入形状（shape）相同，想堆多深就堆多深。
#
# ## 2. 层归一化放在哪里：Post-LN 与 Pre-LN
#
# 残差和归一化有两种组合方式。记 $\mathrm{Attn}(h)$
# 为注意力的输出（二元组的第一个元素），$\mathrm{LN}_1, \mathrm{LN}_2$ 为两个层归一化。
#
# **Post-LN** 是原始 Transformer 的做法（Vaswani 等人，2017，§3.1），在相加*之后*做归一化：
#
# $$x' = \mathrm{LN}_1\big(x + \mathrm{Attn}(x)\big), \qquad y = \mathrm{LN}_2\big(x' + \mathrm{FFN}(x')\big)$$
#
# **Pre-LN**（GPT-2 及之后的大多数语言模型）只对*进入*每个子层的东西做归一化，残差流本身从不归一化：
#
# $$x' = x + \mathrm{Attn}\big(\mathrm{LN}_1(x)\big), \qquad y = x' + \mathrm{FFN}\big(\mathrm{LN}_2(x')\big)$$
#
# ```
#  Post-LN (norm_first=False)                     Pre-LN (norm_first=True)
#
#  x ──┬──────────────────┐                       x ──┬────────────────────────────┐
#      └──> attn ──────> (+) ──> norm1 ──> x'         └──> norm1 ──> attn ──────> (+) ──> x'
#  x'──┬──────────────────┐                       x'──┬────────────────────────────┐
#      └──> ffn ───────> (+) ──> norm2 ──> y          └──> norm2 ──> ffn ───────> (+) ──> y
# ```
#
# 在 Pre-LN 里，从块的输入到输出有一条干净的通路：`x` 只经过两次加法就到了 `y`，中间什么别的都不经过。堆上 12
# 个块，输入到输出之间依然只有加法。而在 Post-LN 里，每条路径（包括残差那条）在每个块里都要穿过一个层归一化。
#
# **为什么这很重要。** Xiong 等人（2020）在 *On Layer Normalization in the Transformer Architecture*
# 里证明：在初始化（initialization）时，Post-LN Transformer 中靠近输出的参数梯度（gradient）很大。所以 Post-LN
# 模型必须做学习率**预热**（warmup）才能训练起来：学习率（learning rate）一开始很小，再在几千步里逐渐调大。Pre-LN
# 的梯度从一开始就很规整，不用预热也能训练。代价是：Pre-LN 里每个块都往残差流上加东西，流会随深度变大，所以 Pre-LN
# 模型要在最后一个块之后再加**一个最终的层归一化**（你会在笔记本 08 加上它）。
#
# 下面拿一个没训练过、叠了 12 个块的模型来比较这两种接法（用 PyTorch 的 `nn.TransformerEncoderLayer`，配置成和课程的块一样，使用默认初始化），看两样东西：每个块之后残差流有多大；在一个类似语言模型的损失下，每个块的梯度有多大。这个损失的做法是：用一个随机的读出层映射到 100 个“词”，再算交叉熵损失（cross-entropy loss）。

# %%
D, H, L, B, T, V = 64, 4, 12, 16, 32, 100
x = torch.randn(B, T, D)  # (B, T, D)
readout = torch.randn(D, V) / D ** 0.5  # (D, V): stands in for the model's output layer
targets = torch.randint(V, (B, T))  # (B, T)

stream, grads = {}, {}
for name, norm_first in (("Post-LN", False), ("Pre-LN", True)):
    torch.manual_seed(1)  # the same initial weights for both wirings
    blocks = [nn.TransformerEncoderLayer(D, H, 4 * D, dropout=0.0, activation="gelu", batch_first=True,
                                         norm_first=norm_first) for _ in range(L)]
    h, sizes = x, []
    for blk in blocks:
        h = blk(h, src_mask=~causal_mask(T))  # (B, T, D); PyTorch's bool mask: True = blocked
        sizes.append(h.norm(dim=-1).mean().item())  # mean length of one token's vector
    if norm_first:
        h = F.layer_norm(h, (D,))  # the final LayerNorm a Pre-LN model adds after its last block
    loss = F.cross_entropy((h @ readout).flatten(0, 1), targets.flatten())
    loss.backward()
    stream[name] = sizes
    grads[name] = [torch.cat([p.grad.flatten() for p in blk.parameters()]).norm().item() for blk in blocks]
    print(f"{name}: stream size after blocks 0, 5, 11 = {sizes[0]:.1f}, {sizes[5]:.1f}, {sizes[11]:.1f}; "
          f"gradient norm of blocks 0, 5, 11 = {grads[name][0]:.3f}, {grads[name][5]:.3f}, {grads[name][11]:.3f}")

plot_depth_profile(stream, grads, forward_label="mean norm of a token's vector",
                   backward_label="gradient norm of the block's parameters", log=False,
                   hline=(D ** 0.5, f"sqrt(D) = {D ** 0.5:.0f}"))
plt.tight_layout()
plt.show()

# %% lang="zh"
D, H, L, B, T, V = 64, 4, 12, 16, 32, 100
x = torch.randn(B, T, D)  # (B, T, D)
readout = torch.randn(D, V) / D ** 0.5  # (D, V)：代替模型的输出层
targets = torch.randint(V, (B, T))  # (B, T)

stream, grads = {}, {}
for name, norm_first in (("Post-LN", False), ("Pre-LN", True)):
    torch.manual_seed(1)  # 两种接法用同一组初始权重
    blocks = [nn.TransformerEncoderLayer(D, H, 4 * D, dropout=0.0, activation="gelu", batch_first=True,
                                         norm_first=norm_first) for _ in range(L)]
    h, sizes = x, []
    for blk in blocks:
        h = blk(h, src_mask=~causal_mask(T))  # (B, T, D)；PyTorch 的 bool 掩码：True 表示不许关注
        sizes.append(h.norm(dim=-1).mean().item())  # 一个 token 向量的平均长度
    if norm_first:
        h = F.layer_norm(h, (D,))  # Pre-LN 模型在最后一个块之后再加的那个层归一化
    loss = F.cross_entropy((h @ readout).flatten(0, 1), targets.flatten())
    loss.backward()
    stream[name] = sizes
    grads[name] = [torch.cat([p.grad.flatten() for p in blk.parameters()]).norm().item() for blk in blocks]
    print(f"{name}: stream size after blocks 0, 5, 11 = {sizes[0]:.1f}, {sizes[5]:.1f}, {sizes[11]:.1f}; "
          f"gradient norm of blocks 0, 5, 11 = {grads[name][0]:.3f}, {grads[name][5]:.3f}, {grads[name][11]:.3f}")

plot_depth_profile(stream, grads, forward_label="mean norm of a token's vector",
                   backward_label="gradient norm of the block's parameters", log=False,
                   hline=(D ** 0.5, f"sqrt(D) = {D ** 0.5:.0f}"))
plt.tight_layout()
plt.show()

# %% [markdown]
# In Post-LN every block ends with a LayerNorm (weight 1, bias 0 at initialisation), so the stream's size
# is pinned at $\sqrt{D} = 8$; its gradients are larger than Pre-LN's, most of all near the output. In
# Pre-LN the stream grows block after block, and the gradients are smaller and even shrink a little
# towards the output. The differences are modest (from a few per cent at the first block to about 50% at
# the last; mind the y axes, which do not start at 0):
# this small untrained stack only hints at the effect the paper analyses; notebook 11
# trains both wirings over a range of learning rates and compares the losses they reach.
#
# `nn.TransformerEncoderLayer` can do both: `norm_first=False` (its default) is Post-LN,
# `norm_first=True` is Pre-LN. Your block takes the same flag, with the default of language models:
# Pre-LN.
#
# ## 3. Exercise: `TransformerBlock`
#
# Write `TransformerBlock(d_model, num_heads, d_ff, norm_first=True)`:
#
# - `__init__`: call `super().__init__()`, store `self.norm_first = norm_first`, and create the four parts
#   under exactly these names (the check copies weights into them by name):
#   `self.norm1 = LayerNorm(d_model)`, `self.attn = MultiHeadSelfAttention(d_model, num_heads)`,
#   `self.norm2 = LayerNorm(d_model)`, `self.ffn = FeedForward(d_model, d_ff)`. Two separate LayerNorms:
#   each has its own weight and bias.
# - `forward(x, mask=None)`: `x (B, T, D)`; `mask` is `None` or a bool mask that broadcasts to
#   `(B, H, T, T)` (True = may attend), handed to the attention unchanged. Wire the block as Pre-LN when
#   `self.norm_first` is True and as Post-LN otherwise (the equations of section 2), and return one tensor
#   `(B, T, D)`. The attention returns a pair `(out, weights)`: add `out`, not the pair.
#
# Norm 1 belongs to the attention, norm 2 to the FFN, in both wirings. No dropout here: the check compares
# exact values.
#
# **What the check tries:** it builds your block with its own sizes (`d_ff ≠ 4 D`), writes random weights
# into it (LayerNorm weights and biases too) and the same weights into
# `nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0.0, activation="gelu", batch_first=True,
# norm_first=...)`, and compares the outputs for inputs whose mean is far from 0, with `norm_first=True`,
# `False` and left out, without a mask and with `causal_mask(T)`. With the causal mask it also changes the
# tokens after a position and expects no change at or before it. Then it counts parameters and checks
# that gradients reach every weight. If you prefer PyTorch's own parts, `nn.LayerNorm(d_model)`,
# `nn.MultiheadAttention(d_model, num_heads, batch_first=True)` and an `nn.Sequential(nn.Linear, nn.GELU(),
# nn.Linear)` are accepted too, under the same four names (mind `nn.MultiheadAttention`'s mask convention:
# True = *blocked*).
#
# **Difficulty:** ★★☆ · **Time:** about 20 min
#
# <details><summary>Hint 1: the idea</summary>
#
# A block is two sublayers, attention then the FFN, each inside a residual connection, and a LayerNorm for
# each. The flag only moves the norm. Pre-LN normalises what goes *into* the sublayer and adds the
# sublayer's output to the stream as it is; Post-LN adds first and normalises the sum. In both, the FFN
# reads the `x` the attention line produced.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - `forward` is one `if` on `self.norm_first` with two lines in each branch, one per sublayer, and then
#   `return x`. Each line reads the `x` the line before produced.
# - Pre-LN: two lines of the form `x = x + ...`, where `...` is the sublayer applied to the normalised `x`
#   (attention with `self.norm1`, the FFN with `self.norm2`). Don't overwrite `x` with the normalised copy
#   first: the residual adds the block's input, not its normalised copy.
# - Post-LN: two lines of the form `x = norm(x + ...)`, where `...` is the sublayer applied to `x` itself.
# - `self.attn` takes the mask as its second argument and returns a pair `(out, weights)`: add its element
#   0, `out` `(B, T, D)`, not the pair. `self.ffn` returns one tensor.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# Pre-LN: `x = x + self.attn(self.norm1(x), mask)[0]` then `x = x + self.ffn(self.norm2(x))`.
# Post-LN: `x = self.norm1(x + self.attn(x, mask)[0])` then `x = self.norm2(x + self.ffn(x))`.
# </details>

# %% [markdown] lang="zh"
# 在 Post-LN 里，每个块都以一个层归一化结尾（初始化时 weight 为 1、bias 为 0），所以残差流的大小被钉在
# $\sqrt{D} = 8$；它的梯度比 Pre-LN 的大，越靠近输出越明显。在 Pre-LN
# 里，残差流一个块比一个块大，梯度则更小，越往输出方向甚至还略有下降。差别并不大（第一个块只差百分之几，到最后一个块约差 50%；注意两张图的 y 轴都不是从 0 开始的）：这么小、又没训练过的堆叠，只能隐约看出论文分析的那种效应。笔记本 11 会在一组学习率上分别训练这两种接法，比较它们最后的损失。
#
# `nn.TransformerEncoderLayer` 两种都支持：`norm_first=False`（它的默认值）是 Post-LN，`norm_first=True` 是
# Pre-LN。你的块也用这个参数，默认值按语言模型的惯例取 Pre-LN。
#
# ## 3. 练习：`TransformerBlock`
#
# 写出 `TransformerBlock(d_model, num_heads, d_ff, norm_first=True)`：
#
# - `__init__`：调用 `super().__init__()`，保存
#   `self.norm_first = norm_first`，并且**严格按下面的名字**创建四个部件（检查会按名字把权重复制进去）：`self.norm1 = LayerNorm(d_model)`、`self.attn = MultiHeadSelfAttention(d_model, num_heads)`、`self.norm2 = LayerNorm(d_model)`、`self.ffn = FeedForward(d_model, d_ff)`。两个层归一化是分开的：各有各的
#   weight 和 bias。
# - `forward(x, mask=None)`：`x (B, T, D)`；`mask` 是 `None`，或者是一个能广播到 `(B, H, T, T)` 的 bool
#   掩码（True = 可以关注），原样交给注意力。`self.norm_first` 为 True 时按 Pre-LN 接，否则按 Post-LN
#   接（见第 2 节的公式），返回一个张量 `(B, T, D)`。注意力返回的是二元组 `(out, weights)`：加上去的是
#   `out`，不是整个二元组。
#
# 两种接法里，norm 1 都属于注意力，norm 2 都属于前馈网络。这里不加 dropout：检查要比较精确的数值。
#
# **检查会试什么：**
# 它用自己的尺寸构造你的块（`d_ff ≠ 4 D`），写入随机权重（层归一化的 weight 和 bias 也是随机的），再把同样的权重写入
# `nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0.0, activation="gelu", batch_first=True,
# norm_first=...)`，然后用均值远离 0 的输入比较两者的输出：分别用 `norm_first=True`、`False` 和不传 `norm_first` 这三种设置，每种都在不加掩码和加 `causal_mask(T)` 时各比较一次。加因果掩码（causal mask）时，它还会改动某个位置之后的 token，要求该位置及之前的输出都不变。最后它会数参数，并检查梯度能传到每一个权重。如果你更想用 PyTorch
# 自带的部件，`nn.LayerNorm(d_model)`、`nn.MultiheadAttention(d_model, num_heads, batch_first=True)` 和
# `nn.Sequential(nn.Linear, nn.GELU(),
# nn.Linear)` 也可以，名字还是那四个（注意
# `nn.MultiheadAttention` 的掩码约定：True = *遮住*）。
#
# **难度：** ★★☆ · **用时：** 约 20 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 一个块就是两个子层：先是注意力（attention），再是前馈网络（feed-forward network，FFN），每个子层都包在残差连接（residual connection）里，各配一个层归一化（LayerNorm）。这个开关只改变归一化放的位置。前置层归一化（Pre-LN）先把*进入*子层的东西归一化，子层的输出原样加到残差流上；后置层归一化（Post-LN）先相加，再把和归一化。两种接法里，前馈网络读的都是注意力那一行算出来的 `x`。
# </details>
#
# <details><summary>提示 2：各部分写在哪里</summary>
#
# - `forward` 就是对 `self.norm_first` 的一个 `if`，每个分支两行，一行对应一个子层，最后
#   `return x`。每一行读的都是上一行算出的 `x`。
# - 前置层归一化（Pre-LN）：两行都是 `x = x + ...` 的形式，其中 `...` 是把子层作用在归一化后的 `x`
#   上（注意力（attention）配 `self.norm1`，前馈网络（FFN）配 `self.norm2`）。不要先用归一化后的副本覆盖
#   `x`：残差连接（residual connection）加的是块的输入，不是它归一化后的副本。
# - 后置层归一化（Post-LN）：两行都是 `x = norm(x + ...)` 的形式，其中 `...` 是把子层直接作用在 `x` 上。
# - `self.attn` 的第二个参数是掩码（mask），返回一个二元组 `(out, weights)`：加上去的是它的第 0 个元素
#   `out`，形状（shape）为 `(B, T, D)`，不是整个二元组。`self.ffn` 只返回一个张量（tensor）。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# 前置层归一化（Pre-LN）：先 `x = x + self.attn(self.norm1(x), mask)[0]`，再 `x = x + self.ffn(self.norm2(x))`。后置层归一化（Post-LN）：先 `x = self.norm1(x + self.attn(x, mask)[0])`，再 `x = self.norm2(x + self.ffn(x))`。
# </details>

# %% solution="transformer_block"
class TransformerBlock(nn.Module):
    """One Transformer block: attention and a feed-forward network, each with a residual and a LayerNorm.

    Args:
        d_model: the width D of a token vector.
        num_heads: attention heads H (D must be divisible by H).
        d_ff: the feed-forward hidden width (4 * D in most models).
        norm_first: True for Pre-LN, x = x + attn(norm1(x)); False for Post-LN, x = norm1(x + attn(x)).

    Attributes:
        norm1, norm2: LayerNorm(d_model); attn: MultiHeadSelfAttention(d_model, num_heads);
        ffn: FeedForward(d_model, d_ff).

    forward(x, mask=None):
        x: (B, T, D); mask: optional bool, broadcastable to (B, H, T, T), True = may attend.
        Returns (B, T, D).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, norm_first: bool = True):
        ### BEGIN SOLUTION
        super().__init__()
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.norm2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        ### END SOLUTION

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        ### BEGIN SOLUTION
        if self.norm_first:  # Pre-LN
            x = x + self.attn(self.norm1(x), mask)[0]  # (B, T, D)
            x = x + self.ffn(self.norm2(x))  # (B, T, D)
        else:  # Post-LN
            x = self.norm1(x + self.attn(x, mask)[0])  # (B, T, D)
            x = self.norm2(x + self.ffn(x))  # (B, T, D)
        return x
        ### END SOLUTION


# %% lang="zh"
class TransformerBlock(nn.Module):
    """一个 Transformer 块：注意力和前馈网络，各带一个残差连接和一个层归一化。

    参数：
        d_model: 一个 token 向量的宽度 D。
        num_heads: 注意力头的个数 H（D 必须能被 H 整除）。
        d_ff: 前馈网络的隐藏层宽度（大多数模型里是 4 * D）。
        norm_first: True 为前置层归一化（Pre-LN），x = x + attn(norm1(x))；
            False 为后置层归一化（Post-LN），x = norm1(x + attn(x))。

    属性：
        norm1, norm2: LayerNorm(d_model)；attn: MultiHeadSelfAttention(d_model, num_heads)；
        ffn: FeedForward(d_model, d_ff)。

    forward(x, mask=None)：
        x: (B, T, D)；mask: 可选的 bool 张量，能广播到 (B, H, T, T)，True 表示可以关注。
        返回 (B, T, D)。
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, norm_first: bool = True):
        ### BEGIN SOLUTION
        super().__init__()
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.norm2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        ### END SOLUTION

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        ### BEGIN SOLUTION
        if self.norm_first:  # 前置层归一化（Pre-LN）
            x = x + self.attn(self.norm1(x), mask)[0]  # (B, T, D)
            x = x + self.ffn(self.norm2(x))  # (B, T, D)
        else:  # 后置层归一化（Post-LN）
            x = self.norm1(x + self.attn(x, mask)[0])  # (B, T, D)
            x = self.norm2(x + self.ffn(x))  # (B, T, D)
        return x
        ### END SOLUTION

# %% test="transformer_block_check"
from tinylm_checks import check_transformer_block
check_transformer_block(TransformerBlock)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_transformer_block(TransformerBlock, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** read the `tried:` line first. "no mask" failures are about the wiring; the
# `likely mistake:` line recognises, among others, a residual that adds the normalised tensor, a missing
# residual, one LayerNorm used twice, Pre-LN and Post-LN swapped, a mask that is not passed on, dropout,
# and an extra LayerNorm at the end.
#
# ## 4. The same as PyTorch's `nn.TransformerEncoderLayer`
#
# PyTorch's encoder layer is this very block. Its attention stores `W_Q, W_K, W_V` stacked into one
# `in_proj_weight (3D, D)` (and `in_proj_bias (3D,)`), with `out_proj` as `W_O`; its FFN is `linear1`,
# `linear2`; its norms are `norm1`, `norm2`. Three arguments must be set to match the course's block:
# `dropout=0.0` (its default is 0.1), `activation="gelu"` (its default is ReLU) and `batch_first=True`.
#
# **Watch the mask.** Its bool `src_mask` means True = **blocked**, the opposite of this course, so it
# gets `~causal_mask(T)`.
#
# The cell below compares your `TransformerBlock` with it.

# %% [markdown] lang="zh"
# **如果检查没通过：** 先看“尝试”这一行。写着“不加掩码”的失败说明是接线有问题；“可能的错误”这一行能认出的错误包括：残差加的是归一化后的张量、漏了残差、一个层归一化用了两次、Pre-LN 和 Post-LN
# 接反了、掩码没有传下去、加了 dropout，以及在最后多加了一个层归一化。
#
# ## 4. 和 PyTorch 的 `nn.TransformerEncoderLayer` 一样
#
# PyTorch 的编码器层就是这个块。它的注意力把 `W_Q, W_K, W_V` 堆叠存成一个
# `in_proj_weight (3D, D)`（以及 `in_proj_bias (3D,)`），`out_proj` 就是 `W_O`；它的前馈网络是
# `linear1`、`linear2`；两个归一化是
# `norm1`、`norm2`。要和课程的块一致，必须设三个参数：`dropout=0.0`（它的默认值是 0.1）、`activation="gelu"`（默认是 ReLU）和
# `batch_first=True`。
#
# **小心掩码。** 它的 bool `src_mask` 里 True 表示**遮住**，和本课程正好相反，所以要传 `~causal_mask(T)`。
#
# 下面的单元格把你的 `TransformerBlock` 和它做比较。

# %%
D, H, d_ff, B, T = 16, 4, 48, 2, 6
x = torch.randn(B, T, D) + 1.0  # (B, T, D), mean 1
for norm_first in (True, False):
    ours = TransformerBlock(D, H, d_ff, norm_first=norm_first)  # yours
    with torch.no_grad():  # random LayerNorm parameters too, so that nothing matches by luck
        for p in ours.parameters():
            p.add_(0.1 * torch.randn_like(p))
    torch_layer = nn.TransformerEncoderLayer(D, H, d_ff, dropout=0.0, activation="gelu", batch_first=True,
                                             norm_first=norm_first)
    a = ours.attn
    with torch.no_grad():
        torch_layer.self_attn.in_proj_weight.copy_(torch.cat([a.W_Q.weight, a.W_K.weight, a.W_V.weight]))  # (3D, D)
        torch_layer.self_attn.in_proj_bias.copy_(torch.cat([a.W_Q.bias, a.W_K.bias, a.W_V.bias]))  # (3D,)
        torch_layer.self_attn.out_proj.load_state_dict(a.W_O.state_dict())
        for name in ("linear1", "linear2"):
            getattr(torch_layer, name).load_state_dict(getattr(ours.ffn, name).state_dict())
        for name in ("norm1", "norm2"):
            getattr(torch_layer, name).load_state_dict(getattr(ours, name).state_dict())
        no_mask = (ours(x) - torch_layer(x)).abs().max().item()
        causal = (ours(x, causal_mask(T)) - torch_layer(x, src_mask=~causal_mask(T))).abs().max().item()
    label = "Pre-LN " if norm_first else "Post-LN"
    print(f"{label}: max abs difference {no_mask:.1e} without a mask, {causal:.1e} with a causal mask")
print("parameters:", sum(p.numel() for p in torch_layer.parameters()), "(PyTorch) vs",
      sum(p.numel() for p in ours.parameters()), "(yours)")

# %% lang="zh"
D, H, d_ff, B, T = 16, 4, 48, 2, 6
x = torch.randn(B, T, D) + 1.0  # (B, T, D)，均值为 1
for norm_first in (True, False):
    ours = TransformerBlock(D, H, d_ff, norm_first=norm_first)  # 你写的
    with torch.no_grad():  # 层归一化的参数也随机取，这样没有什么能碰巧对上
        for p in ours.parameters():
            p.add_(0.1 * torch.randn_like(p))
    torch_layer = nn.TransformerEncoderLayer(D, H, d_ff, dropout=0.0, activation="gelu", batch_first=True,
                                             norm_first=norm_first)
    a = ours.attn
    with torch.no_grad():
        torch_layer.self_attn.in_proj_weight.copy_(torch.cat([a.W_Q.weight, a.W_K.weight, a.W_V.weight]))  # (3D, D)
        torch_layer.self_attn.in_proj_bias.copy_(torch.cat([a.W_Q.bias, a.W_K.bias, a.W_V.bias]))  # (3D,)
        torch_layer.self_attn.out_proj.load_state_dict(a.W_O.state_dict())
        for name in ("linear1", "linear2"):
            getattr(torch_layer, name).load_state_dict(getattr(ours.ffn, name).state_dict())
        for name in ("norm1", "norm2"):
            getattr(torch_layer, name).load_state_dict(getattr(ours, name).state_dict())
        no_mask = (ours(x) - torch_layer(x)).abs().max().item()
        causal = (ours(x, causal_mask(T)) - torch_layer(x, src_mask=~causal_mask(T))).abs().max().item()
    label = "Pre-LN " if norm_first else "Post-LN"
    print(f"{label}: max abs difference {no_mask:.1e} without a mask, {causal:.1e} with a causal mask")
print("parameters:", sum(p.numel() for p in torch_layer.parameters()), "(PyTorch) vs",
      sum(p.numel() for p in ours.parameters()), "(yours)")

# %% [markdown]
# Differences below `1e-6` are float32 rounding: the two compute the same function.
#
# ## 5. Causal, when given a causal mask
#
# A block mixes positions only inside the attention, so with a causal mask the output at position `t`
# depends on tokens `0 .. t` only. Change the tokens from position 4 on and see which outputs move:

# %% [markdown] lang="zh"
# 差值小于 `1e-6` 只是 float32 的舍入误差：两者计算的是同一个函数。
#
# ## 5. 给了因果掩码，块就是因果的
#
# 块只在注意力里混合不同位置，所以加上因果掩码后，位置 `t` 的输出只取决于 token `0 .. t`。把从位置 4 开始的 token
# 换掉，看看哪些输出会变：

# %%
D, H, T = 16, 4, 8
blk = TransformerBlock(D, H, 4 * D)  # yours
x = torch.randn(1, T, D)  # (1, T, D)
x_changed = x.clone()
x_changed[:, 4:] = torch.randn(1, T - 4, D)  # new tokens at positions 4 .. 7
with torch.no_grad():
    for mask, label in ((causal_mask(T), "causal mask"), (None, "no mask   ")):
        change = (blk(x_changed, mask) - blk(x, mask)).abs().amax(-1)[0]  # (T,): largest change per position
        print(f"{label}: change of the output at positions 0 .. {T - 1}:", [f"{c:.2f}" for c in change.tolist()])

# %% lang="zh"
D, H, T = 16, 4, 8
blk = TransformerBlock(D, H, 4 * D)  # 你写的
x = torch.randn(1, T, D)  # (1, T, D)
x_changed = x.clone()
x_changed[:, 4:] = torch.randn(1, T - 4, D)  # 在位置 4 .. 7 换上新 token
with torch.no_grad():
    for mask, label in ((causal_mask(T), "causal mask"), (None, "no mask   ")):
        change = (blk(x_changed, mask) - blk(x, mask)).abs().amax(-1)[0]  # (T,)：每个位置上最大的变化
        print(f"{label}: change of the output at positions 0 .. {T - 1}:", [f"{c:.2f}" for c in change.tolist()])

# %% [markdown]
# With the causal mask, positions 0–3 don't move at all: they can't see the future. Without a mask, every
# position sees every token and everything changes. The block builds no mask of its own: the model does,
# once, and hands it to every block (notebook 08).
#
# ## 6. Counting parameters
#
# Where are a block's parameters? An `nn.Linear(n_in, n_out)` holds `n_in × n_out` weights and `n_out`
# biases; a LayerNorm over `D` features holds a weight and a bias of `D` each.
#
# | part | holds | parameters | at `d_ff = 4 D` |
# |---|---|---|---|
# | `attn` | `W_Q, W_K, W_V, W_O`, each `nn.Linear(D, D)` | $4(D^2 + D)$ | $4D^2 + 4D$ |
# | `ffn` | `linear1 = nn.Linear(D, d_ff)`, `linear2 = nn.Linear(d_ff, D)` | $2 D\, d_\text{ff} + d_\text{ff} + D$ | $8D^2 + 5D$ |
# | norms | `norm1`, `norm2`, weight and bias each | $2 \times 2D = 4D$ | $4D$ |
# | **block** | | | $12D^2 + 13D$ |
#
# The formulas hold for *this* block. A program that reports parameter counts (or a memory estimate)
# should count what a module actually holds: a model may have another `d_ff`, extra parameters, a
# shared tensor, or frozen parts. `p.numel()` is the number of elements of a tensor `p`, and
# `module.parameters()` yields every parameter tensor of a module and its submodules, each tensor once
# even when two submodules share it.
#
# ### Exercise: `block_parameter_counts(block)`
#
# Return a dict of plain ints, counted from the block's parameters (not from the formulas):
#
# - `"attn"`: the parameters of `block.attn`; `"ffn"`: those of `block.ffn`;
# - `"norms"`: those of `block.norm1` and `block.norm2` together;
# - `"total"`: every parameter of the whole block.
#
# Every parameter counts, trainable or frozen (`requires_grad=False`), and a tensor counts once even if two
# submodules share it: when `norm2` *is* `norm1`, adding a count of `norm1` to a count of `norm2` counts the
# same tensors twice. `"total"` is *not* simply the sum of the three parts: a block may hold parameters
# outside them.
#
# **What the check tries:** reference blocks of two widths with `d_ff ≠ 4 D` (so the formulas for
# `d_ff = 4 D` won't pass), a block with one extra parameter `block.scale (D,)`, a block whose attention is
# frozen, a block whose `norm2` *is* `norm1` (one LayerNorm shared by both sublayers: its tensors count
# once), and a block whose LayerNorms have no bias (`nn.LayerNorm(d_model, bias=False)`), where the formulas
# don't hold either. Every block must come back unchanged: count, don't touch (no `requires_grad_()`,
# `eval()`, ...).
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Count, don't compute: one small helper that adds up the sizes of every parameter tensor of a module does
# most of it; apply it to the parts and to the block. Every tensor counts, trainable or frozen. The one trap
# is the pair of norms: to count a shared tensor once, count the two norms together, as one module, instead
# of adding two counts.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# - The helper: the sum of `p.numel()` over every `p` in `module.parameters()` (a `def` or a `lambda`), with
#   no `if p.requires_grad` filter. `"attn"`, `"ffn"` and `"total"` are the helper on `block.attn`,
#   `block.ffn` and `block` itself.
# - `"norms"`: put `block.norm1` and `block.norm2` in one `nn.ModuleList` and count that. An `nn.ModuleList`
#   yields a shared LayerNorm's tensors once, where `count(block.norm1) + count(block.norm2)` would count
#   them twice.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `count = lambda m: sum(p.numel() for p in m.parameters())`, applied to the parts and to the block; the two
# norms are `count(nn.ModuleList([block.norm1, block.norm2]))`.
# </details>

# %% [markdown] lang="zh"
# 加了因果掩码，位置 0–3 纹丝不动：它们看不到未来。不加掩码，每个位置都能看到所有
# token，于是全都变了。块自己不构造掩码：掩码由模型构造一次，再交给每一个块（笔记本 08）。
#
# ## 6. 数参数
#
# 一个块的参数都在哪里？一个 `nn.Linear(n_in, n_out)` 有 `n_in × n_out` 个权重和 `n_out` 个偏置；对 `D`
# 个特征做归一化的层归一化有一个 weight 和一个 bias，各 `D` 个。
#
# | 部件 | 包含 | 参数量 | `d_ff = 4 D` 时 |
# |---|---|---|---|
# | `attn` | `W_Q, W_K, W_V, W_O`，每个都是 `nn.Linear(D, D)` | $4(D^2 + D)$ | $4D^2 + 4D$ |
# | `ffn` | `linear1 = nn.Linear(D, d_ff)`、`linear2 = nn.Linear(d_ff, D)` | $2 D\, d_\text{ff} + d_\text{ff} + D$ | $8D^2 + 5D$ |
# | 归一化 | `norm1`、`norm2`，各有 weight 和 bias | $2 \times 2D = 4D$ | $4D$ |
# | **块** | | | $12D^2 + 13D$ |
#
# 这些公式只对*这个*块成立。要报告参数量（或估算内存）的程序，应该去数模块实际持有的东西：模型可能用了别的
# `d_ff`，可能有额外的参数、共享的张量，或者冻结的部分。`p.numel()` 是张量 `p` 的元素个数；`module.parameters()`
# 会依次给出一个模块及其子模块的每个参数张量，即使两个子模块共享同一个张量，它也只给一次。
#
# ### 练习：`block_parameter_counts(block)`
#
# 返回一个值为普通 int 的 dict，数值从块的参数上数出来（不是用公式算出来）：
#
# - `"attn"`：`block.attn` 的参数；`"ffn"`：`block.ffn` 的参数；
# - `"norms"`：`block.norm1` 和 `block.norm2` 合在一起的参数；
# - `"total"`：整个块的全部参数。
#
# 每个参数都要算，不管是可训练的还是冻结的（`requires_grad=False`）；一个张量即使被两个子模块共享，也只算一次：当
# `norm2` *就是* `norm1` 时，把 `norm1` 的数目和 `norm2`
# 的数目相加，同一批张量就被算了两次。`"total"` *不*只是三部分之和：块里可能还有这三部分之外的参数。
#
# **检查会试什么：** 两种宽度的参考块，都是
# `d_ff ≠ 4 D`（所以按 `d_ff = 4 D` 的公式算是过不了的）；一个多了一个参数 `block.scale (D,)`
# 的块；一个注意力被冻结的块；一个 `norm2` *就是* `norm1`
# 的块（两个子层共用一个层归一化：它的张量只算一次）；还有一个层归一化不带 bias
# 的块（`nn.LayerNorm(d_model, bias=False)`），公式在这里同样不成立。每个块都必须原样返回：只数，不动（不要 `requires_grad_()`、`eval()` 之类的操作）。
#
# **难度：** ★☆☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 要数出来，不要算出来：写一个小函数，把一个模块里每个参数（parameter）张量（tensor）的大小加起来，大部分工作就完成了；再把它用在各个部件和整个块上。每个张量都要算，可训练的和冻结的都算。唯一的坑是那两个层归一化（LayerNorm）：要让共享的张量只算一次，就把两个归一化放在一起、当作一个模块来数，而不是把两个数目相加。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# - 这个辅助函数：对 `module.parameters()` 里的每个 `p` 求 `p.numel()`
#   的和（写成 `def` 或 `lambda` 都行），*不要*加 `if p.requires_grad` 这样的过滤。`"attn"`、`"ffn"` 和 `"total"`
#   就是把它分别用在 `block.attn`、`block.ffn` 和 `block` 本身上。
# - `"norms"`：把 `block.norm1` 和 `block.norm2` 放进同一个
#   `nn.ModuleList`，再数这个列表。共享的层归一化（LayerNorm），`nn.ModuleList` 只给出一次它的张量（tensor），而
#   `count(block.norm1) + count(block.norm2)` 会把它们算两次。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `count = lambda m: sum(p.numel() for p in m.parameters())`，用在各个部件和整个块上；两个归一化就是
# `count(nn.ModuleList([block.norm1, block.norm2]))`。
# </details>

# %% solution="block_parameter_counts"
def block_parameter_counts(block: nn.Module) -> dict[str, int]:
    """Count a block's parameters by part, from the module itself.

    Args:
        block: a module with submodules attn, ffn, norm1, norm2 (such as a TransformerBlock).

    Returns:
        {"attn": ..., "ffn": ..., "norms": ..., "total": ...}: the number of parameter elements in block.attn,
        in block.ffn, in block.norm1 and block.norm2 together, and in the whole block. Every parameter
        counts (trainable or not), each tensor once.
    """
    ### BEGIN SOLUTION
    def count(module: nn.Module) -> int:
        return sum(p.numel() for p in module.parameters())  # parameters() yields each tensor once

    return {"attn": count(block.attn), "ffn": count(block.ffn),
            "norms": count(nn.ModuleList([block.norm1, block.norm2])), "total": count(block)}
    ### END SOLUTION


# %% lang="zh"
def block_parameter_counts(block: nn.Module) -> dict[str, int]:
    """直接从模块本身按部分统计一个块的参数。

    参数：
        block: 含有子模块 attn、ffn、norm1、norm2 的模块（例如一个 TransformerBlock）。

    返回：
        {"attn": ..., "ffn": ..., "norms": ..., "total": ...}：分别是 block.attn 中、block.ffn 中、
        block.norm1 和 block.norm2 合起来、以及整个块中参数元素的个数。每个参数都要算上
        （不管可不可训练），每个张量只算一次。
    """
    ### BEGIN SOLUTION
    def count(module: nn.Module) -> int:
        return sum(p.numel() for p in module.parameters())  # parameters() 对每个张量只给出一次

    return {"attn": count(block.attn), "ffn": count(block.ffn),
            "norms": count(nn.ModuleList([block.norm1, block.norm2])), "total": count(block)}
    ### END SOLUTION

# %% test="block_parameter_counts_check"
from tinylm_checks import check_block_parameter_counts
check_block_parameter_counts(block_parameter_counts)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_block_parameter_counts(block_parameter_counts, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** the `tried:` line says which block it counted, and `expected:` / `got:` show all
# four counts side by side, so you can see which part is off and by how much.
#
# ## 7. About 12 D² per layer
#
# Now the table for widths from 32 to 512, with `d_ff = 4 D`, next to the formula $12D^2 + 13D$ and the
# ratio to $12D^2$, counted by your `block_parameter_counts` on your `TransformerBlock`.

# %% [markdown] lang="zh"
# **如果检查没通过：** “尝试”这一行说明它数的是哪个块，“期望”和“实际”两行把四个数并排列出来，你能看出是哪一部分不对、差了多少。
#
# ## 7. 每层约 12 D²
#
# 下面是宽度从 32 到 512 的表格，`d_ff = 4 D`，旁边列出公式 $12D^2 + 13D$ 以及与 $12D^2$ 的比值；数字由你的
# `block_parameter_counts` 在你的 `TransformerBlock` 上数出来。

# %%
widths = (32, 64, 128, 256, 512)
totals = []
print("    D       attn        ffn   norms      total   12D²+13D  total/12D²")
for D in widths:
    counts = block_parameter_counts(TransformerBlock(D, 4, 4 * D))  # yours
    totals.append(counts["total"])
    print(f"{D:>5} {counts['attn']:>10,} {counts['ffn']:>10,} {counts['norms']:>7,} {counts['total']:>10,} "
          f"{12 * D * D + 13 * D:>10,} {counts['total'] / (12 * D * D):>11.4f}")

plot_parameter_ratio(widths, totals)
plt.show()

# %% lang="zh"
widths = (32, 64, 128, 256, 512)
totals = []
print("    D       attn        ffn   norms      total   12D²+13D  total/12D²")
for D in widths:
    counts = block_parameter_counts(TransformerBlock(D, 4, 4 * D))  # 你写的
    totals.append(counts["total"])
    print(f"{D:>5} {counts['attn']:>10,} {counts['ffn']:>10,} {counts['norms']:>7,} {counts['total']:>10,} "
          f"{12 * D * D + 13 * D:>10,} {counts['total'] / (12 * D * D):>11.4f}")

plot_parameter_ratio(widths, totals)
plt.show()

# %% [markdown]
# At `D = 128`: attention 66,048, FFN 131,712, norms 512, in all 198,272 parameters. The ratio to $12D^2$
# is $1 + 13/(12D)$: 1.034 at `D = 32`, 1.002 at `D = 512`. The `13D` (biases and norms) fades as `D`
# grows, which is why people say a block has **about 12 D² parameters**: a third in the attention
# ($4D^2$), two thirds in the FFN ($8D^2$). Kaplan et al. (2020, §2.1) count a model's non-embedding
# parameters as $N \approx 12\, n_\text{layer} D^2$. GPT-2 small, for instance, has `D = 768` and 12
# blocks: $12 \times 12 \times 768^2 \approx 85$ million parameters in its blocks (the rest of its 124
# million are the embeddings).
#
# Note that the count does not depend on `num_heads` (heads split the projections, they don't add to
# them) nor on the sequence length `T`.
#
# ## 8. The production form: `CausalSelfAttention`
#
# Your `MultiHeadSelfAttention` spells every step out, which is what makes it readable. The attention in
# nanoGPT, GPT-2's code and most models you will open is written differently, for speed, and it is worth
# knowing it when you see it:
#
# - **one fused projection** `qkv = nn.Linear(D, 3 D, bias=False)`: one matrix multiply instead of three,
#   split afterwards with `.chunk(3, dim=-1)` into `q, k, v` (its weight is `W_Q, W_K, W_V` stacked, exactly
#   like `nn.MultiheadAttention`'s `in_proj_weight` in section 4); `out = nn.Linear(D, D, bias=False)` is `W_O`.
#   nanoGPT leaves the biases out: they add little, and the layers are simpler without them;
# - **one fused attention call**, `F.scaled_dot_product_attention(q, k, v, is_causal=True)`: scores, scale
#   `1/sqrt(d_head)`, causal mask, softmax and `@ v` in one function, which may never form the `(T, T)` weights
#   at all (FlashAttention, Dao et al. 2022). `is_causal=True` stands for the causal mask;
# - **dropout on the attention weights** while training. Dropout (Srivastava et al. 2014) sets each weight to 0
#   with probability `p` and divides the kept ones by `1 - p`, so that the output is right *on average*; outside
#   training it does nothing.
#
# **The trap.** An `nn.Dropout` module reads `self.training`, which `model.train()` and `model.eval()` switch.
# `F.scaled_dot_product_attention` is a *function*: its `dropout_p=` is applied whenever it is not 0, in
# evaluation too. The module must pass `dropout_p=self.dropout if self.training else 0.0` itself (the PyTorch
# docs of the function say so). Forget it and your validation loss and your generated text are random, and a
# little worse, with nothing to tell you why.
#
# ### Exercise: `CausalSelfAttention(d_model, num_heads, dropout=0.0)`
#
# - `__init__`: `ValueError` when `d_model % num_heads != 0`; attributes `qkv` and `out` (the layers above),
#   `num_heads`, `d_head = d_model // num_heads` and `dropout` (the probability, a float).
# - `forward(x)`: `x (B, T, D)` -> `(B, T, D)`. Split `qkv(x)` in the order q, k, v, give each the shape
#   `(B, H, T, d_head)`, make **one** `F.scaled_dot_product_attention` call with `is_causal=True` and the right
#   `dropout_p`, merge the heads back to `(B, T, D)` and apply `out`.
#
# **What the check tries:** a `ValueError` for `d_model % num_heads != 0`; the layers and attributes, `4 D²`
# parameters; then it copies the weights of stage 02's `MultiHeadSelfAttention` (biases 0) into yours and, in
# `eval()`, expects its output with `causal_mask(T)`. With `dropout=0.5` it expects two `eval()` calls to agree,
# and in `train()` 40 calls to differ, to drop whole weights (not single elements of the output) and to average
# out to the `eval()` output. A version written by hand (masked scores, softmax,
# `F.dropout(weights, self.dropout, training=self.training)`) passes as well, and so do `torch.split`, `reshape` and
# `einsum` heads.
#
# **Difficulty:** ★★☆ · **Time:** about 15 min
#
# <details><summary>Hint 1: the idea</summary>
#
# It is your `MultiHeadSelfAttention` with two changes: the three projections become one layer whose output you
# cut in three, and `scaled_dot_product_attention` plus the causal mask become one call of PyTorch's function.
# The heads are split and merged exactly as in stage 02.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# Cut the output of `self.qkv(x)` into three along its last dimension (`.chunk`); give each piece the heads'
# shape the way stage 02's `split_heads` did (split D, *then* move the heads before time); merge back the way
# `merge_heads` did. The dropout goes *into* the attention call, through `dropout_p`, and its value depends on
# `self.training`.
# </details>
#
# <details><summary>Hint 3: the answer, forward line by line</summary>
#
# `q, k, v = self.qkv(x).chunk(3, dim=-1)`; then for each, `.view(B, T, self.num_heads, self.d_head).transpose(1, 2)`;
# `y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)`;
# `return self.out(y.transpose(1, 2).reshape(B, T, D))`
# </details>

# %% [markdown] lang="zh"
# `D = 128` 时：注意力 66,048，前馈网络 131,712，归一化 512，一共 198,272 个参数。与 $12D^2$ 的比值是
# $1 + 13/(12D)$：`D = 32` 时为 1.034，`D = 512` 时为 1.002。`13D` 这一项（偏置和归一化）随着 `D`
# 变大越来越不重要，所以大家常说一个块**约有 12 D² 个参数**：三分之一在注意力里（$4D^2$），三分之二在前馈网络里（$8D^2$）。Kaplan 等人（2020，§2.1）把模型中嵌入（embedding）以外的参数量记为
# $N \approx 12\, n_\text{layer} D^2$。比如 GPT-2 small 的 `D = 768`，有 12 个块：块里的参数约有
# $12 \times 12 \times 768^2 \approx 85$M 个（M 即百万；它一共 124M 个参数，其余的都在嵌入里）。
#
# 注意，参数量既不取决于
# `num_heads`（头（head）只是把投影切分开，并不增加投影），也不取决于序列长度（sequence length）`T`。
#
# ## 8. 生产代码的写法：`CausalSelfAttention`
#
# 你的 `MultiHeadSelfAttention` 把每一步都写了出来，所以才好读。而在 nanoGPT、GPT-2 的代码，以及你以后会读到的大多数模型里，注意力为了速度换了一种写法，见到了要能认出来：
#
# - **一个融合投影** `qkv = nn.Linear(D, 3 D, bias=False)`：一次矩阵乘法（matrix multiplication）代替三次，之后用
#   `.chunk(3, dim=-1)` 切成 `q, k, v`（它的权重就是 `W_Q, W_K, W_V` 堆在一起，和第 4 节里 `nn.MultiheadAttention`
#   的 `in_proj_weight` 完全一样）；`out = nn.Linear(D, D, bias=False)` 就是 `W_O`。nanoGPT
#   不用偏置：偏置作用不大，去掉后层更简单；
# - **一次融合的注意力调用** `F.scaled_dot_product_attention(q, k, v, is_causal=True)`：打分、乘缩放因子
#   `1/sqrt(d_head)`、因果掩码、softmax 和 `@ v` 都在一个函数里完成，它甚至可能根本不生成 `(T, T)`
#   的权重矩阵（FlashAttention，Dao 等人，2022）。`is_causal=True` 就代替了因果掩码；
# - 训练时**对注意力权重（attention weights）做 dropout**。Dropout（Srivastava 等人，2014）以概率 `p`
#   把每个权重置为 0，并把保留下来的权重除以 `1 - p`，让输出*在平均意义上*保持不变；不在训练时，它什么也不做。
#
# **陷阱。** `nn.Dropout` 模块会读取 `self.training`，这个标志由 `model.train()` 和 `model.eval()` 切换。而
# `F.scaled_dot_product_attention` 是一个*函数*：只要 `dropout_p=` 不为 0，它就会做
# dropout，评估时也照做不误。所以模块必须自己传
# `dropout_p=self.dropout if self.training else 0.0`（PyTorch 这个函数的文档里也是这么说的）。忘了这一步，你的验证集损失（validation loss）和生成的文本就会带上随机性，还会稍微变差，却没有任何提示告诉你原因。
#
# ### 练习：`CausalSelfAttention(d_model, num_heads, dropout=0.0)`
#
# - `__init__`：`d_model % num_heads != 0` 时抛出 `ValueError`；属性有 `qkv` 和
#   `out`（就是上面那两个层）、`num_heads`、`d_head = d_model // num_heads` 和 `dropout`（丢弃概率，一个 float）。
# - `forward(x)`：`x (B, T, D)` -> `(B, T, D)`。按 q、k、v 的顺序切分 `qkv(x)`，把每一份变成 `(B, H, T, d_head)`
#   的形状，调用**一次** `F.scaled_dot_product_attention`，传入 `is_causal=True` 和正确的
#   `dropout_p`，再把各个头合并回 `(B, T, D)`，最后经过 `out`。
#
# **检查会试什么：** `d_model % num_heads != 0` 时应抛出 `ValueError`；各个层和属性，参数量为 `4 D²`；然后它把笔记本 02 中 `MultiHeadSelfAttention` 的权重（偏置为 0）复制进你的模块，在 `eval()` 下要求输出等于后者配合
# `causal_mask(T)` 的输出。`dropout=0.5` 时，要求两次 `eval()` 调用的结果一致；在 `train()` 下调用 40
# 次，要求每次结果都不同、丢弃的是整个权重（而不是输出里的单个元素），并且平均下来等于 `eval()`
# 的输出。手写的版本（掩码后的分数、softmax、`F.dropout(weights, self.dropout, training=self.training)`）同样能通过，用
# `torch.split`、`reshape` 和 `einsum` 切分多头也可以。
#
# **难度：** ★★☆ · **用时：** 约 15 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 它就是你的 `MultiHeadSelfAttention`
# 改了两处：三个投影合成一个层，再把这个层的输出切成三份；`scaled_dot_product_attention`
# 加上因果掩码（causal mask），换成对 PyTorch 函数的一次调用。头（head）的切分与合并和笔记本 02 完全一样。
# </details>
#
# <details><summary>提示 2：各部分写在哪里</summary>
#
# 把 `self.qkv(x)` 的输出沿最后一维切成三份（`.chunk`）；按笔记本 02 的 `split_heads`
# 的做法把每一份变成多头的形状（shape）：先切分 D，*再*把头（head）那一维挪到时间维前面；按 `merge_heads`
# 的做法合并回去。dropout 要放进注意力（attention）调用*里面*，通过 `dropout_p` 传入，它的值取决于
# `self.training`。
# </details>
#
# <details><summary>提示 3：答案（forward 逐行写出）</summary>
#
# `q, k, v = self.qkv(x).chunk(3, dim=-1)`；然后对每一个做
# `.view(B, T, self.num_heads, self.d_head).transpose(1, 2)`；
# `y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)`；
# `return self.out(y.transpose(1, 2).reshape(B, T, D))`
# </details>

# %% solution="causal_self_attention"
class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention, production form (nanoGPT's CausalSelfAttention).

    Args:
        d_model: D; num_heads: H (D must be divisible by H); dropout: probability of dropping an attention
        weight while training.

    Attributes:
        qkv: nn.Linear(D, 3 D, bias=False), split in the order q, k, v; out: nn.Linear(D, D, bias=False);
        num_heads; d_head = D // H; dropout (a float).

    forward(x (B, T, D)) -> (B, T, D). Raises ValueError if D % H != 0.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0):
        ### BEGIN SOLUTION
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.num_heads, self.d_head, self.dropout = num_heads, d_model // num_heads, float(dropout)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)  # 3 x (B, T, D)
        q, k, v = (t.view(B, T, self.num_heads, self.d_head).transpose(1, 2) for t in (q, k, v))  # (B, H, T, d_head)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                           is_causal=True)  # (B, H, T, d_head)
        return self.out(y.transpose(1, 2).reshape(B, T, D))  # (B, T, D)
        ### END SOLUTION


# %% lang="zh"
class CausalSelfAttention(nn.Module):
    """多头因果自注意力，实际工程中的写法（nanoGPT 的 CausalSelfAttention）。

    参数：
        d_model: D；num_heads: H（D 必须能被 H 整除）；dropout: 训练时丢弃一个注意力权重的概率。

    属性：
        qkv: nn.Linear(D, 3 D, bias=False)，按 q、k、v 的顺序切开；out: nn.Linear(D, D, bias=False)；
        num_heads；d_head = D // H；dropout（一个浮点数）。

    forward(x (B, T, D)) -> (B, T, D)。D % H != 0 时抛出 ValueError。
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0):
        ### BEGIN SOLUTION
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.num_heads, self.d_head, self.dropout = num_heads, d_model // num_heads, float(dropout)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)  # 3 x (B, T, D)
        q, k, v = (t.view(B, T, self.num_heads, self.d_head).transpose(1, 2) for t in (q, k, v))  # (B, H, T, d_head)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                           is_causal=True)  # (B, H, T, d_head)
        return self.out(y.transpose(1, 2).reshape(B, T, D))  # (B, T, D)
        ### END SOLUTION

# %% test="causal_self_attention_check"
from tinylm_checks import check_causal_self_attention
check_causal_self_attention(CausalSelfAttention)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_causal_self_attention(CausalSelfAttention, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** `likely mistake:` names, among others, q, k, v split in another order, heads split or
# merged without the transpose, a missing `is_causal=True`, dropout left on in `eval()`, dropout never applied,
# dropout on the output instead of the weights, a weight used transposed (`y @ self.out.weight`) and the scale of
# `sqrt(d_model)`.
#
# **See the trap for yourself.** `TrapAttention` below is your class with one change: it always passes
# `dropout_p=self.dropout`. Both get `dropout=0.2`, the same weights and the same input, in `eval()`:

# %% [markdown] lang="zh"
# **如果检查没通过：** “可能的错误”那一行能指出的错误包括：q、k、v 的切分顺序不对，切分或合并多头时漏了
# transpose，漏了 `is_causal=True`，`eval()` 下 dropout 还开着，dropout 从来没生效，dropout
# 加在了输出上而不是权重上，权重用成了转置（`y @ self.out.weight`），以及缩放用了 `sqrt(d_model)`。
#
# **亲眼看看这个陷阱。** 下面的 `TrapAttention` 就是你的类改了一处：它总是传 `dropout_p=self.dropout`。两者都用
# `dropout=0.2`、相同的权重和相同的输入，都处于 `eval()` 模式：

# %%
class TrapAttention(CausalSelfAttention):
    """Your CausalSelfAttention, but dropout_p=self.dropout always: the functional call ignores self.training."""

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (t.view(B, T, self.num_heads, self.d_head).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout, is_causal=True)  # the trap
        return self.out(y.transpose(1, 2).reshape(B, T, D))


torch.manual_seed(0)
yours, trap = CausalSelfAttention(32, 4, dropout=0.2), TrapAttention(32, 4, dropout=0.2)
trap.load_state_dict(yours.state_dict())
x = torch.randn(2, 16, 32)  # (B, T, D)
with torch.no_grad():
    for name, module in (("yours", yours), ("trap ", trap)):
        module.eval()
        a, b = module(x), module(x)
        print(f"{name} in eval(): two calls differ by {(a - b).abs().max().item():.3f}")
    yours.train()
    a, b = yours(x), yours(x)
    print(f"yours in train(): two calls differ by {(a - b).abs().max().item():.3f}")
    yours.eval()
    reference = yours(x)
    yours.train()
    mean = torch.stack([yours(x) for _ in range(500)]).mean(0)  # (B, T, D): the average of 500 training calls
    print(f"yours in train(), averaged over 500 calls: largest difference from eval() {(mean - reference).abs().max().item():.3f}, "
          f"output scale {reference.abs().mean().item():.3f}")

# %% lang="zh"
class TrapAttention(CausalSelfAttention):
    """你的 CausalSelfAttention，但始终用 dropout_p=self.dropout：这个函数式调用不理会 self.training。"""

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (t.view(B, T, self.num_heads, self.d_head).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout, is_causal=True)  # 陷阱就在这里
        return self.out(y.transpose(1, 2).reshape(B, T, D))


torch.manual_seed(0)
yours, trap = CausalSelfAttention(32, 4, dropout=0.2), TrapAttention(32, 4, dropout=0.2)
trap.load_state_dict(yours.state_dict())
x = torch.randn(2, 16, 32)  # (B, T, D)
with torch.no_grad():
    for name, module in (("yours", yours), ("trap ", trap)):
        module.eval()
        a, b = module(x), module(x)
        print(f"{name} in eval(): two calls differ by {(a - b).abs().max().item():.3f}")
    yours.train()
    a, b = yours(x), yours(x)
    print(f"yours in train(): two calls differ by {(a - b).abs().max().item():.3f}")
    yours.eval()
    reference = yours(x)
    yours.train()
    mean = torch.stack([yours(x) for _ in range(500)]).mean(0)  # (B, T, D)：500 次训练模式调用的平均
    print(f"yours in train(), averaged over 500 calls: largest difference from eval() {(mean - reference).abs().max().item():.3f}, "
          f"output scale {reference.abs().mean().item():.3f}")

# %% [markdown]
# In `eval()` your module gives the same output twice and the trap does not: that is the bug, in the part of a
# run (evaluation, generation) where nothing else looks random. In `train()` yours is random too, as it should
# be, and its average over many calls comes close to the `eval()` output: dropping weights and dividing the
# kept ones by `1 - p` changes nothing on average.
#
# ## Summary
#
# - A block is attention (positions exchange information) then a position-wise FFN, each wrapped in a
#   residual connection and a LayerNorm; `(B, T, D)` in, `(B, T, D)` out, so blocks stack.
# - Post-LN: `x = norm1(x + attn(x))`, `x = norm2(x + ffn(x))`. Pre-LN: `x = x + attn(norm1(x))`,
#   `x = x + ffn(norm2(x))`: the stream is never normalised, gradients behave at initialisation and no
#   warm-up is needed (Xiong et al., 2020), and the model adds a final LayerNorm.
# - It is `nn.TransformerEncoderLayer(..., dropout=0.0, activation="gelu", batch_first=True,
#   norm_first=...)`, whose bool `src_mask` means True = blocked.
# - The mask comes from outside and is passed on unchanged; with a causal mask, later tokens change
#   nothing earlier.
# - Parameters: attention $4(D^2 + D)$, FFN $2 D d_\text{ff} + d_\text{ff} + D$, norms $4D$; at
#   `d_ff = 4 D`, $12D^2 + 13D$, **about 12 D² per layer**.
# - Production attention: one fused `qkv` layer, `.chunk(3, dim=-1)`, one `F.scaled_dot_product_attention(...,
#   is_causal=True)`; the function does not read `self.training`, so `dropout_p` must be 0 outside training.
#
# **Next:** notebook 08 stacks `num_layers` blocks between token and position embeddings and an output
# layer, and makes a language model, TinyLM.

# %% [markdown] lang="zh"
# 在 `eval()` 下，你的模块两次输出相同，陷阱版却不同：这就是那个 bug，而且它偏偏出在本不该有随机性的环节（评估、生成），别处都看不出异样。在 `train()`
# 下，你的模块也是随机的，这本来就该如此；它多次调用的平均值很接近 `eval()` 的输出：丢弃一部分权重、再把保留的除以
# `1 - p`，平均下来什么也没改变。
#
# ## 小结
#
# - 一个块先是注意力（各位置交换信息），再是逐位置的前馈网络，每个都包在残差连接和层归一化里；输入 `(B, T, D)`，输出
#   `(B, T, D)`，所以块可以一层层堆起来。
# - Post-LN：`x = norm1(x + attn(x))`，`x = norm2(x + ffn(x))`。Pre-LN：`x = x + attn(norm1(x))`，`x = x + ffn(norm2(x))`：残差流从不归一化，初始化时梯度表现良好，不需要预热（Xiong 等人，2020），模型最后再加一个层归一化。
# - 它就是 `nn.TransformerEncoderLayer(..., dropout=0.0, activation="gelu", batch_first=True,
#   norm_first=...)`。注意：它的 bool
#   `src_mask` 里 True 表示遮住。
# - 掩码从外部传入，原样传下去；加了因果掩码，后面的 token 不会改变前面的任何输出。
# - 参数量：注意力 $4(D^2 + D)$，前馈网络 $2 D d_\text{ff} + d_\text{ff} + D$，归一化 $4D$；`d_ff = 4 D` 时为
#   $12D^2 + 13D$，**每层约 12 D²**。
# - 生产代码里的注意力：一个融合的 `qkv` 层，`.chunk(3, dim=-1)`，一次 `F.scaled_dot_product_attention(...,
#   is_causal=True)`。这个函数不读
#   `self.training`，所以不在训练时 `dropout_p` 必须为 0。
#
# **下一课：** 笔记本 08 把 `num_layers` 个块堆在 token 嵌入、位置嵌入和输出层之间，做成一个语言模型：TinyLM。
