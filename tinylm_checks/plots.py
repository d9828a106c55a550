"""Plotting helpers the notebooks use (seaborn heatmaps of attention weights)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns
import torch


__all__ = ["plot_attention"]

def plot_attention(weights: torch.Tensor, tokens: list[str] | None = None, title: str = "attention weights",
                   ax=None):
    """Heatmap of one attention map.

    Args:
        weights: ``(T_q, T_k)`` tensor (rows = queries, columns = keys), e.g. ``weights[0]`` of a
            ``(B, T, T)`` batch or ``weights[0, h]`` of ``(B, H, T, T)``.
        tokens: optional labels, one per position (used for both axes when ``T_q == T_k``).
        title: the plot's title.
        ax: a matplotlib Axes to draw on; a new figure when None.

    Returns:
        The matplotlib Axes.

    Raises:
        ValueError: if ``weights`` is not 2-D or ``tokens`` has the wrong length.
    """
    w = torch.as_tensor(weights).detach().float().cpu()
    if w.dim() != 2:
        raise ValueError(f"plot_attention expects one (T_q, T_k) map, got shape {tuple(w.shape)}; "
                         "index the batch (and head) first, e.g. weights[0] or weights[0, h]")
    if tokens is not None and len(tokens) != w.shape[1]:
        raise ValueError(f"{len(tokens)} tokens for {w.shape[1]} key positions")
    if ax is None:
        _, ax = plt.subplots(figsize=(1 + 0.5 * w.shape[1], 0.8 + 0.5 * w.shape[0]))
    labels = tokens if tokens is not None else "auto"
    sns.heatmap(w.numpy(), ax=ax, vmin=0.0, vmax=1.0, cmap="viridis", annot=w.shape[1] <= 8, fmt=".2f",
                square=True, cbar=True, xticklabels=labels,
                yticklabels=tokens if tokens is not None and len(tokens) == w.shape[0] else "auto")
    ax.set_xlabel("key position (attended to)")
    ax.set_ylabel("query position (attending)")
    ax.set_title(title)
    return ax
