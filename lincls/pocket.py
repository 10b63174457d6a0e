"""Perceptrons for data that are not linearly separable: the pocket algorithm and
the "modified perceptron".

Defined in chapter "Non-separable data" (``book/nonseparable.md``).

On non-separable data the perceptron never stops correcting, and the weights it holds
when it is stopped are as good or as bad as the last few updates made them. The pocket
algorithm {cite}`gallant1990` runs the very same perceptron but keeps the best weights
seen so far "in its pocket". The modified perceptron of the perceptron-variants report
instead changes the update: it corrects one problem at a time with the sample that
helps it most.
"""

import numpy as np
from sklearn.utils import check_random_state

from ._base import _check_flag, _check_interval, _check_positive
from ._blas import blas_threads_for
from .perceptron import Perceptron, fast_epoch

__all__ = ["Pocket", "ModifiedPerceptron", "training_errors", "pocket_compete", "best_helper",
           "modified_update"]


def training_errors(X, y, w):
    """E_in as a count: the samples that ``sign(w · x̃)`` classifies wrongly.

    Uses the prediction rule of every classifier of the book: activation > 0 predicts
    +1, anything else -1.

    Examples
    --------
    >>> training_errors(np.array([[1.0, 2.0], [1.0, -1.0]]), np.array([1.0, 1.0]),
    ...                 np.array([0.0, 1.0]))
    1
    """
    return int(np.count_nonzero((X @ w > 0) != (y > 0)))


def pocket_compete(pocket, w, run, X, y, *, ratchet=True):
    """The retiring weights w (correct ``run`` times in a row) compete for the pocket.

    ``pocket`` is a dict with the pocket's weights ``"w"``, training errors ``"errors"``
    and run ``"run"``; it is updated in place when w wins. With the ratchet w must make
    fewer training errors; without it (Gallant's original rule) a longer run suffices.
    """
    if ratchet:
        errors = training_errors(X, y, w)
        better = errors < pocket["errors"]
    else:
        better = run > pocket["run"]
    if better:
        pocket["w"][:] = w
        pocket["run"] = run
        pocket["errors"] = errors if ratchet else training_errors(X, y, w)
    return better


class Pocket(Perceptron):
    """The pocket algorithm: a perceptron that keeps the best weights it has seen.

    The perceptron runs exactly as :class:`~lincls.perceptron.Perceptron` (same
    parameters, same updates). Each weight vector it visits competes for the pocket when
    it is replaced, i.e. at the next mistake, and once more at the end:

    * ``ratchet=True``: it enters the pocket when it has strictly fewer training errors
      than the pocket. The pocket therefore holds the weights with the fewest training
      errors among all weights visited.
    * ``ratchet=False`` (Gallant's original pocket): it enters the pocket when its run of
      consecutive correct classifications was longer than the pocket's run. A long run
      is only a noisy sign of few errors, so the pocket can get worse.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Learn a bias through the clamped input x̃ = (1, x).
    eta : float, default=1.0
        Learning rate η > 0.
    max_iter : int, default=1000
        Maximum number of epochs.
    shuffle : bool, default=True
        Visit the samples in a new random order in each epoch.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling.
    ratchet : bool, default=True
        Compare training errors (True) or run lengths (False), see above.

    Attributes
    ----------
    coef_, intercept_ : ndarray
        The pocket weights and bias.
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_iter_ : int
        Number of epochs run.
    t_ : int
        Number of perceptron updates.
    converged_ : bool
        Whether the perceptron separated the training data.
    pocket_errors_ : int
        Training errors of the pocket weights.
    history_ : dict
        ``"errors"``: perceptron mistakes in each epoch; ``"pocket_errors"``: training
        errors of the pocket at the end of each epoch.

    References
    ----------
    S. I. Gallant, "Perceptron-based learning algorithms", *IEEE Transactions on Neural
    Networks* 1(2), 179–191, 1990.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("xor")
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")   # XOR is not separable: no convergence
    ...     clf = Pocket(max_iter=20, random_state=0).fit(X, y)
    >>> clf.converged_, clf.pocket_errors_
    (False, 1)
    """

    def __init__(self, *, fit_intercept=True, eta=1.0, max_iter=1000, shuffle=True,
                 random_state=None, ratchet=True):
        super().__init__(fit_intercept=fit_intercept, eta=eta, max_iter=max_iter,
                         shuffle=shuffle, random_state=random_state)
        self.ratchet = ratchet

    def _validate_params(self):
        super()._validate_params()
        _check_flag("ratchet", self.ratchet)

    def _fit_augmented(self, X, y):
        if self._callback is not None:
            raise ValueError(f"{type(self).__name__} does not support a callback yet.")
        n_samples = len(y)
        w = np.zeros(X.shape[1])
        pocket = {"w": w.copy(), "errors": training_errors(X, y, w), "run": 0}
        visits = {"now": 0, "last_update": -1}  # global visit counters

        def compete(run):
            pocket_compete(pocket, w, run, X, y, ratchet=self.ratchet)

        def on_mistake(k):
            visit = visits["now"] + k
            compete(visit - visits["last_update"] - 1)
            visits["last_update"] = visit

        eta = float(self.eta)
        rng = check_random_state(self.random_state)
        errors, pocket_errors = [], []
        self.converged_ = False
        with blas_threads_for(X.size * self.max_iter):
            for _ in range(self.max_iter):
                order = rng.permutation(n_samples) if self.shuffle else slice(None)
                errors.append(fast_epoch(w, X[order], y[order], eta, on_mistake=on_mistake))
                visits["now"] += n_samples
                self.converged_ = errors[-1] == 0
                if self.ratchet or self.converged_:
                    compete(visits["now"] - visits["last_update"] - 1)
                pocket_errors.append(pocket["errors"])
                if self.converged_:
                    break
            if not self.ratchet:  # the last weights compete with the run they have so far
                compete(visits["now"] - visits["last_update"] - 1)
        self.n_iter_ = len(errors)
        self.t_ = int(sum(errors))
        self.pocket_errors_ = int(pocket["errors"])
        self.history_ = {"errors": np.array(errors), "pocket_errors": np.array(pocket_errors)}
        if not self.converged_:
            self._not_converged(
                f"The perceptron did not separate the training data in max_iter="
                f"{self.max_iter} epochs; Pocket returns the best weights seen "
                f"({self.pocket_errors_} training errors).")
        return pocket["w"]


def best_helper(Z, i):
    """The sample that raises the margin of sample i most, for the modified perceptron.

    Updating with sample j changes the margin λ_i = z_i · w by η z_i · z_j (z = y x̃), so
    the best helper is j* = argmax_j z_i · z_j (the first one on ties). Sample i itself
    always helps (η |z_i|² > 0), but a longer, similar sample may help more.
    """
    return int(np.argmax(Z @ Z[i]))


def modified_update(w, Z, i, eta, update="best"):
    """Eq. (modified-update): the modified perceptron's step for problem sample i, in place.

    Sample i is a problem when its margin is small, λ_i = z_i · w < c |w|. Then w moves
    by η z_j with the helper j of :func:`best_helper` (``update="best"``, the prose of
    the perceptron-variants report) or j = i (``update="self"``, what its printed code
    does). Returns j.
    """
    j = best_helper(Z, i) if update == "best" else i
    w += eta * Z[j]
    return j


class ModifiedPerceptron(Perceptron):
    """The "modified perceptron" of the perceptron-variants report: one problem at a time.

    The weights start at random, uniformly in [-1, 1]. Each epoch visits the samples
    (in order or shuffled); a sample with margin y (w · x̃) < c |w| is a "problem", and
    w takes one step η y_j x̃_j with the sample j that raises the problem's margin most
    (:func:`modified_update`). Training stops after an epoch without problems or after
    ``max_iter`` epochs.

    Parameters
    ----------
    c : float, default=0.01
        The margin, relative to |w|, that every sample should reach; c ≥ 0.
    update : {"best", "self"}, default="best"
        ``"best"``: the helper j that raises the problem's margin most (the report's
        prose). ``"self"``: the problem sample itself (the report's printed code, which
        sets ``neededI = i``); this is a perceptron with margin c |w| and random start.
    fit_intercept, eta, max_iter, shuffle, random_state
        As in :class:`~lincls.perceptron.Perceptron`; ``random_state`` also seeds the
        random start.

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_, n_iter_, t_, converged_
        As in :class:`~lincls.perceptron.Perceptron`.
    history_ : dict
        ``"errors"``: number of problems (= updates) in each epoch; ``"helpers"``: the
        index of the sample used by each update.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("or")
    >>> clf = ModifiedPerceptron(random_state=0).fit(X, y)
    >>> clf.converged_, clf.predict(X).tolist()
    (True, [-1, 1, 1, 1])
    """

    def __init__(self, *, c=0.01, update="best", fit_intercept=True, eta=1.0, max_iter=1000,
                 shuffle=True, random_state=None):
        super().__init__(fit_intercept=fit_intercept, eta=eta, max_iter=max_iter,
                         shuffle=shuffle, random_state=random_state)
        self.c = c
        self.update = update

    def _validate_params(self):
        super()._validate_params()
        _check_interval("c", self.c, 0, np.inf, closed=(True, False))
        if self.update not in ("best", "self"):
            raise ValueError(f'update must be "best" or "self"; got {self.update!r}.')
        _check_positive("eta", self.eta)

    def _fit_augmented(self, X, y):
        if self._callback is not None:
            raise ValueError(f"{type(self).__name__} does not support a callback yet.")
        rng = check_random_state(self.random_state)
        w = rng.uniform(-1.0, 1.0, X.shape[1])
        Z = y[:, None] * X
        eta, c = float(self.eta), float(self.c)
        errors, helpers = [], []
        self.converged_ = False
        for _ in range(self.max_iter):
            order = rng.permutation(len(y)) if self.shuffle else np.arange(len(y))
            Z_epoch = Z[order]
            problems = 0
            start = 0
            while start < len(order):
                # jump to the next problem: the margins of the rest of the epoch at once
                small = Z_epoch[start:] @ w < c * np.sqrt(w @ w)
                first = int(small.argmax())
                if not small[first]:
                    break
                start += first
                helpers.append(modified_update(w, Z, order[start], eta, self.update))
                problems += 1
                start += 1
            errors.append(problems)
            if problems == 0:
                self.converged_ = True
                break
        self.n_iter_ = len(errors)
        self.t_ = int(sum(errors))
        self.history_ = {"errors": np.array(errors), "helpers": np.array(helpers, dtype=int)}
        if not self.converged_:
            self._not_converged(
                f"ModifiedPerceptron still had {errors[-1]} problem samples after "
                f"max_iter={self.max_iter} epochs.")
        return w
