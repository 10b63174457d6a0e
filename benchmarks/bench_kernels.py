"""Kernels and logistic regression against scikit-learn on the same data.

- ``KernelPerceptron`` (cubic kernel) against ``sklearn.linear_model.Perceptron`` on the
  explicit cubic feature map (1,771 features for 20 inputs), same samples in the same
  order and the same number of epochs: both make the same mistakes, so the check column
  shows the fraction of differing predictions. scikit-learn gets the map precomputed.
  Target: ratio ≤ 1.0.
- ``KernelSVM`` against ``SVC`` with the same kernel on 3,000 noisy two-moons samples,
  both at libsvm's default tol = 1e-3; the check column shows both dual objectives.
  Target ≤ 1.0 at C = 1, also for the cubic kernel on 10,000 samples, where the rows of
  the Gram matrix that ``KernelSVM`` keeps come to about 200 MB; at C = 100 (tens of
  thousands of SMO steps), report only.
- ``LogisticRegression`` (Newton) against scikit-learn's ``lbfgs`` and
  ``newton-cholesky`` on a 10,000 × 50 noisy teacher–student set, no penalty, both at
  tol = 1e-10; the check column shows max |Δw|. Target: ratio ≤ 1.0.
"""

import numpy as np
from sklearn.datasets import make_moons
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.linear_model import Perceptron as SkPerceptron
from sklearn.svm import SVC

from benchmarks._harness import Case
from lincls.datasets import teacher_student
from lincls.kernels import (
    KernelPerceptron,
    KernelSVM,
    kernel_dual_objective,
    kernel_matrix,
    polynomial_feature_map,
)
from lincls.logistic import LogisticRegression


def _perceptron_case():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4000, 20))
    phi = polynomial_feature_map(X, degree=3)
    m = phi @ rng.standard_normal(phi.shape[1])
    keep = np.abs(m) > 0.3 * m.std()                       # a margin in feature space
    X, phi, y = X[keep], phi[keep], np.where(m[keep] > 0, 1, -1)
    epochs = KernelPerceptron(degree=3, fit_intercept=False).fit(X, y).n_iter_

    def check(a, b):
        differ = np.mean(a.predict(X) != b.predict(phi))
        return f"{epochs} epochs, differing predictions {differ:.3f}"

    return Case(task=f"KernelPerceptron (cubic) vs Perceptron on φ(x), {len(y)}×20 → "
                     f"{phi.shape[1]} features",
                lincls=lambda: KernelPerceptron(degree=3, fit_intercept=False).fit(X, y),
                sklearn=lambda: SkPerceptron(fit_intercept=False, shuffle=False, tol=None,
                                             eta0=1.0, max_iter=epochs).fit(phi, y),
                check=check, target=1.0, repeats=3)


def _svm_case(kernel, params, C, target, n=3000):
    X, y = make_moons(n, noise=0.3, random_state=0)
    signs = np.where(y == 1, 1.0, -1.0)

    def dual(clf):
        alpha = np.zeros(len(y))
        alpha[clf.support_] = np.abs(clf.dual_coef_.ravel())
        sv = clf.support_
        K = kernel_matrix(X[sv], X[sv], kernel=kernel, **params)
        return kernel_dual_objective(alpha[sv], K, signs[sv])

    def check(a, b):
        return f"dual {dual(a):.7g} / {dual(b):.7g}"

    return Case(task=f"KernelSVM vs SVC({kernel}), moons {n}×2, C={C:g}",
                lincls=lambda: KernelSVM(C=C, kernel=kernel, **params).fit(X, y),
                sklearn=lambda: SVC(C=C, kernel=kernel, **params).fit(X, y),
                check=check, target=target, repeats=5)


def _logistic_cases():
    X, y, _ = teacher_student(10_000, 50, noise=0.2, random_state=0)

    def check(a, b):
        return f"max |Δw| = {np.max(np.abs(a.coef_ - b.coef_)):.1e}"

    for solver in ("newton-cholesky", "lbfgs"):
        yield Case(task=f"LogisticRegression vs {solver}, teacher-student 10000×50, no penalty",
                   lincls=lambda: LogisticRegression(tol=1e-10).fit(X, y),
                   sklearn=lambda s=solver: SkLogisticRegression(
                       C=np.inf, solver=s, tol=1e-10, max_iter=10_000).fit(X, y),
                   check=check, target=1.0, repeats=5)


def cases():
    out = [_perceptron_case()]
    out.append(_svm_case("rbf", {"gamma": 1.0}, 1.0, 1.0))
    out.append(_svm_case("poly", {"gamma": 1.0, "degree": 3, "coef0": 1.0}, 1.0, 1.0))
    out.append(_svm_case("poly", {"gamma": 1.0, "degree": 3, "coef0": 1.0}, 1.0, 1.0, n=10_000))
    out.append(_svm_case("rbf", {"gamma": 1.0}, 100.0, None))
    out += list(_logistic_cases())
    return out
