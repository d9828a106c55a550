"""Checks for the TinyLM course: one ``check_<exercise>`` per exercise.

Each check takes the learner's function or class, runs it on its own seeded inputs, compares it with
the reference implementation (``tinylm_solutions``) and either prints one line naming what it verified
or raises :class:`CheckFailure` saying what was tried, what was expected, what came back and, for a
known mistake, which one it is and what to look at.

One module per stage (``setup`` 00, ``attention`` 01, ``multihead`` 02, ``masks`` 01/03, ``position`` 04,
``ffn`` 05, ``norm`` 06, ``block`` 07, ``model`` 08, ``training`` and ``checklist`` 09, ``generation`` 10, ``debugging`` 11,
``report`` 12, ``capstone`` 13), ``probes`` (objects some checks hand to learner code) and the subpackage ``lab``, the learner's
tools that judge nothing (figures, widgets, records of runs); each lists its public names in ``__all__``, and
they are all importable from here.
"""
import json as _json
from pathlib import Path as _Path

from . import environment, lab
from ._text import MISTAKE_HINTS, MISTAKES
from .failure import CheckFailure, show_fix
from .lab.fonts import use_language_font as _use_language_font
from tinylm_solutions import i18n as _i18n

_LEARNER = _Path(__file__).with_name("learner.json")
"""Written by ``make learner-env`` (:mod:`tinylm_grading.learnerenv`) into a learner's environment, which holds no
check code and no answers: there each check is a request to the check service (:mod:`tinylm_checks.client`)."""

if _LEARNER.exists():
    from .client import remote_check as _remote_check

    _CHECKS = tuple(_json.loads(_LEARNER.read_text(encoding="utf-8"))["checks"])
    globals().update({_name: _remote_check(_name) for _name in _CHECKS})
    _STAGES = (environment, lab)
else:
    from . import (attention, block, capstone, checklist, debugging, ffn, generation, masks, model, multihead, norm,
                   position, report, setup, training)
    from ._core import ATOL

    _CHECKS = ()
    _STAGES = (environment, setup, attention, multihead, masks, position, ffn, norm, block, model, training, checklist,
               generation, debugging, report, capstone, lab)
for _module in _STAGES:
    globals().update({name: getattr(_module, name) for name in _module.__all__})


def set_language(lang: str | None) -> str:
    """Show every check message, hint and figure label in ``lang`` (``"en"`` or ``"zh"``) from now on, in this
    kernel; ``None`` goes back to ``TINYLM_LANG`` (else the locale). Returns the language now in use. Chinese figure
    labels need a CJK font: the course's (``mplfonts``) is made matplotlib's fallback font.

    Raises:
        ValueError: ``lang`` is neither ``"en"``, ``"zh"`` nor None.
    """
    chosen = _i18n.set_language(lang)
    _use_language_font(chosen)
    return chosen


_use_language_font(_i18n.language())

__all__ = [*(["ATOL"] if not _CHECKS else []), "MISTAKES", "MISTAKE_HINTS", "CheckFailure", "show_fix", "set_language", *_CHECKS,
           *(name for _module in _STAGES for name in _module.__all__)]
