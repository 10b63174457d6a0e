import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls._base import augment
from lincls.datasets import load_iris
from lincls.multiclass import (
    MulticlassPerceptron,
    absolute_correction_increment,
    absolute_correction_threshold,
    kesler_construction,
    multiclass_perceptron_update,
)


def separable_machine(n, d, c, gap=0.3, seed=0):
    """Samples labelled by a random linear machine, keeping only clear winners."""
    rng = np.random.default_rng(seed)
    teacher = rng.normal(size=(c, d + 1))
    X = rng.normal(size=(8 * n, d))
    S = augment(X) @ teacher.T
    top2 = np.sort(S, axis=1)[:, -2:]
    keep = top2[:, 1] - top2[:, 0] > gap
    return X[keep][:n], S[keep][:n].argmax(axis=1)


@parametrize_with_checks([
    MulticlassPerceptron(max_iter=100, random_state=0),
    MulticlassPerceptron(correction="absolute", max_iter=100, random_state=0),
])
# scikit-learn's checks fit capped runs on data that need more epochs: that warning is expected
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- the update rules ---------------------------------------------------------------------
def test_update_touches_only_the_two_classes():
    W = np.arange(12.0).reshape(3, 4)
    z = np.array([1.0, -1.0, 2.0, 0.5])
    new = multiclass_perceptron_update(W.copy(), z, true=2, wrong=0, alpha=0.5)
    np.testing.assert_array_equal(new[2], W[2] + 0.5 * z)
    np.testing.assert_array_equal(new[0], W[0] - 0.5 * z)
    np.testing.assert_array_equal(new[1], W[1])


def test_alpha_star_makes_the_two_scores_tie_exactly():
    W = np.array([[0.0, 1.0, 0.0], [2.0, 3.0, 1.0], [0.0, 0.0, 0.0]])
    z = np.array([1.0, 1.0, 2.0])  # score 1 for class 0, 7 for class 1
    a_star = absolute_correction_threshold(W, z, true=0, wrong=1)
    assert a_star == 6 / (2 * 6)
    new = multiclass_perceptron_update(W.copy(), z, 0, 1, a_star)
    assert new[0] @ z == new[1] @ z


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), eta=st.sampled_from([0.1, 1.0, 3.0]))
def test_absolute_correction_fixes_the_error_it_corrects(seed, eta):
    rng = np.random.default_rng(seed)
    c, d = rng.integers(2, 6), rng.integers(1, 6)
    W, z = rng.normal(size=(c, d)) * rng.uniform(0.1, 10), rng.normal(size=d)
    scores = W @ z
    wrong = int(scores.argmax())
    true = int((wrong + 1 + rng.integers(c - 1)) % c)  # any other class
    alpha = absolute_correction_increment(W, z, true, wrong, eta)
    assert alpha > absolute_correction_threshold(W, z, true, wrong)
    # alpha is the smallest multiple of eta above the threshold
    assert alpha - eta <= absolute_correction_threshold(W, z, true, wrong) + 1e-12
    new = multiclass_perceptron_update(W.copy(), z, true, wrong, alpha)
    assert new[true] @ z > new[wrong] @ z


def test_absolute_correction_need_not_classify_correctly_after_one_update():
    W = np.array([[0.0, 0.0], [3.0, 0.0], [2.9, 0.0]])  # scores 0, 3, 2.9 for z = e1
    z = np.array([1.0, 0.0])
    alpha = absolute_correction_increment(W, z, true=0, wrong=1, eta=0.01)
    new = multiclass_perceptron_update(W.copy(), z, 0, 1, alpha)
    assert new[0] @ z > new[1] @ z  # the same error is not repeated ...
    assert (new @ z).argmax() == 2  # ... but a third class now wins


# -- Kesler's construction ---------------------------------------------------------------
def test_kesler_vectors_encode_the_linear_machine():
    X, y = separable_machine(40, 3, 4, seed=1)
    Z = augment(X)
    K, pairs = kesler_construction(Z, y, n_classes=4)
    assert K.shape == (40 * 3, 4 * 4) and pairs.shape == (120, 3)
    W = np.random.default_rng(2).normal(size=(4, 4))
    S = Z @ W.T
    margins = (K @ W.ravel()).reshape(40, 3)  # w_i·z - w_j·z for the three j != i
    correct = np.all(margins > 0, axis=1)
    expected = np.array([np.all(np.delete(S[n], y[n]) < S[n, y[n]]) for n in range(40)])
    np.testing.assert_array_equal(correct, expected)


def test_multiclass_update_is_a_perceptron_step_in_kesler_space():
    rng = np.random.default_rng(3)
    W, z = rng.normal(size=(3, 4)), rng.normal(size=4)
    K, pairs = kesler_construction(z[None, :], np.array([2]), n_classes=3)
    row = np.flatnonzero(pairs[:, 2] == 0)[0]  # the pair (true 2, wrong 0)
    new = multiclass_perceptron_update(W.copy(), z, 2, 0, 0.7)
    np.testing.assert_allclose(new.ravel(), W.ravel() + 0.7 * K[row])


def test_kesler_validates_labels():
    with pytest.raises(ValueError, match="class indices"):
        kesler_construction([[1.0]], [-1])
    with pytest.raises(ValueError, match="n_classes=2"):
        kesler_construction([[1.0], [2.0]], [0, 2], n_classes=2)


# -- the estimator -------------------------------------------------------------------------
@pytest.mark.parametrize("correction", ["fixed", "absolute"])
@pytest.mark.parametrize("shuffle", [True, False])
def test_converges_on_separable_three_class_data(correction, shuffle):
    X, y = separable_machine(150, 2, 3, seed=4)
    clf = MulticlassPerceptron(correction=correction, shuffle=shuffle, random_state=0).fit(X, y)
    assert clf.converged_ and clf.history_["mistakes"][-1] == 0
    assert clf.score(X, y) == 1.0
    assert clf.coef_.shape == (3, 2) and clf.intercept_.shape == (3,)
    S = clf.decision_function(X)
    top = np.sort(S, axis=1)
    assert np.all(top[:, -1] > top[:, -2])  # strict winners
    np.testing.assert_array_equal(clf.predict(X), S.argmax(axis=1))


def reference_multiclass(Z, t, c, eta, correction, max_iter):
    """The textbook loop: one sample at a time."""
    W, epochs = np.zeros((c, Z.shape[1])), 0
    for _ in range(max_iter):
        mistakes = 0
        for z, i in zip(Z, t, strict=True):
            s = W @ z
            rivals = np.delete(np.arange(c), i)
            j = rivals[np.argmax(s[rivals])]
            if s[j] >= s[i]:
                if correction == "fixed":
                    alpha = eta
                else:
                    alpha = eta * (np.floor((s[j] - s[i]) / (2 * z @ z) / eta) + 1)
                W[i] += alpha * z
                W[j] -= alpha * z
                mistakes += 1
        epochs += 1
        if mistakes == 0:
            break
    return W, epochs


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), correction=st.sampled_from(["fixed", "absolute"]),
       eta=st.sampled_from([0.5, 1.0]), c=st.integers(2, 5))
def test_compiled_epoch_equals_the_textbook_loop(seed, correction, eta, c):
    rng = np.random.default_rng(seed)
    X, t = rng.normal(size=(30, 3)), rng.integers(0, c, size=30)
    t[:c] = np.arange(c)  # every class present
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MulticlassPerceptron(eta=eta, correction=correction, shuffle=False,
                                   max_iter=15).fit(X, t)
    W, epochs = reference_multiclass(augment(X), t, c, eta, correction, 15)
    assert clf.n_iter_ == epochs  # neither stops early nor late
    np.testing.assert_allclose(np.column_stack([clf.intercept_, clf.coef_]), W, atol=1e-9)


def test_iris_with_any_labels_and_a_warning_when_not_separable():
    X, y = load_iris()
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    with pytest.warns(ConvergenceWarning, match="training errors after max_iter=50"):
        clf = MulticlassPerceptron(max_iter=50, random_state=0).fit(X, names)
    assert not clf.converged_ and clf.n_iter_ == 50
    assert clf.coef_.shape == (3, 4)
    assert set(clf.predict(X)) <= set(names)
    assert clf.score(X, names) > 0.6


def test_two_classes_give_a_signed_decision_function():
    X, y = separable_machine(60, 2, 2, seed=6)
    clf = MulticlassPerceptron(random_state=0).fit(X, y)
    assert clf.coef_.shape == (2, 2)
    d = clf.decision_function(X)
    assert d.shape == (60,)
    np.testing.assert_array_equal(clf.predict(X), (d > 0).astype(int))


@pytest.mark.parametrize("params, message", [
    ({"eta": 0}, r"'eta' parameter of MulticlassPerceptron .* range \(0.0, inf\)"),
    ({"eta": -1.0}, r"'eta' parameter of MulticlassPerceptron .* range \(0.0, inf\)"),
    ({"correction": "relative"}, "'correction' parameter of .* must be a str among"),
    ({"max_iter": 2.5}, r"'max_iter' parameter of MulticlassPerceptron .* range \[1, inf\)"),
    ({"fit_intercept": 1}, "'fit_intercept' parameter of .* must be an instance of 'bool'"),
])
def test_bad_hyper_parameters(params, message):
    X, y = separable_machine(20, 2, 3)
    with pytest.raises(ValueError, match=message):
        MulticlassPerceptron(**params).fit(X, y)


def test_one_class_is_rejected():
    with pytest.raises(ValueError, match="at least 2 classes"):
        MulticlassPerceptron().fit([[0.0], [1.0]], [3, 3])


def test_works_in_a_pipeline_and_grid_search():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = separable_machine(90, 2, 3, seed=8)
    search = GridSearchCV(make_pipeline(StandardScaler(), MulticlassPerceptron(random_state=0)),
                          {"multiclassperceptron__correction": ["fixed", "absolute"]},
                          cv=3).fit(X, y)
    assert search.best_score_ > 0.9


def test_callback_sees_every_epoch_and_the_final_weights():
    X, y = load_iris()
    path = []
    with pytest.warns(ConvergenceWarning):
        clf = MulticlassPerceptron(max_iter=4, random_state=0).fit(
            X, y, callback=lambda epoch, W: path.append((epoch, W.copy())))
    assert [e for e, _ in path] == [1, 2, 3, 4] and clf.n_iter_ == 4
    np.testing.assert_array_equal(path[-1][1], np.column_stack([clf.intercept_, clf.coef_]))
