"""The multi-class perceptron against scikit-learn's one-vs-rest perceptrons on digits.

scikit-learn's ``Perceptron`` trains one binary perceptron per class (one-vs-rest) in
compiled code; ``lincls.multiclass.MulticlassPerceptron`` trains the linear machine of
chapter "Multi-category classification" with NumPy. Both see the same training split
of the 8×8 digits (10 classes), in the same order (no shuffling), with η = 1 and the
same epoch budget; the table reports the test accuracy and the epochs each one ran. The
last row runs both in their defaults (shuffled every epoch), with the same budget.
"""

import warnings

from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron
from sklearn.model_selection import train_test_split

from lincls.multiclass import MulticlassPerceptron

from ._harness import Case


def _data():
    X, y = load_digits(return_X_y=True)
    return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)


def cases():
    X_train, X_test, y_train, y_test = _data()

    # textbook=True: in order, η = 1, no penalty; False: each one's defaults (shuffled)
    def lincls(epochs, textbook=True):
        options = {"shuffle": False} if textbook else {"random_state": 0}

        def run():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                return MulticlassPerceptron(max_iter=epochs, **options).fit(X_train, y_train)
        return run

    def sklearn(epochs, textbook=True):
        options = ({"shuffle": False, "eta0": 1.0, "alpha": 0.0} if textbook
                   else {"random_state": 0})

        def run():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                return Perceptron(max_iter=epochs, tol=None, **options).fit(X_train, y_train)
        return run

    def check(ours, theirs):
        return (f"test acc {ours.score(X_test, y_test):.3f} vs {theirs.score(X_test, y_test):.3f}; "
                f"train acc {ours.score(X_train, y_train):.3f} vs "
                f"{theirs.score(X_train, y_train):.3f}; epochs {ours.n_iter_} vs {theirs.n_iter_}")

    return [
        Case("digits (10 classes): multi-class vs one-vs-rest perceptron, 20 epochs each",
             lincls(20), sklearn(20), check, target=1.0),
        Case("digits (10 classes): multi-class vs one-vs-rest perceptron, 100 epochs each",
             lincls(100), sklearn(100), check, target=1.0, repeats=3),
        Case("digits (10 classes): budget of 300 epochs, lincls stops when it converges",
             lincls(300), sklearn(300), check, target=None, repeats=3),
        Case("digits (10 classes): defaults (shuffled), 20 epochs each",
             lincls(20, textbook=False), sklearn(20, textbook=False), check, target=1.0),
    ]
