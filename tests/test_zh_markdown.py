"""Issue 40, item 4: the Chinese notebooks' Markdown renders as Chinese is written. A line break inside a paragraph is
a soft break, which Markdown renders as a space: between two Chinese characters it puts a stray space into the
sentence (“两行 把四个数”). A Chinese paragraph is one line wherever both sides of a break are Chinese."""
from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "course").glob("[0-9][0-9]_*.py"))
HAN = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef"  # CJK punctuation, ideographs, full-width forms
MARKS = "\u2018\u2019\u201c\u201d\u2014\u2026\u00b7"  # ‘ ’ “ ” — … ·: Chinese between Chinese characters
CHINESE = f"[{HAN}{MARKS}]"


def soft_breaks(markdown: str) -> list[str]:
    """The soft line breaks of ``markdown`` with a Chinese character or mark on both sides, outside fenced code and after no heading, each as the text around it."""
    found, fenced, lines = [], False, markdown.split("\n")
    for line, following in zip(lines, lines[1:]):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or not line or not following.strip() or line.lstrip().startswith(("#", "|")):
            continue
        pair = line[-1] + following.lstrip()[0]
        if re.fullmatch(f"{CHINESE}{{2}}", pair):
            found.append(f"{line[-12:]}⏎{following.lstrip()[:12]}")
    return found


def test_a_soft_break_is_found_between_chinese_characters_only():
    assert soft_breaks("“期望”和“实际”两行\n把四个数并排列出来") == ["“期望”和“实际”两行⏎把四个数并排列出来"]
    assert soft_breaks("两行\n   把四个数") == ["两行⏎把四个数"]  # a list item's continuation, indented
    assert soft_breaks("叫做“期望”\n“实际”") == ["叫做“期望”⏎“实际”"]
    assert soft_breaks("两行\n`got:` 把") == soft_breaks("`x`\n把") == soft_breaks("两行\n\n把") == []  # code, a new paragraph
    assert soft_breaks("## 标题\n正文") == soft_breaks("```\n注释\n代码\n```") == soft_breaks("| 甲 |\n| 乙 |") == []
    assert soft_breaks("the “tried:”\nline") == soft_breaks("叫做\ntried") == []  # English on one side


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_no_chinese_paragraph_is_broken_between_two_chinese_characters(source):
    broken = [(i, b) for i, cell in enumerate(jupytext.read(source).cells)
              if cell.cell_type == "markdown" and cell.metadata.get("lang") == "zh" for b in soft_breaks(cell.source)]
    assert broken == [], f"{source.name}: join these lines (a soft break renders as a space): {broken}"
