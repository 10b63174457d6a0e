"""What a homework notebook imports: the self-check and the teacher's expected values.

Defined in chapter "For teachers" (``book/teachers.md``).

* :func:`check` checks a numerical answer against a slow salted hash of it, from the
  registry ``answers.json`` shipped here (:func:`record_answer` writes one entry, and
  :func:`brute_force_cost` says what inverting each check costs);
* :func:`expected` returns its value: in a hidden test of a teacher notebook it marks
  the teacher's value, which the release tools turn into a literal.

The tools that release, validate and grade the homework are not part of lincls: they are
the sibling package ``booktools`` (``python -m booktools``), in ``tools/``.
"""

from .answers import ANSWERS, RECORD_ENV, brute_force_cost, check, expected, record_answer

__all__ = ["ANSWERS", "RECORD_ENV", "brute_force_cost", "check", "expected", "record_answer"]
