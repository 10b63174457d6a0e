"""Rosenblatt's perceptron: the learning rule, compiled exactly as in the textbook.

Defined in chapter "The perceptron" (``book/perceptron.md``); its convergence is the
subject of chapter "Convergence of the perceptron" (``book/convergence.md``).

The textbook loop visits the samples in order and corrects every mistake at once:

    a sample is a mistake when  y (w · x̃) ≤ 0,   and then   w ← w + η y x̃.

:func:`textbook_epoch` is that loop, written out, and it is also what :class:`Perceptron`
runs: the functions carry numba's ``@njit(cache=True)``, which compiles the very same
Python to machine code. With ``NUMBA_DISABLE_JIT=1`` they run as plain Python and give
the same weights bit for bit (the tests check it), because the compiled loop does the same
floating-point operations in the same order: the activation is summed from left to right,
``((w₀x₀ + w₁x₁) + w₂x₂) + …``, as scikit-learn's Perceptron sums it.
"""

import numpy as np
from numba import njit
from sklearn.utils._param_validation import validate_params
from sklearn.utils.validation import check_X_y

from ._base import CLASS_WEIGHT, MAX_ITER, POSITIVE, IterativeClassifier, augment, check_signs
from .discriminant import max_margin

__all__ = [
    "Perceptron",
    "perceptron_update",
    "is_mistake",
    "sequential_dot",
    "textbook_epoch",
    "sequential_dots",
    "next_mistake",
    "fast_epoch",
    "perceptron_trace",
    "novikoff_bound",
    "data_radius",
]


@njit(cache=True)
def sequential_dot(w, x):
    """The dot product w · x summed strictly from left to right, as a plain loop does.

    Defined in chapter "The perceptron".

    Examples
    --------
    >>> sequential_dot(np.array([1e16, 1.0, -1e16]), np.array([1.0, 1.0, 1.0]))
    0.0
    """
    s = 0.0
    for j in range(len(w)):
        s += w[j] * x[j]
    return s


@njit(cache=True)
def is_mistake(w, x, y):
    """Eq. (perceptron-mistake): the sample (x̃, y) is a mistake when y (w · x̃) ≤ 0.

    Defined in chapter "The perceptron". A point on the hyperplane (activation 0) counts
    as a mistake, so the zero weights the algorithm starts from make a mistake on every
    sample.

    Examples
    --------
    >>> bool(is_mistake(np.zeros(2), np.array([1.0, 3.0]), 1.0))
    True
    """
    return y * sequential_dot(w, x) <= 0


@njit(cache=True)
def perceptron_update(w, x, y, eta):
    """Eq. (perceptron-update): correct a mistake in place, w ← w + η y x̃ (float arrays).

    Defined in chapter "The perceptron". In exact arithmetic, for y = +1 the activation
    w · x̃ grows by η |x̃|², for y = -1 it shrinks by as much: either way it moves towards
    the correct side (in floating point a step far smaller than w can round away).

    Examples
    --------
    >>> perceptron_update(np.zeros(2), np.array([1.0, 3.0]), -1.0, 0.5)
    array([-0.5, -1.5])
    """
    if len(x) != len(w):
        raise ValueError("perceptron_update: w and x differ in length")
    step = eta * y
    for j in range(len(w)):          # in place, component by component: no temporary array
        w[j] += step * x[j]
    return w


@njit(cache=True)
def textbook_epoch(w, X, y, eta, order=None, sample_weight=None):
    """One epoch of the textbook perceptron (Algorithm alg-perceptron), updating w in place.

    Defined in chapter "The perceptron". Visits the samples in order, or in the order of
    the indices ``order`` (a permutation; a shuffled epoch reads each row where it lies
    instead of copying X), and corrects every mistake; returns the number of mistakes
    (= updates) made. Between two mistakes w does not change, so the loop jumps from
    mistake to mistake with :func:`next_mistake`. This loop, compiled, is what
    :class:`Perceptron` runs. With ``sample_weight`` s, the step at sample i is η s_i:
    w ← w + η s_i y_i x̃_i (without, numba compiles the loop with no weights at all).

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [1.0, -1.0], [1.0, 0.5]])
    >>> w = np.zeros(2)
    >>> textbook_epoch(w, X, np.array([1.0, -1.0, -1.0]), 1.0), w.tolist()
    (2, [0.0, 1.5])
    """
    mistakes = 0
    k = next_mistake(w, X, y, 0, order)
    while k < X.shape[0]:
        i = k if order is None else order[k]
        if sample_weight is None:
            perceptron_update(w, X[i], y[i], eta)
        else:
            perceptron_update(w, X[i], y[i], eta * sample_weight[i])
        mistakes += 1
        k = next_mistake(w, X, y, k + 1, order)
    return mistakes


@njit(cache=True)
def sequential_dots(w, a, b, c, d):
    """The four dot products w · a, w · b, w · c, w · d, each summed as :func:`sequential_dot`.

    Defined in chapter "The perceptron". One sum from left to right waits for each
    addition before the next; four independent sums in one loop let the processor
    overlap them, with every sum rounded exactly as on its own.

    Examples
    --------
    >>> x = np.array([1.0, 1.0, 1.0])
    >>> sequential_dots(np.array([1e16, 1.0, -1e16]), x, x, 2 * x, x)
    (0.0, 0.0, 0.0, 0.0)
    """
    s0 = s1 = s2 = s3 = 0.0
    for j in range(len(w)):
        s0 += w[j] * a[j]
        s1 += w[j] * b[j]
        s2 += w[j] * c[j]
        s3 += w[j] * d[j]
    return s0, s1, s2, s3


@njit(cache=True)
def next_mistake(w, X, y, start, order=None):
    """The position of the first mistake y_i (w · x̃_i) ≤ 0 at or after ``start``, or n_samples.

    Defined in chapter "The perceptron". Position k is sample k, or sample ``order[k]``
    when a permutation ``order`` is given. The one "jump to the next mistake" kernel:
    :func:`textbook_epoch` corrects the mistake it finds, and the algorithms that do
    more at a mistake (the pocket's competition, a recorded trace) call it and then act
    in Python. It tests the samples four at a time with :func:`sequential_dots`, each
    activation the very number :func:`is_mistake` computes.

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [1.0, -1.0], [1.0, 0.5]])
    >>> next_mistake(np.array([0.0, 1.0]), X, np.array([1.0, 1.0, -1.0]), 0)
    1
    >>> next_mistake(np.array([0.0, 1.0]), X, np.array([1.0, 1.0, -1.0]), 0, np.array([2, 0, 1]))
    0
    """
    n = X.shape[0]
    k = start
    while k + 4 <= n:
        if order is None:
            i0, i1, i2, i3 = k, k + 1, k + 2, k + 3
        else:
            i0, i1, i2, i3 = order[k], order[k + 1], order[k + 2], order[k + 3]
        a0, a1, a2, a3 = sequential_dots(w, X[i0], X[i1], X[i2], X[i3])
        if y[i0] * a0 <= 0:
            return k
        if y[i1] * a1 <= 0:
            return k + 1
        if y[i2] * a2 <= 0:
            return k + 2
        if y[i3] * a3 <= 0:
            return k + 3
        k += 4
    while k < n:
        i = k if order is None else order[k]
        if is_mistake(w, X[i], y[i]):
            return k
        k += 1
    return n


def fast_epoch(w, X, y, eta, *, on_mistake=None):
    """One epoch of the textbook perceptron, updating w in place; returns the mistakes.

    Defined in chapter "The perceptron". Without ``on_mistake`` this is the compiled
    :func:`textbook_epoch`. ``on_mistake(k)``, if given, is called at each mistake before
    the update (``w`` then holds the weights that made the mistake); the loop jumps from
    mistake to mistake with the compiled :func:`next_mistake`.

    Examples
    --------
    >>> X = np.array([[1.0, 2.0], [1.0, -1.0], [1.0, 0.5]])
    >>> y = np.array([1.0, -1.0, -1.0])
    >>> seen = []
    >>> fast_epoch(np.zeros(2), X, y, 1.0, on_mistake=seen.append), seen
    (2, [0, 2])
    """
    if on_mistake is None:
        return textbook_epoch(w, X, y, eta)
    mistakes = 0
    k = next_mistake(w, X, y, 0)
    while k < len(y):
        on_mistake(k)
        perceptron_update(w, X[k], y[k], eta)
        mistakes += 1
        k = next_mistake(w, X, y, k + 1)
    return mistakes


@validate_params(
    {"X": ["array-like"], "y": ["array-like"], "eta": [POSITIVE], "max_iter": [MAX_ITER],
     "fit_intercept": ["boolean"], "w0": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def perceptron_trace(X, y, *, eta=1.0, max_iter=100, fit_intercept=True, w0=None):
    """Record the textbook run (samples in order) update by update, for plots and demos.

    Defined in chapter "The perceptron".

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
    X, y = check_X_y(X, y, dtype=np.float64)
    y = y.astype(np.float64)
    check_signs(y)
    X = augment(X) if fit_intercept else X
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


def data_radius(X, *, fit_intercept=True):
    """R = max_i |x̃_i|, the radius of the (augmented) samples in Novikoff's bound.

    Defined in chapter "Convergence of the perceptron", eq. (novikoff).

    Examples
    --------
    >>> data_radius(np.array([[3.0, 0.0], [0.0, 1.0]]), fit_intercept=False)
    3.0
    >>> round(data_radius(np.array([[3.0, 0.0]])), 6)   # |(1, 3, 0)| = √10
    3.162278
    """
    X = np.asarray(X, dtype=float)
    return float(np.max(np.linalg.norm(augment(X) if fit_intercept else X, axis=1)))


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
    R = data_radius(X, fit_intercept=fit_intercept)
    _, gamma = max_margin(X, y, fit_intercept=fit_intercept)
    return float((R / gamma) ** 2)


class Perceptron(IterativeClassifier):
    """Rosenblatt's perceptron, trained by the textbook error-correcting loop.

    Defined in chapter "The perceptron".

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
        Learning rate η > 0. Starting from zero weights it only scales w in exact
        arithmetic, so there it changes neither the mistakes nor the predictions. In
        floating point that holds when η is a power of two (barring overflow and
        underflow); other values round differently and can change the run: on the AND
        gate with ``shuffle=False``, η = 0.1 makes 8 updates and η = 1 makes 18
        (chapter "The perceptron").
    max_iter : int, default=1000
        Maximum number of epochs (passes over the training data).
    shuffle : bool, default=True
        Visit the samples in a new random order in each epoch. With ``False`` the result
        is exactly that of the textbook loop (:func:`textbook_epoch`) and of
        ``sklearn.linear_model.Perceptron(fit_intercept=False, shuffle=False, tol=None,
        eta0=eta)`` when ``fit_intercept=False``.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``sample_weight`` (see :meth:`fit`): a
        dict maps a label to its weight, ``"balanced"`` weighs each class by
        n_samples / (2 · its count), as in scikit-learn.

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
        ``history_["errors"]``: the number of mistakes in each epoch, i.e. of updates:
        samples with y (w · x̃) ≤ 0 when visited (not training errors; see
        :meth:`~lincls._base.LinearClassifier.predict`).

    Notes
    -----
    The mistake test and update rule are eqs. (perceptron-mistake) and
    (perceptron-update) of the book. On linearly separable data the number of updates
    is at most (R/γ)² (Novikoff's theorem, chapter "Convergence of the perceptron").

    With sample weights s_i (and class weights) a mistake on sample i moves w by
    η s_i y_i x̃_i: the perceptron criterion Σ s_i max(0, -y_i w · x̃_i) descended one
    sample at a time, the convention of ``sklearn.linear_model.Perceptron``. What holds
    exactly: a weight 0 removes the sample (the run is that on the other samples, bit
    for bit, shuffled or not); weights all 1 are the unweighted run; weights all c are
    the run with learning rate η c. A weight n is *not* n copies of the sample: copies
    visited in a row are each tested, and the second is often no longer a mistake.

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

    _parameter_constraints = {
        **IterativeClassifier._parameter_constraints,
        "eta": [POSITIVE],
        "max_iter": [MAX_ITER],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "class_weight": CLASS_WEIGHT,
    }

    def __init__(self, *, fit_intercept=True, eta=1.0, max_iter=1000, shuffle=True,
                 random_state=None, class_weight=None):
        self.fit_intercept = fit_intercept
        self.eta = eta
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.class_weight = class_weight

    def fit(self, X, y, sample_weight=None, *, callback=None):
        """Run the perceptron on samples ``X`` and labels ``y``; returns self.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two distinct labels of any type.
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Non-negative weights s_i: a mistake on sample i moves w by η s_i y_i x̃_i,
            and a sample of weight 0 is dropped (see Notes for what this equals).
            Multiplied by the weights of ``class_weight``.
        callback : callable or None
            Called as ``callback(epoch, w)`` after each epoch; copy ``w`` to record it.

        Returns
        -------
        self : object
        """
        return self._fit_with_callback(X, y, callback, sample_weight)

    def _epoch(self, w, X, y, order):
        if self._sample_weight is None:
            mistakes = textbook_epoch(w, X, y, float(self.eta), self._indices(order))
        else:
            mistakes = textbook_epoch(w, X, y, float(self.eta), self._indices(order),
                                      self._sample_weight)
        return {"errors": mistakes}, mistakes == 0

    def _fit_augmented(self, X, y):
        w = super()._fit_augmented(X, y)
        self.t_ = int(self.history_["errors"].sum())
        return w

    def _not_converged_message(self, w, X, y):
        return (f"Perceptron did not separate the training data in max_iter={self.max_iter} "
                "epochs (the data may not be linearly separable); increase max_iter or "
                "use Pocket.")
