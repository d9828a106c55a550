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
needed, installs the course's dependencies from PyPI at their pinned versions, hides nbgrader's instructor panels,
and writes the course's files into its site-packages (after removing an earlier build's). Nothing of the course goes
through pip, so no wheel of it is cached. The venv is for other users, the learners: it is refused inside the course
folder (which must be closed to them), it is made from a Python every user can run (:func:`shared_python`), everything
in it is made readable by all, and a folder on its way that others cannot enter is named in a warning.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import registry

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tinylm_solutions", "tinylm_checks", "tinylm_grading", "assets")
"""What an earlier build may have left in site-packages (removed before writing)."""

CHECKS_SIDE = ("__init__.py", "_text.py", "failure.py", "failure_html.py", "client.py", "agent.py", "probes.py", "environment.py")
"""``tinylm_checks``'s modules in a learner's environment (and its ``lab`` subpackage)."""
MESSAGES = ("__init__", "core", "client", "lab", "claims", "environment")
"""The message tables the learner's side shows (the checks' own words come from the service, already filled in)."""


def _imports(path: Path, package: str) -> set[str]:
    """The modules of ``package`` that the file at ``path`` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
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
    """What a learner's environment installs from PyPI (``pyproject.toml``): the course's dependencies, its ``lab``
    extra (JupyterLab) and nbgrader (the learners' assignment list), at the versions of ``constraints.txt``
    (:data:`CONSTRAINTS`, given to pip with them)."""
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    return [*project["dependencies"], *extras["lab"],
            *(r for r in extras["grading"] if r.startswith("nbgrader"))]


CONSTRAINTS = ROOT / "constraints.txt"
"""The versions the course is tested with: pip's constraints for :func:`requirements`."""


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
    (site / "tinylm_checks/learner.json").write_text(json.dumps({"released": released, "checks": check_names()}),
                                                     encoding="utf-8")
    return [*files, "tinylm_checks/learner.json"]


INSTRUCTOR_PANELS = ("@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:course-list",
                     "@jupyter/nbgrader:formgrader")
INSTRUCTOR_SERVER = ("nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list")


def site_packages(venv: Path) -> Path:
    python = venv / "bin" / "python"
    return Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, encoding="utf-8").stdout.strip())


def readable_by_others(path: Path) -> bool:
    """Whether a user who is neither the owner nor in the group can read the file at ``path``: every folder on its way
    lets others through (o+x), and the file lets them read (o+r)."""
    path = Path(path).resolve()
    return path.stat().st_mode & 0o004 != 0 and all(p.stat().st_mode & 0o001 for p in path.parents)


def closed_folder(path: Path) -> Path | None:
    """The first folder on the way to ``path`` (itself included, if it exists) that other users cannot enter, or
    None."""
    path = Path(path).absolute()
    for folder in [*reversed(path.parents), path]:
        if folder.exists() and not folder.resolve().stat().st_mode & 0o001:
            return folder
    return None


def shared_python() -> str | None:
    """A Python of this version with ``venv`` that every user can run (a venv links to it): this one, when no folder on
    its way is closed to others (pyenv's under /root is), else the system's ``python3``; None if there is none."""
    def open_to_all(path: Path) -> bool:
        return all(p.stat().st_mode & 0o005 == 0o005 for p in [path.resolve(), *path.resolve().parents])

    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (Path(sys._base_executable), Path(f"/usr/bin/python{version}"), Path("/usr/bin/python3")):
        if candidate.exists() and open_to_all(candidate):
            found = subprocess.run([str(candidate), "-c", "import sys, venv, ensurepip; print(sys.version_info[:2])"],
                                   capture_output=True, encoding="utf-8")
            if found.returncode == 0 and found.stdout.strip() == str(sys.version_info[:2]):
                return str(candidate)
    return None


def open_to_learners(tree: Path) -> None:
    """Let every user read ``tree`` and enter its folders, and run what its owner may run (a umask of 077 would have
    kept the venv to its builder). Symbolic links are left as they are."""
    for folder, _, files in os.walk(tree):
        for path in [Path(folder), *(Path(folder) / f for f in files)]:
            if path.is_symlink():
                continue
            mode = path.stat().st_mode
            wanted = mode | 0o444 | (0o111 if path.is_dir() or mode & 0o100 else 0)
            if wanted != mode:
                os.chmod(path, wanted)


def build(venv: Path, released: str, extra: tuple[str, ...] = (), python: str | None = None) -> list[str]:
    """Create (or update) the learner's venv at ``venv`` with ``python`` (default: :func:`shared_python`, else this
    one): the course's dependencies at their pinned versions and ``extra`` packages from PyPI, nbgrader's instructor
    panels and server extensions off, the course's learner files (:func:`write`), all readable by every user (:func:`open_to_learners`)."""
    released = stage(released)
    given_modules(released)  # refuse before installing anything
    base, python = python or shared_python() or sys.executable, venv / "bin" / "python"
    if not python.exists():
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "pip==26.3"], check=True)
    subprocess.run([*pip, "-c", str(CONSTRAINTS), *requirements(), *extra], check=True)
    jupyter = str(venv / "bin" / "jupyter")
    subprocess.run([jupyter, "labextension", "disable", "--level=sys_prefix", *INSTRUCTOR_PANELS],
                   check=True, capture_output=True)
    for extension in INSTRUCTOR_SERVER:
        subprocess.run([jupyter, "server", "extension", "disable", "--sys-prefix", extension],
                       check=True, capture_output=True)
    settings = venv / "share" / "jupyter" / "lab" / "settings"  # no "get Jupyter news?" pop-up, as in make lab
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "overrides.json").write_text('{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}',
                                             encoding="utf-8")
    written = write(site_packages(venv), released)
    open_to_learners(venv)
    return written


def check_place(venv: Path) -> list[str]:
    """Where the learners' venv would go: the warnings to print (a folder on its way closed to others, no Python every
    user can run).

    Raises:
        ValueError: it is inside the course folder (learners would have to enter it), or it cannot be made there.
    """
    say = _say
    venv = Path(venv).absolute()
    if venv.resolve().is_relative_to(ROOT):
        raise ValueError(say("grading.learnerenv.inside_course", venv=venv, course=ROOT))
    existing = next(p for p in [venv, *venv.parents] if p.exists())
    if not os.access(existing, os.W_OK | os.X_OK) and not (venv / "bin" / "python").exists():
        raise ValueError(say("grading.learnerenv.not_writable", venv=venv, error=f"{existing}: permission denied"))
    warnings = []
    closed = closed_folder(venv)
    if closed is not None:
        warnings.append(say("grading.learnerenv.closed", folder=closed, venv=venv))
    if shared_python() is None:
        warnings.append(say("grading.learnerenv.private_python",
                            version=f"{sys.version_info.major}.{sys.version_info.minor}"))
    return warnings


def _say(key: str, **values) -> str:
    """The message ``key`` in the instructor's language; in English where the course's libraries are not installed
    (``deploy/learner.Dockerfile``'s build stage runs this module with the standard library only)."""
    try:
        from tinylm_checks._text import say
    except ImportError:
        import runpy
        return runpy.run_path(str(ROOT / "tinylm_checks/messages/grading.py"))["MESSAGES"][key].format(**values)
    return say(key, **values)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv=None) -> int:
    """``python -m tinylm_grading.learnerenv --released STAGE (--venv PATH | --site PATH)``: 0 when built; 2 for bad
    arguments (one line, in the instructor's language)."""
    parser = _Parser(prog="learner-env", description=_say("grading.learnerenv.description").replace("%", "%%"))
    for option, kind, more in (("--venv", Path, {}), ("--site", Path, {}), ("--extra", str, {"action": "append",
                                                                                             "default": []}),
                               ("--released", str, {})):
        parser.add_argument(option, type=kind, help=_say(f"grading.learnerenv.help.{option[2:]}").replace("%", "%%"),
                            **more)
    args = parser.parse_args(argv)
    if (args.venv is None) == (args.site is None):
        parser.error(_say("grading.learnerenv.one_of"))
    if not args.released:
        parser.error(_say("grading.learnerenv.needs_released"))
    try:
        released = stage(args.released)
        given_modules(released)
        if args.venv:
            for warning in check_place(args.venv):
                print(warning, file=sys.stderr)
            written = build(args.venv, released, tuple(args.extra))
        else:
            written = write(args.site, released)
    except ValueError as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 2
    modules = sorted(Path(p).stem for p in written if p.startswith("tinylm_solutions/") and p.endswith(".py"))
    print(_say("grading.learnerenv.written", files=len(written), released=released,
               modules=", ".join(m for m in modules if m != "__init__")))
    if args.venv:
        print(_say("grading.learnerenv.open_with", venv=args.venv, released=released[:2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
