"""Sampling: remap with named interpolation, border and fill, and the two pixel-coordinate conventions.

Below both the warp filters (:mod:`cvfilters.filters.warp`) and pipeline fusion
(:mod:`cvfilters.engine.fusion`), which composes warps into one remap.

Two coordinate conventions, with names that say which:

- :func:`index_grid` (warps, OpenCV's ``remap``): pixel centres at integer
  coordinates, the image spans ``[-0.5, width - 0.5]``.
- :func:`center_coords` (masks and the feather family): the image covers
  ``[0, width]``, pixel ``i`` has its centre at ``i + 0.5``.
"""

from __future__ import annotations

import cv2
import numpy as np

from cvfilters.backends import BORDER_HELP, BORDERS
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.pixels import split_color
from cvfilters.core.types import BorderName, Image, InterpolationName
from cvfilters.registry.params import Param

INTERPOLATIONS: dict[str, int] = {
    "nearest": cv2.INTER_NEAREST,
    "linear": cv2.INTER_LINEAR,
    "cubic": cv2.INTER_CUBIC,
    "lanczos": cv2.INTER_LANCZOS4,
}
#: Where non-finite source coordinates are sent: far outside any image, so the border rule applies.
OUTSIDE = -1.0e6


def index_grid(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """float64 ``(x, y)`` pixel indices, each of shape ``(height, width)``: centres at integers (warps)."""
    x = np.arange(width, dtype=np.float64)
    y = np.arange(height, dtype=np.float64)
    return np.broadcast_to(x[None, :], (height, width)).copy(), np.broadcast_to(y[:, None], (height, width)).copy()


def center_coords(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel-centre coordinates ``x + 0.5`` (1, W) and ``y + 0.5`` (H, 1), float64 (masks, feathers)."""
    return (np.arange(width, dtype=np.float64)[None, :] + 0.5, np.arange(height, dtype=np.float64)[:, None] + 0.5)


def interpolation_param(default: str = "linear") -> Param:
    return Param("interpolation", "choice", default, choices=tuple(INTERPOLATIONS),
                 help="how a source position between pixel centres is sampled: nearest (exact pixels, "
                      "blocky), linear (bilinear, 2x2), cubic (bicubic, 4x4), lanczos (Lanczos-4, 8x8)")


def warp_border_param(default: str = "constant") -> Param:
    return Param("border", "choice", default, choices=tuple(BORDERS),
                 help="source positions outside the image: " + BORDER_HELP.split(": ", 1)[1].replace(", default", "")
                      + "; constant uses `fill`")


def fill_param(default: tuple[float, ...] = (0.0,)) -> Param:
    return Param("fill", "color", default, min=0.0, max=1.0, unit="fraction of full scale",
                 help="colour of border=constant (black, #ff8000, rgb(...), [r,g,b]); one value is every channel, "
                      "alpha included: [0] is transparent black on images with alpha")


def fill_values(fill: tuple[float, ...], spec: ImageInfo, premultiplied: bool) -> tuple[float, ...]:
    """Per-channel border values, in the scale of an image of ``spec``.

    One number fills every channel; two are gray and alpha; three are RGB with opaque
    alpha; four are RGBA. A gray image takes the BT.601 luma of the fill. Inside the
    premultiply alpha policy the colour is multiplied by the fill's alpha.
    """
    colour, alpha = split_color(fill, 1 if spec.channels == 1 else 3, bgra=True)
    if spec.channels == 4:
        per_channel = (*(c * alpha for c in colour), alpha) if premultiplied else (*colour, alpha)
    else:
        per_channel = colour
    return tuple(v * spec.max_value for v in per_channel)


def remap(ctx: Context, image: Image, map_x: Image, map_y: Image, interpolation: InterpolationName, border: BorderName,
          fill: tuple[float, ...], *, premultiplied: bool = True) -> Image:
    """``ctx.backend.remap`` with named interpolation and border, and a per-channel constant colour.

    The backend primitive takes one border value for all channels; a fill whose
    channels differ runs one remap per plane (split, remap, merge).
    """
    be = ctx.backend
    code, mode = INTERPOLATIONS[interpolation], BORDERS[border]
    values = fill_values(fill, ctx.info, premultiplied) if border == "constant" else (0.0,)
    if len(set(values)) == 1:
        return be.remap(image, map_x, map_y, code, mode, values[0])
    planes = be.split(image)
    return be.merge([be.remap(p, map_x, map_y, code, mode, v) for p, v in zip(planes, values, strict=True)])
