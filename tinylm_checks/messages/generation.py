"""Stage 10: generate."""

MISTAKES = {
    "context_not_cropped": (
        "the context is not cropped: once the sequence is longer than max_seq_len, the whole of it is fed to "
        "the model",
        "feed the model at most its last max_seq_len tokens at every step: idx_cond = idx[:, -model.max_seq_len:]"),
    "context_cropped_from_front": (
        "the context is cropped from the front: the model is fed the first max_seq_len tokens, not the last",
        "keep the most recent tokens, the ones the next token follows: idx[:, -model.max_seq_len:] (a negative "
        "start)"),
    "context_crop_off_by_one": (
        "the context is cropped to max_seq_len - 1 tokens instead of max_seq_len",
        "idx[:, -model.max_seq_len:] keeps exactly max_seq_len tokens: the model can take that many"),
    "sampled_from_first_position": (
        "the next token is drawn from the logits of the first position, not the last",
        "the prediction for the next token sits at the last position: logits[:, -1, :] (B, V)"),
    "prompt_not_kept": (
        "the returned sequence does not start with the prompt: only the new tokens come back, or the prompt was "
        "changed",
        "append each new token to the running sequence, idx = torch.cat((idx, idx_next), dim=1), and return all "
        "of it: (B, T + max_new_tokens)"),
    "model_in_train_mode": (
        "the model runs in training mode while generating (dropout would be on)",
        "call model.eval() before the loop (and put the model back in the mode it was in afterwards)"),
    "gradients_recorded": (
        "autograd records every step of generation: the loop does not run under torch.no_grad()",
        "decorate generate with @torch.no_grad() (or put the loop in `with torch.no_grad():`): sampling needs "
        "no gradients, and recording them costs memory at every step"),
    "generator_ignored": (
        "the generator argument is not used: the samples come from the global random number generator (or a "
        "seed of your own), so the same generator seed does not give the same tokens",
        "pass it to the sampler: torch.multinomial(probs, num_samples=1, generator=generator)"),
    "no_generator_argument": (
        "generate has no generator parameter",
        "add generator=None to the signature and pass it to torch.multinomial(..., generator=generator)"),
    "greedy_instead_of_sampling": (
        "the next token is always the most likely one (argmax): nothing is sampled",
        "draw from the distribution: probs = F.softmax(logits, dim=-1); torch.multinomial(probs, 1, "
        "generator=generator)"),
    "temperature_multiplied": (
        "the logits are multiplied by the temperature instead of divided by it",
        "logits / temperature: a temperature below 1 sharpens the distribution, above 1 flattens it"),
    "temperature_not_applied": (
        "the samples follow softmax(logits), as if temperature were 1: the temperature is missing, or applied "
        "to the probabilities after the softmax (torch.multinomial renormalises them, undoing it)",
        "divide the logits before the softmax: F.softmax(logits / temperature, dim=-1)"),
    "top_k_ignored": (
        "top_k is ignored: tokens outside the k most likely ones are drawn",
        "set every logit below the k-th largest of its row to -inf before the softmax"),
    "top_k_keeps_k_plus_1": (
        "top-k keeps k + 1 tokens per row (the threshold is the (k+1)-th largest logit, or a strict comparison "
        "against it)",
        "v, _ = torch.topk(logits, top_k); logits[logits < v[:, [-1]]] = -inf: the k-th value itself stays"),
    "top_k_keeps_k_minus_1": (
        "top-k keeps only k - 1 tokens per row (the k-th largest logit is removed too)",
        "keep the logits >= the k-th largest: logits.masked_fill(logits < v[:, [-1]], float('-inf'))"),
    "top_k_keeps_one": (
        "top-k keeps only one token per row, the most likely one, although top_k > 1 was asked (the threshold "
        "is the largest logit, v[:, [0]], instead of the k-th largest)",
        "v, _ = torch.topk(logits, top_k) sorts each row's values in descending order: the k-th largest is the "
        "last column, v[:, [-1]]; mask the logits below it"),
    "only_last_token_fed": (
        "the model is fed only the last token at every step, not the context",
        "feed the whole sequence so far, cropped to its last max_seq_len tokens: idx[:, -model.max_seq_len:] (a "
        "language model's next token depends on all the tokens in its context, not just the last one)"),
    "row_0_probabilities_for_every_row": (
        "every row draws from the first row's distribution (probs[0] or probs[:1] used for the whole batch)",
        "sample each row from its own probabilities: torch.multinomial(probs, 1) with probs (B, V) draws one "
        "token per row"),
    "temperature_first_step_only": (
        "the temperature is applied at the first step only: the later tokens are drawn from softmax(logits), as "
        "if temperature were 1",
        "divide the logits by the temperature at every step, inside the loop: logits = logits[:, -1, :] / "
        "temperature"),
    "wrong_default_top_k": (
        "called without top_k, generate still keeps only the most likely tokens: the default top_k is not None",
        "the defaults are temperature=1.0 and top_k=None (no filtering): def generate(model, idx, "
        "max_new_tokens, temperature=1.0, top_k=None, generator=None), and filter only `if top_k is not None`"),
    "wrong_default_temperature": (
        "called without temperature, the samples do not follow softmax(logits): the default temperature is not 1.0",
        "the defaults are temperature=1.0 and top_k=None (no filtering): def generate(model, idx, "
        "max_new_tokens, temperature=1.0, top_k=None, generator=None)"),
    "top_k_filled_with_zero": (
        "top-k sets the logits outside the k largest to 0 instead of -inf: those tokens keep the probability of "
        "a logit of 0 and are still drawn",
        "mask with -inf so that softmax gives them probability 0: logits.masked_fill(logits < v[:, [-1]], "
        "float('-inf'))"),
    "top_k_across_batch": (
        "top-k is applied across the batch (one threshold for all rows) instead of per row: some rows keep more "
        "or fewer than k tokens",
        "take the k-th largest of each row: v = torch.topk(logits, top_k, dim=-1).values; threshold v[:, [-1]] "
        "(B, 1), not v.min() or v[-1]"),
}

MESSAGES = {
}
