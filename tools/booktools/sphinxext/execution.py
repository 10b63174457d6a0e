"""How the build executes the chapters: on every core, each kernel stopped at once.

A Sphinx extension (listed in ``_config.yml``), not part of the algorithms. With myst-nb's
``inline`` execution a chapter runs while Sphinx reads it, and running the chapters is
most of the time of a build.

**Stopping a kernel.** Once a chapter has run, myst-nb asks its kernel to shut down and
waits until the process has exited: one to three seconds of waiting per chapter, a good
part of a build. Nothing runs in a kernel after its last cell, so here it is stopped at
once (nbclient's ``shutdown_kernel = "immediate"``: the kernel's process group is
killed), as ``jupyter nbconvert --execute`` can be told to do. A chapter's log line then
gives its kernel's CPU time, how long the build waited for the kernel in all and for
which step the longest, and how long the kernel took to stop.

**A warm start.** A kernel started from nothing spends about two CPU seconds on its
imports (scikit-learn, matplotlib, numba) before a chapter's first cell has done anything.
The build's kernels are forked from one process that has imported them
(:mod:`booktools.warm`), started before the reading processes are (they share it); a
chapter's kernel then starts in a tenth of that. Measured cold on a 2-core machine: 78-83 s
and 134-142 CPU seconds, against 94 s and 162 CPU seconds the same hour (110-117 s and about
190 CPU seconds the day before) with kernels started from nothing; the chapters' outputs
were the same but for timings and random ids. A build whose chapters all come from the
cache starts it too (it imports on the other core while Sphinx reads).

**One BLAS thread per kernel.** The chapters already run side by side, so a kernel whose
linear algebra also started a thread per core would only compete with its neighbours (and
OpenBLAS spends a quarter of a second starting its threads in every kernel). The kernels
inherit ``OPENBLAS_NUM_THREADS=1`` and the like from the build, unless they are set.

**A failing cell, named.** When a cell raises, myst-nb stops the build with an error
that names the chapter, caused by nbclient's error that shows the cell and its traceback.
A reading process reports only the first error's message to the main process, so that
message gets the cell and its traceback too; otherwise a parallel build would say which
chapter failed but not where or why.

**A patient start.** nbclient gives a kernel 60 seconds to start. The first build in a
fresh environment (the README's route without make, in CI, on two cores with three
chapters starting kernels side by side) once failed with "Kernel didn't respond in 60
seconds"; a first start also compiles the byte code of IPython and its dependencies. The
build gives a kernel as long to start as a cell to run (``execute.timeout``). Its
kernels listen on Unix sockets rather than TCP ports (:mod:`booktools.kernels`): three
processes start kernels at the same moment, and a port picked for one may be taken
before it binds it.

**Parallel reading.** Sphinx reads documents in parallel processes with
``sphinx-build -j N``, but ``jupyter-book build`` (Jupyter Book 1.x) has no such option;
this extension sets it from the configuration value ``lincls_read_jobs`` (in
``_config.yml`` under ``sphinx.config``): a number of processes, or ``"auto"`` for one per
core and one more. Each process runs its chapters one after the other, each in its own
kernel, as a serial build does; the pages do not depend on how the chapters were shared
out. The extra process works while the others wait: a reading process idles while its
kernel starts and between cells, and its kernel idles while it renders. Measured cold
(``rm -rf _build; make book``) on a 2-core machine whose speed drifted by up to a fifth
between runs: 84-89 s with 2 processes and 81-83 s with 3 while it was steady, 73-75 s
with 3 when it was quiet; in its noisiest stretch either count took 86-96 s.

Sphinx reads in parallel only when every extension declares that it may. Two of the
extensions Jupyter Book loads say nothing, so Sphinx would warn and read serially (and
``-W`` turns the warning into an error); both keep nothing in the build environment while
a document is read, which is what parallel reading needs, and are declared safe here:

- ``sphinx_multitoc_numbering`` replaces the section numbering, which Sphinx runs once,
  in the main process, after the parallel reads have been merged;
- ``sphinx_jupyterbook_latex`` adds transforms of one document at a time (for the LaTeX
  builders) and sets two attributes of the environment when the builder starts, before
  any read.

One declares it but is not: sphinx-proof's ``prf`` domain keeps its proofs in
``env.proof_list`` (merged by its own ``env-merge-info`` handler), not in the domain's data,
yet lacks the domain method Sphinx calls to merge that data, which then raises. Its
domain data holds nothing to merge, so the method is added here as one that does nothing.

**The end.** A build ends with its process exiting, and CPython's last garbage collection
then walks every object the build made (two seconds, measured); ``gc.freeze()`` when the
build has finished puts them out of its way. (A program that builds twice in one process
would not get the first build's memory back; ``jupyter-book build`` and ``sphinx-build``
build once.)

**The execution cache.** A chapter whose code has run before with the same inputs is not
run again: the build stores each executed chapter's outputs and the results of its
``{eval}`` roles in the folder ``lincls_execution_cache`` (``_config.yml``; relative to
the book, ``_build/execution-cache``, so a fresh clone or ``rm -rf _build`` starts cold),
and reuses them when the key is the same. The key is a hash of everything a chapter's
results can depend on:

- its code cells (source and metadata), the notebook's metadata (not the line map), and
  myst-nb's execution settings;
- the contents of the files and folders its code names by a relative path that exists
  beside it (the teachers' chapter reads ``homework``);
- the sources of ``lincls`` and ``booktools`` (every file but byte code);
- Python's version; the version of every distribution the book runs on: ``lincls``,
  ``booktools``, what the book's ``requirements.txt`` names, and what they require,
  transitively, but pip and setuptools, the venv's own (without that file: every installed
  distribution); the CPU's model and
  flags (OpenBLAS and numba pick kernels by them); and the environment variables that
  change results (``OPENBLAS_*``, ``OMP_*``, ``MKL_*``, ``NUMBA_*``, ...).

The test tools that ``requirements-dev.txt`` adds are not in the key, so a build in a
venv of ``requirements.txt`` alone (the README's route) reuses the entries of one in the
test venv; a test checks that the chapters import nothing from outside that set.

The markdown is not in the key: the student edition, whose chapters differ from the
teacher's in their solutions only, reuses every chapter whose code is unchanged, and so
does the single-page build of the PDF. An entry stores each ``{eval}`` result by its
expression and the number of code cells before it (all of them have run when a markdown
cell is rendered); an expression the entry lacks makes the build run the chapter after
all. The execution status page marks a reused chapter ``cache``, with the time of the run
stored; so are the timings a reused chapter shows.

**Prefixes.** Cells run one after the other, so the first *k* code cells of a run had the
outputs, and left the state, that a run of those *k* cells alone would have. A stored run
of *n* code cells is also found under the key of each of its prefixes (the notebook's first
*k* code cells, *k* < *n*, with what they name): a small file that points at the run's
entry. A notebook whose code is such a prefix reuses the entry's first *k* outputs, and its
``{eval}`` results (each stored with the number of code cells before it: a prefix's come
after at most *k*; an ``{eval}`` that the run did not store so runs the chapter). A run
that holds widget state has no prefixes: that state is the one at the run's end. The
student edition drops the solutions, which close most chapters: measured when this was
written, its build ran 10 of the 21 chapters it changes instead of 21 (52 s against 97 s).

**Chunks.** Sphinx hands each reading process a contiguous chunk of the documents, in
the order they are read; its own chunks hold about eleven documents each for this book,
so one process got the four cheapest chapters and the two others eleven each, and the
build's end waited for one of them. Here the documents that run code go two at a time,
and a process takes the next pair as it finishes one; the slowest chapters, listed in
``lincls_read_first`` (``_config.yml``), are read first, then the other documents that
run code in their order, then the rest (the homework notebooks execute nothing, they are
stored executed; pages without code neither), ten to a chunk, filling the gaps at the
end.
"""

import ast
import gc
import hashlib
import json
import os
import platform
import re
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path, PurePosixPath

import myst_nb.sphinx_
import nbformat
import psutil
import sphinx.builders
from myst_nb.core.execute.base import ExecutionError
from myst_nb.core.execute.inline import ModifiedNotebookClient, NotebookClientInline
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from sphinx.domains import Domain

from booktools import warm
from booktools.kernels import IOPUB_TIMEOUT, STARTUP_TIMEOUT, WarmKernelManager

#: Extensions that do not declare parallel safety but are safe (see the module docstring).
SAFE = ("sphinx_multitoc_numbering", "sphinx_jupyterbook_latex")


def read_jobs(value):
    """The number of reading processes for the configuration value ``lincls_read_jobs``.

    Examples
    --------
    >>> read_jobs(2), read_jobs("auto") >= 2
    (2, True)
    """
    if value == "auto":  # one per core and one more (see the module docstring)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else os.cpu_count() or 1
        return cores + 1
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"lincls_read_jobs must be a positive integer or 'auto'; got {value!r}")
    return value


def _executes_code(env, docname):
    """Whether reading ``docname`` executes code (a notebook with code, not excluded)."""
    path = PurePosixPath(Path(env.doc2path(docname)).as_posix())
    if any(path.match(pattern) for pattern in env.config.nb_execution_excludepatterns):
        return False  # as myst-nb decides it
    text = Path(path).read_text(encoding="utf-8")
    return "```{code-cell}" in text if path.suffix == ".md" else '"cell_type": "code"' in text


def _merge_nothing(self, docnames, otherdata):
    """ProofDomain.merge_domaindata: its data hold nothing (see the module docstring)."""


#: The thread counts of the BLAS and OpenMP libraries, for the kernels the build starts.
THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def set_jobs(app, config):
    """config-inited: the reading processes, the extensions declared safe, the proof domain,
    one BLAS thread for every kernel."""
    if config.lincls_read_jobs is None:
        return
    for name in THREADS:
        os.environ.setdefault(name, "1")
    app.parallel = max(app.parallel, read_jobs(config.lincls_read_jobs))
    for name in SAFE:
        extension = app.extensions.get(name)
        if extension is not None and extension.parallel_read_safe is None:
            extension.parallel_read_safe = True
            extension.parallel_write_safe = True
    proofs = app.registry.domains.get("prf")
    if proofs is not None and proofs.merge_domaindata is Domain.merge_domaindata:
        proofs.merge_domaindata = _merge_nothing


def order_docs(app, env, docnames):
    """env-before-read-docs: the slowest chapters (``lincls_read_first``) first, then the
    other documents that run code, in their order, then the rest."""
    first = list(env.config.lincls_read_first or ())
    runs = {name: _executes_code(env, name) for name in docnames}
    docnames.sort(key=lambda name: (first.index(name) if name in first else len(first),
                                    not runs[name]))  # stable: keeps the order within each
    _chunks["code"] = sum(runs.values())
    if _chunks["code"] and _cache["folder"] is not None and _cache["context"] is None:
        _cache["context"] = execution_context(_cache["root"])  # once, before the forks
    if _chunks["code"]:
        warm.start(os.environ)  # the kernels' warm process, shared by the reading processes


#: How many of the documents to read run code (order_docs), for read_chunks.
_chunks = {"code": 0}


def read_chunks(arguments, nproc, maxbatch=10):
    """Sphinx's make_chunks for reading: the documents that run code two at a time, so the
    processes take the next pair as they finish (Sphinx's own chunks, 11 documents each
    for this book, left one process with the four cheapest chapters and the others with
    eleven each), and the rest in chunks of up to ``maxbatch``."""
    code = min(_chunks["code"], len(arguments))
    rest = arguments[code:]
    return ([arguments[i:i + 2] for i in range(0, code, 2)]
            + [rest[i:i + maxbatch] for i in range(0, len(rest), maxbatch)])


def _chunked_reads(read_parallel):
    """Wrap Builder._read_parallel: its chunks from read_chunks (writing keeps Sphinx's)."""
    def wrapper(self, docnames, nproc):
        chunker = sphinx.builders.make_chunks
        sphinx.builders.make_chunks = read_chunks
        try:
            return read_parallel(self, docnames, nproc)
        finally:
            sphinx.builders.make_chunks = chunker

    wrapper.__wrapped__ = read_parallel
    return wrapper


#: Environment variables whose values can change a chapter's results (by prefix).
NUMERIC_ENV = ("OPENBLAS_", "GOTO", "OMP_", "MKL_", "KMP_", "BLIS_", "NUMBA_", "NPY_",
               "PYTHONHASHSEED", "MPL")
#: The format of a cache entry; a new one makes every old entry a miss.
CACHE_FORMAT = "1"
#: The folder of the execution cache (None: no cache), set when the configuration is read.
_cache = {"folder": None, "context": None, "root": None}
ROLE = re.compile(r"\{eval\}`([^`]+)`")


def _tree_hashes(root):
    """``{name: sha256}`` of every file under ``root`` (not byte code), named from
    ``root``'s parent."""
    root = Path(root)
    files = [root] if root.is_file() else sorted(
        p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
        and p.suffix not in (".pyc", ".nbi", ".nbc"))
    return {p.relative_to(root.parent).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in files}


def _hash_tree(root, digest):
    """Feed every file under ``root`` (not byte code), names and contents, to ``digest``."""
    for name, sha in _tree_hashes(root).items():
        digest.update(name.encode() + b"\0" + bytes.fromhex(sha))


def _cpu():
    """The CPU's model name and flags (what OpenBLAS and numba choose kernels by)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor()
    keys = ("model name", "flags", "Features", "CPU part")
    return "\n".join(sorted({ln for ln in lines if ln.split(":")[0].strip() in keys}))


def named_requirements(root):
    """The requirements that ``root/requirements.txt`` names (comments and options such as
    ``-e`` aside), or None when there is no such file."""
    try:
        lines = (Path(root) / "requirements.txt").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    specs = [line.split(" #")[0].strip() for line in lines]
    return [Requirement(s) for s in specs if s and not s.startswith(("#", "-"))]


#: The venv's own tools, left out of the key: their version is whatever venv or a test
#: tool's requirement put there (a venv of Python 3.11 has setuptools 65.5.0, pip installs
#: a newer one when a test tool asks for it), and no chapter imports them (a test checks).
INSTALLERS = ("pip", "setuptools")


def book_distributions(root):
    """``{name: version}`` of the installed distributions the book at ``root`` runs on:
    lincls, booktools and what ``root/requirements.txt`` names (options such as ``-e``
    aside), with what they require, transitively, but INSTALLERS; None when there is no
    such file."""
    named = None if root is None else named_requirements(root)
    if named is None:
        return None
    todo = named + [Requirement("lincls"), Requirement("booktools")]
    found, seen = {}, set()
    while todo:
        req = todo.pop()
        name, extras = canonicalize_name(req.name), sorted(req.extras)
        if (name, *extras) in seen or name in INSTALLERS:
            continue
        seen.add((name, *extras))
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:  # not installed: nothing to key
            continue
        found[name] = dist.version
        for spec in dist.requires or ():
            dep = Requirement(spec)
            if dep.marker is None or any(dep.marker.evaluate({"extra": e})
                                         for e in ("", *extras)):
                todo.append(dep)
    return found


def context_parts(root):
    """The part of the key that no chapter sets, as a dict: sources (each file's hash),
    versions, CPU, environment (``root``: the book's folder). A test compares two of them
    when a build that should have reused the cache did not."""
    import booktools
    import lincls

    sources = {}
    for package in (lincls, booktools):
        sources.update(_tree_hashes(Path(package.__file__).parent))
    book = book_distributions(root)
    versions = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()) \
        if book is None else sorted(f"{name}=={version}" for name, version in book.items())
    env = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(NUMERIC_ENV))
    return {"format": CACHE_FORMAT, "sources": sources, "python": sys.version,
            "machine": platform.machine(), "cpu": _cpu(), "versions": versions, "env": env}


def execution_context(root):
    """The hash of :func:`context_parts`."""
    parts = json.dumps(context_parts(root), sort_keys=True)
    return hashlib.sha256(parts.encode()).hexdigest()


def _named_paths(cells, directory):
    """The existing files and folders that code cells name by a relative path (string
    literals), for the key."""
    found = set()
    for cell in cells:
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # IPython magics: no literal found
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and 0 < len(node.value) < 200 and "\n" not in node.value
                    and not Path(node.value).is_absolute()):
                path = directory / node.value
                try:
                    if path.exists():
                        found.add(path)
                except OSError:
                    continue
    return sorted(found)


def cache_key(notebook, path, nb_config, prefix=None):
    """The key of a chapter in the execution cache (see the module docstring); with
    `prefix`, the key of its first `prefix` code cells alone."""
    code = [c for c in notebook.cells if c.cell_type == "code"][:prefix]
    meta = {k: v for k, v in notebook.metadata.items() if k != "source_map"}
    settings = [nb_config.execution_timeout, nb_config.execution_allow_errors,
                nb_config.execution_raise_on_error, nb_config.execution_in_temp,
                nb_config.eval_name_regex]
    if _cache["context"] is None:  # a chapter order_docs did not see run code
        _cache["context"] = execution_context(_cache["root"])
    digest = hashlib.sha256(_cache["context"].encode())
    digest.update(json.dumps([[c.source, c.metadata] for c in code], sort_keys=True).encode())
    digest.update(json.dumps([meta, settings], sort_keys=True, default=str).encode())
    for named in _named_paths(code, path.parent):
        _hash_tree(named, digest)
    return digest.hexdigest()


def read_entry(file, notebook):
    """The cache entry in `file` for `notebook`, following a prefix's pointer (module
    docstring): ``cells`` by the index of `notebook`'s cells, ``evals`` by (code cells
    before, expression). None if the file, or the entry it points at, is missing or
    unreadable, or holds another number of code cells than `notebook`; and for a prefix of
    a run that holds widget state (the state at the run's end: the cells left out may have
    made or changed widgets, and a solution's widget would show in the student edition)."""
    try:
        entry = json.loads(Path(file).read_text(encoding="utf-8"))
        if "prefix_of" in entry:
            prefix = entry["code_cells"]
            entry = json.loads(Path(file).with_name(Path(entry["prefix_of"]).name)
                               .read_text(encoding="utf-8"))
            if entry["metadata"].get("widgets"):
                return None
        else:
            prefix = len(entry["cells"])
    except (OSError, ValueError, KeyError, AttributeError):
        return None
    stored = [entry["cells"][i] for i in sorted(entry["cells"], key=int)][:prefix]
    code = [i for i, c in enumerate(notebook.cells) if c.cell_type == "code"]
    if len(stored) != len(code):
        return None
    entry["cells"] = {str(i): cell for i, cell in zip(code, stored)}
    entry["evals"] = {(ran, expr): out for ran, expr, out in entry["evals"]}
    return entry


def _eval_plan(cells):
    """The {eval} roles of the markdown cells in order, each as (the number of code cells
    before its cell, expression): when a markdown cell is rendered, the code before it has
    run (a cell tagged remove-cell too)."""
    plan, ran = [], 0
    for cell in cells:
        if cell.cell_type == "code":
            ran += 1
        elif cell.cell_type == "markdown":
            plan += [(ran, expr) for expr in ROLE.findall(cell.source)]
    return plan


class CachedInlineClient(NotebookClientInline):
    """myst-nb's inline execution, with the execution cache (see the module docstring)."""

    def start_client(self):
        self._entry, self._evals, self._save = None, {}, self.path is not None
        self._plan, self._next, self._last_requested = _eval_plan(self.notebook.cells), 0, -1
        if self._save:
            self._file = Path(_cache["folder"]) / (
                cache_key(self.notebook, self.path, self.nb_config) + ".json")
            self._entry = self._load()
        if self._entry is None:
            if self._save:  # the prefixes' keys, from the cells as they are before the run
                n = sum(c.cell_type == "code" for c in self.notebook.cells)
                self._prefixes = [self._file.with_name(cache_key(
                    self.notebook, self.path, self.nb_config, prefix=k) + ".json")
                    for k in range(1, n)]
            return super().start_client()
        self.logger.info(f"Reusing the outputs of {self._file.name[:12]} (execution cache)")
        for index, cell in self._entry["cells"].items():
            self.notebook.cells[int(index)].update(nbformat.from_dict(cell))
        self.notebook.metadata.update(nbformat.from_dict(self._entry["metadata"]))

    def _load(self):
        """The cache entry, if it holds every {eval} of the plan, else None."""
        entry = read_entry(self._file, self.notebook)
        return entry if entry is not None and set(self._plan) <= set(entry["evals"]) else None

    def _place(self, name):
        """The next place of the plan that evaluates ``name``, or None."""
        for k in range(self._next, len(self._plan)):
            if self._plan[k][1] == name:
                self._next = k + 1
                return self._plan[k]
        return None

    def code_cell_outputs(self, cell_index):
        if self._entry is None:
            return super().code_cell_outputs(cell_index)
        self._last_requested = max(self._last_requested, cell_index)
        cell = self.notebook.cells[cell_index]
        return cell.get("execution_count"), cell.get("outputs", [])

    def eval_variable(self, name):
        place = self._place(name)
        if self._entry is None:
            outputs = super().eval_variable(name)
            if place is not None:
                self._evals.setdefault(place, outputs)
            return outputs
        if place in self._entry["evals"]:
            return nbformat.from_dict(self._entry["evals"][place])
        # an {eval} the plan missed: run the chapter up to it after all, and store nothing
        self.logger.info(f"execution cache: {name} not stored; executing")
        self._entry, self._save = None, False
        super().start_client()
        code = [i for i, c in enumerate(self.notebook.cells) if c.cell_type == "code"]
        last = code[place[0] - 1] if place and place[0] else self._last_requested
        if last >= 0:
            super().code_cell_outputs(last)
        return super().eval_variable(name)

    def finalise_client(self):
        if self._entry is None:
            super().finalise_client()

    def close_client(self, exc_type, exc_val, exc_tb):
        if self._entry is not None:
            self.exec_metadata = {"mtime": self._entry["mtime"], "runtime": self._entry["runtime"],
                                  "method": "cache", "succeeded": True, "error": None,
                                  "traceback": None}
            return
        super().close_client(exc_type, exc_val, exc_tb)
        if self._save and exc_type is None and self.exec_metadata["succeeded"]:
            self._store()

    def _store(self):
        """Write the entry, and a pointer to it under each prefix's key."""
        cells = {str(i): {"execution_count": c.get("execution_count"), "outputs": c.outputs}
                 for i, c in enumerate(self.notebook.cells) if c.cell_type == "code"}
        meta = {k: self.notebook.metadata[k] for k in ("language_info", "widgets")
                if k in self.notebook.metadata}
        entry = {"path": str(self.path), "mtime": self.exec_metadata["mtime"],
                 "runtime": self.exec_metadata["runtime"], "cells": cells, "metadata": meta,
                 "evals": [[ran, expr, out] for (ran, expr), out in self._evals.items()]}
        _write(self._file, entry)
        prefixes = [] if meta.get("widgets") else self._prefixes  # see read_entry
        for k, prefix in enumerate(prefixes, 1):
            if not prefix.exists():  # a stored run stays
                _write(prefix, {"prefix_of": self._file.name, "code_cells": k})


def _write(file, entry):
    """Write a cache file atomically (parallel readers, an interrupted build)."""
    file.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=file.parent, suffix=".tmp", delete=False,
                                     encoding="utf-8") as out:
        json.dump(entry, out)
    os.replace(out.name, file)


def _with_cache(create_client):
    """Wrap myst-nb's create_client: inline execution goes through the cache, if any."""
    def wrapper(*args, **kwargs):
        client = create_client(*args, **kwargs)
        if _cache["folder"] is not None and type(client) is NotebookClientInline:
            client.__class__ = CachedInlineClient
        return client

    wrapper.__wrapped__ = create_client
    return wrapper


def set_cache(app, config):
    """config-inited: the cache's folder (order_docs computes the key's part that no
    chapter sets, when a chapter is to be read)."""
    folder = config.lincls_execution_cache
    _cache["folder"] = None if not folder else Path(app.confdir, folder).resolve()
    _cache["context"], _cache["root"] = None, app.confdir


def freeze_at_the_end(app, exception):
    """build-finished: the build's objects out of the final garbage collection's way."""
    gc.freeze()


def _stop_at_once(close_client):
    """Wrap myst-nb's NotebookClientInline.close_client: kill the kernel, do not wait; then
    log the kernel's CPU time and the chapter's longest step (see ``_timed``)."""
    def wrapper(self, *exc_info):
        if getattr(self, "_client", None) is None:  # None if the kernel never started
            return close_client(self, *exc_info)
        self._client.shutdown_kernel = "immediate"
        cpu = _kernel_cpu(self._client)
        forked = isinstance(_kernel_process(self._client), warm.ForkedKernel)
        warm_start = " (a warm start)" if forked else ""
        start = time.perf_counter()
        try:
            return close_client(self, *exc_info)
        finally:
            seconds, step = getattr(self, "_longest", (0.0, "none"))
            self.logger.info(f"kernel{warm_start} "
                             + ("" if cpu is None else f"CPU time {cpu:.1f} s; ")
                             + f"waited {getattr(self, '_waited', 0.0):.1f} s for the kernel, "
                             f"longest for {step} ({seconds:.1f} s); "
                             f"stopping it: {time.perf_counter() - start:.1f} s")

    wrapper.__wrapped__ = close_client
    return wrapper


def _timed(method, step):
    """Wrap a NotebookClientInline method: add up a chapter's calls and keep the longest,
    named by ``step(*args)``, for the log line of ``_stop_at_once``: where a run waited,
    for the kernel's start, a cell, an ``{eval}``, the kernel's end, or between them (the
    waits then add up to far less than myst-nb's "Executed notebook in" time). Now and
    then a chapter took 300 s instead of 4 with 2-4 s of kernel CPU time, "longest for the
    code cells up to notebook cell N (300.0 s)", and the build went on: a reply whose
    wake-up pyzmq's poll had missed, found when the cell's timeout ended; the build's
    clients now look again every second (:class:`booktools.kernels.PromptChannel`)."""
    def wrapper(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            seconds = time.perf_counter() - start
            self._waited = getattr(self, "_waited", 0.0) + seconds
            if seconds >= getattr(self, "_longest", (0.0,))[0]:
                self._longest = (seconds, step(*args))

    wrapper.__wrapped__ = method
    return wrapper


def _kernel_process(client):
    """The Popen (or :class:`booktools.warm.ForkedKernel`) of a client's kernel, or None."""
    return getattr(getattr(client.km, "provisioner", None), "process", None)


def _kernel_cpu(client):
    """The CPU seconds of a kernel and of the processes it started (joblib's workers), or
    None; what has exited counts only if its parent waited for it."""
    process = _kernel_process(client)
    try:
        kernel = psutil.Process(process.pid)
        tree = [kernel, *kernel.children(recursive=True)]
    except (AttributeError, psutil.Error):
        return None
    seconds = 0.0
    for proc in tree:
        try:
            t = proc.cpu_times()
        except psutil.Error:
            continue
        seconds += t.user + t.system + t.children_user + t.children_system
    return seconds


def _name_the_cell(code_cell_outputs):
    """Wrap NotebookClientInline.code_cell_outputs: the failing cell in the error message."""
    def wrapper(self, *args, **kwargs):
        try:
            return code_cell_outputs(self, *args, **kwargs)
        except ExecutionError as exc:
            cause = exc.__cause__
            if cause is None:
                raise
            raise ExecutionError(f"{exc}\n{cause}") from cause

    wrapper.__wrapped__ = code_cell_outputs
    return wrapper


def _patient_start(init):
    """Wrap myst-nb's ModifiedNotebookClient.__init__: the waits of booktools.kernels
    (STARTUP_TIMEOUT, or the cell timeout when that is longer; IOPUB_TIMEOUT, raising), and
    the kernel on Unix sockets, forked from a warm process."""
    def wrapper(self, *args, **kwargs):
        kwargs.setdefault("startup_timeout", max(STARTUP_TIMEOUT, kwargs.get("timeout") or 0))
        kwargs.setdefault("iopub_timeout", IOPUB_TIMEOUT)
        kwargs.setdefault("raise_on_iopub_timeout", True)
        kwargs.setdefault("kernel_manager_class", WarmKernelManager)
        init(self, *args, **kwargs)
    wrapper.__wrapped__ = init
    return wrapper


def setup(app):
    if not hasattr(ModifiedNotebookClient.__init__, "__wrapped__"):
        ModifiedNotebookClient.__init__ = _patient_start(ModifiedNotebookClient.__init__)
    if not hasattr(NotebookClientInline.close_client, "__wrapped__"):
        NotebookClientInline.close_client = _stop_at_once(NotebookClientInline.close_client)
        NotebookClientInline.start_client = _timed(NotebookClientInline.start_client,
                                                   lambda: "the kernel's start")
        NotebookClientInline.code_cell_outputs = _timed(
            _name_the_cell(NotebookClientInline.code_cell_outputs),
            lambda index: f"the code cells up to notebook cell {index}")
        NotebookClientInline.eval_variable = _timed(NotebookClientInline.eval_variable,
                                                    lambda name: f"{{eval}} {name}")
    # default None (serial, as without the extension); not an int: Sphinx would convert the
    # override "auto" from _config.yml to int and reject it
    if not hasattr(myst_nb.sphinx_.create_client, "__wrapped__"):
        myst_nb.sphinx_.create_client = _with_cache(myst_nb.sphinx_.create_client)
    if not hasattr(sphinx.builders.Builder._read_parallel, "__wrapped__"):
        sphinx.builders.Builder._read_parallel = _chunked_reads(
            sphinx.builders.Builder._read_parallel)
    app.add_config_value("lincls_read_jobs", None, "", (int, str))
    app.add_config_value("lincls_read_first", [], "", (list, tuple))
    # a folder, relative to the book (None: no cache); "" as it does not change a page
    app.add_config_value("lincls_execution_cache", None, "", (str,))
    app.connect("config-inited", set_jobs)
    app.connect("config-inited", set_cache)  # after set_jobs: its thread counts are keyed
    app.connect("env-before-read-docs", order_docs)
    app.connect("build-finished", freeze_at_the_end)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
