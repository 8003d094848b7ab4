"""RenewingPool: what it hands its process pool, and how it replaces a broken one.

A recording stand-in for ``ProcessPoolExecutor`` is the reference: every call it gets is
written out here. A real pool whose worker is killed is tested in test_survival.py.
"""

from __future__ import annotations

from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import pytest

from cvfilters.run.pools import RenewingPool


class RecordingPool:
    """Records submits and shutdowns; refuses submits once ``broken`` (as a pool whose worker died)."""

    def __init__(self, name: str, calls: list[tuple[Any, ...]], broken: bool = False) -> None:
        self.name, self.calls, self.broken = name, calls, broken

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        if self.broken:
            raise BrokenProcessPool("a worker died (test)")
        self.calls.append((self.name, "submit", fn, args, kwargs))
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.calls.append((self.name, "shutdown", wait, cancel_futures))


def _pools(*broken: bool) -> tuple[RenewingPool, list[tuple[Any, ...]]]:
    calls: list[tuple[Any, ...]] = []
    made = iter(RecordingPool(f"pool {i}", calls, flag) for i, flag in enumerate(broken))
    return RenewingPool(lambda: made.__next__(), 3), calls  # type: ignore[arg-type, return-value]


def test_submit_hands_on_the_function_and_every_argument() -> None:
    pool, calls = _pools(False)
    assert pool.submit(pow, 2, 10).result() == 1024
    assert pool.submit(int, "ff", base=16).result() == 255
    assert calls == [("pool 0", "submit", pow, (2, 10), {}), ("pool 0", "submit", int, ("ff",), {"base": 16})]
    assert pool.max_workers == 3


def test_a_broken_pool_is_shut_without_waiting_and_replaced() -> None:
    pool, calls = _pools(True, False)
    assert pool.submit(int, "7", base=8).result() == 7
    # the broken pool: no wait for its dead worker, its queued tasks cancelled; the task goes to a new pool
    assert calls == [("pool 0", "shutdown", False, True), ("pool 1", "submit", int, ("7",), {"base": 8})]


@pytest.mark.parametrize(("kwargs", "passed"), [({}, (True, False)), ({"wait": False}, (False, False)),
                                                ({"cancel_futures": True}, (True, True)),
                                                ({"wait": False, "cancel_futures": True}, (False, True))])
def test_shutdown_hands_its_choices_on(kwargs: dict[str, bool], passed: tuple[bool, bool]) -> None:
    pool, calls = _pools(False)
    pool.shutdown(**kwargs)
    assert calls == [("pool 0", "shutdown", *passed)]
