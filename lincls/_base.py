"""The shared base of every linear classifier in the book.

Defined in chapter "Linear discriminant functions" (``book/linear_discriminants.md``).

A linear classifier predicts ``sign(w · x + b)``, with sign(0) = -1. Every algorithm of the
book differs only in how it *learns* ``w`` and ``b``; everything else lives here, once:

* input validation with scikit-learn's own tools,
* the mapping of any two labels to -1/+1 (``classes_[1]`` is the positive class),
* the augmented ("clamped input") vector x̃ = (1, x) that turns the bias into a weight,
* ``decision_function``, ``predict`` and ``score``.

A subclass implements one method, ``_fit_augmented(X, y)``, which receives the
(augmented, when ``fit_intercept=True``) inputs and labels in {-1, +1} and returns the
weight vector w̃ (with the bias first).
"""

import numbers
import os
import sys
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import _param_validation, check_random_state
from sklearn.utils._param_validation import Integral, Interval, Real, StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

__all__ = ["LinearClassifier", "IterativeClassifier", "IterativeMixin", "StopFit", "augment",
           "labels_to_signs", "check_signs", "check_targets", "check_finite", "warn_at_caller",
           "weigh_samples", "refuse_fit_params", "box_bound"]


def augment(X):
    """Return the augmented inputs x̃ = (1, x), one row per sample.

    Defined in chapter "Linear discriminant functions".

    The constant first column is the "clamped input": its weight is the bias.

    Examples
    --------
    >>> augment(np.array([[2.0, 3.0]]))
    array([[1., 2., 3.]])
    """
    X = np.asarray(X, dtype=float)
    return np.hstack([np.ones((X.shape[0], 1)), X])


def labels_to_signs(y, classes=None):
    """Map two labels to -1/+1; return ``(classes, signs)``.

    Defined in chapter "Linear discriminant functions".

    ``classes`` is sorted as :func:`numpy.unique` sorts it, and ``classes[1]`` maps to +1.

    Raises
    ------
    ValueError
        If ``y`` does not hold exactly two distinct labels.

    Examples
    --------
    >>> labels_to_signs(np.array(["no", "yes", "yes"]))
    (array(['no', 'yes'], dtype='<U3'), array([-1.,  1.,  1.]))
    """
    if classes is None:
        classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(
            "Only binary classification is supported. The labels must hold exactly 2 "
            f"classes; got {len(classes)} class(es): {list(classes)[:5]}."
        )
    return classes, np.where(y == classes[1], 1.0, -1.0)


#: Hyper-parameter constraints shared by many estimators, in scikit-learn's vocabulary.
POSITIVE = Interval(Real, 0, None, closed="neither")  # a finite number > 0
NON_NEGATIVE = Interval(Real, 0, None, closed="left")  # a finite number ≥ 0
MAX_ITER = Interval(Integral, 1, None, closed="left")  # a positive integer
CLASS_WEIGHT = [StrOptions({"balanced"}), dict, None]  # scikit-learn's class_weight

#: The estimators whose ``fit`` takes ``sample_weight``, named where another refuses it.
WEIGHTED = ("Perceptron", "Adaline", "LeastSquares", "LogisticRegression", "LinearSVM",
            "KernelSVM")


def check_signs(y):
    """Raise a ``ValueError`` unless ``y`` holds only the labels -1 and +1.

    Defined in chapter "Linear discriminant functions". The estimators map any two labels
    to -1/+1 (:func:`labels_to_signs`); functions beside them that take the labels as
    given (``separating_weights``, ``perceptron_trace``) call this first.

    Examples
    --------
    >>> check_signs(np.array([-1, 1, 1]))
    >>> check_signs(np.array([0, 1]))
    Traceback (most recent call last):
    ...
    ValueError: y must hold labels -1 and +1; got [0, 1].
    """
    if not set(np.unique(y)) <= {-1.0, 1.0}:
        raise ValueError(f"y must hold labels -1 and +1; got {np.unique(y)[:5].tolist()}.")


def check_targets(y):
    """scikit-learn's ``check_classification_targets``, skipped where its answer is known.

    Defined in chapter "Linear discriminant functions". Labels that are booleans,
    integers, strings or whole-number floats are class labels (scikit-learn's
    ``type_of_target`` calls them binary or multiclass); anything else (fractional
    floats, objects) goes through scikit-learn's check, which rejects continuous targets
    with its own message. The shortcut saves most of the cost of fitting a small data set.

    Examples
    --------
    >>> check_targets(np.array([1.0, -1.0]))
    >>> check_targets(np.array([0.5, 1.0]))
    Traceback (most recent call last):
    ...
    ValueError: Unknown label type: continuous. ...
    """
    kind = y.dtype.kind
    if kind in "biuSU" or kind == "f" and np.array_equal(y, np.round(y)):
        return
    check_classification_targets(y)


def weigh_samples(X, y, sample_weight=None, class_weight=None):
    """The weights s_i of a weighted fit, with the rows of weight zero dropped.

    Defined in chapter "Linear discriminant functions". Returns ``(X, y, s, kept)``: a weight
    n > 0 counts sample i as n copies of it, as in scikit-learn. ``class_weight`` (None,
    ``"balanced"`` or a dict label -> weight, scikit-learn's meaning, computed by
    :func:`sklearn.utils.class_weight.compute_sample_weight` on all of ``y``) multiplies
    into ``sample_weight``. The samples whose weight is zero are removed, as if they had
    not been given (so the classes are those with positive weight); ``s`` is None when
    every remaining weight is 1, the unweighted fit, which then runs unchanged; ``kept``
    is the boolean mask of the samples kept, or None when none was dropped.

    Raises
    ------
    ValueError
        If the weights are not finite, negative, all zero, or not of shape (n_samples,).

    Examples
    --------
    >>> X, y = np.array([[0.0], [1.0], [2.0]]), np.array([0, 1, 1])
    >>> X2, y2, s, kept = weigh_samples(X, y, [2.0, 0.0, 1.0])
    >>> X2.ravel().tolist(), y2.tolist(), s.tolist(), kept.tolist()
    ([0.0, 2.0], [0, 1], [2.0, 1.0], [True, False, True])
    >>> weigh_samples(X, y, class_weight="balanced")[2].tolist()   # 3 / (2 · count)
    [1.5, 0.75, 0.75]
    """
    if sample_weight is None and class_weight is None:
        return X, y, None, None
    if sample_weight is not None:
        if isinstance(sample_weight, numbers.Number):
            sample_weight = np.full(len(y), sample_weight, dtype=float)
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                             ensure_non_negative=True, copy=True)
    else:
        sample_weight = np.ones(len(y))
    if class_weight is not None:
        sample_weight = sample_weight * compute_sample_weight(class_weight, y)
    keep = sample_weight > 0
    if not keep.any():
        raise ValueError("Sample weights must contain at least one non-zero number: every "
                         "weight (sample_weight times class_weight) is zero.")
    if keep.all():
        keep = None
    else:
        X, y, sample_weight = X[keep], y[keep], sample_weight[keep]
    return X, y, (None if np.all(sample_weight == 1.0) else sample_weight), keep


def box_bound(C, t):
    """The upper bound of α_t in the SVMs' box 0 ≤ α_t ≤ C: C, or C[t] when C holds one
    bound C s_t per sample (sample weights s_t). :mod:`lincls.kernels` compiles it.

    Defined in chapter "Support vector machines".

    >>> box_bound(2.0, 1), float(box_bound(np.array([1.0, 3.0]), 1))
    (2.0, 3.0)
    """
    return C if np.ndim(C) == 0 else C[t]


def refuse_fit_params(estimator, params):
    """Raise a TypeError naming the estimators that take ``sample_weight``.

    Defined in chapter "Linear discriminant functions". ``fit`` of an estimator whose
    algorithm has no weighted form takes ``**params`` only to say so.

    Examples
    --------
    >>> refuse_fit_params(LinearClassifier(), {})
    >>> refuse_fit_params(LinearClassifier(), {"sample_weight": [1.0]})
    Traceback (most recent call last):
    ...
    TypeError: LinearClassifier.fit() does not take sample_weight: ...
    """
    if not params:
        return
    name, what = type(estimator).__name__, ", ".join(sorted(params))
    if "sample_weight" in params:
        raise TypeError(
            f"{name}.fit() does not take sample_weight: its rule has no weighted form in "
            f"the book. Repeat the rows instead (integer weights: np.repeat(X, weights, "
            f"axis=0) and the same for y), or use an estimator that takes weights: "
            f"{', '.join(WEIGHTED)}.")
    raise TypeError(f"{name}.fit() got unexpected keyword argument(s): {what}.")


# The files of lincls, and of the decorator that validates its functions' parameters
_INSIDE = (os.path.dirname(os.path.abspath(__file__)) + os.sep, _param_validation.__file__)


def warn_at_caller(message, category=ConvergenceWarning):
    """Warn, naming the line that called into lincls: the first frame outside the package.

    Defined in chapter "Linear discriminant functions". A fixed ``stacklevel`` names the
    caller only along a call path of one length (``fit`` reaches the warning in two to four
    calls, depending on the estimator), so the frames of lincls (and of scikit-learn's
    ``validate_params``, which wraps some of its functions) are skipped one by one. Python
    3.12's ``skip_file_prefixes`` does this walk, but lincls also runs on 3.11.

    Examples
    --------
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_at_caller("stopped after max_iter=1 epochs")
    >>> caught[0].filename.startswith("<doctest")          # this line, not lincls/_base.py
    True
    """
    frame, level = sys._getframe(1), 2  # stacklevel 2 is the frame that called us
    while frame is not None and frame.f_code.co_filename.startswith(_INSIDE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def check_finite(estimator, X, what, *values):
    """Raise a ValueError naming ``what`` unless every array in ``values`` is finite.

    Defined in chapter "Linear discriminant functions". Finite inputs near float64's
    largest value (about 1.8e308) overflow the arithmetic of a fit or of a kernel; then,
    as scikit-learn's ``SVC`` does, the estimator raises instead of returning infs or NaNs.

    Examples
    --------
    >>> check_finite(LinearClassifier(), np.array([[1e308]]), "weights", np.array([np.inf]))
    Traceback (most recent call last):
    ...
    ValueError: LinearClassifier: non-finite weights (inf or NaN): inputs of magnitude up to ...
    """
    if not all(np.all(np.isfinite(v)) for v in values):
        raise ValueError(
            f"{type(estimator).__name__}: non-finite {what} (inf or NaN): inputs of magnitude "
            f"up to {np.abs(X).max():.3g} overflow float64 arithmetic; scale them, e.g. with "
            "sklearn.preprocessing.StandardScaler.")


class LinearClassifier(ClassifierMixin, BaseEstimator):
    """Base class: a two-class linear classifier ``sign(w · x + b)``.

    Defined in chapter "Linear discriminant functions".

    Subclasses take keyword-only hyper-parameters (among them ``fit_intercept``) and
    implement ``_fit_augmented(X, y) -> w``. The base class validates, maps labels to
    -1/+1, adds the clamped input when ``fit_intercept`` is true, and stores the result.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        The weights w.
    intercept_ : ndarray of shape (1,)
        The bias b (zero when ``fit_intercept=False``).
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class (+1).
    n_features_in_ : int
        Number of features seen in ``fit``.
    """

    fit_intercept = True
    _parameter_constraints = {"fit_intercept": ["boolean"]}
    _sample_weight = None  # the weights s_i during a weighted fit; None: unweighted
    _kept = None  # during a fit, the mask of the samples of positive weight; None: all

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    # -- the one method an algorithm writes --------------------------------------------
    def _fit_augmented(self, X, y):  # pragma: no cover - abstract
        raise NotImplementedError

    # -- shared machinery -------------------------------------------------------------
    def fit(self, X, y, **params):
        """Learn the weights from samples ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs.
        y : array-like of shape (n_samples,)
            Two distinct labels of any type.
        **params
            Not taken: ``sample_weight`` raises a TypeError that names the estimators
            that take it.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        refuse_fit_params(self, params)
        return self._fit(X, y)

    def _fit(self, X, y, sample_weight=None):
        """The shared fit: validate, weigh, map the labels, augment, solve, store.

        ``sample_weight`` (and the estimator's ``class_weight``, if it has one) go through
        :func:`weigh_samples`; during the solve ``self._sample_weight`` holds the weights
        s_i of the remaining samples, or None for the unweighted fit, and ``self._kept``
        the mask of the samples kept (None: all).
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_targets(y)
        X, y, s, kept = weigh_samples(X, y, sample_weight, getattr(self, "class_weight", None))
        self.classes_, signs = labels_to_signs(y)
        Xa = augment(X) if self.fit_intercept else X
        self._sample_weight, self._kept = s, kept
        try:
            w = np.asarray(self._fit_augmented(Xa, signs), dtype=float)
        finally:
            del self._sample_weight, self._kept
        check_finite(self, X, "weights", w)
        self._set_weights(w)
        return self

    def _set_weights(self, w):
        """Split the augmented weight vector w̃ = (b, w) into ``intercept_`` and ``coef_``."""
        if self.fit_intercept:
            self.intercept_ = np.array([w[0]])
            self.coef_ = w[1:].reshape(1, -1)
        else:
            self.intercept_ = np.zeros(1)
            self.coef_ = w.reshape(1, -1)

    @property
    def weights_(self):
        """The augmented weight vector w̃ = (b, w), or w when ``fit_intercept=False``."""
        check_is_fitted(self)
        w = self.coef_.ravel()
        return np.concatenate([self.intercept_, w]) if self.fit_intercept else w.copy()

    def decision_function(self, X):
        """Return the activation w · x + b of each sample (its sign is the prediction).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_.ravel() + self.intercept_[0]

    def predict(self, X):
        """Return the predicted label: ``classes_[1]`` where w · x + b > 0, else ``classes_[0]``.

        A sample exactly on the hyperplane (activation 0) gets ``classes_[0]``: the book's
        sign(0) = -1. A *training error* is a sample that this prediction gets wrong. The
        learning rules instead correct every *mistake*, y (w · x + b) ≤ 0, and the two
        differ at activation 0: a sample of ``classes_[0]`` (y = -1) there is predicted
        correctly but is a mistake for the rules (from w = 0 on the AND gate: 4 mistakes,
        1 training error; chapter "The perceptron").
        """
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def _not_converged(self, message):
        """Mark the fit as not converged and warn, as every bounded fit must."""
        self.converged_ = False
        warn_at_caller(message)


class StopFit(Exception):
    """Raised by an epoch that must end the fit unconverged (e.g. a diverging run).

    Defined in chapter "Linear discriminant functions".

    The epoch leaves the state as it was before it; the message becomes the warning.
    """


class IterativeMixin:
    """The one training loop of every iterative estimator of the book.

    Defined in chapter "Linear discriminant functions". The loop owns what every
    iterative algorithm shares: the order of the samples (a new permutation from
    ``random_state`` each epoch when the estimator has ``shuffle=True``), the bound
    ``max_iter``, ``n_iter_``, ``history_``, ``converged_``, the ConvergenceWarning and
    the per-epoch ``callback`` of ``fit``. An algorithm supplies

    * ``_epoch(state, X, y, order) -> (values, done)``: one pass over the samples
      ``X[order], y[order]`` (``order`` is a permutation, or ``slice(None)`` for the
      given order; a per-sample loop visits ``X[order[k]]`` for k = 0, 1, … rather than
      copy X each epoch, see :meth:`_indices`), updating ``state`` (the weights w, or
      whatever the algorithm keeps, such as dual variables) in place; ``values`` is a
      dict of numbers for ``history_``, ``done`` says whether the algorithm has
      converged. An epoch that must stop the fit unconverged raises :class:`StopFit`;
    * ``_not_converged_message(state, X, y)``, the text of the warning;
    * ``_callback_weights(state)`` when the state is not the weight vector: the weights
      the fit would return if it stopped now, which the callback sees;
    * ``_shuffles(y)`` when the order of the samples does not matter to an epoch even with
      ``shuffle=True`` (a full-batch step): then no permutation is drawn.
    """

    _callback = None

    def _max_epochs(self):
        return self.max_iter

    def _callback_weights(self, state):
        return state

    def _shuffles(self, y):
        """Whether the epochs visit the samples in a new random order (``shuffle=True``)."""
        return getattr(self, "shuffle", False)

    @staticmethod
    def _indices(order):
        """``order`` as the compiled per-sample loops take it: the permutation, or None
        for the given order. Indexing the rows through it costs an integer read per
        sample; ``X[order]`` would copy all of X every epoch."""
        return None if isinstance(order, slice) else order

    def _run_epochs(self, state, X, y, rng=None):
        """Run ``_epoch`` until it reports convergence or the epochs run out; return state.

        ``rng`` continues a generator the algorithm has drawn from (a random start);
        by default a new one is made from ``random_state``.
        """
        if rng is None:
            rng = check_random_state(getattr(self, "random_state", None))
        shuffle = self._shuffles(y)
        history = {}
        self.converged_, stopped, epoch = False, None, 0
        while epoch < self._max_epochs():
            order = rng.permutation(len(y)) if shuffle else slice(None)
            try:
                values, done = self._epoch(state, X, y, order)
            except StopFit as stop:
                stopped = str(stop)
                break
            epoch += 1
            for key, value in values.items():
                history.setdefault(key, []).append(value)
            if self._callback is not None:
                self._callback(epoch, self._callback_weights(state))
            if done:
                self.converged_ = True
                break
        self.n_iter_ = epoch
        self.history_ = {key: np.asarray(v) for key, v in history.items()}
        if not self.converged_:
            self._not_converged(stopped or self._not_converged_message(state, X, y))
        return state

    def _not_converged(self, message):
        """Mark the fit as not converged and warn, as every bounded fit must."""
        self.converged_ = False
        warn_at_caller(message)


class IterativeClassifier(IterativeMixin, LinearClassifier):
    """Base class of the two-class classifiers trained epoch by epoch (see IterativeMixin).

    Defined in chapter "Linear discriminant functions". A subclass supplies ``_epoch``,
    ``_not_converged_message`` and, if the start is not w = 0, ``_init_weights(X, y)``;
    an algorithm that prepares its data first overrides ``_fit_augmented`` and calls
    ``_run_epochs`` itself.
    """

    def fit(self, X, y, *, callback=None, **params):
        """Learn the weights; ``callback(epoch, w)`` is called after every epoch.

        ``w`` is the current augmented weight vector (bias first); copy it to record it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        callback : callable or None
            Called as ``callback(epoch, w)`` after each epoch (epoch counts from 1); ``w``
            is updated in place, so copy it to record it.
        **params
            Not taken: ``sample_weight`` raises a TypeError that names the estimators
            that take it.

        Returns
        -------
        self : object
        """
        refuse_fit_params(self, params)
        return self._fit_with_callback(X, y, callback)

    def _fit_with_callback(self, X, y, callback, sample_weight=None):
        self._callback = callback
        try:
            return self._fit(X, y, sample_weight)
        finally:
            del self._callback

    def _init_weights(self, X, y):
        return np.zeros(X.shape[1])

    def _fit_augmented(self, X, y):
        return self._run_epochs(self._init_weights(X, y), X, y)
