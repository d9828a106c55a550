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
# 3. train a small TinyLM in a few seconds and sample from it;
# 4. look inside it: seaborn heatmaps of its attention weights, and an explorer (layer, head, your own text).
#
# Shapes: `B` batch, `T` positions, `V` vocabulary size, `L` = `max_seq_len`.

# %%
import os

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from tinylm_checks import check_generate
from tinylm_checks import attention_explorer, attention_maps, plot_attention_heads
from tinylm_solutions.data import default_corpus, train_val_split
from tinylm_solutions.model import TinyLM
from tinylm_solutions.tokenizer import CharTokenizer
from tinylm_solutions.trainer import train

torch.set_num_threads(1)  # the tensors here are small: one thread is enough (two would mostly wait on each other)
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

# %% [markdown]
# Reproducible draws need a random number generator you hold: a `torch.Generator`, seeded, passed to the
# sampler. The same seed gives the same tokens, and nothing else in the notebook moves its state:

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
#     idx_cond = the last L tokens      (B, min(T', L))   the model takes at most max_seq_len positions
#     logits = model(idx_cond)[0]       (B, T_c, V)
#     logits = logits[:, -1, :]         (B, V)            the prediction for the next token
#     temperature, top-k, softmax       (B, V)
#     idx_next = multinomial(...)       (B, 1)
#     idx = cat(idx, idx_next)          (B, T' + 1)
# return idx                            (B, T + max_new_tokens)
# ```
#
# The model has learned position embeddings for `L` positions only, and `TinyLM` raises a `ValueError` on a
# longer input: once the sequence is longer than `L`, feed it the **last** `L` tokens, the ones the next token
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
# enough to learn which characters follow which, not enough for words.

# %%
text = default_corpus()
tokenizer = CharTokenizer(text)
data = torch.tensor(tokenizer.encode(text))  # (N,) token ids
train_data, val_data = train_val_split(data)
torch.manual_seed(0)
model = TinyLM(tokenizer.vocab_size, max_seq_len=32, d_model=48, num_heads=4, num_layers=2, d_ff=192)
steps = 20 if os.environ.get("TINYLM_QUICK") else 200  # TINYLM_QUICK=1: a few steps (quick autograding)
history = train(model, train_data, val_data, steps=steps, batch_size=16, lr=5e-3, eval_interval=200,
                eval_batches=5, progress=False, seed=0)
print(f"vocabulary {tokenizer.vocab_size} characters; loss {history['loss'][0]:.2f} -> {history['loss'][-1]:.2f}; "
      f"validation loss {history['val_loss'][-1]:.2f} (uniform guessing: ln V = {torch.log(torch.tensor(float(tokenizer.vocab_size))):.2f})")

# %% [markdown]
# Four samples with your `generate`, from the same prompt and generator seed: three temperatures, and
# temperature 1 once more with top-k 5. Compare them: which repeats itself, which turns to noise?

# %%
prompt = torch.tensor([tokenizer.encode("Return the ")])  # (1, T)
for temperature, top_k in ((0.5, None), (1.0, None), (1.0, 5), (2.0, None)):
    out = generate(model, prompt, 60, temperature=temperature, top_k=top_k,
                   generator=torch.Generator().manual_seed(0))
    print(f"T={temperature}, top_k={top_k}: {tokenizer.decode(out[0].tolist())!r}")

# %% [markdown]
# ## 4. Inside the model: attention heatmaps
#
# Each block keeps the attention weights of its last forward pass, `(B, H, T, T)`: row `t` says how much
# query position `t` takes from each key position. `model.get_attention_weights()` returns one such tensor
# per layer; `attention_maps` runs the model on a text and returns them for that one sequence. The causal
# mask leaves the upper triangle at 0. Look for heads that stay on the token itself (a bright main diagonal): after
# 200 steps they are the clearest pattern. A head for the previous character (a diagonal just below the main one) has
# not formed: the next character can be predicted from the current one alone. Some heads may gather from the
# spaces; how clearly depends on the run.

# %%
weights, tokens = attention_maps(model, tokenizer, "Return the value of x")  # [(H, T, T)] per layer, labels
plot_attention_heads(weights, tokens)  # one row per layer, one column per head
plt.tight_layout()
plt.show()

# %% [markdown]
# How sharp are the heads? The entropy of a row, `-Σ p log p`, is 0 when a query takes everything from one key
# and `log(t + 1)` when it spreads evenly over its `t + 1` allowed keys:

# %%
for layer, w in enumerate(weights):
    entropy = -(w * w.clamp_min(1e-12).log()).sum(-1).mean(-1)  # (H,): mean over the queries
    print(f"layer {layer}: mean entropy per head", [round(e, 2) for e in entropy.tolist()])

# %% [markdown]
# ## 5. Explorer
#
# Pick a layer and a head, and type a text of your own (characters of the corpus; the last 32 are shown). The
# heatmap is drawn again when a slider moves or you press Enter in the box.

# %%
attention_explorer(model, tokenizer, "Return a new list of the items")

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
