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
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_code_cell, new_notebook
from traitlets.config import Config

from booktools.homework import sandbox
from booktools.homework.sandbox import LIMITS, OUTPUT_CAP, SandboxKernelManager
from booktools.kernels import STARTUP_TIMEOUT

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


# a cell's wait, where the test is not about the timeout: generous for a cell that imports
# numpy in a cold sandbox on two busy cores (the tests about timeouts pass their own)
CELL_WAIT = 120


def run(folder, *cells, timeout=CELL_WAIT, group=None, clock=None, **limits):
    """Run ``cells`` in a sandboxed kernel whose notebook lives in ``folder``, with
    ``limits`` and ``group`` limits beyond the defaults; the executed notebook. ``clock``:
    a Clock, started as the first cell starts (the kernel's start, up to STARTUP_TIMEOUT
    on a busy machine, is not what a test of a limit times)."""
    folder.mkdir(exist_ok=True)
    nb = new_notebook(cells=[new_code_cell(c) for c in cells])
    config = Config({"SandboxKernelManager": {"limits": limits,
                                              "group_limits": group or {}}})
    client = CappedClient(nb, kernel_manager_class=SandboxKernelManager, config=config,
                          kernel_name="python3", timeout=timeout, interrupt_on_timeout=True,
                          startup_timeout=STARTUP_TIMEOUT,
                          on_cell_start=clock.start if clock else None,
                          allow_errors=True, resources={"metadata": {"path": str(folder)}})
    client.execute()
    return nb


class Clock:
    """Seconds since the first cell started (run's ``clock``)."""

    def __init__(self):
        self.started = None

    def start(self, **_):
        if self.started is None:
            self.started = time.monotonic()

    def seconds(self):
        return time.monotonic() - self.started


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
    clock = Clock()
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
    print(n, type(exc).__name__)""", "print('alive')", clock=clock)
    forks, name = printed(nb.cells[0]).split()
    assert 0 < int(forks) < LIMITS["nproc"] and name == "BlockingIOError"
    assert printed(nb.cells[1]) == "alive\n"
    assert clock.seconds() < 30


def test_a_sleeping_cell_is_interrupted(tmp_path):
    """The cell timeout interrupts the kernel through the sandbox (bwrap passes no
    signal on: the interrupt is a message), and the next cell runs."""
    clock = Clock()
    c = client(tmp_path, "import time; time.sleep(10**6)", "print('next')",
               timeout_func=lambda cell: 2 if "sleep" in cell.source else CELL_WAIT,
               interrupt_on_timeout=True, on_cell_start=clock.start)
    c.execute()
    assert error(c.nb.cells[0]) == "KeyboardInterrupt"
    assert printed(c.nb.cells[1]) == "next\n"
    assert clock.seconds() < 20


def test_cpu_time_is_limited(tmp_path):
    clock = Clock()
    with pytest.raises(DeadKernelError):
        run(tmp_path, "while True: pass", timeout=60, cpu=3, clock=clock)
    assert clock.seconds() < 30


def test_the_sandbox_as_a_whole_has_a_memory_limit(tmp_path, monkeypatch):
    """Processes each under the address-space limit cannot together hold more than the
    sandbox's control group allows: the system stops one of them (as root, where the
    machine lets us make control groups)."""
    if not sandbox.group_limits():
        pytest.skip("no control group can be made here (not root, or no memory and "
                    "pids controllers)")
    made, original = [], sandbox._cgroup

    def cgroup(*args):
        made.extend(folders := original(*args))
        return folders

    monkeypatch.setattr(sandbox, "_cgroup", cgroup)
    nb = run(tmp_path, """\
import os
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:  # hold 400 MB until every other child holds its own (or was stopped)
        os.close(ready_r), os.close(go_w)
        block = b'x' * (400 << 20)
        os.write(ready_w, b'r'), os.close(ready_w)
        os.read(go_r, 1)
        os._exit(0)
    kids.append(pid)
os.close(ready_w)
while os.read(ready_r, 4):  # until each child has its block or has been stopped
    pass
os.close(go_w)
statuses = [os.waitpid(kid, 0)[1] for kid in kids]
print(sum(os.WIFSIGNALED(s) and os.WTERMSIG(s) == 9 for s in statuses))""",
             "print('alive')", group={"memory": 1 << 30})
    assert int(printed(nb.cells[0])) >= 1
    assert printed(nb.cells[1]) == "alive\n"
    assert made and not any(folder.exists() for folder in made)  # removed at the end


def test_the_sandbox_as_a_whole_gets_one_core(tmp_path, monkeypatch):
    """Four processes that spin for 3 s get one core's worth of CPU time in all (the
    sandbox's control group's quota: as root, where the machine has the cpu controller),
    not the two cores of this machine: the other is left to the grader and to a
    classmate's kernel. On a machine busy with other work they get less, never more."""
    if "cpus" not in sandbox.group_limits():
        pytest.skip("no control group with a CPU quota can be made here")
    made, original = [], sandbox._cgroup

    def cgroup(*args):
        made.extend(folders := original(*args))
        return folders

    monkeypatch.setattr(sandbox, "_cgroup", cgroup)
    nb = run(tmp_path, """\
import os, time
start = time.monotonic()
kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        while time.monotonic() < start + 3:
            pass
        os._exit(0)
    kids.append(pid)
for kid in kids:
    os.waitpid(kid, 0)
wall, cpu = time.monotonic() - start, os.times()
print((cpu.children_user + cpu.children_system) / wall)""")
    cores = float(printed(nb.cells[0]))
    # at most one period's quota of slack on a core beyond one core's worth
    assert cores <= sandbox.GROUP_LIMITS["cpus"] * (1 + sandbox.CPU_PERIOD / 3e6) + 0.05
    assert made and not any(folder.exists() for folder in made)  # removed at the end


def test_a_quota_refused_leaves_the_other_limits(tmp_path):
    """Under a parent group whose CPU quota is below the sandbox's (cgroup v1 refuses a
    child's larger quota), the sandbox's group still holds memory and pids, without a
    quota of its own (the parent's caps it)."""
    if "cpus" not in sandbox.group_limits() or not Path("/sys/fs/cgroup/cpu").is_dir():
        pytest.skip("no cgroup v1 cpu controller to make a parent group in")
    parent = Path("/sys/fs/cgroup/cpu", f"lincls-parent-{os.getpid()}")
    parent.mkdir()
    try:
        (parent / "cpu.cfs_quota_us").write_text(str(sandbox.CPU_PERIOD // 2))
        probe = ("import json, sys; from booktools.homework import sandbox; "
                 "print(json.dumps(sorted(sandbox.group_limits())))")
        held = subprocess.run(
            ["bash", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(parent),
             sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    finally:
        parent.rmdir()
    assert json.loads(held.stdout) == ["memory", "pids"], held.stderr


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
    return CappedClient(nb, kernel_manager_class=SandboxKernelManager,
                        kernel_name="python3", allow_errors=True,
                        startup_timeout=STARTUP_TIMEOUT,
                        resources={"metadata": {"path": str(folder)}},
                        **{"timeout": CELL_WAIT, **traits})


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
    CappedExecute(kernel_manager_class=SandboxKernelManager, timeout=CELL_WAIT).preprocess(
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
    assert printed(nb.cells[1]) == f"{sandbox.STORE_SIZE // (64 << 20) - 1} 28\n"  # ENOSPC
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
    """The home folder and /tmp are in memory, one tmpfs of :data:`STORE_SIZE` bytes."""
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
        assert int(chunks) * (16 << 20) <= sandbox.STORE_SIZE and int(errno) in (27, 28)
    assert list(tmp_path.iterdir()) == []


# --- nothing the sandbox writes reaches the host, and one cap on all it can store ---

STORE_PROBE = """\
import ctypes, errno, json, os
found = {}
for where in ("/x", "/dev/x", "/usr/x", "/proc/x"):
    try:
        open(where, "w").close()
        found[where] = "written"
    except OSError as exc:
        found[where] = errno.errorcode[exc.errno]
total, chunk = 0, b"x" * (8 << 20)
for where in ("fill", "/tmp/fill", "/dev/shm/fill"):
    try:
        with open(where, "wb") as f:
            while True:
                f.write(chunk)
                f.flush()
                total += len(chunk)
    except OSError as exc:
        found[where] = errno.errorcode[exc.errno]
found["stored"] = total
try:
    os.memfd_create("m")
    found["memfd"] = "made"
except OSError as exc:
    found["memfd"] = errno.errorcode[exc.errno]
libc = ctypes.CDLL(None, use_errno=True)
for call, args in (("shmget", (1 << 20, 0o1600)), ("msgget", (0o1600,)),
                   ("semget", (1, 0o1600))):
    made = getattr(libc, call)(0, *args)
    found[call] = "made" if made >= 0 else errno.errorcode[ctypes.get_errno()]
rt = ctypes.CDLL("librt.so.1", use_errno=True)
made = rt.mq_open(b"/q", os.O_CREAT | os.O_RDWR, 0o600, None)
found["mq_open"] = "made" if made >= 0 else errno.errorcode[ctypes.get_errno()]
print(json.dumps(found))"""


def check_store(found):
    assert {found[w] for w in ("/x", "/dev/x", "/usr/x")} == {"EROFS"}, found
    assert found["/proc/x"] in ("EACCES", "ENOENT", "EROFS", "EPERM"), found
    assert found["fill"] in ("ENOSPC", "EFBIG") and found["stored"] <= sandbox.STORE_SIZE, found
    assert {found["/tmp/fill"], found["/dev/shm/fill"]} == {"ENOSPC"}, found
    for call in ("memfd", "shmget", "msgget", "semget"):
        assert found[call] == "ENOSYS", (call, found)
    assert found["mq_open"] != "made", found


def test_the_kernel_writes_only_to_its_one_capped_tmpfs(tmp_path):
    """No folder or file of the host is bound writable (the connection folder and the
    copies of the notebook's files are in the sandbox's tmpfs), the root, /dev and /usr
    are read-only, and the home folder, /tmp and /dev/shm share one tmpfs of STORE_SIZE
    bytes; memfd, System V shared memory, semaphores and message queues and POSIX message
    queues, which would hold data outside it, are refused."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "answers.json").write_text("{}")
    nb = run(tmp_path / "work", """\
import json
mounts = []
for line in open("/proc/self/mountinfo"):
    fields = line.split()
    mounts.append((fields[4], fields[5].split(",")[0], line.split(" - ")[1].split()[0]))
print(json.dumps(mounts))""", "open('answers.json', 'a').write('changed')", STORE_PROBE)
    mounts = json.loads(printed(nb.cells[0]))
    writable = {(point, kind) for point, opts, kind in mounts if opts == "rw"}
    # writable: the store (tmpfs), /proc, and the devices bound from the host's
    assert {point for point, kind in writable if kind == "tmpfs"} == {sandbox.STORE}, mounts
    assert {point for point, kind in writable if kind not in ("tmpfs", "proc")} <= {
        f"/dev/{name}" for name in sandbox.DEVICES}, mounts
    check_store(json.loads(printed(nb.cells[2])))
    assert (tmp_path / "work" / "answers.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["answers.json", "work"]


def test_as_another_user_the_same_caps_hold(tmp_path):
    """The sandbox as a user who is not root (nobody, through setpriv): bwrap makes a
    user namespace, and the same read-only root and one capped tmpfs hold. The kernel's
    Python (a venv under /root, closed to other users) cannot run as nobody here, so the
    probe is the system's Python, without the venv's folders."""
    python = "/usr/bin/python3"
    if not (os.geteuid() == 0 and shutil.which("setpriv") and os.access(python, os.X_OK)):
        pytest.skip("needs root (to become another user) and /usr/bin/python3")
    seccomp = sandbox._seccomp_fd()
    fds = () if seccomp is None else (seccomp,)
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    cmd += sandbox._sandbox_cmd(65534, seccomp_fd=seccomp, root=False, readonly=[])
    cmd += [python, "-c", STORE_PROBE]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, pass_fds=fds,
                              cwd=tmp_path)
    finally:
        for fd in fds:
            os.close(fd)
    if done.returncode != 0 and "namespace" in done.stderr:
        pytest.skip(f"no user namespaces for other users here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    check_store(json.loads(done.stdout))
    assert list(tmp_path.iterdir()) == []


def test_the_seccomp_program_refuses_what_it_names():
    """The filter is a classic BPF program: its first entries check the architecture,
    and it ends with ALLOW and ERRNO(ENOSYS)."""
    import struct

    for machine, (audit, calls) in sandbox.SECCOMP.items():
        program = sandbox.seccomp_program(machine)
        ops = list(struct.iter_unpack("=HBBI", program))
        assert ops[1][3] == audit and ops[-2] == (6, 0, 0, 0x7FFF0000)
        assert ops[-1] == (6, 0, 0, 0x00050000 | 38)
        assert {k for code, _, _, k in ops if code == 0x15} >= set(calls.values())
    assert sandbox.seccomp_program("vax") is None


# --- an interrupt never waits forever; a message that cannot be read is dropped ---

DROP_REPLY = """\
from ipykernel.kernelbase import Kernel
kernel = Kernel.instance()
send = kernel.session.send
def dropping(stream, msg_or_type, *args, **kwargs):
    if msg_or_type == "execute_reply":  # this cell's reply, once
        kernel.session.send = send
        return None
    return send(stream, msg_or_type, *args, **kwargs)
kernel.session.send = dropping"""


@pytest.mark.timeout(STARTUP_TIMEOUT + 180)  # a kernel's start, then the test
def test_a_reply_lost_after_an_interrupt_ends_the_cell(tmp_path):
    """The kernel ends a cell without its reply: at the cell's time limit the client
    interrupts, the idle kernel ignores it, and INTERRUPT_WAIT seconds later the cell
    gets an error reply of ours and the next cell runs (nbclient alone would interrupt
    again at every time limit, for ever)."""
    clock = Clock()
    c = client(tmp_path, DROP_REPLY, "print('next')", timeout=3, interrupt_on_timeout=True,
               iopub_timeout=30,  # the next cell's output all in, on a busy machine
               on_cell_start=clock.start)
    c.execute()
    nb = c.nb
    assert error(nb.cells[0]) == sandbox.REPLY_LOST
    assert printed(nb.cells[1]) == "next\n", nb.cells[1].outputs
    assert clock.seconds() < 3 + sandbox.INTERRUPT_WAIT + 30


@pytest.mark.timeout(STARTUP_TIMEOUT + 180)  # a kernel's start, then the test
def test_a_kernel_that_ignores_the_interrupt_is_shut_down(tmp_path):
    """Past the output cap the kernel is interrupted; one that ignores SIGINT and sleeps
    is taken for dead INTERRUPT_WAIT seconds later, not at the cell's time limit."""
    clock = Clock()
    with pytest.raises(DeadKernelError):
        run(tmp_path, "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                      f"print('x' * {2 * OUTPUT_CAP}, flush=True)\ntime.sleep(10**6)",
            timeout=150, clock=clock)
    assert clock.seconds() < 100


@pytest.mark.parametrize("raw", [b"[" * 100_000 + b"]" * 100_000,
                                 b'{"data": ' + b'{"a": ' * 200 + b"1" + b"}" * 201,
                                 b"not json", b"\xff\xfe"])
def test_a_message_that_cannot_be_read_is_dropped(tmp_path, raw):
    """An IOPub message nested 100,000 (or 200) deep, or not JSON at all, never
    reaches the client's parser's recursion: it is dropped and the next cell runs."""
    nb = run(tmp_path, f"""\
from ipykernel.kernelbase import Kernel
kernel = Kernel.instance()
kernel.session.send(kernel.iopub_socket, "display_data", {raw!r}, parent=kernel.get_parent())
print("sent")""", "print('next')")
    assert printed(nb.cells[0]) == "sent\n"
    assert printed(nb.cells[1]) == "next\n"


def test_a_notebook_has_a_time_limit_of_its_own(tmp_path):
    """Past ``notebook_timeout`` seconds in all, the cells left are not run (an error
    output each), and the cell running then stops at the limit."""
    cells = ["import time; time.sleep(1); print('ran')"] * 3 + ["time.sleep(60)"] + \
        ["print('not run')"] * 3
    clock = Clock()
    c = client(tmp_path, *cells, notebook_timeout=8, timeout=120, interrupt_on_timeout=True,
               on_cell_start=clock.start)
    c.execute()
    assert clock.seconds() < 8 + sandbox.INTERRUPT_WAIT + 30
    assert [printed(cell) for cell in c.nb.cells[:3]] == ["ran\n"] * 3
    assert error(c.nb.cells[3]) == "KeyboardInterrupt"
    assert [error(cell) for cell in c.nb.cells[4:]] == [sandbox.NOTEBOOK_TIME_LIMIT] * 3


def test_a_message_the_kernel_makes_up_lands_in_the_cells_outputs(tmp_path):
    """The limit "For teachers" states: any code in the kernel can publish. A message of
    the student's own making, with the running cell as its parent, is one of that cell's
    outputs, and the values it carries are what the grader compares (they earn points
    only if they are the teacher's)."""
    from booktools.homework.scoring import published
    from lincls.homework.answers import EXPECTED_MIME

    nb = run(tmp_path, f"""\
from ipykernel.kernelbase import Kernel
kernel = Kernel.instance()
kernel.session.send(kernel.iopub_socket, "display_data",
                    {{"data": {{{EXPECTED_MIME!r}: {{"key": "k", "value": "42"}}}},
                      "metadata": {{}}}}, parent=kernel.get_parent())""")
    assert published(nb.cells[0]) == [("k", 42)]
