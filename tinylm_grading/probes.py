"""Probes: objects a check passes to learner code that the learner's code must run (see the brief's API).

STAND-IN BASE (stage 09's branch only): the lead's ``Probe`` / ``register_probe`` land on main; on merge keep
main's base and this file's "stage 09" section. Probe classes import only torch and math.
"""
from __future__ import annotations

import math

import torch

PROBES: dict[str, type] = {}


class Probe:  # stand-in of main's base class: same four methods
    def probe_spec(self):
        raise NotImplementedError

    @classmethod
    def from_probe_spec(cls, spec, args):
        raise NotImplementedError

    def probe_report(self):
        raise NotImplementedError

    def absorb_probe_report(self, report) -> None:
        raise NotImplementedError


def register_probe(cls):  # stand-in of main's register_probe
    PROBES[cls.__name__] = cls
    return cls


# ---- stage 09 (training): a model whose forward train_step / evaluate run, and a spy optimizer

@register_probe
class ProbeLM(Probe, torch.nn.Module):
    """A language model small enough to follow: ``logits = head(emb(x))`` in float64, TinyLM's forward
    signature (``model(x) -> (logits (B, T, V), None)``), and a record of every forward call: the
    module's mode and whether grad mode was on.

    Attributes:
        calls: list of ``{"training": bool, "grad_enabled": bool, "shape": [B, T]}``, one per forward.
    """

    def __init__(self, vocab_size: int, d_model: int, seed: int = 0):
        torch.nn.Module.__init__(self)
        gen = torch.Generator().manual_seed(seed)
        self.vocab_size, self.d_model = vocab_size, d_model
        self.emb = torch.nn.Parameter(torch.randn(vocab_size, d_model, generator=gen, dtype=torch.float64))
        self.head = torch.nn.Parameter(torch.randn(vocab_size, d_model, generator=gen, dtype=torch.float64)
                                       * (3.0 / math.sqrt(d_model)))  # logits of std ~3: gradient norm > 1
        self.max_seq_len = 64
        self.calls: list[dict] = []

    def forward(self, x: torch.Tensor, labels=None):
        self.calls.append({"training": bool(self.training), "grad_enabled": torch.is_grad_enabled(),
                           "shape": list(x.shape)})
        logits = self.emb[x] @ self.head.T  # (B, T, D) @ (D, V) -> (B, T, V)
        return logits, None

    def _state(self) -> dict:
        return {"emb": self.emb.detach().clone(), "head": self.head.detach().clone(),
                "grads": {n: (p.grad.detach().clone() if p.grad is not None else None)
                          for n, p in (("emb", self.emb), ("head", self.head))},
                "training": bool(self.training), "calls": [dict(c) for c in self.calls]}

    def probe_spec(self) -> dict:
        return {"vocab_size": self.vocab_size, "d_model": self.d_model, **self._state()}

    @classmethod
    def from_probe_spec(cls, spec, args):
        model = cls(int(spec["vocab_size"]), int(spec["d_model"]))
        model.absorb_probe_report(spec)
        return model

    def probe_report(self) -> dict:
        return self._state()

    def absorb_probe_report(self, report) -> None:
        with torch.no_grad():
            self.emb.copy_(report["emb"])
            self.head.copy_(report["head"])
        for name in ("emb", "head"):
            g = report["grads"][name]
            getattr(self, name).grad = None if g is None else g.clone()
        self.train(bool(report["training"]))
        self.calls = [dict(c) for c in report["calls"]]


@register_probe
class SpyOptimizer(Probe):
    """Plain SGD (``p <- p - lr * p.grad``) over a :class:`ProbeLM`'s parameters that records what it is
    asked to do, in order.

    Attributes:
        events: ``{"event": "zero_grad"}`` or ``{"event": "step", "grads": {name: tensor or None},
            "grad_norm": float}`` (the parameters' gradients at the moment ``step`` is called, and their
            global L2 norm: clipping must come before).
    """

    def __init__(self, model: ProbeLM, lr: float = 0.1):
        self.model, self.lr = model, float(lr)
        self.events: list[dict] = []
        self.param_groups = [{"params": [model.emb, model.head], "lr": self.lr}]

    def _named(self):
        return (("emb", self.model.emb), ("head", self.model.head))

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.events.append({"event": "zero_grad"})
        for _, p in self._named():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def step(self, closure=None) -> None:
        grads = {n: (p.grad.detach().clone() if p.grad is not None else None) for n, p in self._named()}
        norm = math.sqrt(sum(float((g ** 2).sum()) for g in grads.values() if g is not None))
        self.events.append({"event": "step", "grads": grads, "grad_norm": norm})
        with torch.no_grad():
            for _, p in self._named():
                if p.grad is not None:
                    p -= self.lr * p.grad

    def probe_spec(self) -> dict:
        return {"lr": self.lr, "events": list(self.events)}

    @classmethod
    def from_probe_spec(cls, spec, args):
        models = [a for a in args if isinstance(a, ProbeLM)]
        if not models:
            raise ValueError("a SpyOptimizer is passed together with the ProbeLM it optimizes")
        spy = cls(models[0], spec["lr"])
        spy.events = list(spec["events"])
        return spy

    def probe_report(self) -> dict:
        return {"lr": self.lr, "events": list(self.events)}

    def absorb_probe_report(self, report) -> None:
        self.events = list(report["events"])
