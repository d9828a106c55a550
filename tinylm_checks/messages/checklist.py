"""Stage 09's lab: the overfit checklist (overfit_checklist) and the repair of what it finds (repair)."""

MISTAKES = {
    "mask_probe_in_train_mode": (
        "the mask probe runs the model in training mode: with dropout on, two forwards differ anyway, so a setup "
        "whose only bug is dropout is reported as a mask that sees the future",
        "probe the mask in eval mode (model.eval(), under torch.no_grad()), then put the model back in the mode it "
        "was in"),
    "dropout_probe_reads_mode": (
        "the dropout item looks at model.training: training mode is right for training (train_step switches it on "
        "anyway); what breaks the overfit test is dropout that drops something",
        "look at the model's nn.Dropout layers: any(m.p > 0 for m in model.modules() if isinstance(m, nn.Dropout))"),
    "checklist_out_of_order": (
        "with two bugs in one setup, the answer is the later item of the list: the items are not checked in the "
        "list's order, or the function does not stop at the first one that fails",
        "loop over OVERFIT_CHECKLIST in order and return the first name whose probe fails"),
    "probe_left_mode": (
        "a probe leaves the model in another mode (eval or train) than it found it",
        "remember model.training before a probe and call model.train(was_training) afterwards"),
    "probe_changed_setup": (
        "running the checklist changes the setup (its weights, targets, batch or optimizer): a probe must only "
        "look",
        "probes compare, count and run forwards under torch.no_grad(); they never call backward() or "
        "optimizer.step() and never assign to the setup"),
    "repair_rebuilt_model": (
        "the repair replaces the model (or its weights): the setup's model is the one to train, and only its "
        "broken part needs fixing",
        "change the broken attribute of setup.model in place (its mask_diagonal, its dropout layers' p) instead "
        "of building a new model"),
    "repair_changed_optimizer": (
        "the repair of the optimizer builds another kind of optimizer: the kind was not the problem, so keep it",
        "build the new one with the old one's class: type(setup.optimizer)(setup.model.parameters(), lr=...)"),
    "repair_lr_not_healthy": (
        "the repair picks a learning rate the checklist accepts, but not the one the healthy setups train with: a "
        "repaired run is compared with the healthy run, and at another rate that comparison no longer tells whether "
        "the repair worked",
        "the lab's text on repair (the learning-rate item) names the rate a repaired setup trains at; the healthy "
        "setups were built with it too"),
    "repair_changed_lr": (
        "the repair of the optimizer changes the learning rate: the lr was not the problem, so keep it",
        "build the new optimizer with the old one's lr: setup.optimizer.param_groups[0]['lr']"),
}

MESSAGES = {
    "checklist.probe.labels_not_shifted": "compare y with ids[:, 1:] where the next token is real (ids[:, 1:] != pad_id): every "
                          "such target must be that next token",
    "checklist.probe.mask_sees_future": "change every token after a position t, run both batches in eval mode under no_grad and "
                            "compare the logits at positions 0..t: a causal model gives the same values",
    "checklist.probe.padding_not_ignored": "where the next token is padding (ids[:, 1:] == pad_id), the target must be -100",
    "checklist.probe.parameters_not_in_optimizer": "compare the tensors, not their values or shapes: collect id(p) of every "
                                   "p in optimizer.param_groups[...]['params'] and look for each of "
                                   "model.parameters()",
    "checklist.probe.dropout_on": "look for nn.Dropout layers in model.modules() whose p is above 0",
    "checklist.probe.learning_rate_extreme": "read every param_group's 'lr' and compare it with the range the notebook gives "
                             "(1e-4 to 1e-1)",
    "checklist.bug.healthy": "a healthy setup (training mode)",
    "checklist.bug.healthy_eval": "a healthy setup (eval mode)",
    "checklist.bug.labels_not_shifted": "a setup whose targets are not shifted ({variant})",
    "checklist.bug.mask_sees_future": "a setup whose mask lets position t read later tokens ({variant})",
    "checklist.bug.padding_not_ignored": "a setup whose padded targets are not -100 ({variant})",
    "checklist.bug.parameters_not_in_optimizer": "a setup whose optimizer misses parameters ({variant})",
    "checklist.bug.dropout_on": "a setup with dropout on ({variant})",
    "checklist.bug.learning_rate_extreme": "a setup with an extreme learning rate ({variant})",
    "checklist.variant.labels_not_shifted.0": "y = x",
    "checklist.variant.labels_not_shifted.1": "y is the token two ahead",
    "checklist.variant.mask_sees_future.0": "tril(diagonal=1)",
    "checklist.variant.mask_sees_future.1": "no mask in effect: mask_diagonal = max_seq_len, so "
                                            "tril(diagonal=mask_diagonal) lets every position read every token",
    "checklist.variant.padding_not_ignored.0": "padded targets are pad_id",
    "checklist.variant.padding_not_ignored.1": "padded targets are token 0",
    "checklist.variant.parameters_not_in_optimizer.0": "only the blocks' parameters",
    "checklist.variant.parameters_not_in_optimizer.1": "another model's parameters",
    "checklist.variant.parameters_not_in_optimizer.2": "all but the head",
    "checklist.variant.parameters_not_in_optimizer.3": "SGD over the blocks' parameters",
    "checklist.variant.dropout_on.0": "p = 0.3",
    "checklist.variant.dropout_on.1": "p = 0.5",
    "checklist.variant.learning_rate_extreme.0": "lr = 1e-7",
    "checklist.variant.learning_rate_extreme.1": "lr = 5.0",
    "checklist.two_bugs": "a setup with two bugs: {first} and {second}",
    "checklist.called": "overfit_checklist(setup) on {setup}",
    "checklist.not_a_name": {
        "problem": "overfit_checklist returned {value}",
        "expected": "None or one of the names in OVERFIT_CHECKLIST",
        "hint": "return a name exactly as OVERFIT_CHECKLIST spells it (a str), or None when every item passes",
    },
    "checklist.false_alarm": {
        "problem": "the probe for {said} fires on a setup where that item is fine",
        "expected": "{want}",
        "got": "{said}",
        "hint": "{probe}",
    },
    "checklist.missed": {
        "problem": "the probe for {item} does not see its bug",
        "expected": "{item}",
        "got": "{said}",
        "hint": "{probe}",
    },
    "checklist.out_of_order": {
        "problem": "with two bugs the function names the later item of the list",
        "expected": "{first} (it comes first in the list)",
        "got": "{said}",
    },
    "checklist.changed": {
        "problem": "the setup is not as it was after the checklist ran: {what} changed",
    },
    "checklist.what.mode": "the model's mode",
    "checklist.what.weights": "the model's weights",
    "checklist.what.model": "the model's mask or dropout",
    "checklist.what.batch": "the batch (ids, x or y)",
    "checklist.what.optimizer": "the optimizer",
    "checklist.what.optimizer_kind": "the optimizer's kind ({before} -> {after})",
    "checklist.passed": "the first failing item named for {n_single} setups with one bug (every variant of all six "
                        "items; dropout in both modes), {n_pairs} setups with two, and None for healthy setups in both modes; the setups "
                        "left as they were",
    # ---- repair
    "repair.called": "repair(setup, {cause}) on {setup}",
    "repair.fix.labels_not_shifted": "the targets are the next tokens: y = ids[:, 1:], with -100 where that token is "
                          "padding",
    "repair.fix.mask_sees_future": "the mask is tril(diagonal=setup.model.mask_diagonal): set mask_diagonal to 0",
    "repair.fix.padding_not_ignored": "set the targets to -100 wherever ids[:, 1:] is pad_id",
    "repair.fix.parameters_not_in_optimizer": "build a new optimizer of the same kind over setup.model.parameters(), with "
                                   "the old lr, and put it in setup.optimizer",
    "repair.fix.dropout_on": "set p = 0 on every nn.Dropout in setup.model.modules()",
    "repair.fix.learning_rate_extreme": "set every param_group's 'lr' to 3e-3, the healthy setups' rate",
    "repair.not_fixed": {
        "problem": "after the repair the setup still fails the {cause} item",
        "hint": "{fix}",
    },
    "repair.broke_other": {
        "problem": "after repairing {cause} the setup fails another item: {other}",
        "hint": "a repair must leave every other item passing; {fix}",
    },
    "repair.changed": {
        "problem": "the repair changed {what}",
    },
    "repair.lr_not_healthy": {
        "problem": "the repaired learning rate is {lr:g}: within the checklist's range, but not the healthy setups' "
                   "rate",
        "expected": "{healthy:g} in every param_group",
        "got": "{lr:g}",
    },
    "repair.changed_batch": {
        "problem": "the repair changes the batch (ids or x): the inputs were not the problem",
        "hint": "only y (the targets) may change, and only for the labels and padding items",
    },
    "repair.unknown_cause": {
        "problem": "repair accepted a cause that is not on the list",
        "expected": "ValueError",
        "got": "{raised}",
        "hint": "end with: else: raise ValueError(f'cause must be one of {{OVERFIT_CHECKLIST}}, got {{cause!r}}')",
    },
    "repair.nothing_raised": "nothing raised",
    "repair.passed": "each of the six causes repaired ({n} broken setups, every variant): the checklist then passes, "
                     "the model's weights, the batch and the learning rate kept; an unknown cause raises ValueError",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "mask_probe_in_train_mode":
        "your mask probe: the mode the model is in when it runs its two forwards",
    "dropout_probe_reads_mode":
        "your dropout probe: what it reads from the model to decide",
    "checklist_out_of_order":
        "the loop of overfit_checklist: the order it walks the items, and where it returns",
    "probe_left_mode":
        "each probe that calls eval() or train(): what it does after its forwards",
    "probe_changed_setup":
        "each probe: every line that writes to the setup or to anything it holds",
    "repair_rebuilt_model":
        "the branch of repair that fixes the model: what it assigns or loads into setup.model",
    "repair_changed_optimizer":
        "the line in repair that builds the new optimizer: which class it uses",
    "repair_lr_not_healthy":
        "the rate your repair's learning-rate branch sets: which rate do the healthy setups use?",
    "repair_changed_lr":
        "the line in repair that builds the new optimizer: which lr it passes",
}
