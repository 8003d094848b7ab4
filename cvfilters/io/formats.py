"""One record per file format: what each holds and how it is encoded.

Every fact about a format lives in its :class:`ImageFormat` or :class:`VideoFormat` record
below; reading, writing, frames and video consult these records instead of keeping tables of
their own. Only :mod:`cv2` and :mod:`numpy` are imported here (the lowest module of ``io``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np

from cvfilters.core.errors import ParameterError

U8, U16, I16, F32 = np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.int16), np.dtype(np.float32)
# The sample types read and written, and the values each spans (floats: 0..1)
SAMPLE_RANGES = {U8: (0.0, 255.0), U16: (0.0, 65535.0), I16: (-32768.0, 32767.0), F32: (0.0, 1.0)}

Frames = Literal["timed", "pages"] | None


@dataclass(frozen=True)
class ImageFormat:
    """What an image format holds and how cvfilters writes it.

    Attributes
    ----------
    name : str
        The format's name as Pillow's header parse reports it (``"JPEG"``, ``"PNG"``).
    extensions : tuple of str
        Lower-case file extensions, the usual one first.
    depths : tuple of numpy.dtype
        The sample types stored; the first is the fallback for the others.
    channels : tuple of int
        Channel counts stored (1 grey, 3 BGR, 4 BGRA).
    metadata : bool
        EXIF, ICC and XMP are written (through OpenCV's encoder).
    quality_flag : int or None
        The OpenCV flag that takes ``quality`` (1-100); None where quality means nothing.
    default_quality : int or None
        The quality written when none is asked for (None: the encoder's own default).
    lossless_quality : int or None
        The flag value that asks for lossless coding (WebP's 101).
    frames : {"timed", "pages"} or None
        Many frames with durations (animations), many pages without (TIFF), or one image.
    compression_flag : int or None
        The OpenCV flag that takes a zlib level 0-9 (PNG).
    """

    name: str
    extensions: tuple[str, ...]
    depths: tuple[np.dtype, ...] = (U8,)
    channels: tuple[int, ...] = (1, 3, 4)
    metadata: bool = False
    quality_flag: int | None = None
    default_quality: int | None = None
    lossless_quality: int | None = None
    frames: Frames = None
    compression_flag: int | None = None

    def params(self, quality: int | None = None, compression: int | None = None, *,
               lossless: bool = False) -> list[int]:
        """OpenCV's encoder parameters for ``quality`` (1-100), ``compression`` (0-9) and ``lossless``.

        A quality the format does not take is checked and ignored; without one the format's
        default quality is written (lossless where ``lossless`` and the format can).

        Raises
        ------
        ParameterError
            ``quality`` or ``compression`` is not an integer in its range.
        """
        _check("quality", quality, 1, 100)
        _check("compression", compression, 0, 9)
        params: list[int] = []
        if self.quality_flag is not None:
            chosen = self.lossless_quality if lossless and self.lossless_quality is not None else \
                quality if quality is not None else self.default_quality
            if chosen is not None:
                params += [self.quality_flag, chosen]
        if self.compression_flag is not None and compression is not None:
            params += [self.compression_flag, compression]
        return params


@dataclass(frozen=True)
class VideoFormat:
    """A video container: the ffmpeg codecs tried in order, and OpenCV's fallback.

    Attributes
    ----------
    extensions : tuple of str
    codecs : tuple of str
        ffmpeg encoder names, best first (``libx264``, ``libvpx-vp9``).
    fallback_fourcc : str or None
        The codec of OpenCV's own writer when ffmpeg is not there (None: ffmpeg only).
    alpha : bool
        The first codec keeps an alpha channel (VP9 in WebM, as yuva420p).
    max_crf : int
        The codec's CRF scale top (``--quality`` 100 maps to a low CRF, 1 to this).
    """

    extensions: tuple[str, ...]
    codecs: tuple[str, ...]
    fallback_fourcc: str | None
    alpha: bool = False
    max_crf: int = 51


def _check(name: str, value: int | None, low: int, high: int) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high):
        raise ParameterError("write", name, f"must be an integer from {low} to {high}, got {value!r}")


IMAGE_FORMATS: tuple[ImageFormat, ...] = (
    ImageFormat("JPEG", (".jpg", ".jpeg", ".jpe"), channels=(1, 3), metadata=True,
                quality_flag=cv2.IMWRITE_JPEG_QUALITY, default_quality=90),
    ImageFormat("PNG", (".png",), (U8, U16), metadata=True, frames="timed",
                compression_flag=cv2.IMWRITE_PNG_COMPRESSION),
    ImageFormat("TIFF", (".tif", ".tiff"), (U8, U16, F32, I16), frames="pages"),
    ImageFormat("WEBP", (".webp",), channels=(3, 4), metadata=True, quality_flag=cv2.IMWRITE_WEBP_QUALITY,
                default_quality=90, lossless_quality=101, frames="timed"),
    ImageFormat("AVIF", (".avif",), metadata=True, quality_flag=cv2.IMWRITE_AVIF_QUALITY, frames="timed"),
    ImageFormat("GIF", (".gif",), channels=(3, 4), frames="timed"),
    ImageFormat("BMP", (".bmp",)),
    ImageFormat("PPM", (".ppm",), (U8, U16), channels=(3,)),
    ImageFormat("PGM", (".pgm",), (U8, U16), channels=(1,)),
    ImageFormat("PBM", (".pbm",), channels=(1,)),
    ImageFormat("PNM", (".pnm",), (U8, U16), channels=(1, 3)),
    ImageFormat("JPEG2000", (".jp2",), (U8, U16)),
    ImageFormat("EXR", (".exr",), (F32,)),
    ImageFormat("HDR", (".hdr",), (F32,), channels=(3,)),
)

VIDEO_FORMATS: tuple[VideoFormat, ...] = (
    VideoFormat((".mp4", ".mov"), ("libx264",), "mp4v"),
    VideoFormat((".mkv",), ("libx264",), "XVID"),
    VideoFormat((".avi",), ("mjpeg",), "MJPG", max_crf=31),
    VideoFormat((".webm",), ("libvpx-vp9",), None, alpha=True, max_crf=63),
)

_BY_EXTENSION = {ext: fmt for fmt in IMAGE_FORMATS for ext in fmt.extensions}
_VIDEO_BY_EXTENSION = {ext: fmt for fmt in VIDEO_FORMATS for ext in fmt.extensions}
_BY_NAME = {fmt.name: fmt for fmt in IMAGE_FORMATS}
IMAGE_EXTENSIONS: frozenset[str] = frozenset(_BY_EXTENSION)
VIDEO_EXTENSIONS: frozenset[str] = frozenset(_VIDEO_BY_EXTENSION)


def image_format(ext: str) -> ImageFormat | None:
    """The record of an image extension (``".jpg"``, any case), or None."""
    return _BY_EXTENSION.get(ext.lower())


def named(name: str) -> ImageFormat | None:
    """The record of a format by Pillow's name for it (``"GIF"``), or None."""
    return _BY_NAME.get(name)


def video_format(ext: str) -> VideoFormat | None:
    """The record of a video container extension (``".mp4"``, any case), or None."""
    return _VIDEO_BY_EXTENSION.get(ext.lower())
