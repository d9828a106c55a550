"""tinylm_solutions.train: train_step, evaluate, perplexity, the loop and the CLI."""
import math

import pytest
import torch
import torch.nn.functional as F

from tinylm_solutions.data import get_batch, lm_batches
from tinylm_solutions.model import TinyLM
from tinylm_solutions.train import batch_loss, evaluate, perplexity, train_step
from tinylm_solutions.trainer import train

TOL = dict(atol=1e-6, rtol=0.0)
V = 30


def tiny():
    torch.manual_seed(0)
    return TinyLM(V, 16, 16, 2, 1, 32).double()


def data(n=500):
    return torch.randint(V, (n,), generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("loss", [0.0, 1.0, math.log(V), torch.tensor(2.5)])
def test_perplexity_is_exp_loss(loss):
    assert perplexity(loss) == math.exp(float(loss))
    assert perplexity(math.log(V)) == pytest.approx(V, abs=1e-9)


def test_batch_loss_two_forms():
    m = tiny()
    x, y = get_batch(data(), 3, 8, torch.Generator().manual_seed(0))
    logits = m(x)[0]
    torch.testing.assert_close(batch_loss(m, (x, y)), F.cross_entropy(logits.reshape(-1, V), y.reshape(-1)), **TOL)
    torch.testing.assert_close(batch_loss(m, x), m(x, labels=x)[1], **TOL)


def test_train_step_grad_norm_and_clipping():
    m, ref = tiny(), tiny()
    batch = get_batch(data(), 4, 16, torch.Generator().manual_seed(0))
    batch_loss(ref, batch).backward()
    expected = torch.sqrt(sum((p.grad ** 2).sum() for p in ref.parameters())).item()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    out = train_step(m, batch, opt, max_grad_norm=1e-3)
    assert set(out) == {"loss", "grad_norm"}
    assert out["loss"] == pytest.approx(batch_loss(ref, batch).item(), abs=1e-9)
    assert out["grad_norm"] == pytest.approx(expected, abs=1e-6)
    clipped = torch.sqrt(sum((p.grad ** 2).sum() for p in m.parameters())).item()
    assert clipped == pytest.approx(1e-3, abs=1e-6)
    for p, q in zip(m.parameters(), ref.parameters()):  # SGD: p <- p - lr * clipped grad
        torch.testing.assert_close(p.detach(), (q - 0.1 * q.grad * (1e-3 / expected)).detach(), atol=1e-9, rtol=0)


def test_train_step_lowers_loss():
    m = tiny()
    batch = get_batch(data(), 4, 16, torch.Generator().manual_seed(0))
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    first = train_step(m, batch, opt)["loss"]
    for _ in range(20):
        last = train_step(m, batch, opt)["loss"]
    assert last < first - 0.5


def test_evaluate_matches_manual_mean_and_restores_mode():
    m = tiny().train()
    d = data(101)
    total = sum(F.cross_entropy(m(x)[0].reshape(-1, V), y.reshape(-1), reduction="sum").item()
                for x, y in lm_batches(d, 4, 16))
    assert evaluate(m, d, batch_size=4) == pytest.approx(total / (6 * 16), abs=1e-9)
    assert m.training


def test_evaluate_on_batches_counts_only_scored_tokens():
    m = tiny().eval()
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randint(V, (b, 8), generator=gen), torch.randint(V, (b, 8), generator=gen)) for b in (3, 1)]
    batches[0][1][0, :5] = -100
    total = sum(F.cross_entropy(m(x)[0].reshape(-1, V), y.reshape(-1), reduction="sum").item() for x, y in batches)
    assert evaluate(m, batches) == pytest.approx(total / (4 * 8 - 5), abs=1e-9)
    assert not m.training  # eval mode restored as eval
    with pytest.raises(ValueError, match="no target"):
        evaluate(m, [(batches[1][0], torch.full((1, 8), -100))])


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf")])
def test_perplexity_rejects_what_is_not_a_mean_loss(bad):
    with pytest.raises(ValueError, match="finite number >= 0"):
        perplexity(bad)


def test_reference_and_accepted_variants_pass_their_checks():
    from mutants.training import ACCEPTED, REFERENCE
    for check, fn in REFERENCE.items():
        for seed in (0, 1):
            check(fn, seed=seed, quiet=True)
    for check, fns in ACCEPTED.items():
        for fn in fns:
            check(fn, seed=0, quiet=True)


def test_probes_rebuild_from_their_spec_and_report():
    from tinylm_grading.probes import ProbeLM, SpyOptimizer
    model = ProbeLM(7, 4, seed=3)
    model.emb.grad = torch.ones_like(model.emb)
    opt = SpyOptimizer(model, lr=0.5)
    twin = ProbeLM.from_probe_spec(model.probe_spec(), ())
    spy = SpyOptimizer.from_probe_spec(opt.probe_spec(), (twin,))
    x, y = torch.randint(7, (2, 3)), torch.randint(7, (2, 3))
    assert train_step(twin, (x, y), spy, 0.1)["grad_norm"] > 0.1
    assert [e["event"] for e in spy.events] == ["zero_grad", "step"]
    assert spy.events[1]["grad_norm"] == pytest.approx(0.1, rel=1e-4)  # clipped before the step
    model.absorb_probe_report(twin.probe_report())
    opt.absorb_probe_report(spy.probe_report())
    torch.testing.assert_close(model.emb, twin.emb)
    assert model.calls == [{"training": True, "grad_enabled": True, "shape": [2, 3]}] and len(opt.events) == 2


def test_train_loop_history():
    m = tiny()
    seen = []
    hist = train(m, data(), data(200), steps=30, batch_size=4, block_size=16, lr=1e-2, eval_interval=10,
                 progress=False, callback=lambda step, rec: seen.append(step))
    assert hist["step"] == seen == list(range(1, 31))
    assert len(hist["loss"]) == len(hist["grad_norm"]) == len(hist["tokens_per_s"]) == 30
    assert hist["val_step"] == [10, 20, 30] and len(hist["val_loss"]) == 3
    assert all(t > 0 for t in hist["tokens_per_s"])
    assert sum(hist["loss"][-5:]) / 5 < sum(hist["loss"][:5]) / 5
