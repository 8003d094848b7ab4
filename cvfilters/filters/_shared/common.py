"""Pieces shared by filter families: border parameters, wrap-around borders, row stripes."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

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


# Rows per stripe of :func:`in_stripes`: a 24 MP float32 intermediate (288 MB) runs at memory
# speed, a stripe of this many rows (6000 x 3 x 4 x 128 = 9 MB) in cache. bench/recipes.py:
# unsharp_mask at 24 MP went from about 2x to about 1x its uint8 recipe.
STRIPE_ROWS = 128


def in_stripes(img: Image, reach: int, border: str, run: Callable[[Image], Image]) -> Image:
    """``run(img)`` computed stripe by stripe of rows, bit for bit the same, where that is exact.

    ``run`` must be a neighbourhood operation reaching ``reach`` rows up and down (then
    pointwise work): each stripe is run with ``reach`` rows of context above and below, which
    are cropped off, so only the image's own top and bottom see the border. Runs whole for
    device images, the ``wrap`` border (it reaches the far side) and images of few stripes.
    """
    if not isinstance(img, np.ndarray) or border == "wrap" or img.shape[0] < 4 * STRIPE_ROWS \
            or reach > STRIPE_ROWS:
        return run(img)
    height = img.shape[0]
    out: np.ndarray | None = None
    for top in range(0, height, STRIPE_ROWS):
        bottom = min(height, top + STRIPE_ROWS)
        first, last = max(0, top - reach), min(height, bottom + reach)
        part = np.asarray(run(img[first:last]))[top - first:bottom - first]
        if out is None:
            out = np.empty((height, *part.shape[1:]), part.dtype)
        out[top:bottom] = part
    assert out is not None
    return out


def color_channels(spec: ImageInfo) -> int:
    """Colour channels of an image: 3 for BGR and BGRA, 1 for gray."""
    return 3 if spec.channels == 4 else spec.channels
