"""A learner's view in a real JupyterLab, in headless Chromium:

- open the released (solutions stripped) notebook of stage 01, run all cells, and read what the first
  check cell shows: the check's message, not a traceback through the checker's internals;
- open stage 11, run it, and see the three ablations' plots drawn before the first exercise's check stops the run;
- open stage 04, run it, move the "position" slider of the positional-table explorer, and see the plot
  drawn again (ipywidgets render and talk to the kernel);
- open stage 09, write its exercises, run it: the overfit cell shows a tqdm bar and one live loss plot,
  redrawn in place;
- open stage 10, run it, move the "head" slider of the attention explorer, and see the heatmap drawn again;
- open stage 12, write its exercise, run it with no run records: report.md and its figures are written next
  to the notebook, its tables render, and the written answers wait as editable "YOUR ANSWER HERE" cells.

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
RELEASE = {}  # "folder": the release/ folder JupyterLab serves (set by the lab fixture)

# A hung browser must fail the run, not block CI: each test gets at most 10 minutes.
pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.timeout(600)]

if not Path(CHROMIUM).exists():
    if os.environ.get("TINYLM_REQUIRE_BROWSER") == "1":
        raise RuntimeError("Chromium is required (TINYLM_REQUIRE_BROWSER=1): apt-get install chromium")
    pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(root: Path, env: dict) -> tuple[subprocess.Popen, str]:
    """JupyterLab serving ``root`` with ``env``, as `make lab` starts it, once it answers: (process, base URL)."""
    port = free_port()
    server = subprocess.Popen(
        [str(BIN / "jupyter"), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1", "--allow-root",
         f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--LabApp.expose_app_in_browser=True"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
            return server, base
        except OSError:
            if time.time() > deadline or server.poll() is not None:
                server.kill()
                pytest.fail("JupyterLab did not start")
            time.sleep(0.5)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving the releases of stages 01, 04 and 09-12, as `make lab` does (TINYLM_QUICK=1:
    the training runs of stages 09-11 take a few steps)."""
    course = tmp_path_factory.mktemp("course")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
           "JUPYTER_CONFIG_DIR": str(course / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(course / ".runtime"),
           "TINYLM_QUICK": "1", "TINYLM_RUNS": str(course / ".runs")}
    for stage in ("01_attention", "04_positions", "09_training", "10_generation", "11_ablations", "12_report"):
        shutil.copytree(ROOT / "notebooks" / stage, course / "notebooks" / stage)
        subprocess.run([str(BIN / "nbgrader"), "generate_assignment", stage, "--log-level=WARN"],
                       cwd=course, env=env, check=True, capture_output=True)
    server, base = start_lab(course / "release", env)
    RELEASE["folder"] = course / "release"
    yield base
    server.terminate()
    server.wait(timeout=20)


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


def open_notebook(browser, lab: str, path: str):
    """A page with the notebook open, in a workspace of its own (so that JupyterLab does not restore the
    notebooks of an earlier page), as the current widget, with its kernel idle."""
    page = browser.new_page()
    workspace = path.split("/")[0]
    page.goto(f"{lab}/lab/workspaces/{workspace}/tree/{path}?token={TOKEN}&reset")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    # The kernel must be up before running cells (on a busy CI machine it takes a while to start).
    page.wait_for_function("([path]) => { const w = window.jupyterapp?.shell.currentWidget; "
                           "return w?.context?.path === path && w.sessionContext?.session?.kernel?.status === 'idle'; }",
                           arg=[path], timeout=180_000, polling=500)
    return page


def screenshot_on_failure(page, name: str) -> Path:
    shot = Path(os.environ.get("TMPDIR", "/tmp")) / f"tinylm-browser-{name}.png"
    page.screenshot(path=str(shot), full_page=True)
    return shot


def test_a_failing_check_shows_its_message_not_a_traceback(lab, browser):
    page = open_notebook(browser, lab, "01_attention/01_attention.ipynb")
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")  # the Run menu's command
    error = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
                         has_text="CheckFailure").first
    try:
        error.wait_for(state="attached", timeout=180_000)  # generous: CI runs other tests beside this one
    except Exception:
        shot = screenshot_on_failure(page, "check-message")
        status = page.evaluate("window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel?.status")
        raise AssertionError(f"no CheckFailure output appeared (kernel status {status!r}; screenshot {shot})")
    error.scroll_into_view_if_needed()
    headline = error.text_content()
    failure = page.locator(".tinylm-failure", has_text="check_attention_scores").first  # above the error
    failure.scroll_into_view_if_needed()  # JupyterLab draws only the cells in view: inner_text is '' elsewhere
    text = failure.inner_text()
    if os.environ.get("TINYLM_SCREENSHOT"):  # a path: look at what the learner sees
        page.screenshot(path=os.environ["TINYLM_SCREENSHOT"])
    page.close()
    assert headline.strip() == "CheckFailure: check_attention_scores failed: your code raised NotImplementedError"
    assert "called with q (2, 5, 6), k (2, 7, 6), float64, seed 0" in text  # on the tried line, above
    assert "check_attention_scores failed: your code raised NotImplementedError" in text
    assert "likely mistake: the exercise is not done yet" in text
    assert "look at:" in text and "show the fix" in text  # the fix waits in its fold
    assert "Traceback" not in text + headline and "_core.py" not in text and 'File "' not in text
    assert len([line for line in text.splitlines() if line.strip()]) <= 6, text  # headline, 3 rows, 2 more


def solution_source(stage: str, grade_id: str) -> str:
    """The solution cell ``grade_id`` of a stage's source notebook, without nbgrader's solution markers."""
    import nbformat
    nb = nbformat.read(ROOT / "notebooks" / stage / f"{stage}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return "\n".join(line for line in cell.source.splitlines() if "### BEGIN SOLUTION" not in line
                     and "### END SOLUTION" not in line)


def answer_and_run_every_cell(page, answers: dict[str, str]) -> None:
    """As a learner does: write ``answers`` (grade id -> source) into their cells and run every cell in order,
    one at a time as Shift+Enter does ("Run All" would stop at the first failing check cell)."""
    page.evaluate("""async (answers) => {
        const nb = window.jupyterapp.shell.currentWidget.content;
        for (let i = 0; i < nb.widgets.length; i++) {
            const meta = nb.widgets[i].model.getMetadata('nbgrader') || {};
            if (meta.grade_id in answers) {
                nb.widgets[i].model.sharedModel.setSource(answers[meta.grade_id]);
            }
            nb.activeCellIndex = i;
            await window.jupyterapp.commands.execute('notebook:run-cell');
        }
    }""", answers)


def slider_labelled(page, label: str):
    """The first ipywidgets slider labelled ``label``, once visible (the notebook above it has run)."""
    slider = page.locator(".widget-slider", has=page.locator(".widget-label", has_text=label)).first
    try:
        slider.wait_for(state="visible", timeout=180_000)
    except Exception:
        raise AssertionError(f"the explorer's {label} slider did not appear (screenshot "
                             f"{screenshot_on_failure(page, label + '-slider')})")
    return slider


def move_slider_and_wait_for_a_new_picture(page, slider, presses: int) -> tuple[str, str]:
    """Press ArrowRight ``presses`` times on ``slider`` (an ipywidgets slider in an ``interact``) and wait until
    the interact's picture changes; returns the slider's readout before and after."""
    slider.scroll_into_view_if_needed()
    explorer = page.locator(".widget-interact", has=slider).first
    picture = explorer.locator(".jp-OutputArea-output img").first
    picture.wait_for(state="visible", timeout=120_000)
    before = picture.get_attribute("src")
    readout = slider.locator(".widget-readout").text_content()
    handle = slider.locator(".noUi-handle").first
    handle.focus()
    for _ in range(presses):
        handle.press("ArrowRight")
    page.wait_for_function(
        "([el, old]) => { const img = el.querySelector('.jp-OutputArea-output img'); "
        "return img && img.getAttribute('src') !== old; }",
        arg=[explorer.element_handle(), before], timeout=120_000, polling=500)
    return readout, slider.locator(".widget-readout").text_content()


def test_the_position_explorer_redraws_when_a_slider_moves(lab, browser):
    """Stage 04's explorer shows the learner's own table: write exercise 1 into the release (as a learner
    does), run every cell in order, then move the slider with the keyboard and wait for a new picture."""
    page = open_notebook(browser, lab, "04_positions/04_positions.ipynb")
    gid = "sinusoidal_position_encoding"
    answer_and_run_every_cell(page, {gid: solution_source("04_positions", gid)})
    slider = slider_labelled(page, "position")
    readout, after = move_slider_and_wait_for_a_new_picture(page, slider, 3)
    page.close()
    assert int(after) == int(readout) + 3, (readout, after)


def test_the_ablations_draw_their_plots(lab, browser):
    """Stage 11 run from the top (its runs shortened by TINYLM_QUICK=1): the three ablations draw their plots,
    then the first exercise's check, still a stub, stops Run All with its message."""
    page = open_notebook(browser, lab, "11_ablations/11_ablations.ipynb")
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    error = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
                         has_text="CheckFailure").first
    try:
        error.wait_for(state="attached", timeout=300_000)
    except Exception:
        raise AssertionError(f"no CheckFailure output appeared (screenshot {screenshot_on_failure(page, 'ablations')})")
    text = error.text_content()
    pictures = page.locator(".jp-OutputArea-output img").count()
    page.close()
    assert "check_nan_loss_bug failed: your code raised NotImplementedError" in text
    assert pictures >= 3, f"{pictures} plots drawn before the first exercise, expected the three ablations' plots"


def test_the_report_is_written_and_the_written_answers_wait_for_the_learner(lab, browser):
    """Stage 12 with an empty runs folder (the session's TINYLM_RUNS): the learner writes flops_per_token, runs
    every cell in order; the report is written from recomputed runs, and the answer cells are markdown."""
    release = RELEASE["folder"] / "12_report"
    (release / "report.md").unlink(missing_ok=True)  # written by an earlier run of the source notebook, if any
    shutil.rmtree(release / "report_figures", ignore_errors=True)
    page = open_notebook(browser, lab, "12_report/12_report.ipynb")
    answer_and_run_every_cell(page, {"flops_per_token": solution_source("12_report", "flops_per_token")})
    wrote = page.locator(".jp-OutputArea-output", has_text="report.md").last
    try:
        page.wait_for_function("() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                               ".some(el => el.textContent.includes('figures') && el.textContent.includes('wrote'))",
                               timeout=300_000, polling=1000)
    except Exception:
        raise AssertionError(f"the report was not written (screenshot {screenshot_on_failure(page, 'report')})")
    text = wrote.text_content()
    tables = page.locator(".jp-RenderedMarkdown table", has_text="token_emb").count()
    answers = page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
        .filter(w => (w.model.getMetadata('nbgrader') || {}).grade === true && w.model.type === 'markdown')
        .map(w => w.model.sharedModel.getSource())""")
    page.close()
    assert "wrote" in text and "7 figures" in text, text
    assert tables >= 1
    assert answers == ["YOUR ANSWER HERE"] * 4
    report = (release / "report.md").read_text()
    assert report.startswith("# TinyLM: a report on my runs\n") and "09_train: no record; recomputed" in report
    assert len(list((release / "report_figures").glob("*.png"))) == 7


def test_the_attention_explorer_redraws_when_the_head_slider_moves(lab, browser):
    """Stage 10's explorer (layer, head, text) of the model the notebook trains: write the generate exercise
    into the release, run every cell in order, then move the "head" slider with the keyboard and wait for a new
    picture."""
    page = open_notebook(browser, lab, "10_generation/10_generation.ipynb")
    answer_and_run_every_cell(page, {"generate": solution_source("10_generation", "generate")})
    slider = slider_labelled(page, "head")
    explorer = page.locator(".widget-interact", has=slider).first
    assert explorer.locator(".widget-text input").first.input_value() == "Return a new list of the items"
    readout, after = move_slider_and_wait_for_a_new_picture(page, slider, 1)
    page.close()
    assert int(after) == int(readout) + 1, (readout, after)


def test_training_shows_a_progress_bar_and_one_live_loss_plot(lab, browser):
    """Stage 09 with the learner's five answers written in: the overfitting cell redraws its loss plot in place
    (one picture, not one per redraw) and the training cell shows tqdm's bar as a widget and one loss plot."""
    page = open_notebook(browser, lab, "09_training/09_training.ipynb")
    answers = {gid: solution_source("09_training", gid)
               for gid in ("char_tokenizer", "word_encode", "train_step", "evaluate", "perplexity")}
    answer_and_run_every_cell(page, answers)
    try:
        page.locator(".jp-CodeCell", has_text="record_run(\"09_train\"").locator(
            ".jp-OutputArea-output", has_text="recorded 09_train").wait_for(state="attached", timeout=300_000)
    except Exception:
        raise AssertionError(f"notebook 09 did not run to its end (screenshot {screenshot_on_failure(page, 'training')})")
    outputs = page.evaluate("""() => {  // the outputs JupyterLab holds for each cell: their MIME types
        const nb = window.jupyterapp.shell.currentWidget.content;
        return Object.fromEntries(nb.widgets.map(c => [c.model.sharedModel.getSource(),
            c.model.type === 'code' ? Array.from(c.model.outputs.toJSON(), o => Object.keys(o.data || {}).sort()) : []]));
    }""")
    page.close()
    overfit = next(v for k, v in outputs.items() if "overfit_losses = []" in k)
    train = next(v for k, v in outputs.items() if "bar = tqdm(" in k)
    assert [kinds for kinds in overfit if "image/png" in kinds] == [["image/png", "text/plain"]]  # one, updated
    assert sum("application/vnd.jupyter.widget-view+json" in kinds for kinds in train) == 1  # tqdm's widget bar
    assert sum("image/png" in kinds for kinds in train) == 1
