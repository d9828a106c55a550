"""What a class got wrong, from its autograded notebooks: per exercise, how many learners passed and which named
mistakes the others made.

The grader writes each test cell's verdict as data into the autograded notebook
(:data:`tinylm_grading.verdicts.RECORD`), computed outside the learner's kernel; a record in a submitted notebook is
removed before grading. Only the notebooks the gradebook lists for the assignment are read (a learner's extra
notebook file is copied into ``autograded/`` unread by the grader, and is not read here either), and no symlink.

``tinylm-class-report 01_attention [--course DIR] [--csv FILE] [--plot FILE]`` prints the table (:func:`main`), in
the user's language (``TINYLM_LANG``, else the locale); bad input gives one line and exit status 2. The gradebook is
the one the course's ``nbgrader_config.py`` names (PostgreSQL for parallel grading, say), else ``gradebook.db``.
"""
from __future__ import annotations

import collections
import csv
import os
import sys
from pathlib import Path

import nbformat

from tinylm_checks._text import say
from tinylm_solutions.cli import UsageError, _fail, _help, _Parser
from tinylm_solutions.i18n import display_width, pad

from .autograde import course_directory, gradebook, venv_on_path
from .verdicts import RECORD

UNNAMED = "unnamed"
"""The mistake :func:`summary` counts for a check's failure that names no mistake."""


def gradebook_url(course: Path) -> str:
    """The gradebook of the nbgrader course folder ``course``: its ``nbgrader_config.py``'s (a PostgreSQL one, say),
    else ``gradebook.db`` in it."""
    if (Path(course) / "nbgrader_config.py").is_file():
        return course_directory(course).db_url
    return f"sqlite:///{Path(course).resolve() / 'gradebook.db'}"


def verdicts(course: Path, assignment: str) -> dict[str, dict[str, dict]]:
    """student -> {test cell's grade id -> its verdict record} for every autograded submission of ``assignment``
    in the nbgrader course folder ``course`` (its gradebook, :func:`gradebook_url`, and autograded/)."""
    from nbgrader.api import Gradebook

    course = Path(course)
    with Gradebook(gradebook_url(course)) as gb:
        notebooks = [nb.name for nb in gb.find_assignment(assignment).notebooks]
        students = sorted({s.student.id for s in gb.find_assignment(assignment).submissions})
    out: dict[str, dict[str, dict]] = {}
    for student in students:
        found = {}
        for name in notebooks:
            path = course / "autograded" / student / assignment / f"{name}.ipynb"
            if path.is_symlink() or not path.is_file():
                continue
            for cell in nbformat.read(path, as_version=4).cells:
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
                verdict = cell.metadata.get(RECORD, {}).get("verdict")
                if grade_id and isinstance(verdict, dict):
                    found[grade_id] = verdict
        out[student] = found
    return out


def summary(records: dict[str, dict[str, dict]]) -> dict[str, dict]:
    """grade id -> {"learners": how many have a verdict for it, "passed": how many passed, "mistakes": Counter of
    the named mistakes of those who did not (the first named one each; "unnamed" for a failure the check names no
    mistake for, the error's name for one that is not a check's failure)}."""
    out: dict[str, dict] = {}
    for by_cell in records.values():
        for grade_id, verdict in by_cell.items():
            row = out.setdefault(grade_id, {"learners": 0, "passed": 0, "mistakes": collections.Counter()})
            row["learners"] += 1
            if verdict.get("passed"):
                row["passed"] += 1
            else:
                mistakes = verdict.get("mistakes") or []
                error = verdict.get("error")
                row["mistakes"][mistakes[0] if mistakes else UNNAMED if error == "CheckFailure" else str(error)] += 1
    return out


def table(rows: dict[str, dict]) -> list[tuple[str, int, int, list[tuple[str, int, float]]]]:
    """(exercise, learners, passed, [(mistake, learners, share of the learners)] most common first) for each row of
    :func:`summary`, in its order (the notebook's, as the first learner's records have it)."""
    out = []
    for grade_id, row in rows.items():
        common = [(m, n, n / row["learners"]) for m, n in sorted(row["mistakes"].items(), key=lambda kv: (-kv[1], kv[0]))]
        out.append((grade_id, row["learners"], row["passed"], common))
    return out


def main(argv: list[str] | None = None) -> int:
    """``tinylm-class-report``: the table on stdout; exit status 0, or 2 with one line on stderr for bad input."""
    p = _Parser(prog="tinylm-class-report", description=_help(say("grading.report.description")))
    p.add_argument("assignment", help=_help(say("grading.report.help.assignment")))
    p.add_argument("--course", type=Path, default=Path("."), help=_help(say("grading.report.help.course")))
    p.add_argument("--csv", type=Path, help=_help(say("grading.report.help.csv")))
    p.add_argument("--plot", type=Path, help=_help(say("grading.report.help.plot")))
    args = p.parse_args(argv)
    try:
        for path in (args.csv, args.plot):
            if path is not None and not path.parent.is_dir():
                raise UsageError(say("grading.report.no_folder", path=path))
        records = _read(args.course, args.assignment)
    except UsageError as e:
        return _fail(p.prog, e)
    rows = table(summary(records))
    print(say("grading.report.title", assignment=args.assignment, learners=len(records)))
    width = max([display_width(say("grading.report.exercise")), *(display_width(g) for g, *_ in rows)])
    print(f"{pad(say('grading.report.exercise'), width)}  {pad(say('grading.report.passed'), 7, right=True)}  "
          f"{say('grading.report.mistakes')}")
    for grade_id, n, passed, common in rows:
        shown = ", ".join(f"{_name(m)} ({k}, {share:.0%})" for m, k, share in common[:3]) or "-"
        print(f"{pad(grade_id, width)}  {pad(f'{passed}/{n}', 7, right=True)}  {shown}")
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(["assignment", "exercise", "learners", "passed", "mistake", "mistake_learners", "share"])
            for grade_id, n, passed, common in rows:
                for m, k, share in common or [("", 0, 0.0)]:
                    out.writerow([args.assignment, grade_id, n, passed, m, k, f"{share:.4f}"])
        print(say("grading.report.written", path=args.csv))
    if args.plot:
        _plot(rows, args.assignment, args.plot)
        print(say("grading.report.written", path=args.plot))
    return 0


def _name(mistake: str) -> str:
    return say("grading.report.unnamed") if mistake == UNNAMED else mistake


def _read(course: Path, assignment: str) -> dict[str, dict[str, dict]]:
    """:func:`verdicts`, with bad input as a :class:`~tinylm_solutions.cli.UsageError` in the user's words."""
    from nbgrader.api import MissingEntry

    venv_on_path()
    url = gradebook_url(course)
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        raise UsageError(say("grading.report.no_gradebook", course=course))
    with gradebook(url) as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            known = ", ".join(sorted(a.name for a in gb.assignments)) or "-"
            raise UsageError(say("grading.report.no_assignment", assignment=assignment, known=known)) from None
    records = {s: r for s, r in verdicts(course, assignment).items() if r}
    if not records:
        raise UsageError(say("grading.report.none_graded", assignment=assignment))
    return records


def _plot(rows, assignment: str, path: Path) -> None:
    """A seaborn bar chart: each exercise's most common mistakes, as a share of the learners."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    from tinylm_checks.lab.fonts import use_language_font
    from tinylm_solutions import i18n

    use_language_font(i18n.language())
    data = {"label": [], "share": []}
    for grade_id, _, _, common in rows:
        for m, _, share in common[:3]:
            data["label"].append(f"{grade_id} · {_name(m)}")
            data["share"].append(share)
    fig, ax = plt.subplots(figsize=(8, 0.4 * max(len(data["label"]), 1) + 1.2))
    sns.barplot(x=data["share"], y=data["label"], ax=ax, color="tab:red")
    ax.set(title=say("grading.report.plot_title", assignment=assignment), xlabel=say("grading.report.plot_x"),
           xlim=(0, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
