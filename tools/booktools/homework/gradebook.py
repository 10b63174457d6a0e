"""The grades in the gradebook-import files of Canvas and Moodle: ``autograde --format``.

Defined in chapter "For teachers" (``book/teachers.md``).

``python -m booktools autograde ... --format canvas moodle`` writes, besides
``grades.csv``, ``grades.canvas.csv`` and ``grades.moodle.csv`` (beside ``--out``, named
after it) from the rows :func:`booktools.homework.autograde.autograde` returns: one row
per student of the roster (``--students``; else everyone autograde graded), one column
per notebook holding its ``total`` (the autograded points), and the notebook's maximum.
``--column NAME=TITLE`` names a notebook's column (by default its name).

**Canvas** (Grades, Import): the layout of Canvas's own gradebook export, which its
importer reads back -- columns ``Student, ID, SIS User ID, SIS Login ID, Section``, then
one per assignment, and a second row ``Points Possible`` with each assignment's maximum
(the points of a column that makes a new assignment). Canvas finds each student by
``ID`` (its own user id), else ``SIS User ID``, else ``SIS Login ID``, else the name; a
column titled ``Homework 2 (12345)`` is the assignment with id 12345, any other title
the assignment of that name, or a new one. ``SIS User ID`` is the roster's
``sis_user_id`` column, else the student id (the roster's ``id``); ``ID``, ``SIS Login
ID`` and ``Section`` come from the roster's ``canvas_id``, ``sis_login_id`` and
``section`` columns when it has them, and ``Student`` from ``name`` (or ``last_name,
first_name``, Canvas's sortable name). Sources:
https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades
(the required columns, a new column makes a new assignment, an imported score replaces
the one there), https://ts.vcu.edu/askit/teaching-and-learning/canvas/faculty/grading-faculty/gradebook-action-menu-faculty/
(the export this layout copies) and Canvas's importer,
``app/models/gradebook_importer.rb`` in https://github.com/instructure/canvas-lms (the
header test: ``Student``, ``ID``, then ``SIS User ID``, ``SIS Login ID`` and ``Section``;
the ``Points Possible`` row; ``,`` or ``;`` as the separator; a comma in a number read as
a decimal point; a blank or ``-`` cell is no score).

**Moodle** (Grade administration, Import, CSV file): any header; on the preview page
the teacher picks the column that identifies a user ("Map from") and which user field
it holds ("Map to": ID number, username, email address), and maps each column to a
grade item, a new grade item, or nothing (the default). The file has ``ID number`` (the
student id), ``Full name``, ``Email address`` (the roster's ``email`` column), one
column per notebook, then one ``TITLE (maximum)`` column per notebook: a CSV import
cannot set a grade item's maximum, and any extra row would be read as a student (a row
whose identifier is blank stops the whole import), so the maximum travels in a column
left unmapped; make each grade item with that maximum first (a new grade item gets
100, and a grade above the site's ``gradepointmax``, 100 by default, stops the import).
Sources: https://docs.moodle.org/311/en/Grade_import (mapping, permissions,
``gradepointmax``), https://help.totaralearning.com/display/TH13/Import+grades (the
encoding and separator settings; UTF-8 is the standard) and Moodle's importer,
``grade/import/csv/classes/load_data.php`` and ``lib/csvlib.class.php`` in
https://github.com/moodle/moodle (the mapping; a blank identifier stops the import; a
grade cell ``''`` or ``-`` is "no grade"; ``unformat_float`` reads a ``.`` decimal point
in every locale; the reader strips a UTF-8 byte order mark).

**Missing submissions.** ``autograde`` gives a student without a submission 0 (with a
note), so both files hold ``0``: to both platforms an empty cell means "no grade", which
Canvas's current score (VCU's page above) and Moodle's totals (by default, "aggregate
only non-empty grades") skip instead of counting as zero, and which can replace a grade
already there (both importers take a blank for a changed cell). Only a student
``autograde`` could not grade (no grading version: the teacher's to fix) has an empty
cell, and a line of the problems says so.

**Numbers and encoding.** Scores are written with a ``.`` decimal point, no thousands
separator, at most four decimals and no exponent (``2.5``, ``0``), which both importers
read in any locale. The files are UTF-8 without a byte order mark, comma-separated, every
line ended by CRLF (RFC 4180, Python's :mod:`csv`), quoted only where a cell holds a
comma, quote or line break: both importers read UTF-8 by default and neither needs a
BOM (Canvas's header test looks for "Student" inside the first cell, Moodle strips a
BOM), and a BOM helps only a spreadsheet, which is not where these files should go.

**The roster is text from outside** (a platform's export, a registrar's file). It is read
through the one gate (:func:`booktools.homework.untrusted.read_bytes`: a regular file,
not a link, at most :data:`MAX_ROSTER` bytes), must be UTF-8 (a BOM is allowed), and its
ids must be safe (:func:`booktools.homework.variants.check_student_id`). Every text cell
written (names, emails, sections, ids, titles) has its control characters replaced by
spaces and, if it then starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return, a ``'`` put before it, as OWASP recommends against CSV (formula) injection
(https://owasp.org/www-community/attacks/CSV_Injection): a spreadsheet shows the cell as
text instead of running it. Such a name no longer matches the platform's, which is why
the ids come first. Scores are numbers the code formats, never roster text.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
import unicodedata
from pathlib import Path

from .untrusted import read_bytes
from .variants import check_student_id

#: The platforms ``--format`` knows.
FORMATS = ("canvas", "moodle")
#: Bytes a roster may have.
MAX_ROSTER = 16 << 20
#: Canvas's student columns, in the order its importer requires.
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
#: The first cell of Canvas's row of maxima.
POINTS_POSSIBLE = "Points Possible"
#: Moodle's columns before the grades (the first identifies the student).
MOODLE_COLUMNS = ("ID number", "Full name", "Email address")
#: What starts a formula in a spreadsheet (OWASP's list).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: Roster columns read (by their name without case, spaces, ``_`` or ``-``).
ROSTER_FIELDS = {
    "id": "id", "name": "name", "fullname": "name", "firstname": "first_name",
    "givenname": "first_name", "lastname": "last_name", "surname": "last_name",
    "familyname": "last_name", "email": "email", "emailaddress": "email",
    "section": "section", "canvasid": "canvas_id", "canvasuserid": "canvas_id",
    "sisuserid": "sis_user_id", "sisloginid": "sis_login_id", "loginid": "sis_login_id",
}


def cell(text):
    """A roster text made safe for a CSV cell: control characters (and line or
    paragraph separators) become spaces, the ends are stripped, and a ``'`` goes before
    a leading ``=``, ``+``, ``-``, ``@``, tab or carriage return (OWASP).

    >>> cell('=HYPERLINK("http://x", "y")'), cell(" -1"), cell("Zoë\\nDoe, Jr."), cell(None)
    ('\\'=HYPERLINK("http://x", "y")', "'-1", 'Zoë Doe, Jr.', '')
    """
    text = "" if text is None else str(text)
    text = "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
                   for c in text).strip()
    return "'" + text if text.startswith(FORMULA_START) else text


def number(value):
    """A score as both importers read it: ``.`` decimal point, at most four decimals,
    no exponent, no trailing zeros; None is an empty cell.

    >>> [number(v) for v in (2.0, 2.5, 0.1 + 0.2, 1e-9, -0.0, None, 12345.0)]
    ['2', '2.5', '0.3', '0', '0', '', '12345']
    """
    if value is None:
        return ""
    text = f"{float(value):.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def read_roster(path):
    """The roster's rows as dicts (keys: the values of :data:`ROSTER_FIELDS`, ``""``
    where the roster has no such column), in its order. The ids are the column ``id``
    (or the first column), as :func:`booktools.homework.variants.read_roster` reads
    them; the file goes through the gate (:mod:`.untrusted`) and must be UTF-8."""
    path = Path(path)
    data = read_bytes(path, MAX_ROSTER)  # Untrusted (a ValueError) says why not
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.start}); save the roster "
                         "as UTF-8") from None
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ValueError(f"{path}: not a CSV file ({exc})") from None
    if not rows:
        raise ValueError(f"{path}: the roster is empty")
    keys = ["".join(h.lower().split()).replace("_", "").replace("-", "") for h in rows[0]]
    columns = {}
    for index, key in enumerate(keys):
        columns.setdefault(ROSTER_FIELDS.get(key), index)
    columns.pop(None, None)
    columns.setdefault("id", 0)
    students, seen = [], set()
    for row in rows[1:]:
        get = {field: row[i].strip() if i < len(row) else "" for field, i in columns.items()}
        if not get["id"]:
            continue
        try:
            check_student_id(get["id"])
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        if get["id"] in seen:
            raise ValueError(f"{path}: student id {get['id']!r} is there twice")
        seen.add(get["id"])
        students.append({field: get.get(field, "") for field in {"id", *ROSTER_FIELDS.values()}})
    if not students:
        raise ValueError(f"{path}: needs a header and a student id per row")
    return students


def parse_columns(pairs):
    """``{notebook: title}`` from ``NAME=TITLE`` strings (``--column``)."""
    titles = {}
    for pair in pairs or []:
        name, sep, title = pair.partition("=")
        if not sep or not name.strip() or not title.strip():
            raise ValueError(f"--column {pair!r}: write NAME=TITLE, e.g. "
                             "'homework2=Homework 2 (12345)'")
        titles[Path(name.strip()).stem] = title.strip()
    return titles


def totals(rows):
    """From autograde's rows: the notebooks in order, ``{(student, notebook): score}``
    (None: not graded) and ``{notebook: maximum}`` (the largest any student's total
    says; None if nobody's says), plus a problem per notebook whose maxima differ."""
    scores, maxima, notebooks, problems = {}, {}, [], []
    for row in rows:
        if row["cell"] != "total" or not row["student"]:  # the --no-sandbox row
            continue
        name = row["notebook"]
        if name not in notebooks:
            notebooks.append(name)
            maxima[name] = None
        scores[row["student"], name] = row["score"]
        top = row["max_score"]
        if top is not None:
            if maxima[name] is not None and float(top) != maxima[name]:
                problems.append(f"{name}: the students' maxima differ ({maxima[name]:g} "
                                f"and {float(top):g}); the files give the larger")
            maxima[name] = max(float(top), maxima[name] or 0.0)
    return notebooks, scores, maxima, problems


def _name(student):
    if student.get("name"):
        return student["name"]
    first, last = student.get("first_name", ""), student.get("last_name", "")
    return f"{last}, {first}" if first and last else first or last


def canvas_table(students, notebooks, scores, maxima, titles=None):
    """The rows (lists of cells) of Canvas's gradebook import: header, ``Points
    Possible``, one row per student."""
    titles = titles or {}
    head = [*CANVAS_COLUMNS, *(cell(titles.get(n, n)) for n in notebooks)]
    points = [POINTS_POSSIBLE, "", "", "", "", *(number(maxima[n]) for n in notebooks)]
    table = [head, points]
    for s in students:
        table.append([cell(_name(s)), cell(s.get("canvas_id")),
                      cell(s.get("sis_user_id") or s["id"]), cell(s.get("sis_login_id")),
                      cell(s.get("section")),
                      *(number(scores.get((s["id"], n))) for n in notebooks)])
    return table


def moodle_table(students, notebooks, scores, maxima, titles=None):
    """The rows (lists of cells) of Moodle's CSV grade import: header, one row per
    student."""
    titles = titles or {}
    names = [cell(titles.get(n, n)) for n in notebooks]
    head = [*MOODLE_COLUMNS, *names, *(cell(f"{titles.get(n, n)} (maximum)") for n in notebooks)]
    table = [head]
    for s in students:
        full = s.get("name") or " ".join(filter(None, (s.get("first_name"), s.get("last_name"))))
        table.append([cell(s["id"]), cell(full), cell(s.get("email")),
                      *(number(scores.get((s["id"], n))) for n in notebooks),
                      *(number(maxima[n]) for n in notebooks)])
    return table


TABLES = {"canvas": canvas_table, "moodle": moodle_table}


def output_path(out, fmt):
    """Where the file of ``fmt`` goes: ``grades.csv`` gives ``grades.canvas.csv``."""
    out = Path(out)
    return out.with_name(f"{out.stem}.{fmt}.csv")


def _write(path, table):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(table)  # QUOTE_MINIMAL, CRLF
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_gradebooks(rows, out, formats, roster=None, titles=None):
    """Write the import file of each platform of ``formats`` beside ``out``
    (:func:`output_path`) from autograde's ``rows``.

    ``roster`` is the list :func:`read_roster` returns (None: the students of
    ``rows``, with their ids only); ``titles`` maps a notebook to its column's title.
    Returns ``(paths, problems)``: the files written, and one line per thing the
    teacher must know before importing (a student without a score, maxima that
    differ, a grade Moodle refuses, a missing email).
    """
    notebooks, scores, maxima, problems = totals(rows)
    unknown = sorted(set(titles or {}) - set(notebooks))
    if unknown:  # said, not raised: the grades are written by now
        problems.append(f"--column names {', '.join(unknown)}, which was not graded "
                        f"(graded: {', '.join(notebooks) or 'nothing'})")
    if roster is None:
        ids = dict.fromkeys(sid for sid, _ in scores)
        roster = [{"id": sid} for sid in ids]
    for s in roster:
        for name in notebooks:
            if scores.get((s["id"], name)) is None:
                problems.append(f"{s['id']} {name}: not graded, its cell left empty (to "
                                "Canvas and Moodle an empty cell is no grade, and replaces "
                                "one already there)")
    paths = []
    for fmt in dict.fromkeys(formats):
        if fmt == "moodle":
            big = [n for n in notebooks if (maxima[n] or 0) > 100]
            if big:
                problems.append(f"moodle: {', '.join(big)} can score over 100 points, "
                                "more than Moodle imports unless the site's gradepointmax "
                                "is raised")
            if any(s.get("email") for s in roster) and not all(s.get("email") for s in roster):
                problems.append("moodle: some students have no email address; map the "
                                "ID number column, not the email, or Moodle stops the import")
        path = output_path(out, fmt)
        _write(path, TABLES[fmt](roster, notebooks, scores, maxima, titles))
        paths.append(path)
    return paths, problems
