"""TinyLM against nanoGPT on nanoGPT's CPU recipe, side by side in one run. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/bench_nanogpt.py --corpus ../shared/data/tinyshakespeare.txt
    .venv/bin/python benchmarks/bench_nanogpt.py --corpus FILE --iters 200 --only tinylm,encoder   # quicker
    .venv/bin/python benchmarks/bench_nanogpt.py --record benchmarks/results/nanogpt.json          # keep the numbers

``--record`` writes the run's numbers (and when, where and how it ran) to a JSON file, to quote from.

    .venv/bin/python benchmarks/bench_nanogpt.py --interleaved 12   # the step times alone, interleaved (~1 min)

The runs above follow one another, so a machine that slows down or speeds up during the ten minutes moves their
ratios: two full runs of this machine measured nanoGPT's step at 40.6 and 35.1 ms, and the same TinyLM code at 34.7 and
39.3 ms within one run (its two inits). ``--interleaved R`` measures the step alone, in one process: nanoGPT's model
(its ``model.py`` from the temporary checkout, its ``configure_optimizers``, then forward, backward, clip, step and
``loss.item()`` as its ``train.py`` does), the trainer's TinyLM, the taught TinyLM and the ``nn.TransformerEncoder``
model take turns of 25 steps, R rounds (the first is a warm-up, left out), on batches drawn the same way for all
(``get_batch``: nanoGPT's ``train.py`` reads each batch through a new ``np.memmap`` instead, which its full run pays
and this leaves out); it prints each one's median ms/step and the goals' ratios. Only the step: no evaluation, no
start-up.

    .venv/bin/python benchmarks/bench_nanogpt.py --interleaved 8 --ceiling   # also: how far could the step go?

``--ceiling`` adds what bounds the trainer's step from below: a fifth turn, the trainer's TinyLM under
``torch.compile`` (inductor, PyTorch's default; the step is :func:`~tinylm_solutions.train.train_step` itself, as
the trainer takes it, on the compiled model: its first step, the compilation, is printed apart; without a working C++
compiler it says why and goes on), and a profile of the trainer's step (``torch.profiler``): the share of its time in
matrix products and attention, which nanoGPT's step computes alike (the same shapes), the rate of those products
against one large product's (is the GEMM library already at the machine's peak at these shapes?), and their time
over nanoGPT's step: the ratio that the trainer's step could reach if everything else in it cost nothing.

The recipe (nanoGPT's README, "I only have a macbook"): batch 12, context 64, 4 layers, 4 heads, width 128,
no dropout, 2000 iterations, AdamW lr 1e-3 with 100 warmup steps and a cosine decay to 1e-4, betas (0.9, 0.99),
weight decay 0.1 on the 2-D weights, gradient clipping at 1.0, a 90/10 split of the characters of the corpus.
Four runs, one after the other, each in a process of its own timed the same way (wall seconds from start
to exit, Python and torch start-up included):

- nanoGPT: its own ``train.py`` from a temporary checkout of the git repository ``--nanogpt`` (nothing of it is
  copied into this project), with ``data/<name>/{train,val}.bin`` and ``meta.pkl`` written here for the
  corpus (sorted characters, uint16, first 90% / last 10%), as its ``prepare.py`` would.
- TinyLM: the reference model trained by :func:`tinylm_solutions.trainer.train` with the same recipe, on the
  same token ids (read from the same ``.bin`` files; the vocabulary is :class:`CharTokenizer`'s), with the
  fused attention path and PyTorch's fused AdamW (nanoGPT fuses AdamW on CUDA only). Its init is GPT-2's rule
  with the width's own std, ``small_init_std(128)`` = 0.056 (the reference trainer's default), not GPT-2's 0.02.
- TinyLM, GPT-2's 0.02: the same run with ``init_std=0.02``, nanoGPT's init (the course's contract): what the
  init alone is worth at this width.
- TinyLM, taught path: the "TinyLM" run without the trainer's switches (``fast=False``): the attention and
  LayerNorm the notebooks teach and check, as the notebooks train them.
- nn.TransformerEncoder: a model of the same size built from PyTorch's layers (Pre-LN, GELU, causal mask,
  tied output layer), trained by the same loop (fused AdamW too): what PyTorch's own modules cost per step.
- TinyLM, faster recipe: the "TinyLM" run on a recipe of its own (:data:`FAST`: fewer steps, a higher rate), the same
  model, batch and context.

Time to quality: for each run, the wall seconds from its start at which its validation loss first reported is at or
below nanoGPT's final one in the same invocation (and that over nanoGPT's wall time): an evaluation's time is stamped
as its line reaches this process (nanoGPT's log, unbuffered) or as the worker's callback returns.

Every run evaluates as nanoGPT does: at step 0, every ``--eval-interval`` steps and at the end, the mean loss of
``--eval-iters`` random batches of each split (nanoGPT's ``estimate_loss``); the last validation estimate is
the "val loss" reported. "ms/step" is the median of the per-step times (one optimizer step with its batch).
Timings depend on the machine and on its load: only ratios within one run mean anything.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import pickle
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NANOGPT_GIT = Path("/work/.mirror/karpathy+nanoGPT/repo")
RECIPE = dict(batch_size=12, block_size=64, n_layer=4, n_head=4, n_embd=128, lr=1e-3, min_lr=1e-4, warmup=100,
              beta2=0.99, weight_decay=0.1, grad_clip=1.0)
FAST = dict(iters=1000, lr=3e-3, min_lr=3e-4, warmup=100)
"""The "TinyLM, faster recipe" run: the same model, batch and context, trained for ``iters`` steps on a schedule of its
own (warmup, then a cosine decay from ``lr`` to ``min_lr`` over those steps). Issue 5 of 5's goal: reaching nanoGPT's
final validation loss in half its wall time or less."""


# ----------------------------------------------------------------------------------------- the data, as prepare.py
def write_dataset(corpus: Path, out: Path) -> dict:
    """``out/{train,val}.bin`` (uint16 ids of the sorted characters; first 90% / last 10%) and ``meta.pkl``."""
    import numpy as np

    text = corpus.read_text(encoding="utf-8")
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    ids = np.array([stoi[ch] for ch in text], dtype=np.uint16)
    n_train = int(len(ids) * 0.9)
    out.mkdir(parents=True, exist_ok=True)
    ids[:n_train].tofile(out / "train.bin")
    ids[n_train:].tofile(out / "val.bin")
    with open(out / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": stoi}, f)
    return {"chars": len(text), "vocab": len(chars), "train": n_train, "val": len(ids) - n_train}


# ---------------------------------------------------------------------------------------------------- the workers
def _encoder_model(vocab_size: int):
    """A TinyLM-sized LM from ``nn.TransformerEncoder`` (Pre-LN, GELU, causal, tied head); forward as TinyLM's."""
    import torch
    from torch import nn

    class EncoderLM(nn.Module):
        def __init__(self, vocab_size: int, max_seq_len: int, d_model: int, num_heads: int, num_layers: int):
            super().__init__()
            self.max_seq_len = max_seq_len
            self.token_emb = nn.Embedding(vocab_size, d_model)
            self.pos_emb = nn.Embedding(max_seq_len, d_model)
            layer = nn.TransformerEncoderLayer(d_model, num_heads, 4 * d_model, dropout=0.0, activation="gelu",
                                               batch_first=True, norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(d_model)
            self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
            self.lm_head.weight = self.token_emb.weight
            nn.init.normal_(self.token_emb.weight, std=0.02)
            nn.init.normal_(self.pos_emb.weight, std=0.02)

        def forward(self, input_ids, labels=None):
            T = input_ids.size(1)
            x = self.token_emb(input_ids) + self.pos_emb(torch.arange(T))  # (B, T, D)
            mask = nn.Transformer.generate_square_subsequent_mask(T)  # (T, T), -inf above the diagonal
            x = self.encoder(x, mask=mask, is_causal=True)  # (B, T, D)
            return self.lm_head(self.norm(x)), None  # (B, T, V)

    r = RECIPE
    return EncoderLM(vocab_size, r["block_size"], r["n_embd"], r["n_head"], r["n_layer"])


def worker(kind: str, data_dir: Path, corpus: Path, iters: int, eval_interval: int, eval_iters: int,
           threads: int) -> dict:
    """Train ``kind`` ("tinylm", "tinylm_gpt2init", "tinylm_taught" or "encoder") with the recipe; returns the numbers
    (printed as JSON)."""
    import numpy as np
    import torch

    from tinylm_solutions.data import get_batch
    from tinylm_solutions.model import TinyLM, small_init_std
    from tinylm_solutions.tokenizer import CharTokenizer
    from tinylm_solutions.train import batch_loss
    from tinylm_solutions.trainer import train

    torch.set_num_threads(threads)
    torch.manual_seed(1337)  # nanoGPT's seed
    meta = pickle.loads((data_dir / "meta.pkl").read_bytes())
    tok = CharTokenizer(corpus.read_text(encoding="utf-8"))
    assert list(tok.chars) == [meta["itos"][i] for i in range(meta["vocab_size"])], "not the same vocabulary"
    split = {s: torch.from_numpy(np.fromfile(data_dir / f"{s}.bin", dtype=np.uint16).astype(np.int64))
             for s in ("train", "val")}
    r = RECIPE
    if kind == "encoder":
        model = _encoder_model(tok.vocab_size)
    else:
        model = TinyLM(tok.vocab_size, r["block_size"], r["n_embd"], r["n_head"], r["n_layer"], 4 * r["n_embd"],
                       init_std=0.02 if kind == "tinylm_gpt2init" else small_init_std(r["n_embd"]))
    eval_gen = torch.Generator().manual_seed(1337)

    @torch.no_grad()
    def estimate_loss() -> dict:  # nanoGPT's estimate_loss: eval_iters random batches per split
        model.eval()
        out = {s: statistics.fmean(batch_loss(model, get_batch(split[s], r["batch_size"], r["block_size"],
                                                                 eval_gen)).item() for _ in range(eval_iters))
               for s in ("train", "val")}
        model.train()
        return out

    if kind == "tinylm_fast":
        iters, r = FAST["iters"], {**r, **FAST}
    evals, times = [(0, estimate_loss())], [time.time()]

    def callback(step: int, record: dict) -> None:
        if step % eval_interval == 0 or step == iters:
            evals.append((step, estimate_loss()))
            times.append(time.time())

    hist = train(model, split["train"], None, steps=iters, batch_size=r["batch_size"], block_size=r["block_size"],
                 lr=r["lr"], warmup_steps=r["warmup"], min_lr=r["min_lr"], lr_decay_steps=iters,
                 betas=(0.9, r["beta2"]), weight_decay=r["weight_decay"], decay_2d_only=True,
                 fused=True, max_grad_norm=r["grad_clip"], fast=kind != "tinylm_taught", progress=False,
                 callback=callback, seed=1337)
    ms = [r["batch_size"] * r["block_size"] / tps * 1e3 for tps in hist["tokens_per_s"]]  # per step
    return {"ms_per_step": statistics.median(ms), "val_loss": evals[-1][1]["val"],
            "train_loss": evals[-1][1]["train"], "params": sum(p.numel() for p in model.parameters()),
            "evals": [(s, e["val"]) for s, e in evals], "eval_times": times}


# ----------------------------------------------------------------------------------------------------- the runs
def run_nanogpt(git_dir: Path, corpus: Path, tmp: Path, iters: int, eval_interval: int, eval_iters: int,
                env: dict) -> dict:
    """nanoGPT's train.py on the recipe, from a temporary checkout of ``git_dir``; its log parsed."""
    checkout = tmp / "nanoGPT"
    checkout.mkdir()
    archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "HEAD"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(checkout)], input=archive.stdout, check=True)
    name = "bench_" + re.sub(r"\W", "_", corpus.stem)
    write_dataset(corpus, checkout / "data" / name)
    r = RECIPE
    cmd = [sys.executable, "train.py", "config/train_shakespeare_char.py", "--device=cpu", "--compile=False",
           f"--dataset={name}", f"--eval_iters={eval_iters}", "--log_interval=1", f"--eval_interval={eval_interval}",
           f"--block_size={r['block_size']}", f"--batch_size={r['batch_size']}", f"--n_layer={r['n_layer']}",
           f"--n_head={r['n_head']}", f"--n_embd={r['n_embd']}", f"--max_iters={iters}",
           f"--lr_decay_iters={iters}", f"--warmup_iters={r['warmup']}", "--dropout=0.0", f"--out_dir={tmp / 'out'}"]
    t0, start, lines, stamps = time.perf_counter(), time.time(), [], []
    with tempfile.TemporaryFile("w+") as err:  # its log read as it comes (unbuffered): each evaluation's wall time
        proc = subprocess.Popen(cmd, cwd=checkout, env={**env, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                                stderr=err, text=True)
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("step "):
                stamps.append(time.time() - start)
        proc.wait()
        wall = time.perf_counter() - t0
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"nanoGPT failed:\n{err.read()[-3000:]}")
    stdout = "".join(lines)
    ms = [float(m) for m in re.findall(r"^iter \d+: loss [\d.]+, time ([\d.]+)ms", stdout, re.M)]
    evals = [(int(s), float(v)) for s, v in re.findall(r"^step (\d+): train loss [\d.]+, val loss ([\d.]+)",
                                                         stdout, re.M)]
    params = re.search(r"number of parameters: ([\d.]+)M", stdout)
    return {"wall_s": wall, "ms_per_step": statistics.median(ms), "val_loss": evals[-1][1], "evals": evals,
            "eval_s": stamps, "params": float(params.group(1)) * 1e6 if params else float("nan")}


def run_worker(kind: str, data_dir: Path, corpus: Path, iters: int, eval_interval: int, eval_iters: int,
               threads: int, env: dict) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, "--data-dir", str(data_dir),
           "--corpus", str(corpus), "--iters", str(iters), "--eval-interval", str(eval_interval),
           "--eval-iters", str(eval_iters), "--threads", str(threads), "--warmup", str(RECIPE["warmup"]),
           "--fast-recipe", json.dumps(FAST)]
    t0, start = time.perf_counter(), time.time()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"wall_s": wall, "eval_s": [t - start for t in result.pop("eval_times")], **result}


def to_quality(run: dict, target: float) -> float | None:
    """The wall seconds, from the run's start (Python's and torch's start-up included), at which its validation loss
    first reported is ``target`` or lower; None if it never was."""
    for (_, val), seconds in zip(run["evals"], run["eval_s"]):
        if val <= target:
            return seconds
    return None


# Each run beside its peer. Issue 5 of 5's goals: the trainer's step and wall <= 0.8x nanoGPT's (val <= 1.75); the
# taught path's step <= 1.0x the built-in model's.
RATIOS = [("tinylm", "nanogpt"), ("tinylm_fast", "nanogpt"), ("tinylm", "tinylm_gpt2init"), ("tinylm", "encoder"),
          ("tinylm_taught", "encoder")]


def interleaved(git_dir: Path, corpus: Path, rounds: int, threads: int, turn: int = 25,
                ceiling: bool = False) -> dict[str, float]:
    """Median ms per training step of nanoGPT, TinyLM (the trainer's path), the taught TinyLM and the encoder model,
    measured in turns of ``turn`` steps over ``rounds`` rounds in this process (the first round left out); with
    ``ceiling``, also the compiled TinyLM's (``tinylm_compiled``; ``compile_s``: its first step) and the profile's
    figures (:func:`step_profile`)."""
    import torch

    from tinylm_solutions.data import get_batch
    from tinylm_solutions.model import TinyLM, small_init_std
    from tinylm_solutions.tokenizer import CharTokenizer
    from tinylm_solutions.trainer import make_optimizer, train

    torch.set_num_threads(threads)
    r = RECIPE
    text = corpus.read_text(encoding="utf-8")
    tok = CharTokenizer(text)
    data = torch.tensor(tok.encode(text[: len(text) * 9 // 10]))
    with tempfile.TemporaryDirectory(prefix="bench_nanogpt_") as tmp:
        archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "HEAD", "model.py"], check=True,
                                 capture_output=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        sys.path.insert(0, tmp)
        try:
            from model import GPT, GPTConfig  # nanoGPT's
        finally:
            sys.path.remove(tmp)
    torch.manual_seed(1337)
    nano = GPT(GPTConfig(block_size=r["block_size"], vocab_size=tok.vocab_size, n_layer=r["n_layer"],
                         n_head=r["n_head"], n_embd=r["n_embd"], dropout=0.0, bias=False))
    nano_opt = nano.configure_optimizers(r["weight_decay"], r["lr"], (0.9, r["beta2"]), "cpu")
    nano_gen = torch.Generator().manual_seed(1337)

    def nano_turn() -> list[float]:  # train.py's loop body: the batch, forward, backward, clip, step, loss.item()
        out = []
        for _ in range(turn):
            t0 = time.perf_counter()
            x, y = get_batch(data, r["batch_size"], r["block_size"], nano_gen)
            _, loss = nano(x, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(nano.parameters(), r["grad_clip"])
            nano_opt.step()
            nano_opt.zero_grad(set_to_none=True)
            loss.item()
            out.append(time.perf_counter() - t0)
        return out

    def trainer_turn(kind: str):
        model = _encoder_model(tok.vocab_size) if kind == "encoder" else TinyLM(
            tok.vocab_size, r["block_size"], r["n_embd"], r["n_head"], r["n_layer"], 4 * r["n_embd"],
            init_std=small_init_std(r["n_embd"]))
        opt = make_optimizer(model, r["lr"], (0.9, r["beta2"]), r["weight_decay"], decay_2d_only=True, fused=True)
        gen, hist, done = torch.Generator().manual_seed(1337), None, 0

        def run() -> list[float]:
            nonlocal hist, done
            hist = train(model, data, steps=done + turn, batch_size=r["batch_size"], block_size=r["block_size"],
                         max_grad_norm=r["grad_clip"], optimizer=opt, generator=gen, start_step=done, history=hist,
                         progress=False, fast=kind == "tinylm")
            done += turn
            return [r["batch_size"] * r["block_size"] / tps for tps in hist["tokens_per_s"][-turn:]]
        return run

    turns = {"nanogpt": nano_turn, "tinylm": trainer_turn("tinylm"), "tinylm_taught": trainer_turn("tinylm_taught"),
             "encoder": trainer_turn("encoder")}
    extra: dict[str, float] = {}
    if ceiling:
        compiled = compiled_turn(tok.vocab_size, data, turn)
        if compiled is not None:
            turns["tinylm_compiled"] = compiled
    seconds: dict[str, list[float]] = {k: [] for k in turns}
    for i in range(rounds):
        for kind, run in turns.items():
            times = run()
            if kind == "tinylm_compiled" and i == 0:
                extra["compile_s"] = times[0]
            if i > 0:
                seconds[kind] += times
    ms = {kind: statistics.median(s) * 1e3 for kind, s in seconds.items()}
    if ceiling:
        extra.update(step_profile(tok.vocab_size, data, turn))
    return {**ms, **extra}


def compiled_turn(vocab_size: int, data, turn: int):
    """A turn of ``turn`` training steps of the trainer's TinyLM (fused attention, fused AdamW) under
    ``torch.compile``: :func:`train_step` on the compiled model, batches as the other turns draw them. None, with
    the reason printed, where inductor cannot compile (no C++ compiler: it raises at the first step)."""
    import torch

    from tinylm_solutions.data import get_batch
    from tinylm_solutions.model import TinyLM, small_init_std
    from tinylm_solutions.train import train_step
    from tinylm_solutions.trainer import fast_attention, make_optimizer

    r = RECIPE
    model = TinyLM(vocab_size, r["block_size"], r["n_embd"], r["n_head"], r["n_layer"], 4 * r["n_embd"],
                   init_std=small_init_std(r["n_embd"]))
    opt = make_optimizer(model, r["lr"], (0.9, r["beta2"]), r["weight_decay"], decay_2d_only=True, fused=True)
    gen = torch.Generator().manual_seed(1337)
    compiled = torch.compile(model)

    def run() -> list[float]:
        out = []
        with fast_attention(model):  # traced on the fast path, as the trainer trains
            for _ in range(turn):
                t0 = time.perf_counter()
                x, y = get_batch(data, r["batch_size"], r["block_size"], gen)
                train_step(compiled, (x, y), opt, r["grad_clip"])
                out.append(time.perf_counter() - t0)
        return out
    try:
        first = run()
    except Exception as e:  # inductor's InvalidCxxCompiler (a RuntimeError) and whatever else stops a compile
        print(f"  torch.compile: unavailable here ({type(e).__name__}: {str(e).splitlines()[0][:160]})")
        return None
    done = [first]

    def turn_fn() -> list[float]:
        return done.pop() if done else run()
    return turn_fn


PRODUCTS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::_scaled_dot_product_flash_attention_for_cpu",
            "aten::_scaled_dot_product_flash_attention_for_cpu_backward")
"""The profiler's names of the matrix products and of attention's kernels, forward and backward."""


def step_profile(vocab_size: int, data, turn: int) -> dict[str, float]:
    """The trainer's step under ``torch.profiler`` (``turn`` steps after a warm-up turn): ``products_share`` of its
    self CPU time in :data:`PRODUCTS`, ``products_ms`` per step (scaled to the unprofiled step), and the GFLOP/s of
    fp32 products at the step's feed-forward shape (768 x 128 x 512) and at 1024 x 1024 x 1024."""
    import torch

    from tinylm_solutions.data import get_batch
    from tinylm_solutions.model import TinyLM, small_init_std
    from tinylm_solutions.train import train_step
    from tinylm_solutions.trainer import fast_attention, make_optimizer

    r = RECIPE
    model = TinyLM(vocab_size, r["block_size"], r["n_embd"], r["n_head"], r["n_layer"], 4 * r["n_embd"],
                   init_std=small_init_std(r["n_embd"]))
    opt = make_optimizer(model, r["lr"], (0.9, r["beta2"]), r["weight_decay"], decay_2d_only=True, fused=True)
    gen = torch.Generator().manual_seed(1337)
    with fast_attention(model):
        for profiled in (False, True):
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) if profiled else \
                    contextlib.nullcontext() as prof:
                for _ in range(turn):
                    train_step(model, get_batch(data, r["batch_size"], r["block_size"], gen), opt, r["grad_clip"])
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    products = sum(e.self_cpu_time_total for e in events if e.key in PRODUCTS)

    def gflops(m: int, k: int, n: int) -> float:
        a, b = torch.randn(m, k), torch.randn(k, n)
        for _ in range(3):
            a @ b
        reps = max(5, int(2e9 // (2 * m * k * n)))
        t0 = time.perf_counter()
        for _ in range(reps):
            a @ b
        return 2 * m * k * n * reps / (time.perf_counter() - t0) / 1e9
    return {"products_share": products / total, "gflops_step": gflops(768, 128, 512),
            "gflops_large": gflops(1024, 1024, 1024)}



def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=str(ROOT.parent / "shared" / "data" / "tinyshakespeare.txt"),
                   help="a UTF-8 text file (default: ../shared/data/tinyshakespeare.txt next to the project)")
    p.add_argument("--nanogpt", default=str(NANOGPT_GIT), help="nanoGPT's git directory (bare or .git)")
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=RECIPE["warmup"], help="warmup steps (fewer for short runs)")
    p.add_argument("--eval-interval", type=int, default=250)
    p.add_argument("--eval-iters", type=int, default=20)
    p.add_argument("--threads", type=int, default=2, help="OMP_NUM_THREADS / torch threads of every run")
    p.add_argument("--only", default="nanogpt,tinylm,tinylm_fast,tinylm_gpt2init,tinylm_taught,encoder",
                   help="comma-separated subset of the runs")
    p.add_argument("--record", metavar="JSON", help="write the run's numbers to this file (the README quotes them)")
    p.add_argument("--interleaved", type=int, metavar="ROUNDS",
                   help="instead: the step times alone, the four models taking turns of 25 steps, ROUNDS rounds")
    p.add_argument("--ceiling", action="store_true",
                   help="with --interleaved: also the compiled trainer's step and what bounds the step (its profile)")
    p.add_argument("--worker", choices=["tinylm", "tinylm_fast", "tinylm_gpt2init", "tinylm_taught", "encoder"],
                   help=argparse.SUPPRESS)
    p.add_argument("--fast-recipe", metavar="JSON", help="the faster recipe's settings, to try others (default: "
                   f"{json.dumps(FAST)})")
    p.add_argument("--data-dir", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.fast_recipe:
        FAST.update(json.loads(a.fast_recipe))
    corpus = Path(a.corpus).resolve()
    RECIPE["warmup"] = a.warmup
    if a.worker:
        print(json.dumps(worker(a.worker, Path(a.data_dir), corpus, a.iters, a.eval_interval, a.eval_iters,
                                a.threads)))
        return 0
    if not corpus.is_file():
        p.error(f"corpus {a.corpus}: no such file")
    git_dir = Path(a.nanogpt)
    git_dir = git_dir / ".git" if (git_dir / ".git").exists() else git_dir
    if a.interleaved:
        print(f"{a.interleaved} rounds of 25 steps each, {a.threads} threads; load average {os.getloadavg()[0]:.1f}")
        ms = interleaved(git_dir, corpus, a.interleaved, a.threads, ceiling=a.ceiling)
        names = {"nanogpt": "nanoGPT", "tinylm": "TinyLM (reference)", "tinylm_taught": "TinyLM, taught path",
                 "encoder": "nn.TransformerEncoder", "tinylm_compiled": "TinyLM, torch.compile"}
        for kind, value in ms.items():
            if kind in names:
                print(f"  {names[kind]:<22} {value:6.2f} ms/step")
        print(f"TinyLM (reference) / nanoGPT: {ms['tinylm'] / ms['nanogpt']:.2f}x (goal 0.8x)")
        print(f"TinyLM, taught path / nn.TransformerEncoder: {ms['tinylm_taught'] / ms['encoder']:.2f}x (goal 1.0x)")
        if "tinylm_compiled" in ms:
            print(f"TinyLM, torch.compile / nanoGPT: {ms['tinylm_compiled'] / ms['nanogpt']:.2f}x, after a first "
                  f"step (the compilation) of {ms['compile_s']:.1f} s")
        if "products_share" in ms:
            floor = ms["products_share"] * ms["tinylm"] / ms["nanogpt"]
            print(f"The trainer's step (profiled): {ms['products_share']:.0%} of its time in matrix products and "
                  f"attention, which nanoGPT's step computes alike; fp32 products at its feed-forward shape run at "
                  f"{ms['gflops_step']:.0f} GFLOP/s, one of 1024^3 at {ms['gflops_large']:.0f}. With all else free, "
                  f"its step would be {floor:.2f}x nanoGPT's.")
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
        if a.record:
            Path(a.record).parent.mkdir(parents=True, exist_ok=True)
            Path(a.record).write_text(json.dumps({
                "date": time.strftime("%Y-%m-%d"),
                "command": " ".join(["benchmarks/bench_nanogpt.py", *(argv or sys.argv[1:])]),
                "corpus": corpus.name, "rounds": a.interleaved, "threads": a.threads, "cpus": os.cpu_count(),
                "ms_per_step": {k: round(v, 2) for k, v in ms.items() if k in names},
                **{k: round(v, 3) for k, v in ms.items() if k not in names}}, indent=1) + "\n")
            print(f"recorded in {a.record}")
        return 0
    env = {**os.environ, "OMP_NUM_THREADS": str(a.threads), "MKL_NUM_THREADS": str(a.threads),
           "PYTHONPATH": str(ROOT)}
    runs = [k for k in a.only.split(",") if k]
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench_nanogpt_") as tmp:
        tmp = Path(tmp)
        info = write_dataset(corpus, tmp / "data")
        print(f"{corpus.name}: {info['chars']:,} chars, vocab {info['vocab']}, train {info['train']:,} / "
              f"val {info['val']:,} tokens; {a.iters} iterations, {a.threads} threads; load average "
              f"{os.getloadavg()[0]:.1f} at start", flush=True)
        for kind in runs:
            if kind == "nanogpt":
                results[kind] = run_nanogpt(git_dir, corpus, tmp, a.iters, a.eval_interval, a.eval_iters, env)
            else:
                results[kind] = run_worker(kind, tmp / "data", corpus, a.iters, a.eval_interval, a.eval_iters,
                                           a.threads, env)
            r = results[kind]
            print(f"  {kind}: {r['wall_s']:.1f} s, {r['ms_per_step']:.2f} ms/step, val loss {r['val_loss']:.4f}; "
                  f"val by step {r['evals']}", flush=True)
    names = {"nanogpt": "nanoGPT", "tinylm": "TinyLM (reference)", "tinylm_fast": "TinyLM, faster recipe",
             "tinylm_gpt2init": "TinyLM, GPT-2's 0.02", "tinylm_taught": "TinyLM, taught path",
             "encoder": "nn.TransformerEncoder"}
    target = results["nanogpt"]["val_loss"] if "nanogpt" in results else None
    for r in results.values():
        r["to_quality_s"] = None if target is None else to_quality(r, target)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end\n")
    quality = "-" if target is None else f"val <= {target:.3f} at"
    print(f"| {'run':<22} | {'params':>7} | {'wall s':>7} | {'ms/step':>8} | {'val loss':>8} | {quality:>19} |")
    print(f"|{'-' * 24}|{'-' * 9}|{'-' * 9}|{'-' * 10}|{'-' * 10}|{'-' * 21}|")
    for kind, r in results.items():
        t = r["to_quality_s"]
        reached = "-" if t is None else f"{t:.1f} s ({t / results['nanogpt']['wall_s']:.2f}x)"
        print(f"| {names[kind]:<22} | {r['params'] / 1e6:>6.2f}M | {r['wall_s']:>7.1f} | {r['ms_per_step']:>8.2f} | "
              f"{r['val_loss']:>8.4f} | {reached:>19} |")
    if a.record:
        record = {"date": time.strftime("%Y-%m-%d"), "command": " ".join(["benchmarks/bench_nanogpt.py", *(argv or sys.argv[1:])]),
                  "corpus": corpus.name, "iters": a.iters, "threads": a.threads, "cpus": os.cpu_count(),
                  "load_average_end": round(os.getloadavg()[0], 2),
                  "fast_recipe": FAST, "target_val_loss": target,
                  "runs": {kind: {k: r[k] for k in ("params", "wall_s", "ms_per_step", "val_loss", "to_quality_s",
                                                    "evals", "eval_s")}
                           for kind, r in results.items()}}
        Path(a.record).parent.mkdir(parents=True, exist_ok=True)
        Path(a.record).write_text(json.dumps(record, indent=1) + "\n")
        print(f"recorded in {a.record}")
    print()
    for run, peer in RATIOS:
        if run in results and peer in results:
            t, o = results[run], results[peer]
            print(f"{names[run]} / {names[peer]}: wall {t['wall_s'] / o['wall_s']:.2f}x, "
                  f"ms/step {t['ms_per_step'] / o['ms_per_step']:.2f}x, val loss {t['val_loss'] - o['val_loss']:+.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
