"""``python -m flows`` is the ``evaflow`` command."""

import sys

from flows.cli import main

# The guard matters: Dask's local worker processes re-import the main module.
if __name__ == "__main__":
    sys.exit(main())
