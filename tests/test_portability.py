"""The portability layer (``make portability``): the book says the same thing on every CPU.

DESIGN §9: OpenBLAS picks its kernels per CPU, numba compiles for the host, and a reader's
JupyterLab may use several BLAS threads; no sentence of the book may depend on that. Every
chapter of ``_toc.yml`` is compared in three environments, two of them here, the third in
JupyterLab (``tests/test_jupyterlab.py`` runs every chapter there anyway, and compares its
prose with the build's as this layer does, with :func:`differing_prose`):

- ``default``: the OpenBLAS kernel this CPU gets, one BLAS thread: the build's own run
  (``make test`` builds the book just before), read from the build's execution cache
  (``booktools.sphinxext.execution``; the entry under the key the build computes, so it is
  the run of this code, these packages, this CPU). A chapter the cache lacks runs here;
- ``Prescott``: ``OPENBLAS_CORETYPE=Prescott`` (generic x86-64), one BLAS thread;
- a third: the first kernel of ``OTHER_KERNELS`` that this CPU runs and that OpenBLAS reports
  as neither of the two above, two BLAS threads (a reader's JupyterLab), and
  ``NUMBA_CPU_NAME=generic``. A kernel whose instructions the CPU lacks dies with SIGILL: a
  tiny matmul in a subprocess finds out, and a line says that kernel is skipped. The
  JupyterLab of the browser layer runs in it (:func:`third_environment`).

A chapter runs as the build runs it (myst-nb's inline execution, cwd ``book/``): each
``{eval}`` role is evaluated in the kernel when its markdown cell is reached, and rendered
as the page shows it. The layer fails on a chapter that does not run in some environment
(a kernel killed by a signal is named so) and on a displayed prose number that differs
between environments. Numbers that are measured (timings) may differ when the chapter
declares them, each with its reason, in its first front matter (notebook metadata)::

    measured:
      sweep-seconds: wall time on the reader's machine

A declared key the text never shows, or one without a reason, is an error. Printed outputs
(stdout and text results) are compared too, but a difference is only reported (a note with
its first differing line): the policy binds the prose, and the notes point at printed
digits that had better be shown as bounds.

The homework's stored outputs pass nbval in the third environment (``make homework`` runs
nbval under the default kernel and Prescott). All runs (every chapter under Prescott, and
one nbval per homework) share one pool of a worker per core and one more (as the build),
the slowest first. Each environment has its own scratch directories under the test's temporary
directory (numba's cache aside: see SCRATCH); Jupyter's user directories are temporary too.
"""

import asyncio
import configparser
import functools
import os
import re
import resource
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import unescape
from itertools import zip_longest
from pathlib import Path
from types import SimpleNamespace

import jupytext
import nbformat
import pytest
import yaml
from jupyter_book.config import get_final_config
from myst_nb.core.execute.inline import ModifiedNotebookClient
from myst_nb.core.read import read_myst_markdown_notebook
from myst_nb.core.render import get_mime_priority
from myst_parser.config.main import MdParserConfig
from nbclient.exceptions import CellExecutionError, DeadKernelError
from test_book_config import one_page_book, toc_files

from booktools.kernels import STARTUP_TIMEOUT, WarmKernelManager
from booktools.sphinxext import execution
from booktools.sphinxext.execution import read_jobs

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = [ROOT / f"{name}.md" for name in toc_files() if (ROOT / f"{name}.md").exists()
            and "```{code-cell}" in (ROOT / f"{name}.md").read_text()]
HOMEWORK = sorted((ROOT / "book" / "homework").glob("*.ipynb"))
#: Candidates for the third environment, tried in this order (OPENBLAS_CORETYPE names).
OTHER_KERNELS = ("Sandybridge", "Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids",
                 "Nehalem", "Core2")
#: The slowest chapters, started first; the others follow in the order of the book.
HEAVY = ("howto_sweeps", "teachers", "reproducing_minover_report", "online_learning",
         "nonseparable", "cover")
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
TWO_THREADS = {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}

ROLE = re.compile(r"\{eval\}`([^`]+)`")
PROSE_KEY = re.compile(r"prose\['([\w-]+)'\]")
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # the colours of IPython's tracebacks
#: myst-nb's {eval} role strips the quotes of a text/plain repr (strip_text_quotes, matched
#: by myst_nb.core.render._QUOTED_RE): a str shows without them.
QUOTED = re.compile(r"^([\"']).*\1$")
#: The mime types an HTML page shows, preferred first.
PRIORITY = get_mime_priority("html", [])
CELL_TIMEOUT = yaml.safe_load((ROOT / "_config.yml").read_text())["execute"]["timeout"]
NBVAL = re.search(r"^NBVAL := (.*)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()
_sanitize = configparser.ConfigParser()
_sanitize.read(ROOT / "tests" / "sanitize.cfg")
#: nbval's rules (memory addresses, figure sizes), applied to printed outputs before comparing.
SANITIZE = [(re.compile(s["regex"]), s["replace"]) for s in _sanitize.values() if "regex" in s]

#: Settings not inherited from the caller: numerics, scratch directories, pytest's own.
NOT_INHERITED = ("OPENBLAS_", "GOTO", "OMP_", "MKL_", "NUMBA_", "JUPYTER_", "IPYTHON", "MPL",
                 "TMP", "TEMP", "PYTEST_")
SCRATCH = {"MPLCONFIGDIR": "matplotlib", "IPYTHONDIR": "ipython",
           "JUPYTER_RUNTIME_DIR": "runtime", "JUPYTER_DATA_DIR": "data",
           "JUPYTER_CONFIG_DIR": "config", "TMPDIR": "tmp"}
# No NUMBA_CACHE_DIR: every environment uses lincls's own cache (lincls/__pycache__), the
# build's. numba keys a compiled function by its signature and the CPU it compiles for (name
# and features): the third environment's `generic` gets entries of its own, and Prescott,
# which differs in BLAS only (called at run time), reads the build's, the code it would
# compile. A cache of its own made each environment, and each JupyterLab of the browser
# layer, compile every function again.


@dataclass
class Env:
    name: str
    vars: dict  # the whole environment of its processes


def environment(name, scratch, **settings):
    """An Env: the caller's environment without NOT_INHERITED, scratch under `scratch`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(NOT_INHERITED)}
    for var, sub in SCRATCH.items():
        (scratch / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(scratch / sub)
    return Env(name, env | settings)


def hermetic_parent(monkeypatch, scratch):
    """This process starts the kernels: its connection files and kernel specs are found in
    Jupyter's directories, so theirs are temporary too (only the venv's python3 spec)."""
    monkeypatch.delenv("JUPYTER_PATH", raising=False)
    for var in ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR"):
        (scratch / var).mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(var, str(scratch / var))


def died(returncode):
    """How a process ended, e.g. 'signal 4, SIGILL'."""
    if returncode is None or returncode >= 0:
        return f"exit code {returncode}"
    return f"signal {-returncode}, {signal.Signals(-returncode).name}"


@contextmanager
def no_core_dumps():
    """The processes started meanwhile (probes, kernels) leave no core file when they die
    (of SIGILL, say) in their working directory, which may be book/."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


async def command(*args, env, cwd):
    """Run a command; (returncode, stdout and stderr)."""
    proc = await asyncio.create_subprocess_exec(
        *args, env=env, cwd=cwd, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    out, _ = await proc.communicate()
    return proc.returncode, out.decode(errors="replace")


PROBE = ("import numpy, threadpoolctl\n"
         "a = numpy.ones((64, 64))\n"
         "a @ a, a @ a[0], a[0] @ a[0]\n"  # gemm, gemv, dot
         "print(*sorted({i.get('architecture') for i in threadpoolctl.threadpool_info()\n"
         "               if i['internal_api'] == 'openblas'}))")


async def blas_kernel(env):
    """(returncode, the OpenBLAS kernel that reports itself in `env` after a few products)."""
    code, out = await command(sys.executable, "-c", PROBE, env=env.vars, cwd=env.vars["TMPDIR"])
    if code > 0:
        raise RuntimeError(f"the OpenBLAS probe failed in {env.name}:\n{out}")
    return code, out.strip()


async def environments(scratch, say):
    """The three environments (see the module docstring); lines say what was found."""
    default = environment("default", scratch / "default", **ONE_THREAD)
    prescott = environment("Prescott", scratch / "Prescott", OPENBLAS_CORETYPE="Prescott",
                           **ONE_THREAD)
    probes = [environment(k, scratch / "probe", OPENBLAS_CORETYPE=k) for k in OTHER_KERNELS]
    found = await asyncio.gather(*(blas_kernel(e) for e in [default, prescott, *probes]))
    (_, default_kernel), (_, prescott_kernel) = found[:2]
    say(f"portability: default (the build) runs OpenBLAS's {default_kernel} kernel with one "
        f"BLAS thread; Prescott runs {prescott_kernel} with one")
    assert prescott_kernel != default_kernel, \
        f"OPENBLAS_CORETYPE=Prescott runs the default kernel {default_kernel}: one kernel only"
    third = None
    for probe, (code, kernel) in zip(probes, found[2:]):
        if code < 0:
            say(f"portability: skipped OpenBLAS kernel {probe.name}: this CPU cannot run it "
                f"(a matmul died with {died(code)})")
        elif third is None and kernel not in (default_kernel, prescott_kernel):
            third = environment(f"{probe.name}+generic", scratch / "third", **TWO_THREADS,
                                OPENBLAS_CORETYPE=probe.name, NUMBA_CPU_NAME="generic")
            say(f"portability: {third.name} runs {kernel} with two BLAS threads and "
                f"NUMBA_CPU_NAME=generic")
    assert third is not None, f"no kernel of {OTHER_KERNELS} runs here besides the first two"
    return [default, prescott, third]


def third_environment(scratch):
    """The third environment (its scratch directories under `scratch`), for a process
    outside this layer (JupyterLab's kernels); the layer's own lines say how it is chosen."""
    # in a thread of its own: Playwright's sync API, once started in this process (a
    # browser test before the first JupyterLab one), holds the thread's event loop
    with no_core_dumps(), ThreadPoolExecutor(1) as thread:
        *_, third = thread.submit(asyncio.run, environments(scratch, lambda line: None)).result()
    return third


@dataclass
class Run:
    """One chapter (or homework) run in one environment."""
    env: str
    prose: dict = field(default_factory=dict)  # {eval} expression -> shown, per occurrence
    printed: dict = field(default_factory=dict)  # code cell -> its printed output
    error: str | None = None
    seconds: float = 0.0
    cached: bool = False  # read from the build's execution cache, not run here


def shown(outputs):
    """What the page shows for the outputs of an {eval} role (myst_nb.ext.eval)."""
    text = ""
    for out in outputs:
        data = out.get("data", {})
        mime = next((m for m in PRIORITY if m in data), None)
        if mime == "text/plain":
            text += data[mime][1:-1] if QUOTED.match(data[mime]) else data[mime]
        elif mime is not None:
            text += f"[{mime}] {data[mime]}"
    return text


def printed(outputs):
    """A code cell's printed output (stdout and text results), sanitized as nbval does."""
    text = ""
    for out in outputs:
        if out.output_type == "stream" and out.name == "stdout":
            text += out.text
        elif out.output_type == "execute_result":
            text += out.data.get("text/plain", "")
    for pattern, replace in SANITIZE:
        text = pattern.sub(replace, text)
    return text


def first_line(cell):
    return cell.source.strip().split("\n")[0][:70]


async def run_chapter(path, env):
    """Execute a MyST chapter as the build does, recording its prose as the page shows it."""
    run, start, where = Run(env.name), time.perf_counter(), "starting the kernel"
    nb = jupytext.read(path)
    client = ModifiedNotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                    resources={"metadata": {"path": str(path.parent)}},
                                    shutdown_kernel="immediate", record_timing=False,
                                    startup_timeout=STARTUP_TIMEOUT,
                                    kernel_manager_class=WarmKernelManager)
    try:
        async with client.async_setup_kernel(env=env.vars):
            try:
                for index, cell in enumerate(nb.cells):
                    if cell.cell_type == "code":
                        where = f"cell {index} ({first_line(cell)})"
                        await client.async_execute_cell(cell, index)
                        run.printed[where] = printed(cell.outputs)
                    elif cell.cell_type == "markdown":
                        for expr in ROLE.findall(cell.source):
                            where = f"{{eval}}`{expr}` in cell {index}"
                            outputs = await client.async_eval_expression(expr)
                            run.prose.setdefault(expr, []).append(shown(outputs))
            except DeadKernelError:  # ask before the kernel's process is cleaned up
                code = await client.km.provisioner.poll()
                run.error = f"kernel died ({died(code)}) at {where}"
    except CellExecutionError as exc:
        run.error = f"{where} raised:\n{ANSI.sub('', str(exc))[-3000:]}"
    except Exception as exc:  # the kernel did not start, a cell's timeout, ...
        run.error = f"{type(exc).__name__} at {where}: {exc}"
    run.seconds = time.perf_counter() - start
    return run


@functools.cache
def _context(root, environment):
    """`execution.execution_context` of the book at `root` in the numeric `environment` (the
    variables it reads, as sorted items; they must be os.environ's at the call): the same
    for every chapter, and about 0.6 s a call (reading the distributions' metadata)."""
    return execution.execution_context(root)


def build_run(path, root=ROOT):
    """The build's run of a chapter (book at `root`), read from its execution cache: a Run
    as run_chapter makes it, or None when the cache holds no entry for this chapter's code
    as it is (the key is the build's: booktools.sphinxext.execution.cache_key)."""
    config, *_ = get_final_config(user_yaml=root / "_config.yml", sourcedir=root,
                                  cli_config={"latex_individualpages": False})
    folder = config.get("lincls_execution_cache")
    if not folder:
        return None
    settings = SimpleNamespace(**{name: config.get(f"nb_{name}") for name in (
        "execution_timeout", "execution_allow_errors", "execution_raise_on_error",
        "execution_in_temp", "eval_name_regex")})
    nb = read_myst_markdown_notebook(path.read_text(), MdParserConfig(), path=path)
    with pytest.MonkeyPatch.context() as monkeypatch:  # the build's thread counts (set_jobs)
        for name in execution.THREADS:
            monkeypatch.setenv(name, os.environ.get(name, "1"))
        numeric = tuple(sorted((k, v) for k, v in os.environ.items()
                               if k.startswith(execution.NUMERIC_ENV)))
        monkeypatch.setitem(execution._cache, "context", _context(root, numeric))
        key = execution.cache_key(nb, path, settings)
    entry = execution.read_entry(root / folder / f"{key}.json", nb)
    if entry is None:
        return None
    evals = entry["evals"]
    plan = execution._eval_plan(nb.cells)
    if not set(plan) <= set(evals):  # as the build decides: such an entry is not used
        return None
    run = Run("default", cached=True)
    for ran, expr in plan:
        run.prose.setdefault(expr, []).append(shown(evals[ran, expr]))
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            outputs = [nbformat.from_dict(o) for o in entry["cells"][str(index)]["outputs"]]
            run.printed[f"cell {index} ({first_line(cell)})"] = printed(outputs)
    return run


async def run_nbval(path, env):
    """nbval on one homework notebook in `env` (as `make homework` runs it)."""
    start = time.perf_counter()
    code, out = await command(sys.executable, "-m", "pytest", *NBVAL, "-q", str(path),
                              env=env.vars, cwd=ROOT)
    run = Run(env.name, seconds=time.perf_counter() - start)
    if code:
        run.error = f"nbval failed ({died(code)}):\n{out[-3000:]}"
    return run


async def run_all(jobs, workers):
    """Run the jobs (functions returning a coroutine), at most `workers` at once, in order."""
    gate = asyncio.Semaphore(workers)

    async def one(job):
        async with gate:
            return await job()

    return await asyncio.gather(*(one(job) for job in jobs))


def declared_measured(nb):
    """The chapter's measured prose keys {key: reason}, and what is wrong with them."""
    declared = nb.metadata.get("measured", {})
    if not isinstance(declared, dict):
        return {}, [f"'measured' must map prose keys to reasons, not {declared!r}"]
    keys = {key for cell in nb.cells if cell.cell_type == "markdown"
            for expr in ROLE.findall(cell.source) for key in PROSE_KEY.findall(expr)}
    problems = [f"measured key {key!r} has no reason" for key, reason in declared.items()
                if not isinstance(reason, str) or not reason.strip()]
    problems += [f"measured key {key!r} is declared but the text never shows it"
                 for key in declared if key not in keys]
    return declared, problems


def differing_prose(runs, measured):
    """Rows (expression, shown in each run) of the prose that differs between the runs and is
    not declared measured; an expression some run did not reach (it failed) is skipped."""
    rows = []
    for expr in runs[0].prose:
        values = [run.prose.get(expr) for run in runs]
        if None in values or set(PROSE_KEY.findall(expr)) & set(measured):
            continue
        if any(v != values[0] for v in values):
            rows.append((expr, *(" / ".join(v) for v in values)))
    return rows


def differing_printed(runs):
    """The cells whose printed output differs between the runs that completed."""
    complete = [run.printed for run in runs if run.error is None]
    return [i for i in complete[0] if any(p[i] != complete[0][i] for p in complete)] \
        if complete else []


def first_difference(texts):
    """The first line in which the texts differ, from each."""
    rows = zip_longest(*(text.splitlines() for text in texts), fillvalue="")
    return next((row for row in rows if len(set(row)) > 1), [repr(t[-20:]) for t in texts])


def table(header, rows):
    """Rows as aligned text columns."""
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    return "\n".join("  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip()
                     for row in [header, *rows])


def check_chapter(path, runs):
    """What fails the chapter: runs that failed, a bad declaration, differing prose."""
    name = path.relative_to(path.parents[1]).with_suffix("").as_posix()
    measured, problems = declared_measured(jupytext.read(path))
    problems = [f"{name}: {p}" for p in problems]
    problems += [f"{name} under {run.env}: {run.error}" for run in runs if run.error]
    rows = [(name, *row) for row in differing_prose(runs, measured)]
    if rows:
        header = ("chapter", "expression", *(run.env for run in runs))
        problems.append(f"{name}: prose differs between environments (declare a timing in "
                        f"the front matter's 'measured'):\n{table(header, rows)}")
    return problems, rows


def say(config, line):
    """Print a line on the terminal, past pytest's capture."""
    with config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        print(line, flush=True)


@dataclass(repr=False)  # pytest shows it beside every failure
class Layer:
    """The environments, and every run."""
    envs: list
    runs: dict  # path -> its runs: a chapter default and Prescott, a homework the third


async def run_layer(scratch, say):
    """Every chapter in the default environment (where the build's cache lacks it) and under
    Prescott, and nbval on the homework in the third, in one pool."""
    start = time.perf_counter()
    envs = await environments(scratch, say)
    built = {p: build_run(p) for p in CHAPTERS}  # the default environment's, where it can
    say(f"portability: default: {sum(r is not None for r in built.values())} of "
        f"{len(CHAPTERS)} chapters read from the build's execution cache, the others run; "
        f"{envs[2].name}: the chapters run in JupyterLab (make browser), the homework here")
    heavy = sorted((p for p in CHAPTERS if p.stem in HEAVY), key=lambda p: HEAVY.index(p.stem))
    rest = [p for p in CHAPTERS if p.stem not in HEAVY]
    chapter_envs = envs[:2]
    jobs = ([(p, e) for p in heavy for e in chapter_envs] + [(p, envs[2]) for p in HOMEWORK]
            + [(p, e) for p in rest for e in chapter_envs])
    jobs = [(p, e) for p, e in jobs if not (e is envs[0] and built.get(p))]
    workers = read_jobs("auto")
    runner = {".md": run_chapter, ".ipynb": run_nbval}
    done = await run_all([lambda p=p, e=e: runner[p.suffix](p, e) for p, e in jobs], workers)
    runs = {p: [run] for p, run in built.items() if run is not None}
    for (path, _), run in zip(jobs, done):
        runs.setdefault(path, []).append(run)
    layer = Layer(envs, runs)
    report(layer, time.perf_counter() - start, workers, say)
    return layer


def report(layer, wall, workers, say):
    """Say the time it took, the failures, the notes and a table of the differing prose."""
    envs, runs = layer.envs, layer.runs
    done = [(path, run) for path in runs for run in runs[path] if not run.cached]
    slowest = sorted(((run.seconds, path.stem, run.env) for path, run in done), reverse=True)
    total = sum(run.seconds for _, run in done)
    say(f"portability: {len(done)} runs (2 environments x {len(CHAPTERS)} chapters, "
        f"less those read from the cache, and nbval on {len(HOMEWORK)} homework) in "
        f"{wall:.0f} s wall ({total:.0f} s of runs) on {workers} "
        "workers; slowest: "
        + ", ".join(f"{stem} ({env}) {s:.0f} s" for s, stem, env in slowest[:6]))
    rows, failed = [], []
    for path in CHAPTERS:
        problems, chapter_rows = check_chapter(path, runs[path])
        rows += chapter_rows
        failed += [p.split("\n")[0] for p in problems if "prose differs" not in p]
        cells = differing_printed(runs[path])
        if cells:
            first = first_difference([r.printed[cells[0]] for r in runs[path] if not r.error])
            say(f"portability: note: {path.stem}: the printed output of {', '.join(cells)} "
                "differs (reported, not compared); first: " + " | ".join(x[:60] for x in first))
    failed += [f"{p.stem}: nbval under {r.env} failed" for p in HOMEWORK for r in runs[p]
               if r.error]
    for line in failed:
        say(f"portability: FAILED {line}")
    if rows:
        header = ("chapter", "expression", *(env.name for env in envs[:2]))
        say(f"portability: prose that differs between environments:\n{table(header, rows)}")


@pytest.fixture(scope="module")
def layer(request, tmp_path_factory):
    scratch = tmp_path_factory.mktemp("portability")
    with pytest.MonkeyPatch.context() as monkeypatch, no_core_dumps():
        hermetic_parent(monkeypatch, scratch)
        return asyncio.run(run_layer(scratch, lambda line: say(request.config, line)))


@pytest.mark.portability
@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_runs_and_says_the_same_everywhere(layer, path):
    problems, _ = check_chapter(path, layer.runs[path])
    assert not problems, "\n\n".join(problems)


@pytest.mark.portability
@pytest.mark.parametrize("path", HOMEWORK, ids=[p.stem for p in HOMEWORK])
def test_homework_passes_nbval_under_a_third_kernel(layer, path):
    (run,) = layer.runs[path]
    assert run.error is None, f"{path.stem} under {run.env}: {run.error}"


# The layer itself, on toy chapters: it can fail (the unit layer runs these).

TOY = """---
kernelspec:
  display_name: Python 3
  language: python
  name: python3
{front}---

# Toy

```{{code-cell}} ipython3
import os
prose = {{'run': os.environ['TOY_RUN'], 'pi': 3.14159}}
print('run', prose['run'])
{code}
```

Run {{eval}}`prose['run']`; $\\pi$ is about {{eval}}`f"{{prose['pi']:.2f}}"`.
"""


def run_toy(tmp_path, monkeypatch, front="", code="", runs=("1", "2")):
    """Write a toy chapter and run it with TOY_RUN=1 and =2; (its path, its runs)."""
    hermetic_parent(monkeypatch, tmp_path / "parent")
    path = tmp_path / "book" / "toy.md"
    path.parent.mkdir()
    path.write_text(TOY.format(front=front, code=code))
    envs = [environment(f"run{r}", tmp_path / f"run{r}", TOY_RUN=r) for r in runs]
    jobs = [lambda e=e: run_chapter(path, e) for e in envs]
    return path, asyncio.run(run_all(jobs, workers=2))


def test_the_page_shows_a_str_without_quotes_and_numbers_as_their_repr():
    def out(text, **more):
        return [{"output_type": "execute_result", "data": {"text/plain": text, **more}}]

    assert shown(out("'0.125'")) == "0.125"
    assert shown(out('"it\'s"')) == "it's"
    assert shown(out("0.1")) == "0.1"
    assert shown(out("np.float64(0.5)")) == "np.float64(0.5)"
    assert shown(out("x", **{"text/html": "<b>x</b>"})) == "[text/html] <b>x</b>"


@pytest.mark.portability
def test_the_layer_reads_prose_as_the_page_shows_it(tmp_path, monkeypatch):
    """A one-page book with our configuration: its page and the layer show the same text.

    In the portability layer, not the unit layer: in the unit layer's full run (two
    workers, two thousand other tests) the lookup once missed the entry the build had
    just written; the cause was not found (the key holds the installed packages and the
    environment's numeric variables, which other tests in the process may change)."""
    values = {"s": "'two words'", "x": "0.1", "n": "np.float64(0.5)", "k": "7"}
    roles = [f"{{eval}}`prose['{k}']`" for k in values] + ['{eval}`f"{prose[\'x\']:.3f}"`']
    body = ("# Page\n\n```{code-cell} ipython3\nimport numpy as np\n\nprose = {"
            + ", ".join(f"'{k}': {v}" for k, v in values.items()) + "}\n```\n\n"
            + " ".join(f"<{role}>" for role in roles) + "\n")
    result = one_page_book(tmp_path, body)
    assert result.returncode == 0, (result.stdout + result.stderr)[-2000:]
    html = (tmp_path / "_build" / "html" / "book" / "index.html").read_text()
    page = re.findall(r"<([^<>]*)>", unescape(re.sub(r"<[^>]+>", "", html)))
    hermetic_parent(monkeypatch, tmp_path / "parent")
    run = asyncio.run(run_chapter(tmp_path / "book" / "index.md",
                                  environment("layer", tmp_path / "layer")))
    assert page == [text for texts in run.prose.values() for text in texts]
    assert page == ["two words", "0.1", "np.float64(0.5)", "7", "0.100"]
    # the build's own run, from its execution cache: the same; and none once the code changes
    chapter = tmp_path / "book" / "index.md"
    built = build_run(chapter, root=tmp_path)
    assert built is not None and built.cached and built.error is None
    assert built.prose == run.prose and built.printed == run.printed
    chapter.write_text(chapter.read_text().replace("'k': 7", "'k': 8"))
    assert build_run(chapter, root=tmp_path) is None


@pytest.mark.slow
def test_prose_that_depends_on_the_environment_fails(tmp_path, monkeypatch):
    path, runs = run_toy(tmp_path, monkeypatch)
    assert [run.prose for run in runs] == [
        {"prose['run']": ["1"], "f\"{prose['pi']:.2f}\"": ["3.14"]},
        {"prose['run']": ["2"], "f\"{prose['pi']:.2f}\"": ["3.14"]}]
    problems, rows = check_chapter(path, runs)
    assert rows == [("book/toy", "prose['run']", "1", "2")]
    assert len(problems) == 1 and "prose differs" in problems[0]
    assert "chapter   expression    run1  run2\nbook/toy  prose['run']  1     2" in problems[0]
    assert differing_printed(runs) == ["cell 1 (import os)"]


@pytest.mark.slow
def test_declared_measured_prose_passes(tmp_path, monkeypatch):
    front = "measured:\n  run: the run's number, different on purpose\n"
    path, runs = run_toy(tmp_path, monkeypatch, front=front)
    assert check_chapter(path, runs) == ([], [])


@pytest.mark.parametrize("front, problem", [
    ("measured:\n  seconds: a timing\n", "'seconds' is declared but the text never shows it"),
    ("measured:\n  run: ''\n", "'run' has no reason"),
    ("measured: run\n", "'measured' must map prose keys to reasons"),
], ids=["never-shown", "no-reason", "not-a-mapping"])
def test_a_bad_measured_declaration_fails(tmp_path, front, problem):
    path = tmp_path / "toy.md"
    path.write_text(TOY.format(front=front, code=""))
    declared, problems = declared_measured(jupytext.read(path))
    assert len(problems) == 1 and problem in problems[0], problems


def test_a_blas_kernel_the_cpu_lacks_is_skipped_with_a_line(tmp_path, monkeypatch):
    """A fake probe: 'SkylakeX' dies of SIGILL, 'Haswell' is the default, so the third
    environment is 'Sandybridge'."""
    fake = ("import os, signal\n"
            "kernel = os.environ.get('OPENBLAS_CORETYPE', 'Haswell')\n"
            "if kernel == 'SkylakeX':\n"
            "    os.kill(os.getpid(), signal.SIGILL)\n"
            "print(kernel)")
    monkeypatch.setattr(sys.modules[__name__], "PROBE", fake)
    monkeypatch.setattr(sys.modules[__name__], "OTHER_KERNELS", ("SkylakeX", "Haswell",
                                                                 "Sandybridge", "Nehalem"))
    lines = []
    with no_core_dumps():
        envs = asyncio.run(environments(tmp_path, lines.append))
    assert [env.name for env in envs] == ["default", "Prescott", "Sandybridge+generic"]
    assert envs[2].vars["NUMBA_CPU_NAME"] == "generic"
    assert [env.vars["OPENBLAS_NUM_THREADS"] for env in envs] == ["1", "1", "2"]
    assert ("portability: skipped OpenBLAS kernel SkylakeX: this CPU cannot run it "
            "(a matmul died with signal 4, SIGILL)") in lines


@pytest.mark.slow
def test_a_kernel_killed_by_a_signal_is_reported_as_such(tmp_path, monkeypatch):
    code = "os.kill(os.getpid(), 9)"
    path, (run,) = run_toy(tmp_path, monkeypatch, code=code, runs=("1",))
    assert run.error.startswith("kernel died (signal 9, SIGKILL) at cell 1 (import os)")
    problems, _ = check_chapter(path, [run])
    assert problems == [f"book/toy under run1: {run.error}"]
