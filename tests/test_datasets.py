"""Loaders and generators of lincls.datasets."""

import numpy as np
import pytest

from lincls import datasets
from lincls.discriminant import is_linearly_separable


@pytest.mark.parametrize("inputs", ["gaussian", "binary"])
def test_teacher_student_shapes_and_labels(inputs):
    X, y, teacher = datasets.teacher_student(200, 30, inputs=inputs, random_state=1)
    assert X.shape == (200, 30) and y.shape == (200,) and teacher.shape == (30,)
    assert set(np.unique(y)) <= {-1, 1}
    assert np.isclose(np.linalg.norm(teacher), 1.0)
    # without noise the teacher labels every example
    assert np.array_equal(y, np.where(X @ teacher >= 0, 1, -1))
    if inputs == "binary":
        assert set(np.unique(X)) == {-1.0, 1.0}
    else:
        assert abs(X.mean()) < 0.05 and abs(X.std() - 1) < 0.05


def test_teacher_student_reproducible():
    a = datasets.teacher_student(50, 10, noise=0.2, random_state=7)
    b = datasets.teacher_student(50, 10, noise=0.2, random_state=7)
    c = datasets.teacher_student(50, 10, noise=0.2, random_state=8)
    for u, v in zip(a, b):
        assert np.array_equal(u, v)
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("noise", [0.0, 0.1, 0.3, 0.5])
def test_teacher_student_noise_rate_within_sampling_error(noise):
    n = 40_000
    X, y, teacher = datasets.teacher_student(n, 5, noise=noise, random_state=3)
    flipped = np.mean(y != np.where(X @ teacher >= 0, 1, -1))
    sigma = np.sqrt(noise * (1 - noise) / n)
    assert abs(flipped - noise) <= 4 * sigma + 1e-12


def test_random_labels():
    X, y = datasets.random_labels(1000, 4, random_state=0)
    assert X.shape == (1000, 4) and set(np.unique(y)) == {-1, 1}
    assert abs(np.mean(y == 1) - 0.5) < 4 * 0.5 / np.sqrt(1000)
    X2, y2 = datasets.random_labels(1000, 4, random_state=0)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)


def test_logic_gates_are_the_16_boolean_functions():
    gates = datasets.logic_gates()
    assert len(gates) == 16 and tuple(gates) == datasets.GATE_NAMES
    tables = {tuple(y) for _, y in gates.values()}
    assert len(tables) == 16  # all different
    for X, y in gates.values():
        assert X.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
        assert set(np.unique(y)) <= {-1, 1}
    a, b = X[:, 0].astype(bool), X[:, 1].astype(bool)
    truth = {"and": a & b, "or": a | b, "xor": a ^ b, "nand": ~(a & b), "nor": ~(a | b),
             "xnor": ~(a ^ b), "a": a, "not_b": ~b, "not_a_or_b": ~a | b}
    for name, out in truth.items():
        assert np.array_equal(gates[name][1], np.where(out, 1, -1)), name


def test_logic_gate_lookup_and_separability():
    X, y = datasets.logic_gate("AND")
    assert y.tolist() == [-1, -1, -1, 1]
    separable = [n for n, (X, y) in datasets.logic_gates().items() if is_linearly_separable(X, y)]
    assert sorted(set(datasets.GATE_NAMES) - set(separable)) == ["xnor", "xor"]
    with pytest.raises(ValueError, match="Unknown gate"):
        datasets.logic_gate("implies-maybe")


@pytest.mark.parametrize("task, n, pos", [("all", 150, None), ("setosa-vs-rest", 150, 50),
                                          ("versicolor-vs-virginica", 100, 50)])
def test_iris(task, n, pos):
    X, y = datasets.load_iris(task=task)
    assert X.shape == (n, 4) and y.shape == (n,)
    if task == "all":
        assert set(np.unique(y)) == {0, 1, 2}
    else:
        assert set(np.unique(y)) == {-1, 1} and np.sum(y == 1) == pos
    again = datasets.load_iris(task=task)
    assert np.array_equal(X, again[0]) and np.array_equal(y, again[1])


def test_iris_tasks_separability():
    assert is_linearly_separable(*datasets.load_iris(task="setosa-vs-rest"))
    assert not is_linearly_separable(*datasets.load_iris(task="versicolor-vs-virginica"))


def test_iris_feature_selection():
    X, y, names = datasets.load_iris(task="setosa-vs-rest", features=["sepal length (cm)", 1],
                                     return_feature_names=True)
    assert X.shape == (150, 2) and names == ["sepal length (cm)", "sepal width (cm)"]


def test_breast_cancer_and_digits():
    X, y = datasets.load_breast_cancer()
    assert X.shape == (569, 30) and set(np.unique(y)) == {-1, 1}
    assert np.sum(y == 1) == 212  # malignant
    X, y = datasets.load_digits_4_vs_9()
    assert X.shape == (361, 64) and set(np.unique(y)) == {-1, 1}
    assert np.sum(y == 1) == 181  # fours
    assert X.min() == 0 and X.max() == 16


@pytest.mark.parametrize("call, message", [
    (lambda: datasets.teacher_student(0, 5), "n_samples"),
    (lambda: datasets.teacher_student(10, 2.5), "n_features"),
    (lambda: datasets.teacher_student(10, 5, noise=1.5), "noise"),
    (lambda: datasets.teacher_student(10, 5, noise=-0.1), "noise"),
    (lambda: datasets.teacher_student(10, 5, inputs="uniform"), "inputs"),
    (lambda: datasets.random_labels(-3, 5), "n_samples"),
    (lambda: datasets.load_iris(task="setosa-vs-virginica"), "iris task"),
    (lambda: datasets.load_iris(features=["petal colour"]), "Unknown feature"),
    (lambda: datasets.load_iris(features=[7]), "index"),
    (lambda: datasets.load_breast_cancer(features=[]), "at least one"),
])
def test_bad_arguments_raise_clear_value_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
