"""Tests of lincls.theory: closed forms against direct computation, limits, bad input."""

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import multivariate_normal

from lincls import theory
from lincls.discriminant import is_linearly_separable


# -- Cover ---------------------------------------------------------------------------------
def test_cover_recursion_and_boundary():
    for P, N in itertools.product(range(1, 15), range(2, 10)):
        C = theory.cover_count
        assert C(P + 1, N) == C(P, N) + C(P, N - 1)
    assert all(theory.cover_count(P, 1) == 2 for P in range(1, 10))
    assert all(theory.cover_count(P, N) == 2**P for N in range(1, 8) for P in range(1, N + 1))


def test_cover_fraction_matches_count():
    for P, N in [(7, 3), (30, 10), (61, 20)]:
        assert theory.cover_fraction(P, N) == pytest.approx(theory.cover_count(P, N) / 2**P,
                                                           rel=1e-12)
    assert np.allclose(theory.cover_fraction(np.arange(2, 40, 2), np.arange(1, 20)), 0.5)


def test_cover_count_enumerated():
    # all 2^P labellings of P random points in R^N, each decided by the LP test
    rng = np.random.default_rng(0)
    P, N = 6, 3
    X = rng.standard_normal((P, N))
    separable = sum(is_linearly_separable(X, 2 * np.array(b) - 1, fit_intercept=False)
                    for b in itertools.product([0, 1], repeat=P))
    assert separable == theory.cover_count(P, N) == 32


@pytest.mark.parametrize("P, N", [(0, 3), (3, 0), (2.5, 2), (-1, 1)])
def test_cover_bad_input(P, N):
    with pytest.raises(ValueError):
        theory.cover_count(P, N)


# -- Gardner -------------------------------------------------------------------------------
def test_gardner_saddle_is_stationary_point_of_entropy():
    for alpha, kappa in [(0.5, 0.0), (1.5, 0.0), (0.5, 0.5)]:
        q = theory.gardner_overlap(alpha, kappa)
        h = 1e-6
        d = (theory.gardner_entropy(q + h, alpha, kappa)
             - theory.gardner_entropy(q - h, alpha, kappa)) / (2 * h)
        assert abs(d) < 1e-6


def test_gardner_q_to_one_gives_capacity():
    for kappa in (0.0, 0.5, 1.0):
        q = 1 - 1e-7
        load = q / ((1 - q) * theory.gardner_saddle_rhs(q, kappa))
        assert load == pytest.approx(theory.gardner_capacity(kappa), rel=1e-5)
    with pytest.raises(ValueError, match="capacity"):
        theory.gardner_overlap(2.0)


def test_replica_energetic_term_integer_n():
    # E[prod_a θ(λ_a − κ)] for covariance (1 − q) δ_ab + q equals ∫ Dt H(u)^n
    q, kappa, n = 0.4, 0.3, 3
    cov = (1 - q) * np.eye(n) + q
    # Genz's quasi-Monte Carlo integration: seeded, and asked for an error far below the
    # tolerance (its default, 1e-5, is the tolerance itself and failed one run in many).
    direct = multivariate_normal(mean=np.zeros(n), cov=cov, seed=0, abseps=1e-9,
                                 releps=1e-9, maxpts=10**7).cdf(-kappa * np.ones(n))
    t = np.linspace(-12, 12, 20001)
    rs = np.trapezoid(np.exp(-t**2 / 2) / np.sqrt(2 * np.pi)
                      * theory.H((kappa - np.sqrt(q) * t) / np.sqrt(1 - q)) ** n, t)
    assert rs == pytest.approx(direct, abs=1e-7)


# -- teacher–student -----------------------------------------------------------------------
def test_gibbs_is_maximum_of_rs_entropy_at_q_equal_R():
    for alpha in (0.5, 2.0, 5.0):
        res = minimize_scalar(lambda R, a=alpha: -theory.teacher_student_entropy(R, R, a),
                              bounds=(1e-4, 1 - 1e-6), method="bounded",
                              options={"xatol": 1e-11})
        assert res.x == pytest.approx(theory.gibbs_overlap(alpha), abs=1e-6)


def test_stability_free_energy_is_q_to_one_limit():
    alpha, R, kappa = 1.0, 0.6, 0.5
    q = 1 - 1e-6
    limit = (1 - q) * theory.teacher_student_entropy(q, R, alpha, kappa)
    assert limit == pytest.approx(theory.stability_free_energy(R, kappa, alpha), abs=1e-4)


def test_large_alpha_laws():
    assert 200 * theory.optimal_stability_error(200.0) == pytest.approx(0.500, abs=1e-3)
    assert 1e4 * theory.gibbs_error(1e4) == pytest.approx(0.625, abs=1e-3)
    assert 1e4 * theory.bayes_error(1e4) == pytest.approx(0.442, abs=1e-3)
    assert 1e4 * theory.annealed_gibbs_error(1e4) == pytest.approx(1.0, abs=1e-3)


# -- on-line -------------------------------------------------------------------------------
@pytest.mark.parametrize("rule", ["hebb", "perceptron", "adatron"])
def test_online_rates_are_gaussian_averages(rule):
    rng = np.random.default_rng(1)
    R, Q, eta, n = 0.5, 2.0, 1.3, 2_000_000
    u = rng.standard_normal(n)
    y = R * u + np.sqrt(Q - R**2) * rng.standard_normal(n)
    rates, modulation = theory._ONLINE[rule]
    F = modulation(y, u, eta)
    dR, dQ = rates(R, Q, eta)
    assert np.mean(F * u) == pytest.approx(dR, abs=5e-3)
    assert np.mean(2 * F * y + F**2) == pytest.approx(dQ, abs=1e-2)


def test_online_asymptotics():
    assert theory.online_error(1e6, "perceptron") * 1e6 ** (1 / 3) == pytest.approx(
        (2 / 3) ** (1 / 3) / np.pi, rel=1e-3)
    assert theory.online_error(1e5, "adatron") * 1e5 == pytest.approx(1.5, rel=1e-3)
    assert theory.online_error(1e5, "adatron", learning_rate=1.5) * 1e5 == pytest.approx(
        4 / 3, rel=1e-3)
    hebb_batch = theory.hebb_error(5.0)
    R, Q = theory.online_learning_curve(5.0, "hebb", R0=0.0, Q0=1e-12)
    assert np.arccos(R / np.sqrt(Q)) / np.pi == pytest.approx(hebb_batch, abs=1e-6)


def test_online_simulation_matches_ode():
    alphas = np.array([1.0, 3.0])
    eps = theory.online_simulation(alphas, "adatron", n_features=200, n_repeats=20,
                                   random_state=3)
    se = eps.std(axis=1, ddof=1) / np.sqrt(eps.shape[1])
    assert np.all(np.abs(eps.mean(axis=1) - theory.online_error(alphas, "adatron")) < 4 * se)


def test_online_bad_input():
    with pytest.raises(ValueError, match="rule"):
        theory.online_error(1.0, "minover")
    with pytest.raises(ValueError, match="learning_rate"):
        theory.online_learning_curve(1.0, learning_rate=0.0)
    with pytest.raises(ValueError, match="increasing"):
        theory.online_simulation([2.0, 1.0])
    with pytest.raises(ValueError):
        theory.gardner_entropy(1.0, 1.0)


def test_online_curve_stops_a_student_whose_length_runs_away():
    # AdaTron with eta = 3.5: epsilon stalls near 0.249 while Q grows like exp(0.47 alpha);
    # integrated to alpha = 1e4 the solver crawled for minutes once Q overflowed
    assert abs(theory.online_error(100.0, "adatron", learning_rate=3.5) - 0.2493) < 1e-3
    with pytest.raises(ValueError, match="grows without bound"):
        theory.online_error([100.0, 1e4], "adatron", learning_rate=3.5)
