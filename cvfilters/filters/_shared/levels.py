"""Integer level views: the 8- or 16-bit levels of an image that histogram filters count and remap.

A view is one channel (gray, or the luma of ``ycrcb``/``lab``/``hsv``) or the colour
channels (``per_channel``), as uint8 (256 levels) or uint16 (65536 levels; float32
images are quantised to 16 bits), with the way back to the filter's output. Counting
goes through the backend's ``calc_hist``; tables are applied with its ``lut``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from cvfilters.backends import get_backend
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.types import Image

_U8, _U16, _F32 = np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32)

FLOAT_LEVELS = 65536
"""Levels float32 images are quantised to by the level-based filters."""
SPACES = ("ycrcb", "lab", "hsv")
SPACE_CHOICES = (*SPACES, "per_channel")


@dataclass(frozen=True)
class Luma:
    """How to reach a colour space's luma channel and come back."""

    forward: int
    back: int
    index: int
    scale: float  # full scale of the luma channel in a float32 conversion


LUMA = {
    "ycrcb": Luma(cv2.COLOR_BGR2YCrCb, cv2.COLOR_YCrCb2BGR, 0, 1.0),
    "lab": Luma(cv2.COLOR_BGR2Lab, cv2.COLOR_Lab2BGR, 0, 100.0),
    "hsv": Luma(cv2.COLOR_BGR2HSV_FULL, cv2.COLOR_HSV2BGR_FULL, 2, 1.0),
}
SPACE_HELP = ("colour images: the channel processed: ycrcb (Y, BT.601 luma; default), lab (L*) or hsv "
               "(V = max(B, G, R)), colour kept; per_channel processes B, G and R independently (shifts "
               "colours). Ignored for gray images")


# ---------------------------------------------------------------- statistics on the host
def host_context(image: np.ndarray) -> Context:
    return Context(get_backend("cpu"), ImageInfo.of(image))


# ---------------------------------------------------------------- integer level views
@dataclass
class LevelView:
    """An integer (uint8/uint16) view of an image whose levels a filter processes.

    ``image`` has 1 channel (gray or luma) or the colour channels (per_channel);
    ``restore`` turns a processed ``image`` back into the filter's output.
    """

    image: Image
    levels: int
    restore: Callable[[Any], Any]
    channels: int = 1


def level_view(ctx: Context, img: Image, space: str) -> LevelView:
    be, spec = ctx.backend, ctx.info
    integer = spec.dtype in (_U8, _U16)
    if spec.channels == 1 or space == "per_channel":
        if integer:
            return LevelView(img, 256 if spec.dtype == _U8 else 65536, lambda out: out, spec.channels)
        return LevelView(be.convert(img, np.uint16, FLOAT_LEVELS - 1.0), FLOAT_LEVELS,
                          lambda out: be.convert(out, np.float32, 1.0 / (FLOAT_LEVELS - 1)), spec.channels)
    luma = LUMA[space]
    if spec.dtype == _U8:
        planes = be.split(be.cvt_color(img, luma.forward))

        def restore8(out: Any) -> Image:
            return be.cvt_color(be.merge([out if i == luma.index else p for i, p in enumerate(planes)]), luma.back)

        return LevelView(planes[luma.index], 256, restore8)
    values = img if spec.dtype == _F32 else be.convert(img, np.float32, 1.0 / spec.max_value)
    planes = be.split(be.cvt_color(values, luma.forward))
    top = FLOAT_LEVELS - 1.0

    def restore(out: Any) -> Any:
        plane = be.convert(out, np.float32, luma.scale / top)
        bgr = be.cvt_color(be.merge([plane if i == luma.index else p for i, p in enumerate(planes)]), luma.back)
        return be.clip(bgr, 0.0, 1.0) if spec.dtype == _F32 else be.convert(bgr, spec.dtype, spec.max_value)

    return LevelView(be.convert(planes[luma.index], np.uint16, top / luma.scale), FLOAT_LEVELS, restore)


def view_counts(ctx: Context, view: LevelView) -> np.ndarray:
    return ctx.backend.calc_hist(view.image, view.channels, view.levels)


def apply_tables(ctx: Context, img: Image, view: LevelView, tables: Sequence[np.ndarray],
                  counts: np.ndarray) -> Image:
    """Apply one table per channel of ``view``; an image whose present levels all map to themselves is returned as is.

    The shortcut keeps, e.g., matching an image to itself exact on colour images,
    where a colour-space round trip would change it by a rounding step.
    """
    if all(np.array_equal(t[np.flatnonzero(c)], np.flatnonzero(c)) for t, c in zip(tables, counts, strict=True)):
        return img
    dtype = np.uint8 if view.levels == 256 else np.uint16
    table = np.asarray(tables[0] if len(tables) == 1 else np.stack(tables, axis=-1)[:, None, :], dtype=dtype)
    return view.restore(ctx.backend.lut(view.image, np.ascontiguousarray(table)))
