"""Grading with checks a submission cannot have tampered with.

A submission runs in the same kernel as the checks, so it could rebind ``check_x``, monkeypatch
``tinylm_checks`` or the reference ``tinylm_solutions``, or replace PyTorch's comparison functions.
The hidden part of every autograder test cell therefore runs::

    import runpy
    runpy.run_module("tinylm_checks.grading")["fresh"]().check_x(learner_object, seed=1)

``runpy.run_module`` executes this file anew (a patched ``tinylm_checks.grading`` module in
``sys.modules`` is not used), and :func:`fresh`:

1. drops every ``tinylm_checks*`` and ``tinylm_solutions*`` entry from ``sys.modules`` and loads both
   packages again from the files next to this one, so rebinding or patching earlier copies has no effect;
2. puts back PyTorch's own comparison functions (``torch.allclose``, ``torch.isclose``, ``torch.equal``,
   ``torch.isfinite``) and removes Python-level overrides of the tensor methods the checks use;
3. probes those operations on known values and raises :class:`CheckFailure` if they still lie.

Limits: code that replaces Python's import machinery or PyTorch's C internals is out of reach of any
in-kernel check; nbgrader keeps the submitted source for the instructor to read.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

PACKAGES = ("tinylm_solutions", "tinylm_checks")  # order matters: the checks import the reference
TORCH_FUNCTIONS = ("allclose", "isclose", "equal", "isfinite", "softmax", "abs", "tril", "ones", "zeros")
TENSOR_METHODS = ("abs", "max", "argmax", "sum", "all", "any", "item", "tolist", "double", "float", "detach",
                  "exp", "nonzero", "masked_fill", "expand_as", "transpose", "reshape", "view",
                  "__sub__", "__add__", "__mul__", "__truediv__", "__matmul__", "__eq__", "__ne__", "__lt__",
                  "__le__", "__gt__", "__ge__", "__and__", "__invert__", "__getitem__", "__bool__", "__float__")


def _load(name: str, root: Path):
    """Import package ``name`` from ``root/name`` as a new module object (and register it)."""
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]
    spec = importlib.util.spec_from_file_location(name, root / name / "__init__.py",
                                                  submodule_search_locations=[str(root / name)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def restore_torch() -> None:
    """Put PyTorch's own comparison functions and tensor methods back in place."""
    for name in TORCH_FUNCTIONS:
        setattr(torch, name, getattr(torch._C._VariableFunctions, name))
    torch_dir = Path(torch.__file__).resolve().parent
    for name in TENSOR_METHODS:  # torch.Tensor's own Python methods live in torch's files; others are patches
        value = torch.Tensor.__dict__.get(name)
        if value is None or value is torch._C.TensorBase.__dict__.get(name):
            continue
        code = getattr(value, "__code__", None)
        if code is None or not Path(code.co_filename).resolve().is_relative_to(torch_dir):
            delattr(torch.Tensor, name)


def verify_torch(checks) -> None:
    """Fail (``checks.CheckFailure``, worded by ``checks``' message table) if the operations the checks compare with
    give wrong answers on known values."""
    a = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64)
    b = torch.tensor([0.0, 1.0, 2.5], dtype=torch.float64)
    probes = {
        "allclose": torch.allclose(a, a) is True and torch.allclose(a, b) is False,
        "equal": torch.equal(a, a) is True and torch.equal(a, b) is False,
        "subtraction": float((a - b).abs().max()) == 0.5 and int((a - b).abs().argmax()) == 2,
        "comparison": bool((a == b).all()) is False and bool((a != b).any()) is True,
        "isfinite": bool(torch.isfinite(a / 0).all()) is False,
    }
    broken = [name for name, ok in probes.items() if not ok]
    if broken:
        say = checks._text.say
        raise checks._core.Ctx("grading", 0).failure(
            "grading.torch_patched", operations=", ".join(say(f"grading.operation.{name}") for name in broken))


def fresh():
    """Return a freshly loaded ``tinylm_checks`` package, after restoring and verifying PyTorch."""
    root = Path(__file__).resolve().parent.parent
    restore_torch()
    for name in PACKAGES:
        module = _load(name, root)
    verify_torch(module)
    return module
