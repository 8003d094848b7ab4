"""Temporary files of atomic writes that a killed run left behind, and removing them.

An atomic write goes to a temporary file beside its target, named by
:func:`cvfilters.core.atomic.temporary_name`, and is renamed onto it. A writer killed in
between cannot clean up; the next run into that folder removes such files once they are a
minute old and no live process holds them open (read from ``/proc/*/fd`` on Linux), or, where
open files cannot be listed, once they are an hour old. Only names that
:func:`~cvfilters.core.atomic.is_temporary_name` recognises are touched.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from cvfilters.core.atomic import is_temporary_name

STALE_AGE_SECONDS = 60.0  # younger files may belong to a write between two steps (a video being muxed)
UNLISTED_AGE_SECONDS = 3600.0


def _open_files() -> set[tuple[int, int]] | None:
    """(device, inode) of every file a process holds open, or None where that cannot be listed."""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return None
    held: set[tuple[int, int]] = set()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (entry / "fd").iterdir():
                with contextlib.suppress(OSError):
                    info = fd.stat()
                    held.add((info.st_dev, info.st_ino))
    return held


def remove_stale(directory: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files of interrupted writes in ``directory``; returns those removed."""
    try:
        candidates = [p for p in Path(directory).iterdir() if is_temporary_name(p.name) and p.is_file()]
    except OSError:
        return []
    if not candidates:
        return []
    held = _open_files()
    removed = []
    now = time.time()
    for path in candidates:
        try:
            info = path.stat()
            age = now - info.st_mtime
            if (held is not None and age > STALE_AGE_SECONDS and (info.st_dev, info.st_ino) not in held) or \
                    (held is None and age > UNLISTED_AGE_SECONDS):
                path.unlink()
                removed.append(path)
        except OSError:
            continue
    return removed


ORPHAN_WAIT_SECONDS = 1.0  # a dying writer's descriptors close in no set order: its pipe may close first


def remove_orphans_of(target: str | os.PathLike[str], wait: float = ORPHAN_WAIT_SECONDS) -> list[Path]:
    """Remove the temporary files of writes to ``target`` that no live process holds open, whatever their age.

    For a writer known to be dead (a killed worker): its temporary file is removed at once
    instead of by the next run into the folder. A file still held is looked at again for up
    to ``wait`` seconds: the pool learns of a worker's death when the worker's pipe closes,
    which can come before the kernel has closed the worker's other files.
    """
    target = Path(target)
    try:
        candidates = [p for p in target.parent.iterdir()
                      if is_temporary_name(p.name) and p.name.startswith(f".{target.stem}.") and p.is_file()]
    except OSError:
        return []
    removed: list[Path] = []
    deadline = time.monotonic() + wait
    while candidates:
        held = _open_files()
        if held is None:
            return removed
        still_held = []
        for path in candidates:
            with contextlib.suppress(OSError):
                info = path.stat()
                if (info.st_dev, info.st_ino) in held:
                    still_held.append(path)
                else:
                    path.unlink()
                    removed.append(path)
        if not still_held or time.monotonic() >= deadline:
            return removed
        candidates = still_held
        time.sleep(0.02)
    return removed
