"""nbgrader preprocessors that keep one learner's notebook from stopping or fooling the class's grading.

Wired in ``nbgrader_config.py`` in place of nbgrader's own ``DeduplicateIds`` and ``Execute``:

- :class:`FirstCopyWins` — a learner who copy-pastes an exercise cell duplicates its grade id (JupyterLab
  keeps the metadata). nbgrader's ``DeduplicateIds`` keeps the *last* copy and leaves the others with
  empty nbgrader metadata, which ``CheckCellMetadata`` then rejects as "an old version of the nbgrader
  metadata format": the whole ``autograde`` run stops. Here the first copy keeps the id, later copies
  become ordinary cells, and a note under each says so in the feedback.
- :class:`GradingExecute` — nbgrader's ``Execute`` with three changes. A kernel that dies (``os._exit``,
  a crash, killed for memory) or that an interrupt cannot stop costs only the cell it was running: the
  cell gets an error, a new kernel replays the cells that had run before it, and execution goes on. In an
  autograded test cell an error always scores 0: nbgrader reads the first ``execute_result`` of a test
  cell as partial credit even when the cell also failed, so test cells keep no ``execute_result``.
"""
from __future__ import annotations

import asyncio
import copy

from jupyter_client.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.v4 import new_markdown_cell, new_output
from nbgrader import utils
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Integer

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


def _error(ename: str, evalue: str):
    return new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


class GradingExecute(Execute):
    """nbgrader's ``Execute``, where a dead or stuck kernel costs one cell and test cells score errors 0."""

    responsive_timeout = Integer(15, help="Seconds a kernel has to answer after a timed-out cell before it is "
                                          "replaced by a new one.").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._completed = []  # indices of the cells that ran to the end: replayed in a new kernel
        return super().preprocess(nb, resources, km=km)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
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
        return cell, resources

    def _responsive(self) -> bool:
        """Does the kernel answer a kernel_info request within ``responsive_timeout`` seconds?"""
        async def ask():
            msg_id = self.kc.kernel_info()
            while True:
                msg = await self.kc.shell_channel.get_msg(timeout=self.responsive_timeout)
                if msg["parent_header"].get("msg_id") == msg_id:
                    return True
        try:
            return run_sync(lambda: asyncio.wait_for(ask(), self.responsive_timeout + 1))()
        except Exception:  # noqa: BLE001 - queue.Empty, a timeout, a dead channel: not responsive
            return False

    def _replace_kernel(self) -> None:
        """End this kernel, start a new one and run again the cells that completed before."""
        run_sync(self._async_cleanup_kernel)()
        self.km = self.create_kernel_manager()
        path = (self.resources or {}).get("metadata", {}).get("path") or None
        run_sync(self.async_start_new_kernel)(cwd=path)
        run_sync(self.async_start_new_kernel_client)()
        for i in self._completed:
            replay = copy.deepcopy(self.nb.cells[i])
            try:
                self.execute_cell(replay, i, store_history=False)
            except DeadKernelError:
                break
