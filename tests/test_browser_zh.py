"""The Chinese learner's view in a real JupyterLab, in headless Chromium (issue 18): the release of stage 01 built in
Chinese (as `TINYLM_LANG=zh make release` builds it) and served as `TINYLM_LANG=zh make lab` serves it:

- JupyterLab's own menus are Chinese (the language pack, chosen in the lab's settings);
- the notebook's text is Chinese, and a failing check shows its Chinese message, not a traceback;
- a figure with Chinese labels draws every glyph (matplotlib warns of a missing glyph; here a warning is an error).

Screenshots of each step go to $TMPDIR/tinylm-browser-zh-*.png. Needs Chromium as tests/test_browser.py does.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from test_browser import BIN, ROOT, browser, open_notebook, start_lab  # noqa: F401 - browser: a fixture

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.timeout(600)]
sys.path.insert(0, str(ROOT / "tools"))
import build_notebooks  # noqa: E402

STAGE = "01_attention"
SHOTS = Path(os.environ.get("TMPDIR", "/tmp"))


def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"tinylm-browser-zh-{name}.png"), full_page=False)


@pytest.fixture(scope="module")
def zh_lab(tmp_path_factory):
    course = tmp_path_factory.mktemp("course-zh")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    settings = course / ".jupyter-lab" / "zh"
    (settings / "@jupyterlab" / "translation-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "translation-extension" / "plugin.jupyterlab-settings").write_text('{"locale": "zh_CN"}')
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "TINYLM_LANG": "zh",
           "JUPYTER_CONFIG_DIR": str(course / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(course / ".runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(settings), "TINYLM_QUICK": "1", "TINYLM_RUNS": str(course / ".runs")}
    target = course / "notebooks-zh" / STAGE / f"{STAGE}.ipynb"
    target.parent.mkdir(parents=True)
    nbformat.write(build_notebooks.build(ROOT / "course" / f"{STAGE}.py", lang="zh"), target)
    subprocess.run([str(BIN / "nbgrader"), "generate_assignment", STAGE, "--log-level=WARN",
                    "--CourseDirectory.source_directory=notebooks-zh"], cwd=course, env=env, check=True,
                   capture_output=True)
    server, base = start_lab(course / "release", env)
    yield base
    server.terminate()
    server.wait(timeout=20)


def test_the_chinese_course_in_a_chinese_jupyterlab(zh_lab, browser):
    page = open_notebook(browser, zh_lab, f"{STAGE}/{STAGE}.ipynb")
    try:
        menus = page.locator(".lm-MenuBar-itemLabel").all_text_contents()
        assert "文件" in menus and "编辑" in menus, f"JupyterLab's menus are not Chinese: {menus}"
        heading = page.locator(".jp-MarkdownOutput h1").first.text_content()
        assert "注意力" in heading, heading
        shot(page, "1-opened")
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        error = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
                             has_text="CheckFailure").first
        error.wait_for(state="attached", timeout=180_000)
        error.scroll_into_view_if_needed()
        shot(page, "2-check-failed")
        failure = page.locator(".tinylm-failure", has_text="check_attention_scores").first
        failure.scroll_into_view_if_needed()  # JupyterLab draws only the cells in view
        text = failure.inner_text()
        assert "check_attention_scores 未通过" in error.text_content() and "check_attention_scores 未通过" in text, text
        assert "可能的错误" in text and "看看" in text and "看改法" in text, text
        assert "Traceback" not in text + error.text_content() and 'File "' not in text
    except Exception:
        shot(page, "failure")
        raise
    finally:
        page.close()


def test_a_figure_draws_its_chinese_labels(zh_lab, browser):
    page = open_notebook(browser, zh_lab, f"{STAGE}/{STAGE}.ipynb")
    code = ("import warnings, torch\nfrom tinylm_checks import plot_attention\n"
            "warnings.simplefilter('error')  # a missing glyph is a warning: here, an error\n"
            "ax = plot_attention(torch.softmax(torch.randn(4, 4), -1), ['春', '风', '又', '绿'])\n"
            "ax.figure.canvas.draw()\nprint(ax.get_title(), '|', ax.get_xlabel())")
    try:
        page.evaluate("""async (code) => {
            const panel = window.jupyterapp.shell.currentWidget;
            panel.content.model.sharedModel.insertCell(0, {cell_type: 'code', source: code});
            panel.content.activeCellIndex = 0;
            await window.jupyterapp.commands.execute('notebook:run-cell');
        }""", code)
        first = page.locator(".jp-Notebook .jp-Cell").first
        first.locator(".jp-OutputArea-output img").wait_for(state="attached", timeout=120_000)
        first.scroll_into_view_if_needed()
        shot(page, "3-figure")
        outputs = first.locator(".jp-OutputArea-output").all_text_contents()
        assert not first.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count(), \
            outputs
        assert any("注意力权重" in o for o in outputs), outputs
    except Exception:
        shot(page, "failure")
        raise
    finally:
        page.close()
