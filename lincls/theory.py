"""Large-N theory of learning from a teacher: learning curves and Gardner's capacity.

Defined in chapters "Learning from a teacher" (``book/teacher_student.md``) and
"Optimal stability and Minover" (``book/minover.md``); compared with simulations in
"Reproducing the Minover report" (``book/reproducing_minover_report.md``).

Conventions
-----------
* Inputs ξ ∈ R^N have independent components of zero mean and **unit variance**; the
  teacher B and the student w are compared through their normalized overlap
  R = w · B / (|w| |B|), and the generalization error is ε_g = arccos(R) / π.
* P = αN examples; all results are the limit N → ∞ at fixed α.
* Stabilities are on the **O(1) scale**: κ^μ = S^μ w · ξ^μ / |w| (no 1/√N elsewhere), so a
  random direction w gives κ^μ ~ N(0, 1).
* Dt = exp(−t²/2) dt / √(2π) is the Gaussian measure, H(x) = ∫_x^∞ Dt.

The replica saddle-point equations are solved numerically with :mod:`scipy.optimize`
(``brentq``, ``minimize_scalar``), the Gaussian integrals by fixed Gauss–Legendre
quadrature on a finite interval (the integrands decay like exp(−t²/2)).
"""

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import erfc, erfcx

__all__ = [
    "H",
    "hebb_overlap",
    "hebb_error",
    "optimal_stability_overlap",
    "optimal_stability_error",
    "gibbs_overlap",
    "gibbs_error",
    "bayes_error",
    "gardner_capacity",
    "gardner_stability",
]

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(200)


def H(x):
    """The Gaussian tail H(x) = ∫_x^∞ Dt = erfc(x / √2) / 2.

    Examples
    --------
    >>> float(H(0.0))
    0.5
    """
    return 0.5 * erfc(np.asarray(x, dtype=float) / np.sqrt(2.0))


def _gauss_density(t):
    return np.exp(-0.5 * t * t) / np.sqrt(2.0 * np.pi)


def _integrate(f, a, b):
    """∫_a^b f(t) dt by 200-point Gauss–Legendre (f vectorized)."""
    t = 0.5 * (b - a) * _NODES + 0.5 * (b + a)
    return 0.5 * (b - a) * np.sum(_WEIGHTS * f(t))


def _alpha_array(alpha, name="alpha", allow_zero=True):
    a = np.asarray(alpha, dtype=float)
    if not np.all(np.isfinite(a)) or np.any(a < 0) or (not allow_zero and np.any(a == 0)):
        raise ValueError(f"{name} must be finite and non-negative; got {alpha!r}.")
    return a


def _vectorize(fn, x):
    out = np.vectorize(fn, otypes=[float])(x)
    return float(out) if out.ndim == 0 else out


# -- Hebb ---------------------------------------------------------------------------------
def hebb_overlap(alpha, noise=0.0):
    """R of Hebb's rule: √(2α(1−2λ)² / (2α(1−2λ)² + π)).

    The teacher component of Σ S^μ ξ^μ grows like P (1 − 2λ) √(2/π), the orthogonal
    part like √(PN) (Vallet 1989); λ is the probability that a label is flipped.

    Examples
    --------
    >>> round(hebb_overlap(np.pi / 2), 6)
    0.707107
    """
    a = _alpha_array(alpha)
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise must be a probability in [0, 1]; got {noise!r}.")
    signal = 2.0 * a * (1.0 - 2.0 * noise) ** 2
    R = np.sign(1.0 - 2.0 * noise) * np.sqrt(signal / (signal + np.pi))
    return float(R) if R.ndim == 0 else R


def hebb_error(alpha, noise=0.0):
    """ε_g = arccos(R) / π of Hebb's rule with R from :func:`hebb_overlap`.

    ``noise`` λ flips each training label with probability λ; ε_g is measured against the
    noise-free teacher.

    Examples
    --------
    >>> round(hebb_error(0.0), 3), round(hebb_error(np.pi / 2), 3)
    (0.5, 0.25)
    """
    return _arccos_error(hebb_overlap(alpha, noise))


def _arccos_error(R):
    e = np.arccos(np.clip(R, -1.0, 1.0)) / np.pi
    return float(e) if np.ndim(e) == 0 else e


# -- Optimal stability --------------------------------------------------------------------
def _stability_free_energy(R, kappa, alpha):
    """F(R, κ) = ½(1 − R²) − α ∫_{−∞}^{κ} Dt 2H(−Rt/√(1−R²)) (κ − t)² / 2.

    The leading term of the Gardner volume of students with stability ≥ κ and overlap
    R with the teacher, as q → 1 (it is multiplied by 1/(1 − q)). Positive: such students
    exist; the optimal stability is where max_R F = 0.
    """
    slope = R / np.sqrt(1.0 - R * R)

    def integrand(t):
        return _gauss_density(t) * H(-slope * t) * (kappa - t) ** 2

    return 0.5 * (1.0 - R * R) - alpha * _integrate(integrand, min(kappa, 0.0) - 12.0,
                                                     min(kappa, 12.0))


def _optimal_stability(alpha):
    """(R, κ) of the perceptron of optimal stability at load α, from the saddle point."""
    if alpha == 0:
        return 0.0, np.inf

    def best(kappa):
        res = minimize_scalar(lambda R: -_stability_free_energy(R, kappa, alpha),
                              bounds=(0.0, 1.0 - 1e-12), method="bounded",
                              options={"xatol": 1e-12})
        return -res.fun, res.x

    hi = 1.0
    while best(hi)[0] > 0:
        hi *= 2.0
    kappa = brentq(lambda k: best(k)[0], 0.0, hi, xtol=1e-12)
    return float(best(kappa)[1]), float(kappa)


def optimal_stability_overlap(alpha):
    """R and κ_opt of the perceptron of optimal stability (teacher rule, no noise).

    The replica calculation (Gardner 1988 with a teacher; Opper, Kinzel, Kleinz & Nehl
    1990) gives, in the limit q → 1 of the student–student overlap, the function
    F(R, κ) = ½(1 − R²) − α ∫_{−∞}^{κ} Dt H(−Rt/√(1−R²)) (κ − t)². The optimal
    stability κ_opt solves max_R F(R, κ) = 0, and the maximizing R is the overlap with
    the teacher. Solved by nested ``brentq``/``minimize_scalar``.

    Returns
    -------
    R, kappa : float or ndarray

    Examples
    --------
    >>> R, kappa = optimal_stability_overlap(1.0)
    >>> round(R, 3), round(kappa, 3)
    (0.671, 0.787)
    """
    a = _alpha_array(alpha)
    if a.ndim == 0:
        return _optimal_stability(float(a))
    pairs = np.array([_optimal_stability(float(x)) for x in a.ravel()])
    return pairs[:, 0].reshape(a.shape), pairs[:, 1].reshape(a.shape)


def optimal_stability_error(alpha):
    """ε_g = arccos(R) / π of the perceptron of optimal stability.

    For large α, ε_g ≈ 0.50/α (Opper et al. 1990).

    Examples
    --------
    >>> round(optimal_stability_error(1.0), 3)
    0.266
    """
    return _arccos_error(optimal_stability_overlap(alpha)[0])


# -- Gibbs and Bayes ----------------------------------------------------------------------
def _gibbs(alpha):
    if alpha == 0:
        return 0.0

    def equation(R):
        # (α/π) ∫ Dt exp(−Rt²/2) / H(√R t), written with erfcx to avoid overflow
        integral = _integrate(lambda t: _gauss_density(t) * 2.0 / erfcx(np.sqrt(R / 2) * t),
                              -12.0, 12.0)
        return alpha / np.pi * integral - R / np.sqrt(1.0 - R)

    return brentq(equation, 1e-15, 1.0 - 1e-15, xtol=1e-14)


def gibbs_overlap(alpha):
    """R of Gibbs learning (a random student from version space).

    Solves R / √(1 − R) = (α/π) ∫ Dt exp(−Rt²/2) / H(√R t) (Engel & Van den Broeck 2001,
    eq. 2.42) with ``brentq``.

    Examples
    --------
    >>> round(gibbs_overlap(0.0), 3)
    0.0
    """
    a = _alpha_array(alpha)
    return _vectorize(_gibbs, a)


def gibbs_error(alpha):
    """ε_g = arccos(R)/π of Gibbs learning; ε_g ≈ 0.625/α for large α.

    Examples
    --------
    >>> round(gibbs_error(1.0), 3)
    0.338
    """
    return _arccos_error(gibbs_overlap(alpha))


def bayes_error(alpha):
    """ε_g of the Bayes-optimal student, the centre of mass of version space.

    Its overlap is √R_Gibbs (Opper & Haussler 1991); ε_g ≈ 0.442/α for large α.

    Examples
    --------
    >>> round(bayes_error(1.0), 3)
    0.254
    """
    return _arccos_error(np.sqrt(gibbs_overlap(alpha)))


# -- Gardner capacity ---------------------------------------------------------------------
def _gardner_integral(kappa):
    """∫_{−κ}^∞ Dt (t + κ)² = (1 + κ²) H(−κ) + κ G(κ), G the Gaussian density."""
    return (1.0 + kappa**2) * H(-kappa) + kappa * _gauss_density(kappa)


def gardner_capacity(kappa):
    """α_c(κ) = [∫_{−κ}^∞ Dt (t + κ)²]⁻¹: how many random dichotomies per input can be
    stored with stability at least κ (Gardner 1988). α_c(0) = 2.

    Examples
    --------
    >>> float(gardner_capacity(0.0))
    2.0
    """
    k = np.asarray(kappa, dtype=float)
    if not np.all(np.isfinite(k)):
        raise ValueError(f"kappa must be finite; got {kappa!r}.")
    out = 1.0 / _gardner_integral(k)
    return float(out) if out.ndim == 0 else out


def gardner_stability(alpha):
    """κ_max(α), the inverse of :func:`gardner_capacity`: the largest stability of a
    perceptron storing P = αN random labels.

    κ_max > 0 for α < 2 and κ_max(2) = 0. For α > 2 the value returned (negative) is the
    replica-symmetric one, which is no longer exact there (Gardner & Derrida 1988).

    Examples
    --------
    >>> round(gardner_stability(2.0), 12)
    0.0
    """
    a = _alpha_array(alpha, allow_zero=False)

    def solve(x):
        hi = max(50.0, 2.0 / np.sqrt(x))  # the integral grows like κ² for large κ
        return brentq(lambda k: _gardner_integral(k) - 1.0 / x, -50.0, hi, xtol=1e-14)

    return _vectorize(solve, a)
