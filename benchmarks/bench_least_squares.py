"""LeastSquares and Adaline against scikit-learn on the same data.

* ``LeastSquares`` against ``RidgeClassifier(alpha=0)``: both compute the unregularized
  least-squares fit to the labels ±1 with an intercept; the check shows they agree.
* ``LeastSquares`` against ``LinearRegression`` on the labels ±1 as numbers: the same
  least-squares fit with an intercept (scikit-learn centres the data, we augment it).
  Both spend their time in the QR factorization that gelsd starts a tall problem with;
  lincls computes it as a tall-skinny QR, blocks of rows side by side, and then runs
  gelsd on the small triangular factor. Target ≤ 0.8, room for a busy machine.
* Full-batch ``Adaline`` against ``SGDRegressor`` at equal epochs: the same squared loss,
  one full-batch gradient step per epoch against one pass of per-sample steps per epoch.
* Online ``Adaline(batch_size=1)`` against ``SGDRegressor``: the very same Widrow–Hoff
  updates (equal weights up to rounding: lincls adds the bias first, scikit-learn after
  the sum), our compiled loop (numba) against scikit-learn's Cython loop; on 20000×500
  also against the floors of an epoch (report only). Each update needs the activation of
  its sample, summed from left to right: 500 additions that wait for each other, which
  bounds an epoch at several times ``X @ w``; lincls also records the loss, the mistakes
  and the gradient's norm after each epoch (two more reads of X) and copies X once to
  augment it, which scikit-learn's loop does not.
"""

import numpy as np
from sklearn.linear_model import LinearRegression, RidgeClassifier, SGDRegressor
from sklearn.preprocessing import StandardScaler

from lincls.adaline import Adaline
from lincls.datasets import load_breast_cancer, teacher_student
from lincls.least_squares import LeastSquares

from ._harness import Case, epoch_floors


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


def _linear_regression_case(n_samples, n_features, repeats, target=1.0):
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
        lincls=ours, sklearn=theirs, target=target, repeats=repeats,
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


def _online_adaline_case(n_samples, n_features, epochs, repeats, target=1.0, floors=False,
                         shuffle=False):
    X, y, _ = teacher_student(n_samples, n_features, noise=0.1, random_state=0)
    y = y.astype(float)
    eta = 0.1 / n_features

    def ours():
        clf = Adaline(eta=eta, batch_size=1, max_iter=epochs, shuffle=shuffle, tol=0,
                      random_state=0).fit(X, y)
        return np.concatenate([clf.intercept_, clf.coef_.ravel()])

    def theirs():
        reg = SGDRegressor(penalty=None, learning_rate="constant", eta0=eta, max_iter=epochs,
                           tol=None, shuffle=shuffle, random_state=0).fit(X, y)
        return np.concatenate([reg.intercept_, reg.coef_])

    what = "shuffled as by default, " if shuffle else ""
    return Case(
        task=f"Adaline online (LMS) vs SGDRegressor, {what}{n_samples}x{n_features}, "
             f"{epochs} epochs",
        lincls=ours, sklearn=theirs, target=target, repeats=repeats,
        check=lambda a, b: (f"max |Δw| = {_max_diff(a, b):.1e}" if not shuffle else
                            f"max |w| {np.abs(a).max():.3f} / {np.abs(b).max():.3f}"),
        floors=epoch_floors(X, epochs, None) if floors else {},
    )


def cases():
    yield _least_squares_case(1000, 10, repeats=51)
    yield _least_squares_case(20000, 50, repeats=11)
    yield _linear_regression_case(20000, 300, repeats=5, target=0.8)
    yield _batch_adaline_case(100, repeats=21)
    yield _batch_adaline_case(1000, repeats=11)
    yield _online_adaline_case(1000, 10, 5, repeats=101)
    yield _online_adaline_case(20000, 500, 5, repeats=5, target=None, floors=True)
    yield _online_adaline_case(20000, 500, 5, repeats=5, target=None, floors=True, shuffle=True)
