"""The claims lab's tools (notebook 11): write a prediction before a run, then compare it with the run.

- :func:`predict`: the learner's order of an experiment's variants, from lowest held-out loss to highest, checked
  for form only (every variant once); an empty list is "no prediction yet".
- :func:`compare_prediction`: the run's table (mean and range over the seeds, parameters, rank) beside the
  prediction, and which pairs the run separates (the same order in every seed) and whether the prediction has them
  right. Everything it says is computed from the run in front of the learner.
- :func:`plot_claims`: each variant's held-out loss, seed by seed, with its mean.

They judge no exercise: a prediction earns nothing, right or wrong.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from .._text import say
from ._lazy import plt

__all__ = ["predict", "compare_prediction", "plot_claims", "Prediction", "PredictionError"]


class PredictionError(ValueError):
    """A prediction not in the form :func:`predict` asks for. A notebook shows its message alone: the traceback
    through the course's code would only hide what to change in the cell."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"{type(self).__name__}: {self}"]


@dataclass(frozen=True)
class Prediction:
    """A learner's order of one experiment's variants, lowest held-out loss first (empty: none made)."""

    experiment: str
    order: tuple[str, ...]

    def _repr_markdown_(self) -> str:
        return str(self)

    def __str__(self) -> str:
        from tinylm_solutions.claims import EXPERIMENTS  # given code of stage 11: read when a prediction is made

        if not self.order:
            return say("claims.predict.none", variants=", ".join(f"`{v}`" for v in EXPERIMENTS[self.experiment]))
        return say("claims.predict.made", order=" < ".join(f"`{v}`" for v in self.order))


def predict(experiment: str, order) -> Prediction:
    """Record a prediction for ``experiment`` (a key of :data:`~tinylm_solutions.claims.EXPERIMENTS`): ``order``
    lists its variants from the lowest held-out loss to the highest, each once (``[]``: no prediction yet).

    Raises:
        PredictionError (a ValueError): an unknown experiment, or an order that is not the experiment's variants,
            each once (the message lists them).
    """
    from tinylm_solutions.claims import EXPERIMENTS  # given code of stage 11: read when a prediction is made

    if experiment not in EXPERIMENTS:
        raise PredictionError(say("claims.predict.experiment", experiment=repr(experiment),
                             experiments=", ".join(map(repr, EXPERIMENTS))))
    variants = EXPERIMENTS[experiment]
    if isinstance(order, str) or not isinstance(order, (list, tuple)):
        raise PredictionError(say("claims.predict.not_list", got=type(order).__name__))
    order = tuple(order)
    if order and sorted(order) != sorted(variants):
        unknown = [v for v in order if v not in variants]
        missing = [v for v in variants if v not in order]
        twice = sorted({v for v in order if order.count(v) > 1})
        raise PredictionError(say("claims.predict.variants", variants=", ".join(map(repr, variants)),
                             unknown=unknown, missing=missing, twice=twice))
    return Prediction(experiment, order)


def _mean(values) -> float:
    return sum(values) / len(values)


def separated_pairs(result: dict) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(separated, close)``: pairs ``(lower, higher)`` of variants whose held-out losses have the same order in
    every seed (each run of a seed saw the same batches), and the pairs whose order changes with the seed."""
    runs = result["runs"]
    separated, close = [], []
    for a, b in combinations(runs, 2):
        diffs = [x - y for x, y in zip(runs[a]["held_out_loss"], runs[b]["held_out_loss"])]
        if all(d < 0 for d in diffs):
            separated.append((a, b))
        elif all(d > 0 for d in diffs):
            separated.append((b, a))
        else:
            close.append((a, b))
    return separated, close


class Comparison(str):
    """Markdown text that a notebook shows as markdown (and ``print`` as text)."""

    def _repr_markdown_(self) -> str:
        return str(self)


def compare_prediction(prediction: Prediction, result: dict) -> Comparison:
    """The run's table beside the prediction, and what the run separates: markdown, computed from ``result`` (a
    :func:`~tinylm_solutions.claims.claims_lab` record).

    Raises:
        PredictionError (a ValueError): ``prediction`` is not a :class:`Prediction` of ``result``'s experiment.
    """
    if not isinstance(prediction, Prediction) or prediction.experiment != result["experiment"]:
        raise PredictionError(say("claims.compare.mismatch", experiment=repr(result["experiment"])))
    runs = result["runs"]
    measured = sorted(runs, key=lambda v: _mean(runs[v]["held_out_loss"]))
    yours = {v: i + 1 for i, v in enumerate(prediction.order)}
    header = [say("claims.col.variant"), say("claims.col.loss"), say("claims.col.params"),
              say("claims.col.ffn_params"), say("claims.col.rank")] + ([say("claims.col.yours")] if yours else [])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for v in runs:
        loss = runs[v]["held_out_loss"]
        row = [f"`{v}`", f"{_mean(loss):.3f} ({min(loss):.3f} to {max(loss):.3f})", f"{runs[v]['params']:,}",
               f"{runs[v]['ffn_params']:,}", str(measured.index(v) + 1)] + ([str(yours[v])] if yours else [])
        lines.append("| " + " | ".join(row) + " |")
    seeds = ", ".join(map(str, result["seeds"]))
    table = "\n".join([say("claims.compare.note", steps=result["steps"], seeds=seeds), "", *lines])
    separated, close = separated_pairs(result)
    separated.sort(key=lambda ab: (measured.index(ab[0]), measured.index(ab[1])))  # as the ranking reads, best first

    def pair(a: str, b: str) -> str:  # with the gap in each seed, smallest to largest: how firm the order is
        gaps = [y - x for x, y in zip(runs[a]["held_out_loss"], runs[b]["held_out_loss"])]
        return say("claims.compare.pair", a=a, b=b, low=min(gaps), high=max(gaps))

    sentences = [say("claims.compare.separated", n=len(separated), total=len(separated) + len(close),
                     pairs="; ".join(pair(a, b) for a, b in separated) or "-")]
    if close:
        sentences.append(say("claims.compare.close", pairs="; ".join(f"`{a}`, `{b}`" for a, b in close)))
    if yours:
        wrong = [(a, b) for a, b in separated if yours[a] > yours[b]]
        sentences.append(say("claims.compare.yours", right=len(separated) - len(wrong), n=len(separated)))
        if wrong:
            sentences.append(say("claims.compare.wrong", pairs="; ".join(pair(a, b) for a, b in wrong)))
    else:
        sentences.append(say("claims.compare.no_prediction"))
    return Comparison("\n\n".join([table, *sentences]))


def plot_claims(result: dict, unigram: float | None = None, ax=None):
    """Each variant's held-out loss: one dot per seed and a bar at the mean (lower is better), with the unigram
    loss as a dashed line when given."""
    if ax is None:
        _, ax = plt.subplots(figsize=(1.3 * len(result["runs"]) + 2, 3.2))
    names = list(result["runs"])
    for i, name in enumerate(names):
        loss = result["runs"][name]["held_out_loss"]
        ax.bar(i, _mean(loss), color="C0", alpha=0.35)
        ax.scatter([i] * len(loss), loss, color="C0", s=14, zorder=3)
    if unigram is not None:
        ax.axhline(unigram, color="gray", ls="--", lw=1, label=say("claims.plot.unigram"))
        ax.legend(loc="lower right", fontsize=8)
    losses = [x for name in names for x in result["runs"][name]["held_out_loss"]]
    low, high = min(losses + ([unigram] if unigram else [])), max(losses + ([unigram] if unigram else []))
    ax.set_ylim(low - 0.15 * (high - low + 0.1), high + 0.15 * (high - low + 0.1))
    ax.set_xticks(range(len(names)), names, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(say("claims.plot.ylabel"))
    ax.set_title(say("claims.plot.title", experiment=result["experiment"], steps=result["steps"]))
    return ax
