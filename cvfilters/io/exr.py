"""OpenEXR files through the Academy Software Foundation's ``OpenEXR`` bindings.

OpenCV's EXR codec is off by default (``OPENCV_IO_ENABLE_OPENEXR``), so EXR goes through
the reference library instead (``pip install cvfilters[colour]``). Images are float32
scene-linear light: values above 1 (and below 0) are kept both ways. Reads take R, G, B
(and A) or a single Y channel of the first part, half or float, as float32 BGR(A) or grey;
the pixel count is checked from the header before any pixel is decoded. Writes store
float32 channels with ZIP compression. The bindings read and write named files only, so
bytes pass through a temporary file.

Radiance HDR (``.hdr``) needs nothing here: OpenCV's RGBE codec reads and writes it,
values above 1 included.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from cvfilters.core.errors import ImageWriteError, NotAnImageError, TruncatedImageError, UsageError

MAGIC = b"v/1\x01"


def is_exr(data: bytes) -> bool:
    """Whether ``data`` starts with the OpenEXR magic number."""
    return data[:4] == MAGIC


def decode(data: bytes, name: str | os.PathLike[str], check_size: Callable[[int, int], None]) -> np.ndarray:
    """The first part of an EXR file as float32: (H, W) grey, (H, W, 3) BGR or (H, W, 4) BGRA.

    ``check_size(width, height)`` is called from the header before the pixels are decoded
    (it raises to refuse an image over the pixel limit).
    """
    openexr = _module()
    with _temporary(data) as path:
        try:
            header = openexr.File(path, header_only=True).header()
            (x0, y0), (x1, y1) = header["dataWindow"]
            check_size(int(x1) - int(x0) + 1, int(y1) - int(y0) + 1)
            channels = openexr.File(path, separate_channels=True).channels()
        except (RuntimeError, ValueError, OSError, KeyError):
            raise TruncatedImageError(name, "EXR data is truncated or corrupt (OpenEXR cannot read it)") from None
    planes = {key: np.asarray(channel.pixels) for key, channel in channels.items()}
    if all(key in planes for key in "RGB"):
        order = ["B", "G", "R", *(["A"] if "A" in planes else [])]
    elif "Y" in planes:
        order = ["Y", *(["A"] if "A" in planes else [])]
    else:
        raise NotAnImageError(name, f"EXR channels {', '.join(sorted(planes))} hold no R, G, B or Y")
    if order == ["Y", "A"]:
        order = ["Y", "Y", "Y", "A"]  # grey + alpha runs as BGRA, as for other formats
    stacked = [planes[key].astype(np.float32) for key in order]
    return stacked[0] if len(stacked) == 1 else np.ascontiguousarray(np.dstack(stacked))


def encode(image: np.ndarray, name: str | os.PathLike[str]) -> bytes:
    """float32 (H, W), (H, W, 3) BGR or (H, W, 4) BGRA as the bytes of an EXR file (float channels, ZIP)."""
    openexr = _module()
    pixels = np.asarray(image, np.float32)
    if pixels.ndim == 2 or pixels.shape[2] == 1:
        channels: dict[str, Any] = {"Y": np.ascontiguousarray(pixels.reshape(pixels.shape[:2]))}
    else:
        names = "BGRA"[:pixels.shape[2]]
        channels = {key: np.ascontiguousarray(pixels[..., i]) for i, key in enumerate(names)}
    header = {"compression": openexr.ZIP_COMPRESSION, "type": openexr.scanlineimage}
    with _temporary(b"") as path:
        try:
            openexr.File(header, channels).write(path)
        except (RuntimeError, ValueError, OSError) as exc:
            raise ImageWriteError(name, f"cannot be encoded as .exr: {exc}") from None
        with open(path, "rb") as file:
            return file.read()


def available() -> bool:
    """Whether the OpenEXR bindings are installed."""
    try:
        _module()
    except UsageError:
        return False
    return True


def _module() -> Any:
    try:
        import OpenEXR
    except ImportError:
        raise UsageError("EXR files need the OpenEXR bindings: pip install 'cvfilters[colour]'") from None
    return OpenEXR


@contextmanager
def _temporary(data: bytes) -> Iterator[str]:
    handle, path = tempfile.mkstemp(suffix=".exr", prefix="cvfilters-")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        yield path
    finally:
        os.unlink(path)
