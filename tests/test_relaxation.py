import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls._base import augment
from lincls.datasets import load_iris, logic_gate, teacher_student
from lincls.relaxation import (
    RTOL,
    Relaxation,
    batch_relaxation_step,
    batch_stability_bound,
    fractional_correction,
    relaxation_correction,
    relaxation_criterion,
)


def separable(n, d, gap=0.2, seed=0):
    """Teacher–student data with no sample closer than ``gap`` to the teacher's plane."""
    X, y, teacher = teacher_student(4 * n, d, random_state=seed)
    keep = np.abs(X @ teacher) > gap
    return X[keep][:n], y[keep][:n]


def iris_subset(standardize):
    """Forty flowers, setosa (+1) vs versicolor (-1), sepal length and width."""
    X, y = load_iris(features=[0, 1])
    rng = np.random.default_rng(0)
    idx = np.r_[rng.choice(50, 20, replace=False), 50 + rng.choice(50, 20, replace=False)]
    X, y = X[idx], np.where(y[idx] == 0, 1, -1)
    return (StandardScaler().fit_transform(X) if standardize else X), y


def normalized(X, y):
    return y[:, None] * augment(X)


@parametrize_with_checks([
    Relaxation(max_iter=100, random_state=0),
    Relaxation(mode="batch", eta=0.05, max_iter=100),
])
# scikit-learn's checks fit capped runs on data that need more epochs: that warning is expected
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- the update rules against their closed forms -------------------------------------------
def test_projection_lands_on_the_hyperplane():
    rng = np.random.default_rng(1)
    w, z = rng.normal(size=4), rng.normal(size=4)
    b = 0.7
    assert relaxation_correction(w, z, b, 1.0) @ z == pytest.approx(b)
    # eta is the fraction of the distance covered: the gap b - w·z shrinks by (1 - eta)
    for eta in (0.3, 1.6):
        gap = b - relaxation_correction(w, z, b, eta) @ z
        assert gap == pytest.approx((1 - eta) * (b - w @ z))


def test_batch_step_is_a_gradient_step_on_the_criterion():
    rng = np.random.default_rng(2)
    Z, w, b, eta = rng.normal(size=(12, 3)), rng.normal(size=3), 1.0, 0.1
    eps = 1e-6
    grad = np.array([(relaxation_criterion(w + eps * e, Z, b)
                      - relaxation_criterion(w - eps * e, Z, b)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(batch_relaxation_step(w, Z, b, eta), w - eta * grad, atol=1e-6)


def test_criterion_is_zero_exactly_on_the_solution_region():
    Z = np.array([[1.0, 0.0], [0.0, 2.0]])
    assert relaxation_criterion(np.array([1.0, 0.5]), Z, 1.0) == 0.0
    assert relaxation_criterion(np.array([1.0, 0.4]), Z, 1.0) == pytest.approx(0.5 * 0.2**2 / 4)
    assert relaxation_criterion(np.zeros(2), Z, 1.0) == pytest.approx(0.5 * (1 + 1 / 4))


def test_stability_bound_equals_two_over_the_largest_curvature():
    assert batch_stability_bound(np.ones((5, 3))) == pytest.approx(2 / 5)
    assert batch_stability_bound(np.eye(3)) == pytest.approx(2.0)


# -- convergence -----------------------------------------------------------------------
@pytest.mark.parametrize("eta", [0.2, 0.5, 1.0, 1.5, 1.9])
@pytest.mark.parametrize("margin", [0.5, 1.0])
def test_single_sample_converges_with_the_margin(eta, margin):
    X, y = separable(60, 3, seed=3)
    clf = Relaxation(eta=eta, margin=margin, max_iter=5000, random_state=0).fit(X, y)
    assert clf.converged_
    assert clf.score(X, y) == 1.0
    # the margin condition w·z > b, up to the stopping tolerance
    assert np.min(y * clf.decision_function(X)) >= margin * (1 - RTOL)
    assert clf.history_["violations"][-1] == 0 and len(clf.history_["loss"]) == clf.n_iter_


def test_over_relaxation_meets_the_margin_strictly_on_the_and_gate():
    X, y = logic_gate("and")
    clf = Relaxation(eta=1.5, margin=1.0, shuffle=False).fit(X, y)
    assert clf.converged_ and np.min(y * clf.decision_function(X)) > 1.0


@pytest.mark.parametrize("fraction", [0.5, 0.9])
def test_batch_converges_below_the_stability_bound(fraction):
    X, y = iris_subset(standardize=True)
    eta = fraction * batch_stability_bound(normalized(X, y))
    clf = Relaxation(mode="batch", eta=eta, max_iter=3000).fit(X, y)
    assert clf.converged_ and clf.score(X, y) == 1.0
    assert np.min(y * clf.decision_function(X)) >= 1 - RTOL
    # gradient descent with eta < 2/L never increases the criterion
    assert np.all(np.diff(clf.history_["loss"]) <= 1e-12)


@pytest.mark.parametrize("eta", [0.5, 1.0, 1.9])
def test_batch_divergence_is_detected_and_reported(eta):
    X, y = iris_subset(standardize=False)
    with pytest.warns(ConvergenceWarning, match=f"diverged at eta={eta:g}"):
        clf = Relaxation(mode="batch", eta=eta).fit(X, y)
    assert not clf.converged_
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.intercept_))
    assert clf.n_iter_ < 100


@pytest.mark.parametrize("eta", [0.5, 1.0, 1.9])
def test_batch_divergence_keeps_the_weights_before_the_rejected_step(eta):
    # The rejected step is finite: what is kept is the weights of the last accepted step,
    # and the warning says so (it used to speak of "the last finite weights").
    from lincls.relaxation import DIVERGENCE_FACTOR

    X, y = iris_subset(standardize=False)
    Z = normalized(X, y)
    with pytest.warns(ConvergenceWarning, match="weights from before this step are kept"):
        clf = Relaxation(mode="batch", eta=eta).fit(X, y)
    w = np.zeros(Z.shape[1])
    for _ in range(clf.n_iter_):
        w = batch_relaxation_step(w, Z, 1.0, eta)
    np.testing.assert_allclose(clf.weights_, w, rtol=1e-12)
    rejected = batch_relaxation_step(w, Z, 1.0, eta)
    assert np.all(np.isfinite(rejected))
    assert relaxation_criterion(rejected, Z, 1.0) > DIVERGENCE_FACTOR * relaxation_criterion(
        np.zeros(Z.shape[1]), Z, 1.0)


def test_non_separable_data_stop_at_max_iter_with_a_warning():
    X, y = logic_gate("xor")
    for mode, eta in (("single", 1.0), ("batch", 0.1)):
        with pytest.warns(ConvergenceWarning, match="did not reach the margin"):
            clf = Relaxation(mode=mode, eta=eta, max_iter=50, random_state=0).fit(X, y)
        assert not clf.converged_ and clf.n_iter_ == 50
        assert np.all(np.isfinite(clf.coef_))


def reference_single_sample(Z, b, eta, max_iter):
    """The textbook loop of DHS Algorithm 9, one sample at a time."""
    w, epochs = np.zeros(Z.shape[1]), 0
    for _ in range(max_iter):
        for z in Z:
            if w @ z < b * (1 - RTOL):
                w = w + eta * (b - w @ z) / (z @ z) * z
        epochs += 1
        if np.all(Z @ w >= b * (1 - RTOL)):
            break
    return w, epochs


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), eta=st.floats(0.3, 1.9), b=st.floats(0.1, 2.0))
def test_fast_sweep_equals_the_textbook_loop(seed, eta, b):
    X, y = separable(15, 2, gap=0.3, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = Relaxation(eta=eta, margin=b, shuffle=False, max_iter=40).fit(X, y)
    expected, epochs = reference_single_sample(normalized(X, y), b, eta, 40)
    np.testing.assert_allclose(clf.weights_, expected, rtol=1e-10, atol=1e-12)
    assert clf.n_iter_ == epochs  # stops when the loop stops, not earlier


def test_shuffling_is_reproducible():
    X, y = separable(40, 3, seed=5)
    a = Relaxation(random_state=7).fit(X, y)
    b = Relaxation(random_state=7).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


# -- validation ------------------------------------------------------------------------
@pytest.mark.parametrize("eta", [0, 2, 2.5, -1, float("nan"), "1"])
def test_eta_outside_the_open_interval_is_rejected(eta):
    X, y = logic_gate("and")
    with pytest.raises(ValueError, match=r"'eta' parameter of Relaxation .* range \(0.0, 2.0\)"):
        Relaxation(eta=eta).fit(X, y)


@pytest.mark.parametrize("params, message", [
    ({"margin": 0}, r"'margin' parameter of Relaxation .* range \(0.0, inf\)"),
    ({"margin": -1.0}, r"'margin' parameter of Relaxation .* range \(0.0, inf\)"),
    ({"margin": float("inf")}, r"'margin' parameter of Relaxation .* range \(0.0, inf\). Got inf"),
    ({"mode": "online"}, "'mode' parameter of Relaxation must be a str among"),
    ({"max_iter": 0}, r"'max_iter' parameter of Relaxation .* range \[1, inf\)"),
    ({"shuffle": "yes"}, "'shuffle' parameter of Relaxation must be an instance of 'bool'"),
])
def test_bad_hyper_parameters(params, message):
    X, y = logic_gate("and")
    with pytest.raises(ValueError, match=message):
        Relaxation(**params).fit(X, y)


def test_zero_sample_without_intercept_is_rejected():
    X = np.array([[0.0, 0.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="non-zero samples"):
        Relaxation(fit_intercept=False).fit(X, [1, -1])


# -- fractional correction ---------------------------------------------------------------
def test_fractional_correction_is_relaxation_without_margin():
    X, y = separable(30, 2, seed=11)
    result = fractional_correction(X, y, lam=1.5)
    assert result.converged and result.errors[-1] == 0
    assert np.all(y * (augment(X) @ result.w) > 0)


def test_fractional_correction_with_lambda_at_most_one_never_crosses():
    X, y = logic_gate("and")
    with pytest.warns(ConvergenceWarning, match="lam=1"):
        result = fractional_correction(X, y, lam=1.0, max_iter=30)
    assert not result.converged


def test_zero_is_a_fixed_point_without_margin():
    X, y = logic_gate("and")
    with pytest.warns(ConvergenceWarning):
        result = fractional_correction(X, y, lam=1.5, max_iter=5, w0=np.zeros(3))
    np.testing.assert_array_equal(result.w, np.zeros(3))


@pytest.mark.parametrize("lam", [0, 2, -0.5])
def test_fractional_correction_validates_lambda(lam):
    X, y = logic_gate("and")
    with pytest.raises(ValueError, match=r"'lam' parameter of .* \(0.0, 2.0\)"):
        fractional_correction(X, y, lam=lam)


def test_works_in_a_pipeline_and_grid_search():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    X, y = load_iris(task="setosa-vs-rest")
    search = GridSearchCV(make_pipeline(StandardScaler(), Relaxation(random_state=0)),
                          {"relaxation__eta": [0.5, 1.5]}, cv=3).fit(X, y)
    assert search.best_score_ == 1.0
