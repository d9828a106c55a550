"""Build the nbgrader source notebooks from the jupytext sources, lint them against the course's registry, and
write the README's exercise table.

    python tools/build_notebooks.py              # course/NN_name.py -> notebooks/NN_name/NN_name.ipynb; README table
    python tools/build_notebooks.py --check      # exit 1 if a notebook or the README table differs from its source
    python tools/build_notebooks.py --only 04    # build (or check) the stages whose name starts with 04
    python tools/build_notebooks.py --lang zh --out notebooks-zh   # the Chinese source notebooks (not committed)

The default build (no ``--out``) also writes the learner notebooks the package ships, in both languages
(``tinylm_solutions/learner_notebooks/<lang>/NN_name/NN_name.ipynb``, what ``tinylm-course release`` writes out):
each is what ``nbgrader generate_assignment`` makes of the source notebook in that language (nbgrader's own
preprocessors, with the course's ``nbgrader_config.py``: solutions and hidden tests taken out, cells locked,
checksums), with a first cell that installs the course where it is missing (:func:`install_cell`: Colab, Kaggle, a hub
without it), from the address ``[tool.tinylm-course] install-from`` of ``pyproject.toml`` gives.

The sources are jupytext "percent" files, in two languages: every English markdown cell is followed by its Chinese
twin (``# %% [markdown] lang="zh"``, see ``tools/bilingual.py``); the code is shared: a code cell's Chinese twin
(``# %% lang="zh"``) is its code with the comments and docstrings in Chinese (the lint refuses any other difference,
naming the cell), or a data cell's, which assigns the same names other values (the text to train on, the prompts), so
both languages' notebooks have the same cells, cell ids, grade ids and points. Cell markers name the cells that grading knows; everything else about
an exercise (its points, whether it is a bonus, its check, its hidden check) comes from the registry
(``tinylm_grading/registry.py``), so no one edits nbgrader JSON or writes points twice:

    # %% solution="attention_scores"                an exercise: nbgrader solution cell
    # %% test="attention_scores_check"              its check: nbgrader autograder test cell (locked), with the
                                                     registry's points
    # %% solution="apply_rope"                      a bonus exercise (0 points in the registry) is stripped from the
                                                     release like any solution; its check cell is an ordinary cell
    # %% tags=["raises-exception"]                  a cell meant to fail (nbval accepts its error)
    # %% [markdown] answer="overfit_answer"         a written answer, graded by hand: an nbgrader manually graded
                                                     answer cell (solution and grade, unlocked); its text is the
                                                     model answer, which the release replaces with "YOUR ANSWER HERE"
    # %% answer="capstone_report"                   a written answer in a code cell (%%writefile report.md): its
                                                     BEGIN/END SOLUTION spans hold the model answer, as in a
                                                     solution cell; a cell after it may run its feedback check

Lint rules (errors stop the build): the stage and each exercise, test and answer are the registry's, each
exactly once, in the registry's stage; every solution cell has a ``### BEGIN SOLUTION`` / ``### END SOLUTION``
span and is followed by its check cell: a graded one is a test cell whose visible line calls the registry's check
on the registry's name and whose hidden block is exactly ``import runpy`` and the registry's hidden check line
(:attr:`~tinylm_grading.registry.Exercise.hidden_check`, the same line the grader reads with
:func:`~tinylm_grading.registry.hidden_calls`); a bonus exercise's is an ordinary cell with the visible call. A
written answer is a markdown cell (or a code cell with a solution span) after a markdown cell that asks the
question. The markdown that introduces each exercise gives its difficulty and time (``**Difficulty:** ★★☆ ·
**Time:** about 10 min``) and hints in collapsed ``<details>`` blocks, so that a learner can choose to struggle first.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import textwrap
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the registry, also before the package is installed
sys.path.insert(0, str(ROOT / "tools"))
import bilingual  # noqa: E402
from tinylm_grading import registry  # noqa: E402
LOCALES = {"zh": "zh_CN"}  # a notebook language -> the locale of its catalogs

SOURCES = ROOT / "course"
NOTEBOOKS = ROOT / "notebooks"
LEARNER = ROOT / "tinylm_solutions" / "learner_notebooks"  # the learner notebooks the package ships, per language
README = ROOT / "README.md"
TABLE_START = "<!-- exercises: generated from tinylm_grading/registry.py by `make notebooks`; edit the registry, not this table -->"
TABLE_END = "<!-- end of exercises -->"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
HIDDEN = "### BEGIN HIDDEN TESTS\n{}\n### END HIDDEN TESTS"


GLOSSARY = "<!-- glossary -->"  # a markdown cell's placeholder for the term table (tinylm_checks/messages/terms.py)


def glossary(lang: str) -> str:
    """The course's term table as a markdown table, the notebook's language first."""
    from tinylm_checks.messages.terms import TERMS

    if lang == "zh":
        return "| 中文 | English |\n|---|---|\n" + "".join(f"| {zh} | {en} |\n" for en, zh, _ in TERMS).rstrip()
    return "| English | 中文 |\n|---|---|\n" + "".join(f"| {en} | {zh} |\n" for en, zh, _ in TERMS).rstrip()


class LintError(Exception):
    pass


def nbgrader_meta(grade_id: str, *, solution: bool, grade: bool, locked: bool, points: int | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta


def hidden_block(exercise: registry.Exercise) -> str:
    """The hidden part of an exercise's test cell, exactly."""
    return HIDDEN.format(f"import runpy\n{exercise.hidden_check}")


def _lint_test_cell(cell, exercise: registry.Exercise, where: str) -> list[str]:
    problems = []
    visible = cell.source.partition("### BEGIN HIDDEN TESTS")[0]
    if not re.search(rf"^{re.escape(exercise.visible_check)}$", visible, re.M):
        problems.append(f"{where}: the check cell of {exercise.id!r} must call {exercise.visible_check} on a line of "
                        "its own")
    if exercise.bonus:
        if registry.hidden_calls(cell.source) or "### BEGIN HIDDEN TESTS" in cell.source:
            problems.append(f"{where}: the check cell of bonus exercise {exercise.id!r} has a hidden block")
        return problems
    calls = registry.hidden_calls(cell.source)
    if calls != [(exercise.check, exercise.name, exercise.hidden_seed)] or hidden_block(exercise) not in cell.source:
        problems.append(f"{where}: test cell {exercise.test_id!r} needs the hidden block, exactly:\n"
                        f"{hidden_block(exercise)}\n(found calls {calls})")
    return problems


def code_table(stem: str, lang: str) -> dict[str, str]:
    """The translations of the strings a stage's code cells show (course/locale/<locale>/LC_MESSAGES/<stage>.po):
    English text -> translation, without the fuzzy or empty entries (those keep the English)."""
    from babel.messages.pofile import read_po

    po = ROOT / "course" / "locale" / LOCALES[lang] / "LC_MESSAGES" / f"{stem}.po"
    if not po.exists():
        return {}
    with open(po, "rb") as f:
        return {m.id: m.string for m in read_po(f) if m.id and m.string and not m.fuzzy}


def build(source: Path, stage: registry.Stage | None = None, exercises: tuple | None = None,
          lang: str = "en") -> nbformat.NotebookNode:
    """Read one percent source and return the nbgrader source notebook in ``lang`` (lint errors raise LintError).
    ``stage`` and ``exercises`` default to the registry's for the source's name (tests pass their own)."""
    nb = jupytext.read(source)
    stem, problems, answers = source.stem, [], set()
    if lang != "en":
        problems += bilingual.problems(source)
    nb.cells = bilingual.select(nb.cells, lang)
    if lang != "en":  # what the shared code cells print and draw, in the notebook's language
        shown = code_table(stem, lang)
        for i, (cell, elsewhere) in enumerate(zip(nb.cells, bilingual.read_elsewhere(nb.cells))):
            translated = (bilingual.translate_code(cell.source, shown, elsewhere) if bilingual.translatable(cell)
                          else cell.source)
            if translated != cell.source:
                try:
                    same = bilingual.code_shape(translated) == bilingual.code_shape(cell.source)
                except SyntaxError:
                    same = False
                if not same:  # a quote that ends the literal early, a field renamed: the code would change
                    problems.append(f"{source.name}, cell {i}: its strings' translations change the code (a quote "
                                    f"or an f-string's field?):\n{translated}")
                cell.source = translated
    for cell in nb.cells:
        if cell.cell_type == "markdown" and GLOSSARY in cell.source:
            cell.source = cell.source.replace(GLOSSARY, glossary(lang))
    stage = stage or registry.STAGE.get(stem)
    if stage is None:
        raise LintError(f"{source.name}: {stem!r} is no stage of tinylm_grading/registry.py")
    exercises = {e.id: e for e in (exercises if exercises is not None else registry.stage_exercises(stage.name))}
    tests = {e.test_id: e for e in exercises.values() if not e.bonus}
    seen: dict[str, str] = {}  # grade id -> where
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata
        meta.pop("lines_to_next_cell", None)
        solution, test, answer = meta.pop("solution", None), meta.pop("test", None), meta.pop("answer", None)
        where = f"{source.name}, cell {i}"
        for stale in ("points", "bonus"):
            if meta.pop(stale, None) is not None:
                problems.append(f"{where}: {stale}= is the registry's to say (tinylm_grading/registry.py)")
        cell.id = hashlib.sha1(f"{stem}:{i}".encode()).hexdigest()[:12]
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        for gid in (solution, test, answer):
            if gid is not None:
                if gid in seen:
                    problems.append(f"{where}: grade id {gid!r} is not unique (also {seen[gid]})")
                seen[gid] = where
        if solution is not None:
            exercise = exercises.get(solution)
            if exercise is None or exercise.written:
                problems.append(f"{where}: solution {solution!r} is no exercise of {stage.name} in the registry")
                continue
            if "### BEGIN SOLUTION" not in cell.source or "### END SOLUTION" not in cell.source:
                problems.append(f"{where}: solution cell {solution!r} has no BEGIN/END SOLUTION span")
            nxt = next(((j, c) for j, c in enumerate(nb.cells[i + 1:], i + 1) if c.cell_type == "code"), None)
            if nxt is None:
                problems.append(f"{where}: solution cell {solution!r} is not followed by its check cell")
            elif exercise.bonus and "test" in nxt[1].metadata:
                problems.append(f"{where}: bonus exercise {solution!r} is followed by a test cell: its check cell is "
                                "an ordinary cell")
            elif not exercise.bonus and nxt[1].metadata.get("test") != exercise.test_id:
                problems.append(f"{where}: solution cell {solution!r} is not followed by the test cell "
                                f"{exercise.test_id!r}")
            else:
                problems += _lint_test_cell(nxt[1], exercise, f"{source.name}, cell {nxt[0]}")
            intro = next((c for c in reversed(nb.cells[:i]) if c.cell_type == "markdown"), None)
            if intro is None or not bilingual.DIFFICULTY[lang].search(intro.source) or "<details>" not in intro.source:
                problems.append(f"{where}: the markdown before exercise {solution!r} needs a "
                                f"{bilingual.DIFFICULTY[lang].pattern!r} line and hints in <details> blocks")
            meta["nbgrader"] = nbgrader_meta(solution, solution=True, grade=False, locked=False)
        if answer is not None:
            exercise = exercises.get(answer)
            before = nb.cells[i - 1] if i else None
            if exercise is None or not exercise.written:
                problems.append(f"{where}: written answer {answer!r} is no written answer of {stage.name} in the "
                                "registry")
            elif cell.cell_type != "markdown" and ("### BEGIN SOLUTION" not in cell.source
                                                   or "### END SOLUTION" not in cell.source):
                problems.append(f"{where}: written answer {answer!r} must be a markdown cell, or a code cell with a "
                                "BEGIN/END SOLUTION span")
            elif before is None or before.cell_type != "markdown" or i - 1 in answers:
                problems.append(f"{where}: written answer {answer!r} must follow a markdown cell that asks the question")
            else:
                meta["nbgrader"] = nbgrader_meta(answer, solution=True, grade=True, locked=False, points=exercise.points)
            answers.add(i)
        if test is not None:
            exercise = tests.get(test)
            if exercise is None or exercise.written:
                problems.append(f"{where}: test cell {test!r} is no check of {stage.name} in the registry")
                continue
            meta["nbgrader"] = nbgrader_meta(test, solution=False, grade=True, locked=True, points=exercise.points)
    missing = [e.id for e in exercises.values() if e.id not in seen]
    if missing:
        problems.append(f"{source.name}: the registry's exercises {missing} have no cell here")
    if problems:
        raise LintError("\n".join(problems))
    nb.metadata = nbformat.from_dict({
        "kernelspec": KERNELSPEC,
        "language_info": {"name": "python", "pygments_lexer": "ipython3"},
        **({"tinylm": {"lang": lang}} if lang != "en" else {}),  # the grader's notes speak it
    })
    nb.nbformat, nb.nbformat_minor = 4, 5
    nbformat.validate(nb)
    return nb


def install_from() -> str:
    """Where a learner notebook's first cell installs the course from: ``[tool.tinylm-course] install-from`` of
    ``pyproject.toml`` (a git URL or a wheel's address; empty while the course is published nowhere)."""
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["tinylm-course"]["install-from"]


def install_cell(lang: str, course: str) -> str:
    """The first cell of every learner notebook, in ``lang``: where ``tinylm_checks`` cannot be imported (a hosted
    notebook: Colab, Kaggle, a hub without the course) it installs the course from ``course`` with ``%pip``, after
    saying in one line why it cannot (a Python older than the course's, no address given); where the course is
    installed it does nothing. Either way the checks speak the notebook's language (``TINYLM_LANG``, unless set)."""
    from tinylm_solutions import course as command, i18n, messages

    def say(key: str, **values) -> str:
        return i18n.translate(messages.FOLDER, key, messages.TEXT[key], lang).format(**values)

    def comment(text: str) -> str:
        return textwrap.fill(text, 116, initial_indent="# ", subsequent_indent="# ")

    def literal(text: str) -> str:  # a Python string literal, in double quotes like the course's code
        return json.dumps(text, ensure_ascii=False)

    needed = ".".join(map(str, command.PYTHON))
    return "\n".join([
        comment(say("course.cell.what")),
        "import importlib",
        "import os",
        "import sys",
        "",
        comment(say("course.cell.from")),
        f"COURSE = {literal(course)}",
        f"os.environ.setdefault(\"TINYLM_LANG\", {literal(lang)})  # {say('course.cell.lang')}",
        "try:",
        "    import tinylm_checks",
        "except ModuleNotFoundError:",
        f"    if sys.version_info < {command.PYTHON!r}:",
        f"        problem = {literal(say('course.cell.python', needed=needed, version='{version}'))}",
        "        raise RuntimeError(problem.format(version=sys.version.split()[0])) from None",
        "    if not COURSE:",
        f"        raise RuntimeError({literal(say('course.cell.no_source'))}) from None",
        '    %pip install --quiet "{COURSE}"',
        "    importlib.invalidate_caches()",
        "    import tinylm_checks",
    ])


INSTALL_CELL_ID = "install-course"


def learner_notebook(nb: nbformat.NotebookNode, lang: str, course: str) -> nbformat.NotebookNode:
    """The learner's version of the source notebook ``nb`` (in ``lang``): what ``nbgrader generate_assignment``
    writes (the course's preprocessors, nbgrader_config.py's, but the one that saves the cells in the gradebook; the
    answer stubs in the notebook's language), with :func:`install_cell` first."""
    from nbgrader.converters.generate_assignment import GenerateAssignment
    from nbgrader.preprocessors import SaveCells
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    nb, resources = nbformat.from_dict(nb), {"nbgrader": {"notebook": "", "assignment": ""}}
    preprocessors = config.GenerateAssignment.get("preprocessors") or GenerateAssignment.class_traits()["preprocessors"].default()
    for preprocessor in preprocessors:
        if preprocessor is not SaveCells:
            nb, resources = preprocessor(config=config).preprocess(nb, resources)
    cell = nbformat.v4.new_code_cell(install_cell(lang, course))
    cell.id = INSTALL_CELL_ID
    nb.cells.insert(0, cell)
    nbformat.validate(nb)
    return nb


def target(source: Path, folder: Path = NOTEBOOKS) -> Path:
    return folder / source.stem / f"{source.stem}.ipynb"


def readme_with_table(text: str) -> str:
    """The README with its exercise table made from the registry."""
    head, start, rest = text.partition(TABLE_START)
    _, end, tail = rest.partition(TABLE_END)
    if not start or not end:
        raise LintError(f"README.md has no {TABLE_START!r} ... {TABLE_END!r} section")
    return f"{head}{TABLE_START}\n{registry.exercise_table()}{TABLE_END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a built notebook or the README table is stale")
    parser.add_argument("--only", metavar="PREFIX", help="only the stages whose name starts with PREFIX (e.g. 04)")
    parser.add_argument("--lang", choices=bilingual.LANGUAGES, default="en",
                        help="the notebooks' language (default en: the committed notebooks/)")
    parser.add_argument("--out", type=Path, help="write the notebooks under this folder (default notebooks/; "
                        "required for another language than en)")
    args = parser.parse_args(argv)
    if args.lang != "en" and args.out is None:
        parser.error("--lang zh needs --out FOLDER: notebooks/ holds the English sources nbgrader grades from")
    stale = []
    sources = [p for p in sorted(SOURCES.glob(f"{args.only or ''}*.py")) if re.match(r"^\d\d_", p.name)]
    if not args.only and sorted(p.stem for p in sources) != [s.name for s in registry.STAGES]:
        print(f"course/ holds {[p.stem for p in sources]}, the registry's stages are "
              f"{[s.name for s in registry.STAGES]}", file=sys.stderr)
        return 1
    outputs, course = {}, install_from()
    for source in sources:
        try:
            built = build(source, lang=args.lang)
            outputs[target(source, args.out or NOTEBOOKS)] = nbformat.writes(built) + "\n"
            if args.out is None:  # the default build: the package's learner notebooks too, in every language
                for lang in bilingual.LANGUAGES:
                    nb = built if lang == args.lang else build(source, lang=lang)
                    outputs[target(source, LEARNER / lang)] = nbformat.writes(learner_notebook(nb, lang, course)) + "\n"
        except LintError as e:
            print(f"lint errors:\n{e}", file=sys.stderr)
            return 1
    if not args.only and args.out is None:
        outputs[README] = readme_with_table(README.read_text(encoding="utf-8"))
    for out, text in outputs.items():
        if args.check:
            if not out.exists() or out.read_text(encoding="utf-8") != text:
                stale.append(str(out.relative_to(ROOT)))
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            out.write_text(text, encoding="utf-8")
            print(f"built {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    if stale:
        print("out of date (run `make notebooks`): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
