"""Adaline: gradient descent on the squared error (the Widrow–Hoff / LMS rule).

Defined in chapter "Adaline and gradient descent" (``book/adaline.md``).

Adaline keeps the perceptron's linear unit but learns from the *activation* w · x
itself rather than from its sign: it minimizes the squared error between the labels
y ∈ {-1, +1} and the activations by gradient descent. One class covers the three
schedules of the chapter: full-batch gradient descent (``batch_size=None``), online
Widrow–Hoff LMS (``batch_size=1``) and mini-batch learning (``batch_size=k``).
"""

import math

import numpy as np
from numba import njit

from ._base import MAX_ITER, NON_NEGATIVE, POSITIVE, IterativeClassifier, StopFit

__all__ = ["Adaline", "mse_loss", "mse_gradient", "adaline_step", "widrow_hoff_update",
           "lms_epoch"]


@njit(cache=True)
def mse_loss(w, X, y, s=None):
    """The mean squared error loss L(w) = 1/(2M) Σ (y − w · x)², eq. (adaline-loss).

    Defined in chapter "Adaline and gradient descent". With weights ``s`` the i-th
    squared error is multiplied by s_i (still divided by M, the number of rows).

    Examples
    --------
    >>> mse_loss(np.zeros(2), np.eye(2), np.array([1.0, -1.0]))
    0.5
    """
    residual = y - X @ w
    if s is None:
        return 0.5 * float(residual @ residual) / len(y)
    return 0.5 * float(residual @ (s * residual)) / len(y)


@njit(cache=True)
def mse_gradient(w, X, y, s=None):
    """The gradient ∇L(w) = −1/M Σ (y − w · x) x of the mean squared error, eq. (adaline-gradient).

    Defined in chapter "Adaline and gradient descent". With weights ``s`` the i-th term
    is multiplied by s_i.

    Examples
    --------
    >>> mse_gradient(np.zeros(2), np.eye(2), np.array([1.0, -1.0]))
    array([-0.5,  0.5])
    """
    residual = y - X @ w
    if s is None:
        return -(X.T @ residual) / len(y)
    return -(X.T @ (s * residual)) / len(y)


@njit(cache=True)
def adaline_step(w, X, y, eta, s=None):
    """One Adaline step on a batch (X, y): w ← w − η ∇L(w), eq. (adaline-step).

    Defined in chapter "Adaline and gradient descent". ``s``: weights of the samples of
    the batch, as in :func:`mse_gradient`.

    With a single sample this is the Widrow–Hoff rule w ← w + η (y − w · x) x.

    Examples
    --------
    >>> adaline_step(np.zeros(2), np.array([[1.0, 2.0]]), np.array([1.0]), eta=0.1)
    array([0.1, 0.2])
    """
    return w - eta * mse_gradient(w, X, y, s)


@njit(cache=True)
def widrow_hoff_update(w, x, y, eta):
    """Eq. (widrow-hoff): one on-line LMS step on the sample (x, y), in place.

    Defined in chapter "Adaline and gradient descent". w ← w + η (y − w · x) x is
    :func:`adaline_step` on a batch of one sample; the activation is summed from left
    to right, so the compiled and the plain-Python run agree bit for bit.

    Examples
    --------
    >>> widrow_hoff_update(np.zeros(2), np.array([1.0, 2.0]), 1.0, 0.1)
    array([0.1, 0.2])
    """
    activation = 0.0
    for j in range(len(w)):
        activation += w[j] * x[j]
    step = eta * (y - activation)
    for j in range(len(w)):
        w[j] += step * x[j]
    return w


@njit(cache=True)
def lms_epoch(w, X, y, eta, batch_size, eta_decay=False, step=0, order=None,
              sample_weight=None):
    """One epoch of on-line or mini-batch Adaline over the samples in order.

    Defined in chapter "Adaline and gradient descent". With ``batch_size=1`` each step
    is :func:`widrow_hoff_update` (on-line LMS), otherwise :func:`adaline_step` on the
    next ``batch_size`` samples. ``step`` counts the steps taken before; with
    ``eta_decay`` step k uses the rate η/k. ``order``, if given, is a permutation: the
    epoch visits ``X[order[0]], X[order[1]], …`` (a mini-batch gathers its rows), never
    copying X. With ``sample_weight`` s the term of sample i in its step is multiplied by
    s_i (on-line: w ← w + η s_i (y_i − w · x_i) x_i). Returns new weights (w is not
    changed) and the step count.

    Examples
    --------
    >>> lms_epoch(np.zeros(2), np.eye(2), np.array([1.0, -1.0]), 0.5, 1)
    (array([ 0.5, -0.5]), 2)
    """
    w = w.copy()
    for start in range(0, len(y), batch_size):
        step += 1
        rate = eta / step if eta_decay else eta
        if batch_size == 1:
            i = start if order is None else order[start]
            if sample_weight is None:
                widrow_hoff_update(w, X[i], y[i], rate)
            else:
                widrow_hoff_update(w, X[i], y[i], rate * sample_weight[i])
        elif order is None:
            stop = start + batch_size
            if sample_weight is None:
                w = adaline_step(w, X[start:stop], y[start:stop], rate)
            else:
                w = adaline_step(w, X[start:stop], y[start:stop], rate, sample_weight[start:stop])
        else:
            batch = order[start:start + batch_size]  # copies the rows of this batch only
            if sample_weight is None:
                w = adaline_step(w, X[batch], y[batch], rate)
            else:
                w = adaline_step(w, X[batch], y[batch], rate, sample_weight[batch])
    return w, step


@njit(cache=True)
def _epoch_summary(w, X, y, s=None):
    """What an epoch records: L(w) as :func:`mse_loss` computes it, the mistakes (samples
    with y (w · x̃) ≤ 0) and ‖∇L(w)‖ as :func:`mse_gradient` computes it, in one compiled
    call (overflow gives inf or nan, never a warning) that reads X twice, for X w and
    Xᵀ r, instead of four times. ``s``: the weights normalized to mean 1."""
    activation = X @ w
    residual = y - activation
    weighted = residual if s is None else s * residual
    gradient = -(X.T @ weighted) / len(y)
    loss = 0.5 * float(residual @ weighted) / len(y)
    return loss, np.count_nonzero(y * activation <= 0), np.sqrt(gradient @ gradient)


class Adaline(IterativeClassifier):
    """Adaline (ADAptive LINear Element): gradient descent on the squared error.

    Defined in chapter "Adaline and gradient descent".

    Minimizes the mean squared error between the labels y ∈ {-1, +1} and the linear
    activations,

        L(w) = 1/(2M) Σ_i (y_i − w · x̃_i)²,

    by gradient descent over batches of the training set and predicts ``sign(w · x̃)``.

    Parameters
    ----------
    eta : float, default=0.01
        The learning rate η > 0 (the initial step η(0) when ``eta_decay=True``). Because
        the gradient is averaged over the samples of a batch, η does not scale with the
        data size.
    max_iter : int, default=1000
        Maximum number of epochs (passes over the training set).
    batch_size : int or None, default=None
        ``None``: full-batch gradient descent, one step per epoch. ``1``: online
        Widrow–Hoff LMS, one step per sample. ``k``: mini-batches of ``k`` samples
        (``k`` ≥ the number of samples is full-batch gradient descent).
    eta_decay : bool, default=False
        If true, the k-th step (k = 1, 2, ... counted over all epochs) uses the
        decaying learning rate η(k) = η(0)/k with η(0) = ``eta``.
    tol : float, default=1e-6
        Stop when the norm of the full gradient ‖∇L(w)‖ at the end of an epoch is at
        most ``tol`` (the first-order optimality condition of the convex loss).
    shuffle : bool, default=True
        Whether to visit the samples in a new random order every epoch (only matters
        when ``batch_size`` is not ``None``).
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling.
    fit_intercept : bool, default=True
        Learn a bias through the clamped input x̃ = (1, x).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    n_iter_ : int
        Number of epochs run.
    t_ : int
        Number of weight updates (steps) made.
    converged_ : bool
        Whether ‖∇L(w)‖ ≤ ``tol`` was reached within ``max_iter`` epochs.
    history_ : dict of ndarray
        Per epoch: ``"loss"`` (the loss L(w) after the epoch) and ``"errors"`` (the
        number of training samples with y (w · x̃) ≤ 0).

    Notes
    -----
    Many texts sum the squared errors instead, L_sum = M L; a step with learning
    rate η_sum equals our step with η = M η_sum.

    With sample weights s_i the loss is L(w) = 1/(2 Σ s_i) Σ_i s_i (y_i − w · x̃_i)², the
    mean squared error of the data with sample i counted s_i times; ``tol``, ``loss`` and
    the full-batch step use it, so full-batch gradient descent on integer weights takes
    the steps it takes on the repeated rows (equal up to rounding) and a weight 0 drops
    the sample. An on-line or mini-batch step multiplies the term of sample i by s_i,
    w ← w + η s_i (y_i − w · x̃_i) x̃_i for ``batch_size=1``, as
    ``sklearn.linear_model.SGDRegressor`` weighs its steps: an epoch then moves w by as
    much as an epoch over the repeated rows only to first order in η, and weights all 1
    are the unweighted run, bit for bit. With mean gradients one η serves data
    sets of every size. If the loss stops being finite (η too large), the fit stops,
    keeps the last finite weights and warns with a ``ConvergenceWarning``.

    References
    ----------
    B. Widrow and M. E. Hoff, "Adaptive switching circuits", IRE WESCON Convention
    Record 4, 96–104 (1960).

    Examples
    --------
    >>> import numpy as np
    >>> from lincls.adaline import Adaline
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    >>> y = np.array([-1, -1, -1, 1])                      # the AND gate
    >>> clf = Adaline(eta=0.5, max_iter=5000).fit(X, y)
    >>> clf.predict(X).tolist(), clf.converged_
    ([-1, -1, -1, 1], True)
    >>> np.round(clf.weights_, 4).tolist()                 # the least-squares weights
    [-1.5, 1.0, 1.0]
    """

    _parameter_constraints = {
        **IterativeClassifier._parameter_constraints,
        "eta": [POSITIVE],
        "max_iter": [MAX_ITER],
        "batch_size": [MAX_ITER, None],
        "eta_decay": ["boolean"],
        "tol": [NON_NEGATIVE],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, *, eta=0.01, max_iter=1000, batch_size=None, eta_decay=False, tol=1e-6,
                 shuffle=True, random_state=None, fit_intercept=True):
        self.eta = eta
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.eta_decay = eta_decay
        self.tol = tol
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def _learning_rate(self, step):
        """η(k) = η(0)/k with decay (η(0) = ``eta``), else the constant η."""
        return self.eta / step if self.eta_decay else self.eta

    def _init_weights(self, X, y):
        state = {"w": np.zeros(X.shape[1]), "step": 0, "epoch": 0}
        if self._sample_weight is not None:
            state["mean_one"] = self._sample_weight * (len(y) / self._sample_weight.sum())
        return state

    def _callback_weights(self, state):
        return state["w"]

    def _full_batch(self, y):
        return self.batch_size is None or self.batch_size >= len(y)

    def _shuffles(self, y):
        return self.shuffle and not self._full_batch(y)  # a full batch has no order

    def fit(self, X, y, sample_weight=None, *, callback=None):
        """Run gradient descent on samples ``X`` and labels ``y``; returns self.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two distinct labels of any type.
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Non-negative weights s_i of the squared errors; a weight 0 drops the sample
            (see Notes for what a weight equals in each schedule).
        callback : callable or None
            Called as ``callback(epoch, w)`` after each epoch; copy ``w`` to record it.

        Returns
        -------
        self : object
        """
        return self._fit_with_callback(X, y, callback, sample_weight)

    def _epoch(self, state, X, y, order):
        w, step, s = state["w"], state["step"], self._sample_weight
        mean_one = state.get("mean_one")  # s_i / mean(s): L = 1/(2M) Σ (s_i/s̄) r_i²; or None
        state["epoch"] += 1
        if self._full_batch(y):
            step += 1
            w = adaline_step(w, X, y, self._learning_rate(step), mean_one)
        else:
            w, step = lms_epoch(w, X, y, float(self.eta), int(self.batch_size),
                                bool(self.eta_decay), step, self._indices(order), s)
        loss, errors, gradient_norm = _epoch_summary(w, X, y, mean_one)
        if not math.isfinite(loss):  # (an infinite or NaN weight makes the loss so too)
            raise StopFit(
                f"Adaline diverged in epoch {state['epoch']}: the loss is no longer finite. "
                f"The learning rate eta={self.eta!r} is too large for these data; lower it or "
                "standardize the features. The last finite weights are kept.")
        state["w"], state["step"] = w, step
        return {"loss": loss, "errors": errors}, gradient_norm <= self.tol

    def _fit_augmented(self, X, y):
        state = self._run_epochs(self._init_weights(X, y), X, y)
        self.t_ = state["step"]
        self.history_.setdefault("loss", np.zeros(0))
        self.history_.setdefault("errors", np.zeros(0, dtype=int))
        return state["w"]

    def _not_converged_message(self, state, X, y):
        return (f"Adaline did not reach ||grad L|| <= tol={self.tol!r} within max_iter="
                f"{self.max_iter} epochs (eta={self.eta!r}); increase max_iter or adjust eta.")
