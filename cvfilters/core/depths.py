"""Signed 16-bit images through the filters, which work on uint8, uint16 and float32.

An int16 image runs as float32 in the documented range: -32768..32767 maps linearly onto
0..1 (``(v + 32768) / 65535``), the filters run as on any float32 image, and the result maps
back, rounded and saturated. Linear filters (blurs, convolutions) are therefore exact up to
rounding; a point operation acts on that 0..1 scale (``invert`` turns v into -1 - v).
"""

from __future__ import annotations

import numpy as np

_OFFSET = np.float32(32768.0)
_SPAN = np.float32(65535.0)


def int16_to_float32(image: np.ndarray) -> np.ndarray:
    """Map an int16 image onto float32 0..1."""
    return (image.astype(np.float32) + _OFFSET) / _SPAN


def float32_to_int16(image: np.ndarray) -> np.ndarray:
    """Map float32 0..1 back onto int16, rounded to nearest and saturated (NaN is 0, i.e. -32768)."""
    scaled = np.nan_to_num(image.astype(np.float32)) * _SPAN - _OFFSET
    return np.clip(np.rint(scaled), -32768, 32767).astype(np.int16)
