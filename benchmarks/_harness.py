"""The one timing harness every benchmark uses."""

import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from lincls._blas import one_blas_thread


@dataclass
class Case:
    """One task run by lincls and by scikit-learn on the same data.

    ``lincls`` and ``sklearn`` are zero-argument callables that do the work and return
    whatever ``check`` needs; ``check(lincls_result, sklearn_result)`` returns a short
    string showing that both solved the task (e.g. both training errors).

    ``floors`` maps a name to ``(callable, target or None)``: the same work done by a
    bare pass over the data (e.g. as many ``X @ w`` as the fit has epochs). They are
    timed in the same run, taking turns with both sides, and lincls's time is also
    reported as a multiple of each, with its own target.
    """

    task: str
    lincls: Callable[[], object]
    sklearn: Callable[[], object]
    check: Callable[[object, object], str]
    target: Optional[float] = None  # the ratio to meet, or None to report only
    repeats: int = 5
    warmup: bool = True  # one untimed call of each side first
    floors: dict = field(default_factory=dict)  # name -> (callable, target or None)


def median_times(fns, repeats, warmup=True):
    """Median wall time of ``repeats`` calls of each function, and the last results.

    After one warm-up call of each (unless ``warmup`` is false), the functions take
    turns (lincls, scikit-learn, lincls, ...), so that a change in the load of a shared
    machine hits both sides alike.
    """
    results = [fn() for fn in fns] if warmup else [None] * len(fns)
    times = [[] for _ in fns]
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            results[k] = fn()
            times[k].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times], results


def run_case(case):
    """Time both sides of a case; return one table row as a dict."""
    floors = list(case.floors.items())
    times, results = median_times([case.lincls, case.sklearn] + [f for _, (f, _) in floors],
                                  case.repeats, case.warmup)
    (t_lin, t_sk), (r_lin, r_sk) = times[:2], results[:2]
    ratios = [f"{t_lin / t_sk:.2f}"]
    verdicts = [_verdict(t_lin / t_sk, case.target, "")]
    for (name, (_, target)), t_floor in zip(floors, times[2:]):
        ratios.append(f"{t_lin / t_floor:.2f}× {name} ({t_floor:.3g} s)")
        if target is not None:
            verdicts.append(_verdict(t_lin / t_floor, target, f"× {name}"))
    return {
        "task": case.task,
        "lincls s": f"{t_lin:.3g}",
        "scikit-learn s": f"{t_sk:.3g}",
        "ratio": "; ".join(ratios),
        "target": "; ".join(v for v in verdicts if v) or "report only",
        "both solved": case.check(r_lin, r_sk),
    }


def _verdict(ratio, target, unit):
    if target is None:
        return ""
    return f"≤ {target:g}{unit}: {'met' if ratio <= target else 'NOT met'}"


def markdown_table(rows):
    """Rows of equal keys as a markdown table."""
    if not rows:
        return "(no benchmarks)"
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def epoch_floors(X, epochs, target):
    """``Case.floors`` of a loop over the samples, ``epochs`` passes over X: ``X @ w`` (the
    floor of an epoch: one read of X, one dot product per row; with its ``target``) and
    the streaming read ``X.sum()`` (reported). Both on one core, as the loop runs: ``X @ w``
    on all the BLAS's threads would compare one core with several."""
    w = np.ones(X.shape[1])

    def products():
        with one_blas_thread():
            for _ in range(epochs):
                X @ w

    def reads():
        for _ in range(epochs):
            X.sum()

    return {"X @ w": (products, target), "X.sum()": (reads, None)}
