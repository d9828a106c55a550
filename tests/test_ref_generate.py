"""tinylm_solutions.generate: greedy, top-k, temperature, context cropping, mode restoring."""
import pytest
import torch

from tinylm_solutions.generate import generate
from tinylm_solutions.model import TinyLM

V, L = 25, 8


def tiny():
    torch.manual_seed(0)
    return TinyLM(V, L, 16, 2, 2, 32).double()


def prompt(B=2, T=3):
    return torch.randint(V, (B, T), generator=torch.Generator().manual_seed(1))


@torch.no_grad()
def manual_greedy(model, idx, n):
    for _ in range(n):
        logits = model(idx[:, -model.max_seq_len:])[0][:, -1]
        idx = torch.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)
    return idx


def test_greedy_deterministic_and_equals_manual_loop():
    m = tiny().eval()
    out = generate(m, prompt(), 4, temperature=0)
    assert out.shape == (2, 7) and torch.equal(out[:, :3], prompt())
    assert torch.equal(out, generate(m, prompt(), 4, temperature=0))
    assert torch.equal(out, manual_greedy(m, prompt(), 4))


def test_top_k_1_equals_greedy():
    m = tiny()
    out = generate(m, prompt(), 6, temperature=1.0, top_k=1, generator=torch.Generator().manual_seed(0))
    assert torch.equal(out, generate(m, prompt(), 6, temperature=0))


def test_context_cropped_when_longer_than_max_seq_len():
    m = tiny()
    out = generate(m, prompt(2, 6), 10, temperature=0)  # 6 + 10 > L = 8
    assert out.shape == (2, 16)
    assert torch.equal(out, manual_greedy(m, prompt(2, 6), 10))


def test_top_k_respected():
    m = tiny()
    idx = prompt(1, 4).repeat(300, 1)
    with torch.no_grad():
        top3 = m(idx[:1])[0][0, -1].topk(3).indices
    out = generate(m, idx, 1, temperature=5.0, top_k=3, generator=torch.Generator().manual_seed(0))
    assert set(out[:, -1].tolist()) == set(top3.tolist())  # all three drawn, nothing else


def test_sampling_reproducible_with_generator():
    m = tiny()
    a = generate(m, prompt(), 5, generator=torch.Generator().manual_seed(3))
    b = generate(m, prompt(), 5, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b) and a.shape == (2, 8)


@pytest.mark.parametrize("mode", [True, False])
def test_restores_mode_and_no_grad(mode):
    m = tiny().train(mode)
    out = generate(m, prompt(), 2)
    assert m.training is mode and not out.requires_grad
    assert all(p.grad is None for p in m.parameters())


@pytest.mark.parametrize("kw", [dict(temperature=-1.0), dict(top_k=0), dict(max_new_tokens=-1)])
def test_bad_arguments_raise(kw):
    args = dict(max_new_tokens=2) | kw
    with pytest.raises(ValueError):
        generate(tiny(), prompt(), **args)
