"""Small dense linear algebra on one BLAS thread.

Used by ``lincls.pca`` and ``lincls.svm``. Their BLAS calls are small (matrices of
size n_features); splitting such a call over several threads costs more in start-up
and synchronization than it saves, and on a busy machine the threads of many processes
compete for the same cores. Below about 10⁹ floating-point operations a fit therefore
runs on one BLAS thread; larger fits keep the library's default.
"""

from contextlib import contextmanager, nullcontext

from threadpoolctl import ThreadpoolController

__all__ = ["blas_threads_for"]

SMALL_WORK = 1e9
_controller = None


def _limit_to_one_thread():
    global _controller
    if _controller is None:
        _controller = ThreadpoolController()      # inspects the loaded libraries once
    return _controller.limit(limits=1, user_api="blas")


@contextmanager
def blas_threads_for(flops):
    """Context: one BLAS thread if ``flops`` (the work of the fit) is small, else default."""
    with _limit_to_one_thread() if flops < SMALL_WORK else nullcontext():
        yield
