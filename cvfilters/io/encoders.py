"""The two outputs OpenCV's encoders cannot make: grey+alpha PNG and TIFF with EXIF and ICC.

* ``cv2.imencode`` takes 1, 3 or 4 channels, so a grey+alpha image (BGRA with B = G = R in
  memory) would be stored as RGBA. :func:`grey_alpha_png` writes PNG colour type 4 (8 or
  16 bits) directly: IHDR, the metadata chunks, zlib-compressed rows, IEND.
* OpenCV's TIFF encoder writes no metadata. :func:`tiff_with_metadata` writes through
  Pillow, which puts EXIF in its own sub-IFD and the ICC profile in tag 34675, for the modes
  Pillow's TIFF writer holds (8-bit grey, grey+alpha, BGR, BGRA; 16-bit and float grey).
"""

from __future__ import annotations

import struct
import zlib
from io import BytesIO
from typing import TYPE_CHECKING

import cv2
import numpy as np

if TYPE_CHECKING:  # Pillow is imported where it is used: most writes never need it
    from PIL import Image

from cvfilters.core.pixels import is_gray

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_EXIF_HEADER = b"Exif\0\0"


def beyond_opencv(ext: str, image: np.ndarray, *, exif: bytes | None, icc: bytes | None, xmp: bytes | None,
                  grey: bool, compression: int | None) -> bytes | None:
    """The file for what OpenCV's encoders would lose, or None where OpenCV's encoding keeps everything.

    ``grey``: the source stored grey (+alpha). A PNG of a BGRA image with B = G = R is then
    written as grey+alpha; a TIFF with EXIF or ICC goes through Pillow where its modes hold
    the image (the caller warns where they do not).
    """
    if ext == ".png" and grey and image.dtype in (np.uint8, np.uint16) and image.ndim == 3 \
            and image.shape[2] == 4 and is_gray(image):
        return grey_alpha_png(image, exif=exif, icc=icc, xmp=xmp, compression=compression)
    if ext in (".tif", ".tiff") and (exif or icc):
        return tiff_with_metadata(image, exif=exif, icc=icc, grey=grey)
    return None


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def grey_alpha_png(image: np.ndarray, *, exif: bytes | None = None, icc: bytes | None = None,
                   xmp: bytes | None = None, compression: int | None = None) -> bytes:
    """Encode a BGRA uint8 or uint16 image whose B = G = R as a grey+alpha PNG.

    Parameters
    ----------
    image : numpy.ndarray
        (H, W, 4); the grey is taken from the first channel.
    exif, icc, xmp : bytes, optional
        Stored as ``eXIf``, ``iCCP`` (zlib, profile name "ICC") and an ``iTXt``
        ``XML:com.adobe.xmp`` chunk.
    compression : int, optional
        zlib level 0-9 (default 6).
    """
    height, width = image.shape[:2]
    depth = 16 if image.dtype == np.uint16 else 8
    pairs = np.ascontiguousarray(image[..., [0, 3]]).astype(">u2" if depth == 16 else np.uint8)
    rows = pairs.reshape(height, width * 2).view(np.uint8)
    raw = np.hstack([np.zeros((height, 1), np.uint8), rows]).tobytes()  # filter type 0 on every row
    out = [_PNG_SIGNATURE, _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, 4, 0, 0, 0))]
    if icc:
        out.append(_chunk(b"iCCP", b"ICC\0\0" + zlib.compress(icc)))
    if exif:
        out.append(_chunk(b"eXIf", exif.removeprefix(_EXIF_HEADER)))
    if xmp:
        out.append(_chunk(b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0" + xmp))
    out.append(_chunk(b"IDAT", zlib.compress(raw, 6 if compression is None else compression)))
    out.append(_chunk(b"IEND", b""))
    return b"".join(out)


def _pillow_image(image: np.ndarray, grey: bool) -> Image.Image | None:
    """A Pillow image of the same pixels, or None where Pillow's TIFF writer cannot hold them."""
    from PIL import Image

    if image.ndim == 2:
        held = image.dtype in (np.uint8, np.uint16, np.float32)  # modes L, I;16 and F
        return Image.fromarray(np.ascontiguousarray(image)) if held else None
    if image.dtype != np.uint8:
        return None
    if image.shape[2] == 3:
        return Image.fromarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
    if grey and is_gray(image):
        return Image.fromarray(np.ascontiguousarray(image[..., [0, 3]]))  # LA
    return Image.fromarray(cv2.cvtColor(image, cv2.COLOR_BGRA2RGBA))


def tiff_with_metadata(image: np.ndarray, *, exif: bytes | None, icc: bytes | None,
                       grey: bool = False) -> bytes | None:
    """Encode an uncompressed TIFF with EXIF and ICC through Pillow (its libtiff writer, used for
    compression, refuses the EXIF sub-IFD); None where Pillow cannot hold the image.

    ``grey`` stores a BGRA image with B = G = R as grey+alpha, as the source had it.
    """
    picture = _pillow_image(image, grey)
    if picture is None:
        return None
    options: dict[str, object] = {}
    if exif:
        options["exif"] = _EXIF_HEADER + exif.removeprefix(_EXIF_HEADER)
    if icc:
        options["icc_profile"] = icc
    buffer = BytesIO()
    picture.save(buffer, "TIFF", **options)
    return buffer.getvalue()
