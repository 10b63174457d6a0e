"""Feedback a student can read: points, visible failures, their answers; no hidden test.

Defined in chapter "For teachers" (``book/teachers.md``).

``python -m booktools autograde ... --feedback DIR`` writes, for every student and
notebook, ``DIR/ID/NAME.html`` and the same as ``DIR/ID/NAME.md`` (:func:`write_feedback`,
called by :func:`booktools.homework.autograde.autograde` while its temporary nbgrader
course still exists). nbgrader's own ``generate_feedback`` shows the autograded notebook,
which holds the hidden tests; this page is built from data that cannot hold them:

- the points of each graded cell come from the grades' rows, never their notes (a
  cell's note names what the hidden tests compare; the page says "a hidden test
  failed" instead);
- a failed test cell shows the message of its error only if the outermost frame of its
  traceback is a *visible* line of that test cell in the grading version (a line the
  student version also has): then that line (from the teacher's file, not the run), the
  exception's type and the last line of its message, trimmed. The message is dropped
  if it holds a word of the hidden tests that no visible line has, or one of the
  teacher's values (:func:`value_spellings`). Anything else, a traceback that cannot be
  read included, is "a hidden test failed";
- a cell the sandbox stopped (time, output, memory, the notebook's time) is named by the
  ``ename`` of its error output, mapped to words of ours (:data:`LIMITS`);
- the student's answers (the answer cells, matched by nbgrader id) and their outputs
  come from the notebook the student *submitted*, as the gate read it, never from the
  graded run: a submission's code could copy a hidden test it saw run into a later
  output, but the submitted file was written before any hidden test ran. Text outputs
  only (stream, ``text/plain``, an error's last line); images and other rich output are
  dropped.

Every file a student produced (their submission, and the autograded notebook, whose
outputs their kernel wrote) is read through the gate (:mod:`.untrusted`), and everything
from outside is escaped: :func:`html.escape` in the page (which also forbids scripts with
a Content-Security-Policy), a code fence longer than any run of backticks inside it in
the Markdown.
"""

from __future__ import annotations

import html
import math
import os
import re
import tempfile
from pathlib import Path

from .notebook import _read, _regions, _source_lines, is_grade_cell, is_solution_cell
from .untrusted import Untrusted, read_notebook

#: The ``ename`` of an error output that the sandbox or nbgrader wrote when it stopped a
#: cell, and what the page says of it.
LIMITS = {
    "CellTimeoutError": "stopped by the sandbox: the cell ran past its time limit",
    "NotebookTimeLimitExceeded": "not run: the notebook ran past its time limit",
    "OutputLimitExceeded": "stopped by the sandbox: the cell printed more than its "
                           "output limit",
    "ReplyLostAfterInterrupt": "stopped by the sandbox: the kernel was interrupted",
    "MemoryError": "stopped: the cell ran out of memory (the sandbox's limit)",
}
HIDDEN_FAILED = "a hidden test failed"
MISSING = "test cell missing from the submission"  # autograde's note
#: Characters of one message, of one output and of one answer that a page shows.
MESSAGE_CHARS = 200
OUTPUT_CHARS = 4000
ANSWER_CHARS = 20000
#: Bytes of a notebook read for the feedback (as autograde's gate).
MAX_NOTEBOOK = 64 << 20

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: The first frame of an IPython (8 or later) traceback: the cell that was run.
_FRAME = re.compile(r"Cell In\s*\[\s*\d*\s*\],\s*line\s+(\d+)")
_ENAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,80}")
_TOKEN = re.compile(r"""[A-Za-z_][A-Za-z0-9_.]*|\d[\d.eE+-]*|"[^"\n]*"|'[^'\n]*'""")


# ---------------------------------------------------------------------------------
# What the grading version says (the teacher's file: trusted)
# ---------------------------------------------------------------------------------
def _visible_lines(cell):
    """``{line number (1-based): text}`` of the lines of ``cell`` outside its hidden
    regions and markers: what the student version shows."""
    lines = _source_lines(cell)
    hidden = {n for kind, b, e in _regions(lines, "<grading>", None, cell.cell_type)
              if kind == "hidden" for n in range(b, e + 1)}
    return {n + 1: line for n, line in enumerate(lines) if n not in hidden}


def _hidden_words(nb):
    """The words, numbers and strings of the hidden tests that no other line of the
    grading version has: a message holding one is not shown."""
    hidden, seen = [], []
    for cell in nb.cells:
        lines = _source_lines(cell)
        regions = _regions(lines, "<grading>", None, cell.cell_type)
        inside = {n for kind, b, e in regions if kind == "hidden" for n in range(b + 1, e)}
        for n, line in enumerate(lines):
            (hidden if n in inside else seen).append(line)
    seen = "\n".join(seen)
    words = set()
    for line in hidden:
        for token in _TOKEN.findall(line):
            token = token.strip("\"'")
            if len(token) >= 3 and token not in seen:
                words.add(token)
    return words


def value_spellings(value):
    """The ways a recorded value could be printed that are specific enough to search
    for: each float in ``repr``, ``%g`` and rounded to 2 to 6 decimals (not those of
    few digits, such as 0.5 or 1.0, which any page may hold), and the whole value's
    ``repr`` when it is a list."""
    found = set()

    def walk(v):
        if isinstance(v, dict) and set(v) == {"ndarray", "dtype"}:
            walk(v["ndarray"])
        elif isinstance(v, list):
            for item in v:
                walk(item)
        elif isinstance(v, float) and math.isfinite(v):
            for text in (repr(v), f"{v:g}", *(f"{v:.{d}f}" for d in range(2, 7))):
                digits = text.lstrip("-").replace(".", "").strip("0")
                if len(digits) >= 3 and "e" not in text:
                    found.add(text)
        elif isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 1000:
            found.add(str(v))

    walk(value)
    if isinstance(value, list) and len(value) >= 2:
        found.add(repr(value))
    return found


# ---------------------------------------------------------------------------------
# A failed test cell
# ---------------------------------------------------------------------------------
def _last_line(text):
    lines = [line.strip() for line in _ANSI.sub("", str(text)).splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _trim(text, chars):
    return text if len(text) <= chars else text[: chars - 1] + "…"


def failure(executed_cell, grading_cell, hidden_words=(), secrets=()):
    """What a page may say of a test cell that did not earn its points: one of the
    :data:`LIMITS` words, ``(visible line, message)`` of an error raised on a visible
    line of the test, or :data:`HIDDEN_FAILED`."""
    errors = [o for o in (executed_cell or {}).get("outputs", [])
              if isinstance(o, dict) and o.get("output_type") == "error"]
    for error in errors:
        if error.get("ename") in LIMITS:
            return LIMITS[error["ename"]]
    if len(errors) != 1:
        return HIDDEN_FAILED
    error = errors[0]
    ename, evalue, traceback = error.get("ename"), error.get("evalue"), error.get("traceback")
    if (not isinstance(ename, str) or not _ENAME.fullmatch(ename)
            or not isinstance(evalue, str) or not isinstance(traceback, list)
            or not all(isinstance(t, str) for t in traceback)):
        return HIDDEN_FAILED
    frame = _FRAME.search(_ANSI.sub("", "\n".join(traceback)))
    if frame is None:
        return HIDDEN_FAILED
    line = int(frame.group(1))
    visible = _visible_lines(grading_cell)
    if line not in visible or not visible[line].strip():
        return HIDDEN_FAILED
    message = _trim(_last_line(evalue), MESSAGE_CHARS)
    if any(word in message for word in hidden_words) or any(
            text in message for text in secrets):
        message = "(its message is not shown)"
    text = f"{ename}: {message}" if message else ename
    return _trim(visible[line].strip(), MESSAGE_CHARS), text


# ---------------------------------------------------------------------------------
# The student's answers (from the submission as submitted)
# ---------------------------------------------------------------------------------
def _text_outputs(cell):
    """The text of a submitted cell's outputs: stream text, ``text/plain``, an error's
    last line; a placeholder for anything else."""
    out = []
    for output in cell.get("outputs", []) if isinstance(cell, dict) else []:
        kind = output.get("output_type") if isinstance(output, dict) else None
        if kind == "stream":
            text = output.get("text", "")
        elif kind in ("execute_result", "display_data"):
            data = output.get("data") if isinstance(output.get("data"), dict) else {}
            text = data.get("text/plain", "[a figure or other output, not shown]")
        elif kind == "error":
            text = f"{output.get('ename', '')}: {_last_line(output.get('evalue', ''))}"
        else:
            continue
        if isinstance(text, list):
            text = "".join(t for t in text if isinstance(t, str))
        if isinstance(text, str):
            out.append(_trim(_ANSI.sub("", text), OUTPUT_CHARS))
    return out


def _by_id(nb):
    found = {}
    for cell in nb.cells if nb is not None else []:
        meta = cell.get("metadata", {}).get("nbgrader")
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if isinstance(grade_id, str):
            found.setdefault(grade_id, cell)
    return found


def _gated(path, root):
    """The notebook at ``path`` through the gate, or None."""
    if path is None or not os.path.lexists(path):
        return None
    try:
        return read_notebook(path, MAX_NOTEBOOK, root=root)
    except Untrusted:
        return None


# ---------------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------------
def feedback_items(sid, name, rows, grading, course=None, values=None):
    """The content of one student's page, as a list of items ``(kind, fields)``:
    ``("title", ...)``, ``("total", ...)``, ``("heading", text)``, ``("answer", grade
    id, source, [outputs], points)``, ``("test", grade id, score, max, status)``,
    ``("limit", cell number, words)``. ``rows`` are autograde's rows of this student and
    notebook, ``grading`` the grading version's path, ``course`` the nbgrader course that
    graded the submission (None if nbgrader did not), ``values`` the teacher's values
    (only to withhold a message that quotes one)."""
    nb = _read(grading, one_name=False)  # a student's hard link must not make it unreadable
    by_cell = {r["cell"]: r for r in rows}
    total = by_cell.get("total", {})
    items = [("title", sid, name),
             ("total", total.get("score"), total.get("max_score"), total.get("note", ""))]
    submitted = executed = None
    if course is not None:
        course = Path(course)
        submitted = _gated(course / "submitted" / sid / name / f"{name}.ipynb", course)
        executed = _gated(course / "autograded" / sid / name / f"{name}.ipynb", course)
    answers, runs = _by_id(submitted), _by_id(executed)
    secrets = set()
    for value in (values or {}).values():
        secrets |= value_spellings(value)
    words = _hidden_words(nb)
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader") or {}
        grade_id = meta.get("grade_id")
        if cell.cell_type == "markdown" and not is_solution_cell(cell):
            first = _source_lines(cell)[0]
            if first.startswith("## "):
                items.append(("heading", first[3:].strip()))
            continue
        if is_solution_cell(cell):
            mine = answers.get(grade_id)
            source = mine.get("source", "") if mine is not None else None
            if isinstance(source, list):
                source = "".join(source)
            row = by_cell.get(grade_id)
            points = None if row is None else (row["score"], row["max_score"], row["note"])
            items.append(("answer", grade_id,
                          None if source is None else _trim(source, ANSWER_CHARS),
                          _text_outputs(mine) if mine is not None else [], points))
        elif is_grade_cell(cell) and cell.cell_type == "code":
            row = by_cell.get(grade_id, {})
            score, top = row.get("score"), row.get("max_score")
            if score is None:
                status = "not graded"
            elif top is not None and score >= top:
                status = "passed"
            elif row.get("note") == MISSING:
                status = MISSING
            elif executed is None:
                status = "not run"
            else:
                status = failure(runs.get(grade_id), cell, words, secrets)
            items.append(("test", grade_id, score, top, status))
    if executed is not None:
        stopped = []
        for number, cell in enumerate(executed.cells, 1):
            for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
                if isinstance(output, dict) and output.get("output_type") == "error" \
                        and output.get("ename") in LIMITS:
                    stopped.append(("limit", number, LIMITS[output["ename"]]))
                    break
        if stopped:
            items += [("heading", "Cells the sandbox stopped"), *stopped]
    return items


def _points(score, top):
    if score is None:
        return "not graded" if top is None else f"– / {top:g}"
    return f"{score:g} / {top:g}" if top is not None else f"{score:g}"


def _fence(text):
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def to_markdown(items):
    """The page as Markdown: everything from outside inside a code fence."""
    out = []
    for kind, *f in items:
        if kind == "title":
            out.append(f"# Feedback: {f[1]}, student {f[0]}\n")
        elif kind == "total":
            out.append(f"**Total (autograded): {_points(f[0], f[1])}**\n")
            if f[2]:
                out.append(_fence(f[2]) + "\n")
        elif kind == "heading":
            out.append(f"## {f[0]}\n")
        elif kind == "answer":
            grade_id, source, outputs, points = f
            extra = f" ({_points(points[0], points[1])}, {points[2] or 'graded by hand'})" \
                if points else ""
            out.append(f"### Your answer `{grade_id}`{extra}\n")
            out.append(_fence(source) + "\n" if source is not None
                       else "(not in your submission)\n")
            for text in outputs:
                out.append("Output:\n\n" + _fence(text) + "\n")
        elif kind == "test":
            grade_id, score, top, status = f
            out.append(f"### Test `{grade_id}`: {_points(score, top)}\n")
            if isinstance(status, tuple):
                out.append("Failed on the visible line\n\n" + _fence(status[0])
                           + "\n\nwith\n\n" + _fence(status[1]) + "\n")
            else:
                out.append(f"{status}\n")
        elif kind == "limit":
            out.append(f"- cell {f[0]}: {f[1]}\n")
    return "\n".join(out)


_STYLE = ("body{font-family:sans-serif;max-width:50em;margin:2em auto;padding:0 1em}"
          "pre{background:#f4f4f4;padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere}"
          ".passed{color:#1a6b1a}.failed{color:#a31515}")


def to_html(items):
    """The page as HTML: every text escaped; no script may run (its CSP)."""
    e = html.escape
    body, title = [], "Feedback"
    for kind, *f in items:
        if kind == "title":
            title = f"Feedback: {f[1]}, student {f[0]}"
            body.append(f"<h1>{e(title)}</h1>")
        elif kind == "total":
            body.append(f"<p><strong>Total (autograded): {e(_points(f[0], f[1]))}</strong>"
                        "</p>")
            if f[2]:
                body.append(f"<pre>{e(f[2])}</pre>")
        elif kind == "heading":
            body.append(f"<h2>{e(f[0])}</h2>")
        elif kind == "answer":
            grade_id, source, outputs, points = f
            extra = (f" ({e(_points(points[0], points[1]))}, "
                     f"{e(points[2] or 'graded by hand')})") if points else ""
            body.append(f"<h3>Your answer <code>{e(grade_id)}</code>{extra}</h3>")
            body.append(f"<pre>{e(source)}</pre>" if source is not None
                        else "<p>(not in your submission)</p>")
            for text in outputs:
                body.append(f"<p>Output:</p><pre>{e(text)}</pre>")
        elif kind == "test":
            grade_id, score, top, status = f
            ok = status == "passed"
            body.append(f'<h3 class="{"passed" if ok else "failed"}">Test '
                        f"<code>{e(grade_id)}</code>: {e(_points(score, top))}</h3>")
            if isinstance(status, tuple):
                body.append(f"<p>Failed on the visible line</p><pre>{e(status[0])}</pre>"
                            f"<p>with</p><pre>{e(status[1])}</pre>")
            else:
                body.append(f"<p>{e(status)}</p>")
        elif kind == "limit":
            body.append(f"<p>Cell {f[0]}: {e(f[1])}</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'\">\n"
            f"<title>{e(title)}</title><style>{_STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _write(path, text):
    """Write ``text`` to ``path`` by renaming a new file over it (never through a link
    that stands there)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".feedback-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_feedback(folder, sid, name, rows, grading, course=None, values=None):
    """Write ``folder/ID/NAME.html`` and ``.md`` for one student and notebook (see the
    module); returns the two paths. ``sid`` must be a safe student id (autograde checked
    it)."""
    from .variants import check_student_id

    check_student_id(sid)
    where = Path(folder) / sid
    where.mkdir(parents=True, exist_ok=True)
    if values is None:
        from .grading import read_values, values_path

        values = read_values(values_path(grading))
    items = feedback_items(sid, name, rows, grading, course, values)
    paths = where / f"{name}.html", where / f"{name}.md"
    _write(paths[0], to_html(items))
    _write(paths[1], to_markdown(items))
    return paths
