"""Tests of lincls.adaline: Adaline, Widrow–Hoff LMS and mini-batch gradient descent."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDRegressor
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls.adaline import Adaline, adaline_step, mse_gradient, mse_loss
from lincls.datasets import load_breast_cancer, logic_gate, teacher_student
from lincls.least_squares import LeastSquares


@parametrize_with_checks(
    [Adaline(), Adaline(batch_size=4, max_iter=50, random_state=0)],
    # mini-batch steps scale the term of sample i by s_i: equal to copies only to first
    # order in eta (full-batch Adaline passes; tests/test_sample_weight.py: what holds)
    expected_failed_checks=lambda estimator: {} if estimator.batch_size is None else {
        "check_sample_weight_equivalence_on_dense_data": "a weight n is not n copies"})
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def reference_lms(X, y, eta, epochs, batch_size, eta_decay=False):
    """The textbook loop, one sample (or batch) at a time, in the given order."""
    Xa = np.hstack([np.ones((len(X), 1)), X])
    w = np.zeros(Xa.shape[1])
    k = 0
    for _ in range(epochs):
        for start in range(0, len(X), batch_size):
            k += 1
            rate = eta / k if eta_decay else eta
            xb, yb = Xa[start:start + batch_size], y[start:start + batch_size]
            w = w + rate * sum((t - w @ x) * x for x, t in zip(xb, yb, strict=True)) / len(yb)
    return w


# -- the loss and its gradient -------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_gradient_matches_finite_differences(seed):
    rng = np.random.default_rng(seed)
    X, y, w = rng.standard_normal((7, 3)), rng.choice([-1.0, 1.0], 7), rng.standard_normal(3)
    h = 1e-6
    numeric = [(mse_loss(w + h * e, X, y) - mse_loss(w - h * e, X, y)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(mse_gradient(w, X, y), numeric, rtol=1e-6, atol=1e-8)


def test_single_sample_step_is_widrow_hoff():
    w, x, t, eta = np.array([0.5, -1.0]), np.array([2.0, 1.0]), -1.0, 0.1
    np.testing.assert_allclose(adaline_step(w, x[None], np.array([t]), eta),
                               w + eta * (t - w @ x) * x)


# -- convergence to the least-squares solution ------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_full_batch_converges_to_least_squares(seed):
    X, y, _ = teacher_student(80, 4, noise=0.1, random_state=seed)
    ls = LeastSquares().fit(X, y)
    ada = Adaline(eta=0.5, max_iter=20_000, tol=1e-10).fit(X, y)
    assert ada.converged_
    np.testing.assert_allclose(ada.weights_, ls.weights_, atol=1e-8)
    # The loss decreases monotonically for eta below 1 / lambda_max.
    assert np.all(np.diff(ada.history_["loss"]) <= 1e-15)


def test_breast_cancer_standardized():
    X, y = load_breast_cancer()
    X = StandardScaler().fit_transform(X)
    ls = LeastSquares().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ada = Adaline(eta=0.05, max_iter=3000).fit(X, y)
    # Ill-conditioned: weights still differ, but the loss is near the minimum.
    Xa = np.hstack([np.ones((len(X), 1)), X])
    ys = np.where(y == ls.classes_[1], 1.0, -1.0)
    assert mse_loss(ada.weights_, Xa, ys) - mse_loss(ls.weights_, Xa, ys) < 5e-3
    assert ada.score(X, y) > 0.95


def test_eta_decay_online_approaches_least_squares():
    X, y, _ = teacher_student(100, 3, noise=0.1, random_state=0)
    ls = LeastSquares().fit(X, y).weights_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        decay = Adaline(eta=0.2, batch_size=1, eta_decay=True, max_iter=200, random_state=0)
        const = Adaline(eta=0.2, batch_size=1, max_iter=200, random_state=0)
        d_decay = np.linalg.norm(decay.fit(X, y).weights_ - ls)
        d_const = np.linalg.norm(const.fit(X, y).weights_ - ls)
    assert d_decay < d_const


# -- schedules against reference loops and scikit-learn -----------------------------------
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), batch=st.integers(1, 9), decay=st.booleans(),
       epochs=st.integers(1, 5))
def test_mini_batch_matches_reference_loop(seed, batch, decay, epochs):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((9, 2))
    y = np.resize([-1, 1], 9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = Adaline(eta=0.1, batch_size=batch, eta_decay=decay, max_iter=epochs, shuffle=False,
                      tol=0).fit(X, y)
    expected = reference_lms(X, y.astype(float), 0.1, epochs, batch, decay)
    np.testing.assert_allclose(clf.weights_, expected, rtol=1e-12, atol=1e-12)
    assert clf.n_iter_ == epochs and clf.t_ == epochs * -(-9 // batch)


def test_online_equals_sgd_regressor():
    X, y, _ = teacher_student(60, 3, noise=0.1, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = Adaline(eta=0.01, batch_size=1, max_iter=7, shuffle=False).fit(X, y)
        sgd = SGDRegressor(loss="squared_error", penalty=None, learning_rate="constant",
                           eta0=0.01, max_iter=7, tol=None, shuffle=False).fit(X, y)
    np.testing.assert_allclose(ours.coef_.ravel(), sgd.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.intercept_, sgd.intercept_, rtol=1e-10, atol=1e-12)


def test_shuffle_is_reproducible():
    X, y, _ = teacher_student(50, 3, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = Adaline(batch_size=5, max_iter=3, random_state=7).fit(X, y).weights_
        b = Adaline(batch_size=5, max_iter=3, random_state=7).fit(X, y).weights_
        c = Adaline(batch_size=5, max_iter=3, random_state=8).fit(X, y).weights_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# -- history, divergence, never lie -------------------------------------------------------
def test_history_one_value_per_epoch():
    X, y = logic_gate("and")
    with pytest.warns(ConvergenceWarning, match="max_iter=25"):
        clf = Adaline(eta=0.1, max_iter=25).fit(X, y)
    assert clf.n_iter_ == 25 and not clf.converged_
    assert clf.history_["loss"].shape == (25,) and clf.history_["errors"].shape == (25,)
    Xa = np.hstack([np.ones((4, 1)), X])
    assert clf.history_["loss"][-1] == pytest.approx(mse_loss(clf.weights_, Xa, y))


def test_divergence_stops_with_warning_naming_eta():
    X, y = logic_gate("and")
    # lambda_max of the AND gate's (1/M) X^T X is about 1.9: eta = 50 diverges fast.
    with pytest.warns(ConvergenceWarning, match=r"eta=50"):
        clf = Adaline(eta=50.0, max_iter=10_000).fit(X, y)
    assert np.all(np.isfinite(clf.coef_)) and np.isfinite(clf.intercept_[0])
    assert not clf.converged_
    assert np.all(np.isfinite(clf.history_["loss"]))
    assert clf.n_iter_ < 10_000
    assert np.all(np.diff(clf.history_["loss"]) > 0)  # the loss grows every epoch


def test_oscillation_at_two_over_lambda_max():
    X, y = logic_gate("and")
    Xa = np.hstack([np.ones((4, 1)), X])
    lam = np.linalg.eigvalsh(Xa.T @ Xa / 4)
    with pytest.warns(ConvergenceWarning):
        clf = Adaline(eta=2 / lam[-1], max_iter=400).fit(X, y)
    loss = clf.history_["loss"]
    # Neither converges nor diverges: the loss settles on a value above the minimum.
    ls = LeastSquares().fit(X, y)
    assert loss[-1] > mse_loss(ls.weights_, Xa, y) + 1e-3
    assert loss[-1] == pytest.approx(loss[-3], rel=1e-6)


@pytest.mark.parametrize("params, message", [
    ({"eta": 0}, "eta"), ({"eta": -1.0}, "eta"), ({"eta": np.inf}, "eta"),
    ({"max_iter": 0}, "max_iter"), ({"max_iter": 1.5}, "max_iter"),
    ({"batch_size": 0}, "batch_size"), ({"batch_size": 2.0}, "batch_size"),
    ({"eta_decay": "yes"}, "eta_decay"), ({"shuffle": 1}, "shuffle"),
    ({"tol": -1e-3}, "tol"), ({"tol": np.nan}, "tol"), ({"fit_intercept": None}, "fit_intercept"),
])
def test_bad_parameters(params, message):
    X, y = logic_gate("and")
    with pytest.raises(ValueError, match=message):
        Adaline(**params).fit(X, y)


def test_bad_input():
    X, y = logic_gate("and")
    with pytest.raises(ValueError, match="NaN|infinity"):
        Adaline().fit(np.where(X == 1, np.nan, X), y)
    with pytest.raises(ValueError, match="2 classes"):
        Adaline().fit(X, np.ones(4))
