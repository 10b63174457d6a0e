"""The ``eta`` docstring of Perceptron: from w = 0 the learning rate only scales the run
in exact arithmetic and, in floating point, for powers of two; η = 0.1 changes the run."""

import inspect
import re

import numpy as np

from lincls.datasets import logic_gate
from lincls.perceptron import Perceptron


def _eta_doc():
    """The indented description under ``eta : ...`` in the Parameters section."""
    match = re.search(r"^eta : .*\n((?:    .*\n)+)", inspect.getdoc(Perceptron), re.M)
    return " ".join(match[1].split())


def test_eta_docstring_numbers_are_what_the_perceptron_does():
    X, y = logic_gate("and")
    t_one = Perceptron(shuffle=False, eta=1.0).fit(X, y).t_
    t_tenth = Perceptron(shuffle=False, eta=0.1).fit(X, y).t_
    assert (t_tenth, t_one) == (8, 18)
    doc = _eta_doc()
    assert "power of two" in doc and "exact" in doc
    match = re.search(r"η = 0\.1 makes (\d+) updates and η = 1 makes (\d+)", doc)
    assert match and (int(match[1]), int(match[2])) == (t_tenth, t_one)


def test_powers_of_two_copy_the_run_and_other_rates_need_not():
    X, y = logic_gate("and")
    for seed in range(5):
        base = Perceptron(eta=1.0, random_state=seed).fit(X, y)
        for eta in (0.5, 0.25, 4.0):
            other = Perceptron(eta=eta, random_state=seed).fit(X, y)
            assert other.t_ == base.t_
            np.testing.assert_array_equal(other.coef_, eta * base.coef_)
        assert Perceptron(eta=0.1, random_state=seed).fit(X, y).t_ != base.t_
