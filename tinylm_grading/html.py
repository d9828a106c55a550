"""Markdown rendered safely in the pages nbgrader makes from learners' notebooks (formgrader, feedback).

nbgrader's ``formgrade`` and ``feedback`` templates render every markdown cell with ``markdown2html`` and no
sanitizer: ``c.HTMLExporter.sanitize_html`` cleans outputs only. A learner's written answer (stage 12) or
any markdown cell they add is theirs, so a ``<script>``, an ``onerror=`` or a ``javascript:`` link in it would
run in the browser of whoever opens the page: the instructor's formgrader shares an origin with their
Jupyter server. ``nbgrader_config.py`` replaces the exporter's ``markdown2html`` filter with
:func:`markdown2html`: nbconvert's own renderer, then bleach (nbconvert's sanitizer library) with a list of
the tags and attributes Markdown produces. The course's own markdown (headings, tables, ``<details>``
hints, images, math) renders as before.
"""
from __future__ import annotations

import bleach
from bleach.css_sanitizer import CSSSanitizer
from jinja2 import pass_context
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em", "h1", "h2",
    "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul"})
PROTOCOLS = frozenset({"http", "https", "mailto", "data"})
CSS = CSSSanitizer(allowed_css_properties=["text-align", "color", "background-color", "font-weight",
                                           "font-style"])


def _allowed(tag: str, name: str, value: str) -> bool:
    """Attributes kept: title, align and style (properties in ``CSS``) anywhere; ``href`` of a link unless a
    ``data:`` URL; ``src``/``alt``/``width``/``height`` of an image, ``data:`` only as an image. bleach has
    already refused any URL whose protocol is not in ``PROTOCOLS``. No ``id``, ``name`` or ``class``: the
    formgrader's own script finds its elements by them, and an answer holding ``<span id="bug_answer">`` and a
    ``class="modal-backdrop"`` made one click give full credit to every grade of the notebook."""
    if name in ("title", "align", "style"):
        return True
    url = value.strip().lower()
    if tag == "a" and name == "href":
        return not url.startswith("data:")
    if tag == "img" and name == "src":
        return not url.startswith("data:") or url.startswith("data:image/")
    return tag == "img" and name in ("alt", "width", "height")


def clean(html: str) -> str:
    """``html`` with everything outside ``TAGS``/``_allowed`` escaped (shown as text, never run)."""
    return bleach.clean(html, tags=TAGS, attributes=_allowed, protocols=PROTOCOLS, css_sanitizer=CSS,
                        strip_comments=True)


@pass_context
def markdown2html(context, source: str) -> str:
    """The exporter's ``markdown2html`` (nbconvert's Markdown with math, the cell's attachments), cleaned."""
    cell = context.get("cell", {})
    path = context.get("resources", {}).get("metadata", {}).get("path", "")
    renderer = IPythonRenderer(escape=False, attachments=cell.get("attachments", {}), path=path)
    return clean(MarkdownWithMath(renderer=renderer).render(source))
