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
    # ---- shared by these checks
    "training.the_result": "the result",
    "training.labels_passed": {
        "problem": "the model was called with labels",
        "expected": "logits, _ = model(x), then the loss of the logits against y",
        "got": "model(x, labels=...)",
    },
    # a result that must be a Python float
    "training.float_tensor": {
        "problem": "{what} is a tensor",
        "expected": "a Python float",
        "got": "a tensor of shape {shape}, dtype {dtype}{value}{requires_grad}",
    },
    "training.float_tensor_value": ", value {value:.6g}",
    "training.float_tensor_requires_grad": ", requires_grad=True",
    "training.float_none": {
        "problem": "{what} is None",
        "expected": "a Python float",
    },
    "training.float_not_a_number": {
        "problem": "{what} is not a number",
        "expected": "a Python float",
        "hint": "return float values (loss.item())",
    },
    "training.float_not_finite": {
        "problem": "{what} is {value}",
        "expected": "a finite float",
        "hint": "every loss here is finite: print the losses you add up and what you divide by",
    },
    # ids returned by a tokenizer
    "tokenizer.ids_none": {
        "problem": "{what} is None",
        "expected": "a list of int",
    },
    "tokenizer.ids_tensor": {
        "problem": "{what} is a tensor of shape {shape} and dtype {dtype}",
        "expected": "a list of int (or a 1-D integer tensor)",
        "hint": "return a flat list of int ids, one per token",
    },
    "tokenizer.ids_not_ints": {
        "problem": "{what} is not a list of int",
        "expected": "a list of int",
        "hint": "ids are ints: vocab positions, one per token",
    },
    "tokenizer.list_of": "a list of {kinds}",
    # ---- char_tokenizer
    "char_tokenizer.ids": "ids",
    "char_tokenizer.none": {
        "problem": "char_tokenizer returned None",
        "expected": "a pair (vocab, ids)",
    },
    "char_tokenizer.not_a_pair": {
        "problem": "char_tokenizer did not return a pair (vocab, ids)",
        "expected": "(vocab: list of characters, ids: list of int)",
        "hint": "return vocab, ids",
    },
    "char_tokenizer.vocab_not_chars": {
        "problem": "vocab is not a list of single characters",
        "expected": "{vocab_head} ... ({n} characters)",
        "hint": "vocab = sorted(set(text)) is a list of one-character strings",
    },
    "char_tokenizer.vocab_duplicates": {
        "problem": "the vocabulary has duplicates",
        "expected": "each character once",
        "got": "{char} {count} times",
    },
    "char_tokenizer.vocab_wrong_set": {
        "problem": "the vocabulary is not the set of the text's characters",
        "expected": "{n_expected} distinct characters",
        "got": "{n_got}; missing {missing}, extra {extra}",
    },
    "char_tokenizer.vocab_not_sorted": {
        "problem": "the vocabulary is not in sorted order",
        "expected": "sorted(set(text)) = {vocab_head}",
    },
    "char_tokenizer.ids_one_too_high": {
        "problem": "the ids are one too high",
    },
    "char_tokenizer.ids_count": {
        "problem": "there is not one id per character",
        "expected": "{n_expected} ids",
        "got": "{n_got} ids",
    },
    "char_tokenizer.round_trip": {
        "problem": "decoding the ids does not give the text back",
        "expected": "id {want} for character {index} ({char})",
        "got": "id {got_id}; decoded text {decoded}",
    },
    "char_tokenizer.passed": "vocab = sorted(set(text)), one id per character, and the round trip on {n} texts with "
                             "whitespace and unicode",
    # ---- word_encode
    "word_encode.tried": "word_encode({text}, vocab) with vocab = {vocab_head} ... ({n} tokens)",
    "word_encode.ids": "the ids",
    "word_encode.raises": {
        "problem": "your code raised {error} on a word that is not in the vocabulary",
    },
    "word_encode.wrong_ids": {
        "problem": "the ids are not those of the reference{glued}{also}",
        "hint": "split with WORD_PATTERN.findall(text), look each token up with stoi.get(token, 1) (1 = '<unk>'), "
                "then append 2 ('<eos>')",
    },
    "word_encode.glued": " (text.split() keeps {tokens} as tokens)",
    # the other mistakes that together give the learner's ids: their sentences, joined
    "word_encode.also": " (and also {sentences})",
    "word_encode.also_separator": "; and also ",
    "word_encode.passed": "tokens split by WORD_PATTERN, unknown words -> <unk> ({unk} of {n} here), one <eos> at the "
                          "end, on {texts} texts",
    # ---- train_step
    "train_step.tried": "train_step(model, (x, y), optimizer, {max_norm}) with a small LM (V={V}, D={D}) in eval mode "
                        "holding stale gradients, x, y ({B}, {T}) (2 targets -100), and an SGD optimizer that records "
                        "its calls; the gradient norm is {norm:.3f}",
    "train_step.no_step": {
        "problem": "optimizer.step() was not called",
        "expected": "one call of optimizer.step()",
        "got": "events: {events}",
    },
    "train_step.no_events": "none",
    "train_step.steps": {
        "problem": "optimizer.step() was called {n} times",
        "expected": "one call",
        "hint": "one train_step is one optimizer step",
    },
    "train_step.no_forward": {
        "problem": "the model was never called",
        "expected": "one forward on x",
        "hint": "logits, _ = model(x), then the loss against y",
    },
    "train_step.eval_mode": {
        "problem": "the model ran in eval mode",
        "expected": "model.training True during the forward",
        "got": "model.training False",
    },
    "train_step.unclipped": {
        "problem": "optimizer.step() got unclipped gradients",
        "expected": "gradient norm {max_norm} at step (clipped)",
        "got": "norm {norm:.4f}",
    },
    "train_step.stale": {
        "problem": "optimizer.step() got this batch's gradients plus the stale ones",
        "expected": "this batch's gradients, clipped to norm {max_norm}: emb.grad[0] = {want}",
        "got": "emb.grad[0] = {row} (norm {norm:.4f})",
    },
    "train_step.wrong_order": {
        "problem": "optimizer.step() did not get this batch's gradients",
        "expected": "loss.backward() and clipping before optimizer.step()",
        "got": "gradients at step: {grads}; optimizer calls in order: {events}",
    },
    "train_step.grads_none": "none",
    "train_step.grads_stale": "stale or zero",
    "train_step.norm_type": {
        "problem": "the gradients were clipped by their {norm_name} norm",
        "expected": "global L2 norm {max_norm} at step",
        "got": "L2 norm {norm:.4f}",
    },
    "train_step.norm_max": "max",
    "train_step.norm_l1": "L1",
    "train_step.other_max_norm": {
        "problem": "the gradients were clipped to norm {norm:.4f}",
        "expected": "norm {max_norm} (max_grad_norm)",
        "got": "norm {norm:.4f}",
    },
    "train_step.other_grads": {
        "problem": "optimizer.step() got gradients that are not those of the batch's loss",
        "expected": "the gradients of F.cross_entropy(logits.reshape(-1, V), y.reshape(-1)), clipped to norm "
                    "{max_norm}: emb.grad[0] = {want}",
        "got": "emb.grad[0] = {row} (norm {norm:.4f})",
        "hint": "compare your loss line with the notebook's: cross-entropy of the (B*T, V) logits against the (B*T,) "
                "targets, mean over the counted targets",
    },
    "train_step.not_a_dict": {
        "problem": "train_step did not return a dict",
        "expected": '{{"loss": float, "grad_norm": float}}',
        "hint": 'return {{"loss": ..., "grad_norm": ...}}',
    },
    "train_step.missing_key": {
        "problem": "the result has no key {key}",
        "expected": '{{"loss": float, "grad_norm": float}}',
        "got": "keys {keys}",
        "hint": 'return {{"loss": loss.item(), "grad_norm": grad_norm.item()}}',
    },
    "train_step.wrong_loss": {
        "problem": 'result["loss"] is not the batch\'s loss',
        "hint": "report the loss computed before the step: loss.item()",
    },
    "train_step.wrong_grad_norm": {
        "problem": 'result["grad_norm"] is not the gradient norm before clipping',
        "hint": "grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)",
    },
    "train_step.wrong_parameters": {
        "problem": "the parameters after the step are not p - lr * clipped gradient",
        "expected": "one SGD step with the clipped gradients",
        "got": "other parameters",
        "hint": "call optimizer.step() once; do not change the parameters or .grad yourself",
    },
    "train_step.passed": "train mode, zero_grad -> backward -> clip to {max_norm} -> step (checked with a spy "
                         "optimizer), loss and the norm before clipping returned; without max_grad_norm, clipped to 1.0",
    "train_step.tried_default": "train_step(model, (x, y), optimizer) without max_grad_norm; the gradient norm is "
                                "{norm:.3f}",
    "train_step.default_max_norm": {
        "problem": "without max_grad_norm the gradients were not clipped to norm 1.0",
        "expected": "gradient norm 1.0 at step (the default max_grad_norm=1.0)",
        "got": "norm {norm:.4f}",
    },
    # ---- evaluate
    "evaluate.mode_training": "training",
    "evaluate.mode_eval": "eval",
    "evaluate.tried": "evaluate(model, batches) on a small LM (V={V}, D={D}) in {mode} mode, {n_batches} batches "
                      "(x, y) of sizes {sizes} with {n_ignored} targets -100 and some targets 0",
    "evaluate.calls": {
        "problem": "the model was called {n} times",
        "expected": "once per batch ({n_batches})",
        "hint": "loop over every batch once",
    },
    "evaluate.train_mode": {
        "problem": "the model ran in training mode",
        "expected": "model.training False during the forwards",
        "got": "model.training True",
    },
    "evaluate.with_grad": {
        "problem": "the forwards ran with grad mode on",
        "expected": "torch.is_grad_enabled() False",
    },
    "evaluate.mode_not_restored": {
        "problem": "the model is left in {left} mode",
        "expected": "{mode} mode, as it was before the call",
    },
    "evaluate.wrong_value": {
        "problem": "the result is not total loss / counted tokens",
        "hint": "sum F.cross_entropy(..., reduction='sum') over the batches, count (y != -100).sum(), and divide once "
                "at the end",
    },
    "evaluate.passed": "eval mode under no_grad, the mode restored (from training and from eval), total loss / counted "
                       "tokens with -100 ignored over batches of different sizes",
    # ---- perplexity
    "perplexity.wrong_value": {
        "problem": "the result is not exp(loss)",
        "hint": "perplexity = math.exp(loss), loss a mean cross-entropy in nats",
    },
    "perplexity.passed": "exp(loss) for losses {losses} and a 0-dim tensor (log V -> V = {V})",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "vocab_not_sorted":
        "the line of char_tokenizer that builds vocab: what decides the characters' order?",
    "vocab_not_unique":
        "the line that builds vocab: what keeps a character from being added twice?",
    "vocab_missing_chars":
        "what your vocabulary is built from: the whole text, or a filtered or cleaned copy?",
    "ids_off_by_one":
        "where you number the characters: which id does the first one get?",
    "round_trip_broken":
        "the line that turns the text into ids: what it skips, changes or reorders",
    "unknown_word_raises":
        "the lookup in word_encode: what happens to a word that is not in the vocabulary?",
    "unknown_word_dropped":
        "the lookup in word_encode, and any filter around it",
    "unknown_as_pad":
        "the default id your lookup gives a word that is not in the vocabulary",
    "eos_missing":
        "the end of word_encode: what the ids end with",
    "eos_misplaced":
        "where your code adds '<eos>': at which position, and how many times",
    "split_on_whitespace":
        "the line of word_encode that splits the text into tokens",
    "punctuation_dropped":
        "the pattern that splits the text: which characters do its matches leave out?",
    "lowercased":
        "what happens to the tokens between the split and the lookup",
    "wrong_step_order":
        "the order of the lines in train_step: where zero_grad, backward and step sit",
    "no_zero_grad":
        "the start of train_step: what .grad holds before this batch's backward",
    "no_clipping":
        "what train_step does to the gradients before optimizer.step()",
    "clip_after_step":
        "the position of your clipping line relative to optimizer.step()",
    "max_grad_norm_ignored":
        "the arguments of your clipping call",
    "clip_norm_type_wrong":
        "the arguments of your clipping call after the parameters",
    "max_grad_norm_default_wrong":
        "the signature of train_step: its default for max_grad_norm",
    "no_optimizer_step":
        "the end of train_step: what updates the parameters?",
    "train_mode_not_set":
        "the start of train_step: which mode is the model in before the forward?",
    "grad_norm_after_clipping":
        "where your grad_norm comes from: which call or computation, at which point",
    "labels_passed_to_model":
        "the line that calls the model: which arguments you pass it",
    "loss_not_a_float":
        "the values you put into train_step's result dict",
    "evaluate_in_train_mode":
        "the start of evaluate, before the loop over batches",
    "evaluate_with_grad":
        "what surrounds evaluate's loop, and the type of what it returns",
    "mode_not_restored":
        "the end of your function: the mode the model came in, and the mode you leave it in",
    "mean_of_batch_means":
        "what your loop adds up per batch, and what you divide by at the end",
    "ignored_tokens_counted":
        "the lines that add up each batch's loss and token count: which targets enter?",
    "batch_means_weighted_by_rows":
        "the weight each batch gets in your running total",
    "evaluate_returned_perplexity":
        "evaluate's return line: what it does to the mean loss before returning",
    "evaluate_returned_tensor":
        "evaluate's return line, and the type of each value you add up",
    "perplexity_returned_tensor":
        "perplexity's return line: the type of what it computes when loss is a tensor",
    "perplexity_base_2":
        "the base of the power in perplexity",
    "perplexity_negated":
        "the sign of the exponent in perplexity",
}
