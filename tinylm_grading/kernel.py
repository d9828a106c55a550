"""A kernel manager for executing the course's notebooks without stalls (nbgrader autograde, benchmarks).

nbclient waits for a cell's ``execute_reply`` with one long ``await socket.poll(timeout)`` on the shell
channel while another task reads IOPub. After a cell that displays ipywidgets (the explorer of stage
04), that wait sometimes misses the reply's arrival and only sees it when the whole cell timeout has
passed: measured here, 4 runs in 10 of a notebook with the explorer stalled for the full timeout, with the
kernel idle all along. The reply is there; the wake-up is lost. (jupyter/nbclient#312 reports the same
hang with widgets.) Polling in short slices sees it within a tenth of a second.

nbgrader uses it through ``c.Execute.kernel_manager_class`` in ``nbgrader_config.py``; nbclient users
pass ``kernel_manager_class=SlicedPollKernelManager``.

Its channels can also refuse oversized messages (``max_message_bytes``, set by the grader): a message from a
learner's kernel whose frames exceed it is never decoded. Its content is replaced by a short note (an error
for a ``*_reply``, a ``stderr`` stream for anything else), so memory holds the raw frames once instead of
the several decoded copies a 300 MB reply would cost.
"""
from __future__ import annotations

from hmac import compare_digest
from queue import Empty
from time import monotonic

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.session import extract_dates
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Type

SLICE = 0.1  # seconds: the longest a message can wait unseen
HEADERS_MOST = 1 << 20  # bytes: header, parent header and metadata together; more is not a kernel's message


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

    max_message_bytes: int | None = None  # None: no limit

    async def _recv(self, **kwargs) -> dict:  # type: ignore[override]
        """The next message; one larger than ``max_message_bytes`` comes with its content replaced by a note
        (``status: error``, ``ename: MessageTooLarge`` for a reply; a ``stderr`` stream otherwise). One with
        more than 1 MiB of headers comes as a message that answers no request (its headers are not read)."""
        frames = await self.socket.recv_multipart(copy=False)  # zmq frames: a large one is not copied
        _, msg_list = self.session.feed_identities(frames, copy=False)
        size = sum(len(f.buffer) for f in msg_list)
        if self.max_message_bytes is None or size <= self.max_message_bytes:
            return self.session.deserialize(msg_list, copy=False)
        if len(msg_list) < 5 or sum(len(f.buffer) for f in msg_list[1:4]) > HEADERS_MOST:
            header = {"msg_id": "", "msg_type": "unreadable"}
            return {"header": header, "msg_id": "", "msg_type": "unreadable", "parent_header": {},
                    "metadata": {}, "content": {}, "buffers": []}
        return self._oversized(msg_list, size)

    def _oversized(self, msg_list: list, size: int) -> dict:
        """The message with its content (not decoded) replaced by a note saying it was too large."""
        if self.session.auth is not None:  # the signature is checked as for any message
            check = self.session.sign([f.buffer for f in msg_list[1:5]])
            if not compare_digest(msg_list[0].bytes, check):
                raise ValueError(f"Invalid Signature: {msg_list[0].bytes!r}")
        header = extract_dates(self.session.unpack(msg_list[1].bytes))
        msg = {"header": header, "msg_id": header.get("msg_id"), "msg_type": header.get("msg_type", ""),
               "parent_header": extract_dates(self.session.unpack(msg_list[2].bytes)), "metadata": {}, "buffers": []}
        note = (f"a message of {size} bytes from the kernel ({msg['msg_type']}) was not read: the grader "
                f"accepts at most {self.max_message_bytes} bytes")
        if msg["msg_type"].endswith("_reply"):
            msg["content"] = {"status": "error", "ename": "MessageTooLarge", "evalue": note, "traceback": [note],
                              "execution_count": None, "user_expressions": {}, "payload": []}
        else:
            msg["msg_type"] = msg["header"]["msg_type"] = "stream"
            msg["content"] = {"name": "stderr", "text": f"[{note}]\n"}
        return msg


class SlicedPollKernelClient(AsyncKernelClient):
    """An async kernel client whose shell and IOPub channels poll in slices."""

    shell_channel_class = Type(SlicedPollChannel)
    iopub_channel_class = Type(SlicedPollChannel)


class SlicedPollKernelManager(AsyncKernelManager):
    """The default async kernel manager, handing out :class:`SlicedPollKernelClient` clients."""

    client_class = DottedObjectName("tinylm_grading.kernel.SlicedPollKernelClient")
    client_factory = Type(SlicedPollKernelClient)  # AsyncKernelManager sets both: override both
