"""How the build executes the chapters: on every core, each kernel stopped at once.

A Sphinx extension (listed in ``_config.yml``), not part of the algorithms. With myst-nb's
``inline`` execution a chapter runs while Sphinx reads it, and running the chapters is
most of the time of a build.

**Stopping a kernel.** Once a chapter has run, myst-nb asks its kernel to shut down and
waits until the process has exited: one to three seconds of waiting per chapter, a good
part of a build. Nothing runs in a kernel after its last cell, so here it is stopped at
once (nbclient's ``shutdown_kernel = "immediate"``: the kernel's process group is
killed), as ``jupyter nbconvert --execute`` can be told to do.

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
build gives a kernel as long to start as a cell to run (``execute.timeout``).

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

Sphinx splits the documents, in the order they are read, into a few contiguous chunks and
hands each to a process. The homework notebooks execute nothing (they are stored executed)
and neither do pages without code, so they are read last: the chunks of the chapters that
run code start first, and the cheap ones fill the gaps at the end.
"""

import gc
import os
from pathlib import Path, PurePosixPath

import psutil
from myst_nb.core.execute.base import ExecutionError
from myst_nb.core.execute.inline import ModifiedNotebookClient, NotebookClientInline
from sphinx.domains import Domain

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
    """env-before-read-docs: documents that run code first, in their order, then the rest."""
    runs = {name: _executes_code(env, name) for name in docnames}
    docnames.sort(key=lambda name: not runs[name])  # stable: keeps the order within each


def freeze_at_the_end(app, exception):
    """build-finished: the build's objects out of the final garbage collection's way."""
    gc.freeze()


def _stop_at_once(close_client):
    """Wrap myst-nb's NotebookClientInline.close_client: kill the kernel, do not wait."""
    def wrapper(self, *exc_info):
        if getattr(self, "_client", None) is not None:  # None if the kernel never started
            self._client.shutdown_kernel = "immediate"
            cpu = _kernel_cpu(self._client)
            if cpu is not None:
                self.logger.info(f"kernel CPU time {cpu:.1f} s")
        return close_client(self, *exc_info)

    wrapper.__wrapped__ = close_client
    return wrapper


def _kernel_cpu(client):
    """The CPU seconds of a kernel and of the processes it started (joblib's workers), or
    None; what has exited counts only if its parent waited for it."""
    process = getattr(getattr(client.km, "provisioner", None), "process", None)
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
    """Wrap myst-nb's ModifiedNotebookClient.__init__: startup_timeout as the cell timeout."""
    def wrapper(self, *args, **kwargs):
        kwargs.setdefault("startup_timeout", kwargs.get("timeout") or 300)
        init(self, *args, **kwargs)
    wrapper.__wrapped__ = init
    return wrapper


def setup(app):
    if not hasattr(ModifiedNotebookClient.__init__, "__wrapped__"):
        ModifiedNotebookClient.__init__ = _patient_start(ModifiedNotebookClient.__init__)
    if not hasattr(NotebookClientInline.close_client, "__wrapped__"):
        NotebookClientInline.close_client = _stop_at_once(NotebookClientInline.close_client)
        NotebookClientInline.code_cell_outputs = _name_the_cell(
            NotebookClientInline.code_cell_outputs)
    # default None (serial, as without the extension); not an int: Sphinx would convert the
    # override "auto" from _config.yml to int and reject it
    app.add_config_value("lincls_read_jobs", None, "", (int, str))
    app.connect("config-inited", set_jobs)
    app.connect("env-before-read-docs", order_docs)
    app.connect("build-finished", freeze_at_the_end)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
