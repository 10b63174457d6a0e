"""Sphinx extensions of the book's website; listed in ``_config.yml``, not used by lincls.

- :mod:`.site` fixes console errors of the theme's and the widgets' pages;
- :mod:`.homework_table` adds the teachers' chapter's ``{homework-table}`` directive;
- :mod:`.pdf` links the book's PDF from every page, and prints the PDF editions
  (``make pdf``, ``make student-pdf``);
- :mod:`.binder` keeps the notebooks' math macros (read by JupyterLab) in step with
  ``_config.yml``, and runs every cell above a markdown cell before rendering it;
- :mod:`.execution` runs the chapters side by side (a reading process per core and one
  more, one BLAS thread per kernel), stops each kernel as soon as its chapter has run, and names the
  failing cell when a chapter raises;
- :mod:`.edition` puts the edition and the licenses in every page's footer;
- :mod:`.notebooks` offers every chapter as a notebook (``.ipynb``) in its download menu,
  whose first cell installs lincls where it is missing.

They import Sphinx and docutils, the build-time dependencies of the ``book`` extra
(``pip install booktools[book]``).
"""
