"""The memory budget a run plans its tiles and workers against.

By default it is half of what this process can still use: the smaller of the system's
``MemAvailable`` and what the process's cgroup leaves (cgroup v2 ``memory.max`` less
``memory.current``, v1 ``memory.limit_in_bytes`` less ``memory.usage_in_bytes``), so a
container limit counts, not only the host's free memory. ``--memory`` (``512M``, ``2G``,
``1.5GiB``, plain bytes) or ``memory=`` sets it.
"""

from __future__ import annotations

import re
from pathlib import Path

from cvfilters.core.errors import UsageError
from cvfilters.run.limits import available_bytes

DEFAULT_SHARE = 0.5  # of the memory this process can use; the rest is left to the system and other work
MIN_BUDGET = 64 * 2**20
UNLIMITED_V1 = 2**60  # cgroup v1 writes a page-rounded 2^63 - 1 for "no limit"
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)
CGROUP_ROOT = Path("/sys/fs/cgroup")


def parse_size(text: str | int, *, what: str = "--memory") -> int:
    """Bytes of a size written ``512M``, ``2G``, ``1.5GiB``, ``300MB`` or plain bytes (units are powers of 1024).

    Raises
    ------
    UsageError
        Not a size, or under :data:`MIN_BUDGET`.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _SIZE.fullmatch(str(text))
        if match is None:
            raise UsageError(f"{what} {text!r} is not a size (examples: 512M, 2G, 1.5GiB, 1000000000)")
        value = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if value < MIN_BUDGET:
        raise UsageError(f"{what} {text!r} is below the smallest budget, {MIN_BUDGET // 2**20}M")
    return value


def _read_number(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_paths(proc_cgroup: Path = Path("/proc/self/cgroup")) -> tuple[str | None, str | None]:
    """This process's cgroup v2 path and v1 memory-controller path (either may be None)."""
    v2 = v1 = None
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None, None
    for line in lines:
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and controllers == "":
            v2 = path
        elif "memory" in controllers.split(","):
            v1 = path
    return v2, v1


def cgroup_room(root: Path = CGROUP_ROOT, proc_cgroup: Path = Path("/proc/self/cgroup")) -> int | None:
    """Bytes this process's cgroup may still allocate (its limit less its usage), or None without a limit.

    Looks at the process's own cgroup and every parent up to the root (a limit on a parent
    binds too) and returns the tightest room.
    """
    v2, v1 = _cgroup_paths(proc_cgroup)
    rooms: list[int] = []
    for path, base, limit_name, usage_name in ((v2, root, "memory.max", "memory.current"),
                                               (v1, root / "memory", "memory.limit_in_bytes",
                                                "memory.usage_in_bytes")):
        if path is None:
            continue
        folder = base / path.lstrip("/")
        while True:
            limit = _read_number(folder / limit_name)  # "max" (v2, unlimited) is not a number
            if limit is not None and limit < UNLIMITED_V1:
                rooms.append(max(0, limit - (_read_number(folder / usage_name) or 0)))
            if folder == base or base not in folder.parents:
                break
            folder = folder.parent
    return min(rooms) if rooms else None


def machine_bytes() -> int | None:
    """Bytes this process can use now: the smaller of ``MemAvailable`` and its cgroup's room (None if unknown)."""
    known = [value for value in (available_bytes(), cgroup_room()) if value is not None]
    return min(known) if known else None


def resolve(memory: str | int | None = None) -> int:
    """The budget in bytes: ``memory`` (a size, see :func:`parse_size`), else :data:`DEFAULT_SHARE` of
    :func:`machine_bytes` (at least :data:`MIN_BUDGET`; 1 GiB where nothing is known)."""
    if memory is not None:
        return parse_size(memory)
    room = machine_bytes()
    if room is None:
        return 2**30
    return max(MIN_BUDGET, int(room * DEFAULT_SHARE))


def describe(budget: int) -> str:
    """A budget for people: ``1.5 GiB``, ``512 MiB``."""
    return f"{budget / 2**30:.1f} GiB" if budget >= 2**30 else f"{budget / 2**20:.0f} MiB"


def share(budget: int, workers: int) -> int:
    """Each of ``workers`` workers' part of ``budget`` (batch workers each run one image)."""
    return max(MIN_BUDGET, budget // max(1, workers))
