"""Figures the notebooks draw: seaborn heatmaps (attention weights, the positional table), the picture of a
token cut into heads, and the figures of stages 05 to 11 (each draws what the notebook computed)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from .._text import say
from ._lazy import plt, sns


__all__ = ["plot_attention", "plot_heads_split", "plot_position_encoding", "plot_activations",
           "plot_token_vectors", "plot_changes", "plot_depth_profile", "plot_parameter_ratio",
           # stage 11
           "plot_layer_grad_norms", "plot_lr_sweep", "plot_order_test", "plot_loss_curves",
           # stage 09
           "plot_training_log"]


def plot_attention(weights: torch.Tensor, tokens: list[str] | None = None, title: str | None = None, ax=None):
    """Heatmap of one attention map.

    Args:
        weights: ``(T_q, T_k)`` tensor (rows = queries, columns = keys), e.g. ``weights[0]`` of a
            ``(B, T, T)`` batch or ``weights[0, h]`` of ``(B, H, T, T)``.
        tokens: optional labels, one per position (used for both axes when ``T_q == T_k``).
        title: the plot's title (default: "attention weights", in the learner's language).
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
    ax.set_xlabel(say("lab.attention.xlabel"))
    ax.set_ylabel(say("lab.attention.ylabel"))
    ax.set_title(say("lab.attention.title") if title is None else title)
    return ax


def plot_heads_split(d_model: int = 12, num_heads: int = 3):
    """Draw one token vector cut into heads and glued back (``split_heads`` then ``merge_heads``).

    Top: the token's ``d_model`` features, numbered and coloured by the head they go to. Middle: the
    ``(num_heads, d_k)`` slices, one row per head, each attended on its own. Bottom: the merged vector,
    the same features in the same places.

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: if ``d_model`` is not divisible by ``num_heads``.
    """
    if d_model % num_heads:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    d_k = d_model // num_heads
    features = torch.arange(d_model)
    head_of = (features // d_k).float()
    fig, axes = plt.subplots(3, 1, figsize=(0.55 * d_model + 1.5, 1.2 + 0.45 * (num_heads + 2)),
                             gridspec_kw={"height_ratios": [1, num_heads, 1]})
    panels = [(head_of[None], features[None], say("lab.heads.token")),
              (head_of.view(num_heads, d_k), features.view(num_heads, d_k),
               say("lab.heads.split", num_heads=num_heads, d_k=d_k)),
              (head_of[None], features[None], say("lab.heads.merge"))]
    for ax, (colour, label, title) in zip(axes, panels):
        ax.imshow(colour.numpy(), cmap="tab10", vmin=0, vmax=9, aspect="auto")
        for (r, c), f in zip(torch.cartesian_prod(torch.arange(label.shape[0]), torch.arange(label.shape[1])).tolist(),
                             label.flatten().tolist()):
            ax.text(c, r, f"f{f}", ha="center", va="center", color="white", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks(range(label.shape[0]) if label.shape[0] > 1 else [])
        ax.set_yticklabels([say("lab.heads.row", h=h) for h in range(label.shape[0])] if label.shape[0] > 1 else [])
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def _table(pe) -> torch.Tensor:
    """A positional table as a 2-D float tensor (max_len, D), from (max_len, D) or (1, max_len, D)."""
    t = torch.as_tensor(pe).detach().float().cpu()
    if t.dim() == 3 and t.shape[0] == 1:
        t = t[0]
    if t.dim() != 2 or t.shape[1] % 2:
        raise ValueError(f"expected a table (max_len, d_model) with d_model even, or (1, max_len, d_model); got shape "
                         f"{tuple(torch.as_tensor(pe).shape)}")
    return t


def plot_position_encoding(pe, title: str | None = None, ax=None):
    """Heatmap of a positional table: one row per position, one column per feature.

    Args:
        pe: ``(max_len, d_model)`` table, or a ``(1, max_len, d_model)`` buffer.
        title: the plot's title.
        ax: a matplotlib Axes to draw on; a new figure when None.

    Returns:
        The matplotlib Axes.

    Raises:
        ValueError: if ``pe`` is not such a table.
    """
    t = _table(pe)
    L, D = t.shape
    if ax is None:
        _, ax = plt.subplots(figsize=(min(12, 2 + 0.18 * D), min(8, 1.5 + 0.1 * L)))
    sns.heatmap(t.numpy(), ax=ax, cmap="RdBu_r", vmin=-1.0, vmax=1.0, center=0.0, cbar=True,
                xticklabels=max(1, D // 16), yticklabels=max(1, L // 16))
    ax.set_xlabel(say("lab.position.xlabel"))
    ax.set_ylabel(say("lab.position.ylabel"))
    ax.set_title(say("lab.position.title") if title is None else title)
    return ax


# ---- stages 05 (feed-forward) and 06 (normalisation and residuals): each helper only draws what the
# notebook computed, so the computation stays in the notebook where the learner reads it.

def plot_activations(lo: float = -4.0, hi: float = 3.0, axes=None):
    """Left: ReLU, GELU (exact) and SiLU on ``[lo, hi]``. Right: GELU's tanh approximation minus the exact
    GELU, on the same range.

    GELU(x) = x * Phi(x) with Phi the standard normal CDF (Hendrycks & Gimpel 2016); its tanh form is
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``; SiLU(x) = x * sigmoid(x).

    Args:
        lo, hi: the input range.
        axes: two matplotlib Axes; a new 1 x 2 figure when None.

    Returns:
        The two Axes.

    Raises:
        ValueError: if ``lo >= hi``.
    """
    if not lo < hi:
        raise ValueError(f"need lo < hi, got {lo}, {hi}")
    x = torch.linspace(lo, hi, 401, dtype=torch.float64)
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [3, 2]})
    ax, err = axes
    ax.plot(x.numpy(), F.relu(x).numpy(), color="0.55", ls="--", label="ReLU")
    ax.plot(x.numpy(), F.gelu(x).numpy(), color="C0", lw=2.5, label=say("lab.activations.gelu"))
    ax.plot(x.numpy(), F.silu(x).numpy(), color="C2", ls=":", label="SiLU")
    for a in (ax, err):
        a.axhline(0, color="0.85", lw=0.8, zorder=0)
        a.axvline(0, color="0.85", lw=0.8, zorder=0)
        a.set_xlabel(say("lab.activations.xlabel"))
    ax.set_ylabel(say("lab.activations.ylabel"))
    ax.set_title(say("lab.activations.title"))
    ax.legend(loc="upper left")
    err.plot(x.numpy(), (F.gelu(x, approximate="tanh") - F.gelu(x)).numpy(), color="C1")
    err.set_ylabel(say("lab.activations.difference"))
    err.set_title(say("lab.activations.tanh_title"))
    return axes


def plot_token_vectors(vectors: dict[str, torch.Tensor], title: str, ax=None):
    """One line per labelled ``(D,)`` vector, against the feature index: e.g. one token's normalised
    vector computed alone and inside a padded batch. Identical vectors draw on top of each other, so
    later lines are dashed.

    Raises:
        ValueError: if a vector is not 1-D or the vectors differ in length.
    """
    vs = {k: torch.as_tensor(v).detach().double().cpu() for k, v in vectors.items()}
    if any(v.dim() != 1 for v in vs.values()) or len({v.numel() for v in vs.values()}) > 1:
        raise ValueError("plot_token_vectors expects (D,) vectors of one length: index the batch and position first, "
                         "e.g. out[0, 1]")
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    for i, (label, v) in enumerate(vs.items()):
        ax.plot(range(v.numel()), v.numpy(), marker="o", ms=4, lw=1.5 + 1.5 * (i == 0),
                ls="-" if i == 0 else "--", label=label)
    ax.set_xlabel(say("lab.vectors.xlabel"))
    ax.set_ylabel(say("lab.vectors.ylabel"))
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def plot_changes(changes: dict[str, float], title: str | None = None, ax=None):
    """Horizontal bars, one per labelled number (e.g. the largest change in a token's output between two
    settings); every bar is labelled with its value, so a bar of exactly 0 is visible as "0".

    Raises:
        ValueError: if a value is negative or not finite.
    """
    vals = {k: float(v) for k, v in changes.items()}
    if any(not math.isfinite(v) or v < 0 for v in vals.values()):
        raise ValueError(f"expected finite non-negative numbers, got {vals}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 0.5 + 0.45 * len(vals)))
    labels = list(vals)[::-1]
    ax.barh(labels, [vals[k] for k in labels], color=["C3" if vals[k] > 0 else "C2" for k in labels])
    top = max(vals.values(), default=1.0) or 1.0
    for i, k in enumerate(labels):
        ax.text(vals[k] + 0.01 * top, i, f"{vals[k]:.3g}", va="center")
    ax.set_xlim(0, 1.2 * top)
    ax.set_xlabel(say("lab.changes.xlabel"))
    ax.set_title(say("lab.changes.title") if title is None else title)
    return ax


def plot_depth_profile(forward: dict[str, list[float]], backward: dict[str, list[float]], *,
                       forward_label: str | None = None, backward_label: str | None = None,
                       log: bool = True, hline: tuple[float, str] | None = None, axes=None):
    """Two panels against the layer index, one line per wiring (same label in both): what the forward pass
    carries after each layer, and the gradient that reaches each layer.

    Args:
        forward: wiring -> one float per layer (e.g. the std of layer l's output, or a token's mean norm).
        backward: wiring -> one float per layer (e.g. ||d loss / d W|| of layer l).
        forward_label, backward_label: the panels' y labels.
        log: log-scale y axes (every value must then be > 0).
        hline: optional ``(value, label)`` drawn as a dotted line on the forward panel.
        axes: two matplotlib Axes; a new 1 x 2 figure when None.

    Returns:
        The two Axes.

    Raises:
        ValueError: if the two dicts name different wirings, a wiring's lists differ in length, or a value
            is not > 0 on a log scale.
    """
    if set(forward) != set(backward):
        raise ValueError(f"forward names {sorted(forward)}, backward names {sorted(backward)}: they must match")
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for label in forward:
        if len(forward[label]) != len(backward[label]):
            raise ValueError(f"{label}: {len(forward[label])} forward values but {len(backward[label])} backward ones")
    forward_label = say("lab.depth.forward_label") if forward_label is None else forward_label
    backward_label = say("lab.depth.backward_label") if backward_label is None else backward_label
    for ax, data, ylabel, title in ((axes[0], forward, forward_label, say("lab.depth.forward")),
                                    (axes[1], backward, backward_label, say("lab.depth.backward"))):
        for label, values in data.items():
            if log and any(not v > 0 for v in values):
                raise ValueError(f"{label}: every value must be > 0 for a log scale (run in float64 so tiny "
                                 "numbers do not underflow to 0)")
            ax.plot(range(len(values)), values, marker=".", label=label)
        if log:
            ax.set_yscale("log")
        ax.set_xlabel(say("lab.depth.xlabel"))
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="major", alpha=0.3)
    if hline is not None:
        axes[0].axhline(hline[0], color="grey", linestyle=":", label=hline[1])
    for ax in axes:
        ax.legend(fontsize=8)
    return axes


def plot_parameter_ratio(d_models: Sequence[int], totals: Sequence[int], ax=None):
    """Parameters per block divided by 12 D^2, against D (log scale): the ratio tends to 1.

    Args:
        d_models: the widths D.
        totals: the parameter count of one block at each width (with d_ff = 4 D).
        ax: a matplotlib Axes to draw on; a new figure when None.

    Returns:
        The matplotlib Axes.

    Raises:
        ValueError: if the two sequences differ in length.
    """
    if len(d_models) != len(totals):
        raise ValueError(f"{len(d_models)} widths but {len(totals)} totals")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    ratios = [n / (12 * d * d) for d, n in zip(d_models, totals)]
    ax.plot(d_models, ratios, marker="o", label=say("lab.ratio.parameters"))
    ax.plot(d_models, [1 + 13 / (12 * d) for d in d_models], linestyle="--", label="1 + 13 / (12 D)")
    ax.axhline(1.0, color="grey", linestyle=":")
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(d_models), [str(d) for d in d_models])
    ax.set(xlabel="d_model D", ylabel=say("lab.ratio.ylabel"), title=say("lab.ratio.title"))
    ax.legend()
    ax.grid(alpha=0.3)
    return ax


# --------------------------------------------------------------------------- stage 11: ablations and debugging

def plot_layer_grad_norms(record: dict, unigram: float | None = None, axes=None):
    """The no-residual ablation (a record of :func:`tinylm_solutions.ablations.residual_ablation`): the gradient norm
    reaching each block (log scale, mean over the seeds and their range) and each run's final loss, one dot per seed,
    beside the unigram loss. Drawn by :func:`tinylm_solutions.report.draw_residual`, as in the report.

    Returns:
        The two Axes (a new 1 x 2 figure when ``axes`` is None).
    """
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    from tinylm_solutions import report  # its import is slow, and only these figures need it

    report.draw_residual(axes, record, unigram)
    return axes


def plot_lr_sweep(record: dict, unigram: float | None = None, ax=None):
    """Final training loss against the learning rate (log x), per wiring, mean over the seeds and their range (a
    record of :func:`tinylm_solutions.ablations.norm_placement_sweep`; :func:`tinylm_solutions.report.draw_norm_placement`).

    Returns:
        The Axes (a new figure when ``ax`` is None).
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 4.2))
    from tinylm_solutions import report  # its import is slow, and only these figures need it

    report.draw_norm_placement(ax, record, unigram)
    return ax


def plot_order_test(record: dict, ax=None):
    """Grouped bars: each model's loss on text in its order ("A B C D") and reversed ("D C B A"), mean over the seeds
    with their range (a record of :func:`tinylm_solutions.ablations.order_test`;
    :func:`tinylm_solutions.report.draw_order_test`).

    Returns:
        The Axes (a new figure when ``ax`` is None).
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 4.2))
    from tinylm_solutions import report  # its import is slow, and only these figures need it

    report.draw_order_test(ax, record)
    return ax


def plot_loss_curves(histories: dict[str, Sequence[float]], title: str | None = None, hline=None, ax=None):
    """Training loss against the step, one line per run; ``hline=(value, label)`` draws a dotted reference.

    Returns:
        The Axes.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 4.2))
    for label, losses in histories.items():
        ax.plot(range(1, len(losses) + 1), [v if math.isfinite(v) else float("nan") for v in losses], label=label)
    if hline is not None:
        ax.axhline(hline[0], color="grey", linestyle=":", label=hline[1])
    ax.set(xlabel=say("lab.loss.xlabel"), ylabel=say("lab.loss.ylabel"),
           title=say("lab.loss.title") if title is None else title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return ax


# ---- stage 10 (generation and inspection): the attention maps of a trained model

__all__ += ["token_labels", "attention_maps", "plot_attention_heads"]


def token_labels(tokenizer, ids) -> list[str]:
    """One readable label per token id: the decoded text, with a space shown as '␣' and a newline as '↵'."""
    return [tokenizer.decode([int(i)]).replace(" ", "␣").replace("\n", "↵") or "∅" for i in ids]


def attention_maps(model, tokenizer, text: str) -> tuple[list[torch.Tensor], list[str]]:
    """Run ``model`` (eval mode, no autograd; its mode is restored) on the last ``model.max_seq_len`` tokens of
    ``text`` and return its attention weights, one ``(H, T, T)`` tensor per layer (``model.get_attention_weights()``
    of the one sequence), and the tokens' labels.

    Raises:
        ValueError: if ``text`` is empty or has characters the tokenizer does not know.
    """
    ids = tokenizer.encode(text)[-model.max_seq_len:]
    if not ids:
        raise ValueError("the text is empty: type at least one character")
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            model(torch.tensor([ids]))
        weights = [w[0] for w in model.get_attention_weights()]  # each (H, T, T)
    finally:
        model.train(was_training)
    return weights, token_labels(tokenizer, ids)


def plot_attention_heads(weights, tokens: list[str], axes=None):
    """A grid of seaborn heatmaps, one row per layer and one column per head, on one colour scale (0 to 1).

    Args:
        weights: one layer's ``(H, T, T)`` attention weights, or a list of them (one per layer), e.g. what
            :func:`attention_maps` returns.
        tokens: the ``T`` labels of the positions.
        axes: a ``(layers, H)`` array of matplotlib Axes to draw on; a new figure when None.

    Returns:
        The ``(layers, H)`` array of Axes.

    Raises:
        ValueError: if a layer's weights are not ``(H, T, T)`` or ``tokens`` does not have ``T`` labels.
    """
    import numpy as np

    layers = [torch.as_tensor(w).detach().float().cpu() for w in ([weights] if torch.is_tensor(weights) else weights)]
    for w in layers:
        if w.dim() != 3 or w.shape[1] != w.shape[2] or len(tokens) != w.shape[2] or w.shape != layers[0].shape:
            raise ValueError(f"expected (H, T, T) weights per layer and T labels, got {tuple(w.shape)} and "
                             f"{len(tokens)} labels")
    n, H = len(layers), layers[0].shape[0]
    if axes is None:
        _, axes = plt.subplots(n, H, figsize=(3.3 * H, 3.3 * n), squeeze=False)
    axes = np.asarray(axes).reshape(n, H)
    # Labels come last: seaborn draws the whole figure once per heatmap (to look for overlapping labels), and
    # drawing every label of the heatmaps before it, each time, is what would take long.
    for layer, w in enumerate(layers):
        for h in range(H):
            sns.heatmap(w[h].numpy(), ax=axes[layer, h], vmin=0.0, vmax=1.0, cmap="viridis", cbar=False,
                        square=True, xticklabels=False, yticklabels=False)
    centres = [i + 0.5 for i in range(len(tokens))]
    for layer in range(n):
        for h in range(H):
            ax = axes[layer, h]
            ax.set_xticks(centres, tokens if layer == n - 1 else [], rotation=90, fontsize=7)  # outer labels only:
            ax.set_yticks(centres, tokens if h == 0 else [], fontsize=7)  # the grid's rows and columns line up
            ax.set_title(say("lab.maps.panel", layer=layer, head=h), fontsize=10)
        axes[layer, 0].set_ylabel(say("lab.maps.ylabel"))
    for ax in axes[-1]:
        ax.set_xlabel(say("lab.maps.xlabel"))
    return axes


# ---- stage 09 (training): the run's log

def plot_training_log(log: dict[str, Sequence], axes=None):
    """Four panels of a training run's log, against ``log["step"]``: the learning rate, the global gradient
    norm (before clipping, with ``log["max_grad_norm"]`` drawn as a line when given), each layer's
    activation RMS (``log["act_rms"]``: layer name -> list, one value per step) and tokens/s.

    Args:
        log: ``{"step", "lr", "grad_norm", "act_rms", "tokens_per_s"}`` (lists of equal length; ``act_rms``
            a dict of such lists), optionally ``"max_grad_norm"`` (a number).
        axes: four matplotlib axes to draw in (default: a new 1 x 4 figure).

    Returns:
        The four axes.

    Raises:
        ValueError: if a key is missing or a list's length differs from ``log["step"]``'s.
    """
    need = ("step", "lr", "grad_norm", "act_rms", "tokens_per_s")
    missing = [k for k in need if k not in log]
    if missing:
        raise ValueError(f"the log needs the keys {need}; missing {missing}")
    steps = list(log["step"])
    series = {"lr": log["lr"], "grad_norm": log["grad_norm"], "tokens_per_s": log["tokens_per_s"],
              **{f"act_rms[{k}]": v for k, v in log["act_rms"].items()}}
    bad = [k for k, v in series.items() if len(v) != len(steps)]
    if bad:
        raise ValueError(f"{bad} do not have one value per step ({len(steps)})")
    if axes is None:
        _, axes = plt.subplots(1, 4, figsize=(15, 3.2))
    lr_ax, gn_ax, act_ax, tok_ax = axes
    lr_ax.plot(steps, log["lr"], color="tab:purple")
    lr_ax.set_title(say("lab.log.lr"), fontsize=10)
    gn_ax.plot(steps, log["grad_norm"], color="tab:red", lw=0.8)
    if log.get("max_grad_norm") is not None:
        gn_ax.axhline(float(log["max_grad_norm"]), color="black", ls=":", lw=1, label=say("lab.log.clip"))
        gn_ax.legend(fontsize=8)
    gn_ax.set_yscale("log")
    gn_ax.set_title(say("lab.log.grad_norm"), fontsize=10)
    for name, values in log["act_rms"].items():
        act_ax.plot(steps, values, label=name)
    act_ax.set_title(say("lab.log.act_rms"), fontsize=10)
    act_ax.legend(fontsize=7)
    tok_ax.plot(steps, log["tokens_per_s"], color="tab:green", lw=0.8)
    tok_ax.set_title(say("lab.log.tokens"), fontsize=10)
    for ax in axes:
        ax.set_xlabel(say("lab.loss.xlabel"))
        ax.grid(alpha=0.3)
    return axes
