"""A learner's environment without answers (``make learner-env``): what it holds, and putting it in a venv.

In a class, a learner must not be one ``inspect.getsource`` away from the answers. The learner's environment
therefore holds, of the course's own code (:func:`learner_files`):

- the checks' learner side: each ``check_x`` asks the check service (:mod:`tinylm_grading.checkservice`) to run
  the check (:mod:`tinylm_checks.client`, with the agent that answers the service's requests and the probes it
  builds), the failure type, the learner's tools (``tinylm_checks.lab``: figures, widgets, records of runs) and the
  words they show. No check's code: a check's tables of known mistakes and its expected values stay with the
  service.
- of the reference, only the given code the released stages' notebooks import (stage 07 imports stage 02's
  attention: once stage 07 is released, that module is given), with what it imports in turn, and the learner's
  language. Never a module that holds an answer of the latest released stage or of a later one; the build stops
  with an error rather than ship one.

``released`` names the latest stage the instructor has released (stages are released in order); rebuilding
with a later one (``make learner-env RELEASED=07_block``) adds the given code that stage brings.

``python -m tinylm_grading.learnerenv --venv PATH --released STAGE`` (``make learner-env``) creates the venv if
needed, installs the course's pinned dependencies from PyPI, hides nbgrader's instructor panels, and writes the
course's files into its site-packages (after removing an earlier build's). Nothing of the course goes through pip,
so no wheel of it is cached.
"""
from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

from . import registry

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tinylm_solutions", "tinylm_checks", "tinylm_grading", "assets")
"""What an earlier build may have left in site-packages (removed before writing)."""

CHECKS_SIDE = ("__init__.py", "_text.py", "failure.py", "client.py", "agent.py", "probes.py", "environment.py")
"""``tinylm_checks``'s modules in a learner's environment (and its ``lab`` subpackage)."""
MESSAGES = ("__init__", "core", "client", "lab", "claims", "environment")
"""The message tables the learner's side shows (the checks' own words come from the service, already filled in)."""


def _imports(path: Path, package: str) -> set[str]:
    """The modules of ``package`` that the file at ``path`` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = f"{package}.{base}" if base else package
            if base == package:
                found |= {f"{package}.{a.name}" for a in node.names}
            elif base.startswith(package + "."):
                found.add(base)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith(package + ".")}
    return {name.split(".")[1] for name in found}


def stage(name: str) -> str:
    """The stage ``name`` names: its full name, or its number (``"07"`` -> ``"07_block"``).

    Raises:
        ValueError: no stage has that name or number.
    """
    found = [s.name for s in registry.STAGES if name in (s.name, s.name[:2])]
    if not found:
        raise ValueError(f"no stage {name!r}: one of {', '.join(registry.STAGE)} (or its number)")
    return found[0]


def requirements() -> list[str]:
    """The course's pinned dependencies (``pyproject.toml``): a learner's environment installs them from PyPI."""
    import tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]


def given_modules(released: str) -> set[str]:
    """The ``tinylm_solutions`` modules a learner's environment holds once ``released`` is out: what the notebooks
    up to it import, with what those import in turn, and the learner's language (``registry.SUPPORT``).

    Raises:
        ValueError: ``released`` is no stage; or a module it would need holds an answer of ``released`` or a later
            stage (the registry and the reference disagree: fix them, never ship it).
    """
    released = stage(released)
    folder = ROOT / "tinylm_solutions"
    todo = {m for s in registry.STAGES if s.name <= released for m in s.imports} | set(registry.SUPPORT)
    found: set[str] = set()
    while todo:
        module = todo.pop()
        found.add(module)
        path = folder / f"{module}.py"
        if not path.exists():
            raise ValueError(f"tinylm_solutions.{module} is not a module file")
        todo |= _imports(path, "tinylm_solutions") - found
    secret = {m for s in registry.STAGES if s.name >= released for m in s.answers}
    if found & secret:
        raise ValueError(f"the given code of the stages up to {released} imports answers of {released} or later: "
                         f"{', '.join(sorted(found & secret))}")
    return found


def learner_files(released: str) -> dict[str, Path]:
    """Every file of the course a learner's environment holds: its path under site-packages -> its source here."""
    files = {"tinylm_solutions/__init__.py": ROOT / "tinylm_solutions/__init__.py"}
    given = given_modules(released)
    files.update({f"tinylm_solutions/{m}.py": ROOT / f"tinylm_solutions/{m}.py" for m in sorted(given)})
    for po in (ROOT / "tinylm_solutions/locale").rglob("*.po"):
        files[po.relative_to(ROOT).as_posix()] = po
    if "data" in given:  # the Chinese corpus, where tinylm_solutions.data looks for it
        files["assets/tang_poems_zh.txt"] = ROOT / "assets/tang_poems_zh.txt"
    checks = ROOT / "tinylm_checks"
    files.update({f"tinylm_checks/{name}": checks / name for name in CHECKS_SIDE})
    files.update({f.relative_to(ROOT).as_posix(): f for f in (checks / "lab").glob("*.py")})
    for name in MESSAGES:
        files[f"tinylm_checks/messages/{name}.py"] = checks / f"messages/{name}.py"
        for po in (checks / "locale").rglob(f"{name}.po"):
            files[po.relative_to(ROOT).as_posix()] = po
    return files


def check_names() -> list[str]:
    """The checks the service runs for a learner: every exercise's check (the registry's), for ``learner.json``.
    (``check_environment`` judges the learner's own kernel: it runs there.)"""
    return sorted({e.check for e in registry.EXERCISES if e.check})


def write(site: Path, released: str) -> list[str]:
    """Put the learner's files into ``site`` (a venv's site-packages), replacing an earlier build's. Returns their
    paths under ``site``."""
    released = stage(released)
    files = learner_files(released)
    for name in PACKAGES:
        shutil.rmtree(site / name, ignore_errors=True)
    for rel, source in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, site / rel)
    (site / "tinylm_checks/learner.json").write_text(json.dumps({"released": released, "checks": check_names()}))
    return [*files, "tinylm_checks/learner.json"]


INSTRUCTOR_PANELS = ("@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:course-list",
                     "@jupyter/nbgrader:formgrader")
INSTRUCTOR_SERVER = ("nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list")


def site_packages(venv: Path) -> Path:
    python = venv / "bin" / "python"
    return Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())


def build(venv: Path, released: str, extra: tuple[str, ...] = (), python: str = sys.executable) -> list[str]:
    """Create (or update) the learner's venv at ``venv`` with ``python``: the pinned dependencies and ``extra``
    packages from PyPI, nbgrader's instructor panels and server extensions off, the course's learner files
    (:func:`write`)."""
    released = stage(released)
    given_modules(released)  # refuse before installing anything
    base, python = python, venv / "bin" / "python"
    if not python.exists():
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "pip==26.3"], check=True)
    subprocess.run([*pip, *requirements(), *extra], check=True)
    jupyter = str(venv / "bin" / "jupyter")
    subprocess.run([jupyter, "labextension", "disable", "--level=sys_prefix", *INSTRUCTOR_PANELS],
                   check=True, capture_output=True)
    for extension in INSTRUCTOR_SERVER:
        subprocess.run([jupyter, "server", "extension", "disable", "--sys-prefix", extension],
                       check=True, capture_output=True)
    settings = venv / "share" / "jupyter" / "lab" / "settings"  # no "get Jupyter news?" pop-up, as in make lab
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "overrides.json").write_text('{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}')
    return write(site_packages(venv), released)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tinylm_grading.learnerenv",
                                     description="Build a learner's environment without answers.")
    parser.add_argument("--venv", type=Path, help="the learner's venv (created if it does not exist)")
    parser.add_argument("--site", type=Path, help="only write the course's files into this site-packages folder")
    parser.add_argument("--extra", action="append", default=[], help="another package for the venv (repeatable)")
    parser.add_argument("--released", default=registry.STAGES[0].name,
                        help="the latest stage released to learners, its name or number (default: the first)")
    args = parser.parse_args(argv)
    if (args.venv is None) == (args.site is None):
        parser.error("give one of --venv and --site")
    try:
        written = build(args.venv, args.released, tuple(args.extra)) if args.venv else write(args.site, args.released)
    except ValueError as e:
        print(f"learner-env: {e}", file=sys.stderr)
        return 2
    modules = sorted(Path(p).stem for p in written if p.startswith("tinylm_solutions/") and p.endswith(".py"))
    print(f"{len(written)} files of the course written; stages up to {stage(args.released)} released; given code: "
          f"{', '.join(m for m in modules if m != '__init__')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
