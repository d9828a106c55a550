"""tools/build_notebooks.py: the committed notebooks, the learner notebooks the package ships and the README's
exercise table are the build of their sources and of the registry, and lint catches broken grading metadata."""
import importlib.util
import os
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from tinylm_grading import registry

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("build_notebooks", ROOT / "tools" / "build_notebooks.py")
build_notebooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_notebooks)

GOOD = '''\
# %% [markdown]
# # A stage
#
# **Difficulty:** ★☆☆ · **Time:** about 5 min
#
# <details><summary>Hint</summary>
#
# return 1
# </details>

# %% solution="f"
def f():
    ### BEGIN SOLUTION
    return 1
    ### END SOLUTION

# %% test="f_check"
check_f(f)
### BEGIN HIDDEN TESTS
import runpy
runpy.run_module("tinylm_checks.grading")["fresh"]().check_f(f, seed=1)
### END HIDDEN TESTS
'''
STAGE = registry.Stage("99_stage", "a stage")
F = registry.Exercise("f", "99_stage", "f", "somewhere", "check_f", 2)
Q1 = registry.Exercise("q1_answer", "99_stage", points=3, written=True)


def write(tmp_path, text):
    p = tmp_path / "99_stage.py"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def build(tmp_path, text, exercises=(F,)):
    return build_notebooks.build(write(tmp_path, text), STAGE, exercises)


def test_committed_notebooks_and_readme_table_are_up_to_date():
    assert build_notebooks.main(["--check"]) == 0


def test_the_readme_table_is_the_registry_s():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"{build_notebooks.TABLE_START}\n{registry.exercise_table()}{build_notebooks.TABLE_END}" in readme
    assert readme.count("| `check_") == len(registry.checked())


def test_every_stage_source_has_a_notebook():
    sources = sorted(p.stem for p in (ROOT / "course").glob("[0-9][0-9]_*.py"))
    notebooks = sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.is_dir())
    assert sources == notebooks and len(sources) >= 3


def test_good_source_gets_nbgrader_metadata(tmp_path):
    nb = build(tmp_path, GOOD)
    sol, test = nb.cells[1].metadata.nbgrader, nb.cells[2].metadata.nbgrader
    assert sol == {"grade": False, "grade_id": "f", "locked": False, "schema_version": 3, "solution": True, "task": False}
    assert test == {"grade": True, "grade_id": "f_check", "locked": True, "points": 2, "schema_version": 3,
                    "solution": False, "task": False}
    assert nb.metadata.kernelspec.name == "python3"


def test_bonus_exercise_is_a_solution_with_an_ungraded_check(tmp_path):
    source = GOOD.replace('# %% test="f_check"\ncheck_f(f)', '# %%\ncheck_f(f)').split("### BEGIN HIDDEN")[0]
    nb = build(tmp_path, source, (registry.Exercise("f", "99_stage", "f", "somewhere", "check_f", 0),))
    assert nb.cells[1].metadata.nbgrader["solution"] is True
    assert "nbgrader" not in nb.cells[2].metadata


@pytest.mark.parametrize("change, message", [
    (lambda s: s.replace('test="f_check"', 'test="f"'), "not unique"),
    (lambda s: s.replace('test="f_check"', 'test="f_check" points=2'), "points= is the registry's"),
    (lambda s: s.replace('solution="f"', 'solution="f" bonus=true'), "bonus= is the registry's"),
    (lambda s: s.replace('solution="f"', 'solution="g"'), "solution 'g' is no exercise of 99_stage"),
    (lambda s: s.replace('["fresh"]()', ""), "needs the hidden block"),
    (lambda s: s.replace("seed=1)", "seed=2)"), "needs the hidden block"),  # the grader would read seed 2
    (lambda s: s.replace("check_f(f, seed=1)", "check_f(f,  seed=1)"), "needs the hidden block"),
    (lambda s: s.replace("check_f(f, seed=1)", "check_g(f, seed=1)"), "needs the hidden block"),
    (lambda s: s.replace("    ### END SOLUTION\n", ""), "no BEGIN/END SOLUTION"),
    (lambda s: s.replace('# %% test="f_check"', "# %%"), "not followed by the test cell 'f_check'"),
    (lambda s: s.replace("check_f(f)\n", ""), r"must call check_f\(f\)"),
    (lambda s: s.replace("**Difficulty:** ★☆☆ · **Time:** about 5 min", ""), "Difficulty"),
    (lambda s: s.replace("<details>", ""), "<details>"),
    (lambda s: s.split("# %% solution")[0], r"exercises \['f'\] have no cell here"),
])
def test_lint_rejects_broken_metadata(tmp_path, change, message):
    with pytest.raises(build_notebooks.LintError, match=message):
        build(tmp_path, change(GOOD))


ANSWER = '''
# %% [markdown]
# **Q1.** What does the run show?

# %% [markdown] answer="q1_answer"
# The loss falls to 0: the model can memorise one batch.
'''


def test_written_answer_is_a_manually_graded_markdown_cell(tmp_path):
    nb = build(tmp_path, GOOD + ANSWER, (F, Q1))
    question, answer = nb.cells[-2], nb.cells[-1]
    assert answer.cell_type == "markdown" and answer.source.startswith("The loss falls")
    assert answer.metadata.nbgrader == {"grade": True, "grade_id": "q1_answer", "locked": False, "points": 3,
                                        "schema_version": 3, "solution": True, "task": False}
    assert "nbgrader" not in question.metadata


@pytest.mark.parametrize("change, message", [
    (lambda s: s.replace('answer="q1_answer"', 'answer="q1_answer" points=3'), "points= is the registry's"),
    (lambda s: s.replace('answer="q1_answer"', 'answer="f_check"'), "not unique"),
    (lambda s: s.replace('answer="q1_answer"', 'answer="q2_answer"'), "'q2_answer' is no written answer"),
    (lambda s: s.replace("# %% [markdown] answer=", "# %% answer="), "must be a markdown cell"),
    (lambda s: s.replace("# %% [markdown]\n# **Q1.** What does the run show?\n\n", ""),
     "must follow a markdown cell that asks the question"),
])
def test_lint_rejects_broken_written_answers(tmp_path, change, message):
    with pytest.raises(build_notebooks.LintError, match=message):
        build(tmp_path, change(GOOD + ANSWER), (F, Q1))


def test_a_source_that_is_no_stage_of_the_registry_is_refused(tmp_path):
    with pytest.raises(build_notebooks.LintError, match="no stage"):
        build_notebooks.build(write(tmp_path, GOOD))


def test_the_capstone_notebook_writes_the_reference_repository():
    """Stage 13's solution cells write, file by file, the reference repository the checks compare with
    (``tinylm_solutions/capstone``): the notebook and the reference do not drift apart."""
    import re

    from tinylm_solutions.capstone import repo
    source = "\n".join(build_notebooks.bilingual.source_cells(  # the English cells (a twin's docstrings are Chinese)
        (ROOT / "course" / "13_capstone.py").read_text(encoding="utf-8"), "en"))
    written = {}
    for name, body in re.findall(r"%%writefile tiny-transformer/(\S+)\n(.*?)(?=\n# %%|\Z)", source, re.S):
        lines = [line for line in body.splitlines() if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")]
        written[name] = "\n".join(lines).strip("\n")
    # README.md and the text (data/) are written by code cells from the learner's own run and the course's corpus
    reference = {k: v for k, v in repo().items() if k not in ("README.md", "data/train.txt", "data/valid.txt")}
    assert set(written) == set(reference)
    for name, text in reference.items():
        assert written[name] == text.strip("\n"), name


# ---- the learner notebooks the package ships (tinylm-course release writes them out)

def test_every_stage_has_its_learner_notebook_in_both_languages_with_the_install_cell_first():
    for lang in ("en", "zh"):
        stages = sorted(p.name for p in (build_notebooks.LEARNER / lang).iterdir())
        assert stages == [s.name for s in registry.STAGES]
        for stage in stages:
            nb = nbformat.read(build_notebooks.LEARNER / lang / stage / f"{stage}.ipynb", as_version=4)
            first = nb.cells[0]
            assert first.id == build_notebooks.INSTALL_CELL_ID and "nbgrader" not in first.metadata
            assert first.source == build_notebooks.install_cell(lang, build_notebooks.install_from())
            assert nb.metadata.get("tinylm", {}).get("lang") == (None if lang == "en" else lang)
            text = "\n".join(c.source for c in nb.cells)
            assert "### BEGIN SOLUTION" not in text and "### BEGIN HIDDEN TESTS" not in text


def test_the_install_cell_installs_from_the_address_pyproject_gives():
    cell = build_notebooks.install_cell("en", "git+https://example.org/tinylm-course.git")
    assert 'COURSE = "git+https://example.org/tinylm-course.git"' in cell and '%pip install --quiet "{COURSE}"' in cell


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_learner_notebooks_are_what_nbgrader_generate_assignment_makes(tmp_path, lang):
    """The package's learner notebooks, but their first cell, are byte for byte ``nbgrader generate_assignment``'s
    release of every stage (``make release`` built them so before): a learner's notebook from ``tinylm-course``
    is graded by the same gradebook, its checksums and metadata nbgrader's own."""
    import shutil
    import subprocess

    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    for source in sorted((ROOT / "course").glob("[0-9][0-9]_*.py")):
        target = build_notebooks.target(source, tmp_path / "notebooks")
        target.parent.mkdir(parents=True)
        nbformat.write(build_notebooks.build(source, lang=lang), str(target))
    nbgrader = Path(sys.executable).parent / "nbgrader"
    subprocess.run([str(nbgrader), "generate_assignment", "*", "--log-level=WARN"], cwd=tmp_path, check=True,
                   capture_output=True, env={**os.environ, "PATH": f"{nbgrader.parent}{os.pathsep}{os.environ['PATH']}"})
    for stage in registry.STAGES:
        ours = nbformat.read(build_notebooks.LEARNER / lang / stage.name / f"{stage.name}.ipynb", as_version=4)
        assert ours.cells.pop(0).id == build_notebooks.INSTALL_CELL_ID
        theirs = (tmp_path / "release" / stage.name / f"{stage.name}.ipynb").read_text(encoding="utf-8")
        assert nbformat.writes(ours) + "\n" == theirs, stage.name
