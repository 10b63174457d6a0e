"""Mutations of a real homework and a real chapter that must not reach the students.

Each mutation is made in code from ``book/homework/homework2.ipynb`` (or a chapter of
the book) as a careless or clever teacher might write it; the release (or the student
sources) must either refuse it, with a message that names the problem and nothing
written, or strip it, so that a marker string planted with it appears nowhere in what
the students get. Issue 28 lists the mutations that leaked before.
"""

import copy
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from booktools import homework as hw
from booktools.homework import notebook as nb_meta

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
    "hidden-cyrillic-e": (hidden_marker(f"### BEGIN HIDD{CYRILLIC_E}N TESTS"), NEAR_MISS),
    "hidden-cyrillic-ve": (hidden_marker(f"### {CYRILLIC_VE}EGIN HIDDEN TESTS"), NEAR_MISS),
    "hidden-greek-eta": (hidden_marker(f"### BEGIN {GREEK_ETA}IDDEN TESTS"), NEAR_MISS),
    "hidden-fullwidth": (hidden_marker("### \uff22\uff25\uff27\uff29\uff2e HIDDEN TESTS"),
                         NEAR_MISS),
    "hidden-math-bold": (hidden_marker("### \U0001d401\U0001d404\U0001d406\U0001d408\U0001d40d"
                                       " HIDDEN TESTS"), NEAR_MISS),
    "hidden-zero-width": (hidden_marker("### BEGIN HID\u200bDEN TESTS"), NEAR_MISS),
    "hidden-dotted-i": (hidden_marker("### BEGIN H\u0130DDEN TESTS"), NEAR_MISS),
    "hidden-lower": (hidden_marker("### begin hidden tests"), NEAR_MISS),
    "hidden-singular": (hidden_marker("### BEGIN HIDDEN TEST"), NEAR_MISS),
    "hidden-four-hashes": (hidden_marker("#### BEGIN HIDDEN TESTS"), NEAR_MISS),
    "hidden-trailing": (hidden_marker("### BEGIN HIDDEN TESTS ###"), NEAR_MISS),
    "hidden-underscores": (hidden_marker("### BEGIN_HIDDEN_TESTS"), NEAR_MISS),
    "hidden-nbsp": (hidden_marker("### BEGIN\u00a0HIDDEN TESTS"), NEAR_MISS),
    # a look-alike marker in a cell that is neither graded nor an answer
    "plain-code-cyrillic-e": (insert_cell(nbformat.v4.new_code_cell(
        f"### BEGIN HIDD{CYRILLIC_E}N TESTS\n# {PLANTED}")), NEAR_MISS),
    "plain-markdown-greek-eta": (insert_cell(nbformat.v4.new_markdown_cell(
        f"### END {GREEK_ETA}IDDEN TESTS\n\n{PLANTED}")), NEAR_MISS),
    "begin-tests": (hidden_marker("### BEGIN TESTS"), LOOKS_LIKE),
    "stop-hidden": (replace("graded", hw.END_HIDDEN, "### STOP HIDDEN TESTS"), LOOKS_LIKE),
    # solution markers in other spellings
    "solution-plural": (solution_marker("### BEGIN SOLUTIONS"), NEAR_MISS),
    "solution-case": (solution_marker("### Begin Solution"), NEAR_MISS),
    "solution-soln": (solution_marker("### BEGIN SOLN"), LOOKS_LIKE),
    "solution-start": (solution_marker("### START SOLUTION"), LOOKS_LIKE),
    "solution-answer": (solution_marker("### BEGIN ANSWER"), LOOKS_LIKE),
    "solution-cyrillic-o": (solution_marker(f"### BEGIN S{CYRILLIC_O}LUTION"), NEAR_MISS),
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
                          "'fixed' must be a list of self-check or expected-value names"),
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


# --- issue 40: a student version holds what a rule allows ---------------------------
# The audit's leaks: a hint in the parameters cell, an HTML comment in a question, the
# answer function's docstring, a comment just above ### BEGIN SOLUTION, {solution},
# {admonition} Solution and {dropdown} Answer in a homework's markdown, and the text
# fields that survive a release (lincls.summary, alt text, tags, cell ids,
# kernelspec.display_name); each with neighbours in other spellings and languages.
SOLUTION = "return bool(y * np.dot(w, x) <= 0)"  # a line of homework 2's first solution
RESPACED = "RETURN BOOL(Y*NP.DOT(W,X)<=0)"  # the same, spaced and cased otherwise
STEP = "w = w + eta * t * x"  # a line of its second
HIDDEN = 'assert gates == expected("hw2.learnable_gates", gates)'  # one of its hidden tests
DOCSTRING = '"""True when the sample (x, y) is a mistake of the weights w."""'
SHARES = "holds the line .* of the solutions or hidden tests"
MARKDOWN = "the release copies a markdown cell as it is written"


def block(fence, head, body=PLANTED, options=""):
    return f"\n{fence}{head}\n{options}\n{body}\n{fence}\n"


def parameters(text):
    """A line added to the parameters cell (it reaches every student as it is)."""
    def mutate(nb):
        [cell] = [c for c in nb.cells if "parameters" in (c.metadata.get("tags") or [])]
        cell.source += "\n" + text
    return mutate


def docstring(text):
    return replace("answer", DOCSTRING, text)


def above_begin(text):
    return replace("answer", f"    {hw.BEGIN_SOLUTION}", f"    {text}\n    {hw.BEGIN_SOLUTION}")


def question(text):
    return append("markdown", "\n" + text)


def set_cell_id(value):
    def mutate(nb):
        _cell(nb, answer=True)["id"] = value
    return mutate


REFUSED_40 = {
    # the parameters cell: a hint, in any spelling, a string, code, a hidden test
    "parameters-hint": (parameters(f"# Hint: {SOLUTION}"), SHARES),
    "parameters-hint-spacing": (parameters("# HINT:  RETURN BOOL(Y*NP.DOT(W,X)<=0)"), SHARES),
    "parameters-hint-unspaced": (parameters("#hint:returnbool(y*np.dot(w,x)<=0)"), SHARES),
    "parameters-string": (parameters(f'HINT = "{STEP}"'), SHARES),
    "parameters-code": (parameters(STEP.replace(" ", "")), SHARES),
    "parameters-hidden-test": (parameters(f"# {HIDDEN}"), SHARES),
    # the answer cell around its region: docstring and comments
    "docstring": (docstring(f'"""True when the sample is a mistake: {SOLUTION}"""'), SHARES),
    "docstring-own-line": (docstring(f'"""True when a mistake.\n\n    {SOLUTION.upper()}\n    """'),
                           SHARES),
    "docstring-single-quotes": (docstring(f"'''{SOLUTION}'''"), SHARES),
    "comment-on-def": (replace("answer", "def is_mistake(w, x, y):",
                               f"def is_mistake(w, x, y):  # {SOLUTION}"), SHARES),
    "comment-above-begin": (above_begin(f"# {SOLUTION}"), SHARES),
    "comment-above-begin-unspaced": (above_begin("#RETURNBOOL(Y*NP.DOT(W,X)<=0)"), SHARES),
    "comment-after-end": (append("answer", f"# {SOLUTION}"), SHARES),
    "comment-in-test-cell": (replace("graded", hw.BEGIN_HIDDEN, f"# {HIDDEN}\n{hw.BEGIN_HIDDEN}"),
                             SHARES),
    # what a renderer hides in a question, which the student version keeps as written
    "html-comment": (question(f"<!-- {PLANTED} -->"), "an HTML comment"),
    "html-comment-multiline": (question(f"<!--\n{PLANTED}\n-->"), "an HTML comment"),
    "html-comment-tight": (question(f"<!--{PLANTED}-->"), "an HTML comment"),
    "html-details": (question(f"<details><summary>Answer</summary>\n\n{PLANTED}\n</details>"),
                     "the HTML tag <details>"),
    "html-hidden-div": (question(f"<div hidden>{PLANTED}</div>"), "the HTML tag <div>"),
    "html-style": (question(f'<span style="display:none">{PLANTED}</span>'), "<span>"),
    "html-bold-with-style": (question(f'<b style="color:white">{PLANTED}</b>'),
                             "with attributes"),
    "link-reference-comment": (question(f"[//]: # ({PLANTED})"), "link reference"),
    "footnote": (question(f"[^1]: {PLANTED}"), "link reference or footnote"),
    "myst-comment": (question(f"% {PLANTED}"), "a MyST comment"),
    "block-break": (question(f'+++ {{"note": "{PLANTED}"}}'), "block break"),
    "math-phantom": (question("$\\phantom{w = secret_value_4711(X, y)}$"), "hides what"),
    "math-white": (question("$$\\color{white}{w = secret_value_4711(X, y)}$$"), "hides what"),
    "math-comment": (question("$$\nx % w = secret_value_4711(X, y)\n$$"), "a comment \\(%\\)"),
    "abbr-role": (question("{abbr}`Hint (w = secret_value_4711(X, y))`"), "the role \\{abbr\\}"),
    # MyST directives: a homework's markdown is copied, not rendered: only a few pass
    "myst-solution": (question(block("```", "{solution} hw2-q1")), "\\{solution\\}"),
    "myst-solution-capital": (question(block("```", "{Solution} hw2-q1")), "\\{Solution\\}"),
    "myst-solution-upper": (question(block("```", "{SOLUTION}")), "\\{SOLUTION\\}"),
    "myst-solution-tilde": (question(block("~~~", "{solution}")), "\\{solution\\}"),
    "myst-solution-colon": (question(block(":::", "{solution}")), "\\{solution\\}"),
    "myst-solution-gated": (question(f"```{{solution-start}} hw2-q1\n```\n{PLANTED}\n"
                                     "```{solution-end}\n```"), "\\{solution-start\\}"),
    "myst-admonition-solution": (question(block("```", "{admonition} Solution")),
                                 "\\{admonition\\}"),
    "myst-admonition-losung": (question(block(":::", "{admonition} Lösung")), "\\{admonition\\}"),
    "myst-admonition-other": (question(block("```", "{admonition} Worked example")),
                              "\\{admonition\\}"),
    "myst-dropdown-answer": (question(block("```", "{dropdown} Answer")), "\\{dropdown\\}"),
    "myst-dropdown-hint": (question(block("```", "{dropdown} Hint")), "\\{dropdown\\}"),
    "myst-toggle": (question(block("```", "{toggle}")), "\\{toggle\\}"),
    "myst-hint": (question(block("```", "{hint}")), "\\{hint\\}"),
    "myst-loesung": (question(block("```", "{Lösung}")), "\\{Lösung\\}"),
    "myst-exercise": (question(block("```", "{exercise}")), "\\{exercise\\}"),
    "myst-raw-html": (question(block("```", "{raw} html", f"<p>{PLANTED}</p>")), "\\{raw\\}"),
    "myst-note-folded": (question(block("```", "{note}", options=":class: dropdown")),
                         "the option :class:"),
    "pandoc-div": (question(block(":::", " solution")), "no allowed directive"),
    # text fields that survive a release
    # (the line as written was found before by the release's last search; in another
    # spacing or case it was not)
    "summary": (set_metadata("notebook", "lincls.summary", f"The perceptron; {RESPACED}"),
                SHARES),
    "summary-as-written": (set_metadata("notebook", "lincls.summary", f"Hint: {SOLUTION}"),
                           SHARES),
    "alt-text": (set_metadata("cell", "mystnb", {"image": {"alt": f"A plot of {RESPACED}"}}),
                 SHARES),
    "display-name": (set_metadata("notebook", "kernelspec.display_name", f"Python 3 {RESPACED}"),
                     SHARES),
    "grade-id": (set_metadata("cell", "nbgrader.grade_id", "hw2-return-bool-y-np-dot-w-x-0"),
                 SHARES),
    "tag-solution": (set_metadata("cell", "tags", ["return-bool-y-np-dot-w-x-0"]), SHARES),
    "cell-id-solution": (set_cell_id("return-bool-y-np-dot-w-x-0"), SHARES),
    "chapters-text": (set_metadata("notebook", "lincls.chapters", ["perceptron", PLANTED]),
                      "which is no page name"),
    "fixed-text": (set_metadata("notebook", "lincls.fixed", [PLANTED]),
                   "which is no self-check or expected-value name"),
}
REFUSED.update(REFUSED_40)
STRIPPED.update({
    # fields that carry no text: tags from a named set, ids of its own, Python's names
    "tag-unknown": set_metadata("cell", "tags", ["secret_value_4711"]),
    "tag-on-question": lambda nb: _cell(nb, markdown=True).metadata.update(
        tags=["w-secret_value_4711"]),
    "cell-id": set_cell_id("secret_value_4711-w"),
    "display-name-text": set_metadata("notebook", "kernelspec.display_name",
                                      "Python 3 (secret_value_4711)"),
    "kernel-name-text": set_metadata("notebook", "kernelspec.name", "secret_value_4711"),
    "language-text": set_metadata("notebook", "kernelspec.language", "secret_value_4711"),
    "language-version-text": set_metadata("notebook", "language_info.version",
                                          "3.11 secret_value_4711"),
    "mimetype-text": set_metadata("notebook", "language_info.mimetype", "text/secret_value_4711"),
    "lexer-text": set_metadata("notebook", "language_info.pygments_lexer", "secret_value_4711"),
    "codemirror-name-text": set_metadata("notebook", "language_info.codemirror_mode",
                                         {"name": "secret_value_4711", "version": 3}),
})
#: Markdown a question may hold (the real homework's own, and what looks like HTML but
#: is not): each must still release.
MARKDOWN_ACCEPTED = {
    "math-less-than": "Compare $y\\,(\\mathbf w\\cdot\\mathbf x)<0$ and $a<b$.",
    "code-span-html": "The tag `<details>` and `<!-- this -->` are code here.",
    "code-block-html": "```html\n<details><summary>code</summary></details>\n```",
    "inline-tags": "Line<br>break, H<sub>2</sub>O and <b>bold</b>.",
    "note-directive": "```{note}\nRun the cells in order.\n```",
    "math-directive": "```{math}\n:label: hw-eq\n\\mathbf w \\cdot \\mathbf x\n```",
    "autolink": "See <https://example.org/docs>.",
    "escaped-percent": "$\\eta = 50\\%$ of the rate.",
    "eq-role": "By {eq}`perceptron-update` the step is small.",
}


@pytest.mark.parametrize("name", MARKDOWN_ACCEPTED)
def test_release_accepts_markdown(name, tmp_path):
    text = MARKDOWN_ACCEPTED[name]
    src = _write(tmp_path, question(text))
    [out] = hw.release(src, tmp_path / "out")
    assert text in nbformat.read(out, 4).cells[_index_of(src, markdown=True)].source


def _index_of(src, **kind):
    nb = nbformat.read(src / HOMEWORK.name, 4)
    return nb.cells.index(_cell(nb, **kind))


def test_the_audit_lines_are_homework2s():
    """The mutations above plant lines of the real solution: they must be there."""
    teacher = nbformat.read(HOMEWORK, 4)
    lines = {ln.strip() for ln in hw.solution_lines(teacher)}
    assert {SOLUTION, STEP, HIDDEN} <= lines
    assert DOCSTRING in _cell(teacher, answer=True).source


def test_student_version_is_built_from_the_allow_lists(tmp_path):
    """What a student version holds, key by key: nothing but what a rule names."""
    src = _write(tmp_path, lambda nb: None)
    [out] = hw.release(src, tmp_path / "out")
    student = json.loads(out.read_text(encoding="utf-8"))
    assert set(student) == {"cells", "metadata", "nbformat", "nbformat_minor"}
    assert set(student["metadata"]) <= {"kernelspec", "language_info", "lincls"}
    assert student["metadata"]["kernelspec"]["display_name"] == "Python 3"
    for cell in student["cells"]:
        assert cell["cell_type"] in ("code", "markdown")
        assert set(cell) <= {"cell_type", "id", "metadata", "source", "outputs",
                             "execution_count"}
        assert re.fullmatch(r"[0-9a-f]{8}", cell["id"])
        assert set(cell["metadata"]) <= set(nb_meta.CELL_METADATA)
        assert set(cell["metadata"].get("tags", [])) <= nb_meta.STUDENT_TAGS
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


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
    (root / "_toc.yml").write_text(f"format: jb-book\nroot: book/{CHAPTER.stem}\nchapters:\n"
                                   f"- file: book/homework/{HOMEWORK.stem}\n", encoding="utf-8")
    (root / "book" / CHAPTER.name).write_text(chapter_text, encoding="utf-8")
    for name, data in (extra or {}).items():
        (root / name).write_bytes(data)
    return root


def _exercise_end(text):
    """Insert point: after the chapter's first {exercise} block."""
    at = text.index("{exercise}")
    return text.index("\n```\n", at) + 5


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


# --- issue 40: the student edition renders only what it allows ------------------------
# The audit's leaks: {Solution} with a capital S, code cells tagged only remove-cell or
# remove-input, saved outputs in .ipynb chapters, {toggle}, <details>, HTML comments,
# {admonition} Lösung, a helper .py beside a chapter; and neighbours.
def hidden_cell(code, tags="remove-cell"):
    return f"\n```{{code-cell}} ipython3\n:tags: [{tags}]\n{code}\n```\n"


def solution_quoting(key):
    return block("```", "{solution} planted-ex", f"It is {{eval}}`prose['{key}']`.")


def front_matter_key(text):
    return text.replace("\nxrefs:", f"\nanswers: {PLANTED!r}\nxrefs:", 1)


CHAPTER_ACCEPTED["dissolution"] = chapter_with(
    block(":::", "{admonition} Dissolutions and answerable claims"))
CHAPTER_REFUSED.update({
    # directives that fold or hide, in any spelling: not on the list
    "toggle": (chapter_with(block("```", "{toggle}")), "\\{toggle\\} is not allowed"),
    "toggle-colon": (chapter_with(block(":::", "{Toggle}")), "\\{Toggle\\} is not allowed"),
    "dropdown-neutral": (chapter_with(block("```", "{dropdown} Click to see")),
                         "\\{dropdown\\} is not allowed"),
    "hint": (chapter_with(block("```", "{hint}")), "\\{hint\\} is not allowed"),
    "raw-html": (chapter_with(block("```", "{raw} html", f"<p>{PLANTED}</p>")),
                 "\\{raw\\} is not allowed"),
    "unknown": (chapter_with(block("```", "{loesung}")), "\\{loesung\\} is not allowed"),
    "note-folded": (chapter_with(block("```", "{note}", options=":class: dropdown")),
                    "folded away"),
    "admonition-folded": (chapter_with(block("```", "{admonition} Think first",
                                             options=":class: toggle")), "folded away"),
    # solution titles in other languages and scripts
    "admonition-losung": (chapter_with(block("```", "{admonition} Lösung")), "titled like"),
    "admonition-loesung": (chapter_with(block(":::", "{admonition} Musterlösung")), "titled like"),
    "admonition-solucion": (chapter_with(block("```", "{admonition} Solución")), "titled like"),
    "admonition-reponse": (chapter_with(block("```", "{admonition} Réponse")), "titled like"),
    "admonition-cyrillic": (chapter_with(block("```", "{admonition} Решение")), "titled like"),
    "admonition-chinese": (chapter_with(block("```", "{admonition} 练习解答")), "titled like"),
    # HTML and comments: hidden on the page, shipped in the sources
    "details": (chapter_with(f"\n<details><summary>Answer</summary>\n\n{PLANTED}\n\n</details>\n"),
                "<details>"),
    "html-comment": (chapter_with(f"\n<!-- {PLANTED} -->\n"), "an HTML comment"),
    "html-comment-multiline": (chapter_with(f"\n<!--\n{PLANTED}\n-->\n"), "an HTML comment"),
    "hidden-div": (chapter_with(f'\n<div hidden>\n\n{PLANTED}\n\n</div>\n'), "<div>"),
    "myst-comment": (chapter_with(f"\n% {PLANTED}\n"), "a MyST comment"),
    "link-reference-comment": (chapter_with(f"\n[//]: # ({PLANTED})\n"), "link reference"),
    "hidden-markdown-cell": (chapter_with(f'\n+++ {{"tags": ["remove-cell"]}}\n\n{PLANTED}\n'),
                             "markdown cell's tag 'remove-cell'"),
    "front-matter": (front_matter_key, "front matter key 'answers'"),
    # code cells: tags and options from a list; a hidden cell a solution needs goes
    "unknown-tag": (chapter_with(hidden_cell(f"# {PLANTED}", "hide-solution")),
                    "the tag 'hide-solution'"),
    "load-option": (chapter_with("\n```{code-cell} ipython3\n:load: helper.py\n\n```\n"),
                    "option 'load'"),
    "remove-input-solution-number": (chapter_with(
        hidden_cell(f'prose["planted"] = 4711  # {PLANTED}\nprint(1)', "remove-input")
        + solution_quoting("planted")), "only a solution quotes"),
    "remove-cell-mixed-numbers": (chapter_with(
        hidden_cell(f'prose["planted"] = 4711  # {PLANTED}\nprose["shown"] = 1')
        + "\nShown: {eval}`prose['shown']`.\n" + solution_quoting("planted")),
        "only a solution quotes"),
    "remove-cell-solution-number-used-later": (chapter_with(
        hidden_cell(f'planted = 4711  # {PLANTED}\nprose["planted"] = planted')
        + solution_quoting("planted") + "\n```{code-cell} ipython3\nprint(planted)\n```\n"),
        "a later cell uses planted"),
})
CHAPTER_STRIPPED.update({
    # solution blocks whatever the case of their name
    "solution-capital": chapter_with(block("```", "{Solution} planted-ex")),
    "solution-upper": chapter_with(block(":::", "{SOLUTION} planted-ex")),
    "gated-capital": chapter_with(f"\n```{{Solution-Start}} planted-ex\n```\n{PLANTED}\n"
                                  "```{SOLUTION-END}\n```\n"),
    "gated-code-cell": chapter_with("\n```{solution-start} planted-ex\n```\n"
                                    + hidden_cell(f"# {PLANTED}", "remove-input")
                                    + "\n```{solution-end}\n```\n"),
    "teacher-visible-losung": chapter_with(block("```", "{admonition} Lösung",
                                                 options=":class: teacher-visible")),
    # hidden cells nothing shown depends on: the solution's numbers, checks
    "remove-cell-solution-number": chapter_with(
        hidden_cell(f'prose["planted"] = len("{PLANTED}")') + solution_quoting("planted")),
    "remove-cell-store-number": chapter_with(
        hidden_cell(f'store_number("planted", 4711)  # {PLANTED}')
        + solution_quoting("planted")),
    "remove-cell-checks-only": chapter_with(hidden_cell(f"# {PLANTED}\nassert 1 + 1 == 2")),
    "remove-cell-solution-function": chapter_with(hidden_cell(
        f"def planted(X, y):\n    return X  # {PLANTED}\n\n\nprose['planted'] = planted(1, 2)")
        + solution_quoting("planted")),
})
CHAPTER_ACCEPTED.update({
    # a hidden cell that what is shown depends on stays (its source is no solution)
    "hidden-cell-used-later": chapter_with(
        hidden_cell(f"planted = 4711  # {PLANTED}")
        + "\n```{code-cell} ipython3\nprint(planted)\n```\n"),
    "hidden-cell-quoted-in-text": chapter_with(
        hidden_cell(f'prose["planted"] = 4711  # {PLANTED}')
        + "\nIt is {eval}`prose['planted']`.\n"),
    "hidden-cell-that-draws": chapter_with(
        hidden_cell(f"rng_planted = np.random.default_rng(0)  # {PLANTED}")
        + hidden_cell("sample = rng_planted.normal()") + "\n```{code-cell} ipython3\n"
        "print(rng_planted.normal())\n```\n"),
    "html-in-code": chapter_with("\nThe tag `<details>` is code here.\n\n```html\n<!-- "
                                 f"{PLANTED} -->\n```\n"),
})


def test_student_sources_copy_only_what_the_toc_and_the_chapters_name(tmp_path):
    """A helper .py, notes and a picture that no page names stay out; a picture the text
    shows, a module a code cell imports and an {include}d text go with the chapter; a
    page that is not in the TOC does not ship."""
    text = CHAPTER.read_text(encoding="utf-8")
    at = _exercise_end(text)
    text = (text[:at] + "\n![a plot](figures/plot.png)\n\n```{include} parts/intro.md\n```\n"
            + "\n```{code-cell} ipython3\nfrom imported_helper import f\n```\n"
            + block("```", "{solution} planted-ex", "See figures/solution_plot.png.")
            + text[at:])
    planted = PLANTED.encode()
    root = _book(tmp_path, text, {
        "book/helper.py": planted, "book/imported_helper.py": b"def f():\n    return 1\n",
        "book/notes.md": planted, "book/draft.ipynb": planted})
    for name, data in (("figures/plot.png", b"PNG"), ("figures/solution_plot.png", planted),
                       ("parts/intro.md", b"An introduction.\n")):
        (root / "book" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "book" / name).write_bytes(data)
    dest = hw.make_student_sources(root, tmp_path / "src")
    shipped = sorted(p.relative_to(dest / "book").as_posix()
                     for p in (dest / "book").rglob("*") if p.is_file())
    assert shipped == sorted([CHAPTER.name, "figures/plot.png", f"homework/{HOMEWORK.name}",
                              "imported_helper.py", "parts/intro.md"])


def test_student_sources_refuse_a_linked_file(tmp_path):
    """A picture the chapter shows that is a symbolic link (an archive may hold one
    pointing at a solution) is refused, not followed."""
    text = CHAPTER.read_text(encoding="utf-8")
    at = _exercise_end(text)
    root = _book(tmp_path, text[:at] + "\n![a plot](plot.png)\n" + text[at:])
    (tmp_path / "answer.png").write_bytes(PLANTED.encode())
    (root / "book" / "plot.png").symlink_to(tmp_path / "answer.png")
    with pytest.raises(ValueError, match="a symbolic link"):
        hw.make_student_sources(root, tmp_path / "src")


def _notebook_book(tmp_path, cells, metadata=None):
    root = _book(tmp_path, "# placeholder\n")
    (root / "book" / CHAPTER.name).unlink()
    nb = nbformat.v4.new_notebook(cells=cells, metadata=metadata or {})
    nbformat.write(nb, root / "book" / "perceptron.ipynb")
    return root


def _code(source, tags=(), output=None):
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {})
    if output is not None:
        cell.outputs = [nbformat.v4.new_output("stream", text=output)]
        cell.execution_count = 1
    return cell


NOTEBOOK_STRIPPED = {
    "saved-output": [_code("print(answer)", output=PLANTED)],
    "saved-output-hidden": [_code("print(answer)", ["remove-input"], output=PLANTED)],
    "solution-capital": [nbformat.v4.new_markdown_cell(block("```", "{Solution} ex").strip())],
    "gated-cells": [nbformat.v4.new_markdown_cell("```{solution-start} ex\n```"),
                    _code(f"# {PLANTED}"), _code("x = 1", ["remove-cell"], output=PLANTED),
                    nbformat.v4.new_markdown_cell("```{solution-end}\n```\nAfter.")],
    "hidden-solution-number": [_code(f'prose["p"] = len("{PLANTED}")', ["remove-cell"]),
                               nbformat.v4.new_markdown_cell(solution_quoting("p"))],
    "widget-state": [_code("w = 1")],
    "attachment-of-a-solution": [nbformat.v4.new_markdown_cell(
        "```{solution} ex\n![sketch](attachment:a.png)\n```", attachments={
            "a.png": {"image/png": PLANTED}})],
}
NOTEBOOK_REFUSED = {
    "html-comment": ([nbformat.v4.new_markdown_cell(f"<!-- {PLANTED} -->")], "an HTML comment"),
    "details": ([nbformat.v4.new_markdown_cell(f"<details>{PLANTED}</details>")], "<details>"),
    "toggle": ([nbformat.v4.new_markdown_cell(block("```", "{toggle}"))], "\\{toggle\\}"),
    "unknown-tag": ([_code("x = 1", ["hide-solution"])], "the tag 'hide-solution'"),
}


@pytest.mark.parametrize("name", NOTEBOOK_STRIPPED)
def test_notebook_chapter_strips(name, tmp_path):
    meta = {"widgets": {"state": PLANTED}} if name == "widget-state" else None
    root = _notebook_book(tmp_path, [nbformat.v4.new_markdown_cell("# A chapter"),
                                     *copy.deepcopy(NOTEBOOK_STRIPPED[name])], meta)
    assert "secret_value_4711" in (root / "book" / "perceptron.ipynb").read_text()
    dest = hw.make_student_sources(root, tmp_path / "src")
    shipped = (dest / "book" / "perceptron.ipynb").read_text(encoding="utf-8")
    assert "secret_value_4711" not in shipped
    nbformat.validate(nbformat.reads(shipped, 4))
    if name == "gated-cells":
        assert "After." in shipped


@pytest.mark.parametrize("name", NOTEBOOK_REFUSED)
def test_notebook_chapter_refuses(name, tmp_path):
    cells, message = NOTEBOOK_REFUSED[name]
    root = _notebook_book(tmp_path, [nbformat.v4.new_markdown_cell("# A chapter"),
                                     *copy.deepcopy(cells)])
    with pytest.raises(ValueError, match=message):
        hw.make_student_sources(root, tmp_path / "src")


def test_hidden_cells_the_real_book_drops_hold_only_solutions_and_checks(tmp_path):
    """The rule on the book itself: every hidden cell it leaves out of a chapter stores no
    number the student text quotes, and a cell that the text needs stays: in each student
    chapter every {eval} still reads a prose key that an earlier cell stores (the reader
    of test_prose_order, which knows the ways the chapters fill prose)."""
    from test_prose_order import uses_before_assignment

    from booktools.homework import site

    dropped = 0
    for path in site.toc_files(ROOT):
        if path.suffix != ".md":
            continue
        teacher = path.read_text(encoding="utf-8")
        student = site.student_chapter(teacher)
        dropped += teacher.count("{code-cell}") - student.count("{code-cell}")
        (tmp_path / path.name).write_text(student, encoding="utf-8")
        assert uses_before_assignment(tmp_path / path.name) == [], path.name
    assert dropped > 10  # the cells that computed only what solutions quote


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
    assert len(nbformat.reads(shipped, 4).cells) < len(nb.cells)
