"""Student versions of teacher notebooks: ``release``, ``release_notebook``, ``rehearse``.

Defined in chapter "For teachers" (``book/teachers.md``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .grading import values_path
from .notebook import (
    CODE_STUB,
    TEXT_STUB,
    HomeworkError,
    KernelDied,
    MalformedHomework,
    _notebooks,
    _read,
    _regions,
    _source_lines,
    allowed_cell_metadata,
    allowed_notebook_metadata,
    exit_status,
    is_grade_cell,
    is_solution_cell,
    public_lines,
    solution_lines,
    student_cells,
)
from .untrusted import read_bytes
from .validation import _check_notebook

#: The largest self-check registry a release reads back (bytes).
MAX_REGISTRY = 16 << 20


def _student_source(cell, regions):
    """The student's source of one cell, given its (validated) marker regions."""
    lines = _source_lines(cell)
    stub = CODE_STUB if cell.cell_type == "code" else [TEXT_STUB]
    if not regions:
        if is_solution_cell(cell) and cell.cell_type in ("code", "markdown"):
            return "\n".join(stub)
        return "\n".join(lines)
    out, n = [], 0
    for kind, begin, end in regions:
        out.extend(lines[n:begin])
        if kind == "solution":
            indent = re.match(r"\s*", lines[begin]).group(0)
            out.extend(indent + s for s in stub)
        n = end + 1
    out.extend(lines[n:])
    return "\n".join(out)


def release_notebook(nb, path="<notebook>"):
    """Return the student version of a parsed teacher notebook (the input is unchanged).

    Raises :class:`MalformedHomework` if the notebook is malformed.
    """

    errors = _check_notebook(nb, path)
    if errors:
        raise MalformedHomework(errors)
    return _student_version(nb, path)


def _student_version(nb, path):
    """The student version of a notebook already validated.

    It is built anew from what a rule allows, not copied and pruned: the notebook's
    format numbers, its metadata of :func:`student_metadata`, and for each cell (code or
    markdown, but one tagged ``solution-only``) its type, its source with the regions
    replaced, its metadata of :func:`allowed_cell_metadata`, an id of
    :func:`student_cell_id` (from its position), and for code no outputs. No attachment
    passes (only an answer cell may have one, and the answer goes).
    """
    import nbformat

    cells, ids = [], set()
    for cell in student_cells(nb):
        regions = _regions(_source_lines(cell), path, None, cell.cell_type)
        new = {"cell_type": cell.cell_type,
               "metadata": allowed_cell_metadata(json.loads(json.dumps(cell.metadata))),
               "source": _student_source(cell, regions)}
        if "id" in cell:
            new["id"] = student_cell_id(len(cells), ids)
        if cell.cell_type == "code":
            new.update(outputs=[], execution_count=None)
        cells.append(new)
    return nbformat.from_dict({"nbformat": nb.nbformat, "nbformat_minor": nb.nbformat_minor,
                               "metadata": student_metadata(nb.metadata), "cells": cells})


def student_cell_id(position, taken):
    """The id of the cell at ``position`` in a student version: eight hexadecimal digits
    derived from the position alone (so releasing twice gives the same ids), nothing of
    the teacher's id (a text, or a hash of one, could carry an answer); ``taken`` (a
    set) receives it."""
    import hashlib

    for salt in itertools.count():
        new = hashlib.sha256(f"cell {position}\0{salt}".encode()).hexdigest()[:8]
        if new not in taken:
            taken.add(new)
            return new
    raise AssertionError("unreachable")


#: What the kernel and language fields of a student version may hold: a Python kernel's
#: values, each from a short list (any other value is dropped, so these fields carry no
#: text of the teacher's).
_PYTHON_FIELDS = {
    "name": re.compile(r"python(3(\.\d{1,2})?)?"), "language": re.compile(r"python"),
    "version": re.compile(r"\d{1,2}\.\d{1,3}(\.\d{1,3})?"),
    "mimetype": re.compile(r"text/x-python"), "file_extension": re.compile(r"\.py"),
    "pygments_lexer": re.compile(r"i?python3?"), "nbconvert_exporter": re.compile(r"python"),
    "codemirror_mode": re.compile(r"i?python"),
}
#: A kernel's ``display_name`` passes as it is if it is one of Python's; otherwise the
#: student version says ``Python 3``.
_DISPLAY_NAME = re.compile(r"Python 3(\.\d{1,2})?( \(ipykernel\))?")


def student_metadata(meta):
    """The notebook metadata of a student version: :func:`allowed_notebook_metadata`,
    with each field of ``kernelspec`` and ``language_info`` one of a Python kernel's
    values (:data:`_PYTHON_FIELDS`) or dropped, and ``display_name`` Python's."""
    out = allowed_notebook_metadata(json.loads(json.dumps(meta)))
    for block in ("kernelspec", "language_info"):
        fields = out.pop(block, None)
        if not fields:
            continue
        kept = {}
        for key, value in fields.items():
            if isinstance(value, dict):  # codemirror_mode {"name": ..., "version": ...}
                if _PYTHON_FIELDS[key].fullmatch(value.get("name", "")):
                    kept[key] = value
            elif key in _PYTHON_FIELDS and _PYTHON_FIELDS[key].fullmatch(value):
                kept[key] = value
        kept.setdefault("name", "python3" if block == "kernelspec" else "python")
        if block == "kernelspec":
            shown = fields.get("display_name", "")
            kept["display_name"] = shown if _DISPLAY_NAME.fullmatch(shown) else "Python 3"
        out[block] = kept
    return out


def release(src, out, grading=None, seed=None, students=None, costs=None):
    """Write student versions of the teacher notebooks in ``src`` to ``out``, atomically.

    Every notebook is read and validated first; if any is malformed, a
    :class:`MalformedHomework` listing every problem is raised and nothing is written.
    The student versions are written into a temporary folder beside ``out``, which then
    replaces ``out`` as a whole: a failure at any point leaves ``out`` as it was, and a
    release never leaves stale files of an earlier one. Before anything is moved into
    place, the student files are searched for the lines of the solutions and hidden
    tests (:func:`leaked_lines`); one found refuses the release. The output is a pure
    function of the input (and of ``seed``), so releasing twice gives byte-identical
    files.

    Parameters
    ----------
    src : path-like
        A teacher notebook, or a directory searched recursively for ``*.ipynb``.
    out : path-like
        Output directory; notebooks keep their path relative to ``src``. It must not
        hold ``src``.
    grading : path-like, optional
        Also write the *grading* versions there (the source for ``nbgrader
        generate_assignment`` and ``autograde``): each teacher notebook is executed, and
        the value the teacher's solution gives every ``expected("key", ...)`` of its
        hidden tests is written to ``NAME.expected.json`` beside its grading version,
        which keeps the calls (see :mod:`booktools.homework.grading`). A value that a
        self-check protects is refused.
    seed : str, optional
        The course secret (see :func:`booktools.homework.variants.read_secret`; a weak
        one is refused). Each notebook then becomes the course's variant (see
        :mod:`booktools.homework.variants`): its parameters cell holds a seed derived from
        the secret, and its self-check registry (``NAME.answers.json``, beside the
        notebook, in ``out`` and ``grading``) and the grading version's expected values
        are computed by running the teacher's solution with that seed.
    students : list of str, optional
        Student ids (with ``seed``): one variant per student, in ``out/ID/`` (and
        ``grading/ID/``), each with a seed derived from the secret and the id.
    costs : booktools.homework.table.ReleaseCosts, optional
        With ``seed``: receives every variant's registry and answers, to state what
        inverting its self-checks costs (nothing of it is written to ``out``).

    Returns
    -------
    list of pathlib.Path
        The notebooks written to ``out``.
    """

    from .variants import check_student_id

    root, paths = _notebooks(src)
    out = Path(out)
    out_dir = out.resolve()
    root_dir = Path(root).resolve()
    for target in [out] + ([Path(grading)] if grading is not None else []):
        _check_target(target)
        target = target.resolve()
        if target == root_dir or target in root_dir.parents:
            raise ValueError(f"{target}: refusing to overwrite a teacher notebook; "
                             "OUT holds SRC")
    if students is not None and seed is None:
        raise ValueError("one variant per student needs the course secret (--seed)")
    for student in students or []:
        check_student_id(student)
    # never read an earlier release inside SRC as teacher notebooks
    paths = [p for p in paths if out_dir not in p.resolve().parents]
    errors, students_nb = [], []
    for path in paths:
        try:
            nb = _read(path, root=root)  # through the gate: SRC may come from an archive
        except HomeworkError as exc:
            errors.append(exc)
            continue
        problems = _check_notebook(nb, path)
        if problems:
            errors.extend(problems)
            continue
        students_nb.append((path, nb, _student_version(nb, path)))
    if errors:
        raise MalformedHomework(errors)
    rel = {path: path.relative_to(root) for path, _, _ in students_nb}
    if seed is not None:
        mine, graded = _variants(students_nb, rel, seed, students, grading is not None,
                                 costs)
    else:
        mine = [(rel[path], _text(student)) for path, _, student in students_nb]
        graded = []
        if grading is not None:
            for path, nb, _ in students_nb:
                try:
                    version, values = _grading_version(nb, path)
                except HomeworkError as exc:
                    errors.append(exc)
                    continue
                graded.append((rel[path], _text(version)))
                graded.append((values_path(rel[path]), values))
            if errors:
                raise MalformedHomework(errors)
    leaks = leaked_lines(students_nb, rel, mine)
    if leaks:
        raise MalformedHomework([HomeworkError(path, f"a line of the solutions or hidden tests "
                                                     f"is in its student version: {line!r}")
                                 for path, line in leaks])
    if grading is not None:
        _write_atomically(graded, Path(grading), students is not None)
    _write_atomically(mine, out, students is not None)
    return [out / name for name, _ in mine if name.suffix == ".ipynb"]


def leaked_lines(notebooks, rel, files):
    """``[(teacher path, line)]``: the lines of each teacher notebook's solutions and
    hidden tests (:func:`solution_lines`, the leak tests' own search, longer than four
    characters and not also public) found in the files written for it."""
    found = []
    for path, nb, _ in notebooks:
        public = "\n".join(public_lines(nb))
        secret = sorted({ln.strip() for ln in solution_lines(nb) if len(ln.strip()) > 4})
        secret = [ln for ln in secret if ln not in public]
        tail = rel[path].parts  # its notebook and registry (per student: under ID/)
        for name, text in files:
            if name.parts[-len(tail):-1] != tail[:-1] or name.name.split(".")[0] != rel[
                    path].stem:
                continue
            try:
                sources = "\n".join("".join(c.get("source", "")) for c in
                                    json.loads(text).get("cells", []))
            except (ValueError, AttributeError):
                sources = ""
            found += [(path, ln) for ln in secret
                      if ln in sources or json.dumps(ln)[1:-1] in text]
    return found


def _text(nb):
    import nbformat

    return nbformat.writes(nb) + "\n"


def _variants(notebooks, rel, secret, students, grading, costs=None):
    """``(student files, grading files)`` of the course variant (or one per student)."""
    from .grading import grading_notebook
    from .notebook import hidden_sources
    from .variants import (
        ANSWERS_SUFFIX,
        derive_seed,
        record_variant,
        variant_key,
        with_parameters,
    )

    mine, graded, errors = [], [], []
    for student in [None] if students is None else list(students):
        prefix = Path(student) if student else Path()
        for path, nb, student_nb in notebooks:
            seed = derive_seed(secret, path.stem, student)
            answers = path.stem + ANSWERS_SUFFIX
            name = prefix / rel[path]
            with tempfile.TemporaryDirectory() as tmp:
                registry = Path(tmp) / answers
                try:
                    with_parameters(nb, path, seed)  # has its parameters cell
                    priors = {}
                    values, checked = record_variant(nb, path, seed,
                                                     variant_key(secret, path.stem, student),
                                                     registry, priors=priors)
                    if grading:
                        _refuse_protected(nb, path, values, registry)
                except HomeworkError as exc:
                    errors.append(exc)
                    continue
                except KernelDied:
                    raise  # the machine failed, not the notebook
                except Exception as exc:  # a failing teacher notebook, in one line
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
                    errors.append(HomeworkError(path, f"the teacher notebook failed to run "
                                                      f"with seed {seed}: {first}"))
                    continue
                files = []
                if registry.exists():
                    text = read_bytes(registry, MAX_REGISTRY, root=tmp).decode("utf-8")
                    files.append((name.with_name(answers), text))
                    if costs is not None:
                        costs.add(registry, checked, priors, student)
                else:
                    answers = None
            mine.append((name, _text(with_parameters(student_nb, path, seed, answers))))
            mine.extend(files)
            if grading:
                teacher = with_parameters(nb, path, seed, answers)
                version, text = grading_notebook(teacher, path, values, hidden_sources(nb))
                graded.append((name, _text(version)))
                graded.append((values_path(name), text))
                graded.extend(files)
    if errors:
        raise MalformedHomework(errors)
    return mine, graded


def _refuse_protected(nb, path, values, registry=None):
    from .grading import protected_by, self_check_names

    for key, value in values.items():
        arr = _numbers(value)
        for _, name in protected_by([] if arr is None else [arr], self_check_names(nb),
                                    registry):
            raise HomeworkError(path, f"expected({key!r}) is the answer the self-check "
                                      f"{name!r} protects")


def _grading_version(nb, path):
    """``(grading version, text of its values file)`` of a teacher notebook."""
    from .grading import _expected_calls, grading_notebook, record_expected
    from .notebook import hidden_sources

    sources = hidden_sources(nb)
    values = {}
    if any(_expected_calls(text) for text in sources.values()):
        try:
            values = record_expected(nb, path)
        except KernelDied:
            raise  # the machine failed, not the notebook
        except Exception as exc:  # a failing teacher notebook, in one line
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
            raise HomeworkError(path, f"the teacher notebook failed to run: {first}") from exc
        _refuse_protected(nb, path, values)
    try:
        return grading_notebook(nb, path, values, sources)
    except ValueError as exc:
        raise HomeworkError(path, str(exc)) from exc


def _numbers(recorded):
    """A recorded value as a float array, or None if it is not numbers."""
    value = recorded["ndarray"] if isinstance(recorded, dict) else recorded
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return arr if arr.size and np.all(np.isfinite(arr)) else None


def _check_target(out):
    """Refuse an output folder ``out`` that is a symbolic link or not a folder: a release
    replaces the folder itself, never what a link points to."""
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise ValueError(f"{out}: a symbolic link; a release replaces its output folder as "
                         "a whole, so name the folder itself")
    if not stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{out}: not a folder; a release writes a folder there")


def _write_atomically(files, out, per_student=False):
    """Write ``[(relative path, text)]`` under ``out`` by way of a temporary folder.

    The temporary folder is new (``mkdtemp``, only ours), each folder and file in it is
    created anew (a file with ``O_EXCL | O_NOFOLLOW``), never opened through a link, and
    each path is checked to stay inside it; with ``per_student``, the first part of each
    name is a student id, checked by :func:`~booktools.homework.variants.student_path`.
    ``out`` itself is replaced by renames, a link there refused (:func:`_check_target`).
    """
    from .variants import student_path

    out = Path(out)
    _check_target(out)
    # the folder itself, never a link's target (which _check_target refused)
    out_dir = out.resolve() if out.name in ("", ".", "..") else out.parent.resolve() / out.name
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        for name, text in files:
            name = Path(name)
            if name.is_absolute() or any(p in ("", ".", "..") for p in name.parts):
                raise ValueError(f"{name}: not a name inside {out}")
            target = student_path(tmp, *name.parts) if per_student else tmp / name
            folder = tmp
            for part in target.relative_to(tmp).parts[:-1]:
                folder = folder / part
                if not os.path.isdir(folder):
                    os.mkdir(folder)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o666)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
        _replace_dir(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _replace_dir(new, target):
    """Put the directory ``new`` in the place of ``target`` by renames (same filesystem);
    a symbolic link at ``target`` is refused, never followed."""
    _check_target(target)
    old = None
    if os.path.lexists(target):
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.rename(target, old)  # a folder onto the new empty one: atomic
    try:
        os.rename(new, target)
    except BaseException:
        if old is not None:
            os.rename(old, target)
        raise
    if old is not None:
        shutil.rmtree(old)


def _error_name(cell):
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return out.get("ename")
    return None


def rehearse(path, timeout=600):
    """Run the student version of a teacher notebook as a student who solved it would.

    The student version is executed cell by cell in one kernel. After each answer cell
    (which should raise ``NotImplementedError``, or define a function whose body does),
    the teacher's version of that cell runs too, so the rest of the notebook sees a
    solved exercise: every other cell, the visible tests included, must then pass.

    Returns
    -------
    list of dict
        One dict per code cell: ``cell`` (0-based index), ``role`` ("answer", "test"
        or "other"), ``error`` (the exception name the student version raised, or
        None) and, for answer cells, ``teacher_error``.
    """
    from nbclient.exceptions import DeadKernelError

    from ..kernels import notebook_client

    teacher = _read(path)
    student = release_notebook(teacher, path)
    client = notebook_client(student, Path(path).parent, timeout=timeout, allow_errors=True,
                             record_timing=False)
    results = []
    with client.setup_kernel(stderr=subprocess.DEVNULL):  # the kernel's own log lines
        try:
            _rehearse_cells(client, teacher, student, results)
        except DeadKernelError as exc:
            raise KernelDied(path, exit_status(client)) from exc
    return results


def _rehearse_cells(client, teacher, student, results):
    import copy

    kept = student_cells(teacher)  # the teacher's cell of each of the student's
    for index, cell in enumerate(student.cells):
        if cell.cell_type != "code":
            continue
        client.execute_cell(cell, index)
        role = "other"
        if is_solution_cell(cell):
            role = "answer"
        elif is_grade_cell(cell):
            role = "test"
        result = {"cell": index, "role": role, "error": _error_name(cell)}
        if role == "answer":
            solved = copy.deepcopy(kept[index])
            solved.outputs = []
            client.execute_cell(solved, index)
            result["teacher_error"] = _error_name(solved)
        results.append(result)

