"""A check's failure as HTML, for JupyterLab and nbgrader's feedback page: tried / expected / got as a small table,
the expected and the got matrix side by side as heatmaps with the differing cells marked, the named mistake and
where to look, and the fix in a fold the learner opens when they want it.

The markup's strings are code, not sentences (``# code``): every word a learner reads comes from the message table.
Only tags and styles that nbgrader's pages keep are used (:mod:`tinylm_grading.html`: tables, ``<details>``,  # code
``background-color``, ``color``, ``font-weight``), so the page the grader makes shows what JupyterLab showed. Every
text is escaped: a failure quotes the learner's code and values.
"""
from __future__ import annotations

import html
import math

from tinylm_solutions import i18n

from ._text import say

LOW, HIGH = (255, 255, 255), (74, 128, 201)  # the heatmaps' colours for the smallest and the largest value
MARK = "#c00000"  # a differing cell's marker


def rich_frontend() -> bool:
    """Is this a Jupyter kernel (JupyterLab, a hosted notebook, nbclient), which shows HTML? A terminal's IPython
    or plain Python gets the plain text."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def display(failure, reveal: bool) -> None:
    """Show ``failure`` in the notebook as HTML (with its plain text for frontends that show no HTML)."""
    from IPython.display import display as show
    show({"text/html": to_html(failure, reveal), "text/plain": failure.text(reveal)}, raw=True)


def _colon() -> str:
    """A label's colon in the learner's language: full-width in Chinese."""
    return "：" if i18n.language() == "zh" else ": "


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _colour(value: float, low: float, high: float) -> str:
    if not math.isfinite(value):
        return "#bbbbbb"  # -inf (a masked score), nan
    t = 0.0 if high <= low else (value - low) / (high - low)
    r, g, b = (round(a + (z - a) * t) for a, z in zip(LOW, HIGH))
    return f"#{r:02x}{g:02x}{b:02x}"


def _grid(values: list[list[float]], other: list[list[float]], at: list[int], low: float, high: float) -> str:
    r0, c0 = at
    head = "".join(f'<th style="font-weight: normal">{c0 + j}</th>' for j in range(len(values[0])))  # code
    rows = []
    for i, (row, other_row) in enumerate(zip(values, other)):
        cells = []
        for v, w in zip(row, other_row):
            differs = not _same(v, w)
            style = f"background-color: {_colour(v, low, high)}; text-align: center"
            if differs:
                style += f"; color: {MARK}; font-weight: bold"
            cells.append(f'<td style="{style}" title="{_e(_number(v))}">{"✕" if differs else "&nbsp;"}</td>')  # code
        rows.append(f'<tr><th style="font-weight: normal">{r0 + i}</th>{"".join(cells)}</tr>')  # code
    return f'<table class="tinylm-heatmap"><tr><th></th>{head}</tr>{"".join(rows)}</table>'  # code


def _same(a: float, b: float) -> bool:
    if not (math.isfinite(a) and math.isfinite(b)):
        return a == b or (math.isnan(a) and math.isnan(b))
    return abs(a - b) <= 1e-5 + 1e-4 * abs(b)  # the checks' tolerance (tinylm_checks._core: ATOL, RTOL)  # code


def _number(v: float) -> str:
    return f"{v:.4g}"


def matrices_html(matrices: dict) -> str:
    """The expected and the got matrix side by side: one colour scale for both, each cell's value in its tooltip,
    the cells that differ marked."""
    expected, got, at = matrices["expected"], matrices["got"], matrices["at"]
    finite = [v for grid in (expected, got) for row in grid for v in row if math.isfinite(v)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
    rows, cols = len(expected), len(expected[0])
    where = say("core.html.cells", row=at[0], last_row=at[0] + rows - 1, col=at[1], last_col=at[1] + cols - 1)
    return (f'<table class="tinylm-matrices"><tr><th>{_e(say("core.label.expected"))}</th>'  # code
            f'<th>{_e(say("core.label.got"))}</th></tr>'
            f'<tr><td>{_grid(expected, got, at, low, high)}</td><td>{_grid(got, expected, at, low, high)}</td></tr>'
            f'</table><p><em>{_e(where)} {_e(say("core.html.legend", low=_number(low), high=_number(high)))}</em></p>')


def _parts(failure, reveal: bool, tried_shown: str | None = None) -> str:
    rows = "".join(f'<tr><th style="text-align: left">{_e(say("core.label." + label))}</th>'  # code
                   f'<td style="text-align: left"><code>{_e(value)}</code></td></tr>'  # code
                   for label, value in (("tried", failure.tried), ("expected", failure.expected),
                                        ("got", failure.got))
                   if value and not (label == "tried" and value == tried_shown))
    out = f'<table class="tinylm-parts">{rows}</table>' if rows else ""  # code
    if failure.matrices:
        out += matrices_html(failure.matrices)
    if failure.mistake:
        out += (f'<p><strong>{_e(say("core.label.mistake"))}</strong>{_colon()}'
                f'{_e(failure.sentence)}</p>')
        if failure.look:
            out += f'<p><strong>{_e(say("core.label.look"))}</strong>{_colon()}{_e(failure.look)}</p>'
    if failure.fix and not reveal:
        out += (f'<details class="tinylm-fix"><summary>{_e(say("core.html.show_fix"))}</summary>'  # code
                f'<p><strong>{_e(say("core.label.fix"))}</strong>{_colon()}{_e(failure.fix)}</p></details>')
    elif failure.hint:
        out += f'<p><strong>{_e(say("core.label.hint"))}</strong>{_colon()}{_e(failure.hint)}</p>'
    return out


def to_html(failure, reveal: bool = False) -> str:
    """``failure`` as HTML: its headline, its parts, and each further failure found in the same run."""
    head = say("core.headline", check=failure.check, problem=failure.problem)
    title = f'<strong style="color: {MARK}">CheckFailure</strong>'  # code
    out = [f'<div class="tinylm-failure"><p>{title}: {_e(head)}</p>', _parts(failure, reveal)]  # code
    for other in failure.also:
        out += [f'<p><strong>{_e(say("core.label.also"))}</strong>{_colon()}{_e(other.problem)}</p>',
                f'<div style="text-align: left">{_parts(other, reveal, failure.tried)}</div>']  # code
    return "".join(out) + "</div>"
