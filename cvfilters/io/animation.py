"""Images with many frames: animated GIF, WebP, PNG (APNG) and AVIF, and multi-page TIFF.

Frames are decoded once with OpenCV 5's ``imdecodeanimation`` (durations in ms and the loop
count as OpenCV counts it: 0 forever, else the number of plays) or ``imdecodemulti`` (TIFF
pages, depth kept, one page at a time), go through the pipeline one by one, each result
replacing its input frame (so memory holds about one decoded copy of the frames plus one
frame's working set), and are encoded together (OpenCV's encoders take whole animations). An animation written to a
format that holds one frame keeps the first, with a warning that says so.

The pixel limit applies to all frames together, from the header, before decoding.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from cvfilters.core.errors import ImageWriteError, TruncatedImageError
from cvfilters.io import images as io
from cvfilters.io import orientation
from cvfilters.io.decoders import Header, drop_opaque_gif_alpha
from cvfilters.io.quiet import quiet

TIMED_FORMATS = frozenset({"GIF", "WEBP", "PNG", "AVIF"})
ANIMATED_EXTENSIONS = frozenset({".gif", ".webp", ".png", ".avif"})
PAGED_EXTENSIONS = frozenset({".tif", ".tiff"})
DEFAULT_DURATION_MS = 100
_ALL = 32767  # OpenCV's "every frame"


@dataclass
class Frames:
    """The frames of one file, with per-frame durations (ms) and the loop count (timed formats only)."""

    frames: list[np.ndarray]
    durations: list[int] = field(default_factory=list)
    loop: int = 0
    total: int = 0  # frames in the file (``frames`` may hold a range of them)


def is_multiframe(header: Header | None) -> bool:
    """Whether the header describes an animation or a multi-page TIFF."""
    return header is not None and header.frames > 1 and (header.format in TIMED_FORMATS or header.format == "TIFF")


def decode(data: bytes, name: io.StrPath, header: Header, frames: tuple[int, int | None] | None = None,
           step: Callable[[np.ndarray], np.ndarray] | None = None) -> Frames:
    """Decode every frame (or ``frames = (start, stop)``, stop exclusive) of a multi-frame file,
    applying ``step`` to each as it comes.

    TIFF pages are decoded one at a time (each input page is released once ``step`` has run);
    the frames of an animation all at once (its decoders composite each frame on the ones
    before), then ``step`` replaces them one by one. GIF frames have alpha only where the file
    has transparency. Every frame is turned upright once: OpenCV's TIFF decoder applies each
    page's Orientation tag itself, ``imdecodeanimation`` applies none, so the orientation the
    header asks for is applied here.
    """
    start, stop = frames or (0, None)
    stop = header.frames if stop is None else min(stop, header.frames)
    if start >= stop:
        raise TruncatedImageError(name, f"--frames {start}:{'' if frames is None or frames[1] is None else frames[1]}"
                                        f" selects none of its {header.frames} frames")
    buffer = np.frombuffer(data, np.uint8)

    turn = 1 if header.format == "TIFF" else orientation.requested(header.info.get("exif"), None)

    def finish(frame: np.ndarray) -> np.ndarray:
        frame = orientation.upright(drop_opaque_gif_alpha(frame, header), turn)
        return frame if step is None else step(frame)

    if header.format == "TIFF":
        def page(index: int) -> np.ndarray:
            return _decoded(name, lambda: cv2.imdecodemulti(buffer, cv2.IMREAD_UNCHANGED, None, (index, index + 1)))[0]

        return Frames([finish(page(index)) for index in range(start, stop)], total=header.frames)
    animation = _decoded(name, lambda: cv2.imdecodeanimation(buffer, start, min(stop - start, _ALL)))
    result = Frames(list(animation.frames), [int(d) for d in animation.durations], int(animation.loop_count),
                    header.frames)
    del animation  # OpenCV's own copy of the frames
    return run(result, finish)


def _decoded(name: io.StrPath, call: Callable[[], tuple[bool, Any]]) -> Any:
    """What an OpenCV decoding call returns, or the one-line error naming the file."""
    with quiet() as printed:
        try:
            ok, result = call()
        except cv2.error as exc:
            ok, printed = False, [*printed, str(exc).strip().splitlines()[-1]]
    frames = getattr(result, "frames", result) if ok else None
    if not ok or frames is None or len(frames) == 0:
        detail = "; ".join(printed) or "OpenCV decoded no frames"
        raise TruncatedImageError(name, f"{TruncatedImageError.cause} ({detail})")
    return result


def run(frames: Frames, step: Callable[[np.ndarray], np.ndarray]) -> Frames:
    """Apply ``step`` to every frame in place (each input frame is released as its result arrives)."""
    for index, frame in enumerate(frames.frames):
        frames.frames[index] = step(frame)
    return frames


def encode(frames: Frames, ext: str, name: io.StrPath, *, quality: int | None = None,
           metadata: io.Metadata | None = None) -> bytes | memoryview:
    """Encode frames for ``ext``: an animation (GIF, WebP, APNG), TIFF pages, or the first frame.

    Frames the format cannot hold are converted in place (``frames`` then holds what is stored).
    WebP without a ``quality`` is lossless, as for still images.
    Warns (:class:`cvfilters.io.images.DepthConversionWarning`) where frames or durations are dropped.
    """
    shown = os.fspath(name)
    if ext not in ANIMATED_EXTENSIONS | PAGED_EXTENSIONS:
        if len(frames.frames) > 1:
            warnings.warn(f"{shown}: {ext} holds one frame; only the first of {len(frames.frames)} is written",
                          io.DepthConversionWarning, stacklevel=2)
        return io.encode(frames.frames[0], ext, name=name, metadata=metadata, quality=quality)
    with warnings.catch_warnings(record=True) as caught:  # the same conversion warning for every frame: say it once
        warnings.simplefilter("always")
        stored = run(frames, lambda frame: io.storable(name, ext, frame)).frames
    for message in dict.fromkeys(str(w.message) for w in caught):
        warnings.warn(message, io.DepthConversionWarning, stacklevel=2)
    with quiet() as printed:
        try:
            if ext in PAGED_EXTENSIONS:
                if frames.durations:
                    warnings.warn(f"{shown}: TIFF pages have no durations; the frame timing is dropped",
                                  io.DepthConversionWarning, stacklevel=2)
                ok, encoded = cv2.imencodemulti(ext, stored)
            else:
                animation = cv2.Animation()
                animation.frames = stored
                animation.durations = frames.durations or [DEFAULT_DURATION_MS] * len(stored)
                animation.loop_count = frames.loop
                params = [cv2.IMWRITE_WEBP_QUALITY, 101 if quality is None else quality] if ext == ".webp" else \
                    [cv2.IMWRITE_AVIF_QUALITY, quality] if ext == ".avif" and quality is not None else []
                ok, encoded = cv2.imencodeanimation(ext, animation, params)
        except cv2.error as exc:
            ok, printed = False, [*printed, str(exc).strip().splitlines()[-1]]
    if not ok:
        raise ImageWriteError(name, f"cannot be encoded as an animated {ext}: {'; '.join(printed) or 'refused'}")
    return encoded.reshape(-1).data
