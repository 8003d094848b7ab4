"""Worker processes that never outlive the command that started them.

A killed command (SIGKILL included) cannot shut its pool down, and a pool worker blocked on
its task queue never learns of it. So each helper process watches its own parent:

* The forkserver imports this module first (``set_forkserver_preload``) and, being a direct
  child of the command named by ``CVFILTERS_PARENT_PID``, asks Linux for SIGKILL when its
  parent dies (``prctl(PR_SET_PDEATHSIG)``).
* Each worker does the same in its initializer (its parent is the forkserver, or the command
  for spawned device workers) and also runs a watchdog thread that polls whether the command
  is alive, for systems without ``prctl``.

When the workers and the forkserver are gone, multiprocessing's resource tracker sees its
pipe close and exits too. Outputs stay whole: writes are atomic, and the temporary files of
killed writes are removed by the next run into the folder (:mod:`cvfilters.core.leftovers`).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PARENT_ENV = "CVFILTERS_PARENT_PID"
POLL_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1


def die_with_parent(expected_parent: int | None = None) -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux); exit at once if the
    parent is already gone (not ``expected_parent`` any more). Returns whether the kernel agreed."""
    armed = False
    if sys.platform.startswith("linux"):
        try:
            armed = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(1)  # the parent died before the request took effect
    return armed


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def watch(pid: int, interval: float = POLL_SECONDS) -> threading.Thread:
    """Start a daemon thread that ends this process as soon as process ``pid`` is gone."""
    def loop() -> None:
        while alive(pid):
            time.sleep(interval)
        os._exit(1)

    thread = threading.Thread(target=loop, name="cvfilters-lifeline", daemon=True)
    thread.start()
    return thread


def arm_worker() -> None:
    """In a pool worker: die with the parent process and with the command (``CVFILTERS_PARENT_PID``)."""
    die_with_parent(os.getppid())
    command = os.environ.get(PARENT_ENV, "")
    if command.isdigit():
        watch(int(command))


def _arm_forkserver() -> None:
    """Run on import: in the forkserver (a direct child of the command), die with the command."""
    command = os.environ.get(PARENT_ENV, "")
    in_forkserver = sys.argv[:1] == ["-c"] and "multiprocessing.forkserver" in sys.modules
    if in_forkserver and command.isdigit() and int(command) == os.getppid():
        die_with_parent(int(command))


_arm_forkserver()
