"""The book's configuration: strict builds, the TOC, one place for the repository URL."""

import ast
import json
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import jupytext
import pytest
import yaml
from packaging.utils import canonicalize_name

from booktools.kernels import STARTUP_TIMEOUT
from booktools.sphinxext import execution
from booktools.sphinxext.binder import split_md

ROOT = Path(__file__).resolve().parents[1]
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"
# a one-page build's hang bound: its kernel's start may take STARTUP_TIMEOUT on a busy
# machine, and a cell as long again (they take seconds)
BUILD_WAIT = 2 * STARTUP_TIMEOUT


def toc_files():
    """Every file listed in _toc.yml, without suffix."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part["chapters"]]
    return files


def test_every_toc_entry_exists_under_book():
    for name in toc_files():
        assert name.startswith("book/"), f"{name}: only files under book/ are pages"
        matches = [p for p in ROOT.glob(name + ".*") if p.suffix in (".md", ".ipynb")]
        assert matches, f"{name} is listed in _toc.yml but does not exist"


def test_strict_configuration():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["only_build_toc_files"] is True
    assert config["execute"]["execute_notebooks"] == "inline"  # {eval} prose numbers
    assert config["execute"]["timeout"] > 0
    assert config["execute"]["allow_errors"] is False
    assert config["sphinx"]["config"]["nb_execution_raise_on_error"] is True
    macros = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    assert {"R", "vw", "vx"} <= set(macros)


def test_the_chapters_run_in_parallel():
    """booktools.sphinxext.execution reads (so executes) the chapters in several processes."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "booktools.sphinxext.execution" in config["sphinx"]["extra_extensions"]
    assert config["sphinx"]["config"]["lincls_read_jobs"] == "auto"


def test_repository_url_is_set_in_one_place():
    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout
    holders = [f for f in tracked.split() if (ROOT / f).is_file() and f != "_config.yml"
               and not f.endswith(".ipynb") and url in (ROOT / f).read_text(errors="ignore")]
    assert holders == [], f"the repository URL is repeated in {holders}; set it only in _config.yml"


def assert_fails_with_boom(tmp_path, page):
    """Build the book in tmp_path strictly: it fails, says 'boom', and `page` is not written."""
    result = subprocess.run(
        [str(JUPYTER_BOOK), "build", str(tmp_path), "-n", "-W", "--keep-going"],
        capture_output=True, text=True, timeout=BUILD_WAIT,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-2000:]
    assert "boom" in output
    assert not (tmp_path / "_build" / "html" / "book" / f"{page}.html").exists()


@pytest.mark.slow
def test_a_chapter_that_raises_fails_the_build(tmp_path):
    """Build a one-page book with our configuration whose only cell raises."""
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    book = tmp_path / "book"
    book.mkdir()
    shutil.copy(ROOT / "book" / "references.bib", book / "references.bib")
    (book / "index.md").write_text(
        (ROOT / "book" / "preface.md").read_text().split("---\n\n")[0]
        + "---\n\n# Broken chapter\n\n```{code-cell} ipython3\nraise RuntimeError('boom')\n```\n"
    )
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/index\n")
    assert_fails_with_boom(tmp_path, "index")


@pytest.mark.slow
def test_a_chapter_that_raises_fails_a_parallel_build(tmp_path):
    """Seven pages read by two processes (booktools.sphinxext.execution): the error of one
    chapter still fails the build, and its page is not written."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["sphinx"]["config"]["lincls_read_jobs"] = 2
    text = yaml.safe_dump(config, allow_unicode=True, sort_keys=False)  # the macros' order
    (tmp_path / "_config.yml").write_text(text)
    book = tmp_path / "book"
    book.mkdir()
    shutil.copy(ROOT / "book" / "references.bib", book / "references.bib")
    header, macros, _ = split_md((ROOT / "book" / "preface.md").read_text())
    for k in range(7):
        code = "raise RuntimeError('boom')" if k == 4 else f"x = {k}"
        (book / f"p{k}.md").write_text(
            header + macros + f"# Page {k}\n\n```{{code-cell}} ipython3\n{code}\n```\n")
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/p0\nchapters:\n"
        + "".join(f"  - file: book/p{k}\n" for k in range(1, 7)))
    assert_fails_with_boom(tmp_path, "p4")


def one_page_book(tmp_path, body):
    """A one-page book with our configuration; returns the build's CompletedProcess."""
    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    book = tmp_path / "book"
    book.mkdir()
    shutil.copy(ROOT / "book" / "references.bib", book / "references.bib")
    header, macros, _ = split_md((ROOT / "book" / "preface.md").read_text())
    (book / "index.md").write_text(header + macros + body)
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/index\n")
    return subprocess.run(
        [str(JUPYTER_BOOK), "build", str(tmp_path), "-n", "-W", "--keep-going"],
        capture_output=True, text=True, timeout=BUILD_WAIT,
    )


HIDDEN = "```{code-cell} ipython3\n:tags: [remove-cell]\n%s\n```\n\n"


def test_hidden_cells_run_before_the_prose_below_them(tmp_path):
    """booktools.sphinxext.binder: a remove-cell cell runs before the {eval} roles after it
    (as in JupyterLab's Run All), and a hidden cell at the end of a page runs too."""
    body = ("# Page\n\n" + HIDDEN % "prose = {'n': 6 * 7}"
            + "The answer is {eval}`prose['n']`.\n\n" + HIDDEN % "assert prose['n'] == 42")
    result = one_page_book(tmp_path, body)
    assert result.returncode == 0, (result.stdout + result.stderr)[-2000:]
    html = (tmp_path / "_build" / "html" / "book" / "index.html").read_text()
    assert "The answer is 42" in " ".join(re.sub(r"<[^>]+>", "", html).split())

    failing = tmp_path / "failing"
    failing.mkdir()
    result = one_page_book(failing, "# Page\n\nText.\n\n" + HIDDEN % "raise RuntimeError('late')")
    assert result.returncode != 0 and "late" in result.stdout + result.stderr


def test_the_build_log_says_where_a_chapter_waited(tmp_path):
    """booktools.sphinxext.execution logs, per executed chapter, how long the build waited
    for its kernel, and the longest step by name: here the cell that sleeps."""
    from myst_nb.core.read import read_myst_markdown_notebook

    header, macros, _ = split_md((ROOT / "book" / "preface.md").read_text())
    body = ("# Page\n\n```{code-cell} ipython3\nx = 1\n```\n\nText.\n\n"
            "```{code-cell} ipython3\nimport time\ntime.sleep(4)\n```\n")
    cells = read_myst_markdown_notebook(header + macros + body).cells
    (sleeper,) = [i for i, c in enumerate(cells) if "sleep" in c.source]
    result = one_page_book(tmp_path, body)
    assert result.returncode == 0, (result.stdout + result.stderr)[-2000:]
    found = re.search(r"kernel(?: \(a warm start\))? CPU time [\d.]+ s; waited ([\d.]+) s for "
                      r"the kernel, longest for (the code cells up to notebook cell (\d+)|the "
                      r"kernel's start) \(([\d.]+) s\); stopping it: [\d.]+ s", result.stdout)
    assert found, result.stdout[-2000:]
    waited, cell, longest = float(found[1]), found[3], float(found[4])
    # the cell that sleeps, unless the kernel's start took longer (a busy machine's first
    # kernel, which waits for the warm process's imports: 5.3 s in a CI run)
    assert cell in (str(sleeper), None) and 4.0 <= longest <= waited


def test_a_prefix_of_a_stored_run_reuses_its_outputs(tmp_path):
    """booktools.sphinxext.execution: a page whose code cells are the first ones of a page
    run before (the student edition without a closing solution) shows that run's outputs
    and numbers, and runs nothing; a changed cell, or an {eval} the run did not store,
    runs the page."""
    cell = "```{code-cell} ipython3\n%s\n```\n\n"
    first = (cell % "import random\nprose = {'a': random.random()}\nprint('printed', prose['a'])"
             + "Drawn: {eval}`prose['a']`.\n\n" + cell % "prose['b'] = 2 * prose['a']")
    body = "# Page\n\n" + first + "Twice: {eval}`prose['b']`.\n\n" + cell % "prose['a'] = 0"
    result = one_page_book(tmp_path, body)
    assert result.returncode == 0, (result.stdout + result.stderr)[-2000:]
    page, html = tmp_path / "book" / "index.md", tmp_path / "_build" / "html" / "book"

    def shown():  # the number printed, and those of the {eval} roles, as the page shows them
        text = " ".join(re.sub(r"<[^>]+>", " ", (html / "index.html").read_text()).split())
        return re.findall(r"(?:printed|Drawn:|Twice:) (\d[\d.e-]*\d)", text)

    def rebuild(text):  # whether the build reused a run, and what the page shows
        page.write_text(page.read_text().split("# Page")[0] + text)
        result = subprocess.run([str(JUPYTER_BOOK), "build", str(tmp_path), "-n", "-W"],
                                capture_output=True, text=True, timeout=BUILD_WAIT)
        assert result.returncode == 0, (result.stdout + result.stderr)[-2000:]
        return "Reusing the outputs" in result.stdout, shown()

    numbers = shown()  # printed, drawn, twice
    assert len(numbers) == 3 and float(numbers[2]) == 2 * float(numbers[0]) > 0
    assert rebuild("# Page\n\n" + first + "Twice: {eval}`prose['b']`.\n") == (True, numbers)
    reused, other = rebuild("# Page\n\n" + first.replace("2 *", "3 *"))
    assert not reused and other[0] != numbers[0]
    # the run stored prose['a'] after one code cell, not after two: this page runs
    reused, other = rebuild("# Page\n\n" + first + "Again: {eval}`prose['a']`.\n")
    assert not reused and other[0] != numbers[0]


def test_a_prefix_of_a_run_with_widgets_runs(tmp_path):
    """A run stores its widgets' state as it is at its end: a cell after the prefix (a
    solution) may have changed a widget of the prefix, so a prefix of such a run runs."""
    cell = "```{code-cell} ipython3\n%s\n```\n\n"
    first = cell % "import ipywidgets\nslider = ipywidgets.IntSlider(value=3)\nslider"
    result = one_page_book(tmp_path, "# Page\n\n" + first + cell % "slider.value = 41")
    assert result.returncode == 0, (result.stdout + result.stderr)[-2000:]
    page, html = tmp_path / "book" / "index.md", tmp_path / "_build" / "html" / "book"

    def values():  # the sliders' values in the page's widget state
        state = re.search(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)'
                          r"</script>", (html / "index.html").read_text(), re.S)
        return [m["state"]["value"] for m in json.loads(state[1])["state"].values()
                if m["model_name"] == "IntSliderModel"]

    assert values() == [41]
    page.write_text(page.read_text().split("# Page")[0] + "# Page\n\n" + first)
    result = subprocess.run([str(JUPYTER_BOOK), "build", str(tmp_path), "-n", "-W"],
                            capture_output=True, text=True, timeout=BUILD_WAIT)
    assert result.returncode == 0, (result.stdout + result.stderr)[-2000:]
    assert "Reusing the outputs" not in result.stdout and values() == [3]


def test_the_pdf_contents_list_every_part_and_chapter():
    """The printed table of contents (booktools.sphinxext.pdf) reads the parts of _toc.yml."""
    from booktools.sphinxext.pdf import _parts

    parts = _parts(ROOT / "_toc.yml")
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    assert [p["caption"] for p in parts] == [p["caption"] for p in toc["parts"]]
    assert [c for p in parts for c in p["chapters"]] == toc_files()[1:]


def test_notation_chapter_lists_match_the_toc():
    """book/notation.md names chapters with {doc}: each must be in _toc.yml, every chapter
    of the numbered parts must appear, and its "Part III" must be the TOC's Part III."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    text = (ROOT / "book" / "notation.md").read_text()
    named = re.findall(r"\{doc\}`([\w-]+)`", text)
    pages = {Path(f).name for f in toc_files()}
    assert set(named) <= pages, f"not in _toc.yml: {sorted(set(named) - pages)}"
    numbered = [Path(c["file"]).name for p in toc["parts"] if p.get("numbered")
                for c in p["chapters"]]
    assert set(numbered) <= set(named), f"missing: {sorted(set(numbered) - set(named))}"
    (part3,) = [p for p in toc["parts"] if p["caption"].startswith("Part III")]
    definition = re.search(r'"Part\s+III"\s+means\s+the\s+chapters(.*?)\.\s', text, re.S)
    assert definition, 'notation.md must say which chapters "Part III" means'
    assert re.findall(r"\{doc\}`([\w-]+)`", definition.group(1)) == [
        Path(c["file"]).name for c in part3["chapters"]]


def imported_modules(source):
    """The top-level modules a code cell imports (IPython's magics and shell lines aside)."""
    code = "\n".join(line for line in source.splitlines()
                     if not line.lstrip().startswith(("%", "!")))
    found = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.add(node.module.split(".")[0])
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)):
            found.add(node.args[0].value.split(".")[0])
    return found


def test_chapters_import_only_what_requirements_installs():
    """The execution cache keys a chapter on the versions of the distributions the book
    runs on (requirements.txt and what it requires, booktools.sphinxext.execution), not
    on the test tools: so every module a chapter or homework imports comes from Python's
    standard library or from one of those distributions."""
    book = set(execution.book_distributions(ROOT))  # canonical names
    owners = metadata.packages_distributions()
    pages = [p for p in sorted(ROOT.glob("book/**/*.md")) if "_build" not in p.parts
             and p.read_text().startswith("---\njupytext:")]
    pages += sorted(p for p in ROOT.glob("book/**/*.ipynb") if "_build" not in p.parts)
    assert len(pages) > 20
    outside = {}
    for page in pages:
        for cell in jupytext.read(page).cells:
            if cell.cell_type != "code":
                continue
            for module in imported_modules(cell.source) - set(sys.stdlib_module_names):
                dists = {canonicalize_name(d) for d in owners.get(module, [])}
                if not dists & book:
                    outside.setdefault(module, set()).add(page.relative_to(ROOT).as_posix())
    assert outside == {}, f"imported from outside requirements.txt: {outside}"
    assert {"numpy", "lincls", "matplotlib", "scikit-learn"} <= book


def test_the_key_holds_what_requirements_installs(tmp_path):
    """book_distributions: the file's names (comments, options and names not installed
    aside), lincls and booktools, and what they require, transitively, with the extras
    asked for; no file: None (the key then holds every installed distribution)."""
    assert execution.book_distributions(tmp_path) is None
    (tmp_path / "requirements.txt").write_text(
        "# pins\n-e .\njupytext==1.18.1  # a note\nnot-a-real-distribution-xyz==1.0\n")
    found = execution.book_distributions(tmp_path)
    assert {"jupytext", "lincls", "booktools", "numpy", "nbformat", "markdown-it-py"} <= set(found)
    assert found["jupytext"] == metadata.version("jupytext")
    assert "not-a-real-distribution-xyz" not in found
    assert "pytest" not in found and "nbgrader" not in found  # test tools: not asked for
    assert "ipywidgets" not in found  # an extra of lincls, not asked for
    (tmp_path / "requirements.txt").write_text("jupytext==1.18.1\nlincls[widgets]\n")
    assert "ipywidgets" in execution.book_distributions(tmp_path)  # lincls's extra


def test_context_parts_are_what_the_key_hashes(monkeypatch):
    """context_parts names every file of lincls and booktools, the versions and the numeric
    environment, and execution_context is their hash: a variable that changes results
    changes both."""
    parts = execution.context_parts(ROOT)
    assert {"lincls/__init__.py", "booktools/sphinxext/execution.py"} <= set(parts["sources"])
    assert f"numpy=={metadata.version('numpy')}" in parts["versions"]
    before = execution.execution_context(ROOT)
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    assert "OMP_NUM_THREADS=7" in execution.context_parts(ROOT)["env"]
    assert execution.execution_context(ROOT) != before


def test_requirements_pin_everything_the_book_runs_on():
    """requirements.txt pins every distribution the execution cache's key holds, at the
    version installed here: an unpinned one that PyPI released between two installs would
    make the second execute every chapter again (the key leaves out pip and setuptools,
    the venv's own)."""
    found = execution.book_distributions(ROOT)
    pins = {canonicalize_name(r.name): str(r.specifier).removeprefix("==")
            for r in execution.named_requirements(ROOT)}
    wanted = {name: version for name, version in found.items()
              if name not in ("lincls", "booktools")}
    assert not set(execution.INSTALLERS) & set(found), "the venv's own tools are not keyed"
    assert {n: pins.get(n) for n in wanted if pins.get(n) != wanted[n]} == {}, \
        "pin these in requirements.txt at the installed version"
    assert set(pins) <= set(found), "pinned, yet nothing the book runs on requires it"
