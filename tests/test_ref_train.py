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
