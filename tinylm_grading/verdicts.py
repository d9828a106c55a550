"""Each test cell's verdict, computed in the grader's process, never in the learner's kernel.

A course test cell holds a hidden check line (``tinylm_grading.registry.Exercise.hidden_check``), which
:func:`~tinylm_grading.registry.hidden_calls` reads the same way the build's lint does. For each call found, the
course's own check runs here (:func:`tinylm_grading.remote.verdict`) on the learner's object, reached through the
agent that :data:`AGENT_SETUP` starts in the kernel, at seed 0 (the visible check) and at the call's seed; its
outcome replaces whatever the cell showed in the kernel. A call the grader cannot read (a name or a seed that is
not plain) scores 0 and says so: a hidden check is computed here or it fails, it is never left to the kernel. A
test cell without a hidden check (an instructor's own test) keeps what the kernel showed.
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

from nbformat.v4 import new_output

from tinylm_checks import agent, capstone, failure_html, probes
from tinylm_checks._text import say

from . import remote, workspace
from .execution import KernelDied, KernelLink
from .registry import hidden_calls

workspace.install()  # the capstone's checks run a learner's files: here, only in a sandbox of their own

GRADED_OUTSIDE = "(this verdict was computed by the grader, outside your notebook's kernel)"
AGENT_SETUP = ("import types as _tinylm_types\n_tinylm_module = _tinylm_types.ModuleType('tinylm_agent')\n"
               "exec({probes!r}, _tinylm_module.__dict__)\n"  # the probe classes first: the agent builds only those
               "exec({agent!r}, _tinylm_module.__dict__)\n__tinylm_agent__ = _tinylm_module.Agent(globals())\n"
               "del _tinylm_types, _tinylm_module\n")


def one_string_literal(text) -> str:
    """``text`` if it is one quoted string literal, as ``repr`` of a str writes it; else ``remote.AgentError``.

    The learner's kernel formats the agent's answer, so it can send any expression: millions of ``[]`` or of
    implicitly joined ``'a' 'a'`` cost the grader's parser about 50 bytes of memory per byte (a 16 MiB reply
    took 8 GB). One literal costs its own length. The test runs in linear time: without its escaped
    backslashes and escaped quotes, the inside must hold no quote of the kind that delimits it."""
    if not isinstance(text, str) or len(text) < 2 or text[0] not in "'\"" or text[-1] != text[0]:
        raise remote.AgentError("the agent's answer is not a string literal")
    quote = text[0]
    inside = text[1:-1].replace("\\\\", "").replace("\\" + quote, "")
    if quote in inside or "\n" in inside:
        raise remote.AgentError("the agent's answer is not one string literal")
    return text


class KernelTransport:
    """Requests to the agent in the kernel, as ``user_expressions`` of silent executions; the answer is the
    repr of a JSON string, read with ``ast.literal_eval`` and ``json.loads`` (data, never code)."""

    def __init__(self, link: KernelLink, timeout):
        self.link, self.timeout = link, timeout  # timeout(): the seconds a request may wait
        self.seconds = 0.0  # what the last request was given of them
        self.timed_out = False  # a request got no answer: the kernel is busy with learner code, or gone
        self.died = False  # the kernel ended while a request waited

    def request(self, payload: dict) -> dict:
        if self.timed_out:  # nothing more is asked of a kernel that stopped answering
            raise TimeoutError("the kernel stopped answering")
        self.seconds = self.timeout()
        try:
            text = self.link.evaluate(f"__tinylm_agent__.handle({json.dumps(payload)!r})", self.seconds)
        except (TimeoutError, KernelDied) as e:
            self.timed_out, self.died = True, isinstance(e, KernelDied)
            raise
        return json.loads(ast.literal_eval(one_string_literal(text)))


@dataclass
class Verdict:
    """A test cell's outputs, as the grader computed them, whether its kernel must be replaced, and what it found
    (:data:`RECORD`), for the class's report."""

    outputs: list = field(default_factory=list)
    replace_kernel: bool = False
    record: dict = field(default_factory=dict)


RECORD = "tinylm"
"""The key of a test cell's metadata in the autograded notebook where the grader writes its verdict:
``{"verdict": {"passed": bool, "check": name, "error": the error's name or None, "message_id": the check's message
id or None, "mistakes": [the named mistakes]}}`` (what :func:`record` gives). Only the grader writes it: a key of
that name in a submitted notebook is removed before grading (:class:`~tinylm_grading.preprocessors.GradingExecute`)."""


def record(check_name: str, passed: bool, text: str = "", failure=None) -> dict:
    """A verdict as data: what the class's report counts (the message the learner read says the same in words)."""
    error = None if passed else text.partition(":")[0] or None
    return {"passed": passed, "check": check_name, "error": error,
            "message_id": getattr(failure, "message_id", None), "mistakes": list(getattr(failure, "mistakes", []))}


class Verdicts:
    """Computes test cells' verdicts through one kernel's agent (started on first use, again after :meth:`reset`)."""

    def __init__(self):
        self.agent_ready = False

    def reset(self) -> None:
        """A new kernel: its agent is not started yet."""
        self.agent_ready = False

    def judge(self, source: str, link: KernelLink, timeout, limit: int, left=None) -> Verdict | None:
        """The verdict of a test cell with this source, or None for a cell without a hidden check. ``timeout()``
        gives the seconds each request to the kernel may wait; ``limit`` is the cell timeout the messages name;
        ``left()`` the seconds left of the notebook's time, within which a check's commands (the capstone's) must end
        (None: no such limit)."""
        calls = hidden_calls(source)
        if not calls:
            return None
        texts = []
        for check_name, name, seed in calls:
            passed, text, replace, failure = self._one(check_name, name, seed, link, timeout, limit, left)
            if not passed:
                ename, _, evalue = text.partition(": ")
                if failure is None:
                    shown = [new_output("error", ename=ename, evalue=evalue,
                                        traceback=[*text.splitlines(), GRADED_OUTSIDE])]
                else:  # as JupyterLab shows it: the parts as a table, the fix in a fold; the error, its headline
                    shown = [new_output("display_data", data={"text/html": failure_html.to_html(failure),
                                                              "text/plain": str(failure)}),
                             new_output("error", ename=ename, evalue=evalue,
                                        traceback=[text.splitlines()[0], GRADED_OUTSIDE])]
                return Verdict(shown, replace, {"verdict": record(check_name, False, text, failure)})
            texts.append(text)
        return Verdict([new_output("stream", name="stdout", text="".join(texts) + GRADED_OUTSIDE + "\n")],
                       record={"verdict": record(calls[-1][0], True)})

    def _one(self, check_name: str, name, seed, link: KernelLink, timeout, limit: int,
             left=None) -> tuple[bool, str, bool, object]:
        """(passed, text, replace the kernel, the CheckFailure or None) for one hidden call."""
        import tinylm_checks
        check = getattr(tinylm_checks, check_name, None) if check_name.startswith("check_") else None
        if check is None or name is None or seed is None:
            return False, ("HiddenCheckUnreadable: the grader could not read this cell's hidden check "
                           f"({check_name or 'no call'}, {name}, seed={seed}); tell your instructor"), False, None
        transport = KernelTransport(link, timeout)
        try:
            if not self.agent_ready:
                transport.seconds = timeout()
                link.evaluate("None", transport.seconds, code=AGENT_SETUP.format(
                    probes=Path(probes.__file__).read_text(encoding="utf-8"),
                    agent=Path(agent.__file__).read_text(encoding="utf-8")))
                self.agent_ready = True
            had = None if left is None else left()
            with capstone.deadline(had):  # the capstone's commands end with the notebook's time, not 300 s each
                passed, text, failure = remote.verdict(check, transport, name, seeds=(0, seed))
        except capstone.DeadlineReached:  # the kernel answered: it stays
            return False, "NotebookTimeout: " + say("grading.check_notebook_timeout", check=check_name,
                                                    seconds=round(had)), False, None
        except (TimeoutError, RuntimeError) as e:
            transport.timed_out |= isinstance(e, (TimeoutError, KernelDied))
            transport.died |= isinstance(e, KernelDied)
            passed, text, failure = False, f"{type(e).__name__}: {e}", None
        if transport.died:
            return False, f"DeadKernelError: your notebook's kernel died while {check_name} ran your code", True, None
        if transport.timed_out and transport.seconds < limit:  # what was left of the notebook's time, not the cell's
            return False, "NotebookTimeout: " + say("grading.check_notebook_timeout", check=check_name,
                                                    seconds=round(transport.seconds)), True, None
        if transport.timed_out:
            return False, "CellTimeoutError: " + say("grading.check_timeout", check=check_name, seconds=limit), True, None
        return passed, text, False, failure
