"""Claims as tests: each result the course states in words (a notebook, a check's message, a model answer) is an
experiment here, run with the reference at small sizes and fixed seeds, with several seeds where the effect is small,
and the test asserts its direction (issue 17). A sentence that no longer holds fails here, not in front of a learner.
"""
import math
import re
import time
from pathlib import Path

import pytest
import torch
from torch import nn

from tinylm_solutions.data import default_corpus, train_val_split
from tinylm_solutions.model import TinyLM
from tinylm_solutions.position import sinusoidal_position_encoding
from tinylm_solutions.tokenizer import CharTokenizer
from tinylm_solutions.trainer import train


# ---- the stand-ins for another machine (TINYLM_PERTURB, conftest.py; `make claims-perturbed` runs this file and the
# other claims under each): they reach the processes the tests start, the notebooks' kernels among them.

def test_a_perturbation_reaches_the_processes_the_tests_start():
    import json
    import os
    import subprocess
    import sys
    perturb = Path(__file__).resolve().parent / "perturb"
    code = ("import json, torch; torch.set_num_threads(1); print(json.dumps([torch.get_num_threads(), "
            "torch.backends.mkldnn.enabled, torch.get_float32_matmul_precision()]))")
    env = {**os.environ, "TINYLM_PERTURB": "threads4,mkldnn_off,medium", "PYTHONPATH": str(perturb)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [4, False, "medium"]  # the notebook's set_num_threads(1) does not undo it


# ---- stage 08: weight tying. "A second Parameter over the same storage keeps the values shared, yet parameters()
# lists the matrix twice: the count counts V·D twice, and an optimizer updates it twice per step."

def _tied(kind: str, V: int = 11, D: int = 6):
    torch.manual_seed(0)
    m = nn.Module()
    m.token_emb, m.lm_head = nn.Embedding(V, D), nn.Linear(D, V, bias=False)
    if kind == "one parameter":
        m.lm_head.weight = m.token_emb.weight
    elif kind == "second parameter":
        m.lm_head.weight = nn.Parameter(m.token_emb.weight)
    elif kind == "clone":
        m.lm_head.weight = nn.Parameter(m.token_emb.weight.detach().clone())
    return m


def _adam_step(m):
    ids = torch.tensor([[1, 2, 3, 4]])
    opt = torch.optim.Adam(m.parameters(), lr=0.1)
    logits = m.lm_head(m.token_emb(ids))  # (1, 4, V)
    nn.functional.cross_entropy(logits[0, :-1], ids[0, 1:]).backward()
    opt.step()


def test_a_second_parameter_over_the_embedding_shares_values_but_counts_and_steps_twice():
    one, second, clone = _tied("one parameter"), _tied("second parameter"), _tied("clone")
    V, D = one.token_emb.weight.shape
    assert sum(p.numel() for p in one.parameters()) == V * D
    assert sum(p.numel() for p in second.parameters()) == 2 * V * D  # counted twice
    for m in (one, second, clone):
        _adam_step(m)
    assert torch.equal(second.lm_head.weight, second.token_emb.weight)  # no drift: one storage
    assert not torch.equal(clone.lm_head.weight, clone.token_emb.weight)  # a copy does drift
    assert not torch.allclose(second.token_emb.weight, one.token_emb.weight)  # but it was stepped twice


# ---- stage 04's hint and TinyLM(positions="sinusoidal"): "unscaled, the table's rows (norm sqrt(d_model / 2))
# swamp embeddings of std 0.02; Vaswani et al. scale the token embeddings by sqrt(d_model)".

def test_the_sinusoidal_table_swamps_unscaled_embeddings():
    D = 64
    table = sinusoidal_position_encoding(32, D)  # (32, D)
    assert torch.allclose(table.norm(dim=-1), torch.full((32,), math.sqrt(D / 2)), atol=1e-4)  # 5.66
    emb = TinyLM(50, 32, D, 4, 1, 4 * D).token_emb.weight  # N(0, 0.02)
    assert 0.14 < emb.norm(dim=-1).mean() < 0.18  # 0.02 sqrt(64) = 0.16: 35 times smaller than a table row


@pytest.fixture(scope="module")
def corpus():
    text = default_corpus()
    tok = CharTokenizer(text)
    return tok.vocab_size, train_val_split(torch.tensor(tok.encode(text)))


def _val_loss(corpus, positions: str, seed: int, unscaled: bool = False, steps: int = 150) -> float:
    V, (tr, va) = corpus
    torch.manual_seed(seed)
    model = TinyLM(V, 32, 32, 2, 2, 64, positions=positions)
    if unscaled:  # the frozen table added to unscaled embeddings: what TinyLM did before issue 17
        model.config = {**model.config, "positions": "learned"}
        with torch.no_grad():
            model.pos_emb.weight.copy_(sinusoidal_position_encoding(32, 32))
        model.pos_emb.weight.requires_grad_(False)
    hist = train(model, tr, va, steps=steps, batch_size=16, lr=3e-3, eval_interval=steps, eval_batches=20,
                 progress=False, seed=seed)
    return hist["val_loss"][-1]


@pytest.mark.slow
def test_scaled_sinusoidal_positions_train_better_than_unscaled_ones(corpus):
    """In every seed, by more than the spread between seeds. (Scaled, they still trail learned positions in a run
    this short: the course claims no more than this.)"""
    torch.set_num_threads(1)
    seeds = (0, 1, 2)
    scaled = [_val_loss(corpus, "sinusoidal", s) for s in seeds]
    unscaled = [_val_loss(corpus, "sinusoidal", s, unscaled=True) for s in seeds]
    spread = max(max(scaled) - min(scaled), max(unscaled) - min(unscaled))
    assert min(unscaled) - max(scaled) > spread, (scaled, unscaled)


# ---- stage 11's ablations, run exactly as notebook 11 runs them (report.run_ablations: its steps, its seeds). Each
# sentence of its "What the runs show" is an assertion below, in every seed.

@pytest.fixture(scope="module")
def ablations(corpus):
    from tinylm_solutions import report
    V, (tr, va) = corpus
    return report.run_ablations(tr, va, V)


@pytest.mark.slow
def test_without_residuals_the_gradient_shrinks_on_its_way_down_at_8_layers_only(ablations):
    runs = ablations["no_residual"]["runs"]
    ratio = {label: [n[-1] / n[0] for n in run["grad_norms"]] for label, run in runs.items()}
    assert min(ratio["8 layers, no residual"]) > 10, ratio  # "tens of times less"
    for label in ("2 layers, residual", "8 layers, residual", "2 layers, no residual"):
        assert all(0.5 < r < 2 for r in ratio[label]), (label, ratio)  # flat, or "a ratio near 1"


@pytest.mark.slow
def test_without_residuals_neither_depth_gets_clearly_below_the_unigram_loss_and_with_them_both_do(ablations):
    runs, unigram = ablations["no_residual"]["runs"], ablations["unigram_loss"]
    for layers in (2, 8):
        without, with_ = runs[f"{layers} layers, no residual"]["final_loss"], runs[f"{layers} layers, residual"]["final_loss"]
        assert all(v > unigram - 0.05 for v in without), (layers, without, unigram)
        assert all(v < unigram - 0.2 for v in with_), (layers, with_, unigram)  # clearly: 0.2 > every seed spread


@pytest.mark.slow
def test_with_residuals_which_depth_ends_lower_changes_from_seed_to_seed(ablations):
    runs = ablations["no_residual"]["runs"]
    deeper_lower = [a < b for a, b in zip(runs["8 layers, residual"]["final_loss"], runs["2 layers, residual"]["final_loss"])]
    assert sum(deeper_lower) == 1, deeper_lower  # "8 layers ended lower in one seed of three"
    size = dict(vocab_size=99, max_seq_len=32, d_model=32, num_heads=2, d_ff=64)
    assert TinyLM(num_layers=8, **size).get_num_params() > 3 * TinyLM(num_layers=2, **size).get_num_params()


@pytest.mark.slow
def test_pre_ln_ends_lower_than_post_ln_at_every_rate_in_every_seed(ablations):
    runs = ablations["norm_placement"]["runs"]
    for pre, post in zip(runs["Pre-LN"]["final_loss"], runs["Post-LN"]["final_loss"]):  # per seed
        assert all(a < b for a, b in zip(pre, post)), (pre, post)


@pytest.mark.slow
def test_at_the_two_largest_rates_post_ln_stays_near_the_unigram_loss_and_pre_ln_gets_below_it(ablations):
    runs, unigram = ablations["norm_placement"]["runs"], ablations["unigram_loss"]
    for seed in range(3):
        for i in (-2, -1):
            assert abs(runs["Post-LN"]["final_loss"][seed][i] - unigram) < 0.12
            # "Pre-LN ends below it in most seeds, by up to about 0.2 (a seed may end near it, and on another machine
            # just above it)": at 3e-2, 0.05 to 0.17 below here, 0.01 above in one seed with TINYLM_PERTURB=medium
            assert unigram - 0.25 < runs["Pre-LN"]["final_loss"][seed][i] < unigram + 0.05
    for i in (-2, -1):
        assert sum(runs["Pre-LN"]["final_loss"][seed][i] < unigram for seed in range(3)) >= 2  # most seeds


@pytest.mark.slow
def test_the_warm_up_does_not_rescue_post_ln_here(ablations):
    runs = ablations["norm_placement"]["runs"]
    warm = runs["Post-LN, warm-up"]
    for seed in range(3):
        for lr, loss in zip(warm["lrs"], warm["final_loss"][seed]):
            without = runs["Post-LN"]["final_loss"][seed][runs["Post-LN"]["lrs"].index(lr)]
            assert abs(loss - without) < 0.05, (seed, lr, loss, without)


@pytest.mark.slow
def test_both_models_find_reversed_text_harder_and_the_one_without_positions_more_so(ablations):
    runs = ablations["no_positions"]["runs"]
    learned, none = runs["learned positions"], runs["no positions"]
    for seed in range(3):
        gap_learned = learned["reversed"][seed] - learned["forward"][seed]
        gap_none = none["reversed"][seed] - none["forward"][seed]
        assert 0 < gap_learned < gap_none, (seed, gap_learned, gap_none)
        held_out_unigram = ablations["no_positions"]["unigram_loss"]
        assert max(learned["forward"][seed], none["forward"][seed]) < held_out_unigram - 0.2  # "well below the loss in the note"
    # "On text in its order, the model without positions is not worse: on average it is a little better" (not in
    # every seed: with TINYLM_PERTURB=medium one seed ended 0.02 worse)
    assert sum(none["forward"]) < sum(learned["forward"])


# ---- stage 12, section 7 and the model answer to Q4: "small models waste time outside the matrix multiplies, so
# they sit below the line": the sustained FLOP rate rises with the width.

@pytest.mark.slow
def test_the_flop_rate_rises_with_the_width(monkeypatch):
    import types

    from tinylm_solutions import report
    from tinylm_solutions.flops import flops_per_token
    # The rate of the core, read on the CPU time of the thread that computes (measure_tokens_per_s runs on one):
    # under make test's load, wall time also counts the waits for a core, and gave 1.7 and even 1.2 times.
    monkeypatch.setattr(report, "time", types.SimpleNamespace(perf_counter=time.thread_time))
    rates = {}
    for d_model in (32, 96):  # on a quiet core they differ about 5 times
        cfg = dict(vocab_size=99, max_seq_len=32, d_model=d_model, num_heads=2, num_layers=2, d_ff=4 * d_model)
        # the best of three runs: what is left of a busy machine (caches shared with the other workers) slows a run
        rates[d_model] = flops_per_token(cfg, 32) * max(report.measure_tokens_per_s(cfg, 8, 32, steps=6)
                                                        for _ in range(3))
    assert rates[96] > 1.5 * rates[32], rates


@pytest.mark.slow
def test_the_numbers_of_stage_12_s_model_answer_are_those_of_the_runs(ablations):
    """The model answer to Q2 quotes the ablations; each number it quotes agrees with the same runs here, to the
    precision it states. The same runs differ from one CPU to another (another instruction set, another rounding):
    between two machines the course ran on, the residual runs' worst seed went from 3.02 to 2.92 and the order
    test's gaps from 0.38 and 0.20 to 0.40 and 0.17; with two threads (TINYLM_PERTURB=threads2) they were 0.37 and
    0.14. So the answer says "about" and gives ranges that all of them agree on."""
    answer = (Path(__file__).resolve().parent.parent / "course" / "12_report.py").read_text(encoding="utf-8")
    answer = answer.split('answer="ablations_answer"')[1].split("# %%")[0].replace("\n# ", " ")
    runs, order = ablations["no_residual"]["runs"], ablations["no_positions"]["runs"]
    ratios = [n[-1] / n[0] for n in runs["8 layers, no residual"]["grad_norms"]]
    without = runs["2 layers, no residual"]["final_loss"] + runs["8 layers, no residual"]["final_loss"]
    with_ = runs["2 layers, residual"]["final_loss"] + runs["8 layers, residual"]["final_loss"]
    gap = {m: sum(r - f for f, r in zip(o["forward"], o["reversed"])) / 3 for m, o in order.items()}
    quoted = {"tens of times less gradient than the last block (33 to 51 times)":
              abs(min(ratios) - 33) <= 8 and abs(max(ratios) - 51) <= 10,
              f"about 3.3 against {ablations['unigram_loss']:.2f}": all(abs(x - 3.3) <= 0.08 for x in without),
              "about 2.8 to 3.0": 2.75 <= min(with_) and max(with_) <= 3.05,
              "about 2.9 on average": abs(sum(with_) / 6 - 2.9) <= 0.05,
              "a gap of about 0.4 against 0.1 to 0.2": abs(gap["no positions"] - 0.4) <= 0.05
              and 0.08 <= gap["learned positions"] <= 0.25}
    for text, holds in quoted.items():
        assert text in answer, (text, answer)
        assert holds, (text, ratios, without, with_, gap)


# ---- times: a run's length is stated in steps, or printed by the run, never as seconds (issue 40: "600 steps ≈ 45 s"
# took 76 s on another machine). Notebooks 09 to 12; the learner's working time of an exercise ("**Time:** about 10
# min") is an estimate of another kind.
DURATION = {"en": re.compile(r"(?i)\b(?:about|under|within|in|takes?|took)\s+(?:a|one|a few|\d+(?:\.\d+)?)\s+"
                             r"(?:minutes?|seconds?|hours?)\b|\b\d+(?:\.\d+)?\s?(?:s|min)\b(?! ?/)|one-minute|"
                             r"a second or two|few seconds"),
            "zh": re.compile(r"(?:约|大约|不到|几|一两|最多)\s*\d*(?:\.\d+)?\s*(?:秒|分钟|分半钟)|一分钟|一分半钟")}
WORKING_TIME = re.compile(r"\*\*(?:Time:\*\* about \d+ min|用时：\*\* 约 \d+ 分钟)")


@pytest.mark.parametrize("stage", ["09_training", "10_generation", "11_ablations", "12_report"])
def test_no_run_s_length_is_stated_in_seconds_or_minutes(stage):
    text = WORKING_TIME.sub("", (Path(__file__).resolve().parent.parent / "course" / f"{stage}.py").read_text(encoding="utf-8"))
    found = [m.group(0) for pattern in DURATION.values() for m in pattern.finditer(text)]
    assert not found, found
