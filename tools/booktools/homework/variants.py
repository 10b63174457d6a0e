"""Course and student variants of the homework: one seed, set in a ``parameters`` cell.

Defined in chapter "For teachers" (``book/teachers.md``).

The book is open, so the solutions of its homework are public. Every homework therefore
takes the data of its graded questions from ``SEED``, set in the one code cell tagged
``parameters`` at the top (as papermill does); the book's copy uses a fixed public seed.
``release --seed SECRET`` gives a course its own variant:

* the seed of each notebook is :func:`derive_seed` (a keyed hash of SECRET, the
  notebook's name and, with ``--students``, the student id), never SECRET itself;
* the teacher notebook is executed with that seed (:func:`record_variant`): its
  ``check`` calls record the self-check registry of the variant, a file written beside
  the notebook (salts and grids are keyed hashes too, so a release is reproducible), and
  its ``expected`` calls give the values of the grading version's hidden tests;
* the student version's parameters cell holds the derived seed and the registry's file
  name: nothing else differs, and nothing in the output depends on SECRET but through
  HMAC-SHA256, so neither SECRET nor another variant's seed can be computed from it.

A question whose answer does not depend on the seed is listed in the notebook's
``lincls`` metadata under ``fixed`` (by the names of its self-checks and expected
values); the teachers' table shows the list, and the tests check it both ways.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import json
import os
import re
import tempfile
from pathlib import Path

PARAMETERS_TAG = "parameters"
#: The name of a variant's self-check registry, beside its notebook.
ANSWERS_SUFFIX = ".answers.json"


def _hmac(secret, *parts):
    message = "\0".join(("lincls-homework", *parts)).encode()
    return hmac.new(str(secret).encode(), message, hashlib.sha256).digest()


def derive_seed(secret, notebook, student=None):
    """The seed of one notebook in a course (or of one student): a 30-bit keyed hash
    (room to add small offsets and stay a valid NumPy and scikit-learn seed).

    >>> derive_seed("a long course secret", "homework1") == derive_seed(
    ...     "a long course secret", "homework1")
    True
    >>> derive_seed("a long course secret", "homework1", "s01") != derive_seed(
    ...     "a long course secret", "homework1", "s02")
    True
    """
    if not isinstance(secret, str) or not secret:
        raise ValueError("the course secret must be a non-empty string")
    return int.from_bytes(_hmac(secret, "seed", notebook, student or "")[:4], "big") >> 2


def variant_key(secret, notebook, student=None):
    """The hex key of a variant's registry salts and grids (see ``record_answer``)."""
    return _hmac(secret, "answers", notebook, student or "").hex()


def parameters_index(nb, path="<notebook>"):
    """Index of the one code cell tagged ``parameters``."""
    from .notebook import HomeworkError

    found = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
             and PARAMETERS_TAG in (c.get("metadata", {}).get("tags") or [])]
    if len(found) != 1:
        raise HomeworkError(path, f"needs exactly one code cell tagged {PARAMETERS_TAG!r} "
                                  f"holding SEED (found {len(found)})")
    return found[0]


def parameters_source(seed, answers=None):
    """The source of a parameters cell."""
    return (
        "# The seed of this copy's data; a course release sets its own.\n"
        f"SEED = {int(seed)}\n"
        "# The self-check answers: None means those shipped with lincls.\n"
        f"ANSWERS = {answers!r}"
    )


def with_parameters(nb, path, seed, answers=None):
    """A copy of ``nb`` whose parameters cell holds ``seed`` and ``answers``."""
    import nbformat

    out = nbformat.from_dict(json.loads(json.dumps(nb)))
    cell = out.cells[parameters_index(out, path)]
    cell.source = parameters_source(seed, answers)
    cell.outputs, cell.execution_count = [], None
    return out


def fixed_names(nb):
    """The names of the self-checks and expected values that do not depend on the seed."""
    return list(nb.metadata.get("lincls", {}).get("fixed", []))


def record_variant(nb, path, seed, key, registry, timeout=600):
    """Execute the teacher notebook ``nb`` with ``seed``; its ``check`` calls record
    into ``registry`` (salts and grids keyed by ``key``).

    Returns ``(expected, checked)``: the values of its ``expected`` calls and of its
    self-checks, by name (the latter for tests; a release never writes them).
    """
    from lincls.homework.answers import RECORD_ENV, RECORD_KEY_ENV, RECORD_VALUES_ENV

    from .grading import record_expected

    registry = Path(registry).resolve()
    registry.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        values = Path(tmp) / "checked.jsonl"
        values.touch()
        env = {RECORD_ENV: str(registry), RECORD_KEY_ENV: key,
               RECORD_VALUES_ENV: str(values)}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            expected = record_expected(with_parameters(nb, path, seed), path, timeout)
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        checked = {}
        for line in values.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            checked[item["key"]] = item["value"]
    return expected, checked


def read_roster(path):
    """Student ids from a CSV file: the column ``id`` (or the first column)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: the roster is empty")
    head = [h.strip().lower() for h in rows[0]]
    column = head.index("id") if "id" in head else 0
    ids = [row[column].strip() for row in rows[1:] if row and row[column].strip()]
    for sid in ids:
        if not re.fullmatch(r"[\w.\-]+", sid):
            raise ValueError(f"{path}: student id {sid!r}: use letters, digits, '.', '_', '-'")
    if not ids or len(set(ids)) != len(ids):
        raise ValueError(f"{path}: needs a header and unique student ids, one per row")
    return ids
