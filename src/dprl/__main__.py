"""``python -m dprl``: the command line (what the workflow's rules run, with the
interpreter that runs Snakemake, so no activated environment or ``PATH`` is needed)."""

import sys

from dprl.cli import main

sys.exit(main())
