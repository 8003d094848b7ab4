"""``python -m cvfilters`` runs the command line."""

import sys

from cvfilters.cli import main

sys.exit(main())
