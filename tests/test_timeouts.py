"""No wait that a busy machine can hit by accident: every Jupyter kernel the book's
machinery, its chapters and its tests start gets :data:`booktools.kernels.STARTUP_TIMEOUT`
to start, and a cell's last outputs :data:`booktools.kernels.IOPUB_TIMEOUT` to arrive.

nbclient, nbgrader's Execute and nbval each wait 60 s for a kernel unless told; a CI run
on two busy cores once failed so ("Kernel didn't respond in 60 seconds"). These checks
read the sources (the chapters' code cells too: a line number there counts in their code
cells, joined), so a new client or nbgrader config that forgets the setting fails here,
not on a busy day.
"""

import ast
import functools
import re
from pathlib import Path

import jupytext
import nbformat

from booktools.kernels import IOPUB_TIMEOUT, STARTUP_TIMEOUT, notebook_client
from booktools.sphinxext import execution

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for top in ("tools", "tests", "lincls", "benchmarks")
                 for p in (ROOT / top).rglob("*.py"))


def name_of(func):
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


@functools.cache
def code():
    """``{place: module}``: the Python sources, and the code cells of every chapter and
    homework notebook (a chapter's code runs in the build: a client it makes waits too)."""
    found = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in SOURCES}
    for page in sorted((ROOT / "book").rglob("*")):
        if page.suffix == ".ipynb" or (
                page.suffix == ".md" and page.read_text().startswith("---\njupytext:")):
            cells = [c.source for c in jupytext.read(page).cells if c.cell_type == "code"]
            found[str(page.relative_to(ROOT))] = "\n".join(
                "\n".join(line for line in cell.splitlines()  # IPython's magics and shell
                          if not line.lstrip().startswith(("%", "!"))) for cell in cells)
    return found


def test_the_chapters_code_is_read_too():
    found = code()
    assert "book/teachers.md" in found and "book/homework/homework2.ipynb" in found
    assert "NotebookClient(" in found["book/teachers.md"]


def test_the_wait_is_generous():
    # a cold start of a kernel that imports numpy, matplotlib, scikit-learn and numba
    # took over 60 s on two cores with four other kernels starting beside it
    assert STARTUP_TIMEOUT >= 300


def test_every_notebook_client_is_given_the_startup_timeout():
    """Every call that makes an nbclient client (NotebookClient, myst-nb's
    ModifiedNotebookClient, the tests' subclasses) names ``startup_timeout``, or passes
    ``**kwargs`` that set it."""
    missing = []
    for place, source in code().items():
        if "Client" not in source:
            continue
        tree = ast.parse(source)
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                continue
            sets_default = "startup_timeout" in ast.unparse(func) and any(
                isinstance(c, ast.Call) and name_of(c.func) == "setdefault"
                and c.args and getattr(c.args[0], "value", None) == "startup_timeout"
                for c in ast.walk(func))
            for call in ast.walk(func):
                if not (isinstance(call, ast.Call)
                        and re.search(r".Client$", name_of(call.func))):
                    continue
                names = {k.arg for k in call.keywords}
                if "startup_timeout" in names or (None in names and sets_default):
                    continue
                missing.append(f"{place}:{call.lineno}")
    assert not missing, f"kernel clients without startup_timeout: {sorted(set(missing))}"


def test_every_nbgrader_config_sets_the_startup_and_iopub_timeouts():
    """Code that sets nbgrader's ``Execute.timeout`` (an ``nbgrader_config.py`` it writes,
    a config object) sets ``Execute.startup_timeout`` and ``Execute.iopub_timeout`` beside
    it, in the same function; so does every block of a chapter's text that a teacher copies
    (nbgrader's Execute raises when a cell's last output comes 4 s after its reply)."""
    waits = (r"Execute\.startup_timeout\s*=", r"Execute\.iopub_timeout\s*=")
    missing = []
    for place, source in code().items():
        if "Execute." not in source:
            continue
        for func in ast.walk(ast.parse(source)):
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                text = ast.unparse(func)
                if re.search(r"Execute\.timeout\s*=", text) and not all(
                        re.search(wait, text) for wait in waits):
                    missing.append(f"{place}:{getattr(func, 'lineno', 1)}")
    blocks = 0
    for page in sorted((ROOT / "book").rglob("*.md")):
        for block in re.findall(r"^```.*?^```", page.read_text(), re.S | re.M):
            if re.search(r"Execute\.timeout\s*=", block):
                blocks += 1
                if not all(re.search(wait, block) for wait in waits):
                    missing.append(str(page.relative_to(ROOT)))
    assert blocks, "the teachers' chapter shows an nbgrader_config.py"
    assert not missing, f"nbgrader configs without startup_timeout or iopub_timeout: " \
        f"{sorted(set(missing))}"


def test_clients_wait_for_a_cells_last_outputs():
    """nbclient waits 4 s for a cell's outputs after its reply, then goes on without them:
    the homework tools' clients and the build's wait IOPUB_TIMEOUT and raise past it; the
    build's kernel start waits STARTUP_TIMEOUT, or the cell timeout when that is longer."""
    assert IOPUB_TIMEOUT >= 60
    client = notebook_client(nbformat.v4.new_notebook(), ROOT)
    assert client.iopub_timeout == IOPUB_TIMEOUT and client.raise_on_iopub_timeout
    assert client.startup_timeout == STARTUP_TIMEOUT
    given = {}
    init = execution._patient_start(lambda self, **kwargs: given.update(kwargs))
    for timeout, startup in ((-1, STARTUP_TIMEOUT), (30, STARTUP_TIMEOUT), (900, 900)):
        init(None, timeout=timeout)
        assert given["startup_timeout"] == startup
        assert given["iopub_timeout"] == IOPUB_TIMEOUT and given["raise_on_iopub_timeout"]


def test_nbval_and_nbgrader_wait_as_long():
    nbval = re.search(r"^NBVAL := (.*)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    found = re.search(r"--nbval-kernel-startup-timeout[= ](\d+)", nbval)
    assert found and int(found.group(1)) >= STARTUP_TIMEOUT, nbval
    assert "-p booktools.nbvalkernels" in nbval, nbval  # its other waits, its sockets
    autograde = (ROOT / "tools/booktools/homework/autograde.py").read_text()
    assert "Execute.startup_timeout = STARTUP_TIMEOUT" in autograde


def test_the_browser_waits_for_events_generously():
    """Every Playwright wait of the browser layers is chromium.TIMEOUT_MS (or longer), and
    the PDF print's its ``timeout_ms`` (300 s), Chromium's start too: a literal short wait
    (5 s for a dropdown, 60 s for axe) once failed on a busy machine. No timer in the
    page's JavaScript has a literal length, and every promise the page is asked to settle
    races such a timer (Playwright's ``evaluate`` waits for one without end): a wait that
    ends too soon on a busy machine, or never, is a test's own failure.
    Polls in a retry loop with a deadline (urlopen) and a server's stop are not waits for
    an event of the page."""
    from chromium import TIMEOUT_MS

    assert TIMEOUT_MS >= 120_000
    short = []
    for name in ("tests/chromium.py", "tests/test_browser.py", "tests/test_jupyterlab.py",
                 "tools/booktools/sphinxext/pdf.py"):
        for n, line in enumerate((ROOT / name).read_text().splitlines(), 1):
            if "urlopen" in line or "server.wait" in line or "subprocess.run" in line:
                continue
            for m in re.finditer(r"(?:timeout=|set_default_timeout\()(\d[\d_]*)", line):
                short.append(f"{name}:{n}: {m.group(0)}")
            if re.search(r"setTimeout\([^,]+,\s*\d", line):
                short.append(f"{name}:{n}: a literal setTimeout")
        for call in ast.walk(ast.parse((ROOT / name).read_text())):
            if isinstance(call, ast.Call) and name_of(call.func) == "evaluate" and call.args:
                script = ast.unparse(call.args[0])
                if re.search(r"Promise|\.promise|\.then\(|\.finished", script) and not (
                        "Promise.race" in script and "setTimeout" in script):
                    short.append(f"{name}:{call.lineno}: a promise without a time limit")
    assert not short, short
