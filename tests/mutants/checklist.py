"""Wrong overfit checklists and repairs (stage 09's lab)."""
import torch
from torch import nn

from tinylm_checks import check_overfit_checklist, check_repair
from tinylm_solutions import checklist as ref

CHECKLIST = ref.CHECKLIST


def _walk(setup, **probes):
    """The reference walk with some probes replaced (by item name)."""
    for name in CHECKLIST:
        passes = probes.get(name) or getattr(ref, ref.PROBES[name])
        if not passes(setup):
            return name
    return None


# --------------------------------------------------------------------------- overfit_checklist

def checklist_stub(setup):
    raise NotImplementedError()


def checklist_no_return(setup):
    _walk(setup)


def checklist_targets_equal_inputs(setup):
    """Tests the labels by y == x: reads the shift backwards."""
    return _walk(setup, labels_not_shifted=lambda s: not bool((s.y == s.x).any()))


def checklist_labels_everywhere(setup):
    """Compares every target with ids[:, 1:], the -100 ones too."""
    return _walk(setup, labels_not_shifted=lambda s: bool((s.y == s.ids[:, 1:]).all()))


def _mask_probe(setup, eval_mode=True, restore=True, upto=True, t=3):
    model = setup.model
    was = model.training
    if eval_mode:
        model.eval()
    changed = setup.x.clone()
    changed[:, t + 1:] = (changed[:, t + 1:] + 1) % model.vocab_size
    with torch.no_grad():
        a, b = model(setup.x)[0], model(changed)[0]
    if restore:
        model.train(was)
    return torch.allclose(a[:, :t + 1], b[:, :t + 1]) if upto else torch.allclose(a, b)


def checklist_mask_in_train_mode(setup):
    """Probes the mask without model.eval(): dropout makes the two forwards differ."""
    return _walk(setup, mask_sees_future=lambda s: _mask_probe(s, eval_mode=False))


def checklist_mask_all_positions(setup):
    """Compares the logits at every position, the changed ones too."""
    return _walk(setup, mask_sees_future=lambda s: _mask_probe(s, upto=False))


def checklist_mask_mode_not_restored(setup):
    """Puts the model in eval mode for the mask probe and leaves it there."""
    return _walk(setup, mask_sees_future=lambda s: _mask_probe(s, restore=False))


def checklist_padding_by_value(setup):
    """Looks for pad_id among the targets: a padded target of another value passes."""
    return _walk(setup, padding_not_ignored=lambda s: not bool((s.y == s.pad_id).any()))


def checklist_optimizer_by_count(setup):
    """Counts the optimizer's parameters instead of comparing the tensors."""
    return _walk(setup, parameters_not_in_optimizer=lambda s: sum(
        len(g["params"]) for g in s.optimizer.param_groups) == len(list(s.model.parameters())))


def checklist_optimizer_by_value(setup):
    """Compares parameters by value: another model with the same initial weights looks complete."""
    def complete(s):
        held = [p for g in s.optimizer.param_groups for p in g["params"]]
        return all(any(p.shape == q.shape and torch.equal(p, q) for q in held) for p in s.model.parameters())
    return _walk(setup, parameters_not_in_optimizer=complete)


def checklist_dropout_by_mode(setup):
    """Takes training mode for the problem: 'is the model in eval mode?'."""
    return _walk(setup, dropout_on=lambda s: not s.model.training)


def checklist_lr_too_high_only(setup):
    """Flags only learning rates that are too high."""
    return _walk(setup, learning_rate_extreme=lambda s: all(g["lr"] <= 0.1 for g in s.optimizer.param_groups))


def checklist_reversed(setup):
    """Walks the list from the end."""
    for name in reversed(CHECKLIST):
        if not getattr(ref, ref.PROBES[name])(setup):
            return name
    return None


def checklist_last_failure(setup):
    """Collects every failing item and returns the last one."""
    failing = [name for name in CHECKLIST if not getattr(ref, ref.PROBES[name])(setup)]
    return failing[-1] if failing else None


def checklist_trains_to_test_lr(setup):
    """Tests the learning rate by taking a step and watching the loss."""
    def lr_ok(s):
        logits, _ = s.model(s.x)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), s.y.reshape(-1))
        s.optimizer.zero_grad()
        loss.backward()
        s.optimizer.step()
        return ref.learning_rate_sane(s)
    return _walk(setup, learning_rate_extreme=lr_ok)


def checklist_returns_list(setup):
    """Returns every failing item, a list."""
    return [name for name in CHECKLIST if not getattr(ref, ref.PROBES[name])(setup)]


def checklist_misspelled(setup):
    """Returns 'labels' instead of the list's name."""
    found = _walk(setup)
    return "labels" if found == "labels_not_shifted" else found


# --------------------------------------------------------------------------- repair

def repair_stub(setup, cause):
    raise NotImplementedError()


def _repair_but(cause_to_change, wrong):
    def repair(setup, cause):
        if cause == cause_to_change:
            return wrong(setup)
        return ref.repair(setup, cause)
    repair.__name__ = "repair" + wrong.__name__
    return repair


def _labels_without_ignore(s):
    s.y = s.ids[:, 1:].clone()


def _mask_hides_self(s):
    s.model.mask_diagonal = -1


def _mask_removed(s):
    s.model.mask_diagonal = None


def _optimizer_always_adamw(s):
    s.optimizer = torch.optim.AdamW(s.model.parameters(), lr=s.optimizer.param_groups[0]["lr"])


def _optimizer_default_lr(s):
    s.optimizer = torch.optim.AdamW(s.model.parameters())


def _optimizer_new_model(s):
    torch.manual_seed(12345)
    for module in s.model.modules():
        if hasattr(module, "reset_parameters"):
            module.reset_parameters()
    s.optimizer = torch.optim.AdamW(s.model.parameters(), lr=s.optimizer.param_groups[0]["lr"])


def _dropout_eval(s):
    s.model.eval()


def _lr_one(s):
    for g in s.optimizer.param_groups:
        g["lr"] = 1.0


def _lr_sane_not_healthy(s):
    for g in s.optimizer.param_groups:
        g["lr"] = 1e-3


def _labels_shift_inputs(s):
    s.x = s.ids[:, 1:].clone()
    s.y = ref.targets(s.ids, s.pad_id)


repair_labels_without_ignore = _repair_but("labels_not_shifted", _labels_without_ignore)
repair_labels_without_ignore.__doc__ = "Sets y = ids[:, 1:] and forgets -100 on padding."
repair_mask_hides_self = _repair_but("mask_sees_future", _mask_hides_self)
repair_mask_hides_self.__doc__ = "Sets mask_diagonal = -1: tril(-1) hides the token itself (row 0 reads nothing)."
repair_mask_removed = _repair_but("mask_sees_future", _mask_removed)
repair_mask_removed.__doc__ = "Removes the mask (None) instead of making it causal."
repair_always_adamw = _repair_but("parameters_not_in_optimizer", _optimizer_always_adamw)
repair_always_adamw.__doc__ = "Rebuilds the optimizer as AdamW whatever its kind was."
repair_optimizer_default_lr = _repair_but("parameters_not_in_optimizer", _optimizer_default_lr)
repair_optimizer_default_lr.__doc__ = "Builds the new AdamW with its default lr."
repair_reinitialises = _repair_but("parameters_not_in_optimizer", _optimizer_new_model)
repair_reinitialises.__doc__ = "Re-initialises the model's weights while rebuilding the optimizer."
repair_dropout_eval = _repair_but("dropout_on", _dropout_eval)
repair_dropout_eval.__doc__ = "Calls model.eval(): train_step switches training mode (and dropout) back on."
repair_lr_one = _repair_but("learning_rate_extreme", _lr_one)
repair_lr_one.__doc__ = "Sets lr = 1.0: still extreme."
repair_lr_sane_not_healthy = _repair_but("learning_rate_extreme", _lr_sane_not_healthy)
repair_lr_sane_not_healthy.__doc__ = "Sets lr = 1e-3: within the checklist's range, not the healthy setups' 3e-3 (issue 41)."
repair_moves_inputs = _repair_but("labels_not_shifted", _labels_shift_inputs)
repair_moves_inputs.__doc__ = "Shifts x instead of y."


def repair_ignores_unknown(setup, cause):
    """Does nothing for a cause not on the list."""
    if cause in CHECKLIST:
        ref.repair(setup, cause)


ROWS = [
    (check_overfit_checklist, checklist_stub, "not_implemented", "raised NotImplementedError"),
    (check_overfit_checklist, checklist_no_return, None, "does not see its bug"),
    (check_overfit_checklist, checklist_targets_equal_inputs, None, "fires on a setup where that item is fine"),
    (check_overfit_checklist, checklist_labels_everywhere, None, "fires on a setup where that item is fine"),
    (check_overfit_checklist, checklist_mask_in_train_mode, "mask_probe_in_train_mode", "fires on a setup"),
    (check_overfit_checklist, checklist_mask_all_positions, None, "fires on a setup where that item is fine"),
    (check_overfit_checklist, checklist_mask_mode_not_restored, "probe_left_mode", "the model's mode changed"),
    (check_overfit_checklist, checklist_padding_by_value, None, "does not see its bug"),
    (check_overfit_checklist, checklist_optimizer_by_count, None, "does not see its bug"),
    (check_overfit_checklist, checklist_optimizer_by_value, None, "does not see its bug"),
    (check_overfit_checklist, checklist_dropout_by_mode, "dropout_probe_reads_mode", "fires on a setup"),
    (check_overfit_checklist, checklist_lr_too_high_only, None, "does not see its bug"),
    (check_overfit_checklist, checklist_reversed, "checklist_out_of_order", "names the later item"),
    (check_overfit_checklist, checklist_last_failure, "checklist_out_of_order", "names the later item"),
    (check_overfit_checklist, checklist_trains_to_test_lr, "probe_changed_setup", "changed"),
    (check_overfit_checklist, checklist_returns_list, None, "overfit_checklist returned"),
    (check_overfit_checklist, checklist_misspelled, None, "overfit_checklist returned 'labels'"),
    (check_overfit_checklist, None, None, "expected the function overfit_checklist, got None"),
    (check_repair, repair_stub, "not_implemented", "raised NotImplementedError"),
    (check_repair, repair_labels_without_ignore, None, "fails another item: 'padding_not_ignored'"),
    (check_repair, repair_mask_hides_self, None, "still fails the 'mask_sees_future' item"),
    (check_repair, repair_mask_removed, None, "still fails the 'mask_sees_future' item"),
    (check_repair, repair_optimizer_default_lr, "repair_changed_lr", "the repair changed the optimizer"),
    (check_repair, repair_always_adamw, "repair_changed_optimizer", "the repair changed the optimizer's kind"),
    (check_repair, repair_reinitialises, "repair_rebuilt_model", "the repair changed the model's weights"),
    (check_repair, repair_dropout_eval, None, "still fails the 'dropout_on' item"),
    (check_repair, repair_lr_one, None, "still fails the 'learning_rate_extreme' item"),
    (check_repair, repair_lr_sane_not_healthy, "repair_lr_not_healthy", "the repaired learning rate is 0.001"),
    (check_repair, repair_moves_inputs, None, "changes the batch"),
    (check_repair, repair_ignores_unknown, None, "accepted a cause that is not on the list"),
    (check_repair, None, None, "expected the function repair, got None"),
]

LATE_FAILURE = {check_overfit_checklist: checklist_reversed, check_repair: repair_ignores_unknown}
STUB = {check_overfit_checklist: checklist_stub, check_repair: repair_stub}
