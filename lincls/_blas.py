"""The one BLAS-thread rule of lincls: small dense linear algebra on one thread.

Splitting a small BLAS call over several threads costs more in start-up and
synchronization than it saves, and on a busy machine the threads of many processes
compete for the same cores. Every dense computation of the package (``max_margin``,
``signed_gram``, the pocket, least squares, PCA, the SVM, logistic regression, kernel
matrices) runs inside :func:`blas_threads_for` with an estimate of its floating-point
operations: below about 10⁹ it runs on one BLAS thread, larger work keeps the library's
default. The
sweeps of :mod:`lincls.experiments` run each cell on one thread (:func:`one_blas_thread`)
because they use the cores by running cells side by side.
"""

from contextlib import contextmanager, nullcontext

from threadpoolctl import ThreadpoolController

__all__ = ["blas_threads_for", "one_blas_thread"]

SMALL_WORK = 1e9
_controller = None


def one_blas_thread():
    """A context in which BLAS uses one thread: many small products run faster so."""
    global _controller
    if _controller is None:
        _controller = ThreadpoolController()      # inspects the loaded libraries once
    return _controller.limit(limits=1, user_api="blas")


@contextmanager
def blas_threads_for(flops):
    """Context: one BLAS thread if ``flops`` (the work of the fit) is small, else default."""
    with one_blas_thread() if flops < SMALL_WORK else nullcontext():
        yield
