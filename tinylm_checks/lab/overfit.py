"""Stage 09's overfit checklist lab: one batch of padded lines, six broken setups to diagnose, and their curves.

The setups are :class:`~tinylm_checks.probes.OverfitSetup` objects (what the checks hand to the learner's code too);
this module only builds the notebook's six and draws loss curves: it judges nothing.
"""
from __future__ import annotations

import torch

from .._text import say
from ..probes import OVERFIT_CHECKLIST, OverfitSetup, overfit_setup

__all__ = ["OVERFIT_CHECKLIST", "OverfitSetup", "padded_batch", "healthy_setup", "mystery_setups", "plot_overfit_runs"]

_MYSTERY = {"A": ("dropout_on", 0), "B": ("labels_not_shifted", 0), "C": ("learning_rate_extreme", 0),
            "D": ("padding_not_ignored", 0), "E": ("parameters_not_in_optimizer", 0), "F": ("mask_sees_future", 0)}


def padded_batch(sequences: list[list[int]], pad_id: int, length: int) -> torch.Tensor:
    """``(B, length)`` long: each sequence of ids cut to ``length`` and padded with ``pad_id`` after its end."""
    ids = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    for b, seq in enumerate(sequences):
        seq = list(seq)[:length]
        ids[b, :len(seq)] = torch.tensor(seq, dtype=torch.long)
    return ids


def healthy_setup(ids: torch.Tensor, pad_id: int, vocab_size: int) -> OverfitSetup:
    """A setup with nothing wrong: a small GPT (:class:`~tinylm_checks.probes.LabLM`), AdamW at lr 3e-3."""
    return overfit_setup(ids, pad_id, vocab_size)


def mystery_setups(ids: torch.Tensor, pad_id: int, vocab_size: int) -> dict[str, OverfitSetup]:
    """Six setups "A".."F" over the same batch and the same initial weights, each broken in one way (which one is
    the lab's question)."""
    return {name: overfit_setup(ids, pad_id, vocab_size, {bug: variant}) for name, (bug, variant) in _MYSTERY.items()}


def plot_overfit_runs(curves: dict[str, list[float]], title: str, reference: list[float] | None = None):
    """Loss against step for each named run (log scale), the healthy run dashed as ``reference``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    if reference is not None:
        ax.plot(range(1, len(reference) + 1), reference, "k--", label=say("lab.overfit.healthy"))
    for name, losses in curves.items():
        ax.plot(range(1, len(losses) + 1), losses, label=name)
    ax.set(xlabel=say("lab.loss.xlabel"), ylabel=say("lab.overfit.ylabel"), yscale="log", title=title)
    ax.legend(ncol=4, fontsize=8)
    fig.tight_layout()
    plt.show()
    return fig
