"""A warm start for kernels: a process that has imported what the chapters import forks
each kernel (Linux; elsewhere kernels start as usual).

A kernel that starts from nothing spends about two CPU seconds importing ipykernel,
NumPy, scikit-learn (which imports SciPy's statistics and pandas), matplotlib and numba
before its first cell has done anything: in a build of 26 chapters on two cores, about
a fifth of the work. Here one process (the *warm process*, ``python -m booktools.warm``)
imports them once; each kernel is then a fork of it, which starts in about a tenth of
the CPU time (measured: 0.2 against 2.0 s to a chapter's first imports).

A fork is the kernel it replaces only if the imports saw what the kernel would see:

- the environment: a warm process serves the environment it was started with (less the
  variables jupyter_client sets for each kernel, ``JPY_*``); a kernel with another one
  (another OpenBLAS kernel, say) gets a warm process of its own;
- one thread: a process with threads cannot be forked safely (a lock another thread holds
  stays held in the child). With more than one BLAS thread OpenBLAS starts its threads
  on import; such a warm process refuses, and its kernels start as usual;
- the command: ``<this Python> -m ipykernel_launcher ...`` only;
- what the kernel does at start before the imports: it sets ``MPLBACKEND`` to the inline
  backend (``ipykernel.kernelapp``), which matplotlib reads when it is imported; the warm
  process does the same first.

The child then becomes the kernel as ``python -m ipykernel_launcher`` would: a session of
its own (as jupyter_client starts kernels), stdin from ``/dev/null``, the kernel's working
folder (also first on ``sys.path``), its environment, and NumPy's global random state
seeded afresh, as a new process's is (Python's ``random`` reseeds itself after a fork).

A warm process lives as long as its standard input is open: the processes that may ask it
for kernels hold it, so it ends with the last of them. It reaps its children at once
(SIGCHLD ignored), so a kernel that has exited is gone: :class:`ForkedKernel`, the
``Popen`` of a kernel that is not our child, polls it by its pid.
"""

import atexit
import json
import os
import pkgutil
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import threading
import uuid

#: What the chapters import (a module left out here is only imported in each kernel).
WARM = ("ipykernel.kernelapp", "numpy", "scipy.optimize", "sklearn.datasets",
        "sklearn.model_selection", "sklearn.preprocessing", "matplotlib.pyplot",
        "IPython.display", "lincls")
INLINE = "module://matplotlib_inline.backend_inline"  # what ipykernel sets, if unset
LAUNCHER = ["-m", "ipykernel_launcher"]

_warm = {}  # environment (as a sorted tuple) -> its warm process's address, or None
_processes = []  # the warm processes this process started (their Popen kept, not waited)
_lock = threading.Lock()


def _key(env):
    """What a warm process must share with a kernel: its environment, less what
    jupyter_client sets for each kernel (and drops: ``PYTHONEXECUTABLE``)."""
    return tuple(sorted((k, v) for k, v in env.items()
                        if not k.startswith("JPY_") and k != "PYTHONEXECUTABLE"))


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
                    _processes.append(subprocess.Popen(
                        [sys.executable, "-m", "booktools.warm", address.lstrip("\0"),
                         str(listener.fileno())],
                        stdin=subprocess.PIPE, env=dict(key), pass_fds=(listener.fileno(),),
                        start_new_session=True))
                _warm[key] = address
        return _warm[key]


def fork_kernel(cmd, env, cwd):
    """The pid of a kernel forked for the command `cmd` in `env` and `cwd`, or None if it
    must start as usual."""
    if env is None or cmd[:3] != [sys.executable, *LAUNCHER]:
        return None
    address = start(env)
    if address is None:
        return None
    # the kernel's parent, as jupyter_client's launcher names it (and ipykernel then does
    # not print its connection details to the terminal)
    env = {**env, "JPY_PARENT_PID": str(os.getpid())}
    request = {"argv": cmd[3:], "env": env, "cwd": os.fspath(cwd or os.getcwd())}
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(address)
            sock.sendall(json.dumps(request).encode() + b"\n")
            reply = json.loads(sock.makefile().readline() or "{}")
    except (OSError, ValueError):
        reply = {}
    if reply.get("pid") is None:  # it refused, or it is gone: no warm start in `env`
        with _lock:
            _warm[_key(env)] = None
    return reply.get("pid")


class ForkedKernel:
    """``subprocess.Popen``'s interface, for the kernel with pid `pid` that the warm
    process forked (jupyter_client's provisioner polls, signals and kills it through
    this). The warm process reaps it, so its exit status is not known: 0."""

    stdin = stdout = stderr = None

    def __init__(self, pid):
        self.pid, self.returncode = pid, None

    def poll(self):
        if self.returncode is None:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                self.returncode = 0
        return self.returncode

    def wait(self, timeout=None):
        import time

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
        for signum in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM):
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
        code = exc.code if isinstance(exc.code, int) else 0
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        atexit._run_exitfuncs()  # what the interpreter runs at exit (IPython's history)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve(listener_fd):
    """The warm process: import, then fork a kernel for each request on the listening Unix
    socket `listener_fd` until stdin closes (or answer each that it cannot: threads)."""
    listener = socket.socket(fileno=listener_fd)
    if not os.environ.get("MPLBACKEND"):
        os.environ["MPLBACKEND"] = INLINE
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the build; stdin ends us
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # exited kernels are reaped at once
    import importlib

    import lincls

    names = [*WARM, *(m.name for m in pkgutil.iter_modules(lincls.__path__, "lincls."))]
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:  # not installed here (lincls alone): each kernel imports it
            pass
    refused = f"{_threads()} threads after the imports" if _threads() != 1 else None
    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ)
    events.register(sys.stdin, selectors.EVENT_READ)
    while True:
        for key, _ in events.select():
            if key.fileobj is sys.stdin:
                if not os.read(0, 4096):
                    return
                continue
            conn, _ = listener.accept()
            with conn:
                request = json.loads(conn.makefile().readline() or "null")
                if refused or not request:
                    conn.sendall(json.dumps({"pid": None, "why": refused}).encode() + b"\n")
                    continue
                session, session_fd = os.pipe()
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    conn.close()
                    os.close(session)
                    _become_kernel(request, session_fd)
                os.close(session_fd)
                os.read(session, 1)  # EOF: the child has its session
                os.close(session)
                conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")


if __name__ == "__main__":
    serve(int(sys.argv[2]))  # argv[1], the address, names the process in `ps`
