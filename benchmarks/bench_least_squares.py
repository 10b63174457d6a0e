"""LeastSquares and Adaline against scikit-learn on the same data.

* ``LeastSquares`` against ``RidgeClassifier(alpha=0)``: both compute the unregularized
  least-squares fit to the labels ±1 with an intercept; the check shows they agree.
* ``LeastSquares`` against ``LinearRegression`` on the labels ±1 as numbers: the same
  least-squares fit with an intercept (scikit-learn centres the data, we augment it).
* Full-batch ``Adaline`` against ``SGDRegressor`` at equal epochs: the same squared loss,
  one full-batch gradient step per epoch against one pass of per-sample steps per epoch.
* Online ``Adaline(batch_size=1)`` against ``SGDRegressor``: the very same Widrow–Hoff
  updates (identical weights), our compiled loop (numba) against scikit-learn's Cython loop.
"""

import numpy as np
from sklearn.linear_model import LinearRegression, RidgeClassifier, SGDRegressor
from sklearn.preprocessing import StandardScaler

from lincls.adaline import Adaline
from lincls.datasets import load_breast_cancer, teacher_student
from lincls.least_squares import LeastSquares

from ._harness import Case


def _max_diff(a, b):
    return float(np.max(np.abs(np.ravel(a) - np.ravel(b))))


def _least_squares_case(n_samples, n_features, repeats):
    X, y, _ = teacher_student(n_samples, n_features, noise=0.1, random_state=0)

    def ours():
        clf = LeastSquares().fit(X, y)
        return np.concatenate([clf.intercept_, clf.coef_.ravel()])

    def theirs():
        clf = RidgeClassifier(alpha=0.0, solver="svd").fit(X, y)
        return np.concatenate([np.ravel(clf.intercept_), np.ravel(clf.coef_)])

    return Case(
        task=f"LeastSquares vs RidgeClassifier(alpha=0, svd), {n_samples}x{n_features}",
        lincls=ours, sklearn=theirs, target=1.0, repeats=repeats,
        check=lambda a, b: f"max |Δw| = {_max_diff(a, b):.1e}",
    )


def _linear_regression_case(n_samples, n_features, repeats):
    X, y, _ = teacher_student(n_samples, n_features, noise=0.1, random_state=0)
    y = y.astype(float)

    def ours():
        clf = LeastSquares().fit(X, y)
        return np.concatenate([clf.intercept_, clf.coef_.ravel()])

    def theirs():
        reg = LinearRegression().fit(X, y)
        return np.concatenate([[reg.intercept_], reg.coef_])

    return Case(
        task=f"LeastSquares vs LinearRegression, {n_samples}x{n_features}",
        lincls=ours, sklearn=theirs, target=1.0, repeats=repeats,
        check=lambda a, b: f"max |Δw| = {_max_diff(a, b):.1e}",
    )


def _mse(X, y, coef, intercept):
    return float(np.mean((y - X @ np.ravel(coef) - intercept) ** 2) / 2)


def _batch_adaline_case(epochs, repeats):
    X, y = load_breast_cancer()
    X = StandardScaler().fit_transform(X)
    y = y.astype(float)

    def ours():
        clf = Adaline(eta=0.05, max_iter=epochs, tol=0).fit(X, y)
        return _mse(X, y, clf.coef_, clf.intercept_[0])

    def theirs():
        reg = SGDRegressor(penalty=None, learning_rate="constant", eta0=0.001, max_iter=epochs,
                           tol=None, shuffle=False).fit(X, y)
        return _mse(X, y, reg.coef_, reg.intercept_[0])

    return Case(
        task=f"Adaline full batch vs SGDRegressor, breast cancer, {epochs} epochs",
        lincls=ours, sklearn=theirs, target=1.0, repeats=repeats,
        check=lambda a, b: f"loss {a:.4f} vs {b:.4f}",
    )


def _online_adaline_case(epochs):
    X, y, _ = teacher_student(1000, 10, noise=0.1, random_state=0)
    y = y.astype(float)

    def ours():
        clf = Adaline(eta=0.01, batch_size=1, max_iter=epochs, shuffle=False, tol=0).fit(X, y)
        return np.concatenate([clf.intercept_, clf.coef_.ravel()])

    def theirs():
        reg = SGDRegressor(penalty=None, learning_rate="constant", eta0=0.01, max_iter=epochs,
                           tol=None, shuffle=False).fit(X, y)
        return np.concatenate([reg.intercept_, reg.coef_])

    return Case(
        task=f"Adaline online (LMS) vs SGDRegressor, 1000x10, {epochs} epochs",
        lincls=ours, sklearn=theirs, target=1.0, repeats=101,
        check=lambda a, b: f"max |Δw| = {_max_diff(a, b):.1e}",
    )


def cases():
    yield _least_squares_case(1000, 10, repeats=51)
    yield _least_squares_case(20000, 50, repeats=11)
    yield _linear_regression_case(20000, 300, repeats=5)
    yield _batch_adaline_case(100, repeats=21)
    yield _batch_adaline_case(1000, repeats=11)
    yield _online_adaline_case(5)
