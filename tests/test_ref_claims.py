"""The claims lab's given code (tinylm_solutions.claims, ablations.without, TinyLM(positions="rope")) and its tools
(tinylm_checks.lab.claims). What the lab's full runs show is tests/test_claims.py's business."""
import math

import pytest
import torch
from torch import nn

from tinylm_checks import compare_prediction, plot_claims, predict
from tinylm_checks.lab.claims import Prediction, PredictionError, separated_pairs
from tinylm_solutions.ablations import PARTS, PartialBlock, without
from tinylm_solutions.attention import causal_mask, scaled_dot_product_attention
from tinylm_solutions.claims import CLAIMS_SIZE, EXPERIMENTS, claims_lab, claims_model, ffn_parameters, held_out_loss
from tinylm_solutions.ffn import SwiGLU
from tinylm_solutions.model import TinyLM
from tinylm_solutions.multihead import MultiHeadSelfAttention, merge_heads, split_heads
from tinylm_solutions.position import RotarySelfAttention, apply_rope

V, L, D, H = 11, 16, 16, 2


def lm(**kwargs):
    torch.manual_seed(0)
    return TinyLM(V, L, D, H, 2, 4 * D, **kwargs)


class TestRotarySelfAttention:
    def test_equals_rotated_queries_and_keys(self):
        torch.manual_seed(0)
        attn = RotarySelfAttention(D, H)
        x, mask = torch.randn(2, 7, D), causal_mask(7)
        q = apply_rope(split_heads(attn.W_Q(x), H))
        k = apply_rope(split_heads(attn.W_K(x), H))
        v = split_heads(attn.W_V(x), H)
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        got, got_weights = attn(x, mask)
        torch.testing.assert_close(got, attn.W_O(merge_heads(out)))
        torch.testing.assert_close(got_weights, weights)

    def test_fast_path_equals_taught_path(self):
        torch.manual_seed(0)
        attn = RotarySelfAttention(D, H)
        x, mask = torch.randn(2, 7, D), causal_mask(7)
        taught = attn(x, mask)[0]
        attn.need_weights = False
        fast, weights = attn(x, mask)
        assert weights is None
        torch.testing.assert_close(fast, taught)
        with pytest.raises(TypeError, match="mask must be a bool tensor"):  # as MultiHeadSelfAttention's fast path
            attn(x, mask.float())

    def test_same_parameters_as_the_layer_it_extends(self):
        assert isinstance(RotarySelfAttention(D, H), MultiHeadSelfAttention)
        assert [n for n, _ in RotarySelfAttention(D, H).named_parameters()] == \
            [n for n, _ in MultiHeadSelfAttention(D, H).named_parameters()]

    def test_odd_head_width_is_refused(self):
        with pytest.raises(ValueError, match="d_k = d_model / num_heads = 3 must be even"):
            RotarySelfAttention(6, 2)


class TestTinyLMRope:
    def test_layout(self):
        model = lm(positions="rope")
        assert model.pos_emb is None
        assert all(type(b.attn) is RotarySelfAttention for b in model.blocks)
        assert model.get_num_params() == lm(positions="none").get_num_params()
        assert model.get_num_params(non_embedding=False) == lm().get_num_params(non_embedding=False) - L * D

    def test_config_rebuilds_it(self):
        model = lm(positions="rope")
        again = TinyLM(**model.config)
        again.load_state_dict(model.state_dict())
        ids = torch.randint(0, V, (2, 9))
        torch.testing.assert_close(again(ids)[0], model(ids)[0])

    def test_init_is_the_same_as_without_positions(self):
        """The rotary layers are built before the init: the same draws, the same weights as the model without
        positions (whose blocks are the same modules), so RoPE is the only difference between the two."""
        rope, none = lm(positions="rope").state_dict(), lm(positions="none").state_dict()
        assert list(rope) == list(none)
        for name in rope:
            torch.testing.assert_close(rope[name], none[name], atol=0, rtol=0)

    def test_the_last_token_sees_the_order_of_the_earlier_ones(self):
        """Without positions, the last position's output ignores the order of the tokens before it (its keys are
        a set); with RoPE it does not."""
        a, b = torch.tensor([[1, 2, 3, 4, 5]]), torch.tensor([[2, 1, 4, 3, 5]])
        torch.manual_seed(0)
        none = TinyLM(V, L, D, H, 1, 4 * D, positions="none", init_std=0.5).eval()  # one layer: keys = tokens
        rope = TinyLM(V, L, D, H, 1, 4 * D, positions="rope", init_std=0.5).eval()  # large scores
        torch.testing.assert_close(none(a)[0][:, -1], none(b)[0][:, -1])
        assert (rope(a)[0][:, -1] - rope(b)[0][:, -1]).abs().max() > 0.1

    def test_unknown_positions_are_refused(self):
        with pytest.raises(ValueError, match="'learned', 'sinusoidal', 'rope' or 'none', got 'alibi'"):
            lm(positions="alibi")
        with pytest.raises(ValueError, match="d_k = d_model / num_heads = 3 must be even"):
            TinyLM(V, L, 6, 2, 1, 24, positions="rope")


class TestWithout:
    @pytest.mark.parametrize("part", PARTS)
    def test_runs_and_removes_only_that_part(self, part):
        model = without(lm(), part)
        ids = torch.randint(0, V, (2, 9))
        logits, loss = model(ids, labels=ids)
        assert logits.shape == (2, 9, V) and torch.isfinite(loss)
        full = lm()
        block = full.blocks[0]
        removed = {"attention": sum(p.numel() for m in (block.attn, block.norm1) for p in m.parameters()),
                   "ffn": sum(p.numel() for m in (block.ffn, block.norm2) for p in m.parameters()),
                   "residual": 0,
                   "norm": sum(p.numel() for m in (block.norm1, block.norm2) for p in m.parameters())}[part]
        extra = 2 * D if part == "norm" else 0  # the final LayerNorm
        assert model.get_num_params() == full.get_num_params() - 2 * removed - extra

    def test_no_attention_means_no_token_reads_another(self):
        model = without(lm(), "attention").eval()
        a, b = torch.tensor([[1, 2, 3]]), torch.tensor([[4, 5, 3]])
        torch.testing.assert_close(model(a)[0][:, -1], model(b)[0][:, -1], atol=0, rtol=0)

    def test_no_norm_leaves_no_layernorm(self):
        model = without(lm(), "norm")
        assert not [m for m in model.modules() if type(m).__name__ == "LayerNorm"]
        assert all(isinstance(b, PartialBlock) for b in model.blocks)

    def test_the_whole_block_is_unchanged_when_nothing_is_removed(self):
        model = lm()
        ids = torch.randint(0, V, (2, 9))
        want = model(ids)[0]
        for block in model.blocks:
            block.__class__ = PartialBlock
        torch.testing.assert_close(model(ids)[0], want, atol=0, rtol=0)

    def test_bad_part_and_post_ln_are_refused(self):
        with pytest.raises(ValueError, match="part must be one of"):
            without(lm(), "positions")
        with pytest.raises(ValueError, match="Pre-LN"):
            without(lm(norm_first=False), "ffn")


class TestClaimsModels:
    def test_every_variant_builds_and_differs_only_where_named(self):
        base = claims_model("whole model", V)
        assert base.config["d_ff"] == 4 * CLAIMS_SIZE["d_model"]
        assert base.config["init_std"] == pytest.approx(math.sqrt(2 / (5 * CLAIMS_SIZE["d_model"])))
        for variants in EXPERIMENTS.values():
            for name in variants:
                torch.manual_seed(0)
                model = claims_model(name, V)
                logits, loss = model(torch.randint(0, V, (2, 8)), labels=torch.randint(0, V, (2, 8)))
                assert logits.shape == (2, 8, V) and torch.isfinite(loss)

    def test_ffn_widths(self):
        D_ = CLAIMS_SIZE["d_model"]
        for name, mult in (("d_ff = D", 1), ("d_ff = 2D", 2), ("d_ff = 4D", 4), ("d_ff = 8D", 8)):
            assert ffn_parameters(claims_model(name, V)) == CLAIMS_SIZE["num_layers"] * (2 * D_ * mult * D_ + mult * D_ + D_)

    def test_swiglu_at_equal_width_has_half_again_the_weights_and_matched_has_the_same(self):
        D_, layers = CLAIMS_SIZE["d_model"], CLAIMS_SIZE["num_layers"]
        gelu = ffn_parameters(claims_model("GELU, d_ff = 4D", V))
        wide = claims_model("SwiGLU, d_ff = 4D", V)
        matched = claims_model("SwiGLU, d_ff = 8D/3", V)
        assert all(isinstance(b.ffn, SwiGLU) for b in (*wide.blocks, *matched.blocks))
        assert ffn_parameters(wide) == layers * 3 * D_ * 4 * D_  # 1.5 x GELU's weights
        assert ffn_parameters(matched) == layers * 3 * D_ * round(8 * D_ / 3)
        assert abs(ffn_parameters(matched) - gelu) / gelu < 0.03

    def test_swapped_in_swiglu_gets_tinylms_init(self):
        torch.manual_seed(0)
        model = claims_model("SwiGLU, d_ff = 4D", V)
        std = model.config["init_std"]
        w = torch.cat([b.ffn.gate_proj.weight.flatten() for b in model.blocks])
        down = torch.cat([b.ffn.down_proj.weight.flatten() for b in model.blocks])
        assert w.std().item() == pytest.approx(std, rel=0.05)
        assert down.std().item() == pytest.approx(std / math.sqrt(2 * CLAIMS_SIZE["num_layers"]), rel=0.05)

    def test_held_out_loss_restores_the_mode(self):
        model = claims_model("whole model", V)
        windows = torch.randint(0, V, (4, 8))
        loss = held_out_loss(model, windows)
        assert model.training and loss == pytest.approx(math.log(V), abs=0.5)


@pytest.fixture(scope="module")
def data():
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, V, (3000,), generator=g), torch.randint(0, V, (64 * 32 + 1,), generator=g)


class TestClaimsLab:
    def test_record_and_shared_runs(self, data):
        train_data, val_data = data
        cache = {}
        parts = claims_lab("parts", train_data, val_data, V, steps=2, seeds=(0, 1), cache=cache)
        assert list(parts["runs"]) == list(EXPERIMENTS["parts"]) and parts["steps"] == 2 and parts["seeds"] == [0, 1]
        assert len(cache) == len(EXPERIMENTS["parts"])
        positions = claims_lab("positions", train_data, val_data, V, steps=2, seeds=(0, 1), cache=cache)
        assert len(cache) == len(EXPERIMENTS["parts"]) + 2  # sinusoidal and RoPE are new; learned, none are not
        assert positions["runs"]["learned"] == parts["runs"]["whole model"]
        again = claims_lab("positions", train_data, val_data, V, steps=2, seeds=(0, 1))
        assert again["runs"] == positions["runs"]  # deterministic: a fresh cache trains the same runs
        for run in parts["runs"].values():
            assert len(run["held_out_loss"]) == len(run["final_loss"]) == 2

    def test_unknown_experiment(self, data):
        with pytest.raises(ValueError, match="experiment must be one of"):
            claims_lab("dropout", *data, V, steps=1)


def record(losses: dict, experiment="positions", steps=400) -> dict:
    return {"experiment": experiment, "steps": steps, "seeds": [0, 1, 2],
            "runs": {v: {"held_out_loss": loss, "final_loss": loss, "params": 100, "ffn_params": 50}
                     for v, loss in losses.items()}}


RUN = record({"learned": [2.7, 2.6, 2.65], "sinusoidal": [2.8, 2.9, 2.85], "RoPE": [2.6, 2.5, 2.66],
              "no positions": [2.75, 2.45, 2.7]})


class TestPredictions:
    def test_a_prediction_lists_every_variant_once(self):
        p = predict("positions", ["RoPE", "learned", "no positions", "sinusoidal"])
        assert p == Prediction("positions", ("RoPE", "learned", "no positions", "sinusoidal"))
        assert "`RoPE` < `learned`" in str(p)
        assert "No prediction yet" in str(predict("positions", []))

    @pytest.mark.parametrize("order, says", [
        (["RoPE", "learned", "sinusoidal"], "missing: ['no positions']"),
        (["RoPE", "learned", "sinusoidal", "none"], "unknown: ['none']"),
        (["RoPE", "RoPE", "learned", "sinusoidal", "no positions"], "more than once: ['RoPE']"),
        ("RoPE", "got a str"), ({"RoPE": 1}, "got a dict")])
    def test_a_wrong_prediction_says_what_is_expected(self, order, says):
        with pytest.raises(ValueError) as err:
            predict("positions", order)
        assert says in str(err.value)

    def test_unknown_experiment(self):
        with pytest.raises(PredictionError, match="unknown experiment 'position': expected one of 'positions'"):
            predict("position", [])

    def test_a_notebook_shows_the_message_without_a_traceback(self):
        with pytest.raises(PredictionError) as err:
            predict("positions", ["RoPE"])
        assert err.value._render_traceback_() == [f"PredictionError: {err.value}"]

    def test_separated_pairs_are_those_in_the_same_order_in_every_seed(self):
        separated, close = separated_pairs(RUN)
        assert set(separated) == {("learned", "sinusoidal"), ("RoPE", "sinusoidal"), ("no positions", "sinusoidal")}
        assert set(close) == {("learned", "RoPE"), ("learned", "no positions"), ("RoPE", "no positions")}

    def test_comparison_counts_the_pairs_a_prediction_has_right(self):
        text = compare_prediction(predict("positions", ["RoPE", "sinusoidal", "learned", "no positions"]), RUN)
        assert "3 of the 6 pairs have the same order in every seed" in text
        assert "has 1 of those 3 pairs in the run's order" in text
        assert ("the other way round: `no positions` < `sinusoidal` (by 0.050 to 0.450); `learned` < `sinusoidal` "
                "(by 0.100 to 0.300)") in text  # in the order of the run's ranking
        assert "| `RoPE` | 2.587 (2.500 to 2.660) | 100 | 50 | 1 | 1 |" in text
        assert text._repr_markdown_() == str(text)

    def test_comparison_without_a_prediction(self):
        text = compare_prediction(predict("positions", []), RUN)
        assert "You made no prediction" in text and "your rank" not in text

    def test_comparison_of_another_experiment_is_refused(self):
        with pytest.raises(ValueError, match="predict\\('positions', \\[...\\]\\)"):
            compare_prediction(predict("parts", []), RUN)

    def test_plot(self):
        import matplotlib
        matplotlib.use("Agg")
        ax = plot_claims(RUN, unigram=3.28)
        assert [t.get_text() for t in ax.get_xticklabels()] == list(RUN["runs"])
        assert len(ax.patches) == 4 and ax.get_ylim()[1] > 3.28
