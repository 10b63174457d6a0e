"""Feedback for students without the hidden tests (``autograde --feedback DIR``).

The fast tests give :mod:`booktools.homework.feedback` executed test cells whose
tracebacks point at a visible or a hidden line, messages that quote the hidden tests,
the sandbox's limits and hostile text. :class:`TestEveryHomework` (``make nbgrader``)
grades every homework for real (nbgrader, each kernel in its sandbox) for the teacher's
solution, the unanswered notebook and a wrong answer to every question, each student
against a grading version of their own, and searches every page for the hidden tests'
lines, the teacher's values (numbers in the ways Python prints them) and the values
file; a submission that prints HTML sees it escaped.
"""

import copy
import html
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from booktools import homework as hw
from booktools.homework import feedback as fb
from booktools.homework.grading import read_values, values_path
from booktools.homework.notebook import hidden_sources, public_lines

ROOT = Path(__file__).resolve().parents[1]
HOMEWORK = sorted((ROOT / "book" / "homework").glob("*.ipynb"))
XSS = "<script>alert(1)</script>"
IMG = "</pre><img src=x onerror=alert(2)>"


def grading_cell(visible, hidden):
    meta = {"nbgrader": {"grade_id": "t", "grade": True, "solution": False,
                         "locked": True, "points": 1, "schema_version": 3}}
    return new_code_cell("\n".join([*visible, "### BEGIN HIDDEN TESTS", *hidden,
                                    "### END HIDDEN TESTS"]), metadata=meta)


GRADING = grading_cell(["assert w.shape == (2,), 'w has two entries'"],
                    ["secret_t = np.array([0.123456, 2.5])",
                     "assert np.allclose(w, expected('hw.w_secret', secret_t))"])


def run(line, ename="AssertionError", evalue=""):
    """An executed test cell whose error (IPython 9's traceback) is on ``line``."""
    tb = [f"\x1b[31m{ename}\x1b[0m Traceback (most recent call last)",
          f"Cell \x1b[32mIn[7], line {line}\x1b[0m\n----> {line} ...",
          f"\x1b[31m{ename}\x1b[0m: {evalue}"]
    return {"outputs": [new_output("error", ename=ename, evalue=evalue, traceback=tb)]}


def test_a_visible_assertion_is_shown_a_hidden_one_is_not():
    words = fb._hidden_words(new_notebook(cells=[GRADING]))
    assert {"secret_t", "hw.w_secret", "0.123456"} <= words
    assert fb.failure(run(1, evalue="w has two entries"), GRADING, words) == (
        "assert w.shape == (2,), 'w has two entries'", "AssertionError: w has two entries")
    for line in (2, 3, 4, 5, 99):  # a marker, the hidden lines, beyond the cell
        assert fb.failure(run(line), GRADING, words) == fb.HIDDEN_FAILED
    # a message (the student's kernel wrote it) quoting the hidden tests is withheld
    for quote in ("secret_t", "hw.w_secret", "0.123456"):
        shown = fb.failure(run(1, evalue=f"x {quote}"), GRADING, words)
        assert shown[1] == "AssertionError: (its message is not shown)"
    secrets = fb.value_spellings([0.123456, 2.5])
    shown = fb.failure(run(1, "ValueError", "got 0.12346"), GRADING, (), secrets)
    assert shown[1] == "ValueError: (its message is not shown)"
    # no traceback to read, two errors, a forged type: when in doubt, hidden
    assert fb.failure({"outputs": []}, GRADING) == fb.HIDDEN_FAILED
    assert fb.failure(None, GRADING) == fb.HIDDEN_FAILED
    two = {"outputs": run(1)["outputs"] * 2}
    assert fb.failure(two, GRADING) == fb.HIDDEN_FAILED
    assert fb.failure(run(1, ename="<b>x</b>"), GRADING) == fb.HIDDEN_FAILED
    # the message's last line only, trimmed
    long = fb.failure(run(1, "ValueError", "first\n" + "y" * 500), GRADING)
    assert long[1].startswith("ValueError: yyy") and len(long[1]) < 230


@pytest.mark.parametrize("ename", sorted(fb.LIMITS))
def test_the_sandbox_s_limits_are_named(ename):
    assert fb.failure(run(3, ename), GRADING) == fb.LIMITS[ename]


def test_value_spellings():
    found = fb.value_spellings({"ndarray": [0.1234567, -2.0, 1e-300], "dtype": "float64"})
    assert {"0.1234567", "0.123457", "0.12346", "0.1235", "0.123"} <= found
    assert not {"-2.0", "-2", "-2.00", "0.12"} & found  # few digits: on any page
    assert "['and', 'or']" in fb.value_spellings(["and", "or"])


def test_hostile_text_is_escaped():
    items = [("title", "s01", "hw"), ("total", 0.0, 3.0, IMG),
             ("answer", "q", f'print("{XSS}")\n```\n````', [XSS, IMG], None),
             ("test", "t", 0.0, 1.0, (IMG, f"ValueError: {XSS}")),
             ("limit", 3, fb.LIMITS["MemoryError"])]
    page = fb.to_html(items)
    assert "<script" not in page and "<img" not in page and "</pre><img" not in page
    assert html.escape(XSS) in page and "default-src 'none'" in page
    md = fb.to_markdown(items)
    # inside fences longer than any run of backticks in the text: never closed early
    assert "`````text\nprint(" in md
    for text in (XSS, IMG):
        for at in [m.start() for m in re.finditer(re.escape(text), md)]:
            assert re.findall(r"^(`{3,})text$", md[:at], re.M), text


# --- every homework, graded for real ---------------------------------------------------
WRONG = '''
def _wrong(v):
    import numpy as _np
    if callable(v) and not isinstance(v, type):
        return lambda *a, **k: _wrong(v(*a, **k))
    if isinstance(v, (bool, _np.bool_)):
        return not v
    if isinstance(v, (int, float, _np.number)):
        return v + 1
    if isinstance(v, _np.ndarray) and v.dtype.kind in "iuf":
        return v[::-1] + 1
    if isinstance(v, (list, tuple)):
        return type(v)(_wrong(x) for x in v[::-1])
    if isinstance(v, str):
        return v + "?"
    return v
'''


def bound_names(source):
    """The names a cell binds at its top level (functions and assignments)."""
    import ast

    names = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    return list(dict.fromkeys(names))


def submissions(teacher, student):
    """The teacher's solution, the unanswered notebook, and the teacher's solution made
    wrong in every answer (each value it binds changed, each function's result)."""
    answers = {c.metadata.nbgrader["grade_id"]: c.source for c in teacher.cells
               if hw.is_solution_cell(c)}
    honest, wrong = copy.deepcopy(student), copy.deepcopy(student)
    for cell in honest.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    for cell in wrong.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid not in answers:
            continue
        if cell.cell_type == "markdown":
            cell.source = "I do not know."
            continue
        names = bound_names(answers[gid])
        cell.source = answers[gid] + "".join(
            f"\n{n} = _wrong({n})" for n in names if not n.startswith("_"))
    first = next(i for i, c in enumerate(wrong.cells) if c.cell_type == "code"
                 and "import" in c.source)
    wrong.cells.insert(first + 1, new_code_cell(WRONG))
    return {"honest": honest, "blank": copy.deepcopy(student), "wrong": wrong}


def spellings(value):
    """Every way the test expects a teacher's value could be printed (our own list,
    independent of the module's): floats with at least three significant digits in
    ``repr``, ``%g`` and rounded to 2..6 decimals, integers from 1000, and lists of
    more than one entry by their ``repr`` and JSON."""
    found = set()

    def walk(v):
        if isinstance(v, dict):
            walk(v.get("ndarray", []))
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, float) and math.isfinite(v):
            for text in (repr(v), "%g" % v, *("%.*f" % (d, v) for d in range(2, 7))):
                if len(text.lstrip("-").replace(".", "").strip("0")) >= 3:
                    found.add(text)
        elif isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 1000:
            found.add(str(v))

    walk(value)
    if isinstance(value, list) and len(value) > 1:
        found |= {repr(value), json.dumps(value)}
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One ``autograde --feedback`` run over every homework."""
    from test_nbgrader import made_release, need_sandbox

    need_sandbox()
    tmp = tmp_path_factory.mktemp("feedback")
    # the release of `make release` (not one of our own: it would run every teacher
    # notebook again), its grading versions copied to each student's folder
    ours, grading = made_release()
    roster = ["honest", "blank", "wrong", "xss"]
    subs = {}
    for path in HOMEWORK:
        teacher = nbformat.read(path, 4)
        student = nbformat.read(ours / path.name, 4)
        for sid, nb in submissions(teacher, student).items():
            subs[sid, path.stem] = nb
    # xss: the teacher's solution to homework 4, with hostile code and outputs
    xss = copy.deepcopy(subs["honest", "homework4"])
    code = next(c for c in xss.cells if hw.is_solution_cell(c) and c.cell_type == "code")
    code.source += f"\nprint({XSS!r})\nprint({IMG!r})"
    code.outputs = [new_output("stream", name="stdout", text=f"{XSS}\n{IMG}\n")]
    xss.cells.append(new_markdown_cell(IMG))
    subs["xss", "homework4"] = xss
    for sid in roster:
        (tmp / "grading" / sid).mkdir(parents=True)
        for path in HOMEWORK:
            for src in (grading / path.name, values_path(grading / path.name)):
                shutil.copy(src, tmp / "grading" / sid / src.name)
    for (sid, name), nb in subs.items():
        (tmp / "submitted" / sid / name).mkdir(parents=True)
        nbformat.write(nb, tmp / "submitted" / sid / name / f"{name}.ipynb")
    done = subprocess.run(
        [sys.executable, "-m", "booktools", "autograde", str(tmp / "grading"),
         str(tmp / "submitted"), "--out", str(tmp / "grades.csv"), "--feedback",
         str(tmp / "feedback"), "--timeout", "300"],
        cwd=tmp, capture_output=True, text=True, timeout=3000)
    assert done.returncode == 0, done.stderr[-3000:]
    return {"tmp": tmp, "roster": roster, "done": done}


@pytest.mark.nbgrader
class TestEveryHomework:
    """The pages of the run of :func:`graded`."""

    def pages(self, graded, name):
        for sid in graded["roster"]:
            for ext in ("html", "md"):
                path = graded["tmp"] / "feedback" / sid / f"{name}.{ext}"
                if path.exists():
                    text = path.read_text(encoding="utf-8")
                    yield sid, path, html.unescape(text) if ext == "html" else text

    @pytest.mark.parametrize("path", HOMEWORK, ids=[p.stem for p in HOMEWORK])
    def test_no_hidden_test_and_no_teacher_value(self, graded, path):
        tmp, name = graded["tmp"], path.stem
        grading = tmp / "grading" / "honest" / path.name
        nb = nbformat.read(grading, 4)
        answers = [line for c in nb.cells if hw.is_solution_cell(c)
                   for line in c.source.splitlines()]
        known = {line.strip() for line in public_lines(nb) + answers
                 if line.strip()}  # lines outside the hidden tests as well
        hidden = {line.strip() for text in hidden_sources(nb).values()
                  for line in text.splitlines()}
        hidden = {line for line in hidden - known if len(line) >= 8}
        values_file = values_path(grading).read_text(encoding="utf-8")
        values = read_values(values_path(grading))
        secrets = {text for value in values.values() for text in spellings(value)}
        secrets |= {json.dumps(v) for v in values.values() if isinstance(v, (list, dict))}
        assert hidden and values
        pages = list(self.pages(graded, name))
        assert {sid for sid, *_ in pages} >= {"honest", "blank", "wrong"}
        for sid, page, text in pages:
            assert "BEGIN HIDDEN" not in text and values_file not in text, page
            for line in hidden:
                assert line not in text, (page, line)
            # a value the student wrote in their own answer (the teacher's solution
            # does: sv_and = [1, 2, 3]) is theirs to see
            mine = tmp / "submitted" / sid / name / path.name
            own = "\n".join(c.source for c in nbformat.read(mine, 4).cells) \
                if mine.exists() else ""
            for secret in secrets:
                assert secret not in text or secret in own, (page, secret)

    @pytest.mark.parametrize("path", HOMEWORK, ids=[p.stem for p in HOMEWORK])
    def test_points_and_failures(self, graded, path):
        with open(graded["tmp"] / "grades.csv", newline="") as f:
            import csv

            rows = [r for r in csv.DictReader(f) if r["notebook"] == path.stem]
        pages = {(sid, p.suffix): text for sid, p, text in self.pages(graded, path.stem)}
        for sid in ("honest", "blank", "wrong"):
            for row in rows:
                if row["student"] == sid and row["cell"] == "total":
                    total = f"Total (autograded): {float(row['score']):g} / " \
                            f"{float(row['max_score']):g}"
                    assert total in pages[sid, ".html"] and total in pages[sid, ".md"]
        assert "passed" in pages["honest", ".html"]
        assert "Failed on the visible line" in pages["blank", ".html"]
        assert "NotImplementedError" in pages["blank", ".html"]
        wrong = pages["wrong", ".html"]
        assert fb.HIDDEN_FAILED in wrong or "Failed on the visible line" in wrong

    def test_hostile_output_is_escaped(self, graded):
        page = (graded["tmp"] / "feedback" / "xss" / "homework4.html").read_text()
        assert "<script" not in page and "<img" not in page
        assert page.count(html.escape(XSS)) >= 2 and html.escape(IMG) in page


def test_answers_come_from_the_submission_not_from_the_graded_run(tmp_path):
    """The graded run's outputs of an answer cell could hold a hidden test (the kernel
    saw them): the page shows the submitted file's; a test's points come from the
    rows, its failure from the run's traceback, a stopped cell from its error."""
    answer = new_code_cell("w = np.zeros(3)", metadata={"nbgrader": {
        "grade_id": "a", "grade": False, "solution": True, "locked": False,
        "schema_version": 3}})
    grading = new_notebook(cells=[new_markdown_cell("## Exercise 1"), answer, GRADING])
    path = tmp_path / "grading" / "hw.ipynb"
    path.parent.mkdir()
    nbformat.write(grading, path)
    course = tmp_path / "course"
    submitted = copy.deepcopy(grading)
    submitted.cells[1].outputs = [new_output("stream", name="stdout", text=XSS)]
    executed = copy.deepcopy(grading)
    executed.cells[1].outputs = [new_output("stream", name="stdout", text="secret_t = 1")]
    executed.cells[2].outputs = run(1, evalue="w has two entries")["outputs"]
    executed.cells.append(new_code_cell("x", outputs=[new_output(
        "error", ename="CellTimeoutError", evalue="", traceback=[])]))
    for where, nb in (("submitted", submitted), ("autograded", executed)):
        (course / where / "s01" / "hw").mkdir(parents=True)
        nbformat.write(nb, course / where / "s01" / "hw" / "hw.ipynb")
    rows = [{"cell": "t", "score": 0.0, "max_score": 1.0, "note": "hw.w_secret differs"},
            {"cell": "total", "score": 0.0, "max_score": 1.0, "note": ""}]
    html_path, md_path = fb.write_feedback(tmp_path / "out", "s01", "hw", rows, path,
                                           course, values={"hw.w_secret": [0.123456]})
    for text in (html.unescape(html_path.read_text()), md_path.read_text()):
        assert XSS in text and "secret_t" not in text and "hw.w_secret" not in text
        assert "0 / 1" in text and "AssertionError: w has two entries" in text
        assert "Exercise 1" in text and fb.LIMITS["CellTimeoutError"] in text
    # a link in place of the submission: not read, no answer shown
    (course / "submitted" / "s01" / "hw" / "hw.ipynb").unlink()
    (course / "submitted" / "s01" / "hw" / "hw.ipynb").symlink_to(
        course / "autograded" / "s01" / "hw" / "hw.ipynb")
    html_path, _ = fb.write_feedback(tmp_path / "out", "s01", "hw", rows, path, course,
                                     values={})
    assert "not in your submission" in html_path.read_text()
    with pytest.raises(ValueError):
        fb.write_feedback(tmp_path / "out", "../x", "hw", rows, path, course, values={})
