"""Issue 40, item 4: the Chinese notebooks are whole in Chinese: JupyterLab's menus named as the Chinese JupyterLab
shows them (its language pack, jupyterlab-language-pack-zh-CN, a dependency of the course's lab extra)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "course").glob("[0-9][0-9]_*.py"))
ITALIC = re.compile(r"(?<![*\w])\*([^*\n]+)\*(?![*\w])")


def zh_markdown(source: Path) -> list[str]:
    return [c.source for c in jupytext.read(source).cells if c.cell_type == "markdown" and c.metadata.get("lang") == "zh"]


@pytest.fixture(scope="module")
def pack() -> dict[str, str]:
    """The Chinese JupyterLab's words: English (without gettext's context) -> Chinese."""
    spec = pytest.importorskip("jupyterlab_language_pack_zh_CN")
    path = Path(spec.__file__).parent / "locale" / "zh_CN" / "LC_MESSAGES" / "jupyterlab.json"
    words = {}
    for key, value in json.loads(path.read_text(encoding="utf-8")).items():
        if key and isinstance(value, list) and value and value[0]:
            words.setdefault(key.split("\x04")[-1], value[0])
    return words


def menu_paths(text: str) -> list[list[str]]:
    """The menu paths a text names: its italic spans with an arrow, ``*内核 → 重启并运行所有单元格…*``."""
    return [[part.strip() for part in m.group(1).split("→")] for m in ITALIC.finditer(text) if "→" in m.group(1)]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_a_chinese_notebook_names_menus_as_the_chinese_jupyterlab_shows_them(source, pack):
    chinese = set(pack.values())
    for text in zh_markdown(source):
        for path in menu_paths(text):
            assert all(part in chinese for part in path), (path, [p for p in path if p not in chinese])
        named = [m.group(1) for m in ITALIC.finditer(text)]
        assert [n for n in named if all(part.strip() in pack for part in n.split("→"))] == []  # English menus


def test_notebook_00_names_the_kernel_menu_in_chinese(pack):
    text = "\n".join(zh_markdown(ROOT / "course" / "00_setup.py"))
    assert [pack["Kernel"], pack["Restart Kernel and Run All Cells…"]] in menu_paths(text)
    assert [pack["Kernel"], pack["Restart Kernel and Run up to Selected Cell…"]] in menu_paths(text)


# ---- a check's English words: explained once, in notebook 00's table of a check's lines, named in Chinese elsewhere

ASIDE = re.compile(r"（英文版(?:里)?是 `[^`]+`")


def test_the_english_words_of_a_check_are_explained_once_in_notebook_00():
    asides = {source.stem: sum(len(ASIDE.findall(t)) for t in zh_markdown(source)) for source in SOURCES}
    assert {stage: n for stage, n in asides.items() if n} == {"00_setup": 7}  # the seven rows of its table
    table = next(t for t in zh_markdown(ROOT / "course" / "00_setup.py") if ASIDE.search(t))
    assert len(ASIDE.findall(table)) == 7 and "只在这里列一次" in table


def test_the_lint_takes_a_check_s_chinese_word_for_its_english_code_span():
    import sys
    sys.path.insert(0, str(ROOT / "tools"))
    import bilingual

    english = "**If the check fails**, read the `tried:` line, then `expected:` and `got:`."
    assert bilingual.cell_problems(english, "**如果检查没通过**，先看“尝试”那一行，再看“期望”和“实际”。") == []
    assert bilingual.cell_problems(english, "**如果检查没通过**，先看输入那一行，再看“期望”和“实际”。") == [
        "code not in the Chinese: ['`tried:`']"]  # neither the English nor the Chinese word
    assert bilingual.cell_problems("call `softmax(x)`", "调用它") == ["code not in the Chinese: ['`softmax(x)`']"]


def test_the_original_lesson_is_introduced_before_it_is_named():
    """原讲义 (the lesson the course grew from) is said in full where a notebook first names it."""
    for source in SOURCES:
        text = "\n".join(zh_markdown(source))
        first = text.find("原讲义")
        if first >= 0:
            assert text.find("这门课最初依据的那份讲义") in range(0, first), source.stem


# ---- nbgrader's answer stubs in the release, in the notebook's language

LEARNER = ROOT / "tinylm_solutions" / "learner_notebooks"


def _answer_cells(lang: str):
    import nbformat

    for path in sorted((LEARNER / lang).glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("solution"):
                yield path.stem, cell


def test_the_chinese_release_s_answer_stubs_are_chinese():
    code = text = 0
    for stage, cell in _answer_cells("zh"):
        assert "YOUR CODE HERE" not in cell.source and "YOUR ANSWER HERE" not in cell.source, (stage, cell.source)
        if cell.cell_type == "markdown":
            assert cell.source == "在这里写下你的回答", stage
            text += 1
        elif "raise NotImplementedError()" in cell.source:
            assert "# 在这里写你的代码\n" in cell.source + "\n", (stage, cell.source)
            code += 1
    assert code > 30 and text >= 4, (code, text)


def test_the_english_release_keeps_nbgrader_s_stubs():
    sources = [cell.source for _, cell in _answer_cells("en")]
    assert "YOUR ANSWER HERE" in sources and any("# YOUR CODE HERE\nraise NotImplementedError()" in s for s in sources)
    assert not any("在这里" in s for s in sources)


def test_the_capstone_check_knows_every_language_s_stub():
    from tinylm_checks import capstone
    from tinylm_grading.preprocessors import stubs
    from tinylm_solutions.i18n import LANGUAGES

    assert sorted(stubs(lang)[0].splitlines()[0].removeprefix("# ") for lang in LANGUAGES) == sorted(capstone._STUBS) == [
        "YOUR CODE HERE", "在这里写你的代码"]


def test_the_capstone_check_knows_a_file_left_as_either_release_s_stub():
    from tinylm_checks import CheckFailure, check_capstone_model
    from tinylm_checks._text import say

    for stub in ("# YOUR CODE HERE\nraise NotImplementedError()\n", "# 在这里写你的代码\nraise NotImplementedError()\n"):
        with pytest.raises(CheckFailure) as failure:
            check_capstone_model({"model.py": stub})
        assert say("capstone.unfinished.problem", name="model.py") in str(failure.value), str(failure.value)


# ---- one term table: the catalogs and the Chinese notebooks use its words, never a rejected variant

CODE = re.compile(r"```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]+\$", re.S)  # code blocks and spans, formulas
GLOSS = re.compile(r"（[A-Za-z][A-Za-z \-，、,/]*）")  # an English name in parentheses after its Chinese word: 缓冲区（buffer）


def _comments_and_docstrings(code: str) -> str:
    """What a Chinese code cell says in Chinese: its comments and docstrings (its strings go through the course's
    translations, its code is the English cell's)."""
    import ast
    import io
    import tokenize

    said = []
    try:
        said += [t.string for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.COMMENT]
        said += [ast.get_docstring(n) or "" for n in ast.walk(ast.parse(code))
                 if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))]
    except (SyntaxError, tokenize.TokenError):  # a cell with IPython syntax: its comments, line by line
        said = [line.partition("#")[2] for line in code.splitlines()]
    return "\n".join(said)


def _chinese_texts():
    """(where, text, prose): every Chinese message and notebook cell, and the part of it a learner reads as sentences."""
    from babel.messages.pofile import read_po

    for po in sorted([*ROOT.glob("tinylm_*/locale/zh_CN/LC_MESSAGES/*.po"), *ROOT.glob("course/locale/zh_CN/LC_MESSAGES/*.po")]):
        with open(po, "rb") as f:
            for m in read_po(f):
                if m.id and m.string:
                    yield f"{po.name}: {m.context or m.id}", m.string, m.string
    for source in SOURCES:
        for cell in jupytext.read(source).cells:
            if cell.metadata.get("lang") == "zh":
                said = _comments_and_docstrings(cell.source) if cell.cell_type == "code" else cell.source
                yield source.stem, cell.source, CODE.sub(" ", said)


def _uses(text: str, prose: str, bad: str, good: str) -> bool:
    """Whether a text uses the rejected variant ``bad``: a word in English letters as a word of its prose, other
    variants anywhere; either one not as the explanation of the word used (前置层归一化（Pre-LN）)."""
    if re.fullmatch(r"[A-Za-z][A-Za-z .-]*", bad):
        word = re.compile(rf"(?<![\w.\-/{{]){re.escape(bad)}s?(?![\w\-(/{{])")
        return bool(word.search(GLOSS.sub(" ", prose.replace(f"{bad}（{good}", ""))))
    return bad in text.replace(f"{bad}（{good}", "")


def test_no_chinese_text_uses_a_rejected_variant_of_a_term():
    from tinylm_checks.messages.terms import REJECTED

    found = [(where, bad, good) for where, text, prose in _chinese_texts() for bad, good in REJECTED.items()
             if _uses(text, prose, bad, good)]
    assert found == []


def test_a_rejected_english_word_is_a_word_of_the_prose_not_code():
    assert _uses("把表存成 buffer", "把表存成 buffer", "buffer", "缓冲区")
    assert _uses("buffers：{buffers}", "buffers：{buffers}", "buffer", "缓冲区")
    assert _uses("Vaswani et al. 2017", "Vaswani et al. 2017", "et al.", "等人")
    for prose in ("用 register_buffer 注册", "在 named_buffers() 里", "存成缓冲区（buffer）", "{n_buffer:6}",
                  "前馈网络（feed-forward network，FFN）"):
        assert not _uses(prose, prose, "buffer", "缓冲区") and not _uses(prose, prose, "FFN", "前馈网络"), prose
    text = "把表记作 `buffer`，公式写成 $y = x + FFN$"
    assert not _uses(text, CODE.sub(" ", text), "buffer", "缓冲区")
    assert not _uses(text, CODE.sub(" ", text), "FFN", "前馈网络")
    assert not _uses("前置层归一化（Pre-LN）的块", "", "前置层归一化", "Pre-LN")
    assert _uses("前置层归一化的块", "", "前置层归一化", "Pre-LN")
    cell = 'x = 1  # 一个 buffer\ndef f():\n    """FFN 的输出。"""\n    return "buffer"\n'
    assert _comments_and_docstrings(cell).split() == ["#", "一个", "buffer", "FFN", "的输出。"]
