"""Citations and cross-references in JupyterLab, read as on the website.

jupyterlab-myst (2.7.0) resolves a cross-reference only to a target in the same notebook,
and no citation at all: its ``cite`` renderer reads citation data that nothing fills, so
every ``{cite}`` shows its key with "Citation Not Found". No front matter it reads (title,
numbering, math, abbreviations, ...) carries link targets or a bibliography. So a notebook
reads as the website only if its markdown holds the resolved text itself:

- the website build resolves, after writing the site (``build-finished``), every role of
  each notebook with Sphinx's own resolvers, on a copy of the page's doctree, and turns
  each result into markdown: ``{numref}`fig-x``` becomes ``[Fig. 5.2](#fig-x)``, a
  ``{doc}`` or a target on another page a link to that page's source (JupyterLab opens
  it), a ``{cite}`` the author–year text linked to the full entry, which goes into a
  "References" cell at the end of the notebook (``bibliography``). :mod:`.binder` writes
  both into the notebook's front matter, beside the math macros;
- on Binder, ``postBuild`` puts that markdown in place of the roles and appends the
  references cell (``python -m booktools.sphinxext.binder resolve .``), in Binder's copy
  of the repository only.
"""

import posixpath
import re
from pathlib import PurePosixPath

from docutils import nodes
from sphinx.addnodes import pending_xref

# the roles the rewrite replaces: a citation or a cross-reference, with its body
ROLE = re.compile(r"\{(?:cite(?::\w+)?|numref|ref|eq|doc|prf:ref)\}`[^`]+`")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
REFERENCES_HEADING = "## References"
# directives whose body is code or math, not MyST
CODE = {"code-cell", "code-block", "code", "sourcecode", "literalinclude", "raw", "math",
        "eval-rst"}


def escape(text):
    """Plain text as markdown text (nothing in it is syntax)."""
    return re.sub(r"([\\`*_\[\]$<])", r"\\\1", text)


def to_markdown(node, link):
    """A resolved docutils node as markdown; ``link(reference)`` gives a link's URL."""
    if isinstance(node, nodes.Text):
        return escape(node.astext())
    if isinstance(node, nodes.math):
        return f"${node.astext()}$"
    if isinstance(node, nodes.literal):
        return f"`{node.astext()}`"
    inner = "".join(to_markdown(child, link) for child in node.children)
    if isinstance(node, nodes.reference):
        return f"[{inner}]({link(node)})"
    if isinstance(node, nodes.emphasis):
        return f"*{inner}*"
    if isinstance(node, nodes.strong):
        return f"**{inner}**"
    return inner


def role_source(xref):
    """The role as written in MyST (myst-parser gives roles the rawsource ``:name:`body```)."""
    match = re.fullmatch(r":([\w:]+):`(.*)`", xref.rawsource, re.S)
    return "{%s}`%s`" % match.groups() if match else None


def cite_anchor(key):
    return "cite-" + key.lower()


def resolve_page(env, builder, docname):
    """({role source: markdown}, {bibtex key: (label, entry markdown)}) of one page.

    Each pending cross-reference of the page's doctree is wrapped, the copy resolved as
    when the page was written (Sphinx's post-transforms), and the wrapper's content
    turned into markdown.
    """
    from pybtex.plugin import find_plugin

    doctree = env.get_doctree(docname)
    xrefs = list(doctree.findall(pending_xref))
    wrappers = []
    for xref in xrefs:
        wrapper = nodes.inline()
        xref.replace_self(wrapper)
        wrapper += xref
        wrappers.append(wrapper)
    env.apply_post_transforms(doctree, docname)

    domain = env.get_domain("cite")
    citations = {c.citation_id: c for c in domain.citations}
    here = PurePosixPath(env.doc2path(docname, False))
    markdown = find_plugin("pybtex.backends", "markdown")()
    resolved, cited = {}, {}
    for xref, wrapper in zip(xrefs, wrappers):
        source = role_source(xref)
        if source is None:
            continue

        def link(reference, xref=xref):
            uri = reference.get("refuri", "")
            page, _, anchor = uri.partition("#")
            if reference.get("refid"):
                page, anchor = "", reference["refid"]
            citation = citations.get(anchor)
            if xref["refdomain"] == "cite" and citation is not None:
                label = reference.astext()
                entry = " ".join(citation.formatted_entry.text.render(markdown).split("\n"))
                cited[citation.key] = (label, entry)
                return "#" + cite_anchor(citation.key)
            if not page:  # this page: the target's MyST label, which jupyterlab-myst knows
                return "#" + xref["reftarget"].lower() if xref["reftype"] != "doc" else "#"
            other = posixpath.normpath(posixpath.join(posixpath.dirname(docname), page))
            other = other.removesuffix(".html")
            path = PurePosixPath(env.doc2path(other, False))
            relative = posixpath.relpath(path, here.parent)
            return relative + ("#" + anchor if anchor else "")

        resolved[source] = "".join(to_markdown(child, link) for child in wrapper.children)
    order = {c.key: i for i, c in enumerate(domain.citations)}
    return resolved, dict(sorted(cited.items(), key=lambda item: order[item[0]]))


def replace_roles(text, resolved):
    """``text`` with each role found in ``resolved`` replaced; code (a fenced block that
    is not a MyST directive, or a code-cell, code-block or similar directive) left alone."""
    def sub(line):
        return ROLE.sub(lambda m: resolved.get(m.group(0), m.group(0)), line)

    out, fences = [], []  # the open fences: (marker, is code)
    for line in text.splitlines(keepends=True):
        match = FENCE.match(line)
        in_code = any(code for _, code in fences)
        if match:
            marker, info = match.group(1), line[match.end():].strip()
            top = fences[-1][0] if fences else ""
            if top and not info and marker[0] == top[0] and len(marker) >= len(top):
                fences.pop()
                out.append(line)
                continue
            if not in_code:
                directive = re.match(r"\{([\w:-]+)\}", info)
                fences.append((marker, not directive or directive.group(1) in CODE))
                out.append(line if fences[-1][1] else sub(line))
                continue
        out.append(line if in_code else sub(line))
    return "".join(out)


def references_cell(bibliography):
    """The markdown of a "References" cell: each cited entry under its link target."""
    entries = [f"({cite_anchor(key)})=\n\\[{escape(label)}\\] {entry}\n"
               for key, (label, entry) in bibliography.items()]
    return REFERENCES_HEADING + "\n\n" + "\n".join(entries)
