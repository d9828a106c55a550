"""Learners' markdown in nbgrader's formgrader and feedback pages is rendered, never run (tinylm_grading/html.py)."""
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

import nbgrader

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
ATTACK = ("The model overfits because the training set is tiny.\n\n"
          "<img src=\"x\" onerror=\"document.title='XSS-IMG'\">\n<script>document.title = 'XSS-SCRIPT';</script>\n"
          "\n[click](javascript:alert(1)) <a href=\"data:text/html,<script>alert(2)</script>\">data</a> "
          "<iframe src=\"/api/terminals\"></iframe> <svg onload=\"alert(3)\"></svg> "
          "<p style=\"background:url(javascript:alert(4))\">styled</p>"
          # DOM clobbering: the formgrader's script finds its elements by id and class (round 2 of the red team)
          "<span id=\"bug_answer\"></span><div class=\"modal-backdrop fade full-credit\"></div>")
COURSE_TEXT = ("## 2.1 The loss\n\nA *table*:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n$x < y$ and `a < b`\n\n"
               "<details><summary>Hint 1</summary>\n\nUse **`F.cross_entropy`**.\n\n</details>\n\n"
               "![a plot](https://example.org/p.png) [docs](https://pytorch.org)")


def exporter(template: str) -> HTMLExporter:
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    extra = Config()
    extra.HTMLExporter.template_name = template  # as nbgrader's formgrader and generate_feedback set them
    extra.HTMLExporter.extra_template_basedirs = [str(TEMPLATES)]
    extra.HTMLExporter.extra_template_paths = [str(TEMPLATES.parent / "static" / "node_modules" / "bootstrap" / "dist"
                                                   / "css")]
    config.merge(extra)
    return HTMLExporter(config=config)


def page(template: str) -> str:
    answer = nbformat.v4.new_markdown_cell(ATTACK, metadata={"nbgrader": {
        "grade": True, "solution": True, "locked": False, "points": 2, "grade_id": "overfit_answer",
        "schema_version": 3, "score": 1, "task": False}})
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(COURSE_TEXT), answer,
                                         nbformat.v4.new_markdown_cell(ATTACK)])  # and a cell they added
    resources = {"assignment_id": "12_report", "notebook_id": "12_report", "submission_id": "s", "index": 0,
                 "total": 1, "base_url": "/", "student": "x", "last_name": "", "first_name": "",
                 "notebook_path": "/formgrader/x.ipynb", "nbgrader": {"notebook": "12_report", "score": 1, "max_score": 11,
                                                                    "late_penalty": 0}}  # what each sets
    html, _ = exporter(template).from_notebook_node(nb, resources=resources)
    return html


@pytest.mark.parametrize("template", ["feedback", "formgrade"])
def test_a_learners_markdown_runs_nothing(template):
    html = page(template)
    assert html.count("The model overfits because") == 2
    for attack in ("<script>document.title", '<img src="x"', "<svg", "<iframe", 'href="javascript:', 'href="data:',
                   "url(javascript"):  # as tags: the page shows them as text (&lt;svg onload=...)
        assert attack not in html, attack
    assert "<a>click</a>" in html  # the link's text stays, its javascript: URL is dropped
    assert "&lt;script&gt;document.title = 'XSS-SCRIPT';&lt;/script&gt;" in html  # shown as text
    assert 'id="bug_answer"' not in html and 'class="modal-backdrop fade full-credit"' not in html


@pytest.mark.parametrize("template", ["feedback", "formgrade"])
def test_the_course_text_renders_as_before(template):
    html = page(template)
    for rendered in ("<h2", "<table>", "<td>1</td>", "<details><summary>Hint 1</summary>",
                     "<strong><code>F.cross_entropy</code></strong>", "<code>a &lt; b</code>",
                     '<img alt="a plot" src="https://example.org/p.png"/>', '<a href="https://pytorch.org">docs</a>'):
        assert rendered in html, rendered
    assert "$x &lt; y$" in html  # math is left for MathJax
