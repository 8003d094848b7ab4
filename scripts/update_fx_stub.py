"""Regenerate cvfilters/fx.pyi (static types of the cvfilters.fx filter functions) from the registry.

Usage: ``python scripts/update_fx_stub.py`` (rewrite) or ``--check`` (exit 1 if stale).
"""

from __future__ import annotations

import sys
from pathlib import Path

from cvfilters.docs import fx_stub

STUB = Path(__file__).resolve().parent.parent / "cvfilters" / "fx.pyi"


def main(argv: list[str]) -> int:
    fresh = fx_stub()
    if "--check" in argv:
        if not STUB.exists() or STUB.read_text() != fresh:
            print("cvfilters/fx.pyi is stale: run python scripts/update_fx_stub.py", file=sys.stderr)
            return 1
        return 0
    STUB.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
