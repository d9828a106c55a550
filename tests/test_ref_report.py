"""Stage 12: tinylm_solutions.flops (6N + 6LTD, Kaplan et al. 2020) and the report builder
tinylm_solutions.report, with exact numbers."""
import math

import pytest
import torch

from tinylm_solutions import report
from tinylm_solutions.flops import flops_per_token
from tinylm_solutions.model import TinyLM

CONFIG = dict(vocab_size=65, max_seq_len=64, d_model=64, num_heads=4, num_layers=4, d_ff=256)


def test_flops_per_token_exact():
    # N = 65*64 + 4 * (4 (64^2 + 64) + 2*64*256 + 256 + 64 + 4*64) + 2*64 = 204,224; 6LTD = 6*4*64*64 = 98,304
    assert flops_per_token(CONFIG, 64) == 6 * 204_224 + 98_304 == 1_323_648
    assert flops_per_token(CONFIG, 16) == 6 * 204_224 + 6 * 4 * 16 * 64 == 1_249_920


@pytest.mark.parametrize("extra", [{}, {"tie_weights": False}, {"positions": "none"}, {"norm_first": False}])
@pytest.mark.parametrize("sizes", [(65, 64, 64, 4, 4, 256), (53, 40, 16, 2, 2, 56), (101, 96, 40, 5, 5, 136)])
def test_flops_per_token_is_6_n_plus_6_ltd_with_n_from_the_model(sizes, extra):
    config = dict(zip(("vocab_size", "max_seq_len", "d_model", "num_heads", "num_layers", "d_ff"), sizes), **extra)
    n = TinyLM(**config).get_num_params()
    T = config["max_seq_len"] // 2
    assert flops_per_token(config, T) == 6 * n + 6 * config["num_layers"] * T * config["d_model"]


def test_flops_per_token_ignores_other_keys_and_checks_its_input():
    assert flops_per_token({**CONFIG, "batch_size": 16, "steps": 300}, 64) == 1_323_648
    with pytest.raises(ValueError, match=r"missing \['d_ff'\]"):
        flops_per_token({k: v for k, v in CONFIG.items() if k != "d_ff"}, 64)
    for T in (0, 65):
        with pytest.raises(ValueError, match=r"seq_len must be in \[1, max_seq_len=64\]"):
            flops_per_token(CONFIG, T)


def test_markdown_table_exact():
    text = report.markdown_table(["part", "parameters", "share %"], [["blocks", 199936, 97.9], ["x", "y", True]])
    assert text == ("| part | parameters | share % |\n|---|---|---|\n| blocks | 199,936 | 97.9 |\n| x | y | True |")
    with pytest.raises(ValueError, match="2 cells for 3 headers"):
        report.markdown_table(["a", "b", "c"], [[1, 2]])


def test_parameter_rows_of_a_tinylm():
    table = TinyLM(**CONFIG).parameter_table()
    assert table == {"token_emb": 4160, "pos_emb": 4096, "blocks": 199936, "norm": 128, "lm_head": 0, "total": 208320}
    assert report.parameter_rows(table) == [["token_emb", 4160, 2.0], ["pos_emb", 4096, 2.0],
                                            ["blocks", 199936, 96.0], ["norm", 128, 0.1], ["lm_head", 0, 0.0],
                                            ["total", 208320, 100.0]]
    with pytest.raises(ValueError, match="positive 'total'"):
        report.parameter_rows({"blocks": 3})


def test_history_summary_exact_and_with_missing_lists():
    history = {"loss": [4.0, 3.0, 2.5], "val_loss": [3.2, 2.0], "tokens_per_s": [100.0, 300.0, 200.0]}
    assert report.history_summary(history) == {"steps": 3, "first_loss": 4.0, "final_loss": 2.5,
                                               "final_val_loss": 2.0, "val_perplexity": math.exp(2.0),
                                               "tokens_per_s": 200.0}
    empty = report.history_summary({})
    assert empty["steps"] == 0 and all(math.isnan(v) for k, v in empty.items() if k != "steps")


def test_missing_keys():
    assert report.missing_keys("09_train", None) == ["history", "config"]
    assert report.missing_keys("09_train", {"history": {"loss": [1.0]}}) == ["config"]
    old_format = {"no_positions": {"steps": 150, "order_test": {}}, "no_residual": {"runs": {}}, "unigram_loss": 3.3}
    assert report.missing_keys("11_ablations", old_format) == ["norm_placement", "no_positions"]
    assert report.missing_keys("11_first_bug", {"name": "11_first_bug", "evidence": "loss 0.01"}) == []
    assert report.missing_keys("11_first_bug", {"name": "11_first_bug", "bug": "cheating mask"}) == ["evidence"]


def test_bug_name_is_not_the_records_own_name():
    assert report.bug_name({"name": "11_first_bug", "bug": "cheating mask", "evidence": "e"}) == "cheating mask"
    assert report.bug_name({"name": "11_first_bug", "title": "NaN loss"}) == "NaN loss"
    assert report.bug_name({"name": "uniform attention"}) == "uniform attention"
    assert report.bug_name({"name": "11_first_bug", "evidence": "e"}) is None and report.bug_name(None) is None


def test_collect_keeps_complete_records_and_notes_the_rest_without_recomputing():
    runs = {"09_overfit": {"losses": [3.0, 0.1], "time": "t0"},
            "09_train": {"history": {"loss": [1.0]}, "time": "t1"},
            "11_first_bug": {"name": "11_first_bug", "bug": "cheating mask", "evidence": "val loss 0.2", "time": "t2"}}
    records, notes = report.collect(runs, recompute=False)
    assert records == runs
    assert notes == ["09_overfit: recorded t0", "09_train: record lacks config; not recomputed",
                     "11_ablations: no record; not recomputed", "11_first_bug: recorded t2"]


def test_collect_recomputes_a_missing_overfit_record():
    runs = {k: v for k, v in {"09_train": {"history": {"loss": [1.0]}, "config": {"d_model": 32}},
                              "11_ablations": {**{a: {"runs": {"r": {}}} for a in report.ABLATIONS},
                                               "unigram_loss": 3.3},
                              "11_first_bug": {"bug": "n", "evidence": "e"}}.items()}
    records, notes = report.collect(runs)
    overfit = records["09_overfit"]
    assert notes[0] == "09_overfit: no record; recomputed a small version (80 steps on one batch)"
    assert overfit["steps"] == len(overfit["losses"]) == 80 and overfit["final_loss"] == overfit["losses"][-1]
    assert overfit["losses"][0] > 4.0 and overfit["final_loss"] < 0.5  # from about ln V to memorised


def test_write_report_exact(tmp_path):
    path = report.write_report(tmp_path, [("One", "text\n"), ("Two", "| a |\n|---|")], title="T")
    assert path == tmp_path / "report.md"
    assert path.read_text() == "# T\n\n## One\n\ntext\n\n## Two\n\n| a |\n|---|\n"


def test_figures_are_png_files(tmp_path):
    table = TinyLM(**CONFIG).parameter_table()
    for path in (report.save_parameter_figure(table, tmp_path / "p.png"),
                 report.save_curves_figure({"a": [3.0, 2.0]}, tmp_path / "c.png", "t", log_y=True),
                 report.save_bars_figure({"a": 1.0, "b": 2.0}, tmp_path / "b.png", "t"),
                 report.save_throughput_figure([("D=32", 1e6, 2e4), ("D=64", 3e6, 9e3)], tmp_path / "f.png")):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---- stage 11's ablations in the report: tables and figures from a record as notebook 11 saves it (issue 17: the
# report had kept one learning rate, plotted the list of rates as a loss curve and drawn steps and seconds as bars)

RECORD = {
    "no_residual": {"steps": 200, "seeds": [0, 1], "runs": {
        "2 layers, residual": {"final_loss": [2.8, 2.9], "grad_norms": [[0.3, 0.3], [0.2, 0.22]]},
        "8 layers, no residual": {"final_loss": [3.3, 3.35], "grad_norms": [[0.05] + [0.1] * 6 + [2.0],
                                                                           [0.04] + [0.1] * 6 + [2.0]]}}},
    "norm_placement": {"steps": 150, "seeds": [0, 1], "warmup_steps": 37, "runs": {
        "Pre-LN": {"lrs": [0.001, 0.03], "final_loss": [[3.0, 3.1], [3.02, 3.2]], "curves": [[[4, 3]] * 2] * 2},
        "Post-LN": {"lrs": [0.001, 0.03], "final_loss": [[3.1, 3.3], [3.12, 3.4]], "curves": [[[4, 3]] * 2] * 2},
        "Post-LN, warm-up": {"lrs": [0.03], "final_loss": [[3.31], [3.39]], "curves": [[[4, 3]]] * 2}}},
    "no_positions": {"steps": 150, "seeds": [0, 1], "runs": {
        "learned positions": {"forward": [3.5, 3.6], "reversed": [3.7, 3.8]},
        "no positions": {"forward": [3.4, 3.4], "reversed": [3.9, 3.8]}}},
    "unigram_loss": 3.28}


def test_the_ablation_tables_read_the_record_exactly():
    assert report.ablation_table("no_residual", RECORD["no_residual"]) == (
        "200 steps; a loss cell is the mean (min to max) over seeds 0, 1.\n\n"
        "| run | final training loss | gradient of the last block / block 0 (first 10 steps), min to max |\n"
        "|---|---|---|\n"
        "| 2 layers, residual | 2.850 (2.800 to 2.900) | 1.0 to 1.1 |\n"
        "| 8 layers, no residual | 3.325 (3.300 to 3.350) | 40.0 to 50.0 |")
    assert report.ablation_table("norm_placement", RECORD["norm_placement"]) == (
        "150 steps; a loss cell is the mean (min to max) over seeds 0, 1.\n\n"
        "| learning rate | Pre-LN: final training loss | Post-LN: final training loss | Post-LN, warm-up: final training "
        "loss | Post-LN - Pre-LN, each seed |\n|---|---|---|---|---|\n"
        "| 0.001 | 3.010 (3.000 to 3.020) | 3.110 (3.100 to 3.120) |  | +0.100 +0.100 |\n"
        "| 0.03 | 3.150 (3.100 to 3.200) | 3.350 (3.300 to 3.400) | 3.350 (3.310 to 3.390) | +0.200 +0.200 |")
    record = {**RECORD["no_positions"], "unigram_loss": 3.9}
    assert report.ablation_table("no_positions", record) == (
        "150 steps; a loss cell is the mean (min to max) over seeds 0, 1. Predicting each character of these held-out "
        "windows by its training frequency gives 3.900.\n\n"
        "| model | held-out loss, in order | reversed | gap (reversed - in order) |\n|---|---|---|---|\n"
        "| learned positions | 3.550 (3.500 to 3.600) | 3.750 (3.700 to 3.800) | 0.200 (0.200 to 0.200) |\n"
        "| no positions | 3.400 (3.400 to 3.400) | 3.850 (3.800 to 3.900) | 0.450 (0.400 to 0.500) |")


def test_the_ablation_figures_draw_the_record(tmp_path):
    """What each figure plots, read back from matplotlib: the per-block gradient means on a log axis, the final losses
    (one dot per seed) beside the unigram line, the losses against the learning rates, and bars of losses only."""
    from matplotlib.figure import Figure
    fig = Figure()
    left, right = fig.subplots(1, 2)
    report.draw_residual((left, right), RECORD["no_residual"], RECORD["unigram_loss"])
    assert left.get_yscale() == "log"
    assert [[round(float(y), 9) for y in line.get_ydata()] for line in left.get_lines()] == [
        [0.25, 0.26], [0.045] + [0.1] * 6 + [2.0]]
    dots = sorted(float(y) for c in right.collections for _, y in c.get_offsets())
    assert dots == [2.8, 2.9, 3.3, 3.35] and right.get_lines()[0].get_ydata()[0] == 3.28
    ax = Figure().add_subplot()
    report.draw_norm_placement(ax, RECORD["norm_placement"], RECORD["unigram_loss"])
    lines = {line.get_label(): (list(line.get_xdata()), [round(float(y), 9) for y in line.get_ydata()])
             for line in ax.get_lines()}
    assert lines["Pre-LN"] == ([0.001, 0.03], [3.01, 3.15]) and lines["Post-LN, warm-up"] == ([0.03], [3.35])
    assert ax.get_xscale() == "log"
    ax = Figure().add_subplot()
    report.draw_order_test(ax, RECORD["no_positions"])
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    assert heights == [3.4, 3.55, 3.75, 3.85]  # losses only: no steps, no seconds
    for name in report.ABLATIONS:
        path = report.save_ablation_figure(name, RECORD[name], tmp_path / f"{name}.png", RECORD["unigram_loss"])
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_record_of_an_older_notebook_11_is_recomputed_not_misread():
    old = {"no_residual": {"steps": 60, "grad_norms": {"a": [1.0]}, "final_loss": {"a": 3.0}},
           "norm_placement": {"steps": 60, "lrs": [0.001], "final_loss": {"Pre-LN": [3.0]}},
           "no_positions": {"steps": 150, "order_test": {"x": {"forward": 3.0, "reversed": 3.1}}}}
    assert report.missing_keys("11_ablations", old) == ["no_residual", "norm_placement", "no_positions", "unigram_loss"]
    assert report.missing_keys("11_ablations", RECORD) == []
