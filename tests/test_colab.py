"""Every chapter with code opens in Colab (booktools.sphinxext.colab).

The launch menu's Colab button opens the chapter's notebook as the site serves it
(``_notebooks/<page>.ipynb``, with its install cell) through Colab's GitHub path, in the
branch the site is published to (``launch_buttons.colab_branch``: ``gh-pages``, where
``make publish`` pushes it), of the repository of ``repository.url``.

- a tiny Sphinx project with a fork's URL (unit layer): the button names the fork, the
  notebook is where the URL says; no button for a page without code or without a notebook;
- the built site (``site``, after the book build): every chapter page with code has the
  button, of the right shape, naming a notebook the site holds;
- ``make publish`` of the built site to a bare repository (``publishing``): the
  ``gh-pages`` branch holds every notebook a button names.

That a served notebook runs with nothing but the lincls wheel in a fresh venv (nbclient)
is ``tests/test_wheel.py``'s (three chapters, the same files the buttons name).
"""

import html
import io
import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest
import yaml

from booktools.sphinxext.colab import BRANCH, LABEL, colab_url, notebook_path
from booktools.sphinxext.notebooks import FOLDER

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
FORK = "https://github.com/our-course/linear-classification"
BUTTON = re.compile(rf'<a href="([^"]*)"[^>]*?class="[^"]*btn-{LABEL}\b')


def config():
    data = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    launch = data.get("launch_buttons") or {}
    return (data["repository"]["url"], launch.get("colab_branch") or BRANCH,
            launch.get("colab_url"))


def colab_links(page):
    """The Colab buttons' URLs of a built page."""
    return [html.unescape(u) for u in BUTTON.findall(page.read_text(encoding="utf-8"))]


def linked_notebook(url, repository_url, branch, colab):
    """The notebook's path in the published branch that a Colab URL names (asserting its
    shape: Colab's GitHub path, the repository's owner and name, the branch)."""
    owner, repo = urlsplit(repository_url).path.strip("/").removesuffix(".git").split("/")
    prefix = f"{colab.rstrip('/')}/github/{owner}/{repo}/blob/{branch}/"
    assert url.startswith(prefix), url
    path = url[len(prefix):]
    assert path.startswith(f"{FOLDER}/") and path.endswith(".ipynb") and ".." not in path, url
    return path


def has_code(notebook):
    return any(c.cell_type == "code" for c in nbformat.read(notebook, as_version=4).cells)


def check_site(site, repository_url, branch, colab):
    """Every page of ``site`` whose served notebook has code has one Colab button naming
    that notebook, in ``site`` at the path the published branch holds; no other page has
    one. Returns {page: notebook path}."""
    linked = {}
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site)
        if {"_static", "_sources", "_images"} & set(rel.parts):
            continue
        links = colab_links(page)
        served = site / notebook_path(rel.with_suffix("").as_posix())
        if served.is_file() and has_code(served):
            assert len(links) == 1, f"{rel}: {len(links)} Colab buttons"
            path = linked_notebook(links[0], repository_url, branch, colab)
            assert path == notebook_path(rel.with_suffix("").as_posix()), (rel, path)
            assert (site / path).is_file(), path
            linked[rel.as_posix()] = path
        else:
            assert not links, f"{rel}: a Colab button, but no served notebook with code"
    return linked


# --- the extension on a tiny project (unit layer) ----------------------------------------
CHAPTER = """---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3
---

# {title}

{body}
"""


def test_colab_url_names_the_served_notebook_in_the_published_branch():
    assert colab_url(FORK + ".git", "book/perceptron", "pages") == (
        "https://colab.research.google.com/github/our-course/linear-classification/blob/"
        "pages/_notebooks/book/perceptron.ipynb")
    assert colab_url(FORK, "book/x", colab="") is None  # colab_url empty: no button


def test_a_fork_gets_buttons_that_open_its_notebooks(tmp_path):
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    (src / "book").mkdir(parents=True)
    code = "```{code-cell} ipython3\nprint(1 + 1)\n```"
    pages = {"book/chapter": ("A chapter", code),
             "book/notation": ("Notation", "No code here."),
             "book/teachers": ("Teachers", "```{code-cell} ipython3\nimport booktools\n```")}
    for name, (title, body) in pages.items():
        (src / f"{name}.md").write_text(CHAPTER.format(title=title, body=body))
    (src / "index.md").write_text("# Home\n\n```{toctree}\n" + "\n".join(pages) + "\n```\n")
    (src / "conf.py").write_text("\n".join([
        "extensions = ['myst_nb', 'booktools.sphinxext.binder', 'booktools.sphinxext.notebooks']",
        "html_theme = 'sphinx_book_theme'",
        "nb_execution_mode = 'off'",
        "mathjax3_config = {'tex': {'macros': {'R': '\\\\mathbb{R}'}}}",
        f"html_theme_options = {{'repository_url': {FORK!r}, 'repository_branch': 'main',",
        "    'launch_buttons': {'binderhub_url': 'https://mybinder.org',",
        "                       'colab_url': 'https://colab.research.google.com'}}",
    ]) + "\n")
    out = tmp_path / "html"
    app = Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html",
                 status=None, warning=io.StringIO(), freshenv=True)
    app.build()
    linked = check_site(out, FORK, "gh-pages", "https://colab.research.google.com")
    assert linked == {"book/chapter.html": "_notebooks/book/chapter.ipynb"}
    chapter = (out / "book" / "chapter.html").read_text()
    # next to Binder, in the launch menu
    menu = chapter[chapter.index("dropdown-launch-buttons"):]
    menu = menu[:menu.index("</ul>")]
    assert menu.index("mybinder.org") < menu.index("colab.research.google.com")
    # the theme's own button (the chapter's .md source on main) is gone
    assert chapter.count("colab.research.google.com") == 1
    assert 'src="../_static/images/logo_colab.png"' in menu
    assert (out / "_static" / "images" / "logo_colab.png").is_file()


# --- the built site ------------------------------------------------------------------------
@pytest.mark.site
def test_every_chapter_with_code_opens_its_served_notebook_in_colab():
    if not (HTML / "index.html").is_file():
        pytest.fail("_build/html is missing: build the book first (make book)")
    repository_url, branch, colab = config()
    assert colab, "_config.yml: launch_buttons.colab_url is empty"
    linked = check_site(HTML, repository_url, branch, colab)
    assert len(linked) >= 20
    assert "book/perceptron.html" in linked and "book/teachers.html" not in linked
    # the notebooks tests/test_wheel.py runs with the wheel alone are ones the buttons open
    from test_wheel import CHAPTERS
    assert {f"book/{name}.html" for name in CHAPTERS} <= set(linked)


@pytest.mark.publishing
def test_the_published_branch_holds_every_notebook_a_button_names(tmp_path):
    """``make publish`` of the built site: ``git ls-tree`` of its branch holds each path."""
    from test_publishing import git, make

    if not (HTML / "index.html").is_file():
        pytest.fail("_build/html is missing: build the book first (make book)")
    repository_url, branch, colab = config()
    assert branch == "gh-pages"  # where `make publish` pushes the site
    paths = set()
    for page in sorted(HTML.rglob("*.html")):
        paths |= {linked_notebook(u, repository_url, branch, colab) for u in colab_links(page)}
    assert len(paths) >= 20
    bare = tmp_path / "site.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    make("publish", f"REMOTE={bare}", f"SITE={HTML}")  # with the PDF of `make pdf`
    tree = set(git("ls-tree", "-r", "--name-only", branch, cwd=bare).split())
    assert paths <= tree, sorted(paths - tree)
    for path in sorted(paths)[:3]:  # the files themselves, as the site has them
        shown = subprocess.run(["git", "show", f"{branch}:{path}"], cwd=bare, check=True,
                               capture_output=True).stdout
        assert shown == (HTML / path).read_bytes(), path
