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
}
