"""Scores a student's kernel cannot forge (issue 28): ``booktools.homework.scoring``.

A test cell keeps nbgrader's verdict only if the values its hidden tests publish through
``expected`` match the teacher's, which the grading kernel never sees: on hand-made
autograded notebooks (a key missing, a wrong value, a forged wrong publication beside the
right one, a tolerance), ``expected`` in a real kernel, the release rule that every test
cell with points has an ``expected``, and, with the real nbgrader, a submission that
drops every ``assert`` line: nbgrader gives it full marks, ``autograde`` zero.
"""

import json
import os
import shutil
from pathlib import Path

import nbclient
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from booktools import homework as hw
from booktools.homework import scoring
from booktools.homework.grading import read_values, values_path
from booktools.homework.notebook import hidden_sources
from booktools.kernels import STARTUP_TIMEOUT
from lincls.homework.answers import EXPECTED_MIME, GRADING_ENV

TEACHER = Path(__file__).parent / "fixtures" / "homework" / "teacher" / "fixture1.ipynb"
NAME = TEACHER.stem


def meta(grade_id, **kw):
    return {"nbgrader": {"grade_id": grade_id, "grade": False, "solution": False,
                         "locked": False, "schema_version": 3, **kw}}


def graded_cell(grade_id, hidden, points=2):
    return new_code_cell(f"x = 1\n### BEGIN HIDDEN TESTS\n{hidden}\n### END HIDDEN TESTS",
                         metadata=meta(grade_id, grade=True, points=points, locked=True))


GRADING = new_notebook(cells=[
    new_code_cell("### BEGIN SOLUTION\nw = [0.5, 0.25]\n### END SOLUTION",
                  metadata=meta("answer", solution=True)),
    graded_cell("t-two", 'assert np.allclose(w, expected("k.w", w))\n'
                       'assert n == expected("k.n", n)'),
    graded_cell("t-tol", 'assert np.allclose(w, expected("k.loose", w, atol=0.01))'),
    graded_cell("t-none", "assert True", points=0),
])
#: The teacher's values, as ``release --grading`` records them.
VALUES = {"k.w": {"ndarray": [0.5, 0.25], "dtype": "float64"}, "k.n": 3,
          "k.loose": {"ndarray": [0.5, 0.25], "dtype": "float64"}}


def publication(key, value):
    return new_output("display_data", data={EXPECTED_MIME: {
        "key": key, "value": json.dumps(value)}})


def autograded(outputs):
    """The grading version as nbgrader leaves it, with ``outputs[grade_id]`` in its cells."""
    nb = nbformat.from_dict(json.loads(json.dumps(GRADING)))
    for cell in nb.cells:
        cell.outputs = outputs.get(cell.metadata["nbgrader"]["grade_id"], [])
    return nb


def verdicts(outputs):
    return scoring.confirm(autograded(outputs), scoring.cell_tolerances(GRADING), VALUES)


RIGHT = [publication("k.w", [0.5, 0.25]), publication("k.n", 3)]


def test_cell_tolerances_read_the_grading_version():
    assert scoring.cell_tolerances(GRADING) == {
        "t-two": {"k.w": (1e-5, 1e-8), "k.n": (1e-5, 1e-8)},
        "t-tol": {"k.loose": (1e-5, 0.01)}, "t-none": {}}


def test_right_values_confirm_the_cell():
    assert verdicts({"t-two": RIGHT, "t-tol": [publication("k.loose", [0.5, 0.25])]}) == {
        "t-two": None, "t-tol": None, "t-none": None}
    # the student's list for the teacher's array, within np.allclose's tolerance; an
    # integer the teacher's float equals within it too
    near = [publication("k.w", [0.5 + 1e-9, 0.25]), publication("k.n", 3.0)]
    assert verdicts({"t-two": near})["t-two"] is None


def test_a_key_never_published_fails_the_cell():
    # an input transformer that drops the lines of the hidden tests, or a kernel that
    # stops publishing: the evidence is missing
    assert verdicts({"t-two": RIGHT[:1]})["t-two"] == (
        "its hidden tests did not report every value they compare")
    assert verdicts({})["t-two"] is not None
    # published in another cell: not this cell's evidence
    assert verdicts({"t-tol": RIGHT})["t-two"] is not None


def test_a_wrong_value_fails_the_cell():
    for wrong in ([0.5, 0.26], [0.5], [[0.5, 0.25]], "0.5, 0.25", None):
        assert verdicts({"t-two": [publication("k.w", wrong), RIGHT[1]]})["t-two"] == (
            "a value its hidden tests compare differs from the teacher's"), wrong


def test_a_forged_wrong_publication_fails_the_cell_even_beside_the_right_one():
    # guessing: publish several values under one key, hoping one matches
    guesses = [publication("k.w", [0.5, 0.24])] + RIGHT
    assert verdicts({"t-two": guesses})["t-two"] is not None
    # a publication whose value is no JSON at all
    bad = new_output("display_data", data={EXPECTED_MIME: {"key": "k.n", "value": "{"}})
    assert verdicts({"t-two": [*RIGHT, bad]})["t-two"] is not None


def test_a_hostile_publication_fails_its_cell_and_nothing_else():
    # nested deeper than the recursion limit, and a key that is no string: the cell fails,
    # the scorer does not raise (which would lose the grades of the whole course)
    deep = new_output("display_data", data={EXPECTED_MIME: {
        "key": "k.w", "value": "[" * 900 + "]" * 900}})
    odd_key = new_output("display_data", data={EXPECTED_MIME: {"key": ["k.n"], "value": "3"}})
    assert verdicts({"t-two": [*RIGHT, deep], "t-tol": [odd_key]}) == {
        "t-two": "a value its hidden tests compare differs from the teacher's",
        "t-tol": "its hidden tests did not report every value they compare", "t-none": None}


def test_other_keys_are_ignored():
    extra = [publication("k.loose", [9.0, 9.0]), publication("unknown", 1), *RIGHT]
    assert verdicts({"t-two": extra})["t-two"] is None


def test_the_tolerance_is_the_grading_versions():
    assert verdicts({"t-tol": [publication("k.loose", [0.509, 0.25])]})["t-tol"] is None
    assert verdicts({"t-tol": [publication("k.loose", [0.52, 0.25])]})["t-tol"] is not None
    assert verdicts({"t-two": [publication("k.w", [0.509, 0.25]), RIGHT[1]]})["t-two"]


@pytest.mark.parametrize("student, teacher, same", [
    (3, 3, True), (3, 4, False), (True, True, True), (1, True, False), (True, 1, False),
    ("and", "and", True), ("and", "or", False), (None, None, True), (3.0, 3, True),
    (float("nan"), float("nan"), True), (1.0, float("nan"), False),
    (float("inf"), float("inf"), True), (1e300, float("inf"), False),
    ([1, [2, 3]], {"ndarray": [1, [2, 3]], "dtype": "object"}, True),
    ([[1, 2]], {"ndarray": [1, 2], "dtype": "int64"}, False),  # shapes differ
    ({"ndarray": [1.0, 2.0], "dtype": "float64"}, [1, 2], True),
])
def test_matches(student, teacher, same):
    assert scoring.matches(student, teacher) is same


def test_matches_follows_np_allclose():
    assert scoring.matches(100.0009, 100.0) and not scoring.matches(100.0011, 100.0)
    assert scoring.matches(1.0, 0.0, atol=1.0) and not scoring.matches(1.0, 0.0, rtol=1.0)


def run(source, env):
    """Execute one code cell in a fresh kernel with ``env`` added; its outputs."""
    nb = new_notebook(cells=[new_code_cell(source)])
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        nbclient.NotebookClient(nb, timeout=60, startup_timeout=STARTUP_TIMEOUT,
                                record_timing=False).execute()
    finally:
        for k, v in old.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v
    return nb.cells[0].outputs


@pytest.mark.slow
def test_expected_publishes_the_students_value_only_while_grading():
    source = ("import numpy as np\nfrom lincls.homework import expected\n"
              "v = expected('k.a', np.array([1.5, float('nan')]), atol=0.1)\n"
              "print(type(v).__name__)")
    grading = run(source, {GRADING_ENV: "1"})
    cell = nbformat.from_dict({"outputs": grading})
    [(key, value)] = scoring.published(cell)
    assert key == "k.a"
    assert scoring.matches(value, {"ndarray": [1.5, float("nan")], "dtype": "float64"})
    assert grading[-1]["text"] == "ndarray\n"  # the value itself comes back
    plain = run(source, {GRADING_ENV: ""})
    assert [o["output_type"] for o in plain] == ["stream"]


def test_a_test_cell_with_points_needs_an_expected(tmp_path):
    nb = nbformat.read(TEACHER, 4)
    assert hw.validate_notebook(nb, "nb.ipynb") == []
    cell = nb.cells[4]
    cell.source = cell.source.replace('expected("fixture.step", w_t)', "[1.5, -0.5]")
    [error] = hw.validate_notebook(nb, "nb.ipynb")
    assert error.cell == 4 and "worth 2 point(s) but its hidden tests compare no value" in str(
        error)
    cell.metadata.nbgrader["points"] = 0  # no points, nothing to forge
    assert hw.validate_notebook(nb, "nb.ipynb") == []
    # the student version has no hidden tests: it is no teacher notebook breaking the rule
    student = hw.release_notebook(nbformat.read(TEACHER, 4))
    assert hw.validate_notebook(student, "student.ipynb") == []


@pytest.mark.parametrize("call, message", [
    ('expected("k", w_t, rtol=tol)', "only rtol= and atol="),
    ('expected("k", w_t, atol=-1.0)', "only rtol= and atol="),
    ('expected("k", w_t, equal_nan=True)', "only rtol= and atol="),
    ("expected(key, w_t)", "takes a string key"),
])
def test_expected_calls_the_grader_can_read(call, message):
    nb = nbformat.read(TEACHER, 4)
    nb.cells[4].source = nb.cells[4].source.replace('expected("fixture.step", w_t)', call)
    errors = [str(e) for e in hw.validate_notebook(nb, "nb.ipynb")]
    assert any(message in e for e in errors), errors


@pytest.mark.slow
def test_grading_version_keeps_the_calls_and_its_values_file_the_values(tmp_path):
    hw.release(TEACHER, tmp_path / "student", grading=tmp_path / "grading")
    graded = tmp_path / "grading" / TEACHER.name
    assert nbformat.read(graded, 4).cells == nbformat.read(TEACHER, 4).cells
    values = read_values(values_path(graded))
    assert set(values) == {"fixture.step", "fixture.w_trained"}
    assert values["fixture.step"] == {"ndarray": [1.5, -0.5], "dtype": "float64"}
    hidden = "".join(hidden_sources(nbformat.read(graded, 4)).values())
    assert not [x for x in values["fixture.w_trained"]["ndarray"] if repr(x) in hidden]
    assert sorted(p.name for p in (tmp_path / "student").iterdir()) == [TEACHER.name]
    # the teacher notebook in its place: refused, as is a values file without its keys
    (tmp_path / "teacher").mkdir()
    shutil.copy(TEACHER, tmp_path / "teacher" / TEACHER.name)
    (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match=f"is a teacher notebook .no {NAME}.expected.json"):
        hw.autograde(tmp_path / "teacher", tmp_path / "sub")
    values_path(graded).write_text(json.dumps({"format": 1, "values": {}}))
    with pytest.raises(ValueError, match="has no value of fixture.step, fixture.w_trained"):
        hw.autograde(tmp_path / "grading", tmp_path / "sub")


DROP_ASSERTS = (
    "def _drop(lines):\n"
    "    return [ln for ln in lines if not ln.lstrip().startswith('assert')]\n"
    "get_ipython().input_transformers_cleanup.append(_drop)\n")


@pytest.mark.slow
def test_nbgrader_passes_dropped_asserts_autograde_does_not(tmp_path):
    """With the real nbgrader: a submission that answers nothing right but drops every
    line starting with ``assert`` gets nbgrader's full marks on both test cells (no
    error), and zero from ``autograde``; the teacher's solution keeps full marks."""
    hw.release(TEACHER, tmp_path / "student", grading=tmp_path / "grading")
    student = nbformat.read(tmp_path / "student" / TEACHER.name, 4)
    teacher = nbformat.read(TEACHER, 4)
    attack = nbformat.from_dict(json.loads(json.dumps(student)))
    wrong = {"perceptron_step": "return w", "train": "w_trained = np.zeros(2)"}
    for cell in attack.cells:
        if hw.is_solution_cell(cell) and cell.cell_type == "code":
            grade_id = cell.metadata.nbgrader["grade_id"]
            cell.source = cell.source.replace("raise NotImplementedError()",
                                              wrong.get(grade_id, "pass"))
    answers = [c for c in attack.cells if hw.is_solution_cell(c) and c.cell_type == "code"]
    answers[0].source = DROP_ASSERTS + answers[0].source
    for sid, nb in (("attacker", attack), ("teacher", teacher)):
        (tmp_path / "submitted" / sid / NAME).mkdir(parents=True)
        nbformat.write(nb, tmp_path / "submitted" / sid / NAME / TEACHER.name)
    rows, problems = hw.autograde(tmp_path / "grading", tmp_path / "submitted")
    scores = {(r["student"], r["cell"]): r["score"] for r in rows}
    assert scores[("teacher", "total")] == 3.0
    assert scores[("attacker", "test_perceptron_step")] == 0.0
    assert scores[("attacker", "test_train")] == 0.0
    assert scores[("attacker", "total")] == 0.0
    notes = {(r["student"], r["cell"]): r["note"] for r in rows}
    assert notes[("attacker", "test_train")] == notes[("attacker", "test_perceptron_step")] == (
        "no points although nbgrader passed it: its hidden tests did not report every value "
        "they compare")
    assert notes[("teacher", "test_train")] == ""
    # nbgrader itself saw no error in the attacker's test cells: only the values fail it
    assert sorted(p for p in problems if "nbgrader passed it" in p) == [
        f"attacker {NAME} test_perceptron_step: no points although nbgrader passed it: "
        "its hidden tests did not report every value they compare",
        f"attacker {NAME} test_train: no points although nbgrader passed it: "
        "its hidden tests did not report every value they compare"]
