"""cvfilters.run.batch without worker processes: tasks on a stand-in executor, folders synced, outcomes counted.

The executor here finishes the tasks the test says; no pixels are read or written.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, cast

import pytest

from cvfilters.engine.pipeline import Pipeline
from cvfilters.run import batch
from cvfilters.run.tasks import Options, Outcome, Task

INVERT = Pipeline.parse("invert").to_dict()


class Manual:
    """An executor that finishes only the first task it is given; the others stay in flight
    (``max_workers`` as a local pool has; None as a Dask client)."""

    def __init__(self, max_workers: int | None, finish_all: bool = False) -> None:
        if max_workers is not None:  # a Dask client has no such attribute
            self.max_workers = max_workers
        self.finish_all = finish_all
        self.submitted: list[Future[Outcome]] = []

    def submit(self, fn: Any, task: Task, options: Options) -> Future[Outcome]:
        future: Future[Outcome] = Future()
        if not self.submitted or self.finish_all:
            future.set_result(Outcome(task, "done"))
        self.submitted.append(future)
        return future


@pytest.mark.parametrize(("workers", "in_flight"), [(2, 2), (3, 3), (None, 5)])
def test_a_pool_gets_no_more_tasks_than_its_workers_and_an_interrupt_cancels_the_rest(
        tmp_path: Path, workers: int | None, in_flight: int) -> None:
    tasks = [Task(Path(f"{i}.png"), tmp_path / f"{i}.png") for i in range(5)]
    executor = Manual(max_workers=workers)
    outcomes = cast("Generator[Outcome, None, None]",  # a generator: close() is an interrupt
                    batch.run(tasks, Options(INVERT), executor=executor))  # type: ignore[arg-type]
    assert next(outcomes) == Outcome(tasks[0], "done") and len(executor.submitted) == in_flight
    outcomes.close()  # as an interrupt: the tasks in flight are cancelled, no new one starts
    assert [f.cancelled() for f in executor.submitted] == [False] + [True] * (in_flight - 1)


@pytest.mark.parametrize("workers", [2, None])
def test_every_task_of_a_pool_yields_its_outcome(tmp_path: Path, workers: int | None) -> None:
    tasks = [Task(Path(f"{i}.png"), tmp_path / f"{i}.png") for i in range(5)]
    executor = Manual(max_workers=workers, finish_all=True)
    outcomes = list(batch.run(tasks, Options(INVERT), executor=executor))  # type: ignore[arg-type]
    assert sorted(o.task.source.name for o in outcomes) == ["0.png", "1.png", "2.png", "3.png", "4.png"]


def test_the_last_tasks_in_flight_are_waited_for(tmp_path: Path) -> None:
    tasks = [Task(Path(f"{i}.png"), tmp_path / f"{i}.png") for i in range(2)]
    executor = Manual(max_workers=2)
    outcomes = batch.run(tasks, Options(INVERT), executor=executor)  # type: ignore[arg-type]
    assert next(outcomes).task == tasks[0]  # nothing left to submit; the second is still running
    executor.submitted[1].set_result(Outcome(tasks[1], "done"))
    assert next(outcomes).task == tasks[1]
    assert list(outcomes) == []


class Dying:
    """Two slots, run inline once both are taken (or the last task comes, or a task runs again): if
    ``culprit`` is among them its worker dies and takes the other task in flight with it, as a local
    pool's worker killed by the OOM killer (``BrokenProcessPool`` for each)."""

    max_workers = 2

    def __init__(self, culprit: str, last: Task) -> None:
        self.culprit, self.last = culprit, last
        self.slots: list[tuple[Future[Outcome], Callable[[Task, Options], Outcome], Task, Options]] = []
        self.calls: list[str] = []

    def submit(self, fn: Callable[[Task, Options], Outcome], task: Task, options: Options) -> Future[Outcome]:
        assert len(self.calls) < 20, "the same tasks submitted again and again"
        future: Future[Outcome] = Future()
        self.slots.append((future, fn, task, options))
        self.calls.append(task.source.name)
        if len(self.slots) == self.max_workers or task is self.last or self.calls.count(task.source.name) > 1:
            slots, self.slots = self.slots, []
            dies = any(t.source.name == self.culprit for _, _, t, _ in slots)
            for slot, function, t, o in slots:
                if dies:
                    slot.set_exception(BrokenProcessPool("A process in the process pool was terminated abruptly"))
                else:
                    slot.set_result(function(t, o))
        return future


def test_a_dead_worker_reruns_its_tasks_alone_fails_the_culprit_and_removes_their_orphans(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    options = Options(INVERT)
    monkeypatch.setattr(batch, "process", lambda task, given: Outcome(task, "done" if given is options else "failed"))
    out = tmp_path / "out"
    out.mkdir()
    orphans = [out / ".2.png.0123456789abcdef.tmp", out / ".3.png.0123456789abcdef.tmp"]  # the two in flight
    kept = out / ".4.png.0123456789abcdef.tmp"  # a task that never died
    for path in (*orphans, kept):
        path.write_bytes(b"partial")
    tasks = [Task(Path(f"in/{i}.png"), out / f"{i}.png") for i in range(5)]
    executor = Dying("3.png", tasks[-1])
    outcomes = list(batch.run(tasks, options, executor=executor))  # type: ignore[arg-type]
    calls = executor.calls  # 2 and 3 again, each alone (in either order), then 4
    assert calls[:4] == ["0.png", "1.png", "2.png", "3.png"] and sorted(calls[4:6]) == ["2.png", "3.png"]
    assert calls[6:] == ["4.png"]
    assert sorted(((o.task, o.status, o.message) for o in outcomes), key=lambda o: o[0].source.name) == [
        (tasks[0], "done", ""), (tasks[1], "done", ""), (tasks[2], "done", ""),
        (tasks[3], "failed", "in/3.png: the worker process died while processing it (killed by a signal, or out of "
                             "memory)"),
        (tasks[4], "done", "")]
    assert [p.exists() for p in (*orphans, kept)] == [False, False, True]


def test_without_an_executor_each_task_runs_here_with_the_progress_callback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    options = Options(INVERT)
    reports: list[tuple[str, int, int]] = []

    def process(task: Task, given: Options, progress: Callable[[int, int], None] | None = None) -> Outcome:
        assert given is options and progress is not None
        progress(1, 2)
        return Outcome(task, "done")

    monkeypatch.setattr(batch, "process", process)
    monkeypatch.setattr(batch, "sync_folders", lambda tasks: None)
    tasks = [Task(Path(f"{i}.mp4"), tmp_path / f"{i}.mp4") for i in range(2)]
    outcomes = list(batch.run(tasks, options, progress=lambda done, total: reports.append(("frames", done, total))))
    assert outcomes == [Outcome(tasks[0], "done"), Outcome(tasks[1], "done")]
    assert reports == [("frames", 1, 2), ("frames", 1, 2)]


# ---------------------------------------------------------------- folders
def test_each_output_folder_is_synced_once_and_standard_output_never(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from cvfilters.core import atomic

    synced: list[Path] = []
    monkeypatch.setattr(atomic, "fsync_directory", synced.append)
    batch.sync_folders([Task(Path("a.png"), Path("-"), True, ".png"),
                        Task(Path("a.png"), tmp_path / "x" / "a.png"),
                        Task(Path("b.png"), tmp_path / "x" / "b.png"),
                        Task(Path("c.png"), tmp_path / "y" / "c.png")])
    assert sorted(synced) == [tmp_path / "x", tmp_path / "y"]


# ---------------------------------------------------------------- summary
def test_summary_counts_and_its_line() -> None:
    task = Task(Path("a.png"), Path("b.png"))
    summary = batch.Summary()
    for status in ("done", "done", "skipped", "failed", "done"):
        summary.add(Outcome(task, status))
    assert (summary.done, summary.skipped, summary.failed) == (3, 1, 1)
    summary.seconds = 2.0
    assert summary.line() == "done 3, skipped 1 (exist; --overwrite replaces them), failed 1 in 2.0 s (1.5 images/s)"
    assert batch.Summary(done=2).line() == "done 2, failed 0 in 0.0 s (0.0 images/s)"
    assert batch.Summary(done=1, seconds=0.5).line() == "done 1, failed 0 in 0.5 s (2.0 images/s)"  # under a second


def test_timed_counts_each_outcome_and_times_from_the_start_given() -> None:
    import time

    task = Task(Path("a.png"), Path("b.png"))
    summary = batch.Summary()
    start = time.perf_counter() - 100
    seen = [o.status for o in batch.timed(iter([Outcome(task, "done"), Outcome(task, "failed")]),
                                          summary, start=start)]
    assert seen == ["done", "failed"] and (summary.done, summary.failed) == (1, 1)
    assert 100 <= summary.seconds < 160
    fresh = batch.Summary()
    list(batch.timed([Outcome(task, "skipped")], fresh))
    assert fresh.skipped == 1 and 0 <= fresh.seconds < 60
