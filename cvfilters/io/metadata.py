"""What a read carries to a write besides the pixels: :class:`Metadata`, filled by
:mod:`cvfilters.io.reading` and stored by :mod:`cvfilters.io.writing` where the format holds it.

OpenCV's JPEG decoder returns XMP with the ``http://ns.adobe.com/xap/1.0/\\0`` header and its
encoder does not add it: :data:`XMP_JPEG_HEADER` is taken off on read and put back on write, so
:attr:`Metadata.xmp` is the bare packet whatever the format.
"""

from __future__ import annotations

from dataclasses import dataclass

XMP_JPEG_HEADER = b"http://ns.adobe.com/xap/1.0/\0"


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
