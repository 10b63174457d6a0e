"""The compiled kernels give the results of the same functions run as plain Python.

``NUMBA_DISABLE_JIT=1`` makes every ``@njit`` function run as the Python function the
book shows; this file, run as a script, prints the results of a set of fits, and the
test compares the compiled results with those of a subprocess that runs without JIT.
"""

import os
import pickle
import subprocess
import sys
import warnings

import numpy as np


def results():
    from sklearn.datasets import make_moons

    from lincls.adaline import Adaline
    from lincls.datasets import teacher_student
    from lincls.kernels import KernelPerceptron, KernelSVM
    from lincls.margin import VotedPerceptron
    from lincls.perceptron import Perceptron
    from lincls.stability import AdaTron, Minover

    Xt, yt, _ = teacher_student(120, 6, noise=0.1, random_state=3)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Xs, ys, _ = teacher_student(60, 15, random_state=5)
        for est in (Minover(tol=1e-3), AdaTron(), AdaTron(learning_rate=1.5)):
            est.fit(Xs, ys)
            out[repr(est)] = (est.coef_, est.embedding_strengths_, est.history_["lower"],
                              est.history_["upper"], est.history_["step"])
        for batch_size, decay in [(1, False), (7, True)]:
            clf = Adaline(eta=0.01, batch_size=batch_size, eta_decay=decay, max_iter=5,
                          random_state=0).fit(Xt, yt)
            out[f"adaline-{batch_size}"] = (clf.coef_, clf.intercept_, clf.history_["loss"])
        Xm, ym = make_moons(80, noise=0.3, random_state=0)
        for est in (KernelSVM(C=10.0, kernel="rbf", gamma=2.0),
                    KernelSVM(C=1.0, kernel="poly", degree=3, gamma=1.0, coef0=1.0),
                    KernelSVM(C=1.0, kernel="poly", degree=2, fit_intercept=False),
                    KernelPerceptron(kernel="rbf", gamma=1.0, max_iter=20)):
            est.fit(Xm, ym)
            out[repr(est)] = (est.alpha_, est.intercept_, np.array([est.n_iter_]))
        vote = VotedPerceptron(max_iter=3).fit(Xt, yt)
        out["voted"] = (vote.weights_, vote.counts_)
        # the weighted kernels (sample_weight, tests/test_sample_weight.py)
        Xw, yw, _ = teacher_student(150, 6, noise=0.1, random_state=3)
        s = np.random.default_rng(0).uniform(0.0, 3.0, size=len(yw))
        for key, est in (("weighted perceptron", Perceptron(random_state=0, max_iter=10)),
                         ("weighted adaline-1", Adaline(eta=0.01, batch_size=1, max_iter=5,
                                                        random_state=0)),
                         ("weighted adaline-7", Adaline(eta=0.01, batch_size=7, max_iter=5,
                                                        random_state=0)),
                         ("weighted svm-rbf", KernelSVM(C=3.0, gamma=0.5)),
                         ("weighted svm-poly", KernelSVM(kernel="poly", degree=2,
                                                         fit_intercept=False))):
            est.fit(Xw, yw, sample_weight=s)
            out[key] = (est.decision_function(Xw),)
    return out


# Mini-batch steps use matrix products: NumPy's BLAS in Python, SciPy's BLAS (which numba
# calls) when compiled, which may sum in other orders; these compare within a bound
CLOSE = {"adaline-7": dict(rtol=1e-13, atol=1e-15), "weighted adaline-7": dict(rtol=1e-12)}


def test_compiled_equals_plain_python_bit_for_bit():
    from numba import config
    # this process is the compiled side: under NUMBA_DISABLE_JIT=1 both would be plain
    assert not config.DISABLE_JIT, "run this test without NUMBA_DISABLE_JIT"
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    plain = pickle.loads(subprocess.run([sys.executable, __file__], env=env, check=True,
                                        capture_output=True, timeout=600).stdout)
    compiled = results()
    assert plain.keys() == compiled.keys()
    for key, values in compiled.items():
        for a, b in zip(values, plain[key], strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape, key
            if key in CLOSE:
                np.testing.assert_allclose(a, b, err_msg=key, **CLOSE[key])
            else:
                assert a.tobytes() == b.tobytes(), key  # bit for bit, not just close
    assert compiled["Minover()"][4][-1] > 1  # Minover ran many updates


if __name__ == "__main__":
    import numba

    assert numba.config.DISABLE_JIT  # the plain Python functions run
    sys.stdout.buffer.write(pickle.dumps(results()))
