"""Linear discriminant functions with given weights, and a test for linear separability.

Defined in chapter "Linear discriminant functions" (``book/linear_discriminants.md``).
"""

import numpy as np
from scipy.optimize import linprog
from sklearn.utils.validation import check_array, check_X_y

from ._base import LinearClassifier, augment

__all__ = ["LinearDiscriminant", "is_linearly_separable", "separating_weights"]


class LinearDiscriminant(LinearClassifier):
    """A linear discriminant g(x) = w · x + b with weights you choose, not learn.

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


def separating_weights(X, y, *, fit_intercept=True):
    """Return weights w̃ with y_i (w̃ · x̃_i) >= 1 for every sample, or None if none exist.

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
    """
    X, y = check_X_y(X, y, dtype=np.float64)
    if not set(np.unique(y)) <= {-1.0, 1.0}:
        raise ValueError(f"y must hold labels -1 and +1; got {np.unique(y)[:5].tolist()}.")
    Xa = augment(X) if fit_intercept else X
    # y_i (w · x_i) >= 1  <=>  -(y_i x_i) · w <= -1
    result = linprog(
        c=np.zeros(Xa.shape[1]),
        A_ub=-(y[:, None] * Xa),
        b_ub=-np.ones(len(y)),
        bounds=[(None, None)] * Xa.shape[1],
        method="highs",
    )
    return result.x if result.status == 0 else None


def is_linearly_separable(X, y, *, fit_intercept=True):
    """Whether a hyperplane separates the two classes (see :func:`separating_weights`).

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> is_linearly_separable(*logic_gate("and")), is_linearly_separable(*logic_gate("xor"))
    (True, False)
    """
    return separating_weights(X, y, fit_intercept=fit_intercept) is not None
