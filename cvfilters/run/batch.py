"""Many files through one pipeline: planning output names, running tasks, collecting outcomes.

A task carries two paths; workers rebuild the pipeline from its dict form, so no
pixels cross process boundaries. Every failure is one :class:`Outcome` with a one-line
message; the rest of the batch goes on. Where tasks run is a
``concurrent.futures.Executor`` (see :mod:`cvfilters.run.executors`): a local process
pool by default, a Dask cluster with ``--scheduler``.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import cv2
import numpy as np

from cvfilters.core import atomic, leftovers, machine
from cvfilters.core.errors import CvfError, ImageError, OverwriteInputError, UsageError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io import colour, reading, regions, tiff_regions, writing, zarr_regions
from cvfilters.io import frames as frames_io
from cvfilters.io.formats import IMAGE_EXTENSIONS, VIDEO_EXTENSIONS
from cvfilters.registry.params import allow_large
from cvfilters.run import budget as budgets
from cvfilters.run import streaming
from cvfilters.run.limits import check_memory

if TYPE_CHECKING:  # concurrent.futures (and logging with it) is imported when an executor runs
    from concurrent.futures import Executor


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
    colorspace: str | None = None
    intent: str = "relative"
    linear: bool = False
    lossless: bool = False
    dither: bool = False
    memory: int | None = None  # the budget of the whole run (bytes); None: derived from the machine
    tile_size: int | None = None  # force this output tile side
    scheduler: str | None = None  # run the tiles of one streamed image on this Dask cluster

    def budget(self) -> int:
        """Each worker's part of the memory budget."""
        return budgets.share(budgets.resolve(self.memory), self.workers)

    def tile_workers(self) -> int:
        """Threads running the tiles of one image: every core when this is the only worker."""
        return machine.cores() if self.workers <= 1 else 1


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
        if path.is_dir() and not zarr_regions.is_zarr(path):
            walker = path.rglob("*") if recursive else path.glob("*")
            found = [(f, f.relative_to(path)) for f in sorted(walker) if _is_media(f)]
            if not found:
                hint = "" if recursive else " (--recursive descends into sub-directories)"
                failures.append(Outcome(Task(path, path), "failed",
                                        f"{item}: is a directory without image or video files{hint}"))
            sources += found
        elif glob.has_magic(item) and not path.exists():
            base = _glob_base(item)
            matches = _glob(item)
            if not matches:
                failures.append(Outcome(Task(path, path), "failed", f"{item}: no files match"))
            sources += [(m, m.relative_to(base)) for m in matches]
        else:
            plain_files += 1
            sources.append((path, Path(path.name)))
    out = Path(output)
    named = not out.is_dir() or zarr_regions.is_zarr(out)  # an existing Zarr array is an output, not a folder
    single = len(inputs) == 1 and plain_files == 1 and named and out.suffix != ""
    if not single and len(inputs) == 1 and plain_files == 1 and named and not output.endswith(("/", os.sep)):
        raise UsageError(f"-o {output}: has no extension; name an image file (such as {output}.png) or a folder "
                         f"with a trailing slash ({output}/)")
    if not single and out.suffix.lower() in IMAGE_EXTENSIONS | VIDEO_EXTENSIONS | zarr_regions.ZARR_EXTENSIONS \
            and named:
        what = f"{len(inputs)} inputs" if len(inputs) > 1 else "a directory or glob input"
        raise UsageError(f"-o {output}: names a file, but {what} need an output directory "
                         "(give a folder name, or one input file)")
    tasks: list[Task] = []
    claimed: dict[Path, Path] = {}
    inputs_found = {Path(os.path.realpath(source)) for source, _ in sources}
    inodes = {_inode(source) for source, _ in sources} - {None}
    for source, relative in sources:
        target = out if single else out / _renamed(relative, extension, name_suffix)
        key = Path(os.path.abspath(target))
        if Path(os.path.realpath(target)) in inputs_found or _inode(target) in inodes:  # a hard link too
            failures.append(Outcome(Task(source, target), "failed",
                                    f"{source}: output {target} would replace an input file; cvfilters never "
                                    "overwrites its inputs", usage=True))
            continue
        if key in claimed:
            failures.append(Outcome(Task(source, target), "failed",
                                    f"{source}: output {target} is also the output of {claimed[key]}"))
            continue
        if os.path.lexists(source):  # a missing input fails on its own; it claims no output name
            claimed[key] = source
        tasks.append(Task(source, target, replace=single))
    if single and tasks:  # not an input (that is reported above): a format we write, in a folder that exists
        _check_named_output(output)
    return tasks, failures


def _plan_stream(inputs: Sequence[str], output: str, extension: str | None) -> tuple[list[Task], list[Outcome]]:
    """``-`` as the input (standard input) or the output (standard output): one input, one output."""
    if len(inputs) != 1:
        raise UsageError("- (standard input or output) takes exactly one input")
    source = Path(inputs[0])
    if source.suffix.lower() in VIDEO_EXTENSIONS or Path(output).suffix.lower() in VIDEO_EXTENSIONS:
        raise UsageError("- (standard input or output) takes images, not videos")
    if output == "-":
        ext = extension or (source.suffix.lower() if inputs[0] != "-" else None)
        if ext not in IMAGE_EXTENSIONS:
            raise UsageError("-o - (standard output) needs --format EXT (png, jpg, tif, ...)")
        return [Task(source, Path("-"), replace=True, stdout_format=ext)], []
    target = Path(output)
    if Path(output).is_dir() or target.suffix.lower() not in IMAGE_EXTENSIONS:
        raise UsageError(f"-o {output}: an input from standard input needs an output image file name")
    return [Task(source, target, replace=True)], []


def _renamed(relative: Path, extension: str | None, name_suffix: str) -> Path:
    is_video = relative.suffix.lower() in VIDEO_EXTENSIONS
    new_extension = relative.suffix if is_video or not extension else extension
    return relative.with_name(relative.stem + name_suffix + new_extension)


def _is_video(path: Path) -> bool:
    return path.suffix.lower() in VIDEO_EXTENSIONS


def _is_media(path: Path) -> bool:
    """An image or video file by its extension; broken symlinks count, so they are reported, not skipped."""
    return path.suffix.lower() in IMAGE_EXTENSIONS | VIDEO_EXTENSIONS and (path.is_file() or path.is_symlink())


def _check_named_output(output: str) -> None:
    """A single named output file: a format cvfilters writes, in a folder that exists (as ``cp``)."""
    out = Path(output)
    if out.suffix.lower() not in IMAGE_EXTENSIONS | VIDEO_EXTENSIONS | zarr_regions.ZARR_EXTENSIONS:
        raise UsageError(f"-o {output}: no encoder for {out.suffix} (image formats: "
                         f"{', '.join(sorted(IMAGE_EXTENSIONS))})")
    if not out.parent.is_dir():
        raise UsageError(f"-o {output}: folder {out.parent} does not exist (a single output file is written into an "
                         "existing folder)")


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _glob(pattern: str) -> list[Path]:
    """The files a glob matches, by Python's rules (``**`` descends), its extension matched in any case,
    each file once, never through a symlink to one of its own ancestors (a loop)."""
    head, tail = os.path.split(pattern)
    stem, dot, suffix = tail.rpartition(".")
    if dot and stem and suffix.isalnum():
        tail = f"{stem}." + "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in suffix)
    found: dict[str, Path] = {}
    for match in sorted(glob.glob(os.path.join(head, tail), recursive=True), key=lambda m: (m.count(os.sep), m)):
        path = Path(match)
        if path.is_file() and not _through_loop(path):
            found.setdefault(os.path.realpath(path), path)
    return sorted(found.values())


def _through_loop(path: Path) -> bool:
    parts = path.parent.parts
    for count in range(1, len(parts) + 1):
        current = Path(*parts[:count])
        if current.is_symlink():
            real, above = os.path.realpath(current), os.path.realpath(current.parent)
            if above == real or above.startswith(real.rstrip(os.sep) + os.sep):
                return True
    return False


def _glob_base(pattern: str) -> Path:
    parts = Path(pattern).parts
    fixed = list(parts[: next(i for i, p in enumerate(parts) if glob.has_magic(p))])
    return Path(*fixed) if fixed else Path(".")


# ---------------------------------------------------------------- running
@lru_cache(maxsize=4)
def _pipeline(frozen: str, large: bool, fuse: bool, linear: bool) -> Pipeline:
    import json

    with allow_large(large):
        pipeline = Pipeline.from_dict(json.loads(frozen))
    pipeline.fuse = fuse
    pipeline.linear = linear  # videos (sRGB frames); images pass their own profile's transfer
    return pipeline


def process(task: Task, options: Options, progress: Callable[[int, int], None] | None = None) -> Outcome:
    """Validate, read, filter and write one image, animation or video; never raises for a problem with the file.

    The input is validated (exists, readable, a decodable header within the pixel limit)
    before an existing output is skipped, so a bad input is an error whatever exists at its
    output path. ``progress(done, total)`` is called per frame of a video.
    """
    import json

    pipeline = _pipeline(json.dumps(options.pipeline, sort_keys=True), options.allow_large, options.fuse,
                         options.linear)
    replace = options.overwrite or task.replace
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):  # NaN/inf pass through quietly
        warnings.simplefilter("always")
        try:
            if _streams(task, options):
                done = _stream_image(task, options, pipeline, replace)
                if isinstance(done, Outcome):
                    return done
                report = done
            elif _is_video(task.source) or _is_video(task.target):
                from cvfilters.io.video import check_readable, process_video

                if _is_video(task.source):
                    reading.check_file(task.source)
                    if os.path.lexists(task.target) and not replace:
                        check_readable(task.source)  # a bad input is an error, not a skip
                else:
                    reading.check_header(reading.read_bytes(task.source), task.source,
                                         reading.max_pixels_limit(options.max_pixels))
                skipped = _skip(task, replace)
                if skipped is not None:
                    return skipped
                video = process_video(task.source, task.target, pipeline, backend=options.backend,
                                      frames=options.frames, overwrite=replace, quality=options.quality,
                                      progress=progress)
                audio = "kept" if video.audio else "none"
                report = [f"video: {video.frames} frames at {video.fps:g} fps, audio {audio}"]
            else:
                done = _process_image(task, options, pipeline, replace)
                if isinstance(done, Outcome):
                    return done
                report = done
        except ImageError as exc:
            return Outcome(task, "failed", str(exc))
        except CvfError as exc:  # about this image but not naming it (NaN for k-means, a model's output size)
            return Outcome(task, "failed", f"{task.source}: {exc}")
        except cv2.error as exc:
            return Outcome(task, "failed", f"{task.source}: OpenCV error: {_last_line(exc)}")
        except MemoryError:
            return Outcome(task, "failed", f"{task.source}: out of memory")
        except OSError as exc:  # standard output closed or full (-o -); file writes raise ImageWriteError
            return Outcome(task, "failed", f"{task.source}: cannot write {_target_name(task)}: {exc.strerror or exc}")
        except Exception as exc:  # a bug in one filter on one file: that file fails, the batch goes on
            return Outcome(task, "failed", f"{task.source}: internal error: {type(exc).__name__}: {_last_line(exc)}")
    notes = [str(w.message) if str(w.message).startswith(str(task.source)) else f"{task.source}: {w.message}"
             for w in caught]
    return Outcome(task, "done", str(task.target), notes, report)


def dry_run(task: Task, options: Options) -> Outcome:
    """What :func:`process` would do with ``task``, writing nothing: the same validation and
    skip decision; ``done`` means it would be written, with what was read in the message."""
    replace = options.overwrite or task.replace
    try:
        if task.source.suffix.lower() in VIDEO_EXTENSIONS:
            from cvfilters.io.video import check_readable

            reading.check_file(task.source)
            check_readable(task.source)
            what = "video"
        elif _streams(task, options):
            source = regions.open_source(task.source)
            streaming.check_claimed(task.source, source.shape, source.dtype,
                                    reading.max_pixels_limit(options.max_pixels))
            what = f"{source.shape[1]}x{source.shape[0]}, read in pieces"
        else:
            data = reading.read_bytes(task.source)
            header = reading.check_header(data, task.source, reading.max_pixels_limit(options.max_pixels))
            if header is None:
                image, _ = reading.decode(data, task.source, max_pixels=options.max_pixels)
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


def _streams(task: Task, options: Options) -> bool:
    """Whether ``task`` reads its input in pieces: a Zarr array always, a TIFF when tiles run on the CPU
    (and no colour conversion or linear light is asked: those run on the decoded image)."""
    if str(task.source) == "-" or options.colorspace or options.linear:
        return False
    return zarr_regions.is_zarr(task.source) or (options.backend in streaming.TILED_BACKENDS
                                            and streaming.wanted(task.source))


def _stream_image(task: Task, options: Options, pipeline: Pipeline, replace: bool) -> list[str] | Outcome:
    """A TIFF or Zarr input, read in pieces (:mod:`cvfilters.run.streaming`): the report lines, or the skip."""
    source = regions.open_source(task.source)  # validates the input before any skip decision
    streaming.check_claimed(task.source, source.shape, source.dtype, reading.max_pixels_limit(options.max_pixels))
    if isinstance(source, tiff_regions.TiffSource):
        source.close()
    skipped = _skip(task, replace)
    if skipped is not None:
        return skipped
    done = streaming.run(task.source, task.target, pipeline, budget=options.budget(), tile_size=options.tile_size,
                         workers=options.tile_workers(), scheduler=options.scheduler, overwrite=True,
                         max_pixels=options.max_pixels, quality=options.quality, stdout_format=task.stdout_format)
    return done.lines


def _process_image(task: Task, options: Options, pipeline: Pipeline, replace: bool) -> list[str] | Outcome:
    """One still or multi-frame image: the report lines of the run, or the skipped outcome."""
    limit = reading.max_pixels_limit(options.max_pixels)
    ext = task.stdout_format or task.target.suffix.lower()
    if str(task.source) != "-":  # a file of many frames streams: its bytes are never held whole
        header = frames_io.probe(task.source, limit)
        if frames_io.is_multiframe(header) and header is not None:
            skipped = _skip(task, replace)
            return skipped if skipped is not None else _process_frames(task, options, pipeline, header, ext)
    data = reading.read_bytes(task.source)
    header = reading.check_header(data, task.source, limit)
    if header is None and task.stdout_format is None and os.path.lexists(task.target) and not replace:
        reading.decode(data, task.source, max_pixels=limit)  # a header only OpenCV parses: validate by decoding
    skipped = _skip(task, replace)
    if skipped is not None:
        return skipped
    if frames_io.is_multiframe(header) and header is not None:
        del data
        report = _process_frames(task, options, pipeline, header, ext)
    else:
        image, metadata = reading.decode(data, task.source, max_pixels=limit)
        space = colour.colourspace_of(metadata.icc, metadata.exif, data)
        image, metadata = colour.to_colourspace(image, metadata, options.colorspace,
                                            cast(colour.Intent, options.intent), data)
        del data
        budget = options.budget()
        light = colour.transfer_of(metadata.icc) if options.linear else None
        if light is None and options.backend in streaming.TILED_BACKENDS and (
                options.tile_size is not None or streaming.too_large_for_whole(image, budget)):
            result, plan = streaming.process_array(image, pipeline, budget=budget, tile_size=options.tile_size,
                                                   workers=options.tile_workers())
            report = [f"memory budget: {budgets.describe(budget)}", *plan.explain()]
        else:  # linear light runs whole-image: the tile runner does not decode the transfer function
            channels = 1 if image.ndim == 2 else image.shape[2]
            check_memory(task.source, image.shape[0], image.shape[1], channels, image.itemsize, options.workers)
            result, run_report = pipeline.run(image, backend=options.backend, linear=light or False)
            report = run_report.lines()
        del image
        if zarr_regions.is_zarr(task.target):
            zarr_regions.write_zarr(task.target, result)
            return report
        encoded = writing.encode(result, ext, name=task.target, metadata=metadata, quality=options.quality,
                            lossless=options.lossless, dither=options.dither)
        converted = f" -> {options.colorspace} ({options.intent})" if options.colorspace else ""
        report = [*report, f"colour: {space.name} [{space.source}]{converted}"
                           + (f"; linear light: {light.name} transfer" if light else "")]
        if task.stdout_format is not None:
            frames_io.write_stdout(encoded)
        else:
            # run() syncs the folders
            writing.write_bytes(task.target, encoded, overwrite=replace, sync_directory=False)
    return report


def _target_name(task: Task) -> str:
    return "standard output" if task.stdout_format is not None else str(task.target)


def _process_frames(task: Task, options: Options, pipeline: Pipeline, header: Any, ext: str) -> list[str]:
    """An animation or multi-page TIFF, streamed: each frame is read, filtered and encoded in turn
    (converted to ``--colorspace`` first, and filtered in linear light when asked)."""
    channels, itemsize = _layout_of(header)
    check_memory(task.source, header.size[1], header.size[0], channels, itemsize, options.workers, frames=2)
    reports: list[Any] = []
    converting = options.colorspace not in (None, "keep")
    target_icc = colour.profile_bytes(options.colorspace) if options.colorspace and converting else header.icc
    if channels == 1:  # grey frames are not converted (colour.convert), so they keep their file's profile
        converting, target_icc = False, header.icc
    transfer = colour.transfer_of(target_icc) if options.linear else False

    def filtered(frame: frames_io.Frame) -> frames_io.Frame:
        image = frame.image
        if target_icc is not None and converting:
            image = colour.convert(image, header.icc, target_icc, cast(colour.Intent, options.intent))
        result, run_report = pipeline.run(image, backend=options.backend, linear=transfer)
        reports[:1] = [run_report]  # the report of one frame stands for all
        return frame.replace(result)

    source = reading.read_bytes(task.source) if str(task.source) == "-" else task.source
    with frames_io.read_frames(source, frames=options.frames, max_pixels=options.max_pixels) as reader:
        target = "-" if task.stdout_format is not None else task.target
        like = dataclasses.replace(reader.info, icc=target_icc)
        count = frames_io.write_frames(target, map(filtered, reader), fmt=ext, like=like,
                                       quality=options.quality, lossless=options.lossless, dither=options.dither)
    return [*reports[0].lines(), f"frames: {count} of {reader.info.count}"]  # as run on each frame


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
