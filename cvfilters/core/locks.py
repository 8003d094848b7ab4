"""Locks that survive ``fork``: a forked child gets fresh ones.

A child process started with ``fork`` (multiprocessing's default on Linux, PyTorch's
DataLoader workers) has only the thread that forked; a lock another parent thread held
at that moment would stay locked in the child for ever. Every :class:`ForkSafeLock` is
replaced by an unlocked one in the child (``os.register_at_fork``), so caches guarded
by them keep working there. OpenCV's own thread pool (the pthreads framework of the
opencv-python wheels) survives ``fork`` by itself: tests/test_threads.py forks while
other threads run OpenCV filters.
"""

from __future__ import annotations

import os
import threading
import weakref

_LOCKS: weakref.WeakSet[ForkSafeLock] = weakref.WeakSet()


class ForkSafeLock:
    """A ``threading.Lock`` for ``with`` blocks, unlocked anew in forked children."""

    __slots__ = ("_lock", "__weakref__")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        _LOCKS.add(self)

    def __enter__(self) -> ForkSafeLock:
        self._lock.acquire()
        return self

    def __exit__(self, *_: object) -> None:
        self._lock.release()

    def _renew(self) -> None:
        self._lock = threading.Lock()


def _after_fork_in_child() -> None:
    for lock in list(_LOCKS):
        lock._renew()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
