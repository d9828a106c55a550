"""Build the nbgrader source notebooks from the jupytext sources, and lint them.

    python tools/build_notebooks.py              # course/NN_name.py -> notebooks/NN_name/NN_name.ipynb
    python tools/build_notebooks.py --check      # exit 1 if a notebook is missing or differs from its source
    python tools/build_notebooks.py --only 04    # build (or check) the stages whose name starts with 04

The sources are jupytext "percent" files. Cell markers carry the grading metadata, so no one edits
nbgrader JSON by hand:

    # %% solution="attention_scores"               an exercise: nbgrader solution cell
    # %% test="attention_scores_check" points=2    its check: nbgrader autograder test cell (locked)
    # %% solution="apply_rope" bonus=true           a bonus exercise: stripped from the release like any
                                                    solution; its check cell is an ordinary, ungraded cell
    # %% tags=["raises-exception"]                  a cell meant to fail (nbval accepts its error)
    # %% [markdown] answer="overfit_answer" points=2
                                                    a written answer, graded by hand: an nbgrader manually
                                                    graded answer cell (solution and grade, unlocked); its
                                                    text is the model answer, which the release replaces
                                                    with nbgrader's "YOUR ANSWER HERE"

Lint rules (errors stop the build): grade ids unique and lowercase; every solution cell has a
``### BEGIN SOLUTION`` / ``### END SOLUTION`` span and is followed by a test cell (a bonus exercise by a
cell with a visible check call); every test cell has points, a visible check call and a hidden block
that re-runs the check from a fresh copy of the checks; a written answer is a markdown cell with points, after
a markdown cell that asks the question; the markdown that introduces each exercise
gives its difficulty and time (``**Difficulty:** ★★☆ · **Time:** about 10 min``) and hints in collapsed
``<details>`` blocks, so that a learner can choose to struggle first.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "course"
NOTEBOOKS = ROOT / "notebooks"
FRESH_CALL = 'runpy.run_module("tinylm_checks.grading")["fresh"]()'
GRADE_ID = re.compile(r"^[a-z0-9_]+$")
DIFFICULTY = re.compile(r"\*\*Difficulty:\*\* [★☆]{3} · \*\*Time:\*\* about \d+ min")
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


class LintError(Exception):
    pass


def nbgrader_meta(grade_id: str, *, solution: bool, grade: bool, locked: bool, points: int | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta


def build(source: Path) -> nbformat.NotebookNode:
    """Read one percent source and return the nbgrader source notebook (lint errors raise LintError)."""
    nb = jupytext.read(source)
    stem, seen, problems, answers = source.stem, set(), [], set()
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata
        meta.pop("lines_to_next_cell", None)
        solution, test, points = meta.pop("solution", None), meta.pop("test", None), meta.pop("points", None)
        bonus = meta.pop("bonus", False)
        answer = meta.pop("answer", None)
        where = f"{source.name}, cell {i}"
        cell.id = hashlib.sha1(f"{stem}:{i}".encode()).hexdigest()[:12]
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        for gid in (solution, test, answer):
            if gid is not None:
                if not GRADE_ID.match(str(gid)) or gid in seen:
                    problems.append(f"{where}: grade id {gid!r} is not unique lowercase_with_underscores")
                seen.add(gid)
        if solution is not None:
            if "### BEGIN SOLUTION" not in cell.source or "### END SOLUTION" not in cell.source:
                problems.append(f"{where}: solution cell {solution!r} has no BEGIN/END SOLUTION span")
            nxt = next((c for c in nb.cells[i + 1:] if c.cell_type == "code"), None)
            if bonus:
                if nxt is None or "test" in nxt.metadata or not re.search(r"^check_\w+\(", nxt.source, re.M):
                    problems.append(f"{where}: bonus exercise {solution!r} is not followed by an ungraded check cell")
            elif nxt is None or "test" not in nxt.metadata:
                problems.append(f"{where}: solution cell {solution!r} is not followed by a test cell")
            intro = next((c for c in reversed(nb.cells[:i]) if c.cell_type == "markdown"), None)
            if intro is None or not DIFFICULTY.search(intro.source) or "<details>" not in intro.source:
                problems.append(f"{where}: the markdown before exercise {solution!r} needs a "
                                "'**Difficulty:** ★★☆ · **Time:** about N min' line and hints in <details> blocks")
            meta["nbgrader"] = nbgrader_meta(str(solution), solution=True, grade=False, locked=False)
        if answer is not None:
            before = nb.cells[i - 1] if i else None
            if cell.cell_type != "markdown":
                problems.append(f"{where}: written answer {answer!r} must be a markdown cell")
            if not isinstance(points, int) or points <= 0:
                problems.append(f"{where}: written answer {answer!r} needs points=<positive int>")
            if before is None or before.cell_type != "markdown" or i - 1 in answers:
                problems.append(f"{where}: written answer {answer!r} must follow a markdown cell that asks the question")
            answers.add(i)
            meta["nbgrader"] = nbgrader_meta(str(answer), solution=True, grade=True, locked=False, points=points)
        if test is not None:
            if not isinstance(points, int) or points <= 0:
                problems.append(f"{where}: test cell {test!r} needs points=<positive int>")
            hidden = cell.source.partition("### BEGIN HIDDEN TESTS")[2].partition("### END HIDDEN TESTS")[0]
            if FRESH_CALL not in hidden or "seed=" not in hidden:
                problems.append(f"{where}: test cell {test!r} needs a hidden block calling {FRESH_CALL}.check_...(..., seed=N)")
            if not re.search(r"^check_\w+\(", cell.source, re.M):
                problems.append(f"{where}: test cell {test!r} has no visible check call")
            meta["nbgrader"] = nbgrader_meta(str(test), solution=False, grade=True, locked=True, points=points)
    if problems:
        raise LintError("\n".join(problems))
    nb.metadata = nbformat.from_dict({
        "kernelspec": KERNELSPEC,
        "language_info": {"name": "python", "pygments_lexer": "ipython3"},
    })
    nb.nbformat, nb.nbformat_minor = 4, 5
    nbformat.validate(nb)
    return nb


def target(source: Path) -> Path:
    return NOTEBOOKS / source.stem / f"{source.stem}.ipynb"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a built notebook is missing or stale")
    parser.add_argument("--only", metavar="PREFIX", help="only the stages whose name starts with PREFIX (e.g. 04)")
    args = parser.parse_args(argv)
    stale = []
    for source in sorted(SOURCES.glob(f"{args.only or ''}*.py")):
        if not re.match(r"^\d\d_", source.name):
            continue
        try:
            text = nbformat.writes(build(source)) + "\n"
        except LintError as e:
            print(f"lint errors:\n{e}", file=sys.stderr)
            return 1
        out = target(source)
        if args.check:
            if not out.exists() or out.read_text() != text:
                stale.append(str(out.relative_to(ROOT)))
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        if not out.exists() or out.read_text() != text:
            out.write_text(text)
            print(f"built {out.relative_to(ROOT)}")
    if stale:
        print("out of date (run `make notebooks`): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
