"""Small dense linear algebra on one BLAS thread.

Used by ``lincls.pca``, ``lincls.svm`` and ``lincls.multiclass``. Their BLAS calls
are small (matrices of size n_features); splitting such a call over several threads
costs more in start-up and synchronization than it saves, and on a busy machine the
threads of many processes compete for the same cores. Below about 10⁹ floating-point
operations a fit therefore runs on one BLAS thread; larger fits keep the library's
default.
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
