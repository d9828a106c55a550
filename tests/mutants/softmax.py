"""Wrong ``softmax(x)`` implementations (the stage-00 warm-up, ``check_softmax``)."""
import numpy as np
import torch

from tinylm_checks import check_softmax


def softmax_wrong_dim(x):
    """Normalises over dim=0 (the batch) instead of the last dimension."""
    e = (x - x.max(dim=0, keepdim=True).values).exp()
    return e / e.sum(dim=0, keepdim=True)


def softmax_dim_1(x):
    """Uses torch.softmax(x, dim=1): the middle dimension of a 3-D input, not the last one."""
    return torch.softmax(x, dim=1)


def softmax_unstable(x):
    """Naive exp / sum without subtracting the row maximum: exp(1000) overflows."""
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_not_normalised(x):
    """Returns exp(x) and forgets to divide by the sum."""
    return torch.exp(x)


def softmax_global_sum(x):
    """Divides exp(x) by the sum over the whole tensor instead of each row."""
    e = torch.exp(x)
    return e / e.sum()


def softmax_log(x):
    """Returns the log-softmax, x - logsumexp(x), instead of the softmax."""
    return x - torch.logsumexp(x, dim=-1, keepdim=True)


def softmax_through_numpy(x):
    """Computes in numpy and wraps the result with torch.from_numpy: right values, no gradient."""
    a = x.detach().numpy()
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return torch.from_numpy(e / e.sum(axis=-1, keepdims=True))


def softmax_always_float64(x):
    """Converts to float64 for precision (x.double()), so float32 inputs give a float64 output."""
    x = x.double()
    e = (x - x.max(dim=-1, keepdim=True).values).exp()
    return e / e.sum(dim=-1, keepdim=True)


def softmax_in_place(x):
    """Subtracts the row maximum in place (x -= ...), changing the caller's tensor."""
    x -= x.max(dim=-1, keepdim=True).values
    e = x.exp()
    return e / e.sum(dim=-1, keepdim=True)


def softmax_no_keepdim(x):
    """Sums without keepdim=True, so the division does not broadcast (raises RuntimeError)."""
    e = (x - x.max(dim=-1, keepdim=True).values).exp()
    return e / e.sum(dim=-1)


def softmax_stub(x):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


def softmax_nan(x):
    """Takes torch.log(x) where torch.exp(x) was meant: negative scores give NaN."""
    e = torch.log(x)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_float32(x):
    """Casts to float32 (x.float()) and returns float32 for float64 input."""
    x = x.float()
    e = (x - x.max(dim=-1, keepdim=True).values).exp()
    return e / e.sum(dim=-1, keepdim=True)


def softmax_numpy(x):
    """Computes with numpy and returns a numpy array."""
    a = x.numpy()
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_no_return(x):
    """Computes the result and forgets `return`."""
    e = (x - x.max(dim=-1, keepdim=True).values).exp()
    e / e.sum(dim=-1, keepdim=True)


class Softmax(torch.nn.Module):
    """A class (nn.Module) passed where the function softmax is expected."""

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def softmax_global_max(x):
    """Subtracts the maximum of the whole tensor, not of each row: rows far below it underflow to 0/0."""
    e = torch.exp(x - x.max())
    return e / e.sum(dim=-1, keepdim=True)


def softmax_clamped(x):
    """Clamps the exponent to at most 80 "to avoid overflow": very negative rows still underflow to 0/0."""
    e = torch.exp(x.clamp(max=80))
    return e / e.sum(dim=-1, keepdim=True)


def softmax_row_min(x):
    """Subtracts each row's minimum instead of its maximum: a row spanning -1000..1000 overflows."""
    e = torch.exp(x - x.min(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


# --------------------------------------------------------------------------- what the tests feed the checks
# (check, mutant, expected mistake id or None, key phrase of the problem): see tests/test_checks_mutants.py
ROWS = [
    # ---- softmax: named mistakes
    (check_softmax, softmax_wrong_dim, "softmax_wrong_dim", "not equal to the reference"),
    (check_softmax, softmax_dim_1, "softmax_wrong_dim", "not equal to the reference"),
    (check_softmax, softmax_unstable, "softmax_unstable", "large scores contains NaN or inf"),
    (check_softmax, softmax_not_normalised, "softmax_not_normalised", "not equal to the reference"),
    (check_softmax, softmax_global_sum, "softmax_global_sum", "not equal to the reference"),
    (check_softmax, softmax_log, "log_softmax", "not equal to the reference"),
    (check_softmax, softmax_in_place, "input_modified_in_place", "changed its input x in place"),
    (check_softmax, softmax_through_numpy, "no_gradient", "carries no gradient"),
    (check_softmax, softmax_always_float64, "dtype_changed", "float32 inputs gave a torch.float64 output"),
    # ---- softmax: robustness
    (check_softmax, None, None, "expected the function softmax, got None"),
    (check_softmax, Softmax, None, "expected the function softmax, got a class"),
    (check_softmax, softmax_stub, "not_implemented", "raised NotImplementedError"),
    (check_softmax, softmax_no_keepdim, None, "raised RuntimeError"),
    (check_softmax, softmax_nan, None, "contains NaN or inf"),
    (check_softmax, softmax_float32, "dtype_changed", "has dtype torch.float32"),
    (check_softmax, softmax_numpy, "numpy_output", "is not a tensor"),
    (check_softmax, softmax_no_return, "missing_return", "is not a tensor"),
    # ---- softmax: shifted, but not by the row maximum (the message must not blame overflow alone)
    (check_softmax, softmax_global_max, "softmax_wrong_shift", "large scores contains NaN or inf"),
    (check_softmax, softmax_clamped, "softmax_wrong_shift", "large scores contains NaN or inf"),
    (check_softmax, softmax_row_min, "softmax_wrong_shift", "large scores contains NaN or inf"),
]
LATE_FAILURE = {check_softmax: softmax_unstable}  # fails late, after the check did most of its work
STUB = {check_softmax: softmax_stub}  # check -> the untouched learner stub
