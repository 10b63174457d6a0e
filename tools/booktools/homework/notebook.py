"""Teacher notebooks: nbgrader's markers, reading, and validation.

Defined in chapter "For teachers" (``book/teachers.md``).
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
#: nbgrader's stubs for Python code and for written answers.
CODE_STUB = ["# YOUR CODE HERE", "raise NotImplementedError()"]
TEXT_STUB = "YOUR ANSWER HERE"
#: Cells with this tag compute only what a solution quotes; the student edition drops
#: them (homework notebooks and chapters alike).
SOLUTION_ONLY_TAG = "solution-only"
#: Text that replaces the body of each ``{solution}`` block on the student site.
STUDENT_SOLUTION_NOTE = "The solution is not part of the student edition."

# nbgrader recognises a marker anywhere in a line ("BEGIN SOLUTION" in line); so do we.
# We look further: a line whose first words are BEGIN or END and then SOLUTION or HIDDEN
# TEST, in any case, spacing, plural, with non-breaking spaces, any number of # or other
# punctuation before them and any text after them, is meant as a marker too. Either
# must then be the one canonical spelling, alone on its line.
_MARKERS = {
    ("BEGIN", "SOLUTION"): BEGIN_SOLUTION,
    ("END", "SOLUTION"): END_SOLUTION,
    ("BEGIN", "HIDDEN"): BEGIN_HIDDEN,
    ("END", "HIDDEN"): END_HIDDEN,
}


def marker_of(line):
    """The canonical marker that ``line`` means, or None if it looks like no marker.

    >>> marker_of("    ### Begin Hidden Test")
    '### BEGIN HIDDEN TESTS'
    >>> marker_of("x = 1  ### END SOLUTION")
    '### END SOLUTION'
    >>> marker_of("# at the end, solutions are compared") is None
    True
    >>> marker_of("#beginSolution")
    '### BEGIN SOLUTION'
    """
    for canonical in _MARKERS.values():
        if canonical[4:] in line:  # nbgrader's own test
            return canonical
    text = unicodedata.normalize("NFKC", line)
    if re.match(r"^[\s#/*!%:;>\-]*[A-Za-z]", text) is None:
        return None
    key = re.sub(r"[^A-Z]", "", text.upper())  # the letters, from the first word on
    for (edge, what), canonical in _MARKERS.items():
        if key.startswith(edge + what + ("TEST" if what == "HIDDEN" else "")):
            return canonical
    return None


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


class KernelDied(RuntimeError):
    """The kernel running a notebook died: the machine or its libraries failed, not the
    notebook. ``status`` is the kernel's exit status (negative: the signal that killed it).
    """

    def __init__(self, path, status):
        self.path, self.status = str(path), status
        if status is not None and status < 0:
            import signal

            how = f"was killed by {signal.Signals(-status).name}"
            if -status == signal.SIGILL:
                how += (" (an instruction this CPU lacks: e.g. OPENBLAS_CORETYPE names a "
                        "kernel the CPU cannot run)")
        else:
            how = "died" + ("" if status is None else f" with exit status {status}")
        super().__init__(f"{path}: the Python kernel {how}; this is not an error in the "
                         "notebook")


def execute(client, path, **kwargs):
    """``client.execute(**kwargs)`` (an ``nbclient.NotebookClient``), with a kernel that
    dies raised as :class:`KernelDied` instead of nbclient's ``DeadKernelError``."""
    from nbclient.exceptions import DeadKernelError

    status = []
    client.on_notebook_error = lambda **_: status.append(exit_status(client))
    try:
        return client.execute(**kwargs)
    except DeadKernelError as exc:
        raise KernelDied(path, status[0] if status else None) from exc


def exit_status(client):
    """The exit status of a client's kernel process, or None while it runs or if unknown."""
    process = getattr(getattr(client.km, "provisioner", None), "process", None)
    return None if process is None else process.poll()


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
        canonical = marker_of(line)
        if canonical is None:
            continue
        word = canonical[4:]
        where = f"line {n + 1}"
        if line.strip(" \t") != canonical:
            raise HomeworkError(
                path,
                f"{where}: near-miss marker {line.strip(' ')!r}: write it exactly as "
                f"{canonical!r}, alone on its line",
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


def hidden_regions(nb):
    """``{cell index: [(kind, begin, end), ...]}`` of the cells with hidden tests (the
    notebook must be valid)."""
    found = {}
    for index, cell in enumerate(nb.cells):
        regions = [r for r in _regions(_source_lines(cell), "<notebook>", index,
                                       cell.cell_type) if r[0] == "hidden"]
        if regions:
            found[index] = regions
    return found


def hidden_sources(nb):
    """``{cell index: text}``: the lines of each cell's hidden-test regions."""
    out = {}
    for index, regions in hidden_regions(nb).items():
        lines = _source_lines(nb.cells[index])
        out[index] = "\n".join(
            "\n".join(lines[b + 1 : e]) for _, b, e in regions)
    return out


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



def _title(nb):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in _source_lines(cell):
                if line.startswith("# "):
                    return line[2:].strip()
            return None
    return None

