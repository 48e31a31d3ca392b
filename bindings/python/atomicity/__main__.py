"""``python -m atomicity run script.py`` / ``python -m atomicity check TRACE`` (see _cli)."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
