"""A warm start for kernels: a process that has imported what the chapters import forks
each kernel (Linux; elsewhere kernels start as usual).

A kernel that starts from nothing spends about two CPU seconds importing ipykernel,
NumPy, scikit-learn (which imports SciPy's statistics and pandas), matplotlib and numba
before its first cell has done anything: in a build of 26 chapters on two cores, about
a fifth of the work. Here one process (the *warm process*, ``python -m booktools.warm``)
imports them once; each kernel is then a fork of it, which starts in about a tenth of
the CPU time (measured: 0.2 against 2.0 s to a chapter's first imports).

A fork is the kernel it replaces only if the imports saw what the kernel would see, and
the warm process refuses (its kernels then start as usual) where they might not have:

- the environment: a warm process serves the environment it was started with (less the
  variables jupyter_client sets for each kernel, ``JPY_*``); a kernel with another one
  (another OpenBLAS kernel, say) gets a warm process of its own;
- what the kernel does at start before the imports: it sets ``MPLBACKEND`` to the inline
  backend (``ipykernel.kernelapp``), which matplotlib reads when it is imported; the warm
  process does the same first;
- warnings: a warning that an import gives (and a kernel's filters show) would be the
  kernel's to show, in the chapter's output, where the build fails on it; if the imports
  give any, it refuses;
- one thread: a process with threads cannot be forked safely (a lock another thread holds
  stays held in the child). With more than one BLAS thread OpenBLAS starts a pool of
  threads on import, but stops it before a fork (its ``pthread_atfork`` handler) and
  starts it again when next used, in the child as in the parent: after the imports the
  warm process forks once (a child that exits at once), and refuses if threads are left;
  it forks a kernel only while it has one thread;
- the command: ``<this Python> -m ipykernel_launcher ...`` only.

The child then becomes the kernel as ``python -m ipykernel_launcher`` would: a session of
its own (as jupyter_client starts kernels), no file descriptor of the warm process's but
its standard streams, stdin from ``/dev/null``, the kernel's working folder (also first on
``sys.path``), its environment, and NumPy's global random state seeded afresh, as a new
process's is (Python's ``random`` reseeds itself after a fork).

It answers only processes of its own user (the address of an abstract Unix socket is
visible to all), each with the kernel's pid, and keeps the connection: when the kernel has
exited, it reaps it and writes its exit status there. :class:`ForkedKernel`, the
``Popen`` of a kernel that is not our child, reads it. A warm process lives as long as
its standard input is open: the processes that may ask it for kernels hold it (a build's
reading processes, forked from the one that started it), so it ends with the last of
them; the one that started it closes it when it exits.
"""

import atexit
import json
import os
import pkgutil
import runpy
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid
import warnings

from lincls.homework.answers import EXPECTED_ENV

#: What the chapters import (a module left out here is only imported in each kernel).
#: (and lincls with every module of it: _warm_up)
WARM = ("ipykernel.kernelapp", "numpy", "scipy.optimize", "sklearn.datasets",
        "sklearn.model_selection", "sklearn.preprocessing", "matplotlib.pyplot",
        "IPython.display")
INLINE = "module://matplotlib_inline.backend_inline"  # what ipykernel sets, if unset
LAUNCHER = ["-m", "ipykernel_launcher"]
#: Seconds the warm process waits for a request's line (the asker writes it at once).
REQUEST_TIMEOUT = 60

_warm = {}  # environment (as a sorted tuple) -> its warm process's address, or None
_asked = set()  # the environments a kernel was asked for in, with no warm process yet
_processes = []  # the warm processes this process started
_lock = threading.Lock()


#: Variables set for each kernel (or each test) that no import reads, only code that runs
#: later: jupyter_client's ``PYTHONEXECUTABLE`` (which it drops; ``JPY_*`` too), pytest's
#: ``PYTEST_CURRENT_TEST``, and the file where a teacher notebook's run records its
#: expected values (a new one for each run of the homework tools).
PER_KERNEL = ("PYTHONEXECUTABLE", "PYTEST_CURRENT_TEST", EXPECTED_ENV)


def _key(env):
    """What a warm process must share with a kernel: its environment, less what is set for
    each kernel (``JPY_*``, :data:`PER_KERNEL`); the child then takes the kernel's own."""
    return tuple(sorted((k, v) for k, v in env.items()
                        if not k.startswith("JPY_") and k not in PER_KERNEL))


def _threads():
    """This process's threads, as the system counts them (C libraries' threads too)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def start(env):
    """The address of the warm process for kernels in `env`, started now if there is none
    (None on other systems than Linux). It listens at once: this process binds its socket
    and hands it over, so a request made while it still imports waits for its answer.
    Processes forked from this one later find it too (a build's reading processes)."""
    key = _key(env)
    with _lock:
        if key not in _warm:
            _warm[key] = None
            if sys.platform == "linux":
                address = f"\0booktools-warm-{uuid.uuid4().hex}"
                with socket.socket(socket.AF_UNIX) as listener:
                    listener.bind(address)
                    listener.listen(64)
                    # in "/": `python -m` puts the folder it starts in first on sys.path,
                    # where a kernel has its own, and the imports must not find a package
                    # there that a kernel would not (the student edition's build runs in
                    # a copy of the book, lincls and all); a kernel gets its own in its place
                    _processes.append((os.getpid(), subprocess.Popen(
                        [sys.executable, "-m", "booktools.warm", address.lstrip("\0"),
                         str(listener.fileno())],
                        stdin=subprocess.PIPE, env=dict(key), pass_fds=(listener.fileno(),),
                        start_new_session=True, cwd="/")))
                _warm[key] = address
        return _warm[key]


@atexit.register
def stop():
    """End the warm processes this process started: close their stdin, wait for them."""
    with _lock:
        mine = [p for owner, p in _processes if owner == os.getpid()]  # not a fork's
        for process in mine:
            process.stdin.close()
        for process in mine:
            try:
                process.wait(REQUEST_TIMEOUT)  # it ends between two imports, at the latest
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        _processes.clear()
        _warm.clear()
        _asked.clear()


def _line(sock, buffer=b""):
    """(a line read from `sock` without its newline, what came after it); b"" at EOF."""
    while b"\n" not in buffer:
        data = sock.recv(4096)
        if not data:
            return b"", b""
        buffer += data
    line, _, rest = buffer.partition(b"\n")
    return line, rest


def fork_kernel(cmd, env, cwd, timeout, at_once=False):
    """A :class:`ForkedKernel` for the command `cmd` in `env` and `cwd`, or None if the
    kernel must start as usual (also if the warm process has not answered in `timeout`
    seconds).

    The first kernel of an environment starts as usual, and the warm process for it only
    with the second: its imports cost more than a kernel's start, and many callers ask
    once (a command that runs one notebook, a test). With `at_once` (a server, which
    starts many), or after :func:`start` (the build), the first is forked too."""
    if env is None or cmd[:3] != [sys.executable, *LAUNCHER]:
        return None
    key = _key(env)
    with _lock:
        first = key not in _warm and key not in _asked and not at_once
        _asked.add(key)
    if first:
        return None
    address = start(env)
    if address is None:
        return None
    # the kernel's parent, as jupyter_client's launcher names it (and ipykernel then does
    # not print its connection details to the terminal)
    env = {**env, "JPY_PARENT_PID": str(os.getpid())}
    # the folder as this process names it (relative: to its own, as Popen's `cwd` is)
    request = {"argv": cmd[3:], "env": env, "cwd": os.path.abspath(cwd or os.getcwd())}
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.settimeout(timeout)
        sock.connect(address)
        sock.sendall(json.dumps(request).encode() + b"\n")
        line, rest = _line(sock)
        pid = json.loads(line or "{}").get("pid")
    except (OSError, ValueError):
        pid = None
    if pid is None:  # it refused, or it is gone: no warm start in `env`
        sock.close()
        with _lock:
            _warm[_key(env)] = None
        return None
    return ForkedKernel(pid, sock, rest)


class ForkedKernel:
    """``subprocess.Popen``'s interface (what jupyter_client's provisioner uses: poll,
    wait, signals) for the kernel with pid `pid` that a warm process forked; `sock` is
    the connection on which the warm process writes its exit status."""

    stdin = stdout = stderr = None

    def __init__(self, pid, sock, buffer=b""):
        self.pid, self.returncode = pid, None
        self._sock, self._buffer = sock, buffer

    def poll(self):
        if self.returncode is None and self._sock is not None:
            self._sock.setblocking(False)
            try:
                while b"\n" not in self._buffer:
                    data = self._sock.recv(64)
                    if not data:  # the warm process has gone, and the kernel's status with
                        break     # it (the kernel ends too: ipykernel's parent poller)
                    self._buffer += data
            except BlockingIOError:
                return None
            except OSError:
                pass
            self._sock.close()
            self._sock = None
            line = self._buffer.partition(b"\n")[0]
            self.returncode = int(line) if line.strip() else 0
        return self.returncode

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired([str(self.pid)], timeout)
            time.sleep(0.05)
        return self.returncode

    def send_signal(self, signum):
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def terminate(self):
        self.send_signal(signal.SIGTERM)


def _become_kernel(request, session_fd):
    """In the child: the kernel of `request`, as ``python -m ipykernel_launcher`` is."""
    code = 1
    try:
        os.setsid()
        os.close(session_fd)  # the parent replies once the session is ours (killpg finds it)
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        import numpy

        numpy.random.seed()  # noqa: NPY002  (the legacy global state, as a new process seeds it)
        # what `python -m ipykernel_launcher ARGV` runs, as it runs it
        sys.path[0] = request["cwd"]
        # ipykernel reads JPY_PARENT_PID when it is imported (the default of parent_handle):
        # the warm process imported it before this kernel's parent was known
        parent = request["env"].get("JPY_PARENT_PID", "0")
        sys.argv = ["-m", *request["argv"], f"--IPKernelApp.parent_handle={parent}"]
        runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (exc.code is not None)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        atexit._run_exitfuncs()  # what the interpreter runs at exit (IPython's history)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _closed(fd=0):
    """Whether `fd` (a pipe) has reached its end, without waiting."""
    readable, _, _ = select.select([fd], [], [], 0)
    return bool(readable) and not os.read(fd, 4096)


def _warm_up():
    """Import what the chapters import; None, or why this process must not fork kernels.
    False if stdin closed meanwhile (nobody will ask)."""
    if not os.environ.get("MPLBACKEND"):
        os.environ["MPLBACKEND"] = INLINE
    import importlib

    import lincls

    names = [*WARM, *(m.name for m in pkgutil.iter_modules(lincls.__path__, "lincls."))]
    with warnings.catch_warnings(record=True) as caught:  # under the filters a kernel has
        for name in names:
            if _closed():
                return False
            try:
                importlib.import_module(name)
            except ImportError:  # not installed here (lincls alone): each kernel imports it
                pass
    if caught:
        return f"warnings on import: {caught[0].category.__name__}: {caught[0].message}"
    if _threads() > 1:  # a pool that its library stops before a fork (OpenBLAS's) is no bar
        _fork_once()
    threads = _threads()
    return None if threads == 1 else f"{threads} threads after the imports and a fork"


def _fork_once():
    """Fork a child that exits at once: the libraries whose threads stop before a fork
    (``pthread_atfork``) start them again only when next used, in this process never."""
    with warnings.catch_warnings():  # Python 3.12+: "multi-threaded, use of fork()..."
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def serve(listener_fd):
    """The warm process: import, then fork a kernel for each request on the listening Unix
    socket `listener_fd`, until stdin closes (or answer each that it cannot, and why)."""
    listener = socket.socket(fileno=listener_fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the build; stdin ends us
    refused = _warm_up()
    if refused is False:
        return
    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ, "request")
    events.register(0, selectors.EVENT_READ, "stdin")
    kernels = {}  # pidfd -> (pid, the connection its status goes to)

    def answer():
        conn, _ = listener.accept()
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", creds)[1] != os.getuid():  # another user: no answer
            conn.close()
            return
        conn.settimeout(REQUEST_TIMEOUT)
        pid = pidfd = None
        try:
            line, _ = _line(conn)
            request = json.loads(line or "null")
            why = refused or (_threads() > 1 and "a thread besides the main one")
            if why or not request:
                conn.sendall(json.dumps({"pid": None, "why": why}).encode() + b"\n")
                conn.close()
                return
            session, session_fd = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child keeps its standard streams only (and session_fd)
                os.close(session)
                for fd in kernels:
                    os.close(fd)
                for _, other in kernels.values():
                    other.close()
                events.close()
                listener.close()
                conn.close()
                _become_kernel(request, session_fd)
            os.close(session_fd)
            os.read(session, 1)  # EOF: the child has its session
            os.close(session)
            pidfd = os.pidfd_open(pid)
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            kernels[pidfd] = (pid, conn)
            events.register(pidfd, selectors.EVENT_READ, "exited")
        except Exception:  # this request fails alone (its asker starts a kernel as usual)
            conn.close()
            if pidfd is not None and pidfd not in kernels:
                os.close(pidfd)
            if pid and pidfd not in kernels:  # a kernel nobody will connect to
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)

    while True:
        for key, _ in events.select():
            if key.data == "stdin":
                if _closed():
                    return
            elif key.data == "request":
                answer()
            else:  # a kernel has exited: reap it, tell its manager how
                events.unregister(key.fd)
                pid, conn = kernels.pop(key.fd)
                os.close(key.fd)
                _, status = os.waitpid(pid, 0)
                try:
                    conn.sendall(b"%d\n" % os.waitstatus_to_exitcode(status))
                except OSError:
                    pass
                conn.close()


if __name__ == "__main__":
    serve(int(sys.argv[2]))  # argv[1], the address, names the process in `ps`
