"""Stage 06 checks: LayerNorm. (Skeleton: being written.)"""
from __future__ import annotations

from ._core import Ctx, check

__all__ = ["check_layer_norm"]


@check
def check_layer_norm(ctx: Ctx, obj) -> str:
    raise NotImplementedError("check_layer_norm is being written")
