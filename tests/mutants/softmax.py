"""Wrong ``softmax(x)`` implementations (the stage-00 warm-up, ``check_softmax``)."""
import numpy as np
import torch


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
