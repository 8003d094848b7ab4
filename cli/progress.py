"""A rich progress bar on a terminal (files, rate, ETA; frames for a single video); silent when piped."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from cvfilters.io import VIDEO_EXTENSIONS


class Progress:
    """Context manager: ``advance()`` after each file, ``frames(done, total)`` from a video."""

    def __init__(self, tasks: Sequence[Any]) -> None:
        self.count = len(tasks)
        self.single_video = self.count == 1 and tasks[0].source.suffix.lower() in VIDEO_EXTENSIONS
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> Progress:
        if sys.stderr.isatty() and (self.count > 1 or self.single_video):
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TaskProgressColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress

            unit = "frames" if self.single_video else "files"
            rate = TextColumn("{task.fields[rate]}")
            self.bar = RichProgress(TextColumn(f"filtering {unit}"), BarColumn(), MofNCompleteColumn(),
                                    TaskProgressColumn(), rate, TimeRemainingColumn(),
                                    console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(unit, total=None if self.single_video else self.count, rate="")
        return self

    def advance(self) -> None:
        if self.bar is not None and not self.single_video:
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
        if self.bar is not None:
            self.bar.stop()
