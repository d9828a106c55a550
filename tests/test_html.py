"""Learners' work in nbgrader's formgrader and feedback pages is rendered, never run (tinylm_grading/html.py): their
markdown, their outputs' metadata (InertOutputs), the whole page after rendering and its Content-Security-Policy
(InertHTMLExporter). tests/test_browser_feedback.py loads such pages in Chromium."""
import base64
import hashlib
import re
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

import nbgrader
from tinylm_grading.html import InertHTMLExporter, clean_page, inert_cell, inert_output, page_policy
from tinylm_grading.preprocessors import InertOutputs

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


RESOURCES = {"assignment_id": "12_report", "notebook_id": "12_report", "submission_id": "s", "index": 0, "total": 1,
             "base_url": "", "student": "x", "last_name": "", "first_name": "", "notebook_path": "/formgrader/x.ipynb",
             "nbgrader": {"notebook": "12_report", "score": 1, "max_score": 11, "late_penalty": 0}}  # what each sets


def exporter(template: str, cls=HTMLExporter) -> HTMLExporter:
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    extra = Config()
    extra.HTMLExporter.template_name = template  # as nbgrader's formgrader and generate_feedback set them
    extra.HTMLExporter.extra_template_basedirs = [str(TEMPLATES)]
    extra.HTMLExporter.extra_template_paths = [str(TEMPLATES.parent / "static" / "node_modules" / "bootstrap" / "dist"
                                                   / "css")]
    config.merge(extra)
    return cls(config=config)


def page(template: str) -> str:
    answer = nbformat.v4.new_markdown_cell(ATTACK, metadata={"nbgrader": {
        "grade": True, "solution": True, "locked": False, "points": 2, "grade_id": "overfit_answer",
        "schema_version": 3, "score": 1, "task": False}})
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(COURSE_TEXT), answer,
                                         nbformat.v4.new_markdown_cell(ATTACK)])  # and a cell they added
    html, _ = exporter(template).from_notebook_node(nb, resources=RESOURCES)
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


# -- outputs: only what rendering needs (tinylm_grading.preprocessors.InertOutputs) ------------------------------------

PNG = "iVBORw0KGgo="


def output(data, metadata, **fields):
    return nbformat.from_dict({"output_type": "display_data", "data": data, "metadata": metadata, **fields})


@pytest.mark.parametrize("metadata, kept", [
    ({"image/png": {"width": 640, "height": 480.5}}, {"image/png": {"width": 640, "height": 480.5}}),
    ({"image/png": {"width": '1" onerror="alert(1)', "height": 7}}, {"image/png": {"height": 7}}),
    ({"image/png": {"width": "1 onerror=alert(1)"}}, {}),
    ({"image/png": {"width": True, "height": -1}}, {}),
    ({"image/png": {"width": float("inf"), "height": float("nan")}}, {}),
    ({"image/png": {"width": [1], "height": {"a": 1}}}, {}),
    ({"width": 10, "height": 10}, {}),  # top level: nbconvert reads it for every mimetype
    ({"image/png": {"width": 5, "alt": '" onerror="x', "unconfined": True, "filenames": {"image/png": "x.png"}},
      "filenames": {"image/png": '" onerror="x'}, "isolated": True, "needs_background": "light"},
     {"image/png": {"width": 5}}),
    ({"image/jpeg": {"width": 3}}, {}),  # a mimetype the output has no data for
    ({"image/png": "1 onerror=x"}, {}),
    ("not a dict", {}),
])
def test_output_metadata_is_reduced_to_numeric_sizes(metadata, kept):
    out = output({"image/png": PNG}, metadata)
    inert_output(out)
    assert out.metadata == kept and out.data == {"image/png": PNG}


def test_crafted_mimetypes_names_and_counts_are_dropped():
    out = output({'image/png" onerror="alert(1)': PNG, "image/png onerror=x": PNG, "text/plain": "x",
                  "application/vnd.jupyter.widget-view+json": {"model_id": "m"}, "<svg onload=x>": "y"},
                 {'image/png" onerror="alert(1)': {"width": 1}})
    inert_output(out)
    assert out.data == {"text/plain": "x", "application/vnd.jupyter.widget-view+json": {"model_id": "m"}}
    assert out.metadata == {}
    stream = nbformat.from_dict({"output_type": "stream", "name": "<img src=x onerror=alert(1)>", "text": "hi"})
    inert_output(stream)
    assert stream.name == "stdout" and stream.text == "hi"
    cell = nbformat.from_dict({  # as a kernel's reply could set them (nbformat's constructors would refuse it)
        "cell_type": "code", "source": "1", "metadata": {}, "execution_count": "<img src=x onerror=alert(1)>",
        "outputs": [{"output_type": "execute_result", "execution_count": "<b>1</b>", "data": {"text/plain": "1"},
                     "metadata": {}}]})
    cell.attachments = {"a.png": {"image/png": PNG, 'image/png" onerror="x': PNG, "text/html": "<b>"},
                        "b.png": "not a bundle"}
    inert_cell(cell)
    assert cell.execution_count is None and cell.outputs[0].execution_count is None
    assert cell.attachments == {"a.png": {"image/png": PNG}}
    fine = nbformat.v4.new_code_cell("1", execution_count=3, outputs=[nbformat.from_dict({
        "output_type": "execute_result", "execution_count": 3, "data": {"text/plain": "3"}, "metadata": {}})])
    inert_cell(fine)
    assert fine.execution_count == 3 and fine.outputs[0].execution_count == 3


def test_outputs_are_reduced_right_after_execution():
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    steps = config.Autograde.autograde_preprocessors
    assert steps[steps.index("tinylm_grading.preprocessors.GradingExecute") + 1] == \
        "tinylm_grading.preprocessors.InertOutputs"
    assert config.GenerateFeedback.exporter_class == "tinylm_grading.html.InertHTMLExporter"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[
        output({"image/png": PNG}, {"image/png": {"width": "1 onerror=alert(1)", "height": 2}})])])
    nb, _ = InertOutputs().preprocess(nb, {})
    assert nb.cells[0].outputs[0].metadata == {"image/png": {"height": 2}}


# -- the page, cleaned after rendering, with its policy (InertHTMLExporter) -------------------------------------------

SKELETON = ('<!DOCTYPE html>\n<html><head><meta charset="utf-8"/><title>t</title>'
            '<script src="/static/app.js"></script><script>var id = "s1";</script>'
            '<script src="https://cdn.example.org/libs/mathjax/2.7.7/latest.js?config=X"></script>'
            '<script type="text/x-mathjax-config">init_mathjax();</script><style>p { color: red }</style></head>'
            '<body><span onclick="toggle(true);">name</span><div id="notebook">{}</div></body></html>')
INJECTED = (
    '<img src="x" onerror="alert(1)"><IMG SRC="x" ONERROR="alert(1)"><img src="data:image/png;base64,AAAA" alt="ok">'
    '<a href="jav&#x09;ascript:alert(1)">a</a><a href=" JaVaScRiPt:alert(1)">b</a><a href="vbscript:x">c</a>'
    '<a href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;">d</a><a href="https://pytorch.org">docs</a>'
    '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe><svg onload="alert(1)"></svg>'
    '<svg><style><img src=x onerror=alert(2)></style></svg><math><mtext><style><img src=x onerror=alert(2)>'
    '</style></mtext></math><!-- --!> <img src=x onerror=alert(3)> -->'
    '<noscript><p title="</noscript><img src=x onerror=alert(4)>"></p></noscript>'
    '<script>var id = "s1";</script><script src="/static/app.js"></script><script>alert(5)</script>'
    '<span onclick="toggle(true);">again</span><meta http-equiv="refresh" content="0;url=javascript:alert(6)">'
    '<base href="https://evil.example/"><link rel="stylesheet" href="https://evil.example/x.css">'
    '<form action="https://evil.example/"><button formaction="javascript:alert(7)">go</button></form>'
    '<object data="x.swf"></object><embed src="x.swf"><template><img src=x onerror=alert(8)></template>'
    '<style>body { display: none }</style><p style="color: red">kept</p>')


def test_a_page_keeps_what_its_template_put_there_and_nothing_else():
    page = clean_page(SKELETON.replace("{}", INJECTED), SKELETON.replace("{}", ""))
    for gone in ("onerror", "ONERROR", "onload", "javascript", "JaVaScRiPt", "vbscript", "data:text/html",
                 "<iframe", "srcdoc", "<svg", "<math", "--!>", "<noscript", "alert(", "refresh", "<base",
                 "evil.example", "<form", "formaction", "<object", "<embed", "<template", "display: none",
                 "text/x-mathjax-config"):
        assert gone not in page, gone
    assert page.count('<script src="/static/app.js">') == 1 and page.count('var id = "s1";') == 1
    assert page.count('onclick="toggle(true);"') == 1 and page.count("p { color: red }") == 1
    assert page.count("<title>t</title>") == 1 and page.startswith("<!DOCTYPE html>")
    assert '<img alt="ok" src="data:image/png;base64,AAAA"/>' in page
    assert '<a href="https://pytorch.org">docs</a>' in page
    assert "<a>a</a><a>b</a><a>c</a><a>d</a>" in page and "<span>again</span>" in page
    assert '<p style="color: red">kept</p>' in page
    # a <textarea> holds text for the browser, markup for html.parser: what it holds stays escaped, as text
    sneaky = '<textarea><p title="</textarea><img src=x onerror=alert(1)>"></p></textarea>'
    text = clean_page(SKELETON.replace("{}", sneaky), SKELETON.replace("{}", ""))
    assert '<p title="&lt;/textarea&gt;&lt;img src=x onerror=alert(1)&gt;"></p></textarea>' in text
    # MathJax's configuration block, which it runs with eval, is a plain script before every other
    head = page.split("</head>")[0]
    assert head.index("window.MathJax = {AuthorInit: function () {") < head.index('<script src="/static/app.js">')
    assert "init_mathjax();" in head


def test_the_policy_allows_the_templates_own_scripts_by_hash_only():
    page = clean_page(SKELETON.replace("{}", INJECTED), SKELETON.replace("{}", ""))
    csp = page_policy(page)
    directives = dict(d.split(" ", 1) for d in csp.split("; "))
    inline = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(inline) == 2  # the template's one, and MathJax's configuration
    hashes = sorted("'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'" for s in inline)
    toggle = "'sha256-" + base64.b64encode(hashlib.sha256(b"toggle(true);").digest()).decode() + "'"
    assert directives["script-src"].split() == ["'self'", "https://cdn.example.org/libs/mathjax/2.7.7/", *hashes,
                                                "'unsafe-hashes'", toggle]
    assert directives["default-src"] == "'none'" and directives["object-src"] == "'none'"
    assert directives["base-uri"] == "'none'" and directives["img-src"] == "'self' data:"
    assert "'unsafe-inline'" in directives["style-src"]  # styles only: MathJax writes them, bootstrap is inlined
    assert page.index("Content-Security-Policy") < page.index("<title>")  # before anything it governs
    assert page_policy(SKELETON) is None
    assert page_policy(SKELETON.replace("{}", '<meta http-equiv="Content-Security-Policy" content="x">')) is None


@pytest.mark.parametrize("template", ["feedback", "formgrade"])
def test_the_pages_through_the_inert_exporter(template):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(COURSE_TEXT), nbformat.v4.new_code_cell(
        "x", outputs=[output({"image/png": PNG}, {"image/png": {"width": "1 onerror=alert(1)"}}),
                      output({"text/html": '<span id="bug_answer" class="modal-backdrop">o</span>'}, {})])])
    html, _ = exporter(template, InertHTMLExporter).from_notebook_node(nb, resources=RESOURCES)
    for rendered in ("<h2", "<table>", "<td>1</td>", "<details><summary>Hint 1</summary>", "$x &lt; y$",
                     '<img alt="a plot" src="https://example.org/p.png"/>', '<a href="https://pytorch.org">docs</a>'):
        assert rendered in html, rendered
    assert "onerror" not in html and "<span>o</span>" in html  # the output's id and class are dropped (clean_html)
    own = re.findall(r'<script src="[^"]*"', page(template))  # what the template loads, it still loads
    assert re.findall(r'<script src="[^"]*"', html) == own and len(own) == (1 if template == "feedback" else 12)
    assert "text/x-mathjax-config" not in html and "window.MathJax" in html
    assert ("'unsafe-hashes'" in page_policy(html)) == (template == "formgrade")  # its name toggle's onclick
