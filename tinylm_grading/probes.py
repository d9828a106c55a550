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
