"""``python -m tokenforge.cli``: the ``tokenforge`` command."""

import sys

from . import main

sys.exit(main())
