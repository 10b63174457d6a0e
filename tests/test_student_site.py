"""The student edition of the website holds no solution (``make student-book``).

Everything the student edition ships is searched: the HTML, ``_sources`` and
``_downloads``, the executed notebooks, the search index, the generated sources (the
student repository) and, in notebooks, the pictures attached to cells. The secrets are
every line of every chapter ``{solution}`` block, of every code cell tagged
``solution-only`` and of every solution region, answer cell and hidden test of the
homework, and every picture attached to an answer cell.

The teacher sources are read by this file's own small parser (plain ``json`` and
regular expressions), not by ``booktools.homework``: a marker that the release tool
misreads cannot hide a leak from a test that reads it with the same code. This parser
is deliberately loose: a line whose letters hold BEGIN and SOLUTION or HIDDEN TEST, in
any spelling, opens a region.

Text is compared after removing everything but letters and digits, so highlighted code
(split into ``<span>``s), HTML entities and JSON escapes do not hide a leak. Lines that
the book also shows outside solutions are not secrets and are left out. As a control,
the same search must find most of the chapter solutions in the teacher site.
"""

import html
import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
STUDENT = ROOT / "_build" / "student"
TEACHER_HTML = ROOT / "_build" / "html"
BINARY = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".woff", ".woff2", ".ttf", ".eot",
          ".pickle", ".doctree"}
MIN_CHARS = 10  # a "line" shorter than this (letters and digits) is not a secret

pytestmark = pytest.mark.student_site


def norm(text):
    return re.sub(r"[^0-9a-z]+", "", text.lower())


# --- an independent reading of the teacher sources --------------------------------
def _letters(line):
    return re.sub(r"[^A-Z]", "", line.upper())


def notebook_secrets(path):
    """(secret lines, public lines, attachment payloads) of a teacher notebook."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    secret, public, pictures = [], [], []
    for cell in nb["cells"]:
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        meta = cell.get("metadata", {})
        answer = bool((meta.get("nbgrader") or {}).get("solution"))
        tagged = "solution-only" in (meta.get("tags") or [])
        lines, inside, marked = src.split("\n"), False, False
        for line in lines:
            key = _letters(line)
            if "BEGIN" in key and ("SOLUTION" in key or "HIDDENTEST" in key):
                inside = marked = True
            elif "END" in key and ("SOLUTION" in key or "HIDDENTEST" in key):
                inside = False
            elif inside or tagged:
                secret.append(line)
            else:
                public.append(line)
        if answer and not marked:  # a whole answer cell
            secret += [ln for ln in lines if ln not in secret]
            public = [ln for ln in public if ln not in lines]
        if answer:
            for payload in (cell.get("attachments") or {}).values():
                pictures += [v for v in payload.values() if isinstance(v, str)]
    return secret, public, pictures


SOLUTION_TITLE = re.compile(
    r"\{(admonition|dropdown)\}.*(solution|answer|l(ö|oe)sung|antwort|soluci(ó|o)n|respuesta|"
    r"r(é|e)ponse|corrig(é|e)|soluzione|risposta|решение|ответ|解答|答案)", re.I)


def chapter_secrets(text):
    """(secret lines, public lines) of a MyST chapter: the bodies of ``{solution}``
    blocks (of any case, gated ``{solution-start}`` ... ``{solution-end}`` regions too)
    and of code cells tagged ``solution-only``, and the code of a hidden cell (tagged
    ``remove-cell`` or ``remove-input``) whose numbers only solutions quote. Plain code
    blocks (examples of the syntax) are public; other directives (an ``{exercise}``)
    are read inside."""
    secret, public = _blocks(text)
    hidden = hidden_solution_code(text, secret)
    return secret + hidden, [line for line in public if line not in set(hidden)]


def hidden_solution_code(text, secret):
    """The code of each hidden cell that stores ``prose`` numbers quoted only in the
    ``secret`` lines (and in none of the others)."""
    quoted = "\n".join(secret)
    found = []
    for m in re.finditer(r"^```\{code-cell\}[^\n]*\n(.*?)^```$", text, re.M | re.S):
        body = m[1]
        if not re.search(r"^:tags:.*remove-(cell|input)|^tags:.*remove-(cell|input)", body, re.M):
            continue
        keys = re.findall(r"""(?:prose\[|store_number\()\s*["']([\w-]+)["']""", body)
        rest = text[: m.start()] + text[m.end():]
        public = rest
        for line in secret:
            public = public.replace(line, "")
        read = [k for k in keys if re.search(rf"prose\[\s*['\"]{re.escape(k)}['\"]", quoted)]
        if read and not any(re.search(rf"prose\[\s*['\"]{re.escape(k)}['\"]", public)
                            for k in keys):
            found += body.split("\n")
    return found


def _blocks(text):
    lines = text.split("\n")
    secret, public, n, open_directives, gated = [], [], 0, [], False
    while n < len(lines):
        m = re.match(r"^\s*(`{3,}|:{3,}|~{3,})\s*(\S.*)?$", lines[n])
        if not m:
            (secret if gated else public).append(lines[n])
            n += 1
            continue
        fence, info = m[1], (m[2] or "").strip()
        gate = re.match(r"\{solution-(start|end)\}", info, re.I)
        if gate:
            gated = gate[1].lower() == "start"
            end = next((k for k in range(n + 1, len(lines))
                        if re.fullmatch(rf"\s*{re.escape(fence[0])}{{{len(fence)},}}\s*",
                                        lines[k])), n)
            n = end + 1
            continue
        if not info and open_directives and fence[0] == open_directives[-1][0] and len(
                fence) >= len(open_directives[-1]):
            open_directives.pop()  # the end of an {exercise} or the like
            n += 1
            continue
        if fence[0] == ":" and not info.startswith("{"):
            public.append(lines[n])
            n += 1
            continue
        end = next((k for k in range(n + 1, len(lines))
                    if re.fullmatch(rf"\s*{re.escape(fence[0])}{{{len(fence)},}}\s*", lines[k])),
                   len(lines))
        body = lines[n + 1 : end]
        if gated or info.lower().startswith("{solution}") or (
                info.startswith("{code-cell}") and any(
                    "solution-only" in b for b in body if b.startswith(":"))) or \
                SOLUTION_TITLE.match(info):
            secret += body
        elif info.startswith("{") and not info.startswith("{code-cell}"):
            open_directives.append(fence)  # read its inside line by line
            (secret if gated else public).append(lines[n])
            n += 1
            continue
        else:
            public += body
        n = end + 1
    return secret, public


def secrets_and_pictures():
    secrets, public, pictures = [], [], []
    for path in sorted((ROOT / "book").rglob("*.md")):
        s, p = chapter_secrets(path.read_text(encoding="utf-8"))
        secrets += [(path, ln) for ln in s]
        public += p
    for path in sorted((ROOT / "book" / "homework").glob("*.ipynb")):
        s, p, pics = notebook_secrets(path)
        secrets += [(path, ln) for ln in s]
        public += p
        pictures += [(path, pic) for pic in pics]
    # the packages the student sources carry (lincls, and booktools for the site's build)
    public += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "lincls").rglob("*.py"))]
    public += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tools").rglob("*.py"))]
    # files the student sources carry for Binder
    for name in ("README.md", "requirements.txt", "pyproject.toml", "_toc.yml", "_config.yml"):
        public.append((ROOT / name).read_text(encoding="utf-8"))
    public_norm = norm("\n".join(public))
    kept = [
        (src, ln.strip())
        for src, ln in secrets
        if len(norm(ln)) >= MIN_CHARS and norm(ln) not in public_norm
    ]
    return kept, pictures


# --- what the student edition ships --------------------------------------------------
def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield key
            yield from _strings(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _strings(value)


def file_text(path):
    raw = path.read_bytes().decode("utf-8", errors="ignore")
    if path.suffix in (".html", ".htm"):
        return raw + "\n" + html.unescape(re.sub(r"<[^>]+>", "", raw))
    if path.suffix in (".ipynb", ".json"):
        try:
            return "\n".join(_strings(json.loads(raw)))  # cells, outputs and attachments
        except json.JSONDecodeError:
            return raw
    return raw


@pytest.fixture(scope="module")
def student_site():
    if not (STUDENT / "html" / "index.html").exists():
        from booktools.homework import build_student_site

        build_student_site(ROOT, STUDENT)
    return STUDENT


def shipped(root):
    """Every file of the student edition but the build's private doctrees."""
    return [p for p in sorted(root.rglob("*"))
            if p.is_file() and "doctrees" not in p.relative_to(root).parts[:1]]


def haystacks(root):
    return {p: norm(file_text(p)) for p in shipped(root) if p.suffix.lower() not in BINARY}


def test_no_solution_anywhere_in_the_student_site(student_site):
    secrets, _ = secrets_and_pictures()
    assert secrets, "no solution lines found in the book: the test would prove nothing"
    files = haystacks(student_site)
    kinds = {p.suffix for p in files}
    assert {".html", ".ipynb", ".md", ".js"} <= kinds, kinds  # pages, notebooks, index
    assert any(p.name == "searchindex.js" for p in files)
    leaks = [
        f"{src.relative_to(ROOT)}: {line!r} in {p.relative_to(ROOT)}"
        for src, line in secrets
        for p, hay in files.items()
        if norm(line) in hay
    ]
    assert not leaks, "\n".join(leaks[:20])


def test_no_attached_picture_of_an_answer_in_the_student_site(student_site):
    _, pictures = secrets_and_pictures()
    blobs = [p.read_bytes() for p in shipped(student_site)]
    for src, picture in pictures:
        assert not any(picture[:64].encode() in blob for blob in blobs), src


def test_the_search_finds_solutions_in_the_teacher_site():
    """Control: the same search, on the teacher site, finds the chapter solutions."""
    if not (TEACHER_HTML / "index.html").exists():
        pytest.fail("build the teacher site first (make book)")
    secrets = [(s, ln) for s, ln in secrets_and_pictures()[0] if s.suffix == ".md"]
    hay = "".join(haystacks(TEACHER_HTML).values())
    found = sum(norm(ln) in hay for _, ln in secrets)
    assert secrets and found >= 0.8 * len(secrets), (found, len(secrets))


def teacher_repository():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"].rstrip("/")
    return re.sub(r"^https?://", "", url).removesuffix(".git")


def test_no_student_page_links_to_the_teacher_repository(student_site):
    """Every link of every page: none leads to the teacher's repository, or to a Binder
    built from it; without a student repository there is no Binder link at all."""
    student = yaml.safe_load((student_site / "src" / "_config.yml").read_text())
    student_repo = (student.get("repository") or {}).get("url") or ""
    teacher = teacher_repository()
    owner_repo = teacher.split("github.com/", 1)[-1]
    pages = sorted((student_site / "html").rglob("*.html"))
    assert len(pages) > 10
    links = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for link in re.findall(r"""(?:href|src|action)\s*=\s*["']([^"']+)""", text):
            links += 1
            plain = html.unescape(link)
            assert teacher not in plain and f"gh/{owner_repo}" not in plain, (page, plain)
            if "mybinder" in plain or "/v2/gh/" in plain:
                assert student_repo and student_repo.split("github.com/")[-1] in plain, (
                    page, plain)
        # nor in the page's text or scripts (a repository URL handed to JavaScript)
        assert teacher not in html.unescape(text), page
    assert links > 100


def test_the_student_site_shows_exercises_and_homework(student_site):
    pages = {p: p.read_text(encoding="utf-8") for p in (student_site / "html").rglob("*.html")}
    note = "The solution is not part of the student edition."
    assert any(note in text for text in pages.values())
    assert any("solution" in p.name or "exercise" in text for p, text in pages.items())
    for path in sorted((ROOT / "book" / "homework").glob("*.ipynb")):
        page = student_site / "html" / "book" / "homework" / f"{path.stem}.html"
        if page.exists():
            text = page.read_text(encoding="utf-8")
            assert "YOUR CODE HERE" in text or "YOUR ANSWER HERE" in text
    assert "(student edition)" in pages[student_site / "html" / "book" / "index.html"]
    teachers = pages[student_site / "html" / "book" / "teachers.html"]
    # the teachers' cost table and its numbers need the teacher notebooks: left out
    assert "Hashes, searching outward" not in teachers
    assert "Answers a brute force finds" not in teachers
    assert "How to add a new exercise" in teachers


def test_the_parser_reads_tilde_fences_and_solution_titles():
    """A ``~~~`` fence opens a directive as a backtick fence does, and an admonition or
    dropdown titled like a solution is one."""
    text = ("~~~{solution} ex\nthe first hidden line\n~~~\n\n"
            "```{dropdown} Solution sketch\nthe second hidden line\n```\n\nplain text\n")
    secret, public = chapter_secrets(text)
    assert secret == ["the first hidden line", "the second hidden line"]
    assert "plain text" in public


def test_the_parser_reads_any_spelling_of_a_solution():
    """``{Solution}``, a gated region in any case (with the code cells inside it), a
    title in another language, and a hidden cell whose numbers only a solution quotes
    are secrets; the text around them is public."""
    text = ("Intro {eval}`prose['shown']`.\n\n"
            "```{Solution} ex\nthe first hidden line\n```\n\n"
            "```{Solution-Start} ex2\n```\nthe gated hidden line\n"
            "```{code-cell} ipython3\ngated_code = 1\n```\n```{SOLUTION-END}\n```\n\n"
            ":::{admonition} Lösung\nthe german hidden line\n:::\n\n"
            "```{code-cell} ipython3\n:tags: [remove-cell]\nprose['only'] = hidden_number()\n```\n"
            "```{code-cell} ipython3\n:tags: [remove-cell]\nprose['shown'] = shown_number()\n```\n"
            "```{solution} ex3\nIt is {eval}`prose['only']`.\n```\n\nplain text\n")
    secret, public = chapter_secrets(text)
    for line in ("the first hidden line", "the gated hidden line", "gated_code = 1",
                 "the german hidden line", "prose['only'] = hidden_number()"):
        assert line in secret, line
    assert "prose['shown'] = shown_number()" not in secret
    assert "plain text" in public and "the gated hidden line" not in public
    assert "prose['only'] = hidden_number()" not in public
