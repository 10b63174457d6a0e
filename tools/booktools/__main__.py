"""``python -m booktools COMMAND``: the teachers' command line, :mod:`booktools.homework.cli`."""

import sys

from booktools.homework.cli import main

sys.exit(main())
