"""Stage 07 checks: the Transformer block. (Skeleton: being written.)"""
from __future__ import annotations

from ._core import Ctx, check

__all__ = ["check_transformer_block", "check_block_parameter_counts"]


@check
def check_transformer_block(ctx: Ctx, obj) -> str:
    raise NotImplementedError("check_transformer_block is being written")


@check
def check_block_parameter_counts(ctx: Ctx, obj) -> str:
    raise NotImplementedError("check_block_parameter_counts is being written")
