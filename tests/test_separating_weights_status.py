"""separating_weights answers None only for a linear program HiGHS proves infeasible
(status 2); an undecided solve (iteration limit, numerical difficulties) raises instead of
passing for "not separable" (chapter "Linear discriminant functions")."""

from types import SimpleNamespace

import numpy as np
import pytest

import lincls.discriminant as discriminant
from lincls.datasets import logic_gate


def solver_returning(status):
    def fake_linprog(c, **kwargs):
        return SimpleNamespace(status=status, x=np.zeros(len(c)) if status == 0 else None,
                               message=f"fake status {status}")
    return fake_linprog


def test_infeasible_is_none_and_feasible_separates():
    X, y = logic_gate("xor")
    assert discriminant.separating_weights(X, y) is None
    assert not discriminant.is_linearly_separable(X, y)
    X, y = logic_gate("and")
    w = discriminant.separating_weights(X, y)
    assert np.all(y * (discriminant.augment(X) @ w) >= 1 - 1e-7)


@pytest.mark.parametrize("status", [1, 3, 4])
def test_an_undecided_solve_raises(monkeypatch, status):
    monkeypatch.setattr(discriminant, "linprog", solver_returning(status))
    X, y = logic_gate("and")
    with pytest.raises(RuntimeError, match=f"status {status}"):
        discriminant.separating_weights(X, y)
    with pytest.raises(RuntimeError, match=f"status {status}"):
        discriminant.is_linearly_separable(X, y)


def test_status_two_is_none(monkeypatch):
    monkeypatch.setattr(discriminant, "linprog", solver_returning(2))
    assert discriminant.separating_weights(*logic_gate("and")) is None


def test_a_real_iteration_limit_raises(monkeypatch):
    """HiGHS stopped before an answer (status 1) on AND: the old code said "not separable"."""
    real = discriminant.linprog

    def limited(*args, **kwargs):
        result = real(*args, **kwargs, options={"maxiter": 0, "presolve": False})
        assert result.status == 1
        return result

    monkeypatch.setattr(discriminant, "linprog", limited)
    with pytest.raises(RuntimeError, match="status 1"):
        discriminant.separating_weights(*logic_gate("and"))
