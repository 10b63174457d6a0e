"""separating_weights retries an undecided HiGHS solve with other methods (chapter "Counting
dichotomies: Cover's theorem", whose sweep of linear programs held this case while it drew
50 problems a point; it draws 25 now)."""

from types import SimpleNamespace

import numpy as np
import pytest

import lincls.discriminant as discriminant
from lincls.datasets import random_labels


def test_cover_sweep_case_undecided_by_default_method_is_infeasible():
    """N = 40, P = 160 (alpha = 4), random_state 30727 = 10_000 * 3 + 100 * 7 + 27: HiGHS's
    default method ends with status 4 ("model_status is Unknown"); the interior-point
    method proves the program infeasible, and the least-distance program (NNLS) agrees."""
    X, y = random_labels(160, 40, random_state=30727)
    w, attempts = discriminant.separating_weights(X, y, fit_intercept=False, return_attempts=True)
    assert w is None
    assert attempts == [("highs", 4), ("highs-ipm", 2)]
    assert not discriminant.is_linearly_separable(X, y, fit_intercept=False)
    with pytest.raises(ValueError, match="not linearly separable"):
        discriminant.max_margin(X, y, fit_intercept=False)


def fake_linprog(statuses, x):
    """A linprog whose method m returns statuses[m] (and x when that status is 0)."""
    def linprog(c, *, method, **kwargs):
        status = statuses[method]
        return SimpleNamespace(status=status, x=np.asarray(x, float) if status == 0 else None,
                               message=f"fake {method}")
    return linprog


def test_a_later_method_decides(monkeypatch):
    X, y = np.array([[1.0], [-1.0]]), np.array([1, -1])
    monkeypatch.setattr(discriminant, "linprog",
                        fake_linprog({"highs": 4, "highs-ipm": 0, "highs-ds": 2}, [2.0]))
    w, attempts = discriminant.separating_weights(X, y, fit_intercept=False, return_attempts=True)
    assert w.tolist() == [2.0] and attempts == [("highs", 4), ("highs-ipm", 0)]


def test_a_status_zero_point_that_does_not_separate_is_not_a_verdict(monkeypatch):
    X, y = np.array([[1.0], [-1.0]]), np.array([1, -1])
    monkeypatch.setattr(discriminant, "linprog",
                        fake_linprog({"highs": 0, "highs-ipm": 4, "highs-ds": 1}, [0.0]))
    tried = "highs: status 0, highs-ipm: status 4, highs-ds: status 1"
    with pytest.raises(RuntimeError, match=tried):
        discriminant.separating_weights(X, y, fit_intercept=False)
