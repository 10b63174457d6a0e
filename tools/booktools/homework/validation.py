"""Validation of teacher notebooks: their format, and hidden tests that stand apart.

Defined in chapter "For teachers" (``book/teachers.md``). The format is
:mod:`.notebook`'s, the hidden-test rules :mod:`.grading`'s (``python -m booktools
validate SRC``).
"""

from __future__ import annotations

from .grading import hidden_test_problems, unconfirmed_problems
from .notebook import (
    CODE_STUB,
    TEXT_STUB,
    HomeworkError,
    _check_cell,
    _check_metadata,
    _notebooks,
    _read,
    _regions,
    _source_lines,
    hidden_sources,
    is_solution_cell,
)


def _check_notebook(nb, path, registry=None):
    """All problems of one parsed notebook, as a list of HomeworkError.

    Besides the format, the hidden tests must stand apart from lincls and from the
    self-checks (see :mod:`booktools.homework.grading`).
    """
    errors, grade_ids = [], {}
    try:
        _check_metadata(nb, path)
    except HomeworkError as exc:
        errors.append(exc)
    for index, cell in enumerate(nb.cells):
        try:
            _check_cell(cell, index, path, grade_ids)
        except HomeworkError as exc:
            exc.cell_id = cell.get("id")
            errors.append(exc)
    if errors:
        return errors
    problems = hidden_test_problems(nb, hidden_sources(nb), registry)
    if not _is_student_version(nb, path):
        problems += unconfirmed_problems(nb, hidden_sources(nb))
    for index, message in problems:
        cell = nb.cells[index]
        errors.append(HomeworkError(path, message, index, cell.cell_type, cell.get("id")))
    return errors


def _is_student_version(nb, path):
    """True for a student version: no marker region in any cell, and every answer cell
    holds the stub (its test cells have no hidden tests to hold ``expected``)."""
    for cell in nb.cells:
        lines = _source_lines(cell)
        if _regions(lines, path, None, cell.cell_type):
            return False
        stub = [s.strip() for s in CODE_STUB] if cell.cell_type == "code" else [TEXT_STUB]
        if is_solution_cell(cell) and not set(stub) <= {line.strip() for line in lines}:
            return False
    return True


def validate_notebook(nb, path="<notebook>", registry=None):
    """Every problem of one parsed teacher notebook, as a list of HomeworkError.

    ``registry`` is the self-check registry that the hidden tests are compared with
    (default: the one shipped with lincls).
    """
    return _check_notebook(nb, path, registry)


def validate(src):
    """Check teacher (or student) notebooks without writing anything.

    Parameters
    ----------
    src : path-like
        A notebook or a directory searched recursively for ``*.ipynb``.

    Returns
    -------
    list of HomeworkError
        Every problem found; empty when all notebooks are well formed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "broken.ipynb").write_text("{not json")
    >>> [str(e).split(": ", 1)[1] for e in validate(d)]
    ['is not valid JSON (line 1, column 2: Expecting property name enclosed in double quotes)']
    """
    _, paths = _notebooks(src)
    errors = []
    for path in paths:
        try:
            nb = _read(path)
        except HomeworkError as exc:
            errors.append(exc)
            continue
        errors.extend(_check_notebook(nb, path))
    return errors
