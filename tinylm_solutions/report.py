"""Stage 12's given code: build ``report.md`` (and its PNG figures) from a learner's run records.

The records are those of :mod:`tinylm_checks.lab.runs` (``load_runs()``): ``"09_overfit"``, ``"09_train"``,
``"11_ablations"`` and ``"11_first_bug"``. :func:`collect` takes each record that has the keys the report
needs and recomputes a small version of any that is missing or incomplete (saying so in its notes), so a
report can always be written. Nothing here computes FLOPs: the notebook passes in the numbers of the
learner's own ``flops_per_token`` (stage 12's exercise, :mod:`tinylm_solutions.flops`).

Tables are GitHub-flavoured markdown; figures are PNG files written with matplotlib's object API (no
global pyplot state is needed to save them).
"""
from __future__ import annotations

import functools
import math
import statistics
import time
from pathlib import Path

import torch

from .data import default_corpus, get_batch, train_val_split
from .model import TinyLM
from .tokenizer import CharTokenizer
from .train import train_step
from .trainer import train

MODEL_KEYS = ("vocab_size", "max_seq_len", "d_model", "num_heads", "num_layers", "d_ff", "norm_first", "dropout",
              "tie_weights", "positions")
"""The keys of a record's ``config`` that are TinyLM's constructor arguments."""

NEEDED = {"09_overfit": ("losses",), "09_train": ("history", "config"), "11_ablations": (),
          "11_first_bug": ("evidence",)}
"""Per record, the keys the report cannot do without (the first bug's name: see :func:`bug_name`)."""

BUG_NAME_KEYS = ("bug", "bug_name", "title", "name")

ABLATIONS = ("no_residual", "norm_placement", "no_positions")

SMALL = dict(d_model=32, num_heads=2, num_layers=2, d_ff=64, max_seq_len=32)
"""The size of every recomputed run: a model that trains in a second or two. Recomputed runs use one thread
(``_threads(1)``): at this size a second intra-op thread only adds synchronisation, and on a busy machine it
costs ten times the CPU time."""


# --------------------------------------------------------------------------- markdown

def markdown_table(headers: list[str], rows: list[list]) -> str:
    """A GitHub-flavoured markdown table; ints get thousands separators, floats 4 significant digits.

    Raises:
        ValueError: if a row does not have one cell per header.
    """
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"a row has {len(row)} cells for {len(headers)} headers: {row!r}")
    cell = lambda v: (f"{v:,}" if isinstance(v, int) and not isinstance(v, bool)  # noqa: E731
                      else f"{v:.4g}" if isinstance(v, float) else str(v))
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def parameter_rows(table: dict[str, int]) -> list[list]:
    """Rows ``[part, parameters, share %]`` of a :meth:`TinyLM.parameter_table`, parts in their order, then
    ``total``; the share is of ``table["total"]``, rounded to 0.1 %.

    Raises:
        ValueError: if ``table`` has no positive ``"total"``.
    """
    total = table.get("total", 0)
    if not total or total <= 0:
        raise ValueError(f"a parameter table needs a positive 'total', got {table!r}")
    rows = [[part, int(n), round(100 * n / total, 1)] for part, n in table.items() if part != "total"]
    return rows + [["total", int(total), 100.0]]


def history_summary(history: dict) -> dict[str, float]:
    """What the report states about a training history (``trainer.train``'s): the first and last training
    loss, the last validation loss and its perplexity, the median tokens/s. Missing lists give NaN."""
    loss, val, tps = history.get("loss") or [], history.get("val_loss") or [], history.get("tokens_per_s") or []
    nan = float("nan")
    return {"steps": len(loss), "first_loss": float(loss[0]) if loss else nan,
            "final_loss": float(loss[-1]) if loss else nan, "final_val_loss": float(val[-1]) if val else nan,
            "val_perplexity": math.exp(val[-1]) if val else nan,
            "tokens_per_s": float(statistics.median(tps)) if tps else nan}


def flatten(data, prefix: str = "") -> tuple[dict[str, float], dict[str, list[float]]]:
    """Split an ablation's record into numbers and curves: ``({label: number}, {label: [numbers]})``;
    nested dicts give labels joined by ``" / "``; other values are left out."""
    numbers, curves = {}, {}
    for key, value in (data.items() if isinstance(data, dict) else []):
        label = f"{prefix} / {key}" if prefix else str(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            numbers[label] = float(value)
        elif isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value):
            curves[label] = [float(v) for v in value]
        elif isinstance(value, dict):
            n, c = flatten(value, label)
            numbers.update(n)
            curves.update(c)
    return numbers, curves


# --------------------------------------------------------------------------- figures

def _figure(width: float = 5.0, height: float = 3.2):
    from matplotlib.figure import Figure
    return Figure(figsize=(width, height))


def save_parameter_figure(table: dict[str, int], path: Path) -> Path:
    """A horizontal bar chart of the parameter table's parts (``total`` left out), saved as PNG."""
    fig = _figure()
    ax = fig.add_subplot()
    parts = [(k, v) for k, v in table.items() if k != "total"]
    ax.barh([k for k, _ in parts], [v for _, v in parts], color="tab:blue")
    ax.set_xlabel("parameters")
    ax.set_title("where the parameters are")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return Path(path)


def save_curves_figure(curves: dict[str, list[float]], path: Path, title: str, ylabel: str = "loss",
                       log_y: bool = False) -> Path:
    """One line per curve (x = index), saved as PNG."""
    fig = _figure()
    ax = fig.add_subplot()
    for label, ys in curves.items():
        ax.plot(range(1, len(ys) + 1), ys, label=label)
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if len(curves) > 1:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return Path(path)


def save_bars_figure(numbers: dict[str, float], path: Path, title: str, xlabel: str = "value") -> Path:
    """A horizontal bar per number, saved as PNG."""
    fig = _figure(5.0, 0.6 + 0.35 * max(len(numbers), 2))
    ax = fig.add_subplot()
    ax.barh(list(numbers), list(numbers.values()), color="tab:orange")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return Path(path)


def save_throughput_figure(points: list[tuple[str, float, float]], path: Path) -> Path:
    """Measured tokens/s against FLOPs per token, log-log, one labelled point per model: ``(label, flops,
    tokens_per_s)``. If the machine ran every model at the same FLOP/s, the points would lie on a line of
    slope -1."""
    fig = _figure()
    ax = fig.add_subplot()
    for label, f, tps in points:
        ax.scatter([f], [tps])
        ax.annotate(label, (f, tps), fontsize=7, xytext=(3, 3), textcoords="offset points")
    if points:
        rate = statistics.median(f * t for _, f, t in points)
        xs = [min(f for _, f, _ in points) / 1.5, max(f for _, f, _ in points) * 1.5]
        ax.plot(xs, [rate / x for x in xs], "--", color="gray", label=f"{rate / 1e9:.2g} GFLOP/s")
        ax.legend(fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training FLOPs per token (6N + 6LTD)")
    ax.set_ylabel("measured tokens/s")
    ax.set_title("compute against throughput")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return Path(path)


# --------------------------------------------------------------------------- recomputing small runs

@functools.lru_cache(maxsize=2)
def small_data(max_chars: int = 60_000) -> tuple[CharTokenizer, torch.Tensor, torch.Tensor]:
    """The course corpus (first ``max_chars`` characters), char-tokenized and split 90/10:
    ``(tokenizer, train (N,), val (M,))``."""
    text = default_corpus(max_chars=max_chars)
    tok = CharTokenizer(text)
    return (tok, *train_val_split(torch.tensor(tok.encode(text), dtype=torch.long)))


def model_config(config: dict) -> dict:
    """The TinyLM constructor arguments among a record's ``config`` keys."""
    return {k: v for k, v in config.items() if k in MODEL_KEYS}


def recompute_overfit(data: torch.Tensor, vocab_size: int, steps: int = 80, seed: int = 0) -> dict:
    """Stage 09's overfit-one-batch run, small: one batch of 4 x 32 tokens, ``steps`` AdamW steps at 3e-3.
    Returns a ``"09_overfit"`` record: ``{"losses", "final_loss", "steps"}``."""
    torch.manual_seed(seed)
    model = TinyLM(vocab_size, **SMALL)
    batch = get_batch(data, 4, SMALL["max_seq_len"], torch.Generator().manual_seed(seed))  # (4, 32) each
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    with _threads(1):
        losses = [train_step(model, batch, opt)["loss"] for _ in range(steps)]
    return {"losses": losses, "final_loss": losses[-1], "steps": steps}


def recompute_train(train_data: torch.Tensor, val_data: torch.Tensor, vocab_size: int, steps: int = 80,
                    batch_size: int = 8, seed: int = 0) -> dict:
    """Stage 09's training run, small: ``trainer.train`` for ``steps`` steps, on one thread (so its tokens/s are
    one core's). Returns a ``"09_train"`` record: ``{"history", "config", "num_params", "tokens_per_s"}`` (no
    samples, no memory figure)."""
    torch.manual_seed(seed)
    model = TinyLM(vocab_size, **SMALL)
    with _threads(1):
        history = train(model, train_data, val_data, steps=steps, batch_size=batch_size, eval_interval=steps // 2,
                        eval_batches=4, seed=seed, progress=False)
    config = {**model.config, "batch_size": batch_size, "block_size": SMALL["max_seq_len"], "steps": steps}
    return {"history": history, "config": config, "num_params": model.get_num_params(),
            "tokens_per_s": statistics.median(history["tokens_per_s"])}


def _without_residuals(model: TinyLM) -> TinyLM:
    """Rewire every (Pre-LN) block of ``model`` as ``x = ffn(norm2(attn(norm1(x))))``: no residual stream."""
    for block in model.blocks:
        def forward(x, mask=None, b=block):
            x = b.attn(b.norm1(x), mask)[0]  # (B, T, D)
            return b.ffn(b.norm2(x))  # (B, T, D)
        block.forward = forward
    return model


def _losses(make, train_data, steps: int, lr: float, seed: int) -> list[float]:
    """The training losses of ``make()`` trained ``steps`` steps (batch 8) with ``trainer.train``."""
    torch.manual_seed(seed)
    return train(make(), train_data, steps=steps, batch_size=8, lr=lr, seed=seed, progress=False)["loss"]


def recompute_ablations(train_data: torch.Tensor, vocab_size: int, steps: int = 20, seed: int = 0) -> dict:
    """Stage 11's three ablations, small (``steps`` steps each, batch 8 x 32, 9 runs): residual or not at 2 and
    4 layers; Pre-LN against Post-LN at learning rates 1e-3 and 1e-2; learned positions against none.

    Returns:
        An ``"11_ablations"`` record: ``no_residual`` and ``no_positions`` hold loss curves by run,
        ``norm_placement`` the final loss by placement and learning rate. The baseline (2 Pre-LN layers,
        learned positions, lr 3e-3) is trained once and shared by ``no_residual`` and ``no_positions``.
    """
    small = {k: v for k, v in SMALL.items() if k != "num_layers"}
    with _threads(1):  # tiny matrices: a second intra-op thread only adds synchronisation
        curves = {}
        for layers in (2, 4):
            curves[f"residual, {layers} layers"] = _losses(
                lambda: TinyLM(vocab_size, num_layers=layers, **small), train_data, steps, 3e-3, seed)
            curves[f"no residual, {layers} layers"] = _losses(
                lambda: _without_residuals(TinyLM(vocab_size, num_layers=layers, **small)), train_data, steps,
                3e-3, seed)
        placement = {name: {f"lr {lr:g}": _losses(lambda: TinyLM(vocab_size, **SMALL, norm_first=first), train_data,
                                                  steps, lr, seed)[-1] for lr in (1e-3, 1e-2)}
                     for name, first in (("Pre-LN", True), ("Post-LN", False))}
        positions = {"learned positions": curves["residual, 2 layers"],
                     "no positions": _losses(lambda: TinyLM(vocab_size, **SMALL, positions="none"), train_data,
                                             steps, 3e-3, seed)}
    return {"no_residual": curves, "norm_placement": placement, "no_positions": positions}


class _threads:
    """``with _threads(n):`` runs its body with ``torch.set_num_threads(n)`` and restores the count."""

    def __init__(self, n: int):
        self.n = n

    def __enter__(self):
        self.before = torch.get_num_threads()
        torch.set_num_threads(self.n)

    def __exit__(self, *exc):
        torch.set_num_threads(self.before)


def measure_tokens_per_s(config: dict, batch_size: int, seq_len: int, steps: int = 4, seed: int = 0) -> float:
    """Training tokens per second of ``TinyLM(**config)`` on random tokens, on one thread: the median of
    ``steps`` timed steps (after one warm-up step) of ``batch_size`` sequences of ``seq_len`` tokens."""
    torch.manual_seed(seed)
    model = TinyLM(**model_config(config))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randint(model.vocab_size, (batch_size, seq_len + 1), generator=gen)  # (B, T + 1)
    batch = (x[:, :-1], x[:, 1:])
    times = []
    with _threads(1):  # one core: the same conditions for every model, however busy the machine
        for i in range(steps + 1):
            t0 = time.perf_counter()
            train_step(model, batch, opt)
            if i:
                times.append(time.perf_counter() - t0)
    return batch_size * seq_len / statistics.median(times)


# --------------------------------------------------------------------------- gathering the records

def bug_name(record: dict | None) -> str | None:
    """The name of the first bug in a ``"11_first_bug"`` record: the first of :data:`BUG_NAME_KEYS` it has.
    (Notebook 11 records ``record_run("11_first_bug", name=..., evidence=...)``; a record's own name is kept
    under ``"record"``.)"""
    for key in BUG_NAME_KEYS:
        value = (record or {}).get(key)
        if value and not (key == "name" and value == "11_first_bug"):
            return str(value)
    return None


def missing_keys(name: str, record: dict | None) -> list[str]:
    """The keys of :data:`NEEDED` ``[name]`` that ``record`` lacks (all of them if there is no record);
    for ``"11_ablations"``, the ablations of :data:`ABLATIONS` it lacks."""
    if record is None:
        return list(NEEDED[name] or ABLATIONS)
    keys = ABLATIONS if name == "11_ablations" else NEEDED[name]
    return [k for k in keys if not record.get(k)]


def get_record(name: str, runs: dict[str, dict], recompute: bool = True) -> tuple[dict | None, str]:
    """One record the report uses, and a note on where it came from.

    Takes ``runs[name]`` if it has the keys of :data:`NEEDED`; completes an incomplete one, or makes a missing
    one, with the small runs above (a first bug cannot be recomputed: it stays as it is). With
    ``recompute=False`` nothing is run.

    Returns:
        ``(record or None, note)``, the note e.g. ``"09_train: recorded 2026-11-30 10:00:00"`` or
        ``"09_overfit: no record; recomputed a small version (80 steps on one batch)"``.

    Raises:
        KeyError: if ``name`` is not one of :data:`NEEDED`.
    """
    record, missing = runs.get(name), missing_keys(name, runs.get(name))
    if not missing:
        return record, f"{name}: recorded {record.get('time', '(no time)')}"
    why = "no record" if record is None else f"record lacks {', '.join(missing)}"
    if name == "11_first_bug" or not recompute:
        return record, f"{name}: {why}; not recomputed"
    tok, train_data, val_data = small_data()
    if name == "09_overfit":
        made = recompute_overfit(train_data, tok.vocab_size)
        what = f"{made['steps']} steps on one batch"
    elif name == "09_train":
        made = recompute_train(train_data, val_data, tok.vocab_size)
        what = f"{made['config']['steps']} steps, {made['num_params']:,} parameters"
    else:
        made = recompute_ablations(train_data, tok.vocab_size)
        what = "20 steps per run: too short to show more than the first steps' trend"
    return {**made, **(record or {}), **{k: made[k] for k in missing if k in made}}, \
        f"{name}: {why}; recomputed a small version ({what})"


def collect(runs: dict[str, dict], recompute: bool = True) -> tuple[dict[str, dict], list[str]]:
    """:func:`get_record` for every record of :data:`NEEDED`: ``(records by name, notes)``; a record that is
    neither recorded nor recomputed (``"11_first_bug"`` when not recorded) is absent from ``records``."""
    records, notes = {}, []
    for name in NEEDED:
        record, note = get_record(name, runs, recompute)
        notes.append(note)
        if record is not None:
            records[name] = record
    return records, notes


def write_report(folder: Path, sections: list[tuple[str, str]], title: str = "TinyLM: a report on my runs") -> Path:
    """Write ``folder/report.md``: the title, then one ``## heading`` and its markdown per section.

    Returns:
        The path written. Raises ``OSError`` if the folder cannot be written.
    """
    text = f"# {title}\n\n" + "\n\n".join(f"## {head}\n\n{body.strip()}" for head, body in sections) + "\n"
    path = Path(folder) / "report.md"
    path.write_text(text, encoding="utf-8")
    return path
