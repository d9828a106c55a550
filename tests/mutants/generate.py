"""Wrong ``generate`` (stage 10), each a learner's loop with one mistake."""
import torch
import torch.nn.functional as F

from tinylm_checks import check_generate


def _filter(logits, top_k):
    if top_k is not None:
        v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
        logits = logits.masked_fill(logits < v[:, [-1]], float("-inf"))
    return logits


def _loop(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None, *, crop=lambda idx, L: idx[:, -L:],
          position=-1, scale=lambda logits, t: logits / t, filt=_filter, sample=None, keep_prompt=True,
          eval_mode=True, no_grad=True, restore=True):
    """The reference loop with each step replaceable: the mutants below change one."""
    was_training = model.training
    if eval_mode:
        model.eval()
    out = idx
    with torch.set_grad_enabled(not no_grad):
        for _ in range(max_new_tokens):
            logits, _ = model(crop(out, model.max_seq_len))
            logits = filt(scale(logits[:, position, :], temperature), top_k)
            probs = F.softmax(logits, dim=-1)
            nxt = sample(probs, generator) if sample else torch.multinomial(probs, 1, generator=generator)
            out = torch.cat((out, nxt), dim=1)
    if restore:
        model.train(was_training)
    return out if keep_prompt else out[:, idx.size(1):]


def gen_gumbel(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Not a mistake: the Gumbel-max trick with the generator, another correct sampler (see ACCEPTED)."""
    def sample(probs, g):
        u = torch.rand(probs.shape, generator=g, dtype=torch.float64).clamp_min(1e-12)
        return (probs.double().log() - (-u.log()).log()).argmax(-1, keepdim=True)
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, sample=sample)


def gen_inverse_cdf(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Not a mistake: inverse-CDF sampling with torch.rand(generator=...) (see ACCEPTED)."""
    def sample(probs, g):
        u = torch.rand(probs.size(0), 1, generator=g, dtype=probs.dtype)
        return (probs.cumsum(-1) < u).sum(-1, keepdim=True).clamp_max(probs.size(-1) - 1)
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, sample=sample)


def gen_no_crop(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Feeds the whole sequence, however long."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, crop=lambda idx, L: idx)


def gen_crop_front(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Crops with idx[:, :L]: the first tokens."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, crop=lambda idx, L: idx[:, :L])


def gen_crop_off_by_one(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Crops with idx[:, -(L - 1):] once the sequence reaches L ("leave room for the next token")."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator,
                 crop=lambda idx, L: idx[:, -(L - 1):] if idx.size(1) >= L else idx)


def gen_first_position(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Samples from logits[:, 0, :]."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, position=0)


def gen_temperature_multiplied(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """logits * temperature."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, scale=lambda l, t: l * t)


def gen_temperature_after_softmax(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Divides the probabilities by the temperature (multinomial renormalises them)."""
    def sample(probs, g):
        return torch.multinomial(probs / temperature, 1, generator=g)
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, scale=lambda l, t: l, sample=sample)


def gen_top_k_plus_one(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Takes the (k+1)-th value as the threshold."""
    def filt(logits, k):
        if k is None:
            return logits
        v, _ = torch.topk(logits, k + 1)
        return logits.masked_fill(logits < v[:, [-1]], float("-inf"))
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, filt=filt)


def gen_top_k_minus_one(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Masks logits <= the k-th value: the k-th goes too."""
    def filt(logits, k):
        if k is None:
            return logits
        v, _ = torch.topk(logits, k)
        return logits.masked_fill(logits <= v[:, [-1]], float("-inf"))
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, filt=filt)


def gen_top_k_global(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """One threshold for the whole batch: v.min()."""
    def filt(logits, k):
        if k is None:
            return logits
        v, _ = torch.topk(logits, k)
        return logits.masked_fill(logits < v.min(), float("-inf"))
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, filt=filt)


def gen_top_k_last_row(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Takes the threshold of the last row for every row: v[-1, -1]."""
    def filt(logits, k):
        if k is None:
            return logits
        v, _ = torch.topk(logits, k)
        return logits.masked_fill(logits < v[-1, -1], float("-inf"))
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, filt=filt)


def gen_top_k_ignored(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Never filters."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, filt=lambda l, k: l)


def gen_greedy(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """argmax where sampling is asked."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator,
                 sample=lambda probs, g: probs.argmax(-1, keepdim=True))


def gen_global_rng(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """torch.multinomial(probs, 1): the generator is ignored."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator,
                 sample=lambda probs, g: torch.multinomial(probs, 1))


def gen_own_seed(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Seeds the global RNG itself (torch.manual_seed(0)) and ignores the generator."""
    torch.manual_seed(0)
    return gen_global_rng(model, idx, max_new_tokens, temperature, top_k, generator)


def gen_no_generator(model, idx, max_new_tokens, temperature=1.0, top_k=None):
    """The contract of the course's table, without the generator parameter."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, None, sample=lambda probs, g: torch.multinomial(probs, 1))


def gen_new_tokens_only(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Returns only the new tokens."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, keep_prompt=False)


def gen_train_mode(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Never calls model.eval()."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, eval_mode=False)


def gen_grad_on(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """No torch.no_grad(): autograd records every step."""
    def sample(probs, g):
        return torch.multinomial(probs.detach(), 1, generator=g)
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, no_grad=False, sample=sample)


def gen_mode_not_restored(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """model.eval() and never back."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, restore=False)


def gen_float_ids(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Returns the ids as floats."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator).float()


def gen_default_top_k_50(model, idx, max_new_tokens, temperature=1.0, top_k=50, generator=None):
    """Hugging Face's default top_k=50 (min(top_k, V) in the filter): a vocabulary of 50 or fewer never shows it."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator)


def gen_default_top_k_5(model, idx, max_new_tokens, temperature=1.0, top_k=5, generator=None):
    """A default top_k=5."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator)


def gen_top_k_or_50(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """`top_k = top_k or 50`: None becomes 50 inside."""
    return _loop(model, idx, max_new_tokens, temperature, top_k or 50, generator)


def gen_default_temperature_08(model, idx, max_new_tokens, temperature=0.8, top_k=None, generator=None):
    """A default temperature of 0.8."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator)


def gen_temperature_first_step_only(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Divides by the temperature at the first step only."""
    step = [0]

    def scale(logits, t):
        step[0] += 1
        return logits / t if step[0] == 1 else logits
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, scale=scale)


def gen_top_k_keeps_one(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Takes v[:, [0]], the largest value, as the threshold: one token kept whatever k."""
    def filt(logits, k):
        if k is None:
            return logits
        v, _ = torch.topk(logits, k)
        return logits.masked_fill(logits < v[:, [0]], float("-inf"))
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, filt=filt)


def gen_top_k_flattened(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """One top-k over the flattened batch: whole rows end up -inf (nan probabilities)."""
    def filt(logits, k):
        if k is None:
            return logits
        return logits.masked_fill(logits < torch.topk(logits.flatten(), k).values[-1], float("-inf"))
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, filt=filt)


def gen_top_k_zero_fill(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """masked_fill(..., 0.0) instead of -inf."""
    def filt(logits, k):
        if k is None:
            return logits
        v, _ = torch.topk(logits, k)
        return logits.masked_fill(logits < v[:, [-1]], 0.0)
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, filt=filt)


def gen_row0_probs(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Every row draws from row 0's probabilities."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator,
                 sample=lambda probs, g: torch.multinomial(probs[:1].expand_as(probs), 1, generator=g))


def gen_last_token_only(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Feeds idx[:, -1:], the last token only."""
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, crop=lambda idx, L: idx[:, -1:])


def gen_stub(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """The untouched learner stub."""
    raise NotImplementedError()


def gen_no_return(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Builds the sequence and forgets to return it."""
    _loop(model, idx, max_new_tokens, temperature, top_k, generator)


ROWS = [
    (check_generate, gen_no_crop, "context_not_cropped", "raised ValueError"),
    (check_generate, gen_crop_front, "context_cropped_from_front", "fed the wrong context"),
    (check_generate, gen_crop_off_by_one, "context_crop_off_by_one", "fed the wrong context"),
    (check_generate, gen_first_position, "sampled_from_first_position", "is not the most likely one"),
    (check_generate, gen_temperature_multiplied, "temperature_multiplied", "do not fit softmax"),
    (check_generate, gen_temperature_after_softmax, "temperature_not_applied", "do not fit softmax"),
    (check_generate, gen_top_k_plus_one, "top_k_keeps_k_plus_1", "which are not among the 3 largest"),
    (check_generate, gen_top_k_minus_one, "top_k_keeps_k_minus_1", "never drew some of the 3 tokens"),
    (check_generate, gen_top_k_global, "top_k_across_batch", "which are not among the 3 largest"),
    (check_generate, gen_top_k_last_row, "top_k_across_batch", "never drew some of the 3 tokens"),
    (check_generate, gen_top_k_ignored, "top_k_ignored", "which are not among the 3 largest"),
    (check_generate, gen_greedy, "greedy_instead_of_sampling", "two different generator seeds gave the same"),
    (check_generate, gen_global_rng, "generator_ignored", "the same generator seed gave different tokens"),
    (check_generate, gen_own_seed, "generator_ignored", "two different generator seeds gave the same"),
    (check_generate, gen_no_generator, "no_generator_argument", "raised TypeError"),
    (check_generate, gen_new_tokens_only, "prompt_not_kept", "holds only the new tokens"),
    (check_generate, gen_train_mode, "model_in_train_mode", "in training mode while generating"),
    (check_generate, gen_grad_on, "gradients_recorded", "autograd was recording"),
    (check_generate, gen_mode_not_restored, "mode_not_restored", "changed the model's mode"),
    (check_generate, gen_default_top_k_50, "wrong_default_top_k", "only the 50 most likely of the 64 tokens"),
    (check_generate, gen_default_top_k_5, "wrong_default_top_k", "only the 5 most likely of the 64 tokens"),
    (check_generate, gen_top_k_or_50, "wrong_default_top_k", "only the 50 most likely of the 64 tokens"),
    (check_generate, gen_default_temperature_08, "wrong_default_temperature", "do not fit softmax(logits)"),
    (check_generate, gen_temperature_first_step_only, "temperature_first_step_only",
     "the tokens of step 1 do not fit softmax(logits / temperature)"),
    (check_generate, gen_top_k_keeps_one, "top_k_keeps_one", "never drew some of the 3 tokens"),
    (check_generate, gen_top_k_flattened, "top_k_across_batch", "raised RuntimeError"),
    (check_generate, gen_top_k_zero_fill, "top_k_filled_with_zero", "which are not among the 3 largest"),
    (check_generate, gen_row0_probs, "row_0_probabilities_for_every_row", "do not fit softmax"),
    (check_generate, gen_last_token_only, "only_last_token_fed", "fed the wrong context"),
    # ---- no mistake named
    (check_generate, gen_float_ids, None, "the output has dtype torch.float32"),
    # ---- robustness
    (check_generate, None, None, "expected the function generate, got None"),
    (check_generate, gen_stub, "not_implemented", "raised NotImplementedError"),
    (check_generate, gen_no_return, "missing_return", "did not return a tensor"),
]
LATE_FAILURE = {check_generate: gen_top_k_minus_one}  # fails late, after most of the work
STUB = {check_generate: gen_stub}  # check -> the untouched learner stub
ACCEPTED = {check_generate: [gen_gumbel, gen_inverse_cdf]}  # correct in another spelling: must pass


# ---- several independent slips in one first attempt: one report names them all (Ctx.slips)
def gen_three_slips(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """No model.eval(), no torch.no_grad(), and the context cropped from the front."""
    def sample(probs, g):
        return torch.multinomial(probs.detach(), 1, generator=g)
    return _loop(model, idx, max_new_tokens, temperature, top_k, generator, eval_mode=False, no_grad=False,
                 sample=sample, crop=lambda idx, L: idx[:, :L])


MULTI = [(check_generate, gen_three_slips, ["model_in_train_mode", "gradients_recorded", "context_cropped_from_front"])]
