"""What the checks of module exercises share: distinct random weights in a reference module, copying weights into
the learner's module by name, counting parameters, and gradients that must reach named layers."""
from __future__ import annotations

import torch
from torch import nn

from ._core import Ctx
from ._text import MISTAKE


def randomise(ctx: Ctx, module: nn.Module, scale: float = 0.3) -> None:
    """Non-zero, distinct weights and biases in every parameter of ``module`` (drawn from the check's generator)."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(ctx.randn(*p.shape) * scale)


def copy_weights(learner: nn.Module, reference: nn.Module, names) -> None:
    """Copy the weight and bias (where the reference has one) of each named layer from ``reference`` into
    ``learner``; the learner's layers must already be checked to have the same shapes."""
    with torch.no_grad():
        for name in names:
            for attr in ("weight", "bias"):
                source = getattr(getattr(reference, name), attr)
                if source is not None:
                    getattr(getattr(learner, name), attr).copy_(source)


def copy_linears(ctx: Ctx, learner: nn.Module, reference: nn.Module, names, d_in: int, d_out: int) -> None:
    """Make sure each named layer of ``learner`` is ``nn.Linear(d_in, d_out)`` (:meth:`Ctx.linear` names what is
    wrong), then copy the reference's weights into them."""
    for name in names:
        ctx.linear(learner, name, d_in, d_out)
    copy_weights(learner, reference, names)


def count_params(params) -> int:
    """Elements of a module's parameters, or of an iterable of tensors; a tensor met twice counts once."""
    if isinstance(params, nn.Module):
        params = params.parameters()
    return sum(p.numel() for p in {id(p): p for p in params}.values())


def expect_param_count(ctx: Ctx, module: nn.Module, expected: int, message_id: str, mistakes=None, **values) -> int:
    """The module's parameter count; fail with ``message_id`` unless it is ``expected`` (its templates are filled
    with ``values`` and ``expected_n``; the count is the ``got:`` line). ``mistakes(n)`` names the mistake a wrong
    count ``n`` shows."""
    n = count_params(module)
    if n != expected:
        ctx.fail(message_id, got=str(n), mistake=mistakes(n) if mistakes else None, expected_n=expected, **values)
    return n


def check_gradients(ctx: Ctx, module: nn.Module, out: torch.Tensor, names, tried: str) -> None:
    """The output must depend differentiably on each named layer's weight (or on each named parameter)."""
    module.zero_grad(set_to_none=True)
    if not out.requires_grad:
        ctx.fail("core.no_gradient", tried=tried, mistake=MISTAKE.no_gradient)
    out.sum().backward()
    for name in names:
        name = name if "." in name else f"{name}.weight"
        p = module.get_parameter(name)
        if p.grad is None or not bool((p.grad != 0).any()):
            ctx.fail("module.no_gradient_to", name=name, layer=name.split(".")[0], tried=tried, mistake=MISTAKE.no_gradient)
