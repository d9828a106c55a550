"""Stage 12's answer: the training compute of one token, from the model's configuration.

The standard estimate (Kaplan et al. 2020, "Scaling Laws for Neural Language Models", §2.1 and Table 1):
a forward pass costs about ``2 N`` FLOPs per token (one multiply and one add per parameter of every
matrix a token goes through) plus ``2 n_layer n_ctx d_model`` for the attention scores; the backward pass
costs twice the forward, so training costs three times the forward:

    FLOPs per token  =  6 N  +  6 L T D

``N`` is the number of parameters a token's computation multiplies by: every parameter except the position
embedding (a lookup, no multiply), i.e. ``TinyLM(**config).get_num_params()`` (nanoGPT's
``get_num_params(non_embedding=True)``). The token embedding stays in ``N`` because, tied, it is also the
output layer's ``D x V`` matrix. ``L`` = num_layers, ``T`` = the sequence length trained on, ``D`` = d_model.

PaLM (Chowdhery et al. 2022, appendix B) and nanoGPT's ``estimate_mfu`` count both attention products
(``Q K^T`` and ``A V``) and write ``6 N + 12 L T D``; this course uses Kaplan's ``6 L T D``. At ``T`` much
smaller than ``12 D`` both attention terms are a small part of the total.
"""
from __future__ import annotations

REQUIRED = ("vocab_size", "max_seq_len", "d_model", "num_heads", "num_layers", "d_ff")


def flops_per_token(config: dict, seq_len: int) -> int:
    """Training FLOPs per token of a :class:`~tinylm_solutions.model.TinyLM`: ``6 N + 6 L T D`` (Kaplan et al.
    2020, Table 1; see the module docstring).

    Args:
        config: the model's constructor arguments (``TinyLM(**config)``): ``vocab_size``, ``max_seq_len``,
            ``d_model``, ``num_heads``, ``num_layers``, ``d_ff`` and optionally ``tie_weights`` (default True);
            other keys (``batch_size``, ``positions``, ...) are ignored.
        seq_len: ``T``, the number of tokens per sequence trained on (``1 <= T <= max_seq_len``).

    Returns:
        An ``int``: ``6 N + 6 L T D`` with ``N = TinyLM(**config).get_num_params()`` (no position embedding).

    Raises:
        ValueError: if a key of ``REQUIRED`` is missing, or ``seq_len`` is not in ``[1, max_seq_len]``.
    """
    missing = [k for k in REQUIRED if k not in config]
    if missing:
        raise ValueError(f"config needs the TinyLM arguments {REQUIRED}; missing {missing}")
    V, D, L, d_ff = (int(config[k]) for k in ("vocab_size", "d_model", "num_layers", "d_ff"))
    if not 1 <= seq_len <= int(config["max_seq_len"]):
        raise ValueError(f"seq_len must be in [1, max_seq_len={config['max_seq_len']}], got {seq_len}")
    per_block = 4 * (D * D + D) + (2 * D * d_ff + d_ff + D) + 4 * D  # attention, FFN, two LayerNorms
    embeddings = V * D * (1 if config.get("tie_weights", True) else 2)  # token_emb (+ lm_head if untied)
    n = embeddings + L * per_block + 2 * D  # + the final LayerNorm
    return 6 * n + 6 * L * seq_len * D
