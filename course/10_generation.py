# %% [markdown]
# # 10 · Generation and inspection
#
# A language model gives, at every position, a score (a *logit*) for each token of the vocabulary: what it
# thinks comes next. Generating text means using those scores over and over: pick a next token, append it,
# ask again. By the end of this notebook you can:
#
# 1. turn logits into a choice: softmax, **temperature** (sharper or flatter) and **top-k** (only the k most
#    likely tokens);
# 2. write `generate(model, idx, max_new_tokens, temperature, top_k, generator)`, the autoregressive loop,
#    with the context cropped to `max_seq_len` and reproducible samples;
# 3. train a small TinyLM for 200 steps and sample from it;
# 4. look inside it: seaborn heatmaps of its attention weights, and an explorer (layer, head, your own text).
#
# Shapes: `B` batch, `T` positions, `V` vocabulary size; the model reads at most `max_seq_len` positions.

# %% [markdown] lang="zh"
# # 10 · 生成与观察
#
# 语言模型（language model）在每个位置上，都会给词表（vocabulary）里的每个 token
# 打一个分（即 *logit*），表示它认为下一个 token 是什么。生成文本，就是反复利用这些分数：选出下一个 token，接到末尾，再问一次模型。学完这一课，你应该能：
#
# 1. 把 logits
#    变成选择：softmax，**温度**（temperature，让分布更尖锐或更平坦），以及 **top-k 采样**（top-k sampling，只在最可能的 k 个 token 里选）；
# 2. 写出
#    `generate(model, idx, max_new_tokens, temperature, top_k, generator)`，也就是自回归（autoregressive）循环：上下文截断到
#    `max_seq_len`，采样结果可以复现；
# 3. 训练一个小 TinyLM（200 步），并从它采样；
# 4. 观察模型内部：用 seaborn
#    热力图查看它的注意力权重（attention weights），再用一个交互式浏览器（选层、选头、输入你自己的文本）来探索。
#
# 形状（shape）约定：`B` 是批次（batch），`T` 是位置，`V` 是词表大小；模型一次最多读 `max_seq_len` 个位置。

# %%
import os

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from tinylm_checks import check_generate
from tinylm_checks import attention_explorer, attention_maps, plot_attention_heads
from tinylm_solutions.data import corpus, train_val_split
from tinylm_solutions.model import TinyLM
from tinylm_solutions.tokenizer import CharTokenizer
from tinylm_solutions.trainer import train

torch.set_num_threads(1)  # the tensors here are small: one thread is enough (two would mostly wait on each other)
_ = torch.manual_seed(0)

# %% lang="zh"
import os

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from tinylm_checks import check_generate
from tinylm_checks import attention_explorer, attention_maps, plot_attention_heads
from tinylm_solutions.data import corpus, train_val_split
from tinylm_solutions.model import TinyLM
from tinylm_solutions.tokenizer import CharTokenizer
from tinylm_solutions.trainer import train

torch.set_num_threads(1)  # 这里的张量都很小：一个线程就够了（两个线程大部分时间在互相等待）
_ = torch.manual_seed(0)

# %% [markdown]
# The demos after the exercise use *your* `generate`: finish the exercise (its check passes) before running
# the cells below it.
#
# ## 1. From logits to a next token
#
# For one sequence the model returns logits `(T, V)`; the prediction for the **next** token sits at the
# **last** position, `logits[-1]` (`V` scores). The softmax turns them into probabilities, and we *draw* a
# token from them: `torch.multinomial(probs, num_samples=1)`. Always taking the most likely token instead
# (`argmax`, *greedy decoding*) is deterministic, but it tends to loop on the same phrases.
#
# **Temperature** divides the logits before the softmax, `softmax(logits / temperature)`:
# below 1 the distribution gets sharper (towards greedy), above 1 flatter (towards uniform). The name comes
# from the Boltzmann distribution of statistical physics, `p ∝ exp(-E / kT)` (Ackley, Hinton & Sejnowski, 1985).
#
# **Top-k** (Fan et al., 2018, §5.4) keeps only the `k` largest logits of each row and sets the others to
# `-inf`, so the softmax gives them probability 0: the model cannot wander into the long tail of unlikely
# tokens. `top_k=1` is greedy decoding.

# %% [markdown] lang="zh"
# 练习（exercise）之后的演示用的是*你自己*的 `generate`：先完成练习，让它的检查（check）通过，再运行后面的单元格。
#
# ## 1. 从 logits 到下一个 token
#
# 对一条序列，模型返回 logits `(T, V)`；对**下一个** token 的预测在**最后一个**位置，即
# `logits[-1]`（`V` 个分数）。softmax 把这些分数变成概率，然后我们从中*抽取*一个
# token：`torch.multinomial(probs, num_samples=1)`。如果每次都直接取概率最大的
# token（`argmax`，即*贪心解码*（greedy decoding）），结果是确定的，但它往往会在同样的短语上来回打转。
#
# **温度**就是在 softmax 之前把 logits 除以它：`softmax(logits / temperature)`。温度小于
# 1，分布更尖锐（趋向贪心）；大于 1，分布更平坦（趋向均匀）。这个名字来自统计物理里的玻尔兹曼分布
# `p ∝ exp(-E / kT)`（Ackley、Hinton 和 Sejnowski，1985）。
#
# **Top-k**（Fan 等人，2018，§5.4）只保留每一行里最大的 `k` 个 logits，把其余的设为 `-inf`，这样 softmax
# 给它们的概率就是 0：模型不会误入由大量低概率 token 组成的长尾。`top_k=1` 就是贪心解码。

# %%
logits = torch.tensor([2.0, 1.5, 0.8, 0.3, 0.0, -0.5, -1.0, -2.0])  # (V,) for V = 8
fig, axes = plt.subplots(1, 4, figsize=(13, 2.6), sharey=True)
for ax, temperature in zip(axes[:3], (0.5, 1.0, 2.0)):
    ax.bar(range(8), F.softmax(logits / temperature, dim=-1).numpy())
    ax.set_title(f"temperature {temperature}")
kth = torch.topk(logits, 3).values[-1]  # the 3rd largest logit
kept = logits.masked_fill(logits < kth, float("-inf"))  # (V,): the rest -inf
axes[3].bar(range(8), F.softmax(kept, dim=-1).numpy(), color="tab:orange")
axes[3].set_title("top_k = 3, temperature 1.0")
for ax in axes:
    ax.set_xlabel("token id")
axes[0].set_ylabel("probability")
plt.tight_layout()
plt.show()

# %% lang="zh"
logits = torch.tensor([2.0, 1.5, 0.8, 0.3, 0.0, -0.5, -1.0, -2.0])  # (V,)，V = 8
fig, axes = plt.subplots(1, 4, figsize=(13, 2.6), sharey=True)
for ax, temperature in zip(axes[:3], (0.5, 1.0, 2.0)):
    ax.bar(range(8), F.softmax(logits / temperature, dim=-1).numpy())
    ax.set_title(f"temperature {temperature}")
kth = torch.topk(logits, 3).values[-1]  # 第 3 大的 logit
kept = logits.masked_fill(logits < kth, float("-inf"))  # (V,)：其余的设为 -inf
axes[3].bar(range(8), F.softmax(kept, dim=-1).numpy(), color="tab:orange")
axes[3].set_title("top_k = 3, temperature 1.0")
for ax in axes:
    ax.set_xlabel("token id")
axes[0].set_ylabel("probability")
plt.tight_layout()
plt.show()

# %% [markdown]
# Reproducible draws need a random number generator you hold: a `torch.Generator`, seeded, passed to the
# sampler. The same seed gives the same tokens, and nothing else in the notebook moves its state:

# %% [markdown] lang="zh"
# 要让抽样可以复现，就需要一个由你自己掌握的随机数生成器：一个设好随机种子（random seed）的
# `torch.Generator`，把它传给采样函数。同样的种子给出同样的 token，而且这个笔记本里别的代码都不会改动它的状态：

# %%
probs = F.softmax(logits, dim=-1)  # (V,)
for seed in (0, 0, 1):
    g = torch.Generator().manual_seed(seed)
    print(f"seed {seed}:", torch.multinomial(probs, num_samples=10, replacement=True, generator=g).tolist())

# %% [markdown]
# ## 2. The loop
#
# ```
# idx                                   (B, T)            the prompt, token ids
# repeat max_new_tokens times:
#     idx_cond = the last max_seq_len tokens  (B, min(T', max_seq_len))   the model takes at most max_seq_len positions
#     logits = model(idx_cond)[0]       (B, T_c, V)
#     logits = logits[:, -1, :]         (B, V)            the prediction for the next token
#     temperature, top-k, softmax       (B, V)
#     idx_next = multinomial(...)       (B, 1)
#     idx = cat(idx, idx_next)          (B, T' + 1)
# return idx                            (B, T + max_new_tokens)
# ```
#
# The model has learned position embeddings for `max_seq_len` positions only, and `TinyLM` raises a `ValueError` on a
# longer input: once the sequence is longer than `max_seq_len`, feed it the **last** `max_seq_len` tokens, the ones the next token
# follows. Generation needs no gradients (`torch.no_grad()`) and no dropout (`model.eval()`), and a helper
# should leave the model as it found it.
#
# ### Exercise: `generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None)`
#
# - `model` returns `(logits (B, T, V), loss)` from `model(idx)` and has `model.max_seq_len`.
# - `idx` is a `(B, T)` long tensor (the prompt); return a `(B, T + max_new_tokens)` long tensor that starts
#   with `idx`.
# - At each step: crop to the last `model.max_seq_len` tokens, take the logits of the last position, divide
#   them by `temperature` (> 0), keep only the `top_k` largest of each row when `top_k` is given (the rest
#   `-inf`), softmax, and draw one token per row with `torch.multinomial(..., generator=generator)`.
# - Run under `torch.no_grad()` with the model in eval mode, and put the model back in the mode it was in.
#
# The check runs your function on a *scripted* model: its logits are a fixed table that depends on the
# position and on the token fed there, and it records what you fed it. It tries `top_k=1` (greedy) for more
# tokens than `max_seq_len`, compares what each step fed and drew with what it should, runs the same generator
# seed twice, and draws one token for a batch of 4500 rows to compare the frequencies with
# `softmax(logits / temperature)`, without and with `top_k=3` (exactly 3 candidates in every row).
#
# **Difficulty:** ★★☆ · **Time:** about 20 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Generation is a loop: feed the model the tokens so far (at most the last `max_seq_len` of them), keep its
# prediction at the last position only, reshape it (temperature, top-k), turn it into probabilities,
# draw one token per row, append it, repeat. The function borrows the model: eval mode and no autograd
# during the loop, and the model handed back in the mode it was in.
# </details>
#
# <details><summary>Hint 2: where each piece goes</summary>
#
# - Around the loop: remember `model.training` before calling `model.eval()`; loop `max_new_tokens` times
#   inside a `torch.no_grad()` block; after the loop, `model.train(...)` with the mode you remembered.
# - The crop: the last `model.max_seq_len` tokens are a slice of dimension 1 of `idx`, with a negative
#   start.
# - The logits: `model(...)` returns a pair; its first element is `(B, T_c, V)`; index -1 of dimension 1
#   gives the last position, `(B, V)`; divide it by `temperature`.
# - Top-k, only when `top_k` is given: `torch.topk` over the last dimension; its `.values` are
#   `(B, top_k)`, sorted, so their last column is each row's k-th largest logit. Keep that column as a
#   `(B, 1)` tensor, so that it compares row by row, and `masked_fill` the logits below it with `-inf`.
# - The draw: `F.softmax` over the last dimension, then `torch.multinomial` with one sample per row and
#   `generator=generator`, which gives `(B, 1)`; `torch.cat` it onto `idx` along dimension 1.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `was_training = model.training` and `model.eval()`; then inside `with torch.no_grad():`, for each of the
# `max_new_tokens` steps:
#
# ```python
# logits = model(idx[:, -model.max_seq_len:])[0][:, -1, :] / temperature   # (B, V)
# if top_k is not None:
#     kth = torch.topk(logits, min(top_k, logits.size(-1)), dim=-1).values[:, [-1]]  # (B, 1)
#     logits = logits.masked_fill(logits < kth, float("-inf"))
# idx_next = torch.multinomial(F.softmax(logits, dim=-1), 1, generator=generator)  # (B, 1)
# idx = torch.cat((idx, idx_next), dim=1)
# ```
#
# and at the end `model.train(was_training)`, `return idx`. (`min(top_k, V)` keeps `torch.topk` from
# failing when `top_k` is larger than the vocabulary.)
# </details>

# %% [markdown] lang="zh"
# ## 2. 循环
#
# ```
# idx                                   (B, T)            提示词（prompt），token id
# 重复 max_new_tokens 次：
#     idx_cond = 最后 max_seq_len 个 token  (B, min(T', max_seq_len))   模型最多接受 max_seq_len 个位置
#     logits = model(idx_cond)[0]       (B, T_c, V)
#     logits = logits[:, -1, :]         (B, V)            对下一个 token 的预测
#     temperature, top-k, softmax       (B, V)
#     idx_next = multinomial(...)       (B, 1)
#     idx = cat(idx, idx_next)          (B, T' + 1)
# return idx                            (B, T + max_new_tokens)
# ```
#
# 模型只为 `max_seq_len` 个位置学过位置嵌入，输入更长时 `TinyLM` 会抛出 `ValueError`：所以一旦序列比 `max_seq_len` 长，就只把**最后** `max_seq_len` 个 token 喂给它，也就是下一个 token 紧跟着的那些。生成时不需要梯度（gradient），所以用
# `torch.no_grad()`；也不需要 dropout，所以用
# `model.eval()`。另外，辅助函数用完模型之后，应该把它恢复成原来的样子。
#
# ### 练习：`generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None)`
#
# - `model` 的调用 `model(idx)` 返回 `(logits (B, T, V), loss)`，并且有属性 `model.max_seq_len`。
# - `idx` 是一个 `(B, T)` 的 long 张量（tensor），即提示词；返回一个 `(B, T + max_new_tokens)` 的 long
#   张量，开头就是 `idx`。
# - 每一步：截取最后 `model.max_seq_len` 个 token，取最后一个位置的 logits，除以 `temperature`（> 0）；如果给了
#   `top_k`，每行只保留最大的 `top_k` 个（其余设为 `-inf`）；做 softmax；再用
#   `torch.multinomial(..., generator=generator)` 每行抽一个 token。
# - 在 `torch.no_grad()` 下、模型处于 eval 模式时运行，结束后把模型恢复到原来的模式。
#
# 检查用一个*脚本化*的模型来运行你的函数：它的 logits 是一张固定的表，只取决于位置和喂到这个位置的
# token，而且它会记下你喂给它的内容。检查会用 `top_k=1`（贪心）生成比 `max_seq_len` 更多的
# token，逐步核对每一步喂了什么、抽到了什么；用同一个生成器种子跑两次；再对一个 4500 行的批次每行抽一个
# token，把各 token 的频率和 `softmax(logits / temperature)` 比较，不用 top-k 和用
# `top_k=3`（每行恰好 3 个候选）各测一次。
#
# **难度：** ★★☆ · **用时：** 约 20 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 生成就是一个循环：把目前为止的
# token（最多取最后 `max_seq_len` 个）喂给模型，只保留它在最后一个位置的预测，用温度（temperature）和 top-k
# 采样（top-k sampling）调整一下，变成概率，每行抽一个 token，接到末尾，再重复。这个函数是“借用”模型：循环期间用
# eval 模式、不开 autograd，还回去时模型要处于原来的模式。
# </details>
#
# <details><summary>提示 2：各部分写在哪里</summary>
#
# - 循环外面：调用 `model.eval()` 之前先记下 `model.training`；在一个 `torch.no_grad()` 块里循环 `max_new_tokens`
#   次；循环结束后，用记下的模式调用 `model.train(...)`。
# - 截断：最后 `model.max_seq_len` 个 token 就是 `idx` 在第 1 维上的一个切片，起点是负数。
# - logits：`model(...)` 返回一个二元组，第一个元素是 `(B, T_c, V)`；在第 1 维上取下标 -1，得到最后一个位置
#   `(B, V)`；再除以 `temperature`。
# - top-k 采样（top-k sampling），只在给了 `top_k` 时做：在最后一维上用 `torch.topk`；它的 `.values`
#   形状（shape）是 `(B, top_k)`，已经排好序，所以最后一列就是每行第 k 大的 logit。把这一列保留成 `(B, 1)`
#   的张量（tensor），才能逐行比较，再用 `masked_fill` 把比它小的 logits 填成 `-inf`。
# - 抽样：在最后一维上做 `F.softmax`，再用 `torch.multinomial` 每行抽一个样本，并传入 `generator=generator`，得到
#   `(B, 1)`；用 `torch.cat` 沿第 1 维把它接到 `idx` 后面。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# 先 `was_training = model.training` 和 `model.eval()`；然后在 `with torch.no_grad():` 里面，对 `max_new_tokens`
# 步中的每一步：
#
# ```python
# logits = model(idx[:, -model.max_seq_len:])[0][:, -1, :] / temperature   # (B, V)
# if top_k is not None:
#     kth = torch.topk(logits, min(top_k, logits.size(-1)), dim=-1).values[:, [-1]]  # (B, 1)
#     logits = logits.masked_fill(logits < kth, float("-inf"))
# idx_next = torch.multinomial(F.softmax(logits, dim=-1), 1, generator=generator)  # (B, 1)
# idx = torch.cat((idx, idx_next), dim=1)
# ```
#
# 最后 `model.train(was_training)`，`return idx`。（`min(top_k, V)` 保证 `top_k`
# 比词表（vocabulary）还大时，`torch.topk` 不会报错。）
# </details>

# %% solution="generate"
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Append max_new_tokens sampled tokens to each row of idx (B, T); returns (B, T + max_new_tokens).

    Each step feeds the model the last model.max_seq_len tokens, divides the last position's logits by
    temperature, keeps the top_k largest of each row (if top_k is given), and draws from the softmax with
    torch.multinomial(..., generator=generator). Runs in eval mode without autograd; restores the mode.
    """
    ### BEGIN SOLUTION
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for _ in range(max_new_tokens):
            idx_cond = idx[:, -model.max_seq_len:]  # (B, <= L)
            logits = model(idx_cond)[0][:, -1, :] / temperature  # (B, V)
            if top_k is not None:
                kth = torch.topk(logits, min(top_k, logits.size(-1)), dim=-1).values[:, [-1]]  # (B, 1)
                logits = logits.masked_fill(logits < kth, float("-inf"))  # (B, V)
            probs = F.softmax(logits, dim=-1)  # (B, V)
            idx_next = torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)
            idx = torch.cat((idx, idx_next), dim=1)  # (B, T + 1)
    model.train(was_training)
    return idx
    ### END SOLUTION


# %% lang="zh"
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """在 idx (B, T) 的每一行后面追加 max_new_tokens 个采样出的 token；返回 (B, T + max_new_tokens)。

    每一步把最后 model.max_seq_len 个 token 送进模型，把最后一个位置的 logits 除以 temperature，
    （如果给了 top_k）每行只保留最大的 top_k 个，再用 torch.multinomial(..., generator=generator)
    从 softmax 中抽样。在 eval 模式下、不用自动求导运行；结束后恢复原来的模式。
    """
    ### BEGIN SOLUTION
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for _ in range(max_new_tokens):
            idx_cond = idx[:, -model.max_seq_len:]  # (B, <= L)
            logits = model(idx_cond)[0][:, -1, :] / temperature  # (B, V)
            if top_k is not None:
                kth = torch.topk(logits, min(top_k, logits.size(-1)), dim=-1).values[:, [-1]]  # (B, 1)
                logits = logits.masked_fill(logits < kth, float("-inf"))  # (B, V)
            probs = F.softmax(logits, dim=-1)  # (B, V)
            idx_next = torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)
            idx = torch.cat((idx, idx_next), dim=1)  # (B, T + 1)
    model.train(was_training)
    return idx
    ### END SOLUTION

# %% test="generate_check"
from tinylm_checks import check_generate
check_generate(generate)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_generate(generate, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **If the check fails:** `likely mistake:` recognises, among others, a context that is not cropped or cropped
# from the front, sampling from the first position, a temperature multiplied (or applied after the softmax),
# top-k keeping k - 1 or k + 1 tokens or one threshold for the whole batch, argmax where sampling is asked,
# a generator that is not used, a prompt that is not returned, and the model left in training mode or with
# autograd on.
#
# ## 3. A small model to sample from
#
# Train a TinyLM on the course's corpus (docstrings of Python's standard library), one character per token,
# with the training loop of notebook 09 (`tinylm_solutions.trainer.train`). A few hundred steps on a CPU:
# enough to learn which characters follow which, not enough for words. (The Chinese notebook trains on Tang poems,
# `corpus("zh")`: the next cell is the one cell whose code differs between the two languages.)

# %% [markdown] lang="zh"
# **如果检查没通过：** 看“可能的错误”那一行，它能认出这些错误：上下文没有截断或者从前面截断，从第一个位置采样，温度用成了乘法（或者放在 softmax 之后），top-k
# 保留了 k - 1 或 k + 1 个 token，或者整个批次只用一个阈值，该采样的地方用了
# argmax，没有用传进来的生成器，没有把提示词一起返回，以及模型被留在了训练模式或者 autograd 还开着。
#
# ## 3. 训练一个小模型来采样
#
# 用笔记本 09 的训练循环（`tinylm_solutions.trainer.train`）在唐诗上训练一个 TinyLM：取中文语料 `corpus("zh")` 的前
# 100,000 个字符，每个字符算一个 token，汉字、标点和换行都一样。中英两版笔记本只有下一个单元格的代码不同：英文版用的是课程的英文语料（Python 标准库的 docstring）。在 CPU 上跑几百步，模型就能大致学会逗号、句号和换行该出现在哪里；但在汉字本身上，它只比只按字频来猜强一点，还写不出像样的诗句（见下面的采样）。

# %%
text = corpus("en")  # the course's corpus: docstrings of Python's standard library
PROMPT = "Return the "  # the samples' prompt (below)
HEATMAP_TEXT = "Return the value of x"  # the heatmaps' text (section 4)
EXPLORER_TEXT = "Return a new list of the items"  # the explorer's first text (section 5)

# %% lang="zh"
text = corpus("zh", max_chars=100_000)  # 唐诗的前 100,000 个字符
PROMPT = "春风"  # 下面采样用的提示词
HEATMAP_TEXT = "白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。"  # 第 4 节画热力图用的诗：王之涣《登鹳雀楼》
EXPLORER_TEXT = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"  # 第 5 节交互浏览器里预先填好的文本：李白《静夜思》（通行本）

# %%
tokenizer = CharTokenizer(text)
data = torch.tensor(tokenizer.encode(text))  # (N,) token ids
train_data, val_data = train_val_split(data)
torch.manual_seed(0)
model = TinyLM(tokenizer.vocab_size, max_seq_len=32, d_model=48, num_heads=4, num_layers=2, d_ff=192)
steps = 20 if os.environ.get("TINYLM_QUICK") == "1" else 200  # TINYLM_QUICK=1: a few steps (quick autograding)
history = train(model, train_data, val_data, steps=steps, batch_size=16, lr=5e-3, eval_interval=200,
                eval_batches=5, progress=False, seed=0)
print(f"vocabulary {tokenizer.vocab_size} characters; loss {history['loss'][0]:.2f} -> {history['loss'][-1]:.2f}; "
      f"validation loss {history['val_loss'][-1]:.2f} (uniform guessing: ln V = {torch.log(torch.tensor(float(tokenizer.vocab_size))):.2f})")

# %% lang="zh"
tokenizer = CharTokenizer(text)
data = torch.tensor(tokenizer.encode(text))  # (N,) 个 token id
train_data, val_data = train_val_split(data)
torch.manual_seed(0)
model = TinyLM(tokenizer.vocab_size, max_seq_len=32, d_model=48, num_heads=4, num_layers=2, d_ff=192)
steps = 20 if os.environ.get("TINYLM_QUICK") == "1" else 200  # TINYLM_QUICK=1：只跑几步（自动评分时快一些）
history = train(model, train_data, val_data, steps=steps, batch_size=16, lr=5e-3, eval_interval=200,
                eval_batches=5, progress=False, seed=0)
print(f"vocabulary {tokenizer.vocab_size} characters; loss {history['loss'][0]:.2f} -> {history['loss'][-1]:.2f}; "
      f"validation loss {history['val_loss'][-1]:.2f} (uniform guessing: ln V = {torch.log(torch.tensor(float(tokenizer.vocab_size))):.2f})")

# %% [markdown]
# Four samples with your `generate`, from the same prompt and generator seed: three temperatures, and
# temperature 1 once more with top-k 5. Compare them: which keeps to the text's most common characters (and may
# repeat itself), which turns to noise?

# %% [markdown] lang="zh"
# 用你的 `generate` 采样四次，提示词和生成器种子都相同：三种温度，再加一次温度 1、top-k 取
# 5。比较一下：哪个总用文本里最常见的那些字（还可能自我重复），哪个变成了噪声？

# %%
prompt = torch.tensor([tokenizer.encode(PROMPT)])  # (1, T)
for temperature, top_k in ((0.5, None), (1.0, None), (1.0, 5), (2.0, None)):
    out = generate(model, prompt, 60, temperature=temperature, top_k=top_k,
                   generator=torch.Generator().manual_seed(0))
    print(f"temperature={temperature}, top_k={top_k}: {tokenizer.decode(out[0].tolist())!r}")

# %% [markdown]
# ## 4. Inside the model: attention heatmaps
#
# Each block keeps the attention weights of its last forward pass, `(B, H, T, T)`: row `t` says how much
# query position `t` takes from each key position. `model.get_attention_weights()` returns one such tensor
# per layer; `attention_maps` runs the model on a text and returns them for that one sequence. The causal
# mask leaves the upper triangle at 0. Look for heads that stay on the token itself: their main diagonal stands out
# from the rest of each row. It does not glow: such a head gives the token itself more than twice what an even spread
# would (after 200 steps these heads are the clearest pattern), yet well under two thirds of the row, a blue-green
# diagonal on the 0 to 1 colour scale, not a yellow one (the first rows are bright in every head: they have only one
# or two keys to share out). A head for the previous character (a diagonal just below the main one) is weaker, if it
# shows at all: the next character can be predicted from the current one alone. Some heads may gather from the
# spaces; how clearly depends on the run.

# %% [markdown] lang="zh"
# ## 4. 模型内部：注意力热力图
#
# 每个块都存着自己最近一次前向传播的注意力权重，形状是 `(B, H, T, T)`：第 `t` 行是查询（query）位置 `t` 分给各个键（key）位置的权重。`model.get_attention_weights()` 每层返回一个这样的张量；`attention_maps` 让模型读一段文本，取出这一条序列的注意力权重。因果掩码（causal mask）让上三角始终为 0。
#
# 下面的热力图画的是王之涣的《登鹳雀楼》。先找关注 token 自身的头：它的主对角线比同一行的其他格子亮一些。别指望它很亮：这种头分给 token 自身的权重是平均分配时的两倍多（训练 200 步就能看到这种头），却远不到整行的三分之二，所以在 0 到 1 的色标上，它是一条蓝绿色的对角线，而不是黄色的。每个头最上面几行都很亮，那只是因为这几行只有一两个键可分，说明不了什么。此外，也许有的头专看逗号、句号和换行，也许有的头专看前一个字（主对角线正下方的那条斜线）；这两种头会不会出现、明显不明显，取决于这一次运行。

# %%
weights, tokens = attention_maps(model, tokenizer, HEATMAP_TEXT)  # [(H, T, T)] per layer, labels
plot_attention_heads(weights, tokens)  # one row per layer, one column per head
plt.tight_layout()
plt.show()

# %% lang="zh"
weights, tokens = attention_maps(model, tokenizer, HEATMAP_TEXT)  # 每层一个 [(H, T, T)]，以及标签
plot_attention_heads(weights, tokens)  # 每层一行，每个头一列
plt.tight_layout()
plt.show()

# %% [markdown]
# How sharp are the heads? The entropy of a row, `-Σ p log p`, is 0 when a query takes everything from one key
# and `log(t + 1)` when it spreads evenly over its `t + 1` allowed keys:

# %% [markdown] lang="zh"
# 这些头有多“尖锐”？一行的熵 `-Σ p log p`：如果查询把注意力全放在一个键上，熵为 0；如果平均分给它能看到的 `t + 1`
# 个键，熵为 `log(t + 1)`：

# %%
for layer, w in enumerate(weights):
    entropy = -(w * w.clamp_min(1e-12).log()).sum(-1).mean(-1)  # (H,): mean over the queries
    print(f"layer {layer}: mean entropy per head", [round(e, 2) for e in entropy.tolist()])

# %% lang="zh"
for layer, w in enumerate(weights):
    entropy = -(w * w.clamp_min(1e-12).log()).sum(-1).mean(-1)  # (H,)：对所有查询取平均
    print(f"layer {layer}: mean entropy per head", [round(e, 2) for e in entropy.tolist()])

# %% [markdown]
# ## 5. Explorer
#
# Pick a layer and a head, and type a text of your own (characters of the corpus; the last 32 are shown). The
# heatmap is drawn again when a slider moves or you press Enter in the box.

# %% [markdown] lang="zh"
# ## 5. 交互浏览器
#
# 选一个层、一个头，再输入你自己的文本（用语料里出现过的字符；只显示最后 32 个）。拖动滑块，或者在输入框里按回车，热力图就会重新绘制。

# %%
attention_explorer(model, tokenizer, EXPLORER_TEXT)

# %% [markdown]
# ## Summary
#
# - Next-token prediction lives at the last position: `logits[:, -1, :]`.
# - `softmax(logits / temperature)`: below 1 sharper, above 1 flatter; top-k keeps the `k` largest logits of
#   each row; `top_k=1` is greedy decoding.
# - The loop crops the context to the last `max_seq_len` tokens, runs without autograd in eval mode, and
#   appends one token per step; a seeded `torch.Generator` makes the samples reproducible.
# - Attention weights `(B, H, T, T)` per layer show what each position reads; the causal mask keeps the upper
#   triangle empty.
#
# **Next:** notebook 11 breaks the model on purpose (no residuals, no positions, a leaking mask) and reads the
# evidence.

# %% [markdown] lang="zh"
# ## 小结
#
# - 对下一个 token 的预测在最后一个位置：`logits[:, -1, :]`。
# - `softmax(logits / temperature)`：温度小于 1 更尖锐，大于 1 更平坦；top-k 保留每行最大的 `k` 个
#   logits；`top_k=1` 就是贪心解码。
# - 循环把上下文截断到最后 `max_seq_len` 个 token，在 eval 模式下、不开 autograd 运行，每一步追加一个
#   token；一个设好种子的 `torch.Generator` 让采样结果可以复现。
# - 每一层的注意力权重 `(B, H, T, T)` 显示每个位置在读什么；因果掩码让上三角保持为空。
#
# **下一课：** 笔记本 11 会故意把模型弄坏（去掉残差、去掉位置信息、让掩码泄漏），再去解读留下的证据。
