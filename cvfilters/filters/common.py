"""Pieces shared by filter families: border parameters and wrap-around borders."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2

from ..backends import BORDER_HELP, BORDERS
from ..context import Context, ImageSpec
from ..params import Param


def center_param(help_text: str = "centre of the effect; [0.5,0.5] is the image centre") -> Param:
    """The ``center`` parameter of positional effects, in fractions of width and height."""
    return Param("center", "point", (0.5, 0.5), min=0.0, max=1.0, unit="fraction of width, height", help=help_text)


def border_param(default: str = "reflect101") -> Param:
    """The ``border`` parameter every neighbourhood filter declares."""
    return Param("border", "choice", default, choices=tuple(BORDERS), help=BORDER_HELP)


def with_border(ctx: Context, image: Any, reach: tuple[int, int], border: str,
                run: Callable[[Any, int], Any]) -> Any:
    """Run a neighbourhood operation ``run(image, cv_border)`` with any border mode.

    OpenCV's filters reject ``BORDER_WRAP``; for it the image is padded by ``reach``
    (x, y) pixels with wrapped content, filtered, and cropped back to its extent
    (Core Image's clamp-and-crop approach, with a wrap instead of a clamp).
    """
    if border != "wrap":
        return run(image, BORDERS[border])
    rx, ry = reach
    padded = ctx.be.pad(image, ry, ry, rx, rx, cv2.BORDER_WRAP)
    return ctx.be.crop(run(padded, cv2.BORDER_REFLECT_101), rx, ry, ctx.spec.width, ctx.spec.height)


BT601_BGR = (0.114, 0.587, 0.299)  # luma weights of B, G, R (cv2.COLOR_BGR2GRAY)


def split_color(color: tuple[float, ...], channels: int, *, bgra: bool) -> tuple[tuple[float, ...], float]:
    """``(colour, alpha)`` of a colour parameter (fractions of full scale) for 1 or 3 colour channels.

    Colour parameters hold RGB(A) values, as people write colours
    (:data:`cvfilters.params.COLOR_SYNTAX`); this is where they become the image's BGR
    order. One value is every channel: alpha too where ``bgra`` (``[0]`` is transparent
    black), else opaque. Two values are gray and alpha, three RGB (opaque), four RGBA.
    One colour channel takes the BT.601 luma.
    """
    values = tuple(float(v) for v in color)
    if len(values) == 1:
        bgr, alpha = values * 3, values[0] if bgra else 1.0
    elif len(values) == 2:
        bgr, alpha = (values[0],) * 3, values[1]
    else:
        bgr, alpha = values[2::-1], values[3] if len(values) == 4 else 1.0
    if channels == 1:
        return (sum(w * c for w, c in zip(BT601_BGR, bgr, strict=True)),), alpha
    return bgr, alpha


def color_channels(spec: ImageSpec) -> int:
    """Colour channels of an image: 3 for BGR and BGRA, 1 for gray."""
    return 3 if spec.channels == 4 else spec.channels
