"""Hints that teach (issue 17, item 7): an exercise's folds go from the concept, to the exact place, to the answer.
A fold that gives the solution's code away is the answer: it must be the last fold, say "answer" in its summary,
and come after at least two folds that do not give it away.

What a fold quotes is every backticked snippet and every line of a fenced code block in it (comments left out).
The solution's lines are the code lines of the solution cell longer than 15 characters (comments and spaces left
out). With spaces removed, a quote gives the answer away when

- it equals a solution line, or contains one (`h = F.gelu(self.linear1(x))` inside a longer snippet);
- it shares a piece of at least 20 characters with a solution line: `q @ k.transpose(-2, -1) / math.sqrt(...)`
  gives `return q @ k.transpose(-2, -1) / math.sqrt(d_k)` away whatever it divides by. Shapes such as
  `(B, H, T, d_k)`, names such as `nn.Linear`, `keepdim=True` or `ignore_index=-100` stay below that, and may
  be quoted by any hint. A fold whose summary promises "the key line(s)" gives the answer away by its own word.

An exercise in two parts ("name the bug, and fix it": a solution cell that follows the first part's check instead
of a text of its own) shares the first part's hints, which are held against the lines of both solutions, under the
first part's id. Exercises whose hints are not rewritten yet are listed in NOT_YET and marked xfail(strict=True):
rewriting one makes its test pass, and then its entry must go.
"""
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import bilingual  # noqa: E402

FOLD = re.compile(r"<details><summary>(.*?)</summary>(.*?)</details>", re.S)
FENCE = re.compile(r"^# ```[\w-]*\n(.*?)^# ```", re.S | re.M)
SHARED = 20  # characters (spaces left out) a quote may share with a solution line before it gives the line away

# exercise id -> why it is listed: its answer sits in a fold that is not marked as the answer, or too early.
# Stage 09's hints are rewritten on their own.
NOT_YET: dict[str, str] = {}  # every exercise's hints are rewritten


def _norm(code: str) -> str:
    return re.sub(r"\s+", "", code.split("  #")[0])


def quotes(body: str) -> list[str]:
    """The code a fold's body quotes: each line of its fenced blocks, then its backticked snippets outside them."""
    fenced = [_norm(line.removeprefix("#")) for block in FENCE.findall(body) for line in block.splitlines()]
    inline = [_norm(code) for code in re.findall(r"`([^`\n]+)`", FENCE.sub("", body))]
    return [code for code in fenced + inline if code]


def _shared(a: str, b: str) -> int:
    """The length of the longest piece common to a and b."""
    best, previous = 0, [0] * (len(b) + 1)
    for ca in a:
        current = [0]
        for j, cb in enumerate(b):
            current.append(previous[j] + 1 if ca == cb else 0)
        best, previous = max(best, max(current)), current
    return best


def _is_name(code: str) -> bool:
    """A name, however long: `scaled_dot_product_attention`, `self.named_parameters()`, `config["num_layers"]`."""
    return re.fullmatch(r"""(?:[\w.]|\(\)|\[(?:"\w+"|'\w+'|-?\d+)\]|"[\w.]+"|'[\w.]+')+""", code) is not None


def gives_away(code: str, line: str, text: str = "") -> bool:
    """Whether the quote `code` gives the solution line `line` away; `text` is what the exercise shows outside its
    folds, which a hint may repeat."""
    if code in text:
        return False
    if line in code or code == line.removeprefix("return"):
        return True
    return not _is_name(code) and _shared(code, line) >= SHARED


def giving_folds(folds, lines, text: str = "") -> list[int]:
    return [i for i, (summary, body) in enumerate(folds)
            if re.search(r"key lines?\b", summary, re.I)
            or any(gives_away(code, line, text) for code in quotes(body) for line in lines)]


def _solution_lines(cell: str) -> set[str]:
    """The code lines between a solution cell's BEGIN and END SOLUTION markers, spaces and comments left out."""
    code = "\n".join(re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell, re.S))
    lines = {_norm(line) for line in code.splitlines() if line.strip() and not line.lstrip().startswith("#")}
    return {line for line in lines if len(line) > 15}


ANSWER = {"en": "answer", "zh": "答案"}  # the word an answer fold's summary says
def exercises(lang: str = "en"):
    """(stage, exercise ids, the folds [(summary, body)], the solution's code lines, the text outside the folds) of
    every exercise with a text of its own in ``lang``; a second part without one adds its id and lines to the
    exercise before."""
    for path in sorted((ROOT / "course").glob("[0-9][0-9]_*.py")):
        cells_ = bilingual.source_cells(path.read_text(encoding="utf-8"), lang)
        found = []
        for i, cell in enumerate(cells_):
            match = re.match(r'# %% solution="(\w+)"', cell)
            if not match:
                continue
            if cells_[i - 1].startswith("# %% [markdown]") or not found:
                text = _norm(re.sub(r"(?m)^# ?", "", FOLD.sub("", cells_[i - 1])))
                found.append(([match.group(1)], FOLD.findall(cells_[i - 1]), _solution_lines(cell), text))
            else:
                found[-1][0].append(match.group(1))
                found[-1][2].update(_solution_lines(cell))
        for gids, folds, lines, text in found:
            yield path.stem, tuple(gids), folds, lines, text


CASES = [pytest.param(lang, stage, gids, folds, lines, text, id=f"{lang}-{gids[0]}",
                      marks=[pytest.mark.xfail(strict=True, reason=NOT_YET[gids[0]])] if gids[0] in NOT_YET else [])
         for lang in ANSWER for stage, gids, folds, lines, text in exercises(lang)]


def test_the_list_names_only_exercises_with_their_own_hints():
    assert set(NOT_YET) <= {gids[0] for _, gids, _, _, _ in exercises()}


@pytest.mark.parametrize("lang, stage, gids, folds, lines, text", CASES)
def test_the_answer_comes_last_behind_its_own_fold(lang, stage, gids, folds, lines, text):
    for i in giving_folds(folds, lines, text):
        summary = folds[i][0]
        assert ANSWER[lang] in summary.lower(), f"{stage} {gids[0]}: fold {summary!r} gives the solution's code away"
        assert i == len(folds) - 1, f"{stage} {gids[0]}: the answer fold {summary!r} is not the last"
        assert i >= 2, f"{stage} {gids[0]}: the answer fold comes after {i} hint(s), not a concept and a place"


# What the lint must and must not take for the answer: the misses it was made stricter for, and honest place hints
SOLUTION = {_norm(line) for line in ("return q @ k.transpose(-2, -1) / math.sqrt(d_k)", "h = F.gelu(self.linear1(x))",
                                     "self.W_Q = nn.Linear(d_model, d_model)", 'return "exp_overflow"',
                                     "out, weights = scaled_dot_product_attention(q, k, v, mask)",
                                     "if d_model % num_heads != 0:", "for name, p in self.named_parameters():")}
TEXT = _norm("raise a `ValueError` when `d_model % num_heads != 0`")


@pytest.mark.parametrize("body", [
    "`q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])`",  # a paraphrase: another expression for d_k
    "`return self.linear2(F.gelu(self.linear1(x)))`",  # a solution line inside a longer snippet
    "then\n#\n# ```python\n# h = F.gelu(self.linear1(x))  # (..., d_ff)\n# ```\n",  # a fenced block
    'return `"exp_overflow"`',  # what the solution returns
])
def test_the_lint_sees_an_answer(body):
    assert giving_folds([("Hint 2: where to look", body)], SOLUTION, TEXT) == [0]


def test_a_key_line_is_an_answer_by_its_summary():
    assert giving_folds([("Hint 1: the idea", "in words"), ("Hint 2: the key line", "in words")], SOLUTION) == [1]


@pytest.mark.parametrize("body", [
    "`(B, H, T, d_k)`, `nn.Linear`, `dim=-1`, `keepdim=True`, `ignore_index=-100`, `k.transpose`",
    "each an `nn.Linear` from `d_model` to `d_model`; `F.cross_entropy` wants `(N, V)` and `(N,)`",
    "names, however long: `scaled_dot_product_attention`, `self.named_parameters()`, `config[\"num_layers\"]`",
    "what the exercise says already: `d_model % num_heads != 0`",
])
def test_the_lint_lets_place_hints_be(body):
    assert giving_folds([("Hint 2: where to look", body)], SOLUTION, TEXT) == []
