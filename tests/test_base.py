"""The shared base estimator, metrics, plotting and the separability test."""

import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import IterativeClassifier, LinearClassifier, augment, datasets, logic_gate, metrics
from lincls.discriminant import LinearDiscriminant, is_linearly_separable, separating_weights
from lincls.plotting import (
    BOOK_COLORS,
    CLASS_COLORS,
    animation_html,
    plot_decision_regions,
    use_book_style,
)


class TinyPerceptron(LinearClassifier):
    """A minimal subclass: only the update rule, the base class does the rest."""

    def __init__(self, *, fit_intercept=True, max_iter=50):
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter

    def _fit_augmented(self, X, y):
        w = np.zeros(X.shape[1])
        self.converged_ = True
        for epoch in range(1, self.max_iter + 1):
            self.n_iter_ = epoch
            mistakes = 0
            for x, t in zip(X, y):
                if t * (w @ x) <= 0:
                    w += t * x
                    mistakes += 1
            if mistakes == 0:
                return w
        self._not_converged(f"no separating w within max_iter={self.max_iter} epochs")
        return w


@parametrize_with_checks([TinyPerceptron(), TinyPerceptron(fit_intercept=False)])
def test_base_passes_sklearn_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_any_two_labels_and_positive_class():
    X, y = datasets.load_iris(task="setosa-vs-rest", features=[0, 1])
    names = np.where(y == 1, "setosa", "other")
    clf = TinyPerceptron(max_iter=2000).fit(X, names)
    assert clf.classes_.tolist() == ["other", "setosa"]  # classes_[1] is +1
    assert clf.score(X, names) == 1.0
    scores = clf.decision_function(X)
    assert np.array_equal(clf.predict(X), np.where(scores > 0, "setosa", "other"))
    assert clf.coef_.shape == (1, 2) and clf.intercept_.shape == (1,)
    assert np.allclose(clf.weights_, np.r_[clf.intercept_, clf.coef_.ravel()])


def test_clamped_input_and_homogeneous():
    assert augment([[2.0, 3.0], [4.0, 5.0]]).tolist() == [[1, 2, 3], [1, 4, 5]]
    X, y = datasets.logic_gate("and")
    assert TinyPerceptron().fit(X, y).score(X, y) == 1.0
    # without the clamped input the AND gate needs a hyperplane through the origin: impossible
    with pytest.warns(ConvergenceWarning):
        clf = TinyPerceptron(fit_intercept=False, max_iter=20).fit(X, y)
    assert clf.converged_ is False and clf.intercept_.tolist() == [0.0]


def test_works_in_pipeline():
    X, y = datasets.load_iris(task="setosa-vs-rest")
    pipe = make_pipeline(StandardScaler(), TinyPerceptron()).fit(X, y)
    assert pipe.score(X, y) == 1.0


@pytest.mark.parametrize("X, y, message", [
    ([[0.0, 1.0], [1.0, np.nan]], [0, 1], "NaN"),
    ([[0.0, 1.0], [1.0, np.inf]], [0, 1], "infinity"),
    (np.zeros((0, 2)), [], "0 sample"),
    ([[0.0], [1.0], [2.0]], [1, 1, 1], "exactly 2 classes"),
    ([[0.0], [1.0], [2.0]], [0, 1, 2], "Only binary"),
    ([[0.0], [1.0]], [0, 1, 1], "inconsistent numbers of samples"),
])
def test_bad_input_raises_value_error(X, y, message):
    with pytest.raises(ValueError, match=message):
        TinyPerceptron().fit(X, y)


def test_bad_hyperparameter():
    with pytest.raises(ValueError, match="fit_intercept"):
        TinyPerceptron(fit_intercept="yes").fit([[0.0], [1.0]], [0, 1])


def test_linear_discriminant_and_gate():
    X, y = datasets.logic_gate("and")
    gate = LinearDiscriminant(coef=[1, 1], intercept=-1.5).fit(X)
    assert gate.predict(X).tolist() == y.tolist()
    assert gate.decision_function(X).tolist() == [-1.5, -0.5, -0.5, 0.5]
    with pytest.raises(ValueError, match="coef has 3 weights"):
        LinearDiscriminant(coef=[1, 1, 1]).fit(X)


def test_separating_weights_separate():
    rng = np.random.default_rng(0)
    for _ in range(20):
        X, y, _ = datasets.teacher_student(30, 3, random_state=int(rng.integers(1e6)))
        w = separating_weights(X, y, fit_intercept=False)
        assert w is not None and np.all(y * (X @ w) >= 1 - 1e-7)
    X, y = datasets.random_labels(60, 2, random_state=1)  # 60 random labels in 2-D
    assert not is_linearly_separable(X, y)


def test_metrics():
    assert metrics.error_rate([1, 1, -1, -1], [1, -1, -1, 1]) == 0.5
    assert metrics.generalization_error([1, 0], [1, 0]) == 0.0
    assert metrics.generalization_error([1, 0], [-1, 0]) == 1.0
    assert np.isclose(metrics.generalization_error([1, 1], [1, 0]), 0.25)
    # eps_g is the disagreement probability of two perceptrons on Gaussian inputs
    X, _, teacher = datasets.teacher_student(200_000, 3, random_state=0)
    w = teacher + np.array([0.5, -0.3, 0.2])
    disagree = np.mean(np.sign(X @ w) != np.sign(X @ teacher))
    assert abs(disagree - metrics.generalization_error(w, teacher)) < 0.005
    kappa = metrics.stabilities([3, 4], [[1, 1], [2, 0]], [1, -1])
    assert np.allclose(kappa, [7 / 5, -6 / 5])
    with pytest.raises(ValueError, match="non-zero"):
        metrics.stabilities([0, 0], [[1, 1]], [1])
    with pytest.raises(ValueError, match="differ in length"):
        metrics.generalization_error([1, 0, 0], [1, 0])
    with pytest.raises(ValueError, match="equal length"):
        metrics.error_rate([1, 0], [1])


@pytest.mark.parametrize("labels", [(-1, 1), (0, 1), ("benign", "malignant")])
def test_plot_decision_regions_with_any_labels(labels):
    X, y = datasets.load_iris(task="setosa-vs-rest", features=[0, 1])
    y = np.where(y == 1, labels[1], labels[0])
    clf = TinyPerceptron(max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    fig, ax = plt.subplots()
    out = plot_decision_regions(X, y, clf, ax=ax, show_normal=True, resolution=50)
    assert out is ax
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert str(labels[0]) in legend and str(labels[1]) in legend
    # class colours follow classes_: the negative class vermillion, the positive class
    # blue; the classes also differ by marker
    drawn = {c.get_label(): c for c in ax.collections if c.get_label() in map(str, labels)}
    assert np.allclose(drawn[str(labels[0])].get_facecolor()[0][:3],
                       matplotlib.colors.to_rgb(CLASS_COLORS[0]))
    assert np.allclose(drawn[str(labels[1])].get_facecolor()[0][:3],
                       matplotlib.colors.to_rgb(CLASS_COLORS[1]))
    paths = [drawn[str(label)].get_paths()[0].vertices for label in labels]
    assert paths[0].shape != paths[1].shape or not np.allclose(*paths)
    wrong = np.sum(clf.predict(X) != y)
    marked = [c for c in ax.collections if c.get_label() == "misclassified"]
    assert (len(marked[0].get_offsets()) if marked else 0) == wrong
    plt.close(fig)


def test_plot_decision_regions_needs_only_predict():
    class Threshold:
        def predict(self, X):
            return np.where(np.asarray(X)[:, 0] > 0.5, "yes", "no")

    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.2, 0.8]])
    y = np.array(["no", "yes", "yes"])
    fig, ax = plt.subplots()
    plot_decision_regions(X, y, Threshold(), ax=ax, resolution=20)
    marked = [c for c in ax.collections if c.get_label() == "misclassified"]
    assert len(marked[0].get_offsets()) == 1
    with pytest.raises(ValueError, match="two features"):
        plot_decision_regions(np.zeros((3, 3)), y, Threshold(), ax=ax)
    plt.close(fig)


def test_every_estimator_is_re_exported_from_the_package():
    import importlib
    import inspect

    from sklearn.base import BaseEstimator

    import lincls

    for name in ("perceptron", "pocket", "multiclass", "relaxation", "adaline", "least_squares",
                 "stability", "svm", "pca", "discriminant", "margin", "logistic", "kernels"):
        module = importlib.import_module(f"lincls.{name}")
        for attr in module.__all__:
            obj = getattr(module, attr)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                assert attr in lincls.__all__ and getattr(lincls, attr) is obj, attr


def test_the_public_names_are_imported_on_first_use():
    """lincls/__init__.py maps every name of __all__ to its module and imports it on first
    use; the teachers' tools (and the website's Sphinx extensions) load no algorithm."""
    import subprocess
    import sys

    import lincls

    assert set(lincls.__all__) - {"__version__"} == set(lincls._EXPORTS)
    for name in lincls.__all__:
        assert getattr(lincls, name) is not None, name
        assert name in dir(lincls)
    with pytest.raises(AttributeError, match="no attribute 'Perceptorn'"):
        lincls.Perceptorn  # noqa: B018
    code = ("import sys, booktools.homework, booktools.sphinxext.homework_table; "
            "print(sorted(m for m in ('sklearn', 'numba', 'lincls.perceptron') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def _every_classifier():
    """One instance of every classifier of lincls, and the other kernels and solvers."""
    import inspect

    from sklearn.base import ClassifierMixin

    import lincls

    bases = (LinearClassifier, IterativeClassifier, LinearDiscriminant)
    classes = [getattr(lincls, name) for name in lincls.__all__]
    return [cls() for cls in classes if inspect.isclass(cls) and issubclass(cls, ClassifierMixin)
            and cls not in bases] + [lincls.LinearSVM(solver="smo"),
                                     lincls.KernelSVM(kernel="linear"),
                                     lincls.KernelPerceptron(kernel="linear")]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("estimator", _every_classifier(), ids=repr)
def test_overflowing_inputs_never_give_a_non_finite_model(estimator):
    """Never lie: inputs near float64's largest value overflow the arithmetic of most fits;
    the fit raises a ValueError that says so, or its model is finite."""
    X = np.finfo(np.float64).max * np.random.default_rng(0).uniform(size=(10, 2))
    try:
        estimator.fit(X, [0, 1] * 5)
    except ValueError as error:
        assert "non-finite" in str(error) and "scale" in str(error), error
        return
    for name in ("coef_", "intercept_", "weights_", "alpha_", "dual_coef_"):
        assert np.all(np.isfinite(getattr(estimator, name, 0.0))), name


def _fit(estimator, X, y):
    return estimator.fit(X, y)  # the line a ConvergenceWarning must name


def _every_warning_fit():
    import lincls

    bounded = ["Perceptron", "Pocket", "ModifiedPerceptron", "Relaxation", "Adaline",
               "HoKashyap", "Minover", "AdaTron", "MulticlassPerceptron", "LinearSVM",
               "LogisticRegression", "KernelPerceptron", "KernelSVM"]
    return [getattr(lincls, name)(max_iter=1) for name in bounded] + [
        lincls.LinearSVM(solver="smo", max_iter=1), lincls.Relaxation(mode="batch", max_iter=1)]


@pytest.mark.parametrize("estimator", _every_warning_fit(), ids=repr)
def test_convergence_warning_names_the_callers_line(estimator):
    """The warning points at the line that called fit, not into lincls (nor at 'sys:1')."""
    X, y, _ = datasets.teacher_student(60, 5, noise=0.2, random_state=0)
    with pytest.warns(ConvergenceWarning) as record:
        _fit(estimator, X, y)
    where = {(w.filename, w.lineno) for w in record if w.category is ConvergenceWarning}
    assert where == {(__file__, _fit.__code__.co_firstlineno + 1)}


def _fractional_correction(X, y):
    from lincls.relaxation import fractional_correction

    return fractional_correction(X, y, max_iter=1)  # the line the warning must name


def test_convergence_warning_of_a_function_names_the_callers_line():
    with pytest.warns(ConvergenceWarning) as record:
        _fractional_correction(*logic_gate("xor"))
    line = _fractional_correction.__code__.co_firstlineno + 3
    assert [(w.filename, w.lineno) for w in record] == [(__file__, line)]


ITERATIVE = ["Perceptron", "Pocket", "ModifiedPerceptron", "Relaxation", "Adaline", "HoKashyap",
             "Minover", "AdaTron", "KernelPerceptron", "MulticlassPerceptron"]


@pytest.mark.parametrize("name", ITERATIVE)
def test_every_iterative_estimator_runs_the_one_loop_with_a_callback(name):
    """One training loop: n_iter_, history_, converged_ and a callback that sees each epoch."""
    import lincls
    from lincls._base import IterativeMixin
    from lincls.datasets import teacher_student

    cls = getattr(lincls, name)
    assert issubclass(cls, IterativeMixin)
    assert "_validate_params" not in vars(cls)  # scikit-learn's own, from _parameter_constraints
    X, y, _ = teacher_student(60, 5, random_state=1)
    seen = []
    clf = cls(**({"eta": 0.2} if name == "Adaline" else {}))
    clf.fit(X, y, callback=lambda epoch, w: seen.append((epoch, np.array(w))))
    assert clf.converged_
    assert [epoch for epoch, _ in seen] == list(range(1, len(seen) + 1))
    for key, values in clf.history_.items():
        assert key == "helpers" or len(values) == len(seen)  # helpers: one per update
    if name != "Minover":  # whose n_iter_ counts updates, its epochs run to log-spaced steps
        assert clf.n_iter_ == len(seen)
    last = seen[-1][1]
    if name == "KernelPerceptron":
        np.testing.assert_array_equal(last, clf.alpha_)
    elif name == "MulticlassPerceptron":
        np.testing.assert_array_equal(last[:, 1:], clf.coef_)
    else:
        np.testing.assert_allclose(last, clf.weights_, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ITERATIVE)
def test_bad_hyper_parameters_raise_value_errors_naming_them(name):
    import lincls

    cls = getattr(lincls, name)
    with pytest.raises(ValueError, match="'max_iter' parameter of"):
        cls(max_iter=0).fit(*logic_gate("and"))


def test_book_style_is_colour_blind_safe_opaque_and_not_colour_alone(tmp_path):
    with matplotlib.rc_context():
        use_book_style({"figure.dpi": 50})
        assert plt.rcParams["figure.dpi"] == 50  # the chapter's own settings win
        fig, ax = plt.subplots(figsize=(2, 2))
        lines = [ax.plot([0, 1], [k, k])[0] for k in range(len(BOOK_COLORS))]
        colors = [matplotlib.colors.to_hex(line.get_color()) for line in lines]
        assert colors == [c.lower() for c in BOOK_COLORS]
        styles = plt.rcParams["axes.prop_cycle"].by_key()["linestyle"]
        assert len(set(map(str, styles))) == len(lines)  # each colour has its own line style
        assert lines[1].get_linestyle() == "--"
        fig.savefig(tmp_path / "f.png")
        plt.close(fig)
    rgba = plt.imread(tmp_path / "f.png")
    assert rgba.shape[2] == 3 or rgba[..., 3].min() == 1.0  # opaque: readable in dark mode
    assert np.allclose(rgba[0, 0, :3], 1.0)  # on white


def test_animation_html_labels_the_frames_and_the_slider():
    from matplotlib.animation import FuncAnimation

    fig, ax = plt.subplots(figsize=(1, 1))
    animation = FuncAnimation(fig, lambda k: ax.plot([k, k]), frames=2)
    html = animation_html(animation, 'A "line" that moves', fps=2)
    plt.close(fig)
    assert '<img alt="A &quot;line&quot; that moves" id="_anim_img' in html
    assert '<input aria-label="Frame" id="_anim_slider' in html
    with pytest.raises(ValueError, match="alt"):
        animation_html(animation, " ")
