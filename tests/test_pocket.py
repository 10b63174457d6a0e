"""Tests of lincls.pocket: the pocket algorithm and the modified perceptron."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import learning_curve
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import augment
from lincls.datasets import load_breast_cancer, logic_gate, teacher_student
from lincls.perceptron import Perceptron, is_mistake, perceptron_update
from lincls.pocket import ModifiedPerceptron, Pocket, best_helper, training_errors


def _quiet_fit(clf, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clf.fit(X, y)


def visited_weights(X, y, max_iter):
    """Every weight vector the textbook perceptron holds, with the run it achieved."""
    Xa = augment(X)
    w = np.zeros(Xa.shape[1])
    visited, run = [], 0
    for _ in range(max_iter):
        mistakes = 0
        for x, t in zip(Xa, y, strict=True):
            if is_mistake(w, x, t):
                visited.append((w.copy(), run))
                perceptron_update(w, x, t, 1.0)
                run, mistakes = 0, mistakes + 1
            else:
                run += 1
        if mistakes == 0:
            break
    visited.append((w.copy(), run))
    return Xa, visited


@st.composite
def small_problems(draw):
    n = draw(st.integers(4, 30))
    X = np.array(draw(st.lists(st.lists(st.integers(-3, 3), min_size=2, max_size=2),
                               min_size=n, max_size=n)), dtype=float)
    y = np.array(draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n)))
    y[0], y[-1] = -1, 1
    return X, y


@settings(max_examples=80, deadline=None)
@given(small_problems(), st.integers(1, 6))
def test_ratchet_pocket_holds_the_fewest_errors_seen(problem, max_iter):
    X, y = problem
    clf = _quiet_fit(Pocket(shuffle=False, max_iter=max_iter), X, y)
    Xa, visited = visited_weights(X, y, max_iter)
    errors = [training_errors(Xa, y, w) for w, _ in visited]
    best = int(np.argmin(errors))  # the first weights with the fewest errors
    assert clf.pocket_errors_ == errors[best] == np.sum(clf.predict(X) != y)
    np.testing.assert_array_equal(clf.weights_, visited[best][0])


@settings(max_examples=80, deadline=None)
@given(small_problems(), st.integers(1, 6))
def test_gallant_pocket_holds_the_longest_run(problem, max_iter):
    X, y = problem
    clf = _quiet_fit(Pocket(shuffle=False, max_iter=max_iter, ratchet=False), X, y)
    _, visited = visited_weights(X, y, max_iter)
    runs = [run for _, run in visited]
    best = int(np.argmax(runs))
    if runs[best] == 0:  # no run at all: the pocket keeps the zero start
        best_w = np.zeros(X.shape[1] + 1)
    else:
        best_w = visited[best][0]
    np.testing.assert_array_equal(clf.weights_, best_w)


def test_pocket_runs_the_same_perceptron():
    X, y = load_breast_cancer()
    X = StandardScaler().fit_transform(X)
    pocket = _quiet_fit(Pocket(shuffle=False, max_iter=20), X, y)
    plain = _quiet_fit(Perceptron(shuffle=False, max_iter=20), X, y)
    assert pocket.history_["errors"].tolist() == plain.history_["errors"].tolist()
    assert pocket.pocket_errors_ <= np.sum(plain.predict(X) != y)
    assert np.all(np.diff(pocket.history_["pocket_errors"]) <= 0)  # the ratchet


def test_pocket_on_separable_data_is_the_perceptron():
    X, y, _ = teacher_student(100, 5, random_state=0)
    pocket = Pocket(shuffle=False).fit(X, y)
    plain = Perceptron(shuffle=False).fit(X, y)
    assert pocket.converged_ and pocket.pocket_errors_ == 0
    np.testing.assert_array_equal(pocket.coef_, plain.coef_)


def test_pocket_xor_warns_and_keeps_one_error():
    X, y = logic_gate("xor")
    with pytest.warns(ConvergenceWarning, match="1 training errors"):
        clf = Pocket(max_iter=10, random_state=0).fit(X, y)
    assert clf.pocket_errors_ == 1 and not clf.converged_


def reference_modified(X, y, *, c, eta, max_iter, seed, update):
    """Seed 001's modified perceptron as a plain loop (prose version: the best j)."""
    Xa = augment(X)
    w = np.random.RandomState(seed).uniform(-1, 1, Xa.shape[1])
    for _ in range(max_iter):
        changed = False
        for i in range(len(Xa)):
            if y[i] * (w @ Xa[i]) < c * np.sqrt(w @ w):
                gains = [y[i] * ((w + eta * y[j] * Xa[j]) @ Xa[i]) for j in range(len(Xa))]
                j = int(np.argmax(gains)) if update == "best" else i
                w = w + eta * y[j] * Xa[j]
                changed = True
        if not changed:
            break
    return w


@pytest.mark.parametrize("update", ["best", "self"])
@pytest.mark.parametrize("seed", range(3))
def test_modified_perceptron_matches_reference_loop(update, seed):
    X, y, _ = teacher_student(30, 3, noise=0.1, random_state=seed)
    clf = _quiet_fit(ModifiedPerceptron(shuffle=False, random_state=seed, max_iter=8,
                                        update=update, eta=0.5), X, y)
    w_ref = reference_modified(X, y, c=0.01, eta=0.5, max_iter=8, seed=seed, update=update)
    np.testing.assert_allclose(clf.weights_, w_ref, rtol=1e-9, atol=1e-9)


def test_helpers_are_recorded():
    X, y, _ = teacher_student(30, 3, noise=0.1, random_state=0)
    clf = _quiet_fit(ModifiedPerceptron(update="self", shuffle=False, max_iter=3,
                                        random_state=0), X, y)
    assert len(clf.history_["helpers"]) == clf.t_ == clf.history_["errors"].sum()
    # with update="self" each helper is the problem itself: the first one is a problem
    w0 = np.random.RandomState(0).uniform(-1, 1, 4)
    Z = y[:, None] * augment(X)
    first = clf.history_["helpers"][0]
    assert Z[first] @ w0 < 0.01 * np.linalg.norm(w0)
    assert np.all(Z[:first] @ w0 >= 0.01 * np.linalg.norm(w0))


def test_best_helper_raises_the_margin_most():
    Z = np.array([[1.0, 0.0], [3.0, 0.5], [0.0, 1.0]])
    assert best_helper(Z, 0) == 1  # the longer, similar sample helps sample 0 more
    assert best_helper(Z, 2) == 2


def test_modified_perceptron_separates_or_gate():
    X, y = logic_gate("or")
    clf = ModifiedPerceptron(random_state=0).fit(X, y)
    assert clf.converged_ and clf.score(X, y) == 1.0
    assert np.all(y * clf.decision_function(X) >= 0.01 * np.linalg.norm(clf.weights_))


@pytest.mark.parametrize("cls, params, message", [
    (Pocket, {"ratchet": "yes"}, "'ratchet' parameter of Pocket must be an instance of 'bool'"),
    (Pocket, {"eta": -1.0}, r"'eta' parameter of Pocket must be a float in the range \(0.0, inf"),
    (ModifiedPerceptron, {"c": -0.1}, r"'c' parameter of .* in the range \[0.0, inf\)"),
    (ModifiedPerceptron, {"c": float("nan")}, r"'c' parameter of .* in the range \[0.0, inf\)"),
    (ModifiedPerceptron, {"update": "worst"}, "'update' parameter of .* must be a str among"),
    (ModifiedPerceptron, {"max_iter": 0}, r"'max_iter' parameter of .* an int in the range \[1"),
])
def test_bad_parameters_raise(cls, params, message):
    X, y = logic_gate("and")
    with pytest.raises(ValueError, match=message):
        cls(**params).fit(X, y)


def test_pipeline_and_learning_curve():
    X, y = load_breast_cancer()
    for clf in (Pocket(max_iter=10, random_state=0),
                ModifiedPerceptron(max_iter=5, random_state=0)):
        pipe = make_pipeline(StandardScaler(), clf)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            _, _, test = learning_curve(pipe, X, y, train_sizes=[0.5, 1.0], cv=3)
        assert test.mean() > 0.7


@parametrize_with_checks([Pocket(random_state=0, max_iter=100),
                          Pocket(ratchet=False, random_state=0, max_iter=100),
                          ModifiedPerceptron(random_state=0, max_iter=50)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)
