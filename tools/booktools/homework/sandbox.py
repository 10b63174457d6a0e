"""A bubblewrap sandbox for the kernel that runs a student's submission.

Defined in chapter "For teachers" (``book/teachers.md``).

:class:`SandboxKernelManager` is a Jupyter kernel manager (nbclient's and nbgrader's
kind) whose kernel runs inside `bubblewrap <https://github.com/containers/bubblewrap>`_
(``bwrap``, Debian's ``bubblewrap``), under resource limits set with util-linux's
``prlimit``. The kernel sees:

- the Python environment read-only: ``/usr``, the interpreter's base prefix, the venv and
  lincls's package folder, each at its own path (never the repository, never booktools);
- one folder in memory, a tmpfs of :data:`STORE_SIZE` bytes mounted at ``/home``, that
  holds all it can write: its home folder (``/home/student``, its current folder) with a
  copy of the files (not the notebooks, folders or links) beside the notebook being run,
  ``/tmp`` and ``/dev/shm`` (links into it), and the unix sockets of its connection with
  the client. Everything else is read-only, the sandbox's own root and ``/dev``
  included; no folder of the host is bound writable, and the copies are copies (bwrap
  writes them into the tmpfs from a file descriptor), so nothing the kernel writes
  reaches the host's disk. A seccomp filter refuses what would store data outside that
  tmpfs and outside a process's address space (``memfd_create``, ``memfd_secret``,
  System V shared memory, semaphores and message queues; POSIX message queues have a
  limit of 0 bytes);
- its own PID, IPC, UTS, cgroup and network namespaces (no network at all: the client
  reaches the kernel's unix sockets through ``/proc/PID/root`` of the sandbox), a
  cleared environment, and a sandbox that dies with its parent.

As root, bwrap runs as root and ``setpriv`` drops the kernel to ``uid``, without groups
or capabilities: by default :data:`UID_BASE` plus the pid of the process that starts the
kernel, so that no two processes running at the same time (two nbgrader workers, two
grading runs) share one (``RLIMIT_NPROC`` counts the processes of a real uid, and root
ignores it); a kernel's sandbox is gone, every process of it, before the next starts.
As another user, bwrap makes a user namespace (the uid stays the same), and the process
limit is that user's processes now plus :data:`LIMITS` ``["nproc"]``. The limits of
:data:`LIMITS` are each process's (address space, CPU time, file size), so the memory a
sandbox's processes hold in all is bounded only by their number times the address space,
and the tmpfs's size caps the bytes of its files, not their number (the system's default
for a tmpfs), each of which holds some of the system's memory; as root, where the
machine lets us make control groups, each sandbox is one too, which holds
:data:`GROUP_LIMITS` for the sandbox as a whole (its tmpfs included).

:class:`SandboxExecute` is nbgrader's ``Execute`` preprocessor with this kernel manager
and caps on each cell's output and the notebook's (:data:`OUTPUT_CAP`,
:data:`NOTEBOOK_OUTPUT_CAP`): past one, the rest of the output is dropped, an error
output says so, and the kernel is interrupted; a time limit for the whole notebook
(``notebook_timeout``); and an interrupt that is not answered within
:data:`INTERRUPT_WAIT` seconds ends the cell (the kernel is shut down when it is still
busy). A message from the kernel that cannot be read (not JSON, nested deeper than
:data:`MAX_DEPTH`) is dropped, never raised in the grader.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.util
import json
import os
import platform
import queue
import shutil
import stat
import struct
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
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode
from traitlets import Dict, DottedObjectName, HasTraits, Integer, Type, Unicode

from booktools.kernels import PromptChannel
from lincls.homework.answers import GRADING_ENV

#: The one folder the kernel can write to, a tmpfs of :data:`STORE_SIZE` bytes.
STORE = "/home"
#: Where the work folder appears in the sandbox (HOME and the current folder).
HOME = "/home/student"
#: ``/tmp`` and ``/dev/shm`` are links to these folders of the store.
TMP, SHM = "/home/.tmp", "/home/.shm"
#: The kernel's connection file and unix sockets, in the store.
KERNEL_DIR = "/home/.kernel"
#: numba's cache folder in the sandbox (a copy of lincls's compiled functions).
NUMBA_CACHE = "/home/student/.numba"
#: The kernel's resource limits (``prlimit`` options): CPU seconds, address space and
#: file size in bytes, processes and threads, no core dumps, no bytes of POSIX message
#: queues.
LIMITS = {"cpu": 3600, "as": 4 << 30, "nproc": 256, "fsize": 256 << 20, "core": 0,
          "msgqueue": 0}
#: The limits of the sandbox as a whole (a control group of its own, where the machine
#: lets us make one: as root, with the memory and pids controllers): bytes of memory
#: (its in-memory folders included), processes and threads, and, where the machine has
#: the cpu controller too, the cores' worth of CPU time its processes get at once (one:
#: a submission that spins on every core leaves the others to the grader and to a
#: classmate's kernel graded beside it).
GROUP_LIMITS = {"memory": 4 << 30, "pids": 256, "cpus": 1}
#: Microseconds: the period over which the cpu controller counts the quota of "cpus".
CPU_PERIOD = 100_000
#: Bytes of output a cell may send before the rest is dropped and the kernel interrupted;
#: a notebook's cells, in all; beyond a cell's output, the bytes of the error reply that
#: nbgrader adds to it.
OUTPUT_CAP = 1 << 20
NOTEBOOK_OUTPUT_CAP = 16 << 20
TRACEBACK_CAP = 64 << 10
#: Seconds a cell past its output cap may still end by itself before it is interrupted.
INTERRUPT_GRACE = 0.5
#: Seconds an interrupted cell has to end: after them, a kernel that went idle without
#: its reply gets an error reply of ours (grading goes on), and one still busy is shut
#: down (the notebook scores zero, as for a kernel that died).
INTERRUPT_WAIT = 10
#: How deep a message from the kernel may nest (deeper: dropped).
MAX_DEPTH = 64
#: The ``ename`` of the error output of a cell not run because the notebook's time ran
#: out, and of a cell whose reply an interrupt lost.
NOTEBOOK_TIME_LIMIT = "NotebookTimeLimitExceeded"
REPLY_LOST = "ReplyLostAfterInterrupt"
#: The largest part of a message (a zmq frame: a message's content is one, each binary
#: buffer another) the client accepts from the kernel: zmq drops the channel of a kernel
#: that sends a larger one, so such a part never reaches the client's memory; no later
#: output of that notebook does either (its tests publish nothing). A flood of printing
#: batches its output in messages of up to ~100 MB (what the kernel buffers between
#: flushes): those arrive, and the output cap drops them.
MAX_MESSAGE = 128 << 20
#: The size in bytes of the tmpfs that holds all the kernel can write (home, ``/tmp``,
#: ``/dev/shm``, its sockets).
STORE_SIZE = 256 << 20
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
#: The devices of the sandbox's ``/dev`` (bound from the host's; ``/dev`` is read-only).
DEVICES = ("null", "zero", "full", "random", "urandom")


def find_bwrap():
    """The path of ``bwrap``, after checking that a sandbox starts here; raises
    :class:`ValueError` with one line saying how to install it when it does not."""
    tools = {name: shutil.which(name) for name in ("bwrap", "prlimit", "setpriv")}
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        raise ValueError(f"the grading sandbox needs {', '.join(missing)}: install "
                         f"bubblewrap with `{INSTALL}` (prlimit and setpriv come with "
                         "util-linux)")
    seccomp = _seccomp_fd()
    fds = () if seccomp is None else (seccomp,)
    cmd = _sandbox_cmd(_default_uid(), seccomp_fd=seccomp) + ["true"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, pass_fds=fds)
    except (OSError, subprocess.TimeoutExpired) as exc:
        done = subprocess.CompletedProcess(cmd, -1, "", str(exc))
    finally:
        for fd in fds:
            os.close(fd)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ValueError(f"the grading sandbox (bwrap) does not start here ({why}); "
                         f"install bubblewrap with `{INSTALL}` and run as root or where "
                         "user namespaces are allowed")
    return tools["bwrap"]


#: The system calls the seccomp filter refuses (``ENOSYS``, as a kernel without them
#: would), by machine: the audit architecture and the calls' numbers. They store data
#: outside the sandbox's tmpfs and outside any process's address space. On another
#: machine there is no filter.
SECCOMP = {
    "x86_64": (0xC000003E, {"memfd_create": 319, "memfd_secret": 447, "shmget": 29,
                            "msgget": 68, "semget": 64}),
    "aarch64": (0xC00000B7, {"memfd_create": 279, "memfd_secret": 447, "shmget": 194,
                             "msgget": 186, "semget": 190}),
}


def seccomp_program(machine=None):
    """The classic BPF program (``struct sock_filter`` entries, as bwrap's ``--seccomp``
    reads them) that refuses the calls of :data:`SECCOMP` with ``ENOSYS``, and every call
    of another architecture (32-bit calls on x86-64, and x32's); None where
    :data:`SECCOMP` does not know the machine, or for a 32-bit Python (whose calls are of
    another architecture than the machine's)."""
    import errno

    if machine is None and struct.calcsize("P") != 8:
        return None
    arch = SECCOMP.get(machine or platform.machine())
    if arch is None:
        return None
    audit, calls = arch
    load, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K
    allow, deny = 0x7FFF0000, 0x00050000 | errno.ENOSYS  # SECCOMP_RET_ALLOW, _ERRNO
    checks = [(jge, 0x40000000)] if audit == 0xC000003E else []  # x32's calls
    checks += [(jeq, number) for number in calls.values()]
    program = [(load, 0, 0, 4), (jeq, 1, 0, audit), (ret, 0, 0, deny), (load, 0, 0, 0)]
    program += [(op, len(checks) - i, 0, k) for i, (op, k) in enumerate(checks)]
    program += [(ret, 0, 0, allow), (ret, 0, 0, deny)]
    return b"".join(struct.pack("=HBBI", *op) for op in program)


def _seccomp_fd():
    """A file descriptor to read :func:`seccomp_program` from, or None."""
    program = seccomp_program()
    if program is None:
        return None
    read, write = os.pipe()
    os.write(write, program)  # a few hundred bytes: the pipe holds them
    os.close(write)
    return read


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


def _sandbox_cmd(uid, files=(), limits=None, info_fd=None, numba=None,
                 connection_fd=None, seccomp_fd=None, root=None, readonly=None):
    """The command prefix that runs a command in a sandbox: the files ``files``
    (``[(name, open file descriptor)]``) copied into the home folder, the connection file
    (``connection_fd``) into :data:`KERNEL_DIR`, the files ``numba`` (``[(path under the
    cache folder, open file descriptor)]``) into numba's cache folder, the seccomp
    program read from ``seccomp_fd``; bwrap writes the pid of the sandbox's init
    process to ``info_fd`` (if any). ``root`` (default: whether we are) chooses how the
    kernel's user is made, ``readonly`` the folders of the Python environment (default
    :func:`_readonly_paths`)."""
    limits = dict(LIMITS, **(limits or {}))
    root = os.geteuid() == 0 if root is None else root
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
    cmd += ["--proc", "/proc"]
    # /dev: a few devices and links on the read-only root (no tmpfs of its own)
    for device in DEVICES:
        if Path("/dev", device).exists():
            cmd += parents(Path("/dev", device)) + ["--dev-bind", f"/dev/{device}",
                                                    f"/dev/{device}"]
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        cmd += parents(Path("/dev", name)) + ["--symlink", target, f"/dev/{name}"]
    # all the kernel can write: one tmpfs, its home, /tmp, /dev/shm and its sockets
    cmd += parents(Path(STORE)) + ["--size", str(STORE_SIZE), "--perms", "0755",
                                   "--tmpfs", STORE]
    made.add(Path(STORE))
    for folder, perms in ((HOME, "0777"), (TMP, "1777"), (SHM, "1777"),
                          (KERNEL_DIR, "1777")):
        cmd += ["--perms", perms, "--dir", folder]
    # /tmp's link relative: bwrap follows it while it builds the sandbox (below), where an
    # absolute target would point outside the new root
    cmd += ["--symlink", TMP.lstrip("/"), "/tmp", "--symlink", SHM, "/dev/shm"]
    # the Python environment, read-only, after the store and its links: where it lives
    # under /tmp or /home (a clone in /tmp, say) its mount point is made inside the store
    for ro in _readonly_paths() if readonly is None else readonly:
        cmd += parents(ro) + ["--ro-bind", str(ro), str(ro)]
    for name, fd in files:  # copies: bwrap writes them into the tmpfs
        cmd += ["--perms", "0666", "--file", str(fd), f"{HOME}/{name}"]
    if connection_fd is not None:
        cmd += ["--perms", "0444", "--file", str(connection_fd), f"{KERNEL_DIR}/kernel.json"]
    if numba:  # copied into the home folder's memory: what numba writes stays there
        cmd += ["--setenv", "NUMBA_CACHE_DIR", NUMBA_CACHE]
        for folder in sorted({NUMBA_CACHE, *(f"{NUMBA_CACHE}/{rel.split('/')[0]}"
                                             for rel, _ in numba)}):
            cmd += ["--perms", "0777", "--dir", folder]
        for rel, fd in numba:
            cmd += ["--perms", "0666", "--file", str(fd), f"{NUMBA_CACHE}/{rel}"]
    cmd += ["--remount-ro", "/"]  # the sandbox's own root (a tmpfs of bwrap's) too
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    cmd += ["--chdir", HOME, "--"]
    if root:
        cmd += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return cmd


def _cgroup(name, limits):
    """The folders of a new control group ``name``, one per controller, that holds
    ``limits`` (:data:`GROUP_LIMITS`), or [] where the machine does not let us make one
    (not root, or no memory and pids controllers to write to). The CPU quota is held where
    the machine has the cpu controller and takes it (not above a quota of a parent group):
    the other limits hold without it."""
    if os.geteuid() != 0:
        return []
    mine = {}  # controller (or "" for cgroup v2) -> our group's path
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            mine[controller] = path.lstrip("/")
    root = Path("/sys/fs/cgroup")
    quota = round(limits["cpus"] * CPU_PERIOD)
    v1 = {c: root / c / mine[c] for c in ("memory", "pids", "cpu")
          if c in mine and (root / c / mine[c]).is_dir()}
    if {"memory", "pids"} <= v1.keys():
        # memsw: memory and swap together, where the machine counts swap
        made = _make_groups({v1["memory"] / name: {"memory.limit_in_bytes": limits["memory"],
                                                   "memory.memsw.limit_in_bytes":
                                                       limits["memory"]},
                             v1["pids"] / name: {"pids.max": limits["pids"]}},
                            optional={"memory.memsw.limit_in_bytes"})
        if made and "cpu" in v1:
            made += _make_groups({v1["cpu"] / name: {"cpu.cfs_period_us": CPU_PERIOD,
                                                     "cpu.cfs_quota_us": quota}})
        return made
    v2 = root / mine.get("", "")
    try:
        controllers = set((v2 / "cgroup.subtree_control").read_text().split())
    except OSError:
        return []
    if not {"memory", "pids"} <= controllers:
        return []
    group = v2 / name
    made = _make_groups({group: {"memory.max": limits["memory"], "pids.max": limits["pids"],
                                 "memory.swap.max": 0}}, optional={"memory.swap.max"})
    if made and "cpu" in controllers:
        try:
            (group / "cpu.max").write_text(f"{quota} {CPU_PERIOD}")
        except OSError:
            pass  # refused: the other limits hold
    return made


def _make_groups(groups, optional=()):
    """The folders of ``groups`` (``{folder: {file: value}}``), each made with its
    settings written (a file of ``optional`` where the machine has it), or [] with none
    left behind when one cannot be made or written."""
    made = []
    try:
        for folder, settings in groups.items():
            folder.mkdir()
            made.append(folder)
            for file, value in settings.items():
                if file not in optional or (folder / file).exists():
                    (folder / file).write_text(str(value))
    except OSError:
        _remove_cgroup(made)
        return []
    return made


def group_limits():
    """The names of :data:`GROUP_LIMITS` that a sandbox started by this process holds:
    all, or only "memory" and "pids" (no CPU quota), or none (no control group)."""
    made = _cgroup(f"lincls-probe-{os.getpid()}", GROUP_LIMITS)
    try:
        quotas = [(folder / file).read_text().split()[0] for folder in made
                  for file in ("cpu.cfs_quota_us", "cpu.max") if (folder / file).exists()]
    finally:
        _remove_cgroup(made)
    if not made:
        return set()
    return {"memory", "pids"} | ({"cpus"} if set(quotas) - {"-1", "max"} else set())


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


def _too_deep(value, limit=MAX_DEPTH):
    """True if ``value`` (JSON: dicts, lists, scalars) nests deeper than ``limit``."""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        items = item.values() if isinstance(item, dict) else item if isinstance(
            item, list) else None
        if items is None:
            continue
        if level > limit:
            return True
        stack.extend((x, level + 1) for x in items)
    return False


#: What a message that cannot be read becomes: a message of no cell, which nbclient
#: ignores.
DROPPED = {"header": {"msg_type": "booktools_dropped", "msg_id": ""}, "parent_header": {},
           "metadata": {}, "content": {}, "buffers": [], "msg_type": "booktools_dropped",
           "msg_id": ""}


class _SafeChannel(PromptChannel):
    """A channel on which a message from the kernel that cannot be read (no valid
    frames, not JSON, nested deeper than :data:`MAX_DEPTH`) is dropped: it never raises
    in the client, whose recursion (a JSON parser's) it cannot exhaust either; its waits
    look again every second (:class:`booktools.kernels.PromptChannel`)."""

    async def _recv(self, **kwargs):
        frames = await self.socket.recv_multipart(**kwargs)
        try:
            _, frames = self.session.feed_identities(frames)
            msg = self.session.deserialize(frames)
        except (ValueError, TypeError, KeyError, RecursionError, MemoryError):
            return json.loads(json.dumps(DROPPED))
        if any(_too_deep(msg.get(part)) for part in
               ("header", "parent_header", "metadata", "content")):
            return json.loads(json.dumps(DROPPED))
        return msg


class _CappedClient(AsyncKernelClient):
    """A kernel client that refuses messages over :data:`MAX_MESSAGE` bytes and drops
    those it cannot read (:class:`_SafeChannel`)."""

    shell_channel_class = Type(_SafeChannel)
    iopub_channel_class = Type(_SafeChannel)
    stdin_channel_class = Type(_SafeChannel)
    control_channel_class = Type(_SafeChannel)

    def _create_connected_socket(self, channel, identity=None):
        sock = self.context.socket(channel_socket_types[channel])
        sock.linger = 1000
        sock.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
        if identity:
            sock.identity = identity
        sock.connect(self._make_url(channel))
        return sock


class _CappedKernelManager(AsyncKernelManager):
    """nbclient's kernel manager, with :class:`_CappedClient` clients (no sandbox:
    ``--no-sandbox``)."""

    client_class = DottedObjectName("booktools.homework.sandbox._CappedClient")
    client_factory = Type(_CappedClient, klass=AsyncKernelClient)


def _open_copy(path):
    """A read-only descriptor of the regular file ``path`` (never a link), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


class SandboxKernelManager(AsyncKernelManager):
    """An asynchronous kernel manager whose kernel runs in a bubblewrap sandbox.

    ``uid`` is the kernel's user as root (by default :data:`UID_BASE` + our pid; give
    each sandbox running at the same time its own: the process limit counts per uid);
    as another user the kernel keeps the caller's uid, and the process limit counts
    beyond the caller's own processes. ``limits`` overrides :data:`LIMITS`. Starting
    the kernel with ``cwd=FOLDER`` copies FOLDER's files (not the notebooks, hidden
    files, folders or links) into the sandbox's fresh home (bwrap writes them into its
    tmpfs: no host file is bound); the connection file reaches the kernel the same way,
    and the client connects to the kernel's unix sockets through ``/proc/PID/root`` of
    the sandbox. The kernel's output goes nowhere (it would reach the caller's);
    shutting it down waits until every process of its sandbox is gone.
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
        self._private = self._init = self._info = self._info_w = self._connection_w = None
        self._group = []

    async def start_kernel(self, **kw):
        # a private folder of ours (0700): the connection file as jupyter_client keeps
        # it; nothing in it is bound into the sandbox
        private = Path(tempfile.mkdtemp(prefix="lincls-sandbox-",
                                        dir=self.sandbox_root or None))
        self._private = private
        self.connection_file = str(private / "kernel.json")
        self.ip = f"{KERNEL_DIR}/kernel"  # as the kernel sees it; see _async_launch_kernel
        source = Path(kw.pop("cwd", None) or os.getcwd())
        files = []
        for entry in sorted(source.iterdir()):
            if entry.suffix != ".ipynb" and not entry.name.startswith("."):
                fd = _open_copy(entry)
                if fd is not None:
                    files.append((entry.name, fd))
        uid = self.uid if self.uid >= 0 else _default_uid()
        self._group = _cgroup(private.name, dict(GROUP_LIMITS, **self.group_limits))
        self._info, self._info_w = os.pipe()
        info_w = self._info_w
        connection_r, self._connection_w = os.pipe()
        seccomp = _seccomp_fd()
        numba = [(rel, os.open(file, os.O_RDONLY)) for rel, file in _numba_files()]
        fds = [info_w, connection_r, *(fd for _, fd in files), *(fd for _, fd in numba)]
        fds += [] if seccomp is None else [seccomp]
        self._sandbox = _sandbox_cmd(uid, files, self.limits, info_w, numba,
                                     connection_r, seccomp)
        # bwrap passes no signal on: interrupt through the kernel's control channel
        self.kernel_spec.interrupt_mode = "message"
        self._uid = uid
        # bwrap and the sandbox's init start with PATH alone (without root, the kernel
        # could read their environment); the kernel's output would go to ours
        kw["env"] = {"PATH": os.environ.get("PATH", os.defpath)}
        try:
            await super().start_kernel(cwd=str(private), pass_fds=tuple(fds),
                                       stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, **kw)
        finally:
            for fd in fds:
                if fd != info_w or self._info_w is not None:
                    os.close(fd)
            self._info_w = None
            if self._connection_w is not None:  # never written: bwrap reads an end
                os.close(self._connection_w)
                self._connection_w = None
            if self._info is not None:
                os.close(self._info)
                self._info = None

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        await super()._async_launch_kernel(kernel_cmd, **kw)
        os.close(self._info_w)  # ours: else the read below never ends
        self._info_w = None
        # the sandbox's init, as we see it: its root holds the kernel's sockets
        with os.fdopen(self._info) as lines:
            self._info = None
            self._init = _process(json.loads(lines.read() or "{}").get("child-pid"))
        if self._init is not None:  # the client's way to them, from outside
            self.ip = f"/proc/{self._init[0]}/root{KERNEL_DIR}/kernel"

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
        if self._connection_w is not None:  # the kernel's copy, through bwrap
            with open(self.connection_file, "rb") as f:
                os.write(self._connection_w, f.read())  # < 1 KiB: the pipe holds it
            os.close(self._connection_w)
            self._connection_w = None

    def cleanup_ipc_files(self):
        """Nothing: the sockets are in the sandbox's tmpfs, gone with it (and a path
        through ``/proc/PID/root`` could name another process's files by then)."""

    def format_kernel_cmd(self, extra_arguments=None):
        join = (["/bin/sh", "-c", JOIN_GROUPS, "sh", *map(str, self._group), "--"]
                if self._group else [])
        inner = [f"{KERNEL_DIR}/kernel.json" if arg == self.connection_file else arg
                 for arg in super().format_kernel_cmd(extra_arguments)]
        return join + self._sandbox + inner

    async def _async_cleanup_resources(self, restart=False):
        # shutdown_kernel calls this one (not cleanup_resources)
        await super()._async_cleanup_resources(restart=restart)
        await self._wait_torn_down()
        for _ in range(200):  # its last processes may still be exiting
            self._group = _remove_cgroup(self._group)
            if not self._group:
                break
            await asyncio.sleep(0.05)
        if self._private is not None and not restart:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None

    cleanup_resources = _async_cleanup_resources


class _OutputCap(HasTraits):
    """Bounds what a kernel makes its client hold and wait for (mixed into an nbclient
    client): a cell's output, display updates included, past ``output_cap`` bytes is
    dropped, an error output says so, and the kernel is interrupted if the cell still
    runs a moment later; past the notebook's ``notebook_output_cap`` every cell's output
    is dropped (with an error output); comm (widget) messages are ignored. Past
    ``notebook_timeout`` seconds (0: none) the cells left are not run (an error output
    each, :data:`NOTEBOOK_TIME_LIMIT`), and a cell's time limit is never beyond it. An
    interrupt (of the output cap or of a cell's time limit) gives the cell
    :data:`INTERRUPT_WAIT` seconds to end: then, if the kernel has gone idle without
    the cell's reply, the cell gets an error reply of ours (:data:`REPLY_LOST`) and
    the notebook goes on; if it is still busy, the kernel is taken for dead
    (:class:`nbclient.exceptions.DeadKernelError`) and shut down."""

    output_cap = Integer(OUTPUT_CAP, help="Bytes of output a cell may send").tag(config=True)
    notebook_output_cap = Integer(NOTEBOOK_OUTPUT_CAP, help="Bytes of output a notebook "
                                  "may send").tag(config=True)
    notebook_timeout = Integer(0, help="Seconds the notebook's cells may run in all "
                               "(0: no limit)").tag(config=True)

    def reset_execution_trackers(self):
        super().reset_execution_trackers()
        self._cap_total, self._cap_interrupt, self._deadline = 0, None, None
        self._cap_cell(None)

    def _cap_cell(self, cell):
        self._cap_used, self._cap_hit, self._cap_running = 0, False, cell
        self._watchdog, self._reply_wait, self._gave_up = None, None, None

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

    async def _interrupt(self, cell):
        """Interrupt the kernel through the control channel, if ``cell`` still runs after
        :data:`INTERRUPT_GRACE` seconds (a signal at the very end of a cell could land in
        the kernel's own code, which then never replies); return once the kernel replied
        (it has then signalled itself: an idle kernel ignores the signal), or after
        :data:`INTERRUPT_WAIT` seconds. The watchdog (:meth:`_watch`) ends the cell if
        it does not end by itself."""
        await asyncio.sleep(INTERRUPT_GRACE)
        if self._cap_running is not cell or self._watchdog is not None:
            return  # ended, or interrupted already (at its time limit)
        request = self.kc.session.msg("interrupt_request", {})
        self.kc.control_channel.send(request)
        self._watch(cell)
        deadline = time.monotonic() + INTERRUPT_WAIT
        while (left := deadline - time.monotonic()) > 0:
            try:
                reply = await self.kc.control_channel.get_msg(timeout=left)
            except queue.Empty:
                return
            if reply["parent_header"].get("msg_id") == request["header"]["msg_id"]:
                return

    def _watch(self, cell):
        """After an interrupt: end ``cell`` if it has not ended :data:`INTERRUPT_WAIT`
        seconds later (see the class)."""
        if self._watchdog is None and self._cap_running is cell:
            self._watchdog = asyncio.ensure_future(self._give_up(cell))

    async def _give_up(self, cell):
        await asyncio.sleep(INTERRUPT_WAIT)
        if self._cap_running is not cell or self._reply_wait is None:
            return
        self._gave_up = "idle" if self._output_done.done() else "busy"
        self._reply_wait.cancel()

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg,
                                    task_poll_kernel_alive):
        self._output_done = task_poll_output_msg
        self._reply_wait = asyncio.ensure_future(super()._async_poll_for_reply(
            msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive))
        try:
            return await self._reply_wait
        except asyncio.CancelledError:
            if self._gave_up is None:  # the kernel died (nbclient's own cancel)
                raise
            task_poll_kernel_alive.cancel()
        if self._gave_up == "busy":
            task_poll_output_msg.cancel()
            raise DeadKernelError(f"the kernel did not answer an interrupt within "
                                  f"{INTERRUPT_WAIT} s")
        content = {"status": "error", "ename": REPLY_LOST, "evalue": "",
                   "traceback": [f"{REPLY_LOST}: the kernel went idle after an interrupt "
                                 "without the cell's reply"]}
        cell.outputs.append(NotebookNode(output_type="error", **{
            k: v for k, v in content.items() if k != "status"}))
        return {"parent_header": {"msg_id": msg_id}, "header": {}, "metadata": {},
                "content": content}

    async def _async_handle_timeout(self, timeout, cell=None):
        if self._watchdog is not None:  # one interrupt a cell: a later one could land
            # in the next cell, after the watchdog ended this one
            return ({"content": {**self.error_on_timeout, "status": "error"}}
                    if self.interrupt_on_timeout and self.error_on_timeout else None)
        reply = await super()._async_handle_timeout(timeout, cell)  # interrupts
        self._watch(cell)
        return reply

    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        if self._deadline is not None:
            left = max(1, int(self._deadline - time.monotonic()) + 1)
            timeout = left if timeout is None else min(timeout, left)
        return timeout

    async def async_execute_cell(self, cell, cell_index, execution_count=None,
                                 store_history=True):
        if self.notebook_timeout and self._deadline is None:
            self._deadline = time.monotonic() + self.notebook_timeout
        if (cell.cell_type == "code" and self._deadline is not None
                and time.monotonic() >= self._deadline):
            cell.outputs = [NotebookNode(
                output_type="error", ename=NOTEBOOK_TIME_LIMIT, evalue="",
                traceback=[f"{NOTEBOOK_TIME_LIMIT}: the notebook ran for "
                           f"{self.notebook_timeout} s; this cell was not run"])]
            return cell
        self._cap_cell(cell)
        try:
            cell = await super().async_execute_cell(cell, cell_index, execution_count,
                                                    store_history)
        finally:
            self._cap_running = None
            if self._watchdog is not None:
                self._watchdog.cancel()
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
def sandbox_execute(sandboxed=True):
    """nbgrader's ``Execute`` preprocessor with :class:`SandboxKernelManager` kernels
    (configured as ``SandboxKernelManager.uid`` etc.; with ``sandboxed=False``, plain
    kernels, for ``--no-sandbox``), the output caps, the notebook's time limit
    (``Execute.notebook_timeout``) and the bounded interrupt of :class:`_OutputCap`
    (made on first use: nbgrader is a teacher's extra)."""
    from nbgrader.preprocessors import Execute

    manager = SandboxKernelManager if sandboxed else _CappedKernelManager

    class SandboxExecute(_OutputCap, Execute):
        def __init__(self, *args, **kwargs):
            kwargs["kernel_manager_class"] = manager
            super().__init__(*args, **kwargs)

    return SandboxExecute
