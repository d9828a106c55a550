# %% [markdown]
# # 13 · Capstone: your own `tiny-transformer/` repository
#
# Twelve notebooks built a language model piece by piece. This last one puts your pieces where a project keeps
# them: a small repository of plain Python files that runs without any notebook or any of the course's code,
# tests itself, trains from a configuration file and generates text from a checkpoint. It is the lesson's
# deliverable:
#
# ```
# tiny-transformer/
# ├── model.py                 causal mask, attention, TinyLM: your code from notebooks 01-08, in one file
# ├── train.py                 python train.py --config configs/tiny.yaml --steps N --out checkpoint.pt
# ├── generate.py              python generate.py --checkpoint checkpoint.pt --prompt "def "
# ├── tests/
# │   ├── test_attention.py
# │   ├── test_causal_mask.py
# │   └── test_overfit_batch.py
# ├── evaluate.py              python evaluate.py --checkpoint checkpoint.pt --data data/valid.txt
# ├── configs/tiny.yaml
# ├── data/train.txt, valid.txt the text it learns from, and the text it is measured on
# ├── report.md
# ├── pyproject.toml           its requirements, and how pytest finds model.py
# ├── .gitignore               checkpoints stay out of git
# └── README.md                what it is, how to run it, and your results
# ```
#
# Each file is written by one cell of this notebook (`%%writefile tiny-transformer/<file>`), so the folder appears
# next to the notebook and you can open, run and keep it. Every file's check runs it the way a user would, as a
# separate Python process in a fresh folder: it imports your `model.py` in a script of its own, runs your tests
# with `pytest`, runs `train.py` and `generate.py` from the command line. So **`model.py` must be your own code**:
# it may import `torch`, `math` and the standard library, not the course's packages (its check refuses an import
# of `tinylm_solutions`). Nor may `train.py` and `generate.py`: the text to train on is a file of the repository,
# `data/train.txt`, which a cell below writes from the course's corpus.
# When your notebook is autograded, these processes run in the grader's sandbox, where the course's answers are
# hidden: a file that leans on them fails there.

# %% [markdown] lang="zh"
# # 13 · 综合项目：你自己的 `tiny-transformer/` 仓库
#
# 前面十二个笔记本，一块一块地搭出了一个语言模型（language model）。最后这个笔记本，要把你做好的零件按正式项目的样子整理出来：一个由普通 Python 文件组成的小仓库，既不依赖笔记本，也不依赖课程的任何代码；它能测试自己，能按配置文件训练，还能从检查点（checkpoint）加载模型来生成文本。这门课最初依据的那份讲义（下文称“原讲义”）要求交的，就是这样一个仓库：
#
# ```
# tiny-transformer/
# ├── model.py                 因果掩码、注意力、TinyLM：你在笔记本 01-08 里写的代码，合成一个文件
# ├── train.py                 python train.py --config configs/tiny.yaml --steps N --out checkpoint.pt
# ├── generate.py              python generate.py --checkpoint checkpoint.pt --prompt "def "
# ├── tests/
# │   ├── test_attention.py
# │   ├── test_causal_mask.py
# │   └── test_overfit_batch.py
# ├── evaluate.py              python evaluate.py --checkpoint checkpoint.pt --data data/valid.txt
# ├── configs/tiny.yaml
# ├── data/train.txt, valid.txt 用来训练的文本，以及用来衡量它的文本
# ├── report.md
# ├── pyproject.toml           它的依赖，以及 pytest 如何找到 model.py
# ├── .gitignore               让检查点不进入 git
# └── README.md                它是什么、怎么运行，以及你的结果
# ```
#
# 每个文件都由本笔记本里的一个单元格写出（`%%writefile tiny-transformer/<file>`），所以这个文件夹就在笔记本旁边，你可以打开它、运行它，学完以后也可以留着。检查（check）每个文件时，都像真正的用户那样用它：在一个全新的文件夹里另起一个 Python 进程，用检查自己的脚本导入你的 `model.py`，用 `pytest` 跑你的测试，在命令行里运行 `train.py` 和 `generate.py`。因此，**`model.py` 必须是你自己写的代码**：可以导入 `torch`、`math` 和标准库，但不能导入课程的包（检查发现它导入了 `tinylm_solutions`，就不让它通过）。`train.py` 和 `generate.py` 也一样不能导入：训练用的文本是仓库里的一个文件 `data/train.txt`，下面有一个单元格会用课程的语料把它写出来。你的笔记本自动评分时，这些进程在评分程序的沙箱（sandbox）里运行，那里看不到课程的参考答案，所以靠参考答案才能运行的文件，在那里会失败。

# %%
import os
import subprocess
import sys
from pathlib import Path

from tinylm_checks import Repository

QUICK = os.environ.get("TINYLM_QUICK") == "1"
TRAIN_STEPS = 20 if QUICK else 600  # the real run at the end: 600 steps (how long they take depends on your CPU)
REPO = Path("tiny-transformer")
for folder in (REPO, REPO / "tests", REPO / "configs"):
    folder.mkdir(exist_ok=True)
repo = Repository(REPO)  # what the checks read: repo() is {path: text} of the repository's text files


def run(*args):
    """python *args in the repository, as you would run it in a terminal there, on one thread as the checks run it
    (on a model this small a second thread mostly waits: on a busy 2-core machine, 600 steps took 19 s with one and
    48 s with two); prints what it printed, in UTF-8 whatever the system's encoding (Windows' is a code page), and returns it
    (a CompletedProcess: .returncode, .stdout)."""
    one_thread = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, encoding="utf-8", env=one_thread)
    print(done.stdout + done.stderr)
    return done

# %% lang="zh"
import os
import subprocess
import sys
from pathlib import Path

from tinylm_checks import Repository

QUICK = os.environ.get("TINYLM_QUICK") == "1"
TRAIN_STEPS = 20 if QUICK else 600  # 最后那次真正的训练：600 步（要多久，看你的 CPU）
REPO = Path("tiny-transformer")
for folder in (REPO, REPO / "tests", REPO / "configs"):
    folder.mkdir(exist_ok=True)
repo = Repository(REPO)  # 检查读取的内容：repo() 是仓库中文本文件的 {路径: 文本}


def run(*args):
    """在仓库里运行 python *args，就像你在那里的终端里运行一样，并且像检查那样只用一个线程
    （这么小的模型，第二个线程大部分时间在等待：在一台繁忙的 2 核机器上，600 步用一个线程花了 19 秒，
    用两个线程花了 48 秒）；原样打印它的输出，而且不管系统默认用什么编码（Windows 上是代码页），都按 UTF-8 解码；返回运行结果（一个 CompletedProcess：.returncode、.stdout）。"""
    one_thread = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, encoding="utf-8", env=one_thread)
    print(done.stdout + done.stderr)
    return done

# %% [markdown]
# The text your model learns from is part of the repository: the course's corpus (the docstrings of Python's standard
# library, as in notebooks 09 to 12), nine tenths in `data/train.txt` and the last tenth in `data/valid.txt`, which
# training never sees: the loss there says how well the model does on text it did not learn by heart.

# %% [markdown] lang="zh"
# 模型学习用的文本也是仓库的一部分：课程的语料（Python 标准库的文档字符串（docstring），和笔记本 09 到 12 用的一样），前十分之九写进 `data/train.txt`，最后十分之一写进 `data/valid.txt`。训练时从来不看 `data/valid.txt`，所以模型在它上面的损失，说明的是模型在没有背过的文本上表现如何。

# %%
from tinylm_solutions.data import default_corpus

corpus = default_corpus()
split = round(len(corpus) * 0.9)
TRAIN_TEXT, VALID_TEXT = REPO / "data" / "train.txt", REPO / "data" / "valid.txt"
TRAIN_TEXT.parent.mkdir(exist_ok=True)
TRAIN_TEXT.write_text(corpus[:split], encoding="utf-8")
VALID_TEXT.write_text(corpus[split:], encoding="utf-8")
print(f"wrote {TRAIN_TEXT} ({split:,} characters) and {VALID_TEXT} ({len(corpus) - split:,} characters)")

# %% [markdown]
# ## 1. `model.py`
#
# ### Exercise 1: `tiny-transformer/model.py`
#
# One file with everything the model needs, copied from your notebooks and put together:
#
# - `causal_mask(T, device=None) -> (T, T) bool`, True where a query may attend (notebook 01);
# - `scaled_dot_product_attention(q, k, v, mask=None) -> (out, weights)` over the last two dimensions (notebook 01);
# - `TinyLM(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)` with `forward(input_ids, labels=None)
#   -> (logits, loss)`, the loss being the next-token cross-entropy when labels are given (notebook 08), built from
#   your multi-head attention (02), feed-forward (05), LayerNorm or `nn.LayerNorm` (06) and Pre-LN block (07).
#
# Keep the course's attribute names (`token_emb`, `pos_emb`, `blocks` with `norm1`, `attn` with `W_Q, W_K, W_V,
# W_O`, `norm2`, `ffn` with `linear1, linear2`, then `norm`, `lm_head` tied to `token_emb`): the check copies the
# reference's weights into your TinyLM by those names. The check runs a script that imports your file and calls the
# three names on inputs of its own (random q, k, v with a causal mask; ids with labels), then compares the mask, the
# attention's output and weights, the logits and the loss with the reference's. Then it builds a fresh TinyLM and asks
# that the head be tied (`lm_head.weight` *is* `token_emb.weight`, one parameter, not a copy) and that its matrices
# start as GPT-2's init leaves them (a standard deviation near 0.02, as notebook 08's).
#
# **Difficulty:** ★★☆ · **Time:** about 30 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Nothing here is new: it is your code, gathered. A file cannot use a notebook's variables, so every function and
# class the model needs must be defined in it, in the order they are used, with its own imports at the top.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# Your solution cells of notebooks 01 (mask, attention), 02 (split, merge, the multi-head module), 05 (FeedForward),
# 07 (TransformerBlock) and 08 (`causal_lm_loss`, TinyLM with its init). Drop what the model does not use (the
# positional-encoding variants, dropout). If the check says the parameter names differ, compare `sorted(model.state_dict())`
# with the names above.
# </details>

# %% [markdown] lang="zh"
# ## 1. `model.py`
#
# ### 练习 1：`tiny-transformer/model.py`
#
# 一个文件装下模型需要的一切。把下面这些从你的各个笔记本里复制过来，拼成一个文件：
#
# - `causal_mask(T, device=None) -> (T, T) bool`：因果掩码（causal mask），查询（query）可以关注的位置为 True（笔记本 01）；
# - `scaled_dot_product_attention(q, k, v, mask=None) -> (out, weights)`，作用在最后两个维度上（笔记本 01）；
# - `TinyLM(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)`，带有 `forward(input_ids, labels=None) -> (logits, loss)`（笔记本 08）：给了 labels 时，loss 就是预测下一个 token 的交叉熵损失（cross-entropy loss）。它由你自己写的这些部件搭成：02 的多头注意力（multi-head attention）、05 的前馈网络（FFN）、06 的层归一化（LayerNorm）或 `nn.LayerNorm`，以及 07 的前置层归一化（Pre-LN）块。
#
# 保留课程里的属性名：`token_emb`、`pos_emb`；`blocks` 里每一块有 `norm1`、带 `W_Q, W_K, W_V, W_O` 的 `attn`、`norm2`、带 `linear1, linear2` 的 `ffn`；然后是 `norm`，以及与 `token_emb` 权重共享（weight tying）的 `lm_head`。检查会按这些名字，把参考实现的权重复制进你的 TinyLM。检查会运行一个脚本：导入你的文件，用它自己的输入调用这三个名字（随机的 q, k, v 加一个因果掩码；带 labels 的 ids），然后把掩码、注意力的输出和权重、logits 以及 loss 都和参考实现对比。之后它再新建一个 TinyLM，要求输出层和嵌入真正共享权重（`lm_head.weight` **就是** `token_emb.weight`：同一个参数，而不是一份拷贝），并且各个矩阵的初始值符合 GPT-2 的初始化（initialization）：标准差在 0.02 附近，和笔记本 08 里的一样。
#
# **难度：** ★★☆ · **用时：** 约 30 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 这里没有新东西：就是把你写过的代码收拢到一起。文件用不了笔记本里的变量，所以模型需要的每个函数和类都必须在文件里定义，按用到的先后顺序排好，文件开头写上它自己的 import。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 你在这些笔记本里的答案单元格：01 的掩码（mask）和注意力（attention），02 的 split、merge 和多头注意力（multi-head attention）模块，05 的 FeedForward，07 的 TransformerBlock，以及 08 的 `causal_lm_loss` 和带初始化（initialization）的 TinyLM。模型用不到的就去掉（各种位置编码（positional encoding）的变体、dropout）。如果检查说 TinyLM 的参数（parameter）名和课程里的不一样，把 `sorted(model.state_dict())` 和上面的名字对比一下。
# </details>

# %% solution="capstone_model"
%%writefile tiny-transformer/model.py
### BEGIN SOLUTION
"""A tiny decoder-only Transformer language model (GPT-style, Pre-LN), in one file.

Shapes: B batch, T positions, D = d_model, H = num_heads, d_k = D / H, V = vocab_size.
Sources: Vaswani et al. 2017 (attention, §3.2); Radford et al. 2019 (GPT-2: Pre-LN, init); PyTorch's
``F.scaled_dot_product_attention`` and ``F.cross_entropy`` docs.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


def causal_mask(T, device=None):
    """(T, T) bool, True where query t may attend to key s: s <= t."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v over the last two dims; mask True = may attend. Returns (out, weights)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)  # each query's weights over the keys sum to 1
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape

        def split(t):  # (B, T, D) -> (B, H, T, d_k)
            return t.view(B, T, self.num_heads, self.d_k).transpose(1, 2)

        out, _ = scaled_dot_product_attention(split(self.W_Q(x)), split(self.W_K(x)), split(self.W_V(x)), mask)
        return self.W_O(out.transpose(1, 2).reshape(B, T, D))  # (B, T, D)


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))  # (B, T, D)


class TransformerBlock(nn.Module):
    """Pre-LN: x + attn(norm1(x)), then x + ffn(norm2(x))."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(d_model), MultiHeadSelfAttention(d_model, num_heads)
        self.norm2, self.ffn = nn.LayerNorm(d_model), FeedForward(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.norm1(x), mask)
        return x + self.ffn(self.norm2(x))  # (B, T, D)


def causal_lm_loss(logits, labels):
    """Next-token cross-entropy: logits at t against labels at t + 1, -100 ignored. logits (B, T, V), labels (B, T)."""
    V = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), ignore_index=-100)


class TinyLM(nn.Module):
    """Token and learned position embeddings, num_layers Pre-LN blocks, a final LayerNorm, a head tied to the token
    embedding. forward(input_ids (B, T), labels=None) -> (logits (B, T, V), loss or None)."""

    def __init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff):
        super().__init__()
        self.max_seq_len = max_seq_len
        self.token_emb, self.pos_emb = nn.Embedding(vocab_size, d_model), nn.Embedding(max_seq_len, d_model)
        self.blocks = nn.ModuleList(TransformerBlock(d_model, num_heads, d_ff) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.token_emb.weight  # weight tying: one matrix
        for name, p in self.named_parameters():  # GPT-2's init: N(0, 0.02), residual projections scaled down
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * num_layers) if name.endswith(("W_O.weight", "linear2.weight")) else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, input_ids, labels=None):
        B, T = input_ids.shape
        if T > self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}")
        x = self.token_emb(input_ids) + self.pos_emb(torch.arange(T, device=input_ids.device))  # (B, T, D)
        mask = causal_mask(T, device=input_ids.device)
        for block in self.blocks:
            x = block(x, mask)
        logits = self.lm_head(self.norm(x))  # (B, T, V)
        return logits, None if labels is None else causal_lm_loss(logits, labels)
### END SOLUTION

# %% lang="zh"
%%writefile tiny-transformer/model.py
### BEGIN SOLUTION
"""一个很小的仅解码器 Transformer 语言模型（GPT 风格，Pre-LN），写在一个文件里。

形状：B 批次，T 位置，D = d_model，H = num_heads，d_k = D / H，V = vocab_size。
参考资料：Vaswani 等人，2017（注意力，§3.2）；Radford 等人，2019（GPT-2：Pre-LN、初始化）；
PyTorch 的 ``F.scaled_dot_product_attention`` 和 ``F.cross_entropy`` 文档。
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


def causal_mask(T, device=None):
    """(T, T) 的 bool 张量，查询 t 可以关注键 s 的位置为 True：s <= t。"""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def scaled_dot_product_attention(q, k, v, mask=None):
    """沿最后两维计算 softmax(q k^T / sqrt(d_k)) v；mask 中 True 表示可以关注。返回 (out, weights)。"""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)  # 每个查询在所有键上的权重之和为 1
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape

        def split(t):  # (B, T, D) -> (B, H, T, d_k)
            return t.view(B, T, self.num_heads, self.d_k).transpose(1, 2)

        out, _ = scaled_dot_product_attention(split(self.W_Q(x)), split(self.W_K(x)), split(self.W_V(x)), mask)
        return self.W_O(out.transpose(1, 2).reshape(B, T, D))  # (B, T, D)


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))  # (B, T, D)


class TransformerBlock(nn.Module):
    """Pre-LN：x + attn(norm1(x))，然后 x + ffn(norm2(x))。"""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(d_model), MultiHeadSelfAttention(d_model, num_heads)
        self.norm2, self.ffn = nn.LayerNorm(d_model), FeedForward(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.norm1(x), mask)
        return x + self.ffn(self.norm2(x))  # (B, T, D)


def causal_lm_loss(logits, labels):
    """下一个 token 的交叉熵：位置 t 的 logits 对应位置 t + 1 的标签，-100 不计入。logits (B, T, V)，labels
    (B, T)。"""
    V = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), ignore_index=-100)


class TinyLM(nn.Module):
    """token 嵌入和可学习的位置嵌入，num_layers 个 Pre-LN 块，最后一个 LayerNorm，
    以及和 token 嵌入共享权重的输出层。forward(input_ids (B, T), labels=None) -> (logits (B, T, V), loss 或
    None)。"""

    def __init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff):
        super().__init__()
        self.max_seq_len = max_seq_len
        self.token_emb, self.pos_emb = nn.Embedding(vocab_size, d_model), nn.Embedding(max_seq_len, d_model)
        self.blocks = nn.ModuleList(TransformerBlock(d_model, num_heads, d_ff) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.token_emb.weight  # 权重共享：同一个矩阵
        for name, p in self.named_parameters():  # GPT-2 的初始化：N(0, 0.02)，写回残差流的投影按比例缩小
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * num_layers) if name.endswith(("W_O.weight", "linear2.weight")) else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, input_ids, labels=None):
        B, T = input_ids.shape
        if T > self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}")
        x = self.token_emb(input_ids) + self.pos_emb(torch.arange(T, device=input_ids.device))  # (B, T, D)
        mask = causal_mask(T, device=input_ids.device)
        for block in self.blocks:
            x = block(x, mask)
        logits = self.lm_head(self.norm(x))  # (B, T, V)
        return logits, None if labels is None else causal_lm_loss(logits, labels)
### END SOLUTION

# %% test="capstone_model_check"
from tinylm_checks import check_capstone_model
check_capstone_model(repo)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_capstone_model(repo, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ## 2. Tests
#
# A repository tests itself: `python -m pytest` in `tiny-transformer/` runs every `test_*` function of
# `tests/test_*.py`. A test is worth what it catches: each check below runs your test file on two **correct**
# `model.py` files (it must pass) and on `model.py` files that are wrong in a known way (it must fail on each). Your
# tests import from `model` (`from model import ...`): run them with `python -m pytest` in the repository's root,
# which puts that folder on the import path (plain `pytest` does not, and cannot import `model`).
#
# The check's files are not the reference's text. Each correct one computes exactly what the reference computes, but
# is written differently (other local names and comments, the definitions in another order, equivalent
# expressions), and each check draws new ones: so test what the code computes, through `causal_mask`,
# `scaled_dot_product_attention`, `TinyLM` and the course's attribute names, with a tolerance (`torch.allclose`);
# a test that reads `model.py`'s text, or compares it with a file it knows, fails on them. What your tests print on
# the check's files is not shown (they are the answer in other words): the check says which run failed and how
# pytest ended, and you see the details by running your tests on your own `model.py`, which
# `check_capstone_model` compares with the reference. Each run may use 60 s of CPU time and take 300 s in all; a
# run stopped at a limit is reported as such.
#
# ### Exercise 2: `tests/test_attention.py`
#
# Test `scaled_dot_product_attention`. The check's broken models: one that does not divide the scores by √d_k, one
# that takes the softmax over the queries (`dim=-2`).
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Compare with something you trust, on inputs where a mistake shows: PyTorch has its own attention. Properties
# help too: each query's weights are a probability distribution over the keys.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# PyTorch's function of the same name in `torch.nn.functional` returns the output only (no weights). Use random
# q, k, v with more than one query and key, and `torch.allclose` for the comparison; sum the weights over the last
# dimension. A softmax over the wrong axis keeps every shape (with T_q != T_k too: weights (B, T_q, T_k), output
# (B, T_q, d_v)), so only values catch it.
# </details>

# %% [markdown] lang="zh"
# ## 2. 测试
#
# 一个仓库要能自己测试自己：在 `tiny-transformer/` 里运行 `python -m pytest`，会跑 `tests/test_*.py` 里的每一个 `test_*` 函数。测试的价值，就在于它能抓住什么错：下面的每个检查都会拿你的测试文件去测两个**正确的** `model.py`（必须通过），再去测几个按已知方式写错的 `model.py`（每一个都必须失败）。你的测试从 `model` 导入（`from model import ...`）：要在仓库的根目录下用 `python -m pytest` 运行它们，这样这个目录才会加进导入路径（直接运行 `pytest` 不会加，也就导入不了 `model`）。
#
# 检查用的这些文件并不是参考实现的原文。每个正确的文件算出来的结果都和参考实现一模一样，只是写法不同（局部变量名和注释不同，定义的先后顺序不同，用的是等价的表达式），而且每次检查都会重新生成。所以，测试要测代码算出来的结果：通过 `causal_mask`、`scaled_dot_product_attention`、`TinyLM` 和课程里的属性名去测，比较时留出误差（`torch.allclose`）。去读 `model.py` 的文本、或者拿它和某个已知文件比对的测试，在这些文件上都会失败。你的测试在检查的文件上打印了什么，不会显示给你（那些文件就是换了写法的答案）：检查只告诉你哪一次运行失败了、pytest 是怎么结束的。想看细节，就在你自己的 `model.py` 上运行你的测试，而 `check_capstone_model` 会把你的 `model.py` 和参考实现对比。每次运行最多用 60 秒 CPU 时间，总共最多 300 秒；因为超出限制而被停掉的运行，检查会直接这样告诉你。
#
# ### 练习 2：`tests/test_attention.py`
#
# 测试 `scaled_dot_product_attention`。检查准备的坏模型有两个：一个没有把分数除以 √d_k，另一个在查询那一维上做 softmax（`dim=-2`）。
#
# **难度：** ★☆☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 找一个你信得过的东西来对比，并且挑能让错误暴露出来的输入：PyTorch 自己就有注意力（attention）的实现。性质也能帮上忙：每个查询（query）的权重，是在键（key）上的一个概率分布。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# `torch.nn.functional` 里有一个同名函数，它只返回输出（不返回权重）。用随机的 q, k, v，查询（query）和键（key）都不止一个，用 `torch.allclose` 来比较；再把权重沿最后一维求和。在错误的轴上做 softmax，形状（shape）一点都不会变（T_q != T_k 时也一样：权重还是 (B, T_q, T_k)，输出还是 (B, T_q, d_v)），只有比较数值才能发现。
# </details>

# %% solution="attention_tests"
%%writefile tiny-transformer/tests/test_attention.py
### BEGIN SOLUTION
import torch
import torch.nn.functional as F

from model import scaled_dot_product_attention


def test_equals_pytorchs_attention():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 7, 8), torch.randn(2, 3, 7, 4)
    out, _ = scaled_dot_product_attention(q, k, v)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-5)


def test_weights_are_a_distribution_over_the_keys():
    torch.manual_seed(1)
    q, k, v = torch.randn(4, 6, 8), torch.randn(4, 6, 8), torch.randn(4, 6, 8)
    _, weights = scaled_dot_product_attention(q, k, v)
    assert weights.shape == (4, 6, 6)
    assert torch.allclose(weights.sum(dim=-1), torch.ones(4, 6), atol=1e-6)
    assert (weights >= 0).all()
### END SOLUTION

# %% test="attention_tests_check"
from tinylm_checks import check_attention_tests
check_attention_tests(repo)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_attention_tests(repo, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ### Exercise 3: `tests/test_causal_mask.py`
#
# Test that the model cannot read the future. The check's broken models: a mask that lets position t see token
# t + 1 (`tril(diagonal=1)`), and a TinyLM that never passes its mask to the blocks (the mask function itself is
# right there: a test of the mask alone misses it).
#
# **Difficulty:** ★★☆ · **Time:** about 15 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Two levels: the mask itself, and what the whole model does with it. A causal model's logits at position t depend
# only on tokens 0..t.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# Compare `causal_mask(T)` with a lower-triangular bool matrix. Then build a small TinyLM in eval mode, change every
# token after some position t, run both batches under `torch.no_grad()` and compare the logits at positions 0..t.
# </details>

# %% [markdown] lang="zh"
# ### 练习 3：`tests/test_causal_mask.py`
#
# 测试模型读不到未来。检查准备的坏模型：一个模型的掩码让位置 t 能看到 token t + 1（`tril(diagonal=1)`）；另一个模型的 TinyLM 从来不把掩码传给各个块（这时掩码函数本身是对的：只测掩码的测试抓不到它）。
#
# **难度：** ★★☆ · **用时：** 约 15 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 分两个层面：掩码（mask）本身，以及整个模型怎么用它。一个因果模型在位置 t 上的 logits，只取决于 token 0..t。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 把 `causal_mask(T)` 和一个下三角的 bool 矩阵比较。然后搭一个 eval 模式下的小 TinyLM，把某个位置 t 之后的 token 全部改掉，在 `torch.no_grad()` 下把两个批次（batch）都跑一遍，比较位置 0..t 上的 logits。
# </details>

# %% solution="causal_mask_tests"
%%writefile tiny-transformer/tests/test_causal_mask.py
### BEGIN SOLUTION
import torch

from model import TinyLM, causal_mask


def test_mask_is_lower_triangular():
    assert torch.equal(causal_mask(5), torch.ones(5, 5, dtype=torch.bool).tril())


def test_the_model_reads_no_future_token():
    torch.manual_seed(0)
    model = TinyLM(vocab_size=11, max_seq_len=8, d_model=16, num_heads=2, num_layers=2, d_ff=32).eval()
    ids = torch.randint(11, (2, 8))
    changed = ids.clone()
    changed[:, 4:] = (changed[:, 4:] + 1) % 11  # every token after position 3
    with torch.no_grad():
        a, _ = model(ids)
        b, _ = model(changed)
    assert torch.allclose(a[:, :4], b[:, :4], atol=1e-6)  # positions 0..3 unchanged
    assert not torch.allclose(a[:, 4:], b[:, 4:])
### END SOLUTION

# %% lang="zh"
%%writefile tiny-transformer/tests/test_causal_mask.py
### BEGIN SOLUTION
import torch

from model import TinyLM, causal_mask


def test_mask_is_lower_triangular():
    assert torch.equal(causal_mask(5), torch.ones(5, 5, dtype=torch.bool).tril())


def test_the_model_reads_no_future_token():
    torch.manual_seed(0)
    model = TinyLM(vocab_size=11, max_seq_len=8, d_model=16, num_heads=2, num_layers=2, d_ff=32).eval()
    ids = torch.randint(11, (2, 8))
    changed = ids.clone()
    changed[:, 4:] = (changed[:, 4:] + 1) % 11  # 位置 3 之后的每个 token
    with torch.no_grad():
        a, _ = model(ids)
        b, _ = model(changed)
    assert torch.allclose(a[:, :4], b[:, :4], atol=1e-6)  # 位置 0..3 不变
    assert not torch.allclose(a[:, 4:], b[:, 4:])
### END SOLUTION

# %% test="causal_mask_tests_check"
from tinylm_checks import check_causal_mask_tests
check_causal_mask_tests(repo)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_causal_mask_tests(repo, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ### Exercise 4: `tests/test_overfit_batch.py`
#
# The strongest test of notebook 09, as a test: a small TinyLM trained on one fixed batch must bring its loss near
# 0. The check's broken models: one whose loss carries no gradient to the weights (nothing learns), one whose mask
# also hides each position itself (`tril(diagonal=-1)`: the first position attends to nothing and the loss is NaN),
# one whose logits are the same at every position of every sequence (its loss falls a little, to the characters'
# frequencies, and no lower), and one whose blocks get no gradient (only the embedding and the head learn: in the
# reference's test its loss falls from 2.5 to 1.7-1.9, never near 0). Assert how low the loss ends, not only that it
# fell: a model that learns too little also "falls". Keep it small: the check runs it six times, one thread each (a
# few seconds each on a laptop).
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# A model that can learn memorises one batch: the loss falls from ln V towards 0. Assert where it ends, relative to
# where it must start.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# A TinyLM with a small vocabulary and width, one fixed batch of random ids, AdamW with a large learning rate (1e-2),
# a hundred steps where the batch is also its own labels, then an assert that the last loss is a small fraction of
# ln V (a NaN fails any `<`).
# </details>

# %% [markdown] lang="zh"
# ### 练习 4：`tests/test_overfit_batch.py`
#
# 把笔记本 09 里最有力的那项检验写成测试：一个小 TinyLM 在一个固定的批次（batch）上训练，必须把损失降到接近 0。检查准备的坏模型：一个模型的损失不会把梯度（gradient）传到权重上（什么都学不到）；一个模型的掩码把每个位置自己也遮住了（`tril(diagonal=-1)`：第一个位置什么都关注不到，损失是 NaN）；一个模型在每条序列的每个位置都输出同样的 logits（损失只降一点：学会各字符出现的频率就到头了）；还有一个模型的各个块（block）拿不到梯度（只有嵌入和输出层在学：在参考实现的测试里，它的损失从 2.5 降到 1.7-1.9，怎么也到不了 0 附近）。要断言损失最后降到多低，而不只是断言它降了：学得太少的模型，损失也会“降”。测试要小：检查会把它跑六遍，每遍一个线程（在笔记本电脑上每遍几秒钟）。
#
# **难度：** ★☆☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 能学习的模型可以把一个批次（batch）背下来：损失从 ln V 一路降向 0。断言它最后到了哪里，而且要相对于它一开始必然所在的位置来断言。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 一个词表（vocabulary）和宽度都很小的 TinyLM，一个由随机 ids 组成的固定批次（batch），AdamW 的学习率（learning rate）取得大一些（1e-2），训练一百步，每一步都让这个批次兼作它自己的 labels，最后断言最终的损失只是 ln V 的一小部分（NaN 在任何 `<` 比较里都不成立，断言会失败）。
# </details>

# %% solution="overfit_tests"
%%writefile tiny-transformer/tests/test_overfit_batch.py
### BEGIN SOLUTION
import math

import torch

from model import TinyLM


def test_overfits_one_batch():
    torch.manual_seed(0)
    model = TinyLM(vocab_size=12, max_seq_len=8, d_model=16, num_heads=2, num_layers=1, d_ff=32)
    batch = torch.randint(12, (4, 8))
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-2)
    for _ in range(100):
        _, loss = model(batch, labels=batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.1 * math.log(12)  # from ln V at the start to near 0
### END SOLUTION

# %% lang="zh"
%%writefile tiny-transformer/tests/test_overfit_batch.py
### BEGIN SOLUTION
import math

import torch

from model import TinyLM


def test_overfits_one_batch():
    torch.manual_seed(0)
    model = TinyLM(vocab_size=12, max_seq_len=8, d_model=16, num_heads=2, num_layers=1, d_ff=32)
    batch = torch.randint(12, (4, 8))
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-2)
    for _ in range(100):
        _, loss = model(batch, labels=batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.1 * math.log(12)  # 从开始时的 ln V 降到接近 0
### END SOLUTION

# %% test="overfit_tests_check"
from tinylm_checks import check_overfit_tests
check_overfit_tests(repo)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_overfit_tests(repo, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# Your tests on your own model:

# %% [markdown] lang="zh"
# 用你的测试来测你自己的模型：

# %%
_ = run("-m", "pytest", "-q", "--color=no", "-p", "no:cacheprovider", "tests")

# %% [markdown]
# ## 3. Training from a configuration
#
# A configuration file keeps a run's settings out of the code, so that a run can be repeated and compared. Here is
# `configs/tiny.yaml` (the sizes of notebook 09's run); change it if you like, keeping its keys:

# %% [markdown] lang="zh"
# ## 3. 按配置文件训练
#
# 配置文件把一次运行的设置从代码里拿出来，这样运行就可以重复，也可以互相比较。下面是 `configs/tiny.yaml`（尺寸和笔记本 09 的那次训练一样）；你想改就改，但要保留它的键：

# %%
%%writefile tiny-transformer/configs/tiny.yaml
model:
  max_seq_len: 64
  d_model: 64
  num_heads: 4
  num_layers: 2
  d_ff: 256
train:
  steps: 600
  batch_size: 16
  lr: 3.0e-3
  seed: 0

# %% [markdown]
# ### Exercise 5: `train.py`
#
# `python train.py --config configs/tiny.yaml [--steps N] [--out checkpoint.pt] [--data FILE]`:
#
# 1. read the configuration with `yaml.safe_load`; `--steps` overrides `train.steps`; seed `torch` with `train.seed`;
# 2. the text: the file `--data` names, read as UTF-8 (`open(path, encoding="utf-8")`: without it, Windows reads the
#    system's code page), by default `data/train.txt` (the file the cell above wrote: no import of the course, the
#    repository runs where the course is not installed); a character vocabulary `sorted(set(text))`, the ids;
# 3. `TinyLM(**config["model"], vocab_size=len(vocab))`, AdamW at `train.lr`, and `steps` steps on random windows of
#    `max_seq_len` tokens (batch `train.batch_size`): zero_grad, loss, backward, clip to 1.0, step; print the loss now
#    and then. The loss is `model(x, labels=x)`: TinyLM shifts the labels itself (notebook 08), so pass the inputs,
#    not notebook 09's `y` (already shifted, it would be shifted twice);
# 4. `torch.save({"config": model_config, "model": model.state_dict(), "vocab": vocab}, out)`, where `model_config`
#    holds the model's arguments, `vocab_size` included.
#
# The check first reads `configs/tiny.yaml` (its two sections and keys), then runs your `train.py` with a small
# configuration of its own and `--steps 40`, loads the checkpoint, puts its weights into the reference TinyLM and
# measures the loss on the corpus: it must be well below ln V (40 steps of the reference take it from 4.6 to about
# 3.2). Then it runs it again with `--data` on a text where each character is always followed by the same one (a
# shuffled alphabet, repeated): 40 steps of a right loop learn it, next-token loss near 0 (the reference ends at
# about 0.01); targets shifted twice learn the character after next instead and end far above ln V (8 to 9 in the
# course's runs, depending on the shuffle).
#
# **Difficulty:** ★★☆ · **Time:** about 20 min
#
# <details><summary>Hint 1: the idea</summary>
#
# It is notebook 09's training loop, moved into a script: what the notebook kept in variables now comes from the
# command line and the configuration, and what the run produced goes into a file another script can load.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# `argparse.ArgumentParser` with four options (`--steps` defaults to None, meaning "the configuration's", and `--data`
# to `data/train.txt`); windows as in notebook 09's `get_batch` (random starts, a stack of slices); the loss as the model's second output when
# it is given labels. The script runs its `main` only when it is run, not when it is imported (the `__name__`
# test).
# </details>

# %% [markdown] lang="zh"
# ### 练习 5：`train.py`
#
# `python train.py --config configs/tiny.yaml [--steps N] [--out checkpoint.pt] [--data FILE]`：
#
# 1. 用 `yaml.safe_load` 读取配置；`--steps` 会覆盖 `train.steps`；用 `train.seed` 给 `torch` 设随机种子（random seed）；
# 2. 文本：给了 `--data` 就按 UTF-8 读它指定的文件（`open(path, encoding="utf-8")`：不写 encoding 的话，Windows 会按系统的代码页去读），默认读 `data/train.txt`（就是上面那个单元格写出的文件：不导入课程的任何东西，这样仓库在没装课程的地方也能运行）；建字符词表（vocabulary）`sorted(set(text))`，再得到 ids；
# 3. `TinyLM(**config["model"], vocab_size=len(vocab))`，学习率（learning rate）为 `train.lr` 的 AdamW，在长度为 `max_seq_len` 个 token 的随机窗口上训练 `steps` 步（批次大小为 `train.batch_size`）：每一步依次清零梯度（zero_grad）、算损失、反向传播（backward）、把梯度裁剪到 1.0、更新参数（step）；隔一段时间打印一下损失。损失用 `model(x, labels=x)` 来算：TinyLM 会自己把标签错位（笔记本 08），所以传进去的是输入本身，而不是笔记本 09 里的 `y`（它已经错过位了，再传进去就会错位两次）；
# 4. `torch.save({"config": model_config, "model": model.state_dict(), "vocab": vocab}, out)`，其中 `model_config` 存着模型的参数，包括 `vocab_size`。
#
# 检查先读取 `configs/tiny.yaml`（它的两个部分和其中的键），然后用它自己的一份小配置和 `--steps 40` 运行你的 `train.py`，加载检查点（checkpoint），把其中的权重装进参考实现的 TinyLM，测它在语料上的损失：必须远低于 ln V（参考实现跑 40 步，损失从 4.6 降到约 3.2）。接着它再用 `--data` 跑一次，这回用的文本里，每个字符后面总是跟着同一个字符（一个打乱的字母表，重复多遍）：训练循环写对了，40 步就能学会，预测下一个 token 的损失接近 0（参考实现最后约为 0.01）；如果目标被错位了两次，模型学到的就是隔一个之后的那个字符，损失最后会远高于 ln V（课程自己跑的结果是 8 到 9，取决于字母表怎么打乱）。
#
# **难度：** ★★☆ · **用时：** 约 20 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 这就是笔记本 09 的训练循环，搬进了一个脚本：原来笔记本存在变量里的东西，现在来自命令行和配置文件；训练跑出来的结果存进一个文件，另一个脚本可以加载它。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# `argparse.ArgumentParser` 加四个选项（`--steps` 默认为 None，表示“用配置里的”；`--data` 默认为 `data/train.txt`）；窗口的取法和笔记本 09 的 `get_batch` 一样（随机的起点，把切片堆叠起来）；损失就是给了 labels 时模型的第二个输出。脚本只在被直接运行时才执行它的 `main`，被导入时不执行（也就是 `__name__` 那个判断）。
# </details>

# %% solution="capstone_train"
%%writefile tiny-transformer/train.py
### BEGIN SOLUTION
"""Train the model: python train.py [--config configs/tiny.yaml] [--steps N] [--out checkpoint.pt] [--data FILE]

Trains on a text file (data/train.txt unless --data names another), prints the loss every few steps and saves
{"config", "model", "vocab"} to the checkpoint.
"""
import argparse
import math

import torch
import yaml

from model import TinyLM


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/tiny.yaml")
    parser.add_argument("--steps", type=int, default=None, help="overrides train.steps of the config")
    parser.add_argument("--out", default="checkpoint.pt")
    parser.add_argument("--data", default="data/train.txt", help="the text file to train on")
    args = parser.parse_args()
    with open(args.config, encoding="utf-8") as f:  # by name: Windows' default is the system's code page
        config = yaml.safe_load(f)
    train = config["train"]
    steps = args.steps if args.steps is not None else train["steps"]
    torch.manual_seed(train["seed"])

    with open(args.data, encoding="utf-8") as f:
        text = f.read()
    vocab = sorted(set(text))  # a character-level tokenizer
    stoi = {ch: i for i, ch in enumerate(vocab)}
    data = torch.tensor([stoi[ch] for ch in text])
    model_config = {**config["model"], "vocab_size": len(vocab)}
    model = TinyLM(**model_config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=train["lr"])
    T, B = model_config["max_seq_len"], train["batch_size"]
    print(f"{sum(p.numel() for p in model.parameters()):,d} parameters; ln V = {math.log(len(vocab)):.3f}")
    model.train()
    for step in range(1, steps + 1):
        starts = torch.randint(len(data) - T - 1, (B,))
        x = torch.stack([data[s:s + T] for s in starts])  # (B, T)
        _, loss = model(x, labels=x)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step == 1 or step % 50 == 0 or step == steps:
            print(f"step {step}: loss {loss.item():.3f}")
    torch.save({"config": model_config, "model": model.state_dict(), "vocab": vocab}, args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
### END SOLUTION

# %% lang="zh"
%%writefile tiny-transformer/train.py
### BEGIN SOLUTION
"""训练模型：python train.py [--config configs/tiny.yaml] [--steps N] [--out checkpoint.pt] [--data FILE]

在一个文本文件上训练（默认是 data/train.txt，--data 可以指定别的文件），每隔几步打印一次损失，
并把 {"config", "model", "vocab"} 保存到检查点。
"""
import argparse
import math

import torch
import yaml

from model import TinyLM


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/tiny.yaml")
    parser.add_argument("--steps", type=int, default=None, help="overrides train.steps of the config")
    parser.add_argument("--out", default="checkpoint.pt")
    parser.add_argument("--data", default="data/train.txt", help="the text file to train on")
    args = parser.parse_args()
    with open(args.config, encoding="utf-8") as f:  # 写明编码：Windows 默认用系统的代码页
        config = yaml.safe_load(f)
    train = config["train"]
    steps = args.steps if args.steps is not None else train["steps"]
    torch.manual_seed(train["seed"])

    with open(args.data, encoding="utf-8") as f:
        text = f.read()
    vocab = sorted(set(text))  # 一个字符级分词器
    stoi = {ch: i for i, ch in enumerate(vocab)}
    data = torch.tensor([stoi[ch] for ch in text])
    model_config = {**config["model"], "vocab_size": len(vocab)}
    model = TinyLM(**model_config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=train["lr"])
    T, B = model_config["max_seq_len"], train["batch_size"]
    print(f"{sum(p.numel() for p in model.parameters()):,d} parameters; ln V = {math.log(len(vocab)):.3f}")
    model.train()
    for step in range(1, steps + 1):
        starts = torch.randint(len(data) - T - 1, (B,))
        x = torch.stack([data[s:s + T] for s in starts])  # (B, T)
        _, loss = model(x, labels=x)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step == 1 or step % 50 == 0 or step == steps:
            print(f"step {step}: loss {loss.item():.3f}")
    torch.save({"config": model_config, "model": model.state_dict(), "vocab": vocab}, args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
### END SOLUTION

# %% test="capstone_train_check"
from tinylm_checks import check_capstone_train
check_capstone_train(repo)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_capstone_train(repo, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# Now the real run, with your configuration: 600 steps.

# %% [markdown] lang="zh"
# 现在用你的配置正式跑一次：600 步。

# %%
trained = run("train.py", "--config", "configs/tiny.yaml", "--steps", str(TRAIN_STEPS), "--out", "checkpoint.pt")

# %% [markdown]
# ### Exercise 6: `generate.py`
#
# `python generate.py --checkpoint checkpoint.pt --prompt "def " [--max-new-tokens 200] [--temperature 1.0]
# [--top-k K] [--seed 0]`: load the checkpoint (`torch.load(path, weights_only=True)`), rebuild the model from its
# config and weights, encode the prompt with its vocabulary, continue it with notebook 10's `generate` (crop the
# context to `max_seq_len`, the last position's logits divided by the temperature, top-k, a draw with a
# `torch.Generator` seeded from `--seed`), and print the prompt followed by its continuation (which may hold
# newlines).
#
# The check saves a checkpoint of its own (a small model with sharp predictions), runs your script greedily
# (`--top-k 1`) for more new characters than `max_seq_len` allows, and compares the text with the reference's; then
# it samples twice with the same `--seed` and expects the same text, the prompt and exactly the new characters; at a
# temperature near 0 (on a model with flat predictions) it expects the greedy text, and with `--top-k 3` each new
# character among the model's 3 most likely.
#
# **Difficulty:** ★★☆ · **Time:** about 15 min
#
# <details><summary>Hint 1: the idea</summary>
#
# The checkpoint holds all a model needs to come back: its configuration, its weights and its vocabulary. The rest is
# notebook 10.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# The model from the checkpoint's config (keyword arguments), then its weights with `load_state_dict`; a dict from
# character to id built from the checkpoint's vocabulary; the generation loop under `torch.no_grad()` in eval mode,
# drawing with `torch.multinomial` and the generator. Greedy is top-k with k = 1.
# </details>

# %% [markdown] lang="zh"
# ### 练习 6：`generate.py`
#
# `python generate.py --checkpoint checkpoint.pt --prompt "def " [--max-new-tokens 200] [--temperature 1.0] [--top-k K] [--seed 0]`：用 `torch.load(path, weights_only=True)` 加载检查点（checkpoint），用其中的配置和权重重建模型，用其中的词表（vocabulary）给提示词编码，再用笔记本 10 的 `generate` 续写（把上下文截到 `max_seq_len`，最后一个位置的 logits 除以温度（temperature），做 top-k 采样（top-k sampling），用以 `--seed` 为种子的 `torch.Generator` 抽样），最后打印提示词和它的续写（续写里可能有换行）。
#
# 检查会存一个它自己的检查点（一个预测很“尖锐”的小模型），用贪心解码（greedy decoding）的方式（`--top-k 1`）运行你的脚本，要生成的新字符比 `max_seq_len` 允许的还多，再把文本和参考实现的输出对比；然后用同一个 `--seed` 采样两次，要求两次的文本相同，而且正好是提示词加上指定数量的新字符；温度接近 0 时（在一个预测很“平”的模型上），要求得到贪心解码的文本；用 `--top-k 3` 时，要求每个新字符都在模型认为最可能的 3 个字符之内。
#
# **难度：** ★★☆ · **用时：** 约 15 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 检查点（checkpoint）里存着让模型“复活”所需的一切：配置、权重和词表（vocabulary）。剩下的都是笔记本 10 的内容。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 先用检查点（checkpoint）里的 config（作为关键字参数）搭出模型，再用 `load_state_dict` 装入权重；用检查点里的词表（vocabulary）建一个从字符到 id 的 dict；生成循环放在 `torch.no_grad()` 下、eval 模式中，用 `torch.multinomial` 和那个 generator 来抽样。贪心解码（greedy decoding）就是 k = 1 的 top-k 采样（top-k sampling）。
# </details>

# %% solution="capstone_generate"
%%writefile tiny-transformer/generate.py
### BEGIN SOLUTION
"""Continue a prompt: python generate.py --checkpoint checkpoint.pt --prompt "def " [--max-new-tokens 200]
[--temperature 1.0] [--top-k K] [--seed 0]. Prints the prompt and its continuation."""
import argparse

import torch

from model import TinyLM


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    model.eval()
    for _ in range(max_new_tokens):
        logits, _ = model(idx[:, -model.max_seq_len:])  # crop to the context the model knows
        logits = logits[:, -1] / temperature  # (B, V): the last position's
        if top_k is not None:
            kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        nxt = torch.multinomial(logits.softmax(dim=-1), 1, generator=generator)  # (B, 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoint.pt")
    parser.add_argument("--prompt", default="def ")
    parser.add_argument("--max-new-tokens", type=int, default=200)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ckpt = torch.load(args.checkpoint, weights_only=True)
    model = TinyLM(**ckpt["config"])
    model.load_state_dict(ckpt["model"])
    stoi = {ch: i for i, ch in enumerate(ckpt["vocab"])}
    idx = torch.tensor([[stoi[ch] for ch in args.prompt]])  # (1, T)
    out = generate(model, idx, args.max_new_tokens, args.temperature, args.top_k,
                   torch.Generator().manual_seed(args.seed))
    print("".join(ckpt["vocab"][i] for i in out[0].tolist()))


if __name__ == "__main__":
    main()
### END SOLUTION

# %% lang="zh"
%%writefile tiny-transformer/generate.py
### BEGIN SOLUTION
"""续写一个提示词：python generate.py --checkpoint checkpoint.pt --prompt "def " [--max-new-tokens 200]
[--temperature 1.0] [--top-k K] [--seed 0]。打印提示词和它的续写。"""
import argparse

import torch

from model import TinyLM


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    model.eval()
    for _ in range(max_new_tokens):
        logits, _ = model(idx[:, -model.max_seq_len:])  # 裁剪到模型知道的上下文长度
        logits = logits[:, -1] / temperature  # (B, V)：最后一个位置的
        if top_k is not None:
            kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        nxt = torch.multinomial(logits.softmax(dim=-1), 1, generator=generator)  # (B, 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoint.pt")
    parser.add_argument("--prompt", default="def ")
    parser.add_argument("--max-new-tokens", type=int, default=200)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ckpt = torch.load(args.checkpoint, weights_only=True)
    model = TinyLM(**ckpt["config"])
    model.load_state_dict(ckpt["model"])
    stoi = {ch: i for i, ch in enumerate(ckpt["vocab"])}
    idx = torch.tensor([[stoi[ch] for ch in args.prompt]])  # (1, T)
    out = generate(model, idx, args.max_new_tokens, args.temperature, args.top_k,
                   torch.Generator().manual_seed(args.seed))
    print("".join(ckpt["vocab"][i] for i in out[0].tolist()))


if __name__ == "__main__":
    main()
### END SOLUTION

# %% test="capstone_generate_check"
from tinylm_checks import check_capstone_generate
check_capstone_generate(repo)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_capstone_generate(repo, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# Your model, from its checkpoint:

# %% [markdown] lang="zh"
# 从检查点加载你的模型：

# %%
SAMPLE_COMMAND = ["generate.py", "--checkpoint", "checkpoint.pt", "--prompt", "def ", "--max-new-tokens", "120",
                  "--temperature", "0.8"]
sampled = run(*SAMPLE_COMMAND)

# %% [markdown]
# ## 4. `report.md`
#
# ### Exercise 7: the report
#
# The lesson's report answers five questions, from your own runs (notebooks 09, 11 and 12 hold the numbers;
# notebook 12 wrote a longer report you can draw on). Keep the five headings and write at least 15 words under
# each, with numbers. Your instructor grades the report by hand (its 1 point): does each answer say what your runs
# measured and what that shows? The check under it only reads the file, each heading there, each answer long
# enough and a number (in digits) in the answers to the three questions that ask for a measured quantity (the
# parameters, the overfit, tokens/s), and gives no points.
#
# **Difficulty:** ★☆☆ · **Time:** about 20 min
#
# <details><summary>Hint 1: the idea</summary>
#
# A report states what was measured and what it shows, with the number next to the claim: "the loss fell from 4.6
# to 0.02 in 150 steps", not "the model learned".
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# The parameters: notebook 08's `parameter_table` and notebook 12's table. Overfitting: notebook 09's section 5 and
# the checklist lab. The ablations: notebook 11's tables. The compute: notebook 12's FLOPs per token against
# tokens/s. The first error: whatever stopped you first, and what showed it.
# </details>

# %% [markdown] lang="zh"
# ## 4. `report.md`
#
# ### 练习 7：报告
#
# 原讲义要求的报告回答五个问题，答案都要来自你自己跑的实验（数字在笔记本 09、11 和 12 里；笔记本 12 还写过一份更长的报告，可以从中取材）。五个标题保持不变，每个标题下至少写 15 个字，并且要有数字（检查是这样计数的：一个汉字算一个字，一个英文单词或一串连着写的数字也算一个，标点不算）。报告的 1 分由老师亲自批改，看的是：每个回答有没有说清楚你的实验测到了什么、又说明了什么。下面的检查只读这个文件，看每个标题在不在、每个回答够不够长，以及问测量值的那三个问题（参数、过拟合、tokens/s）的回答里有没有用阿拉伯数字写的数字；它不给分。
#
# **难度：** ★☆☆ · **用时：** 约 20 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 报告要写清楚测了什么、说明了什么，并把数字放在结论旁边：写“损失在 150 步内从 4.6 降到 0.02”，而不是“模型学会了”。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 参数（parameter）：笔记本 08 的 `parameter_table` 和笔记本 12 的表格。过拟合（overfitting）：笔记本 09 的第 5 节和检查清单实验。消融实验（ablation）：笔记本 11 的表格。计算量：笔记本 12 里每个 token 的 FLOPs 与 tokens/s 的对比。第一个错误：最先让你卡住的是什么，又是什么让它暴露出来的。
# </details>

# %% answer="capstone_report"
%%writefile tiny-transformer/report.md
# Report

## How are the parameters distributed?

### BEGIN SOLUTION
With d_model 64, 2 layers and 99 characters, each block holds about 12·D² = 49k parameters (attention 4·D², the
FFN 8·D²), the tied embedding V·D = 6.3k and the positions 4.1k: the blocks hold most of the 110k.
### END SOLUTION

## Can the model overfit one small batch?

### BEGIN SOLUTION
Yes: on one fixed batch the loss falls from ln V ≈ 4.6 to near 0 within 150 steps, so the model, the loss and the
training step can learn; its perplexity on new text then rises far above V.
### END SOLUTION

## What happened in the ablations?

### BEGIN SOLUTION
Without residual connections the deep model stays near the unigram loss; Post-LN ends a little higher than Pre-LN
at the same learning rates; without positions the model still tells orders apart through the causal mask.
### END SOLUTION

## Does the theoretical complexity match tokens/s?

### BEGIN SOLUTION
Training costs about 6N FLOPs per token plus the attention's 6LTD; the measured tokens/s times that gives a rate
well below the CPU's peak, as small matrices use it poorly.
### END SOLUTION

## What was the first error met, and what was the evidence?

### BEGIN SOLUTION
A loss that fell to near 0 at once: the labels were not shifted, and the samples repeated the prompt's last
character; shifting the labels by one made the loss start at ln V and fall slowly.
### END SOLUTION

# %% lang="zh"
%%writefile tiny-transformer/report.md
# 报告

## 参数是怎么分布的？

### BEGIN SOLUTION
d_model 为 64、2 层、词表有 99 个字符时，每个块约有 12·D² = 49k 个参数（注意力 4·D²，前馈网络 8·D²），共享权重的嵌入 V·D = 6.3k，位置嵌入 4.1k：11 万个参数里，大部分在各个块中。
### END SOLUTION

## 模型能过拟合一个小批次吗？

### BEGIN SOLUTION
能：在一个固定的批次上，损失在 150 步内从 ln V ≈ 4.6 降到接近 0，说明模型、损失和训练步骤连在一起确实能学习；这时它在新文本上的困惑度会升到远高于 V。
### END SOLUTION

## 消融实验中发生了什么？

### BEGIN SOLUTION
去掉残差连接后，深的模型停在 unigram 损失附近；在同样的学习率下，Post-LN 的最终损失比 Pre-LN 略高；去掉位置信息后，模型仍然能通过因果掩码分辨不同的顺序。
### END SOLUTION

## 理论复杂度和 tokens/s 对得上吗？

### BEGIN SOLUTION
训练时每个 token 约需 6N FLOPs，再加上注意力的 6LTD；拿它乘以实测的 tokens/s，得到的速率远低于 CPU 的峰值，因为小矩阵用不满 CPU 的算力。
### END SOLUTION

## 遇到的第一个错误是什么，证据是什么？

### BEGIN SOLUTION
损失一开始就掉到接近 0：原因是标签没有错开一位，证据是生成的样本一直重复提示词的最后一个字符；把标签错开一位之后，损失从 ln V 起步，慢慢下降。
### END SOLUTION

# %%
from tinylm_checks import check_capstone_report
check_capstone_report(repo)  # feedback only: your instructor grades the report

# %% lang="zh"
from tinylm_checks import check_capstone_report
check_capstone_report(repo)  # 仅供参考的反馈：报告由你的老师评分

# %% [markdown]
# ## 5. A repository worth showing
#
# The folder works; a stranger who finds it still needs to know what it is, what to install and how to run it, and
# git must not take in the checkpoints. The cells below write what a repository keeps beside its code:
#
# - `pyproject.toml` declares the requirements (PyTorch, PyYAML and NumPy with their lowest versions, pytest for
#   the tests) and tells pytest where the code is. Plain `pytest`, as a stranger types it, does not put the folder it runs in on
#   `sys.path` (`python -m pytest` does, which is why it passed above): `pythonpath = ["."]` does;
# - `.gitignore` keeps the checkpoints (`*.pt`, 450 kB each, and made again by `train.py`) and Python's caches out of
#   git;
# - `evaluate.py` measures the checkpoint on `data/valid.txt`, text that training never saw;
# - `README.md` says what the repository is and how to run it, with your own results: the parameter count, the final
#   training and validation losses, the sample your `generate.py` printed;
# - then, where git is installed, a first commit (where git has no identity for you yet, `user.name` and
#   `user.email`, the commit gets one of its own: git refuses to commit without one).
#
# The check at the end runs the repository as a stranger would: in a new virtual environment (venv) holding only what
# `pyproject.toml` declares and what that requires (none of the course's packages), it runs plain `pytest`,
# `python train.py --steps 2` and `python generate.py`. It gives no points: it says whether the repository is ready to
# show.

# %% [markdown] lang="zh"
# ## 5. 一个拿得出手的仓库
#
# 这个文件夹已经能用了；可别人拿到它，还得知道它是什么、要装什么、怎么运行，而且 git 不该把检查点收进去。下面的单元格写出一个仓库在代码之外还要有的文件：
#
# - `pyproject.toml` 声明依赖（PyTorch、PyYAML 和 NumPy，各自写明最低版本；测试另加 pytest），并告诉 pytest 代码在哪里。别人直接敲 `pytest` 时，pytest 不会把它运行所在的文件夹加进 `sys.path`（`python -m pytest` 会加，所以上面能通过）；写上 `pythonpath = ["."]` 就会加；
# - `.gitignore` 让检查点（`*.pt`，每个 450 kB，而且 `train.py` 随时能再生成）和 Python 的缓存不进入 git；
# - `evaluate.py` 在 `data/valid.txt` 上评估检查点，模型训练时从没见过这段文本；
# - `README.md` 说明这个仓库是什么、怎么运行，并附上你自己的结果：参数量、最后的训练损失和验证损失，以及你的 `generate.py` 打印出的样本；
# - 最后，如果装了 git，就做第一次提交（commit）。如果 git 还没配置你的身份（`user.name` 和 `user.email`），这次提交会临时用一个占位身份，因为没有身份 git 不肯提交。
#
# 最后的检查模拟第一次拿到这个仓库的人来运行它：新建一个虚拟环境（venv），里面只有 `pyproject.toml` 声明的包和它们依赖的包（课程的包一个也没有），在里面直接运行 `pytest`、`python train.py --steps 2` 和 `python generate.py`。它不给分，只告诉你这个仓库是否已经可以拿给别人看了。

# %%
%%writefile tiny-transformer/pyproject.toml
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny-transformer"
version = "0.1.0"
description = "A tiny decoder-only Transformer language model, trained on characters"
readme = "README.md"
requires-python = ">=3.10"
dependencies = [
    "torch>=2.5",
    "pyyaml>=6.0",
    "numpy>=1.24",
]

[project.optional-dependencies]
test = ["pytest>=8"]

[tool.setuptools]
py-modules = ["model"]  # what `pip install -e .` installs: the model (the scripts run from the folder)

[tool.pytest.ini_options]
# plain `pytest` (not only `python -m pytest`) finds model.py: the repository's root is put on sys.path
pythonpath = ["."]
testpaths = ["tests"]

# %%
%%writefile tiny-transformer/.gitignore
# checkpoints: made by train.py, large, and made again by running it
*.pt
# Python's and pytest's caches
__pycache__/
.pytest_cache/
# JupyterLab's autosaves
.ipynb_checkpoints/
# a virtual environment made here, and what `pip install -e .` leaves
.venv/
*.egg-info/

# %%
%%writefile tiny-transformer/evaluate.py
"""Measure a checkpoint's loss on a text: python evaluate.py [--checkpoint checkpoint.pt] [--data data/valid.txt]

Prints the mean next-token loss over the text cut into windows of max_seq_len characters (characters that the
checkpoint's vocabulary lacks are left out, and counted).
"""
import argparse

import torch

from model import TinyLM


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoint.pt")
    parser.add_argument("--data", default="data/valid.txt")
    args = parser.parse_args()
    ckpt = torch.load(args.checkpoint, weights_only=True)
    model = TinyLM(**ckpt["config"])
    model.load_state_dict(ckpt["model"])
    model.eval()
    stoi = {ch: i for i, ch in enumerate(ckpt["vocab"])}
    with open(args.data, encoding="utf-8") as f:
        text = f.read()
    ids = torch.tensor([stoi[ch] for ch in text if ch in stoi])
    T = ckpt["config"]["max_seq_len"]
    windows = ids[:len(ids) // T * T].view(-1, T)  # (N, T): the text, cut into windows
    with torch.no_grad():  # each batch's mean, weighted by its windows: the mean over all of them
        total = sum(float(model(batch, labels=batch)[1]) * len(batch) for batch in windows.split(64))
    print(f"loss {total / len(windows):.3f} on {len(windows)} windows of {T} characters "
          f"({len(text) - len(ids)} characters outside the vocabulary left out)")


if __name__ == "__main__":
    main()

# %% lang="zh"
%%writefile tiny-transformer/evaluate.py
"""测一个检查点在一段文本上的损失：python evaluate.py [--checkpoint checkpoint.pt] [--data data/valid.txt]

把文本切成长度为 max_seq_len 个字符的窗口，打印预测下一个 token 的平均损失（检查点的词表里没有的字符
不参与计算，只计数）。
"""
import argparse

import torch

from model import TinyLM


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoint.pt")
    parser.add_argument("--data", default="data/valid.txt")
    args = parser.parse_args()
    ckpt = torch.load(args.checkpoint, weights_only=True)
    model = TinyLM(**ckpt["config"])
    model.load_state_dict(ckpt["model"])
    model.eval()
    stoi = {ch: i for i, ch in enumerate(ckpt["vocab"])}
    with open(args.data, encoding="utf-8") as f:
        text = f.read()
    ids = torch.tensor([stoi[ch] for ch in text if ch in stoi])
    T = ckpt["config"]["max_seq_len"]
    windows = ids[:len(ids) // T * T].view(-1, T)  # (N, T)：切成窗口的文本
    with torch.no_grad():  # 每批的平均值按窗口数加权：得到所有窗口的平均值
        total = sum(float(model(batch, labels=batch)[1]) * len(batch) for batch in windows.split(64))
    print(f"loss {total / len(windows):.3f} on {len(windows)} windows of {T} characters "
          f"({len(text) - len(ids)} characters outside the vocabulary left out)")


if __name__ == "__main__":
    main()

# %%
evaluated = run("evaluate.py", "--checkpoint", "checkpoint.pt", "--data", "data/valid.txt")

# %%
README = """# tiny-transformer

A tiny decoder-only Transformer language model (GPT-style, Pre-LN) that reads and writes characters, written from
scratch in PyTorch: `model.py` holds the model, `train.py` trains it on `data/train.txt` with the settings of
`configs/tiny.yaml`, `evaluate.py` measures a checkpoint on `data/valid.txt` (text training never sees) and
`generate.py` continues a prompt.

## Results

{parameters} parameters ({model}), trained for {steps} steps:

| loss (next character, in nats) | |
|---|---|
| training, last step | {train_loss} |
| validation (`data/valid.txt`) | {valid_loss} |
| a model that knows nothing (ln V) | {ln_v} |

A sample: `python {sample_command}`

```text
{sample}
```

## Run it

```bash
pip install -e ".[test]"     # PyTorch, PyYAML, NumPy and pytest (pyproject.toml)
pytest                       # the model's tests
python train.py --config configs/tiny.yaml --out checkpoint.pt
python evaluate.py --checkpoint checkpoint.pt --data data/valid.txt
python generate.py --checkpoint checkpoint.pt --prompt "def " --temperature 0.8
```
"""

# %% lang="zh"
README = """# tiny-transformer

一个很小的仅解码器 Transformer 语言模型（GPT 风格，Pre-LN），以字符为单位读写，用 PyTorch 从零实现：
`model.py` 定义模型，`train.py` 按 `configs/tiny.yaml` 的设置在 `data/train.txt` 上训练它，`evaluate.py`
在 `data/valid.txt`（训练时从没见过的文本）上评估检查点，`generate.py` 续写提示词。

## 结果

{parameters} 个参数（{model}），训练了 {steps} 步：

| 损失（预测下一个字符，单位 nat） | |
|---|---|
| 训练集（最后一步） | {train_loss} |
| 验证集（`data/valid.txt`） | {valid_loss} |
| 什么都没学到的模型（ln V） | {ln_v} |

生成样本（`python {sample_command}` 的输出）：

```text
{sample}
```

## 运行

```bash
pip install -e ".[test]"     # PyTorch、PyYAML、NumPy 和 pytest（见 pyproject.toml）
pytest                       # 模型的测试
python train.py --config configs/tiny.yaml --out checkpoint.pt
python evaluate.py --checkpoint checkpoint.pt --data data/valid.txt
python generate.py --checkpoint checkpoint.pt --prompt "def " --temperature 0.8
```
"""

# %%
import re

import yaml


def found(pattern, text, default="?"):
    matches = re.findall(pattern, text)
    return matches[-1] if matches else default


model_config = yaml.safe_load((REPO / "configs" / "tiny.yaml").read_text(encoding="utf-8"))["model"]
results = dict(
    parameters=found(r"([\d,]+) parameters", trained.stdout),
    model=", ".join(f"{key} {value}" for key, value in model_config.items()),
    steps=found(r"step (\d+): loss", trained.stdout),
    train_loss=found(r"step \d+: loss ([\d.]+)", trained.stdout),
    valid_loss=found(r"loss ([\d.]+) on", evaluated.stdout),
    ln_v=found(r"ln V = ([\d.]+)", trained.stdout),
    sample_command=" ".join(f'"{a}"' if " " in a else a for a in SAMPLE_COMMAND),
    sample=sampled.stdout.strip("\n"),
)
(REPO / "README.md").write_text(README.format(**results), encoding="utf-8")
print(README.format(**results))

# %%
import shutil

if shutil.which("git") is None:
    print(f"git is not installed here: {REPO} stays a plain folder, to put under git where git is")
elif (REPO / ".git").exists():
    print(f"{REPO} is a git repository already: commit your changes there yourself")
else:
    def git(*args):
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, encoding="utf-8")

    identity = [] if git("config", "user.email").stdout.strip() else [
        "-c", "user.name=TinyLM learner", "-c", "user.email=learner@tinylm.invalid"]
    for args in (["init", "-q"], ["add", "-A"],
                 [*identity, "commit", "-q", "-m", "tiny-transformer: a tiny Transformer, its tests, training and results"]):
        done = git(*args)
        if done.returncode != 0:
            print(f"git {args[-1] if args[0] == '-c' else args[0]} failed: {(done.stdout + done.stderr).strip()}")
            break
    else:
        print(git("log", "--stat", "--format=%h %s").stdout)

# %%
from tinylm_checks import check_capstone_repository
check_capstone_repository(repo)

# %% [markdown]
# ## Summary
#
# - `tiny-transformer/` runs on its own: `pytest`, `python train.py --config configs/tiny.yaml`,
#   `python generate.py --checkpoint checkpoint.pt`. Clone it anywhere, `pip install -e ".[test]"`, and it works:
#   its text, its requirements and how to run it are in the repository.
# - Its tests are worth what they catch: each one failed on a model broken in the way it guards against.
# - A checkpoint holds the configuration, the weights and the vocabulary: everything generation needs.
#
# This is the end of the course. Next steps, if you want them: push the repository somewhere others can see it, replace the character
# vocabulary with a BPE tokenizer, add RoPE (notebook 04's bonus) inside `model.py` and compare with `configs/` that
# differ in one line.

# %% [markdown] lang="zh"
# ## 小结
#
# - `tiny-transformer/` 可以独立运行：`pytest`、`python train.py --config configs/tiny.yaml`、`python generate.py --checkpoint checkpoint.pt`。把它克隆到任何地方，运行 `pip install -e ".[test]"`，它就能用：训练的文本、依赖和运行方法都在仓库里。
# - 一个测试有没有用，要看它能抓住什么 bug：这里的每个测试，都拿一个恰好带着它要防的那种 bug 的模型试过，而且确实失败了。
# - 检查点（checkpoint）里存着配置、权重和词表（vocabulary），生成文本需要的东西都在里面。
#
# 课程到这里就结束了。还想继续的话，可以试试这些：把仓库推送到别人看得到的地方；把字符词表换成 BPE 分词器（tokenizer）；在 `model.py` 里加上旋转位置编码（RoPE，笔记本 04 的附加练习），再准备几份只差一行的 `configs/` 配置，比一比结果。
