"""The student edition of the website: chapter solutions stripped, homework released.

Defined in chapter "For teachers" (``book/teachers.md``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .notebook import SOLUTION_ONLY_TAG, STUDENT_SOLUTION_NOTE
from .release import release

# MyST fences: backticks, colons, and tildes (```` ~~~{solution} ```` is the directive too)
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,}|~{3,})\s*(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}")
_GATED = re.compile(r"^\s*(`{3,}|:{3,}|~{3,})\s*\{solution-(start|end)\}")
#: The class that marks an ``{admonition}`` or ``{dropdown}`` titled like a solution as
#: meant for teachers: the student edition drops it. Untagged, such a block is refused.
TEACHER_VISIBLE = "teacher-visible"
_SOLUTION_TITLE = re.compile(r"(?<![A-Z])(SOLUTION|SOLN|ANSWER)S?(?![A-Z])")  # whole words


def _closing(lines, n, fence):
    """Line number of the fence closing the one opened on line ``n``."""
    for k in range(n + 1, len(lines)):
        s = lines[k].strip()
        if s and set(s) == {fence[0]} and len(s) >= len(fence):
            return k
    return None


def _solution_blocks(lines, start=0, stop=None):
    """Yield ``(open, body_start, close)`` line numbers of each ``{solution}`` block.

    Fences close the way MyST closes them (the first line holding only the fence
    character, at least as many times). Plain code blocks (```` ```python ````,
    ```` ````markdown ````) are skipped whole, so an example of the syntax shown in a
    code block is left alone; other directives are searched, because an ``{exercise}``
    may hold its ``{solution}``.
    """
    stop = len(lines) if stop is None else stop
    n = start
    while n < stop:
        m = _FENCE.match(lines[n])
        if not m or (m["fence"][0] == ":" and not _DIRECTIVE.match(m["info"])):
            n += 1
            continue
        fence, directive = m["fence"], _DIRECTIVE.match(m["info"])
        close = _closing(lines[:stop], n, fence)
        if close is None:
            what = f"{{{directive['name']}}} block" if directive else "code fence"
            raise ValueError(f"line {n + 1}: the {what} is never closed")
        if directive and directive["name"] == "solution":
            body = n + 1
            while body < close and re.match(r"^\s*:[\w-]+:", lines[body]):
                body += 1
            yield n, body, close
        elif directive:
            yield from _solution_blocks(lines, n + 1, close)
        n = close + 1


def _titled_blocks(lines, start=0, stop=None):
    """Yield ``(open, close, teacher)`` of each ``{admonition}`` or ``{dropdown}`` block
    whose title reads like a solution (SOLUTION, SOLN or ANSWER after
    :func:`~booktools.homework.notebook.fold`); ``teacher`` if its ``:class:`` holds
    :data:`TEACHER_VISIBLE`. Code blocks are skipped; other directives are searched."""
    from .notebook import fold

    stop = len(lines) if stop is None else stop
    n = start
    while n < stop:
        m = _FENCE.match(lines[n])
        directive = _DIRECTIVE.match(m["info"]) if m else None
        if not m or (m["fence"][0] == ":" and not directive):
            n += 1
            continue
        close = _closing(lines[:stop], n, m["fence"])
        if close is None:
            return
        if directive and directive["name"] in ("admonition", "dropdown") and \
                _SOLUTION_TITLE.search(fold(m["info"][directive.end():])):
            options = []
            for line in lines[n + 1 : close]:
                if not re.match(r"^\s*:[\w-]+:", line):
                    break
                options.append(line)
            teacher = any(re.match(rf"^\s*:class:.*\b{TEACHER_VISIBLE}\b", o) for o in options)
            yield n, close, teacher
        elif directive:
            yield from _titled_blocks(lines, n + 1, close)
        n = close + 1


def strip_teacher_blocks(text):
    """Remove the ``{admonition}``/``{dropdown}`` blocks titled like a solution and
    tagged :data:`TEACHER_VISIBLE`; raise ValueError on one that is not tagged."""
    lines = text.split("\n")
    out, n = [], 0
    for start, close, teacher in _titled_blocks(lines):
        if not teacher:
            raise ValueError(f"line {start + 1}: {lines[start].strip()!r} is titled like a "
                             "solution: make it a {solution} block, or add ':class: "
                             f"{TEACHER_VISIBLE}' (the student edition then drops it)")
        out.extend(lines[n:start])
        n = close + 1
    out.extend(lines[n:])
    return "\n".join(out)


def strip_chapter_solutions(text, note=STUDENT_SOLUTION_NOTE):
    """Replace the body of every ``{solution}`` block of a MyST text by ``note``.

    The directive line and its options (``:label:``, ``:class: dropdown``) stay, so
    references to the solution still resolve; gated ``{solution-start}`` ...
    ``{solution-end}`` regions are removed with everything between them.

    Examples
    --------
    >>> text = "```{solution} ex1\\n:class: dropdown\\n\\nThe answer is 42.\\n```\\n"
    >>> print(strip_chapter_solutions(text, note="(omitted)"))
    ```{solution} ex1
    :class: dropdown
    <BLANKLINE>
    (omitted)
    ```
    <BLANKLINE>
    """
    lines = text.split("\n")
    out, n = [], 0
    for _open, body, close in _solution_blocks(lines):
        out.extend(lines[n:body])
        out.extend(["", note])
        out.append(lines[close])
        n = close + 1
    out.extend(lines[n:])
    result, gated, closing = [], False, None
    for line in out:
        g = _GATED.match(line)
        if closing and line.strip() == closing:
            closing = None  # the fence closing {solution-end}
        elif g and g[2] == "start":
            gated = True
            result.append(f"*{note}*")
        elif g and g[2] == "end":
            gated, closing = False, g[1]
        elif not gated:
            closing = None
            result.append(line)
    return "\n".join(result)


def chapter_solution_lines(text):
    """The lines inside ``{solution}`` blocks of a MyST text (what a student must not see)."""
    lines = text.split("\n")
    found = []
    for _, body, close in _solution_blocks(lines):
        found.extend(lines[body:close])
    gated = False
    for line in lines:  # gated {solution-start} ... {solution-end} regions
        g = _GATED.match(line)
        if g:
            gated = g[2] == "start"
        elif gated and not re.fullmatch(r"\s*(`{3,}|:{3,}|~{3,})\s*", line):
            found.append(line)
    return found


# ---------------------------------------------------------------------------------
# The student site
# ---------------------------------------------------------------------------------
#: Files of ``book/homework/`` other than notebooks that the student sources may carry:
#: data and pictures. Anything else there (a jupytext ``.md`` or ``.py`` pair, a ``.bak``
#: copy) could hold the solutions and is left out.
HOMEWORK_FILE_TYPES = frozenset({".csv", ".txt", ".json", ".npy", ".npz", ".png", ".jpg",
                                 ".jpeg", ".gif", ".svg"})


class StudentSiteError(ValueError):
    """The student edition cannot be made as asked (one line, for the command line)."""


def strip_solution_only_cells(text):
    """Remove every MyST ``{code-cell}`` tagged ``solution-only`` from a chapter's text.

    Such a cell computes numbers quoted only in a solution (usually with ``glue``); with
    the solutions gone, the student edition has no use for it, and its source would show
    how the solution's numbers were obtained.
    """
    lines = text.split("\n")
    out, n = [], 0
    while n < len(lines):
        m = _FENCE.match(lines[n])
        if m and m["fence"][0] in "`~" and not m["info"].startswith("{code-cell}"):
            close = _closing(lines, n, m["fence"])  # a code block: an example, kept whole
            close = len(lines) - 1 if close is None else close
            out.extend(lines[n : close + 1])
            n = close + 1
            continue
        if m and m["info"].startswith("{code-cell}"):
            close = _closing(lines, n, m["fence"])
            if close is None:
                raise ValueError(f"line {n + 1}: the {{code-cell}} block is never closed")
            head = []
            for line in lines[n + 1 : close]:  # options: ":tags: [...]" or a --- block
                if not (line.startswith(":") or line.strip() in ("---", "") or head
                        and head[0].strip() == "---" and "---" not in head[1:]):
                    break
                head.append(line)
            if any(re.search(rf"\b{SOLUTION_ONLY_TAG}\b", h) and "tags" in h for h in head):
                n = close + 1
                continue
            out.extend(lines[n : close + 1])
            n = close + 1
            continue
        out.append(lines[n])
        n += 1
    return "\n".join(out)


def solution_only_lines(text):
    """The source lines of the ``solution-only`` code cells of a chapter's text."""
    kept = set(strip_solution_only_cells(text).split("\n"))
    return [ln for ln in text.split("\n") if ln not in kept]


def make_student_sources(root=".", dest="_build/student/src", repository_url=None):
    """Write the student edition's sources: the book with every solution removed.

    Chapters keep their ``{exercise}`` blocks but each ``{solution}`` body is replaced
    by a short note (a block in a ``~~~`` fence too), ``{admonition}`` and ``{dropdown}``
    blocks titled like a solution go if tagged :data:`TEACHER_VISIBLE` and are refused
    otherwise, and code cells tagged ``solution-only`` are removed (in ``.ipynb``
    chapters with their outputs); homework notebooks are replaced by their released
    versions (no outputs), and beside them only the data and pictures
    (:data:`HOMEWORK_FILE_TYPES`) that the student edition names
    (:func:`referenced_files`). The configuration
    is the book's own, except the title and the repository: with ``repository_url``
    (a public student repository) the launch and repository buttons point there;
    without it the student edition has no Binder, repository or issue button at all,
    because the book's own repository holds the solutions. With ``requirements.txt``,
    ``pyproject.toml``, ``lincls`` and ``tools`` copied too, the tree can be published as that
    student repository.

    :func:`build_student_site` builds it, executing every chapter again as the website
    does (inline execution, so the prose numbers come from the student edition's own run).
    """
    import yaml

    root, dest = Path(root).resolve(), Path(dest).resolve()
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "_build", "*.pyc")
    homework_src = root / "book" / "homework"
    shutil.copytree(root / "book", dest / "book",
                    ignore=lambda d, names: ignore(d, names) | (
                        set(names) if Path(d).resolve() == homework_src else set()))
    shutil.copytree(root / "lincls", dest / "lincls", ignore=ignore)  # literalinclude
    if (root / "tools").is_dir():  # booktools: the site's Sphinx extensions
        shutil.copytree(root / "tools", dest / "tools", ignore=ignore)
    # the files Binder needs to install the environment from the student repository, the
    # licenses and citation it is published under, and the changes (book/about.md shows them)
    for name in ("_toc.yml", "requirements.txt", "runtime.txt", "postBuild", "pyproject.toml",
                 "README.md", "jupytext.toml", "LICENSE", "LICENSE-content", "CITATION.cff",
                 "CHANGELOG.md", ".gitignore"):
        if (root / name).exists():
            shutil.copy2(root / name, dest / name)
    for path in sorted((dest / "book").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        try:
            stripped = strip_solution_only_cells(strip_chapter_solutions(
                strip_teacher_blocks(text)))
        except ValueError as exc:
            raise ValueError(f"{path.relative_to(dest)}: {exc}") from exc
        _write_as_old_as(path, stripped, root / path.relative_to(dest))
    homework = dest / "book" / "homework"
    if homework_src.is_dir():
        release(homework_src, homework)
        for path in homework.glob("*.ipynb"):
            _write_as_old_as(path, None, homework_src / path.name)
    for path in sorted((dest / "book").rglob("*.ipynb")):
        if homework in path.parents:
            continue
        try:
            _strip_notebook_solutions(path)
        except ValueError as exc:
            raise ValueError(f"{path.relative_to(dest)}: {exc}") from exc
    if homework_src.is_dir():
        for rel in referenced_files(dest / "book", homework_src):
            (homework / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(homework_src / rel, homework / rel)
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = f"{config.get('title', 'Book')} (student edition)"
    if repository_url:
        config.setdefault("repository", {})["url"] = repository_url
    else:
        # no student repository: no link may lead to the teacher's repository
        config["repository"] = {"url": "", "branch": "main", "path_to_book": ""}
        html = config.setdefault("html", {})
        for button in ("use_repository_button", "use_issues_button", "use_edit_page_button"):
            html[button] = False
        config["launch_buttons"] = {"binderhub_url": "", "jupyterhub_url": "",
                                    "colab_url": "", "deepnote_url": "", "thebe": False}
    (dest / "_config.yml").write_text(
        "# Generated by `python -m booktools student-book`; edit the book's own.\n"
        + yaml.safe_dump(config, sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    return dest


_FILE_NAME = re.compile(r"[\w./-]+\.(?:" + "|".join(
    t[1:] for t in sorted(HOMEWORK_FILE_TYPES)) + r")\b", re.I)


def referenced_files(book, homework_src):
    """The files of ``homework_src`` (data and pictures, :data:`HOMEWORK_FILE_TYPES`)
    that the student edition's chapters and notebooks under ``book`` name: a file
    only the teacher's solutions name (or no one) stays out."""
    homework_src = Path(homework_src).resolve()
    homework = Path(book) / "homework"
    found = set()
    for path in sorted(Path(book).rglob("*")):
        if path.suffix not in (".md", ".ipynb") or not path.is_file():
            continue
        base = homework_src if homework in path.parents or path.parent == homework else (
            homework_src.parent / path.parent.relative_to(book))
        for name in _FILE_NAME.findall(path.read_text(encoding="utf-8")):
            target = (base / name).resolve()
            if (homework_src in target.parents and target.is_file()
                    and not {"_build", ".ipynb_checkpoints"} & set(target.parts)):
                found.add(target.relative_to(homework_src))
    return sorted(found)


def _write_as_old_as(path, text, source):
    """Write ``text`` (``None``: keep the file) to ``path`` with the mtime of ``source``.

    A generated file is as new as what it was made from, so a second build (the student
    PDF after the student site) reuses Sphinx's doctrees of every unchanged chapter
    instead of reading, and executing, it again.
    """
    if text is not None:
        path.write_text(text, encoding="utf-8")
    if source.exists():
        stat = source.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _strip_notebook_solutions(path):
    import nbformat

    stat = path.stat()
    nb = nbformat.read(path, as_version=4)
    # a cell tagged solution-only goes, with its outputs (they are the solution's numbers)
    nb.cells = [c for c in nb.cells
                if SOLUTION_ONLY_TAG not in (c.get("metadata", {}).get("tags") or [])]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = strip_chapter_solutions(strip_teacher_blocks(cell.source))
    nbformat.write(nb, path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _execution_cache(root):
    """The book's execution cache folder (``_config.yml``), absolute, or None."""
    import yaml

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    folder = ((config.get("sphinx") or {}).get("config") or {}).get("lincls_execution_cache")
    return (root / folder).resolve() if folder else None


def build_student_site(root=".", out="_build/student", repository_url=None, flags=None,
                       builder="html"):
    """Build the student edition into ``out/html`` (sources in ``out/src``).

    ``builder="singlehtml"`` builds the one page that ``make student-pdf`` prints into
    ``out/singlehtml`` instead, from the same sources and doctrees.

    Uses ``jupyter-book config sphinx`` to turn the configuration into Sphinx's, then
    ``sphinx-build`` with the book's strict flags (``-n -W --keep-going``). The Sphinx
    configuration gets one more setting (``lincls_student_edition``, which hides the
    teacher-only tables) and the book's execution cache, absolute (chapters whose code
    the student edition keeps reuse the teacher build's outputs); it is removed after the
    build, so ``out/src`` stays a clean book that can be published as the student
    repository.
    """
    root, out = Path(root).resolve(), Path(out).resolve()
    src = make_student_sources(root, out / "src", repository_url)
    if repository_url:
        print(f"student edition: launch and repository buttons point to {repository_url}")
    else:
        print("student edition without a student repository (STUDENT_REPO unset): built "
              "without Binder, repository and issue buttons")
    bindir = Path(sys.executable).parent
    jb = shutil.which("jupyter-book", path=str(bindir)) or "jupyter-book"
    sb = shutil.which("sphinx-build", path=str(bindir)) or "sphinx-build"
    subprocess.run([jb, "config", "sphinx", str(src)], check=True, cwd=src)
    with open(src / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\nlincls_student_edition = True  # booktools.sphinxext: teacher-only tables\n")
        cache = _execution_cache(root)
        if cache is not None:  # the teacher build's: chapters whose code is the same reuse it
            conf.write(f"lincls_execution_cache = {str(cache)!r}\n")
    flags = ["-n", "-W", "--keep-going"] if flags is None else list(flags)
    cmd = [sb, *flags, "-b", builder, "-d", str(out / "doctrees"), str(src), str(out / builder)]
    try:
        subprocess.run(cmd, check=True, cwd=src)
    finally:
        (src / "conf.py").unlink()
    return out / builder

