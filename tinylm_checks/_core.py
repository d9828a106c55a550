"""The machinery every check shares: the failure type, calling learner code safely, comparing tensors.

A check compares by behaviour: it builds inputs from its own seeded generator, calls the learner's
function (or instantiates the learner's class with its own sizes), copies weights from the reference
when there are weights, and compares outputs. The comparisons here use only a few tensor operations
(subtraction, ``abs``, ``max``, ``isfinite``), which :mod:`tinylm_checks.grading` verifies before a
graded run.
"""
from __future__ import annotations

import functools
import inspect
import random
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

ATOL = 1e-6
RTOL = 1e-6
"""Tolerances of every float64 comparison: |got - expected| <= ATOL + RTOL * |expected|, elementwise
(the relative part lets a learner's float32 constant, e.g. torch.sqrt(torch.tensor(d_k)), pass)."""


class CheckFailure(AssertionError):
    """A check found a problem in the learner's code.

    Subclasses ``AssertionError`` so that nbgrader scores the test cell 0. ``mistake`` is a short
    identifier of a known mistake (e.g. ``"softmax_over_queries"``) or ``None`` when the mistake is
    not one the check recognises; tests use it to assert the diagnosis. ``hint_for`` is the mistake the
    hint was written for (always ``mistake`` when one is named: see :meth:`Ctx.fail`). In
    IPython/JupyterLab only the message is shown, not a traceback through the checker
    (``_render_traceback_``).
    """

    def __init__(self, check: str, problem: str, *, tried: str | None = None,
                 expected: str | None = None, got: str | None = None,
                 mistake: str | None = None, hint: str | None = None, hint_for: str | None = None):
        self.check, self.problem, self.mistake, self.hint_for = check, problem, mistake, hint_for
        self.tried, self.expected, self.got, self.hint = tried, expected, got, hint
        lines = [f"{check} failed: {problem}"]
        for label, text in (("tried", tried), ("expected", expected), ("got", got)):
            if text:
                lines.append(f"  {label + ':':<9} {text}")
        if mistake:
            lines.append(f"  likely mistake: {MISTAKES.get(mistake, mistake)}")
        if hint:
            lines.append(f"  hint:     {hint}")
        super().__init__("\n".join(lines))

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        red, reset = "\x1b[31m", "\x1b[0m"
        head, *rest = str(self).split("\n")
        return [f"{red}CheckFailure{reset}: {head}", *rest]


MISTAKES: dict[str, str] = {}
"""Known mistakes: identifier -> the sentence a learner reads. Filled by the check modules."""

MISTAKE_HINTS: dict[str, str] = {}
"""Known mistakes: identifier -> the hint that goes with it wherever it is named (a check may give a
version that fits its exercise better: see ``Ctx.hints``)."""


CLASHES: list[str] = []
"""Ids registered twice with different words (the first registration is kept); tests require none."""


class _Reference:
    """Stands for a reference module; each attribute is read from the module, imported on first use."""

    def __init__(self, fullname: str):
        self._fullname = fullname

    def __getattr__(self, attr: str):
        import importlib
        return getattr(importlib.import_module(self._fullname), attr)

    def __repr__(self) -> str:
        return f"<reference {self._fullname}>"


def reference(name: str) -> _Reference:
    """The reference module ``tinylm_solutions.<name>``, imported when a check first reads from it.

    Importing the checks must work where a stage's reference module is hidden, as in autograding's
    sandbox (whose verdicts are computed outside the learner's kernel); there, reading from it raises the
    hidden module's ImportError, each time. (``importlib.util.LazyLoader`` does not do: after a failed
    first load it leaves an empty module behind.)
    """
    return _Reference(f"tinylm_solutions.{name}")


def known_mistake(name: str, sentence: str, hint: str) -> str:
    """Register a mistake a check can name, with the sentence and the hint a learner reads."""
    if not sentence or not hint:
        raise ValueError(f"mistake {name!r} needs a sentence and a hint")
    if MISTAKES.get(name, sentence) != sentence or MISTAKE_HINTS.get(name, hint) != hint:
        CLASHES.append(name)  # a test fails on it; a learner's import must not (it would stop every notebook)
        return name
    MISTAKES[name] = sentence
    MISTAKE_HINTS[name] = hint
    return name


# --------------------------------------------------------------------------- running a check

@dataclass
class Ctx:
    """What one check run knows: its name, its generator, and what it tried (for messages)."""

    name: str
    seed: int
    gen: torch.Generator = field(init=False)
    learner: object = None  # what the learner passed (for diagnoses that look at how it was called)
    batched: bool = True  # the learner's code works on batched (3-D and up) tensors, where .T is a mistake
    hints: dict[str, str] = field(default_factory=dict)  # this exercise's own wording of some hints

    def __post_init__(self):
        self.gen = torch.Generator().manual_seed(self.seed)

    def fail(self, problem: str, *, mistake: str | None = None, hint: str | None = None,
             mistake_hint: str | None = None, **kw) -> None:
        """Raise a CheckFailure. A named ``mistake`` always comes with *its own* hint: ``mistake_hint``
        (a hint written for that mistake at the call site), else this exercise's wording
        (``self.hints``), else the hint registered with the mistake. ``hint`` is the hint for a failure
        no mistake is named for; it is never shown next to a named mistake."""
        if mistake is None and self.batched and _uses_dot_T(self.learner) and not isinstance(self.learner, type):
            mistake = "batched_T"
        if mistake is not None:
            hint = mistake_hint or self.hints.get(mistake) or MISTAKE_HINTS[mistake]
        elif mistake_hint is not None:
            raise TypeError("mistake_hint needs a mistake")
        raise CheckFailure(self.name, problem, mistake=mistake, hint=hint,
                           hint_for=mistake, **kw) from None

    def randn(self, *shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=self.gen, dtype=torch.float64)

    # ---- calling learner code

    def call(self, fn, *args, what: str, names: tuple[str, ...] = (), mistake_if_raises: str | None = None,
             **kwargs):
        """Call learner code on copies of its tensor arguments.

        Any exception becomes a CheckFailure that says where and what, naming the mistake when the
        exception shows a known one, else ``mistake_if_raises`` (what the caller knows explains any
        exception at this point, e.g. the same code worked on 3-D inputs). A tensor argument changed in
        place fails too (``names`` gives the arguments' names for that message).
        """
        copies = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        try:
            result = fn(*copies, **kwargs)
        except CheckFailure:
            raise
        except Exception as e:  # noqa: BLE001 - learner code may raise anything
            self.fail(f"your code raised {type(e).__name__} when {what}",
                      got=type(e).__name__ + (f": {_short(e)}" if _short(e) else "") + _learner_frame(e),
                      mistake=_mistake_from_exception(e) or mistake_if_raises,
                      hint=_hint_from_exception(e))
        for i, (a, c) in enumerate(zip(args, copies)):
            if isinstance(a, torch.Tensor) and not (a.shape == c.shape and bool((a == c).all())):
                name = names[i] if i < len(names) else f"argument {i + 1}"
                self.fail(f"your code changed its input {name} in place", tried=what,
                          mistake="input_modified_in_place")
        return result

    def differentiable(self, fn, *args, what: str, names: tuple[str, ...]) -> None:
        """Gradients must flow from the output back to every named tensor argument."""
        inputs = [a.detach().clone().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point()
                  else a for a in args]
        with torch.enable_grad():
            out = self.call(fn, *inputs, what=what, names=names)
            first = out[0] if isinstance(out, (tuple, list)) else out
            if not isinstance(first, torch.Tensor) or not first.requires_grad:
                self.fail("the output carries no gradient", tried=what, mistake="no_gradient")
            first.sum().backward()
        for name, a in zip(names, inputs):
            if isinstance(a, torch.Tensor) and a.requires_grad and a.grad is None:
                self.fail(f"no gradient reaches {name}", tried=what, mistake="no_gradient",
                          mistake_hint=f"compute the output from {name} with tensor operations (no .detach() or numpy)")

    def dtype_follows(self, fn, *args, what: str, names: tuple[str, ...]) -> None:
        """Called with float32 tensors, the function must return float32."""
        inputs = [a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
        out = self.call(fn, *inputs, what=what + " (in float32)", names=names)
        for t in (out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(t, torch.Tensor) and t.dtype != torch.float32:
                self.fail(f"float32 inputs gave a {t.dtype} output", tried=what + " (in float32)",
                          expected="torch.float32, the dtype of the inputs", got=str(t.dtype), mistake="dtype_changed")

    def function(self, obj, expected_name: str):
        """Ensure ``obj`` is a plain function (not a class, not None)."""
        if obj is None or isinstance(obj, type) or not callable(obj):
            kind = "None" if obj is None else ("a class" if isinstance(obj, type) else type(obj).__name__)
            self.fail(f"expected the function {expected_name}, got {kind}",
                      hint=f"pass the function itself: {self.name}({expected_name})")
        return obj

    def module_class(self, obj, expected_name: str):
        """Ensure ``obj`` is an ``nn.Module`` subclass (the class, not an instance)."""
        if isinstance(obj, nn.Module):
            self.fail(f"expected the class {expected_name}, got an instance of {type(obj).__name__}",
                      hint=f"pass the class, not an object: {self.name}({expected_name})")
        if not (isinstance(obj, type) and issubclass(obj, nn.Module)):
            kind = "None" if obj is None else type(obj).__name__
            self.fail(f"expected the class {expected_name} (a subclass of nn.Module), got {kind}",
                      hint=f"define `class {expected_name}(nn.Module):` and pass the class itself")
        return obj

    def build(self, cls, *args, what: str, **kwargs):
        """Instantiate a learner module with the check's sizes, in float64."""
        module = self.call(cls, *args, what=what, **kwargs)
        if not isinstance(module, nn.Module):
            self.fail(f"{what} did not return an nn.Module", got=type(module).__name__)
        return module.double()

    def linear(self, module: nn.Module, attr: str, d_in: int, d_out: int, bias: bool = True) -> nn.Linear:
        """Fetch ``module.<attr>`` and make sure it is ``nn.Linear(d_in, d_out)``."""
        layer = self.attribute(module, attr, f"nn.Linear({d_in}, {d_out})")
        cls = type(module).__name__
        if not isinstance(layer, nn.Linear):
            self.fail(f"{cls}.{attr} is a {type(layer).__name__}, not an nn.Linear",
                      expected=f"nn.Linear({d_in}, {d_out})", hint=f"self.{attr} = nn.Linear({d_in}, {d_out})")
        sizes = f"nn.Linear({layer.in_features}, {layer.out_features}, bias={layer.bias is not None})"
        if (layer.bias is not None) != bias and (layer.in_features, layer.out_features) == (d_in, d_out):
            self.fail(f"{cls}.{attr} " + ("has no bias" if bias else "has a bias it should not have"),
                      expected=f"nn.Linear({d_in}, {d_out}, bias={bias})", got=sizes,
                      mistake="linear_without_bias" if bias else "linear_with_bias")
        if (layer.in_features, layer.out_features) != (d_in, d_out):
            self.fail(f"{cls}.{attr} has the wrong size", expected=f"nn.Linear({d_in}, {d_out}, bias={bias})",
                      got=sizes, hint="the sizes in the exercise's docstring are (in_features, out_features)")
        return layer

    def attribute(self, module: nn.Module, attr: str, expected: str):
        """Fetch ``module.<attr>``, naming a near miss (another case, a missing layer)."""
        layer = getattr(module, attr, None)
        cls = type(module).__name__
        if layer is None:
            near = [a for a in dir(module) if a.lower() == attr.lower() and a != attr]
            if near:
                self.fail(f"{cls} has no attribute {attr} (it has {near[0]})", mistake="attribute_name",
                          mistake_hint=f"the check copies weights by name: call the layer self.{attr}")
            self.fail(f"{cls} has no attribute {attr}", expected=f"self.{attr} = {expected} in __init__",
                      mistake="missing_projection" if attr == "W_O" else None,
                      hint=f"create self.{attr} in __init__ (after super().__init__())")
        return layer

    # ---- checking what came back

    def tensor(self, x, what: str, shape: tuple[int, ...], dtype: torch.dtype = torch.float64,
               hint: str | None = None, mistake: str | None = None, tried: str | None = None) -> torch.Tensor:
        """Ensure ``x`` is a finite tensor of the given shape and dtype (``tried`` goes into messages).

        ``mistake`` names what a wrong shape means (with its registered hint); ``hint`` is the hint for
        a wrong shape no mistake is named for.
        """
        fail = functools.partial(self.fail, tried=tried)
        if not isinstance(x, torch.Tensor):
            numpy = type(x).__module__.startswith("numpy")
            fail(f"{what} is not a tensor", expected=f"a tensor of shape {fmt_shape(shape)}",
                 got=type(x).__name__ if x is not None else "None (did you forget `return`?)",
                 mistake="missing_return" if x is None else "numpy_output" if numpy else None,
                 hint="return a torch tensor")
        if tuple(x.shape) != tuple(shape):
            fail(f"{what} has the wrong shape", expected=fmt_shape(shape), got=fmt_shape(x.shape),
                 hint=hint, mistake=mistake)
        if x.dtype != dtype:
            fail(f"{what} has dtype {x.dtype}", expected=f"{dtype} (the dtype of the inputs)", got=str(x.dtype),
                 mistake="dtype_changed")
        if dtype.is_floating_point and not bool(torch.isfinite(x).all()):
            bad = (~torch.isfinite(x)).nonzero()[0].tolist()
            fail(f"{what} contains NaN or inf", got=f"{x[tuple(bad)].item()} at index {bad}",
                 hint="look for a division by zero, or a softmax over a row where every score is -inf")
        return x


def fmt_shape(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def where(index, axes: tuple[str, ...] | None) -> str:
    """Name a position in a tensor by its axes: ``[0, 1, 2]`` with axes (batch, head, query, key) ->
    "query 2 of head 1 in batch 0"; without axis names, "index [0, 1, 2]"."""
    index = [int(i) for i in index]
    if not index:
        return "the whole tensor"
    if axes is None or len(axes) < len(index):
        return f"index {index}"
    parts = [f"{name} {i}" for name, i in zip(axes, index)]
    if len(parts) == 1 or axes[0] != "batch":
        return " of ".join(reversed(parts))
    inner = " of ".join(reversed(parts[1:]))
    return f"{inner} in {parts[0]}"


def tolerance(atol: float = None) -> str:
    """The comparison's tolerance, in words."""
    atol = ATOL if atol is None else atol
    return f"equal up to rounding: |difference| at most {atol:g} + {RTOL:g} x |expected|"


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> tuple[float, list[int]]:
    """Largest ``|a - b|`` and the index where it occurs (same shapes required)."""
    d = (a.detach().double() - b.detach().double()).abs()
    flat, index = int(d.argmax()), []
    for size in reversed(d.shape):  # unravel by hand: torch.unravel_index imports sympy on first use
        flat, i = divmod(flat, size)
        index.insert(0, i)
    return float(d.max()), index


def within(got: torch.Tensor, expected: torch.Tensor, atol: float = ATOL) -> bool:
    """Elementwise |got - expected| <= atol + RTOL * |expected| (same shapes required)."""
    g, e = got.detach().double(), expected.detach().double()
    return bool(((g - e).abs() <= atol + RTOL * e.abs()).all())


def close(a: torch.Tensor, b: torch.Tensor, atol: float = ATOL) -> bool:
    return tuple(a.shape) == tuple(b.shape) and within(a, b, atol)


def diagnose(got: torch.Tensor, candidates, atol: float = ATOL) -> str | None:
    """Name the first known mistake whose output ``got`` reproduces, or None.

    ``candidates`` maps mistake names to the output that mistake gives (a dict, or (name, tensor) pairs
    when two variants share a name).
    """
    for name, out in (candidates.items() if isinstance(candidates, dict) else candidates):
        if out is not None and close(got, out, atol):
            return name
    return None


def compare(ctx: Ctx, got: torch.Tensor, expected: torch.Tensor, what: str, tried: str,
            candidates=None, atol: float = ATOL, axes: tuple[str, ...] | None = None,
            fallback: str | None = None) -> None:
    """Fail unless ``got`` equals ``expected`` within ``atol``; name the mistake when it is a known one.

    ``axes`` names the dimensions (e.g. ("batch", "head", "query", "key")) for the message; ``fallback``
    is the hint when no known mistake matches: it should say where to look, given what this comparison
    shows.
    """
    if within(got, expected, atol):
        return
    err, index = max_abs_diff(got, expected)
    row = tuple(index[:-1])
    ctx.fail(f"{what}: not equal to the reference", tried=tried,
             expected=f"{_fmt_row(expected[row])} at {where(row, axes)} ({tolerance(atol)})",
             got=f"{_fmt_row(got[row])}; largest difference {err:.3g}, at {where(index, axes)}",
             mistake=diagnose(got, candidates or {}, atol),
             hint=fallback or "rebuild the tried: input in a cell of its own and print the shape and a few values "
                              "after each line of your code")


def _fmt_row(row: torch.Tensor, n: int = 5) -> str:
    vals = row.flatten().tolist()
    body = ", ".join(f"{v:.4f}" for v in vals[:n])
    return "[" + body + (", ..." if len(vals) > n else "") + "]"


def _uses_dot_T(obj) -> bool:
    """Does the learner's function (or forward) read an attribute ``.T``? A hint, never a verdict:
    it only names a failure the behaviour has already shown (``.T`` on a 3-D tensor only warns)."""
    fn = getattr(obj, "forward", obj)
    code = getattr(fn, "__code__", None)
    return code is not None and "T" in code.co_names


def _short(e: Exception, limit: int = 300) -> str:
    """The first line of an exception's message, cut to ``limit`` characters."""
    text = (str(e).strip().splitlines() or [""])[0]
    return text if len(text) <= limit else text[:limit] + " ..."


def _not_learner_dirs() -> tuple[str, ...]:
    """Folders whose frames are never the learner's: torch, the course's packages, the standard library."""
    import os
    import sysconfig
    dirs = [os.path.dirname(torch.__file__), os.path.dirname(os.path.abspath(__file__)),
            sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]]
    for package in ("tinylm_solutions", "tinylm_grading"):
        dirs.append(os.path.join(os.path.dirname(dirs[1]), package))
    return tuple(os.path.abspath(d) + os.sep for d in dirs)


def _learner_frame(e: BaseException) -> str:
    """"; in forward, line 31: x = block(x, mask)": the last frame of the traceback in the learner's own code
    (not in torch, site-packages, the standard library or the course's packages), or "" when there is none.
    An exception raised in the learner's kernel and rebuilt in the grader carries no frames of the learner's:
    the grader's agent found that line in the kernel (``learner_frame``)."""
    if isinstance(getattr(e, "learner_frame", None), str):
        return e.learner_frame
    import linecache
    import os
    import traceback
    skip = _not_learner_dirs()
    found = None
    for frame in traceback.extract_tb(e.__traceback__):
        path = os.path.abspath(frame.filename) if not frame.filename.startswith("<") else frame.filename
        if frame.filename.startswith("<frozen") or path.startswith(skip) or "site-packages" in path \
                or "dist-packages" in path:
            continue
        found = frame
    if found is None:
        return ""
    line = (found.line or linecache.getline(found.filename, found.lineno)).strip()
    line = line if len(line) <= 120 else line[:117] + "..."
    return f"; in {found.name}, line {found.lineno}" + (f": {line}" if line else "")


def _mistake_from_exception(e: Exception) -> str | None:
    """The known mistake an exception shows by itself, whatever the exercise."""
    msg = str(e)
    if "view size is not compatible" in msg:
        return "view_after_transpose"
    if isinstance(e, NotImplementedError) and not msg.strip():  # the learner stub: raise NotImplementedError()
        return "not_implemented"
    if "found element of type float" in msg or "must be tuple of ints" in msg:
        return "float_d_k"
    if "x.T" in msg or "x.mT" in msg:
        return "batched_T"
    if "before Module.__init__() call" in msg:
        return "missing_super_init"
    if isinstance(e, IndexError) and "shape of the mask" in msg:
        return "bool_index_mask"
    if "doesn't match the broadcast shape" in msg:
        return "in_place_broadcast"
    if "Boolean value of Tensor with more than one value is ambiguous" in msg:
        return "tensor_truth_value"
    if "Expected tensor for argument #1 'indices'" in msg:
        return "embedding_of_floats"
    return None


def _hint_from_exception(e: Exception) -> str:
    """The hint for an exception that names no known mistake: what to look at, not a guess."""
    msg = str(e)
    if "must have the same dtype" in msg or "expected scalar type" in msg or "expected m1 and m2 to have the same" in msg:
        return ("the check runs your module in float64 (module.double()): create layers in __init__, not in "
                "forward, and new tensors with dtype=x.dtype")
    if "size of tensor a" in msg or "mat1 and mat2 shapes" in msg or "shape" in msg and isinstance(e, RuntimeError):
        return ("two shapes don't line up: rebuild the tried: input in a cell of its own and print the shape "
                "after each line of your code; compare with the shape comments in the notebook")
    return "run your code on the input the first line names, in a cell of its own, and read the full traceback"


known_mistake("view_after_transpose", "calling .view() on a tensor that is not contiguous (sliced or transposed): "
              ".view() only relabels memory that is laid out in order",
              "use .reshape(...), which copies when it must (or .contiguous().view(...))")
known_mistake("not_implemented", "the exercise is not done yet (it still raises NotImplementedError)",
              "replace `raise NotImplementedError()` with your code, and run the exercise cell again")
known_mistake("missing_projection", "the output projection W_O is missing",
              "create self.W_O = nn.Linear(d_model, d_model) in __init__ and apply it to the merged heads")
known_mistake("input_modified_in_place", "an input tensor is modified in place",
              "don't use in-place operations (x /= ..., x.sub_(...), x[...] = ...) on the inputs; "
              "compute new tensors instead (x = x / ...)")
known_mistake("no_gradient", "the output is cut off from the autograd graph",
              "don't use torch.no_grad(), .detach(), .item(), .tolist() or numpy: "
              "training needs gradients through every operation")
known_mistake("dtype_changed", "the output's dtype differs from the inputs' dtype",
              "don't convert with .double()/.float() or create tensors with a fixed dtype; "
              "follow the inputs' dtype (x.dtype, torch.zeros_like)")
known_mistake("missing_return", "the function returns None: the `return` is missing",
              "end the function with `return ...`")
known_mistake("numpy_output", "the result is a numpy array, not a torch tensor",
              "stay in PyTorch: numpy cuts the autograd graph")
known_mistake("attribute_name", "a layer has another name than the one the exercise asks for",
              "the check copies weights by name: use exactly the attribute names of the exercise")
known_mistake("linear_without_bias", "a linear layer is created with bias=False",
              "nn.Linear has a bias unless you pass bias=False: leave bias out")
known_mistake("linear_with_bias", "a linear layer has a bias it should not have",
              "pass bias=False to this nn.Linear")
known_mistake("missing_super_init", "__init__ does not call super().__init__() before creating layers",
              "start __init__ with super().__init__()")
known_mistake("batched_T", "`.T` is used on a batched tensor; it reverses every dimension",
              "swap the last two dimensions with k.transpose(-2, -1); .T reverses all of them")
known_mistake("bool_index_mask", "the scores are masked by bool indexing (scores[~mask] = ...), which does not "
              "broadcast the mask", "indexing with a bool mask needs the mask's exact shape; "
              "scores.masked_fill(~mask, float('-inf')) broadcasts it and returns a new tensor")
known_mistake("in_place_broadcast", "an in-place operation (&=, +=, masked_fill_, ...) writes its result into a "
              "tensor smaller than the broadcast result", "use the out-of-place form, e.g. out = out & m: it builds a "
              "new tensor of the broadcast shape and leaves the inputs as they are")
known_mistake("tensor_truth_value", "a tensor is used where Python needs one True or False (`and`, `or`, `not`, "
              "`if t:`), which is ambiguous for a tensor of many values",
              "use the elementwise operators &, |, ~ on tensors, and `if t is not None` to test for None")
known_mistake("embedding_of_floats", "an nn.Embedding is given float values (e.g. x itself); it looks up rows by "
              "integer ids", "give the embedding integer indices, e.g. the positions torch.arange(T, device=x.device)")
HARD_CODED_AXES = known_mistake("hard_coded_axes", "the code assumes a number of dimensions (an axis counted from the front, "
              "like transpose(1, 2) or dim=2, or sizes unpacked with B, T, D = x.shape): it works for one and "
              "breaks for another",
              "count axes from the end, which works for any number of leading dimensions: "
              "k.transpose(-2, -1), softmax(dim=-1)")


# --------------------------------------------------------------------------- the decorator

def check(fn):
    """Turn ``fn(ctx, obj, ...)`` into a public check ``check_x(obj, seed=0)``.

    Adds what every check promises: a fresh seeded generator, the global RNG states (torch, Python, NumPy),
    default dtype and grad mode restored afterwards, any stray exception turned into a CheckFailure,
    and one printed line on success.
    """
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(obj, *args, seed: int = 0, quiet: bool = False, **kwargs):
        ctx = Ctx(name, seed)
        torch_state, py_state, np_state = torch.get_rng_state(), random.getstate(), np.random.get_state()
        dtype, grad = torch.get_default_dtype(), torch.is_grad_enabled()
        try:
            torch.set_grad_enabled(True)  # the checks test gradients, whatever the notebook's mode
            ctx.learner = obj
            summary = fn(ctx, obj, *args, **kwargs)
        except CheckFailure:
            raise
        except Exception as e:  # noqa: BLE001 - a crash inside learner code reached through a tensor op
            ctx.fail(f"running your code raised {type(e).__name__}: {_short(e)}",
                     got=_learner_frame(e).removeprefix("; ") or None,
                     mistake=_mistake_from_exception(e), hint=_hint_from_exception(e))
        finally:
            torch.set_rng_state(torch_state)
            random.setstate(py_state)
            np.random.set_state(np_state)
            torch.set_default_dtype(dtype)
            torch.set_grad_enabled(grad)
        if not quiet:
            print(f"✔ {name} passed: {summary}")
        return None

    wrapper.__signature__ = inspect.Signature(
        [inspect.Parameter("obj", inspect.Parameter.POSITIONAL_ONLY),
         inspect.Parameter("seed", inspect.Parameter.KEYWORD_ONLY, default=0),
         inspect.Parameter("quiet", inspect.Parameter.KEYWORD_ONLY, default=False)])
    return wrapper
