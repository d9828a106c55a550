"""Every sentence a learner reads from the checks, looked up by a stable id in one message table.

The table is data: :mod:`tinylm_checks.messages` holds it, one module per stage's checks, each with two
dicts:

- ``MISTAKES``: mistake id -> ``(sentence, hint)``, the mistakes a check can name ("likely mistake:"); the hint is
  the fix, which a failure keeps back until the learner asks for it (:class:`~tinylm_checks.failure.CheckFailure`);
- ``PLACES``: mistake id -> where to look in the learner's code for it ("look at:"), shown with the mistake at once;
- ``MESSAGES``: message id -> a text (a fragment: what was tried, a summary, an axis name), or a dict of the
  parts of one failure: ``problem`` (the headline), ``expected``, ``got``, ``hint`` (for a failure no
  mistake is named for) and ``mistake_hint`` (the hint when the failure names a mistake), or of an
  exercise's own wording of some mistakes' hints (mistake id -> hint).

Texts are ``str.format`` templates with named fields (``"{cls} has no attribute {attr}"``); literal
braces are doubled. A mistake's sentence and hint are plain text (they have no fields). Flattened, every text has one key: ``"<id>"`` for a fragment, ``"<id>.<part>"`` for a
part, ``"mistakes.<id>"``, ``"mistakes.<id>.hint"`` and ``"mistakes.<id>.look"`` for a mistake. That key is the text's gettext
``msgctxt`` and the English text its ``msgid``, so a catalog of another language maps onto this table
without touching any check.

Check code never writes a sentence itself: it calls :func:`say` for a fragment and ``Ctx.fail(id, ...)``
for a failure (:mod:`tinylm_checks._core`), and names mistakes as :data:`MISTAKE` attributes (``MISTAKE.no_scaling``).
"""
from __future__ import annotations

import importlib
import pkgutil
import string
from collections.abc import Mapping
from pathlib import Path

from tinylm_solutions import i18n

FOLDER = Path(__file__).resolve().parent
"""The package's folder: its catalogs are in locale/<locale>/LC_MESSAGES/<messages module>.po."""

PARTS = ("problem", "expected", "got", "hint", "mistake_hint")
"""The parts a failure's entry may have."""


class MessageError(LookupError):
    """The checks' own bug: an unknown message id, or a template whose fields the caller did not give. Never a
    learner's mistake, so a check lets it through instead of reporting it as one."""


def _load() -> tuple[dict[str, str], dict[str, str], list[str]]:
    """The English table, flattened: key -> text; the module that defines each key; keys defined twice."""
    from . import messages

    flat, origin, clashes = {}, {}, []

    def put(key: str, text: str, module: str):
        if not isinstance(text, str) or not text.strip():
            raise MessageError(f"{module}: {key} is not a text")
        if key in flat:
            clashes.append(key)
            return
        flat[key], origin[key] = text, module

    for info in sorted(pkgutil.iter_modules(messages.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{messages.__name__}.{info.name}")
        for name, (sentence, hint) in getattr(module, "MISTAKES", {}).items():
            put(f"mistakes.{name}", sentence, info.name)
            put(f"mistakes.{name}.hint", hint, info.name)
        for name, look in getattr(module, "PLACES", {}).items():
            put(f"mistakes.{name}.look", look, info.name)
        for key, value in getattr(module, "MESSAGES", {}).items():
            if isinstance(value, dict):
                for part, text in value.items():
                    put(f"{key}.{part}", text, info.name)
            else:
                put(key, value, info.name)
    return flat, origin, clashes


TEXT, ORIGIN, CLASHES = _load()
"""``TEXT``: key -> English template. ``ORIGIN``: key -> the messages module that defines it. ``CLASHES``: keys
defined twice (the first definition is kept; a test requires none)."""


def fields(template: str) -> set[str]:
    """The named fields of a template (``"{a} and {b:.3g}"`` -> ``{"a", "b"}``)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def text(key: str) -> str:
    """The template of ``key`` in the learner's language (:func:`tinylm_solutions.i18n.language`)."""
    try:
        english = TEXT[key]
    except KeyError:
        raise MessageError(f"no message {key!r}") from None
    return i18n.translate(FOLDER, key, english)


def fill(key: str, values: dict) -> str:
    """The template of ``key`` with ``values`` filled in."""
    template = text(key)
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as e:
        raise MessageError(f"message {key!r} needs {sorted(fields(template))}, got {sorted(values)}: {e}") from None


def say(key: str, **values) -> str:
    """The fragment ``key`` in the learner's language, with ``values`` filled in."""
    return fill(key, values)


def parts(key: str) -> dict[str, str]:
    """The parts a failure's entry ``key`` has: part -> template."""
    found = {part: text(f"{key}.{part}") for part in PARTS if f"{key}.{part}" in TEXT}
    if "problem" not in found:
        raise MessageError(f"no failure {key!r} (it needs at least a problem)")
    return found


def hints(key: str) -> dict[str, str]:
    """An exercise's own wording of some mistakes' hints (entry ``key``): mistake id -> hint."""
    prefix = key + "."
    found = {k[len(prefix):]: text(k) for k in TEXT if k.startswith(prefix)}
    if not found:
        raise MessageError(f"no hints {key!r}")
    unknown = [m for m in found if f"mistakes.{m}" not in TEXT]
    if unknown:
        raise MessageError(f"hints {key!r} name mistakes that do not exist: {unknown}")
    return found


class _Ids:
    """``MISTAKE.no_scaling`` is the id ``"no_scaling"``; an id the table does not have is an AttributeError (and
    tests/test_messages.py reads every ``MISTAKE.<id>`` in the checks' code, so a typo never reaches a learner)."""

    def __getattr__(self, name: str) -> str:
        if f"mistakes.{name}" not in TEXT:
            raise AttributeError(f"no mistake {name!r} in tinylm_checks.messages")
        return name


MISTAKE = _Ids()
"""The ids of the mistakes the checks can name, as attributes: ``mistake=MISTAKE.no_scaling``."""


class _Mistakes(Mapping):
    """Mistake id -> its sentence (``part="sentence"``) or its hint (``part="hint"``), in the learner's language."""

    def __init__(self, suffix: str):
        self._suffix = suffix

    def __getitem__(self, name: str) -> str:
        key = f"mistakes.{name}{self._suffix}"
        if key not in TEXT:
            raise KeyError(name)
        return text(key)

    def __iter__(self):
        return (k.split(".")[1] for k in TEXT if k.startswith("mistakes.") and k.count(".") == 1)

    def __len__(self) -> int:
        return sum(1 for _ in self)


MISTAKES: Mapping[str, str] = _Mistakes("")
"""Every mistake a check can name: id -> the sentence a learner reads."""

MISTAKE_PLACES: Mapping[str, str] = _Mistakes(".look")
"""Every mistake a check can name: id -> where to look for it in the learner's code (shown with the mistake)."""

MISTAKE_HINTS: Mapping[str, str] = _Mistakes(".hint")
"""Every mistake a check can name: id -> the hint that goes with it wherever it is named (an exercise may have
its own wording: :func:`hints`)."""
