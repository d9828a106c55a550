"""Stage 05 checks: the feed-forward network. (Skeleton: being written.)"""
from __future__ import annotations

from ._core import Ctx, check

__all__ = ["check_feed_forward", "check_swiglu"]


@check
def check_feed_forward(ctx: Ctx, obj) -> str:
    raise NotImplementedError("check_feed_forward is being written")


@check
def check_swiglu(ctx: Ctx, obj) -> str:
    raise NotImplementedError("check_swiglu is being written")
