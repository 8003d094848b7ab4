"""Regenerate cvfilters/fx.pyi (static types of the cvfilters.fx filter functions) from the registry.

Usage: ``python scripts/update_fx_stub.py`` (rewrite) or ``--check`` (exit 1 if stale).
"""

from __future__ import annotations

import sys
from pathlib import Path

from generated import rewrite_or_check  # scripts/ is on sys.path when a script runs

from cvfilters.viz.describe import fx_stub

STUB = Path(__file__).resolve().parent.parent / "cvfilters" / "fx.pyi"


def main(argv: list[str]) -> int:
    return rewrite_or_check(STUB, fx_stub(), argv, "update_fx_stub.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
