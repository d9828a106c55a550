"""Issue 40, item 4: argparse's own words ("usage:", "options", "show this help message and exit", "error:", "the
following arguments are required") in the user's language, in every command line of the course."""
from __future__ import annotations

import argparse
import re

import pytest

from tinylm_solutions import course, i18n
from tinylm_solutions.cli import generate_main, train_main

ENGLISH = re.compile(r"usage:|options|positional arguments|show this help|error:|required|invalid choice|"
                     r"unrecognized arguments|expected one argument")


@pytest.fixture
def chinese():
    i18n.set_language("zh")
    yield
    i18n.set_language(None)


def _run(main, args, capsys) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("main, args", [(train_main, ["--help"]), (generate_main, ["--help"]),
                                        (course.main, ["--help"]), (course.main, ["release", "--help"])])
def test_the_help_has_no_english_of_argparse(main, args, capsys, chinese):
    code, out, _ = _run(main, args, capsys)
    assert code == 0 and out.startswith("用法：") and "\n选项：\n" in out and "显示这段帮助并退出" in out
    assert ENGLISH.findall(out) == [], out


@pytest.mark.parametrize("main, args, words", [
    (course.main, [], "tinylm-course：错误：缺少必需的参数：{lab,release}"),
    (course.main, ["release", "x", "--lang", "fr"], "tinylm-course release：错误：参数 --lang：没有 'fr' 这个选项"),
    (train_main, ["--steps"], "tinylm-train：错误：参数 --steps：后面要跟一个值"),
    (train_main, ["--no-such-option"], "tinylm-train：错误：不认识的参数：--no-such-option"),
    (generate_main, [], "tinylm-generate：错误：缺少必需的参数：--checkpoint"),
])
def test_a_usage_error_is_one_chinese_line(main, args, words, capsys, chinese):
    code, _, err = _run(main, args, capsys)
    assert code == 2 and err.startswith(words) and err.count("\n") == 1, err
    assert ENGLISH.findall(err) == [], err


def test_english_is_argparse_s_own_and_argparse_is_left_as_it_was(capsys):
    code, out, _ = _run(train_main, ["--help"], capsys)
    assert code == 0 and out.startswith("usage: tinylm-train") and "\noptions:\n" in out
    i18n.set_language("zh")
    try:
        _run(train_main, ["--help"], capsys)
        other = argparse.ArgumentParser(prog="x").format_help()  # another library's parser, after a Chinese one
    finally:
        i18n.set_language(None)
    assert other.startswith("usage: x") and "show this help message and exit" in other
