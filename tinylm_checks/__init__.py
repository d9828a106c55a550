"""Checks for the TinyLM course: one ``check_<exercise>`` per exercise.

Each check takes the learner's function or class, runs it on its own seeded inputs, compares it with
the reference implementation (``tinylm_solutions``) and either prints one line naming what it verified
or raises :class:`CheckFailure` saying what was tried, what was expected, what came back and, for a
known mistake, which one it is and what to look at.
"""
from ._core import ATOL, MISTAKES, CheckFailure
from .attention import check_attention_scores, check_scaled_dot_product_attention, check_self_attention
from .masks import check_causal_mask
from .multihead import check_merge_heads, check_multi_head_attention, check_split_heads
from .plots import plot_attention
from .setup import check_environment, check_softmax

__all__ = [
    "ATOL", "MISTAKES", "CheckFailure", "plot_attention",
    "check_environment", "check_softmax",
    "check_attention_scores", "check_scaled_dot_product_attention", "check_self_attention",
    "check_split_heads", "check_merge_heads", "check_multi_head_attention",
    "check_causal_mask",
]
