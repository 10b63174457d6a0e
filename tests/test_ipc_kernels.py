"""booktools.kernels: kernels on abstract Unix sockets, with no port picked for them to lose."""

import sys
from concurrent.futures import ThreadPoolExecutor

import nbclient
import nbformat
import psutil
import pytest
from nbclient.exceptions import DeadKernelError

from booktools.kernels import STARTUP_TIMEOUT, IPCKernelManager

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="abstract sockets: Linux")

CODE = "import os\nos.getpid()"


def run(tmp_path):
    """Run one cell through nbclient with IPCKernelManager in ``tmp_path``; return the
    kernel's pid (from the cell), the names of its Unix sockets and its manager."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CODE)])
    found = {}

    def look(cell, **_):
        kernel = psutil.Process(client.km.provisioner.process.pid)
        found["unix"] = {c.laddr for c in kernel.net_connections(kind="unix")}
        found["km"] = client.km

    client = nbclient.NotebookClient(nb, timeout=60, startup_timeout=STARTUP_TIMEOUT,
                                     kernel_manager_class=IPCKernelManager,
                                     resources={"metadata": {"path": str(tmp_path)}},
                                     shutdown_kernel="immediate", on_cell_executed=look)
    client.execute()
    pid = int(nb.cells[0].outputs[0]["data"]["text/plain"])
    return pid, found["unix"], found["km"]


def test_kernels_listen_on_sockets_of_their_own_and_leave_no_file(tmp_path):
    """Two kernels started at the same moment run, each listening on the five sockets of
    its connection file, named in the abstract namespace (no TCP port a parent picked);
    nothing is left in their folders."""
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(run, folders))
    (pid_a, _, km_a), (pid_b, _, km_b) = runs
    assert pid_a != pid_b and km_a.ip != km_b.ip
    for _, sockets, km in runs:
        info = km.get_connection_info()
        assert info["transport"] == "ipc" and info["ip"].startswith("@jupyter-kernel-")
        channels = ("shell", "iopub", "stdin", "control", "hb")
        assert {f"{info['ip']}-{info[c + '_port']}" for c in channels} <= sockets
    assert [list(folder.iterdir()) for folder in folders] == [[], []]


@pytest.mark.timeout(2 * STARTUP_TIMEOUT)  # a bound for a hang, not a wait
def test_a_kernel_that_dies_is_noticed(tmp_path):
    """nbclient notices that a kernel on Unix sockets died (it polls the process while it
    waits for messages; with a blocking kernel manager it would wait for ever)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")])
    client = nbclient.NotebookClient(nb, timeout=60, startup_timeout=STARTUP_TIMEOUT,
                                     kernel_manager_class=IPCKernelManager,
                                     resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(DeadKernelError):
        client.execute()
