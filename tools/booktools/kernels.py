"""Kernels that listen on Unix sockets, not TCP ports, where the system has them (Linux).

jupyter_client picks a kernel's five TCP ports by binding port 0 and closing the socket,
writes them into the connection file, and the kernel binds them a second later. Any
process may take such a port in between: a kernel started at the same moment elsewhere
(the book's build, the release and the tests start kernels side by side) or any
outgoing connection. The kernel then dies with "Address already in use"
(jupyter/jupyter_client#487); a CI run of this book once failed so. Over ZeroMQ's ``ipc``
transport with a name in Linux's abstract socket namespace (``@`` and a random name)
there is no port to take, and no file to leave behind. Elsewhere nothing changes.
"""

import sys
import uuid

from jupyter_client import AsyncKernelManager
from nbclient import NotebookClient

# Seconds a kernel may take to start before a client gives up: every client the book's
# machinery and its tests create waits this long (nbclient's default is 60 s; nbval's too,
# which a CI run hit on two busy cores). A cold start (numba's cache, matplotlib's fonts,
# imports from a cold disk) takes seconds on a quiet machine; on two cores shared with
# four other kernels it took over 60 s once. The wait ends as soon as the kernel answers.
STARTUP_TIMEOUT = 300


class IPCKernelManager(AsyncKernelManager):
    """nbclient's default kernel manager (asynchronous: a blocking one would stop nbclient
    from noticing that a kernel died), with the kernel on abstract Unix sockets of its own
    on Linux. Pass it as ``NotebookClient(..., kernel_manager_class=IPCKernelManager)``."""

    def __init__(self, **kwargs):
        if sys.platform == "linux":
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", f"@jupyter-kernel-{uuid.uuid4().hex}")
        super().__init__(**kwargs)


def notebook_client(nb, folder, **kwargs):
    """nbclient's ``NotebookClient`` for ``nb``, its kernel started in ``folder`` and
    managed by :class:`IPCKernelManager`, waiting :data:`STARTUP_TIMEOUT` for it to start;
    ``kwargs`` go to ``NotebookClient``."""
    kwargs.setdefault("startup_timeout", STARTUP_TIMEOUT)
    return NotebookClient(nb, resources={"metadata": {"path": str(folder)}},
                          kernel_manager_class=IPCKernelManager, **kwargs)
