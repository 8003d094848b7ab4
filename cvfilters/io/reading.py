"""Reading image files.

A read takes the file's bytes once, checks the pixel count from the header (Pillow parses
it lazily, decoding nothing: :mod:`cvfilters.io.decoders`), decodes the bytes once, with
OpenCV's ``IMREAD_UNCHANGED`` or, where the header shows OpenCV would lose information,
with Pillow, and turns the image upright exactly once (:mod:`cvfilters.io.orientation`).
Writing is :mod:`cvfilters.io.writing`; many-frame files are streamed by
:mod:`cvfilters.io.frames`. OpenCV 5.1 behaviour relied on (tests/io/test_io.py checks it):

* EXIF comes back without the ``Exif\\0\\0`` header; the TIFF decoder applies the TIFF
  Orientation itself and returns no metadata, the others leave the orientation alone (and
  the PNG decoder returns no EXIF from an APNG).
* Gray+alpha PNG decodes to BGRA (B = G = R), palette PNG to BGR (BGRA with tRNS); GIF
  always to BGRA (the alpha is dropped where the file has no transparent colour).
* A cut JPEG decodes to nothing from memory, but one padded with junk still decodes.
* XMP comes back from JPEG with the ``http://ns.adobe.com/xap/1.0/\\0`` header
  (:data:`cvfilters.io.metadata.XMP_JPEG_HEADER`), which is taken off.
* OpenCV logs codec complaints (libtiff, ``imdecode_``) through its logger, and libpng and
  libjpeg print theirs straight to file descriptor 2. While this module decodes, the logger
  is silenced and descriptor 2 goes to a temporary file (:mod:`cvfilters.io.quiet`): what a
  decoder printed becomes the detail of the error raised, or a :class:`CorruptDataWarning`
  naming the file when the image still decoded. (Another thread's writes to stderr in that
  moment are caught too: they are dropped, or reported with the file when one decode was alone.)
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import warnings
from collections.abc import Iterator
from dataclasses import replace

import cv2
import numpy as np

from cvfilters.core.arrays import swap_rb
from cvfilters.core.defaults import ChannelOrder, resolve_channel_order
from cvfilters.core.errors import (
    EmptyFileError,
    FileMissingError,
    ImageError,
    ImageReadError,
    ImageTooLargeError,
    NotAFileError,
    NotAnImageError,
    TruncatedImageError,
    UnreadableFileError,
    UnsupportedDepthError,
    UsageError,
)
from cvfilters.core.files import FileRefused, read_regular, system_file
from cvfilters.core.types import StrPath
from cvfilters.io import colour, decoders, exr, headers, jpeg, orientation
from cvfilters.io.formats import SAMPLE_RANGES
from cvfilters.io.metadata import XMP_JPEG_HEADER, Metadata
from cvfilters.io.quiet import quiet

DEFAULT_MAX_PIXELS: int = 2**28

_ENV = "CVFILTERS_MAX_PIXELS"
MAX_IMAGE_FILE = 4 << 30  # bytes of one encoded input (the pixel limit bounds what it decodes to)
_GREY_MODES = frozenset({"1", "L", "LA", "I;16", "I;16B", "I;16L", "I;16S", "I", "F", "La"})


class CorruptDataWarning(UserWarning):
    """The decoder reported damage (libjpeg's "Corrupt JPEG data ...") in an image it still decoded."""


def max_pixels_limit(max_pixels: int | None = None) -> int:
    """Return the largest width * height that :func:`read` accepts.

    Parameters
    ----------
    max_pixels : int, optional
        Wins over the environment variable ``CVFILTERS_MAX_PIXELS``, which wins over
        :data:`DEFAULT_MAX_PIXELS`.

    Raises
    ------
    UsageError
        The value is not a positive integer.
    """
    source: str = "max_pixels"
    value: object = max_pixels
    if max_pixels is None:
        source, text = _ENV, os.environ.get(_ENV, "").strip()
        if not text:
            return DEFAULT_MAX_PIXELS
        value = text
        with contextlib.suppress(ValueError):
            max_pixels = int(text)
    if isinstance(max_pixels, bool) or not isinstance(max_pixels, int) or max_pixels < 1:
        raise UsageError(f"{source} must be a positive integer, got {value!r}")
    return max_pixels


def probe(path: StrPath) -> tuple[int, int]:
    """Return ``(width, height)`` from the header, without decoding pixels.

    That is the size as stored (:func:`read` swaps it for orientations 5 to 8), except for a
    TIFF, whose upright size recent Pillow reports: the area is exact either way. HDR, PFM and
    PAM are sized from their text headers; formats no header parser knows (EXR) are decoded.
    Raises the read errors of :func:`read`, but
    damage after the header goes unnoticed and no pixel limit applies.
    """
    data = read_bytes(path)
    header = decoders.parse_header(data)
    if header is not None:
        return header.size
    try:
        size = headers.raw_size(data)
    except headers.HeaderError as exc:
        raise TruncatedImageError(path, str(exc)) from None
    if size is not None:
        return size
    image = decode(data, path, max_pixels=2**62)[0]
    return image.shape[1], image.shape[0]


def read(path: StrPath, *, max_pixels: int | None = None, channel_order: ChannelOrder | None = None,
         colorspace: colour.ColourTarget | None = None, intent: colour.Intent = "relative") -> np.ndarray:
    """Read an image upright, with its depth and channels as stored.

    Parameters
    ----------
    path : str or os.PathLike
        The image file; its format is recognised from the content.
    max_pixels : int, optional
        See :func:`max_pixels_limit`; checked from the header before decoding.
    channel_order : {"bgr", "rgb"}, optional
        The order of the colour channels returned: BGR(A) as OpenCV's unless the call
        or ``cvfilters.set_defaults(channel_order="rgb")`` says RGB(A).
    colorspace : {"keep", "srgb", "adobe-rgb"}, ICC profile bytes or path, optional
        Convert the pixels from the file's colour space (its ICC profile, CICP or EXIF
        ColorSpace; sRGB where it names none) into this one through LittleCMS
        (:mod:`cvfilters.io.colour`). None or ``keep``: the values as stored.
    intent : {"relative", "perceptual", "saturation", "absolute"}
        The rendering intent of that conversion.

    Returns
    -------
    numpy.ndarray
        uint8, uint16 or float32 (float64 data becomes float32); (H, W) gray, (H, W, 3)
        BGR (or RGB) or (H, W, 4) BGRA (RGBA). The EXIF orientation is applied.

    Raises
    ------
    FileMissingError, NotAFileError, UnreadableFileError, EmptyFileError
        The path is not a readable, non-empty regular file.
    NotAnImageError, TruncatedImageError
        OpenCV cannot read this kind of data; the data is cut short or corrupt.
    ImageTooLargeError
        Width * height exceeds the limit.
    UnsupportedDepthError
        Signed integer and other pixel types.
    """
    return read_with_metadata(path, max_pixels=max_pixels, channel_order=channel_order, colorspace=colorspace,
                              intent=intent)[0]


def read_with_metadata(path: StrPath, *, max_pixels: int | None = None, channel_order: ChannelOrder | None = None,
                       colorspace: colour.ColourTarget | None = None,
                       intent: colour.Intent = "relative") -> tuple[np.ndarray, Metadata]:
    """Read an image like :func:`read`, with its EXIF, ICC profile and XMP.

    Parameters
    ----------
    path, max_pixels, channel_order, colorspace, intent
        As for :func:`read`, which lists the errors raised too.

    Returns
    -------
    tuple of (numpy.ndarray, Metadata)
        The upright image, and its metadata with the EXIF Orientation reset to 1. The ICC
        profile comes from the header where OpenCV does not read it (TIFF, AVIF); after a
        ``colorspace`` conversion it is the target's.
    """
    data = read_bytes(path)
    image, metadata = decode(data, path, max_pixels=max_pixels)
    image, metadata = colour.to_colourspace(image, metadata, colorspace, intent, data)
    return (swap_rb(image) if resolve_channel_order(channel_order) == "rgb" else image), metadata


def decode(data: bytes, name: StrPath, *, max_pixels: int | None = None) -> tuple[np.ndarray, Metadata]:
    """Decode the bytes of an image file (the first frame of an animation) as :func:`read_with_metadata`.

    ``name`` names the file in errors and warnings (``-`` for standard input). The decoder
    is OpenCV, or Pillow where :mod:`cvfilters.io.decoders` finds OpenCV would lose information.
    """
    limit = max_pixels_limit(max_pixels)
    if exr.is_exr(data):
        image = exr.decode(data, name, lambda width, height: check_pixels(name, width, height, limit))
        return finish_decode(decoders.Decoded(image, {}, True), name, None, limit)
    header = check_header(data, name, limit)
    if data.startswith(b"\xff\xd8\xff") and not _jpeg_has_end(data):
        raise TruncatedImageError(name, "JPEG data ends before its end-of-image marker (file cut short)")
    reason = decoders.needs_pillow(header, data) if header is not None else None
    if reason is not None and header is not None:
        try:
            decoded = decoders.decode_pillow(name, data, header, reason)
        except TruncatedImageError as pillow_error:  # OpenCV, the stricter decoder, may still read it
            try:
                decoded = _decode(name, data)
            except ImageReadError:
                raise pillow_error from None
    else:
        decoded = _decode(name, data)
        image = decoders.drop_opaque_gif_alpha(decoders.undo_associated_alpha(decoded.image, header), header)
        decoded = decoded._replace(image=image)
    image, metadata = finish_decode(decoded, name, header, limit)
    if header is not None and header.format == "JPEG":
        metadata = replace(metadata, quality=jpeg.estimate_quality(data))
    elif header is not None and header.format == "TIFF":
        metadata = replace(metadata, compression=header.tags.get(259))
    elif header is not None and header.format == "WEBP":
        metadata = replace(metadata, lossless=_webp_lossless(data))
    return image, metadata


def finish_decode(decoded: decoders.Decoded, name: StrPath, header: decoders.Header | None,
                  limit: int) -> tuple[np.ndarray, Metadata]:
    """Check a decoded frame's size and depth, turn it upright unless its decoder did, and collect its metadata."""
    image, chunks = decoded.image, decoded.chunks
    check_pixels(name, image.shape[1], image.shape[0], limit)  # for headers Pillow cannot parse
    if image.dtype == np.float64:
        image = image.astype(np.float32)
    elif image.dtype not in SAMPLE_RANGES:
        raise UnsupportedDepthError(name, f"pixel depth {image.dtype} is not supported (uint8, uint16, int16, "
                                          "float32)")
    stored_exif = chunks.get(cv2.IMAGE_METADATA_EXIF, b"")
    if not decoded.upright:
        image = orientation.upright(image, orientation.requested(header and header.info.get("exif"), stored_exif))
    exif = orientation.reset(stored_exif)[1]
    xmp = chunks.get(cv2.IMAGE_METADATA_XMP, b"").removeprefix(XMP_JPEG_HEADER).rstrip(b"\0")
    icc = chunks.get(cv2.IMAGE_METADATA_ICCP) or (header.icc if header else None)
    grey = header is not None and header.mode in _GREY_MODES
    return image, Metadata(exif=exif or None, icc=icc or None, xmp=xmp or None, grey=grey)


def check_header(data: bytes, name: StrPath, limit: int) -> decoders.Header | None:
    """The parsed header, after refusing an image over ``limit`` pixels (each frame: frames are
    streamed) or a JPEG of too many scans; None where Pillow cannot parse the header (HDR, PFM
    and PAM are sized by :mod:`cvfilters.io.headers` first; EXR: OpenCV decides)."""
    header = decoders.parse_header(data)
    if header is not None:
        check_pixels(name, *header.size, limit)
        if header.format == "JPEG" and headers.jpeg_scans(data) > headers.MAX_JPEG_SCANS:
            raise ImageTooLargeError(name, f"JPEG has {headers.jpeg_scans(data)} scans, more than the limit of "
                                           f"{headers.MAX_JPEG_SCANS} (a progressive file has about 10)")
        return header
    try:
        size = headers.raw_size(data)
    except headers.HeaderError as exc:
        raise TruncatedImageError(name, str(exc)) from None
    if size is not None:
        check_pixels(name, *size, limit)
    return None


def _webp_lossless(data: bytes) -> bool:
    """Whether a WebP file's image is coded lossless (a ``VP8L`` chunk, not ``VP8 ``)."""
    pos = 12
    while pos + 8 <= len(data):
        kind, size = data[pos : pos + 4], int.from_bytes(data[pos + 4 : pos + 8], "little")
        if kind in (b"VP8L", b"VP8 "):
            return kind == b"VP8L"
        pos += 8 + size + (size & 1)
    return False


def read_bytes(path: StrPath) -> bytes:
    """The bytes of an input file (``-``: all of standard input), or the read error naming it."""
    if os.fspath(path) == "-":
        data = sys.stdin.buffer.read()
        if not data:
            raise EmptyFileError("-", "standard input is empty")
        return data
    check_file(path)
    try:
        data = read_regular(path, MAX_IMAGE_FILE)
    except FileRefused as exc:
        raise UnreadableFileError(path, exc.reason) from None
    if not data:
        raise EmptyFileError(path)
    return data


def check_file(path: StrPath) -> None:
    """Refuse a path that is not an existing, readable, non-empty regular file (the read errors)."""
    with _read_errors(path):
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or system_file(path):
            raise NotAFileError(path)
        if not os.access(path, os.R_OK):
            raise PermissionError
    if info.st_size == 0:
        raise EmptyFileError(path)


@contextlib.contextmanager
def _read_errors(path: StrPath) -> Iterator[None]:
    """Turn the OS's errors while reading ``path`` into the one-line read errors naming it."""
    try:
        yield
    except (FileNotFoundError, NotADirectoryError):
        raise FileMissingError(path) from None
    except PermissionError:
        raise UnreadableFileError(path, "cannot be opened: permission denied") from None
    except OSError as exc:
        raise UnreadableFileError(path, f"cannot be read: {exc.strerror or exc}") from None


def check_pixels(path: StrPath, width: int, height: int, limit: int, part: str = "") -> None:
    """Refuse an image (or each frame of a many-frame file: ``part`` names it) of more than ``limit`` pixels."""
    if width * height > limit:
        raise ImageTooLargeError(
            path, f"{part}{': ' if part else ''}{width}x{height} = {width * height} pixels exceeds the limit of "
                  f"{limit} (set --max-pixels or {_ENV})",
        )


def _jpeg_has_end(data: bytes) -> bool:
    """Whether the main image's end-of-image marker FF D9 is there.

    The segments before the first scan are skipped by length (an EXIF thumbnail's marker
    does not count); FF D9 cannot occur in entropy-coded data, and the whole rest is
    searched, so a trailer of any size (vendor data, a motion photo's video) may follow.
    """
    pos = 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        if data[pos + 1] == 0xDA:  # start of scan
            return data.find(b"\xff\xd9", pos) != -1
        pos += 1 if data[pos + 1] == 0xFF else 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
    return False


def _decode(path: StrPath, data: bytes) -> decoders.Decoded:
    """Decode with OpenCV (``IMREAD_UNCHANGED``): the pixels, the metadata chunks, and whether it applied
    the orientation (:func:`cvfilters.io.orientation.applied_by_opencv`)."""
    try:
        with quiet() as printed:
            image, types, chunks = cv2.imdecodeWithMetadata(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    except cv2.error as exc:
        if "CV_IO_MAX_IMAGE_PIXELS" in str(exc):
            raise ImageTooLargeError(path, "image exceeds OpenCV's own pixel limit (2**30)") from None
        raise _undecodable(path, data, printed) from None
    if image is None or image.size == 0:
        raise _undecodable(path, data, printed)
    if printed:
        warnings.warn(f"{os.fspath(path)}: decoded, but the decoder reported: {'; '.join(printed)}",
                      CorruptDataWarning, stacklevel=4)
    chunks_by_kind = {int(kind): np.asarray(chunk).tobytes() for kind, chunk in zip(types, chunks, strict=True)}
    return decoders.Decoded(image, chunks_by_kind, orientation.applied_by_opencv(data))


def _undecodable(path: StrPath, data: bytes, printed: list[str]) -> ImageError:
    """Truncated where OpenCV knows the file's signature (or it is a WebP header, which OpenCV
    needs 20 bytes to recognise), not an image otherwise; with what the decoder printed."""
    layout = headers.tiff_layout_problem(data)
    if layout is not None:
        return UnsupportedDepthError(path, f"unsupported pixel layout: {layout} (cvfilters reads 1 to 4 samples of "
                                           "uint8, uint16, int16, float32 or float64)")
    with quiet():
        known = (data[:4], data[8:12]) == (b"RIFF", b"WEBP") or cv2.haveImageReader(os.fspath(path))
    error = TruncatedImageError if known else NotAnImageError
    return error(path, f"{error.cause} ({'; '.join(printed)})" if printed else None)
