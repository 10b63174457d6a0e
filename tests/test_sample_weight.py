"""sample_weight and class_weight: what a weight means, estimator by estimator.

A weight s_i ≥ 0 counts sample i s_i times, as in scikit-learn. What holds exactly
depends on the algorithm, and each test below asserts only that:

* Estimators that minimize a sum over the samples (LeastSquares: Σ s_i e_i²;
  LogisticRegression: Σ s_i log-loss; LinearSVM and KernelSVM: slack priced C s_i, the
  box 0 ≤ α_i ≤ C s_i; full-batch Adaline: the weighted mean squared error) have the
  same objective with an integer weight n as with n copies of the sample, hence the same
  optimum: scikit-learn's ``check_sample_weight_equivalence_on_dense_data`` passes, for
  the iterative solvers with a tolerance tight enough that "the same optimum" shows.
* The per-sample rules (Perceptron; Adaline with ``batch_size=1`` or mini-batches)
  scale the step of sample i by s_i. A weight n is then *not* n copies: the copies are
  visited one by one, and each step changes w before the next copy is tested (the
  second copy of a perceptron mistake is often no mistake). What holds exactly, bit for
  bit, shuffled or not: a weight 0 is the sample removed; weights all 1 are the
  unweighted run; weights all c are the run with learning rate η c (for mini-batches,
  c a power of two, whose products are exact).
* Everywhere: weights of 0 drop the sample before anything else (so the classes are
  those of positive weight); negative, non-finite, all-zero or misshapen weights raise a
  ValueError; ``class_weight`` multiplies its per-class weights into ``sample_weight``;
  the estimators whose rule has no weighted form raise a TypeError naming those that do.
* ``sample_weight=None`` runs the unweighted code unchanged (the weights are not
  multiplied in as ones); a digits fit whose weights are integers, so exact in any
  order, is pinned to the hash of the weights before weights existed.
"""

import hashlib
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data

from lincls import (
    Adaline,
    HoKashyap,
    KernelPerceptron,
    KernelSVM,
    LeastSquares,
    LinearSVM,
    LogisticRegression,
    Minover,
    MulticlassPerceptron,
    Perceptron,
    Pocket,
    Relaxation,
)
from lincls.datasets import load_breast_cancer, load_digits_4_vs_9, teacher_student
from lincls.margin import VotedPerceptron
from lincls.pocket import ModifiedPerceptron

# Estimators whose weighted objective is that of the copies, with tolerances tight enough
EQUIVALENT = [
    LeastSquares(),
    LeastSquares(fit_intercept=False),
    LogisticRegression(C=1.0),
    LogisticRegression(C=0.1, fit_intercept=False),
    Adaline(eta=0.5, tol=1e-12, max_iter=200_000),
    LinearSVM(tol=1e-10),
    LinearSVM(C=0.1, solver="smo", tol=1e-10, max_iter=200_000),
    KernelSVM(tol=1e-10),
    KernelSVM(kernel="poly", degree=2, fit_intercept=False, tol=1e-10),
]
WEIGHTED = EQUIVALENT + [Perceptron(random_state=0), Perceptron(shuffle=False),
                         Adaline(batch_size=1, max_iter=20, random_state=0),
                         Adaline(batch_size=4, max_iter=20, random_state=0)]
REFUSING = [Pocket(), ModifiedPerceptron(), HoKashyap(), Relaxation(), Minover(),
            KernelPerceptron(), MulticlassPerceptron(), VotedPerceptron()]


def _data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0, "yes", "no")
    return X, y, rng.integers(0, 4, size=n).astype(float)


def _quiet(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit()


def _output(est, X):
    return est.decision_function(X)


@pytest.mark.parametrize("estimator", EQUIVALENT, ids=repr)
def test_scikit_learns_check_weights_equal_copies(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_sample_weight_equivalence_on_dense_data(type(estimator).__name__, estimator)


@pytest.mark.parametrize("estimator", EQUIVALENT, ids=repr)
def test_integer_weights_equal_copies_on_noisy_data(estimator):
    X, y, s = _data()
    weighted = _quiet(lambda: estimator.__class__(**estimator.get_params()).fit(X, y, s))
    copies = _quiet(lambda: estimator.__class__(**estimator.get_params()).fit(
        X.repeat(s.astype(int), axis=0), y.repeat(s.astype(int))))
    np.testing.assert_allclose(_output(weighted, X), _output(copies, X), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("estimator", WEIGHTED, ids=repr)
def test_weight_zero_is_the_sample_removed_bit_for_bit(estimator):
    X, y, s = _data(seed=1)
    s[s == 0] = 0.0
    s[s > 0] = 1.0                               # zeros and ones: the rest unweighted
    kept = s > 0
    a = _quiet(lambda: estimator.__class__(**estimator.get_params()).fit(X, y, s))
    b = _quiet(lambda: estimator.__class__(**estimator.get_params()).fit(X[kept], y[kept]))
    assert np.array_equal(_output(a, X), _output(b, X))


@pytest.mark.parametrize("estimator", WEIGHTED, ids=repr)
def test_weights_all_one_and_none_are_the_unweighted_run_bit_for_bit(estimator):
    X, y, _ = _data(seed=2)
    runs = [_quiet(lambda w=w: estimator.__class__(**estimator.get_params()).fit(X, y, w))
            for w in (None, np.ones(len(y)), 1.0, [1] * len(y))]
    for other in runs[1:]:
        assert np.array_equal(_output(runs[0], X), _output(other, X))


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("c", [2.0, 0.3])
def test_perceptron_weights_all_c_are_learning_rate_eta_c(shuffle, c):
    X, y, _ = teacher_student(200, 10, noise=0.2, random_state=0)
    a = _quiet(lambda: Perceptron(eta=0.7, shuffle=shuffle, random_state=3, max_iter=20)
               .fit(X, y, sample_weight=np.full(len(y), c)))
    b = _quiet(lambda: Perceptron(eta=0.7 * c, shuffle=shuffle, random_state=3, max_iter=20)
               .fit(X, y))
    assert np.array_equal(a.weights_, b.weights_) and a.t_ == b.t_


@pytest.mark.parametrize("batch_size", [1, 5])
def test_adaline_per_sample_weights_all_c_are_learning_rate_eta_c(batch_size):
    X, y, _ = teacher_student(200, 10, noise=0.2, random_state=0)
    c = 2.0 if batch_size > 1 else 0.3      # mini-batch sums: c a power of two, exactly
    a = _quiet(lambda: Adaline(eta=0.01, batch_size=batch_size, random_state=3, max_iter=5)
               .fit(X, y, sample_weight=np.full(len(y), c)))
    b = _quiet(lambda: Adaline(eta=0.01 * c, batch_size=batch_size, random_state=3,
                               max_iter=5).fit(X, y))
    assert np.array_equal(a.weights_, b.weights_)


def test_perceptron_weight_n_is_not_n_copies():
    """The documented difference: x = 1 (label +1) with weight 2 is one mistake, w = 2;
    its two copies are one mistake (w = 1) and then no mistake (1 · 1 > 0)."""
    X, y = np.array([[1.0], [-1.0]]), np.array([1, -1])
    a = Perceptron(shuffle=False, fit_intercept=False).fit(X, y, sample_weight=[2.0, 1.0])
    b = Perceptron(shuffle=False, fit_intercept=False).fit(X[[0, 0, 1]], y[[0, 0, 1]])
    assert (a.coef_.item(), a.t_) == (2.0, 1) and (b.coef_.item(), b.t_) == (1.0, 1)


def test_weighted_perceptron_separates_separable_data():
    X, y, _ = teacher_student(300, 10, random_state=4)
    s = np.random.default_rng(0).uniform(0.1, 5.0, size=len(y))
    clf = Perceptron(random_state=0).fit(X, y, sample_weight=s)
    assert clf.converged_ and np.all(clf.predict(X) == y)


def test_unweighted_perceptron_unchanged_since_before_weights():
    """Digits have integer pixels, so the weights (η = 1) are integers, exact in any order:
    the SHA-256 of the weights computed by the code before sample weights existed."""
    X, y = load_digits_4_vs_9()
    for kw, digest in [({"shuffle": False}, "f29e805d9c3518cd"),
                       ({"random_state": 0}, "e65611ff04a9f7dd")]:
        w = Perceptron(max_iter=50, **kw).fit(X, y).weights_
        assert hashlib.sha256(w.tobytes()).hexdigest()[:16] == digest


def test_least_squares_weights_drop_their_margins():
    X, y, s = _data(seed=3)
    b = np.linspace(0.5, 2.0, len(y))
    kept = s > 0
    a = LeastSquares(margins=b).fit(X, y, sample_weight=s)
    r = np.sqrt(s[kept])
    Xa = np.hstack([np.ones((kept.sum(), 1)), X[kept]])
    signs = np.where(y[kept] == "yes", 1.0, -1.0)
    expected = np.linalg.lstsq(Xa * r[:, None], r * signs * b[kept], rcond=None)[0]
    np.testing.assert_allclose(a.weights_, expected, atol=1e-10)
    assert a.margins_.shape == a.residual_.shape == (kept.sum(),)


@pytest.mark.parametrize("estimator", [Perceptron(shuffle=False, max_iter=20), LeastSquares(),
                                       LogisticRegression(C=1.0), LinearSVM(tol=1e-8),
                                       KernelSVM(tol=1e-8)], ids=repr)
@pytest.mark.parametrize("class_weight", ["balanced", {"yes": 3.0, "no": 0.5}])
def test_class_weight_is_sample_weight_by_class(estimator, class_weight):
    X, y, s = _data(seed=4)
    s += 0.5
    a = _quiet(lambda: estimator.__class__(
        **{**estimator.get_params(), "class_weight": class_weight}).fit(X, y, sample_weight=s))
    b = _quiet(lambda: estimator.__class__(**estimator.get_params()).fit(
        X, y, sample_weight=s * compute_sample_weight(class_weight, y)))
    np.testing.assert_allclose(_output(a, X), _output(b, X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("ours, theirs", [
    (LogisticRegression(C=1.0, tol=1e-14), "LogisticRegression(C=1.0, tol=1e-12)"),
    (LinearSVM(tol=1e-10), "SVC(kernel='linear', tol=1e-10)"),
    (KernelSVM(gamma=0.1, tol=1e-10), "SVC(gamma=0.1, tol=1e-10)"),
], ids=["logistic", "linear-svm", "kernel-svm"])
@pytest.mark.parametrize("weights", ["sample", "balanced"])
def test_weighted_fits_match_scikit_learn(ours, theirs, weights):
    from sklearn.linear_model import LogisticRegression  # noqa: F401 (eval'd below)
    from sklearn.svm import SVC  # noqa: F401

    X, y = load_breast_cancer()
    X = (X - X.mean(0)) / X.std(0)
    s = np.random.default_rng(5).integers(0, 4, size=len(y)).astype(float)
    sk = eval(theirs)
    if weights == "balanced":
        ours.set_params(class_weight="balanced")
        sk.set_params(class_weight="balanced")
        s = None
    ours.fit(X, y, sample_weight=s)
    sk.fit(X, y, sample_weight=s)
    np.testing.assert_allclose(ours.decision_function(X), sk.decision_function(X), atol=2e-4)


@pytest.mark.parametrize("estimator", WEIGHTED, ids=repr)
@pytest.mark.parametrize("weights, message", [
    (lambda n: -np.ones(n), "Negative values in data passed to `sample_weight`"),
    (lambda n: np.zeros(n), "Sample weights must contain at least one non-zero"),
    (lambda n: np.r_[np.nan, np.ones(n - 1)], "Input sample_weight contains NaN"),
    (lambda n: np.ones(n + 1), r"sample_weight.shape == \(61,\), expected \(60,\)"),
    (lambda n: np.ones((n, 2)), "Sample weights must be 1D array or scalar"),
], ids=["negative", "all-zero", "nan", "length", "2d"])
def test_bad_weights_raise(estimator, weights, message):
    X, y, _ = _data()
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, y, sample_weight=weights(len(y)))


@pytest.mark.parametrize("estimator", WEIGHTED, ids=repr)
def test_weights_leaving_one_class_raise_naming_the_class(estimator):
    X, y, _ = _data()
    with pytest.raises(ValueError, match=r"got 1 class\(es\)"):
        estimator.fit(X, y, sample_weight=(y == "yes").astype(float))


@pytest.mark.parametrize("estimator", REFUSING, ids=repr)
def test_estimators_without_a_weighted_rule_refuse_naming_those_with_one(estimator):
    X, y, s = _data()
    with pytest.raises(TypeError, match=r"does not take sample_weight.*np\.repeat.*"
                                         r"Perceptron, Adaline, LeastSquares"):
        estimator.fit(X, y, sample_weight=s)


def test_sample_weight_is_not_modified():
    X, y, s = _data()
    s0 = s.copy()
    for est in WEIGHTED:
        _quiet(lambda est=est: est.fit(X, y, sample_weight=s))
        assert np.array_equal(s, s0)
