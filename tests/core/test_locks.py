"""ForkSafeLock: a lock for ``with`` blocks that a forked child gets unlocked, whoever held it."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from cvfilters.core.locks import ForkSafeLock


def test_it_excludes_other_threads() -> None:
    lock, order = ForkSafeLock(), []

    def other() -> None:
        with lock:
            order.append("other")

    with lock as entered:
        assert entered is lock
        thread = threading.Thread(target=other)
        thread.start()
        time.sleep(0.2)  # the other thread is blocked meanwhile
        order.append("first")
    thread.join(10)
    assert order == ["first", "other"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is not available")
def test_a_lock_held_by_another_thread_at_fork_is_free_in_the_child() -> None:
    lock, held, release = ForkSafeLock(), threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            held.set()
            release.wait(60)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert held.wait(10)
    try:
        pid = os.fork()
        if pid == 0:
            with lock:  # a plain threading.Lock would block here for ever
                os._exit(7)
        deadline = time.monotonic() + 20
        while (done := os.waitpid(pid, os.WNOHANG)) == (0, 0) and time.monotonic() < deadline:
            time.sleep(0.02)
        if done == (0, 0):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the child blocked on a lock its parent's thread held at fork time")
        assert os.waitstatus_to_exitcode(done[1]) == 7
    finally:
        release.set()
        holder.join(10)
