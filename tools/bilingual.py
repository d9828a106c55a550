"""The two languages of a course source: every English markdown cell is followed by its Chinese twin.

    # %% [markdown]
    # ## 2. Why divide by $\\sqrt{d_k}$
    # ...

    # %% [markdown] lang="zh"
    # ## 2. 为什么要除以 $\\sqrt{d_k}$
    # ...

A twin carries only ``lang="zh"``: the English cell's other markers (``answer=...``, ``solution=...``) hold for
both. :func:`select` gives the cells of one language, :func:`problems` what a source's Chinese lacks.

A code cell that a learner reads (an exercise's docstring is its contract; comments explain the code) has a Chinese
twin that is the same code with its comments and docstrings in Chinese (:func:`code_differences` says where it is
more; nbgrader's ``### BEGIN SOLUTION`` markers stay as they are):

    # %% solution="attention_scores"
    def attention_scores(q, k):
        '''Scaled dot products between every query and every key.'''
        ### BEGIN SOLUTION
        return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
        ### END SOLUTION

    # %% lang="zh"
    def attention_scores(q, k):
        '''每个查询与每个键之间的缩放点积。'''
        ### BEGIN SOLUTION
        return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
        ### END SOLUTION

The other kind of code twin is a *data cell*'s: a data cell only assigns names that the shared cells after it use
(the text a notebook trains on, the prompts it samples from), and its twin assigns them Chinese values, so that a
Chinese notebook trains on Chinese text:

    # %%
    text = corpus("en")
    PROMPT = "Return the "

    # %% lang="zh"
    text = corpus("zh", max_chars=100_000)
    PROMPT = "春风"

Both assign the same names in the same order and do nothing else (:func:`data_names`); no exercise owns them.

A Chinese notebook that trains on other text gets other results. The markdown twin that states them carries
``run="zh"``: it keeps its English cell's code, formulas and links, but states the numbers of the Chinese run, not
the English cell's (:func:`own_numbers`), and a claims test quotes each of those numbers in the sentence it tests
(``tests/test_claims_09.py``).

    # %% [markdown] lang="zh" run="zh"
    # 健康的那次运行停在 0.05 附近 ...

    python tools/bilingual.py 01          # the problems of course/01_*.py's Chinese, or "ok"
"""
from __future__ import annotations

import functools
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
    """A Chinese twin: a markdown cell's, or a data cell's (a code cell marked ``lang="zh"``)."""
    return cell.cell_type in ("markdown", "code") and cell.metadata.get("lang") == "zh"


def data_names(code: str) -> list[str] | None:
    """The names a data cell assigns, in order, or None when the code is not a data cell: every statement is an
    assignment (``a = ...``, ``a, b = ...``) to plain names, nothing else (no call without an assignment, no loop,
    no definition)."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    names: list[str] = []
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            return None
        for target in node.targets:
            elts = target.elts if isinstance(target, ast.Tuple) else [target]
            if not all(isinstance(e, ast.Name) for e in elts):
                return None
            names += [e.id for e in elts]
    return names or None


def own_numbers(cell) -> bool:
    """Whether a Chinese twin states its own run's numbers (``run="zh"``) rather than its English cell's."""
    return is_twin(cell) and cell.metadata.get("run") == "zh"


def numbers(text: str) -> set[str]:
    """The numbers of a markdown cell's prose (not those in code spans, formulas, links or fenced blocks)."""
    return _spans(NUMBER, MATH.sub(" ", CODE.sub(" ", LINK.sub(" ", FENCE.sub(" ", text)))))


def pairs(cells) -> list[tuple[int, object, object | None]]:
    """Each English markdown cell with its Chinese twin (None when it has none): ``(index, english, chinese)``."""
    out = []
    for i, cell in enumerate(cells):
        if cell.cell_type == "markdown" and not is_twin(cell):
            nxt = cells[i + 1] if i + 1 < len(cells) else None
            out.append((i, cell, nxt if nxt is not None and is_twin(nxt) and nxt.cell_type == "markdown" else None))
    return out


def select(cells, lang: str) -> list:
    """The cells of a notebook in ``lang``: English drops the twins; Chinese puts each twin's text in its English
    cell's place (keeping that cell's metadata). A missing twin keeps the English (the build's lint says so)."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    out = []
    for i, cell in enumerate(cells):
        if is_twin(cell):
            if lang == "zh" and out and out[-1].cell_type == cell.cell_type:
                out[-1].source = cell.source
            continue
        out.append(cell)
    return out


TWIN = re.compile(r'# %%( \[markdown\])? lang="zh"')
"""How a Chinese twin's cell starts in a percent source."""


def source_cells(text: str, lang: str = "en") -> list[str]:
    """A percent source's cells, as source text, in ``lang``: each Chinese twin in its English cell's place, or left
    out (for tests that read the sources as text, without jupytext)."""
    out: list[str] = []
    for cell in re.split(r"\n(?=# %%)", text):
        if TWIN.match(cell):
            if lang == "zh" and out:
                out[-1] = cell
            continue
        out.append(cell)
    return out


def _spans(pattern: re.Pattern, text: str) -> set[str]:
    return {re.sub(r"\s+", " ", m.group(0)) for m in pattern.finditer(text)}


@functools.lru_cache(maxsize=1)
def check_words() -> dict[str, str]:
    """A check's fixed words (a message without fields: its labels ``tried``, ``expected``, ``got``, a headline such
    as ``pe is not in state_dict()``), English -> what the Chinese notebook shows instead. A Chinese cell names them
    by their Chinese; their English is explained once, in notebook 00's table of a check's lines."""
    from tinylm_checks import _text
    from tinylm_solutions import i18n

    with i18n.using("zh"):
        return {english: _text.text(key) for key, english in _text.TEXT.items() if "{" not in english}


def cell_problems(english: str, chinese: str, own_run: bool = False) -> list[str]:
    """What the Chinese of one cell drops from the English: numbers (unless ``own_run``: the twin states the Chinese
    run's), code spans, formulas, links, the difficulty line, the hints' <details> blocks, the headings' levels."""
    problems = []
    if not own_run:
        missing = numbers(english) - _spans(NUMBER, FENCE.sub(" ", chinese))
        if missing:
            problems.append(f"numbers not in the Chinese: {sorted(missing)}")
    english, chinese = FENCE.sub(" ", english), FENCE.sub(" ", chinese)
    for name, pattern in (("code", CODE), ("math", MATH), ("link", LINK)):
        missing = _spans(pattern, english) - _spans(pattern, chinese)
        if name == "code":  # a check's words (`tried:`) are named as the Chinese notebook shows them (“尝试”)
            missing = {s for s in missing if (shown := check_words().get(s.strip("`").rstrip(":"))) is None
                       or shown not in chinese}
        if missing:
            problems.append(f"{name} not in the Chinese: {sorted(missing)}")
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


# ------------------------------------------------------------------------------------- strings in code cells
# A code cell is shared by both languages, but what it prints or draws is read by the learner: the Chinese notebook
# carries the same code with those strings in Chinese (course/locale/zh_CN/LC_MESSAGES/<stage>.po). Only strings
# the code shows are translated: arguments of print(), of a plot helper (plot_*, LiveLossPlot) and of a figure's
# set_title/set_xlabel/set_ylabel/suptitle/set_xticks/set_yticks (tick labels), and title=/label= keywords; directly,
# as a key or item of a dict, list or tuple there, or held by a name (a loop's or an assignment's) that is only shown
# (or keys a legend dict: a dict only drawn, indexed and printed, such as 06's wirings);
# never inside another call (a prompt given to a model stays what the English gives it).
SHOWN_BY = re.compile(r"print|plot_\w+|LiveLossPlot|set_title|set_[xy]label|set_[xy]ticks|set_[xy]ticklabels|suptitle")
SHOWN_AS = re.compile(r"title|\w*label|hline|evidence|desc")  # evidence=: a record_run sentence that the report
# prints; desc=: a progress bar's name (tqdm)
WORDS = re.compile(r"[A-Za-z]{2}")  # a word: "x:" and "D / H =" are code alone
LITERAL = re.compile(r"([rRfFuU]*)('''|\"\"\"|'|\")(.*)\2", re.S)


def _shown(node) -> list:
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str) or isinstance(node, ast.JoinedStr):
        return [node]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [s for e in node.elts for s in _shown(e)]
    if isinstance(node, ast.IfExp):  # "a" if x else "b": either is shown
        return _shown(node.body) + _shown(node.orelse)
    if isinstance(node, ast.Dict):
        return [s for e in node.keys if e is not None for s in _shown(e)]
    return []


def _shown_args(call) -> list:
    """The arguments of a call that it shows: all of print()'s or a plot helper's, and title=/label= keywords."""
    name = call.func.id if type(call.func).__name__ == "Name" else getattr(call.func, "attr", "")
    args = list(call.args) if SHOWN_BY.fullmatch(name) else []
    return args + [k.value for k in call.keywords if k.arg and SHOWN_AS.fullmatch(k.arg)]


def _shown_uses(tree) -> set[int]:
    """The ids of the Name nodes in ``tree`` that are a shown argument, or an f-string field's value there."""
    import ast

    ids = set()
    for call in (c for c in ast.walk(tree) if isinstance(c, ast.Call)):
        for arg in _shown_args(call):
            fields = [v.value for v in arg.values if isinstance(v, ast.FormattedValue)] \
                if isinstance(arg, ast.JoinedStr) else [arg]
            ids |= {id(f) for f in fields if isinstance(f, ast.Name)}
    return ids


def _assigned_labels(tree, elsewhere: frozenset[str]) -> list:
    """Strings a name holds only to be shown: in ``evidence = f"..." if found else "none found"``, the strings on
    the right when ``evidence`` is assigned once in the cell, its every use is a shown argument or a field of a
    shown f-string there, and no other cell reads it (``elsewhere``: there it could be data)."""
    import ast

    uses = _shown_uses(tree)
    stores: dict[str, list] = {}
    reads: dict[str, list] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (stores if isinstance(node.ctx, ast.Store) else reads).setdefault(node.id, []).append(node)
    found = []
    for assign in (n for n in ast.walk(tree) if isinstance(n, ast.Assign)):
        if len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name):
            continue
        name = assign.targets[0].id
        strings = _shown(assign.value)
        if strings and name not in elsewhere and len(stores[name]) == 1 and reads.get(name) and all(id(n) in uses for n in reads[name]):
            found += strings
    return found


def _legend_keys(tree, elsewhere: frozenset[str]) -> set[int]:
    """The ids of the Name nodes in ``tree`` that are only the key of a legend dict: in ``std = {}``, then
    ``std[name] = ...`` and ``plot_depth_profile(std, ...)``, the ``name`` of ``std[name]``. A legend dict is a name
    assigned ``{}`` once in the cell, read by no other cell (``elsewhere``), and read only as a shown argument, as
    ``d[key]``, or as ``for k, v in d.items():`` whose ``k`` is only shown: its keys are labels, renaming them all
    alike changes nothing the code computes."""
    import ast

    uses = _shown_uses(tree)
    stores: dict[str, list] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = (zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple)
                         and isinstance(node.value, ast.Tuple) and len(target.elts) == len(node.value.elts)
                         else [(target, node.value)])
                for t, v in pairs:
                    if isinstance(t, ast.Name):
                        stores.setdefault(t.id, []).append(v)
        elif isinstance(node, (ast.For, ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.With)):
            for t in ast.walk(getattr(node, "target", None) or ast.Tuple([])):
                if isinstance(t, ast.Name):
                    stores.setdefault(t.id, []).append(None)
    parents = {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}

    def key_only_shown(loop, key) -> bool:  # for key, v in d.items(): key is only shown
        return isinstance(key, ast.Name) and all(
            id(n) in uses for stmt in loop.body for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == key.id)

    keys: set[int] = set()
    for name, values in stores.items():
        if name in elsewhere or len(values) != 1 or not (isinstance(values[0], ast.Dict) and not values[0].keys):
            continue
        found, ok = [], True
        for read in (n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
                     and isinstance(n.ctx, ast.Load)):
            parent = parents.get(id(read))
            if id(read) in uses:
                continue
            if isinstance(parent, ast.Subscript) and parent.value is read:
                if isinstance(parent.slice, ast.Name):
                    found.append(id(parent.slice))
                continue
            call, loop = parents.get(id(parent)), parents.get(id(parents.get(id(parent))))
            if (isinstance(parent, ast.Attribute) and parent.attr == "items" and isinstance(call, ast.Call)
                    and isinstance(loop, ast.For) and loop.iter is call and isinstance(loop.target, ast.Tuple)
                    and key_only_shown(loop, loop.target.elts[0])):
                continue
            ok = False
        if ok:
            keys.update(found)
    return keys


def _loop_labels(tree, elsewhere: frozenset[str] = frozenset()) -> list:
    """Strings a ``for`` loop over a literal table only shows: in ``for name, m in (("untrained", a), ("trained",
    b)):``, the strings bound to ``name`` when every use of ``name`` in the loop is a field of a shown f-string, a
    shown argument itself, or the key of a legend dict (:func:`_legend_keys`; a name also used as code,
    ``getattr(layer, name)``, keeps its strings as they are)."""
    import ast

    found = []
    legend = _legend_keys(tree, elsewhere)
    for loop in ast.walk(tree):
        if not (isinstance(loop, ast.For) and isinstance(loop.iter, (ast.Tuple, ast.List))
                and isinstance(loop.target, ast.Tuple)):
            continue
        rows = loop.iter.elts
        if not rows or not all(isinstance(r, ast.Tuple) and len(r.elts) == len(loop.target.elts) for r in rows):
            continue
        uses = _shown_uses(loop)
        for j, target in enumerate(loop.target.elts):
            if not isinstance(target, ast.Name):  # for label, (a, b) in ...: only a name's column can be labels
                continue
            column = [r.elts[j] for r in rows]
            if not all(isinstance(c, ast.Constant) and isinstance(c.value, str) for c in column):
                continue
            reads = [n for stmt in loop.body for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == target.id]
            if reads and all(id(n) in uses or id(n) in legend for n in reads):
                found += column
    return found


def code_strings(code: str, elsewhere: frozenset[str] = frozenset()) -> list[tuple[int, int, str]]:
    """The strings a code cell shows the learner, as ``(start, end, text)``: ``code[start:end]`` is the literal
    (prefix and quotes included) and ``text`` what is inside its quotes, the catalog's ``msgid``. A cell that does
    not parse (IPython magics) shows none. ``elsewhere``: the names the notebook's other cells read
    (:func:`read_elsewhere`)."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    lines = code.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:  # ast's columns count UTF-8 bytes
        return starts[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode())

    nodes = [s for call in ast.walk(tree) if isinstance(call, ast.Call) for a in _shown_args(call) for s in _shown(a)]
    found = set()
    for node in nodes + _loop_labels(tree, elsewhere) + _assigned_labels(tree, elsewhere):
        start = offset(node.lineno, node.col_offset)
        segment = code[start:offset(node.end_lineno, node.end_col_offset)]
        for part in _literals(segment):  # "a" "b": an implicit concatenation's parts one by one
            m = LITERAL.fullmatch(segment[part[0]:part[1]])
            if m and WORDS.search(m.group(3)):
                found.add((start + part[0], start + part[1], m.group(3)))
    return sorted(found)


def _literals(segment: str) -> list[tuple[int, int]]:
    """Where the string tokens of ``segment`` (one string expression) start and end."""
    import io
    import tokenize

    wrapped = f"({segment})"  # in brackets, the parts of an implicit concatenation may sit on several lines
    lines = wrapped.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return [(starts[t.start[0] - 1] + t.start[1] - 1, starts[t.end[0] - 1] + t.end[1] - 1)
            for t in tokenize.generate_tokens(io.StringIO(wrapped).readline) if t.type == tokenize.STRING]


def read_elsewhere(cells) -> list[frozenset[str]]:
    """For each cell, the names that the notebook's other code cells read: a string one cell assigns to a name only
    to show it may be data where another cell reads that name, and translated there it would change what that cell
    computes."""
    import ast

    reads = []
    for cell in cells:
        try:
            tree = ast.parse(cell.source) if cell.cell_type == "code" else None
        except SyntaxError:  # IPython magics
            tree = None
        reads.append({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
                     if tree else set())
    return [frozenset().union(*(r for j, r in enumerate(reads) if j != i)) for i in range(len(reads))]


def translate_code(code: str, table: dict[str, str], elsewhere: frozenset[str] = frozenset()) -> str:
    """``code`` with each shown string that ``table`` translates replaced (its prefix and quotes kept)."""
    for start, end, text in reversed(code_strings(code, elsewhere)):
        if table.get(text):
            m = LITERAL.fullmatch(code[start:end])
            code = code[:start] + m.group(1) + m.group(2) + table[text] + m.group(2) + code[end:]
    return code


def code_shape(code: str) -> str:
    """A cell's code with every string's text left out (an f-string keeps its fields, sorted): an English cell and
    its Chinese build have the same shape, so they compute the same."""
    import ast

    class Blank(ast.NodeTransformer):
        def visit_Constant(self, node):
            return ast.Constant("") if isinstance(node.value, str) else node

        def visit_JoinedStr(self, node):
            fields = sorted((v for v in node.values if isinstance(v, ast.FormattedValue)), key=ast.dump)
            return ast.JoinedStr([self.visit(v) for v in fields])

    return ast.dump(Blank().visit(ast.parse(code)))


def translatable(cell) -> bool:
    """A shared code cell that no exercise owns (nbgrader checks an exercise's cells against their source)."""
    return cell.cell_type == "code" and not {"solution", "test", "nbgrader"} & set(cell.metadata)


def shown_strings(source: Path) -> list[str]:
    """The texts of the strings that the shared code cells of ``source`` show, each once, in order."""
    import jupytext

    out: dict[str, None] = {}
    cells = select(jupytext.read(source).cells, "en")  # the notebook's cells: a twin is no other cell that reads
    for cell, elsewhere in zip(cells, read_elsewhere(cells)):  # a name (it is its English cell, in Chinese)
        if translatable(cell):
            out.update((text, None) for _, _, text in code_strings(cell.source, elsewhere))
    return list(out)


def problems(source: Path) -> list[str]:
    """Every English markdown cell of ``source`` that has no Chinese twin or whose twin drops something."""
    import jupytext

    nb = jupytext.read(source)
    out = []
    for i, cell in enumerate(nb.cells):
        before = nb.cells[i - 1] if i else None
        if is_twin(cell) and (before is None or before.cell_type != cell.cell_type or is_twin(before)):
            out.append(f"{source.name}, cell {i}: a Chinese cell that follows no English {cell.cell_type} cell")
        elif is_twin(cell) and cell.cell_type == "code":
            english, chinese = data_names(before.source), data_names(cell.source)
            if translatable(before) and english is not None and english == chinese:
                continue  # a data cell's twin
            if english is not None or chinese is not None:
                out.append(f"{source.name}, cell {i}: a Chinese code cell must be the twin of a data cell: both only "
                           f"assign the same names, in the same order (the English assigns {english}, the Chinese "
                           f"{chinese})")
            elif (reason := code_differences(before.source, cell.source)) is not None:
                out.append(f"{source.name}, cell {i}: a Chinese code cell may differ from its English cell only in "
                           f"comments and docstrings: {reason}")
    for i, english, chinese in pairs(nb.cells):
        where = f"{source.name}, cell {i} ({english.source.strip().splitlines()[0][:50] if english.source.strip() else ''!r})"
        if chinese is None:
            out.append(f"{where}: no Chinese twin")
            continue
        out += [f"{where}: {p}" for p in cell_problems(english.source, chinese.source, own_numbers(chinese))]
    return out



# ------------------------------------------------------------------------------------- a code cell's Chinese twin
# A code cell a learner reads (an exercise's contract in its docstring, what its comments explain) has a Chinese twin
# too: the same code, its comments and docstrings in Chinese. The build puts the twin in the English cell's place
# (keeping that cell's markers and nbgrader metadata) only when the code is one (:func:`code_differences`).
MARKERS = re.compile(r"^\s*###? *(?:BEGIN|END) (?:SOLUTION|HIDDEN TESTS)\b.*$", re.M)  # nbgrader's regions
IPYTHON = re.compile(r"^([ \t]*)([%!].*)$", re.M)  # a line magic or shell line: not Python, compared as it is


def _docstrings(tree) -> list:
    import ast

    return [node.body[0].value for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
            and isinstance(node.body[0].value.value, str)]


def _code_without_words(code: str):
    """``(ast dump without docstrings, tokens without comments and docstrings, IPython lines, nbgrader markers,
    where the comments are)`` of a code cell; raises SyntaxError (or tokenize.TokenError) where it is no Python."""
    import ast
    import io
    import tokenize

    python = IPYTHON.sub(lambda m: m.group(1) + "pass", code)
    tree = ast.parse(python)
    docs = {(d.lineno, d.col_offset) for d in _docstrings(tree)}
    for d in _docstrings(tree):
        d.value = ""
    lines = python.splitlines(keepends=True)

    def col(row: int, char: int) -> int:  # tokenize counts characters, ast UTF-8 bytes
        return len(lines[row - 1][:char].encode())

    tokens, comments, last_row = [], [], 0
    for t in tokenize.generate_tokens(io.StringIO(python).readline):
        if t.type == tokenize.COMMENT:  # where it sits: after which code token, on that token's line or its own
            where = (len(tokens), "at a line's end" if t.start[0] == last_row else "on a line of its own")
            if not MARKERS.fullmatch(t.string) and (not comments or comments[-1][:2] != where):  # several lines: one
                comments.append((*where, t.start[0]))
        elif t.type != tokenize.NL and not (t.type == tokenize.STRING and (t.start[0], col(*t.start)) in docs):
            tokens.append((t.type, t.string))
            last_row = t.end[0]
    return (ast.dump(tree), tokens, [m.group(2) for m in IPYTHON.finditer(code)],
            [m.group(0).strip() for m in MARKERS.finditer(code)], comments)


WRITES_MARKDOWN = re.compile(r"%%writefile\s+(-a\s+)?\S+\.md")
"""A cell that writes a Markdown file (the capstone's report.md): its body is text, written in the learner's language."""


def markdown_differences(english: str, chinese: str) -> str | None:
    """Why the Markdown file a Chinese twin writes does not match its English cell's, or None: the same nbgrader
    markers and the same headings' levels, in order (the text, headings included, is the learner's language)."""
    en_marks, zh_marks = MARKERS.findall(english), MARKERS.findall(chinese)
    if [m.strip() for m in en_marks] != [m.strip() for m in zh_marks]:
        return f"the nbgrader markers differ: {len(en_marks)} in the English, {len(zh_marks)} in the Chinese"
    heads = lambda t: [len(m) for m in re.findall(r"^(#+) ", MARKERS.sub("", t), re.M)]  # noqa: E731
    if heads(english) != heads(chinese):
        return f"its Markdown's headings differ: levels {heads(english)} in the English, {heads(chinese)} in the Chinese"
    return None


def code_differences(english: str, chinese: str) -> str | None:
    """Why a code cell's Chinese twin is not the same code as its English cell, or None when it is: the two may
    differ only in comments and docstrings (compared as syntax trees without docstrings, and as token streams
    without comments and docstrings), with the same IPython lines, the same nbgrader region markers
    (``### BEGIN SOLUTION`` ...) and a comment where the English has one (an English comment added later and not
    translated fails too). A cell magic's cell compares its first line as it is and its body as Python when it
    writes a Python file (``%%writefile model.py``), as Markdown when it writes a Markdown file (``%%writefile
    report.md``: a text in the learner's language, with the English's headings' levels and nbgrader markers, see
    :func:`markdown_differences`); any other cell magic's body must be the same."""
    import tokenize

    if english == chinese:
        return None
    if english.lstrip().startswith("%%") or chinese.lstrip().startswith("%%"):
        (en_magic, _, en_body), (zh_magic, _, zh_body) = english.partition("\n"), chinese.partition("\n")
        if en_magic.strip() != zh_magic.strip():
            return f"its cell magic differs: {en_magic.strip()!r} in the English, {zh_magic.strip()!r} in the Chinese"
        if WRITES_MARKDOWN.fullmatch(en_magic.strip()):
            return markdown_differences(en_body, zh_body)
        if not re.fullmatch(r"%%writefile\s+(-a\s+)?\S+\.py", en_magic.strip()):
            return f"the body of {en_magic.strip()!r} is no Python file: it must be the English cell's"
        english, chinese = en_body, zh_body
    try:
        en = _code_without_words(english)
    except (SyntaxError, tokenize.TokenError) as e:
        return f"the English cell is no Python ({e})"
    try:
        zh = _code_without_words(chinese)
    except (SyntaxError, tokenize.TokenError) as e:
        return f"the Chinese twin is no Python ({e})"
    if en[3] != zh[3]:
        return f"the nbgrader markers differ: {en[3]} in the English, {zh[3]} in the Chinese"
    if en[2] != zh[2]:
        return f"the IPython lines differ: {en[2]} in the English, {zh[2]} in the Chinese"
    if en[0] != zh[0] or en[1] != zh[1]:
        diff = next(((a, b) for a, b in zip(en[1], zh[1]) if a != b), None)
        where = f" (the English has {diff[0][1]!r} where the Chinese has {diff[1][1]!r})" if diff else ""
        return f"its code differs from the English cell's, not only comments and docstrings{where}"
    en_at, zh_at = [c[:2] for c in en[4]], [c[:2] for c in zh[4]]
    if en_at != zh_at:  # a comment added to the English cell (or taken out) and not to its twin
        missing, extra = [c for c in en[4] if c[:2] not in zh_at], [c for c in zh[4] if c[:2] not in en_at]
        which, (_, kind, row) = ("English", missing[0]) if missing else ("Chinese", extra[0])
        return (f"its comments are not where the English cell's are: the {which} cell has one on its line {row} "
                f"({kind}) that the other has not")
    return None


CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
NOT_WORDS = re.compile(r"`[^`\n]*`|\$[^$\n]*\$|'[^'\n]*'|\"[^\"\n]*\""  # code spans, formulas, quoted values,
                       r"|\((?:[\w.*+/^=-]+(?:, ?[\w.*+/^=-]+)*,?)?\)")  # shapes: (B, T, D), (..., T_q, T_k), (T,)


def english_words(code: str) -> list[str]:
    """The comments and docstrings of a code cell that a learner reads in English: those without Chinese that hold
    two words or more that are not names of the cell's code (``# (B, T, D)``, ``# noqa: E731``, ``# d_k`` are
    not sentences; nbgrader's markers and commented-out IPython lines are not read)."""
    import ast
    import io
    import tokenize

    python = IPYTHON.sub(lambda m: m.group(1) + "pass", code)
    try:
        tree = ast.parse(python)
        comments = [t.string for t in tokenize.generate_tokens(io.StringIO(python).readline)
                    if t.type == tokenize.COMMENT]
    except (SyntaxError, tokenize.TokenError):
        return []
    names = code_names(tree)
    return [text for text in [c for c in comments if not MARKERS.fullmatch(c) and not re.match(r"#\s*[%!]", c)]
            + [d.value for d in _docstrings(tree)] if is_english(text, names)]


def code_names(tree) -> set[str]:
    """The names a cell's code uses: variables, attributes, arguments, functions and classes."""
    import ast

    return ({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
            | {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
            | {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))})


@functools.cache
def kept_english() -> frozenset[str]:
    """The words the Chinese text writes in English: the term table's (tinylm_checks/messages/terms.py: token,
    logits, softmax, dropout, bug ...), lower-case."""
    import runpy

    terms = runpy.run_path(str(Path(__file__).resolve().parent.parent / "tinylm_checks" / "messages" / "terms.py"))
    return frozenset(w.lower() for en, zh, _ in terms["TERMS"] if not CJK.search(zh) for w in re.findall(r"\w+", zh))


def is_english(text: str, names: set[str]) -> bool:
    """Whether a comment or docstring is English a learner reads: no Chinese, and a word of three letters or more
    that is not one of ``names`` nor a word the Chinese text keeps in English (outside code spans, formulas, quoted
    values, shapes, special tokens such as <pad> and linters' codes such as E731)."""
    prose = re.sub(r"<\w+>|# noqa: [A-Z]\d+|# type: ignore", " ", NOT_WORDS.sub(" ", text))
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9_']{2,}", prose)
             if w not in names and w.lower() not in kept_english()]
    return not CJK.search(text) and len(words) >= 1


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent / "course"
    found = []
    for prefix in sys.argv[1:] or [""]:
        for source in sorted(root.glob(f"{prefix}*.py")):
            found += problems(source)
    print("\n".join(found) or "ok")
    sys.exit(1 if found else 0)
