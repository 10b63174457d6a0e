"""Experiments at scale: teacher–student sweeps over α, N and repetitions.

Defined in chapter "Reproducing and extending the Minover report"
(``book/reproducing_minover_report.md``) and the how-to page "Sweeps on every core and on
a cluster" (``book/howto_sweeps.md``).

An *experiment* is a function ``experiment(alpha, N, seed, **params) -> dict`` that draws
one data set with P = round(αN) examples in N dimensions from ``seed``, trains, and returns
a few numbers (ε_g, κ, epochs, ...). :func:`sweep` runs it on every cell of a grid
(α × N × extra parameters × repetitions) and returns a tidy table of means and standard
errors per grid point.

* **Seeds.** The cell at grid position (i, j, ..., r) gets the seed
  ``numpy.random.SeedSequence(seed, spawn_key=(i, j, ..., r))``: it depends on the position
  only, never on the order in which cells run or on how they are split among workers.
  Every cell runs on one BLAS thread (the cores are used by running cells side by side).
  So a sweep gives the same numbers bit for bit serially, on all local cores, and on a
  cluster whose workers have the same CPU kernels (OpenBLAS picks its kernel per
  processor, numba compiles for the host) and the same library builds; elsewhere results
  may differ in the last bits of rounding.
* **Parallelism** is joblib's: ``n_jobs=-1`` (the default) uses every local core; inside
  ``joblib.parallel_config(backend="dask")`` with a ``distributed.Client`` the same call
  runs on a Dask cluster.
* **Failures.** A cell that raises stops the sweep with a :class:`SweepError` naming the
  grid point, the spawn key of its seed and the original error. An interrupted or failed sweep
  returns nothing and writes nothing: a table only exists once every cell has finished.

The built-in experiments below are thin: they generate data with
:func:`lincls.datasets.teacher_student`, train an estimator of :mod:`lincls.stability` or
:mod:`lincls.perceptron`, and measure with :mod:`lincls.metrics`; :mod:`lincls.theory` has
the large-N curves to compare with.
"""

import os
import tempfile
import time
import warnings
from itertools import product

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.exceptions import ConvergenceWarning

from ._blas import one_blas_thread
from .datasets import random_labels, teacher_student
from .metrics import generalization_error
from .perceptron import Perceptron
from .stability import AdaTron, Hebb, Minover, exact_optimal_stability

__all__ = [
    "SweepError",
    "sweep",
    "cell_seed",
    "random_state",
    "hebb",
    "rosenblatt",
    "optimal_stability",
    "minover",
    "adatron",
    "learning_curves",
    "stability",
    "label_noise",
    "holdout_learning_curves",
]


class SweepError(RuntimeError):
    """A cell of a sweep raised; the message names the grid point and the original error.

    Defined in chapter "How to: sweeps on every core and on a cluster".
    """


# ----------------------------------------------------------------------------------------
# Seeds and data
# ----------------------------------------------------------------------------------------
def cell_seed(seed, position):
    """The seed of the cell at grid ``position`` (a tuple of indices) of a sweep.

    Defined in chapter "How to: sweeps on every core and on a cluster".

    Examples
    --------
    >>> s = cell_seed(0, (2, 0, 5))
    >>> s.spawn_key, bool((s.generate_state(2) == cell_seed(0, (2, 0, 5)).generate_state(2)).all())
    ((2, 0, 5), True)
    """
    return np.random.SeedSequence(seed, spawn_key=tuple(int(i) for i in position))


def random_state(seed):
    """A ``numpy.random.RandomState`` from an int or a ``SeedSequence``, for functions that
    take ``random_state`` (the estimators and :mod:`lincls.datasets`).

    Defined in chapter "How to: sweeps on every core and on a cluster".

    Examples
    --------
    >>> float(random_state(1).random_sample()) == float(random_state(1).random_sample())
    True
    """
    if not isinstance(seed, np.random.SeedSequence):
        seed = np.random.SeedSequence(seed)
    return np.random.RandomState(np.random.MT19937(seed))


def _n_samples(alpha, N):
    P = int(round(alpha * N))
    if P < 1:
        raise ValueError(f"alpha * N must give at least one example; got alpha={alpha}, N={N}.")
    return P


def _teacher_data(alpha, N, seed, noise=0.0):
    """(X, y, teacher): P = round(αN) examples labelled by a random teacher."""
    return teacher_student(_n_samples(alpha, N), int(N), noise=noise,
                           random_state=random_state(seed))


def _fit_quietly(estimator, X, y):
    """Fit and return ``converged_``; not converging is a result here, not a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        estimator.fit(X, y)
    return float(getattr(estimator, "converged_", True))


# ----------------------------------------------------------------------------------------
# Built-in experiments: (alpha, N, seed, **params) -> dict of numbers
# ----------------------------------------------------------------------------------------
def hebb(alpha, N, seed, *, noise=0.0):
    """ε_g of Hebb's rule; theory: :func:`lincls.theory.hebb_error` (with ``noise``).

    Defined in chapter "How to: sweeps on every core and on a cluster".

    Examples
    --------
    >>> sorted(hebb(2.0, 50, seed=0))
    ['eps_g']
    """
    X, y, teacher = _teacher_data(alpha, N, seed, noise)
    return {"eps_g": generalization_error(Hebb().fit(X, y).coef_, teacher)}


def rosenblatt(alpha, N, seed, *, noise=0.0, max_iter=10_000):
    """ε_g of the Rosenblatt perceptron from w = 0, samples in order, run until it makes
    no mistake (or ``max_iter`` epochs); also its epochs, updates and whether it converged.

    Defined in chapter "How to: sweeps on every core and on a cluster".

    Examples
    --------
    >>> result = rosenblatt(2.0, 20, 0)
    >>> sorted(result), result["converged"]
    (['converged', 'epochs', 'eps_g', 'updates'], 1.0)
    """
    X, y, teacher = _teacher_data(alpha, N, seed, noise)
    clf = Perceptron(fit_intercept=False, shuffle=False, max_iter=max_iter)
    converged = _fit_quietly(clf, X, y)
    return {"eps_g": generalization_error(clf.coef_, teacher), "epochs": float(clf.n_iter_),
            "updates": float(clf.t_), "converged": converged}


def optimal_stability(alpha, N, seed):
    """ε_g and κ_opt of the perceptron of optimal stability, computed exactly
    (:func:`lincls.stability.exact_optimal_stability`, Minover's limit); theory:
    :func:`lincls.theory.optimal_stability_error` and ``optimal_stability_overlap``.

    Defined in chapter "How to: sweeps on every core and on a cluster".

    Examples
    --------
    >>> result = optimal_stability(2.0, 20, 0)
    >>> sorted(result), bool(0 < result["eps_g"] < 0.5 and result["kappa"] > 0)
    (['eps_g', 'kappa'], True)
    """
    X, y, teacher = _teacher_data(alpha, N, seed)
    kappa, w = exact_optimal_stability(X, y)
    return {"eps_g": generalization_error(w, teacher), "kappa": kappa}


def minover(alpha, N, seed, *, noise=0.0, max_iter=100_000, tol=1e-3):
    """ε_g and final stability κ_min of :class:`lincls.stability.Minover`, with its number
    of updates and whether its certificate closed to ``tol``.

    Defined in chapter "How to: sweeps on every core and on a cluster".

    Examples
    --------
    >>> result = minover(2.0, 20, 0, tol=1e-2)
    >>> bool(result["converged"]), bool(0 < result["eps_g"] < 0.5)
    (True, True)
    """
    X, y, teacher = _teacher_data(alpha, N, seed, noise)
    clf = Minover(max_iter=max_iter, tol=tol)
    converged = _fit_quietly(clf, X, y)
    return {"eps_g": generalization_error(clf.coef_, teacher), "kappa": clf.stability_,
            "updates": float(clf.n_iter_), "converged": converged}


def adatron(alpha, N, seed, *, noise=0.0, max_iter=1000, tol=1e-3):
    """ε_g and final stability κ_min of :class:`lincls.stability.AdaTron`, with its number
    of sweeps and whether its certificate closed to ``tol``.

    Defined in chapter "How to: sweeps on every core and on a cluster".

    Examples
    --------
    >>> result = adatron(2.0, 20, 0)
    >>> bool(result["converged"]), bool(0 < result["eps_g"] < 0.5)
    (True, True)
    """
    X, y, teacher = _teacher_data(alpha, N, seed, noise)
    clf = AdaTron(max_iter=max_iter, tol=tol)
    converged = _fit_quietly(clf, X, y)
    return {"eps_g": generalization_error(clf.coef_, teacher), "kappa": clf.stability_,
            "sweeps": float(clf.n_iter_), "converged": converged}


def learning_curves(alpha, N, seed, *, max_iter=10_000):
    """ε_g of Hebb, Rosenblatt (until it makes no mistake) and optimal stability (exact), all
    on the same data set; the data of the report's Fig. 1 at larger scale.

    Defined in chapter "How to: sweeps on every core and on a cluster".

    Examples
    --------
    >>> result = learning_curves(2.0, 20, 0)
    >>> sorted(result)
    ['hebb', 'optimal_stability', 'rosenblatt', 'rosenblatt_converged', 'rosenblatt_epochs']
    """
    X, y, teacher = _teacher_data(alpha, N, seed)
    rosen = Perceptron(fit_intercept=False, shuffle=False, max_iter=max_iter)
    converged = _fit_quietly(rosen, X, y)
    return {"hebb": generalization_error(Hebb().fit(X, y).coef_, teacher),
            "rosenblatt": generalization_error(rosen.coef_, teacher),
            "optimal_stability": generalization_error(exact_optimal_stability(X, y)[1], teacher),
            "rosenblatt_epochs": float(rosen.n_iter_), "rosenblatt_converged": converged}


def stability(alpha, N, seed, *, teacher=True):
    """κ_opt, the exact optimal stability, for labels from a teacher or random labels.

    Defined in chapter "How to: sweeps on every core and on a cluster".

    ``kappa`` is NaN when the data are not separable through the origin (the means skip
    it); ``separable`` is 1 or 0. Theory: ``lincls.theory.optimal_stability_overlap`` with
    a teacher, :func:`lincls.theory.gardner_stability` without.

    Examples
    --------
    >>> round(stability(1.0, 20, 0)["kappa"], 3) > 0
    True
    """
    if teacher:
        X, y, _ = _teacher_data(alpha, N, seed)
    else:
        X, y = random_labels(_n_samples(alpha, N), int(N), random_state=random_state(seed))
    kappa = exact_optimal_stability(X, y)[0]
    separable = bool(np.isfinite(kappa))
    return {"kappa": kappa if separable else np.nan, "separable": float(separable)}


def label_noise(alpha, N, seed, *, noise, max_iter=500):
    """ε_g against the clean teacher of Hebb's rule and of Minover with a budget of
    ``max_iter`` updates, on labels flipped with probability ``noise`` (the same data for
    both). Theory for Hebb: ``lincls.theory.hebb_error(alpha, noise)``.

    Defined in chapter "How to: sweeps on every core and on a cluster".

    Examples
    --------
    >>> result = label_noise(2.0, 20, 0, noise=0.1)
    >>> sorted(result)
    ['hebb', 'minover']
    """
    X, y, teacher = _teacher_data(alpha, N, seed, noise)
    mino = Minover(max_iter=max_iter)
    _fit_quietly(mino, X, y)
    return {"hebb": generalization_error(Hebb().fit(X, y).coef_, teacher),
            "minover": generalization_error(mino.coef_, teacher)}


# ----------------------------------------------------------------------------------------
# The sweep
# ----------------------------------------------------------------------------------------
def _axis(name, values, integer=False):
    arr = np.atleast_1d(np.asarray(values))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a number or a non-empty 1-D sequence; got {values!r}.")
    if integer:
        if not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 1):
            raise ValueError(f"{name} must hold integers >= 1; got {values!r}.")
        return [int(v) for v in arr]
    if not np.issubdtype(arr.dtype, np.number) or not np.all(np.isfinite(arr)) \
            or np.any(arr <= 0):
        raise ValueError(f"{name} must hold finite positive numbers; got {values!r}.")
    return [float(v) for v in arr]


def _describe(point, repetition, position):
    where = ", ".join(f"{k}={v!r}" for k, v in point.items())
    return f"{where}, repetition={repetition} (seed spawn_key={tuple(position)})"


def _run_cell(experiment, point, repetition, position, seed):
    """Run one cell on one BLAS thread; any error is re-raised naming the cell."""
    alpha, N, *_ = point.values()
    params = {k: v for k, v in point.items() if k not in ("alpha", "N")}
    try:
        with one_blas_thread():
            result = experiment(alpha, N, cell_seed(seed, position), **params)
        if not isinstance(result, dict) or not result:
            raise TypeError(f"an experiment must return a non-empty dict of numbers; got "
                            f"{type(result).__name__}")
        out = {}
        for key, value in result.items():
            if not isinstance(key, str) or isinstance(value, (str, bytes)) \
                    or np.ndim(value) != 0:
                raise TypeError(f"result {key!r}: {value!r} is not a named number")
            out[key] = float(value)
        return out
    except Exception as exc:
        raise SweepError(f"{getattr(experiment, '__name__', experiment)!s} failed at "
                         f"{_describe(point, repetition, position)}: "
                         f"{type(exc).__name__}: {exc}") from exc


def _progress_bar(total, show):
    if not show:
        return None
    from tqdm.auto import tqdm

    # shown only once the sweep has run for 2 s: short sweeps stay silent
    return tqdm(total=total, desc="sweep", unit="cell", delay=2.0)


def _write_atomically(table, path):
    """Write the CSV to a temporary file beside ``path``, then rename it into place."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".sweep-", suffix=".csv.part", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            table.to_csv(f, index=False)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def sweep(experiment, alpha, N, repetitions, *, params=None, seed=0, n_jobs=-1,
          progress=True, raw=False, save=None):
    """Run ``experiment`` on every cell of a grid, in parallel; return a tidy table.

    Defined in chapter "How to: sweeps on every core and on a cluster".

    Parameters
    ----------
    experiment : callable
        ``experiment(alpha, N, seed, **params) -> dict`` of named numbers; ``seed`` is a
        ``numpy.random.SeedSequence`` (use ``numpy.random.default_rng(seed)`` or
        :func:`random_state`). Fix other keyword arguments with ``functools.partial``. It
        must be importable by the workers (a module-level function or a partial of one).
    alpha : float or sequence of float
        Loads α = P/N (positive).
    N : int or sequence of int
        Input dimensions.
    repetitions : int
        Independent data sets per grid point.
    params : dict of str -> sequence, optional
        Further grid axes passed to the experiment as keyword arguments, e.g.
        ``{"noise": [0.0, 0.1, 0.2]}``.
    seed : int, default=0
        The sweep's seed; the cell at grid position (i_α, i_N, i_params..., r) uses
        ``SeedSequence(seed, spawn_key=(i_α, i_N, i_params..., r))`` (:func:`cell_seed`).
    n_jobs : int or None, default=-1
        joblib's ``n_jobs``: -1 uses all local cores, 1 runs serially in this process,
        None takes it from an enclosing ``joblib.parallel_config``. Inside
        ``joblib.parallel_config(backend="dask")`` the cells run on the Dask cluster of
        the active ``distributed.Client``.
    progress : bool, default=True
        Show a tqdm progress bar once the sweep has run for two seconds.
    raw : bool, default=False
        Return one row per cell (columns ``alpha``, ``N``, params, ``repetition`` and the
        results) instead of the summary.
    save : path-like, optional
        Also write the returned table to this CSV file, atomically, once every cell has
        finished: an interrupted or failed sweep leaves no file (and an older file at
        ``save`` untouched).

    Returns
    -------
    pandas.DataFrame
        The summary: one row per grid point in grid order, with ``alpha``, ``N``, the
        params, ``n`` (repetitions), and for every result ``x`` its mean ``x`` and
        standard error ``x_se`` = std / √count (NaN results are skipped; the count is
        then smaller than ``n``). ``table.attrs`` holds the seed, the repetitions and
        the wall time in seconds.

    Raises
    ------
    SweepError
        If a cell raised; the message names the grid point and the original error.

    Examples
    --------
    >>> t = sweep(hebb, [1.0, 2.0], 50, repetitions=3, n_jobs=1, progress=False)
    >>> t.columns.tolist(), t["n"].tolist()
    (['alpha', 'N', 'n', 'eps_g', 'eps_g_se'], [3, 3])
    """
    if not callable(experiment):
        raise ValueError(f"experiment must be callable; got {experiment!r}.")
    axes = {"alpha": _axis("alpha", alpha), "N": _axis("N", N, integer=True)}
    for name, values in (params or {}).items():
        if name in ("alpha", "N", "seed", "repetition", "n") or not str(name).isidentifier():
            raise ValueError(f"params name {name!r} is reserved or not an identifier.")
        values = list(values) if np.ndim(values) == 1 else None
        if not values:
            raise ValueError(f"params[{name!r}] must be a non-empty 1-D sequence.")
        axes[name] = values
    if isinstance(repetitions, bool) or not isinstance(repetitions, (int, np.integer)) \
            or repetitions < 1:
        raise ValueError(f"repetitions must be an integer >= 1; got {repetitions!r}.")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed!r}.")

    names = list(axes)
    cells = [(dict(zip(names, values, strict=True)), r, index + (r,))
             for index, values in zip(product(*(range(len(v)) for v in axes.values())),
                                      product(*axes.values()), strict=True)
             for r in range(int(repetitions))]
    results = [None] * len(cells)
    bar = _progress_bar(len(cells), progress)
    start = time.perf_counter()
    try:
        tasks = (delayed(_indexed)(k, experiment, point, r, position, int(seed))
                 for k, (point, r, position) in enumerate(cells))
        for k, out in Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks):
            results[k] = out
            if bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - start
    assert all(r is not None for r in results)  # every cell finished, or we raised above

    keys = list(results[0])
    for (point, r, position), out in zip(cells, results, strict=True):
        if list(out) != keys:
            raise SweepError(f"{_describe(point, r, position)} returned {list(out)}, other "
                             f"cells {keys}: every cell must return the same names.")
    cell_table = pd.DataFrame([{**point, "repetition": r, **out}
                               for (point, r, _), out in zip(cells, results, strict=True)])
    table = cell_table if raw else _summarize(cell_table, names, keys)
    table.attrs.update(seed=int(seed), repetitions=int(repetitions), seconds=seconds)
    if save is not None:
        _write_atomically(table, save)
    return table


def _indexed(k, *args):
    return k, _run_cell(*args)


def _summarize(cells, names, keys):
    groups = cells.groupby(names, sort=False, dropna=False)
    table = groups.size().rename("n").reset_index()
    for key in keys:
        stats = groups[key].agg(["mean", "std", "count"]).reset_index(drop=True)
        table[key] = stats["mean"].to_numpy()
        table[f"{key}_se"] = (stats["std"] / np.sqrt(stats["count"])).to_numpy()
    return table


def holdout_learning_curves(estimators, X_train, y_train, X_test, y_test, sizes, *,
                            n_repeats=5, seed=0, draw="random"):
    """Mean training and test error of several estimators on training subsets.

    Defined in chapter "Non-separable data" (and used in "Data preparation"). For each
    size P in ``sizes``, ``n_repeats`` times: draw P training samples without replacement
    (again, if they hold one class only), fit a fresh ``make()`` of every ``estimators``
    entry on them, and measure E_in on those samples and E_out on the fixed test set.
    All estimators see the same subsets. With ``draw="first"`` the subset is the first P
    training samples (once; ``n_repeats`` and ``seed`` are not used).

    Parameters
    ----------
    estimators : dict of name -> callable returning an unfitted estimator
    draw : {"random", "first"}, default="random"

    Returns
    -------
    e_in, e_out : dict of name -> ndarray of shape (len(sizes),)

    Examples
    --------
    >>> from lincls.datasets import teacher_student
    >>> from lincls.stability import Hebb
    >>> X, y, _ = teacher_student(200, 5, random_state=0)
    >>> e_in, e_out = holdout_learning_curves({"Hebb": Hebb}, X[:100], y[:100], X[100:],
    ...                                       y[100:], [10, 100])
    >>> bool(e_out["Hebb"][1] < e_out["Hebb"][0] < 0.5)
    True
    """
    if draw not in ("random", "first"):
        raise ValueError(f'draw must be "random" or "first"; got {draw!r}.')
    if draw == "first":
        n_repeats = 1
    rng = np.random.default_rng(seed)
    e_in = {name: np.zeros(len(sizes)) for name in estimators}
    e_out = {name: np.zeros(len(sizes)) for name in estimators}
    for k, n in enumerate(sizes):
        for _ in range(n_repeats):
            idx = np.arange(n) if draw == "first" else rng.choice(len(y_train), n, replace=False)
            while draw == "random" and len(np.unique(y_train[idx])) < 2:  # one class: again
                idx = rng.choice(len(y_train), size=n, replace=False)
            for name, make in estimators.items():
                clf = make().fit(X_train[idx], y_train[idx])
                # 1 - accuracy, as clf.score computes it, without its checks of the labels
                # (about 2 ms a call, more than most of these fits)
                e_in[name][k] += (1 - np.mean(clf.predict(X_train[idx]) == y_train[idx])
                                  ) / n_repeats
                e_out[name][k] += (1 - np.mean(clf.predict(X_test) == y_test)) / n_repeats
    return e_in, e_out
