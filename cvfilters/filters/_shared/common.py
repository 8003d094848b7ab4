"""Pieces shared by filter families: border parameters, wrap-around borders, row stripes."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import cv2

from cvfilters.backends import BORDER_HELP, BORDERS
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.types import Image
from cvfilters.registry.params import Param


def center_param(help_text: str = "centre of the effect; [0.5,0.5] is the image centre") -> Param:
    """The ``center`` parameter of positional effects, in fractions of width and height."""
    return Param("center", "point", (0.5, 0.5), min=0.0, max=1.0, unit="fraction of width, height", help=help_text)


def border_param(default: str = "reflect101") -> Param:
    """The ``border`` parameter every neighbourhood filter declares; its help marks ``default`` as the default."""
    unmarked = BORDER_HELP.replace(", default)", ")")
    marked = re.sub(rf"\b{default} \(([^()]*)\)", rf"{default} (\1, default)", unmarked, count=1)
    return Param("border", "choice", default, choices=tuple(BORDERS), help=marked)


def with_border(ctx: Context, image: Image, reach: tuple[int, int], border: str,
                run: Callable[[Any, int], Any]) -> Image:
    """Run a neighbourhood operation ``run(image, cv_border)`` with any border mode.

    OpenCV's filters reject ``BORDER_WRAP``; for it the image is padded by ``reach``
    (x, y) pixels with wrapped content, filtered, and cropped back to its extent
    (Core Image's clamp-and-crop approach, with a wrap instead of a clamp).
    """
    if border != "wrap":
        return run(image, BORDERS[border])
    rx, ry = reach
    padded = ctx.backend.pad(image, ry, ry, rx, rx, cv2.BORDER_WRAP)
    return ctx.backend.crop(run(padded, cv2.BORDER_REFLECT_101), rx, ry, ctx.info.width, ctx.info.height)


def color_channels(spec: ImageInfo) -> int:
    """Colour channels of an image: 3 for BGR and BGRA, 1 for gray."""
    return 3 if spec.channels == 4 else spec.channels
