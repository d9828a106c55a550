"""Stage 07 checks: the Transformer block (Pre-LN and Post-LN), and counting its parameters.

``check_transformer_block`` compares the learner's block with PyTorch's own
``nn.TransformerEncoderLayer(d_model, nhead, d_ff, dropout=0.0, activation="gelu", batch_first=True,
norm_first=...)`` holding the same (random) weights: its ``in_proj_weight`` is ``W_Q, W_K, W_V`` stacked,
``out_proj`` is ``W_O``, and its bool ``src_mask`` means True = *blocked* (so it gets ``~mask``).

What the check needs from the learner's block (it copies its weights in by these names):

- ``norm1``, ``norm2``: two separate LayerNorms, each with parameters ``weight`` and ``bias`` of shape
  ``(D,)``: the course's ``LayerNorm`` or ``nn.LayerNorm(d_model)``;
- ``attn``: the course's ``MultiHeadSelfAttention`` (any module with ``W_Q, W_K, W_V, W_O =
  nn.Linear(D, D)`` that returns ``(out, weights)``), or ``nn.MultiheadAttention(d_model, num_heads,
  batch_first=True)``;
- ``ffn``: the course's ``FeedForward`` (``linear1 = nn.Linear(D, d_ff)``, ``linear2 = nn.Linear(d_ff, D)``,
  exact GELU between), or an ``nn.Sequential`` holding exactly those two ``nn.Linear`` layers and a GELU.

Classes are recognised by their attributes, not by ``isinstance`` against ``tinylm_solutions`` (graded runs
reload that package, so the learner's imported classes are other class objects).
"""
from __future__ import annotations

import inspect

import torch
import torch.nn.functional as F
from torch import nn

from ._core import CheckFailure, Ctx, check, close, compare, fmt_shape, reference, where, within
from ._modules import check_gradients, count_params, expect_param_count, randomise
from ._text import MISTAKE, hints, say


ref = reference("block")
ref_attention = reference("attention")
ref_multihead = reference("multihead")

__all__ = ["check_transformer_block", "check_block_parameter_counts", "check_causal_self_attention"]

# ---- exercise 1: TransformerBlock


OUT_AXES = ("batch", "position", "feature")


def _ln(norm_first: bool) -> str:
    """The wiring's name: "Pre-LN (norm_first=True)" or "Post-LN (norm_first=False)"."""
    return say("transformer_block.pre_ln") if norm_first else say("transformer_block.post_ln")


def _sizes(seed: int) -> tuple[int, int, int, int, int]:
    """(B, T, H, d_k, d_ff): B, T, H, d_k, D = H * d_k and d_ff all different, and d_ff != 4 D."""
    if seed == 0:
        return 3, 6, 2, 5, 16  # D = 10
    return (2, 7, 3, 4, 20) if seed % 2 else (4, 5, 2, 7, 22)  # D = 12, 14


# --------------------------------------------------------------------------- the learner's layout

def _submodule(ctx: Ctx, blk: nn.Module, name: str, expected: str) -> nn.Module:
    """``blk.<name>``; a missing one is reported with the submodules the block does have."""
    sub = getattr(blk, name, None)
    if isinstance(sub, nn.Module):
        return sub
    cls = type(blk).__name__
    children = [n for n, _ in blk.named_children()]
    if sub is not None:
        ctx.fail("transformer_block.not_a_module", cls=cls, attr=name, kind=type(sub).__name__, layer=expected)
    if name in ("norm1", "norm2"):
        norms = [n for n, m in blk.named_children() if _is_norm(m)]
        if len(norms) == 1:
            ctx.fail("transformer_block.one_norm", cls=cls, attr=name, norm=norms[0], mistake=MISTAKE.shared_layer_norm)
    renamed = [n for n in children if n not in ("norm1", "attn", "norm2", "ffn")]  # another name for the part?
    ctx.fail("transformer_block.no_submodule", cls=cls, attr=name, layer=expected,
             submodules=say("transformer_block.its_submodules", names=", ".join(children)) if children else "",
             mistake=MISTAKE.attribute_name if renamed else None)


def _is_norm(m: nn.Module) -> bool:
    w, b = getattr(m, "weight", None), getattr(m, "bias", None)
    return isinstance(w, torch.Tensor) and w.dim() == 1 and isinstance(b, torch.Tensor) and b.shape == w.shape \
        and not isinstance(m, nn.Linear)


def _layout(ctx: Ctx, blk: nn.Module, D: int, H: int, d_ff: int) -> tuple[dict[str, torch.Tensor], str]:
    """Where each of the reference block's parameters lives in the learner's block.

    Returns ``(targets, attn_kind)``: ``targets`` maps a reference parameter name (``"attn.W_Q.weight"``)
    to the learner's tensor (a view, for nn.MultiheadAttention's stacked ``in_proj_weight``) that the
    check writes that value into; ``attn_kind`` is "course" or "torch".
    """
    cls = type(blk).__name__
    targets: dict[str, torch.Tensor] = {}
    norm1 = _submodule(ctx, blk, "norm1", "LayerNorm(d_model)")
    attn = _submodule(ctx, blk, "attn", "MultiHeadSelfAttention(d_model, num_heads)")
    norm2 = _submodule(ctx, blk, "norm2", "LayerNorm(d_model)")
    ffn = _submodule(ctx, blk, "ffn", "FeedForward(d_model, d_ff)")
    if norm1 is norm2:
        ctx.fail("transformer_block.same_norm", cls=cls, mistake=MISTAKE.shared_layer_norm)
    for name, norm in (("norm1", norm1), ("norm2", norm2)):
        if not _is_norm(norm) or norm.weight.shape != (D,):
            ctx.fail("transformer_block.not_a_norm", cls=cls, attr=name, D=D, kind=type(norm).__name__,
                     params=", ".join(f"{n} {fmt_shape(p.shape)}" for n, p in norm.named_parameters()))
        targets[f"{name}.weight"], targets[f"{name}.bias"] = norm.weight, norm.bias

    if isinstance(attn, nn.MultiheadAttention):
        kind = "torch"
        if not attn.batch_first:
            ctx.fail("transformer_block.torch_not_batch_first", cls=cls)
        if attn.in_proj_weight is None or attn.in_proj_bias is None or attn.embed_dim != D:
            ctx.fail("transformer_block.torch_not_mha", cls=cls, D=D)
        if attn.num_heads != H:
            ctx.fail("transformer_block.torch_heads", cls=cls, heads=attn.num_heads, H=H)
        for i, n in enumerate(("W_Q", "W_K", "W_V")):
            targets[f"attn.{n}.weight"] = attn.in_proj_weight[i * D:(i + 1) * D]
            targets[f"attn.{n}.bias"] = attn.in_proj_bias[i * D:(i + 1) * D]
        targets["attn.W_O.weight"], targets["attn.W_O.bias"] = attn.out_proj.weight, attn.out_proj.bias
    elif all(hasattr(attn, n) for n in ("W_Q", "W_K", "W_V", "W_O")):
        kind = "course"
        heads = getattr(attn, "num_heads", H)
        if isinstance(heads, int) and heads != H:
            ctx.fail("transformer_block.heads", cls=cls, heads=heads, H=H)
        for n in ("W_Q", "W_K", "W_V", "W_O"):
            layer = ctx.linear(attn, n, D, D)
            targets[f"attn.{n}.weight"], targets[f"attn.{n}.bias"] = layer.weight, layer.bias
    else:
        ctx.fail("transformer_block.not_attention", cls=cls, kind=type(attn).__name__)

    if hasattr(ffn, "linear1") and hasattr(ffn, "linear2"):
        names = ("linear1", "linear2")
    else:
        names = tuple(n for n, m in ffn.named_children() if isinstance(m, nn.Linear))
        if not isinstance(ffn, nn.Sequential) or len(names) != 2:
            ctx.fail("transformer_block.not_ffn", cls=cls, kind=type(ffn).__name__)
    first = getattr(ffn, names[0])
    if isinstance(first, nn.Linear) and first.out_features == 4 * D != d_ff:
        ctx.fail("transformer_block.d_ff_ignored", cls=cls, width=first.out_features, d_ff=d_ff, mistake=MISTAKE.d_ff_ignored,
                 tried=f"TransformerBlock(d_model={D}, num_heads={H}, d_ff={d_ff})")
    for n, (d_in, d_out), key in zip(names, ((D, d_ff), (d_ff, D)), ("linear1", "linear2")):
        layer = ctx.linear(ffn, n, d_in, d_out)
        targets[f"ffn.{key}.weight"], targets[f"ffn.{key}.bias"] = layer.weight, layer.bias
    return targets, kind


def _reference(ctx: Ctx, D: int, H: int, d_ff: int) -> nn.Module:
    """The reference block with the check's weights: every parameter random and non-zero, LayerNorm
    weights around 1."""
    blk = ref.TransformerBlock(D, H, d_ff).double()
    with torch.no_grad():
        for name, p in blk.named_parameters():
            p.copy_((1.0 if name.startswith("norm") and name.endswith("weight") else 0.0) + ctx.randn(*p.shape) * 0.4)
    return blk


def _load(ctx: Ctx, blk: nn.Module, targets: dict[str, torch.Tensor], reference: nn.Module) -> None:
    """Write the reference's weights into the learner's block; fail when two names share one tensor."""
    params = dict(reference.named_parameters())
    with torch.no_grad():
        for name, t in targets.items():
            t.copy_(params[name])
    for name, t in targets.items():
        if not torch.equal(t, params[name]):
            other = next((n for n, u in targets.items() if n != name and u.data_ptr() == t.data_ptr()),
                         say("transformer_block.another_tensor"))
            part = name.split(".")[0]
            ctx.fail("transformer_block.shared_tensor", name=name, other=other,
                     mistake=MISTAKE.shared_layer_norm if part.startswith("norm") else MISTAKE.shared_projection if part == "attn" else None)


def _torch_layer(reference: nn.Module, D: int, H: int, d_ff: int, norm_first: bool) -> nn.Module:
    """nn.TransformerEncoderLayer holding the reference block's weights."""
    tel = nn.TransformerEncoderLayer(D, H, d_ff, dropout=0.0, activation="gelu", batch_first=True,
                                     norm_first=norm_first).double()
    a = reference.attn
    with torch.no_grad():
        tel.self_attn.in_proj_weight.copy_(torch.cat([a.W_Q.weight, a.W_K.weight, a.W_V.weight]))  # (3D, D)
        tel.self_attn.in_proj_bias.copy_(torch.cat([a.W_Q.bias, a.W_K.bias, a.W_V.bias]))  # (3D,)
        tel.self_attn.out_proj.load_state_dict(a.W_O.state_dict())
        tel.linear1.load_state_dict(reference.ffn.linear1.state_dict())
        tel.linear2.load_state_dict(reference.ffn.linear2.state_dict())
        tel.norm1.load_state_dict(reference.norm1.state_dict())
        tel.norm2.load_state_dict(reference.norm2.state_dict())
    return tel


def _expected(tel: nn.Module, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    with torch.no_grad():
        return tel(x, src_mask=None if mask is None else ~mask)  # src_mask: True = blocked


def _wirings(blk: nn.Module, x: torch.Tensor, mask: torch.Tensor | None, norm_first: bool):
    """Known wrong wirings, as (mistake, output) pairs, computed with the reference's weights."""
    A = lambda h, m=mask: blk.attn(h, m)[0]  # noqa: E731 - the attention's output (B, T, D)
    ffn, N1, N2 = blk.ffn, blk.norm1, blk.norm2
    relu = lambda h: ffn.linear2(torch.relu(ffn.linear1(h)))  # noqa: E731
    tanh = lambda h: ffn.linear2(F.gelu(ffn.linear1(h), approximate="tanh"))  # noqa: E731
    T = x.size(1)
    with torch.no_grad():
        if norm_first:
            def wire(n1=N1, n2=N2, m=mask, f=ffn):
                x1 = x + A(n1(x), m)
                return x1 + f(n2(x1))

            h = N1(x)
            a = A(h)  # (B, T, D)
            x1 = x + a
            normed1 = h + a  # residual from norm1(x)
            inside = x + N1(A(x))
            right = wire()
            cands = [(MISTAKE.residual_from_normalised, N2(normed1) + ffn(N2(normed1))),
                     (MISTAKE.residual_from_normalised, normed1 + ffn(N2(normed1))),
                     (MISTAKE.residual_from_normalised, N2(x1) + ffn(N2(x1))),
                     (MISTAKE.missing_residual, ffn(N2(a))), (MISTAKE.attn_residual_missing, a + ffn(N2(a))),
                     (MISTAKE.ffn_residual_missing, ffn(N2(x1))),
                     (MISTAKE.ffn_reads_block_input, x1 + ffn(N2(x))), (MISTAKE.ffn_reads_block_input, x1 + ffn(h)),
                     (MISTAKE.ffn_residual_adds_block_input, x + ffn(N2(x1))),
                     (MISTAKE.extra_final_norm, F.layer_norm(right, right.shape[-1:])), (MISTAKE.extra_final_norm, N2(right)),
                     (MISTAKE.extra_final_norm, N1(right)),
                     (MISTAKE.norm_inside_residual, inside + N2(ffn(inside)))]
        else:
            def wire(n1=N1, n2=N2, m=mask, f=ffn):
                x1 = n1(x + A(x, m))
                return n2(x1 + f(x1))

            a = A(x)
            x1 = N1(x + a)
            inside = x + N1(a)
            cands = [(MISTAKE.missing_residual, N2(ffn(N1(a)))), (MISTAKE.attn_residual_missing, N2(N1(a) + ffn(N1(a)))),
                     (MISTAKE.ffn_residual_missing, N2(ffn(x1))), (MISTAKE.ffn_reads_block_input, N2(x1 + ffn(x))),
                     (MISTAKE.ffn_residual_adds_block_input, N2(x + ffn(x1))),
                     (MISTAKE.norm_inside_residual, inside + N2(ffn(inside)))]
        # the learner's norm1 and norm2 are two modules here (_layout and _load fail a shared one first)
        cands += [(MISTAKE.norm2_unused, wire(n2=N1)), (MISTAKE.norm1_unused, wire(n1=N2)), (MISTAKE.norms_swapped, wire(n1=N2, n2=N1)),
                  (MISTAKE.ffn_activation, wire(f=relu)), (MISTAKE.ffn_activation, wire(f=tanh))]
        if mask is None:
            cands.append((MISTAKE.always_causal, wire(m=ref_attention.causal_mask(T))))
        else:
            cands += [(MISTAKE.mask_not_passed_on, wire(m=None)), (MISTAKE.mask_inverted, wire(m=~mask))]
    return cands


# --------------------------------------------------------------------------- running the learner's block

def _uses_weights(blk: nn.Module, args, expected: torch.Tensor) -> bool:
    """Does the block give the expected output when its attention returns (weights, out) instead of
    (out, weights)? Then it takes element [1] of the pair. (The check's own block; restored afterwards.)"""
    attn = getattr(blk, "attn", None)
    if not isinstance(attn, nn.Module) or "forward" in vars(attn):
        return False
    original = attn.forward

    def swapped(*a, **k):
        r = original(*a, **k)
        return (r[1], r[0]) if isinstance(r, tuple) and len(r) == 2 else r
    attn.forward = swapped
    try:
        with torch.no_grad():
            out = blk(*(a.clone() for a in args))
        return isinstance(out, torch.Tensor) and close(out, expected)
    except Exception:  # noqa: BLE001 - a block that fails this way too is not this mistake
        return False
    finally:
        del attn.forward


def _run(ctx: Ctx, blk: nn.Module, x: torch.Tensor, mask: torch.Tensor | None, tried: str,
         expected: torch.Tensor | None = None) -> torch.Tensor:
    """The block's output on ``x`` (and ``mask``), checked to be a finite (B, T, D) float64 tensor;
    ``expected`` (the right output) lets a failure be traced to the attention's weights used as its output."""
    args = (x,) if mask is None else (x, mask)
    try:
        out = ctx.call(blk, *args, what=say("core.forward_called", tried=tried), names=("x", "mask"))
    except CheckFailure as e:
        if e.mistake is None and expected is not None and _uses_weights(blk, args, expected):
            raise ctx.renamed(e, mistake=MISTAKE.attn_weights_used) from None
        if e.mistake is None and "tuple" in (e.got or ""):
            raise ctx.renamed(e, mistake=MISTAKE.attn_pair_not_unpacked) from None
        if e.mistake is None and mask is not None and "positional argument" in (e.got or ""):
            raise ctx.renamed(e, hint=say("transformer_block.mask_argument_hint")) from None
        raise
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor) and out[0].shape == x.shape:
        ctx.fail("transformer_block.returns_pair", tried=tried, shape=fmt_shape(x.shape), kind=type(out).__name__,
                 n=len(out), mistake=MISTAKE.block_returns_pair)
    if mask is not None and isinstance(out, torch.Tensor) and out.shape == x.shape and bool(torch.isnan(out).any()):
        nan_positions = torch.isnan(out).any(-1).any(0)  # (T,)
        if bool((nan_positions == mask.all(-1)).all()):  # NaN exactly where the inverted mask leaves no key
            ctx.fail("transformer_block.nan_where_all_allowed", tried=tried, mistake=MISTAKE.mask_inverted)
    return ctx.tensor(out, say("transformer_block.output"), tuple(x.shape), tried=tried,
                      hint=say("transformer_block.shape_hint"))


def _check_causal(ctx: Ctx, blk, x, mask, out, tried, reference, norm_first) -> None:
    """With a causal mask, changing the tokens after t changes nothing at t; changing t - 1 changes t."""
    B, T, D = x.shape
    t = T // 2
    later = x.clone()
    later[:, t + 1:] = ctx.randn(B, T - t - 1, D) + 1.0
    earlier = x.clone()
    earlier[:, t - 1] = ctx.randn(B, D) + 1.0
    with torch.no_grad():
        out_later = _run(ctx, blk, later, mask, say("transformer_block.tried_later", tried=tried, t=t))
        out_earlier = _run(ctx, blk, earlier, mask, say("transformer_block.tried_earlier", tried=tried, position=t - 1))

    def mistake():
        cands = [(n, o) for n, o in _wirings(reference, x, mask, norm_first) if n in (MISTAKE.mask_not_passed_on, MISTAKE.mask_inverted)]
        return next((n for n, o in cands if close(out, o)), None)
    leak = (out_later[:, : t + 1] - out[:, : t + 1]).abs().amax(-1)  # (B, t + 1)
    if bool((leak > 1e-9).any()):
        b, s = (int(i) for i in (leak > 1e-9).nonzero()[0])
        ctx.fail("transformer_block.leak", t=t, position=s, change=float(leak[b, s]), at=where([b, s], OUT_AXES),
                 tried=tried, mistake=mistake())
    moved = (out_earlier[:, t] - out[:, t]).abs().amax(-1)  # (B,)
    if not bool((moved > 1e-9).all()):
        ctx.fail("transformer_block.not_moved", position=t - 1, t=t, tried=tried, mistake=mistake())


def _check_gradients(ctx: Ctx, blk: nn.Module, x: torch.Tensor, mask, targets, tried) -> None:
    """Every weight matrix and LayerNorm weight the check loaded gets a non-zero gradient (not the biases:
    the key bias gets none, softmax ignores a constant added to a row of scores)."""
    blk.zero_grad(set_to_none=True)
    out = _run(ctx, blk, x, mask, tried)
    if not out.requires_grad:
        ctx.fail("core.no_gradient", tried=tried, mistake=MISTAKE.no_gradient)
    (out * ctx.randn(*out.shape)).sum().backward()
    names = {id(p): n for n, p in blk.named_parameters()}
    for name, t in targets.items():
        if not name.endswith("weight"):
            continue
        p = t if t._base is None else t._base  # a slice of in_proj_weight: its parameter
        grad = p.grad
        if grad is None or not bool((grad != 0).any()):
            learner_name = names.get(id(p), name)
            ctx.fail("transformer_block.no_gradient_to", name=learner_name, layer=learner_name.split(".")[0],
                     tried=tried, mistake=MISTAKE.no_gradient)
    blk.zero_grad(set_to_none=True)


def _build(ctx: Ctx, cls, D, H, d_ff, **kw) -> nn.Module:
    args = ", ".join([f"d_model={D}", f"num_heads={H}", f"d_ff={d_ff}"] + [f"{k}={v}" for k, v in kw.items()])
    return ctx.build(cls, D, H, d_ff, what=say("transformer_block.created", args=args), **kw)


@check
def check_transformer_block(ctx: Ctx, TransformerBlock) -> str:
    """Check ``TransformerBlock(d_model, num_heads, d_ff, norm_first=True)`` against
    ``nn.TransformerEncoderLayer`` with the same weights, Pre-LN and Post-LN, without a mask and with a
    causal mask (perturbing later tokens changes nothing earlier); the default is Pre-LN; parameter
    count ``4(D^2+D) + 2 D d_ff + d_ff + D + 4D`` (``12 D^2 + 13 D`` at ``d_ff = 4 D``); gradients reach
    every weight."""
    ctx.hints = hints("transformer_block.hints")
    cls = ctx.module_class(TransformerBlock, "TransformerBlock")
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        params = {}
    if params and "norm_first" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        ctx.fail("transformer_block.no_norm_first", expected="__init__(self, d_model, num_heads, d_ff, norm_first=True)",
                 got=f"__init__(self, {', '.join(params)})")
    B, T, H, d_k, d_ff = _sizes(ctx.seed)
    D = H * d_k
    reference = _reference(ctx, D, H, d_ff)
    x = ctx.randn(B, T, D) * 1.5 + ctx.randn(D) + 2.0  # (B, T, D), mean far from 0
    blocks, outs, expected, layouts, tels = {}, {}, {}, {}, {}
    for nf in (True, False):
        blocks[nf] = _build(ctx, cls, D, H, d_ff, norm_first=nf)
        layouts[nf] = _layout(ctx, blocks[nf], D, H, d_ff)
        if layouts[nf][1] == "torch":
            ctx.hints.update(hints("transformer_block.torch_mha_hints"))
        _load(ctx, blocks[nf], layouts[nf][0], reference)
        tels[nf] = _torch_layer(reference, D, H, d_ff, nf)
    sizes = say("transformer_block.sizes", D=D, H=H, d_ff=d_ff, shape=fmt_shape(x.shape), seed=ctx.seed)

    # ---- no mask: both wirings (compared together first, to tell a swap from a single wrong wiring)
    for nf in (True, False):
        tried = say("transformer_block.tried_no_mask", ln=_ln(nf), sizes=sizes)
        expected[nf] = _expected(tels[nf], x, None)
        with torch.no_grad():
            outs[nf] = _run(ctx, blocks[nf], x, None, tried, expected=expected[nf])
            again = _run(ctx, blocks[nf], x, None, say("transformer_block.tried_again", tried=tried))
        if not torch.equal(outs[nf], again):
            err = float((outs[nf] - again).abs().max())
            ctx.fail("transformer_block.not_deterministic", err=err, tried=tried, mistake=MISTAKE.dropout_in_block)
    if not (within(outs[True], expected[True]) and within(outs[False], expected[False])):
        tried = say("transformer_block.tried_both", pre_ln=_ln(True), post_ln=_ln(False), sizes=sizes)
        if close(outs[True], expected[False]) and close(outs[False], expected[True]):
            ctx.fail("transformer_block.pre_post_swapped", tried=tried, mistake=MISTAKE.pre_post_swapped)
        for nf in (True, False):
            if close(outs[True], outs[False]) and close(outs[True], expected[nf]):
                ctx.fail("transformer_block.norm_first_ignored", ln=_ln(nf), tried=tried, mistake=MISTAKE.norm_first_ignored)
    for nf in (True, False):
        tried = say("transformer_block.tried_no_mask", ln=_ln(nf), sizes=sizes)
        if within(outs[nf], expected[nf]):
            continue
        cands = _wirings(reference, x, None, nf) + [(MISTAKE.pre_post_swapped, expected[not nf])]
        compare(ctx, outs[nf], expected[nf], say("transformer_block.output_of", ln=_ln(nf)),
                say("transformer_block.tried_reference", tried=tried), cands, axes=OUT_AXES,
                fallback=say("transformer_block.fallback_pre") if nf else say("transformer_block.fallback_post"))

    # ---- the default is Pre-LN
    default = _build(ctx, cls, D, H, d_ff)
    _load(ctx, default, _layout(ctx, default, D, H, d_ff)[0], reference)
    tried = say("transformer_block.tried_default", D=D, H=H, d_ff=d_ff, shape=fmt_shape(x.shape), seed=ctx.seed)
    with torch.no_grad():
        got = _run(ctx, default, x, None, tried)
    if not within(got, expected[True]):
        ctx.fail("transformer_block.not_pre_ln_by_default", tried=tried,
                 got=say("transformer_block.got_post_ln") if close(got, expected[False])
                 else say("transformer_block.got_other"))

    # ---- a causal mask: causal by perturbation, then equal to PyTorch's layer
    mask = ref_attention.causal_mask(T)
    for nf in (True, False):
        tried = say("transformer_block.tried_causal", ln=_ln(nf), sizes=sizes, shape=fmt_shape(mask.shape))
        with torch.no_grad():
            out = _run(ctx, blocks[nf], x, mask, tried)
        _check_causal(ctx, blocks[nf], x, mask, out, tried, reference, nf)
        want = _expected(tels[nf], x, mask)
        if not within(out, want):
            cands = _wirings(reference, x, mask, nf) + [(MISTAKE.pre_post_swapped, _expected(tels[not nf], x, mask))]
            compare(ctx, out, want, say("transformer_block.output_with_mask", ln=_ln(nf)),
                    say("transformer_block.tried_reference", tried=tried), cands, axes=OUT_AXES,
                    fallback=say("transformer_block.fallback_mask"))
        _check_gradients(ctx, blocks[nf], x, mask, layouts[nf][0], tried)

    # ---- parameter counts: the general formula at this d_ff, 12 D^2 + 13 D at d_ff = 4 D
    for ff in (d_ff, 4 * D):
        blk = blocks[True] if ff == d_ff else _build(ctx, cls, D, H, ff, norm_first=True)
        n = count_params(blk)
        want = 4 * (D * D + D) + 2 * D * ff + ff + D + 4 * D
        if n != want:
            parts = {name: count_params(getattr(blk, name)) for name in ("norm1", "attn", "norm2", "ffn")}
            known = {id(p) for name in parts for p in getattr(blk, name).parameters()}
            others = [f"{name} {fmt_shape(p.shape)}" for name, p in blk.named_parameters() if id(p) not in known]
            formula = "12 D^2 + 13 D" if ff == 4 * D else "4 (D^2 + D) + 2 D d_ff + d_ff + D + 4 D"
            ctx.fail("transformer_block.param_count", tried=f"TransformerBlock(d_model={D}, num_heads={H}, d_ff={ff})",
                     formula=formula, want=want, attn=4 * (D * D + D), ffn=2 * D * ff + ff + D, norms=4 * D,
                     n=n, parts=", ".join(f"{k} {v:,}" for k, v in parts.items()),
                     outside=say("transformer_block.outside_parts", names=", ".join(others)) if others else "",
                     remove=say("transformer_block.remove", names=", ".join(o.split()[0] for o in others))
                     if others else "")
    return say("transformer_block.passed", n=12 * D * D + 13 * D)


# --------------------------------------------------------------------------- exercise 2: counting parameters

KEYS = ("attn", "ffn", "norms", "total")


def _numel(params) -> int:
    return sum(p.numel() for p in params)


def _count_variants(block: nn.Module) -> list[tuple[str, dict[str, int]]]:
    """Known wrong ways of counting, as (mistake, counts) pairs for this block: always the same mistakes in
    the same order, so that the pairs of several blocks line up."""
    D = block.norm1.weight.numel()
    attn, ffn, norm1, norm2 = (getattr(block, n) for n in ("attn", "ffn", "norm1", "norm2"))
    right = ref.block_parameter_counts(block)

    # Each way of counting comes twice: norms as norm1's count + norm2's (a shared LayerNorm twice, as
    # count(block.norm1) + count(block.norm2) does), and with each tensor once (as nn.ModuleList does).
    def by(select, each=False):  # only the parameters select() keeps
        parts = {"attn": count_params(p for p in attn.parameters() if select(p)),
                 "ffn": count_params(p for p in ffn.parameters() if select(p)),
                 "norms": (sum(count_params(p for p in m.parameters() if select(p)) for m in (norm1, norm2)) if each
                           else count_params(p for m in (norm1, norm2) for p in m.parameters() if select(p)))}
        return {**parts, "total": count_params(p for p in block.parameters() if select(p))}

    def sized(size, each=False):  # every tensor counted as size(p) elements
        parts = {k: sum(size(p) for p in m.parameters()) for k, m in (("attn", attn), ("ffn", ffn))}
        once = {id(p): p for m in (norm1, norm2) for p in m.parameters()}.values()
        parts["norms"] = sum(size(p) for m in (norm1, norm2) for p in m.parameters()) if each else sum(map(size, once))
        return {**parts, "total": sum(size(p) for p in block.parameters())}

    def both(name, make, *args):
        return [(name, make(*args)), (name, make(*args, each=True))]

    d_ff = next((m.out_features for m in ffn.modules() if isinstance(m, nn.Linear)), 4 * D)
    formula = {"attn": 4 * (D * D + D), "ffn": 8 * D * D + 5 * D, "norms": 4 * D, "total": 12 * D * D + 13 * D}
    general = {"attn": 4 * (D * D + D), "ffn": 2 * D * d_ff + d_ff + D, "norms": 4 * D}  # with the block's d_ff
    general["total"] = sum(general.values())
    weight_names = {id(p) for n, p in block.named_parameters() if n.endswith("weight")}
    a, f = right["attn"], right["ffn"]
    each = _numel(norm1.parameters()) + _numel(norm2.parameters())  # norm1's count + norm2's: a shared one twice
    with_duplicates = _numel(p for _, p in block.named_parameters(remove_duplicate=False))
    return [
        (MISTAKE.count_from_formula, formula), (MISTAKE.count_from_formula, general),
        (MISTAKE.count_from_formula, {**formula, "total": 12 * D * D}),
        (MISTAKE.count_from_formula, {**right, "total": 12 * D * D}),
        (MISTAKE.count_from_formula, {**right, "total": formula["total"]}),
        *both(MISTAKE.biases_not_counted, by, lambda p: p.dim() >= 2),
        *both(MISTAKE.biases_not_counted, by, lambda p: id(p) in weight_names),
        (MISTAKE.one_norm_counted, {**right, "norms": _numel(norm1.parameters())}),
        (MISTAKE.one_norm_counted, {**right, "norms": _numel(norm2.parameters())}),
        *both(MISTAKE.count_not_numel, sized, lambda p: 1), *both(MISTAKE.count_not_numel, sized, lambda p: len(p)),
        *both(MISTAKE.count_not_numel, sized, lambda p: p.size(0) * p.size(-1)),
        *both(MISTAKE.count_not_numel, sized, lambda p: p.size(-1)),
        (MISTAKE.total_not_sum, {**right, "total": a + f + right["norms"]}), (MISTAKE.total_not_sum, {**right, "total": a + f}),
        (MISTAKE.total_not_sum, {**right, "norms": each, "total": a + f + each}),
        (MISTAKE.shared_counted_twice, {**right, "norms": each}),
        (MISTAKE.shared_counted_twice, {**right, "norms": each, "total": with_duplicates}),
        (MISTAKE.shared_counted_twice, {**right, "total": with_duplicates}),
        *both(MISTAKE.trainable_only, by, lambda p: p.requires_grad),
        (MISTAKE.norm_counted_in_sublayer, {**right, "attn": a + _numel(norm1.parameters()),
                                    "ffn": f + _numel(norm2.parameters())}),
    ]


def _count_cases(seed: int):
    """(label, short label, block) triples: plain blocks of two sizes with d_ff != 4 D, then a block with a
    parameter outside the parts, one whose attention is frozen, one whose norms share one LayerNorm, and
    one whose LayerNorms have no bias (so that its counts differ from the formulas)."""
    sizes = [(12, 3, 20), (8, 2, 24)] if seed == 0 else [(10 + 2 * (seed % 3), 2, 18), (6, 3, 30 + seed % 2 * 4)]
    (D1, H1, f1), (D2, H2, f2) = sizes  # d_ff != 4 D; the weights' values don't matter here
    block1 = f"TransformerBlock(d_model={D1}, num_heads={H1}, d_ff={f1})"
    block2 = f"TransformerBlock(d_model={D2}, num_heads={H2}, d_ff={f2})"
    cases = [(block1, say("block_parameter_counts.first_block"), ref.TransformerBlock(D1, H1, f1)),
             (block2[:-1] + ", norm_first=False)", say("block_parameter_counts.post_ln_block"),
              ref.TransformerBlock(D2, H2, f2, norm_first=False))]
    extra = ref.TransformerBlock(D2, H2, f2)
    extra.scale = nn.Parameter(torch.ones(D2))  # (D,): a learned scale outside attn, ffn and the norms
    cases.append((say("block_parameter_counts.extra", block=block2, D=D2), say("block_parameter_counts.extra_block"),
                  extra))
    frozen = ref.TransformerBlock(D2, H2, f2)
    frozen.attn.requires_grad_(False)
    cases.append((say("block_parameter_counts.frozen", block=block2), say("block_parameter_counts.frozen_block"),
                  frozen))
    shared = ref.TransformerBlock(D1, H1, f1)
    shared.norm2 = shared.norm1
    cases.append((say("block_parameter_counts.shared", block=block1), say("block_parameter_counts.shared_block"),
                  shared))
    no_bias = ref.TransformerBlock(D1, H1, f1)
    no_bias.norm1, no_bias.norm2 = nn.LayerNorm(D1, bias=False), nn.LayerNorm(D1, bias=False)
    cases.append((say("block_parameter_counts.no_bias", block=block1), say("block_parameter_counts.no_bias_block"),
                  no_bias))
    return cases


def _diagnose_counts(results) -> tuple[str | None, int | None]:
    """The mistake that explains the learner's counts on all the blocks together, and the index of the first
    result it explains.

    ``results`` holds ``(values, expected, variants)`` per block. A variant that gives a wrong count where
    the learner's is right is not the learner's mistake; of the others, the one that explains the most
    wrong counts (over every block) wins, the earlier in the list on a tie.
    """
    best, best_score, first = None, 0, None
    for i in range(len(results[0][2])):
        score, hits = 0, []
        for r, (values, expected, variants) in enumerate(results):
            counts = variants[i][1]
            if any(values[k] == expected[k] != counts[k] for k in KEYS):
                break  # predicts a mistake the learner did not make
            n = sum(values[k] != expected[k] and values[k] == counts[k] for k in KEYS)
            score += n
            if n:
                hits.append(r)
        else:
            if score > best_score:
                best, best_score, first = results[0][2][i][0], score, hits[0]
    return best, first


def _snapshot(block: nn.Module):
    """What the learner's function must leave as it is: parameters (identity, value, requires_grad) and modes."""
    params = {n: (p, p.detach().clone(), p.requires_grad) for n, p in block.named_parameters(remove_duplicate=False)}
    modes = {n: m.training for n, m in block.named_modules(remove_duplicate=False)}
    return params, modes


def _mode(training: bool) -> str:
    return say("block.mode.train") if training else say("block.mode.eval")


def _changes(before, block: nn.Module) -> list[str]:
    """How ``block`` differs from its snapshot ``before``, in words (from the table)."""
    params, modes = before
    now = dict(block.named_parameters(remove_duplicate=False))
    out = [say("block.changes.removed", name=n) for n in params if n not in now]
    out += [say("block.changes.added", name=n) for n in now if n not in params]
    for n, (p, value, grad) in params.items():
        q = now.get(n)
        if q is None:
            continue
        if q is not p:
            out.append(say("block.changes.replaced", name=n))
        elif q.requires_grad != grad:
            out.append(say("block.changes.requires_grad", name=n, before=grad, after=q.requires_grad))
        elif q.dtype != value.dtype or q.shape != value.shape or not torch.equal(q.detach(), value):
            out.append(say("block.changes.values", name=n))
    now_modes = dict(block.named_modules(remove_duplicate=False))
    for n, training in modes.items():
        m = now_modes.get(n)
        if m is not None and m.training != training:
            out.append(say("block.changes.mode", module=n or say("block.changes.the_block"), before=_mode(training),
                           after=_mode(m.training)))
    return out


def _as_int(value):
    """The count as an int, or None when it is not a plain int (bool is not a count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@check
def check_block_parameter_counts(ctx: Ctx, block_parameter_counts) -> str:
    """Check ``block_parameter_counts(block) -> {"attn", "ffn", "norms", "total"}`` (plain ints) on blocks of
    several widths with d_ff != 4 D (where the d_ff = 4 D formulas fail), a block with a parameter outside
    the parts, one with a frozen attention, one with a shared LayerNorm and one whose LayerNorms have no
    bias; the blocks must come back unchanged. A wrong count is diagnosed from all the blocks' counts
    together."""
    fn = ctx.function(block_parameter_counts, "block_parameter_counts")
    results, labels = [], []
    for label, short, block in _count_cases(ctx.seed):
        tried = f"block = {label}"
        before = _snapshot(block)
        got = ctx.call(fn, block, what=say("core.called_with", tried=tried))
        changed = _changes(before, block)
        if changed:
            ctx.fail("block_parameter_counts.changed", changes="; ".join(changed[:3]),
                     more=say("block_parameter_counts.more_changes", n=len(changed) - 3) if len(changed) > 3 else "",
                     tried=tried, mistake=MISTAKE.block_changed)
        if not isinstance(got, dict):
            ctx.fail("block_parameter_counts.not_a_dict", tried=tried,
                     got=say("core.got_none") if got is None else type(got).__name__,
                     mistake=MISTAKE.missing_return if got is None else None)
        missing = [k for k in KEYS if k not in got]
        if missing:
            ctx.fail("block_parameter_counts.missing_keys", missing=", ".join(repr(k) for k in missing),
                     present=", ".join(map(repr, got)), tried=tried)
        values = {}
        for k in KEYS:
            values[k] = _as_int(got[k])
            if values[k] is None:
                kind = type(got[k])
                numeric = (isinstance(got[k], (float, torch.Tensor)) or kind.__module__.startswith("numpy"))
                ctx.fail("block_parameter_counts.not_an_int", key=repr(k), tried=tried,
                         got=f"{got[k]!r} ({kind.__module__}.{kind.__name__})"
                         if kind.__module__ != "builtins" else f"{got[k]!r} ({kind.__name__})",
                         mistake=MISTAKE.count_not_int if numeric else None)
        results.append((values, ref.block_parameter_counts(block), _count_variants(block)))
        labels.append((tried, short))
    wrong = [r for r, (values, expected, _) in enumerate(results) if values != expected]
    if wrong:
        mistake, first = _diagnose_counts(results)
        r = first if first is not None else wrong[0]
        values, expected, _ = results[r]
        k = next(k for k in KEYS if values[k] != expected[k])
        place = "block" if k == "total" else say("block_parameter_counts.both_norms") if k == "norms" else f"block.{k}"
        others = [labels[i][1] for i in wrong if i != r]
        if len(others) == len(labels) - 1 and len(others) > 1:
            others = say("block_parameter_counts.every_other_block")
        elif len(others) > 1:
            others = say("core.and", first=", ".join(others[:-1]), last=others[-1])
        else:
            others = "".join(others)
        ctx.fail("block_parameter_counts.wrong_count", key=repr(k), place=place,
                 counts=", ".join(f"{n} {values[n]:,}" for n in KEYS),
                 also=say("block_parameter_counts.also_wrong", blocks=others) if others else "",
                 tried=labels[r][0], expected=", ".join(f"{n} {expected[n]:,}" for n in KEYS), mistake=mistake)
    return say("block_parameter_counts.passed")


# ---- exercise 3: CausalSelfAttention, the production form

def _csa_candidates(W: dict, x: torch.Tensor, H: int) -> list:
    """Known mistakes of CausalSelfAttention with the weights ``W`` (``q, k, v, o``: (D, D) each, no biases): a
    list of (mistake, output (B, T, D)). The head and scale mistakes come from stage 02's table
    (:func:`tinylm_checks.multihead.head_variants`), which its MultiHeadSelfAttention check reads too."""
    from .attention import _candidates
    from .multihead import head_variants, heads_repeated

    B, T, D = x.shape
    d = D // H
    causal = ref_attention.causal_mask(T)
    merges = {"right": lambda y: y.transpose(1, 2), "none": lambda y: y,
              "interleaved": lambda y: y.permute(0, 2, 3, 1)}  # (B, H, T, d) -> what .reshape(B, T, D) reads

    def run(q="q", k="k", v="v", mask=causal, scale=None, merge="right", project=True, o_t=False):
        def heads(name):
            return F.linear(x, W[name]).view(B, T, H, d).transpose(1, 2)  # (B, T, D) -> (B, H, T, d)
        y = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), attn_mask=mask, scale=scale)  # (B, H, T, d)
        y = merges[merge](y).reshape(B, T, D)  # (B, T, D)
        return F.linear(y, W["o"].T if o_t else W["o"]) if project else y

    def rest(q, k, v):  # attention, merge and out, from (B, T, D) projections
        y = F.scaled_dot_product_attention(*(t.view(B, T, H, d).transpose(1, 2) for t in (q, k, v)), attn_mask=causal)
        return F.linear(y.transpose(1, 2).reshape(B, T, D), W["o"])

    heads = [F.linear(x, W[n]).view(B, T, H, d).transpose(1, 2) for n in "qkv"]  # (B, H, T, d) each
    by_hand = [(name, F.linear(o.transpose(1, 2).reshape(B, T, D), W["o"]))  # attention written by hand, wrong
               for name, (o, _) in _candidates(*heads, causal) if o is not None]
    layers = {f"W_{n.upper()}": (lambda w: lambda t: F.linear(t, w))(W[n]) for n in "qkv"}
    orders = [("q", "v", "k"), ("k", "q", "v"), ("k", "v", "q"), ("v", "q", "k"), ("v", "k", "q")]
    shared = [(name, F.linear(y, W["o"])) for name, (y, _) in head_variants(*(F.linear(x, W[n]) for n in "qkv"), H, causal)]
    return [(MISTAKE.not_causal, run(mask=None))] + [(MISTAKE.qkv_order, run(*o)) for o in orders] + shared + [
        (MISTAKE.merge_without_transpose, run(merge="none")), (MISTAKE.merge_interleaved, run(merge="interleaved")),
        (MISTAKE.no_scaling, run(scale=1.0)),
        (MISTAKE.w_o_not_applied, run(project=False)), (MISTAKE.weight_transposed, run(o_t=True)),
    ] + heads_repeated(x, layers, H, rest) + by_hand


def _untransposed_keys(ctx: Ctx, failure: CheckFailure, module: nn.Module, W: dict, B: int, H: int, d: int):
    """``failure`` renamed when the module computes ``q @ k`` (keys not transposed): run it again at T = d_head,
    where that runs, and compare with causal attention on those scores."""
    from .attention import keys_not_transposed

    T, D = d, H * d
    x = ctx.randn(B, T, D)
    q, k, v = (F.linear(x, W[n]).view(B, T, H, d).transpose(1, 2) for n in "qkv")  # (B, H, T, d)
    scores = (q @ k / d ** 0.5).masked_fill(~ref_attention.causal_mask(T), float("-inf"))  # k not transposed
    y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
    with torch.no_grad():
        return keys_not_transposed(ctx, failure, lambda: module(x.clone()), F.linear(y, W["o"]))


def _csa_attributes(ctx: Ctx, module: nn.Module, H: int, d: int, p: float) -> None:
    cls = type(module).__name__
    for attr, want in (("num_heads", H), ("d_head", d), ("dropout", p)):
        got = getattr(module, attr, None)
        if isinstance(got, nn.Module):  # a layer where a number belongs: the type is the problem, not the value
            ctx.fail("causal_self_attention.attribute_module", cls=cls, attr=attr, want=repr(want),
                     kind=type(got).__name__)
        if isinstance(got, bool) or not isinstance(got, (int, float)) or got != want:
            ctx.fail("causal_self_attention.attribute", cls=cls, attr=attr, want=repr(want), got=repr(got))


@check
def check_causal_self_attention(ctx: Ctx, CausalSelfAttention) -> str:
    """Check ``CausalSelfAttention(d_model, num_heads, dropout=0.0)``: ValueError when D % H != 0; ``qkv`` (D -> 3D)
    and ``out`` (D -> D) without biases, 4 D^2 parameters; in eval() equal to the stage 02 reference
    ``MultiHeadSelfAttention`` with a causal mask and the same weights, and deterministic with dropout > 0; in
    train() with dropout > 0 random, with whole attention weights dropped (not output elements) and right on
    average; gradients reaching both layers."""
    from .multihead import _sizes, expect_divisibility_error, nan_named

    ctx.hints = hints("causal_self_attention.hints")
    cls = ctx.module_class(CausalSelfAttention, "CausalSelfAttention")
    B, T, H, d = _sizes(ctx.seed)
    D = H * d
    reference = ref_multihead.MultiHeadSelfAttention(D, H).double()
    randomise(ctx, reference)
    with torch.no_grad():
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            getattr(reference, name).bias.zero_()  # the production form has no biases
    W = {k: getattr(reference, n).weight.detach() for k, n in zip("qkvo", ("W_Q", "W_K", "W_V", "W_O"))}
    x = ctx.randn(B, T, D)
    with torch.no_grad():
        expected = reference(x, ref_attention.causal_mask(T))[0]
        cands = _csa_candidates(W, x, H)

    def built(p: float) -> nn.Module:
        extra = f", dropout={p}" if p else ""
        module = ctx.build(cls, D, H, *((p,) if p else ()), what=say("causal_self_attention.created", D=D, H=H, extra=extra))
        _csa_attributes(ctx, module, H, d, p)
        ctx.linear(module, "qkv", D, 3 * D, bias=False)
        ctx.linear(module, "out", D, D, bias=False)
        with torch.no_grad():
            module.qkv.weight.copy_(torch.cat([W["q"], W["k"], W["v"]]))  # (3D, D)
            module.out.weight.copy_(W["o"])
        return module

    def forward(module, tried):
        out = ctx.call(module, x, what=say("core.forward_called", tried=tried), names=("x",))
        try:
            return ctx.tensor(out, say("causal_self_attention.out_what"), (B, T, D), tried=tried)
        except CheckFailure as failure:  # NaN in the output: a known mistake may give NaN just there
            raise nan_named(ctx, failure, out, cands) from None

    def tried(mode):
        return say("causal_self_attention.tried", D=D, H=H, shape=fmt_shape(x.shape), seed=ctx.seed, mode=mode)

    learner = built(0.0)
    expect_divisibility_error(ctx, cls, "CausalSelfAttention", D, H)

    n = expect_param_count(ctx, learner, 4 * D * D, "causal_self_attention.param_count", D=D)
    learner.eval()
    try:
        got = forward(learner, tried(say("causal_self_attention.eval")))
    except CheckFailure as failure:
        raise _untransposed_keys(ctx, failure, learner, W, B, H, d) from None
    compare(ctx, got.detach(), expected, say("causal_self_attention.out_what"), tried(say("causal_self_attention.eval")),
            cands, axes=("batch", "position", "feature"), fallback=say("causal_self_attention.fallback"))
    check_gradients(ctx, learner, got, ("qkv", "out"), tried(say("causal_self_attention.eval")))

    p, runs = 0.5, 40  # 40 calls: the mean of the output is within a few percent of the eval output
    dropping = built(p)
    dropping.eval()
    mode = tried(say("causal_self_attention.eval_dropout", p=p))
    with torch.no_grad():
        torch.manual_seed(ctx.seed)
        first, second = forward(dropping, mode), forward(dropping, mode)
    if not torch.equal(first, second):
        ctx.fail("causal_self_attention.eval_random", err=float((first - second).abs().max()), tried=mode,
                 mistake=MISTAKE.sdpa_dropout_in_eval)
    compare(ctx, first, expected, say("causal_self_attention.out_what"), mode, cands,
            axes=("batch", "position", "feature"), fallback=say("causal_self_attention.fallback"))
    dropping.train()
    mode = tried(say("causal_self_attention.train_dropout", p=p, n=runs))
    with torch.no_grad():
        torch.manual_seed(ctx.seed)
        outs = torch.stack([forward(dropping, mode) for _ in range(runs)])  # (runs, B, T, D)
    if all(torch.equal(outs[0], o) for o in outs[1:]):
        ctx.fail("causal_self_attention.train_fixed", p=p, n=runs, tried=mode, mistake=MISTAKE.dropout_not_in_training)
    zero_rows = (outs == 0).all(-1, keepdim=True)  # (runs, B, T, 1): queries whose every weight was dropped
    lone = ((outs == 0) & ~zero_rows).double().mean().item()
    if lone > 0.1:
        ctx.fail("causal_self_attention.output_zeros", share=lone, tried=mode, mistake=MISTAKE.output_dropout)
    mean = outs.mean(0)  # (B, T, D)
    scale = float((mean * expected).sum() / (expected * expected).sum())  # least-squares factor: mean ~ scale * expected
    if abs(scale - 1) > abs(scale - (1 - p)):
        ctx.fail("causal_self_attention.not_rescaled", n=runs, scale=scale, tried=mode, mistake=MISTAKE.dropout_not_rescaled)
    return say("causal_self_attention.passed", n=n)

