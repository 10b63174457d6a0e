"""The per-student layout autograde reads, made from one release of a teacher notebook:
``grading/<id>/<notebook>`` and its values file beside it, for every id, and nothing
shared left at the top (one grading version per student, as ``release --students``
writes it, without a roster of seeds)."""

import shutil
from pathlib import Path

from booktools import homework as hw


def per_student(teacher, tmp, ids):
    """Release ``teacher`` into ``tmp/student`` and ``tmp/grading``, then give every id
    its own copy of the grading version and its values. Returns the grading folder."""
    grading = Path(tmp) / "grading"
    hw.release(teacher, Path(tmp) / "student", grading=grading)
    return spread(grading, teacher, ids)


def spread(grading, teacher, ids):
    """Move a release's shared grading version of ``teacher`` and its values into a
    folder per id under ``grading``. Returns ``grading``."""
    teacher = Path(teacher)
    values = grading / f"{teacher.stem}.expected.json"  # the teacher's values
    for sid in ids:
        (grading / sid).mkdir()
        shutil.copy(grading / teacher.name, grading / sid / teacher.name)
        shutil.copy(values, grading / sid / values.name)
    (grading / teacher.name).unlink()
    values.unlink()
    return grading
