"""Stage 04 checks: the sinusoidal table, ``PositionalEncoding``, learned positions and (bonus) RoPE.

Where a table or a rotation is wrong, the checks read the frequencies back from what the learner's code
returns (the angle of each (sin, cos) pair at position 1, or how far position 1 rotates a pair) and say
what is off as a *kind*: the layout, the base, the exponent's scale, sign or denominator, an integer
division, positions counted from 1. A wrong base and a wrong denominator look alike at one size; the
checks read the frequencies at a second size (another d_model or d_k) to tell them apart: a wrong
constant gives the same error whatever the width, a wrong denominator does not follow it. The formulas
are those of :mod:`tinylm_solutions.position` (Vaswani et al. 2017, §3.5; RoFormer, Su et al. 2021, §3.4).
"""
from __future__ import annotations

import functools
import math

import torch
from torch import nn

from ._core import (CheckFailure, Ctx, check, close, compare, diagnose, fmt_shape, fmt_values,
                    max_abs_diff, not_equal, reference, where, within)
from ._modules import count_params, randomise
from ._text import MISTAKE, hints, say

ref = reference("position")

__all__ = ["check_sinusoidal_position_encoding", "check_positional_encoding", "check_learned_positional_embedding",
           "check_apply_rope"]

F64 = torch.float64
BASE = 10000.0
TABLE_ATOL = 1e-5
"""Tolerance for a table built in float32 (the default dtype): float32 rounding of angles up to ~30 rad."""

# ---- the sinusoidal table


# ---- PositionalEncoding and learned positions


# ---- RoPE (bonus)


TABLE_AXES = ("position", "feature")
X_AXES = ("batch", "position", "feature")
ROPE_AXES = {3: ("batch", "position", "feature"), 4: ("batch", "head", "position", "feature")}


# --------------------------------------------------------------------------- shared helpers

def _and(items) -> str:
    """"14 and 20": the items joined by the table's "and"."""
    return functools.reduce(lambda first, second: say("core.and", first=first, last=second), items)


def _wrap(a: torch.Tensor) -> torch.Tensor:
    """Angles wrapped to (-pi, pi]: frequencies read from integer positions are only known modulo 2 pi."""
    return torch.atan2(torch.sin(a), torch.cos(a))


def _expected_frequencies(d: int) -> torch.Tensor:
    return ref.rope_frequencies(d, BASE, dtype=F64)  # (d/2,): 10000^(-2i/d), the table's and RoPE's


def _geometric_ratio(w: torch.Tensor) -> float | None:
    """The common ratio r of positive frequencies ``w`` (d/2,) with w_i = w_0 r^i, or None when they are not
    geometric. Frequencies that underflowed (|w| <= 1e-30, in a float32 table) are left out where they end the row."""
    big = w.abs() > 1e-30
    n = int(big.sum())
    if n < 3 or not bool(big[:n].all()) or not bool((w[:n] > 0).all()):
        return None
    r = w[1:n] / w[:n - 1]
    if float(r.max() - r.min()) > 1e-3 * float(r.mean()):
        return None
    return float(r.mean())


def _frequency_kind(w: torch.Tensor, d: int, negated: str | None, dname: str = "D", sizes: dict | None = None,
                    more=None) -> tuple[str, str]:
    """Name what is off in per-pair frequencies ``w`` (d/2,), read back from a table or a rotation.

    Returns (mistake, what the frequencies are, in words). ``negated`` is the mistake to name when every
    frequency has the wrong sign (for RoPE, a rotation in the wrong direction). When the frequencies are
    10000^(-2i/N) with N != d, one reading cannot tell a wrong constant from a wrong denominator N: ``more()``
    gives further readings ``[(w, d, sizes), ...]`` taken at other sizes, and ``sizes`` names the other sizes
    the learner's code could have used in place of d (e.g. {"max_len": 24}); see :func:`_exponent_kind`.
    """
    w = w.double()
    expected = _expected_frequencies(d)
    r_exp = BASE ** (-2 / d)
    said = say("position.frequencies.said", values=fmt_values(w, kind="g"))
    tol = 1e-4
    if close(w, -expected, tol):
        return negated or MISTAKE.wrong_frequencies, say("position.frequencies.wrong_sign", said=said)
    if within(_wrap(w - 1 / expected), torch.zeros_like(w), 2e-3):  # float32 angles near 10^3 round to ~1e-4
        return MISTAKE.exponent_sign, say("position.frequencies.growing_mod_2pi", said=said, expected_ratio=r_exp)
    if bool(((w - w[0]).abs() <= tol).all()):
        if abs(float(w[0]) - 1) <= tol:
            return MISTAKE.integer_division, say("position.frequencies.all_one", said=said)
        return MISTAKE.wrong_frequencies, say("position.frequencies.all_same", said=said)
    ratio = _geometric_ratio(w)
    if ratio is not None:
        if abs(float(w[0]) - 1) > tol:
            return MISTAKE.wrong_frequencies, say("position.frequencies.first_off", said=said, ratio=ratio,
                                          expected_ratio=r_exp, first=float(w[0]))
        if ratio > 1:
            return MISTAKE.exponent_sign, say("position.frequencies.growing", said=said, ratio=ratio)
        readings = [(_denominator(ratio), d, sizes or {})]
        for w_k, d_k, sizes_k in (more() if more is not None else []):
            r_k = _geometric_ratio(w_k.double())
            if r_k is not None and 0 < r_k < 1 and abs(float(w_k[0]) - 1) <= tol:
                readings.append((_denominator(r_k), d_k, sizes_k))
        return _exponent_kind(say("position.frequencies.ratio", said=said, ratio=ratio, expected_ratio=r_exp),
                              readings, dname)
    if bool(((w - w.round()).abs() <= tol).all()):
        return MISTAKE.integer_division, say("position.frequencies.whole_numbers", said=said)
    return MISTAKE.wrong_frequencies, said


def _denominator(ratio: float) -> float:
    """The N of frequencies 10000^(-2i/N) that fall by ``ratio`` from pair to pair (N = d when right)."""
    return -2 * math.log(BASE) / math.log(ratio)


def _exponent_kind(said: str, readings, dname: str) -> tuple[str, str]:
    """Name the kind of frequencies 10000^(-2i/N) with N != d, from readings ``[(N, d, sizes), ...]`` taken at
    different d (the first is the failing one). N proportional to d (the same N/d in every reading) is a
    constant off: the exponent's factor (i/d, 4i/d) or the base. N that does not follow d is the denominator:
    one of the other sizes (the same name in every reading), or a fixed number. One reading only (the learner's
    code failed at the other size) cannot tell them apart: it is read as the constant."""
    n, d, sizes = readings[0]
    scales = [d_k / n_k for n_k, d_k, _ in readings]
    ds = _and(str(d_k) for _, d_k, _ in readings)
    if all(abs(s_k - scales[0]) <= 0.01 * scales[0] for s_k in scales):
        scale = scales[0]
        alike = say("position.frequencies.alike", dname=dname, widths=ds) if len(readings) > 1 else ""
        if abs(scale - 0.5) < 0.01:
            return MISTAKE.exponent_i_over_d, say("position.frequencies.i_over_d", said=said, alike=alike)
        if abs(scale - 2) < 0.01:
            return MISTAKE.exponent_doubled, say("position.frequencies.doubled", said=said, alike=alike)
        return MISTAKE.wrong_base, say("position.frequencies.base", said=said, base=BASE ** scale, alike=alike)
    ns = _and(f"{n_k:.4g}" for n_k, _, _ in readings)
    for name in sizes:
        if all(name in s_k and abs(n_k - s_k[name]) <= 0.01 * n_k for n_k, _, s_k in readings):
            return MISTAKE.exponent_denominator, say("position.frequencies.n_is_size", said=said, ns=ns, dname=dname, widths=ds,
                                             size=name)
    if all(abs(n_k - n) <= 0.01 * n for n_k, _, _ in readings):
        return MISTAKE.exponent_denominator, say("position.frequencies.n_fixed", said=said, n=n, dname=dname, widths=ds)
    return MISTAKE.wrong_frequencies, say("position.frequencies.n_unknown", said=said, ns=ns, dname=dname, widths=ds)


def _fail_values(ctx: Ctx, got: torch.Tensor, expected: torch.Tensor, what: str, tried: str, mistake: str | None,
                 atol: float, axes, fallback: str, note: str | None = None) -> None:
    """compare()'s failure, with a diagnosis (and a note on what the learner's values are) worked out here."""
    ctx.fail(**not_equal(got, expected, what, atol, axes, note or ""), tried=tried, mistake=mistake, hint=fallback)


def _dropout_like(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """Some entries zeroed and the others scaled by one common factor > 1 (what nn.Dropout does)."""
    nz = expected.abs() > 1e-9
    kept = nz & (got != 0)
    if not bool(kept.any()):
        return False
    c = float((got[kept] / expected[kept]).median())
    return c > 1 + 1e-3 and float((got[kept] - c * expected[kept]).abs().max()) <= 1e-4 and \
        bool((got[~kept] == 0).all())


# --------------------------------------------------------------------------- the sinusoidal table

def _table_variant(L: int, D: int, *, base: float = BASE, exponent: float = 1.0, start: int = 0, swap=False,
                   layout: str = "interleaved", floor_exponent=False, floor_angle=False, cos_own=False,
                   growing=False) -> torch.Tensor:
    """The table (float64), made right or in one of the known wrong ways."""
    pos = torch.arange(start, start + L, dtype=F64)[:, None]  # (L, 1)
    two_i = torch.arange(0, D, 2, dtype=F64)  # (D/2,)
    e = exponent * two_i / D
    if floor_exponent:
        e = torch.floor(e)
    w = base ** (e if growing else -e)  # (D/2,)
    angles = pos * w  # (L, D/2)
    if floor_angle:
        angles = torch.floor(angles)
    s, c = torch.sin(angles), torch.cos(angles)
    if cos_own:
        c = torch.cos(pos * base ** (-(two_i + 1) / D))
    if swap:
        s, c = c, s
    if layout == "concatenated":
        return torch.cat((s, c), dim=-1)  # (L, D)
    return torch.stack((s, c), dim=-1).flatten(-2)  # (L, D), interleaved


def _table_candidates(L: int, D: int):
    v = lambda **kw: _table_variant(L, D, **kw)  # noqa: E731
    return [(MISTAKE.sin_cos_swapped, v(swap=True)), (MISTAKE.concatenated_layout, v(layout="concatenated")),
            (MISTAKE.concatenated_layout, v(layout="concatenated", swap=True)), (MISTAKE.exponent_i_over_d, v(exponent=0.5)),
            (MISTAKE.exponent_doubled, v(exponent=2.0)), (MISTAKE.wrong_base, v(base=1000.0)), (MISTAKE.wrong_base, v(base=100000.0)),
            (MISTAKE.exponent_sign, v(growing=True)), (MISTAKE.integer_division, v(floor_exponent=True)),
            (MISTAKE.integer_division, v(floor_angle=True)), (MISTAKE.cos_own_frequency, v(cos_own=True)),
            (MISTAKE.positions_from_one, v(start=1))]


def _table_sizes(seed: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Two (max_len, D): the first with max_len > D (many positions to read frequencies from), the second
    with max_len < D; D even, never a power of two, never equal to max_len."""
    if seed == 0:
        return (24, 14), (5, 20)
    g = torch.Generator().manual_seed(seed)
    pick = lambda n: int(torch.randint(0, n, (1,), generator=g))  # noqa: E731
    D1 = (10, 14, 18, 22)[pick(4)]
    D2 = (12, 20, 26, 30)[pick(4)]
    return (D1 + 5 + pick(7), D1), (3 + pick(5), D2)


def _row0_mistake(table: torch.Tensor, L: int, D: int) -> str | None:
    """Name what row 0 shows, by kind: swapped, concatenated, or positions counted from 1."""
    h = D // 2
    row0 = table[0]
    zeros_ones = torch.tensor([0.0, 1.0], dtype=F64)
    for mistake, pattern in ((MISTAKE.sin_cos_swapped, zeros_ones.flip(0).repeat(h)),
                             (MISTAKE.concatenated_layout, zeros_ones.repeat_interleave(h)),
                             (MISTAKE.concatenated_layout, zeros_ones.flip(0).repeat_interleave(h))):
        if close(row0, pattern, TABLE_ATOL):
            return mistake
    if L >= 2:
        s, c = table[:2, 0::2], table[:2, 1::2]  # (2, D/2) each
        if within(s ** 2 + c ** 2, torch.ones_like(s), 1e-4):
            theta = torch.atan2(s, c)  # (2, D/2): the angles at rows 0 and 1
            if within(_wrap(theta[1] - theta[0] - theta[0]), torch.zeros(h, dtype=F64), 1e-4):
                return MISTAKE.positions_from_one  # row p holds the angles of position p + 1, whatever the frequencies
    return diagnose(table, _table_candidates(L, D), TABLE_ATOL)


@check
def check_sinusoidal_position_encoding(ctx: Ctx, sinusoidal_position_encoding) -> str:
    """Check ``sinusoidal_position_encoding(max_len, d_model) -> (max_len, d_model)``, in torch's default
    float dtype: row 0 is [0, 1, 0, 1, ...], every (sin, cos) pair of columns has sin^2 + cos^2 = 1, the
    frequencies read from row 1 are 10000^(-2i/D) (geometric), the values equal the closed form, for two
    sizes (max_len > d_model and max_len < d_model)."""
    fn = ctx.function(sinusoidal_position_encoding, "sinusoidal_position_encoding")
    ctx.batched = False  # the table is 2-D, where .T is fine: never blame a failure on it
    default = torch.get_default_dtype()
    sizes = _table_sizes(ctx.seed)
    for n, (L, D) in enumerate(sizes):
        tried = say("sinusoidal_position_encoding.tried", call=_table_call(L, D), seed=ctx.seed)
        got = ctx.call(fn, L, D, what=say("core.called_as", tried=tried))
        if isinstance(got, torch.Tensor) and tuple(got.shape) != (L, D):
            ctx.fail("sinusoidal_position_encoding.wrong_shape", tried=tried,
                     expected=f"(max_len, d_model) = {fmt_shape((L, D))}", got=fmt_shape(got.shape),
                     mistake=MISTAKE.table_transposed if tuple(got.shape) == (D, L) else None)
        if isinstance(got, torch.Tensor) and got.dtype != default:
            ctx.fail("sinusoidal_position_encoding.dtype", dtype=got.dtype, default=default, tried=tried,
                     got=str(got.dtype), mistake=MISTAKE.table_dtype,
                     mistake_hint=say("sinusoidal_position_encoding.integer_table") if not got.dtype.is_floating_point
                     else say("sinusoidal_position_encoding.wide_table"))
        got = ctx.tensor(got, say("sinusoidal_position_encoding.what"), (L, D), dtype=default, tried=tried)
        got = got.detach().double()
        expected = ref.sinusoidal_position_encoding(L, D, dtype=F64)
        if n == 0:
            _check_table_structure(ctx, got, expected, L, D, tried, more=lambda: _table_readings(ctx, fn, sizes[1:]))
        _fail_if_different(ctx, got, expected, L, D, tried,
                           fallback=say("sinusoidal_position_encoding.second_size_fallback") if n else None)
    return say("sinusoidal_position_encoding.passed")


def _table_call(L: int, D: int) -> str:
    """The call that builds the table (code, for messages)."""
    return f"sinusoidal_position_encoding(max_len={L}, d_model={D})"


def _table_frequencies(table: torch.Tensor) -> torch.Tensor | None:
    """The frequency of each pair (D/2,), read from a table that has the interleaved sin/cos structure (row 0 is
    [0, 1, 0, 1, ...], sin^2 + cos^2 = 1 at position 1) as the angle at position 1; None for any other table."""
    L, D = table.shape
    if L < 2 or D % 2:
        return None
    s, c = table[:2, 0::2], table[:2, 1::2]  # (2, D/2) each
    if not (within(s[0], torch.zeros_like(s[0]), TABLE_ATOL) and within(c[0], torch.ones_like(c[0]), TABLE_ATOL)
            and within(s[1] ** 2 + c[1] ** 2, torch.ones_like(s[1]), 1e-4)):
        return None
    return torch.atan2(s[1], c[1])


def _table_readings(ctx: Ctx, fn, sizes) -> list:
    """The learner's table at other sizes, read back as [(pair frequencies, d_model, {"max_len": L}), ...]
    (only the sizes where the code runs and returns a table with the sin/cos structure)."""
    readings = []
    for L, D in sizes:
        try:
            table = ctx.call(fn, L, D, what=say("core.called_as", tried=_table_call(L, D)))
        except CheckFailure:
            continue
        if isinstance(table, torch.Tensor) and tuple(table.shape) == (L, D) and table.dtype.is_floating_point:
            w = _table_frequencies(table.detach().double())
            if w is not None:
                readings.append((w, D, {"max_len": L}))
    return readings


def _check_table_structure(ctx: Ctx, got, expected, L: int, D: int, tried: str, more=None) -> None:
    """Row 0, the pairs, the frequencies: the steps that say *what kind* of table the learner built.
    ``more()`` reads the learner's table at the other sizes (to tell a wrong constant from a wrong denominator)."""
    h = D // 2
    row0 = torch.tensor([0.0, 1.0], dtype=F64).repeat(h)
    if not within(got[0], row0, TABLE_ATOL):
        ctx.fail("sinusoidal_position_encoding.row0", tried=tried, got=fmt_values(got[0], 8),
                 mistake=_row0_mistake(got, L, D))
    s, c = got[:, 0::2], got[:, 1::2]  # (L, D/2) each
    norm = s ** 2 + c ** 2
    if not within(norm, torch.ones_like(norm), 1e-4):
        p, i = max_abs_diff(norm, torch.ones_like(norm))[1]
        ctx.fail("sinusoidal_position_encoding.pair_norm", tried=tried, norm=float(norm[p, i]), pair=i,
                 even_column=2 * i, odd_column=2 * i + 1, position=p,
                 mistake=diagnose(got, _table_candidates(L, D), TABLE_ATOL) or (
                     MISTAKE.cos_own_frequency if within(got[:, 0::2], expected[:, 0::2], TABLE_ATOL)
                     != within(got[:, 1::2], expected[:, 1::2], TABLE_ATOL) else None))
    w = torch.atan2(s[1], c[1])  # (D/2,): the angle of each pair at position 1 = its frequency
    w_exp = _expected_frequencies(D)
    if not within(w, w_exp, 1e-5):
        mistake, said = _frequency_kind(w, D, negated=None, dname="d_model", sizes={"max_len": L}, more=more)
        i = int((w - w_exp).abs().argmax())
        ctx.fail("sinusoidal_position_encoding.frequencies", tried=tried, values=fmt_values(w_exp, kind="g"), ratio=BASE ** (-2 / D),
                 said=said, pair=i, even_column=2 * i, odd_column=2 * i + 1, mistake=mistake)


def _fail_if_different(ctx: Ctx, got, expected, L: int, D: int, tried: str, fallback: str | None) -> None:
    if within(got, expected, TABLE_ATOL):
        return
    compare(ctx, got, expected, say("sinusoidal_position_encoding.what"), tried, _table_candidates(L, D),
            atol=TABLE_ATOL, axes=TABLE_AXES, fallback=fallback or say("sinusoidal_position_encoding.fallback"))


# --------------------------------------------------------------------------- PositionalEncoding, learned positions

def _module_sizes(seed: int) -> tuple[int, int, int, int]:
    """(B, T, max_len, D), all different, with B < T < max_len and D < max_len, D and max_len even."""
    return ((2, 5, 12, 8), (3, 4, 14, 10), (4, 7, 10, 6))[seed % 3]  # even max_len: (max_len, D) swapped still builds


def _forward(ctx: Ctx, module, x: torch.Tensor, what: str, max_len: int):
    """Call ``module(x)``. When it raises, try other shapes of x to see why: it works when B = T or T = D
    (T read from the wrong axis), or only when T = max_len (the positions are not sliced)."""
    try:
        return ctx.call(module, x, what=what, names=("x",))
    except CheckFailure as exc:
        if exc.mistake is not None or exc.message_id != "core.raised":
            raise  # already named, or not an exception (e.g. x changed in place): other shapes tell nothing
        B, T, D = x.shape
        probes = (((T, T, D), MISTAKE.t_from_wrong_axis), ((B, D, D), MISTAKE.t_from_wrong_axis), ((B, max_len, D), MISTAKE.positions_not_sliced))
        for shape, mistake in probes:
            if shape == tuple(x.shape):
                continue
            try:
                ctx.call(module, torch.zeros(shape, dtype=x.dtype),
                         what=say("core.forward_called", tried=f"x {fmt_shape(shape)}"))
            except CheckFailure:
                continue
            raise ctx.renamed(exc, mistake=mistake, mistake_hint=None if mistake == MISTAKE.positions_not_sliced else
                              say("position.works_for_other_shape", shape=fmt_shape(shape))) from None
        raise


def _check_output(ctx: Ctx, out, x, expected, positions, tried: str, extra_cands=(), fallback: str = ""):
    """The module's output: shape (naming positions returned alone), then values (naming the known
    ways of combining x and the positions wrongly). ``positions`` is what must be added, (T, D)."""
    B, T, D = x.shape
    if isinstance(out, torch.Tensor) and tuple(out.shape) in ((1, T, D), (T, D)) and out.shape != x.shape:
        ctx.fail("position.output_shape", shape=fmt_shape(x.shape), tried=tried, got=fmt_shape(out.shape),
                 mistake=MISTAKE.positions_returned_alone)
    out = ctx.tensor(out, say("position.output"), tuple(x.shape), tried=tried, hint=say("position.output_shape_hint"))
    if within(out, expected):
        return out
    if _dropout_like(out.detach(), expected):
        ctx.fail("position.dropout", zeroed=int(((out == 0) & (expected != 0)).sum()), total=out.numel(), tried=tried,
                 mistake=MISTAKE.positions_dropout)
    root = math.sqrt(D)
    cands = [(MISTAKE.positions_multiplied, x * positions), (MISTAKE.scaled_by_sqrt_d_model, x * root + positions),
             (MISTAKE.scaled_by_sqrt_d_model, x + positions * root), (MISTAKE.scaled_by_sqrt_d_model, (x + positions) * root),
             (MISTAKE.positions_returned_alone, positions.expand_as(x)), (MISTAKE.positions_reversed, x + positions.flip(0)), *extra_cands]
    compare(ctx, out.detach(), expected, say("position.output"), tried, cands, axes=X_AXES, fallback=fallback)
    return out


def _adds_table_in_forward(ctx: Ctx, module: nn.Module, B: int, T: int, L: int, D: int) -> bool:
    """Does forward return x + the table's first T rows, though the module stores no table?"""
    x = ctx.randn(B, T, D).to(torch.get_default_dtype())  # the module is still in the default dtype
    try:
        out = ctx.call(module, x, what=say("core.forward_called", tried=f"x {fmt_shape(x.shape)}"), names=("x",))
    except CheckFailure:
        return False
    table = ref.sinusoidal_position_encoding(L, D, dtype=F64)[:T]  # (T, D)
    return isinstance(out, torch.Tensor) and close(out.detach().double(), x.double() + table, TABLE_ATOL)


def _check_pe_buffer(ctx: Ctx, module: nn.Module, B: int, T: int, L: int, D: int, made: str) -> None:
    """``pe`` is a persistent buffer (1, max_len, D) in the default dtype holding the table, and the module has
    no parameters. (B, T) is the shape forward is tried with when there is no table to read."""
    params, buffers = dict(module.named_parameters()), dict(module.named_buffers())
    pe = getattr(module, "pe", None)
    if pe is None:
        tensors = {**{n: p for n, p in params.items()}, **buffers,
                   **{n: v for n, v in vars(module).items() if isinstance(v, torch.Tensor)}}
        near = [n for n, t in tensors.items() if "." not in n and t.numel() == L * D]
        if near:
            ctx.fail("positional_encoding.pe_near_miss", near=near[0], tried=made, mistake=MISTAKE.attribute_name)
        if not tensors and _adds_table_in_forward(ctx, module, B, T, L, D):
            ctx.fail("positional_encoding.no_pe", tried=made, mistake=MISTAKE.pe_not_stored,
                     got=say("positional_encoding.adds_without_table", shape=fmt_shape((B, T, D))))
        ctx.fail("positional_encoding.no_pe", tried=made)
    if not isinstance(pe, torch.Tensor):
        ctx.fail("positional_encoding.pe_not_a_tensor", kind=type(pe).__name__, tried=made)
    if "pe" in params:
        ctx.fail("positional_encoding.pe_parameter", tried=made, got=f"parameters(): {sorted(params)}",
                 mistake=MISTAKE.pe_parameter)
    if "pe" not in buffers:
        ctx.fail("positional_encoding.pe_not_a_buffer", buffers=sorted(buffers) or say("position.none"),
                 kind=type(pe).__name__, tried=made, expected="'pe' in dict(module.named_buffers())",  # code
                 mistake=MISTAKE.pe_plain_attribute)
    if params:
        ctx.fail("positional_encoding.has_parameters", tried=made,
                 got=", ".join(f"{n} {fmt_shape(p.shape)}" for n, p in params.items()))
    if "pe" not in module.state_dict():
        ctx.fail("positional_encoding.pe_not_persistent", keys=sorted(module.state_dict()) or say("position.none"),
                 tried=made, expected="state_dict() == {'pe': ...}", mistake=MISTAKE.pe_not_persistent)
    if tuple(pe.shape) != (1, L, D):
        shape = tuple(pe.shape)
        ctx.fail("positional_encoding.pe_shape", tried=made, expected=f"(1, max_len, d_model) = {fmt_shape((1, L, D))}",
                 got=fmt_shape(pe.shape), mistake=MISTAKE.pe_no_batch_axis if shape == (L, D) else
                 MISTAKE.table_transposed if shape in ((1, D, L), (D, L)) else None)
    default = torch.get_default_dtype()
    if pe.dtype != default:
        ctx.fail("positional_encoding.pe_dtype", dtype=pe.dtype, default=default, tried=made, got=str(pe.dtype),
                 mistake=MISTAKE.table_dtype,
                 mistake_hint=say("positional_encoding.integer_table") if not pe.dtype.is_floating_point else
                 say("positional_encoding.wide_table", dtype=pe.dtype, default=default))
    table = ref.sinusoidal_position_encoding(L, D, dtype=F64)[None]  # (1, L, D)
    got = pe.detach().double()
    if not within(got, table, TABLE_ATOL):
        _fail_values(ctx, got, table, say("positional_encoding.pe_what"), made,
                     diagnose(got[0], _table_candidates(L, D), TABLE_ATOL), TABLE_ATOL, X_AXES,
                     fallback=say("positional_encoding.pe_fallback"))


def _dtype_follows_x(ctx: Ctx, module: nn.Module, B: int, T: int, D: int, made: str) -> None:
    """The module moved to float32 (``.float()``, as a model in the default dtype is) returns float32 for a float32
    x: nothing in forward may turn it into float64."""
    module.float()
    x = ctx.randn(B, T, D).float()
    tried = say("position.float32_tried", made=made, shape=fmt_shape(x.shape), seed=ctx.seed)
    out = ctx.call(module, x, what=say("core.forward_called", tried=tried), names=("x",))
    ctx.tensor(out, say("position.output"), tuple(x.shape), dtype=torch.float32, tried=tried)


@check
def check_positional_encoding(ctx: Ctx, PositionalEncoding) -> str:
    """Check ``PositionalEncoding(d_model, max_len)``: a persistent buffer ``pe`` (1, max_len, D) holding the
    table in torch's default dtype (not a parameter, in state_dict(), moved by .double()), no parameters, and
    ``forward(x (B, T, D)) = x + pe[:, :T]`` for T = max_len and T < max_len, with B != T, in float64; gradients
    reach x; after ``.float()``, a float32 x gives a float32 output."""
    ctx.hints = hints("positional_encoding.hints")
    cls = ctx.module_class(PositionalEncoding, "PositionalEncoding")
    B, T, L, D = _module_sizes(ctx.seed)
    made = f"PositionalEncoding(d_model={D}, max_len={L})"
    module = ctx.call(cls, D, L, what=say("core.created", made=made))
    if not isinstance(module, nn.Module):
        ctx.fail("core.not_a_module", what=made, got=type(module).__name__)
    _check_pe_buffer(ctx, module, B, T, L, D, made)
    module = module.double()
    if module.pe.dtype != F64:
        ctx.fail("positional_encoding.pe_not_moved", tried=f"{made}.double()", expected="torch.float64",
                 got=str(module.pe.dtype), mistake=MISTAKE.pe_plain_attribute)
    table = ref.sinusoidal_position_encoding(L, D, dtype=F64)  # (L, D)
    for t, label in ((T, "T < max_len"), (L, "T = max_len")):
        x = ctx.randn(B, t, D)
        tried = say("positional_encoding.tried", made=made, shape=fmt_shape(x.shape), label=label, seed=ctx.seed)
        res = _forward(ctx, module, x, say("core.forward_called", tried=tried), L)
        pos = table[:t]  # (T, D)
        _check_output(ctx, res, x, x + pos, pos, tried, fallback=say("positional_encoding.fallback"))
    ctx.differentiable(module, x, what=say("core.forward_called", tried=tried), names=("x",))
    _dtype_follows_x(ctx, module, B, T, D, made)
    return say("positional_encoding.passed", shape=fmt_shape((1, L, D)))


@check
def check_learned_positional_embedding(ctx: Ctx, LearnedPositionalEmbedding) -> str:
    """Check ``LearnedPositionalEmbedding(d_model, max_len)``: ``emb = nn.Embedding(max_len, d_model)``,
    max_len * D parameters, ``forward(x) = x + emb(arange(T))`` with the reference's (random) weights copied
    in, for T = max_len and T < max_len, gradients reaching exactly the first T rows of emb.weight (each of
    them), and, after ``.float()``, a float32 output for a float32 x."""
    ctx.hints = hints("learned_positional_embedding.hints")
    cls = ctx.module_class(LearnedPositionalEmbedding, "LearnedPositionalEmbedding")
    B, T, L, D = _module_sizes(ctx.seed)
    made = f"LearnedPositionalEmbedding(d_model={D}, max_len={L})"
    module = ctx.build(cls, D, L, what=say("core.created", made=made))
    if getattr(module, "emb", None) is None:
        others = [n for n, m in module.named_children() if isinstance(m, nn.Embedding)]
        if len(others) == 1:
            ctx.fail("learned_positional_embedding.emb_near_miss", cls=type(module).__name__, near=others[0],
                     tried=made, mistake=MISTAKE.attribute_name)
    emb = ctx.attribute(module, "emb", f"nn.Embedding({L}, {D})")
    if isinstance(emb, torch.Tensor):
        ctx.fail("learned_positional_embedding.emb_tensor", kind=type(emb).__name__, shape=fmt_shape(emb.shape),
                 tried=made, expected=f"nn.Embedding({L}, {D})", mistake=MISTAKE.emb_raw_parameter)
    if not isinstance(emb, nn.Embedding):
        ctx.fail("learned_positional_embedding.emb_not_an_embedding", kind=type(emb).__name__, tried=made,
                 expected=f"nn.Embedding({L}, {D})")
    sizes = (emb.num_embeddings, emb.embedding_dim)
    if sizes != (L, D):
        ctx.fail("learned_positional_embedding.emb_size", tried=made,
                 expected=f"nn.Embedding(max_len, d_model) = nn.Embedding({L}, {D})",
                 got=f"nn.Embedding({sizes[0]}, {sizes[1]})", mistake=MISTAKE.embedding_sizes_swapped if sizes == (D, L) else None,
                 hint=say("learned_positional_embedding.extra_row_hint") if sizes == (L + 1, D) else
                 say("learned_positional_embedding.emb_size_hint"))
    n = count_params(module)
    if n != L * D:
        extra = [f"{name} {fmt_shape(p.shape)}" for name, p in module.named_parameters() if name != "emb.weight"]
        ctx.fail("learned_positional_embedding.param_count", expected_n=L * D, tried=made,
                 got=say("learned_positional_embedding.params_besides", n=n, extra=", ".join(extra)) if extra
                 else str(n))
    reference = ref.LearnedPositionalEmbedding(D, L).double()
    randomise(ctx, reference, scale=0.5)  # random, non-zero rows
    with torch.no_grad():
        emb.weight.copy_(reference.emb.weight)
    weights = reference.emb.weight.detach()  # (L, D)
    outs = {}
    for t, label in ((T, "T < max_len"), (L, "T = max_len")):
        x = ctx.randn(B, t, D)
        tried = say("learned_positional_embedding.tried", made=made, shape=fmt_shape(x.shape), label=label,
                    seed=ctx.seed)
        res = _forward(ctx, module, x, say("core.forward_called", tried=tried), L)
        pos = weights[:t]  # (T, D)
        with torch.no_grad():
            expected = reference(x)  # (B, T, D)
        extra = [(MISTAKE.positions_from_one, x + weights[1:t + 1])] if t < L else []
        outs[t] = (_check_output(ctx, res, x, expected, pos, tried, extra,
                                 fallback=say("learned_positional_embedding.fallback")), tried)
    for t in (T, L):  # gradients from a sequence shorter than max_len, then from one of length max_len
        out, tried = outs[t]
        module.zero_grad(set_to_none=True)
        if out.requires_grad:
            out.sum().backward()
        grad = emb.weight.grad
        if grad is None or not bool((grad[:t] != 0).any()):
            ctx.fail("learned_positional_embedding.no_gradient", tried=tried, mistake=MISTAKE.no_gradient)
        missing = [r for r in range(t) if not bool((grad[r] != 0).any())]  # rows used but never trained
        if missing:
            _fail_rows_without_gradient(ctx, missing, t, L, emb.padding_idx, tried)
        if bool((grad[t:] != 0).any()):
            ctx.fail("learned_positional_embedding.rows_after_used", t=t, tried=tried)
    _dtype_follows_x(ctx, module, B, T, D, made)
    return say("learned_positional_embedding.passed", L=L, D=D, n=L * D)


def _fail_rows_without_gradient(ctx: Ctx, missing: list[int], t: int, L: int, pad: int | None, tried: str) -> None:
    """Rows ``missing`` of emb.weight, among the first ``t`` a sequence of length ``t`` uses, got no gradient (an
    emb.padding_idx ``pad`` explains one such row)."""
    named = len(missing) == 1 and pad is not None and pad % L == missing[0]
    common = dict(tried=tried, expected=say("learned_positional_embedding.every_row_trained", last=t - 1),
                 got=say("learned_positional_embedding.zero_rows", n=len(missing), t=t,
                         padding=f"; emb.padding_idx = {pad}" if pad is not None else ""),
                 mistake=MISTAKE.embedding_padding_idx if named else None, hint=say("learned_positional_embedding.untrained_row_hint"))
    if len(missing) == 1:
        ctx.fail("learned_positional_embedding.row_without_gradient", row=missing[0], **common)
    ctx.fail("learned_positional_embedding.rows_without_gradient", rows=missing, **common)


# --------------------------------------------------------------------------- RoPE (bonus)

def _rope_angles(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """The reference's angles (T, d/2): position m x frequency theta_i, in the dtype of ``x`` (..., T, d)."""
    return positions.to(x.dtype)[:, None] * _expected_frequencies(x.size(-1)).to(x.dtype)


def _rope_rotate_half(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """GPT-NeoX / LLaMA layout: pairs (i, i + d/2)."""
    d = x.size(-1)
    angles = _rope_angles(x, positions)  # (T, d/2)
    cos, sin = torch.cos(angles).repeat(1, 2), torch.sin(angles).repeat(1, 2)  # (T, d)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def _rope_slips(x: torch.Tensor, positions: torch.Tensor):
    """The reference's own rotation (its angles, its pairs), with one slip in how the two lines are written or put
    back: each a (mistake, output) candidate."""
    angles = _rope_angles(x, positions)  # (T, d/2)
    c, s = torch.cos(angles), torch.sin(angles)  # (T, d/2) each
    e, o = x[..., 0::2], x[..., 1::2]  # (..., T, d/2) each
    even, odd = e * c - o * s, e * s + o * c  # the right rotated halves
    pairs = lambda a, b: torch.stack((a, b), dim=-1).flatten(-2)  # noqa: E731 - interleave two halves
    return [(MISTAKE.rope_not_interleaved, torch.cat((even, odd), dim=-1)),
            (MISTAKE.rope_sin_sign, pairs(even, -e * s + o * c)), (MISTAKE.rope_sin_sign, pairs(e * c + o * s, odd)),
            (MISTAKE.rope_overwritten_before_read, pairs(even, even * s + o * c)), (MISTAKE.rope_overwritten_before_read, pairs(e * c - odd * s, odd)),
            (MISTAKE.rope_sin_cos_swapped, pairs(e * s - o * c, e * c + o * s))]


def _rope_candidates(x: torch.Tensor, positions: torch.Tensor):
    T = x.size(-2)
    return [(MISTAKE.rope_rotate_half, _rope_rotate_half(x, positions)), *_rope_slips(x, positions),
            (MISTAKE.rope_wrong_direction, ref.apply_rope(x, -positions)),
            (MISTAKE.positions_from_one, ref.apply_rope(x, positions + 1)),
            (MISTAKE.rope_added, x + ref.sinusoidal_position_encoding(int(positions.max()) + 1, x.size(-1), dtype=F64)[positions]),
            (MISTAKE.rope_positions_ignored, ref.apply_rope(x, torch.arange(T)))]


def _rope_sizes(seed: int) -> tuple[int, int, int, int]:
    """(B, H, T, d_k): all different, d_k even and not a power of two, d_k / 2 >= 3."""
    return ((2, 3, 7, 10), (3, 2, 6, 14), (2, 4, 9, 6))[seed % 3]


def _rope_reading(ctx: Ctx, fn, shape) -> torch.Tensor | None:
    """Rotate the vector (1, 0, 1, 0, ...) at every position of an input of ``shape`` (..., T, d_k): a rotation
    by position x frequency turns pair i by w_i per position. Returns those frequencies (d_k/2,) when the
    learner's result is such a rotation, else None."""
    *lead, T, d = shape
    u = torch.tensor([1.0, 0.0], dtype=F64).repeat(d // 2).expand(*lead, T, d).contiguous()
    try:
        out = ctx.call(fn, u, what=say("core.called_with", tried=say("apply_rope.unit_tried", shape=fmt_shape(shape))))
    except CheckFailure:  # the check already failed and says why
        return None
    if not (isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(shape) and out.dtype.is_floating_point):
        return None
    out = out.detach().double().reshape(-1, T, d)[0]  # (T, d)
    c, s = out[:, 0::2], out[:, 1::2]  # (T, d/2): cos and sin of each pair's angle, if it is a rotation
    w = torch.atan2(s[1], c[1])
    positions = torch.arange(T, dtype=F64)[:, None]
    is_rotation = within(c, torch.cos(positions * w), 1e-6) and within(s, torch.sin(positions * w), 1e-6)
    return w if is_rotation else None


def _rope_named_sizes(shape) -> dict[str, int]:
    """The sizes of x other than d_k, by name: what a learner's code may have used in place of d_k."""
    names = [say("apply_rope.size.batch")] + ([say("apply_rope.size.heads")] if len(shape) == 4 else [])
    return {**{name: int(shape[k]) for k, name in enumerate(names)}, say("apply_rope.size.length"): int(shape[-2])}


def _rope_frequency_probe(ctx: Ctx, fn, shape) -> tuple[str | None, str | None]:
    """Read the learner's frequencies from a rotation of (1, 0, 1, 0, ...) at ``shape`` (B, H, T, d_k) and name
    their kind; for a wrong exponent, a second reading at other sizes tells a wrong constant from a wrong d_k."""
    d = shape[-1]
    w = _rope_reading(ctx, fn, shape)
    if w is None or within(w, _expected_frequencies(d), 1e-6):
        return None, None
    if within(w, torch.zeros_like(w), 1e-9):
        return None, say("apply_rope.unrotated")
    B, H, T, _ = shape
    other = (B + 3, H + 3, T + 2, d + 4)  # all sizes different from each other and from the first reading's

    def more():
        w2 = _rope_reading(ctx, fn, other)
        return [] if w2 is None else [(w2, other[-1], _rope_named_sizes(other))]

    return _frequency_kind(w, d, negated=MISTAKE.rope_wrong_direction, dname="d_k", sizes=_rope_named_sizes(shape), more=more)


def _explain_rope_crash(ctx: Ctx, fn, exc: CheckFailure, shape) -> None:
    """The learner's code raised on x of ``shape`` (..., T, d_k), for no reason named yet. If it runs when
    T = d_k/2 and then turns pair i at position t by i * theta_t, the angles were built as (d_k/2, T): name it."""
    if exc.mistake is not None or exc.message_id != "core.raised":
        return
    *lead, T, d = shape
    h = d // 2
    if h == T or h < 2:
        return
    x = ctx.randn(*lead, h, d)  # (..., d_k/2, d_k): T = d_k/2, where a (d_k/2, T) angle table has the right shape
    try:
        out = ctx.call(fn, x, what=say("core.called_with", tried=f"x {fmt_shape(x.shape)}"))
    except CheckFailure:
        return
    theta = _expected_frequencies(d)  # (d/2,)
    angles = theta[:, None] * torch.arange(h, dtype=F64)[None, :]  # (d/2, T) read as (T, d/2): row t is i * theta_t
    c, s = torch.cos(angles), torch.sin(angles)
    e, o = x[..., 0::2], x[..., 1::2]
    transposed = torch.stack((e * c - o * s, e * s + o * c), dim=-1).flatten(-2)
    if isinstance(out, torch.Tensor) and close(out.detach().double(), transposed):
        raise ctx.renamed(exc, mistake=MISTAKE.rope_angles_transposed,
                          got=say("apply_rope.runs_when_square", error=exc.got, shape=fmt_shape(x.shape), half=h)) from None


@check
def check_apply_rope(ctx: Ctx, apply_rope) -> str:
    """Check ``apply_rope(x (..., T, d_k), positions=None)``: position 0 unchanged, norms preserved, scores
    between rotated queries and keys depend only on the offset m - n, values equal the reference on 4-D
    and 3-D inputs and with explicit positions; differentiable, float32 in -> float32 out."""
    ctx.hints = hints("apply_rope.hints")
    fn = ctx.function(apply_rope, "apply_rope")
    B, H, T, d = _rope_sizes(ctx.seed)
    axes = ROPE_AXES[4]
    x = ctx.randn(B, H, T, d)
    tried = say("apply_rope.tried", shape=fmt_shape(x.shape), seed=ctx.seed)
    try:
        out = ctx.call(fn, x, what=say("core.called_with", tried=tried), names=("x",))
    except CheckFailure as exc:
        _explain_rope_crash(ctx, fn, exc, tuple(x.shape))
        raise
    out = ctx.tensor(out, say("apply_rope.result"), tuple(x.shape), tried=tried, hint=say("apply_rope.shape_hint"))
    arange = torch.arange(T)
    cands = _rope_candidates(x, arange)
    if not within(out[..., 0, :], x[..., 0, :]):
        i = max_abs_diff(out[..., 0, :], x[..., 0, :])[1]
        at = (*i[:-1], 0, i[-1])
        ctx.fail("apply_rope.position_0_changed", value=float(out[at]), original=float(x[at]), at=where(at, axes),
                 tried=tried, mistake=diagnose(out, cands))
    norms, x_norms = out.norm(dim=-1), x.norm(dim=-1)
    if not within(norms, x_norms):
        i = max_abs_diff(norms, x_norms)[1]
        ctx.fail("apply_rope.length_changed", length=float(x_norms[tuple(i)]), at=where(i, axes[:-1]), tried=tried,
                 got=f"{float(norms[tuple(i)]):.4f}", mistake=diagnose(out, cands))
    # the same query and key at every position: the score between positions m and n may depend only on m - n
    q0, k0 = ctx.randn(d), ctx.randn(d)
    q, k = q0.expand(1, T, d).contiguous(), k0.expand(1, T, d).contiguous()
    rel_tried = say("apply_rope.relative_tried", shape=fmt_shape(q.shape), seed=ctx.seed)
    rel_what = say("core.called_with", tried=rel_tried)
    rq = ctx.tensor(ctx.call(fn, q, what=rel_what, names=("x",), mistake_if_raises=MISTAKE.hard_coded_axes),
                    say("apply_rope.result"), tuple(q.shape), tried=rel_tried)
    rk = ctx.tensor(ctx.call(fn, k, what=rel_what, names=("x",)), say("apply_rope.result"), tuple(k.shape),
                    tried=rel_tried)
    scores = (rq @ rk.transpose(-2, -1))[0]  # (T, T): score[m, n] = <rope(q, m), rope(k, n)>
    if not within(scores[1:, 1:], scores[:-1, :-1]):
        m, n = max_abs_diff(scores[1:, 1:], scores[:-1, :-1])[1]
        ctx.fail("apply_rope.not_relative", m=m, n=n, next_m=m + 1, next_n=n + 1, offset=m - n,
                 next_score=float(scores[m + 1, n + 1]), score=float(scores[m, n]), tried=rel_tried,
                 mistake=diagnose(out, cands))
    if not within(out, ref.apply_rope(x)):
        mistake = diagnose(out, cands)
        note = None
        if mistake is None:
            mistake, note = _rope_frequency_probe(ctx, fn, tuple(x.shape))
        _fail_values(ctx, out, ref.apply_rope(x), say("apply_rope.what"), tried, mistake, 1e-6, axes,
                     fallback=say("apply_rope.fallback"), note=note)
    # explicit positions, and a 3-D input
    positions = torch.randperm(3 * T, generator=ctx.gen)[:T]  # (T,) distinct positions, in any order
    x3 = ctx.randn(B, T, d)
    tried = say("apply_rope.tried_3d", shape=fmt_shape(x3.shape), positions=positions.tolist(), seed=ctx.seed)
    what = say("core.called_with", tried=tried)
    got = ctx.call(fn, x3, positions, what=what, names=("x", "positions"))
    got = ctx.tensor(got, say("apply_rope.result"), tuple(x3.shape), tried=tried)
    compare(ctx, got, ref.apply_rope(x3, positions), say("apply_rope.what"), tried, _rope_candidates(x3, positions),
            axes=ROPE_AXES[3], fallback=say("apply_rope.positions_fallback"))
    ctx.differentiable(fn, x3, positions, what=what, names=("x", "positions"))
    ctx.dtype_follows(fn, x3, positions, what=what, names=("x", "positions"))
    return say("apply_rope.passed")
