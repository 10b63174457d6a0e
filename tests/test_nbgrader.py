"""The real nbgrader round trip on every homework (``make nbgrader``).

A course directory is made the way the teachers' chapter describes: the grading versions
that ``python -m booktools release --grading`` writes (hidden tests holding the
values of the teacher's solution; ``make release``, the layer before, writes them to
``_build/release``) go to ``source/``; ``nbgrader generate_assignment``
must remove from them exactly what our release removes; then ``nbgrader autograde``
grades two submissions per homework: the teacher's solution (full marks on every
autograded cell) and the unanswered student version (zero on every autograded cell).
``python -m booktools autograde`` must give the same scores.

One variant per student: tests/test_nbgrader_students.py.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from booktools import homework as hw

ROOT = Path(__file__).resolve().parents[1]
HOMEWORK = sorted((ROOT / "book" / "homework").glob("*.ipynb"))
IDS = [p.stem for p in HOMEWORK]
FAST = ROOT / "book" / "homework" / "homework4.ipynb"  # the quickest homework to run
BIN = Path(sys.executable).parent
RELEASE = ROOT / "_build" / "release"  # make release: student and grading versions

pytestmark = pytest.mark.nbgrader


def nbgrader(course, *args):
    """Run nbgrader in ``course``; its database migrations need ``alembic`` on PATH."""
    exe = shutil.which("nbgrader", path=str(BIN))
    assert exe, "nbgrader is not installed (requirements-dev.txt pins it)"
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    result = subprocess.run([exe, *args], cwd=course, env=env, capture_output=True,
                            text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course with every homework released by nbgrader and autograded twice.

    Its source is the release that ``make release`` (the layer before this one) wrote to
    ``_build/release``, not a release of its own: that would run every teacher notebook
    once more. Its student versions must be those of the teacher notebooks as they are."""
    tmp = tmp_path_factory.mktemp("nbgrader")
    course = tmp / "course"
    ours, grading = RELEASE / "homework", RELEASE / "grading"
    if not all((d / p.name).is_file() for d in (ours, grading) for p in HOMEWORK):
        pytest.fail(f"{RELEASE} is missing: run `make release` first")
    hw.release(ROOT / "book" / "homework", tmp / "student")  # no notebook runs for this
    for path in HOMEWORK:
        assert (tmp / "student" / path.name).read_bytes() == (ours / path.name).read_bytes(), (
            f"{ours / path.name} is not the release of {path}: run `make release` again")
    (course / "source").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        "c.Execute.timeout = 900\n"
    )
    for path in HOMEWORK:
        name = path.stem
        (course / "source" / name).mkdir()
        shutil.copy(grading / path.name, course / "source" / name / path.name)
        nbgrader(course, "generate_assignment", name, "--force")
        for student, notebook in (("teacher", path), ("unanswered", ours / path.name)):
            target = course / "submitted" / student / name
            target.mkdir(parents=True)
            shutil.copy(notebook, target / path.name)
        nbgrader(course, "autograde", name, "--create", "--force")
    return {"course": course, "ours": ours, "grading": grading}


@pytest.mark.parametrize("path", HOMEWORK, ids=IDS)
def test_generate_assignment_removes_what_release_removes(course, path):
    theirs = nbformat.read(course["course"] / "release" / path.stem / path.name, 4)
    ours = nbformat.read(course["ours"] / path.name, 4)
    assert [c.source for c in theirs.cells] == [c.source for c in ours.cells]
    for a, b in zip(ours.cells, theirs.cells, strict=True):
        assert not a.get("outputs") and not b.get("outputs")
        if hw.is_solution_cell(a):
            assert "attachments" not in a  # nbgrader keeps a pasted picture; we do not


def grades(course, name):
    """``{student: [(cell name, auto score, max score)]}`` of the autograded cells."""
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in ("teacher", "unanswered"):
            nb = gb.find_submission_notebook(name, name, student)
            found[student] = sorted(
                (g.name, g.auto_score, g.max_score) for g in nb.grades
                if g.cell.cell_type == "code"
            )
    return found


def test_autograde_command_agrees_with_nbgrader(course, tmp_path):
    """``python -m booktools autograde`` on the course's grading versions gives the
    scores of ``nbgrader autograde`` (the course variant: one nbgrader course)."""
    names = [FAST.stem]
    rows, problems = hw.autograde(course["grading"], course["course"] / "submitted",
                                  notebooks=names, out=tmp_path / "grades.csv")
    assert problems == []
    for name in names:
        theirs = grades(course["course"], name)
        for student, cells in theirs.items():
            ours = {r["cell"]: (r["score"], r["max_score"]) for r in rows
                    if r["student"] == student and r["notebook"] == name}
            assert {n: ours[n] for n, _, _ in cells} == {
                n: (float(s), float(m)) for n, s, m in cells}, (name, student)
            assert ours["total"] == (sum(s for _, s, _ in cells), sum(m for _, _, m in cells))


@pytest.mark.parametrize("path", HOMEWORK, ids=IDS)
def test_autograde_teacher_full_marks_unanswered_zero(course, path):
    got = grades(course["course"], path.stem)
    teacher = hw.release_notebook(nbformat.read(path, 4))  # only for the cell list
    graded = sorted(
        c.metadata["nbgrader"]["grade_id"] for c in teacher.cells
        if hw.is_grade_cell(c) and c.cell_type == "code"
    )
    assert [g[0] for g in got["teacher"]] == graded
    assert got["teacher"] == [(n, m, m) for n, _, m in got["teacher"]], got["teacher"]
    assert sum(m for _, _, m in got["teacher"]) > 0
    assert got["unanswered"] == [(n, 0.0, m) for n, _, m in got["unanswered"]], (
        got["unanswered"])
