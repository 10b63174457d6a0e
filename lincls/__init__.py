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

from ._base import LinearClassifier, augment

__version__ = "0.1.0"
__all__ = ["LinearClassifier", "augment", "__version__"]
