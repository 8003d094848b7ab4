"""Codec chatter caught: while images decode or encode, what C libraries print goes to the error.

OpenCV logs codec complaints (libtiff, ``imdecode_``) through its logger, and libpng and
libjpeg print theirs straight to file descriptor 2, which would break the one-line error
contract. :func:`quiet` silences the logger and points descriptor 2 at a temporary file
while any thread is inside; the lines become the detail of the error :mod:`cvfilters.io.reading` or
:mod:`cvfilters.io.writing` raises. (Another thread's writes to stderr in that moment are caught too.)
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any

import cv2

_QUIET_LOCK = threading.Lock()  # OpenCV's log level and file descriptor 2 are process globals
_QUIET_STATE: dict[str, Any] = {"depth": 0, "level": 0, "stderr": None, "shared": False}


@contextlib.contextmanager
def quiet() -> Iterator[list[str]]:
    """Silence OpenCV's logger and catch what C libraries print on descriptor 2 while any thread
    is inside; the yielded list receives those lines when this block was alone inside."""
    printed: list[str] = []
    with _QUIET_LOCK:
        if _QUIET_STATE["depth"] == 0:
            _QUIET_STATE["level"] = cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
            _QUIET_STATE["stderr"], _QUIET_STATE["shared"] = _catch_stderr(), False
        else:
            _QUIET_STATE["shared"] = True
        _QUIET_STATE["depth"] += 1
    try:
        yield printed
    finally:
        with _QUIET_LOCK:
            _QUIET_STATE["depth"] -= 1
            if _QUIET_STATE["depth"] == 0:
                cv2.utils.logging.setLogLevel(_QUIET_STATE["level"])
                text = _release_stderr(_QUIET_STATE["stderr"])
                if not _QUIET_STATE["shared"]:
                    printed += [line.strip() for line in text.splitlines() if line.strip()]


def _catch_stderr() -> tuple[int, IO[bytes]] | None:
    """Point descriptor 2 at a new temporary file; None (nothing caught) where that fails."""
    with contextlib.suppress(Exception):
        sys.stderr.flush()  # what Python buffered before goes where it was meant to
    try:
        catcher = _anonymous_file()
    except OSError:
        return None
    try:
        saved = os.dup(2)  # fails without a descriptor 2 (a daemon): nothing to catch
        try:
            os.dup2(catcher.fileno(), 2)
        except OSError:
            os.close(saved)
            raise
    except OSError:
        catcher.close()
        return None
    return saved, catcher


def _anonymous_file() -> IO[bytes]:
    """A nameless read-write file: in memory where Linux offers it (no ``tempfile`` import, which
    costs a tenth of a small ``apply``'s start-up), else a temporary file."""
    if hasattr(os, "memfd_create"):
        return open(os.memfd_create("cvfilters-stderr", os.MFD_CLOEXEC), "w+b")
    import tempfile

    return tempfile.TemporaryFile()


def _release_stderr(caught: tuple[int, IO[bytes]] | None) -> str:
    if caught is None:
        return ""
    saved, catcher = caught
    os.dup2(saved, 2)
    os.close(saved)
    with catcher:
        catcher.seek(0)
        return catcher.read(4096).decode(errors="replace")


def _after_fork_in_child() -> None:
    """A fork while another thread was inside :func:`quiet`: give the child its stderr back."""
    global _QUIET_LOCK
    _QUIET_LOCK = threading.Lock()  # the parent's may be held by a thread the child does not have
    if _QUIET_STATE["depth"]:
        _release_stderr(_QUIET_STATE["stderr"])
        cv2.utils.logging.setLogLevel(_QUIET_STATE["level"])
        _QUIET_STATE.update(depth=0, stderr=None, shared=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@contextlib.contextmanager
def tifffile_logger_quiet() -> Iterator[None]:
    """Keep tifffile's logger (which reports damaged files on stderr) quiet: damage is reported
    by cvfilters' own one-line errors."""
    import logging

    logger = logging.getLogger("tifffile")
    before = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = before
