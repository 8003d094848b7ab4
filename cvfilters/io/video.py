"""Video files through a pipeline, frame by frame; videos and animations convert into each other.

Frames are read with ``cv2.VideoCapture`` and written by ffmpeg (the ``video`` extra installs
``imageio-ffmpeg``, which ships a binary): H.264 in MP4, MOV and MKV, VP9 in WebM (which holds
alpha), Motion JPEG in AVI, each container's codec from its :class:`cvfilters.io.formats.VideoFormat`
record, ``quality`` mapped to the codec's CRF scale. Without ffmpeg, OpenCV's own writer is the
fallback (mp4v, XVID, MJPG) and a warning names it; WebM then cannot be written.

The output size is the first frame's result; every later frame is checked against it. Every
write to ffmpeg is checked and so is its exit status; the file is written beside the target and
renamed onto it only when complete, so a failed write (a full disk) leaves an existing output as
it was and is one error naming the user's path. The audio track of a video input is copied back
with ffmpeg where there is one.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import cv2
import numpy as np

from cvfilters.core import atomic
from cvfilters.core.errors import ImageReadError, ImageWriteError, OutputExistsError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io import formats, writing
from cvfilters.io import frames as frames_io
from cvfilters.io.quiet import quiet

DEFAULT_FPS = 25.0


class AudioDroppedWarning(UserWarning):
    """The output has no audio track because no ffmpeg binary was found to copy it."""


class CodecFallbackWarning(UserWarning):
    """ffmpeg was not found, so OpenCV's own writer wrote the video with an older codec."""


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

        return str(imageio_ffmpeg.get_ffmpeg_exe())
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


class VideoReader:
    """The frames of a video, decoded one at a time (``fps``, ``count``; iterate once, then close)."""

    def __init__(self, source: str | os.PathLike[str], frames: tuple[int, int | None] | None = None) -> None:
        self.source = source
        with quiet():
            self.capture = cv2.VideoCapture(os.fspath(source))
        if not self.capture.isOpened():
            raise ImageReadError(source, "cannot be opened as a video")
        self.fps = self.capture.get(cv2.CAP_PROP_FPS) or DEFAULT_FPS
        total = int(self.capture.get(cv2.CAP_PROP_FRAME_COUNT))
        self.start, stop = frames or (0, None)
        self.count = max(0, (total if stop is None else min(stop, total)) - self.start)
        if self.start:
            self.capture.set(cv2.CAP_PROP_POS_FRAMES, self.start)

    def __iter__(self) -> Iterator[frames_io.Frame]:
        duration = round(1000 / self.fps)
        for _ in range(self.count):
            ok, frame = self.capture.read()
            if not ok:
                return
            yield frames_io.Frame(frame, duration)

    def close(self) -> None:
        """Release the decoder."""
        self.capture.release()


def write_video(target: str | os.PathLike[str], frames: Iterable[frames_io.Frame | np.ndarray], fps: float, *,
                quality: int | None = None, overwrite: bool = True) -> int:
    """Encode frames into the video ``target`` (container by extension) atomically; returns the count.

    Frames are uint8 (other depths are scaled, with a warning), grey, BGR or BGRA; alpha is kept
    in WebM and dropped with a warning elsewhere. Raises :class:`ImageWriteError` naming
    ``target`` for an unknown container, frames that change size, or any failed write.
    """
    target = Path(target)
    record = formats.video_format(target.suffix)
    if record is None:
        raise ImageWriteError(target, f"cannot be written: no video container for {target.suffix!r}")
    if not overwrite and os.path.lexists(target):
        raise OutputExistsError(target)
    try:
        with atomic.replacing(target, keep_suffix=True) as temporary:
            return _encode(target, temporary, record, iter(frames), fps, quality)
    except OSError as exc:
        raise ImageWriteError(target, f"cannot be written: {exc.strerror or exc}") from exc


def _encode(target: Path, temporary: Path, record: formats.VideoFormat, frames: Iterator[Any], fps: float,
            quality: int | None) -> int:
    first = next(frames, None)
    if first is None:
        raise ImageWriteError(target, "cannot be written: no frames")
    first = first if isinstance(first, frames_io.Frame) else frames_io.Frame(np.asarray(first))
    alpha = record.alpha and first.image.ndim == 3 and first.image.shape[2] == 4
    height, width = first.image.shape[:2]
    ffmpeg = ffmpeg_binary()
    sink = _FfmpegSink(ffmpeg, temporary, record, width, height, fps, quality, alpha) if ffmpeg else \
        _OpenCvSink(target, temporary, record, width, height, fps)
    count = 0
    with warnings.catch_warnings(record=True) as caught:  # the same conversion warning for every frame: once
        warnings.simplefilter("always")
        try:
            for frame in itertools.chain((first,), frames):
                image = frame.image if isinstance(frame, frames_io.Frame) else np.asarray(frame)
                if image.shape[:2] != (height, width):
                    raise ImageWriteError(target, f"cannot be written: frame {count} is {image.shape[1]}x"
                                                  f"{image.shape[0]}, the first {width}x{height} (a video keeps "
                                                  "one size)")
                sink.write(_video_frame(target, image, alpha))
                count += 1
        finally:
            sink.close(failed=count == 0)
    frames_io.reissue_once(caught)
    return count


def _video_frame(target: Path, image: np.ndarray, alpha: bool) -> np.ndarray:
    """8-bit BGR (BGRA where the codec keeps alpha), converted as still images are, with warnings."""
    if image.ndim == 2 or image.shape[2] == 1:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4 and not alpha:
        warnings.warn(f"{target}: {target.suffix} holds no alpha channel; it is dropped (.webm keeps it)",
                      writing.DepthConversionWarning, stacklevel=2)
        image = image[..., :3]
    # BMP's record (8-bit, 1, 3 or 4 channels) is a video frame's; the warning names the container
    return np.ascontiguousarray(writing.storable(target, ".bmp", image, shown=target.suffix))


class _FfmpegSink:
    """Raw frames piped into ffmpeg; every write and the exit status checked."""

    def __init__(self, ffmpeg: str, temporary: Path, record: formats.VideoFormat, width: int, height: int,
                 fps: float, quality: int | None, alpha: bool) -> None:
        codec = record.codecs[0]
        command = [ffmpeg, "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "bgra" if alpha else "bgr24",
                   "-s", f"{width}x{height}", "-r", f"{fps:.6f}", "-i", "-", "-c:v", codec]
        if codec == "mjpeg":
            command += ["-pix_fmt", "yuvj420p", "-q:v", str(_scale(quality, 2, record.max_crf, 3))]
        else:
            even = width % 2 == 0 and height % 2 == 0
            pix_fmt = "yuva420p" if alpha else "yuv420p" if even else "yuv444p"
            command += ["-pix_fmt", pix_fmt, "-crf", str(_scale(quality, 0, record.max_crf,
                                                                23 if codec == "libx264" else 31))]
            command += ["-b:v", "0"] if codec == "libvpx-vp9" else []
        self.process = subprocess.Popen([*command, str(temporary)], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr = ""

    def write(self, image: np.ndarray) -> None:
        stdin: IO[bytes] | None = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(image.data)
        except (BrokenPipeError, OSError):
            self.close(failed=True)
            raise OSError(self.stderr or "ffmpeg stopped") from None

    def close(self, *, failed: bool) -> None:
        if self.process.returncode is not None:
            return
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        err = b""
        if self.process.stderr is not None:
            with self.process.stderr:
                err = self.process.stderr.read()
        self.process.wait()
        lines = [line for line in err.decode(errors="replace").splitlines() if line.strip()]
        self.stderr = lines[-1].strip() if lines else ""
        if self.process.returncode != 0 and not failed:
            raise OSError(f"ffmpeg failed: {self.stderr or f'exit status {self.process.returncode}'}")


class _OpenCvSink:
    """OpenCV's writer, the fallback without ffmpeg (the result is checked by reading it back)."""

    def __init__(self, target: Path, temporary: Path, record: formats.VideoFormat, width: int, height: int,
                 fps: float) -> None:
        if record.fallback_fourcc is None:
            raise ImageWriteError(target, f"cannot be written: {target.suffix} needs ffmpeg (pip install "
                                          "\"cvfilters[video]\")")
        warnings.warn(f"{target}: ffmpeg not found; written with OpenCV's {record.fallback_fourcc} codec instead of "
                      f"{record.codecs[0]} (pip install \"cvfilters[video]\")", CodecFallbackWarning, stacklevel=4)
        self.temporary, self.count = temporary, 0
        self.writer = cv2.VideoWriter(str(temporary), cv2.VideoWriter.fourcc(*record.fallback_fourcc), fps,
                                      (width, height))
        if not self.writer.isOpened():
            raise ImageWriteError(target, f"cannot be written: OpenCV has no {record.fallback_fourcc} encoder")

    def write(self, image: np.ndarray) -> None:
        self.writer.write(image[..., :3])
        self.count += 1

    def close(self, *, failed: bool) -> None:
        self.writer.release()
        if failed:
            return
        with quiet():
            capture = cv2.VideoCapture(str(self.temporary))
            frames = int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) if capture.isOpened() else -1
            capture.release()
        if frames < self.count:
            raise OSError(f"OpenCV's writer wrote {max(frames, 0)} of {self.count} frames")


def _scale(quality: int | None, best: int, worst: int, default: int) -> int:
    """``quality`` 1-100 onto a codec scale where ``best`` is the finest (CRF, q:v); None: ``default``."""
    if quality is None:
        return default
    return round(worst + (best - worst) * (quality - 1) / 99)


def process_video(source: str | os.PathLike[str], target: str | os.PathLike[str], pipeline: Pipeline, *,
                  backend: str = "auto", frames: tuple[int, int | None] | None = None, overwrite: bool = False,
                  quality: int | None = None, progress: Callable[[int, int], None] | None = None) -> VideoResult:
    """Run ``pipeline`` on every frame of ``source`` and write ``target`` atomically.

    Parameters
    ----------
    source, target : path
        A video or an animation in, a video or an animation (GIF, WebP, APNG, TIFF pages) out;
        at least one of them a video. The target's container is chosen by its extension.
    pipeline : Pipeline
        May change the frame size (the output takes the first frame's result size).
    frames : (start, stop), optional
        Frame range ``start:stop`` (stop exclusive, None = to the end).
    quality : int, optional
        1-100, mapped onto the codec's CRF (None: the codec's default).
    progress : callable, optional
        Called as ``progress(done, total)`` after each frame.

    Raises
    ------
    ImageReadError, ImageWriteError
        Naming the file: unreadable video, unknown container, frames that change size, a failed write.
    """
    source, target = Path(source), Path(target)
    if os.path.lexists(target) and not overwrite:
        raise OutputExistsError(target)
    if formats.video_format(source.suffix) is not None:
        reader: Any = VideoReader(source, frames)
        fps, total, closing = reader.fps, reader.count, reader.close
    else:
        reader = frames_io.read_frames(source, frames=frames)
        fps, total, closing = DEFAULT_FPS, reader.info.selected or 0, reader.close
    done = 0

    def filtered(frame: frames_io.Frame) -> frames_io.Frame:
        nonlocal done
        result = frame.replace(pipeline(frame.image, backend=backend))
        done += 1
        if progress is not None:
            progress(done, total)
        return result

    def read() -> Iterator[frames_io.Frame]:  # a video that gives no frame (a range past its end) is a read error
        yield from map(filtered, reader)
        if done == 0:
            raise ImageReadError(source, "no frames could be read from the video")

    try:
        if formats.video_format(target.suffix) is None:
            written = frames_io.write_frames(target, read(), quality=quality, overwrite=True)
            return VideoResult(written, fps, False)
        stream: Iterator[frames_io.Frame] = read()
        if isinstance(reader, frames_io.FrameReader):  # an animation's first frame sets the frame rate
            head = next(stream, None)
            fps = 1000 / head.duration if head is not None and head.duration else DEFAULT_FPS
            stream = itertools.chain((head,), stream) if head is not None else stream
        written = write_video(target, stream, fps, quality=quality)
    finally:
        closing()
    audio = isinstance(reader, VideoReader) and _copy_audio(source, target, reader.start / fps)
    return VideoResult(written, fps, audio)


def _copy_audio(source: Path, video: Path, offset: float) -> bool:
    """Mux the audio of ``source`` into ``video`` (replaced atomically); False when there is none or no ffmpeg."""
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
        if has_audio:
            atomic.fsync_file(muxed)
            os.replace(muxed, video)
        return has_audio
    finally:
        with contextlib.suppress(OSError):
            os.unlink(muxed)


def _has_audio(ffmpeg: str, path: Path) -> bool:
    probe = subprocess.run([ffmpeg, "-hide_banner", "-i", str(path)], capture_output=True, text=True, check=False)
    return "Audio:" in probe.stderr
