"""Probes: objects a check passes to learner code that the learner's code must run.

TEMPORARY BASE (stage 10's branch): the lead lands the real ``Probe`` / ``register_probe`` and the remote
carrying on main; when it does, this base goes and only the stage sections below stay.
"""
from __future__ import annotations

import math  # noqa: F401 - probe classes may use torch and math only

import torch

PROBES: dict[str, type] = {}


class Probe:
    """Base of the probes (temporary stand-in for the lead's API)."""

    def probe_spec(self):
        raise NotImplementedError

    @classmethod
    def from_probe_spec(cls, spec, args):
        raise NotImplementedError

    def probe_report(self):
        raise NotImplementedError

    def absorb_probe_report(self, report) -> None:
        raise NotImplementedError


def register_probe(cls):
    PROBES[cls.__name__] = cls
    return cls


# ---- stage 10 (generation): a language model with fixed logits, for check_generate

@register_probe
class ScriptedLM(Probe, torch.nn.Module):
    """A stand-in language model whose logits are a fixed table: ``logits[b, t] = table[t, input_ids[b, t]]``.

    The logits at a position depend on that position *and* on the token there, so every way of feeding the
    model the wrong context (uncropped, cropped from the front, only the last token) or of reading the wrong
    position (the first instead of the last) gives other tokens. Like ``TinyLM``, ``forward(input_ids (B, T),
    labels=None)`` returns ``(logits (B, T, V) float32, None)``, has ``max_seq_len`` and ``vocab_size``, and raises
    ``ValueError`` when ``T > max_seq_len``. It records every call: the ids it was fed, whether it was in
    training mode and whether autograd was recording (``calls``, at most ``MAX_CALLS`` kept; ``n_calls``).

    Args:
        table: ``(max_seq_len, V, V)`` float32 logits, indexed by (position, token fed there).
    """

    MAX_CALLS = 64

    def __init__(self, table: torch.Tensor):
        torch.nn.Module.__init__(self)
        if table.dim() != 3 or table.size(1) != table.size(2):
            raise ValueError(f"table must be (max_seq_len, V, V), got {tuple(table.shape)}")
        self.register_buffer("table", table.detach().float().clone())
        self.bias = torch.nn.Parameter(torch.zeros(table.size(2)))  # zeros: parameters() is not empty, and
        self.max_seq_len, self.vocab_size = table.size(0), table.size(2)  # logits carry grad when autograd records
        self.calls: list[dict] = []
        self.n_calls = 0

    def forward(self, input_ids: torch.Tensor, labels=None):
        if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2 or input_ids.is_floating_point():
            got = tuple(input_ids.shape) if isinstance(input_ids, torch.Tensor) else type(input_ids).__name__
            raise ValueError(f"input_ids must be a 2-D integer tensor (B, T), got {got}")
        B, T = input_ids.shape
        if T > self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}; crop the input")
        if T == 0:
            raise ValueError("input_ids has no positions (T = 0)")
        self.n_calls += 1
        if len(self.calls) < self.MAX_CALLS:
            self.calls.append({"ids": input_ids.detach().long().clone(), "training": bool(self.training),
                               "grad": bool(torch.is_grad_enabled())})
        positions = torch.arange(T, device=input_ids.device)[None, :]  # (1, T)
        logits = self.table[positions, input_ids.long()] + self.bias  # (B, T, V)
        return logits, None

    def probe_spec(self):
        return {"table": self.table.clone(), "training": bool(self.training)}

    @classmethod
    def from_probe_spec(cls, spec, args):
        model = cls(spec["table"])
        model.train(bool(spec["training"]))
        return model

    def probe_report(self):
        return {"calls": [dict(c) for c in self.calls], "n_calls": int(self.n_calls), "training": bool(self.training)}

    def absorb_probe_report(self, report) -> None:
        self.calls = [{"ids": c["ids"], "training": bool(c["training"]), "grad": bool(c["grad"])}
                      for c in report["calls"]]
        self.n_calls = int(report["n_calls"])
        self.train(bool(report["training"]))
