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
    "tied_by_copy": (
        "lm_head.weight holds a copy of token_emb.weight: equal values, but two tensors, which the first "
        "optimizer step makes different",
        "assign the Parameter itself, self.lm_head.weight = self.token_emb.weight, not a copy (.clone(), "
        "nn.Parameter(...), copy_, .data)"),
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
}
