"""Atomic file writes: a temporary file beside the target, fsync, rename, fsync the folder.

One home for the durability rule every writer follows (images, video, plots,
pipeline files): readers see the old file or the new one, never a partial one, and
after a power loss the rename itself has reached the disk. A batch of many files may
leave the folder's fsync to its end (``sync_directory=False``, then one
:func:`fsync_directory` per folder): each file's data still reaches the disk before its
name does, so a power loss in the middle can lose a rename (the old file or none is
there), never leave a partial file under the final name. A temporary file is hidden
and named ``.NAME.<16 hex>.tmp`` (``.STEM.<16 hex>.tmp.EXT`` where an encoder chooses the
container by extension), so no batch takes it as an input; it is removed on any
failure (a SIGKILL can leave it behind: :mod:`cvfilters.core.leftovers` cleans up).

Errors are plain :class:`OSError`; callers turn them into their own one-line messages.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: atomic imports nothing heavy (core.types imports numpy)
    from cvfilters.core.types import StrPath

_TEMPORARY = re.compile(r"\..+\.[0-9a-f]{16}\.tmp(?:\.[A-Za-z0-9]{1,5})?")  # whole name: fullmatch


def temporary_name(target: Path, *, keep_suffix: bool = False) -> Path:
    """A unique hidden name beside ``target``: ``.NAME.<16 hex>.tmp``, or with ``keep_suffix``
    ``.STEM.<16 hex>.tmp.EXT`` (for writers that choose the format by extension: videos and
    their audio remux).

    The one temporary-name rule: :func:`is_temporary_name` recognises exactly these names, and
    :mod:`cvfilters.core.leftovers` removes stale files only of these names.
    """
    if keep_suffix:
        return target.with_name(f".{target.stem[:100]}.{uuid.uuid4().hex[:16]}.tmp{target.suffix}")
    return target.with_name(f".{target.name[:100]}.{uuid.uuid4().hex[:16]}.tmp")


def is_temporary_name(name: str) -> bool:
    """Whether ``name`` is one :func:`temporary_name` makes (hidden, 16 lower-case hex digits, ``.tmp``)."""
    return _TEMPORARY.fullmatch(name) is not None  # `$` let a trailing newline through


def write_bytes(path: StrPath, data: bytes | memoryview | bytearray | object, *,
                sync_directory: bool = True) -> None:
    """Write ``data`` (bytes or any buffer, e.g. a uint8 array) to ``path`` atomically and durably.

    ``sync_directory=False`` leaves the folder's fsync (which makes the rename durable) to
    the caller, who does it once for many files.

    The temporary file is created with mode 0o666 less the umask (``mkstemp`` would
    leave 0o600) and exclusively, so two writers never share one. On POSIX it is renamed
    while still held open, so a concurrent run never takes it for a leftover.
    """
    target, existing = _replaced(Path(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_name(target)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    created = True
    try:
        with open(descriptor, "wb") as file:
            file.write(data)  # type: ignore[arg-type]
            file.flush()
            _keep_mode_and_owner(file.fileno(), existing)
            os.fsync(file.fileno())
            if os.name == "posix":
                os.replace(temporary, target)
                created = False
        if created:
            os.replace(temporary, target)
            created = False
        if sync_directory:
            fsync_directory(target.parent)
    finally:
        if created:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def write_text(path: StrPath, text: str) -> None:
    """:func:`write_bytes` of ``text`` encoded as UTF-8."""
    write_bytes(path, text.encode("utf-8"))


@contextlib.contextmanager
def replacing(path: StrPath, *, keep_suffix: bool = False) -> Iterator[Path]:
    """A temporary path for a writer that opens files by name (``cv2.VideoWriter``, ffmpeg).

    On a normal exit the file written there is fsynced, renamed onto ``path`` and the
    folder fsynced; on an exception (or if nothing was written) it is removed and
    ``path`` is left as it was.
    """
    target, existing = _replaced(Path(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_name(target, keep_suffix=keep_suffix)
    try:
        yield temporary
        if existing is not None:
            descriptor = os.open(temporary, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            try:
                _keep_mode_and_owner(descriptor, existing)
            finally:
                os.close(descriptor)
        fsync_file(temporary)
        os.replace(temporary, target)
        fsync_directory(target.parent)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _replaced(target: Path) -> tuple[Path, os.stat_result | None]:
    """The file a write to ``target`` replaces, and its status (None: a new file).

    As ``cp`` does, a symbolic link is written through: the file it points to is replaced and
    the link stays (refusing would break links users make on purpose, such as a ``latest.png``
    beside dated files; replacing the link itself would silently unlink it from its file).
    """
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    try:
        return target, os.stat(target)
    except OSError:
        return target, None


def _keep_mode_and_owner(descriptor: int, existing: os.stat_result | None) -> None:
    """Give the new file the replaced file's permission bits and, where allowed, its owner (as ``cp``)."""
    if existing is None or not hasattr(os, "fchmod"):
        return
    os.fchmod(descriptor, stat.S_IMODE(existing.st_mode))
    with contextlib.suppress(OSError):  # only root may give a file away; cp keeps the mode then too
        os.fchown(descriptor, existing.st_uid, existing.st_gid)


def fsync_file(path: StrPath) -> None:
    """Flush a closed file's data to the disk."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def fsync_directory(directory: StrPath) -> None:
    """Make a rename in ``directory`` durable (a no-op where folders cannot be opened, as on Windows)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
