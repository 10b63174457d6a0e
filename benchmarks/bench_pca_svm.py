"""PCA and the linear SVM against scikit-learn on the same data.

- ``PCA`` against ``sklearn.decomposition.PCA`` on the 1,797 digits (64 pixels), all
  components and "PoV > 0.9". Target: ratio ≤ 1.0.
- ``LinearSVM`` against ``SVC(kernel="linear")``, which solves the same problem
  (½|w|² + C Σ hinge, bias not penalized), on a 5,000 × 50 noisy teacher–student set
  (target: ratio ≤ 1.0) and on standardized breast cancer. ``LinearSVC(loss="hinge")``
  (liblinear, which penalizes the bias, a different problem) is timed beside it. The
  check column shows both primal objectives of the standard problem.

  On breast cancer (569 × 30) the interior-point fit is 14 Mehrotra steps. A profile
  (cProfile, 50 fits) puts about 0.5 ms in each step: dozens of NumPy calls on vectors
  of 569 numbers and one Cholesky factor of size 31, about a megaflop of arithmetic
  (some 0.05 ms); the rest is the interpreter's cost per call, which libsvm's and
  liblinear's compiled loops do not pay. Compiling the step would take the NumPy code
  the chapter shows (``_Iterate.direction``, ``mehrotra_step``) out of the book, so these
  two rows have the targets that cost allows: ≤ 2.0 against SVC, ≤ 2.5 against
  LinearSVC.
"""

import numpy as np
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA as SkPCA
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from benchmarks._harness import Case
from lincls.datasets import load_breast_cancer, teacher_student
from lincls.pca import PCA
from lincls.svm import LinearSVM, primal_objective


def _pca_case(X, n_components, label):
    def check(a, b):
        err = np.max(np.abs(a.explained_variance_ - b.explained_variance_))
        return f"k = {a.n_components_} / {b.n_components_}, max |Δλ| = {err:.1e}"

    return Case(task=f"PCA digits 1797×64, {label}",
                lincls=lambda: PCA(n_components=n_components).fit(X),
                sklearn=lambda: SkPCA(n_components=n_components).fit(X),
                check=check, target=1.0, repeats=200)


def _svm_cases(name, X, y, C, target, other_target, repeats):
    def objective(clf):
        return primal_objective(clf.coef_, clf.intercept_[0], X, y, C)

    def check(a, b):
        return f"objective {objective(a):.6g} / {objective(b):.6g}"

    yield Case(task=f"LinearSVM vs SVC(linear), {name}, C={C:g}",
               lincls=lambda: LinearSVM(C=C).fit(X, y),
               sklearn=lambda: SVC(kernel="linear", C=C).fit(X, y),
               check=check, target=target, repeats=repeats)
    yield Case(task=f"LinearSVM vs LinearSVC(hinge) [other problem], {name}, C={C:g}",
               lincls=lambda: LinearSVM(C=C).fit(X, y),
               sklearn=lambda: LinearSVC(loss="hinge", C=C, max_iter=10_000).fit(X, y),
               check=check, target=other_target, repeats=repeats)


def cases():
    digits = load_digits().data
    out = [_pca_case(digits, None, "all components"), _pca_case(digits, 0.9, "PoV > 0.9")]
    X, y, _ = teacher_student(5000, 50, noise=0.1, random_state=0)
    out += list(_svm_cases("teacher-student 5000×50, 10% noise", X, y, 1.0, 1.0, None, 3))
    Xb, yb = load_breast_cancer()
    Xb = StandardScaler().fit_transform(Xb)
    out += list(_svm_cases("breast cancer 569×30 standardized", Xb, yb, 1.0, 2.0, 2.5, 10))
    return out
