"""Measures of a linear classifier used throughout the book.

Defined in chapter "Binary classification" (error rate) and used in the
teacher–student chapters (generalization error, stabilities).
"""

import numpy as np

__all__ = ["error_rate", "generalization_error", "stabilities"]


def _vector(name, w):
    w = np.asarray(w, dtype=float)
    if w.ndim == 2 and 1 in w.shape:
        w = w.ravel()
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"{name} must be a non-empty vector; got shape {w.shape}.")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return w


def error_rate(y_true, y_pred):
    """The fraction of labels predicted wrongly, 1 - accuracy.

    Defined in chapter "Binary classification".

    Examples
    --------
    >>> error_rate([1, -1, 1, 1], [1, 1, 1, -1])
    0.5
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or y_true.ndim != 1:
        raise ValueError(f"y_true and y_pred must be 1-D of equal length; got {y_true.shape} "
                         f"and {y_pred.shape}.")
    if y_true.size == 0:
        raise ValueError("error_rate of an empty set of labels is undefined.")
    return float(np.mean(y_true != y_pred))


def generalization_error(w, teacher):
    """ε_g = arccos(R) / π, the probability that student w and teacher disagree.

    Defined in chapter "Learning from a teacher". For isotropic inputs the two
    perceptrons disagree exactly on the inputs that fall in the wedge between their
    hyperplanes, whose angle is arccos(R) with R = w · teacher / (|w| |teacher|).
    ``w`` and ``teacher`` may also be stacks of vectors, one per row (shape
    (n_sets, n_features), n_sets > 1): then ε_g of each row against its teacher.

    Examples
    --------
    >>> generalization_error([1.0, 0.0], [0.0, 1.0])
    0.5
    >>> generalization_error([[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [-1.0, 0.0]]).tolist()
    [0.5, 1.0]
    """
    W, T = np.asarray(w, dtype=float), np.asarray(teacher, dtype=float)
    if W.ndim == 2 and W.shape[0] > 1 or T.ndim == 2 and T.shape[0] > 1:
        if W.shape != T.shape or W.ndim != 2:
            raise ValueError(f"w and teacher must be stacks of equal shape; got {W.shape} "
                             f"and {T.shape}.")
        return np.array([generalization_error(a, b) for a, b in zip(W, T, strict=True)])
    w, teacher = _vector("w", W), _vector("teacher", T)
    if w.shape != teacher.shape:
        raise ValueError(f"w and teacher differ in length: {w.size} vs {teacher.size}.")
    norms = np.linalg.norm(w) * np.linalg.norm(teacher)
    if norms == 0:
        raise ValueError("generalization_error needs non-zero vectors w and teacher.")
    R = np.clip(w @ teacher / norms, -1.0, 1.0)
    return float(np.arccos(R) / np.pi)


def stabilities(w, X, y):
    """κ^μ = y^μ (w · x^μ) / |w| for every sample: signed distances to the hyperplane.

    Defined in chapter "Optimal stability and Minover".

    A sample is classified correctly when its stability is positive; the smallest
    stability is the margin of w on the data.

    Examples
    --------
    >>> stabilities([3.0, 4.0], [[1.0, 0.0], [0.0, 1.0]], [1, -1]).tolist()
    [0.6, -0.8]
    """
    w = _vector("w", w)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or X.shape[1] != w.size or y.shape != (X.shape[0],):
        raise ValueError(f"Shapes do not fit: w {w.shape}, X {X.shape}, y {y.shape}.")
    norm = np.linalg.norm(w)
    if norm == 0:
        raise ValueError("stabilities need a non-zero weight vector w.")
    return y * (X @ w) / norm
