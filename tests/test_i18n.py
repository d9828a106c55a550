"""The course in two languages (issue 18): every message and every notebook text has its Chinese, the Chinese keeps
what the English says (fields, numbers, code), and the language switches without touching what is checked or graded.
"""
import copy
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from tinylm_checks import MISTAKES, set_language
from tinylm_checks import _text
from tinylm_solutions import i18n

from mutants import ROWS
from test_checks_mutants import _params, run_check
from test_checks_mutants import single_thread  # noqa: F401 - autouse fixture: run the checks on one thread

ROOT = Path(__file__).resolve().parent.parent
CJK = re.compile(r"[\u4e00-\u9fff]")
sys.path.insert(0, str(ROOT / "tools"))


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


messages_tool, bilingual, build_notebooks = _tool("messages"), _tool("bilingual"), _tool("build_notebooks")
CATALOGS = messages_tool.catalogs()
SOURCES = sorted((ROOT / "course").glob("[0-9][0-9]_*.py"))


@pytest.fixture
def chinese():
    set_language("zh")
    yield
    set_language(None)


# ---- the language, and how it is chosen

@pytest.mark.parametrize("env, expected", [
    ({}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANG": "en_US.UTF-8"}, "en"),
    ({"LANG": "zh_CN.UTF-8", "LC_ALL": "en_GB.UTF-8"}, "en"),  # LC_ALL wins over LANG, as in gettext
    ({"LANG": "zh_TW.UTF-8"}, "zh"),
    ({"LANG": "fr_FR.UTF-8"}, "en"),  # a language the course does not have: English
    ({"TINYLM_LANG": "zh", "LANG": "en_US.UTF-8"}, "zh"),  # the course's own variable wins over the locale
    ({"TINYLM_LANG": "en", "LANG": "zh_CN.UTF-8"}, "en"),
])
def test_the_language_follows_tinylm_lang_then_the_locale(env, expected, monkeypatch):
    for var in ("TINYLM_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert i18n.language() == expected


def test_set_language_switches_a_running_kernel_and_none_goes_back(monkeypatch):
    monkeypatch.setenv("TINYLM_LANG", "en")
    try:
        assert set_language("zh") == "zh" and CJK.search(_text.say("core.label.hint"))
        assert set_language("en") == "en" and _text.say("core.label.hint") == _text.TEXT["core.label.hint"]
    finally:
        assert set_language(None) == "en"


def test_set_language_refuses_a_language_the_course_does_not_have():
    with pytest.raises(ValueError, match="en, zh"):
        set_language("fr")


# ---- the catalogs

def test_the_catalogs_are_the_english_tables_of_now():
    assert messages_tool.main(["check"]) == 0, "run python tools/messages.py update"


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda p: p.name)
def test_every_message_is_translated_with_the_same_fields(catalog):
    assert messages_tool.translation_problems(catalog) == []


def test_every_message_id_has_its_chinese(chinese):
    untranslated = [key for key in _text.TEXT if _text.text(key) == _text.TEXT[key] and CJK.search(key) is None
                    and re.search(r"[a-z]{3,} [a-z]{3,}", _text.TEXT[key])]
    assert untranslated == []


def test_a_translation_whose_english_changed_is_not_used(tmp_path):
    """A catalog entry whose msgid is not the table's English any more falls back to the English (and the test above
    fails until a translator confirms it)."""
    folder = tmp_path / "locale" / "zh_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "x.po").write_text('msgctxt "k"\nmsgid "old English"\nmsgstr "旧的中文"\n', encoding="utf-8")
    i18n.catalog.cache_clear()
    assert i18n.translate(tmp_path, "k", "old English", "zh") == "旧的中文"
    assert i18n.translate(tmp_path, "k", "new English", "zh") == "new English"
    assert i18n.translate(tmp_path, "k", "old English", "en") == "old English"


# ---- every wrong implementation is told its mistake in Chinese

@pytest.mark.slow  # every mutant again (the English run is in the fast tier): 40 s of CPU, 3 minutes with the capstone's
@pytest.mark.parametrize("check, mutant, mistake, phrase", list(_params()))
def test_every_mutant_gets_a_chinese_message(check, mutant, mistake, phrase, chinese):
    exc = run_check(check, mutant)
    assert exc.mistake == mistake, "the diagnosis must not depend on the language"
    assert CJK.search(exc.problem), exc.problem
    lines = str(exc).splitlines()
    assert CJK.search(lines[0]), str(exc)  # a hint may be code alone: the catalogs' test sees to its words
    if mistake is not None:
        assert MISTAKES[mistake] in str(exc) and CJK.search(MISTAKES[mistake]), str(exc)


# ---- the notebooks

@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_markdown_cell_has_its_chinese_twin(source):
    assert bilingual.problems(source) == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_both_languages_have_the_same_code_cells_grade_ids_and_points(source):
    """So nbval's run of the English notebooks runs the Chinese code too (the same code, what it prints in Chinese),
    except a data cell's (its text and prompts: test_notebooks_zh.py runs those), and one gradebook grades both."""
    english, chinese = build_notebooks.build(source), build_notebooks.build(source, lang="zh")
    assert len(english.cells) == len(chinese.cells)
    for e, z in zip(english.cells, chinese.cells):
        assert (e.id, e.cell_type, e.metadata) == (z.id, z.cell_type, z.metadata)
        if e.cell_type == "code" and bilingual.translatable(e) and bilingual.data_names(e.source):
            assert bilingual.data_names(e.source) == bilingual.data_names(z.source), z.source
        elif e.cell_type == "code" and bilingual.translatable(e) and e.source != z.source \
                and not e.source.startswith("%%writefile"):  # only its strings differ (a file's twin: its comments)
            assert bilingual.code_shape(e.source) == bilingual.code_shape(z.source), z.source
        elif e.cell_type == "code":  # an exercise's cells: the same code, its comments and docstrings Chinese
            assert bilingual.code_differences(e.source, z.source) is None, z.source
        elif not e.metadata.get("nbgrader"):
            assert CJK.search(z.source), z.source[:80]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_what_the_code_cells_print_and_draw_is_chinese_too(source):
    """Every string a shared code cell shows (print, plot titles and labels) that has words is Chinese in the Chinese
    notebook, unless its translation is its English (code alone, such as ``x.var(dim=-1) =``)."""
    table = build_notebooks.code_table(source.stem, "zh")
    chinese = build_notebooks.build(source, lang="zh")
    for cell, elsewhere in zip(chinese.cells, bilingual.read_elsewhere(chinese.cells)):
        for _, _, text in bilingual.code_strings(cell.source, elsewhere) if bilingual.translatable(cell) else ():
            assert CJK.search(text) or table.get(text) == text, (source.stem, text)


CODE = 'print(f"loss {loss:.3f} after"\n      f" {n} steps", "sample:", generate(model, "The cat"))\n' \
       'plot_changes({"alone vs padded": d}, "BatchNorm", title=f"head {h}")\nname = "a plain string"\n'


def test_the_shown_strings_are_those_printed_or_drawn_not_those_computed_with():
    shown = [text for _, _, text in bilingual.code_strings(CODE)]
    assert shown == ["loss {loss:.3f} after", " {n} steps", "sample:", "alone vs padded", "BatchNorm", "head {h}"]
    table = {"loss {loss:.3f} after": "{loss:.3f} 的损失，经过", " {n} steps": " {n} 步", "head {h}": "第 {h} 个头",
             "The cat": "猫"}
    translated = bilingual.translate_code(CODE, table)
    assert 'f"{loss:.3f} 的损失，经过"' in translated and 'title=f"第 {h} 个头"' in translated
    assert '"The cat"' in translated  # a model's prompt is data, not a label
    assert bilingual.code_shape(translated) == bilingual.code_shape(CODE)
    assert bilingual.code_shape(bilingual.translate_code(CODE, {"head {h}": "第 {H} 个头"})) != bilingual.code_shape(CODE)


def test_a_loop_s_labels_are_shown_only_when_the_loop_only_shows_them():
    code = ('for name, m in (("untrained", a), ("trained", b)):\n    print(f"{name:>24}: loss {f(m):.3f}")\n'
            'for name, k in (("linear1", 1), ("linear2", 2)):\n    print(name, getattr(layer, name))\n'
            'for label, (d, h) in (("wider", (256, 8)), ("deeper", (64, 2))):\n    print(f"{d * h:>6} {label}")\n')
    assert [text for _, _, text in bilingual.code_strings(code)] == ["untrained", "trained", "{name:>24}: loss {f(m):.3f}",
                                                                     "wider", "deeper", "{d * h:>6} {label}"]


def test_a_loop_s_labels_that_key_a_legend_dict_are_shown():
    """06's wirings: each label keys the dicts plot_depth_profile draws as legends, and is printed; renaming every
    label alike changes nothing computed. A dict also read as code (sorted(d), another cell) keeps its labels."""
    code = ('std, grad = {}, {}\nfor wiring, layer in (("plain", f), ("Pre-LN", g)):\n'
            '    x, std[wiring] = x0, []\n    std[wiring].append(layer(x))\n    grad[wiring] = [1.0]\n'
            'plot_depth_profile(std, grad)\nfor wiring, g in grad.items():\n    print(f"{wiring}: {g[0]}")\n')
    assert [text for _, _, text in bilingual.code_strings(code)] == ["plain", "Pre-LN", "{wiring}: {g[0]}"]
    assert [text for _, _, text in bilingual.code_strings(code, frozenset({"grad"}))] == ["{wiring}: {g[0]}"]
    for code_use in ("print(sorted(grad))\n", "for wiring, g in grad.items():\n    print(getattr(m, wiring))\n",
                     "grad = {'a': 1}\n"):
        assert [text for _, _, text in bilingual.code_strings(code + code_use)] == ["{wiring}: {g[0]}"], code_use


def test_a_name_s_strings_are_shown_only_when_the_name_is_only_shown():
    code = ('evidence = f"found {x}" if x else "none found"\nprint("result -", evidence)\n'
            'key = "wider"\nprint(key, table[key])\n'
            'twice = "first"\ntwice = "second"\nprint(twice)\n'
            'record_run("11_first_bug", name=n, evidence=evidence)\n')
    assert [text for _, _, text in bilingual.code_strings(code)] == ["found {x}", "none found", "result -"]
    # read by another cell, where it may be data: its strings stay as they are
    assert [text for _, _, text in bilingual.code_strings(code, frozenset({"evidence"}))] == ["result -"]
    cells = [nbformat.v4.new_code_cell(code), nbformat.v4.new_code_cell("rows[evidence] = 1"),
             nbformat.v4.new_markdown_cell("evidence")]
    assert bilingual.read_elsewhere(cells)[0] == {"rows", "evidence"}  # a markdown cell reads nothing
    code += 'print(len(evidence))\n'  # a use that computes with it: its strings stay as they are
    assert [text for _, _, text in bilingual.code_strings(code)] == ["result -"]


def test_a_translation_that_would_change_the_code_fails_the_build(tmp_path, monkeypatch):
    source = ROOT / "course" / "06_norm.py"
    broken = next(text for text in bilingual.shown_strings(source) if "{" not in text)
    monkeypatch.setattr(build_notebooks, "code_table", lambda stem, lang: {broken: 'a quote " inside'})
    with pytest.raises(build_notebooks.LintError, match="change the code"):
        build_notebooks.build(source, lang="zh")


DATA_SOURCE = """# %% [markdown]
# Train on the text.

# %% [markdown] lang="zh"
# 在文本上训练。

# %%
text = corpus("en")
PROMPT, N = "Return the ", 3

# %% lang="zh"
text = corpus("zh", max_chars=100)
PROMPT, N = "春风", 3

# %%
print(PROMPT * N)
"""


def test_a_data_cell_s_chinese_twin_replaces_its_code_in_the_chinese_notebook_only():
    import jupytext

    cells = jupytext.reads(DATA_SOURCE, fmt="py:percent").cells
    english, chinese = bilingual.select(cells, "en"), bilingual.select(copy.deepcopy(cells), "zh")
    assert [c.cell_type for c in english] == [c.cell_type for c in chinese] == ["markdown", "code", "code"]
    assert english[1].source.startswith('text = corpus("en")') and chinese[1].source.startswith('text = corpus("zh"')
    assert "lang" not in chinese[1].metadata  # the English cell's place and markers
    assert english[2].source == chinese[2].source
    assert bilingual.data_names(english[1].source) == bilingual.data_names(chinese[1].source) == ["text", "PROMPT", "N"]
    assert [c for c in bilingual.source_cells(DATA_SOURCE, "zh") if "corpus" in c] == [
        '# %% lang="zh"\ntext = corpus("zh", max_chars=100)\nPROMPT, N = "春风", 3\n']


@pytest.mark.parametrize("chinese, problem", [
    ('text = corpus("zh")\n', "the English assigns ['text', 'PROMPT', 'N'], the Chinese ['text']"),
    ('PROMPT, N = "春风", 3\ntext = corpus("zh")\n', "the Chinese ['PROMPT', 'N', 'text']"),  # another order
    ('text = corpus("zh")\nPROMPT, N = "春风", 3\nprint(text)\n', "the Chinese None"),  # it does more than assign
])
def test_a_data_cell_s_twin_must_assign_the_same_names_and_do_nothing_else(tmp_path, chinese, problem):
    source = tmp_path / "99_x.py"
    source.write_text(DATA_SOURCE.replace('text = corpus("zh", max_chars=100)\nPROMPT, N = "春风", 3\n', chinese),
                      encoding="utf-8")
    (found,) = bilingual.problems(source)
    assert "cell 3: a Chinese code cell must be the twin of a data cell" in found and problem in found
    source.write_text(DATA_SOURCE, encoding="utf-8")
    assert bilingual.problems(source) == []
    source.write_text(DATA_SOURCE.replace("# %%\ntext", "# %%\nfor _ in (): pass\ntext"),  # the English: no data cell
                      encoding="utf-8")
    assert "the English assigns None" in bilingual.problems(source)[0]


def test_the_difficulty_line_and_hints_are_checked_in_chinese_too():
    english = "**Difficulty:** ★★☆ · **Time:** about 10 min\n<details><summary>Hint 1</summary>`x`, 0.59</details>"
    good = "**难度：** ★★☆ · **用时：** 约 10 分钟\n<details><summary>提示 1</summary>`x`，0.59</details>"
    assert bilingual.cell_problems(english, good) == []
    assert any("exercise line" in p for p in bilingual.cell_problems(english, good.replace("10 分钟", "15 分钟")))
    assert any("numbers" in p for p in bilingual.cell_problems(english, good.replace("0.59", "0.6")))
    assert any("code" in p for p in bilingual.cell_problems(english, good.replace("`x`", "x")))
    assert any("<details>" in p for p in bilingual.cell_problems(english, good.replace("<details>", "")))


def test_a_twin_of_the_chinese_run_states_its_own_numbers_and_keeps_the_rest(tmp_path):
    """run="zh": the Chinese cell states the Chinese run's numbers (tests/test_claims_09.py quotes each), so the lint
    does not hold it to the English cell's numbers; it still holds it to the code spans and the rest."""
    source = tmp_path / "99_x.py"
    english = '# %% [markdown]\n# The healthy run ends near 0.08 (`healthy[-1]`).\n\n'
    source.write_text(english + '# %% [markdown] lang="zh" run="zh"\n# 健康的运行停在 0.05 左右（`healthy[-1]`）。\n',
                      encoding="utf-8")
    assert bilingual.problems(source) == []
    assert bilingual.own_numbers(jupytext.read(source).cells[1])
    source.write_text(english + '# %% [markdown] lang="zh"\n# 健康的运行停在 0.05 左右（`healthy[-1]`）。\n',
                      encoding="utf-8")
    assert "numbers not in the Chinese: ['0.08']" in bilingual.problems(source)[0]
    source.write_text(english + '# %% [markdown] lang="zh" run="zh"\n# 健康的运行停在 0.05 左右。\n',
                      encoding="utf-8")
    assert "code not in the Chinese: ['`healthy[-1]`']" in bilingual.problems(source)[0]
    assert bilingual.numbers("ends near 0.08 (`x = 3`, $d_k = 64$, [see](a/1.md))") == {"0.08"}


def test_the_glossary_is_the_term_table():
    from tinylm_checks.messages.terms import TERMS

    nb = build_notebooks.build(ROOT / "course" / "00_setup.py", lang="zh")
    text = "\n".join(c.source for c in nb.cells)
    for english, chinese, _ in TERMS:
        assert f"| {chinese} | {english} |" in text


def test_updating_a_catalog_keeps_a_translation_as_fuzzy_when_its_english_changes():
    """Checks' messages keep theirs by id; a code string is its own id, so its nearest old English carries it."""
    old = messages_tool.updated(None, "x", {"k": "old words", "row sums:": "row sums:"}, "zh_CN")
    for m in old:
        m.string = {"old words": "旧的话", "row sums:": "每行之和："}.get(m.id, m.string)
    new = {m.context or m.id: m for m in messages_tool.updated(
        old, "x", {"k": "new words", "row sums: ": "row sums: ", "mean:": "mean:"}, "zh_CN") if m.id}
    assert (new["k"].string, new["k"].fuzzy, new["k"].previous_id) == ("旧的话", True, ["old words"])
    assert (new["row sums: "].string, new["row sums: "].fuzzy) == ("每行之和：", True)
    assert (new["mean:"].string, new["mean:"].fuzzy) == ("", False)  # nothing near it: a new entry
