"""The trusted side of grading: run a check in the grader's process on a learner's object that stays in
the learner's kernel.

:func:`verdict` asks the kernel's agent (:mod:`tinylm_checks.agent`) what the learner's global ``name``
is, wraps it in a stand-in and runs the course's own check on it, here, with the reference loaded from
disk here. The stand-in for a function, :class:`RemoteFunction`, sends each call's arguments to the agent
and gets the results back as data (a tensor as its dtype, shape and raw elements), so every check
works unchanged: exceptions come back as the built-in exception of the same name with the same message
(the checks name mistakes from them), in-place changes to the arguments come back too, and gradients
flow through an ``autograd.Function`` whose backward asks the agent. Nothing the learner does inside
their kernel (hooks, patched modules, lying tensors, rewritten files) can change what the check
computes here; it can only change the data that comes back, which is the learner's answer.

A learner's class becomes a class here whose instances are :class:`Mirror` trees built from the agent's
description of the module it built: torch's own layers (``nn.Linear``...) as themselves, the learner's
classes as mirrors whose forward runs in the kernel with the parameters held here (so a check that copies
weights into them, switches modes or reads gradients works as on the real module). A check that passes
one of the course's modules *to* learner code (``block_parameter_counts(block)``) sends the module's tree;
the agent builds a stand-in of it, and the changes the learner's code made to it come back and are made
to the module here (:func:`_apply_tree`), so a check that compares the module before and after sees them.
"""
from __future__ import annotations

import builtins
import contextlib
import functools
import io
import json
from types import SimpleNamespace

import torch

from tinylm_checks.agent import Agent, decode, describe_tree, encode
from tinylm_checks.probes import Probe

BUILTIN_ERRORS = {n: e for n, e in vars(builtins).items() if isinstance(e, type) and issubclass(e, Exception)}


class RemoteError(Exception):
    """An exception raised by learner code whose type is not a built-in one (its class name is kept)."""


class NotCarried(Exception):
    """The call needs a value the wire does not carry to the kernel (a module): the check cannot run here."""


class AgentError(RuntimeError):
    """The agent's answer was not what the protocol allows (a changed agent, or a kernel that went away)."""


def _raise(reply: dict):
    name, message = str(reply.get("error"))[:100], str(reply.get("message", ""))
    cls = BUILTIN_ERRORS.get(name) if reply.get("builtin") else None
    if cls is None:
        cls = type(name if name.isidentifier() else "RemoteError", (RemoteError,), {})
    error = cls(message)
    where = reply.get("where")  # data for the message's words: (function, line, code), or () for none
    error.learner_frame = (str(where[0])[:100], where[1], str(where[2])[:200]) if isinstance(where, list) \
        and len(where) == 3 and type(where[1]) is int else ()
    raise error


def _answer(args, reply: dict, kwargs: dict | None = None):
    """A call's result and which outputs need grad; in-place changes the learner's code made to the arguments
    are made to ``args`` here too (a check compares them with its copies), generators take the state they
    were left in, and probes absorb their reports."""
    kwargs = kwargs or {}
    for key, report in (reply.get("probes_after") or {}).items():
        key = str(key)
        probe = kwargs.get(key[2:]) if key.startswith("k:") else \
            args[int(key)] if key.isdigit() and int(key) < len(args) else None
        if isinstance(probe, Probe):
            probe.absorb_probe_report(decode(report))
    after_kw = decode(reply.get("kwargs_after") or {"dict": []})
    for k, g in (after_kw.items() if isinstance(after_kw, dict) else ()):
        if isinstance(kwargs.get(k), torch.Generator) and isinstance(g, torch.Generator):
            kwargs[k].set_state(g.get_state())
    for i, tree in (reply.get("modules_after") or {}).items():
        if str(i).isdigit() and int(i) < len(args) and isinstance(args[int(i)], torch.nn.Module):
            _apply_tree(args[int(i)], tree)
    after = decode(reply["args_after"])
    with torch.no_grad():
        for a, b in zip(args, after if isinstance(after, tuple) else ()):
            if isinstance(a, torch.Generator) and isinstance(b, torch.Generator):
                a.set_state(b.get_state())
            if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape \
                    and a.dtype == b.dtype and not torch.equal(a, b):
                a.copy_(b)
    return decode(reply["result"]), [bool(n) for n in reply.get("grad_outputs", [])]


def _apply_tree(root: torch.nn.Module, tree: dict) -> None:
    """Make ``root`` (a module here that was sent to the kernel) what the kernel's description ``tree`` says
    its stand-in became: the same children, parameters (values, requires_grad; new ones created, removed
    ones removed), buffers' values and modes. Ids are those ``root``'s objects were described with."""
    if not isinstance(tree, dict) or not isinstance(tree.get("tree"), list):
        raise AgentError("the description of a module that came back is not a tree")
    check_module_tree(tree["tree"])
    modules = {id(m): m for m in root.modules(remove_duplicate=False)}
    params = {id(p): p for _, p in root.named_parameters(remove_duplicate=False)}
    for d in tree["tree"]:
        m = modules.get(d["id"])
        if m is None:  # a module the learner's code created
            name = str(d["class"]) if str(d["class"]).isidentifier() else "Module"
            m = modules[d["id"]] = type(name, (torch.nn.Module,), {})()
        m.training = bool(d["training"])
        new = {}
        for n, pid, value in d["params"]:
            if pid is None:
                new[str(n)] = None
                continue
            t = decode(value)
            p = params.get(pid)
            if p is None:
                p = params[pid] = torch.nn.Parameter(t.detach())
            elif p.shape != t.shape or p.dtype != t.dtype or not torch.equal(p.detach(), t.detach()):
                p.data = t.detach()
            p.requires_grad_(bool(value.get("requires_grad")) and p.is_floating_point())
            new[str(n)] = p
        m._parameters.clear()
        m._parameters.update(new)
        with torch.no_grad():
            for n, value, _ in d["buffers"]:
                b = m._buffers.get(n)
                if isinstance(b, torch.Tensor) and value is not None:
                    t = decode(value)
                    if b.shape == t.shape and b.dtype == t.dtype:
                        b.copy_(t)
    for d in tree["tree"]:
        m = modules[d["id"]]
        m._modules.clear()
        m._modules.update({str(n): modules.get(c) for n, c in d["children"]})


class LoopbackTransport:
    """An agent in this process, reached through JSON text (tests: the same data path as a kernel's)."""

    def __init__(self, namespace: dict):
        self.agent = Agent(namespace)

    def request(self, payload: dict) -> dict:
        return json.loads(self.agent.handle(json.dumps(payload)))


class RemoteFunction:
    """Stands for the learner's function ``name`` in the kernel behind ``transport``."""

    def __init__(self, transport, name: str, info: dict):
        self._transport, self._name = transport, name
        self.__name__ = str(info.get("name", name))
        self.__code__ = SimpleNamespace(co_names=tuple(str(n) for n in info.get("co_names", [])))  # hints only

    def _request(self, payload: dict) -> dict:
        reply = self._transport.request(payload)
        if not isinstance(reply, dict):
            raise AgentError("the agent's answer is not an object")
        if "error" in reply:
            _raise(reply)
        return reply

    def _send(self, args, kwargs, grad: list[int], params=()):
        """Call the learner's function in the kernel: (result, which outputs need grad, the call's id)."""
        probes = {str(i): a for i, a in enumerate(args) if isinstance(a, Probe)}
        probes |= {f"k:{k}": v for k, v in kwargs.items() if isinstance(v, Probe)}
        if any(isinstance(v, torch.nn.Module) and not isinstance(v, Probe) for v in kwargs.values()):
            raise NotCarried("a module passed by keyword")
        modules = {str(i): describe_tree(a) for i, a in enumerate(args)
                   if isinstance(a, torch.nn.Module) and not isinstance(a, Probe)}
        send = tuple(None if isinstance(a, (torch.nn.Module, Probe)) else a.detach() if isinstance(a, torch.Tensor)
                     else a for a in args)
        send_kw = {k: None if isinstance(v, Probe) else v for k, v in kwargs.items()}
        reply = self._request({"op": "call", "name": self._name, "args": encode(send), "kwargs": encode(send_kw),
                               "grad": grad, "modules": modules,
                               "probes": {key: {"class": type(p).__name__, "spec": encode(p.probe_spec())}
                                          for key, p in probes.items()}})
        return (*_answer(args, reply, kwargs), reply.get("call"))

    def __call__(self, *args, **kwargs):
        grad = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
        return _Call(self._request, self._send, kwargs, grad if torch.is_grad_enabled() else [], len(args)).apply(args)


class _Call:
    """One call of learner code in the kernel, from start to backward: its own state only (its id, which the
    backward request names, and whether its result is one value, a list or a tuple). A stand-in makes a new one
    for every call and keeps no state of its calls itself, so calls that overlap (a check calls a function again
    before backward ran for the first call) cannot mix up."""

    def __init__(self, request, send, kwargs: dict, grad: list[int], n: int):
        self.request, self.send = request, send  # payload -> reply; (inputs, kwargs, grad, params) -> answer
        self.kwargs, self.grad, self.n = kwargs, grad, n
        self.call_id, self.single, self.as_list = None, True, False

    def run(self, args: tuple):
        """Send the call: ``args`` are the inputs, then the parameters whose gradients are asked for."""
        result, needs, self.call_id = self.send(args[:self.n], self.kwargs, self.grad, list(args[self.n:]))
        self.single, self.as_list = not isinstance(result, (tuple, list)), isinstance(result, list)
        return result, needs

    def apply(self, args: tuple, params: tuple = ()):
        """The call's result, in the autograd graph when an input or a parameter needs a gradient."""
        if not (self.grad or params):
            return self.run(tuple(args))[0]
        outputs = _RemoteCall.apply(self, *args, *params)
        return outputs[0] if self.single else (list(outputs) if self.as_list else tuple(outputs))


class _RemoteCall(torch.autograd.Function):
    """A remote call in the autograd graph: backward asks the agent for the gradients of the inputs."""

    @staticmethod
    def forward(ctx, call, *args):
        result, needs = call.run(args)
        outputs = (result,) if call.single else tuple(result)
        ctx.call = call
        ctx.tensor_outputs = [isinstance(o, torch.Tensor) for o in outputs]
        ctx.mark_non_differentiable(*(o for o, need in zip(outputs, needs + [False] * len(outputs))  # one call:
                                      if isinstance(o, torch.Tensor) and not (need and o.is_floating_point())))  # it replaces
        return outputs

    @staticmethod
    def backward(ctx, *grad_outputs):
        call = ctx.call
        grads = [g if is_tensor else None for g, is_tensor in zip(grad_outputs, ctx.tensor_outputs)]
        reply = call.request({"op": "backward", "call": call.call_id, "grads": encode(grads)})
        got = decode(reply["grads"])
        per_arg = [None] * call.n
        for i, g in zip(call.grad, got):
            per_arg[i] = g if isinstance(g, torch.Tensor) else None
        extra = [g if isinstance(g, torch.Tensor) else None for g in got[len(call.grad):]]  # parameters (modules)
        return (None, *per_arg, *extra)


# ---------------------------------------------------------------- modules

class Mirror(torch.nn.Module):
    """The grader's copy of a learner's module: the same tree, parameters, buffers and plain attributes, with a
    forward that runs the learner's forward in the kernel on *these* parameters (pushed with every call)."""

    def forward(self, *args, **kwargs):
        return self._root_link.forward(self, args, kwargs)


class _Link:
    """What a mirror tree shares: the transport and the remote ids of its modules and parameters."""

    def __init__(self, transport, root):
        self.transport, self.root = transport, root
        self.by_id: dict[int, torch.nn.Module] = {}  # remote module id -> its mirror
        self.params: dict[int, torch.nn.Parameter] = {}  # remote parameter id -> its mirror

    def absorb(self, tree: list) -> None:
        _absorb(self, tree)

    def state(self):
        params, buffers, training = {}, {}, {}
        for m in self.root.modules():
            rid = getattr(m, "_remote_id", None)
            if rid is None:
                continue
            training[rid] = m.training
            for n, p in m._parameters.items():
                pid = getattr(p, "_remote_id", None)
                if p is not None and pid is not None:
                    params[pid] = p.detach()
            for n, b in m._buffers.items():
                if b is not None:
                    buffers[f"{rid}:{n}"] = b.detach()
        return params, buffers, training

    def forward(self, module, args, kwargs):
        if any(isinstance(v, torch.nn.Module) for v in (*args, *kwargs.values())):
            raise NotCarried("a module argument")
        grad = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
        params = [p for p in self.root.parameters() if p.requires_grad and getattr(p, "_remote_id", None)]
        if not torch.is_grad_enabled():
            grad, params = [], []
        send = functools.partial(self._send_forward, module)
        return _Call(self._request, send, kwargs, grad, len(args)).apply(args, tuple(params))

    def _request(self, payload):
        reply = self.transport.request(payload)
        if not isinstance(reply, dict):
            raise AgentError("the agent's answer is not an object")
        if "error" in reply and "tree" in reply:
            self.absorb(reply["tree"])
        if "error" in reply:
            _raise(reply)
        return reply

    def _send_forward(self, module, args, kwargs, grad, grad_params):
        """Run ``module``'s forward in the kernel on this tree's parameters: (result, which outputs need grad,
        the call's id)."""
        params, buffers, training = self.state()
        send = tuple(a.detach() if isinstance(a, torch.Tensor) else a for a in args)
        reply = self._request({"op": "forward", "module": module._remote_id, "args": encode(send),
                               "kwargs": encode(kwargs), "grad": grad, "params": encode(params),
                               "buffers": encode(buffers), "training": encode(training),
                               "grad_params": [p._remote_id for p in grad_params]})
        if "tree" in reply:  # forward changed the module (created layers): the mirror follows
            self.absorb(reply["tree"])
        return (*_answer(args, reply), reply.get("call"))


def _build_mirror(transport, reply: dict):
    """The mirror tree of a module the agent built."""
    link = _Link(transport, None)
    link.absorb(reply["tree"])
    link.root = link.by_id[reply["root"]]
    return link.root


def _mirror_class(spec: dict):
    builtin = getattr(torch.nn, spec["class"], None) if spec.get("builtin") else None
    if isinstance(builtin, type) and issubclass(builtin, torch.nn.Module):
        return builtin  # torch's own class: its forward runs here, on the same parameters
    base = getattr(torch.nn, str(spec.get("base")), None) if spec.get("base") else None
    bases = (Mirror, base) if isinstance(base, type) and issubclass(base, torch.nn.Module) else (Mirror,)
    name = spec["class"] if str(spec["class"]).isidentifier() else "Module"
    return type(name, bases, {"forward": Mirror.forward})


MAX_MODULE_PATHS = 10_000  # TinyLM has about 40 modules, each reached by one path


def check_module_tree(tree: list) -> None:
    """``AgentError`` unless the modules described by ``tree`` (the agent's descriptions) form a tree or a DAG
    with at most ``MAX_MODULE_PATHS`` paths below any module: torch walks every path (``named_modules(
    remove_duplicate=False)``, ``.double()``), so 30 levels of a child registered twice make 2**30 of them, and
    a module that is its own descendant never ends."""
    children = {d["id"]: [c for _, c in d["children"] if c is not None] for d in tree}
    paths, state = {}, {}  # state: 1 = below it now, 2 = counted
    for start in children:
        stack = [(start, False)]
        while stack:
            node, done = stack.pop()
            if done:
                paths[node] = 1 + sum(paths.get(c, 1) for c in children.get(node, ()))
                state[node] = 2
                if paths[node] > MAX_MODULE_PATHS:
                    raise AgentError(f"a module reached by more than {MAX_MODULE_PATHS} paths is not carried")
            elif state.get(node) == 1:
                raise AgentError("a module that contains itself is not carried")
            elif state.get(node) != 2:
                state[node] = 1
                stack.append((node, True))
                stack.extend((c, False) for c in children.get(node, ()))


def _absorb(link: "_Link", tree: list) -> None:
    """Create the mirrors of new modules and bring known ones up to date (a forward may add layers)."""
    check_module_tree(tree)
    for spec in tree:
        m = link.by_id.get(spec["id"])
        if m is None:
            cls = _mirror_class(spec)
            m = cls.__new__(cls)
            torch.nn.Module.__init__(m)
            m._remote_id = spec["id"]
            m.training = bool(spec["training"])
            link.by_id[spec["id"]] = m
            for k, v in spec.get("tensors", {}).items():
                object.__setattr__(m, k, decode(v).detach())
            for n, value, persistent in spec["buffers"]:
                m.register_buffer(n, decode(value) if value is not None else None, persistent=bool(persistent))
        object.__setattr__(m, "_root_link", link)
        for k, v in spec.get("plain", {}).items():
            if k != "training":
                object.__setattr__(m, k, decode(v))
        for n, pid, value in spec["params"]:
            if pid is None:
                m._parameters[n] = None
                continue
            if pid not in link.params:
                t = decode(value)
                link.params[pid] = torch.nn.Parameter(t.detach(), requires_grad=t.requires_grad)
                link.params[pid]._remote_id = pid
            m._parameters[n] = link.params[pid]
    for spec in tree:
        m = link.by_id[spec["id"]]
        for n, cid in spec["children"]:
            m._modules[n] = link.by_id[cid] if cid is not None else None


class _RemoteClassMeta(type):
    """The metaclass of a learner's class stood in for here: calling the class builds it in the kernel."""

    def __call__(cls, *args, **kwargs):
        if any(isinstance(v, torch.nn.Module) for v in (*args, *kwargs.values())):
            raise NotCarried("a module argument")
        reply = RemoteFunction._request(cls._function, {"op": "build", "name": cls._name, "args": encode(args),
                                                        "kwargs": encode(kwargs)})
        if "built" in reply:
            return decode(reply["built"])
        return _build_mirror(cls._transport, reply)


_RemoteClassMeta.__name__ = "type"  # what a check reports as the kind of a class ("got type")


def _remote_class(transport, name: str, info: dict):
    import inspect
    params = []
    for pname, kind, has_default, default in info.get("signature", []):
        kind = getattr(inspect.Parameter, str(kind), inspect.Parameter.POSITIONAL_OR_KEYWORD)
        try:
            params.append(inspect.Parameter(str(pname), kind, default=decode(default) if has_default
                                            else inspect.Parameter.empty))
        except (ValueError, TypeError):
            pass
    try:
        signature = inspect.Signature(params)
    except ValueError:
        signature = inspect.Signature()
    bases = (Mirror,) if info.get("module") else (object,)
    cls = _RemoteClassMeta(str(info.get("name", name)) if str(info.get("name", name)).isidentifier() else name,
                           bases, {"__signature__": signature})
    cls._transport, cls._name = transport, name
    cls._function = RemoteFunction(transport, name, {"name": name})
    return cls


def stand_in(transport, name: str):
    """The learner's global ``name`` as the check should see it (a function, a class, None, or an opaque value).
    Raises NameError when the learner has no such name (the in-kernel cell would raise it too)."""
    info = transport.request({"op": "describe", "name": name})
    kind = info.get("kind") if isinstance(info, dict) else None
    if kind == "missing":
        raise NameError(f"name '{name}' is not defined")
    if kind == "none":
        return None
    if kind == "function":  # named like the learner's callable's type, for messages (`got function`)
        kind_name = str(info.get("type", "function"))
        cls = type(kind_name if kind_name.isidentifier() else "function", (RemoteFunction,), {})
        return cls(transport, name, info)
    if kind == "class":
        return _remote_class(transport, name, info)
    if kind == "module":  # an instance where a class was asked for: the check says so from its mirror
        return _build_mirror(transport, RemoteFunction._request(RemoteFunction(transport, name, {}),
                                                                {"op": "adopt", "name": name}))
    if kind == "other":
        return decode({"opaque": info.get("type", "object"), "module": info.get("module", "")})
    raise AgentError(f"the agent described {name!r} as {kind!r}")


def verdict(check, transport, name: str, seeds=(0, 1)) -> tuple[bool, str, object]:
    """Run ``check`` on the learner's ``name`` for each seed, here. Returns (passed, text the learner reads, the
    :class:`~tinylm_checks.CheckFailure` when the check failed with one, else None: its ``message_id`` and
    ``mistakes`` say what went wrong, for the class's report). A check that needs what the wire does not carry (a
    module passed by keyword, or to a class or a forward) fails, saying so: the grade never falls back to the
    learner's kernel."""
    from tinylm_checks import CheckFailure
    out = io.StringIO()
    try:
        obj = stand_in(transport, name)
        with contextlib.redirect_stdout(out):
            for seed in seeds:
                check(obj, seed=seed)
    except NotCarried as e:
        return False, f"NotCarried: the grader cannot run this check outside your kernel ({e}); tell your instructor", None
    except CheckFailure as e:
        if isinstance(e.__context__, NotCarried):
            return False, (f"NotCarried: the grader cannot run this check outside your kernel ({e.__context__}); "
                           "tell your instructor"), None
        return False, f"CheckFailure: {e}", e
    except Exception as e:  # noqa: BLE001 - NameError, a broken agent, a kernel gone: no points
        return False, f"{type(e).__name__}: {e}", None
    return True, out.getvalue(), None
