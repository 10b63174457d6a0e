"""Checks of the built website (_build/html); run by `make test` after the book build."""

import re
from pathlib import Path

import pytest
from test_book_config import toc_files

from booktools.sphinxext.slides import SUFFIX as SLIDES

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
pytestmark = pytest.mark.site


@pytest.fixture(scope="module")
def pages():
    if not (HTML / "index.html").exists():
        pytest.fail("_build/html is missing: build the book first (make book)")
    skip = {"_static", "_sources", "_images", "_sphinx_design_static"}
    return {p.relative_to(HTML).with_suffix("").as_posix() for p in HTML.rglob("*.html")
            if not skip & set(p.relative_to(HTML).parts) and not p.name.endswith(SLIDES)}


def test_every_deck_is_a_chapter_s(pages):
    """The slides (booktools.sphinxext.slides) sit beside the chapter they come from."""
    decks = [p.relative_to(HTML).as_posix().removesuffix(SLIDES) for p in HTML.rglob(f"*{SLIDES}")]
    assert len(decks) >= 3
    assert set(decks) <= set(toc_files()), sorted(set(decks) - set(toc_files()))


def test_every_toc_entry_is_a_page(pages):
    assert set(toc_files()) <= pages


def test_nothing_outside_the_toc_is_a_page(pages):
    generated = {"index", "genindex", "search", "prf-prf"}
    extra = pages - set(toc_files()) - generated
    assert extra == set(), f"pages not in the TOC: {sorted(extra)}"
    assert not any(p.lower().startswith(("readme", "lincls", "tests", "benchmarks")) for p in pages)


def test_the_execution_table_lists_every_chapter_notebook():
    """The chapters are read in parallel processes (booktools.sphinxext.execution); their
    execution records are merged into the one table of the execution status page."""
    page = (HTML / "book" / "execution_status.html").read_text()
    listed = re.findall(r">(book/[\w/]+)<", page)
    notebooks = [name for name in toc_files() if "homework" not in name
                 and "\nkernelspec:" in (ROOT / f"{name}.md").read_text()]
    assert sorted(listed) == sorted(notebooks)
    assert page.count("✅") == len(notebooks)


def test_chapters_show_their_computed_output():
    page = (HTML / "book" / "linear_discriminants.html").read_text()
    assert "14 of 16 gates are linearly separable" in page
    assert "Traceback" not in page


def test_every_page_names_the_edition_and_the_licenses(pages):
    """booktools.sphinxext.edition: the footer of every page, with links to book/about."""
    import yaml

    edition = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]["release"]
    for page in sorted(pages - {"index"}):  # index.html only redirects to book/index
        text = (HTML / f"{page}.html").read_text()
        footer = re.search(r'<p class="lincls-edition">(.*?)</p>', text, re.S)
        assert footer, f"{page}: no edition in the footer"
        assert f"edition {edition}" in footer[1], page
        assert "CC BY 4.0" in footer[1] and "MIT" in footer[1], page
        about = "" if page == "book/about" else r'[^"#]*about\.html'
        assert re.search(rf'href="{about}#how-to-cite"', footer[1]), page


def test_the_about_page_shows_the_citation_and_the_changes():
    about = (HTML / "book" / "about.html").read_text()
    text = re.sub(r"<[^>]+>", "", about)
    assert 'id="how-to-cite"' in about and 'id="changes-between-editions"' in about
    newest = re.search(r"^## (\S+ \(\d{4}-\d\d-\d\d\))", (ROOT / "CHANGELOG.md").read_text(),
                       re.M)[1]
    assert newest in text  # the changelog is included
    edition = re.search(r'release: "([^"]+)"', (ROOT / "_config.yml").read_text())[1]
    assert "{{" not in text and f"This is edition {edition}" in " ".join(text.split())


def test_no_quiz_answer_passes_a_homework_check():
    """Quizzes are formative: no number a quiz accepts as right is a graded homework answer
    (lincls.homework.check, the students' self-check against the teacher's values, refuses
    every quiz answer). Only the scalar answers a quiz number could be are tried (scrypt
    makes each try slow): an integer answer near an integer, any answer within its bound."""
    import json as jsonlib

    from lincls.homework import ANSWERS, check

    numbers = {q["answer"] for path in HTML.rglob("*.html") for key in re.findall(
        r'<script type="application/json" class="lincls-quiz-key">(.*?)</script>',
        path.read_text(errors="ignore"), re.S)
        for q in jsonlib.loads(key.replace("<\\/", "</")) if q["kind"] == "number"}
    assert len(numbers) >= 10  # the chapters have quizzes (tests/test_browser.py counts them)
    graded = {name: entry for name, entry in jsonlib.loads(ANSWERS.read_text())["answers"].items()
              if entry["shape"] == []}
    for name, entry in graded.items():
        for x in numbers:
            near = (entry["kind"] != "integer"
                    or abs(x - round(x)) <= entry["atol"] * entry["scale"])
            if near and abs(x) <= entry["bound"] + entry["atol"]:
                assert not check(name, x, quiet=True), f"a quiz answer {x} is {name}'s"
