"""Stage 00 check: a warm-up exercise (softmax) that shows how checks work (the environment's check is in
``environment``)."""
from __future__ import annotations

import torch

from ._core import Ctx, check, compare, fmt_shape, where
from ._text import MISTAKE, say

__all__ = ["check_softmax"]

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
    for x, label in ((small, say("softmax.random")), (big, say("softmax.large"))):
        tried = say("softmax.tried", shape=fmt_shape(x.shape), label=label, seed=ctx.seed)
        got = ctx.call(fn, x, what=say("core.called_with", tried=tried), names=("x",))
        if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(x.shape) and x is big \
                and not bool(torch.isfinite(got).all()):
            bad = (~torch.isfinite(got)).nonzero()[0].tolist()
            e = torch.exp(x)
            naive = ~torch.isfinite(e / e.sum(dim=-1, keepdim=True))  # where exp without a shift gives NaN/inf
            at = where(bad, ("batch", "row", "entry"))
            ctx.fail("softmax.not_finite", tried=tried, value=torch.softmax(x, -1)[tuple(bad)].item(), at=at,
                     got_value=got[tuple(bad)].item(),
                     mistake=MISTAKE.softmax_unstable if bool((naive == ~torch.isfinite(got)).all()) else MISTAKE.softmax_wrong_shift)
        got = ctx.tensor(got, say("softmax.what"), tuple(x.shape), hint=say("softmax.shape_hint"), tried=tried)
        e = x.exp()
        compare(ctx, got, torch.softmax(x, dim=-1), say("softmax.what"), tried,
                [(MISTAKE.softmax_wrong_dim, torch.softmax(x, dim=0)), (MISTAKE.softmax_wrong_dim, torch.softmax(x, dim=1)),
                 (MISTAKE.softmax_not_normalised, e), (MISTAKE.softmax_global_sum, e / e.sum()),
                 (MISTAKE.log_softmax, torch.log_softmax(x, dim=-1))], axes=("batch", "row", "entry"),
                fallback=say("softmax.fallback"))
    what = say("core.called_with", tried=say("softmax.tried_x", shape=fmt_shape(small.shape)))
    ctx.differentiable(fn, small, what=what, names=("x",))
    ctx.dtype_follows(fn, small, what=what, names=("x",))
    return say("softmax.passed")
