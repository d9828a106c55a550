"""Autograde a class with several workers: ``tinylm-autograde STAGE [STAGE ...] [--workers N] [--student ID ...]
[--shards N [--shard I]] [--course DIR] [--force]``.

Each learner's submission of each stage is graded by nbgrader's own ``nbgrader autograde STAGE --student ID`` with the
course's ``nbgrader_config.py`` (the same sandbox, preprocessors, gradebook and files as the command typed by hand),
and ``--workers`` of them run at once, each with its own sandboxed kernel. Each worker is a process that has imported
nbgrader, the grader and PyTorch once; every command it runs is a child forked from it
(:mod:`tinylm_checks._forked`), which saves the 3 CPU s of imports a new ``nbgrader`` spends before it grades. A root
grader also starts one kernel server for all the workers (:func:`tinylm_grading.sandbox.kernel_server_for_workers`):
each notebook's kernel is forked from it into a sandbox of its own, its imports done once for the class.

nbgrader's default gradebook, one SQLite file, takes one writer at a time: with it ``--workers`` must be 1 (the
commands then run one after the other, as a loop over the class would). A PostgreSQL gradebook takes concurrent
writers: set ``TINYLM_GRADEBOOK=postgresql://...`` (``nbgrader_config.py`` reads it) or ``c.CourseDirectory.db_url``.
Before the workers start, this process adds every learner to the gradebook (two commands grading one learner's two
stages would each try to add them at once).

The learners are the folders ``submitted/<student_id>/<stage>/`` (nbgrader's layout); ``--student`` picks some.
``--shards N`` splits them (sorted by id, every N-th from the shard's index) so that N processes grade a class at
once, each its own learners, all of a learner's stages in one: a Kubernetes Indexed Job (``deploy/grade-job.yaml``)
runs one per pod, whose index (``--shard``, else :data:`INDEX`) picks its shard.
Each command's seconds and outcome are printed as it ends, in the user's language; exit status 0 when every
command succeeded, 1 when one failed (its output's end is printed), 2 with one line for bad input.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import glob
import os
import queue
import sys
import time
from pathlib import Path

from tinylm_checks import _forked
from tinylm_checks._text import say
from tinylm_solutions.cli import UsageError, _fail, _help, _int, _Parser

from .sandbox import kernel_server_for_workers

PRELOAD = ("torch", "nbgrader.apps.nbgraderapp", "nbgrader.preprocessors", "nbclient", "tinylm_grading.preprocessors")
"""What each worker imports once, before it forks its commands (the modules every ``nbgrader autograde`` imports)."""
INDEX = "JOB_COMPLETION_INDEX"
"""The environment variable Kubernetes sets to a pod's index in an Indexed Job: the shard a pod grades."""
TIMEOUT = 3600
"""Seconds one command may take (nbgrader's own per-cell timeout and the sandbox's CPU limit come first)."""


def venv_on_path() -> None:
    """This Python's bin/ first on ``PATH``: nbgrader's gradebook runs ``alembic`` by name (the venv's)."""
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def course_directory(course: Path):
    """nbgrader's :class:`~nbgrader.coursedir.CourseDirectory` as the course's ``nbgrader_config.py`` sets it, with a
    relative SQLite ``db_url`` made absolute (nbgrader reads it relative to the course folder, where it runs).
    Raises UsageError when ``course`` has no ``nbgrader_config.py``."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    course = Path(course).resolve()
    if not (course / "nbgrader_config.py").is_file():
        raise UsageError(say("grading.autograde.no_course", course=course))
    coursedir = CourseDirectory(config=PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config())
    if coursedir.db_url.startswith("sqlite:///") and not coursedir.db_url.startswith("sqlite:////"):
        coursedir.db_url = f"sqlite:///{course / coursedir.db_url.removeprefix('sqlite:///')}"
    return coursedir


def submitted(coursedir, stage: str) -> list[str]:
    """The student ids with a folder ``submitted/<student_id>/<stage>/``, sorted."""
    pattern = coursedir.format_path(coursedir.submitted_directory, "*", stage)
    return sorted(Path(p).parent.name for p in glob.glob(pattern) if Path(p).is_dir())


def shard(jobs: list[tuple[str, str]], index: int, shards: int) -> list[tuple[str, str]]:
    """The jobs of shard ``index`` of ``shards``: those of every ``shards``-th learner (sorted by id) from the
    ``index``-th. A learner's stages stay together; the shards are disjoint and together hold every job."""
    learners = sorted({s for _, s in jobs})
    mine = set(learners[index::shards])
    return [(stage, s) for stage, s in jobs if s in mine]


def plan(coursedir, stages: list[str], students: list[str] | None) -> list[tuple[str, str]]:
    """The (stage, student) commands to run, the last stage first; UsageError for a stage nobody submitted or a named
    student without a submission of any of the stages. The later stages train models and run commands (grading the
    capstone takes about ten times as long as stage 01): started first, they do not leave one worker busy at the end
    while the others wait, the order that makes a batch of jobs end soonest (longest first)."""
    jobs = []
    for stage in sorted(stages, reverse=True):
        found = submitted(coursedir, stage)
        if not found:
            raise UsageError(say("grading.autograde.no_submissions", stage=stage,
                                 folder=coursedir.format_path(coursedir.submitted_directory, "*", stage)))
        jobs += [(stage, s) for s in found if students is None or s in students]
    missing = sorted(set(students or ()) - {s for _, s in jobs})
    if missing:
        raise UsageError(say("grading.autograde.no_student", students=", ".join(missing)))
    return jobs


@contextlib.contextmanager
def gradebook(db_url: str, course_id: str = "default_course"):
    """nbgrader's :class:`~nbgrader.api.Gradebook` at ``db_url``; a database it cannot reach is a UsageError that
    names it (without its password) and says why."""
    from nbgrader.api import Gradebook
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import OperationalError

    try:
        gb = Gradebook(db_url, course_id)
    except OperationalError as e:
        shown = make_url(db_url).render_as_string(hide_password=True)
        raise UsageError(say("grading.autograde.no_gradebook", url=shown, error=str(e.orig or e).splitlines()[0]))
    with gb:
        yield gb


def add_learners(db_url: str, course_id: str, students: set[str]) -> None:
    """Every learner in the gradebook before the workers start (nbgrader adds a missing one in each command)."""
    with gradebook(db_url, course_id) as gb:
        for student in sorted(students):
            gb.update_or_create_student(student)


def run(course: Path, jobs: list[tuple[str, str]], workers: int, extra: list[str], env: dict[str, str],
        report=print) -> list[tuple[str, str, int, float, str]]:
    """Run ``nbgrader autograde STAGE --student ID *extra`` for every job on ``workers`` forkservers: a list of
    (stage, student, exit code, seconds, output) in the order the commands ended; ``report`` gets a line for each."""
    with kernel_server_for_workers(env) as env:  # one server imports PyTorch for every kernel (a root grader)
        return _run(course, jobs, workers, extra, env, report)


def _run(course: Path, jobs: list[tuple[str, str]], workers: int, extra: list[str], env: dict[str, str],
         report) -> list[tuple[str, str, int, float, str]]:
    servers: queue.SimpleQueue = queue.SimpleQueue()
    for _ in range(workers):
        servers.put(_forked.Forkserver(PRELOAD, env))

    def one(job: tuple[str, str]) -> tuple[str, str, int, float, str]:
        stage, student = job
        server = servers.get()
        try:
            start = time.perf_counter()
            args = ["-m", "nbgrader", "autograde", stage, "--student", student, "--log-level=WARN", *extra]
            try:
                code, output = server.run(args, course, env, TIMEOUT)
            except RuntimeError:  # the worker's process could not start or ended: a new nbgrader for this one
                code, output = _forked.run(args, course, env, TIMEOUT, preload=())
            return stage, student, code, time.perf_counter() - start, output
        finally:
            servers.put(server)

    done = []
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for future in concurrent.futures.as_completed([pool.submit(one, job) for job in jobs]):
            stage, student, code, seconds, output = result = future.result()
            done.append(result)
            report(say("grading.autograde.done" if code == 0 else "grading.autograde.failed", stage=stage,
                       student=student, seconds=f"{seconds:.1f}", code=code))
    while not servers.empty():
        server = servers.get()
        if server.proc is not None:
            server.proc.kill()
            server.proc.wait()
    return done


def main(argv: list[str] | None = None) -> int:
    p = _Parser(prog="tinylm-autograde", description=_help(say("grading.autograde.description")))
    p.add_argument("stages", nargs="+", metavar="STAGE", help=_help(say("grading.autograde.help.stages")))
    p.add_argument("--workers", type=_int, default=1, help=_help(say("grading.autograde.help.workers")))
    p.add_argument("--student", action="append", metavar="ID", help=_help(say("grading.autograde.help.student")))
    p.add_argument("--course", type=Path, default=Path("."), help=_help(say("grading.autograde.help.course")))
    p.add_argument("--force", action="store_true", help=_help(say("grading.autograde.help.force")))
    p.add_argument("--shards", type=_int, default=1, help=_help(say("grading.autograde.help.shards")))
    p.add_argument("--shard", metavar="INDEX", help=_help(say("grading.autograde.help.shard", env=INDEX)))
    args = p.parse_args(argv)
    venv_on_path()
    try:
        if args.workers < 1:
            raise UsageError(say("grading.autograde.bad_workers", workers=args.workers))
        if args.shards < 1:
            raise UsageError(say("grading.autograde.bad_shards", shards=args.shards))
        # one shard is the whole class: an index in the environment (a pod of another Job) does not change that
        index = args.shard if args.shard is not None else "0" if args.shards == 1 else os.environ.get(INDEX)
        if index is None or not index.isdigit() or not int(index) < args.shards:
            raise UsageError(say("grading.autograde.bad_shard", last=args.shards - 1, shards=args.shards,
                                 shard=index, env=INDEX))
        coursedir = course_directory(args.course)
        if args.workers > 1 and coursedir.db_url.startswith("sqlite:"):
            raise UsageError(say("grading.autograde.one_writer", workers=args.workers))
        if args.shards > 1 and coursedir.db_url.startswith("sqlite:"):
            raise UsageError(say("grading.autograde.one_writer_shards", shards=args.shards))
        jobs = shard(plan(coursedir, args.stages, args.student), int(index), args.shards)
        add_learners(coursedir.db_url, coursedir.course_id, {s for _, s in jobs})
    except UsageError as e:
        return _fail(p.prog, e)
    env = dict(os.environ)
    # The workers' kernels share the cores: each computes on its share (the sandbox passes these on).
    from tinylm_checks.capstone import usable_cpus  # (PyTorch's import: not for --help or a usage error)
    threads = str(max(1, usable_cpus() // args.workers))  # a pod's CPU limit, not its node's cores
    env.setdefault("OMP_NUM_THREADS", threads)
    env.setdefault("MKL_NUM_THREADS", threads)
    start = time.perf_counter()
    done = run(Path(coursedir.root), jobs, args.workers, ["--force"] if args.force else [], env)
    failed = [d for d in done if d[2] != 0]
    for stage, student, code, _, output in failed:
        print(say("grading.autograde.output", stage=stage, student=student), file=sys.stderr)
        print(output[-3000:], file=sys.stderr)
    print(say("grading.autograde.summary", commands=len(done), failed=len(failed), workers=args.workers,
              seconds=f"{time.perf_counter() - start:.1f}"))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
