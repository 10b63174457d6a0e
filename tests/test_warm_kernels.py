"""booktools.warm: kernels forked from a process that has imported what the chapters import
run as kernels started from nothing do, and are stopped, interrupted and noticed dead as
they are."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap

import nbclient
import nbformat
import psutil
import pytest
from nbclient.exceptions import DeadKernelError

import lincls
from booktools import warm
from booktools.kernels import STARTUP_TIMEOUT, IPCKernelManager, WarmKernelManager
from lincls.homework.answers import EXPECTED_ENV

pytestmark = [pytest.mark.skipif(sys.platform != "linux", reason="fork, abstract sockets"),
              pytest.mark.timeout(4 * STARTUP_TIMEOUT)]  # a bound for a hang, not a wait

# The build's kernels have one BLAS thread (two: test_blas_threads_are_no_bar_to_a_warm_start).
ONE_THREAD = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
# What a kernel sees of where and how it runs, and whether its figures are shown inline.
# (A forked kernel's argv has --IPKernelApp.parent_handle besides: booktools.warm.)
LOOK = [
    "import json, os, sys\nprint(os.getcwd(), os.path.basename(sys.argv[0]))",
    "print(json.dumps(sorted(os.environ.items())))",
    "print(json.dumps(sys.path))",
    "print([a if not a.endswith('.json') else 'connection file' for a in sys.argv[1:]\n"
    "       if not a.startswith('--IPKernelApp.parent_handle=')])",
    "import matplotlib.pyplot as plt\nplt.plot([0, 1])\nplt.show()",
    "plt.plot([1, 0]);",  # shown at the cell's end, without show()
    "print(os.getpgid(0) == os.getpid(), os.getsid(0) == os.getpid())",
    "print(sorted(os.listdir('/proc/self/fd')))",
    "import numpy as np\nprint(np.random.get_state()[1][:3].tolist())",
]


@pytest.fixture(scope="module", autouse=True)
def stop_warm_processes():
    """The warm processes these tests start end with them (each holds its imports)."""
    yield
    warm.stop()


def execute(manager, cells, folder, env=None, start=True, **kwargs):
    """Run `cells` in a kernel of `manager` in `folder` (in `env`); the notebook, and the
    kernel's pid and its parent's command line. With `start`, the warm process for `env`
    is started first, as the build starts its own (then the first kernel is forked too)."""
    if start:
        warm.start(ONE_THREAD if env is None else env)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    seen = {}

    def look(cell, **_):
        kernel = psutil.Process(client.km.provisioner.process.pid)
        seen.setdefault("pid", kernel.pid)
        seen.setdefault("parent", kernel.parent().cmdline())

    client = nbclient.NotebookClient(nb, timeout=STARTUP_TIMEOUT, startup_timeout=STARTUP_TIMEOUT,
                                     kernel_manager_class=manager, on_cell_executed=look,
                                     resources={"metadata": {"path": str(folder)}}, **kwargs)

    async def run():
        async with client.async_setup_kernel(env=ONE_THREAD if env is None else env):
            for index, cell in enumerate(nb.cells):
                await client.async_execute_cell(cell, index)

    asyncio.run(run())
    return nb, seen


def outputs(nb):
    """Each cell's outputs, as (type, text or the MIME types shown); a stream's parts as
    one (a busy machine's kernel may send a line in two messages)."""
    found = []
    for cell in nb.cells:
        shown = []
        for o in cell.outputs:
            if (o.output_type == "stream" and shown and shown[-1][0] == "stream"
                    and shown[-1][2].name == o.name):
                shown[-1][1].append(o.text)
            else:
                shown.append((o.output_type, [o.text] if "text" in o else None, o))
        found.append([(kind, "".join(text).strip() if text is not None
                       else sorted(o.get("data", {}))) for kind, text, o in shown])
    return found


def is_warm(parent):
    return parent[1:3] == ["-m", "booktools.warm"]


def test_a_warm_kernel_runs_as_one_started_from_nothing(tmp_path):
    """The same working folder, argv, environment, sys.path, inline backend (a figure is
    shown as a PNG, also at a cell's end), file descriptors, a session of its own; NumPy's
    global random state seeded afresh (not the warm process's, shared by every fork)."""
    env = {**ONE_THREAD, "BOOKTOOLS_TEST_VALUE": "seen"}
    cold, cold_seen = execute(IPCKernelManager, LOOK, tmp_path, env)
    first, first_seen = execute(WarmKernelManager, LOOK, tmp_path, env)
    second, second_seen = execute(WarmKernelManager, LOOK, tmp_path, env)
    assert not is_warm(cold_seen["parent"])
    assert is_warm(first_seen["parent"]) and first_seen["parent"] == second_seen["parent"]
    expected = outputs(cold)
    assert expected[0] == [("stream", f"{tmp_path} ipykernel_launcher.py")]
    assert ["BOOKTOOLS_TEST_VALUE", "seen"] in json.loads(expected[1][0][1])
    assert expected[4] == expected[5] == [("display_data", ["image/png", "text/plain"])]
    assert expected[6] == [("stream", "True True")]
    for nb in (first, second):
        assert outputs(nb)[:-1] == expected[:-1]
    assert outputs(first)[-1] != outputs(second)[-1]  # each fork its own random state


def test_a_warm_kernel_imports_what_one_started_from_nothing_imports(tmp_path, monkeypatch):
    """A warm process started in a folder that holds a package of the same name as one it
    imports (the student edition's build runs in a copy of the book, lincls and all) forks
    kernels that import the package a kernel started from nothing finds, not that one."""
    started_in, folder = tmp_path / "book-copy", tmp_path / "chapter"
    (started_in / "lincls").mkdir(parents=True)
    (started_in / "lincls" / "__init__.py").write_text("raise ImportError('the copy')\n")
    folder.mkdir()
    env = {**ONE_THREAD, "BOOKTOOLS_TEST_VALUE": "started in a copy"}  # a warm process of its own
    monkeypatch.chdir(started_in)
    warm.start(env)
    monkeypatch.chdir(tmp_path)  # the kernels' folder named relative to it, as the build may
    cells = ["import lincls\nprint(lincls.__file__)"]
    cold, _ = execute(IPCKernelManager, cells, folder.name, env, start=False)
    forked, seen = execute(WarmKernelManager, cells, folder.name, env, start=False)
    assert is_warm(seen["parent"])
    assert outputs(forked) == outputs(cold) == [[("stream", lincls.__file__)]]


def test_a_warm_kernel_stops_with_its_group_and_is_interrupted(tmp_path):
    """Shut down at once, the kernel and a process it started are killed (its process
    group); an interrupt stops a running cell; a kernel that dies is noticed."""
    warm.start(ONE_THREAD)  # as the build does: its first kernel is forked too

    async def run():
        km = WarmKernelManager()
        await km.start_kernel(cwd=str(tmp_path), env=ONE_THREAD)
        assert is_warm(psutil.Process(km.provisioner.pid).parent().cmdline())
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=STARTUP_TIMEOUT)
        reply = await kc.execute_interactive(
            "import subprocess\nchild = subprocess.Popen(['sleep', '600'])",
            timeout=STARTUP_TIMEOUT)
        assert reply["content"]["status"] == "ok"
        procs = [psutil.Process(km.provisioner.pid)]
        procs += procs[0].children()
        assert len(procs) == 2
        # interrupted once it runs the cell (earlier, ipykernel's own code gets the signal)
        msg_id = kc.execute("import time\nprint('asleep', flush=True)\ntime.sleep(600)")
        while True:
            msg = await kc.get_iopub_msg(timeout=STARTUP_TIMEOUT)
            if (msg["parent_header"].get("msg_id") == msg_id
                    and msg["content"].get("text", "").strip() == "asleep"):
                break
        await km.interrupt_kernel()
        reply = await kc.get_shell_msg(timeout=STARTUP_TIMEOUT)
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"]["ename"] == "KeyboardInterrupt"
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
        assert not await km.is_alive()
        gone, alive = psutil.wait_procs(procs, timeout=STARTUP_TIMEOUT)
        assert alive == []

    asyncio.run(run())


def test_a_kernel_that_dies_is_noticed_with_its_exit_status(tmp_path):
    """nbclient notices that a forked kernel died, and its status reads as Popen's would
    (the portability layer names the signal that killed a kernel)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")])
    client = nbclient.NotebookClient(nb, timeout=STARTUP_TIMEOUT, startup_timeout=STARTUP_TIMEOUT,
                                     kernel_manager_class=WarmKernelManager,
                                     resources={"metadata": {"path": str(tmp_path)}})

    async def run():
        async with client.async_setup_kernel(env=ONE_THREAD):
            assert is_warm(psutil.Process(client.km.provisioner.pid).parent().cmdline())
            with pytest.raises(DeadKernelError):
                await client.async_execute_cell(nb.cells[0], 0)
            return await client.km.provisioner.poll()

    assert asyncio.run(run()) == -signal.SIGKILL


@pytest.mark.skipif(os.geteuid() != 0, reason="needs another user: root can become one")
def test_another_user_gets_no_kernel(tmp_path):
    """The warm process's abstract socket is open to every user; it answers its own only."""
    address = warm.start(ONE_THREAD)
    request = json.dumps({"argv": ["-f", str(tmp_path / "k.json")], "env": ONE_THREAD,
                          "cwd": str(tmp_path)})
    probe = textwrap.dedent(f"""
        import os, socket
        os.setgid(65534); os.setuid(65534)
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout({STARTUP_TIMEOUT})
            sock.connect({address!r})
            try:
                sock.sendall({request!r}.encode() + b"\\n")
                print("answered", sock.recv(100))
            except (BrokenPipeError, ConnectionResetError):  # closed before reading it
                print("answered", b"")
        """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=STARTUP_TIMEOUT)
    assert done.stdout.strip() == "answered b''", done.stdout + done.stderr


def test_another_environment_gets_a_warm_process_of_its_own(tmp_path):
    """A kernel whose environment differs (but for the variables set for each kernel:
    jupyter_client's JPY_*, booktools.warm.PER_KERNEL) is forked from another warm process,
    which imported in that environment; each kernel sees its own variables."""
    cell = ["import os\nprint(os.environ['BOOKTOOLS_TEST_VALUE'], os.environ[%r])"
            % EXPECTED_ENV]
    runs = {value: execute(WarmKernelManager, cell, tmp_path,
                           {**ONE_THREAD, "BOOKTOOLS_TEST_VALUE": value, "JPY_TEST": value,
                            EXPECTED_ENV: value})
            for value in ("a", "b")}
    again = execute(WarmKernelManager, cell, tmp_path,
                    {**ONE_THREAD, "BOOKTOOLS_TEST_VALUE": "a", "JPY_TEST": "c",
                     EXPECTED_ENV: "c", "PYTEST_CURRENT_TEST": "c"})
    assert [outputs(nb)[0][0][1] for nb, _ in runs.values()] == ["a a", "b b"]
    assert outputs(again[0])[0][0][1] == "a c"
    parents = [seen["parent"] for _, seen in (*runs.values(), again)]
    assert all(is_warm(p) for p in parents)
    assert parents[0] != parents[1] and parents[2] == parents[0]
    assert EXPECTED_ENV in warm.PER_KERNEL


def test_blas_threads_are_no_bar_to_a_warm_start(tmp_path):
    """With two BLAS threads OpenBLAS starts a pool of threads on import, and stops it
    before a fork: the kernel is forked, and its BLAS starts two threads again when used."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("OpenBLAS starts no thread on one core")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "BOOKTOOLS_TEST_VALUE": "blas"}
    nb, seen = execute(WarmKernelManager, [
        "import os, threadpoolctl, numpy as np\n"
        "print(sorted({p['num_threads'] for p in threadpoolctl.threadpool_info()\n"
        "              if p['internal_api'] == 'openblas'}))",
        "before = len(os.listdir('/proc/self/task'))\na = np.ones((500, 500))\na @ a\n"
        "print(len(os.listdir('/proc/self/task')) - before)"], tmp_path, env)
    assert is_warm(seen["parent"])
    assert outputs(nb) == [[("stream", "[2]")], [("stream", "1")]]


def test_a_thread_that_outlives_a_fork_stops_the_warm_start(tmp_path):
    """A thread that no library stops before a fork (here one that a sitecustomize starts
    in every process): that warm process refuses, and the kernel starts from nothing (and
    runs)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n")
    env = {**ONE_THREAD, "PYTHONPATH": str(site), "BOOKTOOLS_TEST_VALUE": "thread"}
    assert warm.fork_kernel([sys.executable, *warm.LAUNCHER, "-f", str(tmp_path / "k.json")],
                            env, tmp_path, STARTUP_TIMEOUT, at_once=True) is None
    nb, seen = execute(WarmKernelManager, ["print(1 + 1)"], tmp_path, env)
    assert outputs(nb) == [[("stream", "2")]] and not is_warm(seen["parent"])


def test_a_warm_process_ends_with_the_processes_that_may_ask_it():
    """Its standard input is held by the process that started it (and the processes forked
    from it): when they have exited, it exits, also if they did not close it (here the
    process exits without its exit handlers, as a build's reading processes do)."""
    started = subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            import os
            from booktools import warm
            warm.start({**os.environ, "OPENBLAS_NUM_THREADS": "1"})
            print(warm._processes[0][1].pid, flush=True)
            os._exit(0)
            """)], capture_output=True, text=True, check=True, timeout=STARTUP_TIMEOUT)
    pid = int(started.stdout)
    try:
        gone, alive = psutil.wait_procs([psutil.Process(pid)], timeout=STARTUP_TIMEOUT)
    except psutil.NoSuchProcess:
        alive = []
    assert alive == []


def test_an_environment_gets_its_warm_process_at_its_second_kernel(tmp_path):
    """A caller that asks for one kernel pays no warm process: the first kernel of an
    environment starts as usual, the second is forked; so is the first with
    ``warm_at_once`` (a server's: booktools.labkernels)."""

    class AtOnce(WarmKernelManager):
        warm_at_once = True

    env = {**ONE_THREAD, "BOOKTOOLS_TEST_VALUE": "twice"}
    parents = [execute(WarmKernelManager, ["print(1)"], tmp_path, env, start=False)[1]["parent"]
               for _ in range(2)]
    _, seen = execute(AtOnce, ["print(1)"], tmp_path,
                      {**ONE_THREAD, "BOOKTOOLS_TEST_VALUE": "at once"}, start=False)
    assert [is_warm(p) for p in (*parents, seen["parent"])] == [False, True, True]


def test_other_commands_start_as_usual(tmp_path):
    """Only this Python's ``-m ipykernel_launcher`` is forked."""
    for cmd in ([sys.executable, "-m", "other_kernel", "-f", "k.json"],
                ["/usr/bin/python3", *warm.LAUNCHER, "-f", "k.json"]):
        assert warm.fork_kernel(cmd, dict(ONE_THREAD), tmp_path, STARTUP_TIMEOUT) is None
