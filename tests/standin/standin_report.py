"""A pytest plugin for the stand-ins (``-p standin_report``, with this folder on ``PYTHONPATH``): at the end of the
session it checks, in this process, that each stand-in :mod:`sitecustomize` set up was in force, and prints one line
saying so (``stand-in ...:``); if one was not, it says what and the session fails."""
from __future__ import annotations

import locale
import os
import sys
import types

import pytest
import sitecustomize

_FOUND: list[str] = []
_PROBLEMS: list[str] = []


def _no_unix() -> str:
    ours = sorted(name for name in sys.modules if name.partition(".")[0] in sitecustomize.OURS)
    unseen = [name for name in ours if name not in sitecustomize.SEEN]
    if not ours or unseen:
        _PROBLEMS.append(f"modules of the course imported without the stand-in: {unseen or 'none imported'}")
    probe = types.ModuleType("tinylm_standin_probe")  # code of the course's, as its modules see Python
    probe.__builtins__ = sys.modules[ours[0]].__builtins__ if ours else __builtins__
    still = []
    for module, names in sitecustomize.GONE.items():
        seen = eval(f"__import__({module!r})", vars(probe))
        still += [f"{module}.{name}" for name in names if hasattr(seen, name)]
    for module in sitecustomize.BLOCKED:
        try:
            exec(f"import {module}", vars(probe))
            still.append(module)
        except ImportError:
            pass
    if still:
        _PROBLEMS.append(f"still there: {', '.join(still)}")
    forked = sys.modules.get("tinylm_checks._forked")
    if forked is None or forked.FORKS:
        _PROBLEMS.append("tinylm_checks._forked was not imported, or forks")
    return (f"stand-in no-unix: {len(ours)} modules of the course imported without "
            f"{sum(map(len, sitecustomize.GONE.values()))} names of os, signal and socket and without "
            f"{len(sitecustomize.BLOCKED)} Unix-only modules; commands run as new pythons")


def _encoding() -> str:
    encoding = locale.getpreferredencoding(False)
    if encoding.lower() != "gb18030" or sys.flags.utf8_mode or not sys.flags.warn_default_encoding:
        _PROBLEMS.append(f"locale encoding {encoding}, UTF-8 mode {sys.flags.utf8_mode}, "
                         f"warn_default_encoding {sys.flags.warn_default_encoding}")
    probe = types.ModuleType("tinylm_standin_probe")
    try:
        exec(f"open({os.devnull!r}).close()", vars(probe))
        _PROBLEMS.append("open() without an encoding in a tinylm_* module did not raise EncodingWarning")
    except EncodingWarning:
        pass
    exec(f"open({os.devnull!r}).close()", {"__name__": "somebody_else"})  # other modules' are no error
    return (f"stand-in encoding: open() without an encoding reads {encoding} (UTF-8 mode off); "
            "in the course's modules it is an error")


def pytest_sessionfinish(session):
    if "no-unix" in sitecustomize.STANDINS:
        _FOUND.append(_no_unix())
    if "encoding" in sitecustomize.STANDINS:
        _FOUND.append(_encoding())
    if not _FOUND:
        _PROBLEMS.append("no stand-in (TINYLM_STANDIN) was set")
    if _PROBLEMS:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    for line in _FOUND:
        terminalreporter.write_line(line)
    for problem in _PROBLEMS:
        terminalreporter.write_line(f"stand-in problem: {problem}")
