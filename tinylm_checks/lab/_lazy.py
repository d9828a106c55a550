"""Plotting libraries loaded on first use, not when ``tinylm_checks`` is imported: the grader and the checks never
draw, and matplotlib with seaborn cost about 1.5 s of start-up in every process that imports the checks."""
from __future__ import annotations

import importlib


class LazyModule:
    """Stands for the module ``name`` and imports it at the first attribute read (``plt.subplots``)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self._name), attr)


plt = LazyModule("matplotlib.pyplot")
sns = LazyModule("seaborn")
