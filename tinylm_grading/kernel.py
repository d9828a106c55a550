"""A kernel manager for executing the course's notebooks without stalls (nbgrader autograde, benchmarks).

nbclient waits for a cell's ``execute_reply`` with one long ``await socket.poll(timeout)`` on the shell
channel while another task reads IOPub. After a cell that displays ipywidgets (the explorer of stage
04), that wait sometimes misses the reply's arrival and only sees it when the whole cell timeout has
passed: measured here, 4 runs in 10 of a notebook with the explorer stalled for the full timeout, with the
kernel idle all along. The reply is there; the wake-up is lost. (jupyter/nbclient#312 reports the same
hang with widgets.) Polling in short slices sees it within a tenth of a second.

nbgrader uses it through ``c.Execute.kernel_manager_class`` in ``nbgrader_config.py``; nbclient users
pass ``kernel_manager_class=SlicedPollKernelManager``.
"""
from __future__ import annotations

from queue import Empty
from time import monotonic

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Type

SLICE = 0.1  # seconds: the longest a message can wait unseen


class SlicedPollChannel(AsyncZMQSocketChannel):
    """A channel whose ``get_msg(timeout)`` polls in slices of at most ``SLICE`` seconds."""

    async def get_msg(self, timeout: float | None = None) -> dict:  # type: ignore[override]
        """Return the next message, or raise ``queue.Empty`` after ``timeout`` seconds (None: wait forever)."""
        deadline = None if timeout is None else monotonic() + timeout
        while True:
            left = SLICE if deadline is None else max(0.0, min(SLICE, deadline - monotonic()))
            if await self.socket.poll(int(left * 1000)):
                return await self._recv()
            if deadline is not None and monotonic() >= deadline:
                raise Empty


class SlicedPollKernelClient(AsyncKernelClient):
    """An async kernel client whose shell and IOPub channels poll in slices."""

    shell_channel_class = Type(SlicedPollChannel)
    iopub_channel_class = Type(SlicedPollChannel)


class SlicedPollKernelManager(AsyncKernelManager):
    """The default async kernel manager, handing out :class:`SlicedPollKernelClient` clients."""

    client_class = DottedObjectName("tinylm_grading.kernel.SlicedPollKernelClient")
    client_factory = Type(SlicedPollKernelClient)  # AsyncKernelManager sets both: override both
