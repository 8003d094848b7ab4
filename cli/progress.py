"""Progress on a terminal, silent when piped: a rich bar for batches and videos, a timer for one slow image.

A single image shows nothing unless it takes longer than :data:`SINGLE_DELAY_S`
(``CVFILTERS_PROGRESS_DELAY``, seconds; 0 shows it at once); then a spinner with the
elapsed time and the file name appears until it is written (rich is imported only then,
so quick commands never pay for it).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

SINGLE_DELAY_S = float(os.environ.get("CVFILTERS_PROGRESS_DELAY", "1.0"))


def process_start() -> float:
    """The :func:`time.perf_counter` reading of this process's start (Linux ``/proc``; else now).

    So the batch summary's time includes the interpreter and import start-up.
    """
    try:
        with open("/proc/self/stat") as stat:
            ticks = int(stat.read().rpartition(")")[2].split()[19])
        with open("/proc/uptime") as uptime:
            since_boot = float(uptime.read().split()[0])
        age = since_boot - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        age = 0.0
    return time.perf_counter() - max(age, 0.0)


class Progress:
    """Context manager: ``advance()`` after each file, ``frames(done, total)`` from a video."""

    def __init__(self, tasks: Sequence[Any]) -> None:
        from cvfilters.io.formats import VIDEO_EXTENSIONS

        self.count = len(tasks)
        self.single_video = self.count == 1 and tasks[0].source.suffix.lower() in VIDEO_EXTENSIONS
        self.single_image = self.count == 1 and not self.single_video
        self.name = tasks[0].source.name if self.count == 1 else ""
        self.bar: Any = None
        self.task: Any = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._closed = False

    def __enter__(self) -> Progress:
        if not sys.stderr.isatty():
            return self
        if self.single_image and SINGLE_DELAY_S <= 0:
            self._start_timer_display()
        elif self.single_image:
            self._timer = threading.Timer(SINGLE_DELAY_S, self._start_timer_display)
            self._timer.daemon = True
            self._timer.start()
        elif self.count > 1 or self.single_video:
            from rich.progress import BarColumn, MofNCompleteColumn, TaskProgressColumn, TextColumn, TimeRemainingColumn

            unit = "frames" if self.single_video else "files"
            rate = TextColumn("{task.fields[rate]}")
            self._start(TextColumn(f"filtering {unit}"), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
                        rate, TimeRemainingColumn())
            self.task = self.bar.add_task(unit, total=None if self.single_video else self.count, rate="")
        return self

    def _start(self, *columns: Any) -> None:
        from rich.console import Console
        from rich.progress import Progress as RichProgress

        self.bar = RichProgress(*columns, console=Console(stderr=True), transient=True)
        self.bar.start()

    def _start_timer_display(self) -> None:
        with self._lock:
            if self._closed:
                return
            from rich.markup import escape
            from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

            self._start(SpinnerColumn(), TimeElapsedColumn(), TextColumn(f"filtering {escape(self.name)}"))
            self.task = self.bar.add_task("image", total=None)

    def advance(self) -> None:
        if self.bar is not None and self.count > 1:
            self.bar.advance(self.task)
            self._rate()

    def frames(self, done: int, total: int) -> None:
        if self.bar is not None and self.single_video:
            self.bar.update(self.task, completed=done, total=total)
            self._rate()

    def _rate(self) -> None:
        elapsed = self.bar.tasks[0].elapsed or 0.0
        done = self.bar.tasks[0].completed
        self.bar.update(self.task, rate=f"{done / elapsed:.1f}/s" if elapsed > 0 else "")

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self.bar is not None:
                self.bar.stop()
