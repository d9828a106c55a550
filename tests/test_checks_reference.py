"""Every check passes the reference implementation, quickly, with exactly one line of output."""
import time

import pytest
import torch

from tinylm_checks import (check_attention_scores, check_causal_mask, check_merge_heads,
                           check_multi_head_attention, check_scaled_dot_product_attention, check_self_attention,
                           check_softmax, check_split_heads)
from tinylm_solutions import attention as ref
from tinylm_solutions.masks import causal_mask


def softmax(x):
    """The warm-up exercise has no reference in tinylm_solutions: a learner's correct answer."""
    e = (x - x.max(dim=-1, keepdim=True).values).exp()
    return e / e.sum(dim=-1, keepdim=True)


REFERENCE = [
    (check_softmax, softmax),
    (check_attention_scores, ref.attention_scores),
    (check_scaled_dot_product_attention, ref.scaled_dot_product_attention),
    (check_self_attention, ref.SelfAttention),
    (check_split_heads, ref.split_heads),
    (check_merge_heads, ref.merge_heads),
    (check_multi_head_attention, ref.MultiHeadSelfAttention),
    (check_causal_mask, causal_mask),
]
SEEDS = [0, 1, 2, 3, 4]


@pytest.fixture(scope="module", autouse=True)
def warm_torch(request):
    """Pay PyTorch's one-time costs before timing (the first torch.unravel_index imports sympy, ~0.7 s)."""
    start = time.perf_counter()
    torch.unravel_index(torch.tensor(0), (1,))
    (torch.ones(2, requires_grad=True) * 2).sum().backward()
    cold = time.perf_counter() - start
    with request.config.pluginmanager.get_plugin("capturemanager").global_and_fixture_disabled():
        print(f"\n  one-time PyTorch warm-up before timing the checks: {cold * 1000:.0f} ms")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("check, reference", REFERENCE, ids=[c.__name__ for c, _ in REFERENCE])
def test_reference_passes_quickly_with_one_line(check, reference, seed, capsys):
    start = time.perf_counter()
    result = check(reference, seed=seed)
    seconds = time.perf_counter() - start
    out, err = capsys.readouterr()
    assert result is None
    lines = out.splitlines()
    assert len(lines) == 1, out
    assert lines[0].startswith(f"✔ {check.__name__} passed: "), lines[0]
    assert err == ""
    with capsys.disabled():
        print(f"\n  {check.__name__}(seed={seed}): {seconds * 1000:.1f} ms", end="")
    assert seconds < 1.0, f"{check.__name__}(seed={seed}) took {seconds:.2f} s"

