"""The machinery every check shares: the failure type, calling learner code safely, comparing tensors.

A check compares by behaviour: it builds inputs from its own seeded generator, calls the learner's
function (or instantiates the learner's class with its own sizes), copies weights from the reference
when there are weights, and compares outputs. The comparisons here use only a few tensor operations
(subtraction, ``abs``, ``max``, ``isfinite``), which :mod:`tinylm_checks.grading` verifies before a
graded run. Every sentence a failure shows comes from the message table (:mod:`tinylm_checks._text`).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import random
import types
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from ._text import MISTAKE, MISTAKE_HINTS, MISTAKE_PLACES, MISTAKES, MessageError, fill, parts, say
from .failure import MATRIX_CELLS, CheckFailure

ATOL = 1e-6
RTOL = 1e-6
"""Tolerances of every float64 comparison: |got - expected| <= ATOL + RTOL * |expected|, elementwise
(the relative part lets a learner's float32 constant, e.g. torch.sqrt(torch.tensor(d_k)), pass)."""


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


# --------------------------------------------------------------------------- running a check

class Slips:
    """The independent failures one check run found so far (:meth:`Ctx.slips`)."""

    def __init__(self, ctx: "Ctx"):
        self.ctx, self.found = ctx, []

    def __call__(self, message_id: str, **kw) -> None:
        self.found.append(self.ctx.failure(message_id, **kw))

    @contextlib.contextmanager
    def caught(self):
        """Keep the CheckFailure the block raises (the block stops there; the check goes on after it). ``with
        slip.caught() as block:`` then ``block.failed`` says whether it did."""
        block = types.SimpleNamespace(failed=False)
        try:
            yield block
        except CheckFailure as e:
            block.failed = True
            self.found.append(e)


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

    def failure(self, message_id: str, *, mistake: str | None = None, tried: str | None = None,
                expected: str | None = None, got: str | None = None, hint: str | None = None,
                mistake_hint: str | None = None, matrices: dict | None = None, **values) -> CheckFailure:
        """The CheckFailure of the message table's entry ``message_id``, its templates filled with ``values``.

        The entry's parts (problem, expected, got, hint, mistake_hint) are sentences; a part given here instead
        is already words of the table (a :func:`say` result) or plain data (a shape, a dtype, numbers, code).
        One part cannot come from both. A named ``mistake`` always comes with *its own* hint: the entry's (or the
        given) ``mistake_hint``, else this exercise's wording (``self.hints``), else the hint registered with the
        mistake. ``hint`` is the hint for a failure no mistake is named for; it is never shown next to a named
        mistake."""
        given = {"expected": expected, "got": got, "hint": hint, "mistake_hint": mistake_hint}
        text = {}
        for part, template in parts(message_id).items():
            if given.get(part) is not None:
                raise MessageError(f"{message_id}: the {part} is both in the table and given")
            text[part] = fill(f"{message_id}.{part}", values)
        text = {**{k: v for k, v in given.items() if v is not None}, **text}
        if mistake is None and self.batched and _uses_dot_T(self.learner) and not isinstance(self.learner, type):
            mistake = MISTAKE.batched_T
        if mistake is not None:
            hint = text.get("mistake_hint") or self.hints.get(mistake) or MISTAKE_HINTS[mistake]
        elif mistake_hint is not None:
            raise MessageError(f"{message_id}: a mistake_hint needs a mistake")
        else:
            hint = text.get("hint")
        return CheckFailure(self.name, text["problem"], tried=tried, expected=text.get("expected"),
                            got=text.get("got"), mistake=mistake, hint=hint, hint_for=mistake, message_id=message_id,
                            look=MISTAKE_PLACES.get(mistake) if mistake else None, matrices=matrices)

    def fail(self, message_id: str, **kw) -> None:
        """Raise :meth:`failure` (``message_id`` and the same keywords)."""
        raise self.failure(message_id, **kw) from None

    def renamed(self, failure: CheckFailure, *, mistake: str | None = None, hint: str | None = None,
                mistake_hint: str | None = None, **parts) -> CheckFailure:
        """``failure`` (already worded) with another diagnosis: naming ``mistake`` (with ``mistake_hint``, else this
        exercise's wording, else the mistake's own hint), or with ``hint`` for no named mistake; ``parts`` replace
        its tried/expected/got."""
        if mistake is not None:
            hint = mistake_hint or self.hints.get(mistake) or MISTAKE_HINTS[mistake]
        kept = {k: getattr(failure, k) for k in ("tried", "expected", "got")}
        return CheckFailure(self.name, failure.problem, **{**kept, **parts}, mistake=mistake, hint=hint,
                            hint_for=mistake, message_id=failure.message_id,
                            look=MISTAKE_PLACES.get(mistake) if mistake else None, matrices=failure.matrices)

    @contextlib.contextmanager
    def slips(self):
        """Collect independent failures and report them together: inside ``with ctx.slips() as slip:``,
        ``slip(id, ...)`` takes :meth:`failure`'s arguments, and ``with slip.caught():`` keeps the failure a block
        of checking code raises; leaving the block (or a failure raised in it) raises the first failure, carrying
        the others in ``also``.
        For mistakes that cannot hide one another (a mode not restored, grad mode on, a wrong average): a learner
        then fixes them in one round, not one round each. Checks whose first mistake hides the others stay one
        at a time."""
        slips = Slips(self)
        try:
            yield slips
        except CheckFailure as e:  # a failure the block did not expect to go on after: the last one found
            slips.found.append(e)
        if slips.found:
            first = slips.found[0]
            first.also = slips.found[1:]
            first.args = (first._text(),)
            raise first from None

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
        except (CheckFailure, MessageError):
            raise
        except Exception as e:  # noqa: BLE001 - learner code may raise anything
            self.fail("core.raised", error=type(e).__name__, tried=what,
                      got=type(e).__name__ + (f": {_short(e)}" if _short(e) else "") + _learner_frame(e),
                      mistake=_mistake_from_exception(e) or mistake_if_raises,
                      hint=_hint_from_exception(e))
        for i, (a, c) in enumerate(zip(args, copies)):
            if isinstance(a, torch.Tensor) and not (a.shape == c.shape and bool((a == c).all())):
                name = names[i] if i < len(names) else say("core.argument", i=i + 1)
                self.fail("core.modified_in_place", name=name, tried=what, mistake=MISTAKE.input_modified_in_place)
        return result

    def differentiable(self, fn, *args, what: str, names: tuple[str, ...]) -> None:
        """Gradients must flow from the output back to every named tensor argument."""
        inputs = [a.detach().clone().requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point()
                  else a for a in args]
        with torch.enable_grad():
            out = self.call(fn, *inputs, what=what, names=names)
            first = out[0] if isinstance(out, (tuple, list)) else out
            if not isinstance(first, torch.Tensor) or not first.requires_grad:
                self.fail("core.no_gradient", tried=what, mistake=MISTAKE.no_gradient)
            first.sum().backward()
        for name, a in zip(names, inputs):
            if isinstance(a, torch.Tensor) and a.requires_grad and a.grad is None:
                self.fail("core.no_gradient_to", name=name, tried=what, mistake=MISTAKE.no_gradient)

    def dtype_follows(self, fn, *args, what: str, names: tuple[str, ...]) -> None:
        """Called with float32 tensors, the function must return float32."""
        inputs = [a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
        what = say("core.in_float32", what=what)
        out = self.call(fn, *inputs, what=what, names=names)
        for t in (out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(t, torch.Tensor) and t.dtype != torch.float32:
                self.fail("core.dtype_not_followed", dtype=t.dtype, tried=what, got=str(t.dtype), mistake=MISTAKE.dtype_changed)

    def function(self, obj, expected_name: str):
        """Ensure ``obj`` is a plain function (not a class, not None)."""
        if obj is None or isinstance(obj, type) or not callable(obj):
            kind = say("core.kind.none") if obj is None else (
                say("core.kind.class") if isinstance(obj, type) else type(obj).__name__)
            self.fail("core.not_a_function", name=expected_name, kind=kind, check=self.name)
        return obj

    def module_class(self, obj, expected_name: str):
        """Ensure ``obj`` is an ``nn.Module`` subclass (the class, not an instance)."""
        if isinstance(obj, nn.Module):
            self.fail("core.instance_not_class", name=expected_name, kind=type(obj).__name__, check=self.name)
        if not (isinstance(obj, type) and issubclass(obj, nn.Module)):
            kind = say("core.kind.none") if obj is None else type(obj).__name__
            self.fail("core.not_a_module_class", name=expected_name, kind=kind)
        return obj

    def build(self, cls, *args, what: str, **kwargs):
        """Instantiate a learner module with the check's sizes, in float64."""
        module = self.call(cls, *args, what=what, **kwargs)
        if not isinstance(module, nn.Module):
            self.fail("core.not_a_module", what=what, got=type(module).__name__)
        return module.double()

    def linear(self, module: nn.Module, attr: str, d_in: int, d_out: int, bias: bool = True) -> nn.Linear:
        """Fetch ``module.<attr>`` and make sure it is ``nn.Linear(d_in, d_out)``."""
        layer = self.attribute(module, attr, f"nn.Linear({d_in}, {d_out})")
        cls = type(module).__name__
        if not isinstance(layer, nn.Linear):
            self.fail("core.not_linear", cls=cls, attr=attr, kind=type(layer).__name__, d_in=d_in, d_out=d_out,
                      no_bias="" if bias else say("core.no_bias"), expected=f"nn.Linear({d_in}, {d_out}, bias={bias})")
        if isinstance(layer, nn.modules.lazy.LazyModuleMixin):  # nn.LazyLinear: in_features 0 until its first call
            self.fail("core.linear_lazy", cls=cls, attr=attr, kind=type(layer).__name__, d_out_got=layer.out_features,
                      expected=f"nn.Linear({d_in}, {d_out}, bias={bias})")
        sizes = f"nn.Linear({layer.in_features}, {layer.out_features}, bias={layer.bias is not None})"
        if (layer.bias is not None) != bias and (layer.in_features, layer.out_features) == (d_in, d_out):
            self.fail("core.linear_without_bias" if bias else "core.linear_with_bias", cls=cls, attr=attr,
                      expected=f"nn.Linear({d_in}, {d_out}, bias={bias})", got=sizes,
                      mistake=MISTAKE.linear_without_bias if bias else MISTAKE.linear_with_bias)
        if (layer.in_features, layer.out_features) != (d_in, d_out):
            self.fail("core.linear_size", cls=cls, attr=attr, expected=f"nn.Linear({d_in}, {d_out}, bias={bias})",
                      got=sizes)
        return layer

    def attribute(self, module: nn.Module, attr: str, expected: str):
        """Fetch ``module.<attr>``, naming a near miss (another case, a missing layer)."""
        layer = getattr(module, attr, None)
        cls = type(module).__name__
        if layer is None:
            near = [a for a in dir(module) if a.lower() == attr.lower() and a != attr]
            if near:
                self.fail("core.attribute_near_miss", cls=cls, attr=attr, near=near[0], mistake=MISTAKE.attribute_name)
            self.fail("core.attribute_missing", cls=cls, attr=attr, layer=expected,
                      mistake=MISTAKE.missing_projection if attr == "W_O" else None)
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
            fail("core.not_a_tensor", what=what, shape=fmt_shape(shape),
                 got=type(x).__name__ if x is not None else say("core.got_none"),
                 mistake=MISTAKE.missing_return if x is None else MISTAKE.numpy_output if numpy else None)
        if tuple(x.shape) != tuple(shape):
            fail("core.wrong_shape", what=what, expected=fmt_shape(shape), got=fmt_shape(x.shape),
                 hint=hint, mistake=mistake)
        if x.dtype != dtype:
            fail("core.wrong_dtype", what=what, dtype=x.dtype, want=dtype, got=str(x.dtype), mistake=MISTAKE.dtype_changed)
        if dtype.is_floating_point and not bool(torch.isfinite(x).all()):
            bad = (~torch.isfinite(x)).nonzero()[0].tolist()
            fail("core.not_finite", what=what, value=x[tuple(bad)].item(), index=bad)
        return x


def fmt_shape(shape) -> str:
    """A shape as Python writes the tuple: ``(2, 3)``, ``(6,)``, ``()``."""
    return str(tuple(int(s) for s in shape))


def where(index, axes: tuple[str, ...] | None) -> str:
    """Name a position in a tensor by its axes: ``[0, 1, 2]`` with axes (batch, head, query, key) ->
    "query 2 of head 1 in batch 0"; without axis names, "index [0, 1, 2]"."""
    index = [int(i) for i in index]
    if not index:
        return say("core.where.whole")
    if axes is None or len(axes) < len(index):
        return say("core.where.index", index=index)
    names = [say("axis." + name.replace(" ", "_")) for name in axes]
    places = [say("core.where.axis", axis=name, i=i) for name, i in zip(names, index)]
    if len(places) == 1 or axes[0] != "batch":
        return functools.reduce(lambda inner, outer: say("core.where.of", inner=inner, outer=outer), reversed(places))
    inner = functools.reduce(lambda inner, outer: say("core.where.of", inner=inner, outer=outer), reversed(places[1:]))
    return say("core.where.in", inner=inner, batch=places[0])


def tolerance(atol: float = None) -> str:
    """The comparison's tolerance, in words."""
    atol = ATOL if atol is None else atol
    return say("core.tolerance", atol=atol, rtol=RTOL)


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
    ctx.fail(**not_equal(got, expected, what, atol, axes), tried=tried, mistake=diagnose(got, candidates or {}, atol),
             hint=fallback or say("core.hint.rebuild"))


def not_equal(got: torch.Tensor, expected: torch.Tensor, what: str, atol: float = ATOL,
              axes: tuple[str, ...] | None = None, note: str = "") -> dict:
    """The arguments of the failure "``what``: not equal to the reference": the row of the largest difference,
    expected and got, and where it is (for :meth:`Ctx.fail`); ``note`` (words) ends the got: line."""
    err, index = max_abs_diff(got, expected)
    row = tuple(index[:-1])
    return dict(message_id="core.not_equal", what=what, row=fmt_values(expected[row]), at=where(row, axes),
                tolerance=tolerance(atol), row_got=fmt_values(got[row]), err=err, at_err=where(index, axes),
                note=say("core.not_equal_note", note=note) if note else "",
                matrices=matrices_around(got, expected, index))


def matrices_around(got: torch.Tensor, expected: torch.Tensor, index: list[int]) -> dict | None:
    """The expected and the got matrix (the last two axes) that hold position ``index``, cut to at most
    :data:`~tinylm_checks.failure.MATRIX_CELLS` rows and columns around it, as a failure's ``matrices`` (for the
    side-by-side heatmaps of its rich rendering); None for a tensor of fewer than two axes or of another shape."""
    if got.dim() < 2 or tuple(got.shape) != tuple(expected.shape) or got.numel() == 0:
        return None
    *lead, i, j = [int(k) for k in index]
    R, C = got.shape[-2:]
    r0 = max(0, min(i - MATRIX_CELLS // 2, R - MATRIX_CELLS))
    c0 = max(0, min(j - MATRIX_CELLS // 2, C - MATRIX_CELLS))
    cut = (*lead, slice(r0, r0 + MATRIX_CELLS), slice(c0, c0 + MATRIX_CELLS))
    return {"expected": expected.detach()[cut].double().tolist(), "got": got.detach()[cut].double().tolist(),
            "at": [r0, c0]}


def fmt_values(values, n: int = 5, digits: int = 4, kind: str = "f") -> str:
    """The first ``n`` values of a tensor or a sequence: ``digits`` decimals each (``kind="f"``: ``[0.1000, 0.2000,
    ...]``), or ``digits`` significant digits (``kind="g"``: ``[0.1, 1e-05, ...]``)."""
    vals = values.flatten().tolist() if isinstance(values, torch.Tensor) else list(values)
    body = ", ".join(f"{v:.{digits}{kind}}" for v in vals[:n])
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
    if isinstance(getattr(e, "learner_frame", None), tuple):  # from the grader's agent: (function, line, code) or ()
        return _frame_words(*e.learner_frame) if e.learner_frame else ""
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
    return _frame_words(found.name, found.lineno, found.line or linecache.getline(found.filename, found.lineno))


def _frame_words(function: str, line: int, code: str) -> str:
    """"; in forward, line 31: x = block(x, mask)" (the code cut to 120 characters), or without the code."""
    code = code.strip()
    code = code if len(code) <= 120 else code[:117] + "..."
    if not code:
        return say("core.learner_frame_no_code", function=function, line=line)
    return say("core.learner_frame", function=function, line=line, code=code)


def _mistake_from_exception(e: Exception) -> str | None:
    """The known mistake an exception shows by itself, whatever the exercise."""
    msg = str(e)
    if "view size is not compatible" in msg:
        return MISTAKE.view_after_transpose
    if isinstance(e, NotImplementedError) and not msg.strip():  # the learner stub: raise NotImplementedError()
        return MISTAKE.not_implemented
    if "found element of type float" in msg or "must be tuple of ints" in msg:
        return MISTAKE.float_d_k
    if "x.T" in msg or "x.mT" in msg:
        return MISTAKE.batched_T
    if "before Module.__init__() call" in msg:
        return MISTAKE.missing_super_init
    if isinstance(e, IndexError) and "shape of the mask" in msg:
        return MISTAKE.bool_index_mask
    if "doesn't match the broadcast shape" in msg:
        return MISTAKE.in_place_broadcast
    if "Boolean value of Tensor with more than one value is ambiguous" in msg:
        return MISTAKE.tensor_truth_value
    if "Expected tensor for argument #1 'indices'" in msg:
        return MISTAKE.embedding_of_floats
    return None


def _hint_from_exception(e: Exception) -> str:
    """The hint for an exception that names no known mistake: what to look at, not a guess."""
    msg = str(e)
    if "must have the same dtype" in msg or "expected scalar type" in msg or "expected m1 and m2 to have the same" in msg:
        return say("core.hint.dtype_mismatch")
    if "size of tensor a" in msg or "mat1 and mat2 shapes" in msg or "shape" in msg and isinstance(e, RuntimeError):
        return say("core.hint.shape_mismatch")
    return say("core.hint.exception")


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
        except (CheckFailure, MessageError):  # a MessageError is the checks' own bug, never the learner's
            raise
        except Exception as e:  # noqa: BLE001 - a crash inside learner code reached through a tensor op
            ctx.fail("core.raised_running", error=type(e).__name__, message=_short(e),
                     got=_learner_frame(e).removeprefix("; ") or None,
                     mistake=_mistake_from_exception(e), hint=_hint_from_exception(e))
        finally:
            torch.set_rng_state(torch_state)
            random.setstate(py_state)
            np.random.set_state(np_state)
            torch.set_default_dtype(dtype)
            torch.set_grad_enabled(grad)
        if not quiet:
            print(say("core.passed", check=name, summary=summary))
        return None

    wrapper.__signature__ = inspect.Signature(
        [inspect.Parameter("obj", inspect.Parameter.POSITIONAL_ONLY),
         inspect.Parameter("seed", inspect.Parameter.KEYWORD_ONLY, default=0),
         inspect.Parameter("quiet", inspect.Parameter.KEYWORD_ONLY, default=False)])
    return wrapper
