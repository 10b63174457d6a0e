"""Tests of lincls.homework on the fixture notebooks (fast; no book homework needed)."""

import json
import os
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lincls import homework as hw

FIXTURES = Path(__file__).parent / "fixtures" / "homework"
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
    # untouched cells
    for i in (0, 1, 2, 5, 7, 9, 12):
        assert src[i] == teacher.cells[i].source


def test_release_clears_outputs_and_keeps_nbgrader_metadata(released):
    teacher = nbformat.read(TEACHER, as_version=4)
    student = nbformat.read(released, as_version=4)
    assert any(c.get("outputs") for c in teacher.cells)  # the fixture was executed
    for t, s in zip(teacher.cells, student.cells, strict=True):
        if s.cell_type == "code":
            assert s.outputs == [] and s.execution_count is None
        assert s.metadata.get("nbgrader") == t.metadata.get("nbgrader")
        assert s.get("id") == t.get("id")
    assert student.metadata["lincls"] == teacher.metadata["lincls"]
    nbformat.validate(student)


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
    assert hw.main(["check", str(released)]) == 0


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
    assert hw.main(["check", str(MALFORMED / name)]) == 1
    err = capsys.readouterr().err
    assert name in err and expected["message"] in err
    assert snapshot(out) == before


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
@pytest.fixture
def registry(tmp_path):
    return tmp_path / "answers.json"


def test_check_right_and_wrong_scalar(registry, capsys):
    hw.record_answer("q.margin", 0.123456, atol=1e-4, registry=registry)
    assert hw.check("q.margin", 0.12349, registry=registry)
    assert not hw.check("q.margin", 0.13, registry=registry)
    assert not hw.check("q.margin", 12.3456, registry=registry)
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "q.margin: right",
        "q.margin: wrong",
        "q.margin: this looks like a percentage; give a fraction between 0 and 1",
    ]
    # the registry holds neither the value nor its digits
    assert "0.123" not in registry.read_text() and "123456" not in registry.read_text()


def test_check_feedback_for_arrays(registry, capsys):
    w = np.array([0.6, 0.0, -0.8])
    hw.record_answer("q.w", w, atol=1e-3, normalized=True, registry=registry)
    assert hw.check("q.w", w.tolist(), registry=registry)
    assert hw.check("q.w", w.reshape(1, 3), registry=registry)  # same answer as a row
    assert not hw.check("q.w", w[:2], registry=registry)
    assert not hw.check("q.w", 5 * w, registry=registry)
    assert not hw.check("q.w", -w, registry=registry)
    assert not hw.check("q.w", [0.8, 0.0, -0.6], registry=registry)
    assert not hw.check("q.w", [np.nan, 0, 1], registry=registry)
    assert not hw.check("q.w", "zero", registry=registry)
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "q.w: wrong shape: expected (3,), got (2,)"
    assert out[3] == "q.w: not normalized: its norm is 5, it should be 1"
    assert out[4] == "q.w: wrong sign: the answer is the negative of this"
    assert out[5] == "q.w: wrong: 2 of 3 entries differ (at 0, 2)"
    assert out[6] == "q.w: contains NaN or infinity"
    assert out[7].startswith("q.w: not a number")


def test_unknown_answer_and_bad_names(registry):
    hw.record_answer("q.a", 1.0, registry=registry)
    with pytest.raises(ValueError, match="no answer named 'q.b'"):
        hw.check("q.b", 1.0, registry=registry)
    with pytest.raises(ValueError, match="answer name"):
        hw.record_answer("bad name", 1.0, registry=registry)
    with pytest.raises(ValueError, match="atol"):
        hw.record_answer("q.c", 1.0, atol=0, registry=registry)
    with pytest.raises(ValueError, match="norm is not 1"):
        hw.record_answer("q.d", [1.0, 1.0], normalized=True, registry=registry)


@settings(max_examples=60, deadline=None)
@given(
    answer=st.floats(-1e3, 1e3, allow_nan=False),
    atol=st.sampled_from([1e-6, 1e-3, 0.05]),
    shift=st.floats(-1, 1),
)
def test_tolerance_aware_rounding(tmp_path_factory, answer, atol, shift):
    """Within atol is always right; beyond 3 atol always wrong, wherever the bin edges."""
    reg = tmp_path_factory.mktemp("reg") / "answers.json"
    hw.record_answer("p", answer, atol=atol, registry=reg)
    assert hw.check("p", answer + 0.99 * atol * shift, registry=reg, quiet=True)
    far = answer + (3.01 * atol + abs(shift) * atol) * (1 if shift >= 0 else -1)
    assert not hw.check("p", far, registry=reg, quiet=True)


def test_recording_mode_and_hash_command(registry, monkeypatch, capsys):
    monkeypatch.setenv(hw.RECORD_ENV, str(registry))
    assert hw.check("q.x", [1.0, 2.0], atol=0.01)
    monkeypatch.delenv(hw.RECORD_ENV)
    assert hw.check("q.x", [1.001, 2.0], registry=registry)
    salt = json.loads(registry.read_text())["answers"]["q.x"]["salt"]
    assert hw.main(["hash", "q.x", "[3, 4]", "--registry", str(registry)]) == 0
    data = json.loads(registry.read_text())["answers"]["q.x"]
    assert data["salt"] == salt and data["shape"] == [2]  # re-recording keeps the salt
    assert hw.check("q.x", [3, 4], registry=registry)
    assert hw.main(["hash", "q.y", "[1,", "--registry", str(registry)]) == 1
    capsys.readouterr()


def test_shipped_registry_is_well_formed():
    data = hw._load_registry(hw.ANSWERS)
    for name, entry in data["answers"].items():
        assert len(entry["hashes"]) == int(np.prod(entry["shape"])) == len(entry["offsets"])
        assert entry["atol"] > 0, name


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
        "15 min | 5 | 5 |"
    )
    assert table[3] == "| **Total** | | | 15 min | | 5 |"


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
                "from lincls.homework import check\n"
                "answer = 2.5\n"
                'check("t.answer", answer, atol=0.01)'
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
    assert "refusing to overwrite" in capsys.readouterr().err
    assert (src / "hw.ipynb").read_bytes() == before
    # OUT inside SRC: the second release must not treat the first one as input
    first = hw.release(src, src / "student")
    second = hw.release(src, src / "student")
    assert first == second == [src / "student" / "hw.ipynb"]


def test_student_sources(tmp_path):
    import yaml

    root = tmp_path / "book-repo"
    (root / "book" / "homework").mkdir(parents=True)
    (root / "lincls").mkdir()
    (root / "lincls" / "x.py").write_text("X = 1\n")
    shutil.copy(TEACHER, root / "book" / "homework" / "hw.ipynb")
    (root / "book" / "chapter.md").write_text(CHAPTER)
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/chapter\n")
    (root / "_config.yml").write_text(
        "title: T\nrepository: {url: 'https://github.com/a/b', branch: main}\n"
    )
    dest = hw.make_student_sources(root, tmp_path / "src", "https://github.com/a/student")
    chapter = (dest / "book" / "chapter.md").read_text()
    assert "secret" not in chapter and hw.STUDENT_SOLUTION_NOTE in chapter
    student = nbformat.read(dest / "book" / "homework" / "hw.ipynb", as_version=4)
    assert "YOUR CODE HERE" in student.cells[3].source
    config = yaml.safe_load((dest / "_config.yml").read_text())
    assert config["title"] == "T (student edition)"
    assert config["repository"]["url"] == "https://github.com/a/student"
    assert (dest / "lincls" / "x.py").exists() and (dest / "_toc.yml").exists()
