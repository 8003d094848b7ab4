"""Many files through one pipeline: planning output names, running tasks, collecting outcomes.

A task carries two paths; workers rebuild the pipeline from its dict form, so no
pixels cross process boundaries. Every failure is one :class:`Outcome` with a one-line
message; the rest of the batch goes on. Where tasks run is a
``concurrent.futures.Executor`` (see :mod:`cvfilters.executors`): a local process
pool by default, a Dask cluster with ``--scheduler``.
"""

from __future__ import annotations

import glob
import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2

from . import io
from .errors import CvfError, OverwriteInputError
from .limits import check_memory
from .params import allow_large
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
    frames: tuple[int, int | None] | None = None
    allow_large: bool = False
    workers: int = 1
    fuse: bool = True


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
def plan(inputs: Sequence[str], output: str, *, recursive: bool = False, extension: str | None = None,
         name_suffix: str = "") -> tuple[list[Task], list[Outcome]]:
    """Expand inputs (files, directories, globs) into tasks with output paths.

    One plain input file and an ``output`` that is not a directory and has an
    extension: the output is that file. Otherwise ``output`` is a directory and the
    relative names under each input directory or glob base are kept. ``extension``
    (``".png"``) replaces the extension of image outputs in a directory (videos keep
    their container); ``name_suffix`` is appended to every output stem
    (``photo.jpg`` -> ``photo_blur.jpg``). Directories contribute their image and
    video files.

    Returns
    -------
    (tasks, failures)
        Failures are inputs that match nothing, outputs that two inputs share, and
        outputs that would replace one of the inputs (never allowed).
    """
    sources: list[tuple[Path, Path]] = []
    failures: list[Outcome] = []
    plain_files = 0
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            walker = path.rglob("*") if recursive else path.glob("*")
            found = [(f, f.relative_to(path)) for f in sorted(walker) if _is_media(f)]
            if not found:
                hint = "" if recursive else " (--recursive descends into sub-directories)"
                failures.append(Outcome(Task(path, path), "failed",
                                        f"{item}: is a directory without image or video files{hint}"))
            sources += found
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
    inputs_found = {Path(os.path.realpath(source)) for source, _ in sources}
    for source, relative in sources:
        target = out if single else out / _renamed(relative, extension, name_suffix)
        key = Path(os.path.abspath(target))
        if Path(os.path.realpath(target)) in inputs_found:
            failures.append(Outcome(Task(source, target), "failed",
                                    f"{source}: output {target} would replace an input file; cvfilters never "
                                    "overwrites its inputs"))
            continue
        if key in claimed:
            failures.append(Outcome(Task(source, target), "failed",
                                    f"{source}: output {target} is also the output of {claimed[key]}"))
            continue
        claimed[key] = source
        tasks.append(Task(source, target))
    return tasks, failures


def _renamed(relative: Path, extension: str | None, name_suffix: str) -> Path:
    is_video = relative.suffix.lower() in io.VIDEO_EXTENSIONS
    new_extension = relative.suffix if is_video or not extension else extension
    return relative.with_name(relative.stem + name_suffix + new_extension)


def _is_media(path: Path) -> bool:
    """An image or video file by its extension; broken symlinks count, so they are reported, not skipped."""
    return path.suffix.lower() in io.IMAGE_EXTENSIONS | io.VIDEO_EXTENSIONS and (path.is_file() or path.is_symlink())


def _glob_base(pattern: str) -> Path:
    parts = Path(pattern).parts
    fixed = [p for p in parts[: next(i for i, p in enumerate(parts) if glob.has_magic(p))]]
    return Path(*fixed) if fixed else Path(".")


# ---------------------------------------------------------------- running
@lru_cache(maxsize=4)
def _pipeline(frozen: str, large: bool, fuse: bool) -> Pipeline:
    import json

    with allow_large(large):
        pipeline = Pipeline.from_dict(json.loads(frozen))
    pipeline.fuse = fuse
    return pipeline


def process(task: Task, options: Options, progress: Callable[[int, int], None] | None = None) -> Outcome:
    """Read, filter and write one image or video; never raises for a problem with the file.

    ``progress(done, total)`` is called per frame of a video.
    """
    import json

    pipeline = _pipeline(json.dumps(options.pipeline, sort_keys=True), options.allow_large, options.fuse)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if task.target.exists():
                if _same_file(task.source, task.target):
                    raise OverwriteInputError(task.target)
                if not options.overwrite:
                    return Outcome(task, "skipped", f"{task.target}: exists, skipped (--overwrite replaces it)")
            if task.source.suffix.lower() in io.VIDEO_EXTENSIONS:
                from .video import process_video

                video = process_video(task.source, task.target, pipeline, backend=options.backend,
                                      frames=options.frames, overwrite=options.overwrite, progress=progress)
                audio = "kept" if video.audio else "none"
                report = [f"video: {video.frames} frames at {video.fps:g} fps, audio {audio}"]
            else:
                image, metadata = io.read_with_metadata(task.source, max_pixels=options.max_pixels)
                channels = 1 if image.ndim == 2 else image.shape[2]
                check_memory(task.source, image.shape[0], image.shape[1], channels, image.itemsize, options.workers)
                result, run_report = pipeline.run(image, backend=options.backend)
                io.write(task.target, result, metadata=metadata, quality=options.quality, overwrite=options.overwrite)
                report = run_report.lines()
        except CvfError as exc:
            return Outcome(task, "failed", str(exc))
        except cv2.error as exc:
            return Outcome(task, "failed", f"{task.source}: OpenCV error: {_last_line(exc)}")
        except MemoryError:
            return Outcome(task, "failed", f"{task.source}: out of memory")
    notes = [str(w.message) if str(w.message).startswith(str(task.source)) else f"{task.source}: {w.message}"
             for w in caught]
    return Outcome(task, "done", str(task.target), notes, report)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _last_line(exc: Exception) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def run(tasks: Iterable[Task], options: Options, *, executor: Executor | None = None,
        progress: Callable[[int, int], None] | None = None) -> Iterator[Outcome]:
    """Process tasks, yielding outcomes as they finish.

    Without an ``executor`` tasks run one by one in this process (``progress`` then
    reports video frames). With one, all tasks are submitted to it; on an interrupt
    the tasks not yet started are cancelled and the interrupt propagates.
    """
    tasks = list(tasks)
    if executor is None:
        for task in tasks:
            yield process(task, options, progress)
        return
    futures = [executor.submit(process, task, options) for task in tasks]
    try:
        for future in as_completed(futures):
            yield future.result()
    except BaseException:
        for future in futures:
            future.cancel()
        raise


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
