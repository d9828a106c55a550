"""The reference trainer's command lines: ``tinylm-train`` and ``tinylm-generate``.

::

    tinylm-train [--config FILE] [--corpus en|zh|PATH] [--checkpoint PATH [--resume]] [--steps N] [--d-model D] ...
    tinylm-generate --checkpoint PATH --prompt TEXT [--tokens N] [--temperature T] [--top-k K] [--seed S]

Settings come from the package's ``configs/tinylm.yaml``, then from the ``--config`` file, then from the
command line. The corpus is the embedded English one (``--corpus en``, the default:
:func:`~tinylm_solutions.data.default_corpus`), the embedded Chinese one (``--corpus zh``: Tang poems,
:func:`~tinylm_solutions.data.chinese_corpus`), or the UTF-8 text file ``--corpus`` names. With ``--checkpoint``
the run writes the model, the optimizer, the step, the batch sampler's and torch's random states, the tokenizer
and the settings there at every evaluation; ``--resume`` continues from it exactly (the same batches in the same
order, as if the run had never stopped).

Past one machine it trains data-parallel on PyTorch's own engine: ``torchrun --nproc_per_node=2 -m
tinylm_solutions.cli ...`` runs one process per rank (``DistributedDataParallel``, the gloo backend on
CPU); each trains on its share of every global batch of ``--batch-size`` rows, and rank 0 prints, evaluates
the same model and writes the checkpoint.

Every sentence they print is in the user's language (:func:`tinylm_solutions.i18n.language`: ``TINYLM_LANG``,
else the locale), from :mod:`tinylm_solutions.messages`; argparse's own words ("usage:", "the following arguments
are required") too (:func:`tinylm_solutions.messages.argparse_words`). Bad input never gives a traceback: one line ``tinylm-train: error: ...`` on stderr
and exit status 2 (a missing, unreadable, empty or non-UTF-8 corpus or config, a corpus shorter than it needs to be
for the block size, an unknown, mistyped or out-of-range setting, a checkpoint of another vocabulary or model, a
file that is not a checkpoint, a checkpoint that cannot be written, a run whose loss diverges, a prompt the model
cannot read).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

import torch
import yaml
from tqdm.auto import tqdm

from .data import CORPORA, ZH_CORPUS, corpus, train_val_split
from .generate import generate
from .messages import TEXT, ArgumentParser, error_line, say
from .model import TinyLM, small_init_std
from .tokenizer import CharTokenizer, WordTokenizer
from .train import perplexity
from .trainer import lr_at, make_optimizer, train

DEFAULTS = Path(__file__).resolve().parent / "configs" / "tinylm.yaml"
MODEL_KEYS = ("block_size", "d_model", "num_heads", "num_layers", "d_ff", "dropout")
TYPES = {"tokenizer": str, "lr": float, "dropout": float, "max_grad_norm": float, "temperature": float,
         "min_lr": float, "init_std": float, "beta1": float, "beta2": float, "weight_decay": float}
NULLABLE = ("max_grad_norm",)
"""Settings that may be null although their default is not (null: no clipping); every setting whose default is
null may be null too."""
VAL_FRACTION = 0.1
CHECKPOINT_KEYS = ("model", "model_config", "vocab")
RESUME_KEYS = ("optimizer", "generator", "torch_rng", "step", "history")
HISTORY_KEYS = {"step", "loss", "grad_norm", "tokens_per_s", "val_step", "val_loss"}


class UsageError(Exception):
    """Bad input from the user, its message already in the user's language: reported as one line, exit status 2."""


def _fail(prog: str, e: Exception) -> int:
    print(error_line(prog, " ".join(str(e).splitlines())), file=sys.stderr, end="")
    return 2


class _Parser(ArgumentParser):
    """argparse in the user's language, whose usage errors are one line too: ``prog: error: <argparse's message> (see
    prog --help)``."""

    def error(self, message: str):
        self.exit(2, error_line(self.prog, say("error.see_help", message=message, prog=self.prog)))


def _show(value) -> str:
    """A setting's value as YAML writes it (``null``, ``true``), for help texts."""
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()


def _help(text: str) -> str:
    return text.replace("%", "%%")  # argparse %-formats help texts


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(say("error.not_int", value=repr(text))) from None


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(say("error.not_number", value=repr(text))) from None


def _flag(text: str) -> bool:
    """A command-line boolean: true/false, yes/no, on/off or 1/0."""
    value = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}
    if text.lower() not in value:
        raise argparse.ArgumentTypeError(say("error.not_flag", value=repr(text)))
    return value[text.lower()]


def _kind(key: str, default) -> type:
    return TYPES.get(key, type(default) if default is not None else int)


def load_settings(config: str | None, overrides: dict) -> dict:
    """The package's defaults, updated by the YAML file ``config`` and then by ``overrides`` (not None), checked
    (:func:`check_settings`).

    Raises:
        UsageError: the file is missing, unreadable or not YAML, or has a key the defaults do not have, or a value
            of the wrong type; or a setting is out of its range.
    """
    settings = yaml.safe_load(DEFAULTS.read_text(encoding="utf-8"))
    if config is not None:
        path = Path(config)
        if not path.is_file():
            raise UsageError(say("error.config_missing", path=config))
        try:
            data = path.read_bytes()
        except OSError as e:
            raise UsageError(say("error.config_unreadable", path=config, reason=e.strerror or type(e).__name__)) \
                from None
        try:
            given = yaml.safe_load(data.decode("utf-8")) or {}
        except UnicodeDecodeError as e:
            raise UsageError(say("error.config_not_utf8", path=config, byte=f"{data[e.start]:02x}",
                                 offset=e.start)) from None
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            raise UsageError(say("error.config_not_yaml", path=config, line=mark.line + 1 if mark else 1,
                                 column=mark.column + 1 if mark else 1,
                                 problem=getattr(e, "problem", None) or str(e).splitlines()[0])) from None
        if not isinstance(given, dict):
            raise UsageError(say("error.config_not_mapping", path=config))
        unknown = sorted(set(given) - set(settings), key=str)
        if unknown:
            raise UsageError(say("error.config_unknown_key", path=config, key=repr(unknown[0]),
                                 known=", ".join(sorted(settings))))
        for key, value in given.items():
            try:
                settings[key] = _typed(key, value, settings[key])
            except UsageError as e:
                raise UsageError(say("error.in_config", path=config, problem=e)) from None
    settings.update({k: v for k, v in overrides.items() if v is not None})
    check_settings(settings)
    return settings


def _typed(key: str, value, default):
    """``value`` of setting ``key`` as the type of its default (an int is accepted for a float, and so is a string
    YAML did not read as one, such as ``3e-4``); null only where the default is null (or ``key`` is NULLABLE)."""
    kind = _kind(key, default)
    if value is None:
        if default is None or key in NULLABLE:
            return None
        raise UsageError(say("error.null", key=key, kind=kind.__name__))
    if kind is float and type(value) is int:
        return float(value)
    if kind is float and type(value) is str:
        try:
            return float(value)
        except ValueError:
            pass
    if type(value) is not kind:
        raise UsageError(say("error.wrong_type", key=key, kind=kind.__name__, value=repr(value)))
    return value


def check_settings(s: dict) -> None:
    """Every setting in its range, before anything is built or trained.

    Raises:
        UsageError: the first setting that is not.
    """
    def at_least(key: str, minimum: int, nullable: bool = False):
        if key in s and not (s[key] is None and nullable) and not (type(s[key]) is int and s[key] >= minimum):
            raise UsageError(say("error.int_at_least", key=key, minimum=minimum, value=s[key]))

    def number(key: str, message: str, ok, nullable: bool = False):
        value = s.get(key)
        if key in s and not (value is None and nullable) and \
                not (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                     and ok(value)):
            raise UsageError(say(message, key=key, value=value))

    if s["tokenizer"] not in ("char", "word"):
        raise UsageError(say("error.tokenizer", value=repr(s["tokenizer"])))
    for key in ("block_size", "d_model", "num_heads", "steps", "batch_size", "eval_interval"):
        at_least(key, 1)
    for key in ("num_layers", "warmup_steps", "sample_tokens"):
        at_least(key, 0)
    for key in ("d_ff", "max_chars", "lr_decay_steps", "top_k"):
        at_least(key, 1, nullable=True)
    if s["d_model"] % s["num_heads"]:
        raise UsageError(say("error.heads", d_model=s["d_model"], num_heads=s["num_heads"]))
    number("lr", "error.positive_number", lambda v: v > 0)
    number("init_std", "error.positive_number", lambda v: v > 0, nullable=True)
    number("max_grad_norm", "error.positive_number", lambda v: v > 0, nullable=True)
    number("temperature", "error.positive_number", lambda v: v > 0)
    number("min_lr", "error.non_negative", lambda v: v >= 0, nullable=True)
    number("weight_decay", "error.non_negative", lambda v: v >= 0)
    for key in ("dropout", "beta1", "beta2"):
        number(key, "error.fraction", lambda v: 0 <= v < 1)
    if not (type(s["seed"]) is int and 0 <= s["seed"] < 2 ** 63):
        raise UsageError(say("error.seed", value=s["seed"]))
    try:  # a schedule that cannot be followed is reported before any training
        lr_at(0, s["lr"], s["warmup_steps"], s["min_lr"], s["lr_decay_steps"] or s["steps"])
    except ValueError:
        raise UsageError(say("error.schedule", warmup_steps=s["warmup_steps"],
                             decay_steps=s["lr_decay_steps"] or s["steps"])) from None


def read_corpus(path: str | None, max_chars: int | None) -> str:
    """The text to train on: ``en`` (also when ``path`` is None) or ``zh``, the embedded corpora
    (:func:`~tinylm_solutions.data.corpus`), else the file ``path`` (UTF-8).

    Raises:
        UsageError: the file is missing, unreadable, not UTF-8, or empty.
    """
    if path is None or path in CORPORA:
        try:
            return corpus(path or "en", max_chars=max_chars)
        except FileNotFoundError:
            raise UsageError(say("error.zh_corpus_missing", path=ZH_CORPUS)) from None
        except RuntimeError:
            raise UsageError(say("error.no_docstrings")) from None
    p = Path(path)
    if p.is_dir():
        raise UsageError(say("error.corpus_is_dir", path=path))
    if not p.is_file():
        raise UsageError(say("error.corpus_missing", path=path))
    try:
        data = p.read_bytes()
    except OSError as e:
        raise UsageError(say("error.corpus_unreadable", path=path, reason=e.strerror or type(e).__name__)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(say("error.corpus_not_utf8", path=path, byte=f"{data[e.start]:02x}",
                             offset=e.start)) from None
    if not text.strip():
        raise UsageError(say("error.corpus_empty", path=path))
    return text[:max_chars] if max_chars is not None else text


def make_tokenizer(kind: str, text: str):
    return CharTokenizer(text) if kind == "char" else WordTokenizer(text, min_freq=2)


def _vocab(tok) -> list:
    """A tokenizer's vocabulary as data: ``[kind, tokens]``."""
    return ["char", list(tok.chars)] if isinstance(tok, CharTokenizer) else ["word", list(tok.itos)]


def _tokenizer_from(vocab: list):
    kind, items = vocab
    return CharTokenizer("".join(items)) if kind == "char" else WordTokenizer.from_vocab(items)


def min_tokens(block_size: int, val_fraction: float = VAL_FRACTION) -> int:
    """The fewest tokens a corpus can have for ``block_size``: its last ``val_fraction`` (validation) and the
    rest (training) must each hold ``block_size + 1`` tokens, one example (``train_val_split``, ``get_batch``)."""
    n = math.ceil((block_size + 1) / val_fraction)
    while int(n * val_fraction) < block_size + 1 or n - int(n * val_fraction) < block_size + 1:
        n += 1
    while n > 1 and int((n - 1) * val_fraction) >= block_size + 1:
        n -= 1
    return n


def load_checkpoint(path: str, resume: bool = False) -> dict:
    """A checkpoint written by ``tinylm-train --checkpoint`` (``torch.load(weights_only=True)``); with ``resume``,
    one that has what a run needs to continue.

    Raises:
        UsageError: no such file, or not a tinylm checkpoint.
    """
    if not Path(path).is_file():
        raise UsageError(say("error.checkpoint_missing", path=path))
    try:
        ckpt = torch.load(path, weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many kinds for a file that is not a checkpoint
        raise UsageError(say("error.not_checkpoint", path=path, error=type(e).__name__)) from None
    if not isinstance(ckpt, dict):
        raise UsageError(say("error.checkpoint_lacks", path=path, keys=", ".join(CHECKPOINT_KEYS)))
    lacks = [k for k in CHECKPOINT_KEYS + (RESUME_KEYS if resume else ()) if k not in ckpt]
    if lacks:
        raise UsageError(say("error.checkpoint_lacks", path=path, keys=", ".join(lacks)))
    vocab = ckpt["vocab"]
    if not (isinstance(ckpt["model_config"], dict) and isinstance(vocab, (list, tuple)) and len(vocab) == 2
            and vocab[0] in ("char", "word") and isinstance(vocab[1], (list, tuple))
            and all(isinstance(t, str) for t in vocab[1])):
        raise UsageError(say("error.checkpoint_damaged", path=path, part="vocab, model_config", error="format"))
    return ckpt


def _model_from(ckpt: dict, path: str) -> TinyLM:
    """The model of a checkpoint, its weights loaded."""
    try:
        model = TinyLM(**ckpt["model_config"])
    except (TypeError, ValueError) as e:
        raise UsageError(say("error.checkpoint_damaged", path=path, part="model_config", error=type(e).__name__)) \
            from None
    _load(path, "model", lambda: model.load_state_dict(ckpt["model"]))
    return model


def _load(path: str, part: str, load) -> None:
    try:
        load()
    except Exception as e:  # noqa: BLE001 - a damaged state raises RuntimeError, ValueError, KeyError, TypeError...
        raise UsageError(say("error.checkpoint_damaged", path=path, part=part, error=type(e).__name__)) from None


def _writable(path: str) -> None:
    """Fail now, not after the first evaluation, when the checkpoint ``path`` cannot be written."""
    p = Path(path)
    if p.is_dir():
        raise UsageError(say("error.checkpoint_is_dir", path=path, example=p / "run.pt"))
    folder = p.parent
    if not folder.is_dir():
        raise UsageError(say("error.checkpoint_no_folder", path=path, folder=folder))
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UsageError(say("error.checkpoint_unwritable", path=path, reason=os.strerror(13)))


def train_main(argv: list[str] | None = None) -> int:
    """``tinylm-train``: train a TinyLM, print its validation loss and a sample. Returns the exit status."""
    defaults = yaml.safe_load(DEFAULTS.read_text(encoding="utf-8"))
    p = _Parser(prog="tinylm-train", description=_help(say("train.description")), epilog=_help(say("train.epilog")),
                argument_default=None)
    p.add_argument("--config", help=_help(say("train.help.config")))
    p.add_argument("--corpus", help=_help(say("train.help.corpus")))
    p.add_argument("--checkpoint", help=_help(say("train.help.checkpoint")))
    p.add_argument("--resume", action="store_true", help=_help(say("train.help.resume")))
    p.add_argument("--no-progress", action="store_true", help=_help(say("train.help.no_progress")))
    for key, value in defaults.items():
        kind = _kind(key, value)
        text = f"train.help.{key}" if f"train.help.{key}" in TEXT else "train.help.setting"
        p.add_argument("--" + key.replace("_", "-"), dest=key, help=_help(say(text, default=_show(value))),
                       type={bool: _flag, int: _int, float: _float}.get(kind, kind))
    args = vars(p.parse_args(argv))
    try:
        return _train(args)
    except UsageError as e:
        return _fail("tinylm-train", e)


def _train(args: dict) -> int:
    keys = yaml.safe_load(DEFAULTS.read_text(encoding="utf-8"))
    s = load_settings(args.pop("config"), {k: args.get(k) for k in keys})
    if args["resume"] and not args["checkpoint"]:
        raise UsageError(say("error.resume_needs_checkpoint"))
    if args["checkpoint"]:
        _writable(args["checkpoint"])
    text = read_corpus(args["corpus"], s["max_chars"])
    ckpt = load_checkpoint(args["checkpoint"], resume=True) if args["resume"] else None
    tok = make_tokenizer(s["tokenizer"], text)
    if ckpt and list(ckpt["vocab"]) != list(_vocab(tok)):
        raise UsageError(say("error.other_vocabulary", path=args["checkpoint"], saved=len(ckpt["vocab"][1]),
                             saved_kind=ckpt["vocab"][0], now=tok.vocab_size, kind=s["tokenizer"]))
    data = torch.tensor(tok.encode(text), dtype=torch.long)  # (N,)
    need = min_tokens(s["block_size"])
    if len(data) < need:
        cut = say("error.cut_by_max_chars", max_chars=s["max_chars"]) if s["max_chars"] is not None else ""
        raise UsageError(say("error.too_short_chars" if s["tokenizer"] == "char" else "error.too_short_words",
                             have=len(data), block_size=s["block_size"], need=need, window=s["block_size"] + 1) + cut)
    train_data, val_data = train_val_split(data, VAL_FRACTION)
    model_config = dict(vocab_size=tok.vocab_size, max_seq_len=s["block_size"], d_model=s["d_model"],
                        num_heads=s["num_heads"], num_layers=s["num_layers"], d_ff=s["d_ff"] or 4 * s["d_model"],
                        dropout=s["dropout"])
    if ckpt:
        differ = [k for k in model_config if ckpt["model_config"].get(k) != model_config[k]]
        if differ:
            k = differ[0]
            raise UsageError(say("error.other_model", path=args["checkpoint"], key=k,
                                 saved=ckpt["model_config"].get(k), now=model_config[k]))
        if type(ckpt["step"]) is not int or ckpt["step"] < 0:
            raise UsageError(say("error.checkpoint_damaged", path=args["checkpoint"], part="step", error="format"))
        if ckpt["step"] > s["steps"]:
            raise UsageError(say("error.past_steps", path=args["checkpoint"], step=ckpt["step"]))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and s["batch_size"] % world:
        raise UsageError(say("error.world", batch_size=s["batch_size"], world=world))
    torch.manual_seed(s["seed"])
    try:
        model = TinyLM(**model_config, init_std=s["init_std"] or small_init_std(s["d_model"]))
    except ValueError as e:
        raise UsageError(say("error.model", problem=e)) from None
    optimizer = make_optimizer(model, s["lr"], (s["beta1"], s["beta2"]), s["weight_decay"], s["decay_2d_only"],
                               s["fused_adamw"])
    gen = torch.Generator().manual_seed(s["seed"])
    start, history = 0, None
    if ckpt:
        path = args["checkpoint"]
        _load(path, "model", lambda: model.load_state_dict(ckpt["model"]))
        _load(path, "optimizer", lambda: optimizer.load_state_dict(ckpt["optimizer"]))
        _load(path, "generator", lambda: gen.set_state(ckpt["generator"]))
        _load(path, "torch_rng", lambda: torch.set_rng_state(ckpt["torch_rng"]))
        start, history = ckpt["step"], ckpt["history"]
        if not (isinstance(history, dict) and all(isinstance(v, list) for v in history.values())
                and HISTORY_KEYS <= history.keys()):
            raise UsageError(say("error.checkpoint_damaged", path=path, part="history", error="format"))
    rank, trained = 0, model
    if world > 1:  # torchrun: one process per rank; gradients averaged over them
        from datetime import timedelta

        import torch.distributed as dist
        dist.init_process_group("gloo", timeout=timedelta(minutes=5))  # a lost rank ends the run, not hangs it
        rank = dist.get_rank()
        trained = torch.nn.parallel.DistributedDataParallel(model)
    speak = print if rank == 0 else (lambda *a, **k: None)
    speak(say("train.corpus_line", chars=len(text), tokens=len(data), vocab=tok.vocab_size,
              params=model.get_num_params(non_embedding=False))
          + (say("train.resuming", step=start) if ckpt else "") + (say("train.processes", world=world) if world > 1
                                                                     else ""))
    hist = history or {"step": [], "loss": [], "grad_norm": [], "tokens_per_s": [], "val_step": [], "val_loss": []}
    bar = tqdm(total=s["steps"], initial=start, desc=say("train.progress"), unit=say("train.progress_unit"),
               disable=args["no_progress"] or rank != 0)

    def each_step(step: int, record: dict) -> None:
        if not math.isfinite(record["loss"]):
            raise UsageError(say("error.diverged", loss=record["loss"], step=step, lr=s["lr"]))
        bar.set_postfix_str(say("train.progress_numbers", loss=record["loss"], grad_norm=record["grad_norm"],
                                tokens_per_s=record["tokens_per_s"]), refresh=False)
        bar.update(1)
        if rank == 0 and "val_loss" in record and step < s["steps"]:
            tqdm.write(_result(step, record["loss"], record["val_loss"]), file=sys.stdout)
        if rank == 0 and args["checkpoint"] and ("val_loss" in record or step == s["steps"]):
            try:
                torch.save({"model": model.state_dict(), "model_config": model_config,
                            "optimizer": optimizer.state_dict(), "generator": gen.get_state(),
                            "torch_rng": torch.get_rng_state(), "step": step, "history": hist, "vocab": _vocab(tok),
                            "settings": s}, args["checkpoint"])
            except OSError as e:
                raise UsageError(say("error.checkpoint_unwritable", path=args["checkpoint"],
                                     reason=e.strerror or type(e).__name__)) from None

    try:
        train(trained, train_data, val_data, steps=s["steps"], batch_size=s["batch_size"],
              block_size=s["block_size"], lr=s["lr"], max_grad_norm=s["max_grad_norm"],
              eval_interval=s["eval_interval"], seed=s["seed"], progress=False, callback=each_step,
              optimizer=optimizer, generator=gen, start_step=start, history=hist, shard=(rank, world),
              warmup_steps=s["warmup_steps"], min_lr=s["min_lr"], lr_decay_steps=s["lr_decay_steps"],
              fast=s["fast_attention"])
    finally:
        bar.close()
    if world > 1:  # every rank here (rank 0 has written its checkpoint) before any tears the group down
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    if hist["val_loss"]:
        speak(_result(s["steps"], hist["loss"][-1], hist["val_loss"][-1]))
    if s["sample_tokens"] > 0 and rank == 0:
        out = generate(model, data[:1].view(1, 1), s["sample_tokens"], s["temperature"], s["top_k"],
                       generator=torch.Generator().manual_seed(s["seed"]))
        print(say("train.sample") + "\n" + tok.decode(out[0].tolist()))
    return 0


def _result(step: int, loss: float, val_loss: float) -> str:
    ppl = perplexity(val_loss) if math.isfinite(val_loss) else math.nan
    return say("train.eval_line", step=step, loss=loss, val_loss=val_loss, perplexity=ppl)


def generate_main(argv: list[str] | None = None) -> int:
    """``tinylm-generate``: continue a prompt with a checkpoint's model. Returns the exit status."""
    p = _Parser(prog="tinylm-generate", description=_help(say("generate.description")))
    p.add_argument("--checkpoint", required=True, help=_help(say("generate.help.checkpoint")))
    p.add_argument("--prompt", required=True, help=_help(say("generate.help.prompt")))
    p.add_argument("--tokens", type=_int, default=200, help=_help(say("generate.help.tokens", default=200)))
    p.add_argument("--temperature", type=_float, default=0.8,
                   help=_help(say("generate.help.temperature", default=0.8)))
    p.add_argument("--top-k", type=_int, default=None, help=_help(say("generate.help.top_k")))
    p.add_argument("--seed", type=_int, default=0, help=_help(say("generate.help.seed", default=0)))
    args = p.parse_args(argv)
    try:
        if not (math.isfinite(args.temperature) and args.temperature > 0):
            raise UsageError(say("error.positive_number", key="--temperature", value=args.temperature))
        if args.tokens < 0:
            raise UsageError(say("error.int_at_least", key="--tokens", minimum=0, value=args.tokens))
        if args.top_k is not None and args.top_k < 1:
            raise UsageError(say("error.int_at_least", key="--top-k", minimum=1, value=args.top_k))
        if not 0 <= args.seed < 2 ** 63:
            raise UsageError(say("error.seed", value=args.seed))
        ckpt = load_checkpoint(args.checkpoint)
        tok = _tokenizer_from(ckpt["vocab"])
        if isinstance(tok, CharTokenizer):
            unknown = sorted(set(args.prompt) - tok.stoi.keys())
            if unknown:
                raise UsageError(say("error.prompt_unknown_chars", chars=repr(unknown[:10])[1:-1],
                                     vocab=tok.vocab_size))
        ids = tok.encode(args.prompt)
        if not ids:
            raise UsageError(say("error.prompt_no_tokens"))
        model = _model_from(ckpt, args.checkpoint)
    except UsageError as e:
        return _fail("tinylm-generate", e)
    model.eval()
    out = generate(model, torch.tensor([ids]), args.tokens, args.temperature, args.top_k,
                   generator=torch.Generator().manual_seed(args.seed))  # (1, len(ids) + tokens)
    print(tok.decode(out[0].tolist()))
    return 0


if __name__ == "__main__":
    raise SystemExit(train_main())
