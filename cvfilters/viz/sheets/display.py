"""Images made displayable and comparable: depth and channel conversion, 8-bit display copies, fitting."""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

from cvfilters.core.pixels import full_scale

WHITE = (255, 255, 255)


def convert_depth(image: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """Rescale an image to another depth (uint8, uint16 or float32 0..1), rounding to integers.

    Parameters
    ----------
    image : numpy.ndarray
        uint8, uint16, float32 or float64 pixels.
    dtype : numpy dtype
        The depth wanted.

    Returns
    -------
    numpy.ndarray
        ``image`` itself when it already has ``dtype``; float input is clipped to 0..1.
    """
    dtype = np.dtype(dtype)
    if image.dtype == dtype:
        return image
    scaled = image.astype(np.float32) * np.float32(full_scale(dtype) / full_scale(image.dtype))
    if dtype.kind == "f":
        return scaled.astype(dtype)
    return np.rint(np.clip(scaled, 0, full_scale(dtype), out=scaled), out=scaled).astype(dtype)


def _channels(image: np.ndarray) -> int:
    return 1 if image.ndim == 2 else image.shape[2]


def convert_channels(image: np.ndarray, channels: int) -> np.ndarray:
    """Gray to BGR(A) and BGR to BGRA (opaque); an image with that many channels is returned as is.

    Parameters
    ----------
    image : numpy.ndarray
        (H, W), (H, W, 1), (H, W, 3) or (H, W, 4).
    channels : int
        1, 3 or 4, not fewer than the image has (nothing is dropped).
    """
    have = _channels(image)
    if have == channels:
        return image
    if have > channels:
        raise ValueError(f"cannot reduce {have} channels to {channels}")
    code = {(1, 3): cv2.COLOR_GRAY2BGR, (1, 4): cv2.COLOR_GRAY2BGRA, (3, 4): cv2.COLOR_BGR2BGRA}[have, channels]
    return cv2.cvtColor(image.reshape(image.shape[:2]) if have == 1 else image, code)


def to_display(image: np.ndarray) -> np.ndarray:
    """Any cvfilters image as 8-bit BGR for the screen: depth scaled, gray repeated, alpha over white.

    Parameters
    ----------
    image : numpy.ndarray
        uint8, uint16 or float32 (0..1); 1, 3 or 4 channels.

    Returns
    -------
    numpy.ndarray
        (H, W, 3) uint8.
    """
    image = convert_depth(np.asarray(image), np.uint8)
    if _channels(image) == 4:
        alpha = image[..., 3:].astype(np.float32) / 255
        return np.rint(image[..., :3] * alpha + 255 * (1 - alpha)).astype(np.uint8)
    return convert_channels(image, 3)


def fit(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """Scale an 8-bit BGR image to fit a ``width`` x ``height`` box, keeping its aspect, centred on white.

    Shrinking averages (``INTER_AREA``); enlarging repeats pixels (``INTER_NEAREST``) so
    pixel-level effects stay visible.
    """
    h, w = image.shape[:2]
    factor = min(width / w, height / h)
    size = (max(1, min(width, round(w * factor))), max(1, min(height, round(h * factor))))
    resized = cv2.resize(image, size, interpolation=cv2.INTER_AREA if factor < 1 else cv2.INTER_NEAREST)
    canvas = np.full((height, width, 3), WHITE, np.uint8)
    top, left = (height - size[1]) // 2, (width - size[0]) // 2
    canvas[top:top + size[1], left:left + size[0]] = resized
    return canvas


def shrink_by(image: np.ndarray, factor: float, to_int: Callable[[float], int]) -> np.ndarray:
    """``image`` resized by ``factor`` (area average), each side ``to_int(side * factor)`` and at least 1."""
    size = (max(1, to_int(image.shape[1] * factor)), max(1, to_int(image.shape[0] * factor)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)

