"""The multi-class perceptron's two counts: mistakes (the true class does not strictly win,
the rule's update condition) and training errors (``predict`` disagrees with the label;
the first class wins a tie). book/notation.md defines both words."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from lincls.multiclass import MulticlassPerceptron


def test_not_converged_warning_counts_training_errors_not_mistakes():
    # The same input with labels 0 and 1. In the one epoch (in order, from W = 0) both
    # samples are mistakes and corrected, and W returns to 0: both scores tie at 0. Then
    # both samples are still mistakes, but predict gives class 0 on the tie, so only the
    # sample of class 1 is a training error.
    X, y = np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([0, 1])
    clf = MulticlassPerceptron(fit_intercept=False, shuffle=False, max_iter=1)
    with pytest.warns(ConvergenceWarning, match=r"left 1 training errors after max_iter=1"):
        clf.fit(X, y)
    assert clf.history_["mistakes"].tolist() == [2]
    np.testing.assert_array_equal(clf.coef_, np.zeros((2, 2)))
    assert int(np.sum(clf.predict(X) != y)) == 1
