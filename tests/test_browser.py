"""Every page of the built website in headless Chromium, offline.

The site is served from ``_build/html`` on 127.0.0.1. The third-party JavaScript it
loads from jsDelivr (MathJax, require.js, the ipywidgets HTML manager; pinned in
``_config.yml``) is answered from local npm copies in ``.venv/vendor`` (``make browser``
fetches them; versions in ``tests/browser/package.json``) by a local CDN
(``tests/chromium.py``). Any other request that leaves 127.0.0.1 fails and is reported.
Run by ``make test`` after the book build.

Accessibility: axe-core (an npm package pinned beside those assets) runs on every page of
the site and of the student edition (there without its rules of how elements look where
the teacher's page has every element of the student's: test_student_page_accessible) and
fails on violations of impact serious or critical; every image of an article needs alt
text that says what it shows; the dropdowns, widget sliders and animation controls are
used with the keyboard; and in the theme's dark mode every figure keeps its opaque light
background (screenshots ``_build/screenshots/dark_*.png``).

On a phone (390 px wide, every page): nothing sticks out of the screen except inside a
container that scrolls sideways, equation numbers never overlap their equations, images
fit, and the menu buttons open the navigation (screenshots ``_build/screenshots/phone_*.png``).
"""

import functools
import html.parser
import http.server
import json
import re
import threading
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from chromium import TIMEOUT_MS, VENDOR, cdn_file, require, require_chromium

from booktools.sphinxext.slides import SUFFIX as SLIDES  # the decks: tests of their own

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
STUDENT_HTML = ROOT / "_build" / "student" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
SKIP_DIRS = {"_static", "_sources", "_images", "_sphinx_design_static"}

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def requirements():
    require_chromium()
    require((VENDOR / ".installed").exists(),
            "local copies of the CDN assets are missing: run `make browser` (needs npm)")


def is_redirect(path):
    """Whether an HTML file is only a redirect stub (like the root index.html)."""
    return path.read_text(errors="ignore").lstrip().startswith('<meta http-equiv="Refresh"')


def site_pages(root=HTML):
    """Every HTML page of a built site, as paths relative to `root` without suffix.

    Redirect stubs are left out: the page navigates away while it is checked. The root
    redirect has a test of its own.
    """
    return sorted(p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.html")
                  if not SKIP_DIRS & set(p.relative_to(root).parts) and not is_redirect(p)
                  and not p.name.endswith(SLIDES))


def screenshot_pages():
    """The landing page and the first chapter of every part of the TOC."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [part["chapters"][0]["file"] for part in toc["parts"]]


@functools.cache
def anchors(path):
    """The ids a fragment can point to in the HTML file `path`."""
    return set(re.findall(r'\bid="([^"]+)"', path.read_text(errors="ignore")))


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_head(self):
        # Chromium asks the server's root for an icon when a page names none; the book's
        # site lives below its host's root (GitHub Pages), which is not the book's to fill
        if self.path == "/favicon.ico" and not Path(self.directory, "favicon.ico").exists():
            self.send_response(204)
            self.end_headers()
            return None
        return super().send_head()


@contextmanager
def serve(directory):
    """Serve `directory` on 127.0.0.1; yields its URL."""
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


# Session scope: a pytest worker keeps them while it takes tests of other modules too
# (the browser: tests/conftest.py).
@pytest.fixture(scope="session")
def server():
    if not (HTML / "index.html").exists():
        pytest.fail("_build/html is missing: build the book first (make book)")
    with serve(HTML) as url:
        yield url


@pytest.fixture(scope="session")
def offline(browser, server):
    with offline_context(browser, server) as found:
        yield found


@contextmanager
def offline_context(browser, server, allow=(), **options):
    """A browser context that sees only the local site (and the local CDN: chromium.py).

    Yields the context and the list of offline problems: requests to anywhere but `server`
    and the URL prefixes `allow`, or to a CDN file without its local copy (Chromium finds
    no other host; its failed request is reported too: see open_page). Listening to the
    requests, rather than routing them, keeps Chromium's cache on. `options` go to
    Playwright's ``new_context`` (default: a 1280 x 900 viewport).
    """
    problems = []

    def check(request):
        if not request.url.startswith((server, "data:", "blob:", *allow)):
            problem = cdn_file(request.url)[1]
            if problem:
                problems.append(problem)

    context = browser.new_context(**{"viewport": {"width": 1280, "height": 900}, **options})
    context.set_default_timeout(TIMEOUT_MS)
    context.on("request", check)
    # every page opens in the theme's default mode: the theme keeps a mode the switch chose
    # (a dark-mode check on another page of this context) in localStorage
    context.add_init_script("localStorage.removeItem('mode'); localStorage.removeItem('theme')")
    try:
        yield context, problems
    finally:
        context.close()


TABS = {}  # a browser context's one tab that open_page(..., tab=True) reuses


def open_page(offline, server, name, query="", tab=False):
    """Open page `name` and return it with the list of problems it reports.

    With `tab`, in the context's reused tab (opened the first time, and again once a test
    has closed it): a new tab is a new renderer process, which parses and compiles the
    scripts again (MathJax: a page with much math took about 5 CPU seconds in a new tab,
    3 in the reused one)."""
    context, problems = offline
    problems.clear()
    page = TABS.get(context) if tab else None
    if page is None or page.is_closed():
        page = context.new_page()
        page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"failed: {r.url} ({r.failure})"))
        if tab:
            TABS[context] = page
    page.goto(f"{server}{name}.html{query}", wait_until="load")
    return page, problems


# What the checks look for, each with its live selector and how to find it in a page's HTML
# file: where the file has it, the selector must find it in the browser, so that a selector
# gone stale cannot make the checks pass by finding nothing.
def _classes(*names):
    """Whether an element of the HTML has all the class names `names`."""
    return lambda text: any(set(names) <= set(c.split())
                            for c in re.findall(r'<\w+ class="([^"]*)"', text))


def _article(text):
    """The page's article (the theme's <article class="bd-article">), as HTML text."""
    start = text.find('<article class="bd-article"')
    return text[start:text.find("</article>", start)] if start >= 0 else ""


KINDS = {  # (the article is inside <main>)
    "math": ("main mjx-container", lambda text: _classes("math")(_article(text))),
    "images": ("img", lambda text: "<img " in text),
    "widgets": ("main .jupyter-widgets",
                lambda text: "application/vnd.jupyter.widget-view+json" in _article(text)),
    "animations": ("div.animation", _classes("animation")),
    "dropdowns": ("main div.admonition.dropdown, main details",
                  lambda text: _classes("admonition", "dropdown")(_article(text))
                  or "<details" in _article(text)),
    "links": ("a.reference.internal", _classes("reference", "internal")),
    "alt texts": ("article.bd-article img", lambda text: "<img " in _article(text)),
}


def expected_kinds(path):
    """The kinds of KINDS that the HTML file `path` holds."""
    text = path.read_text(errors="ignore")
    return {kind for kind, (_, found) in KINDS.items() if found(text)}


def unseen(page, path):
    """The kinds the HTML file has but the live selectors do not find on its page."""
    return [f"{kind}: the file has some, the selector {KINDS[kind][0]!r} finds none"
            for kind in sorted(expected_kinds(path))
            if page.locator(KINDS[kind][0]).count() == 0]


def typeset(page):
    """Wait for MathJax, if the page loads it, to finish typesetting; return what is wrong."""
    if page.locator("script[src*='mathjax']").count() == 0:
        raw = page.locator("main .math").count()
        return [f"{raw} math elements but MathJax is not loaded"] if raw else []
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    # a promise that never settles must fail the test, not hang it
    finished = page.evaluate("""ms => Promise.race([
        MathJax.startup.promise.then(() => true),
        new Promise(r => setTimeout(() => r(false), ms))])""", TIMEOUT_MS)
    if not finished:
        return [f"MathJax did not finish typesetting within {TIMEOUT_MS // 1000} s"]
    return page.evaluate(r"""() => {
        const problems = [];
        const errors = document.querySelectorAll('mjx-merror, [data-mjx-error]');
        for (const e of errors)
            problems.push('MathJax error: ' + (e.getAttribute('data-mjx-error') || e.textContent));
        const main = document.querySelector('main').cloneNode(true);
        const skip = 'pre, code, script, style, mjx-container, mjx-assistive-mml, textarea';
        main.querySelectorAll(skip).forEach(e => e.remove());
        const text = main.textContent;
        for (const raw of ['$$', '\\(', '\\)', '\\[', '\\begin{'])
            if (text.includes(raw)) {
                const at = text.indexOf(raw);
                const around = text.slice(Math.max(0, at - 40), at + 40);
                problems.push('untypeset math ' + JSON.stringify(around));
            }
        const math = document.querySelectorAll('main .math').length;
        const typeset = document.querySelectorAll('main .math mjx-container').length;
        if (typeset < math)
            problems.push(`${math - typeset} of ${math} .math elements not typeset`);
        return problems;
    }""")


def images(page):
    # wait for the images to settle (at most TIMEOUT_MS); any still missing are reported below
    page.evaluate("""ms => Promise.race([
        Promise.all([...document.images].map(img =>
            img.complete ? null : new Promise(r => { img.onload = img.onerror = r; }))),
        new Promise(r => setTimeout(r, ms))])""", TIMEOUT_MS)
    broken = page.evaluate("""() => [...document.images]
        .filter(img => !(img.complete && img.naturalWidth > 0)).map(img => img.src.slice(0, 80))""")
    return [f"image not loaded: {src}" for src in broken]


def widgets(page):
    """Embedded widget views render as visible widgets (the HTML manager replaces each view)."""
    views = page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count()
    if not views:
        return []
    page.wait_for_function(
        """n => document.querySelectorAll('.jupyter-widgets.widget-container, .jupyter-widgets'
              + '.widget-inline-hbox, .jupyter-widgets.widget-output').length > 0""", arg=views)
    return page.evaluate("""() => {
        const problems = [];
        const views = 'script[type="application/vnd.jupyter.widget-view+json"]';
        for (const s of document.querySelectorAll(views)) {
            const area = w => w.getBoundingClientRect().width * w.getBoundingClientRect().height;
            const shown = [...s.parentElement.querySelectorAll('.jupyter-widgets')]
                .filter(w => area(w) > 0);
            if (!shown.length)
                problems.push('widget view not rendered: ' + s.textContent.slice(0, 80));
            if (/Error displaying widget/.test(s.parentElement.textContent))
                problems.push('widget error: ' + s.parentElement.textContent.slice(0, 120));
        }
        return problems;
    }""")


def animations(page):
    """Each matplotlib JavaScript animation shows a new frame after Play is pressed."""
    problems = []
    for i in range(page.locator("div.animation").count()):
        anim = page.locator("div.animation").nth(i)
        img = anim.locator("img").first
        before = img.get_attribute("src")
        anim.locator("button[onclick*='play_animation']").click()
        try:
            page.wait_for_function("([el, src]) => el.src !== src",
                                   arg=[img.element_handle(), before], timeout=TIMEOUT_MS)
        except Exception:
            problems.append(f"animation {i} does not change frame when played")
        anim.locator("button[onclick*='pause_animation']").click()
    return problems


def dropdowns(page):
    """Every dropdown admonition (exercise solutions) and <details> block opens on click."""
    problems = []
    boxes = page.locator("main div.admonition.dropdown")
    for i in range(boxes.count()):
        box = boxes.nth(i)
        body = box.locator(":scope > :not(.admonition-title)").first
        if body.is_visible():
            problems.append(f"dropdown {i} is open before it is clicked")
        box.locator(".admonition-title").click()
        try:
            body.wait_for(state="visible", timeout=TIMEOUT_MS)
        except Exception:
            problems.append(f"dropdown {i} does not open: {box.inner_text()[:60]!r}")
    details = page.locator("main details")
    for i in range(details.count()):
        block = details.nth(i)
        block.locator(":scope > summary").click()
        if block.get_attribute("open") is None:
            problems.append(f"<details> {i} does not open")
    return problems


AXE = VENDOR / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


# axe's rules whose verdict on an element is how it looks (its colours against what is
# behind it, its size): most of axe's time on a page with much math (least_squares: 2.7 and
# 1.4 of 4.4 s)
LOOKS = ("color-contrast", "link-in-text-block")


def axe(page, name, context=None, skip=()):
    """axe-core's violations of impact serious or critical: page, rule and node, one a line
    (in the page, or in the part of it that axe's `context` names; the rules `skip` not
    run)."""
    # opening dropdowns at the end of their fade: half-faded text fails the contrast check
    # (every animation that ends is finished now: waiting for them can take without end, as
    # those of a part of the page the browser skips do not advance)
    page.evaluate("""() => document.getAnimations().forEach(a => {
        if (a.effect.getComputedTiming().endTime < Infinity) {
            try { a.finish(); } catch (e) {}
        }
    })""")
    page.add_script_tag(path=AXE)
    violations = page.evaluate("""([ms, context, skip]) => Promise.race([
        axe.run(context || document, {resultTypes: ['violations'], rules: Object.fromEntries(
            skip.map(rule => [rule, {enabled: false}]))}).then(r => r.violations),
        new Promise(r => setTimeout(() => r(null), ms))])""", [TIMEOUT_MS, context, list(skip)])
    if violations is None:
        return [f"{name}: axe did not finish within {TIMEOUT_MS // 1000} s"]
    return [f"{name}: {v['id']} ({v['impact']}): {node['target']} {node['html'][:100]!r}"
            f" - {v['help']}"
            for v in violations if v["impact"] in SERIOUS for node in v["nodes"]]


def alt_texts(page, name):
    """Every image of the article has alt text that says what it shows: three words or
    more, and no file name, extension or hash (Sphinx writes the file's path where alt
    text is missing). The theme's icons (Binder logo...) are outside the article."""
    bad = page.evaluate(r"""() => [...document.querySelectorAll('article.bd-article img')]
        .map(img => [img.src.slice(0, 200), img.getAttribute('alt')])
        .filter(([src, alt]) => {
            if (alt === null) return true;
            const text = alt.trim();
            const file = decodeURIComponent(src.split(/[?#]/)[0].split('/').pop());
            return text.split(/\s+/).length < 3 || /\.(png|jpe?g|gif|svg)\b/i.test(text)
                || /[0-9a-f]{16}/i.test(text)
                || (!src.startsWith('data:') && text.includes(file.replace(/\.\w+$/, '')));
        })""")
    return [f"{name}: image {src[-60:]!r} has alt text {alt!r}" for src, alt in bad]


def links(page, server, name):
    """Every link into the site points to an existing file and, with #anchor, an existing id."""
    problems = []
    hrefs = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
    for href in set(hrefs):
        if not href.startswith(server):
            continue
        parts = urlsplit(href)
        path = HTML / unquote(parts.path).lstrip("/")
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file():
            problems.append(f"broken link {href}")
        elif (parts.fragment and path.suffix == ".html"
              and unquote(parts.fragment) not in anchors(path)):
            problems.append(f"broken anchor {href}")
    return problems


@pytest.mark.parametrize("name", site_pages() if HTML.exists() else ["index"])
def test_page(offline, server, name):
    """One visit, every check of the page; on a numbered chapter its quizzes too (see
    quiz_checks and dark_quizzes)."""
    page, problems = open_page(offline, server, name, tab=True)
    try:
        found = typeset(page) + images(page) + widgets(page) + animations(page)
        found += unseen(page, HTML / f"{name}.html")
        if name in screenshot_pages():
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.evaluate("() => window.scrollTo(0, 0)")
            page.screenshot(path=SCREENSHOTS / (name.replace("/", "_") + ".png"))
        if name in numbered_chapters():
            found += quiz_checks(page, name) + dark_quizzes(page, name)
        found += dropdowns(page) + links(page, server, name)
        # with the dropdowns open (the quizzes' "Show the answer" too) and their feedback shown
        found += alt_texts(page, name) + axe(page, name)
        found += problems
    except BaseException:
        page.close()  # the next test opens a new tab
        raise
    assert found == [], "\n".join(found)


def test_root_redirects_to_the_landing_page(offline, server):
    page, problems = open_page(offline, server, "index")
    try:
        page.wait_for_url(f"{server}book/index.html", timeout=TIMEOUT_MS)
        assert page.locator("main h1").first.inner_text().startswith("Linear Classification")
    finally:
        page.close()
    assert problems == []


def test_the_site_has_every_kind_of_content():
    """The site has math, images, widgets, an animation, dropdowns and cross-references (so
    every check above is used; test_page shows that the browser finds them too)."""
    if not HTML.exists():
        pytest.fail("_build/html is missing: build the book first (make book)")
    found = set().union(*(expected_kinds(HTML / f"{name}.html") for name in site_pages()))
    assert found == set(KINDS), set(KINDS) - found


def test_screenshots_cover_every_part():
    """test_page takes a screenshot of the first page of every part: each is a page it opens."""
    if not HTML.exists():
        pytest.fail("_build/html is missing: build the book first (make book)")
    assert set(screenshot_pages()) <= set(site_pages()), set(screenshot_pages()) - set(site_pages())


def test_offline_but_for_the_site_and_the_local_cdn(offline, server):
    """A request to another host fails and is reported; a CDN file is answered from its
    local copy, and a version other than the copy's is reported."""
    local = json.loads((VENDOR / "mathjax" / "package.json").read_text())["version"]
    urls = ["https://example.org/"] + [
        f"https://cdn.jsdelivr.net/npm/mathjax@{version}/es5/tex-mml-chtml.js"
        for version in (local, local + "-other")]
    page, problems = open_page(offline, server, "book/index")
    try:
        statuses = page.evaluate("""([urls, ms]) => Promise.race([
            Promise.all(urls.map(u => fetch(u).then(r => r.status, () => 'failed'))),
            new Promise(r => setTimeout(() => r(`no answer within ${ms / 1000} s`), ms))])""",
                                 [urls, TIMEOUT_MS])
    finally:
        page.close()
    assert statuses == ["failed", 200, 200]
    assert f"blocked request to {urls[0]}" in problems
    assert f"{urls[2]} asks for mathjax@{local}-other, the local copy is {local}" in problems


def test_search_finds_perceptron(offline, server):
    page, problems = open_page(offline, server, "search", "?q=perceptron")
    try:
        # Sphinx shows the results one by one, then a summary "Search finished, found ...".
        summary = page.locator("#search-results .search-summary", has_text="found")
        summary.wait_for(timeout=TIMEOUT_MS)
        hrefs = [a.get_attribute("href")
                 for a in page.locator("#search-results ul.search li a").all()]
        found = {urlsplit(h).path.removesuffix(".html") for h in hrefs}
    finally:
        page.close()
    assert "book/binary_classification" in found, hrefs  # where the perceptron is introduced
    assert found <= set(site_pages()), found - set(site_pages())
    assert problems == []


# --- the student edition (make student-book): alt text and axe on every page ------------
class _Paths(html.parser.HTMLParser):
    """The elements of an HTML page, each as its path from the root: the tag, classes and
    inline style of it and of every element it is inside."""
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
            "source", "track", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.paths = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        node = (tag, " ".join(sorted((attrs.get("class") or "").split())),
                attrs.get("style") or "")
        self.paths.add((*self.stack, node))
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):  # close what the tag closes
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break


@functools.cache
def element_paths(path):
    """The element paths (`_Paths`) of the HTML file `path`."""
    parser = _Paths()
    parser.feed(path.read_text(errors="ignore"))
    return frozenset(parser.paths)


def new_looks(name):
    """The element paths of the student edition's page `name` that the teacher's page of
    the same name lacks. Where there are none, every element of the page sits where an
    element of the same tag, classes and inline style sits on the teacher's page, styled by
    the same stylesheets: the rules `LOOKS` judge it there (test_page), and the student's
    page is spared them."""
    teacher = HTML / f"{name}.html"
    if not teacher.exists():
        return {("no teacher page",)}
    return element_paths(STUDENT_HTML / f"{name}.html") - element_paths(teacher)


@pytest.fixture(scope="session")
def student_offline(browser):
    require((STUDENT_HTML / "index.html").exists(),
            "_build/student/html is missing: build the student edition (make student-book)")
    with serve(STUDENT_HTML) as url, offline_context(browser, url) as (context, problems):
        yield context, problems, url


def test_an_element_in_a_new_place_is_a_new_look(tmp_path):
    """`new_looks` compares whole paths: the same tag, classes and style inside another
    element, or with another inline style, is new; what the teacher's page shows
    elsewhere, or more often, is not."""
    teacher = tmp_path / "teacher.html"
    teacher.write_text('<div class="a b"><p>x<br>y</p><img src="i.png"></div><p>z</p>')
    for page, new in [('<div class="b a"><p>other words</p><p>again</p></div>', set()),
                      ('<div class="a"><p>x</p></div>', {(("div", "a", ""),),
                                                         (("div", "a", ""), ("p", "", ""))}),
                      ('<div class="a b"><img src="j.png" style="width: 9em"></div>',
                       {(("div", "a b", ""), ("img", "", "width: 9em"))}),
                      ('<section><p>z</p></section>', {(("section", "", ""),),
                                                       (("section", "", ""), ("p", "", ""))})]:
        student = tmp_path / "student.html"
        student.write_text(page)
        element_paths.cache_clear()
        assert element_paths(student) - element_paths(teacher) == new, page


@pytest.mark.parametrize("name", site_pages(STUDENT_HTML) if STUDENT_HTML.exists() else ["index"])
def test_student_page_accessible(student_offline, name):
    """Alt text and axe on the page; axe's rules of how elements look (`LOOKS`) only where
    the page has an element that the teacher's page does not have in the same place with
    the same classes and style (`new_looks`)."""
    context, problems, server = student_offline
    page, problems = open_page((context, problems), server, name, tab=True)
    try:
        found = typeset(page) + images(page) + widgets(page) + dropdowns(page)
        found += alt_texts(page, "student/" + name)
        found += axe(page, "student/" + name, skip=() if new_looks(name) else LOOKS)
        found += problems
    except BaseException:
        page.close()  # the next test opens a new tab
        raise
    assert found == [], "\n".join(found)


# --- keyboard --------------------------------------------------------------------------
def tab_to(page, target, start=None, presses=3):
    """Whether Tab, pressed from just before `start` (default: `target`), reaches `target`.

    The focus starts on a marker put in front of `start`, as if the reader had tabbed
    through the page up to there.
    """
    page.evaluate("""el => { const a = document.createElement('span');
        a.id = 'tab-start'; a.tabIndex = -1; el.before(a); a.focus(); }""",
                  (start or target).element_handle())
    reached = False
    for _ in range(presses):
        page.keyboard.press("Tab")
        if target.evaluate("el => el === document.activeElement"):
            reached = True
            break
    page.evaluate("() => document.getElementById('tab-start').remove()")
    return reached


def changes(page, locator, expression, action, timeout=TIMEOUT_MS):
    """Whether `expression` (a function of the element) changes after `action()`."""
    before = locator.evaluate(expression)
    action()
    try:
        page.wait_for_function(f"([el, before]) => ({expression})(el) !== before",
                               arg=[locator.element_handle(), before], timeout=timeout)
        return True
    except Exception:
        return False


def test_dropdowns_open_with_the_keyboard(offline, server):
    """A solution opens with Enter and closes with Space; a hidden code cell opens too."""
    found = []
    page, problems = open_page(offline, server, "book/perceptron")
    try:
        box = page.locator("main div.admonition.dropdown").first
        button = box.locator(".admonition-title button.toggle-button")
        body = box.locator(":scope > :not(.admonition-title)").first
        assert body.is_hidden()
        assert tab_to(page, button, start=box), "Tab does not reach the solution's toggle"
        page.keyboard.press("Enter")
        body.wait_for(state="visible", timeout=TIMEOUT_MS)
        page.keyboard.press("Space")
        body.wait_for(state="hidden", timeout=TIMEOUT_MS)
        found += problems
    finally:
        page.close()
    page, problems = open_page(offline, server, "book/binary_classification")
    try:
        details = page.locator("main details.above-input").first  # "Show code cell source"
        summary = details.locator(":scope > summary")
        assert tab_to(page, summary, start=details), "Tab does not reach the code's summary"
        page.keyboard.press("Enter")
        assert details.get_attribute("open") is not None
        found += problems
    finally:
        page.close()
    assert found == []


def test_animation_controls_work_with_the_keyboard(offline, server):
    page, problems = open_page(offline, server, "book/perceptron")
    try:
        anim = page.locator("div.animation").first
        frame = anim.locator("img").first
        src = "el => el.src"
        slider = anim.locator("input.anim-slider")
        assert tab_to(page, slider, start=anim), "Tab does not reach the frame slider"
        assert changes(page, frame, src, lambda: page.keyboard.press("ArrowRight")), \
            "ArrowRight on the slider does not show the next frame"
        nxt = anim.locator("button[onclick*='next_frame']")
        assert tab_to(page, nxt, start=nxt), "Tab does not reach Next frame"
        assert changes(page, frame, src, lambda: page.keyboard.press("Enter")), \
            "Enter on Next frame does nothing"
        play = anim.locator("button[onclick*='play_animation']")
        assert tab_to(page, play, start=play)
        assert changes(page, frame, src, lambda: page.keyboard.press("Space")), \
            "Space on Play does not play"
        pause = anim.locator("button[onclick*='pause_animation']")
        assert tab_to(page, pause, start=pause)
        page.keyboard.press("Enter")
    finally:
        page.close()
    assert problems == []


def test_widget_sliders_work_with_the_keyboard(offline, server):
    """On the website a widget is its static fallback: the slider moves (its value
    changes) though the figure cannot be recomputed without a kernel."""
    page, problems = open_page(offline, server, "book/troubleshooting")
    try:
        assert widgets(page) == []
        slider = page.locator("main .widget-slider").first
        handle = slider.locator('[role="slider"]')
        assert tab_to(page, handle, start=slider), "Tab does not reach the widget's slider"
        assert handle.get_attribute("aria-label") == "angle"
        value = "el => el.getAttribute('aria-valuenow')"
        assert changes(page, handle, value, lambda: page.keyboard.press("ArrowRight")), \
            "ArrowRight does not move the slider"
    finally:
        page.close()
    assert problems == []


# --- dark mode -------------------------------------------------------------------------
DARK_PAGES = ["book/linear_discriminants", "book/perceptron"]  # plots, regions, animation


def luminance(png):
    """Mean luminance (0 to 1) of a screenshot's margin: the ring of pixels 4 % in from
    its edges, where a figure has its background (a transparent one shows the page)."""
    import io

    import matplotlib.pyplot as plt
    import numpy as np

    rgb = plt.imread(io.BytesIO(png))[..., :3]
    dy, dx = (int(0.04 * n) for n in rgb.shape[:2])
    inner = rgb[dy:rgb.shape[0] - dy, dx:rgb.shape[1] - dx]
    ring = np.concatenate([inner[0], inner[-1], inner[:, 0], inner[:, -1]])
    return float((ring @ np.array([0.2126, 0.7152, 0.0722])).mean())


@pytest.mark.parametrize("name", DARK_PAGES)
def test_figures_stay_readable_in_dark_mode(offline, server, name):
    """The theme's switch turns dark mode on; every figure keeps an opaque light background:
    no transparent pixel in the PNG, and its edges are light on the dark page."""
    page, problems = open_page(offline, server, name)
    try:
        switch = page.locator(".theme-switch-button").first
        for _ in range(3):  # the switch cycles through its modes
            if page.evaluate("() => document.documentElement.dataset.theme") == "dark":
                break
            switch.click()
        assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
        images(page)
        figures = page.locator("main .cell_output img:visible")
        assert figures.count() >= 2
        transparent = page.evaluate("""() => [...document.querySelectorAll(
                'main .cell_output img')].map(img => {
            const c = document.createElement('canvas');
            c.width = img.naturalWidth; c.height = img.naturalHeight;
            const g = c.getContext('2d');
            g.drawImage(img, 0, 0);
            const a = g.getImageData(0, 0, c.width, c.height).data;
            let n = 0;
            for (let i = 3; i < a.length; i += 4) if (a[i] < 255) n++;
            return n;
        })""")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        stem = "dark_" + name.replace("/", "_")
        figures.first.scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / f"{stem}.png")
        edges = [luminance(figures.nth(i).screenshot(path=SCREENSHOTS / f"{stem}_{i}.png"))
                 for i in range(figures.count())]
        background = page.evaluate("""() => getComputedStyle(document.body).backgroundColor""")
        found = [f"image {i} of the page: {n} transparent pixels"
                 for i, n in enumerate(transparent) if n]
        found += [f"figure {i}: margin dark in dark mode (luminance {v:.2f})"
                  for i, v in enumerate(edges) if v < 0.5]
        found += axe(page, name + " (dark)") + problems
    finally:
        page.close()
    rgb = [int(v) / 255 for v in re.findall(r"\d+", background)[:3]]
    assert 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] < 0.2, background  # dark page
    assert found == [], "\n".join(found)


# --- a phone-sized screen ----------------------------------------------------------------
# A phone's screen in CSS pixels (an iPhone 12 to 15 is 390 x 844), with touch, as Chromium's
# mobile emulation: a page with content wider than the screen would widen its layout viewport.
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2,
         "is_mobile": True, "has_touch": True}
# Chapters whose phone screenshots go to _build/screenshots/phone_*.png, each scrolled to
# what a narrow screen strains: long labelled equations, an animation, code and a widget.
PHONE_SHOTS = {
    "book/statmech": "#equation-replica-trick",
    "book/perceptron": "main div.animation",
    "book/troubleshooting": "main .jupyter-widgets",
}

PHONE_LAYOUT = r"""W => {
    const problems = [], page = document.documentElement.scrollWidth;
    const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
        + [...el.classList].slice(0, 3).map(c => '.' + c).join('');
    const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    if (window.innerWidth !== W || page > W)  // the browser widens the page to fit it
        problems.push(`the page is ${Math.max(page, window.innerWidth)} px wide on a ${W} px`
                      + ' screen: it scrolls sideways');
    // Nothing sticks out of the screen, except inside a container that scrolls sideways
    // (display math, tables, code, outputs): that container must fit itself. Hidden
    // elements count too (a heading's "#" link widens the page), but not those of a hidden
    // fixed panel (the sidebars wait off the screen).
    const fixed = el => getComputedStyle(el).position === 'fixed'
        || (el.parentElement && el.parentElement !== document.body && fixed(el.parentElement));
    const out = new Set();
    for (const el of document.body.querySelectorAll('*')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0 || (r.left >= -1 && r.right <= W + 1)) continue;
        if (!el.checkVisibility({visibilityProperty: true}) && fixed(el)) continue;
        if (el.closest('mjx-assistive-mml')) continue;  // MathJax's copy for screen readers
        let up = el.parentElement;
        while (up && up !== document.body && !scrolls(up) && !out.has(up)) up = up.parentElement;
        if (up && up !== document.body) continue;  // in a scrolling box, or inside one reported
        out.add(el);
        const text = JSON.stringify(el.textContent.trim().slice(0, 50));
        problems.push(`${name(el)} spans ${Math.round(r.left)} to ${Math.round(r.right)} px`
                      + ` of a ${W} px screen: ${text}`);
    }
    // A labelled equation and its number never overlap, however wide the equation is
    // (its rendered box counts in full, also the part scrolled out of its container).
    let labelled = 0;
    for (const number of document.querySelectorAll('div.math > span.eqno')) {
        const math = number.parentElement.querySelector('mjx-container > mjx-math');
        if (!math) continue;
        labelled++;
        const a = number.getBoundingClientRect(), b = math.getBoundingClientRect();
        if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
            problems.push(`equation ${number.textContent.replace('#', '').trim()} overlaps its`
                          + ` number: math at ${Math.round(b.left)} to ${Math.round(b.right)} px,`
                          + ` number at ${Math.round(a.left)} to ${Math.round(a.right)} px`);
    }
    // Inline math scrolls only where its formula is wider than the line (else a browser
    // that shows scrollbars would draw one under it).
    for (const box of document.querySelectorAll('span.math')) {
        const math = box.querySelector('mjx-math');
        if (math && box.scrollWidth > box.clientWidth + 1
                && math.getBoundingClientRect().width <= box.clientWidth + 1)
            problems.push(`inline math ${JSON.stringify(box.textContent.slice(0, 40))} scrolls`
                          + ` ${box.scrollWidth - box.clientWidth} px though it fits`);
    }
    // Images scale down to the screen (also those inside a scrolling box).
    const shown = [...document.images].filter(img => img.checkVisibility({visibilityProperty: true})
        && img.getBoundingClientRect().width > 0);
    for (const img of shown) {
        const r = img.getBoundingClientRect();
        if (r.width > W)
            problems.push(`image ${img.src.slice(-60)} is ${Math.round(r.width)} px wide on a`
                          + ` ${W} px screen`);
    }
    return {problems, labelled, images: shown.length};
}"""


@pytest.fixture(scope="session")
def phone(browser, server):
    """One page on a phone-sized screen, reused by every phone test; with its problems."""
    with offline_context(browser, server, **PHONE) as (context, problems):
        page = context.new_page()
        page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"failed: {r.url} ({r.failure})"))
        yield page, problems


def navigation_opens(page, screenshot=None):
    """The navbar's menu button opens the site navigation, whose links fit the screen, and
    Escape closes it again. With `screenshot`, a path: a screenshot of the open navigation."""
    toggle = page.locator("button.primary-toggle:visible").first
    if toggle.count() == 0:
        return ["no visible button opens the site navigation"]
    toggle.click()
    dialog = page.locator("dialog#pst-primary-sidebar-modal")
    try:
        page.wait_for_function("() => document.querySelector('#pst-primary-sidebar-modal').open",
                               timeout=TIMEOUT_MS)
    except Exception:
        return ["the navigation button does not open the site navigation"]
    chapters = dialog.locator("nav a.reference.internal:visible")
    problems = []
    if chapters.count() < 10:
        problems.append(f"the open navigation shows {chapters.count()} chapter links")
    wide = dialog.evaluate("""d => [...d.querySelectorAll('a')].filter(a => a.checkVisibility())
        .map(a => a.getBoundingClientRect()).filter(r => r.left < -1 || r.right > innerWidth + 1)
        .length""")
    if wide:
        problems.append(f"{wide} links of the open navigation stick out of the screen")
    if screenshot:
        page.screenshot(path=screenshot)
    page.keyboard.press("Escape")
    if dialog.evaluate("d => d.open"):
        problems.append("Escape does not close the navigation")
    return problems


@pytest.mark.parametrize("name", site_pages() if HTML.exists() else ["index"])
def test_phone_page(phone, server, name):
    """At 390 px: the page does not scroll sideways, no element sticks out of the screen
    except inside a sideways-scrolling container (equations, tables, code, outputs),
    equation numbers never overlap their equations, images fit, and the menu button opens
    the site navigation. Screenshots of PHONE_SHOTS: ``_build/screenshots/phone_*.png``."""
    page, problems = phone
    problems.clear()
    page.goto(f"{server}{name}.html", wait_until="load")
    found = typeset(page) + images(page) + widgets(page)
    layout = page.evaluate(PHONE_LAYOUT, PHONE["viewport"]["width"])
    found += layout["problems"]
    text = (HTML / f"{name}.html").read_text(errors="ignore")
    if 'class="eqno"' in _article(text) and not layout["labelled"]:
        found.append("the file has labelled equations, the check finds none")
    if "<img " in _article(text) and not layout["images"]:
        found.append("the file has images, the check finds none shown")
    shot = None
    if name in PHONE_SHOTS:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator(PHONE_SHOTS[name]).first.evaluate("el => el.scrollIntoView()")
        page.evaluate("() => window.scrollBy(0, -80)")  # below the sticky header
        shot = SCREENSHOTS / f"phone_{name.replace('/', '_')}.png"
        page.screenshot(path=shot)
        shot = shot.with_name(shot.stem + "_navigation.png")
    found += navigation_opens(page, shot) + problems
    assert found == [], "\n".join(found)


def test_phone_screenshots_are_pages():
    """The phone screenshots are of pages that test_phone_page opens."""
    if not HTML.exists():
        pytest.fail("_build/html is missing: build the book first (make book)")
    assert set(PHONE_SHOTS) <= set(site_pages()), set(PHONE_SHOTS) - set(site_pages())


def test_phone_navigation_leads_to_chapters(phone, server):
    """On a phone the menu lists the chapters and a tap opens one; the page's own table
    of contents ("On this page") opens too and leads to a section."""
    page, problems = phone
    problems.clear()
    page.goto(f"{server}book/statmech.html", wait_until="load")
    page.locator("button.primary-toggle:visible").first.click()
    link = page.locator("#pst-primary-sidebar-modal a.reference.internal",
                        has_text="The perceptron").first
    link.click()
    page.wait_for_url(f"{server}book/perceptron.html", timeout=TIMEOUT_MS)
    assert page.locator("main h1").first.inner_text().startswith("The perceptron")
    page.locator("button.secondary-toggle:visible").first.click()
    section = page.locator("#pst-secondary-sidebar-modal a.nav-link:visible").nth(1)
    section.wait_for(timeout=TIMEOUT_MS)
    target = section.get_attribute("href")
    section.click()
    page.wait_for_function("h => location.hash === h", arg=target, timeout=TIMEOUT_MS)
    assert not page.evaluate("() => document.querySelector('#pst-secondary-sidebar-modal').open")
    assert problems == []


# --- The chapters' slides (booktools.sphinxext.slides) ------------------------------------
DECKS = ["book/perceptron", "book/svm", "book/minover"]


def marked(chapter):
    """How many blocks the chapter's source marks for its slides."""
    text = (ROOT / f"{chapter}.md").read_text()
    return (len(re.findall(r"^:class:.*\bslide\b", text, re.M))
            + len(re.findall(r"^tags:\s*\[[^\]]*\bslide\b", text, re.M)))


def test_every_marking_chapter_has_its_deck():
    """A chapter that marks slides has a deck with a slide per mark, and its page links it."""
    chapters = [f"book/{p.stem}" for p in sorted((ROOT / "book").glob("*.md"))
                if marked(f"book/{p.stem}")]
    assert set(DECKS) <= set(chapters)
    for chapter in chapters:
        deck = HTML / f"{chapter}{SLIDES}"
        assert deck.exists(), deck
        text = deck.read_text()
        sections = re.findall(r"<section\b", text)
        assert 'href="#' not in text, f"{deck.name}: a link to an anchor the deck does not hold"
        assert len(sections) == 1 + marked(chapter), (chapter, len(sections), marked(chapter))
        page = (HTML / f"{chapter}.html").read_text()
        assert f'href="{deck.name}"' in page, f"{chapter}.html does not link its deck"


@pytest.mark.parametrize("name", DECKS)
def test_slides(offline, server, name):
    """Page through a deck with the keyboard: every slide typeset, its images loaded, and
    no taller than the slide (reveal.js scales a slide to the screen, not its content)."""
    page, problems = open_page(offline, server, name + SLIDES.removesuffix(".html"))
    found = []
    try:
        page.wait_for_function("() => document.body.dataset.typeset === 'done'")
        total = page.evaluate("() => Reveal.getTotalSlides()")
        assert total == 1 + marked(name)
        height = page.evaluate("() => Reveal.getConfig().height")
        for i in range(total):
            state = page.evaluate("""() => {
                const s = Reveal.getCurrentSlide();
                const all = selector => [...s.querySelectorAll(selector)];
                return {index: Reveal.getIndices().h,
                        bottom: Math.max(0, ...[...s.children].map(
                            c => c.offsetTop + c.offsetHeight)),
                        errors: all('mjx-merror, [data-mjx-error]').length,
                        raw: all('.math').filter(m => !m.querySelector('mjx-container')).length,
                        broken: all('img').filter(
                            img => !(img.complete && img.naturalWidth > 0)).length};
            }""")
            assert state["index"] == i, f"the arrow key did not lead to slide {i}"
            if state["bottom"] > height:
                found.append(f"slide {i}: {state['bottom']} px of content on a {height} px slide")
            if state["errors"] or state["raw"]:
                found.append(f"slide {i}: {state['errors']} math errors, {state['raw']} untypeset")
            if state["broken"]:
                found.append(f"slide {i}: {state['broken']} images not loaded")
            if i == 1 or (i == total - 1 and name == DECKS[0]):
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=SCREENSHOTS / f"slides_{name.replace('/', '_')}_{i}.png")
            page.keyboard.press("ArrowRight")
        assert page.evaluate("() => Reveal.isLastSlide()")
        found += problems
    finally:
        page.close()
    assert found == [], "\n".join(found)


# --- concept quizzes (lincls.quiz) --------------------------------------------------------
def numbered_chapters():
    """The chapters of the TOC's numbered parts: each one ends its sections with quizzes."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [c["file"] for part in toc["parts"] if part.get("numbered") for c in part["chapters"]]


def quizzes(path):
    """The answer keys of the quizzes in the HTML file `path`, one list per quiz."""
    return [json.loads(key.replace("<\\/", "</")) for key in re.findall(
        r'<script type="application/json" class="lincls-quiz-key">(.*?)</script>',
        path.read_text(errors="ignore"), re.S)]


def quiz_features(path):
    """What axe's verdict on the quizzes of the HTML file `path` can depend on: the kinds of
    their questions and the inline markup of their text (math, code). One renderer
    (lincls.quiz) writes every quiz's markup and one stylesheet styles it; the words differ."""
    page = path.read_text(errors="ignore")
    found = {q["kind"] for keys in quizzes(path) for q in keys}
    for quiz in re.findall(r'<div class="lincls-quiz .*?class="lincls-quiz-key"', page, re.S):
        found |= {name for name, mark in [("math", 'class="math'), ("code", "<code>")]
                  if mark in quiz}
    return found


@functools.cache
def axe_chapters():
    """Chapters whose quizzes show, together, every feature (`quiz_features`) that any
    chapter's quizzes show, picked greedily: test_page runs axe on theirs in dark mode."""
    left = {name: quiz_features(HTML / f"{name}.html") for name in numbered_chapters()}
    wanted, picked = set().union(*left.values()), []
    while wanted:
        name = max(left, key=lambda n: len(left[n] & wanted))
        picked.append(name)
        wanted -= left.pop(name)
    return picked


def test_every_chapter_has_quizzes_of_every_kind():
    """At least three questions a chapter, among them each kind, and no other page has one."""
    chapters = numbered_chapters()
    for name in site_pages():
        found = [q for keys in quizzes(HTML / f"{name}.html") for q in keys]
        if name not in chapters:
            assert found == [], f"{name} is not a numbered chapter but has a quiz"
            continue
        kinds = {q["kind"] for q in found}
        assert len(found) >= 3 and kinds == {"choice", "many", "number"}, (name, len(found), kinds)


QUIZ_FOCUS = "() => document.activeElement && document.activeElement.className"


def answer_and_check(page, question, key, answer):
    """Answer `question` with the keyboard only, then Tab to Check and press Enter; return
    the feedback's text. `answer`: an option's index (choice), a list of booleans (many), or
    the text to type (number)."""
    inputs = question.locator("fieldset input")
    if key["kind"] == "number":
        inputs.first.focus()
        page.keyboard.press("Control+A")
        page.keyboard.type(answer)
    elif key["kind"] == "choice":
        inputs.first.focus()
        page.keyboard.press("Space")  # the first option; each arrow key selects the next
        for _ in range(answer):
            page.keyboard.press("ArrowDown")
        assert inputs.nth(answer).is_checked()
    else:
        for i, want in enumerate(answer):
            inputs.nth(i).focus()
            if inputs.nth(i).is_checked() != want:
                page.keyboard.press("Space")
            assert inputs.nth(i).is_checked() == want
    page.keyboard.press("Tab")
    assert page.evaluate(QUIZ_FOCUS) == "lincls-quiz-check", "Tab does not lead to Check"
    page.keyboard.press("Enter")
    return " ".join(question.locator(".lincls-quiz-feedback").inner_text().split())


# Answers set in the page (not typed): [block, question, kind, [[answer, start, item], …]]
# -> [[the feedback, the feedback item expected], …], whitespace collapsed as feedback_of does
CHECK_ANSWERS = """([b, i, kind, tries]) => {
  const q = document.querySelectorAll(".lincls-quiz")[b]
    .querySelector(`.lincls-quiz-q[data-index="${i}"]`);
  const inputs = q.querySelectorAll("fieldset input");
  const text = (el) => el.innerText.split(/\\s+/).join(" ").trim();
  return tries.map(([answer, start, item]) => {
    if (kind === "number") inputs[0].value = answer;
    else if (kind === "choice") inputs[answer].checked = true;  // a radio: the others clear
    else answer.forEach((want, j) => { inputs[j].checked = want; });
    q.querySelector(".lincls-quiz-check").click();
    return [text(q.querySelector(".lincls-quiz-feedback")),
            item === null ? "Enter a number" : text(q.querySelector(`li[data-fb="${item}"]`))];
  });
}"""


def feedback_of(question, item):
    return " ".join(question.locator(f'li[data-fb="{item}"]').inner_text().split())


def far_from(key):
    """A number that is neither the answer nor a trap."""
    values = [key["answer"]] + [value for value, _ in key["traps"]]
    return repr(2 * max(abs(v) for v in values) + 10 * key["tol"] + 1)


def quiz_checks(page, name):
    """Every question of the chapter answered wrong (every wrong option, every trap, a
    number far off, no number) and right: the feedback says whether it is right and shows
    the page's explanation of that very answer. The first answer to each question is given
    with the keyboard (Tab to Check, Enter), the others are set in the page and checked
    with one call. The feedback stays shown, for test_page's axe; what is wrong, a line
    each."""
    found = []
    blocks, keys = page.locator(".lincls-quiz"), quizzes(HTML / f"{name}.html")
    if blocks.count() != len(keys):
        return [f"{name}: {blocks.count()} quizzes on the page, {len(keys)} in its file"]
    for b, block_keys in enumerate(keys):
        for i, key in enumerate(block_keys):
            q = blocks.nth(b).locator(f'.lincls-quiz-q[data-index="{i}"]')
            where = f"{name}, quiz {b + 1}, question {i + 1}"
            tries = []  # (answer, expected start, feedback item)
            if key["kind"] == "choice":
                tries = [(j, "Correct." if right else "Not yet.", str(j))
                         for j, right in enumerate(key["correct"])]
            elif key["kind"] == "many":
                tries = [([c != (j == k) for k, c in enumerate(key["correct"])],
                          "Not yet.", str(j)) for j in range(len(key["correct"]))]
                tries.append((key["correct"], "Correct.", "0"))
            else:
                tries = [(repr(v), "Not yet.", f"trap{j}") for j, (v, _) in
                         enumerate(key["traps"])]
                tries += [(far_from(key), "Not yet.", "wrong"), ("not a number", "", None),
                          (repr(key["answer"]), "Correct.", "right")]
                if "decimals" in key:  # the answer as the question asks for it
                    rounded = f"{key['answer']:.{key['decimals']}f}".replace("-", "\u2212")
                    tries.append((rounded, "Correct.", "right"))
            # the first answer with the keyboard; the others set in the page at once
            answer, _, item = tries[0]
            seen = [(answer_and_check(page, q, key, answer),
                     feedback_of(q, item) if item else "Enter a number")]
            seen += page.evaluate(CHECK_ANSWERS, [b, i, key["kind"], tries[1:]])
            found += [f"{where}: answered {answer!r}, the feedback is {said!r}; "
                      f"expected {start!r} and {want!r}"
                      for (answer, start, _), (said, want) in zip(tries, seen, strict=True)
                      if not said.startswith(start) or want not in said]
    return found


def switch_theme(page, theme):
    """Press the theme's switch (it cycles through its modes) until the page is `theme`."""
    for _ in range(3):
        if page.evaluate("() => document.documentElement.dataset.theme") == theme:
            return True
        page.locator(".theme-switch-button").first.click()
    return page.evaluate("() => document.documentElement.dataset.theme") == theme


def dark_quizzes(page, name):
    """On the chapters of `axe_chapters` (and the screenshot's, the third numbered chapter):
    axe on the quizzes, their feedback shown, in the theme's dark mode (test_page's axe sees
    them in light mode); the screenshot ``_build/screenshots/quiz_dark.png``. The page is
    light again at the end."""
    screenshot = name == numbered_chapters()[2]
    if name not in axe_chapters() and not screenshot:
        return []
    if not switch_theme(page, "dark"):
        return [f"{name}: the theme's switch does not reach dark mode"]
    found = axe(page, name + " (quizzes, dark)", {"include": [".lincls-quiz"]})
    if screenshot:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        blocks = page.locator(".lincls-quiz")
        blocks.first.scroll_into_view_if_needed()
        blocks.first.screenshot(path=SCREENSHOTS / "quiz_dark.png")
    if not switch_theme(page, "light"):
        found.append(f"{name}: the theme's switch does not come back to light mode")
    return found
