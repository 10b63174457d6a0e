"""lincls.perceptron.Perceptron against sklearn.linear_model.Perceptron (chapter "The perceptron").

Both run the textbook loop: samples in order (``shuffle=False``), zero start, an update
w ← w + η y x̃ at every y (w · x̃) ≤ 0, a fixed number of epochs (``tol=None``). With
``fit_intercept=False`` the two compute the very same weights, bit for bit; with a bias
scikit-learn adds the bias after the sum instead of before it, so the last bits may
differ. scikit-learn always runs all ``max_iter`` epochs, lincls stops after an epoch
without mistakes (no weight would change anyway).

The defaults users run shuffle every epoch, so the first rows time that configuration
(a bias, ``shuffle=True``, a fixed number of epochs) against scikit-learn's, and against
the floor of an epoch: it reads X once and takes one dot product per row, as one
matrix–vector product ``X @ w`` on one core does; a streaming read ``X.sum()`` is reported
beside it.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron

from lincls.datasets import load_breast_cancer, load_digits_4_vs_9, teacher_student
from lincls.perceptron import Perceptron

from ._harness import Case, epoch_floors


def _pair(X, y, epochs, fit_intercept):
    def ours():
        return Perceptron(fit_intercept=fit_intercept, shuffle=False, max_iter=epochs).fit(X, y)

    def theirs():
        return SkPerceptron(fit_intercept=fit_intercept, shuffle=False, tol=None,
                            max_iter=epochs).fit(X, y)

    def check(a, b):
        same = np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
        diff = "identical weights" if same else (
            f"max |Δw| = {np.max(np.abs(a.coef_ - b.coef_)):.1e}")
        return (f"E_in {np.mean(a.predict(X) != y):.4f} / {np.mean(b.predict(X) != y):.4f}, "
                f"{diff}, epochs {a.n_iter_} / {b.n_iter_}")

    return ours, theirs, check


def _shuffled(X, y, epochs):
    """The default configuration, ``epochs`` epochs, against the same number of passes."""
    def ours():
        return Perceptron(max_iter=epochs, random_state=0).fit(X, y)

    def theirs():
        return SkPerceptron(max_iter=epochs, tol=None, random_state=0).fit(X, y)

    def check(a, b):
        return (f"E_in {np.mean(a.predict(X) != y):.4f} / {np.mean(b.predict(X) != y):.4f}, "
                f"epochs {a.n_iter_} / {b.n_iter_}")

    return ours, theirs, check, epoch_floors(X, epochs, 2.5)


def _epochs_to_converge(X, y, fit_intercept):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = Perceptron(fit_intercept=fit_intercept, shuffle=False, max_iter=1000).fit(X, y)
    return clf.n_iter_


def cases():
    X, y, _ = teacher_student(20_000, 500, random_state=0)
    ours, theirs, check, floors = _shuffled(X, y, 30)
    yield Case("teacher–student 20000×500, 30 epochs, defaults (bias, shuffled)",
               ours, theirs, check, target=1.0, repeats=3, floors=floors)
    for epochs, target in [(200, 1.0), (30, 1.0)]:
        yield Case(f"teacher–student 20000×500, {epochs} epochs, no bias",
                   *_pair(X, y, epochs, False), target=target, repeats=3,
                   floors=epoch_floors(X, epochs, 1.5))
    X, y = load_digits_4_vs_9()
    epochs = _epochs_to_converge(X, y, True)
    yield Case(f"digits 4-vs-9 (361×64), {epochs} epochs (until separated)",
               *_pair(X, y, epochs, True), target=1.0, repeats=5)
    X, y = load_breast_cancer()
    yield Case("breast cancer (569×30), 100 epochs, not separable",
               *_pair(X, y, 100, True), target=1.0, repeats=5)
