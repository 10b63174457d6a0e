"""Tests of lincls.svm: the same optimum as libsvm, KKT conditions, the hard margin."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls.datasets import load_breast_cancer, load_digits_4_vs_9, load_iris, teacher_student
from lincls.discriminant import max_margin
from lincls.svm import LinearSVM, dual_objective, primal_objective, smo_pair_update


@parametrize_with_checks(
    [LinearSVM(), LinearSVM(C=0.1, solver="smo", max_iter=20000)],
    # weights and copies have the same optimum, but each fit stops within its tol of it
    # (tests/test_sample_weight.py runs the check with tol=1e-10)
    expected_failed_checks=lambda estimator: {
        "check_sample_weight_equivalence_on_dense_data": "equal only within tol"})
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def _sets():
    X1, y1, _ = teacher_student(300, 10, noise=0.1, random_state=0)
    X2, y2, _ = teacher_student(200, 5, random_state=1)
    X3, y3 = load_breast_cancer()
    X4, y4 = load_iris(task="versicolor-vs-virginica")
    X5, y5 = load_digits_4_vs_9()
    return {
        "noisy teacher-student": (X1, y1),
        "shifted separable": (X2 + 3.0, y2),
        "breast cancer": (StandardScaler().fit_transform(X3), y3),
        "iris versicolor-virginica": (X4, y4),
        "digits 4 vs 9": (X5 / 16.0, y5),
    }


SETS = _sets()


def _svc_alpha(svc, n):
    alpha = np.zeros(n)
    alpha[svc.support_] = np.abs(svc.dual_coef_.ravel())
    return alpha


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("name", list(SETS))
def test_same_objective_as_svc(name, C):
    X, y = SETS[name]
    ours = LinearSVM(C=C).fit(X, y)
    assert ours.converged_
    svc = SVC(kernel="linear", C=C, tol=1e-6).fit(X, y)
    p_ours = primal_objective(ours.coef_, ours.intercept_[0], X, y, C)
    p_svc = primal_objective(svc.coef_, svc.intercept_[0], X, y, C)
    d_svc = dual_objective(_svc_alpha(svc, len(y)), X, y)
    assert p_ours == pytest.approx(ours.objective_)
    # Same optimum to 1e-4 relative. libsvm stops on the dual, whose accuracy ε moves w
    # by about √ε, so its primal value can lag behind: ours may be lower, never higher.
    assert p_ours <= p_svc * (1 + 1e-4)
    # weak duality: no primal value is below a dual value, so ours is within 1e-4 of P*
    assert d_svc <= p_ours * (1 + 1e-10)
    assert (p_ours - d_svc) / p_ours <= 1e-4
    # the predictions of the two agree except for samples right on the boundary
    assert np.mean(ours.predict(X) != svc.predict(X)) <= 0.01


def _assert_kkt(svm, X, y, tol):
    """KKT of the hard margin: feasibility, α ≥ 0, complementarity, stationarity."""
    w, b, alpha = svm.coef_.ravel(), svm.intercept_[0], svm.alpha_
    margins = y * (X @ w + b)
    scale = alpha.sum()
    assert np.all(margins >= 1 - tol)                                 # primal feasible
    assert np.all(alpha >= 0)                                         # dual feasible
    assert np.abs(alpha * (margins - 1)).sum() <= tol * scale         # complementarity
    np.testing.assert_allclose(w, X.T @ (alpha * y), atol=tol * np.linalg.norm(w))  # ∇_w L = 0
    if svm.fit_intercept:
        assert abs(alpha @ y) <= tol * scale                          # ∂L/∂b = 0
    np.testing.assert_allclose(margins[svm.support_], 1.0, atol=tol)   # SVs on the margin


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hard_margin_kkt(seed, fit_intercept):
    X, y, _ = teacher_student(200, 5, random_state=seed)
    svm = LinearSVM(C=np.inf, fit_intercept=fit_intercept).fit(X, y)
    assert svm.converged_
    _assert_kkt(svm, X, y, tol=1e-4)
    # the margin is the smallest distance of a sample to the hyperplane
    dist = y * (X @ svm.coef_.ravel() + svm.intercept_[0]) / np.linalg.norm(svm.coef_)
    assert dist.min() == pytest.approx(svm.margin_, rel=1e-4)


def test_support_vectors_carry_the_weight():
    X, y, _ = teacher_student(200, 5, random_state=1)
    svm = LinearSVM(C=np.inf, tol=1e-8).fit(X, y)
    assert len(svm.support_) <= X.shape[1] + 1      # in general position: at most d + 1
    np.testing.assert_allclose(svm.dual_coef_ @ svm.support_vectors_, svm.coef_, rtol=1e-6)
    np.testing.assert_array_equal(svm.support_vectors_, X[svm.support_])


def test_hard_margin_textbook_example():
    # the classes y = -1 at x2 = 0 and y = +1 at x2 = 2: the hyperplane x2 = 1, margin 1
    X = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    y = np.array([-1, -1, -1, 1, 1])
    for solver in ("ipm", "smo"):
        svm = LinearSVM(C=np.inf, solver=solver, tol=1e-8).fit(X, y)
        np.testing.assert_allclose(svm.coef_, [[0.0, 1.0]], atol=1e-6)
        np.testing.assert_allclose(svm.intercept_, [-1.0], atol=1e-6)
        assert svm.margin_ == pytest.approx(1.0, abs=1e-6)
        assert svm.alpha_.sum() == pytest.approx(1.0, abs=1e-6)   # Σα = |w|²


def test_no_bias_hard_margin_is_the_least_distance_solution():
    """The perceptron of optimal stability = hard margin without bias = min |w| s.t. y w·x ≥ 1."""
    X, y, _ = teacher_student(120, 10, random_state=3)
    svm = LinearSVM(C=np.inf, fit_intercept=False, tol=1e-8).fit(X, y)
    # least-distance programming by NNLS (Lawson & Hanson): min |w| s.t. y_i w·x_i >= 1
    w_unit, gamma = max_margin(X, y, fit_intercept=False)
    w_exact = w_unit / gamma
    np.testing.assert_allclose(svm.coef_.ravel(), w_exact, rtol=1e-6, atol=1e-8)
    kappa = y * (X @ w_exact) / np.linalg.norm(w_exact)
    assert svm.margin_ == pytest.approx(kappa.min(), rel=1e-6)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("C", [0.1, 10.0, np.inf])
def test_smo_and_ipm_agree(C, fit_intercept):
    X, y, _ = teacher_student(60, 3, noise=0.0 if np.isinf(C) else 0.1, random_state=4)
    ipm = LinearSVM(C=C, fit_intercept=fit_intercept, tol=1e-8).fit(X, y)
    smo = LinearSVM(C=C, fit_intercept=fit_intercept, solver="smo", tol=1e-8,
                    max_iter=100_000).fit(X, y)
    assert ipm.converged_ and smo.converged_
    assert smo.objective_ == pytest.approx(ipm.objective_, rel=1e-5)
    np.testing.assert_allclose(smo.coef_, ipm.coef_, rtol=1e-3, atol=1e-4)
    assert set(smo.support_) == set(ipm.support_)


@pytest.mark.parametrize("solver", ["ipm", "smo"])
def test_hard_margin_on_nonseparable_data_warns_and_stops(solver):
    X, y, _ = teacher_student(200, 5, noise=0.1, random_state=0)
    with pytest.warns(ConvergenceWarning, match="separable"):
        svm = LinearSVM(C=np.inf, solver=solver, max_iter=500).fit(X, y)
    assert not svm.converged_ and svm.n_iter_ <= 500


def test_soft_margin_kkt_and_support_vectors():
    X, y = SETS["noisy teacher-student"]
    C = 1.0
    svm = LinearSVM(C=C, tol=1e-8).fit(X, y)
    m = y * svm.decision_function(X)
    a = svm.alpha_
    assert np.all((a >= 0) & (a <= C))
    tol = 1e-5
    assert np.all(a[m > 1 + tol] < tol * C)                 # beyond the margin: α = 0
    assert np.all(a[m < 1 - tol] > C * (1 - tol))           # inside it: α = C
    assert np.all(m[svm.support_] <= 1 + tol)
    assert abs(svm.dual_coef_.sum()) < 1e-6                 # Σ α_i y_i = 0
    hinge = np.maximum(0, 1 - m).sum()
    assert svm.objective_ == pytest.approx(0.5 / svm.margin_**2 + C * hinge)


def test_liblinear_solves_a_different_problem():
    """LinearSVC (dual coordinate descent) penalizes the bias: a worse standard objective."""
    rng = np.random.default_rng(0)  # two clouds far from the origin: a large bias is needed
    X = np.r_[rng.normal([8, 0], 1, (50, 2)), rng.normal([12, 0], 1, (50, 2))]
    y = np.r_[-np.ones(50), np.ones(50)]
    ours = LinearSVM(C=1.0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lib = LinearSVC(loss="hinge", C=1.0, max_iter=100_000, tol=1e-8).fit(X, y)
    p_lib = primal_objective(lib.coef_, lib.intercept_[0], X, y, 1.0)
    assert p_lib > 2 * ours.objective_
    # ... whose own objective, ½(|w|² + b²) + C Σ hinge, liblinear does minimize better
    own = lambda w, b: 0.5 * (w @ w + b * b) + np.maximum(0, 1 - y * (X @ w + b)).sum()  # noqa: E731
    assert own(lib.coef_.ravel(), lib.intercept_[0]) < own(ours.coef_.ravel(), ours.intercept_[0])


def test_accepts_any_labels_and_matches_signs():
    X, y = SETS["shifted separable"]
    a = LinearSVM().fit(X, y)
    b = LinearSVM().fit(X, np.where(y > 0, "yes", "no"))
    np.testing.assert_allclose(a.coef_, b.coef_)
    assert list(b.classes_) == ["no", "yes"]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([0.5, 2.0, np.inf]))
def test_smo_pair_update_is_an_exact_constrained_line_minimization(seed, C):
    rng = np.random.default_rng(seed)
    n = 8
    X = rng.standard_normal((n, 2))
    y = rng.choice([-1.0, 1.0], n)
    alpha = rng.uniform(0, 1.0 if np.isinf(C) else C, n)
    grad = y * (X @ (X.T @ (alpha * y))) - 1.0
    i, j = rng.choice(n, 2, replace=False)
    K = X @ X.T
    ai, aj = smo_pair_update(alpha, grad, i, j, y, K[i, i], K[j, j], K[i, j], C)
    new = alpha.copy()
    new[i], new[j] = ai, aj
    assert y @ new == pytest.approx(y @ alpha)                       # equality constraint kept
    assert np.all(new >= -1e-12) and np.all(new <= C + 1e-12)        # box kept
    f = lambda a: -dual_objective(a, X, y)  # noqa: E731  (to be minimized)
    assert f(new) <= f(alpha) + 1e-12
    # no feasible point on the same line does better (reference: a fine grid)
    ts = np.linspace(-3, 3, 601)
    for t in ts:
        trial = alpha.copy()
        trial[i] += y[i] * t
        trial[j] -= y[j] * t
        if np.all(trial >= 0) and np.all(trial <= C):
            assert f(new) <= f(trial) + 1e-9


@pytest.mark.parametrize("kwargs", [dict(C=0), dict(C=-1.0), dict(C="big"), dict(max_iter=0),
                                    dict(max_iter=2.5), dict(tol=0), dict(solver="cd"),
                                    dict(fit_intercept="yes")])
def test_bad_hyper_parameters(kwargs):
    X, y = SETS["shifted separable"]
    with pytest.raises(ValueError):
        LinearSVM(**kwargs).fit(X, y)


def test_bad_data():
    with pytest.raises(ValueError, match="2 classes"):
        LinearSVM().fit([[0.0], [1.0], [2.0]], [0, 1, 2])
    with pytest.raises(ValueError):
        LinearSVM().fit([[0.0], [np.nan]], [0, 1])


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid:RuntimeWarning")
@pytest.mark.parametrize("solver", ["ipm", "smo"])
def test_overflowing_gram_matrix_raises(solver):
    # x_i · x_j of inputs near float64's largest value overflows: a ValueError that says so
    # (SMO used to fail with "attempt to get argmin of an empty sequence")
    X = np.finfo(np.float64).max * np.random.default_rng(0).uniform(size=(10, 2))
    with pytest.raises(ValueError, match="non-finite Gram matrix"):
        LinearSVM(solver=solver).fit(X, [0, 1] * 5)


@settings(max_examples=25, deadline=None)
@given(st.integers(8, 40), st.integers(1, 5), st.sampled_from([0.1, 1.0, 10.0]),
       st.floats(0.1, 0.9), st.integers(0, 2**31 - 1))
def test_random_sets_never_worse_than_libsvm(n, d, C, share, seed):
    """On tiny random sets libsvm can need millions of steps, so it is capped here. Its
    iterates stay feasible, so its primal value bounds P* from above and its dual value
    from below, converged or not; ours must lie between them."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.1, 10.0, d) + rng.uniform(-3, 3, d)
    y = np.where(rng.random(n) < share, 1, -1)
    y[:2] = [1, -1]                                   # both classes present
    ours = LinearSVM(C=C).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svc = SVC(kernel="linear", C=C, tol=1e-6, max_iter=200_000).fit(X, y)
    p_ours = primal_objective(ours.coef_, ours.intercept_[0], X, y, C)
    p_svc = primal_objective(svc.coef_, svc.intercept_[0], X, y, C)
    d_svc = dual_objective(_svc_alpha(svc, n), X, y)
    assert ours.converged_
    assert p_ours <= p_svc * (1 + 1e-4) + 1e-10
    assert d_svc <= p_ours * (1 + 1e-10) + 1e-10
    assert np.all((ours.alpha_ >= 0) & (ours.alpha_ <= C))


def test_a_tol_below_rounding_warns_instead_of_overflowing():
    """Asked for more accuracy than rounding allows (tol=1e-8 at C=100 on the svm
    chapter's petals; 1e-7 converges in 13 iterations), a ratio s/α or ξ/η of the
    interior point leaves the float range: the fit stops with finite weights and one
    ConvergenceWarning at the caller's line, not a ValueError from the Cholesky solve or
    numpy's own warnings."""
    X, y = load_iris(task="versicolor-vs-virginica",
                     features=["petal length (cm)", "petal width (cm)"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        svm = LinearSVM(C=100, tol=1e-8).fit(X, y)
    assert [w.category for w in caught] == [ConvergenceWarning], [str(w.message) for w in caught]
    assert "increase tol" in str(caught[0].message)
    assert caught[0].filename == __file__
    assert not svm.converged_ and np.isfinite(svm.coef_).all()
    assert LinearSVM(C=100, tol=1e-7).fit(X, y).converged_
