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
    # ---- calling generate (every run)
    "generate.tried": "generate(model, {args}) on a scripted model with max_seq_len={max_seq_len}, "
                      "vocab_size={vocab_size} ({what}; seed {seed})",
    "generate.a_generator": "a torch.Generator",
    "generate.tried.training_mode": "{tried}, the model in training mode",
    "generate.tried.eval_mode": "{tried}, the model in eval mode",
    "generate.tried.autograd_on": "{tried}, called with autograd on",
    "generate.raised": {
        "problem": "your code raised {error} when generate was called",
        "hint": "run your generate on the tried: input in a cell of its own and read the full traceback",
    },
    "generate.a_long_tensor": "a long tensor {shape}",
    "generate.not_a_tensor": {
        "problem": "generate did not return a tensor",
        "hint": "return the whole sequence, idx",
    },
    "generate.shape_with_prompt": "{shape}: the prompt, then {n_new} new tokens",
    "generate.only_new_tokens": {
        "problem": "the output has the wrong shape: it holds only the new tokens",
    },
    "generate.wrong_shape": {
        "problem": "the output has the wrong shape",
        "hint": "add exactly one token per step to every row, max_new_tokens steps: "
                "torch.cat((idx, idx_next), dim=1)",
    },
    "generate.wrong_dtype": {
        "problem": "the output has dtype {dtype}",
        "expected": "torch.int64 (long) token ids",
        "hint": "torch.multinomial and argmax return long ids: concatenate them to idx as they are, without converting "
                "to float",
    },
    "generate.prompt_changed": {
        "problem": "the output does not start with the prompt",
        "expected": "row {row} to start with {prompt}",
    },
    "generate.ids_outside_vocabulary": {
        "problem": "the output holds ids outside the vocabulary",
        "expected": "ids in 0 .. {last_id}",
        "hint": "draw ids with torch.multinomial over the vocabulary",
    },
    # ---- how the model was called (every run)
    "generate.model_not_called": {
        "problem": "generate never called the model",
        "expected": "one call of model(idx_cond) per new token",
        "got": "no call",
        "hint": "the logits come from the model: logits, _ = model(idx_cond)",
    },
    "generate.train_mode": {
        "problem": "the model was in training mode while generating",
        "expected": "every call of the model in eval mode",
        "got": "model.training was True",
    },
    "generate.grad_on": {
        "problem": "autograd was recording while generating",
        "expected": "the model called under torch.no_grad()",
        "got": "torch.is_grad_enabled() was True",
    },
    "generate.mode_changed": {
        "problem": "generate changed the model's mode",
        "expected": "model.training == {was_training} after generate, as before",
    },
    # ---- run 1: greedy (top_k=1) past max_seq_len
    "generate.greedy.what": "top_k=1 is greedy decoding",
    "generate.greedy.call_count": {
        "problem": "the model was called {calls} times for {n_new} new tokens",
        "expected": "{n_new} calls, one per new token",
        "got": "{calls} calls",
        "hint": "one call of the model per step of the loop, on the current (cropped) sequence",
    },
    "generate.greedy.wrong_context": {
        "problem": "at step {step} (sequence length {length}) the model was fed the wrong context",
        "expected": "the last {max_seq_len} tokens {right_shape}, row 0 {right_row}",
        "got": "ids {fed_shape}, row 0 {fed_row}",
        "hint": "at every step feed the whole sequence so far, cropped to its last max_seq_len tokens: "
                "idx[:, -model.max_seq_len:]",
    },
    "generate.greedy.not_argmax": {
        "problem": "with top_k=1, new token {step} of row {row} is not the most likely one",
        "expected": "token {best}, the argmax of the logits at the last position of the context {context}",
        "got": "token {token}",
        "hint": "top_k=1 keeps one token, the most likely one at the last position: logits[:, -1, :]",
    },
    "generate.greedy.differs": {
        "problem": "the greedy output differs from the reference",
    },
    # ---- run 2: a torch.Generator
    "generate.generator.what": "sampling, torch.Generator().manual_seed({generator_seed})",
    "generate.generator.tried": "generate(model, idx {shape}, max_new_tokens={n_new}, temperature=1.0) three times, "
                                "with generators seeded {seed_a}, {seed_b}, {seed_c} (seed {seed})",
    "generate.generator.same_seed_differs": {
        "problem": "the same generator seed gave different tokens",
        "expected": "the same output for the same seed",
        "got": "row 0: {first} then {second}",
    },
    "generate.generator.seeds_agree": {
        "problem": "two different generator seeds gave the same tokens",
        "expected": "different samples ({rows} rows x {n_new} tokens drawn from distributions with no token above "
                    "p = 0.6)",
        "got": "the same output, row 0: {tokens}",
    },
    # ---- frequencies (runs 3 to 6)
    "generate.rule": "|count - n p| <= {z:g} sqrt(n p (1 - p)) + {slack:g} for every token, n = {n}",
    "generate.off_by_zero_probability": "a probability of 0",
    "generate.off_by_deviations": "{deviations:.1f} standard deviations",
    # ---- runs 3 and 4: temperature, top-k
    "generate.sampling.what": "{prompts} prompts x {copies} copies, one new token each",
    "generate.sampling.outside_top_k": {
        "problem": "prompt {prompt}'s rows drew tokens {tokens}, which are not among the {top_k} largest logits of "
                   "their row",
    },
    "generate.sampling.top_k_not_drawn": {
        "problem": "prompt {prompt}'s rows never drew some of the {top_k} tokens top-k keeps",
    },
    "generate.sampling.misfit": {
        "problem": "the frequencies of the drawn tokens do not fit softmax(logits / temperature){over_top_k}",
    },
    "generate.sampling.over_top_k": " over the top-k",
    "generate.sampling.expected": "prompt {prompt}: frequencies near {near} ({kept} distinct tokens kept; {rule})",
    "generate.sampling.got": "{drawn} ({distinct} distinct tokens drawn); token {token} is off by {off_by}",
    "generate.sampling.hint": "divide the logits of the last position by the temperature, keep the top_k largest of "
                              "each row (the rest -inf), softmax, then "
                              "torch.multinomial(probs, 1, generator=generator)",
    # ---- run 5: every step
    "generate.steps.what": "{copies} copies of a 1-token prompt, {steps} new tokens each; the model's logits depend "
                           "on the position only",
    "generate.steps.misfit": {
        "problem": "the tokens of step {step} do not fit softmax(logits / temperature)",
        "expected": "step {step}: frequencies near {near} ({rule})",
        "got": "{drawn}; token {token} is off by {off_by}",
        "hint": "every step is the same: crop, call the model, divide the last position's logits by the temperature, "
                "filter top_k, softmax, draw",
    },
    # ---- run 6: the defaults
    "generate.defaults.tried": "generate(model, idx {shape}, max_new_tokens=1, generator={generator}), without "
                               "temperature and top_k, on a scripted model with max_seq_len=2, vocab_size={vocab_size} "
                               "(the defaults must be temperature=1.0, top_k=None; seed {seed})",
    "generate.defaults.raised": {
        "problem": "your code raised {error} when generate was called without temperature and top_k",
        "hint": "give temperature and top_k their defaults: temperature=1.0, top_k=None",
    },
    "generate.defaults.not_a_tensor": {
        "problem": "generate called without temperature and top_k returned something else",
    },
    "generate.defaults.top_k_cut": {
        "problem": "only the {kept} most likely of the {vocab_size} tokens were drawn: the default top_k cuts the rest",
    },
    "generate.defaults.misfit": {
        "problem": "the frequencies of the drawn tokens do not fit softmax(logits)",
    },
    "generate.defaults.expected": "frequencies near softmax(logits), all {vocab_size} tokens drawn: the 8 most likely "
                                  "together about {top_mass:.3f}, the {tail} least likely together about "
                                  "{tail_mass:.3f}",
    "generate.defaults.got": "{distinct} distinct tokens drawn; the 8 most likely together {top_mass:.3f}, the {tail} "
                             "least likely together {tail_mass:.3f}",
    # ---- the summary
    "generate.passed": "prompt kept; context cropped to the last max_seq_len={max_seq_len} tokens; next token from the "
                       "last position; eval mode, no autograd, mode restored; top_k=1 = greedy = reference; "
                       "reproducible with a generator; sample frequencies of {rows} rows fit softmax(logits / T) at "
                       "T=0.6 and with top_k={top_k} at T=1.5; every step of a 3-token run fits softmax(logits / 0.6); "
                       "called without temperature and top_k (vocabulary {vocab_size}) the samples fit "
                       "softmax(logits): the defaults are 1.0 and None",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "context_not_cropped":
        "what your loop feeds the model at each step once the sequence grows long",
    "context_cropped_from_front":
        "the slice that crops the context: which end of the sequence does it keep?",
    "context_crop_off_by_one":
        "the bounds of the slice that crops the context: count the tokens it keeps",
    "sampled_from_first_position":
        "the index that picks one position out of the model's logits",
    "prompt_not_kept":
        "what your loop appends each new token to, and what generate returns",
    "model_in_train_mode":
        "the start of generate, before the loop: which mode is the model in?",
    "gradients_recorded":
        "what surrounds your loop (or decorates generate): is autograd still on?",
    "generator_ignored":
        "the line that draws the next token: where does its randomness come from?",
    "no_generator_argument":
        "the signature of your generate",
    "greedy_instead_of_sampling":
        "the line that picks the next token from the logits",
    "temperature_multiplied":
        "the line where the temperature meets the logits",
    "temperature_not_applied":
        "your steps from logits to probabilities: where does the temperature act, if anywhere?",
    "top_k_ignored":
        "the top-k step: whether it runs, and what it does to the logits outside the k largest",
    "top_k_keeps_k_plus_1":
        "the threshold of your top-k: which value it is, and the comparison made against it",
    "top_k_keeps_k_minus_1":
        "the top-k threshold and its comparison: follow a row's k-th largest logit through them",
    "top_k_keeps_one":
        "the column of the top-k values you take as the threshold: in which order are they?",
    "only_last_token_fed":
        "what you pass to the model at each step of the loop",
    "row_0_probabilities_for_every_row":
        "the tensor you hand to the sampler: its shape, and whether each row has its own",
    "temperature_first_step_only":
        "the line that applies the temperature, and what it reads on the later steps",
    "wrong_default_top_k":
        "the default value of top_k in your signature",
    "wrong_default_temperature":
        "the default value of temperature in your signature",
    "top_k_filled_with_zero":
        "the value you put into the logits outside the k largest",
    "top_k_across_batch":
        "how you take the top-k threshold: along which dim, and is there one per row?",
}
