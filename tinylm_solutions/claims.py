"""Stage 11's claims lab: the source lesson's claims about a Transformer's parts, each as a short experiment.

The lesson (W03, "Transformer 最小闭环") states, without running them: remove a part and see what breaks; an FFN
about ``4 D`` wide; SwiGLU only compared at equal parameters ("otherwise the gain may only be a wider hidden
layer"); RoPE in place of learned positions. Each experiment here trains the same small TinyLM in a few variants that
differ only in the part named, one run per seed on the same batches, and scores each on the same held-out windows:

- ``"positions"``: learned positions (GPT-2), the frozen sinusoidal table (Vaswani et al. 2017, §3.5), RoPE (Su et
  al. 2021) and none;
- ``"parts"``: the whole model, and without attention, FFN, residual connections, LayerNorm or positions
  (:func:`~tinylm_solutions.ablations.without`);
- ``"ffn_width"``: ``d_ff`` of ``D``, ``2 D``, ``4 D`` and ``8 D``;
- ``"swiglu"``: the GELU FFN at ``4 D``; SwiGLU (Shazeer 2020) at the same hidden width, which has 1.5 times its
  weights; SwiGLU at ``2/3`` of it (:func:`~tinylm_solutions.ffn.swiglu_hidden_size`), which matches them.

A variant that is the same model in two experiments (the whole model, learned positions, ``d_ff = 4 D``, GELU at
``4 D``) is trained once per seed.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .ablations import FAST, SEEDS, without
from .ffn import SwiGLU, swiglu_hidden_size
from .model import TinyLM, small_init_std
from .trainer import train

#: Each experiment's variants, in the order its table and plot show them.
EXPERIMENTS = {
    "positions": ("learned", "sinusoidal", "RoPE", "no positions"),
    "parts": ("whole model", "no attention", "no FFN", "no residual", "no LayerNorm", "no positions"),
    "ffn_width": ("d_ff = D", "d_ff = 2D", "d_ff = 4D", "d_ff = 8D"),
    "swiglu": ("GELU, d_ff = 4D", "SwiGLU, d_ff = 4D", "SwiGLU, d_ff = 8D/3"),
}

CLAIMS_SIZE = dict(max_seq_len=32, d_model=32, num_heads=2, num_layers=2)
"""Every variant's size but what it changes: 2 Pre-LN layers of width 32, 2 heads, ``d_ff = 4 D``, 32 positions, and
the init std of the width (:func:`~tinylm_solutions.model.small_init_std`, 0.11: GPT-2's 0.02 is set for
``D = 768``, and at this width it leaves every run near the unigram loss for its first hundreds of steps)."""

CLAIMS_STEPS, CLAIMS_LR, CLAIMS_WINDOWS = 400, 3e-3, 64
"""Every run: 400 steps of AdamW at 3e-3, batch 16, gradients clipped at 1; scored on 64 held-out windows."""


def _variant(name: str) -> tuple[str, dict, str | None, str | None]:
    """``(run key, TinyLM arguments to change, part to remove, FFN to swap in)`` of a variant; equal keys, one run."""
    table = {
        "learned": ("base", {}, None, None), "whole model": ("base", {}, None, None),
        "d_ff = 4D": ("base", {}, None, None), "GELU, d_ff = 4D": ("base", {}, None, None),
        "sinusoidal": ("sinusoidal", {"positions": "sinusoidal"}, None, None),
        "RoPE": ("rope", {"positions": "rope"}, None, None),
        "no positions": ("none", {"positions": "none"}, None, None),
        "no attention": ("no attention", {}, "attention", None), "no FFN": ("no FFN", {}, "ffn", None),
        "no residual": ("no residual", {}, "residual", None), "no LayerNorm": ("no LayerNorm", {}, "norm", None),
        "d_ff = D": ("ffn 1", {"d_ff": 1}, None, None), "d_ff = 2D": ("ffn 2", {"d_ff": 2}, None, None),
        "d_ff = 8D": ("ffn 8", {"d_ff": 8}, None, None),
        "SwiGLU, d_ff = 4D": ("swiglu 4", {}, None, "swiglu"),
        "SwiGLU, d_ff = 8D/3": ("swiglu matched", {}, None, "swiglu matched"),
    }
    return table[name]


def claims_model(name: str, vocab_size: int) -> TinyLM:
    """The TinyLM of one variant of :data:`EXPERIMENTS` (:data:`CLAIMS_SIZE`), initialised from the global RNG (seed
    it first).

    A swapped-in SwiGLU gets TinyLM's own init (N(0, σ); its output projection σ / sqrt(2 L), like ``linear2``), so
    the FFN's kind is the only difference.
    """
    _, changes, part, ffn = _variant(name)
    D, num_layers = CLAIMS_SIZE["d_model"], CLAIMS_SIZE["num_layers"]
    args = dict(CLAIMS_SIZE, vocab_size=vocab_size, d_ff=4 * D, init_std=small_init_std(D))
    args.update({k: (v * D if k == "d_ff" else v) for k, v in changes.items()})
    model = TinyLM(**args)
    if part is not None:
        without(model, part)
    if ffn is not None:
        hidden = 4 * D if ffn == "swiglu" else swiglu_hidden_size(4 * D)
        std = model.config["init_std"]
        for block in model.blocks:
            block.ffn = SwiGLU(D, hidden)
            for proj in (block.ffn.gate_proj, block.ffn.up_proj):
                nn.init.normal_(proj.weight, mean=0.0, std=std)
            nn.init.normal_(block.ffn.down_proj.weight, mean=0.0, std=std / math.sqrt(2 * num_layers))
    return model


def ffn_parameters(model: TinyLM) -> int:
    """The parameters of every block's FFN (0 without one)."""
    return sum(p.numel() for block in model.blocks if block.ffn is not None for p in block.ffn.parameters())


@torch.no_grad()
def held_out_loss(model: nn.Module, windows: torch.Tensor) -> float:
    """Mean next-token loss of ``model`` on ``windows`` ``(N, T)`` (eval mode, restored)."""
    was_training = model.training
    model.eval()
    try:
        logits = model(windows)[0]  # (N, T, V)
        return float(F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), windows[:, 1:].reshape(-1)))
    finally:
        model.train(was_training)


def claims_lab(experiment: str, train_data: torch.Tensor, val_data: torch.Tensor, vocab_size: int, *,
               steps: int = CLAIMS_STEPS, seeds=SEEDS, lr: float = CLAIMS_LR, cache: dict | None = None) -> dict:
    """Run one experiment of :data:`EXPERIMENTS`: each variant once per seed, the same batches for every variant of
    a seed (AdamW at ``lr``, batch 16, gradients clipped at 1), each scored on the same :data:`CLAIMS_WINDOWS`
    held-out windows of ``val_data``.

    Args:
        cache: a dict kept between calls, so that a
            variant shared by two experiments (:func:`_variant`'s run key) trains once per seed and length.

    Returns:
        ``{"experiment", "steps", "seeds", "runs": {variant: {"held_out_loss": [per seed], "final_loss": [per seed:
        the mean training loss of the last 10 steps], "params": int, "ffn_params": int}}}``.

    Raises:
        ValueError: ``experiment`` is not one of :data:`EXPERIMENTS`.
    """
    if experiment not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {tuple(EXPERIMENTS)}, got {experiment!r}")
    T = CLAIMS_SIZE["max_seq_len"]
    windows = torch.stack([val_data[i: i + T] for i in range(0, CLAIMS_WINDOWS * T, T)])  # (N, T)
    cache = {} if cache is None else cache
    runs = {}
    for name in EXPERIMENTS[experiment]:
        key = (_variant(name)[0], steps, lr, tuple(seeds), vocab_size, len(train_data), len(val_data))
        if key not in cache:
            held, final = [], []
            for seed in seeds:
                torch.manual_seed(seed)
                model = claims_model(name, vocab_size)
                hist = train(model, train_data, steps=steps, batch_size=16, lr=lr, seed=seed, progress=False, **FAST)
                held.append(held_out_loss(model, windows))
                final.append(sum(hist["loss"][-10:]) / len(hist["loss"][-10:]))
            cache[key] = {"held_out_loss": held, "final_loss": final, "params": model.get_num_params(),
                          "ffn_params": ffn_parameters(model)}
        runs[name] = dict(cache[key])
    return {"experiment": experiment, "steps": steps, "seeds": list(seeds), "runs": runs}
