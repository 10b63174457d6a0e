"""Tests of lincls.logistic and lincls.margin: scikit-learn's optimum, separable data,
the averaged and voted perceptron, Fisher's discriminant as least squares."""

import tracemalloc
import warnings

import numpy as np
import pytest
from scipy.optimize import approx_fprime
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls.datasets import load_breast_cancer, load_iris, teacher_student
from lincls.least_squares import mse_solution
from lincls.logistic import (
    LogisticRegression,
    logistic_gradient,
    logistic_hessian,
    logistic_loss,
    newton_step,
)
from lincls.margin import MARGIN_LOSSES, AveragedPerceptron, FisherDiscriminant, VotedPerceptron
from lincls.perceptron import Perceptron


@parametrize_with_checks(
    [LogisticRegression(), LogisticRegression(C=1.0),
     AveragedPerceptron(), VotedPerceptron(), FisherDiscriminant()],
    # the check's data (15 samples, 30 features) are separable: unpenalized, no weights
    # exist and each fit stops at its first separating Newton iterate
    expected_failed_checks=lambda estimator: {
        "check_sample_weight_equivalence_on_dense_data": "separable: no optimum to agree on"}
    if isinstance(estimator, LogisticRegression) and estimator.C == np.inf else {})
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_gradient_and_hessian_are_the_derivatives():
    X, y, _ = teacher_student(50, 4, noise=0.2, random_state=0)
    Xa = np.hstack([np.ones((50, 1)), X])
    w = np.random.default_rng(0).standard_normal(5)
    for C in (np.inf, 0.5):
        num = approx_fprime(w, logistic_loss, 1e-7, Xa, y, C)
        np.testing.assert_allclose(logistic_gradient(w, Xa, y, C), num, rtol=1e-5, atol=1e-5)
        num_h = np.array([approx_fprime(w, lambda v, k=k, C=C: logistic_gradient(v, Xa, y, C)[k],
                                        1e-7) for k in range(5)])
        np.testing.assert_allclose(logistic_hessian(w, Xa, C), num_h, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("C", [np.inf, 1.0, 0.01])
@pytest.mark.parametrize("seed", [0, 1])
def test_same_coefficients_as_sklearn(C, seed):
    X, y, _ = teacher_student(2000, 10, noise=0.2, random_state=seed)
    X = X + np.random.default_rng(seed).standard_normal(10)   # a non-zero bias
    ours = LogisticRegression(C=C).fit(X, y)
    assert ours.converged_ and not ours.separable_
    for solver in ("newton-cholesky", "lbfgs"):
        sk = SkLogisticRegression(C=C, solver=solver, tol=1e-12, max_iter=10_000).fit(X, y)
        np.testing.assert_allclose(ours.coef_, sk.coef_, atol=1e-6)
        np.testing.assert_allclose(ours.intercept_, sk.intercept_, atol=1e-6)
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-6)
    assert np.all(np.diff(ours.history_["loss"]) <= 1e-9)   # Newton with line search descends


def test_separable_data_warn_and_stop():
    X, y = load_breast_cancer()
    X = StandardScaler().fit_transform(X)
    with pytest.warns(ConvergenceWarning, match="separable"):
        clf = LogisticRegression().fit(X, y)
    assert clf.separable_ and not clf.converged_ and clf.score(X, y) == 1.0
    assert clf.n_iter_ < clf.max_iter
    # the penalized problem has a minimizer: it converges without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert LogisticRegression(C=1.0).fit(X, y).converged_


def test_newton_step_makes_no_copy_of_the_data():
    # the gradient, the Hessian (summed in blocks of rows) and the line search work on
    # vectors of activations: a step allocates far less than one more copy of X
    X, y, _ = teacher_student(20_000, 30, noise=0.2, random_state=3)
    Xa = np.hstack([np.ones((len(X), 1)), X])
    w = np.random.default_rng(3).standard_normal(31) * 0.1
    loss = logistic_loss(w, Xa, y)
    tracemalloc.start()
    try:
        w_new, loss_new, decrement = newton_step(w, loss, Xa, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < Xa.nbytes / 2
    assert loss_new < loss and decrement > 0
    np.testing.assert_allclose(loss_new, logistic_loss(w_new, Xa, y))


def test_bounded_iterations_warn():
    X, y, _ = teacher_student(500, 5, noise=0.2, random_state=2)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        clf = LogisticRegression(max_iter=1).fit(X, y)
    assert clf.n_iter_ == 1 and not clf.converged_


@pytest.mark.parametrize("params", [{"C": 0.0}, {"C": -1.0}, {"max_iter": 0}, {"tol": 0.0},
                                    {"fit_intercept": "yes"}])
def test_bad_parameters(params):
    with pytest.raises(ValueError):
        LogisticRegression(**params).fit([[0.0], [1.0]], [0, 1])


def test_log_proba_has_no_underflow():
    clf = LogisticRegression(C=1.0).fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    far = np.array([[1e4]])
    assert np.isfinite(clf.predict_log_proba(far)).all()
    np.testing.assert_allclose(np.exp(clf.predict_log_proba([[1.0]])), clf.predict_proba([[1.0]]))


def test_margin_losses_bound_the_errors():
    m = np.linspace(-3, 3, 601)
    zero_one = MARGIN_LOSSES["0–1 (mistakes, m ≤ 0)"](m)
    for name in ("hinge (SVM)", "logistic", "squared (Adaline, MSE)"):
        assert np.all(MARGIN_LOSSES[name](m) >= zero_one - 1e-12), name


def test_averaged_is_the_count_weighted_mean_of_the_iterates():
    X, y, _ = teacher_student(200, 5, noise=0.1, random_state=0)
    avg = AveragedPerceptron(max_iter=5).fit(X, y)
    vote = VotedPerceptron(max_iter=5).fit(X, y)
    W, c = vote.weights_, vote.counts_
    assert c.sum() == 5 * len(y) and c[0] == 0  # every visit counts once; w_0 = 0 none
    np.testing.assert_allclose(avg.weights_, c @ W / c.sum())
    # the last iterate is the perceptron's own weights after 5 epochs
    last = Perceptron(shuffle=False, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        last.fit(X, y)
    np.testing.assert_allclose(avg.last_weights_, last.weights_)


def test_voted_perceptron_mistake_bound_on_separable_data():
    X, y, _ = teacher_student(300, 5, random_state=4)
    from lincls.perceptron import novikoff_bound
    vote = VotedPerceptron(max_iter=1000).fit(X, y)
    assert vote.converged_ and vote.t_ <= novikoff_bound(X, y)
    Xa = np.hstack([np.ones((len(X), 1)), X])
    assert np.all(y * (Xa @ vote.weights_[-1]) > 0)     # the last vector separates
    assert vote.score(X, y) >= 0.95                      # the vote nearly does


def test_fisher_is_least_squares_with_targets_n_over_n_c():
    X, y = load_iris(task="versicolor-vs-virginica")
    s = np.where(y == np.unique(y)[1], 1.0, -1.0)
    n, n_pos = len(s), np.sum(s > 0)
    targets = np.where(s > 0, n / n_pos, n / (n - n_pos))     # b_i for the normalized rows
    Y = s[:, None] * np.hstack([np.ones((n, 1)), X])
    a = mse_solution(Y, targets)
    fisher = FisherDiscriminant().fit(X, y)
    scale = a[1:] @ fisher.coef_.ravel() / (fisher.coef_ @ fisher.coef_.T).item()
    np.testing.assert_allclose(a[1:], scale * fisher.coef_.ravel(), rtol=1e-8)
    np.testing.assert_allclose(a[0], scale * fisher.intercept_[0], rtol=1e-8)
    # and the direction is that of scikit-learn's LDA
    lda = LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    cos = (lda.coef_ @ fisher.coef_.T).item() / (np.linalg.norm(lda.coef_)
                                                 * np.linalg.norm(fisher.coef_))
    assert cos == pytest.approx(1.0, abs=1e-10)
