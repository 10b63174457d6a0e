"""Tests of lincls.kernels: the dual perceptron equals the primal one in feature space,
the kernel SVM reaches libsvm's optimum, the estimator contract."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_circles, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls.datasets import logic_gate
from lincls.kernels import (
    KernelPerceptron,
    KernelSVM,
    kernel_dual_objective,
    kernel_matrix,
    polynomial_feature_map,
)
from lincls.perceptron import Perceptron


@parametrize_with_checks(
    [KernelPerceptron(max_iter=50), KernelSVM(),
     KernelSVM(kernel="poly", degree=2, fit_intercept=False)],
    # weights and copies have the same optimum, but each fit stops within its tol of it
    # (tests/test_sample_weight.py runs the check with tol=1e-10)
    expected_failed_checks=lambda estimator: {
        "check_sample_weight_equivalence_on_dense_data": "equal only within tol"}
    if isinstance(estimator, KernelSVM) else {})
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf"])
def test_kernel_matrix_matches_sklearn(kernel):
    from sklearn.metrics.pairwise import pairwise_kernels
    rng = np.random.default_rng(0)
    X, Z = rng.standard_normal((30, 4)), rng.standard_normal((20, 4))
    params = {"linear": {}, "poly": {"gamma": 0.5, "degree": 3, "coef0": 1.0},
              "rbf": {"gamma": 0.7}}[kernel]
    ours = kernel_matrix(X, Z, kernel=kernel, **params)
    np.testing.assert_allclose(ours, pairwise_kernels(X, Z, metric=kernel, **params),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_feature_map_inner_products_are_the_kernel(degree):
    rng = np.random.default_rng(degree)
    X = rng.standard_normal((15, 3))
    phi = polynomial_feature_map(X, degree=degree, gamma=0.5, coef0=2.0)
    K = kernel_matrix(X, X, kernel="poly", gamma=0.5, degree=degree, coef0=2.0)
    np.testing.assert_allclose(phi @ phi.T, K, rtol=1e-10, atol=1e-12 * np.abs(K).max())


def _separable_in_feature_space(n, d, degree, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    phi = polynomial_feature_map(X, degree=degree)
    m = phi @ rng.standard_normal(phi.shape[1])
    keep = np.abs(m) > 0.3 * m.std()
    return X[keep], np.where(m[keep] > 0, 1, -1), phi[keep]


@pytest.mark.parametrize("seed", [0, 1])
def test_dual_perceptron_is_the_primal_perceptron_in_feature_space(seed):
    X, y, phi = _separable_in_feature_space(400, 3, 2, seed)
    dual = KernelPerceptron(kernel="poly", degree=2, fit_intercept=False).fit(X, y)
    primal = Perceptron(fit_intercept=False, shuffle=False).fit(phi, y)
    sk = SkPerceptron(fit_intercept=False, shuffle=False, tol=None, eta0=1.0,
                      max_iter=dual.n_iter_).fit(phi, y)
    assert dual.converged_ and dual.t_ == primal.t_
    np.testing.assert_allclose(dual.decision_function(X), phi @ primal.coef_.ravel(),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(dual.predict(X), sk.predict(phi))
    # w = Σ α_j y_j φ(x_j): the mistake counts rebuild the primal weights
    np.testing.assert_allclose(dual.dual_coef_ @ phi[dual.support_], primal.coef_, atol=1e-9)


def test_dual_perceptron_with_bias_is_the_clamped_input_perceptron():
    X, y, phi = _separable_in_feature_space(300, 2, 2, 3)
    dual = KernelPerceptron(kernel="poly", degree=2).fit(X, y)
    primal = Perceptron(shuffle=False).fit(phi, y)        # clamped input (1, φ(x))
    assert dual.t_ == primal.t_
    np.testing.assert_allclose(dual.decision_function(X), primal.decision_function(phi),
                               rtol=1e-9, atol=1e-9)
    assert dual.intercept_[0] == pytest.approx(primal.intercept_[0])


def test_xor_needs_a_kernel():
    X, y = logic_gate("xor")
    with pytest.warns(ConvergenceWarning):
        linear = KernelPerceptron(kernel="linear", max_iter=20).fit(X, y)
    assert not linear.converged_ and linear.score(X, y) < 1
    assert KernelPerceptron(kernel="poly", degree=2).fit(X, y).score(X, y) == 1


def test_mistake_bound_in_feature_space():
    X, y = make_circles(200, noise=0.05, factor=0.4, random_state=0)
    clf = KernelPerceptron(kernel="poly", degree=2, fit_intercept=False).fit(X, y)
    hard = KernelSVM(kernel="poly", degree=2, gamma=1.0, coef0=1.0, C=np.inf,
                     fit_intercept=False, tol=1e-8).fit(X, y)
    assert clf.converged_ and hard.converged_
    # at the hard-margin optimum |w|² = Σ α, so γ² = 1 / Σ α; R² = max K(x, x)
    R2 = np.max(np.diag(kernel_matrix(X, X, kernel="poly", degree=2, gamma=1.0, coef0=1.0)))
    assert clf.t_ <= R2 * hard.alpha_.sum()


def _svc_alpha(svc, n):
    alpha = np.zeros(n)
    alpha[svc.support_] = np.abs(svc.dual_coef_.ravel())
    return alpha


@pytest.mark.parametrize("C", [0.1, 1.0, 100.0])
@pytest.mark.parametrize("kernel, params", [("rbf", {"gamma": 1.0}),
                                            ("rbf", {"gamma": "scale"}),
                                            ("poly", {"degree": 3, "gamma": 1.0, "coef0": 1.0})])
def test_same_dual_objective_as_svc(kernel, params, C):
    X, y = make_moons(300, noise=0.3, random_state=0)
    ours = KernelSVM(C=C, kernel=kernel, **params).fit(X, y)
    svc = SVC(C=C, kernel=kernel, tol=1e-5, **params).fit(X, y)
    signs = np.where(y == 1, 1.0, -1.0)
    K = kernel_matrix(X, X, kernel=kernel, gamma=ours._gamma, degree=params.get("degree", 3),
                      coef0=params.get("coef0", 0.0))
    d_svc = kernel_dual_objective(_svc_alpha(svc, len(y)), K, signs)
    assert ours.converged_
    assert ours.objective_ == pytest.approx(kernel_dual_objective(ours.alpha_, K, signs))
    assert ours.objective_ == pytest.approx(d_svc, rel=1e-4)
    assert np.all((ours.alpha_ >= 0) & (ours.alpha_ <= C))
    assert abs(ours.alpha_ @ signs) <= 1e-9 * C * len(y)
    assert np.mean(ours.predict(X) != svc.predict(X)) <= 0.01
    np.testing.assert_allclose(ours.intercept_, svc.intercept_,
                               atol=0.05 * (1 + abs(svc.intercept_[0])))


def test_bounded_and_warns():
    X, y = make_moons(200, noise=0.3, random_state=1)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        svm = KernelSVM(C=100.0, max_iter=5).fit(X, y)
    assert svm.n_iter_ == 5 and not svm.converged_
    with pytest.warns(ConvergenceWarning, match="separable"):
        kp = KernelPerceptron(kernel="linear", max_iter=3).fit(X, y)
    assert kp.n_iter_ == 3


@pytest.mark.parametrize("params", [{"kernel": "sigmoid"}, {"gamma": -1.0}, {"degree": 0},
                                    {"C": 0.0}, {"max_iter": 0}, {"tol": -1.0},
                                    {"gamma": "auto"}])
def test_bad_parameters(params):
    X, y = make_moons(20, random_state=0)
    with pytest.raises(ValueError):
        KernelSVM(**params).fit(X, y)


def test_bad_data():
    with pytest.raises(ValueError, match="NaN"):
        KernelPerceptron().fit([[np.nan, 1.0], [0.0, 1.0]], [0, 1])
    with pytest.raises(ValueError, match="2 classes"):
        KernelSVM().fit([[0.0], [1.0], [2.0]], [0, 1, 2])


# Inputs near float64's largest value: X.var() overflows to inf, so gamma="scale" is 0 and
# the RBF kernel exp(-0 · inf) is NaN; the linear and polynomial kernels overflow to inf.
HUGE_X = np.finfo(np.float64).max * np.random.default_rng(0).uniform(size=(10, 2))
HUGE_Y = np.array([0, 1] * 5)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid:RuntimeWarning")
@pytest.mark.parametrize("estimator", [
    KernelSVM(), KernelSVM(kernel="linear"), KernelSVM(kernel="poly"),
    KernelSVM(fit_intercept=False), KernelPerceptron(kernel="linear"), KernelPerceptron(),
    KernelPerceptron(kernel="rbf", gamma="scale")], ids=repr)
def test_non_finite_kernel_raises(estimator):
    with pytest.raises(ValueError, match="non-finite kernel"):
        estimator.fit(HUGE_X, HUGE_Y)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid:RuntimeWarning")
def test_non_finite_kernel_at_prediction_raises():
    # Trained on the corners of the unit square, asked about points near float64's largest
    # value: |x - z|² = |x|² + |z|² - 2 x · z is inf - inf.
    clf = KernelSVM(kernel="rbf", gamma=1.0).fit(*logic_gate("xor"))
    with pytest.raises(ValueError, match="non-finite kernel"):
        clf.predict(HUGE_X)


def test_compiled_and_python_loops_agree():
    """The numba loop and the plain-Python function it compiles give the same weights."""
    from lincls.kernels import _KINDS, kernel_perceptron_epoch, lazy_kernel
    X, y, _ = _separable_in_feature_space(200, 2, 2, 5)
    y = y.astype(float)
    K = lazy_kernel(X, _KINDS["poly"], 1.0, 2, 1.0)
    a1, f1 = np.zeros(len(y)), np.zeros(len(y))
    a2, f2 = np.zeros(len(y)), np.zeros(len(y))
    order = np.arange(len(y))
    kernel_perceptron_epoch(a1, f1, y, order, K)
    K2 = lazy_kernel(X, _KINDS["poly"], 1.0, 2, 1.0)
    import lincls.kernels as km
    py_row = km._kernel_row.py_func
    orig = km._kernel_row
    try:
        km._kernel_row = py_row
        kernel_perceptron_epoch.py_func(a2, f2, y, order, K2)
    finally:
        km._kernel_row = orig
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_allclose(f1, f2, rtol=1e-12)
