"""A learner's view in a real JupyterLab: open the released (solutions stripped) notebook of stage 01 in
headless Chromium, run all cells, and read what the first check cell shows: the check's message, not a
traceback through the checker's internals.

Needs Debian's Chromium (/usr/bin/chromium). Without it the test is skipped, unless
TINYLM_REQUIRE_BROWSER=1 (set by .ci/run), where a missing browser is a failure.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TOKEN = "tinylm-test"

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    if os.environ.get("TINYLM_REQUIRE_BROWSER") == "1":
        raise RuntimeError("Chromium is required (TINYLM_REQUIRE_BROWSER=1): apt-get install chromium")
    pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving the release of stage 01, as `make lab` does."""
    course = tmp_path_factory.mktemp("course")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "notebooks" / "01_attention", course / "notebooks" / "01_attention")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
           "JUPYTER_CONFIG_DIR": str(course / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(course / ".runtime")}
    subprocess.run([str(BIN / "nbgrader"), "generate_assignment", "01_attention", "--log-level=WARN"],
                   cwd=course, env=env, check=True, capture_output=True)
    port = free_port()
    server = subprocess.Popen(
        [str(BIN / "jupyter"), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1", "--allow-root",
         f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={course / 'release'}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--LabApp.expose_app_in_browser=True"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
            break
        except OSError:
            if time.time() > deadline or server.poll() is not None:
                server.kill()
                pytest.fail("JupyterLab did not start")
            time.sleep(0.5)
    yield base
    server.terminate()
    server.wait(timeout=20)


def test_a_failing_check_shows_its_message_not_a_traceback(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        page = browser.new_page()
        page.goto(f"{lab}/lab/tree/01_attention/01_attention.ipynb?token={TOKEN}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        # The kernel must be up before "Run All Cells" (on a busy CI machine it takes a while to start).
        page.wait_for_function("window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel"
                               "?.status === 'idle'", timeout=180_000, polling=500)
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")  # the Run menu's command
        error = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
                             has_text="CheckFailure").first
        try:
            error.wait_for(state="attached", timeout=180_000)  # generous: CI runs other tests beside this one
        except Exception:
            shot = Path(os.environ.get("TMPDIR", "/tmp")) / "tinylm-browser-failure.png"
            page.screenshot(path=str(shot), full_page=True)
            status = page.evaluate("window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel?.status")
            raise AssertionError(f"no CheckFailure output appeared (kernel status {status!r}; screenshot {shot})")
        error.scroll_into_view_if_needed()
        text = error.text_content()
        if os.environ.get("TINYLM_SCREENSHOT"):  # a path: look at what the learner sees
            page.screenshot(path=os.environ["TINYLM_SCREENSHOT"])
        browser.close()
    assert "check_attention_scores failed: your code raised NotImplementedError" in text
    assert "likely mistake: the exercise is not done yet" in text
    assert "hint:" in text
    assert "Traceback" not in text and "_core.py" not in text and 'File "' not in text
    assert len(text.splitlines()) <= 8
