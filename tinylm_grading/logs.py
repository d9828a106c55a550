"""Learner-chosen text in what the grader prints: shown, never obeyed by the instructor's terminal.

A file's name, a folder's name in the exchange, a line a sandbox wrote: when the grader logs them they reach the
instructor's terminal, where an escape sequence can erase a line and print a forged one, or (OSC 52) put text on the
clipboard for the next paste (a red-teamer did both through a sandbox's ``stderr`` and a submitted file's name).
:func:`printable` writes every control and format character as an escape.
"""
from __future__ import annotations

import unicodedata


def printable(text: object, limit: int = 300) -> str:
    """``str(text)``, at most ``limit`` characters, with each control (C0, C1, DEL) or format character (bidirectional
    overrides, zero-width ones) written as ``\\xNN`` or ``\\uNNNN``."""
    out = []
    for ch in str(text)[:limit]:
        if unicodedata.category(ch) in ("Cc", "Cf") or ch in "\u2028\u2029":
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)
