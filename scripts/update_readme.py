"""Regenerate the filter table in README.md from the registry.

Usage: ``python scripts/update_readme.py`` (rewrite) or ``--check`` (exit 1 if stale).
"""

from __future__ import annotations

import sys
from pathlib import Path

from cvfilters.docs import with_filter_table

README = Path(__file__).resolve().parent.parent / "README.md"


def main(argv: list[str]) -> int:
    current = README.read_text()
    fresh = with_filter_table(current)
    if "--check" in argv:
        if fresh != current:
            print("README.md filter table is stale: run python scripts/update_readme.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
