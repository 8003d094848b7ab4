"""Reading and writing image files.

A read takes the file's bytes once, checks the pixel count from the header (Pillow parses
it lazily, decoding nothing: :mod:`cvfilters.io.decoders`), decodes the bytes once, with
OpenCV's ``IMREAD_UNCHANGED`` or, where the header shows OpenCV would lose information,
with Pillow, and turns the image upright exactly once (:mod:`cvfilters.io.orientation`). A
write encodes in memory (OpenCV, or :mod:`cvfilters.io.encoders` for grey+alpha PNG and TIFF
with metadata) and replaces the target atomically. Many-frame files are streamed by
:mod:`cvfilters.io.frames`. OpenCV 5.1 behaviour relied on (tests/io/test_io.py checks it):

* EXIF comes back without the ``Exif\\0\\0`` header and the encoder adds it; the TIFF
  decoder applies the TIFF Orientation itself and returns no metadata, the others leave
  the orientation alone (and the PNG decoder returns no EXIF from an APNG).
* Gray+alpha PNG decodes to BGRA (B = G = R), palette PNG to BGR (BGRA with tRNS); GIF
  always to BGRA (the alpha is dropped where the file has no transparent colour).
* A cut JPEG decodes to nothing from memory, but one padded with junk still decodes.
* XMP comes back from JPEG with the ``http://ns.adobe.com/xap/1.0/\\0`` header, which the
  encoder does not add; the PNG encoder needs a NUL-terminated packet.
* Only JPEG, PNG, WebP and AVIF hold metadata (:mod:`cvfilters.io.formats` has each format's facts).
* OpenCV logs codec complaints (libtiff, ``imdecode_``) through its logger, and libpng and
  libjpeg print theirs straight to file descriptor 2. While this module decodes or encodes,
  the logger is silenced and descriptor 2 goes to a temporary file: what a decoder printed
  becomes the detail of the error raised, or a :class:`CorruptDataWarning` naming the file
  when the image still decoded. (Another thread's writes to stderr in that moment are
  caught too: they are dropped, or reported with the file when one decode was alone.)
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from io import BytesIO
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from cvfilters.core import atomic
from cvfilters.core.arrays import host_bgr, swap_rb
from cvfilters.core.defaults import ChannelOrder, resolve_channel_order
from cvfilters.core.errors import (
    EmptyFileError,
    FileMissingError,
    ImageError,
    ImageReadError,
    ImageTooLargeError,
    ImageWriteError,
    NotAFileError,
    NotAnImageError,
    OutputExistsError,
    TruncatedImageError,
    UnreadableFileError,
    UnsupportedDepthError,
    UsageError,
)
from cvfilters.core.files import FileRefused, read_regular, system_file
from cvfilters.io import colour, decoders, encoders, exr, headers, jpeg, orientation
from cvfilters.io.formats import F32, I16, IMAGE_EXTENSIONS, U8, U16, ImageFormat, image_format
from cvfilters.io.gif import GifWriter
from cvfilters.io.quiet import quiet

DEFAULT_MAX_PIXELS: int = 2**28

StrPath = str | os.PathLike[str]
_ENV = "CVFILTERS_MAX_PIXELS"
MAX_IMAGE_FILE = 4 << 30  # bytes of one encoded input (the pixel limit bounds what it decodes to)
_RANGE = {U8: (0.0, 255.0), U16: (0.0, 65535.0), I16: (-32768.0, 32767.0), F32: (0.0, 1.0)}  # floats: 0..1
_GREY_MODES = frozenset({"1", "L", "LA", "I;16", "I;16B", "I;16L", "I;16S", "I", "F", "La"})
_CHANNEL_CHANGES = {
    (4, 3): (cv2.COLOR_BGRA2BGR, "the alpha channel is dropped"),
    (4, 1): (cv2.COLOR_BGRA2GRAY, "converted to gray, alpha dropped"),
    (3, 1): (cv2.COLOR_BGR2GRAY, "converted to gray"),
    (1, 3): (cv2.COLOR_GRAY2BGR, "gray repeated as B, G and R"),
}
_EXIF_HEADER = b"Exif\0\0"
_XMP_JPEG_HEADER = b"http://ns.adobe.com/xap/1.0/\0"
TIFF_COMPRESSIONS_WRITTEN = frozenset({1, 5, 8, 32773, 32946})  # none, LZW, Deflate, PackBits: libtiff writes them


class DepthConversionWarning(UserWarning):
    """An output format cannot hold the image's depth or channels, so they were converted."""


class CorruptDataWarning(UserWarning):
    """The decoder reported damage (libjpeg's "Corrupt JPEG data ...") in an image it still decoded."""


@dataclass(frozen=True)
class Metadata:
    """Metadata carried to the outputs: EXIF as a TIFF structure without the ``Exif\\0\\0``
    header (Orientation 1, as the pixels are upright), the ICC profile, the bare XMP packet,
    and whether the file stored grey (a grey+alpha file, read as BGRA with B = G = R, is
    written back as grey+alpha where the format holds it)."""

    exif: bytes | None = None
    icc: bytes | None = None
    xmp: bytes | None = None
    grey: bool = False
    quality: int | None = None  # a JPEG source's quality (estimated from its tables): JPEG output keeps it
    lossless: bool = False  # a lossless WebP source: WebP output stays lossless
    compression: int | None = None  # a TIFF source's compression code: TIFF output keeps it


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
    image, metadata = to_colourspace(image, metadata, colorspace, intent, data)
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
    elif image.dtype not in _RANGE:
        raise UnsupportedDepthError(name, f"pixel depth {image.dtype} is not supported (uint8, uint16, int16, "
                                          "float32)")
    stored_exif = chunks.get(cv2.IMAGE_METADATA_EXIF, b"")
    if not decoded.upright:
        image = orientation.upright(image, orientation.requested(header and header.info.get("exif"), stored_exif))
    exif = orientation.reset(stored_exif)[1]
    xmp = chunks.get(cv2.IMAGE_METADATA_XMP, b"").removeprefix(_XMP_JPEG_HEADER).rstrip(b"\0")
    icc = chunks.get(cv2.IMAGE_METADATA_ICCP) or (header.icc if header else None)
    grey = header is not None and header.mode in _GREY_MODES
    return image, Metadata(exif=exif or None, icc=icc or None, xmp=xmp or None, grey=grey)


def to_colourspace(image: np.ndarray, metadata: Metadata, target: colour.ColourTarget | None,
                   intent: colour.Intent = "relative", data: bytes | None = None) -> tuple[np.ndarray, Metadata]:
    """``image`` converted from its file's colour space into ``target``, with metadata embedding
    the target's profile; ``keep`` or None: unchanged (see :mod:`cvfilters.io.colour`).

    ``data`` (the file's bytes) lets a PNG's CICP tag name the source space. A grey image
    (grey+alpha too) is left as it is with its metadata: its values are not converted, and an RGB
    profile would not describe them (libpng refuses one in a grey PNG).
    """
    if target is None or (isinstance(target, str) and target.lower() == "keep"):
        return image, metadata
    space = colour.colourspace_of(metadata.icc, metadata.exif, data)
    if space.icc is None and not space.is_srgb:
        raise UsageError(f"colorspace: the image's space ({space.name}) has no ICC profile to convert from; "
                         "keep it (colorspace keep)")
    dst = colour.profile_bytes(target)
    if image.ndim == 2 or image.shape[2] == 1 or metadata.grey:
        return image, metadata
    return colour.convert(image, space, dst, intent), replace(metadata, icc=dst)


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


def output_dtype(path: StrPath, dtype: npt.DTypeLike) -> np.dtype:
    """Return the dtype :func:`write` stores for an image of ``dtype`` at ``path``.

    That is ``dtype`` where the format holds it, else uint8 for 8-bit formats, uint16 for
    float32 into PNG, PNM and JPEG 2000, float32 for HDR and EXR. Raises
    :class:`ImageWriteError` (no encoder for the extension) and
    :class:`UnsupportedDepthError` (not uint8, uint16, float32 or float64) as ``write`` does.
    """
    return _stored_dtype(path, _output_format(path), np.dtype(dtype))


def write(
    path: StrPath,
    image: np.ndarray,
    *,
    metadata: Metadata | None = None,
    quality: int | None = None,
    compression: int | None = None,
    lossless: bool = False,
    dither: bool = False,
    overwrite: bool = True,
    channel_order: ChannelOrder | None = None,
    colorspace: colour.ColourTarget | None = None,
    intent: colour.Intent = "relative",
) -> Path:
    """Write an image atomically, converting what the format cannot hold.

    The image is encoded in memory, written to a uniquely named temporary file beside the
    target, synced and renamed onto the target, so no partial output is ever visible and
    concurrent writers do not collide. Missing parent directories are created.

    Parameters
    ----------
    path : str or os.PathLike
        Output path; the extension (one of :data:`IMAGE_EXTENSIONS` that this OpenCV
        build encodes) picks the format.
    image : numpy.ndarray, PIL.Image.Image or array-like
        uint8, uint16 or float32 in 0..1 (float64 is taken as float32); 1, 3 or 4
        channels in BGR(A) order, RGB(A) with ``channel_order="rgb"`` (PIL images are RGB).
    metadata : Metadata, optional
        Written where the format holds it (JPEG, PNG, WebP, AVIF); EXIF Orientation as 1.
    quality : int, optional
        1 to 100 for JPEG, WebP and AVIF, ignored elsewhere. None writes the format's
        default (:mod:`cvfilters.io.formats`): 90 for JPEG and WebP (lossy).
    compression : int, optional
        PNG zlib level, 0 to 9, ignored elsewhere.
    lossless : bool
        Lossless WebP (``quality`` is then ignored).
    dither : bool
        Floyd-Steinberg dithering of a GIF of more than 256 colours (:mod:`cvfilters.io.gif`).
    overwrite : bool
        When False an existing target is refused.
    channel_order : {"bgr", "rgb"}, optional
        The order of ``image``'s colour channels (default BGR, or ``cvfilters.set_defaults``).
    colorspace : {"keep", "srgb", "adobe-rgb"}, ICC profile bytes or path, optional
        Convert the pixels from ``metadata``'s profile (sRGB without one) into this space
        through LittleCMS and embed its profile. None or ``keep``: written as they are.
    intent : {"relative", "perceptual", "saturation", "absolute"}
        The rendering intent of that conversion.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ParameterError
        ``quality`` or ``compression`` out of range.
    OutputExistsError
        The target exists and ``overwrite`` is False.
    UnsupportedDepthError
        The image's dtype cannot be written.
    ImageWriteError
        No encoder for the extension, encoding failed, or the file system refused.

    Warns
    -----
    DepthConversionWarning
        The format cannot hold the depth (uint16 into JPEG is scaled by 255/65535 and
        rounded; float32 into PNG by 65535) or the channels (JPEG drops alpha; WebP, GIF
        and HDR store gray as BGR); PBM is thresholded at 128.
    """
    ext = _output_format(path)
    params = _params(ext, quality, compression, lossless, metadata)
    if not overwrite and os.path.lexists(path):
        raise OutputExistsError(path)
    image = host_bgr(image, resolve_channel_order(channel_order), os.fspath(path))
    if colorspace is not None:
        image, metadata = to_colourspace(image, metadata or Metadata(), colorspace, intent)
    write_bytes(path, _encode(path, ext, image, metadata, params, compression, dither))
    return Path(path)


def write_bytes(path: StrPath, data: bytes | memoryview, *, overwrite: bool = True, sync_directory: bool = True,
                ) -> Path:
    """Write encoded image bytes atomically (as :func:`write` does after encoding).

    ``sync_directory=False``: the folder's fsync is left to the caller (a batch does it once per
    folder, :func:`cvfilters.core.atomic.write_bytes` says what that guarantees).

    Raises :class:`OutputExistsError` where the target exists and ``overwrite`` is False,
    :class:`ImageWriteError` where the file system refuses.
    """
    if not overwrite and os.path.lexists(path):
        raise OutputExistsError(path)
    try:
        atomic.write_bytes(path, data, sync_directory=sync_directory)
    except OSError as exc:
        raise ImageWriteError(path, f"cannot be written: {exc.strerror or exc}") from exc
    return Path(path)


def encode(image: np.ndarray, fmt: str, *, name: StrPath = "-", metadata: Metadata | None = None,
           quality: int | None = None, compression: int | None = None, lossless: bool = False,
           dither: bool = False) -> bytes | memoryview:
    """Encode an image in memory as :func:`write` would store it (the bytes of the file, as
    ``bytes`` or a ``memoryview`` of the encoder's buffer).

    ``fmt`` is an extension (``".png"``, ``"jpg"``); ``name`` names the output in warnings
    and errors (``-`` for standard output). Raises and warns as :func:`write`.
    """
    try:
        ext = _output_format(f"image.{fmt.lower().lstrip('.')}")
    except ImageWriteError as exc:
        raise ImageWriteError(name, exc.detail) from None
    params = _params(ext, quality, compression, lossless, metadata)
    return _encode(name, ext, np.asarray(image), metadata, params, compression, dither)


def _params(ext: str, quality: int | None, compression: int | None, lossless: bool,
            metadata: Metadata | None) -> list[int]:
    """The encoder's parameters: those asked for, else how the source was coded (JPEG quality, TIFF
    compression) where it was the same format, else the format's defaults."""
    record = _record(ext)
    if quality is None and metadata is not None and record.name == "JPEG":
        quality = metadata.quality
    if quality is None and metadata is not None and record.name == "WEBP":
        lossless = lossless or metadata.lossless
    params = record.params(quality, compression, lossless=lossless)
    if record.name == "TIFF":  # OpenCV's default is LZW; keep the source's, else none (as vips, ImageMagick)
        kept = metadata.compression if metadata is not None else None
        params += [cv2.IMWRITE_TIFF_COMPRESSION, kept if kept in TIFF_COMPRESSIONS_WRITTEN else 1]
    return params


def _encode(path: StrPath, ext: str, image: np.ndarray, metadata: Metadata | None, params: list[int],
            compression: int | None, dither: bool = False) -> bytes | memoryview:
    image = storable(path, ext, image)
    if ext == ".exr":
        return exr.encode(image, path)
    metadata, late_icc = _fit_jpeg_segments(path, ext, metadata)
    if metadata is not None and (metadata.grey or metadata.exif or metadata.icc):
        exif = orientation.reset(metadata.exif)[1] if metadata.exif else None
        special = encoders.beyond_opencv(ext, image, exif=exif, icc=metadata.icc, xmp=metadata.xmp,
                                         grey=metadata.grey, compression=compression)
        if special is not None:
            return special
        if _record(ext).name == "TIFF" and (exif or metadata.icc):
            warnings.warn(f"{os.fspath(path)}: EXIF and ICC are not kept in a {image.dtype} TIFF with "
                          f"{image.shape[2] if image.ndim == 3 else 1} channels", DepthConversionWarning, stacklevel=3)
    if ext == ".gif":
        return _gif(image, dither)
    types, chunks = _metadata_chunks(ext, metadata)
    try:
        with quiet() as printed:
            if types:
                ok, encoded = cv2.imencodeWithMetadata(ext, image, types, chunks, params)
            else:
                ok, encoded = cv2.imencode(ext, image, params)
    except cv2.error as exc:
        raise ImageWriteError(path, f"cannot be encoded as {ext}: {exc.err}") from exc
    if not ok:
        reason = "; ".join(printed) or "OpenCV refused the image"
        raise ImageWriteError(path, f"cannot be encoded as {ext}: {reason}")
    if late_icc:
        return jpeg.insert_icc(encoded.tobytes(), late_icc)
    return encoded.reshape(-1).data  # the encoder's buffer itself, not a copy


def _webp_lossless(data: bytes) -> bool:
    """Whether a WebP file's image is coded lossless (a ``VP8L`` chunk, not ``VP8 ``)."""
    pos = 12
    while pos + 8 <= len(data):
        kind, size = data[pos : pos + 4], int.from_bytes(data[pos + 4 : pos + 8], "little")
        if kind in (b"VP8L", b"VP8 "):
            return kind == b"VP8L"
        pos += 8 + size + (size & 1)
    return False


def _fit_jpeg_segments(path: StrPath, ext: str, metadata: Metadata | None) -> tuple[Metadata | None, bytes | None]:
    """Metadata OpenCV's JPEG encoder takes (each block within one 64 KB segment), and an ICC profile
    to split over APP2 segments afterwards. EXIF or XMP too large for a segment is dropped, with a
    warning (extended XMP is not written)."""
    if metadata is None or _record(ext).name != "JPEG":
        return metadata, None
    late_icc = metadata.icc if metadata.icc and not jpeg.fits_segment(b"ICC_PROFILE\0xx" + metadata.icc) else None
    dropped = [name for name, block, header in (("EXIF", metadata.exif, _EXIF_HEADER),
                                                ("XMP", metadata.xmp, _XMP_JPEG_HEADER))
               if block and not jpeg.fits_segment(header + block.removeprefix(header))]
    for name in dropped:
        size = len((metadata.exif if name == "EXIF" else metadata.xmp) or b"")
        warnings.warn(f"{os.fspath(path)}: {name} of {size} bytes does not fit a JPEG segment (64 KB); it is "
                      "not written", DepthConversionWarning, stacklevel=4)
    return replace(metadata, icc=None if late_icc else metadata.icc,
                   exif=None if "EXIF" in dropped else metadata.exif,
                   xmp=None if "XMP" in dropped else metadata.xmp), late_icc


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


def check_pixels(path: StrPath, width: int, height: int, limit: int) -> None:
    """Refuse an image (or each frame of a many-frame file) of more than ``limit`` pixels."""
    if width * height > limit:
        raise ImageTooLargeError(
            path, f"{width}x{height} = {width * height} pixels exceeds the limit of {limit} "
                  f"(set --max-pixels or {_ENV})",
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


def _record(ext: str) -> ImageFormat:
    record = image_format(ext)
    assert record is not None, ext  # extensions come from _output_format
    return record


def _gif(image: np.ndarray, dither: bool) -> bytes:
    """A still GIF through :mod:`cvfilters.io.gif` (exact palettes where they fit)."""
    buffer = BytesIO()
    writer = GifWriter(buffer, (image.shape[1], image.shape[0]), loop=None, dither=dither)
    writer.add(image)
    writer.close()
    return buffer.getvalue()


def _output_format(path: StrPath) -> str:
    ext = Path(path).suffix.lower()
    writer = exr.available() if ext == ".exr" else cv2.haveImageWriter("probe" + ext)
    if ext not in IMAGE_EXTENSIONS or not writer:
        raise ImageWriteError(path, f"cannot be written: no encoder for {ext or 'a name without extension'}")
    return ext


def _stored_dtype(path: StrPath, ext: str, dtype: np.dtype) -> np.dtype:
    dtype = F32 if dtype == np.float64 else dtype
    if dtype not in _RANGE:
        raise UnsupportedDepthError(path, f"cannot write pixel depth {dtype} (uint8, uint16, int16, float32)")
    allowed = _record(ext).depths
    if dtype in allowed:
        return dtype
    return U16 if dtype in (F32, I16) and U16 in allowed else allowed[0]


def storable(path: StrPath, ext: str, image: np.ndarray) -> np.ndarray:
    """Convert the channels and depth the format of extension ``ext`` cannot hold, warning about each.

    Raises :class:`ImageWriteError` for an array that is not an image and
    :class:`UnsupportedDepthError` for a dtype that cannot be written; warns
    :class:`DepthConversionWarning` naming ``path`` for every conversion.
    """
    channels = 1 if image.ndim == 2 else image.shape[-1]
    if image.ndim not in (2, 3) or channels not in (1, 3, 4) or 0 in image.shape:
        raise ImageWriteError(path, f"cannot be written: an array of shape {image.shape} is not an image")
    dtype = _stored_dtype(path, ext, image.dtype)
    allowed = _record(ext).channels
    if channels not in allowed:
        code, change = _CHANNEL_CHANGES[channels, min(allowed, key=lambda n: abs(n - channels))]
        warnings.warn(f"{os.fspath(path)}: {ext} cannot hold {channels} channels; {change}",
                      DepthConversionWarning, stacklevel=3)
        image = cv2.cvtColor(image, code)
    if image.dtype == np.float64:
        image = image.astype(np.float32)
    if image.dtype != dtype:
        (src_low, src), (dst_low, dst) = _RANGE[image.dtype], _RANGE[dtype]
        warnings.warn(f"{os.fspath(path)}: {ext} cannot hold {image.dtype}; stored as {dtype} ({src_low:g}..{src:g} "
                      f"scaled to {dst_low:g}..{dst:g})", DepthConversionWarning, stacklevel=3)
        scaled = (image.astype(np.float32) - np.float32(src_low)) * np.float32((dst - dst_low) / (src - src_low))
        scaled += np.float32(dst_low)
        if dtype != F32:
            np.nan_to_num(scaled, copy=False)
            np.clip(np.rint(scaled, out=scaled), dst_low, dst, out=scaled)
        image = scaled.astype(dtype)
    if ext == ".hdr" and np.any(image < 0):  # RGBE shares one exponent among positive mantissas
        warnings.warn(f"{os.fspath(path)}: .hdr (RGBE) holds no negative values; they are stored as 0",
                      DepthConversionWarning, stacklevel=3)
        image = np.maximum(image, np.float32(0))
    if ext == ".pbm" and np.any((image != 0) & (image != 255)):  # OpenCV writes every non-zero pixel white
        warnings.warn(f"{os.fspath(path)}: .pbm holds 1 bit per pixel; stored as black (below 128) and white",
                      DepthConversionWarning, stacklevel=3)
        image = np.where(image >= 128, np.uint8(255), np.uint8(0))
    return image


def _metadata_chunks(ext: str, metadata: Metadata | None) -> tuple[list[int], list[np.ndarray]]:
    record = _record(ext)
    if metadata is None or not record.metadata:
        return [], []
    xmp = metadata.xmp
    if xmp and record.name == "JPEG":
        xmp = _XMP_JPEG_HEADER + xmp  # the JPEG encoder writes the APP1 payload as given
    elif xmp and ext == ".png":
        xmp += b"\0"  # the PNG encoder reads a NUL-terminated string
    exif = orientation.reset(metadata.exif)[1] if metadata.exif else None
    present = [(kind, value) for kind, value in ((cv2.IMAGE_METADATA_EXIF, exif), (cv2.IMAGE_METADATA_XMP, xmp),
                                                 (cv2.IMAGE_METADATA_ICCP, metadata.icc)) if value]
    return [kind for kind, _ in present], [np.frombuffer(value, np.uint8) for _, value in present]
