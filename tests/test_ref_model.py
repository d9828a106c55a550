"""tinylm_solutions.model.TinyLM: shapes, tying, label shift, loss at init, overfitting one batch."""
import math

import pytest
import torch
import torch.nn.functional as F

from tinylm_solutions.block import TransformerBlock
from tinylm_solutions.model import TinyLM, causal_lm_loss, shift_labels, small_init_std
from tinylm_solutions.norm import LayerNorm

TOL = dict(atol=1e-6, rtol=0.0)
V, L, D, H, N, D_FF = 50, 16, 32, 4, 2, 64


def tiny(**kw):
    torch.manual_seed(0)
    return TinyLM(V, L, D, H, N, D_FF, **kw).double()


def ids(B=3, T=10, seed=1):
    return torch.randint(V, (B, T), generator=torch.Generator().manual_seed(seed))


def test_structure_and_logits_shape():
    m = tiny()
    assert isinstance(m.token_emb, torch.nn.Embedding) and m.token_emb.weight.shape == (V, D)
    assert isinstance(m.pos_emb, torch.nn.Embedding) and m.pos_emb.weight.shape == (L, D)
    assert len(m.blocks) == N and all(isinstance(b, TransformerBlock) for b in m.blocks)
    assert isinstance(m.norm, LayerNorm) and m.lm_head.bias is None
    logits, loss = m(ids())
    assert logits.shape == (3, 10, V) and loss is None


def test_weights_tied_one_tensor():
    m = tiny()
    assert m.lm_head.weight is m.token_emb.weight
    untied = tiny(tie_weights=False)
    assert untied.lm_head.weight is not untied.token_emb.weight
    assert untied.get_num_params(False) - m.get_num_params(False) == V * D


def test_param_count_and_table():
    m = tiny()
    table = m.parameter_table()
    block = 12 * D ** 2 + 13 * D if D_FF == 4 * D else 4 * (D * D + D) + 2 * D * D_FF + D_FF + D + 4 * D
    assert table == {"token_emb": V * D, "pos_emb": L * D, "blocks": N * block, "norm": 2 * D, "lm_head": 0,
                     "total": V * D + L * D + N * block + 2 * D}
    assert m.get_num_params(non_embedding=False) == table["total"] == sum(p.numel() for p in m.parameters())
    assert m.get_num_params() == table["total"] - L * D


def test_seeded_construction_deterministic():
    a, b = tiny().state_dict(), tiny().state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_init_std_and_loss_at_init_close_to_ln_V():
    m = tiny()
    assert abs(m.token_emb.weight.std().item() - 0.02) < 0.002
    _, loss = m(ids(8, 16), labels=ids(8, 16))
    assert abs(loss.item() - math.log(V)) < 0.1


@pytest.mark.parametrize("init_std", [0.02, 0.05])
def test_init_std_is_gpt2s_rule_with_that_std(init_std):
    torch.manual_seed(0)
    m = TinyLM(V, L, 256, 4, 3, 1024, init_std=init_std)  # wide enough for 2% std estimates
    for name, p in m.named_parameters():
        if name.endswith("bias") and "norm" not in name:
            assert torch.count_nonzero(p) == 0, name
        elif p.dim() == 2:
            want = init_std / math.sqrt(2 * 3) if name.endswith(("W_O.weight", "linear2.weight")) else init_std
            assert p.std().item() == pytest.approx(want, rel=0.05), name
    assert m.config["init_std"] == init_std and TinyLM(**m.config).config == m.config


def test_the_default_init_is_gpt2s_and_draws_as_before():
    torch.manual_seed(0)
    a = TinyLM(V, L, D, H, N, D_FF)
    torch.manual_seed(0)
    b = TinyLM(V, L, D, H, N, D_FF, init_std=0.02)
    assert a.config["init_std"] == 0.02 and all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters()))


def test_small_init_std_is_sqrt_2_over_5_d_model():
    assert small_init_std(768) == pytest.approx(0.0228218, abs=1e-7)  # GPT-2's width: about GPT-2's 0.02
    assert small_init_std(128) == pytest.approx(0.0559017, abs=1e-7)
    for bad in (0, -4, 12.0, True, "128"):
        with pytest.raises(ValueError, match="d_model must be a positive integer"):
            small_init_std(bad)
    for bad in (0, -0.02, True, "0.02", None):
        with pytest.raises(ValueError, match="init_std must be a positive number"):
            TinyLM(V, L, D, H, N, D_FF, init_std=bad)


def test_label_shift_matches_manual_cross_entropy():
    m = tiny()
    x = ids()
    logits, loss = m(x, labels=x)
    manual = F.cross_entropy(logits[:, :-1].reshape(-1, V), x[:, 1:].reshape(-1))
    torch.testing.assert_close(loss, manual, **TOL)
    shifted_logits, targets = shift_labels(logits, x)
    assert shifted_logits.shape == (3, 9, V) and torch.equal(targets, x[:, 1:])
    unshifted = F.cross_entropy(logits.reshape(-1, V), x.reshape(-1))
    assert abs(unshifted.item() - loss.item()) > 1e-4  # the shift matters


def test_ignore_index():
    m = tiny()
    x = ids()
    labels = x.clone()
    labels[:, 5:] = -100
    logits, loss = m(x, labels=labels)
    manual = F.cross_entropy(logits[:, :4].reshape(-1, V), x[:, 1:5].reshape(-1))
    torch.testing.assert_close(loss, manual, **TOL)
    torch.testing.assert_close(causal_lm_loss(logits, labels), manual, **TOL)


def test_causal_inside():
    m = tiny()
    x = ids(1, 10)
    x2 = x.clone()
    x2[0, 6:] = (x2[0, 6:] + 1) % V
    torch.testing.assert_close(m(x)[0][:, :6], m(x2)[0][:, :6], **TOL)


def test_attention_weights_for_heatmaps():
    m = tiny()
    m(ids(2, 7))
    ws = m.get_attention_weights()
    assert len(ws) == N and all(w.shape == (2, H, 7, 7) for w in ws)
    assert all(w.triu(1).abs().max().item() == 0.0 for w in ws)


@pytest.mark.parametrize("bad", [torch.zeros(3, 10), torch.zeros(10, dtype=torch.long),
                                 torch.zeros(3, L + 1, dtype=torch.long), torch.zeros(3, 2, dtype=torch.bool)])
def test_bad_input_raises(bad):
    with pytest.raises(ValueError):
        tiny()(bad)


def test_too_long_message_and_label_shape():
    m = tiny()
    with pytest.raises(ValueError, match="max_seq_len"):
        m(torch.zeros(1, L + 1, dtype=torch.long))
    with pytest.raises(ValueError, match="labels"):
        m(ids(), labels=ids(3, 9))


def test_position_variants():
    none, sin = tiny(positions="none"), tiny(positions="sinusoidal")
    assert none.pos_emb is None and none.parameter_table()["pos_emb"] == 0
    assert not sin.pos_emb.weight.requires_grad
    assert sin.pos_emb.weight[0, :4].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert none(ids())[0].shape == sin(ids())[0].shape == (3, 10, V)
    with pytest.raises(ValueError):
        tiny(positions="rotary")


def test_config_rebuilds():
    m = tiny(norm_first=False)
    assert TinyLM(**m.config).parameter_table() == m.parameter_table()
    assert m.blocks[0].norm_first is False


def test_overfit_one_batch():
    torch.manual_seed(0)
    m = TinyLM(20, 16, 32, 2, 1, 64)
    x = torch.randint(20, (4, 16), generator=torch.Generator().manual_seed(0))
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    losses = []
    for _ in range(300):
        _, loss = m(x, labels=x)
        losses.append(loss.item())
        if loss.item() < 0.1:
            break
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert losses[-1] < 0.1, f"loss after {len(losses)} steps: {losses[-1]:.3f}"


def test_parameter_table_function_counts_each_tensor_once():
    from tinylm_solutions.model import parameter_table
    tied, untied = tiny(), tiny(tie_weights=False)
    assert parameter_table(tied) == tied.parameter_table()
    assert parameter_table(untied)["lm_head"] == V * D
    assert parameter_table(untied)["total"] - parameter_table(tied)["total"] == V * D
    frozen = tiny(positions="sinusoidal")  # requires_grad=False: still counted
    assert parameter_table(frozen)["pos_emb"] == L * D
    assert parameter_table(tiny(positions="none"))["pos_emb"] == 0
    assert all(type(v) is int for v in parameter_table(tied).values())


def test_gpt2_small_count():
    """GPT-2 small's layout gives OpenAI's 124,439,808 parameters (built without memory, on the meta device)."""
    from tinylm_solutions.model import parameter_table
    with torch.device("meta"):
        m = TinyLM(50257, 1024, 768, 12, 12, 3072)
    table = parameter_table(m)
    assert table["total"] == 124_439_808 == m.get_num_params(non_embedding=False)
    assert table["blocks"] == 12 * (12 * 768 ** 2 + 13 * 768)


@pytest.mark.parametrize("logits, labels, match", [
    (torch.zeros(2, 5), torch.zeros(2, 5, dtype=torch.long), "logits must be a 3-D float"),
    (torch.zeros(2, 5, V, dtype=torch.long), torch.zeros(2, 5, dtype=torch.long), "logits must be a 3-D float"),
    (torch.zeros(2, 5, V), torch.zeros(2, 4, dtype=torch.long), r"labels must be an integer tensor of shape \(B, T\) = \(2, 5\)"),
    (torch.zeros(2, 5, V), torch.zeros(2, 5), "labels must be an integer tensor"),
    (torch.zeros(2, 1, V), torch.zeros(2, 1, dtype=torch.long), "T >= 2"),
])
def test_causal_lm_loss_bad_input(logits, labels, match):
    with pytest.raises(ValueError, match=match):
        causal_lm_loss(logits, labels)


def test_causal_lm_loss_is_shifted_cross_entropy_and_keeps_dtype():
    g = torch.Generator().manual_seed(3)
    logits = torch.randn(2, 6, V, generator=g)  # float32
    labels = torch.randint(V, (2, 6), generator=g)
    labels[1, 4:] = -100
    keep = labels[:, 1:] != -100
    manual = -logits[:, :-1].log_softmax(-1).gather(-1, labels[:, 1:].clamp(min=0)[..., None])[..., 0][keep].mean()
    loss = causal_lm_loss(logits, labels)
    assert loss.dtype == torch.float32 and loss.shape == ()
    torch.testing.assert_close(loss, manual, atol=1e-6, rtol=1e-6)
    assert causal_lm_loss(logits, labels.int()).item() == loss.item()  # any integer dtype


def test_accepted_variants_pass_the_checks(capsys):
    """Right answers written another way (a learner's loss, nn.LayerNorm as the final norm) pass, at two seeds."""
    from mutants.model import ACCEPTED
    for check, answers in ACCEPTED.items():
        for answer in answers:
            for seed in (0, 1):
                check(answer, seed=seed)
    assert capsys.readouterr().out.count("passed") == 2 * sum(len(a) for a in ACCEPTED.values())


# ---- a learner's reports on the stage-08 checks (each fixed as a kind; the mutants are rows in mutants/model.py)

def _failure(check, wrong, seed=0):
    from tinylm_checks import CheckFailure
    with pytest.raises(CheckFailure) as info:
        check(wrong, seed=seed, quiet=True)
    return info.value


@pytest.mark.parametrize("wrong", ["LMResidualInitHitsBiases", "LMResidualInitHitsOutBiasOnly"])
def test_residual_init_that_hits_the_biases_is_not_blamed_on_unzeroed_biases(wrong):
    from mutants import model as mutants
    from tinylm_checks import check_tiny_lm
    exc = _failure(check_tiny_lm, getattr(mutants, wrong))
    assert exc.mistake == "residual_init_hit_biases" and "zeros_" not in exc.hint
    assert "attn.W_O.weight" in exc.hint and "p.dim() == 2" in exc.hint and "attn.W_O.bias" in exc.got
    exc = _failure(check_tiny_lm, mutants.LMBiasesKept)  # every bias left at its default: the general mistake
    assert exc.mistake == "biases_not_zeroed" and "zeros_" in exc.hint


def test_view_of_a_sliced_tensor_is_not_called_a_transpose():
    from mutants import model as mutants
    from tinylm_checks import MISTAKES, check_causal_lm_loss
    exc = _failure(check_causal_lm_loss, mutants.loss_sliced_view)
    assert exc.mistake == "view_after_transpose" and "sliced" in MISTAKES[exc.mistake]
    assert "just transposed" not in str(exc) and ".reshape(...)" in exc.hint


@pytest.mark.parametrize("wrong, mistake, phrase", [
    ("LMPositionsFromTokenIds", "positions_from_token_ids", "torch.arange(T"),
    ("LMMaskForMaxSeqLen", "causal_mask_for_max_seq_len", "causal_mask(T)"),
    ("LMWholePositionTable", "positions_for_max_seq_len", "torch.arange(T"),
    ("LMPositionsArangeMaxLen", "positions_for_max_seq_len", "torch.arange(T")])
def test_position_crashes_are_named_at_both_seeds(wrong, mistake, phrase):
    from mutants import model as mutants
    from tinylm_checks import check_tiny_lm
    for seed in (0, 1):
        exc = _failure(check_tiny_lm, getattr(mutants, wrong), seed)
        assert exc.mistake == mistake and phrase in exc.hint and "your code raised" in exc.problem


@pytest.mark.parametrize("check, wrong", [("check_causal_lm_loss", "loss_item"), ("check_tiny_lm", "LMLossItem")])
def test_a_loss_returned_as_float_is_told_to_keep_the_tensor(check, wrong):
    import tinylm_checks
    from mutants import model as mutants
    exc = _failure(getattr(tinylm_checks, check), getattr(mutants, wrong))
    assert exc.mistake == "loss_returned_as_float" and "(float)" in exc.got
    assert exc.hint == "return the 0-dim tensor (no .item()): the loss must carry gradients for backward"


def test_a_crash_names_the_learners_own_line():
    from mutants import model as mutants
    from tinylm_checks import check_tiny_lm
    exc = _failure(check_tiny_lm, mutants.LMMaskForMaxSeqLen)
    assert exc.got.endswith("in trunk, line %d: x = block(x, mask)" % (
        mutants.LMMaskForMaxSeqLen.trunk.__code__.co_firstlineno + 3))


# ---- a blind red team's wrong TinyLMs and tables that passed (each fixed as a kind; rows in mutants/model.py)

def test_fresh_reference_layer_norms_start_at_one_and_zero():
    m = tiny()
    norms = [m.norm] + [b.norm1 for b in m.blocks] + [b.norm2 for b in m.blocks]
    assert all(torch.equal(n.weight, torch.ones(D, dtype=n.weight.dtype)) for n in norms)
    assert all(torch.equal(n.bias, torch.zeros(D, dtype=n.bias.dtype)) for n in norms)
    assert m.max_seq_len == L


@pytest.mark.parametrize("wrong, first", [("LMLayerNormReinit", "blocks.0.norm1.weight"),
                                          ("LMZeroAll1dParams", "blocks.0.norm1.weight"),
                                          ("LMFinalNormWeightZero", "norm.weight")])
def test_a_reinitialised_layer_norm_is_named_with_its_name(wrong, first):
    from mutants import model as mutants
    from tinylm_checks import check_tiny_lm
    for seed in (0, 1):
        exc = _failure(check_tiny_lm, getattr(mutants, wrong), seed)
        assert exc.mistake == "layer_norm_reinitialised" and exc.problem.endswith(": " + first)
        assert "only nn.Linear and nn.Embedding" in exc.hint and exc.got.startswith(first + " mean ")


@pytest.mark.parametrize("wrong, std", [("LMPosStd001", 0.01), ("LMPosZeros", 0.0), ("LMPosUniform", 0.02 / 3 ** 0.5)])
def test_pos_emb_std_is_checked_from_both_sides(wrong, std):
    from mutants import model as mutants
    from tinylm_checks import check_tiny_lm
    exc = _failure(check_tiny_lm, getattr(mutants, wrong))
    assert exc.mistake == "embedding_init_std_wrong" and exc.problem.startswith("the embedding pos_emb.weight has std")
    assert abs(float(exc.got.removeprefix("std ")) - std) <= 0.1 * 0.02


def test_max_seq_len_must_be_stored():
    from mutants import model as mutants
    from tinylm_checks import check_tiny_lm
    exc = _failure(check_tiny_lm, mutants.LMNoMaxSeqLenAttr)
    assert exc.mistake == "max_seq_len_not_stored" and exc.got == "no attribute max_seq_len"
    assert exc.hint == "in __init__: self.max_seq_len = max_seq_len"


def test_residual_scaling_everywhere_and_a_wrong_residual_std_are_told_apart():
    from mutants import model as mutants
    from tinylm_checks import check_tiny_lm
    exc = _failure(check_tiny_lm, mutants.LMScaledAllLinearsInBlocks)
    assert exc.mistake == "residual_init_everywhere" and "attn.W_O.weight and ffn.linear2.weight" in exc.hint
    exc = _failure(check_tiny_lm, mutants.LMResidStdPrecedence)  # 0.02 / 2 * sqrt(3) = 0.0173, 13% from 0.02
    assert exc.mistake == "residual_init_std_wrong" and "0.02 / sqrt(2 * num_layers) = 0.008165" in exc.expected
    assert "with the brackets" in exc.hint and "std 0.0174" == exc.got
    exc = _failure(check_tiny_lm, mutants.LMNoResidualScaling)  # 0.02: the general mistake, as before
    assert exc.mistake == "residual_init_not_scaled"
    exc = _failure(check_tiny_lm, mutants.LMLinearDefaultInit)  # PyTorch's U(-1/sqrt(D), 1/sqrt(D))
    assert exc.mistake == "linear_not_gpt2_init"


def test_buffers_counted_as_parameters_are_named():
    from mutants import model as mutants
    from tinylm_checks import check_parameter_table
    exc = _failure(check_parameter_table, mutants.table_buffers_counted)
    assert exc.mistake == "buffers_counted" and "causal-mask buffer" in exc.tried
    assert "parameters()" in exc.hint
