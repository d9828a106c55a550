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
    from mutants import REFERENCE
    from mutants.training import ACCEPTED
    for check, fn in REFERENCE.items():
        if check.__module__ != "tinylm_checks.training":
            continue
        for seed in (0, 1):
            check(fn, seed=seed, quiet=True)
    for check, fns in ACCEPTED.items():
        for fn in fns:
            check(fn, seed=0, quiet=True)


def test_probes_rebuild_from_their_spec_and_report():
    from tinylm_checks.probes import ProbeLM, SpyOptimizer
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
    assert model.calls == [{"training": True, "grad_enabled": True, "shape": [2, 3], "labels": False}]
    assert len(opt.events) == 2


def test_probe_lm_given_labels_shifts_them_as_tinylm_and_records_it():
    """model(x, labels=y) returns TinyLM's loss (logits at t against labels[:, t + 1], -100 ignored), so a
    train_step that passes labels runs on the probe as on TinyLM, and the call records labels=True."""
    from tinylm_checks.probes import ProbeLM
    model = ProbeLM(7, 4, seed=3)
    x, y = torch.randint(7, (2, 5)), torch.randint(7, (2, 5))
    y[0, 2] = -100
    logits, loss = model(x, labels=y)
    expected = F.cross_entropy(logits[:, :-1].reshape(-1, 7), y[:, 1:].reshape(-1))
    torch.testing.assert_close(loss, expected)
    assert model(x)[1] is None
    assert [c["labels"] for c in model.calls] == [True, False]
    twin = ProbeLM.from_probe_spec(model.probe_spec(), ())
    assert [c["labels"] for c in twin.calls] == [True, False]  # the record travels


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


# --- nanoGPT's recipe in the loop: warmup + cosine schedule, AdamW betas, weight decay on 2-D weights ---

from tinylm_solutions.trainer import fast_attention, lr_at, make_optimizer  # noqa: E402


@pytest.mark.parametrize("done, expected", [
    (0, 1e-3 * 1 / 101), (49, 1e-3 * 50 / 101), (99, 1e-3 * 100 / 101),  # warmup: lr * (done + 1) / (warmup + 1)
    (100, 1e-3),  # the peak, cos(0) = 1
    (1050, 1e-4 + 0.5 * 9e-4),  # half way through the decay: cos(pi / 2) = 0
    (2000, 1e-4), (2500, 1e-4),  # the end of the decay and beyond: min_lr
])
def test_lr_at_is_nanogpts_get_lr(done, expected):
    assert lr_at(done, 1e-3, warmup_steps=100, min_lr=1e-4, decay_steps=2000) == pytest.approx(expected, rel=1e-12)


def test_lr_at_without_decay_or_warmup():
    assert [lr_at(d, 0.5, warmup_steps=3) for d in range(5)] == [0.125, 0.25, 0.375, 0.5, 0.5]
    assert lr_at(7, 0.5) == 0.5
    assert lr_at(1, 1.0, min_lr=0.0, decay_steps=4) == pytest.approx(0.5 * (1 + math.cos(math.pi / 4)), rel=1e-12)


@pytest.mark.parametrize("kwargs, phrase", [
    (dict(done=-1), "must be >= 0"), (dict(done=0, min_lr=1e-4), "needs decay_steps > warmup_steps=0"),
    (dict(done=0, warmup_steps=10, min_lr=1e-4, decay_steps=10), "needs decay_steps > warmup_steps=10"),
])
def test_lr_at_bad_input(kwargs, phrase):
    with pytest.raises(ValueError, match=phrase):
        lr_at(lr=1e-3, **kwargs)


def test_train_sets_the_scheduled_lr_on_every_step():
    m, lrs = tiny(), []
    train(m, data(), steps=6, batch_size=2, block_size=16, lr=0.1, warmup_steps=2, min_lr=0.01, progress=False,
          callback=lambda step, rec: lrs.append(rec["lr"]))
    expected = [0.1 / 3, 0.2 / 3] + [0.01 + 0.045 * (1 + math.cos(math.pi * r / 4)) for r in range(4)]
    assert lrs == pytest.approx(expected, rel=1e-12)


def test_train_without_a_schedule_leaves_the_rate_alone():
    m, lrs = tiny(), []
    opt = torch.optim.SGD(m.parameters(), lr=0.25)
    train(m, data(), steps=3, batch_size=2, block_size=16, lr=9.0, optimizer=opt, progress=False,
          callback=lambda step, rec: lrs.append(rec["lr"]))
    assert lrs == [0.25, 0.25, 0.25]


def test_make_optimizer_defaults_are_adamws_and_decay_2d_only_is_nanogpts():
    m = tiny()
    plain = make_optimizer(m, 1e-3)
    assert len(plain.param_groups) == 1
    assert plain.param_groups[0]["betas"] == (0.9, 0.999) and plain.param_groups[0]["weight_decay"] == 0.01
    opt = make_optimizer(m, 1e-3, betas=(0.9, 0.99), weight_decay=0.1, decay_2d_only=True)
    decayed, not_decayed = opt.param_groups
    assert (decayed["weight_decay"], not_decayed["weight_decay"], decayed["betas"]) == (0.1, 0.0, (0.9, 0.99))
    names = {id(p): n for n, p in m.named_parameters()}  # the tied weight once, under token_emb
    assert sorted(names[id(p)] for p in decayed["params"]) == sorted(
        n for n, p in m.named_parameters() if p.dim() == 2)
    assert {names[id(p)].rsplit(".", 1)[-1] for p in not_decayed["params"]} == {"bias", "weight"}
    assert all(p.dim() == 1 for p in not_decayed["params"])
    assert len(decayed["params"]) + len(not_decayed["params"]) == len(list(m.parameters()))


def test_adamw_decay_on_2d_only_leaves_biases_undecayed():
    m = tiny()
    for p in m.parameters():
        p.grad = torch.zeros_like(p)  # no gradient: AdamW's step is the decay alone, p <- p (1 - lr wd)
    before = {n: p.detach().clone() for n, p in m.named_parameters()}
    make_optimizer(m, 0.5, weight_decay=0.1, decay_2d_only=True).step()
    for n, p in m.named_parameters():
        factor = 1 - 0.5 * 0.1 if p.dim() == 2 else 1.0
        torch.testing.assert_close(p.detach(), before[n] * factor, atol=1e-15, rtol=0)


def test_fast_training_restores_the_taught_path_and_matches_it():
    slow, fast = tiny(), tiny()
    h_slow = train(slow, data(), steps=5, batch_size=2, block_size=16, lr=1e-2, progress=False)
    h_fast = train(fast, data(), steps=5, batch_size=2, block_size=16, lr=1e-2, progress=False, fast=True)
    assert h_fast["loss"] == pytest.approx(h_slow["loss"], abs=1e-9)  # float64: equal up to rounding
    assert all(m.need_weights for m in fast.modules() if hasattr(m, "need_weights"))
    fast(data(16)[None])
    assert fast.get_attention_weights()[0].shape == (1, 2, 16, 16)


def test_fast_attention_switches_every_layer_and_restores_on_error():
    m = TinyLM(V, 16, 16, 2, 3, 32)
    with pytest.raises(RuntimeError, match="inside"):
        with fast_attention(m):
            assert [b.attn.need_weights for b in m.blocks] == [False] * 3
            assert [n.fused for n in m.modules() if hasattr(n, "fused")] == [True] * 7  # 2 per block + final
            m(data(16)[None])
            assert m.get_attention_weights() == [None] * 3
            raise RuntimeError("inside")
    assert [b.attn.need_weights for b in m.blocks] == [True] * 3
    assert [n.fused for n in m.modules() if hasattr(n, "fused")] == [False] * 7
    with fast_attention(m, enabled=False):
        assert [b.attn.need_weights for b in m.blocks] == [True] * 3


def test_fused_adamw_takes_the_same_steps():
    plain, fused = tiny(), tiny()
    kwargs = dict(steps=4, batch_size=2, block_size=16, lr=1e-2, weight_decay=0.1, decay_2d_only=True,
                  progress=False)
    h_plain, h_fused = train(plain, data(), **kwargs), train(fused, data(), fused=True, **kwargs)
    assert h_fused["loss"] == pytest.approx(h_plain["loss"], abs=1e-12)
    for p, q in zip(fused.parameters(), plain.parameters()):
        torch.testing.assert_close(p, q, atol=1e-12, rtol=0)


def test_train_logs_the_observations_a_run_needs():
    """Per step: the learning rate the step used, the RMS of each block's output in its forward (block 0 first),
    and the peak memory so far (issue 17: the lesson asks for lr, grad norm, activation RMS, tokens/s, peak memory)."""
    torch.manual_seed(0)
    model = TinyLM(20, 8, 16, 2, 3, 32)
    data = torch.randint(0, 20, (400,))
    hist = train(model, data, data, steps=6, batch_size=4, lr=1e-2, warmup_steps=3, progress=False, eval_interval=3)
    assert hist["lr"] == pytest.approx([lr_at(s, 1e-2, 3, None, 6) for s in range(6)])
    assert [len(r) for r in hist["activation_rms"]] == [3] * 6  # one per block, training forwards only
    first = hist["activation_rms"][0]
    assert all(v > 0 for r in hist["activation_rms"] for v in r) and first != hist["activation_rms"][-1]
    memory = hist["peak_memory_mb"]
    assert len(memory) == 6 and memory[0] > 10 and memory == sorted(memory)  # a peak never falls
    assert not model.blocks[0]._forward_hooks  # the hooks are gone after the run
