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
- :mod:`lincls.homework` — student releases of the homework, answer checks, the student
  site (``python -m lincls.homework``).
"""

from ._base import IterativeClassifier, LinearClassifier, augment, labels_to_signs
from .adaline import Adaline
from .datasets import (
    load_breast_cancer,
    load_digits_4_vs_9,
    load_iris,
    logic_gate,
    random_labels,
    teacher_student,
)
from .discriminant import LinearDiscriminant, is_linearly_separable, max_margin
from .kernels import KernelPerceptron, KernelSVM
from .least_squares import HoKashyap, LeastSquares
from .logistic import LogisticRegression
from .margin import AveragedPerceptron, FisherDiscriminant, VotedPerceptron
from .metrics import error_rate, generalization_error, stabilities
from .multiclass import MulticlassPerceptron
from .pca import PCA
from .perceptron import Perceptron, novikoff_bound
from .pocket import ModifiedPerceptron, Pocket
from .relaxation import Relaxation, fractional_correction
from .stability import AdaTron, Hebb, Minover, exact_optimal_stability
from .svm import LinearSVM

__version__ = "0.1.0"
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
