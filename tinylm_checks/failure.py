"""The failure a check raises: what was tried, expected and got, the named mistake and its hint.

Its own module, apart from the checks' machinery (:mod:`tinylm_checks._core`), because a learner's environment
without answers has it too: the check service (:mod:`tinylm_grading.checkservice`) runs the check and sends the
failure's parts, and the learner's kernel raises the same :class:`CheckFailure` with them
(:mod:`tinylm_checks.client`).
"""
from __future__ import annotations

import re

from ._text import MISTAKES, say

_TOKEN = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|[^\W\d_][\w]*", re.IGNORECASE)
_VALUES = {"None": None, "True": True, "False": False}


def _tokens(text: str) -> tuple[list, set[str]]:
    """The values ``text`` shows, in order (numbers by value: ``0.544`` and ``0.5440`` are one; ``None``, ``True``,
    ``False``), and its other words."""
    values, words = [], set()
    for token in _TOKEN.findall(text):
        try:
            values.append(_VALUES[token] if token in _VALUES else float(token))
        except ValueError:
            words.add(token)
    return values, words


def reads_alike(expected: str | None, got: str | None) -> bool:
    """Do a failure's expected: and got: lines read alike, so that a learner cannot see what differs?

    They do when they show the same values (numbers by value) and the words of one are among the other's ("this
    batch's gradients, clipped (norm 0.544)" against "norm 0.5440"), or when got: is one bare name that expected:
    shows, in any case ("self.dropout = 0.0" against "Dropout": a type that reads as a wrong value). Every failure
    the checks raise says what differs instead (tests/test_checks_mutants.py asserts it of the failure of every wrong
    implementation in tests/mutants, tests/test_failure_kinds.py of the same in Chinese)."""
    if not expected or not got:
        return False
    (ev, ew), (gv, gw) = _tokens(expected), _tokens(got)
    if ev == gv and (ew <= gw or gw <= ew):
        return True
    return not gv and len(gw) == 1 and next(iter(gw)).lower() in {w.lower() for w in ew}


class CheckFailure(AssertionError):
    """A check found a problem in the learner's code.

    Subclasses ``AssertionError`` so that nbgrader scores the test cell 0. ``mistake`` is a short
    identifier of a known mistake (e.g. ``"softmax_over_queries"``) or ``None`` when the mistake is
    not one the check recognises; tests use it to assert the diagnosis. ``hint_for`` is the mistake the
    hint was written for (always ``mistake`` when one is named: see :meth:`Ctx.fail`). ``message_id`` is the
    id of the failure's entry in the message table. ``also`` holds further failures found in the same run
    that are independent of this one (:meth:`Ctx.slips`); ``mistakes`` lists every named mistake, this one's
    first. In IPython/JupyterLab only the message is shown, not a traceback through the checker
    (``_render_traceback_``).
    """

    def __init__(self, check: str, problem: str, *, tried: str | None = None,
                 expected: str | None = None, got: str | None = None,
                 mistake: str | None = None, hint: str | None = None, hint_for: str | None = None,
                 message_id: str | None = None, also: list["CheckFailure"] | tuple = (), text: str | None = None):
        self.check, self.problem, self.mistake, self.hint_for = check, problem, mistake, hint_for
        self.tried, self.expected, self.got, self.hint = tried, expected, got, hint
        self.message_id, self.also = message_id, list(also)
        super().__init__(self._text() if text is None else text)  # text: as the check service wrote it

    @property
    def mistakes(self) -> list[str]:
        return [m for m in [self.mistake, *(a.mistake for a in self.also)] if m is not None]

    def _lines(self, indent: str, tried_shown: str | None = None) -> list[str]:
        lines = []
        for label, value in (("tried", self.tried), ("expected", self.expected), ("got", self.got)):
            if value and not (label == "tried" and value == tried_shown):
                lines.append(f"{indent}{say('core.label.' + label) + ':':<9} {value}")
        if self.mistake:
            lines.append(f"{indent}{say('core.label.mistake')}: {MISTAKES.get(self.mistake, self.mistake)}")
        if self.hint:
            lines.append(f"{indent}{say('core.label.hint') + ':':<9} {self.hint}")
        return lines

    def _text(self) -> str:
        lines = [say("core.headline", check=self.check, problem=self.problem), *self._lines("  ")]
        for other in self.also:  # a tried: line the first failure showed already is not repeated
            lines += [f"  {say('core.label.also')}: {other.problem}", *other._lines("    ", self.tried)]
        return "\n".join(lines)

    FIELDS = ("check", "problem", "tried", "expected", "got", "mistake", "hint", "hint_for", "message_id")

    def to_data(self) -> dict:
        """The failure as JSON-able data (its parts, its further failures, the text it shows)."""
        return {**{f: getattr(self, f) for f in self.FIELDS}, "also": [a.to_data() for a in self.also],
                "text": str(self)}

    @classmethod
    def from_data(cls, data: dict, depth: int = 0) -> "CheckFailure":
        """The failure :meth:`to_data` described, showing the same text.

        Raises:
            ValueError: ``data`` is not such a description (a part that is not a string or None, say).
        """
        if not isinstance(data, dict) or depth > 5 or not isinstance(data.get("also", []), list):
            raise ValueError("not a check failure's description")
        parts = {f: data.get(f) for f in cls.FIELDS}
        if not isinstance(parts["check"], str) or not isinstance(parts["problem"], str) or \
                not all(v is None or isinstance(v, str) for v in parts.values()) or \
                not isinstance(data.get("text"), str):
            raise ValueError("not a check failure's description")
        also = [cls.from_data(a, depth + 1) for a in data.get("also", [])]
        return cls(parts.pop("check"), parts.pop("problem"), **parts, also=also, text=data["text"])

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        red, reset = "\x1b[31m", "\x1b[0m"
        head, *rest = str(self).split("\n")
        return [f"{red}CheckFailure{reset}: {head}", *rest]
