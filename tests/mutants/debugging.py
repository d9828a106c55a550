"""Wrong answers to stage 11's debugging lab: the broken parts themselves (as the notebook shows them), other
wrong fixes, and wrong bug names. Rows as in tests/mutants/__init__.py."""
import math

import torch
import torch.nn.functional as F

from tinylm_checks.debugging import (check_fixed_attention, check_fixed_causal_mask, check_fixed_lm_loss,
                                     check_future_mask_bug, check_nan_loss_bug, check_stable_cross_entropy,
                                     check_uniform_attention_bug, check_unshifted_labels_bug)
from tinylm_solutions import debugging as ref


# --------------------------------------------------------------------------- bug names
def name_lr():
    """Blames the learning rate for the NaN."""
    return "learning_rate_too_high"


def name_overflow():
    """Names the NaN's bug for another symptom."""
    return "exp_overflow"


def name_missing_scale():
    """Blames the missing 1/sqrt(d_k) for the uniform attention."""
    return "missing_scale"


def name_softmax_queries():
    """Blames the softmax axis for the uniform attention."""
    return "softmax_over_queries"


def name_hides_past():
    """Reads the future mask the wrong way round."""
    return "mask_hides_past"


def name_labels():
    """Blames the label shift for the future mask."""
    return "labels_not_shifted"


def name_shifted_twice():
    """Thinks the labels were shifted twice."""
    return "labels_shifted_twice"


def name_mask_for_labels():
    """Blames the mask for the copying model."""
    return "mask_sees_future"


def name_symptom():
    """Answers with the symptom, not a bug name."""
    return "nan_loss"


def name_misspelt():
    """Misspells the right name."""
    return "exp-overflow"


def name_none():
    """Forgets the return."""
    "exp_overflow"


def name_stub():
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


# --------------------------------------------------------------------------- stable_cross_entropy
def naive_cross_entropy(logits, targets):
    """The broken loss of the lab: softmax as exp(z) / sum(exp(z)), then log."""
    probs = logits.exp() / logits.exp().sum(dim=-1, keepdim=True)  # (N, V)
    return -probs.gather(-1, targets[:, None]).log().mean()


def ce_mean_shift(logits, targets):
    """Subtracts the row mean instead of the row max."""
    z = logits - logits.mean(dim=-1, keepdim=True)
    return -(z.gather(-1, targets[:, None]).squeeze(-1) - z.exp().sum(-1).log()).mean()


def ce_max_not_added(logits, targets):
    """Subtracts the max inside the exp and forgets to add it back."""
    m = logits.max(dim=-1, keepdim=True).values
    log_z = (logits - m).exp().sum(-1).log()
    return (log_z - logits.gather(-1, targets[:, None]).squeeze(-1)).mean()


def ce_softmax_then_log(logits, targets):
    """Shifts by the row max (right), then builds the softmax and logs it: the far target's p underflows to 0."""
    z = logits - logits.max(dim=-1, keepdim=True).values
    probs = z.exp() / z.exp().sum(dim=-1, keepdim=True)  # (N, V)
    return -probs.gather(-1, targets[:, None]).log().mean()


def ce_torch_softmax_log(logits, targets):
    """torch.softmax (stable) and then .log(): the same underflow."""
    return -torch.softmax(logits, dim=-1).log().gather(-1, targets[:, None]).mean()


def ce_mean_shift_softmax_log(logits, targets):
    """Shifts by the row mean, then softmax and log: wrong shift and a logged probability."""
    z = (logits - logits.mean(dim=-1, keepdim=True)).exp()
    return -(z / z.sum(-1, keepdim=True)).gather(-1, targets[:, None]).log().mean()


def ce_global_max(logits, targets):
    """One maximum over the whole tensor: rows far below it underflow (every exp is 0, log(0) = -inf)."""
    m = logits.max()
    log_z = m + (logits - m).exp().sum(-1).log()
    return (log_z - logits.gather(-1, targets[:, None]).squeeze(-1)).mean()


def ce_clamped(logits, targets):
    """Adds 1e-9 to the probabilities before the log: no NaN, but capped."""
    probs = torch.softmax(logits, dim=-1)
    return -(probs + 1e-9).log().gather(-1, targets[:, None]).mean()


def ce_item_as_tensor(logits, targets):
    """Computes the loss right, then rebuilds it from .item() (torch.tensor(loss.item())): no gradient flows."""
    loss = -torch.log_softmax(logits, -1).gather(-1, targets[:, None]).mean()
    return torch.tensor(loss.item(), dtype=logits.dtype)


def ce_summed(logits, targets):
    """Sums the per-token losses."""
    return -torch.log_softmax(logits, -1).gather(-1, targets[:, None]).sum()


def ce_no_minus(logits, targets):
    """Forgets the minus sign."""
    return torch.log_softmax(logits, -1).gather(-1, targets[:, None]).mean()


def ce_dim0(logits, targets):
    """Normalises over the rows."""
    return -torch.log_softmax(logits, 0).gather(-1, targets[:, None]).mean()


def ce_float_cast(logits, targets):
    """Computes in float64 and returns float64 for a float32 input."""
    return F.cross_entropy(logits.double(), targets)


def ce_library(logits, targets):
    """Not a mistake: the library's own stable loss."""
    return F.cross_entropy(logits, targets)


def ce_logsumexp(logits, targets):
    """Not a mistake: torch.logsumexp."""
    return (torch.logsumexp(logits, -1) - logits.gather(-1, targets[:, None]).squeeze(-1)).mean()


def ce_stub(logits, targets):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


def ce_no_return(logits, targets):
    """Forgets the return."""
    F.cross_entropy(logits, targets)


# --------------------------------------------------------------------------- fixed_attention
def broken_attention(q, k, v, mask=None):
    """The broken attention of the lab: (q * k).sum(-1) is one score per query."""
    d_k = q.size(-1)
    scores = (q * k).sum(dim=-1, keepdim=True) / math.sqrt(d_k)  # (..., T, 1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # broadcasts to (..., T, T)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def attn_no_scale(q, k, v, mask=None):
    """Forgets the 1/sqrt(d_k)."""
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w


def attn_queries(q, k, v, mask=None):
    """Softmax over the queries."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=-2).nan_to_num()
    return w @ v, w


def attn_mask_after(q, k, v, mask=None):
    """Masks after the softmax."""
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1)
    if mask is not None:
        w = w.masked_fill(~mask, 0.0)
    return w @ v, w


def attn_inverted_mask(q, k, v, mask=None):
    """Fills where the mask is True (= may attend): the causal mask's full last row becomes all -inf."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w


def attn_inverted_mask_guarded(q, k, v, mask=None):
    """The inverted mask with the NaN rows zeroed: no NaN left to see, the weights are wrong."""
    out, w = attn_inverted_mask(q, k, v, mask)
    w = w.nan_to_num()
    return w @ v, w


def attn_detached(q, k, v, mask=None):
    """Detaches the weights: no gradient reaches q or k."""
    out, w = ref.fixed_attention(q, k, v, mask)
    w = w.detach()
    return w @ v, w


def attn_weights_only(q, k, v, mask=None):
    """Returns only the output."""
    return ref.fixed_attention(q, k, v, mask)[0]


def attn_stub(q, k, v, mask=None):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


# --------------------------------------------------------------------------- fixed_causal_mask
def broken_causal_mask(T):
    """The broken mask of the lab: tril(diagonal=1) lets t see t + 1."""
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)


def mask_triu(T):
    """tril and triu confused."""
    return torch.ones(T, T, dtype=torch.bool).triu()


def mask_blocked_convention(T):
    """True = blocked (nn.MultiheadAttention's attn_mask), where True = may attend is wanted."""
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)


def mask_hides_self(T):
    """tril(diagonal=-1): the diagonal is hidden too."""
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)


def mask_eye(T):
    """Each token sees only itself."""
    return torch.eye(T, dtype=torch.bool)


def mask_float(T):
    """0/1 floats."""
    return torch.ones(T, T).tril()


def mask_stub(T):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


def mask_no_return(T):
    """Forgets the return."""
    torch.ones(T, T, dtype=torch.bool).tril()


# --------------------------------------------------------------------------- fixed_lm_loss
def unshifted_lm_loss(logits, labels):
    """The broken loss of the lab: no shift."""
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))


def lm_shift_reversed(logits, labels):
    """Shifts the wrong way."""
    lg, lb = logits[:, 1:], labels[:, :-1]
    return F.cross_entropy(lg.reshape(-1, lg.size(-1)), lb.reshape(-1))


def lm_shift_twice(logits, labels):
    """Shifts by two."""
    lg, lb = logits[:, :-2], labels[:, 2:]
    return F.cross_entropy(lg.reshape(-1, lg.size(-1)), lb.reshape(-1))


def lm_summed(logits, labels):
    """Sums instead of averaging."""
    lg, lb = logits[:, :-1], labels[:, 1:]
    return F.cross_entropy(lg.reshape(-1, lg.size(-1)), lb.reshape(-1), reduction="sum")


def lm_hand_written(logits, labels):
    """Writes the gather by hand and so trips over the -100 labels."""
    lg, lb = logits[:, :-1], labels[:, 1:]
    return -torch.log_softmax(lg, -1).gather(-1, lb[..., None]).mean()


def lm_view_slice(logits, labels):
    """.view on the slice logits[:, :-1], which is not contiguous."""
    V = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].view(-1, V), labels[:, 1:].reshape(-1), ignore_index=-100)


def lm_view_transposed(logits, labels):
    """Moves the time axis first, then .view: the transpose is not contiguous either."""
    V = logits.size(-1)
    lg, lb = logits[:, :-1].transpose(0, 1), labels[:, 1:].transpose(0, 1)
    return F.cross_entropy(lg.view(-1, V), lb.reshape(-1), ignore_index=-100)


def lm_view(logits, labels):
    """Not a mistake: .contiguous().view as in Hugging Face's code."""
    lg, lb = logits[:, :-1].contiguous(), labels[:, 1:].contiguous()
    return F.cross_entropy(lg.view(-1, lg.size(-1)), lb.view(-1), ignore_index=-100)


def lm_stub(logits, labels):
    """The untouched learner stub."""
    # YOUR CODE HERE
    raise NotImplementedError()


ROWS = [
    # ---- names
    (check_nan_loss_bug, name_lr, "wrong_bug_named", "does not explain this symptom"),
    (check_nan_loss_bug, name_missing_scale, "wrong_bug_named", "does not explain this symptom"),
    (check_nan_loss_bug, name_symptom, "unknown_bug_name", "not one of the bug names"),
    (check_nan_loss_bug, name_misspelt, "unknown_bug_name", "not one of the bug names"),
    (check_nan_loss_bug, name_none, "missing_return", "returned NoneType, not a str"),
    (check_nan_loss_bug, name_stub, "not_implemented", "raised NotImplementedError"),
    (check_nan_loss_bug, None, None, "expected the function nan_loss_bug, got None"),
    (check_uniform_attention_bug, name_missing_scale, "wrong_bug_named", "does not explain this symptom"),
    (check_uniform_attention_bug, name_softmax_queries, "wrong_bug_named", "does not explain this symptom"),
    (check_uniform_attention_bug, name_overflow, "wrong_bug_named", "does not explain this symptom"),
    (check_uniform_attention_bug, name_stub, "not_implemented", "raised NotImplementedError"),
    (check_future_mask_bug, name_hides_past, "wrong_bug_named", "does not explain this symptom"),
    (check_future_mask_bug, name_labels, "wrong_bug_named", "does not explain this symptom"),
    (check_future_mask_bug, name_misspelt, "unknown_bug_name", "not one of the bug names"),
    (check_future_mask_bug, name_stub, "not_implemented", "raised NotImplementedError"),
    (check_unshifted_labels_bug, name_shifted_twice, "wrong_bug_named", "does not explain this symptom"),
    (check_unshifted_labels_bug, name_mask_for_labels, "wrong_bug_named", "does not explain this symptom"),
    (check_unshifted_labels_bug, name_overflow, "wrong_bug_named", "does not explain this symptom"),
    (check_unshifted_labels_bug, name_stub, "not_implemented", "raised NotImplementedError"),
    # ---- stable_cross_entropy
    (check_stable_cross_entropy, naive_cross_entropy, "exp_overflow", "the loss is nan"),
    (check_stable_cross_entropy, ce_mean_shift, "shift_not_max", "far apart"),
    (check_stable_cross_entropy, ce_softmax_then_log, "log_of_softmax", "the loss is inf"),
    (check_stable_cross_entropy, ce_torch_softmax_log, "log_of_softmax", "the loss is inf"),
    (check_stable_cross_entropy, ce_mean_shift_softmax_log, "log_of_softmax", "(far apart)"),
    (check_stable_cross_entropy, ce_global_max, "shift_not_max", "the loss is -inf"),
    (check_stable_cross_entropy, ce_max_not_added, "max_not_added_back", "not equal to the reference"),
    (check_stable_cross_entropy, ce_clamped, "probability_clamped", "not equal to the reference"),
    (check_stable_cross_entropy, ce_summed, "loss_summed", "not equal to the reference"),
    (check_stable_cross_entropy, ce_item_as_tensor, "no_gradient", "carries no gradient"),  # issue 41: one per mistake of this check
    (check_stable_cross_entropy, ce_no_minus, "missing_minus_sign", "not equal to the reference"),
    (check_stable_cross_entropy, ce_dim0, "softmax_wrong_dim", "not equal to the reference"),
    (check_stable_cross_entropy, ce_float_cast, "dtype_changed", "has dtype torch.float64"),
    (check_stable_cross_entropy, None, None, "expected the function stable_cross_entropy, got None"),
    (check_stable_cross_entropy, ce_stub, "not_implemented", "raised NotImplementedError"),
    (check_stable_cross_entropy, ce_no_return, "missing_return", "is not a tensor"),
    # ---- fixed_attention
    (check_fixed_attention, broken_attention, "elementwise_scores", "do not change when the keys change"),
    (check_fixed_attention, attn_no_scale, "missing_scale", "not equal to the reference"),
    (check_fixed_attention, attn_queries, "softmax_over_queries", "not equal to the reference"),
    (check_fixed_attention, attn_mask_after, "mask_after_softmax", "not equal to the reference"),
    (check_fixed_attention, attn_inverted_mask, "mask_inverted", "a causal mask never empties a row"),
    (check_fixed_attention, attn_inverted_mask_guarded, "mask_inverted", "not equal to the reference"),
    (check_fixed_attention, attn_detached, "no_gradient", "no gradient reaches q"),
    (check_fixed_attention, attn_weights_only, None, "not a pair (out, weights)"),
    (check_fixed_attention, attn_stub, "not_implemented", "raised NotImplementedError"),
    (check_fixed_attention, None, None, "expected the function fixed_attention, got None"),
    # ---- fixed_causal_mask
    (check_fixed_causal_mask, broken_causal_mask, "mask_sees_future", "changed when only later tokens changed"),
    (check_fixed_causal_mask, mask_triu, "mask_sees_future", "changed when only later tokens changed"),
    (check_fixed_causal_mask, mask_blocked_convention, "mask_sees_future", "changed when only later tokens changed"),
    (check_fixed_causal_mask, mask_hides_self, "mask_hides_self", "is not the causal mask"),
    (check_fixed_causal_mask, mask_eye, "mask_hides_past", "is not the causal mask"),
    (check_fixed_causal_mask, mask_float, "mask_not_bool", "has dtype torch.float32"),
    (check_fixed_causal_mask, mask_stub, "not_implemented", "raised NotImplementedError"),
    (check_fixed_causal_mask, mask_no_return, "missing_return", "is not a tensor"),
    # ---- fixed_lm_loss
    (check_fixed_lm_loss, unshifted_lm_loss, "labels_not_shifted", "a model that copies its input gets a loss"),
    (check_fixed_lm_loss, lm_shift_reversed, "shift_reversed", "not equal to the reference"),
    (check_fixed_lm_loss, lm_shift_twice, "labels_shifted_twice", "not equal to the reference"),
    (check_fixed_lm_loss, lm_summed, "loss_summed", "not equal to the reference"),
    (check_fixed_lm_loss, lm_hand_written, "ignored_targets_scored", "raised RuntimeError"),
    (check_fixed_lm_loss, lm_view_slice, "view_after_transpose", "raised RuntimeError"),
    (check_fixed_lm_loss, lm_view_transposed, "view_after_transpose", "raised RuntimeError"),
    (check_fixed_lm_loss, lm_stub, "not_implemented", "raised NotImplementedError"),
    (check_fixed_lm_loss, None, None, "expected the function fixed_lm_loss, got None"),
]
LATE_FAILURE = {check_nan_loss_bug: name_lr, check_uniform_attention_bug: name_overflow,
                check_future_mask_bug: name_labels, check_unshifted_labels_bug: name_overflow,
                check_stable_cross_entropy: ce_mean_shift, check_fixed_attention: attn_detached,
                check_fixed_causal_mask: mask_eye, check_fixed_lm_loss: lm_hand_written}
STUB = {check_nan_loss_bug: name_stub, check_uniform_attention_bug: name_stub, check_future_mask_bug: name_stub,
        check_unshifted_labels_bug: name_stub, check_stable_cross_entropy: ce_stub, check_fixed_attention: attn_stub,
        check_fixed_causal_mask: mask_stub, check_fixed_lm_loss: lm_stub}
ACCEPTED = {check_stable_cross_entropy: [ce_library, ce_logsumexp], check_fixed_lm_loss: [lm_view]}
