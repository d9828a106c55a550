"""The reference trainer's command lines: ``tinylm-train`` and ``tinylm-generate``.

::

    tinylm-train [--config FILE] [--corpus PATH] [--checkpoint PATH [--resume]] [--steps N] [--d-model D] ...
    tinylm-generate --checkpoint PATH --prompt TEXT [--tokens N] [--temperature T] [--top-k K] [--seed S]

Settings come from the package's ``configs/tinylm.yaml``, then from the ``--config`` file, then from the
command line. The corpus is the embedded one (:func:`~tinylm_solutions.data.default_corpus`) unless
``--corpus`` names a UTF-8 text file. With ``--checkpoint`` the run writes the model, the optimizer, the
step, the batch sampler's and torch's random states, the tokenizer and the settings there at every
evaluation; ``--resume`` continues from it exactly (the same batches in the same order, as if the run had
never stopped).

Past one machine it trains data-parallel on PyTorch's own engine: ``torchrun --nproc_per_node=2 -m
tinylm_solutions.cli ...`` runs one process per rank (``DistributedDataParallel``, the gloo backend on
CPU); each trains on its share of every global batch of ``--batch-size`` rows, and rank 0 prints, evaluates
the same model and writes the checkpoint.

Bad input never gives a traceback: one line ``tinylm-train: error: ...`` on stderr and exit status 2 (a
missing, empty or non-UTF-8 corpus, a corpus shorter than one block, an unknown or mistyped config key,
a checkpoint of another vocabulary or model, a file that is not a checkpoint).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch
import yaml

from .data import default_corpus, train_val_split
from .generate import generate
from .model import TinyLM, small_init_std
from .tokenizer import CharTokenizer, WordTokenizer
from .train import perplexity
from .trainer import lr_at, make_optimizer, train

DEFAULTS = Path(__file__).resolve().parent / "configs" / "tinylm.yaml"
MODEL_KEYS = ("block_size", "d_model", "num_heads", "num_layers", "d_ff", "dropout")
TYPES = {"tokenizer": str, "lr": float, "dropout": float, "max_grad_norm": float, "temperature": float,
         "min_lr": float, "init_std": float, "beta1": float, "beta2": float, "weight_decay": float}


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit status 2."""


def _fail(prog: str, e: Exception) -> int:
    print(f"{prog}: error: {e}", file=sys.stderr)
    return 2


def load_settings(config: str | None, overrides: dict) -> dict:
    """The package's defaults, updated by the YAML file ``config`` and then by ``overrides`` (not None).

    Raises:
        UsageError: the file is missing or not YAML, or has a key the defaults do not have, or a value of
            the wrong type.
    """
    settings = yaml.safe_load(DEFAULTS.read_text(encoding="utf-8"))
    if config is not None:
        path = Path(config)
        if not path.is_file():
            raise UsageError(f"config {config}: no such file")
        try:
            given = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as e:
            raise UsageError(f"config {config} is not a YAML file: {str(e).splitlines()[0]}") from None
        if not isinstance(given, dict):
            raise UsageError(f"config {config} must be a mapping of settings (key: value)")
        unknown = sorted(set(given) - set(settings))
        if unknown:
            raise UsageError(f"config {config}: unknown key {unknown[0]!r} (known: {', '.join(sorted(settings))})")
        for key, value in given.items():
            settings[key] = _typed(key, value, settings[key], f"config {config}")
    settings.update({k: v for k, v in overrides.items() if v is not None})
    if settings["tokenizer"] not in ("char", "word"):
        raise UsageError(f"tokenizer must be char or word, not {settings['tokenizer']!r}")
    return settings


def _typed(key: str, value, default, where: str):
    """``value`` of setting ``key`` as the type of its default (an int is accepted for a float)."""
    kind = TYPES.get(key, type(default) if default is not None else int)
    if value is None:
        return None
    if kind is float and type(value) is int:
        return float(value)
    if type(value) is not kind:
        raise UsageError(f"{where}: {key} must be {kind.__name__}, not {value!r}")
    return value


def _flag(text: str) -> bool:
    """A command-line boolean: true/false, yes/no, on/off or 1/0."""
    value = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}
    if text.lower() not in value:
        raise argparse.ArgumentTypeError(f"expected true or false, not {text!r}")
    return value[text.lower()]


def read_corpus(path: str | None, max_chars: int | None) -> str:
    """The text to train on: the file ``path`` (UTF-8), else the embedded corpus.

    Raises:
        UsageError: the file is missing, not UTF-8, or empty.
    """
    if path is None:
        return default_corpus(max_chars=max_chars)
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"corpus {path}: no such file")
    data = p.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"corpus {path} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None
    if not text.strip():
        raise UsageError(f"corpus {path} is empty")
    return text[:max_chars] if max_chars is not None else text


def make_tokenizer(kind: str, text: str):
    return CharTokenizer(text) if kind == "char" else WordTokenizer(text, min_freq=2)


def _vocab(tok) -> list:
    """A tokenizer's vocabulary as data: ``[kind, tokens]``."""
    return ["char", list(tok.chars)] if isinstance(tok, CharTokenizer) else ["word", list(tok.itos)]


def _tokenizer_from(vocab: list):
    kind, items = vocab
    return CharTokenizer("".join(items)) if kind == "char" else WordTokenizer.from_vocab(items)


def load_checkpoint(path: str) -> dict:
    """A checkpoint written by ``tinylm-train --checkpoint`` (``torch.load(weights_only=True)``).

    Raises:
        UsageError: no such file, or not a tinylm checkpoint.
    """
    if not Path(path).is_file():
        raise UsageError(f"checkpoint {path}: no such file")
    try:
        ckpt = torch.load(path, weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many kinds for a file that is not a checkpoint
        raise UsageError(f"{path} is not a tinylm checkpoint ({type(e).__name__})") from None
    if not isinstance(ckpt, dict) or not {"model", "model_config", "vocab"} <= ckpt.keys():
        raise UsageError(f"{path} is not a tinylm checkpoint")
    return ckpt


def train_main(argv: list[str] | None = None) -> int:
    """``tinylm-train``: train a TinyLM, print its validation loss and a sample. Returns the exit status."""
    defaults = yaml.safe_load(DEFAULTS.read_text(encoding="utf-8"))
    p = argparse.ArgumentParser(prog="tinylm-train", description=__doc__.splitlines()[0],
                                argument_default=None)
    p.add_argument("--config", help="a YAML file of settings (keys as in configs/tinylm.yaml)")
    p.add_argument("--corpus", help="a UTF-8 text file to train on (default: the embedded corpus)")
    p.add_argument("--checkpoint", help="write the run's state here at every evaluation")
    p.add_argument("--resume", action="store_true", help="continue the run saved in --checkpoint")
    p.add_argument("--no-progress", action="store_true")
    for key, value in defaults.items():
        kind = TYPES.get(key, type(value) if value is not None else int)
        p.add_argument("--" + key.replace("_", "-"), type=_flag if kind is bool else kind, dest=key,
                       help=f"default {value!r}")
    args = vars(p.parse_args(argv))
    try:
        return _train(args)
    except UsageError as e:
        return _fail("tinylm-train", e)


def _train(args: dict) -> int:
    keys = yaml.safe_load(DEFAULTS.read_text(encoding="utf-8"))
    s = load_settings(args.pop("config"), {k: args.get(k) for k in keys})
    if args["resume"] and not args["checkpoint"]:
        raise UsageError("--resume needs --checkpoint PATH (the run to continue)")
    text = read_corpus(args["corpus"], s["max_chars"])
    ckpt = load_checkpoint(args["checkpoint"]) if args["resume"] else None
    tok = make_tokenizer(s["tokenizer"], text)
    if ckpt and list(ckpt["vocab"]) != list(_vocab(tok)):
        raise UsageError(f"checkpoint {args['checkpoint']} was trained on another vocabulary "
                         f"({len(ckpt['vocab'][1])} {ckpt['vocab'][0]} tokens; this corpus gives {tok.vocab_size} "
                         f"{s['tokenizer']} tokens)")
    data = torch.tensor(tok.encode(text), dtype=torch.long)  # (N,)
    train_data, val_data = train_val_split(data, 0.1)
    need = s["block_size"] + 1
    if len(val_data) < need:
        raise UsageError(f"the corpus has {len(data):,} tokens: too short for block_size {s['block_size']} "
                         f"(validation, a tenth of it, needs at least {need}, so at least {10 * need} in all)")
    model_config = dict(vocab_size=tok.vocab_size, max_seq_len=s["block_size"], d_model=s["d_model"],
                        num_heads=s["num_heads"], num_layers=s["num_layers"], d_ff=s["d_ff"] or 4 * s["d_model"],
                        dropout=s["dropout"])
    if ckpt:
        differ = [k for k in model_config if ckpt["model_config"].get(k) != model_config[k]]
        if differ:
            k = differ[0]
            raise UsageError(f"checkpoint {args['checkpoint']} is a model with {k} = {ckpt['model_config'].get(k)}, "
                             f"these settings give {model_config[k]}")
    try:  # a schedule that cannot be followed is reported before any training
        lr_at(0, s["lr"], s["warmup_steps"], s["min_lr"], s["lr_decay_steps"] or s["steps"])
    except ValueError as e:
        raise UsageError(str(e)) from None
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and s["batch_size"] % world:
        raise UsageError(f"batch_size {s['batch_size']} must be a multiple of the {world} processes")
    torch.manual_seed(s["seed"])
    try:
        model = TinyLM(**model_config, init_std=s["init_std"] or small_init_std(s["d_model"]))
    except ValueError as e:
        raise UsageError(str(e)) from None
    optimizer = make_optimizer(model, s["lr"], (s["beta1"], s["beta2"]), s["weight_decay"], s["decay_2d_only"],
                               s["fused_adamw"])
    rank, trained = 0, model
    if world > 1:  # torchrun: one process per rank; gradients averaged over them
        import torch.distributed as dist
        dist.init_process_group("gloo")
        rank = dist.get_rank()
        trained = torch.nn.parallel.DistributedDataParallel(model)
    gen = torch.Generator().manual_seed(s["seed"])
    start, history = 0, None
    if ckpt:
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        gen.set_state(ckpt["generator"])
        torch.set_rng_state(ckpt["torch_rng"])
        start, history = int(ckpt["step"]), ckpt["history"]
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"corpus: {len(text):,} chars -> {len(data):,} tokens, vocab {tok.vocab_size}; "
        f"model: {model.get_num_params(non_embedding=False):,} parameters"
        + (f"; resuming at step {start}" if ckpt else "") + (f"; {world} processes" if world > 1 else ""))

    def save(step: int, record: dict) -> None:
        if rank == 0 and args["checkpoint"] and ("val_loss" in record or step == s["steps"]):
            torch.save({"model": model.state_dict(), "model_config": model_config, "optimizer": optimizer.state_dict(),
                        "generator": gen.get_state(), "torch_rng": torch.get_rng_state(), "step": step,
                        "history": hist, "vocab": _vocab(tok), "settings": s}, args["checkpoint"])

    hist = history or {"step": [], "loss": [], "grad_norm": [], "tokens_per_s": [], "val_step": [], "val_loss": []}
    train(trained, train_data, val_data, steps=s["steps"], batch_size=s["batch_size"], block_size=s["block_size"],
          lr=s["lr"], max_grad_norm=s["max_grad_norm"], eval_interval=s["eval_interval"], seed=s["seed"],
          progress=not args["no_progress"] and rank == 0, callback=save, optimizer=optimizer, generator=gen,
          start_step=start, history=hist, shard=(rank, world), warmup_steps=s["warmup_steps"], min_lr=s["min_lr"],
          lr_decay_steps=s["lr_decay_steps"], fast=s["fast_attention"])
    if world > 1:
        torch.distributed.destroy_process_group()
    if hist["val_loss"]:
        val = hist["val_loss"][-1]
        say(f"step {s['steps']}: train loss {hist['loss'][-1]:.4f}, val loss {val:.4f}, "
            f"val perplexity {perplexity(val):.2f}")
    if s["sample_tokens"] > 0 and rank == 0:
        out = generate(model, data[:1].view(1, 1), s["sample_tokens"], s["temperature"], s["top_k"],
                       generator=torch.Generator().manual_seed(s["seed"]))
        print("sample:\n" + tok.decode(out[0].tolist()))
    return 0


def generate_main(argv: list[str] | None = None) -> int:
    """``tinylm-generate``: continue a prompt with a checkpoint's model. Returns the exit status."""
    p = argparse.ArgumentParser(prog="tinylm-generate", description="Continue a prompt with a trained TinyLM.")
    p.add_argument("--checkpoint", required=True, help="written by tinylm-train --checkpoint")
    p.add_argument("--prompt", required=True)
    p.add_argument("--tokens", type=int, default=200, help="how many tokens to add")
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--top-k", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    try:
        ckpt = load_checkpoint(args.checkpoint)
        tok = _tokenizer_from(ckpt["vocab"])
        try:
            ids = tok.encode(args.prompt)
        except ValueError as e:
            raise UsageError(f"the prompt has {e}") from None
        if not ids:
            raise UsageError("the prompt gives no tokens: give at least one known word or character")
        if args.temperature <= 0 or args.tokens < 0 or (args.top_k is not None and args.top_k < 1):
            raise UsageError("--temperature must be > 0, --tokens >= 0 and --top-k >= 1")
        model = TinyLM(**ckpt["model_config"])
        model.load_state_dict(ckpt["model"])
    except UsageError as e:
        return _fail("tinylm-generate", e)
    model.eval()
    out = generate(model, torch.tensor([ids]), args.tokens, args.temperature, args.top_k,
                   generator=torch.Generator().manual_seed(args.seed))  # (1, len(ids) + tokens)
    print(tok.decode(out[0].tolist()))
    return 0


if __name__ == "__main__":
    raise SystemExit(train_main())
