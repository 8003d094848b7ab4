"""Blurs: Gaussian and box (mean) filters."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..context import Context
from ..params import MAX_KERNEL_SIDE, Param
from ..registry import register
from .common import border_param, with_border


def auto_gaussian_ksize(sigma: float, dtype: np.dtype) -> int:
    """OpenCV's own rule for ksize=0: 6 sigma + 1 for uint8, 8 sigma + 1 otherwise, made odd."""
    return int(round(sigma * (3 if dtype == np.uint8 else 4) * 2 + 1)) | 1


@register(
    category="blur",
    summary="Gaussian blur with standard deviation sigma (px).",
    params=[
        Param("sigma", "float", 2.0, min=0.1, max=100.0, unit="px", help="standard deviation of the Gaussian"),
        Param("ksize", "int", 0, min=0, max=MAX_KERNEL_SIDE, odd=True, unit="px",
              help="kernel width and height; 0 = automatic "
                   "(OpenCV's rule: 6 sigma + 1 for uint8, 8 sigma + 1 otherwise)"),
        border_param(),
    ],
    alpha="premultiply",
)
def gaussian_blur(ctx: Context, img: Any, *, sigma: float, ksize: int, border: str) -> Any:
    """Gaussian blur, ``cv2.GaussianBlur`` with the same sigma in x and y.

    Integer images are rounded and saturated; on images with alpha the blur runs on
    premultiplied colour, so transparent regions do not darken the edges.
    """
    size = ksize or auto_gaussian_ksize(sigma, ctx.spec.dtype)
    return with_border(ctx, img, (size // 2, size // 2), border,
                       lambda im, b: ctx.be.gaussian(im, (size, size), sigma, b))


@register(
    category="blur",
    summary="Box blur: the mean over a size x size square.",
    params=[
        Param("size", "int", 5, min=1, max=MAX_KERNEL_SIDE, unit="px", help="side of the square window"),
        border_param(),
    ],
    alpha="premultiply",
)
def box_blur(ctx: Context, img: Any, *, size: int, border: str) -> Any:
    """Mean filter over a ``size`` x ``size`` window anchored at its centre (``cv2.blur``)."""
    return with_border(ctx, img, (size, size), border, lambda im, b: ctx.be.box(im, (size, size), b))
