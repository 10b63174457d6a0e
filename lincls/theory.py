"""Large-N theory of learning from a teacher: learning curves and Gardner's capacity.

Defined in chapters "Learning from a teacher" (``book/teacher_student.md``) and
"Optimal stability and Minover" (``book/minover.md``); compared with simulations in
"Reproducing the Minover report" (``book/reproducing_minover_report.md``). Derived in
Part VII: Cover's count in "Counting dichotomies" (``book/cover.md``), the replica
results in "The statistical mechanics of the perceptron" (``book/statmech.md``), the
on-line learning curves in "On-line learning" (``book/online_learning.md``).

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

from math import comb

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq, minimize_scalar
from scipy.special import erfc, erfcx
from scipy.stats import binom

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
    "cover_count",
    "cover_fraction",
    "gardner_entropy",
    "gardner_saddle_rhs",
    "gardner_overlap",
    "teacher_student_entropy",
    "stability_free_energy",
    "annealed_gibbs_overlap",
    "annealed_gibbs_error",
    "hebb_modulation",
    "perceptron_modulation",
    "adatron_modulation",
    "online_hebb_rates",
    "online_perceptron_rates",
    "online_adatron_rates",
    "online_learning_curve",
    "online_error",
    "online_simulation",
]

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(200)


def H(x):
    """The Gaussian tail H(x) = ∫_x^∞ Dt = erfc(x / √2) / 2.

    Defined in chapter "Learning from a teacher".

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

    Defined in chapter "Learning from a teacher".

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

    Defined in chapter "Learning from a teacher".

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
def stability_free_energy(R, kappa, alpha):
    """F(R, κ) = ½(1 − R²) − α ∫_{−∞}^{κ} Dt 2H(−Rt/√(1−R²)) (κ − t)² / 2.

    The coefficient of 1/(1 − q) in the replica entropy of students with stability ≥ κ
    and overlap R with the teacher, as the student–student overlap q → 1. Positive: such
    students exist; the optimal stability is where max_R F = 0.

    Defined in chapter "The statistical mechanics of the perceptron" (``book/statmech.md``).

    Examples
    --------
    >>> abs(float(stability_free_energy(0.0, 0.0, 2.0))) < 1e-12   # R = 0, κ = 0: α_c = 2
    True
    """
    return _free_energy_angle(np.arccos(R), kappa, alpha)


def _free_energy_angle(theta, kappa, alpha):
    """F of :func:`stability_free_energy` at R = cos θ (accurate for R → 1)."""
    slope = np.cos(theta) / np.sin(theta)

    def integrand(t):
        return _gauss_density(t) * H(-slope * t) * (kappa - t) ** 2

    # H(−slope·t) rises from 0 to 1 within |t| ≲ 1/slope of t = 0 and is < 1e-30 for
    # slope·t < −12: integrate [−12/slope, 0] and [0, κ] apart, so that a sharp step
    # (R → 1) is resolved
    hi = min(kappa, 12.0)
    lo = max(min(kappa, 0.0) - 12.0, -12.0 / max(slope, 1e-300))
    pieces = [(lo, hi)] if hi <= 0 else [(lo, 0.0), (0.0, hi)]
    return 0.5 * np.sin(theta) ** 2 - alpha * sum(_integrate(integrand, a, b) for a, b in pieces)


def _optimal_stability(alpha):
    """(R, κ) of the perceptron of optimal stability at load α, from the saddle point."""
    if alpha == 0:
        return 0.0, np.inf

    def best(kappa):
        # maximize over the angle θ = arccos R: R itself loses digits as R → 1
        res = minimize_scalar(lambda th: -_free_energy_angle(th, kappa, alpha),
                              bounds=(1e-9, 0.5 * np.pi), method="bounded",
                              options={"xatol": 1e-13})
        return -res.fun, res.x

    hi = 1.0
    while best(hi)[0] > 0:
        hi *= 2.0
    kappa = brentq(lambda k: best(k)[0], 0.0, hi, xtol=1e-14)
    return float(np.cos(best(kappa)[1])), float(kappa)


def optimal_stability_overlap(alpha):
    """R and κ_opt of the perceptron of optimal stability (teacher rule, no noise).

    Defined in chapter "The statistical mechanics of the perceptron".

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

    Defined in chapter "The statistical mechanics of the perceptron".

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

    Defined in chapter "The statistical mechanics of the perceptron".

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

    Defined in chapter "The statistical mechanics of the perceptron".

    Examples
    --------
    >>> round(gibbs_error(1.0), 3)
    0.338
    """
    return _arccos_error(gibbs_overlap(alpha))


def bayes_error(alpha):
    """ε_g of the Bayes-optimal student, the centre of mass of version space.

    Defined in chapter "The statistical mechanics of the perceptron".

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

    Defined in chapter "The statistical mechanics of the perceptron".

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

    Defined in chapter "The statistical mechanics of the perceptron".

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


# -- Cover's function-counting theorem ----------------------------------------------------
def _check_counts(P, N):
    P, N = np.asarray(P), np.asarray(N)
    for name, v in (("P", P), ("N", N)):
        if not np.issubdtype(v.dtype, np.integer) or np.any(v < 1):
            raise ValueError(f"{name} must be a positive integer (or array of them); got {v!r}.")
    return P, N


def cover_count(P, N):
    """Cover's count C(P, N) = 2 Σ_{k=0}^{N−1} binom(P−1, k).

    The number of the 2^P labellings of P points in general position in R^N that a
    hyperplane through the origin realizes (Cover 1965). Exact integer arithmetic.

    Defined in chapter "Counting dichotomies: Cover's theorem" (``book/cover.md``).

    Parameters
    ----------
    P, N : int
        Number of points and dimension, both ≥ 1.

    Returns
    -------
    int

    Examples
    --------
    >>> cover_count(4, 2), cover_count(3, 3), cover_count(6, 3)
    (8, 8, 32)
    """
    _check_counts(P, N)
    P, N = int(P), int(N)
    return 2 * sum(comb(P - 1, k) for k in range(N))


def cover_fraction(P, N):
    """C(P, N) / 2^P, the probability that random labels of P points in general
    position in R^N are separable by a hyperplane through the origin.

    Equal to Prob[Binomial(P − 1, ½) ≤ N − 1], computed with :data:`scipy.stats.binom`
    (vectorized over ``P`` and ``N``).

    Defined in chapter "Counting dichotomies: Cover's theorem" (``book/cover.md``).

    Examples
    --------
    At P = 2N exactly half of the labellings are separable: the integer count shows it
    exactly. The binomial distribution function is evaluated in floating point, so the
    fraction equals one half only up to a rounding error in its last bits (either side,
    depending on P), and is compared within a tolerance:

    >>> 2 * cover_count(20, 10) == 2**20, abs(cover_fraction(20, 10) - 0.5) < 1e-12
    (True, True)
    >>> abs(cover_fraction(6, 3) - cover_count(6, 3) / 2**6) < 1e-12
    True
    """
    P, N = _check_counts(P, N)
    out = binom.cdf(N - 1, P - 1, 0.5)
    return float(out) if np.ndim(out) == 0 else out


# -- Gardner's replica calculation --------------------------------------------------------
def _log_H(x):
    """ln H(x) for any x: ln(½ erfcx(|x|/√2)) − x²/2 = ln H(|x|), and ln(1 − H(|x|)) for x < 0."""
    x = np.asarray(x, dtype=float)
    log_tail = np.log(0.5 * erfcx(np.abs(x) / np.sqrt(2.0))) - 0.5 * x * x
    return np.where(x >= 0, log_tail, np.log1p(-np.exp(log_tail)))


def _G_over_H(x):
    """G(x) / H(x) = √(2/π) / erfcx(x/√2); the clip keeps erfcx finite (G/H < 1e-290 there)."""
    z = np.maximum(np.asarray(x, dtype=float) / np.sqrt(2.0), -26.0)
    return np.sqrt(2.0 / np.pi) / erfcx(z)


def _check_q(q, name="q"):
    if not 0.0 <= q < 1.0:
        raise ValueError(f"{name} must lie in [0, 1); got {q!r}.")


def _t_pieces(step):
    """Integration pieces on [−12, 12], split where the integrand has a sharp step."""
    step = float(np.clip(step, -11.0, 11.0))
    return [(-12.0, step), (step, 12.0)]


def gardner_entropy(q, alpha, kappa=0.0):
    """Replica-symmetric entropy per weight of Gardner's volume (random labels).

    s(q) = ½ ln(1 − q) + q / (2(1 − q)) + α ∫ Dt ln H((κ − √q t)/√(1 − q)),

    where q is the overlap of two weight vectors drawn from the volume of weights with
    all stabilities ≥ κ. (1/N) ⟨ln Ω⟩ is s at its stationary point (Gardner 1988).

    Defined in chapter "The statistical mechanics of the perceptron" (``book/statmech.md``).

    Examples
    --------
    >>> float(gardner_entropy(0.0, 0.0))
    0.0
    """
    _check_q(q)
    sq, sd = np.sqrt(q), np.sqrt(1.0 - q)
    energetic = sum(_integrate(lambda t: _gauss_density(t) * _log_H((kappa - sq * t) / sd), a, b)
                    for a, b in _t_pieces(kappa / max(sq, 1e-12)))
    return 0.5 * np.log(1.0 - q) + 0.5 * q / (1.0 - q) + alpha * energetic


def gardner_saddle_rhs(q, kappa=0.0):
    """I(q) = ∫ Dt [G(u)/H(u)]², u = (κ − √q t)/√(1 − q); the saddle point of
    :func:`gardner_entropy` is q/(1 − q) = α I(q).

    As q → 1, (1 − q) I(q) → ∫_{−∞}^{κ} Dt (κ − t)² = 1/α_c(κ).

    Defined in chapter "The statistical mechanics of the perceptron" (``book/statmech.md``).

    Examples
    --------
    >>> round(float(gardner_saddle_rhs(0.0)), 6)   # [G(0)/H(0)]² = 2/π
    0.63662
    """
    _check_q(q)
    sq, sd = np.sqrt(q), np.sqrt(1.0 - q)
    return sum(_integrate(lambda t: _gauss_density(t) * _G_over_H((kappa - sq * t) / sd) ** 2,
                          a, b)
               for a, b in _t_pieces(kappa / max(sq, 1e-12)))


def gardner_overlap(alpha, kappa=0.0):
    """The typical overlap q of two weight vectors in Gardner's volume at load α.

    Solves the saddle-point equation q/(1 − q) = α I(q) of :func:`gardner_saddle_rhs`
    with ``brentq``. q grows from 0 at α = 0 to 1 at the capacity α_c(κ); beyond it the
    volume is empty and a ValueError is raised.

    Defined in chapter "The statistical mechanics of the perceptron" (``book/statmech.md``).

    Examples
    --------
    >>> round(gardner_overlap(1.0), 4)
    0.5853
    """
    a = float(_alpha_array(alpha))
    if a == 0:
        return 0.0
    if a >= gardner_capacity(kappa):
        raise ValueError(f"alpha={alpha!r} is at or beyond the capacity "
                         f"alpha_c({kappa}) = {gardner_capacity(kappa):.6g}: no solution.")

    def equation(q):
        return a * (1.0 - q) * gardner_saddle_rhs(q, kappa) - q

    return float(brentq(equation, 0.0, 1.0 - 1e-12, xtol=1e-14))


def teacher_student_entropy(q, R, alpha, kappa=0.0):
    """Replica-symmetric entropy per weight of the students with stability ≥ κ on P = αN
    examples of a teacher, at student–student overlap q and student–teacher overlap R:

    s(q, R) = ½ ln(1 − q) + (q − R²)/(2(1 − q))
              + 2α ∫ Dt H(−Rt/√(q − R²)) ln H((κ − √q t)/√(1 − q)).

    κ = 0 gives version space; Gibbs learning is q = R (Engel & Van den Broeck 2001, ch. 2).

    Defined in chapter "The statistical mechanics of the perceptron" (``book/statmech.md``).

    Examples
    --------
    >>> round(float(teacher_student_entropy(0.3, 0.0, 0.0)), 6) == round(
    ...     float(gardner_entropy(0.3, 0.0)), 6)
    True
    """
    _check_q(q)
    if not R * R < q or R < 0:
        raise ValueError(f"need 0 <= R < sqrt(q); got R={R!r}, q={q!r}.")
    sq, sd, spread = np.sqrt(q), np.sqrt(1.0 - q), np.sqrt(q - R * R)

    def integrand(t):
        return 2.0 * _gauss_density(t) * H(-R * t / spread) * _log_H((kappa - sq * t) / sd)

    energetic = sum(_integrate(integrand, a, b) for a, b in _t_pieces(kappa / max(sq, 1e-12)))
    return 0.5 * np.log(1.0 - q) + 0.5 * (q - R * R) / (1.0 - q) + alpha * energetic


def annealed_gibbs_overlap(alpha):
    """R of Gibbs learning in the annealed approximation.

    Maximizes s_ann(R) = ½ ln(1 − R²) + α ln(1 − arccos(R)/π), the log of the *average*
    volume of version space at overlap R; the stationary point solves
    R/√(1 − R²) = α / (π (1 − arccos(R)/π)).

    Defined in chapter "The statistical mechanics of the perceptron" (``book/statmech.md``).

    Examples
    --------
    >>> round(annealed_gibbs_overlap(1.0), 4)
    0.4421
    """
    def solve(a):
        if a == 0:
            return 0.0
        return brentq(lambda R: R / np.sqrt(1 - R * R) * (1 - np.arccos(R) / np.pi) - a / np.pi,
                      0.0, 1.0 - 1e-16, xtol=1e-15)

    return _vectorize(solve, _alpha_array(alpha))


def annealed_gibbs_error(alpha):
    """ε_g = arccos(R)/π of Gibbs learning in the annealed approximation (≈ 1/α for large α).

    Defined in chapter "The statistical mechanics of the perceptron" (``book/statmech.md``).

    Examples
    --------
    >>> round(annealed_gibbs_error(1.0), 3)
    0.354
    """
    return _arccos_error(annealed_gibbs_overlap(alpha))


# -- On-line learning ---------------------------------------------------------------------
# A student J ∈ R^N learns from a stream of fresh examples ξ, one per step:
#     J ← J + F(y, u) ξ / √N,   y = J·ξ/√N (student field), u = B·ξ/√N (teacher field),
# with |B|² = N. The order parameters R = J·B/N and Q = J·J/N obey, as N → ∞ with
# α = (steps)/N, dR/dα = ⟨F u⟩ and dQ/dα = ⟨2 F y + F²⟩ (Biehl & Riegler 1994).
def hebb_modulation(y, u, learning_rate=1.0):
    """F = η sign(u): every example is added with its label.

    Defined in chapter "On-line learning" (``book/online_learning.md``).

    Examples
    --------
    >>> float(hebb_modulation(-0.3, 2.0))
    1.0
    """
    return learning_rate * np.sign(u)


def perceptron_modulation(y, u, learning_rate=1.0):
    """F = η θ(−y u) sign(u): Rosenblatt's rule, a Hebbian step on mistakes only.

    Defined in chapter "On-line learning" (``book/online_learning.md``).

    Examples
    --------
    >>> float(perceptron_modulation(-0.3, 2.0)), float(perceptron_modulation(0.3, 2.0))
    (1.0, 0.0)
    """
    return learning_rate * (y * u <= 0) * np.sign(u)


def adatron_modulation(y, u, learning_rate=1.0):
    """F = −η y θ(−y u): on a mistake, move the field y towards zero.

    For η = 1 the new field y (1 − |ξ|²/N) is zero where |ξ|² = N, nearly so for large N.

    Defined in chapter "On-line learning" (``book/online_learning.md``).

    Examples
    --------
    >>> float(adatron_modulation(-0.3, 2.0)), float(adatron_modulation(0.3, 2.0))
    (0.3, -0.0)
    """
    return -learning_rate * y * (y * u <= 0)


def online_hebb_rates(R, Q, learning_rate=1.0):
    """(dR/dα, dQ/dα) of on-line Hebb: ⟨F u⟩ = η√(2/π), ⟨2Fy + F²⟩ = 2ηR√(2/π) + η².

    Defined in chapter "On-line learning" (``book/online_learning.md``).

    Examples
    --------
    >>> [round(float(v), 4) for v in online_hebb_rates(0.0, 1.0)]
    [0.7979, 1.0]
    """
    eta, c = learning_rate, np.sqrt(2.0 / np.pi)
    return eta * c, 2.0 * eta * R * c + eta**2


def online_perceptron_rates(R, Q, learning_rate=1.0):
    """(dR/dα, dQ/dα) of the on-line perceptron, with ρ = R/√Q and θ = arccos ρ:
    dR/dα = η(1 − ρ)/√(2π),  dQ/dα = η²θ/π − 2η√Q (1 − ρ)/√(2π).

    Defined in chapter "On-line learning" (``book/online_learning.md``).

    Examples
    --------
    >>> [round(float(v), 4) for v in online_perceptron_rates(0.0, 1.0)]
    [0.3989, -0.2979]
    """
    eta = learning_rate
    Q = np.maximum(Q, 1e-300)  # trial steps of the ODE solver may overshoot
    rho = np.clip(R / np.sqrt(Q), -1.0, 1.0)
    theta = np.arccos(rho)
    miss = (1.0 - rho) / np.sqrt(2.0 * np.pi)  # ⟨|u| θ(−yu)⟩, and ⟨|y| θ(−yu)⟩/√Q
    return eta * miss, eta**2 * theta / np.pi - 2.0 * eta * np.sqrt(Q) * miss


def online_adatron_rates(R, Q, learning_rate=1.0):
    """(dR/dα, dQ/dα) of on-line AdaTron, with ρ = R/√Q and θ = arccos ρ:
    dR/dα = η√Q (sin θ − ρθ)/π,  dQ/dα = (η² − 2η) Q (θ − ρ sin θ)/π.

    Defined in chapter "On-line learning" (``book/online_learning.md``).

    Examples
    --------
    >>> [round(float(v), 4) for v in online_adatron_rates(0.0, 1.0)]
    [0.3183, -0.5]
    """
    eta = learning_rate
    Q = np.maximum(Q, 1e-300)  # trial steps of the ODE solver may overshoot
    rho = np.clip(R / np.sqrt(Q), -1.0, 1.0)
    theta = np.arccos(rho)
    cross = (np.sin(theta) - rho * theta) / np.pi  # ⟨|y||u| θ(−yu)⟩ / √Q
    square = (theta - rho * np.sin(theta)) / np.pi  # ⟨y² θ(−yu)⟩ / Q
    return eta * np.sqrt(Q) * cross, (eta**2 - 2.0 * eta) * Q * square


_ONLINE = {"hebb": (online_hebb_rates, hebb_modulation),
           "perceptron": (online_perceptron_rates, perceptron_modulation),
           "adatron": (online_adatron_rates, adatron_modulation)}


def _online_rule(rule):
    if rule not in _ONLINE:
        raise ValueError(f"rule must be one of {sorted(_ONLINE)}; got {rule!r}.")
    return _ONLINE[rule]


#: Where :func:`online_learning_curve` stops a run whose Q = |J|²/N grows without bound
#: (before it overflows, which would leave the solver crawling).
Q_MAX = 1e100


def online_learning_curve(alpha, rule="perceptron", *, learning_rate=1.0, R0=0.0, Q0=1.0):
    """R(α) and Q(α) of on-line learning from the ODEs dR/dα, dQ/dα of the ``rule``.

    Integrated with :func:`scipy.integrate.solve_ivp` (DOP853, rtol 1e-10) from
    R(0) = R0, Q(0) = Q0.

    Defined in chapter "On-line learning" (``book/online_learning.md``).

    Parameters
    ----------
    alpha : float or array-like of float
        Loads (examples per weight) at which to report R and Q, all ≥ 0.
    rule : {"hebb", "perceptron", "adatron"}
    learning_rate : float, default=1.0
        η > 0.
    R0, Q0 : float
        Initial overlap with the teacher and squared length per weight, |R0| < √Q0.

    Returns
    -------
    R, Q : float or ndarray

    Examples
    --------
    >>> R, Q = online_learning_curve(2.0, "hebb")    # R = η√(2/π) α
    >>> bool(abs(R - 2 * np.sqrt(2 / np.pi)) < 1e-9)
    True
    """
    rates, _ = _online_rule(rule)
    a = _alpha_array(alpha)
    if not learning_rate > 0 or not np.isfinite(learning_rate):
        raise ValueError(f"learning_rate must be positive; got {learning_rate!r}.")
    if not (Q0 > 0 and abs(R0) < np.sqrt(Q0)):
        raise ValueError(f"need Q0 > 0 and |R0| < sqrt(Q0); got R0={R0!r}, Q0={Q0!r}.")
    grid = np.unique(np.concatenate([[0.0], a.ravel()]))

    def runaway(_, z):  # |J|² = NQ grows without bound (AdaTron with η > 3): stop in time
        return z[1] - Q_MAX
    runaway.terminal = True

    sol = solve_ivp(lambda _, z: rates(z[0], z[1], learning_rate), (0.0, grid[-1]), [R0, Q0],
                    method="DOP853", t_eval=grid, rtol=1e-10, atol=1e-12, events=runaway)
    if sol.status == 1:
        raise ValueError(f"Q = |J|²/N passes {Q_MAX:.0e} at alpha = {sol.t_events[0][0]:.4g}: "
                         f"the student's length grows without bound ({rule}, learning_rate="
                         f"{learning_rate!r}); ask for smaller alpha.")
    if not sol.success:  # pragma: no cover - the ODEs are smooth and non-stiff
        raise RuntimeError(sol.message)
    R = np.interp(a, grid, sol.y[0]) if grid.size > 1 else np.full(a.shape, R0)
    Q = np.interp(a, grid, sol.y[1]) if grid.size > 1 else np.full(a.shape, Q0)
    if a.ndim == 0:
        return float(R), float(Q)
    return R, Q


def online_error(alpha, rule="perceptron", **kwargs):
    """ε_g = arccos(R/√Q)/π of on-line learning; see :func:`online_learning_curve`.

    Large-α laws: Hebb ε ≈ 1/√(2πα), perceptron (η = 1, any start)
    ε ≈ (2/(3α))^{1/3}/π, AdaTron ε ≈ 3/((3η − η²)α). ε is computed from R and Q, so its
    relative accuracy degrades once 1 − ρ ≈ (πε)²/2 approaches the solver's tolerance:
    for AdaTron at α = 10⁶ it is about 1e-4 (at α ≤ 10⁵ better than 1e-5).

    Defined in chapter "On-line learning" (``book/online_learning.md``).

    Examples
    --------
    >>> round(online_error(0.0), 3)
    0.5
    """
    R, Q = online_learning_curve(alpha, rule, **kwargs)
    return _arccos_error(np.asarray(R) / np.sqrt(Q))


def online_simulation(alpha, rule="perceptron", *, n_features=200, n_repeats=20,
                      learning_rate=1.0, random_state=None):
    """Simulate on-line learning: J ← J + F(y, u) ξ/√N on fresh Gaussian examples.

    All repetitions run at once (one row of J per repetition). Each starts from a random
    J with |J|² = N orthogonal to its teacher (R0 = 0, Q0 = 1).

    Defined in chapter "On-line learning" (``book/online_learning.md``).

    Parameters
    ----------
    alpha : array-like of float
        Increasing loads at which to record ε_g; the run takes round(max(alpha)·N) steps.
    rule : {"hebb", "perceptron", "adatron"}
    n_features : int, default=200
    n_repeats : int, default=20
    learning_rate : float, default=1.0
    random_state : int, Generator or None

    Returns
    -------
    ndarray of shape (len(alpha), n_repeats)
        The generalization error arccos(ρ)/π of each repetition at each load.

    Examples
    --------
    >>> eps = online_simulation([1.0], "hebb", n_features=50, n_repeats=3, random_state=0)
    >>> eps.shape
    (1, 3)
    """
    _, modulation = _online_rule(rule)
    a = _alpha_array(alpha)
    if a.ndim != 1 or a.size == 0 or np.any(np.diff(a) < 0):
        raise ValueError(f"alpha must be a non-empty increasing 1-d array; got {alpha!r}.")
    N, reps = int(n_features), int(n_repeats)
    if N < 2 or reps < 1:
        raise ValueError(f"need n_features >= 2 and n_repeats >= 1; got {N}, {reps}.")
    rng = np.random.default_rng(random_state)
    B = rng.standard_normal((reps, N))
    B *= np.sqrt(N) / np.linalg.norm(B, axis=1, keepdims=True)
    J = rng.standard_normal((reps, N))
    J -= np.sum(J * B, axis=1, keepdims=True) / N * B
    J *= np.sqrt(N) / np.linalg.norm(J, axis=1, keepdims=True)
    stops = np.round(a * N).astype(int)
    out = np.empty((a.size, reps))
    k = 0
    for step in range(stops[-1] + 1):
        while k < stops.size and stops[k] == step:  # record ε_g = arccos(ρ)/π
            rho = np.sum(J * B, axis=1) / (np.linalg.norm(J, axis=1) * np.sqrt(N))
            out[k] = np.arccos(np.clip(rho, -1.0, 1.0)) / np.pi
            k += 1
        if step == stops[-1]:
            break
        xi = rng.standard_normal((reps, N))
        y = np.sum(J * xi, axis=1) / np.sqrt(N)
        u = np.sum(B * xi, axis=1) / np.sqrt(N)
        J += modulation(y, u, learning_rate)[:, None] * xi / np.sqrt(N)
    return out
