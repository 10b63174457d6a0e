"""Homework tooling: student releases, validation, answer checks, the student site.

Defined in chapter "For teachers" (``book/teachers.md``).

The homework notebooks in ``book/homework/`` are the *teacher* versions. They use
nbgrader's markers and cell metadata, so a teacher can import them into nbgrader
unchanged, and this module turns them into *student* versions without nbgrader:

* :func:`release` (``python -m lincls.homework release SRC OUT``) writes the student
  versions: solution code becomes ``raise NotImplementedError()``, hidden tests are
  removed, written answers become "YOUR ANSWER HERE", outputs are cleared;
* :func:`validate` (``python -m lincls.homework check SRC``) reports malformed notebooks
  without writing anything;
* :func:`check` lets a student test a numerical answer against a salted hash, so the
  answer itself never appears in the student's notebook;
* :func:`build_student_site` (``make student-book``) builds the website with every
  solution removed;
* :func:`homework_table` makes the "what each homework covers" table of the teacher's
  chapter from the notebooks themselves.

Importing this module is cheap: ``nbformat`` and ``yaml`` are imported inside the
functions that need them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "HomeworkError",
    "MalformedHomework",
    "binder_url",
    "build_student_site",
    "chapter_solution_lines",
    "check",
    "describe",
    "homework_info",
    "homework_table",
    "is_grade_cell",
    "is_solution_cell",
    "make_student_sources",
    "public_lines",
    "record_answer",
    "rehearse",
    "release",
    "release_notebook",
    "solution_lines",
    "strip_chapter_solutions",
    "validate",
]

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
#: nbgrader's stubs for Python code and for written answers.
CODE_STUB = ["# YOUR CODE HERE", "raise NotImplementedError()"]
TEXT_STUB = "YOUR ANSWER HERE"
#: Text that replaces the body of each ``{solution}`` block on the student site.
STUDENT_SOLUTION_NOTE = "The solution is not part of the student edition."

# nbgrader recognises a marker anywhere in a line ("BEGIN SOLUTION" in line); so do we,
# and we then insist on the one canonical spelling, alone on its line.
_MARKER_WORDS = {
    "BEGIN SOLUTION": BEGIN_SOLUTION,
    "END SOLUTION": END_SOLUTION,
    "BEGIN HIDDEN TESTS": BEGIN_HIDDEN,
    "END HIDDEN TESTS": END_HIDDEN,
}
_METADATA_HELP = (
    'give the notebook a metadata block {"lincls": {"summary": "...", '
    '"chapters": ["perceptron"], "minutes": 60}} (see "For teachers")'
)


class HomeworkError(ValueError):
    """A malformed teacher notebook: names the notebook and, if known, the cell.

    ``cell`` is the 0-based index of the cell; the message counts from 1, as a reader
    counts cells, and adds the cell's id when the notebook has one.
    """

    def __init__(self, path, message, cell=None, cell_type=None, cell_id=None):
        self.path = str(path)
        self.cell = cell
        self.cell_type = cell_type
        self.cell_id = cell_id
        self.message = message
        super().__init__(str(self))

    def __str__(self):
        where = self.path
        if self.cell is not None:
            details = [d for d in (self.cell_type, self.cell_id and f"id {self.cell_id}") if d]
            where += f", cell {self.cell + 1}" + (f" ({', '.join(details)})" if details else "")
        return f"{where}: {self.message}"


class MalformedHomework(ValueError):
    """Several :class:`HomeworkError` at once; ``errors`` holds them all."""

    def __init__(self, errors):
        self.errors = list(errors)
        lines = [f"{len(self.errors)} problem(s) found, nothing was written:"]
        lines += [f"  {e}" for e in self.errors]
        super().__init__("\n".join(lines))


# ---------------------------------------------------------------------------------
# Reading and validating teacher notebooks
# ---------------------------------------------------------------------------------
def _read(path):
    """Read a notebook, turning every way it can be unreadable into a HomeworkError."""
    import nbformat

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HomeworkError(path, f"cannot be read: {exc}") from exc
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise HomeworkError(
            path, f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # nbformat raises several types for a bad schema
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise HomeworkError(path, f"is not a valid notebook: {first}") from exc
    return nb


def _nbgrader(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def is_solution_cell(cell):
    """True if nbgrader's metadata marks ``cell`` as an answer cell."""
    return bool(_nbgrader(cell).get("solution", False))


def is_grade_cell(cell):
    """True if nbgrader's metadata marks ``cell`` as a graded (test) cell."""
    return bool(_nbgrader(cell).get("grade", False))


def _source_lines(cell):
    src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
    return src.split("\n")


def _regions(lines, path, index, cell_type):
    """Find the marker regions of one cell.

    Returns a list of ``(kind, begin, end)`` with ``kind`` in {"solution", "hidden"} and
    ``begin``/``end`` the line numbers of the two markers. Raises on a misspelled,
    unbalanced or nested marker.
    """
    regions, open_kind, open_at = [], None, None
    for n, line in enumerate(lines):
        words = [w for w in _MARKER_WORDS if w in line]
        if not words:
            continue
        word = max(words, key=len)
        canonical = _MARKER_WORDS[word]
        where = f"line {n + 1}"
        if line.strip() != canonical:
            raise HomeworkError(
                path,
                f"{where}: write the marker alone on its line as {canonical!r}, "
                f"not {line.strip()!r}",
                index,
                cell_type,
            )
        kind = "solution" if "SOLUTION" in word else "hidden"
        if word.startswith("BEGIN"):
            if open_kind is not None:
                raise HomeworkError(
                    path,
                    f"{where}: nested marker {canonical!r} inside the region opened "
                    f"on line {open_at + 1}",
                    index,
                    cell_type,
                )
            open_kind, open_at = kind, n
        else:
            if open_kind is None:
                raise HomeworkError(
                    path, f"{where}: {canonical!r} without a matching BEGIN", index, cell_type
                )
            if open_kind != kind:
                raise HomeworkError(
                    path,
                    f"{where}: {canonical!r} closes the {open_kind} region opened on "
                    f"line {open_at + 1}",
                    index,
                    cell_type,
                )
            regions.append((kind, open_at, n))
            open_kind = None
    if open_kind is not None:
        end = END_SOLUTION if open_kind == "solution" else END_HIDDEN
        raise HomeworkError(
            path,
            f"line {open_at + 1}: region is never closed (missing {end!r})",
            index,
            cell_type,
        )
    return regions


def _check_cell(cell, index, path, grade_ids):
    """Validate one cell; return its marker regions."""
    ctype = cell.cell_type
    lines = _source_lines(cell)
    regions = _regions(lines, path, index, ctype)
    kinds = {k for k, _, _ in regions}
    if ctype == "raw" and regions:
        raise HomeworkError(path, "markers are not allowed in a raw cell", index, ctype)
    if ctype == "markdown" and "hidden" in kinds:
        raise HomeworkError(
            path, "hidden tests belong in a code cell, not a markdown cell", index, ctype
        )
    meta = cell.get("metadata", {}).get("nbgrader")
    if meta is None:
        if "solution" in kinds:
            raise HomeworkError(
                path,
                "solution region in a cell without nbgrader metadata; set "
                '"nbgrader": {"solution": true, "grade": false, "grade_id": "...", '
                '"locked": false, "schema_version": 3}',
                index,
                ctype,
            )
        if "hidden" in kinds:
            raise HomeworkError(
                path,
                "hidden tests in a cell without nbgrader metadata; set "
                '"nbgrader": {"grade": true, "points": 1, "grade_id": "...", '
                '"locked": true, "solution": false, "schema_version": 3}',
                index,
                ctype,
            )
        return regions
    if not isinstance(meta, dict):
        raise HomeworkError(path, "nbgrader metadata must be an object", index, ctype)
    for key in ("solution", "grade", "locked"):
        if key in meta and not isinstance(meta[key], bool):
            raise HomeworkError(
                path, f"nbgrader metadata {key!r} must be true or false", index, ctype
            )
    if meta.get("schema_version") != 3:
        raise HomeworkError(path, "nbgrader metadata needs schema_version 3", index, ctype)
    gid = meta.get("grade_id")
    if not isinstance(gid, str) or not re.fullmatch(r"[A-Za-z0-9_\-]+", gid):
        raise HomeworkError(
            path,
            f"nbgrader grade_id {gid!r} must be a non-empty name of letters, digits, _ or -",
            index,
            ctype,
        )
    if gid in grade_ids:
        raise HomeworkError(
            path, f"grade_id {gid!r} is also used by cell {grade_ids[gid] + 1}", index, ctype
        )
    grade_ids[gid] = index
    if meta.get("grade"):
        points = meta.get("points")
        if isinstance(points, bool) or not isinstance(points, (int, float)) or points < 0:
            raise HomeworkError(
                path, f"a graded cell needs points >= 0, got {points!r}", index, ctype
            )
    if "solution" in kinds and not meta.get("solution"):
        raise HomeworkError(
            path,
            'solution region in a cell whose nbgrader metadata has not "solution": true',
            index,
            ctype,
        )
    if "hidden" in kinds and not meta.get("grade"):
        raise HomeworkError(
            path,
            'hidden tests in a cell whose nbgrader metadata has not "grade": true',
            index,
            ctype,
        )
    if ctype == "raw" and (meta.get("solution") or meta.get("grade")):
        raise HomeworkError(path, "a raw cell cannot be a solution or graded cell", index, ctype)
    return regions


def _check_metadata(nb, path):
    meta = nb.metadata.get("lincls")
    if not isinstance(meta, dict):
        raise HomeworkError(path, f"no 'lincls' notebook metadata: {_METADATA_HELP}")
    if not isinstance(meta.get("summary"), str) or not meta["summary"].strip():
        raise HomeworkError(path, f"lincls metadata needs a 'summary' text: {_METADATA_HELP}")
    chapters = meta.get("chapters")
    if not (
        isinstance(chapters, list) and chapters and all(isinstance(c, str) for c in chapters)
    ):
        raise HomeworkError(
            path, f"lincls metadata needs 'chapters', a list of page names: {_METADATA_HELP}"
        )
    minutes = meta.get("minutes")
    if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes <= 0:
        raise HomeworkError(
            path, f"lincls metadata needs 'minutes', a positive integer: {_METADATA_HELP}"
        )
    if _title(nb) is None:
        raise HomeworkError(path, "the first markdown cell must start with a '# Title' heading")


def _check_notebook(nb, path):
    """All problems of one parsed notebook, as a list of HomeworkError."""
    errors, grade_ids = [], {}
    try:
        _check_metadata(nb, path)
    except HomeworkError as exc:
        errors.append(exc)
    for index, cell in enumerate(nb.cells):
        try:
            _check_cell(cell, index, path, grade_ids)
        except HomeworkError as exc:
            exc.cell_id = cell.get("id")
            errors.append(exc)
    return errors


def describe(path, summary, chapters, minutes):
    """Set the ``lincls`` metadata block of a homework notebook (outputs are kept).

    The block feeds the teacher's table: ``summary`` (one sentence), ``chapters`` (page
    names in ``book/``) and ``minutes`` (expected working time).
    """
    import nbformat

    nb = _read(path)
    nb.metadata["lincls"] = {
        "summary": summary,
        "chapters": list(chapters),
        "minutes": minutes,
    }
    _check_metadata(nb, path)
    nbformat.write(nb, path)


def _notebooks(src):
    src = Path(src)
    if src.is_file():
        return src.parent, [src]
    if not src.is_dir():
        raise FileNotFoundError(f"{src}: no such notebook or directory")
    found = sorted(
        p for p in src.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts
    )
    return src, found


def validate(src):
    """Check teacher (or student) notebooks without writing anything.

    Parameters
    ----------
    src : path-like
        A notebook or a directory searched recursively for ``*.ipynb``.

    Returns
    -------
    list of HomeworkError
        Every problem found; empty when all notebooks are well formed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "broken.ipynb").write_text("{not json")
    >>> [str(e).split(": ", 1)[1] for e in validate(d)]
    ['is not valid JSON (line 1, column 2: Expecting property name enclosed in double quotes)']
    """
    _, paths = _notebooks(src)
    errors = []
    for path in paths:
        try:
            nb = _read(path)
        except HomeworkError as exc:
            errors.append(exc)
            continue
        errors.extend(_check_notebook(nb, path))
    return errors


# ---------------------------------------------------------------------------------
# Releasing student versions
# ---------------------------------------------------------------------------------
def _student_source(cell, regions):
    """The student's source of one cell, given its (validated) marker regions."""
    lines = _source_lines(cell)
    stub = CODE_STUB if cell.cell_type == "code" else [TEXT_STUB]
    if not regions:
        if is_solution_cell(cell) and cell.cell_type in ("code", "markdown"):
            return "\n".join(stub)
        return "\n".join(lines)
    out, n = [], 0
    for kind, begin, end in regions:
        out.extend(lines[n:begin])
        if kind == "solution":
            indent = re.match(r"\s*", lines[begin]).group(0)
            out.extend(indent + s for s in stub)
        n = end + 1
    out.extend(lines[n:])
    return "\n".join(out)


def release_notebook(nb, path="<notebook>"):
    """Return the student version of a parsed teacher notebook (the input is unchanged).

    Raises :class:`MalformedHomework` if the notebook is malformed.
    """
    import nbformat

    errors = _check_notebook(nb, path)
    if errors:
        raise MalformedHomework(errors)
    student = nbformat.from_dict(json.loads(json.dumps(nb)))
    # Widget state saved in the notebook can hold computed results; drop it.
    student.metadata.pop("widgets", None)
    for cell in student.cells:
        regions = _regions(_source_lines(cell), path, None, cell.cell_type)
        cell.source = _student_source(cell, regions)
        cell.metadata.pop("execution", None)  # timing stamps of the teacher's run
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return student


def release(src, out):
    """Write student versions of the teacher notebooks in ``src`` to ``out``.

    Every notebook is read and validated first; if any is malformed, a
    :class:`MalformedHomework` listing every problem is raised and nothing is written.
    The output is a pure function of the input, so releasing twice gives byte-identical
    files, and releasing a student version again changes nothing.

    Parameters
    ----------
    src : path-like
        A teacher notebook, or a directory searched recursively for ``*.ipynb``.
    out : path-like
        Output directory; notebooks keep their path relative to ``src``.

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    import nbformat

    root, paths = _notebooks(src)
    out_dir = Path(out).resolve()
    # never read an earlier release inside SRC as teacher notebooks, never overwrite one
    if out_dir != Path(root).resolve():
        paths = [p for p in paths if out_dir not in p.resolve().parents]
    for path in paths:
        if (out_dir / path.relative_to(root)).resolve() == path.resolve():
            raise ValueError(f"{path}: refusing to overwrite a teacher notebook; OUT is SRC")
    errors, students = [], []
    for path in paths:
        try:
            nb = _read(path)
        except HomeworkError as exc:
            errors.append(exc)
            continue
        problems = _check_notebook(nb, path)
        if problems:
            errors.extend(problems)
            continue
        students.append((path, release_notebook(nb, path)))
    if errors:
        raise MalformedHomework(errors)
    written = []
    for path, student in students:
        target = Path(out) / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(nbformat.writes(student) + "\n", encoding="utf-8")
        written.append(target)
    return written


def solution_lines(nb):
    """Lines a student must not see: solution regions, hidden tests, answer cells.

    Used by the tests that search the student files and site for leaks.
    """
    found = []
    for cell in nb.cells:
        lines = _source_lines(cell)
        regions = _regions(lines, "<notebook>", None, cell.cell_type)
        if regions:
            for _, begin, end in regions:
                found.extend(lines[begin + 1 : end])
        elif is_solution_cell(cell):
            found.extend(lines)
    return found


def public_lines(nb):
    """The lines of a teacher notebook that students may see: the complement of
    :func:`solution_lines` (markers excluded), computed without :func:`release`.
    """
    found = []
    for cell in nb.cells:
        lines = _source_lines(cell)
        regions = _regions(lines, "<notebook>", None, cell.cell_type)
        if not regions and is_solution_cell(cell):
            continue
        hidden = {n for _, begin, end in regions for n in range(begin, end + 1)}
        found.extend(line for n, line in enumerate(lines) if n not in hidden)
    return found


def _error_name(cell):
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return out.get("ename")
    return None


def rehearse(path, timeout=600):
    """Run the student version of a teacher notebook as a student who solved it would.

    The student version is executed cell by cell in one kernel. After each answer cell
    (which should raise ``NotImplementedError``, or define a function whose body does),
    the teacher's version of that cell runs too, so the rest of the notebook sees a
    solved exercise: every other cell, the visible tests included, must then pass.

    Returns
    -------
    list of dict
        One dict per code cell: ``cell`` (0-based index), ``role`` ("answer", "test"
        or "other"), ``error`` (the exception name the student version raised, or
        None) and, for answer cells, ``teacher_error``.
    """
    import copy

    import nbclient

    teacher = _read(path)
    student = release_notebook(teacher, path)
    client = nbclient.NotebookClient(
        student,
        timeout=timeout,
        allow_errors=True,
        record_timing=False,
        resources={"metadata": {"path": str(Path(path).parent)}},
    )
    results = []
    with client.setup_kernel():
        for index, cell in enumerate(student.cells):
            if cell.cell_type != "code":
                continue
            client.execute_cell(cell, index)
            role = "other"
            if is_solution_cell(cell):
                role = "answer"
            elif is_grade_cell(cell):
                role = "test"
            result = {"cell": index, "role": role, "error": _error_name(cell)}
            if role == "answer":
                solved = copy.deepcopy(teacher.cells[index])
                solved.outputs = []
                client.execute_cell(solved, index)
                result["teacher_error"] = _error_name(solved)
            results.append(result)
    return results


# ---------------------------------------------------------------------------------
# Chapter solutions ({solution} directives) for the student site
# ---------------------------------------------------------------------------------
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\s*(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}")
_GATED = re.compile(r"^\s*(`{3,}|:{3,})\s*\{solution-(start|end)\}")


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
        elif gated and not re.fullmatch(r"\s*(`{3,}|:{3,})\s*", line):
            found.append(line)
    return found


# ---------------------------------------------------------------------------------
# The student site
# ---------------------------------------------------------------------------------
def make_student_sources(root=".", dest="_build/student/src", repository_url=None):
    """Write the student edition's sources: the book with every solution removed.

    Chapters keep their ``{exercise}`` blocks but each ``{solution}`` body is replaced
    by a short note; homework notebooks are replaced by their released versions (no
    outputs). The configuration is the book's own, except the title and, if given,
    the repository URL (for the Binder links of a public student repository). With
    ``requirements.txt``, ``pyproject.toml`` and ``lincls`` copied too, the tree can be
    published as that repository.

    :func:`build_student_site` builds it with the teacher build's Jupyter cache. That
    is valid because stripping solutions changes only markdown, and the cache is keyed
    on the code cells alone.
    """
    import yaml

    root, dest = Path(root).resolve(), Path(dest).resolve()
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "_build", "*.pyc")
    shutil.copytree(root / "book", dest / "book", ignore=ignore)
    shutil.copytree(root / "lincls", dest / "lincls", ignore=ignore)  # literalinclude
    # the files Binder needs to install the environment from the student repository
    for name in ("_toc.yml", "requirements.txt", "runtime.txt", "postBuild", "pyproject.toml",
                 "README.md"):
        if (root / name).exists():
            shutil.copy2(root / name, dest / name)
    for path in sorted((dest / "book").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        try:
            stripped = strip_chapter_solutions(text)
        except ValueError as exc:
            raise ValueError(f"{path.relative_to(dest)}: {exc}") from exc
        path.write_text(stripped, encoding="utf-8")
    homework = dest / "book" / "homework"
    if homework.is_dir():
        shutil.rmtree(homework)
        release(root / "book" / "homework", homework)
        for other in (root / "book" / "homework").rglob("*"):
            rel = other.relative_to(root / "book" / "homework")
            if other.is_file() and other.suffix != ".ipynb" and "_build" not in rel.parts:
                (homework / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(other, homework / rel)
    for path in sorted((dest / "book").rglob("*.ipynb")):
        if homework in path.parents:
            continue
        _strip_notebook_solutions(path)
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = f"{config.get('title', 'Book')} (student edition)"
    if repository_url:
        config.setdefault("repository", {})["url"] = repository_url
    (dest / "_config.yml").write_text(
        "# Generated by `python -m lincls.homework student-book`; edit the book's own.\n"
        + yaml.safe_dump(config, sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    return dest


def _strip_notebook_solutions(path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = strip_chapter_solutions(cell.source)
    nbformat.write(nb, path)


def build_student_site(root=".", out="_build/student", repository_url=None, flags=None):
    """Build the student edition into ``out/html`` (sources in ``out/src``).

    Uses ``jupyter-book config sphinx`` to turn the configuration into Sphinx's, then
    ``sphinx-build`` with the book's strict flags (``-n -W --keep-going``). The Sphinx
    configuration gets one more setting, the teacher build's execution cache (see
    :func:`make_student_sources`), and is removed after the build, so ``out/src`` stays
    a clean book that can be published as the student repository.
    """
    root, out = Path(root).resolve(), Path(out).resolve()
    src = make_student_sources(root, out / "src", repository_url)
    bindir = Path(sys.executable).parent
    jb = shutil.which("jupyter-book", path=str(bindir)) or "jupyter-book"
    sb = shutil.which("sphinx-build", path=str(bindir)) or "sphinx-build"
    subprocess.run([jb, "config", "sphinx", str(src)], check=True, cwd=src)
    cache = root / "_build" / ".jupyter_cache"
    with open(src / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\n# the teacher build's cache: same code cells, same outputs\n")
        conf.write(f"nb_execution_cache_path = {str(cache)!r}\n")
    flags = ["-n", "-W", "--keep-going"] if flags is None else list(flags)
    cmd = [sb, *flags, "-b", "html", "-d", str(out / "doctrees"), str(src), str(out / "html")]
    try:
        subprocess.run(cmd, check=True, cwd=src)
    finally:
        (src / "conf.py").unlink()
    return out / "html"


# ---------------------------------------------------------------------------------
# The teacher's table
# ---------------------------------------------------------------------------------
def _title(nb):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in _source_lines(cell):
                if line.startswith("# "):
                    return line[2:].strip()
            return None
    return None


@dataclass
class HomeworkInfo:
    """What the teacher's table says about one homework notebook."""

    path: Path
    title: str
    summary: str
    chapters: list
    minutes: int
    exercises: int
    points: float


def homework_info(path):
    """Read the title, the ``lincls`` metadata block and nbgrader's points of a notebook."""
    nb = _read(path)
    _check_metadata(nb, path)
    meta = nb.metadata["lincls"]
    exercises = sum(1 for c in nb.cells if is_solution_cell(c))
    points = sum(float(_nbgrader(c).get("points", 0)) for c in nb.cells if is_grade_cell(c))
    return HomeworkInfo(
        Path(path), _title(nb), meta["summary"].strip(), list(meta["chapters"]),
        int(meta["minutes"]), exercises, points,
    )


def binder_url(config, notebook):
    r"""The Binder link that opens ``notebook`` in JupyterLab, from the book's config.

    ``config`` is the path of ``_config.yml``; its ``repository`` (url, branch) and
    ``launch_buttons.binderhub_url`` are used, so the link follows the one place where
    the repository is set. ``notebook`` is a path inside the repository.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "_config.yml").write_text(
    ...     "repository: {url: 'https://github.com/me/book', branch: main}\n"
    ...     "launch_buttons: {binderhub_url: 'https://mybinder.org'}\n")
    >>> binder_url(root / "_config.yml", root / "book/homework/homework1.ipynb")
    'https://mybinder.org/v2/gh/me/book/main?urlpath=lab/tree/book/homework/homework1.ipynb'
    """
    import yaml

    config = Path(config)
    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    repo = data.get("repository", {}) or {}
    url = str(repo.get("url", "")).rstrip("/")
    m = re.fullmatch(r"https?://github\.com/([^/]+)/([^/]+?)(\.git)?", url)
    if not m:
        raise ValueError(f"{config}: repository.url {url!r} is not a GitHub repository URL")
    branch = repo.get("branch", "main")
    hub = (data.get("launch_buttons", {}) or {}).get("binderhub_url", "https://mybinder.org")
    rel = Path(notebook).resolve().relative_to(config.resolve().parent).as_posix()
    return f"{hub.rstrip('/')}/v2/gh/{m[1]}/{m[2]}/{branch}?urlpath=lab/tree/{rel}"


def homework_table(directory="homework", link_prefix=None, config=None):
    """A Markdown table of the homework notebooks in ``directory``.

    One row per notebook, from its title cell, its ``lincls`` metadata block (summary,
    chapters, minutes) and its nbgrader cells (answer cells, points). Links use MyST's
    ``{doc}`` role relative to the page that shows the table. With ``config`` (the
    path of ``_config.yml``) a column of Binder links is added (see :func:`binder_url`).
    """
    directory = Path(directory)
    prefix = directory.as_posix() if link_prefix is None else link_prefix
    head = "| Homework | What it practises | Chapters | Time | Answer cells | Points |"
    rule = "|---|---|---|---|---|---|"
    if config is not None:
        head, rule = head + " Binder |", rule + "---|"
    rows = [head, rule]
    minutes = points = 0
    for path in sorted(directory.glob("*.ipynb")):
        info = homework_info(path)
        minutes, points = minutes + info.minutes, points + info.points
        doc = f"{prefix}/{path.stem}" if prefix else path.stem
        chapters = ", ".join(f"{{doc}}`{c}`" for c in info.chapters)
        row = (
            f"| {{doc}}`{info.title} <{doc}>` | {info.summary} | {chapters} | "
            f"{info.minutes} min | {info.exercises} | {info.points:g} |"
        )
        if config is not None:
            row += f" [launch]({binder_url(config, path)}) |"
        rows.append(row)
    if len(rows) > 2:
        total = f"| **Total** | | | {minutes} min | | {points:g} |"
        rows.append(total + (" |" if config is not None else ""))
    return "\n".join(rows)


def _table_directive():
    """The ``{homework-table}`` directive class (docutils imported only for Sphinx)."""
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives
    from docutils.statemachine import StringList

    class HomeworkTable(Directive):
        """``{homework-table} homework``: the table of the notebooks in a directory.

        The directory is relative to the page. With the ``:binder:`` flag a column of
        Binder links is added, from the book's ``_config.yml``. The page is rebuilt
        whenever a notebook in the directory changes or one is added.
        """

        required_arguments = 1
        option_spec = {"binder": directives.flag}

        def run(self):
            env = self.state.document.settings.env
            page_dir = Path(env.doc2path(env.docname)).parent
            directory = (page_dir / self.arguments[0]).resolve()
            config = Path(env.srcdir) / "_config.yml" if "binder" in self.options else None
            env.note_dependency(str(directory))
            for path in sorted(directory.glob("*.ipynb")):
                env.note_dependency(str(path))
            if config is not None:
                env.note_dependency(str(config))
            try:
                text = homework_table(directory, self.arguments[0], config)
            except (HomeworkError, ValueError) as exc:
                raise self.error(f"homework-table: {exc}") from exc
            container = nodes.container(classes=["homework-table"])
            self.state.nested_parse(
                StringList(text.splitlines(), source=env.docname), self.content_offset, container
            )
            return [container]

    return HomeworkTable


def setup(app):
    """Sphinx extension: the ``{homework-table}`` directive of the teacher's chapter."""
    app.add_directive("homework-table", _table_directive())
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# ---------------------------------------------------------------------------------
# Answer checks
# ---------------------------------------------------------------------------------
#: The registry of salted answer hashes shipped with lincls.
ANSWERS = Path(__file__).with_name("homework_answers.json")
RECORD_ENV = "LINCLS_RECORD_ANSWERS"


def _load_registry(path):
    path = Path(path)
    if not path.exists():
        return {"format": 1, "answers": {}}
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != 1 or not isinstance(data.get("answers"), dict):
        raise ValueError(f"{path}: not an answer registry (format 1)")
    return data


def _as_array(value):
    """The answer as a float array, or an error message for the student."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None, f"not a number or an array of numbers (got {type(value).__name__})"
    if not np.all(np.isfinite(arr)):
        return None, "contains NaN or infinity"
    return arr, None


def _digest(salt, name, index, cell):
    text = f"{salt}|{name}|{index}|{cell}".encode()
    return hashlib.sha256(text).hexdigest()[:16]


def _bins(arr, step, offsets):
    """Bin index of every entry: floor(x / step + offset), with offset 0 or 1/2."""
    flat = arr.ravel()
    return [math.floor(x / step + o) for x, o in zip(flat, offsets, strict=True)]


def record_answer(name, value, *, atol=1e-6, normalized=False, registry=None):
    """Store the salted hash of a correct answer under ``name`` (teachers only).

    Every entry is rounded on a grid of width ``4 * atol``; of two grids shifted by half
    a width, the one on which the entry lies at least ``atol`` from a bin edge is used,
    so :func:`check` accepts every entry within ``atol`` of the answer and rejects every
    entry further than ``3 * atol``. Only the bins' hashes are stored.

    Returns the registry entry (a dict).
    """
    if not isinstance(name, str) or not re.fullmatch(r"[\w.\-]+", name):
        raise ValueError(f"answer name {name!r}: use letters, digits, '.', '_' or '-'")
    if not (isinstance(atol, (int, float)) and atol > 0 and math.isfinite(atol)):
        raise ValueError(f"atol must be a positive number, got {atol!r}")
    arr, problem = _as_array(value)
    if problem:
        raise ValueError(f"answer {name!r}: {problem}")
    if normalized and not math.isclose(float(np.linalg.norm(arr)), 1.0, abs_tol=atol):
        raise ValueError(f"answer {name!r} is declared normalized but its norm is not 1")
    step = 4.0 * atol
    frac = (arr.ravel() / step) % 1.0
    # offset 0 puts the edges at integer multiples; 1/2 puts them half-way between.
    offsets = [0.0 if 0.25 <= f <= 0.75 else 0.5 for f in frac]
    path = Path(registry) if registry is not None else ANSWERS
    data = _load_registry(path)
    old = data["answers"].get(name, {})
    salt = old.get("salt") or secrets.token_hex(8)
    entry = {
        "salt": salt,
        "atol": float(atol),
        "shape": list(arr.shape),
        "offsets": "".join("0" if o == 0 else "h" for o in offsets),
        "hashes": [
            _digest(salt, name, i, b) for i, b in enumerate(_bins(arr, step, offsets))
        ],
        "normalized": bool(normalized),
    }
    data["answers"][name] = entry
    data["answers"] = dict(sorted(data["answers"].items()))
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return entry


def _matches(entry, name, arr):
    step = 4.0 * entry["atol"]
    offsets = [0.0 if c == "0" else 0.5 for c in entry["offsets"]]
    bins = _bins(arr, step, offsets)
    return [
        _digest(entry["salt"], name, i, b) == h
        for i, (b, h) in enumerate(zip(bins, entry["hashes"], strict=True))
    ]


def _diagnose(entry, name, value):
    """``(right, message)`` for a student's value."""
    arr, problem = _as_array(value)
    if problem:
        return False, problem
    shape = tuple(entry["shape"])
    if arr.shape != shape:
        if np.squeeze(arr).shape != np.squeeze(np.empty(shape)).shape:
            return False, f"wrong shape: expected {shape}, got {arr.shape}"
        arr = arr.reshape(shape)  # (3,) for (1, 3) and the like: same answer
    if entry["normalized"]:
        norm = float(np.linalg.norm(arr))
        if not math.isclose(norm, 1.0, abs_tol=entry["atol"]):
            return False, f"not normalized: its norm is {norm:.4g}, it should be 1"
    ok = _matches(entry, name, arr)
    if all(ok):
        return True, "right"
    if all(_matches(entry, name, -arr)):
        return False, "wrong sign: the answer is the negative of this"
    if arr.size == 1 and all(_matches(entry, name, arr / 100.0)):
        return False, "this looks like a percentage; give a fraction between 0 and 1"
    if arr.size > 1:
        wrong = [i for i, good in enumerate(ok) if not good]
        index = [tuple(int(k) for k in np.unravel_index(i, shape)) for i in wrong[:5]]
        where = ", ".join(str(k[0]) if len(k) == 1 else str(k) for k in index)
        more = ", ..." if len(wrong) > 5 else ""
        return False, f"wrong: {len(wrong)} of {arr.size} entries differ (at {where}{more})"
    return False, "wrong"


def check(name, value, *, atol=1e-6, normalized=False, registry=None, quiet=False):
    """Check an answer against its salted hash and say whether it is right.

    The registry (``lincls/homework_answers.json``) holds only salted hashes of the
    rounded answers, so a student can check without seeing the answer. Entries within
    the answer's tolerance count as right; the message says what is wrong otherwise
    ("wrong shape", "not normalized", "wrong sign", which entries differ).

    Parameters
    ----------
    name : str
        The answer's name, e.g. ``"homework1.margin"``.
    value : float or array-like
        The student's answer.
    atol, normalized : float, bool
        Used only when recording (see below); checking uses the values stored with
        the answer.
    registry : path-like, optional
        Another registry file (default: the one shipped with lincls).
    quiet : bool
        Do not print the message.

    Returns
    -------
    bool
        True if the answer is right.

    Notes
    -----
    When the environment variable ``LINCLS_RECORD_ANSWERS`` names a registry file,
    ``check`` *records* ``value`` as the correct answer instead (see
    ``python -m lincls.homework record``): running the teacher notebook then fills the
    registry. A salted hash of a number stops casual peeking, not a determined student
    who tries every value.

    Examples
    --------
    >>> import tempfile, os
    >>> reg = os.path.join(tempfile.mkdtemp(), "answers.json")
    >>> _ = record_answer("demo.w", [0.6, 0.8], atol=1e-3, normalized=True, registry=reg)
    >>> check("demo.w", [0.6, 0.8001], registry=reg)
    demo.w: right
    True
    >>> check("demo.w", [3, 4], registry=reg)
    demo.w: not normalized: its norm is 5, it should be 1
    False
    >>> check("demo.w", [-0.6, -0.8], registry=reg)
    demo.w: wrong sign: the answer is the negative of this
    False
    """
    recording = os.environ.get(RECORD_ENV)
    if recording:
        record_answer(name, value, atol=atol, normalized=normalized, registry=recording)
        if not quiet:
            print(f"{name}: recorded")
        return True
    path = Path(registry) if registry is not None else ANSWERS
    entry = _load_registry(path)["answers"].get(name)
    if entry is None:
        raise ValueError(f"no answer named {name!r} in {path}")
    right, message = _diagnose(entry, name, value)
    if not quiet:
        print(f"{name}: {message}")
    return right


# ---------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------
def _record_notebooks(paths, registry):
    """Execute teacher notebooks with check() in recording mode."""
    import nbclient
    import nbformat

    os.environ[RECORD_ENV] = str(Path(registry).resolve())
    try:
        for path in paths:
            nb = nbformat.read(path, as_version=4)
            nbclient.NotebookClient(
                nb, timeout=600, resources={"metadata": {"path": str(Path(path).parent)}}
            ).execute()
            print(f"recorded the answers of {path}")
    finally:
        del os.environ[RECORD_ENV]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m lincls.homework",
        description="Homework tools of the Linear Classification book.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("release", help="write student versions of teacher notebooks")
    p.add_argument("src", help="a teacher notebook or a directory of them")
    p.add_argument("out", help="output directory")
    p = sub.add_parser("check", help="validate notebooks without writing anything")
    p.add_argument("src", nargs="+")
    p = sub.add_parser(
        "rehearse", help="run student versions with the answers filled in; report errors"
    )
    p.add_argument("src", nargs="+")
    p = sub.add_parser("describe", help="set a notebook's lincls metadata block")
    p.add_argument("notebook")
    p.add_argument("--summary", required=True, help="one sentence: what it practises")
    p.add_argument("--chapters", required=True, nargs="+", help="page names in book/")
    p.add_argument("--minutes", required=True, type=int, help="expected working time")
    p = sub.add_parser("hash", help="store the salted hash of an answer in the registry")
    p.add_argument("name")
    p.add_argument("value", help="a number or a JSON list, e.g. '[0.6, 0.8]'")
    p.add_argument("--atol", type=float, default=1e-6)
    p.add_argument("--normalized", action="store_true")
    p.add_argument("--registry", default=str(ANSWERS))
    p = sub.add_parser("record", help="run teacher notebooks; their check() calls record")
    p.add_argument("notebooks", nargs="+")
    p.add_argument("--registry", default=str(ANSWERS))
    p = sub.add_parser("student-book", help="build the student site (no solutions)")
    p.add_argument("--root", default=".")
    p.add_argument("--out", default="_build/student")
    p.add_argument("--repository-url", default=None)
    args = parser.parse_args(argv)

    if args.command == "release":
        try:
            written = release(args.src, args.out)
        except (MalformedHomework, FileNotFoundError, ValueError) as exc:
            print(exc, file=sys.stderr)
            return 1
        for path in written:
            print(f"wrote {path}")
        return 0
    if args.command == "check":
        errors, count = [], 0
        try:
            for src in args.src:
                errors += validate(src)
                count += len(_notebooks(src)[1])
        except FileNotFoundError as exc:
            print(exc, file=sys.stderr)
            return 1
        for exc in errors:
            print(exc, file=sys.stderr)
        if errors:
            return 1
        print(f"{count} notebook(s) OK")
        return 0
    if args.command == "rehearse":
        failed = 0
        for src in args.src:
            for path in _notebooks(src)[1]:
                for r in rehearse(path):
                    bad = (
                        r["error"] not in (None, "NotImplementedError")
                        or r.get("teacher_error")
                        if r["role"] == "answer"
                        else r["error"] is not None
                    )
                    failed += bool(bad)
                    if bad or r["role"] == "answer":
                        status = "FAIL" if bad else "ok"
                        print(
                            f"{status:4} {path} cell {r['cell'] + 1} ({r['role']}): "
                            f"student {r['error'] or 'no error'}"
                            + (f", teacher {r['teacher_error'] or 'no error'}"
                               if r["role"] == "answer" else "")
                        )
        return 1 if failed else 0
    if args.command == "describe":
        try:
            describe(args.notebook, args.summary, args.chapters, args.minutes)
        except (HomeworkError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"set the lincls metadata of {args.notebook}")
        return 0
    if args.command == "hash":
        try:
            value = json.loads(args.value)
            entry = record_answer(
                args.name, value, atol=args.atol, normalized=args.normalized,
                registry=args.registry,
            )
        except (ValueError, json.JSONDecodeError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(json.dumps({args.name: entry}, indent=1))
        return 0
    if args.command == "record":
        _record_notebooks(args.notebooks, args.registry)
        return 0
    if args.command == "student-book":
        html = build_student_site(args.root, args.out, args.repository_url)
        print(f"student site: {html}/index.html")
        return 0
    return 2  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
