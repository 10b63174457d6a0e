"""Sphinx extensions of the book's website; listed in ``_config.yml``, not used by lincls.

- :mod:`.site` fixes console errors of the theme's and the widgets' pages;
- :mod:`.homework_table` adds the teachers' chapter's ``{homework-table}`` and
  ``{self-check-table}`` directives;
- :mod:`.pdf` links the book's PDF from every page, and prints the PDF editions
  (``make pdf``, ``make student-pdf``).

They import Sphinx and docutils, the build-time dependencies of the ``book`` extra
(``pip install lincls[book]``).
"""
