"""booktools: the machinery of the textbook *Linear Classification*, beside lincls.

lincls is what the chapters teach; booktools is what builds, releases and grades the book.
It imports lincls (the homework's self-check registry), never the other way round.

- :mod:`booktools.homework` — the teachers' tools: validate and release the homework,
  course and per-student variants, grading with nbgrader, the student edition, the
  teachers' table, publishing (``python -m booktools COMMAND``; chapter "For teachers");
- :mod:`booktools.sphinxext` — the Sphinx extensions of the website, listed in
  ``_config.yml``, and the PDF printer;
- :mod:`booktools.kernels` — the kernels the build, the tools and the tests start (on Unix
  sockets), and :mod:`booktools.warm`, which forks the build's from a process that has
  imported what the chapters import.
"""

__version__ = "2026.1"  # the book's edition, as lincls.__version__
