"""Running LUTs with backend primitives: 1-D rows and 3-D cubes by ``remap`` on the device, big cubes in numpy."""

from __future__ import annotations

from functools import partial
from typing import Any

import cv2
import numpy as np

from cvfilters.core.context import Context
from cvfilters.core.pixels import full_scale
from cvfilters.core.types import Image
from cvfilters.filters._shared.lut_model import FILTER, MAX_REMAP_NODES, MAX_REMAP_ROW, Lut1D, LutFile


def _coords(ctx: Context, plane: Image, scale: float, low: float, high: float, nodes: int) -> Any:
    """``(plane / scale - low) / (high - low) * (nodes - 1)`` as float32 (node coordinates)."""
    gain = (nodes - 1) / (high - low)
    return ctx.backend.convert(plane, np.float32, gain / scale, -low * gain)


def _interp_rows(ctx: Context, lut: LutFile, table: Lut1D, planes: list[Any], columns: list[int],
                 scale: float) -> list[Any]:
    """Exact linear interpolation of each plane through a column of ``table``, with ``remap`` on a 1 x N row.

    ``planes[i]`` (values 0..scale) goes through column ``columns[i]`` (0, 1, 2: B, G, R).
    Returns float32 planes on the 0..1 scale (unclipped).
    """
    table = table.refined()
    be = ctx.backend
    out = []
    for plane, c in zip(planes, columns, strict=True):
        x = _coords(ctx, plane, scale, table.low[c], table.high[c], table.size)
        row = be.cached(("lut-row", lut.path, lut.stamp, table.size, c),
                        partial(np.ascontiguousarray, table.values[None, :, c], dtype=np.float32))
        zeros = be.convert(x, np.float32, 0.0, 0.0)
        out.append(be.remap(row, x, zeros, cv2.INTER_LINEAR, cv2.BORDER_REPLICATE))
    return out


def apply_cube(ctx: Context, img: Image, lut: LutFile) -> Image:
    """A 3-D LUT (with its shaper) on a 3-channel native image: ``remap`` trilinear, or numpy for big cubes."""
    spec, be = ctx.info, ctx.backend
    full = spec.max_value
    if lut.cube is None:
        raise ValueError(f"{lut.path}: has no 3-D cube")
    cube = lut.cube.refined()
    if cube.size > MAX_REMAP_NODES or (lut.table is not None and lut.table.size > MAX_REMAP_ROW):
        return ctx.backend.on_host(img, lambda host: _host_apply(lut, host), f"{FILTER} (3-D cube on host)")
    n = cube.size
    uniform = bool(np.all(cube.low == cube.low[0]) and np.all(cube.high == cube.high[0]))
    if lut.table is not None:
        planes = _interp_rows(ctx, lut, lut.table, be.split(img), [0, 1, 2], full)
        xb, xg, xr = (_coords(ctx, p, 1.0, cube.low[c], cube.high[c], n) for c, p in enumerate(planes))
    elif uniform:  # one conversion of the 3-channel image, then split
        xb, xg, xr = be.split(_coords(ctx, img, full, cube.low[0], cube.high[0], n))
    else:
        xb, xg, xr = (_coords(ctx, p, full, cube.low[c], cube.high[c], n) for c, p in enumerate(be.split(img)))
    covered = np.all(cube.low <= 0.0) and np.all(cube.high >= 1.0)
    if spec.dtype == np.float32 or lut.table is not None or not covered:
        # Clamp to the domain; green needs no clamp, remap's replicated border does it.
        xb, xr = be.clip(xb, 0.0, n - 1.0), be.clip(xr, 0.0, n - 1.0)
    # floor(xb) (xb >= 0): xb rounded, less 1 where rounding went up. At xb = n - 1 the
    # second slice, read past the layout's edge, has weight 0.
    rounded = be.convert(be.convert(xb, np.uint16), np.float32)
    b0 = be.select(be.compare(rounded, xb, cv2.CMP_GT), be.convert(rounded, np.float32, 1.0, -1.0), rounded)
    fb = be.add_weighted(xb, 1.0, b0, -1.0)
    map0 = be.add_weighted(xr, 1.0, b0, float(n))
    map1 = be.convert(map0, np.float32, 1.0, float(n))
    layout = be.cached(("lut-cube", lut.path, lut.stamp, n), cube.layout)
    low = be.remap(layout, map0, xg, cv2.INTER_LINEAR, cv2.BORDER_REPLICATE)
    high = be.remap(layout, map1, xg, cv2.INTER_LINEAR, cv2.BORDER_REPLICATE)
    step = be.multiply(be.add_weighted(high, 1.0, low, -1.0), be.merge([fb, fb, fb]))
    out = be.add_weighted(low, 1.0, step, 1.0)
    return be.clip(out, 0.0, 1.0) if spec.dtype == np.float32 else be.convert(out, spec.dtype, full)


def _host_apply(lut: LutFile, host: np.ndarray) -> np.ndarray:
    full = full_scale(host.dtype)
    out = np.clip(lut(host.astype(np.float32) / full), 0.0, 1.0)
    if host.dtype.kind == "u":
        return np.rint(out * full).astype(host.dtype)
    return out.astype(np.float32)


