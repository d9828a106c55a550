"""Stage 13 checks: the learner's own repository, ``tiny-transformer/``.

Each check takes the repository as ``{path: text}`` (``Repository("tiny-transformer")()`` in a notebook), writes
its files into a fresh folder (a :class:`Workspace`) and runs them there as separate processes: a probe script of
the check's own that imports ``model.py`` and saves what it computes, the learner's tests with ``pytest``,
``train.py`` and ``generate.py`` from their command lines. What comes back is data (exit codes, printed text,
tensors read with ``torch.load(weights_only=True)``) that the check compares with the reference computed here. When
the grader computes a verdict, :data:`WORKSPACE` is its sandboxed workspace (``tinylm_grading.workspace``): the
learner's files then run in a sandbox of their own, never in the grader's process.

- ``check_capstone_model``: ``causal_mask``, ``scaled_dot_product_attention`` and ``TinyLM`` (the course's parameter
  names, weights copied in) give the reference's values.
- ``check_attention_tests``, ``check_causal_mask_tests``, ``check_overfit_tests``: the learner's test file passes on
  correct ``model.py`` files and fails on each known-wrong one (:data:`BROKEN_MODELS`), all of them drawn for the
  check's seed and the learner's test files (:mod:`tinylm_solutions.capstone.variants`): written differently from the
  reference, so that a test cannot recognise them by their text. What the learner's tests print there never comes
  back (those files are the reference's code in other words): the check reports pass or fail, and how pytest ended.
- ``check_capstone_train``: ``configs/tiny.yaml`` has the course's keys; ``train.py --config --steps --out`` trains
  a small configuration of the check's and saves a checkpoint whose weights, put into the reference TinyLM, score
  well below ln V on the corpus; with ``--data`` on a text where each character follows from the one before, the
  next-token loss ends near 0 (targets shifted twice learn the character after next).
- ``check_capstone_generate``: ``generate.py`` continues a prompt from a checkpoint the check saved: greedy
  (``--top-k 1``) exactly as the reference, sampled reproducibly for a seed.
- ``check_capstone_report``: ``report.md`` answers the five questions of the lesson (feedback only: the report is
  graded by hand).

Every command runs under two limits, :data:`CPU_SECONDS` of CPU time (where there is ``RLIMIT_CPU``: not on Windows)
and :data:`TIMEOUT` seconds in all; a check whose command reached one says which, with its value, instead of reporting
what the command did. The grader and the check service add a third, their own time (:func:`deadline`): each command
then ends by it, and a check whose command it ended raises :class:`DeadlineReached`, which they name.
"""
from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import math
import os
import random
import re
import reprlib
import shutil
import signal
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from tinylm_solutions import i18n

from . import _forked, _text
from ._core import Ctx, check, max_abs_diff, reference
from ._text import MISTAKE, TEXT, say

ref_model = reference("model")
ref_attention = reference("attention")
ref_generate = reference("generate")
ref_data = reference("data")
variants = reference("capstone.variants")

__all__ = ["check_capstone_model", "check_attention_tests", "check_causal_mask_tests", "check_overfit_tests",
           "check_capstone_train", "check_capstone_generate", "check_capstone_report", "check_capstone_repository",
           "Workspace"]

TIMEOUT = 300
"""Seconds one command may take in all (wall-clock time): the stop for a command that waits or sleeps. Generous: the
reference's slowest command takes about 3 s on a quiet 2-core laptop, and 20 s with 12 busy processes beside it."""
CPU_SECONDS = 60
"""Seconds of CPU time one command may use: the stop for runaway code, whatever the machine's load (the reference's
slowest command uses about 3). A command that reaches it gets SIGXCPU (its soft ``RLIMIT_CPU``, which
:data:`LAUNCHER` sets). Windows has no such limit: there :data:`TIMEOUT` alone stops a command."""
TIMED_OUT, OUT_OF_CPU = -1000, -1024
"""The exit codes :func:`session` gives a command stopped at :data:`TIMEOUT` and at :data:`CPU_SECONDS` (no process
exits with either)."""
THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
"""The commands' environment: one thread each (on small tensors a second thread mostly waits: a 2-core laptop ran
the overfit test in 18 s with two, 2.7 s with one); and pytest without the plugins installed beside it (the learner's
tests are plain pytest, and run the same whatever else the environment holds: nbval, xdist, playwright... in the
course's own, nothing in a learner's; loading the course's took 0.6 s of each of the 9 pytest commands)."""
MAX_OUTPUT_BYTES = 20_000_000  # the most a file the check reads back may hold


def usable_cpus(cgroup: str = "/sys/fs/cgroup") -> int:
    """The cores this process may compute on: those it may run on (its affinity), at most its cgroup's CPU quota
    rounded up. A container sees the machine's cores: a Kubernetes pod limited to 2 CPUs on a node of 32 has a quota
    of 2 (cgroup v2's ``cpu.max``, v1's ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``). Never less than 1."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    for quota_file, period_file in (("cpu.max", None), ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us")):
        try:
            quota, _, period = Path(cgroup, quota_file).read_text(encoding="ascii").strip().partition(" ")
            if period_file:
                period = Path(cgroup, period_file).read_text(encoding="ascii").strip()
            if quota not in ("max", "-1") and int(quota) > 0 and int(period) > 0:
                cores = min(cores, math.ceil(int(quota) / int(period)))
            break
        except (OSError, ValueError):
            continue
    return max(1, cores)


WORKERS = max(1, min(4, usable_cpus()))
"""How many of a check's commands run at the same time (they are independent, and each takes one thread): on a
2-core laptop, the three runs of a test file take the time of two."""


def _at_once(calls: list) -> list:
    """The results of the zero-argument ``calls``, in order, run on up to :data:`WORKERS` threads (each thread waits
    for a process of its own); an exception in one is raised here. Interrupted (a learner stops the check), the
    commands that the threads wait for end, and the threads with them."""
    if len(calls) < 2 or WORKERS == 1:
        return [call() for call in calls]
    import threading
    slots, stop, results = threading.Semaphore(WORKERS), threading.Event(), [None] * len(calls)

    def work(i: int) -> None:
        with slots:
            if stop.is_set():  # interrupted while this one waited for a slot: it never starts
                return
            try:
                results[i] = (True, calls[i]())
            except BaseException as e:  # noqa: B036 - handed to the caller's thread
                results[i] = (False, e)

    threads = [threading.Thread(target=work, args=(i,), daemon=True, name="tinylm-capstone") for i in range(len(calls))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():  # short waits: an interrupt is handled within 0.1 s even when a worker thread
                thread.join(0.1)  # took the signal just as this one blocked (seen once: 13 s, until the commands ended)
    except BaseException:
        stop.set()
        ends = time.monotonic() + 3
        while True:  # a thread starting its command as the interrupt came starts it after a cancel: cancel again
            _forked.cancel()
            alive = [thread for thread in threads if thread.is_alive()]
            if not alive or time.monotonic() > ends:
                break
            alive[0].join(0.05)
        raise
    for ok, value in results:
        if not ok:
            raise value
    return [value for _, value in results]


class Workspace:
    """A temporary folder holding files, where commands run as separate Python processes (on this machine: the
    learner's own code, run for the learner; the grader replaces this class with a sandboxed one)."""

    def __init__(self, files: dict[str, str | bytes]):
        self.path = self._folder()
        try:
            for name, content in files.items():
                target = self.path / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content if isinstance(content, bytes) else content.encode())
        except BaseException:  # a name that is another's folder, say: the folder must not stay behind (on /dev/shm)
            self.__exit__(None, None, None)
            raise

    def _folder(self) -> Path:
        """A new empty folder for the files."""
        return Path(tempfile.mkdtemp(prefix="tinylm-capstone-"))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)

    def run(self, args: list[str], timeout: float = TIMEOUT) -> tuple[int, str]:
        """``python *args`` in the folder: (exit code, stdout and stderr). A timeout gives exit code -9. The process is
        forked from one that has imported PyTorch already (:mod:`tinylm_checks._forked`): about 1.5 CPU s less each."""
        return _forked.run(args, self.path, self.environment(), timeout)

    @staticmethod
    def environment() -> dict[str, str]:
        """The commands' environment: this process's, without pytest's own variables, one thread each."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV_"))}
        env.update(PYTHONDONTWRITEBYTECODE="1", **THREADS)
        return env

    def load(self, name: str):
        """``torch.load(name, weights_only=True)`` of a file the commands wrote, or None if there is none."""
        path = self.path / name
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_OUTPUT_BYTES:
            return None
        return torch.load(io.BytesIO(path.read_bytes()), weights_only=True)


WORKSPACE = Workspace
"""The class the checks run commands in (see the module docstring)."""


def prepare() -> None:
    """Start, in the background, the process the checks' commands are forked from (in this process, not when the
    grader's sandboxed workspace runs them): ``Repository(...)`` calls it, so that the first check a learner runs
    minutes later does not wait for its imports (1.5 s)."""
    if WORKSPACE is Workspace:
        _forked.start(Workspace.environment())


_SESSIONS: dict[str, tuple[list[tuple[int, str]], dict]] = {}
SHARED = "TINYLM_CAPSTONE_CACHE"
"""An environment variable: a folder where :func:`session` also keeps its results, for every process that shares the
folder (the test suite sets it: its workers and the graders it starts run the same reference commands many times).
Unset (a learner's kernel, a real class's grader), results are kept per process only."""


def _shared_path(key: str) -> Path | None:
    folder = os.environ.get(SHARED)
    return Path(folder) / f"{key}.pt" if folder and Path(folder).is_dir() else None


def session(files: dict[str, str | bytes], commands: list[list[str]], load: tuple[str, ...] = ()):
    """Run ``commands`` in one :data:`WORKSPACE` holding ``files``; ``([(exit code, output) per command], {name: the
    loaded file or None})``. The same files and commands run once per process (and once per folder :data:`SHARED`
    names): the checks' commands are deterministic (fixed seeds), and a check that runs again (its hidden seed with
    the same inputs, a test that calls it twice) reads the first run's results."""
    digest = hashlib.sha256(WORKSPACE.__name__.encode())
    for name in sorted(files):
        content = files[name]
        digest.update(name.encode() + b"\0" + (content if isinstance(content, bytes) else content.encode()) + b"\0")
    digest.update(repr((commands, load, TIMEOUT, CPU_SECONDS)).encode())
    key = digest.hexdigest()
    shared = _shared_path(key)
    found = _SESSIONS.get(key)
    if found is not None:
        return found
    if shared is None:
        found = _SESSIONS[key] = _run(files, commands, load)
        return found
    try:
        import fcntl  # POSIX only: the shared folder is the test suite's (a learner's kernel never sets it)
    except ImportError:  # Windows: results are kept per process
        found = _SESSIONS[key] = _run(files, commands, load)
        return found

    with open(shared.with_suffix(".lock"), "ab") as lock:  # one process runs them; the others wait, then read
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shared.is_file():
            found = torch.load(shared, weights_only=True)
        else:
            found = _run(files, commands, load)
            partial = shared.with_suffix(f".{os.getpid()}.part")  # written whole, then renamed
            torch.save(found, partial)
            os.replace(partial, shared)
    _SESSIONS[key] = found  # returned from the local name: another thread may clear the cache meanwhile
    return found


LAUNCHER = '''
# code: the check's launcher, python _check_run.py SECONDS COMMAND...: COMMAND as python runs it, with at most SECONDS
# of CPU time (then SIGXCPU; Windows has no such limit)
import os, runpy, sys
_seconds, _args = int(sys.argv[1]), sys.argv[2:]
try:
    import resource
except ImportError:
    pass
else:
    _hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    resource.setrlimit(resource.RLIMIT_CPU, (_seconds if _hard == resource.RLIM_INFINITY else min(_seconds, _hard),
                                             _hard))
if _args[0] == "-m":
    sys.argv = _args[1:]
    runpy.run_module(_args[1], run_name="__main__", alter_sys=True)
else:
    sys.argv = _args
    runpy.run_path(os.path.abspath(_args[0]), run_name="__main__")
'''
"""Each command's first file (``_check_run.py``): it sets the command's CPU limit (:data:`CPU_SECONDS`) as the
process's soft ``RLIMIT_CPU`` (where there is one), then runs the command in the same process as ``python`` would (``sys.argv``,
``__main__``, the workspace first on ``sys.path``)."""


STEP_COUNTER = '''
# code: the check's step counter, python _check_steps.py SCRIPT ARGS...: SCRIPT as python runs it; when it ends, the
# number of optimizer steps it took (every torch.optim optimizer's step()) is saved in _check_steps.pt
import atexit, os, runpy, sys
import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
_steps, _file = [0], os.path.abspath("_check_steps.pt")
register_optimizer_step_post_hook(lambda *_: _steps.__setitem__(0, _steps[0] + 1))
atexit.register(lambda: torch.save(_steps[0], _file))
sys.argv = sys.argv[1:]
runpy.run_path(os.path.abspath(sys.argv[0]), run_name="__main__")
'''
"""What ``train.py`` runs under in check_capstone_train, so that a failure says how many optimizer steps the script
took for ``--steps`` (a count only for the message: a script may step some other way, or forge the file)."""


_SIGXCPU = getattr(signal, "SIGXCPU", None)  # (Windows' signal module has none)
_OUT_OF_CPU_CODES = (-_SIGXCPU, 128 + _SIGXCPU) if _SIGXCPU else ()


class DeadlineReached(BaseException):
    """The time :func:`deadline` gave ran out: a command was ended by it, or not started. A ``BaseException``, as
    ``KeyboardInterrupt`` is: it ends the check (the ``check`` decorator would report an ``Exception`` as the learner's
    code's), and whoever set the deadline names its own limit."""


_DEADLINE: float | None = None
"""``time.monotonic()`` by when every command must have ended (None: each has :data:`TIMEOUT`); :func:`deadline`
sets it, for the check's threads too."""
LEAST = 1.0
"""Seconds: a command does not start with less than this left before the deadline."""


@contextlib.contextmanager
def deadline(seconds: float | None):
    """Within it, the checks' commands end ``seconds`` from now at the latest: each may take what is left of them (when
    that is less than :data:`TIMEOUT`), none starts with less than :data:`LEAST` left, and a command ended by it, or not
    started, raises :class:`DeadlineReached` in the check. None: no such limit (a learner's kernel). The grader sets it
    around a verdict (what is left of the notebook's time), the check service around a check (what is left of its
    child's time): a check's commands run one after another and several at once, each with :data:`TIMEOUT`, and
    together took 424 s of a notebook that had 45."""
    global _DEADLINE
    previous = _DEADLINE
    if seconds is not None:
        _DEADLINE = min(time.monotonic() + seconds, math.inf if previous is None else previous)
    try:
        yield
    finally:
        _DEADLINE = previous


def _timed(ws, command: list[str]) -> tuple[int, str]:
    """``command`` run in ``ws`` under both limits: (exit code, output), the code :data:`TIMED_OUT` or
    :data:`OUT_OF_CPU` when a limit stopped it (SIGXCPU is -24 from a forked child, 128 + 24 through bubblewrap).
    Within :func:`deadline`, at most what is left of it; raises :class:`DeadlineReached` when that ended it."""
    timeout, end = TIMEOUT, _DEADLINE
    if end is not None:
        if end - time.monotonic() < LEAST:
            raise DeadlineReached
        timeout = min(TIMEOUT, end - time.monotonic())
    start = time.monotonic()
    code, output = ws.run(["_check_run.py", str(CPU_SECONDS), *command], timeout)
    if code == _forked.KILLED and time.monotonic() - start >= timeout:
        if timeout < TIMEOUT:
            raise DeadlineReached
        code = TIMED_OUT
    elif code in _OUT_OF_CPU_CODES:
        code = OUT_OF_CPU
    return code, output


def _run(files: dict[str, str | bytes], commands: list[list[str]], load: tuple[str, ...]):
    """The commands are independent of each other: they run at the same time (:func:`_at_once`)."""
    with WORKSPACE({**files, "_check_run.py": LAUNCHER}) as ws:
        return _at_once([lambda c=command: _timed(ws, c) for command in commands]), \
            {name: ws.load(name) for name in load}


def _limits(ctx: Ctx, code: int, command: str) -> None:
    """Fail, naming the limit and its value, if one stopped ``command`` (as the learner would type it)."""
    if code == TIMED_OUT:
        ctx.fail("capstone.timed_out", command=command, seconds=TIMEOUT)
    if code == OUT_OF_CPU:
        ctx.fail("capstone.out_of_cpu", command=command, seconds=CPU_SECONDS)


# --------------------------------------------------------------------------- reading the repository

def _files(ctx: Ctx, repo, needed: tuple[str, ...]) -> dict[str, str]:
    files = ctx.call(repo, what=say("capstone.read")) if callable(repo) else repo
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        ctx.fail("capstone.not_files", got=type(files).__name__)
    unsafe = [k for k in files if k.startswith("/") or ".." in Path(k).parts or "\\" in k]
    if unsafe:
        ctx.fail("capstone.unsafe_path", path=unsafe[0])
    for name in needed:
        if name not in files:
            ctx.fail("capstone.missing_file", name=name, have=", ".join(sorted(files)) or "-")
        if "raise NotImplementedError()" in files[name] and any(stub in files[name] for stub in _STUBS):
            ctx.fail("capstone.unfinished", name=name)
    return files


_STUBS = tuple(i18n.translate(_text.FOLDER, "core.stub.code", TEXT["core.stub.code"], lang) for lang in i18n.LANGUAGES)
"""The comment of a release's code stub, in each language (``# YOUR CODE HERE``, ``# 在这里写你的代码``)."""

MAX_SOURCE = 200_000
"""Characters: the longest file of the learner's own code the checks parse (parsing takes about 700 bytes of memory
per character)."""


def _own_code(ctx: Ctx, files: dict[str, str], name: str, mistake: str | None = None,
              message: str = "capstone.imports_course") -> None:
    """``name`` may not import the course's packages: it is the learner's own code (``message`` and ``mistake``: what
    to say when it does)."""
    if len(files[name]) > MAX_SOURCE:
        ctx.fail("capstone.file_too_large", name=name, size=len(files[name]), limit=MAX_SOURCE)
    try:
        tree = ast.parse(files[name])
    except SyntaxError as e:
        ctx.fail("capstone.syntax_error", name=name, line=e.lineno or 0, error=e.msg)
    for node in ast.walk(tree):
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        for module in modules:
            if module.split(".")[0] in ("tinylm_solutions", "tinylm_checks", "tinylm_grading"):
                ctx.fail(message, name=name, module=module, mistake=mistake)


_REPR = reprlib.Repr()  # (Python 3.11's takes no arguments)
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxstring, _REPR.maxother = 3, 12, 12, 80, 80


def _shown(value) -> str:
    """``repr(value)`` cut short while it is built: a learner's YAML with aliases can make a tiny file a huge value."""
    return _REPR.repr(value)[:300]


def _tail(output: str, lines: int = 6) -> str:
    return "\n".join(output.strip().splitlines()[-lines:]) or "-"


# --------------------------------------------------------------------------- model.py

PROBE = '''
# code: the check's script, run in a process of its own next to the learner's model.py
import sys, torch
sys.path.insert(0, ".")
spec = torch.load("_check_in.pt", weights_only=True)
out = {}
def part(name, fn):
    try:
        out[name] = fn()
        return True
    except BaseException as e:
        out["error"] = [name, type(e).__name__, str(e)[:300]]
        return False
ok = part("import", lambda: __import__("model") and True)
if ok:
    import model
    ok = part("mask", lambda: model.causal_mask(spec["T"]))
if ok:
    ok = part("attention", lambda: list(model.scaled_dot_product_attention(spec["q"], spec["k"], spec["v"], spec["mask"])))
if ok:
    def build():
        m = model.TinyLM(**spec["config"])
        out["names"] = sorted(m.state_dict())
        m.load_state_dict(spec["weights"])
        return True
    ok = part("build", build)
if ok:
    def forward():
        m = model.TinyLM(**spec["config"])
        m.load_state_dict(spec["weights"])
        m.eval()
        with torch.no_grad():
            logits, loss = m(spec["ids"], labels=spec["ids"])
        return [logits, loss]
    ok = part("forward", forward)
if ok:
    def fresh():  # a TinyLM as its __init__ leaves it: is the head one parameter with the embedding, how large the weights
        torch.manual_seed(0)
        m = model.TinyLM(**spec["init_config"])
        tied = m.lm_head.weight is m.token_emb.weight or m.lm_head.weight.data_ptr() == m.token_emb.weight.data_ptr()
        stds = {name: float(p.detach().double().std()) for name, p in m.named_parameters() if p.dim() == 2}
        return [bool(tied), stds]
    part("fresh", fresh)
torch.save(out, "_check_out.pt")
'''


@check
def check_capstone_model(ctx: Ctx, repo) -> str:
    files = _files(ctx, repo, ("model.py",))
    _own_code(ctx, files, "model.py")
    V, T, D, H, L, F = 11 + ctx.seed, 7, 16, 2, 2, 32
    config = dict(vocab_size=V, max_seq_len=T + 1, d_model=D, num_heads=H, num_layers=L, d_ff=F)
    torch.manual_seed(ctx.seed)  # the decorator restores the global RNG
    ref = ref_model.TinyLM(**config).eval()
    q, k, v = torch.randn(2, H, T, 4, generator=ctx.gen), torch.randn(2, H, T, 4, generator=ctx.gen), \
        torch.randn(2, H, T, 3, generator=ctx.gen)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    ids = torch.randint(V, (2, T), generator=ctx.gen)
    init_config = dict(config, d_model=4 * D, d_ff=4 * F)  # matrices of 512 to 8192 values: std within a few %
    spec = {"T": T, "q": q, "k": k, "v": v, "mask": mask, "config": config, "weights": ref.state_dict(), "ids": ids,
            "init_config": init_config}
    buf = io.BytesIO()
    torch.save(spec, buf)
    [(code, output)], loaded = session({"model.py": files["model.py"], "_check_probe.py": PROBE,
                                        "_check_in.pt": buf.getvalue()}, [["_check_probe.py"]], ("_check_out.pt",))
    out = loaded["_check_out.pt"]
    _limits(ctx, code, say("capstone.probe_command"))
    if not isinstance(out, dict):
        ctx.fail("capstone.probe_died", code=code, output=_tail(output))
    if "error" in out:
        part, error, message = (list(out["error"]) + ["", "", ""])[:3]
        if part == "build" and error == "RuntimeError" and "state_dict" in str(message):
            names = out.get("names") or []
            want = sorted(ref.state_dict())
            extra, lacking = sorted(set(names) - set(want)), sorted(set(want) - set(names))
            ctx.fail("capstone.parameter_names", lacking=", ".join(lacking[:4]) or "-",
                     extra=", ".join(extra[:4]) or "-")
        ctx.fail("capstone.model_raised", part=say(f"capstone.part.{part}"), error=error, message=message)
    if not (isinstance(out.get("mask"), torch.Tensor) and out["mask"].shape == mask.shape
            and bool((out["mask"].bool() == mask).all())):
        ctx.fail("capstone.mask_wrong", T=T)
    want_out, want_w = ref_attention.scaled_dot_product_attention(q, k, v, mask)
    got = out.get("attention")
    for name, want, have in (("out", want_out, got[0] if got else None), ("weights", want_w, got[1] if got else None)):
        if not isinstance(have, torch.Tensor) or have.shape != want.shape:
            ctx.fail("capstone.attention_shape", what=name, expected=str(tuple(want.shape)),
                     got=str(tuple(have.shape)) if isinstance(have, torch.Tensor) else type(have).__name__)
        err, _ = max_abs_diff(have.double(), want.double())
        if not err <= 1e-4:
            ctx.fail("capstone.attention_values", what=name, err=err)
    with torch.no_grad():
        want_logits, want_loss = ref(ids, labels=ids)
    logits, loss = (out.get("forward") or [None, None])[:2]
    if not isinstance(logits, torch.Tensor) or logits.shape != want_logits.shape:
        ctx.fail("capstone.logits_shape", expected=str(tuple(want_logits.shape)),
                 got=str(tuple(logits.shape)) if isinstance(logits, torch.Tensor) else type(logits).__name__)
    err, _ = max_abs_diff(logits.double(), want_logits.double())
    if not err <= 1e-4:
        ctx.fail("capstone.logits_values", err=err)
    if not isinstance(loss, torch.Tensor) or not abs(float(loss) - float(want_loss)) <= 1e-4:
        ctx.fail("capstone.loss_value", expected=f"{float(want_loss):.5f}",
                 got=f"{float(loss):.5f}" if isinstance(loss, torch.Tensor) else type(loss).__name__)
    tied, stds = (out.get("fresh") or [None, {}])[:2]
    if tied is not True:
        ctx.fail("capstone.head_not_tied", mistake=MISTAKE.head_not_tied)
    for name, std in sorted(stds.items()):  # GPT-2's N(0, 0.02), W_O and linear2 N(0, 0.02 / sqrt(2 L)) = 0.01
        if not INIT_STD[0] <= std <= INIT_STD[1]:
            ctx.fail("capstone.init_not_gpt2", name=name, std=std, config=_shown(init_config),
                     mistake=MISTAKE.model_no_gpt2_init)
    return say("capstone.model_passed", V=V, T=T, D=D, L=L)


INIT_STD = (0.005, 0.03)
"""The standard deviations a freshly built TinyLM's matrices may have: GPT-2's init draws them from N(0, 0.02), the
residual projections (``W_O``, ``linear2``) from N(0, 0.02 / sqrt(2 * num_layers)) = 0.01 for 2 layers, whether
written as the course's loop or as ``self.apply(self._init_weights)``; PyTorch's defaults give 1 (``nn.Embedding``)
and 1/sqrt(3 * fan_in), 0.051 to 0.072 here (``nn.Linear``)."""


# --------------------------------------------------------------------------- the learner's tests

BROKEN_MODELS = {
    "tests/test_attention.py": {"softmax_over_queries": MISTAKE.tests_miss_softmax_over_queries,
                                "no_scale": MISTAKE.tests_miss_no_scale},
    "tests/test_causal_mask.py": {"mask_sees_next": MISTAKE.tests_miss_mask_sees_next,
                                  "mask_not_passed": MISTAKE.tests_miss_mask_not_passed},
    "tests/test_overfit_batch.py": {"no_gradient": MISTAKE.tests_miss_no_gradient,
                                    "mask_hides_self": MISTAKE.tests_miss_mask_hides_self,
                                    "ignores_input": MISTAKE.tests_miss_ignores_input,
                                    "blocks_no_gradient": MISTAKE.tests_miss_blocks_no_gradient},
}
"""For each test file, the ways of breaking ``model.py`` it must catch (``tinylm_solutions.capstone.variants.BROKEN``):
name -> the mistake of a test file that misses it."""
CORRECT_MODELS = 2
"""How many correct ``model.py`` files a test file must pass on, per check."""
PYTEST = ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly"]
SALT = b"tinylm capstone models\0"


def models(seed: int, tests: dict[str, str], test: str) -> tuple[list[str], dict[str, str]]:
    """The ``model.py`` files the check runs ``test`` on: :data:`CORRECT_MODELS` correct ones, and one broken in each
    way of :data:`BROKEN_MODELS`, drawn from the check's seed and every test file the check writes. A test file then
    cannot hold the hashes of the files it will be run on: writing them into it changes the files."""
    digest = hashlib.sha256(SALT + str(seed).encode() + b"\0" + test.encode())
    for name in sorted(tests):
        digest.update(b"\0" + name.encode() + b"\0" + tests[name].encode())
    rng = random.Random(digest.digest())
    correct = [variants.model_py(rng) for _ in range(CORRECT_MODELS)]
    return correct, {name: variants.model_py(rng, name) for name in BROKEN_MODELS[test]}


def _pytest(tests: dict[str, str], test: str, model: str) -> int:
    """pytest's exit code for ``test`` run beside ``model`` (or :data:`TIMED_OUT`, :data:`OUT_OF_CPU`). What it
    printed is dropped here: ``model`` is the reference's code in other words, and a test can print it."""
    (result,), _ = session({**tests, "model.py": model}, [[*PYTEST, test]])
    return result[0]


def _status(code: int) -> str:
    """How a pytest run ended, in words (pytest's exit codes 1 to 4; anything else is no exit of pytest's own)."""
    return say(f"capstone.status.{code}" if code in (1, 2, 3, 4) else "capstone.status.other")


def _tests_check(ctx: Ctx, repo, test: str) -> str:
    files = _files(ctx, repo, (test,))
    tests = {k: v for k, v in files.items() if k.startswith("tests/") and k.endswith(".py")}
    for name in sorted(tests):
        _own_code(ctx, tests, name)
    correct, broken = models(ctx.seed, tests, test)
    codes = _at_once([lambda m=model: _pytest(tests, test, m) for model in [*correct, *broken.values()]])
    command = f"python -m pytest {test}"
    for code in codes[:len(correct)]:
        _limits(ctx, code, say("capstone.run_on_correct", command=command))
        if code == 5:
            ctx.fail("capstone.no_tests", test=test)
        if code != 0:
            ctx.fail("capstone.tests_fail_correct", test=test, status=_status(code))
    for (name, mistake), code in zip(BROKEN_MODELS[test].items(), codes[len(correct):]):
        _limits(ctx, code, say("capstone.run_on_broken", command=command, broken=say(f"capstone.broken.{name}")))
        if code == 0:
            ctx.fail("capstone.tests_miss", test=test, broken=say(f"capstone.broken.{name}"), mistake=mistake)
    return say("capstone.tests_passed", test=test, n_correct=len(correct), n=len(broken),
               broken="; ".join(say(f"capstone.broken.{name}") for name in broken))


@check
def check_attention_tests(ctx: Ctx, repo) -> str:
    return _tests_check(ctx, repo, "tests/test_attention.py")


@check
def check_causal_mask_tests(ctx: Ctx, repo) -> str:
    return _tests_check(ctx, repo, "tests/test_causal_mask.py")


@check
def check_overfit_tests(ctx: Ctx, repo) -> str:
    return _tests_check(ctx, repo, "tests/test_overfit_batch.py")


# --------------------------------------------------------------------------- train.py

CONFIG_KEYS = {"model": ("max_seq_len", "d_model", "num_heads", "num_layers", "d_ff"),
               "train": ("steps", "batch_size", "lr", "seed")}


def _check_config(ctx: Ctx, text: str) -> dict:
    import yaml
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as e:
        ctx.fail("capstone.config_not_yaml", error=str(e).splitlines()[0][:200])
    for section, keys in CONFIG_KEYS.items():
        if not isinstance(config, dict) or not isinstance(config.get(section), dict):
            ctx.fail("capstone.config_section", section=section)
        for key in keys:
            value = config[section].get(key)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= (0 if key != "seed" else -1):
                ctx.fail("capstone.config_key", section=section, key=key, value=_shown(value))
    model = config["model"]
    if model["d_model"] % model["num_heads"]:
        ctx.fail("capstone.config_heads", d_model=model["d_model"], num_heads=model["num_heads"])
    return config


def _steps_taken(ctx: Ctx, taken, steps: int, tried: str) -> None:
    """Fail, saying what the script did, when a run that did not learn took another number of optimizer steps than
    ``--steps`` asked for (``taken``: the step counter's count, None when the script left none)."""
    if isinstance(taken, int) and not isinstance(taken, bool) and taken != steps:
        ctx.fail("capstone.steps_ignored", steps=steps, taken=taken, tried=tried)


@check
def check_capstone_train(ctx: Ctx, repo) -> str:
    files = _files(ctx, repo, ("configs/tiny.yaml", "train.py", "model.py"))
    _check_config(ctx, files["configs/tiny.yaml"])
    steps = 40
    small = ("model: {max_seq_len: 32, d_model: 32, num_heads: 2, num_layers: 1, d_ff: 64}\n"
             f"train: {{steps: 0, batch_size: 8, lr: 1.0e-2, seed: {ctx.seed}}}\n")  # only --steps trains
    command = ["train.py", "--config", "_check.yaml", "--steps", str(steps), "--out", "_check.pt"]
    # and a text where each character follows from the one before (a shuffled cycle): 40 steps learn it, next-token
    # loss near 0; targets shifted the wrong way (labels=y, already shifted) learn the character after next instead
    cycle = "".join("abcdefghijklmnopqrstuvw"[i] for i in torch.randperm(23, generator=ctx.gen).tolist()) * 200
    cycle_command = [*command[:-2], "--out", "_cycle.pt", "--data", "_cycle.txt"]
    code_files = {"train.py": files["train.py"], "model.py": files["model.py"], "_check.yaml": small,
                  "_check_steps.py": STEP_COUNTER, "data/train.txt": ref_data.default_corpus()}  # the default text
    ([(code, output)], loaded), cycle_run = _at_once([
        lambda: session(code_files, [["_check_steps.py", *command]], ("_check.pt", "_check_steps.pt")),
        lambda: session({**code_files, "_cycle.txt": cycle}, [["_check_steps.py", *cycle_command]],
                        ("_cycle.pt", "_check_steps.pt"))])
    ckpt = loaded["_check.pt"]
    tried = say("capstone.train_tried", command=" ".join(["python", *command]))
    _limits(ctx, code, tried)
    if code != 0:
        ctx.fail("capstone.train_failed", code=code, output=_tail(output), tried=tried)
    if not isinstance(ckpt, dict) or not {"config", "model", "vocab"} <= set(ckpt):
        ctx.fail("capstone.checkpoint_format", tried=tried,
                 got=", ".join(sorted(map(str, ckpt))) if isinstance(ckpt, dict) else type(ckpt).__name__)
    config, vocab = ckpt["config"], ckpt["vocab"]
    want = {"max_seq_len": 32, "d_model": 32, "num_heads": 2, "num_layers": 1, "d_ff": 64}
    if not isinstance(config, dict) or any(config.get(k) != v for k, v in want.items()) \
            or not isinstance(vocab, list) or config.get("vocab_size") != len(vocab):
        ctx.fail("capstone.checkpoint_config", tried=tried, got=_shown(config))
    text = ref_data.default_corpus()
    stoi = {ch: i for i, ch in enumerate(vocab)}
    if not all(isinstance(ch, str) for ch in vocab) or set(text) - set(stoi):
        ctx.fail("capstone.checkpoint_vocab", tried=tried)
    model = ref_model.TinyLM(**{k: config[k] for k in ("vocab_size", *want)})
    try:
        model.load_state_dict(ckpt["model"])
    except (RuntimeError, TypeError, KeyError) as e:
        ctx.fail("capstone.checkpoint_weights", tried=tried, error=str(e).splitlines()[0][:200])
    data = torch.tensor([stoi[ch] for ch in text[:20_000]])
    windows = torch.stack([data[i:i + 32] for i in range(0, 16 * 997, 997)])  # (16, 32), spread over the text
    with torch.no_grad():
        loss = float(model.eval()(windows, labels=windows)[1])
    ln_v = math.log(len(vocab))
    if not loss < ln_v - 0.8:
        _steps_taken(ctx, loaded["_check_steps.pt"], steps, tried)
        ctx.fail("capstone.not_trained", loss=loss, ln_v=ln_v, steps=steps, tried=tried)
    command = cycle_command
    [(code, output)], loaded = cycle_run
    ckpt = loaded["_cycle.pt"]
    tried = say("capstone.train_cycle_tried", command=" ".join(["python", *command]))
    _limits(ctx, code, tried)
    if code != 0 or not isinstance(ckpt, dict) or not {"config", "model", "vocab"} <= set(ckpt):
        ctx.fail("capstone.data_option", code=code, output=_tail(output), tried=tried)
    if sorted(ckpt["vocab"]) != sorted(set(cycle)):
        ctx.fail("capstone.data_ignored", tried=tried, n=len(ckpt["vocab"]))
    model = ref_model.TinyLM(**{k: ckpt["config"][k] for k in ("vocab_size", *want)})
    model.load_state_dict(ckpt["model"])
    stoi = {ch: i for i, ch in enumerate(ckpt["vocab"])}
    data = torch.tensor([stoi[ch] for ch in cycle])
    windows = torch.stack([data[i:i + 33] for i in range(0, 16 * 37, 37)])  # (16, 33)
    with torch.no_grad():
        logits = model.eval()(windows[:, :32])[0][:, :-1]  # (16, 31, V): the logits at 0..30
        V = logits.size(-1)
        nxt = float(F.cross_entropy(logits.reshape(-1, V), windows[:, 1:32].reshape(-1)))
        after = float(F.cross_entropy(logits.reshape(-1, V), windows[:, 2:33].reshape(-1)))
    if not nxt < 0.5:
        _steps_taken(ctx, loaded["_check_steps.pt"], steps, tried)
        mistake = MISTAKE.labels_shifted_twice if after < 0.5 else None
        ctx.fail("capstone.cycle_not_learned", loss=nxt, steps=steps, tried=tried, mistake=mistake)
    return say("capstone.train_passed", steps=steps, loss=loss, ln_v=ln_v, cycle=nxt)


# --------------------------------------------------------------------------- generate.py

@check
def check_capstone_generate(ctx: Ctx, repo) -> str:
    files = _files(ctx, repo, ("generate.py", "model.py"))
    vocab = sorted(set(ref_data.default_corpus()))
    config = dict(vocab_size=len(vocab), max_seq_len=16, d_model=16, num_heads=2, num_layers=1, d_ff=32)
    torch.manual_seed(100 + ctx.seed)  # the decorator restores the global RNG
    model = ref_model.TinyLM(**config).eval()
    with torch.no_grad():  # sharper logits than at initialisation: greedy decoding then has clear winners
        model.token_emb.weight.mul_(40)
    prompt, n = "def f", 24  # longer than max_seq_len with the prompt: the context must be cropped
    stoi = {ch: i for i, ch in enumerate(vocab)}
    idx = torch.tensor([[stoi[ch] for ch in prompt]])
    want = "".join(vocab[i] for i in ref_generate.generate(model, idx, n, top_k=1)[0].tolist())
    buf, flat = io.BytesIO(), io.BytesIO()
    torch.save({"config": config, "model": model.state_dict(), "vocab": vocab}, buf)
    with torch.no_grad():  # near-uniform predictions: two seeds then draw different texts
        model.token_emb.weight.mul_(1 / 400)
    torch.save({"config": config, "model": model.state_dict(), "vocab": vocab}, flat)
    greedy = ["generate.py", "--checkpoint", "_check.pt", "--prompt", prompt, "--max-new-tokens", str(n), "--top-k", "1"]
    sampled = ["generate.py", "--checkpoint", "_flat.pt", "--prompt", prompt, "--max-new-tokens", str(n),
               "--temperature", "1.0", "--seed", str(ctx.seed)]
    other = [*sampled[:-1], str(ctx.seed + 1)]
    # the flat model's greedy text, and a temperature so low that sampling must give it: 1/40 of the smallest gap
    # between the two most likely characters along it (about 2.5e-4), so any other character has a chance below e^-40
    flat_greedy = ref_generate.generate(model, idx, n, top_k=1)[0]
    with torch.no_grad():
        gaps = [model(flat_greedy[None, :t][:, -config["max_seq_len"]:])[0][0, -1].topk(2).values
                for t in range(len(prompt), len(prompt) + n)]
    cold = float(f"{min(float(g[0] - g[1]) for g in gaps) / 40:.0e}")
    chilled = [*sampled[:-4], "--temperature", f"{cold:.0e}", "--seed", str(ctx.seed)]
    top_k = ["generate.py", "--checkpoint", "_flat.pt", "--prompt", prompt, "--max-new-tokens", str(n),
             "--top-k", str(TOP_K), "--seed", str(ctx.seed)]
    commands = [greedy, sampled, sampled, other, chilled, top_k]
    results, _ = session({"generate.py": files["generate.py"], "model.py": files["model.py"], "_check.pt": buf.getvalue(),
                          "_flat.pt": flat.getvalue()}, commands)
    runs = [(command, *result) for command, result in zip(commands, results)]
    for command, code, output in runs:
        _limits(ctx, code, " ".join(["python", *command]))
        if code != 0:
            ctx.fail("capstone.generate_failed", code=code, output=_tail(output),
                     tried=" ".join(["python", *command]))
    # what was printed last: the prompt and n new characters (which may be newlines), then one newline
    texts = [(output[:-1] if output.endswith("\n") else output)[-(len(prompt) + n):] for _, _, output in runs]
    if texts[0] != want:
        ctx.fail("capstone.greedy_differs", tried=" ".join(["python", *greedy]), expected=_shown(want), got=_shown(texts[0]))
    if not (texts[1].startswith(prompt) and len(texts[1]) == len(prompt) + n):
        ctx.fail("capstone.sample_length", tried=" ".join(["python", *sampled]), n=n, got=_shown(texts[1]))
    if texts[1] != texts[2]:
        ctx.fail("capstone.sample_not_reproducible", tried=" ".join(["python", *sampled]))
    if texts[1] == texts[3]:
        ctx.fail("capstone.seed_ignored", tried=" ".join(["python", *other]))
    want = "".join(vocab[i] for i in flat_greedy.tolist())
    if texts[4] != want:
        ctx.fail("capstone.temperature_not_greedy", tried=" ".join(["python", *chilled]), temperature=f"{cold:.0e}",
                 expected=_shown(want), got=_shown(texts[4]),
                 mistake=MISTAKE.temperature_no_effect if texts[4] == texts[1] else None)
    _top_k_kept(ctx, model, vocab, texts[5], len(prompt), " ".join(["python", *top_k]))
    return say("capstone.generate_passed", n=n, prompt=prompt, k=TOP_K)


TOP_K = 3
"""The k of check_capstone_generate's top-k run (on a near-uniform model: a fourth character kept is drawn about one
step in four)."""


def _top_k_kept(ctx: Ctx, model, vocab: list[str], text: str, start: int, tried: str) -> None:
    """Fail unless every character of ``text`` after ``start`` is among the :data:`TOP_K` most likely of ``model``
    given what precedes it (ties within 1e-5 count as kept: a learner's model.py may round otherwise)."""
    stoi = {ch: i for i, ch in enumerate(vocab)}
    if not all(ch in stoi for ch in text):
        ctx.fail("capstone.sample_length", tried=tried, n=len(text) - start, got=_shown(text))
    ids = torch.tensor([[stoi[ch] for ch in text]])
    for t in range(start, ids.size(1)):
        with torch.no_grad():
            logits = model(ids[:, :t][:, -model.max_seq_len:])[0][0, -1]
        rank = int((logits > logits[ids[0, t]] + 1e-5).sum()) + 1
        if rank > TOP_K:
            ctx.fail("capstone.top_k_outside", tried=tried, k=TOP_K, position=t - start + 1, char=repr(text[t]),
                     rank=rank, mistake=MISTAKE.top_k_keeps_one_more if rank == TOP_K + 1 else None)


# --------------------------------------------------------------------------- report.md

REPORT_QUESTIONS = 5  # the lesson's questions, "capstone.question.1" to ".5" in the table: report.md's headings
MIN_WORDS = 15
NUMBERED = (1, 2, 4)
"""The questions whose answer is a measured quantity, so must hold a number in digits (3.21, 3,21e0, 49k, 1e-3):
the parameters' counts, the overfit run's losses, tokens/s. The ablations (3) and the first error (5) may be told in
words ("stays near the unigram loss", the samples that showed it)."""
WORD = re.compile(r"[\u4e00-\u9fff]|[^\W\u4e00-\u9fff]+")  # a word, or one Chinese character (they have no spaces)


_TEXT_STUBS = tuple(i18n.translate(_text.FOLDER, "core.stub.text", TEXT["core.stub.text"], lang) for lang in i18n.LANGUAGES)
"""A release's written-answer stub, in each language (``YOUR ANSWER HERE``, ``在这里写下你的回答``): what the report
template has under each heading."""


@check
def check_capstone_report(ctx: Ctx, repo) -> str:
    files = _files(ctx, repo, ("report.md",))
    text = files["report.md"]
    stub = next((s for s in _TEXT_STUBS if s in text), None)
    if stub is not None:
        ctx.fail("capstone.report_unfinished", stub=stub)
    sections = re.split(r"^##\s+", text, flags=re.M)[1:]
    answers = {s.splitlines()[0].strip(): " ".join(s.splitlines()[1:]) for s in sections if s.strip()}
    for n in range(1, REPORT_QUESTIONS + 1):
        question = say(f"capstone.question.{n}")
        # the template is in the notebook's language; a heading in any of the course's languages is the question
        english = TEXT[f"capstone.question.{n}"]
        headings = [question] + [i18n.translate(_text.FOLDER, f"capstone.question.{n}", english, lang)
                                 for lang in i18n.LANGUAGES]
        heading = next((h for h in headings if h in answers), None)
        if heading is None:
            ctx.fail("capstone.report_question", question=question, english=english,
                     chinese=i18n.translate(_text.FOLDER, f"capstone.question.{n}", english, "zh"))
        words = len(WORD.findall(answers[heading]))
        if words < MIN_WORDS:
            ctx.fail("capstone.report_short", question=question, words=words, least=MIN_WORDS)
        if n in NUMBERED and not re.search(r"\d", answers[heading]):
            ctx.fail("capstone.report_no_number", question=question, mistake=MISTAKE.report_no_numbers)
    return say("capstone.report_passed", n=REPORT_QUESTIONS, least=MIN_WORDS,
               numbered=say("capstone.list_separator").join(str(n) for n in NUMBERED))


# --------------------------------------------------------------------------- the repository as a whole

DECLARED = ("torch", "pyyaml")
"""What the repository's ``pyproject.toml`` must declare in ``[project] dependencies``: all its code imports."""
STRANGER = '''
# code: the check's stranger, python _check_stranger.py: the repository in repo/ run as someone who cloned it runs it,
# in a new venv (venv/) that holds only what repo/pyproject.toml declares (dependencies and the test extra) and what
# those need: nothing of the course. Saves what each command did in _check_stranger.pt.
import importlib.metadata as metadata, os, re, subprocess, sys, tomllib, venv
from pathlib import Path
import torch
root, out = Path.cwd(), {"runs": []}
def name(text):
    return re.sub(r"[-_.]+", "-", text).lower()
def requirement(text):  # "torch>=2.5; python_version >= '3.10'" -> ("torch", [], "python_version >= '3.10'")
    found = re.match(r"\\s*([A-Za-z0-9][A-Za-z0-9._-]*)\\s*(\\[[^\\]]*\\])?[^;]*;?(.*)", text)
    return (name(found.group(1)), [e.strip() for e in (found.group(2) or "[]")[1:-1].split(",") if e.strip()],
            found.group(3).strip()) if found else None
def applies(marker, extras):
    try:
        from packaging.markers import Marker
    except ImportError:
        return "extra" not in marker
    return not marker or any(Marker(marker).evaluate({"extra": e}) for e in extras or [""])
try:
    project = tomllib.loads((root / "repo" / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    wanted = [requirement(r) for r in [*project.get("dependencies", []),
                                       *project.get("optional-dependencies", {}).get("test", [])]]
    todo, seen, missing = [(r[0], r[1]) for r in wanted if r], {}, []
    while todo:  # the declared distributions and everything they require, as this environment has them
        dist_name, extras = todo.pop()
        if dist_name in seen:
            continue
        try:
            seen[dist_name] = dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            missing.append(dist_name)
            continue
        for text in dist.requires or []:
            found = requirement(text)
            if found and applies(found[2], extras):
                todo.append((found[0], found[1]))
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt", clear=True).create(root / "venv")
    bin_dir = root / "venv" / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, encoding="utf-8", check=True).stdout.strip())
    for dist in seen.values():  # each distribution's own top-level files and folders, linked into the venv
        for part in {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            source, target = Path(dist.locate_file(part)), site / part
            if source.exists() and not target.exists():
                target.symlink_to(source, target_is_directory=source.is_dir())
    (bin_dir / "pytest").write_text("import sys\\nfrom pytest import console_main\\nsys.exit(console_main())\\n",
                                    encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update(PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1")
    out.update(installed=sorted(seen), missing=sorted(missing))
    for command in (["pytest", "-q"], ["train.py", "--steps", "2", "--out", "_stranger.pt"],
                    ["generate.py", "--checkpoint", "_stranger.pt", "--max-new-tokens", "20"]):
        args = [str(python), str(bin_dir / "pytest") if command[0] == "pytest" else command[0], *command[1:]]
        try:
            done = subprocess.run(args, cwd=root / "repo", env=env, capture_output=True, timeout=120)
            code, output = done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            code, output = -1000, ""
        out["runs"].append([" ".join(command), code, output[-4000:]])
        if code != 0:
            break
except Exception as e:
    out["error"] = f"{type(e).__name__}: {e}"[:500]
torch.save(out, "_check_stranger.pt")
'''
"""The script check_capstone_repository runs: a venv of the repository's own (``python -m venv`` without site
packages, offline), into which it links the top-level files of each distribution that ``pyproject.toml`` declares
(``dependencies`` and the ``test`` extra) and of everything those require, found with ``importlib.metadata`` in the
environment the check runs in; then plain ``pytest`` (the console script: the repository's folder is not on
``sys.path`` unless the repository puts it there), ``train.py --steps 2`` (its default configuration and text) and
``generate.py`` from that checkpoint, each with the venv's Python, in the repository's folder."""


def _ignored(gitignore: str, path: str) -> bool:
    """Whether a ``.gitignore`` (its plain patterns: enough for a checkpoint's name) ignores ``path``."""
    import fnmatch
    ignored = False
    for line in gitignore.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negated, pattern = line.startswith("!"), line.lstrip("!").rstrip("/")
        name = path if "/" in pattern.strip("/") else path.rsplit("/", 1)[-1]
        if fnmatch.fnmatchcase(name, pattern.lstrip("/")) or fnmatch.fnmatchcase(path, pattern.lstrip("/")):
            ignored = not negated
    return ignored


def _declared(ctx: Ctx, text: str) -> None:
    import tomllib
    try:
        project = tomllib.loads(text).get("project")
    except tomllib.TOMLDecodeError as e:
        ctx.fail("capstone.pyproject_invalid", error=str(e)[:200])
    requirements = project.get("dependencies") if isinstance(project, dict) else None
    if not isinstance(requirements, list):
        ctx.fail("capstone.pyproject_no_dependencies")
    names = {re.sub(r"[-_.]+", "-", m.group(0)).lower() for r in requirements if isinstance(r, str)
             for m in [re.match(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*", r)] if m}
    lacking = [n for n in DECLARED if n not in {x.strip() for x in names}]
    if lacking:
        ctx.fail("capstone.pyproject_lacks", lacking=", ".join(lacking), declared=", ".join(sorted(names)) or "-")


README_COMMANDS = ("pytest", "train.py", "generate.py")
NO_MODEL = re.compile(r"No module named '?model\b")  # code: Python's error, when the tests cannot import model.py
NO_COURSE = re.compile(r"No module named '?(tinylm_solutions|tinylm_checks|tinylm_grading)")  # code: Python's error
README_LOSS = re.compile(r"(loss|损失)[\s\S]{0,200}?\d\.\d", re.I)
"""A loss and, within the next 200 characters, a measured value (a number with decimals): a README's results."""


@check
def check_capstone_repository(ctx: Ctx, repo) -> str:
    """Check ``repo`` (``{path: text}``, a :class:`~tinylm_checks.Repository`) as a stranger would use it (issue 41):
    its ``pyproject.toml`` declares torch and pyyaml, its ``.gitignore`` ignores ``checkpoint.pt``, its README says how
    to run it and states a measured loss, and no file imports the course; then, in a venv that holds only the declared
    distributions and what they need, plain ``pytest``, ``train.py --steps 2`` and ``generate.py`` succeed. Feedback
    only: no grade depends on it."""
    files = _files(ctx, repo, ("pyproject.toml", ".gitignore", "README.md", "model.py", "train.py", "generate.py"))
    for name in sorted(n for n in files if n.endswith(".py")):  # run by a stranger, who has no course to import
        _own_code(ctx, files, name, mistake=MISTAKE.repo_imports_course, message="capstone.repo_imports_course")
    _declared(ctx, files["pyproject.toml"])
    if not _ignored(files[".gitignore"], "checkpoint.pt"):
        ctx.fail("capstone.checkpoint_not_ignored", mistake=MISTAKE.checkpoint_not_ignored)
    readme = files["README.md"]
    lacking = [c for c in README_COMMANDS if c not in readme]
    if lacking:
        ctx.fail("capstone.readme_no_commands", lacking=", ".join(lacking))
    if not README_LOSS.search(readme):
        ctx.fail("capstone.readme_no_results")
    [(code, output)], loaded = session({**{f"repo/{k}": v for k, v in files.items()}, "_check_stranger.py": STRANGER},
                                       [["_check_stranger.py"]], ("_check_stranger.pt",))
    _limits(ctx, code, say("capstone.stranger_command"))
    out = loaded["_check_stranger.pt"]
    if not isinstance(out, dict) or "error" in out:
        ctx.fail("capstone.stranger_failed", code=code,
                 output=out["error"] if isinstance(out, dict) else _tail(output))
    for command, code, output in out["runs"]:
        if code == 0:
            continue
        tried = say("capstone.stranger_tried", command=command, installed=", ".join(out.get("installed", [])) or "-")
        if command.startswith("pytest") and NO_MODEL.search(output):
            ctx.fail("capstone.plain_pytest_no_model", output=_tail(output), tried=tried,
                     mistake=MISTAKE.pytest_no_pythonpath)
        if NO_COURSE.search(output):
            ctx.fail("capstone.stranger_needs_course", command=command, output=_tail(output), tried=tried,
                     mistake=MISTAKE.repo_imports_course)
        ctx.fail("capstone.stranger_command_failed", command=command, code=code, output=_tail(output), tried=tried)
    return say("capstone.repository_passed", installed=", ".join(out.get("installed", [])))
