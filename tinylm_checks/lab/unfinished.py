"""A demo cell that runs an exercise not done yet says so in two lines instead of a long traceback.

Learner stubs raise ``NotImplementedError()``. A demo cell below an unfinished exercise (a training run, a plot)
would show the traceback through every library frame in between, up to 94 lines (issue 17). In an IPython kernel,
:func:`install` (run when ``tinylm_checks`` is imported) handles ``NotImplementedError`` raised by code written in
the notebook: it names the function or class and says what to do. Any other ``NotImplementedError`` (raised by a
library) gets IPython's usual traceback.
"""
from __future__ import annotations

import sys

from .._text import say

__all__: list[str] = []

def _notebook_frame(tb):
    """The innermost traceback frame whose code was written in the notebook (a cell), or None."""
    found = None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith("<ipython-input-") or "/ipykernel_" in filename:
            found = tb.tb_frame
        tb = tb.tb_next
    return found


def _name(frame) -> str:
    code, owner = frame.f_code.co_name, frame.f_locals.get("self")
    if owner is not None:
        cls = type(owner).__name__
        return cls if code == "__init__" else f"{cls}.{code}"
    return code


def _handler(shell, etype, value, tb, tb_offset=None):
    frame = _notebook_frame(tb)
    if str(value).strip() or frame is None or frame.f_code.co_name == "<module>":
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)  # a library's, or a message of its own
        return None
    print(say("lab.not_done", name=_name(frame)), file=sys.stderr)
    return None


def install() -> None:
    """Handle the stubs' ``NotImplementedError`` in the running IPython kernel (nothing outside one)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None:
        shell.set_custom_exc((NotImplementedError,), _handler)
