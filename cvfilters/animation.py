"""Images with many frames: animated GIF, WebP and PNG (APNG), and multi-page TIFF.

Frames are decoded once with OpenCV 5's ``imdecodeanimation`` (durations in ms and the loop
count as OpenCV counts it: 0 forever, else the number of plays) or ``imdecodemulti`` (TIFF
pages, depth kept), go through the pipeline one by one, each result replacing its input
frame (so memory holds one decoded copy of the frames plus one frame's working set), and
are encoded together (the encoders take whole animations). An animation written to a
format that holds one frame keeps the first, with a warning that says so.

The pixel limit applies to all frames together, from the header, before decoding.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import cv2
import numpy as np

from . import io
from .decoders import Header, drop_opaque_gif_alpha
from .errors import ImageWriteError, TruncatedImageError
from .quiet import quiet

TIMED_FORMATS = frozenset({"GIF", "WEBP", "PNG"})
ANIMATED_EXTENSIONS = frozenset({".gif", ".webp", ".png"})
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


def decode(data: bytes, name: io.StrPath, header: Header, frames: tuple[int, int | None] | None = None) -> Frames:
    """Decode every frame (or ``frames = (start, stop)``, stop exclusive) of a multi-frame file.

    GIF frames have alpha only where the file has transparency.
    """
    start, stop = frames or (0, None)
    count = (stop if stop is not None else header.frames) - start
    if start >= header.frames or count <= 0:
        raise TruncatedImageError(name, f"--frames {start}:{'' if stop is None else stop} selects none of its "
                                        f"{header.frames} frames")
    buffer = np.frombuffer(data, np.uint8)
    with quiet() as printed:
        try:
            if header.format == "TIFF":
                ok, pages = cv2.imdecodemulti(buffer, cv2.IMREAD_UNCHANGED, None, (start, start + count))
                result = Frames(list(pages) if ok else [], total=header.frames)
            else:
                ok, decoded = cv2.imdecodeanimation(buffer, start, min(count, _ALL))
                result = Frames(list(decoded.frames) if ok else [], [int(d) for d in decoded.durations],
                                int(decoded.loop_count), header.frames)
                del decoded  # OpenCV's own copy of the frames
        except cv2.error as exc:
            ok, printed = False, [*printed, str(exc).strip().splitlines()[-1]]
    if not ok or not result.frames:
        detail = "; ".join(printed) or "OpenCV decoded no frames"
        raise TruncatedImageError(name, f"{TruncatedImageError.cause} ({detail})")
    return run(result, lambda frame: drop_opaque_gif_alpha(frame, header))


def run(frames: Frames, step: Callable[[np.ndarray], np.ndarray]) -> Frames:
    """Apply ``step`` to every frame in place (each input frame is released as its result arrives)."""
    for index, frame in enumerate(frames.frames):
        frames.frames[index] = step(frame)
    return frames


def encode(frames: Frames, ext: str, name: io.StrPath, *, quality: int | None = None,
           metadata: io.Metadata | None = None) -> bytes:
    """Encode frames for ``ext``: an animation (GIF, WebP, APNG), TIFF pages, or the first frame.

    Frames the format cannot hold are converted in place (``frames`` then holds what is stored).
    WebP without a ``quality`` is lossless, as for still images.
    Warns (:class:`cvfilters.io.DepthConversionWarning`) where frames or durations are dropped.
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
                params = [cv2.IMWRITE_WEBP_QUALITY, 101 if quality is None else quality] if ext == ".webp" else []
                ok, encoded = cv2.imencodeanimation(ext, animation, params)
        except cv2.error as exc:
            ok, printed = False, [*printed, str(exc).strip().splitlines()[-1]]
    if not ok:
        raise ImageWriteError(name, f"cannot be encoded as an animated {ext}: {'; '.join(printed) or 'refused'}")
    return encoded.tobytes()
