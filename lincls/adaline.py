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
def mse_loss(w, X, y):
    """The mean squared error loss L(w) = 1/(2M) Σ (y − w · x)², eq. (adaline-loss).

    Defined in chapter "Adaline and gradient descent".

    Examples
    --------
    >>> mse_loss(np.zeros(2), np.eye(2), np.array([1.0, -1.0]))
    0.5
    """
    residual = y - X @ w
    return 0.5 * float(residual @ residual) / len(y)


@njit(cache=True)
def mse_gradient(w, X, y):
    """The gradient ∇L(w) = −1/M Σ (y − w · x) x of the mean squared error, eq. (adaline-gradient).

    Defined in chapter "Adaline and gradient descent".

    Examples
    --------
    >>> mse_gradient(np.zeros(2), np.eye(2), np.array([1.0, -1.0]))
    array([-0.5,  0.5])
    """
    residual = y - X @ w
    return -(X.T @ residual) / len(y)


@njit(cache=True)
def adaline_step(w, X, y, eta):
    """One Adaline step on a batch (X, y): w ← w − η ∇L(w), eq. (adaline-step).

    Defined in chapter "Adaline and gradient descent".

    With a single sample this is the Widrow–Hoff rule w ← w + η (y − w · x) x.

    Examples
    --------
    >>> adaline_step(np.zeros(2), np.array([[1.0, 2.0]]), np.array([1.0]), eta=0.1)
    array([0.1, 0.2])
    """
    return w - eta * mse_gradient(w, X, y)


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
def lms_epoch(w, X, y, eta, batch_size, eta_decay=False, step=0, order=None):
    """One epoch of on-line or mini-batch Adaline over the samples in order.

    Defined in chapter "Adaline and gradient descent". With ``batch_size=1`` each step
    is :func:`widrow_hoff_update` (on-line LMS), otherwise :func:`adaline_step` on the
    next ``batch_size`` samples. ``step`` counts the steps taken before; with
    ``eta_decay`` step k uses the rate η/k. ``order``, if given, is a permutation: the
    epoch visits ``X[order[0]], X[order[1]], …`` (a mini-batch gathers its rows), never
    copying X. Returns new weights (w is not changed) and the step count.

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
            widrow_hoff_update(w, X[i], y[i], rate)
        elif order is None:
            w = adaline_step(w, X[start:start + batch_size], y[start:start + batch_size], rate)
        else:
            batch = order[start:start + batch_size]  # copies the rows of this batch only
            w = adaline_step(w, X[batch], y[batch], rate)
    return w, step


@njit(cache=True)
def _epoch_summary(w, X, y):
    """What an epoch records: L(w) by :func:`mse_loss`, the mistakes (samples with
    y (w · x̃) ≤ 0) and ‖∇L(w)‖ by :func:`mse_gradient`, in one compiled call (overflow
    gives inf or nan, never a warning)."""
    gradient = mse_gradient(w, X, y)
    errors = np.count_nonzero(y * (X @ w) <= 0)
    return mse_loss(w, X, y), errors, np.sqrt(gradient @ gradient)


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
    rate η_sum equals our step with η = M η_sum. With mean gradients one η serves data
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
        return {"w": np.zeros(X.shape[1]), "step": 0, "epoch": 0}

    def _callback_weights(self, state):
        return state["w"]

    def _full_batch(self, y):
        return self.batch_size is None or self.batch_size >= len(y)

    def _shuffles(self, y):
        return self.shuffle and not self._full_batch(y)  # a full batch has no order

    def _epoch(self, state, X, y, order):
        w, step = state["w"], state["step"]
        state["epoch"] += 1
        if self._full_batch(y):
            step += 1
            w = adaline_step(w, X, y, self._learning_rate(step))
        else:
            w, step = lms_epoch(w, X, y, float(self.eta), int(self.batch_size),
                                bool(self.eta_decay), step, self._indices(order))
        loss, errors, gradient_norm = _epoch_summary(w, X, y)
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
