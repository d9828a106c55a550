"""Wrong ``causal_lm_loss``, ``TinyLM`` and ``parameter_table`` (stage 08, the language model).

The models are built, as the notebook asks, from the course's TransformerBlock, LayerNorm and causal_mask
(imported from tinylm_solutions), with a loss written the way the learner writes it in exercise 1.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from tinylm_checks import check_causal_lm_loss, check_parameter_table, check_tiny_lm
from tinylm_solutions.attention import causal_mask
from tinylm_solutions.block import TransformerBlock
from tinylm_solutions.norm import LayerNorm


# --------------------------------------------------------------------------- causal_lm_loss

def _ce(logits, targets, **kw):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), **kw)


def loss_right(logits, labels):
    """A correct loss, written as a learner would."""
    return _ce(logits[:, :-1], labels[:, 1:], ignore_index=-100)


def loss_not_shifted(logits, labels):
    """Scores logits[:, t] against labels[:, t]: no shift."""
    return _ce(logits, labels)


def loss_shifted_twice(logits, labels):
    """Shifts by two (as if the labels had been shifted already)."""
    return _ce(logits[:, :-2], labels[:, 2:])


def loss_shift_reversed(logits, labels):
    """Shifts the wrong way: logits[:, 1:] against labels[:, :-1]."""
    return _ce(logits[:, 1:], labels[:, :-1])


def loss_softmax_first(logits, labels):
    """Applies softmax before F.cross_entropy."""
    return _ce(logits[:, :-1].softmax(dim=-1), labels[:, 1:])


def loss_nll_of_probs(logits, labels):
    """F.nll_loss on probabilities (it expects log-probabilities)."""
    probs = torch.softmax(logits[:, :-1], dim=-1)
    return F.nll_loss(probs.reshape(-1, probs.size(-1)), labels[:, 1:].reshape(-1))


def loss_pad_as_zero(logits, labels):
    """Replaces -100 by the pad id 0 and scores it."""
    targets = labels[:, 1:].clone()
    targets[targets == -100] = 0
    return _ce(logits[:, :-1], targets)


def loss_ignore_zero(logits, labels):
    """Ignores token id 0 instead of -100 (crashes on -100 targets)."""
    return _ce(logits[:, :-1], labels[:, 1:], ignore_index=0)


def loss_mean_over_all(logits, labels):
    """reduction='none' then .mean(): the ignored positions count in the mean."""
    return _ce(logits[:, :-1], labels[:, 1:], reduction="none").mean()


def loss_manual_gather(logits, labels):
    """Hand-written -log_softmax gather: -100 is an index out of range."""
    logp = logits[:, :-1].log_softmax(-1)
    return -logp.gather(-1, labels[:, 1:, None]).mean()


def loss_item(logits, labels):
    """Reported: returns loss.item(), a Python float."""
    return loss_right(logits, labels).item()


def loss_sliced_view(logits, labels):
    """Reported: logits[:, :-1].view(-1, V): a slice of the time axis is not contiguous."""
    return F.cross_entropy(logits[:, :-1].view(-1, logits.size(-1)), labels[:, 1:].reshape(-1))


def loss_summed(logits, labels):
    """reduction='sum'."""
    return _ce(logits[:, :-1], labels[:, 1:], reduction="sum")


def loss_detached(logits, labels):
    """Returns a loss cut from the graph (via .item())."""
    return torch.tensor(loss_right(logits, labels).item(), dtype=logits.dtype)


def loss_float32(logits, labels):
    """Converts to float32."""
    return loss_right(logits.float(), labels)


def loss_per_token(logits, labels):
    """reduction='none': one loss per target."""
    return _ce(logits[:, :-1], labels[:, 1:], reduction="none")


def loss_no_return(logits, labels):
    """Forgets `return`."""
    loss = loss_right(logits, labels)  # noqa: F841


def loss_stub(logits, labels):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


# --------------------------------------------------------------------------- TinyLM

class _LM(nn.Module):
    """A correct TinyLM, written as the notebook asks (its parts: the given block, LayerNorm, causal_mask)."""

    loss_fn = staticmethod(loss_right)
    residual_std = True

    def __init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff):
        super().__init__()
        self.max_seq_len = max_seq_len
        self.token_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(max_seq_len, d_model)
        self.blocks = nn.ModuleList([TransformerBlock(d_model, num_heads, d_ff) for _ in range(num_layers)])
        self.norm = LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.tie()
        self.init_weights(num_layers)

    def tie(self):
        self.lm_head.weight = self.token_emb.weight

    def init_weights(self, num_layers):
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        if self.residual_std:
            for name, p in self.named_parameters():
                if name.endswith(("attn.W_O.weight", "ffn.linear2.weight")):
                    nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * num_layers))

    def check_length(self, T):
        if T > self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}")

    def embed(self, input_ids):
        T = input_ids.size(1)
        return self.token_emb(input_ids) + self.pos_emb(torch.arange(T, device=input_ids.device))

    def trunk(self, x, T):
        mask = causal_mask(T)
        for block in self.blocks:
            x = block(x, mask)
        return x

    def head(self, x):
        return self.lm_head(self.norm(x))

    def forward(self, input_ids, labels=None):
        B, T = input_ids.shape
        self.check_length(T)
        logits = self.head(self.trunk(self.embed(input_ids), T))  # (B, T, V)
        loss = None if labels is None else self.loss_fn(logits, labels)
        return logits, loss


class LMNotShifted(_LM):
    """Its loss scores logits[:, t] against labels[:, t]."""
    loss_fn = staticmethod(loss_not_shifted)


class LMShiftedTwice(_LM):
    """Shifts in forward, then calls a loss that shifts again."""

    def forward(self, input_ids, labels=None):
        logits, _ = super().forward(input_ids)
        loss = None if labels is None else loss_right(logits[:, :-1], labels[:, 1:])
        return logits, loss


class LMSoftmaxBeforeLoss(_LM):
    """Applies softmax to the logits before F.cross_entropy."""
    loss_fn = staticmethod(loss_softmax_first)


class LMReturnsProbabilities(_LM):
    """Returns softmax probabilities as the logits."""

    def head(self, x):
        return super().head(x).softmax(dim=-1)


class LMPadScored(_LM):
    """Turns -100 into the pad id 0 and scores it."""
    loss_fn = staticmethod(loss_pad_as_zero)


class LMIgnoreZero(_LM):
    """ignore_index=0: token 0 treated as padding."""
    loss_fn = staticmethod(loss_ignore_zero)


class LMTiedByCopy(_LM):
    """Ties by copying: a new Parameter with token_emb's values."""

    def tie(self):
        pass

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        self.lm_head.weight = nn.Parameter(self.token_emb.weight.detach().clone())


class LMTiedByData(_LM):
    """Ties with .data: two Parameters on one storage."""

    def tie(self):
        self.lm_head.weight.data = self.token_emb.weight.data


class LMTiedByNewParameter(_LM):
    """Ties with nn.Parameter(weight): a second Parameter over the same storage (issue 17: it does not drift)."""

    def tie(self):
        self.lm_head.weight = nn.Parameter(self.token_emb.weight)


class LMNotTied(_LM):
    """Forgets to tie."""

    def tie(self):
        pass


class LMNoFinalNorm(_LM):
    """Creates self.norm but lm_head reads the last block's output directly."""

    def head(self, x):
        return self.lm_head(x)


class LMNoNormAttribute(_LM):
    """No final LayerNorm at all."""

    def __init__(self, *args):
        super().__init__(*args)
        del self.norm

    def head(self, x):
        return self.lm_head(x)


class LMNoPositions(_LM):
    """Creates pos_emb but never adds it."""

    def embed(self, input_ids):
        return self.token_emb(input_ids)


class LMNoCausalMask(_LM):
    """Runs the blocks without a mask."""

    def trunk(self, x, T):
        for block in self.blocks:
            x = block(x)
        return x


class LMEmbeddingScaled(_LM):
    """Multiplies the token embedding by sqrt(d_model)."""

    def embed(self, input_ids):
        D = self.token_emb.weight.size(1)
        T = input_ids.size(1)
        return self.token_emb(input_ids) * math.sqrt(D) + self.pos_emb(torch.arange(T))


class LMNoLengthCheck(_LM):
    """No check of T: the position embedding fails with an IndexError."""

    def check_length(self, T):
        pass


class LMLengthOffByOne(_LM):
    """Refuses T >= max_seq_len."""

    def check_length(self, T):
        if T >= self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}")


class LMVagueLengthError(_LM):
    """A ValueError that does not say what the limit is."""

    def check_length(self, T):
        if T > self.max_seq_len:
            raise ValueError("too long")


class LMCropsSilently(_LM):
    """Crops a too-long input to its last max_seq_len tokens instead of refusing it."""

    def check_length(self, T):
        pass

    def forward(self, input_ids, labels=None):
        return super().forward(input_ids[:, -self.max_seq_len:], labels)


class LMDefaultInit(_LM):
    """Keeps PyTorch's default initialisation."""

    def init_weights(self, num_layers):
        pass


class LMLinearDefaultInit(_LM):
    """Initialises only the embeddings (the Linear layers keep their default)."""

    def init_weights(self, num_layers):
        for m in self.modules():
            if isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)


class LMNoResidualScaling(_LM):
    """N(0, 0.02) everywhere, without the 1/sqrt(2 L) of the residual projections."""
    residual_std = False


class LMBiasesKept(_LM):
    """Normal weights but the Linear biases keep their default values."""

    def init_weights(self, num_layers):
        biases = {id(m): m.bias.detach().clone() for m in self.modules() if isinstance(m, nn.Linear) and m.bias is not None}
        super().init_weights(num_layers)
        with torch.no_grad():
            for m in self.modules():
                if id(m) in biases:
                    m.bias.copy_(biases[id(m)])


class LMResidualInitHitsBiases(_LM):
    """Reported: the residual-projection init loop matches `"W_O" in name or "linear2" in name`, so it also
    re-initialises the biases of attn.W_O and ffn.linear2 (after every bias was zeroed)."""
    residual_std = False

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        for name, p in self.named_parameters():
            if "W_O" in name or "linear2" in name:
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * num_layers))


class LMResidualInitHitsOutBiasOnly(_LM):
    """The same loop with `"W_O" in name` only: attn.W_O.bias is re-initialised (linear2's weight keeps 0.02 /
    sqrt(2 L) from a second, right loop)."""

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        for name, p in self.named_parameters():
            if "W_O" in name:
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * num_layers))


class LMPositionsFromTokenIds(_LM):
    """Reported: indexes the position embedding with the token ids, self.pos_emb(input_ids) (an IndexError
    when a token id is >= max_seq_len)."""

    def embed(self, input_ids):
        return self.token_emb(input_ids) + self.pos_emb(input_ids)


class LMMaskForMaxSeqLen(_LM):
    """Reported: builds the causal mask for max_seq_len, not for the input's T (shape mismatch when T <
    max_seq_len)."""

    def trunk(self, x, T):
        mask = causal_mask(self.max_seq_len)
        for block in self.blocks:
            x = block(x, mask)
        return x


class LMWholePositionTable(_LM):
    """Adds the whole position table, pos_emb.weight (max_seq_len, D), to the (B, T, D) token embeddings."""

    def embed(self, input_ids):
        return self.token_emb(input_ids) + self.pos_emb.weight


class LMPositionsArangeMaxLen(_LM):
    """Looks up torch.arange(max_seq_len) positions instead of torch.arange(T)."""

    def embed(self, input_ids):
        return self.token_emb(input_ids) + self.pos_emb(torch.arange(self.max_seq_len))


class LMLossItem(_LM):
    """Returns loss.item(), a Python float."""

    def forward(self, input_ids, labels=None):
        logits, loss = super().forward(input_ids, labels)
        return logits, None if loss is None else loss.item()


class LMLogitsSlicedView(_LM):
    """Reported: its loss flattens the shifted logits with .view (logits[:, :-1] is not contiguous)."""
    loss_fn = staticmethod(lambda logits, labels: F.cross_entropy(
        logits[:, :-1].view(-1, logits.size(-1)), labels[:, 1:].reshape(-1)))


class LMHeadBias(_LM):
    """lm_head with a bias."""

    def __init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff):
        super().__init__(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)
        self.lm_head = nn.Linear(d_model, vocab_size)
        self.tie()


class LMLogitsOnly(_LM):
    """Returns only the logits."""

    def forward(self, input_ids, labels=None):
        return super().forward(input_ids, labels)[0]


class LMNoReturn(_LM):
    """Forgets `return` in forward."""

    def forward(self, input_ids, labels=None):
        super().forward(input_ids, labels)


class LMLossAlways(_LM):
    """Computes a loss against input_ids when no labels are given."""

    def forward(self, input_ids, labels=None):
        return super().forward(input_ids, input_ids if labels is None else labels)


class LMGPT2Names(_LM):
    """GPT-2's names: wte, wpe, h, ln_f (the check copies weights by the exercise's names)."""

    def __init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff):
        nn.Module.__init__(self)
        self.max_seq_len = max_seq_len
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(max_seq_len, d_model)
        self.h = nn.ModuleList([TransformerBlock(d_model, num_heads, d_ff) for _ in range(num_layers)])
        self.ln_f = LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight


class LMBlocksPlainList(_LM):
    """Keeps the blocks in a Python list: their parameters are not registered."""

    def __init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff):
        super().__init__(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)
        blocks = list(self.blocks)
        del self.blocks
        self.blocks = blocks  # a plain list: model.parameters() does not see the blocks


class LMTorchNorm(_LM):
    """PyTorch's nn.LayerNorm as the final norm, and the init through self.apply (accepted)."""

    def __init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff):
        super().__init__(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)
        self.norm = nn.LayerNorm(d_model)


class LMStub(nn.Module):
    """The untouched learner stub."""

    def __init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff):
        # YOUR CODE HERE
        raise NotImplementedError()


class LMForwardStub(_LM):
    """__init__ done, forward untouched."""

    def forward(self, input_ids, labels=None):
        # YOUR CODE HERE
        raise NotImplementedError()


def lm_function(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff):
    """A function instead of a class."""
    return _LM(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)


# ---- found by a blind red team (stage 08): wrong, and passed before the checks were fixed as kinds

class LMLayerNormReinit(_LM):
    """Red team w_layernorm_reinit: the init also draws every LayerNorm weight from N(0, 0.02)."""

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        for m in self.modules():
            if isinstance(m, LayerNorm):
                nn.init.normal_(m.weight, 0.0, 0.02)


class LMZeroAll1dParams(_LM):
    """Red team w_zero_all_1d_params: zeroes every 1-D parameter, so the LayerNorm gains are 0 (logits all 0)."""

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        for p in self.parameters():
            if p.dim() == 1:
                nn.init.zeros_(p)


class LMFinalNormWeightZero(_LM):
    """Red team w_final_norm_weight_zero: the final LayerNorm's weight starts at 0."""

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        nn.init.zeros_(self.norm.weight)


class LMPosStd001(_LM):
    """Red team w_pos_std_001: pos_emb drawn with std 0.01 (GPT-2's TensorFlow code does so for wpe)."""

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        nn.init.normal_(self.pos_emb.weight, 0.0, 0.01)


class LMPosZeros(_LM):
    """Red team w_pos_zeros: pos_emb starts at zero."""

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        nn.init.zeros_(self.pos_emb.weight)


class LMPosUniform(_LM):
    """Red team w_pos_uniform: pos_emb from U(-0.02, 0.02), std 0.02 / sqrt(3) = 0.0115."""

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        nn.init.uniform_(self.pos_emb.weight, -0.02, 0.02)


class LMTokStd001(_LM):
    """Red team w_tok_std_0.01: token_emb drawn with std 0.01."""

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        nn.init.normal_(self.token_emb.weight, 0.0, 0.01)


class LMNoMaxSeqLenAttr(_LM):
    """Red team w_no_max_seq_len_attr: no self.max_seq_len; the length check reads pos_emb.num_embeddings."""

    def __init__(self, *args):
        super().__init__(*args)
        del self.max_seq_len

    def check_length(self, T):
        if T > self.pos_emb.num_embeddings:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.pos_emb.num_embeddings}")


class LMScaledAllLinearsInBlocks(_LM):
    """Red team w_scaled_all_linears_in_blocks: every Linear weight in the blocks gets 0.02 / sqrt(2 L)."""

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        for name, p in self.named_parameters():
            if name.startswith("blocks") and p.dim() == 2:
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * num_layers))


class LMResidStdPrecedence(_LM):
    """Red team w_resid_std_precedence: 0.02 / 2 * sqrt(L), i.e. (0.02 / 2) * sqrt(L)."""

    def init_weights(self, num_layers):
        super().init_weights(num_layers)
        for name, p in self.named_parameters():
            if name.endswith(("attn.W_O.weight", "ffn.linear2.weight")):
                nn.init.normal_(p, 0.0, 0.02 / 2 * num_layers ** 0.5)


lm_instance = _LM(11, 8, 8, 2, 1, 16)


# --------------------------------------------------------------------------- parameter_table

def _n(m):
    return 0 if m is None else sum(p.numel() for p in m.parameters())


def table_right(model):
    """A correct table, as a learner writes it."""
    tied = model.lm_head.weight is model.token_emb.weight
    return {"token_emb": _n(model.token_emb), "pos_emb": _n(model.pos_emb), "blocks": _n(model.blocks),
            "norm": _n(model.norm), "lm_head": 0 if tied else _n(model.lm_head), "total": _n(model)}


def table_head_counted(model):
    """Counts lm_head even when tied, total as the sum of the parts."""
    t = {k: _n(getattr(model, k)) for k in ("token_emb", "pos_emb", "blocks", "norm", "lm_head")}
    return {**t, "total": sum(t.values())}


def table_no_dedup(model):
    """total from named_parameters(remove_duplicate=False)."""
    return {**table_right(model), "total": sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False))}


def table_formula(model):
    """blocks and total from the 12 L D^2 + V D rule."""
    V, D = model.token_emb.weight.shape
    N = len(model.blocks)
    return {**table_right(model), "blocks": 12 * N * D * D, "total": 12 * N * D * D + V * D}


def table_trainable_only(model):
    """Counts only parameters with requires_grad."""
    n = lambda m: 0 if m is None else sum(p.numel() for p in m.parameters() if p.requires_grad)  # noqa: E731
    tied = model.lm_head.weight is model.token_emb.weight
    return {"token_emb": n(model.token_emb), "pos_emb": n(model.pos_emb), "blocks": n(model.blocks),
            "norm": n(model.norm), "lm_head": 0 if tied else n(model.lm_head), "total": n(model)}


def table_none_crash(model):
    """Forgets that pos_emb may be None."""
    n = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    tied = model.lm_head.weight is model.token_emb.weight
    return {"token_emb": n(model.token_emb), "pos_emb": n(model.pos_emb), "blocks": n(model.blocks),
            "norm": n(model.norm), "lm_head": 0 if tied else n(model.lm_head), "total": n(model)}


def table_unfreezes(model):
    """Unfreezes the model to count everything."""
    model.requires_grad_(True)
    return table_right(model)


def table_tensor_values(model):
    """Counts as tensors."""
    return {k: torch.tensor(v) for k, v in table_right(model).items()}


def table_wrong_key(model):
    """Uses "embeddings" instead of the two embedding keys."""
    t = table_right(model)
    return {"embeddings": t.pop("token_emb") + t.pop("pos_emb"), **t}


def table_no_return(model):
    """Forgets `return`."""
    t = table_right(model)  # noqa: F841


def table_buffers_counted(model):
    """Red team w_buffers_counted: counts state_dict() entries, buffers included."""
    t = {k: 0 if getattr(model, k) is None else sum(v.numel() for v in getattr(model, k).state_dict().values())
         for k in ("token_emb", "pos_emb", "blocks", "norm", "lm_head")}
    if model.lm_head.weight is model.token_emb.weight:
        t["lm_head"] = 0
    return {**t, "total": sum(t.values())}


def table_by_name_prefix(model):
    """Red team c_named_params_prefix (right): each parameter under the first part of its name; a shared tensor is
    yielded once, under token_emb (accepted: the check's models hold only the five parts)."""
    t = dict.fromkeys(("token_emb", "pos_emb", "blocks", "norm", "lm_head"), 0)
    for name, p in model.named_parameters():
        t[name.split(".")[0]] += p.numel()
    return {**t, "total": sum(t.values())}

def table_stub(model):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


# --------------------------------------------------------------------------- what the tests feed the checks

def loss_per_sequence(logits, labels):
    """Averages each sequence's loss, then the sequences: a padded sequence's tokens weigh more."""
    return torch.stack([F.cross_entropy(logits[b, :-1], labels[b, 1:], ignore_index=-100)
                        for b in range(logits.size(0))]).mean()

ROWS = [
    # ---- causal_lm_loss
    (check_causal_lm_loss, loss_not_shifted, "labels_not_shifted", "the loss is not the reference value"),
    (check_causal_lm_loss, loss_shifted_twice, "labels_shifted_twice", "the loss is not the reference value"),
    (check_causal_lm_loss, loss_shift_reversed, "shift_reversed", "the loss is not the reference value"),
    (check_causal_lm_loss, loss_softmax_first, "softmax_before_loss", "the loss is not the reference value"),
    (check_causal_lm_loss, loss_nll_of_probs, "softmax_before_loss", "the loss is not the reference value"),
    (check_causal_lm_loss, loss_pad_as_zero, "ignored_targets_scored", "the loss is not the reference value"),
    (check_causal_lm_loss, loss_mean_over_all, "ignored_targets_scored", "the loss is not the reference value"),
    (check_causal_lm_loss, loss_manual_gather, "ignored_targets_scored", "raised RuntimeError"),
    (check_causal_lm_loss, loss_ignore_zero, "ignore_index_zero", "the loss is not the reference value"),
    (check_causal_lm_loss, loss_summed, "loss_summed", "the loss is not the reference value"),
    (check_causal_lm_loss, loss_per_sequence, "loss_per_sequence", "the loss is not the reference value"),
    (check_causal_lm_loss, loss_detached, "no_gradient", "the output carries no gradient"),
    (check_causal_lm_loss, loss_float32, "dtype_changed", "has dtype torch.float32"),
    (check_causal_lm_loss, loss_per_token, None, "the loss has the wrong shape"),
    (check_causal_lm_loss, loss_no_return, "missing_return", "the loss is not a tensor"),
    (check_causal_lm_loss, loss_item, "loss_returned_as_float", "the loss is not a tensor"),
    (check_causal_lm_loss, loss_sliced_view, "view_after_transpose", "raised RuntimeError"),
    (check_causal_lm_loss, loss_stub, "not_implemented", "raised NotImplementedError"),
    (check_causal_lm_loss, None, None, "expected the function causal_lm_loss, got None"),
    # ---- TinyLM: the named mistakes
    (check_tiny_lm, LMNotShifted, "labels_not_shifted", "the loss is not the reference value"),
    (check_tiny_lm, LMShiftedTwice, "labels_shifted_twice", "the loss is not the reference value"),
    (check_tiny_lm, LMSoftmaxBeforeLoss, "softmax_before_loss", "the loss is not the reference value"),
    (check_tiny_lm, LMReturnsProbabilities, "softmax_before_loss", "the logits: not equal to the reference"),
    (check_tiny_lm, LMTiedByCopy, "tied_by_copy", "lm_head.weight is not token_emb.weight"),
    (check_tiny_lm, LMTiedByData, "tied_by_copy", "lm_head.weight is not token_emb.weight"),
    (check_tiny_lm, LMTiedByNewParameter, "tied_by_copy", "lm_head.weight is not token_emb.weight"),
    (check_tiny_lm, LMPadScored, "ignored_targets_scored", "the loss is not the reference value"),
    (check_tiny_lm, LMIgnoreZero, "ignore_index_zero", "the loss is not the reference value"),
    (check_tiny_lm, LMNoFinalNorm, "no_final_norm", "the logits: not equal to the reference"),
    (check_tiny_lm, LMNoNormAttribute, "no_final_norm", "has no attribute norm"),
    # ---- TinyLM: more named mistakes
    (check_tiny_lm, LMNotTied, "weights_not_tied", "lm_head.weight is not token_emb.weight"),
    (check_tiny_lm, LMNoPositions, "positions_not_added", "the logits: not equal to the reference"),
    (check_tiny_lm, LMNoCausalMask, "no_causal_mask", "changing the tokens after position"),
    (check_tiny_lm, LMEmbeddingScaled, "embedding_scaled", "the logits: not equal to the reference"),
    (check_tiny_lm, LMNoLengthCheck, "no_length_check", "a too-long input raised IndexError"),
    (check_tiny_lm, LMCropsSilently, "no_length_check", "a too-long input was accepted"),
    (check_tiny_lm, LMLengthOffByOne, "length_check_off_by_one", "exactly max_seq_len"),
    (check_tiny_lm, LMDefaultInit, "embedding_default_init", "the embedding token_emb.weight has std"),
    (check_tiny_lm, LMLinearDefaultInit, "linear_not_gpt2_init", "W_Q, W_K, W_V and linear1 weights have std"),
    (check_tiny_lm, LMNoResidualScaling, "residual_init_not_scaled", "attn.W_O and ffn.linear2 weights have std"),
    (check_tiny_lm, LMBiasesKept, "biases_not_zeroed", "is not zero"),
    (check_tiny_lm, LMHeadBias, "linear_with_bias", "has a bias it should not have"),
    # ---- TinyLM: reported by a learner (fixed as kinds)
    (check_tiny_lm, LMResidualInitHitsBiases, "residual_init_hit_biases", "is not zero"),
    (check_tiny_lm, LMResidualInitHitsOutBiasOnly, "residual_init_hit_biases", "the bias of blocks.0.attn.W_O"),
    (check_tiny_lm, LMPositionsFromTokenIds, "positions_from_token_ids", "raised IndexError"),
    (check_tiny_lm, LMMaskForMaxSeqLen, "causal_mask_for_max_seq_len", "raised RuntimeError"),
    (check_tiny_lm, LMWholePositionTable, "positions_for_max_seq_len", "raised RuntimeError"),
    (check_tiny_lm, LMPositionsArangeMaxLen, "positions_for_max_seq_len", "raised RuntimeError"),
    (check_tiny_lm, LMLossItem, "loss_returned_as_float", "the loss is not a tensor"),
    (check_tiny_lm, LMLogitsSlicedView, "view_after_transpose", "raised RuntimeError"),
    (check_tiny_lm, LMNoReturn, "missing_return", "did not return a pair"),
    (check_tiny_lm, LMGPT2Names, None, "has no attribute token_emb"),
    # ---- TinyLM: found by a blind red team (passed before; fixed as kinds)
    (check_tiny_lm, LMLayerNormReinit, "layer_norm_reinitialised", "a LayerNorm is not at its initial weight 1"),
    (check_tiny_lm, LMZeroAll1dParams, "layer_norm_reinitialised", "a LayerNorm is not at its initial weight 1"),
    (check_tiny_lm, LMFinalNormWeightZero, "layer_norm_reinitialised", "initial weight 1, bias 0: norm.weight"),
    (check_tiny_lm, LMPosStd001, "embedding_init_std_wrong", "the embedding pos_emb.weight has std"),
    (check_tiny_lm, LMPosZeros, "embedding_init_std_wrong", "the embedding pos_emb.weight has std 0"),
    (check_tiny_lm, LMPosUniform, "embedding_init_std_wrong", "the embedding pos_emb.weight has std 0.011"),
    (check_tiny_lm, LMTokStd001, "embedding_init_std_wrong", "the embedding token_emb.weight has std"),
    (check_tiny_lm, LMNoMaxSeqLenAttr, "max_seq_len_not_stored", "max_seq_len is not 9"),
    (check_tiny_lm, LMScaledAllLinearsInBlocks, "residual_init_everywhere", "W_Q, W_K, W_V and linear1 weights"),
    (check_tiny_lm, LMResidStdPrecedence, "residual_init_std_wrong", "attn.W_O and ffn.linear2 weights have std"),
    # ---- TinyLM: unnamed, with a hint that says where to look
    (check_tiny_lm, LMVagueLengthError, None, "does not say what the limit is"),
    (check_tiny_lm, LMLogitsOnly, None, "did not return a pair"),
    (check_tiny_lm, LMLossAlways, None, "without labels returned a loss"),
    (check_tiny_lm, LMBlocksPlainList, None, "the blocks are missing or not registered"),
    # ---- TinyLM: robustness
    (check_tiny_lm, None, None, "expected the class TinyLM (a subclass of nn.Module), got None"),
    (check_tiny_lm, lm_function, None, "got function"),
    (check_tiny_lm, lm_instance, None, "got an instance of"),
    (check_tiny_lm, LMStub, "not_implemented", "raised NotImplementedError | tried: TinyLM("),
    (check_tiny_lm, LMForwardStub, "not_implemented", "raised NotImplementedError"),
    # ---- parameter_table
    (check_parameter_table, table_head_counted, "tied_weight_counted_twice", "the count for 'lm_head' is wrong"),
    (check_parameter_table, table_no_dedup, "tied_weight_counted_twice", "the count for 'total' is wrong"),
    (check_parameter_table, table_formula, "table_from_formula", "the count for 'blocks' is wrong"),
    (check_parameter_table, table_trainable_only, "table_trainable_only", "the count for 'pos_emb' is wrong"),
    (check_parameter_table, table_none_crash, "none_part_not_handled", "raised AttributeError"),
    (check_parameter_table, table_unfreezes, "model_changed", "changed the model it was given"),
    (check_parameter_table, table_tensor_values, None, "is not an int"),
    (check_parameter_table, table_wrong_key, None, "the dict has no key 'token_emb', 'pos_emb'"),
    (check_parameter_table, table_no_return, "missing_return", "the result is not a dict"),
    (check_parameter_table, table_buffers_counted, "buffers_counted", "the count for 'blocks' is wrong"),
    (check_parameter_table, table_stub, "not_implemented", "raised NotImplementedError"),
    (check_parameter_table, None, None, "expected the function parameter_table, got None"),
]
LATE_FAILURE = {check_causal_lm_loss: loss_float32, check_tiny_lm: LMNoResidualScaling,
                check_parameter_table: table_trainable_only}  # fails late, after the check did most of its work
STUB = {check_causal_lm_loss: loss_stub, check_tiny_lm: LMStub, check_parameter_table: table_stub}
ACCEPTED = {check_causal_lm_loss: [loss_right], check_tiny_lm: [_LM, LMTorchNorm], check_parameter_table: [table_right, table_by_name_prefix]}
