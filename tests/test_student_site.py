"""The student edition of the website holds no solution (``make student-book``).

The whole output tree (HTML, ``_sources``, executed notebooks, doctrees, search index,
generated sources) is searched for every line of every chapter ``{solution}`` block and
every solution or hidden-test line of every homework. Text is compared after removing
everything but letters and digits, so highlighted code (split into ``<span>``s), HTML
entities and JSON escapes do not hide a leak. Lines that the book also shows outside
solutions are not secrets and are left out. As a control, the same search must find
most of those lines in the teacher site.
"""

import html
import json
import re
from pathlib import Path

import nbformat
import pytest

from lincls import homework as hw

ROOT = Path(__file__).resolve().parents[1]
STUDENT = ROOT / "_build" / "student"
TEACHER_HTML = ROOT / "_build" / "html"
BINARY = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".woff", ".woff2", ".ttf", ".eot"}
MIN_CHARS = 10  # a "line" shorter than this (letters and digits) is not a secret

pytestmark = pytest.mark.student_site


def norm(text):
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from _strings(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _strings(value)


def file_text(path):
    raw = path.read_bytes().decode("utf-8", errors="ignore")
    if path.suffix in (".html", ".htm"):
        return html.unescape(re.sub(r"<[^>]+>", "", raw))
    if path.suffix in (".ipynb", ".json"):
        try:
            return "\n".join(_strings(json.loads(raw)))
        except json.JSONDecodeError:
            return raw
    return raw


def secrets_and_public():
    """(secret lines by source, normalized public text) of the teacher sources."""
    secrets, public = [], []
    for path in sorted((ROOT / "book").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        secrets += [(path, ln) for ln in hw.chapter_solution_lines(text)]
        public.append(hw.strip_chapter_solutions(text))
    for path in sorted((ROOT / "book" / "homework").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        secrets += [(path, ln) for ln in hw.solution_lines(nb)]
        public += hw.public_lines(nb)
    public += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "lincls").glob("*.py"))]
    # files the student sources carry for Binder
    for name in ("README.md", "requirements.txt", "pyproject.toml", "_toc.yml", "_config.yml"):
        public.append((ROOT / name).read_text(encoding="utf-8"))
    public_norm = norm("\n".join(public))
    kept = [
        (src, ln.strip())
        for src, ln in secrets
        if len(norm(ln)) >= MIN_CHARS and norm(ln) not in public_norm
    ]
    return kept


@pytest.fixture(scope="module")
def student_site():
    if not (STUDENT / "html" / "index.html").exists():
        hw.build_student_site(ROOT, STUDENT)
    return STUDENT


def haystacks(root):
    return {
        p: norm(file_text(p))
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix.lower() not in BINARY
    }


def test_no_solution_anywhere_in_the_student_site(student_site):
    secrets = secrets_and_public()
    assert secrets, "no solution lines found in the book: the test would prove nothing"
    files = haystacks(student_site)
    assert any(p.suffix == ".html" for p in files)
    leaks = [
        f"{src.relative_to(ROOT)}: {line!r} in {p.relative_to(ROOT)}"
        for src, line in secrets
        for p, hay in files.items()
        if norm(line) in hay
    ]
    assert not leaks, "\n".join(leaks[:20])


def test_the_search_finds_solutions_in_the_teacher_site():
    """Control: the same search, on the teacher site, finds the solutions."""
    if not (TEACHER_HTML / "index.html").exists():
        pytest.fail("build the teacher site first (make book)")
    secrets = [(s, ln) for s, ln in secrets_and_public() if s.suffix == ".md"]
    hay = "".join(haystacks(TEACHER_HTML).values())
    found = sum(norm(ln) in hay for _, ln in secrets)
    assert secrets and found >= 0.8 * len(secrets), (found, len(secrets))


def test_the_student_site_shows_exercises_and_homework(student_site):
    pages = {p: p.read_text(encoding="utf-8") for p in (student_site / "html").rglob("*.html")}
    assert any(hw.STUDENT_SOLUTION_NOTE in text for text in pages.values())
    assert any("solution" in p.name or "exercise" in text for p, text in pages.items())
    for path in sorted((ROOT / "book" / "homework").glob("*.ipynb")):
        page = student_site / "html" / "book" / "homework" / f"{path.stem}.html"
        if page.exists():
            assert "YOUR CODE HERE" in page.read_text(encoding="utf-8") or "YOUR ANSWER HERE" in (
                page.read_text(encoding="utf-8")
            )
    assert "(student edition)" in pages[student_site / "html" / "book" / "index.html"]
