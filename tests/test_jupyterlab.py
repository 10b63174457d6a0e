"""The Binder path: a chapter opened from its launch button runs as a notebook in JupyterLab.

A local JupyterLab (from this environment, on 127.0.0.1, with throw-away Jupyter config,
data, runtime and settings directories) gets exactly the settings that ``postBuild``
writes on Binder: the test runs ``postBuild`` itself. Chromium then opens the URL path the
launch button on the chapter's built page produces, ``lab/tree/book/<chapter>``, and checks
that the chapter opens as a notebook with its cells, runs all cells, and finds no error
output. Covered: the first chapter with code of every part of ``_toc.yml``.
"""

import html
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import unquote

import jupytext
import pytest
import yaml
from chromium import launch, require_chromium

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
ERRORS = ", ".join(f'{PANEL} .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.{m}"]'
                   for m in ("error", "stderr"))
HTML = ROOT / "_build" / "html"
OUTPUT_ASSETS = ("https://maxcdn.bootstrapcdn.com/font-awesome/", "https://cdn.jsdelivr.net/npm/")
SCREENSHOTS = ROOT / "_build" / "screenshots"
RUN_TIMEOUT_MS = int(os.environ.get("LAB_RUN_TIMEOUT_MS", 180_000))  # all cells of a chapter

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def requirements():
    require_chromium()


def code_cells(path):
    """How many code cells the notebook `path` (.ipynb or MyST .md) has."""
    return sum(c.cell_type == "code" for c in jupytext.read(path).cells)


def chapters():
    """Per TOC part, the first chapter that has code cells (a part without code is skipped)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    found = []
    for part in toc["parts"]:
        for entry in part["chapters"]:
            source = next(p for p in ROOT.glob(entry["file"] + ".*")
                          if p.suffix in (".md", ".ipynb"))
            if code_cells(source):
                found.append(source.relative_to(ROOT).as_posix())
                break
    return found


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server as on Binder; yields (base URL, token); stopped even on failure."""
    home = tmp_path_factory.mktemp("jupyter")
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
               JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    subprocess.run(["bash", str(ROOT / "postBuild")], env=env, check=True, timeout=60)
    overrides = home / "config" / "labconfig" / "default_setting_overrides.json"
    viewers = json.loads(overrides.read_text())["@jupyterlab/docmanager-extension:plugin"]
    assert viewers["defaultViewers"] == {"markdown": "Jupytext Notebook",
                                         "myst": "Jupytext Notebook"}

    # The server works on a copy of book/, as Binder works on a clone: JupyterLab saves
    # notebooks it runs (autosave), and the repository's chapters must stay untouched.
    root = home / "repo"
    shutil.copytree(ROOT / "book", root / "book", ignore=shutil.ignore_patterns("_build"))

    port, token = free_port(), secrets.token_hex(16)
    log = open(home / "lab.log", "w", buffering=1)
    server = subprocess.Popen(
        [str(BIN / "jupyter-lab"), "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={token}",
         # offline: no news, no update checks, no extension manager queries to PyPI
         "--LabApp.news_url=None",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--LabApp.extension_manager=readonly"] + (["--allow-root"] if os.geteuid() == 0 else []),
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}api/status?token={token}", timeout=5)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log_text = (home / "lab.log").read_text()[-3000:]
                    pytest.fail(f"JupyterLab did not start:\n{log_text}")
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


@pytest.fixture(scope="module")
def browser():
    with launch() as chromium:
        yield chromium


def api(base, token, path, method="GET"):
    request = urllib.request.Request(f"{base}api/{path}", method=method,
                                     headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read()
    return json.loads(body) if body else None


def wait_for_idle_kernel(base, token, chapter, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = [s["kernel"]["execution_state"] for s in api(base, token, "sessions")
                  if s["path"] == chapter]
        if states == ["idle"]:
            return
        time.sleep(0.5)
    pytest.fail(f"{chapter}: no idle kernel after {timeout} s (sessions: {states})")


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


@pytest.mark.parametrize("chapter", chapters())
def test_chapter_runs_as_a_notebook(lab, browser, chapter):
    base, token = lab
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    # JupyterLab runs with its network features off: nothing of its own may leave the
    # machine. Outputs may link CDN assets (matplotlib's JavaScript animations link Font
    # Awesome); on Binder they load, here they fail harmlessly, so they are allowed.
    outside = []
    page.on("request", lambda r: r.url.startswith((base, "data:", "blob:", *OUTPUT_ASSETS))
            or outside.append(r.url))
    try:
        # ?reset starts from an empty workspace: no tabs (and kernels) of earlier chapters.
        page.goto(f"{base}{launch_path(chapter)}?reset&token={token}",
                  wait_until="domcontentloaded")
        page.locator(".jp-NotebookPanel:visible, .jp-FileEditor:visible").first.wait_for()
        assert page.locator(".jp-FileEditor:visible").count() == 0, f"{chapter} opened as text"
        n_code = code_cells(ROOT / chapter)
        page.wait_for_function("""n => document.querySelectorAll(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell').length === n""", arg=n_code)
        wait_for_idle_kernel(base, token, chapter)

        # Run > Run All Cells, then wait for every prompt to show an execution count.
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        page.wait_for_function(  # done, or stopped at an error
            """([panel, errors]) => {
                const prompts = [...document.querySelectorAll(
                    panel + ' .jp-CodeCell .jp-InputPrompt')];
                return (prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent)))
                    || document.querySelector(errors);
            }""", arg=[PANEL, ERRORS], timeout=RUN_TIMEOUT_MS, polling=500)
        errors = page.evaluate(
            "s => [...document.querySelectorAll(s)].map(o => o.textContent.slice(0, 300))", ERRORS)
        assert errors == [], f"{chapter}: error output\n" + "\n".join(errors)
        executed = page.locator(".jp-NotebookPanel:visible .jp-CodeCell .jp-InputPrompt")
        assert executed.count() == n_code
        assert outside == [], f"requests outside the local server: {outside}"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / f"lab_{Path(chapter).stem}.png")
    except BaseException:  # also pytest.fail
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / f"lab_failed_{Path(chapter).stem}.png")
        raise
    finally:
        page.close()
        context.close()
        for session in api(base, token, "sessions"):
            api(base, token, f"sessions/{session['id']}", method="DELETE")
