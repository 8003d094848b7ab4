"""Reading the files a request names: confined, regular, bounded; and names shown safely.

Every file cvfilters reads on a user's behalf (images, kernels, LUTs, pipeline files,
masks, models and their external data) goes through :func:`read_regular` (or
:func:`check_regular` where a library opens the file itself):

* with a ``root``, the path, symlinks resolved, must lie inside ``root`` (resolved too);
* only a regular file is read: FIFOs, sockets and devices are refused without blocking
  (the file is opened non-blocking and checked with ``fstat`` on the open descriptor),
  and so are files of ``/proc`` and ``/sys`` (regular files whose size lies);
* the size is checked before reading (``st_size``) and while reading (at most
  ``limit + 1`` bytes are ever read), so a file that grows or lies cannot exhaust memory.

:func:`shown` escapes control characters in a name as ``ls -b`` does, so a file name
cannot clear the terminal or forge a second message line.
"""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path
from typing import Any

import numpy as np

from cvfilters.core.types import StrPath

_PSEUDO_ROOTS = ("/proc", "/sys")
_NAMED_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r"}
_CHUNK = 1 << 20


class FileRefused(ValueError):
    """A file that may not be read: outside the allowed folder, not regular, too large, or unreadable.

    ``str()`` is the reason alone (callers add the name the user gave); ``path`` is that name.
    """

    def __init__(self, path: StrPath, reason: str) -> None:
        super().__init__(reason)
        self.path = os.fspath(path)
        self.reason = reason


def shown(text: StrPath) -> str:
    """``text`` with control characters escaped as ``ls -b`` does (``\\n``, ``\\033``, ...)."""
    value = os.fspath(text)
    if value.isprintable():
        return value
    out = []
    for char in value:
        if char in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[char])
        elif char.isprintable() or char == " ":
            out.append(char)
        else:
            out.append("".join(f"\\{byte:03o}" for byte in char.encode("utf-8", "surrogateescape")))
    return "".join(out)


def human_bytes(count: int) -> str:
    """``1 MiB``, ``64 KiB``, ``12 bytes``: a size for a message."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    return f"{count} bytes"


def confined(path: StrPath, root: StrPath) -> Path:
    """``path`` with symlinks resolved; :class:`FileRefused` unless it lies inside ``root`` (resolved)."""
    resolved = Path(os.path.realpath(path))
    base = Path(os.path.realpath(root))
    if not resolved.is_relative_to(base):
        raise FileRefused(path, f"is outside {shown(root)} (symlinks resolved)")
    return resolved


def check_regular(path: StrPath, limit: int, *, root: StrPath | None = None) -> Path:
    """The resolved path of a regular file of at most ``limit`` bytes (inside ``root`` if given).

    Raises :class:`FileRefused` otherwise.

    For libraries that open the file themselves (``cv2.dnn``); prefer :func:`read_regular`.
    """
    resolved = confined(path, root) if root is not None else Path(os.path.realpath(path))
    descriptor = _open(path, resolved)
    try:
        _check_descriptor(path, descriptor, limit)
    finally:
        os.close(descriptor)
    return resolved


def read_regular(path: StrPath, limit: int, *, root: StrPath | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (inside ``root`` if given), else :class:`FileRefused`.

    Never blocks on a FIFO and never reads more than ``limit + 1`` bytes, whatever the
    file claims or becomes while it is read.
    """
    resolved = confined(path, root) if root is not None else Path(os.path.realpath(path))
    descriptor = _open(path, resolved)
    try:
        _check_descriptor(path, descriptor, limit)
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            try:
                chunk = os.read(descriptor, min(_CHUNK, limit + 1 - total))
            except OSError as exc:
                raise FileRefused(path, f"cannot be read ({exc.strerror or exc})") from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise FileRefused(path, f"grew past the limit of {human_bytes(limit)} while it was read")
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def npy_array(data: bytes, path: StrPath, max_elements: int) -> np.ndarray:
    """The array of ``.npy`` bytes, its shape checked from the header before any allocation.

    Raises :class:`FileRefused` for a header that is not ``.npy``, an object dtype, more than
    ``max_elements`` elements, or a size the data does not hold (a header that lies).
    """
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(stream)
    except (ValueError, TypeError, EOFError) as exc:
        raise FileRefused(path, f"is not a .npy array ({_first_line(exc)})") from None
    count = 1
    for side in shape:
        count *= side
    if dtype.hasobject:
        raise FileRefused(path, "holds Python objects; only numeric .npy arrays are read")
    if count > max_elements:
        raise FileRefused(path, f"holds {'x'.join(map(str, shape))} = {count} values, more than {max_elements}")
    if len(data) - stream.tell() != count * dtype.itemsize:
        raise FileRefused(path, f"is truncated or padded: its header says {'x'.join(map(str, shape))} {dtype} "
                                f"({count * dtype.itemsize} bytes), the file holds {len(data) - stream.tell()}")
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=stream.tell())
    return flat.reshape(shape, order="F" if fortran else "C").copy()


def json_unique(text: str) -> Any:
    """``json.loads`` refusing an object that gives a key twice (``ValueError``); json keeps the last silently."""
    return json.loads(text, object_pairs_hook=_unique_keys)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"key {shown(key)!r} is given twice")
        seen[key] = value
    return seen


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return shown(text.splitlines()[0]) if text else type(exc).__name__


def system_file(path: StrPath) -> bool:
    """Whether ``path`` (symlinks resolved) is under ``/proc`` or ``/sys`` (regular files whose size lies)."""
    resolved = Path(os.path.realpath(path))
    return any(resolved.is_relative_to(root) for root in _PSEUDO_ROOTS)


def _open(path: StrPath, resolved: Path) -> int:
    if system_file(resolved):
        raise FileRefused(path, f"is a system file under /{resolved.parts[1]}, not a regular file")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        return os.open(resolved, flags)
    except OSError as exc:
        raise FileRefused(path, f"cannot be read ({exc.strerror or exc})") from None


def _check_descriptor(path: StrPath, descriptor: int, limit: int) -> None:
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(path, f"is {_kind(info.st_mode)}, not a regular file")
    if info.st_size > limit:
        raise FileRefused(path, f"is {info.st_size} bytes, larger than the limit of {human_bytes(limit)}")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


__all__ = ["FileRefused", "check_regular", "confined", "human_bytes", "json_unique", "npy_array", "read_regular",
           "shown", "system_file"]
