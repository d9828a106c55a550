"""Untrusted HTML stays inert in the pages nbgrader makes from a learner's notebook, in headless Chromium (issue 38):

- each layer alone (tinylm_grading/html.py) keeps a page of crafted outputs from running anything, where nbconvert's
  page runs every payload (the test shows both: its payloads are live);
- a stage-01 submission whose exercise cell displays the payloads is autograded and its feedback generated, as an
  instructor does it: the feedback page runs none of them;
- the formgrader (nbgrader's server extension in a Jupyter server, as the instructor runs it) shows that submission
  with none of them running, under a Content-Security-Policy header, and still grades by a click.

A payload sets ``window.xss_<name>``; the pages' own scripts must run with no policy violation.

Needs Debian's Chromium (/usr/bin/chromium); skipped without it unless TINYLM_REQUIRE_BROWSER=1, as test_browser.py.
"""
from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from nbgrader_cli import nbgrader
from test_browser import CHROMIUM, free_port
from test_html import exporter
from tinylm_grading.html import InertHTMLExporter, clean_page, inert_cell, page_policy

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.timeout(900)]

if not Path(CHROMIUM).exists():
    if os.environ.get("TINYLM_REQUIRE_BROWSER") == "1":
        raise RuntimeError("Chromium is required (TINYLM_REQUIRE_BROWSER=1): apt-get install chromium")
    pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
A = "01_attention"
STUDENT = "mallory"
TOKEN = "tinylm-test"
GOOD = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")  # 1x1 PNG
BAD = "aGVsbG8="  # not an image: an <img> of it fires onerror
# What a learner's cell displays: (data, metadata) of display_data outputs. nbconvert writes an image's width and
# height unquoted (and HTML-escaped): a space or a tab ends the value, and what follows is a new attribute.
OUTPUTS = {
    "width": ({"image/png": BAD}, {"image/png": {"width": "1 onerror=window.xss_width=1", "height": 7}}),
    "height": ({"image/png": BAD}, {"image/png": {"height": "1\tonerror=window.xss_height=1"}}),  # a tab ends it too
    "toplevel": ({"image/png": GOOD}, {"width": "1 onload=window.xss_toplevel=1"}),
    "jpeg": ({"image/jpeg": BAD}, {"image/jpeg": {"width": "1 onerror=window.xss_jpeg=1"}}),
    "key": ({'image/png" onerror="window.xss_key=1': BAD, "text/plain": "a crafted mimetype key"}, {}),
    "html": ({"text/html": '<a id="xss-link" href="javascript:window.xss_link=1">click me</a> '
                           '<svg onload="window.xss_svg=1"></svg><img src="x" onerror="window.xss_html=1">'}, {}),
}
ATTACK = "\nfrom IPython.display import display\n" + "".join(
    f"display({data!r}, raw=True, metadata={metadata!r})\n" for data, metadata in OUTPUTS.values()) + (
    "from IPython.display import Image\nimport base64\n"  # the issue's own example, through IPython's Image
    f"display(Image(data=base64.b64decode({GOOD!r}), metadata={{'width': '1 onload=window.xss_image=1'}}))\n")
WRONG = "import math\ndef attention_scores(q, k):\n    return q @ k.transpose(-2, -1)  # no scaling\n"
FLAGS = "Object.keys(window).filter(k => k.startsWith('xss_'))"
# Every policy violation the page reports, and the payloads' flags once its links were clicked.
WATCH = ("window.__violations = []; document.addEventListener('securitypolicyviolation', "
         "e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        yield chromium
        chromium.close()


def visit(browser, url: str, body: str | None = None, login: str | None = None) -> tuple[list[str], list[str], object]:
    """Open ``url`` (serving ``body`` there, if given; after logging in to the Jupyter server at ``login``), click the
    payload's link and every javascript: link the page has, and return the payloads' flags that are set, the policy
    violations reported and the page. MathJax's CDN is not reached (no internet here): its requests are refused."""
    page = browser.new_page()
    if login:
        page.goto(f"{login}/login")
        page.fill("input[type=password]", TOKEN)
        with page.expect_navigation(timeout=60_000):  # the login's answer, before the next goto (a busy machine is
            page.keyboard.press("Enter")  # slow to give it, and a goto would cancel it: not logged in)
    page.add_init_script(WATCH)
    page.route("https://cdnjs.cloudflare.com/**", lambda route: route.abort())
    if body is not None:
        page.route(url, lambda route: route.fulfill(body=body, content_type="text/html"))
    response = page.goto(url)
    page.wait_for_load_state("load")
    for link in page.locator("a[href^='javascript:' i], a#xss-link").all():
        link.click()
    page.wait_for_timeout(300)
    page.response = response
    return page.evaluate(FLAGS), page.evaluate("window.__violations"), page


def crafted_notebook():
    """A notebook holding the payloads as outputs, as a learner's kernel would have displayed them, and some course
    text (math, a hint in <details>)."""
    cell = nbformat.v4.new_code_cell("attack()", outputs=[
        nbformat.v4.new_output("display_data", data=data, metadata=metadata) for data, metadata in OUTPUTS.values()])
    text = nbformat.v4.new_markdown_cell("## Scores\n\n$x^2 < y$\n\n<details><summary>Hint 1</summary>\n\nScale."
                                         "\n\n</details>")
    return nbformat.v4.new_notebook(cells=[text, cell])


def test_each_layer_alone_keeps_the_crafted_outputs_inert(browser):
    nb = crafted_notebook()
    resources = {"nbgrader": {"notebook": A, "score": 0, "max_score": 7, "late_penalty": 0}}
    unprotected, _ = exporter("feedback").from_notebook_node(nb, resources=resources)  # nbconvert's, sanitize_html on
    ran, _, _ = visit(browser, "http://feedback.test/raw.html", unprotected)
    assert sorted(ran) == ["xss_height", "xss_jpeg", "xss_toplevel", "xss_width"]  # the payloads are live there

    reduced = nbformat.from_dict(nb)
    for cell in reduced.cells:
        inert_cell(cell)
    skeleton = nbformat.from_dict(nb)
    skeleton.cells = []
    own, _ = exporter("feedback").from_notebook_node(skeleton, resources=resources)
    protected = clean_page(own, own)  # the policy the template's own page gets
    meta = re.search(r"<meta [^>]*Content-Security-Policy[^>]*>", protected).group(0)
    layers = {
        "outputs reduced": exporter("feedback").from_notebook_node(reduced, resources=resources)[0],
        "page cleaned": re.sub(r"<meta [^>]*Content-Security-Policy[^>]*>", "", clean_page(unprotected, own)),
        "policy": unprotected.replace('<meta charset="utf-8"/>', '<meta charset="utf-8"/>' + meta, 1),
    }
    for layer, page in layers.items():
        ran, violations, _ = visit(browser, f"http://feedback.test/{layer.replace(' ', '-')}.html", page)
        assert ran == [], layer
    assert not any("script-src" in v for v in visit(browser, "http://feedback.test/all.html", protected)[1])


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A course folder with stage 01, one learner's submission (an exercise wrong, its cell displaying the payloads)
    autograded and its feedback generated."""
    course = tmp_path_factory.mktemp("course")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "notebooks" / A, course / "notebooks" / A)
    nbgrader("generate_assignment", A, "--force", cwd=course)
    nb = nbformat.read(course / "notebooks" / A / f"{A}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "attention_scores")
    cell.source = WRONG + ATTACK
    folder = course / "submitted" / STUDENT / A
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{A}.ipynb")
    nbgrader("autograde", A, "--force", cwd=course)
    nbgrader("generate_feedback", A, "--force", cwd=course)
    return course


def test_the_feedback_page_runs_none_of_the_payloads(course, browser):
    feedback = course / "feedback" / STUDENT / A / f"{A}.html"
    ran, violations, page = visit(browser, feedback.as_uri())
    assert ran == [] and page.title() == A
    assert page.locator("img[height='7']").count() == 1 and page.locator("a", has_text="click me").count() == 1
    assert page_policy(feedback.read_text()) is not None and not [v for v in violations if "script" in v]
    autograded = nbformat.read(course / "autograded" / STUDENT / A / f"{A}.ipynb", as_version=4)
    cell = next(c for c in autograded.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "attention_scores")
    displayed = [o for o in cell.outputs if o.output_type == "display_data"]
    assert len(displayed) == len(OUTPUTS) + 1  # the kernel displayed every payload, and only their sizes are left
    assert [o.metadata for o in displayed] == [{"image/png": {"height": 7}}, {}, {}, {}, {}, {}, {}]


def test_the_feedback_page_names_the_mistake_and_keeps_the_fix_in_a_fold(course, browser):
    """The check cell's verdict, computed by the grader, shows as JupyterLab shows it (issue 41, item 1): tried /
    expected / got as a table, the mistake named with where to look, and the fix in a closed fold that opens on a
    click; the error under it is the headline and the grader's note."""
    feedback = course / "feedback" / STUDENT / A / f"{A}.html"
    _, _, page = visit(browser, feedback.as_uri())
    try:
        failure = page.locator("div", has=page.locator("details", has_text="show the fix")).filter(
            has_text="check_attention_scores failed").last
        text = failure.inner_text()
        assert "likely mistake: the scores are not scaled" in text and "look at:" in text, text
        assert [page.locator("th", has_text=label).count() > 0 for label in ("tried", "expected", "got")] == [True] * 3
        fix = failure.locator("details p")
        assert not fix.is_visible() and "math.sqrt" not in text
        failure.locator("details summary").click()
        fix.wait_for(state="visible", timeout=10_000)
        assert "math.sqrt(d_k)" in fix.inner_text()
    finally:
        page.close()
    autograded = nbformat.read(course / "autograded" / STUDENT / A / f"{A}.ipynb", as_version=4)
    cell = next(c for c in autograded.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "attention_scores_check")
    error = [o for o in cell.outputs if o.output_type == "error"]
    assert len(error) == 1 and error[0].traceback[0].startswith("CheckFailure: check_attention_scores failed: ")
    assert len(error[0].traceback) == 2 and "math.sqrt" not in error[0].evalue


@pytest.fixture(scope="module")
def formgrader(course):
    """The instructor's Jupyter server in the course folder, with nbgrader's formgrader (enabled by nbgrader's own
    server configuration), reading the course's nbgrader_config.py as `make class` has it."""
    port = free_port()
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
           "JUPYTER_CONFIG_DIR": str(course / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(course / ".runtime")}
    server = subprocess.Popen(
        [str(BIN / "jupyter"), "server", "--no-browser", f"--port={port}", "--ip=127.0.0.1", "--allow-root",
         f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={course}"],
        cwd=course, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
            break
        except OSError:
            if time.time() > deadline or server.poll() is not None:
                server.kill()
                pytest.fail("the Jupyter server did not start")
            time.sleep(0.5)
    yield base
    server.terminate()
    server.wait(timeout=20)


def test_the_formgrader_shows_the_submission_inert_and_still_grades(course, formgrader, browser):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        submission = gb.find_submission_notebook(A, A, STUDENT).id
        assert gb.find_grade("attention_scores_check", A, A, STUDENT).score == 0
    ran, violations, page = visit(browser, f"{formgrader}/formgrader/submissions/{submission}/", login=formgrader)
    assert ran == [] and page.title() == A
    header = page.response.headers["content-security-policy"]
    assert "frame-ancestors 'self'" in header and "script-src 'self' " in header and "'unsafe-inline'" not in \
        header.split("script-src")[1].split(";")[0]
    assert page.locator("img[height='7']").count() == 1 and page.locator("a", has_text="click me").count() == 1
    assert violations == []  # the formgrader's own scripts, styles and handlers all run
    # grading by a click: the formgrader's script saves the score through its API
    page.locator("#attention_scores_check").locator("xpath=ancestor::div[contains(@class, 'panel-heading')]") \
        .locator("button.full-credit").click()
    deadline = time.time() + 20
    while True:
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            grade = gb.find_grade("attention_scores_check", A, A, STUDENT)
            if grade.manual_score == grade.max_score or time.time() > deadline:
                break
        time.sleep(0.5)
    assert grade.manual_score == grade.max_score == 1
    page.locator("span.name-hidden.glyphicon").click()  # the template's own onclick handler runs
    page.locator("a.name-shown").wait_for(state="visible", timeout=20_000)
    for other in ("manage_assignments", f"gradebook/{A}/{A}"):  # the formgrader's other pages: a header, still working
        _, violations, page = visit(browser, f"{formgrader}/formgrader/{other}", login=formgrader)
        assert "object-src 'none'" in page.response.headers["content-security-policy"] and violations == []
        page.wait_for_selector(f"text={A}", timeout=20_000)
