"""Stage 12 check: ``flops_per_token(config, seq_len)``, the training compute of one token.

The check calls the learner's function on TinyLM configurations of its own (every size different,
``seq_len < max_seq_len``, ``d_ff != 4 D``, one model with untied output weights) and compares the
number with the reference (:mod:`tinylm_solutions.flops`): ``6 N + 6 L T D`` (Kaplan et al. 2020, Table 1),
``N`` every parameter but the position embedding. A wrong number is matched against the known mistakes'
numbers on all three configurations together (a mistake may show on one configuration only, e.g. an
untied lm_head left out).
"""
from __future__ import annotations

import math
import numbers

from ._core import Ctx, check, reference
from ._text import MISTAKE, say

ref = reference("flops")

__all__ = ["check_flops_per_token"]


def _configs(seed: int) -> list[tuple[dict, int]]:
    """(config, seq_len) pairs: all sizes different, seq_len < max_seq_len, d_ff != 4 D, the second model untied."""
    base = [
        (dict(vocab_size=67, max_seq_len=48, d_model=24, num_heads=3, num_layers=3, d_ff=80), 40),
        (dict(vocab_size=53, max_seq_len=40, d_model=16, num_heads=2, num_layers=2, d_ff=56, tie_weights=False), 24),
        (dict(vocab_size=101, max_seq_len=96, d_model=40, num_heads=5, num_layers=5, d_ff=136), 72),
    ]
    k = seed % 3
    return base[k:] + base[:k]


def _parts(config: dict, seq_len: int) -> dict[str, int]:
    """The pieces the known mistakes recombine: N (no position embedding), the token embedding, the
    position embedding, and L T D."""
    V, Lmax, D, L = (config[k] for k in ("vocab_size", "max_seq_len", "d_model", "num_layers"))
    n = (ref.flops_per_token(config, seq_len) - 6 * L * seq_len * D) // 6
    return {"N": n, "tok": V * D, "pos": Lmax * D, "LTD": L * seq_len * D, "TD": seq_len * D,
            "LLD": L * Lmax * D}


def _candidates(config: dict, seq_len: int):
    """(mistake, the number it gives) for one configuration; the same list, in the same order, for every
    configuration, so that a mistake is named only when its numbers match on all of them."""
    p = _parts(config, seq_len)
    n, a = p["N"], p["LTD"]
    untied = not config.get("tie_weights", True)
    return [(MISTAKE.flops_forward_only, 2 * n + 2 * a), (MISTAKE.flops_forward_only, 2 * n + 4 * a), (MISTAKE.flops_forward_only, 2 * n),
            (MISTAKE.flops_no_attention_term, 6 * n), (MISTAKE.flops_position_embedding_counted, 6 * (n + p["pos"]) + 6 * a),
            (MISTAKE.flops_position_embedding_counted, 6 * (n + p["pos"])),
            (MISTAKE.flops_lm_head_left_out, 6 * (n - p["tok"]) + 6 * a), (MISTAKE.flops_max_seq_len_not_seq_len, 6 * n + 6 * p["LLD"]),
            (MISTAKE.flops_attention_not_per_layer, 6 * n + 6 * p["TD"]), (MISTAKE.flops_attention_12, 6 * n + 12 * a),
            (MISTAKE.flops_untied_lm_head_ignored, 6 * (n - p["tok"] * untied) + 6 * a)]


def _same(value: float, expected: float) -> bool:
    return math.isfinite(value) and abs(value - expected) <= 1e-9 * abs(expected)


def _fmt(config: dict) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in config.items()) + "}"


@check
def check_flops_per_token(ctx: Ctx, flops_per_token) -> str:
    """Check ``flops_per_token(config, seq_len) -> number`` on three configurations against ``6 N + 6 L T D``.
    A wrong number is diagnosed from all three configurations' numbers together."""
    fn = ctx.function(flops_per_token, "flops_per_token")
    got, tried = [], []
    for config, seq_len in _configs(ctx.seed):
        tried.append(f"flops_per_token(config={_fmt(config)}, seq_len={seq_len})")
        value = ctx.call(fn, dict(config), seq_len, what=say("core.called_as", tried=tried[-1]))
        if value is None:
            ctx.fail("flops_per_token.none", tried=tried[-1], got=say("core.got_none"), mistake=MISTAKE.missing_return)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            ctx.fail("flops_per_token.not_a_number", tried=tried[-1], got=type(value).__name__, mistake=MISTAKE.flops_not_a_number)
        got.append(value)
    cases = _configs(ctx.seed)
    wrong = [i for i, ((config, seq_len), value) in enumerate(zip(cases, got))
             if not _same(float(value), ref.flops_per_token(config, seq_len))]
    if not wrong:
        return say("flops_per_token.passed")
    per_case = [_candidates(config, seq_len) for config, seq_len in cases]
    mistake = next((per_case[0][k][0] for k in range(len(per_case[0]))
                    if all(_same(float(v), cands[k][1]) for v, cands in zip(got, per_case))), None)
    i = wrong[0]
    config, seq_len = cases[i]
    p, expected = _parts(config, seq_len), ref.flops_per_token(config, seq_len)
    ctx.fail("flops_per_token.wrong", flops=expected, N=p["N"], LTD=p["LTD"], tried=tried[i],
             got=f"{got[i]:,}" if math.isfinite(float(got[i])) else str(got[i]), mistake=mistake)
