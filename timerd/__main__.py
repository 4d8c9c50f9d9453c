"""`python -m timerd` is the `timerd` command."""

import sys

from timerd.cli import main

sys.exit(main(None))
