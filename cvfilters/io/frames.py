"""Files of many frames, streamed: animated GIF, WebP, PNG (APNG), AVIF and multi-page TIFF.

:func:`read_frames` yields one :class:`Frame` at a time and :func:`write_frames` encodes each
frame as it arrives, so a pipeline runs over any number of frames in the memory of about two:

>>> with read_frames("in.gif") as frames:                                   # doctest: +SKIP
...     write_frames("out.gif", (f.replace(pipeline(f.image)) for f in frames), like=frames.info)

One decoder per format, each streaming: Pillow's frame iterator for GIF, WebP and AVIF (it
composites each frame on the ones before), :mod:`cvfilters.io.apng` for APNG (OpenCV's PNG
decoder per frame, so 16-bit frames stay 16-bit), tifffile for TIFF pages (every depth, the
palette applied, page by page in linear time). Writers: :mod:`cvfilters.io.gif` (exact or
adaptive palettes), :mod:`cvfilters.io.apng`, libwebp's animation encoder through Pillow,
tifffile. Animated AVIF is written by OpenCV, which takes the frames together (the one format
held whole). The pixel limit applies to each frame, from the header, before decoding.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from io import BytesIO
from pathlib import Path
from typing import IO, Any, BinaryIO

import cv2
import numpy as np

from cvfilters.core import atomic
from cvfilters.core.arrays import swap_rb
from cvfilters.core.defaults import ChannelOrder, resolve_channel_order
from cvfilters.core.errors import ImageReadError, ImageWriteError, OutputExistsError, TruncatedImageError
from cvfilters.core.types import StrPath
from cvfilters.io import apng, decoders, formats, orientation, reading, writing
from cvfilters.io.gif import GifWriter
from cvfilters.io.metadata import Metadata
from cvfilters.io.quiet import quiet, tifffile_logger_quiet

DEFAULT_DURATION_MS = 100


@dataclass(frozen=True)
class Frame:
    """One frame: its pixels (as :func:`cvfilters.io.reading.read` returns them) and how long it
    shows in ms (None for TIFF pages)."""

    image: np.ndarray
    duration: int | None = None

    def replace(self, image: np.ndarray) -> Frame:
        """The same frame timing with other pixels (a filtered result)."""
        return replace(self, image=image)


@dataclass(frozen=True)
class FramesInfo:
    """What a multi-frame file says about all its frames.

    ``loop`` is the loop count as the format stores it (GIF's NETSCAPE count, APNG's plays,
    WebP's loop; 0 forever; None where the file has none). ``compression`` is a TIFF's
    compression code (kept on TIFF output).
    """

    format: str
    count: int
    size: tuple[int, int]
    loop: int | None = None
    icc: bytes | None = None
    compression: int | None = None
    selected: int | None = None  # the frames a reader yields (``frames`` range), where known


def is_multiframe(header: decoders.Header | None) -> bool:
    """Whether the header describes an animation or a multi-page TIFF."""
    record = formats.named(header.format) if header is not None else None
    return header is not None and record is not None and header.frames > 1 and record.frames is not None


class FrameReader:
    """The frames of one file, decoded one at a time as they are iterated (once).

    Use :func:`read_frames`; close it (or use it as a context manager) to release the file.
    """

    def __init__(self, source: StrPath | bytes, *, frames: tuple[int, int | None] | None = None,
                 max_pixels: int | None = None, channel_order: ChannelOrder | None = None,
                 name: StrPath | None = None) -> None:
        self.name: StrPath = name if name is not None else "-" if isinstance(source, bytes) else source
        self._file: BinaryIO = BytesIO(source) if isinstance(source, bytes) else _opened(source)
        try:
            header = _header_of(self._file)
            if header is None:
                raise ImageReadError(self.name, "is not an image with frames")
            reading.check_pixels(self.name, *header.size, reading.max_pixels_limit(max_pixels))
            self._header = header
            start, stop = frames or (0, None)
            count = header.frames if stop is None else min(stop, header.frames)
            if start >= count:
                raise TruncatedImageError(self.name, f"--frames {start}:{'' if stop is None else stop} selects none "
                                                     f"of its {header.frames} frames")
            self._range = (start, count)
            self._limit = reading.max_pixels_limit(max_pixels)
            self._rgb = resolve_channel_order(channel_order) == "rgb"
            # a still image has no loop (walking a damaged still PNG's chunks failed without naming it)
            loop = _loop(header, self._file) if is_multiframe(header) else None
            self.info = FramesInfo(header.format, header.frames, header.size, loop, header.icc,
                                   header.tags.get(259) if header.format == "TIFF" else None, count - start)
        except BaseException:
            self._file.close()
            raise

    def __enter__(self) -> FrameReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the file."""
        self._file.close()

    def _tiff_pages(self, file: BinaryIO, header: decoders.Header, start: int, stop: int) -> Iterator[Frame]:
        """TIFF pages through tifffile, one at a time: grey, BGR or BGRA at the stored depth, each turned
        upright by its own Orientation tag (tifffile applies none). Pages have sizes of their own: each is
        checked against the pixel limit before it is decoded."""
        import tifffile

        with tifffile_logger_quiet(), tifffile.TiffFile(file) as tiff:
            tiff.pages.cache = False  # one page's tags at a time: memory does not grow with the page count
            for index, page in enumerate(tiff.pages):
                if index >= stop:
                    return
                if index >= start:
                    reading.check_pixels(self.name, page.imagewidth, page.imagelength, self._limit, f"page {index}")
                    tag = page.tags.get(274)
                    yield Frame(orientation.upright(_page_array(page), int(tag.value) if tag is not None else 1))

    def __iter__(self) -> Iterator[Frame]:
        start, stop = self._range
        self._file.seek(0)
        if not is_multiframe(self._header):  # a still image: the still rules, one frame
            image, _ = reading.decode(self._file.read(), self.name, max_pixels=self._limit)
            yield Frame(swap_rb(image) if self._rgb else image)
            return
        decode = {"PNG": _apng_frames, "TIFF": self._tiff_pages}.get(self._header.format, _pillow_frames)
        given = 0
        try:
            for frame in decode(self._file, self._header, start, stop):
                if given >= stop - start:
                    break
                given += 1
                yield replace(frame, image=swap_rb(frame.image)) if self._rgb else frame
        except (OSError, ValueError, SyntaxError, EOFError, KeyError, IndexError, cv2.error) as exc:
            raise TruncatedImageError(self.name, f"{TruncatedImageError.cause} ({_last_line(exc)})") from None
        if given < stop - start:  # e.g. a TIFF whose next-page pointer runs past the file: the decoder just stops
            raise TruncatedImageError(self.name, f"{TruncatedImageError.cause} (frame {start + given} of the "
                                                 f"{self._header.frames} its header counts is missing)")


def read_frames(source: StrPath | bytes, *, frames: tuple[int, int | None] | None = None,
                max_pixels: int | None = None, channel_order: ChannelOrder | None = None) -> FrameReader:
    """Open a multi-frame file (or its bytes) to iterate its frames one at a time.

    Parameters
    ----------
    source : path or bytes
        An animated GIF, WebP, PNG or AVIF, or a TIFF (every page); a still image gives one frame.
    frames : (start, stop), optional
        Only frames ``start`` to ``stop`` (exclusive; None: to the end).
    max_pixels : int, optional
        The limit on each frame's width * height (see :func:`cvfilters.io.reading.max_pixels_limit`).
    channel_order : {"bgr", "rgb"}, optional

    Returns
    -------
    FrameReader
        Iterable of :class:`Frame`; ``.info`` is the :class:`FramesInfo`.

    Raises
    ------
    ImageReadError
        The file is missing, unreadable or damaged (raised while iterating for damage found then),
        or ``frames`` selects none.
    ImageTooLargeError
        A frame exceeds the pixel limit.
    """
    if not isinstance(source, bytes):
        reading.check_file(source)
    return FrameReader(source, frames=frames, max_pixels=max_pixels, channel_order=channel_order)

_QUICK_HEADER_BYTES = 1 << 16  # a plain PNG or JPEG has its size well within this


def probe(path: StrPath, limit: int) -> decoders.Header | None:
    """The header of the file at ``path``, parsed from the open file (for a GIF Pillow counts the
    frames by scanning it, holding none), after the pixel limit; None where Pillow cannot parse it.

    Raises the read errors of :func:`cvfilters.io.reading.read` and :class:`ImageTooLargeError`.
    """
    reading.check_file(path)
    with _opened(path) as file:
        header = _header_of(file)
    if header is not None:
        reading.check_pixels(path, *header.size, limit)
    return header


def _opened(path: StrPath) -> BinaryIO:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise ImageReadError(path, f"cannot be read: {exc.strerror or exc}") from None


def _header_of(file: BinaryIO) -> decoders.Header | None:
    """Pillow's header parse of an open file (no pixels decoded); the file is rewound. A plain
    still JPEG or PNG is answered from its first bytes without importing Pillow
    (:func:`cvfilters.io.decoders.quick_parse`)."""
    quick = decoders.quick_parse(file.read(_QUICK_HEADER_BYTES))
    file.seek(0)
    if quick is not None:
        return quick
    from PIL import Image  # imported when frames are decoded or encoded, not at start-up
    try:
        with decoders.pillow_unlimited(), Image.open(file) as image:
            return decoders.Header.of(image)
    except Exception:  # Pillow raises many types on bad headers
        file.seek(0)
        return decoders.tiff_pages_header(file)
    finally:
        file.seek(0)


def _loop(header: decoders.Header, file: BinaryIO) -> int | None:
    if header.format == "PNG":
        return apng.loop_count(file)[1]
    loop = header.info.get("loop")
    return int(loop) if loop is not None else None


def _pillow_frames(file: BinaryIO, header: decoders.Header, start: int, stop: int) -> Iterator[Frame]:
    """GIF, WebP and AVIF frames, composited by Pillow; alpha only where the file has it; each
    turned upright as the file's EXIF asks (Pillow applies none)."""
    from PIL import Image  # imported when frames are decoded or encoded, not at start-up
    alpha = "transparency" in header.info or header.mode in ("RGBA", "LA", "PA")
    turn = orientation.requested(header.info.get("exif"), None)
    with decoders.pillow_unlimited():  # Pillow's limit and warnings lifted for each call, never across a yield
        image = Image.open(file)
    with image:
        for index in range(start, stop):
            with decoders.pillow_unlimited():
                image.seek(index)
                image.load()
                rgb = np.asarray(image.convert("RGBA" if alpha else "RGB"))
            duration = image.info.get("duration")
            code = cv2.COLOR_RGBA2BGRA if alpha else cv2.COLOR_RGB2BGR
            yield Frame(orientation.upright(cv2.cvtColor(rgb, code), turn),
                        None if duration is None else round(duration))


def _apng_frames(file: BinaryIO, header: decoders.Header, start: int, stop: int) -> Iterator[Frame]:
    turn = orientation.requested(header.info.get("exif"), None)
    for index, (image, duration) in enumerate(apng.frames(file)):
        if index >= start:
            yield Frame(orientation.upright(image, turn), duration)


_JPEG_COMPRESSIONS = frozenset({6, 7, 33007, 34892})  # tifffile decodes these YCbCr (photometric 6) pages to RGB


def _page_array(page: Any) -> np.ndarray:
    array = page.asarray()
    if page.axes.startswith("S"):  # planar configuration: samples first
        array = np.moveaxis(array, 0, -1)
    if page.photometric == 3 and page.colormap is not None:  # palette
        colormap = np.asarray(page.colormap)
        colormap = (colormap >> 8 if colormap.max() > 255 else colormap).astype(np.uint8)
        return np.ascontiguousarray(colormap[::-1].T[array])
    if page.photometric == 5 and array.ndim == 3 and array.shape[2] == 4 and array.dtype.kind == "u":  # CMYK
        full = np.uint32(np.iinfo(array.dtype).max)  # (2**16 - 1)**2 + 2**15 fits in 32 bits
        inks = array.astype(np.uint32)
        bgr = ((full - inks[..., 2::-1]) * (full - inks[..., 3:]) + full // 2) // full  # rounded, as Pillow and OpenCV
        return np.ascontiguousarray(bgr.astype(array.dtype))
    if array.dtype == np.bool_:
        array = array.astype(np.uint8) * np.uint8(255)
    if page.photometric == 0:  # min-is-white
        array = np.iinfo(array.dtype).max - array if array.dtype.kind == "u" else -array
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    rgb = page.photometric == 2 or (page.photometric == 6 and page.compression in _JPEG_COMPRESSIONS)
    if array.ndim == 3 and array.shape[2] in (3, 4) and rgb:
        return cv2.cvtColor(array, cv2.COLOR_RGB2BGR if array.shape[2] == 3 else cv2.COLOR_RGBA2BGRA)
    if array.ndim == 3 and array.shape[2] == 2:  # grey + alpha
        return np.ascontiguousarray(np.dstack([array[..., 0]] * 3 + [array[..., 1]]))
    return np.ascontiguousarray(array)


# ---------------------------------------------------------------- writing
@dataclass(frozen=True)
class FrameOptions:
    """How :func:`write_frames` encodes: see its parameters."""

    loop: int | None = 0
    quality: int | None = None
    lossless: bool = False
    dither: bool = False
    icc: bytes | None = None
    compression: int | None = None
    frames: int | None = None  # how many frames will come, where known


def write_frames(target: StrPath, frames: Iterable[Frame | np.ndarray], *, fmt: str | None = None,
                 like: FramesInfo | None = None, loop: int | None = 0, quality: int | None = None,
                 lossless: bool = False, dither: bool = False, overwrite: bool = True,
                 channel_order: ChannelOrder | None = None) -> int:
    """Encode frames as they arrive into ``target``, atomically; returns how many were written.

    Parameters
    ----------
    target : path or "-"
        The output; ``-`` writes to standard output (then ``fmt`` names the format).
    frames : iterable of Frame or numpy.ndarray
        Arrays are frames of :data:`DEFAULT_DURATION_MS`.
    fmt : str, optional
        An extension (``".gif"``) overriding the target's.
    like : FramesInfo, optional
        The source's: its loop count, ICC profile and (for TIFF output) compression are kept.
    loop, quality, lossless, dither
        Loop count (0 forever; None: play once), quality 1-100 (WebP, AVIF), lossless WebP,
        Floyd-Steinberg dithering of GIF frames that have more than 256 colours.

    Raises
    ------
    ImageWriteError
        The format holds no frames this way, a frame differs in size from the first, the
        encoder failed or the file system refused (an existing target is left as it was).
    OutputExistsError
        The target exists and ``overwrite`` is False.
    """
    ext = (fmt or Path(target).suffix).lower()
    ext = ext if ext.startswith(".") else "." + ext
    record = formats.image_format(ext)
    if record is None:
        raise ImageWriteError(target, f"cannot be written: no encoder for {ext or 'a name without extension'}")
    record.params(quality)  # refuse a bad quality before anything is written
    options = FrameOptions(like.loop if like is not None else loop,
                           quality if quality is not None else record.default_quality, lossless, dither,
                           like.icc if like is not None else None,
                           like.compression if like is not None and like.format == "TIFF" else None,
                           like.selected if like is not None else None)
    rgb = resolve_channel_order(channel_order) == "rgb"
    stream = (frame if isinstance(frame, Frame) else Frame(np.asarray(frame), DEFAULT_DURATION_MS) for frame in frames)
    if rgb:
        stream = (frame.replace(swap_rb(frame.image)) for frame in stream)
    if os.fspath(target) == "-":
        buffer = BytesIO()
        count = _encode_frames(buffer, target, ext, record, stream, options)
        write_stdout(buffer.getbuffer())
        return count
    if not overwrite and os.path.lexists(target):
        raise OutputExistsError(target)
    try:
        with atomic.replacing(target) as temporary, open(temporary, "wb+") as file:
            count = _encode_frames(file, target, ext, record, stream, options)
            file.flush()
    except OSError as exc:
        raise ImageWriteError(target, f"cannot be written: {exc.strerror or exc}") from exc
    return count


def write_stdout(data: bytes | memoryview) -> None:
    """Write ``data`` to standard output, all of it, or raise :class:`ImageWriteError` naming it.

    A short write, a full disk (ENOSPC) or a closed pipe (EPIPE) is an error, never a silent cut.
    """
    out = sys.stdout.buffer
    view = memoryview(data).cast("B")
    try:
        written = 0
        while written < len(view):
            count = out.write(view[written:])
            if not count:
                raise OSError(f"short write: {written} of {len(view)} bytes")
            written += count
        out.flush()
    except OSError as exc:
        with contextlib.suppress(OSError, ValueError):  # nothing more reaches a closed pipe: do not retry at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise ImageWriteError("standard output", f"cannot be written: {exc.strerror or exc}") from None


def _encode_frames(file: IO[bytes], name: StrPath, ext: str, record: formats.ImageFormat,
                   frames: Iterator[Frame], options: FrameOptions) -> int:
    first = next(frames, None)
    if first is None:
        raise ImageWriteError(name, "cannot be written: no frames")
    if record.frames is None:
        image = writing.storable(name, ext, first.image, stacklevel=4)  # at the line that called write_frames()
        total = options.frames if options.frames is not None else 1 + sum(1 for _ in frames)  # not decoded if known
        if total > 1:
            warnings.warn(f"{os.fspath(name)}: {ext} holds one frame; only the first of {total} is written",
                          writing.DepthConversionWarning, stacklevel=3)
        file.write(writing.encode(image, ext, name=name, metadata=Metadata(icc=options.icc), quality=options.quality))
        return 1
    if record.name == "TIFF" and first.duration is not None:
        warnings.warn(f"{os.fspath(name)}: TIFF pages have no durations; the frame timing is dropped",
                      writing.DepthConversionWarning, stacklevel=3)
    encoder = _ENCODERS[record.name](file, options)
    count = 0
    shape = first.image.shape[:2]
    with warnings.catch_warnings(record=True) as caught:  # one conversion warning for all frames
        warnings.simplefilter("always")
        for frame in itertools.chain((first,), frames):
            if frame.image.shape[:2] != shape and record.name != "TIFF":  # TIFF pages each have their own size
                raise ImageWriteError(name, f"cannot be written: frame {count} is {frame.image.shape[1]}x"
                                            f"{frame.image.shape[0]}, the first {shape[1]}x{shape[0]}")
            encoder.add(writing.storable(name, ext, frame.image), frame.duration)
            count += 1
        encoder.close()
    reissue_once(caught)
    return count


def reissue_once(caught: Iterable[warnings.WarningMessage]) -> None:
    """Warn once per distinct message caught while frames were converted (not once per frame)."""
    for message in dict.fromkeys(str(w.message) for w in caught):
        warnings.warn(message, writing.DepthConversionWarning, stacklevel=4)


class _Gif:
    def __init__(self, file: IO[bytes], options: FrameOptions) -> None:
        self.file, self.options = file, options
        self.writer: GifWriter | None = None

    def add(self, image: np.ndarray, duration: int | None) -> None:
        if self.writer is None:
            self.writer = GifWriter(self.file, (image.shape[1], image.shape[0]), loop=self.options.loop,  # type: ignore[arg-type]
                                    dither=self.options.dither)
        self.writer.add(image, duration)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


class _Apng:
    def __init__(self, file: IO[bytes], options: FrameOptions) -> None:
        self.writer = apng.ApngWriter(file, plays=1 if options.loop is None else options.loop,  # type: ignore[arg-type]
                                      icc=options.icc)

    def add(self, image: np.ndarray, duration: int | None) -> None:
        self.writer.add(image, duration)

    def close(self) -> None:
        self.writer.close()


class _Webp:
    """libwebp's animation encoder through Pillow's binding (frames added one by one, as Pillow's
    own ``save_all`` does; its public API takes the frames as a list)."""

    def __init__(self, file: IO[bytes], options: FrameOptions) -> None:
        self.file, self.options = file, options
        self.encoder: Any = None
        self.timestamp = 0
        self.quality = options.quality or 0  # write_frames puts the format's default in

    def add(self, image: np.ndarray, duration: int | None) -> None:
        from PIL import (
            Image,  # imported when frames are decoded or encoded, not at start-up
            _webp,
        )

        alpha = image.ndim == 3 and image.shape[2] == 4
        picture = Image.fromarray(cv2.cvtColor(image, cv2.COLOR_BGRA2RGBA if alpha else cv2.COLOR_BGR2RGB))
        if self.encoder is None:
            loop = 1 if self.options.loop is None else self.options.loop
            self.encoder = _webp.WebPAnimEncoder(picture.size, 0, loop, False, 9 if self.options.lossless else 3,
                                                 17 if self.options.lossless else 5, False, False)
        self.encoder.add(picture.getim(), self.timestamp, self.options.lossless, self.quality, 100, 4)
        self.timestamp += DEFAULT_DURATION_MS if duration is None else duration

    def close(self) -> None:
        self.encoder.add(None, self.timestamp, self.options.lossless, self.quality, 100, 0)
        data = self.encoder.assemble(self.options.icc or "", "", "")
        if data is None:
            raise OSError("libwebp's animation encoder returned nothing")
        self.file.write(data)


class _Tiff:
    def __init__(self, file: IO[bytes], options: FrameOptions) -> None:
        import tifffile

        self.writer = tifffile.TiffWriter(file)
        self.options = options

    def add(self, image: np.ndarray, duration: int | None) -> None:
        channels = 1 if image.ndim == 2 else image.shape[2]
        if channels >= 3:
            image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB if channels == 3 else cv2.COLOR_BGRA2RGBA)
        self.writer.write(image, photometric="rgb" if channels >= 3 else "minisblack",
                          extrasamples=("unassalpha",) if channels == 4 else None,
                          compression=self._compression(),
                          iccprofile=self.options.icc, contiguous=False)

    def _compression(self) -> int | None:
        """The source's compression where a still TIFF keeps it, else none: tifffile has no CCITT fax or
        old-JPEG encoder, and its JPEG and WebP refuse alpha or float samples."""
        kept = self.options.compression
        return kept if kept in writing.TIFF_COMPRESSIONS_WRITTEN else None

    def close(self) -> None:
        self.writer.close()


class _Avif:
    """OpenCV's AVIF animation encoder, which takes all frames at once."""

    def __init__(self, file: IO[bytes], options: FrameOptions) -> None:
        self.file, self.options = file, options
        self.frames: list[np.ndarray] = []
        self.durations: list[int] = []

    def add(self, image: np.ndarray, duration: int | None) -> None:
        self.frames.append(image)
        self.durations.append(DEFAULT_DURATION_MS if duration is None else duration)

    def close(self) -> None:
        animation = cv2.Animation()
        animation.frames, animation.durations = self.frames, self.durations
        animation.loop_count = self.options.loop or 0
        params = [cv2.IMWRITE_AVIF_QUALITY, self.options.quality] if self.options.quality is not None else []
        with quiet() as printed:
            ok, encoded = cv2.imencodeanimation(".avif", animation, params)
        if not ok:
            raise OSError("; ".join(printed) or "OpenCV refused the animation")
        self.file.write(encoded.tobytes())


_ENCODERS: dict[str, Any] = {"GIF": _Gif, "PNG": _Apng, "WEBP": _Webp, "TIFF": _Tiff, "AVIF": _Avif}


def _last_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__
