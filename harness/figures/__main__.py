"""Entry point of ``python -m harness.figures``."""

import sys

from harness.figures.cli import main

sys.exit(main())
