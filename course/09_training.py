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
# 5. train for about a minute on real text with a progress bar and a live loss plot, logging the learning
#    rate, the gradient norm, each layer's activation RMS, tokens/s and peak memory;
# 6. walk the **overfit checklist** on six broken setups: name what is wrong with each, in the list's order, and
#    repair it.
#
# Shapes: `B` batch, `T` positions (the block size), `V` vocabulary size, `D` = `d_model`.

# %%
import math
import os
import re
import resource
import sys
import time
from collections import Counter
from pathlib import Path

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from tinylm_checks import (check_char_tokenizer, check_evaluate, check_perplexity, check_train_step,
                           check_word_tokenizer)
from tinylm_checks import LiveLossPlot, plot_training_log, record_run
from tinylm_checks import (OVERFIT_CHECKLIST, check_overfit_checklist, check_repair, healthy_setup, mystery_setups,
                           padded_batch, plot_overfit_runs)
from tinylm_solutions.data import default_corpus, get_batch, lm_batches, train_val_split
from tinylm_solutions.model import TinyLM

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # the tensors here are small: one thread is enough (two would mostly wait on each other)

# %% [markdown]
# **Run lengths.** The two training runs below use fixed step counts (so every run of this notebook gives
# the same numbers). Set the environment variable `TINYLM_QUICK=1` before starting Jupyter to run only a
# few steps of each (the course's tests do this, and instructors may when they autograde: the runs earn no
# points); the numbers in the text are those of the full run.

# %%
QUICK = os.environ.get("TINYLM_QUICK") == "1"
OVERFIT_STEPS = 8 if QUICK else 150  # one fixed batch, until the loss is near 0
TRAIN_STEPS = 6 if QUICK else 600  # the real run: about 45 s on a laptop CPU
LAB_STEPS = 8 if QUICK else 150  # each run of the checklist lab (section 8): about 1 s
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
# The corpus of this course ships with Python: the docstrings of 37 standard-library modules, about 180 000
# characters of English prose about programming (`default_corpus()`; no download).

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


# %% test="char_tokenizer_check"
from tinylm_checks import check_char_tokenizer
check_char_tokenizer(char_tokenizer)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_char_tokenizer(char_tokenizer, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# Your tokenizer on the whole corpus. `decode` is the other half of the round trip:

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

# %% solution="word_encode"
def word_encode(text: str, vocab: list[str]) -> list[int]:
    """Token ids of text: WORD_PATTERN tokens, unknown ones -> <unk> (1), then <eos> (2)."""
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

# %%
n_val = len(text) // 10
train_text, val_text = text[:-n_val], text[-n_val:]
for min_freq in (1, 2, 5):
    vocab = build_word_vocab(train_text, min_freq)
    val_ids = word_encode(val_text, vocab)[:-1]  # without the final <eos>
    unk = sum(i == 1 for i in val_ids) / len(val_ids)
    print(f"min_freq = {min_freq}: V = {len(vocab):6,d} words, {len(val_ids):,d} validation tokens "
          f"(vs {len(val_text):,d} characters), UNK rate {unk:.1%}")

# %% [markdown]
# **Where `<pad>` goes.** Sentences have different lengths, a batch is a rectangle. Pad the short ones with
# id 0, and give the padded positions the label `-100`: `F.cross_entropy` ignores that label, so padding
# is never a target and does not count in the mean.

# %%
vocab = build_word_vocab(train_text, 2)
sentences = [word_encode(s, vocab) for s in ("Return the value.", "Raise an error if the file is missing.")]
T_max = max(map(len, sentences))
x_pad = torch.tensor([s + [0] * (T_max - len(s)) for s in sentences])  # (B, T_max), 0 = <pad>
labels = torch.where(x_pad == 0, -100, x_pad)  # (B, T_max): padding is never a target
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

# %%
torch.manual_seed(0)
config = dict(vocab_size=len(chars), max_seq_len=64, d_model=64, num_heads=4, num_layers=2, d_ff=256)
model = TinyLM(**config)
fixed_batch = get_batch(train_data, 8, 32, torch.Generator().manual_seed(1))  # (8, 32) each
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

# %% solution="perplexity"
def perplexity(loss) -> float:
    """exp(loss) for a mean cross-entropy in nats."""
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
# With `TINYLM_QUICK=1` it runs only a few steps. To train on a text of your own, set `CORPUS_PATH` to
# any UTF-8 file (a book from Project Gutenberg, your notes...); the vocabulary is rebuilt from it.

# %%
CORPUS_PATH = None  # e.g. "my_book.txt": any UTF-8 text file
if CORPUS_PATH is not None:
    text = Path(CORPUS_PATH).read_text(encoding="utf-8")
    chars, ids = char_tokenizer(text)
    data = torch.tensor(ids, dtype=torch.long)  # (N,)
    train_data, val_data = train_val_split(data, val_fraction=0.1)
    print(f"{CORPUS_PATH}: {len(text):,d} characters, V = {len(chars)}")

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

act_rms = {f"block {i}": [] for i in range(len(model.blocks))}  # one value per step and block


def record_rms(name):
    def hook(module, inputs, output):  # called by PyTorch after module.forward
        if module.training:  # training steps only, not evaluations
            act_rms[name].append(output.detach().pow(2).mean().sqrt().item())
    return hook


hooks = [block.register_forward_hook(record_rms(f"block {i}")) for i, block in enumerate(model.blocks)]
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
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024 if sys.platform != "darwin" else 1024 ** 2)
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

# %% [markdown]
# Read the panels left to right (the numbers are those of the full run, printed above):
#
# - **learning rate**: the warm-up to 3e-3 over 50 steps, then the cosine down to 3e-4.
# - **gradient norm**: near 3 at the start, above 1 for most of the warm-up (two thirds of the first 50
#   steps are clipped), then between 0.5 and 1 from step 50 to about 300 (4% clipped), then rising again:
#   more than half of steps 301-450 and nearly all of steps 451-600 are clipped. A late rise like this is a known effect of weight decay with a
#   decaying learning rate (Defazio et al., 2025, "Why Gradients Rapidly Increase Near the End of
#   Training"): weight decay shrinks the weights, and a weight followed by a LayerNorm gets gradients that
#   grow as its scale shrinks (the LayerNorm undoes the scale). Clipping on every step means clipping is no
#   longer a guard against a rare bad batch: every update is scaled down, and the real step is smaller than
#   the schedule says. Here that happens only at the end, where the learning rate is already small and the
#   loss still falls; from the start, it would say `max_grad_norm` is too small for the model (or the
#   learning rate too large).
# - **activation RMS** of each block's output (the residual stream): it grows from its small initial value
#   while the blocks learn to contribute, peaks at about 1.1 around step 240, then falls to about 0.65 as
#   weight decay pulls the weights back and the smaller learning rate lets the gradients push less. It does
#   not climb steadily: the stream is not blowing up.
# - **tokens/s**: timed around `train_step` alone (the evaluations are outside the timing), so it shows the
#   step's speed only; it jumps from step to step because one step takes a few milliseconds and anything
#   else running on the machine shows. Read its typical level, not its spikes.
#
# What has the model learnt? Let it write: start from a prompt, and repeatedly sample the next character
# from the softmax of the last position's logits (notebook 10 does this properly, with temperature and
# top-k):

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
samples = [sample(model, prompt, seed=i) for i, prompt in enumerate(("Return the ", "The default "))]
for s in samples:
    print(repr(s), end="\n\n")

# %% [markdown]
# Word-like pieces, spaces, punctuation and the look of docstrings, from about 110 000 parameters (printed
# before the run) and under a minute of CPU: not yet sense (the validation perplexity is about 12, against 99 before
# training). Stage 12's report reads this run's record:

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
# W03 lesson's checklist; the first items are the cheapest to check and the most common):
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

# %% [markdown]
# The healthy run ends near 0.08, not at 0: some lines begin alike and go on differently, so no model can
# be sure of their next character. Three setups end *below* it: they found a shortcut. Three end above it, and
# one of those never leaves its start. The curves say which group a setup is in, not which item broke: for
# that, walk the list.
#
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


# %% test="overfit_checklist_check"
from tinylm_checks import check_overfit_checklist
check_overfit_checklist(overfit_checklist)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_overfit_checklist(overfit_checklist, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# Your checklist on the six setups:

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
