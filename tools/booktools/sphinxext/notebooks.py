"""Every chapter as a Jupyter notebook a reader can download and run anywhere.

A Sphinx extension (listed in ``_config.yml``). For each page whose source is a MyST
Markdown notebook (a jupytext header with a ``kernelspec``), the html builder writes
``_notebooks/<page>.ipynb`` into the site (every build, all of them: they take under a
second), converted with jupytext, and the page's download menu links it. The notebook
differs from the source in three ways:

- its first markdown cell starts with the math macros of ``_config.yml`` as MyST front
  matter, where jupyterlab-myst reads them (the block :mod:`.binder` writes into the
  sources, here made from ``_config.yml`` itself);
- its first code cell installs lincls when it is missing (with ipywidgets where the
  chapter uses them), from the book's repository (``repository.url`` and ``.branch`` of
  ``_config.yml``), so the notebook runs in any Jupyter, Colab included; it does nothing
  where lincls is installed (a page without code, the notation, gets no such cell);
- jupytext's metadata is dropped: the notebook is not paired with a text file.

A chapter whose code imports ``booktools`` (the teachers' chapter) runs the book's
machinery on the repository's own files; it is not offered as a notebook.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import jupytext
import nbformat
import yaml

from .binder import BLOCK, front_matter, macro_definitions

FOLDER = "_notebooks"
LABEL = "download-chapter-notebook-button"
TOOLTIP = ("Download this chapter as a Jupyter notebook: its code and text, no outputs. "
           "Its first cell installs lincls, the book's package, when it is missing, so it "
           "runs in JupyterLab, Colab or any Jupyter.")
HEADER = re.compile(r"\A---\n(.*?)^---\n", re.S | re.M)


def _imports(nb, module):
    pattern = re.compile(rf"^\s*(?:from|import)\s+{module}\b", re.M)
    return any(pattern.search(c.source) for c in nb.cells if c.cell_type == "code")


def is_chapter_notebook(text):
    """Whether ``text`` is a MyST Markdown notebook (jupytext header with a kernelspec)."""
    header = HEADER.match(text)
    meta = yaml.safe_load(header[1]) if header else None
    if not isinstance(meta, dict):
        return False
    form = (meta.get("jupytext") or {}).get("text_representation", {}).get("format_name")
    return "kernelspec" in meta and form == "myst"


def install_source(repository_url, branch=None):
    """Where pip finds lincls: the book's repository (at ``branch``), or None without one.

    >>> install_source("https://github.com/owner/book/", "main")
    'git+https://github.com/owner/book@main'
    >>> install_source("") is None  # the student edition without a student repository
    True
    """
    if not repository_url:
        return None
    ref = f"@{branch}" if branch else ""
    return f"git+{repository_url.rstrip('/')}{ref}"


def install_cell(source, widgets=False):
    """The first code cell: install lincls (``source``: a pip requirement's URL) if missing."""
    modules = "lincls, ipywidgets" if widgets else "lincls"
    requirement = f"lincls{'[widgets]' if widgets else ''} @ {source}" if source else None
    lines = ["# This notebook uses lincls, the package of the book *Linear Classification*.",
             "# Where it is missing (e.g. on Colab), this cell installs it.",
             "try:",
             f"    import {modules}",
             "except ImportError:"]
    if requirement:
        lines.append(f'    %pip install "{requirement}"')
    else:
        lines.append('    raise ImportError("install lincls, the book\'s package, first "'
                     '"(see the README of the book\'s repository)") from None')
    return nbformat.v4.new_code_cell("\n".join(lines))


def chapter_notebook(text, macros, source):
    """The downloadable notebook of a chapter's MyST Markdown ``text``.

    ``macros``: {name: definition} of ``_config.yml``; ``source``: see :func:`install_source`.
    """
    nb = jupytext.reads(text, fmt="md:myst")
    nb.metadata.pop("jupytext", None)
    first = next(c for c in nb.cells if c.cell_type == "markdown")
    old = BLOCK.match(first.source)
    first.source = front_matter(macros) + (first.source[old.end():] if old else first.source)
    index = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), None)
    if index is not None:  # a page without code (notation) needs no lincls
        nb.cells.insert(index, install_cell(source, widgets=_imports(nb, "ipywidgets")))
    for i, cell in enumerate(nb.cells):  # ids that say where a cell is, the same every build
        cell.id = f"cell-{i}"
    nbformat.validate(nb)
    return nb


def _notebook(app, docname):
    """The notebook the site offers for ``docname``, or None."""
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".md":
        return None
    text = path.read_text(encoding="utf-8")
    if not is_chapter_notebook(text):
        return None
    options = app.config.html_theme_options
    nb = chapter_notebook(text, macro_definitions(app.config.mathjax3_config),
                          install_source(options.get("repository_url"),
                                         options.get("repository_branch")))
    return None if _imports(nb, "booktools") else nb


def _add_link(app, pagename, templatename, context, doctree):
    """html-page-context: the page's notebook in the download menu."""
    if app.builder.name != "html" or doctree is None or _notebook(app, pagename) is None:
        return
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].insert(0, {
                "type": "link", "url": context["pathto"](f"{FOLDER}/{pagename}.ipynb", 1),
                "text": "chapter (.ipynb)", "tooltip": TOOLTIP, "icon": "fas fa-code",
                "label": LABEL})


def _write_notebooks(app, exception):
    """build-finished: every page's notebook, written anew on every build (under a second
    for the whole book), so none is older than its chapter, the configuration or this code."""
    if exception is not None or app.builder.name != "html":
        return
    folder = Path(app.outdir, FOLDER)
    shutil.rmtree(folder, ignore_errors=True)
    for docname in sorted(app.env.found_docs):
        nb = _notebook(app, docname)
        if nb is not None:
            target = folder / f"{docname}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def setup(app):
    # after sphinx-book-theme's add_header_buttons (priority 501)
    app.connect("html-page-context", _add_link, priority=600)
    app.connect("build-finished", _write_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
