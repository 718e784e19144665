"""Entry point of ``python -m paper.figures``."""

import sys

from paper.figures.cli import main

sys.exit(main())
