"""nbval's kernels as the book's (a pytest plugin: ``pytest -p booktools.nbvalkernels
--nbval ...``, as the Makefile's NBVAL runs it).

- On Linux a kernel listens on Unix sockets (:class:`booktools.kernels.IPCKernelManager`
  says why): nbval's own take TCP ports that another process may take first, and the load
  layer's homework run, two nbval runs side by side, once lost homework6's kernel so
  ("Kernel died before replying to kernel_info").
- nbval then waits 10 s for the reply to kernel_info and 30 s for IOPub, whatever
  ``--nbval-kernel-startup-timeout`` says: here both wait that timeout, and end as soon
  as the kernel answers.
- After a cell's reply, nbval waits 5 s for each of its outputs and stops the kernel when
  one is late (a busy machine): here it waits :data:`booktools.kernels.IOPUB_TIMEOUT`.
"""

import sys
import time
import uuid
from queue import Empty

from jupyter_client.manager import KernelManager
from nbval import kernel, plugin

from .kernels import IOPUB_TIMEOUT


def start_new_kernel(startup_timeout=60, kernel_name="python", **kwargs):
    """nbval's ``start_new_kernel``, with the kernel on abstract Unix sockets on Linux."""
    where = ({"transport": "ipc", "ip": f"@jupyter-kernel-{uuid.uuid4().hex}"}
             if sys.platform == "linux" else {})
    km = KernelManager(kernel_name=kernel_name,
                       kernel_spec_manager=kernel.NbvalKernelspecManager(), **where)
    km.start_kernel(**kwargs)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=startup_timeout)
    except RuntimeError:
        kc.stop_channels()
        km.shutdown_kernel()
        raise
    kc.startup_timeout = startup_timeout
    return km, kc


def ensure_iopub_up(self):
    """nbval's ``RunningKernel._ensure_iopub_up``: kernel_info until its idle status comes
    on IOPub (IOPub may connect late), all within the start-up timeout."""
    timeout = self.kc.startup_timeout
    deadline = time.monotonic() + timeout
    while True:
        msg_id = self.kc.kernel_info()
        try:
            self.await_reply(msg_id, timeout=timeout)
        except Empty:
            raise RuntimeError(f"no reply to kernel_info in {timeout} s") from None
        try:
            self.await_idle(msg_id, 1)
            return
        except Empty:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no IOPub from the kernel in {timeout} s") from None


def patient_cell(init):
    """nbval's ``IPyNbCell.__init__``, with the outputs' wait IOPUB_TIMEOUT."""
    def wrapper(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.output_timeout = IOPUB_TIMEOUT
    wrapper.__wrapped__ = init
    return wrapper


kernel.start_new_kernel = start_new_kernel
kernel.RunningKernel._ensure_iopub_up = ensure_iopub_up
if not hasattr(plugin.IPyNbCell.__init__, "__wrapped__"):
    plugin.IPyNbCell.__init__ = patient_cell(plugin.IPyNbCell.__init__)
