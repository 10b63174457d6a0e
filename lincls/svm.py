"""The linear support vector machine: the hard and the soft margin.

Defined in chapter "Support vector machines" (``book/svm.md``).

The soft-margin SVM solves the quadratic program

    minimize   ½ |w|² + C Σ_i ξ_i
    subject to y_i (w · x_i + b) ≥ 1 - ξ_i,   ξ_i ≥ 0,

in which the bias b is *not* penalized (the standard problem, the one libsvm and
scikit-learn's ``SVC(kernel="linear")`` solve). ``C = inf`` forbids slack: the hard
margin. Two solvers are here:

* ``solver="ipm"`` (default): a primal–dual interior-point method (Mehrotra's
  predictor–corrector) on this QP. After eliminating the per-sample variables every
  Newton step is one symmetric positive definite system of size n_features + 1, the
  idea of Ferris & Munson (2002); it runs at the speed of dense linear algebra.
* ``solver="smo"``: sequential minimal optimization (Platt 1998) on the dual, which
  changes two multipliers at a time so that Σ α_i y_i = 0 stays true. It is the
  algorithm the chapter teaches; in Python it is slow on thousands of samples.
"""

import numpy as np
from numba import njit
from scipy.linalg import LinAlgError, get_lapack_funcs
from sklearn.utils._param_validation import Interval, Real, StrOptions

from ._base import (
    CLASS_WEIGHT,
    MAX_ITER,
    POSITIVE,
    LinearClassifier,
    augment,
    box_bound,
    check_finite,
)
from ._blas import blas_threads_for

__all__ = ["LinearSVM", "primal_objective", "dual_objective", "hinge_loss", "smo_pair_update"]


def hinge_loss(margins):
    """The hinge loss max(0, 1 - m) of functional margins m_i = y_i (w · x_i + b).

    Defined in chapter "Support vector machines".

    Examples
    --------
    >>> hinge_loss(np.array([2.0, 1.0, 0.5, -1.0]))
    array([0. , 0. , 0.5, 2. ])
    """
    return np.maximum(0.0, 1.0 - margins)


def _slack_cost(C, slack):
    """C Σ_i ξ_i, or Σ_i C_i ξ_i for an array of per-sample prices C_i = C s_i."""
    return C * slack.sum() if np.ndim(C) == 0 else C @ slack


def primal_objective(w, b, X, y, C, *, feasibility_tol=1e-4):
    """The soft-margin objective ½|w|² + C Σ_i max(0, 1 - y_i (w · x_i + b)), eq. (svm-hinge).

    Defined in chapter "Support vector machines". ``C`` may also be an array of one
    price per sample, C_i = C s_i for sample weights s_i: then the sum is Σ_i C_i ξ_i.

    With ``C = inf`` this is the hard-margin objective ½|w|² when every margin is at least
    1 (up to ``feasibility_tol``), and inf otherwise.

    Examples
    --------
    >>> X, y = np.array([[0.0], [2.0]]), np.array([-1, 1])
    >>> float(primal_objective([1.0], -1.0, X, y, C=1.0))    # both on the margin
    0.5
    >>> float(primal_objective([0.5], -0.5, X, y, C=1.0))    # margins ½: slack ½ each
    1.125
    """
    w = np.asarray(w, dtype=float).ravel()
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    slack = hinge_loss(y * (X @ w + b))
    if np.ndim(C) == 0 and np.isinf(C):
        return 0.5 * w @ w if np.all(slack <= feasibility_tol) else np.inf
    return 0.5 * w @ w + _slack_cost(C, slack)


def dual_objective(alpha, X, y):
    """The dual objective Σ_i α_i - ½ |Σ_i α_i y_i x_i|², eq. (svm-dual).

    Defined in chapter "Support vector machines".

    By weak duality it is a lower bound of the primal objective for every feasible α
    (0 ≤ α_i ≤ C, Σ_i α_i y_i = 0); at the optimum the two are equal.

    Examples
    --------
    >>> X, y = np.array([[0.0], [2.0]]), np.array([-1, 1])
    >>> float(dual_objective(np.array([0.5, 0.5]), X, y))    # equals the primal optimum
    0.5
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    w = X.T @ (alpha * y)
    return alpha.sum() - 0.5 * w @ w


# -- the interior-point solver --------------------------------------------------------------

# Cholesky factor and solve, called directly: on the small systems of a small problem
# scipy's cho_factor and cho_solve spent longer checking arguments than LAPACK computing
_potrf, _potrs = get_lapack_funcs(("potrf", "potrs"), dtype=np.float64)


class _Iterate:
    """The variables of the interior-point method and their residuals.

    Primal: w, b, slacks ξ ≥ 0 and surpluses s ≥ 0 of the margin constraints
    y_i (w · x_i + b) + ξ_i - 1 - s_i = 0. Dual: multipliers α ≥ 0 of these constraints
    (the α of the SVM dual) and η = C - α ≥ 0 of ξ ≥ 0 (β in the chapter). ``soft`` is
    False for C = inf, where ξ and η are absent (kept at zero) and ``m``, the number of
    complementarity pairs that μ averages over, is n instead of 2n. ``C`` is a number or,
    with sample weights, the array of the bounds C s_i (then finite).
    """

    def __init__(self, X, y, C, bias):
        n, d = X.shape
        self.X, self.y, self.C, self.bias = X, y, C, bias
        self.soft = bool(np.all(np.isfinite(C)))
        self.Xa = augment(X) if bias else X               # the clamped input: b first
        self.off = int(bias)                              # where w starts in (b, w)
        self.w, self.b = np.zeros(d), 0.0
        self.alpha = np.full(n, min(1.0, C / 2)) if np.ndim(C) == 0 else np.minimum(1.0, C / 2)
        self.s = np.ones(n)
        self.xi = np.ones(n) if self.soft else np.zeros(n)
        self.eta = C - self.alpha if self.soft else np.zeros(n)
        self.m = 2 * n if self.soft else n            # number of complementarity pairs

    def residuals(self):
        """The KKT residuals: stationarity in w and b, the constraints, α + η = C."""
        X, y = self.X, self.y
        self.margins = y * (X @ self.w + self.b)
        self.r_w = self.w - X.T @ (self.alpha * y)
        self.r_b = y @ self.alpha if self.bias else 0.0
        self.r_p = self.margins + self.xi - 1.0 - self.s
        self.r_xi = self.C - self.alpha - self.eta if self.soft else np.zeros_like(self.s)
        self.mu = (self.s @ self.alpha + self.xi @ self.eta) / self.m

    def factorize(self):
        """Cholesky factor of I₀ + X̃ᵀ D⁻¹ X̃, the Newton matrix of size n_features (+ 1).

        The matrix is first scaled to unit diagonal (Jacobi equilibration), which keeps
        the factorization accurate when features have very different scales.
        """
        self.D = self.s / self.alpha + (self.xi / self.eta if self.soft else 0.0)
        M = self.Xa.T @ (self.Xa / self.D[:, None])
        w_part = np.arange(self.off, len(M))
        M[w_part, w_part] += 1.0                      # ½|w|² penalizes w, not b
        self.scale = 1.0 / np.sqrt(np.diag(M))
        M *= self.scale[:, None] * self.scale[None, :]
        if not np.isfinite(M).all():  # an s/α or ξ/η past the float range: no Newton step
            raise LinAlgError("the Newton matrix is not finite")
        self.factor, info = _potrf(M)                 # LAPACK's Cholesky, upper triangle
        if info > 0:                                   # numerically singular: tiny ridge
            self.factor, info = _potrf(M + 1e-10 * np.eye(len(M)))
        if info != 0:
            raise LinAlgError("the Newton matrix is not positive definite")

    def solve(self, rhs):
        """The solution of (I₀ + X̃ᵀ D⁻¹ X̃) x = rhs, from the factor of :meth:`factorize`."""
        x, _ = _potrs(self.factor, self.scale * rhs)
        return self.scale * x

    def direction(self, r_sa, r_xe):
        """Newton direction for the targets s∘α = ξ∘η = 0 with residuals r_sa, r_xe.

        The per-sample unknowns ds, dξ, dη are eliminated; what is left is the system
        (I₀ + X̃ᵀ D⁻¹ X̃) (db, dw) = rhs with D = s/α + ξ/η, then dα = D⁻¹ (g - y ∘ X̃ (db, dw)).
        """
        y, alpha, s, xi, eta = self.y, self.alpha, self.s, self.xi, self.eta
        g = -self.r_p - r_sa / alpha + ((r_xe + xi * self.r_xi) / eta if self.soft else 0.0)
        rhs = self.Xa.T @ (y * g / self.D)
        rhs[self.off:] -= self.r_w
        if self.bias:
            rhs[0] += self.r_b
        dwb = self.solve(rhs)
        if not np.isfinite(dwb).all():
            raise LinAlgError("the Newton direction is not finite")
        da = (g - y * (self.Xa @ dwb)) / self.D
        ds = (-r_sa - s * da) / alpha
        if not self.soft:
            return dwb, da, ds, 0.0 * s, 0.0 * s
        dxi = (-r_xe - xi * self.r_xi + xi * da) / eta
        return dwb, da, ds, dxi, self.r_xi - da

    def step_length(self, da, ds, dxi, de):
        """The largest t ≤ 1 that keeps α, s, ξ, η non-negative."""
        t = _step_to_boundary(_step_to_boundary(1.0, self.alpha, da), self.s, ds)
        if self.soft:
            t = _step_to_boundary(_step_to_boundary(t, self.xi, dxi), self.eta, de)
        return t

    def move(self, t, dwb, da, ds, dxi, de):
        self.w = self.w + t * dwb[self.off:]
        self.b = self.b + t * dwb[0] if self.bias else 0.0
        self.alpha, self.s = self.alpha + t * da, self.s + t * ds
        if self.soft:
            self.xi, self.eta = self.xi + t * dxi, self.eta + t * de


@njit(cache=True)
def _step_to_boundary(t, v, dv):
    """min(t, −v_i / dv_i over the i with dv_i < 0): the longest step ≤ t with v + t dv ≥ 0."""
    for i in range(len(v)):
        if dv[i] < 0.0:
            t = min(t, -v[i] / dv[i])
    return t


def mehrotra_step(it):
    """One predictor–corrector step of the interior-point method (Mehrotra 1992).

    Predictor: the Newton direction towards s∘α = ξ∘η = 0. Its progress fixes the
    centring σ = (μ_aff/μ)³; the corrector aims at σμ instead of 0 and adds the
    second-order terms ds∘dα and dξ∘dη. Both solve with the same Cholesky factor.
    """
    it.factorize()
    aff = it.direction(it.s * it.alpha, it.xi * it.eta)
    t = it.step_length(*aff[1:])
    _, da, ds, dxi, de = aff
    mu_aff = ((it.s + t * ds) @ (it.alpha + t * da) + (it.xi + t * dxi) @ (it.eta + t * de)) / it.m
    sigma_mu = (mu_aff / it.mu) ** 3 * it.mu
    step = it.direction(it.s * it.alpha + ds * da - sigma_mu, it.xi * it.eta + dxi * de - sigma_mu)
    it.move(min(1.0, 0.995 * it.step_length(*step[1:])), *step)


def _fit_ipm(X, y, C, bias, max_iter, tol):
    """The interior-point solver; returns (w, b, α, s, iterations, history, converged)."""
    it = _Iterate(X, y, C, bias)
    history = {"objective": [], "gap": []}
    scale = 1.0 + np.sqrt(len(y))
    # Past the accuracy rounding allows (a tol too small), the iterates can overflow: the
    # step is then refused as not finite and the fit warns, without numpy's warnings.
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for k in range(max_iter + 1):
            it.residuals()
            slack = _slack_cost(C, hinge_loss(it.margins)) if it.soft else 0.0
            primal = 0.5 * it.w @ it.w + slack
            gap = it.m * it.mu
            history["objective"].append(primal)
            history["gap"].append(gap)
            infeasibility = max(np.linalg.norm(it.r_p) / scale,
                                np.linalg.norm(it.r_w) / (1.0 + np.linalg.norm(it.w)),
                                abs(it.r_b) / scale, np.linalg.norm(it.r_xi) / scale)
            if gap <= tol * primal and infeasibility <= tol:
                return it.w, it.b, it.alpha, it.s, k, history, True
            if k == max_iter or (not it.soft and it.alpha.max() > 1e10 * (1.0 + np.abs(X).max())):
                break  # out of iterations, or (hard margin) α runs off to infinity: infeasible
            try:
                mehrotra_step(it)
            except LinAlgError:
                break
    return it.w, it.b, it.alpha, it.s, k, history, False


# -- SMO, the algorithm of the chapter ----------------------------------------------------


def smo_pair_update(alpha, grad, i, j, y, K_ii, K_jj, K_ij, C):
    """Optimize the dual over (α_i, α_j) along Σ α_k y_k = const, eq. (svm-smo).

    Defined in chapter "Support vector machines".

    ``grad`` is the gradient of the dual objective to *minimize*, y_k f_k - 1 with
    f_k = w · x_k. Moving α_i by +y_i t and α_j by -y_j t keeps Σ α_k y_k fixed; the
    one-dimensional quadratic is minimized in t and clipped to the box 0 ≤ α ≤ C. ``C``
    may be an array of per-sample bounds C s_k (sample weights s_k). Returns the new
    (α_i, α_j).

    Examples
    --------
    >>> y = np.array([1.0, -1.0])                         # K = identity: K_ii = K_jj = 1
    >>> alpha = np.zeros(2); grad = -np.ones(2)          # dual gradient at α = 0
    >>> [float(a) for a in smo_pair_update(alpha, grad, 0, 1, y, 1.0, 1.0, 0.0, C=10.0)]
    [1.0, 1.0]
    """
    curvature = max(K_ii + K_jj - 2.0 * K_ij, 1e-12)
    t = (y[j] * grad[j] - y[i] * grad[i]) / curvature       # unconstrained minimizer
    C_i, C_j = box_bound(C, i), box_bound(C, j)
    # box: 0 ≤ α_i + y_i t ≤ C_i and 0 ≤ α_j - y_j t ≤ C_j
    lo_i, hi_i = (-alpha[i], C_i - alpha[i]) if y[i] > 0 else (alpha[i] - C_i, alpha[i])
    lo_j, hi_j = (alpha[j] - C_j, alpha[j]) if y[j] > 0 else (-alpha[j], C_j - alpha[j])
    t = np.clip(t, max(lo_i, lo_j), min(hi_i, hi_j))
    return alpha[i] + y[i] * t, alpha[j] - y[j] * t


def _fit_smo(X, y, C, bias, max_iter, tol):
    """SMO, maximal violating pair (Keerthi et al. 2001); returns (w, b, α, it, history, ok).

    The bias is the mean of y_k − w · x_k over the free multipliers (0 < α_k < C), or,
    without one, the midpoint of the scores of the last pair (i, j).

    Without a bias there is no equality constraint, and the pair degenerates to single
    coordinates (α_i alone), which is exact coordinate descent on the dual.
    """
    n = X.shape[0]
    alpha, w = np.zeros(n), np.zeros(X.shape[1])
    sq = np.einsum("ij,ij->i", X, X)
    history = {"objective": [], "gap": []}
    for k in range(max_iter + 1):
        grad = y * (X @ w) - 1.0                     # ∇ of ½ αᵀQα - Σ α, Q_ij = y_i y_j x_i·x_j
        if bias:  # the pair that violates the KKT conditions most (score = y_k - f_k)
            score = -y * grad
            up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
            low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
            i = np.flatnonzero(up)[np.argmax(score[up])]
            j = np.flatnonzero(low)[np.argmin(score[low])]
            violation = score[i] - score[j]
        else:     # the coordinate with the largest projected gradient
            projected = np.where(grad < 0, np.where(alpha < C, -grad, 0.0),
                                 np.where(alpha > 0, grad, 0.0))
            i = j = int(np.argmax(projected))
            violation = projected[i]
        history["gap"].append(float(violation))
        history["objective"].append(-dual_objective(alpha, X, y))
        if violation <= tol or k == max_iter:
            break
        old_i, old_j = alpha[i], alpha[j]
        if bias:
            alpha[i], alpha[j] = smo_pair_update(alpha, grad, i, j, y, sq[i], sq[j],
                                                 X[i] @ X[j], C)
        else:
            alpha[i] = np.clip(alpha[i] - grad[i] / max(sq[i], 1e-12), 0.0, box_bound(C, i))
        w += (alpha[i] - old_i) * y[i] * X[i]
        if j != i:
            w += (alpha[j] - old_j) * y[j] * X[j]
    converged = bool(violation <= tol)
    b = 0.0
    if bias:
        # KKT: a free multiplier (0 < α_k < C) sits on the margin, y_k (f_k + b) = 1,
        # so b = y_k - f_k = score_k; without one, take the middle of [M, m].
        free = (alpha > 0) & (alpha < C)
        b = float(np.mean(score[free])) if np.any(free) else 0.5 * float(score[i] + score[j])
    return w, b, alpha, k, history, converged


class LinearSVM(LinearClassifier):
    """The linear support vector machine with hard (``C=inf``) or soft margin.

    Defined in chapter "Support vector machines".

    Minimizes ½|w|² + C Σ_i max(0, 1 - y_i (w · x_i + b)) over w and an unpenalized
    bias b, the problem of ``sklearn.svm.SVC(kernel="linear")``.

    Parameters
    ----------
    C : float or np.inf, default=1.0
        The price of a unit of slack. ``np.inf`` gives the hard-margin SVM, which exists
        only for linearly separable data; on other data the fit warns and stops.
    fit_intercept : bool, default=True
        Learn the bias b (unpenalized). False gives the hyperplane through the origin,
        the perceptron of optimal stability when ``C=inf``.
    max_iter : int, default=1000
        Bound on the iterations: interior-point steps, or pair updates for SMO.
    tol : float, default=1e-4
        Stopping tolerance: relative duality gap and infeasibility (IPM), or the
        largest KKT violation (SMO).
    solver : {"ipm", "smo"}, default="ipm"
        The interior-point method (fast) or sequential minimal optimization (for
        teaching; slow on large sets). Both solve the same problem.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``sample_weight`` (see :meth:`fit`): a
        dict maps a label to its weight, ``"balanced"`` weighs each class by
        n_samples / (2 · its count), as in scikit-learn's ``SVC``.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        The weights w = Σ_i α_i y_i x_i.
    intercept_ : ndarray of shape (1,)
        The bias b.
    alpha_ : ndarray of shape (n_samples,)
        The Lagrange multipliers α_i of the margin constraints, 0 ≤ α_i ≤ C (≤ C s_i with
        sample weights; of the samples of positive weight).
    dual_coef_ : ndarray of shape (1, n_support)
        α_i y_i of the support vectors (scikit-learn's ``SVC`` convention).
    support_ : ndarray of shape (n_support,)
        Indices of the support vectors, the samples with α_i > 0.
    support_vectors_ : ndarray of shape (n_support, n_features)
    margin_ : float
        1 / |w|, the distance from the hyperplane to the margin hyperplanes w · x + b = ±1.
    objective_ : float
        The primal objective at the solution.
    n_iter_ : int
    converged_ : bool
    history_ : dict
        Per iteration: ``objective`` (primal for IPM, dual for SMO, to be minimized) and
        ``gap`` (duality gap for IPM, largest KKT violation for SMO).
    classes_ : ndarray of shape (2,)
    n_features_in_ : int

    Notes
    -----
    The dual, eq. (svm-dual), is: maximize Σ α_i - ½ Σ_ij α_i α_j y_i y_j x_i · x_j
    subject to 0 ≤ α_i ≤ C and Σ α_i y_i = 0 (the last only with a bias). The KKT
    conditions make α_i = 0 for samples beyond the margin and α_i = C inside it; a free
    multiplier, 0 < α_i < C, puts its sample on the margin (where α_i may also be 0 or C).

    With sample weights s_i the objective is ½|w|² + C Σ_i s_i ξ_i and the box of the
    dual becomes 0 ≤ α_i ≤ C s_i, as in scikit-learn's ``SVC``: an integer weight n is n
    copies of the sample (the same objective, so the same w and b where they are unique),
    and a weight 0 drops it. With ``C=inf`` weights change nothing but the samples of
    weight 0, which are dropped: the hard margin has no slack to price.

    The interior-point method stops when the duality gap s·α + ξ·η = m μ (m = 2n
    complementarity pairs, or m = n for ``C=inf``, where ξ and η are absent) is at most
    ``tol`` times the primal objective and the relative residuals are at most ``tol``.
    SMO takes the bias from the free multipliers, b = mean of y_k − w · x_k over them;
    with none free, it takes the middle of the interval of optimal biases that the
    last maximal violating pair brackets.

    References
    ----------
    .. [1] Cortes, C. and Vapnik, V. (1995). Support-vector networks. Machine Learning
       20, 273–297.
    .. [2] Platt, J. (1998). Sequential minimal optimization: a fast algorithm for
       training support vector machines. Microsoft Research MSR-TR-98-14.
    .. [3] Ferris, M. C. and Munson, T. S. (2002). Interior-point methods for massive
       support vector machines. SIAM Journal on Optimization 13(3), 783–804.

    Examples
    --------
    >>> import numpy as np
    >>> from lincls.svm import LinearSVM
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [1.0, 2.0]])
    >>> y = np.array([-1, -1, 1, 1])
    >>> svm = LinearSVM(C=np.inf).fit(X, y)
    >>> bool(np.allclose(svm.coef_, [[0.0, 1.0]], atol=1e-4)), svm.intercept_.round(3)
    (True, array([-1.]))
    >>> round(svm.margin_, 3), svm.support_.tolist()
    (1.0, [0, 1, 2, 3])
    """

    _parameter_constraints = {
        **LinearClassifier._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="right")],
        "max_iter": [MAX_ITER],
        "tol": [POSITIVE],
        "solver": [StrOptions({"ipm", "smo"})],
        "class_weight": CLASS_WEIGHT,
    }

    def __init__(self, *, C=1.0, fit_intercept=True, max_iter=1000, tol=1e-4, solver="ipm",
                 class_weight=None):
        self.C = C
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.class_weight = class_weight

    def fit(self, X, y, sample_weight=None):
        """Solve the soft- (or hard-) margin problem for samples ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two distinct labels of any type.
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Non-negative weights s_i: the slack of sample i costs C s_i, the box of its
            multiplier is 0 ≤ α_i ≤ C s_i; a weight 0 drops the sample. Multiplied by the
            weights of ``class_weight``.

        Returns
        -------
        self : object
        """
        return self._fit(X, y, sample_weight)

    def _fit_augmented(self, Xa, y):
        # The bias is not penalized, so the solvers take the raw inputs and b separately.
        X = Xa[:, 1:] if self.fit_intercept else Xa
        # |x_i · x_j| ≤ max_k |x_k|² (Cauchy–Schwarz): a finite diagonal, a finite Gram matrix
        check_finite(self, X, "Gram matrix x_i · x_j", np.einsum("ij,ij->i", X, X))
        C = float(self.C)
        if self._sample_weight is not None and np.isfinite(C):
            C = C * self._sample_weight            # the per-sample prices C s_i
        if self.solver == "ipm":
            with blas_threads_for(20 * X.shape[0] * X.shape[1] ** 2):  # ~20 Newton steps
                w, b, alpha, s, n_iter, history, ok = _fit_ipm(
                    X, y, C, self.fit_intercept, self.max_iter, self.tol)
            support = alpha > s            # complementarity: α_i s_i = 0, the larger is "on"
        else:
            w, b, alpha, n_iter, history, ok = _fit_smo(
                X, y, C, self.fit_intercept, self.max_iter, self.tol)
            support = alpha > 0
        self.n_iter_, self.converged_ = n_iter, ok
        self.history_ = {key: np.asarray(values) for key, values in history.items()}
        self.alpha_ = alpha
        self.support_ = np.flatnonzero(support)
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = (alpha * y)[self.support_].reshape(1, -1)
        norm = np.linalg.norm(w)
        self.margin_ = float(1.0 / norm) if norm > 0 else np.inf
        self.objective_ = float(primal_objective(w, b, X, y, C))
        if not ok:
            what = ("the data may not be linearly separable, and the hard margin (C=inf) "
                    "exists only for separable data" if np.isinf(self.C)
                    else "increase max_iter or tol" if n_iter >= self.max_iter
                    else "tol asks for more accuracy than rounding allows: increase tol")
            self._not_converged(
                f"LinearSVM ({self.solver}) stopped after {n_iter} iterations without "
                f"converging: {what}.")
        return np.append(b, w) if self.fit_intercept else w
