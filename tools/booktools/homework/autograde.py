"""Grading each submission against its own variant, with nbgrader: ``autograde``.

Defined in chapter "For teachers" (``book/teachers.md``).

nbgrader grades an assignment against one source notebook. ``release --seed
--secret-file FILE --students roster.csv --grading grading`` (the course secret comes
from a file or ``$BOOKTOOLS_COURSE_SECRET``, never the command line) gives every student
a variant of their own, in ``grading/ID/NAME.ipynb``, so :func:`autograde` makes one
temporary nbgrader course per grading version: its ``source/NAME/`` holds that version
with its solution regions emptied (nbgrader needs the tests, not the answers) and the
variant's self-check registry, its ``submitted/ID/NAME/`` the submissions graded against
it. In each course nbgrader's own ``generate_assignment`` and ``autograde`` run as they
would in the teacher's, with the per-cell time limit ``Execute.timeout``, through
nbgrader's Python API in worker processes (``workers``, one per core by default: each
pays nbgrader's imports once and grades its share of the courses; its log and its
kernels' output stay out of the caller's, and :data:`GRADING_ENV` set so that
``expected`` publishes the values it compares); the scores are read from each course's
gradebook, in roster order, a test cell keeps its score only if the values its hidden
tests published match the teacher's (:mod:`booktools.homework.scoring`; the values file
beside the grading version never enters a course), and the courses are deleted. A
course variant (``release --seed`` without ``--students``, or no seed) is one grading
version for everybody: one course.

nbgrader itself runs outside any sandbox; only the kernel that runs a submission goes
into one (:mod:`.sandbox`, bubblewrap): it sees a private copy of the files nbgrader put
beside the submission (the variant's registry), the Python environment read-only and
nothing else: not the gradebook, the course, the grading versions, the other students,
the teacher's files or environment, nor the network, under limits on CPU time, memory,
processes, file size and output. Without bubblewrap, autograde refuses, unless
``sandbox=False`` (``--no-sandbox``), which says so on stderr and in the grades' first
row.

Every file a student supplies is opened through one gate
(:mod:`booktools.homework.untrusted`): the submission must be a regular file with a
single name at ``ID/NAME/NAME.ipynb``, no folder on the way a symbolic link, at most
:data:`MAX_SUBMISSION` bytes, and it is parsed and validated in a separate process under
limits on memory, time and nesting; its nbgrader metadata must be the grading
version's (a student may not change what nbgrader grades, nor make nbgrader fail on a
duplicate ``grade_id``). Anything else is that student's zero, with a note. What the
gate read, and only that (re-written as the notebook it validated), goes into the
course, never another file of the student's folder: the variant's own registry comes
from the grading folder, as nbgrader's autograde would overwrite it anyway. Nothing of a
grading version leaves the temporary course: the grades are one row of scores per
student, notebook and graded cell, with notes in words of our own. nbgrader's messages,
which can quote hidden tests, only reach the teacher's list of problems.

A student costs only their own rows: a missing, unreadable or wrong submission, one
that nbgrader fails on, whose kernel dies, or during which the nbgrader worker dies,
scores zero with a note saying which; a student not in the roster, a stray file or a
notebook elsewhere is a line of the problems. Each notebook runs at most
``notebook_timeout`` seconds in all (:data:`NOTEBOOK_TIMEOUT`), each cell at most
``timeout``. Every roster row is written (as each course finishes, with ``out``); only a
student without a grading version, or whose grading version nbgrader cannot make an
assignment of (the teacher's file, not the student's), has no score ("not graded"), and
the teacher's list of problems says what nbgrader reported. Student ids name folders:
each must be a safe name (:func:`booktools.homework.variants.check_student_id`).
"""

from __future__ import annotations

import collections
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from lincls.homework.answers import GRADING_ENV

from ..kernels import IOPUB_TIMEOUT, STARTUP_TIMEOUT
from .grading import read_values, values_path
from .notebook import (
    BEGIN_SOLUTION,
    CODE_STUB,
    TEXT_STUB,
    HomeworkError,
    MalformedHomework,
    _read,
    _regions,
    _source_lines,
    is_grade_cell,
    is_solution_cell,
)
from .scoring import cell_tolerances, confirm
from .untrusted import Untrusted, read_notebook
from .variants import ANSWERS_SUFFIX, SECRET_ENV, STUDENT_ID, check_student_id

#: Columns of the grades file, one row per student, notebook and graded cell, and a
#: row ``total`` (the autograded cells) per student and notebook.
COLUMNS = ("student", "notebook", "cell", "score", "max_score", "note")
#: Seconds a cell may run before nbgrader stops it (nbgrader's own default is 30).
TIMEOUT = 900
#: Seconds a whole notebook may run (its cells in all); past them, the cells left are not
#: run and score nothing.
NOTEBOOK_TIMEOUT = 1800
NO_SUBMISSION = "no submission"
#: Bytes a submitted notebook may have: a larger one is not read (a zero, with a note).
MAX_SUBMISSION = 64 << 20
BY_HAND = "graded by hand"
NOT_GRADED = ("not graded: nbgrader could not make the assignment from the grading "
              "version (see its messages)")
NBGRADER_FAILED = ("scored zero: nbgrader could not grade this submission (its messages "
                   "are in the list of problems)")
WORKER_DIED = ("scored zero: the grading process died while it graded this submission "
               "(see the list of problems)")
UNREADABLE_GRADES = ("scored zero: its grades could not be read from nbgrader's "
                     "gradebook (see the list of problems)")
KERNEL_FAILED = ("scored zero: the submission's kernel died or did not answer an "
                 "interrupt (a limit of the sandbox)")
#: What nbclient raises when the kernel of a submission dies or does not answer an
#: interrupt: the submission's doing, so it scores zero (nbgrader gives up on the notebook;
#: a cell that only runs out of time or output gets an error output and grading goes on).
KERNEL_ERRORS = ("CellTimeoutError", "DeadKernelError", "UnresponsiveKernelError")
#: The note of the first row of grades given without the sandbox.
NO_SANDBOX = ("--no-sandbox: the submissions ran without the sandbox, with the rights "
              "of the teacher's account")
#: What autograde says on stderr when a sandbox's control group holds less than
#: sandbox.GROUP_LIMITS: {names held: the line}.
GROUP_WARNINGS = {
    frozenset(): ("the sandboxes are not control groups here (not root, or no cgroup "
                  "memory and pids controllers to write to): nothing caps the memory and "
                  "the CPU of a submission's processes in all; --workers 1 grades one "
                  "kernel at a time"),
    frozenset({"memory", "pids"}): (
        "the sandboxes' control groups have no CPU quota here (no cpu controller, or a "
        "parent group's quota below it): a submission that spins on every core can slow "
        "a classmate's kernel graded beside it; --workers 1 grades one kernel at a time"),
}


def cores():
    """The cores this process may run on (its CPU affinity; a container's CPU quota is
    not counted)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _check_sandbox():
    """Stops with one line saying how to install bubblewrap where it is missing; says on
    stderr what a sandbox's control group cannot hold here (:data:`GROUP_WARNINGS`)."""
    from . import sandbox

    sandbox.find_bwrap()
    held = frozenset(sandbox.group_limits())
    if held in GROUP_WARNINGS:
        print(f"autograde: {GROUP_WARNINGS[held]}", file=sys.stderr)


def autograde(grading, submitted, students=None, notebooks=None, out=None,
              timeout=TIMEOUT, echo=None, sandbox=True, workers=None,
              notebook_timeout=NOTEBOOK_TIMEOUT, feedback=None):
    """Grade every submission with nbgrader against its student's grading version.

    Parameters
    ----------
    grading : path-like
        The grading versions a release wrote (``release --grading``): either
        ``NAME.ipynb`` files, one version for the whole course, or one folder per
        student, ``ID/NAME.ipynb`` (``release --students``).
    submitted : path-like
        The submissions in nbgrader's layout, ``ID/NAME/NAME.ipynb`` (what ``nbgrader
        collect`` writes).
    students : list of str, optional
        The roster: every student in it gets a row per notebook, a zero where nothing
        was submitted. By default the students of the grading folders (one variant per
        student) or the folders of ``submitted`` (a course variant).
    notebooks : list of str, optional
        The notebooks to grade (names without ``.ipynb``). By default those that at
        least one student submitted.
    out : path-like, optional
        A CSV file of the rows (columns :data:`COLUMNS`), written as grading proceeds.
    timeout : int
        Seconds each cell may run (nbgrader's ``Execute.timeout``).
    notebook_timeout : int
        Seconds each submission may run in all; the cells left then are not run (an
        error output each), and a note says so.
    echo : callable, optional
        Called with one line per student and notebook graded (progress).
    sandbox : bool
        Run every submission's kernel in a sandbox of its own (:mod:`.sandbox`; needs
        bubblewrap, else :class:`ValueError`). False (``--no-sandbox``) runs the
        students' code with the teacher's rights: a line on stderr says so on every
        run, and the grades start with a row whose note says so
        (:data:`NO_SANDBOX`).
    workers : int, optional
        How many nbgrader processes grade side by side, each its own courses
        (default: one per core this process may run on, :func:`cores`).
    feedback : path-like, optional
        A folder for each student's feedback, ``ID/NAME.html`` and ``ID/NAME.md``
        (:mod:`.feedback`: points, visible failures and answers, no hidden test).

    Returns
    -------
    rows : list of dict
        One per student, notebook and graded cell, then one ``total`` row (the sum over
        the autograded cells; the cells graded by hand have no score, unless nbgrader
        gave an unanswered one zero), keys :data:`COLUMNS`. A submission that cannot be
        graded scores zero, and the note says why; a score is ``None`` only for a
        student without a grading version, or one nbgrader could not make an assignment
        of.
    problems : list of str
        What was ignored or failed (stray files, students not in the roster, nbgrader
        errors), one line each.

    Examples
    --------
    A grading version and a roster, but nothing submitted yet (nbgrader is not needed
    to give zeros):

    >>> import tempfile, nbformat
    >>> from nbformat.v4 import new_code_cell, new_notebook
    >>> tmp = Path(tempfile.mkdtemp())
    >>> def meta(grade_id, **kw):
    ...     return {"nbgrader": {"grade_id": grade_id, "grade": False, "solution": False,
    ...                          "locked": False, "schema_version": 3, **kw}}
    >>> nb = new_notebook(cells=[
    ...     new_code_cell("### BEGIN SOLUTION\\nx = 1\\n### END SOLUTION",
    ...                   metadata=meta("q1", solution=True)),
    ...     new_code_cell("assert x == 1", metadata=meta("q1-test", grade=True, points=2,
    ...                                                   locked=True))])
    >>> (tmp / "grading" / "s01").mkdir(parents=True)
    >>> nbformat.write(nb, tmp / "grading" / "s01" / "hw1.ipynb")
    >>> _ = (tmp / "grading" / "s01" / "hw1.expected.json").write_text(
    ...     '{"format": 1, "values": {}}')  # the teacher's values (none here)
    >>> (tmp / "submitted").mkdir()
    >>> rows, problems = autograde(tmp / "grading", tmp / "submitted", notebooks=["hw1"])
    >>> [(r["student"], r["cell"], r["score"], r["max_score"], r["note"]) for r in rows]
    [('s01', 'q1-test', 0.0, 2.0, 'no submission'), ('s01', 'total', 0.0, 2.0, 'no submission')]
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError(f"workers must be a whole number >= 1, not {workers!r}")
    versions = _grading_versions(grading)
    submitted = Path(submitted)
    if not submitted.is_dir():
        raise FileNotFoundError(f"{submitted}: no such directory (the submissions, "
                                "in nbgrader's layout ID/NAME/NAME.ipynb)")
    per_student = None not in versions
    if students is None and not per_student:  # the folders of the submissions: data
        students = [d.name for d in sorted(submitted.iterdir())
                    if d.is_dir() and not d.is_symlink() and STUDENT_ID.fullmatch(d.name)]
    elif students is None:
        students = sorted(versions)
    students = list(dict.fromkeys(students))
    for sid in students:  # the teacher's roster, or the release's folders
        check_student_id(sid)
    released = sorted({name for names in versions.values() for name in names})
    found, problems = _find_submissions(submitted, students, released)  # says "unsafe"
    if notebooks is None:
        notebooks = sorted({name for (_, name) in found})
        if not notebooks:
            problems.append(f"{submitted}: no submission of any notebook of {grading}")
    else:
        notebooks = [Path(n).stem for n in notebooks]
        unknown = [n for n in notebooks if n not in released]
        if unknown:
            raise ValueError(f"{grading} has no grading version of {', '.join(unknown)} "
                             f"(it has {', '.join(released)})")

    # one course per grading version: each student alone, or everybody together
    groups = ([(sid, [sid]) for sid in students] if per_student
              else [(None, students)])
    with tempfile.TemporaryDirectory(prefix="lincls-autograde-") as tmp:
        tmp = Path(tmp)
        gated = _gate(found, versions, per_student, notebooks, submitted, tmp / "read",
                      workers)
        plans = []
        for key, members in groups:
            version = versions.get(key, {})
            plans.append((members, version, Path(grading) / (key or ""),
                          *_plan(version, members, notebooks, found, problems, gated)))
        rows = []
        if not sandbox:
            print(f"autograde: {NO_SANDBOX}", file=sys.stderr)
            rows.append(_row("", "", "", None, None, NO_SANDBOX))
        elif any(todo for *_, todo in plans):
            _check_sandbox()
        writer = _Writer(out)
        writer.write(rows)
        try:
            jobs = [(k, _course(tmp / str(k), version, todo))
                    for k, (_, version, _, _, todo) in enumerate(plans) if todo]
            log = collections.deque(maxlen=20)
            with _Workers(tmp, jobs, timeout, log, sandbox, workers,
                          notebook_timeout) as finished:
                _emit(plans, notebooks, finished, tmp, log, problems, rows, writer, echo,
                      feedback)
        finally:
            writer.close()
    return rows, problems


def _emit(plans, notebooks, finished, tmp, log, problems, rows, writer, echo,
          feedback=None):
    """The rows of every student, in roster order, as the workers finish each course."""
    for k, (members, version, where, graded, todo) in enumerate(plans):
        if todo:
            finished.wait(k)
            try:
                _collect(tmp / str(k), version, todo, graded, log, problems)
            except Exception as exc:  # e.g. a gradebook a submission broke: its own
                problems.append(f"the grades of {', '.join(members)} could not be read "
                                f"from nbgrader's gradebook: {type(exc).__name__}: {exc}")
                for name, subs in todo.items():
                    for sid, _ in subs:
                        if graded[sid, name][1][0] is None:
                            graded[sid, name] = graded[sid, name][0], ({}, UNREADABLE_GRADES)
        for sid in members:
            for name in notebooks:
                if name in version:
                    cells, outcome = graded[sid, name]
                    new = _rows(sid, name, cells, *outcome)
                else:
                    new = _rows(sid, name, None, None, f"not graded: {where} has no "
                                f"grading version of {name} for this student")
                rows += new
                writer.write(new)
                if feedback is not None and name in version:
                    graded_here = any(s == sid for s, _ in todo.get(name, []))
                    _feedback(feedback, sid, name, new, version[name],
                              tmp / str(k) if graded_here else None, problems)
                if echo is not None:
                    echo(_summary(new[-1]))


def _feedback(folder, sid, name, rows, grading, course, problems):
    """One student's feedback pages (:func:`.feedback.write_feedback`); a failure is a
    line of the problems, never the run's."""
    from .feedback import write_feedback

    try:
        write_feedback(folder, sid, name, rows, grading, course)
    except Exception as exc:  # noqa: BLE001 (one student's page: their line)
        problems.append(f"the feedback of {sid} {name} could not be written: "
                        f"{type(exc).__name__}")


# ---------------------------------------------------------------------------------
# What there is to grade
# ---------------------------------------------------------------------------------
def _grading_versions(grading):
    """``{student id or None: {name: path}}`` of the grading versions in ``grading``."""

    grading = Path(grading)
    if not grading.is_dir():
        raise FileNotFoundError(f"{grading}: no such directory (the --grading folder of "
                                "a release)")
    course = {p.stem: p for p in sorted(grading.glob("*.ipynb"))}
    own = {d.name: {p.stem: p for p in sorted(d.glob("*.ipynb"))}
           for d in sorted(grading.iterdir()) if d.is_dir() and not d.name.startswith(".")}
    own = {sid: names for sid, names in own.items() if names}
    if course and own:
        raise ValueError(f"{grading}: holds both grading versions (NAME.ipynb) and student "
                         f"folders ({', '.join(own)}); grade one release at a time")
    if not course and not own:
        raise ValueError(f"{grading}: no grading version (NAME.ipynb or ID/NAME.ipynb); "
                         "write them with release --grading")
    versions = own or {None: course}
    errors = []
    for names in versions.values():
        for path in names.values():
            try:
                _check_grading_version(_read(path, one_name=False), path)
            except HomeworkError as exc:
                errors.append(exc)
    if errors:
        raise MalformedHomework(errors)
    return versions


def _check_grading_version(nb, path):
    """A grading version holds the solutions, and beside it the file of the teacher's
    values of its ``expected`` calls: refuse a student version or a teacher notebook."""

    if not _grade_cells(nb):
        raise HomeworkError(path, "has no graded cell (nbgrader metadata 'grade')")
    if not any(BEGIN_SOLUTION in cell.source for cell in nb.cells):
        raise HomeworkError(path, "is a student version (no solution in it); grade against "
                                  "the grading versions that release --grading writes")
    values = values_path(path)
    if not values.is_file():
        raise HomeworkError(path, f"is a teacher notebook (no {values.name} of the "
                                  "teacher's values beside it); grade against the grading "
                                  "versions that release --grading writes")
    try:
        tolerances = cell_tolerances(nb)
        recorded = read_values(values)
    except ValueError as exc:
        raise HomeworkError(path, f"{values.name}: {exc}") from exc
    missing = sorted({key for keys in tolerances.values() for key in keys} - set(recorded))
    if missing:
        raise HomeworkError(path, f"{values.name} has no value of {', '.join(missing)}; "
                                  "release --grading again")


def _find_submissions(submitted, students, released):
    """``({(student, name): path}, problems)``: what lies at ``ID/NAME/NAME.ipynb`` for
    the students in the roster, whatever it is (the gate, :func:`_read_submission`,
    decides whether it is read); everything else is reported and ignored. No symbolic
    link is followed."""
    found, problems = {}, []
    roster = set(students)
    for entry in sorted(submitted.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.name in roster:
            for name in released:
                path = entry / name / f"{name}.ipynb"
                if _lexists(submitted, path):
                    found[entry.name, name] = path
        if entry.is_symlink() or not entry.is_dir():
            if entry.name not in roster:
                problems.append(f"{entry}: a stray file, ignored (submissions go in "
                                f"{submitted}/ID/NAME/NAME.ipynb)")
            continue
        if entry.name not in roster:
            why = ("is not in the roster" if STUDENT_ID.fullmatch(entry.name)
                   else "is not a safe student id")
            problems.append(f"{entry}: {entry.name} {why}, not graded")
            continue
        for path in sorted(entry.rglob("*.ipynb")):  # never into a linked folder
            rel = path.relative_to(entry)
            if any(part.startswith(".") for part in rel.parts):
                continue  # .ipynb_checkpoints and the like
            if (entry.name, rel.parts[0]) in found and len(rel.parts) == 2 \
                    and rel.parts[0] == path.stem:
                continue
            problems.append(f"{path}: not a notebook of the release at its place "
                            f"({entry.name}/NAME/NAME.ipynb), ignored")
    return found, problems


def _lexists(root, path):
    """True if something is at ``path`` under ``root``, or the way to it is blocked by
    something that is not a folder (a link, a file): the gate then says what."""
    here = Path(root)
    for part in path.relative_to(root).parts:
        here = here / part
        if not os.path.lexists(here):
            return False
        if here.is_symlink() or not here.is_dir():
            return True
    return True


def _grade_cells(nb):
    """``[(grade id, points, autograded)]`` of the graded cells, in notebook order:
    the test cells are autograded, answer cells with points are graded by hand."""

    return [(cell.metadata["nbgrader"]["grade_id"],
             float(cell.metadata["nbgrader"].get("points", 0)),
             cell.cell_type == "code" and not is_solution_cell(cell))
            for cell in nb.cells if is_grade_cell(cell)]


def _answer_ids(nb):

    return {cell.metadata["nbgrader"].get("grade_id") for cell in nb.cells
            if is_solution_cell(cell) or is_grade_cell(cell)}


#: nbgrader metadata a submission's cell may hold beyond the grading version's (nbgrader's
#: own release adds them).
FREE_NBGRADER_FIELDS = ("checksum", "cell_type")


def _nbgrader_fields(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    if not isinstance(meta, dict):
        return meta
    return {k: v for k, v in meta.items() if k not in FREE_NBGRADER_FIELDS}


def _changed_metadata(nb, grading_nb):
    """Why the nbgrader metadata of a submission differs from its grading version's
    (what nbgrader grades, and a cell type), or None. A cell may be missing; none may be
    added with nbgrader metadata, hold another's ``grade_id`` or change its fields."""
    release = {}
    for cell in grading_nb.cells:
        meta = _nbgrader_fields(cell)
        if isinstance(meta, dict) and "grade_id" in meta:
            release[meta["grade_id"]] = (cell.cell_type, meta)
    seen = set()
    for index, cell in enumerate(nb.cells, 1):
        if "nbgrader" not in cell.get("metadata", {}):
            continue
        meta = _nbgrader_fields(cell)
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if not isinstance(grade_id, str) or grade_id not in release:
            return (f"cell {index} has nbgrader metadata that no cell of the grading "
                    "version has")
        if grade_id in seen:
            return f"the nbgrader id {grade_id!r} is on more than one cell"
        seen.add(grade_id)
        if (cell.cell_type, meta) != release[grade_id]:
            return (f"the nbgrader metadata (or type) of cell {grade_id!r} differs from "
                    "the grading version's")
    return None


def _read_submission(path, grading_nb, name, submitted):
    """``(notebook, None)`` when nbgrader can grade the submission at ``path`` (read
    through the gate), else ``(None, why it gets a zero)``."""
    try:
        nb = read_notebook(path, MAX_SUBMISSION, root=submitted)
    except Untrusted as exc:
        return None, exc.note.replace("not readable: ", "not a readable notebook: ", 1)
    if not _answer_ids(nb) & _answer_ids(grading_nb):
        return None, f"not {name}: none of its answer or test cells (their nbgrader ids)"
    changed = _changed_metadata(nb, grading_nb)
    if changed:
        return None, f"not gradable: {changed}"
    return nb, None


# ---------------------------------------------------------------------------------
# Grading with nbgrader
# ---------------------------------------------------------------------------------
def _gate(found, versions, per_student, notebooks, submitted, stage, workers=None):
    """``{(student, name): (notebook file, None) or (None, why it scores zero)}`` for the
    submissions ``found`` of the ``notebooks`` that have a grading version: each read
    through the gate (:func:`_read_submission`, a process of its own, several side by
    side) and, if nbgrader can grade it, written again under ``stage``."""
    import concurrent.futures

    import nbformat

    def version(sid, name):
        return versions.get(sid if per_student else None, {}).get(name)

    def one(key):
        sid, name = key
        try:
            teacher = _read(version(sid, name), one_name=False)
            nb, wrong = _read_submission(found[key], teacher, name, submitted)
            if wrong:
                return key, (None, wrong)
            read = stage / sid / f"{name}.ipynb"
            read.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, read)
            return key, (read, None)
        except Exception as exc:  # noqa: BLE001 (one student's file: their zero)
            return key, (None, f"could not be read ({type(exc).__name__})")

    keys = [key for key in found if key[1] in notebooks and version(*key) is not None]
    if not keys:
        return {}
    threads = max(1, min(len(keys), workers or cores()))
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        return dict(pool.map(one, keys))


def _plan(version, members, notebooks, found, problems, gated):
    """``(graded, todo)`` for the students sharing one grading version ``version``
    (``{name: path}``): ``graded[student, name]`` is ``(cells, (scores, note))`` (see
    :func:`_rows`), final for a missing or wrong submission; ``todo[name]`` lists the
    ``(student, notebook)`` that nbgrader is to grade, each notebook the one the gate
    read (``gated``, of :func:`_gate`)."""
    graded, todo = {}, {}
    for name in notebooks:
        if name not in version:
            continue
        cells = _grade_cells(_read(version[name], one_name=False))
        for sid in members:
            path = found.get((sid, name))
            if path is None:
                graded[sid, name] = cells, ({}, NO_SUBMISSION)
                continue
            read, wrong = gated[sid, name]
            if wrong:
                graded[sid, name] = cells, ({}, wrong)
                problems.append(f"{path}: {wrong}; scored zero")
            else:
                graded[sid, name] = cells, (None, NOT_GRADED)  # until nbgrader has
                todo.setdefault(name, []).append((sid, read))
    return graded, todo


def _course(course, version, todo):
    """Lay out an nbgrader course: the grading versions without their solutions in
    ``source/NAME/`` (with the variant's registry), the submissions in
    ``submitted/ID/NAME/``. Returns the course's work, ``{name: [student, ...]}``."""
    import nbformat

    for name, subs in todo.items():
        source = course / "source" / name
        source.mkdir(parents=True)
        nbformat.write(_without_solutions(_read(version[name], one_name=False), version[name]),
                       source / f"{name}.ipynb")
        # the variant's registry and nothing else: nbgrader copies the source's files
        # into the kernel's folder (never the teacher's values, nor a stray file)
        registry = version[name].with_name(name + ANSWERS_SUFFIX)
        if registry.is_file():
            shutil.copy(registry, source / registry.name)
        for sid, path in subs:
            target = course / "submitted" / sid / name
            target.mkdir(parents=True)
            shutil.move(path, target / f"{name}.ipynb")  # what the gate read
    return {name: [sid for sid, _ in subs] for name, subs in todo.items()}


def _without_solutions(nb, path):
    """``nb`` with its solution regions emptied (their markers stay) and its solution
    cells without regions reduced to the stub: what nbgrader needs to grade, the
    tests, and none of the answers a student's code could read."""
    for index, cell in enumerate(nb.cells):
        lines = _source_lines(cell)
        regions = [(b, e) for kind, b, e in _regions(lines, path, index, cell.cell_type)
                   if kind == "solution"]
        if regions:
            keep = set(range(len(lines))) - {n for b, e in regions
                                             for n in range(b + 1, e)}
            cell.source = "\n".join(lines[n] for n in sorted(keep))
        elif is_solution_cell(cell):
            cell.source = "\n".join(CODE_STUB if cell.cell_type == "code"
                                     else [TEXT_STUB])
        if is_solution_cell(cell):
            cell.pop("attachments", None)
            if cell.cell_type == "code":
                cell.outputs = []
    return nb


def _collect(course, version, todo, graded, log, problems):
    """Read the scores of one course into ``graded``; report what nbgrader failed. A
    submission nbgrader could not grade, or whose worker died, scores zero with a note;
    only an assignment nbgrader could not make from the grading version is not graded."""
    found = course / RESULTS
    died = not found.exists()
    results = {} if died else json.loads(found.read_text(encoding="utf-8"))
    for name, subs in todo.items():
        sids = [sid for sid, _ in subs]
        notes, totals = {}, {}
        scores = _read_scores(course, name, sids, version[name], problems, notes=notes,
                              totals=totals)
        steps = results.get(name, {})
        failed = [sid for sid in sids if scores[sid] is None]
        if failed:
            why = steps.get("generate_assignment") or "".join(
                steps.get("autograde", {}).get(sid) or "" for sid in failed) or _tail(
                "\n".join(log))
            problems.append(f"nbgrader could not grade {name} of {', '.join(failed)} "
                            f"(grading version {version[name]}):\n{why}")
        for sid in sids:
            cells = graded[sid, name][0]
            if scores[sid] is not None:
                outcome = scores[sid], totals.get(sid), notes.get(sid)
            elif steps.get("generate_assignment"):
                outcome = None, NOT_GRADED
            elif sid in steps.get("kernel_failed", []):
                outcome = {}, KERNEL_FAILED
                problems.append(f"{name} of {sid}: {KERNEL_FAILED}")
            elif died or sid not in steps.get("autograde", {}):
                outcome = {}, WORKER_DIED
            else:
                outcome = {}, NBGRADER_FAILED
            graded[sid, name] = cells, outcome


def _require_nbgrader():
    import importlib.util

    if importlib.util.find_spec("nbgrader") is None:
        raise ValueError("autograde needs nbgrader in this environment "
                         "(requirements-dev.txt pins nbgrader==0.9.6)")


#: The file in which a worker leaves what failed in a course it graded.
RESULTS = "lincls-autograde.json"


class _Workers:
    """The nbgrader worker processes (:func:`_run_nbgrader`), each grading every
    ``workers``-th course of ``jobs`` (as root, its sandboxes have a uid of their own:
    :mod:`.sandbox`), their logs and their
    kernels' output kept out of ours (a worker pays nbgrader's imports once);
    ``log`` keeps the tail of their other output. :meth:`wait` returns once a course
    is done or cannot be. A worker that dies loses the course it was grading only: a
    new one takes the rest of its courses."""

    def __init__(self, root, jobs, timeout, log, sandbox, workers,
                 notebook_timeout=NOTEBOOK_TIMEOUT):
        self.root, self.timeout, self.log, self.sandbox = root, timeout, log, sandbox
        self.notebook_timeout = notebook_timeout
        self.done, self.lock = set(), threading.Condition()
        self.children, self.threads = [], []
        if not jobs:
            return
        _require_nbgrader()
        n = max(1, min(workers or cores(), len(jobs)))
        for slot in range(n):
            self._start(jobs[slot::n])

    def _start(self, jobs):
        # nbgrader's database migrations call alembic, installed beside this interpreter
        bin_dir = str(Path(sys.executable).parent)
        env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        env[GRADING_ENV] = "1"  # the kernels publish what expected() compares (scoring.py)
        env.pop(SECRET_ENV, None)  # grading needs no secret: --no-sandbox kernels inherit
        code = ("import sys; from booktools.homework.autograde import _run_nbgrader; "
                "_run_nbgrader(*sys.argv[1:])")
        # the worker names each course it has graded on a pipe of its own, which neither
        # its output nor its kernels (no fd passes on to them) can write into
        done_read, done_write = os.pipe()
        try:
            child = subprocess.Popen(
                [sys.executable, "-c", code, str(self.root), json.dumps(jobs),
                 str(int(self.timeout)), "sandbox" if self.sandbox else "", str(done_write),
                 str(int(self.notebook_timeout))],
                cwd=self.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, pass_fds=(done_write,))
        finally:
            os.close(done_write)
        self.children.append(child)
        for target, args in ((self._read, (jobs, child, done_read)), (self._drain, (child,))):
            thread = threading.Thread(target=target, args=args, daemon=True)
            self.threads.append(thread)
            thread.start()

    def _drain(self, child):
        for line in child.stdout:
            self.log.append(line.rstrip())

    def _read(self, jobs, child, done_read):
        ours = {job[0] for job in jobs}
        with open(done_read, encoding="utf-8", errors="replace") as done:
            for line in done:
                if line.strip().isdigit() and int(line) in ours:
                    with self.lock:
                        self.done.add(int(line))
                        self.lock.notify_all()
        child.wait()
        with self.lock:
            left = [job for job in jobs if job[0] not in self.done]
            if left:  # it died: its course is lost, the rest goes to a new worker
                self.log.append(f"an nbgrader worker died (exit status {child.returncode})")
                self.done.add(left[0][0])
                if left[1:] and not self.closed:
                    self._start(left[1:])
            self.lock.notify_all()

    closed = False

    def wait(self, k):
        with self.lock:
            self.lock.wait_for(lambda: k in self.done)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        with self.lock:
            self.closed = True
        for child in list(self.children):  # they end before the courses go
            if child.poll() is None:
                child.kill()
        for thread in list(self.threads):
            thread.join()
        for child in self.children:
            child.stdout.close()


def _tail(text, lines=20):
    return "\n".join("    " + line for line in text.strip().splitlines()[-lines:])


def _run_nbgrader(root, jobs, timeout, sandbox, done_fd, notebook_timeout=NOTEBOOK_TIMEOUT):
    """In a worker process: for each course of ``jobs`` (JSON ``[[index, {name:
    [student, ...]}], ...]``, the course in ``root/index``), nbgrader's
    ``generate_assignment`` of each notebook and its ``autograde`` of each student,
    through nbgrader's Python API, each kernel in a sandbox (none if ``sandbox`` is
    empty), each notebook within ``notebook_timeout`` seconds and the output caps of
    :func:`booktools.homework.sandbox.sandbox_execute`. Leaves ``{name:
    {"generate_assignment": log or None, "autograde": {student: log or None}}}`` (None
    where the step succeeded) in the course's :data:`RESULTS`, then writes the index
    on a line to the file descriptor ``done_fd``."""
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute
    from traitlets.config import Config

    def failure(result):
        return None if result["success"] else _tail(
            result.get("log", "") + "\n" + result.get("error", ""))

    def kernel_failed(result):
        text = result.get("log", "") + result.get("error", "")
        return not result["success"] and any(error in text for error in KERNEL_ERRORS)

    from .sandbox import sandbox_execute

    preprocessors = Autograde.class_traits()["autograde_preprocessors"].default()
    preprocessors = [sandbox_execute(bool(sandbox)) if p is Execute else p
                     for p in preprocessors]
    # an empty gradebook, made once (nbgrader asks alembic for its schema version)
    os.set_inheritable(int(done_fd), False)
    report = open(int(done_fd), "w", encoding="utf-8")  # noqa: SIM115 (open for the run)
    empty = Path(root) / f"gradebook-{os.getpid()}.db"
    with Gradebook(f"sqlite:///{empty}"):
        pass
    for index, todo in json.loads(jobs):
        course = Path(root) / str(index)
        shutil.copy(empty, course / "gradebook.db")
        config = Config()
        config.CourseDirectory.root = str(course)
        config.Execute.timeout = int(timeout)
        config.Execute.startup_timeout = STARTUP_TIMEOUT  # nbgrader's default: 60 s
        # a cell's output all in before the next cell runs: nbclient waits 4 s after the
        # reply by default, and a loaded machine could lose the values a test publishes
        config.Execute.iopub_timeout = min(int(timeout), IOPUB_TIMEOUT)
        config.Execute.notebook_timeout = int(notebook_timeout)
        config.Autograde.autograde_preprocessors = preprocessors
        api = NbGraderAPI(config=config)
        results = {}
        for name, sids in todo.items():
            made = failure(api.generate_assignment(name, force=True, create=True))
            graded = {sid: api.autograde(name, sid, force=True, create=True)
                      for sid in ([] if made else sids)}
            results[name] = {"generate_assignment": made,
                             "autograde": {sid: failure(r) for sid, r in graded.items()},
                             "kernel_failed": [sid for sid, r in graded.items()
                                               if kernel_failed(r)]}
        (course / RESULTS).write_text(json.dumps(results), encoding="utf-8")
        print(index, file=report, flush=True)


def _read_scores(course, name, sids, grading=None, problems=None, notes=None,
                 totals=None):
    """``{student: {grade id: auto score} or None}`` from the course's gradebook: None
    where nbgrader wrote no autograded notebook (it deletes a failed one).

    With ``grading`` (the grading version), a test cell keeps nbgrader's score only if
    the values its hidden tests published in the autograded notebook match the teacher's
    (:func:`booktools.homework.scoring.confirm`); else it scores zero, and a line of
    ``problems`` and ``notes[student][grade id]`` say so. ``totals[student]`` is the
    note of a notebook that ran past its time limit."""
    from nbgrader.api import Gradebook, MissingEntry

    from .sandbox import NOTEBOOK_TIME_LIMIT

    scores = dict.fromkeys(sids)
    if not (course / "gradebook.db").exists():
        return scores
    if grading is not None:
        tolerances = cell_tolerances(_read(grading, one_name=False))
        values = read_values(values_path(grading))
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for sid in sids:
            autograded = course / "autograded" / sid / name / f"{name}.ipynb"
            if not autograded.exists():
                continue
            try:
                nb = gb.find_submission_notebook(name, name, sid)
            except MissingEntry:
                continue
            scores[sid] = {g.name: g.auto_score for g in nb.grades}
            if grading is None:
                continue
            try:  # what the submission's kernel wrote: one student's failure is theirs
                executed = _read(autograded)
                verdicts = confirm(executed, tolerances, values)
            except (HomeworkError, RecursionError, MemoryError) as exc:
                executed = None
                verdicts = dict.fromkeys(scores[sid], "its executed notebook could not be "
                                         f"read ({type(exc).__name__})")
            if executed is not None and any(
                    output.get("ename") == NOTEBOOK_TIME_LIMIT
                    for cell in executed.cells for output in cell.get("outputs", [])):
                why = ("the notebook ran past its time limit: the cells after it were not "
                       "run and score nothing")
                if totals is not None:
                    totals[sid] = why
                if problems is not None:
                    problems.append(f"{sid} {name}: {why}")
            for grade_id, why in verdicts.items():
                if why and scores[sid].get(grade_id):
                    scores[sid][grade_id] = 0.0
                    why = f"no points although nbgrader passed it: {why}"
                    if notes is not None:
                        notes.setdefault(sid, {})[grade_id] = why
                    if problems is not None:
                        problems.append(f"{sid} {name} {grade_id}: {why}")
    return scores


# ---------------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------------
def _rows(sid, name, cells, scores, note, cell_notes=None):
    """The rows of one student and notebook. ``scores`` is ``{grade id: auto score}``
    from nbgrader, ``{}`` for a zero (``note`` says why), None if not graded;
    ``cell_notes`` the notes of single cells (``{grade id: note}``)."""
    rows, total, top, by_hand = [], 0.0, 0.0, 0.0
    for grade_id, points, auto in cells or []:
        cell_note = note
        if scores is None or not scores:
            score = None if scores is None else 0.0
        elif auto:
            score, cell_note = scores.get(grade_id), (cell_notes or {}).get(grade_id, note)
            if score is None:  # a test cell deleted from the submission
                score, cell_note = 0.0, "test cell missing from the submission"
        else:
            score = scores.get(grade_id)  # nbgrader gives an unanswered one zero
            cell_note = BY_HAND if score is None else "unanswered"
            by_hand += points if score is None else 0.0
        if auto:
            top += points
            total += score or 0.0
        rows.append(_row(sid, name, grade_id, score, points, cell_note))
    if by_hand:
        extra = f"autograded cells only; {by_hand:g} more points graded by hand"
        note = f"{note}; {extra}" if note else extra
    rows.append(_row(sid, name, "total", None if scores is None else total,
                     None if cells is None else top, note))
    return rows


def _row(sid, name, cell, score, max_score, note):
    return dict(zip(COLUMNS, (sid, name, cell, None if score is None else float(score),
                              max_score, note or ""), strict=True))


def _summary(total):
    if total["score"] is None:
        return f"{total['student']} {total['notebook']}: {total['note']}"
    note = f" ({total['note']})" if total["note"] else ""
    return (f"{total['student']} {total['notebook']}: "
            f"{total['score']:g} / {total['max_score']:g}{note}")


class _Writer:
    """The CSV file of the rows, flushed as each student's rows arrive."""

    def __init__(self, out):
        self.file = None
        if out is not None:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            self.file = open(out, "w", newline="", encoding="utf-8")
            self.csv = csv.DictWriter(self.file, fieldnames=COLUMNS)
            self.csv.writeheader()

    def write(self, rows):
        if self.file is not None:
            self.csv.writerows(rows)
            self.file.flush()

    def close(self):
        if self.file is not None:
            self.file.close()
