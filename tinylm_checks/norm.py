"""Stage 06 checks: LayerNorm from scratch.

The check compares the learner's ``LayerNorm(d_model, eps)`` with PyTorch's ``nn.LayerNorm`` at a small
width (``D <= 8``, where dividing by ``D - 1`` instead of ``D`` changes the result by 7 to 15 %), in float64
with the usual tight tolerance, on rows chosen to separate the known mistakes: a non-zero mean and a
large spread (no centring, wrong axis), a tiny spread of about 1e-3 (eps inside or outside the square
root), a constant row (variance 0: eps keeps it finite), with randomised weight and bias copied in, and
with an eps other than the default (a hard-coded 1e-5 fails).
"""
from __future__ import annotations

import itertools

import torch
from torch import nn

from ._core import CheckFailure, Ctx, check, compare, fmt_shape, fmt_values, max_abs_diff, where, within
from ._modules import count_params
from ._text import MISTAKE, hints, say

__all__ = ["check_layer_norm"]

# ---- the mistakes this check can name, each with the hint a learner reads when it is named


AXES = ("batch", "position", "feature")
DEFAULT_EPS = 1e-5


def _sizes(seed: int) -> tuple[int, int, int, float]:
    """(B, T, D, eps): all different, T != D (a missing keepdim then raises), D <= 8, eps not the default."""
    return [(2, 4, 6, 0.1), (3, 5, 4, 0.01), (4, 3, 7, 0.5)][seed % 3]


N_ROWS = 9  # rows of the 2-D input: differs from every D above

# Row kinds (scale, shift): each separates some mistakes from the right answer.
ROW_KINDS = ((1.0, 0.5),     # ordinary
             (30.0, -40.0),  # non-zero mean, large spread: no centring, wrong axis
             (1e-3, 3.0),    # tiny spread (variance about 1e-6, near eps): eps inside or outside the sqrt
             (0.0, 2.5),     # constant row (variance exactly 0): eps keeps it finite
             (4.0, 10.0))    # large mean, moderate spread
# (the tried: line describes them in these words: the message layer_norm.row_kinds)


def _inputs(ctx: Ctx, *lead: int, D: int) -> torch.Tensor:
    """Random rows of every kind in ROW_KINDS, cycling over the rows (positions) of a (*lead, D) tensor."""
    z = ctx.randn(*lead, D).reshape(-1, D)
    kinds = torch.tensor([ROW_KINDS[r % len(ROW_KINDS)] for r in range(z.shape[0])], dtype=torch.float64)
    return (z * kinds[:, :1] + kinds[:, 1:]).reshape(*lead, D)  # (*lead, D)


def _row_kind(x: torch.Tensor) -> str:
    """Words for a row of the input, from its statistics (for messages)."""
    std = float(x.std(unbiased=False))
    return say("layer_norm.constant_row") if std == 0 else say("layer_norm.row", std=std, mean=float(x.mean()))


def _variants(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float):
    """Known LayerNorm mistakes on input ``x`` (``(..., D)``) with weight ``w`` and bias ``b``:
    a list of (mistake, output) pairs."""
    D = x.size(-1)
    affine = lambda xh: xh * w + b  # noqa: E731
    mean = x.mean(-1, keepdim=True)  # (..., 1)
    xc = x - mean  # (..., D)
    var = (xc ** 2).mean(-1, keepdim=True)  # (..., 1), biased
    var_u = var * D / (D - 1)  # unbiased
    msq = (x ** 2).mean(-1, keepdim=True)  # not centred
    xh = xc / torch.sqrt(var + eps)

    def normalise(z):  # (..., D) -> (..., D), right
        zc = z - z.mean(-1, keepdim=True)
        return zc / torch.sqrt((zc ** 2).mean(-1, keepdim=True) + eps)

    cands = [(MISTAKE.unbiased_variance, affine(xc / torch.sqrt(var_u + eps))),
             (MISTAKE.unbiased_variance, affine(xc / (torch.sqrt(var_u) + eps))),
             (MISTAKE.unbiased_variance, affine(xc / (torch.sqrt(var_u) + eps ** 0.5))),
             (MISTAKE.eps_outside_sqrt, affine(xc / (torch.sqrt(var) + eps))),
             (MISTAKE.eps_outside_sqrt, affine(xc / (torch.sqrt(var) + eps ** 0.5))),
             (MISTAKE.no_sqrt, affine(xc / (var + eps))), (MISTAKE.no_sqrt, affine(xc / (var_u + eps))),
             (MISTAKE.no_centring, affine(x / torch.sqrt(var + eps))), (MISTAKE.no_centring, affine(x / torch.sqrt(msq + eps))),
             (MISTAKE.no_centring, affine(xc / torch.sqrt(msq + eps))), (MISTAKE.no_centring, affine(x / torch.sqrt(var_u + eps))),
             (MISTAKE.weight_bias_swapped, xh * b + w),
             (MISTAKE.weight_bias_not_applied, xh), (MISTAKE.weight_bias_not_applied, xh * w), (MISTAKE.weight_bias_not_applied, xh + b),
             (MISTAKE.affine_before_normalising, normalise(x * w + b)), (MISTAKE.affine_before_normalising, normalise(x * w) + b),
             (MISTAKE.affine_before_normalising, normalise(x + b) * w), (MISTAKE.affine_before_normalising, normalise(x * w + b) * w + b)]
    if eps != DEFAULT_EPS:
        cands += [(MISTAKE.eps_hard_coded, affine(xc / torch.sqrt(var + DEFAULT_EPS))),
                  (MISTAKE.eps_hard_coded, affine(xc / torch.sqrt(var_u + DEFAULT_EPS))),
                  (MISTAKE.eps_hard_coded, affine(xc / (torch.sqrt(var) + DEFAULT_EPS)))]
    dims = range(x.dim())
    for k in range(1, x.dim() + 1):
        for axes in itertools.combinations(dims, k):
            if axes == (x.dim() - 1,):
                continue
            m = x.mean(axes, keepdim=True)
            n = x[..., :].numel() // m.numel()
            v = ((x - m) ** 2).mean(axes, keepdim=True)
            cands += [(MISTAKE.norm_wrong_axis, affine((x - m) / torch.sqrt(v + eps))),
                      (MISTAKE.norm_wrong_axis, affine((x - m) / torch.sqrt(v * n / (n - 1) + eps)))]
    return [(name, out.detach()) for name, out in cands]


def _parameters(ctx: Ctx, module: nn.Module, D: int, made: str) -> None:
    """``weight`` and ``bias``: nn.Parameters of shape (D,), initialised to ones and zeros, 2 D in all."""
    params = dict(module.named_parameters())
    buffers = dict(module.named_buffers())
    for name, init in (("weight", "torch.ones(d_model)"), ("bias", "torch.zeros(d_model)")):
        if name in params:
            continue
        value = getattr(module, name, None)
        if isinstance(value, torch.Tensor):
            kind = say("layer_norm.buffer") if name in buffers else say("layer_norm.plain_tensor")
            ctx.fail("layer_norm.not_a_parameter", name=name, kind=kind, shape=fmt_shape(value.shape),
                     params=sorted(params) or say("layer_norm.none"), tried=made,
                     expected=f"self.{name} = nn.Parameter({init})", mistake=MISTAKE.weight_bias_not_parameters)
        others = [f"{n} {fmt_shape(p.shape)}" for n, p in params.items() if tuple(p.shape) == (D,)]
        if others:
            ctx.fail("layer_norm.parameter_renamed", name=name, others=", ".join(others), tried=made,
                     expected=f"self.{name} = nn.Parameter({init})", mistake=MISTAKE.attribute_name)
        ctx.fail("layer_norm.parameter_missing", name=name, init=init, params=sorted(params) or say("layer_norm.none"),
                 tried=made)
    for name in ("weight", "bias"):
        if tuple(params[name].shape) != (D,):
            ctx.fail("layer_norm.parameter_shape", name=name, tried=made, expected=f"(d_model,) = {fmt_shape((D,))}",
                     got=fmt_shape(params[name].shape))
    n = count_params(module)
    if n != 2 * D:
        extra = [f"{k} {fmt_shape(p.shape)}" for k, p in params.items() if k not in ("weight", "bias")]
        ctx.fail("layer_norm.param_count", expected_n=2 * D, D=D, n=n, extra=", ".join(extra), tried=made)
    w, b = params["weight"].detach(), params["bias"].detach()
    if not (bool((w == 1).all()) and bool((b == 0).all())):
        ctx.fail("layer_norm.init", tried=made, mistake=MISTAKE.weight_bias_init,
                 got=f"weight = {fmt_values(w, kind='g')}, bias = {fmt_values(b, kind='g')}")


def _forward(ctx: Ctx, module, x, tried: str, mistake_if_raises: str | None = None) -> torch.Tensor:
    """``module(x)``: a missing keepdim shows as a broadcast error; NaN exactly on the constant rows means
    eps is missing; then a finite float64 tensor of x's shape."""
    try:
        got = ctx.call(module, x, what=say("core.forward_called", tried=tried), names=("x",),
                       mistake_if_raises=mistake_if_raises)
    except CheckFailure as e:
        if e.mistake is None and "must match the size of tensor" in (e.got or ""):
            raise ctx.renamed(e, mistake=MISTAKE.no_keepdim) from None
        raise
    if isinstance(got, torch.Tensor) and got.shape == x.shape and got.is_floating_point():
        bad = ~torch.isfinite(got.detach()).all(-1)  # rows with NaN or inf
        constant = (x == x[..., :1]).all(-1)
        if bool(bad.any()):
            i = bad.nonzero()[0].tolist()
            ctx.fail("layer_norm.not_finite", at=where(i, AXES[:-1]), values=fmt_values(got[tuple(i)].detach(), kind="g"),
                     row=_row_kind(x[tuple(i)]), tried=tried,
                     mistake=MISTAKE.eps_ignored if bool((bad == constant).all()) else None)
    return ctx.tensor(got, say("layer_norm.output"), tuple(x.shape), tried=tried, hint=say("layer_norm.shape_hint"))


def _reference(D: int, eps: float, w: torch.Tensor, b: torch.Tensor) -> nn.LayerNorm:
    ln = nn.LayerNorm(D, eps=eps).double()
    with torch.no_grad():
        ln.weight.copy_(w)
        ln.bias.copy_(b)
    return ln


def _compare(ctx: Ctx, out, x, ln: nn.LayerNorm, tried: str, axes) -> None:
    with torch.no_grad():
        expected = ln(x)
        cands = _variants(x, ln.weight, ln.bias, ln.eps)
    compare(ctx, out.detach(), expected, say("layer_norm.output"), tried, cands, axes=axes,
            fallback=say("layer_norm.fallback"))


def _default_eps(ctx: Ctx, cls, learner, x, ln: nn.LayerNorm, D: int, w, b, tried: str, made: str) -> None:
    """LayerNorm(d_model) is off: if LayerNorm(d_model, eps=1e-5) is right, the default of eps is wrong."""
    made_eps = f"LayerNorm(d_model={D}, eps=1e-05)"
    try:
        explicit = cls(D, eps=DEFAULT_EPS)
        if not isinstance(explicit, nn.Module):
            return
        explicit = explicit.double()
        with torch.no_grad():
            explicit.weight.copy_(w)
            explicit.bias.copy_(b)
            out = explicit(x.clone())
    except Exception:  # noqa: BLE001 - no eps argument, no weight: other steps of the check say so
        return
    if isinstance(out, torch.Tensor) and out.shape == x.shape and within(out, ln(x).detach()):
        eps = getattr(learner, "eps", None)
        ctx.fail("layer_norm.eps_default", made=made, D=D, made_eps=made_eps, tried=tried,
                 got=f"self.eps = {eps:g}" if isinstance(eps, float) else say("layer_norm.another_default"),
                 mistake=MISTAKE.eps_default)


@check
def check_layer_norm(ctx: Ctx, LayerNorm) -> str:
    """Check ``LayerNorm(d_model, eps=1e-5)``: parameters ``weight`` (ones) and ``bias`` (zeros), ``2 D`` in all;
    output equal to ``nn.LayerNorm(d_model, eps)`` with randomised weight and bias copied in, at ``D <= 8``,
    on (B, T, D) rows with non-zero mean and large spread, a tiny spread, and constant rows; again with
    another eps; on a 2-D input; gradients of weight, bias and x equal to nn.LayerNorm's (Ba, Kiros & Hinton
    2016, §3; PyTorch's nn.LayerNorm documentation: biased variance, eps inside the square root)."""
    ctx.hints = hints("layer_norm.hints")
    cls = ctx.module_class(LayerNorm, "LayerNorm")
    B, T, D, eps = _sizes(ctx.seed)
    made = f"LayerNorm(d_model={D})"
    try:
        learner = ctx.build(cls, D, what=say("core.created", made=made))
    except CheckFailure as e:
        if e.mistake is None and "TypeError" in (e.got or "") and "'eps'" in (e.got or ""):
            raise ctx.renamed(e, mistake=MISTAKE.eps_default, tried=made) from None  # eps has no default
        raise
    _parameters(ctx, learner, D, made)

    w = 1 + 0.5 * ctx.randn(D)  # (D,), non-zero, not ones
    b = 0.5 * ctx.randn(D)  # (D,)
    with torch.no_grad():
        learner.weight.copy_(w)
        learner.bias.copy_(b)
    x = _inputs(ctx, B, T, D=D)  # (B, T, D)
    rows = say("layer_norm.row_kinds")
    tried = say("layer_norm.tried", made=made, shape=fmt_shape(x.shape), seed=ctx.seed, rows=rows)
    out = _forward(ctx, learner, x, tried)
    ln = _reference(D, DEFAULT_EPS, w, b)
    if not within(out, ln(x).detach()):
        _default_eps(ctx, cls, learner, x, ln, D, w, b, tried, made)
    _compare(ctx, out, x, ln, tried, AXES)

    made_eps = f"LayerNorm(d_model={D}, eps={eps:g})"
    try:
        other = ctx.build(cls, D, eps=eps, what=say("core.created", made=made_eps))
    except CheckFailure as e:
        if e.mistake is None and "eps" in (e.got or "") and "TypeError" in (e.got or ""):
            raise ctx.renamed(e, mistake=MISTAKE.eps_hard_coded, tried=made_eps,
                              mistake_hint=say("layer_norm.eps_argument_hint")) from None
        raise
    _parameters(ctx, other, D, made_eps)
    with torch.no_grad():
        other.weight.copy_(w)
        other.bias.copy_(b)
    tried_eps = say("layer_norm.tried", made=made_eps, shape=fmt_shape(x.shape), seed=ctx.seed, rows=rows)
    out_eps = _forward(ctx, other, x, tried_eps)
    _compare(ctx, out_eps, x, _reference(D, eps, w, b), tried_eps, AXES)

    xs = _inputs(ctx, N_ROWS, D=D)  # (N, D): tokens without a batch axis
    tried2 = say("layer_norm.tried", made=made, shape=say("layer_norm.two_d", shape=fmt_shape(xs.shape)),
                 seed=ctx.seed, rows=rows)
    out2 = _forward(ctx, learner, xs, tried2, mistake_if_raises=MISTAKE.hard_coded_axes)  # the same code worked on 3-D
    _compare(ctx, out2, xs, _reference(D, DEFAULT_EPS, w, b), tried2, ("row", "feature"))

    # gradients: weight, bias and x, against nn.LayerNorm's
    ln = _reference(D, DEFAULT_EPS, w, b)
    r = ctx.randn(B, T, D)  # a random upstream gradient
    x_learner, x_ref = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    learner.zero_grad(set_to_none=True)
    got = ctx.call(learner, x_learner, what=say("core.forward_called", tried=tried), names=("x",))
    if not (isinstance(got, torch.Tensor) and got.requires_grad):
        ctx.fail("core.no_gradient", tried=tried, mistake=MISTAKE.no_gradient)
    (got * r).sum().backward()
    (ln(x_ref) * r).sum().backward()
    for what, g, e, axes in (("weight", learner.weight.grad, ln.weight.grad, ("feature",)),
                             ("bias", learner.bias.grad, ln.bias.grad, ("feature",)),
                             (say("layer_norm.input_x"), x_learner.grad, x_ref.grad, AXES)):
        if g is None:
            ctx.fail("layer_norm.no_gradient_to", what=what, tried=say("layer_norm.backward_tried", tried=tried),
                     mistake=MISTAKE.no_gradient)
        if not within(g, e):
            err, i = max_abs_diff(g, e)
            ctx.fail("layer_norm.gradient", what=what, ref_value=e[tuple(i)].item(), at=where(i, axes),
                     value=g[tuple(i)].item(), err=err, tried=say("layer_norm.gradient_tried", tried=tried))
    return say("layer_norm.passed", n=2 * D, D=D, eps=eps)
