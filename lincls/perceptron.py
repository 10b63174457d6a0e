"""Rosenblatt's perceptron: the learning rule, fast and exactly as in the textbook.

Defined in chapter "The perceptron" (``book/perceptron.md``); its convergence is the
subject of chapter "Convergence of the perceptron" (``book/convergence.md``).

The textbook loop visits the samples in order and corrects every mistake at once:

    a sample is a mistake when  y (w · x̃) ≤ 0,   and then   w ← w + η y x̃.

:func:`textbook_epoch` is that loop, written out. :class:`Perceptron` computes *the same
weights, bit for bit*, but much faster: :func:`fast_epoch` evaluates a whole block of
samples with one matrix product, jumps to the first mistake, applies the same update,
and continues right after it.

Two details make "bit for bit" true and not just "close":

* The update is the very same floating-point operation, ``w += (η y) * x̃``, applied to
  the same samples in the same order.
* Whether a sample is a mistake is decided on the activation summed from left to right,
  ``((w₀x₀ + w₁x₁) + w₂x₂) + …``, as a plain loop (and scikit-learn's Perceptron) sums
  it. A matrix product sums in another order, so its result can differ in the last bits.
  Its sign can only differ from the left-to-right sign when the activation is within a
  rounding-error bound of zero; exactly those rare samples are re-checked with the
  left-to-right sum (:func:`sequential_dot`).
"""

import contextlib
import math

import numpy as np
from scipy.optimize import nnls
from sklearn.utils import check_random_state

from ._base import LinearClassifier, _check_flag, _check_positive
from ._blas import one_blas_thread

__all__ = [
    "Perceptron",
    "perceptron_update",
    "is_mistake",
    "sequential_dot",
    "textbook_epoch",
    "fast_epoch",
    "perceptron_trace",
    "max_margin",
    "novikoff_bound",
]

_EPS = np.finfo(float).eps


def sequential_dot(w, x):
    """The dot product w · x summed strictly from left to right, as a plain loop does.

    :func:`numpy.cumsum` adds sequentially, so its last entry equals
    ``s = 0.0; for j: s += w[j] * x[j]`` exactly.

    Examples
    --------
    >>> sequential_dot(np.array([1e16, 1.0, -1e16]), np.array([1.0, 1.0, 1.0]))
    0.0
    """
    return float(np.cumsum(w * x)[-1]) if len(w) else 0.0


def is_mistake(w, x, y):
    """Eq. (perceptron-mistake): the sample (x̃, y) is a mistake when y (w · x̃) ≤ 0.

    A point on the hyperplane (activation 0) counts as a mistake, so the zero weights
    the algorithm starts from make a mistake on every sample.
    """
    return y * sequential_dot(w, x) <= 0


def perceptron_update(w, x, y, eta):
    """Eq. (perceptron-update): correct a mistake in place, w ← w + η y x̃.

    For y = +1 the activation w · x̃ grows by η |x̃|², for y = -1 it shrinks by as much:
    either way it moves towards the correct side.
    """
    w += (eta * y) * x
    return w


def textbook_epoch(w, X, y, eta):
    """One epoch of the textbook perceptron (Algorithm alg-perceptron), updating w in place.

    Visits the samples in order; returns the number of mistakes (= updates) made.
    This is the slow reference that :func:`fast_epoch` reproduces bit for bit.
    """
    mistakes = 0
    for x_i, y_i in zip(X, y, strict=True):
        if is_mistake(w, x_i, y_i):
            perceptron_update(w, x_i, y_i, eta)
            mistakes += 1
    return mistakes


def fast_epoch(w, X, y, eta, *, on_mistake=None, block=32, tol_per_norm=None):
    """One epoch of the textbook perceptron, fast; updates w in place, returns the mistakes.

    Equal, bit for bit, to :func:`textbook_epoch`. A block of samples is evaluated with
    one matrix product; the loop jumps to the first mistake, applies
    :func:`perceptron_update`, and evaluates the next block right after the mistake.
    The block length follows the distance between mistakes.

    An activation whose sign the matrix product cannot certify (it lies within the
    rounding-error bound ``tol_per_norm * |w|`` of zero) is recomputed with
    :func:`sequential_dot`, the left-to-right sum of the textbook loop. ``|w|`` is
    bounded as in Novikoff's proof, |w_t|² ≤ |w_0|² + t η² R², so no norm has to be
    recomputed. ``on_mistake(k)``, if given, is called at each mistake, before the
    update (``w`` then holds the weights that made the mistake).

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [1.0, -1.0], [1.0, 0.5]])
    >>> y = np.array([1.0, -1.0, -1.0])
    >>> w1, w2 = np.zeros(2), np.zeros(2)
    >>> fast_epoch(w1, X, y, 1.0), textbook_epoch(w2, X, y, 1.0)
    (2, 2)
    >>> bool(np.array_equal(w1, w2))
    True
    """
    n_samples = X.shape[0]
    if tol_per_norm is None:
        tol_per_norm = rounding_bound(X)
    c64, R = tol_per_norm
    signs = y.tolist()
    # A bound W ≥ |w|, kept up to date as in the convergence proof: a mistake has
    # w · z ≤ 0 (up to rounding), so |w + η z|² ≤ |w|² + η² R².
    W2 = float(w @ w) * (1 + 4 * (X.shape[1] + 2) * _EPS)
    w_norm = math.sqrt(W2)
    mistakes = 0
    i = 0
    while i < n_samples:
        stop = min(i + block, n_samples)
        m = X[i:stop] @ w
        m *= y[i:stop]                              # m_j = y_j (w · x̃_j)
        tol = c64 * w_norm
        j = int((m <= tol).argmax())
        if not m[j] <= tol:                         # no candidate in this block
            i = stop
            block = min(2 * block, 4096)
            continue
        k = i + j
        if m[j] >= -tol and not is_mistake(w, X[k], signs[k]):
            i = k + 1                               # not a mistake after all (rare)
            continue
        if on_mistake is not None:
            on_mistake(k)
        perceptron_update(w, X[k], signs[k], eta)
        W2 = (W2 + (eta * R) ** 2 + 2 * eta * c64 * w_norm) * (1 + 8 * _EPS)
        w_norm = math.sqrt(W2)
        mistakes += 1
        block = max(8, min(4096, 2 * (j + 1)))
        i = k + 1
    return mistakes


def rounding_bound(X):
    """``(c, R)`` with |fl(w · x̃) − w · x̃| ≤ c |w| / 2 for every row x̃, in any order.

    R = max |x̃|. Any summation order errs by at most γ_n Σ|w_j x_j| ≤ γ_n |w| |x̃|,
    γ_n = nε/(1 − nε) (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1),
    so two orders differ by at most 2γ_n |w| R. We take c = 4(n + 2)ε R, which also covers
    the rounding of |w| itself.
    """
    n = X.shape[1]
    R = float(np.sqrt(np.max(np.einsum("ij,ij->i", X, X)))) if X.size else 0.0
    return 4.0 * (n + 2) * _EPS * R * (1 + 1e-9) + 1e-300, R * (1 + 1e-9)


def perceptron_trace(X, y, *, eta=1.0, max_iter=100, fit_intercept=True, w0=None):
    """Record the textbook run (samples in order) update by update, for plots and demos.

    Labels must be -1/+1. Returns ``(weights, corrected)``: ``weights[t]`` is the weight
    vector after t updates (``weights[0]`` the start ``w0``, zero by default) and
    ``corrected[t]`` the index of the sample corrected by update t + 1. With
    ``w0=None`` the last row equals ``Perceptron(shuffle=False, ...).weights_``.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> weights, corrected = perceptron_trace(*logic_gate("or"))
    >>> len(weights) == len(corrected) + 1, weights[-1].tolist()
    (True, [-1.0, 2.0, 2.0])
    """
    X = np.asarray(X, dtype=float)
    X = np.hstack([np.ones((len(X), 1)), X]) if fit_intercept else X
    y = np.asarray(y, dtype=float)
    w = np.zeros(X.shape[1]) if w0 is None else np.array(w0, dtype=float)
    weights, corrected = [], []

    def record(k):  # called before each update, with the weights that made the mistake
        weights.append(w.copy())
        corrected.append(k)

    for _ in range(max_iter):
        if fast_epoch(w, X, y, eta, on_mistake=record) == 0:
            break
    weights.append(w.copy())
    return np.array(weights), np.array(corrected, dtype=int)


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
    Z = y[:, None] * (np.hstack([np.ones((len(X), 1)), X]) if fit_intercept else X)
    # LDP: min |w| s.t. Z w >= 1  <=>  NNLS: min |E u - f|, u >= 0, E = [Z^T; 1^T], f = e_last
    E = np.vstack([Z.T, np.ones(len(Z))])
    f = np.zeros(E.shape[0])
    f[-1] = 1.0
    with one_blas_thread():  # small dense problem: threads cost more than they save
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


def novikoff_bound(X, y, *, fit_intercept=True):
    """Novikoff's bound (R/γ)² on the number of perceptron updates, eq. (novikoff).

    R = max |x̃_i| and γ is the maximal margin of :func:`max_margin`. Defined in chapter
    "Convergence of the perceptron".

    Examples
    --------
    >>> bound = novikoff_bound(np.array([[1.0, 1.0], [-1.0, -1.0]]), np.array([1, -1]),
    ...                        fit_intercept=False)
    >>> round(bound, 9)
    1.0
    """
    X = np.asarray(X, dtype=float)
    Xa = np.hstack([np.ones((len(X), 1)), X]) if fit_intercept else X
    R = float(np.max(np.linalg.norm(Xa, axis=1)))
    _, gamma = max_margin(X, y, fit_intercept=fit_intercept)
    return float((R / gamma) ** 2)


def _one_blas_thread(X):
    """Run BLAS on one thread for large inputs: the loop is sequential, and small matrix
    products on several threads spend more time synchronizing than computing."""
    return contextlib.nullcontext() if X.size < 200_000 else one_blas_thread()


class Perceptron(LinearClassifier):
    """Rosenblatt's perceptron, trained by the textbook error-correcting loop.

    Starting from w = 0, every epoch visits the samples (in order, or in a new random
    order when ``shuffle=True``) and corrects each mistake, y (w · x̃) ≤ 0, by
    w ← w + η y x̃. Training stops after the first epoch without a mistake or after
    ``max_iter`` epochs.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Learn a bias through the clamped input x̃ = (1, x). ``False`` gives the
        homogeneous perceptron, whose hyperplane passes through the origin.
    eta : float, default=1.0
        Learning rate η > 0. Starting from zero weights it only scales w, so it changes
        neither the mistakes nor the predictions (chapter "The perceptron").
    max_iter : int, default=1000
        Maximum number of epochs (passes over the training data).
    shuffle : bool, default=True
        Visit the samples in a new random order in each epoch. With ``False`` the result
        is exactly that of the textbook loop (:func:`textbook_epoch`) and of
        ``sklearn.linear_model.Perceptron(fit_intercept=False, shuffle=False, tol=None,
        eta0=eta)`` when ``fit_intercept=False``.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        The weights w.
    intercept_ : ndarray of shape (1,)
        The bias b (zero when ``fit_intercept=False``).
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_iter_ : int
        Number of epochs run, including the final one without mistakes.
    t_ : int
        Number of updates (corrected mistakes).
    converged_ : bool
        Whether an epoch passed without a mistake (the training set is separated).
    history_ : dict
        ``history_["errors"]``: the number of mistakes in each epoch.

    Notes
    -----
    The mistake test and update rule are eqs. (perceptron-mistake) and
    (perceptron-update) of the book. On linearly separable data the number of updates
    is at most (R/γ)² (Novikoff's theorem, chapter "Convergence of the perceptron").

    References
    ----------
    F. Rosenblatt, *The Perceptron: a perceiving and recognizing automaton*, Cornell
    Aeronautical Laboratory report 85-460-1, 1957.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("and")
    >>> clf = Perceptron(shuffle=False).fit(X, y)
    >>> clf.predict(X).tolist(), clf.converged_, clf.t_
    ([-1, -1, -1, 1], True, 18)
    >>> clf.coef_, clf.intercept_
    (array([[3., 2.]]), array([-4.]))
    """

    def __init__(self, *, fit_intercept=True, eta=1.0, max_iter=1000, shuffle=True,
                 random_state=None):
        self.fit_intercept = fit_intercept
        self.eta = eta
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        _check_positive("eta", self.eta)
        _check_positive("max_iter", self.max_iter, integer=True)
        _check_flag("shuffle", self.shuffle)

    def _fit_augmented(self, X, y):
        w = np.zeros(X.shape[1])
        eta = float(self.eta)
        bound = rounding_bound(X)
        rng = check_random_state(self.random_state)
        errors = []
        self.converged_ = False
        with _one_blas_thread(X):
            for _ in range(self.max_iter):
                if self.shuffle:
                    order = rng.permutation(len(y))
                    errors.append(fast_epoch(w, X[order], y[order], eta, tol_per_norm=bound))
                else:
                    errors.append(fast_epoch(w, X, y, eta, tol_per_norm=bound))
                if errors[-1] == 0:
                    self.converged_ = True
                    break
        self.n_iter_ = len(errors)
        self.t_ = int(sum(errors))
        self.history_ = {"errors": np.array(errors)}
        if not self.converged_:
            self._not_converged(
                f"Perceptron did not separate the training data in max_iter={self.max_iter} "
                "epochs (the data may not be linearly separable); increase max_iter or "
                "use Pocket.")
        return w
