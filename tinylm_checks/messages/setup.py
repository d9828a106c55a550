"""Stage 00: the softmax warm-up (the environment's check speaks from ``environment``)."""

MISTAKES = {
    "softmax_wrong_dim": (
        "the softmax normalises over the wrong dimension",
        "normalise over the last dimension: .sum(dim=-1, keepdim=True)"),
    "softmax_unstable": (
        "exp() is taken of the raw scores: it overflows to inf for large ones (inf / inf = NaN) and underflows to 0 "
        "for very negative ones (0 / 0 = NaN)",
        "subtract the row maximum first: x - x.max(dim=-1, keepdim=True).values (the softmax does not change)"),
    "softmax_wrong_shift": (
        "the scores are shifted (or clamped), but not by each row's own maximum: some rows still overflow "
        "(inf / inf) or underflow to all zeros (0 / 0)",
        "subtract each row's own maximum, x.max(dim=-1, keepdim=True).values: then the largest exp() of every row "
        "is exactly 1, so nothing overflows and the sum is at least 1"),
    "softmax_not_normalised": (
        "exp(x) is not divided by its sum",
        "divide exp(x) by its sum over the last dimension"),
    "softmax_global_sum": (
        "exp(x) is divided by the sum over the whole tensor, not over each row",
        "sum over the last dimension only: .sum(dim=-1, keepdim=True)"),
    "log_softmax": (
        "this is the log-softmax (all values <= 0), not the softmax",
        "return exp(x - max) / sum(exp(x - max)), without taking a log"),
}

MESSAGES = {
    "softmax.random": "random scores",
    "softmax.large": "large scores (rows around 1000, -1000 and 0)",
    "softmax.tried": "x {shape}, {label}, float64, seed {seed}",
    "softmax.tried_x": "x {shape}",
    "softmax.what": "the softmax",
    "softmax.not_finite": {
        "problem": "the softmax of large scores contains NaN or inf",
        "expected": "finite values in [0, 1], e.g. {value:.4f} at {at}",
        "got": "{got_value} at {at}",
    },
    "softmax.shape_hint": "softmax keeps the shape of its input",
    "softmax.fallback": "compare with the formula exp(x - max) / sum(exp(x - max)), computed over the last dimension "
                        "of each row: print both for the tried: input",
    "softmax.passed": "equal to torch.softmax(x, dim=-1), each row sums to 1, stable for scores around ±1000",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "softmax_wrong_dim":
        "the dim of each reduction in your softmax (the max, the sum): which axis is one row?",
    "softmax_unstable":
        "the line that calls exp(): what the scores look like just before it",
    "softmax_wrong_shift":
        "the value you subtract (or clamp to) before exp(): what it is computed from",
    "softmax_not_normalised":
        "your return line: what happens to exp(x) after it is computed",
    "softmax_global_sum":
        "the sum in your denominator: which dim it runs over",
    "log_softmax":
        "the last steps of your softmax: where a log comes in, written by you or inside a call",
}
