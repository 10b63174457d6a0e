"""The edition and the licenses in every page's footer (and so in the PDF's front matter).

A Sphinx extension (listed in ``_config.yml``), not part of the algorithms.

The edition is Sphinx's ``release``, set in ``_config.yml`` (``sphinx: config: release:``);
the footer of every page names it, links to the page of changes between editions and to
the citation, and states the two licenses: CC BY 4.0 for the text, figures and exercises,
MIT for the code. Pages can write the number as the MyST substitution ``{{ edition }}``.
The PDF printer (:mod:`.pdf`) copies the footer's paragraph onto the page after the title.
An empty ``release`` is an error: a strict build (``-W``) fails.
"""

from __future__ import annotations

import html

from sphinx.util import logging

logger = logging.getLogger(__name__)

CC_BY = "https://creativecommons.org/licenses/by/4.0/"
MIT = "https://opensource.org/license/mit"
#: the page that explains the edition, the licenses and how to cite (``book/about.md``)
ABOUT = "book/about"
#: the class of the footer's paragraph; the PDF printer looks for it
CLASS = "lincls-edition"


def footer_html(title, edition, about=None):
    """The footer's paragraph: edition, licenses, and (unless ``about`` is None) links to
    the sections of the page ``about`` (``""``: this page).

    Examples
    --------
    >>> print(footer_html("Linear Classification", "2026.1"))  # doctest: +ELLIPSIS
    <p class="lincls-edition">Linear Classification, edition 2026.1. Text, figures and ...
    """
    link = 'style="text-decoration: underline"'
    changes = (f' (<a {link} href="{html.escape(about)}#changes-between-editions">what '
               "changed</a>)" if about is not None else "")
    cite = (f' <a {link} href="{html.escape(about)}#how-to-cite">How to cite</a>.'
            if about is not None else "")
    return (f'<p class="{CLASS}">{html.escape(title)}, edition {html.escape(edition)}{changes}. '
            f'Text, figures and exercises: <a {link} href="{CC_BY}" rel="license">CC BY 4.0</a>;'
            f' code: <a {link} href="{MIT}" rel="license">MIT</a>.{cite}</p>')


def check_edition(app, config):
    if not str(config.release).strip():
        logger.warning("the edition is not set: add `release: \"YYYY.N\"` under `sphinx: "
                       "config:` in _config.yml", type="lincls", subtype="edition")
    # {{ edition }} in a page's text
    subs = dict(config.myst_substitutions or {}) if "myst_substitutions" in config else {}
    subs.setdefault("edition", str(config.release))
    config.myst_substitutions = subs


def add_footer(app, pagename, templatename, context, doctree):
    about = None
    if ABOUT in app.env.found_docs:
        # on the page itself, and on the single page the PDF is printed from, the
        # sections are on the same page
        same = pagename == ABOUT or app.builder.name == "singlehtml"
        about = "" if same else context["pathto"](ABOUT)
    # html_title is the book's title (Jupyter Book sets it; the singlehtml builder's
    # docstitle is not)
    title = app.config.html_title or context.get("docstitle") or app.config.project
    # sphinx-book-theme shows the theme option extra_footer under every page
    context["theme_extra_footer"] = footer_html(title, str(app.config.release), about)


def setup(app):
    app.connect("config-inited", check_edition, priority=100)
    app.connect("html-page-context", add_footer)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
