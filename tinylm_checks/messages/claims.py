"""Stage 11's claims lab: predictions, the comparison of a prediction with the run, the claims plot."""

MESSAGES = {
    "claims.predict.none": "No prediction yet. Order these from the lowest held-out loss to the highest, each once: "
                           "{variants}.",
    "claims.predict.made": "Your prediction: {order} (lowest held-out loss first).",
    "claims.predict.experiment": "unknown experiment {experiment}: expected one of {experiments}",
    "claims.predict.not_list": "the prediction is a list of the variants' names, lowest held-out loss first; got a "
                               "{got}",
    "claims.predict.variants": "a prediction lists each of {variants} once, lowest held-out loss first (unknown: "
                               "{unknown}; missing: {missing}; more than once: {twice})",
    "claims.compare.mismatch": "compare_prediction expects the prediction made with predict({experiment}, [...]) for "
                               "this run",
    "claims.compare.note": "{steps} steps per run; a loss cell is the held-out loss, mean (min to max) over seeds "
                           "{seeds}; rank 1 is the lowest mean.",
    "claims.compare.separated": "**What the runs separate:** {n} of the {total} pairs have the same order in every "
                                "seed: {pairs}.",
    "claims.compare.pair": "`{a}` < `{b}` (by {low:.3f} to {high:.3f})",
    "claims.compare.close": "**Too close to call** at this length (the order changes with the seed): {pairs}.",
    "claims.compare.yours": "**Your prediction** has {right} of those {n} pairs in the run's order.",
    "claims.compare.wrong": "It has these the other way round: {pairs}. Before you read on, find a reason (for a gap "
                             "of a few thousandths, the reason may be chance).",
    "claims.compare.no_prediction": "You made no prediction for this run (the prediction cell above was left "
                                    "empty).",
    "claims.col.variant": "variant",
    "claims.col.loss": "held-out loss",
    "claims.col.params": "parameters",
    "claims.col.ffn_params": "of them in the FFNs",
    "claims.col.rank": "rank",
    "claims.col.yours": "your rank",
    "claims.plot.unigram": "unigram loss",
    "claims.plot.ylabel": "held-out loss (nats)",
    "claims.plot.title": "{experiment}: {steps} steps, one dot per seed",
}
