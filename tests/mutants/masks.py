"""Wrong ``causal_mask(T)`` implementations (stage 03)."""
import numpy as np
import torch

from tinylm_checks import check_causal_mask
from tinylm_solutions import masks as ref


def causal_mask_upper(T):
    """Uses torch.triu (upper triangle): a position sees the future, not the past."""
    return torch.triu(torch.ones(T, T, dtype=torch.bool))


def causal_mask_diagonal_masked(T):
    """Uses tril(diagonal=-1): a position may not attend to itself."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)


def causal_mask_inverted(T):
    """Returns the future (triu(diagonal=1)), True = masked, the opposite of PyTorch's convention."""
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def causal_mask_peeks_ahead(T):
    """Uses tril(diagonal=1): position t may also see position t + 1."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def causal_mask_all_true(T):
    """Forgets the tril: every position may see every other."""
    return torch.ones(T, T, dtype=torch.bool)


def causal_mask_float(T):
    """Forgets dtype=torch.bool: a float 0/1 lower triangle."""
    return torch.tril(torch.ones(T, T))


def causal_mask_int(T):
    """Builds the triangle from an int tensor (torch.ones(..., dtype=torch.long))."""
    return torch.tril(torch.ones(T, T, dtype=torch.long))


def causal_mask_additive(T):
    """Returns an additive float mask: 0 where allowed, -inf above the diagonal."""
    return torch.zeros(T, T).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))


def causal_mask_wrong_shape(T):
    """Returns a (1, T, T) mask with an extra batch dimension."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool))[None]


def causal_mask_numpy(T):
    """Builds the mask with numpy (np.tril) and returns a numpy array."""
    return np.tril(np.ones((T, T), dtype=bool))


def causal_mask_no_return(T):
    """Builds the mask and forgets `return`."""
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))  # noqa: F841


def causal_mask_stub(T):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


def causal_mask_wrong_arg(T):
    """Calls torch.tril with a keyword it does not have (raises TypeError)."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool), lower=True)


class CausalMask(torch.nn.Module):
    """A module class passed where the function causal_mask is expected."""

    def forward(self, T):
        return torch.tril(torch.ones(T, T, dtype=torch.bool))


_TABLE = torch.ones(16, 16, dtype=torch.bool).tril()


def causal_mask_cached_table(T):
    """Slices a precomputed 16 x 16 table (nanoGPT's block_size), wrong for T > 16."""
    return _TABLE[:T, :T]


# --------------------------------------------------------------------------- what the tests feed the checks
# (check, mutant, expected mistake id or None, key phrase of the problem): see tests/test_checks_mutants.py
ROWS = [
    (check_causal_mask, causal_mask_cached_table, None, "wrong shape"),
    # ---- causal_mask: named mistakes
    (check_causal_mask, causal_mask_upper, "causal_mask_upper", "the mask is wrong"),
    (check_causal_mask, causal_mask_diagonal_masked, "diagonal_masked", "the mask is wrong"),
    (check_causal_mask, causal_mask_inverted, "mask_inverted", "the mask is wrong"),
    (check_causal_mask, causal_mask_peeks_ahead, "mask_peeks_ahead", "the mask is wrong"),
    (check_causal_mask, causal_mask_all_true, "mask_all_true", "the mask is wrong"),
    (check_causal_mask, causal_mask_float, "mask_not_bool", "has dtype torch.float32"),
    (check_causal_mask, causal_mask_int, "mask_not_bool", "has dtype torch.int64"),
    (check_causal_mask, causal_mask_additive, "additive_float_mask", "has dtype torch.float32"),
    # ---- causal_mask: robustness
    (check_causal_mask, None, None, "expected the function causal_mask, got None"),
    (check_causal_mask, CausalMask, None, "expected the function causal_mask, got a class"),
    (check_causal_mask, causal_mask_stub, "not_implemented", "raised NotImplementedError"),
    (check_causal_mask, causal_mask_wrong_arg, None, "raised TypeError"),
    (check_causal_mask, causal_mask_wrong_shape, None, "has the wrong shape"),
    (check_causal_mask, causal_mask_numpy, "numpy_output", "is not a tensor"),
    (check_causal_mask, causal_mask_no_return, "missing_return", "is not a tensor"),
]
REFERENCE = {check_causal_mask: ref.causal_mask}  # check -> the object that must pass it
LATE_FAILURE = {check_causal_mask: causal_mask_upper}  # fails late, after the check did most of its work
STUB = {check_causal_mask: causal_mask_stub}  # check -> the untouched learner stub
