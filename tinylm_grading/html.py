"""Learners' work rendered inert in the pages nbgrader makes from their notebooks (formgrader, feedback).

nbgrader's ``formgrade`` and ``feedback`` templates render every markdown cell with ``markdown2html`` and no
sanitizer: ``c.HTMLExporter.sanitize_html`` cleans outputs only. A learner's written answer (stage 12) or
any markdown cell they add is theirs, so a ``<script>``, an ``onerror=`` or a ``javascript:`` link in it would
run in the browser of whoever opens the page: the instructor's formgrader shares an origin with their
Jupyter server. ``nbgrader_config.py`` replaces the exporter's ``markdown2html`` filter with
:func:`markdown2html`: nbconvert's own renderer, then bleach (nbconvert's sanitizer library) with a list of
the tags and attributes Markdown produces. The course's own markdown (headings, tables, ``<details>``
hints, images, math) renders as before. Output HTML goes through the same list (:func:`clean_html`, in place of
nbconvert's, which keeps ``id`` and ``class``: the formgrader's script finds its elements by them).

The rest of a page is made inert in three more layers, each enough for what it covers:

- **Outputs carry only what rendering them needs** (:func:`inert_cell`, run by the autograde preprocessor
  ``tinylm_grading.preprocessors.InertOutputs`` after execution, so the autograded notebook that both pages render
  is clean). nbconvert's templates write an image's ``width``/``height`` metadata into the ``<img>`` tag unquoted,
  so ``{"image/png": {"width": "1 onerror=alert(1)"}}`` (``display(Image(..., metadata=...))``) was a live handler;
  ``sanitize_html`` cleans output *data*, not the template's attributes. Metadata is reduced to numeric width and
  height per mimetype, mimetype keys to well-formed ones, execution counts to integers.
- **The whole page is cleaned after rendering** (:class:`InertHTMLExporter`, :func:`clean_page`): every element
  that can run script or that HTML parsers disagree about (``script``, ``style``, ``iframe``, ``svg``,
  ``noscript``, comments, ...) is removed unless the template itself put it there, and so is every event-handler
  attribute and ``javascript:``/``vbscript:``/non-image ``data:`` URL. "The template put it there" is measured, not
  guessed: the same template rendered for an empty notebook (the skeleton) holds the elements and handlers that
  may stay, and no more copies of each than it holds.
- **A Content-Security-Policy** in the page (a ``<meta>`` as the first thing after its charset): scripts only
  from where the template loads them (the formgrader's own static files, MathJax's folder) and inline scripts and
  handlers only by the SHA-256 of the template's own, so nothing inline a learner writes runs even where the
  cleaning missed it. MathJax's configuration, which MathJax runs with ``eval``, becomes a plain script it reads
  as ``window.MathJax``, so the policy needs no ``'unsafe-eval'``. The formgrader also sends the policy as a header
  (:func:`install`).
"""
from __future__ import annotations

import base64
import hashlib
import math
import re
import sys
from collections import Counter
from urllib.parse import urlsplit

import bleach
import nbformat
from bleach.css_sanitizer import CSSSanitizer
from bs4 import BeautifulSoup, CData, Comment, Declaration, Doctype, ProcessingInstruction
from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter
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


def clean_html(element) -> str:
    """nbconvert's ``clean_html`` filter (output HTML, raw cells, rendered markdown outputs), as :func:`clean`: its
    own keeps ``id`` and ``class``, the attributes with which a written answer clobbered the formgrader's page."""
    return clean(element.decode() if isinstance(element, bytes) else str(element))


@pass_context
def markdown2html(context, source: str) -> str:
    """The exporter's ``markdown2html`` (nbconvert's Markdown with math, the cell's attachments), cleaned."""
    cell = context.get("cell", {})
    path = context.get("resources", {}).get("metadata", {}).get("path", "")
    renderer = IPythonRenderer(escape=False, attachments=cell.get("attachments", {}), path=path)
    return clean(MarkdownWithMath(renderer=renderer).render(source))


# -- outputs: only what rendering needs ------------------------------------------------------------------------------

# A mimetype as RFC 6838 spells one (type/subtype of letters, digits and !#$&^_.+-): what a template may rely on.
MIMETYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}")
SIZES = ("width", "height")
STREAMS = ("stdout", "stderr")


def _size(value) -> bool:
    """Is ``value`` a size nbconvert may write into a tag: a finite, non-negative JSON number (not a bool)?"""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _count(value):
    """An execution count as nbformat has it: an int, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def inert_output(output: dict) -> None:
    """Reduce one output (in place) to what rendering it needs: its data under well-formed mimetypes only, its
    metadata to ``{mimetype: {"width": n, "height": n}}`` with numbers only, a stream's name to stdout or stderr,
    an execute_result's count to an int or None. Everything else in the metadata (``filenames``, ``alt``,
    ``isolated``, ``unconfined``, a frontend's own keys) is dropped: nbconvert writes some of it into attributes."""
    data = output.get("data")
    if isinstance(data, dict):
        output["data"] = nbformat.from_dict({k: v for k, v in data.items()
                                             if isinstance(k, str) and MIMETYPE.fullmatch(k)})
    if "metadata" in output:
        metadata = output["metadata"] if isinstance(output["metadata"], dict) else {}
        kept = {}
        for mimetype in output.get("data", {}):
            given = metadata.get(mimetype)
            sizes = {k: given[k] for k in SIZES if isinstance(given, dict) and _size(given.get(k))}
            if sizes:
                kept[mimetype] = sizes
        output["metadata"] = nbformat.from_dict(kept)
    if output.get("output_type") == "stream" and output.get("name") not in STREAMS:
        output["name"] = "stdout"
    if output.get("output_type") == "execute_result":
        output["execution_count"] = _count(output.get("execution_count"))


def inert_cell(cell: dict) -> None:
    """Reduce a cell's outputs (:func:`inert_output`), its execution count and its attachments (well-formed image
    mimetypes holding strings) to what rendering needs, in place. Other cell metadata stays: the templates write
    it escaped and quoted, and the grader's records live there."""
    for output in cell.get("outputs", []):
        inert_output(output)
    if cell.get("cell_type") == "code":
        cell["execution_count"] = _count(cell.get("execution_count"))
    if isinstance(cell.get("attachments"), dict):
        cell["attachments"] = nbformat.from_dict({
            name: {k: v for k, v in bundle.items() if MIMETYPE.fullmatch(k) and k.startswith("image/")
                   and isinstance(v, str)}
            for name, bundle in cell["attachments"].items() if isinstance(name, str) and isinstance(bundle, dict)})


# -- the page: cleaned after rendering, with a Content-Security-Policy ------------------------------------------------

# Elements kept only as the template has them: those that run script or load active content, and those whose
# content HTML parsers read differently (the browser's HTML5 parser and Python's html.parser, which the cleaning
# and nbconvert use): in <svg>/<math> a <style> holds markup for the browser and text for html.parser, and
# <noscript> the other way round. Learners' markup never needs them (nbconvert's and our sanitizers drop them).
RISKY = frozenset({
    "script", "style", "link", "meta", "base", "title", "iframe", "frame", "frameset", "object", "embed", "applet",
    "portal", "noscript", "noembed", "noframes", "template", "svg", "math", "form", "xmp", "plaintext", "listing"})
EXECUTABLE = frozenset({"", "text/javascript", "application/javascript", "application/ecmascript",
                        "text/ecmascript", "module"})
MATHJAX_CONFIG = "text/x-mathjax-config"
NONE = "'none'"
CONTROL = re.compile(r"[\x00-\x20\x7f]+")  # what browsers ignore in a URL's scheme ("java\tscript:")


def _handler(name: str) -> bool:
    return name.lower().startswith("on")


def _unsafe_url(value: str) -> bool:
    """Does an attribute value start a URL that runs script or makes a document: javascript:, vbscript:, or a
    data: URL other than an image (its entities are decoded already: the parser did it)?"""
    url = CONTROL.sub("", value).lower()
    return url.startswith(("javascript:", "vbscript:")) or (url.startswith("data:")
                                                            and not url.startswith("data:image/"))


def _soup(page: str) -> BeautifulSoup:
    return BeautifulSoup(page, "html.parser", multi_valued_attributes=None)


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _source(src: str) -> str:
    """A script's URL as a CSP source: 'self' for the page's own server, else its folder (MathJax loads the rest of
    itself from there), never a whole host (a CDN also serves libraries that run script from markup)."""
    url = urlsplit(src)
    if not url.netloc:
        return "'self'"
    scheme = f"{url.scheme}://" if url.scheme else ""
    return f"{scheme}{url.netloc}{url.path.rsplit('/', 1)[0]}/"


def policy(soup: BeautifulSoup) -> str:
    """The Content-Security-Policy for a cleaned page: scripts from the folders its external scripts come from and
    inline scripts and event handlers by hash (all of them are the template's once :func:`clean_page` ran); styles
    inline or from those places (bootstrap is inlined, MathJax writes styles); images and fonts from the page's own
    server or data: URLs; no plugins, frames or ``<base>``."""
    sources, hashes, handlers = set(), set(), set()
    for script in soup.find_all("script"):
        if script.get("src") is not None:
            sources.add(_source(script["src"]))
        elif script.get("type", "").strip().lower() in EXECUTABLE:
            hashes.add(_sha256(script.string or ""))
    for element in soup.find_all(True):
        handlers.update(_sha256(value) for name, value in element.attrs.items() if _handler(name))
    script_src = " ".join(sorted(sources) + sorted(hashes)
                          + (["'unsafe-hashes'", *sorted(handlers)] if handlers else []))
    loaded = " ".join(sorted(sources - {"'self'"}))
    return "; ".join([
        "default-src 'none'", f"script-src {script_src or NONE}",
        f"style-src 'self' 'unsafe-inline' {loaded}".rstrip(), f"font-src 'self' data: {loaded}".rstrip(),
        "img-src 'self' data:", "connect-src 'self'", "object-src 'none'", "frame-src 'none'", "base-uri 'none'",
        "form-action 'self'"])


def clean_page(page: str, skeleton: str) -> str:
    """``page`` with everything that could run script removed unless ``skeleton`` (the same template rendered for an
    empty notebook) has it too, and with a Content-Security-Policy (:func:`policy`) at the top of its head.

    Removed: comments, processing instructions and CDATA (html.parser and browsers end comments differently: ``--!>``);
    elements of :data:`RISKY` beyond the copies the skeleton has (same tag, attributes and content); event-handler
    attributes beyond the skeleton's (same element, name and value); ``srcdoc`` and attributes holding a
    ``javascript:``, ``vbscript:`` or non-image ``data:`` URL. MathJax's ``text/x-mathjax-config`` block becomes a
    plain script that sets ``window.MathJax`` before MathJax loads (MathJax runs the block through ``eval``)."""
    own = _soup(skeleton)
    elements = Counter(str(element) for element in own.find_all(RISKY))
    handlers = Counter((element.name, name, value) for element in own.find_all(True)
                       for name, value in element.attrs.items() if _handler(name))
    soup = _soup(page)
    for node in soup.find_all(string=lambda s: isinstance(s, (Comment, CData, Declaration, ProcessingInstruction))
                              and not isinstance(s, Doctype)):
        node.extract()
    for element in soup.find_all(RISKY):
        if element.decomposed:
            continue
        if elements[str(element)] > 0:
            elements[str(element)] -= 1
        else:
            element.decompose()
    for element in soup.find_all(True):
        for name, value in list(element.attrs.items()):
            if _handler(name) and handlers[(element.name, name, value)] > 0:
                handlers[(element.name, name, value)] -= 1
            elif _handler(name) or name.lower() == "srcdoc" or _unsafe_url(value):
                del element[name]
    head = soup.head or soup
    charset = head.find("meta", charset=True)

    def first(tag):  # first in the head, after its charset (which must come within its first 1024 bytes)
        if charset is None:
            head.insert(0, tag)
        else:
            charset.insert_after(tag)

    configs = [s for s in soup.find_all("script") if s.get("type", "").strip().lower().startswith(MATHJAX_CONFIG)]
    for config in reversed(configs):  # before every script, MathJax's loader included
        script = soup.new_tag("script")
        script.string = ("window.MathJax = {AuthorInit: function () {\n"
                         "MathJax.Hub.Register.StartupHook('End Config', function () {\n"
                         + (config.string or "") + "\n});\n}};")
        config.decompose()
        first(script)
    first(soup.new_tag("meta", attrs={"http-equiv": "Content-Security-Policy", "content": policy(soup)}))
    return str(soup)


POLICY = re.compile(r'<meta (?=[^<>]*http-equiv="Content-Security-Policy")[^<>]*content="([^"<>]*)"')


def page_policy(page: str) -> str | None:
    """The policy :func:`clean_page` wrote into ``page``'s head, or None (a page it did not clean). Only the head is
    read: a learner's markup is all in the body."""
    found = POLICY.search(page, 0, max(page.find("<body"), 0))
    return found.group(1) if found else None


class InertHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter, whose page is cleaned after rendering (:func:`clean_page`) against the same
    template rendered, with the same resources, for an empty notebook: nothing of the learner's, neither cells nor
    metadata, can make the skeleton hold more. Configured as ``c.GenerateFeedback.exporter_class``; the
    formgrader's exporter is made one by :func:`install`. Its configuration is ``HTMLExporter``'s."""

    def from_notebook_node(self, nb, resources=None, **kw):
        page, resources = super().from_notebook_node(nb, resources, **kw)
        skeleton = self.template.render(nb=nbformat.v4.new_notebook(), resources=resources)
        return clean_page(page, skeleton), resources


# -- the formgrader: its exporter, and the policy as a header ---------------------------------------------------------

FORMGRADER_POLICY = "object-src 'none'; base-uri 'self'; form-action 'self'"


def install() -> None:
    """Make the formgrader in this process render with :class:`InertHTMLExporter` and send a Content-Security-Policy
    header on its routes: on a submission's page the page's own policy (:func:`page_policy`), on the others
    :data:`FORMGRADER_POLICY` (their templates interpolate values into inline scripts per request, so they keep
    Jupyter's script rules), each after Jupyter's own (``frame-ancestors 'self'``, its report URI).

    Called from ``nbgrader_config.py``, which the formgrader reads when the Jupyter server loads it (and again on
    requests: this does its work once). In any other process (nbgrader's commands) the formgrader is not imported
    and nothing happens: importing it would cost every command its import time."""
    formgrader = sys.modules.get("nbgrader.server_extensions.formgrader.formgrader")
    if formgrader is None or getattr(formgrader, "HTMLExporter", None) is InertHTMLExporter:
        return
    from jupyter_server.base.handlers import JupyterHandler
    from nbgrader.server_extensions.formgrader import base, handlers

    formgrader.HTMLExporter = InertHTMLExporter  # init_tornado_settings builds the formgrader's one from this name
    base.BaseHandler.content_security_policy = property(
        lambda handler: f"{JupyterHandler.content_security_policy.fget(handler)}; {FORMGRADER_POLICY}")
    write = handlers.SubmissionHandler.write

    def write_with_policy(handler, chunk):
        own = page_policy(chunk) if isinstance(chunk, str) else None
        if own is not None:
            handler.set_header("Content-Security-Policy",
                               f"{JupyterHandler.content_security_policy.fget(handler)}; {own}")
        return write(handler, chunk)

    handlers.SubmissionHandler.write = write_with_policy
