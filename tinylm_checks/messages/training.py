"""Stage 09: the tokenizers, train_step, evaluate, perplexity."""

MISTAKES = {
    "vocab_not_sorted": (
        "the vocabulary is not sorted: ids then depend on the order in which characters first appear (or on the "
        "set's order, which changes between Python runs), so the same character gets another id in another text "
        "or session",
        "vocab = sorted(set(text)): a list of the distinct characters in sorted order"),
    "vocab_not_unique": (
        "a character appears more than once in the vocabulary",
        "build the vocabulary from the distinct characters: sorted(set(text))"),
    "vocab_missing_chars": (
        "the vocabulary lacks characters of the text (or has characters the text does not have): spaces, "
        "newlines or non-ASCII characters are characters too",
        "take every distinct character of the text, whitespace and unicode included: sorted(set(text))"),
    "ids_off_by_one": (
        "the ids start at 1: the first character of the vocabulary must get id 0, so that an id is an index "
        "into the vocabulary (and into an nn.Embedding's rows)",
        "stoi = {ch: i for i, ch in enumerate(vocab)}: enumerate counts from 0"),
    "round_trip_broken": (
        "decoding the ids does not give the text back: ''.join(vocab[i] for i in ids) != text",
        "encode every character of the text, in order, as its index in the vocabulary: [stoi[ch] for ch in text]"),
    "unknown_word_raises": (
        "a word that is not in the vocabulary raises an error: it must become <unk>",
        "look words up with a default: stoi.get(token, unk_id), with unk_id = 1, the id of '<unk>'"),
    "unknown_word_dropped": (
        "words that are not in the vocabulary are left out: they must become <unk>, so that the model still "
        "sees that a word was there (and the UNK rate can be measured)",
        "map every token to an id, unknown ones to unk_id = 1: stoi.get(token, 1)"),
    "unknown_as_pad": (
        "unknown words get id 0, '<pad>': padding is for filling batches and is not a word; unknown words get "
        "'<unk>', id 1",
        "stoi.get(token, 1): id 1 is '<unk>', id 0 is '<pad>'"),
    "eos_missing": (
        "the ids do not end with '<eos>' (id 2): the model has no way to learn where a text ends",
        "append the end-of-sequence id after the last token: ids + [2]"),
    "eos_misplaced": (
        "'<eos>' is there but not only at the end (at the start, or after every token)",
        "one '<eos>' (id 2), after the last token: ids + [2]"),
    "split_on_whitespace": (
        "the text is split on whitespace, so punctuation stays glued to words (a word with a comma after it is "
        "one token, and an unknown one)",
        "split with the pattern of the notebook: WORD_PATTERN.findall(text) separates words and punctuation"),
    "punctuation_dropped": (
        "only the words are kept (a pattern like \\w+): punctuation marks are tokens too, and the model needs them",
        "split with the pattern of the notebook: WORD_PATTERN.findall(text) also matches each punctuation mark"),
    "lowercased": (
        "the text is lowercased before the lookup: the vocabulary was built with case kept, so 'The' and 'the' "
        "are different tokens",
        "look the tokens up as they are in the text; do not call .lower()"),
    "wrong_step_order": (
        "the steps of train_step are out of order: optimizer.step() did not see this batch's gradients (step "
        "before backward, or zero_grad between backward and step)",
        "zero_grad, then loss = ..., loss.backward(), clip, and only then optimizer.step()"),
    "no_zero_grad": (
        "the gradients are not zeroed first: backward adds to .grad, so the previous step's gradients were "
        "added to this batch's",
        "start with optimizer.zero_grad() (before loss.backward())"),
    "no_clipping": (
        "the gradients are not clipped: their global norm is above max_grad_norm at optimizer.step()",
        "torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm) between loss.backward() and "
        "optimizer.step()"),
    "clip_after_step": (
        "the gradients are clipped after optimizer.step(): the step already used the unclipped gradients, so "
        "clipping had no effect",
        "call torch.nn.utils.clip_grad_norm_ before optimizer.step(), right after loss.backward()"),
    "max_grad_norm_ignored": (
        "the gradients are clipped to another norm than the max_grad_norm argument (a constant such as 1.0)",
        "pass the argument: torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)"),
    "clip_norm_type_wrong": (
        "the gradients are clipped by another norm than the global L2 norm (norm_type=inf or 1): max_grad_norm "
        "bounds the L2 norm of all gradients together",
        "keep clip_grad_norm_'s default norm_type=2: torch.nn.utils.clip_grad_norm_(model.parameters(), "
        "max_grad_norm)"),
    "max_grad_norm_default_wrong": (
        "called without max_grad_norm, train_step clips to another norm than 1.0: the default in the signature "
        "is not the exercise's",
        "keep the signature as given: def train_step(model, batch, optimizer, max_grad_norm=1.0)"),
    "no_optimizer_step": (
        "optimizer.step() is never called: the parameters do not change",
        "end with optimizer.step(), after the gradients are clipped"),
    "train_mode_not_set": (
        "train_step ran the model in eval mode: after an evaluation the model stays in eval mode (dropout off) "
        "unless train_step switches it back",
        "start train_step with model.train()"),
    "grad_norm_after_clipping": (
        "the returned grad_norm is the norm after clipping (at most max_grad_norm): it should be the norm "
        "before, which clip_grad_norm_ returns",
        "grad_norm = torch.nn.utils.clip_grad_norm_(...) returns the total norm before clipping: report that"),
    "labels_passed_to_model": (
        "the model was asked for its own loss with labels=y, but y is already shifted (get_batch's targets): "
        "the model would shift again, and score each position against the token two ahead",
        "compute the loss from the logits: F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))"),
    "loss_not_a_float": (
        "a tensor is returned where a Python float belongs: kept in a history, a loss tensor keeps its whole "
        "autograd graph alive",
        "return plain numbers: loss.item() and grad_norm.item()"),
    "evaluate_in_train_mode": (
        "the model runs in training mode during evaluation (dropout would be on)",
        "call model.eval() before the loop (and restore the mode afterwards)"),
    "evaluate_with_grad": (
        "evaluation builds the autograd graph (grad mode on, or a tensor that requires grad returned): memory "
        "and time for a backward that never comes",
        "run the loop under `with torch.no_grad():` and return loss.item()-style floats"),
    "mode_not_restored": (
        "the model's mode is not restored: a model that was training must be left in training mode, one in eval "
        "mode in eval mode",
        "was_training = model.training before model.eval(); model.train(was_training) at the end"),
    "mean_of_batch_means": (
        "the result is the mean of the per-batch mean losses: a small batch weighs as much as a large one; the "
        "corpus loss is total loss / counted tokens",
        "add up F.cross_entropy(..., reduction='sum') over the batches and divide by the number of counted tokens"),
    "ignored_tokens_counted": (
        "targets equal to -100 are counted in the number of tokens (or in the loss): they are ignored "
        "positions, neither scored nor counted",
        "count only the scored targets: (y != -100).sum(); F.cross_entropy ignores -100 in the loss by default"),
    "batch_means_weighted_by_rows": (
        "the per-batch mean losses are weighted by the batches' numbers of rows: a row of a short batch holds "
        "fewer targets, and rows hold -100s, so the weights are not the counted tokens",
        "add up F.cross_entropy(..., reduction='sum') over the batches and divide once by (y != -100).sum() "
        "over all"),
    "evaluate_returned_perplexity": (
        "evaluate returns exp(loss), the perplexity, instead of the mean loss",
        "return total / n_tokens; perplexity(loss) takes the exp"),
    "evaluate_returned_tensor": (
        "evaluate returns a tensor: its contract is a Python float (a number to print, log and compare, holding "
        "no tensor)",
        "return a Python float: add up loss.item() values (or call .item() on the result)"),
    "perplexity_returned_tensor": (
        "perplexity returns a tensor: its contract is a Python float",
        "return a Python float: math.exp(loss) (or .item())"),
    "perplexity_base_2": (
        "2 ** loss is used: F.cross_entropy's loss is in nats (natural log), so perplexity is e ** loss",
        "math.exp(loss)"),
    "perplexity_negated": (
        "exp(-loss) is computed: that is the geometric mean probability of the targets, 1 / perplexity",
        "math.exp(loss)"),
}

MESSAGES = {
}
