"""``python -m booktools autograde`` on what it must not grade (fast: none of these
cases runs a submission; ``tests/test_nbgrader.py`` and ``tests/test_hostile_class.py``
grade real submissions).

A missing submission scores zero, a student not in the roster and a stray file are
reported and skipped, the wrong notebook scores zero, a student without a grading
version is reported as not graded; and a folder that is not a grading version is refused
before anything is graded. Every file a student supplies goes through the one gate
(links, FIFOs, devices, folders, huge files and parser bombs are that student's zero
with a note), so does their nbgrader metadata (it must be the grading version's), and
whatever nbgrader does with a submission costs only that student's rows: the run writes
every row and ends with status 0.
"""

import contextlib
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from grading_layout import per_student

from booktools import homework as hw
from booktools.homework.autograde import COLUMNS, autograde

TEACHER = Path(__file__).parent / "fixtures" / "homework" / "teacher" / "fixture1.ipynb"

NAME = TEACHER.stem  # fixture1: tests worth 2 + 1 points, written answers 1 + 1


@pytest.fixture
def course(tmp_path):
    """Grading versions for s01 and s02 (the fixture's teacher notebook), and a folder
    of submissions holding everything but a gradable submission."""
    grading, student = per_student(TEACHER, tmp_path, ("s01", "s02")), tmp_path / "student"
    sub = tmp_path / "submitted"
    # s01 submitted nothing; s02 another notebook under the right name
    (sub / "s02" / NAME).mkdir(parents=True)
    other = nbformat.read(student / TEACHER.name, 4)
    for cell in other.cells:
        if "nbgrader" in cell.metadata:
            cell.metadata.nbgrader["grade_id"] = "other-" + cell.metadata.nbgrader["grade_id"]
    nbformat.write(other, sub / "s02" / NAME / TEACHER.name)
    # s02 also left a copy at the wrong place; s03 is no student of the release
    shutil.copy(student / TEACHER.name, sub / "s02" / TEACHER.name)
    (sub / "s03" / NAME).mkdir(parents=True)
    shutil.copy(student / TEACHER.name, sub / "s03" / NAME / TEACHER.name)
    (sub / "grades-old.csv").write_text("a stray file\n")
    (sub / "s02" / ".ipynb_checkpoints").mkdir()
    shutil.copy(student / TEACHER.name, sub / "s02" / ".ipynb_checkpoints" / "x.ipynb")
    return {"grading": grading, "submitted": sub, "student": student, "tmp": tmp_path}


def totals(rows):
    return {(r["student"], r["notebook"]): (r["score"], r["max_score"], r["note"])
            for r in rows if r["cell"] == "total"}


def test_missing_wrong_unknown_and_stray_are_zeros_or_notes(course):
    rows, problems = autograde(course["grading"], course["submitted"], notebooks=[NAME])
    assert totals(rows) == {
        ("s01", NAME): (0.0, 3.0, "no submission"),
        ("s02", NAME): (0.0, 3.0, f"not {NAME}: none of its answer or test cells "
                                  "(their nbgrader ids)"),
    }
    # every graded cell of the grading version has its row, written answers too
    assert [r["cell"] for r in rows if r["student"] == "s01"] == [
        "test_perceptron_step", "test_train", "why", "which_theorem", "total"]
    assert all(r["score"] == 0.0 for r in rows)
    sub = course["submitted"]
    assert problems == [
        f"{sub / 'grades-old.csv'}: a stray file, ignored (submissions go in "
        f"{sub}/ID/NAME/NAME.ipynb)",
        f"{sub / 's02' / TEACHER.name}: not a notebook of the release at its place "
        "(s02/NAME/NAME.ipynb), ignored",
        f"{sub / 's03'}: s03 is not in the roster, not graded",
        f"{sub / 's02' / NAME / TEACHER.name}: not {NAME}: none of its answer or test "
        "cells (their nbgrader ids); scored zero",
    ]


def test_a_roster_decides_who_is_graded(course):
    out = course["tmp"] / "marks" / "grades.csv"
    rows, problems = autograde(course["grading"], course["submitted"], notebooks=[NAME],
                               students=["s01", "s04"], out=out)
    assert totals(rows) == {
        ("s01", NAME): (0.0, 3.0, "no submission"),
        ("s04", NAME): (None, None, f"not graded: {course['grading'] / 's04'} has no "
                                    f"grading version of {NAME} for this student"),
    }
    assert any("s02 is not in the roster" in p for p in problems)
    with open(out, newline="") as f:
        written = list(csv.DictReader(f))
    assert tuple(written[0]) == COLUMNS
    assert [tuple(r.values()) for r in written] == [
        tuple("" if v is None else str(v) for v in r.values()) for r in rows]


def test_nothing_submitted_nothing_to_grade(course):
    empty = course["tmp"] / "empty"
    empty.mkdir()
    rows, problems = autograde(course["grading"], empty)
    assert rows == [] and problems == [f"{empty}: no submission of any notebook of "
                                       f"{course['grading']}"]
    assert hw.main(["autograde", str(course["grading"]), str(empty), "--out",
                    str(course["tmp"] / "g.csv")]) == 1


def test_the_command_line_writes_the_csv_and_says_what_was_not_graded(course, capsys):
    roster = course["tmp"] / "roster.csv"
    roster.write_text("id,name\ns01,Ada\ns04,Alan\n")
    out = course["tmp"] / "grades.csv"
    status = hw.main(["autograde", str(course["grading"]), str(course["submitted"]),
                      "--students", str(roster), "--notebooks", NAME, "--out", str(out)])
    assert status == 0  # every row written: s04's says why it has no score
    printed = capsys.readouterr()
    assert f"s01 {NAME}: 0 / 3 (no submission)" in printed.out
    assert f"s04 {NAME}: not graded: " in printed.out
    assert "s02 is not in the roster" in printed.err
    assert out.read_text().startswith(",".join(COLUMNS) + "\n")


def test_only_grading_versions_are_graded_against(course):
    sub = course["submitted"]
    with pytest.raises(ValueError, match="student version"):
        autograde(course["student"], sub)  # the student versions: nothing hidden
    teacher = course["tmp"] / "teacher"
    teacher.mkdir()
    nb = nbformat.read(TEACHER, 4)
    nb.cells[4].source += '\n### BEGIN HIDDEN TESTS\nassert expected("k", 1) == 1\n' \
                          "### END HIDDEN TESTS"
    nbformat.write(nb, teacher / TEACHER.name)
    with pytest.raises(ValueError, match="teacher notebook"):
        autograde(teacher, sub)
    shutil.copy(TEACHER, course["grading"] / TEACHER.name)  # a course's and students'
    with pytest.raises(ValueError, match="both grading versions"):
        autograde(course["grading"], sub)
    with pytest.raises(ValueError, match="no grading version of homework9"):
        autograde(course["grading"] / "s01", sub, notebooks=["homework9"])
    with pytest.raises(FileNotFoundError):
        autograde(course["grading"] / "s01", course["tmp"] / "nowhere")


def test_an_unreadable_submission_scores_zero(course):
    (course["submitted"] / "s01" / NAME).mkdir(parents=True)
    (course["submitted"] / "s01" / NAME / TEACHER.name).write_text("{ not json")
    rows, problems = autograde(course["grading"], course["submitted"], students=["s01"])
    total = totals(rows)[("s01", NAME)]
    assert total[:2] == (0.0, 3.0) and total[2].startswith("not a readable notebook: ")
    assert any(p.endswith("; scored zero") and "s01" in p for p in problems)


def test_an_oversized_submission_is_not_read(course, monkeypatch):
    import importlib

    ag = importlib.import_module("booktools.homework.autograde")
    monkeypatch.setattr(ag, "MAX_SUBMISSION", 1000)
    (course["submitted"] / "s01" / NAME).mkdir(parents=True)
    shutil.copy(course["student"] / TEACHER.name, course["submitted"] / "s01" / NAME)
    rows, _ = autograde(course["grading"], course["submitted"], students=["s01"])
    assert totals(rows)[("s01", NAME)] == (0.0, 3.0, "larger than 1,000 bytes: not read")


def test_a_course_whose_grades_cannot_be_read_costs_only_its_students(course, monkeypatch,
                                                                       capsys):
    """The rows of every course but a broken one (here: its gradebook is no database),
    in roster order, as the nbgrader workers report each course done. Without the
    sandbox, a line on stderr and the first row of the grades say so."""
    import importlib
    import sqlite3

    ag = importlib.import_module("booktools.homework.autograde")  # the module, not the function

    for sid in ("s01", "s02"):
        target = course["submitted"] / sid / NAME / TEACHER.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(course["student"] / TEACHER.name, target)
    done = []

    class Workers(contextlib.nullcontext):  # nbgrader's work, already done
        def __init__(self, root, jobs, timeout, log, sandbox, workers, notebook_timeout):
            super().__init__(self)
            assert not sandbox and workers == 2 and notebook_timeout == ag.NOTEBOOK_TIMEOUT
            for k, todo in jobs:
                assert (Path(root) / str(k) / "source" / NAME / TEACHER.name).exists()
                assert list(todo) == [NAME]
                done.append(todo[NAME])

        def wait(self, k):
            pass

    def scores(course_dir, name, sids, grading=None, problems=None, notes=None,
               totals=None):
        if sids == ["s02"]:
            raise sqlite3.DatabaseError("file is not a database")
        return {sid: {"test_perceptron_step": 2.0, "test_train": 0.0, "why": None,
                      "which_theorem": 0.0} for sid in sids}

    monkeypatch.setattr(ag, "_Workers", Workers)
    monkeypatch.setattr(ag, "_read_scores", scores)
    out = course["tmp"] / "grades.csv"
    rows, problems = autograde(course["grading"], course["submitted"], students=["s02", "s01"],
                               out=out, sandbox=False, workers=2)
    assert done == [["s02"], ["s01"]]
    assert capsys.readouterr().err == f"autograde: {ag.NO_SANDBOX}\n"
    assert rows[0] == dict.fromkeys(COLUMNS, "") | {"score": None, "max_score": None,
                                                    "note": ag.NO_SANDBOX}
    with open(out, newline="") as f:
        assert next(csv.DictReader(f))["note"] == ag.NO_SANDBOX
    assert [(r["student"], r["cell"], r["score"], r["note"]) for r in rows[1:]] == [
        ("s02", "test_perceptron_step", 0.0, ag.UNREADABLE_GRADES),
        ("s02", "test_train", 0.0, ag.UNREADABLE_GRADES),
        ("s02", "why", 0.0, ag.UNREADABLE_GRADES),
        ("s02", "which_theorem", 0.0, ag.UNREADABLE_GRADES),
        ("s02", "total", 0.0, ag.UNREADABLE_GRADES),
        ("s01", "test_perceptron_step", 2.0, ""),
        ("s01", "test_train", 0.0, ""),
        ("s01", "why", None, "graded by hand"),
        ("s01", "which_theorem", 0.0, "unanswered"),
        ("s01", "total", 2.0, "autograded cells only; 1 more points graded by hand"),
    ]
    assert problems[-1] == ("the grades of s02 could not be read from nbgrader's gradebook: "
                            "DatabaseError: file is not a database")


@pytest.mark.parametrize("held", [set(), {"memory", "pids"}, {"memory", "pids", "cpus"}])
def test_autograde_says_what_the_sandboxes_groups_cannot_hold(course, monkeypatch, capsys,
                                                              held):
    """Where a sandbox cannot be a control group, or one without a CPU quota, a line on
    stderr says so before anything is graded; where it holds every limit, nothing."""
    import importlib

    ag = importlib.import_module("booktools.homework.autograde")
    sandbox = importlib.import_module("booktools.homework.sandbox")
    assert held <= set(sandbox.GROUP_LIMITS)
    target = course["submitted"] / "s01" / NAME / TEACHER.name
    target.parent.mkdir(parents=True)
    shutil.copy(course["student"] / TEACHER.name, target)
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: "bwrap")
    monkeypatch.setattr(sandbox, "group_limits", lambda: set(held))

    class Graded(Exception):
        pass

    def workers(*args):
        assert capsys.readouterr().err == (
            "" if held == set(sandbox.GROUP_LIMITS)
            else f"autograde: {ag.GROUP_WARNINGS[frozenset(held)]}\n")
        raise Graded

    monkeypatch.setattr(ag, "_Workers", workers)
    with pytest.raises(Graded):
        autograde(course["grading"], course["submitted"], students=["s01"])


def test_without_the_sandbox_autograde_refuses_in_one_line(course, monkeypatch):
    """Where bubblewrap is missing, a gradable submission is refused before anything is
    graded or written, with one line on how to install it (--no-sandbox aside)."""
    target = course["submitted"] / "s01" / NAME / TEACHER.name
    target.parent.mkdir(parents=True)
    shutil.copy(course["student"] / TEACHER.name, target)
    monkeypatch.setenv("PATH", str(course["tmp"] / "nothing"))  # no bwrap on it
    out = course["tmp"] / "grades.csv"
    with pytest.raises(ValueError, match="apt-get install bubblewrap") as caught:
        autograde(course["grading"], course["submitted"], students=["s01"], out=out)
    assert "\n" not in str(caught.value) and not out.exists()


def test_a_worker_that_dies_loses_only_the_course_it_was_grading(tmp_path):
    """The first course's folder is missing: its worker dies there, and a new worker
    grades the rest (nbgrader runs, and fails on a course without a source)."""
    import collections
    import importlib
    import json

    ag = importlib.import_module("booktools.homework.autograde")
    (tmp_path / "1").mkdir()
    jobs = [(0, {NAME: ["s01"]}), (1, {NAME: ["s02"]})]
    log = collections.deque(maxlen=100)
    with ag._Workers(tmp_path, jobs, 60, log, False, 1) as workers:
        workers.wait(0)
        workers.wait(1)
    assert any(line.startswith("an nbgrader worker died") for line in log)
    results = json.loads((tmp_path / "1" / ag.RESULTS).read_text())
    assert results[NAME]["generate_assignment"] and results[NAME]["autograde"] == {}


def test_only_the_registry_goes_beside_the_grading_version_into_the_course(course):
    """nbgrader copies the source folder's files into each kernel's folder: of the files
    beside a grading version, only its variant's registry goes there."""
    import importlib

    ag = importlib.import_module("booktools.homework.autograde")

    beside = course["grading"] / "s01"
    (beside / f"{NAME}.answers.json").write_text("{}")
    (beside / f"{NAME}.expected.json.bak").write_text("the teacher's values")
    (beside / "teacher_notes.txt").write_text("solutions")
    ag._course(course["tmp"] / "c", {NAME: beside / TEACHER.name}, {NAME: []})
    source = course["tmp"] / "c" / "source" / NAME
    assert sorted(p.name for p in source.iterdir()) == [f"{NAME}.answers.json", TEACHER.name]


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_workers_must_be_a_whole_number(course, workers):
    with pytest.raises(ValueError, match="workers must be a whole number"):
        autograde(course["grading"], course["submitted"], workers=workers)


def test_one_worker_grades_several_courses(tmp_path):
    """A worker reports each course it has graded and goes on to the next: one process
    grades them all (the name of its pipe was once reused, and it died after the first)."""
    import collections
    import importlib

    ag = importlib.import_module("booktools.homework.autograde")
    for k in range(3):
        (tmp_path / str(k)).mkdir()  # no source: nbgrader fails fast, the worker lives
    jobs = [(k, {NAME: []}) for k in range(3)]
    log = collections.deque(maxlen=100)
    with ag._Workers(tmp_path, jobs, 60, log, False, 1) as workers:
        for k in range(3):
            workers.wait(k)
        assert len(workers.children) == 1
    assert not any("died" in line for line in log), list(log)
    for k in range(3):
        assert json.loads((tmp_path / str(k) / ag.RESULTS).read_text())[NAME]


def hostile_course(tmp_path, ids):
    """A grading version per student of ``ids`` (the fixture's), and their empty
    folders of submissions; ``(grading, submitted, student version)``."""
    grading, student = tmp_path / "grading", tmp_path / "student"
    hw.release(TEACHER, student, grading=grading)
    values = grading / f"{NAME}.expected.json"
    for sid in ids:
        (grading / sid).mkdir()
        shutil.copy(grading / TEACHER.name, grading / sid / TEACHER.name)
        shutil.copy(values, grading / sid / values.name)
        (tmp_path / "submitted" / sid / NAME).mkdir(parents=True)
    (grading / TEACHER.name).unlink()
    values.unlink()
    return grading, tmp_path / "submitted", nbformat.read(student / TEACHER.name, 4)


def test_hostile_files_cost_only_their_own_row(tmp_path):
    """Whatever lies at ``ID/NAME/NAME.ipynb`` is read through the one gate: a FIFO, a
    link to /dev/zero, a link (absolute or relative) or a hard link to the student's own
    grading version, a folder, a file too large, JSON nested 100,000 deep, a student
    folder that links to another's: each scores zero with a note, at once, and the run
    writes every roster row and ends with status 0."""
    attacks = ["fifo", "dev-zero", "link-abs", "link-rel", "hard-link", "folder", "huge",
               "deep-json", "linked-folder", "not-json"]
    grading, sub, _ = hostile_course(tmp_path, attacks)

    def place(sid):
        return sub / sid / NAME / TEACHER.name

    own = {sid: grading / sid / TEACHER.name for sid in attacks}
    os.mkfifo(place("fifo"))
    place("dev-zero").symlink_to("/dev/zero")
    place("link-abs").symlink_to(own["link-abs"])
    place("link-rel").symlink_to(os.path.relpath(own["link-rel"], place("link-rel").parent))
    os.link(own["hard-link"], place("hard-link"))
    place("folder").mkdir()
    with open(place("huge"), "wb") as f:
        f.truncate(64 << 30)  # sparse
    place("deep-json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    shutil.rmtree(sub / "linked-folder")
    (sub / "linked-folder").symlink_to(tmp_path / "grading" / "link-abs", target_is_directory=True)
    place("not-json").write_text("{ not json")
    out = tmp_path / "grades.csv"
    run = subprocess.run([sys.executable, "-m", "booktools", "autograde", str(grading),
                          str(sub), "--notebooks", NAME, "--out", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    totals = {r["student"]: (r["score"], r["note"]) for r in rows if r["cell"] == "total"}
    assert sorted(totals) == sorted(attacks)
    notes = {sid: note for sid, (score, note) in totals.items() if score == "0.0"}
    assert sorted(notes) == sorted(attacks), totals
    assert "symbolic link" in notes["dev-zero"] and "symbolic link" in notes["link-rel"]
    assert notes["link-abs"] == notes["dev-zero"]
    assert notes["fifo"].startswith("a FIFO") and notes["folder"].startswith("a folder")
    assert "hard link" in notes["hard-link"] and notes["huge"].startswith("larger than")
    assert "nested deeper" in notes["deep-json"] and "not valid JSON" in notes["not-json"]
    assert notes["linked-folder"].startswith("not read") or "symbolic link" in notes[
        "linked-folder"]
    assert len(rows) == 5 * len(attacks)  # four graded cells and the total, each


def metadata_attacks(nb):
    """Submissions whose nbgrader metadata is not the grading version's."""
    import copy

    def edited(change):
        out = copy.deepcopy(nb)
        change(out)
        return out

    def test_cell(out):
        return next(c for c in out.cells if c.metadata.get("nbgrader", {}).get("grade")
                    and c.cell_type == "code")

    def duplicate(out):
        test_cell(out).metadata.nbgrader["grade_id"] = "perceptron_step"

    def not_graded(out):
        test_cell(out).metadata.nbgrader.update(grade=False, points=100)

    def inserted(out):
        out.cells.insert(1, nbformat.v4.new_code_cell(
            "pass", metadata={"nbgrader": dict(test_cell(out).metadata.nbgrader)}))

    def unknown(out):
        out.cells.insert(1, nbformat.v4.new_code_cell("pass", metadata={"nbgrader": {
            "grade": True, "grade_id": "mine", "points": 50, "locked": True,
            "solution": False, "schema_version": 3}}))

    def retyped(out):
        cell = next(c for c in out.cells if c.metadata.get("nbgrader", {}).get("solution")
                    and c.cell_type == "markdown")
        cell.cell_type = "raw"

    return {"duplicate-id": edited(duplicate), "grade-false": edited(not_graded),
            "inserted-id": edited(inserted), "unknown-id": edited(unknown),
            "retyped": edited(retyped)}


def test_changed_grading_metadata_is_a_zero_not_a_manual_grade(tmp_path):
    """A duplicate ``grade_id``, a test cell set to ``grade: false`` with 100 points, a
    cell inserted with a test cell's id or with an id of its own, a written answer made a
    raw cell: nbgrader would fail (or grade what the student chose), so each is a zero
    with a note before nbgrader runs, never "not graded"."""
    ids = ["duplicate-id", "grade-false", "inserted-id", "unknown-id", "retyped"]
    grading, sub, student = hostile_course(tmp_path, ids)
    for sid, nb in metadata_attacks(student).items():
        nbformat.write(nb, sub / sid / NAME / TEACHER.name)
    rows, problems = autograde(grading, sub, notebooks=[NAME])
    notes = {r["student"]: (r["score"], r["note"]) for r in rows if r["cell"] == "total"}
    assert sorted(notes) == sorted(ids)
    for sid, (score, note) in notes.items():
        assert score == 0.0 and note.startswith("not gradable: "), (sid, note)
    assert "more than one cell" in notes["duplicate-id"][1]
    assert "differs from the grading version" in notes["grade-false"][1]
    assert "no cell of the grading version" in notes["unknown-id"][1]


def test_an_nbgrader_failure_is_a_zero_with_a_note(course, monkeypatch):
    """nbgrader fails on s01's submission, the worker grading s02 dies: each scores zero
    with a note that says which; only an assignment nbgrader cannot make from the
    grading version leaves a student without a score."""
    import importlib

    ag = importlib.import_module("booktools.homework.autograde")
    for sid in ("s01", "s02"):
        target = course["submitted"] / sid / NAME / TEACHER.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(course["student"] / TEACHER.name, target)

    class Workers(contextlib.nullcontext):
        def __init__(self, root, jobs, *args):
            super().__init__(self)
            for k, todo in jobs:
                if todo[NAME] == ["s01"]:  # s02's course has no results: its worker died
                    (Path(root) / str(k) / ag.RESULTS).write_text(json.dumps({NAME: {
                        "generate_assignment": None, "autograde": {"s01": "    boom"},
                        "kernel_failed": []}}))

        def wait(self, k):
            pass

    monkeypatch.setattr(ag, "_Workers", Workers)
    monkeypatch.setattr(ag, "_read_scores", lambda course, name, sids, *a, **k:
                        dict.fromkeys(sids))
    rows, problems = autograde(course["grading"], course["submitted"], sandbox=False)
    assert totals(rows) == {("s01", NAME): (0.0, 3.0, ag.NBGRADER_FAILED),
                            ("s02", NAME): (0.0, 3.0, ag.WORKER_DIED)}
    assert any("boom" in p for p in problems)


@pytest.mark.parametrize("sid", ["..", ".", ".hidden", "-rf", "a" * 300, "a/b", "", "é"])
def test_unsafe_student_ids_are_refused(course, tmp_path, sid):
    """A student id names folders: only letters, digits, '.', '_' and '-', not starting
    with '.' or '-', at most 64 characters; anything else is refused in one line, from a
    roster or from the caller."""
    roster = tmp_path / "roster.csv"
    roster.write_text(f"id\ns01\n{sid}\n" if sid else "id\ns01\n\"\"\n")
    if sid:
        with pytest.raises(ValueError, match="student id") as caught:
            hw.read_roster(roster)
        assert "\n" not in str(caught.value)
    with pytest.raises(ValueError, match="student id"):
        autograde(course["grading"], course["submitted"], students=["s01", sid])
    with pytest.raises(ValueError, match="student id"):
        hw.derive_seed("5b1f0c9e83d2a7461e9f03c2b8d57a6e0f4c1b9a2d8e7f3065a4c3b2e1d0f9a8",
                       "homework1", sid)


def test_submission_folders_with_unsafe_names_cost_only_themselves(tmp_path):
    """In a course variant the students are the folders of the submissions, names that
    come from outside: one named ``-rf`` or of 200 characters is reported and not graded,
    and the others are."""
    grading, student = tmp_path / "grading", tmp_path / "student"
    hw.release(TEACHER, student, grading=grading)
    sub = tmp_path / "submitted"
    for sid in ("-rf", "a" * 200, "s01"):
        (sub / sid / NAME).mkdir(parents=True)
        (sub / sid / NAME / TEACHER.name).write_text("{ not json")
    rows, problems = autograde(grading, sub, notebooks=[NAME])
    assert {r["student"] for r in rows} == {"s01"}
    assert sum("is not a safe student id, not graded" in p for p in problems) == 2
