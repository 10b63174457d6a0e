"""lincls: the algorithms of the open textbook *Linear Classification*.

One module per chapter topic; each module's docstring names the chapter that defines it.

- :mod:`lincls.datasets` — generated data (teacher–student, random labels, logic gates)
  and loaders for the data scikit-learn ships.
- :mod:`lincls.discriminant` — linear discriminants with given weights; separability test.
- :mod:`lincls.metrics` — error rate, generalization error, stabilities.
- :mod:`lincls.plotting` — ``plot_decision_regions``.
- :mod:`lincls.perceptron` — Rosenblatt's perceptron (exactly the textbook loop, fast),
  the maximal margin and Novikoff's bound.
- :mod:`lincls.pocket` — the pocket algorithm (with and without ratchet) and the
  "modified perceptron".
- :mod:`lincls.stability` — Hebb, Minover (with its certificate), AdaTron; batched
  teacher–student simulations.
- :mod:`lincls.theory` — large-N learning curves and Gardner's capacity.
- :mod:`lincls.relaxation` — relaxation with margin (single sample and batch), fractional
  correction.
- :mod:`lincls.multiclass` — the linear machine, Kesler's construction, the multi-class
  perceptron with fixed and absolute correction.
- :mod:`lincls.quiz` — the chapters' concept quizzes (``quiz``), one source for the
  website, JupyterLab and Colab.
- :mod:`lincls.homework` — what a homework notebook imports: the self-check ``check`` and
  ``expected``, the teacher's value in a hidden test.

The book's machinery (homework release and grading, the student edition, the Sphinx
extensions) is the sibling package ``booktools`` in ``tools/``; lincls imports none of it.
"""

import importlib

# Each public name and the module that defines it, imported on first use (PEP 562):
# ``from lincls import Perceptron`` and ``lincls.Perceptron`` work as usual, while
# ``import lincls.homework`` (a homework's self-check) or ``from lincls.perceptron import
# ...`` (a chapter) loads only what it needs, not scikit-learn and numba for every algorithm.
_EXPORTS = {
    "IterativeClassifier": "_base", "LinearClassifier": "_base", "augment": "_base",
    "labels_to_signs": "_base",
    "Adaline": "adaline",
    "load_breast_cancer": "datasets", "load_digits_4_vs_9": "datasets", "load_iris": "datasets",
    "logic_gate": "datasets", "random_labels": "datasets", "teacher_student": "datasets",
    "LinearDiscriminant": "discriminant", "is_linearly_separable": "discriminant",
    "max_margin": "discriminant",
    "KernelPerceptron": "kernels", "KernelSVM": "kernels",
    "HoKashyap": "least_squares", "LeastSquares": "least_squares",
    "LogisticRegression": "logistic",
    "AveragedPerceptron": "margin", "FisherDiscriminant": "margin", "VotedPerceptron": "margin",
    "error_rate": "metrics", "generalization_error": "metrics", "stabilities": "metrics",
    "MulticlassPerceptron": "multiclass",
    "PCA": "pca",
    "Perceptron": "perceptron", "novikoff_bound": "perceptron",
    "ModifiedPerceptron": "pocket", "Pocket": "pocket",
    "Relaxation": "relaxation", "fractional_correction": "relaxation",
    "AdaTron": "stability", "Hebb": "stability", "Minover": "stability",
    "exact_optimal_stability": "stability",
    "LinearSVM": "svm",
}


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value  # the next lookup finds it directly
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


__version__ = "2026.1"  # the book's edition (_config.yml's release)
__all__ = [
    # estimators, in the order of the book
    "LinearDiscriminant", "Perceptron", "Pocket", "ModifiedPerceptron", "Hebb", "Minover",
    "AdaTron", "Relaxation", "MulticlassPerceptron", "Adaline", "LeastSquares", "HoKashyap",
    "PCA", "LinearSVM", "AveragedPerceptron", "VotedPerceptron", "FisherDiscriminant",
    "LogisticRegression", "KernelPerceptron", "KernelSVM",
    # the bases every estimator builds on
    "LinearClassifier", "IterativeClassifier", "augment", "labels_to_signs",
    # data, measures and discriminant tools
    "teacher_student", "random_labels", "logic_gate", "load_iris", "load_breast_cancer",
    "load_digits_4_vs_9", "error_rate", "generalization_error", "stabilities",
    "is_linearly_separable", "max_margin", "novikoff_bound", "exact_optimal_stability",
    "fractional_correction", "__version__",
]
