"""The Binder path: every chapter and homework, opened from its launch button, reads well.

A local JupyterLab (from this environment, on 127.0.0.1, with throw-away Jupyter config,
data, runtime and settings directories) gets exactly the settings that ``postBuild``
writes on Binder: the test runs ``postBuild`` itself. For every page of ``_toc.yml`` that
is a notebook (chapters and homework), Chromium opens the URL path the launch button on the
page's built HTML produces, ``lab/tree/book/<page>``, and checks that it opens as a
notebook with its cells, with no dialog over it, runs all cells (Run > Run All Cells),
and then shows:

- no error output (also none from an inline expression);
- no raw MyST: jupyterlab-myst renders directives and roles, so the rendered markdown
  (code and preformatted text aside) holds no directive option line (``:label:``),
  fence (```` ```{ ````, ``:::{``) or role (``{eq}`...```);
- no math error: KaTeX marks an undefined macro or a parse error (``.katex-error``,
  title "Undefined control sequence"); there must be none;
- no placeholder number: every ``{eval}`` expression shows its value, not its source;
- nothing unresolved: jupyterlab-myst marks a citation or cross-reference it cannot
  resolve with a title ("Citation Not Found", "Cross Reference Not Found"); there must be
  none (``postBuild`` puts the website's resolved text in place of the roles, see
  ``tools/booktools/sphinxext/xrefs.py``), and a citation links its entry in the
  notebook's references;
- the same prose numbers as the website: JupyterLab's kernels run in the portability
  layer's third environment (another OpenBLAS kernel, two BLAS threads, numba's generic
  CPU: ``tests/test_portability.py``), and every ``{eval}`` of a chapter must show what
  the build's run shows (declared timings aside), as that layer compares its other two.

Its kernels are forked from a warm process, as the build's are (``booktools.labkernels``;
on Binder each starts from nothing): about two CPU seconds of imports less per page.

JupyterLab boots once per pytest worker (about 5 s): the worker's first page is opened
by loading its launch URL; each later one in the same JupyterLab by the command that URL
runs at start-up, once the page before it is closed and its kernel shut down (the main
area is empty, no session is left). Either way JupyterLab must then show the launch URL.

A screenshot of each page, at its top, (with numbers in prose) at its first number and
(with citations) at its first citation, goes to ``_build/screenshots/lab_<page>*.png``.
"""

import html
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote

import jupytext
import psutil
import pytest
import test_portability as portability
import yaml
from chromium import TIMEOUT_MS, require_chromium
from test_warm_kernels import is_warm

from booktools.kernels import STARTUP_TIMEOUT
from booktools.sphinxext.pdf import settled

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
ERRORS = ", ".join(f'{PANEL} .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.{m}"]'
                   for m in ("error", "stderr"))
HTML = ROOT / "_build" / "html"
OUTPUT_ASSETS = ("https://maxcdn.bootstrapcdn.com/font-awesome/", "https://cdn.jsdelivr.net/npm/")
SCREENSHOTS = ROOT / "_build" / "screenshots"
RUN_TIMEOUT_MS = int(os.environ.get("LAB_RUN_TIMEOUT_MS", 300_000))  # all cells of a page
DIALOGS = ".jp-Dialog, .Toastify__toast, .jp-Notification-Toast"
# What jupyterlab-myst renders (markdown cells), with code and literal blocks left out:
# raw MyST there means jupyterlab-myst did not understand it.
RENDERED_TEXT = """panel => [...document.querySelectorAll(
    panel + ' .jp-MarkdownCell .jp-RenderedMarkdown, ' + panel + ' .jp-MarkdownCell .myst')]
    .map(node => { const copy = node.cloneNode(true);
                   copy.querySelectorAll('pre, code, .katex').forEach(c => c.remove());
                   return copy.innerText; })"""
RAW_MYST = re.compile(r"(?:^|\s):[a-z][\w-]*:(?=\s|$)|```\{|:::\{|\{[a-z][\w:-]*\}`", re.M)
MATH_ERRORS = (f'{PANEL} .katex-error, {PANEL} [title*="Undefined control sequence"], '
               f'{PANEL} [title*="ParseError"]')
# an {eval} role shows its source in a <code> until its value is there; failed: stderr span
PLACEHOLDERS = r"""panel => [...document.querySelectorAll(panel + ' .jp-MarkdownCell code')]
    .map(c => c.textContent).filter(t => /prose\[/.test(t))"""
EXPRESSION_ERRORS = f'{PANEL} .jp-MarkdownCell [data-mime-type="application/vnd.jupyter.stderr"]'
# what jupyterlab-myst marks unresolved (its warning spans carry the reason as their title)
UNRESOLVED = r"""panel => [...document.querySelectorAll(panel + ' .jp-MarkdownCell [title]')]
    .filter(e => /not found|unknown|could not|unresolved/i.test(e.title))
    .map(e => e.title + ': ' + e.textContent.slice(0, 100))"""
CITATIONS = f'{PANEL} .jp-MarkdownCell a[href^="#cite-"]'
# what jupyterlab-myst keeps of each markdown cell's inline expressions once it evaluated
# them: [{expression, result}], result as the kernel replied (status, data, metadata)
USER_EXPRESSIONS = """() => [...jupyterapp.shell.widgets('main')][0].content.widgets
    .filter(cell => cell.model.type === 'markdown')
    .map(cell => cell.model.getMetadata('user_expressions') || [])"""

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def requirements():
    require_chromium()


def cell_counts(path):
    """How many cells of each type the notebook `path` (.ipynb or MyST .md) has."""
    return Counter(c.cell_type for c in jupytext.read(path).cells)


def is_notebook(path):
    """A page that is a notebook: an .ipynb, or a MyST Markdown file with a jupytext header."""
    return path.suffix == ".ipynb" or path.read_text().startswith("---\njupytext:")


def chapters():
    """Every page of the TOC that is a notebook: the chapters and the homework."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    found = []
    for part in toc["parts"]:
        for entry in part["chapters"]:
            source = next(p for p in ROOT.glob(entry["file"] + ".*")
                          if p.suffix in (".md", ".ipynb"))
            if is_notebook(source):
                found.append(source.relative_to(ROOT).as_posix())
    return found


def server_url(runtime, pid):
    """The URL of the Jupyter server ``pid``, from the file it writes in its runtime
    directory once it listens (ValueError until then)."""
    info = runtime / f"jpserver-{pid}.json"
    try:
        return f"http://127.0.0.1:{json.loads(info.read_text())['port']}/"
    except (FileNotFoundError, json.JSONDecodeError, KeyError) as exc:
        raise ValueError(f"{info}: not written yet") from exc


@pytest.fixture(scope="session")
def lab_environment(tmp_path_factory):
    """The portability layer's third environment (an Env), for JupyterLab."""
    return portability.third_environment(tmp_path_factory.mktemp("third"))


@pytest.fixture(scope="session")  # a pytest worker keeps it while it takes other tests too
def lab(tmp_path_factory, lab_environment):
    """A JupyterLab server as on Binder, its kernels in the third environment; yields (base
    URL, token); stopped even on failure."""
    home = tmp_path_factory.mktemp("jupyter")
    env = dict(lab_environment.vars, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
               JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    # The server works on a copy of book/, as Binder works on a clone: postBuild rewrites
    # the chapters' roles there, and JupyterLab saves notebooks it runs (autosave); the
    # repository's chapters must stay untouched.
    root = home / "repo"
    shutil.copytree(ROOT / "book", root / "book", ignore=shutil.ignore_patterns("_build"))
    for name in ("jupytext.toml", "postBuild"):
        shutil.copy(ROOT / name, root)
    subprocess.run(["bash", str(root / "postBuild")], env=env, check=True, timeout=120)
    overrides = home / "config" / "labconfig" / "default_setting_overrides.json"
    viewers = json.loads(overrides.read_text())["@jupyterlab/docmanager-extension:plugin"]
    assert viewers["defaultViewers"] == {"markdown": "Jupytext Notebook",
                                         "myst": "Jupytext Notebook"}
    notifications = json.loads(overrides.read_text())["@jupyterlab/apputils-extension:notification"]
    assert notifications == {"fetchNews": "false", "checkForUpdates": False}

    with jupyter_server("jupyter-lab", home, root, env, [
            # offline: no news, no update checks, no extension manager queries to PyPI
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            # window.jupyterapp: the test opens and closes pages with JupyterLab's commands
            "--LabApp.expose_app_in_browser=True",
            # kernels forked from a warm process (the build's way), where Binder starts each
            # from nothing: what a chapter shows is the same (tests/test_warm_kernels.py)
            "--AsyncMappingKernelManager.kernel_manager_class="
            "booktools.labkernels.WarmServerKernelManager"]) as found:
        yield found


@contextmanager
def jupyter_server(program, home, root, env, options=()):
    """Start ``program`` (jupyter-lab or jupyter-server) on 127.0.0.1 with a fresh token,
    wait until it answers, yield (base URL, token); stop it and its kernels at the end.
    Its log is ``home/<program>.log``."""
    token = secrets.token_hex(16)
    log_path = home / f"{program}.log"
    log = open(log_path, "w", buffering=1)
    server = subprocess.Popen(  # port 0: the server takes a free port, and says which
        [str(BIN / program), "--no-browser", "--ip=127.0.0.1", "--port=0",
         f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={token}", *options]
        + (["--allow-root"] if os.geteuid() == 0 else []),
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        # until it answers: seconds, but a minute and more on two cores busy with other
        # tests (issue 43); it names its port in its runtime directory once it listens.
        # The bound is every kernel client's (booktools.kernels.STARTUP_TIMEOUT)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            try:
                base = server_url(home / "runtime", server.pid)
                urllib.request.urlopen(f"{base}api/status?token={token}", timeout=5)
                break
            except (OSError, ValueError):
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"{program} did not start:\n{log_path.read_text()[-3000:]}")
                time.sleep(0.5)
        yield base, token
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server stops its kernels
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
        log.close()


@pytest.fixture(scope="session")
def lab_context(browser):
    """One browser context for the chapters: JupyterLab's scripts, once loaded, come from
    its cache (a chapter that fails takes its page with it; the next boots a new one)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    yield context
    context.close()


def api(base, token, path, method="GET"):
    request = urllib.request.Request(f"{base}api/{path}", method=method,
                                     headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read()
    return json.loads(body) if body else None


def wait_for_idle_kernel(base, token, chapter, timeout=STARTUP_TIMEOUT):
    """Until the chapter's kernel is idle: as long as any kernel of the book may take to
    start (two JupyterLabs side by side on a busy machine); it returns when it is."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = [s["kernel"]["execution_state"] for s in api(base, token, "sessions")
                  if s["path"] == chapter]
        if states == ["idle"]:
            return
        time.sleep(0.1)
    pytest.fail(f"{chapter}: no idle kernel after {timeout} s (sessions: {states})")


class LabWindow:
    """One JupyterLab page, kept loaded from chapter to chapter (see the module docstring)."""

    def __init__(self, context, base, token):
        self.context, self.base, self.token = context, base, token
        self.page = None
        # JupyterLab runs with its network features off: nothing of its own may leave the
        # machine. Outputs may link CDN assets (matplotlib's JavaScript animations link Font
        # Awesome); on Binder they load, here the local CDN answers (tests/chromium.py).
        self.outside = []

    def _request(self, request):
        if not request.url.startswith((self.base, "data:", "blob:", *OUTPUT_ASSETS)):
            self.outside.append(request.url)

    def open(self, chapter):
        """Open `chapter` from its launch URL path; return the page."""
        path = launch_path(chapter)
        self.outside.clear()
        if self.page is None:
            self.page = self.context.new_page()
            self.page.on("request", self._request)
            # ?reset starts from an empty workspace: no tabs (and kernels) of other runs
            self.page.goto(f"{self.base}{path}?reset&token={self.token}",
                           wait_until="domcontentloaded")
        else:  # after close_chapter: JupyterLab shows its Launcher in the empty main area
            tabs = self.page.evaluate(
                "() => [...jupyterapp.shell.widgets('main')].map(w => w.title.label)")
            assert tabs == ["Launcher"], f"tabs left open: {tabs}"
            sessions = api(self.base, self.token, "sessions")
            assert sessions == [], f"kernels left running: {sessions}"
            self.page.evaluate("""async path => {
                const [launcher] = jupyterapp.shell.widgets('main');
                await jupyterapp.commands.execute(
                    'filebrowser:open-path', {path, dontShowBrowser: true});
                launcher.dispose();  // as from the URL: the chapter's is the only tab
            }""", path.removeprefix("lab/tree/"))
        self.page.wait_for_url(lambda url: url.split("?")[0] == self.base + path)
        return self.page

    def close_chapter(self):
        """Close every tab, shutting its kernel down first; wait for the Launcher."""
        self.page.evaluate("""async () => {
            for (const widget of [...jupyterapp.shell.widgets('main')]) {
                await widget.sessionContext?.shutdown();
                widget.dispose();
            } }""")
        self.page.locator(".jp-Launcher").wait_for()

    def discard(self):
        """Close the page: the next chapter boots JupyterLab again, in a new one."""
        if self.page is not None:
            self.page.close()
            self.page = None


@pytest.fixture(scope="session")
def lab_window(lab, lab_context):
    window = LabWindow(lab_context, *lab)
    yield window
    window.discard()


def forked_kernels():
    """The kernels that warm processes of this test process's JupyterLab forked (a fork
    has its warm process's command line)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if is_warm(process.cmdline()):
                found += process.children()
        except psutil.Error:  # it ended meanwhile
            pass
    return found


def launch_path(chapter):
    """The path the chapter's Binder launch button opens (read from the built page)."""
    built = HTML / Path(chapter).with_suffix(".html")
    if not built.exists():
        pytest.fail(f"{built} is missing: build the book first (make book)")
    button = re.search(r'href="https://[^"]+/v2/gh/[^"?]+\?urlpath=([^"]+)"', built.read_text())
    assert button, f"{built.name} has no Binder launch button"
    path = unquote(html.unescape(button.group(1)))
    assert path == f"lab/tree/{chapter}", path  # JupyterLab, at the chapter's source file
    return path


def screenshot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}.png")


def painted(page):
    """Wait until what scrolled into view is painted: the cells off screen are skipped by
    the browser (content-visibility), so their images are decoded, and a frame drawn, only
    once they are in view."""
    assert settled(page, """Promise.all([...document.images]
        .filter(img => { const r = img.getBoundingClientRect();
                         return r.bottom > 0 && r.top < innerHeight; })
        .map(img => img.decode().catch(() => null)))
        .then(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))))""",
                   TIMEOUT_MS), f"the page was not painted within {TIMEOUT_MS // 1000} s"


def same_prose_as_the_build(page, chapter, env):
    """Every {eval} of the chapter shows in JupyterLab (its kernel in `env`) what the
    build's run shows, read from the build's execution cache (declared timings aside)."""
    path = ROOT / chapter
    built = portability.build_run(path)
    if built is None:
        pytest.fail(f"{chapter}: the build's execution cache has no run of the chapter as it "
                    "is: build the book first (make book)")
    lab_run = portability.Run(env.name)
    for cell in page.evaluate(USER_EXPRESSIONS):
        for item in cell:
            shown = portability.shown([item["result"]])
            lab_run.prose.setdefault(item["expression"], []).append(shown)
    counts = {run.env: {e: len(v) for e, v in run.prose.items()} for run in (built, lab_run)}
    assert counts[env.name] == counts["default"], (
        f"{chapter}: JupyterLab evaluated other inline expressions than the build "
        f"(expression: times): {counts}")
    measured, _ = portability.declared_measured(jupytext.read(path))
    rows = portability.differing_prose([built, lab_run], measured)
    assert rows == [], (f"{chapter}: prose differs from the build's (declare a timing in the "
                        "front matter's 'measured'):\n"
                        + portability.table(("expression", "default (the build)", env.name), rows))


def answer_a_quiz(quiz, chapter):
    """The quizzes (lincls.quiz) work in JupyterLab once their cells ran (the output is then
    trusted, so its script runs): the first question answered wrong, then right."""
    key = json.loads(quiz.locator("script.lincls-quiz-key").text_content())[0]
    question = quiz.locator(".lincls-quiz-q").first
    inputs = question.locator("fieldset input")
    for right in (False, True):
        if key["kind"] == "number":
            inputs.first.fill(repr(key["answer"] if right else key["answer"] + 10 * key["tol"]
                                   + 2 * max([abs(v) for v, _ in key["traps"]] + [1])))
        elif key["kind"] == "choice":
            inputs.nth(key["correct"].index(right)).check()
        else:
            for i, true in enumerate(key["correct"]):
                inputs.nth(i).set_checked(true if right else (true != (i == 0)))
        question.locator(".lincls-quiz-check").click()
        said = question.locator(".lincls-quiz-feedback").inner_text()
        assert said.startswith("Correct." if right else "Not yet."), (chapter, right, said)


@pytest.mark.parametrize("chapter", chapters())
def test_chapter_reads_as_a_notebook(lab, lab_window, lab_environment, chapter):
    base, token = lab
    name = "lab_" + Path(chapter).stem
    try:
        page = lab_window.open(chapter)
        page.locator(".jp-NotebookPanel:visible, .jp-FileEditor:visible").first.wait_for()
        assert page.locator(".jp-FileEditor:visible").count() == 0, f"{chapter} opened as text"
        counts = cell_counts(ROOT / chapter)
        n_code = counts["code"]
        page.wait_for_function("""n => document.querySelectorAll(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell').length === n""", arg=n_code)
        wait_for_idle_kernel(base, token, chapter)
        # jupyterlab-myst evaluates a markdown cell's inline expressions from the MyST tree
        # of its last render (src/actions.ts, executeUserExpressions): a cell that Run All
        # reaches before its first render gets none evaluated, and shows their source. A
        # reader sees the page before running it; so does the test: every markdown cell is
        # rendered by MyST first. (JupyterLab shows at least the source's markdown cells; the
        # Binder settings may add one, e.g. with the front matter's math macros.)
        page.wait_for_function("""([panel, n]) => {
            const cells = [...document.querySelectorAll(panel + ' .jp-MarkdownCell')];
            return cells.length >= n && cells.every(c => c.querySelector('.myst'));
            }""", arg=[PANEL, counts["markdown"]], polling=100)
        dialogs = page.locator(DIALOGS)
        assert dialogs.count() == 0, f"{chapter}: a dialog is open: {dialogs.first.inner_text()}"

        # Run > Run All Cells, then wait for every prompt to show an execution count.
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        page.wait_for_function(  # done, or stopped at an error
            """([panel, errors]) => {
                const prompts = [...document.querySelectorAll(
                    panel + ' .jp-CodeCell .jp-InputPrompt')];
                return prompts.every(p => /\\[\\d+\\]/.test(p.textContent))
                    || document.querySelector(errors);
            }""", arg=[PANEL, ERRORS], timeout=RUN_TIMEOUT_MS, polling=100)
        errors = page.evaluate(
            "s => [...document.querySelectorAll(s)].map(o => o.textContent.slice(0, 300))", ERRORS)
        assert errors == [], f"{chapter}: error output\n" + "\n".join(errors)
        executed = page.locator(".jp-NotebookPanel:visible .jp-CodeCell .jp-InputPrompt")
        assert executed.count() == n_code
        assert forked_kernels(), f"{chapter}: its kernel was not forked from a warm process"

        # The markdown cells' inline expressions are evaluated after the cells run (up to
        # 90 s: two JupyterLabs run chapters side by side, and the machine may be busy).
        try:
            page.wait_for_function(f"() => ({PLACEHOLDERS})({json.dumps(PANEL)}).length === 0",
                                   timeout=TIMEOUT_MS, polling=100)
        except Exception:  # the assertion below says which
            pass
        placeholders = page.evaluate(PLACEHOLDERS, PANEL)
        assert placeholders == [], f"{chapter}: numbers not shown: {placeholders}"
        failed = page.evaluate(
            "s => [...document.querySelectorAll(s)].map(o => o.textContent)", EXPRESSION_ERRORS)
        assert failed == [], f"{chapter}: inline expressions failed: {failed}"

        raw = [m for text in page.evaluate(RENDERED_TEXT, PANEL)
               for m in (line for line in text.splitlines() if RAW_MYST.search(line))]
        assert raw == [], f"{chapter}: raw MyST in the rendered notebook:\n" + "\n".join(raw)
        math = page.evaluate("s => [...document.querySelectorAll(s)].map("
                             "m => (m.title || m.textContent).slice(0, 200))", MATH_ERRORS)
        assert math == [], f"{chapter}: {len(math)} math errors:\n" + "\n".join(math)
        unresolved = page.evaluate(UNRESOLVED, PANEL)
        assert unresolved == [], (f"{chapter}: {len(unresolved)} unresolved:\n"
                                  + "\n".join(unresolved))
        assert dialogs.count() == 0, f"{chapter}: a dialog is open: {dialogs.first.inner_text()}"
        assert lab_window.outside == [], f"requests outside the local server: {lab_window.outside}"
        if ROOT / chapter in portability.CHAPTERS:
            same_prose_as_the_build(page, chapter, lab_environment)
        quizzes = page.locator(f"{PANEL} .lincls-quiz")
        if quizzes.count():
            answer_a_quiz(quizzes.first, chapter)

        # Run All leaves the view at the last cell: back to the top, then the first markdown
        # cell that quotes a computed number (cells off screen render lazily: let them paint)
        top = "n => n.scrollIntoView({block: 'start'})"
        page.locator(f"{PANEL} .jp-Cell").first.evaluate(top)
        painted(page)
        screenshot(page, name)
        markdown = [c for c in jupytext.read(ROOT / chapter).cells if c.cell_type == "markdown"]
        quoting = [i for i, c in enumerate(markdown) if "{eval}" in c.source]
        if quoting:
            page.locator(f"{PANEL} .jp-MarkdownCell").nth(quoting[0]).evaluate(top)
            painted(page)
            screenshot(page, name + "_numbers")
        citations = page.locator(CITATIONS)
        if citations.count():
            citations.first.evaluate("n => n.scrollIntoView({block: 'center'})")
            painted(page)
            screenshot(page, name + "_citations")
        lab_window.close_chapter()
    except BaseException:  # also pytest.fail
        if lab_window.page is not None:
            screenshot(lab_window.page, name.replace("lab_", "lab_failed_"))
        lab_window.discard()
        raise
    finally:
        for session in api(base, token, "sessions"):
            api(base, token, f"sessions/{session['id']}", method="DELETE")
