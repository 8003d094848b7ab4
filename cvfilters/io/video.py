"""Video files through a pipeline, frame by frame, written atomically in the same container.

Frames are read with ``cv2.VideoCapture`` and written with ``cv2.VideoWriter`` at the
input's frame rate and size. ``cv2.VideoWriter`` writes no audio, so the input's audio
track is copied back with ffmpeg when one is available (the ``video`` extra installs
``imageio-ffmpeg``, which ships an ffmpeg binary); without it, a warning says the audio
track was dropped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from cvfilters.core import atomic
from cvfilters.core.errors import ImageReadError, ImageWriteError, OutputExistsError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io.quiet import quiet

# OpenCV's built-in FFmpeg writer: a codec each container holds.
FOURCC = {".mp4": "mp4v", ".mov": "mp4v", ".avi": "MJPG", ".mkv": "XVID"}


class AudioDroppedWarning(UserWarning):
    """The output has no audio track because no ffmpeg binary was found to copy it."""


@dataclass(frozen=True)
class VideoResult:
    """Frames written, frame rate and whether the audio track was copied."""

    frames: int
    fps: float
    audio: bool


def ffmpeg_binary() -> str | None:
    """An ffmpeg executable: imageio-ffmpeg's bundled one, else one on PATH, else None."""
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        return shutil.which("ffmpeg")


def check_readable(source: str | os.PathLike[str]) -> None:
    """Raise :class:`ImageReadError` naming ``source`` unless OpenCV opens it as a video."""
    with quiet():  # FFmpeg prints its complaint ("moov atom not found") on descriptor 2
        capture = cv2.VideoCapture(os.fspath(source))
        opened = capture.isOpened()
        capture.release()
    if not opened:
        raise ImageReadError(source, "cannot be opened as a video")


def process_video(source: str | os.PathLike[str], target: str | os.PathLike[str], pipeline: Pipeline, *,
                  backend: str = "auto", frames: tuple[int, int | None] | None = None, overwrite: bool = False,
                  progress: Callable[[int, int], None] | None = None) -> VideoResult:
    """Run ``pipeline`` on every frame of ``source`` and write ``target`` atomically.

    Parameters
    ----------
    source, target : path
        Video files; the target's container is chosen by its extension (mp4, mov, avi, mkv).
    pipeline : Pipeline
        Must keep the frame size (the writer is opened with the input's size).
    frames : (start, stop), optional
        Frame range ``start:stop`` (stop exclusive, None = to the end).
    progress : callable, optional
        Called as ``progress(done, total)`` after each frame.

    Raises
    ------
    ImageReadError, ImageWriteError
        Naming the file: unreadable video, unknown container, frames that change size.
    """
    source, target = Path(source), Path(target)
    if target.exists() and not overwrite:
        raise OutputExistsError(target)
    fourcc = FOURCC.get(target.suffix.lower())
    if fourcc is None:
        raise ImageWriteError(target, f"cannot be written: no video container for {target.suffix!r}")
    with quiet():
        capture = cv2.VideoCapture(str(source))
    if not capture.isOpened():
        raise ImageReadError(source, "cannot be opened as a video")
    fps = capture.get(cv2.CAP_PROP_FPS) or 25.0
    total = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    start, stop = frames or (0, None)
    stop = total if stop is None else min(stop, total)
    if start:
        capture.set(cv2.CAP_PROP_POS_FRAMES, start)
    try:
        with atomic.replacing(target, keep_suffix=True) as temporary:
            written = _filter_frames(capture, temporary, fourcc, fps, pipeline, backend, stop - start, progress)
            audio = _copy_audio(source, temporary, start / fps if start else 0.0)
    finally:
        capture.release()
    return VideoResult(written, fps, audio)


def _filter_frames(capture: cv2.VideoCapture, temporary: Path, fourcc: str, fps: float, pipeline: Pipeline,
                   backend: str, count: int, progress: Callable[[int, int], None] | None) -> int:
    writer: cv2.VideoWriter | None = None
    written = 0
    try:
        while written < count:
            ok, frame = capture.read()
            if not ok:
                break
            out = pipeline(frame, backend=backend)
            if writer is None:
                size = (frame.shape[1], frame.shape[0])
                writer = cv2.VideoWriter(str(temporary), cv2.VideoWriter.fourcc(*fourcc), fps, size)
                if not writer.isOpened():
                    raise ImageWriteError(temporary, f"cannot be written: OpenCV has no {fourcc} encoder")
            if out.shape != frame.shape:
                raise ImageWriteError(temporary, "the pipeline changes the frame size; videos keep their size")
            writer.write(np.ascontiguousarray(out))
            written += 1
            if progress is not None:
                progress(written, count)
    finally:
        if writer is not None:
            writer.release()
    if written == 0:
        raise ImageReadError(temporary, "no frames could be read from the video")
    return written


def _copy_audio(source: Path, video: Path, offset: float) -> bool:
    """Mux the audio of ``source`` into ``video`` in place; False when there is none or no ffmpeg."""
    ffmpeg = ffmpeg_binary()
    if ffmpeg is None:
        warnings.warn(f"{source}: audio track (if any) dropped: install ffmpeg or `pip install \"cvfilters[video]\"`",
                      AudioDroppedWarning, stacklevel=3)
        return False
    muxed = atomic.temporary_name(video, keep_suffix=True)
    command = [ffmpeg, "-v", "error", "-y", "-i", str(video), "-ss", f"{offset:.6f}", "-i", str(source),
               "-map", "0:v:0", "-map", "1:a?", "-c:v", "copy", "-c:a", "copy", "-shortest", str(muxed)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0 or not muxed.exists():
            warnings.warn(f"{source}: audio track dropped: ffmpeg could not copy it "
                          f"({result.stderr.strip().splitlines()[-1] if result.stderr.strip() else 'no message'})",
                          AudioDroppedWarning, stacklevel=3)
            return False
        has_audio = _has_audio(ffmpeg, muxed)
        os.replace(muxed, video)
        return has_audio
    finally:
        with contextlib.suppress(OSError):
            os.unlink(muxed)


def _has_audio(ffmpeg: str, path: Path) -> bool:
    probe = subprocess.run([ffmpeg, "-hide_banner", "-i", str(path)], capture_output=True, text=True, check=False)
    return "Audio:" in probe.stderr
