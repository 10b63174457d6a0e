"""The PDF editions of the book (``make pdf``, ``make student-pdf``).

Two parts, one topic:

- a Sphinx extension (listed in ``_config.yml``) that adds the whole book's PDF to every
  page's download menu (the teacher site links :data:`PDF_NAME`, the student edition,
  ``lincls_student_edition``, only :data:`STUDENT_PDF_NAME`), and makes Sphinx's
  ``singlehtml`` builder write the one page as the ``html`` builder writes pages: with
  MathJax, with the widgets' state and scripts of every chapter, and with visitors for
  every node;
- ``python -m booktools.sphinxext.pdf SITE OUT.pdf``, which prints that single page with
  headless Chromium (Debian's, driven by Playwright, as in the browser tests) once MathJax
  has typeset every formula and every widget is drawn. The jsDelivr files the page loads
  are answered from the local npm copies in ``.venv/vendor`` (``make pdf`` fetches them);
  every other request is refused, so printing works offline. Before printing, the page
  after the title shows the edition and the licenses (the footer's paragraph, see
  :mod:`.edition`), a table of contents (the parts of ``_toc.yml`` and their numbered
  chapters) follows, each part gets a page and a heading of its own (so the PDF's
  bookmarks show parts, chapters and sections), every chapter starts a page, every
  solution dropdown is open, and animation controls are hidden (an animation prints as
  its first frame).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import mimetypes
import os
import re
import shutil
import sys
import threading
from pathlib import Path

PDF_NAME = "linear-classification.pdf"
STUDENT_PDF_NAME = "linear-classification-student.pdf"
CDN = re.compile(r"^https://cdn\.jsdelivr\.net/npm/((?:@[^/]+/)?[^/@]+)@([^/]+)/([^?#]*)")
# other CDN folders the ipywidgets manager loads, and the npm package@version they hold
MIRRORS = {"https://maxcdn.bootstrapcdn.com/font-awesome/4.4.0/": "font-awesome@4.4.0/"}
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


# --- the download link on the website ------------------------------------------------
def add_pdf_link(app, pagename, templatename, context, doctree):
    """Add "Whole book (PDF)" to the theme's download menu (html builder only)."""
    if app.builder.name != "html":
        return
    name = STUDENT_PDF_NAME if app.config.lincls_student_edition else PDF_NAME
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].append({
                "type": "link", "url": context["pathto"](name, 1), "text": "book (PDF)",
                "tooltip": "Download the whole book as one PDF", "icon": "fas fa-book",
                "label": "download-book-pdf-button"})


def _single_page_builder(app):
    """Make the singlehtml builder write what the html builder writes."""
    if app.builder.name != "singlehtml":
        return
    # the one page holds every chapter: load MathJax and the widgets' scripts on it
    # (jupyter-book does the same for its singlehtml builder; sphinx-build does not)
    app.set_html_assets_policy("always")
    # Sphinx looks up node visitors by builder name and only when it has none falls back
    # to the format ("html"); some extensions register "singlehtml" visitors, so the
    # nodes registered for "html" alone (sphinx-jupyterbook-latex's HiddenCellNode)
    # would be unknown: give them their html visitors
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node, visitors in handlers.get("html", {}).items():
        single.setdefault(node, visitors)


def _single_page_scripts(app, pagename, templatename, context, doctree):
    """On the single page, the scripts of every page: myst-nb adds the widgets' state and
    manager to the pages whose notebooks have widgets, and the single page is the root's."""
    if app.builder.name != "singlehtml":
        return
    from myst_nb.sphinx_ import NbMetadataCollector

    for docname in sorted(app.env.found_docs - {pagename}):
        for path, kwargs in NbMetadataCollector.get_js_files(app.env, docname).values():
            app.add_js_file(path, **kwargs)


def setup(app):
    if "lincls_student_edition" not in app.config.values:
        app.add_config_value("lincls_student_edition", False, "env")
    # after sphinx-book-theme's add_header_buttons (priority 501)
    app.connect("builder-inited", _single_page_builder)
    app.connect("html-page-context", add_pdf_link, priority=600)
    app.connect("html-page-context", _single_page_scripts, priority=550)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# --- printing ----------------------------------------------------------------------------
class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _local_cdn(vendor, server, problems, root_page):
    """A Playwright route handler: the site from `server`, jsDelivr from `vendor`.

    ``index.html`` is answered with ``root_page``: Sphinx writes the single page where the
    root document lives (``book/index.html``) but its links as seen from the top folder.
    """

    def handle(route):
        url = route.request.url
        if url == server + "index.html":
            return route.fulfill(status=200, body=root_page.read_bytes(),
                                 content_type="text/html; charset=utf-8")
        if url.startswith(server) or url.startswith("data:"):
            return route.continue_()
        for prefix, package in MIRRORS.items():
            if url.startswith(prefix):
                url = "https://cdn.jsdelivr.net/npm/" + package + url[len(prefix):]
        match = CDN.match(url)
        target = vendor / match[1] / match[3] if match else None
        if target is None or not target.is_file():
            problems.append(f"no local copy of {route.request.url}")
            return route.abort()
        local = json.loads((vendor / match[1] / "package.json").read_text())["version"]
        if local != match[2]:
            problems.append(f"{url} asks for version {match[2]}, the local copy is {local}")
        route.fulfill(status=200, body=target.read_bytes(),
                      content_type=mimetypes.guess_type(target.name)[0] or "text/plain",
                      headers={"Access-Control-Allow-Origin": "*"})

    return handle


# Runs in the page before printing: see the module docstring.
_PREPARE = r"""([start, book]) => {
    // links to the page itself (Sphinx writes them as start#id) jump inside the PDF
    for (const a of document.querySelectorAll('a[href]')) {
        const url = new URL(a.href);
        if (url.origin === location.origin && url.pathname === '/' + start && url.hash)
            a.setAttribute('href', url.hash);
    }
    const heading = el => el && el.querySelector('h1, h2, h3');
    const label = h => [...h.childNodes].filter(n => !(n.classList
        && n.classList.contains('headerlink'))).map(n => n.textContent).join('').trim();
    // the table of contents: each part of _toc.yml with its chapters, and the parts as
    // headings of their own before their first chapter
    const toc = document.createElement('section');
    toc.className = 'lincls-pdf-toc';
    toc.innerHTML = '<h1 id="lincls-pdf-contents">Contents</h1>';
    let parts = 0;
    for (const part of book) {
        const chapters = part.chapters.map(doc => document.getElementById('document-' + doc))
            .map(span => span && span.nextElementSibling).filter(s => heading(s));
        if (!chapters.length) continue;
        const h = document.createElement('h1');
        h.className = 'lincls-pdf-part';
        h.id = 'lincls-pdf-part-' + (++parts);
        h.textContent = part.caption;
        chapters[0].parentNode.insertBefore(h, chapters[0].previousElementSibling);
        const caption = document.createElement('p');
        caption.className = 'caption';
        caption.innerHTML = `<a href="#${h.id}"></a>`;
        caption.firstChild.textContent = part.caption;
        const list = document.createElement('ul');
        for (const section of chapters) {
            const item = document.createElement('li');
            item.innerHTML = `<a href="#${section.id}"></a>`;
            item.firstChild.textContent = label(heading(section));
            list.appendChild(item);
        }
        toc.append(caption, list);
    }
    // the contents go after the title page (the root page's text), before the first part
    const first = document.querySelector('h1.lincls-pdf-part');
    if (first) first.parentNode.insertBefore(toc, first);
    // the front matter: the footer's edition and licenses, on the page after the title
    const edition = document.querySelector('.lincls-edition');
    if (edition && first) {
        const front = document.createElement('section');
        front.className = 'lincls-pdf-front';
        front.appendChild(edition.cloneNode(true));
        toc.parentNode.insertBefore(front, toc);
    }
    document.querySelectorAll('#jb-print-docs-body').forEach(e => e.remove());
    // exercises' solutions and other dropdowns open; animation controls hidden
    document.querySelectorAll('details').forEach(d => { d.open = true; });
    document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
    document.querySelectorAll('.dropdown.toggle-hidden, .admonition.dropdown').forEach(
        e => e.classList.remove('toggle-hidden'));
    const style = document.createElement('style');
    style.textContent = `
        @page { size: A4; margin: 18mm 16mm 18mm 16mm; }
        .lincls-pdf-toc, .lincls-pdf-part, .lincls-pdf-front,
        span[id^="document-"] + section { break-before: page; }
        .lincls-pdf-front { padding-top: 60vh; font-size: 0.9em; }
        .lincls-pdf-toc ul { list-style: none; padding-left: 1.2em; margin: 0; }
        .lincls-pdf-toc p.caption { font-weight: bold; margin: 0.8em 0 0.2em; }
        .lincls-pdf-toc a { text-decoration: none; color: inherit; }
        .bd-main .bd-content .bd-article h1:first-of-type { display: block !important; }
        .bd-article > section:first-of-type > h1:first-child
            { font-size: 3em; text-align: center; margin: 25vh 0 1em; }
        h1.lincls-pdf-part { font-size: 2.4em; padding-top: 9cm; text-align: center; }
        .anim-buttons, .anim-state, input.anim-slider, div.animation > div:not(:first-child),
        button.toggle-button, .toggle-button, .headerlink, .header-article,
        .prev-next-area, .bd-footer-article, .bd-header-article, #jb-print-docs-body
            { display: none !important; }
        .toggle-hidden, details > *:not(summary) { display: block !important; }
        pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }
        .admonition-title, figcaption, .caption { break-after: avoid; }
        .admonition > .admonition-title + * { break-before: avoid; }
        img, figure, mjx-container[display="true"], .cell_output, div.cell
            { break-inside: avoid; }
    `;
    document.head.appendChild(style);
    return {toc: toc.querySelectorAll('li').length, parts};
}"""

_CHECK = r"""() => {
    const problems = [];
    for (const e of document.querySelectorAll('mjx-merror, [data-mjx-error]'))
        problems.push('MathJax error: ' + (e.getAttribute('data-mjx-error') || e.textContent));
    const math = document.querySelectorAll('main .math').length;
    const typeset = document.querySelectorAll('main .math mjx-container').length;
    if (typeset < math) problems.push(`${math - typeset} of ${math} formulas not typeset`);
    for (const img of document.images)
        if (!(img.complete && img.naturalWidth > 0))
            problems.push('image not loaded: ' + img.src.slice(0, 80));
    for (const s of document.querySelectorAll(
            'script[type="application/vnd.jupyter.widget-view+json"]'))
        if (/Error displaying widget/.test(s.parentElement.textContent))
            problems.push('widget error: ' + s.parentElement.textContent.slice(0, 120));
    return problems;
}"""


def _parts(toc):
    """The parts of a ``_toc.yml`` as ``{"caption", "chapters": [docnames]}``."""
    import yaml

    data = yaml.safe_load(Path(toc).read_text(encoding="utf-8"))
    return [{"caption": part.get("caption", ""),
             "chapters": [c["file"].rsplit(".", 1)[0] if c["file"].endswith((".md", ".ipynb"))
                          else c["file"] for c in part.get("chapters", [])]}
            for part in data.get("parts", [])]


def settled(page, promise, ms):
    """Whether the page's JavaScript expression ``promise`` settles within ``ms``
    milliseconds; one that rejects raises (Playwright's ``evaluate`` waits for a promise
    without a time limit)."""
    return page.evaluate(f"""ms => Promise.race([
        Promise.resolve({promise}).then(() => true),
        new Promise(r => setTimeout(() => r(false), ms))])""", ms)


def print_pdf(site, out, vendor=".venv/vendor", chromium=None, timeout_ms=300_000,
              toc="_toc.yml"):
    """Print ``site/index.html`` (a single-page HTML build) to the PDF ``out``.

    ``toc`` (the book's ``_toc.yml``) gives the parts of the table of contents.

    Raises ``RuntimeError`` when the page cannot be printed faithfully: a request the
    local copies cannot answer, a formula MathJax did not typeset, an image that did not
    load, a widget that failed. Returns the path of the PDF.
    """
    from playwright.sync_api import sync_playwright

    site, out, vendor = Path(site).resolve(), Path(out).resolve(), Path(vendor).resolve()
    if not (site / "index.html").is_file():
        raise RuntimeError(f"{site}/index.html is missing: build the single-page HTML first")
    if not (vendor / "mathjax" / "package.json").is_file():
        raise RuntimeError(f"no local MathJax in {vendor}: run `make pdf` (it needs npm)")
    chromium = chromium or os.environ.get("CHROMIUM") or shutil.which("chromium")
    if not chromium:
        raise RuntimeError("chromium not found: run `make chromium` as root")
    # Jupyter Book's root index.html only redirects to the root page (book/index.html)
    stub = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"',
                     (site / "index.html").read_text(encoding="utf-8"), re.I)
    start = stub[1] if stub else "index.html"
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    server = f"http://127.0.0.1:{httpd.server_address[1]}/"
    problems = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                                 args=CHROMIUM_ARGS, timeout=timeout_ms)
            try:
                page = browser.new_page(viewport={"width": 1000, "height": 1400})
                page.set_default_timeout(timeout_ms)
                page.route("**/*", _local_cdn(vendor, server, problems, site / start))
                page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
                page.goto(server + "index.html", wait_until="load")
                page.wait_for_function("() => window.MathJax && MathJax.startup"
                                       " && MathJax.startup.promise")
                if not settled(page, "MathJax.startup.promise", timeout_ms):
                    problems.append(f"MathJax did not finish within {timeout_ms // 1000} s")
                page.wait_for_function("""() => [...document.querySelectorAll(
                    'script[type="application/vnd.jupyter.widget-view+json"]')].every(s =>
                    [...s.parentElement.querySelectorAll('.jupyter-widgets')].some(w =>
                        w.getBoundingClientRect().height > 0))""")  # every widget drawn
                if not settled(page, """Promise.all([...document.images].map(img =>
                        img.complete ? null
                                     : new Promise(r => { img.onload = img.onerror = r; })))""",
                               timeout_ms):
                    problems.append(f"images not loaded within {timeout_ms // 1000} s")
                problems += page.evaluate(_CHECK)
                shape = page.evaluate(_PREPARE, [start, _parts(toc)])
                if shape["parts"] != len(_parts(toc)) or shape["toc"] < 10:
                    problems.append(f"no table of contents or no parts found: {shape}")
                if problems:
                    raise RuntimeError("cannot print the book:\n" + "\n".join(problems[:20]))
                page.emulate_media(media="print")
                out.parent.mkdir(parents=True, exist_ok=True)
                page.pdf(path=str(out), format="A4", print_background=True,
                         prefer_css_page_size=True, outline=True, tagged=True,
                         display_header_footer=True, header_template="<span></span>",
                         footer_template='<div style="font-size:8px;width:100%;'
                                         'text-align:center"><span class="pageNumber"></span>'
                                         '</div>')
            finally:
                browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m booktools.sphinxext.pdf",
                                     description=print_pdf.__doc__.split("\n")[0])
    parser.add_argument("site", help="folder of the single-page HTML build")
    parser.add_argument("out", help="the PDF to write")
    parser.add_argument("--vendor", default=".venv/vendor",
                        help="local npm copies of the CDN files (default: .venv/vendor)")
    parser.add_argument("--toc", default="_toc.yml", help="the book's _toc.yml (its parts)")
    parser.add_argument("--copy-to", action="append", default=[], metavar="DIR",
                        help="also copy the PDF into DIR (the website), repeatable")
    args = parser.parse_args(argv)
    try:
        out = print_pdf(args.site, args.out, args.vendor, toc=args.toc)
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    for folder in map(Path, args.copy_to):
        if folder.is_dir():
            shutil.copy2(out, folder / out.name)
        else:
            print(f"{folder} does not exist (no website built): the PDF is not copied there")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
