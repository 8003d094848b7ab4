"""Many files through one pipeline: planning output names, running tasks, collecting outcomes.

A task carries two paths; workers rebuild the pipeline from its dict form, so no
pixels cross process boundaries. Every failure is one :class:`Outcome` with a one-line
message; the rest of the batch goes on. Where tasks run is a
``concurrent.futures.Executor`` (see :mod:`cvfilters.run.executors`): a local process
pool by default, a Dask cluster with ``--scheduler``.
"""

from __future__ import annotations

import glob
import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2

from cvfilters.core.errors import CvfError, OverwriteInputError, UsageError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io import animation
from cvfilters.io import images as io
from cvfilters.registry.params import allow_large
from cvfilters.run.limits import check_memory


@dataclass(frozen=True)
class Task:
    """One input file and the output path it is written to; ``replace``: an existing target is
    replaced (one input with an explicitly named output file, as ``cp`` does), not skipped."""

    source: Path
    target: Path
    replace: bool = False
    stdout_format: str | None = None  # the extension of the format written when the target is ``-``


@dataclass(frozen=True)
class Options:
    """What every task of a batch shares.

    ``pipeline`` is the caller's parsed pipeline, run as it is in this process (``fuse``
    says whether its steps are fused). Pickled for a worker process, it travels in its
    pipeline-file form (steps hold functions that need not pickle) and is rebuilt there once
    per worker, under ``allow_large``.
    """

    pipeline: Pipeline
    backend: str = "auto"
    overwrite: bool = False
    quality: int | None = None
    max_pixels: int | None = None
    frames: tuple[int, int | None] | None = None
    allow_large: bool = False
    workers: int = 1
    fuse: bool = True

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        values = [getattr(self, f.name) for f in fields(self)]
        values[0] = json.dumps(self.pipeline.to_dict(), sort_keys=True)
        return (_options_in_worker, tuple(values))


def _options_in_worker(frozen: str, *rest: Any) -> Options:
    """An :class:`Options` unpickled in a worker: its pipeline rebuilt from the file form (cached)."""
    options = Options(Pipeline(), *rest)
    return replace(options, pipeline=_pipeline(frozen, options.allow_large, options.fuse))


@dataclass
class Outcome:
    """The result of one task: ``done``, ``skipped`` or ``failed``, with messages; ``usage``
    marks a failure of the request itself (an output that would replace an input), which the
    command line reports as a usage error."""

    task: Task
    status: str
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    report: list[str] = field(default_factory=list)
    usage: bool = False


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
        Failures are inputs that match nothing, outputs that two inputs share, and (marked
        ``usage``) outputs that would replace one of the inputs (never allowed).
        Standard input and output are ``-`` (one input, one output).

    Raises
    ------
    UsageError
        Several inputs, a directory or a glob, and ``output`` names a file (an image or
        video extension, not an existing directory).
    """
    if "-" in (output, *inputs):
        return _plan_stream(inputs, output, extension)
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
    if not single and out.suffix.lower() in io.IMAGE_EXTENSIONS | io.VIDEO_EXTENSIONS and not out.is_dir():
        what = f"{len(inputs)} inputs" if len(inputs) > 1 else "a directory or glob input"
        raise UsageError(f"-o {output}: names a file, but {what} need an output directory "
                         "(give a folder name, or one input file)")
    tasks: list[Task] = []
    claimed: dict[Path, Path] = {}
    inputs_found = {Path(os.path.realpath(source)) for source, _ in sources}
    for source, relative in sources:
        target = out if single else out / _renamed(relative, extension, name_suffix)
        key = Path(os.path.abspath(target))
        if Path(os.path.realpath(target)) in inputs_found:
            failures.append(Outcome(Task(source, target), "failed",
                                    f"{source}: output {target} would replace an input file; cvfilters never "
                                    "overwrites its inputs", usage=True))
            continue
        if key in claimed:
            failures.append(Outcome(Task(source, target), "failed",
                                    f"{source}: output {target} is also the output of {claimed[key]}"))
            continue
        claimed[key] = source
        tasks.append(Task(source, target, replace=single))
    return tasks, failures


def _plan_stream(inputs: Sequence[str], output: str, extension: str | None) -> tuple[list[Task], list[Outcome]]:
    """``-`` as the input (standard input) or the output (standard output): one input, one output."""
    if len(inputs) != 1:
        raise UsageError("- (standard input or output) takes exactly one input")
    source = Path(inputs[0])
    if source.suffix.lower() in io.VIDEO_EXTENSIONS or Path(output).suffix.lower() in io.VIDEO_EXTENSIONS:
        raise UsageError("- (standard input or output) takes images, not videos")
    if output == "-":
        ext = extension or (source.suffix.lower() if inputs[0] != "-" else None)
        if ext not in io.IMAGE_EXTENSIONS:
            raise UsageError("-o - (standard output) needs --format EXT (png, jpg, tif, ...)")
        return [Task(source, Path("-"), replace=True, stdout_format=ext)], []
    target = Path(output)
    if Path(output).is_dir() or target.suffix.lower() not in io.IMAGE_EXTENSIONS:
        raise UsageError(f"-o {output}: an input from standard input needs an output image file name")
    return [Task(source, target, replace=True)], []


def _renamed(relative: Path, extension: str | None, name_suffix: str) -> Path:
    is_video = relative.suffix.lower() in io.VIDEO_EXTENSIONS
    new_extension = relative.suffix if is_video or not extension else extension
    return relative.with_name(relative.stem + name_suffix + new_extension)


def _is_media(path: Path) -> bool:
    """An image or video file by its extension; broken symlinks count, so they are reported, not skipped."""
    return path.suffix.lower() in io.IMAGE_EXTENSIONS | io.VIDEO_EXTENSIONS and (path.is_file() or path.is_symlink())


def _glob_base(pattern: str) -> Path:
    parts = Path(pattern).parts
    fixed = list(parts[: next(i for i, p in enumerate(parts) if glob.has_magic(p))])
    return Path(*fixed) if fixed else Path(".")


# ---------------------------------------------------------------- running
@lru_cache(maxsize=4)
def _pipeline(frozen: str, large: bool, fuse: bool) -> Pipeline:
    with allow_large(large):
        pipeline = Pipeline.from_dict(json.loads(frozen))
    pipeline.fuse = fuse
    return pipeline


def process(task: Task, options: Options, progress: Callable[[int, int], None] | None = None) -> Outcome:
    """Validate, read, filter and write one image, animation or video; never raises for a problem with the file.

    The input is validated (exists, readable, a decodable header within the pixel limit)
    before an existing output is skipped, so a bad input is an error whatever exists at its
    output path. ``progress(done, total)`` is called per frame of a video.
    """
    pipeline = options.pipeline
    replace = options.overwrite or task.replace
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if task.source.suffix.lower() in io.VIDEO_EXTENSIONS:
                from cvfilters.io.video import check_readable, process_video

                io.check_file(task.source)
                if os.path.lexists(task.target) and not replace:
                    check_readable(task.source)  # a bad input is an error, not a skip
                skipped = _skip(task, replace)
                if skipped is not None:
                    return skipped
                video = process_video(task.source, task.target, pipeline, backend=options.backend,
                                      frames=options.frames, overwrite=replace, progress=progress)
                audio = "kept" if video.audio else "none"
                report = [f"video: {video.frames} frames at {video.fps:g} fps, audio {audio}"]
            else:
                done = _process_image(task, options, pipeline, replace)
                if isinstance(done, Outcome):
                    return done
                report = done
        except CvfError as exc:
            return Outcome(task, "failed", str(exc))
        except cv2.error as exc:
            return Outcome(task, "failed", f"{task.source}: OpenCV error: {_last_line(exc)}")
        except MemoryError:
            return Outcome(task, "failed", f"{task.source}: out of memory")
    notes = [str(w.message) if str(w.message).startswith(str(task.source)) else f"{task.source}: {w.message}"
             for w in caught]
    return Outcome(task, "done", str(task.target), notes, report)


def dry_run(task: Task, options: Options) -> Outcome:
    """What :func:`process` would do with ``task``, writing nothing: the same validation and
    skip decision; ``done`` means it would be written, with what was read in the message."""
    replace = options.overwrite or task.replace
    try:
        if task.source.suffix.lower() in io.VIDEO_EXTENSIONS:
            from cvfilters.io.video import check_readable

            io.check_file(task.source)
            check_readable(task.source)
            what = "video"
        else:
            data = io.read_bytes(task.source)
            header = io.check_header(data, task.source, io.max_pixels_limit(options.max_pixels))
            if header is None:
                image, _ = io.decode(data, task.source, max_pixels=options.max_pixels)
                size, frames = (image.shape[1], image.shape[0]), 1
            else:
                size, frames = header.size, header.frames
            what = f"{size[0]}x{size[1]}" + (f", {frames} frames" if frames > 1 else "")
        skipped = _skip(task, replace)
    except CvfError as exc:
        return Outcome(task, "failed", str(exc))
    if skipped is not None:
        return skipped
    target = "standard output" if task.stdout_format else str(task.target)
    verb = "replace" if task.stdout_format is None and os.path.lexists(task.target) else "write"
    return Outcome(task, "done", f"read {task.source} ({what}) -> {verb} {target}")


def _layout_of(header: Any) -> tuple[int, int]:
    """(channels at most, bytes per sample) of a decoded frame, from the Pillow mode (for the memory estimate)."""
    channels = 1 if header.mode in ("1", "L", "I", "I;16", "F") else 4
    return channels, 4 if header.mode in ("I", "F") else 2 if header.mode.startswith("I;16") else 1


def _skip(task: Task, replace: bool) -> Outcome | None:
    """The skipped outcome where the target exists and may not be replaced; an error if it is the input."""
    if task.stdout_format is None and os.path.lexists(task.target):
        if _same_file(task.source, task.target):
            raise OverwriteInputError(task.target)
        if not replace:
            return Outcome(task, "skipped", f"{task.target}: exists, skipped (--overwrite replaces it)")
    return None


def _process_image(task: Task, options: Options, pipeline: Pipeline, replace: bool) -> list[str] | Outcome:
    """One still or multi-frame image: the report lines of the run, or the skipped outcome."""
    data = io.read_bytes(task.source)
    limit = io.max_pixels_limit(options.max_pixels)
    header = io.check_header(data, task.source, limit)
    if header is None and task.stdout_format is None and os.path.lexists(task.target) and not replace:
        io.decode(data, task.source, max_pixels=limit)  # a header only OpenCV parses: validate by decoding
    skipped = _skip(task, replace)
    if skipped is not None:
        return skipped
    ext = task.stdout_format or task.target.suffix.lower()
    if animation.is_multiframe(header) and header is not None:
        channels, itemsize = _layout_of(header)
        check_memory(task.source, header.size[1], header.size[0], channels, itemsize, options.workers,
                     frames=header.frames)
        reports: list[Any] = []

        def step(frame: Any) -> Any:
            result, run_report = pipeline.run(frame, backend=options.backend)
            reports[:1] = [run_report]  # the report of one frame stands for all
            return result

        frames = animation.decode(data, task.source, header, options.frames, step)
        del data
        encoded = animation.encode(frames, ext, task.target, quality=options.quality,
                                   metadata=io.Metadata(icc=header.icc))
        report = [*reports[0].lines(), f"frames: {len(frames.frames)} of {frames.total}"]  # as run on each frame
    else:
        image, metadata = io.decode(data, task.source, max_pixels=limit)
        del data
        channels = 1 if image.ndim == 2 else image.shape[2]
        check_memory(task.source, image.shape[0], image.shape[1], channels, image.itemsize, options.workers)
        result, run_report = pipeline.run(image, backend=options.backend)
        encoded = io.encode(result, ext, name=task.target, metadata=metadata, quality=options.quality)
        report = run_report.lines()
    if task.stdout_format is not None:
        sys.stdout.buffer.write(encoded)
        sys.stdout.buffer.flush()
    else:
        io.write_bytes(task.target, encoded, overwrite=replace)
    return report


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
