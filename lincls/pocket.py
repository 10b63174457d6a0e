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
from sklearn.utils._param_validation import StrOptions

from ._base import NON_NEGATIVE, IterativeClassifier
from ._blas import blas_threads_for
from .perceptron import Perceptron, fast_epoch

__all__ = ["Pocket", "ModifiedPerceptron", "training_errors", "pocket_compete", "best_helper",
           "modified_update"]


def training_errors(X, y, w):
    """E_in as a count: the samples that ``sign(w · x̃)`` classifies wrongly.

    Defined in chapter "Non-separable data". Uses the prediction rule of every classifier
    of the book: activation > 0 predicts +1, anything else -1. ``w`` may be a stack of
    weight vectors, one per row (a recorded run); then one count per row.

    Examples
    --------
    >>> X, y = np.array([[1.0, 2.0], [1.0, -1.0]]), np.array([1.0, 1.0])
    >>> training_errors(X, y, np.array([0.0, 1.0]))
    1
    >>> training_errors(X, y, np.array([[0.0, 1.0], [1.0, 0.0]])).tolist()
    [1, 0]
    """
    w = np.asarray(w, dtype=float)
    if w.ndim == 2:
        return np.count_nonzero((w @ X.T > 0) != (y > 0), axis=1)
    return int(np.count_nonzero((X @ w > 0) != (y > 0)))


def pocket_compete(pocket, w, run, X, y, *, ratchet=True):
    """The retiring weights w (correct ``run`` times in a row) compete for the pocket.

    Defined in chapter "Non-separable data".

    ``pocket`` is a dict with the pocket's weights ``"w"``, training errors ``"errors"``
    and run ``"run"``; it is updated in place when w wins. With the ratchet w must make
    fewer training errors; without it (Gallant's original rule) a longer run suffices.

    Examples
    --------
    >>> X, y = np.array([[1.0, 2.0], [1.0, -1.0]]), np.array([1.0, -1.0])
    >>> pocket = {"w": np.zeros(2), "errors": 2, "run": 0}
    >>> pocket_compete(pocket, np.array([0.0, 1.0]), 3, X, y), pocket["errors"]
    (True, 0)
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

    Defined in chapter "Non-separable data".

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

    _parameter_constraints = {**Perceptron._parameter_constraints, "ratchet": ["boolean"]}
    del _parameter_constraints["class_weight"]

    def __init__(self, *, fit_intercept=True, eta=1.0, max_iter=1000, shuffle=True,
                 random_state=None, ratchet=True):
        self.fit_intercept = fit_intercept
        self.eta = eta
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.ratchet = ratchet

    fit = IterativeClassifier.fit  # the pocket's competition has no weighted form here

    def _init_weights(self, X, y):
        w = np.zeros(X.shape[1])
        pocket = {"w": w.copy(), "errors": training_errors(X, y, w), "run": 0}
        return {"w": w, "pocket": pocket, "visits": 0, "last_update": -1, "epoch": 0}

    def _callback_weights(self, state):
        return state["pocket"]["w"]

    def _epoch(self, state, X, y, order):
        w, X, y = state["w"], X[order], y[order]

        def compete(run):
            pocket_compete(state["pocket"], w, run, X, y, ratchet=self.ratchet)

        def on_mistake(k):  # the weights that made the mistake retire
            visit = state["visits"] + k
            compete(visit - state["last_update"] - 1)
            state["last_update"] = visit

        mistakes = fast_epoch(w, X, y, float(self.eta), on_mistake=on_mistake)
        state["visits"] += len(y)
        state["epoch"] += 1
        # the ratchet compares after every epoch; Gallant's rule lets the last weights
        # compete, with the run they have so far, only at the end
        if self.ratchet or mistakes == 0 or state["epoch"] == self.max_iter:
            compete(state["visits"] - state["last_update"] - 1)
        return {"errors": mistakes, "pocket_errors": state["pocket"]["errors"]}, mistakes == 0

    def _fit_augmented(self, X, y):
        with blas_threads_for(X.size * self.max_iter):
            state = self._run_epochs(self._init_weights(X, y), X, y)
        self.t_ = int(self.history_["errors"].sum())
        self.pocket_errors_ = int(state["pocket"]["errors"])
        return state["pocket"]["w"]

    def _not_converged_message(self, state, X, y):
        return (f"The perceptron did not separate the training data in max_iter="
                f"{self.max_iter} epochs; Pocket returns the best weights seen "
                f"({state['pocket']['errors']} training errors).")


def best_helper(Z, i):
    """The sample that raises the margin of sample i most, for the modified perceptron.

    Defined in chapter "Non-separable data".

    Updating with sample j changes the margin λ_i = z_i · w by η z_i · z_j (z = y x̃), so
    the best helper is j* = argmax_j z_i · z_j (the first one on ties). Sample i itself
    always helps (η |z_i|² > 0), but a longer, similar sample may help more.

    Examples
    --------
    >>> best_helper(np.array([[1.0, 0.0], [2.0, 0.5], [0.0, 1.0]]), 0)
    1
    """
    return int(np.argmax(Z @ Z[i]))


def modified_update(w, Z, i, eta, update="best"):
    """Eq. (modified-update): the modified perceptron's step for problem sample i, in place.

    Defined in chapter "Non-separable data".

    Sample i is a problem when its margin is small, λ_i = z_i · w < c |w|. Then w moves
    by η z_j with the helper j of :func:`best_helper` (``update="best"``, the prose of
    the perceptron-variants report) or j = i (``update="self"``, what its printed code
    does). Returns j.

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [2.0, 0.5], [0.0, 1.0]])
    >>> w = np.zeros(2)
    >>> modified_update(w, Z, 0, 0.5), w.tolist()
    (1, [1.0, 0.25])
    """
    j = best_helper(Z, i) if update == "best" else i
    w += eta * Z[j]
    return j


class ModifiedPerceptron(Perceptron):
    """The "modified perceptron" of the perceptron-variants report: one problem at a time.

    Defined in chapter "Non-separable data".

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

    _parameter_constraints = {
        **Perceptron._parameter_constraints,
        "c": [NON_NEGATIVE],
        "update": [StrOptions({"best", "self"})],
    }

    del _parameter_constraints["class_weight"]

    def __init__(self, *, c=0.01, update="best", fit_intercept=True, eta=1.0, max_iter=1000,
                 shuffle=True, random_state=None):
        self.c = c
        self.update = update
        self.fit_intercept = fit_intercept
        self.eta = eta
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state

    fit = IterativeClassifier.fit  # no weighted form of the modified rule here

    def _callback_weights(self, state):
        return state["w"]

    def _epoch(self, state, Z, y, order):
        w, helpers = state["w"], state["helpers"]
        samples = np.arange(len(y))[order]
        Z_epoch = Z[samples]
        eta, c = float(self.eta), float(self.c)
        problems = start = 0
        while start < len(samples):
            # jump to the next problem: the margins of the rest of the epoch at once
            small = Z_epoch[start:] @ w < c * np.sqrt(w @ w)
            first = int(small.argmax())
            if not small[first]:
                break
            start += first
            helpers.append(modified_update(w, Z, samples[start], eta, self.update))
            problems += 1
            start += 1
        return {"errors": problems}, problems == 0

    def _fit_augmented(self, X, y):
        rng = check_random_state(self.random_state)
        state = {"w": rng.uniform(-1.0, 1.0, X.shape[1]), "helpers": []}
        self._run_epochs(state, y[:, None] * X, y, rng)  # the normalized samples z = y x̃
        self.t_ = int(self.history_["errors"].sum())
        self.history_["helpers"] = np.array(state["helpers"], dtype=int)
        return state["w"]

    def _not_converged_message(self, state, Z, y):
        return (f"ModifiedPerceptron still had {self.history_['errors'][-1]} problem samples "
                f"after max_iter={self.max_iter} epochs.")
