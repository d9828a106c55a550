# %% [markdown]
# # 11 · Ablations and debugging
#
# You have a working language model. This notebook takes it apart in two ways.
#
# **Ablations** remove one ingredient and measure what breaks. Each one trains small models for a few hundred
# steps, **three times, with seeds 0, 1 and 2**, with a plot as its evidence. At
# this size one run's noise is as large as many effects: a result counts here when it holds in every seed, by
# more than the spread between them. The tables and plots show that spread.
#
# 1. **no residual connections**, at 2 and at 8 layers: how much gradient reaches each layer, and what is learned?
# 2. **Post-LN vs Pre-LN** over a learning-rate sweep, and Post-LN with a warm-up;
# 3. **no positions**: does the model still care about the order of its input ("A B C D" vs "D C B A")?
#
# **The debugging lab** hands you four broken models. For each, you see the symptom (a short run or a
# probe), **name the bug**, write the **fixed** function, and a check confirms the fix by its behaviour:
#
# | symptom | what you write |
# |---|---|
# | the loss is NaN | `nan_loss_bug()`, `stable_cross_entropy(logits, targets)` |
# | every attention row is uniform | `uniform_attention_bug()`, `fixed_attention(q, k, v, mask)` |
# | suspiciously low loss, samples no better | `future_mask_bug()`, `fixed_causal_mask(T)` |
# | the loss falls to ~0 at once, samples repeat | `unshifted_labels_bug()`, `fixed_lm_loss(logits, labels)` |
#
# **The claims lab** (section 5) ends the notebook: the source lesson's claims about a Transformer's parts (RoPE
# against learned and sinusoidal positions, removing each part, the FFN's width, SwiGLU at equal parameters), each an
# experiment of 400 steps over three seeds. You write a prediction before each run and compare it with the run after.
#
# Your numbers are recorded (`record_run`) for the report of notebook 12.
#
# Shapes as before: `B` batch, `T` positions, `D` = `d_model`, `V` the vocabulary, `H` heads, `d_k = D // H`.

# %% [markdown] lang="zh" run="zh"
# # 11 · 消融实验与调试
#
# 你手里已经有一个能用的语言模型（language model）了。这个笔记本从两个方向把它拆开来看。
#
# **消融实验（ablation）**：每次去掉一个组成部分，测一测哪里坏了。每个消融实验都把几个小模型训练几百步，**分别用随机种子（random seed）0、1、2 各跑一遍**，并用一张图作为证据。模型这么小，单次运行的噪声和很多效应一样大：所以在这里，一个结论要在每个种子上都成立，而且差距要大于种子之间的波动，才算数。表格和图里都标出了这个波动范围。
#
# 1. **去掉残差连接（residual connection）**，分别在 2 层和 8 层上：每一层能收到多少梯度（gradient）？模型学到了什么？
# 2. 在一组学习率（learning rate）上扫描，比较**后置层归一化（Post-LN）和前置层归一化（Pre-LN）**，再加一个带预热（warmup）的 Post-LN；
# 3. **去掉位置信息**：模型还在乎输入的顺序吗（“A B C D”和“D C B A”）？
#
# **调试实验**交给你四个有 bug 的模型。每一个你都会先看到症状（一次短训练或一个探针），然后**说出 bug 的名字**，写出**修好的**函数，再由检查（check）根据模型的行为确认你修对了：
#
# | 症状 | 你要写的 |
# |---|---|
# | 损失变成 NaN | `nan_loss_bug()`，`stable_cross_entropy(logits, targets)` |
# | 每一行注意力都是均匀的 | `uniform_attention_bug()`，`fixed_attention(q, k, v, mask)` |
# | 损失低得可疑，生成的样本却没变好 | `future_mask_bug()`，`fixed_causal_mask(T)` |
# | 损失一下子降得极低，样本不停重复 | `unshifted_labels_bug()`，`fixed_lm_loss(logits, labels)` |
#
# **论断实验**（第 5 节）放在最后：这门课最初依据的那份讲义（下文称“原讲义”）对 Transformer 各个部件下了几条论断（旋转位置编码（RoPE）对比可学习位置嵌入（learned positional embedding）和正弦位置编码（sinusoidal positional encoding）、逐个去掉部件、前馈网络（FFN）的宽度、参数量相等时的 SwiGLU），每一条都变成一个实验：训练 400 步，跑三个种子。每次运行之前你先写下预测，跑完再拿结果来对照。
#
# 你的结果会被记录下来（`record_run`），留给笔记本 12 写报告用。
#
# 形状（shape）记号和前面一样：`B` 是批次（batch）大小，`T` 是位置数，`D` = `d_model`，`V` 是词表（vocabulary）大小，`H` 是头（head）数，`d_k = D // H`。

# %%
import math
import os
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from IPython.display import Markdown, display

from tinylm_solutions.ablations import (BUG_NAMES, LabTinyLM, lab_train, norm_placement_sweep, order_test,
                                        residual_ablation, unigram_loss)
from tinylm_solutions.report import ABLATION_LRS, ABLATION_STEPS, ABLATION_WARMUP_LRS, ablation_table
from tinylm_solutions.data import corpus, train_val_split
from tinylm_solutions.generate import generate
from tinylm_solutions.model import TinyLM, shift_labels
from tinylm_solutions.tokenizer import CharTokenizer
from tinylm_solutions.trainer import train
from tinylm_checks import (CheckFailure, check_fixed_attention, check_fixed_causal_mask,
                           check_fixed_lm_loss, check_future_mask_bug, check_nan_loss_bug, check_stable_cross_entropy,
                           check_uniform_attention_bug, check_unshifted_labels_bug)
from tinylm_checks import (plot_attention, plot_layer_grad_norms, plot_loss_curves, plot_lr_sweep,
                           plot_order_test, record_run)

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # the models here are tiny: one thread is enough (two would mostly wait on each other)

# %% lang="zh"
import math
import os
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from IPython.display import Markdown, display

from tinylm_solutions.ablations import (BUG_NAMES, LabTinyLM, lab_train, norm_placement_sweep, order_test,
                                        residual_ablation, unigram_loss)
from tinylm_solutions.report import ABLATION_LRS, ABLATION_STEPS, ABLATION_WARMUP_LRS, ablation_table
from tinylm_solutions.data import corpus, train_val_split
from tinylm_solutions.generate import generate
from tinylm_solutions.model import TinyLM, shift_labels
from tinylm_solutions.tokenizer import CharTokenizer
from tinylm_solutions.trainer import train
from tinylm_checks import (CheckFailure, check_fixed_attention, check_fixed_causal_mask,
                           check_fixed_lm_loss, check_future_mask_bug, check_nan_loss_bug, check_stable_cross_entropy,
                           check_uniform_attention_bug, check_unshifted_labels_bug)
from tinylm_checks import (plot_attention, plot_layer_grad_norms, plot_loss_curves, plot_lr_sweep,
                           plot_order_test, record_run)

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # 这里的模型都很小：一个线程就够了（两个线程大部分时间在互相等待）

# %% [markdown]
# Every run below has a fixed number of steps. `TINYLM_QUICK=1` in the environment shortens them all to a
# few steps (the course's CI uses it to test that the notebook runs; the plots then show nothing useful).

# %% [markdown] lang="zh"
# 下面每次运行的步数都是固定的。如果在环境变量里设置 `TINYLM_QUICK=1`，所有运行都会缩短成几步（课程的 CI 就用它来测试笔记本能不能跑通；这时画出来的图没有参考价值）。

# %%
QUICK = os.environ.get("TINYLM_QUICK") == "1"
STEPS = dict(ABLATION_STEPS, lab=200, lab_short=60, lab_copy=40)  # the ablations' steps: the report's too
if QUICK:
    STEPS = {key: 3 for key in STEPS}
print("steps per run:", STEPS)

# %% lang="zh"
QUICK = os.environ.get("TINYLM_QUICK") == "1"
STEPS = dict(ABLATION_STEPS, lab=200, lab_short=60, lab_copy=40)  # 消融实验的步数：报告用的也是它
if QUICK:
    STEPS = {key: 3 for key in STEPS}
print("steps per run:", STEPS)

# %% [markdown]
# The data: the course's corpus (English docstrings of Python's standard library), one token per
# character, 90% for training. A line to compare every loss with: the **unigram loss**, the loss of a model that
# ignores the context and predicts each character by its frequency in the training data (the entropy of the
# character frequencies, in nats). A model that ends near it has learned the letter frequencies and little else.

# %% [markdown] lang="zh"
# 数据：课程的中文语料（唐诗）的前 100,000 个字符（和笔记本 10 用的一样），每个字一个 token（标点和换行也各算一个），90% 用来训练。中英两版笔记本的代码只在下一个单元格不同：英文版在那里读入的是课程的英文语料。所以本笔记本里的数字都是在唐诗上实际跑出来的，和英文版不同。
#
# 再定一条基准线，所有损失都拿它来比：**unigram 损失**（即一元模型的损失）。它是这样一个模型的损失：完全不看上下文，只按训练数据里的字频去预测每个字（也就是字频分布的熵，单位是 nat）。一个模型如果最后停在这条线附近，说明它只学会了字频，别的几乎什么都没学到。

# %%
text = corpus("en")  # the course's corpus: docstrings of Python's standard library
PROMPT = "The "  # the debugging lab's samples continue it (section 4)
COPY_PROMPT = "The cat"  # the prompt of section 4.4's sample

# %% lang="zh"
text = corpus("zh", max_chars=100_000)  # 唐诗的前 100,000 个字符
PROMPT = "春风"  # 第 4 节调试实验采样用的提示词（prompt）
COPY_PROMPT = "白日依山尽"  # 第 4.4 节那次采样用的提示词

# %%
tokenizer = CharTokenizer(text)
data = torch.tensor(tokenizer.encode(text))  # (N,) long
train_data, val_data = train_val_split(data)
V = tokenizer.vocab_size
print(f"{len(data):,} tokens, vocabulary of {V} characters")

# one size for every small model of this notebook: 2 heads of width 16, d_ff = 2 D, 32 positions
SIZE = dict(vocab_size=V, max_seq_len=32, d_model=32, num_heads=2, d_ff=64)
unigram = unigram_loss(train_data, V)
print(f"unigram loss: {unigram:.3f} nats")

# %% lang="zh"
tokenizer = CharTokenizer(text)
data = torch.tensor(tokenizer.encode(text))  # (N,)，long 类型
train_data, val_data = train_val_split(data)
V = tokenizer.vocab_size
print(f"{len(data):,} tokens, vocabulary of {V} characters")

# 本笔记本中所有小模型都用同一个尺寸：2 个宽度为 16 的头，d_ff = 2 D，32 个位置
SIZE = dict(vocab_size=V, max_seq_len=32, d_model=32, num_heads=2, d_ff=64)
unigram = unigram_loss(train_data, V)
print(f"unigram loss: {unigram:.3f} nats")

# %% [markdown]
# ## 1. Ablation: no residual connections
#
# A Pre-LN block computes `x = x + attn(norm1(x))`, then `x = x + ffn(norm2(x))`. The `x +` is the
# residual connection (He et al., 2016). Through it the gradient of the loss reaches every layer directly:
# the derivative of `x + f(x)` is `1 + f'(x)`, and the `1` passes the gradient on unchanged however small
# `f'` is. Without it, the gradient that reaches layer 0 is a product of one factor per layer above it.
# The residual also carries each token's own vector past the attention, which mixes it with the tokens before it.
#
# `without_residuals(model)` turns every block into a `NoResidualBlock` (the same parameters, `x = attn(norm1(x))`,
# `x = ffn(norm2(x))`). `residual_ablation` trains four models per seed, 2 and 8 layers, with and without the
# residuals, each for the same steps on the same batches (AdamW, learning rate 3e-3, no gradient clipping),
# and records the gradient norm of each block's parameters over the first 10 steps (`layer_grad_norms`) and the
# final training loss (the mean of the last 10 steps). Read its code with `residual_ablation??`.

# %% [markdown] lang="zh"
# ## 1. 消融实验：去掉残差连接
#
# Pre-LN 块先算 `x = x + attn(norm1(x))`，再算 `x = x + ffn(norm2(x))`。其中的 `x +` 就是残差连接（He 等人，2016）。有了它，损失的梯度可以直接到达每一层：`x + f(x)` 的导数是 `1 + f'(x)`，不管 `f'` 有多小，那个 `1` 都会把梯度原样传下去。没有它，到达第 0 层的梯度就是它上面每一层各乘一个因子得到的连乘积。残差还有另一个作用：注意力（attention）会把每个 token 的向量和它前面的 token 混在一起，而残差让 token 自己的向量绕过注意力，直接传下去。
#
# `without_residuals(model)` 把每个块都换成 `NoResidualBlock`（参数不变，计算改成 `x = attn(norm1(x))`、`x = ffn(norm2(x))`）。`residual_ablation` 在每个种子下训练四个模型：2 层和 8 层，各有带残差和不带残差两种。它们在同样的批次上训练同样的步数（AdamW，学习率 3e-3，不做梯度裁剪），记录前 10 步里每个块的参数（parameter）的梯度范数（`layer_grad_norms`），以及最终的训练损失（最后 10 步的平均值）。想看它的代码，运行 `residual_ablation??`。

# %%
t0 = time.perf_counter()
residual = residual_ablation(train_data, SIZE, steps=STEPS["no_residual"])
print(f"({time.perf_counter() - t0:.0f} s; parameters: 2 layers {TinyLM(num_layers=2, **SIZE).get_num_params():,}, "
      f"8 layers {TinyLM(num_layers=8, **SIZE).get_num_params():,})")
display(Markdown(ablation_table("no_residual", residual)))

# %%
plot_layer_grad_norms(residual, unigram)
plt.tight_layout()
plt.show()

# %% [markdown]
# **What the runs show.** Read them from your table; each sentence here held in every seed of the course's own
# runs (its tests rerun them).
#
# - **The gradient.** Without residuals, the 8-layer model's gradient shrinks on its way down: block 0 gets
#   tens of times less than the last block (the third column). With residuals the line is flat: every block
#   gets about the same.
# - **The loss.** Without residuals, *neither* depth gets clearly below the unigram loss in these steps: the
#   models learn the letter frequencies and little more. With residuals both depths do. At 2 layers the
#   gradient reaches block 0 as well as the last block (a ratio near 1), and the loss stays up all the same: a
#   vanishing gradient is not the whole story. The other thing the `x +` does is in the paragraph above. The two
#   rows without residuals agree to the third decimal: two models, 2 and 8 layers, end at the same loss, the loss
#   left when what the model reads cannot get through.
# - **Depth.** With residuals, 8 layers do not beat 2 in runs this short: their means are about equal and their
#   ranges overlap (in the course's runs, 8 layers ended lower in one seed of three). The 8-layer model has more
#   than three times the parameters (printed above) and more to learn; depth pays later, and only because the
#   gradient can get through.
#
# ## 2. Ablation: Post-LN vs Pre-LN over a learning-rate sweep
#
# The original Transformer put the LayerNorm after the residual addition (Post-LN,
# `x = norm1(x + attn(x))`); GPT-2 moved it to the input of each sub-layer (Pre-LN,
# `x = x + attn(norm1(x))`). Xiong et al. (2020) showed that Post-LN's gradients near the output are
# large at initialisation, so it needs a learning-rate warm-up, while Pre-LN trains without one.
# `TinyLM(..., norm_first=False)` builds Post-LN blocks. `norm_placement_sweep` trains both, 4 layers, at four
# learning rates, per seed: same batches, no gradient clipping, nothing else changed. At the largest rate it also
# trains Post-LN with a warm-up (the rate rises linearly over the first quarter of the steps): the remedy Xiong et
# al. discuss, tried beside the problem.

# %% [markdown] lang="zh" run="zh"
# **结果说明了什么。** 请对照你自己的表格来读；下面每一句话，在课程自己跑的每个种子上都成立（课程的测试会重新跑这些实验）。
#
# - **梯度。** 没有残差时，8 层模型的梯度在往下传的路上越来越小：最后一块拿到的梯度是第 0 块的几十倍到上百倍（看第三列）。有残差时曲线是平的：每一块拿到的都差不多。
# - **损失。** 没有残差时，两种深度在这些步数里*都*没能低于 unigram 损失，反而略高于它（约 6.21，unigram 损失是 6.16）：模型连字频都还没学全。有残差时，两种深度都明显低于它（约 5.4 到 5.5）。在 2 层时，第 0 块收到的梯度和最后一块一样多（比值接近 1），可损失照样下不去：可见梯度消失并不是全部原因。`x +` 的另一个作用，上一段已经讲过。两行无残差的结果一直到小数点后第三位都相同：2 层和 8 层这两个模型停在了同一个损失上，这就是模型读到的信息传不过去时剩下的损失。
# - **深度。** 有残差时，8 层的最终损失平均比 2 层略低（约 5.43 对 5.48），但两者的范围有重叠：三个种子里有两个是 8 层更低，一个是 2 层更低。在这么短的训练里，还看不出 8 层比 2 层好。8 层模型的参数比 2 层多四成（上面打印出来了；两者的大头都是同样大小的 token 嵌入：3,330 个字 × 32 维 = 106,560），要学的东西也更多；深度的好处要晚些才显现，而且前提是梯度能传得下去。
#
# ## 2. 消融实验：在学习率扫描上比较 Post-LN 和 Pre-LN
#
# 最初的 Transformer 把层归一化（LayerNorm）放在残差相加之后（Post-LN，`x = norm1(x + attn(x))`）；GPT-2 把它挪到了每个子层的输入处（Pre-LN，`x = x + attn(norm1(x))`）。Xiong 等人（2020）证明：在初始化（initialization）时，Post-LN 靠近输出处的梯度很大，所以需要学习率预热；而 Pre-LN 不预热也能训练。`TinyLM(..., norm_first=False)` 构建的就是 Post-LN 块。`norm_placement_sweep` 在每个种子下把两种都训练一遍：4 层，四个学习率，批次相同，不做梯度裁剪，其他一概不变。在最大的学习率上，它还额外训练一个带预热的 Post-LN（学习率在前四分之一的步数里线性上升）：这正是 Xiong 等人讨论的补救办法，放在问题旁边一起试。

# %%
t0 = time.perf_counter()
sweep = norm_placement_sweep(train_data, SIZE, steps=STEPS["norm_placement"], lrs=ABLATION_LRS,
                             warmup_lrs=ABLATION_WARMUP_LRS)
print(f"({time.perf_counter() - t0:.0f} s)")
display(Markdown(ablation_table("norm_placement", sweep)))

# %%
plot_lr_sweep(sweep, unigram)
plt.show()

# %% [markdown]
# **What the runs show.** Pre-LN ends lower than Post-LN at every learning rate, in every seed: every entry of the
# last column (Post-LN minus Pre-LN, seed by seed, on the same batches) is positive. At the two largest rates
# Post-LN stays near the unigram loss, while Pre-LN ends below it in most seeds, by up to about 0.2 (a seed may end
# near it, and on another machine just above it): Pre-LN too does worse there than at 3e-3, these rates are too
# large for either, but less so for Pre-LN. The warm-up did **not** rescue Post-LN
# here: with it, Post-LN ends where it ended without. So this notebook shows that Pre-LN trains better without a
# warm-up; it does not show that a warm-up is what Post-LN lacks. Xiong et al. (2020) measure that on
# deeper models trained for far longer, which a few hundred steps on a laptop cannot repeat. An ablation that does not
# reproduce a paper's explanation is a result too: say so, as here, rather than borrow the paper's conclusion.
#
# ## 3. Ablation: no positions
#
# Notebook 04 showed that attention without positions is *permutation-equivariant*: shuffle the tokens and
# the outputs are shuffled the same way. A language model gets some order back from its causal mask (token
# `t` sees `t + 1` tokens), so causal attention without positions is *not* permutation-invariant. The question
# is how much the model loses without its position embedding (`TinyLM(..., positions="none")`).
#
# The **order test**: the model's loss on held-out text as it is ("A B C D") and reversed ("D C B A"),
# 100 windows of 32 characters. A model that uses order finds the reversed text harder to predict.

# %% [markdown] lang="zh" run="zh"
# **结果说明了什么。** 在前三个学习率上，每个种子的 Pre-LN 最终损失都比 Post-LN 低：最后一列（Post-LN 减 Pre-LN，逐个种子、在同样的批次上计算）在这三行里每一项都是正数；到了最大的学习率 3e-2，平均下来 Pre-LN 仍然更低，但换一台机器，个别种子的差值可能接近 0，甚至是负的。在全部四个学习率上，Post-LN 都停在 unigram 损失附近；Pre-LN 在 3e-3 和 1e-2 上都明显降到了它下面，最低的是学习率 3e-3 时（约 5.52），再往上的两个学习率对 Pre-LN 来说已经太大，损失又回升了：到 3e-2，多数种子仍在它下面，个别种子可能回到它附近；在最小的学习率 1e-3 上，Pre-LN 这几百步还远没学完，只比 unigram 损失略低（不同的机器上，个别种子甚至会略高于它）；Post-LN 则不论学习率大小，都没能离开 unigram 损失附近。预热在这里**没有**救回 Post-LN：加了预热，Post-LN 最后停的位置和不加时一样。所以这个笔记本说明的是：不预热时，Pre-LN 训练得更好；它并没有说明 Post-LN 缺的正是预热。Xiong 等人（2020）是在更深的模型上、训练长得多的时间才测出这一点的，在笔记本电脑上训练几百步重复不了。消融实验没能复现论文给出的解释，这本身也是一个结果：要像这里一样如实写出来，而不是直接借用论文的结论。
#
# ## 3. 消融实验：去掉位置信息
#
# 在笔记本 04 里我们看到，没有位置信息的注意力是*置换等变*的：把 token 打乱，输出也会按同样的方式打乱。语言模型能从因果掩码（causal mask）里找回一部分顺序信息（token `t` 能看到 `t + 1` 个 token），所以没有位置信息的因果注意力*不是*置换不变的。要问的是：去掉位置嵌入（`TinyLM(..., positions="none")`）之后，模型会差多少。
#
# **顺序测试**：在留出数据（held-out data）上测模型的损失，一次用原样的文本（“A B C D”），一次用倒过来的文本（“D C B A”），共 100 个窗口，每个 32 个字。一个会利用顺序的模型，会觉得倒序的文本更难预测。

# %%
t0 = time.perf_counter()
order = order_test(train_data, val_data, SIZE, steps=STEPS["no_positions"])
print(f"({time.perf_counter() - t0:.0f} s)")
display(Markdown(ablation_table("no_positions", order)))

# %%
plot_order_test(order)
plt.show()

# %% [markdown]
# **What the runs show.** Both models are well below the loss in the note above the table (each held-out character
# predicted by its training frequency: held-out text is less like the training text than the training text itself,
# so this loss is higher than the unigram loss of section 1). Both find reversed text harder, in every seed, and the model
# *without* positions finds it harder still (the gap column). On text in its order, the model without positions is
# not worse: on average it is a little better. So the gap is not a measure of position embeddings. A model this
# small can predict a character well from the few before it (which characters follow which: "th" is common, "ht" is
# not), and the causal mask already tells it which tokens came before. Language models trained without any position
# embedding reach nearly the same loss (Haviv et al. 2022). Positions matter once a model must know *where*
# something was: counting, copying from a fixed offset, long-range structure; the small models of this course do not
# get that far in 150 steps. An ablation that finds little is a result too, and the table is the evidence for it.
#
# Your three ablations, saved for notebook 12's report:

# %% [markdown] lang="zh" run="zh"
# **结果说明了什么。** 两个模型的损失都远低于表格上方那句说明里的损失（那是按训练集里的字频去预测每个留出的字得到的损失：它是在留出文本上算的，而第 1 节的 unigram 损失是在训练文本本身上算的，所以两者并不相同）。在每个种子上，两个模型都觉得倒序文本更难，而*没有*位置信息的那个，倒序时损失涨得更多（看差值那一列）。在正常顺序的文本上，没有位置信息的模型并不更差：在每个种子上反而都更好，损失平均低约 0.19（5.49 对 5.68）。所以这个差值衡量的并不是位置嵌入的作用。这么小的模型，只靠前面几个字就能把下一个字预测得不错（靠的是哪些字常跟在哪些字后面：“春风”在训练文本里出现了 43 次，“风春”一次也没有），而因果掩码已经告诉了它哪些 token 在前面。完全不用位置嵌入训练出来的语言模型，损失也几乎一样（Haviv 等人，2022）。只有当模型必须知道某样东西*在哪里*时，位置才变得重要：计数、从固定的偏移处复制、长距离的结构；本课程的小模型在 150 步里还走不到那一步。消融实验没发现位置嵌入的好处，这本身也是一个结果，表格就是它的证据。
#
# 你的三个消融实验，保存下来留给笔记本 12 的报告：

# %%
record_run("11_ablations", no_residual=residual, norm_placement=sweep, no_positions=order, unigram_loss=unigram)
print("saved the record 11_ablations")

# %% [markdown]
# ## 4. The debugging lab
#
# Each broken model below is a `LabTinyLM`: a TinyLM whose causal mask, attention function and loss are
# arguments (`mask_fn`, `attention_fn`, `loss_fn`), so that one broken part can be put in at a time.
# `lab_train(model, data, steps=...)` trains it on the model's *own* loss, `model(ids, labels=ids)`.
#
# First a healthy model, the baseline every symptom is compared with:

# %% [markdown] lang="zh"
# ## 4. 调试实验
#
# 下面每个有问题的模型都是一个 `LabTinyLM`：它就是一个 TinyLM，只不过因果掩码、注意力函数和损失函数都作为参数传进去（`mask_fn`、`attention_fn`、`loss_fn`），这样每次只换上一个坏掉的部件。`lab_train(model, data, steps=...)` 用模型*自己的*损失 `model(ids, labels=ids)` 来训练它。
#
# 先来一个健康的模型，作为基线，后面的每个症状都拿它来比：

# %%
def lab_model(**parts) -> LabTinyLM:
    """A 2-layer LabTinyLM with the given broken parts, same seed every time."""
    torch.manual_seed(0)
    return LabTinyLM(num_layers=2, **SIZE, **parts)


def greedy_sample(model, prompt: str = PROMPT, n: int = 40) -> str:
    """The model's greedy continuation of prompt."""
    idx = torch.tensor([tokenizer.encode(prompt)])  # (1, T)
    return tokenizer.decode(generate(model.eval(), idx, n, temperature=0.0)[0].tolist())


healthy = lab_model()
healthy_hist = lab_train(healthy, train_data, steps=STEPS["lab"], lr=1e-2)
print(f"healthy: loss {healthy_hist['loss'][0]:.2f} -> {healthy_hist['loss'][-1]:.2f}")
print("healthy sample:", repr(greedy_sample(healthy)))
print("\nthe bug names you choose from:", BUG_NAMES)

# %% lang="zh"
def lab_model(**parts) -> LabTinyLM:
    """一个带有指定故障部件的 2 层 LabTinyLM，每次都用同一个随机种子。"""
    torch.manual_seed(0)
    return LabTinyLM(num_layers=2, **SIZE, **parts)


def greedy_sample(model, prompt: str = PROMPT, n: int = 40) -> str:
    """模型对提示词（prompt）的贪心续写。"""
    idx = torch.tensor([tokenizer.encode(prompt)])  # (1, T)
    return tokenizer.decode(generate(model.eval(), idx, n, temperature=0.0)[0].tolist())


healthy = lab_model()
healthy_hist = lab_train(healthy, train_data, steps=STEPS["lab"], lr=1e-2)
print(f"healthy: loss {healthy_hist['loss'][0]:.2f} -> {healthy_hist['loss'][-1]:.2f}")
print("healthy sample:", repr(greedy_sample(healthy)))
print("\nthe bug names you choose from:", BUG_NAMES)

# %% [markdown]
# Our healthy model is still young: about 3 nats, and its greedy continuation is the corpus's most frequent
# characters (spaces, e, t...) again and again. That is fine: what matters is how the broken ones differ from it.
#
# ### 4.1 The loss is NaN
#
# A teammate wrote the loss by hand:

# %% [markdown] lang="zh" run="zh"
# 我们这个健康模型还很“稚嫩”：上面打印的损失在 5.5 到 5.8 nat 之间（均匀瞎猜的损失 `ln V` 约为 8.1，unigram 损失是 6.16），贪心解码（greedy decoding）续写出来的几乎全是语料里最常见的那几个字符（换行符、“《”之类），一遍遍地重复。这没关系：我们要看的是坏模型和它哪里不一样。
#
# ### 4.1 损失变成 NaN
#
# 一位队友手写了损失函数：

# %%
def naive_cross_entropy(logits, targets):
    """Mean cross-entropy of logits (N, V) against targets (N,), by the textbook formula."""
    probs = logits.exp() / logits.exp().sum(dim=-1, keepdim=True)  # (N, V): softmax
    return -probs.gather(-1, targets[:, None]).log().mean()


# %% lang="zh"
def naive_cross_entropy(logits, targets):
    """按教科书上的公式，计算 logits (N, V) 相对于目标 targets (N,) 的平均交叉熵。"""
    probs = logits.exp() / logits.exp().sum(dim=-1, keepdim=True)  # (N, V): softmax
    return -probs.gather(-1, targets[:, None]).log().mean()

# %% [markdown]
# It works on the healthy model's logits. But logits grow as a model becomes confident (a model trained
# for longer, or sharpened by a temperature below 1, has larger logits). The **probe**: the healthy model's
# logits on one batch, multiplied by 1, 3, 10 and 30, scored by this loss and by PyTorch's `F.cross_entropy`:

# %% [markdown] lang="zh"
# 在健康模型的 logits 上，它算得没问题。可是模型越自信，logits 就越大（训练得更久的模型，或者用小于 1 的温度（temperature）让分布变尖锐之后，logits 都会更大）。**探针**：取健康模型在一个批次上的 logits，分别乘以 1、3、10 和 30，再用这个损失函数和 PyTorch 的 `F.cross_entropy` 各算一遍：

# %%
ids = val_data[:32][None, :]  # (1, T)
with torch.no_grad():
    logits, targets = shift_labels(healthy.eval()(ids)[0], ids)  # (1, T-1, V), (1, T-1)
logits, targets = logits.reshape(-1, V), targets.reshape(-1)  # (T-1, V), (T-1,)
probe = []
for scale in (1, 3, 10, 30):
    naive, torch_loss = naive_cross_entropy(scale * logits, targets).item(), F.cross_entropy(scale * logits, targets).item()
    probe.append((scale, (scale * logits).max().item(), naive, torch_loss))
    print(f"logits x {scale:2d}: largest logit {probe[-1][1]:7.1f}   naive loss {naive:8.3f}   F.cross_entropy {torch_loss:8.3f}")

# %% [markdown]
# From some scale on the naive loss is `nan` while `F.cross_entropy`, on the same numbers, is fine. In a
# training run this shows up as a loss that is fine for hours and then is `nan` for ever after (one NaN
# gradient makes every weight NaN). Work out why: what is `torch.tensor(100.0).exp()` in float32? And
# `inf / inf`?
#
# ### Exercise: name the bug
#
# Make `nan_loss_bug()` return the name, one of `BUG_NAMES` (printed above), of the bug behind this NaN.
# The check calls your function and compares its answer with the bug's name; a wrong name gets a hint
# about why it does not explain the symptom.
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint 1: where the NaN starts</summary>
#
# Run `torch.tensor([100.0, 0.0]).exp()` in a cell. Which value of `probs` can become `inf / inf`?
# </details>
#
# <details><summary>Hint 2</summary>
#
# The learning rate plays no part in the probe: the logits are fixed. The name describes what `exp` does
# to a large number in float32.
# </details>

# %% [markdown] lang="zh"
# 从某个倍数开始，朴素写法算出的损失变成了 `nan`，而 `F.cross_entropy` 在同样的数上一切正常。在真实的训练里，这表现为：损失好好地跑了几个小时，然后突然变成 `nan`，从此再也回不来（只要有一个梯度是 NaN，所有权重都会变成 NaN）。想一想为什么：在 float32 下，`torch.tensor(100.0).exp()` 是多少？`inf / inf` 又是多少？
#
# ### 练习：说出 bug 的名字
#
# 让 `nan_loss_bug()` 返回造成这个 NaN 的 bug 的名字，从 `BUG_NAMES`（上面打印过）里选一个。检查会调用你的函数，把答案和这个 bug 的名字比对；如果名字不对，它会提示你：为什么这个名字解释不了这个症状。
#
# **难度：** ★☆☆ · **用时：** 约 5 分钟
#
# <details><summary>提示 1：NaN 从哪里开始</summary>
#
# 在一个单元格里运行 `torch.tensor([100.0, 0.0]).exp()`。`probs` 里哪个值会变成 `inf / inf`？
# </details>
#
# <details><summary>提示 2</summary>
#
# 学习率（learning rate）在这个探针里不起作用：logits 是固定的。这个名字说的是：在 float32 下，`exp` 对一个大数做了什么。
# </details>

# %% solution="nan_loss_bug"
def nan_loss_bug() -> str:
    """The name of the bug behind the NaN loss: one of BUG_NAMES."""
    ### BEGIN SOLUTION
    return "exp_overflow"
    ### END SOLUTION


# %% lang="zh"
def nan_loss_bug() -> str:
    """导致损失变成 NaN 的那个 bug 的名字：BUG_NAMES 中的一个。"""
    ### BEGIN SOLUTION
    return "exp_overflow"
    ### END SOLUTION

# %% test="nan_loss_bug_check"
from tinylm_checks import check_nan_loss_bug
check_nan_loss_bug(nan_loss_bug)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_nan_loss_bug(nan_loss_bug, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# The first bug you met, and its evidence, go to the report of notebook 12:

# %% [markdown] lang="zh"
# 你遇到的第一个 bug 和它的证据，会写进笔记本 12 的报告：

# %%
first_nan = next((p for p in probe if not math.isfinite(p[2])), None)
evidence = (f"naive_cross_entropy gave {first_nan[2]} on logits scaled x{first_nan[0]} (largest logit "
            f"{first_nan[1]:.1f}) where F.cross_entropy gave {first_nan[3]:.3f}" if first_nan else
            "the probe found no NaN in this run")
try:  # only a name that passes its check is recorded
    check_nan_loss_bug(nan_loss_bug, quiet=True)
except CheckFailure:
    print("not recorded: nan_loss_bug() does not pass its check yet (run the check cell above)")
else:
    record_run("11_first_bug", name=nan_loss_bug(), evidence=evidence)
    print(nan_loss_bug(), "-", evidence)

# %% lang="zh"
first_nan = next((p for p in probe if not math.isfinite(p[2])), None)
evidence = (f"naive_cross_entropy gave {first_nan[2]} on logits scaled x{first_nan[0]} (largest logit "
            f"{first_nan[1]:.1f}) where F.cross_entropy gave {first_nan[3]:.3f}" if first_nan else
            "the probe found no NaN in this run")
try:  # 只有通过了检查的名字才会被记下来
    check_nan_loss_bug(nan_loss_bug, quiet=True)
except CheckFailure:
    print("not recorded: nan_loss_bug() does not pass its check yet (run the check cell above)")
else:
    record_run("11_first_bug", name=nan_loss_bug(), evidence=evidence)
    print(nan_loss_bug(), "-", evidence)

# %% [markdown]
# ### Exercise: `stable_cross_entropy(logits, targets)`
#
# Write the loss so that it is finite for logits of any size: `logits (N, V)` float, `targets (N,)` long,
# returns the mean over the `N` rows of `-log softmax(logits[n])[targets[n]]`, a scalar tensor of the
# logits' dtype. The key identity (the *log-sum-exp trick*): for any constant `m`,
#
# $$\log \sum_j e^{z_j} = m + \log \sum_j e^{z_j - m},$$
#
# and with `m = max_j z_j` every exponent is `<= 0`, so no `exp` overflows, and one of them is `exp(0) = 1`,
# so the sum is never 0.
#
# The check compares with `F.cross_entropy` on logits around 0, around +1000, around -1000, spread far
# apart, and in rows at levels far apart (row `n` around `2000 n`), in float64 and float32 (where `exp` overflows above 88), and compares the gradient for huge
# logits with `(softmax - one_hot) / N`. (Calling `F.cross_entropy` or `torch.logsumexp` passes too: it is
# what they do inside. Write it once by hand.)
#
# **Difficulty:** ★★☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# `loss_n = logsumexp(z_n) - z_n[target_n]`: no softmax, no division, and the log of a sum that is at least 1.
# The logsumexp comes from the identity above, with `m` the row's largest logit.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# Everything is row by row, over the last dimension (`dim=-1`):
#
# - `m`: the row maxima (`.max` returns a pair; the maxima are its `.values`), with `keepdim=True`, so that
#   they are `(N, 1)` and broadcast against the `(N, V)` logits;
# - the logsumexp `(N,)`: subtract `m`, `.exp()`, sum over the row, `.log()`, then add `m` back, squeezed to
#   `(N,)`;
# - each row's target logit: `.gather` along the last dimension with the targets as a column `(N, 1)`, then
#   squeezed to `(N,)`;
# - the loss: the mean of the difference.
# </details>
#
# <details><summary>Hint 3: the answer</summary>
#
# ```python
# m = logits.max(dim=-1, keepdim=True).values  # (N, 1)
# log_z = m.squeeze(-1) + (logits - m).exp().sum(dim=-1).log()  # (N,)
# ```
# then subtract `logits.gather(-1, targets[:, None]).squeeze(-1)` and take the mean. (The reference also
# writes `.detach()` after `.values`: the result does not depend on `m`, so no gradient needs to flow
# through it; the gradient is the same either way, up to rounding.)
# </details>

# %% [markdown] lang="zh"
# ### 练习：`stable_cross_entropy(logits, targets)`
#
# 写一个损失函数，让它对任意大小的 logits 都得到有限值：输入 `logits (N, V)`（浮点数）和 `targets (N,)`（long），返回 `-log softmax(logits[n])[targets[n]]` 在 `N` 行上的平均值，结果是一个标量张量（tensor），dtype 和 logits 相同。关键在下面这个恒等式（*log-sum-exp 技巧*）：对任意常数 `m`，
#
# $$\log \sum_j e^{z_j} = m + \log \sum_j e^{z_j - m},$$
#
# 取 `m = max_j z_j`，每个指数就都 `<= 0`，所以没有哪个 `exp` 会溢出；而且其中总有一项是 `exp(0) = 1`，所以这个和永远不会是 0。
#
# 检查会拿你的结果和 `F.cross_entropy` 对比，用到的 logits 有：在 0 附近的、在 +1000 附近的、在 -1000 附近的、彼此相差很远的，还有各行处在相差很远的不同水平上的（第 `n` 行在 `2000 n` 附近）；分别在 float64 和 float32 下测（float32 下 `exp` 的参数超过 88 就会溢出）；还会在极大的 logits 上，把梯度和 `(softmax - one_hot) / N` 对比。（直接调用 `F.cross_entropy` 或 `torch.logsumexp` 也能通过：它们内部做的就是这件事。但请你亲手写一遍。）
#
# **难度：** ★★☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# `loss_n = logsumexp(z_n) - z_n[target_n]`：没有 softmax，没有除法，取对数的那个和至少是 1。logsumexp 就用上面的恒等式来算，`m` 取这一行最大的 logit。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 所有操作都按行做，也就是沿最后一维（`dim=-1`）：
#
# - `m`：每行的最大值（`.max` 返回一对结果，最大值在它的 `.values` 里），加上 `keepdim=True`，这样它的形状（shape）是 `(N, 1)`，可以和 `(N, V)` 的 logits 广播（broadcasting）；
# - logsumexp `(N,)`：减去 `m`，`.exp()`，按行求和，`.log()`，再把 `m` 加回来，压缩成 `(N,)`；
# - 每一行目标位置的 logit：沿最后一维用 `.gather` 取出，targets 要写成一列 `(N, 1)`，取完再压缩成 `(N,)`；
# - 损失：两者之差的平均值。
# </details>
#
# <details><summary>提示 3：答案</summary>
#
# ```python
# m = logits.max(dim=-1, keepdim=True).values  # (N, 1)
# log_z = m.squeeze(-1) + (logits - m).exp().sum(dim=-1).log()  # (N,)
# ```
# 然后减去 `logits.gather(-1, targets[:, None]).squeeze(-1)`，再取平均。（参考答案还在 `.values` 后面加了 `.detach()`：结果并不依赖 `m`，所以不需要让梯度（gradient）流过它；加不加，梯度都一样，最多差一点舍入误差。）
# </details>

# %% solution="stable_cross_entropy"
def stable_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of logits (N, V) against targets (N,), finite for logits of any size."""
    ### BEGIN SOLUTION
    m = logits.max(dim=-1, keepdim=True).values.detach()  # (N, 1)
    log_z = m.squeeze(-1) + (logits - m).exp().sum(dim=-1).log()  # (N,)
    target_logit = logits.gather(-1, targets[:, None]).squeeze(-1)  # (N,)
    return (log_z - target_logit).mean()
    ### END SOLUTION


# %% lang="zh"
def stable_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """logits (N, V) 相对于目标 targets (N,) 的平均交叉熵，logits 多大都能得到有限值。"""
    ### BEGIN SOLUTION
    m = logits.max(dim=-1, keepdim=True).values.detach()  # (N, 1)
    log_z = m.squeeze(-1) + (logits - m).exp().sum(dim=-1).log()  # (N,)
    target_logit = logits.gather(-1, targets[:, None]).squeeze(-1)  # (N,)
    return (log_z - target_logit).mean()
    ### END SOLUTION

# %% test="stable_cross_entropy_check"
from tinylm_checks import check_stable_cross_entropy
check_stable_cross_entropy(stable_cross_entropy)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_stable_cross_entropy(stable_cross_entropy, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# The probe again, with your loss:

# %% [markdown] lang="zh"
# 用你的损失函数再跑一遍探针：

# %%
for scale in (1, 3, 10, 30):
    print(f"logits x {scale:2d}: your loss {stable_cross_entropy(scale * logits, targets).item():8.3f}   "
          f"F.cross_entropy {F.cross_entropy(scale * logits, targets).item():8.3f}")

# %% [markdown]
# ### 4.2 Every attention row is uniform
#
# The next model trains: after a short run its loss is close to the healthy model's (both are printed below),
# so its loss does not give the bug away. Its attention does. Layer 0, head 0:

# %% [markdown] lang="zh"
# ### 4.2 每一行注意力都是均匀的
#
# 下一个模型能训练：短训练之后，它的损失和健康模型的很接近（两个数都打印在下面），所以光看损失发现不了这个 bug，但它的注意力会把 bug 暴露出来。下面是第 0 层、第 0 个头：

# %%
def broken_attention(q, k, v, mask=None):
    """Scaled dot-product attention: q, k (..., T, d_k), v (..., T, d_v) -> (out, weights)."""
    d_k = q.size(-1)
    scores = (q * k).sum(dim=-1, keepdim=True) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


uniform = lab_model(attention_fn=broken_attention)
uniform_hist = lab_train(uniform, train_data, steps=STEPS["lab_short"], lr=1e-2)
sample_ids = val_data[:12][None, :]  # (1, 12)
with torch.no_grad():
    uniform.eval()(sample_ids)
weights = uniform.get_attention_weights()[0][0, 0]  # (T, T) of layer 0, head 0
plot_attention(weights, [repr(c)[1:-1] for c in tokenizer.decode(sample_ids[0].tolist())],
               title="broken model: layer 0, head 0")
plt.show()


def entropy_ratio(w: torch.Tensor) -> float:
    """Mean over rows t >= 1 of entropy(row t) / log(t + 1): 1.0 means every row is uniform."""
    ent = -(w * w.clamp_min(1e-30).log()).sum(-1)  # (..., T)
    t = torch.arange(1, w.size(-1))
    return (ent[..., 1:] / torch.log(t + 1.0)).mean().item()


print(f"entropy / largest possible entropy, every layer and head: "
      f"{[round(entropy_ratio(w), 4) for w in uniform.get_attention_weights()]}")
print(f"loss after {STEPS['lab_short']} steps: broken {uniform_hist['loss'][-1]:.3f}, "
      f"healthy {healthy_hist['loss'][STEPS['lab_short'] - 1]:.3f}")

# %% lang="zh"
def broken_attention(q, k, v, mask=None):
    """缩放点积注意力：q, k (..., T, d_k)，v (..., T, d_v) -> (out, weights)。"""
    d_k = q.size(-1)
    scores = (q * k).sum(dim=-1, keepdim=True) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


uniform = lab_model(attention_fn=broken_attention)
uniform_hist = lab_train(uniform, train_data, steps=STEPS["lab_short"], lr=1e-2)
sample_ids = val_data[:12][None, :]  # (1, 12)
with torch.no_grad():
    uniform.eval()(sample_ids)
weights = uniform.get_attention_weights()[0][0, 0]  # 第 0 层第 0 个头的 (T, T)
plot_attention(weights, [repr(c)[1:-1] for c in tokenizer.decode(sample_ids[0].tolist())],
               title="broken model: layer 0, head 0")
plt.show()


def entropy_ratio(w: torch.Tensor) -> float:
    """对 t >= 1 的各行求 entropy(第 t 行) / log(t + 1) 的平均：1.0 表示每一行都是均匀分布。"""
    ent = -(w * w.clamp_min(1e-30).log()).sum(-1)  # (..., T)
    t = torch.arange(1, w.size(-1))
    return (ent[..., 1:] / torch.log(t + 1.0)).mean().item()


print(f"entropy / largest possible entropy, every layer and head: "
      f"{[round(entropy_ratio(w), 4) for w in uniform.get_attention_weights()]}")
print(f"loss after {STEPS['lab_short']} steps: broken {uniform_hist['loss'][-1]:.3f}, "
      f"healthy {healthy_hist['loss'][STEPS['lab_short'] - 1]:.3f}")

# %% [markdown]
# Row `t` spreads its weight evenly, `1/(t+1)`, over every key it may see, in every layer and head: the
# entropy is the largest possible. Whatever the words, each token takes the plain average of the past.
# Find out why: print the shape of `scores` for `q, k` of shape `(1, 1, 4, 2)`. Does the weight of a key
# depend on that key?
#
# ### Exercise: name the bug, and fix it
#
# `uniform_attention_bug()` returns the bug's name (one of `BUG_NAMES`). `fixed_attention(q, k, v, mask=None)`
# takes `q, k (..., T, d_k)`, `v (..., T, d_v)` and an optional bool mask (True = may attend, broadcastable
# to `(..., T, T)`) and returns `(out (..., T, d_v), weights (..., T, T))`. The check first calls it twice
# with different keys (the weights must move), then compares with the reference, with and without a mask,
# and checks that gradients reach `q`, `k` and `v`.
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# `(q * k).sum(-1, keepdim=True)` is `(..., T, 1)`: one number per query. Attention needs one number per
# (query, key) pair: `(..., T, T)`. With one score per row, every key the row may see gets the same score,
# hence the same weight: the weight of a key does not depend on that key.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# The name: which of `BUG_NAMES` says how the scores are computed? The fix: only the line of
# `broken_attention` that computes `scores` is wrong; the mask, the softmax over the last dimension and
# `weights @ v` stay. The scores of every (query, key) pair are the matrix product of `q` with `k`
# transposed in its last two dimensions, as in notebook 01's `attention_scores`, still divided by
# `math.sqrt(d_k)` with `d_k = q.size(-1)`.
# </details>
#
# <details><summary>Hint 3: the answer, for fixed_attention</summary>
#
# `scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., T, T)`, with `d_k = q.size(-1)` as in
# `broken_attention`; its other lines stay as they are.
# </details>

# %% [markdown] lang="zh"
# 第 `t` 行把权重平均分给它能看到的每一个键（key），每个都是 `1/(t+1)`，每一层、每个头都是这样：熵达到了最大值。不管输入的是什么字，每个 token 拿到的都只是过去所有 token 的简单平均。找一找原因：对形状为 `(1, 1, 4, 2)` 的 `q, k`，打印 `scores` 的形状。一个键的权重，和这个键本身有关系吗？
#
# ### 练习：说出 bug 的名字，并修好它
#
# `uniform_attention_bug()` 返回 bug 的名字（从 `BUG_NAMES` 里选）。`fixed_attention(q, k, v, mask=None)` 接收 `q, k (..., T, d_k)`、`v (..., T, d_v)` 和一个可选的 bool 掩码（True 表示可以关注，要能广播到 `(..., T, T)`），返回 `(out (..., T, d_v), weights (..., T, T))`。检查会先用两组不同的键调用它两次（权重必须跟着变），然后和参考实现对比（带掩码和不带掩码各比一次），最后确认梯度能传到 `q`、`k` 和 `v`。
#
# **难度：** ★☆☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# `(q * k).sum(-1, keepdim=True)` 的形状（shape）是 `(..., T, 1)`：每个查询（query）只有一个数。注意力（attention）需要的是每一对查询和键（key）各有一个数：`(..., T, T)`。每行只有一个分数，这一行能看到的每个键就拿到同样的分数，因而拿到同样的权重：一个键的权重和这个键本身无关。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 名字：`BUG_NAMES` 里哪一个说的是分数的算法？修复：`broken_attention` 里只有计算 `scores` 的那一行是错的；掩码（mask）、沿最后一维的 softmax 和 `weights @ v` 都保持不变。每一对查询（query）和键（key）的分数，就是 `q` 和最后两维转置后的 `k` 做矩阵乘法（matrix multiplication），和笔记本 01 的 `attention_scores` 一样，仍然要除以 `math.sqrt(d_k)`，其中 `d_k = q.size(-1)`。
# </details>
#
# <details><summary>提示 3：答案（fixed_attention）</summary>
#
# `scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., T, T)`，其中 `d_k = q.size(-1)`，和 `broken_attention` 里一样；其他几行保持原样。
# </details>

# %% solution="uniform_attention_bug"
def uniform_attention_bug() -> str:
    """The name of the bug behind the uniform attention: one of BUG_NAMES."""
    ### BEGIN SOLUTION
    return "elementwise_scores"
    ### END SOLUTION


# %% lang="zh"
def uniform_attention_bug() -> str:
    """导致注意力变得均匀的那个 bug 的名字：BUG_NAMES 中的一个。"""
    ### BEGIN SOLUTION
    return "elementwise_scores"
    ### END SOLUTION

# %% test="uniform_attention_bug_check"
from tinylm_checks import check_uniform_attention_bug
check_uniform_attention_bug(uniform_attention_bug)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_uniform_attention_bug(uniform_attention_bug, seed=1)
### END HIDDEN TESTS

# %% solution="fixed_attention"
def fixed_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None):
    """Scaled dot-product attention: q, k (..., T, d_k), v (..., T, d_v) -> (out (..., T, d_v), weights (..., T, T))."""
    ### BEGIN SOLUTION
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (..., T, T)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (..., T, T)
    return weights @ v, weights
    ### END SOLUTION


# %% lang="zh"
def fixed_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None):
    """缩放点积注意力：q, k (..., T, d_k)，v (..., T, d_v) -> (out (..., T, d_v), weights (..., T, T))。"""
    ### BEGIN SOLUTION
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (..., T, T)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (..., T, T)
    return weights @ v, weights
    ### END SOLUTION

# %% test="fixed_attention_check"
from tinylm_checks import check_fixed_attention
check_fixed_attention(fixed_attention)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_fixed_attention(fixed_attention, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# The same short run with your attention: the rows are no longer uniform.

# %% [markdown] lang="zh"
# 用你的注意力函数再做同样的短训练：每一行不再是均匀的了。

# %%
fixed = lab_model(attention_fn=fixed_attention)
fixed_hist = lab_train(fixed, train_data, steps=STEPS["lab_short"], lr=1e-2)
with torch.no_grad():
    fixed.eval()(sample_ids)
print(f"entropy / largest possible entropy: {[round(entropy_ratio(w), 4) for w in fixed.get_attention_weights()]}")
print(f"loss after {STEPS['lab_short']} steps: {fixed_hist['loss'][-1]:.3f}")

# %% [markdown]
# ### 4.3 Suspiciously low loss, samples no better
#
# Train the same model with another mask and compare the two loss curves:

# %% [markdown] lang="zh"
# ### 4.3 损失低得可疑，样本却没有变好
#
# 换一个掩码训练同一个模型，比较两条损失曲线：

# %%
def broken_causal_mask(T):
    """The causal mask: (T, T) bool, True = may attend."""
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


leaky = lab_model(mask_fn=broken_causal_mask)
leaky_hist = lab_train(leaky, train_data, steps=STEPS["lab"], lr=1e-2)
plot_loss_curves({"healthy": healthy_hist["loss"], "broken": leaky_hist["loss"]},
                 title="the same model, two masks", hline=(math.log(V), "ln V: guessing"))
plt.show()
print(f"loss after {STEPS['lab']} steps: healthy {healthy_hist['loss'][-1]:.3f}, broken {leaky_hist['loss'][-1]:.3f}")
print("healthy sample:", repr(greedy_sample(healthy)))
print("broken sample: ", repr(greedy_sample(leaky)))

# %% lang="zh"
def broken_causal_mask(T):
    """因果掩码：(T, T) 的 bool 张量，True 表示可以关注。"""
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


leaky = lab_model(mask_fn=broken_causal_mask)
leaky_hist = lab_train(leaky, train_data, steps=STEPS["lab"], lr=1e-2)
plot_loss_curves({"healthy": healthy_hist["loss"], "broken": leaky_hist["loss"]},
                 title="the same model, two masks", hline=(math.log(V), "ln V: guessing"))
plt.show()
print(f"loss after {STEPS['lab']} steps: healthy {healthy_hist['loss'][-1]:.3f}, broken {leaky_hist['loss'][-1]:.3f}")
print("healthy sample:", repr(greedy_sample(healthy)))
print("broken sample: ", repr(greedy_sample(leaky)))

# %% [markdown]
# The two curves are nearly the same for the first ~90 steps; then the broken model's loss falls far
# below the healthy one's, and yet its samples are no better. A loss that good on English
# text after a few hundred steps is too good to be true. The **probe**: change only the *last* token of an
# input and see which positions' logits move. In a causal model the last token can only affect the last
# position.

# %% [markdown] lang="zh" run="zh"
# 前 70 步左右，两条曲线几乎重合；之后坏模型的损失远远低于健康模型（200 步时不到 1，健康模型还在 5.5 以上），可它生成的样本一点也没变好，只是不停地重复“风”字。在唐诗上只训练几百步，损失就低成这样，好得令人起疑。**探针**：只改输入的*最后一个* token，看哪些位置的 logits 会跟着变。在因果模型里，最后一个 token 只能影响最后一个位置。

# %%
probe_ids = val_data[:8][None, :].clone()  # (1, 8)
changed = probe_ids.clone()
changed[0, -1] = (changed[0, -1] + 1) % V  # another last token
with torch.no_grad():
    moved = (leaky.eval()(changed)[0] - leaky(probe_ids)[0]).abs().amax(-1)[0]  # (T,): largest change per position
print("largest logit change at each position:", [f"{m:.2f}" for m in moved.tolist()])

# %% lang="zh"
probe_ids = val_data[:8][None, :].clone()  # (1, 8)
changed = probe_ids.clone()
changed[0, -1] = (changed[0, -1] + 1) % V  # 换一个最后的 token
with torch.no_grad():
    moved = (leaky.eval()(changed)[0] - leaky(probe_ids)[0]).abs().amax(-1)[0]  # (T,)：每个位置上最大的变化
print("largest logit change at each position:", [f"{m:.2f}" for m in moved.tolist()])

# %% [markdown]
# Position 6 changed when token 7 changed (and position 5 a little: through two layers, 5 sees 6, which
# sees 7): the model reads the token it is supposed to predict, and learns to copy it. At generation time
# there is no next token to read, so its low loss buys no better samples. Print `broken_causal_mask(4)`.
#
# ### Exercise: name the bug, and fix it
#
# `future_mask_bug()` returns the bug's name; `fixed_causal_mask(T)` returns the `(T, T)` bool causal mask
# (True = may attend: token `t` sees `0..t`). The check builds a small TinyLM that uses your mask, changes
# the tokens after position 3 and requires the logits at 0..3 not to move; then compares your mask with the
# reference for `T` = 7, 4 and 1.
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint 1: the idea</summary>
#
# Token `t` may see tokens `0..t`: the diagonal and below it, nothing above. Print
# `torch.ones(4, 4).tril(diagonal=d)` for `d = -1, 0, 1`, and compare with `broken_causal_mask(4)`: which
# one lets a token see the next one?
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# `broken_causal_mask` is one line, and only its `diagonal=` is wrong: `diagonal=1` also keeps the first
# diagonal above the main one (query `t` sees key `t + 1`), while `diagonal=0`, the default, keeps the main
# diagonal and everything below it. Keep the bool `dtype`.
# </details>
#
# <details><summary>Hint 3: the answer, for fixed_causal_mask</summary>
#
# `torch.ones(T, T, dtype=torch.bool).tril()`
# </details>

# %% [markdown] lang="zh"
# token 7 一变，位置 6 就变了（位置 5 也变了一点：经过两层，5 看得到 6，6 又看得到 7）：模型读到了它本该去预测的那个 token，于是学会了直接照抄。到了生成的时候，并没有下一个 token 可读，所以损失再低也换不来更好的样本。打印一下 `broken_causal_mask(4)` 看看。
#
# ### 练习：说出 bug 的名字，并修好它
#
# `future_mask_bug()` 返回 bug 的名字；`fixed_causal_mask(T)` 返回形状为 `(T, T)` 的 bool 因果掩码（True 表示可以关注：token `t` 能看到 `0..t`）。检查会搭一个使用你的掩码的小 TinyLM，改掉位置 3 之后的 token，要求位置 0..3 上的 logits 保持不变；然后在 `T` = 7、4 和 1 时，把你的掩码和参考实现对比。
#
# **难度：** ★☆☆ · **用时：** 约 5 分钟
#
# <details><summary>提示 1：思路</summary>
#
# token `t` 可以看到 token `0..t`：也就是对角线和对角线以下，上面的一概不能看。对 `d = -1, 0, 1` 分别打印 `torch.ones(4, 4).tril(diagonal=d)`，再和 `broken_causal_mask(4)` 对比：哪一个让 token 看到了下一个 token？
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# `broken_causal_mask` 只有一行，错的只是它的 `diagonal=`：`diagonal=1` 会把主对角线上方的第一条对角线也保留下来（查询（query）`t` 能看到键（key）`t + 1`），而默认的 `diagonal=0` 只保留主对角线和它下面的全部元素。bool 类型的 `dtype` 保持不变。
# </details>
#
# <details><summary>提示 3：答案（fixed_causal_mask）</summary>
#
# `torch.ones(T, T, dtype=torch.bool).tril()`
# </details>

# %% solution="future_mask_bug"
def future_mask_bug() -> str:
    """The name of the bug behind the suspiciously low loss: one of BUG_NAMES."""
    ### BEGIN SOLUTION
    return "mask_sees_future"
    ### END SOLUTION


# %% lang="zh"
def future_mask_bug() -> str:
    """导致损失低得可疑的那个 bug 的名字：BUG_NAMES 中的一个。"""
    ### BEGIN SOLUTION
    return "mask_sees_future"
    ### END SOLUTION

# %% test="future_mask_bug_check"
from tinylm_checks import check_future_mask_bug
check_future_mask_bug(future_mask_bug)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_future_mask_bug(future_mask_bug, seed=1)
### END HIDDEN TESTS

# %% solution="fixed_causal_mask"
def fixed_causal_mask(T: int) -> torch.Tensor:
    """The causal mask: (T, T) bool, True on and below the diagonal."""
    ### BEGIN SOLUTION
    return torch.ones(T, T, dtype=torch.bool).tril()
    ### END SOLUTION


# %% lang="zh"
def fixed_causal_mask(T: int) -> torch.Tensor:
    """因果掩码：(T, T) 的 bool 张量，对角线及其下方为 True。"""
    ### BEGIN SOLUTION
    return torch.ones(T, T, dtype=torch.bool).tril()
    ### END SOLUTION

# %% test="fixed_causal_mask_check"
from tinylm_checks import check_fixed_causal_mask
check_fixed_causal_mask(fixed_causal_mask)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_fixed_causal_mask(fixed_causal_mask, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# The probe on a model with your mask (untrained: the probe needs no training):

# %% [markdown] lang="zh"
# 在用了你的掩码的模型上跑探针（模型没训练过：这个探针不需要训练）：

# %%
honest = lab_model(mask_fn=fixed_causal_mask).eval()
with torch.no_grad():
    moved = (honest(changed)[0] - honest(probe_ids)[0]).abs().amax(-1)[0]  # (T,)
print("largest logit change at each position:", [f"{m:.2f}" for m in moved.tolist()])

# %% [markdown]
# ### 4.4 The loss falls to ~0 at once, and samples repeat one character
#
# The last model's loss:

# %% [markdown] lang="zh" run="zh"
# ### 4.4 损失一下子降得极低，样本不停重复同一个字
#
# 最后一个模型的损失函数：

# %%
def unshifted_lm_loss(logits, labels):
    """Next-token loss of logits (B, T, V) against labels (B, T) aligned with the inputs."""
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)


copier = lab_model(loss_fn=unshifted_lm_loss)
copier_hist = lab_train(copier, train_data, steps=STEPS["lab_copy"], lr=1e-2)
plot_loss_curves({"healthy": healthy_hist["loss"][:STEPS["lab_copy"]], "broken": copier_hist["loss"]},
                 title="the same model, two losses")
plt.show()
print("broken sample:", repr(greedy_sample(copier, COPY_PROMPT)))
with torch.no_grad():
    top = copier.eval()(probe_ids)[0].argmax(-1)  # (1, T): the most likely token at each position
print(f"positions whose most likely token is the token it is reading: {(top == probe_ids).float().mean():.0%}")

# %% lang="zh"
def unshifted_lm_loss(logits, labels):
    """logits (B, T, V) 相对于与输入对齐的 labels (B, T) 的下一个 token 损失。"""
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)


copier = lab_model(loss_fn=unshifted_lm_loss)
copier_hist = lab_train(copier, train_data, steps=STEPS["lab_copy"], lr=1e-2)
plot_loss_curves({"healthy": healthy_hist["loss"][:STEPS["lab_copy"]], "broken": copier_hist["loss"]},
                 title="the same model, two losses")
plt.show()
print("broken sample:", repr(greedy_sample(copier, COPY_PROMPT)))
with torch.no_grad():
    top = copier.eval()(probe_ids)[0].argmax(-1)  # (1, T)：每个位置上最可能的 token
print(f"positions whose most likely token is the token it is reading: {(top == probe_ids).float().mean():.0%}")

# %% [markdown]
# Near 0 within a few dozen steps, and the sample repeats the last character of the prompt: the model
# "predicts" the token it is reading, which is easy, and useless for generating. Which label is
# `logits[:, t]` scored against, here?
#
# ### Exercise: name the bug, and fix it
#
# `unshifted_labels_bug()` returns the bug's name; `fixed_lm_loss(logits, labels)` takes `logits (B, T, V)`
# and `labels (B, T)` aligned with the inputs (`labels = input_ids`; `-100` = ignore) and returns the mean
# next-token cross-entropy. The check feeds it the logits of a model that copies its input (they must score
# badly), random logits with `-100` labels (compared with the reference), and the logits of a model that
# predicts the next token (they must score near 0). `F.cross_entropy` ignores the targets equal to `-100`
# by default (its `ignore_index=-100`): they count neither in the sum nor in the mean.
#
# **Difficulty:** ★☆☆ · **Time:** about 10 min
#
# <details><summary>Hint 1: the idea</summary>
#
# The prediction made at position `t` is for token `t + 1`: the last position has no target, the first
# token is never a target. `unshifted_lm_loss` scores `logits[:, t]` against `labels[:, t]`, the token the
# model is reading at `t`.
# </details>
#
# <details><summary>Hint 2: where to look</summary>
#
# Shift before you flatten: two slices along dimension 1 (time), the logits without their last position,
# `(B, T-1, V)`, and the labels without their first, `(B, T-1)`. Then `unshifted_lm_loss`'s line does the
# rest: the cross-entropy of the flattened tensors with `ignore_index=-100`.
# </details>
#
# <details><summary>Hint 3: the answer, for fixed_lm_loss</summary>
#
# `logits, targets = logits[:, :-1], labels[:, 1:]  # (B, T-1, V), (B, T-1)`, then the cross-entropy of
# the flattened tensors with `ignore_index=-100`.
# </details>

# %% [markdown] lang="zh" run="zh"
# 40 步之内，损失就从约 7.7 降到约 1.5（同样 40 步，健康模型还在 6.3 左右），而且样本一直在重复提示词的最后一个字：模型“预测”的是它正在读的那个 token，这当然容易，可对生成毫无用处。这里的 `logits[:, t]` 是拿来和哪个标签比的？
#
# ### 练习：说出 bug 的名字，并修好它
#
# `unshifted_labels_bug()` 返回 bug 的名字；`fixed_lm_loss(logits, labels)` 接收 `logits (B, T, V)` 和与输入对齐的 `labels (B, T)`（`labels = input_ids`；`-100` 表示忽略），返回预测下一个 token 的平均交叉熵损失（cross-entropy loss）。检查会喂给它三种 logits：一个照抄输入的模型的 logits（得分必须很差）；随机的 logits，配上含 `-100` 的标签（和参考实现对比）；一个真正预测下一个 token 的模型的 logits（得分必须接近 0）。`F.cross_entropy` 默认会忽略等于 `-100` 的目标（它的 `ignore_index=-100`）：这些目标既不计入总和，也不计入平均。
#
# **难度：** ★☆☆ · **用时：** 约 10 分钟
#
# <details><summary>提示 1：思路</summary>
#
# 在位置 `t` 上做出的预测，是针对 token `t + 1` 的：最后一个位置没有目标，第一个 token 永远不会是目标。`unshifted_lm_loss` 却拿 `logits[:, t]` 去和 `labels[:, t]` 比，也就是模型在 `t` 处正在读的那个 token。
# </details>
#
# <details><summary>提示 2：看哪里</summary>
#
# 先错位，再展平：沿第 1 维（时间）切两刀，logits 去掉最后一个位置，得到 `(B, T-1, V)`；标签去掉第一个位置，得到 `(B, T-1)`。剩下的交给 `unshifted_lm_loss` 里那一行：对展平后的张量（tensor）计算交叉熵损失（cross-entropy loss），带上 `ignore_index=-100`。
# </details>
#
# <details><summary>提示 3：答案（fixed_lm_loss）</summary>
#
# `logits, targets = logits[:, :-1], labels[:, 1:]  # (B, T-1, V), (B, T-1)`，然后对展平后的张量（tensor）计算交叉熵损失（cross-entropy loss），带上 `ignore_index=-100`。
# </details>

# %% solution="unshifted_labels_bug"
def unshifted_labels_bug() -> str:
    """The name of the bug behind the copying model: one of BUG_NAMES."""
    ### BEGIN SOLUTION
    return "labels_not_shifted"
    ### END SOLUTION


# %% lang="zh"
def unshifted_labels_bug() -> str:
    """导致模型照抄输入的那个 bug 的名字：BUG_NAMES 中的一个。"""
    ### BEGIN SOLUTION
    return "labels_not_shifted"
    ### END SOLUTION

# %% test="unshifted_labels_bug_check"
from tinylm_checks import check_unshifted_labels_bug
check_unshifted_labels_bug(unshifted_labels_bug)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_unshifted_labels_bug(unshifted_labels_bug, seed=1)
### END HIDDEN TESTS

# %% solution="fixed_lm_loss"
def fixed_lm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Next-token loss of logits (B, T, V) against labels (B, T) aligned with the inputs; -100 is ignored."""
    ### BEGIN SOLUTION
    logits, targets = logits[:, :-1], labels[:, 1:]  # (B, T-1, V), (B, T-1)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=-100)
    ### END SOLUTION


# %% lang="zh"
def fixed_lm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """logits (B, T, V) 相对于与输入对齐的 labels (B, T) 的下一个 token 损失；-100 不计入。"""
    ### BEGIN SOLUTION
    logits, targets = logits[:, :-1], labels[:, 1:]  # (B, T-1, V), (B, T-1)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=-100)
    ### END SOLUTION

# %% test="fixed_lm_loss_check"
from tinylm_checks import check_fixed_lm_loss
check_fixed_lm_loss(fixed_lm_loss)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_fixed_lm_loss(fixed_lm_loss, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# The same short run with your loss: no more collapse to 0.

# %% [markdown] lang="zh" run="zh"
# 用你的损失函数再做同样的短训练：损失不会再一下子降得那么低了。

# %%
shifted = lab_model(loss_fn=fixed_lm_loss)
shifted_hist = lab_train(shifted, train_data, steps=STEPS["lab_copy"], lr=1e-2)
print(f"loss after {STEPS['lab_copy']} steps: your loss {shifted_hist['loss'][-1]:.3f}, "
      f"the broken one {copier_hist['loss'][-1]:.3f}")

# %% [markdown]
# ## 5. The claims lab: the lesson's claims, measured
#
# The lesson this course grew from states claims about a Transformer's parts without running them: remove a part
# and see what breaks; make the FFN about `4D` wide; compare SwiGLU with the GELU FFN only at equal parameters
# ("otherwise the gain may only be a wider hidden layer"); RoPE replaces learned positions. Here each one is an
# experiment you run. Every run trains the same small TinyLM (`CLAIMS_SIZE`: 2 Pre-LN layers, `D = 32`, 2 heads,
# `d_ff = 4D`, 32 positions) for 400 steps, three seeds, and the variants of an experiment differ **only in the part
# named**: same init, same learning rate, same batches. Each is scored on the same 64 held-out windows (the
# held-out loss: lower is better). A variant that two experiments share (the whole model is also "learned
# positions", "`d_ff = 4D`" and "GELU") trains once.
#
# Two changes from sections 1–3, so that the differences are larger than the spread between seeds: 400 steps
# instead of 150–200, and the init std of the width, `small_init_std(32)` = 0.11 (`tinylm_solutions.model`:
# $\sqrt{2 / (5D)}$, the "small init" of Nguyen & Salazar, 2019), instead of GPT-2's 0.02, which leaves a model this
# narrow near the unigram loss for its first hundreds of steps.
#
# **Predict first.** Before each run, write your prediction in the cell above it: the variants' names, from the
# lowest held-out loss to the highest. After the run, `compare_prediction` shows the table beside your order, says
# which pairs the run *separates* (the same order in every seed) and which it cannot call, and whether your order has
# the separated pairs right. A prediction earns no points; where it is wrong is where your picture of the model
# was wrong, which is worth more than the table.
#
# Each experiment trains every variant three times, 400 steps each.

# %% [markdown] lang="zh"
# ## 5. 论断实验：把原讲义的说法测一测
#
# 本课程所依据的那份讲义，对 Transformer 的各个部件下了一些论断，却没有实际跑过：去掉一个部件，看看什么会坏；前馈网络的宽度取 `4D` 左右；SwiGLU 和 GELU 版的前馈网络只能在参数量相等时比较（“否则提升可能只是因为隐藏层更宽了”）；用 RoPE 取代可学习的位置嵌入。在这里，每一条都变成一个由你亲手跑的实验。每次运行都训练同一个小 TinyLM（`CLAIMS_SIZE`：2 层 Pre-LN，`D = 32`，2 个头，`d_ff = 4D`，32 个位置），训练 400 步，跑三个种子；同一个实验里的各个变体**只在所说的那个部件上不同**：初始化相同、学习率相同、批次相同。每个变体都在同样的 64 个留出窗口上打分（留出数据上的损失：越低越好）。两个实验共用的变体只训练一次（完整模型同时也就是“可学习位置”、“`d_ff = 4D`”和“GELU”这几个变体）。
#
# 和第 1–3 节相比有两处改动，目的是让差异大于种子之间的波动：训练 400 步，而不是 150–200 步；初始化的标准差按宽度来取：`small_init_std(32)` = 0.11（在 `tinylm_solutions.model` 里，等于 $\sqrt{2 / (5D)}$，即 Nguyen 和 Salazar（2019）的“小初始化”），而不用 GPT-2 的 0.02，因为这么窄的模型用 0.02 初始化，头几百步的损失都停在 unigram 损失附近。
#
# **先预测。** 每次运行之前，在它上面的单元格里写下你的预测：把各个变体的名字按留出损失从低到高排好。跑完之后，`compare_prediction` 会把结果表格和你的排序并排列出来，告诉你这次运行*分得开*哪些变体对（在每个种子上顺序都一样），哪些分不出高下，以及你的排序在那些分得开的对上是否排对了。预测不计分；你猜错的地方，正是你对模型的理解出偏差的地方，这比表格本身更有价值。
#
# 每个实验把每个变体训练三次，每次 400 步。

# %%
from tinylm_checks import compare_prediction, plot_claims, predict
from tinylm_solutions.claims import CLAIMS_SIZE, CLAIMS_STEPS, EXPERIMENTS, claims_lab

CLAIMS_STEPS_RUN = 3 if QUICK else CLAIMS_STEPS
runs_cache = {}  # a variant that two experiments share trains once
print("every variant:", CLAIMS_SIZE, f"d_ff = 4 * d_model, {CLAIMS_STEPS_RUN} steps, seeds 0, 1, 2")
for name, variants in EXPERIMENTS.items():
    print(f"{name}: {list(variants)}")  # the names a prediction lists (some hold commas)

# %% lang="zh"
from tinylm_checks import compare_prediction, plot_claims, predict
from tinylm_solutions.claims import CLAIMS_SIZE, CLAIMS_STEPS, EXPERIMENTS, claims_lab

CLAIMS_STEPS_RUN = 3 if QUICK else CLAIMS_STEPS
runs_cache = {}  # 两个实验共用的变体只训练一次
print("every variant:", CLAIMS_SIZE, f"d_ff = 4 * d_model, {CLAIMS_STEPS_RUN} steps, seeds 0, 1, 2")
for name, variants in EXPERIMENTS.items():
    print(f"{name}: {list(variants)}")  # 一次预测列出的名字（有些名字里带逗号）

# %% [markdown]
# ### 5.1 Positions: learned, sinusoidal, RoPE, none
#
# - **learned** (GPT-2, notebook 08): a trained vector per position, added to the token embedding;
# - **sinusoidal** (notebook 04): the fixed table, added to token embeddings scaled by `sqrt(D)`;
# - **RoPE** (the bonus of notebook 04, `apply_rope`): no vector is added; inside every attention layer the
#   queries and keys are rotated by an angle proportional to their position, so a score `q·k` depends on the
#   two positions only through how far apart they are (`TinyLM(..., positions="rope")`, which LLaMA-style models
#   use);
# - **no positions**: only the causal mask tells the model about order (section 3).
#
# Your prediction first: order the four names from the lowest held-out loss to the highest.

# %% [markdown] lang="zh"
# ### 5.1 位置：可学习、正弦、RoPE、不用位置
#
# - **learned**（可学习位置嵌入，GPT-2，笔记本 08）：每个位置一个训练出来的向量，加到 token 嵌入（embedding）上；
# - **sinusoidal**（正弦位置编码，笔记本 04）：一张固定的表，加到乘过 `sqrt(D)` 的 token 嵌入上；
# - **RoPE**（旋转位置编码，笔记本 04 的附加练习，`apply_rope`）：不加任何向量；在每一层注意力内部，查询（query）和键（key）按与位置成正比的角度旋转，这样分数 `q·k` 里跟位置有关的部分，只取决于两个 token 相隔多远（`TinyLM(..., positions="rope")`，LLaMA 一类的模型用的就是它）；
# - **no positions**（不用位置）：只有因果掩码告诉模型顺序（第 3 节）。
#
# 先写你的预测：把这四个名字按留出损失从低到高排序。

# %%
my_positions = predict("positions", [])  # e.g. predict("positions", ["learned", "RoPE", ...]), all four, once each
my_positions

# %% lang="zh"
my_positions = predict("positions", [])  # 例如 predict("positions", ["learned", "RoPE", ...])，四个都要列出，每个一次
my_positions

# %%
claims_positions = claims_lab("positions", train_data, val_data, V, steps=CLAIMS_STEPS_RUN, cache=runs_cache)
compare_prediction(my_positions, claims_positions)

# %%
plot_claims(claims_positions, unigram)
plt.show()

# %% [markdown]
# **What the runs show.** RoPE ends lowest, in every seed, by about 0.17 below learned positions: with queries and
# keys rotated by position, the score of a query and a key depends on their two positions only through the offset
# between them (how far apart the tokens are), not on where they sit, and for
# predicting a character the few characters just before it are what matter, wherever they are. Learned and
# sinusoidal positions end within a few hundredths of each other on average. No positions ends highest on average.
# Section 3 found the model without positions no worse than the one with learned positions, after 150 steps at
# GPT-2's init; here, after 400 steps at the width's init, it is worse than every model with positions. Which of the
# two changes makes the difference, this lab does not test: a next experiment for you.
#
# ### 5.2 Remove each part
#
# The whole model against the same model without one part: its attention sub-layers (no token reads another: a
# model of the current character only), its FFNs, its residual connections (section 1), its LayerNorms, or its
# positions. `without(model, part)` (in `tinylm_solutions.ablations`) removes a part from every block; the
# parameter counts in the table show what each removal takes away.

# %% [markdown] lang="zh" run="zh"
# **结果说明了什么。** RoPE 在每个种子上都最低，平均比可学习位置低约 0.15：查询和键按各自的位置旋转之后，一对查询和键的分数里，跟位置有关的只有两个 token 相隔多远，而不是它们各自在哪儿；而预测一个字时，要紧的正是紧挨在它前面的那几个字，不管它们在什么位置。可学习位置和正弦位置平均只差约 0.02。不用位置的模型在每个种子上都最高。第 3 节发现，用 GPT-2 的初始化训练 150 步之后，没有位置的模型在正序文本上反而比可学习位置的好；而这里用按宽度取的初始化训练 400 步之后，它比每个带位置的模型都差。到底是这两处改动中的哪一处造成了差别，这个实验没有测：可以留作你的下一个实验。
#
# ### 5.2 逐个去掉部件
#
# 拿完整模型和去掉某一个部件的同一模型比较：去掉注意力子层（token 之间互相读不到：模型只能根据当前这个字来预测），去掉前馈网络，去掉残差连接（第 1 节），去掉层归一化，或者去掉位置。`without(model, part)`（在 `tinylm_solutions.ablations` 里）会从每个块中去掉一个部件；表格里的参数量显示了每次去掉的是多少参数。

# %%
my_parts = predict("parts", [])  # all six names, lowest held-out loss first
my_parts

# %% lang="zh"
my_parts = predict("parts", [])  # 全部六个名字，留出数据上损失最低的排在最前
my_parts

# %%
claims_parts = claims_lab("parts", train_data, val_data, V, steps=CLAIMS_STEPS_RUN, cache=runs_cache)
compare_prediction(my_parts, claims_parts)

# %%
plot_claims(claims_parts, unigram)
plt.show()

# %% [markdown]
# **What the runs show.** Every part counts: the whole model ends lowest in every seed. Removing the residual
# connections costs most, as in section 1 (the held-out loss stays above 3.0). Removing attention costs next most:
# without it no token reads another, and the model predicts the next character from the current one alone (a bigram
# model). Positions, the FFNs and the LayerNorms each cost about a tenth of a nat at this length, and the differences
# among those three are a few hundredths or less. The comparison may find some of those pairs in the same order in
# every seed; by margins that small, more seeds, more steps or another machine can reorder them, so treat that
# order as weak evidence, not a ranking of the three parts. Note the parameter column: the
# FFNs hold more than half of the parameters (16,704 of 28,640), and removing them costs less than removing attention,
# which holds fewer (8,576).
#
# ### 5.3 How wide should the FFN be?
#
# The FFN's hidden width `d_ff` at `D`, `2D`, `4D` (the paper's and GPT-2's choice) and `8D`. Each doubling adds
# `2·D·d_ff` weights per layer: the FFN column of the table.

# %% [markdown] lang="zh" run="zh"
# **结果说明了什么。** 每个部件都有用：在每个种子上，完整模型的损失都最低。代价最大的是去掉残差连接，和第 1 节一样（留出损失在每个种子上都高于 5.3）；其次是去掉注意力：没有注意力，token 之间互相读不到，模型只能凭当前这一个字去猜下一个字（也就是一个二元（bigram）模型）。在这个长度上，去掉位置、前馈网络或层归一化，损失各自多出 0.08 到 0.15 nat，三者之间相差不到 0.07。对比表也许会显示其中某几对在每个种子上先后一致；但差距这么小，多跑几个种子、多训练几步或者换一台机器，先后都可能颠倒，所以这个顺序只能算弱证据，不能拿来给这三个部件排名次。再看参数量那一列：132,032 个参数里，前馈网络只有 16,704 个，注意力有 8,576 个；大头在 token 嵌入（3,330 个字 × 32 维 = 106,560），因为唐诗的词表比英文语料大得多。前馈网络的参数比注意力多，去掉它的代价反而比去掉注意力小。
#
# ### 5.3 前馈网络该有多宽？
#
# 前馈网络的隐藏层宽度 `d_ff` 分别取 `D`、`2D`、`4D`（原论文和 GPT-2 的选择）和 `8D`。宽度每翻一倍，每层就多出 `2·D·d_ff` 个权重：见表格里前馈网络那一列。

# %%
my_width = predict("ffn_width", [])  # all four, lowest held-out loss first
my_width

# %% lang="zh"
my_width = predict("ffn_width", [])  # 四个都列出，留出数据上损失最低的排在最前
my_width

# %%
claims_width = claims_lab("ffn_width", train_data, val_data, V, steps=CLAIMS_STEPS_RUN, cache=runs_cache)
compare_prediction(my_width, claims_width)

# %%
plot_claims(claims_width, unigram)
plt.show()

# %% [markdown]
# **What the runs show.** `d_ff = D` ends highest, in every seed. From `2D` up the widths end close together: `2D`
# and `4D` within a hundredth of each other on average, and `8D` lowest on average, about 0.035 below `4D` for
# 16,640 more parameters (58% more model). So at this size and length the runs do not single out `4D`: it is the
# convention of the paper and of GPT-2, a parameter budget that works at scale, not something a run of 400 steps
# confirms.
#
# ### 5.4 SwiGLU, at equal width and at equal parameters
#
# SwiGLU (notebook 05's bonus) has three matrices where the GELU FFN has two. At the same hidden width `4D` it has
# 1.5 times the FFN's weights; at `8D/3` (`swiglu_hidden_size(4 * D)`) it has as many. A gain of the first over
# GELU could come from the gate or from the extra weights; only the second comparison can tell them apart.

# %% [markdown] lang="zh" run="zh"
# **结果说明了什么。** `d_ff = D` 在每个种子上都最高。从 `2D` 往上，各个宽度的平均值相差不到 0.015：`8D` 平均最低，也只比 `4D` 低约 0.01，代价却是多了 16,640 个参数（模型大了 13%）。所以在这个规模和训练长度下，实验结果并没有特别挑出 `4D`：它是原论文和 GPT-2 的惯例，是一种在大规模下行之有效的参数预算，而不是一个 400 步的实验能证实的东西。
#
# ### 5.4 SwiGLU：宽度相等时，以及参数量相等时
#
# SwiGLU（笔记本 05 的附加练习）有三个矩阵，而 GELU 版的前馈网络只有两个。隐藏宽度同为 `4D` 时，它的权重是前馈网络的 1.5 倍；宽度取 `8D/3`（`swiglu_hidden_size(4 * D)`）时，两者的权重一样多。第一种 SwiGLU 如果比 GELU 好，这个提升可能来自门控，也可能来自多出来的权重；只有第二组对比才能把两者分开。

# %%
my_swiglu = predict("swiglu", [])  # all three, lowest held-out loss first
my_swiglu

# %% lang="zh"
my_swiglu = predict("swiglu", [])  # 三个都列出，留出数据上损失最低的排在最前
my_swiglu

# %%
claims_swiglu = claims_lab("swiglu", train_data, val_data, V, steps=CLAIMS_STEPS_RUN, cache=runs_cache)
compare_prediction(my_swiglu, claims_swiglu)

# %%
plot_claims(claims_swiglu, unigram)
plt.show()

# %% [markdown]
# **What the runs show.** On average SwiGLU ends lower than the GELU FFN at equal width (by about 0.04 nats, with
# 7,872 more parameters) and at equal parameters too (by about 0.025); the two SwiGLUs end within 0.015 of each
# other. So here most of the gain survives the matching: the gate, not only the extra weights, helps. The comparison
# above says in how many seeds each gap holds: at these sizes, a gain of a few hundredths needs that check. That is
# the comparison the lesson asks for: a gain measured at equal width alone could have been the wider layer's.

# %% [markdown] lang="zh" run="zh"
# **结果说明了什么。** 在唐诗上，SwiGLU 没有比 GELU 版前馈网络更好：宽度相等时，GELU 在每个种子上都更低（平均约低 0.008，而 SwiGLU 还多了 7,872 个参数）；参数量相等时，GELU 平均也略低（约 0.012，但不是每个种子都如此）。三者的平均值相差不到 0.015。所以在这个规模和训练长度下，门控没有带来好处。上面的对比会告诉你每个差距在几个种子上成立：在这个规模下，这么小的差距必须经过这样的检验。这也正是原讲义要求的那种对比：只在宽度相等时测到的提升，完全可能只是因为层更宽；这里连宽度相等时的提升都没有出现。

# %% [markdown]
# ## Summary
#
# - **Residual connections** carry the gradient to every layer: without them block 0 of an 8-layer stack gets tens
#   of times less than the last block, and neither 2 nor 8 layers learn more than the letter frequencies.
# - **Pre-LN** ends lower than **Post-LN** at every learning rate of the sweep, in every seed, without a warm-up; a
#   warm-up did not rescue Post-LN in runs this short.
# - **Positions**: after 150 steps a character model gets its sense of order from the causal mask; the order test's
#   gap is no smaller without a position embedding. After 400 steps at the width's init (section 5) every model with
#   positions ends lower than the one without, and RoPE lowest.
# - **The claims lab**: every part counts, residuals and attention most; the FFN's `4D` is a convention the short runs
#   do not single out; SwiGLU keeps most of its gain at equal parameters. A claim is an experiment with a prediction
#   written first, several seeds, and only the part named changed.
# - **Debugging**: a symptom, a probe that isolates it, a name, a fix, and a check of the *behaviour*
#   that was broken. NaN: exp overflow (log-sum-exp). Uniform attention: one score per query instead of per
#   (query, key). Too-good loss: the mask lets a token see the next one. Loss ~0 and repeating samples:
#   unshifted labels.
#
# **Next:** notebook 12 writes your report from the records of notebooks 09 and 11.

# %% [markdown] lang="zh" run="zh"
# ## 小结
#
# - **残差连接**把梯度送到每一层：没有它，8 层堆叠中最后一块拿到的梯度是第 0 块的几十倍到上百倍，而且 2 层和 8 层都停在 unigram 损失上方，连字频都没学全。
# - 在扫描的每个学习率、每个种子上，不加预热时 **Pre-LN** 的最终损失都比 **Post-LN** 低；在这么短的训练里，加了预热也没能救回 Post-LN。
# - **位置**：训练 150 步时，逐字预测的小模型，顺序感来自因果掩码；去掉位置嵌入后，顺序测试的差值反而更大。按宽度取初始化、训练 400 步之后（第 5 节），每个带位置的模型都比不带位置的低，其中 RoPE 最低。
# - **论断实验**：每个部件都有用，残差和注意力最重要；前馈网络的 `4D` 是一种惯例，短训练并没有把它挑出来；在唐诗上，SwiGLU 不管是宽度相等还是参数量相等，都没有胜过 GELU 版前馈网络。检验一条论断，就是做一个实验：先写下预测，跑几个种子，并且只改动所说的那个部件。
# - **调试**：一个症状，一个把它单独揪出来的探针，一个名字，一个修复，再检查原先坏掉的那个*行为*是否恢复。NaN：exp 溢出（用 log-sum-exp 解决）。注意力均匀：每个查询只算了一个分数，而不是每对查询和键各一个。损失好得离谱：掩码让 token 看到了下一个 token。损失骤降且样本重复：标签没有错位。
#
# **下一步：** 笔记本 12 会根据笔记本 09 和 11 的记录，写出你的报告。
