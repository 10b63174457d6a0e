"""booktools.kernels: kernels on abstract Unix sockets, with no port picked for them to lose;
clients whose waits for a message look again every second."""

import asyncio
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from queue import Empty

import nbclient
import nbformat
import psutil
import pytest
from nbclient.exceptions import DeadKernelError

from booktools.homework.sandbox import _CappedClient
from booktools.kernels import (
    IOPUB_TIMEOUT,
    LOOK_AGAIN,
    STARTUP_TIMEOUT,
    IPCKernelManager,
    PromptChannel,
)

LINUX = pytest.mark.skipif(sys.platform != "linux", reason="abstract sockets: Linux")

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


@LINUX
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


@LINUX
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


class MissedWakeUp:
    """A socket whose poll misses the wake-up of a message (`there`: whether one is there):
    it answers only when its timeout ends, never for None, as pyzmq's then does."""

    def __init__(self, there):
        self.there, self.timeouts = there, []

    async def poll(self, timeout_ms):
        self.timeouts.append(timeout_ms)
        if timeout_ms is None:
            await asyncio.Event().wait()
        await asyncio.sleep(timeout_ms / 1000)
        return int(self.there)


def channel_on(socket):
    channel = PromptChannel.__new__(PromptChannel)  # no zmq socket needed for this
    channel.socket = socket

    async def recv():
        return {"msg_type": "execute_reply"}

    channel._recv = recv
    return channel


def test_a_missed_wake_up_costs_one_slice():
    """A wait with no end (nbclient's for output) finds the message after its first slice;
    a wait with a timeout ends with Empty once the timeout is over, never before, each
    slice at most LOOK_AGAIN seconds."""
    there = MissedWakeUp(there=True)
    found = asyncio.run(asyncio.wait_for(channel_on(there).get_msg(timeout=None), 60))
    assert found == {"msg_type": "execute_reply"} and there.timeouts == [1000 * LOOK_AGAIN]
    none = MissedWakeUp(there=False)
    start = time.monotonic()
    with pytest.raises(Empty):
        asyncio.run(channel_on(none).get_msg(timeout=1.5))
    assert time.monotonic() - start >= 1.5
    assert len(none.timeouts) >= 2 and all(0 <= t <= 1000 * LOOK_AGAIN for t in none.timeouts)


def test_every_client_of_the_books_kernels_waits_in_slices():
    """The build's and the tests' kernel manager, and the grader's (sandboxed or not)."""
    for client in (IPCKernelManager().client_factory, _CappedClient):
        for channel in ("shell", "iopub", "stdin", "control"):
            assert issubclass(getattr(client, f"{channel}_channel_class").default_value,
                              PromptChannel), (client, channel)


@pytest.mark.skipif(sys.platform != "linux", reason="abstract Unix sockets are Linux's")
def test_nbval_kernels_listen_on_unix_sockets():
    """make homework's nbval (booktools.nbvalkernels): no TCP port, and its kernel runs."""
    from nbval.kernel import RunningKernel

    import booktools.nbvalkernels  # noqa: F401 (the plugin patches nbval)

    kernel = RunningKernel("python3", startup_timeout=STARTUP_TIMEOUT)
    try:
        assert kernel.km.transport == "ipc" and kernel.km.ip.startswith("@jupyter-kernel-")
        msg_id = kernel.execute_cell_input("print(6 * 7)")
        kernel.await_idle(msg_id, STARTUP_TIMEOUT)
    finally:
        kernel.stop()


def test_nbval_waits_iopub_timeout_for_a_cells_outputs(tmp_path):
    """nbval stops the kernel when an output comes 5 s after the cell's reply; under
    booktools.nbvalkernels every cell waits IOPUB_TIMEOUT."""
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")]),
                   tmp_path / "nb.ipynb")
    (tmp_path / "conftest.py").write_text(
        "def pytest_collection_modifyitems(items):\n"
        "    print('WAITS', sorted({item.output_timeout for item in items}))\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "booktools.nbvalkernels", "--nbval", "-s",
         "--collect-only", "-q", "-p", "no:cacheprovider", "nb.ipynb"],
        cwd=tmp_path, capture_output=True, text=True, timeout=STARTUP_TIMEOUT)
    assert f"WAITS [{IOPUB_TIMEOUT}]" in result.stdout, result.stdout + result.stderr
