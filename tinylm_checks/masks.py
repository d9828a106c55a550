"""Stage 03 checks: the causal mask."""
from __future__ import annotations

import torch

from tinylm_solutions.masks import causal_mask as ref_causal_mask

from ._core import Ctx, check, fmt_shape, known_mistake
from .attention import MASK_INVERTED

MASK_UPPER = known_mistake("causal_mask_upper",
                           "the mask is upper-triangular: position t may see the future and not the past")
DIAGONAL_MASKED = known_mistake("diagonal_masked",
                                "the diagonal is masked: a position must be allowed to attend to itself")
MASK_NOT_BOOL = known_mistake("mask_not_bool", "the mask is not a bool tensor")
PEEKS_AHEAD = known_mistake("mask_peeks_ahead", "the mask lets position t see position t + 1 (tril with diagonal=1)")
NO_MASKING = known_mistake("mask_all_true", "the mask allows every position: nothing is masked")
ADDITIVE_MASK = known_mistake("additive_float_mask",
                              "the mask is an additive float mask (0 / -inf); this course uses bool masks")

HINTS = {
    MASK_UPPER: "use torch.tril (lower triangle): row t (the query) may see columns 0..t (the keys)",
    DIAGONAL_MASKED: "keep the diagonal: torch.tril(torch.ones(T, T, dtype=torch.bool)) with the default diagonal=0",
    MASK_INVERTED: "True on and below the diagonal: torch.tril(...), not its complement",
    MASK_NOT_BOOL: "create it with dtype=torch.bool (or compare: ... == 1)",
    PEEKS_AHEAD: "torch.tril(..., diagonal=0): the diagonal is the last allowed position",
    NO_MASKING: "keep only the lower triangle: torch.tril(torch.ones(T, T, dtype=torch.bool))",
    ADDITIVE_MASK: "return True where attention is allowed: torch.tril(torch.ones(T, T, dtype=torch.bool))",
}


def _diagnose(got: torch.Tensor, T: int) -> str | None:
    tril = torch.ones(T, T, dtype=torch.bool).tril()
    g = got.detach()
    if g.dtype != torch.bool:
        if g.is_floating_point() and bool(torch.isinf(g).any()):
            return ADDITIVE_MASK
        return MASK_NOT_BOOL if bool(((g != 0) == tril).all()) else None
    ones = torch.ones(T, T, dtype=torch.bool)
    for name, cand in ((MASK_UPPER, tril.T), (DIAGONAL_MASKED, tril.tril(-1)), (MASK_INVERTED, ~tril),
                       (PEEKS_AHEAD, ones.tril(1)), (NO_MASKING, ones)):
        if bool((g == cand).all()):
            return name
    return None


@check
def check_causal_mask(ctx: Ctx, causal_mask) -> str:
    """Check ``causal_mask(T) -> bool (T, T)``, True on and below the diagonal, for several T."""
    fn = ctx.function(causal_mask, "causal_mask")
    lengths = (5, 1, 40) if ctx.seed == 0 else (3 + ctx.seed % 5, 1, 33)  # 40 > a 16- or 32-row cached table
    for T in lengths:
        got = ctx.call(fn, T, what=f"called with T={T}")
        expected = ref_causal_mask(T)
        if not isinstance(got, torch.Tensor):
            ctx.tensor(got, "the mask", (T, T), dtype=torch.bool)  # names a missing return or a numpy array
        if tuple(got.shape) != (T, T):
            ctx.fail("the mask has the wrong shape", tried=f"T={T}", expected=fmt_shape((T, T)), got=fmt_shape(got.shape),
                     hint="one row per query position, one column per key position")
        mistake = _diagnose(got, T)
        if got.dtype != torch.bool:
            ctx.fail(f"the mask has dtype {got.dtype}", tried=f"T={T}", expected="torch.bool", got=str(got.dtype),
                     mistake=mistake, hint=HINTS.get(mistake, HINTS[MASK_NOT_BOOL]))
        if not bool((got == expected).all()):
            r = int((got != expected).any(1).nonzero()[0])
            ctx.fail("the mask is wrong", tried=f"T={T}",
                     expected=f"row {r}: {expected[r].int().tolist()} (True = may attend)",
                     got=f"row {r}: {got[r].int().tolist()}", mistake=mistake,
                     hint=HINTS.get(mistake, "row t must be True in columns 0..t and False after"))
    return f"bool (T, T), True on and below the diagonal, for T in {lengths}"
