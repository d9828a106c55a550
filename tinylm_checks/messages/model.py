"""Stage 08: the causal language-model loss, TinyLM and its parameter table."""

MISTAKES = {
    "labels_not_shifted": (
        "the labels are not shifted: logits[:, t] is scored against labels[:, t], the token the model has just "
        "read, instead of the next one, labels[:, t + 1]",
        "drop the last prediction and the first label: logits[:, :-1] against labels[:, 1:] (position t "
        "predicts token t + 1)"),
    "labels_shifted_twice": (
        "the labels are shifted twice: logits[:, t] is scored against the token two positions ahead (shifted "
        "labels, such as get_batch's y or labels[:, 1:], were shifted again)",
        "shift once, in one place: the loss takes labels aligned with the inputs (labels = input_ids) and "
        "compares logits[:, :-1] with labels[:, 1:]; get_batch's y is already shifted, so it is never passed as "
        "labels"),
    "shift_reversed": (
        "the shift goes the wrong way: logits[:, 1:] against labels[:, :-1] (each position is asked for the "
        "token before it)",
        "logits[:, :-1] against labels[:, 1:]: the prediction made at t is scored against the token at t + 1"),
    "softmax_before_loss": (
        "a softmax is applied to the logits before the cross-entropy (or the model returns probabilities "
        "instead of logits)",
        "give F.cross_entropy the raw logits: it applies log_softmax itself; a softmax before it squashes the "
        "loss towards a constant and the gradients almost vanish"),
    "ignored_targets_scored": (
        "the targets marked -100 are scored (turned into a token id such as 0, or counted in the mean) instead "
        "of being left out",
        "-100 means 'no target here' (padding): F.cross_entropy(..., ignore_index=-100), its default, leaves "
        "those positions out of the sum and of the count; don't replace -100 by 0"),
    "ignore_index_zero": (
        "the token id 0 is ignored as if it were padding (ignore_index=0); padding is marked by the label -100, "
        "and 0 is a real token",
        "use ignore_index=-100 (F.cross_entropy's default): every label that is a token id, 0 included, is scored"),
    "loss_summed": (
        "the loss is the sum over the targets, not their mean",
        "F.cross_entropy averages by default (reduction='mean'); a sum grows with B and T and changes the "
        "learning rate"),
    "weights_not_tied": (
        "lm_head.weight is not token_emb.weight: the output layer has a weight matrix of its own",
        "tie them after creating both: self.lm_head.weight = self.token_emb.weight (one Parameter, V x D, used "
        "twice)"),
    "loss_per_sequence": (
        "the loss is averaged per sequence, then over sequences: a short (padded) sequence's tokens weigh more than "
        "a long one's. A language model's loss is the mean over all counted target tokens",
        "one mean over every target that is not -100: F.cross_entropy(..., ignore_index=-100) on the flattened "
        "(B * (T - 1), V) logits does it"),
    "tied_by_copy": (
        "lm_head.weight is a second Parameter with token_emb.weight's values: either a copy (.clone(), copy_), "
        "which the first optimizer step makes different, or a new Parameter over the same storage "
        "(nn.Parameter(self.token_emb.weight), .data), which model.parameters() lists twice: the matrix is counted "
        "twice and updated twice per step",
        "assign the Parameter object itself, self.lm_head.weight = self.token_emb.weight: one Parameter, used twice"),
    "no_final_norm": (
        "the final LayerNorm is missing: lm_head reads the residual stream straight from the last block",
        "a Pre-LN model normalises once more after the last block: logits = self.lm_head(self.norm(x))"),
    "positions_not_added": (
        "the position embedding is not added: the model cannot tell the order of the tokens",
        "x = self.token_emb(input_ids) + self.pos_emb(torch.arange(T, device=input_ids.device))"),
    "no_causal_mask": (
        "the blocks get no causal mask: each position sees the tokens after it (the answer it is asked to predict)",
        "build mask = causal_mask(T) once in forward and pass it to every block: x = block(x, mask)"),
    "embedding_scaled": (
        "the token embedding is multiplied by sqrt(d_model) (the Transformer paper's encoder does); GPT-2 adds "
        "the embeddings as they are",
        "x = self.token_emb(input_ids) + self.pos_emb(positions), without a scale factor"),
    "no_length_check": (
        "an input longer than max_seq_len is not refused with a ValueError (the position embedding has only "
        "max_seq_len rows, so it fails deeper down with an IndexError, or silently)",
        "at the start of forward: if T > self.max_seq_len: raise ValueError(f'sequence length {T} exceeds "
        "max_seq_len={self.max_seq_len}')"),
    "length_check_off_by_one": (
        "an input of exactly max_seq_len tokens is refused; only longer ones should be",
        "raise when T > self.max_seq_len (not >=): max_seq_len positions fit the position embedding"),
    "embedding_default_init": (
        "the embeddings keep PyTorch's default initialisation, N(0, 1), not GPT-2's N(0, 0.02)",
        "initialise every nn.Embedding and nn.Linear weight with nn.init.normal_(w, mean=0.0, std=0.02) (for "
        "example with self.apply(...)); with N(0, 1) embeddings, tied logits are huge and the loss at init is "
        "far above ln V"),
    "linear_not_gpt2_init": (
        "the linear layers keep PyTorch's default initialisation (uniform), not GPT-2's N(0, 0.02)",
        "nn.init.normal_(module.weight, mean=0.0, std=0.02) for every nn.Linear (self.apply visits the blocks' "
        "layers too)"),
    "residual_init_not_scaled": (
        "the projections that write into the residual stream (attn.W_O and ffn.linear2) have std 0.02, not 0.02 "
        "/ sqrt(2 * num_layers)",
        "after the general init: for name, p in self.named_parameters(): if name.endswith(('attn.W_O.weight', "
        "'ffn.linear2.weight')): nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * num_layers))"),
    "biases_not_zeroed": (
        "the linear layers' biases are not set to zero",
        "nn.init.zeros_(module.bias) for every nn.Linear that has one"),
    "residual_init_hit_biases": (
        "the scaled init of the residual projections also re-initialised their biases (only the biases of "
        'attn.W_O and ffn.linear2 are not zero: a name test such as `"W_O" in name` matches attn.W_O.bias too)',
        "select the weights only: names ending in attn.W_O.weight and ffn.linear2.weight (or init p only when "
        "p.dim() == 2)"),
    "positions_from_token_ids": (
        "the position embedding is looked up with the token ids, self.pos_emb(input_ids), instead of the "
        "positions 0 .. T-1 (it fails as soon as a token id is >= max_seq_len)",
        "positions are where a token sits, not which token it is: self.pos_emb(torch.arange(T, "
        "device=input_ids.device)), shape (T, D), added to the (B, T, D) token embeddings"),
    "positions_for_max_seq_len": (
        "the position embedding is taken for all max_seq_len positions (the whole pos_emb.weight table, or "
        "torch.arange(max_seq_len)), not for the input's T: it only fits an input of exactly max_seq_len tokens",
        "build position-dependent things for the input's T: self.pos_emb(torch.arange(T, "
        "device=input_ids.device)) for the positions, causal_mask(T) for the mask"),
    "causal_mask_for_max_seq_len": (
        "the causal mask is built for max_seq_len, not for the input's T: a (max_seq_len, max_seq_len) mask "
        "only fits an input of exactly max_seq_len tokens",
        "build position-dependent things for the input's T: causal_mask(T) for the mask (T = "
        "input_ids.size(1)), torch.arange(T) for the positions"),
    "embedding_init_std_wrong": (
        "an embedding is not initialised as GPT-2's N(0, 0.02): its weights' std is not 0.02 (a smaller or "
        "larger std, zeros, or a uniform draw)",
        "nn.init.normal_(module.weight, mean=0.0, std=0.02) for every nn.Embedding, token_emb and pos_emb alike "
        "(a uniform U(-a, a) has std a / sqrt(3), not a)"),
    "residual_init_everywhere": (
        "the scaled init 0.02 / sqrt(2 * num_layers) was applied to every linear layer of the blocks, not only "
        "to the projections that write into the residual stream",
        "only attn.W_O.weight and ffn.linear2.weight get 0.02 / sqrt(2 * num_layers); W_Q, W_K, W_V and linear1 "
        "keep N(0, 0.02): select the names ending in 'attn.W_O.weight' and 'ffn.linear2.weight'"),
    "residual_init_std_wrong": (
        "the projections that write into the residual stream (attn.W_O and ffn.linear2) have the wrong std: "
        "neither 0.02 nor 0.02 / sqrt(2 * num_layers)",
        "std = 0.02 / math.sqrt(2 * num_layers), with the brackets: 0.02 / 2 * math.sqrt(num_layers) is (0.02 / "
        "2) * sqrt(num_layers), which grows with depth instead of shrinking"),
    "layer_norm_reinitialised": (
        "a LayerNorm's parameters were re-initialised: on a fresh model every LayerNorm (the blocks' norm1 and "
        "norm2, and the final norm) must have weight 1 and bias 0, as GPT-2 and nn.LayerNorm start",
        "the init loop must touch only nn.Linear and nn.Embedding; LayerNorm keeps weight 1, bias 0 (don't init "
        "every parameter, nor every 1-D parameter)"),
    "max_seq_len_not_stored": (
        "the model does not store max_seq_len as self.max_seq_len (generate and the length check read it)",
        "in __init__: self.max_seq_len = max_seq_len"),
    "loss_returned_as_float": (
        "the loss is returned as a Python number (.item()), not as a tensor",
        "return the 0-dim tensor (no .item()): the loss must carry gradients for backward"),
    "tied_weight_counted_twice": (
        "the tied weight is counted twice: lm_head.weight is token_emb.weight, one tensor",
        "count each tensor once: model.parameters() yields a shared tensor once; lm_head is 0 when "
        "model.lm_head.weight is model.token_emb.weight"),
    "table_from_formula": (
        "a count comes from a formula (12 L D^2, V D, ...) instead of from the model's parameters",
        "count what the model holds: sum(p.numel() for p in model.blocks.parameters()), and so on; the formulas "
        "are what you compare the counts with afterwards"),
    "table_trainable_only": (
        "only trainable parameters are counted: a frozen part (requires_grad=False) is left out",
        "count every parameter, frozen or not: drop the `if p.requires_grad` filter"),
    "none_part_not_handled": (
        "a model without position embedding (pos_emb is None) makes the function fail",
        "a part that is None holds 0 parameters: `0 if model.pos_emb is None else count(model.pos_emb)`"),
    "buffers_counted": (
        "buffers are counted as parameters (state_dict() or buffers() also holds the attention's causal-mask "
        "buffer, which nothing learns)",
        "count parameters only: sum(p.numel() for p in model.<part>.parameters()); a buffer (register_buffer: a "
        "mask, running statistics) is saved with the model but is not a parameter"),
    "model_changed": (
        "the function changes the model it is given (requires_grad flags, parameters, train/eval mode): "
        "counting must only read it",
        "don't call requires_grad_(), train(), eval() or change parameters in the function"),
}

MESSAGES = {
    # ---- the loss's value (causal_lm_loss, and the loss TinyLM returns)
    "model.loss.what": "the loss",
    "model.loss.not_a_tensor": {
        "problem": "{what} is not a tensor",
        "expected": "a 0-dim tensor that carries gradients",
    },
    "model.loss.shape_hint": "return one number, the mean over the targets: a 0-dim tensor (F.cross_entropy's default "
                             "reduction='mean')",
    "model.loss.not_reference": {
        "problem": "{what} is not the reference value",
        "expected": "{value:.6f} = F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), ignore_index=-100) on the raw logits",
        "hint": "reshape to (B * (T - 1), V) and (B * (T - 1),) after the shift, and pass the raw logits",
    },
    # ---- causal_lm_loss
    "causal_lm_loss.tried_token_ids": "logits {logits} float64, labels {labels} of token ids (0 among them, no -100), "
                                      "seed {seed}",
    "causal_lm_loss.tried_ignored": "logits {logits}, labels {labels} with {n_ignored} targets set to -100 (the last "
                                    "two of sequence 0 and position 3 of sequence {last}), seed {seed}",
    "causal_lm_loss.called_again": "called again with the logits of the ignored targets changed",
    "causal_lm_loss.ignored_moved": {
        "problem": "changing the logits of the positions whose target is -100 changed the loss",
        "expected": "the same loss: ignored targets take no part",
        "got": "{before:.6f} then {after:.6f}",
    },
    "causal_lm_loss.passed": "equal to F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), ignore_index=-100) on the raw "
                             "logits, with token ids (0 included) and with -100 targets, which do not move the loss; "
                             "differentiable, dtype kept",
    # ---- TinyLM
    "tiny_lm.created": "{model} was created",
    "tiny_lm.layout.embedding": {
        "problem": "{cls}.{name} is not {layer}",
        "expected": "self.{name} = {layer}",
        "hint": "self.{name} = nn.Embedding({rows}, d_model)",
    },
    "tiny_lm.layout.with_weight": "{kind} with weight {shape}",
    "tiny_lm.layout.no_norm": {
        "problem": "{cls} has no attribute norm",
        "expected": "self.norm = LayerNorm(d_model), the final LayerNorm",
    },
    "tiny_lm.layout.norm": {
        "problem": "{cls}.norm is not a LayerNorm over d_model = {D} features",
        "hint": "self.norm = LayerNorm(d_model)",
    },
    "tiny_lm.layout.blocks_not_registered": {
        "problem": "{cls}'s parameters include no blocks.<i>... : the blocks are missing or not registered",
        "expected": "self.blocks = nn.ModuleList of {N} TransformerBlock",
        "got": "parameters {names}",
        "hint": "a Python list hides its modules from model.parameters() (and from the optimizer): self.blocks = "
                "nn.ModuleList([TransformerBlock(d_model, num_heads, d_ff) for _ in range(num_layers)])",
    },
    "tiny_lm.layout.blocks_layer": "nn.ModuleList of {N} TransformerBlock",
    "tiny_lm.layout.blocks_count": {
        "problem": "{cls}.blocks is not a list of num_layers = {N} blocks",
        "expected": "nn.ModuleList of {N} blocks",
        "hint": "self.blocks = nn.ModuleList([TransformerBlock(d_model, num_heads, d_ff) for _ in range(num_layers)])",
    },
    "tiny_lm.layout.blocks_of": "{kind} of {n}",
    "tiny_lm.layout.not_tied": {
        "problem": "lm_head.weight is not token_emb.weight",
        "expected": "one Parameter: model.lm_head.weight is model.token_emb.weight",
    },
    "tiny_lm.layout.equal_copy": "two tensors with equal values",
    "tiny_lm.layout.two_tensors": "two different tensors",
    "tiny_lm.max_seq_len_not_stored": {
        "problem": "{cls}.max_seq_len is not {L}",
        "expected": "self.max_seq_len = max_seq_len = {L}",
    },
    "tiny_lm.no_max_seq_len": "no attribute max_seq_len",
    # copying the reference's weights in by name
    "tiny_lm.load.missing": {
        "problem": "{cls} has no parameter {name}{more}",
        "expected": "the parameter names of the exercise: token_emb, pos_emb, blocks.<i>.(norm1, attn, norm2, ffn), "
                    "norm, lm_head",
        "got": "parameters {names}",
        "hint": "build the blocks from the given TransformerBlock, in self.blocks = nn.ModuleList([...])",
    },
    "tiny_lm.load.and_more": " (and {n} more)",
    "tiny_lm.load.shape": {
        "problem": "parameter {name} has shape {shape}",
        "hint": "create the layers with the constructor's sizes",
    },
    # forward
    "tiny_lm.tried": "{model} holding the reference's weights, input_ids {ids}, float64, seed {seed}",
    "tiny_lm.forward.not_a_pair": {
        "problem": "forward did not return a pair (logits, loss)",
        "expected": "(logits (B, T, V), loss or None)",
        "hint": "return logits, loss (loss = None when labels is None)",
    },
    "tiny_lm.forward.one_tensor": "one tensor {shape}",
    "tiny_lm.forward.logits": "logits",
    "tiny_lm.forward.logits_shape_hint": "logits = self.lm_head(self.norm(x)): one score per vocabulary entry at every "
                                         "position",
    "tiny_lm.loss_without_labels": {
        "problem": "forward(input_ids) without labels returned a loss",
        "got": "loss {loss}",
        "hint": "compute the loss only when labels is not None",
    },
    "tiny_lm.causal.tried": "{tried}, tokens after position {t} changed",
    "tiny_lm.causal.leak": {
        "problem": "changing the tokens after position {t} changed the logits at position {s}",
        "expected": "no change at positions 0 .. {t}: a language model must not see the tokens it predicts",
        "got": "a change of {change:.3g} at position {s} of sequence {b}",
        "hint": "pass causal_mask(T) to every block, and mix positions nowhere else",
    },
    "tiny_lm.logits.what": "the logits",
    "tiny_lm.logits.fallback": "token_emb + pos_emb, the blocks with causal_mask(T), norm, lm_head: print the shape "
                               "after each",
    # the loss forward returns
    "tiny_lm.tried_labels": "{tried}, {labels}",
    "tiny_lm.labels_token_ids": "labels of token ids (no -100)",
    "tiny_lm.labels_ignored": "labels with some targets -100",
    "tiny_lm.no_loss": {
        "problem": "forward(input_ids, labels) returned no loss",
        "hint": "if labels is not None: loss = causal_lm_loss(logits, labels)",
    },
    # inputs longer than max_seq_len
    "tiny_lm.length.tried_max": "{model}, input_ids (1, {L})",
    "tiny_lm.length.refused_max": {
        "problem": "an input of exactly max_seq_len = {L} tokens raised ValueError",
    },
    "tiny_lm.length.tried_long": "{model}, input_ids (1, {n}): one token more than max_seq_len",
    "tiny_lm.length.limit_not_named": {
        "problem": "the ValueError for a too-long input does not say what the limit is",
        "expected": "a message naming max_seq_len (= {L})",
        "hint": "say what was expected and what came: f'sequence length {{T}} exceeds "
                "max_seq_len={{self.max_seq_len}}'",
    },
    "tiny_lm.length.wrong_error": {
        "problem": "a too-long input raised {error}, not ValueError",
        "expected": "ValueError naming max_seq_len",
    },
    "tiny_lm.length.accepted": {
        "problem": "a too-long input was accepted",
        "expected": "ValueError naming max_seq_len",
        "got": "no exception",
    },
    "tiny_lm.param_count": {
        "problem": "wrong number of parameters",
        "hint": "the model holds exactly token_emb, pos_emb, blocks, norm and lm_head (tied, no bias)",
    },
    "tiny_lm.param_count_extra": "{n:,}; not in the reference: {extra}",
    # one optimizer step
    "tiny_lm.step.loss_no_gradient": {
        "problem": "the loss carries no gradient",
    },
    "tiny_lm.step.no_gradient_to_embedding": {
        "problem": "no gradient reaches token_emb.weight",
    },
    "tiny_lm.step.untied": {
        "problem": "after an optimizer step lm_head.weight is no longer token_emb.weight",
        "expected": "one Parameter, before and after training",
    },
    "tiny_lm.step.tried_after": "{tried}, after one SGD step (lr 0.5)",
    "tiny_lm.step.logits_differ": {
        "problem": "after one SGD step the logits differ from the reference's after the same step",
        "expected": "the same logits: the tied weight gets the gradients of both its uses",
        "got": "largest difference {err:.3g}",
    },
    # GPT-2's initialisation, on a fresh model
    "tiny_lm.init.tried": "a fresh {model}",
    "tiny_lm.init.norm_weight": "{name} mean {mean:.3g}, std {std:.3g}",
    "tiny_lm.init.norm_bias": "{name} mean {mean:.3g}",
    "tiny_lm.init.norm_reinitialised": {
        "problem": "a LayerNorm is not at its initial weight 1, bias 0: {name}",
        "expected": "every LayerNorm (blocks' norm1, norm2 and the final norm): weight all 1, bias all 0",
    },
    "tiny_lm.init.embedding_std": {
        "problem": "the embedding {name}.weight has std {std:.3g}",
        "expected": "std 0.02 (GPT-2: N(0, 0.02)) for token_emb and pos_emb",
        "got": "std {std:.3g}",
        "hint": "nn.init.normal_(module.weight, mean=0.0, std=0.02) for every nn.Embedding",
    },
    "tiny_lm.init.linear_std": {
        "problem": "the blocks' W_Q, W_K, W_V and linear1 weights have std {std:.3g}",
        "expected": "std 0.02 (only attn.W_O and ffn.linear2 get 0.02 / sqrt(2 * num_layers))",
        "got": "std {std:.3g}",
        "hint": "nn.init.normal_(module.weight, mean=0.0, std=0.02) for every nn.Linear",
    },
    "tiny_lm.init.residual_std": {
        "problem": "attn.W_O and ffn.linear2 weights have std {std:.3g}",
        "expected": "std 0.02 / sqrt(2 * num_layers) = {small:.4g} (GPT-2 paper, §2.3)",
        "got": "std {std:.3g}",
        "hint": "scale the projections into the residual stream: std 0.02 / math.sqrt(2 * num_layers) = {small:.4g} "
                "here",
    },
    "tiny_lm.init.bias_not_zero": {
        "problem": "the bias of {name} is not zero",
        "expected": "every nn.Linear bias 0",
    },
    "tiny_lm.init.biases_not_zero": "{n} of {total} biases not zero",
    "tiny_lm.init.biases_not_zero_named": "{n} of {total} biases not zero: {names}",
    "tiny_lm.init.tried_loss": "{tried}, input_ids (4, {L}), labels = input_ids",
    "tiny_lm.init.no_loss": {
        "problem": "forward(input_ids, labels) did not return a loss",
        "expected": "a 0-dim tensor",
    },
    "tiny_lm.init.loss_far": {
        "problem": "the loss at initialisation is {loss:.3f}",
        "expected": "about ln V = ln {V} = {ln_v:.3f}: an untrained model spreads its bets evenly",
        "hint": "look at the initialisation: every weight N(0, 0.02), biases 0",
    },
    "tiny_lm.init.loss_vs_ln_v": "{loss:.2f} vs ln V = {ln_v:.2f}",
    "tiny_lm.passed": "logits (B, T, V) equal to the reference's, causal, one tied weight (also after an SGD step), "
                      "the loss shifted with -100 ignored, ValueError beyond max_seq_len, GPT-2 init, loss at init "
                      "{at_init}",
    # ---- parameter_table
    "parameter_table.case.tied": "{model} (tied; each block's attn holds a causal-mask buffer ({L}, {L}))",
    "parameter_table.case.no_positions": "{model} (pos_emb is None)",
    "parameter_table.case.frozen_positions": "{model} (pos_emb frozen)",
    "parameter_table.model_changed": {
        "problem": "your function changed the model it was given",
        "expected": "the model exactly as it was: counting only reads it",
    },
    "parameter_table.not_a_dict": {
        "problem": "the result is not a dict",
        "expected": "a dict with keys {keys}",
    },
    "parameter_table.end_with_return": 'end with return {{"token_emb": ..., ..., "total": ...}}',
    "parameter_table.missing_keys": {
        "problem": "the dict has no key {missing}",
        "expected": "keys {want}",
        "got": "keys {have}",
        "hint": "use exactly these six keys",
    },
    "parameter_table.not_an_int": {
        "problem": "the count for {key} is not an int",
        "expected": "plain Python ints",
        "hint": "p.numel() is an int; add them with sum(...)",
    },
    "parameter_table.wrong_count": {
        "problem": "the count for {key} is wrong",
        "hint": "count the elements of each part's parameters, each tensor once: sum(p.numel() for p in "
                "model.<part>.parameters()); total over model.parameters()",
    },
    "parameter_table.passed": "token_emb, pos_emb, blocks, norm, lm_head and total counted from the parameters for "
                              "tied and untied models, one without positions and one with frozen positions; the models "
                              "left unchanged",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "labels_not_shifted":
        "the slices that pair logits with labels: which label does position t meet?",
    "labels_shifted_twice":
        "every place the labels get shifted: inside your loss, and in what you pass in as labels",
    "shift_reversed":
        "the two slices in your loss: for position t's logits, which token is the target?",
    "softmax_before_loss":
        "what your loss hands to the cross-entropy, and what your forward returns as logits",
    "ignored_targets_scored":
        "where the -100 labels go in your loss: what each becomes, and what the mean divides by",
    "ignore_index_zero":
        "the argument that tells your cross-entropy which label to skip",
    "loss_summed":
        "the last step of your loss: how the per-target losses become one number",
    "weights_not_tied":
        "your __init__ after lm_head is created: what its weight refers to",
    "loss_per_sequence":
        "how your loss averages: over which targets, and in how many steps",
    "tied_by_copy":
        "the line of __init__ that ties lm_head.weight: which object ends up in it",
    "no_final_norm":
        "your forward between the last block and lm_head",
    "positions_not_added":
        "the line of your forward that builds x before the blocks",
    "no_causal_mask":
        "your forward's loop over the blocks: what each block is called with",
    "embedding_scaled":
        "the line of your forward that combines the two embeddings",
    "no_length_check":
        "the start of your forward, before any embedding lookup: what it does with a too-long input",
    "length_check_off_by_one":
        "the comparison in your length check: which lengths does it let through?",
    "embedding_default_init":
        "your init code: does it ever reach the nn.Embedding layers?",
    "linear_not_gpt2_init":
        "your init code: which modules it visits; are the blocks' nn.Linear layers among them?",
    "residual_init_not_scaled":
        "the std your init leaves attn.W_O and ffn.linear2 with",
    "biases_not_zeroed":
        "your init of each nn.Linear: what happens to its bias",
    "residual_init_hit_biases":
        "the name test that picks the residual projections: which parameters does it match?",
    "positions_from_token_ids":
        "what you pass to self.pos_emb in your forward",
    "positions_for_max_seq_len":
        "where your forward gets the position embedding: for how many positions?",
    "causal_mask_for_max_seq_len":
        "where your forward builds the causal mask: which length does it use?",
    "embedding_init_std_wrong":
        "the init of token_emb and pos_emb: which distribution and std each one gets",
    "residual_init_everywhere":
        "the condition in your scaled init: which of the blocks' layers it picks",
    "residual_init_std_wrong":
        "the expression for attn.W_O's and ffn.linear2's std: work it out by hand for one num_layers",
    "layer_norm_reinitialised":
        "the condition of your init loop: which modules or parameters it touches",
    "max_seq_len_not_stored":
        "your __init__: which of the values it receives it keeps on self",
    "loss_returned_as_float":
        "the line that returns your loss: what type comes back?",
    "tied_weight_counted_twice":
        "the lm_head entry of your table, and which tensors your total adds up",
    "table_from_formula":
        "each entry of your table: what its number is computed from",
    "table_trainable_only":
        "the filter in your counting: which parameters it lets through",
    "none_part_not_handled":
        "the pos_emb entry of your table: what it does when that part is missing",
    "buffers_counted":
        "the collection your counting iterates over for each part",
    "model_changed":
        "every call in your function that does more than read the model",
}
