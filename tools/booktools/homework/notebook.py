"""Teacher notebooks: nbgrader's markers, reading, and validation.

Defined in chapter "For teachers" (``book/teachers.md``).
"""

from __future__ import annotations

import os
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
    >>> marker_of("### BEGIN HIDDЕN TESTS")  # a Cyrillic Е: read as a reader sees it
    '### BEGIN HIDDEN TESTS'
    """
    for canonical in _MARKERS.values():
        if canonical[4:] in line:  # nbgrader's own test
            return canonical
    text = fold(line)
    if re.match(r"^[\s#/*!%:;>\-]*[A-Z]", text) is None:
        return None
    key = re.sub(r"[^A-Z]", "", text)  # the letters, from the first word on
    for (edge, what), canonical in _MARKERS.items():
        if key.startswith(edge + what + ("TEST" if what == "HIDDEN" else "")):
            return canonical
    return None


# Look-alikes of Latin capitals (Cyrillic, Greek) that NFKC leaves alone: a marker
# spelled with them must still be seen as one (``### BEGIN HIDDЕN TESTS``, Cyrillic Е).
_CONFUSABLES = str.maketrans({
    **dict.fromkeys("АаΑα", "A"), **dict.fromkeys("ВвΒβ", "B"), **dict.fromkeys("СсϹϲ", "C"),
    **dict.fromkeys("ЕеЁёΕε", "E"), **dict.fromkeys("НнΗ", "H"),
    **dict.fromkeys("ІіΙιӀӏ", "I"), **dict.fromkeys("Јј", "J"), **dict.fromkeys("КкΚκ", "K"),
    **dict.fromkeys("МмΜ", "M"), **dict.fromkeys("Ν", "N"), "ν": "V", "η": "N",
    **dict.fromkeys("ОоΟοσ", "O"),
    **dict.fromkeys("РрΡρ", "P"), **dict.fromkeys("Ѕѕ", "S"), **dict.fromkeys("ТтΤτ", "T"),
    **dict.fromkeys("ХхΧχ", "X"), **dict.fromkeys("УуΥυ", "Y"), **dict.fromkeys("Ζζ", "Z"),
    **dict.fromkeys("Ԁԁ", "D"), **dict.fromkeys("Ԍԍ", "G"), **dict.fromkeys("Ԛԛ", "Q"),
    **dict.fromkeys("Ԝԝ", "W"), "ı": "I", "ℓ": "L", "ⅼ": "L", "ǀ": "L",
})


def fold(text):
    """``text`` as a reader sees it: NFKC, without invisible format characters and
    accents, Cyrillic and Greek look-alikes as Latin letters, in capitals.

    >>> fold("### BEGIN HIDDЕN ТESTS")  # Cyrillic Е and Т
    '### BEGIN HIDDEN TESTS'
    >>> fold("ＢＥＧＩＮ so\u200blution")
    'BEGIN SOLUTION'
    """
    return _unmark(text).translate(_CONFUSABLES).upper()


def _unmark(text):
    """NFKC ``text`` without invisible format characters and accents."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text)
                   if unicodedata.category(ch) not in ("Cf", "Mn", "Me"))
    return unicodedata.normalize("NFKC", text)


def _words(line):
    """The words of ``line`` after :func:`fold`: runs of letters, split also where a
    lower-case letter meets a capital (``beginSolution``: BEGIN, SOLUTION)."""
    text = _unmark(line)
    text = "".join(a + (" " if a.islower() and b.isupper() else "")
                   for a, b in zip(text, text[1:] + " "))
    return re.findall(r"[A-Z]+", text.translate(_CONFUSABLES).upper())


_EDGE = r"(BEGIN|END|START|STOP)S?"
_REGION = r"(SOLUTION|SOLN|ANSWER|TEST)S?"
_EDGE_WORD = re.compile(_EDGE)
_REGION_WORD = re.compile(_REGION)
_EDGE_AND_REGION = re.compile(f"{_EDGE}{_REGION}|{_REGION}{_EDGE}")


def resembles_marker(line):
    """True if ``line`` looks meant as a region marker, in any spelling: a word of it
    holds HIDDEN (or HIDEN), or it has one of the words BEGIN/END/START/STOP and one of
    SOLUTION/SOLN/ANSWER/TEST (each also plural, or the two run together), in any case
    and after :func:`fold`.

    >>> resembles_marker("### [begin hidden tests]"), resembles_marker("### STOP SOLN")
    (True, True)
    >>> resembles_marker("# startSolution"), resembles_marker("### ENDTESTS")
    (True, True)
    >>> resembles_marker("# hiddЕn")  # Cyrillic capital Е in a lower-case word
    True
    >>> resembles_marker("w = perceptron_epoch(w, Xa, y)")
    False
    >>> [resembles_marker(s) for s in ("phi_dense = 1", "plt.legend()  # test")]
    [False, False]
    """
    whole = re.findall(r"[A-Z]+", fold(line))  # runs of letters, not split at capitals
    if any("HIDDEN" in w or "HIDEN" in w for w in whole):
        return True
    words = whole + _words(line)
    if any(_EDGE_AND_REGION.fullmatch(w) for w in words):
        return True
    edge = any(_EDGE_WORD.fullmatch(w) for w in words)
    return edge and any(_REGION_WORD.fullmatch(w) for w in words)


def names_a_region(line):
    """True if ``line`` is a comment or heading of a few words, one of them SOLUTION,
    SOLN or ANSWER (or plural): ``### ANSWER``, ``# solution:``, ``## Answer``. In an
    answer cell, that would be a second region of another spelling."""
    text = fold(line).strip()
    words = _words(line)
    if not text.startswith("#") or len(words) > 3:  # a comment of a few words, not prose
        return False
    return any(re.fullmatch(r"(SOLUTION|SOLN|ANSWER)S?", w)
               for w in words + re.findall(r"[A-Z]+", text))


#: Cell metadata that reaches the student version (anything else is dropped): nbgrader's
#: own fields, tags, and Jupyter's display flags, each of its documented type.
CELL_METADATA = {"tags": list, "editable": bool, "deletable": bool, "collapsed": bool,
                 "scrolled": bool, "nbgrader": dict, "jupyter": dict, "mystnb": dict}
NBGRADER_FIELDS = {"grade": bool, "grade_id": str, "locked": bool, "points": (int, float),
                   "schema_version": int, "solution": bool, "task": bool}
JUPYTER_FIELDS = {"source_hidden": bool, "outputs_hidden": bool}
#: Notebook metadata that reaches the student version, and the fields of its ``lincls``
#: block (the teachers' table shows them).
NOTEBOOK_METADATA = ("kernelspec", "language_info", "lincls")
LINCLS_FIELDS = {"summary": str, "chapters": list, "minutes": int, "fixed": list}
KERNELSPEC_FIELDS = dict.fromkeys(("name", "display_name", "language"), str)
LANGUAGE_INFO_FIELDS = {
    **dict.fromkeys(("name", "version", "mimetype", "file_extension", "pygments_lexer",
                     "nbconvert_exporter"), str),
    "codemirror_mode": (str, dict),
}
#: Tags with which Jupyter Book hides a cell's source from the website: on a homework
#: cell they would suggest it is hidden from students, but the student version shows it.
HIDING_TAGS = ("remove-cell", "remove-input")
#: The tags a student version keeps (any other is dropped, so a tag cannot carry text to
#: the students): papermill's, nbval's, and Jupyter Book's that hide no source.
STUDENT_TAGS = frozenset({
    "parameters", "raises-exception", "skip-execution", "nbval-ignore-output", "nbval-skip",
    "nbval-check-output", "nbval-raises-exception", "hide-input", "hide-output", "hide-cell",
    "remove-output", "scroll-output", "output_scroll", "full-width", "thebe-init"})


def _typed(fields, meta):
    """The entries of ``meta`` named in ``fields`` and of the type given there."""
    return {k: v for k, v in meta.items() if k in fields and isinstance(v, fields[k])
            and not (fields[k] is not bool and isinstance(v, bool))}


def allowed_cell_metadata(meta):
    """The part of a cell's metadata that the student version keeps."""
    out = _typed(CELL_METADATA, meta)
    if "nbgrader" in out:
        out["nbgrader"] = _typed(NBGRADER_FIELDS, out["nbgrader"])
    if "jupyter" in out:
        out["jupyter"] = _typed(JUPYTER_FIELDS, out["jupyter"])
    if "mystnb" in out:  # a figure's alt text, for the student site's readers
        image = out["mystnb"].get("image")
        alt = image.get("alt") if isinstance(image, dict) else None
        out["mystnb"] = {"image": {"alt": alt}} if isinstance(alt, str) else {}
    if "tags" in out:
        out["tags"] = [t for t in out["tags"] if isinstance(t, str) and t in STUDENT_TAGS]
    return out


def allowed_notebook_metadata(meta):
    """The part of a notebook's metadata that the student version keeps."""
    out = {k: meta[k] for k in NOTEBOOK_METADATA if isinstance(meta.get(k), dict)}
    if "kernelspec" in out:
        out["kernelspec"] = _typed(KERNELSPEC_FIELDS, out["kernelspec"])
    if "language_info" in out:
        info = _typed(LANGUAGE_INFO_FIELDS, out["language_info"])
        mode = info.get("codemirror_mode")
        if isinstance(mode, dict):  # {"name": "ipython", "version": 3}
            info["codemirror_mode"] = {  # its name (a text) and version (a number) only
                k: v for k, v in mode.items()
                if (k, type(v)) in (("name", str), ("version", int))}
        out["language_info"] = info
    if "lincls" in out:
        out["lincls"] = _typed(LINCLS_FIELDS, out["lincls"])
        for key in ("chapters", "fixed"):  # lists of names only
            if key in out["lincls"]:
                out["lincls"][key] = [v for v in out["lincls"][key] if isinstance(v, str)]
    return out


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

    def __reduce__(self):  # whole across a process pool
        return type(self), (self.path, self.message, self.cell, self.cell_type, self.cell_id)


class MalformedHomework(ValueError):
    """Several :class:`HomeworkError` at once; ``errors`` holds them all."""

    def __init__(self, errors):
        self.errors = list(errors)
        lines = [f"{len(self.errors)} problem(s) found, nothing was written:"]
        lines += [f"  {e}" for e in self.errors]
        super().__init__("\n".join(lines))

    def __reduce__(self):
        return type(self), (self.errors,)


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
#: The largest notebook :func:`_read` reads (bytes): a teacher's, with its outputs, is
#: well below it.
MAX_NOTEBOOK = 64 << 20


def _read(path, root=None, one_name=True):
    """Read a notebook through the gate (:func:`booktools.homework.untrusted.read_notebook`):
    a regular file with one name (no symbolic or hard link, FIFO or device), at most
    :data:`MAX_NOTEBOOK` bytes, parsed and validated in a separate, limited process; with
    ``root``, no folder from ``root`` down to it may be a symbolic link either. Every way it
    can be unreadable is a :class:`HomeworkError` naming the file (its cause the gate's
    :class:`~booktools.homework.untrusted.Untrusted`). ``one_name=False`` for a grading
    version while grading: a submission hard-linked to it must cost only its own row."""
    from .untrusted import Untrusted, read_notebook

    path = Path(path)
    try:
        return read_notebook(path, MAX_NOTEBOOK, root=root, one_name=one_name)
    except Untrusted as exc:
        note = exc.note
        if note.startswith("not readable: "):
            rest = note[len("not readable: "):]
            note = ("is " + rest) if rest.startswith("not ") else "cannot be read: " + rest
        raise HomeworkError(path, note) from exc


def _nbgrader(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def solution_only(cell):
    """True for a cell tagged as computing only what a solution quotes (see
    :data:`SOLUTION_ONLY_TAG`): it is removed from the student versions."""
    return SOLUTION_ONLY_TAG in (cell.get("metadata", {}).get("tags") or [])


def student_cells(nb):
    """The cells of a teacher notebook that its student version keeps, in their order (the
    student version's cell *i* comes from the *i*-th): code and markdown cells, but those
    tagged ``solution-only``. The grading version keeps the same ones."""
    return [c for c in nb.cells if c.cell_type in ("code", "markdown") and not solution_only(c)]


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


def _check_lines(cell, lines, path, index):
    """In a graded or answer cell, a line that looks meant as a marker must be one,
    spelled exactly; in an answer cell, so must a comment that names a region."""
    ctype = cell.cell_type
    answer = is_solution_cell(cell)
    if not (answer or is_grade_cell(cell)):
        return
    for n, line in enumerate(lines):
        if marker_of(line) is not None:  # a marker, or a near miss _regions names exactly
            continue
        # in markdown, a marker is a short line; a sentence of prose is not one
        if ctype == "markdown" and len(line.split()) > 6:
            continue
        if resembles_marker(line):
            raise HomeworkError(path, f"line {n + 1}: {line.strip()!r} looks like a region "
                                      "marker but is not one: write a marker exactly as "
                                      f"{BEGIN_SOLUTION!r} or {BEGIN_HIDDEN!r} (and their END), "
                                      "alone on its line, or reword the line", index, ctype)
        if answer and names_a_region(line):
            raise HomeworkError(path, f"line {n + 1}: {line.strip()!r} in an answer cell names "
                                      "a region in another spelling; only "
                                      f"{BEGIN_SOLUTION!r} ... {END_SOLUTION!r} marks one",
                                index, ctype)


def _check_cell(cell, index, path, grade_ids):
    """Validate one cell; return its marker regions."""
    ctype = cell.cell_type
    lines = _source_lines(cell)
    _check_lines(cell, lines, path, index)
    regions = _regions(lines, path, index, ctype)
    kinds = {k for k, _, _ in regions}
    if ctype == "raw" and regions:
        raise HomeworkError(path, "markers are not allowed in a raw cell", index, ctype)
    if ctype == "raw":
        raise HomeworkError(path, "a raw cell would reach the student version as it is, and "
                                  "nbgrader neither grades nor hides it: make it a markdown "
                                  "or code cell", index, ctype)
    if cell.get("attachments") and not is_solution_cell(cell):  # an answer's goes with it
        raise HomeworkError(path, "the cell has an attached picture (attachments): a release "
                                  "cannot check a picture for solutions; save it as a file "
                                  "beside the notebook and link it", index, ctype)
    tags = cell.get("metadata", {}).get("tags") or []
    hiding = [t for t in HIDING_TAGS if t in tags]
    if hiding and SOLUTION_ONLY_TAG not in tags:
        raise HomeworkError(path, f"tagged {hiding[0]!r}: the website hides it, but the "
                                  "student version would show it; tag it also "
                                  f"{SOLUTION_ONLY_TAG!r} (the student version drops it) or "
                                  "remove the tag", index, ctype)
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
    fixed = meta.get("fixed", [])
    if not (isinstance(fixed, list) and all(isinstance(f, str) for f in fixed)):
        raise HomeworkError(
            path, "lincls metadata 'fixed' must be a list of self-check or expected-value "
            "names (texts)")
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
    _replace_file(Path(path), nbformat.writes(nb) + "\n")


def _replace_file(path, text):
    """Put a new file holding ``text`` in the place of ``path`` by a rename: a symbolic
    link put there meanwhile is replaced, never followed."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, os.stat(path, follow_symlinks=False).st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


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

