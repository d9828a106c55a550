"""Claims as tests, the English notebook 11's debugging lab (section 4) and the English model answer of notebook 12
that quotes it: the lab run as the notebook runs it (tests/notebook_runs.py: its cells, steps and seeds, on the
English corpus), and each test quotes, in its docstring, the sentences it tests. The Chinese notebook's twin of
these is in tests/test_claims_11_zh.py. A few seconds of one core (V = 99)."""
import math
from collections import Counter

import pytest

import notebook_runs
from tinylm_solutions.data import corpus

pytestmark = [pytest.mark.slow, pytest.mark.notebooks]


@pytest.fixture(scope="module")
def debugging(tmp_path_factory):
    return notebook_runs.debugging_lab("en", tmp_path_factory.mktemp("nb11en"))


def mean(values):
    return sum(values) / len(values)


def test_the_healthy_model_is_still_young(debugging):
    """"Our healthy model is still young: about 3 nats, and its greedy continuation is the corpus's most frequent
    characters (spaces, e, t...) again and again". (It said "mostly spaces": with 4 threads it was 'te te te ...'.)"""
    assert abs(debugging["healthy"][-1] - 3) <= 0.15
    continuation = debugging["healthy_sample"][len(debugging["prompt"]):]
    commonest = [c for c, _ in Counter(corpus("en")).most_common(5)]
    assert commonest[:3] == [" ", "e", "t"]
    assert sum(c in commonest for c in continuation) >= 0.9 * len(continuation)
    assert len(set(continuation)) < len(continuation) / 4  # again and again


def test_the_naive_loss_is_nan_from_some_scale_on(debugging):
    """"It works on the healthy model's logits"; "From some scale on the naive loss is `nan` while
    `F.cross_entropy`, on the same numbers, is fine"."""
    probe = {scale: (naive, torch_loss) for scale, _, naive, torch_loss in debugging["probe"]}
    assert abs(probe[1][0] - probe[1][1]) < 1e-4
    assert any(math.isnan(naive) for naive, _ in probe.values())
    assert all(math.isfinite(torch_loss) for _, torch_loss in probe.values())


def test_uniform_attention(debugging):
    """"The next model trains: after a short run its loss is close to the healthy model's (both are printed below),
    so its loss does not give the bug away"; "Row `t` spreads its weight evenly, `1/(t+1)`, over every key it may
    see, in every layer and head: the entropy is the largest possible"; with the fix, "the rows are no longer
    uniform"."""
    uniform, healthy = debugging["uniform"], debugging["healthy"]
    assert uniform[-1] < uniform[0] - 1 and abs(uniform[-1] - healthy[len(uniform) - 1]) < 0.1
    assert all(r > 0.9999 for r in debugging["uniform_ratio"])
    assert all(r < 0.9 for r in debugging["fixed_ratio"])


def test_the_mask_that_sees_the_next_token(debugging):
    """"The two curves are nearly the same for the first ~90 steps; then the broken model's loss falls far below the
    healthy one's, and yet its samples are no better"; "Position 6 changed when token 7 changed (and position 5 a
    little)"; notebook 12's answer: "after about 90 steps the training loss fell far below a correct model's"."""
    healthy, leaky = debugging["healthy"], debugging["leaky"]
    assert mean([abs(a - b) for a, b in zip(healthy[:90], leaky[:90])]) < 0.05
    assert healthy[89] - leaky[89] < 0.15 < healthy[109] - leaky[109]
    assert leaky[-1] < 0.5 < 2.5 < healthy[-1]
    sample = debugging["leaky_sample"][len(debugging["prompt"]):]
    assert Counter(sample).most_common(1)[0][1] >= 0.9 * len(sample)  # no better: one character, nearly always
    moved = debugging["moved"]
    assert max(moved[:5]) < 1e-6 and 0 < moved[5] < 1 and moved[6] > 5


def test_the_unshifted_labels(debugging):
    """"Near 0 within a few dozen steps, and the sample repeats the last character of the prompt"; with the fix,
    "no more collapse to 0"."""
    copier = debugging["copier"]
    assert len(copier) == 40 and copier[-1] < 0.2
    prompt = debugging["copy_prompt"]
    assert debugging["copier_sample"] == prompt + prompt[-1] * 40
    assert debugging["shifted"][-1] > 3
