"""Issue 40, item 4: one number format, the one Python prints, in both languages. The course's output writes
``f"{n:,}"`` (200,000) and ``f"{x:.1f}%"`` (1.5%); the text a learner reads writes its numbers the same way, never
200 000 (grouped by spaces) nor 90 % (a space before the percent sign): in every notebook's Markdown, English and
Chinese (code spans, formulas and fenced blocks aside), its code cells' comments, every catalog's translations
(``msgstr``) and every message's English."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import jupytext
import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import bilingual  # noqa: E402

SOURCES = sorted((ROOT / "course").glob("[0-9][0-9]_*.py"))
CATALOGS = sorted(p for p in ROOT.glob("**/zh_CN/LC_MESSAGES/*.po") if ".venv" not in p.parts)
SPACES = "[ \u00a0\u2009\u202f]"  # a space, a no-break space, a thin space, a narrow no-break space
GROUPED = re.compile(rf"(?<![\w.,])\d{{1,3}}(?:{SPACES}\d{{3}})+(?![\w.])")
PERCENT = re.compile(rf"(?:(?<![\w.])\d+(?:\.\d+)?|\}}){SPACES}+[%％]")  # 90 %, {share} %


def wrong_numbers(text: str) -> list[str]:
    """The numbers of ``text`` not written as Python prints them: grouped by spaces, or a space before %."""
    return [m.group(0) for pattern in (GROUPED, PERCENT) for m in pattern.finditer(text)]


def prose(markdown: str) -> str:
    """A Markdown cell's text without its code spans, formulas and fenced blocks (code keeps its own format)."""
    return bilingual.MATH.sub(" ", bilingual.CODE.sub(" ", bilingual.FENCE.sub(" ", markdown)))


def test_the_pattern_finds_exactly_the_other_formats():
    assert wrong_numbers("about 200 000 characters, 90 % for training, 3 984 个字，0.13 %，{share} %") == [
        "200 000", "3 984", "90 %", "0.13 %", "} %"]
    assert wrong_numbers("200,000 characters, 90% for training, 1.5%, 8 x 32, (2, 4, 6), 0.13%, 3e-3, 1 2 3") == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_notebooks_markdown_writes_numbers_as_python_prints_them(source):
    found = [(i, cell.metadata.get("lang", "en"), wrong_numbers(prose(cell.source)))
             for i, cell in enumerate(jupytext.read(source).cells) if cell.cell_type == "markdown"]
    assert [f for f in found if f[2]] == []


def comments(code: str) -> list[str]:
    """The comments of a code cell (what a learner reads beside the code), or none where it is no Python."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(bilingual.IPYTHON.sub(r"\1pass", code)).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    return [t.string for t in tokens if t.type == tokenize.COMMENT]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_notebooks_code_comments_write_numbers_as_python_prints_them(source):
    found = [(i, wrong_numbers(c)) for i, cell in enumerate(jupytext.read(source).cells) if cell.cell_type == "code"
             for c in comments(cell.source)]
    assert [f for f in found if f[1]] == []


def test_a_comment_s_number_is_found():
    assert comments("x = 1  # 只取前 200 000 个字符\n%time f()\n") == ["# 只取前 200 000 个字符"]
    assert wrong_numbers(comments("x = 1  # 只取前 200 000 个字符")[0]) == ["200 000"]


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda p: f"{p.parts[-5]}/{p.name}")
def test_the_catalogs_translations_write_numbers_as_python_prints_them(catalog):
    with catalog.open("rb") as f:
        entries = [m for m in read_po(f) if m.id and isinstance(m.string, str)]
    assert entries and [(m.context or m.id[:40], wrong_numbers(m.string)) for m in entries
                        if wrong_numbers(m.string)] == []


def test_the_messages_write_numbers_as_python_prints_them():
    from tinylm_checks import _text
    from tinylm_solutions import messages

    texts = {**_text.TEXT, **messages.TEXT}
    assert len(texts) > 1000
    assert {key: wrong_numbers(text) for key, text in texts.items() if wrong_numbers(text)} == {}
