"""The two languages of a course source: every English markdown cell is followed by its Chinese twin.

    # %% [markdown]
    # ## 2. Why divide by $\\sqrt{d_k}$
    # ...

    # %% [markdown] lang="zh"
    # ## 2. 为什么要除以 $\\sqrt{d_k}$
    # ...

Code cells are shared. A twin carries only ``lang="zh"``: the English cell's other markers (``answer=...``) hold
for both. :func:`select` gives the cells of one language, :func:`problems` what a source's Chinese lacks.

    python tools/bilingual.py 01          # the problems of course/01_*.py's Chinese, or "ok"
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

LANGUAGES = ("en", "zh")
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")
CODE = re.compile(r"(?<!`)`[^`]+`(?!`)")  # a code span may run over two lines
FENCE = re.compile(r"^```.*?^```", re.S | re.M)  # fenced blocks: their comments are translated, so not compared
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)")
DIFFICULTY = {"en": re.compile(r"\*\*Difficulty:\*\* ([★☆]{3}) · \*\*Time:\*\* about (\d+) min"),
              "zh": re.compile(r"\*\*难度：\*\* ([★☆]{3}) · \*\*用时：\*\* 约 (\d+) 分钟")}


def is_twin(cell) -> bool:
    return cell.cell_type == "markdown" and cell.metadata.get("lang") == "zh"


def pairs(cells) -> list[tuple[int, object, object | None]]:
    """Each English markdown cell with its Chinese twin (None when it has none): ``(index, english, chinese)``."""
    out = []
    for i, cell in enumerate(cells):
        if cell.cell_type == "markdown" and not is_twin(cell):
            nxt = cells[i + 1] if i + 1 < len(cells) else None
            out.append((i, cell, nxt if nxt is not None and is_twin(nxt) else None))
    return out


def select(cells, lang: str) -> list:
    """The cells of a notebook in ``lang``: English drops the twins; Chinese puts each twin's text in its English
    cell's place (keeping that cell's metadata). A missing twin keeps the English (the build's lint says so)."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    out = []
    for i, cell in enumerate(cells):
        if is_twin(cell):
            if lang == "zh" and out and out[-1].cell_type == "markdown":
                out[-1].source = cell.source
            continue
        out.append(cell)
    return out


TWIN = '# %% [markdown] lang="zh"'
"""How a Chinese twin's cell starts in a percent source."""


def source_cells(text: str, lang: str = "en") -> list[str]:
    """A percent source's cells, as source text, in ``lang``: each Chinese twin in its English cell's place, or left
    out (for tests that read the sources as text, without jupytext)."""
    out: list[str] = []
    for cell in re.split(r"\n(?=# %%)", text):
        if cell.startswith(TWIN):
            if lang == "zh" and out:
                out[-1] = cell
            continue
        out.append(cell)
    return out


def _spans(pattern: re.Pattern, text: str) -> set[str]:
    return {re.sub(r"\s+", " ", m.group(0)) for m in pattern.finditer(text)}


def cell_problems(english: str, chinese: str) -> list[str]:
    """What the Chinese of one cell drops from the English: numbers, code spans, formulas, links, the difficulty
    line, the hints' <details> blocks, the headings' levels."""
    problems = []
    english, chinese = FENCE.sub(" ", english), FENCE.sub(" ", chinese)
    for name, pattern in (("code", CODE), ("math", MATH), ("link", LINK)):
        missing = _spans(pattern, english) - _spans(pattern, chinese)
        if missing:
            problems.append(f"{name} not in the Chinese: {sorted(missing)}")
    prose = lambda t: MATH.sub(" ", CODE.sub(" ", LINK.sub(" ", t)))  # noqa: E731
    missing = _spans(NUMBER, prose(english)) - _spans(NUMBER, chinese)
    if missing:
        problems.append(f"numbers not in the Chinese: {sorted(missing)}")
    en_diff = DIFFICULTY["en"].findall(english)
    if en_diff != DIFFICULTY["zh"].findall(chinese):
        problems.append(f"the exercise line must read **难度：** ★★☆ · **用时：** 约 N 分钟 with {en_diff}")
    for tag in ("<details>", "</details>", "<summary>"):
        if english.count(tag) != chinese.count(tag):
            problems.append(f"{english.count(tag)} {tag} in the English, {chinese.count(tag)} in the Chinese")
    heads = lambda t: [len(m) for m in re.findall(r"^(#+) ", t, re.M)]  # noqa: E731
    if heads(english) != heads(chinese):
        problems.append(f"headings {heads(english)} in the English, {heads(chinese)} in the Chinese")
    if not re.search(r"[\u4e00-\u9fff]", chinese):
        problems.append("the Chinese twin has no Chinese")
    return problems


def problems(source: Path) -> list[str]:
    """Every English markdown cell of ``source`` that has no Chinese twin or whose twin drops something."""
    import jupytext

    nb = jupytext.read(source)
    out = []
    for i, cell in enumerate(nb.cells):
        if is_twin(cell) and (i == 0 or nb.cells[i - 1].cell_type != "markdown" or is_twin(nb.cells[i - 1])):
            out.append(f"{source.name}, cell {i}: a Chinese cell that follows no English markdown cell")
    for i, english, chinese in pairs(nb.cells):
        where = f"{source.name}, cell {i} ({english.source.strip().splitlines()[0][:50] if english.source.strip() else ''!r})"
        if chinese is None:
            out.append(f"{where}: no Chinese twin")
            continue
        out += [f"{where}: {p}" for p in cell_problems(english.source, chinese.source)]
    return out


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent / "course"
    found = []
    for prefix in sys.argv[1:] or [""]:
        for source in sorted(root.glob(f"{prefix}*.py")):
            found += problems(source)
    print("\n".join(found) or "ok")
    sys.exit(1 if found else 0)
