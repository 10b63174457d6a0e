"""Live code on the website (the launch menu's "Live Code"; booktools.sphinxext.thebe), in
headless Chromium, offline.

On the site, the button starts a kernel on mybinder.org. Here a Jupyter server on
127.0.0.1 (the book's venv; a copy of book/ as its root, as Binder works on a clone) takes
Binder's place: the test adds a Thebe configuration with the server's URL and token to
the page, as its last ``text/x-thebe-config``, which Thebe merges over the page's. Thebe's
own JavaScript comes from the npm package pinned in tests/browser/package.json, served
for jsDelivr as MathJax is (tests/chromium.py); any other request that leaves 127.0.0.1
fails and is reported.

On two chapters the test presses "Live Code", waits for the kernel and the chapter's
hidden set-up, edits a cell with the keyboard, runs it and sees its printed output and a
figure; on the perceptron chapter it also runs the cell that needs a live kernel (an
ipywidgets slider over a figure) and moves the slider, which redraws the figure.
Screenshots: ``_build/screenshots/live_<chapter>.png``.
"""

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import test_browser
import yaml
from chromium import TIMEOUT_MS
from test_browser import HTML, ROOT, SCREENSHOTS, axe, offline_context, open_page, site_pages
from test_jupyterlab import jupyter_server

from booktools.kernels import STARTUP_TIMEOUT

pytestmark = pytest.mark.browser
# test_browser's fixtures, here too: the local copies of the CDN assets, the site's server
requirements, server = test_browser.requirements, test_browser.server

BIN = Path(sys.executable).parent
THEBE_CONFIG = re.compile(
    r'<script type="text/x-thebe-config" data-thebe-js="([^"]+)"[^>]*>(.*?)</script>', re.S)

# chapter: (the start of the cell to edit, the line typed at its end, the output it prints)
EDITS = {
    "book/perceptron": ("from lincls.perceptron import is_mistake",
                        'print("edited: mistakes at w = 0:", zero_mistakes)',
                        "edited: mistakes at w = 0: 4"),
    "book/binary_classification": ("from lincls.datasets import load_iris",
                                   'print("edited:", X.shape); plt.scatter(*X.T, c=y); plt.show()',
                                   "edited: (150, 2)"),
}


def _config():
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def live_pages():
    """The pages whose HTML has live code: [(page, Thebe's URL, the page's configuration)]."""
    found = []
    for name in site_pages():
        match = THEBE_CONFIG.search((HTML / f"{name}.html").read_text(errors="ignore"))
        if match:
            found.append((name, match[1], json.loads(match[2])))
    return found


def test_live_code_on_every_chapter_with_code():
    """The Live Code button (and its configuration) is on exactly the pages with a served
    notebook with code; Binder builds the book's repository; Thebe's URL is the pinned one."""
    if not (HTML / "index.html").exists():
        pytest.fail("_build/html is missing: build the book first (make book)")
    config = _config()
    pinned = json.loads((ROOT / "tests" / "browser" / "package.json").read_text())
    expected_js = config["sphinx"]["config"]["lincls_thebe_js"]
    assert expected_js == (f"https://cdn.jsdelivr.net/npm/thebe@"
                           f"{pinned['dependencies']['thebe']}/lib/index.js")
    with_code = set()
    for notebook in (HTML / "_notebooks").rglob("*.ipynb"):
        cells = json.loads(notebook.read_text())["cells"]
        if any(c["cell_type"] == "code" for c in cells):
            with_code.add(notebook.relative_to(HTML / "_notebooks").with_suffix("").as_posix())
    live = live_pages()
    assert {name for name, _, _ in live} == with_code
    repo = re.match(r"https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?/?$",
                    config["repository"]["url"])[1]
    requirejs = next(u for u in config["sphinx"]["config"]["nb_ipywidgets_js"]
                     if u.endswith("/require.js"))
    for name, js, page in live:
        assert js == expected_js, name
        text = (HTML / f"{name}.html").read_text(errors="ignore")
        assert f'data-requirejs="{requirejs}"' in text, name
        assert page["binderOptions"] == {
            "repo": repo, "ref": config["repository"]["branch"],
            "binderUrl": config["launch_buttons"]["binderhub_url"], "repoProvider": "github"}
        assert page["kernelOptions"]["path"] == Path(name).parent.as_posix(), name
    for name in site_pages():  # sphinx-thebe's Thebe 0.8 (unpkg.com) is on no page
        text = (HTML / f"{name}.html").read_text(errors="ignore")
        assert "unpkg.com" not in text and "sphinx-thebe.js" not in text, name
        assert ("initThebeSBT()" in text) == (name in with_code), name


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory, server):
    """A Jupyter server on 127.0.0.1 that the site's pages may use; yields (URL, token)."""
    home = tmp_path_factory.mktemp("thebe")
    root = home / "repo"
    shutil.copytree(ROOT / "book", root / "book", ignore=shutil.ignore_patterns("_build"))
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
               JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), PYDEVD_DISABLE_FILE_VALIDATION="1")
    # the site's pages (another port of 127.0.0.1) call it, as they call mybinder.org
    with jupyter_server("jupyter-server", home, root, env,
                        [f"--ServerApp.allow_origin={server.rstrip('/')}"]) as found:
        yield found


@pytest.fixture(scope="module")
def live(browser, server, jupyter):
    """A browser context offline but for the site and the local Jupyter server."""
    with offline_context(browser, server, allow=(jupyter[0],)) as found:
        yield found


def code(cell):
    """The code in a live cell's editor (CodeMirror 5)."""
    return cell.locator(".CodeMirror").evaluate("el => el.CodeMirror.getValue()")


def cell_with(page, start):
    """The page's live cell (Thebe's box) whose code starts with `start`."""
    cells = page.locator(".thebe-cell")
    for i in range(cells.count()):
        cell = cells.nth(i)
        if code(cell).lstrip().startswith(start):
            return cell
    raise AssertionError(f"no live cell starts with {start!r}")


def output_of(cell):
    """The output area that Thebe paired with `cell` (the next data-output element)."""
    return cell.locator("xpath=following::*[@data-output][1]")


def start_live_code(page, jupyter):
    """Point the page at the local server, press Live Code, wait until the kernel has run
    the chapter's set-up; returns the status line's text and state."""
    base, token = jupyter
    page.evaluate("""([base, token]) => {
        const script = document.createElement('script');
        script.type = 'text/x-thebe-config';
        script.textContent = JSON.stringify(
            {useBinder: false, serverSettings: {baseUrl: base, token: token}});
        document.body.appendChild(script);
    }""", [base, token])
    page.locator(".dropdown-launch-buttons button.dropdown-toggle").click()
    page.get_by_role("button", name="Live Code").click()
    status = page.locator(".lincls-live-status")
    # the kernel starts and runs the chapter's hidden set-up (imports, data): seconds, up
    # to minutes on two busy cores (issue 43): a kernel's start, STARTUP_TIMEOUT, then
    # TIMEOUT_MS, which bounds every other wait
    status.and_(page.locator("[data-state=ready], [data-state=error]")).wait_for(
        timeout=STARTUP_TIMEOUT * 1000 + TIMEOUT_MS)
    return status.inner_text(), status.get_attribute("data-state")


@pytest.mark.parametrize("name", sorted(EDITS))
def test_live_code_runs_an_edited_cell(live, server, jupyter, name):
    context, problems = live
    page, problems = open_page((context, problems), server, name)
    text, state = start_live_code(page, jupyter)
    assert state == "ready", text
    start, line, printed = EDITS[name]
    cell = cell_with(page, start)
    cell.locator(".CodeMirror").click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type(line)
    assert code(cell).endswith("\n" + line), code(cell)[-300:]
    cell.locator("button.thebe-run-button").click()
    # each wait below: the kernel's answer, seconds or minutes (issue 43; TIMEOUT_MS)
    output_of(cell).get_by_text(printed).wait_for()
    shown = cell
    if name == "book/binary_classification":  # the edited cell draws a figure
        output_of(cell).locator("img").first.wait_for()
    else:
        # the cell the website cannot run: a slider over a figure, redrawn as it moves
        cell_with(page, "X2, y2, teacher2 = teacher_student").locator(
            "button.thebe-run-button").click()
        shown = cell_with(page, "from ipywidgets import IntSlider, interact")
        shown.locator("button.thebe-run-button").click()
        output = output_of(shown)
        figure = output.locator(".widget-output img").first
        figure.wait_for()
        before = figure.get_attribute("src")
        slider = output.get_by_role("slider", name="update")
        slider.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("""([el, before]) => {
            const img = el.querySelector('.widget-output img'); return img && img.src !== before;
        }""", arg=[output.element_handle(), before])
        assert slider.get_attribute("aria-valuenow") in ("1", "1.0")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shown.scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOTS / f"live_{Path(name).name}.png")
    found = axe(page, name + " (live code)")  # the live cells too: editors, run buttons
    found += [p for p in problems if jupyter[0] not in p]
    page.close()
    assert not found, "\n".join(found)
