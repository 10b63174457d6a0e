"""Tests of lincls.least_squares: LeastSquares (pseudo-inverse) and HoKashyap."""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import RidgeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls._base import augment
from lincls.datasets import logic_gate, teacher_student
from lincls.discriminant import is_linearly_separable
from lincls.least_squares import (
    HoKashyap,
    LeastSquares,
    exact_certificate,
    mse_solution,
    normalized_samples,
    separates,
)

# Duda, Hart & Stork §5.8.1: ω1 = {(1,2), (2,0)}, ω2 = {(3,1), (2,3)}, b = 1.
DHS_X = np.array([[1.0, 2.0], [2.0, 0.0], [3.0, 1.0], [2.0, 3.0]])
DHS_LABELS = np.array([1, 1, -1, -1])  # ω1 ↦ +1, so Y has the rows of the book
DHS_A = np.array([11 / 3, -4 / 3, -2 / 3])
DHS_PINV = np.array([[5 / 4, 13 / 12, 3 / 4, 7 / 12],
                     [-1 / 2, -1 / 6, -1 / 2, -1 / 6],
                     [0, -1 / 3, 0, -1 / 3]])


@parametrize_with_checks([LeastSquares(), HoKashyap()])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


# -- the worked example ---------------------------------------------------------------
def test_dhs_matrix_and_pseudo_inverse():
    Y = normalized_samples(np.hstack([np.ones((4, 1)), DHS_X]), DHS_LABELS.astype(float))
    np.testing.assert_array_equal(Y, [[1, 1, 2], [1, 2, 0], [-1, -3, -1], [-1, -2, -3]])
    np.testing.assert_allclose(np.linalg.pinv(Y), DHS_PINV, rtol=0, atol=1e-14)


def test_dhs_example_to_machine_precision():
    clf = LeastSquares().fit(DHS_X, DHS_LABELS)
    a = clf.weights_
    np.testing.assert_allclose(a, DHS_A, rtol=0, atol=4 * np.finfo(float).eps * 4)
    assert [Fraction(v).limit_denominator(100) for v in a] == [Fraction(11, 3), Fraction(-4, 3),
                                                                Fraction(-2, 3)]
    assert clf.rank_ == 3
    np.testing.assert_array_equal(clf.margins_, np.ones(4))
    # The boundary a · (1, x) = 0 separates ω1 from ω2 here.
    assert clf.score(DHS_X, DHS_LABELS) == 1.0


def test_dhs_example_any_labels_same_boundary():
    # Other label names, ω1 as the *negative* class: the weights flip sign, predictions agree.
    clf = LeastSquares().fit(DHS_X, np.array(["w1", "w1", "w2", "w2"]))
    np.testing.assert_allclose(-clf.weights_, DHS_A, atol=1e-14)
    assert clf.predict(DHS_X).tolist() == ["w1", "w1", "w2", "w2"]


# -- against numpy.linalg.lstsq ---------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [(30, 4), (8, 12), (50, 1)])
def test_matches_numpy_lstsq(seed, shape):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(shape)
    y = np.where(rng.random(shape[0]) < 0.5, -1, 1)
    y[:2] = [-1, 1]
    b = rng.uniform(0.5, 2.0, shape[0])
    clf = LeastSquares(margins=b).fit(X, y)
    Y = y[:, None] * np.hstack([np.ones((shape[0], 1)), X])
    expected = np.linalg.lstsq(Y, b, rcond=None)[0]
    np.testing.assert_allclose(clf.weights_, expected, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(clf.residual_, Y @ expected - b, atol=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_rank_deficient_gives_minimum_norm_solution(seed):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((40, 3))
    # Five columns, rank 3: a duplicated column and a linear combination.
    X = np.column_stack([base, base[:, 0], base[:, 1] - 2 * base[:, 2]])
    y = np.where(base @ [1.0, -1.0, 0.5] > 0, 1, -1)
    clf = LeastSquares(fit_intercept=False).fit(X, y)
    Y = y[:, None] * X
    assert clf.rank_ == 3
    np.testing.assert_allclose(clf.weights_, np.linalg.pinv(Y) @ np.ones(40), atol=1e-10)
    np.testing.assert_allclose(clf.weights_, np.linalg.lstsq(Y, np.ones(40), rcond=None)[0],
                               atol=1e-10)


@pytest.mark.parametrize("k", [1, 2])
def test_tall_problems_are_solved_from_their_triangular_factor(k, monkeypatch):
    """Past SMALL_WORK, a tall problem goes through the tall-skinny QR of [Y | b] (its
    blocks side by side): the same minimum-norm solution and rank as gelsd on Y, also
    when Y has dependent columns and for several right-hand sides."""
    import scipy.linalg

    from lincls import least_squares
    from lincls._blas import SMALL_WORK

    rng = np.random.default_rng(0)
    base = rng.standard_normal((16_000, 248))
    Y = np.column_stack([base, base[:, :2] @ [1.0, -2.0], base[:, 3]])  # rank 248 of 250
    b = rng.uniform(0.5, 2.0, (16_000, k)).squeeze()
    m, n = Y.shape
    assert m * n * n >= SMALL_WORK and m >= 4 * least_squares._BLOCKS * (n + k)
    calls, real = [], least_squares._triangular_factor
    monkeypatch.setattr(least_squares, "_triangular_factor",
                        lambda *args: calls.append(1) or real(*args))
    a, rank = least_squares._lstsq(Y, b)
    expected, _, expected_rank, _ = scipy.linalg.lstsq(Y, b, cond=m * np.finfo(float).eps)
    assert calls == [1] and rank == expected_rank == 248
    np.testing.assert_allclose(a, expected, atol=1e-12)


# make_classification's two redundant features are combinations of the informative ones:
# the augmented inputs have 51 columns and rank 49. Rounding leaves the two lost singular
# values near 1e-16 of the largest (the next is ~0.15 of it); they must count as zero.
REDUNDANT_X, REDUNDANT_Y = make_classification(100, 50, random_state=0)


def test_redundant_features_give_the_minimum_norm_solution():
    clf = LeastSquares().fit(REDUNDANT_X, REDUNDANT_Y)
    assert clf.rank_ == 49
    expected = np.linalg.pinv(augment(REDUNDANT_X)) @ np.where(REDUNDANT_Y == 1, 1.0, -1.0)
    assert np.abs(expected).max() < 1
    np.testing.assert_allclose(clf.weights_, expected, atol=1e-10)
    # The same problem with its samples in another order: the same weights (rounding
    # residues along the lost directions would get different, huge weights).
    order = np.random.default_rng(0).permutation(100)
    again = LeastSquares().fit(REDUNDANT_X[order], REDUNDANT_Y[order])
    np.testing.assert_allclose(again.weights_, clf.weights_, atol=1e-10)


def test_float32_inputs_cut_off_at_their_precision():
    # Rounded to float32, the redundant features are combinations of the others only to
    # ~1e-7 (relative); up-cast to float64 they look independent. Data known to float32's
    # precision cannot define those directions: the rank stays 49, the weights small.
    X32 = REDUNDANT_X.astype(np.float32)
    clf = LeastSquares().fit(X32, REDUNDANT_Y)
    assert clf.rank_ == 49
    reference = LeastSquares().fit(REDUNDANT_X, REDUNDANT_Y)
    np.testing.assert_allclose(clf.weights_, reference.weights_, atol=1e-5)
    assert np.array_equal(clf.predict(X32), reference.predict(REDUNDANT_X))


def test_unit_margins_equal_ridge_classifier_without_penalty():
    X, y, _ = teacher_student(200, 5, noise=0.1, random_state=3)
    ours = LeastSquares().fit(X, y)
    ridge = RidgeClassifier(alpha=0.0, solver="svd").fit(X, y)
    np.testing.assert_allclose(ours.coef_.ravel(), np.ravel(ridge.coef_), atol=1e-10)
    np.testing.assert_allclose(ours.intercept_, np.ravel(ridge.intercept_), atol=1e-10)


def test_mse_solution_is_minimum_norm_for_underdetermined():
    rng = np.random.default_rng(0)
    Y = rng.standard_normal((3, 6))
    b = np.ones(3)
    a = mse_solution(Y, b)
    np.testing.assert_allclose(Y @ a, b, atol=1e-12)
    np.testing.assert_allclose(a, np.linalg.pinv(Y) @ b, atol=1e-12)


@pytest.mark.parametrize("margins, message", [
    (np.ones(3), "shape"),
    (-np.ones(4), "positive"),
    (np.array([1.0, np.nan, 1.0, 1.0]), "finite"),
])
def test_bad_margins(margins, message):
    with pytest.raises(ValueError, match=message):
        LeastSquares(margins=margins).fit(DHS_X, DHS_LABELS)


def test_bad_input():
    with pytest.raises(ValueError, match="2 classes"):
        LeastSquares().fit(DHS_X, [1, 1, 1, 1])
    with pytest.raises(ValueError):
        LeastSquares().fit(DHS_X[:3], DHS_LABELS)
    with pytest.raises(ValueError, match="fit_intercept"):
        LeastSquares(fit_intercept="yes").fit(DHS_X, DHS_LABELS)


# -- Ho–Kashyap ---------------------------------------------------------------------------
def test_ho_kashyap_gates():
    assert HoKashyap().fit(*logic_gate("xor")).separable_ is False
    assert HoKashyap().fit(*logic_gate("xnor")).separable_ is False
    for name in ("and", "or", "nand", "nor", "a_and_not_b"):
        clf = HoKashyap().fit(*logic_gate(name))
        assert clf.separable_ is True and clf.converged_
        assert clf.score(*logic_gate(name)) == 1.0


@pytest.mark.parametrize("seed", range(10))
def test_ho_kashyap_separates_separable_sets(seed):
    X, y, _ = teacher_student(60, 5, random_state=seed)
    clf = HoKashyap(max_iter=100_000).fit(X, y)
    assert clf.separable_ is True
    assert clf.score(X, y) == 1.0
    assert np.all(clf.margins_ >= 1.0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 14), dim=st.integers(1, 3))
def test_ho_kashyap_agrees_with_linear_program(seed, n, dim):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, dim)).astype(float)
    y = rng.choice([-1, 1], size=n)
    y[:2] = [-1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = HoKashyap(max_iter=20_000).fit(X, y)
    assume(clf.separable_ is not None)  # undecided is rare (next test), a verdict must be right
    assert clf.separable_ == is_linearly_separable(X, y)
    if clf.separable_:
        assert clf.score(X, y) == 1.0


def test_ho_kashyap_decides_almost_always_and_both_ways():
    verdicts = []
    for seed in range(60):
        rng = np.random.default_rng(seed)
        n, dim = 3 + seed % 10, 1 + seed % 3
        X = rng.integers(-3, 4, size=(n, dim)).astype(float)
        y = rng.choice([-1, 1], size=n)
        y[:2] = [-1, 1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            verdicts.append(HoKashyap(max_iter=20_000).fit(X, y).separable_)
    assert verdicts.count(None) <= 1
    assert verdicts.count(True) >= 10 and verdicts.count(False) >= 10


def test_ho_kashyap_undecided_warns():
    X, y, _ = teacher_student(200, 10, random_state=1)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        clf = HoKashyap(max_iter=1).fit(X, y)
    assert clf.separable_ is None and clf.converged_ is False


def test_ho_kashyap_nonseparable_certificate():
    # The certificate e <= 0, e != 0 and Y^T e = 0 (e is a least-squares residual).
    X, y = logic_gate("xor")
    clf = HoKashyap().fit(X, y)
    Y = normalized_samples(np.hstack([np.ones((4, 1)), X]), y.astype(float))
    e = Y @ clf.weights_ - clf.margins_
    assert np.all(e <= 1e-9) and np.linalg.norm(e) > 0.1
    np.testing.assert_allclose(Y.T @ e, 0, atol=1e-9)
    assert clf.certificate_.tolist() == [0.25] * 4  # -e / 4, here exact in floats too
    np.testing.assert_array_equal(Y.T @ clf.certificate_, 0)


def _far_group_and_a_close_positive():
    """The chapter's far-group data plus one positive 1e-5 from a negative (issue 39).

    The new positive sits at Xn[k] + 1e-5 u, u = (1, 1)/√2, k the negative furthest along
    u. The data are separable, but only with a margin of about 7e-6.
    """
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal([0.0, 0.0], 0.5, (25, 2)), rng.normal([2.0, 2.0], 0.5, (25, 2)),
                   rng.normal([15.0, 3.0], 0.5, (20, 2))])
    u = np.array([1.0, 1.0]) / np.sqrt(2)
    k = int(np.argmax(X[:25] @ u))
    return np.vstack([X, X[k] + 1e-5 * u]), np.r_[-np.ones(25), np.ones(46)].astype(int)


def test_ho_kashyap_never_calls_thin_margin_data_non_separable():
    X, y = _far_group_and_a_close_positive()
    # In exact arithmetic x1 + x2 = t separates them, t midway between the close pair.
    s = [Fraction(x1) + Fraction(x2) for x1, x2 in X.tolist()]
    t = (max(s[:25]) + s[-1]) / 2
    assert max(s[:25]) < t < min(s[25:])
    # Measured on the code before issue 39 (e <= tol taken as the proof): with tol=1e-3 and
    # eta=0.9 it said separable_=False after 6,892 iterations; with the defaults and
    # max_iter=1_500_000 after 232,380. The exact check refuses both candidates (with the
    # defaults the new code finds a separating vector after 306,694 iterations).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        clf = HoKashyap(tol=1e-3, eta=0.9, max_iter=8_000).fit(X, y)
    assert clf.separable_ is not False and clf.certificate_ is None
    if clf.separable_ is None:
        assert clf.converged_ is False
        assert any("exact check failed" in str(w.message) for w in caught)
    else:
        assert clf.score(X, y) == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_ho_kashyap_separating_weights_separate_in_exact_arithmetic(seed):
    X, y, _ = teacher_student(40, 3, random_state=seed)
    clf = HoKashyap(max_iter=100_000).fit(X, y)
    assert clf.separable_ is True
    a = [Fraction(v) for v in clf.weights_]
    for xi, yi in zip(X.tolist(), np.where(y == clf.classes_[1], 1, -1).tolist(), strict=True):
        assert yi * (a[0] + sum(aj * Fraction(xj) for aj, xj in zip(a[1:], xi, strict=True))) > 0


def test_separates_refuses_products_within_rounding_of_zero():
    Y = np.array([[1.0, -1.0], [1.0, 1.0]])
    assert separates(Y, np.array([1.0, 0.5]))
    assert not separates(Y, np.array([1.0, 1.0 - 2**-52]))  # (Y a)_1 = 2^-52 > 0, but too close
    assert not separates(Y, np.array([1.0, 1.0]))           # (Y a)_1 = 0


def exact_products(Y, a):
    """Y a in exact rational arithmetic on the floats as stored."""
    return [sum(Fraction(yij) * Fraction(aj) for yij, aj in zip(row, a.tolist(), strict=True))
            for row in Y.tolist()]


def test_separates_refuses_products_that_underflow():
    # The products are near 2^-1074: each rounds to a multiple of it, and the rounded ones
    # sum to 2^-1074 > 0 while the exact sum is negative. Without an underflow term in the
    # bound (which underflows to 0 itself) separates said True.
    s = 2.0**-537
    Y, a = np.array([[s, s, s]]), np.array([1.501, -1.499, -0.499]) * s
    assert (Y @ a)[0] > 0 and exact_products(Y, a)[0] < 0
    assert not separates(Y, a)
    assert separates(Y, np.array([1.0, 1.0, 1.0]) * 2.0**-400)   # products 2^-937: normal


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 12), dim=st.integers(1, 3))
def test_exact_certificate_never_exists_for_separable_data(seed, n, dim):
    # Gordan: separable data have no y >= 0, y != 0 with Y^T y = 0, whatever e is offered.
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, dim))
    y = np.where(X @ rng.standard_normal(dim) + 0.1 * rng.standard_normal() > 0, 1.0, -1.0)
    Y = normalized_samples(augment(X), y)
    for scale in (1e-12, 1e-6, 1.0):
        assert exact_certificate(Y, -np.abs(scale * rng.standard_normal(n))) is None


@pytest.mark.parametrize("seed", range(5))
def test_ho_kashyap_certificate_on_non_separable_data(seed):
    X, y, _ = teacher_student(60, 3, noise=0.3, random_state=seed)
    assume_non_separable = not is_linearly_separable(X, y)
    clf = HoKashyap(max_iter=20_000).fit(X, y)
    assert assume_non_separable and clf.separable_ is False
    c = clf.certificate_
    Y = normalized_samples(augment(X), np.where(y == clf.classes_[1], 1.0, -1.0))
    assert np.all(c >= 0) and np.isclose(c.sum(), 1) and np.abs(Y.T @ c).max() < 1e-12
    assert not is_linearly_separable(X[c > 0], y[c > 0])   # the support alone is not separable


@pytest.mark.parametrize("params, message", [
    ({"eta": 0}, "eta"), ({"eta": 1.0}, "eta"), ({"eta": "0.5"}, "eta"),
    ({"max_iter": 0}, "max_iter"), ({"max_iter": 2.5}, "max_iter"),
    ({"tol": -1.0}, "tol"), ({"tol": np.inf}, "tol"),
])
def test_ho_kashyap_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        HoKashyap(**params).fit(DHS_X, DHS_LABELS)
