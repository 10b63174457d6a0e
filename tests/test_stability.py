"""Tests of lincls.stability and lincls.theory: against exact optima, closed forms and
simulations of the teacher–student scenario (N ≥ 200, error bars from repetitions)."""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

from lincls import theory
from lincls.datasets import random_labels, teacher_student
from lincls.metrics import generalization_error, stabilities
from lincls.perceptron import Perceptron, perceptron_trace
from lincls.stability import (
    AdaTron,
    Hebb,
    Minover,
    adatron_batch,
    exact_optimal_stability,
    hebb_weights,
    least_stable,
    minover_batch,
    minover_step,
    minover_update,
    rosenblatt_batch,
    signed_gram,
)


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """The matrices here are small; one BLAS thread avoids oversubscribing the machine."""
    with threadpool_limits(1):
        yield


def reference_optimum(X, y):
    """κ_opt from NNLS, checked to be feasible and compared with a plain QP solve."""
    kappa, u = exact_optimal_stability(X, y)
    assert np.min(y * (X @ u)) >= 1 - 1e-8
    return kappa, u


@pytest.mark.parametrize("seed", range(4))
def test_exact_optimum_agrees_with_generic_qp(seed):
    X, y, _ = teacher_student(30, 6, random_state=seed)
    kappa, u = reference_optimum(X, y)
    Z = y[:, None] * X
    qp = minimize(lambda v: v @ v, x0=u * 1.5, jac=lambda v: 2 * v, method="SLSQP",
                  constraints=[{"type": "ineq", "fun": lambda v: Z @ v - 1, "jac": lambda v: Z}])
    assert qp.success
    assert kappa == pytest.approx(1 / np.linalg.norm(qp.x), rel=1e-5)


def test_exact_optimum_non_separable():
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    kappa, w = exact_optimal_stability(X, np.array([1, 1, -1]))
    assert kappa == -np.inf and not np.any(w)


@parametrize_with_checks([Hebb(), Minover(max_iter=3000), AdaTron(max_iter=200),
                          AdaTron(fit_intercept=True, max_iter=200)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


# -- exact optimum and certificate --------------------------------------------------------
@pytest.mark.parametrize("clf, P", [(Minover(tol=1e-3, max_iter=400_000), 100),
                                     (AdaTron(tol=1e-3), 200), (AdaTron(tol=1e-3), 600)])
def test_minover_and_adatron_reach_exact_optimum(clf, P):
    X, y, _ = teacher_student(P, 200, random_state=P)
    kappa, _ = reference_optimum(X, y)
    clf.fit(X, y)
    assert clf.converged_
    # the certificate brackets the exact optimum ...
    assert clf.stability_ <= kappa * (1 + 1e-12)
    assert clf.stability_bound_ >= kappa * (1 - 1e-12)
    # ... and the stability is within 1e-3 of it
    assert clf.stability_ >= (1 - 1e-3) * kappa
    assert clf.stability_ == pytest.approx(stabilities(clf.coef_, X, y).min(), rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), P=st.integers(3, 40), N=st.integers(2, 8),
       steps=st.integers(1, 300))
def test_certificate_always_brackets(seed, P, N, steps):
    X, y, _ = teacher_student(P, N, random_state=seed)
    assume(len(set(y)) == 2)
    kappa, _ = reference_optimum(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for clf in (Minover(max_iter=steps, tol=1e-9), AdaTron(max_iter=1 + steps // 30)):
            clf.fit(X, y)
            assert clf.stability_ <= kappa + 1e-9
            assert clf.stability_bound_ >= kappa - 1e-9
            assert np.all(clf.history_["lower"] <= kappa + 1e-9)
            assert np.all(clf.history_["upper"] >= kappa - 1e-9)


# -- the update rules against their textbook form -----------------------------------------
def test_minover_fields_equal_textbook_loop():
    X, y, _ = teacher_student(60, 15, random_state=3)
    gram = signed_gram(X, y)
    w = np.zeros(15)
    fields, counts = np.zeros(60), np.zeros(60)
    for _ in range(200):
        w = minover_update(w, X, y)
        minover_step(fields, gram / 15, counts, int(np.argmin(fields)))
        np.testing.assert_allclose(fields, y * (X @ w), atol=1e-10)
    np.testing.assert_allclose((counts * y) @ X / 15, w, atol=1e-12)
    clf = Minover(max_iter=200, tol=1e-12)
    with pytest.warns(ConvergenceWarning):
        clf.fit(X, y)
    np.testing.assert_allclose(clf.coef_.ravel(), w, atol=1e-12)
    batch = minover_batch(gram[None], 15, max_iter=200)
    np.testing.assert_array_equal(batch["counts"][0], counts)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=False),
                          st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf])),
                min_size=1, max_size=200))
def test_least_stable_is_the_first_argmin(values):
    fields = np.array(values, dtype=float)  # many ties, signed zeros, infinities
    assert least_stable(fields) == np.argmin(fields)


def test_minover_certificate_closes_monotonically_enough():
    X, y, _ = teacher_student(100, 50, random_state=0)
    clf = Minover(tol=1e-2).fit(X, y)
    gap = 1 - clf.history_["lower"] / clf.history_["upper"]
    assert gap[-1] <= 1e-2 < gap[0]
    assert np.all(np.diff(clf.history_["step"]) > 0)


def test_adatron_batch_matches_estimator():
    Xs, ys = [], []
    for seed in range(3):
        X, y, _ = teacher_student(120, 60, random_state=seed)
        Xs.append(X)
        ys.append(y)
    res = adatron_batch(signed_gram(np.array(Xs), np.array(ys)), max_iter=2000, tol=1e-4)
    assert res["converged"].all()
    for b in range(3):
        kappa, _ = reference_optimum(Xs[b], ys[b])
        assert res["lower"][b] == pytest.approx(kappa, rel=1e-4)
        assert AdaTron(tol=1e-4).fit(Xs[b], ys[b]).stability_ == pytest.approx(kappa, rel=1e-4)


def test_rosenblatt_batch_separates_and_matches_loop():
    sets = [teacher_student(80, 20, random_state=4 + s) for s in range(3)]
    X = np.array([s[0] for s in sets])
    y = np.array([s[1] for s in sets], dtype=float)
    order = np.random.default_rng(0).permutation(80)
    res = rosenblatt_batch(signed_gram(X, y), 20, max_epochs=1000, order=order)
    assert res["converged"].all()
    for b in range(3):
        w_batch = (res["counts"][b] * y[b]) @ X[b] / 20
        w = np.zeros(20)
        for _ in range(res["n_epochs"][b]):
            for mu in order:
                if y[b, mu] * (X[b, mu] @ w) <= 0:
                    w += y[b, mu] * X[b, mu] / 20
        np.testing.assert_allclose(w_batch, w, atol=1e-10)
        assert np.all(y[b] * (X[b] @ w) > 0)


def test_rosenblatt_batch_row_is_the_perceptron_of_part_ii():
    """One batch row makes the mistakes of lincls.perceptron.Perceptron on the same data."""
    sets = [teacher_student(60, 15, random_state=20 + s) for s in range(3)]
    X = np.array([s[0] for s in sets])
    y = np.array([s[1] for s in sets], dtype=float)
    order = np.random.default_rng(1).permutation(60)
    res = rosenblatt_batch(signed_gram(X, y), 15, max_epochs=1000, order=order)
    for b in range(3):
        clf = Perceptron(fit_intercept=False, shuffle=False).fit(X[b, order], y[b, order])
        _, corrected = perceptron_trace(X[b, order], y[b, order], fit_intercept=False)
        np.testing.assert_array_equal(res["counts"][b, order],
                                      np.bincount(corrected, minlength=60))
        assert res["n_epochs"][b] == clf.n_iter_ and res["converged"][b] == clf.converged_
        w_batch = (res["counts"][b] * y[b]) @ X[b] / 15
        np.testing.assert_allclose(15 * w_batch, clf.coef_.ravel(), rtol=1e-12, atol=1e-10)


def test_hebb_closed_form():
    X, y, _ = teacher_student(30, 7, random_state=0)
    np.testing.assert_allclose(Hebb().fit(X, y).coef_.ravel(), (y[:, None] * X).sum(0) / 7)
    np.testing.assert_allclose(hebb_weights(X, y), (y[:, None] * X).sum(0) / 7)


# -- non-separable data and validation ----------------------------------------------------
def test_non_separable_warns_and_stops():
    X, y = random_labels(300, 20, random_state=0)  # α = 15 ≫ 2: not separable
    for clf in (Minover(max_iter=2000), AdaTron(max_iter=50)):
        with pytest.warns(ConvergenceWarning, match="max_iter"):
            clf.fit(X, y)
        assert not clf.converged_
        assert clf.stability_ < 0


@pytest.mark.parametrize("params", [
    {"max_iter": 0}, {"max_iter": 1.5}, {"tol": 0}, {"tol": 1.0}, {"tol": -1e-3},
    {"fit_intercept": "yes"}])
@pytest.mark.parametrize("cls", [Minover, AdaTron])
def test_bad_hyper_parameters(cls, params):
    X, y, _ = teacher_student(20, 3, random_state=0)
    with pytest.raises(ValueError):
        cls(**params).fit(X, y)


@pytest.mark.parametrize("rate", [0, 2, 2.5, -1])
def test_adatron_bad_learning_rate(rate):
    X, y, _ = teacher_student(20, 3, random_state=0)
    with pytest.raises(ValueError, match="learning_rate"):
        AdaTron(learning_rate=rate).fit(X, y)


def test_fit_intercept_iris_clamped_input():
    from lincls.datasets import load_iris

    X, y = load_iris(task="setosa-vs-rest", features=[2, 3])
    clf = Minover(fit_intercept=True, tol=1e-2).fit(X, y)
    assert clf.score(X, y) == 1.0
    with pytest.warns(ConvergenceWarning):
        naive = Minover(fit_intercept=False, max_iter=5000).fit(X, y)
    assert naive.score(X, y) < 1.0


# -- theory ------------------------------------------------------------------------------
def test_theory_asymptotics_and_special_values():
    a = 200.0
    assert theory.optimal_stability_error(a) * a == pytest.approx(0.5005, abs=2e-3)
    assert theory.gibbs_error(a) * a == pytest.approx(0.625, abs=3e-3)
    assert theory.bayes_error(a) * a == pytest.approx(0.442, abs=3e-3)
    assert theory.gardner_capacity(0.0) == 2.0
    assert theory.gardner_stability(2.0) == pytest.approx(0.0, abs=1e-10)
    kappas = np.linspace(-1, 2, 7)
    np.testing.assert_allclose(theory.gardner_stability(theory.gardner_capacity(kappas)),
                               kappas, atol=1e-9)
    # Hebb: R = √(2α/(2α+π)); at small α Hebb, Bayes and optimal stability coincide
    assert theory.hebb_overlap(2.0) == pytest.approx(np.sqrt(4 / (4 + np.pi)))
    assert theory.hebb_error(1.0, noise=0.5) == 0.5
    small = 1e-3
    assert theory.optimal_stability_error(small) == pytest.approx(
        theory.hebb_error(small), abs=1e-4)
    # ordering: Bayes ≤ optimal stability ≤ Gibbs, and optimal stability beats Hebb at α ≥ 1
    alphas = np.array([0.5, 1, 2, 5, 10])
    bayes, opt = theory.bayes_error(alphas), theory.optimal_stability_error(alphas)
    gibbs, hebb = theory.gibbs_error(alphas), theory.hebb_error(alphas)
    assert np.all(bayes <= opt) and np.all(opt <= gibbs) and np.all(opt[1:] < hebb[1:])


def test_theory_input_validation():
    with pytest.raises(ValueError):
        theory.hebb_error(-1.0)
    with pytest.raises(ValueError):
        theory.hebb_error(1.0, noise=1.5)
    with pytest.raises(ValueError):
        theory.gardner_stability(0.0)
    with pytest.raises(ValueError):
        theory.gardner_capacity(np.nan)


def _batch(generator, reps, P, N, seed):
    Xs, ys, Ts = [], [], []
    for r in range(reps):
        out = generator(P, N, random_state=seed + r)
        Xs.append(out[0])
        ys.append(out[1])
        Ts.append(out[2] if len(out) > 2 else None)
    return np.array(Xs), np.array(ys), Ts


@pytest.mark.parametrize("alpha", [1.0, 3.0])
def test_simulated_errors_match_theory(alpha):
    N, reps = 200, 8
    P = int(alpha * N)
    X, y, teachers = _batch(teacher_student, reps, P, N, 100)
    res = adatron_batch(signed_gram(X, y), max_iter=3000, tol=1e-3, learning_rate=1.5)
    assert res["converged"].all()
    opt, hebb = [], []
    for b in range(reps):
        w = (res["strengths"][b] * y[b]) @ X[b]
        opt.append(generalization_error(w, teachers[b]))
        hebb.append(generalization_error(hebb_weights(X[b], y[b]), teachers[b]))
    for sims, curve in ((opt, theory.optimal_stability_error), (hebb, theory.hebb_error)):
        mean, sem = np.mean(sims), np.std(sims, ddof=1) / np.sqrt(reps)
        # within 3 standard errors plus a finite-size allowance of 0.01
        assert abs(mean - curve(alpha)) <= 3 * sem + 0.01
    # the optimal-stability κ also follows the replica prediction
    kappa = theory.optimal_stability_overlap(alpha)[1]
    assert np.mean(res["lower"]) == pytest.approx(kappa, abs=0.05)


@pytest.mark.parametrize("alpha", [0.5, 1.0, 1.5])
def test_random_label_stability_matches_gardner(alpha):
    N, reps = 200, 6
    X, y, _ = _batch(random_labels, reps, int(alpha * N), N, 200)
    res = adatron_batch(signed_gram(X, y), max_iter=5000, tol=1e-3, learning_rate=1.5)
    assert res["converged"].all()
    mean, sem = res["lower"].mean(), res["lower"].std(ddof=1) / np.sqrt(reps)
    assert abs(mean - theory.gardner_stability(alpha)) <= 3 * sem + 0.03
