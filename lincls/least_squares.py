"""Minimum squared error: the pseudo-inverse solution and the Ho–Kashyap procedure.

Defined in chapter "Minimum squared error" (``book/least_squares.md``).

Following Duda, Hart and Stork, each sample is augmented and "normalized" (multiplied
by its label), giving the rows y_i = ℓ_i x̃_i of a matrix Y. A separating vector a
satisfies Y a > 0. Minimum squared error replaces these inequalities by the equations
Y a = b for a positive margin vector b and solves them in the least-squares sense;
Ho–Kashyap also adapts b, and so either finds a separating vector or proves that none
exists.
"""

import numpy as np
import scipy.linalg
from sklearn.utils._param_validation import Interval, Real

from ._base import MAX_ITER, NON_NEGATIVE, IterativeClassifier, LinearClassifier
from ._blas import blas_threads_for

__all__ = ["LeastSquares", "HoKashyap", "normalized_samples", "mse_solution", "ho_kashyap_step"]


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
    cut-off of :func:`numpy.linalg.lstsq` and :func:`numpy.linalg.matrix_rank`): rounding leaves
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
    with blas_threads_for(Y.shape[0] * Y.shape[1] * min(Y.shape)):
        a, _, rank, _ = scipy.linalg.lstsq(Y, b, cond=max(Y.shape) * eps, check_finite=False,
                                           lapack_driver="gelsd")
    return a, int(rank)


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

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    margins_ : ndarray of shape (n_samples,)
        The margin vector b used.
    residual_ : ndarray of shape (n_samples,)
        The error vector e = Y a − b.
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
    ``max(Y.shape) * eps * σ_max`` count as zero, as in :func:`numpy.linalg.lstsq`; ``eps``
    is that of ``X`` as given, since float32 inputs are dependent only to float32's precision.

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
                              "margins": ["array-like", None]}

    def __init__(self, *, margins=None, fit_intercept=True):
        self.margins = margins
        self.fit_intercept = fit_intercept

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

    def fit(self, X, y):
        """Solve for the weights a = Y⁺ b from samples ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs; float32 data set the cut-off of small singular values at
            float32's precision.
        y : array-like of shape (n_samples,)
            Two distinct labels of any type.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        self._eps = _input_eps(X)  # before the base class up-casts X to float64
        try:
            return super().fit(X, y)
        finally:
            del self._eps

    def _fit_augmented(self, X, y):
        b = self._margins(X.shape[0])
        # a = mse_solution(Y, b) without forming Y = diag(y) X: the labels ±1 only flip the
        # signs of rows, so ‖Y a − b‖ = ‖X a − y b‖ and both have the same minimizers.
        a, self.rank_ = _lstsq(X, y * b, self._eps)
        self.margins_ = b
        self.residual_ = y * (X @ a) - b  # Y a − b, with Y = diag(y) X
        return a


class HoKashyap(IterativeClassifier):
    """The Ho–Kashyap procedure: a separating vector, or a proof that none exists.

    Defined in chapter "Minimum squared error".

    Minimizes ‖Y a − b‖² over both the weights a and the margins b > 0: each step raises
    the margins where Y a already exceeds them and re-solves a = Y⁺ b.

    * If Y a > 0 (every sample on its correct side), a separates the data:
      ``separable_ = True``.
    * If the error e = Y a − b has no positive component but is not zero, the samples
      are not linearly separable (Duda, Hart and Stork, §5.9.1): ``separable_ = False``.
    * Otherwise, after ``max_iter`` iterations, ``separable_ = None`` and a
      ``ConvergenceWarning`` is emitted.

    Parameters
    ----------
    eta : float in (0, 1), default=0.5
        The step size η of the margin update; the procedure converges for 0 < η < 1.
    max_iter : int, default=1000
        Maximum number of iterations (least-squares solutions a = Y⁺ b).
    tol : float, default=1e-6
        Components of e not larger than ``tol`` count as non-positive.
    fit_intercept : bool, default=True
        Learn a bias through the clamped input x̃ = (1, x).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    separable_ : bool or None
        True if a separating vector was found, False if non-separability was proved,
        None if undecided within ``max_iter`` iterations.
    converged_ : bool
        Whether the procedure reached a decision (``separable_`` is not None).
    margins_ : ndarray of shape (n_samples,)
        The final margin vector b.
    n_iter_ : int
        Number of iterations: the plain MSE solution a = Y⁺ 1 is iteration 1, and each
        margin update adds one.
    history_ : dict of ndarray
        Per iteration: ``"error_norm"`` (‖e‖) and ``"errors"`` (samples with Y a ≤ 0).

    References
    ----------
    Y.-C. Ho and R. L. Kashyap, "An algorithm for linear inequalities and its
    applications", IEEE Trans. Electronic Computers EC-14, 683–688 (1965).

    Examples
    --------
    >>> import numpy as np
    >>> from lincls.least_squares import HoKashyap
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> HoKashyap().fit(X, [-1, -1, -1, 1]).separable_      # AND
    True
    >>> HoKashyap().fit(X, [-1, 1, 1, -1]).separable_       # XOR
    False
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
        state = {"a": None, "b": np.ones(X.shape[0]),
                 "Y_pinv": scipy.linalg.pinv(Y, check_finite=False)}
        self.separable_ = None
        self._run_epochs(state, Y, y)
        self.margins_ = state["b"]
        return state["a"]

    def _callback_weights(self, state):
        return state["a"]

    def _epoch(self, state, Y, y, order):
        if state["a"] is None:  # iteration 1: the plain MSE solution a = Y⁺ 1
            state["a"] = state["Y_pinv"] @ state["b"]
        else:
            state["a"], state["b"], _ = ho_kashyap_step(state["a"], state["b"], Y,
                                                        state["Y_pinv"], self.eta)
        margins = Y @ state["a"]
        e = margins - state["b"]
        errors = int(np.count_nonzero(margins <= 0))
        if errors == 0:
            self.separable_ = True
        elif np.all(e <= self.tol):  # e ≤ 0, e ≠ 0 (some Y a ≤ 0 < b): Theorem thm-hk-certificate
            self.separable_ = False
        return ({"error_norm": float(np.linalg.norm(e)), "errors": errors},
                self.separable_ is not None)

    def _not_converged_message(self, state, Y, y):
        return (f"Ho-Kashyap did not decide separability within max_iter={self.max_iter} "
                "iterations; separable_ is None. Increase max_iter.")
