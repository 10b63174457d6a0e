"""Relaxation procedures with margin, and the fractional-correction rule.

Defined in chapter "Relaxation procedures" (``book/relaxation.md``); the criterion
functions behind them are the subject of chapter "Criterion functions"
(``book/criterion_functions.md``). The source is Duda, Hart & Stork, *Pattern
Classification*, Sec. 5.6 (Algorithms 8 and 9).

Notation. The book works with *normalized* samples z = y x̃ (the augmented input x̃,
multiplied by its label y ∈ {-1, +1}), so that every sample wants w · z > 0. A margin
b > 0 asks for more: w · z ≥ b. The relaxation criterion

    J_r(w) = ½ Σ_{z: w·z ≤ b} (w · z − b)² / ‖z‖²

is zero exactly on the solution region {w : w · z ≥ b for all z}.
"""

from collections import namedtuple

import numpy as np
from numba import njit
from sklearn.utils._param_validation import Interval, Real, StrOptions, validate_params
from sklearn.utils.validation import check_X_y

from ._base import (
    MAX_ITER,
    POSITIVE,
    IterativeClassifier,
    StopFit,
    augment,
    labels_to_signs,
    warn_at_caller,
)

#: η of relaxation and λ of fractional correction: the open interval (0, 2).
RELAXATION_FACTOR = Interval(Real, 0, 2, closed="neither")

__all__ = [
    "Relaxation",
    "perceptron_criterion",
    "squared_criterion",
    "squared_criterion_gradient",
    "relaxation_criterion",
    "relaxation_correction",
    "relaxation_epoch",
    "batch_relaxation_step",
    "batch_stability_bound",
    "fractional_correction",
    "CorrectionResult",
]

#: Relative tolerance of the stopping test w · z ≥ (1 − RTOL) b. The convergence theorem
#: allows w to *approach* the boundary of the solution region without reaching it (an
#: under-relaxed correction always stops short of the plane w · z = b), so an exact
#: test could run forever; this tolerance lets such a run stop.
RTOL = 1e-9

#: Batch relaxation is declared divergent when J_r grows beyond this multiple of its
#: value at the start, J_r(0) (or becomes infinite or NaN).
DIVERGENCE_FACTOR = 1e8


def _activations(w, Z):
    """w · z for every sample; w may be one vector (d,) or a stack of vectors (..., d)."""
    return np.asarray(w, dtype=float) @ np.asarray(Z, dtype=float).T


def perceptron_criterion(w, Z):
    """The perceptron criterion J_p(w) = Σ_{w·z ≤ 0} (−w · z) (eq. ``perceptron-criterion``).

    Defined in chapter "Criterion functions".

    Parameters
    ----------
    w : ndarray of shape (n_features,) or (..., n_features)
        One weight vector, or a stack of them (e.g. a grid over weight space).
    Z : ndarray of shape (n_samples, n_features)
        Normalized samples z = y x̃.

    Returns
    -------
    float, or ndarray of shape w.shape[:-1]

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> float(perceptron_criterion(np.array([-1.0, 1.0]), Z))  # only z_1 is misclassified
    1.0
    """
    return np.sum(np.maximum(-_activations(w, Z), 0.0), axis=-1)


def squared_criterion(w, Z):
    """The squared criterion J_q(w) = Σ_{w·z ≤ 0} (w · z)² (eq. ``squared-criterion``).

    Defined in chapter "Criterion functions".

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> float(squared_criterion(np.array([-1.0, -1.0]), Z))  # 1 + 4
    5.0
    """
    return np.sum(np.minimum(_activations(w, Z), 0.0) ** 2, axis=-1)


def squared_criterion_gradient(w, Z):
    """The gradient ∇J_q(w) = 2 Σ_{w·z ≤ 0} (w · z) z of the squared criterion.

    Defined in chapter "Criterion functions", eq. (squared-criterion).

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> squared_criterion_gradient(np.array([-1.0, 1.0]), Z)  # only z_1 counts
    array([-2.,  0.])
    """
    return 2 * np.minimum(np.asarray(Z, dtype=float) @ w, 0.0) @ Z


def relaxation_criterion(w, Z, b):
    """The relaxation criterion J_r(w) = ½ Σ_{w·z ≤ b} (w·z − b)² / ‖z‖² (``relaxation-criterion``).

    Defined in chapter "Criterion functions".

    Parameters
    ----------
    w : ndarray of shape (n_features,) or (..., n_features)
        One weight vector (augmented when the samples are), or a stack of them.
    Z : ndarray of shape (n_samples, n_features)
        Normalized samples z = y x̃.
    b : float
        The margin.

    Returns
    -------
    float, or ndarray of shape w.shape[:-1]

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> float(relaxation_criterion(np.zeros(2), Z, 1.0))  # ½ (1/1 + 1/4)
    0.625
    """
    Z = np.asarray(Z, dtype=float)
    slack = np.minimum(_activations(w, Z) - b, 0.0)
    J = 0.5 * np.sum(slack**2 / np.einsum("ij,ij->i", Z, Z), axis=-1)
    return float(J) if np.ndim(J) == 0 else J


@njit(cache=True, error_model="numpy")
def relaxation_correction(w, z, b, eta):
    """Single-sample relaxation (eq. ``relaxation-single``): w ← w + η (b − w·z) / ‖z‖² z.

    Defined in chapter "Relaxation procedures".

    Moves w the fraction ``eta`` of its distance to the hyperplane w · z = b, along z:
    ``eta=1`` projects w onto that hyperplane.

    Examples
    --------
    >>> relaxation_correction(np.array([0.0, 0.0]), np.array([1.0, 1.0]), 1.0, 1.0)
    array([0.5, 0.5])
    """
    return w + eta * (b - w @ z) / (z @ z) * z


def batch_relaxation_step(w, Z, b, eta):
    """Batch relaxation (eq. ``relaxation-batch``): one gradient step on J_r.

    Defined in chapter "Relaxation procedures".

    w ← w + η Σ_{z: w·z ≤ b} (b − w·z) / ‖z‖² z, the sum running over every sample
    with w · z ≤ b at the current w (one with w · z = b exactly adds nothing).

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> batch_relaxation_step(np.zeros(2), Z, 1.0, 1.0)
    array([1., 1.])
    """
    m = Z @ w
    violators = m <= b
    coeff = (b - m[violators]) / np.einsum("ij,ij->i", Z[violators], Z[violators])
    return w + eta * coeff @ Z[violators]


def batch_stability_bound(Z):
    """The largest η for which batch relaxation is guaranteed stable: 2 / L.

    Defined in chapter "Relaxation procedures".

    L = λ_max(Σ_i ẑ_i ẑ_iᵀ), with ẑ = z / ‖z‖, bounds the curvature of J_r everywhere;
    gradient descent on a convex function with L-Lipschitz gradient decreases it for
    every step size η < 2 / L. Since each ẑ has unit length, L ≤ n_samples.

    Examples
    --------
    >>> round(batch_stability_bound(np.ones((4, 2))), 12)  # four equal samples: L = 4
    0.5
    """
    Zhat = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    return float(2.0 / np.linalg.eigvalsh(Zhat.T @ Zhat)[-1])


@njit(cache=True, error_model="numpy")
def relaxation_epoch(w, Z, b, eta, threshold, order=None):
    """One pass of single-sample relaxation over Z in order, updating w in place.

    Defined in chapter "Relaxation procedures". A sample violates the margin when
    w · z < ``threshold`` (b, or b less a rounding tolerance); it is corrected at once
    with :func:`relaxation_correction`. Returns the number of corrections. ``order``, if
    given, is a permutation: the pass visits ``Z[order[0]], Z[order[1]], …``.

    Examples
    --------
    >>> w = np.zeros(2)
    >>> relaxation_epoch(w, np.array([[1.0, 1.0], [1.0, -1.0]]), 1.0, 1.0, 1.0), w.tolist()
    (2, [1.0, 0.0])
    """
    corrections = 0
    for k in range(Z.shape[0]):
        i = k if order is None else order[k]
        if w @ Z[i] < threshold:
            w[:] = relaxation_correction(w, Z[i], b, eta)
            corrections += 1
    return corrections


class Relaxation(IterativeClassifier):
    """Relaxation with margin, single-sample (DHS Algorithm 9) or batch (Algorithm 8).

    Defined in chapter "Relaxation procedures".

    Both minimize the relaxation criterion J_r(w) = ½ Σ_{w·z ≤ b} (w·z − b)² / ‖z‖² over
    the normalized samples z = y x̃. The single-sample rule corrects one violator at a
    time, moving w the fraction ``eta`` of its distance to the violated hyperplane
    w · z = b; the batch rule adds the corrections of all current violators at once.

    Parameters
    ----------
    margin : float, default=1.0
        The margin b > 0 each normalized sample must reach: w · z ≥ b.
    eta : float, default=1.0
        The relaxation factor η, in the open interval (0, 2): η < 1 under-relaxation,
        η = 1 projection onto the hyperplane, η > 1 over-relaxation.
    mode : {"single", "batch"}, default="single"
        Single-sample corrections in a (shuffled) sweep, or one batch step per epoch.
    fit_intercept : bool, default=True
        Learn a bias through the clamped input x̃ = (1, x).
    max_iter : int, default=1000
        Maximum number of epochs (sweeps in single mode, steps in batch mode).
    shuffle : bool, default=True
        Visit the samples in a new random order every epoch (single mode only).
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    n_iter_ : int
        Epochs run.
    converged_ : bool
        True when every normalized sample reached the margin, w · z ≥ (1 − RTOL) b.
    history_ : dict of ndarrays
        Per epoch, measured at its end: ``"violations"`` (samples with
        w · z < (1 − RTOL) b), ``"errors"`` (mistakes, w · z ≤ 0, not training errors)
        and ``"loss"`` (J_r).

    Notes
    -----
    Single-sample relaxation converges for 0 < η < 2 on linearly separable data: it
    either reaches the solution region in finitely many corrections or approaches a
    point on its boundary (DHS Sec. 5.6.2). The tests therefore allow a relative
    tolerance ``RTOL``: a sample counts as violating the margin when
    w · z < (1 − RTOL) b (where the chapter's algorithm boxes test w · z < b); in single
    mode only such a sample is corrected, and in both modes the fit has converged when no
    sample violates the margin. The batch step sums over every sample with w · z ≤ b. Batch
    relaxation is gradient descent on J_r; its step adds up the corrections of all
    violators. Every η < 2 / L, L = λ_max(Σ_i ẑ_i ẑ_iᵀ) ≤ n_samples, is guaranteed never to
    increase J_r (see :func:`batch_stability_bound`); the bound is sufficient, not
    necessary: a larger η may still converge, or may diverge. A step that takes J_r past
    ``DIVERGENCE_FACTOR`` times J_r(0) is rejected: the run stops with the weights from
    before that step and warns, naming η.

    References
    ----------
    R. O. Duda, P. E. Hart and D. G. Stork, *Pattern Classification*, 2nd ed., Wiley,
    2001, Sec. 5.6.

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("and")
    >>> clf = Relaxation(margin=1.0, eta=1.5, random_state=0).fit(X, y)
    >>> clf.converged_, clf.score(X, y)
    (True, 1.0)
    >>> bool(min(y * clf.decision_function(X)) >= 1.0 - 1e-9)
    True
    """

    _parameter_constraints = {
        **IterativeClassifier._parameter_constraints,
        "margin": [POSITIVE],
        "eta": [RELAXATION_FACTOR],
        "mode": [StrOptions({"single", "batch"})],
        "max_iter": [MAX_ITER],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, *, margin=1.0, eta=1.0, mode="single", fit_intercept=True, max_iter=1000,
                 shuffle=True, random_state=None):
        self.margin = margin
        self.eta = eta
        self.mode = mode
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state

    def _fit_augmented(self, X, y):
        Z = y[:, None] * X
        if np.any(np.einsum("ij,ij->i", Z, Z) == 0):
            raise ValueError("Relaxation needs non-zero samples (‖z‖ > 0); use fit_intercept=True "
                             "or remove all-zero rows.")
        self._loss0 = relaxation_criterion(np.zeros(Z.shape[1]), Z, float(self.margin))
        try:
            return self._run_epochs(np.zeros(Z.shape[1]), Z, y)
        finally:
            del self._loss0

    def _epoch(self, w, Z, y, order):
        b, eta = float(self.margin), float(self.eta)
        threshold = b * (1.0 - RTOL)
        if self.mode == "single":
            w_new = w.copy()
            relaxation_epoch(w_new, Z, b, eta, threshold, self._indices(order))
        else:
            w_new = batch_relaxation_step(w, Z, b, eta)
        loss = relaxation_criterion(w_new, Z, b) if np.all(np.isfinite(w_new)) else np.inf
        if not np.isfinite(loss) or loss > DIVERGENCE_FACTOR * self._loss0:
            raise StopFit(
                f"Batch relaxation diverged at eta={eta:g}: J_r grew from {self._loss0:.3g} to "
                f"{loss:.3g}. The batch step adds the corrections of all violators; use a "
                f"smaller eta (eta < 2/L = {batch_stability_bound(Z):.3g} is always stable). "
                "The weights from before this step are kept.")
        w[:] = w_new
        m = Z @ w
        violations = int(np.sum(m < threshold))
        return {"violations": violations, "errors": int(np.sum(m <= 0)), "loss": loss}, \
            violations == 0

    def _not_converged_message(self, w, Z, y):
        return (f"Relaxation ({self.mode}, eta={self.eta:g}, margin={self.margin:g}) did not "
                f"reach the margin on all samples in max_iter={self.max_iter} epochs; "
                f"{self.history_['violations'][-1]} violators remain. The data may not be "
                "linearly separable with this margin.")


CorrectionResult = namedtuple("CorrectionResult", ["w", "n_iter", "converged", "errors"])
CorrectionResult.__doc__ = """Result of :func:`fractional_correction`.

Defined in chapter "Relaxation procedures".

w : the augmented weights; n_iter : epochs run; converged : whether every sample ended
with w · z > 0; errors : mistakes (w · z ≤ 0) at the end of each epoch."""


@validate_params(
    {"X": ["array-like"], "y": ["array-like"], "lam": [RELAXATION_FACTOR],
     "fit_intercept": ["boolean"], "max_iter": [MAX_ITER], "w0": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def fractional_correction(X, y, *, lam=1.5, fit_intercept=True, max_iter=1000, w0=None):
    """The fractional-correction rule: relaxation with margin b = 0 (eq. ``fractional``).

    Defined in chapter "Relaxation procedures".

    w ← w − λ (w · z) / ‖z‖² z for every sample with w · z ≤ 0 (a mistake), visited in
    order. The correction takes w · z to (1 − λ) w · z: with λ > 1 a sample with
    w · z < 0 ends with w · z > 0; with λ ≤ 1 it stays a mistake. Without a margin,
    w = 0 is a fixed point of the rule, so the start must be non-zero: by default
    w(1) = z_1, the first normalized sample.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Two distinct labels.
    lam : float in (0, 2), default=1.5
        The fraction λ.
    fit_intercept : bool, default=True
        Use the augmented inputs x̃ = (1, x).
    max_iter : int, default=1000
        Maximum number of epochs.
    w0 : array-like, optional
        Start vector (augmented when ``fit_intercept``).

    Returns
    -------
    CorrectionResult

    Examples
    --------
    >>> from lincls.datasets import logic_gate
    >>> X, y = logic_gate("or")
    >>> result = fractional_correction(X, y, lam=1.5)
    >>> result.converged, bool(np.all(y * (augment(X) @ result.w) > 0))
    (True, True)
    """
    X, y = check_X_y(X, y, dtype=np.float64)
    _, signs = labels_to_signs(y)
    Z = signs[:, None] * (augment(X) if fit_intercept else X)
    w = Z[0].copy() if w0 is None else np.asarray(w0, dtype=float).copy()
    if w.shape != (Z.shape[1],):
        raise ValueError(f"w0 must have {Z.shape[1]} entries; got shape {w.shape}.")
    errors = []

    for epoch in range(1, max_iter + 1):
        # w · z ≤ 0 is w · z < 5e-324, the smallest positive float
        relaxation_epoch(w, Z, 0.0, float(lam), np.nextafter(0.0, 1.0))
        errors.append(int(np.sum(Z @ w <= 0)))
        if errors[-1] == 0:
            return CorrectionResult(w, epoch, True, np.asarray(errors))
    warn_at_caller(f"Fractional correction (lam={lam:g}) left {errors[-1]} mistakes (w · z <= 0) "
                   f"after max_iter={max_iter} epochs.")
    return CorrectionResult(w, max_iter, False, np.asarray(errors))
