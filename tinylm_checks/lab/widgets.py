"""Interactive views the notebooks use (ipywidgets and a live plot): the explorer of a positional table (04),
the attention explorer of a trained model (10) and the loss curve that redraws while a loop trains (09).
They draw what the learner computed; none of them judges anything."""
from __future__ import annotations

import torch

from .._text import say
from ._lazy import plt
from .plots import _table, attention_maps, plot_attention

__all__ = ["position_explorer", "attention_explorer", "LiveLossPlot"]


def position_explorer(pe):
    """An interactive view of a positional table, with two sliders, ``position`` and ``dimension``.

    Left: feature ``dimension`` across all positions (a sine or cosine wave), with the chosen position
    marked; the title gives the pair's frequency, read from the table (the angle of its pair at
    position 1), and its wavelength. Right: the dot product ``PE[position] . PE[p]`` of the chosen
    position with every position ``p``, against their distance ``p - position``: with a sinusoidal table
    its shape depends only on the distance. Both plots are drawn again whenever a slider moves.

    Args:
        pe: ``(max_len, d_model)`` table, or a ``(1, max_len, d_model)`` buffer.

    Returns:
        The ``ipywidgets.interactive`` widget (display it, or leave it as the cell's last expression).

    Raises:
        ValueError: if ``pe`` is not such a table.
    """
    import ipywidgets as widgets

    t = _table(pe)
    L, D = t.shape
    dots = t @ t.T  # (L, L): PE[m] . PE[n]
    freq = torch.atan2(t[1, 0::2], t[1, 1::2]) if L > 1 else torch.zeros(D // 2)  # (D/2,): angle of pair i at pos 1
    limit = float(dots.abs().max()) * 1.05 or 1.0

    def draw(position: int, dimension: int):
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.4))
        pair = dimension // 2
        w = float(freq[pair])
        wave = "sin" if dimension % 2 == 0 else "cos"
        left.plot(range(L), t[:, dimension].numpy(), color="tab:blue")
        left.plot([position], [float(t[position, dimension])], "o", color="tab:red")
        left.axvline(position, color="tab:red", lw=0.8, ls=":")
        length = (say("lab.explorer.wavelength", length=2 * torch.pi / abs(w)) if abs(w) > 1e-12
                  else say("lab.explorer.infinite"))
        left.set_title(say("lab.explorer.feature", dimension=dimension, wave=wave, w=w, length=length), fontsize=10)
        left.set_xlabel(say("lab.explorer.position"))
        left.set_ylim(-1.1, 1.1)
        distance = torch.arange(L) - position
        right.plot(distance.numpy(), dots[position].numpy(), color="tab:green")
        right.axvline(0, color="tab:red", lw=0.8, ls=":")
        right.set_xlim(-(L - 1), L - 1)
        right.set_ylim(-limit, limit)
        right.set_title(say("lab.explorer.dots", position=position), fontsize=10)
        right.set_xlabel(say("lab.explorer.distance"))
        fig.tight_layout()
        plt.show()

    position = widgets.IntSlider(value=min(L - 1, L // 2), min=0, max=L - 1, description=say("lab.explorer.position"),
                                 continuous_update=False)
    dimension = widgets.IntSlider(value=0, min=0, max=D - 1, description=say("lab.explorer.dimension"),
                                   continuous_update=False)
    return widgets.interactive(draw, position=position, dimension=dimension)


def attention_explorer(model, tokenizer, text: str):
    """An interactive view of a language model's attention: sliders ``layer`` and ``head`` and a box for
    ``text``; shows that head's ``(T, T)`` weights on the text's last ``max_seq_len`` tokens (seaborn heatmap,
    queries down, keys across), drawn again whenever a control changes (the text when Enter is pressed or the
    box loses focus).

    Args:
        model: a ``TinyLM``-like model: ``max_seq_len``, ``blocks``, ``get_attention_weights()``.
        tokenizer: with ``encode(text) -> list[int]`` and ``decode(ids) -> str``.
        text: the text shown first.

    Returns:
        The ``ipywidgets.interactive`` widget (display it, or leave it as the cell's last expression).
    """
    import ipywidgets as widgets

    n_layers = len(model.get_attention_weights()) or len(model.blocks)
    weights, _ = attention_maps(model, tokenizer, text)
    n_heads = weights[0].shape[0]

    def draw(layer: int, head: int, text: str):
        try:
            maps, tokens = attention_maps(model, tokenizer, text)
        except ValueError as e:
            print(say("lab.explorer.cannot_show", error=e))
            return
        T = len(tokens)
        fig, ax = plt.subplots(figsize=(min(9, 2 + 0.32 * T), min(8, 1.6 + 0.3 * T)))
        plot_attention(maps[layer][head], tokens, title=say("lab.maps.panel", layer=layer, head=head), ax=ax)
        ax.tick_params(labelsize=8)
        fig.tight_layout()
        plt.show()

    layer = widgets.IntSlider(value=0, min=0, max=n_layers - 1, description=say("lab.explorer.layer"), continuous_update=False)
    head = widgets.IntSlider(value=0, min=0, max=n_heads - 1, description=say("lab.explorer.head"), continuous_update=False)
    box = widgets.Text(value=text, description=say("lab.explorer.text"), continuous_update=False,
                       layout=widgets.Layout(width="90%"))
    return widgets.interactive(draw, layer=layer, head=head, text=box)


class LiveLossPlot:
    """A loss curve that redraws in place while a training loop runs (matplotlib in one display slot).

    ``update(step, loss)`` after every step stores the point and, every ``every`` steps, redraws the
    figure in the cell's output (``IPython.display``'s ``display_id``: one figure updated, not one per
    redraw, as a PNG); ``add_val(step, val_loss)`` adds a validation point; ``close()`` draws the final state.
    Outside IPython only the data are kept. The training loss is drawn raw (light) and as a moving average
    over ``smooth`` steps; with ``smooth=1``, as one line.

    Args:
        total_steps: the x-axis limit; title: the figure's title; every: redraw period in steps (>= 1);
        smooth: moving-average window (>= 1); log_y: logarithmic loss axis (overfitting runs go near 0).

    Raises:
        ValueError: if ``total_steps``, ``every`` or ``smooth`` is < 1.
    """

    def __init__(self, total_steps: int, title: str | None = None, every: int = 20, smooth: int = 20,
                 log_y: bool = False):
        if min(total_steps, every, smooth) < 1:
            raise ValueError(f"total_steps, every and smooth must be >= 1, got {total_steps}, {every}, {smooth}")
        self.total_steps, self.every, self.smooth, self.log_y = total_steps, every, smooth, log_y
        self.title = say("lab.loss.title") if title is None else title
        self.steps: list[int] = []
        self.losses: list[float] = []
        self.val_steps: list[int] = []
        self.val_losses: list[float] = []
        self._handle = None

    def update(self, step: int, loss: float) -> None:
        self.steps.append(int(step))
        self.losses.append(float(loss))
        if step % self.every == 0:
            self._draw()

    def add_val(self, step: int, val_loss: float) -> None:
        self.val_steps.append(int(step))
        self.val_losses.append(float(val_loss))

    def close(self) -> None:
        self._draw()

    def figure(self):
        """The figure of the current state (a new matplotlib Figure, not shown)."""
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7, 3.2))
        ax = fig.add_subplot()
        if self.losses and self.smooth == 1:  # no moving average: one line, the loss of each step
            ax.plot(self.steps, self.losses, color="tab:blue", label=say("lab.live.train"))
        elif self.losses:
            ax.plot(self.steps, self.losses, color="tab:blue", alpha=0.3, lw=0.8, label=say("lab.live.each_step"))
            k = min(self.smooth, len(self.losses))
            avg = torch.tensor(self.losses).unfold(0, k, 1).mean(-1).tolist()  # moving average over k steps
            ax.plot(self.steps[k - 1:], avg, color="tab:blue", label=say("lab.live.mean", k=k))
        if self.val_losses:
            ax.plot(self.val_steps, self.val_losses, "o-", color="tab:orange", label=say("lab.live.validation"))
        ax.set_xlim(0, self.total_steps)
        if self.log_y:
            ax.set_yscale("log")
        ax.set_xlabel(say("lab.loss.xlabel"))
        ax.set_ylabel(say("lab.live.ylabel"))
        last = say("lab.live.last", loss=self.losses[-1], step=self.steps[-1]) if self.losses else ""
        ax.set_title(self.title + last, fontsize=10)
        ax.grid(alpha=0.3)
        if self.losses:
            ax.legend(fontsize=8, loc="upper right")
        fig.tight_layout()
        return fig

    def _draw(self) -> None:
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:
            return
        if get_ipython() is None:
            return
        import io

        from IPython.display import Image

        png = io.BytesIO()
        self.figure().savefig(png, format="png", dpi=80)  # a PNG whatever the backend (Figure has no display of its own)
        if self._handle is None:
            self._handle = display(Image(data=png.getvalue()), display_id=True)
        else:
            self._handle.update(Image(data=png.getvalue()))
