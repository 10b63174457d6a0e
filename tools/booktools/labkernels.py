"""A Jupyter server's kernels (JupyterLab's) forked from a warm process
(:mod:`booktools.warm`): start the server with
``--AsyncMappingKernelManager.kernel_manager_class=booktools.labkernels.WarmServerKernelManager``.
The browser layer's JupyterLab runs every chapter and homework so
(``tests/test_jupyterlab.py``). A module of its own: only a server imports jupyter_server.
"""

from jupyter_server.services.kernels.kernelmanager import ServerKernelManager

from .kernels import WarmStart


class WarmServerKernelManager(WarmStart, ServerKernelManager):
    """jupyter_server's kernel manager, with a warm start where it can be, from its first
    kernel on (a server starts many)."""

    warm_at_once = True
