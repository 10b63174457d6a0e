"""A shuffled epoch visits the rows through the permutation instead of copying X, and
gives the very weights the copying epoch gave (issue 44, "The defaults users run").

Three checks: (1) fits recorded with the code that copied ``X[order]`` every epoch, on
integer data where every sum is exact (so the digests hold on any processor);
(2) on real-valued data, every per-sample estimator against the same estimator with the
copying epoch of before, bit for bit (same permutations, same operations in the same
order); (3) a shuffled epoch allocates no copy of X.
"""

import hashlib
import tracemalloc
import warnings

import numpy as np
import pytest
from numba import njit
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler

from lincls._base import augment
from lincls.adaline import Adaline, lms_epoch
from lincls.datasets import load_breast_cancer, load_digits_4_vs_9, teacher_student
from lincls.multiclass import MulticlassPerceptron, multiclass_epoch
from lincls.perceptron import Perceptron, is_mistake, perceptron_update
from lincls.pocket import Pocket
from lincls.relaxation import Relaxation, relaxation_epoch


def _digest(clf):
    h = hashlib.sha256()
    for a in (clf.coef_, clf.intercept_, *[clf.history_[k] for k in sorted(clf.history_)]):
        h.update(np.ascontiguousarray(a, dtype="<f8").tobytes())
    return h.hexdigest()[:16]


# (estimator, random_state, n_iter_, digest of coef_, intercept_ and history_), recorded
# with the code before the change (commit 7a3bf57), which copied X[order] every epoch
RECORDED = [
    ("Perceptron", 0, 2, "ef20d372af191a24"),
    ("Pocket", 0, 2, "98b9492116ebb4d0"),
    ("MulticlassPerceptron", 0, 15, "93fb6107e8276659"),
    ("Perceptron", 1, 3, "d163843876b0f48b"),
    ("Pocket", 1, 3, "fed0ea50972cd6df"),
    ("MulticlassPerceptron", 1, 15, "c47916c789150c36"),
    ("Perceptron", 2, 5, "2bbe7bc88c1da0c6"),
    ("Pocket", 2, 5, "3b223f04ee72c1d7"),
    ("MulticlassPerceptron", 2, 15, "61795e624782def3"),
]


@pytest.mark.parametrize("name, seed, n_iter, digest", RECORDED)
def test_recorded_shuffled_fits(name, seed, n_iter, digest):
    if name == "MulticlassPerceptron":
        X, y = load_digits(return_X_y=True)
        clf = MulticlassPerceptron(random_state=seed, max_iter=15)
    else:
        X, y = load_digits_4_vs_9()
        clf = {"Perceptron": Perceptron(random_state=seed),
               "Pocket": Pocket(random_state=seed, max_iter=15)}[name]
    assert np.array_equal(X, np.round(X))  # small integers, η = 1: every sum is exact
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    assert (clf.n_iter_, _digest(clf)) == (n_iter, digest)


# -- the copying epochs of before, kept here as the reference ------------------------

@njit(cache=True)
def _copied_textbook_epoch(w, X, y, eta):  # the loop before: row after row, in order
    mistakes = 0
    for i in range(X.shape[0]):
        if is_mistake(w, X[i], y[i]):
            perceptron_update(w, X[i], y[i], eta)
            mistakes += 1
    return mistakes


class _CopyingPerceptron(Perceptron):
    def _epoch(self, w, X, y, order):
        mistakes = _copied_textbook_epoch(w, X[order], y[order], float(self.eta))
        return {"errors": mistakes}, mistakes == 0


class _CopyingMulticlass(MulticlassPerceptron):
    def _epoch(self, W, Z, t, order):
        mistakes = multiclass_epoch(W, Z[order], t[order], float(self.eta),
                                    self.correction == "absolute")
        return {"mistakes": mistakes}, mistakes == 0


class _CopyingRelaxation(Relaxation):
    def _epoch(self, w, Z, y, order):
        import lincls.relaxation as module

        def copying(w, Z_, b, eta, threshold, order_=None):
            return relaxation_epoch(w, Z_[order], b, eta, threshold)

        module.relaxation_epoch = copying
        try:
            return super()._epoch(w, Z, y, order)
        finally:
            module.relaxation_epoch = relaxation_epoch


class _CopyingAdaline(Adaline):
    def _epoch(self, state, X, y, order):
        import lincls.adaline as module

        def copying(w, X_, y_, eta, batch_size, eta_decay, step, order_=None,
                    sample_weight=None):
            assert sample_weight is None  # this test runs unweighted fits
            return lms_epoch(w, X_[order], y_[order], eta, batch_size, eta_decay, step)

        module.lms_epoch = copying
        try:
            return super()._epoch(state, X, y, order)
        finally:
            module.lms_epoch = lms_epoch


def _data(name):
    if name == "teacher-student":
        X, y, _ = teacher_student(300, 20, random_state=1)
    elif name == "breast cancer":
        X, y = load_breast_cancer()
        X = StandardScaler().fit_transform(X)
    else:
        X, y = load_digits(return_X_y=True)
        X = X / 16.0 + 0.01  # real-valued, so that rounding is everywhere
    return X, y


PAIRS = [
    (Perceptron, _CopyingPerceptron, {"max_iter": 40}),
    (Perceptron, _CopyingPerceptron, {"max_iter": 40, "eta": 0.1, "fit_intercept": False}),
    (Relaxation, _CopyingRelaxation, {"max_iter": 15}),
    (Relaxation, _CopyingRelaxation, {"max_iter": 15, "eta": 1.5, "margin": 0.5}),
    (Adaline, _CopyingAdaline, {"max_iter": 15, "batch_size": 1, "eta": 0.001}),
    (Adaline, _CopyingAdaline, {"max_iter": 15, "batch_size": 16, "eta": 0.001,
                                "eta_decay": True}),
]


def _same(a, b):
    assert a.n_iter_ == b.n_iter_
    assert a.coef_.tobytes() == b.coef_.tobytes()
    assert a.intercept_.tobytes() == b.intercept_.tobytes()
    assert a.history_.keys() == b.history_.keys()
    for key in a.history_:
        assert np.asarray(a.history_[key]).tobytes() == np.asarray(b.history_[key]).tobytes()


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


@pytest.mark.parametrize("data", ["teacher-student", "breast cancer"])
@pytest.mark.parametrize("cls, copying, params", PAIRS,
                         ids=[f"{c.__name__}-{k}" for k, (c, _, _) in enumerate(PAIRS)])
def test_binary_estimators_identical_to_copying_epoch(data, cls, copying, params):
    X, y = _data(data)
    for seed in (0, 3):
        _same(_fit(cls(random_state=seed, **params), X, y),
              _fit(copying(random_state=seed, **params), X, y))


@pytest.mark.parametrize("correction, eta", [("fixed", 1.0), ("fixed", 0.1), ("absolute", 0.5)])
def test_multiclass_identical_to_copying_epoch(correction, eta):
    X, y = _data("digits")
    for seed in (0, 3):
        params = {"random_state": seed, "max_iter": 10, "correction": correction, "eta": eta}
        _same(_fit(MulticlassPerceptron(**params), X, y), _fit(_CopyingMulticlass(**params), X, y))


# -- a shuffled epoch copies nothing of X ---------------------------------------------

def _epoch_allocation(est, state, X, y):
    order = np.random.RandomState(0).permutation(len(y))
    est._epoch(state, X, y, order)  # compile and warm up outside the measurement
    tracemalloc.start()
    try:
        est._epoch(state, X, y, order)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("make", [
    lambda X: (Perceptron(), np.zeros(X.shape[1])),
    lambda X: (Relaxation(), np.zeros(X.shape[1])),
    lambda X: (Adaline(batch_size=1, eta=1e-4),
               {"w": np.zeros(X.shape[1]), "step": 0, "epoch": 0}),
], ids=["Perceptron", "Relaxation", "Adaline"])
def test_shuffled_epoch_does_not_copy_X(make):
    X, y, _ = teacher_student(4000, 200, random_state=0)
    X = augment(X)
    y = np.where(y > 0, 1.0, -1.0)
    est, state = make(X)
    if isinstance(est, Relaxation):
        est._loss0 = np.inf  # set by fit; the divergence test needs it
        X = X * y[:, None]
    assert _epoch_allocation(est, state, X, y) < X.nbytes / 8


def test_multiclass_shuffled_epoch_does_not_copy_Z():
    Z = augment(teacher_student(4000, 200, random_state=0)[0])
    t = np.arange(len(Z)) % 3
    W = np.zeros((3, Z.shape[1]))
    assert _epoch_allocation(MulticlassPerceptron(), W, Z, t) < Z.nbytes / 8
