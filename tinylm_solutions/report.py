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
import os
import statistics
import time
from pathlib import Path

import torch

from .messages import say
from .ablations import SEEDS, norm_placement_sweep, order_test, residual_ablation, unigram_loss
from .data import default_corpus, get_batch, train_val_split
from .model import TinyLM
from .tokenizer import CharTokenizer
from .train import train_step
from .trainer import train

MODEL_KEYS = ("vocab_size", "max_seq_len", "d_model", "num_heads", "num_layers", "d_ff", "norm_first", "dropout",
              "tie_weights", "positions")
"""The keys of a record's ``config`` that are TinyLM's constructor arguments."""

NEEDED = {"09_overfit": ("losses",), "09_train": ("history", "config"),
          "11_ablations": ("no_residual", "norm_placement", "no_positions", "unigram_loss"),
          "11_first_bug": ("evidence",)}
"""Per record, the keys the report cannot do without (the first bug's name: see :func:`bug_name`)."""

BUG_NAME_KEYS = ("bug", "bug_name", "title", "name")

ABLATIONS = ("no_residual", "norm_placement", "no_positions")

SMALL = dict(d_model=32, num_heads=2, num_layers=2, d_ff=64, max_seq_len=32)
"""The size of every recomputed run: a model that trains in a second or two. Recomputed runs use one thread
(``_threads(1)``): at this size a second intra-op thread only adds synchronisation, and on a busy machine it
costs ten times the CPU time."""


# --------------------------------------------------------------------------- markdown

def text(key: str, /, **values) -> str:
    """Message ``report.<key>`` (:mod:`tinylm_solutions.messages`) in the learner's language, with ``values`` filled
    in: the words of report.md's headings, tables and notes. Notebook 12's code asks for them by key, so one cell's
    code writes an English report in the English notebook and a Chinese one in the Chinese notebook.

    Raises:
        KeyError: no message ``report.<key>``.
    """
    return say(f"report.{key}", **values)


def columns(*keys: str) -> list[str]:
    """A table's headers, message ``report.col.<key>`` each, in the learner's language (see :func:`text`)."""
    return [text(f"col.{key}") for key in keys]


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
    the total (labelled in the learner's language); the share is of ``table["total"]``, rounded to 0.1%.

    Raises:
        ValueError: if ``table`` has no positive ``"total"``.
    """
    total = table.get("total", 0)
    if not total or total <= 0:
        raise ValueError(f"a parameter table needs a positive 'total', got {table!r}")
    rows = [[part, int(n), round(100 * n / total, 1)] for part, n in table.items() if part != "total"]
    return rows + [[text("part.total"), int(total), 100.0]]


def history_summary(history: dict) -> dict[str, float]:
    """What the report states about a training history (``trainer.train``'s): the first and last training
    loss, the last validation loss and its perplexity, the median tokens/s. Missing lists give NaN."""
    loss, val, tps = history.get("loss") or [], history.get("val_loss") or [], history.get("tokens_per_s") or []
    nan = float("nan")
    return {"steps": len(loss), "first_loss": float(loss[0]) if loss else nan,
            "final_loss": float(loss[-1]) if loss else nan, "final_val_loss": float(val[-1]) if val else nan,
            "val_perplexity": math.exp(val[-1]) if val else nan,
            "tokens_per_s": float(statistics.median(tps)) if tps else nan}


def _spread(values) -> str:
    """``"mean (min to max)"`` of one number per seed, 3 decimals: a table cell that shows the seeds' spread."""
    values = [float(v) for v in values]
    mean = sum(values) / len(values)
    return say("report.spread", mean=mean, low=min(values), high=max(values)) if len(values) > 1 else f"{mean:.3f}"


def run_label(key: str) -> str:
    """The label of a run of :mod:`~tinylm_solutions.ablations` (its key in a record's ``"runs"``, which stays
    English: it is data) in the learner's language: ``"2 layers, no residual"`` -> ``"2 层，无残差"``."""
    layers, sep, kind = key.partition(" layers, ")
    if sep and layers.isdigit() and kind in ("residual", "no residual"):
        return say(f"report.run.{kind.replace(' ', '_')}", layers=int(layers))
    known = {"Post-LN, warm-up": "report.run.warmup", "learned positions": "report.run.learned_positions",
             "no positions": "report.run.no_positions"}
    return say(known[key]) if key in known else key


def residual_rows(record: dict) -> list[list]:
    """The no-residual ablation as table rows: run, final loss over the seeds, and how many times less gradient
    block 0 got than the last block (each seed's ratio, then their range)."""
    rows = []
    for label, run in record["runs"].items():
        ratios = [norms[-1] / norms[0] for norms in run["grad_norms"]]
        rows.append([run_label(label), _spread(run["final_loss"]),
                     say("report.range", low=min(ratios), high=max(ratios)) if len(ratios) > 1 else f"{ratios[0]:.1f}"])
    return rows


def norm_placement_rows(record: dict) -> list[list]:
    """The Pre-LN / Post-LN sweep as table rows: one per learning rate, one column per wiring (blank where a wiring
    was not run at that rate), and Post-LN minus Pre-LN in each seed (a comparison within a seed: same batches)."""
    runs = record["runs"]
    lrs = sorted({lr for run in runs.values() for lr in run["lrs"]})
    rows = []
    for lr in lrs:
        row = [f"{lr:g}"]
        for run in runs.values():
            row.append(_spread([seed[run["lrs"].index(lr)] for seed in run["final_loss"]]) if lr in run["lrs"] else "")
        pre, post = (runs[w]["final_loss"] for w in ("Pre-LN", "Post-LN"))
        i = runs["Pre-LN"]["lrs"].index(lr) if lr in runs["Pre-LN"]["lrs"] else None
        row.append(" ".join(f"{b[i] - a[i]:+.3f}" for a, b in zip(pre, post)) if i is not None else "")
        rows.append(row)
    return rows


def order_rows(record: dict) -> list[list]:
    """The order test as table rows: model, loss in order, reversed, and the gap (reversed minus in order)."""
    return [[run_label(label), _spread(run["forward"]), _spread(run["reversed"]),
             _spread([r - f for f, r in zip(run["forward"], run["reversed"])])] for label, run in record["runs"].items()]


ABLATION_TABLES = {
    "no_residual": (("run", "final_loss", "grad_ratio"), residual_rows),
    "norm_placement": (None, norm_placement_rows),  # "learning rate", the wirings run, the per-seed differences
    "no_positions": (("model", "in_order", "reversed", "gap"), order_rows),
}
"""Per ablation of stage 11: its table's headers (message ids ``report.col.*``, shown in the learner's language) and
rows. Loss cells read "mean (min to max)" over the seeds."""


def ablation_table(name: str, record: dict) -> str:
    """The markdown table of one of stage 11's ablation records (see :data:`ABLATION_TABLES`), after a line that says
    what its cells are."""
    headers, rows = ABLATION_TABLES[name]
    headers = ([say(f"report.col.{h}") for h in headers] if headers else
               [say("report.col.lr"), *(say("report.col.wiring_loss", wiring=run_label(w)) for w in record["runs"]),
                say("report.col.post_minus_pre")])
    seeds = ", ".join(map(str, record["seeds"]))
    note = say("report.note.seeds" if len(record["seeds"]) > 1 else "report.note.seed", steps=record["steps"],
               seeds=seeds)
    if name == "no_positions" and "unigram_loss" in record:
        note += say("report.note.held_out", loss=record["unigram_loss"])
    return note + "\n\n" + markdown_table(headers, rows(record))


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
    ax.set_xlabel(say("report.fig.parameters"))
    ax.set_title(say("report.fig.parameters_title"))
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return Path(path)


def save_curves_figure(curves: dict[str, list[float]], path: Path, title: str, ylabel: str | None = None,
                       log_y: bool = False) -> Path:
    """One line per curve (x = index), saved as PNG; ``ylabel`` defaults to "loss" in the learner's language."""
    fig = _figure()
    ax = fig.add_subplot()
    for label, ys in curves.items():
        ax.plot(range(1, len(ys) + 1), ys, label=label)
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(say("report.fig.step"))
    ax.set_ylabel(say("report.fig.loss") if ylabel is None else ylabel)
    ax.set_title(title)
    if len(curves) > 1:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return Path(path)


def save_bars_figure(numbers: dict[str, float], path: Path, title: str, xlabel: str | None = None) -> Path:
    """A horizontal bar per number, saved as PNG; ``xlabel`` defaults to "value" in the learner's language."""
    fig = _figure(5.0, 0.6 + 0.35 * max(len(numbers), 2))
    ax = fig.add_subplot()
    ax.barh(list(numbers), list(numbers.values()), color="tab:orange")
    ax.set_xlabel(say("report.fig.value") if xlabel is None else xlabel)
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
    ax.set_xlabel(say("report.fig.flops"))
    ax.set_ylabel(say("report.fig.tokens_per_s"))
    ax.set_title(say("report.fig.throughput_title"))
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return Path(path)


def draw_residual(axes, record: dict, unigram: float | None = None) -> None:
    """The no-residual ablation on two Axes: the gradient norm reaching each block (log scale; the mean over the
    seeds, with the range as a band) and each run's final loss, one dot per seed (and the unigram loss, dotted)."""
    for i, (label, run) in enumerate(record["runs"].items()):
        per_block = list(zip(*run["grad_norms"]))  # blocks x seeds
        mean = [sum(b) / len(b) for b in per_block]
        line, = axes[0].plot(range(len(mean)), mean, marker="o", label=run_label(label))
        axes[0].fill_between(range(len(mean)), [min(b) for b in per_block], [max(b) for b in per_block],
                             color=line.get_color(), alpha=0.2)
        axes[1].scatter([i] * len(run["final_loss"]), run["final_loss"], color=line.get_color())
    axes[0].set(yscale="log", xlabel=say("report.fig.block"), ylabel=say("report.fig.grad_norm"),
                title=say("report.fig.grad_title"))
    axes[0].legend(fontsize=7)
    axes[1].set_xticks(range(len(record["runs"])), [run_label(k) for k in record["runs"]], rotation=20, fontsize=7)
    axes[1].set(ylabel=say("report.fig.final_loss"), title=say("report.fig.dots_title", steps=record["steps"]))
    if unigram is not None:
        axes[1].axhline(unigram, color="grey", linestyle=":", label=say("report.fig.unigram"))
        axes[1].legend(fontsize=7)


def draw_norm_placement(ax, record: dict, unigram: float | None = None) -> None:
    """Final loss against the learning rate (log x), per wiring: the mean over the seeds, the range as a band."""
    for label, run in record["runs"].items():
        per_lr = list(zip(*run["final_loss"]))  # rates x seeds
        finite = [[v for v in lr if math.isfinite(v)] or [float("nan")] for lr in per_lr]
        line, = ax.plot(run["lrs"], [sum(v) / len(v) for v in finite], marker="o", label=run_label(label))
        ax.fill_between(run["lrs"], [min(v) for v in finite], [max(v) for v in finite], color=line.get_color(),
                        alpha=0.2)
    if unigram is not None:
        ax.axhline(unigram, color="grey", linestyle=":", label=say("report.fig.unigram"))
    ax.set(xscale="log", xlabel=say("report.fig.lr"), ylabel=say("report.fig.final_loss"),
           title=say("report.fig.sweep_title", steps=record["steps"], seeds=", ".join(map(str, record["seeds"]))))
    ax.legend(fontsize=7)


def draw_order_test(ax, record: dict) -> None:
    """Grouped bars, in order and reversed, per model: the mean over the seeds, the range as an error bar."""
    models = list(record["runs"])
    width = 0.38
    for i, (key, label) in enumerate((("forward", say("report.fig.in_order")), ("reversed", say("report.fig.reversed")))):
        values = [record["runs"][m][key] for m in models]
        means = [sum(v) / len(v) for v in values]
        xs = [j + (i - 0.5) * width for j in range(len(models))]
        bars = ax.bar(xs, means, width, label=label,
                      yerr=[[m - min(v) for m, v in zip(means, values)], [max(v) - m for m, v in zip(means, values)]])
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=6)
    ax.set_xticks(range(len(models)), [run_label(m) for m in models])
    top = max(max(r[k]) for r in record["runs"].values() for k in ("forward", "reversed"))
    ax.set_ylim(0, 1.3 * top)
    n = len(record["seeds"])
    ax.set(ylabel=say("report.fig.order_loss"),
           title=say("report.fig.order_title", n=n) if n > 1 else say("report.fig.order_title_one"))
    ax.legend(fontsize=7, loc="upper center", ncol=2)


def save_ablation_figure(name: str, record: dict, path: Path, unigram: float | None = None) -> Path:
    """One of stage 11's ablations drawn as in notebook 11 (:func:`draw_residual`, :func:`draw_norm_placement`,
    :func:`draw_order_test`), saved as PNG."""
    if name == "no_residual":
        fig = _figure(9.0, 3.4)
        draw_residual(fig.subplots(1, 2), record, unigram)
    else:
        fig = _figure(5.5, 3.6)
        ax = fig.add_subplot()
        draw_norm_placement(ax, record, unigram) if name == "norm_placement" else draw_order_test(ax, record)
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


ABLATION_STEPS = {"no_residual": 200, "norm_placement": 150, "no_positions": 150}
"""The steps of stage 11's ablations (:mod:`tinylm_solutions.ablations`), as notebook 11 runs them."""
ABLATION_LRS, ABLATION_WARMUP_LRS = (1e-3, 3e-3, 1e-2, 3e-2), (3e-2,)


def run_ablations(train_data: torch.Tensor, val_data: torch.Tensor, vocab_size: int, steps: dict | None = None,
                  seeds=None) -> dict:
    """Stage 11's three ablations, exactly as notebook 11 runs them (:func:`~tinylm_solutions.ablations.residual_ablation`,
    :func:`~tinylm_solutions.ablations.norm_placement_sweep`, :func:`~tinylm_solutions.ablations.order_test`), with
    ``steps`` (default :data:`ABLATION_STEPS`) and ``seeds`` (default theirs), on one thread.

    Returns:
        An ``"11_ablations"`` record: ``{"no_residual", "norm_placement", "no_positions", "unigram_loss"}``.
    """
    steps = {**ABLATION_STEPS, **(steps or {})}
    seeds = SEEDS if seeds is None else seeds
    size = dict(vocab_size=vocab_size, **{k: v for k, v in SMALL.items() if k != "num_layers"})
    with _threads(1):
        return {"no_residual": residual_ablation(train_data, size, steps=steps["no_residual"], seeds=seeds),
                "norm_placement": norm_placement_sweep(train_data, size, steps=steps["norm_placement"],
                                                                 lrs=ABLATION_LRS, warmup_lrs=ABLATION_WARMUP_LRS,
                                                                 seeds=seeds),
                "no_positions": order_test(train_data, val_data, size, steps=steps["no_positions"],
                                                     seeds=seeds),
                "unigram_loss": unigram_loss(train_data, vocab_size)}


def recompute_ablations(train_data: torch.Tensor, val_data: torch.Tensor, vocab_size: int) -> dict:
    """Stage 11's ablations when they were not recorded: the same experiments, one seed and a third of the steps
    (about 15 s; 3 steps under ``TINYLM_QUICK=1``), so the report can be written; its note says they are shorter
    than the notebook's."""
    quick = os.environ.get("TINYLM_QUICK") == "1"
    steps = {k: 3 if quick else v // 3 for k, v in ABLATION_STEPS.items()}
    return run_ablations(train_data, val_data, vocab_size, steps, seeds=(0,))


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
    """The keys of :data:`NEEDED` ``[name]`` that ``record`` lacks (all of them if there is no record). An ablation
    counts only in the format of :mod:`~tinylm_solutions.ablations` (one result per seed under ``"runs"``): a record
    of an older notebook 11 is recomputed, not misread."""
    if record is None:
        return list(NEEDED[name])
    return [k for k in NEEDED[name] if not record.get(k)
            or (k in ABLATIONS and not (isinstance(record[k], dict) and isinstance(record[k].get("runs"), dict)))]


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
        return record, say("report.source.recorded", name=name, time=record.get("time", say("report.source.no_time")))
    why = say("report.source.no_record") if record is None else say("report.source.lacks", keys=", ".join(missing))
    if name == "11_first_bug" or not recompute:
        return record, say("report.source.not_recomputed", name=name, why=why)
    tok, train_data, val_data = small_data()
    if name == "09_overfit":
        made = recompute_overfit(train_data, tok.vocab_size)
        what = say("report.source.overfit", steps=made["steps"])
    elif name == "09_train":
        made = recompute_train(train_data, val_data, tok.vocab_size)
        what = say("report.source.train", steps=made["config"]["steps"], params=made["num_params"])
    else:
        made = recompute_ablations(train_data, val_data, tok.vocab_size)
        what = say("report.source.ablations")
    return {**made, **(record or {}), **{k: made[k] for k in missing if k in made}}, \
        say("report.source.recomputed", name=name, why=why, what=what)


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


def write_report(folder: Path, sections: list[tuple[str, str]], title: str | None = None) -> Path:
    """Write ``folder/report.md``: the title (default "TinyLM: a report on my runs", in the learner's language), then
    one ``## heading`` and its markdown per section.

    Returns:
        The path written. Raises ``OSError`` if the folder cannot be written.
    """
    title = say("report.title") if title is None else title
    text = f"# {title}\n\n" + "\n\n".join(f"## {head}\n\n{body.strip()}" for head, body in sections) + "\n"
    path = Path(folder) / "report.md"
    path.write_text(text, encoding="utf-8")
    return path
