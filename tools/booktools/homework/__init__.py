"""Homework tooling: student releases, validation, self-checks, the student site.

Defined in chapter "For teachers" (``book/teachers.md``).

The homework notebooks in ``book/homework/`` are the *teacher* versions. They use
nbgrader's markers and cell metadata, so a teacher can import them into nbgrader
unchanged, and this package turns them into *student* versions without nbgrader:

* :mod:`.notebook` reads teacher notebooks and finds their markers (a near-miss
  spelling is an error); :mod:`.validation` validates them (``python -m booktools
  validate SRC``);
* :mod:`.release` writes the student versions (``python -m booktools release SRC
  OUT``), atomically, and rehearses them;
* :mod:`lincls.homework.answers` (in lincls, since the notebooks import it) holds
  :func:`check`, the student's self-check of a numerical answer against a slow salted
  hash of the whole answer, and what inverting it costs;
* :mod:`.variants` makes a course's (or each student's) variant from a secret
  (``new-secret PATH``, then ``release --seed --secret-file PATH [--students roster.csv]``);
* :mod:`.autograde` grades the submissions with nbgrader, each against its own
  student's grading version, into one CSV file (``python -m booktools autograde``);
* :mod:`.site` builds the student edition of the website (``make student-book``);
* :mod:`.table` makes the teachers' table (the Sphinx directive is in
  :mod:`booktools.sphinxext`);
* :mod:`.cli` is the command line, a table of sub-commands.

Importing this package is cheap: ``nbformat``, ``nbclient`` and ``yaml`` are imported
inside the functions that need them (install them with ``pip install booktools``).
"""

from lincls.homework import ANSWERS, RECORD_ENV, brute_force_cost, check, expected, record_answer

from .autograde import autograde
from .cli import main
from .notebook import (
    BEGIN_HIDDEN,
    BEGIN_SOLUTION,
    CODE_STUB,
    END_HIDDEN,
    END_SOLUTION,
    STUDENT_SOLUTION_NOTE,
    TEXT_STUB,
    HomeworkError,
    KernelDied,
    MalformedHomework,
    describe,
    is_grade_cell,
    is_solution_cell,
    public_lines,
    solution_lines,
)
from .release import rehearse, release, release_notebook
from .site import (
    SOLUTION_ONLY_TAG,
    build_student_site,
    chapter_solution_lines,
    make_student_sources,
    strip_chapter_solutions,
)
from .table import binder_url, homework_info, homework_table
from .validation import validate, validate_notebook
from .variants import PARAMETERS_TAG, derive_seed, fixed_names, read_roster, record_variant

__all__ = [
    "ANSWERS",
    "BEGIN_HIDDEN",
    "BEGIN_SOLUTION",
    "CODE_STUB",
    "END_HIDDEN",
    "END_SOLUTION",
    "RECORD_ENV",
    "SOLUTION_ONLY_TAG",
    "STUDENT_SOLUTION_NOTE",
    "TEXT_STUB",
    "PARAMETERS_TAG",
    "HomeworkError",
    "KernelDied",
    "MalformedHomework",
    "autograde",
    "binder_url",
    "brute_force_cost",
    "build_student_site",
    "chapter_solution_lines",
    "check",
    "derive_seed",
    "describe",
    "expected",
    "fixed_names",
    "homework_info",
    "homework_table",
    "is_grade_cell",
    "is_solution_cell",
    "main",
    "make_student_sources",
    "public_lines",
    "read_roster",
    "record_answer",
    "record_variant",
    "rehearse",
    "release",
    "release_notebook",
    "solution_lines",
    "strip_chapter_solutions",
    "validate",
    "validate_notebook",
]
