"""``python -m flows`` is the ``evaflow`` command."""

from flows.cli import main

main()
