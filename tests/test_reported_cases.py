"""The learners' bug reports that the stage 01-02 checks answered badly, kept as tests (issue 5, "Diagnoses
that fit the mistake"). Each was fixed as a kind (see the rows in tests/mutants/); these tests pin what the
learner reads: the named mistake and a hint that fits it and the exercise it appears in."""
import pytest

from tinylm_checks import (MISTAKES, check_attention_scores, check_multi_head_attention,
                           check_scaled_dot_product_attention, check_self_attention, check_softmax)
from tinylm_solutions.attention import scaled_dot_product_attention

from mutants import attention as at
from mutants import multihead as mh
from mutants import softmax as sm
from test_checks_mutants import run_check
from test_checks_mutants import single_thread  # noqa: F401 - autouse fixture: run the checks on one thread

pytestmark = pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning")


@pytest.mark.parametrize("check, mutant", [(check_self_attention, at.SelfAttentionMaskMultiplied),
                                           (check_multi_head_attention, mh.MHAMaskMultiplied)])
def test_1_mask_multiplied_gets_its_own_hint(check, mutant):
    exc = run_check(check, mutant)
    assert exc.mistake == "mask_multiplied" and exc.hint_for == "mask_multiplied"
    assert "-inf" in exc.hint and "masked_fill" in exc.hint
    assert "pass it on" not in exc.hint


def test_2_mask_on_the_wrong_axis_is_named():
    exc = run_check(check_self_attention, at.SelfAttentionMaskTransposed)
    assert exc.mistake == "mask_transposed"
    assert "pass it on" not in exc.hint and "transpose" in exc.hint


def test_3_hard_coded_axes_are_named_not_blamed_on_keepdim():
    exc = run_check(check_attention_scores, at.scores_transpose_1_2)
    assert exc.mistake == "hard_coded_axes"
    assert "(2, 4, 5, 6)" in exc.tried and "keepdim" not in str(exc)
    assert "transpose(-2, -1)" in exc.hint


@pytest.mark.parametrize("mutant, mistake", [(at.sdpa_softmax_dim_1, "softmax_over_queries"),
                                             (at.sdpa_softmax_dim_0, "softmax_over_batch")])
def test_4_every_wrong_softmax_axis_is_named_without_talk_of_masks(mutant, mistake):
    exc = run_check(check_scaled_dot_product_attention, mutant)
    assert exc.mistake == mistake and "no mask" in exc.tried
    assert "mask" not in exc.hint


def test_4_softmax_over_the_heads_of_4d_scores_is_named():
    exc = run_check(check_multi_head_attention, mh.MHASoftmaxOverHeads)
    assert exc.mistake == "softmax_over_heads" and "mask" not in exc.hint


def test_5_bool_indexing_says_indexing_does_not_broadcast():
    exc = run_check(check_scaled_dot_product_attention, at.sdpa_bool_index)
    assert exc.mistake == "bool_index_mask" and "IndexError" in exc.problem
    assert "broadcast" in MISTAKES["bool_index_mask"] and "masked_fill" in exc.hint


@pytest.mark.parametrize("mutant", [sm.softmax_global_max, sm.softmax_clamped, sm.softmax_row_min])
def test_6_a_shift_that_is_not_the_row_max_is_not_blamed_on_overflow_alone(mutant):
    exc = run_check(check_softmax, mutant)
    assert exc.mistake == "softmax_wrong_shift"
    assert "0 / 0" in MISTAKES["softmax_wrong_shift"] and "own maximum" in exc.hint


def test_6_the_naive_softmax_is_told_about_both_directions():
    exc = run_check(check_softmax, sm.softmax_unstable)
    assert exc.mistake == "softmax_unstable"
    assert "inf / inf" in MISTAKES["softmax_unstable"] and "0 / 0" in MISTAKES["softmax_unstable"]


def test_7_a_finite_fill_fails_where_no_key_is_allowed_and_the_pass_line_says_so(capsys):
    exc = run_check(check_scaled_dot_product_attention, at.sdpa_fill_minus_1e9)
    assert exc.mistake == "finite_fill" and "uniform" in exc.got
    check_scaled_dot_product_attention(scaled_dot_product_attention)
    line = capsys.readouterr().out
    assert "masked keys get weight exactly 0" in line and "no allowed key gets zero weights" in line


def test_8_stage_02_hints_fit_stage_02():
    inverted = run_check(check_multi_head_attention, mh.MHAMaskInverted)
    assert inverted.mistake == "mask_inverted"
    assert "unchanged" in inverted.hint and "nn.MultiheadAttention" in inverted.hint
    assert "masked_fill" not in inverted.hint  # the learner writes no masked_fill in stage 02
    reshaped = run_check(check_multi_head_attention, mh.MHAMaskUnsqueezed)
    assert reshaped.mistake == "mask_reshaped" and "keepdim" not in str(reshaped)
    copied = run_check(check_multi_head_attention, mh.MHAKeysFromWQ)
    assert copied.mistake == "projection_reused" and "print your result" not in str(copied)


def test_8_messages_name_axes_and_say_tolerances_in_words():
    exc = run_check(check_multi_head_attention, mh.MHAKeysFromWQ)
    assert "of head" in exc.expected and "in batch" in exc.expected and "row [" not in str(exc)
    assert "equal up to rounding" in exc.expected
