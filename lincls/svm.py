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
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ._base import LinearClassifier, _check_positive

__all__ = ["LinearSVM", "primal_objective", "dual_objective", "hinge_loss", "smo_pair_update"]


def hinge_loss(margins):
    """The hinge loss max(0, 1 - m) of functional margins m_i = y_i (w · x_i + b)."""
    return np.maximum(0.0, 1.0 - margins)


def primal_objective(w, b, X, y, C, *, feasibility_tol=1e-4):
    """The soft-margin objective ½|w|² + C Σ_i max(0, 1 - y_i (w · x_i + b)), eq. (svm-hinge).

    With ``C = inf`` this is the hard-margin objective ½|w|² when every margin is at least
    1 (up to ``feasibility_tol``), and inf otherwise.
    """
    w = np.asarray(w, dtype=float).ravel()
    slack = hinge_loss(y * (X @ w + b))
    if np.isinf(C):
        return 0.5 * w @ w if np.all(slack <= feasibility_tol) else np.inf
    return 0.5 * w @ w + C * slack.sum()


def dual_objective(alpha, X, y):
    """The dual objective Σ_i α_i - ½ |Σ_i α_i y_i x_i|², eq. (svm-dual)."""
    w = X.T @ (alpha * y)
    return alpha.sum() - 0.5 * w @ w


# -- the interior-point solver --------------------------------------------------------------


def _newton_direction(factor, Xa, y, D, g, r_w, r_b, bias):
    """Solve one Newton system of the interior-point method, reduced to size n_features + 1.

    With D = ξ/η + s/α the eliminated system reads (I₀ + X̃ᵀ D⁻¹ X̃) (dw, db) = rhs, where
    I₀ is the identity with a zero for the bias; then dα = D⁻¹ (g - y ∘ (X̃ (dw, db))).
    """
    rhs = Xa.T @ (y * g / D)
    rhs[: len(r_w)] -= r_w
    if bias:
        rhs[-1] += r_b
    step = cho_solve(factor, rhs)
    d_alpha = (g - y * (Xa @ step)) / D
    return step, d_alpha


def _max_step(v, dv):
    """The largest t ≤ 1 with v + t dv ≥ 0 (v > 0)."""
    neg = dv < 0
    return min(1.0, float(np.min(-v[neg] / dv[neg]))) if np.any(neg) else 1.0


def _fit_ipm(X, y, C, bias, max_iter, tol):
    """Mehrotra predictor–corrector on the primal QP; returns (w, b, α, s, iterations, history, ok).

    Variables: w, b, slacks ξ ≥ 0, surplus s ≥ 0 of the margin constraints
    y_i (w · x_i + b) + ξ_i - 1 - s_i = 0, and their multipliers α ≥ 0 (the dual
    variables of the SVM) and η = C - α ≥ 0.
    """
    n, d = X.shape
    soft = np.isfinite(C)
    Xa = np.hstack([X, np.ones((n, 1))]) if bias else X
    p = Xa.shape[1]
    w, b = np.zeros(d), 0.0
    alpha = np.full(n, min(1.0, C / 2))
    s = np.ones(n)
    xi = np.ones(n) if soft else np.zeros(n)
    eta = C - alpha if soft else np.zeros(n)
    m = 2 * n if soft else n
    history = {"objective": [], "gap": []}
    scale = 1.0 + np.sqrt(n)
    for it in range(1, max_iter + 1):
        f = y * (X @ w + b)
        r_w = w - X.T @ (alpha * y)                     # stationarity in w
        r_b = y @ alpha if bias else 0.0                # Σ α_i y_i = 0 (with a bias only)
        r_p = f + xi - 1.0 - s                          # margin constraints
        r_xi = (C - alpha - eta) if soft else np.zeros(n)
        mu = (s @ alpha + xi @ eta) / m
        primal = 0.5 * w @ w + (C * hinge_loss(f).sum() if soft else 0.0)
        history["objective"].append(primal)
        history["gap"].append(m * mu)
        infeas = max(np.linalg.norm(r_p) / scale, np.linalg.norm(r_w) / (1 + np.linalg.norm(w)),
                     abs(r_b) / scale, np.linalg.norm(r_xi) / scale if soft else 0.0)
        if m * mu <= tol * max(1.0, primal) and infeas <= tol:
            return w, b, alpha, s, it - 1, history, True
        if not soft and alpha.max() > 1e10 * (1.0 + np.abs(X).max()):
            break  # the multipliers run off to infinity: no hard margin exists
        # eliminate ds, dξ, dη; D is the diagonal left for dα
        D = s / alpha + (xi / eta if soft else 0.0)
        M = Xa.T @ (Xa / D[:, None])
        M[np.arange(d), np.arange(d)] += 1.0
        try:
            factor = cho_factor(M + 1e-13 * np.trace(M) * np.eye(p), check_finite=False)
        except LinAlgError:
            break

        def direction(r_sa, r_xe):
            g = -r_p - r_sa / alpha + ((r_xe + xi * r_xi) / eta if soft else 0.0)
            (dwb, da) = _newton_direction(factor, Xa, y, D, g, r_w, r_b, bias)
            ds = (-r_sa - s * da) / alpha
            dxi = ((-r_xe - xi * r_xi + xi * da) / eta) if soft else np.zeros(n)
            de = (r_xi - da) if soft else np.zeros(n)
            return dwb, da, ds, dxi, de

        def step_length(da, ds, dxi, de):
            t = min(_max_step(alpha, da), _max_step(s, ds))
            if soft:
                t = min(t, _max_step(xi, dxi), _max_step(eta, de))
            return t

        # predictor: the pure Newton (affine-scaling) direction
        dwb, da, ds, dxi, de = direction(s * alpha, xi * eta)
        t = step_length(da, ds, dxi, de)
        mu_aff = ((s + t * ds) @ (alpha + t * da) + (xi + t * dxi) @ (eta + t * de)) / m
        sigma = (mu_aff / mu) ** 3
        # corrector: aim at the centre σμ and correct the second-order term
        dwb, da, ds, dxi, de = direction(s * alpha + ds * da - sigma * mu,
                                         xi * eta + dxi * de - sigma * mu)
        t = min(1.0, 0.995 * step_length(da, ds, dxi, de))
        w = w + t * dwb[:d]
        b = b + t * dwb[d] if bias else 0.0
        alpha, s = alpha + t * da, s + t * ds
        if soft:
            xi, eta = xi + t * dxi, eta + t * de
    return w, b, alpha, s, it, history, False


# -- SMO, the algorithm of the chapter ----------------------------------------------------


def smo_pair_update(alpha, grad, i, j, y, K_ii, K_jj, K_ij, C):
    """Optimize the dual over (α_i, α_j) along Σ α_k y_k = const, eq. (svm-smo).

    ``grad`` is the gradient of the dual objective to *minimize*, y_k f_k - 1 with
    f_k = w · x_k. Moving α_i by +y_i t and α_j by -y_j t keeps Σ α_k y_k fixed; the
    one-dimensional quadratic is minimized in t and clipped to the box 0 ≤ α ≤ C.
    Returns the new (α_i, α_j).
    """
    curvature = max(K_ii + K_jj - 2.0 * K_ij, 1e-12)
    t = (y[j] * grad[j] - y[i] * grad[i]) / curvature       # unconstrained minimizer
    # box: 0 ≤ α_i + y_i t ≤ C and 0 ≤ α_j - y_j t ≤ C
    lo_i, hi_i = (-alpha[i], C - alpha[i]) if y[i] > 0 else (alpha[i] - C, alpha[i])
    lo_j, hi_j = (alpha[j] - C, alpha[j]) if y[j] > 0 else (-alpha[j], C - alpha[j])
    t = np.clip(t, max(lo_i, lo_j), min(hi_i, hi_j))
    return alpha[i] + y[i] * t, alpha[j] - y[j] * t


def _fit_smo(X, y, C, bias, max_iter, tol):
    """SMO with the maximal violating pair (Keerthi et al. 2001); returns (w, b, α, it, history, ok).

    Without a bias there is no equality constraint, and the pair degenerates to single
    coordinates (α_i alone), which is exact coordinate descent on the dual.
    """
    n = X.shape[0]
    alpha = np.zeros(n)
    w = np.zeros(X.shape[1])
    sq = np.einsum("ij,ij->i", X, X)
    grad = -np.ones(n)                                   # ∇ of ½αᵀQα - Σα at α = 0
    history = {"objective": [], "gap": []}
    for it in range(1, max_iter + 1):
        score = -y * grad                                # -y_k ∇_k
        up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
        low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
        if bias:
            i = np.flatnonzero(up)[np.argmax(score[up])]
            j = np.flatnonzero(low)[np.argmin(score[low])]
            violation = score[i] - score[j]
        else:  # coordinate descent: the coordinate with the largest projected gradient
            pg = np.where(up & (score > 0), score, 0.0) - np.where(low & (score < 0), score, 0.0)
            i = j = int(np.argmax(pg))
            violation = pg[i]
        history["gap"].append(violation)
        history["objective"].append(-dual_objective(alpha, X, y))
        if violation <= tol:
            break
        if bias:
            new_i, new_j = smo_pair_update(alpha, grad, i, j, y, sq[i], sq[j], X[i] @ X[j], C)
        else:
            new_i = np.clip(alpha[i] - grad[i] / max(sq[i], 1e-12), 0.0, C)
            new_j = new_i
        delta = np.zeros(n)
        delta[i], delta[j] = new_i - alpha[i], new_j - alpha[j]
        changed = np.flatnonzero(delta)
        w += X[changed].T @ (delta[changed] * y[changed])
        alpha[changed] += delta[changed]
        grad = y * (X @ w) - 1.0
    converged = violation <= tol
    b = 0.0
    if bias:
        # KKT: a free multiplier (0 < α_k < C) sits on the margin, y_k (f_k + b) = 1,
        # so b = y_k - f_k = score_k; without one, take the middle of [M, m].
        score = -y * grad
        free = (alpha > 0) & (alpha < C)
        b = float(np.mean(score[free])) if np.any(free) else 0.5 * float(score[i] + score[j])
    return w, b, alpha, it - converged, history, converged


class LinearSVM(LinearClassifier):
    """The linear support vector machine with hard (``C=inf``) or soft margin.

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

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        The weights w = Σ_i α_i y_i x_i.
    intercept_ : ndarray of shape (1,)
        The bias b.
    alpha_ : ndarray of shape (n_samples,)
        The Lagrange multipliers α_i of the margin constraints, 0 ≤ α_i ≤ C.
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
    conditions make α_i = 0 for samples beyond the margin, 0 < α_i < C on it and
    α_i = C inside it.

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
    >>> svm.coef_.round(3), svm.intercept_.round(3), round(svm.margin_, 3)
    (array([[0., 1.]]), array([-1.]), 1.0)
    """

    def __init__(self, *, C=1.0, fit_intercept=True, max_iter=1000, tol=1e-4, solver="ipm"):
        self.C = C
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver

    def _validate_params(self):
        super()._validate_params()
        _check_positive("C", self.C, allow_inf=True)
        _check_positive("max_iter", self.max_iter, integer=True)
        _check_positive("tol", self.tol)
        if self.solver not in ("ipm", "smo"):
            raise ValueError(f'solver must be "ipm" or "smo"; got {self.solver!r}.')

    def _fit_augmented(self, Xa, y):
        # The bias is not penalized, so the solvers take the raw inputs and b separately.
        X = Xa[:, 1:] if self.fit_intercept else Xa
        C = float(self.C)
        if self.solver == "ipm":
            w, b, alpha, s, n_iter, history, ok = _fit_ipm(
                X, y, C, self.fit_intercept, self.max_iter, self.tol)
            support = alpha > s            # complementarity: α_i s_i = 0, the larger is "on"
        else:
            w, b, alpha, n_iter, history, ok = _fit_smo(
                X, y, C, self.fit_intercept, self.max_iter, self.tol)
            support = alpha > 0
        self.n_iter_, self.history_, self.converged_ = n_iter, history, ok
        self.alpha_ = alpha
        self.support_ = np.flatnonzero(support)
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = (alpha * y)[self.support_].reshape(1, -1)
        norm = np.linalg.norm(w)
        self.margin_ = float(1.0 / norm) if norm > 0 else np.inf
        self.objective_ = float(primal_objective(w, b, X, y, C))
        if not ok:
            what = ("the data may not be linearly separable, and the hard margin (C=inf) "
                    "exists only for separable data" if np.isinf(C)
                    else "increase max_iter or tol")
            self._not_converged(
                f"LinearSVM ({self.solver}) stopped after {n_iter} iterations without "
                f"converging: {what}.")
        return np.append(b, w) if self.fit_intercept else w
