"""Speed of lincls against scikit-learn on the same data; run with ``make bench``.

Each ``benchmarks/bench_<topic>.py`` module defines ``cases()``, an iterable of
:class:`Case`. The runner times every case in one process, takes the median of several
repeats, and prints one markdown table. Targets are printed, never asserted: speed is
a benchmark, not a timed test.
"""
