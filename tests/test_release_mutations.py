"""Mutations of a real homework and a real chapter that must not reach the students.

Each mutation is made in code from ``book/homework/homework2.ipynb`` (or a chapter of
the book) as a careless or clever teacher might write it; the release (or the student
sources) must either refuse it, with a message that names the problem and nothing
written, or strip it, so that a marker string planted with it appears nowhere in what
the students get. Issue 28 lists the mutations that leaked before.
"""

import copy
import shutil
from pathlib import Path

import nbformat
import pytest

from booktools import homework as hw

ROOT = Path(__file__).resolve().parents[1]
HOMEWORK = ROOT / "book" / "homework" / "homework2.ipynb"
CHAPTER = ROOT / "book" / "perceptron.md"
PLANTED = "PLANTED w = secret_value_4711(X, y)"  # what must never reach a student

pytestmark = pytest.mark.homework


def _cell(nb, answer=False, graded=False, markdown=False):
    """The first cell of the asked kind: an answer cell with a solution region, a graded
    cell with hidden tests, or a question (a markdown cell that is no answer)."""
    for cell in nb.cells:
        if answer and hw.is_solution_cell(cell) and hw.BEGIN_SOLUTION in cell.source:
            return cell
        if graded and hw.is_grade_cell(cell) and hw.BEGIN_HIDDEN in cell.source:
            return cell
        if markdown and cell.cell_type == "markdown" and cell.source.startswith("## Question"):
            return cell
    raise AssertionError("homework2 has no such cell")


def replace(kind, old, new):
    def mutate(nb):
        cell = _cell(nb, **{kind: True})
        assert old in cell.source
        cell.source = cell.source.replace(old, new, 1)
    return mutate


def append(kind, text):
    def mutate(nb):
        cell = _cell(nb, **{kind: True})
        cell.source += "\n" + text
    return mutate


def hidden_marker(spelling):
    """The graded cell's BEGIN HIDDEN TESTS line spelled otherwise, a planted line after it."""
    return replace("graded", hw.BEGIN_HIDDEN, f"{spelling}\n# {PLANTED}")


def solution_marker(spelling):
    return replace("answer", hw.BEGIN_SOLUTION, f"{spelling}\n    # {PLANTED}")


def hidden_line(text):
    """A line added to the graded cell's hidden tests."""
    return replace("graded", hw.END_HIDDEN, f"{text}\n{hw.END_HIDDEN}")


def insert_cell(cell):
    def mutate(nb):
        nb.cells.insert(3, nbformat.from_dict(cell))
    return mutate


def set_metadata(where, key, value):
    def mutate(nb):
        meta = nb.metadata if where == "notebook" else _cell(nb, answer=True).metadata
        if "." in key:
            outer, inner = key.split(".")
            meta.setdefault(outer, {})[inner] = value
        else:
            meta[key] = value
    return mutate


def tag(tags):
    def mutate(nb):
        cell = nbformat.v4.new_code_cell(f"# {PLANTED}")
        cell.metadata["tags"] = tags
        nb.cells.insert(3, cell)
    return mutate


def attach(kind):
    def mutate(nb):
        cell = _cell(nb, **{kind: True})
        cell.source += "\n\n![sketch](attachment:a.png)"
        cell["attachments"] = {"a.png": {"image/png": PLANTED}}
    return mutate


def written_answer_with_picture(nb):
    cell = nbformat.v4.new_markdown_cell("![my sketch](attachment:a.png)", metadata={
        "nbgrader": {"grade": True, "grade_id": "sketch", "locked": False, "points": 1,
                     "schema_version": 3, "solution": True, "task": False}})
    cell["attachments"] = {"a.png": {"image/png": PLANTED}}
    nb.cells.insert(4, cell)


def with_output(nb):
    cell = _cell(nb, answer=True)
    cell.outputs = [nbformat.v4.new_output("stream", text=PLANTED)]


def visible_lincls_result(nb):
    cell = _cell(nb, graded=True)
    cell.source = cell.source.replace(
        hw.BEGIN_HIDDEN, "ref = Perceptron(shuffle=False).fit(X, y)\n"
        f"{hw.BEGIN_HIDDEN}\nassert np.allclose(w1[1:], ref.coef_.ravel())", 1)


CYRILLIC_E, CYRILLIC_VE, CYRILLIC_O, GREEK_ETA = "\u0415", "\u0412", "\u041e", "\u0397"
LOOKS_LIKE = "looks like a region marker but is not one"
NEAR_MISS = "near-miss marker"
REFUSED = {
    # hidden-test markers in other spellings (issue 28: the first six leaked)
    "hidden-no-tests": (hidden_marker("### BEGIN HIDDEN"), LOOKS_LIKE),
    "hidden-hiden": (hidden_marker("### BEGIN HIDEN TESTS"), LOOKS_LIKE),
    "hidden-begin-last": (hidden_marker("### HIDDEN TESTS BEGIN"), LOOKS_LIKE),
    "hidden-start": (hidden_marker("### START HIDDEN TESTS"), LOOKS_LIKE),
    "hidden-brackets": (hidden_marker("### [begin hidden tests]"), LOOKS_LIKE),
    "hidden-cyrillic-e": (hidden_marker(f"### BEGIN HIDD{CYRILLIC_E}N TESTS"), LOOKS_LIKE),
    "hidden-cyrillic-ve": (hidden_marker(f"### {CYRILLIC_VE}EGIN HIDDEN TESTS"), LOOKS_LIKE),
    "hidden-greek-eta": (hidden_marker(f"### BEGIN {GREEK_ETA}IDDEN TESTS"), LOOKS_LIKE),
    "hidden-fullwidth": (hidden_marker("### \uff22\uff25\uff27\uff29\uff2e HIDDEN TESTS"),
                         NEAR_MISS),
    "hidden-math-bold": (hidden_marker("### \U0001d401\U0001d404\U0001d406\U0001d408\U0001d40d"
                                       " HIDDEN TESTS"), NEAR_MISS),
    "hidden-zero-width": (hidden_marker("### BEGIN HID\u200bDEN TESTS"), NEAR_MISS),
    "hidden-dotted-i": (hidden_marker("### BEGIN H\u0130DDEN TESTS"), LOOKS_LIKE),
    "hidden-lower": (hidden_marker("### begin hidden tests"), NEAR_MISS),
    "hidden-singular": (hidden_marker("### BEGIN HIDDEN TEST"), NEAR_MISS),
    "hidden-four-hashes": (hidden_marker("#### BEGIN HIDDEN TESTS"), NEAR_MISS),
    "hidden-trailing": (hidden_marker("### BEGIN HIDDEN TESTS ###"), NEAR_MISS),
    "hidden-underscores": (hidden_marker("### BEGIN_HIDDEN_TESTS"), NEAR_MISS),
    "hidden-nbsp": (hidden_marker("### BEGIN\u00a0HIDDEN TESTS"), NEAR_MISS),
    "begin-tests": (hidden_marker("### BEGIN TESTS"), LOOKS_LIKE),
    "stop-hidden": (replace("graded", hw.END_HIDDEN, "### STOP HIDDEN TESTS"), LOOKS_LIKE),
    # solution markers in other spellings
    "solution-plural": (solution_marker("### BEGIN SOLUTIONS"), NEAR_MISS),
    "solution-case": (solution_marker("### Begin Solution"), NEAR_MISS),
    "solution-soln": (solution_marker("### BEGIN SOLN"), LOOKS_LIKE),
    "solution-start": (solution_marker("### START SOLUTION"), LOOKS_LIKE),
    "solution-answer": (solution_marker("### BEGIN ANSWER"), LOOKS_LIKE),
    "solution-cyrillic-o": (solution_marker(f"### BEGIN S{CYRILLIC_O}LUTION"), LOOKS_LIKE),
    "solution-stop": (replace("answer", hw.END_SOLUTION, "### STOP SOLUTION"), LOOKS_LIKE),
    "solution-one-hash": (solution_marker("# BEGIN SOLUTION"), NEAR_MISS),
    # a second region in an answer cell that has a valid one (issue 28: leaked)
    "second-soln": (append("answer", f"### BEGIN SOLN\n{PLANTED}\n### END SOLN"), LOOKS_LIKE),
    "second-answer": (append("answer", f"### ANSWER\n{PLANTED}"), "names a region"),
    "second-solution-comment": (append("answer", f"# Solution:\n{PLANTED}"), "names a region"),
    "second-heading": (insert_cell(nbformat.v4.new_markdown_cell(
        f"## Answer\n\n{PLANTED}", metadata={"nbgrader": {
            "grade": True, "grade_id": "written", "locked": False, "points": 1,
            "schema_version": 3, "solution": True, "task": False}})), "names a region"),
    "second-nested": (replace("answer", hw.END_SOLUTION,
                              f"{hw.BEGIN_SOLUTION}\n{PLANTED}\n{hw.END_SOLUTION}"), "nested"),
    # cells the release cannot show to be safe (issue 28: the first three leaked)
    "picture-on-question": (attach("markdown"), "attached picture"),
    "remove-cell-only": (tag(["remove-cell"]), "tagged 'remove-cell'"),
    "raw-cell": (insert_cell(nbformat.v4.new_raw_cell(PLANTED)), "a raw cell"),
    "remove-input-only": (tag(["remove-input"]), "tagged 'remove-input'"),
    "raw-cell-with-markers": (insert_cell(nbformat.v4.new_raw_cell(
        f"{hw.BEGIN_SOLUTION}\n{PLANTED}\n{hw.END_SOLUTION}")), "not allowed in a raw cell"),
    # expected() outside hidden tests (issue 28: leaked), and routes to lincls
    "expected-visible": (replace("graded", hw.BEGIN_HIDDEN,
                                 f'assert np.allclose(w1, expected("k", w1))\n{hw.BEGIN_HIDDEN}'),
                         "expected\\(...\\) outside a hidden-test region"),
    "expected-plain-cell": (insert_cell(nbformat.v4.new_code_cell('x = expected("k", 1)')),
                            "expected\\(...\\) outside a hidden-test region"),
    "importlib": (hidden_line('ref = importlib.import_module("lincls.perceptron")'),
                  "may not reach a module by name"),
    "dunder-import": (hidden_line('ref = __import__("lincls")'), "may not reach a module"),
    "sys-modules": (hidden_line('ref = sys.modules["lin" + "cls"]'), "may not reach a module"),
    "import-in-hidden": (hidden_line("import lincls.perceptron as lp"), "may not reach a module"),
    "dunder-globals": (hidden_line('ref = check.__globals__["np"]'), "may not reach a module"),
    "visible-lincls-result": (visible_lincls_result, "computed from lincls in lines the student"),
    # a self-check list that holds more than names
    "lincls-fixed-dict": (set_metadata("notebook", "lincls.fixed", [{"answer": PLANTED}]),
                          "'fixed' must be a list of self-check names"),
}
#: Lines that only look like marker words in part (PHI_DENSE holds HIDEN, LEGEND holds
#: END): a graded cell may hold them.
ACCEPTED = {
    "phi-dense": "phi_dense = 1",
    "legend-test": "plt.legend()  # test",
    "x-test": "X_test = 1",
}
STRIPPED = {
    # answers hidden in metadata (issue 28: all four leaked)
    "cell-metadata": set_metadata("cell", "answer", PLANTED),
    "nbgrader-extra-field": set_metadata("cell", "nbgrader.solution_text", PLANTED),
    "notebook-metadata": set_metadata("notebook", "solutions", PLANTED),
    "lincls-extra-field": set_metadata("notebook", "lincls.answers", PLANTED),
    "kernelspec-extra-field": set_metadata("notebook", "kernelspec.answer", PLANTED),
    "language-info-extra-field": set_metadata("notebook", "language_info.solution", PLANTED),
    "codemirror-mode-extra-field": set_metadata("notebook", "language_info.codemirror_mode",
                                                {"name": "ipython", "x": [PLANTED]}),
    "codemirror-mode-extra-text": set_metadata("notebook", "language_info.codemirror_mode",
                                               {"name": "ipython", "version": 3, "x": PLANTED}),
    "jupyter-extra-field": set_metadata("cell", "jupyter.note", PLANTED),
    "widget-state": set_metadata("notebook", "widgets", {"state": PLANTED}),
    "tag-holding-text": set_metadata("cell", "tags", [PLANTED.replace(",", "")]),
    "mystnb-extra-field": set_metadata("cell", "mystnb", {"image": {"alt": "x"},
                                                          "note": PLANTED}),
    # pictures, outputs and solution-only cells
    "picture-on-answer": written_answer_with_picture,
    "answer-output": with_output,
    "solution-only-cell": tag(["remove-cell", "solution-only"]),
}


def _write(tmp_path, mutate):
    nb = nbformat.read(HOMEWORK, 4)
    mutate(nb)
    src = tmp_path / "src"
    src.mkdir()
    (src / HOMEWORK.name).write_text(nbformat.writes(nb), encoding="utf-8")
    return src


@pytest.mark.parametrize("name", REFUSED)
def test_release_refuses(name, tmp_path):
    mutate, message = REFUSED[name]
    src = _write(tmp_path, mutate)
    with pytest.raises(hw.MalformedHomework, match=message):
        hw.release(src, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ACCEPTED)
def test_release_accepts(name, tmp_path):
    line = ACCEPTED[name]
    src = _write(tmp_path, replace("graded", hw.BEGIN_HIDDEN, f"{line}\n{hw.BEGIN_HIDDEN}"))
    [out] = hw.release(src, tmp_path / "out")
    assert line in nbformat.read(out, 4).cells[_index_of_graded(src)].source


def _index_of_graded(src):
    nb = nbformat.read(src / HOMEWORK.name, 4)
    return nb.cells.index(_cell(nb, graded=True))


@pytest.mark.parametrize("name", STRIPPED)
def test_release_strips(name, tmp_path):
    src = _write(tmp_path, STRIPPED[name])
    teacher = (src / HOMEWORK.name).read_text(encoding="utf-8")
    assert "secret_value_4711" in teacher  # the mutation is there ...
    [out] = hw.release(src, tmp_path / "out")
    assert "secret_value_4711" not in out.read_text(encoding="utf-8")  # ... and gone


def test_the_unmutated_homework_is_released(tmp_path):
    """The control: the real homework passes, so each refusal above is the mutation's."""
    src = _write(tmp_path, lambda nb: None)
    assert hw.release(src, tmp_path / "out") == [tmp_path / "out" / HOMEWORK.name]


def test_release_searches_its_own_output_for_leaks(tmp_path, monkeypatch):
    """A student version that still holds a solution line (a release bug, simulated by
    a student version made from the teacher's) is never moved into place."""
    import importlib

    rel = importlib.import_module("booktools.homework.release")

    monkeypatch.setattr(rel, "_student_version", lambda nb, path: copy.deepcopy(nb))
    src = _write(tmp_path, lambda nb: None)
    with pytest.raises(hw.MalformedHomework, match="is in its student version"):
        hw.release(src, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --- chapters: the student sources ------------------------------------------------
def _book(tmp_path, chapter_text, extra=None):
    """A book of one real chapter (mutated) and the real homework 2."""
    root = tmp_path / "book-repo"
    (root / "book" / "homework").mkdir(parents=True)
    (root / "lincls").mkdir()
    shutil.copy(HOMEWORK, root / "book" / "homework" / HOMEWORK.name)
    shutil.copy(ROOT / "_config.yml", root / "_config.yml")
    (root / "book" / CHAPTER.name).write_text(chapter_text, encoding="utf-8")
    for name, data in (extra or {}).items():
        (root / name).write_bytes(data)
    return root


def _exercise_end(text):
    """Insert point: after the chapter's first {exercise} block."""
    at = text.index("{exercise}")
    return text.index("\n```\n", at) + 5


def block(fence, head, body=PLANTED, options=""):
    return f"\n{fence}{head}\n{options}\n{body}\n{fence}\n"


def chapter_with(snippet):
    def make(text):
        at = _exercise_end(text)
        return text[:at] + snippet + text[at:]
    return make


CHAPTER_REFUSED = {
    "admonition-solution": (chapter_with(block("```", "{admonition} Solution")), "titled like"),
    "admonition-answer-colon": (chapter_with(block(":::", "{admonition} Answer")), "titled like"),
    "dropdown-solution": (chapter_with(block("```", "{dropdown} Solution to the exercise")),
                          "titled like"),
    "dropdown-greek-o": (chapter_with(block("```", "{dropdown} S\u03bflution")), "titled like"),
    "admonition-in-exercise": (chapter_with(
        "\n````{exercise}\n:label: planted-ex\n\nAsk.\n" + block("```", "{admonition} Solution")
        + "````\n"), "titled like"),
}
CHAPTER_ACCEPTED = {  # titles that hold SOLUTION only inside a longer word
    "resolution": chapter_with(block("```", "{admonition} Resolution of the paradox")),
    "dissolution": chapter_with(block(":::", "{dropdown} Dissolutions and answerable claims")),
}
CHAPTER_STRIPPED = {
    "tilde-solution": chapter_with(block("~~~", "{solution} planted-ex",
                                         options=":class: dropdown")),
    "long-tilde-solution": chapter_with(block("~~~~~", "{solution} planted-ex")),
    "teacher-visible-admonition": chapter_with(block(
        "```", "{admonition} Solution sketch", options=":class: teacher-visible")),
    "gated-tilde-solution": chapter_with(f"\n~~~{{solution-start}} planted-ex\n~~~\n{PLANTED}\n"
                                         "~~~{solution-end}\n~~~\n"),
}


@pytest.mark.parametrize("name", CHAPTER_REFUSED)
def test_student_sources_refuse(name, tmp_path):
    make, message = CHAPTER_REFUSED[name]
    root = _book(tmp_path, make(CHAPTER.read_text(encoding="utf-8")))
    with pytest.raises(ValueError, match=message):
        hw.make_student_sources(root, tmp_path / "src")


@pytest.mark.parametrize("name", CHAPTER_STRIPPED)
def test_student_sources_strip(name, tmp_path):
    text = CHAPTER_STRIPPED[name](CHAPTER.read_text(encoding="utf-8"))
    assert PLANTED in text
    dest = hw.make_student_sources(_book(tmp_path, text), tmp_path / "src")
    assert PLANTED not in (dest / "book" / CHAPTER.name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", CHAPTER_ACCEPTED)
def test_student_sources_keep(name, tmp_path):
    text = CHAPTER_ACCEPTED[name](CHAPTER.read_text(encoding="utf-8"))
    dest = hw.make_student_sources(_book(tmp_path, text), tmp_path / "src")
    assert PLANTED in (dest / "book" / CHAPTER.name).read_text(encoding="utf-8")


def test_student_sources_copy_only_referenced_files(tmp_path):
    """A teacher's notes beside the homework stay out, and so does a file that only a
    chapter's solution names; data the chapter's text names is copied."""
    text = CHAPTER.read_text(encoding="utf-8")
    at = _exercise_end(text)
    text = (text[:at] + "\nThe data: [points](homework/points.csv).\n"
            + block("```", "{solution} planted-ex", "See homework/answers.csv.") + text[at:])
    root = _book(tmp_path, text, {
        f"book/homework/{n}": PLANTED.encode() for n in (
            "points.csv", "answers.csv", "solutions.txt", "teacher_notes.json",
            "solution_plot.png")})
    dest = hw.make_student_sources(root, tmp_path / "src")
    shipped = sorted(p.name for p in (dest / "book" / "homework").iterdir())
    assert shipped == [HOMEWORK.name, "points.csv"]


def test_notebook_chapter_loses_solution_only_cells_and_outputs(tmp_path):
    import jupytext

    nb = jupytext.reads(CHAPTER.read_text(encoding="utf-8"), fmt="md:myst")
    cell = nbformat.v4.new_code_cell(f"print({PLANTED!r})", metadata={
        "tags": ["remove-cell", "solution-only"]})
    cell.outputs = [nbformat.v4.new_output("stream", text=PLANTED)]
    nb.cells.insert(2, cell)
    nb.cells.insert(3, nbformat.v4.new_markdown_cell(
        block("~~~", "{solution} planted-ex").strip()))
    root = _book(tmp_path, "# placeholder\n")
    (root / "book" / CHAPTER.name).unlink()
    nbformat.write(nb, root / "book" / "perceptron.ipynb")
    dest = hw.make_student_sources(root, tmp_path / "src")
    shipped = (dest / "book" / "perceptron.ipynb").read_text(encoding="utf-8")
    assert "secret_value_4711" not in shipped
    assert len(nbformat.reads(shipped, 4).cells) == len(nb.cells) - 1
