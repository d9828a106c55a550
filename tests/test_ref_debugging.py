"""tinylm_solutions.debugging (stage 11's answers) and tinylm_solutions.ablations (its given code) against
PyTorch's own functions and the behaviour each fix restores."""
import math

import pytest
import torch
import torch.nn.functional as F

from tinylm_solutions import ablations, debugging
from tinylm_solutions.model import TinyLM, causal_lm_loss

TOL = dict(atol=1e-9, rtol=1e-9)


def test_answers_are_bug_names():
    assert set(debugging.ANSWERS.values()) <= set(ablations.BUG_NAMES)
    assert len(set(ablations.BUG_NAMES)) == len(ablations.BUG_NAMES) == 10
    assert [debugging.nan_loss_bug(), debugging.uniform_attention_bug(), debugging.future_mask_bug(),
            debugging.unshifted_labels_bug()] == ["exp_overflow", "elementwise_scores", "mask_sees_future",
                                                  "labels_not_shifted"]


@pytest.mark.parametrize("shift", [0.0, 1000.0, -1000.0])
@pytest.mark.parametrize("spread", [1.0, 1000.0])
def test_stable_cross_entropy_equals_torch(shift, spread):
    g = torch.Generator().manual_seed(0)
    logits = shift + spread * torch.randn(6, 9, generator=g, dtype=torch.float64)
    targets = torch.randint(9, (6,), generator=g)
    got = debugging.stable_cross_entropy(logits, targets)
    assert math.isfinite(got.item())
    torch.testing.assert_close(got, F.cross_entropy(logits, targets), **TOL)


def test_stable_cross_entropy_float32_and_gradient():
    g = torch.Generator().manual_seed(1)
    logits = (100 + 3 * torch.randn(5, 7, generator=g)).requires_grad_(True)  # exp(100) is inf in float32
    targets = torch.randint(7, (5,), generator=g)
    loss = debugging.stable_cross_entropy(logits, targets)
    assert loss.dtype == torch.float32
    torch.testing.assert_close(loss, F.cross_entropy(logits, targets), atol=1e-5, rtol=1e-6)
    loss.backward()
    expected = (torch.softmax(logits.detach(), -1) - F.one_hot(targets, 7)) / 5
    torch.testing.assert_close(logits.grad, expected, atol=1e-6, rtol=1e-5)
    naive = (logits.exp() / logits.exp().sum(-1, keepdim=True)).gather(-1, targets[:, None]).log().mean()
    assert math.isnan(naive.item())  # the bug the fix fixes


def test_stable_cross_entropy_bad_shapes():
    with pytest.raises(ValueError, match=r"logits \(N, V\) and targets \(N,\)"):
        debugging.stable_cross_entropy(torch.zeros(2, 3, 4), torch.zeros(2, dtype=torch.long))


def test_fixed_attention_equals_torch_sdpa():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=g, dtype=torch.float64) for _ in range(3))
    mask = torch.ones(5, 5, dtype=torch.bool).tril()
    out, w = debugging.fixed_attention(q, k, v, mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), **TOL)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5, dtype=torch.float64), **TOL)
    out_n, _ = debugging.fixed_attention(q, k, v)
    torch.testing.assert_close(out_n, F.scaled_dot_product_attention(q, k, v), **TOL)


@pytest.mark.parametrize("T", [1, 4, 9])
def test_fixed_causal_mask(T):
    m = debugging.fixed_causal_mask(T)
    assert m.dtype == torch.bool and m.shape == (T, T)
    assert torch.equal(m, ~torch.ones(T, T, dtype=torch.bool).triu(1))


@pytest.mark.parametrize("T", [0, 2.0, None])
def test_fixed_causal_mask_bad_T(T):
    with pytest.raises(ValueError, match="T must be a positive int"):
        debugging.fixed_causal_mask(T)


def test_fixed_lm_loss_equals_model_loss():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 6, 5, generator=g, dtype=torch.float64)
    labels = torch.randint(5, (2, 6), generator=g)
    labels[0, -2:] = -100
    torch.testing.assert_close(debugging.fixed_lm_loss(logits, labels), causal_lm_loss(logits, labels), **TOL)
    with pytest.raises(ValueError, match=r"logits \(B, T, V\) and labels \(B, T\)"):
        debugging.fixed_lm_loss(logits, labels[:, :-1])


def test_lab_model_with_default_parts_equals_tiny_lm():
    """LabTinyLM with the default parts is TinyLM: same weights, same logits and loss."""
    torch.manual_seed(0)
    lab = ablations.LabTinyLM(11, 8, 12, 2, 2, 24).double().eval()
    plain = TinyLM(11, 8, 12, 2, 2, 24).double().eval()
    plain.load_state_dict(lab.state_dict())
    ids = torch.randint(11, (3, 8))
    (a, la), (b, lb) = lab(ids, labels=ids), plain(ids, labels=ids)
    torch.testing.assert_close(a, b, **TOL)
    torch.testing.assert_close(la, lb, **TOL)


def test_lab_model_uses_its_parts():
    torch.manual_seed(0)
    seen = []
    lab = ablations.LabTinyLM(11, 8, 12, 2, 1, 24, mask_fn=lambda T: seen.append(T) or debugging.fixed_causal_mask(T),
                              loss_fn=lambda logits, labels: logits.sum() * 0 + 7.0)
    ids = torch.randint(11, (2, 5))
    assert lab(ids, labels=ids)[1].item() == 7.0 and seen == [5]


def test_no_residual_block_and_grad_norms():
    torch.manual_seed(0)
    model = TinyLM(11, 8, 12, 2, 3, 24).double()
    ablations.without_residuals(model)
    assert all(type(b) is ablations.NoResidualBlock for b in model.blocks)
    block, x = model.blocks[0], torch.randn(2, 4, 12, dtype=torch.float64)
    expected = block.ffn(block.norm2(block.attn(block.norm1(x))[0]))
    torch.testing.assert_close(block(x), expected, **TOL)
    ids = torch.randint(11, (2, 8))
    model(ids, labels=ids)[1].backward()
    norms = ablations.layer_grad_norms(model)
    assert len(norms) == 3 and all(n > 0 for n in norms)
    with pytest.raises(ValueError, match="Pre-LN"):
        ablations.without_residuals(TinyLM(11, 8, 12, 2, 1, 24, norm_first=False))


def test_lab_train_stops_at_a_non_finite_loss():
    torch.manual_seed(0)
    model = ablations.LabTinyLM(11, 8, 12, 2, 1, 24, loss_fn=lambda logits, labels: logits.sum() * float("nan"))
    hist = ablations.lab_train(model, torch.randint(11, (100,)), steps=5)
    assert hist["step"] == [1] and math.isnan(hist["loss"][0])


def test_sequence_loss_restores_mode():
    torch.manual_seed(0)
    model = TinyLM(11, 8, 12, 2, 1, 24).train()
    ids = torch.randint(11, (8,))
    loss = ablations.sequence_loss(model, ids)
    assert model.training
    with torch.no_grad():
        expected = F.cross_entropy(model.eval()(ids[None])[0][0, :-1], ids[1:]).item()
    assert loss == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_check_accepts_other_correct_spellings(seed):
    from mutants.debugging import ACCEPTED
    for check, fns in ACCEPTED.items():
        for fn in fns:
            check(fn, seed=seed, quiet=True)
