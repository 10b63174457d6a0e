"""Small fixes to the pages of the book's website, found by tests/test_browser.py.

A Sphinx extension (listed in ``_config.yml``), not part of the algorithms.

Each removes JavaScript console errors that pages showed on a reader's first visit:

- sphinx-thebe 0.3.1 registers its inline configuration script twice under Jupyter Book
  1.0, and the second copy throws "Identifier 'THEBE_JS_URL' has already been declared".
  Repeated scripts are dropped from each page.
- the theme's light/dark switch starts from an empty ``default_mode`` and logs "Got
  invalid theme mode". It now starts from ``auto`` (follow the reader's system).
- on pages with widgets, the ipywidgets HTML manager loads its icon fonts relative to
  the page instead of the CDN, and calls MathJax 2's ``MathJax.Hub.Queue``, which the
  site's MathJax 3 lacks. ``_static/widgets-setup.js`` (listed in
  ``nb_ipywidgets_js`` in ``_config.yml``, between require.js and the manager) fixes both.
"""

from pathlib import Path


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


def add_static_path(app):
    app.config.html_static_path.append(str(Path(__file__).parent / "_static"))


def setup(app):
    app.connect("builder-inited", add_static_path)
    app.connect("html-page-context", fix_page, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
