"""Minimum squared error: the pseudo-inverse solution and the Ho–Kashyap procedure.

Defined in chapter "Minimum squared error" (``book/least_squares.md``).

Following Duda, Hart and Stork, each sample is augmented and "normalized" (multiplied
by its label), giving the rows y_i = ℓ_i x̃_i of a matrix Y. A separating vector a
satisfies Y a > 0. Minimum squared error replaces these inequalities by the equations
Y a = b for a positive margin vector b and solves them in the least-squares sense;
Ho–Kashyap also adapts b, and so finds a separating vector, or a certificate that none
exists that is then checked in exact rational arithmetic, or stays undecided.
"""

import os
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from math import lcm

import numpy as np
import scipy.linalg
from sklearn.utils._param_validation import Interval, Real

from ._base import CLASS_WEIGHT, MAX_ITER, NON_NEGATIVE, IterativeClassifier, LinearClassifier
from ._blas import SMALL_WORK, blas_threads_for, one_blas_thread

__all__ = ["LeastSquares", "HoKashyap", "normalized_samples", "mse_solution", "ho_kashyap_step",
           "separates", "exact_certificate"]


def normalized_samples(X, y):
    """The matrix Y whose rows are the augmented samples times their labels, y_i x̃_i.

    Defined in chapter "Minimum squared error".

    Examples
    --------
    >>> normalized_samples(np.array([[1.0, 2.0], [3.0, 1.0]]), np.array([1.0, -1.0]))
    array([[ 1.,  2.],
           [-3., -1.]])
    """
    return y[:, None] * X


def mse_solution(Y, b):
    """The minimum-norm minimizer of ‖Y a − b‖², a = Y⁺ b, eq. (mse-solution).

    Defined in chapter "Minimum squared error".

    Solved by :func:`scipy.linalg.lstsq` with LAPACK's ``gelsd`` (a singular value
    decomposition; for a tall Y, of the triangular factor of its QR factorization): no
    normal equations, no explicit inverse, and a rank-deficient Y gives the minimum-norm
    solution. Singular values below ``max(Y.shape) * eps * σ_max`` count as zero (the
    default cut-off of :func:`numpy.linalg.matrix_rank`, and of :func:`numpy.linalg.lstsq`
    since NumPy 2.0): rounding leaves
    dependent columns with singular values of that size, not exactly zero.

    Examples
    --------
    >>> mse_solution(np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([1.0, 1.0]))
    array([1. , 0.5])
    """
    return _lstsq(Y, b)[0]


def _lstsq(Y, b, eps=None):
    """``(a, rank)`` of the least-squares problem (small ones on one BLAS thread).

    Singular values below ``max(Y.shape) * eps`` times the largest count as zero; ``eps``
    is the machine epsilon of the data, by default that of ``Y``'s dtype.
    """
    if eps is None:
        eps = np.finfo(Y.dtype if np.issubdtype(Y.dtype, np.floating) else float).eps
    cond = max(Y.shape) * eps
    (m, n), k = Y.shape, 1 if b.ndim == 1 else b.shape[1]
    flops = m * n * min(m, n)
    with blas_threads_for(flops):
        if flops >= SMALL_WORK and m >= 4 * _BLOCKS * (n + k) and Y.dtype == b.dtype == float:
            # Qᵀ[Y | b] = [[R, Q₁ᵀb], [0, ·]]: ‖Y a − b‖ and ‖R a − Q₁ᵀb‖ differ by a
            # constant, so both have the same minimum-norm minimizer, and R has Y's
            # singular values (the same rank)
            R = _triangular_factor(Y, b)
            Y, b = R[:n, :n], (R[:n, n:] if b.ndim == 2 else R[:n, n])
        a, _, rank, _ = scipy.linalg.lstsq(Y, b, cond=cond, check_finite=False,
                                           lapack_driver="gelsd")
    return a, int(rank)


_BLOCKS = 4  # fixed, so that the result does not depend on the number of cores


def _triangular_factor(Y, b):
    """The triangular factor R of a QR factorization of the tall [Y | b], as a tall-skinny QR.

    Its ``_BLOCKS`` blocks of rows are factored side by side, one BLAS thread each, then
    the stack of their factors: [Y | b] = diag(Q_1, …) [R_1; …] = diag(Q_1, …) Q' R. For a
    tall Y, gelsd starts with this QR itself, in one call whose threads share the cores
    less well (``benchmarks/bench_least_squares.py``).
    """
    b = b.reshape(len(b), -1)

    def factor(Z):                  # R of Z = QR by LAPACK's blocked Householder QR
        geqrf, = scipy.linalg.get_lapack_funcs(("geqrf",), (Z,))
        lwork = int(geqrf(Z, lwork=-1)[2][0])
        qr, _, _, info = geqrf(Z, lwork=lwork, overwrite_a=True)
        if info != 0:
            raise np.linalg.LinAlgError(f"LAPACK geqrf failed (info {info})")
        return np.triu(qr[:Z.shape[1]])

    def block(start, stop):         # [Y | b] of these rows, in LAPACK's column order
        Z = np.empty((stop - start, Y.shape[1] + b.shape[1]), order="F")
        Z[:, :Y.shape[1]], Z[:, Y.shape[1]:] = Y[start:stop], b[start:stop]
        return factor(Z)

    edges = np.linspace(0, len(Y), _BLOCKS + 1).astype(int)
    with one_blas_thread(), ThreadPoolExecutor(min(_BLOCKS, os.cpu_count() or 1)) as pool:
        factors = list(pool.map(block, edges[:-1], edges[1:]))
        return factor(np.asfortranarray(np.vstack(factors)))


def _input_eps(X):
    """The machine epsilon of the inputs as given: float32 data carry float32's precision."""
    dtype = getattr(X, "dtype", None)
    if dtype is not None and np.issubdtype(dtype, np.floating):
        return max(np.finfo(dtype).eps, np.finfo(float).eps)
    return np.finfo(float).eps


def ho_kashyap_step(a, b, Y, Y_pinv, eta):
    """One Ho–Kashyap step, eq. (ho-kashyap): raise b where Y a exceeds it, then re-solve.

    Defined in chapter "Minimum squared error".

    e = Y a − b,   b ← b + η (e + |e|),   a ← Y⁺ b.   Returns ``(a, b, e)``.

    Examples
    --------
    >>> Y = np.eye(2)
    >>> ho_kashyap_step(np.array([2.0, 1.0]), np.ones(2), Y, Y, 0.5)[1]
    array([2., 1.])
    """
    e = Y @ a - b
    b = b + eta * (e + np.abs(e))
    return Y_pinv @ b, b, e


def separates(Y, a):
    """Whether Y a > 0 holds in exact arithmetic, decided from the floating-point product.

    Defined in chapter "Minimum squared error".

    Each computed (Y a)_i differs from the exact one by at most γ Σ_j |Y_ij| |a_j| + d η,
    with γ ≈ d ε/2 for rows of length d and machine epsilon ε, in any order of summation
    (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1), and η = 2⁻¹⁰⁷⁵ for
    products that underflow: a product below the smallest normal number λ = 2⁻¹⁰²² is
    rounded to a multiple of 2⁻¹⁰⁷⁴, an error of at most half that, while sums of such
    numbers are exact (IEEE 754's gradual underflow). We ask for more than four times the
    first term plus d λ, which exceeds d η by the factor 2⁵³ and so also covers the
    underflow in computing the bound itself: (Y a)_i > 2 d ε Σ_j |Y_ij| |a_j| + d λ as
    computed. Then every exact (Y a)_i is positive, and so is every floating-point
    activation ``predict`` computes. The test is sufficient, not necessary: a product
    within that bound of zero is reported as not separating.

    Examples
    --------
    >>> Y = np.array([[1.0, -1.0], [0.0, 1.0]])
    >>> bool(separates(Y, np.array([2.0, 1.0])))
    True
    >>> bool(separates(Y, np.array([1.0, 1.0 - 2**-52])))   # (Y a)_1 = 2⁻⁵²: too close to tell
    False

    Where the products underflow, rounding alone can turn a negative Y a positive: here
    the exact Y a is about −0.497 · 2⁻¹⁰⁷⁴, the computed one 2⁻¹⁰⁷⁴ > 0.

    >>> s = 2.0**-537
    >>> bool(separates(np.array([[s, s, s]]), np.array([1.501, -1.499, -0.499]) * s))
    False
    """
    d, eps, smallest_normal = Y.shape[1], np.finfo(float).eps, np.finfo(float).smallest_normal
    bound = 2 * d * eps * (np.abs(Y) @ np.abs(a)) + d * smallest_normal
    return bool(np.all(Y @ a > bound))


def _integer_columns(M):
    """``M`` (floats) as a list of rows of Python ints, each column times a power of two.

    Every float is an exact dyadic rational n / 2^k; scaling a column by the largest 2^k
    in it makes it integer and changes neither its span nor the signs of its entries.
    """
    columns = []
    for column in np.atleast_2d(M.T):
        ratios = [value.as_integer_ratio() for value in column.tolist()]
        scale = max(denominator for _, denominator in ratios)  # powers of two: the lcm
        columns.append([numerator * (scale // denominator) for numerator, denominator in ratios])
    return [list(row) for row in zip(*columns, strict=True)]


def _solve_exact(A, c):
    """A rational solution of the consistent system A w = c (integers; free variables zero).

    Fraction-free (Bareiss) elimination: every division is exact, so the integers stay
    of the size of minors of A and no greatest common divisor is ever computed.
    """
    n = len(c)
    rows = [list(A[i]) + [c[i]] for i in range(n)]
    pivots, top, previous = [], 0, 1
    for col in range(n):
        pivot = next((r for r in range(top, n) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        rows[top], rows[pivot] = rows[pivot], rows[top]
        p, upper = rows[top][col], rows[top]
        for r in range(top + 1, n):
            lead, row = rows[r][col], rows[r]
            rows[r] = [0] * (col + 1) + [(p * row[j] - lead * upper[j]) // previous
                                         for j in range(col + 1, n + 1)]
        pivots.append(col)
        previous, top = p, top + 1
    w = [Fraction(0)] * n
    for r in reversed(range(top)):
        col = pivots[r]
        rest = sum((rows[r][j] * w[j] for j in pivots[r + 1:]), Fraction(0))
        w[col] = (rows[r][n] - rest) / rows[r][col]
    return w


def exact_certificate(Y, e, tol=0.0, rounds=3):
    """An exact certificate of non-separability v ≥ 0, v ≠ 0, Yᵀ v = 0, built from −e.

    Defined in chapter "Minimum squared error" (whose letters these are).

    The candidate is −e on the support S = {i : e_i < −tol} (zero elsewhere). In exact
    rational arithmetic on the entries of ``Y`` as stored (every float is a rational), −e_S
    is projected onto the null space of Y_Sᵀ: v_S = −e_S − Y_S w with Y_Sᵀ Y_S w = −Y_Sᵀ e_S,
    so that Yᵀ v = 0 holds exactly. If v ≥ 0 and v ≠ 0, Gordan's alternative (the theorem
    of the chapter) proves that no a has Y a > 0. Entries that came out negative are
    dropped from S and the projection repeated, at most ``rounds`` times.

    Returns
    -------
    v : ndarray of shape (n_samples,) or None
        The certificate rounded to floats and scaled to sum 1 (the exact one has
        Yᵀ v = 0; the rounded one only up to rounding), or None if the check failed.

    Examples
    --------
    >>> Y = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, 0.0]])     # rows 1 and 2 cancel
    >>> exact_certificate(Y, np.array([-0.6, -0.4, 0.0])).tolist()
    [0.5, 0.5, 0.0]
    >>> exact_certificate(np.eye(2), np.array([-1.0, -1.0])) is None   # Y a > 0 for a = (1, 1)
    True
    """
    support = np.flatnonzero(e < -tol)
    for _ in range(rounds):
        if support.size == 0:
            return None
        Z = _integer_columns(Y[support])                  # column scalings keep the span
        v = _integer_columns(-e[support][:, None])         # one positive scaling of v
        v = [row[0] for row in v]
        Z, v = np.array(Z, dtype=object), np.array(v, dtype=object)   # Python ints
        w = _solve_exact((Z.T @ Z).tolist(), (Z.T @ v).tolist())
        q = lcm(*(wj.denominator for wj in w))
        y = (q * v - Z @ np.array([wj.numerator * (q // wj.denominator) for wj in w],
                                  dtype=object)).tolist()                # q (v − Z w)
        if all(yi >= 0 for yi in y):
            total = sum(y)
            if total == 0:
                return None
            certificate = np.zeros(len(e))
            certificate[support] = [float(Fraction(yi, total)) for yi in y]
            return certificate
        support = support[[yi > 0 for yi in y]]
    return None


class LeastSquares(LinearClassifier):
    """Minimum-squared-error classifier: the pseudo-inverse solution a = Y⁺ b.

    Defined in chapter "Minimum squared error".

    Finds the weight vector a (bias first) minimizing ‖Y a − b‖², where the rows of Y
    are the augmented samples multiplied by their labels ±1 and b is the margin vector.
    With all margins 1 this is linear regression on the labels ±1.

    Parameters
    ----------
    margins : array-like of shape (n_samples,) or None, default=None
        The margin vector b > 0, one entry per training sample; ``None`` means all ones.
    fit_intercept : bool, default=True
        Learn a bias through the clamped input x̃ = (1, x).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``sample_weight`` (see :meth:`fit`), as
        in ``sklearn.linear_model.RidgeClassifier``: a dict maps a label to its weight,
        ``"balanced"`` weighs each class by n_samples / (2 · its count).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    margins_ : ndarray of shape (n_samples,)
        The margin vector b used (of the samples of positive weight in a weighted fit).
    residual_ : ndarray of shape (n_samples,)
        The error vector e = Y a − b (of the samples of positive weight), unweighted.
    rank_ : int
        The numerical rank of Y: the number of its singular values above the cut-off
        ``max(Y.shape) * eps * σ_max`` (``eps`` of the dtype of ``X``).

    Notes
    -----
    The minimizer satisfies the normal equations Yᵀ Y a = Yᵀ b. We do not form YᵀY
    (that squares the condition number) but solve the least-squares problem directly with
    :func:`scipy.linalg.lstsq`; when Y has dependent columns it returns the minimum-norm
    solution, which is Y⁺ b for the Moore–Penrose pseudo-inverse Y⁺.

    In floating point, dependent columns (a feature that is a combination of others)
    leave singular values of the size of rounding errors, not zeros; inverted, they would
    give huge weights that fit only rounding noise. So singular values below
    ``max(Y.shape) * eps * σ_max`` count as zero, as in :func:`numpy.linalg.matrix_rank`
    (and :func:`numpy.linalg.lstsq` since NumPy 2.0); ``eps``
    is that of ``X`` as given, since float32 inputs are dependent only to float32's precision.

    With sample weights s_i the fit minimizes the weighted squared error
    Σ_i s_i ((Y a)_i − b_i)², the least-squares problem of the rows √s_i y_i and the
    targets √s_i b_i. An integer weight n is exactly n copies of the sample (the two
    problems have the same normal equations, and, where the minimizer is not unique, the
    same minimum-norm one); a weight 0 drops the sample.

    References
    ----------
    R. O. Duda, P. E. Hart and D. G. Stork, *Pattern Classification*, 2nd ed., Wiley
    (2001), §5.8.

    Examples
    --------
    The worked example of Duda, Hart and Stork (§5.8.1):

    >>> import numpy as np
    >>> from lincls.least_squares import LeastSquares
    >>> X = np.array([[1.0, 2.0], [2.0, 0.0], [3.0, 1.0], [2.0, 3.0]])
    >>> y = np.array([1, 1, 2, 2])                        # ω1 = class 1, ω2 = class 2
    >>> clf = LeastSquares().fit(X, y)
    >>> a = clf.weights_ * -1                             # class 1 is the negative class
    >>> np.round(a * 3, 10).tolist()                      # a = (11/3, -4/3, -2/3)
    [11.0, -4.0, -2.0]
    """

    _parameter_constraints = {**LinearClassifier._parameter_constraints,
                              "margins": ["array-like", None], "class_weight": CLASS_WEIGHT}

    def __init__(self, *, margins=None, fit_intercept=True, class_weight=None):
        self.margins = margins
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight

    def _margins(self, n_samples):
        if self.margins is None:
            return np.ones(n_samples)
        b = np.asarray(self.margins, dtype=float)
        if b.shape != (n_samples,):
            raise ValueError(f"margins must have shape ({n_samples},), one per sample; "
                             f"got shape {b.shape}.")
        if not np.all(np.isfinite(b)) or not np.all(b > 0):
            raise ValueError("margins must be finite and positive (b > 0).")
        return b

    def fit(self, X, y, sample_weight=None):
        """Solve for the weights a = Y⁺ b from samples ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs; float32 data set the cut-off of small singular values at
            float32's precision.
        y : array-like of shape (n_samples,)
            Two distinct labels of any type.
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Non-negative weights s_i of the squared errors, Σ s_i ((Y a)_i − b_i)²: a
            weight n counts the sample n times, a weight 0 drops it. Multiplied by the
            weights of ``class_weight``.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        self._eps = _input_eps(X)  # before the base class up-casts X to float64
        try:
            return self._fit(X, y, sample_weight)
        finally:
            del self._eps

    def _fit_augmented(self, X, y):
        b = self._margins(len(y) if self._kept is None else len(self._kept))
        if self._kept is not None:
            b = b[self._kept]
        s = self._sample_weight
        # a = mse_solution(Y, b) without forming Y = diag(y) X: the labels ±1 only flip the
        # signs of rows, so ‖Y a − b‖ = ‖X a − y b‖ and both have the same minimizers.
        if s is None:
            a, self.rank_ = _lstsq(X, y * b, self._eps)
        else:  # Σ s_i (x̃_i · a − y_i b_i)²: the rows and targets times √s_i
            r = np.sqrt(s)
            a, self.rank_ = _lstsq(X * r[:, None], r * (y * b), self._eps)
        self.margins_ = b
        self.residual_ = y * (X @ a) - b  # Y a − b, with Y = diag(y) X
        return a


class HoKashyap(IterativeClassifier):
    """The Ho–Kashyap procedure: separable, proved not separable, or undecided.

    Defined in chapter "Minimum squared error".

    Minimizes ‖Y a − b‖² over both the weights a and the margins b > 0: each step raises
    the margins where Y a already exceeds them and re-solves a = Y⁺ b. The verdict
    ``separable_`` takes three values, each with what was checked:

    * ``True``: the returned weights separate the training data, Y a > 0 in exact
      arithmetic (checked by :func:`separates` with a bound on the rounding error).
    * ``False``: the data are not linearly separable, proved by a certificate v ≥ 0,
      v ≠ 0 with Yᵀ v = 0 that holds exactly in rational arithmetic on the data as
      stored (:func:`exact_certificate`); it is kept in ``certificate_``.
    * ``None``: neither within ``max_iter`` iterations; a ``ConvergenceWarning`` is
      emitted. This includes data with so thin a margin that e came within ``tol`` of a
      certificate although they are separable: the exact check then fails.

    Parameters
    ----------
    eta : float in (0, 1), default=0.5
        The step size η of the margin update; the procedure converges for 0 < η < 1.
    max_iter : int, default=1000
        Maximum number of iterations (least-squares solutions a = Y⁺ b).
    tol : float, default=1e-6
        When to try a proof of non-separability, and from what: once the weights do not
        separate (some (Y a)_i ≤ 0, or within rounding of 0) and no component of e
        exceeds ``tol``, the candidate −e, with the components e_i ≥ −``tol`` set to
        zero, is checked in exact arithmetic. ``tol`` does not decide the verdict; after a
        failed check at iteration k the next one waits until iteration 2k.
    fit_intercept : bool, default=True
        Learn a bias through the clamped input x̃ = (1, x).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    separable_ : bool or None
        True if the weights separate the training data (checked), False if
        non-separability was proved by an exactly checked certificate, None if undecided
        within ``max_iter`` iterations.
    certificate_ : ndarray of shape (n_samples,) or None
        With ``separable_ = False``, the certificate v ≥ 0 (summing to 1) rounded to
        floats; Yᵀ v = 0 holds exactly for the rational one. None otherwise.
    converged_ : bool
        Whether the procedure reached a verdict (``separable_`` is not None).
    margins_ : ndarray of shape (n_samples,)
        The final margin vector b.
    n_iter_ : int
        Number of iterations: the plain MSE solution a = Y⁺ 1 is iteration 1, and each
        margin update adds one.
    history_ : dict of ndarray
        Per iteration: ``"error_norm"`` (‖e‖), ``"max_error"`` (the largest e_i) and
        ``"errors"`` (samples with Y a ≤ 0).

    Notes
    -----
    With e = Y a − b, each iteration performs eq. (ho-kashyap),

        b ← b + η (e + |e|),   a ← Y⁺ b.

    By Gordan's alternative exactly one of two systems has a solution: Y a > 0 (the data
    are separable) or v ≥ 0, v ≠ 0, Yᵀ v = 0. Since a = Y⁺ b is a least-squares solution,
    Yᵀ e = 0, so e ≤ 0, e ≠ 0 would make v = −e a certificate (the chapter's theorem). In
    exact arithmetic e converges to one when the data are not separable, but only in the
    limit; in floating point Yᵀ e = 0 holds only up to rounding. So a small e is never
    taken as the proof: the candidate is projected in rational arithmetic onto the null
    space of Yᵀ restricted to its support, and only a result that is ≥ 0 and ≠ 0 counts.
    A proof of ``False`` is therefore a proof about the data as stored, whatever the
    rounding in the iteration.

    References
    ----------
    Y.-C. Ho and R. L. Kashyap, "An algorithm for linear inequalities and its
    applications", IEEE Trans. Electronic Computers EC-14, 683–688 (1965).
    R. O. Duda, P. E. Hart and D. G. Stork, *Pattern Classification*, 2nd ed., Wiley
    (2001), §5.9.

    Examples
    --------
    >>> import numpy as np
    >>> from lincls.least_squares import HoKashyap
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> HoKashyap().fit(X, [-1, -1, -1, 1]).separable_      # AND
    True
    >>> xor = HoKashyap().fit(X, [-1, 1, 1, -1])
    >>> xor.separable_, xor.certificate_.tolist()          # XOR: v = (1, 1, 1, 1) / 4
    (False, [0.25, 0.25, 0.25, 0.25])
    """

    _parameter_constraints = {
        **IterativeClassifier._parameter_constraints,
        "eta": [Interval(Real, 0, 1, closed="neither")],
        "max_iter": [MAX_ITER],
        "tol": [NON_NEGATIVE],
    }

    def __init__(self, *, eta=0.5, max_iter=1000, tol=1e-6, fit_intercept=True):
        self.eta = eta
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept

    def _fit_augmented(self, X, y):
        Y = normalized_samples(X, y)
        state = {"a": None, "b": np.ones(X.shape[0]), "iteration": 0, "next_check": 1,
                 "failed_checks": [], "Y_pinv": scipy.linalg.pinv(Y, check_finite=False)}
        self.separable_ = self.certificate_ = None
        self._run_epochs(state, Y, y)
        self.margins_ = state["b"]
        return state["a"]

    def _callback_weights(self, state):
        return state["a"]

    def _epoch(self, state, Y, y, order):
        state["iteration"] += 1
        if state["a"] is None:  # iteration 1: the plain MSE solution a = Y⁺ 1
            state["a"] = state["Y_pinv"] @ state["b"]
        else:
            state["a"], state["b"], _ = ho_kashyap_step(state["a"], state["b"], Y,
                                                        state["Y_pinv"], self.eta)
        margins = Y @ state["a"]
        e = margins - state["b"]
        errors = int(np.count_nonzero(margins <= 0))
        if errors == 0 and separates(Y, state["a"]):
            self.separable_ = True
        elif np.all(e <= self.tol) and state["iteration"] >= state["next_check"]:
            # e is within tol of a certificate: try to make it one (thm-hk-certificate)
            self.certificate_ = exact_certificate(Y, e, self.tol)
            if self.certificate_ is not None:
                self.separable_ = False
            else:
                state["failed_checks"].append(state["iteration"])
                state["next_check"] = 2 * state["iteration"]
        return ({"error_norm": float(np.linalg.norm(e)), "max_error": float(e.max()),
                 "errors": errors},
                self.separable_ is not None)

    def _not_converged_message(self, state, Y, y):
        failed = state["failed_checks"]
        why = (f"; e came within tol of a certificate at iteration {failed[0]}, but the exact "
               f"check failed {len(failed)} time(s) (the margin of the data may be very thin)"
               if failed else "")
        return (f"Ho-Kashyap did not decide separability within max_iter={self.max_iter} "
                f"iterations{why}; separable_ is None. Increase max_iter.")
