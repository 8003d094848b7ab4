"""One task of a batch: validate, read, filter and write one image, animation or video.

Every problem with a file is one :class:`~cvfilters.run.tasks.Outcome` with a one-line
message, never an exception, so the rest of the batch goes on; :func:`dry_run` makes the same
decisions and writes nothing. Workers run :func:`process` (:mod:`cvfilters.run.batch` submits it).
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np

from cvfilters.core.errors import CvfError, ImageError, OverwriteInputError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io import colour, reading, regions, tiff_regions, writing, zarr_regions
from cvfilters.io import frames as frames_io
from cvfilters.io.formats import VIDEO_EXTENSIONS
from cvfilters.registry.params import allow_large
from cvfilters.run import budget as budgets
from cvfilters.run import streaming
from cvfilters.run.limits import check_memory
from cvfilters.run.tasks import Options, Outcome, Task


def _is_video(path: Path) -> bool:
    return path.suffix.lower() in VIDEO_EXTENSIONS


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
        piped = data if str(task.source) == "-" else None  # standard input can be read only once
        del data
        report = _process_frames(task, options, pipeline, header, ext, piped)
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
            # batch.run() syncs the folders
            writing.write_bytes(task.target, encoded, overwrite=replace, sync_directory=False)
    return report


def _target_name(task: Task) -> str:
    return "standard output" if task.stdout_format is not None else str(task.target)


def _process_frames(task: Task, options: Options, pipeline: Pipeline, header: Any, ext: str,
                    piped: bytes | None = None) -> list[str]:
    """An animation or multi-page TIFF, streamed: each frame is read, filtered and encoded in turn
    (converted to ``--colorspace`` first, and filtered in linear light when asked); ``piped``: the
    bytes already read from standard input."""
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

    source = piped if piped is not None else task.source
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
