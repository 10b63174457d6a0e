"""lincls: the algorithms of the open textbook *Linear Classification*.

One module per chapter topic; each module's docstring names the chapter that defines it.

- :mod:`lincls.datasets` — generated data (teacher–student, random labels, logic gates)
  and loaders for the data scikit-learn ships.
- :mod:`lincls.discriminant` — linear discriminants with given weights; separability test.
- :mod:`lincls.metrics` — error rate, generalization error, stabilities.
- :mod:`lincls.plotting` — ``plot_decision_regions``.
- :mod:`lincls.stability` — Hebb, Minover (with its certificate), AdaTron; batched
  teacher–student simulations.
- :mod:`lincls.theory` — large-N learning curves and Gardner's capacity.
- :mod:`lincls.relaxation` — relaxation with margin (single sample and batch), fractional
  correction.
- :mod:`lincls.multiclass` — the linear machine, Kesler's construction, the multi-class
  perceptron with fixed and absolute correction.
"""

from ._base import LinearClassifier, augment

__version__ = "0.1.0"
__all__ = ["LinearClassifier", "augment", "__version__"]
