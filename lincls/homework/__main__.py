"""``python -m lincls.homework``: see :mod:`lincls.homework.cli`."""

import sys

from .cli import main

sys.exit(main())
