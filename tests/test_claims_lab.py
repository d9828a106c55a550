"""Claims as tests for notebook 11's claims lab (section 5): its four experiments, run here exactly as the notebook runs
them (400 steps, seeds 0, 1 and 2, one thread), and each sentence of its "What the runs show" asserted on them. About
two minutes on one core; the claims whose margins are a few hundredths are stated on averages, not seed by seed.
"""
import pytest
import torch

from tinylm_checks.lab.claims import separated_pairs
from tinylm_solutions.claims import EXPERIMENTS, claims_lab
from tinylm_solutions.data import default_corpus, train_val_split
from tinylm_solutions.tokenizer import CharTokenizer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lab():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        text = default_corpus()
        tokenizer = CharTokenizer(text)
        train_data, val_data = train_val_split(torch.tensor(tokenizer.encode(text)))
        cache = {}
        return {e: claims_lab(e, train_data, val_data, tokenizer.vocab_size, cache=cache) for e in EXPERIMENTS}
    finally:
        torch.set_num_threads(threads)


def mean(result, variant):
    loss = result["runs"][variant]["held_out_loss"]
    return sum(loss) / len(loss)


def lower_in_every_seed(result, a, b):
    return (a, b) in separated_pairs(result)[0]


def test_positions(lab):
    # "RoPE ends lowest, in every seed, by about 0.17 below learned positions [...] Learned and sinusoidal positions
    # end within a few hundredths of each other on average. No positions ends highest on average. [...] here [...] it is
    # worse than every model with positions."
    r = lab["positions"]
    assert all(lower_in_every_seed(r, "RoPE", v) for v in ("learned", "sinusoidal", "no positions"))
    assert 0.12 <= mean(r, "learned") - mean(r, "RoPE") <= 0.22
    assert abs(mean(r, "learned") - mean(r, "sinusoidal")) < 0.06
    assert all(mean(r, "no positions") > mean(r, v) for v in ("learned", "sinusoidal", "RoPE"))


def test_removing_each_part(lab):
    # "the whole model ends lowest in every seed. Removing the residual connections costs most [...] (the held-out loss
    # stays above 3.0). Removing attention costs next most [...] Positions, the FFNs and the LayerNorms each cost about a
    # tenth of a nat at this length, and the differences among those three are a few hundredths or less [...] the FFNs
    # hold more than half of the parameters (16,704 of 28,640) [...] attention, which holds fewer (8,576)."
    r = lab["parts"]
    removed = [v for v in EXPERIMENTS["parts"] if v != "whole model"]
    assert all(lower_in_every_seed(r, "whole model", v) for v in removed)
    assert min(r["runs"]["no residual"]["held_out_loss"]) > 3.0  # 3.09 under TINYLM_PERTURB=medium
    assert all(lower_in_every_seed(r, v, "no residual") for v in removed if v != "no residual")
    small = ("no positions", "no FFN", "no LayerNorm")
    assert all(lower_in_every_seed(r, v, "no attention") for v in small)
    costs = [mean(r, v) - mean(r, "whole model") for v in small]
    assert all(0.05 <= c <= 0.2 for c in costs) and max(costs) - min(costs) < 0.06
    runs = r["runs"]
    assert runs["whole model"]["ffn_params"] == 16_704 and runs["whole model"]["params"] == 28_640
    assert runs["whole model"]["params"] - runs["no attention"]["params"] == 8_576
    assert mean(r, "no FFN") < mean(r, "no attention")


def test_ffn_width(lab):
    # "`d_ff = D` ends highest, in every seed. From `2D` up [...] `2D` and `4D` within a hundredth of each other on
    # average, and `8D` lowest on average, about 0.035 below `4D` for 16,640 more parameters (58% more model)."
    r = lab["ffn_width"]
    assert all(lower_in_every_seed(r, v, "d_ff = D") for v in ("d_ff = 2D", "d_ff = 4D", "d_ff = 8D"))
    assert abs(mean(r, "d_ff = 2D") - mean(r, "d_ff = 4D")) < 0.01
    assert mean(r, "d_ff = 8D") < min(mean(r, "d_ff = 2D"), mean(r, "d_ff = 4D"))
    assert 0.02 <= mean(r, "d_ff = 4D") - mean(r, "d_ff = 8D") <= 0.05
    extra = r["runs"]["d_ff = 8D"]["params"] - r["runs"]["d_ff = 4D"]["params"]
    assert extra == 16_640 and round(100 * extra / r["runs"]["d_ff = 4D"]["params"]) == 58


def test_swiglu(lab):
    # "On average SwiGLU ends lower than the GELU FFN at equal width (by about 0.04 nats, with 7,872 more parameters)
    # and at equal parameters too (by about 0.025); the two SwiGLUs end within 0.015 of each other."
    r = lab["swiglu"]
    gelu, wide, matched = (mean(r, v) for v in EXPERIMENTS["swiglu"])
    assert 0.025 <= gelu - wide <= 0.055
    assert 0.012 <= gelu - matched <= 0.04
    assert abs(wide - matched) < 0.015
    assert r["runs"]["SwiGLU, d_ff = 4D"]["params"] - r["runs"]["GELU, d_ff = 4D"]["params"] == 7_872
