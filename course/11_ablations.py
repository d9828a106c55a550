# %% [markdown]
# # 11 · Ablations and debugging
#
# You have a working language model. This notebook takes it apart in two ways.
#
# **Ablations** remove one ingredient and measure what breaks. Each one trains small models for a few hundred
# steps, **three times, with seeds 0, 1 and 2** (under a minute each on 2 cores), with a plot as its evidence. At
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
# against learned and sinusoidal positions, removing each part, the FFN's width, SwiGLU at equal parameters), each a
# one-minute experiment over three seeds. You write a prediction before each run and compare it with the run after.
#
# Your numbers are recorded (`record_run`) for the report of notebook 12.
#
# Shapes as before: `B` batch, `T` positions, `D` = `d_model`, `V` the vocabulary, `H` heads, `d_k = D / H`.

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
from tinylm_solutions.data import default_corpus, train_val_split
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

# %% [markdown]
# Every run below has a fixed number of steps. `TINYLM_QUICK=1` in the environment shortens them all to a
# few steps (the course's CI uses it to test that the notebook runs; the plots then show nothing useful).

# %%
QUICK = os.environ.get("TINYLM_QUICK") == "1"
STEPS = dict(ABLATION_STEPS, lab=200, lab_short=60, lab_copy=40)  # the ablations' steps: the report's too
if QUICK:
    STEPS = {key: 3 for key in STEPS}
print("steps per run:", STEPS)

# %% [markdown]
# The data: the course's corpus (English docstrings of Python's standard library), one token per
# character, 90 % for training. A line to compare every loss with: the **unigram loss**, the loss of a model that
# ignores the context and predicts each character by its frequency in the training data (the entropy of the
# character frequencies, in nats). A model that ends near it has learned the letter frequencies and little else.

# %%
text = default_corpus()
tokenizer = CharTokenizer(text)
data = torch.tensor(tokenizer.encode(text))  # (N,) long
train_data, val_data = train_val_split(data)
V = tokenizer.vocab_size
print(f"{len(data):,} tokens, vocabulary of {V} characters")

# one size for every small model of this notebook: 2 heads of width 16, d_ff = 2 D, 32 positions
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
# Post-LN stays near the unigram loss, while Pre-LN gets below it (Pre-LN too does worse there than at 3e-3: these
# rates are too large for either, but less so for Pre-LN). The warm-up did **not** rescue Post-LN
# here: with it, Post-LN ends where it ended without. So this notebook shows that Pre-LN trains better without a
# warm-up; it does not show that a warm-up is what Post-LN lacks. Xiong et al. (2020, Fig. 3) measure that on
# deeper models trained for far longer, which a laptop cannot repeat in a minute. An ablation that does not
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

# %%
t0 = time.perf_counter()
order = order_test(train_data, val_data, SIZE, steps=STEPS["no_positions"])
print(f"({time.perf_counter() - t0:.0f} s)")
display(Markdown(ablation_table("no_positions", order)))

# %%
plot_order_test(order)
plt.show()

# %% [markdown]
# **What the runs show.** Both models are well below the line above the table (each held-out character predicted by
# its training frequency: held-out text is less like the training text than the training text itself, so this line
# sits higher than the unigram loss of section 1). Both find reversed text harder, in every seed, and the model
# *without* positions finds it harder still (the gap column). On text in its order, the model without positions is
# not worse: on average it is a little better. So the gap is not a measure of position embeddings. A model this
# small can predict a character well from the few before it (which characters follow which: "th" is common, "ht" is
# not), and the causal mask already tells it which tokens came before. Language models trained without any position
# embedding reach nearly the same loss (Haviv et al. 2022). Positions matter once a model must know *where*
# something was: counting, copying from a fixed offset, long-range structure; the small models of this course do not
# get that far in 150 steps. An ablation that finds little is a result too, and the table is the evidence for it.
#
# Your three ablations, saved for notebook 12's report:

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

# %%
def lab_model(**parts) -> LabTinyLM:
    """A 2-layer LabTinyLM with the given broken parts, same seed every time."""
    torch.manual_seed(0)
    return LabTinyLM(num_layers=2, **SIZE, **parts)


def greedy_sample(model, prompt: str = "The ", n: int = 40) -> str:
    """The model's greedy continuation of prompt."""
    idx = torch.tensor([tokenizer.encode(prompt)])  # (1, T)
    return tokenizer.decode(generate(model.eval(), idx, n, temperature=0.0)[0].tolist())


healthy = lab_model()
healthy_hist = lab_train(healthy, train_data, steps=STEPS["lab"], lr=1e-2)
print(f"healthy: loss {healthy_hist['loss'][0]:.2f} -> {healthy_hist['loss'][-1]:.2f}")
print("healthy sample:", repr(greedy_sample(healthy)))
print("\nthe bug names you choose from:", BUG_NAMES)

# %% [markdown]
# Our healthy model is still young: about 3 nats, and its greedy continuation is mostly spaces, the most
# frequent character. That is fine: what matters is how the broken ones differ from it.
#
# ### 4.1 The loss is NaN
#
# A teammate wrote the loss by hand:

# %%
def naive_cross_entropy(logits, targets):
    """Mean cross-entropy of logits (N, V) against targets (N,), by the textbook formula."""
    probs = logits.exp() / logits.exp().sum(dim=-1, keepdim=True)  # (N, V): softmax
    return -probs.gather(-1, targets[:, None]).log().mean()


# %% [markdown]
# It works on the healthy model's logits. But logits grow as a model becomes confident (a model trained
# for longer, or sharpened by a temperature below 1, has larger logits). The **probe**: the healthy model's
# logits on one batch, multiplied by 1, 3, 10 and 30, scored by this loss and by PyTorch's `F.cross_entropy`:

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

# %% solution="nan_loss_bug"
def nan_loss_bug() -> str:
    """The name of the bug behind the NaN loss: one of BUG_NAMES."""
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

# %% solution="stable_cross_entropy"
def stable_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of logits (N, V) against targets (N,), finite for logits of any size."""
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

# %%
for scale in (1, 3, 10, 30):
    print(f"logits x {scale:2d}: your loss {stable_cross_entropy(scale * logits, targets).item():8.3f}   "
          f"F.cross_entropy {F.cross_entropy(scale * logits, targets).item():8.3f}")

# %% [markdown]
# ### 4.2 Every attention row is uniform
#
# The next model trains, but not well. Its attention, after a short run, layer 0, head 0:

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

# %% solution="uniform_attention_bug"
def uniform_attention_bug() -> str:
    """The name of the bug behind the uniform attention: one of BUG_NAMES."""
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


# %% test="fixed_attention_check"
from tinylm_checks import check_fixed_attention
check_fixed_attention(fixed_attention)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_fixed_attention(fixed_attention, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# The same short run with your attention: the rows are no longer uniform.

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

# %% [markdown]
# The two curves are nearly the same for the first ~90 steps; then the broken model's loss falls far
# below the healthy one's, and yet its samples are no better. A loss that good on English
# text after a few hundred steps is too good to be true. The **probe**: change only the *last* token of an
# input and see which positions' logits move. In a causal model the last token can only affect the last
# position.

# %%
probe_ids = val_data[:8][None, :].clone()  # (1, 8)
changed = probe_ids.clone()
changed[0, -1] = (changed[0, -1] + 1) % V  # another last token
with torch.no_grad():
    moved = (leaky.eval()(changed)[0] - leaky(probe_ids)[0]).abs().amax(-1)[0]  # (T,): largest change per position
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

# %% solution="future_mask_bug"
def future_mask_bug() -> str:
    """The name of the bug behind the suspiciously low loss: one of BUG_NAMES."""
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


# %% test="fixed_causal_mask_check"
from tinylm_checks import check_fixed_causal_mask
check_fixed_causal_mask(fixed_causal_mask)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_fixed_causal_mask(fixed_causal_mask, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# The probe on a model with your mask (untrained: the probe needs no training):

# %%
honest = lab_model(mask_fn=fixed_causal_mask).eval()
with torch.no_grad():
    moved = (honest(changed)[0] - honest(probe_ids)[0]).abs().amax(-1)[0]  # (T,)
print("largest logit change at each position:", [f"{m:.2f}" for m in moved.tolist()])

# %% [markdown]
# ### 4.4 The loss falls to ~0 at once, and samples repeat one character
#
# The last model's loss:

# %%
def unshifted_lm_loss(logits, labels):
    """Next-token loss of logits (B, T, V) against labels (B, T) aligned with the inputs."""
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)


copier = lab_model(loss_fn=unshifted_lm_loss)
copier_hist = lab_train(copier, train_data, steps=STEPS["lab_copy"], lr=1e-2)
plot_loss_curves({"healthy": healthy_hist["loss"][:STEPS["lab_copy"]], "broken": copier_hist["loss"]},
                 title="the same model, two losses")
plt.show()
print("broken sample:", repr(greedy_sample(copier, "The cat")))
with torch.no_grad():
    top = copier.eval()(probe_ids)[0].argmax(-1)  # (1, T): the most likely token at each position
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

# %% solution="unshifted_labels_bug"
def unshifted_labels_bug() -> str:
    """The name of the bug behind the copying model: one of BUG_NAMES."""
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


# %% test="fixed_lm_loss_check"
from tinylm_checks import check_fixed_lm_loss
check_fixed_lm_loss(fixed_lm_loss)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_fixed_lm_loss(fixed_lm_loss, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# The same short run with your loss: no more collapse to 0.

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
# instead of 150–200, and the init std of the width, `small_init_std(32)` = 0.11 (notebook 08), instead of GPT-2's
# 0.02, which leaves a model this narrow near the unigram loss for its first hundreds of steps.
#
# **Predict first.** Before each run, write your prediction in the cell above it: the variants' names, from the
# lowest held-out loss to the highest. After the run, `compare_prediction` shows the table beside your order, says
# which pairs the run *separates* (the same order in every seed) and which it cannot call, and whether your order has
# the separated pairs right. A prediction earns no points; where it is wrong is where your picture of the model
# was wrong, which is worth more than the table.
#
# Each experiment takes about a minute on 2 cores.

# %%
from tinylm_checks import compare_prediction, plot_claims, predict
from tinylm_solutions.claims import CLAIMS_SIZE, CLAIMS_STEPS, EXPERIMENTS, claims_lab

CLAIMS_STEPS_RUN = 3 if QUICK else CLAIMS_STEPS
runs_cache = {}  # a variant that two experiments share trains once
print("every variant:", CLAIMS_SIZE, f"d_ff = 4 * d_model, {CLAIMS_STEPS_RUN} steps, seeds 0, 1, 2")
for name, variants in EXPERIMENTS.items():
    print(f"{name}: {list(variants)}")  # the names a prediction lists (some hold commas)

# %% [markdown]
# ### 5.1 Positions: learned, sinusoidal, RoPE, none
#
# - **learned** (GPT-2, notebook 08): a trained vector per position, added to the token embedding;
# - **sinusoidal** (notebook 04): the fixed table, added to token embeddings scaled by `sqrt(D)`;
# - **RoPE** (the bonus of notebook 04, `apply_rope`): no vector is added; inside every attention layer the
#   queries and keys are rotated by an angle proportional to their position, so a score `q·k` depends on how
#   far apart two tokens are (`TinyLM(..., positions="rope")`, which LLaMA-style models use);
# - **no positions**: only the causal mask tells the model about order (section 3).
#
# Your prediction first: order the four names from the lowest held-out loss to the highest.

# %%
my_positions = predict("positions", [])  # e.g. predict("positions", ["learned", "RoPE", ...]), all four, once each
my_positions

# %%
claims_positions = claims_lab("positions", train_data, val_data, V, steps=CLAIMS_STEPS_RUN, cache=runs_cache)
compare_prediction(my_positions, claims_positions)

# %%
plot_claims(claims_positions, unigram)
plt.show()

# %% [markdown]
# **What the runs show.** RoPE ends lowest, in every seed, by about 0.17 below learned positions: with queries and
# keys rotated by position, every score depends on how far apart two tokens are, not on where they sit, and for
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

# %%
my_parts = predict("parts", [])  # all six names, lowest held-out loss first
my_parts

# %%
claims_parts = claims_lab("parts", train_data, val_data, V, steps=CLAIMS_STEPS_RUN, cache=runs_cache)
compare_prediction(my_parts, claims_parts)

# %%
plot_claims(claims_parts, unigram)
plt.show()

# %% [markdown]
# **What the runs show.** Every part counts: the whole model ends lowest in every seed. Removing the residual
# connections costs most, as in section 1 (the held-out loss stays above 3.1). Removing attention costs next most:
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

# %%
my_width = predict("ffn_width", [])  # all four, lowest held-out loss first
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
# 16,640 more parameters (58 % more model). So at this size and length the runs do not single out `4D`: it is the
# convention of the paper and of GPT-2, a parameter budget that works at scale, not something a one-minute run
# confirms.
#
# ### 5.4 SwiGLU, at equal width and at equal parameters
#
# SwiGLU (notebook 05's bonus) has three matrices where the GELU FFN has two. At the same hidden width `4D` it has
# 1.5 times the FFN's weights; at `8D/3` (`swiglu_hidden_size(4 * D)`) it has as many. A gain of the first over
# GELU could come from the gate or from the extra weights; only the second comparison can tell them apart.

# %%
my_swiglu = predict("swiglu", [])  # all three, lowest held-out loss first
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
