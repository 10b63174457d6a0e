"""Live code: the launch menu's "Live Code" makes a chapter's code cells editable and runs
them on a Binder kernel, in place on the page (Thebe).

A Sphinx extension (listed in ``_config.yml``). Jupyter Book loads sphinx-thebe 0.3.1
and the theme makes the "Live Code" button from ``launch_buttons.thebe``; both were
written for Thebe 0.8.2, which they load from unpkg.com. That version is not on the npm
registry the book's offline browser tests fetch their local copies from (only 0.9.2 and
0.9.3 are), and Thebe 0.9 changed its API (a Binder unless ``useBinder`` is false, output
areas paired with cells by their order on the page, ``kernelOptions.kernelName``). So this
extension takes sphinx-thebe's place on every page, and keeps only its stylesheet and the
theme's button:

- it drops sphinx-thebe's two scripts and its configuration, and writes a configuration
  in Thebe 0.9's terms (``<script type="text/x-thebe-config">``, JSON) whose
  ``data-thebe-js`` names the exact Thebe build, ``lincls_thebe_js`` in ``_config.yml``
  (jsDelivr, pinned like the site's other JavaScript; tests/test_thebe.py serves the same
  npm package from ``.venv/vendor``). Binder builds ``repository.url`` at
  ``repository.branch`` (as the Binder button does) and starts the kernel in the
  chapter's folder;
- ``_static/thebe-live.js`` is the button's ``initThebe``: it loads that build, gives every
  code cell its own output area, starts the kernel and runs the chapter's hidden set-up.
  Thebe's widget manager fetches require.js 2.3.6 from cdnjs.cloudflare.com (a URL fixed
  in thebe-core); the page answers it with the require.js that ``nb_ipywidgets_js`` pins
  for the site's widgets (``data-requirejs``), so Live Code loads nothing but the pinned
  packages from jsDelivr;
- the cells the page does not show (``remove-cell``: the imports, the checks of the
  numbers in the text) are written into the page as hidden cells at their places, so
  that a shown cell finds the names it uses and "run all" runs the chapter as the build
  did. The ones before the first shown cell run as soon as the kernel is ready. A cell
  tagged ``solution-only`` is never written;
- the button is on the pages the site serves a notebook with code for (the same pages as
  the Colab button, :mod:`.colab`), and only where ``repository.url`` is on GitHub.

Thebe's MathJax 2 (``mathjaxUrl``) is switched off: the page runs MathJax 3, and a second
MathJax would replace it; a LaTeX output shows as its plain text.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path, PurePosixPath

from docutils import nodes
from sphinx.util import logging

from .colab import GITHUB, _has_code

logger = logging.getLogger(__name__)
JS = "https://cdn.jsdelivr.net/npm/thebe@0.9.3/lib/index.js"
SCRIPT = "thebe-live.js"
CONFIG = "text/x-thebe-config"
SOLUTION_ONLY = "solution-only"
REQUIREJS = re.compile(r"/requirejs@[^/]+/require(\.min)?\.js\Z")
TOOLTIP = ("Run this page's code here, on a Binder kernel (starting one can take a few "
           "minutes): edit a cell, then run it with Shift+Enter or its run button.")


def binder_options(repository_url, branch, binderhub_url):
    """Thebe's ``binderOptions`` for the book's repository, or None (not on GitHub).

    >>> binder_options("https://github.com/our-course/book.git", "main", "https://mybinder.org/")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'repo': 'our-course/book', 'ref': 'main', 'binderUrl': 'https://mybinder.org',
     'repoProvider': 'github'}
    >>> binder_options("https://gitlab.com/a/b", "main", "https://mybinder.org") is None
    True
    """
    match = GITHUB.match((repository_url or "").strip())
    if not match or not binderhub_url:
        return None
    return {"repo": "/".join(match.groups()), "ref": branch or "main",
            "binderUrl": binderhub_url.rstrip("/"), "repoProvider": "github"}


def _options(app):
    options = app.config.html_theme_options
    launch = options.get("launch_buttons") or {}
    if not launch.get("thebe"):
        return None
    return binder_options(options.get("repository_url"), options.get("repository_branch"),
                          launch.get("binderhub_url"))


def _live(app, docname):
    """Whether the page ``docname`` gets live code."""
    return app.builder.name == "html" and _options(app) is not None and _has_code(app, docname)


def page_config(app, docname, kernel_name="python3"):
    """The page's Thebe 0.9 configuration (a dict; JSON in the page)."""
    folder = PurePosixPath(app.config.html_theme_options.get("path_to_docs") or ".",
                           PurePosixPath(docname).parent)
    return {
        "requestKernel": True,
        "useBinder": True,
        "binderOptions": _options(app),
        "kernelOptions": {"kernelName": kernel_name, "path": folder.as_posix()},
        "mathjaxUrl": False,
        "codeMirrorConfig": {"mode": "python"},
    }


def _source_cells(app, docname):
    """The code cells of the page's notebook as myst-nb reads it: [(index, source, tags)]."""
    from myst_nb.core.read import read_myst_markdown_notebook

    text = Path(app.env.doc2path(docname)).read_text(encoding="utf-8")
    nb = read_myst_markdown_notebook(text)
    return [(i, c.source, c.metadata.get("tags", [])) for i, c in enumerate(nb.cells)
            if c.cell_type == "code"]


def _hidden_cell(source, setup):
    """A cell the page does not show, as a hidden thebe-live.js cell."""
    kind = "setup" if setup else "hidden"
    return nodes.raw("", f'<div class="cell lincls-live-{kind}" hidden>'
                         f'<pre class="lincls-live-source">{html.escape(source)}</pre></div>\n',
                     format="html")


def _rewrite(app, doctree, docname):
    """doctree-resolved: sphinx-thebe's configuration out; ours and the hidden cells in."""
    for raw in list(doctree.findall(nodes.raw)):
        text = raw.astext()
        if CONFIG in text or text.startswith("<script>kernelName ="):  # sphinx-thebe's
            raw.parent.remove(raw)
    if not _live(app, docname):
        return
    shown = {}  # cell index -> the shown cell's node
    for cell in doctree.findall(nodes.container):
        if cell.get("nb_element") == "cell_code" and any(
                c.get("nb_element") == "cell_code_source" for c in cell.children):
            shown[cell["cell_index"]] = cell
    pending, first = [], True
    cells = _source_cells(app, docname)
    sources = {index: source for index, source, _ in cells}
    for index, node in shown.items():  # the same numbering as myst-nb's, or nothing
        block = next(node.findall(nodes.literal_block), None)
        if block is None or block.astext().strip() != sources.get(index, "").strip():
            logger.warning(f"live code: cell {index} of {docname} is not myst-nb's cell "
                           f"{index}; the page gets no hidden cells", location=docname)
            return
    for index, source, tags in cells:
        if index in shown:
            node = shown[index]
            for hidden in pending:
                node.parent.insert(node.parent.index(node), _hidden_cell(hidden, first))
            pending, first = [], False
        elif SOLUTION_ONLY not in tags:
            pending.append(source)
    if shown and pending:  # after the last shown cell
        node = shown[max(shown)]
        for hidden in reversed(pending):
            node.parent.insert(node.parent.index(node) + 1, _hidden_cell(hidden, False))
    kernel = (app.env.metadata.get(docname, {}).get("kernelspec") or {})
    if isinstance(kernel, str):
        kernel = json.loads(kernel)
    config = page_config(app, docname, kernel.get("name") or "python3")
    attributes = {"data-thebe-js": app.config.lincls_thebe_js, "data-requirejs": _requirejs(app)}
    attributes = " ".join(f'{k}="{html.escape(v)}"' for k, v in attributes.items() if v)
    body = json.dumps(config).replace("</", "<\\/")  # no "</script>" inside the script
    doctree.append(nodes.raw("", f'<script type="{CONFIG}" {attributes}>{body}</script>\n',
                             format="html"))


def _requirejs(app):
    """The require.js that ``nb_ipywidgets_js`` pins for the widget pages, or ''."""
    return next((url for url in getattr(app.config, "nb_ipywidgets_js", None) or {}
                 if REQUIREJS.search(url)), "")


def _page(app, pagename, templatename, context, doctree):
    """html-page-context: no sphinx-thebe script; the Live Code button only on live pages."""
    context["script_files"] = [
        s for s in context.get("script_files", [])
        if not str(getattr(s, "filename", s) or "").endswith("sphinx-thebe.js")
        and "THEBE_JS_URL" not in (getattr(s, "attributes", {}).get("body") or "")]
    live = doctree is not None and _live(app, pagename)
    for group in context.get("header_buttons", []):
        if group.get("label") == "launch-buttons":
            buttons = group["buttons"]
            for button in [b for b in buttons if b.get("label") == "launch-thebe"]:
                if live:
                    button["tooltip"] = TOOLTIP
                else:
                    buttons.remove(button)
            if not buttons:
                context["header_buttons"].remove(group)
            break


def _static_path(app):
    folder = str(Path(__file__).parent / "_static")
    if folder not in app.config.html_static_path:
        app.config.html_static_path.append(folder)


def setup(app):
    app.add_config_value("lincls_thebe_js", JS, "html")
    app.connect("builder-inited", _static_path)
    # after sphinx-thebe's update_thebe_context (500)
    app.connect("doctree-resolved", _rewrite, priority=600)
    # after the theme's launch buttons (501) and the Colab button (601)
    app.connect("html-page-context", _page, priority=602)
    app.add_js_file(SCRIPT, loading_method="defer")
    app.add_css_file(SCRIPT.replace(".js", ".css"))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
