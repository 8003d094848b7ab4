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

import math
import warnings
from collections.abc import Callable

import cv2
import numpy as np

from cvfilters.backends import BORDER_HELP, BORDERS
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.pixels import split_color
from cvfilters.core.types import BorderName, Image, InterpolationName
from cvfilters.registry.footprints import Geometric, Rect, aligned
from cvfilters.registry.params import Param

INTERPOLATIONS: dict[str, int] = {
    "nearest": cv2.INTER_NEAREST,
    "linear": cv2.INTER_LINEAR,
    "cubic": cv2.INTER_CUBIC,
    "lanczos": cv2.INTER_LANCZOS4,
}
_WARNED_FILL_ALPHA: set[tuple[float, ...]] = set()


class FillAlphaWarning(UserWarning):
    """A fill colour with alpha was drawn opaque on an image without an alpha channel."""


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
    premultiply alpha policy the colour is multiplied by the fill's alpha. An image
    without alpha keeps its channels: a fill with an explicit alpha below 1 is drawn
    opaque, with a :class:`FillAlphaWarning` once per fill colour and process.
    """
    colour, alpha = split_color(fill, 1 if spec.channels == 1 else 3, bgra=True)
    if spec.channels != 4 and len(fill) in (2, 4) and alpha < 1 and fill not in _WARNED_FILL_ALPHA:
        _WARNED_FILL_ALPHA.add(fill)  # once per fill colour and process
        warnings.warn(f"fill {list(fill)} has alpha {alpha:g} but the image has no alpha channel, so the fill is "
                      "drawn opaque: outputs keep the input's channels (a JPEG could not hold alpha). For "
                      "transparent corners give the image an alpha channel first (a PNG with alpha, or "
                      "cv2.cvtColor(image, cv2.COLOR_BGR2BGRA))", FillAlphaWarning, stacklevel=2)
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


# ---------------------------------------------------------------- tiles of a remap
# Source pixels a sample at x reads: floor(x) - before .. floor(x) + after (OpenCV's kernels).
SUPPORT: dict[str, tuple[int, int]] = {"nearest": (0, 1), "linear": (0, 1), "cubic": (1, 2), "lanczos": (3, 4)}
TileMaps = Callable[[Rect], tuple[np.ndarray, np.ndarray]]
"""``maps(out_rect)``: float32 source coordinates of the output pixels in ``out_rect`` (as the whole maps hold)."""


def remapped(tile_maps: TileMaps, out_spec: ImageInfo, interpolation: InterpolationName, border: BorderName,
             fill: tuple[float, ...], *, premultiplied: bool) -> Geometric:
    """The :class:`Geometric` footprint of a remap whose maps can be evaluated for any output rectangle.

    An output tile reads the source rectangle its coordinates reach (``SUPPORT`` around
    them), widened where they leave the image so that OpenCV's border rule, applied at
    the crop's edges, finds the same pixels as at the image's (the crop then reaches that
    edge, and far enough inward for the reflections; ``wrap`` takes the whole axis). The
    maps are shifted by the crop's origin, a non-negative even integer at most the
    coordinates: float32 subtraction is exact there, and OpenCV's rounding of coordinates
    to its fixed-point grid (half to even) does not change under an even shift. The
    output is computed over the aligned tile (:func:`aligned`) and cropped. Bit for bit
    on the cpu backend for coordinates within an image's size of the image
    (``tests/properties/test_tiling.py``).
    """
    def plan(out_rect: Rect, spec: ImageInfo) -> tuple[Rect, np.ndarray, np.ndarray, Rect]:
        wide = aligned(out_rect, out_spec)
        map_x, map_y = tile_maps(wide)
        return wide, map_x, map_y, reached(map_x, map_y, spec, border, interpolation)

    def source(out_rect: Rect, spec: ImageInfo) -> Rect:
        return plan(out_rect, spec)[3]

    def run(ctx: Context, crop: Image, crop_rect: Rect, out_rect: Rect, spec: ImageInfo) -> Image:
        wide, map_x, map_y, _ = plan(out_rect, spec)
        shifted_x = np.ascontiguousarray(map_x - np.float32(crop_rect[2]))
        shifted_y = np.ascontiguousarray(map_y - np.float32(crop_rect[0]))
        out = np.asarray(remap(ctx, crop, shifted_x, shifted_y, interpolation, border, fill,
                               premultiplied=premultiplied))
        y, x = out_rect[0] - wide[0], out_rect[2] - wide[2]
        return np.ascontiguousarray(out[y : y + out_rect[1] - out_rect[0], x : x + out_rect[3] - out_rect[2]])

    return Geometric(source=source, run=run, maps=tile_maps)


def reached(map_x: np.ndarray, map_y: np.ndarray, spec: ImageInfo, border: BorderName,
            interpolation: InterpolationName) -> Rect:
    """The source rectangle a remap at these coordinates reads on an image of ``spec`` (see :func:`remapped`)."""
    before, after = SUPPORT[interpolation]

    def axis(coords: np.ndarray, size: int) -> tuple[int, int]:
        near = coords[np.isfinite(coords) & (coords > -size) & (coords < 2 * size)]
        if not near.size:
            return 0, 1
        low = math.floor(float(near.min())) - before
        high = math.floor(float(near.max())) + after + 1
        if border == "wrap" and (low < 0 or high > size):
            low, high = 0, size
        elif border != "constant":
            if low < 0:  # -k reflects to k (reflect101), k - 1 (reflect) or 0 (replicate)
                high = max(high, 1 - low)
            if high > size:  # size - 1 + k reflects to size - 1 - k at the lowest
                low = min(low, 2 * size - 1 - high)
        low, high = max(low, 0), min(high, size)
        if low >= high:
            return 0, 1
        return low - low % 2, high

    return (*axis(map_y, spec.height), *axis(map_x, spec.width))
