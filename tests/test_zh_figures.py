"""Issue 40, item 4: every table and figure the notebooks and the report draw is in the learner's language.

Each figure helper (tinylm_checks' plot_*, tinylm_solutions.report's tables and figures) is rendered under Chinese;
every text it shows (titles, axis labels, tick labels, legends, table headers and notes) may hold English only as
code, units and names (:data:`ALLOWED`), never as a word of 3 letters or more. The CJK font is tested too: a figure
drawn under Chinese draws every glyph (matplotlib warns "Glyph ... missing" otherwise).
"""
from __future__ import annotations

import re
import warnings

import matplotlib
import pytest
import torch

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import tinylm_checks  # noqa: E402 - set_language also installs the CJK fallback font
from tinylm_checks.lab import plots  # noqa: E402
from tinylm_solutions import report  # noqa: E402
from tinylm_solutions.model import TinyLM  # noqa: E402

ALLOWED = {  # names, units and terms the Chinese text writes in English (tinylm_checks/messages/terms.py)
    "token", "tokens", "unigram", "softmax", "logits", "dropout", "ReLU", "GELU", "SiLU", "tanh", "FLOPs", "GFLOP",
    "TinyLM", "AdamW", "RMS", "LayerNorm", "nat", "Pre", "Post", "sin", "cos", "erf",
    "blocks", "norm",  # TinyLM's attributes, the parts of its parameter table (token_emb, blocks, norm, lm_head)
}
WORD = re.compile(r"[A-Za-z]{3,}")
CODE = re.compile(r"`[^`]*`|\$[^$]*\$|\w*_\w*|\d+[A-Z]+")  # code, math (log ticks), identifiers, 6LTD

RECORD = {
    "no_residual": {"steps": 200, "seeds": [0, 1], "runs": {
        "2 layers, residual": {"final_loss": [2.8, 2.9], "grad_norms": [[0.3, 0.3], [0.2, 0.22]]},
        "8 layers, no residual": {"final_loss": [3.3, 3.35], "grad_norms": [[0.05, 2.0], [0.04, 2.0]]}}},
    "norm_placement": {"steps": 150, "seeds": [0, 1], "warmup_steps": 37, "runs": {
        "Pre-LN": {"lrs": [0.001, 0.03], "final_loss": [[3.0, 3.1], [3.02, 3.2]]},
        "Post-LN": {"lrs": [0.001, 0.03], "final_loss": [[3.1, 3.3], [3.12, 3.4]]},
        "Post-LN, warm-up": {"lrs": [0.03], "final_loss": [[3.31], [3.39]]}}},
    "no_positions": {"steps": 150, "seeds": [0, 1], "unigram_loss": 3.9, "runs": {
        "learned positions": {"forward": [3.5, 3.6], "reversed": [3.7, 3.8]},
        "no positions": {"forward": [3.4, 3.4], "reversed": [3.9, 3.8]}}},
}


@pytest.fixture
def chinese():
    tinylm_checks.set_language("zh")
    yield
    tinylm_checks.set_language(None)


def english_words(text: str) -> list[str]:
    """The English words of ``text`` a Chinese reader would have to read: not code, not in :data:`ALLOWED`."""
    return [w for w in WORD.findall(CODE.sub(" ", text)) if w not in ALLOWED]


def figure_texts(fig) -> list[str]:
    """Every text a figure draws (titles, labels, tick labels, legends, annotations), after drawing it once."""
    fig.canvas.draw()
    return [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]


def _axes_figure(n: int = 1):
    fig = Figure(figsize=(8, 4))
    return fig, (fig.subplots(1, n) if n > 1 else fig.add_subplot())


def _figures():
    """(name, draw) for every figure helper: draw() returns the Figure it drew on."""
    def on(draw, n=1):
        def run():
            fig, ax = _axes_figure(n)
            draw(ax)
            return fig
        return run

    weights = torch.softmax(torch.randn(4, 4), -1)
    log = {"step": [1, 2], "lr": [1e-3, 1e-3], "grad_norm": [1.0, 0.5], "tokens_per_s": [100, 110],
           "act_rms": {"blocks.0": [1.0, 1.1]}, "max_grad_norm": 1.0}
    yield "plot_attention", on(lambda ax: plots.plot_attention(weights, ax=ax))
    yield "plot_heads_split", lambda: plots.plot_heads_split()
    yield "plot_position_encoding", on(lambda ax: plots.plot_position_encoding(torch.zeros(8, 4), ax=ax))
    yield "plot_activations", on(lambda axes: plots.plot_activations(axes=axes), 2)
    yield "plot_changes", on(lambda ax: plots.plot_changes({"a": 0.0, "b": 1.0}, ax=ax))
    yield "plot_depth_profile", on(lambda axes: plots.plot_depth_profile({"x": [1.0, 2.0]}, {"x": [1.0, 0.5]},
                                                                        axes=axes), 2)
    yield "plot_parameter_ratio", on(lambda ax: plots.plot_parameter_ratio([32, 64], [13000, 50000], ax=ax))
    yield "plot_layer_grad_norms", on(lambda axes: plots.plot_layer_grad_norms(RECORD["no_residual"], 3.3,
                                                                              axes=axes), 2)
    yield "plot_lr_sweep", on(lambda ax: plots.plot_lr_sweep(RECORD["norm_placement"], 3.3, ax=ax))
    yield "plot_order_test", on(lambda ax: plots.plot_order_test(RECORD["no_positions"], ax=ax))
    yield "plot_loss_curves", on(lambda ax: plots.plot_loss_curves({}, ax=ax))
    yield "plot_attention_heads", lambda: plots.plot_attention_heads(torch.stack([weights] * 2), list("abcd"))[0, 0].figure
    yield "plot_training_log", lambda: plots.plot_training_log(log)[0].figure


def _saved(tmp_path):
    """(name, write) for every figure of report.md: write() saves it and returns the Figure matplotlib drew."""
    table = TinyLM(vocab_size=20, max_seq_len=8, d_model=8, num_heads=2, num_layers=1, d_ff=16).parameter_table()
    yield "save_parameter_figure", lambda: report.save_parameter_figure(table, tmp_path / "p.png")
    yield "save_curves_figure", lambda: report.save_curves_figure({"a": [3.0, 2.0]}, tmp_path / "c.png", "")
    yield "save_bars_figure", lambda: report.save_bars_figure({"a": 1.0}, tmp_path / "b.png", "")
    yield "save_throughput_figure", lambda: report.save_throughput_figure([("D=32", 1e6, 2e4)], tmp_path / "f.png")
    for name in report.ABLATIONS:
        yield f"save_ablation_figure[{name}]", lambda name=name: report.save_ablation_figure(
            name, RECORD[name], tmp_path / f"{name}.png", 3.3)


@pytest.mark.parametrize("name, draw", list(_figures()), ids=[n for n, _ in _figures()])
def test_every_figure_helper_draws_chinese_under_chinese(name, draw, chinese):
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*missing from font")  # no CJK font behind it
        fig = draw()
        texts = figure_texts(fig)
    assert any(re.search(r"[\u4e00-\u9fff]", t) for t in texts), texts
    assert [w for t in texts for w in english_words(t)] == [], texts


def test_every_figure_of_the_report_is_chinese_under_chinese(tmp_path, chinese, monkeypatch):
    drawn = []
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: drawn.append(self))
    for name, write in _saved(tmp_path):
        drawn.clear()
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*missing from font")
            write()
            texts = figure_texts(drawn[0])
        assert [w for t in texts for w in english_words(t)] == [], (name, texts)


@pytest.mark.parametrize("name", report.ABLATIONS)
def test_the_ablation_tables_are_chinese_under_chinese(name, chinese):
    table = report.ablation_table(name, RECORD[name])
    assert english_words(table) == [], table
    assert "种子 0, 1" in table and "（" in table


def test_the_report_s_notes_and_title_are_chinese_under_chinese(tmp_path, chinese):
    _, notes = report.collect({}, recompute=False)
    assert english_words(" ".join(notes)) == [], notes
    text = report.write_report(tmp_path, [("一", "二")]).read_text(encoding="utf-8")
    assert text.startswith("# TinyLM：") and english_words(text) == []


def test_under_english_the_tables_are_as_before():
    assert report.ablation_table("no_residual", RECORD["no_residual"]).splitlines()[0] == (
        "200 steps; a loss cell is the mean (min to max) over seeds 0, 1.")
    assert report.run_label("8 layers, no residual") == "8 layers, no residual"
