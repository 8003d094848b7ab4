"""One rule for the scripts that regenerate a checked-in file: rewrite it, or with ``--check`` report it stale."""

from __future__ import annotations

import sys
from pathlib import Path


def rewrite_or_check(path: Path, fresh: str, argv: list[str], script: str) -> int:
    """Write ``fresh`` to ``path``; with ``--check`` in ``argv`` return 1 (and say so) if it differs instead."""
    if "--check" in argv:
        if not path.exists() or path.read_text() != fresh:
            print(f"{path.name} is stale: run python scripts/{script}", file=sys.stderr)
            return 1
        return 0
    path.write_text(fresh)
    return 0
