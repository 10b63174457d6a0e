"""Kernels: the dual perceptron and the kernel support vector machine.

Defined in chapter "Kernels" (``book/kernels.md``).

A kernel K(x, z) = φ(x) · φ(z) is an inner product in a feature space that is never
built. Both algorithms here touch the samples only through inner products, so they run
in feature space at the cost of the n × n Gram matrix K_ij = K(x_i, x_j):

* :class:`KernelPerceptron`, the perceptron in dual form: w = Σ_j α_j y_j φ(x_j), where
  α_j counts the mistakes made on sample j (Aizerman, Braverman & Rozonoer 1964);
* :class:`KernelSVM`, the soft-margin SVM dual of chapter "Support vector machines"
  with x_i · x_j replaced by K(x_i, x_j), solved by SMO with second-order working-set
  selection (Fan, Chen & Lin 2005) and shrinking, the problem of ``sklearn.svm.SVC``.

Both need K to be positive semidefinite (every Gram matrix PSD): then K is an inner
product in a feature space and the SVM dual is concave. The three kernels here are; a
polynomial kernel with c₀ < 0 need not be, so ``coef0`` must be ≥ 0.

The loops are compiled with numba; with ``NUMBA_DISABLE_JIT=1`` they run as plain Python.
"""

import math
from itertools import combinations_with_replacement
from numbers import Integral, Real

import numpy as np
from numba import njit, types
from numba.extending import overload
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import (
    CLASS_WEIGHT,
    IterativeMixin,
    box_bound,
    check_finite,
    check_targets,
    labels_to_signs,
    refuse_fit_params,
    warn_at_caller,
    weigh_samples,
)
from ._blas import blas_threads_for

__all__ = ["kernel_matrix", "polynomial_feature_map", "KernelPerceptron", "KernelSVM",
           "kernel_dual_objective", "kernel_perceptron_epoch"]


def kernel_matrix(X, Z, *, kernel="rbf", gamma=1.0, degree=3, coef0=1.0):
    """The Gram matrix K(x_i, z_j), eq. (kernels-kernels), in ``sklearn.svm.SVC``'s parameters.

    Defined in chapter "Kernels".

    ``"linear"``: x · z;  ``"poly"``: (γ x · z + c₀)^d;  ``"rbf"``: exp(-γ |x - z|²).

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> kernel_matrix(X, X, kernel="poly", gamma=1.0, degree=2, coef0=1.0)
    array([[4., 4.],
           [4., 9.]])
    """
    X, Z = np.asarray(X, dtype=float), np.asarray(Z, dtype=float)
    with blas_threads_for(X.shape[0] * Z.shape[0] * X.shape[1]):
        G = X @ Z.T
    if kernel == "linear":
        return G
    if kernel == "poly":
        return (gamma * G + coef0) ** degree
    if kernel == "rbf":
        sq = np.einsum("ij,ij->i", X, X)[:, None] + np.einsum("ij,ij->i", Z, Z)[None, :]
        G *= -2.0
        G += sq
        np.maximum(G, 0.0, out=G)               # rounding can make |x - z|² slightly negative
        G *= -gamma
        return np.exp(G, out=G)
    raise ValueError(f'kernel must be "linear", "poly" or "rbf"; got {kernel!r}.')


def polynomial_feature_map(X, *, degree=2, gamma=1.0, coef0=1.0):
    """The explicit feature map φ of the polynomial kernel: φ(x) · φ(z) = (γ x · z + c₀)^d.

    Defined in chapter "Kernels".

    With u = (√c₀, √γ x), (u · v)^d expands into one monomial per multiset of d indices;
    a monomial that repeats indices with multiplicities k₁, k₂, … carries the multinomial
    weight √(d! / (k₁! k₂! …)). There are binom(n + d, d) features for n inputs.

    Examples
    --------
    >>> phi = polynomial_feature_map(np.array([[1.0, 2.0]]), degree=2)
    >>> phi.shape, float(phi[0] @ phi[0])        # (1 + x · x)² = 36
    ((1, 6), 36.0)
    """
    X = np.asarray(X, dtype=float)
    U = np.hstack([np.full((len(X), 1), math.sqrt(coef0)), math.sqrt(gamma) * X])
    columns = []
    for idx in combinations_with_replacement(range(U.shape[1]), degree):
        counts = np.bincount(idx)
        weight = math.factorial(degree) / np.prod([math.factorial(k) for k in counts])
        columns.append(math.sqrt(weight) * np.prod(U[:, list(idx)], axis=1))
    return np.column_stack(columns)


# -- kernel rows, computed when an algorithm first needs them ---------------------------

_KINDS = {"linear": 0, "poly": 1, "rbf": 2}


@njit(cache=True)
def _power(x, p):
    """x ** p for an integer p ≥ 1 by repeated multiplication (faster than pow)."""
    r = x
    for _ in range(p - 1):
        r *= x
    return r


@njit(cache=True)
def _kernel_row(rows, slot, X, i, kind, gamma, degree, coef0, shift):
    """Row i of the Gram matrix (plus ``shift``), computed at its first use and kept.

    The algorithms need only the rows of the samples they update (libsvm does the same
    with its kernel cache), so most of the n × n matrix is often never computed. Rows are
    stored in order of first use: row i sits at ``rows[slot[i]]``, and ``slot[n]`` counts
    the rows made, so the memory touched is that of the rows used.
    """
    n, d = X.shape
    s = slot[i]
    if s < 0:
        s = slot[n]
        slot[n] += 1
        slot[i] = s
        row = rows[s]
        for t in range(n):
            acc = 0.0
            if kind == 2:
                for k in range(d):
                    diff = X[i, k] - X[t, k]
                    acc += diff * diff
                row[t] = math.exp(-gamma * acc) + shift
            else:
                for k in range(d):
                    acc += X[i, k] * X[t, k]
                row[t] = (acc if kind == 0 else _power(gamma * acc + coef0, degree)) + shift
    return rows[s]


def lazy_kernel(X, kind, gamma, degree, coef0, shift=0.0):
    """The tuple (rows, slot, X, kind, γ, d, c₀, shift) of :func:`_kernel_row`, no row made yet."""
    n = len(X)
    slot = np.full(n + 1, -1, dtype=np.int64)
    slot[n] = 0
    return (np.empty((n, n)), slot, np.ascontiguousarray(X, dtype=np.float64), int(kind),
            float(gamma), int(degree), float(coef0), float(shift))


def known_kernel(K):
    """The tuple of :func:`_kernel_row` for a Gram matrix ``K`` computed already (all rows made).

    Examples
    --------
    >>> known_kernel(np.eye(2))[1].tolist()     # row i at slot i; slot[n] counts them
    [0, 1, 2]
    """
    n = len(K)
    return (np.ascontiguousarray(K, dtype=np.float64), np.arange(n + 1, dtype=np.int64),
            np.zeros((n, 1)), 0, 0.0, 0, 0.0, 0.0)


def rows_made(K):
    """The rows of a lazy Gram matrix (the tuple of :func:`_kernel_row`) computed so far."""
    return K[0][:K[1][-1]]


def _kernel_diagonal(X, kind, gamma, degree, coef0):
    """K(x_i, x_i) for every sample."""
    sq = np.einsum("ij,ij->i", X, X)
    return (sq, (gamma * sq + coef0) ** degree, np.ones(len(X)))[kind]


# -- the dual perceptron ------------------------------------------------------------------


@njit(cache=True)
def kernel_perceptron_epoch(alpha, f, y, order, K):
    """One epoch of the dual perceptron, eqs. (kernels-dual-mistake) and (kernels-dual-update).

    Defined in chapter "Kernels".

    ``f`` holds the activations f_i = Σ_j α_j y_j K_ij of all samples. A mistake,
    y_i f_i ≤ 0, adds one to α_i, which adds y_i K_i· to every activation. ``K`` is a
    tuple (rows, slot, X, kind, γ, d, c₀, shift) whose rows are computed on first use.
    Updates ``alpha`` and ``f`` in place; returns the number of mistakes.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([1.0, -1.0])
    >>> K = known_kernel(X @ X.T)
    >>> alpha, f = np.zeros(2), np.zeros(2)
    >>> kernel_perceptron_epoch(alpha, f, y, np.arange(2), K), alpha.tolist(), f.tolist()
    (2, [1.0, 1.0], [1.0, -1.0])
    """
    mistakes = 0
    for i in order:
        if y[i] * f[i] <= 0.0:           # mistake: y_i (w · φ(x_i)) ≤ 0
            alpha[i] += 1.0              # w ← w + y_i φ(x_i)
            K_i = _kernel_row(K[0], K[1], K[2], i, K[3], K[4], K[5], K[6], K[7])
            for t in range(len(f)):      # f_t += y_i K_it
                f[t] += y[i] * K_i[t]
            mistakes += 1
    return mistakes


# -- the kernel SVM: SMO on the dual ------------------------------------------------------


def kernel_dual_objective(alpha, K, y):
    """The SVM dual Σ_i α_i - ½ Σ_ij α_i α_j y_i y_j K_ij, eq. (kernels-svm-dual).

    Defined in chapter "Kernels".

    Examples
    --------
    >>> K, y = np.array([[0.0, 0.0], [0.0, 4.0]]), np.array([-1.0, 1.0])
    >>> float(kernel_dual_objective(np.array([0.5, 0.5]), K, y))
    0.5
    """
    v = np.asarray(alpha, dtype=float) * np.asarray(y, dtype=float)
    return float(np.sum(alpha) - 0.5 * v @ K @ v)


@overload(box_bound)
def _box_bound_compiled(C, t):
    # numba picks the body by the type of C: a number costs nothing over using C itself
    if isinstance(C, types.Number):
        return lambda C, t: C
    return lambda C, t: C[t]


@njit(cache=True)
def _set_bounds(alpha, y, C, t, up, low):
    """Record whether α_t may move by +y_t δ (the set I_up) and by -y_t δ (I_low), δ > 0."""
    up[t] = alpha[t] < box_bound(C, t) if y[t] > 0 else alpha[t] > 0.0
    low[t] = alpha[t] > 0.0 if y[t] > 0 else alpha[t] < box_bound(C, t)


@njit(cache=True)
def _pick_i(v, up, active):
    """The first index of the working set: the largest score v over I_up."""
    i, v_max = -1, -np.inf
    for t in active:
        if up[t] and v[t] >= v_max:
            i, v_max = t, v[t]
    return i, v_max


@njit(cache=True)
def _pick_j(i, v_max, v, diag, K_i, low, active):
    """The second index (Fan, Chen & Lin's second-order rule WSS2) and the KKT violation.

    Among the samples of I_low with a smaller score than v_i = ``v_max``, j maximizes the
    increase of the dual, b²/a with b = v_i - v_j and a = K_ii + K_jj - 2 K_ij. The
    violation is v_max minus the smallest score over I_low.
    """
    j, v_min, best_b2, best_a = -1, np.inf, 0.0, 1.0
    d_i = diag[max(i, 0)]
    for t in active:
        if low[t]:
            v_min = min(v_min, v[t])
            b = v_max - v[t]
            if b > 0.0:
                a = max(d_i + diag[t] - 2.0 * K_i[t], 1e-12)
                if b * b * best_a > best_b2 * a:          # b²/a > best, without a division
                    j, best_b2, best_a = t, b * b, a
    return j, v_max - v_min


@njit(cache=True)
def smo_step(alpha, v, y, C, i, j, K_i, K_j, up, low, active):
    """Optimize the dual over (α_i, α_j) on the line Σ α_k y_k = const, eq. (kernels-smo).

    α_i moves by y_i δ and α_j by -y_j δ, which keeps Σ α_k y_k; the one-dimensional
    quadratic is maximized at δ* and clipped to the box 0 ≤ α ≤ C (0 ≤ α_t ≤ C s_t with
    sample weights s, C then an array). The scores
    v_t = y_t - Σ_l α_l y_l K_tl follow in place (on the active samples), and the same
    pass returns the next i: the largest score over I_up, and its value.
    """
    delta = (v[i] - v[j]) / max(K_i[i] + K_j[j] - 2.0 * K_i[j], 1e-12)
    C_i, C_j = box_bound(C, i), box_bound(C, j)
    lo_i, hi_i = (-alpha[i], C_i - alpha[i]) if y[i] > 0 else (alpha[i] - C_i, alpha[i])
    lo_j, hi_j = (alpha[j] - C_j, alpha[j]) if y[j] > 0 else (-alpha[j], C_j - alpha[j])
    delta = min(max(delta, max(lo_i, lo_j)), min(hi_i, hi_j))
    alpha[i] += y[i] * delta
    alpha[j] -= y[j] * delta
    _set_bounds(alpha, y, C, i, up, low)
    _set_bounds(alpha, y, C, j, up, low)
    next_i, v_max = -1, -np.inf
    for t in active:                     # v_t -= δ (K_ti - K_tj)
        v[t] -= delta * (K_i[t] - K_j[t])
        if up[t] and v[t] >= v_max:
            next_i, v_max = t, v[t]
    return next_i, v_max


@njit(cache=True)
def coordinate_step(alpha, v, y, C, i, K_i):
    """Without a bias, the dual has no equality constraint and α_i moves alone:
    α_i ← clip(α_i + y_i v_i / K_ii) to [0, C], and v_t -= y_i Δα_i K_ti for all t."""
    new = min(max(alpha[i] + y[i] * v[i] / max(K_i[i], 1e-12), 0.0), box_bound(C, i))
    delta = y[i] * (new - alpha[i])
    alpha[i] = new
    for t in range(len(v)):
        v[t] -= delta * K_i[t]


@njit(cache=True)
def _pick_coordinate(alpha, v, y, C):
    """Without a bias: the coordinate with the largest projected gradient, and its size."""
    best, i = -1.0, 0
    for t in range(len(v)):
        g = y[t] * v[t]                                   # minus the gradient
        p = (g if (g > 0.0 and alpha[t] < box_bound(C, t))
             else (-g if (g < 0.0 and alpha[t] > 0.0) else 0.0))
        if p > best:
            best, i = p, t
    return i, best


@njit(cache=True)
def _shrink(v, up, low, active):
    """The active samples minus those stuck at a bound (libsvm's shrinking heuristic).

    A multiplier at a bound whose score lies beyond the current extremes (above the
    largest v of I_up while it can only move down, or below the smallest v of I_low
    while it can only move up) is unlikely to move again and leaves the active set.
    """
    v_max, v_min = -np.inf, np.inf
    for t in active:
        if up[t]:
            v_max = max(v_max, v[t])
        if low[t]:
            v_min = min(v_min, v[t])
    keep = np.empty_like(active)
    n_keep = 0
    for t in active:
        stuck = (low[t] and not up[t] and v[t] > v_max) or (up[t] and not low[t] and v[t] < v_min)
        if not stuck:
            keep[n_keep] = t
            n_keep += 1
    return keep[:n_keep]


@njit(cache=True)
def _full_scores(alpha, y, K):
    """v = y - Σ_j α_j y_j K_·j from scratch, over the samples with α_j > 0."""
    v = y.copy()
    for j in range(len(y)):
        if alpha[j] > 0.0:
            K_j = _kernel_row(K[0], K[1], K[2], j, K[3], K[4], K[5], K[6], K[7])
            c = alpha[j] * y[j]
            for t in range(len(y)):
                v[t] -= c * K_j[t]
    return v


@njit(cache=True)
def _smo(alpha, v, diag, y, C, bias, tol, max_iter, K):
    """SMO until the largest KKT violation is ≤ tol; returns (steps, violation).

    With a bias, pairs by WSS2; every min(n, 1000) steps the active set shrinks, and when
    the shrunk problem is solved the scores are rebuilt and all samples checked again.
    Without a bias, single coordinates.
    """
    n = len(y)
    violation = np.inf
    if not bias:
        for k in range(max_iter + 1):
            i, violation = _pick_coordinate(alpha, v, y, C)
            if violation <= tol or k == max_iter:
                return k, violation
            K_i = _kernel_row(K[0], K[1], K[2], i, K[3], K[4], K[5], K[6], K[7])
            coordinate_step(alpha, v, y, C, i, K_i)
        return max_iter, violation
    up, low = np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_)
    for t in range(n):
        _set_bounds(alpha, y, C, t, up, low)
    active = np.arange(n)
    countdown = min(n, 1000)
    i, v_max = _pick_i(v, up, active)
    for k in range(max_iter + 1):
        countdown -= 1
        if countdown == 0:
            countdown = min(n, 1000)
            active = _shrink(v, up, low, active)
            i, v_max = _pick_i(v, up, active)
        # (I_up is never empty on all samples; shrinking may empty it: then i = -1 and the
        # shrunk problem is solved)
        K_i = _kernel_row(K[0], K[1], K[2], max(i, 0), K[3], K[4], K[5], K[6], K[7])
        j, violation = _pick_j(i, v_max, v, diag, K_i, low, active)
        if (violation <= tol or k == max_iter) and len(active) < n:
            v[:] = _full_scores(alpha, y, K)              # unshrink
            active = np.arange(n)
            i, v_max = _pick_i(v, up, active)
            K_i = _kernel_row(K[0], K[1], K[2], i, K[3], K[4], K[5], K[6], K[7])
            j, violation = _pick_j(i, v_max, v, diag, K_i, low, active)
        if violation <= tol or k == max_iter:
            return k, violation
        K_j = _kernel_row(K[0], K[1], K[2], j, K[3], K[4], K[5], K[6], K[7])
        i, v_max = smo_step(alpha, v, y, C, i, j, K_i, K_j, up, low, active)
    return max_iter, violation


# -- the estimators ---------------------------------------------------------------------

_KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions({"linear", "poly", "rbf"})],
    "gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "coef0": [Interval(Real, 0, None, closed="left")],
    "fit_intercept": ["boolean"],
}


class _KernelClassifier(ClassifierMixin, BaseEstimator):
    """Shared parts: validation, labels, the kernel, the dual decision function."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _prepare(self, X, y, sample_weight=None):
        """Validate; return ``(X, signs, s)``: the samples of positive weight, their labels
        as ±1 and their weights (None: unweighted; see :func:`~lincls._base.weigh_samples`)."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_targets(y)
        X, y, s, _ = weigh_samples(X, y, sample_weight, getattr(self, "class_weight", None))
        self.classes_, signs = labels_to_signs(y)
        if self.gamma == "scale":
            if s is None:
                var = X.var()
            else:  # the variance of the entries with row i counted s_i times
                mean = (s @ X).sum() / (s.sum() * X.shape[1])
                var = (s @ ((X - mean) ** 2)).sum() / (s.sum() * X.shape[1])
            self._gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        else:
            self._gamma = float(self.gamma)
        return X, signs, s

    def _kernel(self, X, Z):
        return kernel_matrix(X, Z, kernel=self.kernel, gamma=self._gamma,
                             degree=self.degree, coef0=self.coef0)

    def _lazy_kernel(self, X, shift=0.0):
        """The Gram matrix as (rows, slot, X, kind, γ, d, c₀, shift), rows made on demand."""
        return lazy_kernel(X, _KINDS[self.kernel], self._gamma, self.degree, self.coef0, shift)

    def _store_support(self, X, y, K, alpha, b):
        # inputs near float64's largest value overflow the kernel (or make gamma="scale" 0,
        # and exp(-0 · inf) NaN): a ValueError, as in scikit-learn, not a model of NaNs
        check_finite(self, X, "kernel matrix or dual coefficients", rows_made(K), alpha, b)
        self.alpha_ = alpha
        self.support_ = np.flatnonzero(alpha > 0)
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = (alpha * y)[self.support_].reshape(1, -1)
        self.intercept_ = np.array([b])

    def decision_function(self, X):
        """The activation f(x) = Σ_j α_j y_j K(x_j, x) + b of each sample, eq. (kernels-decision).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if len(self.support_) == 0:
            return np.full(len(X), self.intercept_[0])
        f = self._kernel(X, self.support_vectors_) @ self.dual_coef_[0] + self.intercept_[0]
        check_finite(self, X, "kernel values", f)
        return f

    def predict(self, X):
        """``classes_[1]`` where f(x) > 0, else ``classes_[0]``."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]


class KernelPerceptron(IterativeMixin, _KernelClassifier):
    """The perceptron in dual form with a kernel: w = Σ_j α_j y_j φ(x_j).

    Each epoch visits the samples and, at a mistake y_i f(x_i) ≤ 0, adds one to α_i.
    With ``fit_intercept=True`` the kernel is K(x, z) + 1, the kernel of the clamped
    input (1, φ(x)), so the bias b = Σ_j α_j y_j is learned as in the primal perceptron.
    Training stops after an epoch without mistakes or after ``max_iter`` epochs.

    Defined in chapter "Kernels" (``book/kernels.md``).

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf"}, default="poly"
    degree : int, default=2
        Degree d of the polynomial kernel (γ x · z + c₀)^d.
    gamma : float or "scale", default=1.0
        γ of the polynomial and RBF kernels; ``"scale"`` is 1 / (n_features · Var X),
        as in scikit-learn's ``SVC``.
    coef0 : float, default=1.0
        c₀ of the polynomial kernel.
    fit_intercept : bool, default=True
    max_iter : int, default=1000
        Maximum number of epochs.
    shuffle : bool, default=False
        Visit the samples in a new random order each epoch.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples,)
        Mistake counts α_i.
    support_ : ndarray
        Indices of the samples with α_i > 0.
    support_vectors_ : ndarray of shape (n_support, n_features)
    dual_coef_ : ndarray of shape (1, n_support)
        α_i y_i of the support vectors.
    intercept_ : ndarray of shape (1,)
        The bias Σ α_j y_j (zero when ``fit_intercept=False``).
    t_ : int
        Number of updates (mistakes).
    n_iter_ : int
        Epochs run.
    converged_ : bool
        Whether an epoch passed without a mistake.
    history_ : dict
        ``errors``: mistakes per epoch.
    classes_ : ndarray of shape (2,)
    n_features_in_ : int

    Notes
    -----
    Novikoff's theorem holds in feature space: on data separable there with margin ρ,
    the number of mistakes is at most R² / ρ², R² = max_i K(x_i, x_i) (theorem
    "Mistake bound in feature space" of the chapter).

    References
    ----------
    .. [1] Aizerman, M. A., Braverman, E. M. and Rozonoer, L. I. (1964). Theoretical
       foundations of the potential function method in pattern recognition learning.
       Automation and Remote Control 25, 821–837.
    .. [2] Freund, Y. and Schapire, R. E. (1999). Large margin classification using the
       perceptron algorithm. Machine Learning 37(3), 277–296.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("xor")
    >>> clf = KernelPerceptron(kernel="poly", degree=2).fit(X, y)
    >>> clf.predict(X).tolist() == y.tolist(), clf.converged_
    (True, True)
    """

    _parameter_constraints = {
        **_KERNEL_CONSTRAINTS,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, *, kernel="poly", degree=2, gamma=1.0, coef0=1.0, fit_intercept=True,
                 max_iter=1000, shuffle=False, random_state=None):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state

    def fit(self, X, y, *, callback=None, **params):
        """Run the dual perceptron on samples ``X`` with labels ``y``; returns self.

        ``callback(epoch, alpha)``, if given, is called after every epoch with the mistake
        counts α (updated in place: copy them to record them). ``sample_weight`` is not
        taken (a TypeError names the estimators that take it).
        """
        refuse_fit_params(self, params)
        X, y, _ = self._prepare(X, y)
        state = {"alpha": np.zeros(len(y)), "f": np.zeros(len(y)),
                 "K": self._lazy_kernel(X, 1.0 if self.fit_intercept else 0.0)}
        self._callback = callback
        try:
            self._run_epochs(state, X, y)
        finally:
            del self._callback
        alpha = state["alpha"]
        self.t_ = int(self.history_["errors"].sum())
        self._store_support(X, y, state["K"], alpha,
                            float(alpha @ y) if self.fit_intercept else 0.0)
        return self

    def _callback_weights(self, state):
        return state["alpha"]

    def _epoch(self, state, X, y, order):
        order = np.arange(len(y))[order]
        errors = kernel_perceptron_epoch(state["alpha"], state["f"], y, order, state["K"])
        return {"errors": errors}, errors == 0

    def _not_converged_message(self, state, X, y):
        return (f"KernelPerceptron made mistakes in every one of max_iter={self.max_iter} "
                "epochs: the data may not be separable in this kernel's feature space.")


class KernelSVM(_KernelClassifier):
    """The soft-margin support vector machine with a kernel, solved by SMO.

    Maximizes the dual Σ α_i - ½ Σ α_i α_j y_i y_j K(x_i, x_j) subject to 0 ≤ α_i ≤ C
    and (with a bias) Σ α_i y_i = 0: the problem of ``sklearn.svm.SVC`` with the same
    kernel. ``C = inf`` is the hard margin in feature space.

    Defined in chapter "Kernels" (``book/kernels.md``).

    Parameters
    ----------
    C : float or np.inf, default=1.0
    kernel : {"linear", "poly", "rbf"}, default="rbf"
    degree : int, default=3
    gamma : float or "scale", default="scale"
    coef0 : float, default=0.0
    fit_intercept : bool, default=True
        Learn the (unpenalized) bias b; False drops the constraint Σ α_i y_i = 0.
    max_iter : int, default=1_000_000
        Bound on the SMO steps (pair updates).
    tol : float, default=1e-3
        Stop when the largest KKT violation is at most ``tol`` (libsvm's criterion).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``sample_weight`` (see :meth:`fit`): a
        dict maps a label to its weight, ``"balanced"`` weighs each class by
        n_samples / (2 · its count), as in ``SVC``.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples,)
        The multipliers α_i (of the samples of positive weight in a weighted fit).
    support_, support_vectors_, dual_coef_, intercept_ :
        As in :class:`KernelPerceptron` and ``SVC``.
    objective_ : float
        The dual objective at the solution.
    n_iter_ : int
        SMO steps.
    converged_ : bool
    classes_ : ndarray of shape (2,)
    n_features_in_ : int

    Notes
    -----
    With sample weights s_i the box of the dual is 0 ≤ α_i ≤ C s_i (the primal prices
    the slack of sample i at C s_i), as in ``SVC``: an integer weight n is n copies of
    the sample, a weight 0 drops it. ``gamma="scale"`` then uses the variance of the
    data with each sample counted s_i times, so that it too is that of the copies.

    References
    ----------
    .. [1] Boser, B. E., Guyon, I. M. and Vapnik, V. N. (1992). A training algorithm for
       optimal margin classifiers. COLT '92, 144–152.
    .. [2] Fan, R.-E., Chen, P.-H. and Lin, C.-J. (2005). Working set selection using
       second order information for training support vector machines. JMLR 6, 1889–1918.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("xor")
    >>> svm = KernelSVM(kernel="rbf", gamma=1.0, C=10.0).fit(X, y)
    >>> svm.predict(X).tolist() == y.tolist(), len(svm.support_)
    (True, 4)
    """

    _parameter_constraints = {
        **_KERNEL_CONSTRAINTS,
        "C": [Interval(Real, 0, None, closed="right")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "class_weight": CLASS_WEIGHT,
    }

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0,
                 fit_intercept=True, max_iter=1_000_000, tol=1e-3, class_weight=None):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.class_weight = class_weight

    def fit(self, X, y, sample_weight=None):
        """Solve the dual for samples ``X`` and labels ``y``; returns self.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two distinct labels of any type.
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Non-negative weights s_i: the box of α_i is 0 ≤ α_i ≤ C s_i; a weight 0
            drops the sample. Multiplied by the weights of ``class_weight``.

        Returns
        -------
        self : object
        """
        X, y, weights = self._prepare(X, y, sample_weight)
        K = self._lazy_kernel(X)
        diag = _kernel_diagonal(X, K[3], K[4], K[5], K[6])
        C = float(self.C)
        if weights is not None and np.isfinite(C):
            C = C * weights                            # the bounds C s_i
        # The dual is symmetric under y → -y, but the choice of i in WSS2 is not: solve with
        # classes_[0] as +1, as libsvm does, so that both take the same path.
        s = -y
        alpha, v = np.zeros(len(y)), s.copy()
        self.n_iter_, violation = _smo(alpha, v, diag, s, C, bool(self.fit_intercept),
                                       float(self.tol), int(self.max_iter), K)
        self.converged_ = bool(violation <= self.tol)
        b = 0.0
        if self.fit_intercept:
            # KKT: a free α_k (0 < α_k < C) sits on the margin, so b = v_k; without one,
            # the middle of the interval the bounded multipliers allow (as libsvm does).
            free = (alpha > 0) & (alpha < C)
            if np.any(free):
                b = float(np.mean(v[free]))
            else:
                up = ((s > 0) & (alpha < C)) | ((s < 0) & (alpha > 0))
                low = ((s > 0) & (alpha > 0)) | ((s < 0) & (alpha < C))
                hi = v[up].max() if np.any(up) else 0.0
                lo = v[low].min() if np.any(low) else 0.0
                b = 0.5 * float(hi + lo)
            b = -b                                       # back to classes_[1] as +1
        self._store_support(X, y, K, alpha, b)
        # Σα - ½ αᵀQα with Qα = 1 - s∘v: the dual objective from the scores SMO keeps
        self.objective_ = float(0.5 * (alpha.sum() + alpha @ (s * v)))
        if not self.converged_:
            warn_at_caller(f"KernelSVM stopped after max_iter={self.max_iter} SMO steps with KKT "
                  f"violation {violation:.3g} > tol={self.tol}; increase max_iter or tol.")
        return self
