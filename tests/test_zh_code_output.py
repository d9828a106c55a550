"""Issue 40, item 4: what the code cells of a Chinese notebook print and draw is Chinese.

A Chinese notebook's code is its English cell's (or the cell's Chinese twin, which may differ only in comments and
docstrings); the strings it shows are replaced at build time by their translations (course/locale/zh_CN/LC_MESSAGES,
tools/bilingual.py). This test reads the built Chinese notebooks (tools/build_notebooks.py, from the jupytext sources
in course/) with Python's ``ast``, independently of how the build finds the strings to translate: every string
literal that reaches a learner's eyes (an argument of print() or a plot helper, a title/label/legend argument, a
dict key that becomes a legend entry, a loop's label printed in an f-string) may hold English only as code, names
of the cell, or a term the Chinese text keeps in English (:data:`ALLOWED`); a word of 3 letters or more of any
other English fails, naming the notebook, the cell and the string.

Not covered: code inside an f-string's ``{...}`` (but a field that is a literal, a table header's ``{'total':>10}``,
is text), strings passed through another call (data given to the
code, such as a sentence a tokenizer splits, whose output is then the data's), and what library code prints by
itself (the checks' and the report's messages are tested in tests/test_i18n.py and tests/test_zh_figures.py).
"""
from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from tinylm_checks.messages.terms import TERMS

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "course").glob("[0-9][0-9]_*.py"))

spec = importlib.util.spec_from_file_location("build_notebooks", ROOT / "tools" / "build_notebooks.py")
build_notebooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_notebooks)

WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")
CODE = re.compile(r"\w+(?:\.\w+)+\(?|\w*_\w*|\w+\(|\w+=\S*|\w*\d\w*|<\w+>")  # x.var(, state_dict, rope(, dim=-1,
# linear1, 09_train, <unk>

# The English words the Chinese text keeps: those of the term table's Chinese column (token, softmax, logits,
# dropout, top-k, Pre-LN, Post-LN, bug), and the names below, which are not terms of the table:
ALLOWED = {w.lower() for _, chinese, _ in TERMS for w in WORD.findall(chinese)} | {
    "layernorm", "batchnorm", "gelu", "rms",  # modules and abbreviations the code and the prose use by name
    "pytorch", "gpt", "jieba",  # names: PyTorch, GPT-2, the Chinese word segmenter
    "attn", "ffn", "blocks", "norm",  # modules (block.attn, block.ffn, model.blocks, model.norm): the parts of the
    # parameter tables of 07 and 08
    "one-hot",  # the Chinese text's word for one-hot vectors (独热 is rare)
    "inf", "nan", "sqrt", "nat", "unk", "vs",  # -inf, NaN, sqrt(D), a unit (nats), the unknown token, “A vs B”
    "eval",  # the module mode, as in model.eval()
}
NAMES = re.compile(r"GPT-2 small")  # a model's name
GLOSS = re.compile(r"（[A-Za-z][A-Za-z \-，、,/]*）")  # an English name in parentheses after its Chinese word, the
# course's gloss (as in tests/test_zh_text.py): 有偏方差（biased）


def allowed(word: str) -> bool:
    word = word.lower()
    return word in ALLOWED or word + "s" in ALLOWED or word.removesuffix("s") in ALLOWED  # logit, tokens


SHOWN_BY = re.compile(r"print|plot_\w+|LiveLossPlot|set_title|set_[xy]label|set_[xy]ticklabels|suptitle|legend"
                      r"|annotate|bar_label|Markdown|HTML")
SHOWN_AS = re.compile(r"title|\w*label|labels|hline|legend|desc|evidence")  # keywords whose value a reader reads


def _called(call: ast.Call) -> str:
    return call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")


def _shown_args(call: ast.Call) -> list[ast.AST]:
    args = list(call.args) if SHOWN_BY.fullmatch(_called(call)) else []
    return args + [k.value for k in call.keywords if k.arg and SHOWN_AS.fullmatch(k.arg)]


class Cell:
    """One code cell's syntax tree: what each name is bound to, for following a shown name to its strings."""

    def __init__(self, tree: ast.AST):
        self.tree = tree
        self.assigned: dict[str, list[ast.AST]] = {}  # name -> the values assigned to it
        self.looped: dict[str, list[ast.AST]] = {}  # name -> the items a for loop over a literal binds it to
        self.keyed: dict[str, list[ast.AST]] = {}  # dict name -> the keys of d[key] = ..., d[key].append(...)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(node.value)
            if isinstance(node, ast.For) and isinstance(node.iter, (ast.Tuple, ast.List)):
                targets = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
                for j, target in enumerate(targets):
                    if isinstance(target, ast.Name):
                        for item in node.iter.elts:
                            if isinstance(node.target, ast.Tuple):
                                if isinstance(item, ast.Tuple) and len(item.elts) == len(targets):
                                    self.looped.setdefault(target.id, []).append(item.elts[j])
                            else:
                                self.looped.setdefault(target.id, []).append(item)
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                self.keyed.setdefault(node.value.id, []).append(node.slice)
        self.names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
            {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | \
            {n.arg for n in ast.walk(tree) if isinstance(n, (ast.arg, ast.keyword)) and n.arg} | \
            {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}

    def strings(self, node: ast.AST, seen: frozenset = frozenset()) -> list[str]:
        """The texts a shown expression puts before the reader: its literals, an f-string's text (not its fields'
        code, but a field that is a literal, ``{'total':>10}``, or a name: a loop's label), the keys of a dict
        (legend entries), either branch of ``a if c else b``, and what a name shown this way is bound to in the
        cell. Not a call's arguments."""
        if isinstance(node, ast.Constant):
            return [node.value] if isinstance(node.value, str) else []
        if isinstance(node, ast.JoinedStr):
            parts = [v.value if isinstance(v, ast.FormattedValue) else v for v in node.values]
            return [s for part in parts if isinstance(part, (ast.Constant, ast.Name)) for s in self.strings(part, seen)]
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [s for e in node.elts for s in self.strings(e, seen)]
        if isinstance(node, ast.Dict):
            return [s for k in node.keys if k is not None for s in self.strings(k, seen)]
        if isinstance(node, ast.IfExp):
            return self.strings(node.body, seen) + self.strings(node.orelse, seen)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.strings(node.left, seen) + self.strings(node.right, seen)
        if isinstance(node, ast.Name) and node.id not in seen:
            seen = seen | {node.id}
            bound = self.assigned.get(node.id, []) + self.looped.get(node.id, []) + self.keyed.get(node.id, [])
            return [s for value in bound for s in self.strings(value, seen)]
        return []

    def shown(self) -> list[str]:
        out: dict[str, None] = {}
        for call in (c for c in ast.walk(self.tree) if isinstance(c, ast.Call)):
            for arg in _shown_args(call):
                out.update((s, None) for s in self.strings(arg))
        return list(out)

    def english(self, text: str) -> list[str]:
        """The English words of ``text`` a Chinese learner would have to read."""
        text = CODE.sub(" ", GLOSS.sub(" ", NAMES.sub(" ", text)))
        return [w for w in WORD.findall(text) if len(w) >= 3 and not allowed(w) and w not in self.names]


def english_output(code: str) -> list[tuple[str, list[str]]]:
    """(string, its English words) for every shown string of a code cell that has English words."""
    try:
        cell = Cell(ast.parse(code))
    except SyntaxError:  # IPython magics (%%writefile): files, not output
        return []
    return [(s, words) for s in cell.shown() if (words := cell.english(s))]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_a_chinese_notebook_prints_and_draws_no_english(source):
    notebook = build_notebooks.build(source, lang="zh")
    found = [f"{source.name}, cell {i}: {text!r} (English: {', '.join(words)})"
             for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"
             for text, words in english_output(cell.source)]
    assert found == [], "\n".join(found)


def test_the_output_strings_are_found_where_a_learner_reads_them():
    code = '''
acc = {}
for name in ("plain", "残差"):
    acc[name] = [1.0]
plot_depth_profile(acc, acc)
for label, m in (("untrained", 1), ("训练后", 2)):
    print(f"{label}: {m:.2f} {'total':>6}")
ax.set_title("loss curve"); ax.set_xlabel("步数")
live = LiveLossPlot(10, title="training on the corpus")
plot_loss_curves({"healthy": a}, hline=(2.0, "ln V: guessing"))
print("第", step, "步", "done" if ok else "失败")
print(tokenizer.encode("The cat sat"))  # data given to the code: not shown as such
print(f"{token_emb.weight.shape}: state_dict, x.var(dim=-1), 09_train, <unk>, top-k, logits, Pre-LN, bug")
'''
    assert sorted(english_output(code)) == sorted([
        ("plain", ["plain"]), ("untrained", ["untrained"]), ("loss curve", ["loss", "curve"]),
        ("training on the corpus", ["training", "the", "corpus"]), ("healthy", ["healthy"]),
        ("ln V: guessing", ["guessing"]), ("done", ["done"]), ("total", ["total"])])
    # a word that is a name of the cell is code: print("acc:", acc)
    assert english_output('acc = 1\nprint("acc:", acc)\n') == []
