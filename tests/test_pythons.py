"""The Pythons a reader may have, and the route without make (run by `make pythons`).

The supported range is written once, in the Makefile (PY_MIN, PY_MAX); pyproject's
``requires-python`` and the README must say the same. For every supported Python found on
this machine, a fresh venv installs requirements.txt (and the test tools), runs the lincls
tests (not those of the book's machinery, whose layers run on the main venv's Python) and
executes one chapter. A supported Python that is not on the machine is reported as
skipped, never as passed. A Python below the range must make ``make book`` stop at once
with one line. Finally, the README's commands for readers without make run, exactly as
written, in a fresh clone.

The long parts (each Python's venv and tests, the route's install and build) are started
together, as background jobs, by the first test that needs one (:func:`jobs`); each test
then waits for its own. They keep both cores busy to the end, where pytest workers, one
test each, left one core idle while the last Python ran alone (836 s, then 2 workers).
``make test`` runs this file in three parts beside its other layers (``tests/layers.sh``):
the newest supported Python (``make newest-python``), the other Pythons (``make
older-pythons``; both: ``make other-pythons``) and the route (``make route``); a part starts
only the jobs of the tests it selects.
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from pythons import PY_MAX, PY_MIN, find_python, made_venv, venv_commands

from booktools.kernels import STARTUP_TIMEOUT
from booktools.sphinxext import execution

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.pythons


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    tail = (result.stdout + result.stderr)[-3000:]
    assert result.returncode == 0, f"{cmd} failed ({result.returncode}):\n{tail}"
    return result


def test_one_range_everywhere():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'requires-python = ">=3.{PY_MIN}"' in pyproject
    readme = (ROOT / "README.md").read_text()
    assert f"Python 3.{PY_MIN}" in readme and f"3.{PY_MAX}" in readme
    versions = ", ".join(f"3.{m}" for m in range(PY_MIN, PY_MAX))  # the troubleshooting page
    page = (ROOT / "book" / "troubleshooting.md").read_text()
    assert f"Python {versions} or 3.{PY_MAX}," in page, "troubleshooting.md: Python range"


@pytest.mark.parametrize("minor", range(PY_MIN - 2, PY_MIN))
def test_an_older_python_stops_make_with_one_line(minor, tmp_path):
    exe = find_python(minor)
    if exe is None:
        pytest.skip(f"python3.{minor} is not on this machine")
    # as a reader types it: not as a make inside the make that runs this test (which would
    # add its "Entering directory" lines)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    result = subprocess.run(["make", "book", f"PYTHON={exe}", f"VENV={tmp_path / 'venv'}"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert f"found Python 3.{minor}" in lines[0]
    assert f"supports Python 3.{PY_MIN} to 3.{PY_MAX}" in lines[0]
    assert "PYTHON=python3." in lines[0]
    assert not (tmp_path / "venv").exists(), "make created a venv before refusing"


def lincls_tests():
    """The test files of lincls: those that do not import booktools, the book's machinery
    (its layers run on this venv's Python; on the others, what the pins change is lincls)."""
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py")
                  if not re.search(r"^(from|import) booktools\b", p.read_text(), re.M))


def test_lincls_tests_are_most_of_the_unit_tests():
    found = lincls_tests()
    assert "tests/test_perceptron.py" in found and "tests/test_base.py" in found
    assert "tests/test_book_config.py" not in found and "tests/test_homework.py" not in found
    assert len(found) > 15


class Job:
    """A bash script started at once in the background, its output kept in a log file."""

    #: generous: a job installs a venv and runs a test suite, three jobs on two cores, in
    #: `make test` beside the other layers too (tests/layers.sh)
    TIMEOUT = 3600

    def __init__(self, script, log, **kwargs):
        self.log = log
        with open(log, "w") as out:
            self.process = subprocess.Popen(
                ["bash", "-c", "set -euo pipefail\n" + script], stdout=out,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                **kwargs)

    def wait(self):
        """Wait for the script to end; fail with the end of its log if it failed."""
        try:
            code = self.process.wait(timeout=self.TIMEOUT)
        except subprocess.TimeoutExpired:
            self.stop()
            code = f"killed after {self.TIMEOUT} s"
        assert code == 0, f"{self.log} ({code}):\n{self.log.read_text()[-3000:]}"

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


#: Execute a chapter (argv: the chapter, the notebook to write, the kernel's start-up
#: timeout); `jupytext --execute` would give the kernel nbclient's default 60 s to start
EXECUTE = ("import sys, jupytext, nbclient\n"
           "nb = jupytext.read(sys.argv[1])\n"
           "nbclient.NotebookClient(nb, timeout=None, startup_timeout=int(sys.argv[3])).execute()\n"
           "jupytext.write(nb, sys.argv[2])")


def python_job(exe, minor, tmp):
    """A fresh venv on ``exe`` in ``tmp``: install, lincls tests, one chapter executed. The
    venv is the one ``tests/pythons.py`` made in the folder LINCLS_PYTHON_VENVS names, if it
    made one for ``minor`` (make test makes the older Pythons' so, beside the main install)."""
    venv = made_venv(os.environ.get("LINCLS_PYTHON_VENVS"), minor)
    lines = [] if venv else venv_commands(exe, tmp / "venv")
    py = str((venv or tmp / "venv") / "bin" / "python")
    lines += [
        shlex.join([py, "-c", "import sys; print(sys.version_info[1])"])
        + " > " + shlex.quote(str(tmp / "minor.txt")),
        # the lincls tests (`make unit` less the book's machinery), then one chapter
        shlex.join([py, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "lincls",
                    *lincls_tests()]),
        shlex.join([py, "-c", EXECUTE, "book/perceptron.md", str(tmp / "perceptron.ipynb"),
                    str(STARTUP_TIMEOUT)]),
    ]
    return Job("\n".join(lines), tmp / "log.txt", cwd=ROOT)


@pytest.fixture(scope="session")
def jobs(request, tmp_path_factory):
    """The long jobs of the tests selected, all started now: ``{minor: job}`` for every
    other supported Python found, and ``{"route": job}``."""
    selected = {item.originalname for item in request.session.items}
    minors = sorted(item.callspec.params["minor"] for item in request.session.items
                    if item.originalname == "test_supported_python")  # those selected
    started = {}
    for minor in minors:
        exe = find_python(minor)
        if minor != sys.version_info[1] and exe is not None:
            started[minor] = python_job(exe, minor, tmp_path_factory.mktemp(f"python3.{minor}"))
    if "test_readme_route_without_make" in selected:
        started["route"] = route_job(tmp_path_factory.mktemp("route"))

    def interrupted(signum, frame):  # SIGTERM (make test stops a lane so) as Ctrl-C: pytest
        raise KeyboardInterrupt(f"signal {signum}")  # then tears this fixture down

    previous = signal.signal(signal.SIGTERM, interrupted)
    try:
        yield started
    finally:
        signal.signal(signal.SIGTERM, previous)
        for job in started.values():
            job.stop()


@pytest.mark.parametrize("minor", range(PY_MIN, PY_MAX + 1))
def test_supported_python(minor, jobs):
    """A fresh venv on python3.<minor>: install, lincls tests, one chapter."""
    if minor == sys.version_info[1]:
        pytest.skip(f"python3.{minor} is this venv's Python: the main layers test it")
    if minor not in jobs:
        pytest.skip(f"python3.{minor} is not on this machine")
    jobs[minor].wait()
    tmp = jobs[minor].log.parent
    assert (tmp / "minor.txt").read_text().strip() == str(minor)
    assert '"output_type": "error"' not in (tmp / "perceptron.ipynb").read_text()


def readme_block(name):
    """The fenced block after ``<!-- no-make: name -->`` in the README, as command lines."""
    readme = (ROOT / "README.md").read_text()
    match = re.search(rf"<!-- no-make: {name} -->\n```\w+\n(.*?)```", readme, re.S)
    assert match, f"README has no block marked <!-- no-make: {name} -->"
    return [line.strip() for line in match.group(1).splitlines() if line.strip()]


def test_windows_route_is_the_same_commands():
    posix, windows = readme_block("posix"), readme_block("windows")
    assert len(posix) == len(windows)
    for p, w in zip(posix, windows):
        if "activate" in p.lower():
            assert "activate" in w.lower()
        else:
            assert p.replace("python3 ", "python ") == w


def route_job(tmp_path):
    """The README's commands but the last (which starts JupyterLab), as written, in a fresh
    clone: a Job, with the clone, its environment and whether the clone was seeded with the
    build's execution cache as attributes."""
    base_bin = Path(sys.base_prefix) / "bin"  # this machine's python3, not our venv's
    commands = readme_block("posix")
    clone = tmp_path / "textbook"
    run(["git", "clone", "--quiet", str(ROOT), str(clone)])
    # The execution cache of this repository's build, when there is one (make test's
    # book-clean wrote it): its key leaves out the test tools (see
    # booktools.sphinxext.execution), so the route's venv of requirements.txt alone must
    # find every chapter there and execute none; without it the route builds cold.
    cache = ROOT / "_build" / "execution-cache"
    seeded = cache.is_dir() and any(cache.iterdir())
    if seeded:
        shutil.copytree(cache, clone / "_build" / "execution-cache")
    # A login-free shell with this machine's python3 first on PATH, nothing of ours.
    path = f"{base_bin}:/usr/local/bin:/usr/bin:/bin"
    env = {"PATH": path, "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "BROWSER": "true",
           "JUPYTER_PORT": "0", "JUPYTER_TOKEN": "route-test",  # 0: any free port
           "TMPDIR": tempfile.gettempdir()}  # the run's own (tests/conftest.py)
    # the machine's variables that change results, as the reader's shell would have them
    # (a CI runner's OMP_NUM_THREADS, MPLBACKEND, ...): they are in the cache's key
    env.update({k: v for k, v in os.environ.items() if k.startswith(execution.NUMERIC_ENV)})
    if "PIP_CACHE_DIR" in os.environ:
        env["PIP_CACHE_DIR"] = os.environ["PIP_CACHE_DIR"]
    else:
        env["PIP_CACHE_DIR"] = str(Path.home() / ".cache" / "pip")
    # Every command but the last, as one bash script that stops at the first failure.
    job = Job("\n".join(commands[:-1]) + "\n", tmp_path / "log.txt", cwd=clone, env=env)
    job.clone, job.env, job.seeded = clone, env, seeded
    return job


def context_parts(python, root, env):
    """booktools.sphinxext.execution.context_parts of the book at `root`, in `python` with
    `env` and the thread counts a build sets."""
    script = ("import json, os, sys\n"
              "from booktools.sphinxext import execution as e\n"
              "for name in e.THREADS:\n"
              "    os.environ.setdefault(name, '1')\n"
              "print(json.dumps(e.context_parts(sys.argv[1])))\n")
    return json.loads(run([str(python), "-c", script, str(root)], env=env, cwd=root).stdout)


def differences(ours, theirs):
    """What differs between two context_parts, each part's entries on one side only."""
    found = {}
    for part in ours.keys() | theirs.keys():
        a, b = ours.get(part), theirs.get(part)
        if a == b:
            continue
        if isinstance(a, (list, dict)) and isinstance(b, (list, dict)):
            a = set(a.items() if isinstance(a, dict) else a)
            b = set(b.items() if isinstance(b, dict) else b)
            found[part] = {"test venv only": sorted(a - b), "route only": sorted(b - a)}
        else:
            found[part] = {"test venv": a, "route": b}
    return found


def test_readme_route_without_make(jobs):
    """The README's macOS/Linux commands, exactly as written, in a fresh clone."""
    commands = readme_block("posix")
    assert commands[-1] == "jupyter lab", "the route ends by starting JupyterLab"
    job = jobs["route"]
    job.wait()
    clone, env, seeded = job.clone, job.env, job.seeded
    tmp_path = clone.parent
    assert (clone / "_build" / "html" / "book" / "perceptron.html").exists()
    if seeded:
        status = (clone / "_build" / "html" / "book" / "execution_status.html").read_text()
        methods = dict(re.findall(r">(book/[\w/]+)<.*?<p>(\w+)</p>", status, re.S))
        executed = sorted(page for page, method in methods.items() if method != "cache")
        assert methods, "the execution status page lists no chapter"
        if executed:
            ours = context_parts(sys.executable, ROOT, os.environ)
            theirs = context_parts(clone / ".venv" / "bin" / "python", clone, env)
            pytest.fail(f"the route executed {executed}: its cache key's context differs "
                        f"from the test venv's build in {differences(ours, theirs)}")
    # The last command starts a server: start it as written, wait until it answers, stop it.
    # CI runs as root, which Jupyter refuses unless told (a setting of this test's machine,
    # not of the reader's command).
    if os.geteuid() == 0:
        config = tmp_path / "jupyter-config"
        config.mkdir()
        (config / "jupyter_server_config.json").write_text('{"ServerApp": {"allow_root": true}}')
        env["JUPYTER_CONFIG_DIR"] = str(config)
    server = subprocess.Popen(["bash", "-c", "source .venv/bin/activate\n" + commands[-1]],
                              cwd=clone, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    # the server writes the port it took into its runtime directory, under the fresh HOME
    runtime = Path(env["HOME"]) / ".local" / "share" / "jupyter" / "runtime"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT  # as every server and kernel start
        while True:
            try:
                info = json.loads(next(runtime.glob("jpserver-*.json")).read_text())
                url = f"http://127.0.0.1:{info['port']}/api/status?token=route-test"
                with urllib.request.urlopen(url, timeout=5) as response:
                    assert response.status == 200
                break
            except (OSError, StopIteration, ValueError, KeyError):
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"`jupyter lab` did not answer: {server.stderr.read()[-2000:]}")
                time.sleep(1)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
