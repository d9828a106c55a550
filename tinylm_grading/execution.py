"""The parts of running a learner's notebook under grading that :class:`~tinylm_grading.preprocessors.GradingExecute`
puts together, each readable and testable alone:

- :class:`KernelLink` — silent requests to a kernel and their replies (what the grader's agent requests ride on);
- :class:`OutputCap` — at most so many bytes of output per cell, kept as they arrive;
- :class:`Deadline` — the time one notebook may take in all;
- :class:`Replay` — the cells that ran to the end, run again in a new kernel when the old one died or hung;
- :func:`scrub_partial_credit` — a test cell keeps no ``execute_result`` (nbgrader would read it as a score).
"""
from __future__ import annotations

import asyncio
import copy
import json
import queue
import time

from jupyter_client.utils import run_sync
from nbformat.v4 import new_output


class KernelDied(RuntimeError):
    """The kernel ended while the grader waited for an answer (learner code called os._exit, say)."""


class MessageTooLarge(RuntimeError):
    """The kernel's reply was larger than the shell channel accepts; it was not read."""


def error_output(ename: str, evalue: str):
    """An ``error`` output of one line."""
    return new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


class KernelLink:
    """Requests to one kernel that are not cells: a silent execution's ``user_expressions``, a kernel_info."""

    def __init__(self, kc, km):
        self.kc, self.km = kc, km

    def evaluate(self, expression: str, timeout: float, code: str = "") -> str:
        """Run ``code`` silently in the kernel, then evaluate ``expression``; its text/plain repr. Raises
        TimeoutError after ``timeout`` seconds, KernelDied when the kernel ends meanwhile, MessageTooLarge (a
        RuntimeError) when the reply is over the channel's limit, RuntimeError when the kernel reports an error."""
        msg_id = self.kc.execute(code, silent=True, store_history=False, user_expressions={"r": expression})
        content = run_sync(self.reply)(msg_id, timeout)
        if content.get("ename") == "MessageTooLarge":  # the reply was too large to read (kernel.py)
            raise MessageTooLarge(content.get("evalue"))
        if content.get("status") != "ok":
            raise RuntimeError(f"{content.get('ename')}: {content.get('evalue')}")
        value = content.get("user_expressions", {}).get("r", {})
        if value.get("status") != "ok":
            raise RuntimeError(f"{value.get('ename')}: {value.get('evalue')}")
        return value["data"]["text/plain"]

    def responsive(self, timeout: float) -> bool:
        """Does the kernel answer a kernel_info request within ``timeout`` seconds?"""
        try:
            run_sync(self.reply)(self.kc.kernel_info(), timeout)
            return True
        except Exception:  # noqa: BLE001 - no answer, a dead channel: not responsive
            return False

    async def reply(self, msg_id: str, timeout: float) -> dict:
        """The shell reply to ``msg_id``; TimeoutError after ``timeout`` seconds. IOPub messages that arrive
        meanwhile (what learner code prints while a check runs it) are read and dropped, not queued."""
        async def wait():
            deadline = time.monotonic() + timeout
            while True:
                try:
                    msg = await self.kc.shell_channel.get_msg(timeout=1)
                except queue.Empty:  # a kernel that is gone will not answer: no need to wait out the timeout
                    if not await self.km.is_alive():
                        raise KernelDied("your kernel died while the grader was running your code") from None
                    if time.monotonic() > deadline:
                        raise
                    continue
                if msg["parent_header"].get("msg_id") == msg_id:
                    return msg["content"]

        async def drain():
            while True:
                try:
                    await self.kc.iopub_channel.get_msg(timeout=1)
                except queue.Empty:
                    pass

        drainer = asyncio.ensure_future(drain())
        try:
            return await asyncio.wait_for(wait(), timeout + 1)
        except (asyncio.TimeoutError, queue.Empty):
            raise TimeoutError(f"no answer within {timeout} s") from None
        finally:
            drainer.cancel()


OUTPUT_CAPPED = ("\n[output truncated by the grader: this cell printed or displayed more than {} bytes; the rest "
                 "was not kept]\n")


def output_size(content: dict) -> int:
    """Roughly how many bytes an output message's content holds (stream text, display data)."""
    size = len(content.get("text", "") or "")
    for value in (content.get("data") or {}).values():
        size += len(value) if isinstance(value, str) else len(json.dumps(value))
    return size


class OutputCap:
    """At most ``max_bytes`` of output per execution (stream text, display data); past it, one note and nothing
    more. Errors are always kept, shortened to the cap."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._parent, self._bytes, self._capped = None, 0, False

    def admit(self, msg: dict, outs: list) -> bool:
        """Whether output message ``msg`` is kept; appends the note to ``outs`` the first time one is not. Shortens
        an error in place."""
        parent = msg["parent_header"].get("msg_id")
        if parent != self._parent:
            self._parent, self._bytes, self._capped = parent, 0, False
        content = msg["content"]
        if msg["msg_type"] == "error":
            content["evalue"] = str(content.get("evalue", ""))[:self.max_bytes]
            content["traceback"] = [str(line)[:10_000] for line in content.get("traceback", [])[:200]]
            return True
        self._bytes += output_size(content)
        if self._bytes <= self.max_bytes:
            return True
        if not self._capped:
            self._capped = True
            outs.append(new_output("stream", name="stderr", text=OUTPUT_CAPPED.format(self.max_bytes)))
        return False


class Deadline:
    """The seconds one notebook may take in all, from when it is created."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def left(self) -> float:
        return self._end - time.monotonic()

    def cell_timeout(self, timeout: int | None) -> int:
        """A cell's timeout: its own, but at most what is left (at least 1 s)."""
        left = max(1, int(self.left()))
        return left if timeout is None else min(timeout, left)


class Replay:
    """The cells that ran to the end, in order, to run again in a new kernel (a test cell only checks, so a new
    kernel does not need it)."""

    def __init__(self):
        self.completed: list[int] = []

    def record(self, index: int) -> None:
        self.completed.append(index)

    def run(self, cells, execute, deadline: Deadline, dead_kernel=Exception) -> None:
        """Run a copy of each completed cell with ``execute(cell, index)`` while time is left; stop at the first
        ``dead_kernel`` error (the new kernel died too)."""
        for i in self.completed:
            if deadline.left() <= 0:
                break
            try:
                execute(copy.deepcopy(cells[i]), i)
            except dead_kernel:
                break


def scrub_partial_credit(cell) -> None:
    """Drop a test cell's ``execute_result``: nbgrader reads the first one as partial credit even when the cell
    also failed, so an error would not score 0."""
    cell.outputs = [o for o in cell.outputs if o.output_type != "execute_result"]
