"""Slides from the chapters: a reveal.js deck beside every chapter that marks slides.

A teacher who lectures from the book marks in the chapter's source what goes on a slide,
and the HTML build writes the deck from the page it has just rendered, so a slide shows
exactly what the website shows (the executed figures, the numbers computed on the page),
never a second copy of the text. Two markers:

- ``:class: slide`` on a directive (a learning-goals admonition, a ``{prf:definition}``
  or ``{prf:theorem}``, a ``{figure}``): the block is one slide;
- the tag ``slide`` on a code cell: its output (a figure, a table) is one slide.

The deck of ``book/<chapter>`` is ``book/<chapter>-slides.html``: a title slide, then
the marked blocks in the order of the page. It loads reveal.js (:data:`REVEAL`, pinned as
the site's other scripts, see ``tests/browser/package.json``) and the site's own MathJax
with the book's macros (``mathjax_path``, ``mathjax3_config``); its figures are the build's
(the deck sits beside the page, so the page's relative links hold; a link to an anchor of
the page itself, such as an equation's number, leads back to the page). Each chapter with a
deck gets a *Slides* button in its header. ``make slides`` is ``make book``: the decks
are part of every HTML build.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

MARK = "slide"
REVEAL = "https://cdn.jsdelivr.net/npm/reveal.js@5.1.0"
SUFFIX = "-slides.html"
TOOLTIP = "This chapter's slides (reveal.js): press F for full screen, the arrow keys to page"
#: the slide's size in CSS pixels; reveal.js scales it to the screen
WIDTH, HEIGHT = 1280, 720

STYLE = """
.reveal { font-size: 26px; }
.reveal .slides { text-align: left; }
.reveal .slides section { height: 100%; box-sizing: border-box; }
.reveal h1 { font-size: 1.8em; }
.reveal .admonition-title, .reveal .admonition > p:first-child { font-weight: bold; }
.reveal img { width: 100%; height: 470px; object-fit: contain; margin: 0 auto; display: block; }
.reveal figure, .reveal .figure { margin: 0; }
.reveal .caption, .reveal figcaption { font-size: 0.7em; }
.reveal a.headerlink, .reveal .toggle-button { display: none; }
.reveal mjx-container[display="true"] { font-size: 90% !important; }
"""


def slide_blocks(body, page=""):
    """The HTML of each marked block of a rendered page body, in page order.

    A link to an anchor of the page itself (an equation, a section) leads back to the
    page ``page``: the deck does not hold its target.

    >>> slide_blocks('<div class="admonition tip slide"><p>Goals</p></div>'
    ...              '<div class="cell tag_slide"><div class="cell_input">code</div>'
    ...              '<div class="cell_output"><img src="a.png"/></div></div>')
    ['<div class="admonition tip slide"><p>Goals</p></div>', '<img src="a.png"/>']
    >>> slide_blocks('<p class="slides">not a marker</p>')
    []
    >>> slide_blocks('<div class="proof slide"><section>statement</section></div>')
    ['<div class="proof slide"><div>statement</div></div>']
    >>> slide_blocks('<p class="slide"><a href="#equation-svm-hard">(17.3)</a></p>', "svm.html")
    ['<p class="slide"><a href="svm.html#equation-svm-hard">(17.3)</a></p>']
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(body, "html.parser")
    for inner in soup.find_all("section"):  # reveal.js would make a nested one a slide
        inner.name = "div"
    for link in soup.find_all("a", href=True):
        if link["href"].startswith("#"):
            link["href"] = page + link["href"]
    blocks = []
    for node in soup.find_all(class_=[MARK, f"tag_{MARK}"]):
        if any(MARK in p.get("class", ()) or f"tag_{MARK}" in p.get("class", ())
               for p in node.parents if p.name):
            continue  # inside a marked block: already on its slide
        if f"tag_{MARK}" in node.get("class", ()):
            output = node.find(class_="cell_output")
            if output is not None:
                blocks.append(output.decode_contents().strip())
        else:
            blocks.append(str(node))
    return blocks


def deck(title, page, blocks, mathjax_path, mathjax_config):
    """The deck's HTML: a title slide, then one slide per block."""
    config = json.dumps(dict(mathjax_config or {}), sort_keys=True)
    sections = "\n".join(f"<section>\n{block}\n</section>" for block in blocks)
    title = html.escape(title)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}: slides</title>
<link rel="stylesheet" href="{REVEAL}/dist/reveal.css">
<link rel="stylesheet" href="{REVEAL}/dist/theme/white.css">
<style>{STYLE}</style>
<script>window.MathJax = {config};</script>
<script defer src="{html.escape(mathjax_path)}"></script>
</head>
<body>
<div class="reveal"><div class="slides">
<section class="title-slide">
<h1>{title}</h1>
<p><a href="{html.escape(page)}">The chapter on the website</a></p>
</section>
{sections}
</div></div>
<script src="{REVEAL}/dist/reveal.js"></script>
<script>
Reveal.initialize({{hash: true, width: {WIDTH}, height: {HEIGHT}, margin: 0.04,
                   center: false, transition: "none"}});
// once MathJax has typeset every slide, reveal.js measures them again
window.addEventListener("load", () => {{
  if (window.MathJax && MathJax.startup) {{
    MathJax.startup.promise.then(() => {{
      Reveal.layout(); document.body.dataset.typeset = "done"; }});
  }}
}});
</script>
</body>
</html>
"""


def _write_deck(app, pagename, templatename, context, doctree):
    """html-page-context: write the page's deck, and link it from the page's header."""
    if app.builder.name != "html" or doctree is None:
        return
    name = pagename.rsplit("/", 1)[-1]
    blocks = slide_blocks(context.get("body", ""), f"{name}.html")
    if not blocks:
        return
    target = Path(app.outdir) / f"{pagename}{SUFFIX}"
    target.parent.mkdir(parents=True, exist_ok=True)
    title = html.unescape(context.get("title", name))
    target.write_text(deck(title, f"{name}.html", blocks, app.config.mathjax_path,
                           app.config.mathjax3_config), encoding="utf-8")
    buttons = context.setdefault("header_buttons", [])
    buttons.insert(0, {"type": "link", "url": f"{name}{SUFFIX}", "text": "",
                       "tooltip": TOOLTIP, "icon": "fas fa-person-chalkboard",
                       "label": "slides-button"})


def setup(app):
    # after sphinx-book-theme has filled the header's buttons (priority 501)
    app.connect("html-page-context", _write_deck, priority=602)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
