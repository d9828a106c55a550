"""Stage 11: the debugging lab (the bugs named, and their fixes)."""

MISTAKES = {
    "unknown_bug_name": (
        "the answer is not one of the names in BUG_NAMES",
        "return one of the strings printed by print(BUG_NAMES), spelled exactly (a str, in quotes)"),
    "wrong_bug_named": (
        "the name given is one of the bug names, but not the bug behind this symptom",
        "go back to the symptom and the probe, then read the broken code line by line: which line explains what "
        "you saw?"),
    "exp_overflow": (
        "exp() of large logits overflows to inf (above ~709 in float64, ~88 in float32), or of very negative "
        "ones underflows to 0, and inf / inf or 0 / 0 is NaN",
        "subtract each row's maximum before exp: log_z = m + log(sum(exp(logits - m))), then loss = log_z - "
        "logits[target] (or call F.cross_entropy / torch.logsumexp, which do exactly this)"),
    "shift_not_max": (
        "the logits are shifted by a constant that is not each row's maximum (the mean, the first logit, one "
        "maximum over the whole tensor, ...): fine for close logits, but when they are far apart exp overflows "
        "to inf for a logit far above the shift, or underflows to 0 for every logit of a row far below it "
        "(log(0) = -inf)",
        "shift by the maximum of each row, logits.max(dim=-1, keepdim=True).values: then the largest exp is "
        "exp(0) = 1"),
    "log_of_softmax": (
        "the probabilities are built (softmax) and then logged: a far-off target's probability underflows to 0 "
        "and log(0) = -inf",
        "no softmax, no division: loss = logsumexp(z) - z[target], with logsumexp computed as m + log(sum(exp(z "
        "- m)))"),
    "max_not_added_back": (
        "the row maximum is subtracted inside the exp but not added back to the log-sum-exp",
        "log(sum(exp(z))) = m + log(sum(exp(z - m))): add m back, or subtract it from the target's logit too"),
    "probability_clamped": (
        "the probability is clamped (p + eps, or clamp(min=eps)) before the log: no NaN, but the loss of a "
        "confident wrong prediction is capped at -log(eps) instead of its true value",
        "compute the log-probability directly, logits[target] - logsumexp(logits), instead of log(softmax + eps)"),
    "missing_minus_sign": (
        "the sign is missing: the result is the mean log-probability (<= 0), not the loss",
        "the cross-entropy is minus the log-probability of the target: -(log_softmax)[target], a number >= 0"),
    "elementwise_scores": (
        "the scores are (q * k).sum(-1): one score per query, shared by every key, so after the mask each row "
        "of weights is uniform over the keys it may see",
        "one score per (query, key) pair: scores = q @ k.transpose(-2, -1) / math.sqrt(d_k), shape (..., T_q, T_k)"),
    "missing_scale": (
        "the scores are not divided by sqrt(d_k)",
        "scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))"),
    "mask_sees_future": (
        "the mask lets position t attend to a later position (tril(diagonal=1), or a mask the wrong way round): "
        "the model reads the token it should predict",
        "True on and below the diagonal only: torch.ones(T, T, dtype=torch.bool).tril() (diagonal=0)"),
    "mask_hides_self": (
        "the mask hides the diagonal (tril(diagonal=-1)): no token may attend to itself, and token 0 to nothing "
        "at all (a softmax over -inf only: NaN, or zeros where attention guards against it)",
        "keep the diagonal: .tril() with diagonal=0, so token t sees 0..t"),
    "mask_hides_past": (
        "the mask hides earlier positions that token t may see (only the diagonal, or a band)",
        "token t sees every position 0..t: torch.ones(T, T, dtype=torch.bool).tril()"),
}

MESSAGES = {
    # ---- what every check of the lab says
    "debugging.called_with": "it was called with {inputs}",
    "debugging.was_called": "{call} was called",
    "debugging.gradients_taken": "gradients were taken through it",
    "debugging.the_loss": "the loss",
    # ---- naming the bug: fn() returns one of BUG_NAMES
    "bug_name.not_a_str": {
        "problem": "{call} returned {kind}, not a str",
        "expected": "one of the strings in BUG_NAMES",
    },
    "bug_name.unknown": {
        "problem": "{call} returned {answer}, which is not one of the bug names",
        "expected": "one of {names}",
    },
    "bug_name.wrong": {
        "problem": "{answer} does not explain this symptom",
    },
    # for each symptom, the hint a learner reads after choosing a wrong name: why that name does not explain it
    # (".other": any other wrong name)
    "nan_loss_bug.why_not.learning_rate_too_high": (
        "the probe needs no training at all: the same logits, scaled up, give NaN at any learning rate. Look at "
        "what the loss does with large logits"),
    "nan_loss_bug.why_not.other": (
        "the NaN appears in the loss itself, on fixed logits, once they are large: look at the first line of "
        "naive_cross_entropy and at what exp(100) is in float32"),
    "nan_loss_bug.passed": "{answer} is the bug behind the NaN loss",
    "uniform_attention_bug.why_not.missing_scale": (
        "without the 1/sqrt(d_k) the weights get *sharper*, not uniform; here every allowed key gets exactly the "
        "same weight: print the shape of `scores` before the mask"),
    "uniform_attention_bug.why_not.softmax_over_queries": (
        "the softmax is over dim=-1, the keys; print the shape of `scores` before the mask"),
    "uniform_attention_bug.why_not.other": (
        "the weights do not change when the keys change: look at how the scores are computed and at their shape"),
    "uniform_attention_bug.passed": "{answer} is the bug behind the uniform attention",
    "future_mask_bug.why_not.mask_hides_past": (
        "a mask that hides the past would make the loss worse, not better; print broken_causal_mask(4) and read "
        "row 0: which positions may token 0 see?"),
    "future_mask_bug.why_not.other": (
        "the loss is lower than a model that reads only the past can reach: print broken_causal_mask(4)"),
    "future_mask_bug.passed": "{answer} is the bug behind the suspiciously low loss",
    "unshifted_labels_bug.why_not.labels_shifted_twice": (
        "shifted twice, the model would predict two tokens ahead: harder, not easier. The probe shows it predicts "
        "the token it is reading"),
    "unshifted_labels_bug.why_not.mask_sees_future": (
        "the lab's mask is the healthy one here; the probe shows the model predicts the token at its own position: "
        "look at which label logits[:, t] is scored against"),
    "unshifted_labels_bug.why_not.other": (
        "the model learned to output the token it reads: look at which label logits[:, t] is compared with"),
    "unshifted_labels_bug.passed": "{answer} is the bug behind the copying model",
    # ---- stable_cross_entropy
    "stable_cross_entropy.hints": {
        "softmax_wrong_dim": "normalise each row over its V classes: max, exp-sum and log-softmax with dim=-1",
    },
    "stable_cross_entropy.probe_near": "logits near 1000, shape (2, 3)",
    "stable_cross_entropy.probe_far": "a row [0, -1000, -1] whose target logit is -1000, shape (2, 3)",
    "stable_cross_entropy.not_finite": {
        "problem": "the loss is {loss} for {inputs}",
        "expected": "{reference:.6g}, as F.cross_entropy",
    },
    "stable_cross_entropy.shape_hint": "return the mean over the N rows: a scalar tensor, shape ()",
    "stable_cross_entropy.normal": "logits ~ N(0, 9)",
    "stable_cross_entropy.large": "logits ~ 1000 + N(0, 1) (all large)",
    "stable_cross_entropy.negative": "logits ~ -1000 + N(0, 1) (all very negative)",
    "stable_cross_entropy.far_apart": "logits ~ N(0, 1000^2) (far apart)",
    "stable_cross_entropy.rows_far_apart": "row n ~ 2000 n + N(0, 1) (rows far apart: one shift for all rows fails)",
    "stable_cross_entropy.tried": "{logits}, shape ({N}, {V}), float64, targets of shape ({N},)",
    "stable_cross_entropy.fallback": "the loss is the mean over rows of logsumexp(logits[n]) - logits[n, targets[n]]",
    "stable_cross_entropy.tried_float32": "logits ~ 100 + N(0, 9) in float32, shape ({N}, {V})",
    "stable_cross_entropy.float32_loss": "the float32 loss",
    "stable_cross_entropy.gradient_computed": "its gradient was computed",
    "stable_cross_entropy.no_gradient": {
        "problem": "the loss carries no gradient",
    },
    "stable_cross_entropy.tried_requires_grad": "logits ~ N(0, 1000^2) with requires_grad=True",
    "stable_cross_entropy.wrong_gradient": {
        "problem": "the gradient is wrong for large logits",
        "expected": "(softmax(logits) - one_hot(targets)) / N, finite",
        "got": "largest difference {err:.3g}",
        "hint": "compute the loss with tensor operations only; the gradient follows",
    },
    "stable_cross_entropy.tried_gradient": "logits ~ N(0, 1000^2), d loss / d logits",
    "stable_cross_entropy.passed": "equals F.cross_entropy for logits of 1, 1000 and -1000, far apart, rows far apart, "
                                   "in float64 and float32, with its gradient",
    # ---- fixed_attention
    "fixed_attention.not_a_pair": {
        "problem": "the result is not a pair (out, weights)",
        "expected": "(out, weights)",
        "hint": "return out, weights",
    },
    "fixed_attention.nan_where_all_allowed": {
        "problem": "the weights are NaN in query row(s) {rows}, where the mask allows every key: a causal mask never "
                   "empties a row",
        "expected": "no NaN",
        "got": "NaN rows: filling where the mask is True fills the allowed keys; fill where ~mask",
    },
    "fixed_attention.weights": "weights",
    "fixed_attention.out": "out",
    "fixed_attention.tried": "q, k ({B}, {H}, {T}, {d_k}), v ({B}, {H}, {T}, {d_v}), float64, {mask}",
    "fixed_attention.causal_mask": "a causal mask ({T}, {T})",
    "fixed_attention.then_new_keys": "{inputs}, then new keys",
    "fixed_attention.then_k_replaced": "{inputs}, then k replaced",
    "fixed_attention.keys_ignored": {
        "problem": "the attention weights do not change when the keys change",
        "expected": "new keys, new weights",
        "got": "the same weights{uniform}",
        "hint": "each weight must come from its own query-key dot product",
    },
    "fixed_attention.uniform": ", uniform over the allowed keys (1/(t+1) in row t)",
    "fixed_attention.weights_fallback": "weights = softmax(q @ k^T / sqrt(d_k)), masked with -inf before the softmax",
    "fixed_attention.out_fallback": "out = weights @ v",
    "fixed_attention.weights_without_mask": "weights without a mask",
    "fixed_attention.passed": "weights follow the keys (not uniform), equal to softmax(q k^T / sqrt(d_k)) with and "
                              "without a mask",
    # ---- fixed_causal_mask
    "fixed_causal_mask.hints": {
        "mask_not_bool": "make it bool: torch.ones(T, T, dtype=torch.bool).tril(); True = may attend",
    },
    "fixed_causal_mask.not_bool": {
        "problem": "{call} has dtype {dtype}",
    },
    "fixed_causal_mask.tried": "a 2-layer TinyLM using your mask, input ids (2, {T}), then tokens {first}..{last} "
                               "changed",
    "fixed_causal_mask.forward": "a TinyLM using your mask ran forward",
    "fixed_causal_mask.reads_future": {
        "problem": "the logits at positions 0..{t} changed when only later tokens changed",
        "expected": "no change before position {first}",
        "got": "change up to {err:.3g}, at position {position}",
        "hint": "position t may read positions 0..t only",
    },
    "fixed_causal_mask.not_causal": {
        "problem": "{call} is not the causal mask",
        "expected": "row {row}: {values} (True on and below the diagonal)",
        "got": "row {row}: {values_got}",
        "hint": "torch.ones(T, T, dtype=torch.bool).tril()",
    },
    "fixed_causal_mask.passed": "a TinyLM using it ignores later tokens; equal to tril(ones(T, T)) for T = 1, 4, 7",
    # ---- fixed_lm_loss
    "fixed_lm_loss.tried_copying": "logits (B={B}, T={T}, V={V}) = 10 * one_hot(input_ids): a model copying its input, "
                                   "labels = input_ids",
    "fixed_lm_loss.tried_predicting": "logits (B={B}, T={T}, V={V}) = 10 * one_hot(next token): a model predicting the "
                                      "next token, labels = input_ids",
    "fixed_lm_loss.shape_hint": "return a scalar tensor, the mean over the targets",
    "fixed_lm_loss.copying_scores_well": {
        "problem": "a model that copies its input gets a loss of {loss:.3g}",
        "expected": "{reference:.4g}: copying the input is no help in predicting the next token",
    },
    "fixed_lm_loss.tried_padding": "random logits ({B}, {T}, {V}) float64, labels ({B}, {T}) with -100 at the last two "
                                   "positions of row 0",
    "fixed_lm_loss.fallback": "F.cross_entropy over logits[:, :-1] and labels[:, 1:], flattened, ignore_index=-100",
    "fixed_lm_loss.predicting_loss": "the loss of a model predicting the next token",
    "fixed_lm_loss.predicting_fallback": "logits[:, t] predicts labels[:, t + 1]: these logits should score a loss "
                                         "near 0",
    "fixed_lm_loss.passed": "copying the input scores badly, predicting the next token well; equal to the shifted "
                            "cross-entropy",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "unknown_bug_name":
        "the value your function returns: its type and spelling, against the printed BUG_NAMES",
    "wrong_bug_named":
        "the symptom this exercise names: what each other candidate bug would show instead",
    "exp_overflow":
        "the exp in your stable_cross_entropy: what its argument is for logits near ±1000",
    "shift_not_max":
        "the constant you subtract from the logits: what it is, and whether each row gets its own",
    "log_of_softmax":
        "the order of your steps: where a probability is formed and then logged",
    "max_not_added_back":
        "your log-sum-exp after the shift: what became of the maximum?",
    "probability_clamped":
        "the line just before the log: what is done to the probability there?",
    "missing_minus_sign":
        "the sign of the value your loss returns",
    "elementwise_scores":
        "the line of fixed_attention that computes the scores: what shape do they have?",
    "missing_scale":
        "the scores line of fixed_attention, between the product and the softmax",
    "mask_sees_future":
        "the mask fixed_causal_mask builds: in row t, the columns after t",
    "mask_hides_self":
        "the diagonal of the mask fixed_causal_mask builds: can token t see itself?",
    "mask_hides_past":
        "row t of the mask fixed_causal_mask builds: the columns before t",
}
