"""Stage 09's lab checks: ``overfit_checklist`` (walk the list in order, name the first item that fails) and
``repair`` (fix the named cause in place).

Both run on :class:`~tinylm_checks.probes.OverfitSetup` probes built here from the check's own random batches
(random lengths, padding, vocabulary), one per variant of every bug of :data:`~tinylm_checks.probes.OVERFIT_CHECKLIST`,
healthy ones in both modes and pairs of bugs; the learner's answers are compared with the bugs the setups were
built with, and each setup's state before and after the call shows what a probe or a repair changed. The
reference (:mod:`tinylm_solutions.checklist`) judges a repaired setup.
"""
from __future__ import annotations

import itertools
import inspect
import math

import torch

from .probes import OVERFIT_CHECKLIST, overfit_setup
from ._core import Ctx, check, reference
from ._text import MISTAKE, say

ref = reference("checklist")

__all__ = ["check_overfit_checklist", "check_repair"]

HEALTHY_LR = inspect.signature(overfit_setup).parameters["lr"].default
"""The healthy setups' learning rate (3e-3, the notebook's): a repaired ``learning_rate_extreme`` trains at it, so
that its run can be compared with the healthy one (another rate the checklist accepts, 1e-3 say, is not that run)."""
VARIANTS = {item: 4 if item == "parameters_not_in_optimizer" else 2 for item in OVERFIT_CHECKLIST}


def _batch(ctx: Ctx):
    """Random windows ``(B, T + 1)`` padded after random lengths (one row full), their pad id and vocabulary size."""
    V, B, T1 = 12 + ctx.seed % 5, 5, 13
    pad = V - 1
    ids = torch.randint(pad, (B, T1), generator=ctx.gen)  # real tokens are 0..V-2
    lengths = [T1, *torch.randint(4, T1, (B - 1,), generator=ctx.gen).tolist()]
    for b, n in enumerate(lengths):
        ids[b, n:] = pad
    return ids, pad, V


def _setup(ctx: Ctx, bugs: dict, eval_mode: bool = False):
    ids, pad, V = _batch(ctx)
    s = overfit_setup(ids, pad, V, bugs, seed=ctx.seed, d_model=16, num_layers=1,
                      lr=float(10 ** torch.empty(()).uniform_(-3.7, -1.3, generator=ctx.gen)))  # 2e-4 .. 5e-2
    s.model.train(not eval_mode)
    return s


def _words(bugs: dict, eval_mode: bool = False) -> str:
    if not bugs:
        return say("checklist.bug.healthy_eval" if eval_mode else "checklist.bug.healthy")
    words = [say(f"checklist.bug.{item}", variant=say(f"checklist.variant.{item}.{v}")) for item, v in bugs.items()]
    return words[0] if len(words) == 1 else say("checklist.two_bugs", first=words[0], second=words[1])


def _state(s) -> dict:
    """What a probe must leave alone, by the word the failure uses."""
    m = s.model.lab_state()
    opt = s._optimizer_state()
    return {"mode": m["training"], "weights": m["weights"], "model": (m["dropout"], m["mask_diagonal"], m["config"]),
            "batch": (s.ids, s.x, s.y), "optimizer": (opt["kind"], opt["groups"], opt["stepped"])}


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and bool((a == b).all())
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


# --------------------------------------------------------------------------- overfit_checklist

@check
def check_overfit_checklist(ctx: Ctx, fn) -> str:
    ctx.function(fn, "overfit_checklist")

    def answer(bugs: dict, eval_mode: bool = False):
        s = _setup(ctx, bugs, eval_mode)
        tried = say("checklist.called", setup=_words(bugs, eval_mode))
        before = _state(s)
        said = ctx.call(fn, s, what=tried)
        fails = [item for item in OVERFIT_CHECKLIST if not getattr(ref, ref.PROBES[item])(s)]
        after = _state(s)
        changed = [k for k in before if not _same(before[k], after[k])]
        if changed:
            mistake = MISTAKE.probe_left_mode if changed == ["mode"] else MISTAKE.probe_changed_setup
            ctx.fail("checklist.changed", what=say(f"checklist.what.{changed[0]}"), tried=tried, mistake=mistake)
        if said is not None and said not in OVERFIT_CHECKLIST:
            ctx.fail("checklist.not_a_name", value=repr(said), tried=tried)
        return said, tried, fails

    def judge(bugs: dict, said, tried: str, fails: list[str]):
        """A wrong answer: a later item the setup also fails (the list not walked in order), a probe that fires
        where its item is fine, or one that misses its bug. ``fails``: the items the setup fails, in order."""
        item = fails[0] if fails else None
        if said == item:
            return
        if said in fails:
            ctx.fail("checklist.out_of_order", first=repr(item), said=repr(said), tried=tried,
                     mistake=MISTAKE.checklist_out_of_order)
        order = OVERFIT_CHECKLIST.index
        if said is not None and (item is None or order(said) < order(item)):
            mistake = MISTAKE.mask_probe_in_train_mode if (said, item) == ("mask_sees_future", "dropout_on") else None
            ctx.fail("checklist.false_alarm", said=repr(said), want=repr(item), probe=say(f"checklist.probe.{said}"),
                     tried=tried, mistake=mistake)
        ctx.fail("checklist.missed", item=repr(item), said=repr(said), probe=say(f"checklist.probe.{item}"), tried=tried)

    for eval_mode in (False, True):
        said, tried, fails = answer({}, eval_mode)
        if said == "dropout_on" and not eval_mode and answer({}, True)[0] is None:
            ctx.fail("checklist.false_alarm", said=repr(said), want="None", probe=say("checklist.probe.dropout_on"),
                     tried=tried, mistake=MISTAKE.dropout_probe_reads_mode)
        judge({}, said, tried, fails)
    n_single = 0
    for item in OVERFIT_CHECKLIST:
        for variant in range(VARIANTS[item]):
            judge({item: variant}, *answer({item: variant}))
            n_single += 1
    judge({"dropout_on": 0}, *answer({"dropout_on": 0}, eval_mode=True))  # train_step will switch it on
    pairs = list(itertools.combinations(OVERFIT_CHECKLIST, 2))
    for first, second in pairs:
        judge({first: 0, second: 0}, *answer({first: 0, second: 0}))
    return say("checklist.passed", n_single=n_single, n_pairs=len(pairs))


# --------------------------------------------------------------------------- repair

def _causal(model) -> bool:
    """The model's mask is the causal mask itself (not one that also hides a token's own position)."""
    T = model.max_seq_len
    mask = model.attn_mask(T)
    return mask is not None and _same(mask, torch.ones(T, T, dtype=torch.bool).tril())


@check
def check_repair(ctx: Ctx, fn) -> str:
    ctx.function(fn, "repair")
    n = 0
    for cause in OVERFIT_CHECKLIST:
        for variant in range(VARIANTS[cause]):
            s = _setup(ctx, {cause: variant})
            tried = say("repair.called", cause=repr(cause), setup=_words({cause: variant}))
            before = _state(s)
            lr = s.optimizer.param_groups[0]["lr"]
            ctx.call(fn, s, cause, what=tried)
            after = _state(s)
            fix = say(f"repair.fix.{cause}")
            if not _same(before["weights"], after["weights"]):
                ctx.fail("repair.changed", what=say("checklist.what.weights"),
                         tried=tried, mistake=MISTAKE.repair_rebuilt_model)
            if not (_same(before["batch"][0], after["batch"][0]) and _same(before["batch"][1], after["batch"][1])):
                ctx.fail("repair.changed_batch", tried=tried)
            still = ref.overfit_checklist(s)
            if cause == "mask_sees_future" and not _causal(s.model):  # also one that hides more than the future
                still = cause
            if still == cause:
                ctx.fail("repair.not_fixed", cause=repr(cause), fix=fix, tried=tried)
            if still is not None:
                ctx.fail("repair.broke_other", cause=repr(cause), other=repr(still), fix=fix, tried=tried)
            rates = [g["lr"] for g in s.optimizer.param_groups]
            if cause == "learning_rate_extreme" and not all(math.isclose(r, HEALTHY_LR, rel_tol=1e-6) for r in rates):
                ctx.fail("repair.lr_not_healthy", lr=next(r for r in rates if not math.isclose(r, HEALTHY_LR,
                                                                                            rel_tol=1e-6)),
                         healthy=HEALTHY_LR, tried=tried, mistake=MISTAKE.repair_lr_not_healthy)
            if cause == "parameters_not_in_optimizer" and s.optimizer.param_groups[0]["lr"] != lr:
                ctx.fail("repair.changed", what=say("checklist.what.optimizer"), tried=tried,
                         mistake=MISTAKE.repair_changed_lr)
            if cause == "parameters_not_in_optimizer" and after["optimizer"][0] != before["optimizer"][0]:
                ctx.fail("repair.changed", what=say("checklist.what.optimizer_kind", before=before["optimizer"][0],
                                                    after=after["optimizer"][0]), tried=tried,
                         mistake=MISTAKE.repair_changed_optimizer)
            n += 1
    s = _setup(ctx, {})
    try:
        fn(s, "not_on_the_list")
    except ValueError:
        pass
    except Exception as e:  # noqa: BLE001 - learner code may raise anything
        ctx.fail("repair.unknown_cause", raised=type(e).__name__, tried=say("repair.called", cause="'not_on_the_list'",
                                                                           setup=_words({})))
    else:
        ctx.fail("repair.unknown_cause", raised=say("repair.nothing_raised"),
                 tried=say("repair.called", cause="'not_on_the_list'", setup=_words({})))
    return say("repair.passed", n=n)
