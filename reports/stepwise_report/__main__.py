"""Entry point for `python -m stepwise_report` (what ./report runs)."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
