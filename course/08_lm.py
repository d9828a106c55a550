# %% [markdown]
# # 08 · The language model
#
# A stack of Transformer blocks turns a sequence of vectors into another. A **language model** adds what
# is needed to read token ids and to predict the next token: embeddings at the bottom, an output layer at
# the top, and a loss that scores every position's guess. By the end of this notebook you can:
#
# 1. write the **causal language-model loss**: shift the labels by one, cross-entropy on the raw logits,
#    targets marked `-100` left out;
# 2. write `TinyLM(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)`, a GPT-2-style
#    decoder: token and position embeddings, blocks with a causal mask, a final LayerNorm, and an output
#    layer **tied** to the token embedding, initialised as GPT-2 is;
# 3. check the numbers every language model should show at initialisation: logits `(B, T, V)`, a loss near
#    `ln V`, and no position seeing the future;
# 4. count where the parameters are (embeddings vs blocks, about `12·L·D² + V·D`).
#
# Shapes: `B` batch, `T` positions, `D` = `d_model`, `V` = `vocab_size`, `L` = `num_layers`.

# %% [markdown] lang="zh"
# # 08 · 语言模型
#
# 把 Transformer 块（Transformer block）一层层叠起来，能把一串向量变成另一串向量。**语言模型**（language model）还要再补几样东西，才能读入 token id、预测下一个 token：底部放嵌入（embedding），顶部放输出层，再配一个损失，给每个位置的猜测打分。学完这个笔记本，你应该能：
#
# 1. 写出**因果语言模型的损失**：标签错开一位，直接在原始 logits 上算交叉熵损失（cross-entropy loss），标成 `-100` 的目标不计入；
# 2. 写出 `TinyLM(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)`，一个 GPT-2 风格的仅解码器（decoder-only）模型：token 嵌入加位置嵌入，若干个带因果掩码（causal mask）的块，最后一个层归一化（LayerNorm），以及一个和 token 嵌入**权重共享**（weight tying）的输出层，并按 GPT-2 的方式初始化（initialization）；
# 3. 检查每个语言模型在初始化时都该有的几个数字：logits 的形状（shape）是 `(B, T, V)`，损失接近 `ln V`，没有哪个位置能看到未来；
# 4. 数清参数（parameter）都在哪里（嵌入还是各个块，约 `12·L·D² + V·D`）。
#
# 形状记号：`B` 是批次（batch）大小，`T` 是位置数，`D` = `d_model`，`V` = `vocab_size`，`L` = `num_layers`。

# %%
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_causal_lm_loss, check_parameter_table, check_tiny_lm
from tinylm_solutions.attention import causal_mask  # given code from earlier notebooks
from tinylm_solutions.block import TransformerBlock
from tinylm_solutions.data import default_corpus, get_batch
from tinylm_solutions.norm import LayerNorm

_ = torch.manual_seed(0)

# %% lang="zh"
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_causal_lm_loss, check_parameter_table, check_tiny_lm
from tinylm_solutions.attention import causal_mask  # 前面笔记本里给出的代码
from tinylm_solutions.block import TransformerBlock
from tinylm_solutions.data import default_corpus, get_batch
from tinylm_solutions.norm import LayerNorm

_ = torch.manual_seed(0)

# %% [markdown]
# **About the imports.** The parts come from the course's reference package, so that a bug left in an
# earlier notebook can't block this one: `TransformerBlock(d_model, num_heads, d_ff)` is notebook 07's
# Pre-LN block (`block(x, mask) -> (B, T, D)`), `LayerNorm(d_model)` notebook 06's, `causal_mask(T)` notebook
# 01's (bool `(T, T)`, True = may attend). `default_corpus()` and `get_batch` give text and batches; notebook
# 09 looks at them closely. The demos after each exercise use *your* code: finish an exercise (its check
# passes) before running the cells below it.
#
# ## 1. From token ids to vectors
#
# A model reads **token ids**: integers in `0 .. V-1`, one per token (this notebook uses characters; notebook
# 09 builds tokenizers). An `nn.Embedding(V, D)` is a table of `V` rows of width `D`; calling it on ids
# looks the rows up. It is the same as multiplying a one-hot vector by the table, without building the
# one-hot vectors:

# %% [markdown] lang="zh"
# **关于导入。** 这些部件都取自课程的参考实现包，这样前面笔记本里留下的 bug 就卡不住这里：`TransformerBlock(d_model, num_heads, d_ff)` 是笔记本 07 的前置层归一化（Pre-LN）块（`block(x, mask) -> (B, T, D)`），`LayerNorm(d_model)` 来自笔记本 06，`causal_mask(T)` 来自笔记本 01（bool 型 `(T, T)`，True = 可以关注）。`default_corpus()` 和 `get_batch` 负责提供文本和批次，笔记本 09 会仔细讲它们。每个练习（exercise）后面的演示用的都是*你*写的代码：先做完练习，等它的检查（check）通过了，再运行它下面的单元格。
#
# ## 1. 从 token id 到向量
#
# 模型读入的是 **token id**：`0 .. V-1` 之间的整数，每个 token 一个。这个笔记本拿字符当 token，分词器（tokenizer）留到笔记本 09 再建。`nn.Embedding(V, D)` 就是一张 `V` 行的表，每行宽 `D`；用 id 去调用它，就是按 id 把对应的行查出来。这和拿 one-hot 向量去乘这张表是一回事，只是省掉了构造 one-hot 向量这一步：

# %%
text = default_corpus(max_chars=20_000)
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}  # character -> id
itos = {i: c for c, i in stoi.items()}  # id -> character
data = torch.tensor([stoi[c] for c in text])  # (N,) token ids
V = len(chars)
print(f"{len(text):,} characters, vocabulary V = {V}; the first 40: {text[:40]!r}")

emb = nn.Embedding(V, 8)
ids = data[:5][None, :]  # (1, 5)
with torch.no_grad():
    looked_up = emb(ids)  # (1, 5, 8)
    one_hot = F.one_hot(ids, V).float() @ emb.weight  # (1, 5, V) @ (V, 8) -> (1, 5, 8)
print(ids.tolist(), "->", tuple(looked_up.shape), "; same as one-hot @ table:", torch.allclose(looked_up, one_hot))

# %% lang="zh"
text = default_corpus(max_chars=20_000)
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}  # 字符 -> id
itos = {i: c for c, i in stoi.items()}  # id -> 字符
data = torch.tensor([stoi[c] for c in text])  # (N,)，每个 token 的编号
V = len(chars)
print(f"{len(text):,} characters, vocabulary V = {V}; the first 40: {text[:40]!r}")

emb = nn.Embedding(V, 8)
ids = data[:5][None, :]  # (1, 5)
with torch.no_grad():
    looked_up = emb(ids)  # (1, 5, 8)
    one_hot = F.one_hot(ids, V).float() @ emb.weight  # (1, 5, V) @ (V, 8) -> (1, 5, 8)
print(ids.tolist(), "->", tuple(looked_up.shape), "; same as one-hot @ table:", torch.allclose(looked_up, one_hot))

# %% [markdown]
# Attention has no notion of order (notebook 04), so GPT-2 adds a second table, a **learned position
# embedding** `nn.Embedding(max_seq_len, D)`: row `t` is added to the token at position `t`. That table has
# `max_seq_len` rows and no more: a model built for `max_seq_len` positions **cannot** read a longer input.
# Indexing row `max_seq_len` fails deep inside PyTorch with an `IndexError` that doesn't say why; your model
# will check the length itself and raise a `ValueError` that does.
#
# ## 2. What a language model is trained to do
#
# At every position `t`, after reading tokens `0 .. t`, the model outputs **logits**: `V` unnormalised
# scores, one per possible next token. Softmax turns them into a probability distribution. Training asks
# for a high probability on the token that actually comes next, `t + 1`, with the **cross-entropy**
# $-\log p(x_{t+1} \mid x_{\le t})$, averaged over positions. One sequence of `T` tokens thus gives `T - 1`
# training examples at once, thanks to the causal mask: position `t` cannot peek at `t + 1`.
#
# ```
# input_ids   h   e   l   l   o          logits (B, T, V): row t scores every candidate for token t + 1
# position    0   1   2   3   4
# target      e   l   l   o   -          logits[:, :-1] is scored against labels[:, 1:]
# ```
#
# **Labels aligned with the inputs.** Following Hugging Face's convention, the model receives
# `labels = input_ids` (aligned, not shifted) and does the shift itself: the last position has no next token
# (drop `logits[:, -1]`), the first token is nobody's target (drop `labels[:, 0]`).
#
# **Ignored targets.** Sequences of different lengths are padded to one length; a padded position must not
# be scored. The convention: its label is **-100**, the default `ignore_index` of `F.cross_entropy`, which
# leaves those targets out of the sum *and* of the count. (Writing the pad id, often 0, into the labels
# instead would train the model to predict padding, and token 0 is a real token.)
#
# **Raw logits go in.** `F.cross_entropy(logits, targets)` applies `log_softmax` itself (PyTorch docs:
# "input is expected to contain the unnormalized logits"). It wants the classes in dimension 1: flatten
# `(B, T-1, V)` to `(B·(T-1), V)` and the targets to `(B·(T-1),)`.
#
# A uniform guess gives every token probability `1/V`, so its loss is $-\log(1/V) = \ln V$: the loss
# an untrained model should start near.

# %% [markdown] lang="zh"
# 注意力（attention）本身不分先后顺序（笔记本 04），所以 GPT-2 又加了第二张表，即**可学习位置嵌入**（learned positional embedding）`nn.Embedding(max_seq_len, D)`：第 `t` 行加到位置 `t` 的 token 上。这张表只有 `max_seq_len` 行，一行也不多：按 `max_seq_len` 个位置建的模型，**读不了**更长的输入。去取第 `max_seq_len` 行，会在 PyTorch 深处报一个 `IndexError`，却不说明原因；你的模型要自己检查长度，抛出一个把原因讲清楚的 `ValueError`。
#
# ## 2. 语言模型要学的是什么
#
# 在每个位置 `t`，读完 token `0 .. t` 之后，模型输出 **logits**：`V` 个未归一化的分数，每个可能的下一个 token 对应一个。softmax 把它们变成一个概率分布。训练要求模型给真正的下一个 token（位置 `t + 1` 上的那个）高概率，衡量标准是**交叉熵** $-\log p(x_{t+1} \mid x_{\le t})$，再对所有位置取平均。所以一条 `T` 个 token 的序列，一次就能提供 `T - 1` 个训练样本，这要归功于因果掩码：位置 `t` 偷看不到 `t + 1`。
#
# ```
# input_ids   h   e   l   l   o          logits (B, T, V): 第 t 行给 token t + 1 的每个候选打分
# position    0   1   2   3   4
# target      e   l   l   o   -          logits[:, :-1] 与 labels[:, 1:] 对照计分
# ```
#
# **标签与输入对齐。** 按 Hugging Face 的约定，模型接收的是 `labels = input_ids`（对齐的，没有错位），错位由模型自己来做：最后一个位置没有下一个 token（丢掉 `logits[:, -1]`），第一个 token 不是任何位置的目标（丢掉 `labels[:, 0]`）。
#
# **被忽略的目标。** 长短不一的序列要填充（padding）到同一长度，填充出来的位置不能计分。约定是把它的标签写成 **-100**，这正是 `F.cross_entropy` 默认的 `ignore_index`：这些目标既不进求和，*也*不进计数。反过来，要是把填充 id（常常是 0）写进标签，模型就会被训练去预测填充，可 token 0 是一个真实存在的 token。
#
# **传入原始 logits。** `F.cross_entropy(logits, targets)` 内部自己会做 `log_softmax`（PyTorch 文档写明：输入应当是未经归一化的 logits）。它要求类别放在第 1 维：把 `(B, T-1, V)` 展平成 `(B·(T-1), V)`，目标展平成 `(B·(T-1),)`。
#
# 均匀猜测给每个 token 的概率都是 `1/V`，损失就是 $-\log(1/V) = \ln V$：没训练过的模型，损失一开始就应该在这附近。

# %%
B, T = 2, 6
uniform = torch.zeros(B, T, V)  # (B, T, V): equal scores for every token
targets = torch.randint(V, (B, T - 1))  # (B, T-1)
print(f"uniform logits: loss {F.cross_entropy(uniform[:, :-1].reshape(-1, V), targets.reshape(-1)).item():.4f}, "
      f"ln V = {math.log(V):.4f}")

# %% lang="zh"
B, T = 2, 6
uniform = torch.zeros(B, T, V)  # (B, T, V)：每个 token 的分数都相等
targets = torch.randint(V, (B, T - 1))  # (B, T-1)
print(f"uniform logits: loss {F.cross_entropy(uniform[:, :-1].reshape(-1, V), targets.reshape(-1)).item():.4f}, "
      f"ln V = {math.log(V):.4f}")

# %% [markdown]
# ### Exercise 1: `causal_lm_loss(logits, labels)`
#
# - `logits`: `(B, T, V)` float, the model's raw scores; `labels`: `(B, T)` integer, **aligned with the
#   inputs**, some entries possibly `-100`.
# - Return the mean cross-entropy of `logits[:, t]` against `labels[:, t + 1]` over every target that is
#   not `-100`: a 0-dim tensor of the logits' dtype, with gradients flowing to the logits (a tensor, not
#   `.item()`'s Python number: `loss.backward()` needs the graph).
#
# **What the check tries:** random logits of its own sizes (`B`, `T`, `V` all different) in float64 and in
# float32, labels that are all token ids (0 among them), then labels with some targets set to `-100` (it also
# changes the logits of those positions and expects the same loss). It compares with the reference and names
# the usual slips: no shift, a shift by two or the wrong way, a softmax before the loss, `-100` scored as a
# token, `ignore_index=0`, a sum instead of a mean.
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Two slices, one reshape. The prediction made at position `t` is scored against the token at `t + 1`: drop
# the last prediction (it has no next token) and the first label (it has no predecessor), and the two line
# up. What is left is an ordinary classification loss over all `B × (T-1)` positions at once, which wants
# them flattened into one list.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# Both slices are along dimension 1 (time): the logits without their last position, `(B, T-1, V)`, and the
# labels without their first, `(B, T-1)`. `F.cross_entropy` wants `(N, V)` and `(N,)`; its default
# `ignore_index` is already -100, and it averages over the targets it does not ignore. Flatten with
# `.reshape` (`-1` for `N`; `V` is `logits.size(-1)`): a slice along time is not contiguous, and `.view`
# refuses it. Return the loss tensor itself, not `.item()`.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `logits[:, :-1]` (the predictions that have a next token) against `labels[:, 1:]` (the tokens that have a
# predecessor):
# `return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1), ignore_index=-100)`
# </details>

# %% [markdown] lang="zh"
# ### 练习 1：`causal_lm_loss(logits, labels)`
#
# - `logits`：`(B, T, V)` 的浮点张量（tensor），模型给出的原始分数；`labels`：`(B, T)` 的整数张量，**与输入对齐**，其中可能有 `-100`。
# - 返回 `logits[:, t]` 对 `labels[:, t + 1]` 的平均交叉熵，只算不是 `-100` 的目标。返回值是一个 0 维张量，dtype 和 logits 相同，梯度（gradient）要能流回 logits（所以要返回张量，不能返回 `.item()` 得到的 Python 数：`loss.backward()` 需要计算图）。
#
# **检查会试什么：** 它按自己定的尺寸生成随机 logits（`B`、`T`、`V` 互不相同），float64 和 float32 各试一遍；标签先全用 token id（里面有 0），再把一部分目标设成 `-100`（同时改掉这些位置的 logits，并要求损失不变）。它把结果和参考实现比对，还会点出常见的失误：没有错位，错了两位或者错反了方向，算损失前先做了 softmax，把 `-100` 当成 token 计分，写成 `ignore_index=0`，求和而不是取平均。
#
# **难度：** ★☆☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 两次切片，一次 reshape。位置 `t` 的预测，要和位置 `t + 1` 上的 token 对照：去掉最后一个预测（它没有下一个 token），再去掉第一个标签（它前面没有 token），两边就对齐了。剩下的就是一个普通的分类损失，一次覆盖全部 `B × (T-1)` 个位置，所以要先把这些位置展平成一个列表。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 两次切片都沿第 1 维（时间维）：logits 去掉最后一个位置，得到 `(B, T-1, V)`；标签去掉第一个位置，得到 `(B, T-1)`。`F.cross_entropy` 要的是 `(N, V)` 和 `(N,)`；它默认的 `ignore_index` 已经是 -100，而且只对没被忽略的目标取平均。展平用 `.reshape`（`N` 的位置写 `-1`；`V` 就是 `logits.size(-1)`）：沿时间维切出来的张量（tensor）在内存里不连续，`.view` 会拒绝它。直接返回损失张量本身，不要 `.item()`。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `logits[:, :-1]`（有下一个 token 的那些预测）对照 `labels[:, 1:]`（前面有 token 的那些标签）：
# `return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1), ignore_index=-100)`
# </details>

# %% solution="causal_lm_loss"
def causal_lm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy: logits[:, t] scored against labels[:, t + 1], labels -100 left out.

    Args:
        logits: (B, T, V) float, unnormalised scores.
        labels: (B, T) integer, aligned with the inputs (usually labels = input_ids); -100 = not a target.

    Returns:
        0-dim tensor, the mean over the targets that are not -100 (F.cross_entropy, ignore_index=-100).
    """
    ### BEGIN SOLUTION
    V = logits.size(-1)
    shifted_logits = logits[:, :-1]  # (B, T-1, V): positions that have a next token
    targets = labels[:, 1:]  # (B, T-1): the next token of each
    return F.cross_entropy(shifted_logits.reshape(-1, V), targets.reshape(-1), ignore_index=-100)
    ### END SOLUTION


# %% lang="zh"
def causal_lm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """下一个 token 的平均交叉熵：用 logits[:, t] 去对 labels[:, t + 1] 打分，标签为 -100 的不算。

    参数：
        logits: (B, T, V) 浮点数，未归一化的分数。
        labels: (B, T) 整数，和输入对齐（通常 labels = input_ids）；-100 表示不是预测目标。

    返回：
        0 维张量，在所有不为 -100 的目标上的平均（F.cross_entropy，ignore_index=-100）。
    """
    ### BEGIN SOLUTION
    V = logits.size(-1)
    shifted_logits = logits[:, :-1]  # (B, T-1, V)：有下一个 token 的那些位置
    targets = labels[:, 1:]  # (B, T-1)：每个位置的下一个 token
    return F.cross_entropy(shifted_logits.reshape(-1, V), targets.reshape(-1), ignore_index=-100)
    ### END SOLUTION

# %% test="causal_lm_loss_check"
from tinylm_checks import check_causal_lm_loss
check_causal_lm_loss(causal_lm_loss)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_causal_lm_loss(causal_lm_loss, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** the `expected:` line gives the reference value; compare it with what you get on
# the `tried:` input, then print `logits[:, :-1].shape` and `labels[:, 1:].shape` in your function.
#
# Your loss with ignored targets: the same loss whatever the logits say at the positions whose target is
# `-100`, and the same as leaving those positions out by hand.

# %% [markdown] lang="zh"
# **如果检查没通过：** “期望”那一行给出了参考值；拿它和你在“尝试”那一行所说的输入上得到的值比一比，然后在你的函数里打印 `logits[:, :-1].shape` 和 `labels[:, 1:].shape`。
#
# 下面看看你的损失遇到被忽略的目标时表现如何：目标为 `-100` 的那些位置，logits 怎么变，损失都不变；而且它和手动去掉这些位置后算出的损失一样。

# %%
logits = torch.randn(1, 6, V)  # (1, T, V)
labels = data[:6][None, :].clone()  # (1, T)
labels[0, 4:] = -100  # the last two targets are padding
changed = logits.clone()
changed[0, 3:] = 100 * torch.randn(3, V)  # wild predictions where nothing is scored
print(f"with -100 targets: {causal_lm_loss(logits, labels).item():.4f}; "
      f"wild logits where nothing is scored: {causal_lm_loss(changed, labels).item():.4f}; "
      f"padding cut off by hand: {causal_lm_loss(logits[:, :4], labels[:, :4]).item():.4f}")

# %% lang="zh"
logits = torch.randn(1, 6, V)  # (1, T, V)
labels = data[:6][None, :].clone()  # (1, T)
labels[0, 4:] = -100  # 最后两个目标是填充
changed = logits.clone()
changed[0, 3:] = 100 * torch.randn(3, V)  # 在不计分的位置上乱猜
print(f"with -100 targets: {causal_lm_loss(logits, labels).item():.4f}; "
      f"wild logits where nothing is scored: {causal_lm_loss(changed, labels).item():.4f}; "
      f"padding cut off by hand: {causal_lm_loss(logits[:, :4], labels[:, :4]).item():.4f}")

# %% [markdown]
# ## 3. The model: TinyLM
#
# ```
# input_ids (B, T) ─> token_emb ─> (B, T, D) ─┐
# positions 0..T-1 ─> pos_emb   ─> (T, D) ────(+)─> x (B, T, D)
# x ─> blocks[0](x, mask) ─> ... ─> blocks[L-1](x, mask) ─> norm ─> lm_head ─> logits (B, T, V)
# ```
#
# - **One causal mask**, `causal_mask(T)`, built once per forward and handed to every block.
# - **A final LayerNorm.** In a Pre-LN stack the residual stream is never normalised and grows with depth
#   (notebook 07); GPT-2 normalises it once after the last block (its `ln_f`), before the output layer.
# - **Weight tying.** The output layer `lm_head = nn.Linear(D, V, bias=False)` maps a vector to a score per
#   token; its weight is `(V, D)`, the shape of the token embedding. Press & Wolf (2017) use **one** matrix
#   for both (Vaswani et al. §3.4 and GPT-2 do too): `V·D` parameters fewer, and a token's input and output
#   vectors learn together. "One matrix" means one `nn.Parameter` object used twice:
#   `self.lm_head.weight = self.token_emb.weight`. A copy (`.clone()`, `copy_`) has equal values at first, but
#   it is a second tensor, and the first optimizer step makes the two different. A second Parameter over the
#   same storage (`nn.Parameter(self.token_emb.weight)`, or assigning `.data`) keeps the values shared, yet
#   `model.parameters()` lists the matrix twice: the parameter count counts `V·D` twice, and an optimizer
#   updates it twice per step (Adam with two sets of moments for one matrix).
# - **GPT-2's initialisation** (Radford et al. 2019, §2.3; nanoGPT's `_init_weights`): every `nn.Linear` and
#   `nn.Embedding` weight `N(0, 0.02)`, every bias 0; the two projections that write into the residual stream
#   in each block (the weights of `attn.W_O` and `ffn.linear2`; their biases stay 0) get std `0.02 / sqrt(2·L)`,
#   so that the `2L` contributions added to the stream don't grow its size with the number of layers `L`. PyTorch's defaults are
#   different: `nn.Embedding` starts at `N(0, 1)`, which with tied weights makes the initial logits huge.
#
# ### Exercise 2: `TinyLM`
#
# `__init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)`: call `super().__init__()`,
# store `self.max_seq_len`, and create, under exactly these names (the check copies weights in by name):
# `self.token_emb = nn.Embedding(vocab_size, d_model)`, `self.pos_emb = nn.Embedding(max_seq_len, d_model)`,
# `self.blocks = nn.ModuleList(...)` of `num_layers` `TransformerBlock(d_model, num_heads, d_ff)`,
# `self.norm = LayerNorm(d_model)` and `self.lm_head = nn.Linear(d_model, vocab_size, bias=False)`. Tie
# `lm_head`'s weight to `token_emb`'s, then initialise as GPT-2 does (above).
#
# `forward(self, input_ids, labels=None)`: `input_ids (B, T)` integer. Raise a `ValueError` that names
# `max_seq_len` when `T > self.max_seq_len`. The positions are `0 .. T-1` for this input's `T` (where a token
# sits, not which token it is), and the causal mask is `T x T`: `max_seq_len` is only the upper limit. Return the pair `(logits (B, T, V), loss)`, where `loss` is
# **your** `causal_lm_loss(logits, labels)` when `labels` is given and `None` otherwise.
#
# `get_num_params` is given (nanoGPT's): it counts each tensor once, and without the position embedding
# unless you ask for `non_embedding=False`.
#
# **What the check tries:** it builds your class with its own sizes, checks the five parts and that
# `lm_head.weight` **is** `token_emb.weight`, copies random weights in and compares the logits with the
# reference's; it changes the tokens after a position (nothing before may move), compares the loss with
# labels of token ids and with `-100` targets, feeds `max_seq_len` tokens (must work) and `max_seq_len + 1`
# (must raise `ValueError`), takes one SGD step on both models (the tie must hold and the logits stay equal),
# and on a fresh model of its own measures the initialisation's standard deviations and the loss at init
# (within 0.25 of `ln V`).
#
# **Difficulty:** ★★☆ · **Time:** about 25 min
#
# <details><summary>Hint 1: the idea</summary>
#
# `forward` is the diagram above, left to right: the token and position embeddings added, the blocks in
# turn with one causal mask, the final norm, the output layer, then the loss. `__init__` does three things
# after creating the layers, in this order: tie (one Parameter object used twice, not a copy), then
# initialise every weight as GPT-2 does, then give the two projections that write into the residual
# stream of each block their smaller standard deviation.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - The tie: assign `token_emb`'s weight, the Parameter object itself, to `lm_head`'s `weight` attribute.
# - The initialisation: a loop over `self.modules()` (or `self.apply(fn)`): for every `nn.Linear` and
#   `nn.Embedding`, `nn.init.normal_` on its weight with mean 0 and std 0.02; `nn.init.zeros_` on its bias
#   where a bias exists. Then a loop over `self.named_parameters()`: the names ending in
#   `"attn.W_O.weight"` or `"ffn.linear2.weight"` get `nn.init.normal_` again, with std
#   `0.02 / sqrt(2 * num_layers)`.
# - `forward`, in order: `B` and `T` from `input_ids.shape`; the length check (`T > self.max_seq_len`
#   raises the `ValueError`); the positions `0 .. T-1`, a `(T,)` tensor on `input_ids`'s device; the two
#   embeddings added, `(B, T, D) + (T, D)`; `causal_mask(T)`, once; each block of `self.blocks` on `x` and
#   the mask; `self.norm`, then `self.lm_head`: the logits `(B, T, V)`; your `causal_lm_loss` when
#   `labels` is given, `None` otherwise; return the pair.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# In `__init__`: `self.lm_head.weight = self.token_emb.weight`; in the loop over the modules,
# `nn.init.normal_(m.weight, mean=0.0, std=0.02)` and `nn.init.zeros_(m.bias)`; in the loop over the
# named parameters, `nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * num_layers))`.
#
# In `forward`: `B, T = input_ids.shape`; the length check;
# `x = self.token_emb(input_ids) + self.pos_emb(torch.arange(T, device=input_ids.device))`;
# `mask = causal_mask(T)`; `for block in self.blocks: x = block(x, mask)`;
# `logits = self.lm_head(self.norm(x))`; `loss = None if labels is None else causal_lm_loss(logits, labels)`;
# `return logits, loss`.
# </details>

# %% [markdown] lang="zh"
# ## 3. 模型：TinyLM
#
# ```
# input_ids (B, T) ─> token_emb ─> (B, T, D) ─┐
# positions 0..T-1 ─> pos_emb   ─> (T, D) ────(+)─> x (B, T, D)
# x ─> blocks[0](x, mask) ─> ... ─> blocks[L-1](x, mask) ─> norm ─> lm_head ─> logits (B, T, V)
# ```
#
# - **只用一个因果掩码。** `causal_mask(T)` 每次前向只建一次，交给每一个块。
# - **最后一个层归一化。** 在 Pre-LN 的堆叠里，残差流从头到尾都不做归一化，会随深度变大（笔记本 07）；GPT-2 在最后一个块之后、输出层之前把它归一化一次（也就是它的 `ln_f`）。
# - **权重共享。** 输出层 `lm_head = nn.Linear(D, V, bias=False)` 把一个向量映射成每个 token 一个分数；它的权重是 `(V, D)`，和 token 嵌入的形状一样。Press 和 Wolf（2017）让两者共用**同一个**矩阵（原始 Transformer 和 GPT-2 也是这样，见 Vaswani 等人，2017，§3.4）：参数少了 `V·D` 个，而且一个 token 的输入向量和输出向量会一起学习。“同一个矩阵”指的是同一个 `nn.Parameter` 对象用两次：`self.lm_head.weight = self.token_emb.weight`。复制一份（`.clone()`、`copy_`）一开始数值相等，但它是第二个张量，优化器（optimizer）走完第一步，两者就不一样了。在同一块存储上再建一个 Parameter（`nn.Parameter(self.token_emb.weight)`，或者去赋值 `.data`），数值倒是共享了，可 `model.parameters()` 会把这个矩阵列两次：参数量把 `V·D` 算了两遍，优化器每一步也会更新它两次（Adam 会给同一个矩阵配两套矩估计）。
# - **GPT-2 的初始化**（Radford 等人，2019，§2.3；nanoGPT 的 `_init_weights`）：所有 `nn.Linear` 和 `nn.Embedding` 的权重取 `N(0, 0.02)`，所有偏置取 0；每个块里有两个投影往残差流里写（`attn.W_O` 和 `ffn.linear2` 的权重；它们的偏置仍为 0），它们的标准差取 `0.02 / sqrt(2·L)`，这样加到残差流上的 `2L` 份贡献不会让它的大小随层数 `L` 增长。PyTorch 的默认值不一样：`nn.Embedding` 从 `N(0, 1)` 开始，权重共享时，这会让初始 logits 大得离谱。
#
# ### 练习 2：`TinyLM`
#
# `__init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)`：调用 `super().__init__()`，保存 `self.max_seq_len`，然后创建下面这些部件，名字必须一字不差（检查是按名字把权重拷进来的）：`self.token_emb = nn.Embedding(vocab_size, d_model)`、`self.pos_emb = nn.Embedding(max_seq_len, d_model)`、由 `num_layers` 个 `TransformerBlock(d_model, num_heads, d_ff)` 组成的 `self.blocks = nn.ModuleList(...)`、`self.norm = LayerNorm(d_model)` 和 `self.lm_head = nn.Linear(d_model, vocab_size, bias=False)`。让 `lm_head` 的权重和 `token_emb` 的权重共享，然后按 GPT-2 的方式初始化（见上文）。
#
# `forward(self, input_ids, labels=None)`：`input_ids (B, T)` 是整数。`T > self.max_seq_len` 时，抛出一个提到 `max_seq_len` 的 `ValueError`。位置取这次输入自己的 `T` 对应的 `0 .. T-1`（表示 token 排在第几位，而不是它是哪个 token），因果掩码是 `T x T` 的：`max_seq_len` 只是上限。返回二元组 `(logits (B, T, V), loss)`：传了 `labels` 时，`loss` 是**你自己写的** `causal_lm_loss(logits, labels)`，否则是 `None`。
#
# `get_num_params` 已经给好了（照搬 nanoGPT）：每个张量只算一次，而且不算位置嵌入，除非你指定 `non_embedding=False`。
#
# **检查会试什么：** 它用自己的尺寸构造你的类，检查五个部件都在，`lm_head.weight` **就是** `token_emb.weight`；把随机权重拷进去，和参考实现比对 logits；改掉某个位置之后的 token（它之前的位置一点都不许变）；分别用全是 token id 的标签和带 `-100` 的标签比对损失；喂入 `max_seq_len` 个 token（必须能跑）和 `max_seq_len + 1` 个（必须抛出 `ValueError`）；在两个模型上各走一步 SGD（权重必须仍然共享，logits 仍然相等）；最后在它自己新建的模型上，测量初始化后的各个标准差和初始损失（与 `ln V` 相差不超过 0.25）。
#
# **难度：** ★★☆ · **用时：** 约 25 分钟
#
# <details><summary>提示 1：思路</summary>
#
# `forward` 就是上面那张图，从左往右走一遍：token 嵌入（embedding）加上位置嵌入，依次过每个块，所有块共用一个因果掩码（causal mask）；然后是最后的归一化、输出层，最后算损失。`__init__` 建好各层之后，按顺序做三件事：先做权重共享（weight tying），同一个 Parameter 对象用两次，不是复制；再按 GPT-2 的方式初始化（initialization）所有权重；最后给每个块里往残差流写入的那两个投影换上更小的标准差。
# </details>
#
# <details><summary>提示 2：各部分写在哪里</summary>
#
# - 权重共享（weight tying）：把 `token_emb` 的权重，也就是那个 Parameter 对象本身，赋给 `lm_head` 的 `weight` 属性。
# - 初始化（initialization）：遍历 `self.modules()`（或者用 `self.apply(fn)`）：对每个 `nn.Linear` 和 `nn.Embedding`，在权重上调用 `nn.init.normal_`，均值 0，标准差 0.02；有偏置的，在偏置上调用 `nn.init.zeros_`。然后遍历 `self.named_parameters()`：名字以 `"attn.W_O.weight"` 或 `"ffn.linear2.weight"` 结尾的，再调用一次 `nn.init.normal_`，标准差为 `0.02 / sqrt(2 * num_layers)`。
# - `forward` 按顺序：从 `input_ids.shape` 取出 `B` 和 `T`；长度检查（`T > self.max_seq_len` 时抛出 `ValueError`）；位置 `0 .. T-1`，一个放在 `input_ids` 所在设备上的 `(T,)` 张量（tensor）；两个嵌入相加，`(B, T, D) + (T, D)`；`causal_mask(T)`，只建一次；`self.blocks` 里的每个块依次作用在 `x` 和掩码上；先 `self.norm`，再 `self.lm_head`，得到 logits `(B, T, V)`；传了 `labels` 就调用你的 `causal_lm_loss`，否则为 `None`；返回这一对。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# 在 `__init__` 里：`self.lm_head.weight = self.token_emb.weight`；在遍历模块的循环里，`nn.init.normal_(m.weight, mean=0.0, std=0.02)` 和 `nn.init.zeros_(m.bias)`；在遍历具名参数的循环里，`nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * num_layers))`。
#
# 在 `forward` 里：`B, T = input_ids.shape`；长度检查；
# `x = self.token_emb(input_ids) + self.pos_emb(torch.arange(T, device=input_ids.device))`；
# `mask = causal_mask(T)`；`for block in self.blocks: x = block(x, mask)`；
# `logits = self.lm_head(self.norm(x))`；`loss = None if labels is None else causal_lm_loss(logits, labels)`；
# `return logits, loss`。
# </details>

# %% solution="tiny_lm"
class TinyLM(nn.Module):
    """A decoder-only Transformer language model, GPT-2 style.

    Args:
        vocab_size: V; max_seq_len: the longest input; d_model: D; num_heads: H; num_layers: L; d_ff: the
        FFN's hidden width.

    Attributes:
        token_emb: nn.Embedding(V, D); pos_emb: nn.Embedding(max_seq_len, D); blocks: nn.ModuleList of L
        TransformerBlock; norm: the final LayerNorm(D); lm_head: nn.Linear(D, V, bias=False), its weight
        *is* token_emb.weight.

    forward(input_ids (B, T) integer, labels (B, T) or None) -> (logits (B, T, V), loss or None).
    Raises ValueError if T > max_seq_len.
    """

    def __init__(self, vocab_size: int, max_seq_len: int, d_model: int, num_heads: int, num_layers: int,
                 d_ff: int):
        ### BEGIN SOLUTION
        super().__init__()
        self.max_seq_len = max_seq_len
        self.token_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_seq_len, d_model)
        self.blocks = nn.ModuleList([TransformerBlock(d_model, num_heads, d_ff) for _ in range(num_layers)])
        self.norm = LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.token_emb.weight  # tied: one Parameter, V x D
        for m in self.modules():  # GPT-2 init
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        for name, p in self.named_parameters():  # the projections into the residual stream
            if name.endswith(("attn.W_O.weight", "ffn.linear2.weight")):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * num_layers))
        ### END SOLUTION

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor | None = None):
        ### BEGIN SOLUTION
        B, T = input_ids.shape
        if T > self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}; crop the input")
        positions = torch.arange(T, device=input_ids.device)  # (T,)
        x = self.token_emb(input_ids) + self.pos_emb(positions)  # (B, T, D) + (T, D)
        mask = causal_mask(T)  # (T, T), True = may attend
        for block in self.blocks:
            x = block(x, mask)  # (B, T, D)
        logits = self.lm_head(self.norm(x))  # (B, T, V)
        loss = None if labels is None else causal_lm_loss(logits, labels)
        return logits, loss
        ### END SOLUTION

    def get_num_params(self, non_embedding: bool = True) -> int:
        """Number of parameters, each tensor once (so the tied weight once); minus the position embedding when
        non_embedding is True (nanoGPT's convention: the token embedding stays, it is also the output layer)."""
        n = sum(p.numel() for p in self.parameters())
        return n - self.pos_emb.weight.numel() if non_embedding else n


# %% lang="zh"
class TinyLM(nn.Module):
    """GPT-2 风格的仅解码器 Transformer 语言模型。

    参数：
        vocab_size: V；max_seq_len: 最长的输入；d_model: D；num_heads: H；num_layers: L；
        d_ff: 前馈网络的隐藏层宽度。

    属性：
        token_emb: nn.Embedding(V, D)；pos_emb: nn.Embedding(max_seq_len, D)；
        blocks: 由 L 个 TransformerBlock 组成的 nn.ModuleList；norm: 最后的 LayerNorm(D)；
        lm_head: nn.Linear(D, V, bias=False)，它的 weight *就是* token_emb.weight。

    forward(input_ids (B, T) 整数, labels (B, T) 或 None) -> (logits (B, T, V), loss 或 None)。
    T > max_seq_len 时抛出 ValueError。
    """

    def __init__(self, vocab_size: int, max_seq_len: int, d_model: int, num_heads: int, num_layers: int,
                 d_ff: int):
        ### BEGIN SOLUTION
        super().__init__()
        self.max_seq_len = max_seq_len
        self.token_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_seq_len, d_model)
        self.blocks = nn.ModuleList([TransformerBlock(d_model, num_heads, d_ff) for _ in range(num_layers)])
        self.norm = LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.token_emb.weight  # 权重共享：同一个 Parameter，V x D
        for m in self.modules():  # GPT-2 初始化
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        for name, p in self.named_parameters():  # 写回残差流的那些投影
            if name.endswith(("attn.W_O.weight", "ffn.linear2.weight")):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * num_layers))
        ### END SOLUTION

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor | None = None):
        ### BEGIN SOLUTION
        B, T = input_ids.shape
        if T > self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}; crop the input")
        positions = torch.arange(T, device=input_ids.device)  # (T,)
        x = self.token_emb(input_ids) + self.pos_emb(positions)  # (B, T, D) + (T, D)
        mask = causal_mask(T)  # (T, T)，True 表示可以关注
        for block in self.blocks:
            x = block(x, mask)  # (B, T, D)
        logits = self.lm_head(self.norm(x))  # (B, T, V)
        loss = None if labels is None else causal_lm_loss(logits, labels)
        return logits, loss
        ### END SOLUTION

    def get_num_params(self, non_embedding: bool = True) -> int:
        """参数个数，每个张量只算一次（所以共享的权重只算一次）；non_embedding 为 True 时减去位置嵌入
        （nanoGPT 的约定：token 嵌入保留，因为它同时也是输出层）。"""
        n = sum(p.numel() for p in self.parameters())
        return n - self.pos_emb.weight.numel() if non_embedding else n

# %% test="tiny_lm_check"
from tinylm_checks import check_tiny_lm
check_tiny_lm(TinyLM)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_tiny_lm(TinyLM, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** read the `tried:` line first. The check runs your model with *your*
# `causal_lm_loss`, so fix exercise 1 before this one. `likely mistake:` recognises, among others, a copy
# instead of a tie, a missing final norm, positions not added, no causal mask, labels not shifted or shifted
# twice, a softmax before the loss, `-100` scored, a missing length check and PyTorch's default
# initialisation.
#
# ## 4. Your model at initialisation
#
# A model for our characters (`V` from section 1), its logits, its loss next to `ln V`, and the tie:

# %% [markdown] lang="zh"
# **如果检查没通过：** 先读“尝试”那一行。检查跑你的模型时用的是*你的* `causal_lm_loss`，所以要先把练习 1 做对，再来做这一题。“可能的错误”那一行能认出的错误包括：复制了权重而不是共享，漏了最后的归一化，没加位置嵌入，没有因果掩码，标签没错位或者错位了两次，算损失前先做了 softmax，`-100` 被计了分，缺了长度检查，以及用了 PyTorch 的默认初始化。
#
# ## 4. 初始化时的模型
#
# 给我们的字符建一个模型（`V` 取自第 1 节），看看它的 logits、它的损失和 `ln V` 的对比，再确认权重确实共享：

# %%
torch.manual_seed(0)
model = TinyLM(vocab_size=V, max_seq_len=64, d_model=64, num_heads=4, num_layers=2, d_ff=256)  # yours
x, y = get_batch(data, batch_size=8, block_size=64, generator=torch.Generator().manual_seed(0))  # (8, 64) each
with torch.no_grad():
    logits, loss = model(x, labels=x)
print(f"logits {tuple(logits.shape)}; loss at init {loss.item():.3f}, ln V = {math.log(V):.3f}")
print("lm_head.weight is token_emb.weight:", model.lm_head.weight is model.token_emb.weight,
      "| one storage:", model.lm_head.weight.data_ptr() == model.token_emb.weight.data_ptr())

# %% lang="zh"
torch.manual_seed(0)
model = TinyLM(vocab_size=V, max_seq_len=64, d_model=64, num_heads=4, num_layers=2, d_ff=256)  # 你写的
x, y = get_batch(data, batch_size=8, block_size=64, generator=torch.Generator().manual_seed(0))  # 各为 (8, 64)
with torch.no_grad():
    logits, loss = model(x, labels=x)
print(f"logits {tuple(logits.shape)}; loss at init {loss.item():.3f}, ln V = {math.log(V):.3f}")
print("lm_head.weight is token_emb.weight:", model.lm_head.weight is model.token_emb.weight,
      "| one storage:", model.lm_head.weight.data_ptr() == model.token_emb.weight.data_ptr())

# %% [markdown]
# **Causal, end to end.** Change the characters from position 40 on; the logits at positions 0–39 must not
# move (each block is causal, and nothing else mixes positions):

# %% [markdown] lang="zh"
# **端到端的因果性。** 从位置 40 开始改掉字符；位置 0–39 的 logits 必须纹丝不动（每个块都是因果的，除此之外也没有别的地方会混合不同位置）：

# %%
x2 = x.clone()
x2[:, 40:] = torch.randint(V, (8, 24))
with torch.no_grad():
    moved = (model(x2)[0] - model(x)[0]).abs().amax(dim=(0, 2))  # (T,): largest change per position
print("largest change at positions 0-39:", f"{moved[:40].max().item():.1e}", "| at 40-63:", f"{moved[40:].min().item():.2f} or more")

# %% lang="zh"
x2 = x.clone()
x2[:, 40:] = torch.randint(V, (8, 24))
with torch.no_grad():
    moved = (model(x2)[0] - model(x)[0]).abs().amax(dim=(0, 2))  # (T,)：每个位置上最大的变化
print("largest change at positions 0-39:", f"{moved[:40].max().item():.1e}", "| at 40-63:", f"{moved[40:].min().item():.2f} or more")

# %% [markdown]
# **Too long.** A model built for 64 positions refuses 65, with your message:

# %% [markdown] lang="zh"
# **太长了。** 按 64 个位置建的模型不接受 65 个位置的输入，报出的正是你写的那条消息：

# %% tags=["raises-exception"]
model(torch.zeros(1, 65, dtype=torch.long))

# %% [markdown]
# **The shift, once.** `get_batch` (nanoGPT's) returns `(x, y)` with `y` **already shifted**:
# `y[:, t] = x[:, t + 1]`. Your model shifts `labels` itself, so it takes `labels=x`. Passing `y` as labels
# shifts twice: position `t` is scored against the token two steps ahead. Both run without an error; only
# the alignment tells them apart:

# %% [markdown] lang="zh"
# **错位只做一次。** `get_batch`（照搬 nanoGPT）返回 `(x, y)`，其中的 `y` **已经错开了一位**：`y[:, t] = x[:, t + 1]`。你的模型会自己对 `labels` 错位，所以该传 `labels=x`。要是把 `y` 当标签传进去，就错位了两次：位置 `t` 会去和往后第二个 token 对照。两种写法都不报错，只有对齐方式能把它们区分开：

# %%
show = lambda ids: "".join(itos[i] for i in ids.tolist()).replace("\n", "⏎")  # noqa: E731
print("input   x[0, :12]          :", show(x[0, :12]))
print("scored  labels=x  (x[1:13]):", show(x[0, 1:13]), "  the next character: right")
print("scored  labels=y  (y[1:13]):", show(y[0, 1:13]), "  two ahead: wrong")
with torch.no_grad():
    print(f"loss with labels=x: {model(x, labels=x)[1].item():.3f}; with labels=y: {model(x, labels=y)[1].item():.3f} "
          "(both about ln V now: the difference shows only in training, where labels=y learns the wrong task)")

# %% [markdown]
# ## 5. Where the parameters are
#
# Counting, part by part, for a model with tied weights (`d_ff = 4D`):
#
# | part | holds | parameters |
# |---|---|---|
# | `token_emb` | `(V, D)`, also the output layer's weight | $V D$ |
# | `pos_emb` | `(max_seq_len, D)` | $T_{max} D$ |
# | `blocks` | `L` blocks of `12 D² + 13 D` (notebook 07) | $L(12D^2 + 13D)$ |
# | `norm` | weight and bias | $2D$ |
# | `lm_head` | nothing of its own when tied | $0$ |
#
# So, roughly, **`12·L·D² + V·D`**: the blocks plus the (tied) embedding matrix. For a small vocabulary the
# blocks dominate; for GPT-2's 50,257 tokens the embedding is almost a third of the small model.
#
# ### Exercise 3: `parameter_table(model)`
#
# Return a dict of plain ints, counted from the model's parameters: `"token_emb"`, `"pos_emb"`, `"blocks"`,
# `"norm"`, `"lm_head"` (the parameters of each of those parts) and `"total"` (all the model's parameters).
# Each tensor counts **once**: when `lm_head.weight` *is* `token_emb.weight`, it belongs to `token_emb` and
# `lm_head` counts 0. A part may be `None` (a model without positions: `pos_emb is None`): it counts 0. Every
# parameter counts, trainable or frozen.
#
# **What the check tries:** the reference TinyLM tied, untied (`lm_head` has its own `(V, D)` weight), without
# positions (`pos_emb is None`) and with frozen sinusoidal positions (`requires_grad=False`). Each model must
# come back unchanged.
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# A tensor that two parts share (the tied matrix) must be counted once, by the first part that reaches it.
# So remember which tensors you have already counted, by identity (the same object, not equal values), and
# count the parts in the order of the table: `token_emb`'s weight is counted first, so when `lm_head`
# reaches the same tensor it is skipped. `"total"` needs no such care: `model.parameters()` yields a
# shared tensor once.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - Before any counting: a set of the `id(p)` already counted.
# - One helper, used for every part: 0 for `None` (a model without `pos_emb`); otherwise it goes through the
#   part's `.parameters()` and, for each `p` whose `id(p)` is not in the set yet, adds `p.numel()` and puts
#   the id in the set.
# - The parts by name, with `getattr(model, name)`, in the order `token_emb`, `pos_emb`, `blocks`, `norm`,
#   `lm_head`.
# - `"total"`: `p.numel()` summed over `model.parameters()`, with no `requires_grad` filter (frozen
#   parameters count too).
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `seen = set()`; a helper `count(module)` that returns 0 for `None` and otherwise, for each `p` in
# `module.parameters()`, does `if id(p) not in seen:` then `seen.add(id(p))` and adds `p.numel()`;
# the table maps each of the five names to `count(getattr(model, name))`, in the table's order; and
# `table["total"] = sum(p.numel() for p in model.parameters())`.
# </details>

# %% [markdown] lang="zh"
# ## 5. 参数都在哪里
#
# 以权重共享的模型（`d_ff = 4D`）为例，逐个部件数一数：
#
# | 部件 | 内容 | 参数量 |
# |---|---|---|
# | `token_emb` | `(V, D)`，同时也是输出层的权重 | $V D$ |
# | `pos_emb` | `(max_seq_len, D)` | $T_{max} D$ |
# | `blocks` | `L` 个块，每个 `12 D² + 13 D`（笔记本 07） | $L(12D^2 + 13D)$ |
# | `norm` | weight 和 bias | $2D$ |
# | `lm_head` | 共享权重时，没有自己的参数 | $0$ |
#
# 所以粗略地说，总数是 **`12·L·D² + V·D`**：各个块，加上那个（共享的）嵌入矩阵。词表（vocabulary）小的时候，块占大头；GPT-2 的词表有 50,257 个 token，嵌入矩阵就占了 GPT-2 small 参数的将近三分之一。
#
# ### 练习 3：`parameter_table(model)`
#
# 返回一个值都是普通 int 的 dict，数字要从模型的参数里数出来：`"token_emb"`、`"pos_emb"`、`"blocks"`、`"norm"`、`"lm_head"`（这几个部件各自的参数量），以及 `"total"`（模型的全部参数）。每个张量只算**一次**：当 `lm_head.weight` *就是* `token_emb.weight` 时，它归 `token_emb`，`lm_head` 记 0。某个部件可能是 `None`（没有位置信息的模型：`pos_emb is None`），这时记 0。所有参数都要算，不管是可训练的还是冻结的。
#
# **检查会试什么：** 参考实现的 TinyLM 的几种形态：共享权重的，不共享的（`lm_head` 有自己的 `(V, D)` 权重），没有位置信息的（`pos_emb is None`），以及用冻结的正弦位置编码（sinusoidal positional encoding）的（`requires_grad=False`）。每个模型交回来时都必须原封不动。
#
# **难度：** ★☆☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 两个部件共用的张量（tensor），比如权重共享（weight tying）的那个矩阵，只能算一次，算在最先碰到它的部件头上。所以要记住哪些张量已经算过，按身份来记（是同一个对象，而不是数值相等），并且按表里的顺序数各个部件：`token_emb` 的权重先被算到，等 `lm_head` 碰到同一个张量时就跳过。`"total"` 不用操这份心：`model.parameters()` 对共享的张量只给一次。
# </details>
#
# <details><summary>提示 2：各部分写在哪里</summary>
#
# - 开始数之前：准备一个集合，存放已经数过的 `id(p)`。
# - 写一个辅助函数，每个部件都用它：遇到 `None`（没有 `pos_emb` 的模型）返回 0；否则遍历这个部件的 `.parameters()`，对每个 `id(p)` 还不在集合里的 `p`，加上 `p.numel()`，并把这个 id 放进集合。
# - 用 `getattr(model, name)` 按名字取出各个部件，顺序是 `token_emb`、`pos_emb`、`blocks`、`norm`、`lm_head`。
# - `"total"`：对 `model.parameters()` 里的每个 `p` 把 `p.numel()` 加起来，不按 `requires_grad` 过滤：冻结的参数（parameter）也要算。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `seen = set()`；一个辅助函数 `count(module)`：遇到 `None` 返回 0，否则对 `module.parameters()` 里的每个 `p`，执行 `if id(p) not in seen:`，然后 `seen.add(id(p))` 并加上 `p.numel()`；按表的顺序，把五个名字分别映射到 `count(getattr(model, name))`；最后 `table["total"] = sum(p.numel() for p in model.parameters())`。
# </details>

# %% solution="parameter_table"
def parameter_table(model: nn.Module) -> dict[str, int]:
    """Parameters per part of a language model, each tensor counted once.

    Args:
        model: a module with token_emb, pos_emb (may be None), blocks, norm, lm_head.

    Returns:
        {"token_emb", "pos_emb", "blocks", "norm", "lm_head", "total"} -> int; lm_head is 0 when its weight is
        token_emb's; total counts every parameter of the model once.
    """
    ### BEGIN SOLUTION
    seen = set()

    def count(module):
        if module is None:
            return 0
        n = 0
        for p in module.parameters():
            if id(p) not in seen:
                seen.add(id(p))
                n += p.numel()
        return n

    table = {name: count(getattr(model, name)) for name in ("token_emb", "pos_emb", "blocks", "norm", "lm_head")}
    table["total"] = sum(p.numel() for p in model.parameters())
    return table
    ### END SOLUTION


# %% lang="zh"
def parameter_table(model: nn.Module) -> dict[str, int]:
    """语言模型各部分的参数量，每个张量只算一次。

    参数：
        model: 含有 token_emb、pos_emb（可以为 None）、blocks、norm、lm_head 的模块。

    返回：
        {"token_emb", "pos_emb", "blocks", "norm", "lm_head", "total"} -> int；lm_head 的权重
        就是 token_emb 的权重时，lm_head 为 0；total 把模型的每个参数算一次。
    """
    ### BEGIN SOLUTION
    seen = set()

    def count(module):
        if module is None:
            return 0
        n = 0
        for p in module.parameters():
            if id(p) not in seen:
                seen.add(id(p))
                n += p.numel()
        return n

    table = {name: count(getattr(model, name)) for name in ("token_emb", "pos_emb", "blocks", "norm", "lm_head")}
    table["total"] = sum(p.numel() for p in model.parameters())
    return table
    ### END SOLUTION

# %% test="parameter_table_check"
from tinylm_checks import check_parameter_table
check_parameter_table(parameter_table)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_parameter_table(parameter_table, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** `expected:` and `got:` show the six counts side by side for the model of the
# `tried:` line; see which part is off, and by how much (`V·D` is the tied matrix).
#
# Your table, next to the model's own `get_num_params()` and to the rule `12·L·D² + V·D`, for the model of
# section 4, a wider one, and GPT-2 small (`V = 50,257`, 1,024 positions, `D = 768`, 12 layers, 12 heads). The
# GPT-2 model is built on PyTorch's `"meta"` device: its tensors have shapes but no memory, enough to count
# 124 million parameters without allocating them.

# %% [markdown] lang="zh"
# **如果检查没通过：** “尝试”那一行说的是哪个模型，“期望”和“实际”两行就并排列出这个模型的六个计数；对一对，看是哪个部件不对、差了多少（正好差 `V·D`，问题就出在那个共享矩阵上）。
#
# 下面拿三个模型来比：第 4 节的模型、一个更宽的模型和 GPT-2 small。每个模型都列出你的表、模型自带的 `get_num_params()` 和公式 `12·L·D² + V·D` 算出的数。GPT-2 small 的尺寸是：`V = 50,257`，1,024 个位置，`D = 768`，12 层，每层 12 个头（head）。GPT-2 建在 PyTorch 的 `"meta"` 设备上：这种张量只有形状，不占内存，数它那 1.24 亿（124M）个参数正合适，不必真的分配内存。

# %%
tables = []  # parameter_table of each model, in the order of the loop
print("  token_emb   pos_emb      blocks  norm lm_head        total "
      "get_num_params()     12LD²+VD  model")
for label, (V_, T_, D_, H_, L_) in (("section 4", (V, 64, 64, 4, 2)), ("wider", (V, 256, 256, 8, 6)),
                                    ("GPT-2 small", (50257, 1024, 768, 12, 12))):
    with torch.device("meta"):
        m = TinyLM(V_, T_, D_, H_, L_, 4 * D_)  # yours
    t = parameter_table(m)  # yours
    tables.append(t)
    rule = 12 * L_ * D_ ** 2 + V_ * D_
    print(f"{t['token_emb']:>11,} {t['pos_emb']:>9,} {t['blocks']:>11,} {t['norm']:>5,} {t['lm_head']:>7,} "
          f"{t['total']:>12,} {m.get_num_params():>16,} {rule:>12,}  {label}")
    assert t["total"] == m.get_num_params(non_embedding=False) and t["total"] - t["pos_emb"] == m.get_num_params()

fig, ax = plt.subplots(figsize=(7, 2.6))
for i, t in enumerate(tables):
    left = 0.0
    for part, color in (("token_emb", "tab:blue"), ("pos_emb", "tab:cyan"), ("blocks", "tab:orange"), ("norm", "tab:gray")):
        share = t[part] / t["total"]
        ax.barh(i, share, left=left, color=color, label=part if i == 0 else None)
        left += share
ax.set_yticks(range(len(tables)), ["section 4", "wider", "GPT-2 small"])
ax.set_xlabel("share of the parameters")
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=4, frameon=False)
plt.tight_layout()
plt.show()

# %% lang="zh"
tables = []  # 每个模型的 parameter_table，按循环的顺序
print("  token_emb   pos_emb      blocks  norm lm_head        total "
      "get_num_params()     12LD²+VD  model")
for label, (V_, T_, D_, H_, L_) in (("section 4", (V, 64, 64, 4, 2)), ("wider", (V, 256, 256, 8, 6)),
                                    ("GPT-2 small", (50257, 1024, 768, 12, 12))):
    with torch.device("meta"):
        m = TinyLM(V_, T_, D_, H_, L_, 4 * D_)  # 你写的
    t = parameter_table(m)  # 你写的
    tables.append(t)
    rule = 12 * L_ * D_ ** 2 + V_ * D_
    print(f"{t['token_emb']:>11,} {t['pos_emb']:>9,} {t['blocks']:>11,} {t['norm']:>5,} {t['lm_head']:>7,} "
          f"{t['total']:>12,} {m.get_num_params():>16,} {rule:>12,}  {label}")
    assert t["total"] == m.get_num_params(non_embedding=False) and t["total"] - t["pos_emb"] == m.get_num_params()

fig, ax = plt.subplots(figsize=(7, 2.6))
for i, t in enumerate(tables):
    left = 0.0
    for part, color in (("token_emb", "tab:blue"), ("pos_emb", "tab:cyan"), ("blocks", "tab:orange"), ("norm", "tab:gray")):
        share = t[part] / t["total"]
        ax.barh(i, share, left=left, color=color, label=part if i == 0 else None)
        left += share
ax.set_yticks(range(len(tables)), ["section 4", "wider", "GPT-2 small"])
ax.set_xlabel("share of the parameters")
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=4, frameon=False)
plt.tight_layout()
plt.show()

# %% [markdown]
# GPT-2 small comes out at 124,439,808 parameters, the number OpenAI's checkpoint has. `get_num_params()`
# leaves the position embedding out (nanoGPT prints GPT-2 small's size that way: 123.65M); the rule
# `12·L·D² + V·D` misses only the biases, the LayerNorms and the position table. With our vocabulary of under 100
# characters the embedding is a sliver; with a 50k-token vocabulary it is almost a third of GPT-2 small.
#
# ## Summary
#
# - `causal_lm_loss`: `logits[:, :-1]` against `labels[:, 1:]`, `F.cross_entropy` on the raw logits,
#   `ignore_index=-100`; labels are aligned with the inputs, and the shift happens in one place only
#   (`get_batch`'s `y` is already shifted: it is not `labels`).
# - `TinyLM`: token + position embeddings, `L` blocks with one causal mask, a final LayerNorm, `lm_head` tied to
#   `token_emb` (one Parameter), GPT-2's init (`N(0, 0.02)`, residual projections `0.02/sqrt(2L)`, zero
#   biases); `T > max_seq_len` raises a `ValueError`.
# - At init: logits `(B, T, V)`, loss `≈ ln V`, and no position sees the future.
# - Parameters: about `12·L·D² + V·D`, the tied matrix counted once.
#
# **Next:** notebook 09 builds tokenizers and trains this model on real text.

# %% [markdown] lang="zh"
# GPT-2 small 算出来是 124,439,808 个参数，和 OpenAI 发布的检查点（checkpoint）一致。`get_num_params()` 不算位置嵌入（nanoGPT 打印 GPT-2 small 的大小时就是这么算的：123.65M）；公式 `12·L·D² + V·D` 只漏掉了偏置、各个层归一化和位置表。我们的词表不到 100 个字符，嵌入只占很小一部分；换成 50k 个 token 的词表，它几乎占了 GPT-2 small 的三分之一。
#
# ## 小结
#
# - `causal_lm_loss`：`logits[:, :-1]` 对照 `labels[:, 1:]`，在原始 logits 上用 `F.cross_entropy`，`ignore_index=-100`；标签与输入对齐，错位只在一处做（`get_batch` 给的 `y` 已经错过位了：它不是 `labels`）。
# - `TinyLM`：token 嵌入 + 位置嵌入，`L` 个块共用一个因果掩码，最后一个层归一化，`lm_head` 与 `token_emb` 共享权重（同一个 Parameter），GPT-2 的初始化（`N(0, 0.02)`，残差投影 `0.02/sqrt(2L)`，偏置为零）；`T > max_seq_len` 时抛出 `ValueError`。
# - 初始化时：logits 是 `(B, T, V)`，损失 `≈ ln V`，没有哪个位置能看到未来。
# - 参数：约 `12·L·D² + V·D`，共享的矩阵只算一次。
#
# **下一步：** 笔记本 09 构建分词器，并用真实文本训练这个模型。
