"""Tests of lincls.perceptron: the exactness contract, sklearn agreement, Novikoff."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron
from sklearn.model_selection import learning_curve
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls.datasets import load_breast_cancer, load_digits_4_vs_9, logic_gate, teacher_student
from lincls.perceptron import (
    Perceptron,
    fast_epoch,
    max_margin,
    novikoff_bound,
    perceptron_trace,
    sequential_dot,
    textbook_epoch,
)


def reference_perceptron(X, y, *, eta=1.0, max_iter=1000, fit_intercept=True):
    """The textbook loop in plain Python floats: the exactness contract, written out."""
    rows = [([1.0] if fit_intercept else []) + [float(v) for v in x] for x in X]
    w = [0.0] * len(rows[0])
    errors = []
    for _ in range(max_iter):
        mistakes = 0
        for x, t in zip(rows, y, strict=True):
            activation = 0.0
            for w_j, x_j in zip(w, x, strict=True):
                activation += w_j * x_j
            if t * activation <= 0:
                c = eta * t
                w = [w_j + c * x_j for w_j, x_j in zip(w, x, strict=True)]
                mistakes += 1
        errors.append(mistakes)
        if mistakes == 0:
            break
    return np.array(w), errors


def _fit(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return Perceptron(shuffle=False, **kw).fit(X, y)


# values that mix magnitudes, so that activations cancel and rounding matters
_values = st.sampled_from([-1e16, -7.0, -3.0, -1.0, -0.5, -0.1, 0.0, 1e-8, 0.1, 0.3, 1.0,
                           2.5, 3.0, 1e16]) | st.floats(-10, 10, allow_nan=False, width=64)


@st.composite
def problems(draw):
    n = draw(st.integers(2, 25))
    d = draw(st.integers(1, 5))
    X = np.array(draw(st.lists(st.lists(_values, min_size=d, max_size=d), min_size=n,
                               max_size=n)))
    y = np.array(draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n)))
    y[0], y[-1] = -1, 1  # both classes present
    eta = draw(st.sampled_from([1.0, 0.1, 0.3, 2.0, 1e-3]))
    return X, y, eta


@settings(max_examples=300, deadline=None)
@given(problems(), st.booleans(), st.integers(1, 12))
def test_bit_for_bit_the_plain_loop(problem, fit_intercept, max_iter):
    X, y, eta = problem
    clf = _fit(X, y, eta=eta, max_iter=max_iter, fit_intercept=fit_intercept)
    w_ref, errors = reference_perceptron(X, y, eta=eta, max_iter=max_iter,
                                         fit_intercept=fit_intercept)
    np.testing.assert_array_equal(clf.weights_, w_ref)
    assert clf.history_["errors"].tolist() == errors
    assert clf.n_iter_ == len(errors) and clf.t_ == sum(errors)
    assert clf.converged_ == (errors[-1] == 0)


@settings(max_examples=60, deadline=None)
@given(problems())
def test_fast_epoch_with_a_callback_equals_textbook_epoch(problem):
    X, y, eta = problem
    y = y.astype(float)
    w_fast, w_slow = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    for _ in range(4):
        seen = []
        assert fast_epoch(w_fast, X, y, eta, on_mistake=seen.append) == textbook_epoch(
            w_slow, X, y, eta) == len(seen)
        np.testing.assert_array_equal(w_fast, w_slow)


def test_the_activation_is_summed_left_to_right():
    # 1e16 + 1 - 1e16 is 0 from left to right, 1 in another order
    w, x = np.array([1e16, 1.0, -1e16]), np.ones(3)
    assert sequential_dot(w, x) == 0.0 == (1e16 + 1.0) - 1e16
    X = np.array([[1e16, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1e16], [1.0, 1.0, 1.0]])
    y = np.array([1.0, 1.0, 1.0, 1.0])
    w = np.zeros(3)
    assert textbook_epoch(w, X, y, 1.0) == 4  # the last sample is a mistake: 0 ≤ 0
    np.testing.assert_array_equal(w, [1e16 + 1.0, 2.0, -1e16 + 1.0])


_JIT_SCRIPT = """
import numpy as np, sys
from lincls.datasets import load_breast_cancer, teacher_student
from lincls.perceptron import Perceptron, fast_epoch
from lincls._base import augment
X, y = load_breast_cancer()
out = [Perceptron(shuffle=False, max_iter=7).fit(X, y).weights_,
       Perceptron(random_state=1, max_iter=5).fit(X, y).weights_]
Xt, yt, _ = teacher_student(200, 8, noise=0.1, random_state=3)
w, seen = np.zeros(9), []
fast_epoch(w, augment(Xt), yt.astype(float), 0.3, on_mistake=seen.append)
out += [w, np.array(seen, dtype=float)]
from sklearn.datasets import load_digits
from lincls.multiclass import MulticlassPerceptron
Xd, yd = load_digits(return_X_y=True)
for correction in ("fixed", "absolute"):
    m = MulticlassPerceptron(correction=correction, max_iter=3, random_state=0).fit(Xd, yd)
    out += [m.coef_.ravel(), m.intercept_]
from lincls.relaxation import Relaxation, fractional_correction
out.append(Relaxation(eta=1.3, margin=0.5, random_state=0, max_iter=30).fit(Xt, yt).weights_)
out.append(fractional_correction(Xt, yt, lam=0.7, max_iter=20).w)
sys.stdout.write(repr([v.tolist() for v in out]))
"""


def _run_kernels(disable_jit):
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable_jit else "0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = subprocess.run([sys.executable, "-W", "ignore", "-c", _JIT_SCRIPT], env=env,
                             capture_output=True, text=True, check=True, timeout=600)
    return out.stdout


def test_compiled_kernels_equal_the_plain_python_functions_bit_for_bit():
    """The same functions, compiled and as plain Python (NUMBA_DISABLE_JIT=1)."""
    compiled, plain = _run_kernels(False), _run_kernels(True)
    assert compiled and compiled == plain


@pytest.mark.parametrize("eta", [1.0, 0.5, 0.37])
@pytest.mark.parametrize("seed", range(4))
def test_equals_sklearn_perceptron_exactly(eta, seed):
    separable = seed % 2 == 0
    X, y, _ = teacher_student(300, 20, noise=0.0 if separable else 0.05, random_state=seed)
    ours = _fit(X, y, eta=eta, max_iter=2000 if separable else 15, fit_intercept=False)
    assert ours.converged_ == separable
    # sklearn runs every epoch: after our last (clean) epoch it must make no more updates
    sk = SkPerceptron(fit_intercept=False, shuffle=False, tol=None, eta0=eta, alpha=0.0,
                      max_iter=ours.n_iter_ + 3 if separable else 15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sk.fit(X, y)
    np.testing.assert_array_equal(ours.coef_, sk.coef_)


def test_equals_sklearn_on_digits_and_breast_cancer():
    for X, y, epochs in [(*load_digits_4_vs_9(), 30), (*load_breast_cancer(), 20)]:
        ours = _fit(X, y, max_iter=epochs, fit_intercept=False)
        sk = SkPerceptron(fit_intercept=False, shuffle=False, tol=None, max_iter=epochs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            sk.fit(X, y)
        np.testing.assert_array_equal(ours.coef_, sk.coef_)


def test_and_gate_textbook_example():
    X, y = logic_gate("and")
    clf = Perceptron(shuffle=False).fit(X, y)
    assert clf.converged_ and clf.score(X, y) == 1.0
    w_ref, errors = reference_perceptron(X, y)
    np.testing.assert_array_equal(clf.weights_, w_ref)
    assert clf.history_["errors"][-1] == 0


def test_learning_rate_only_scales_weights_from_zero():
    X, y, _ = teacher_student(200, 10, random_state=3)
    base = _fit(X, y, eta=1.0, max_iter=50)
    for eta in [0.25, 4.0]:  # powers of two: the scaling is exact in floating point
        other = _fit(X, y, eta=eta, max_iter=50)
        np.testing.assert_array_equal(other.coef_, eta * base.coef_)
        assert other.history_["errors"].tolist() == base.history_["errors"].tolist()
    other = _fit(X, y, eta=0.3, max_iter=50)  # any η: same mistakes, same predictions
    assert other.history_["errors"].tolist() == base.history_["errors"].tolist()
    np.testing.assert_array_equal(other.predict(X), base.predict(X))


def test_xor_does_not_converge_and_warns():
    X, y = logic_gate("xor")
    with pytest.warns(ConvergenceWarning, match="max_iter=7"):
        clf = Perceptron(max_iter=7, random_state=0).fit(X, y)
    assert not clf.converged_ and clf.n_iter_ == 7 and len(clf.history_["errors"]) == 7
    assert np.all(clf.history_["errors"] > 0)


@pytest.mark.parametrize("params, message", [
    ({"eta": 0.0}, r"'eta' parameter of Perceptron .* range \(0.0, inf\)"),
    ({"eta": -1}, r"'eta' parameter of Perceptron .* range \(0.0, inf\)"),
    ({"eta": float("nan")}, r"'eta' parameter of Perceptron .* range \(0.0, inf\)"),
    ({"eta": float("inf")}, r"'eta' parameter of Perceptron .* range \(0.0, inf\). Got inf"),
    ({"eta": "1"}, r"'eta' parameter of Perceptron .* range \(0.0, inf\)"),
    ({"max_iter": 0}, r"'max_iter' parameter of Perceptron .* range \[1, inf\)"),
    ({"max_iter": 2.5}, r"'max_iter' parameter of Perceptron .* range \[1, inf\)"),
    ({"shuffle": "yes"}, "'shuffle' parameter of Perceptron must be an instance of 'bool'"),
    ({"fit_intercept": 1}, "'fit_intercept' parameter of Perceptron must be an instance of 'bool'"),
])
def test_bad_parameters_raise(params, message):
    X, y = logic_gate("and")
    with pytest.raises(ValueError, match=message):
        Perceptron(**params).fit(X, y)


def test_bad_data_raise():
    X, y = logic_gate("and")
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Perceptron().fit(bad, y)
    with pytest.raises(ValueError, match="2 classes"):
        Perceptron().fit(X, np.ones(4))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        Perceptron().fit(X, y[:3])


def test_shuffle_is_reproducible_and_works_in_pipeline_and_learning_curve():
    X, y = load_breast_cancer()
    pipe = make_pipeline(StandardScaler(), Perceptron(max_iter=30, random_state=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = clone(pipe).fit(X, y).predict(X)
        b = clone(pipe).fit(X, y).predict(X)
        sizes, train, test = learning_curve(pipe, X, y, train_sizes=[0.3, 1.0], cv=3)
    np.testing.assert_array_equal(a, b)
    assert np.mean(a == y) > 0.9 and test.mean() > 0.85


def test_max_margin_against_closed_form_and_kkt():
    # two points: the margin is half their distance; through the origin it is |x|
    X = np.array([[0.0, 1.0], [0.0, -1.0]])
    w, gamma = max_margin(X, [1, -1], fit_intercept=False)
    np.testing.assert_allclose(w, [0.0, 1.0], atol=1e-12)
    assert gamma == pytest.approx(1.0)
    X, y, _ = teacher_student(40, 3, random_state=0)
    w, gamma = max_margin(X, y)
    Z = y[:, None] * np.hstack([np.ones((40, 1)), X])
    margins = Z @ w
    support = margins < gamma + 1e-7
    assert margins.min() == pytest.approx(gamma) and support.sum() >= 2
    # KKT: w is a non-negative combination of the support vectors
    from scipy.optimize import nnls
    coef, residual = nnls(Z[support].T, w)
    assert residual < 1e-8
    with pytest.raises(ValueError, match="not linearly separable"):
        max_margin(*logic_gate("xor"))


def test_max_margin_keeps_the_sign_of_a_single_class():
    """Labels ±1 are taken as given: one class of -1 points is not turned into +1."""
    X = np.array([[1.0, 1.0], [1.0, -1.0]])
    w, gamma = max_margin(X, [-1, -1], fit_intercept=False)
    np.testing.assert_allclose(w, [-1.0, 0.0], atol=1e-12)
    assert gamma == pytest.approx(1.0)
    w_plus, _ = max_margin(X, [1, 1], fit_intercept=False)
    np.testing.assert_allclose(w_plus, -w, atol=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_novikoff_bound_holds(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(5, 60)), int(rng.integers(1, 6))
    X, y, _ = teacher_student(n, d, random_state=seed)
    X = X + rng.normal(0, 1, d)  # inhomogeneous: the hyperplane misses the origin
    y = np.where((X - X.mean(0)) @ rng.normal(size=d) > 0, 1, -1)
    if len(set(y)) < 2:
        pytest.skip("the random hyperplane left one class only")
    for eta in (1.0, 0.1):
        clf = Perceptron(max_iter=100_000, eta=eta, random_state=seed).fit(X, y)
        assert clf.converged_ and clf.t_ <= novikoff_bound(X, y)


@parametrize_with_checks(
    [Perceptron(random_state=0), Perceptron(shuffle=False, max_iter=50)],
    # a weight n scales the step of a mistake by n; n copies are tested one by one, and
    # the second is often no longer a mistake (tests/test_sample_weight.py: what holds)
    expected_failed_checks=lambda estimator: {
        "check_sample_weight_equivalence_on_dense_data": "a weight n is not n copies"})
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_trace_ends_at_the_fitted_weights_and_records_each_update():
    X, y, _ = teacher_student(80, 3, random_state=4)
    weights, corrected = perceptron_trace(X, y, eta=0.5)
    clf = Perceptron(shuffle=False, eta=0.5).fit(X, y)
    np.testing.assert_array_equal(weights[-1], clf.weights_)
    assert len(corrected) == clf.t_ == len(weights) - 1
    Xa = np.hstack([np.ones((80, 1)), X])
    steps = np.diff(weights, axis=0)
    np.testing.assert_allclose(steps, 0.5 * y[corrected, None] * Xa[corrected])


def test_callback_records_the_weights_after_every_epoch():
    X, y = load_breast_cancer()
    path = []
    with pytest.warns(ConvergenceWarning):
        clf = Perceptron(shuffle=False, max_iter=6).fit(
            X, y, callback=lambda epoch, w: path.append((epoch, w.copy())))
    assert [e for e, _ in path] == list(range(1, clf.n_iter_ + 1)) == list(range(1, 7))
    np.testing.assert_array_equal(path[-1][1], clf.weights_)
    for epochs, (_, w) in enumerate(path[:-1], start=1):  # each is a shorter run's result
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            np.testing.assert_array_equal(
                w, Perceptron(shuffle=False, max_iter=epochs).fit(X, y).weights_)


def test_perceptron_trace_validates_like_the_estimator():
    X, y = logic_gate("and")
    with pytest.raises(ValueError, match="'eta' parameter of perceptron_trace"):
        perceptron_trace(X, y, eta=0.0)
    with pytest.raises(ValueError, match="'max_iter' parameter of perceptron_trace"):
        perceptron_trace(X, y, max_iter=0)


def test_trace_refuses_labels_other_than_plus_minus_one():
    from lincls.discriminant import separating_weights

    """perceptron_trace takes labels as given (the estimators map any two): 0/1 labels
    would run every epoch without separating, so they are a ValueError."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    for refuses in (perceptron_trace, separating_weights):
        with pytest.raises(ValueError, match="-1 and \\+1"):
            refuses(X, [0, 0, 0, 1])
    weights, _ = perceptron_trace(X, [-1, -1, -1, 1])
    assert (np.sign(np.hstack([np.ones((4, 1)), X]) @ weights[-1]) == [-1, -1, -1, 1]).all()
