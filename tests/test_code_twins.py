"""A code cell's Chinese twin (tools/bilingual.py): the Chinese notebook reads the code's comments and docstrings in
Chinese, the code stays one (the build refuses a twin that changes it, naming the cell), nbgrader's metadata and
regions are the English cell's, and no code cell of a Chinese notebook leaves a learner English sentences to read."""
import importlib.util
import sys
from pathlib import Path

import pytest

from tinylm_grading import registry

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import bilingual  # noqa: E402

spec = importlib.util.spec_from_file_location("build_notebooks", ROOT / "tools" / "build_notebooks.py")
build_notebooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_notebooks)

SOURCES = sorted((ROOT / "course").glob("[0-9][0-9]_*.py"))

ENGLISH = '''\
def f(x):
    """Twice x.

    Args:
        x: a tensor (B, T, D).
    """
    ### BEGIN SOLUTION
    return 2 * x  # (B, T, D): every entry doubled
    ### END SOLUTION
'''
CHINESE = '''\
def f(x):
    """x 的两倍。

    参数：
        x: 张量 (B, T, D)。
    """
    ### BEGIN SOLUTION
    return 2 * x  # (B, T, D)：每个元素都乘以 2
    ### END SOLUTION
'''
SOURCE = f'''\
# %% [markdown]
# # A stage
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint</summary>
#
# twice
# </details>

# %% [markdown] lang="zh"
# # 一个阶段
#
# **难度：** ★☆☆ · **用时：** 约 5 分钟
#
# <details><summary>提示</summary>
#
# 两倍
# </details>

# %% solution="f"
{ENGLISH}
# %% lang="zh"
{CHINESE}
# %% test="f_check"
check_f(f)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_f(f, seed=1)
### END HIDDEN TESTS
'''
STAGE = registry.Stage("99_stage", "a stage")
F = registry.Exercise("f", "99_stage", "f", "somewhere", "check_f", 2)


def build(tmp_path, text, lang):
    source = tmp_path / "99_stage.py"
    source.write_text(text, encoding="utf-8")
    return build_notebooks.build(source, STAGE, (F,), lang=lang)


def test_the_chinese_notebook_reads_the_twin_the_english_its_own_cell_with_the_same_metadata(tmp_path):
    english, chinese = build(tmp_path, SOURCE, "en"), build(tmp_path, SOURCE, "zh")
    assert [c.source for c in english.cells if c.cell_type == "code"][0] == ENGLISH.rstrip("\n")
    assert [c.source for c in chinese.cells if c.cell_type == "code"][0] == CHINESE.rstrip("\n")
    assert [(c.id, c.cell_type, c.metadata) for c in english.cells] == \
        [(c.id, c.cell_type, c.metadata) for c in chinese.cells]
    assert chinese.cells[1].metadata["nbgrader"]["grade_id"] == "f"


@pytest.mark.parametrize("change, reason", [
    (lambda s: s.replace("return 2 * x  # (B, T, D)：", "return 3 * x  # (B, T, D)："),
     "its code differs from the English cell's, not only comments and docstrings (the English has '2' where the "
     "Chinese has '3')"),
    (lambda s: s.replace("### END SOLUTION\n\n# %% test", "### 结束\n\n# %% test"),
     "the nbgrader markers differ: ['### BEGIN SOLUTION', '### END SOLUTION'] in the English, "
     "['### BEGIN SOLUTION'] in the Chinese"),
    (lambda s: s.replace('    """x 的两倍。', '    y = "x 的两倍。"\n    """x 的两倍。'),  # a string that is no docstring
     "its code differs from the English cell's"),
    (lambda s: s.replace("    ### BEGIN SOLUTION\n    return 2 * x  # (B, T, D)：",
                         "    ### BEGIN SOLUTION\n    %time 1\n    return 2 * x  # (B, T, D)："),
     "the IPython lines differ: [] in the English, ['%time 1'] in the Chinese"),
    (lambda s: s.replace("    return 2 * x  # (B, T, D)：", "    return (2 * x)  # (B, T, D)："),  # same tree
     "its code differs from the English cell's, not only comments and docstrings (the English has '2' where the "
     "Chinese has '('"),
    (lambda s: s.replace("    ### BEGIN SOLUTION\n    return 2 * x  # (B, T, D)：",
                         "    ### BEGIN SOLUTION\n    return 2 * x  # (B, T, D)：\n  x"), "the Chinese twin is no Python"),
    (lambda s: s.replace("every entry doubled\n", "every entry doubled\n    # a comment added later\n"),
     "its comments are not where the English cell's are: the English cell has one on its line 9 (on a line of its "
     "own) that the other has not"),
    (lambda s: s.replace("# (B, T, D)：每个元素都乘以 2", ""),
     "the English cell has one on its line 8 (at a line's end) that the other has not"),
])
def test_a_twin_that_changes_the_code_fails_the_build_with_one_line_naming_the_cell(tmp_path, change, reason):
    text = change(SOURCE)
    assert text != SOURCE
    with pytest.raises(build_notebooks.LintError) as e:
        build(tmp_path, text, "zh")
    line = str(e.value).splitlines()[0]  # the twin's own line first (a lost marker also fails the region's lint)
    assert line.startswith("99_stage.py, cell 3: a Chinese code cell may differ from its English cell only in "
                           "comments and docstrings: ") and reason in line, line


def test_a_writefile_cell_compares_its_python_and_keeps_any_other_file_as_it_is():
    assert bilingual.code_differences("%%writefile m.py\nx = 1  # one\n", "%%writefile m.py\nx = 1  # 一\n") is None
    assert "the English has '1' where the Chinese has '2'" in \
        bilingual.code_differences("%%writefile m.py\nx = 1  # one\n", "%%writefile m.py\nx = 2  # 一\n")
    assert "its cell magic differs" in \
        bilingual.code_differences("%%writefile m.py\nx = 1\n", "%%writefile n.py\nx = 1\n")
    assert "is no Python file" in bilingual.code_differences("%%writefile c.yaml\n# steps\n", "%%writefile c.yaml\n# 步\n")


def test_english_sentences_are_told_from_shapes_names_and_markers():
    code = ('def f(x, d_k):\n    """Scaled scores."""\n    ### BEGIN SOLUTION\n'
            '    y = x / d_k  # (B, T, D)\n    z = y  # d_k x\n    w = y  # noqa: E731\n'
            "    v = y  # ['cat', 'mat'] `x.sum(-1)`\n    return z  # the sum of rows\n    ### END SOLUTION\n")
    assert bilingual.english_words(code) == ["# the sum of rows", "Scaled scores."]
    assert bilingual.english_words(code.replace("the sum of rows", "每行之和").replace("Scaled scores.", "缩放后的分数。")) == []
    # one English word is English too ("each", "biased"); the words the Chinese text keeps (the term table's token,
    # softmax ...), special tokens and a linter's code are not
    one_word = "a, b = x, x  # (D, D) each\nc = a  # (B, T), 0 = <pad>\nd = c  # (N, V): softmax\ne = d  # (N,) token\n"
    assert bilingual.english_words(one_word) == ["# (D, D) each"]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_no_code_cell_of_a_chinese_notebook_leaves_english_sentences(source):
    """Every code cell with an English comment or docstring has a Chinese twin that says it in Chinese."""
    chinese = build_notebooks.build(source, lang="zh")
    left = [(i, text) for i, cell in enumerate(chinese.cells) if cell.cell_type == "code"
            for text in bilingual.english_words(cell.source)]
    assert left == [], f"{source.name}: code cells with English comments or docstrings and no Chinese twin: {left}"


def test_a_twin_leaves_its_cell_s_shown_strings_in_the_catalog(tmp_path):
    """A name the English cell only shows is not read by another cell when its twin reads it: the twin is that cell,
    in Chinese (counted as another cell, the strings fell out of course/locale's catalog, shown in English)."""
    source = tmp_path / "99_stage.py"
    code = 'evidence = "none found"  # the result\nprint("result -", evidence)\n'
    source.write_text(f'# %%\n{code}\n# %% lang="zh"\n{code.replace("# the result", "# 结果")}', encoding="utf-8")
    assert bilingual.problems(source) == []
    assert bilingual.shown_strings(source) == ["none found", "result -"]


def test_a_progress_bar_s_name_is_a_shown_string():
    """tqdm's desc= is drawn beside the bar (notebook 09's "train"): the Chinese notebook names it in Chinese."""
    assert [text for _, _, text in bilingual.code_strings('bar = tqdm(range(3), desc="train", mininterval=1.0)\n')] == [
        "train"]
