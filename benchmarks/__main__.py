"""Run every ``benchmarks/bench_*.py`` and print one markdown table.

Usage: ``python -m benchmarks [name-filter]`` (``make bench`` runs them all).
"""

import importlib
import pkgutil
import sys
import warnings
from pathlib import Path

from ._harness import markdown_table, run_case


def main(argv):
    pattern = argv[1] if len(argv) > 1 else ""
    rows = []
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if not info.name.startswith("bench_") or pattern not in info.name:
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        for case in module.cases():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # ConvergenceWarnings of capped runs
                rows.append(run_case(case))
            print(f"done: {case.task}", file=sys.stderr)
    print(markdown_table(rows))


if __name__ == "__main__":
    main(sys.argv)
