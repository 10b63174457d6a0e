"""The grading sandbox (``booktools.homework.sandbox``) attacked directly: tiny notebooks
run with nbclient in :class:`SandboxKernelManager`, each in its own ``tmp_path``.

Each test asserts what a kernel outside the sandbox could do (read a planted file, see
the repository, the caller's environment or processes, reach a socket, write a file,
fork without end, allocate 20 GiB, flood the notebook). The tests skip where bubblewrap
is missing (``make unit`` installs it as root with apt), and fail then under
``CI=true``.
"""

import asyncio
import json
import os
import socket
import time
from pathlib import Path

import pytest
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_code_cell, new_notebook
from traitlets.config import Config

from booktools.homework import sandbox
from booktools.homework.sandbox import LIMITS, OUTPUT_CAP, SandboxKernelManager

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", autouse=True)
def bwrap():
    try:
        return sandbox.find_bwrap()
    except ValueError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and no sandbox: {exc}")
        pytest.skip(str(exc))


class CappedClient(sandbox._OutputCap, NotebookClient):
    """nbclient with the output cap of nbgrader's sandboxed ``Execute``."""


def run(folder, *cells, timeout=20, group=None, **limits):
    """Run ``cells`` in a sandboxed kernel whose notebook lives in ``folder``, with
    ``limits`` and ``group`` limits beyond the defaults; the executed notebook."""
    folder.mkdir(exist_ok=True)
    nb = new_notebook(cells=[new_code_cell(c) for c in cells])
    config = Config({"SandboxKernelManager": {"limits": limits,
                                              "group_limits": group or {}}})
    client = CappedClient(nb, kernel_manager_class=SandboxKernelManager, config=config,
                          kernel_name="python3", timeout=timeout, interrupt_on_timeout=True,
                          allow_errors=True, resources={"metadata": {"path": str(folder)}})
    client.execute()
    return nb


def printed(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def error(cell):
    return next((o.ename for o in cell.outputs if o.output_type == "error"), None)


def test_only_the_notebooks_files_are_there(tmp_path):
    """The kernel reads the files beside its notebook (copies), nothing else: not a
    file planted beside that folder, not the notebook itself."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the teacher's")
    (tmp_path / "work" / "sub").mkdir(parents=True)
    (tmp_path / "work" / "answers.json").write_text("{}")
    (tmp_path / "work" / "hw.ipynb").write_text("{}")
    nb = run(tmp_path / "work",
             "import os; print([f for f in sorted(os.listdir('.')) if f[0] != '.'], "
             "os.getcwd())",
             f"open({str(secret)!r}).read()",
             "open('../../' * 20 + 'etc/shadow').read()")
    assert printed(nb.cells[0]) == "['answers.json'] /home/student\n"
    assert error(nb.cells[1]) == "FileNotFoundError"
    assert error(nb.cells[2]) == "FileNotFoundError"


def test_the_repository_is_out_of_sight(tmp_path):
    """lincls imports; the book, its homework and booktools do not exist in there."""
    paths = [ROOT / "book" / "homework", ROOT / "tools" / "booktools", ROOT / "README.md"]
    nb = run(tmp_path, f"import os; print([os.path.exists(p) for p in {list(map(str, paths))}])",
             "import lincls.homework", "import booktools")
    assert printed(nb.cells[0]) == "[False, False, False]\n"
    assert error(nb.cells[1]) is None
    assert error(nb.cells[2]) == "ModuleNotFoundError"


def test_the_environment_is_cleared(tmp_path, monkeypatch):
    monkeypatch.setenv("LINCLS_TEACHER_MARKER", "course-secret")
    nb = run(tmp_path, "import os; print(sorted(os.environ))")
    names = eval(printed(nb.cells[0]))
    assert "LINCLS_TEACHER_MARKER" not in names
    assert {"PATH", "HOME"} <= set(names) and len(names) < 25, names


def test_the_sandboxs_own_processes_carry_no_teacher_variable(tmp_path, monkeypatch):
    """bwrap and the sandbox's init (pid 1 inside, of the caller's uid when not root:
    readable by the kernel then) start with PATH alone."""
    monkeypatch.setenv("LINCLS_TEACHER_MARKER", "course-secret")

    async def environments():
        km = SandboxKernelManager(kernel_name="python3")
        await km.start_kernel(cwd=str(tmp_path))
        try:
            pids = (km.provisioner.process.pid, km._init[0])
            return [Path(f"/proc/{pid}/environ").read_bytes() for pid in pids]
        finally:
            await km.shutdown_kernel(now=True)

    found = asyncio.run(environments())
    assert len(found) == 2 and all(b"PATH=" in env for env in found)
    assert not any(b"course-secret" in env for env in found)


def test_only_its_own_processes(tmp_path, monkeypatch):
    """A PID namespace of its own: a few processes, none of which holds the caller's
    environment or command line."""
    monkeypatch.setenv("LINCLS_TEACHER_MARKER", "course-secret")
    caller = Path("/proc/self/cmdline").read_text(errors="replace")
    nb = run(tmp_path, """\
import os
pids = [p for p in os.listdir('/proc') if p.isdigit()]
seen = []
for p in pids + ['self', str(os.getppid())]:
    for part in ('environ', 'cmdline'):
        try:
            seen.append(open(f'/proc/{p}/{part}', errors='replace').read())
        except OSError:
            pass
print(repr((len(pids), seen)))""")
    count, seen = eval(printed(nb.cells[0]))
    assert count <= 3 and seen
    assert caller not in seen and not any("course-secret" in text for text in seen)


def test_no_network(tmp_path):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        nb = run(tmp_path, f"import socket; socket.create_connection(('127.0.0.1', {port}), "
                           "timeout=5)")
        assert error(nb.cells[0]) in ("ConnectionRefusedError", "OSError")
        with pytest.raises(BlockingIOError):
            server.accept()


def test_writes_stay_in_its_private_copy(tmp_path):
    """Writing the folder it started in, the caller's temporary folder or the Python
    environment changes nothing outside."""
    import sys

    outside = tmp_path / "outside.txt"
    venv_file = Path(sys.prefix) / "pwned.txt"
    (tmp_path / "work").mkdir()
    nb = run(tmp_path / "work", "open('here.txt', 'w').write('x')", f"""\
import os
os.makedirs({str(tmp_path)!r}, exist_ok=True)
open({str(outside)!r}, 'w').write('x')""",
             f"open({str(venv_file)!r}, 'w').write('x')")
    assert error(nb.cells[0]) is None and error(nb.cells[2]) == "OSError"
    assert list(tmp_path.iterdir()) == [tmp_path / "work"]
    assert list((tmp_path / "work").iterdir()) == []
    assert not venv_file.exists()


def test_a_fork_bomb_is_bounded(tmp_path):
    start = time.monotonic()
    nb = run(tmp_path, """\
import os, time
n = 0
try:
    while True:
        if os.fork() == 0:
            while True:
                try:
                    os.fork()
                except OSError:
                    time.sleep(1)
        n += 1
except OSError as exc:
    print(n, type(exc).__name__)""", "print('alive')")
    forks, name = printed(nb.cells[0]).split()
    assert 0 < int(forks) < LIMITS["nproc"] and name == "BlockingIOError"
    assert printed(nb.cells[1]) == "alive\n"
    assert time.monotonic() - start < 30


def test_a_sleeping_cell_is_interrupted(tmp_path):
    """The cell timeout interrupts the kernel through the sandbox (bwrap passes no
    signal on: the interrupt is a message), and the next cell runs."""
    start = time.monotonic()
    nb = run(tmp_path, "import time; time.sleep(10**6)", "print('next')", timeout=2)
    assert error(nb.cells[0]) == "KeyboardInterrupt"
    assert printed(nb.cells[1]) == "next\n"
    assert time.monotonic() - start < 20


def test_cpu_time_is_limited(tmp_path):
    start = time.monotonic()
    with pytest.raises(DeadKernelError):
        run(tmp_path, "while True: pass", timeout=60, cpu=3)
    assert time.monotonic() - start < 30


def test_the_sandbox_as_a_whole_has_a_memory_limit(tmp_path, monkeypatch):
    """Processes each under the address-space limit cannot together hold more than the
    sandbox's control group allows: the system stops one of them (as root, where the
    machine lets us make control groups)."""
    probe = sandbox._cgroup(f"lincls-probe-{os.getpid()}", sandbox.GROUP_LIMITS)
    sandbox._remove_cgroup(probe)
    if not probe:
        pytest.skip("no control group can be made here (not root, or no memory and "
                    "pids controllers)")
    made, original = [], sandbox._cgroup

    def cgroup(*args):
        made.extend(folders := original(*args))
        return folders

    monkeypatch.setattr(sandbox, "_cgroup", cgroup)
    nb = run(tmp_path, """\
import os, time
kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = b'x' * (400 << 20)
        time.sleep(3)
        os._exit(0)
    kids.append(pid)
statuses = [os.waitpid(kid, 0)[1] for kid in kids]
print(sum(os.WIFSIGNALED(s) and os.WTERMSIG(s) == 9 for s in statuses))""",
             "print('alive')", group={"memory": 1 << 30})
    assert int(printed(nb.cells[0])) >= 1
    assert printed(nb.cells[1]) == "alive\n"
    assert made and not any(folder.exists() for folder in made)  # removed at the end


def test_20_gib_is_a_memory_error(tmp_path):
    nb = run(tmp_path, "import numpy as np\nx = np.empty(20 << 30, dtype=np.uint8)",
             "x = bytearray(20 << 30)", "print('alive')")
    assert [error(c) for c in nb.cells] == ["MemoryError", "MemoryError", None]


def test_100_mb_of_output_is_cut(tmp_path):
    nb = run(tmp_path, "print('x' * 10**8)", "while True: print('y' * 1000)",
             "print('after')")
    for cell in nb.cells[:2]:
        assert error(cell) == "OutputLimitExceeded"
        assert sum(len(str(o)) for o in cell.outputs) < 2 * OUTPUT_CAP
    assert printed(nb.cells[2]) == "after\n"


def client(folder, *cells, **traits):
    """An unstarted capped client of ``cells`` in ``folder``'s sandbox."""
    nb = new_notebook(cells=[new_code_cell(c) for c in cells])
    return CappedClient(nb, kernel_manager_class=SandboxKernelManager, timeout=20,
                        kernel_name="python3", allow_errors=True,
                        resources={"metadata": {"path": str(folder)}}, **traits)


def test_display_updates_and_widget_state_are_bounded_too(tmp_path):
    """Updates of a display replace an earlier output (never an output message), and
    nbclient would keep every widget's state: the cap counts the first, the second is
    ignored."""
    c = client(tmp_path, """from IPython.display import display
handle = display('x', display_id=True)
for _ in range(100):
    handle.update('y' * 10**6)""", """from ipykernel.comm import Comm
for _ in range(20):
    Comm(target_name='jupyter.widget', data={'state': {'v': 'z' * 10**6}})""",
                 "print('after')")
    c.execute()
    assert error(c.nb.cells[0]) == "OutputLimitExceeded"
    assert len(json.dumps(c.nb.cells[0].outputs)) < 2 * OUTPUT_CAP
    assert error(c.nb.cells[1]) is None and c.widget_state == {}
    assert printed(c.nb.cells[2]) == "after\n"


def test_a_message_over_the_limit_never_reaches_the_client(tmp_path):
    """zmq refuses a message over MAX_MESSAGE bytes (and the kernel's output channel with
    it): the client never holds it, and the kernel goes on running cells."""
    c = client(tmp_path, f"print('x' * {2 * sandbox.MAX_MESSAGE})", "print('after')",
               iopub_timeout=1)
    c.execute()
    assert len(json.dumps(c.nb.cells[0].outputs)) < OUTPUT_CAP
    assert c.nb.cells[1].execution_count == 2 and c.nb.cells[1].outputs == []


def test_binary_buffers_count_toward_the_cap(tmp_path):
    c = client(tmp_path, """\
from ipykernel.kernelbase import Kernel
k = Kernel.instance()
buf = b'b' * (32 << 20)
k.session.send(k.iopub_socket, 'display_data', {'data': {'text/plain': 'x'}, 'metadata': {}},
               parent=k.get_parent(), buffers=[buf, buf])""", "print('after')")
    c.execute()
    assert error(c.nb.cells[0]) == "OutputLimitExceeded"
    assert len(json.dumps(c.nb.cells[0].outputs)) < OUTPUT_CAP
    assert printed(c.nb.cells[1]) == "after\n"


def test_a_notebook_of_many_cells_is_bounded_as_a_whole(tmp_path):
    cells = ["print('x' * 900_000)"] * 5 + ["print('after')"]
    c = client(tmp_path, *cells, notebook_output_cap=3 << 20)
    c.execute()
    assert [error(cell) for cell in c.nb.cells] == [None] * 3 + ["OutputLimitExceeded"] * 3
    assert "the notebook printed" in c.nb.cells[3].outputs[-1].traceback[0]
    assert len(json.dumps(c.nb.cells)) < 4 << 20


def test_nbgraders_error_reply_is_bounded_too(tmp_path):
    """nbgrader adds an error reply's traceback to the cell, past the cap's count."""
    from nbgrader.preprocessors import Execute

    class CappedExecute(sandbox._OutputCap, Execute):
        pass

    nb = new_notebook(cells=[new_code_cell(c) for c in (
        "import sys\nsys.stderr.write = lambda s: 0\nraise ValueError('v' * 5 * 10**6)",
        "print('after')")])
    CappedExecute(kernel_manager_class=SandboxKernelManager, timeout=20).preprocess(
        nb, {"metadata": {"path": str(tmp_path)}})
    assert len(json.dumps(nb.cells[0].outputs)) < 2 * OUTPUT_CAP
    assert error(nb.cells[0]) == "OutputLimitExceeded"
    assert printed(nb.cells[1]) == "after\n"


def test_numbas_cache_is_a_copy_in_memory(tmp_path):
    """lincls's compiled functions load from numba's cache (no compiling again), and
    what the kernel writes there stays in the home folder's memory, within its size."""
    nb = run(tmp_path, """\
import os
import numpy as np
from lincls.adaline import mse_loss
mse_loss(np.zeros(2), np.eye(2), np.ones(2))
print(mse_loss.stats.cache_hits and not mse_loss.stats.cache_misses)""", """\
chunk, n = b'x' * (64 << 20), 0
try:
    for n in range(8):
        with open(os.path.join(os.environ['NUMBA_CACHE_DIR'], f'fill{n}'), 'wb') as f:
            f.write(chunk)
except OSError as exc:
    print(n, exc.errno)""")
    assert printed(nb.cells[0]) == "True\n"
    assert printed(nb.cells[1]) == f"{sandbox.TMP_SIZE // (64 << 20) - 1} 28\n"  # ENOSPC
    assert list(tmp_path.iterdir()) == []


def test_a_file_past_the_size_limit_is_efbig(tmp_path):
    nb = run(tmp_path, """\
try:
    with open('big', 'wb') as f:
        f.write(b'x' * (2 << 20))
except OSError as exc:
    print(exc.errno)""", fsize=1 << 20)
    assert printed(nb.cells[0]) == "27\n"  # EFBIG: the limit, not a full disk


def test_a_missing_sandbox_is_one_line_on_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValueError, match=r"apt-get install bubblewrap") as caught:
        sandbox.find_bwrap()
    assert "\n" not in str(caught.value)


def test_what_it_writes_is_bounded(tmp_path):
    """The home folder and /tmp are in memory, each of :data:`TMP_SIZE` bytes."""
    nb = run(tmp_path, *(f"""\
chunk, n = b'x' * (16 << 20), 0
try:
    with open({where!r}, 'wb') as f:
        for n in range(64):
            f.write(chunk)
            f.flush()
except OSError as exc:
    print(n, exc.errno)""" for where in ("big.bin", "/tmp/big.bin")))
    for cell in nb.cells:
        chunks, errno = printed(cell).split()
        assert int(chunks) * (16 << 20) <= sandbox.TMP_SIZE and int(errno) in (27, 28)
    assert list(tmp_path.iterdir()) == []
