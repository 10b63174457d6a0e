"""The one timing harness every benchmark uses."""

import statistics
import time
from dataclasses import dataclass
from typing import Callable, Optional


@dataclass
class Case:
    """One task run by lincls and by scikit-learn on the same data.

    ``lincls`` and ``sklearn`` are zero-argument callables that do the work and return
    whatever ``check`` needs; ``check(lincls_result, sklearn_result)`` returns a short
    string showing that both solved the task (e.g. both training errors).
    """

    task: str
    lincls: Callable[[], object]
    sklearn: Callable[[], object]
    check: Callable[[object, object], str]
    target: Optional[float] = None  # the ratio to meet, or None to report only
    repeats: int = 5
    warmup: bool = True  # one untimed call of each side first


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
    (t_lin, t_sk), (r_lin, r_sk) = median_times([case.lincls, case.sklearn], case.repeats,
                                              case.warmup)
    ratio = t_lin / t_sk
    if case.target is None:
        verdict = "report only"
    else:
        verdict = f"≤ {case.target:g}: {'met' if ratio <= case.target else 'NOT met'}"
    return {
        "task": case.task,
        "lincls s": f"{t_lin:.3g}",
        "scikit-learn s": f"{t_sk:.3g}",
        "ratio": f"{ratio:.2f}",
        "target": verdict,
        "both solved": case.check(r_lin, r_sk),
    }


def markdown_table(rows):
    """Rows of equal keys as a markdown table."""
    if not rows:
        return "(no benchmarks)"
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)
