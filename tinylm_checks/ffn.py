"""Stage 05 checks: the position-wise feed-forward network (``FeedForward``) and the ``SwiGLU`` bonus.

Both checks build the learner's class with their own sizes (``B``, ``T``, ``D``, ``d_ff`` all different,
and ``d_ff != 4 D`` so that a hard-coded ``4 * d_model`` shows), copy the randomised weights of the
reference (:mod:`tinylm_solutions.ffn`) into it by name and compare outputs in float64. The reference
GELU is the exact (erf) form; the tanh approximation (``F.gelu(h, approximate="tanh")``, at most 5e-4
away) is accepted too: the output must equal one of the two versions within the usual tolerance.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ._core import ATOL, Ctx, check, compare, fmt_shape, max_abs_diff, reference, where, within
from ._modules import check_gradients, copy_weights, count_params, expect_param_count, randomise
from ._text import MISTAKE, hints, say

ref = reference("ffn")

__all__ = ["check_feed_forward", "check_swiglu"]

# ---- the mistakes these checks can name, each with the hint a learner reads when it is named


AXES = ("batch", "position", "feature")
ROWS_AXES = ("row", "feature")


def _sizes(seed: int) -> tuple[int, int, int, int]:
    """(B, T, D, d_ff): all different, d_ff never 4 D (nor D), so that each size is told apart."""
    return [(2, 5, 6, 20), (3, 4, 7, 18), (4, 3, 5, 14)][seed % 3]


def _swiglu_sizes(seed: int) -> tuple[int, int, int, int]:
    """(B, T, D, d_ff) for SwiGLU: all different, d_ff none of 4 D, D, int(8 D / 3), round(8 D / 3)."""
    return [(3, 4, 7, 16), (4, 3, 5, 12), (2, 5, 6, 20)][seed % 3]


N_ROWS = 11  # rows of the 2-D input: differs from every size above


def _layer(ctx: Ctx, module: nn.Module, attr: str, d_in: int, d_out: int, *, all_names: tuple[str, ...],
           made: str, d_ff: int, bias: bool = True) -> nn.Linear:
    """``module.<attr>``, an ``nn.Linear(d_in, d_out)`` (one side is d_model, the other d_ff). Names layers
    kept under other names (or in an nn.Sequential), layers created in forward, a hidden width that is not
    ``d_ff`` (the d_model side right, the d_ff side not), and sizes the wrong way round."""
    cls = type(module).__name__
    D = d_out if d_in == d_ff else d_in  # the module's input width, d_model
    expected = f"nn.Linear({d_in}, {d_out}" + ("" if bias else ", bias=False") + ")"
    if getattr(module, attr, None) is None:
        linears = [f"{n} ({type(m).__name__}({m.in_features}, {m.out_features}))"
                   for n, m in module.named_modules() if isinstance(m, nn.Linear)]
        if linears:
            ctx.fail("ffn.layer_elsewhere", cls=cls, attr=attr, layer=expected, linears=", ".join(linears),
                     attrs=", ".join(f"self.{a}" for a in all_names), mistake=MISTAKE.attribute_name)
        try:  # does forward create it? (on the check's own module: nothing the learner holds)
            with torch.no_grad():
                module(ctx.randn(2, 3, D))
        except Exception:  # noqa: BLE001 - only what forward leaves behind matters here
            pass
        if isinstance(getattr(module, attr, None), nn.Module):
            ctx.fail("ffn.layer_in_forward", cls=cls, attr=attr, layer=expected,
                     tried=say("ffn.layer_in_forward_tried", made=made, shape=fmt_shape((2, 3, D))),
                     mistake=MISTAKE.layers_created_in_forward)
    layer = ctx.attribute(module, attr, f"nn.Linear({d_in}, {d_out})")
    if isinstance(layer, nn.Linear):
        got = (f"nn.Linear({layer.in_features}, {layer.out_features}"
               + (", bias=False" if layer.bias is None else "") + ")")
        if (layer.in_features, layer.out_features) == (d_out, d_in):
            ctx.fail("ffn.sizes_swapped", cls=cls, attr=attr, tried=made, expected=expected, got=got,
                     mistake=MISTAKE.linear_sizes_swapped)
        width, other = ((layer.out_features, layer.in_features == D) if d_out == d_ff
                        else (layer.in_features, layer.out_features == D))
        if width != d_ff and other:  # the d_model side is right: only the hidden width is off
            ctx.fail("ffn.hidden_width", cls=cls, attr=attr, width=width, d_ff=d_ff, tried=made, expected=expected,
                     got=got, mistake=MISTAKE.hidden_width_not_d_ff)
    return ctx.linear(module, attr, d_in, d_out, bias=bias)


def _forward(ctx: Ctx, module, x, tried: str, shape, wide: int | None = None,
             mistake_if_raises: str | None = None) -> torch.Tensor:
    """Call ``module(x)`` and check the output is a finite float64 tensor of ``shape``; a result with
    ``wide`` (= d_ff) features instead of D means linear2 was not applied."""
    got = ctx.call(module, x, what=say("core.forward_called", tried=tried), names=("x",),
                   mistake_if_raises=mistake_if_raises)
    unprojected = (wide is not None and isinstance(got, torch.Tensor)
                   and tuple(got.shape) == (*shape[:-1], wide))
    return ctx.tensor(got, say("ffn.output"), shape, tried=tried, mistake=MISTAKE.linear2_not_applied if unprojected else None,
                      hint=say("ffn.output_shape_hint"))


def _activations(h: torch.Tensor):
    """Wrong activations for the hidden layer ``h``: a list of (mistake, activation(h))."""
    return [(MISTAKE.relu_not_gelu, F.relu(h)),
            (MISTAKE.gelu_sigmoid_approximation, h * torch.sigmoid(1.702 * h)),
            *((MISTAKE.other_activation, act(h)) for act in (F.silu, torch.sigmoid, torch.tanh, F.elu, F.softplus,
                                                      F.leaky_relu, F.relu6, F.mish, F.selu, F.celu)),
            (MISTAKE.no_nonlinearity, h)]


def _ffn_candidates(reference, x):
    """Known FeedForward mistakes on input ``x``, with the reference's weights: (mistake, output) pairs."""
    lin1, lin2 = reference.linear1, reference.linear2
    h = lin1(x)  # (..., d_ff)
    good = lin2(F.gelu(h))  # (..., D)
    cands = [(name, lin2(a)) for name, a in _activations(h)]
    cands += [(MISTAKE.activation_misplaced, act(lin2(act(h)))) for act in (F.gelu, F.relu)]  # after linear2 too
    cands += [(MISTAKE.activation_misplaced, F.gelu(lin2(h))),  # after linear2 instead
              (MISTAKE.activation_misplaced, lin2(lin1(F.gelu(x)))),  # before linear1
              (MISTAKE.residual_inside_ffn, x + good), (MISTAKE.residual_inside_ffn, x + lin2(F.relu(h)))]
    return [(n, o.detach()) for n, o in cands]


def _scale_candidates(got: torch.Tensor, expected: torch.Tensor, bias: torch.Tensor | None):
    """An extra constant factor c, on the hidden layer (out = bias + c (expected - bias)) or on the whole
    output (out = c expected), with c fitted to ``got`` by least squares: (EXTRA_SCALE, output) pairs; a fit
    that does not reproduce ``got`` names nothing."""
    cands = []
    for b in ([bias] if bias is not None else []) + [torch.zeros(())]:
        g, e = got - b, expected - b
        c = float((g * e).sum() / (e * e).sum())
        if abs(c - 1) > 1e-4 and abs(c) > 1e-3:
            cands.append((MISTAKE.extra_scale_factor, (c * e + b).detach()))
    return cands


def _deterministic(ctx: Ctx, module, x, out, tried: str) -> None:
    """A second call on the same input (training mode) must give the same output: no dropout."""
    again = _forward(ctx, module, x, say("ffn.second_call", tried=tried), tuple(out.shape))
    if not within(again, out):
        err, i = max_abs_diff(again, out)
        ctx.fail("ffn.not_deterministic", err=err, at=where(i, AXES), tried=say("ffn.called_twice", tried=tried),
                 mistake=MISTAKE.dropout_left_on)


def _two_d(ctx: Ctx, module, reference, made: str, D: int, candidates, accepted=None, bias=None) -> None:
    """On a 2-D input (N, D) (tokens without a batch axis) the same module must give the reference's output;
    it worked on (B, T, D), so an exception here shows code that assumes three dimensions."""
    xs = ctx.randn(N_ROWS, D)  # (N, D)
    tried = say("ffn.two_d_tried", made=made, shape=fmt_shape(xs.shape), seed=ctx.seed)
    out = _forward(ctx, module, xs, tried, (N_ROWS, D), mistake_if_raises=MISTAKE.hard_coded_axes)
    with torch.no_grad():
        expected = reference(xs)  # (N, D)
        if accepted is not None and within(out, accepted(xs)):
            return
        cands = candidates(reference, xs) + _scale_candidates(out.detach(), expected, bias)
    compare(ctx, out.detach(), expected, say("ffn.two_d_what"), tried, cands, axes=ROWS_AXES,
            fallback=say("ffn.two_d_fallback"))


def _is_affine(ctx: Ctx, module, shape, tried: str) -> bool:
    """The linearity probe: f(a) + f(b) - f(0) = f(a + b) holds for an affine map (and for no FFN with a
    nonlinearity, on random a and b)."""
    a, b = ctx.randn(*shape), ctx.randn(*shape)
    with torch.no_grad():
        outs = [ctx.call(module, t, what=say("core.forward_called", tried=tried), names=("x",))
                for t in (a, b, torch.zeros_like(a), a + b)]
    if not all(isinstance(o, torch.Tensor) and o.shape == outs[0].shape for o in outs):
        return False
    fa, fb, f0, fab = (o.double() for o in outs)
    return within(fa + fb - f0, fab, atol=1e-9)


def _position_wise(ctx: Ctx, module, x, out, tried: str) -> None:
    """Change one token of ``x``: the outputs at every other token (of every sequence) must not move."""
    B, T, D = x.shape
    b, t = B - 1, T // 2
    x2 = x.clone()
    x2[b, t] = ctx.randn(D) * 2
    out2 = _forward(ctx, module, x2, say("ffn.token_replaced", tried=tried, t=t, b=b), tuple(x.shape))
    moved = ((out2.detach() - out.detach()).abs() > ATOL + 1e-6 * out.detach().abs()).any(-1)  # (B, T)
    moved[b, t] = False
    if bool(moved.any()):
        i = moved.nonzero()[0].tolist()
        change = float((out2.detach() - out.detach())[tuple(i)].abs().max())
        ctx.fail("ffn.token_mixing", changed=where((b, t), AXES[:2]), moved=where(i, AXES[:2]), change=change,
                 tried=say("ffn.token_mixing_tried", tried=tried, t=t, b=b), mistake=MISTAKE.token_mixing)


@check
def check_feed_forward(ctx: Ctx, FeedForward) -> str:
    """Check ``FeedForward(d_model, d_ff)``: ``linear1 = nn.Linear(D, d_ff)``, ``linear2 = nn.Linear(d_ff, D)``,
    ``2 D d_ff + d_ff + D`` parameters; built in training mode, on (B, T, D): shape kept, two calls equal
    (no dropout), position-wise (changing one token moves no other output), equal to the reference
    ``linear2(GELU(linear1(x)))`` with copied weights (exact or tanh GELU); shape and values on a 2-D
    input; gradients reach both layers. Known mistakes are named by behaviour: the output they would give
    on the same input, and a linearity probe for a missing nonlinearity (Vaswani et al. 2017, §3.3;
    GELU: Hendrycks & Gimpel 2016)."""
    ctx.hints = hints("feed_forward.hints")
    cls = ctx.module_class(FeedForward, "FeedForward")
    B, T, D, d_ff = _sizes(ctx.seed)
    made = f"FeedForward(d_model={D}, d_ff={d_ff})"
    learner = ctx.build(cls, D, d_ff, what=say("core.created", made=made))
    learner.train()  # the check's own module: training mode, as a learner's model is while it trains
    names = ("linear1", "linear2")
    _layer(ctx, learner, "linear1", D, d_ff, all_names=names, made=made, d_ff=d_ff)
    _layer(ctx, learner, "linear2", d_ff, D, all_names=names, made=made, d_ff=d_ff)
    n, expected_n = count_params(learner), 2 * D * d_ff + d_ff + D
    if n != expected_n:
        extra = [f"{name} {fmt_shape(p.shape)}" for name, p in learner.named_parameters()
                 if name not in ("linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias")]
        ctx.fail("feed_forward.param_count", expected_n=expected_n, D=D, d_ff=d_ff, tried=made,
                 got=say("feed_forward.param_count_besides", n=n, extra=", ".join(extra)) if extra else str(n))

    reference = ref.FeedForward(D, d_ff).double()
    randomise(ctx, reference)
    copy_weights(learner, reference, names)
    x = ctx.randn(B, T, D)
    tried = say("feed_forward.tried", made=made, shape=fmt_shape(x.shape), seed=ctx.seed)
    out = _forward(ctx, learner, x, tried, (B, T, D), wide=d_ff)
    _deterministic(ctx, learner, x, out, tried)
    _position_wise(ctx, learner, x, out, tried)

    with torch.no_grad():
        expected = reference(x)  # (B, T, D), exact GELU
        tanh_gelu = reference.linear2(F.gelu(reference.linear1(x), approximate="tanh"))  # also accepted
    if not within(out, tanh_gelu) and not within(out, expected):
        if _is_affine(ctx, learner, (B, T, D), tried):
            ctx.fail("feed_forward.affine", tried=say("feed_forward.affine_tried", tried=tried), mistake=MISTAKE.no_nonlinearity)
        with torch.no_grad():
            cands = _ffn_candidates(reference, x) + _scale_candidates(out.detach(), expected, reference.linear2.bias)
        compare(ctx, out.detach(), expected, say("ffn.output"), say("feed_forward.both_gelus", tried=tried), cands,
                axes=AXES, fallback=say("feed_forward.fallback"))
    _two_d(ctx, learner, reference, made, D, _ffn_candidates, bias=reference.linear2.bias,
           accepted=lambda xs: reference.linear2(F.gelu(reference.linear1(xs), approximate="tanh")))
    check_gradients(ctx, learner, out, names, tried)
    return say("feed_forward.passed", D=D, d_ff=d_ff, n=n)


# --------------------------------------------------------------------------- bonus: SwiGLU

def _swiglu_candidates(reference, x):
    """Known SwiGLU mistakes on input ``x``, with the reference's weights: (mistake, output) pairs."""
    g, u, down = reference.gate_proj(x), reference.up_proj(x), reference.down_proj
    cands = [(MISTAKE.gate_wrong_branch, down(F.silu(u) * g)),
             (MISTAKE.silu_on_both_branches, down(F.silu(g) * F.silu(u)))]
    for act in (F.gelu, lambda z: F.gelu(z, approximate="tanh"), torch.sigmoid, F.relu, lambda z: z):
        cands += [(MISTAKE.swiglu_not_silu, down(act(g) * u)), (MISTAKE.swiglu_not_silu, down(act(u) * g))]
    cands += [(MISTAKE.no_gate, down(F.silu(g))), (MISTAKE.no_gate, down(F.silu(u))), (MISTAKE.no_gate, down(F.silu(g) + u)),
              (MISTAKE.no_gate, down(F.silu(u) + g)), (MISTAKE.no_gate, down(g)), (MISTAKE.no_gate, down(u))]
    good = down(F.silu(g) * u)  # (..., D)
    sx = F.silu(x)
    cands += [(MISTAKE.silu_misplaced, down(F.silu(g * u))),  # on the product instead of the gate
              (MISTAKE.silu_misplaced, F.silu(good)),  # after down_proj too
              (MISTAKE.silu_misplaced, F.silu(down(g * u))),  # after down_proj instead
              (MISTAKE.silu_misplaced, down(reference.gate_proj(sx) * reference.up_proj(sx))),  # on x, before the projections
              (MISTAKE.silu_misplaced, down(reference.gate_proj(sx) * u))]
    cands += [(MISTAKE.branch_projection_reused, down(F.silu(g) * g)), (MISTAKE.branch_projection_reused, down(F.silu(u) * u))]
    return [(n, o.detach()) for n, o in cands]


@check
def check_swiglu(ctx: Ctx, SwiGLU) -> str:
    """Check ``SwiGLU(d_model, d_ff)`` (bonus): ``gate_proj, up_proj = nn.Linear(D, d_ff, bias=False)``,
    ``down_proj = nn.Linear(d_ff, D, bias=False)``, ``3 D d_ff`` parameters; built in training mode, on
    (B, T, D): two calls equal (no dropout), position-wise, output ``down_proj(SiLU(gate_proj(x)) * up_proj(x))``
    equal to the reference with copied weights; the same on a 2-D input (N, D); gradients reaching all three
    layers (Shazeer 2020, "GLU Variants Improve Transformer", eq. 6)."""
    ctx.hints = hints("swiglu.hints")
    cls = ctx.module_class(SwiGLU, "SwiGLU")
    B, T, D, d_ff = _swiglu_sizes(ctx.seed)
    made = f"SwiGLU(d_model={D}, d_ff={d_ff})"
    learner = ctx.build(cls, D, d_ff, what=say("core.created", made=made))
    learner.train()
    names = ("gate_proj", "up_proj", "down_proj")
    for name in names:
        d_in, d_out = (d_ff, D) if name == "down_proj" else (D, d_ff)
        _layer(ctx, learner, name, d_in, d_out, all_names=names, made=made, d_ff=d_ff, bias=False)
    n = expect_param_count(ctx, learner, 3 * D * d_ff, "swiglu.param_count", tried=made, D=D, d_ff=d_ff)
    reference = ref.SwiGLU(D, d_ff).double()
    randomise(ctx, reference)
    copy_weights(learner, reference, names)
    x = ctx.randn(B, T, D)
    tried = say("swiglu.tried", made=made, shape=fmt_shape(x.shape), seed=ctx.seed)
    out = _forward(ctx, learner, x, tried, (B, T, D))
    _deterministic(ctx, learner, x, out, tried)
    _position_wise(ctx, learner, x, out, tried)
    with torch.no_grad():
        expected = reference(x)
        cands = _swiglu_candidates(reference, x) + _scale_candidates(out.detach(), expected, None)
    compare(ctx, out.detach(), expected, say("ffn.output"), tried, cands, axes=AXES, fallback=say("swiglu.fallback"))
    _two_d(ctx, learner, reference, made, D, _swiglu_candidates)
    check_gradients(ctx, learner, out, names, tried)
    return say("swiglu.passed", D=D, d_ff=d_ff, n=n)
