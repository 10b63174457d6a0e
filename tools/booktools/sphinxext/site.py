"""Small fixes to the pages of the book's website, found by tests/test_browser.py.

A Sphinx extension (listed in ``_config.yml``), not part of the algorithms.

Each removes JavaScript console errors that pages showed on a reader's first visit:

- a script registered twice (sphinx-thebe 0.3.1's inline configuration was, under Jupyter
  Book 1.0, and its second copy threw "Identifier 'THEBE_JS_URL' has already been
  declared"; :mod:`.thebe` now removes sphinx-thebe's scripts) is dropped from each page.
- the theme's light/dark switch starts from an empty ``default_mode`` and logs "Got
  invalid theme mode". It now starts from ``auto`` (follow the reader's system).
- on pages with widgets, the ipywidgets HTML manager loads its icon fonts relative to
  the page instead of the CDN, and calls MathJax 2's ``MathJax.Hub.Queue``, which the
  site's MathJax 3 lacks. ``_static/widgets-setup.js`` (listed in
  ``nb_ipywidgets_js`` in ``_config.yml``, between require.js and the manager) fixes both.

Others fix what axe-core (in the same tests) finds, in ``_static/a11y.js`` and
``_static/a11y.css``: icon buttons whose names clash with their icons, unnamed widget
sliders, links too pale on the tinted background of admonitions; and a widget's figure
(drawn by the manager, with no alt text) takes the alt text of its cell, the
``mystnb: image: alt:`` metadata that an image output of the cell would get.

On a phone-sized screen (390 px; the same tests): ``_static/a11y.css`` moves an equation's
number below the equation when the two do not fit side by side (a wide equation looked cut
off behind its number) and fits headings, inline code and math, the previous / next links
and animation controls to the column; ``_static/sidebar-toggles.js`` makes the header's
menu buttons open the navigation (the themes wire only a hidden copy of each button).
"""

import html
from pathlib import Path

from docutils import nodes

WIDGET_VIEW = '<script type="application/vnd.jupyter.widget-view+json"'


def fix_page(app, pagename, templatename, context, doctree):
    context.setdefault("default_mode", "auto")  # the theme's template reads this variable
    seen, kept = set(), []
    for script in context.get("script_files", []):
        key = (str(getattr(script, "filename", script) or ""),
               tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    context["script_files"] = kept


def widget_alt_text(app, doctree):
    """Hand a cell's image alt text to its widget views, as their data-alt attribute."""
    for cell in doctree.findall(nodes.container):
        if cell.get("nb_element") != "cell_code":
            continue
        alt = ((cell.get("cell_metadata") or {}).get("mystnb") or {}).get("image", {}).get("alt")
        if not alt:
            continue
        for raw in cell.findall(nodes.raw):
            if raw.astext().startswith(WIDGET_VIEW):
                text = raw.astext().replace(
                    WIDGET_VIEW, f'{WIDGET_VIEW} data-alt="{html.escape(alt.strip())}"', 1)
                raw.replace_self(nodes.raw(text, text, format="html"))


def add_static_path(app):
    app.config.html_static_path.append(str(Path(__file__).parent / "_static"))


def setup(app):
    app.connect("builder-inited", add_static_path)
    app.connect("html-page-context", fix_page, priority=999)
    app.connect("doctree-read", widget_alt_text)
    app.add_js_file("a11y.js")
    app.add_css_file("a11y.css")
    app.add_js_file("sidebar-toggles.js")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
