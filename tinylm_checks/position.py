"""Stage 04 checks: positions. (Skeleton: being written.)"""
from __future__ import annotations

from ._core import Ctx, check

__all__ = ["check_sinusoidal_position_encoding", "check_positional_encoding", "check_learned_positional_embedding", "check_apply_rope"]


@check
def check_sinusoidal_position_encoding(ctx: Ctx, obj) -> str:
    raise NotImplementedError("check_sinusoidal_position_encoding is being written")


@check
def check_positional_encoding(ctx: Ctx, obj) -> str:
    raise NotImplementedError("check_positional_encoding is being written")


@check
def check_learned_positional_embedding(ctx: Ctx, obj) -> str:
    raise NotImplementedError("check_learned_positional_embedding is being written")


@check
def check_apply_rope(ctx: Ctx, obj) -> str:
    raise NotImplementedError("check_apply_rope is being written")
