"""A failing check as the learner sees it in JupyterLab, in headless Chromium, in English and in Chinese (issue 41,
item 1): stage 01's release with two exercises written wrong, run cell by cell.

- The failure renders richly: tried / expected / got as a table, and for a matrix (the attention weights, the causal
  mask) the expected and the got one side by side as heatmaps, the differing cells marked (✕), as many as differ.
- It names the mistake and says where to look; the line that fixes it is not on the screen until the learner opens
  the fold ("show the fix"), and then it is.
- The error output under it is the headline alone (no traceback, no second copy of the message).

Screenshots go to $TMPDIR/tinylm-browser-failure-<lang>-*.png. Needs Chromium as tests/test_browser.py does.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from test_browser import BIN, ROOT, answer_and_run_every_cell, browser, open_notebook, start_lab  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.timeout(600)]
sys.path.insert(0, str(ROOT / "tools"))
import build_notebooks  # noqa: E402

STAGE = "01_attention"
SHOTS = Path(os.environ.get("TMPDIR", "/tmp"))
NO_SCALING = """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.nan_to_num(0.0)
    return weights @ v, weights
"""
PEEKS_AHEAD = "def causal_mask(T):\n    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)\n"
WORDS = {  # what the learner reads, in each language (tinylm_checks/messages/core.py and its catalog)
    "en": {"labels": ["tried", "expected", "got"], "look": "look at", "fold": "show the fix", "fix": "the fix",
           "failed": "failed"},
    "zh": {"labels": ["尝试", "期望", "实际"], "look": "看看", "fold": "看改法", "fix": "改法", "failed": "未通过"},
}


@pytest.fixture(scope="module", params=["en", "zh"])
def lab_in(request, tmp_path_factory):
    lang = request.param
    course = tmp_path_factory.mktemp(f"course-{lang}")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "TINYLM_LANG": lang,
           "JUPYTER_CONFIG_DIR": str(course / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(course / ".runtime"),
           "TINYLM_QUICK": "1", "TINYLM_RUNS": str(course / ".runs")}
    target = course / "notebooks" / STAGE / f"{STAGE}.ipynb"
    target.parent.mkdir(parents=True)
    nbformat.write(build_notebooks.build(ROOT / "course" / f"{STAGE}.py", lang=lang), target)
    subprocess.run([str(BIN / "nbgrader"), "generate_assignment", STAGE, "--log-level=WARN"], cwd=course, env=env,
                   check=True, capture_output=True)
    server, base = start_lab(course / "release", env)
    yield lang, base
    server.terminate()
    server.wait(timeout=20)


def test_a_failure_shows_a_table_heatmaps_and_keeps_the_fix_in_a_fold(lab_in, browser):
    lang, base = lab_in
    words = WORDS[lang]
    page = open_notebook(browser, base, f"{STAGE}/{STAGE}.ipynb")
    try:
        answer_and_run_every_cell(page, {"scaled_dot_product_attention": NO_SCALING, "causal_mask": PEEKS_AHEAD})
        sdpa = page.locator(".tinylm-failure", has_text="check_scaled_dot_product_attention").first
        sdpa.wait_for(state="visible", timeout=180_000)
        sdpa.scroll_into_view_if_needed()
        page.wait_for_timeout(500)  # a scrolled notebook draws its cells a moment later
        page.screenshot(path=str(SHOTS / f"tinylm-browser-failure-{lang}-1-attention.png"))
        text = sdpa.inner_text()
        assert [sdpa.locator(".tinylm-parts th").nth(i).inner_text() for i in range(3)] == words["labels"], text
        assert sdpa.locator(".tinylm-heatmap").count() == 2
        assert sdpa.locator(".tinylm-heatmap td", has_text="✕").count() >= 2  # a row's weights differ in both
        assert f"{words['look']}:" in text or f"{words['look']}：" in text, text
        fix = sdpa.locator("details.tinylm-fix p")
        assert not fix.is_visible() and "math.sqrt" not in text, text  # the fix waits for the learner
        sdpa.locator("details.tinylm-fix summary", has_text=words["fold"]).click()
        fix.wait_for(state="visible", timeout=10_000)
        assert "math.sqrt(d_k)" in fix.inner_text() and words["fix"] in fix.inner_text()
        page.screenshot(path=str(SHOTS / f"tinylm-browser-failure-{lang}-2-fix-shown.png"))
        error = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
                             has_text="check_scaled_dot_product_attention").first
        error.scroll_into_view_if_needed()
        lines = error.inner_text().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("CheckFailure: check_scaled_dot_product_attention "), lines
        assert words["failed"] in lines[0]

        mask = page.locator(".tinylm-failure", has_text="check_causal_mask").first
        mask.wait_for(state="visible", timeout=60_000)
        mask.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        page.screenshot(path=str(SHOTS / f"tinylm-browser-failure-{lang}-3-mask.png"))
        grids = mask.locator(".tinylm-heatmap")
        assert grids.count() == 2
        # T = 5 and diagonal=1: the four cells just above the diagonal differ, in the expected and in the got mask
        assert [grids.nth(i).locator("td", has_text="✕").count() for i in range(2)] == [4, 4]
        assert not mask.locator("details.tinylm-fix p").is_visible()
    except Exception:
        page.screenshot(path=str(SHOTS / f"tinylm-browser-failure-{lang}-failed.png"), full_page=True)
        raise
    finally:
        page.close()
