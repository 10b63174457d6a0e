"""The losses of the margin, the averaged and voted perceptron, Fisher's discriminant.

Defined in chapter "The losses of the margin" (``book/margin_losses.md``); logistic
regression, the chapter's probabilistic classifier, lives in :mod:`lincls.logistic`.

The criteria of the book's error-correcting, least-squares, SVM and logistic rules are
sums of a loss of the margin m = y w · x̃ (:data:`MARGIN_LOSSES`), weighted by 1/‖x̃_i‖²
for relaxation, plus |w|²/2 for the SVM; optimal stability (Minover) maximizes the
smallest margin instead. The voted perceptron of Freund & Schapire (1999) keeps every
weight vector w_k the perceptron passes through, with its survival count c_k (the
training steps it lasted: the mistake that created it plus the samples it then classified
correctly; c_0 = 0 for the initial w_0 = 0, as in Freund & Schapire); it predicts by
the vote sign(Σ_k c_k sign(w_k · x̃)). The averaged perceptron predicts with the linear
average Σ_k c_k w_k instead.
"""

from numbers import Integral

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import LinearClassifier, augment, check_finite, labels_to_signs, refuse_fit_params
from .perceptron import is_mistake

__all__ = ["MARGIN_LOSSES", "voted_perceptron_epoch", "voted_perceptron_run",
           "AveragedPerceptron", "VotedPerceptron", "FisherDiscriminant"]

#: Each loss of the book as a function of the margin m = y w · x̃, eq. (margin-losses).
#: The relaxation criterion with margin 1 (b = 1 in its chapter) is Σ_i ℓ(m_i) / ‖x̃_i‖²:
#: this loss, weighted per sample by 1 / ‖x̃_i‖².
MARGIN_LOSSES = {
    "0–1 (mistakes, m ≤ 0)": lambda m: (m <= 0).astype(float),
    "perceptron": lambda m: np.maximum(0.0, -m),
    "relaxation (margin 1)": lambda m: 0.5 * np.maximum(0.0, 1.0 - m) ** 2,
    "squared (Adaline, MSE)": lambda m: (1.0 - m) ** 2,
    "hinge (SVM)": lambda m: np.maximum(0.0, 1.0 - m),
    "logistic": lambda m: np.logaddexp(0.0, -m) / np.log(2.0),
}


@njit(cache=True)
def voted_perceptron_epoch(w, count, total, X, y, mistakes):
    """One epoch of the voted perceptron, eq. (margin-voted), updating its state in place.

    Defined in chapter "The losses of the margin".

    ``w`` is the current weight vector and ``count[0]`` its survival count c; ``total``
    accumulates Σ_k c_k w_k over the retired vectors. At a mistake the current vector
    retires with its count and the perceptron update w ← w + y x̃ starts a new one with
    c = 1; a correct sample adds one to c. The run starts at w_0 = 0 with c_0 = 0. The
    indices of the mistakes and the counts of the vectors they retire are appended to
    ``mistakes`` (rows (i, c)); returns their number.

    Examples
    --------
    >>> from numba.typed import List
    >>> mistakes = List([(0, 0.0)]); _ = mistakes.pop()    # an empty typed list of (i, c)
    >>> w, count, total = np.zeros(2), np.zeros(1), np.zeros(2)   # w_0 = 0, c_0 = 0
    >>> X, y = np.array([[1.0, 1.0], [1.0, -1.0]]), np.array([1.0, -1.0])
    >>> voted_perceptron_epoch(w, count, total, X, y, mistakes), w.tolist(), list(mistakes)
    (2, [0.0, 2.0], [(0, 0.0), (1, 1.0)])
    """
    made = 0
    for i in range(len(y)):
        if is_mistake(w, X[i], y[i]):            # a mistake: retire (w_k, c_k)
            total += count[0] * w
            mistakes.append((i, count[0]))
            w += y[i] * X[i]                     # w_{k+1} = w_k + y_i x̃_i
            count[0] = 1.0
            made += 1
        else:
            count[0] += 1.0
    return made


def voted_perceptron_run(X, y, max_iter):
    """Run up to ``max_iter`` epochs (stopping after one without mistakes).

    Defined in chapter "The losses of the margin".

    ``X`` holds augmented inputs, ``y`` ±1. Returns ``(W, c, errors)``: the weight
    vectors w_0 = 0, w_1, …, w_k (rows of W), their survival counts c, and the mistakes
    per epoch.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("and")
    >>> W, counts, errors = voted_perceptron_run(augment(X), y.astype(float), 10)
    >>> len(W) == len(counts), int(errors[-1])
    (True, 0)
    """
    from numba.typed import List

    X = np.ascontiguousarray(X)
    w, count, total = np.zeros(X.shape[1]), np.zeros(1), np.zeros(X.shape[1])
    mistakes, errors = List([(0, 0.0)]), []
    mistakes.pop()
    for _ in range(max_iter):
        errors.append(voted_perceptron_epoch(w, count, total, X, y, mistakes))
        if errors[-1] == 0:
            break
    idx = np.array([i for i, _ in mistakes], dtype=int)
    retired = np.array([c for _, c in mistakes])
    W = np.vstack([np.zeros(X.shape[1]), np.cumsum(y[idx, None] * X[idx], axis=0)])
    return W, np.append(retired, count[0]), np.array(errors)


_PERCEPTRON_CONSTRAINTS = {
    "fit_intercept": ["boolean"],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
}


class AveragedPerceptron(LinearClassifier):
    """The averaged perceptron: the perceptron's weight vectors averaged by survival time.

    Runs the textbook perceptron (samples in order, w_0 = 0) for up to ``max_iter`` epochs
    and predicts with w̄ = Σ_k c_k w_k / Σ_k c_k, eq. (margin-averaged).

    Defined in chapter "The losses of the margin" (``book/margin_losses.md``).

    Parameters
    ----------
    fit_intercept : bool, default=True
    max_iter : int, default=10
        Epochs (Freund & Schapire's T); fewer when an epoch has no mistakes.

    Attributes
    ----------
    coef_, intercept_ : the averaged weights.
    last_weights_ : ndarray
        The last iterate w_k (bias first when ``fit_intercept``), for comparison.
    t_ : int
        Mistakes (updates).
    n_iter_ : int
        Epochs run.
    converged_ : bool
        Whether an epoch passed without a mistake. On non-separable data the run stops
        after ``max_iter`` epochs *by design* (the average is the answer), so no warning
        is raised.
    history_ : dict
        ``errors``: mistakes per epoch.

    References
    ----------
    .. [1] Freund, Y. and Schapire, R. E. (1999). Large margin classification using the
       perceptron algorithm. Machine Learning 37(3), 277–296.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("and")
    >>> AveragedPerceptron().fit(X, y).predict(X).tolist() == y.tolist()
    True
    """

    _parameter_constraints = dict(_PERCEPTRON_CONSTRAINTS)

    def __init__(self, *, fit_intercept=True, max_iter=10):
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter


    def _fit_augmented(self, X, y):
        W, c, errors = voted_perceptron_run(X, y, self.max_iter)
        self.last_weights_ = W[-1].copy()
        self.t_, self.n_iter_ = len(W) - 1, len(errors)
        self.converged_ = bool(errors[-1] == 0)
        self.history_ = {"errors": errors}
        return c @ W / c.sum()


class VotedPerceptron(ClassifierMixin, BaseEstimator):
    """The voted perceptron: every weight vector votes with its survival count.

    Predicts sign(Σ_k c_k sign(w_k · x̃)), eq. (margin-voted), a classifier that is not
    linear in general. Same training run as :class:`AveragedPerceptron`.

    Defined in chapter "The losses of the margin" (``book/margin_losses.md``).

    Parameters
    ----------
    fit_intercept : bool, default=True
    max_iter : int, default=10

    Attributes
    ----------
    weights_ : ndarray of shape (n_vectors, n_features + fit_intercept)
        The perceptron's weight vectors w_0 = 0, …, w_k.
    counts_ : ndarray of shape (n_vectors,)
        Their survival counts c_k.
    t_, n_iter_, converged_, history_, classes_, n_features_in_ :
        As in :class:`AveragedPerceptron`.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("or")
    >>> VotedPerceptron().fit(X, y).predict(X).tolist() == y.tolist()
    True
    """

    _parameter_constraints = dict(_PERCEPTRON_CONSTRAINTS)

    def __init__(self, *, fit_intercept=True, max_iter=10):
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y, **params):
        """Run the perceptron on ``X``, ``y`` and keep every weight vector; returns self.

        ``sample_weight`` is not taken (a TypeError names the estimators that take it).
        """
        refuse_fit_params(self, params)
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, signs = labels_to_signs(y)
        Xa = augment(X) if self.fit_intercept else X
        self.weights_, self.counts_, errors = voted_perceptron_run(Xa, signs, self.max_iter)
        check_finite(self, X, "weights", self.weights_)
        self.t_, self.n_iter_ = len(self.weights_) - 1, len(errors)
        self.converged_ = bool(errors[-1] == 0)
        self.history_ = {"errors": errors}
        return self

    def decision_function(self, X):
        """The vote Σ_k c_k sign(w_k · x̃) (a point on a hyperplane votes -1)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        Xa = augment(X) if self.fit_intercept else X
        return np.where(Xa @ self.weights_.T > 0, 1.0, -1.0) @ self.counts_

    def predict(self, X):
        """``classes_[1]`` where the vote is positive, else ``classes_[0]``."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]


class FisherDiscriminant(LinearClassifier):
    """Fisher's linear discriminant: w = S_W⁻¹ (m₊ - m₋), threshold at the overall mean.

    The direction maximizes the ratio of between-class to within-class scatter,
    eq. (fisher-criterion); the bias b = -w · m puts the boundary through the mean m of
    all samples, which makes it the least-squares solution with targets N/N₊ and -N/N₋
    (eq. fisher-least-squares).

    Defined in chapter "The losses of the margin" (``book/margin_losses.md``).

    Parameters
    ----------
    fit_intercept : bool, default=True
        False puts the boundary through the origin (b = 0).

    Attributes
    ----------
    coef_, intercept_ : the discriminant.
    scatter_within_ : ndarray of shape (n_features, n_features)
        S_W = Σ over both classes of Σ_i (x_i - m_c)(x_i - m_c)ᵀ.

    References
    ----------
    .. [1] Fisher, R. A. (1936). The use of multiple measurements in taxonomic problems.
       Annals of Eugenics 7(2), 179–188.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [1.0, 2.0], [2.0, 0.0], [3.0, 0.0], [4.0, 2.0], [5.0, 0.0]])
    >>> clf = FisherDiscriminant().fit(X, [0, 0, 0, 1, 1, 1])
    >>> clf.scatter_within_.round(3).tolist()        # m₊ - m₋ = (3, 0)
    [[4.0, 0.0], [0.0, 5.333]]
    >>> clf.coef_.round(6).tolist(), clf.intercept_.round(6).tolist()  # b = -w · m
    ([[0.75, 0.0]], [-1.875])
    """

    _parameter_constraints = {"fit_intercept": ["boolean"]}

    def __init__(self, *, fit_intercept=True):
        self.fit_intercept = fit_intercept


    def _fit_augmented(self, X, y):
        X = X[:, 1:] if self.fit_intercept else X
        pos, neg = X[y > 0], X[y < 0]
        m_pos, m_neg = pos.mean(axis=0), neg.mean(axis=0)
        D_pos, D_neg = pos - m_pos, neg - m_neg
        self.scatter_within_ = D_pos.T @ D_pos + D_neg.T @ D_neg
        check_finite(self, X, "within-class scatter matrix", self.scatter_within_)
        w = np.linalg.lstsq(self.scatter_within_, m_pos - m_neg, rcond=None)[0]
        if not self.fit_intercept:
            return w
        return np.append(-w @ X.mean(axis=0), w)

