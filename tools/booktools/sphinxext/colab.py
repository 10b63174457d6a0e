"""Every chapter with code opens in Google Colab, from the launch menu next to Binder.

Colab opens a notebook from GitHub by its path in a branch of a repository:
``https://colab.research.google.com/github/OWNER/REPO/blob/BRANCH/PATH``. It cannot open
a chapter's source (MyST Markdown), and a notebook from it would lack lincls. So the
button opens the chapter's notebook as the site serves it (``_notebooks/<page>.ipynb``,
written by :mod:`.notebooks`, whose first cell installs lincls), in the branch the site is
published to: ``make publish`` pushes the built site, as it is, to ``gh-pages`` (see
:func:`booktools.homework.publish.publish_site`), so the notebook's path there is its path
in the site. The owner and the repository come from ``repository.url`` of
``_config.yml``, as Binder's do: a teacher's fork, or the student repository, gets
buttons that open its own notebooks.

Configured in ``_config.yml``'s ``launch_buttons``: ``colab_url`` (Jupyter Book's own
key; empty: no button) and ``colab_branch`` (the published branch, default ``gh-pages``).
The theme makes a Colab button of its own from ``colab_url`` that opens the page's source
on the source branch; this extension gives it the served notebook's URL instead, and takes
it away from pages the site serves no notebook for (the teachers' chapter, homework), or
one without code (the notation). Registered by :mod:`.binder`.
"""

from __future__ import annotations

import re

from .notebooks import FOLDER

BRANCH = "gh-pages"
LABEL = "launch-colab-button"
TOOLTIP = ("Open this chapter's notebook in Google Colab (a Google account runs it). Its "
           "first cell installs lincls, the book's package.")
GITHUB = re.compile(r"\Ahttps?://(?:www\.)?github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/*\Z")


def notebook_path(pagename):
    """The path of a page's served notebook in the site, and so in the published branch.

    >>> notebook_path("book/perceptron")
    '_notebooks/book/perceptron.ipynb'
    """
    return f"{FOLDER}/{pagename}.ipynb"


def colab_url(repository_url, pagename, branch=BRANCH, colab="https://colab.research.google.com"):
    """The URL that opens the page's served notebook in Colab, or None (no GitHub repository).

    >>> colab_url("https://github.com/our-course/book/", "book/perceptron")
    'https://colab.research.google.com/github/our-course/book/blob/gh-pages/_notebooks/book/perceptron.ipynb'
    >>> colab_url("https://gitlab.com/a/b", "book/perceptron") is None
    True
    >>> colab_url("", "book/perceptron") is None  # the student edition without a repository
    True
    """
    match = GITHUB.match((repository_url or "").strip())
    if not match or not colab:
        return None
    owner, repo = match.groups()
    return f"{colab.rstrip('/')}/github/{owner}/{repo}/blob/{branch}/{notebook_path(pagename)}"


def _has_code(app, pagename):
    from .notebooks import _notebook

    nb = _notebook(app, pagename)
    return nb is not None and any(c.cell_type == "code" for c in nb.cells)


def _button(app, pagename, templatename, context, doctree):
    """html-page-context: the Colab button of the launch menu opens the served notebook."""
    if app.builder.name != "html" or doctree is None:
        return
    options = app.config.html_theme_options
    launch = options.get("launch_buttons") or {}
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        buttons = group["buttons"]
        # the theme's own (from colab_url): the page's source on the source branch
        buttons[:] = [b for b in buttons if b.get("text") != "Colab"]
        url = colab_url(options.get("repository_url"), pagename,
                        launch.get("colab_branch") or BRANCH, launch.get("colab_url"))
        if url and _has_code(app, pagename):
            after = next((i + 1 for i, b in enumerate(buttons) if b.get("text") == "Binder"), 0)
            buttons.insert(after, {"type": "link", "text": "Colab", "tooltip": TOOLTIP,
                                   "icon": "_static/images/logo_colab.png", "url": url,
                                   "label": LABEL})
        if not buttons:  # an empty menu goes
            context["header_buttons"].remove(group)
        break


def setup(app):
    # after sphinx-book-theme's add_launch_buttons (priority 501)
    app.connect("html-page-context", _button, priority=601)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
