"""The book in JupyterLab (Binder): the math macros, from one source.

The macros live in ``_config.yml`` (``sphinx.config.mathjax3_config.tex.macros``), where
the website's MathJax reads them. JupyterLab renders markdown with jupyterlab-myst,
which reads macros only from MyST front matter at the top of a notebook's first markdown
cell (``math:``). So every chapter and homework notebook starts its first markdown cell
with a generated block::

    ---
    math:
      '\\R': '\\mathbb{R}'
    ---
    # Title

``python -m booktools.sphinxext.binder macros ROOT`` writes (or refreshes) that block in
``book/*.md`` and ``book/homework/*.ipynb`` from ``_config.yml``. As a Sphinx extension
this module removes the block before myst-nb parses a page (on the website it would be a
heading) and warns when a page's block differs from ``_config.yml``, so a build with
``-W`` fails until the command has been run: add a macro once, in ``_config.yml``.

It also makes myst-nb's ``inline`` execution run a notebook the way JupyterLab's "Run
All" does. myst-nb executes a code cell when it renders it, so a cell tagged
``remove-cell`` (never rendered) ran only when a later visible cell did: a markdown cell
right after it evaluated its ``{eval}`` roles before the cell had run, and hidden cells
at the end of a page (checks with ``assert``) never ran. Here every cell above a
markdown cell runs before that cell is rendered, and every cell runs before the page
is finished.
"""

import json
import re
import sys
from pathlib import Path

import yaml
from myst_nb.core.execute.inline import NotebookClientInline
from myst_nb.core.render import MditRenderMixin

BEGIN = "---\nmath:\n"
BLOCK = re.compile(r"\A---\nmath:\n(?:  .*\n)*---\n")
HEADER = re.compile(r"\A---\n.*?^---\n+", re.S | re.M)  # the jupytext header of a .md


def config_macros(root="."):
    """The macros of ``_config.yml`` as {name: definition}, in the file's order."""
    config = yaml.safe_load((Path(root) / "_config.yml").read_text(encoding="utf-8"))
    return macro_definitions(config["sphinx"]["config"]["mathjax3_config"])


def macro_definitions(mathjax3_config):
    """{name: definition} of a MathJax 3 configuration (KaTeX counts #1 arguments itself)."""
    macros = mathjax3_config["tex"]["macros"]
    return {name: value[0] if isinstance(value, list) else value
            for name, value in macros.items()}


def front_matter(macros):
    """The MyST front matter block that defines `macros` (KaTeX counts the #1 arguments)."""
    def quote(text):
        return "'" + text.replace("'", "''") + "'"

    lines = [f"  {quote(chr(92) + name)}: {quote(value)}\n" for name, value in macros.items()]
    return BEGIN + "".join(lines) + "---\n"


def split_md(text):
    """(jupytext header, front matter block or '', rest) of a MyST Markdown notebook."""
    header = HEADER.match(text)
    if not header:
        return None
    rest = text[header.end():]
    block = BLOCK.match(rest)
    return header.group(0), block.group(0) if block else "", rest[block.end():] if block else rest


def first_markdown(nb):
    return next((c for c in nb["cells"] if c["cell_type"] == "markdown"), None)


def cell_text(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def write_macros(root="."):
    """Write the front matter block into every chapter and homework notebook; list changes."""
    root = Path(root)
    block = front_matter(config_macros(root))
    changed = []
    for path in sorted((root / "book").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        parts = split_md(text)
        if parts is None:
            continue
        new = parts[0] + block + parts[2]
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    for path in sorted((root / "book" / "homework").glob("*.ipynb")):
        text = path.read_text(encoding="utf-8")
        nb = json.loads(text)
        cell = first_markdown(nb)
        source = cell_text(cell)
        old = BLOCK.match(source)
        source = block + (source[old.end():] if old else source)
        cell["source"] = source.splitlines(keepends=True)
        new = json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def _strip(app, docname, source):
    """source-read: drop the front matter block; warn if it is not _config.yml's."""
    from sphinx.util import logging

    path = Path(app.env.doc2path(docname))
    text = source[0]
    expected = front_matter(macro_definitions(app.config.mathjax3_config))
    if path.suffix == ".md":
        parts = split_md(text)
        if parts is None:
            return
        found = parts[1]
        source[0] = parts[0] + parts[2]
    elif path.suffix == ".ipynb":
        nb = json.loads(text)
        cell = first_markdown(nb)
        if cell is None:
            return
        block = BLOCK.match(cell_text(cell))
        found = block.group(0) if block else ""
        if block:
            cell["source"] = cell_text(cell)[block.end():]
            source[0] = json.dumps(nb)
    else:
        return
    if found != expected:
        logging.getLogger(__name__).warning(
            "%s: its math macros (front matter of the first markdown cell, read by "
            "JupyterLab) differ from _config.yml; run `python -m booktools.sphinxext.binder "
            "macros .`", path.name, type="lincls", subtype="macros")


def _run_cells_above(render):
    """Wrap a myst-nb render method: first execute all cells up to the token's cell."""
    def wrapper(self, token):
        client = self.nb_client
        if isinstance(client, NotebookClientInline):
            last = token.meta["index"] if "index" in token.meta else len(client.notebook.cells) - 1
            client.code_cell_outputs(last)
        return render(self, token)

    wrapper.__wrapped__ = render
    return wrapper


def _patch_inline_execution():
    if not hasattr(MditRenderMixin.render_nb_cell_markdown, "__wrapped__"):
        MditRenderMixin.render_nb_cell_markdown = _run_cells_above(
            MditRenderMixin.render_nb_cell_markdown)
        MditRenderMixin.render_nb_finalise = _run_cells_above(MditRenderMixin.render_nb_finalise)


def setup(app):
    _patch_inline_execution()
    app.connect("source-read", _strip)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "macros":
        sys.exit("usage: python -m booktools.sphinxext.binder macros ROOT")
    for changed in write_macros(sys.argv[2]):
        print(f"macros written into {changed}")
