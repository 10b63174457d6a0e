"""Optimal stability: Minover and AdaTron against scikit-learn's hard-margin linear SVM.

Task: teacher–student, N = 200, α = 5 (P = 1000), homogeneous. Each side must reach a
stability κ ≥ 0.999 κ_opt, with κ_opt computed exactly beforehand (least-distance
problem by NNLS). lincls stops by its own certificate (tol = 1e-3, which implies the
goal without knowing κ_opt); scikit-learn's ``LinearSVC(fit_intercept=False,
loss="hinge", C=1e6)`` is the homogeneous hard-margin SVM (``SVC`` always fits an
intercept and so solves a different problem).
"""

import numpy as np
from sklearn.svm import LinearSVC

from benchmarks._harness import Case
from lincls.datasets import teacher_student
from lincls.stability import AdaTron, Minover, exact_optimal_stability


def cases():
    X, y, _ = teacher_student(1000, 200, random_state=0)
    kappa_opt = exact_optimal_stability(X, y)[0]

    def kappa(w):
        w = np.ravel(w)
        return float(np.min(y * (X @ w)) / np.linalg.norm(w))

    def check(w_lincls, w_sklearn):
        a, b = kappa(w_lincls) / kappa_opt, kappa(w_sklearn) / kappa_opt
        ok = "yes" if min(a, b) >= 0.999 else "NO"
        return f"κ/κ_opt = {a:.5f} vs {b:.5f} ({ok})"

    def svc():
        return LinearSVC(fit_intercept=False, loss="hinge", C=1e6, max_iter=100_000).fit(X, y).coef_

    return [
        Case("AdaTron (γ=1.5) to κ ≥ 0.999 κ_opt, teacher–student N=200, α=5",
             lambda: AdaTron(learning_rate=1.5, max_iter=20_000, tol=1e-3).fit(X, y).coef_,
             svc, check, target=1.0, repeats=3),
        Case("AdaTron (γ=1) to κ ≥ 0.999 κ_opt, teacher–student N=200, α=5",
             lambda: AdaTron(max_iter=20_000, tol=1e-3).fit(X, y).coef_,
             svc, check, target=1.0, repeats=3),
        Case("Minover to κ ≥ 0.999 κ_opt, teacher–student N=200, α=5",
             lambda: Minover(max_iter=5_000_000, tol=1e-3).fit(X, y).coef_,
             svc, check, target=3.0, repeats=3),
    ]
