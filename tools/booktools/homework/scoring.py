"""Scores a student's kernel cannot forge: nbgrader's verdict confirmed outside the kernel.

Defined in chapter "For teachers" (``book/teachers.md``).

nbgrader gives a test cell its points when its outputs hold no error. The student's code
runs first in the same kernel, so it can make every test pass without an error (drop the
``assert`` lines, catch every exception, rebind ``np.allclose``). So a test cell earns
its points only with positive evidence as well, compared here, in the grader's process:
while grading, :func:`lincls.homework.expected` publishes the student's value of each
``expected("key", ...)`` as display data of type :data:`EXPECTED_MIME`; the teacher's
values are in the grading version's values file (:func:`.grading.values_path`), which the
kernel never sees. A cell keeps nbgrader's score only if every key its hidden tests name
was published in its outputs, and every value published there under one of those keys
matches the teacher's (so publishing guesses does not help). Publications of other keys
are ignored.

What this cannot tell is where a publication came from: any code in the kernel can
publish (a submission can replace ``expected``, or send a message of its own with the
test cell as its parent, and it lands in that cell's outputs). So a cell's points need
the teacher's values, not the hidden tests' own run: a submission that can compute those
values some other way (with lincls, say) earns them.
"""

from __future__ import annotations

import json
import math

from lincls.homework.answers import EXPECTED_MIME

from .grading import expected_calls
from .notebook import hidden_sources, is_grade_cell, is_solution_cell


def cell_tolerances(grading_nb):
    """``{grade id: {key: (rtol, atol)}}`` of the autograded test cells of a grading
    version, from the ``expected`` calls of their hidden tests."""
    sources = hidden_sources(grading_nb)
    found = {}
    for index, cell in enumerate(grading_nb.cells):
        if cell.cell_type == "code" and is_grade_cell(cell) and not is_solution_cell(cell):
            keys = {}
            for key, rtol, atol in expected_calls(sources.get(index, "")):
                keys.setdefault(key, (rtol, atol))
            found[cell.metadata["nbgrader"]["grade_id"]] = keys
    return found


#: Stands for a published value that is not the JSON ``expected`` writes: no match.
UNREADABLE = object()


def published(cell):
    """``[(key, value)]`` that ``expected`` published in a cell's outputs, in order;
    a publication that cannot be read counts with the value :data:`UNREADABLE`."""
    found = []
    for output in cell.get("outputs", []):
        if output.get("output_type") not in ("display_data", "execute_result"):
            continue
        data = output.get("data", {}).get(EXPECTED_MIME)
        if data is None:
            continue
        key = data.get("key") if isinstance(data, dict) else None
        key = key if isinstance(key, str) else None
        try:
            value = json.loads(data["value"])
        except (TypeError, KeyError, ValueError, RecursionError):
            value = UNREADABLE
        found.append((key, value))
    return found


def _plain(value):
    """A recorded value as nested lists: an array (``{"ndarray", "dtype"}``) by its
    entries, since the shape and the numbers are what a test compares."""
    if isinstance(value, dict) and set(value) == {"ndarray", "dtype"}:
        return _plain(value["ndarray"])
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def matches(student, teacher, rtol=1e-5, atol=1e-8):
    """True when a published value matches the teacher's recorded one: the same nesting
    and lengths (shapes), floats within ``atol + rtol * |teacher's|`` (as
    ``np.allclose``; NaN only where the teacher's is NaN), integers, booleans, strings
    and None exactly."""
    if student is UNREADABLE:
        return False
    try:
        return _matches(_plain(student), _plain(teacher), rtol, atol)
    except RecursionError:  # nested deeper than any teacher's value
        return False


def _matches(a, b, rtol, atol):
    if isinstance(b, list):
        return (isinstance(a, list) and len(a) == len(b)
                and all(_matches(x, y, rtol, atol) for x, y in zip(a, b, strict=True)))
    if _number(b) and _number(a):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        a, b = float(a), float(b)
        if math.isnan(b) or math.isnan(a):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(b) or math.isinf(a):
            return a == b
        return abs(a - b) <= atol + rtol * abs(b)
    return type(a) is type(b) and a == b


def confirm(autograded_nb, tolerances, values):
    """``{grade id: None or why}`` for the test cells of a notebook nbgrader executed:
    None where the values its cell published confirm its verdict, else the reason (in
    words that quote no value).

    ``tolerances`` is :func:`cell_tolerances` of the grading version, ``values`` the
    teacher's ``{key: recorded value}``. A cell missing from the notebook is left out.
    """
    cells = {cell.metadata.get("nbgrader", {}).get("grade_id"): cell
             for cell in autograded_nb.cells if cell.cell_type == "code"}
    verdicts = {}
    for grade_id, keys in tolerances.items():
        cell = cells.get(grade_id)
        if cell is None:
            continue
        missing = [key for key in keys if key not in values]
        if missing:
            raise ValueError(f"no teacher's value of {', '.join(missing)} in the values "
                             "file of the grading version")
        seen, wrong = set(), False
        for key, value in published(cell):
            if key in keys:
                seen.add(key)
                wrong = wrong or not matches(value, values[key], *keys[key])
        if wrong:
            verdicts[grade_id] = "a value its hidden tests compare differs from the teacher's"
        elif len(seen) < len(keys):
            verdicts[grade_id] = "its hidden tests did not report every value they compare"
        else:
            verdicts[grade_id] = None
    return verdicts
