"""nbgrader preprocessors that keep one learner's notebook from stopping or fooling the class's grading.

Wired in ``nbgrader_config.py`` in place of nbgrader's own ``DeduplicateIds`` and ``Execute``:

- :class:`FirstCopyWins` — a learner who copy-pastes an exercise cell duplicates its grade id (JupyterLab
  keeps the metadata). nbgrader's ``DeduplicateIds`` keeps the *last* copy and leaves the others with
  empty nbgrader metadata, which ``CheckCellMetadata`` then rejects as "an old version of the nbgrader
  metadata format": the whole ``autograde`` run stops. Here the first copy keeps the id, later copies
  become ordinary cells, and a note under each says so in the feedback.
- :class:`RestoreCellMetadata` — a cell whose nbgrader metadata a learner edited is graded with the course's.
- :class:`GradingExecute` — nbgrader's ``Execute`` with four changes, each a part of its own
  (:mod:`tinylm_grading.execution`, :mod:`tinylm_grading.verdicts`). Each test cell's verdict is computed in this
  (the grader's) process (:class:`~tinylm_grading.verdicts.Verdicts`), on the learner's objects reached through an
  agent in the kernel, and replaces what the cell showed in the kernel. A kernel that dies (``os._exit``, a crash,
  killed for memory) or that an interrupt cannot stop costs only the cell it was running: the cell gets an error,
  a new kernel replays the cells that had run before it (:class:`~tinylm_grading.execution.Replay`), and execution
  goes on. Output is capped as it arrives (:class:`~tinylm_grading.execution.OutputCap`) and the notebook has a
  time budget (:class:`~tinylm_grading.execution.Deadline`). In an autograded test cell an error always scores 0
  (:func:`~tinylm_grading.execution.scrub_partial_credit`). Each verdict is also kept as data in its test cell's
  metadata (:data:`~tinylm_grading.verdicts.RECORD`: passed, the check's message id, the named mistakes), which
  :mod:`tinylm_grading.classreport` reads for the class's report.
- :class:`ClearSolutions` — nbgrader's, whose answer stubs are in the notebook's language (its metadata
  ``tinylm.lang``): a Chinese release says ``# 在这里写你的代码`` and ``在这里写下你的回答``.
- :class:`InertOutputs` — after execution, every output keeps only what rendering it needs
  (:func:`tinylm_grading.html.inert_cell`): the feedback and the formgrader render the autograded notebook, and
  nbconvert writes output metadata into tags (an image's ``width`` carried an ``onerror``).
"""
from __future__ import annotations

import re

from jupyter_client.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.v4 import new_markdown_cell
from nbgrader import utils
from nbgrader.preprocessors import ClearSolutions as NbgraderClearSolutions
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Bool, Integer

from tinylm_checks._text import say
from tinylm_solutions import i18n

from .execution import Deadline, KernelLink, OutputCap, Replay, error_output, scrub_partial_credit
from .html import inert_cell
from .registry import hidden_calls, notebook_seconds
from .verdicts import RECORD, Verdicts

def note(nb, key: str, **values) -> str:
    """A grader's note, in the notebook's language (its metadata ``tinylm.lang``; English when it has none)."""
    with i18n.using(i18n.notebook_language(nb)):
        return say(key, **values)


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
            cells.append(new_markdown_cell(note(nb, "grading.duplicate_note", grade_id=grade_id)))
        nb.cells = cells
        return nb, resources


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
                    cells.append(new_markdown_cell(note(nb, "grading.stripped_note", grade_id=grade_id)))
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
                cells.append(new_markdown_cell(note(nb, "grading.restored_note", grade_id=grade_id,
                                                     changes=", ".join(changes))))
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


class GradingExecute(Execute):
    """nbgrader's ``Execute``, where a dead or stuck kernel costs one cell, test cells score errors 0, and
    each check's verdict is computed here, outside the learner's kernel (:mod:`tinylm_grading.verdicts`)."""

    trusted_verdict = Bool(True, help="Compute each test cell's verdict in the grader's process, on the "
                                      "learner's objects reached through the kernel's agent.").tag(config=True)

    notebook_timeout = Integer(300, help="Seconds one notebook may take in all (its cells, replays after a new "
                                         "kernel, and its verdicts, the commands of the capstone's checks "
                                         "included); the capstone's, three times this (its checks run the "
                                         "learner's commands: tinylm_grading.registry.STAGES). Past it, the "
                                         "remaining cells are not run and its remaining exercises score 0: a "
                                         "notebook of many slow cells cannot stall the class's grading."
                                 ).tag(config=True)

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
        # one notebook's parts: nothing of them outlives it
        self._replay, self._verdicts = Replay(), Verdicts()
        stage = ((resources or {}).get("nbgrader") or {}).get("assignment")
        self._cap = OutputCap(self.max_output_bytes)
        self._deadline = Deadline(notebook_seconds(stage, self.notebook_timeout))
        for cell in nb.cells:  # a verdict record is the grader's to write (below): none comes from the submission
            cell.metadata.pop(RECORD, None)
        with i18n.using(i18n.notebook_language(nb)):  # the verdicts' messages in the notebook's language
            return super().preprocess(nb, resources, km=km)

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        # the course's SlicedPollChannel enforces these (tinylm_grading/kernel.py)
        kc.shell_channel.max_message_bytes = self.max_reply_bytes
        kc.iopub_channel.max_message_bytes = 4 * self.max_output_bytes
        return kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)  # nbclient binds it to its own

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's ``output``, for what the cap admits."""
        return super().output(outs, msg, display_id, cell_index) if self._cap.admit(msg, outs) else None

    def _get_timeout(self, cell):  # a cell gets at most what is left of the notebook's time
        timeout = super()._get_timeout(cell)
        return timeout if getattr(self, "_deadline", None) is None else self._deadline.cell_timeout(timeout)

    def _link(self) -> KernelLink:
        return KernelLink(self.kc, self.km)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        if self._deadline.left() <= 0:  # the notebook's time is up: nothing more runs, remaining exercises score 0
            cell.outputs = [error_output("NotebookTimeout", say("grading.notebook_timeout",
                                                                  seconds=round(self._deadline.seconds)))]
            return cell, resources
        if self.trusted_verdict and utils.is_grade(cell) and not utils.is_solution(cell) and hidden_calls(cell.source):
            return self._judged_outside(cell), resources
        limit = self._get_timeout(cell)  # the cell's time limit, named if the cell runs past it
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
            stuck = any(o.output_type == "error" and o.get("ename") == self.error_on_timeout["ename"]
                        for o in cell.outputs) and not self._link().responsive(self.responsive_timeout)
            if stuck:
                cell.outputs.append(error_output("KernelUnresponsive", say("grading.not_interrupted")))
        except CellTimeoutError:  # still busy after the interrupt: its output never ended
            cell.outputs.append(error_output("KernelUnresponsive", say("grading.past_time_limit", seconds=limit)))
            stuck = True
        except DeadKernelError:
            cell.outputs.append(error_output("KernelDied", say("grading.kernel_died")))
            stuck = True
        test_cell = utils.is_grade(cell) and not utils.is_solution(cell)
        if stuck:
            self._replace_kernel()
        elif not test_cell:  # test cells only check: a new kernel does not need them
            self._replay.record(index)
        if test_cell:  # an instructor's own test (no hidden check): it keeps what the kernel showed
            scrub_partial_credit(cell)
        return cell, resources

    def _judged_outside(self, cell):
        """A test cell with a hidden check, judged here without running it in the kernel: whatever the kernel
        showed for it would be replaced by the verdict, so running it there would only cost time (the visible and
        the hidden check, twice the grader's work) and give learner code one more cell to act in."""
        verdict = self._verdicts.judge(cell.source, self._link(), self._request_timeout, self.timeout,
                                       self._deadline.left)
        cell.outputs, cell.execution_count = verdict.outputs, None
        cell.metadata[RECORD] = verdict.record
        if verdict.replace_kernel:
            self._replace_kernel()
        return cell

    def _request_timeout(self) -> float:
        """The seconds one request to the kernel's agent may wait: the cell timeout, within the notebook's time."""
        return max(1.0, min(self.timeout, self._deadline.left()))

    def _replace_kernel(self) -> None:
        """End this kernel, start a new one and run again the cells that completed before."""
        run_sync(self._async_cleanup_kernel)()
        self._verdicts.reset()
        self.km = self.create_kernel_manager()
        path = (self.resources or {}).get("metadata", {}).get("path") or None
        run_sync(self.async_start_new_kernel)(cwd=path)
        run_sync(self.async_start_new_kernel_client)()
        self._replay.run(self.nb.cells, lambda cell, i: self.execute_cell(cell, i, store_history=False),
                         self._deadline, DeadKernelError)


WRITES_MARKDOWN = re.compile(r"%%writefile\s+(-a\s+)?\S+\.md")
"""The first line of a code cell that writes a Markdown file."""


def stubs(lang: str) -> tuple[str, str]:
    """nbgrader's answer stubs in ``lang``: a code cell's (a comment, then ``raise NotImplementedError()``) and a
    written answer's. The English ones are nbgrader's own defaults, which the course's checks and tests know."""
    from tinylm_checks import _text

    code, text = (i18n.translate(_text.FOLDER, key, _text.TEXT[key], lang) for key in ("core.stub.code", "core.stub.text"))
    return f"# {code}\nraise NotImplementedError()", text


class ClearSolutions(NbgraderClearSolutions):
    """nbgrader's ``ClearSolutions``, with the stubs of the notebook's language (:func:`stubs`) in a notebook that
    is not English (its metadata ``tinylm.lang``); an English notebook keeps the configured ones.

    A code cell that writes a Markdown file (``%%writefile report.md``: the capstone's report) gets the written
    answer's stub, not the code stub: the file is text, and ``# YOUR CODE HERE`` / ``raise NotImplementedError()``
    would be a heading and a line of Python in it."""

    def preprocess(self, nb, resources):
        lang = i18n.notebook_language(nb)
        if lang not in (None, "en"):
            code, self.text_stub = stubs(lang)
            self.code_stub = {"python": code}
        return super().preprocess(nb, resources)

    def _replace_solution_region(self, cell, language):
        first = cell.source.lstrip().partition("\n")[0].strip()
        if cell.cell_type != "code" or not WRITES_MARKDOWN.fullmatch(first):
            return super()._replace_solution_region(cell, language)
        code_stub = self.code_stub
        self.code_stub = {**code_stub, language: self.text_stub}
        try:
            return super()._replace_solution_region(cell, language)
        finally:
            self.code_stub = code_stub


class InertOutputs(NbGraderPreprocessor):
    """Reduce every cell's outputs, execution count and attachments to what rendering them needs: numeric
    width/height per well-formed mimetype, nothing else (:func:`tinylm_grading.html.inert_cell`). Runs after
    ``GradingExecute``, so that the autograded notebook, which ``generate_feedback`` and the formgrader render,
    holds nothing a template would write into a tag."""

    def preprocess_cell(self, cell, resources, index):
        inert_cell(cell)
        return cell, resources
