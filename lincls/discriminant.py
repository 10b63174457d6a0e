"""Linear discriminant functions with given weights, tests for linear separability and
the maximal margin.

Defined in chapter "Linear discriminant functions" (``book/linear_discriminants.md``);
:func:`max_margin` in chapter "Convergence of the perceptron" (``book/convergence.md``).
"""

import numpy as np
from scipy.optimize import linprog, nnls
from sklearn.utils.validation import check_array, check_X_y

from ._base import LinearClassifier, augment, check_signs
from ._blas import blas_threads_for

__all__ = ["LinearDiscriminant", "is_linearly_separable", "separating_weights", "max_margin"]


class LinearDiscriminant(LinearClassifier):
    """A linear discriminant g(x) = w · x + b with weights you choose, not learn.

    Defined in chapter "Linear discriminant functions".

    Useful to check a hand-made solution, such as w = (1, 1), b = -1.5 for the AND gate.

    Parameters
    ----------
    coef : array-like of shape (n_features,)
        The weights w.
    intercept : float, default=0.0
        The bias b (the weight of the clamped input).
    classes : sequence of two labels, default=(-1, 1)
        The labels predicted where g(x) <= 0 and where g(x) > 0.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("and")
    >>> gate = LinearDiscriminant(coef=[1, 1], intercept=-1.5).fit(X)
    >>> gate.predict(X).tolist() == y.tolist()
    True
    """

    def __init__(self, coef=(1.0, 1.0), intercept=0.0, *, classes=(-1, 1)):
        self.coef = coef
        self.intercept = intercept
        self.classes = classes

    def fit(self, X, y=None):
        """Install the given weights; ``X`` only fixes the number of features."""
        X = check_array(X, dtype=np.float64)
        coef = np.asarray(self.coef, dtype=float).ravel()
        if coef.shape[0] != X.shape[1]:
            raise ValueError(f"coef has {coef.shape[0]} weights but X has {X.shape[1]} features.")
        if len(self.classes) != 2 or self.classes[0] == self.classes[1]:
            raise ValueError(f"classes must be two distinct labels; got {self.classes!r}.")
        self.n_features_in_ = X.shape[1]
        self.classes_ = np.asarray(self.classes)
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([float(self.intercept)])
        return self


def separating_weights(X, y, *, fit_intercept=True, return_attempts=False):
    """Return weights w̃ with y_i (w̃ · x̃_i) >= 1 for every sample, or None if none exist.

    Defined in chapter "Linear discriminant functions".

    Finite sets are linearly separable exactly when they are *absolutely* separable, and
    then some multiple of a separating w̃ meets every constraint with margin 1. So the
    linear program "find w̃ with y_i w̃ · x̃_i >= 1" is feasible exactly when the data are
    linearly separable. With ``fit_intercept`` the bias comes first in w̃.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels in {-1, +1} (a single class is allowed: it is always separable with a bias).
    fit_intercept : bool, default=True
        Allow a bias (affine hyperplane); False asks for a hyperplane through the origin.
    return_attempts : bool, default=False
        Also return the list of ``(method, status)`` pairs of the solves made, in order.

    Returns
    -------
    w : ndarray of shape (n_features + fit_intercept,) or None
        A feasible point found by HiGHS (status 0), which meets the constraints up to the
        solver's feasibility tolerance (1e-7) and is checked to separate (every
        y_i w̃ · x̃_i > 0); None only when a HiGHS method reports the program infeasible
        (status 2): the data are not linearly separable.
    attempts : list of (str, int)
        Only with ``return_attempts``.

    Raises
    ------
    ValueError
        If ``y`` holds labels other than -1 and +1.
    RuntimeError
        When no HiGHS method decides. The default method (``"highs"``) can end undecided
        (status 4, "model_status is Unknown", on some random labellings near capacity);
        then the interior-point (``"highs-ipm"``) and dual-simplex (``"highs-ds"``)
        methods are tried in turn. Only when all three decide neither (any status other
        than 0 and 2, such as an iteration limit or numerical difficulties, or a status-0
        point that does not separate) is this raised: the data may or may not be separable.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("and")
    >>> w = separating_weights(X, y)
    >>> bool(np.all(y * (augment(X) @ w) >= 1 - 1e-9)), separating_weights(*logic_gate("xor"))
    (True, None)
    """
    X, y = check_X_y(X, y, dtype=np.float64)
    check_signs(y)
    Xa = augment(X) if fit_intercept else X
    attempts = []
    for method in ("highs", "highs-ipm", "highs-ds"):  # the next one only if undecided
        # y_i (w · x_i) >= 1  <=>  -(y_i x_i) · w <= -1
        result = linprog(
            c=np.zeros(Xa.shape[1]),
            A_ub=-(y[:, None] * Xa),
            b_ub=-np.ones(len(y)),
            bounds=[(None, None)] * Xa.shape[1],
            method=method,
        )
        attempts.append((method, int(result.status)))
        if result.status == 0 and np.all(y * (Xa @ result.x) > 0):  # feasible, and separates
            return (result.x, attempts) if return_attempts else result.x
        if result.status == 2:  # HiGHS found the program infeasible
            return (None, attempts) if return_attempts else None
    tried = ", ".join(f"{m}: status {s}" for m, s in attempts)
    raise RuntimeError(f"HiGHS did not decide whether the data are linearly separable "
                       f"({tried}): {result.message}")


def is_linearly_separable(X, y, *, fit_intercept=True):
    """Whether a hyperplane separates the two classes (see :func:`separating_weights`).

    Defined in chapter "Linear discriminant functions". Raises ``RuntimeError`` when the
    linear program's solver decides neither way.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> is_linearly_separable(*logic_gate("and")), is_linearly_separable(*logic_gate("xor"))
    (True, False)
    """
    return separating_weights(X, y, fit_intercept=fit_intercept) is not None


def max_margin(X, y, *, fit_intercept=True):
    """The maximal-margin weights and their margin γ = max_w min_i y_i (w · x̃_i) / |w|.

    Defined in chapter "Convergence of the perceptron". The margin is that of the
    (augmented, when ``fit_intercept=True``) vectors the perceptron works with, so the
    bias counts in |w|. The problem min |w|² subject to y_i (w · x̃_i) ≥ 1 is a
    least-distance program; its dual is a non-negative least-squares problem
    (Lawson & Hanson, *Solving Least Squares Problems*, ch. 23), solved exactly by
    :func:`scipy.optimize.nnls`. Then γ = 1 / |w*|.

    This is the book's one exact hard-margin solver: the optimal stability κ_opt of
    Part III (:func:`lincls.stability.exact_optimal_stability`) and the hard-margin SVM
    without bias of chapter "Support vector machines" are the same problem.
    Labels ±1 are used as given (so a single class works); any other two labels are
    mapped as by the estimators, the larger one to +1.

    Returns
    -------
    w : ndarray of shape (n_features + fit_intercept,)
        The unit-length maximal-margin weight vector (bias first).
    gamma : float
        Its margin, min_i y_i (w · x̃_i) (computed from w, so it is attained exactly).

    Raises
    ------
    ValueError
        If the data are not linearly separable (through the origin, when
        ``fit_intercept=False``).

    Examples
    --------
    >>> w, gamma = max_margin(np.array([[1.0, 1.0], [-1.0, -1.0]]), np.array([1, -1]),
    ...                       fit_intercept=False)
    >>> np.round(w, 6).tolist(), round(gamma, 6)
    ([0.707107, 0.707107], 1.414214)
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if not np.isin(y, (-1, 1)).all():
        y = np.where(y == np.unique(y)[-1], 1, -1)
    y = y.astype(float)
    Z = y[:, None] * (augment(X) if fit_intercept else X)
    # LDP: min |w| s.t. Z w >= 1  <=>  NNLS: min |E u - f|, u >= 0, E = [Z^T; 1^T], f = e_last
    E = np.vstack([Z.T, np.ones(len(Z))])
    f = np.zeros(E.shape[0])
    f[-1] = 1.0
    with blas_threads_for(E.size * min(E.shape)):
        u, _ = nnls(E, f, maxiter=50 * sum(E.shape))
    r = E @ u - f
    if r[-1] > -1e-12:  # E u = f is solvable: the constraints are infeasible
        raise ValueError("The data are not linearly separable: no maximal margin exists.")
    w = -r[:-1] / r[-1]
    margins = Z @ w
    if margins.min() <= 0:
        raise ValueError("The data are not linearly separable: no maximal margin exists.")
    w /= np.linalg.norm(w)
    return w, float((Z @ w).min())
