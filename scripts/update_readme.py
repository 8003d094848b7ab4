"""Regenerate the filter table in README.md from the registry.

Usage: ``python scripts/update_readme.py`` (rewrite) or ``--check`` (exit 1 if stale).
"""

from __future__ import annotations

import sys
from pathlib import Path

from generated import rewrite_or_check  # scripts/ is on sys.path when a script runs

from cvfilters.viz.describe import with_filter_table

README = Path(__file__).resolve().parent.parent / "README.md"


def main(argv: list[str]) -> int:
    return rewrite_or_check(README, with_filter_table(README.read_text()), argv, "update_readme.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
