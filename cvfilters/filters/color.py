"""Colour (point) filters: each output pixel depends on the same input pixel only."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from ..context import Context
from ..registry import register


@register(category="color", summary="Negative: full scale minus each channel.")
def invert(ctx: Context, img: Any) -> Any:
    """``out = max - in`` per channel (255, 65535 or 1.0); alpha is kept."""
    if ctx.spec.dtype == np.float32:
        return ctx.be.convert(img, np.float32, -1.0, 1.0)
    return ctx.be.bitwise_not(img)


@register(category="color", summary="Luma (BT.601) grey, kept in the image's channel count.")
def grayscale(ctx: Context, img: Any) -> Any:
    """``Y = 0.299 R + 0.587 G + 0.114 B`` (``cv2.cvtColor``), copied into B, G and R.

    The channel count is kept so the result fits any pipeline; alpha is kept.
    """
    if ctx.spec.channels == 1:
        return img
    return ctx.be.cvt_color(ctx.be.cvt_color(img, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
