"""``python -m oneshader``: the ``oneshader`` command, for environments without its script."""

import sys

from oneshader.cli import main

sys.exit(main())
