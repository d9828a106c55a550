"""The checks fail wrong implementations, and name the mistake exactly when they claim to know it.

Each row of ``ROWS`` is ``(check, mutant, expected mistake id or None, key phrase of the problem)``:
the check must raise ``CheckFailure`` (never another exception, never pass), ``exc.mistake`` must equal
the expected id exactly, the message must start with the problem line, and the problem must contain the
key phrase. The mutants live in ``tests/mutants/`` (one module per check family).

Rows listed in ``CHECK_BUGS`` (and seeds listed in ``SEED_BUGS``) describe what the check *should* do
but does not yet: they are marked ``xfail(strict=True)``, so fixing the check turns them into an XPASS
failure, and the entry must go.
"""
import pytest
import torch

from tinylm_checks import (MISTAKES, CheckFailure, check_attention_scores, check_causal_mask,
                           check_merge_heads, check_multi_head_attention, check_scaled_dot_product_attention,
                           check_self_attention, check_softmax, check_split_heads)

from mutants import attention as at
from mutants import masks as mk
from mutants import multihead as mh
from mutants import softmax as sm

# the scores_dot_T mutant triggers PyTorch's deprecation warning for x.T on a 3-D tensor
pytestmark = pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning")

# (check, mutant, expected mistake, key phrase of exc.problem)
ROWS = [
    # ---- softmax: named mistakes
    (check_softmax, sm.softmax_wrong_dim, "softmax_wrong_dim", "not equal to the reference"),
    (check_softmax, sm.softmax_dim_1, "softmax_wrong_dim", "not equal to the reference"),
    (check_softmax, sm.softmax_unstable, "softmax_unstable", "large scores contains NaN or inf"),
    (check_softmax, sm.softmax_not_normalised, "softmax_not_normalised", "not equal to the reference"),
    (check_softmax, sm.softmax_global_sum, "softmax_global_sum", "not equal to the reference"),
    (check_softmax, sm.softmax_log, "log_softmax", "not equal to the reference"),
    (check_softmax, sm.softmax_in_place, "input_modified_in_place", "changed its input x in place"),
    (check_softmax, sm.softmax_through_numpy, "no_gradient", "carries no gradient"),
    (check_softmax, sm.softmax_always_float64, "dtype_changed", "float32 inputs gave a torch.float64 output"),
    # ---- softmax: robustness
    (check_softmax, None, None, "expected the function softmax, got None"),
    (check_softmax, sm.Softmax, None, "expected the function softmax, got a class"),
    (check_softmax, sm.softmax_stub, "not_implemented", "raised NotImplementedError"),
    (check_softmax, sm.softmax_no_keepdim, None, "raised RuntimeError"),
    (check_softmax, sm.softmax_nan, None, "contains NaN or inf"),
    (check_softmax, sm.softmax_float32, "dtype_changed", "has dtype torch.float32"),
    (check_softmax, sm.softmax_numpy, "numpy_output", "is not a tensor"),
    (check_softmax, sm.softmax_no_return, "missing_return", "is not a tensor"),

    # ---- attention_scores: named mistakes
    (check_attention_scores, at.scores_no_scaling, "no_scaling", "not equal to the reference"),
    (check_attention_scores, at.scores_clamped, None, "not equal to the reference"),
    (check_scaled_dot_product_attention, at.sdpa_no_nan_to_num, "nan_fully_masked_row", "NaN in the output"),
    (check_scaled_dot_product_attention, at.sdpa_scale_by_sqrt_d_v, "d_k_from_wrong_dim", "not equal to the reference"),
    (check_self_attention, at.SelfAttentionDropout, "dropout_on_weights", "scaled up"),
    (check_self_attention, at.SelfAttentionNoSuperInit, "missing_super_init", "raised AttributeError"),
    (check_causal_mask, mk.causal_mask_cached_table, None, "wrong shape"),
    (check_attention_scores, at.scores_scale_by_d_k, "scale_by_d_k", "not equal to the reference"),
    (check_attention_scores, at.scores_scale_multiplied, "scale_multiplied", "not equal to the reference"),
    (check_attention_scores, at.scores_sqrt_precedence, "sqrt_precedence", "not equal to the reference"),
    (check_attention_scores, at.scores_sqrt_precedence_inline, "sqrt_precedence", "not equal to the reference"),
    (check_attention_scores, at.scores_int_sqrt, "int_sqrt", "not equal to the reference"),
    (check_attention_scores, at.scores_d_k_from_wrong_dim, "d_k_from_wrong_dim", "not equal to the reference"),
    (check_attention_scores, at.scores_transposed, "transposed_scores", "has the wrong shape"),
    (check_attention_scores, at.scores_dot_T, "batched_T", "raised RuntimeError"),
    (check_attention_scores, at.scores_scales_q_in_place, "input_modified_in_place", "changed its input q in place"),
    (check_attention_scores, at.scores_under_no_grad, "no_gradient", "carries no gradient"),
    # ---- attention_scores: robustness
    (check_attention_scores, None, None, "expected the function attention_scores, got None"),
    (check_attention_scores, at.SelfAttentionNoScaling, None, "expected the function attention_scores, got a class"),
    (check_attention_scores, at.scores_stub, "not_implemented", "raised NotImplementedError"),
    (check_attention_scores, at.scores_float32, "dtype_changed", "has dtype torch.float32"),
    (check_attention_scores, at.scores_numpy, "numpy_output", "is not a tensor"),
    (check_attention_scores, at.scores_no_return, "missing_return", "is not a tensor"),

    # ---- scaled_dot_product_attention: named mistakes
    (check_scaled_dot_product_attention, at.sdpa_softmax_over_queries, "softmax_over_queries", "does not sum to 1"),
    (check_scaled_dot_product_attention, at.sdpa_no_scaling, "no_scaling", "not equal to the reference"),
    (check_scaled_dot_product_attention, at.sdpa_scale_by_d_k, "scale_by_d_k", "not equal to the reference"),
    (check_scaled_dot_product_attention, at.sdpa_d_k_from_wrong_dim, "d_k_from_wrong_dim", "not equal to the reference"),
    (check_scaled_dot_product_attention, at.sdpa_weights_are_scores, "weights_are_scores", "does not sum to 1"),
    (check_scaled_dot_product_attention, at.sdpa_mask_after_softmax, "mask_after_softmax", "does not sum to 1"),
    (check_scaled_dot_product_attention, at.sdpa_mask_multiplied, "mask_multiplied", "masked key got attention"),
    (check_scaled_dot_product_attention, at.sdpa_mask_filled_with_zero, "mask_multiplied", "masked key got attention"),
    (check_scaled_dot_product_attention, at.sdpa_mask_ignored, "mask_ignored", "masked key got attention"),
    (check_scaled_dot_product_attention, at.sdpa_mask_inverted, "mask_inverted", "masked key got attention"),
    (check_scaled_dot_product_attention, at.sdpa_mask_added, "mask_added", "masked key got attention"),
    (check_scaled_dot_product_attention, at.sdpa_swapped_outputs, "swapped_outputs", "in the wrong order"),
    (check_scaled_dot_product_attention, at.sdpa_only_out, "weights_not_returned", "returned one tensor"),
    (check_scaled_dot_product_attention, at.sdpa_scales_q_in_place, "input_modified_in_place", "changed its input q"),
    (check_scaled_dot_product_attention, at.sdpa_softmax_in_float64, "dtype_changed", "float32 inputs gave a torch.float64"),
    # ---- scaled_dot_product_attention: robustness
    (check_scaled_dot_product_attention, None, None, "expected the function scaled_dot_product_attention, got None"),
    (check_scaled_dot_product_attention, at.SelfAttentionMaskIgnored, None, "got a class"),
    (check_scaled_dot_product_attention, at.sdpa_stub, "not_implemented", "raised NotImplementedError"),
    (check_scaled_dot_product_attention, at.sdpa_mask_assumed_2d, None, "raised RuntimeError"),
    (check_scaled_dot_product_attention, at.sdpa_nan, None, "contains NaN or inf"),
    (check_scaled_dot_product_attention, at.sdpa_float32, "dtype_changed", "has dtype torch.float32"),
    (check_scaled_dot_product_attention, at.sdpa_no_return, "missing_return", "returned None"),

    # ---- SelfAttention: named mistakes
    (check_self_attention, at.SelfAttentionValuesNotProjected, "values_not_projected", "not equal to the reference"),
    (check_self_attention, at.SelfAttentionQKSwapped, "q_k_swapped", "not equal to the reference"),
    (check_self_attention, at.SelfAttentionNoScaling, "no_scaling", "not equal to the reference"),
    (check_self_attention, at.SelfAttentionMaskIgnored, "mask_ignored", "masked key got attention"),
    (check_self_attention, at.SelfAttentionAlwaysCausal, "always_causal", "not equal to the reference"),
    (check_self_attention, at.SelfAttentionSharedProjection, "shared_projection", "wrong number of parameters"),
    (check_self_attention, at.SelfAttentionExtraOutputLayer, "extra_output_projection", "wrong number of parameters"),
    (check_self_attention, at.SelfAttentionLowercaseNames, "attribute_name", "has no attribute W_Q (it has w_q)"),
    (check_self_attention, at.SelfAttentionNoBias, "linear_without_bias", "W_Q has no bias"),
    (check_self_attention, at.SelfAttentionDetached, "no_gradient", "the output carries no gradient"),
    (check_self_attention, at.SelfAttentionValuesDetached, "no_gradient", "no gradient reaches W_V"),
    # ---- SelfAttention: robustness
    (check_self_attention, None, None, "expected the class SelfAttention (a subclass of nn.Module), got None"),
    (check_self_attention, at.self_attention_function, None, "got function"),
    (check_self_attention, at.self_attention_instance, None, "got an instance of"),
    (check_self_attention, at.SelfAttentionNotAModule, None, "(a subclass of nn.Module)"),
    (check_self_attention, at.SelfAttentionNoMaskParameter, None, "raised TypeError when forward was called"),
    (check_self_attention, at.SelfAttentionStub, "not_implemented", "raised NotImplementedError when SelfAttention("),
    (check_self_attention, at.SelfAttentionForwardStub, "not_implemented", "raised NotImplementedError when forward"),

    # ---- split_heads
    (check_split_heads, mh.split_view_no_transpose, "split_without_transpose", "not equal to the reference"),
    (check_split_heads, mh.split_forgets_transpose, "split_not_transposed", "has the wrong shape"),
    (check_split_heads, mh.split_d_k_before_heads, "split_interleaved", "not equal to the reference"),
    (check_split_heads, mh.split_float_d_k, "float_d_k", "raised TypeError"),
    (check_split_heads, mh.split_detached, "no_gradient", "carries no gradient"),
    (check_split_heads, mh.split_wrong_transpose, None, "has the wrong shape"),
    (check_split_heads, None, None, "expected the function split_heads, got None"),
    (check_split_heads, mh.split_stub, "not_implemented", "raised NotImplementedError"),
    (check_split_heads, mh.split_no_return, "missing_return", "is not a tensor"),
    (check_split_heads, mh.split_numpy, "numpy_output", "is not a tensor"),

    # ---- merge_heads
    (check_merge_heads, mh.merge_without_transpose, "merge_without_transpose", "not equal to the reference"),
    (check_merge_heads, mh.merge_view_after_transpose, "view_after_transpose", "raised RuntimeError"),
    (check_merge_heads, mh.merge_interleaved, "merge_interleaved", "not equal to the reference"),
    (check_merge_heads, mh.merge_wrong_transpose, None, "not equal to the reference"),
    (check_merge_heads, mh.merge_takes_num_heads, None, "raised TypeError"),
    (check_merge_heads, None, None, "expected the function merge_heads, got None"),
    (check_merge_heads, mh.merge_stub, "not_implemented", "raised NotImplementedError"),
    (check_merge_heads, mh.merge_float32, "dtype_changed", "has dtype torch.float32"),

    # ---- MultiHeadSelfAttention: named mistakes
    (check_multi_head_attention, mh.MHANoScaling, "no_scaling", "not equal to the reference"),
    (check_multi_head_attention, mh.MHAScaleBySqrtDModel, "scale_by_sqrt_d_model", "not equal to the reference"),
    (check_multi_head_attention, mh.MHAScaleByDK, "scale_by_d_k", "not equal to the reference"),
    (check_multi_head_attention, mh.MHASoftmaxOverQueries, "softmax_over_queries", "does not sum to 1"),
    (check_multi_head_attention, mh.MHASoftmaxOverHeads, "softmax_over_heads", "does not sum to 1"),
    (check_multi_head_attention, mh.MHASplitWithoutTranspose, "split_without_transpose", "not equal to the reference"),
    (check_multi_head_attention, mh.MHAMergeWithoutTranspose, "merge_without_transpose", "not equal to the reference"),
    (check_multi_head_attention, mh.MHAMergeViewAfterTranspose, "view_after_transpose", "raised RuntimeError"),
    (check_multi_head_attention, mh.MHAMissingWO, "missing_projection", "has no attribute W_O"),
    (check_multi_head_attention, mh.MHAWONotApplied, "w_o_not_applied", "not equal to the reference"),
    (check_multi_head_attention, mh.MHASharedProjection, "shared_projection", "wrong number of parameters"),
    (check_multi_head_attention, mh.MHAWeightsAveraged, "weights_averaged_over_heads", "weights have shape (B, T, T)"),
    (check_multi_head_attention, mh.MHAMaskIgnored, "mask_ignored", "masked key got attention"),
    (check_multi_head_attention, mh.MHANoDivisibilityCheck, "no_divisibility_check", "created without complaint"),
    (check_multi_head_attention, mh.MHAAssertInsteadOfValueError, "no_divisibility_check", "raised AssertionError, not ValueError"),
    (check_multi_head_attention, mh.MHAFloatDK, "float_d_k", "raised TypeError"),
    (check_multi_head_attention, mh.MHADetached, "no_gradient", "the output carries no gradient"),
    # ---- MultiHeadSelfAttention: robustness
    (check_multi_head_attention, None, None, "expected the class MultiHeadSelfAttention (a subclass of nn.Module), got None"),
    (check_multi_head_attention, mh.multi_head_attention_function, None, "got function"),
    (check_multi_head_attention, mh.multi_head_attention_instance, None, "got an instance of"),
    (check_multi_head_attention, mh.MHAStub, "not_implemented", "raised NotImplementedError when MultiHeadSelfAttention("),
    (check_multi_head_attention, mh.MHAForwardStub, "not_implemented", "raised NotImplementedError when forward"),

    # ---- causal_mask: named mistakes
    (check_causal_mask, mk.causal_mask_upper, "causal_mask_upper", "the mask is wrong"),
    (check_causal_mask, mk.causal_mask_diagonal_masked, "diagonal_masked", "the mask is wrong"),
    (check_causal_mask, mk.causal_mask_inverted, "mask_inverted", "the mask is wrong"),
    (check_causal_mask, mk.causal_mask_peeks_ahead, "mask_peeks_ahead", "the mask is wrong"),
    (check_causal_mask, mk.causal_mask_all_true, "mask_all_true", "the mask is wrong"),
    (check_causal_mask, mk.causal_mask_float, "mask_not_bool", "has dtype torch.float32"),
    (check_causal_mask, mk.causal_mask_int, "mask_not_bool", "has dtype torch.int64"),
    (check_causal_mask, mk.causal_mask_additive, "additive_float_mask", "has dtype torch.float32"),
    # ---- causal_mask: robustness
    (check_causal_mask, None, None, "expected the function causal_mask, got None"),
    (check_causal_mask, mk.CausalMask, None, "expected the function causal_mask, got a class"),
    (check_causal_mask, mk.causal_mask_stub, "not_implemented", "raised NotImplementedError"),
    (check_causal_mask, mk.causal_mask_wrong_arg, None, "raised TypeError"),
    (check_causal_mask, mk.causal_mask_wrong_shape, None, "has the wrong shape"),
    (check_causal_mask, mk.causal_mask_numpy, "numpy_output", "is not a tensor"),
    (check_causal_mask, mk.causal_mask_no_return, "missing_return", "is not a tensor"),
]

# (check name, mutant name) -> what the check does wrong. Reported to the checks' owner; see the report.
_DTYPE = ("ctx.tensor fails a float32 output for float64 inputs without naming dtype_changed "
          "(ctx.dtype_follows names it for the opposite direction)")
CHECK_BUGS: dict[tuple[str, str], str] = {}  # (check, mutant) -> why the check gets it wrong (none known)


@pytest.fixture(scope="module", autouse=True)
def single_thread():
    """The checks work on tiny tensors; on a busy 2-core machine two intra-op threads make each check
    10-40x slower (OpenMP synchronisation), so this module runs them on one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _name(obj) -> str:
    if obj is None:
        return "None"
    if isinstance(obj, type) or callable(obj) and hasattr(obj, "__name__"):
        return obj.__name__
    return f"{type(obj).__name__}_instance"


def _params():
    for check, mutant, mistake, phrase in ROWS:
        key = (check.__name__, _name(mutant))
        marks = [pytest.mark.xfail(strict=True, reason=CHECK_BUGS[key])] if key in CHECK_BUGS else []
        yield pytest.param(check, mutant, mistake, phrase, id=f"{key[0]}-{key[1]}", marks=marks)


def run_check(check, obj, seed: int = 0) -> CheckFailure:
    """Run ``check(obj)`` and return the CheckFailure it raises; fail the test on a pass or a crash."""
    try:
        check(obj, seed=seed)
    except CheckFailure as exc:
        return exc
    except BaseException as exc:  # noqa: BLE001 - any other exception is a crash inside the checker
        pytest.fail(f"{check.__name__} crashed with {type(exc).__name__}: {exc} (expected CheckFailure)")
    pytest.fail(f"{check.__name__} passed the wrong implementation {_name(obj)}")


def test_table_is_well_formed():
    names = [(c.__name__, _name(m)) for c, m, _, _ in ROWS]
    assert len(names) == len(set(names)), "duplicate rows"
    assert set(CHECK_BUGS) <= set(names), "a CHECK_BUGS entry names no row"
    for _, _, mistake, phrase in ROWS:
        assert mistake is None or mistake in MISTAKES, f"{mistake!r} is not a registered mistake"
        assert phrase


def test_at_least_three_wrong_implementations_per_check():
    per_check = {}
    for check, mutant, _, _ in ROWS:
        if mutant is not None:
            per_check.setdefault(check.__name__, set()).add(_name(mutant))
    assert len(per_check) == 8
    assert all(len(m) >= 3 for m in per_check.values()), {c: len(m) for c, m in per_check.items()}


@pytest.mark.parametrize("check, mutant, mistake, phrase", list(_params()))
def test_check_fails_mutant_with_exact_diagnosis(check, mutant, mistake, phrase):
    exc = run_check(check, mutant)
    msg = str(exc)
    assert exc.mistake == mistake, f"mistake {exc.mistake!r}, expected {mistake!r}\n{msg}"
    assert exc.check == check.__name__
    assert msg.splitlines()[0] == f"{check.__name__} failed: {exc.problem}"
    assert phrase in exc.problem, f"{phrase!r} not in the problem {exc.problem!r}"
    if mistake is not None:
        assert f"likely mistake: {MISTAKES[mistake]}" in msg, msg
    else:
        assert "likely mistake:" not in msg, msg


# (check name, mutant name, seed) -> why the check cannot tell this mistake apart at that seed's sizes.
SEED_BUGS: dict[tuple[str, str, int], str] = {}  # (check, mutant, seed) -> why (none known)
SEEDS = [1, 2]  # seeds 3 and 4 repeat the multi-head sizes of 1 and 2


def _seed_params():
    for p in _params():
        check, mutant, mistake, _ = p.values
        if mistake is None or p.marks:
            continue
        for seed in SEEDS:
            key = (check.__name__, _name(mutant), seed)
            marks = [pytest.mark.xfail(strict=True, reason=SEED_BUGS[key])] if key in SEED_BUGS else []
            yield pytest.param(*p.values, seed, id=f"{p.id}-seed{seed}", marks=marks)


@pytest.mark.parametrize("check, mutant, mistake, phrase, seed", list(_seed_params()))
def test_diagnosis_does_not_depend_on_the_seed(check, mutant, mistake, phrase, seed):
    """Other seeds give other sizes; the named mistake must not change."""
    exc = run_check(check, mutant, seed=seed)
    assert exc.mistake == mistake, f"seed {seed}: mistake {exc.mistake!r}, expected {mistake!r}\n{exc}"
