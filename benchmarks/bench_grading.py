"""Grading a class: ``booktools autograde`` against plain ``nbgrader autograde``.

Thirty students submit homework 4 (the teacher's solution). nbgrader grades them as
it does out of the box: one course, one source notebook, one kernel after another.
``python -m booktools autograde`` grades the same thirty submissions each against its
own student's variant (a per-student release): one course per student, every kernel in
its own sandbox, students in parallel across the cores. Both sides include their
start-up; the release and nbgrader's ``generate_assignment`` are set-up, not timed.
"""

import atexit
import csv
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from booktools import homework as hw

from ._harness import Case

ROOT = Path(__file__).resolve().parents[1]
HOMEWORK = ROOT / "book" / "homework" / "homework4.ipynb"
STUDENTS = [f"s{k:02d}" for k in range(1, 31)]
SECRET = "5d1f3b7a9c2e4d6f8a0b1c3e5f7a9b2d4c6e8f0a1b3d5c7e9f2a4b6c8d0e1f3a"  # not a real one
BIN = Path(sys.executable).parent


def _run(args, cwd):
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stdout[-2000:] + done.stderr[-2000:])
    return done


def _class(tmp):
    """Lay out both sides; return (ours, plain) callables and the number of rows."""
    name = HOMEWORK.stem
    roster = tmp / "roster.csv"
    roster.write_text("id,name\n" + "".join(f"{s},{s}\n" for s in STUDENTS))
    hw.release(HOMEWORK, tmp / "student", grading=tmp / "grading", seed=SECRET,
               students=hw.read_roster(roster))
    hw.release(HOMEWORK, tmp / "course-student", grading=tmp / "course-grading")
    teacher = nbformat.read(HOMEWORK, 4)
    answers = {c.metadata.nbgrader["grade_id"]: c.source for c in teacher.cells
               if hw.is_solution_cell(c)}
    course = tmp / "course"
    (course / "source" / name).mkdir(parents=True)
    shutil.copy(tmp / "course-grading" / HOMEWORK.name, course / "source" / name)
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\n")
    for sid in STUDENTS:
        nb = nbformat.read(tmp / "student" / sid / HOMEWORK.name, 4)
        for cell in nb.cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            cell.source = answers.get(gid, cell.source)
        for where in (tmp / "submitted", course / "submitted"):
            (where / sid / name).mkdir(parents=True)
            nbformat.write(nb, where / sid / name / HOMEWORK.name)
    _run([str(BIN / "nbgrader"), "generate_assignment", name, "--force"], course)

    def ours():
        _run([sys.executable, "-m", "booktools", "autograde", str(tmp / "grading"),
              str(tmp / "submitted"), "--students", str(roster),
              "--out", str(tmp / "grades.csv")], tmp)
        with open(tmp / "grades.csv", newline="") as f:
            totals = [r for r in csv.DictReader(f) if r["cell"] == "total"]
        return sum(r["score"] == r["max_score"] != "" for r in totals)  # full marks

    def plain():
        _run([str(BIN / "nbgrader"), "autograde", name, "--force", "--create"], course)
        return len(list((course / "autograded").glob(f"*/{name}/{name}.ipynb")))

    return ours, plain


def cases():
    tmp = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    ours, plain = _class(tmp)
    return [Case(
        task=f"autograde {len(STUDENTS)} students, {HOMEWORK.stem} (sandboxed, per student) "
             "vs nbgrader autograde",
        lincls=ours, sklearn=plain, target=1.0, repeats=1, warmup=False,
        check=lambda a, b: f"{a} full marks / {b} graded",
    )]
