"""Learner-chosen text in what the grader prints: shown, never obeyed by the instructor's terminal.

A file's name, a folder's name in the exchange, a line a sandbox wrote: when the grader logs them they reach the
instructor's terminal, where an escape sequence can erase a line and print a forged one, or (OSC 52) put text on the
clipboard for the next paste (a red-teamer did both through a sandbox's ``stderr`` and a submitted file's name).
:func:`printable` writes every control and format character as an escape.
"""
from __future__ import annotations

import logging
import os
import unicodedata

from tornado.log import LogFormatter


def printable(text: object, limit: int = 300, keep: str = "") -> str:
    """``str(text)``, at most ``limit`` characters, with each control (C0, C1, DEL) or format character (bidirectional
    overrides, zero-width ones) but those in ``keep`` written as ``\\xNN`` or ``\\uNNNN``."""
    out = []
    for ch in str(text)[:limit]:
        if ch not in keep and (unicodedata.category(ch) in ("Cc", "Cf") or ch in "\u2028\u2029"):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


class PrintableFormatter(LogFormatter):
    """nbgrader's log format (tornado's, with colours), every learner-chosen text in it shown by :func:`printable`:
    the arguments of a record whole (a name cannot start a forged line), the rest but its newlines (a message
    formatted before it was logged, a traceback). ``nbgrader_config.py`` makes it the console's formatter."""

    def format(self, record: logging.LogRecord) -> str:
        record = logging.makeLogRecord(record.__dict__)
        if record.args:
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            record.args = tuple(printable(a, 2000) if isinstance(a, (str, bytes, os.PathLike, BaseException)) else a
                                for a in args)
        record.msg, record.args = printable(record.getMessage(), 20000, keep="\n"), None
        return super().format(record)

    def formatException(self, ei) -> str:
        return printable(super().formatException(ei), 20000, keep="\n")
