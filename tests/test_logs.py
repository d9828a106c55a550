"""tinylm_grading.logs: learner-chosen text reaches the instructor's terminal shown, never obeyed."""
from __future__ import annotations

import io
import logging
import runpy
from pathlib import Path

from tinylm_grading.logs import PrintableFormatter, printable

ROOT = Path(__file__).resolve().parent.parent


def test_control_and_format_characters_are_shown_as_escapes():
    assert printable("a\x1b[2Kb\x07c\x9bd\u202ee\u200bf") == "a\\x1b[2Kb\\x07c\\x9bd\\u202ee\\u200bf"
    assert printable("line\nnext", keep="\n") == "line\nnext" and printable("line\nnext") == "line\\x0anext"
    assert printable("张三 C:\\Users") == "张三 C:\\Users" and len(printable("x" * 1000)) == 300


def _logged(*args) -> str:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(PrintableFormatter(fmt="%(color)s[%(name)s | %(levelname)s]%(end_color)s %(message)s"))
    log = logging.Logger("AutogradeApp")
    log.addHandler(handler)
    log.warning(*args)
    try:
        raise ValueError("in a traceback \x1b]52;c;YQ==\x07")
    except ValueError:
        log.exception("and")
    return out.getvalue()


def test_a_name_cannot_start_a_line_or_reach_the_terminal_as_a_sequence():
    said = _logged("Submitted file %s is a symlink", "x\n[AutogradeApp | INFO] forged\x1b[2K")
    assert "\x1b" not in said and "\x07" not in said
    assert said.splitlines()[0] == "[AutogradeApp | WARNING] Submitted file x\\x0a[AutogradeApp | INFO] forged" \
                                   "\\x1b[2K is a symlink"
    assert "in a traceback \\x1b]52;c;YQ==\\x07" in said and "Traceback (most recent call last):\n" in said


def test_nbgrader_commands_log_through_it():
    config = runpy.run_path(str(ROOT / "nbgrader_config.py"), init_globals={"get_config": lambda: _Config()})["c"]
    assert config.Application.logging_config["formatters"]["console"]["class"] == "tinylm_grading.logs.PrintableFormatter"


class _Config(dict):
    def __getattr__(self, name):
        return self.setdefault(name, _Config())

    def __setattr__(self, name, value):
        self[name] = value
