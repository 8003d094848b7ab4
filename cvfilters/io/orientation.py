"""Orientation: the one rule that turns every decoded image upright exactly once.

A file asks for one of the eight orientations (TIFF and EXIF tag 274; AVIF's ``irot`` and
``imir`` boxes, which Pillow's header parse reports as that EXIF tag). Each decoder reports
whether it has already applied it, and only a decoder that has not is followed by
:func:`upright`. What the decoders of this build do (tests/io/test_orientation.py checks each):

* OpenCV's TIFF decoder applies the Orientation tag of every page itself (``imdecode`` and
  ``imdecodemulti``) and returns no EXIF; OpenCV's other decoders (JPEG, PNG, WebP, AVIF,
  and ``imdecodeanimation``) leave the pixels as stored.
* Recent Pillow (13 here) applies a TIFF's Orientation on load (and its header then gives the
  upright size); cvfilters' Pillow decoder calls ``ImageOps.exif_transpose`` after loading,
  which applies the orientation of any format where Pillow did not and does nothing where it
  did, so that decoder always returns the image upright.

The EXIF written with an output carries Orientation 1 (:func:`reset`), as its pixels are upright.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import cv2
import numpy as np

TAG = 0x0112
_EXIF_HEADER = b"Exif\0\0"
_BYTE_ORDERS: dict[bytes, Literal["little", "big"]] = {b"II": "little", b"MM": "big"}  # TIFF/EXIF byte order marks
_TIFF_SIGNATURES = (b"II*\0", b"MM\0*", b"II+\0", b"MM\0+")  # classic and BigTIFF
_UPRIGHT: dict[int, Callable[[np.ndarray], np.ndarray]] = {  # orientation -> what makes the stored pixels upright
    2: lambda a: cv2.flip(a, 1),
    3: lambda a: cv2.rotate(a, cv2.ROTATE_180),
    4: lambda a: cv2.flip(a, 0),
    5: cv2.transpose,
    6: lambda a: cv2.rotate(a, cv2.ROTATE_90_CLOCKWISE),
    7: lambda a: cv2.rotate(cv2.transpose(a), cv2.ROTATE_180),
    8: lambda a: cv2.rotate(a, cv2.ROTATE_90_COUNTERCLOCKWISE),
}


def upright(image: np.ndarray, orientation: int) -> np.ndarray:
    """The stored pixels of a file with ``orientation`` (1 to 8) turned upright; other values leave them."""
    turn = _UPRIGHT.get(orientation)
    return image if turn is None else turn(image)


def applied_by_opencv(data: bytes) -> bool:
    """Whether OpenCV's decoder applies the file's orientation itself (its TIFF decoder does)."""
    return data[:4] in _TIFF_SIGNATURES


def requested(header_exif: object, exif: bytes | None) -> int:
    """The orientation a (non-TIFF) file asks for: that of the EXIF Pillow's header parse found
    (``header_exif``; for AVIF it stands for the ``irot``/``imir`` boxes), else that of ``exif``
    (the block OpenCV returned; OpenCV misses an APNG's), else 1."""
    source = header_exif if isinstance(header_exif, bytes) and header_exif else exif or b""
    return reset(source)[0]


def reset(exif: bytes) -> tuple[int, bytes]:
    """The EXIF Orientation, and the block (without its ``Exif\\0\\0`` header) with it set to 1
    in place (every other byte, maker notes with absolute offsets included, stays); (1, exif)
    without a valid tag."""
    exif = exif.removeprefix(_EXIF_HEADER)
    order = _BYTE_ORDERS.get(exif[:2])
    if order is None or len(exif) < 8:
        return 1, exif
    ifd = int.from_bytes(exif[4:8], order)
    end = min(ifd + 2 + 12 * int.from_bytes(exif[ifd : ifd + 2], order), len(exif) - 11)
    for pos in range(ifd + 2, end, 12):
        if exif[pos : pos + 4] == TAG.to_bytes(2, order) + (3).to_bytes(2, order):  # Orientation, SHORT
            value = int.from_bytes(exif[pos + 8 : pos + 10], order)
            return value, exif[: pos + 8] + (1).to_bytes(2, order) + exif[pos + 10 :]
    return 1, exif
