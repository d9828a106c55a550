"""Probes: objects a check hands to learner code that the learner's code must *run*.

Most of what a check passes to learner code is data (tensors, numbers), or a module the code only reads
(it travels as a tree whose forward cannot run). Some exercises need more: ``generate(model, ...)`` calls
the model it is given, ``train_step(model, batch, optimizer)`` calls the model and the optimizer. For
those a check passes a *probe*: a small object of a class registered here, whose behaviour is a pure
function of data it was built from, and which records what was done to it.

Run in a learner's notebook, a check passes the probe to the learner's code as it is. Run by the grader
(:mod:`tinylm_grading.remote`), the probe travels as its class name and :meth:`Probe.probe_spec`; the agent
in the learner's kernel builds a new one with :meth:`Probe.from_probe_spec` from *its own copy* of the
registered classes (this file's source is sent to the kernel with the agent's), calls the learner's code,
and sends back :meth:`Probe.probe_report`, which :meth:`Probe.absorb_probe_report` makes the grader's
probe match. A check reads the probe the same way in both cases. A kernel that lies in a report changes
only what comes back, which is what the learner's code could have done anyway; ``absorb_probe_report``
accepts only the types it expects.

This file imports nothing but torch and the standard library: it runs as source in the learner's kernel.
"""
from __future__ import annotations

import torch

PROBES: dict[str, type] = {}
"""Registered probe classes by class name: the only classes the agent builds from a request."""


def register_probe(cls: type) -> type:
    """Class decorator: make ``cls`` (a :class:`Probe` subclass) buildable by the agent, by its name.

    Raises:
        TypeError: if ``cls`` is not a Probe subclass, or another class has its name.
    """
    if not (isinstance(cls, type) and issubclass(cls, Probe)):
        raise TypeError(f"register_probe expects a Probe subclass, got {cls!r}")
    if PROBES.get(cls.__name__, cls) is not cls:
        raise TypeError(f"a probe named {cls.__name__} is registered already")
    PROBES[cls.__name__] = cls
    return cls


class Probe:
    """Base of the objects checks pass to learner code to be run (see the module docstring)."""

    def probe_spec(self):
        """What the agent needs to build the same probe: data (tensors, numbers, strings, lists, tuples, dicts)."""
        raise NotImplementedError

    @classmethod
    def from_probe_spec(cls, spec, args: list):
        """A new probe from :meth:`probe_spec`'s data. ``args`` are the call's positional arguments as built so far
        (probes earlier in the call included), so that an optimizer probe can bind to a model probe's parameters."""
        raise NotImplementedError

    def probe_report(self):
        """What happened to this probe during the call, as data."""
        return None

    def absorb_probe_report(self, report) -> None:
        """Make this (the grader's) probe what the kernel's became, from :meth:`probe_report`'s data."""


def expect(value, kind, what: str):
    """``value`` if it is an instance of ``kind``, else ``ValueError`` (for ``absorb_probe_report``: a report
    comes from the learner's kernel and is checked like any answer)."""
    if not isinstance(value, kind):
        raise ValueError(f"a probe's report has {what} of type {type(value).__name__}")
    return value


def expect_tensor(value, shape, what: str) -> torch.Tensor:
    """``value`` if it is a tensor of exactly ``shape``, else ``ValueError``."""
    if tuple(expect(value, torch.Tensor, what).shape) != tuple(shape):
        raise ValueError(f"a probe's report has {what} of shape {tuple(value.shape)}, expected {tuple(shape)}")
    return value


def expect_shape(value, what: str) -> list[int]:
    """``value`` as a list if it is a list or tuple of at most 8 ints (a tensor's shape), else ``ValueError``."""
    if not isinstance(value, (list, tuple)) or len(value) > 8 \
            or not all(type(n) is int for n in value):
        raise ValueError(f"a probe's report has {what} that is not a shape")
    return list(value)


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
        report = expect(report, dict, "a report")
        calls = []
        for c in expect(report.get("calls"), (list, tuple), "calls")[:self.MAX_CALLS]:
            c = expect(c, dict, "a call")
            calls.append({"ids": expect(c.get("ids"), torch.Tensor, "ids").long(),
                          "training": expect(c.get("training"), bool, "training"),
                          "grad": expect(c.get("grad"), bool, "grad")})
        self.calls = calls
        self.n_calls = expect(report.get("n_calls"), int, "n_calls")
        self.train(expect(report.get("training"), bool, "training"))


import math  # noqa: E402 - stage 09's probes


# ---- stage 09 (training): a model whose forward train_step / evaluate run, and a spy optimizer

@register_probe
class ProbeLM(Probe, torch.nn.Module):
    """A language model small enough to follow: ``logits = head(emb(x))`` in float64, TinyLM's forward
    signature (``model(x, labels=None) -> (logits (B, T, V), loss or None)``; given ``labels``, the loss is
    TinyLM's: the logits at t against ``labels[:, t + 1]``, -100 ignored), and a record of every forward
    call: the module's mode, whether grad mode was on and whether labels were passed.

    Attributes:
        MAX_CALLS: the most calls the grader reads from a report (the checks make a few dozen).
        calls: list of ``{"training": bool, "grad_enabled": bool, "shape": [B, T], "labels": bool}``, one
            per forward.
    """

    MAX_CALLS = 1000

    def __init__(self, vocab_size: int, d_model: int, seed: int = 0):
        torch.nn.Module.__init__(self)
        gen = torch.Generator().manual_seed(seed)
        self.vocab_size, self.d_model = vocab_size, d_model
        self.emb = torch.nn.Parameter(torch.randn(vocab_size, d_model, generator=gen, dtype=torch.float64))
        self.head = torch.nn.Parameter(torch.randn(vocab_size, d_model, generator=gen, dtype=torch.float64)
                                       * (3.0 / math.sqrt(d_model)))  # logits of std ~3: gradient norm > 1
        self.max_seq_len = 64
        self.calls: list[dict] = []  # the grader keeps at most MAX_CALLS of a report's

    def forward(self, x: torch.Tensor, labels=None):
        self.calls.append({"training": bool(self.training), "grad_enabled": torch.is_grad_enabled(),
                           "shape": list(x.shape), "labels": labels is not None})
        logits = self.emb[x] @ self.head.T  # (B, T, D) @ (D, V) -> (B, T, V)
        if labels is None:
            return logits, None
        loss = torch.nn.functional.cross_entropy(  # as TinyLM: the model shifts the labels itself
            logits[:, :-1].reshape(-1, self.vocab_size), labels[:, 1:].reshape(-1), ignore_index=-100)
        return logits, loss

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
        report = expect(report, dict, "the model")
        grads = expect(report.get("grads"), dict, "gradients")
        with torch.no_grad():
            for name in ("emb", "head"):
                param = getattr(self, name)
                param.copy_(expect_tensor(report.get(name), param.shape, name).to(torch.float64))
        for name in ("emb", "head"):
            g = grads.get(name)
            param = getattr(self, name)
            param.grad = None if g is None else \
                expect_tensor(g, param.shape, "a gradient").to(torch.float64).clone()
        self.train(bool(expect(report.get("training"), bool, "the mode")))
        self.calls = [{"training": bool(expect(c, dict, "a call").get("training")),
                       "grad_enabled": bool(c.get("grad_enabled")),
                       "shape": expect_shape(c.get("shape", []), "a call's shape"), "labels": bool(c.get("labels"))}
                      for c in expect(report.get("calls"), list, "the calls")[:self.MAX_CALLS]]


@register_probe
class SpyOptimizer(Probe):
    """Plain SGD (``p <- p - lr * p.grad``) over a :class:`ProbeLM`'s parameters that records what it is
    asked to do, in order.

    Attributes:
        events: ``{"event": "zero_grad"}`` or ``{"event": "step", "grads": {name: tensor or None},
            "grad_norm": float}`` (the parameters' gradients at the moment ``step`` is called, and their
            global L2 norm: clipping must come before).
        MAX_EVENTS: the most events the grader reads from a report.
    """

    MAX_EVENTS = 1000

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
        events = expect(expect(report, dict, "the optimizer").get("events"), list, "the events")[:self.MAX_EVENTS]
        self.events = []
        for e in events:
            e = expect(e, dict, "an event")
            if e.get("event") == "step":
                grads = expect(e.get("grads"), dict, "a step's gradients")
                self.events.append({"event": "step", "grad_norm": float(expect(e.get("grad_norm"), float, "a norm")),
                                    "grads": {n: (None if grads.get(n) is None else
                                                  expect_tensor(grads[n], p.shape, "a gradient").to(torch.float64))
                                              for n, p in self._named()}})
            else:
                self.events.append({"event": "zero_grad"})


# ---- stage 09 (the overfit checklist lab): a small GPT and a whole one-batch training setup

OVERFIT_CHECKLIST = ("labels_not_shifted", "mask_sees_future", "padding_not_ignored", "parameters_not_in_optimizer",
                     "dropout_on", "learning_rate_extreme")
"""What to check when a one-batch overfit run goes wrong, in the order to check it (the W03 lesson, §8)."""

IGNORE_INDEX = -100  # F.cross_entropy's default ignore_index: targets with it count for nothing
OPTIMIZERS = {"SGD": torch.optim.SGD, "Adam": torch.optim.Adam, "AdamW": torch.optim.AdamW}
"""The optimizers a setup may hold (a repaired setup's optimizer is rebuilt by kind on the grader's side)."""


class _LabBlock(torch.nn.Module):
    """A Pre-LN block with one attention head: ``x + drop(out(attn(norm1 x)))``, then ``x + drop(ffn(norm2 x))``."""

    def __init__(self, d_model: int, dropout: float):
        super().__init__()
        self.norm1, self.norm2 = torch.nn.LayerNorm(d_model), torch.nn.LayerNorm(d_model)
        self.qkv = torch.nn.Linear(d_model, 3 * d_model)
        self.out = torch.nn.Linear(d_model, d_model)
        self.ffn = torch.nn.Sequential(torch.nn.Linear(d_model, 4 * d_model), torch.nn.GELU(),
                                       torch.nn.Linear(4 * d_model, d_model))
        self.drop = torch.nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)  # (B, T, D) each
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, T, D)
        x = x + self.drop(self.out(a))
        return x + self.drop(self.ffn(self.norm2(x)))  # (B, T, D)


class LabLM(torch.nn.Module):
    """The overfit lab's language model: a small GPT with TinyLM's forward signature,
    ``model(x (B, T), labels=None) -> (logits (B, T, V) float32, None)`` (no loss: the lab computes it).

    Token and learned position embeddings, ``num_layers`` Pre-LN blocks (one head, a 4·D GELU FFN, dropout
    after each sublayer and on the embeddings), a final LayerNorm and an untied head. Position t may attend to
    the keys ``torch.ones(T, T).tril(diagonal=mask_diagonal)`` allows: ``mask_diagonal = 0`` is the causal mask,
    ``1`` also lets it read token t + 1, ``None`` means no mask at all. The weights are drawn from ``seed``.
    """

    def __init__(self, vocab_size: int, max_seq_len: int = 32, d_model: int = 32, num_layers: int = 2,
                 dropout: float = 0.0, mask_diagonal: int | None = 0, seed: int = 0):
        super().__init__()
        self.config = {"vocab_size": int(vocab_size), "max_seq_len": int(max_seq_len), "d_model": int(d_model),
                       "num_layers": int(num_layers)}
        self.vocab_size, self.max_seq_len = int(vocab_size), int(max_seq_len)
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            self.token_emb = torch.nn.Embedding(vocab_size, d_model)
            self.pos_emb = torch.nn.Embedding(max_seq_len, d_model)
            self.drop = torch.nn.Dropout(dropout)
            self.blocks = torch.nn.ModuleList(_LabBlock(d_model, dropout) for _ in range(num_layers))
            self.norm = torch.nn.LayerNorm(d_model)
            self.lm_head = torch.nn.Linear(d_model, vocab_size, bias=False)
        self.mask_diagonal = mask_diagonal

    def extra_repr(self) -> str:
        return f"mask_diagonal={self.mask_diagonal}"

    def attn_mask(self, T: int) -> torch.Tensor | None:
        """``(T, T)`` bool, True = may attend (None: every position reads every position)."""
        if self.mask_diagonal is None:
            return None
        return torch.ones(T, T, dtype=torch.bool).tril(diagonal=int(self.mask_diagonal))

    def forward(self, x: torch.Tensor, labels=None):
        if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.is_floating_point():
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"input_ids must be a 2-D integer tensor (B, T), got {got}")
        T = x.size(1)
        if T > self.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.max_seq_len}; crop the input")
        h = self.drop(self.token_emb(x.long()) + self.pos_emb(torch.arange(T)))  # (B, T, D)
        mask = self.attn_mask(T)
        for block in self.blocks:
            h = block(h, mask)  # (B, T, D)
        return self.lm_head(self.norm(h)), None  # (B, T, V)

    def lab_state(self) -> dict:
        """Everything a repair may change, as data: the weights, the mode, each dropout's p, the mask."""
        return {"config": dict(self.config), "training": bool(self.training), "mask_diagonal": self.mask_diagonal,
                "weights": {n: t.detach().clone() for n, t in self.state_dict().items()},
                "dropout": [float(m.p) for m in self.modules() if isinstance(m, torch.nn.Dropout)]}

    @classmethod
    def from_lab_state(cls, state) -> "LabLM":
        state = expect(state, dict, "the model")
        config = expect(state.get("config"), dict, "the model's sizes")
        sizes = {k: expect(config.get(k), int, k) for k in ("vocab_size", "max_seq_len", "d_model", "num_layers")}
        limits = {"vocab_size": 1024, "max_seq_len": 256, "d_model": 256, "num_layers": 8}  # the grader builds it
        if not all(1 <= n <= limits[k] for k, n in sizes.items()):
            raise ValueError("a probe's report has model sizes out of range")
        model = cls(**sizes)
        model.absorb_lab_state(state)
        return model

    def absorb_lab_state(self, state) -> None:
        state = expect(state, dict, "the model")
        weights = expect(state.get("weights"), dict, "the weights")
        with torch.no_grad():
            for name, t in self.state_dict().items():
                t.copy_(expect_tensor(weights.get(name), t.shape, name))
        drops = [m for m in self.modules() if isinstance(m, torch.nn.Dropout)]
        ps = expect(state.get("dropout"), (list, tuple), "the dropout")
        if len(ps) != len(drops):
            raise ValueError("a probe's report has another number of dropout layers")
        for m, p in zip(drops, ps):
            m.p = float(expect(p, (int, float), "a dropout p"))
        diagonal = state.get("mask_diagonal")
        self.mask_diagonal = None if diagonal is None else expect(diagonal, int, "the mask's diagonal")
        self.train(expect(state.get("training"), bool, "the mode"))


@register_probe
class OverfitSetup(Probe):
    """A one-batch overfit run, whole: a model, one batch of padded sequences, its targets and an optimizer.

    Attributes:
        model: a :class:`LabLM`.
        ids: ``(B, T + 1)`` long, the batch's token windows, ``pad_id`` after each sequence's end.
        x: ``(B, T)`` long, the inputs: ``ids[:, :-1]``.
        y: ``(B, T)`` long, the targets: the token after each input, :data:`IGNORE_INDEX` (-100) where there is
            none (``ids[:, 1:]`` is padding there).
        optimizer: a ``torch.optim`` optimizer (:data:`OPTIMIZERS`).
        pad_id: the padding token's id.

    Trained with ``train_step(setup.model, (setup.x, setup.y), setup.optimizer)``.
    """

    def __init__(self, model: LabLM, ids: torch.Tensor, optimizer, pad_id: int, y: torch.Tensor | None = None):
        self.model, self.ids, self.optimizer, self.pad_id = model, ids.long(), optimizer, int(pad_id)
        self.x = self.ids[:, :-1].clone()
        self.y = targets(self.ids, self.pad_id) if y is None else y.long()

    def __repr__(self) -> str:
        B, T = self.x.shape
        return f"OverfitSetup(B={B}, T={T}, pad_id={self.pad_id}, optimizer={type(self.optimizer).__name__})"

    # -- the optimizer as data: its kind, and each group's lr and parameters (by name; its values for a tensor that
    # is not the model's)
    def _optimizer_state(self) -> dict:
        names = {id(p): n for n, p in self.model.named_parameters()}
        groups = [{"lr": float(g["lr"]), "params": [names.get(id(p)) or p.detach().clone() for p in g["params"]]}
                  for g in self.optimizer.param_groups]
        return {"kind": type(self.optimizer).__name__, "groups": groups, "stepped": len(self.optimizer.state)}

    @staticmethod
    def _build_optimizer(model: LabLM, state):
        state = expect(state, dict, "the optimizer")
        kind = OPTIMIZERS.get(expect(state.get("kind"), str, "the optimizer's kind"))
        if kind is None:
            raise ValueError(f"a probe's report has an optimizer of kind {state.get('kind')!r}: "
                             f"one of {', '.join(OPTIMIZERS)} is expected")
        params = dict(model.named_parameters())
        groups = []
        for g in expect(state.get("groups"), (list, tuple), "the groups")[:8]:
            g = expect(g, dict, "a group")
            ps = [params[p] if isinstance(p, str) and p in params else
                  torch.nn.Parameter(_small(expect(p, torch.Tensor, "a parameter the model does not have")))
                  for p in expect(g.get("params"), (list, tuple), "a group's parameters")[:100]]
            groups.append({"params": ps, "lr": float(expect(g.get("lr"), (int, float), "a learning rate"))})
        if not groups or not all(g["params"] for g in groups):
            raise ValueError("a probe's report has an optimizer without parameters")
        optimizer = kind(groups)
        optimizer.lab_stepped = int(state.get("stepped") or 0)  # how many parameters it had state for
        return optimizer

    def _state(self) -> dict:
        return {"model": self.model.lab_state(), "ids": self.ids.clone(), "x": self.x.clone(), "y": self.y.clone(),
                "pad_id": self.pad_id, "optimizer": self._optimizer_state()}

    def probe_spec(self) -> dict:
        return self._state()

    @classmethod
    def from_probe_spec(cls, spec, args):
        spec = expect(spec, dict, "a setup")
        model = LabLM.from_lab_state(spec.get("model"))
        setup = cls(model, expect(spec.get("ids"), torch.Tensor, "ids"),
                    cls._build_optimizer(model, spec.get("optimizer")), expect(spec.get("pad_id"), int, "pad_id"),
                    y=expect(spec.get("y"), torch.Tensor, "y"))
        setup.x = expect(spec.get("x"), torch.Tensor, "x").long()
        return setup

    def probe_report(self) -> dict:
        return self._state()

    def absorb_probe_report(self, report) -> None:
        report = expect(report, dict, "a setup")
        B, T1 = self.ids.shape
        state = expect(report.get("model"), dict, "the model")
        if state.get("config") == self.model.config:
            self.model.absorb_lab_state(state)
        else:  # a new model of other sizes: the report's, built here
            self.model = LabLM.from_lab_state(state)
        self.ids = expect_tensor(report.get("ids"), (B, T1), "ids").long()
        self.x = expect_tensor(report.get("x"), (B, T1 - 1), "x").long()
        self.y = expect_tensor(report.get("y"), (B, T1 - 1), "y").long()
        self.pad_id = expect(report.get("pad_id"), int, "pad_id")
        self.optimizer = self._build_optimizer(self.model, report.get("optimizer"))


def _small(t: torch.Tensor) -> torch.Tensor:
    """A float copy of a reported tensor of at most 2**18 elements (a lab model's largest is 2**16), else ValueError."""
    if t.numel() > 2 ** 18:
        raise ValueError("a probe's report has a tensor too large for the lab's models")
    return t.detach().float().clone()


def targets(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """The targets of windows ``ids (B, T + 1)``: the next token, ``ids[:, 1:]``, with :data:`IGNORE_INDEX` where
    that token is padding. ``(B, T)`` long."""
    nxt = ids[:, 1:].long()  # (B, T)
    return nxt.masked_fill(nxt == pad_id, IGNORE_INDEX)


def overfit_setup(ids: torch.Tensor, pad_id: int, vocab_size: int, bugs: dict | None = None, seed: int = 0,
                  d_model: int = 32, num_layers: int = 2, lr: float = 3e-3) -> OverfitSetup:
    """A one-batch overfit setup over ``ids (B, T + 1)``, healthy, or broken by ``bugs``: a dict from names of
    :data:`OVERFIT_CHECKLIST` to a variant number (0 is the most common form of the bug):

    - ``labels_not_shifted``: 0 the targets are the inputs (``y = x``); 1 shifted twice (the token two ahead);
    - ``mask_sees_future``: 0 ``tril(diagonal=1)`` (t reads t + 1); 1 no mask in effect, ``mask_diagonal =
      max_seq_len`` (a setup a learner builds as the check does, and that a probe reading ``tril(diagonal=
      setup.model.mask_diagonal)`` handles: ``None``, which LabLM also takes, would crash it);
    - ``padding_not_ignored``: 0 padded targets are ``pad_id``; 1 they are token 0;
    - ``parameters_not_in_optimizer``: 0 only the blocks' parameters; 1 another model's parameters (the optimizer was
      built before the model was rebuilt); 2 all but the head; 3 plain SGD over the blocks' parameters;
    - ``dropout_on``: dropout 0.3 (variant 0) or 0.5 (1) on while training;
    - ``learning_rate_extreme``: lr 1e-7 (0), 5.0 (1).

    The model's weights come from ``seed`` whatever the bugs (so a repaired setup trains like a healthy one).
    """
    bugs = dict(bugs or {})
    unknown = set(bugs) - set(OVERFIT_CHECKLIST)
    if unknown:
        raise ValueError(f"unknown bugs {sorted(unknown)}: expected names from {OVERFIT_CHECKLIST}")
    B, T1 = ids.shape
    mask = {None: 0, 0: 1, 1: T1 - 1}[bugs.get("mask_sees_future")]  # T1 - 1 = max_seq_len: tril allows every key
    model = LabLM(vocab_size, T1 - 1, d_model, num_layers, mask_diagonal=mask, seed=seed,
                  dropout={None: 0.0, 0: 0.3, 1: 0.5}[bugs.get("dropout_on")])
    lr = {None: lr, 0: 1e-7, 1: 5.0}[bugs.get("learning_rate_extreme")]
    params = {None: lambda: model.parameters(), 0: lambda: model.blocks.parameters(),
              1: lambda: LabLM(vocab_size, T1 - 1, d_model, num_layers, seed=seed).parameters(),
              2: lambda: (p for n, p in model.named_parameters() if not n.startswith("lm_head"))}
    params[3] = params[0]
    kind = torch.optim.SGD if bugs.get("parameters_not_in_optimizer") == 3 else torch.optim.AdamW
    optimizer = kind(params[bugs.get("parameters_not_in_optimizer")](), lr=lr)
    y = targets(ids, pad_id)
    if "padding_not_ignored" in bugs:
        y = y.masked_fill(y == IGNORE_INDEX, pad_id if bugs["padding_not_ignored"] == 0 else 0)
    if bugs.get("labels_not_shifted") == 0:
        y = ids[:, :-1].masked_fill(ids[:, :-1] == pad_id, IGNORE_INDEX)
    elif bugs.get("labels_not_shifted") == 1:
        y = torch.cat([targets(ids[:, 1:], pad_id), torch.full((B, 1), IGNORE_INDEX)], dim=1)
    return OverfitSetup(model, ids, optimizer, pad_id, y=y)
