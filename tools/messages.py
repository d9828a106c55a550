"""Keep the gettext catalogs in step with the English message tables.

    python tools/messages.py update     # write every catalog's .pot and update its .po files
    python tools/messages.py check      # exit 1 if a catalog is stale (what tests/test_i18n.py also checks)
    python tools/messages.py translations [FILE.po ...]   # what the translations lack (empty, fuzzy, fields)

Two tables have catalogs: the checks' messages (``tinylm_checks.messages``, one catalog per module: a translator
opens ``attention.po`` for stage 01's checks) and the command lines' (``tinylm_solutions.messages``, one catalog,
``tinylm.po``). Each entry's ``msgctxt`` is the message's id, its ``msgid`` the English and its ``msgstr`` the
translation. Updating keeps a translation whose English did not change; one whose English changed keeps its old
text, marked fuzzy with the previous English, until a translator confirms it (a fuzzy entry is not used, and fails
the tests); an id the table no longer has is dropped. Babel reads and writes the files, so any gettext tool
(Poedit, Lokalize, ``msgfmt --check``) works on them too.
"""
from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
import bilingual  # noqa: E402 - the strings the notebooks' code cells show
LOCALES = ("zh_CN",)


def catalogs() -> list[Path]:
    """Every translation file: the checks', the command lines' and the notebooks' code cells'."""
    return sorted([*ROOT.glob("tinylm_*/locale/*/LC_MESSAGES/*.po"), *ROOT.glob("course/locale/*/LC_MESSAGES/*.po")])


def tables() -> dict[Path, dict[str, str]]:
    """Catalog file (without suffix, under a package's locale/) -> the English entries it holds: id -> text."""
    from tinylm_checks import _text
    from tinylm_solutions import messages as cli

    out: dict[Path, dict[str, str]] = {}
    for key, text in _text.TEXT.items():
        out.setdefault(Path("tinylm_checks") / "locale" / "{locale}" / "LC_MESSAGES" / _text.ORIGIN[key], {})[key] = text
    out[Path("tinylm_solutions") / "locale" / "{locale}" / "LC_MESSAGES" / "tinylm"] = dict(cli.TEXT)
    for source in sorted((ROOT / "course").glob("[0-9][0-9]_*.py")):  # what the notebooks' code cells show
        shown = bilingual.shown_strings(source)
        if shown:
            out[Path("course") / "locale" / "{locale}" / "LC_MESSAGES" / source.stem] = {text: text for text in shown}
    return out


HEADER = {"project": "TinyLM course", "version": "0.1.0", "copyright_holder": "the TinyLM course's authors",
          "msgid_bugs_address": "the course's issue tracker", "last_translator": "the TinyLM course's translators",
          "language_team": "the TinyLM course's translators", "fuzzy": False,
          "header_comment": "# The TinyLM course's messages (see docs/TRANSLATING.md; written by tools/messages.py: edit only\n"
                            "# the msgstr lines, then run `python tools/messages.py translations`)."}
"""The catalogs' header: who made them (Babel's placeholders otherwise: FIRST AUTHOR, ORGANIZATION)."""


def template(name: str, entries: dict[str, str]) -> Catalog:
    catalog = Catalog(domain=name, **HEADER)
    for key, text in entries.items():
        catalog.add(text, context=_context(key, text))
    return catalog


def _context(key: str, text: str) -> str | None:
    """An entry's msgctxt: its id, or none where the English is its own id (the notebooks' code strings)."""
    return None if key == text else key


def updated(old: Catalog | None, name: str, entries: dict[str, str], locale: str) -> Catalog:
    """The catalog of ``locale`` for ``entries``, keeping ``old``'s translations (fuzzy where the English changed)."""
    previous = {m.context or m.id: m for m in old if m.id} if old is not None else {}
    catalog = Catalog(locale=locale, domain=name, **HEADER)
    for key, text in entries.items():
        was = previous.get(key)
        context = _context(key, text)
        if was is None and context is None:  # a code string is its own id: its old English is the closest old one
            import difflib

            close = difflib.get_close_matches(text, [k for k in previous if k not in entries], n=1, cutoff=0.8)
            was = previous[close[0]] if close else None
        if was is None or not was.string:
            catalog.add(text, "", context=context)
        elif was.id == text:
            catalog.add(text, was.string, context=context, flags=was.flags,
                        previous_id=was.previous_id if was.fuzzy else ())
        else:
            catalog.add(text, was.string, context=context, flags={"fuzzy"}, previous_id=[was.id])
    return catalog


def render(catalog: Catalog) -> str:
    out = io.BytesIO()
    write_po(out, catalog, width=116, sort_output=False, include_previous=True, omit_header=False)
    return out.getvalue().decode()


def read(path: Path, locale: str | None = None) -> Catalog:
    with open(path, "rb") as f:
        return read_po(f, locale=locale, abort_invalid=True)


def plan(only: str | None = None) -> dict[Path, str]:
    """Every catalog file (or only those of the catalog named ``only``) -> the text it should have."""
    files = {}
    for stem, entries in tables().items():
        if only is not None and stem.name != only:
            continue
        pot = ROOT / str(stem).replace("{locale}" + "/LC_MESSAGES", "templates")
        files[pot.with_suffix(".pot")] = render(template(stem.name, entries))
        for locale in LOCALES:
            po = (ROOT / str(stem).format(locale=locale)).with_suffix(".po")
            old = read(po, locale) if po.exists() else None
            files[po] = render(updated(old, stem.name, entries, locale))
    return files


def translation_problems(path: Path) -> list[str]:
    """What a ``.po`` file's translations lack: an empty or fuzzy entry, a translation whose ``{fields}`` are not
    the English's, a Chinese text without Chinese."""
    import re
    import string

    def fields(t: str) -> list[str]:
        return sorted(f"{{{n}{':' + spec if spec else ''}}}" for _, n, spec, _ in string.Formatter().parse(t)
                      if n is not None)

    out = []
    for m in read(path):
        if not m.id:
            continue
        where = f"{path.name}: {m.context or m.id}"
        if not m.string:
            out.append(f"{where}: not translated")
        elif m.fuzzy:
            out.append(f"{where}: fuzzy (the English changed: confirm or fix the translation, then remove the flag)")
        else:
            try:
                if fields(m.id) != fields(m.string):
                    out.append(f"{where}: fields {fields(m.string)} in the translation, {fields(m.id)} in the English")
            except ValueError as e:
                out.append(f"{where}: the translation is no format template ({e}): double a literal brace")
            if "zh" in str(path) and not re.search(r"[\u4e00-\u9fff]", m.string) and re.search(r"[a-z]{3} [a-z]{3}", m.id):
                out.append(f"{where}: the translation has no Chinese")
    return out


def _stable(text: str) -> str:
    """A catalog's text without the header lines that change on every write (dates)."""
    return "\n".join(line for line in text.splitlines() if "-Date:" not in line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("update", "check", "translations"))
    parser.add_argument("files", nargs="*", help="translations: the .po files to check (default: all)")
    parser.add_argument("--only", metavar="NAME", help="update: only the catalog NAME (e.g. tinylm, lab)")
    args = parser.parse_args(argv)
    if args.command == "translations":
        found = [p for f in (args.files or sorted(catalogs()))
                 for p in translation_problems(Path(f))]
        print("\n".join(found) or "ok")
        return 1 if found else 0
    stale, planned = [], plan(args.only)
    for path, text in planned.items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current is not None and _stable(current) == _stable(text):
            continue
        if args.command == "update":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
        else:
            stale.append(path.relative_to(ROOT))
    # catalogs of modules the table no longer has
    for path in [*ROOT.glob("tinylm_*/locale/**/*.po*"), *ROOT.glob("course/locale/**/*.po*")] if args.only is None else ():
        if path not in planned:
            stale.append(path.relative_to(ROOT))
    if stale:
        print("stale catalogs (run python tools/messages.py update):", *map(str, stale), sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
