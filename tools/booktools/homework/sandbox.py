"""A bubblewrap sandbox for the kernel that runs a student's submission.

Defined in chapter "For teachers" (``book/teachers.md``).

:class:`SandboxKernelManager` is a Jupyter kernel manager (nbclient's and nbgrader's
kind) whose kernel runs inside `bubblewrap <https://github.com/containers/bubblewrap>`_
(``bwrap``, Debian's ``bubblewrap``), under resource limits set with util-linux's
``prlimit``. The kernel sees:

- the Python environment read-only: ``/usr``, the interpreter's base prefix, the venv and
  lincls's package folder, each at its own path (never the repository, never booktools);
- a fresh home folder in memory (``/home/student``, its current folder) holding a copy
  of the files (not the notebooks, not the folders or links) beside the notebook being
  run, and an empty private ``/tmp`` of its own (both tmpfs of :data:`TMP_SIZE` bytes:
  nothing the kernel writes reaches the disk, apart from those copies);
- its own PID, IPC, UTS, cgroup and network namespaces (no network at all: it talks to
  the client through unix sockets, ``transport="ipc"``, in a private folder bound at the
  same path), a cleared environment, and a sandbox that dies with its parent.

As root, bwrap runs as root and ``setpriv`` drops the kernel to ``uid``, without groups
or capabilities: by default :data:`UID_BASE` plus the pid of the process that starts the
kernel, so that no two processes running at the same time (two nbgrader workers, two
grading runs) share one (``RLIMIT_NPROC`` counts the processes of a real uid, and root
ignores it); a kernel's sandbox is gone, every process of it, before the next starts.
As another user, bwrap makes a user namespace (the uid stays the same), and the process
limit is that user's processes now plus :data:`LIMITS` ``["nproc"]``. The limits of
:data:`LIMITS` hold for each process; as root, where the machine lets us make control
groups, each sandbox is one too, which holds :data:`GROUP_LIMITS` for the sandbox as a
whole.

:class:`SandboxExecute` is nbgrader's ``Execute`` preprocessor with this kernel manager
and caps on each cell's output and the notebook's (:data:`OUTPUT_CAP`,
:data:`NOTEBOOK_OUTPUT_CAP`): past one, the rest of the output is dropped, an error
output says so, and the kernel is interrupted.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.util
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.connect import channel_socket_types
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbformat import NotebookNode
from traitlets import Dict, DottedObjectName, HasTraits, Integer, Type, Unicode

from lincls.homework.answers import GRADING_ENV

#: Where the work folder appears in the sandbox (HOME and the current folder).
HOME = "/home/student"
#: numba's cache folder in the sandbox (a copy of lincls's compiled functions).
NUMBA_CACHE = "/home/student/.numba"
#: The kernel's resource limits (``prlimit`` options): CPU seconds, address space and
#: file size in bytes, processes and threads, no core dumps.
LIMITS = {"cpu": 3600, "as": 4 << 30, "nproc": 256, "fsize": 256 << 20, "core": 0}
#: The limits of the sandbox as a whole (a control group of its own, where the machine
#: lets us make one: as root, with the memory and pids controllers): bytes of memory
#: (its in-memory folders included) and processes and threads.
GROUP_LIMITS = {"memory": 4 << 30, "pids": 256}
#: Bytes of output a cell may send before the rest is dropped and the kernel interrupted;
#: a notebook's cells, in all; beyond a cell's output, the bytes of the error reply that
#: nbgrader adds to it.
OUTPUT_CAP = 1 << 20
NOTEBOOK_OUTPUT_CAP = 16 << 20
TRACEBACK_CAP = 64 << 10
#: Seconds a cell past its output cap may still end by itself before it is interrupted.
INTERRUPT_GRACE = 0.5
#: The largest part of a message (a zmq frame: a message's content is one, each binary
#: buffer another) the client accepts from the kernel: zmq drops the channel of a kernel
#: that sends a larger one, so such a part never reaches the client's memory; no later
#: output of that notebook does either (its tests publish nothing). A flood of printing
#: batches its output in messages of up to ~100 MB (what the kernel buffers between
#: flushes): those arrive, and the output cap drops them.
MAX_MESSAGE = 128 << 20
#: The size in bytes of the private ``/tmp``, and of the home folder (both in memory).
TMP_SIZE = 256 << 20
#: The environment of the kernel (besides PATH and HOME).
KERNEL_ENV = {"LANG": "C.UTF-8", "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1",
              "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "PYTHONNOUSERSITE": "1",
              "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
#: Variables of the caller's environment the kernel gets too (nbgrader's, and the one
#: that makes ``expected`` publish the values it compares).
PASSED_ON = ("NBGRADER_EXECUTION", GRADING_ENV)
INSTALL = "apt-get install bubblewrap"
#: What of ``/etc`` the kernel sees, read-only.
ETC = ("fonts",)


def find_bwrap():
    """The path of ``bwrap``, after checking that a sandbox starts here; raises
    :class:`ValueError` with one line saying how to install it when it does not."""
    tools = {name: shutil.which(name) for name in ("bwrap", "prlimit", "setpriv")}
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        raise ValueError(f"the grading sandbox needs {', '.join(missing)}: install "
                         f"bubblewrap with `{INSTALL}` (prlimit and setpriv come with "
                         "util-linux)")
    with tempfile.TemporaryDirectory(prefix="lincls-sandbox-check-") as tmp:
        cmd = _sandbox_cmd(Path(tmp), None, _default_uid()) + ["true"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            done = subprocess.CompletedProcess(cmd, -1, "", str(exc))
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ValueError(f"the grading sandbox (bwrap) does not start here ({why}); "
                         f"install bubblewrap with `{INSTALL}` and run as root or where "
                         "user namespaces are allowed")
    return tools["bwrap"]


#: As root, a kernel's uid is this plus the pid of the process that starts it: two
#: processes never share one (nor their process limit) while they run.
UID_BASE = 100000


def _default_uid():
    """The kernels' uid: :data:`UID_BASE` + our pid as root, else our own uid."""
    return UID_BASE + os.getpid() if os.geteuid() == 0 else os.getuid()


def _readonly_paths():
    """The folders of the Python environment the kernel needs, read-only: the
    interpreter's base prefix, the venv, and lincls's package if it lives elsewhere
    (an editable install)."""
    paths = [Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()]
    spec = importlib.util.find_spec("lincls")
    if spec is not None and spec.submodule_search_locations:
        paths.append(Path(next(iter(spec.submodule_search_locations))).resolve())
    paths = [p for p in dict.fromkeys(paths) if not p.is_relative_to("/usr")]
    return [p for p in paths if not any(p != q and p.is_relative_to(q) for q in paths)]


def _own_processes():
    """Processes and threads of our real uid now (RLIMIT_NPROC counts both)."""
    count = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines()
                          if ":" in line)
        except OSError:
            continue  # gone meanwhile
        if int(fields.get("Uid", "-1").split()[0]) == os.getuid():
            count += int(fields.get("Threads", "1"))
    return count


def _sandbox_cmd(work, connection_dir, uid, limits=None, info_fd=None, numba=None):
    """The command prefix that runs a command in a sandbox: the files of ``work`` are
    bound into the home folder, ``connection_dir`` (if any) at its own path, the files
    ``numba`` (``[(path under the cache folder, open file descriptor)]``) copied into
    numba's cache folder; bwrap writes the pid of the sandbox's init process to
    ``info_fd`` (if any)."""
    limits = dict(LIMITS, **(limits or {}))
    root = os.geteuid() == 0
    if not root:  # RLIMIT_NPROC counts all our processes: allow the limit beyond them
        limits["nproc"] += _own_processes()
    cmd = ["prlimit", *(f"--{name}={value}" for name, value in limits.items()), "--",
           "bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv",
           "--hostname", "sandbox"]
    if not root:
        cmd += ["--unshare-user"]
    if info_fd is not None:
        cmd += ["--info-fd", str(info_fd)]
    path = [str(Path(sys.prefix) / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]
    env = dict(KERNEL_ENV, PATH=os.pathsep.join(path), HOME=HOME, USER="student")
    env.update({k: os.environ[k] for k in PASSED_ON if k in os.environ})
    for name, value in env.items():
        cmd += ["--setenv", name, value]
    made = {Path("/"), Path("/usr")}

    def parents(path):  # bwrap would make them 0700, closed to the kernel's uid
        out = []
        for parent in reversed(path.parents):
            if parent not in made:
                made.add(parent)
                out += ["--perms", "0755", "--dir", str(parent)]
        return out

    cmd += ["--ro-bind", "/usr", "/usr"]
    for link in ("lib", "lib64", "bin", "sbin"):
        target = Path("/") / link
        if target.is_symlink():
            cmd += ["--symlink", os.readlink(target), str(target)]
        elif target.is_dir():
            cmd += ["--ro-bind", str(target), str(target)]
    for name in ETC:  # fontconfig's configuration (matplotlib's fonts need it)
        if Path("/etc", name).exists():
            cmd += parents(Path("/etc", name)) + ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    cmd += ["--proc", "/proc", "--dev", "/dev",  # /dev/shm: multiprocessing's locks
            "--size", str(TMP_SIZE), "--perms", "1777", "--tmpfs", "/dev/shm",
            "--size", str(TMP_SIZE), "--perms", "1777", "--tmpfs", "/tmp"]
    for ro in _readonly_paths():
        cmd += parents(ro) + ["--ro-bind", str(ro), str(ro)]
    if connection_dir is not None:
        cmd += parents(connection_dir) + ["--bind", str(connection_dir),
                                          str(connection_dir)]
    # the home folder is a tmpfs of its own (writes never reach the disk), with the
    # copies of the notebook's files bound in
    cmd += parents(Path(HOME)) + ["--size", str(TMP_SIZE), "--perms", "1777",
                                  "--tmpfs", HOME]
    for copy in sorted(work.iterdir()):
        cmd += ["--bind", str(copy), f"{HOME}/{copy.name}"]
    if numba:  # copied into the home folder's memory: what numba writes stays there
        cmd += ["--setenv", "NUMBA_CACHE_DIR", NUMBA_CACHE]
        for folder in sorted({NUMBA_CACHE, *(f"{NUMBA_CACHE}/{rel.split('/')[0]}"
                                             for rel, _ in numba)}):
            cmd += ["--perms", "0777", "--dir", folder]
        for rel, fd in numba:
            cmd += ["--perms", "0666", "--file", str(fd), f"{NUMBA_CACHE}/{rel}"]
    cmd += ["--chdir", HOME, "--"]
    if root:
        cmd += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return cmd


def _cgroup(name, limits):
    """The folders of a new control group ``name``, one per controller, that holds
    ``limits`` (:data:`GROUP_LIMITS`), or [] where the machine does not let us make one
    (not root, or no memory and pids controllers to write to)."""
    if os.geteuid() != 0:
        return []
    mine = {}  # controller (or "" for cgroup v2) -> our group's path
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            mine[controller] = path.lstrip("/")
    root = Path("/sys/fs/cgroup")
    v1 = {c: root / c / mine[c] for c in ("memory", "pids") if c in mine}
    v2 = root / mine.get("", "")
    if len(v1) == 2 and all(d.is_dir() for d in v1.values()):
        settings = {"memory": ("memory.limit_in_bytes", limits["memory"]),
                    "pids": ("pids.max", limits["pids"])}
        made = []
        try:
            for controller, parent in v1.items():
                made.append(parent / name)
                made[-1].mkdir()
                file, value = settings[controller]
                (made[-1] / file).write_text(str(value))
        except OSError:
            _remove_cgroup(made)
            return []
        return made
    controllers = v2 / "cgroup.subtree_control"
    try:
        if {"memory", "pids"} <= set(controllers.read_text().split()):
            group = v2 / name
            group.mkdir()
            try:
                (group / "memory.max").write_text(str(limits["memory"]))
                (group / "pids.max").write_text(str(limits["pids"]))
                if (group / "memory.swap.max").exists():
                    (group / "memory.swap.max").write_text("0")
            except OSError:
                _remove_cgroup([group])
                return []
            return [group]
    except OSError:
        pass
    return []


def _remove_cgroup(folders):
    """The folders of ``folders`` that could not be removed (a process of theirs
    lingers)."""
    left = []
    for folder in folders:
        try:
            folder.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            left.append(folder)
    return left


#: Joins the control groups given before ``--`` (their folders), then runs the rest.
JOIN_GROUPS = ('while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 1; shift; '
               'done; shift; exec "$@"')


def _numba_files():
    """``[(path under NUMBA_CACHE_DIR, file)]`` of numba's cache of lincls's compiled
    functions, laid out as numba looks for it under ``NUMBA_CACHE_DIR`` (lincls's own
    cache is read-only in the sandbox, where numba would compile every function again)."""
    spec = importlib.util.find_spec("lincls")
    if spec is None or not spec.submodule_search_locations:
        return []
    package = Path(next(iter(spec.submodule_search_locations))).resolve()
    found = []
    for file in sorted(package.rglob("__pycache__/*.nb[ic]")):
        source_dir = str(file.parent.parent)  # numba's name for its folder:
        sub = f"{file.parent.parent.name}_{hashlib.sha1(source_dir.encode()).hexdigest()}"
        found.append((f"{sub}/{file.name}", file))
    return found


def _process(pid):
    """``(pid, start time)`` of a live process (not a zombie), or None."""
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
    except (OSError, TypeError, ValueError):
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command's name
    return None if fields[0] in "ZX" else (int(pid), fields[19])


class _CappedClient(AsyncKernelClient):
    """A kernel client that refuses messages over :data:`MAX_MESSAGE` bytes."""

    def _create_connected_socket(self, channel, identity=None):
        sock = self.context.socket(channel_socket_types[channel])
        sock.linger = 1000
        sock.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
        if identity:
            sock.identity = identity
        sock.connect(self._make_url(channel))
        return sock


class SandboxKernelManager(AsyncKernelManager):
    """An asynchronous kernel manager whose kernel runs in a bubblewrap sandbox.

    ``uid`` is the kernel's user as root (by default :data:`UID_BASE` + our pid; give
    each sandbox running at the same time its own: the process limit counts per uid);
    as another user the kernel keeps the caller's uid, and the process limit counts
    beyond the caller's own processes. ``limits`` overrides :data:`LIMITS`. Starting
    the kernel with ``cwd=FOLDER`` copies FOLDER's files (not the notebooks, hidden
    files, folders or links) into the sandbox's fresh home; the kernel's output goes
    nowhere (it would reach the caller's); shutting it down waits until every process
    of its sandbox is gone.
    """

    uid = Integer(-1, help="The kernel's uid as root (-1: UID_BASE + our pid)"
                  ).tag(config=True)
    sandbox_root = Unicode("", help="Where the private folders go (default: the "
                                    "system's temporary folder)").tag(config=True)

    limits = Dict(help="Limits beyond LIMITS, e.g. {'cpu': 60}").tag(config=True)
    group_limits = Dict(help="Limits beyond GROUP_LIMITS, e.g. {'memory': 1 << 30}"
                        ).tag(config=True)
    client_class = DottedObjectName("booktools.homework.sandbox._CappedClient")
    client_factory = Type(_CappedClient, klass=AsyncKernelClient)  # what client() makes

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.transport = "ipc"
        self._private = self._init = None
        self._group = []

    async def start_kernel(self, **kw):
        private = Path(tempfile.mkdtemp(prefix="lincls-sandbox-",
                                        dir=self.sandbox_root or None))
        self._private = private
        os.chmod(private, 0o755)
        work, conn = private / "home", private / "conn"
        work.mkdir()
        conn.mkdir(mode=0o700)
        source = Path(kw.pop("cwd", None) or os.getcwd())
        for entry in source.iterdir():
            if (entry.is_file() and not entry.is_symlink()
                    and entry.suffix != ".ipynb" and not entry.name.startswith(".")):
                shutil.copyfile(entry, work / entry.name)
        self.connection_file = str(conn / "kernel.json")
        self.ip = str(conn / "kernel")
        uid = self.uid if self.uid >= 0 else _default_uid()
        if os.geteuid() == 0:
            for path in (work, conn, *work.iterdir()):
                os.chown(path, uid, uid)
        self._group = _cgroup(private.name, dict(GROUP_LIMITS, **self.group_limits))
        info, info_w = os.pipe()
        numba = [(rel, os.open(file, os.O_RDONLY)) for rel, file in _numba_files()]
        self._sandbox = _sandbox_cmd(work, conn, uid, self.limits, info_w, numba)
        # bwrap passes no signal on: interrupt through the kernel's control channel
        self.kernel_spec.interrupt_mode = "message"
        self._uid = uid
        # bwrap and the sandbox's init start with PATH alone (without root, the kernel
        # could read their environment); the kernel's output would go to ours
        kw["env"] = {"PATH": os.environ.get("PATH", os.defpath)}
        try:
            await super().start_kernel(cwd=str(work),
                                       pass_fds=(info_w, *(fd for _, fd in numba)),
                                       stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, **kw)
        finally:
            for fd in (info_w, *(fd for _, fd in numba)):
                os.close(fd)
        with os.fdopen(info) as lines:
            self._init = _process(json.loads(lines.read() or "{}").get("child-pid"))

    async def _wait_torn_down(self, seconds=60):
        """Wait until the sandbox's last process is gone: bwrap exits as soon as the
        kernel does, while the kernel takes the other processes of the sandbox's PID
        namespace down (the namespace's init lives on until they are all gone)."""
        for _ in range(int(seconds / 0.02)):
            if self._init is None or _process(self._init[0]) != self._init:
                return
            await asyncio.sleep(0.02)

    def write_connection_file(self, **kwargs):
        super().write_connection_file(**kwargs)
        if os.geteuid() == 0 and self._private is not None:
            os.chown(self.connection_file, self._uid, self._uid)

    def format_kernel_cmd(self, extra_arguments=None):
        join = (["/bin/sh", "-c", JOIN_GROUPS, "sh", *map(str, self._group), "--"]
                if self._group else [])
        return join + self._sandbox + super().format_kernel_cmd(extra_arguments)

    async def cleanup_resources(self, restart=False):
        await super().cleanup_resources(restart=restart)
        await self._wait_torn_down()
        for _ in range(200):  # its last processes may still be exiting
            self._group = _remove_cgroup(self._group)
            if not self._group:
                break
            await asyncio.sleep(0.05)
        if self._private is not None and not restart:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None


class _OutputCap(HasTraits):
    """Bounds what a kernel makes its client hold (mixed into an nbclient client): a
    cell's output, display updates included, past ``output_cap`` bytes is dropped, an
    error output says so, and the kernel is interrupted if the cell still runs a moment
    later; past the notebook's ``notebook_output_cap`` every cell's output is dropped
    (with an error output); comm (widget) messages are ignored."""

    output_cap = Integer(OUTPUT_CAP, help="Bytes of output a cell may send").tag(config=True)
    notebook_output_cap = Integer(NOTEBOOK_OUTPUT_CAP, help="Bytes of output a notebook "
                                  "may send").tag(config=True)

    def reset_execution_trackers(self):
        super().reset_execution_trackers()
        self._cap_total, self._cap_interrupt = 0, None
        self._cap_cell(None)

    def _cap_cell(self, cell):
        self._cap_used, self._cap_hit, self._cap_running = 0, False, cell

    def process_message(self, msg, cell, cell_index):
        kind = msg["msg_type"]
        if kind.startswith("comm"):
            return None  # no widgets while grading
        if kind in ("status", "execute_input", "clear_output"):
            return super().process_message(msg, cell, cell_index)
        if not self._cap_hit:
            self._cap_used += len(json.dumps(msg.get("content", {}))) + sum(
                memoryview(b).nbytes for b in msg.get("buffers") or ())
            if self._cap_used > self.output_cap:
                self._cap_hit = True
                self._cap_interrupt = asyncio.ensure_future(self._interrupt(cell))
        over = self._cap_total + self._cap_used > self.notebook_output_cap
        if not (self._cap_hit or over):
            return super().process_message(msg, cell, cell_index)
        if not any(o.get("ename") == "OutputLimitExceeded" for o in cell.outputs):
            cell.outputs.append(self._cap_error())
        return None

    def _cap_error(self):
        cap, what = ((self.output_cap, "the cell") if self._cap_used > self.output_cap
                     else (self.notebook_output_cap, "the notebook"))
        return NotebookNode(output_type="error", ename="OutputLimitExceeded",
                            evalue=f"more than {cap} bytes of output",
                            traceback=[f"OutputLimitExceeded: {what} printed more than "
                                       f"{cap} bytes; the rest was dropped"])

    async def _interrupt(self, cell, seconds=60):
        """Interrupt the kernel through the control channel, if ``cell`` still runs after
        :data:`INTERRUPT_GRACE` seconds (a signal at the very end of a cell could land in
        the kernel's own code, which then never replies); return once the kernel replied
        (it has then signalled itself: an idle kernel ignores the signal)."""
        await asyncio.sleep(INTERRUPT_GRACE)
        if self._cap_running is not cell:
            return
        request = self.kc.session.msg("interrupt_request", {})
        self.kc.control_channel.send(request)
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                reply = await self.kc.control_channel.get_msg(timeout=left)
            except queue.Empty:
                return
            if reply["parent_header"].get("msg_id") == request["header"]["msg_id"]:
                return

    async def async_execute_cell(self, cell, cell_index, execution_count=None,
                                 store_history=True):
        self._cap_cell(cell)
        cell = await super().async_execute_cell(cell, cell_index, execution_count,
                                                store_history)
        self._cap_running = None
        # the next cell waits for the interrupt to be done, else it could land there
        if self._cap_interrupt is not None:
            pending, self._cap_interrupt = self._cap_interrupt, None
            await pending
        # nbgrader adds the error reply's traceback last, uncounted
        held = len(json.dumps(cell.get("outputs", [])))
        if held > self.output_cap + TRACEBACK_CAP:
            self._cap_used = max(self._cap_used, held)
            cell.outputs = cell.outputs[:-1]
            if not any(o.get("ename") == "OutputLimitExceeded" for o in cell.outputs):
                cell.outputs.append(self._cap_error())
            held = len(json.dumps(cell.outputs))
        self._cap_total += min(max(self._cap_used, held), self.output_cap + TRACEBACK_CAP)
        return cell

    execute_cell = run_sync(async_execute_cell)  # nbconvert's preprocess_cell calls this


@functools.cache
def sandbox_execute():
    """nbgrader's ``Execute`` preprocessor with :class:`SandboxKernelManager` kernels
    (configured as ``SandboxKernelManager.uid`` etc.) and the output cap (made on
    first use: nbgrader is a teacher's extra)."""
    from nbgrader.preprocessors import Execute

    class SandboxExecute(_OutputCap, Execute):
        def __init__(self, *args, **kwargs):
            kwargs["kernel_manager_class"] = SandboxKernelManager
            super().__init__(*args, **kwargs)

    return SandboxExecute
