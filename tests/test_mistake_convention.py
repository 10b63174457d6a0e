"""The two counts of wrong samples, and where they differ (notation page, chapter "The
perceptron").

A *training error* is a sample whose prediction sign(w̃ · x̃), with sign(0) = -1, differs
from its label; a *mistake* is a sample with y (w̃ · x̃) ≤ 0, what the learning rules
correct. They differ only at activation 0 with y = -1. From w̃ = 0 on the AND gate every
activation is 0: 4 mistakes, 1 training error. The inputs are integers, so every number
here is exact. A lincls that predicted +1 at activation 0, or that corrected only y w̃ · x̃ < 0,
fails these tests.
"""

import re
import warnings
from pathlib import Path

import numpy as np

from lincls import augment
from lincls.datasets import logic_gate
from lincls.discriminant import LinearDiscriminant
from lincls.perceptron import Perceptron, is_mistake, next_mistake, perceptron_trace
from lincls.pocket import training_errors

ROOT = Path(__file__).resolve().parents[1]
MISTAKES, ERRORS = 4, 1  # from w = 0 on the AND gate


def and_gate():
    X, y = logic_gate("and")
    return X, y.astype(float)


def test_zero_weights_on_and_make_four_mistakes():
    X, y = and_gate()
    w = np.zeros(3)
    assert sum(bool(is_mistake(w, x, t)) for x, t in zip(augment(X), y)) == MISTAKES
    assert next_mistake(w, augment(X), y, 0) == 0  # (0, 0), label -1, is the first


def test_zero_weights_on_and_make_one_training_error():
    X, y = and_gate()
    assert training_errors(augment(X), y, np.zeros(3)) == ERRORS
    zero = LinearDiscriminant(coef=[0, 0], intercept=0).fit(X)
    assert zero.predict(X).tolist() == [-1, -1, -1, -1]  # sign(0) = -1
    assert int(np.sum(zero.predict(X) != y)) == ERRORS
    assert zero.score(X, y) == 1 - ERRORS / len(y)


def test_activation_zero_predicts_the_first_class_with_any_labels():
    X, _ = and_gate()
    zero = LinearDiscriminant(coef=[0, 0], intercept=0, classes=("off", "on")).fit(X)
    assert set(zero.predict(X)) == {"off"}


def test_the_rule_corrects_a_sample_the_prediction_gets_right():
    """The perceptron's first update from w = 0 is on (0, 0), label -1, activation 0."""
    X, y = and_gate()
    weights, corrected = perceptron_trace(X, y)
    assert corrected[0] == 0 and y[0] == -1
    assert training_errors(augment(X[:1]), y[:1], weights[0]) == 0  # predicted right
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one epoch does not separate AND
        clf = Perceptron(shuffle=False, max_iter=1).fit(X, y)
    assert clf.history_["errors"][0] == 2  # (0, 0) at activation 0, then (1, 1)


def test_the_boundary_and_unit_computes_and():
    """(b, w1, w2) = (-1, 1, 1) has activation 0 on (0, 1) and (1, 0): two mistakes, no
    training error (chapters "Linear discriminant functions" and "The perceptron")."""
    X, y = and_gate()
    w = np.array([-1.0, 1.0, 1.0])
    assert (augment(X) @ w).tolist() == [-1.0, 0.0, 0.0, 1.0]
    assert training_errors(augment(X), y, w) == 0
    assert sum(bool(is_mistake(w, x, t)) for x, t in zip(augment(X), y)) == 2
    unit = LinearDiscriminant(coef=[1, 1], intercept=-1).fit(X)
    assert np.array_equal(unit.predict(X), y)
    negated = LinearDiscriminant(coef=[-1, -1], intercept=1).fit(X)
    assert np.array_equal(negated.predict(X), logic_gate("nor")[1])


def test_the_chapter_reports_these_counts():
    """The perceptron chapter asserts the two counts that lincls computes."""
    text = (ROOT / "book" / "perceptron.md").read_text()
    found = re.search(r"assert \(zero_mistakes, zero_errors\) == \((\d+), (\d+)\)", text)
    assert found, "book/perceptron.md no longer asserts the AND counts from w = 0"
    assert (int(found[1]), int(found[2])) == (MISTAKES, ERRORS)
