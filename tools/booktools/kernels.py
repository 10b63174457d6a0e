"""Kernels that listen on Unix sockets, not TCP ports, where the system has them (Linux).

jupyter_client picks a kernel's five TCP ports by binding port 0 and closing the socket,
writes them into the connection file, and the kernel binds them a second later. Any
process may take such a port in between: a kernel started at the same moment elsewhere
(the book's build, the release and the tests start kernels side by side) or any
outgoing connection. The kernel then dies with "Address already in use"
(jupyter/jupyter_client#487); a CI run of this book once failed so. Over ZeroMQ's ``ipc``
transport with a name in Linux's abstract socket namespace (``@`` and a random name)
there is no port to take, and no file to leave behind. Elsewhere nothing changes.

Their clients look for a message again every second (:class:`PromptChannel`): a wait
for a message that has already arrived must not last until its timeout.

:class:`WarmKernelManager`'s kernels (the build's, the homework tools') are forked from a
process that has imported what the chapters import (:mod:`booktools.warm`).
"""

import asyncio
import os
import sys
import time
import uuid
from queue import Empty

from jupyter_client import AsyncKernelManager
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from nbclient import NotebookClient
from traitlets import DottedObjectName, Type

from .warm import fork_kernel

# Seconds a kernel may take to start before a client gives up: every client the book's
# machinery and its tests create waits this long (nbclient's default is 60 s; nbval's too,
# which a CI run hit on two busy cores). A cold start (numba's cache, matplotlib's fonts,
# imports from a cold disk) takes seconds on a quiet machine; on two cores shared with
# four other kernels it took over 60 s once. The wait ends as soon as the kernel answers.
STARTUP_TIMEOUT = 300

# Seconds a cell's last outputs may take to arrive after its reply (nbclient waits 4 s and
# then goes on without them, silently): they come at once, unless the machine is busy.
# Past it, the client raises (raise_on_iopub_timeout) rather than lose an output.
IOPUB_TIMEOUT = 60

#: Seconds a client's wait for a kernel's message lasts before it looks again.
LOOK_AGAIN = 1.0


class PromptChannel(AsyncZMQSocketChannel):
    """A channel whose wait for a message looks again every :data:`LOOK_AGAIN` seconds.

    pyzmq's asyncio poll is woken by an edge of the socket's file descriptor, and such a
    wake-up can be missed: the poll then returns the message that was there all along
    only when its timeout ends and it looks once more (zeromq/pyzmq#1558). Builds of this
    book waited so for 300 s, nbclient's timeout for a cell, for a chapter whose kernel
    had used 2-4 s of CPU (twice in about 70 cold builds, once in 4 on another machine, and
    in a CI run), and then went on as if nothing had happened. Waiting in slices bounds
    such a wait to a slice; the wait as a whole ends when the caller's timeout does, or
    never (None)."""

    async def get_msg(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await super().get_msg(LOOK_AGAIN if left is None
                                             else min(LOOK_AGAIN, left))
            except Empty:
                if left is not None and left <= LOOK_AGAIN:
                    raise


class PromptClient(AsyncKernelClient):
    """An asynchronous kernel client on :class:`PromptChannel` channels."""

    shell_channel_class = Type(PromptChannel)
    iopub_channel_class = Type(PromptChannel)
    stdin_channel_class = Type(PromptChannel)
    control_channel_class = Type(PromptChannel)


class IPCKernelManager(AsyncKernelManager):
    """nbclient's default kernel manager (asynchronous: a blocking one would stop nbclient
    from noticing that a kernel died), with the kernel on abstract Unix sockets of its own
    on Linux and :class:`PromptClient` clients. Pass it as
    ``NotebookClient(..., kernel_manager_class=IPCKernelManager)``."""

    client_class = DottedObjectName("booktools.kernels.PromptClient")
    client_factory = Type(PromptClient, klass=AsyncKernelClient)

    def __init__(self, **kwargs):
        if sys.platform == "linux":
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", f"@jupyter-kernel-{uuid.uuid4().hex}")
        super().__init__(**kwargs)


class WarmStart:
    """A kernel manager's mixin: its kernels are forked from a warm process
    (:func:`booktools.warm.fork_kernel`) where they can be, and start as usual elsewhere.
    ``warm_at_once``: the first kernel of an environment too (for a server)."""

    warm_at_once = False

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        # jupyter_client's hook "to launch kernel subprocesses differently"
        process = await asyncio.to_thread(fork_kernel, kernel_cmd, kw.get("env"),
                                          kw.get("cwd"), STARTUP_TIMEOUT, self.warm_at_once)
        if process is None:
            return await super()._async_launch_kernel(kernel_cmd, **kw)
        provisioner = self.provisioner  # jupyter_client's LocalProvisioner, on ForkedKernel
        provisioner.process, provisioner.pid = process, process.pid
        provisioner.pgid = process.pid  # the kernel leads a session of its own
        provisioner.cwd = kw.get("cwd") or os.getcwd()
        self._reconcile_connection_info(provisioner.connection_info)


class WarmKernelManager(WarmStart, IPCKernelManager):
    """:class:`IPCKernelManager` with a warm start (:class:`WarmStart`). Used where many
    kernels start in one environment: the build, the homework tools
    (:func:`notebook_client`), the portability layer (and, as
    :class:`booktools.labkernels.WarmServerKernelManager`, the browser layer's
    JupyterLab)."""


def notebook_client(nb, folder, **kwargs):
    """nbclient's ``NotebookClient`` for ``nb``, its kernel started in ``folder`` and
    managed by :class:`WarmKernelManager`, waiting :data:`STARTUP_TIMEOUT` for it to start
    and :data:`IOPUB_TIMEOUT` for a cell's outputs; ``kwargs`` go to ``NotebookClient``."""
    kwargs.setdefault("startup_timeout", STARTUP_TIMEOUT)
    kwargs.setdefault("iopub_timeout", IOPUB_TIMEOUT)
    kwargs.setdefault("raise_on_iopub_timeout", True)
    return NotebookClient(nb, resources={"metadata": {"path": str(folder)}},
                          kernel_manager_class=WarmKernelManager, **kwargs)
