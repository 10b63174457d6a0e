"""lincls on its own, and the chapters as the website serves them (run by `make wheel`).

``python -m build`` makes lincls's wheel and sdist: ``twine check`` must pass, the wheel
must declare every third-party module lincls imports and nothing of the book's machinery,
and the sdist must hold the package alone. The wheel is then installed into a fresh venv
(the pins of requirements.txt as constraints, so pip's cache answers), and three chapter
notebooks run there with nbclient, from a folder outside the repository: the notebooks the
website serves (``_build/html/_notebooks``, written by ``booktools.sphinxext.notebooks``;
without a built site the same code makes them from the sources). Their first code cell,
which installs lincls where it is missing, must find it and do nothing.
"""

import ast
import email.parser
import importlib.metadata
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from test_book_config import toc_files

import lincls
from booktools.kernels import STARTUP_TIMEOUT
from booktools.sphinxext.binder import config_macros
from booktools.sphinxext.notebooks import FOLDER, LABEL, chapter_notebook, install_source

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
pytestmark = pytest.mark.wheel

#: cheap chapters (under 10 s each in the clean venv); troubleshooting uses ipywidgets,
#: whose install cell checks for them too
CHAPTERS = ["binary_classification", "linear_discriminants", "troubleshooting"]
#: the book's machinery: never a dependency of lincls
MACHINERY = {"sphinx", "jupyter-book", "myst-nb", "myst-parser", "nbgrader", "nbformat",
             "nbclient", "jupytext", "booktools", "sphinx-book-theme", "playwright"}


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{cmd} failed:\n{(result.stdout + result.stderr)[-3000:]}"
    return result


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The wheel and the sdist, built as a release builds them (``make dist``)."""
    out = tmp_path_factory.mktemp("dist")
    env = {**os.environ, "TMPDIR": str(tmp_path_factory.mktemp("tmp"))}
    run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], env=env, timeout=600)
    wheel, = out.glob("lincls-*.whl")
    sdist, = out.glob("lincls-*.tar.gz")
    return wheel, sdist


def lincls_imports():
    """The top-level modules lincls's code imports, other than its own and the stdlib."""
    found = set()
    for path in (ROOT / "lincls").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"lincls", "__future__"}


def test_the_wheel_declares_what_lincls_imports_and_no_machinery(dist):
    wheel, _ = dist
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta_name, = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = email.parser.Parser().parsestr(z.read(meta_name).decode())
    assert meta["Name"] == "lincls" and meta["Version"] == lincls.__version__
    requires = meta.get_all("Requires-Dist")
    plain = {normalize(re.match(r"[\w.-]+", r)[0]) for r in requires if "extra ==" not in r}
    everything = {normalize(re.match(r"[\w.-]+", r)[0]) for r in requires}
    distributions = importlib.metadata.packages_distributions()
    imported = {normalize(distributions[module][0]) for module in lincls_imports()}
    assert imported == plain, f"imports {sorted(imported)}, declares {sorted(plain)}"
    assert not everything & MACHINERY
    assert {n.split("/")[0] for n in names} == {"lincls", f"lincls-{lincls.__version__}.dist-info"}
    assert {"lincls/homework/answers.json", "lincls/quiz.js", "lincls/quiz.css"} <= set(names)


def test_the_sdist_holds_lincls_alone(dist):
    _, sdist = dist
    with tarfile.open(sdist) as tar:
        names = [Path(n) for n in tar.getnames()]
    top = {n.parts[1] for n in names if len(n.parts) > 1}
    assert not top & {"tools", "tests", "book", "benchmarks", "_build", ".github"}, top
    assert top <= {"lincls", "lincls.egg-info", "LICENSE", "README.md", "PKG-INFO",
                   "pyproject.toml", "setup.cfg", "MANIFEST.in"}, top
    packaged = {Path(*n.parts[1:]).as_posix() for n in names if n.suffix == ".py"}
    tracked = run(["git", "ls-files", "lincls/*.py"], cwd=ROOT).stdout.split()
    assert packaged == set(tracked)


def test_twine_check_passes(dist):
    result = run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist)])
    assert result.stdout.count("PASSED") == 2, result.stdout


@pytest.fixture(scope="module")
def clean_venv(dist, tmp_path_factory):
    """A fresh venv with the wheel (and its widgets extra) and ipykernel: no repository."""
    wheel, _ = dist
    venv = tmp_path_factory.mktemp("venv")
    # no pip of its own: this venv's pip installs into it (``--python``), faster; and no
    # byte code for every module installed: its three notebooks import a small part of
    # it (make wheel 32.6 s so, 55.3 s with pip's byte code, measured; the other Pythons'
    # venvs, whose tests start many processes, keep it: tests/pythons.py)
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    pins = [line for line in (ROOT / "requirements.txt").read_text().splitlines()
            if re.match(r"[\w.-]+==", line)]
    constraints = venv / "constraints.txt"
    constraints.write_text("\n".join(pins) + "\n")
    kernel = next(p for p in pins if p.startswith("ipykernel=="))
    run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", "--disable-pip-version-check", "--no-compile", "-c", str(constraints),
         f"{wheel}[widgets]", kernel], cwd=venv, timeout=1200)
    return venv


def served_notebook(name):
    """The chapter's notebook as the website serves it, or made by the same code."""
    served = HTML / FOLDER / "book" / f"{name}.ipynb"
    if served.is_file():
        return nbformat.read(served, as_version=4)
    repository = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    return chapter_notebook((ROOT / "book" / f"{name}.md").read_text(encoding="utf-8"),
                            config_macros(ROOT),
                            install_source(repository["url"], repository.get("branch")))


@pytest.mark.parametrize("name", CHAPTERS)
def test_a_served_chapter_runs_with_the_wheel_alone(name, clean_venv, tmp_path, monkeypatch):
    nb = served_notebook(name)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    assert "import lincls" in nb.cells[first].source
    assert "%pip install" in nb.cells[first].source
    # where lincls comes from, and that the repository is not on the path
    nb.cells.append(nbformat.v4.new_code_cell(
        "import sys, lincls\nprint(sys.prefix)\nprint(lincls.__file__)\nprint(sys.path)"))
    kernels = tmp_path / "kernels"
    spec = kernels / "wheel"
    spec.mkdir(parents=True)
    spec.joinpath("kernel.json").write_text(
        '{"argv": ["%s", "-m", "ipykernel_launcher", "-f", "{connection_file}"], '
        '"display_name": "lincls wheel", "language": "python"}'
        % (clean_venv / "bin" / "python"))
    km = KernelManager(kernel_name="wheel",
                       kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]))
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(HOME=str(tmp_path), TMPDIR=str(tmp_path),
               MPLCONFIGDIR=str(clean_venv / "mplconfig"),  # font cache: once per venv
               NUMBA_CACHE_DIR=str(clean_venv / "numba"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))  # connection files
    client = NotebookClient(nb, km=km, timeout=600, startup_timeout=STARTUP_TIMEOUT,
                            resources={"metadata": {"path": str(work)}})
    client.execute(env=env)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, errors
    assert nb.cells[first].outputs == [], "the install cell ran pip though lincls was installed"
    prefix, where, path = nb.cells[-1].outputs[0]["text"].splitlines()
    assert Path(prefix).resolve() == clean_venv.resolve()
    assert Path(where).resolve().is_relative_to(clean_venv.resolve())
    assert not any(p and Path(p).resolve().is_relative_to(ROOT)
                   for p in ast.literal_eval(path)), path


def test_every_chapter_page_offers_its_notebook():
    """The download menu of every chapter (a MyST notebook in the TOC) links its notebook,
    which the site serves as the extension makes it from the chapter's source."""
    if not (HTML / "index.html").is_file():
        if os.environ.get("CI"):
            pytest.fail("_build/html is missing: build the book first (make book)")
        pytest.skip("_build/html is missing: build the book first (make book)")
    macros = config_macros(ROOT)
    repository = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    source = install_source(repository["url"], repository.get("branch"))
    offered = set()
    for name in toc_files():
        path = ROOT / f"{name}.md"
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        if "\nkernelspec:" not in text:
            continue
        if re.search(r"^\s*(from|import) booktools\b", text, re.M):  # the teachers' chapter
            continue
        html = (HTML / f"{name}.html").read_text(encoding="utf-8")
        link = re.search(rf'<a href="([^"]*)"[^>]*?class="[^"]*{LABEL}', html)
        assert link, f"{name}: no notebook in the download menu"
        served = (HTML / name).parent / link[1]
        assert served.resolve() == (HTML / FOLDER / f"{name}.ipynb").resolve(), link[1]
        nb = nbformat.read(served, as_version=4)
        nbformat.validate(nb)
        assert nb == chapter_notebook(text, macros, source), f"{name}: stale notebook"
        first = next(c for c in nb.cells if c.cell_type == "markdown")
        assert all(f"'\\{m}'" in first.source.split("\n---\n")[0] for m in macros), name
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        assert not code or '%pip install "lincls' in code[0] and source in code[0], name
        offered.add(f"{name}.ipynb")
    served = {p.relative_to(HTML / FOLDER).as_posix() for p in (HTML / FOLDER).rglob("*.ipynb")}
    assert served == offered
    assert len(offered) >= 20
