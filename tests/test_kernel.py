"""tinylm_grading.kernel: notebooks with widgets execute without stalls under nbclient (and so nbgrader).

Without the sliced polling, one run in three to ten of the cells below waited for the whole cell timeout
after the kernel had finished (see the module's docstring). A stall does not raise: the reply is picked up
when the timeout ends. So each run gets a 90-second timeout and must finish in well under it (a run takes
about 5 s); five runs catch a regression most of the time, and never fail a working client.
"""
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from traitlets.config.loader import PyFileConfigLoader
from traitlets.utils.importstring import import_item

from tinylm_grading.kernel import SlicedPollKernelClient, SlicedPollKernelManager

ROOT = Path(__file__).resolve().parent.parent
CELLS = ["import torch\nfrom tinylm_solutions.position import sinusoidal_position_encoding\n"
         "from tinylm_checks import position_explorer\ntable = sinusoidal_position_encoding(64, 32)",
         "position_explorer(table)",  # stage 04's explorer: comms, an Output widget, a figure
         "1 + 1"]

pytestmark = [pytest.mark.slow, pytest.mark.notebooks]


def test_the_manager_hands_out_the_sliced_client():
    km = SlicedPollKernelManager()
    assert isinstance(km.client(), SlicedPollKernelClient)


def test_nbgrader_executes_with_it():
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    assert issubclass(import_item(config.Execute.kernel_manager_class), SlicedPollKernelManager)


@pytest.mark.parametrize("run", range(5))
def test_a_widget_cell_does_not_stall(run):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    start = time.monotonic()
    NotebookClient(nb, timeout=90, kernel_name="python3", allow_errors=True,
                   kernel_manager_class=SlicedPollKernelManager).execute()
    seconds = time.monotonic() - start
    assert nb.cells[2].outputs[0]["data"]["text/plain"] == "2"
    assert seconds < 45, f"the notebook took {seconds:.0f} s: a cell waited for its timeout (a stall)"
