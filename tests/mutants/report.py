"""Wrong ``flops_per_token(config, seq_len)`` (stage 12, the report): each a learner's slip."""
from tinylm_checks import check_flops_per_token
from tinylm_solutions import flops as ref
from tinylm_solutions.model import TinyLM


def _n(config):
    """N as the exercise defines it: every parameter but the position embedding."""
    return TinyLM(**config).get_num_params()


def flops_forward_only(config, seq_len):
    """Counts the forward pass only: 2 N + 2 L T D."""
    return 2 * _n(config) + 2 * config["num_layers"] * seq_len * config["d_model"]


def flops_no_attention(config, seq_len):
    """Only 6 N: the attention scores are forgotten."""
    return 6 * _n(config)


def flops_all_params(config, seq_len):
    """N counts the position embedding too (get_num_params(non_embedding=False))."""
    n = TinyLM(**config).get_num_params(non_embedding=False)
    return 6 * n + 6 * config["num_layers"] * seq_len * config["d_model"]


def flops_kaplan_non_embedding(config, seq_len):
    """Leaves the token embedding (the tied lm_head) out of N."""
    n = _n(config) - config["vocab_size"] * config["d_model"]
    return 6 * n + 6 * config["num_layers"] * seq_len * config["d_model"]


def flops_max_seq_len(config, seq_len):
    """Uses max_seq_len in the attention term."""
    return 6 * _n(config) + 6 * config["num_layers"] * config["max_seq_len"] * config["d_model"]


def flops_attention_once(config, seq_len):
    """The attention term without the number of layers."""
    return 6 * _n(config) + 6 * seq_len * config["d_model"]


def flops_palm(config, seq_len):
    """nanoGPT's estimate_mfu: 6 N + 12 L T D."""
    return 6 * _n(config) + 12 * config["num_layers"] * seq_len * config["d_model"]


def flops_tensor(config, seq_len):
    """Returns a tensor (sums parameter numels as a tensor)."""
    import torch
    return torch.tensor(float(ref.flops_per_token(config, seq_len)))


def flops_six_keys(config, seq_len):
    """Builds the model from the six size arguments only: tie_weights is dropped."""
    sizes = {k: config[k] for k in ("vocab_size", "max_seq_len", "d_model", "num_heads", "num_layers", "d_ff")}
    return 6 * _n(sizes) + 6 * config["num_layers"] * seq_len * config["d_model"]


def flops_pops_keys(config, seq_len):
    """Pops tie_weights from the config before building the model (the check's own dict is a copy)."""
    config.pop("tie_weights", None)
    return 6 * _n(config) + 6 * config["num_layers"] * seq_len * config["d_model"]


def flops_d_ff_4d(config, seq_len):
    """Assumes d_ff = 4 D: N = V D + L (12 D^2 + 13 D) + 2 D (an unknown mistake)."""
    D, L = config["d_model"], config["num_layers"]
    n = config["vocab_size"] * D + L * (12 * D * D + 13 * D) + 2 * D
    return 6 * n + 6 * L * seq_len * D


def flops_no_return(config, seq_len):
    """Forgets the return."""
    6 * _n(config)


def flops_stub(config, seq_len):
    """The untouched exercise."""
    raise NotImplementedError()


def flops_string(config, seq_len):
    """Returns the number formatted for printing."""
    return f"{ref.flops_per_token(config, seq_len):,}"


ROWS = [
    (check_flops_per_token, flops_forward_only, "flops_forward_only", "FLOPs per token is wrong"),
    (check_flops_per_token, flops_no_attention, "flops_no_attention_term", "FLOPs per token is wrong"),
    (check_flops_per_token, flops_all_params, "flops_position_embedding_counted", "FLOPs per token is wrong"),
    (check_flops_per_token, flops_kaplan_non_embedding, "flops_lm_head_left_out", "FLOPs per token is wrong"),
    (check_flops_per_token, flops_max_seq_len, "flops_max_seq_len_not_seq_len", "FLOPs per token is wrong"),
    (check_flops_per_token, flops_attention_once, "flops_attention_not_per_layer", "FLOPs per token is wrong"),
    (check_flops_per_token, flops_palm, "flops_attention_12", "FLOPs per token is wrong"),
    (check_flops_per_token, flops_tensor, "flops_not_a_number", "the result is not a number"),
    (check_flops_per_token, flops_string, "flops_not_a_number", "the result is not a number"),
    (check_flops_per_token, flops_six_keys, "flops_untied_lm_head_ignored", "FLOPs per token is wrong"),
    (check_flops_per_token, flops_pops_keys, "flops_untied_lm_head_ignored", "FLOPs per token is wrong"),
    (check_flops_per_token, flops_d_ff_4d, None, "FLOPs per token is wrong"),
    # robustness
    (check_flops_per_token, None, None, "expected the function flops_per_token"),
    (check_flops_per_token, flops_no_return, "missing_return", "the result is not a number"),
    (check_flops_per_token, flops_stub, "not_implemented", "raised NotImplementedError"),
]
LATE_FAILURE = {check_flops_per_token: flops_max_seq_len}
STUB = {check_flops_per_token: flops_stub}
