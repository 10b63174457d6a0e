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

The same block carries each notebook's citations and cross-references as the website
resolves them (``xrefs:``, ``bibliography:``; see :mod:`.xrefs`): at the end of an HTML
build this module writes them there, keeping the file's time (Sphinx never parses the
block, so the page need not be read again), and warns when it had to, so the committed
notebooks stay in step with the build (the student edition's build writes its own
without warning). On Binder, ``postBuild`` runs ``python -m booktools.sphinxext.binder
resolve ROOT``, which puts them in place of the roles, for jupyterlab-myst; a notebook
so rewritten is marked (``roles_resolved: true``) and the website build refuses it.

It also makes myst-nb's ``inline`` execution run a notebook the way JupyterLab's "Run
All" does. myst-nb executes a code cell when it renders it, so a cell tagged
``remove-cell`` (never rendered) ran only when a later visible cell did: a markdown cell
right after it evaluated its ``{eval}`` roles before the cell had run, and hidden cells
at the end of a page (checks with ``assert``) never ran. Here every cell above a
markdown cell runs before that cell is rendered, and every cell runs before the page
is finished.
"""

import functools
import json
import os
import re
import sys
from pathlib import Path

import yaml
from myst_nb.core.execute.inline import NotebookClientInline
from myst_nb.core.render import MditRenderMixin

BEGIN = "---\nmath:\n"
BLOCK = re.compile(r"\A---\nmath:\n(?:(?:  .*|[a-z_]+:.*)\n)*---\n")
MATH = re.compile(r"\A---\nmath:\n(?:  .*\n)*")  # the macros part of a block
RESOLVED = "roles_resolved: true\n"
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


def front_matter(macros, xrefs=None, bibliography=None):
    """The MyST front matter block that defines `macros` (KaTeX counts the #1 arguments),
    and holds the resolved roles `xrefs` and the cited entries `bibliography`."""
    def quote(text):
        return "'" + text.replace("'", "''") + "'"

    def entry(key, value):  # JSON strings are YAML double-quoted strings
        return f"  {json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}\n"

    lines = [f"  {quote(chr(92) + name)}: {quote(value)}\n" for name, value in macros.items()]
    if xrefs:
        lines += ["xrefs:\n"] + [entry(key, value) for key, value in xrefs.items()]
    if bibliography:
        lines += ["bibliography:\n"] + [entry(key, list(value))
                                        for key, value in bibliography.items()]
    return BEGIN + "".join(lines) + "---\n"


def read_front_matter(block):
    """The data of a front matter block ({} for none)."""
    return yaml.safe_load(block[len("---\n"):-len("---\n")]) if block else {}


def math_part(block):
    match = MATH.match(block)
    return match.group(0) if match else ""


def with_macros(block, macros):
    """`block` (or none) with the macros part replaced by `macros`; the rest kept."""
    new = front_matter(macros)
    return math_part(new) + (block[len(math_part(block)):] if block else "---\n")


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


def notebooks(root="."):
    """The chapters (MyST Markdown notebooks) and homework notebooks under `root`."""
    root = Path(root)
    chapters = [p for p in sorted((root / "book").glob("*.md"))
                if split_md(p.read_text(encoding="utf-8"))]
    return chapters + sorted((root / "book" / "homework").glob("*.ipynb"))


def get_block(path):
    """The front matter block of the notebook at `path` ('' for none)."""
    text = Path(path).read_text(encoding="utf-8")
    if Path(path).suffix == ".md":
        parts = split_md(text)
        return parts[1] if parts else ""
    cell = first_markdown(json.loads(text))
    match = BLOCK.match(cell_text(cell)) if cell else None
    return match.group(0) if match else ""


def set_block(path, change, body=None, cell=None):
    """Give the notebook at `path` the block `change(old block)`; `body(text)` rewrites the
    rest of its markdown, and `cell` is appended as a markdown cell. Writes only if that
    changes the file; returns whether it did."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        header, old, rest = split_md(text)
        if body:
            rest = body(rest)
        if cell:
            rest = rest.rstrip("\n") + "\n\n+++\n\n" + cell
        new = header + change(old) + rest
    else:
        nb = json.loads(text)
        first = first_markdown(nb)
        source = cell_text(first)
        old = BLOCK.match(source)
        old_block = old.group(0) if old else ""
        if body:
            for other in nb["cells"]:
                if other["cell_type"] == "markdown":
                    other_text = cell_text(other)
                    if other is first:
                        other_text = other_text[len(old_block):]
                    other["source"] = body(other_text).splitlines(keepends=True)
            source = cell_text(first)
        else:
            source = source[len(old_block):]
        first["source"] = (change(old_block) + source).splitlines(keepends=True)
        if cell:
            nb["cells"].append({"cell_type": "markdown", "metadata": {},
                                "source": cell.splitlines(keepends=True)})
        new = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"  # keys in the file's order
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


def write_macros(root="."):
    """Write the macros into every chapter's and homework's front matter; list changes."""
    macros = config_macros(root)
    return [path for path in notebooks(root)
            if set_block(path, lambda old: with_macros(old, macros))]


def resolve_roles(root="."):
    """For JupyterLab (on Binder): replace each notebook's roles by the markdown its front
    matter holds and append its references; mark it. Lists the notebooks changed."""
    from booktools.sphinxext.xrefs import references_cell, replace_roles

    changed = []
    for path in notebooks(root):
        data = read_front_matter(get_block(path))
        if data.get("roles_resolved"):
            continue

        body = functools.partial(replace_roles, resolved=data.get("xrefs") or {})
        bibliography = data.get("bibliography")
        cell = references_cell(bibliography) if bibliography else None
        if set_block(path, lambda old: math_part(old) + RESOLVED + "---\n", body, cell):
            changed.append(path)
    return changed


def _strip(app, docname, source):
    """source-read: drop the front matter block; warn if it is not _config.yml's."""
    from sphinx.util import logging

    path = Path(app.env.doc2path(docname))
    text = source[0]
    expected = math_part(front_matter(macro_definitions(app.config.mathjax3_config)))
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
    if read_front_matter(found).get("roles_resolved"):
        logging.getLogger(__name__).warning(
            "%s: its roles were replaced for JupyterLab (`python -m booktools.sphinxext.binder "
            "resolve`, which postBuild runs on Binder): restore it (git checkout)", path.name,
            type="lincls", subtype="macros")
    if math_part(found) != expected:
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


def _write_references(app, exception):
    """build-finished: each notebook's resolved roles and citations into its front matter."""
    from sphinx.util import logging

    from booktools.sphinxext.xrefs import resolve_page

    if exception is not None or app.builder.name != "html":
        return
    env = app.env
    macros = macro_definitions(app.config.mathjax3_config)
    for docname in sorted(env.found_docs):
        path = Path(env.doc2path(docname))
        if path.suffix not in (".md", ".ipynb") or not get_block(path):
            continue
        resolved, cited = resolve_page(env, app.builder, docname)
        stored = read_front_matter(get_block(path))
        stale = ({k: v for k, v in (stored.get("xrefs") or {}).items() if k in resolved}
                 != resolved or {k: tuple(v) for k, v in (stored.get("bibliography") or {})
                                 .items() if k in cited} != cited)
        block = front_matter(macros, resolved, cited)
        stat = path.stat()
        if set_block(path, lambda old, block=block: block):
            # Sphinx removes the block before parsing: the page it read is unchanged
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            # a role of the page with no or other markdown; entries of roles no longer on
            # the page (or on a page made from another's front matter) go without a word
            if stale and not getattr(app.config, "lincls_student_edition", False):
                logging.getLogger(__name__).warning(
                    "%s: its citations and cross-references for JupyterLab (front matter) "
                    "were out of date; written: commit them", path.name,
                    type="lincls", subtype="xrefs")


def setup(app):
    app.setup_extension("booktools.sphinxext.colab")  # the chapter's notebook in Colab too
    _patch_inline_execution()
    app.connect("source-read", _strip)
    app.connect("build-finished", _write_references)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("macros", "resolve"):
        sys.exit("usage: python -m booktools.sphinxext.binder macros|resolve ROOT")
    if sys.argv[1] == "macros":
        for changed in write_macros(sys.argv[2]):
            print(f"macros written into {changed}")
    else:
        for changed in resolve_roles(sys.argv[2]):
            print(f"roles resolved for JupyterLab in {changed}")
