"""nbgrader preprocessors that keep one learner's notebook from stopping or fooling the class's grading.

Wired in ``nbgrader_config.py`` in place of nbgrader's own ``DeduplicateIds`` and ``Execute``:

- :class:`FirstCopyWins` — a learner who copy-pastes an exercise cell duplicates its grade id (JupyterLab
  keeps the metadata). nbgrader's ``DeduplicateIds`` keeps the *last* copy and leaves the others with
  empty nbgrader metadata, which ``CheckCellMetadata`` then rejects as "an old version of the nbgrader
  metadata format": the whole ``autograde`` run stops. Here the first copy keeps the id, later copies
  become ordinary cells, and a note under each says so in the feedback.
- :class:`GradingExecute` — nbgrader's ``Execute`` with four changes. Each test cell's verdict is computed
  in this (the grader's) process by :mod:`tinylm_grading.remote`, on the learner's objects reached through
  an agent in the kernel, and replaces what the cell showed in the kernel. A kernel that dies (``os._exit``,
  a crash, killed for memory) or that an interrupt cannot stop costs only the cell it was running: the
  cell gets an error, a new kernel replays the cells that had run before it, and execution goes on. In an
  autograded test cell an error always scores 0: nbgrader reads the first ``execute_result`` of a test
  cell as partial credit even when the cell also failed, so test cells keep no ``execute_result``.
"""
from __future__ import annotations

import ast
import asyncio
import copy
import json
import queue
import re
import time
from pathlib import Path

from jupyter_client.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.v4 import new_markdown_cell, new_output
from nbgrader import utils
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Bool, Integer

from tinylm_checks import probes

from . import agent, remote

HIDDEN_CHECK = re.compile(r'runpy\.run_module\("tinylm_checks\.grading"\)\["fresh"\]\(\)\.(check_\w+)\((\w+), seed=1\)')
GRADED_OUTSIDE = "(this verdict was computed by the grader, outside your notebook's kernel)"
AGENT_SETUP = ("import types as _tinylm_types\n_tinylm_module = _tinylm_types.ModuleType('tinylm_agent')\n"
               "exec({probes!r}, _tinylm_module.__dict__)\n"  # the probe classes first: the agent builds only those
               "exec({agent!r}, _tinylm_module.__dict__)\n__tinylm_agent__ = _tinylm_module.Agent(globals())\n"
               "del _tinylm_types, _tinylm_module\n")

DUPLICATE_NOTE = ("**Note from the grader:** the cell above is a copy of `{grade_id}` (same grade id). It ran as "
                  "ordinary code; `{grade_id}` was graded on its first copy.")


class FirstCopyWins(NbGraderPreprocessor):
    """Keep the first cell of each grade id; make later copies ordinary cells, with a note under each."""

    def preprocess(self, nb, resources):
        seen, cells = set(), []
        for cell in nb.cells:
            cells.append(cell)
            if not (utils.is_grade(cell) or utils.is_solution(cell) or utils.is_locked(cell)):
                continue
            grade_id = cell.metadata.nbgrader.get("grade_id")
            if grade_id not in seen:
                seen.add(grade_id)
                continue
            self.log.warning("Cell with grade id %r appears more than once: graded on its first copy", grade_id)
            del cell.metadata["nbgrader"]
            cells.append(new_markdown_cell(DUPLICATE_NOTE.format(grade_id=grade_id)))
        nb.cells = cells
        return nb, resources


RESTORED_NOTE = ("**Note from the grader:** the nbgrader metadata of the cell above (`{grade_id}`: {changes}) had "
                 "been edited; it was graded with the course's metadata.")
STRIPPED_NOTE = ("**Note from the grader:** the cell above was marked as an nbgrader cell (`{grade_id}`) that this "
                 "assignment does not have; it ran as ordinary code and is not graded.")


class RestoreCellMetadata(NbGraderPreprocessor):
    """Give every cell whose grade id the gradebook knows the course's nbgrader metadata (grade, solution,
    task, locked, points), and make a cell whose grade id it does not know (or that has none) an ordinary
    cell, with a note under each such cell where the metadata said something else.

    A learner who sets ``grade: false`` on a test cell, changes its points, or adds a cell with
    ``grade: true`` and a new grade id would otherwise make ``autograde`` fail for their notebook
    (``CheckCellMetadata``, duplicate cells from ``OverwriteCells``): nothing recorded for them, an error
    for the instructor. Runs before ``FirstCopyWins`` and ``OverwriteCells``.
    """

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook, MissingEntry
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            try:
                source = gb.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                return nb, resources
            grades = {c.name: float(c.max_score) for c in source.grade_cells}
            tasks = {c.name: float(c.max_score) for c in source.task_cells}
            solutions = {c.name for c in source.solution_cells}
            locked = {c.name: bool(c.locked) for c in source.source_cells}
        cells = []
        for cell in nb.cells:
            cells.append(cell)
            meta = cell.metadata.get("nbgrader")
            if meta is None:
                continue
            grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
            if not isinstance(grade_id, str) or grade_id not in locked:
                del cell.metadata["nbgrader"]
                if isinstance(meta, dict) and any(meta.get(k) for k in ("grade", "solution", "locked", "task")):
                    self.log.warning("Cell with unknown grade id %r: made an ordinary cell", grade_id)
                    cells.append(new_markdown_cell(STRIPPED_NOTE.format(grade_id=grade_id)))
                continue
            course = {"grade": grade_id in grades, "grade_id": grade_id, "locked": locked[grade_id],
                      "schema_version": 3, "solution": grade_id in solutions, "task": grade_id in tasks}
            if grade_id in grades or grade_id in tasks:
                course["points"] = grades.get(grade_id, tasks.get(grade_id))
            changes = [k for k in ("grade", "solution", "task", "locked", "points") if not _same(meta.get(k), course.get(k))]
            if "checksum" in meta:
                course["checksum"] = meta["checksum"]  # OverwriteCells checks and sets it
            cell.metadata["nbgrader"] = course
            if changes:
                self.log.warning("Cell %r had its nbgrader metadata edited (%s): restored", grade_id, ", ".join(changes))
                cells.append(new_markdown_cell(RESTORED_NOTE.format(grade_id=grade_id, changes=", ".join(changes))))
        nb.cells = cells
        return nb, resources


def _same(submitted, course) -> bool:
    """Does a submitted metadata value say what the course's does (missing is False; points compare as numbers)?"""
    if isinstance(course, float):
        try:
            return float(submitted) == course
        except (TypeError, ValueError):
            return False
    return bool(submitted) == bool(course)


OUTPUT_CAPPED = ("\n[output truncated by the grader: this cell printed or displayed more than {} bytes; the rest "
                 "was not kept]\n")


def _output_size(content: dict) -> int:
    """Roughly how many bytes an output message's content holds (stream text, display data)."""
    size = len(content.get("text", "") or "")
    for value in (content.get("data") or {}).values():
        size += len(value) if isinstance(value, str) else len(json.dumps(value))
    return size


class KernelDied(RuntimeError):
    """The kernel ended while the grader waited for an answer (learner code called os._exit, say)."""


class MessageTooLarge(RuntimeError):
    """The kernel's reply was larger than ``GradingExecute.max_reply_bytes``; it was not read."""


def _error(ename: str, evalue: str):
    return new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


class KernelTransport:
    """Requests to the agent in the kernel, as ``user_expressions`` of silent executions; the answer is the
    repr of a JSON string, read with ``ast.literal_eval`` and ``json.loads`` (data, never code)."""

    def __init__(self, executor: "GradingExecute"):
        self.executor = executor
        self.timed_out = False  # a request got no answer: the kernel is busy with learner code, or gone
        self.died = False  # the kernel ended while a request waited

    def request(self, payload: dict) -> dict:
        if self.timed_out:  # nothing more is asked of a kernel that stopped answering
            raise TimeoutError("the kernel stopped answering")
        try:
            text = self.executor._evaluate(f"__tinylm_agent__.handle({json.dumps(payload)!r})")
        except (TimeoutError, KernelDied) as e:
            self.timed_out, self.died = True, isinstance(e, KernelDied)
            raise
        return json.loads(ast.literal_eval(_one_string_literal(text)))


def _one_string_literal(text) -> str:
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


class GradingExecute(Execute):
    """nbgrader's ``Execute``, where a dead or stuck kernel costs one cell, test cells score errors 0, and
    each check's verdict is computed here, outside the learner's kernel (:mod:`tinylm_grading.remote`)."""

    trusted_verdict = Bool(True, help="Compute each test cell's verdict in the grader's process, on the "
                                      "learner's objects reached through the kernel's agent.").tag(config=True)

    notebook_timeout = Integer(300, help="Seconds one notebook may take in all (its cells, replays after a new "
                                         "kernel, and its verdicts). Past it, the remaining cells are not run and "
                                         "its remaining exercises score 0: a notebook of many slow cells cannot "
                                         "stall the class's grading.").tag(config=True)

    max_output_bytes = Integer(1_000_000, help="Bytes of output one cell may keep (stream text, display data). "
                                               "Past it, further output is dropped as it arrives, with one note "
                                               "saying so; errors are always kept. An output message of more than "
                                               "four times this is not even decoded.").tag(config=True)

    max_reply_bytes = Integer(16 << 20, help="Bytes one shell message from the kernel may have, such as the "
                                             "agent's reply to a check's request (the course's largest is about "
                                             "100 kB). A larger one is not decoded: that check fails with "
                                             "MessageTooLarge.").tag(config=True)

    responsive_timeout = Integer(15, help="Seconds a kernel has to answer after a timed-out cell before it is "
                                          "replaced by a new one.").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._completed = []  # indices of the cells that ran to the end: replayed in a new kernel
        self._agent_ready = False
        self._deadline = time.monotonic() + self.notebook_timeout
        return super().preprocess(nb, resources, km=km)

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        # the course's SlicedPollChannel enforces these (tinylm_grading/kernel.py)
        kc.shell_channel.max_message_bytes = self.max_reply_bytes
        kc.iopub_channel.max_message_bytes = 4 * self.max_output_bytes
        return kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)  # nbclient binds it to its own

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's ``output``, keeping at most ``max_output_bytes`` of one execution's output; past it, one
        note and nothing more (errors are kept, shortened to the cap)."""
        parent = msg["parent_header"].get("msg_id")
        if parent != getattr(self, "_output_parent", None):
            self._output_parent, self._output_bytes, self._output_capped = parent, 0, False
        content = msg["content"]
        if msg["msg_type"] == "error":
            content["evalue"] = str(content.get("evalue", ""))[:self.max_output_bytes]
            content["traceback"] = [str(line)[:10_000] for line in content.get("traceback", [])[:200]]
            return super().output(outs, msg, display_id, cell_index)
        self._output_bytes += _output_size(content)
        if self._output_bytes <= self.max_output_bytes:
            return super().output(outs, msg, display_id, cell_index)
        if not self._output_capped:
            self._output_capped = True
            outs.append(new_output("stream", name="stderr", text=OUTPUT_CAPPED.format(self.max_output_bytes)))
        return None

    def _left(self) -> float:
        return self._deadline - time.monotonic()

    def _get_timeout(self, cell):  # a cell gets at most what is left of the notebook's time
        timeout = super()._get_timeout(cell)
        if getattr(self, "_deadline", None) is None:
            return timeout
        left = max(1, int(self._left()))
        return left if timeout is None else min(timeout, left)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        if self._left() <= 0:  # the notebook's time is up: nothing more runs, remaining exercises score 0
            cell.outputs = [_error("NotebookTimeout", f"grading of this notebook stopped after "
                                   f"{self.notebook_timeout} s in all; this cell was not run")]
            return cell, resources
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
            stuck = any(o.output_type == "error" and o.get("ename") == self.error_on_timeout["ename"]
                        for o in cell.outputs) and not self._responsive()
            if stuck:
                cell.outputs.append(_error("KernelUnresponsive", "the cell could not be interrupted; it was "
                                           "stopped, and the cells before it were run again in a new kernel"))
        except CellTimeoutError:  # still busy after the interrupt: its output never ended
            cell.outputs.append(_error("KernelUnresponsive", "the cell ran past the time limit and could not be "
                                       "interrupted; the cells before it were run again in a new kernel"))
            stuck = True
        except DeadKernelError:
            cell.outputs.append(_error("KernelDied", "the kernel ended while running this cell; the cells before "
                                       "it were run again in a new kernel"))
            stuck = True
        test_cell = utils.is_grade(cell) and not utils.is_solution(cell)
        if stuck:
            self._replace_kernel()
        elif not test_cell:  # test cells only check: a new kernel does not need them
            self._completed.append(index)
        if test_cell:
            cell.outputs = [o for o in cell.outputs if o.output_type != "execute_result"]
            if self.trusted_verdict and not stuck:
                self._judge(cell)
        return cell, resources

    # ---- the verdict, computed here

    def _judge(self, cell) -> None:
        """Replace a test cell's outputs with the verdict of its check, run here. A test cell without the course's
        hidden check line (an instructor's own test) keeps what the kernel showed."""
        found = HIDDEN_CHECK.search(cell.source)
        if found is None:
            return
        check_name, name = found.groups()
        import tinylm_checks
        check = getattr(tinylm_checks, check_name, None)
        if check is None:
            return
        transport = KernelTransport(self)
        try:
            if not self._agent_ready:
                self._evaluate("None", code=AGENT_SETUP.format(probes=Path(probes.__file__).read_text(),
                                                                agent=Path(agent.__file__).read_text()))
                self._agent_ready = True
            result = remote.verdict(check, transport, name)
        except (TimeoutError, RuntimeError) as e:
            transport.timed_out |= isinstance(e, (TimeoutError, KernelDied))
            transport.died |= isinstance(e, KernelDied)
            result = (False, f"{type(e).__name__}: {e}")
        if transport.died:
            result = (False, f"DeadKernelError: your notebook's kernel died while {check_name} ran your code")
            self._replace_kernel()
        elif transport.timed_out:
            result = (False, f"CellTimeoutError: your code did not finish within {self.timeout} s while "
                             f"{check_name} ran it")
            self._replace_kernel()
        passed, text = result
        if passed:
            cell.outputs = [new_output("stream", name="stdout", text=text + GRADED_OUTSIDE + "\n")]
        else:
            ename, _, evalue = text.partition(": ")
            cell.outputs = [new_output("error", ename=ename, evalue=evalue,
                                       traceback=[*text.splitlines(), GRADED_OUTSIDE])]

    def _evaluate(self, expression: str, code: str = "") -> str:
        """Run ``code`` silently in the kernel, then evaluate ``expression``; its text/plain repr.
        Raises TimeoutError after ``timeout`` seconds, MessageTooLarge (a RuntimeError) when the reply is over
        ``max_reply_bytes``, RuntimeError when the kernel reports an error."""
        msg_id = self.kc.execute(code, silent=True, store_history=False, user_expressions={"r": expression})
        content = run_sync(self._reply)(msg_id, max(1.0, min(self.timeout, self._left())))
        if content.get("ename") == "MessageTooLarge":  # the reply was too large to read (kernel.py)
            raise MessageTooLarge(content.get("evalue"))
        if content.get("status") != "ok":
            raise RuntimeError(f"{content.get('ename')}: {content.get('evalue')}")
        value = content.get("user_expressions", {}).get("r", {})
        if value.get("status") != "ok":
            raise RuntimeError(f"{value.get('ename')}: {value.get('evalue')}")
        return value["data"]["text/plain"]

    def _responsive(self) -> bool:
        """Does the kernel answer a kernel_info request within ``responsive_timeout`` seconds?"""
        try:
            run_sync(self._reply)(self.kc.kernel_info(), self.responsive_timeout)
            return True
        except Exception:  # noqa: BLE001 - no answer, a dead channel: not responsive
            return False

    async def _reply(self, msg_id: str, timeout: float) -> dict:
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

    def _replace_kernel(self) -> None:
        """End this kernel, start a new one and run again the cells that completed before."""
        run_sync(self._async_cleanup_kernel)()
        self._agent_ready = False
        self.km = self.create_kernel_manager()
        path = (self.resources or {}).get("metadata", {}).get("path") or None
        run_sync(self.async_start_new_kernel)(cwd=path)
        run_sync(self.async_start_new_kernel_client)()
        for i in self._completed:
            if self._left() <= 0:
                break
            replay = copy.deepcopy(self.nb.cells[i])
            try:
                self.execute_cell(replay, i, store_history=False)
            except DeadKernelError:
                break
