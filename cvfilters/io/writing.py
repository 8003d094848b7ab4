"""Writing image files.

A write converts what the format cannot hold (each conversion warned as a
:class:`DepthConversionWarning`), encodes in memory (OpenCV, or :mod:`cvfilters.io.encoders`
for grey+alpha PNG and TIFF with metadata) and replaces the target atomically. Reading is
:mod:`cvfilters.io.reading`; many-frame files are streamed by :mod:`cvfilters.io.frames`.
OpenCV 5.1 behaviour relied on (tests/io/test_io.py checks it):

* EXIF is given to the encoder without the ``Exif\\0\\0`` header, which it adds.
* XMP goes into JPEG as given, so the ``http://ns.adobe.com/xap/1.0/\\0`` header
  (:data:`cvfilters.io.metadata.XMP_JPEG_HEADER`) is added here; the PNG encoder needs a
  NUL-terminated packet.
* Only JPEG, PNG, WebP and AVIF hold metadata (:mod:`cvfilters.io.formats` has each format's facts).
* The encoders complain as the decoders do, through OpenCV's logger and on file descriptor 2;
  while this module encodes, both are caught (:mod:`cvfilters.io.quiet`) and what was printed
  becomes the detail of the error raised.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import replace
from io import BytesIO
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from cvfilters.core import atomic
from cvfilters.core.arrays import host_bgr
from cvfilters.core.defaults import ChannelOrder, resolve_channel_order
from cvfilters.core.errors import ImageWriteError, OutputExistsError, UnsupportedDepthError
from cvfilters.core.types import StrPath
from cvfilters.io import colour, encoders, exr, jpeg, orientation
from cvfilters.io.formats import F32, I16, IMAGE_EXTENSIONS, SAMPLE_RANGES, U16, ImageFormat, image_format
from cvfilters.io.gif import GifWriter
from cvfilters.io.metadata import XMP_JPEG_HEADER, Metadata
from cvfilters.io.quiet import quiet

_CHANNEL_CHANGES = {
    (4, 3): (cv2.COLOR_BGRA2BGR, "the alpha channel is dropped"),
    (4, 1): (cv2.COLOR_BGRA2GRAY, "converted to gray, alpha dropped"),
    (3, 1): (cv2.COLOR_BGR2GRAY, "converted to gray"),
    (1, 3): (cv2.COLOR_GRAY2BGR, "gray repeated as B, G and R"),
}
_EXIF_HEADER = b"Exif\0\0"
TIFF_COMPRESSIONS_WRITTEN = frozenset({1, 5, 8, 32773, 32946})  # none, LZW, Deflate, PackBits: libtiff writes them


class DepthConversionWarning(UserWarning):
    """An output format cannot hold the image's depth or channels, so they were converted."""


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
        image, metadata = colour.to_colourspace(image, metadata or Metadata(), colorspace, intent)
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
    image = storable(path, ext, image, stacklevel=4)  # at the line that called write() or encode()
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


def _fit_jpeg_segments(path: StrPath, ext: str, metadata: Metadata | None) -> tuple[Metadata | None, bytes | None]:
    """Metadata OpenCV's JPEG encoder takes (each block within one 64 KB segment), and an ICC profile
    to split over APP2 segments afterwards. EXIF or XMP too large for a segment is dropped, with a
    warning (extended XMP is not written)."""
    if metadata is None or _record(ext).name != "JPEG":
        return metadata, None
    late_icc = metadata.icc if metadata.icc and not jpeg.fits_segment(b"ICC_PROFILE\0xx" + metadata.icc) else None
    dropped = [name for name, block, header in (("EXIF", metadata.exif, _EXIF_HEADER),
                                                ("XMP", metadata.xmp, XMP_JPEG_HEADER))
               if block and not jpeg.fits_segment(header + block.removeprefix(header))]
    for name in dropped:
        size = len((metadata.exif if name == "EXIF" else metadata.xmp) or b"")
        warnings.warn(f"{os.fspath(path)}: {name} of {size} bytes does not fit a JPEG segment (64 KB); it is "
                      "not written", DepthConversionWarning, stacklevel=4)
    return replace(metadata, icc=None if late_icc else metadata.icc,
                   exif=None if "EXIF" in dropped else metadata.exif,
                   xmp=None if "XMP" in dropped else metadata.xmp), late_icc


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
    if dtype not in SAMPLE_RANGES:
        raise UnsupportedDepthError(path, f"cannot write pixel depth {dtype} (uint8, uint16, int16, float32)")
    allowed = _record(ext).depths
    if dtype in allowed:
        return dtype
    return U16 if dtype in (F32, I16) and U16 in allowed else allowed[0]


def storable(path: StrPath, ext: str, image: np.ndarray, *, stacklevel: int = 3,
             shown: str | None = None) -> np.ndarray:
    """Convert the channels and depth the format of extension ``ext`` cannot hold, warning about each.

    Raises :class:`ImageWriteError` for an array that is not an image and
    :class:`UnsupportedDepthError` for a dtype that cannot be written; warns
    :class:`DepthConversionWarning` naming ``path`` and the format (``shown``, else ``ext``: a
    container that borrows another format's limits names itself) for every conversion,
    ``stacklevel`` frames up (the default: the caller's caller).
    """
    shown = shown or ext
    channels = 1 if image.ndim == 2 else image.shape[-1]
    if image.ndim not in (2, 3) or channels not in (1, 3, 4) or 0 in image.shape:
        raise ImageWriteError(path, f"cannot be written: an array of shape {image.shape} is not an image")
    dtype = _stored_dtype(path, ext, image.dtype)
    allowed = _record(ext).channels
    if channels not in allowed:
        code, change = _CHANNEL_CHANGES[channels, min(allowed, key=lambda n: abs(n - channels))]
        warnings.warn(f"{os.fspath(path)}: {shown} cannot hold {channels} channels; {change}",
                      DepthConversionWarning, stacklevel=stacklevel)
        image = cv2.cvtColor(image, code)
    if image.dtype == np.float64:
        image = image.astype(np.float32)
    if image.dtype != dtype:
        (src_low, src), (dst_low, dst) = SAMPLE_RANGES[image.dtype], SAMPLE_RANGES[dtype]
        warnings.warn(f"{os.fspath(path)}: {shown} cannot hold {image.dtype}; stored as {dtype} ({src_low:g}..{src:g} "
                      f"scaled to {dst_low:g}..{dst:g})", DepthConversionWarning, stacklevel=stacklevel)
        scaled = (image.astype(np.float32) - np.float32(src_low)) * np.float32((dst - dst_low) / (src - src_low))
        scaled += np.float32(dst_low)
        if dtype != F32:
            np.nan_to_num(scaled, copy=False)
            np.clip(np.rint(scaled, out=scaled), dst_low, dst, out=scaled)
        image = scaled.astype(dtype)
    if ext == ".hdr" and np.any(image < 0):  # RGBE shares one exponent among positive mantissas
        warnings.warn(f"{os.fspath(path)}: .hdr (RGBE) holds no negative values; they are stored as 0",
                      DepthConversionWarning, stacklevel=stacklevel)
        image = np.maximum(image, np.float32(0))
    if ext == ".pbm" and np.any((image != 0) & (image != 255)):  # OpenCV writes every non-zero pixel white
        warnings.warn(f"{os.fspath(path)}: .pbm holds 1 bit per pixel; stored as black (below 128) and white",
                      DepthConversionWarning, stacklevel=stacklevel)
        image = np.where(image >= 128, np.uint8(255), np.uint8(0))
    return image


def _metadata_chunks(ext: str, metadata: Metadata | None) -> tuple[list[int], list[np.ndarray]]:
    record = _record(ext)
    if metadata is None or not record.metadata:
        return [], []
    xmp = metadata.xmp
    if xmp and record.name == "JPEG":
        xmp = XMP_JPEG_HEADER + xmp  # the JPEG encoder writes the APP1 payload as given
    elif xmp and ext == ".png":
        xmp += b"\0"  # the PNG encoder reads a NUL-terminated string
    exif = orientation.reset(metadata.exif)[1] if metadata.exif else None
    present = [(kind, value) for kind, value in ((cv2.IMAGE_METADATA_EXIF, exif), (cv2.IMAGE_METADATA_XMP, xmp),
                                                 (cv2.IMAGE_METADATA_ICCP, metadata.icc)) if value]
    return [kind for kind, _ in present], [np.frombuffer(value, np.uint8) for _, value in present]
