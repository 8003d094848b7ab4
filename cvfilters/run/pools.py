"""A process pool that survives the death of a worker (imported only when a pool starts)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any


class RenewingPool(Executor):
    """A process pool that starts afresh when one of its workers dies (the OOM killer, a crash).

    A ``ProcessPoolExecutor`` whose worker dies is broken for good: every task in it fails
    with ``BrokenProcessPool``. This one makes a new pool for the next :meth:`submit`, so
    :func:`cvfilters.run.batch.run` can fail the file that killed its worker and go on.
    ``max_workers`` tells the batch how many tasks to keep in flight.
    """

    def __init__(self, factory: Callable[[], ProcessPoolExecutor], max_workers: int) -> None:
        self._factory = factory
        self._pool = factory()
        self.max_workers = max_workers

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        try:
            return self._pool.submit(fn, *args, **kwargs)
        except BrokenProcessPool:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._factory()
            return self._pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)
