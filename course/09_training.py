# %% [markdown]
# # 09 · Training
#
# Notebook 08 built `TinyLM`: token ids in, logits and a loss out. Untrained, it guesses uniformly (loss
# ≈ ln V). This notebook turns text into token ids and makes the model learn. By the end you can:
#
# 1. write a **character-level tokenizer** (lossless) and the encoder of a **word-level** one, with the special
#    tokens `<pad>`, `<unk>`, `<eos>`, and measure its UNK rate;
# 2. write `train_step`: **zero_grad → forward → loss → backward → clip → step**, in that order, and say why;
# 3. run the strongest correctness test of a training setup: **overfit one fixed batch** until the loss is
#    near zero;
# 4. write `evaluate` (eval mode, no gradients, the mode restored) and `perplexity = exp(total loss / counted
#    tokens)`;
# 5. train for 600 steps on real text with a progress bar and a live loss plot, logging the learning
#    rate, the gradient norm, each layer's activation RMS, tokens/s and peak memory;
# 6. walk the **overfit checklist** on six broken setups: name what is wrong with each, in the list's order, and
#    repair it.
#
# Shapes: `B` batch, `T` positions (the block size), `V` vocabulary size, `D` = `d_model`.

# %% [markdown] lang="zh"
# # 09 · 训练
#
# 笔记本 08 搭好了 `TinyLM`：输入 token id，输出 logits 和损失。没训练时，它只会均匀地乱猜（损失 ≈ ln V）。这个笔记本先把文本变成 token id，再让模型真正学起来。学完之后，你应该能：
#
# 1. 写一个无损的**字符级分词器**（tokenizer），再写**词级**分词器的编码函数，带上特殊 token `<pad>`、`<unk>`、`<eos>`，并测出它的 UNK 率；
# 2. 写出 `train_step`：**清零梯度（zero_grad）→ 前向传播（forward）→ 算损失（loss）→ 反向传播（backward）→ 裁剪梯度（clip）→ 更新参数（step）**，顺序不能乱，还要说得出为什么；
# 3. 跑一遍检验训练流程是否正确的最有力测试：**在一个固定的批次（batch）上过拟合（overfitting）**，直到损失接近零；
# 4. 写出 `evaluate`（eval 模式，不算梯度，结束后恢复原来的模式）和困惑度（perplexity）`perplexity = exp(total loss / counted tokens)`；
# 5. 在真实文本上训练 600 步，带进度条和实时损失曲线，记录学习率（learning rate）、梯度（gradient）范数、每层激活的 RMS、tokens/s 和峰值内存；
# 6. 对照**过拟合检查清单**排查六个坏掉的训练配置：按清单的顺序，说出每个配置错在哪里，再把它修好。
#
# 形状（shape）记号：`B` 是批次大小，`T` 是位置数（即上下文长度，也叫 block size），`V` 是词表（vocabulary）大小，`D` = `d_model`。

# %%
import math
import os
import re
import time
from collections import Counter

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from tinylm_checks import (check_char_tokenizer, check_evaluate, check_perplexity, check_train_step,
                           check_word_tokenizer)
from tinylm_checks import LiveLossPlot, peak_memory_mb, plot_training_log, record_run
from tinylm_checks import (OVERFIT_CHECKLIST, check_overfit_checklist, check_repair, healthy_setup, mystery_setups,
                           padded_batch, plot_overfit_runs)
from tinylm_solutions.data import corpus, default_corpus, get_batch, lm_batches, train_val_split
from tinylm_solutions.model import TinyLM

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # the tensors here are small: one thread is enough (two would mostly wait on each other)

# %% lang="zh"
import math
import os
import re
import time
from collections import Counter

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from tinylm_checks import (check_char_tokenizer, check_evaluate, check_perplexity, check_train_step,
                           check_word_tokenizer)
from tinylm_checks import LiveLossPlot, peak_memory_mb, plot_training_log, record_run
from tinylm_checks import (OVERFIT_CHECKLIST, check_overfit_checklist, check_repair, healthy_setup, mystery_setups,
                           padded_batch, plot_overfit_runs)
from tinylm_solutions.data import corpus, default_corpus, get_batch, lm_batches, train_val_split
from tinylm_solutions.model import TinyLM

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # 这里的张量都很小：一个线程就够了（两个线程大部分时间在互相等待）

# %% [markdown]
# **Run lengths.** The two training runs below use fixed step counts (so every run of this notebook gives
# the same numbers). Set the environment variable `TINYLM_QUICK=1` before starting Jupyter to run only a
# few steps of each (the course's tests do this, and instructors may when they autograde: the runs earn no
# points); the numbers in the text are those of the full run.

# %% [markdown] lang="zh"
# **运行时长。** 下面两次训练都用固定的步数（所以这个笔记本每次运行得到的数字都一样）。启动 Jupyter 之前设置环境变量 `TINYLM_QUICK=1`，每次训练就只跑几步（课程自己的测试就是这么做的；老师自动评分时也可以这样做，因为这些训练不计分）。正文里的数字都来自完整运行。

# %%
QUICK = os.environ.get("TINYLM_QUICK") == "1"
OVERFIT_STEPS = 8 if QUICK else 150  # one fixed batch, until the loss is near 0
TRAIN_STEPS = 6 if QUICK else 600  # the real run (section 7 prints how long it took)
LAB_STEPS = 8 if QUICK else 150  # each run of the checklist lab (section 8)
print(f"QUICK = {QUICK}: {OVERFIT_STEPS} overfitting steps, {TRAIN_STEPS} training steps, {LAB_STEPS} per lab run")

# %% lang="zh"
QUICK = os.environ.get("TINYLM_QUICK") == "1"
OVERFIT_STEPS = 8 if QUICK else 150  # 一个固定的批次，一直训练到损失接近 0
TRAIN_STEPS = 6 if QUICK else 600  # 真正的训练（第 7 节会打印它用了多长时间）
LAB_STEPS = 8 if QUICK else 150  # 检查清单实验（第 8 节）每跑一次的步数
print(f"QUICK = {QUICK}: {OVERFIT_STEPS} overfitting steps, {TRAIN_STEPS} training steps, {LAB_STEPS} per lab run")

# %% [markdown]
# ## 1. Text in, ids out: the character-level tokenizer
#
# A model sees integers. The simplest tokenizer gives every **character** an id: Karpathy's char-rnn and
# nanoGPT's `shakespeare_char` do exactly this. The vocabulary is the set of characters of the training
# text, **sorted**, so that the ids depend on nothing but the text (a Python `set`'s order can change from
# one run to the next; the order in which characters first appear changes with the text's beginning).
#
# ```
# text  "banana!"      vocab = sorted(set(text)) = ['!', 'a', 'b', 'n']      (V = 4)
# ids   [2, 1, 3, 1, 3, 1, 0]                    id = position in vocab
# back  "".join(vocab[i] for i in ids) == "banana!"   (the round trip: nothing is lost)
# ```
#
# The corpus of this course ships with Python: the docstrings of 37 standard-library modules, about 180,000
# characters of English prose about programming (`default_corpus()`; no download).

# %% [markdown] lang="zh"
# ## 1. 文本进，id 出：字符级分词器
#
# 模型只认整数。最简单的分词器给每个**字符**一个 id：Karpathy 的 char-rnn 和 nanoGPT 的 `shakespeare_char` 就是这么做的。词表就是训练文本里出现过的字符，**排好序**，这样 id 只取决于文本本身（Python `set` 的顺序每次运行都可能不一样；按字符首次出现的顺序排，又会随着文本开头的不同而变）。
#
# ```
# text  "banana!"      vocab = sorted(set(text)) = ['!', 'a', 'b', 'n']      (V = 4)
# ids   [2, 1, 3, 1, 3, 1, 0]                    id = 在 vocab 中的位置
# back  "".join(vocab[i] for i in ids) == "banana!"   (往返一遍, 什么都没丢)
# ```
#
# 本课程的语料是 Python 自带的：37 个标准库模块的 docstring，约 180,000 个字符的英文编程文字（`default_corpus()`；不用下载）。

# %%
text = default_corpus()
print(f"{len(text):,d} characters; the beginning:\n")
print(text[:300])

# %% [markdown]
# ### Exercise 1: `char_tokenizer(text) -> (vocab, ids)`
#
# Return the vocabulary (a list of the distinct characters of `text`, sorted) and `text` encoded with it
# (a list of int, one id per character, counted from 0). Spaces, newlines and non-ASCII characters are
# characters like any other.
#
# The check calls your function on three texts with unicode (`é`, `→`, `☕`), tabs and newlines, whose
# characters first appear out of sorted order, and decodes your ids with your vocabulary.
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint 1: the idea</summary>
#
# An id is a position in the vocabulary. Build the vocabulary first (each distinct character once, in an order
# that does not depend on the text's order), then look every character up.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# A `set` gives the distinct characters, `sorted` a fixed order; a dict from character to id, made with
# `enumerate` (it counts from 0), makes encoding one lookup per character.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `vocab = sorted(set(text))`, `stoi = {ch: i for i, ch in enumerate(vocab)}`, `ids = [stoi[ch] for ch in text]`
# </details>

# %% [markdown] lang="zh"
# ### 练习 1：`char_tokenizer(text) -> (vocab, ids)`
#
# 返回词表（由 `text` 里所有不同的字符组成的列表，排好序），以及用它编码后的 `text`（一个 int 列表，每个字符一个 id，从 0 开始）。空格、换行和非 ASCII 字符也都是字符，和别的字符一样处理。
#
# 检查（check）会用三段文本调用你的函数，文本里有 unicode 字符（`é`、`→`、`☕`）、制表符和换行，而且字符首次出现的先后顺序和排序后的顺序不同；然后它用你的词表解码你的 id。
#
# **难度：** ★☆☆ · **用时：** 约 5 分钟
#
# <details><summary>提示 1：思路</summary>
#
# id 就是在词表（vocabulary）中的位置。先建词表（每个不同的字符只出现一次，顺序不能取决于字符在文本里的先后），再逐个字符去查。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# `set` 给出所有不同的字符，`sorted` 给出固定的顺序；用 `enumerate`（从 0 开始数）建一个从字符到 id 的 dict，编码时每个字符查一次就行。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `vocab = sorted(set(text))`，`stoi = {ch: i for i, ch in enumerate(vocab)}`，`ids = [stoi[ch] for ch in text]`
# </details>

# %% solution="char_tokenizer"
def char_tokenizer(text: str) -> tuple[list[str], list[int]]:
    """The sorted character vocabulary of text, and text encoded with it.

    Returns:
        (vocab, ids): vocab = the distinct characters of text, sorted; ids[i] = vocab.index(text[i]).
    """
    ### BEGIN SOLUTION
    vocab = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(vocab)}
    return vocab, [stoi[ch] for ch in text]
    ### END SOLUTION


# %% lang="zh"
def char_tokenizer(text: str) -> tuple[list[str], list[int]]:
    """text 的字符词表（排好序），以及用它编码后的 text。

    返回：
        (vocab, ids)：vocab 是 text 中出现过的不同字符，排好序；ids[i] = vocab.index(text[i])。
    """
    ### BEGIN SOLUTION
    vocab = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(vocab)}
    return vocab, [stoi[ch] for ch in text]
    ### END SOLUTION

# %% test="char_tokenizer_check"
from tinylm_checks import check_char_tokenizer
check_char_tokenizer(char_tokenizer)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_char_tokenizer(char_tokenizer, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# Your tokenizer on the whole corpus. `decode` is the other half of the round trip:

# %% [markdown] lang="zh"
# 用你的分词器处理整个语料。`decode` 是往返的另一半：

# %%
chars, ids = char_tokenizer(text)


def decode(ids: list[int]) -> str:
    return "".join(chars[i] for i in ids)


data = torch.tensor(ids, dtype=torch.long)  # (N,)
print(f"V = {len(chars)} characters: {''.join(chars[:60])!r} ...")
print(f"round trip on the whole corpus: {decode(ids) == text}")

# %% [markdown]
# ## 2. Words: a smaller sequence, a bigger vocabulary, and unknown words
#
# A word-level tokenizer gives an id to every **word** (and punctuation mark). Sequences get about five
# times shorter, so a model with the same context sees five times more text; the price is a large
# vocabulary, and words the vocabulary has never seen. Three **special tokens** come first:
#
# | id | token | meaning |
# |---|---|---|
# | 0 | `<pad>` | fills the end of shorter sequences in a batch; never a prediction target (its label is `-100`) |
# | 1 | `<unk>` | any word that is not in the vocabulary |
# | 2 | `<eos>` | end of sequence: the model learns where a text stops |
#
# The words are found by a regular expression: a run of word characters, or one punctuation character.
# The vocabulary keeps the words seen at least `min_freq` times, the most frequent first:

# %% [markdown] lang="zh"
# ## 2. 词：序列更短，词表更大，还有未知词
#
# 词级分词器给每个**词**（以及每个标点）一个 id。序列长度大约缩短到五分之一，所以上下文一样长的模型能看到五倍的文本；代价是词表很大，而且会遇到词表里从没见过的词。排在最前面的是三个**特殊 token**：
#
# | id | token | 含义 |
# |---|---|---|
# | 0 | `<pad>` | 填在批次里较短序列的末尾；永远不作为预测目标（它的标签是 `-100`） |
# | 1 | `<unk>` | 任何不在词表里的词 |
# | 2 | `<eos>` | 序列结束：模型由此学会一段文本在哪里结束 |
#
# 词用正则表达式切出来：一串连续的单词字符，或者单个标点字符。词表只保留出现次数不少于 `min_freq` 的词，出现得多的排在前面：

# %%
WORD_PATTERN = re.compile(r"\w+|[^\w\s]")  # a run of word characters, or one punctuation character
SPECIALS = ["<pad>", "<unk>", "<eos>"]  # ids 0, 1, 2


def build_word_vocab(text: str, min_freq: int = 1) -> list[str]:
    """SPECIALS, then the tokens of text seen at least min_freq times, most frequent first (ties: alphabetical)."""
    counts = Counter(WORD_PATTERN.findall(text))
    kept = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
    return SPECIALS + kept


print(WORD_PATTERN.findall("The cat sat, then ran."))
print(build_word_vocab("the cat sat on the mat. the end.")[:8])

# %% lang="zh"
WORD_PATTERN = re.compile(r"\w+|[^\w\s]")  # 一串单词字符，或者一个标点字符
SPECIALS = ["<pad>", "<unk>", "<eos>"]  # id 为 0、1、2


def build_word_vocab(text: str, min_freq: int = 1) -> list[str]:
    """先是 SPECIALS，然后是 text 中出现至少 min_freq 次的 token，出现次数多的在前（次数相同按字母顺序）。"""
    counts = Counter(WORD_PATTERN.findall(text))
    kept = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
    return SPECIALS + kept


print(WORD_PATTERN.findall("The cat sat, then ran."))
print(build_word_vocab("the cat sat on the mat. the end.")[:8])

# %% [markdown]
# ### Exercise 2: `word_encode(text, vocab) -> list[int]`
#
# Split `text` with `WORD_PATTERN.findall`, map every token to its id in `vocab` (a list: the id is the
# position), map a token that is not in `vocab` to the id of `<unk>`, and end with one `<eos>`. Case is kept
# (`"The"` and `"the"` are different tokens).
#
# The check builds a small vocabulary and encodes four texts (one of them empty) with unknown words,
# capitalised words and punctuation glued to words, and compares with the reference.
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Split the text into tokens the way the vocabulary was built, look each token up, and let a token that is not
# there become `<unk>` instead of an error; the sequence ends with `<eos>`.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# The pattern `WORD_PATTERN` splits the text into tokens (its `findall` method); a dict from token to id, made with
# `enumerate`; a dict's `get` takes a default for a missing key instead of raising `KeyError`. `<unk>` is id 1,
# `<eos>` id 2.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `return [stoi.get(t, 1) for t in WORD_PATTERN.findall(text)] + [2]`, with `stoi = {t: i for i, t in enumerate(vocab)}`
# </details>

# %% [markdown] lang="zh"
# ### 练习 2：`word_encode(text, vocab) -> list[int]`
#
# 用 `WORD_PATTERN.findall` 切分 `text`，把每个 token 映射成它在 `vocab` 中的 id（`vocab` 是一个列表，id 就是位置）；不在 `vocab` 里的 token 映射成 `<unk>` 的 id；最后再加一个 `<eos>`。保留大小写（`"The"` 和 `"the"` 是不同的 token）。
#
# 检查会建一个小词表，编码四段文本（其中一段是空的），文本里有未知词、首字母大写的词和紧贴在单词上的标点，再和参考实现比对。
#
# **难度：** ★☆☆ · **用时：** 约 5 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 按建词表（vocabulary）时的方式把文本切成 token，逐个查表；查不到的 token 变成 `<unk>`，而不是报错；序列以 `<eos>` 结尾。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 模式 `WORD_PATTERN` 负责把文本切成 token（用它的 `findall` 方法）；用 `enumerate` 建一个从 token 到 id 的 dict；dict 的 `get` 可以给缺失的键一个默认值，而不是抛出 `KeyError`。`<unk>` 的 id 是 1，`<eos>` 的 id 是 2。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `return [stoi.get(t, 1) for t in WORD_PATTERN.findall(text)] + [2]`，其中 `stoi = {t: i for i, t in enumerate(vocab)}`
# </details>

# %% solution="word_encode"
def word_encode(text: str, vocab: list[str]) -> list[int]:
    """Token ids of text: WORD_PATTERN tokens, unknown ones -> <unk> (1), then <eos> (2)."""
    ### BEGIN SOLUTION
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, 1) for t in WORD_PATTERN.findall(text)] + [2]
    ### END SOLUTION


# %% lang="zh"
def word_encode(text: str, vocab: list[str]) -> list[int]:
    """text 的 token id：按 WORD_PATTERN 切出的 token，不认识的 -> <unk> (1)，最后加上 <eos> (2)。"""
    ### BEGIN SOLUTION
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, 1) for t in WORD_PATTERN.findall(text)] + [2]
    ### END SOLUTION

# %% test="word_encode_check"
from tinylm_checks import check_word_tokenizer
check_word_tokenizer(word_encode)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_word_tokenizer(word_encode, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# **The UNK rate.** Build the vocabulary on the training part of the corpus and encode the validation
# part: how many of its tokens are unknown? Raising `min_freq` shrinks the vocabulary (fewer rare words,
# each seen too rarely to learn anyway) and raises the UNK rate. Characters never have this problem.

# %% [markdown] lang="zh"
# **UNK 率。** 在语料的训练部分上建词表，再拿它去编码验证部分：里面有多少 token 是未知的？调高 `min_freq` 会让词表变小（去掉的是罕见词，它们出现得太少，反正也学不会），UNK 率则会上升。字符级分词永远没有这个问题。

# %%
n_val = len(text) // 10
train_text, val_text = text[:-n_val], text[-n_val:]
for min_freq in (1, 2, 5):
    vocab = build_word_vocab(train_text, min_freq)
    val_ids = word_encode(val_text, vocab)[:-1]  # without the final <eos>
    unk = sum(i == 1 for i in val_ids) / len(val_ids)
    print(f"min_freq = {min_freq}: V = {len(vocab):6,d} words, {len(val_ids):,d} validation tokens "
          f"(vs {len(val_text):,d} characters), UNK rate {unk:.1%}")

# %% lang="zh"
n_val = len(text) // 10
train_text, val_text = text[:-n_val], text[-n_val:]
for min_freq in (1, 2, 5):
    vocab = build_word_vocab(train_text, min_freq)
    val_ids = word_encode(val_text, vocab)[:-1]  # 去掉最后的 <eos>
    unk = sum(i == 1 for i in val_ids) / len(val_ids)
    print(f"min_freq = {min_freq}: V = {len(vocab):6,d} words, {len(val_ids):,d} validation tokens "
          f"(vs {len(val_text):,d} characters), UNK rate {unk:.1%}")

# %% [markdown]
# **Chinese has no spaces.** `WORD_PATTERN` finds words as runs of word characters, and every 汉字 is a word
# character: on Chinese text a "word" is a whole clause. Chinese needs a segmenter, a model of where its words
# end; `split_words` (in `tinylm_solutions.segment`, what the course's word tokenizer uses: `tinylm-train --tokenizer word`)
# hands the runs of Chinese characters to jieba, a widely used one, and leaves other text to `WORD_PATTERN`. The
# cell compares the three on the first 100,000 characters of the course's Chinese corpus, Tang poems
# (`tinylm-train --corpus zh` trains on it): how many tokens a text becomes, and how big its vocabulary is.

# %% [markdown] lang="zh"
# **中文没有空格。** `WORD_PATTERN` 把一串连续的“单词字符”当成一个词，而每个汉字都算单词字符：在中文文本上，一个“词”就是一整个分句。中文需要分词器（tokenizer）来判断词在哪里结束；`split_words`（在 `tinylm_solutions.segment` 里，课程的词级分词器用的就是它，`tinylm-train --tokenizer word` 也一样）把连续的汉字交给 jieba 这个常用的中文分词工具，其余文本仍按 `WORD_PATTERN` 切。下面的单元格在课程自带的中文语料（唐诗，`tinylm-train --corpus zh` 就在它上面训练）的前 100,000 个字符上比较三种切法：一段文本会变成多少个 token，词表（vocabulary）有多大。

# %%
from tinylm_solutions.data import chinese_corpus
from tinylm_solutions.segment import split_words

poems = chinese_corpus(max_chars=100_000)
print(poems[:40])
for name, tokens in (("characters", list(poems)), ("WORD_PATTERN", WORD_PATTERN.findall(poems)),
                     ("split_words (jieba)", split_words(poems))):
    hanzi = [t for t in tokens if re.fullmatch(r"[\u4e00-\u9fff]+", t)]
    print(f"{len(tokens):7,d} tokens, V = {len(set(tokens)):6,d}, "
          f"{sum(map(len, hanzi)) / len(hanzi):.2f} characters per Chinese token  [{name}]")

# %% [markdown]
# Characters give the longest sequence and the smallest vocabulary. `WORD_PATTERN`'s Chinese "words" are whole
# lines of a poem. jieba's words are about two characters long: the
# sequence is about half as long as the characters', for a vocabulary several times bigger. Which a model should
# use is a trade like the one in English above, with one more cost: a segmenter is a model of its own, and its
# mistakes become the language model's.

# %% [markdown] lang="zh"
# 按字符切，序列最长、词表最小。`WORD_PATTERN` 切出来的中文“词”是一整句诗。jieba 切出的词平均约两个字：序列长度大约是按字符切的一半，词表却大好几倍。模型该用哪一种，和上面英文的情况一样是一种取舍，只是多了一项代价：分词器本身也是一个模型，它犯的错会变成语言模型的错。

# %% [markdown]
# **Where `<pad>` goes.** Sentences have different lengths, a batch is a rectangle. Pad the short ones with
# id 0, and give the padded positions the label `-100`: `F.cross_entropy` ignores that label, so padding
# is never a target and does not count in the mean.

# %% [markdown] lang="zh"
# **`<pad>` 放在哪里。** 句子有长有短，一个批次却是个矩形。短句用 id 0 补齐，补齐的位置把标签设成 `-100`：`F.cross_entropy` 会忽略这个标签，所以填充（padding）永远不会成为目标，也不计入平均值。

# %%
vocab = build_word_vocab(train_text, 2)
sentences = [word_encode(s, vocab) for s in ("Return the value.", "Raise an error if the file is missing.")]
T_max = max(map(len, sentences))
x_pad = torch.tensor([s + [0] * (T_max - len(s)) for s in sentences])  # (B, T_max), 0 = <pad>
labels = torch.where(x_pad == 0, -100, x_pad)  # (B, T_max): padding is never a target
print(x_pad, labels, sep="\n")

# %% lang="zh"
vocab = build_word_vocab(train_text, 2)
sentences = [word_encode(s, vocab) for s in ("Return the value.", "Raise an error if the file is missing.")]
T_max = max(map(len, sentences))
x_pad = torch.tensor([s + [0] * (T_max - len(s)) for s in sentences])  # (B, T_max), 0 = <pad>
labels = torch.where(x_pad == 0, -100, x_pad)  # (B, T_max)：填充位置永远不是预测目标
print(x_pad, labels, sep="\n")

# %% [markdown]
# The rest of this notebook uses characters: a small vocabulary (V ≈ 100) trains fast and never meets an
# unknown token.
#
# ## 3. Batches
#
# A training batch is `B` random windows of `T + 1` consecutive tokens: the first `T` are the input `x`, the
# last `T` the targets `y` (the next token at every position). `get_batch` (given, from the course's
# `data` module, as in nanoGPT) draws the windows with a `torch.Generator`, so the batches are the same in
# every run; `lm_batches` walks a text once, window after window, for evaluation.
#
# ```
# data   t0 t1 t2 t3 t4 t5 ...
# x         t1 t2 t3 t4         (one row of x: T tokens from a random start)
# y            t2 t3 t4 t5      (the same window, one to the right: y[t] = the token after x[t])
# ```
#
# Because `y` is already shifted, the loss compares `logits[:, t]` with `y[:, t]` directly:
# `F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))`. (`TinyLM(x, labels=x)` does the shift itself:
# pass one or the other, never both: `model(x, labels=y)` shifts `y` a second time and scores every position
# against the token two ahead.)

# %% [markdown] lang="zh"
# 这个笔记本接下来都用字符：词表小（V ≈ 100），训练快，也永远碰不到未知 token。
#
# ## 3. 批次
#
# 一个训练批次由 `B` 个随机窗口组成，每个窗口是连续的 `T + 1` 个 token：前 `T` 个是输入 `x`，后 `T` 个是目标 `y`（也就是每个位置的下一个 token）。`get_batch`（已经给好，来自课程的 `data` 模块，做法和 nanoGPT 一样）用一个 `torch.Generator` 抽取窗口，所以每次运行得到的批次都相同；`lm_batches` 则把一段文本从头到尾、一个窗口接一个窗口地走一遍，用于评估。
#
# ```
# data   t0 t1 t2 t3 t4 t5 ...
# x         t1 t2 t3 t4         (x 的一行: 从随机起点开始的 T 个 token)
# y            t2 t3 t4 t5      (同一个窗口右移一位: y[t] = x[t] 之后的那个 token)
# ```
#
# 因为 `y` 已经错开了一位，损失直接拿 `logits[:, t]` 和 `y[:, t]` 比：`F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))`。（`TinyLM(x, labels=x)` 会自己错位：两种方式只能选一种，千万别同时用。`model(x, labels=y)` 会把 `y` 再错一位，让每个位置都去和往后第二个 token 比。）

# %%
train_data, val_data = train_val_split(data, val_fraction=0.1)
gen = torch.Generator().manual_seed(0)
x, y = get_batch(train_data, 2, 16, gen)  # (B, T), (B, T)
print(f"train {len(train_data):,d} tokens, validation {len(val_data):,d}")
print("x[0]:", repr(decode(x[0].tolist())))
print("y[0]:", repr(decode(y[0].tolist())))

# %% [markdown]
# ## 4. One training step
#
# Every optimiser step is the same six moves (PyTorch's "optimizing model parameters" tutorial, plus
# clipping):
#
# 1. `model.train()`: training mode (dropout on). An evaluation before may have left the model in eval mode.
# 2. `optimizer.zero_grad()`: `.backward()` **adds** to `.grad`; without zeroing, every step would also
#    apply all the previous steps' gradients.
# 3. forward and loss: `logits, _ = model(x)`, `loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))`.
# 4. `loss.backward()`: the gradient of the loss with respect to every parameter.
# 5. `torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)`: if the global L2 norm of all
#    gradients together is above `max_grad_norm`, scale them all down to that norm (Pascanu et al., 2013):
#    one bad batch can't throw the model far. It returns the norm **before** clipping, worth logging.
# 6. `optimizer.step()`: update the parameters with the (clipped) gradients.
#
# The order matters: clipping after the step changes nothing the step used; zeroing between backward
# and step throws this batch's gradients away.
#
# ### Exercise 3: `train_step(model, batch, optimizer, max_grad_norm=1.0) -> dict`
#
# `batch` is a pair `(x, y)` of `(B, T)` long tensors as `get_batch` returns them; `model(x)` returns
# `(logits (B, T, V), loss or None)`. Do the six moves above and return
# `{"loss": float, "grad_norm": float}`: the batch's loss and the gradient norm before clipping, as Python
# floats (`.item()`).
#
# The check runs your function on a small model of its own that starts **in eval mode** with **stale
# gradients** already in `.grad`, and a *spy* optimizer: plain SGD that records the calls it gets and,
# at `step()`, the gradients it was given. It then knows whether they were zeroed, clipped to
# `max_grad_norm`, and computed before the step, and compares the loss and the norm with the reference. The
# model also records whether it was called with `labels=`: compute the loss from the logits yourself. A
# last call leaves `max_grad_norm` out: the default, 1.0, must clip.
#
# **Difficulty:** ★★☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# The six moves above, in that order: each one's result is what the next one uses (the gradients that
# `backward` leaves are what clipping scales and what the step applies).
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# The mode first, then the optimizer's `zero_grad`; the loss from the logits and `y` flattened to `(B·T, V)` and
# `(B·T,)`; `torch.nn.utils.clip_grad_norm_` between `backward` and `step`, its return value the norm to report;
# `.item()` for the floats.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# ```python
# logits, _ = model(x)  # (B, T, V)
# loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
# loss.backward()
# grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
# ```
# </details>

# %% [markdown] lang="zh"
# ## 4. 一个训练步
#
# 优化器（optimizer）的每一步更新，都是同样的六个动作（PyTorch 教程“optimizing model parameters”里的步骤，再加上梯度裁剪）：
#
# 1. `model.train()`：切到训练模式（打开 dropout）。之前做过的评估可能把模型留在了 eval 模式。
# 2. `optimizer.zero_grad()`：`.backward()` 是往 `.grad` 上**累加**的；不清零的话，每一步都会把之前所有步的梯度也一起用上。
# 3. 前向和损失：`logits, _ = model(x)`，`loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))`。
# 4. `loss.backward()`：求出损失对每个参数（parameter）的梯度。
# 5. `torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)`：如果所有梯度合在一起的全局 L2 范数超过了 `max_grad_norm`，就把它们整体缩小到这个范数（Pascanu 等人，2013）：这样一个坏批次没法把模型甩出太远。它返回的是**裁剪之前**的范数，值得记下来。
# 6. `optimizer.step()`：用（裁剪过的）梯度更新参数。
#
# 顺序很关键：裁剪放到 step 之后，step 用的还是没裁剪的梯度，等于没裁；在 backward 和 step 之间清零，这个批次的梯度就白算了。
#
# ### 练习 3：`train_step(model, batch, optimizer, max_grad_norm=1.0) -> dict`
#
# `batch` 是 `get_batch` 返回的那种二元组 `(x, y)`，两个都是 `(B, T)` 的 long 张量（tensor）；`model(x)` 返回 `(logits (B, T, V), loss or None)`。做完上面的六个动作，返回 `{"loss": float, "grad_norm": float}`：这个批次的损失和裁剪前的梯度范数，都要是 Python float（用 `.item()`）。
#
# 检查会在它自己的一个小模型上运行你的函数。这个模型一开始处在 **eval 模式**，`.grad` 里已经留着**上一次的旧梯度**；优化器也是特制的：它就是普通的 SGD，只不过会把自己怎么被调用、`step()` 时拿到什么梯度都记下来。这样检查就知道梯度有没有清零、有没有裁剪到 `max_grad_norm`、是不是在 step 之前算好的，再把损失和范数与参考实现比对。这个模型还会记录调用时有没有传 `labels=`：损失要你自己从 logits 算。最后一次调用不传 `max_grad_norm`：默认值 1.0 也必须起到裁剪作用。
#
# **难度：** ★★☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 就是上面那六个动作，按顺序做。每一步的结果都是下一步要用的：`backward` 留下的梯度（gradient），正是裁剪要缩放、step 要应用的东西。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 先设模式，再调用优化器（optimizer）的 `zero_grad`；损失由 logits 和 `y` 算出，两者分别展平成 `(B·T, V)` 和 `(B·T,)`；`torch.nn.utils.clip_grad_norm_` 放在 `backward` 和 `step` 之间，它的返回值就是要报告的范数；float 用 `.item()` 取出。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# ```python
# logits, _ = model(x)  # (B, T, V)
# loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
# loss.backward()
# grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
# ```
# </details>

# %% solution="train_step"
def train_step(model, batch, optimizer, max_grad_norm: float = 1.0) -> dict:
    """One optimizer step on batch = (x (B, T), y (B, T)): returns {"loss": float, "grad_norm": float}."""
    ### BEGIN SOLUTION
    x, y = batch
    model.train()
    optimizer.zero_grad()
    logits, _ = model(x)  # (B, T, V)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": float(grad_norm)}
    ### END SOLUTION


# %% lang="zh"
def train_step(model, batch, optimizer, max_grad_norm: float = 1.0) -> dict:
    """在 batch = (x (B, T), y (B, T)) 上走一步优化器：返回 {"loss": float, "grad_norm": float}。"""
    ### BEGIN SOLUTION
    x, y = batch
    model.train()
    optimizer.zero_grad()
    logits, _ = model(x)  # (B, T, V)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": float(grad_norm)}
    ### END SOLUTION

# %% test="train_step_check"
from tinylm_checks import check_train_step
check_train_step(train_step)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_train_step(train_step, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ## 5. The strongest test: overfit one batch
#
# Before training for real, train on **one fixed batch**, over and over. A model with enough parameters can
# memorise 8 × 32 tokens: the loss must fall from ln V ≈ 4.6 towards 0. If it doesn't, something is broken
# (the targets are misaligned, the gradients don't reach a layer, the optimiser isn't stepping). Karpathy's
# "A Recipe for Training Neural Networks" (2019) puts this test first. Your `train_step`, notebook 08's model:

# %% [markdown] lang="zh"
# ## 5. 最有力的测试：在一个批次上过拟合
#
# 正式训练之前，先拿**一个固定的批次**反复训练。参数足够多的模型能把 8 × 32 个 token 全部背下来：损失必须从 ln V ≈ 4.6 一路降向 0。要是降不下去，就说明哪里坏了（目标没对齐，梯度传不到某一层，优化器根本没在更新）。Karpathy 的“A Recipe for Training Neural Networks”（2019）把这个测试排在第一位。下面用你的 `train_step` 和笔记本 08 的模型：

# %%
torch.manual_seed(0)
config = dict(vocab_size=len(chars), max_seq_len=64, d_model=64, num_heads=4, num_layers=2, d_ff=256)
model = TinyLM(**config)
fixed_batch = get_batch(train_data, 8, 32, torch.Generator().manual_seed(1))  # x, y: (8, 32)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
live = LiveLossPlot(OVERFIT_STEPS, title="overfitting one batch", every=min(25, OVERFIT_STEPS // 4 or 1), smooth=1,
                    log_y=True)
overfit_losses = []
for step in range(1, OVERFIT_STEPS + 1):
    overfit_losses.append(train_step(model, fixed_batch, optimizer)["loss"])
    live.update(step, overfit_losses[-1])
live.close()
print(f"loss: {overfit_losses[0]:.3f} at step 1 (ln V = {math.log(len(chars)):.3f}), "
      f"{overfit_losses[-1]:.4f} after {OVERFIT_STEPS} steps")
_ = record_run("09_overfit", losses=overfit_losses, final_loss=overfit_losses[-1], steps=OVERFIT_STEPS)

# %% [markdown]
# The loss is near zero: the model, the loss and your step can learn. On *new* batches this model would
# do badly: it memorised, it didn't generalise. That is what validation data measure.
#
# What this test cannot catch: a loss against the wrong targets that are still a fixed function of the
# batch. With `_, loss = model(x, labels=y)` (the double shift of section 3) the model overfits this batch
# just as well, loss near 0, while learning to predict the token two ahead. That is why the notebook says
# never to pass `y` as labels, and why the check of exercise 3 looks at how the model was called.
#
# ## 6. Evaluation and perplexity
#
# To measure a model, run it over held-out text **without learning**:
#
# - `model.eval()` (dropout off: this TinyLM has none, but most models do) and, afterwards, the mode it had
#   before: `was_training = model.training` ... `model.train(was_training)`. An evaluation in the middle
#   of training must not leave the model in eval mode, nor switch a model in eval mode to training.
# - `with torch.no_grad():`: no graph is built (less memory, faster), since no backward follows.
# - The loss of the text is **total loss / counted tokens**: add up every target's cross-entropy
#   (`reduction="sum"`) and count the targets that are not `-100`. The mean of per-batch means is not the
#   same when batches differ in size (the last one is often smaller) or in padding.
#
# **Perplexity** is `exp(loss)`, loss in nats (natural log, as `F.cross_entropy`). A model that spreads its
# bets evenly over `k` tokens has loss `ln k` and perplexity `k`: "as uncertain as a fair choice among k".
# An untrained model has perplexity ≈ V.
#
# ### Exercise 4: `evaluate(model, batches) -> float`
#
# `batches` is a list of `(x, y)` pairs (batches may have different sizes; `y` may contain `-100`). Return
# the total cross-entropy of all counted targets divided by their number, as a Python float, computed in
# eval mode under `torch.no_grad()`, and leave the model in the mode it was in. A tensor is not a float:
# the check names a returned tensor (even a 0-dim one) as a mistake, here and in exercise 5.
#
# The check runs it on a small model that records, at every forward, its mode and whether grad mode was
# on; once starting in training mode, once in eval mode, on three batches of different sizes with some
# targets `-100`.
#
# **Difficulty:** ★★☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# A mean over tokens, not over batches: add up every batch's summed loss and every batch's counted tokens, and
# divide once at the end. Evaluation changes nothing: eval mode, no gradients, and the mode it found restored.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# `F.cross_entropy` with `reduction="sum"` gives a batch's total; the counted tokens are the targets that are not
# -100; `model.training` says which mode to restore; `torch.no_grad()` around the loop.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# ```python
# was_training = model.training
# model.eval()
# total, count = 0.0, 0
# with torch.no_grad():
#     for x, y in batches:
#         logits, _ = model(x)
#         total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
#         count += (y != -100).sum().item()
# model.train(was_training)
# return total / count
# ```
# </details>

# %% [markdown] lang="zh"
# 损失接近零，说明模型、损失和你写的训练步连在一起确实能学。可要是换成*新*的批次，这个模型会表现很差：它只是背了下来，并没有泛化。这正是验证数据要衡量的东西。
#
# 这个测试也有抓不到的情况：目标错了，但仍然是这个批次的一个固定函数。用 `_, loss = model(x, labels=y)`（第 3 节讲的双重错位），模型照样能把这个批次过拟合到损失接近 0，学到的却是预测往后第二个 token。所以这个笔记本才一再强调，千万别把 `y` 当标签传进去；练习 3 的检查也才会去看模型是怎么被调用的。
#
# ## 6. 评估与困惑度
#
# 要衡量一个模型，就在留出数据（held-out data）上把它跑一遍，**只跑不学**：
#
# - `model.eval()`（关掉 dropout：这个 TinyLM 没有 dropout，但大多数模型都有），结束后恢复它原来的模式：`was_training = model.training` ... `model.train(was_training)`。在训练中途做一次评估，既不能把模型留在 eval 模式，也不能把本来处在 eval 模式的模型切成训练模式。
# - `with torch.no_grad():`：不建计算图（省内存，也更快），反正后面不会做 backward。
# - 一段文本的损失是**总损失 / 计入的 token 数**：把每个目标的交叉熵（cross-entropy）加起来（`reduction="sum"`），再数出不是 `-100` 的目标有多少个。如果各批次大小不同（最后一个常常更小），或者填充的多少不同，那么各批次平均值的平均值就不等于它。
#
# **困惑度**就是 `exp(loss)`，loss 以 nat 为单位（自然对数，和 `F.cross_entropy` 一致）。一个模型如果把赌注平均押在 `k` 个 token 上，它的损失就是 `ln k`，困惑度就是 `k`：意思是“它拿不准的程度，相当于在 k 个选项里公平地随便挑一个”。没训练过的模型，困惑度 ≈ V。
#
# ### 练习 4：`evaluate(model, batches) -> float`
#
# `batches` 是由 `(x, y)` 二元组组成的列表（各批次大小可以不同；`y` 里可能有 `-100`）。返回所有计入目标的交叉熵总和除以它们的个数，类型是 Python float；要在 eval 模式下、在 `torch.no_grad()` 里计算，算完让模型回到原来的模式。注意张量不是 float：返回张量（哪怕是 0 维的），检查会把它当作错误指出来，这一题和练习 5 都是如此。
#
# 检查会在一个小模型上运行你的函数，这个模型每次前向都会记下当时的模式，以及梯度模式是否打开；一次从训练模式开始，一次从 eval 模式开始，用的是三个大小不同、部分目标为 `-100` 的批次。
#
# **难度：** ★★☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 按 token 平均，而不是按批次（batch）平均：把每个批次的损失总和、每个批次计入的 token 数分别累加起来，最后只除一次。评估不改变任何东西：eval 模式，不算梯度（gradient），结束时恢复它原来的模式。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 带 `reduction="sum"` 的 `F.cross_entropy` 给出一个批次（batch）的总损失；计入的 token 就是不为 -100 的那些目标；`model.training` 告诉你该恢复哪个模式；`torch.no_grad()` 包住整个循环。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# ```python
# was_training = model.training
# model.eval()
# total, count = 0.0, 0
# with torch.no_grad():
#     for x, y in batches:
#         logits, _ = model(x)
#         total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
#         count += (y != -100).sum().item()
# model.train(was_training)
# return total / count
# ```
# </details>

# %% solution="evaluate"
def evaluate(model, batches) -> float:
    """Mean cross-entropy per counted (non -100) target over batches [(x (B, T), y (B, T)), ...]."""
    ### BEGIN SOLUTION
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            logits, _ = model(x)  # (B, T, V)
            total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1),
                                     reduction="sum").item()
            count += int((y != -100).sum())
    model.train(was_training)
    return total / count
    ### END SOLUTION


# %% lang="zh"
def evaluate(model, batches) -> float:
    """在若干批次 [(x (B, T), y (B, T)), ...] 上，每个计入的（不为 -100 的）目标的平均交叉熵。"""
    ### BEGIN SOLUTION
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            logits, _ = model(x)  # (B, T, V)
            total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1),
                                     reduction="sum").item()
            count += int((y != -100).sum())
    model.train(was_training)
    return total / count
    ### END SOLUTION

# %% test="evaluate_check"
from tinylm_checks import check_evaluate
check_evaluate(evaluate)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_evaluate(evaluate, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ### Exercise 5: `perplexity(loss) -> float`
#
# `exp(loss)` as a Python float, for a mean cross-entropy `loss` in nats (a float or a 0-dim tensor). The
# check tries a few losses, among them `ln V` (whose perplexity is `V`); as for `evaluate`, a returned
# tensor is named as a mistake: return a `float`.
#
# **Difficulty:** ★☆☆ · **Time:** about 2 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Perplexity undoes the logarithm of the mean cross-entropy: it is the number of equally likely tokens the model
# is as unsure as.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# The loss may come as a float or a 0-dim tensor; the result must be a Python float (the `math` module's
# exponential takes a float).
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# `math.exp(float(loss))`
# </details>

# %% [markdown] lang="zh"
# ### 练习 5：`perplexity(loss) -> float`
#
# 给定以 nat 为单位的平均交叉熵 `loss`（float 或 0 维张量），以 Python float 返回 `exp(loss)`。检查会试几个损失值，其中有 `ln V`（它的困惑度是 `V`）；和 `evaluate` 一样，返回张量会被当作错误指出来：请返回 `float`。
#
# **难度：** ★☆☆ · **用时：** 约 2 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 困惑度（perplexity）就是把平均交叉熵（cross-entropy）里的对数还原回去：它表示模型拿不准的程度，相当于在多少个等可能的 token 里挑一个。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 损失可能是 float，也可能是 0 维张量（tensor）；结果必须是 Python float（`math` 模块的指数函数接受 float）。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# `math.exp(float(loss))`
# </details>

# %% solution="perplexity"
def perplexity(loss) -> float:
    """exp(loss) for a mean cross-entropy in nats."""
    ### BEGIN SOLUTION
    return math.exp(float(loss))
    ### END SOLUTION


# %% lang="zh"
def perplexity(loss) -> float:
    """以奈特（nat）为单位的平均交叉熵对应的 exp(loss)。"""
    ### BEGIN SOLUTION
    return math.exp(float(loss))
    ### END SOLUTION

# %% test="perplexity_check"
from tinylm_checks import check_perplexity
check_perplexity(perplexity)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_perplexity(perplexity, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# The overfitted model on the validation text (the first 20 windows) next to a new, untrained one:

# %% [markdown] lang="zh"
# 把过拟合的模型放到验证文本上（取前 20 个窗口），和一个新建的、没训练过的模型放在一起比：

# %%
val_batches = list(lm_batches(val_data, 16, 64))[:20]
untrained = TinyLM(**config)
for name, m in (("untrained", untrained), ("overfitted on one batch", model)):
    loss = evaluate(m, val_batches)
    print(f"{name:>24}: validation loss {loss:.3f}, perplexity {perplexity(loss):6.1f} (V = {len(chars)})")

# %% [markdown]
# The overfitted model's perplexity (about 725) is far *above* V = 99, the untrained model's: a uniform guess
# gives every target probability 1/V, while a model that memorised one batch puts nearly all its probability
# on the wrong characters, so the targets get much less than 1/V. Confidently wrong is worse than uniform.

# %% [markdown] lang="zh"
# 过拟合模型的困惑度（约 725）远远*高于*未训练模型的困惑度 V = 99：均匀猜测给每个目标的概率都是 1/V，而背下了一个批次的模型，几乎把全部概率都押在了错误的字符上，于是目标得到的概率远小于 1/V。自信地猜错，比均匀地瞎猜还糟。

# %% [markdown]
# ## 7. Training on the corpus
#
# Now the real run: a fresh model, a new random batch at every step, AdamW with a **learning-rate
# schedule**: a linear warm-up over the first steps (AdamW's early updates are noisy), then a cosine decay
# to a tenth of the peak (as in GPT-3 and nanoGPT). Besides the loss, the loop logs what you look at when a
# run goes wrong:
#
# - the **learning rate** of every step;
# - the **global gradient norm** before clipping (spikes show instability; if it is always above
#   `max_grad_norm`, every step is clipped and the learning rate is effectively lower);
# - each block's **activation RMS**, `sqrt(mean(h²))` of its output, recorded by a **forward hook**: a
#   function PyTorch calls after a module's forward (`module.register_forward_hook(fn)`,
#   `fn(module, inputs, output)`); an RMS that keeps growing means the residual stream is blowing up;
# - **tokens/s** and the **peak memory** of the process.
#
# With `TINYLM_QUICK=1` it runs only a few steps. The next cell says what to train on: `CORPUS = "en"` is the
# corpus above, `"zh"` the course's Chinese corpus (Tang poems: the Chinese notebook trains on its first
# 200,000 characters), any other value the path of a UTF-8 file of your own (a book from Project Gutenberg, your
# notes...); the vocabulary is rebuilt from it.

# %% [markdown] lang="zh"
# ## 7. 在语料上训练
#
# 现在正式训练：一个新模型，每一步一个新的随机批次，用 AdamW，配上**学习率调度**：先在最初若干步里线性预热（warmup），因为 AdamW 刚开始的更新噪声很大；然后按余弦衰减到峰值的十分之一（GPT-3 和 nanoGPT 都这么做）。除了损失，训练循环还会记录训练出问题时你要看的那些量：
#
# - 每一步的**学习率**；
# - 裁剪前的**全局梯度范数**（出现尖峰说明不稳定；如果它一直高于 `max_grad_norm`，那每一步都会被裁剪，实际的学习率就变低了）；
# - 每个块的**激活 RMS**，即块输出的 `sqrt(mean(h²))`，由**前向钩子**（forward hook）记录。前向钩子是一个函数，PyTorch 在模块做完前向之后调用它（`module.register_forward_hook(fn)`，`fn(module, inputs, output)`）；RMS 如果一直往上涨，说明残差流在爆炸；
# - **tokens/s** 和进程的**峰值内存**。
#
# 如果设置了环境变量 `TINYLM_QUICK=1`，这次训练只跑几步。在什么文本上训练，由下一个单元格决定：`CORPUS = "en"` 是前面那份英文语料，`"zh"` 是课程的中文语料（唐诗），其他值都当作你自己的某个 UTF-8 文本文件的路径（Project Gutenberg 上的一本书、你的笔记……）；词表会根据所选的文本重新构建。
#
# 从这一节起，本笔记本改用唐诗来训练：取中文语料的前 200,000 个字符，每个字算一个 token，标点和换行也各算一个。第 1–6 节用的是英文语料，这一节和第 8 节用的是唐诗，所以下面的数字和英文版不同，都是本笔记本在唐诗上实际跑出来的结果。

# %%
CORPUS = "en"  # the course's corpus, as above; or the path of any UTF-8 text file, e.g. "my_book.txt"
MAX_CHARS = None  # all of it
PROMPTS = ("Return the ", "The default ")  # the samples' prompts (after the run)

# %% lang="zh"
CORPUS = "zh"  # 课程的中文语料：唐诗；也可以换成任意一个 UTF-8 文本文件的路径，比如 "my_book.txt"
MAX_CHARS = 200_000  # 只取前 200,000 个字符
PROMPTS = ("春风", "明月")  # 训练完以后采样用的提示词（prompt）

# %%
text = corpus(CORPUS, max_chars=MAX_CHARS)
chars, ids = char_tokenizer(text)
data = torch.tensor(ids, dtype=torch.long)  # (N,)
train_data, val_data = train_val_split(data, val_fraction=0.1)
print(f"{CORPUS}: {len(text):,d} characters, V = {len(chars)}")

# %%
BATCH_SIZE, BLOCK_SIZE, PEAK_LR, WARMUP, MAX_GRAD_NORM = 16, 64, 3e-3, 50, 1.0
EVAL_EVERY = max(TRAIN_STEPS // 5, 1)


def lr_at(step: int) -> float:
    """Linear warm-up to PEAK_LR over WARMUP steps, then cosine decay to PEAK_LR / 10 at TRAIN_STEPS."""
    if step <= WARMUP:
        return PEAK_LR * step / WARMUP
    progress = (step - WARMUP) / max(TRAIN_STEPS - WARMUP, 1)
    return PEAK_LR / 10 + (PEAK_LR - PEAK_LR / 10) * 0.5 * (1 + math.cos(math.pi * progress))


torch.manual_seed(0)
config = dict(vocab_size=len(chars), max_seq_len=BLOCK_SIZE, d_model=64, num_heads=4, num_layers=2, d_ff=256)
model = TinyLM(**config)
optimizer = torch.optim.AdamW(model.parameters(), lr=PEAK_LR, weight_decay=0.1)
num_params = sum(p.numel() for p in model.parameters())
print(f"{num_params:,d} parameters")

act_rms = {i: [] for i in range(len(model.blocks))}  # block i -> one value per step (the plot's legend: i)


def record_rms(name):
    def hook(module, inputs, output):  # called by PyTorch after module.forward
        if module.training:  # training steps only, not evaluations
            act_rms[name].append(output.detach().pow(2).mean().sqrt().item())
    return hook


hooks = [block.register_forward_hook(record_rms(i)) for i, block in enumerate(model.blocks)]
log = {"step": [], "lr": [], "loss": [], "grad_norm": [], "tokens_per_s": [], "act_rms": act_rms,
       "val_step": [], "val_loss": [], "max_grad_norm": MAX_GRAD_NORM}
val_batches = list(lm_batches(val_data, 32, BLOCK_SIZE))[:10]
batch_gen = torch.Generator().manual_seed(0)
live = LiveLossPlot(TRAIN_STEPS, title="training on the corpus", every=min(50, TRAIN_STEPS // 3 or 1), smooth=25)
start = time.perf_counter()
bar = tqdm(range(1, TRAIN_STEPS + 1), desc="train", mininterval=1.0)  # redrawn at most once a second
for step in bar:
    t0 = time.perf_counter()
    for group in optimizer.param_groups:
        group["lr"] = lr_at(step)
    batch = get_batch(train_data, BATCH_SIZE, BLOCK_SIZE, batch_gen)  # (B, T) each
    out = train_step(model, batch, optimizer, MAX_GRAD_NORM)
    tokens_per_s = BATCH_SIZE * BLOCK_SIZE / (time.perf_counter() - t0)
    for key, value in (("step", step), ("lr", lr_at(step)), ("loss", out["loss"]),
                       ("grad_norm", out["grad_norm"]), ("tokens_per_s", tokens_per_s)):
        log[key].append(value)
    live.update(step, out["loss"])
    if step % EVAL_EVERY == 0 or step == TRAIN_STEPS:
        log["val_step"].append(step)
        log["val_loss"].append(evaluate(model, val_batches))
        live.add_val(step, log["val_loss"][-1])
    bar.set_postfix(loss=f"{out['loss']:.3f}", lr=f"{lr_at(step):.1e}", gnorm=f"{out['grad_norm']:.2f}")
live.close()
for h in hooks:
    h.remove()
seconds = time.perf_counter() - start
peak_mb = peak_memory_mb()  # the whole process's peak resident memory, in MB
if torch.cuda.is_available():
    peak_mb = torch.cuda.max_memory_allocated() / 2 ** 20
print(f"{TRAIN_STEPS} steps in {seconds:.1f} s, {TRAIN_STEPS * BATCH_SIZE * BLOCK_SIZE / seconds:,.0f} tokens/s; "
      f"peak memory {peak_mb:,.0f} MB (the whole process)")
print(f"validation loss {log['val_loss'][-1]:.3f}, perplexity {perplexity(log['val_loss'][-1]):.1f} "
      f"(untrained: about {len(chars)})")

# %% lang="zh"
BATCH_SIZE, BLOCK_SIZE, PEAK_LR, WARMUP, MAX_GRAD_NORM = 16, 64, 3e-3, 50, 1.0
EVAL_EVERY = max(TRAIN_STEPS // 5, 1)


def lr_at(step: int) -> float:
    """前 WARMUP 步线性预热到 PEAK_LR，然后按余弦衰减，到 TRAIN_STEPS 时降到 PEAK_LR / 10。"""
    if step <= WARMUP:
        return PEAK_LR * step / WARMUP
    progress = (step - WARMUP) / max(TRAIN_STEPS - WARMUP, 1)
    return PEAK_LR / 10 + (PEAK_LR - PEAK_LR / 10) * 0.5 * (1 + math.cos(math.pi * progress))


torch.manual_seed(0)
config = dict(vocab_size=len(chars), max_seq_len=BLOCK_SIZE, d_model=64, num_heads=4, num_layers=2, d_ff=256)
model = TinyLM(**config)
optimizer = torch.optim.AdamW(model.parameters(), lr=PEAK_LR, weight_decay=0.1)
num_params = sum(p.numel() for p in model.parameters())
print(f"{num_params:,d} parameters")

act_rms = {i: [] for i in range(len(model.blocks))}  # 第 i 个块 -> 每一步一个值（图例里写的就是 i）


def record_rms(name):
    def hook(module, inputs, output):  # PyTorch 在 module.forward 之后调用它
        if module.training:  # 只算训练步，不算评估
            act_rms[name].append(output.detach().pow(2).mean().sqrt().item())
    return hook


hooks = [block.register_forward_hook(record_rms(i)) for i, block in enumerate(model.blocks)]
log = {"step": [], "lr": [], "loss": [], "grad_norm": [], "tokens_per_s": [], "act_rms": act_rms,
       "val_step": [], "val_loss": [], "max_grad_norm": MAX_GRAD_NORM}
val_batches = list(lm_batches(val_data, 32, BLOCK_SIZE))[:10]
batch_gen = torch.Generator().manual_seed(0)
live = LiveLossPlot(TRAIN_STEPS, title="training on the corpus", every=min(50, TRAIN_STEPS // 3 or 1), smooth=25)
start = time.perf_counter()
bar = tqdm(range(1, TRAIN_STEPS + 1), desc="train", mininterval=1.0)  # 最多每秒重画一次
for step in bar:
    t0 = time.perf_counter()
    for group in optimizer.param_groups:
        group["lr"] = lr_at(step)
    batch = get_batch(train_data, BATCH_SIZE, BLOCK_SIZE, batch_gen)  # 形状都是 (B, T)
    out = train_step(model, batch, optimizer, MAX_GRAD_NORM)
    tokens_per_s = BATCH_SIZE * BLOCK_SIZE / (time.perf_counter() - t0)
    for key, value in (("step", step), ("lr", lr_at(step)), ("loss", out["loss"]),
                       ("grad_norm", out["grad_norm"]), ("tokens_per_s", tokens_per_s)):
        log[key].append(value)
    live.update(step, out["loss"])
    if step % EVAL_EVERY == 0 or step == TRAIN_STEPS:
        log["val_step"].append(step)
        log["val_loss"].append(evaluate(model, val_batches))
        live.add_val(step, log["val_loss"][-1])
    bar.set_postfix(loss=f"{out['loss']:.3f}", lr=f"{lr_at(step):.1e}", gnorm=f"{out['grad_norm']:.2f}")
live.close()
for h in hooks:
    h.remove()
seconds = time.perf_counter() - start
peak_mb = peak_memory_mb()  # 整个进程常驻内存的峰值，单位 MB
if torch.cuda.is_available():
    peak_mb = torch.cuda.max_memory_allocated() / 2 ** 20
print(f"{TRAIN_STEPS} steps in {seconds:.1f} s, {TRAIN_STEPS * BATCH_SIZE * BLOCK_SIZE / seconds:,.0f} tokens/s; "
      f"peak memory {peak_mb:,.0f} MB (the whole process)")
print(f"validation loss {log['val_loss'][-1]:.3f}, perplexity {perplexity(log['val_loss'][-1]):.1f} "
      f"(untrained: about {len(chars)})")

# %%
plot_training_log(log)
plt.tight_layout()
plt.show()
grad_norms = torch.tensor(log["grad_norm"])
edges = [0, WARMUP, TRAIN_STEPS // 2, 3 * TRAIN_STEPS // 4, TRAIN_STEPS]
for lo, hi in zip(edges, edges[1:]):
    if hi > lo:
        clipped = (grad_norms[lo:hi] > MAX_GRAD_NORM).float().mean().item()
        print(f"steps {lo + 1:3d}-{hi:3d}: median gradient norm {grad_norms[lo:hi].median().item():.2f}, "
              f"{clipped:4.0%} of the steps clipped")
rms = torch.tensor(list(act_rms.values())).mean(0)  # (steps,): the mean over the blocks
print(f"activation RMS: peak {rms.max().item():.2f} at step {rms.argmax().item() + 1}, "
      f"{rms[-1].item():.2f} at the end")

# %% lang="zh"
plot_training_log(log)
plt.tight_layout()
plt.show()
grad_norms = torch.tensor(log["grad_norm"])
edges = [0, WARMUP, TRAIN_STEPS // 2, 3 * TRAIN_STEPS // 4, TRAIN_STEPS]
for lo, hi in zip(edges, edges[1:]):
    if hi > lo:
        clipped = (grad_norms[lo:hi] > MAX_GRAD_NORM).float().mean().item()
        print(f"steps {lo + 1:3d}-{hi:3d}: median gradient norm {grad_norms[lo:hi].median().item():.2f}, "
              f"{clipped:4.0%} of the steps clipped")
rms = torch.tensor(list(act_rms.values())).mean(0)  # (steps,)：对各个块取平均
print(f"activation RMS: peak {rms.max().item():.2f} at step {rms.argmax().item() + 1}, "
      f"{rms[-1].item():.2f} at the end")

# %% [markdown]
# Read the panels left to right (the numbers are those of the full run, printed above):
#
# - **learning rate**: the warm-up to 3e-3 over 50 steps, then the cosine down to 3e-4.
# - **gradient norm**: near 3 at the start, above 1 for most of the warm-up (two thirds of the first 50
#   steps are clipped), then between 0.5 and 1 from step 50 to about 300 (4% clipped), then rising again:
#   more than half of steps 301-450 and nearly all of steps 451-600 are clipped. A late rise like this matches a
#   known effect of weight decay with a decaying learning rate (Defazio et al., 2025, "Why Gradients Rapidly
#   Increase Near the End of Training"), which the paper explains so: weight decay shrinks the weights, and a weight
#   followed by a LayerNorm gets gradients that grow as its scale shrinks (the LayerNorm undoes the scale). This run
#   shows the rise, not its cause. Clipping on every step means clipping is no
#   longer a guard against a rare bad batch: every update is scaled down, and the real step is smaller than
#   the schedule says. Here that happens only at the end, where the learning rate is already small and the
#   loss still falls; from the start, it would say `max_grad_norm` is too small for the model (or the
#   learning rate too large).
# - **activation RMS** of each block's output (the residual stream): it grows from its small initial value
#   while the blocks learn to contribute, peaks at about 1.1 around step 240, then falls to about 0.65 (weight
#   decay pulling the weights back and the smaller learning rate are likely causes, which this run does not tell
#   apart). It does not climb steadily: the stream is not blowing up.
# - **tokens/s**: timed around `train_step` alone (the evaluations are outside the timing), so it shows the
#   step's speed only; it jumps from step to step because one step takes a few milliseconds and anything
#   else running on the machine shows. Read its typical level, not its spikes.
#
# What has the model learnt? Let it write: start from a prompt, and repeatedly sample the next character
# from the softmax of the last position's logits (notebook 10 does this properly, with temperature and
# top-k):

# %% [markdown] lang="zh" run="zh"
# 从左往右看各个面板（数字来自完整运行，见上面打印的结果）：
#
# - **学习率**：在 50 步内预热到 3e-3，然后按余弦曲线降到 3e-4。
# - **梯度范数**：开始时约 1.5，预热期间大部分时间高于 1（前 50 步里有三分之二被裁剪）；第 51 步到第 300 步，它的中位数降到 0.72 左右，被裁剪的约占五分之一；之后又回升到 1 上下，第 301–600 步约有一半被裁剪。后期梯度范数回升，和一个已知现象相符：权重衰减（weight decay）和逐步减小的学习率一起用时，训练快结束时梯度会迅速变大（Defazio 等人，2025，论文题为“Why Gradients Rapidly Increase Near the End of Training”）。论文的解释是：权重衰减会把权重缩小，而对后面紧跟着层归一化（LayerNorm）的权重来说，尺度越小，得到的梯度反而越大（因为层归一化会把尺度抵消掉）。这次运行只看到了回升，没有检验它的原因。一旦很多步都被裁剪，裁剪就不再是防范偶发坏批次的保险，而是在持续地缩小每次更新：实际步长比学习率调度给出的要小。在这次运行里，这只出现在后半段，那时学习率已经变小，损失也还在下降；要是从一开始就步步被裁剪，那就说明 `max_grad_norm` 对这个模型来说太小了（或者学习率太大了）。
# - 每个块输出（也就是残差流）的**激活 RMS**：在各个块学着往里贡献信息的过程中，它从很小的初始值开始增大，在第 140 步左右达到约 0.8 的峰值，然后降到约 0.55。下降的原因可能是权重衰减把权重往回拉，以及学习率变小后梯度每一步推动权重的幅度也变小了；这次运行没有把这两者分开来测。它没有一路攀升：残差流没有爆炸。
# - **tokens/s**：只对 `train_step` 本身计时（评估不在计时范围内），所以它只反映训练步的速度；它每一步都上下跳动：一步只要几毫秒，机器上同时跑着的任何程序都会影响它。看它的大致水平就好，别盯着尖峰。
#
# 模型学到了什么？让它写点东西：给一段提示词（prompt），然后反复对最后一个位置的 logits 做 softmax，再从中采样下一个字。笔记本 10 会把这件事做完整，还会加上温度（temperature）和 top-k 采样：

# %%
def sample(model, prompt: str, n: int = 200, seed: int = 0) -> str:
    stoi = {ch: i for i, ch in enumerate(chars)}
    idx = torch.tensor([[stoi[ch] for ch in prompt if ch in stoi]])  # (1, T)
    gen = torch.Generator().manual_seed(seed)
    model.eval()
    with torch.no_grad():
        for _ in range(n):
            logits, _ = model(idx[:, -model.max_seq_len:])  # (1, T, V)
            probs = F.softmax(logits[0, -1], dim=-1)  # (V,)
            idx = torch.cat([idx, torch.multinomial(probs, 1, generator=gen)[None]], dim=1)  # (1, T+1)
    return decode(idx[0].tolist())


# one generator seed per prompt: with the same seed, both samples would draw the same random numbers, and
# after two similar prompts they would often continue alike
samples = [sample(model, prompt, seed=i) for i, prompt in enumerate(PROMPTS)]
for s in samples:
    print(repr(s), end="\n\n")

# %% lang="zh"
def sample(model, prompt: str, n: int = 200, seed: int = 0) -> str:
    stoi = {ch: i for i, ch in enumerate(chars)}
    idx = torch.tensor([[stoi[ch] for ch in prompt if ch in stoi]])  # (1, T)
    gen = torch.Generator().manual_seed(seed)
    model.eval()
    with torch.no_grad():
        for _ in range(n):
            logits, _ = model(idx[:, -model.max_seq_len:])  # (1, T, V)
            probs = F.softmax(logits[0, -1], dim=-1)  # (V,)
            idx = torch.cat([idx, torch.multinomial(probs, 1, generator=gen)[None]], dim=1)  # (1, T+1)
    return decode(idx[0].tolist())


# 每个提示词用一个生成器种子：如果用同一个种子，两次采样会抽到同样的随机数，
# 两个相似的提示词之后往往会接出相似的内容
samples = [sample(model, prompt, seed=i) for i, prompt in enumerate(PROMPTS)]
for s in samples:
    print(repr(s), end="\n\n")

# %% [markdown]
# Word-like pieces, spaces, punctuation and the look of docstrings, from about 110,000 parameters (printed
# before the run) and only 600 steps of training: not yet sense (the validation perplexity is about 12, against 99
# before training). Notebook 12's report reads this run's record:

# %% [markdown] lang="zh" run="zh"
# 模型约有 360,000 个参数（训练前打印过），其中七成在 token 嵌入（embedding）里：3,984 个字，每个字一个 64 维的向量，就是 254,976 个参数。只训练了 600 步，模型就学会了唐诗的格式：“作者《标题》”形式的标题行，用逗号隔开、以句号结尾的诗句，诗与诗之间的空行；但诗句还读不通（验证集困惑度约 200，训练前约 3,984，也就是 V）。笔记本 12 的报告会读取这次运行的记录：

# %%
_ = record_run("09_train", history={k: v for k, v in log.items() if k != "max_grad_norm"}, config=config,
               num_params=num_params, tokens_per_s=TRAIN_STEPS * BATCH_SIZE * BLOCK_SIZE / seconds,
               peak_memory_mb=peak_mb, lr={"peak": PEAK_LR, "warmup": WARMUP, "schedule": "cosine to peak/10"},
               samples=samples)
print("recorded 09_train and 09_overfit")

# %% [markdown]
# ## 8. When the overfit test goes wrong: the checklist
#
# Section 5's test has two ways to fail. The loss can stay high: the setup cannot learn. Or it can fall *too*
# well: the model gets the answer by a route it will not have later (it copies its input, or reads the token it
# should predict). So when a one-batch run looks wrong, either way, walk this list **in order** (the
# checklist of the lesson this course grew from; the first items are the cheapest to check and the most common):
#
# | # | name | the question | what goes wrong when it fails |
# |---|---|---|---|
# | 1 | `labels_not_shifted` | is every target the **next** token? | the model copies its input: the loss falls fast, towards 0 |
# | 2 | `mask_sees_future` | is the causal mask right? | position t reads token t + 1, the one it must predict: the loss falls towards 0 |
# | 3 | `padding_not_ignored` | are padded targets `-100`? | padding counts as text: easy targets pull the loss down |
# | 4 | `parameters_not_in_optimizer` | does the optimizer hold every parameter? | some weights never move: the loss stalls |
# | 5 | `dropout_on` | is dropout off for this test (the train()/eval() state)? | random drops stop the model from memorising: the loss stalls above the healthy run |
# | 6 | `learning_rate_extreme` | is the learning rate sane? | too small: nothing moves; too large: the loss jumps up |
#
# Each item is a **probe** you can run on a setup without training it:
#
# 1. compare the targets `y` with `ids[:, 1:]` wherever that next token is a real one;
# 2. change every token after some position t (to other ids below `setup.model.vocab_size`), run both batches and
#    compare the logits at positions 0..t: in a causal model they are equal. Run it in **eval mode** under `torch.no_grad()` (with dropout on, two forwards
#    differ anyway), and put the model back in the mode it was in;
# 3. where the next token is padding, the target must be `-100` (`F.cross_entropy` ignores exactly that value);
# 4. every tensor of `model.parameters()` must be in `optimizer.param_groups`: the *same* tensor (compare
#    `id(p)`), not a copy with equal values: an optimizer built for an earlier model holds equal-looking copies;
# 5. no `nn.Dropout` in `model.modules()` may have `p > 0` (`train_step` calls `model.train()`, where
#    dropout acts);
# 6. for AdamW on a small model, `1e-3` to `1e-2` is usual; outside `1e-4` to `1e-1` is extreme.
#
# A probe only looks: it must not train, and leaves the model in the mode it found it in.
#
# **The lab's batch.** Eight lines of the corpus, each a sequence of your character ids, padded after its end with
# a new id, `pad_id = V`. A *setup* holds everything one run needs: `setup.model` (a small GPT with TinyLM's
# `forward`, one head per layer, its mask `torch.ones(T, T).tril(diagonal=model.mask_diagonal)`),
# `setup.ids (B, T + 1)`, `setup.x = ids[:, :-1]`, `setup.y (B, T)` (the next tokens, `-100` where that is
# padding), `setup.optimizer` and `setup.pad_id`. It trains with your `train_step(setup.model, (setup.x,
# setup.y), setup.optimizer)`. First a healthy setup, then six broken ones, A to F, over the same batch and the
# same initial weights:

# %% [markdown] lang="zh"
# ## 8. 过拟合测试出问题时：检查清单
#
# 第 5 节的测试有两种失败方式。一种是损失降不下来：这个配置学不会。另一种是降得*太*好：模型走了一条以后不会再有的捷径拿到答案（它抄了自己的输入，或者读到了本该由它预测的那个 token）。所以，单批次训练看起来不对劲时，不管是哪一种，都要**按顺序**把下面这个清单过一遍（这份清单出自这门课最初依据的那份讲义；排在前面的几项检查起来最省事，也最常见）：
#
# | # | 名字 | 要问的问题 | 不满足时会出什么问题 |
# |---|---|---|---|
# | 1 | `labels_not_shifted` | 每个目标都是**下一个** token 吗？ | 模型照抄输入：损失降得很快，趋向 0 |
# | 2 | `mask_sees_future` | 因果掩码（causal mask）对吗？ | 位置 t 读到了 token t + 1，也就是它要预测的那个：损失趋向 0 |
# | 3 | `padding_not_ignored` | 填充位置的目标是 `-100` 吗？ | 填充被当成了文本：这些容易的目标把损失拉低 |
# | 4 | `parameters_not_in_optimizer` | 优化器里有全部参数吗？ | 有些权重从来不动：损失停滞 |
# | 5 | `dropout_on` | 这个测试里 dropout 关掉了吗（train()/eval() 状态）？ | 随机丢弃让模型背不下来：损失停在健康运行之上 |
# | 6 | `learning_rate_extreme` | 学习率正常吗？ | 太小：什么都不动；太大：损失往上跳 |
#
# 每一项都对应一个**探针**，不用训练，就能在一个配置上运行：
#
# 1. 在下一个 token 是真实 token 的所有位置上，比较目标 `y` 和 `ids[:, 1:]`；
# 2. 把某个位置 t 之后的 token 全部换掉（换成小于 `setup.model.vocab_size` 的其他 id），两个批次都跑一遍，比较位置 0..t 上的 logits：在因果模型里，它们是相等的。要在 **eval 模式**下、在 `torch.no_grad()` 里跑（开着 dropout 的话，两次前向本来就不一样），跑完把模型放回原来的模式；
# 3. 下一个 token 是填充的地方，目标必须是 `-100`（`F.cross_entropy` 忽略的正是这个值）；
# 4. `model.parameters()` 里的每个张量都必须在 `optimizer.param_groups` 里，而且是*同一个*张量（比较 `id(p)`），不是数值相等的副本：为之前某个模型建的优化器，里面放的就是这种看起来一样的副本；
# 5. `model.modules()` 里所有的 `nn.Dropout` 都不能有 `p > 0`（`train_step` 会调用 `model.train()`，而 dropout 正是在这个模式下起作用）；
# 6. 小模型用 AdamW 时，`1e-3` 到 `1e-2` 是常见的学习率；超出 `1e-4` 到 `1e-1` 就算极端。
#
# 探针只看不动：它不能训练，还要让模型回到它原来所处的模式。
#
# **实验用的批次。** 取语料里的八行，每行都是用你的字符 id 表示的序列，结尾之后用一个新的 id `pad_id = V` 填充。一个*配置*（setup）装着一次运行所需的全部东西：`setup.model` 是一个小 GPT，`forward` 和 TinyLM 一样，每层一个头（head），掩码是 `torch.ones(T, T).tril(diagonal=model.mask_diagonal)`；`setup.ids (B, T + 1)`；`setup.x = ids[:, :-1]`；`setup.y (B, T)` 是下一个 token，下一个是填充的地方为 `-100`；此外还有 `setup.optimizer` 和 `setup.pad_id`。训练用的是你的 `train_step(setup.model, (setup.x, setup.y), setup.optimizer)`。先看一个健康的配置，再看六个坏掉的，A 到 F，它们用的是同一个批次、同样的初始权重：

# %%
pad_id = len(chars)
lines = [line for line in text.splitlines() if 16 <= len(line) <= 33][:8]
lab_ids = padded_batch([[chars.index(c) for c in line] for line in lines], pad_id, 33)  # (8, 33)
print(f"{lab_ids.shape[0]} lines, T + 1 = {lab_ids.shape[1]}; padding: {(lab_ids == pad_id).float().mean():.0%} "
      f"of the batch")


def overfit_run(setup, steps=LAB_STEPS):
    """The one-batch overfit test of a setup, with your train_step: the loss of every step."""
    torch.manual_seed(0)  # the same dropout draws in every run
    return [train_step(setup.model, (setup.x, setup.y), setup.optimizer)["loss"] for _ in range(steps)]


healthy = overfit_run(healthy_setup(lab_ids, pad_id, len(chars) + 1))
setups = mystery_setups(lab_ids, pad_id, len(chars) + 1)
before = {name: overfit_run(s) for name, s in setups.items()}
_ = plot_overfit_runs(before, "six broken setups (dashed: healthy)", reference=healthy)
print(f"healthy: {healthy[-1]:.3f} after {LAB_STEPS} steps")
for name, losses in before.items():
    print(f"{name}: {losses[-1]:.3f}")

# %% lang="zh"
pad_id = len(chars)
lines = [line for line in text.splitlines() if 16 <= len(line) <= 33][:8]
lab_ids = padded_batch([[chars.index(c) for c in line] for line in lines], pad_id, 33)  # (8, 33)
print(f"{lab_ids.shape[0]} lines, T + 1 = {lab_ids.shape[1]}; padding: {(lab_ids == pad_id).float().mean():.0%} "
      f"of the batch")


def overfit_run(setup, steps=LAB_STEPS):
    """用你的 train_step 对一种设置做单批次过拟合测试：返回每一步的损失。"""
    torch.manual_seed(0)  # 每次运行 dropout 抽到的都一样
    return [train_step(setup.model, (setup.x, setup.y), setup.optimizer)["loss"] for _ in range(steps)]


healthy = overfit_run(healthy_setup(lab_ids, pad_id, len(chars) + 1))
setups = mystery_setups(lab_ids, pad_id, len(chars) + 1)
before = {name: overfit_run(s) for name, s in setups.items()}
_ = plot_overfit_runs(before, "six broken setups (dashed: healthy)", reference=healthy)
print(f"healthy: {healthy[-1]:.3f} after {LAB_STEPS} steps")
for name, losses in before.items():
    print(f"{name}: {losses[-1]:.3f}")

# %% [markdown]
# The healthy run ends near 0.08, not at 0: some lines begin alike and go on differently, so no model can
# be sure of their next character. Three setups end *below* it: they found a shortcut. Three end above it, and
# one of those never leaves its start. The curves say which group a setup is in, not which item broke: for
# that, walk the list.

# %% [markdown] lang="zh" run="zh"
# 健康配置的损失最后停在 0.05 左右，而不是 0：有些行开头一样，后面却不同（比如同一组诗里前后两首的标题，只差最后的“一”和“二”），到了分岔的位置，任何模型都没法确定下一个字是什么。有三个配置最后*低于*它：它们找到了捷径。另外三个高于它，其中一个始终停在起点没动过。曲线只能告诉你一个配置属于哪一组，不能告诉你是清单上的哪一项出了问题；要弄清这一点，得把清单逐项过一遍。

# %% [markdown]
# ### Exercise 6: `overfit_checklist(setup) -> str | None`
#
# Walk `OVERFIT_CHECKLIST` (the six names of the table, in order) and return the name of the **first** item the
# setup fails, or `None` when it passes all six. Write one probe per item (small functions are fine) and leave
# the setup as it was: same weights, same mode, same batch, same optimizer.
#
# The check builds setups of its own (random tokens and lengths, other sizes, other learning rates): a healthy
# one in training mode and one in eval mode, every variant of every bug (dropout also in eval mode: `train_step`
# switches it back on) (the table's, and others: a mask that
# is missing altogether, an optimizer over another model's parameters, dropout 0.5, a learning rate of 5),
# and every pair of two bugs, where the earlier item must be named. It compares the setup before and after each
# call.
#
# **Difficulty:** ★★☆ · **Time:** about 20 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Each item is a yes/no question about the setup. Answer them one after the other and stop at the first "no":
# the order matters because one bug can make a later probe fail too (unshifted targets also put real tokens
# where the targets should be `-100`).
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# The targets against `setup.ids[:, 1:]` (items 1 and 3, with the mask `ids[:, 1:] == setup.pad_id` telling
# real from padding); two forwards of `setup.model` on `setup.x` and on a copy changed after position t (item
# 2); `setup.optimizer.param_groups` and `setup.model.parameters()` (item 4); `setup.model.modules()` (item 5);
# each group's `"lr"` (item 6).
# </details>
#
# <details><summary>Hint 3: the answer, item by item</summary>
#
# ```python
# nxt = setup.ids[:, 1:]
# real = nxt != setup.pad_id
# labels_ok = bool((setup.y[real] == nxt[real]).all())
# padding_ok = bool((setup.y[~real] == -100).all())
# held = {id(p) for g in setup.optimizer.param_groups for p in g["params"]}
# optimizer_ok = all(id(p) in held for p in setup.model.parameters())
# dropout_ok = all(m.p == 0 for m in setup.model.modules() if isinstance(m, nn.Dropout))
# lr_ok = all(1e-4 <= g["lr"] <= 1e-1 for g in setup.optimizer.param_groups)
# ```
# The mask: `was = setup.model.training`, `setup.model.eval()`, under `torch.no_grad()` the logits of `setup.x`
# and of a copy whose tokens after t = 3 are changed; `torch.allclose` on `[:, :t + 1]`; then
# `setup.model.train(was)`.
# </details>

# %% [markdown] lang="zh"
# ### 练习 6：`overfit_checklist(setup) -> str | None`
#
# 按顺序走一遍 `OVERFIT_CHECKLIST`（就是表里的六个名字，按表的顺序），返回配置**第一个**没通过的项的名字；六项全过就返回 `None`。每一项写一个探针（拆成几个小函数也可以），并且要让配置保持原样：权重不变、模式不变、批次不变、优化器不变。
#
# 检查会自己构造配置（随机的 token 和长度、别的尺寸、别的学习率）：一个处在训练模式的健康配置，一个处在 eval 模式的健康配置；每种 bug 的每个变体（表里的那些，还有别的：完全没有掩码、优化器管的是另一个模型的参数、dropout 为 0.5、学习率为 5；dropout 还会出现在 eval 模式下，因为 `train_step` 会把它重新打开）；以及每一种两个 bug 同时出现的组合，这时必须报出排在前面的那一项。每次调用前后，它都会比对配置有没有被改动。
#
# **难度：** ★★☆ · **用时：** 约 20 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 每一项都是关于这个配置的一道是非题。一道一道地回答，碰到第一个“否”就停：顺序很重要，因为一个 bug 可能连带让后面的探针也失败（目标没有错位时，本该是 `-100` 的地方也会放着真实的 token）。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 第 1 项和第 3 项：拿目标和 `setup.ids[:, 1:]` 比，用掩码（mask）`ids[:, 1:] == setup.pad_id` 区分真实 token 和填充；`setup.model` 在 `setup.x` 上、以及在一份 t 之后被改过的副本上，各做一次前向（第 2 项）；`setup.optimizer.param_groups` 和 `setup.model.parameters()`（第 4 项）；`setup.model.modules()`（第 5 项）；每个参数组的 `"lr"`（第 6 项）。
# </details>
#
# <details><summary>提示 3：答案（逐项）</summary>
#
# ```python
# nxt = setup.ids[:, 1:]
# real = nxt != setup.pad_id
# labels_ok = bool((setup.y[real] == nxt[real]).all())
# padding_ok = bool((setup.y[~real] == -100).all())
# held = {id(p) for g in setup.optimizer.param_groups for p in g["params"]}
# optimizer_ok = all(id(p) in held for p in setup.model.parameters())
# dropout_ok = all(m.p == 0 for m in setup.model.modules() if isinstance(m, nn.Dropout))
# lr_ok = all(1e-4 <= g["lr"] <= 1e-1 for g in setup.optimizer.param_groups)
# ```
# 掩码（mask）那一项：`was = setup.model.training`，`setup.model.eval()`，在 `torch.no_grad()` 下分别求 `setup.x` 的 logits，以及一份 t = 3 之后的 token 被改掉的副本的 logits；对 `[:, :t + 1]` 用 `torch.allclose` 比较；最后 `setup.model.train(was)`。
# </details>

# %% solution="overfit_checklist"
def overfit_checklist(setup):
    """The first item of OVERFIT_CHECKLIST that setup fails, or None; the setup is left as it was."""
    ### BEGIN SOLUTION
    nxt = setup.ids[:, 1:]  # (B, T): the token after each input
    real = nxt != setup.pad_id

    def mask_ok(t=3):
        model, changed = setup.model, setup.x.clone()
        changed[:, t + 1:] = (changed[:, t + 1:] + 1) % model.vocab_size  # (B, T): the future replaced
        was = model.training
        model.eval()
        with torch.no_grad():
            a, b = model(setup.x)[0], model(changed)[0]  # (B, T, V) each
        model.train(was)
        return torch.allclose(a[:, :t + 1], b[:, :t + 1])

    def optimizer_ok():
        held = {id(p) for g in setup.optimizer.param_groups for p in g["params"]}
        return all(id(p) in held for p in setup.model.parameters())

    probes = {
        "labels_not_shifted": lambda: bool((setup.y[real] == nxt[real]).all()),
        "mask_sees_future": mask_ok,
        "padding_not_ignored": lambda: bool((setup.y[~real] == -100).all()),
        "parameters_not_in_optimizer": optimizer_ok,
        "dropout_on": lambda: all(m.p == 0 for m in setup.model.modules() if isinstance(m, nn.Dropout)),
        "learning_rate_extreme": lambda: all(1e-4 <= g["lr"] <= 1e-1 for g in setup.optimizer.param_groups),
    }
    for name in OVERFIT_CHECKLIST:
        if not probes[name]():
            return name
    return None
    ### END SOLUTION


# %% lang="zh"
def overfit_checklist(setup):
    """setup 没通过的 OVERFIT_CHECKLIST 中的第一项，全都通过则返回 None；setup 保持原样。"""
    ### BEGIN SOLUTION
    nxt = setup.ids[:, 1:]  # (B, T)：每个输入后面的那个 token
    real = nxt != setup.pad_id

    def mask_ok(t=3):
        model, changed = setup.model, setup.x.clone()
        changed[:, t + 1:] = (changed[:, t + 1:] + 1) % model.vocab_size  # (B, T)：换成了未来的 token
        was = model.training
        model.eval()
        with torch.no_grad():
            a, b = model(setup.x)[0], model(changed)[0]  # 形状都是 (B, T, V)
        model.train(was)
        return torch.allclose(a[:, :t + 1], b[:, :t + 1])

    def optimizer_ok():
        held = {id(p) for g in setup.optimizer.param_groups for p in g["params"]}
        return all(id(p) in held for p in setup.model.parameters())

    probes = {
        "labels_not_shifted": lambda: bool((setup.y[real] == nxt[real]).all()),
        "mask_sees_future": mask_ok,
        "padding_not_ignored": lambda: bool((setup.y[~real] == -100).all()),
        "parameters_not_in_optimizer": optimizer_ok,
        "dropout_on": lambda: all(m.p == 0 for m in setup.model.modules() if isinstance(m, nn.Dropout)),
        "learning_rate_extreme": lambda: all(1e-4 <= g["lr"] <= 1e-1 for g in setup.optimizer.param_groups),
    }
    for name in OVERFIT_CHECKLIST:
        if not probes[name]():
            return name
    return None
    ### END SOLUTION

# %% test="overfit_checklist_check"
from tinylm_checks import check_overfit_checklist
check_overfit_checklist(overfit_checklist)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_overfit_checklist(overfit_checklist, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# Your checklist on the six setups:

# %% [markdown] lang="zh"
# 用你的清单检查这六个配置：

# %%
causes = {name: overfit_checklist(s) for name, s in setups.items()}
for name, cause in causes.items():
    print(f"{name}: {cause}  (final loss {before[name][-1]:.3f})")

# %% [markdown]
# ### Exercise 7: `repair(setup, cause)`
#
# Fix `cause` (a name of the list) in `setup`, **in place**, and change nothing else; raise `ValueError` for a
# name that is not on the list. What each repair changes:
#
# - the labels and the padding: `setup.y`, from `setup.ids` (never the inputs `x`);
# - the mask: `setup.model.mask_diagonal` (the mask is `tril(diagonal=mask_diagonal)`);
# - the optimizer: a new one of the same kind over `setup.model.parameters()`, with the **old learning rate**
#   (that was not the problem);
# - dropout: the `p` of the model's `nn.Dropout` layers (`model.eval()` would not last: `train_step` calls
#   `model.train()`);
# - the learning rate: every param group's `"lr"`, to `3e-3` (the healthy setups' rate, so that the repaired run
#   can be compared with the healthy one).
#
# Keep the model's weights: a repair that builds a new model throws away the run it should fix. The check breaks
# a setup of its own in every way the checklist knows (14 variants, one with plain SGD), calls `repair` with the
# cause, and then runs the reference checklist on the repaired setup, compares the weights, the batch, the
# optimizer's kind and the learning rate with what they were, and tries a cause that is not on the list.
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Each cause names one part of the setup; the repair makes that part what the checklist's probe asks for, and
# nothing more. The labels and the padding have the same repair: the targets rebuilt by the rule.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# The rule of the targets: the next token (the windows shifted by one), with `-100` where that token is padding.
# The old optimizer tells you its kind (its class) and its learning rate (in its first param group). The dropout
# layers are among the model's modules.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# ```python
# if cause in ("labels_not_shifted", "padding_not_ignored"):
#     nxt = setup.ids[:, 1:]
#     setup.y = nxt.masked_fill(nxt == setup.pad_id, -100)
# elif cause == "mask_sees_future":
#     setup.model.mask_diagonal = 0
# elif cause == "parameters_not_in_optimizer":
#     lr = setup.optimizer.param_groups[0]["lr"]
#     setup.optimizer = type(setup.optimizer)(setup.model.parameters(), lr=lr)
# elif cause == "dropout_on":
#     for m in setup.model.modules():
#         if isinstance(m, nn.Dropout):
#             m.p = 0.0
# elif cause == "learning_rate_extreme":
#     for g in setup.optimizer.param_groups:
#         g["lr"] = 3e-3
# else:
#     raise ValueError(f"cause must be one of {OVERFIT_CHECKLIST}, got {cause!r}")
# ```
# </details>

# %% [markdown] lang="zh"
# ### 练习 7：`repair(setup, cause)`
#
# 在 `setup` 里**原地**修好 `cause`（清单上的一个名字），别的一概不动；名字不在清单上时，抛出 `ValueError`。每种修复改的是：
#
# - 标签和填充：`setup.y`，从 `setup.ids` 重新得到（绝不能动输入 `x`）；
# - 掩码：`setup.model.mask_diagonal`（掩码是 `tril(diagonal=mask_diagonal)`）；
# - 优化器：在 `setup.model.parameters()` 上新建一个同类型的优化器，用**原来的学习率**（问题不在学习率）；
# - dropout：模型里各个 `nn.Dropout` 层的 `p`（`model.eval()` 管不了多久：`train_step` 会调用 `model.train()`）；
# - 学习率：把每个参数组的 `"lr"` 设成 `3e-3`（健康配置用的学习率，这样修好后的运行才能和健康的那次对比）。
#
# 保留模型的权重：新建一个模型来修复，等于把本该修好的那次运行整个扔掉了。检查会按清单知道的每一种方式把它自己的一个配置弄坏（14 个变体，其中一个用的是普通 SGD），带着原因调用 `repair`，然后在修好的配置上跑参考实现的清单，把权重、批次、优化器的类型和学习率与原来的比对，还会试一个不在清单上的原因。
#
# **难度：** ★☆☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 每个原因对应配置里的一个部分；修复就是把这个部分改成清单的探针所要求的样子，仅此而已。标签和填充的修复是同一个：按规则重建目标。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 目标的规则：下一个 token（窗口错开一位），那个 token 是填充的地方填 `-100`。从旧的优化器（optimizer）能看出它的类型（它的类），以及它的学习率（learning rate）：在它的第一个参数组里。dropout 层就在模型的各个模块当中。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# ```python
# if cause in ("labels_not_shifted", "padding_not_ignored"):
#     nxt = setup.ids[:, 1:]
#     setup.y = nxt.masked_fill(nxt == setup.pad_id, -100)
# elif cause == "mask_sees_future":
#     setup.model.mask_diagonal = 0
# elif cause == "parameters_not_in_optimizer":
#     lr = setup.optimizer.param_groups[0]["lr"]
#     setup.optimizer = type(setup.optimizer)(setup.model.parameters(), lr=lr)
# elif cause == "dropout_on":
#     for m in setup.model.modules():
#         if isinstance(m, nn.Dropout):
#             m.p = 0.0
# elif cause == "learning_rate_extreme":
#     for g in setup.optimizer.param_groups:
#         g["lr"] = 3e-3
# else:
#     raise ValueError(f"cause must be one of {OVERFIT_CHECKLIST}, got {cause!r}")
# ```
# </details>

# %% solution="repair"
def repair(setup, cause):
    """Fix cause (a name of OVERFIT_CHECKLIST) in setup, in place, changing nothing else."""
    ### BEGIN SOLUTION
    if cause in ("labels_not_shifted", "padding_not_ignored"):
        nxt = setup.ids[:, 1:]  # (B, T): the next tokens
        setup.y = nxt.masked_fill(nxt == setup.pad_id, -100)
    elif cause == "mask_sees_future":
        setup.model.mask_diagonal = 0  # tril(diagonal=0): position t reads 0..t
    elif cause == "parameters_not_in_optimizer":
        lr = setup.optimizer.param_groups[0]["lr"]
        setup.optimizer = type(setup.optimizer)(setup.model.parameters(), lr=lr)
    elif cause == "dropout_on":
        for m in setup.model.modules():
            if isinstance(m, nn.Dropout):
                m.p = 0.0
    elif cause == "learning_rate_extreme":
        for group in setup.optimizer.param_groups:
            group["lr"] = 3e-3
    else:
        raise ValueError(f"cause must be one of {OVERFIT_CHECKLIST}, got {cause!r}")
    ### END SOLUTION


# %% lang="zh"
def repair(setup, cause):
    """在 setup 里原地修好 cause（OVERFIT_CHECKLIST 中的一个名字），别的什么都不改。"""
    ### BEGIN SOLUTION
    if cause in ("labels_not_shifted", "padding_not_ignored"):
        nxt = setup.ids[:, 1:]  # (B, T)：下一个 token
        setup.y = nxt.masked_fill(nxt == setup.pad_id, -100)
    elif cause == "mask_sees_future":
        setup.model.mask_diagonal = 0  # tril(diagonal=0)：位置 t 读取 0..t
    elif cause == "parameters_not_in_optimizer":
        lr = setup.optimizer.param_groups[0]["lr"]
        setup.optimizer = type(setup.optimizer)(setup.model.parameters(), lr=lr)
    elif cause == "dropout_on":
        for m in setup.model.modules():
            if isinstance(m, nn.Dropout):
                m.p = 0.0
    elif cause == "learning_rate_extreme":
        for group in setup.optimizer.param_groups:
            group["lr"] = 3e-3
    else:
        raise ValueError(f"cause must be one of {OVERFIT_CHECKLIST}, got {cause!r}")
    ### END SOLUTION

# %% test="repair_check"
from tinylm_checks import check_repair
check_repair(repair)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_repair(repair, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# Repair each setup with the cause your checklist named, check that the list now passes, and run the test again
# from the same initial weights (the runs above trained the broken setups: rebuild them first):

# %% [markdown] lang="zh"
# 用你的清单报出的原因修好每个配置，确认清单现在能通过，再从同样的初始权重重新跑一遍测试（上面那几次运行已经把坏配置训练过了：先把它们重新建出来）：

# %%
setups = mystery_setups(lab_ids, pad_id, len(chars) + 1)
for name, s in setups.items():
    if causes[name] is not None:
        repair(s, causes[name])
after = {name: overfit_run(s) for name, s in setups.items()}
_ = plot_overfit_runs(after, "the six setups repaired (dashed: healthy)", reference=healthy)
for name in setups:
    print(f"{name}: {str(causes[name]):28} {before[name][-1]:.3f} -> {after[name][-1]:.3f}   "
          f"checklist now: {overfit_checklist(setups[name])}")

# %% [markdown]
# Every repaired setup now trains like the healthy one: the same weights, the same batch, the same curve. The
# three that ended below the healthy run had the worst bugs of the six: their loss looked like success. A
# one-batch test catches a setup that cannot learn; only the checklist catches one that learns the wrong thing.

# %% [markdown] lang="zh"
# 六个配置修好以后，训练起来都和健康的那个一模一样：权重一样，批次一样，曲线也一样。最后损失比健康运行还低的那三个，其实是六个里最糟的 bug：它们的损失看上去就像训练成功了。单批次测试能抓出根本学不会的配置；学会了错东西的配置，只有靠检查清单才抓得出来。

# %% [markdown]
# ## Summary
#
# - A character tokenizer: `vocab = sorted(set(text))`, id = position, lossless round trip. A word tokenizer:
#   shorter sequences, a big vocabulary, `<pad>` (label `-100`), `<unk>` (the UNK rate grows with
#   `min_freq`), `<eos>`.
# - `train_step`: `train()` → `zero_grad` → forward → loss → `backward` → clip → `step`; return floats.
# - First overfit one batch: if the loss doesn't go near 0, don't train further, debug.
# - `evaluate`: `eval()`, `no_grad`, the mode restored; total loss / counted tokens. Perplexity = `exp(loss)`.
# - Log the learning rate, the gradient norm, activation RMS (forward hooks), tokens/s and memory: they tell
#   you why a run fails.
# - When the overfit test fails, or succeeds too well, walk the checklist in order: labels shifted, causal mask,
#   padding `-100`, every parameter in the optimizer, dropout off, a sane learning rate. Probe, don't guess.
#
# **Next:** notebook 10 generates text with temperature and top-k, and looks inside the attention.

# %% [markdown] lang="zh"
# ## 小结
#
# - 字符分词器：`vocab = sorted(set(text))`，id = 位置，往返无损。词分词器：序列更短，词表很大，有 `<pad>`（标签为 `-100`）、`<unk>`（UNK 率随 `min_freq` 增大而升高）和 `<eos>`。
# - `train_step`：`train()` → `zero_grad` → 前向 → 损失 → `backward` → 裁剪 → `step`；返回 float。
# - 先在一个批次上过拟合：如果损失降不到接近 0，就别往下训练了，先调试。
# - `evaluate`：`eval()`、`no_grad`、恢复原来的模式；总损失 / 计入的 token 数。困惑度 = `exp(loss)`。
# - 记录学习率、梯度范数、激活 RMS（前向钩子）、tokens/s 和内存：训练失败时，它们会告诉你原因。
# - 过拟合测试失败了，或者成功得过了头，就按顺序过一遍清单：标签错位、因果掩码、填充为 `-100`、每个参数都在优化器里、dropout 关闭、学习率合理。靠探针，别靠猜。
#
# **下一步：** 笔记本 10 用温度和 top-k 生成文本，并深入看看注意力（attention）的内部。
