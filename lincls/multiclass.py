"""The linear machine, Kesler's construction and the multi-class perceptron.

Defined in chapter "Multi-category classification" (``book/multiclass.md``), after
Duda, Hart & Stork, *Pattern Classification*, Sec. 5.12.

A linear machine for c classes keeps one weight vector per class and assigns x to the
class whose discriminant g_i(x) = w_i · x̃ is largest. The multi-class perceptron
learns the c weight vectors from mistakes: when a sample of class i is assigned to
class j, the true class gets +α x̃, the wrongly chosen class −α x̃, the others nothing.
"""


import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import (
    MAX_ITER,
    POSITIVE,
    IterativeMixin,
    augment,
    check_finite,
    check_targets,
    refuse_fit_params,
)

__all__ = [
    "MulticlassPerceptron",
    "multiclass_perceptron_update",
    "multiclass_epoch",
    "discriminants",
    "absolute_correction_threshold",
    "absolute_correction_increment",
    "kesler_construction",
]


@njit(cache=True)
def multiclass_perceptron_update(W, z, true, wrong, alpha):
    """The multi-class perceptron correction (eq. ``multiclass-update``), in place.

    Defined in chapter "Multi-category classification".

    w_true ← w_true + α z,  w_wrong ← w_wrong − α z,  every other row unchanged.

    Parameters
    ----------
    W : ndarray of shape (n_classes, n_features)
        The weight vectors of the linear machine, one row per class; modified in place.
    z : ndarray of shape (n_features,)
        The (augmented) sample that was a mistake (its true class did not strictly win).
    true, wrong : int
        Row of its true class, row of the class the machine chose.
    alpha : float
        The increment α > 0.

    Returns
    -------
    W : the same array, updated.

    Examples
    --------
    >>> W = np.zeros((3, 2))
    >>> multiclass_perceptron_update(W, np.array([1.0, 2.0]), true=0, wrong=2, alpha=1.0)
    array([[ 1.,  2.],
           [ 0.,  0.],
           [-1., -2.]])
    """
    W[true] += alpha * z
    W[wrong] -= alpha * z
    return W


@njit(cache=True)
def absolute_correction_threshold(W, z, true, wrong):
    """α* = (w_wrong − w_true) · z / (2 z · z) (eq. ``alpha-star``).

    Defined in chapter "Multi-category classification".

    In exact arithmetic, α = α* leaves the two scores of z tied after the update and any
    α > α* puts the true class ahead of the wrongly chosen one. In floating point α* and
    the scores are rounded: an α that exceeds α* by less than that rounding can leave the
    computed scores tied. With small integer data and η = 1, as on the chapter's digits,
    every score stays an exact integer and the guarantee holds exactly.

    Examples
    --------
    >>> W = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> absolute_correction_threshold(W, np.array([1.0, 1.0]), true=0, wrong=1)
    0.5
    """
    return float((W[wrong] - W[true]) @ z / (2.0 * (z @ z)))


@njit(cache=True)
def absolute_correction_increment(W, z, true, wrong, eta=1.0):
    """The absolute-correction increment: the smallest multiple of η greater than α*.

    Defined in chapter "Multi-category classification".

    With η = 1 this is Duda, Hart & Stork's "smallest integer greater than" α*. The
    multiple is taken of the computed (rounded) α*, and the update with it puts the true
    class ahead in exact arithmetic only; see :func:`absolute_correction_threshold`.

    Examples
    --------
    >>> W = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> absolute_correction_increment(W, np.array([1.0, 1.0]), true=0, wrong=1)
    1.0
    """
    zz = z @ z
    if zz == 0:  # a zero sample cannot be corrected; the fixed increment is as good as any
        return float(eta)
    return float(eta * (np.floor(absolute_correction_threshold(W, z, true, wrong) / eta) + 1.0))


@njit(cache=True)
def discriminants(W, z, g):
    """The linear machine's discriminants g_k = w_k · z, written into ``g``.

    Defined in chapter "Multi-category classification". Each g_k is summed from left to
    right, exactly as :func:`lincls.perceptron.sequential_dot` sums it; the classes are
    interleaved so that the compiled loop adds c independent sums at once.

    Examples
    --------
    >>> g = np.empty(2)
    >>> discriminants(np.array([[1.0, 2.0], [3.0, -1.0]]), np.array([1.0, 1.0]), g)
    array([3., 2.])
    """
    g[:] = 0.0
    for j in range(z.shape[0]):
        for k in range(W.shape[0]):
            g[k] += W[k, j] * z[j]
    return g


@njit(cache=True)
def multiclass_epoch(W, Z, t, eta, absolute, order=None):
    """One epoch of the multi-class perceptron over Z in order, updating W in place.

    Defined in chapter "Multi-category classification". A sample of class i is a mistake
    when its true class does not strictly beat every other class; the wrongly chosen
    class j is the best of the others (the first one on ties). The increment is η, or
    with ``absolute=True`` the absolute-correction increment. Returns the mistakes.
    ``order``, if given, is a permutation: the epoch visits ``Z[order[0]], Z[order[1]], …``.

    Examples
    --------
    >>> W = np.zeros((3, 2))
    >>> Z = np.array([[1.0, 2.0], [1.0, -1.0]])
    >>> multiclass_epoch(W, Z, np.array([2, 0]), 1.0, False)
    1
    >>> W
    array([[-1., -2.],
           [ 0.,  0.],
           [ 1.,  2.]])
    """
    mistakes = 0
    g = np.empty(W.shape[0])
    for k in range(Z.shape[0]):
        n = k if order is None else order[k]
        z, i = Z[n], t[n]
        discriminants(W, z, g)
        wrong, best = -1, -np.inf
        for j in range(W.shape[0]):
            if j != i and (wrong < 0 or g[j] > best):
                wrong, best = j, g[j]
        if best >= g[i]:
            alpha = absolute_correction_increment(W, z, i, wrong, eta) if absolute else eta
            multiclass_perceptron_update(W, z, i, wrong, alpha)
            mistakes += 1
    return mistakes

def kesler_construction(X, y, n_classes=None):
    """Kesler's construction: turn a c-class problem into a two-class one in R^{c·d}.

    Defined in chapter "Multi-category classification".

    A sample x of class i yields c − 1 vectors η_ij (j ≠ i), each made of c blocks of
    length d: block i holds x, block j holds −x, the others are zero. A linear machine
    W classifies x correctly exactly when vec(W) · η_ij > 0 for every j ≠ i, and the
    multi-class perceptron update for the pair (i, j) is the two-class perceptron update
    vec(W) ← vec(W) + α η_ij.

    Parameters
    ----------
    X : array-like of shape (n_samples, d)
        The (augmented) samples.
    y : array-like of shape (n_samples,)
        Class indices 0, ..., c − 1.
    n_classes : int, optional
        c; by default ``max(y) + 1``.

    Returns
    -------
    K : ndarray of shape (n_samples * (c − 1), c * d)
        The Kesler vectors, grouped by sample.
    pairs : ndarray of shape (n_samples * (c − 1), 3)
        For each row of K: sample index, true class i, other class j.

    Examples
    --------
    >>> K, pairs = kesler_construction([[1.0, 2.0]], [0], n_classes=3)
    >>> K
    array([[ 1.,  2., -1., -2.,  0.,  0.],
           [ 1.,  2.,  0.,  0., -1., -2.]])
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be 2-D with one class index per row; got X {X.shape}, "
                         f"y {y.shape}.")
    if not np.issubdtype(y.dtype, np.integer) or (y.size and y.min() < 0):
        raise ValueError("y must hold class indices 0, 1, ..., n_classes - 1.")
    c = int(y.max()) + 1 if n_classes is None else int(n_classes)
    if y.size and y.max() >= c:
        raise ValueError(f"y holds class index {y.max()} but n_classes={c}.")
    n, d = X.shape
    samples = np.repeat(np.arange(n), c - 1)
    true = y[samples]
    others = np.array([[j for j in range(c) if j != i] for i in range(c)], dtype=int)
    other = others[y].ravel() if n else np.zeros(0, dtype=int)
    K = np.zeros((n * (c - 1), c, d))
    rows = np.arange(n * (c - 1))
    K[rows, true] = X[samples]
    K[rows, other] = -X[samples]
    return K.reshape(n * (c - 1), c * d), np.column_stack([samples, true, other])


def _count_errors(S, t):
    """Training errors: rows of the scores S whose largest score (the first one on a tie,
    as ``predict`` decides) is not that of the true class t. A tie won by the true class
    is a mistake of the training rule but no training error."""
    return int(np.sum(np.argmax(S, axis=1) != t))


class MulticlassPerceptron(IterativeMixin, ClassifierMixin, BaseEstimator):
    """The multi-class perceptron: a linear machine trained by error correction.

    Defined in chapter "Multi-category classification".

    Each class i has a weight vector w_i; a sample x is assigned to the class with the
    largest score g_i(x) = w_i · x̃. In a sweep over the samples, every sample whose true
    class i does not strictly beat all others is corrected: w_i gets +α x̃ and the
    highest-scoring other class j gets −α x̃ (DHS eq. 5.115).

    Parameters
    ----------
    eta : float, default=1.0
        The increment unit η > 0. With ``correction="fixed"`` every correction uses
        α = η; with ``"absolute"`` α is the smallest multiple of η greater than
        α* = (w_j − w_i) · x̃ / (2 x̃ · x̃), so that (in exact arithmetic; rounding can
        leave a tie) class j no longer beats class i on x̃.
    correction : {"fixed", "absolute"}, default="fixed"
        The fixed-increment rule or the absolute-correction rule.
    fit_intercept : bool, default=True
        Give every class a bias through the clamped input x̃ = (1, x).
    max_iter : int, default=1000
        Maximum number of epochs (sweeps over the training set).
    shuffle : bool, default=True
        Visit the samples in a new random order every epoch.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling.

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes, n_features)
        The weight vectors w_i, one row per class (also for two classes).
    intercept_ : ndarray of shape (n_classes,)
        The biases (zero when ``fit_intercept=False``).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_iter_ : int
        Epochs run.
    converged_ : bool
        True when a whole epoch passed without a mistake: every training sample is
        strictly in its own class.
    history_ : dict of ndarrays
        ``"mistakes"``: the corrections made in each epoch. The last entry is 0 when
        the fit converged (a clean sweep).

    Notes
    -----
    On linearly separable data (some linear machine classifies every sample with
    a strict winner) the fixed-increment rule stops after finitely many corrections:
    by Kesler's construction (:func:`kesler_construction`) each correction is a
    two-class perceptron step in R^{c·d}, and the perceptron convergence theorem applies.

    References
    ----------
    R. O. Duda, P. E. Hart and D. G. Stork, *Pattern Classification*, 2nd ed., Wiley,
    2001, Sec. 5.12.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [0.5, 0.5], [4.5, 0.5], [0.5, 4.5]])
    >>> y = np.array(["a", "b", "c", "a", "b", "c"])
    >>> clf = MulticlassPerceptron(random_state=0).fit(X, y)
    >>> clf.converged_, clf.coef_.shape, clf.predict([[5.0, 0.0]]).tolist()
    (True, (3, 2), ['b'])
    """

    _parameter_constraints = {
        "eta": [POSITIVE],
        "correction": [StrOptions({"fixed", "absolute"})],
        "fit_intercept": ["boolean"],
        "max_iter": [MAX_ITER],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, *, eta=1.0, correction="fixed", fit_intercept=True, max_iter=1000,
                 shuffle=True, random_state=None):
        self.eta = eta
        self.correction = correction
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state

    def fit(self, X, y, *, callback=None, **params):
        """Learn one weight vector per class from samples ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            At least two distinct labels of any type.
        callback : callable or None
            Called as ``callback(epoch, W)`` after every epoch; W (one row per class,
            bias first) is updated in place, so copy it to record it.
        **params
            Not taken: ``sample_weight`` raises a TypeError that names the estimators
            that take it.

        Returns
        -------
        self : object
        """
        refuse_fit_params(self, params)
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_targets(y)
        self.classes_, t = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"The labels must hold at least 2 classes; got "
                             f"{len(self.classes_)} class: {self.classes_.tolist()}.")
        Z = augment(X) if self.fit_intercept else X
        W = np.zeros((len(self.classes_), Z.shape[1]))
        self._callback = callback
        try:
            self._run_epochs(W, Z, t)
        finally:
            del self._callback
        check_finite(self, X, "weights", W)
        if self.fit_intercept:
            self.intercept_, self.coef_ = W[:, 0].copy(), W[:, 1:].copy()
        else:
            self.intercept_, self.coef_ = np.zeros(len(self.classes_)), W
        return self

    def _epoch(self, W, Z, t, order):
        mistakes = multiclass_epoch(W, Z, t, float(self.eta), self.correction == "absolute",
                                    self._indices(order))
        return {"mistakes": mistakes}, mistakes == 0  # a clean sweep: all strictly right

    def _not_converged_message(self, W, Z, t):
        return (f"MulticlassPerceptron ({self.correction}, eta={self.eta:g}) left "
                f"{_count_errors(Z @ W.T, t)} training errors after max_iter={self.max_iter} "
                "epochs; the classes may not be linearly separable.")

    def scores(self, X):
        """Return the discriminants g_i(x) = w_i · x + b_i, shape (n_samples, n_classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_.T + self.intercept_

    def decision_function(self, X):
        """Return the class scores; for two classes, g_1(x) − g_0(x) (positive: ``classes_[1]``).

        Returns
        -------
        ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes
        """
        check_is_fitted(self)
        S = self.scores(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X):
        """Return the label of the class with the largest score (the first one on a tie)."""
        check_is_fitted(self)
        return self.classes_[np.argmax(self.scores(X), axis=1)]
