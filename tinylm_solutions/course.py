"""``tinylm-course``: the course's learner notebooks on any platform, without ``make``.

::

    tinylm-course lab [DIR] [--lang en|zh] [-- JUPYTERLAB OPTIONS...]
    tinylm-course release DIR [--lang en|zh]

``release`` writes the learner notebook of every stage, in ``--lang`` (default: :func:`tinylm_solutions.i18n.language`,
from ``TINYLM_LANG`` or the locale), into ``DIR/<stage>/<stage>.ipynb``, the folders nbgrader's release has. A stage
whose folder is in DIR already is kept, whatever it holds: it is the learner's work (one line names what was kept).
``lab`` does the same, then runs JupyterLab on DIR (``python -m jupyterlab``, so the same on Linux, macOS and
Windows), its own menus in the notebooks' language and the kernels' checks too; options after ``--`` go to JupyterLab.
``make lab`` and ``make release`` are this command on ``release/``.

The notebooks are the package's own (:data:`NOTEBOOKS`, ``learner_notebooks/<lang>/<stage>/<stage>.ipynb``): what
``nbgrader generate_assignment`` makes of each stage (solutions and hidden tests taken out), in both languages, with a
first cell that installs the course where it is missing, for hosted notebooks (``tools/build_notebooks.py`` writes
them; ``tests/test_build_notebooks.py`` keeps them the build of ``course/``).

Bad input gives one line, ``tinylm-course: error: ...``, on stderr and exit status 2: a Python older than
:data:`PYTHON` (this module and what it imports run on older ones, to say so), a DIR that is a file or cannot be
written, JupyterLab missing, and argparse's own errors. This module imports no PyTorch: it starts in a blink.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

from . import i18n
from .messages import ArgumentParser, error_line, say

PYTHON = (3, 11)
"""The oldest Python the course runs on (pyproject.toml's requires-python)."""
NOTEBOOKS = Path(__file__).resolve().parent / "learner_notebooks"
"""The learner notebooks: ``<lang>/<stage>/<stage>.ipynb``."""
LAB_FOLDER = "tinylm-course"
"""``tinylm-course lab``'s folder when none is given, in the current folder."""
LAB_SETTINGS = ".jupyter-lab"
"""JupyterLab's settings for the course, per language, in the course's folder (``JUPYTERLAB_SETTINGS_DIR``)."""
PROG = "tinylm-course"


class UsageError(Exception):
    """Bad input, its message already in the user's language: reported as one line, exit status 2."""


class _Parser(ArgumentParser):
    """argparse in the user's language, whose usage errors are one line: ``prog: error: <argparse's message> (see
    prog --help)``."""

    def error(self, message: str):
        self.exit(2, error_line(self.prog, say("error.see_help", message=message, prog=self.prog)))


class _Formatter(argparse.HelpFormatter):
    """argparse's help, whose descriptions and epilogs do not break a command's options at their hyphens."""

    def _fill_text(self, text, width, indent):
        return textwrap.fill(" ".join(text.split()), width, initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False)


def _help(text: str) -> str:
    return text.replace("%", "%%")  # argparse %-formats help texts


def stages(lang: str) -> list[str]:
    """The stages the package has learner notebooks of, in order."""
    return sorted(p.name for p in (NOTEBOOKS / lang).iterdir() if (p / f"{p.name}.ipynb").is_file())


def release(folder: Path, lang: str) -> tuple[list[str], list[str]]:
    """Write the learner notebook of every stage in ``lang`` into ``folder/<stage>/`` (``folder`` is made if
    missing), except the stages whose folder is there already. Returns the stages written and the stages kept.

    A stage is written into a hidden folder of its own and then renamed into place, so a stage folder is never
    half written, and one that appears meanwhile (another ``release`` on the same folder) is kept.

    Raises:
        UsageError: ``folder`` is a file, or cannot be made or written into.
    """
    if folder.exists() and not folder.is_dir():
        raise UsageError(say("course.error.not_a_folder", folder=folder))
    written, kept = [], []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for stage in stages(lang):
            target = folder / stage
            if target.exists() or target.is_symlink():
                kept.append(stage)
                continue
            partial = folder / f".{stage}.{uuid.uuid4().hex[:8]}.partial"
            partial.mkdir()
            try:
                shutil.copyfile(NOTEBOOKS / lang / stage / f"{stage}.ipynb", partial / f"{stage}.ipynb")
                os.rename(partial, target)
            except FileExistsError:
                kept.append(stage)
                continue
            except OSError:
                if not target.exists():
                    raise
                kept.append(stage)  # made meanwhile (a directory rename onto a full folder fails otherwise)
                continue
            finally:
                shutil.rmtree(partial, ignore_errors=True)
            written.append(stage)
    except OSError as e:
        raise UsageError(say("course.error.cannot_write", folder=folder,
                             reason=e.strerror or type(e).__name__)) from None
    return written, kept


def report(folder: Path, written: list[str], kept: list[str]) -> None:
    """One line for what was written, one for what was kept."""
    if written:
        print(say("course.wrote", count=len(written), folder=folder))
    if kept and not written:
        print(say("course.kept_all", count=len(kept), folder=folder))
    elif kept:
        print(say("course.kept", stages=", ".join(kept), folder=folder))


def lab_settings(folder: Path, lang: str) -> Path:
    """JupyterLab's settings for the course in ``lang``, written under ``folder``: its menus in the language (the
    language pack's locale) and no "get Jupyter news?" pop-up. Returns the settings folder."""
    settings = folder / LAB_SETTINGS / lang
    for plugin, values in {"translation-extension/plugin": {"locale": i18n.LOCALE.get(lang, "en")},
                           "apputils-extension/notification": {"fetchNews": "false"}}.items():
        path = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    return settings


def lab_command(folder: Path, jupyter_args: list[str]) -> list[str]:
    """The command that runs JupyterLab on ``folder`` with this Python. Jupyter refuses to run as root unless told:
    containers often are root."""
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    return [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={folder}",
            *(["--allow-root"] if root else []), *jupyter_args]


def lab(folder: Path, lang: str, jupyter_args: list[str]) -> int:
    """Run JupyterLab on ``folder`` until it stops; its exit status.

    Raises:
        UsageError: JupyterLab is not installed in this Python.
    """
    if importlib.util.find_spec("jupyterlab") is None:
        raise UsageError(say("course.error.no_jupyterlab", python=sys.executable))
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(lab_settings(folder, lang)), "TINYLM_LANG": lang}
    process = subprocess.Popen(lab_command(folder, jupyter_args), env=env)
    while True:
        try:
            return process.wait()
        except KeyboardInterrupt:  # the terminal sent Ctrl+C to JupyterLab too: it asks, or stops; wait for it
            continue


def parser() -> argparse.ArgumentParser:
    lang = i18n.language()
    main = _Parser(prog=PROG, description=_help(say("course.description")), epilog=_help(say("course.epilog")),
                   formatter_class=_Formatter)
    commands = main.add_subparsers(dest="command", required=True, metavar="{lab,release}")
    lab_parser = commands.add_parser("lab", help=_help(say("course.help.lab")), formatter_class=_Formatter,
                                     description=_help(say("course.help.lab")),
                                     epilog=_help(say("course.lab.epilog",
                                                      example="tinylm-course lab -- --no-browser --port 8890")))
    lab_parser.add_argument("dir", metavar="DIR", nargs="?", default=LAB_FOLDER, type=Path,
                            help=_help(say("course.help.lab_dir", default=LAB_FOLDER)))
    release_parser = commands.add_parser("release", help=_help(say("course.help.release")), formatter_class=_Formatter,
                                         description=_help(say("course.help.release")))
    release_parser.add_argument("dir", metavar="DIR", type=Path, help=_help(say("course.help.release_dir")))
    for sub in (lab_parser, release_parser):
        sub.add_argument("--lang", choices=i18n.LANGUAGES, default=lang, help=_help(say("course.help.lang", default=lang)))
    return main


def _writable_anywhere() -> None:
    """What this command prints cannot fail on a stream whose encoding lacks a character (Chinese into a Windows pipe
    in code page 1252): such a character is written as its ``\\u`` escape."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    _writable_anywhere()
    if sys.version_info < PYTHON:
        values = {"needed": ".".join(map(str, PYTHON)), "version": ".".join(map(str, sys.version_info[:3])),
                  "python": sys.executable}
        try:
            line = say("course.error.python", **values)
        except ImportError:  # Chinese needs Babel, which this Python may not have: the English, then
            from .messages import TEXT
            line = TEXT["course.error.python"].format(**values)
        print(f"{PROG}: error: {line}", file=sys.stderr)
        return 2
    jupyter_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser().parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if jupyter_args and args.command != "lab":
        parser().error(say("course.error.jupyter_args", args=" ".join(jupyter_args)))
    i18n.set_language(args.lang)  # this command's own lines in the notebooks' language
    folder = args.dir.expanduser().absolute()
    try:
        written, kept = release(folder, args.lang)
        report(folder, written, kept)
        if args.command == "lab":
            sys.stdout.flush()
            return lab(folder, args.lang, jupyter_args)
    except UsageError as e:
        print(error_line(PROG, " ".join(str(e).splitlines())), file=sys.stderr, end="")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
