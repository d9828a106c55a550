"""The failure a check raises: what was tried, expected and got, the named mistake and its hint.

Its own module, apart from the checks' machinery (:mod:`tinylm_checks._core`), because a learner's environment
without answers has it too: the check service (:mod:`tinylm_grading.checkservice`) runs the check and sends the
failure's parts, and the learner's kernel raises the same :class:`CheckFailure` with them
(:mod:`tinylm_checks.client`).
"""
from __future__ import annotations

import math
import re

from tinylm_solutions import i18n

from ._text import MISTAKES, say

_SHOWN: set[str] = set()
"""The mistakes whose failure this process has shown (:meth:`CheckFailure.shown`): the same mistake again comes
with its fix."""
_LAST: list["CheckFailure"] = []
"""The failure this process showed last, for :func:`show_fix`."""
MATRIX_CELLS = 16
"""A failure's matrices (:attr:`CheckFailure.matrices`) are at most this many rows and columns."""

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


def label_text(label: str, width: int = 0) -> str:
    """A message line's label with its colon, in the learner's language ("tried: ", "尝试："), padded to ``width``
    columns (a Chinese character takes two) so that the values of the short labels line up."""
    if i18n.language() == "zh":
        return i18n.pad(say("core.label." + label) + "：", width + 1)
    return f"{say('core.label.' + label) + ':':<{width}} "


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
                 message_id: str | None = None, also: list["CheckFailure"] | tuple = (), text: str | None = None,
                 look: str | None = None, matrices: dict | None = None, sentence: str | None = None):
        self.check, self.problem, self.mistake, self.hint_for = check, problem, mistake, hint_for
        self.tried, self.expected, self.got, self.hint = tried, expected, got, hint
        self.message_id, self.also, self.look, self.matrices = message_id, list(also), look, matrices
        # the named mistake in words: looked up here, and carried by to_data (a learner's environment has no table)
        self.sentence = sentence or (MISTAKES.get(mistake, mistake) if mistake else None)
        self._plain = text  # a message that is not a check's failure (the check service's refusal, say)
        super().__init__(self._text() if text is None else text)

    @property
    def mistakes(self) -> list[str]:
        return [m for m in [self.mistake, *(a.mistake for a in self.also)] if m is not None]

    @property
    def fix(self) -> str | None:
        """The line that fixes the named mistake (its hint), or None when no mistake is named: a failure that names
        none has a hint that says where to look, and shows it at once."""
        return self.hint if self.mistake else None

    def _lines(self, indent: str, tried_shown: str | None = None, reveal: bool = False) -> list[str]:
        lines = []
        for label, value in (("tried", self.tried), ("expected", self.expected), ("got", self.got)):
            if value and not (label == "tried" and value == tried_shown):
                lines.append(f"{indent}{label_text(label, 9)}{value}")
        if self.mistake:
            lines.append(f"{indent}{label_text('mistake')}{self.sentence}")
            if self.look:
                lines.append(f"{indent}{label_text('look', 9)}{self.look}")
        if self.hint and (reveal or not self.mistake):
            lines.append(f"{indent}{label_text('hint', 9)}{self.hint}")
        return lines

    def _text(self, reveal: bool = False) -> str:
        if self._plain is not None:
            return self._plain
        lines = [say("core.headline", check=self.check, problem=self.problem), *self._lines("  ", reveal=reveal)]
        for other in self.also:  # a tried: line the first failure showed already is not repeated
            lines += [f"  {label_text('also')}{other.problem}", *other._lines("    ", self.tried, reveal)]
        if not reveal and any(f.fix for f in self.failures):
            lines.append("  " + say("core.fix_on_request"))
        return "\n".join(lines)

    @property
    def failures(self) -> list["CheckFailure"]:
        """This failure and the further ones found in the same run."""
        return [self, *self.also]

    def text(self, reveal: bool = False) -> str:
        """The message: with the fix of every named mistake when ``reveal``, else with where to look and how to
        ask for the fix (``str(failure)`` is this, unrevealed)."""
        return self._text(reveal)

    def shown(self) -> bool:
        """Record that this failure is being shown, and say whether its fixes come with it: they do when one of its
        mistakes was shown before in this process (the learner made it again)."""
        again = any(m in _SHOWN for m in self.mistakes)
        _SHOWN.update(self.mistakes)
        _LAST[:] = [self]
        return again

    FIELDS = ("check", "problem", "tried", "expected", "got", "mistake", "hint", "hint_for", "message_id", "look", "sentence")

    def to_data(self) -> dict:
        """The failure as JSON-able data (its parts, its matrices, its further failures, the text it shows)."""
        matrices = None if self.matrices is None else {  # JSON has no infinities: -inf (a masked score) as "-inf"
            **self.matrices, **{k: [[v if math.isfinite(v) else str(v) for v in row] for row in self.matrices[k]]
                                for k in ("expected", "got")}}
        return {**{f: getattr(self, f) for f in self.FIELDS}, "matrices": matrices,
                "also": [a.to_data() for a in self.also], "text": str(self)}

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
        return cls(parts.pop("check"), parts.pop("problem"), **parts, also=also,
                   matrices=_matrices(data.get("matrices")))

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        if getattr(self, "_rendered", None) is None:  # ipykernel asks twice for one error: show it once
            self._rendered = self._render()
        return self._rendered

    def _render(self) -> list[str]:
        red, reset = "\x1b[31m", "\x1b[0m"
        reveal = self.shown()
        from . import failure_html
        _offer_show_fix()
        if failure_html.rich_frontend():  # JupyterLab: the parts as a table, the fix in a fold; here the headline
            failure_html.display(self, reveal)
            return [f"{red}CheckFailure{reset}: {self.text(reveal).splitlines()[0]}"]
        head, *rest = self.text(reveal).split("\n")
        return [f"{red}CheckFailure{reset}: {head}", *rest]


_NOT_FINITE = ("inf", "-inf", "nan")  # how to_data writes a matrix's non-finite values


def _matrices(data) -> dict | None:
    """A failure's matrices as :meth:`CheckFailure.to_data` wrote them, or None; ValueError if malformed."""
    if data is None:
        return None
    try:
        grids = [data["expected"], data["got"]]
        at = [int(i) for i in data["at"]]
        ok = len(at) == 2 and all(
            isinstance(g, list) and 0 < len(g) <= MATRIX_CELLS and
            all(isinstance(r, list) and 0 < len(r) <= MATRIX_CELLS and len(r) == len(g[0]) and
                all((isinstance(v, (int, float)) and not isinstance(v, bool)) or v in _NOT_FINITE for v in r)
                for r in g) for g in grids)
    except (KeyError, TypeError, ValueError):
        ok = False
    if not ok or len(grids[0]) != len(grids[1]) or len(grids[0][0]) != len(grids[1][0]):
        raise ValueError("not a check failure's description")
    return {"expected": [[float(v) for v in r] for r in grids[0]],
            "got": [[float(v) for v in r] for r in grids[1]], "at": at}


def _offer_show_fix() -> None:
    """Make ``show_fix()`` callable in the learner's notebook as the message says, without an import."""
    try:
        from IPython import get_ipython
        get_ipython().user_ns.setdefault("show_fix", show_fix)
    except Exception:  # noqa: BLE001 - no IPython: the message is read in a terminal, where import works
        pass


def show_fix() -> None:
    """Print the fix of every mistake the last failure named (the check's hint), after it was kept back so that
    the learner could look first."""
    fixes = [f for f in _LAST[0].failures if f.fix] if _LAST else []
    if not fixes:
        print(say("core.no_fix"))
        return
    for f in fixes:
        print(f"{label_text('mistake')}{f.sentence}\n  {label_text('fix')}{f.fix}")
