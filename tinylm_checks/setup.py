"""Stage 00 checks: the environment, and a warm-up exercise (softmax) that shows how checks work."""
from __future__ import annotations

import os
import platform
import sys

import torch

from ._core import Ctx, CheckFailure, check, compare, fmt_shape, known_mistake, where

__all__ = ["check_environment", "check_softmax"]

EXPECTED_TORCH = "2.13.0"

SOFTMAX_WRONG_DIM = known_mistake("softmax_wrong_dim", "the softmax normalises over the wrong dimension",
                                  "normalise over the last dimension: .sum(dim=-1, keepdim=True)")
SOFTMAX_UNSTABLE = known_mistake("softmax_unstable",
                                 "exp() is taken of the raw scores: it overflows to inf for large ones (inf / inf = NaN) "
                                 "and underflows to 0 for very negative ones (0 / 0 = NaN)",
                                 "subtract the row maximum first: x - x.max(dim=-1, keepdim=True).values "
                                 "(the softmax does not change)")
SOFTMAX_WRONG_SHIFT = known_mistake("softmax_wrong_shift",
                                    "the scores are shifted (or clamped), but not by each row's own maximum: some rows "
                                    "still overflow (inf / inf) or underflow to all zeros (0 / 0)",
                                    "subtract each row's own maximum, x.max(dim=-1, keepdim=True).values: then the "
                                    "largest exp() of every row is exactly 1, so nothing overflows and the sum is at least 1")
SOFTMAX_NOT_NORMALISED = known_mistake("softmax_not_normalised", "exp(x) is not divided by its sum",
                                       "divide exp(x) by its sum over the last dimension")
SOFTMAX_GLOBAL_SUM = known_mistake("softmax_global_sum",
                                   "exp(x) is divided by the sum over the whole tensor, not over each row",
                                   "sum over the last dimension only: .sum(dim=-1, keepdim=True)")
LOG_SOFTMAX = known_mistake("log_softmax", "this is the log-softmax (all values <= 0), not the softmax",
                            "return exp(x - max) / sum(exp(x - max)), without taking a log")


def environment_report() -> dict[str, str]:
    """What the course runs on: Python, PyTorch, CPU threads."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__.split("+")[0],
        "cpu threads (torch)": str(torch.get_num_threads()),
        "cpu cores (os)": str(os.cpu_count()),
        "executable": sys.executable,
    }


def check_environment() -> None:
    """Print the environment and fail with a clear message if PyTorch is not the course's version."""
    report = environment_report()
    for k, v in report.items():
        print(f"{k:>20}: {v}")
    if report["torch"] != EXPECTED_TORCH:
        raise CheckFailure("check_environment", f"PyTorch {report['torch']} is installed, the course pins {EXPECTED_TORCH}",
                           hint="start JupyterLab with `make lab` from the course folder (it uses the course's .venv)")
    print(f"✔ check_environment passed: PyTorch {EXPECTED_TORCH} on {report['cpu threads (torch)']} CPU threads")


@check
def check_softmax(ctx: Ctx, softmax) -> str:
    """Check ``softmax(x)`` over the last dimension: equal to ``torch.softmax(x, dim=-1)``, stable for big inputs."""
    fn = ctx.function(softmax, "softmax")
    B, T, V = (2, 3, 5) if ctx.seed == 0 else (3, 4, 6)
    small = ctx.randn(B, T, V)
    # exp(1000) overflows in float64, so a naive softmax returns NaN. Rows sit at different offsets (so
    # subtracting the maximum of the whole tensor fails too) and one row spans -1000 .. 1000 (so
    # subtracting the row minimum fails).
    offsets = torch.tensor([1000.0, -1000.0, 0.0], dtype=torch.float64).repeat(B * T)[:B * T].view(B, T, 1)
    big = small * 5 + offsets
    big[0, 0] = torch.linspace(-1000, 1000, V, dtype=torch.float64)
    for x, label in ((small, "random scores"), (big, "large scores (rows around 1000, -1000 and 0)")):
        tried = f"x {fmt_shape(x.shape)}, {label}, float64, seed {ctx.seed}"
        got = ctx.call(fn, x, what=f"called with {tried}", names=("x",))
        if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(x.shape) and x is big \
                and not bool(torch.isfinite(got).all()):
            bad = (~torch.isfinite(got)).nonzero()[0].tolist()
            e = torch.exp(x)
            naive = ~torch.isfinite(e / e.sum(dim=-1, keepdim=True))  # where exp without a shift gives NaN/inf
            at = where(bad, ("batch", "row", "entry"))
            ctx.fail("the softmax of large scores contains NaN or inf", tried=tried,
                     expected=f"finite values in [0, 1], e.g. {torch.softmax(x, -1)[tuple(bad)].item():.4f} at {at}",
                     got=f"{got[tuple(bad)].item()} at {at}",
                     mistake=SOFTMAX_UNSTABLE if bool((naive == ~torch.isfinite(got)).all()) else SOFTMAX_WRONG_SHIFT)
        got = ctx.tensor(got, "the softmax", tuple(x.shape), hint="softmax keeps the shape of its input", tried=tried)
        e = x.exp()
        compare(ctx, got, torch.softmax(x, dim=-1), "the softmax", tried,
                [(SOFTMAX_WRONG_DIM, torch.softmax(x, dim=0)), (SOFTMAX_WRONG_DIM, torch.softmax(x, dim=1)),
                 (SOFTMAX_NOT_NORMALISED, e), (SOFTMAX_GLOBAL_SUM, e / e.sum()),
                 (LOG_SOFTMAX, torch.log_softmax(x, dim=-1))], axes=("batch", "row", "entry"),
                fallback="compare with the formula exp(x - max) / sum(exp(x - max)), computed over the last "
                         "dimension of each row: print both for the tried: input")
    ctx.differentiable(fn, small, what=f"called with x {fmt_shape(small.shape)}", names=("x",))
    ctx.dtype_follows(fn, small, what=f"called with x {fmt_shape(small.shape)}", names=("x",))
    return "equal to torch.softmax(x, dim=-1), each row sums to 1, stable for scores around ±1000"
