"""Resource limits: refuse an image whose processing cannot fit in memory, before it starts."""

from __future__ import annotations

import os
from pathlib import Path

from cvfilters.core.errors import ResourceLimitError

# Peak working set of a pipeline step, in float32 copies of the image beyond its input
# and output: the premultiplied-alpha path and float intermediates (Sobel, masks) hold
# about three at once.
FLOAT_COPIES = 3


def estimate_bytes(height: int, width: int, channels: int, itemsize: int) -> int:
    """Bytes a pipeline needs at its peak for an image of this size and type."""
    pixels = height * width * channels
    return pixels * (2 * itemsize + FLOAT_COPIES * 4)


def available_bytes() -> int | None:
    """Memory the system can give without swapping (``MemAvailable``), or None if unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(path: str | os.PathLike[str], height: int, width: int, channels: int, itemsize: int,
                 workers: int = 1, *, frames: int = 1) -> None:
    """Raise :class:`ResourceLimitError` when ``workers`` such images cannot fit in available memory
    (``frames`` decoded frames held at once, one of them in the working set: animations stream)."""
    available = available_bytes()
    needed = estimate_bytes(height, width, channels, itemsize) + (frames - 1) * height * width * channels * itemsize
    if available is not None and needed * workers > available:
        many = f", {frames} frames" if frames > 1 else ""
        raise ResourceLimitError(path, f"needs about {needed / 2**30:.1f} GiB to filter ({width}x{height}, "
                                       f"{channels} channels{many}) x {workers} worker(s), but only "
                                       f"{available / 2**30:.1f} GiB is available; use fewer --jobs")
