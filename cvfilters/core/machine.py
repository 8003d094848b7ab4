"""What this process may use of the machine."""

from __future__ import annotations

import os


def cores() -> int:
    """CPU cores this process may run on (its affinity on Linux, else the machine's count; at least 1)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1
