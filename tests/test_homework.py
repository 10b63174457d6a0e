"""Tests of booktools.homework on the fixture notebooks (fast; no book homework needed)."""

import json
import math
import os
import pickle
import re
import shutil
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from booktools import homework as hw
from lincls.homework import answers

FIXTURES = Path(__file__).parent / "fixtures" / "homework"
sys.path.insert(0, str(FIXTURES))  # make_fixtures: the fixture's pasted picture
TEACHER = FIXTURES / "teacher" / "fixture1.ipynb"
MALFORMED = FIXTURES / "malformed"
EXPECTED = json.loads((MALFORMED / "expected.json").read_text())


def snapshot(root):
    root = Path(root)
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def released(tmp_path):
    hw.release(TEACHER.parent, tmp_path / "out")
    return tmp_path / "out" / TEACHER.name


# --- release ---------------------------------------------------------------------
def test_release_replaces_solutions_and_removes_hidden_tests(released):
    teacher = nbformat.read(TEACHER, as_version=4)
    student = nbformat.read(released, as_version=4)
    assert len(student.cells) == len(teacher.cells)
    src = [c.source for c in student.cells]
    # the solution inside a function keeps the signature and docstring, indented stub
    assert src[3] == (
        "def perceptron_step(w, x, label, eta=1.0):\n"
        '    """Return w after presenting (x, label) once."""\n'
        "    # YOUR CODE HERE\n"
        "    raise NotImplementedError()"
    )
    # visible test stays, hidden test goes
    assert src[4] == (
        "w_first = perceptron_step(np.zeros(2), np.array([1.0, 2.0]), 1)\n"
        "assert w_first.shape == (2,)"
    )
    # code after a solution region stays
    assert src[6].startswith("# YOUR CODE HERE\nraise NotImplementedError()\ntraining_mistakes")
    # a whole answer cell without markers becomes the stub
    assert src[8] == "# YOUR CODE HERE\nraise NotImplementedError()"
    # written answers
    assert src[10] == "YOUR ANSWER HERE"
    assert src[11] == "Name the theorem and its assumption:\n\nYOUR ANSWER HERE"
    assert src[7] == "assert training_mistakes == 0"
    # untouched cells
    for i in (0, 1, 2, 5, 9, 12):
        assert src[i] == teacher.cells[i].source


def test_release_clears_outputs_and_keeps_nbgrader_metadata(released):
    teacher = nbformat.read(TEACHER, as_version=4)
    student = nbformat.read(released, as_version=4)
    assert any(c.get("outputs") for c in teacher.cells)  # the fixture was executed
    for t, s in zip(teacher.cells, student.cells, strict=True):
        if s.cell_type == "code":
            assert s.outputs == [] and s.execution_count is None
        assert s.metadata.get("nbgrader") == t.metadata.get("nbgrader")
    assert student.metadata["lincls"] == teacher.metadata["lincls"]
    nbformat.validate(student)


def test_student_cell_ids_carry_no_text(released):
    """A cell id is free text nbgrader leaves alone: the student version has eight
    hexadecimal digits of its own per cell, from its position only (nbgrader matches
    cells by grade_id)."""
    teacher = nbformat.read(TEACHER, as_version=4)
    student = nbformat.read(released, as_version=4)
    ids = [c.id for c in student.cells]
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids) and len(set(ids)) == len(ids)
    assert not set(ids) & {c.id for c in teacher.cells}
    renamed = nbformat.read(TEACHER, as_version=4)
    for n, cell in enumerate(renamed.cells):
        cell.id = f"answer-{n}-is-42"
    assert [c.id for c in hw.release_notebook(renamed).cells] == ids


def test_no_solution_line_reaches_the_student(released):
    teacher = nbformat.read(TEACHER, as_version=4)
    secret = [ln.strip() for ln in hw.solution_lines(teacher) if len(ln.strip()) > 4]
    assert len(secret) >= 8
    text = released.read_text()
    student = nbformat.read(released, as_version=4)
    joined = "\n".join(c.source for c in student.cells)
    for line in secret:
        assert line not in joined, line
        assert json.dumps(line)[1:-1] not in text, line


def test_student_version_passes_check(released):
    assert hw.validate(released) == []
    assert hw.main(["validate", str(released)]) == 0


def test_release_is_idempotent(tmp_path, released):
    hw.release(TEACHER.parent, tmp_path / "again")
    assert (tmp_path / "again" / TEACHER.name).read_bytes() == released.read_bytes()
    hw.release(TEACHER.parent, tmp_path / "out")  # over the previous release
    assert (tmp_path / "out" / TEACHER.name).read_bytes() == released.read_bytes()


def test_release_keeps_relative_paths(tmp_path):
    src = tmp_path / "src"
    (src / "week1").mkdir(parents=True)
    shutil.copy(TEACHER, src / "week1" / "a.ipynb")
    written = hw.release(src, tmp_path / "out")
    assert written == [tmp_path / "out" / "week1" / "a.ipynb"]


# --- malformed notebooks ------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_notebook_gets_a_clear_error_and_nothing_is_written(tmp_path, name, capsys):
    expected = EXPECTED[name]
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("teacher's file")
    before = snapshot(out)
    with pytest.raises(hw.MalformedHomework) as info:
        hw.release(MALFORMED / name, out)
    [error] = info.value.errors
    assert error.path.endswith(name)
    assert error.cell == expected["cell"]
    assert expected["message"] in str(error)
    if expected["cell"] is not None:
        assert f"cell {expected['cell'] + 1} (" in str(error)
    assert snapshot(out) == before
    # the command line says the same and fails
    assert hw.main(["release", str(MALFORMED / name), str(out)]) == 1
    assert hw.main(["validate", str(MALFORMED / name)]) == 1
    err = capsys.readouterr().err
    assert name in err and expected["message"] in err
    assert snapshot(out) == before


def test_errors_cross_a_process_pool_whole():
    # the release runs notebooks in a spawn pool: its errors come back pickled
    error = hw.HomeworkError("hw.ipynb", "a second solution region", cell=3, cell_id="ab")
    both = hw.MalformedHomework([error, hw.HomeworkError("hw2.ipynb", "no points")])
    for exc in (error, both):
        back = pickle.loads(pickle.dumps(exc))
        assert type(back) is type(exc) and str(back) == str(exc)
    assert pickle.loads(pickle.dumps(both)).errors[0].cell == 3


def test_one_bad_notebook_stops_the_whole_release(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(TEACHER, src / "good.ipynb")
    shutil.copy(MALFORMED / "nested.ipynb", src / "bad.ipynb")
    with pytest.raises(hw.MalformedHomework, match="bad.ipynb"):
        hw.release(src, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_check_reports_every_problem():
    errors = hw.validate(MALFORMED)
    assert {Path(e.path).name for e in errors} == set(EXPECTED)


def test_missing_source_is_an_error(tmp_path, capsys):
    assert hw.main(["release", str(tmp_path / "nope"), str(tmp_path / "out")]) == 1
    assert "no such notebook" in capsys.readouterr().err


# --- executing the student version --------------------------------------------------
@pytest.mark.slow
def test_a_solution_only_cell_shifts_no_answer_of_the_rehearsal(tmp_path):
    """The rehearsal runs after each of the student version's answer cells the teacher's
    cell it came from, also where a cell before it (solution-only) is not in the student
    version; and the grading version, nbgrader's source, keeps the student version's cells
    only."""
    nb = nbformat.read(TEACHER, 4)
    nb.cells.insert(2, nbformat.v4.new_code_cell(
        "print('computed for a solution')", metadata={"tags": [hw.SOLUTION_ONLY_TAG]}))
    path = tmp_path / "src" / TEACHER.name
    path.parent.mkdir()
    nbformat.write(nb, path)
    results = hw.rehearse(path)
    assert [r["cell"] for r in results if r["role"] == "answer"] == [3, 6, 8]
    assert all(r["error"] is None for r in results if r["role"] != "answer"), results
    assert all(r["teacher_error"] is None for r in results if r["role"] == "answer")
    hw.release(path.parent, tmp_path / "student", grading=tmp_path / "grading")
    student = nbformat.read(tmp_path / "student" / TEACHER.name, 4)
    graded = nbformat.read(tmp_path / "grading" / TEACHER.name, 4)
    assert len(graded.cells) == len(student.cells) == len(nb.cells) - 1
    assert [c.get("metadata", {}).get("nbgrader") for c in graded.cells] == [
        c.get("metadata", {}).get("nbgrader") for c in student.cells]
    assert "computed for a solution" not in json.dumps(graded)


@pytest.mark.slow
def test_student_fixture_runs_except_for_the_exercises():
    results = hw.rehearse(TEACHER)
    roles = {r["cell"]: r for r in results}
    assert {i for i, r in roles.items() if r["role"] == "answer"} == {3, 6, 8}
    assert roles[3]["error"] is None  # the stub sits inside a function body
    assert roles[6]["error"] == roles[8]["error"] == "NotImplementedError"
    for r in results:
        if r["role"] == "answer":
            assert r["teacher_error"] is None
        else:
            assert r["error"] is None, r


# --- answer checks ----------------------------------------------------------------
CHEAP_KDF = {"name": "scrypt", "n": 16, "r": 1, "p": 1}  # fast hashes for the tests


@pytest.fixture
def registry(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"format": 2, "kdf": CHEAP_KDF, "answers": {}}))
    return path


def test_check_right_and_wrong_scalar(registry, capsys):
    hw.record_answer("q.margin", 0.123456, atol=1e-4, bound=1, registry=registry)
    assert hw.check("q.margin", 0.12349, registry=registry)
    assert hw.check("q.margin", 0.123456 - 0.99e-4, registry=registry)
    assert not hw.check("q.margin", 0.13, registry=registry)
    assert not hw.check("q.margin", 12.3456, registry=registry)
    out = capsys.readouterr().out.splitlines()
    assert out == ["q.margin: right", "q.margin: right", "q.margin: wrong", "q.margin: wrong"]
    # the registry holds neither the value nor its digits
    assert "0.123" not in registry.read_text() and "123456" not in registry.read_text()


def test_one_hash_per_answer_and_nothing_that_narrows_it(registry):
    """The whole answer has one digest; no per-entry hash, offset or parity is stored."""
    entry = hw.record_answer("q.w", [-4, 3, 2], atol=1e-6, bound=10, registry=registry)
    assert set(entry) == {"kind", "atol", "scale", "offset", "shape", "normalized",
                          "bound", "salt", "digest"}
    assert entry["kind"] == "integer" and entry["scale"] == 1.0 and entry["bound"] == 10
    odd = hw.record_answer("q.odd", 3, atol=0.1, bound=10, registry=registry)
    even = hw.record_answer("q.even", 4, atol=0.1, bound=10, registry=registry)
    assert {k: v for k, v in odd.items() if k not in ("salt", "digest")} == {
        k: v for k, v in even.items() if k not in ("salt", "digest")}


def test_check_feedback_for_arrays_is_whole_answer(registry, capsys):
    w = np.array([0.6, 0.0, -0.8])
    hw.record_answer("q.w", w, atol=1e-3, normalized=True, bound=1, registry=registry)
    assert hw.check("q.w", w.tolist(), registry=registry)
    assert hw.check("q.w", w.reshape(1, 3), registry=registry)  # same answer as a row
    assert hw.check("q.w", w + [0.0009, -0.0009, 0.0], registry=registry)
    assert not hw.check("q.w", w[:2], registry=registry)
    assert not hw.check("q.w", 5 * w, registry=registry)
    assert not hw.check("q.w", -w, registry=registry)
    assert not hw.check("q.w", [0.6, 0.8, 0.0], registry=registry)  # one entry wrong
    assert not hw.check("q.w", [np.nan, 0, 1], registry=registry)
    assert not hw.check("q.w", "zero", registry=registry)
    out = capsys.readouterr().out.splitlines()
    assert out[3] == "q.w: wrong shape: expected (3,), got (2,)"
    assert out[4] == "q.w: not normalized: its norm is 5, it should be 1"
    assert out[5] == out[6] == "q.w: wrong"  # never which entries, never "wrong sign"
    assert out[7] == "q.w: contains NaN or infinity"
    assert out[8].startswith("q.w: not a number")


def test_unknown_answer_and_bad_names(registry):
    hw.record_answer("q.a", 1.0, bound=1, registry=registry)
    with pytest.raises(ValueError, match="no answer named 'q.b'"):
        hw.check("q.b", 1.0, registry=registry)
    with pytest.raises(ValueError, match="answer name"):
        hw.record_answer("bad name", 1.0, bound=1, registry=registry)
    with pytest.raises(ValueError, match="atol"):
        hw.record_answer("q.c", 1.0, atol=0, bound=1, registry=registry)
    with pytest.raises(ValueError, match="norm is not 1"):
        hw.record_answer("q.d", [1.0, 1.0], normalized=True, bound=1, registry=registry)
    with pytest.raises(ValueError, match="bound"):
        hw.record_answer("q.e", 50.0, bound=10, registry=registry)


@settings(max_examples=40, deadline=None)
@given(
    answer=st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=4),
    atol=st.sampled_from([1e-6, 1e-3, 0.05]),
    shift=st.floats(-1, 1),
)
def test_tolerance_of_the_whole_answer(tmp_path_factory, answer, atol, shift):
    """Every entry within atol: right; any entry beyond 8 atol: wrong. (An answer of
    integers is compared after rounding: beyond 1/2 is wrong.)"""
    reg = tmp_path_factory.mktemp("reg") / "answers.json"
    reg.write_text(json.dumps({"format": 2, "kdf": CHEAP_KDF, "answers": {}}))
    a = np.array(answer)
    entry = hw.record_answer("p", a, atol=atol, bound=1e3, registry=reg)
    assert hw.check("p", a + 0.99 * atol * shift, registry=reg, quiet=True)
    far = a.copy()
    beyond = 0.51 if entry["kind"] == "integer" else (8.01 + abs(shift)) * atol
    far[0] += beyond * (1 if shift >= 0 else -1)
    assert not hw.check("p", far, registry=reg, quiet=True)


def test_brute_force_needs_the_stated_space(registry):
    """A brute force over the answer space, with what a student has (the registry and
    check), finds the answer, and needs no fewer tries than the answer's rank in it:
    the space the teachers' table states covers the answer."""
    hw.record_answer("q.count", 14, atol=0.1, bound=16, registry=registry)
    entry = json.loads(registry.read_text())["answers"]["q.count"]
    space = answers.answer_space(entry)
    assert space == 33
    tries = next(k for k, v in enumerate(range(-16, 17), 1)
                 if hw.check("q.count", v, registry=registry, quiet=True))
    assert tries <= space
    [row] = hw.brute_force_cost(registry, seconds=0.5)
    assert row["hashes"] == 16 and row["seconds"] == 8.0 and row["flag"]


def test_shipped_registry_is_slow_and_whole_answer():
    data = answers._load_registry(hw.ANSWERS)
    assert data["kdf"]["name"] == "scrypt" and data["kdf"]["n"] >= 2**14
    for name, entry in data["answers"].items():
        assert set(entry) == {"kind", "atol", "scale", "offset", "shape", "normalized",
                              "bound", "salt", "digest"}, name
        assert len(entry["digest"]) == 32 and entry["atol"] > 0, name



def test_the_bound_is_stated_never_derived_from_the_value(registry):
    """A registry's bound is what the question says, the same for every variant: a
    bound derived from the value would tell each student its order of magnitude."""
    with pytest.raises(ValueError, match="state bound="):
        hw.record_answer("q.count", 827, atol=0.1, registry=registry)
    small = hw.record_answer("q.small", 827, atol=0.1, bound=12_000, registry=registry)
    large = hw.record_answer("q.large", 1636, atol=0.1, bound=12_000, registry=registry)
    assert small["bound"] == large["bound"] == 12_000
    with pytest.raises(ValueError, match="bound must be a number >= the largest entry"):
        hw.record_answer("q.over", 12_001, atol=0.1, bound=12_000, registry=registry)


def outward_search(name, start, step, registry):
    """The attack: try start, start + step, start - step, start + 2 step, ... with check()
    until it says right; returns the number of tries."""
    for tries in range(1, 100_000):
        k = tries // 2 * (1 if tries % 2 == 0 else -1)
        if hw.check(name, start + k * step, registry=registry, quiet=True):
            return tries
    raise AssertionError("not found")


def test_a_printed_value_near_the_answer_is_where_a_search_starts(registry, monkeypatch,
                                                                  tmp_path):
    """What the notebook prints near an answer (a theory value) is the attacker's prior:
    the cost states the tries of a search outward from it, and that search, run with
    check(), needs no more. The registry holds nothing of the prior."""
    theory, mean = 0.5, 0.50031  # printed, and the answer
    values = tmp_path / "values.jsonl"
    monkeypatch.setenv(hw.RECORD_ENV, str(registry))
    monkeypatch.setenv(answers.RECORD_VALUES_ENV, str(values))
    hw.check("q.mean", mean, atol=1e-5, bound=1, prior=theory, quiet=True)
    monkeypatch.delenv(hw.RECORD_ENV)
    assert json.loads(values.read_text()) == {"key": "q.mean", "value": mean, "prior": theory}
    assert "prior" not in registry.read_text() and "0.50031" not in registry.read_text()
    known = {"q.mean": {"value": mean, "priors": [theory]}}
    [blind] = hw.brute_force_cost(registry, seconds=0.1)
    [row] = hw.brute_force_cost(registry, seconds=0.1, values=known)
    entry = answers._load_registry(registry)["answers"]["q.mean"]
    step = answers._step(entry)
    assert row["space"] == blind["space"] == math.ceil(2 / step)
    assert blind["search"] is None and blind["hashes"] == blind["uniform"] > 10_000
    tries = outward_search("q.mean", theory, step, registry)
    assert tries <= row["search"] == row["hashes"] < 40
    assert row["flag"] and not blind["flag"]
    # a search outward from zero is always there: an answer near zero is cheap too
    hw.record_answer("q.small", 3e-4, atol=1e-5, bound=1, registry=registry)
    near_zero = {"q.small": 3e-4}
    small = {r["name"]: r for r in hw.brute_force_cost(registry, 0.1, near_zero)}["q.small"]
    assert small["search"] < 40 and small["flag"]


def test_a_release_is_priced_by_its_weakest_variant_and_on_many_cores(registry, tmp_path):
    """Per self-check, the cheapest of the students' variants, and who it is; the time
    on ATTACKER_CORES cores is the one-core time divided by the cores."""
    from booktools.homework.table import ReleaseCosts

    costs = ReleaseCosts(seconds=0.5)
    for student, index in (("s01", 1636), ("s02", 473), ("s03", 827)):
        reg = tmp_path / f"{student}.json"
        reg.write_text(registry.read_text())
        hw.record_answer("hw.pocket_index", index, atol=0.1, bound=11_940, registry=reg)
        costs.add(reg, {"hw.pocket_index": index}, {}, student)
    [row] = costs.weakest()
    assert row["student"] == "s02" and row["variants"] == 3
    assert row["search"] == 2 * 473 + 1 and row["uniform"] == 11_940
    assert row["seconds"] == pytest.approx(0.5 * 947)
    assert answers.ATTACKER_CORES == costs.cores == 64
    assert row["cores_seconds"] == pytest.approx(0.5 * 947 / 64)
    assert not row["flag"] and row["cores_flag"]
    table = costs.table()
    assert "| `hw.pocket_index` |" in table and "| s02 of 3 | under a minute on 64 cores |" in table
    assert "<td>s02 of 3</td>" in costs.html()
    assert table.endswith("an attacker with 64 cores divides every time by 64, and inverts "
                          "1 in under 60 seconds.")

@pytest.mark.slow
def test_a_student_check_costs_at_least_one_slow_hash():
    """What the teachers' table assumes per try: check() with the shipped registry
    takes at least the time of one hash (timed the same way)."""
    import time

    name = next(iter(answers._load_registry(hw.ANSWERS)["answers"]))
    per_hash = answers.seconds_per_hash()
    best = min(
        (time.perf_counter(), hw.check(name, 0.0, quiet=True), time.perf_counter())
        for _ in range(3)
    )
    assert best[2] - best[0] >= 0.5 * per_hash


def test_recording_mode_and_hash_command(registry, monkeypatch, capsys):
    monkeypatch.setenv(hw.RECORD_ENV, str(registry))
    assert hw.check("q.x", [1.0, 2.0], atol=0.01, bound=10)
    monkeypatch.delenv(hw.RECORD_ENV)
    assert hw.check("q.x", [1.001, 2.0], registry=registry)
    assert hw.main(["hash", "q.x", "[3, 4]", "--bound", "10", "--registry", str(registry)]) == 0
    assert hw.check("q.x", [3, 4], registry=registry)
    assert hw.main(["hash", "q.y", "[1,", "--bound", "1", "--registry", str(registry)]) == 1
    with pytest.raises(SystemExit):  # the bound is the question's: never left out
        hw.main(["hash", "q.z", "[3, 4]", "--registry", str(registry)])
    assert hw.main(["cost", "--registry", str(registry)]) == 0
    assert "q.x" in capsys.readouterr().out


# --- chapter solutions -----------------------------------------------------------
CHAPTER = """# A chapter

```{exercise}
:label: ex-one

Compute it.
```

````{solution} ex-one
:class: dropdown

Use the formula:

```python
w = secret_formula(X, y)
```
````

:::{solution} ex-two
:label: sol-two
:class: dropdown
The colon-fenced secret answer.
:::

`````{exercise} Nested
::::{solution}
inner secret answer
::::
`````

````markdown
```{solution} shown-as-an-example
Example text stays.
```
````

```{solution-start} ex-three
```
gated secret code
```{solution-end}
```
Text after.
"""


def test_strip_chapter_solutions():
    out = hw.strip_chapter_solutions(CHAPTER, note="NOTE")
    for secret in ("secret_formula", "colon-fenced secret", "inner secret", "gated secret"):
        assert secret not in out
    assert "Compute it." in out and "Text after." in out
    assert "```{solution} shown-as-an-example\nExample text stays.\n```" in out
    assert "````{solution} ex-one\n:class: dropdown\n\nNOTE\n````" in out
    assert ":::{solution} ex-two\n:label: sol-two\n:class: dropdown\n\nNOTE\n:::" in out
    assert out.count("NOTE") == 4
    lines = hw.chapter_solution_lines(CHAPTER)
    assert "w = secret_formula(X, y)" in lines and "inner secret answer" in lines
    assert "gated secret code" in lines
    assert hw.strip_chapter_solutions(out, note="NOTE") == out


def test_unclosed_solution_block_is_an_error():
    with pytest.raises(ValueError, match="never closed"):
        hw.strip_chapter_solutions("```{solution} x\nanswer\n")


# --- the teacher's table ---------------------------------------------------------
def test_homework_table(tmp_path):
    shutil.copy(TEACHER, tmp_path / "fixture1.ipynb")
    table = hw.homework_table(tmp_path, link_prefix="homework").splitlines()
    assert table[0].startswith("| Homework |")
    assert table[2] == (
        "| {doc}`Fixture homework: one perceptron step <homework/fixture1>` | "
        "One perceptron step and a training loop (test fixture). | {doc}`preface` | "
        "15 min | 5 | 5 | none |"
    )
    assert table[3] == "| **Total** | | | 15 min | | 5 | |"
    nb = nbformat.read(tmp_path / "fixture1.ipynb", 4)
    nb.metadata["lincls"]["fixed"] = ["fixture.mistakes", "fixture.w"]
    nbformat.write(nb, tmp_path / "fixture1.ipynb")
    row = hw.homework_table(tmp_path, link_prefix="homework").splitlines()[2]
    assert row.endswith("| 5 | 5 | `fixture.mistakes`, `fixture.w` |")


def test_release_matches_nbgrader(released):
    """Our student version has the cells nbgrader's generate_assignment makes."""
    theirs = nbformat.read(FIXTURES / "nbgrader" / TEACHER.name, as_version=4)
    ours = nbformat.read(released, as_version=4)
    assert [c.source for c in ours.cells] == [c.source for c in theirs.cells]
    for a, b in zip(ours.cells, theirs.cells, strict=True):
        extra = {"checksum", "cell_type"}  # nbgrader's own bookkeeping
        theirs_meta = {k: v for k, v in b.metadata.get("nbgrader", {}).items() if k not in extra}
        assert a.metadata.get("nbgrader", {}) == theirs_meta


@pytest.mark.slow
def test_record_command_fills_the_registry_from_a_notebook(tmp_path):
    import nbformat.v4 as v4

    nb = v4.new_notebook(
        cells=[
            v4.new_code_cell(
                "from booktools.homework import check\n"
                "answer = 2.5\n"
                'check("t.answer", answer, atol=0.01, bound=10)'
            )
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )
    path = tmp_path / "teacher.ipynb"
    nbformat.write(nb, path)
    registry = tmp_path / "answers.json"
    assert hw.main(["record", str(path), "--registry", str(registry)]) == 0
    assert hw.check("t.answer", 2.505, registry=registry, quiet=True)
    assert not hw.check("t.answer", 2.6, registry=registry, quiet=True)
    assert hw.RECORD_ENV not in os.environ


def test_describe_sets_the_metadata_block(tmp_path, capsys):
    path = tmp_path / "hw.ipynb"
    nb = nbformat.read(TEACHER, as_version=4)
    del nb.metadata["lincls"]
    nbformat.write(nb, path)
    assert "no 'lincls' notebook metadata" in str(hw.validate(path)[0])
    args = ["describe", str(path), "--summary", "Pocket.", "--chapters", "pocket", "--minutes"]
    assert hw.main([*args, "45"]) == 0
    assert hw.validate(path) == []
    after = nbformat.read(path, as_version=4)
    assert after.metadata["lincls"] == {"summary": "Pocket.", "chapters": ["pocket"], "minutes": 45}
    assert [c.get("outputs") for c in after.cells] == [c.get("outputs") for c in nb.cells]
    assert hw.main([*args, "0"]) == 1
    assert "minutes" in capsys.readouterr().err


def test_release_never_overwrites_or_rereads_teacher_notebooks(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(TEACHER, src / "hw.ipynb")
    before = (src / "hw.ipynb").read_bytes()
    assert hw.main(["release", str(src), str(src)]) == 1
    err = capsys.readouterr().err
    assert "refusing to overwrite" in err and len(err.strip().splitlines()) == 1
    assert (src / "hw.ipynb").read_bytes() == before
    # OUT inside SRC: the second release must not treat the first one as input
    first = hw.release(src, src / "student")
    second = hw.release(src, src / "student")
    assert first == second == [src / "student" / "hw.ipynb"]


def test_student_sources(tmp_path, capsys):
    import yaml

    root = tmp_path / "book-repo"
    (root / "book" / "homework" / "data").mkdir(parents=True)
    (root / "lincls").mkdir()
    (root / "lincls" / "x.py").write_text("X = 1\n")
    shutil.copy(TEACHER, root / "book" / "homework" / "hw.ipynb")
    # stray files: a jupytext pair and a backup hold the solutions; data may go
    (root / "book" / "homework" / "hw.md").write_text("### BEGIN SOLUTION\nsecret\n")
    (root / "book" / "homework" / "hw.ipynb.bak").write_text("secret")
    (root / "book" / "homework" / "data" / "points.csv").write_text("1,2\n")
    # only what the student edition names ships: not a teacher's notes with the answers
    for name in ("solutions.txt", "answers.csv", "teacher_notes.json", "solution_plot.png"):
        (root / "book" / "homework" / name).write_text("secret")
    (root / "book" / "chapter.md").write_text(
        CHAPTER + "\nThe data: [points](homework/data/points.csv).\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/chapter\n"
                                   "chapters:\n- file: book/homework/hw\n")
    (root / "_config.yml").write_text(
        "title: T\nrepository: {url: 'https://github.com/a/b', branch: main}\n"
        "html: {use_repository_button: true, use_issues_button: true}\n"
        "launch_buttons: {binderhub_url: 'https://mybinder.org'}\n"
    )
    dest = hw.make_student_sources(root, tmp_path / "src", "https://github.com/a/student")
    chapter = (dest / "book" / "chapter.md").read_text()
    assert "secret" not in chapter and hw.STUDENT_SOLUTION_NOTE in chapter
    student = nbformat.read(dest / "book" / "homework" / "hw.ipynb", as_version=4)
    assert "YOUR CODE HERE" in student.cells[3].source
    assert sorted(p.relative_to(dest / "book" / "homework").as_posix()
                  for p in (dest / "book" / "homework").rglob("*") if p.is_file()) == [
        "data/points.csv", "hw.ipynb"]
    config = yaml.safe_load((dest / "_config.yml").read_text())
    assert config["title"] == "T (student edition)"
    assert config["repository"]["url"] == "https://github.com/a/student"
    assert config["launch_buttons"]["binderhub_url"] == "https://mybinder.org"
    assert (dest / "lincls" / "x.py").exists() and (dest / "_toc.yml").exists()
    # generated pages are as old as their teacher source, so a second build of the same
    # sources (the student PDF after the student site) reuses Sphinx's doctrees
    for rel in ("book/chapter.md", "book/homework/hw.ipynb"):
        assert (dest / rel).stat().st_mtime_ns == (root / rel).stat().st_mtime_ns, rel
    # without a student repository: no button may lead to the teacher's repository
    dest = hw.make_student_sources(root, tmp_path / "src2")
    text = (dest / "_config.yml").read_text()
    assert "github.com/a/b" not in text and "mybinder" not in text
    config = yaml.safe_load(text)
    assert config["repository"]["url"] == ""
    assert not any(config["html"][b] for b in ("use_repository_button", "use_issues_button",
                                               "use_edit_page_button"))
    assert not any(config["launch_buttons"].values())


# --- what the student versions must not carry ------------------------------------
def test_answer_cells_lose_attachments(released):
    teacher = nbformat.read(TEACHER, as_version=4)
    assert any(c.get("attachments") for c in teacher.cells)  # the fixture has a picture
    student = nbformat.read(released, as_version=4)
    assert not any(c.get("attachments") for c in student.cells)
    from make_fixtures import PNG_WITH_ANSWER

    assert PNG_WITH_ANSWER[:40] not in released.read_text()


def test_release_replaces_the_output_folder_atomically(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.ipynb").write_text("an earlier release")
    hw.release(TEACHER.parent, out)
    assert sorted(p.name for p in out.iterdir()) == [TEACHER.name]  # nothing stale
    before = snapshot(out)
    src = tmp_path / "src"
    src.mkdir()
    for name in ("a.ipynb", "b.ipynb", "c.ipynb"):
        shutil.copy(TEACHER, src / name)
    calls = []

    def fail_on_second(nb, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(nb, *args, **kwargs)

    real = nbformat.writes
    monkeypatch.setattr(nbformat, "writes", fail_on_second)
    with pytest.raises(OSError, match="disk full"):
        hw.release(src, out)
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "src"]  # no temp folder
    calls.clear()
    assert hw.main(["release", str(src), str(out)]) == 1
    err = capsys.readouterr().err
    assert err == "error: disk full\n" and snapshot(out) == before


def test_release_refuses_an_output_that_holds_the_source(tmp_path):
    src = tmp_path / "book" / "homework"
    src.mkdir(parents=True)
    shutil.copy(TEACHER, src / "hw.ipynb")
    with pytest.raises(ValueError, match="OUT holds SRC"):
        hw.release(src, tmp_path / "book")
    assert (src / "hw.ipynb").exists()


def test_a_comment_may_not_hold_a_solution_line_the_notebook_does_not_show():
    """A comment or docstring that repeats a line of the solution is an error, in any
    spacing and case; once the notebook shows that line as code anyway, it is not."""
    import nbformat.v4 as v4

    line = "w = w + eta * label * x"
    assert line in [ln.strip() for ln in hw.solution_lines(nbformat.read(TEACHER, 4))]
    nb = nbformat.read(TEACHER, 4)
    nb.cells.append(v4.new_code_cell("# Hint:  W=W+ETA*LABEL*X\nprint(1)"))
    [error] = hw.validate_notebook(nb, "nb.ipynb")
    assert "holds the line 'w = w + eta * label * x'" in str(error) and error.cell == len(
        nb.cells) - 1
    nb.cells.append(v4.new_code_cell(f"eta, label, x = 1, 1, 1\nw = 0\n{line}"))
    assert hw.validate_notebook(nb, "nb.ipynb") == []


def test_solution_only_cells_leave_homework_and_chapters(tmp_path):
    nb = nbformat.read(TEACHER, as_version=4)
    nb.cells[12].metadata["tags"] = [hw.SOLUTION_ONLY_TAG]
    student = hw.release_notebook(nb)
    assert len(student.cells) == len(nb.cells) - 1
    assert 'print("the end")' not in [c.source for c in student.cells]
    chapter = (
        "Text.\n\n```{code-cell} ipython3\n:tags: [remove-cell, solution-only]\n\n"
        "glue('secret', 42)\n```\n\n```{code-cell} ipython3\n:tags: [remove-cell]\n\n"
        "setup = 1\n```\n"
    )
    out = hw.site.strip_solution_only_cells(chapter)
    assert "glue('secret'" not in out and "setup = 1" in out
    assert "glue('secret', 42)" in hw.site.solution_only_lines(chapter)


# --- the rules of the graded hidden tests --------------------------------------------
def hidden_notebook(setup, hidden, check_cell=None):
    import nbformat.v4 as v4

    nb = nbformat.read(TEACHER, as_version=4)
    nb.cells[1].source += "\n" + setup
    nb.cells[4].source = (
        "assert True\n### BEGIN HIDDEN TESTS\n" + hidden + "\n### END HIDDEN TESTS"
    )
    nb.cells[4].metadata.nbgrader["points"] = 0  # rule 5 (an expected per cell) aside
    if check_cell:
        nb.cells.append(v4.new_code_cell(check_cell))
    return nb


def test_hidden_tests_may_not_compare_against_lincls():
    nb = hidden_notebook(
        "from lincls.perceptron import Perceptron\nfrom lincls.datasets import logic_gate",
        "ref = Perceptron().fit(*logic_gate('and'))\nassert training_mistakes == ref.t_",
    )
    [error] = hw.validate_notebook(nb, "nb.ipynb")
    assert error.cell == 4 and "compare against lincls (Perceptron)" in str(error)
    # inside expected(...) the teacher's value is frozen at release time: allowed
    ok = hidden_notebook(
        "from lincls.perceptron import Perceptron\nfrom booktools.homework import expected",
        "assert training_mistakes == expected('m', Perceptron().fit(X, y).t_)",
    )
    assert hw.validate_notebook(ok, "nb.ipynb") == []


def test_hidden_tests_may_not_assert_a_self_checked_value(registry):
    hw.record_answer("fixture.mistakes", 3, atol=0.1, bound=100, registry=registry)
    nb = hidden_notebook("", "assert training_mistakes == 3\nrng = np.random.default_rng(3)",
                         'check("fixture.mistakes", training_mistakes)')
    [error] = hw.validate_notebook(nb, "nb.ipynb", registry=registry)
    assert "the self-check 'fixture.mistakes' protects" in str(error)
    other = hidden_notebook("", "assert training_mistakes == 4",
                            'check("fixture.mistakes", training_mistakes)')
    assert hw.validate_notebook(other, "nb.ipynb", registry=registry) == []


@pytest.mark.slow
def test_grading_version_keeps_expected_and_writes_the_teachers_values_beside(tmp_path):
    hidden = ("assert np.allclose(perceptron_step(np.ones(2), np.array([-1.0, 0.5]), 1),\n"
              "                   expected('step', perceptron_step(np.ones(2), "
              "np.array([-1.0, 0.5]), 1)))")
    nb = hidden_notebook("from booktools.homework import expected", hidden)
    src = tmp_path / "src"
    src.mkdir()
    nbformat.write(nb, src / "hw.ipynb")
    hw.release(src, tmp_path / "student", grading=tmp_path / "grading")
    graded = nbformat.read(tmp_path / "grading" / "hw.ipynb", as_version=4)
    # the kernel that grades receives no value of the teacher's: the call stays
    assert graded.cells[4].source == (
        f"assert True\n### BEGIN HIDDEN TESTS\n{hidden}\n### END HIDDEN TESTS")
    values = json.loads((tmp_path / "grading" / "hw.expected.json").read_text())
    assert values == {"format": 1, "values": {
        "fixture.w_trained": values["values"]["fixture.w_trained"],
        "step": {"ndarray": [0.0, 1.5], "dtype": "float64"}}}
    student = nbformat.read(tmp_path / "student" / "hw.ipynb", as_version=4)
    assert "expected" not in student.cells[4].source
    assert sorted(p.name for p in (tmp_path / "student").iterdir()) == ["hw.ipynb"]


@pytest.mark.slow
def test_a_kernel_that_dies_is_reported_as_such_not_as_a_bad_notebook(tmp_path):
    # e.g. OPENBLAS_CORETYPE names a kernel this CPU lacks: SIGILL at the first BLAS call
    nb = hidden_notebook(
        "from booktools.homework import expected\n"
        "import os, signal\nos.kill(os.getpid(), signal.SIGILL)",
        "assert training_mistakes == expected('m', training_mistakes)",
    )
    src = tmp_path / "src"
    src.mkdir()
    nbformat.write(nb, src / "hw.ipynb")
    with pytest.raises(hw.KernelDied, match="killed by SIGILL .*not an error in the notebook"):
        hw.release(src, tmp_path / "student", grading=tmp_path / "grading")
    with pytest.raises(hw.KernelDied, match="SIGILL"):
        hw.rehearse(src / "hw.ipynb")
    assert not (tmp_path / "student").exists()
