"""The checks' message table (tinylm_checks.messages, read by tinylm_checks._text): every sentence a learner reads
from a check lives there, once, under a stable id, as a template with named fields; the checks use only ids
the table has, give every field a template needs, and leave no sentence of their own in the code.

The code is read with ``ast``: a message id is a string literal passed to ``ctx.fail``, ``ctx.failure``, a
``slip`` of ``ctx.slips()``, ``say``, ``hints`` or ``expect_param_count``; a mistake is ``MISTAKE.<id>``.
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import string
from pathlib import Path

import pytest

import tinylm_checks
from tinylm_checks import _text, messages

CHECKS = Path(tinylm_checks.__file__).parent
RESERVED = {"mistake", "tried", "expected", "got", "hint", "mistake_hint", "message_id", "matrices"}  # Ctx.failure's own keywords
FORMAT_SPEC = re.compile(r"^([^{}]?[<>=^])?[+\- ]?#?0?\d*[,_]?(\.\d+)?[bcdeEfFgGnosxX%]?$")
ID_ARG = {"fail": 0, "failure": 0, "slip": 0, "say": 0, "hints": 0, "expect_param_count": 3}
# Not check code: the table itself, its reader, the learner's tools (their labels are issue 3 of 5's), the probes
# (whose words are errors about their own use, read by the checks' authors).
NOT_CHECKS = ("messages", "lab", "_text.py", "probes.py")


def check_sources() -> dict[Path, ast.Module]:
    files = [p for p in sorted(CHECKS.rglob("*.py")) if not any(part in NOT_CHECKS for part in p.relative_to(CHECKS).parts)]
    return {p: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in files}


def message_sources() -> dict[Path, ast.Module]:
    """Everything that speaks from the message table: the checks, the learner's tools (``lab``) and the grader
    (its notes in the feedback, ``tinylm-class-report``)."""
    others = [*sorted((CHECKS / "lab").glob("*.py")), *sorted((CHECKS.parent / "tinylm_grading").glob("*.py"))]
    return {**check_sources(), **{p: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in others}}


def func_name(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def uses():
    """Every literal message id the checks and tools use: (file, line, function, id, keyword names or None for **kw)."""
    for path, tree in message_sources().items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or func_name(node) not in ID_ARG:
                continue
            i = ID_ARG[func_name(node)]
            if len(node.args) > i and isinstance(node.args[i], ast.Constant) and isinstance(node.args[i].value, str):
                keywords = None if any(k.arg is None for k in node.keywords) else {k.arg for k in node.keywords}
                yield path.name, node.lineno, func_name(node), node.args[i].value, keywords


def entries():
    """(module, id, value) of every entry of every messages module."""
    for info in pkgutil.iter_modules(messages.__path__):
        module = importlib.import_module(f"{messages.__name__}.{info.name}")
        for key, value in getattr(module, "MESSAGES", {}).items():
            yield info.name, key, value


def test_no_id_is_defined_twice():
    assert _text.CLASHES == []


def test_every_messages_module_contributes():
    modules = {info.name for info in pkgutil.iter_modules(messages.__path__)} - {"terms"}  # terms: the glossary's
    assert modules and modules == set(_text.ORIGIN.values())


@pytest.mark.parametrize("key", sorted(k for k in _text.TEXT if not k.startswith("mistakes.")))  # mistakes: plain text
def test_every_template_has_named_fields_only(key):
    for literal, name, spec, conversion in string.Formatter().parse(_text.TEXT[key]):
        if name is None:
            continue
        assert name.isidentifier(), f"{key}: field {{{name}}} (braces in the text are written {{{{ }}}})"
        assert name not in RESERVED or key.rsplit(".", 1)[-1] not in _text.PARTS, \
            f"{key}: field {{{name}}} is a keyword of Ctx.failure"
        assert conversion is None and FORMAT_SPEC.match(spec), f"{key}: {{{name}:{spec}}}"


def test_every_entry_is_a_text_a_failure_or_a_hint_table():
    for module, key, value in entries():
        if isinstance(value, str):
            continue
        assert isinstance(value, dict) and value, f"{module}: {key}"
        if set(value) <= set(_text.PARTS):
            assert "problem" in value, f"{module}: failure {key} has no problem"
        else:
            unknown = set(value) - set(tinylm_checks.MISTAKES)
            assert not unknown, f"{module}: {key} is neither a failure nor a hint table ({sorted(unknown)})"


def test_every_id_the_checks_use_exists_and_gets_its_fields():
    problems = []
    for file, line, fn, key, keywords in uses():
        where = f"{file}:{line} {fn}({key!r})"
        if fn == "hints":
            try:
                _text.hints(key)
            except _text.MessageError as e:
                problems.append(f"{where}: {e}")
            continue
        templates = [_text.TEXT[key]] if fn == "say" and key in _text.TEXT else \
            [t for part in _text.PARTS for k, t in _text.TEXT.items() if k == f"{key}.{part}"]
        if not templates or fn != "say" and f"{key}.problem" not in _text.TEXT:
            problems.append(f"{where}: no such {'text' if fn == 'say' else 'failure'}")
            continue
        if keywords is None:
            continue
        needed = set().union(*(_text.fields(t) for t in templates))
        if fn == "expect_param_count":
            needed.discard("expected_n")  # expect_param_count gives it
        missing = needed - keywords
        unused = keywords - needed - RESERVED - {"mistakes"}
        if missing:
            problems.append(f"{where}: the template needs {sorted(missing)}")
        if unused:
            problems.append(f"{where}: no template uses {sorted(unused)}")
    assert not problems, "\n".join(problems)


def test_every_mistake_named_in_the_checks_is_the_table_s():
    """``MISTAKE.<id>`` names a mistake the table has (the attribute fails at run time otherwise: this finds a typo
    before a learner meets it), and a mistake is never a bare string the table cannot vouch for."""
    problems = []
    for path, tree in check_sources().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "MISTAKE" \
                    and node.attr not in tinylm_checks.MISTAKES:
                problems.append(f"{path.name}:{node.lineno}: no mistake {node.attr!r}")
            if isinstance(node, ast.keyword) and node.arg in ("mistake", "mistake_if_raises") \
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                problems.append(f"{path.name}:{node.lineno}: mistake={node.value.value!r} (write MISTAKE.<id>)")
    assert not problems, "\n".join(problems)


def _string_constants(tree: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
    return found


def _mistake_attributes(tree: ast.Module) -> set[str]:
    return {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "MISTAKE"}


LOOKUP = {**ID_ARG, "text": 0, "fill": 0, "parts": 0, "_say": 0, "note": 1}
"""Where a message is looked up by its id: function name -> the position of the id argument (``_say`` and ``note``
are the grader's wrappers of ``say``)."""


def _ids_looked_up(node: ast.expr) -> tuple[set[str], set[str]]:
    """The ids an id argument can be: (exact ids, prefixes of ids built in the call: ``f"capstone.part.{part}"``,
    ``"axis." + name``). Both branches of ``a if c else b`` count; a bare name counts nothing here (its value is
    a string constant elsewhere, which :func:`test_every_message_is_used` looks for by its full name)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}, set()
    if isinstance(node, ast.IfExp):
        (a, pa), (b, pb) = _ids_looked_up(node.body), _ids_looked_up(node.orelse)
        return a | b, pa | pb
    first = node.values[0] if isinstance(node, ast.JoinedStr) and node.values else \
        node.left if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.endswith("."):
        return set(), {first.value}
    return set(), set()


def used_ids() -> tuple[set[str], set[str], set[str], set[str]]:
    """What the checks, tools and grader use of the table: (ids looked up by name, prefixes of ids built where they
    are looked up, ids of hint tables, every string constant of the code)."""
    exact, prefixes, tables, constants = set(), set(), set(), set()
    for tree in message_sources().values():
        constants |= _string_constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or func_name(node) not in LOOKUP or len(node.args) <= LOOKUP[func_name(node)]:
                continue
            ids, built = _ids_looked_up(node.args[LOOKUP[func_name(node)]])
            exact |= ids
            prefixes |= built
            if func_name(node) == "hints":
                tables |= ids
    return exact, prefixes, tables, constants


def unused_messages(table: dict[str, str]) -> list[str]:
    """The keys of ``table`` (flattened, as :data:`tinylm_checks._text.TEXT`) that nothing uses: a key is used when
    its id (the key, or a failure's id without its part) is looked up by name (a literal passed to ``say``,
    ``ctx.fail``, ...) or written in full anywhere in the code (a table of ids the code passes on), when a lookup
    builds it from a literal prefix (``"axis." + name``), when it is a hint of a table passed to ``hints``, or when
    it is a mistake the code names (``MISTAKE.<id>``)."""
    exact, prefixes, tables, constants = used_ids()
    sources = message_sources().values()
    mistakes = set().union(*(_mistake_attributes(t) for t in sources))
    unused = []
    for key in table:
        if key.startswith("mistakes."):
            if key.split(".")[1] not in mistakes:
                unused.append(key)
            continue
        head, last = key.rsplit(".", 1) if "." in key else (key, "")
        entry = head if last in _text.PARTS else key
        if {key, entry} & (exact | constants) or key.startswith(tuple(prefixes)) or head in tables:
            continue
        unused.append(key)
    return unused


def test_every_message_is_used():
    assert not unused_messages(_text.TEXT), f"messages nothing uses: {unused_messages(_text.TEXT)}"


@pytest.mark.parametrize("planted", ["planted_unused", "capstone.planted_unused", "core.not_equal.planted",
                                     "attention.weights.planted.problem", "mistakes.planted_unused"])
def test_an_unused_message_is_found(planted):
    """A key nothing uses is found, whatever ids share its first segments (the test used to take a key as used
    when its first segment appeared anywhere in the code)."""
    assert unused_messages({**_text.TEXT, planted: "x"}) == [planted]


SENTENCE = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,}")


INTERNAL_ERRORS = {"MessageError", "TypeError", "ValueError", "RuntimeError", "KeyError", "AttributeError", "ConnectionError"}


def _not_for_learners(tree: ast.Module) -> set[int]:
    """Strings no learner reads: docstrings (bare string statements, ``__doc__``), patterns an exception's message is
    matched against (``"..." in msg``), and the messages of the checks' own errors (``raise TypeError(...)``)."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            ids.add(id(node.value))
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "__doc__"
                                                  for t in node.targets):
            ids |= {id(n) for n in ast.walk(node.value)}
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            ids.add(id(node.left))
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and func_name(node.exc) in INTERNAL_ERRORS:
            ids |= {id(n) for n in ast.walk(node.exc)}
    return ids


def test_no_sentence_outside_the_table():
    """A string literal of two or more words in check code is a sentence a learner may read: it belongs in the
    table. Code a message quotes (``returns="return weights @ v, weights"``) says so with ``# code`` on its line."""
    found = []
    for path, tree in check_sources().items():
        lines = path.read_text(encoding="utf-8").splitlines()
        skip = _not_for_learners(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.JoinedStr):
                texts = [v.value for v in node.values if isinstance(v, ast.Constant)]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                texts = [node.value]
            else:
                continue
            span = lines[node.lineno - 1:node.end_lineno]
            if any(SENTENCE.search(t) for t in texts) and not any("# code" in line for line in span):
                found.append(f"{path.relative_to(CHECKS)}:{node.lineno}: {span[0].strip()[:100]}")
    assert not found, "sentences outside tinylm_checks.messages:\n" + "\n".join(sorted(set(found)))


def _calls(text: str, name: str):
    """Every complete call ``name(...)`` in ``text`` (balanced parentheses), in order."""
    start = 0
    while (i := text.find(name + "(", start)) >= 0:
        depth, j = 0, i + len(name)
        for j in range(i + len(name), len(text)):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth == 0:
                break
        yield text[i: j + 1]
        start = j + 1


def test_a_loss_a_message_shows_runs_when_pasted():
    """The kind: an F.cross_entropy call that a message spells out in full (no "...") is code a learner pastes, so it
    runs on the check's own (B, T, V) logits and (B, T) labels and gives the reference loss (issue 17: one showed
    logits[:, :-1] unreshaped, which raises)."""
    import torch
    import torch.nn.functional as F

    from tinylm_solutions.model import causal_lm_loss

    B, T, V = 2, 5, 7
    logits, labels = torch.randn(B, T, V, generator=torch.Generator().manual_seed(0)), torch.randint(0, V, (B, T))
    shown = [(key, call) for key, text in _text.TEXT.items() for call in _calls(text, "F.cross_entropy")
             if "..." not in call]
    assert len(shown) >= 2, shown
    y = labels  # stage 09's name for targets already aligned with the logits
    for key, call in shown:
        value = eval(call, {"F": F, "logits": logits, "labels": labels, "y": y, "V": V})  # noqa: S307 - our own table
        want = causal_lm_loss(logits, labels) if "labels" in call else F.cross_entropy(logits.flatten(0, 1), y.flatten())
        assert value.dim() == 0 and torch.allclose(value, want), (key, call)


def fix_code(fix: str) -> set[str]:
    """The pieces of code a fix quotes: its words with a call, an index or an assignment in them (``math.sqrt(d_k)``,
    ``dim=-1``, ``q.shape[-1]``), brackets that open or close outside the word left out."""
    words = (w.strip(".,;:`'\"").strip("()") for w in re.split(r"[\s,;，；：、]+", fix))
    return {w for w in words if len(w) >= 4 and re.search(r"[(\[=]", w)}


NAMES_THE_LEARNERS_CODE = {  # a place may quote code of the fix that is the learner's own, not the change to make
    "layers_created_in_forward": "nn.Linear(...",  # the calls to move out of forward, not where to move them
    "padding_off_by_one": "lengths[b]",  # one side of the comparison, not its operator
    "left_padding_from_lengths": "padding_side='left",  # the branch to look in, not what it should compute
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_mistake_says_where_to_look_without_handing_over_its_fix(lang):
    """Feedback that lets the learner think first (issue 41, item 1): every mistake a check can name has a place to
    look ("look at:"), shown at once, which quotes none of the code of the fix that waits for show_fix(), apart from
    what the mistake's own sentence shows already and the learner's own code (NAMES_THE_LEARNERS_CODE)."""
    from tinylm_solutions import i18n
    i18n.set_language(lang)
    try:
        places, fixes, sentences = dict(_text.MISTAKE_PLACES), dict(_text.MISTAKE_HINTS), dict(_text.MISTAKES)
    finally:
        i18n.set_language(None)  # back to the environment's choice
    assert set(places) == set(sentences)
    leaks = {m: sorted(c for c in fix_code(fixes[m]) if c in places[m] and c not in sentences[m]
                       and c != NAMES_THE_LEARNERS_CODE.get(m)) for m in places}
    assert not {m: c for m, c in leaks.items() if c}


def test_a_place_that_quotes_its_fix_is_found():
    assert fix_code("use torch.softmax(scores, dim=-1): each row sums to 1") == {"torch.softmax(scores", "dim=-1"}
    assert fix_code("divide by math.sqrt(d_k), where d_k = q.shape[-1]") == {"math.sqrt(d_k", "q.shape[-1]"}
