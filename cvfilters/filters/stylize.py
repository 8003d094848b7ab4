"""Stylize: whole-image looks built from resampling."""

from __future__ import annotations

from typing import Any

import cv2

from ..context import Context
from ..params import Param
from ..registry import register


@register(
    category="stylize",
    summary="Pixellate: each size x size cell takes its average colour.",
    params=[Param("size", "int", 8, min=1, max=4096, unit="px", help="cell side; cells start at the top-left corner")],
    alpha="premultiply",
)
def pixellate(ctx: Context, img: Any, *, size: int) -> Any:
    """Cells of ``size`` x ``size`` pixels from the top-left corner, each filled with its mean.

    Cells cut by the right or bottom edge average only the pixels they hold. The
    means come from ``INTER_AREA`` downscaling by whole factors (exact block means,
    rounded for integer types) and are spread back by nearest-neighbour upscaling.
    """
    be = ctx.be
    width, height = ctx.spec.size
    full_w, full_h = width - width % size, height - height % size
    col_bands = [(x, w, n) for x, w, n in ((0, full_w, width // size), (full_w, width - full_w, 1)) if w]
    row_bands = [(y, h, n) for y, h, n in ((0, full_h, height // size), (full_h, height - full_h, 1)) if h]
    rows = []
    for y, band_h, n_rows in row_bands:
        cells = [be.resize(be.crop(img, x, y, band_w, band_h), (n_cols, n_rows), cv2.INTER_AREA)
                 for x, band_w, n_cols in col_bands]
        rows.append(cells[0] if len(cells) == 1 else be.concat(cells, axis=1))
    means = rows[0] if len(rows) == 1 else be.concat(rows, axis=0)
    grid_w, grid_h = -(-width // size), -(-height // size)
    spread = be.resize(means, (grid_w * size, grid_h * size), cv2.INTER_NEAREST)
    return be.crop(spread, 0, 0, width, height)
