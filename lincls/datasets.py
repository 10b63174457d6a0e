"""Data sets of the book: generated ones and loaders for the data scikit-learn ships.

Defined in chapter "Binary classification" (``book/binary_classification.md``); the
teacher–student generator is used from the chapter "Learning from a teacher" on.

Nothing here downloads anything: the real data sets are the ones bundled with
scikit-learn (iris, breast cancer, digits). Binary tasks are returned with labels in
{-1, +1}, the first-named class being +1 ("setosa" in "setosa-vs-rest").
"""

import numpy as np
import sklearn.datasets as skd
from sklearn.utils import check_random_state

__all__ = [
    "teacher_student",
    "teacher_student_batch",
    "random_labels",
    "logic_gates",
    "logic_gate",
    "GATE_NAMES",
    "load_iris",
    "load_breast_cancer",
    "load_digits_4_vs_9",
    "IRIS_TASKS",
]

IRIS_TASKS = ("all", "setosa-vs-rest", "versicolor-vs-virginica")

# The 16 Boolean functions of two inputs, by their outputs on (0,0), (0,1), (1,0), (1,1).
_GATES = {
    "false": (0, 0, 0, 0),
    "and": (0, 0, 0, 1),
    "a_and_not_b": (0, 0, 1, 0),
    "a": (0, 0, 1, 1),
    "not_a_and_b": (0, 1, 0, 0),
    "b": (0, 1, 0, 1),
    "xor": (0, 1, 1, 0),
    "or": (0, 1, 1, 1),
    "nor": (1, 0, 0, 0),
    "xnor": (1, 0, 0, 1),
    "not_b": (1, 0, 1, 0),
    "a_or_not_b": (1, 0, 1, 1),
    "not_a": (1, 1, 0, 0),
    "not_a_or_b": (1, 1, 0, 1),
    "nand": (1, 1, 1, 0),
    "true": (1, 1, 1, 1),
}
GATE_NAMES = tuple(_GATES)
_GATE_INPUTS = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)


def _check_count(name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")


def teacher_student(n_samples, n_features, *, noise=0.0, inputs="gaussian", random_state=None):
    """Generate a teacher perceptron and the examples it labels.

    Defined in chapter "Learning from a teacher".

    The teacher is a random direction in R^N with unit length. Inputs are i.i.d. N(0, 1)
    (or ±1 with equal probability when ``inputs="binary"``), labels are
    ``sign(X @ teacher)``, and each label is then flipped independently with
    probability ``noise``.

    Parameters
    ----------
    n_samples : int
        Number of examples P (= αN).
    n_features : int
        Input dimension N.
    noise : float in [0, 1], default=0.0
        Probability λ that a label is flipped.
    inputs : {"gaussian", "binary"}, default="gaussian"
    random_state : int, RandomState or None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), labels in {-1, +1}
    teacher : ndarray of shape (n_features,), unit length

    Examples
    --------
    >>> X, y, teacher = teacher_student(100, 20, random_state=0)
    >>> X.shape, np.unique(y).tolist(), round(float(teacher @ teacher), 12)
    ((100, 20), [-1, 1], 1.0)
    """
    _check_count("n_samples", n_samples)
    _check_count("n_features", n_features)
    if isinstance(noise, bool) or not isinstance(noise, (int, float, np.number)):
        raise ValueError(f"noise must be a probability in [0, 1]; got {noise!r}.")
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise must be a probability in [0, 1]; got {noise!r}.")
    if inputs not in ("gaussian", "binary"):
        raise ValueError(f'inputs must be "gaussian" or "binary"; got {inputs!r}.')
    rng = check_random_state(random_state)
    teacher = rng.standard_normal(n_features)
    teacher /= np.linalg.norm(teacher)
    if inputs == "gaussian":
        X = rng.standard_normal((n_samples, n_features))
    else:
        X = rng.choice([-1.0, 1.0], size=(n_samples, n_features))
    y = np.where(X @ teacher > 0, 1, -1)  # sign(0) = -1, as everywhere in the book
    flip = rng.random_sample(n_samples) < noise
    y[flip] = -y[flip]
    return X, y, teacher


def teacher_student_batch(n_samples, n_features, n_sets, *, noise=0.0, labels="teacher",
                          random_state=0):
    """``n_sets`` independent data sets of one shape, stacked for the batched kernels.

    Defined in chapter "Reproducing and extending the Minover report". Data set r is
    :func:`teacher_student` (or, with ``labels="random"``, :func:`random_labels`) with
    ``random_state + r``, so any one of them can be regenerated on its own.

    Returns
    -------
    X : ndarray of shape (n_sets, n_samples, n_features)
    y : ndarray of shape (n_sets, n_samples), labels ±1 as floats
    teachers : ndarray of shape (n_sets, n_features), or None for random labels

    Examples
    --------
    >>> X, y, teachers = teacher_student_batch(30, 5, 4, random_state=7)
    >>> X.shape, y.shape, teachers.shape
    ((4, 30, 5), (4, 30), (4, 5))
    >>> bool(np.all(X[2] == teacher_student(30, 5, random_state=9)[0]))
    True
    """
    _check_count("n_sets", n_sets)
    if labels not in ("teacher", "random"):
        raise ValueError(f'labels must be "teacher" or "random"; got {labels!r}.')
    if labels == "random":
        sets = [random_labels(n_samples, n_features, random_state=random_state + r) + (None,)
                for r in range(n_sets)]
    else:
        sets = [teacher_student(n_samples, n_features, noise=noise, random_state=random_state + r)
                for r in range(n_sets)]
    X = np.array([s[0] for s in sets])
    y = np.array([s[1] for s in sets], dtype=float)
    return X, y, None if labels == "random" else np.array([s[2] for s in sets])


def random_labels(n_samples, n_features, *, random_state=None):
    """Gaussian inputs with labels ±1 drawn at random, independent of the inputs.

    Defined in chapter "Counting dichotomies: Cover's theorem".

    The setting of Gardner's capacity calculation: how many random dichotomies can a
    perceptron store?

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), labels in {-1, +1}

    Examples
    --------
    >>> X, y = random_labels(6, 3, random_state=0)
    >>> X.shape, sorted(set(y.tolist())) <= [-1, 1]
    ((6, 3), True)
    """
    _check_count("n_samples", n_samples)
    _check_count("n_features", n_features)
    rng = check_random_state(random_state)
    X = rng.standard_normal((n_samples, n_features))
    y = rng.choice([-1, 1], size=n_samples)
    return X, y


def logic_gates():
    """All 16 Boolean functions of two inputs, as classification tasks.

    Defined in chapter "Binary classification".

    Returns
    -------
    dict
        name → ``(X, y)`` with X the four points of {0, 1}² (rows (0,0), (0,1), (1,0),
        (1,1)) and y in {-1, +1} (output 0 ↦ -1, output 1 ↦ +1). The names are
        ``GATE_NAMES``: "and", "or", "xor", "nand", "a_and_not_b", ...

    Examples
    --------
    >>> gates = logic_gates()
    >>> len(gates), gates["xor"][1].tolist()
    (16, [-1, 1, 1, -1])
    """
    return {name: logic_gate(name) for name in GATE_NAMES}


def logic_gate(name):
    """One two-input Boolean function as ``(X, y)``; see :func:`logic_gates`.

    Defined in chapter "Linear discriminant functions".

    Examples
    --------
    >>> X, y = logic_gate("AND")
    >>> y.tolist()
    [-1, -1, -1, 1]
    """
    key = str(name).lower().replace(" ", "_")
    if key not in _GATES:
        raise ValueError(f"Unknown gate {name!r}; choose one of {', '.join(GATE_NAMES)}.")
    return _GATE_INPUTS.copy(), 2 * np.array(_GATES[key]) - 1


def _select_features(X, feature_names, features):
    if features is None:
        return X, list(feature_names)
    names = list(feature_names)
    idx = []
    for f in features:
        if isinstance(f, str):
            if f not in names:
                raise ValueError(f"Unknown feature {f!r}; choose from {names}.")
            idx.append(names.index(f))
        elif isinstance(f, (int, np.integer)) and not isinstance(f, bool) and 0 <= f < len(names):
            idx.append(int(f))
        else:
            raise ValueError(f"Feature {f!r} is neither a name nor an index in [0, {len(names)}).")
    if not idx:
        raise ValueError("features must name at least one feature.")
    return X[:, idx], [names[i] for i in idx]


def load_iris(*, task="all", features=None, return_feature_names=False):
    """Fisher's iris flowers (150 samples, 4 features), from scikit-learn.

    Defined in chapter "Binary classification".

    Parameters
    ----------
    task : {"all", "setosa-vs-rest", "versicolor-vs-virginica"}, default="all"
        "all" keeps the three species with labels 0, 1, 2. "setosa-vs-rest" labels
        setosa +1 and the other 100 flowers -1 (linearly separable).
        "versicolor-vs-virginica" keeps those 100 flowers, versicolor +1 and
        virginica -1 (not linearly separable in all four features).
    features : list of int or str, optional
        Columns to keep, by index or by name, e.g. ``["sepal length (cm)", "sepal width (cm)"]``.
    return_feature_names : bool, default=False
        Also return the names of the kept columns.

    Returns
    -------
    X, y (, feature_names)

    Examples
    --------
    >>> X, y = load_iris()
    >>> X.shape, np.unique(y).tolist()
    ((150, 4), [0, 1, 2])
    """
    if task not in IRIS_TASKS:
        raise ValueError(f"Unknown iris task {task!r}; choose one of {IRIS_TASKS}.")
    data = skd.load_iris()
    X, names = _select_features(data.data, data.feature_names, features)
    y = data.target
    if task == "setosa-vs-rest":
        y = np.where(y == 0, 1, -1)
    elif task == "versicolor-vs-virginica":
        keep = y > 0
        X, y = X[keep], np.where(y[keep] == 1, 1, -1)
    return (X, y, names) if return_feature_names else (X, y)


def load_breast_cancer(*, features=None, return_feature_names=False):
    """Wisconsin breast cancer (569 samples, 30 features), from scikit-learn.

    Defined in chapter "Binary classification".

    It stands in for the heart-disease data of the perceptron-variants report: a
    medical two-class problem. Malignant is +1 (the finding, as "disease present" is +1
    there), benign is -1. The full set is linearly separable, but only just: the largest
    margin of the augmented samples is below 1e-4 (about 4e-5), while their lengths reach
    about 5000, so the perceptron behaves on it as on non-separable data (chapter
    "Non-separable data").

    Returns
    -------
    X, y (, feature_names)

    Examples
    --------
    >>> X, y = load_breast_cancer()
    >>> X.shape, np.unique(y).tolist()
    ((569, 30), [-1, 1])
    >>> from lincls.discriminant import is_linearly_separable, max_margin
    >>> is_linearly_separable(X, y), bool(max_margin(X, y)[1] < 1e-4)
    (True, True)
    """
    data = skd.load_breast_cancer()
    X, names = _select_features(data.data, data.feature_names, features)
    y = np.where(data.target == 0, 1, -1)
    return (X, y, names) if return_feature_names else (X, y)


def load_digits_4_vs_9():
    """Handwritten 4s and 9s from scikit-learn's 8×8 digits (64 features, values 0–16).

    Defined in chapter "Binary classification".

    It stands in for Gisette (the NIPS 2003 challenge set, which is also 4 vs 9). The 4s
    are +1 and the 9s are -1.

    Returns
    -------
    X : ndarray of shape (361, 64)
    y : ndarray of shape (361,), labels in {-1, +1}

    Examples
    --------
    >>> X, y = load_digits_4_vs_9()
    >>> X.shape[1], np.unique(y).tolist()
    (64, [-1, 1])
    """
    data = skd.load_digits()
    keep = (data.target == 4) | (data.target == 9)
    return data.data[keep], np.where(data.target[keep] == 4, 1, -1)
