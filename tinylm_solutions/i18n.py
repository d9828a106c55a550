"""The learner's language (English or Chinese) and the gettext catalogs that hold the Chinese.

The language is, in this order: what :func:`set_language` set in this process; ``TINYLM_LANG`` (``en`` or ``zh``);
the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``: one that starts with ``zh`` means Chinese); else English.

A catalog is a gettext ``.po`` file under a package's ``locale/<locale>/LC_MESSAGES/``: each entry's ``msgctxt`` is
a message id, its ``msgid`` the English and its ``msgstr`` the translation (``tools/messages.py`` writes them from
the English tables; Babel reads them). An entry that is empty or fuzzy, or whose English is not the table's (the
English changed since it was translated), is not used: the English is shown instead, and the tests fail on it.
"""
from __future__ import annotations

import os
import re
import unicodedata
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

LANGUAGES = ("en", "zh")
LOCALE = {"zh": "zh_CN"}
CJK = re.compile(r"[\u4e00-\u9fff]")
"""Language -> the gettext locale its catalogs are filed under."""

_chosen: str | None = None


def _normal(value: str | None) -> str | None:
    if not value:
        return None
    value = value.strip().lower()
    if value.startswith("zh"):
        return "zh"
    if value.startswith("en") or value in ("c", "posix", "c.utf-8"):
        return "en"
    return None


def language() -> str:
    """``"en"`` or ``"zh"``: the language every message is shown in."""
    if _chosen is not None:
        return _chosen
    if os.environ.get("TINYLM_LANG"):
        return _normal(os.environ["TINYLM_LANG"]) or "en"
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if os.environ.get(var):
            return _normal(os.environ[var]) or "en"
    return "en"


def set_language(lang: str | None) -> str:
    """Show every message in ``lang`` (``"en"`` or ``"zh"``) from now on in this process; ``None`` goes back to
    the environment's choice. Returns the language now in use.

    Raises:
        ValueError: ``lang`` is not one of :data:`LANGUAGES` (nor None).
    """
    global _chosen
    if lang is not None and lang not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)} (or None for the environment's), "
                         f"not {lang!r}")
    _chosen = lang
    return language()


@contextmanager
def using(lang: str | None):
    """Within the block, messages are in ``lang`` (a language not in :data:`LANGUAGES`, or None, leaves the choice as
    it is): the grader speaks each notebook's language (its metadata ``tinylm.lang``, which a learner may have
    edited, so anything else is ignored)."""
    global _chosen
    before = _chosen
    if lang in LANGUAGES:
        _chosen = lang
    try:
        yield language()
    finally:
        _chosen = before


def notebook_language(nb) -> str | None:
    """The language a notebook was built in (its metadata ``tinylm.lang``), or None (English notebooks have none)."""
    meta = nb.get("metadata", {}).get("tinylm", {}) if hasattr(nb, "get") else {}
    lang = meta.get("lang") if isinstance(meta, dict) else None
    return lang if lang in LANGUAGES else None


@lru_cache(maxsize=None)
def catalog(folder: str, lang: str) -> dict[str, tuple[str, str]]:
    """Every translated entry of the ``.po`` files in ``folder``/locale/<lang's locale>/LC_MESSAGES: message id ->
    ``(english, translation)``; fuzzy and empty entries are left out. English has no catalog (``{}``)."""
    if lang == "en":
        return {}
    from babel.messages.pofile import read_po

    found: dict[str, tuple[str, str]] = {}
    for path in sorted((Path(folder) / "locale" / LOCALE[lang] / "LC_MESSAGES").glob("*.po")):
        with open(path, "rb") as f:
            for message in read_po(f, locale=LOCALE[lang]):
                if message.id and message.context and message.string and not message.fuzzy:
                    found[message.context] = (message.id, message.string)
    return found


def translate(folder: str | Path, key: str, english: str, lang: str | None = None) -> str:
    """The text of message ``key`` (whose English is ``english``) in ``lang`` (default: :func:`language`), from
    the catalogs of the package at ``folder``; the English when the catalog has no current translation."""
    lang = lang or language()
    entry = catalog(str(folder), lang).get(key)
    return entry[1] if entry is not None and entry[0] == english else english


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal or a monospaced output: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, width: int, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` columns (:func:`display_width`), on the right (or the left)."""
    fill = " " * max(0, width - display_width(text))
    return fill + text if right else text + fill


if __name__ == "__main__":  # the Makefile asks which language to build: python -m tinylm_solutions.i18n
    print(language())
