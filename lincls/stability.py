"""Learning from a teacher: Hebb, Minover, AdaTron and the perceptron of optimal stability.

Defined in chapters "Learning from a teacher" (``book/teacher_student.md``), "Optimal
stability and Minover" (``book/minover.md``) and "Reproducing the Minover report"
(``book/reproducing_minover_report.md``).

Conventions (those of the statistical-mechanics literature, see :mod:`lincls.theory`):
inputs ξ^μ ∈ R^N are not normalized (components of unit variance), labels S^μ = ±1, and
the *stability* of example μ under weights w is

    κ^μ = S^μ w · ξ^μ / |w|,

a number of order one. The perceptron of optimal stability maximizes κ_min = min_μ κ^μ.

All three learners keep w as a combination of the examples, w = Σ_μ x^μ S^μ ξ^μ (the
"embedding strengths" x^μ ≥ 0), and all of them keep the *fields* E^μ = S^μ w · ξ^μ up to
date with one rank-one change per update, using the Gram matrix C_μν = S^μ S^ν ξ^μ · ξ^ν.
The batched kernels (``*_batch``) run many independent data sets (repetitions of an
experiment with the same P and N) in one call, one data set after the other through a
compiled loop, which is what makes the chapters' sweeps take seconds.
"""

import numpy as np
from numba import njit
from sklearn.utils._param_validation import Interval, Real

from ._base import MAX_ITER, IterativeClassifier, LinearClassifier
from ._blas import blas_threads_for
from .discriminant import max_margin
from .kernels import kernel_perceptron_epoch, known_kernel

__all__ = [
    "Hebb",
    "Minover",
    "AdaTron",
    "hebb_weights",
    "minover_update",
    "minover_step",
    "least_stable",
    "hull_bounds",
    "adatron_step",
    "signed_gram",
    "exact_optimal_stability",
    "minover_batch",
    "adatron_batch",
    "rosenblatt_batch",
    "adatron_sweep",
    "minover_run",
    "weights_from_counts",
]


# ----------------------------------------------------------------------------------------
# The update rules, as the chapters write them
# ----------------------------------------------------------------------------------------
def hebb_weights(X, y):
    """Hebb's rule (eq. ``hebb``): w = (1/N) Σ_μ S^μ ξ^μ.

    Defined in chapter "Learning from a teacher".

    Examples
    --------
    >>> hebb_weights(np.array([[1.0, 2.0], [3.0, -1.0]]), np.array([1.0, -1.0])).tolist()
    [-1.0, 1.5]
    """
    n_features = X.shape[1]
    return (y @ X) / n_features


def minover_update(w, X, y):
    """One Minover step (eq. ``minover``) in its textbook form.

    Defined in chapter "Optimal stability and Minover".

    Find the example of least stability, μ = argmin_ν S^ν w · ξ^ν, and apply a Hebbian
    step to it: w ← w + S^μ ξ^μ / N. (Dividing by |w| does not change the argmin.)

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([1.0, 1.0])
    >>> minover_update(np.array([1.0, 0.0]), X, y).tolist()
    [1.0, 0.5]
    """
    mu = np.argmin(y * (X @ w))
    return w + y[mu] * X[mu] / X.shape[1]


@njit(cache=True)
def minover_step(fields, rows, counts, mu):
    """One Minover step (eq. ``minover``) on the fields E^ν = S^ν w · ξ^ν.

    Defined in chapter "Optimal stability and Minover".

    μ is the least stable example, μ = argmin_ν E^ν. With w = (1/N) Σ_ν c^ν S^ν ξ^ν the
    update w ← w + S^μ ξ^μ / N adds one to the count c^μ and changes every field by
    C_νμ / N: a rank-one change instead of a new X @ w. ``rows`` holds the rows of the
    Gram matrix already divided by N, C / N. The step returns the next least stable
    example (the first one on ties, as ``np.argmin``). Arrays change in place.

    Examples
    --------
    >>> gram = np.array([[2.0, 1.0], [1.0, 2.0]]); fields = np.array([0.5, 0.0])
    >>> counts = np.zeros(2)
    >>> minover_step(fields, gram / 2, counts, int(np.argmin(fields)))
    0
    >>> fields.tolist(), counts.tolist()
    ([1.0, 1.0], [0.0, 1.0])
    """
    counts[mu] += 1  # w ← w + S^μ ξ^μ / N
    fields += rows[mu]  # E^ν ← E^ν + S^ν S^μ ξ^ν · ξ^μ / N, for every ν
    return least_stable(fields)


@njit(cache=True)
def _order_key(bits):
    """The integer that orders as the float whose bits (as int64) are ``bits``: its
    magnitude, negated for a negative sign (so that -0.0 and 0.0 get the same key)."""
    sign = bits >> 63  # -1 for a negative float, else 0
    return ((bits & 0x7FFFFFFFFFFFFFFF) ^ sign) - sign


@njit(cache=True)
def _smallest_key(bits):
    smallest = np.iinfo(np.int64).max
    for nu in range(len(bits)):
        key = _order_key(bits[nu])
        smallest = key if key < smallest else smallest
    return smallest


@njit(cache=True)
def least_stable(fields):
    """The least stable example, argmin_ν E^ν, the first one on ties (as ``np.argmin``).

    Defined in chapter "Optimal stability and Minover". The fields must not be NaN.

    Minover's search for its next example is half of its work. Compiled, ``np.argmin``
    compares one field at a time; here blocks of 64 fields are compared as integers,
    which the compiler does several at a time: the bits of a float, read as an integer,
    order as the float does once negative numbers are flipped (:func:`_order_key`).
    The first field with the smallest key lies in the first block that holds it.

    Examples
    --------
    >>> least_stable(np.array([0.5, -1.0, 2.0, -1.0]))
    1
    """
    bits = fields.view(np.int64)
    best, first = np.iinfo(np.int64).max, 0
    for start in range(0, len(bits), 64):  # the first block that holds the smallest key
        smallest = _smallest_key(bits[start:start + 64])
        if smallest < best:
            best, first = smallest, start
    for nu in range(first, len(bits)):
        if _order_key(bits[nu]) == best:
            return nu
    return 0


def hull_bounds(fields, strengths, sq_norm):
    """The certificate (eq. ``certificate``): lower and upper bounds on κ_opt.

    Defined in chapter "Optimal stability and Minover".

    For w = Σ_μ x^μ S^μ ξ^μ with x^μ ≥ 0, the stability of w is a lower bound,
    κ_min(w) = min_μ E^μ / |w| ≤ κ_opt, and the point w / Σ_μ x^μ lies in the convex hull
    of the S^μ ξ^μ, whose distance from the origin is κ_opt, so |w| / Σ_μ x^μ ≥ κ_opt.

    Examples
    --------
    >>> hull_bounds(np.array([1.0, 1.0]), np.array([0.5, 0.5]), 1.0)
    (1.0, 1.0)
    """
    norm = np.sqrt(sq_norm)
    return float(np.min(fields) / norm), float(norm / np.sum(strengths))


@njit(cache=True)
def adatron_step(strengths, fields, gram, mu, learning_rate=1.0):
    """One AdaTron step (eq. ``adatron``): coordinate ascent on the dual.

    Defined in chapter "Optimal stability and Minover".

    x^μ ← max(0, x^μ + γ (1 − E^μ) / C_μμ), with E^μ = S^μ w · ξ^μ and
    w = Σ_ν x^ν S^ν ξ^ν; γ = 1 maximizes the dual exactly along coordinate μ. The fields
    follow with the rank-one change E ← E + Δx^μ C_·μ. Arrays are updated in place;
    returns Δx^μ.

    Examples
    --------
    >>> gram = np.array([[2.0, 1.0], [1.0, 2.0]]); strengths, fields = np.zeros(2), np.zeros(2)
    >>> adatron_step(strengths, fields, gram, 0), strengths.tolist(), fields.tolist()
    (0.5, [0.5, 0.0], [1.0, 0.5])
    """
    delta = max(-strengths[mu], learning_rate * (1.0 - fields[mu]) / gram[mu, mu])
    if delta != 0.0:
        strengths[mu] += delta
        fields += delta * gram[mu]
    return delta


@njit(cache=True)
def adatron_sweep(strengths, fields, gram, learning_rate=1.0):
    """One AdaTron sweep: :func:`adatron_step` on each example in order, in place.

    Defined in chapter "Optimal stability and Minover". Examples with x^μ = 0 and E^μ > 1 at the
    start of the sweep are skipped (their step would be zero). Returns the number of
    steps taken.

    Examples
    --------
    >>> gram = np.array([[2.0, 1.0], [1.0, 2.0]]); strengths, fields = np.zeros(2), np.zeros(2)
    >>> adatron_sweep(strengths, fields, gram), strengths.tolist(), fields.tolist()
    (2, [0.5, 0.25], [1.25, 1.0])
    """
    todo = (strengths > 0) | (fields < 1.0)
    for mu in range(len(fields)):
        if todo[mu]:
            adatron_step(strengths, fields, gram, mu, learning_rate)
    return int(np.count_nonzero(todo))


@njit(cache=True)
def minover_run(fields, rows, counts, n_features, sq_norm, t, stop, tol):
    """Minover from update t to update ``stop`` at most: :func:`minover_step` on the least
    stable example, until the certificate of :func:`hull_bounds` closes to a relative gap
    ``tol``. Arrays change in place.

    Defined in chapter "Optimal stability and Minover". ``rows`` is C / N, the signed Gram
    matrix divided by N, as :func:`minover_step` takes it; ``sq_norm`` is |w|² after t
    updates. Returns ``(t, sq_norm, lower, upper, done)`` with the bounds on κ_opt after
    t updates.

    Examples
    --------
    >>> gram = np.array([[2.0, 1.0], [1.0, 2.0]]); fields, counts = np.zeros(2), np.zeros(2)
    >>> minover_run(fields, gram / 2, counts, 2, 0.0, 0, 10, 1e-3)[0], counts.tolist()
    (2, [1.0, 1.0])
    """
    lower, upper = -np.inf, np.inf
    mu = least_stable(fields)  # the least stable example
    while True:
        if t > 0:  # the certificate of the current w, after t updates
            norm = np.sqrt(sq_norm) if sq_norm > 0 else np.inf  # 0 only for zero examples
            lower, upper = fields[mu] / norm, norm * n_features / t
            if lower > 0 and lower >= (1.0 - tol) * upper:
                return t, sq_norm, lower, upper, True
        if t == stop:
            return t, sq_norm, lower, upper, False
        # |w + S^μ ξ^μ / N|² = |w|² + 2 E^μ / N + C_μμ / N²
        sq_norm += (2.0 * fields[mu] + rows[mu, mu]) / n_features
        mu = minover_step(fields, rows, counts, mu)
        t += 1


def weights_from_counts(counts, X, y, n_features):
    """w = (1/N) Σ_μ c^μ S^μ ξ^μ from the counts of Minover or the Rosenblatt perceptron.

    Defined in chapter "Reproducing and extending the Minover report". ``counts``, ``X``
    and ``y`` may be batches (leading axis: the data set), as the ``*_batch`` kernels
    return them.

    Examples
    --------
    >>> weights_from_counts(np.array([2.0, 1.0]), np.eye(2), np.array([1.0, -1.0]), 2)
    array([ 1. , -0.5])
    """
    counts, X, y = (np.asarray(a, dtype=float) for a in (counts, X, y))
    return np.einsum("...p,...pn->...n", counts * y, X) / n_features


def exact_optimal_stability(X, y, *, fit_intercept=False):
    """κ_opt and its weights exactly: :func:`lincls.discriminant.max_margin` in Part III's terms.

    Defined in chapter "Optimal stability and Minover".

    The perceptron of optimal stability is u minimizing |u| subject to S^μ u · ξ^μ ≥ 1;
    then κ_opt = 1/|u|. This least-distance problem is the maximal-margin problem of
    chapter "Convergence of the perceptron", solved exactly (NNLS, Lawson & Hanson 1974,
    ch. 23) by :func:`lincls.discriminant.max_margin`; this function only changes the
    conventions: no bias by default, the weights scaled so that min_μ S^μ u · ξ^μ = 1,
    and ``-inf`` instead of an error on non-separable data. Used by the tests and the
    chapters as the reference optimum.

    Returns
    -------
    kappa : float
        κ_opt (O(1) convention); ``-inf`` if the data are not separable through the origin.
    w : ndarray of shape (n_features,) or (n_features + 1,)
        The optimal weights u (bias first with ``fit_intercept=True``), or zeros.

    Examples
    --------
    >>> X = np.array([[1.0, 1.0], [1.0, -1.0]]); y = np.array([1, 1])
    >>> kappa, w = exact_optimal_stability(X, y)
    >>> round(kappa, 6), np.round(w, 6).tolist() == [1.0, 0.0]
    (1.0, True)
    """
    X = np.asarray(X, dtype=float)
    try:
        w, kappa = max_margin(X, y, fit_intercept=fit_intercept)
    except ValueError:  # the origin lies in the hull: no separating direction
        return -np.inf, np.zeros(X.shape[1] + bool(fit_intercept))
    return kappa, w / kappa


# ----------------------------------------------------------------------------------------
# Batched kernels: many data sets of the same shape in one call, one after the other
# ----------------------------------------------------------------------------------------
def signed_gram(X, y):
    """C_μν = S^μ S^ν ξ^μ · ξ^ν for one data set (2-D ``X``) or a batch (3-D ``X``).

    Defined in chapter "Reproducing and extending the Minover report".

    The only matrix product of the stability learners: it runs on one BLAS thread
    (:mod:`lincls._blas`), since the matrices are small. The kernels that follow
    (``minover_batch``, ``adatron_batch``, ``rosenblatt_batch``) only add rows of C.

    Examples
    --------
    >>> signed_gram(np.array([[1.0, 2.0], [3.0, -1.0]]), np.array([1, -1]))
    array([[ 5., -1.],
           [-1., 10.]])
    """
    Z = np.asarray(y, dtype=float)[..., None] * np.asarray(X, dtype=float)
    with blas_threads_for(Z.size * Z.shape[-2]):
        return Z @ np.swapaxes(Z, -1, -2)


def _history_steps(max_iter, n_points=60):
    return set(np.unique(np.geomspace(1, max_iter, n_points).astype(int)).tolist())


def minover_batch(gram, n_features, *, max_iter, tol=None, record=False):
    """Minover on a batch of data sets, each from w = 0.

    Defined in chapter "Reproducing and extending the Minover report".

    The data sets are run one after the other, each by the compiled single-set loop
    :func:`minover_run`.

    Parameters
    ----------
    gram : ndarray of shape (B, P, P)
        Signed Gram matrices C_μν = S^μ S^ν ξ^μ · ξ^ν, see :func:`signed_gram`.
    n_features : int
        N, the step size of the Hebbian update is 1/N.
    max_iter : int
        Largest number of updates t_max per data set.
    tol : float or None
        Stop a data set once its certificate gives lower ≥ (1 − tol) upper; ``None``
        runs exactly ``max_iter`` updates (the Minover report's fixed t_max).
    record : bool or sequence of int
        Keep the bounds for plots: ``True`` at about 60 log-spaced numbers of updates, a
        sequence at those numbers of updates (each between 1 and ``max_iter``), e.g.
        ``range(1, max_iter + 1)`` after every update.

    Returns
    -------
    dict with ``counts`` (B, P), ``fields`` (B, P), ``sq_norm`` (B,), ``n_iter`` (B,),
    ``lower``/``upper`` (B,) bounds on κ_opt, and ``history`` (t, lower, upper) if asked.

    Examples
    --------
    >>> from lincls.datasets import teacher_student
    >>> X, y, _ = teacher_student(40, 10, random_state=0)
    >>> gram = signed_gram(np.stack([X, X[::-1]]), np.stack([y, y[::-1]]))
    >>> res = minover_batch(gram, 10, max_iter=100_000, tol=1e-2)
    >>> res["converged"].tolist(), bool(np.all(res["lower"] >= 0.99 * res["upper"]))
    ([True, True], True)

    The certificate after each of the first five updates of the first data set (chapter
    "Reproducing and extending the Minover report" plots it after every update):

    >>> steps, lower, upper = minover_batch(gram[:1], 10, max_iter=5, record=range(1, 6))["history"]
    >>> steps.tolist(), bool(np.all(lower[:, 0] <= upper[:, 0]))
    ([1, 2, 3, 4, 5], True)
    """
    gram = np.asarray(gram, dtype=float)
    B, P, _ = gram.shape
    keep = record is not None and record is not False  # a history to return
    if not keep or record is True:
        stops = sorted(_history_steps(max_iter) | {max_iter}) if keep else [max_iter]
    else:
        stops = sorted({int(t) for t in record} | {max_iter})
        if stops[0] < 1 or stops[-1] > max_iter:
            raise ValueError(f"record must hold numbers of updates from 1 to max_iter={max_iter}; "
                             f"got {stops[0]} to {stops[-1]}.")
    tol = -np.inf if tol is None else float(tol)  # -inf: the certificate never closes
    fields, counts = np.zeros((B, P)), np.zeros((B, P))
    sq_norm, n_iter = np.zeros(B), np.zeros(B, dtype=int)
    lower, upper = np.zeros((len(stops), B)), np.zeros((len(stops), B))
    converged = np.zeros(B, dtype=bool)
    for b in range(B):  # the compiled single-set loop, one data set after the other
        t, sq, rows = 0, 0.0, gram[b] / n_features
        for k, stop in enumerate(stops):
            if not converged[b]:
                t, sq, low, up, converged[b] = minover_run(fields[b], rows, counts[b],
                                                           n_features, sq, t, stop, tol)
            lower[k, b], upper[k, b] = low, up  # a stopped data set keeps its bounds
        sq_norm[b], n_iter[b] = sq, t
    out = dict(counts=counts, fields=fields, sq_norm=sq_norm, n_iter=n_iter, lower=lower[-1],
               upper=upper[-1], converged=converged)
    if keep:
        out["history"] = (np.array(stops), lower, upper)
    return out


def adatron_batch(gram, *, max_iter, tol, learning_rate=1.0, record=False):
    """AdaTron (sequential coordinate ascent on the dual) on a batch of data sets.

    Defined in chapter "Reproducing and extending the Minover report".

    One iteration is a sweep over the examples. Examples with x^μ = 0 and E^μ > 1 at the
    start of a sweep are skipped in it (their step would be zero); every sweep ends with
    the certificate of :func:`hull_bounds`, and a data set stops once
    lower ≥ (1 − tol) upper.

    Returns
    -------
    dict with ``strengths`` (B, P), ``fields`` (B, P), ``n_iter`` (B,), ``lower``,
    ``upper``, ``converged`` (B,), and ``history`` (sweep, lower, upper) if asked.

    Examples
    --------
    >>> from lincls.datasets import teacher_student
    >>> X, y, _ = teacher_student(40, 10, random_state=0)
    >>> res = adatron_batch(signed_gram(X[None], y[None]), max_iter=1000, tol=1e-2)
    >>> res["converged"].tolist(), bool(res["lower"][0] >= 0.99 * res["upper"][0])
    ([True], True)
    """
    gram = np.asarray(gram, dtype=float)
    B, P, _ = gram.shape
    strengths, fields = np.zeros((B, P)), np.zeros((B, P))
    n_iter = np.zeros(B, dtype=int)
    lower, upper = np.full((max_iter, B), np.nan), np.full((max_iter, B), np.nan)
    for b in range(B):  # the estimator's sweep, one data set after the other
        g = gram[b].copy()
        g[np.diag_indices(P)] = np.where(np.diag(g) <= 0, 1.0, np.diag(g))  # zero examples
        for sweep in range(max_iter):
            adatron_sweep(strengths[b], fields[b], g, learning_rate)
            sq_norm = float(strengths[b] @ fields[b])
            low, up = (hull_bounds(fields[b], strengths[b], sq_norm) if sq_norm > 0
                       else (-np.inf, np.inf))
            lower[sweep:, b], upper[sweep:, b] = low, up  # a stopped data set keeps its bounds
            n_iter[b] = sweep + 1
            if low > 0 and low >= (1.0 - tol) * up:
                break
    sweeps = int(n_iter.max()) if B else 0
    lower, upper = lower[:sweeps], upper[:sweeps]
    out = dict(strengths=strengths, fields=fields, n_iter=n_iter,
               lower=lower[-1] if sweeps else np.zeros(B),
               upper=upper[-1] if sweeps else np.zeros(B),
               converged=(lower[-1] > 0) & (lower[-1] >= (1.0 - tol) * upper[-1]))
    if record:
        out["history"] = (np.arange(1, sweeps + 1), lower, upper)
    return out


def rosenblatt_batch(gram, n_features, *, max_epochs, order=None):
    """The plain Rosenblatt perceptron (from w = 0, step 1/N) on a batch of data sets.

    Defined in chapter "Reproducing and extending the Minover report".

    This is only the batched *simulation* the teacher–student experiments need; the
    single-run reference is :class:`lincls.perceptron.Perceptron` (chapter "The
    perceptron"). The rule is the same, but this kernel works in the dual: it keeps the
    counts and the fields E^μ, updated by rows of the Gram matrix, and never forms w.
    For one data set it makes the same mistakes as
    ``Perceptron(fit_intercept=False, shuffle=False)`` on ``X[order]``, whose weights
    (η = 1) are Σ_μ counts^μ S^μ ξ^μ, N times the w here: η only scales w (see tests).
    Examples are presented cyclically in ``order`` (default 0, 1, ..., P−1); an example
    with field E^μ ≤ 0 triggers w ← w + S^μ ξ^μ / N. Epoch ``e`` ends a data set that
    made no mistake.

    Returns
    -------
    dict with ``counts`` (B, P) (so w = Σ_μ counts^μ S^μ ξ^μ / N), ``fields``,
    ``n_epochs`` (B,) and ``converged`` (B,).

    Examples
    --------
    >>> from lincls.datasets import teacher_student
    >>> X, y, _ = teacher_student(40, 10, random_state=0)
    >>> res = rosenblatt_batch(signed_gram(X[None], y[None]), 10, max_epochs=100)
    >>> res["converged"].tolist(), bool(np.all(res["fields"] > 0))
    ([True], True)
    """
    gram = np.asarray(gram, dtype=float)
    B, P, _ = gram.shape
    order = np.arange(P) if order is None else np.asarray(order)
    counts, fields = np.zeros((B, P)), np.zeros((B, P))
    n_epochs = np.zeros(B, dtype=int)
    converged = np.zeros(B, dtype=bool)
    signs = np.ones(P)  # the signed Gram matrix holds the labels already
    for b in range(B):  # the data sets make their mistakes at different times: one by one
        # the dual perceptron of chapter "Kernels" on the kernel C / N, all rows known
        K = known_kernel(gram[b] / n_features)
        for epoch in range(1, max_epochs + 1):
            n_epochs[b] = epoch
            if kernel_perceptron_epoch(counts[b], fields[b], signs, order, K) == 0:
                converged[b] = True
                break
    return dict(counts=counts, fields=fields, n_epochs=n_epochs, converged=converged)


# ----------------------------------------------------------------------------------------
# Estimators
# ----------------------------------------------------------------------------------------
_STABILITY_CONSTRAINTS = {
    **IterativeClassifier._parameter_constraints,
    "max_iter": [MAX_ITER],
    "tol": [Interval(Real, 0, 1, closed="neither")],
}


class Hebb(LinearClassifier):
    """The Hebbian perceptron: w = (1/N) Σ_μ S^μ ξ^μ, learnt in one pass.

    Defined in chapter "Learning from a teacher".

    Parameters
    ----------
    fit_intercept : bool, default=False
        If True, learn a bias by the clamped input x̃ = (1, x); the default is the
        homogeneous perceptron of the teacher–student setting.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    n_iter_ : int
        Always 1: Hebb's rule sees every example once.

    Notes
    -----
    For a teacher with isotropic inputs and P = αN examples, the overlap with the teacher
    is R = √(2α / (2α + π)) as N → ∞ (:func:`lincls.theory.hebb_error`).

    References
    ----------
    Vallet, F. (1989). The Hebb rule for learning linearly separable Boolean functions:
    learning and generalization. Europhysics Letters 8(8), 747–751.

    Examples
    --------
    >>> from lincls.datasets import teacher_student
    >>> from lincls.metrics import generalization_error
    >>> X, y, teacher = teacher_student(2000, 100, random_state=0)
    >>> clf = Hebb().fit(X, y)
    >>> round(generalization_error(clf.coef_, teacher), 2)  # theory: hebb_error(20) = 0.087
    0.08
    """

    def __init__(self, *, fit_intercept=False):
        self.fit_intercept = fit_intercept

    def _fit_augmented(self, X, y):
        self.n_iter_ = 1
        return hebb_weights(X, y)


class Minover(IterativeClassifier):
    """Minover (Krauth & Mézard 1987): the perceptron of optimal stability.

    Defined in chapter "Optimal stability and Minover".

    Starting from w = 0, repeatedly find the least stable example and apply a Hebbian
    step to it, w ← w + S^μ ξ^μ / N. Each step also yields a *certificate*: the current
    stability is a lower bound and |w| N / t (t updates so far) an upper bound on the
    optimal stability κ_opt; the fit stops when lower ≥ (1 − tol) · upper.

    Parameters
    ----------
    fit_intercept : bool, default=False
        If True, work with the clamped input x̃ = (1, x) (the stabilities and the bounds
        then refer to the augmented vector (b, w)).
    max_iter : int, default=100_000
        Largest number of updates.
    tol : float in (0, 1), default=1e-3
        Relative gap of the certificate at which to stop.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    stability_ : float
        κ_min = min_μ S^μ w · ξ^μ / |w| of the final weights (a lower bound on κ_opt).
    stability_bound_ : float
        The certificate's upper bound |w| N / t on κ_opt.
    n_iter_ : int
        Number of updates t.
    converged_ : bool
        Whether the certificate closed to ``tol`` within ``max_iter`` updates.
    embedding_strengths_ : ndarray of shape (n_samples,)
        How often each example was used: w = Σ_μ x^μ S^μ ξ^μ with x^μ = count / N.
    history_ : dict
        ``step``, ``lower`` and ``upper``: the bounds at about 60 log-spaced steps;
        ``updates`` equals ``step`` (one rank-one change of the fields per update).

    Notes
    -----
    On data that are not linearly separable through the origin (or with the clamped
    input), κ_opt ≤ 0, the certificate never closes, and the fit stops at ``max_iter``
    with a ``ConvergenceWarning``.

    References
    ----------
    Krauth, W. & Mézard, M. (1987). Learning algorithms with optimal stability in neural
    networks. J. Phys. A 20, L745–L752.

    Examples
    --------
    >>> from lincls.datasets import teacher_student
    >>> X, y, teacher = teacher_student(100, 20, random_state=0)
    >>> clf = Minover(tol=1e-2).fit(X, y)
    >>> clf.converged_, clf.score(X, y)
    (True, 1.0)
    >>> bool(clf.stability_ <= clf.stability_bound_ <= clf.stability_ / (1 - 1e-2))
    True
    """

    _parameter_constraints = _STABILITY_CONSTRAINTS

    def __init__(self, *, fit_intercept=False, max_iter=100_000, tol=1e-3):
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def _fit_augmented(self, X, y):
        n_samples, n_features = X.shape
        # an "epoch" runs to the next of about 60 log-spaced steps at which history_ records
        self._stops = sorted(_history_steps(self.max_iter) | {self.max_iter})
        state = {"fields": np.zeros(n_samples), "counts": np.zeros(n_samples), "t": 0,
                 "sq_norm": 0.0, "rows": signed_gram(X, y) / n_features, "X": X, "y": y}
        try:
            self._run_epochs(state, X, y)
        finally:
            del self._stops
        self.n_iter_ = state["t"]
        self.stability_ = float(self.history_["lower"][-1])
        self.stability_bound_ = float(self.history_["upper"][-1])
        self.embedding_strengths_ = state["counts"] / n_features
        return self._callback_weights(state)

    def _max_epochs(self):
        return len(self._stops)

    def _callback_weights(self, state):
        X, y = state["X"], state["y"]
        return (state["counts"] * y) @ X / X.shape[1]

    def _epoch(self, state, X, y, order):
        stop = next(s for s in self._stops if s > state["t"])
        state["t"], state["sq_norm"], lower, upper, done = minover_run(
            state["fields"], state["rows"], state["counts"], X.shape[1], state["sq_norm"],
            state["t"], stop, float(self.tol))
        return {"step": state["t"], "lower": lower, "upper": upper, "updates": state["t"]}, done

    def _not_converged_message(self, state, X, y):
        return (f"Minover stopped after max_iter={self.max_iter} updates with stability "
                f"{self.history_['lower'][-1]:.4g} and bound {self.history_['upper'][-1]:.4g}; "
                "the data may not be linearly separable. Increase max_iter or tol.")


class AdaTron(IterativeClassifier):
    """AdaTron (Anlauf & Biehl 1989): the perceptron of optimal stability by dual ascent.

    Defined in chapter "Optimal stability and Minover".

    The optimal-stability perceptron solves: minimize |w|² subject to S^μ w · ξ^μ ≥ 1.
    Its dual maximizes Σ x^μ − ½ |Σ x^μ S^μ ξ^μ|² over x ≥ 0, and AdaTron does this one
    coordinate at a time: x^μ ← max(0, x^μ + γ (1 − E^μ) / C_μμ). After each sweep the
    same certificate as Minover's brackets κ_opt (:func:`hull_bounds`).

    Parameters
    ----------
    fit_intercept : bool, default=False
        If True, work with the clamped input x̃ = (1, x).
    learning_rate : float in (0, 2), default=1.0
        γ; 1 is exact coordinate ascent.
    max_iter : int, default=1000
        Largest number of sweeps through the examples.
    tol : float in (0, 1), default=1e-3
        Relative gap of the certificate at which to stop.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    stability_ : float
        κ_min of the final weights (a lower bound on κ_opt).
    stability_bound_ : float
        The certificate's upper bound on κ_opt.
    n_iter_ : int
        Number of sweeps.
    converged_ : bool
    embedding_strengths_ : ndarray of shape (n_samples,)
        The dual variables x^μ; the examples with x^μ > 0 are the support vectors.
    history_ : dict
        ``step`` (sweep), ``lower`` and ``upper`` after each sweep, and ``updates``: the
        number of coordinate steps (each a rank-one change of the fields) so far.

    References
    ----------
    Anlauf, J. K. & Biehl, M. (1989). The AdaTron: an adaptive perceptron algorithm.
    Europhysics Letters 10(7), 687–692.

    Examples
    --------
    >>> from lincls.datasets import teacher_student
    >>> X, y, teacher = teacher_student(100, 20, random_state=0)
    >>> clf = AdaTron().fit(X, y)
    >>> clf.converged_, clf.score(X, y)
    (True, 1.0)
    >>> bool(abs(clf.stability_ - Minover(tol=1e-2).fit(X, y).stability_) < 1e-2)
    True
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A hard-margin method: on data not separable (through the origin, by default)
        # the dual grows without bound and the weights after max_iter sweeps mean little.
        tags.classifier_tags.poor_score = True
        return tags

    _parameter_constraints = {**_STABILITY_CONSTRAINTS,
                              "learning_rate": [Interval(Real, 0, 2, closed="neither")]}

    def __init__(self, *, fit_intercept=False, learning_rate=1.0, max_iter=1000, tol=1e-3):
        self.fit_intercept = fit_intercept
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol

    def _fit_augmented(self, X, y):
        gram = signed_gram(X, y)
        if np.any(np.diag(gram) <= 0):  # an all-zero example: no w can stabilize it
            gram = gram + np.diag(np.where(np.diag(gram) <= 0, 1.0, 0.0))
        state = {"strengths": np.zeros(len(y)), "fields": np.zeros(len(y)), "gram": gram,
                 "sweep": 0, "steps": 0, "X": X, "y": y}
        self._run_epochs(state, X, y)
        self.stability_ = float(self.history_["lower"][-1])
        self.stability_bound_ = float(self.history_["upper"][-1])
        self.embedding_strengths_ = state["strengths"]
        return self._callback_weights(state)

    def _callback_weights(self, state):
        w = (state["strengths"] * state["y"]) @ state["X"]
        return w if np.any(w) else np.zeros(len(w))  # degenerate data: any direction is as bad

    def _epoch(self, state, X, y, order):
        strengths, fields = state["strengths"], state["fields"]
        state["sweep"] += 1
        state["steps"] += adatron_sweep(strengths, fields, state["gram"],
                                        float(self.learning_rate))
        sq_norm = float(strengths @ fields)
        lower, upper = (hull_bounds(fields, strengths, sq_norm) if sq_norm > 0
                        else (-np.inf, np.inf))
        return ({"step": state["sweep"], "lower": lower, "upper": upper,
                 "updates": state["steps"]}, lower > 0 and lower >= (1.0 - self.tol) * upper)

    def _not_converged_message(self, state, X, y):
        return (f"AdaTron stopped after max_iter={self.max_iter} sweeps with stability "
                f"{self.history_['lower'][-1]:.4g}; the data may not be linearly separable. "
                "Increase max_iter or tol.")
