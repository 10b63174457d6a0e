"""``python -m booktools``: see :mod:`booktools.homework.cli`."""

import sys

from .cli import main

sys.exit(main())
