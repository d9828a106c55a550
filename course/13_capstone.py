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
# ├── configs/tiny.yaml
# └── report.md
# ```
#
# Each file is written by one cell of this notebook (`%%writefile tiny-transformer/<file>`), so the folder appears
# next to the notebook and you can open, run and keep it. Every file's check runs it the way a user would, as a
# separate Python process in a fresh folder: it imports your `model.py` in a script of its own, runs your tests
# with `pytest`, runs `train.py` and `generate.py` from the command line. So **`model.py` must be your own code**:
# it may import `torch`, `math` and the standard library, not the course's packages (its check refuses an import
# of `tinylm_solutions`). `train.py` may read the course's corpus with `tinylm_solutions.data.default_corpus()`.
# When your notebook is autograded, these processes run in the grader's sandbox, where the course's answers are
# hidden: a file that leans on them fails there.

# %%
import os
import subprocess
import sys
from pathlib import Path

from tinylm_checks import Repository

QUICK = os.environ.get("TINYLM_QUICK") == "1"
TRAIN_STEPS = 20 if QUICK else 600  # the real run at the end: about a minute on a laptop CPU
REPO = Path("tiny-transformer")
for folder in (REPO, REPO / "tests", REPO / "configs"):
    folder.mkdir(exist_ok=True)
repo = Repository(REPO)  # what the checks read: repo() is {path: text} of the repository's text files


def run(*args):
    """python *args in the repository, as you would run it in a terminal there; prints what it printed."""
    done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True)
    print(done.stdout + done.stderr)
    return done.returncode

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
# attention's output and weights, the logits and the loss with the reference's.
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
# `tests/test_*.py`. A test is worth what it catches: each check below runs your test file on a **correct**
# `model.py` (it must pass) and on `model.py` files that are wrong in a known way (it must fail on each). Your tests
# import from `model` (`from model import ...`): pytest runs them from the repository's root.
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
# q, k, v with more than one query and key (with T_q != T_k, a softmax over the wrong axis cannot even have the
# right shape), and `torch.allclose` for the comparison; sum the weights over the last dimension.
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
# also hides each position itself (`tril(diagonal=-1)`: the first position attends to nothing and the loss is NaN).
# Assert how low the loss ends, not only that it fell: a model that learns too little also "falls". Keep it small:
# the check runs it three times, one thread each (a few seconds each on a laptop).
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

# %% test="overfit_tests_check"
from tinylm_checks import check_overfit_tests
check_overfit_tests(repo)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_overfit_tests(repo, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# Your tests on your own model:

# %%
_ = run("-m", "pytest", "-q", "--color=no", "-p", "no:cacheprovider", "tests")

# %% [markdown]
# ## 3. Training from a configuration
#
# A configuration file keeps a run's settings out of the code, so that a run can be repeated and compared. Here is
# `configs/tiny.yaml` (the sizes of notebook 09's run); change it if you like, keeping its keys:

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
# `python train.py --config configs/tiny.yaml [--steps N] [--out checkpoint.pt] [--data text.txt]`:
#
# 1. read the configuration with `yaml.safe_load`; `--steps` overrides `train.steps`; seed `torch` with `train.seed`;
# 2. the text: the file `--data` names, else the course's corpus (`tinylm_solutions.data.default_corpus()`); a
#    character vocabulary `sorted(set(text))`, the ids;
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
# 3.2). Then it runs it again with `--data` on a text where each character always follows the same one (a
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
# `argparse.ArgumentParser` with four options (`--steps` and `--data` default to None, meaning "the configuration's"
# and "the course's corpus"); windows
# as in notebook 09's `get_batch` (random starts, a stack of slices); the loss as the model's second output when
# it is given labels. The script runs its `main` only when it is run, not when it is imported (the `__name__`
# test).
# </details>

# %% solution="capstone_train"
%%writefile tiny-transformer/train.py
### BEGIN SOLUTION
"""Train the model: python train.py --config configs/tiny.yaml [--steps N] [--out checkpoint.pt] [--data text.txt]

The text is the course's corpus unless --data names a text file.

Prints the loss every few steps and saves {"config", "model", "vocab"} to the checkpoint.
"""
import argparse
import math

import torch
import yaml

from model import TinyLM
from tinylm_solutions.data import default_corpus


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/tiny.yaml")
    parser.add_argument("--steps", type=int, default=None, help="overrides train.steps of the config")
    parser.add_argument("--out", default="checkpoint.pt")
    parser.add_argument("--data", default=None, help="a text file to train on (default: the course's corpus)")
    args = parser.parse_args()
    with open(args.config) as f:
        config = yaml.safe_load(f)
    train = config["train"]
    steps = args.steps if args.steps is not None else train["steps"]
    torch.manual_seed(train["seed"])

    if args.data is None:
        text = default_corpus()
    else:
        with open(args.data) as f:
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

# %% test="capstone_train_check"
from tinylm_checks import check_capstone_train
check_capstone_train(repo)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_capstone_train(repo, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# Now the real run, with your configuration (about a minute):

# %%
_ = run("train.py", "--config", "configs/tiny.yaml", "--steps", str(TRAIN_STEPS), "--out", "checkpoint.pt")

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
# it samples twice with the same `--seed` and expects the same text, the prompt and exactly the new characters.
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

# %% test="capstone_generate_check"
from tinylm_checks import check_capstone_generate
check_capstone_generate(repo)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_capstone_generate(repo, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# Your model, from its checkpoint:

# %%
_ = run("generate.py", "--checkpoint", "checkpoint.pt", "--prompt", "def ", "--max-new-tokens", "120", "--temperature", "0.8")

# %% [markdown]
# ## 4. `report.md`
#
# ### Exercise 7: the report
#
# The lesson's report answers five questions, from your own runs (notebooks 09, 11 and 12 hold the numbers;
# notebook 12 wrote a longer report you can draw on). Keep the five headings and write at least 15 words under
# each, with numbers. The check reads the file: each heading there, each answer long enough. Your instructor reads
# what you wrote.
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

# %% solution="capstone_report"
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

# %% test="capstone_report_check"
from tinylm_checks import check_capstone_report
check_capstone_report(repo)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_capstone_report(repo, seed=1)
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - `tiny-transformer/` runs on its own: `python -m pytest`, `python train.py --config configs/tiny.yaml`,
#   `python generate.py --checkpoint checkpoint.pt`. Copy the folder anywhere with PyTorch and PyYAML (and give
#   `train.py` a text file instead of the course's corpus) and it still works.
# - Its tests are worth what they catch: each one failed on a model broken in the way it guards against.
# - A checkpoint holds the configuration, the weights and the vocabulary: everything generation needs.
#
# This is the end of the course. Next steps, if you want them: put the folder under git, replace the character
# vocabulary with a BPE tokenizer, add RoPE (notebook 04's bonus) inside `model.py` and compare with `configs/` that
# differ in one line.
