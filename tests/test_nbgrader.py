"""The real nbgrader round trip on every homework (``make nbgrader``).

A course directory is made the way the teachers' chapter describes: the grading versions
that ``python -m booktools release --grading`` writes (without the values files of the
teacher's solution beside them; ``make release``, the layer before, writes them to
``_build/release``) go to ``source/``; ``nbgrader generate_assignment``
must remove from them exactly what our release removes; then ``nbgrader autograde``
grades two submissions per homework: the teacher's solution (full marks on every
autograded cell) and the unanswered student version (zero on every autograded cell).
``python -m booktools autograde`` must give the same scores.

Then one variant per student: homework 4 released for five students and graded by
``autograde``, each submission against its own student's grading version (see
:func:`per_student`).
"""

import copy
import csv
import functools
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from booktools import homework as hw
from booktools.homework import sandbox
from booktools.homework.grading import literal, values_path
from booktools.kernels import IOPUB_TIMEOUT, STARTUP_TIMEOUT

ROOT = Path(__file__).resolve().parents[1]
HOMEWORK = sorted((ROOT / "book" / "homework").glob("*.ipynb"))
IDS = [p.stem for p in HOMEWORK]
FAST = ROOT / "book" / "homework" / "homework4.ipynb"  # the quickest homework to run
BIN = Path(sys.executable).parent
RELEASE = ROOT / "_build" / "release"  # make release: student and grading versions
# the module (booktools.homework's name autograde is the function)
autograde_module = importlib.import_module("booktools.homework.autograde")

pytestmark = pytest.mark.nbgrader


def need_sandbox():
    """autograde runs every submission in bubblewrap: skip without it (``make nbgrader``
    installs it as root with apt), but fail under CI=true."""
    try:
        sandbox.find_bwrap()
    except ValueError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and no sandbox: {exc}")
        pytest.skip(str(exc))


def nbgrader(course, *args):
    """Run nbgrader in ``course``; its database migrations need ``alembic`` on PATH."""
    exe = shutil.which("nbgrader", path=str(BIN))
    assert exe, "nbgrader is not installed (requirements-dev.txt pins it)"
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    result = subprocess.run([exe, *args], cwd=course, env=env, capture_output=True,
                            text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


@functools.cache
def made_release():
    """The student and grading versions of every homework that ``make release`` (the layer
    before this one) wrote to ``_build/release``: a release of a test's own would run every
    teacher notebook once more. Its student versions must be those of the teacher notebooks
    as they are (compared with a release that runs no notebook)."""
    ours, grading = RELEASE / "homework", RELEASE / "grading"
    if not all((d / p.name).is_file() for d in (ours, grading) for p in HOMEWORK):
        pytest.fail(f"{RELEASE} is missing: run `make release` first")
    with tempfile.TemporaryDirectory() as tmp:
        hw.release(ROOT / "book" / "homework", Path(tmp))  # no notebook runs for this
        for path in HOMEWORK:
            assert (Path(tmp) / path.name).read_bytes() == (ours / path.name).read_bytes(), (
                f"{ours / path.name} is not the release of {path}: run `make release` again")
    return ours, grading


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course with every homework released by nbgrader and autograded twice, from the
    release of ``make release`` (:func:`made_release`)."""
    tmp = tmp_path_factory.mktemp("nbgrader")
    course = tmp / "course"
    ours, grading = made_release()
    (course / "source").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        "c.Execute.timeout = 900\n"
        f"c.Execute.startup_timeout = {STARTUP_TIMEOUT}\n"  # nbgrader's default: 60 s
        f"c.Execute.iopub_timeout = {IOPUB_TIMEOUT}\n"  # nbgrader's: 4 s, then an error
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
    need_sandbox()
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


# --- one variant per student: `python -m booktools autograde` ------------------
SECRET = "9e2c4a7f1b3d5e8a0c6f2b4d7e9a1c3f5b8d0e2a4c6f8b1d3e5a7c9f0b2d4e6a"  # as new-secret
ROSTER = ("s01", "s02", "s03", "s04", "s05")


def with_answers(nb, teacher):
    """``nb`` with the answer cells of the teacher notebook (matched by nbgrader id)."""
    answers = {c.metadata.nbgrader["grade_id"]: c for c in teacher.cells
               if hw.is_solution_cell(c)}
    out = copy.deepcopy(nb)
    out.cells = [copy.deepcopy(answers.get(c.metadata.get("nbgrader", {}).get("grade_id"), c))
                 for c in nb.cells]
    return out


@pytest.fixture(scope="module")
def per_student(tmp_path_factory):
    """Homework 4 released with one variant per student and graded by the command
    ``autograde``. nbgrader runs the submission again on the student's own data, so a
    solution in code carries over to every variant; numbers copied from another variant
    do not. s01 submits the teacher's solution with its Hebb errors written in as
    numbers, those of s01's variant (what copying a classmate's results gives); s02
    submits that very file; s03 the teacher's solution; s04 the unanswered notebook,
    with its last test cell deleted; s05 a notebook whose metadata nbgrader chokes on
    (points "lots")."""
    need_sandbox()
    tmp = tmp_path_factory.mktemp("per-student")
    roster = tmp / "roster.csv"
    roster.write_text("id,name\n" + "".join(f"{sid},Student {sid}\n" for sid in ROSTER))
    hw.release(FAST, tmp / "student", grading=tmp / "grading", seed=SECRET,
               students=hw.read_roster(roster))
    teacher = nbformat.read(FAST, 4)
    values, _ = hw.record_variant(teacher, FAST, hw.derive_seed(SECRET, FAST.stem, "s01"),
                                  hw.variants.variant_key(SECRET, FAST.stem, "s01"),
                                  tmp / "s01.answers.json")
    mine = {sid: nbformat.read(tmp / "student" / sid / FAST.name, 4) for sid in ROSTER}
    copied = with_answers(mine["s01"], teacher)
    cell = next(c for c in copied.cells if c.metadata.nbgrader.get("grade_id") == "ex2-code")
    cell.source = f"hebb_errors = {literal(values['hw4.hebb_errors'])}"
    blank = copy.deepcopy(mine["s04"])
    blank.cells = [c for c in blank.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                   != "ex3b-tests"]
    broken = copy.deepcopy(mine["s05"])
    next(c for c in broken.cells if hw.is_grade_cell(c)).metadata.nbgrader["points"] = "lots"
    submissions = {"s01": copied, "s02": copied, "s03": with_answers(mine["s03"], teacher),
                   "s04": blank, "s05": broken}
    for sid, nb in submissions.items():
        (tmp / "submitted" / sid / FAST.stem).mkdir(parents=True)
        nbformat.write(nb, tmp / "submitted" / sid / FAST.stem / FAST.name)
    # autograde grades in a scratch course in the temporary directory: here one of this
    # test's own, which already holds the scratch course of an unrelated run going on
    scratch = tmp / "tmp"
    stray = scratch / "lincls-autograde-another-run"
    stray.mkdir(parents=True)
    roots = []

    class Workers(autograde_module._Workers):
        def __init__(self, root, *args):
            roots.append(Path(root))
            assert roots[-1].is_dir()
            super().__init__(root, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(scratch))
        patch.setattr(autograde_module, "_Workers", Workers)
        status = hw.main(["autograde", str(tmp / "grading"), str(tmp / "submitted"),
                          "--students", str(roster), "--out", str(tmp / "grades.csv")])
    assert status == 0  # every row written; s05's says why it scored zero
    assert [r.parent for r in roots] == [scratch]  # graded in the scratch course...
    assert set(scratch.glob("lincls-autograde-*")) == {stray}  # gone; the other run's kept
    with open(tmp / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return {"rows": rows, "text": (tmp / "grades.csv").read_text()}


def per_cell(rows, sid):
    """``{cell: (score, max score, note)}`` of one student, scores as floats or None."""
    def number(text):
        return float(text) if text else None

    return {r["cell"]: (number(r["score"]), number(r["max_score"]), r["note"])
            for r in rows if r["student"] == sid and r["notebook"] == FAST.stem}


def autograded(grades):
    return {cell: v for cell, v in grades.items() if cell.endswith("-tests")}


class TestPerStudent:
    """The per-student round trip (`make nbgrader` runs these tests, which share the
    per_student fixture, in one pytest worker and the course's in the other)."""

    def test_per_student_copied_numbers_pass_only_their_own_variant(self, per_student):
        rows = per_student["rows"]
        own, other = per_cell(rows, "s01"), per_cell(rows, "s02")
        assert set(autograded(own)) == {"ex1-tests", "ex2-tests", "ex3-tests", "ex3b-tests"}
        assert all(score == top > 0 for score, top, _ in autograded(own).values()), own
        assert own["total"][:2] == (sum(v[1] for v in autograded(own).values()),) * 2
        # graded against s02's variant, the same file loses exactly the cell whose hidden
        # tests check the copied numbers, and keeps the marks of the code
        lost = {cell for cell, (score, top, _) in autograded(other).items() if score < top}
        assert lost == {"ex2-tests"}
        assert all(score == 0 for cell, (score, _, _) in autograded(other).items() if cell in lost)
        assert other["total"][0] == own["total"][0] - own["ex2-tests"][1]
        assert own["ex4-answer"] == (None, 3.0, "graded by hand")
        assert own["total"][2] == "autograded cells only; 3 more points graded by hand"

    def test_per_student_the_method_carries_over(self, per_student):
        solved = per_cell(per_student["rows"], "s03")
        assert all(score == top > 0 for score, top, _ in autograded(solved).values()), solved

    def test_per_student_unanswered_scores_zero(self, per_student):
        blank = per_cell(per_student["rows"], "s04")
        assert len(autograded(blank)) == 4 and all(
            score == 0 for score, _, _ in autograded(blank).values()), blank
        assert blank["ex3b-tests"] == (0.0, 2.0, "test cell missing from the submission")
        assert blank["ex4-answer"] == (0.0, 3.0, "unanswered")
        assert blank["total"] == (0.0, 12.0, "")

    def test_per_student_grades_file_holds_scores_only(self, per_student):
        rows = per_student["rows"]
        assert sorted({r["student"] for r in rows}) == list(ROSTER)
        assert {r["note"] for r in rows if not r["note"].startswith("not gradable: ")} == {
            "", "graded by hand", "unanswered",
            "autograded cells only; 3 more points graded by hand",
            "test cell missing from the submission",
            # s02's copy of s01's results: nbgrader passed the cells, the values did not
            "no points although nbgrader passed it: a value its hidden tests compare "
            "differs from the teacher's"}
        assert SECRET not in per_student["text"]

    def test_per_student_an_nbgrader_failure_loses_only_its_own_grades(self, per_student):
        broken = per_cell(per_student["rows"], "s05")  # its grading metadata changed
        assert broken["total"][:2] == (0.0, 12.0)
        assert broken["total"][2].startswith("not gradable: the nbgrader metadata")
        assert all(score == 0.0 for score, _, _ in broken.values())
        others = [r for r in per_student["rows"] if r["student"] != "s05" and r["cell"] == "total"]
        assert len(others) == 4 and all(r["score"] for r in others)


# --- a submission that attacks the grader ---------------------------------------
ATTACK = '''\
import glob, json, os, pathlib
def perceptron_step(w, x, label, eta=1.0):
    raise NotImplementedError()
course = pathlib.Path.cwd().parents[2] if len(pathlib.Path.cwd().parents) > 2 else None
for path in [GRADING + "/s01/fixture1.ipynb", f"{course}/source/fixture1/fixture1.ipynb"]:
    try:
        cells = json.load(open(path))["cells"]
    except OSError:
        continue
    for cell in cells:  # the teacher's solution, from the grading version
        if cell["cell_type"] == "code" and "BEGIN SOLUTION" in "".join(cell["source"]):
            exec("".join(cell["source"]))
    break
seen = ""
for env in glob.glob("/proc/*/environ"):
    try:
        seen += open(env, errors="replace").read()
    except OSError:
        pass
for path, text in [(OUT + "/stolen.txt", seen), (VICTIM, "{}")]:
    try:
        open(path, "w").write(text)
    except OSError:
        pass
'''


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
def test_a_submission_that_attacks_the_grader(tmp_path, monkeypatch, sandboxed):
    """s01's answer cell takes the teacher's solution from its grading version (the
    issue's attack), reads every process's environment (the teacher's exported
    variables) and overwrites s02's submission. In the sandbox it scores what a blank
    submission scores and changes nothing outside; without it (the check that the attack
    is real) it scores full marks and leaves the stolen variables behind (not the course
    secret: autograde's workers never hold it)."""
    if sandboxed:
        need_sandbox()
    teacher = ROOT / "tests" / "fixtures" / "homework" / "teacher" / "fixture1.ipynb"
    grading, student, sub = tmp_path / "grading", tmp_path / "student", tmp_path / "submitted"
    hw.release(teacher, student, grading=grading)
    values = values_path(grading / teacher.name)  # the teacher's values, beside it
    for sid in ("s01", "s02"):
        (grading / sid).mkdir()
        shutil.copy(grading / teacher.name, grading / sid / teacher.name)
        shutil.copy(values, values_path(grading / sid / teacher.name))
        (sub / sid / teacher.stem).mkdir(parents=True)
    (grading / teacher.name).unlink()
    values.unlink()
    victim = sub / "s02" / teacher.stem / teacher.name
    nbformat.write(with_answers(nbformat.read(student / teacher.name, 4),
                                nbformat.read(teacher, 4)), victim)
    attack = nbformat.read(student / teacher.name, 4)
    for cell in attack.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id == "perceptron_step":
            cell.source = (f"GRADING, OUT, VICTIM = {str(grading)!r}, {str(tmp_path)!r}, "
                           f"{str(victim)!r}\n" + ATTACK)
        elif grade_id == "train":
            cell.source = "training_mistakes = int(np.sum(np.where(X @ w_trained > 0, 1, -1) != y))"
    nbformat.write(attack, sub / "s01" / teacher.stem / teacher.name)
    before = {p: p.read_bytes() for p in (*grading.rglob("*"), victim) if p.is_file()}
    monkeypatch.setenv("BOOKTOOLS_COURSE_SECRET", "the-teachers-course-secret")
    monkeypatch.setenv("LINCLS_TEACHER_MARKER", "the-teachers-other-variable")
    rows, problems = hw.autograde(grading, sub, sandbox=sandboxed, workers=2)
    totals = {r["student"]: r["score"] for r in rows if r["cell"] == "total"}
    stolen = tmp_path / "stolen.txt"
    if not sandboxed:  # the attack works (but for the secret, which grading never holds)
        assert totals["s01"] == 3.0
        assert "the-teachers-other-variable" in stolen.read_text()
        assert "the-teachers-course-secret" not in stolen.read_text()
        return
    assert problems == [] and totals == {"s01": 0.0, "s02": 3.0}
    assert not stolen.exists()
    assert {p: p.read_bytes() for p in before} == before
