"""Wrong tokenizers, ``train_step``, ``evaluate`` and ``perplexity`` (stage 09)."""
import math
import re

import torch
import torch.nn.functional as F

from tinylm_checks import (check_char_tokenizer, check_evaluate, check_perplexity, check_train_step,
                           check_word_tokenizer)

WORD_PATTERN = re.compile(r"\w+|[^\w\s]")


# --------------------------------------------------------------------------- char_tokenizer

def char_stub(text):
    raise NotImplementedError()


def char_no_return(text):
    vocab = sorted(set(text))
    ids = [vocab.index(ch) for ch in text]


def char_first_seen(text):
    """Keeps the characters in the order they first appear (dict.fromkeys) instead of sorting."""
    vocab = list(dict.fromkeys(text))
    return vocab, [vocab.index(ch) for ch in text]


def char_reverse_sorted(text):
    """Sorts the vocabulary in reverse."""
    vocab = sorted(set(text), reverse=True)
    return vocab, [vocab.index(ch) for ch in text]


def char_duplicates(text):
    """Uses sorted(text): every occurrence becomes a vocabulary entry."""
    vocab = sorted(text)
    return vocab, [vocab.index(ch) for ch in text]


def char_no_whitespace(text):
    """Leaves whitespace out of the vocabulary (and out of the ids)."""
    vocab = sorted(set(text) - set(" \n\t"))
    return vocab, [vocab.index(ch) for ch in text if ch in vocab]


def char_one_based(text):
    """Counts ids from 1."""
    vocab = sorted(set(text))
    return vocab, [vocab.index(ch) + 1 for ch in text]


def char_ids_of_vocab(text):
    """Encodes the vocabulary instead of the text."""
    vocab = sorted(set(text))
    return vocab, list(range(len(vocab)))


def char_ascii_codes(text):
    """Uses ord(ch) as the id."""
    return sorted(set(text)), [ord(ch) for ch in text]


def char_tensor_ids(text):
    """Not a mistake: the ids as a 1-D long tensor."""
    vocab = sorted(set(text))
    return vocab, torch.tensor([vocab.index(ch) for ch in text])


# --------------------------------------------------------------------------- word_encode

def word_stub(text, vocab):
    raise NotImplementedError()


def word_no_return(text, vocab):
    stoi = {t: i for i, t in enumerate(vocab)}
    ids = [stoi.get(t, 1) for t in WORD_PATTERN.findall(text)] + [2]


def word_key_error(text, vocab):
    """Indexes the dict directly: an unknown word raises KeyError."""
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi[t] for t in WORD_PATTERN.findall(text)] + [2]


def word_list_index(text, vocab):
    """vocab.index(token): an unknown word raises ValueError."""
    return [vocab.index(t) for t in WORD_PATTERN.findall(text)] + [2]


def word_drops_unknown(text, vocab):
    """Skips unknown words."""
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi[t] for t in WORD_PATTERN.findall(text) if t in stoi] + [2]


def word_unk_is_pad(text, vocab):
    """Maps unknown words to 0, <pad>."""
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, 0) for t in WORD_PATTERN.findall(text)] + [2]


def word_no_eos(text, vocab):
    """Forgets <eos>."""
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, 1) for t in WORD_PATTERN.findall(text)]


def word_eos_first(text, vocab):
    """Puts <eos> at the start."""
    stoi = {t: i for i, t in enumerate(vocab)}
    return [2] + [stoi.get(t, 1) for t in WORD_PATTERN.findall(text)]


def word_split(text, vocab):
    """Splits on whitespace: punctuation stays glued to words."""
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, 1) for t in text.split()] + [2]


def word_punct_runs(text, vocab):
    """Keeps a run of punctuation ('...', '?!') as one token (blind red team)."""
    import re
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, 1) for t in re.findall(r"\w+|[^\w\s]+", text)] + [2]


def word_ascii(text, vocab):
    """Words are ASCII runs only: 'café' loses its 'é' (blind red team)."""
    import re
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, 1) for t in re.findall(r"[A-Za-z0-9_]+|[^\w\s]", text)] + [2]


def word_no_eos_when_empty(text, vocab):
    """Adds <eos> only to non-empty texts (blind red team)."""
    import re
    stoi = {t: i for i, t in enumerate(vocab)}
    ids = [stoi.get(t, 1) for t in re.findall(r"\w+|[^\w\s]", text)]
    return ids + [2] if ids else ids


def word_words_only(text, vocab):
    """Splits with \\w+ only: the punctuation is dropped."""
    import re
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, 1) for t in re.findall(r"\w+", text)] + [2]


def word_lower(text, vocab):
    """Lowercases the text first."""
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, 1) for t in WORD_PATTERN.findall(text.lower())] + [2]


def word_split_lower(text, vocab):
    """Splits on whitespace and lowercases (learner s7/l09): two mistakes at once."""
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, 1) for t in text.lower().split()] + [2]


def word_split_no_eos(text, vocab):
    """Splits on whitespace and forgets <eos>."""
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, 1) for t in text.split()]


def word_hard_coded_unk(text, vocab):
    """Uses len(vocab) (one past the end) as the unknown id: no mistake named, the ids differ."""
    stoi = {t: i for i, t in enumerate(vocab)}
    return [stoi.get(t, len(vocab)) for t in WORD_PATTERN.findall(text)] + [2]


# --------------------------------------------------------------------------- train_step

def _loss(model, batch):
    x, y = batch
    logits, _ = model(x)  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))


def step_stub(model, batch, optimizer, max_grad_norm=1.0):
    raise NotImplementedError()


def step_no_return(model, batch, optimizer, max_grad_norm=1.0):
    model.train()
    optimizer.zero_grad()
    loss = _loss(model, batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()


def step_model_zero_grad(model, batch, optimizer, max_grad_norm=1.0):
    """Not a mistake: model.zero_grad() instead of optimizer.zero_grad()."""
    model.train()
    model.zero_grad()
    loss = _loss(model, batch)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_before_backward(model, batch, optimizer, max_grad_norm=1.0):
    """optimizer.step() before loss.backward()."""
    model.train()
    optimizer.zero_grad()
    loss = _loss(model, batch)
    optimizer.step()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_zero_grad_after_backward(model, batch, optimizer, max_grad_norm=1.0):
    """zero_grad between backward and step."""
    model.train()
    loss = _loss(model, batch)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.zero_grad()
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_no_zero_grad(model, batch, optimizer, max_grad_norm=1.0):
    """Forgets zero_grad: the gradients accumulate."""
    model.train()
    loss = _loss(model, batch)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_no_clipping(model, batch, optimizer, max_grad_norm=1.0):
    """Never clips."""
    model.train()
    optimizer.zero_grad()
    loss = _loss(model, batch)
    loss.backward()
    norm = torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_clip_after_step(model, batch, optimizer, max_grad_norm=1.0):
    """Clips after optimizer.step()."""
    model.train()
    optimizer.zero_grad()
    loss = _loss(model, batch)
    loss.backward()
    optimizer.step()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_clip_to_one(model, batch, optimizer, max_grad_norm=1.0):
    """Clips to a constant 1.0, not to max_grad_norm."""
    model.train()
    optimizer.zero_grad()
    loss = _loss(model, batch)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_no_step(model, batch, optimizer, max_grad_norm=1.0):
    """Forgets optimizer.step()."""
    model.train()
    optimizer.zero_grad()
    loss = _loss(model, batch)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_no_train_mode(model, batch, optimizer, max_grad_norm=1.0):
    """Never calls model.train()."""
    optimizer.zero_grad()
    loss = _loss(model, batch)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_norm_after_clip(model, batch, optimizer, max_grad_norm=1.0):
    """Reports the norm after clipping."""
    model.train()
    optimizer.zero_grad()
    loss = _loss(model, batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    norm = torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_tensor_loss(model, batch, optimizer, max_grad_norm=1.0):
    """Returns the loss tensor itself."""
    model.train()
    optimizer.zero_grad()
    loss = _loss(model, batch)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": loss, "grad_norm": norm.item()}


def step_default_norm_5(model, batch, optimizer, max_grad_norm=5.0):
    """Right with the argument; its default clips to 5."""
    model.train()
    optimizer.zero_grad()
    loss = _loss(model, batch)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_clip_inf_norm(model, batch, optimizer, max_grad_norm=1.0):
    """Clips by the largest gradient entry (norm_type=inf)."""
    model.train()
    optimizer.zero_grad()
    loss = _loss(model, batch)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm, norm_type=float("inf"))
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_nan_returned(model, batch, optimizer, max_grad_norm=1.0):
    """Takes the right step but returns NaN for the loss and the norm (NaN compares unequal to everything)."""
    model.train()
    optimizer.zero_grad()
    _loss(model, batch).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": float("nan"), "grad_norm": float("nan")}


def step_label_shift(model, batch, optimizer, max_grad_norm=1.0):
    """Shifts y once more (y is already the next token): a wrong loss, no mistake named."""
    model.train()
    optimizer.zero_grad()
    x, y = batch
    logits, _ = model(x)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), y[:, 1:].reshape(-1))
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_labels_to_model(model, batch, optimizer, max_grad_norm=1.0):
    """`_, loss = model(x, labels=y)` with get_batch's already-shifted y (learner s7/l09): a double shift."""
    model.train()
    optimizer.zero_grad()
    x, y = batch
    _, loss = model(x, labels=y)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


def step_labels_x(model, batch, optimizer, max_grad_norm=1.0):
    """`_, loss = model(x, labels=x)`: the model's own shift, right in itself; the check wants the loss against
    y, so the loss differs at the last position and the model was asked for its loss: named the same."""
    model.train()
    optimizer.zero_grad()
    x, y = batch
    _, loss = model(x, labels=x)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": loss.item(), "grad_norm": norm.item()}


# --------------------------------------------------------------------------- evaluate

def eval_stub(model, batches):
    raise NotImplementedError()


def eval_no_return(model, batches):
    model.eval()


def _sum_count(model, batches):
    total, count = 0.0, 0
    for x, y in batches:
        logits, _ = model(x)
        total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
        count += int((y != -100).sum())
    return total, count


def eval_train_mode(model, batches):
    """Forgets model.eval()."""
    with torch.no_grad():
        total, count = _sum_count(model, batches)
    return total / count


def eval_with_grad(model, batches):
    """Forgets torch.no_grad()."""
    was = model.training
    model.eval()
    total, count = _sum_count(model, batches)
    model.train(was)
    return total / count


def eval_left_in_eval(model, batches):
    """Leaves the model in eval mode."""
    model.eval()
    with torch.no_grad():
        total, count = _sum_count(model, batches)
    return total / count


def eval_always_train_after(model, batches):
    """Calls model.train() at the end whatever the mode was."""
    model.eval()
    with torch.no_grad():
        total, count = _sum_count(model, batches)
    model.train()
    return total / count


def eval_inference_mode(model, batches):
    """Not a mistake: torch.inference_mode() instead of no_grad."""
    was = model.training
    model.eval()
    with torch.inference_mode():
        total, count = _sum_count(model, batches)
    model.train(was)
    return total / count


def eval_mean_of_means(model, batches):
    """Averages the per-batch mean losses."""
    was = model.training
    model.eval()
    with torch.no_grad():
        means = [F.cross_entropy(model(x)[0].flatten(0, 1), y.reshape(-1)).item() for x, y in batches]
    model.train(was)
    return sum(means) / len(means)


def eval_counts_ignored(model, batches):
    """Divides by every target, -100 included."""
    was = model.training
    model.eval()
    total = count = 0
    with torch.no_grad():
        for x, y in batches:
            logits, _ = model(x)
            total += F.cross_entropy(logits.flatten(0, 1), y.reshape(-1), reduction="sum").item()
            count += y.numel()
    model.train(was)
    return total / count


def eval_returns_perplexity(model, batches):
    """Returns exp(mean loss)."""
    was = model.training
    model.eval()
    with torch.no_grad():
        total, count = _sum_count(model, batches)
    model.train(was)
    return math.exp(total / count)


def eval_labels_to_model(model, batches):
    """Asks the model for its loss with labels=y (a double shift)."""
    was = model.training
    model.eval()
    with torch.no_grad():
        losses = [model(x, labels=y)[1].item() for x, y in batches]
    model.train(was)
    return sum(losses) / len(losses)


def eval_tensor(model, batches):
    """Returns a 0-dim tensor (total / count with tensors)."""
    was = model.training
    model.eval()
    total, count = torch.zeros((), dtype=torch.float64), 0
    with torch.no_grad():
        for x, y in batches:
            logits, _ = model(x)
            total = total + F.cross_entropy(logits.flatten(0, 1), y.reshape(-1), reduction="sum")
            count += int((y != -100).sum())
    model.train(was)
    return total / count


def eval_skips_token_0(model, batches):
    """Counts only targets > 0, as if token 0 were padding."""
    was = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            logits, _ = model(x)
            total += F.cross_entropy(logits.flatten(0, 1), y.reshape(-1), reduction="sum").item()
            count += int((y > 0).sum())
    model.train(was)
    return total / count


def eval_weighted_by_rows(model, batches):
    """Weights each batch's mean loss by its number of rows."""
    was = model.training
    model.eval()
    total, rows = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            logits, _ = model(x)
            total += F.cross_entropy(logits.flatten(0, 1), y.reshape(-1)).item() * x.shape[0]
            rows += x.shape[0]
    model.train(was)
    return total / rows


def eval_nan(model, batches):
    """Runs the model in eval mode under no_grad, restores the mode, and returns NaN."""
    was = model.training
    model.eval()
    with torch.no_grad():
        for x, y in batches:
            model(x)
    model.train(was)
    return float("nan")


def eval_sum(model, batches):
    """Returns the total loss, not divided: no mistake named."""
    was = model.training
    model.eval()
    with torch.no_grad():
        total, _ = _sum_count(model, batches)
    model.train(was)
    return total


# --------------------------------------------------------------------------- perplexity

def ppl_stub(loss):
    raise NotImplementedError()


def ppl_no_return(loss):
    math.exp(loss)


def ppl_base_2(loss):
    """2 ** loss."""
    return 2 ** float(loss)


def ppl_negated(loss):
    """exp(-loss)."""
    return math.exp(-float(loss))


def ppl_log(loss):
    """log(1 + loss): no mistake named."""
    return math.log(float(loss) + 1)


def ppl_torch(loss):
    """torch.exp(torch.as_tensor(loss)) (learner s7/l09): a 0-dim tensor, not a float."""
    return torch.exp(torch.as_tensor(loss))


def ppl_torch_item(loss):
    """Not a mistake: torch.exp on a tensor made from the loss, then .item()."""
    return torch.exp(torch.as_tensor(loss, dtype=torch.float64)).item()


def ppl_int_exp(loss):
    """Rounds the perplexity down to an integer (it equals 2 ** loss at loss = 1: not to be named base 2)."""
    return int(math.exp(float(loss)))


def ppl_capped(loss):
    """Caps the exponent, as code guarding against overflow might: exp(min(loss, 20))."""
    return math.exp(min(float(loss), 20.0))


def ppl_float32(loss):
    """Not a mistake: computed in float32 (relative error ~1e-7)."""
    return torch.exp(torch.tensor(float(loss), dtype=torch.float32)).item()


def ppl_not_float(loss):
    """Returns a string: no mistake named."""
    return f"{math.exp(float(loss)):.3f}"


ROWS = [
    # ---- char_tokenizer
    (check_char_tokenizer, char_first_seen, "vocab_not_sorted", "not in sorted order"),
    (check_char_tokenizer, char_reverse_sorted, "vocab_not_sorted", "not in sorted order"),
    (check_char_tokenizer, char_duplicates, "vocab_not_unique", "the vocabulary has duplicates"),
    (check_char_tokenizer, char_no_whitespace, "vocab_missing_chars", "not the set of the text's characters"),
    (check_char_tokenizer, char_one_based, "ids_off_by_one", "one too high"),
    (check_char_tokenizer, char_ids_of_vocab, "round_trip_broken", "not one id per character"),
    (check_char_tokenizer, char_ascii_codes, "round_trip_broken", "does not give the text back"),
    (check_char_tokenizer, None, None, "expected the function char_tokenizer, got None"),
    (check_char_tokenizer, char_stub, "not_implemented", "raised NotImplementedError"),
    (check_char_tokenizer, char_no_return, "missing_return", "returned None"),
    # ---- word_encode
    (check_word_tokenizer, word_key_error, "unknown_word_raises", "raised KeyError"),
    (check_word_tokenizer, word_list_index, "unknown_word_raises", "raised ValueError"),
    (check_word_tokenizer, word_drops_unknown, "unknown_word_dropped", "not those of the reference"),
    (check_word_tokenizer, word_unk_is_pad, "unknown_as_pad", "not those of the reference"),
    (check_word_tokenizer, word_no_eos, "eos_missing", "not those of the reference"),
    (check_word_tokenizer, word_eos_first, "eos_misplaced", "not those of the reference"),
    (check_word_tokenizer, word_split, "split_on_whitespace", "text.split() keeps ['sofa,', 'it.']"),
    (check_word_tokenizer, word_words_only, "punctuation_dropped", "not those of the reference"),
    (check_word_tokenizer, word_punct_runs, None, "the ids are not those of the reference"),
    (check_word_tokenizer, word_ascii, None, "the ids are not those of the reference"),
    (check_word_tokenizer, word_no_eos_when_empty, "eos_missing", "the ids are not those of the reference"),
    (check_word_tokenizer, word_lower, "lowercased", "not those of the reference"),
    (check_word_tokenizer, word_split_lower, "split_on_whitespace", "and also the text is lowercased"),
    (check_word_tokenizer, word_split_no_eos, "split_on_whitespace", "and also the ids do not end with '<eos>'"),
    (check_word_tokenizer, word_hard_coded_unk, None, "not those of the reference"),
    (check_word_tokenizer, None, None, "expected the function word_encode, got None"),
    (check_word_tokenizer, word_stub, "not_implemented", "raised NotImplementedError"),
    (check_word_tokenizer, word_no_return, "missing_return", "the ids is None"),
    # ---- train_step
    (check_train_step, step_before_backward, "wrong_step_order", "did not get this batch's gradients"),
    (check_train_step, step_zero_grad_after_backward, "wrong_step_order", "did not get this batch's gradients"),
    (check_train_step, step_no_zero_grad, "no_zero_grad", "plus the stale ones"),
    (check_train_step, step_no_clipping, "no_clipping", "got unclipped gradients"),
    (check_train_step, step_clip_after_step, "clip_after_step", "got unclipped gradients"),
    (check_train_step, step_clip_to_one, "max_grad_norm_ignored", "clipped to norm"),
    (check_train_step, step_no_step, "no_optimizer_step", "optimizer.step() was not called"),
    (check_train_step, step_no_train_mode, "train_mode_not_set", "ran in eval mode"),
    (check_train_step, step_norm_after_clip, "grad_norm_after_clipping", "norm before clipping"),
    (check_train_step, step_tensor_loss, "loss_not_a_float", 'result["loss"] is a tensor'),
    (check_train_step, step_labels_to_model, "labels_passed_to_model", "the model was called with labels"),
    (check_train_step, step_labels_x, "labels_passed_to_model", "the model was called with labels"),
    (check_train_step, step_label_shift, None, "not those of the batch's loss"),
    (check_train_step, step_nan_returned, None, 'result["loss"] is nan'),
    (check_train_step, step_clip_inf_norm, "clip_norm_type_wrong", "clipped by their max norm"),
    (check_train_step, step_default_norm_5, "max_grad_norm_default_wrong", "not clipped to norm 1.0"),
    (check_train_step, None, None, "expected the function train_step, got None"),
    (check_train_step, step_stub, "not_implemented", "raised NotImplementedError"),
    (check_train_step, step_no_return, "missing_return", "did not return a dict"),
    # ---- evaluate
    (check_evaluate, eval_train_mode, "evaluate_in_train_mode", "ran in training mode"),
    (check_evaluate, eval_with_grad, "evaluate_with_grad", "grad mode on"),
    (check_evaluate, eval_left_in_eval, "mode_not_restored", "left in eval mode"),
    (check_evaluate, eval_always_train_after, "mode_not_restored", "left in training mode"),
    (check_evaluate, eval_mean_of_means, "mean_of_batch_means", "not total loss / counted tokens"),
    (check_evaluate, eval_counts_ignored, "ignored_tokens_counted", "not total loss / counted tokens"),
    (check_evaluate, eval_returns_perplexity, "evaluate_returned_perplexity", "not total loss / counted tokens"),
    (check_evaluate, eval_labels_to_model, "labels_passed_to_model", "the model was called with labels"),
    (check_evaluate, eval_tensor, "evaluate_returned_tensor", "the result is a tensor"),
    (check_evaluate, eval_sum, None, "not total loss / counted tokens"),
    (check_evaluate, eval_nan, None, "the result is nan"),
    (check_evaluate, eval_weighted_by_rows, "batch_means_weighted_by_rows", "not total loss / counted tokens"),
    (check_evaluate, eval_skips_token_0, None, "not total loss / counted tokens"),
    (check_evaluate, None, None, "expected the function evaluate, got None"),
    (check_evaluate, eval_stub, "not_implemented", "raised NotImplementedError"),
    (check_evaluate, eval_no_return, "missing_return", "the result is None"),
    # ---- perplexity
    (check_perplexity, ppl_base_2, "perplexity_base_2", "not exp(loss)"),
    (check_perplexity, ppl_negated, "perplexity_negated", "not exp(loss)"),
    (check_perplexity, ppl_torch, "perplexity_returned_tensor", "the result is a tensor"),
    (check_perplexity, ppl_log, None, "not exp(loss)"),
    (check_perplexity, ppl_int_exp, None, "not exp(loss)"),
    (check_perplexity, ppl_capped, None, "not exp(loss)"),
    (check_perplexity, ppl_not_float, None, "the result is not a number"),
    (check_perplexity, None, None, "expected the function perplexity, got None"),
    (check_perplexity, ppl_stub, "not_implemented", "raised NotImplementedError"),
    (check_perplexity, ppl_no_return, "missing_return", "the result is None"),
]
LATE_FAILURE = {check_char_tokenizer: char_ascii_codes, check_word_tokenizer: word_lower,
                check_train_step: step_norm_after_clip, check_evaluate: eval_always_train_after,
                check_perplexity: ppl_base_2}
STUB = {check_char_tokenizer: char_stub, check_word_tokenizer: word_stub, check_train_step: step_stub,
        check_evaluate: eval_stub, check_perplexity: ppl_stub}
# correct in another spelling: must pass (test_ref_train / test_ref_tokenizer)
ACCEPTED = {check_char_tokenizer: [char_tensor_ids], check_train_step: [step_model_zero_grad],
            check_evaluate: [eval_inference_mode], check_perplexity: [ppl_torch_item, ppl_float32]}


# ---- several independent slips in one first attempt: one report names them all (Ctx.slips)
def step_three_slips(model, batch, optimizer, max_grad_norm=1.0):
    """No model.train(), no zero_grad, and the loss returned as a tensor."""
    loss = _loss(model, batch)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return {"loss": loss, "grad_norm": norm.item()}


def eval_three_slips(model, batches):
    """Switches to training mode instead of eval mode, no torch.no_grad(), and averages the batches' means."""
    model.train()
    means = [F.cross_entropy(model(x)[0].flatten(0, 1), y.reshape(-1)).item() for x, y in batches]
    return sum(means) / len(means)


MULTI = [
    (check_train_step, step_three_slips, ["train_mode_not_set", "no_zero_grad", "loss_not_a_float"]),
    (check_evaluate, eval_three_slips, ["evaluate_in_train_mode", "evaluate_with_grad", "mean_of_batch_means"]),
]
