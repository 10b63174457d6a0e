"""Logistic regression: the probabilistic linear classifier, fitted by Newton's method.

Defined in chapter "The losses of the margin" (``book/margin_losses.md``).

The model says P(y = +1 | x) = σ(w̃ · x̃) with the logistic function σ(a) = 1 / (1 + e^(-a))
and the augmented weights w̃ = (b, w), so P(y | x) = σ(y w̃ · x̃) for y ∈ {-1, +1}.
Maximizing the likelihood of the training labels is minimizing the logistic loss of the
margins m_i = y_i w̃ · x̃_i,

    L(w̃) = Σ_i log(1 + exp(-m_i)) + |w|² / (2C) = Σ_i log(1 + exp(-m_i)) + w̃ᵀ I₀ w̃ / (2C),

with an optional L2 penalty on w but not on the bias b (I₀ is the identity with a zero in
the bias position; C = inf, the default, is the plain maximum-likelihood fit). L is convex
and smooth; Newton's method on it is iteratively reweighted least squares (IRLS).
"""

from numbers import Integral, Real

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.special import expit
from sklearn.utils._param_validation import Interval

from ._base import CLASS_WEIGHT, LinearClassifier
from ._blas import blas_threads_for

__all__ = ["LogisticRegression", "logistic_loss", "logistic_gradient", "logistic_hessian",
           "newton_step"]


def logistic_loss(w, X, y, C=np.inf, bias=True, a=None, v=None):
    """The objective Σ_i log(1 + exp(-y_i w̃ · x̃_i)) + w̃ᵀ I₀ w̃ / (2C), eq. (logistic-loss).

    Defined in chapter "The losses of the margin".

    ``X`` holds the augmented inputs and ``w`` the weights w̃ (bias first when ``bias``);
    the bias is not penalized. ``a``, if given, holds the activations a_i = w̃ · x̃_i
    (``X @ w``): a caller who has them saves a pass over the data. ``v``, if given, holds
    sample weights: the i-th term of the sum is multiplied by v_i.

    Examples
    --------
    >>> X, y = np.array([[1.0, 0.0]]), np.array([1.0])
    >>> round(float(logistic_loss(np.zeros(2), X, y)), 6)     # log 2 at w = 0
    0.693147
    """
    m = y * (X @ w if a is None else a)
    penalty = 0.0 if np.isinf(C) else (w[int(bias):] @ w[int(bias):]) / (2 * C)
    log1p_exp = np.maximum(-m, 0.0) + np.log1p(np.exp(-np.abs(m)))   # log(1 + e^(-m)), stably
    return float((log1p_exp.sum() if v is None else v @ log1p_exp) + penalty)


def logistic_gradient(w, X, y, C=np.inf, bias=True, a=None, v=None):
    """∇L = -Σ_i σ(-m_i) y_i x̃_i + I₀ w̃ / C, eq. (logistic-gradient): mistakes weigh most.

    Defined in chapter "The losses of the margin". ``a``, ``v``: as in :func:`logistic_loss`.

    Examples
    --------
    >>> logistic_gradient(np.zeros(2), np.array([[1.0, 2.0]]), np.array([1.0]))
    array([-0.5, -1. ])
    """
    m = y * (X @ w if a is None else a)
    c = -y * expit(-m)
    g = X.T @ (c if v is None else v * c)          # (not -X.T @ ..., which copies X)
    if np.isfinite(C):
        g[int(bias):] += w[int(bias):] / C
    return g


def logistic_hessian(w, X, C=np.inf, bias=True, a=None, v=None):
    """∇²L = Σ_i σ(a_i) σ(-a_i) x̃_i x̃_iᵀ + I₀/C, eq. (logistic-hessian); a_i = w̃ · x̃_i.

    Defined in chapter "The losses of the margin". ``a``, ``v``: as in :func:`logistic_loss`
    (with sample weights v_i the i-th term is multiplied by v_i).

    The sum runs over blocks of 1024 samples, whose rows √(v_i s_i) x̃_i (s_i = σ(a_i)σ(-a_i))
    stay in the processor's cache while BLAS multiplies them (a symmetric rank-k update).

    Examples
    --------
    >>> logistic_hessian(np.zeros(2), np.array([[1.0, 2.0]]))
    array([[0.25, 0.5 ],
           [0.5 , 1.  ]])
    """
    a = X @ w if a is None else a
    with np.errstate(over="ignore"):                # cosh(a/2) = inf: then s_i = 0
        r = 0.5 / np.cosh(a / 2)                    # √s_i, as σ(a)σ(-a) = 1/(4 cosh²(a/2))
    if v is not None:
        r = r * np.sqrt(v)                          # sample weights: the rows times their root
    H = np.zeros((X.shape[1], X.shape[1]))
    for start in range(0, len(X), 1024):
        Xs = X[start:start + 1024] * r[start:start + 1024, None]     # rows √(v_i s_i) x̃_i
        H += Xs.T @ Xs                              # Σ v_i s_i x̃_i x̃_iᵀ over the block
    if np.isfinite(C):
        idx = np.arange(int(bias), len(w))
        H[idx, idx] += 1.0 / C
    return H


def newton_step(w, loss, X, y, C=np.inf, bias=True, v=None):
    """One damped Newton (IRLS) step, eq. (logistic-newton): w̃ ← w̃ - η H⁻¹ ∇L.

    Defined in chapter "The losses of the margin".

    ``loss`` is L(w̃), known from the step before. The step length η starts at 1 and is
    halved until the loss decreases enough (Armijo's rule); a singular Hessian gets a tiny
    ridge. The halving stops at a floor: once η ≤ 1e-10 (η = 2⁻³⁴), the step is taken
    whether or not it passed the test, so the loss can rise. Without the floor, damped
    Newton converges from any start in exact arithmetic when the Hessian is positive
    definite (the x̃ᵢ span the space, or C is finite) and a minimizer exists; with it,
    not from every start. The floor bites where the curvature all but vanishes: for two
    samples x = 1 labelled +1 and -1, no bias, from w = 30 every decrease needs
    η < 60 / sinh 30 ≈ 1.1e-11, even in exact arithmetic, and the floor step lands near
    w = -281 with loss 281 (chapter "The losses of the margin"). Near a minimizer,
    rounding can decide the test and the floor step is tiny. ``LogisticRegression``
    starts at w̃ = 0. ``v``: sample weights, as in :func:`logistic_loss`.
    Returns the new weights, their loss, and the Newton decrement ∇Lᵀ H⁻¹ ∇L / 2, the
    decrease the step predicts.

    Examples
    --------
    >>> X, y = np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([-1.0, 1.0])
    >>> w, loss, decrement = newton_step(np.zeros(2), 2 * np.log(2), X, y, C=1.0)
    >>> w.round(4).tolist(), round(loss, 4), round(decrement, 4)
    ([-0.2222, 0.4444], 1.2752, 0.1111)

    At the floor the loss rises (two samples x = 1, labels ±1, no bias, from w = 30):

    >>> X2, y2, w0 = np.ones((2, 1)), np.array([1.0, -1.0]), np.array([30.0])
    >>> w, loss, _ = newton_step(w0, logistic_loss(w0, X2, y2, bias=False), X2, y2, bias=False)
    >>> round(float(w[0])), round(loss)
    (-281, 281)
    """
    a = X @ w                                        # the activations a_i = w̃ · x̃_i
    g, H = logistic_gradient(w, X, y, C, bias, a, v), logistic_hessian(w, X, C, bias, a, v)
    try:                                             # the Newton direction H⁻¹ ∇L
        step = cho_solve(cho_factor(H, check_finite=False), g, check_finite=False)
    except LinAlgError:                              # singular H: a tiny ridge
        H[np.diag_indices_from(H)] += 1e-10 * (1.0 + np.trace(H))
        step = cho_solve(cho_factor(H, check_finite=False), g, check_finite=False)
    X_step, slope, eta = X @ step, g @ step, 1.0    # at w̃ - η step, the activations a - η X step
    new_loss = logistic_loss(w - step, X, y, C, bias, a - X_step, v)
    while new_loss > loss - 1e-4 * eta * slope and eta > 1e-10:     # Armijo's rule
        eta *= 0.5
        new_loss = logistic_loss(w - eta * step, X, y, C, bias, a - eta * X_step, v)
    return w - eta * step, new_loss, 0.5 * float(slope)


class LogisticRegression(LinearClassifier):
    """Two-class logistic regression by Newton's method (IRLS), unpenalized by default.

    Minimizes Σ_i log(1 + exp(-y_i (w · x_i + b))) + |w|² / (2C), the objective of
    ``sklearn.linear_model.LogisticRegression`` (``penalty=None`` when C = inf).

    Defined in chapter "The losses of the margin" (``book/margin_losses.md``).

    Parameters
    ----------
    C : float or np.inf, default=np.inf
        Inverse strength of the L2 penalty on w (not on b). ``np.inf``: no penalty,
        the maximum-likelihood estimate.
    fit_intercept : bool, default=True
    max_iter : int, default=100
        Bound on the Newton steps.
    tol : float, default=1e-10
        Stop when the Newton decrement ∇Lᵀ H⁻¹ ∇L / 2 (the predicted decrease of the
        loss) is at most ``tol`` times the number of samples (the sum of the sample
        weights in a weighted fit).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into ``sample_weight`` (see :meth:`fit`): a
        dict maps a label to its weight, ``"balanced"`` weighs each class by
        n_samples / (2 · its count), as in scikit-learn.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    n_iter_ : int
        Newton steps taken.
    converged_ : bool
    separable_ : bool
        True when, without a penalty, an iterate separated the training data: then the
        maximum-likelihood weights do not exist (the loss decreases towards 0 as |w| → ∞)
        and the fit stops at that iterate with a ConvergenceWarning.
    history_ : dict
        ``loss``: the objective after each step (the first entry at w = 0).
    classes_ : ndarray of shape (2,)
    n_features_in_ : int

    Notes
    -----
    The gradient and Hessian are eqs. (logistic-gradient) and (logistic-hessian); a
    Newton step solves one weighted least-squares problem with weights σ(a_i) σ(-a_i).

    With sample weights v_i the loss is Σ_i v_i log(1 + exp(-m_i)) + |w|² / (2C), so an
    integer weight n is n copies of the sample (the same loss, hence the same minimizer)
    and a weight 0 drops it; scikit-learn's ``LogisticRegression`` weighs the same way.

    References
    ----------
    .. [1] Bishop, C. M. (2006). *Pattern Recognition and Machine Learning*, §4.3.
       Springer.
    .. [2] Albert, A. and Anderson, J. A. (1984). On the existence of maximum likelihood
       estimates in logistic regression models. Biometrika 71(1), 1–10.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0, 1, 0, 1])
    >>> clf = LogisticRegression().fit(X, y)
    >>> clf.converged_, clf.predict_proba([[1.5]]).round(3).tolist()
    (True, [[0.5, 0.5]])
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="right")],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "class_weight": CLASS_WEIGHT,
    }

    def __init__(self, *, C=np.inf, fit_intercept=True, max_iter=100, tol=1e-10,
                 class_weight=None):
        self.C = C
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.class_weight = class_weight

    def fit(self, X, y, sample_weight=None):
        """Fit the weights by Newton's method to samples ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two distinct labels of any type.
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Non-negative weights v_i of the terms of the log-loss: a weight n counts the
            sample n times, a weight 0 drops it. Multiplied by the weights of
            ``class_weight``.

        Returns
        -------
        self : object
        """
        return self._fit(X, y, sample_weight)

    def _fit_augmented(self, X, y):
        C, bias, v = float(self.C), bool(self.fit_intercept), self._sample_weight
        w = np.zeros(X.shape[1])
        n = len(y) if v is None else v.sum()     # the number of samples the weights count
        losses = [logistic_loss(w, X, y, C, bias, v=v)]
        self.converged_ = self.separable_ = False
        n_iter = 0
        with blas_threads_for(10 * X.shape[0] * X.shape[1] ** 2):
            while n_iter < self.max_iter:
                n_iter += 1
                w, loss, decrement = newton_step(w, losses[-1], X, y, C, bias, v)
                losses.append(loss)
                if decrement <= self.tol * n:
                    self.converged_ = True
                    break
                if np.isinf(C) and np.min(y * (X @ w)) > 0:
                    self.separable_ = True
                    break
        self.n_iter_ = n_iter
        self.history_ = {"loss": np.array(losses)}
        if self.separable_:
            self._not_converged(
                "LogisticRegression: the training data are linearly separable, so the "
                "maximum-likelihood weights do not exist (they grow without bound); the fit "
                f"stopped at the first separating iterate (step {n_iter}). Set a finite C "
                "for a penalized fit.")
        elif not self.converged_:
            self._not_converged(
                f"LogisticRegression did not converge in max_iter={self.max_iter} Newton "
                "steps; increase max_iter or tol.")
        return w

    def predict_proba(self, X):
        """P(class | x): columns for ``classes_[0]`` and ``classes_[1]``, eq. (logistic-model)."""
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X):
        """The logarithm of :meth:`predict_proba`, computed without underflow."""
        a = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, a), -np.logaddexp(0.0, -a)])

