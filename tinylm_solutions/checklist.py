"""Stage 09's lab answers: the overfit checklist, walked in order, and the repair of what it finds.

A model that cannot overfit one small batch (or overfits it *too* well) is checked in this order (the W03
lesson, §8; Karpathy, "A Recipe for Training Neural Networks", 2019): are the labels shifted? is the causal mask
right? are padded targets -100? does the optimizer hold every parameter? is dropout off for the test (the
train()/eval() state)? is the learning rate extreme? Each item is a probe of the setup that leaves it as it was.

A setup has ``model`` (TinyLM's forward signature), ``ids (B, T + 1)`` (padded with ``pad_id``), ``x = ids[:, :-1]``,
``y (B, T)`` (the next token, -100 where it is padding), ``optimizer`` and ``pad_id``; the lab's is
``tinylm_checks.probes.OverfitSetup``.
"""
from __future__ import annotations

import torch
from torch import nn

CHECKLIST = ("labels_not_shifted", "mask_sees_future", "padding_not_ignored", "parameters_not_in_optimizer",
             "dropout_on", "learning_rate_extreme")
IGNORE_INDEX = -100
LR_RANGE = (1e-4, 1e-1)
"""Learning rates outside this range are extreme for Adam(W) on a small model (1e-3 to 1e-2 are the usual)."""


def targets(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """The targets of windows ``ids (B, T + 1)``: ``(B, T)``, the next token, -100 where it is padding."""
    nxt = ids[:, 1:]  # (B, T): the token after each input
    return nxt.masked_fill(nxt == pad_id, IGNORE_INDEX)


def labels_shifted(setup) -> bool:
    """Where the next token is a real one (not padding), the target is that token: ``y[b, t] == ids[b, t + 1]``."""
    nxt = setup.ids[:, 1:]  # (B, T): the token after each input
    real = nxt != setup.pad_id
    return bool((setup.y[real] == nxt[real]).all())


def mask_causal(setup, t: int = 3) -> bool:
    """Changing the tokens after position t leaves the logits at positions 0..t unchanged (eval mode, no grad;
    the model's mode is restored)."""
    model, x = setup.model, setup.x
    changed = x.clone()
    changed[:, t + 1:] = (changed[:, t + 1:] + 1) % model.vocab_size  # every later token replaced
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            a, b = model(x)[0], model(changed)[0]  # (B, T, V) each
    finally:
        model.train(was_training)
    return torch.allclose(a[:, :t + 1], b[:, :t + 1])


def padding_ignored(setup) -> bool:
    """Where the next token is padding, the target is -100."""
    return bool((setup.y[setup.ids[:, 1:] == setup.pad_id] == IGNORE_INDEX).all())


def optimizer_complete(setup) -> bool:
    """The optimizer holds every trainable parameter of the model (the same tensors, not copies)."""
    held = {id(p) for group in setup.optimizer.param_groups for p in group["params"]}
    return all(id(p) in held for p in setup.model.parameters() if p.requires_grad)


def dropout_off(setup) -> bool:
    """No dropout layer drops anything (``train_step`` puts the model in training mode, where dropout acts)."""
    return all(m.p == 0 for m in setup.model.modules() if isinstance(m, nn.Dropout))


def learning_rate_sane(setup) -> bool:
    """Every group's learning rate lies in :data:`LR_RANGE`."""
    return all(LR_RANGE[0] <= group["lr"] <= LR_RANGE[1] for group in setup.optimizer.param_groups)


PROBES = {"labels_not_shifted": "labels_shifted", "mask_sees_future": "mask_causal",
          "padding_not_ignored": "padding_ignored", "parameters_not_in_optimizer": "optimizer_complete",
          "dropout_on": "dropout_off", "learning_rate_extreme": "learning_rate_sane"}
"""Each item's probe (a function of this module, by name): it returns True when the setup passes the item."""


def overfit_checklist(setup) -> str | None:
    """The first item of :data:`CHECKLIST` that ``setup`` fails, or None; the setup is left as it was."""
    for name in CHECKLIST:
        if not globals()[PROBES[name]](setup):
            return name
    return None


def repair(setup, cause: str) -> None:
    """Fix ``cause`` (a name of :data:`CHECKLIST`) in ``setup``, in place, changing nothing else.

    Raises:
        ValueError: if ``cause`` is not a name of the checklist.
    """
    if cause in ("labels_not_shifted", "padding_not_ignored"):
        setup.y = targets(setup.ids, setup.pad_id)
    elif cause == "mask_sees_future":
        setup.model.mask_diagonal = 0  # tril(diagonal=0): position t reads 0..t
    elif cause == "parameters_not_in_optimizer":
        lr = setup.optimizer.param_groups[0]["lr"]
        setup.optimizer = type(setup.optimizer)(setup.model.parameters(), lr=lr)
    elif cause == "dropout_on":
        for m in setup.model.modules():
            if isinstance(m, nn.Dropout):
                m.p = 0.0
    elif cause == "learning_rate_extreme":
        for group in setup.optimizer.param_groups:
            group["lr"] = 3e-3
    else:
        raise ValueError(f"cause must be one of {CHECKLIST}, got {cause!r}")
