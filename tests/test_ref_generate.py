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


def test_sampled_frequencies_follow_softmax_over_the_top_k():
    """One step for 6000 copies of one prompt: the frequencies are softmax(logits / T) over the top-k (zero
    elsewhere), within 5 standard deviations. The logits are spread (2 to -3), so dividing by T = 1.5 and
    multiplying by it give frequencies far apart (the top token 0.52 against 0.78): a tiny model's near-flat
    logits could not tell them apart."""
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0, -2.0, -3.0])
    m, _ = scripted()
    m.table[:] = logits  # the same logits at every position, after every token
    idx = torch.tensor([[1, 2]])
    p = torch.zeros(6, dtype=torch.float64)
    p[:4] = torch.softmax(logits[:4].double() / 1.5, -1)
    assert abs(p[0] - 0.523) < 1e-3 and abs(torch.softmax(logits[:4].double() * 1.5, -1)[0] - 0.779) < 1e-3
    n = 6000
    out = generate(m, idx.repeat(n, 1), 1, temperature=1.5, top_k=4, generator=torch.Generator().manual_seed(0))
    counts = torch.bincount(out[:, -1], minlength=6).double()
    assert torch.equal(counts > 0, p > 0)
    assert ((counts - n * p).abs() <= 5 * (n * p * (1 - p)).sqrt()).all(), (counts / n, p)


def test_other_correct_samplers_pass_the_check():
    from tinylm_checks import check_generate
    from mutants.generate import ACCEPTED
    for check, fns in ACCEPTED.items():
        for fn in fns:
            for seed in (0, 1, 2):
                check(fn, seed=seed, quiet=True)


def scripted(L=4, V=6):
    from tinylm_checks.probes import ScriptedLM
    table = torch.randn(L, V, V, generator=torch.Generator().manual_seed(0))
    return ScriptedLM(table), table


def test_scripted_model_logits_depend_on_position_and_token_and_it_records_its_calls():
    m, table = scripted()
    ids = torch.tensor([[1, 2, 3], [3, 2, 1]])
    with torch.no_grad():
        logits, loss = m(ids)
    assert loss is None and logits.shape == (2, 3, 6) and logits.dtype == torch.float32
    assert torch.equal(logits[0, 2], table[2, 3]) and torch.equal(logits[1, 0], table[0, 3])
    assert m.n_calls == 1 and torch.equal(m.calls[0]["ids"], ids)
    assert m.calls[0]["training"] is True and m.calls[0]["grad"] is False
    spec = m.probe_spec()
    twin = type(m).from_probe_spec(spec, ())
    twin.eval()(ids[:, :2])
    m.absorb_probe_report(twin.probe_report())
    assert m.n_calls == 1 and m.training is False and m.calls[0]["training"] is False


@pytest.mark.parametrize("ids", [torch.zeros(2, 5, dtype=torch.long), torch.zeros(5, dtype=torch.long),
                                 torch.zeros(2, 3)])
def test_scripted_model_rejects_what_tinylm_rejects(ids):
    m, _ = scripted()
    with pytest.raises(ValueError, match="max_seq_len|2-D integer"):
        m(ids)


def test_defaults_are_temperature_1_and_no_top_k():
    """check_generate calls generate without temperature and top_k and expects these defaults."""
    import inspect
    params = inspect.signature(generate).parameters
    assert (params["temperature"].default, params["top_k"].default, params["generator"].default) == (1.0, None, None)
