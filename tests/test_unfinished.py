"""A demo cell that runs an unfinished exercise (a stub that raises NotImplementedError()) says so in one line in
the learner's kernel, instead of a traceback through every library frame (tinylm_checks.lab.unfinished)."""
import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = [pytest.mark.slow, pytest.mark.notebooks]

CELLS = ["import torch\nfrom torch import nn\nimport tinylm_checks",
         "class Block(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n        # YOUR CODE HERE\n"
         "        raise NotImplementedError()",
         "def softmax(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()",
         "blocks = nn.ModuleList([Block(3) for _ in range(2)])",  # the stub's frame under a comprehension
         "torch.stack(list(map(softmax, torch.ones(2, 3))))",  # under library code (map, a builtin)
         "raise NotImplementedError('a message of its own')",  # not a stub: the usual traceback
         "print('after')"]


def test_a_stub_reached_from_a_demo_cell_is_named_in_one_line():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True).execute()
    block, soft, own = nb.cells[3].outputs, nb.cells[4].outputs, nb.cells[5].outputs
    for outputs, name in ((block, "Block"), (soft, "softmax")):
        assert [o.output_type for o in outputs] == ["stream"], outputs
        assert outputs[0].text.startswith(f"NotImplementedError: {name} is an exercise not done yet"), outputs
        assert outputs[0].text.count("\n") == 1  # one line, no traceback
    assert own[0].output_type == "error" and own[0].evalue == "a message of its own"
    assert nb.cells[6].outputs[0].text == "after\n"
