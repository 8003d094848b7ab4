"""Many files through one pipeline: running the tasks of a batch and counting their outcomes.

:mod:`cvfilters.run.planning` makes the tasks, :mod:`cvfilters.run.processing` runs one, and
:mod:`cvfilters.run.tasks` holds the records they share. Every failure is one outcome with a
one-line message; the rest of the batch goes on. Where tasks run is a
``concurrent.futures.Executor`` (see :mod:`cvfilters.run.executors`): a local process pool by
default, a Dask cluster with ``--scheduler``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cvfilters.core import atomic, leftovers
from cvfilters.run.processing import process
from cvfilters.run.tasks import Options, Outcome, Task

if TYPE_CHECKING:  # concurrent.futures (and logging with it) is imported when an executor runs
    from concurrent.futures import Executor


@dataclass
class Summary:
    """Counts and timing of a finished batch."""

    done: int = 0
    skipped: int = 0
    failed: int = 0
    seconds: float = 0.0

    def add(self, outcome: Outcome) -> None:
        setattr(self, outcome.status, getattr(self, outcome.status) + 1)

    def line(self) -> str:
        rate = self.done / self.seconds if self.seconds > 0 else 0.0
        skipped = f", skipped {self.skipped} (exist; --overwrite replaces them)" if self.skipped else ""
        return (f"done {self.done}{skipped}, failed {self.failed} in {self.seconds:.1f} s "
                f"({rate:.1f} images/s)")


def run(tasks: Iterable[Task], options: Options, *, executor: Executor | None = None,
        progress: Callable[[int, int], None] | None = None) -> Iterator[Outcome]:
    """Process tasks, yielding outcomes as they finish.

    Without an ``executor`` tasks run one by one in this process (``progress`` then
    reports video frames). With one, at most its ``max_workers`` tasks are in flight (a
    local pool; all of them on Dask), so on an interrupt no further task starts: the
    running ones finish their atomic writes and the interrupt propagates. A task whose
    worker died (``BrokenProcessPool``) runs again alone in a fresh worker; if that one
    dies too the task fails with one line naming its file, and the batch goes on.
    """
    tasks = list(tasks)
    try:
        if executor is None:
            for task in tasks:
                yield process(task, options, progress)
        else:
            yield from _run_on(executor, tasks, options)
    finally:
        sync_folders(tasks)


def _run_on(executor: Executor, tasks: list[Task], options: Options) -> Iterator[Outcome]:
    from concurrent.futures import FIRST_COMPLETED, Future, wait
    from concurrent.futures.process import BrokenProcessPool

    window = getattr(executor, "max_workers", None) or len(tasks)  # a local pool: no task queued behind the workers
    pending = deque(tasks)
    suspects: deque[Task] = deque()  # in flight when a worker died: each runs again alone to find the culprit
    in_flight: dict[Future[Outcome], tuple[Task, bool]] = {}
    try:
        while pending or suspects or in_flight:
            if suspects:
                if not in_flight:
                    task = suspects.popleft()
                    in_flight[executor.submit(process, task, options)] = (task, True)
            else:
                while pending and len(in_flight) < window:
                    task = pending.popleft()
                    in_flight[executor.submit(process, task, options)] = (task, False)
            finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in finished:
                task, alone = in_flight.pop(future)
                try:
                    yield future.result()
                except BrokenProcessPool:
                    leftovers.remove_orphans_of(task.target)  # its worker was killed mid-write
                    if not alone:
                        suspects.append(task)
                        continue
                    yield Outcome(task, "failed", f"{task.source}: the worker process died while processing it "
                                                  "(killed by a signal, or out of memory)")
    except BaseException:
        for future in in_flight:
            future.cancel()
        raise


def sync_folders(tasks: Iterable[Task]) -> None:
    """Make the renames of a batch durable: one fsync per output folder (workers write without it).

    Each output's data reached the disk before its rename (:mod:`cvfilters.core.atomic`), so a
    power loss before this can lose outputs (the old file or none is there), never leave a
    partial one under its name; after it, every output written is on the disk.
    """
    for folder in {task.target.parent for task in tasks if task.stdout_format is None}:
        atomic.fsync_directory(folder)


def timed(outcomes: Iterable[Outcome], summary: Summary, *, start: float | None = None) -> Iterator[Outcome]:
    """Pass outcomes through while counting them and timing the run into ``summary``.

    ``start`` is a :func:`time.perf_counter` reading to time from (the CLI passes its
    process start); by default the first outcome's request.
    """
    start = time.perf_counter() if start is None else start
    for outcome in outcomes:
        summary.add(outcome)
        summary.seconds = time.perf_counter() - start
        yield outcome
