"""Many files through one pipeline: planning output names, running tasks, collecting outcomes.

A task carries two paths; workers rebuild the pipeline from its dict form, so no
pixels cross process boundaries. Every failure is one :class:`Outcome` with a one-line
message; the rest of the batch goes on.
"""

from __future__ import annotations

import glob
import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2

from . import io
from .errors import CvfError, OverwriteInputError
from .pipeline import Pipeline


@dataclass(frozen=True)
class Task:
    """One input file and the output path it is written to."""

    source: Path
    target: Path


@dataclass(frozen=True)
class Options:
    """What every task of a batch shares (picklable: sent to worker processes)."""

    pipeline: dict[str, Any]
    backend: str = "auto"
    overwrite: bool = False
    quality: int | None = None
    max_pixels: int | None = None


@dataclass
class Outcome:
    """The result of one task: ``done``, ``skipped`` or ``failed``, with messages."""

    task: Task
    status: str
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    report: list[str] = field(default_factory=list)


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


# ---------------------------------------------------------------- planning
def plan(inputs: Sequence[str], output: str, *, recursive: bool = False,
         suffix: str | None = None) -> tuple[list[Task], list[Outcome]]:
    """Expand inputs (files, directories, globs) into tasks with output paths.

    One plain input file and an ``output`` that is not a directory and has an
    extension: the output is that file. Otherwise ``output`` is a directory and the
    relative names under each input directory or glob base are kept. ``suffix``
    (``".png"``) replaces the extension of directory outputs.

    Returns
    -------
    (tasks, failures)
        Failures are inputs that match nothing or collide on the same output.
    """
    sources: list[tuple[Path, Path]] = []
    failures: list[Outcome] = []
    plain_files = 0
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            walker = path.rglob("*") if recursive else path.glob("*")
            sources += [(f, f.relative_to(path)) for f in sorted(walker) if _is_image(f)]
        elif glob.has_magic(item) and not path.exists():
            base = _glob_base(item)
            matches = [Path(m) for m in sorted(glob.glob(item, recursive=recursive)) if Path(m).is_file()]
            if not matches:
                failures.append(Outcome(Task(path, path), "failed", f"{item}: no files match"))
            sources += [(m, m.relative_to(base)) for m in matches]
        else:
            plain_files += 1
            sources.append((path, Path(path.name)))
    out = Path(output)
    single = len(inputs) == 1 and plain_files == 1 and not out.is_dir() and out.suffix != ""
    tasks: list[Task] = []
    claimed: dict[Path, Path] = {}
    for source, relative in sources:
        target = out if single else out / (relative.with_suffix(suffix) if suffix else relative)
        key = Path(os.path.abspath(target))
        if key in claimed:
            failures.append(Outcome(Task(source, target), "failed",
                                    f"{source}: output {target} is also the output of {claimed[key]}"))
            continue
        claimed[key] = source
        tasks.append(Task(source, target))
    return tasks, failures


def _is_image(path: Path) -> bool:
    return path.suffix.lower() in io.IMAGE_EXTENSIONS and path.is_file()


def _glob_base(pattern: str) -> Path:
    parts = Path(pattern).parts
    fixed = [p for p in parts[: next(i for i, p in enumerate(parts) if glob.has_magic(p))]]
    return Path(*fixed) if fixed else Path(".")


# ---------------------------------------------------------------- running
@lru_cache(maxsize=4)
def _pipeline(frozen: str) -> Pipeline:
    import json

    return Pipeline.from_dict(json.loads(frozen))


def process(task: Task, options: Options) -> Outcome:
    """Read, filter and write one file; never raises for a problem with the file."""
    import json

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if task.target.exists():
                if _same_file(task.source, task.target):
                    raise OverwriteInputError(task.target)
                if not options.overwrite:
                    return Outcome(task, "skipped", f"{task.target}: exists, skipped (--overwrite replaces it)")
            image, metadata = io.read_with_metadata(task.source, max_pixels=options.max_pixels)
            result, report = _pipeline(json.dumps(options.pipeline, sort_keys=True)).run(image, backend=options.backend)
            io.write(task.target, result, metadata=metadata, quality=options.quality, overwrite=options.overwrite)
        except CvfError as exc:
            return Outcome(task, "failed", str(exc))
        except cv2.error as exc:
            return Outcome(task, "failed", f"{task.source}: OpenCV error: {_last_line(exc)}")
        except MemoryError:
            return Outcome(task, "failed", f"{task.source}: out of memory")
    notes = [f"{task.source}: {w.message}" for w in caught]
    return Outcome(task, "done", str(task.target), notes, report.lines())


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _last_line(exc: Exception) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def _init_worker() -> None:
    cv2.setNumThreads(1)  # one OpenCV thread per process: N processes x N threads oversubscribe


def run(tasks: Iterable[Task], options: Options, *, jobs: int = 1,
        executor_factory: Callable[[int], Executor] | None = None) -> Iterator[Outcome]:
    """Process tasks, yielding outcomes as they finish.

    ``jobs == 1`` runs in this process. Otherwise tasks go to an executor: a pool of
    ``jobs`` worker processes with one OpenCV thread each, or what ``executor_factory``
    builds (the seam a cluster engine plugs into).
    """
    tasks = list(tasks)
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield process(task, options)
        return
    factory = executor_factory or (lambda n: ProcessPoolExecutor(n, initializer=_init_worker))
    with factory(min(jobs, len(tasks))) as pool:
        futures = [pool.submit(process, task, options) for task in tasks]
        try:
            for future in as_completed(futures):
                yield future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def timed(outcomes: Iterable[Outcome], summary: Summary) -> Iterator[Outcome]:
    """Pass outcomes through while counting them and timing the whole run into ``summary``."""
    start = time.perf_counter()
    for outcome in outcomes:
        summary.add(outcome)
        summary.seconds = time.perf_counter() - start
        yield outcome
