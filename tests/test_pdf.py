"""The PDF editions (``make pdf``, ``make student-pdf``), read back with poppler-utils.

Each edition opens (``pdfinfo``), has bookmarks, a table of contents with the parts and
numbered chapters, every chapter title, numbered equations, the bibliography, at least
as many pictures as the website has figures, and no raw MyST or TeX markup in its text
(``pdftotext``). The teacher edition holds the chapter solutions (the student-site
test's needles find them); the student edition holds none of them.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from chromium import require
from test_book_config import toc_files
from test_student_site import _blocks, hidden_solution_code, norm, secrets_and_pictures

from booktools.sphinxext.pdf import PDF_NAME, STUDENT_PDF_NAME

ROOT = Path(__file__).resolve().parents[1]
PDFS = {"teacher": ROOT / "_build" / "pdf" / PDF_NAME,
        "student": ROOT / "_build" / "pdf" / STUDENT_PDF_NAME}
SITES = {"teacher": ROOT / "_build" / "html", "student": ROOT / "_build" / "student" / "html"}
# what must never reach the reader: MyST roles and directives, TeX that MathJax did not
# typeset, the book's own macros
RAW = ["{eq}", "{ref}", "{numref}", "{cite", "{prf:", "{exercise", "{solution", "{math}",
       ":label:", ":class:", "```", "$$", "\\begin{", "\\end{", "\\frac", "\\cdot", "\\sum",
       "\\mathbf", "\\vw", "\\vx", "\\norm", "\\sign", "\\R ", "\\(", "\\["]

pytestmark = pytest.mark.pdf


@pytest.fixture(scope="module", autouse=True)
def poppler():
    require(shutil.which("pdfinfo") and shutil.which("pdftotext") and shutil.which("pdfimages"),
            "poppler-utils missing: run `make poppler` as root to install them")


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module", params=["teacher", "student"])
def edition(request):
    pdf = PDFS[request.param]
    if not pdf.is_file():
        make = "make pdf" if request.param == "teacher" else "make student-pdf"
        pytest.fail(f"{pdf.relative_to(ROOT)} is missing: run `{make}`")
    return request.param, pdf


@pytest.fixture(scope="module")
def text(edition):
    return run("pdftotext", "-enc", "UTF-8", str(edition[1]), "-")


def chapter_title(name):
    """The first level-one heading of a page listed in _toc.yml."""
    md = ROOT / f"{name}.md"
    if md.exists():
        lines, fence = md.read_text(encoding="utf-8").split("\n"), None
    else:
        cells = json.loads((ROOT / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
        lines, fence = [ln for c in cells if c["cell_type"] == "markdown"
                        for ln in "".join(c["source"]).split("\n")], None
    for line in lines:
        m = re.match(r"^\s*(`{3,}|~{3,})", line)
        if m:
            fence = None if fence and m[1].startswith(fence) else (fence or m[1])
        elif fence is None and line.startswith("# "):
            return line[2:].strip()
    raise AssertionError(f"{name} has no title")


def test_the_pdf_opens(edition):
    info = run("pdfinfo", str(edition[1]))
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M)[1])
    assert pages > 100, info
    assert re.search(r"^Page size:.*\(A4\)", info, re.M), info


def test_the_pdf_has_bookmarks_of_parts_and_chapters(edition):
    xml = run("pdftohtml", "-xml", "-i", "-q", "-stdout", "-l", "1", str(edition[1]))
    outline = re.findall(r"<item[^>]*>([^<]*)</item>", xml)
    assert "Part II · The perceptron" in outline, outline[:40]
    assert any(re.fullmatch(r"\d+\.? ?The perceptron.*", t) or t == "The perceptron"
               for t in outline), outline[:40]
    assert len(outline) > 3 * len(toc_files()), len(outline)  # parts, chapters, sections


def test_every_chapter_title_and_part_is_in_the_text(text):
    flat = norm(text)
    missing = [name for name in toc_files() if norm(chapter_title(name)) not in flat]
    assert not missing, missing

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    assert all(norm(part["caption"]) in flat for part in toc["parts"])


def test_the_table_of_contents_numbers_the_chapters(text):
    start = text.index("Contents")
    contents = text[start : start + 6000]
    assert "Part I · Foundations" in contents
    assert re.search(r"^1\.\s+Binary classification", contents, re.M), contents[:2000]
    assert re.search(r"^3\.\s+The perceptron", contents, re.M), contents[:2000]


def code_snippets():
    """What the book shows as code, where raw syntax is meant: the lines of its code cells
    and code blocks, inline code, the lincls sources (``literalinclude``) and the homework
    code cells. Prose and directives (``{exercise}``, ``{prf:...}``) are left out."""
    snippets = [line for p in sorted((ROOT / "lincls").rglob("*.py"))
                for line in p.read_text(encoding="utf-8").split("\n")]
    for path in sorted((ROOT / "book").rglob("*.md")):
        fence = None
        for line in path.read_text(encoding="utf-8").split("\n"):
            m = re.match(r"^\s*(`{3,}|~{3,}|:{3,})\s*(\S*)", line)
            if fence is None and m and m[1][0] != ":" and (
                    not m[2].startswith("{") or m[2] in ("{code-cell}", "{code-block}", "{code}")):
                fence = m[1]
            elif fence and line.strip() == fence:
                fence = None
            elif fence:
                snippets.append(line)
            else:
                snippets += re.findall(r"`+([^`]+)`+", line)
    for path in sorted((ROOT / "book" / "homework").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            snippets += (source.split("\n") if cell["cell_type"] == "code"
                         else re.findall(r"`+([^`]+)`+", source))
    return [re.sub(r"\s+", "", s) for s in snippets if s.strip()]


def test_no_raw_markup(text):
    """No MyST or TeX syntax outside what the book shows as code."""
    code = code_snippets()
    raw = []
    for needle in RAW + ["$"]:
        key = re.sub(r"\s+", "", needle)
        shown = [c for c in code if key in c]
        for m in re.finditer(re.escape(needle), text):
            window = re.sub(r"\s+", "", text[max(0, m.start() - 300) : m.end() + 300])
            if not any(c in window for c in shown):
                raw.append(text[max(0, m.start() - 60) : m.end() + 60])
    assert not raw, raw[:10]


def test_equations_are_numbered_and_referenced(edition, text):
    numbers = set(re.findall(r"\((\d+\.\d+)\)", text))
    assert len(numbers) > 50, sorted(numbers)
    assert re.search(r"\(3\.\d+\)", text)  # the perceptron's rule in chapter 3
    # every labelled equation is a destination, and references jump to it inside the PDF
    dests = run("pdfinfo", "-dests", str(edition[1]))
    assert len(re.findall(r'"equation-[^"]+"', dests)) > 50
    xml = run("pdftohtml", "-xml", "-i", "-q", "-stdout", "-f", "30", "-l", "60",
              str(edition[1]))
    assert len(re.findall(r'<a href="[^"#]*#\d+">', xml)) > 20  # links to a page of the PDF


def test_the_bibliography_is_in_it(text):
    bib = text[text.rindex("Bibliography"):]
    assert "Rosenblatt" in bib and "Cover" in bib, bib[:1000]


def site_figures(site):
    """The distinct pictures the site's pages show (plots, figures, animation frames)."""
    pictures = set()
    for page in site.rglob("*.html"):
        if {"_static", "_sources"} & set(page.relative_to(site).parts):
            continue
        html = page.read_text(encoding="utf-8", errors="ignore")
        pictures |= {src.rsplit("/", 1)[-1] for src in
                     re.findall(r'<img[^>]*\bsrc="([^"]+)"', html[html.find("<main"):])
                     if "_images/" in src or src.startswith("data:image")}
    return pictures


def pdf_pictures(pdf):
    """The distinct pictures in a PDF, less the grey JPEGs Chromium rasterizes the
    boxes' shadows into."""
    rows = [row.split() for row in run("pdfimages", "-list", str(pdf)).splitlines()[2:]]
    return {row[10] for row in rows
            if row[2] == "image" and not (row[5] == "gray" and row[8] == "jpeg")}


def test_every_figure_is_in_the_pdf(edition):
    name, pdf = edition
    if not (SITES[name] / "index.html").exists():
        pytest.fail(f"{SITES[name].relative_to(ROOT)} is missing: build that site first")
    figures, pictures = site_figures(SITES[name]), pdf_pictures(pdf)
    assert len(figures) > 30
    assert len(pictures) >= len(figures), (len(pictures), len(figures))


def plain_secrets():
    """The student-site test's secret lines that print as they are written: no math,
    role or markup that the book renders into other text."""
    return [(src, ln) for src, ln in secrets_and_pictures()[0]
            if not re.search(r"[$\\{}`]", ln)]


def hidden_code(path):
    """The code of the hidden cells only solutions need: neither edition prints it."""
    text = path.read_text(encoding="utf-8")
    return {ln.strip() for ln in hidden_solution_code(text, _blocks(text)[0])}


def test_solutions_are_in_the_teacher_pdf_only(edition, text):
    secrets = plain_secrets()
    hidden = {src: hidden_code(src) for src in {src for src, _ in secrets if src.suffix == ".md"}}
    chapters = [ln for src, ln in secrets if src.suffix == ".md" and ln not in hidden[src]]
    assert len(chapters) > 100
    flat = norm(text)
    if edition[0] == "teacher":  # control: the same search finds the expanded solutions
        found = [ln for ln in chapters if norm(ln) in flat]
        assert len(found) >= 0.8 * len(chapters), (len(found), len(chapters))
    else:
        found = [f"{src.relative_to(ROOT)}: {ln}" for src, ln in secrets if norm(ln) in flat]
        assert not found, found[:20]
        assert "The solution is not part of the student edition." in text.replace("\n", " ")


def test_each_site_offers_its_own_pdf_only(edition):
    """Every page's download menu links the PDF of its own edition, which is there; the
    student site never links (or ships) the teacher edition."""
    name, pdf = edition
    site, other = SITES[name], (STUDENT_PDF_NAME if name == "teacher" else PDF_NAME)
    assert (site / pdf.name).read_bytes() == pdf.read_bytes()
    pages = [p for p in site.rglob("*.html") if not {"_static", "_sources"} & set(p.parts)]
    linked = [p for p in pages if f'{pdf.name}"' in p.read_text(encoding="utf-8")]
    assert len(linked) >= len(toc_files()), (len(linked), len(toc_files()))
    if name == "student":
        assert not any(other in p.read_text(encoding="utf-8") for p in pages)
        assert not (site / other).exists()


def test_the_front_matter_names_the_edition_and_the_licenses(edition, text):
    """The page after the title: the footer's paragraph (booktools.sphinxext.edition)."""
    release = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]["release"]
    front = " ".join(text[: text.index("Contents")].split())
    assert f"edition {release}" in front, front[-600:]
    assert "Text, figures and exercises: CC BY 4.0; code: MIT." in front, front[-600:]
