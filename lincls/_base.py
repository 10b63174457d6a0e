"""The shared base of every linear classifier in the book.

Defined in chapter "Linear discriminant functions" (``book/linear_discriminants.md``).

A linear classifier predicts ``sign(w · x + b)``. Every algorithm of the book differs
only in how it *learns* ``w`` and ``b``; everything else lives here, once:

* input validation with scikit-learn's own tools,
* the mapping of any two labels to -1/+1 (``classes_[1]`` is the positive class),
* the augmented ("clamped input") vector x̃ = (1, x) that turns the bias into a weight,
* ``decision_function``, ``predict`` and ``score``.

A subclass implements one method, ``_fit_augmented(X, y)``, which receives the
(augmented, when ``fit_intercept=True``) inputs and labels in {-1, +1} and returns the
weight vector w̃ (with the bias first).
"""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["LinearClassifier", "IterativeClassifier", "IterativeMixin", "augment",
           "labels_to_signs"]


def augment(X):
    """Return the augmented inputs x̃ = (1, x), one row per sample.

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

    ``classes`` is sorted as :func:`numpy.unique` sorts it, and ``classes[1]`` maps to +1.

    Raises
    ------
    ValueError
        If ``y`` does not hold exactly two distinct labels.
    """
    if classes is None:
        classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(
            "Only binary classification is supported. The labels must hold exactly 2 "
            f"classes; got {len(classes)} class(es): {list(classes)[:5]}."
        )
    return classes, np.where(y == classes[1], 1.0, -1.0)


def _check_positive(name, value, *, allow_inf=False, integer=False):
    """Raise ValueError unless ``value`` is a positive (integer) number."""
    ok_type = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, bool) or not isinstance(value, ok_type) or not value > 0:
        kind = "a positive integer" if integer else "a positive number"
        raise ValueError(f"{name} must be {kind}; got {value!r}.")
    if not allow_inf and not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value!r}.")


def _check_flag(name, value):
    """Raise ValueError unless ``value`` is True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}.")


def _check_interval(name, value, low, high, *, closed=(False, False)):
    """Raise ValueError unless ``value`` is a real number in the interval (low, high).

    ``closed`` says which ends belong to the interval; ``high=np.inf`` with an open
    right end asks for a finite number.
    """
    is_number = isinstance(value, (int, float, np.integer, np.floating))
    inside = is_number and not isinstance(value, bool) and (
        (low <= value if closed[0] else low < value)
        and (value <= high if closed[1] else value < high))
    if not inside:
        left, right = "[" if closed[0] else "(", "]" if closed[1] else ")"
        raise ValueError(f"{name} must be a number in the interval {left}{low}, {high}{right}; "
                         f"got {value!r}.")


class LinearClassifier(ClassifierMixin, BaseEstimator):
    """Base class: a two-class linear classifier ``sign(w · x + b)``.

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    # -- the one method an algorithm writes --------------------------------------------
    def _fit_augmented(self, X, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _validate_params(self):
        """Check hyper-parameters; subclasses extend it."""
        _check_flag("fit_intercept", self.fit_intercept)

    # -- shared machinery -------------------------------------------------------------
    def fit(self, X, y):
        """Learn the weights from samples ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs.
        y : array-like of shape (n_samples,)
            Two distinct labels of any type.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, signs = labels_to_signs(y)
        Xa = augment(X) if self.fit_intercept else X
        w = np.asarray(self._fit_augmented(Xa, signs), dtype=float)
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

        A sample exactly on the hyperplane (activation 0) gets ``classes_[0]``, so that the
        learning rules, which count y (w · x) ≤ 0 as a mistake, agree with the prediction.
        """
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def _not_converged(self, message):
        """Mark the fit as not converged and warn, as every bounded fit must."""
        self.converged_ = False
        warnings.warn(message, ConvergenceWarning, stacklevel=4)


class IterativeMixin:
    """The one training loop of every iterative estimator of the book.

    Defined in chapter "Linear discriminant functions". The loop owns what every
    iterative algorithm shares: the order of the samples (a new permutation from
    ``random_state`` each epoch when the estimator has ``shuffle=True``), the bound
    ``max_iter``, ``n_iter_``, ``history_``, ``converged_``, the ConvergenceWarning and
    the per-epoch ``callback`` of ``fit``. An algorithm supplies

    * ``_epoch(w, X, y) -> (values, done)``: one pass over the samples in the order given,
      updating the weights ``w`` in place; ``values`` is a dict of numbers for
      ``history_``, ``done`` says whether the algorithm has converged;
    * ``_not_converged_message()``, the text of the warning.
    """

    _callback = None

    def _run_epochs(self, w, X, y):
        """Run ``_epoch`` until it reports convergence or ``max_iter`` epochs; return w."""
        rng = check_random_state(getattr(self, "random_state", None))
        shuffle = getattr(self, "shuffle", False)
        history = {}
        self.converged_ = False
        for epoch in range(1, self.max_iter + 1):
            order = rng.permutation(len(y)) if shuffle else slice(None)
            values, done = self._epoch(w, X[order], y[order])
            for key, value in values.items():
                history.setdefault(key, []).append(value)
            if self._callback is not None:
                self._callback(epoch, w)
            if done:
                self.converged_ = True
                break
        self.n_iter_ = epoch
        self.history_ = {key: np.asarray(v) for key, v in history.items()}
        if not self.converged_:
            self._not_converged(self._not_converged_message())
        return w

    def _not_converged(self, message):
        """Mark the fit as not converged and warn, as every bounded fit must."""
        self.converged_ = False
        warnings.warn(message, ConvergenceWarning, stacklevel=5)


class IterativeClassifier(IterativeMixin, LinearClassifier):
    """Base class of the two-class classifiers trained epoch by epoch (see IterativeMixin).

    Defined in chapter "Linear discriminant functions". A subclass supplies ``_epoch``,
    ``_not_converged_message`` and, if the start is not w = 0, ``_init_weights(X, y)``.
    """

    def fit(self, X, y, *, callback=None):
        """Learn the weights; ``callback(epoch, w)`` is called after every epoch.

        ``w`` is the current augmented weight vector (bias first); copy it to record it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        callback : callable or None
            Called as ``callback(epoch, w)`` after each epoch (epoch counts from 1).

        Returns
        -------
        self : object
        """
        self._callback = callback
        try:
            return super().fit(X, y)
        finally:
            del self._callback

    def _init_weights(self, X, y):
        return np.zeros(X.shape[1])

    def _fit_augmented(self, X, y):
        return self._run_epochs(self._init_weights(X, y), X, y)
