"""LUT files: per-channel 1-D tables and 3-D colour cubes (``.cube``), the ``lut`` filter.

Files
    ``.cube`` (Adobe / DaVinci Resolve text format): ``TITLE``, ``LUT_1D_SIZE N``
    (2..65536) and/or ``LUT_3D_SIZE N`` (2..256), ``DOMAIN_MIN r g b`` /
    ``DOMAIN_MAX r g b``, Resolve's ``LUT_1D_INPUT_RANGE lo hi`` /
    ``LUT_3D_INPUT_RANGE lo hi``, ``#`` comments, then rows of three numbers R G B
    (red varies fastest in a 3-D cube). A file with both sizes is Resolve's shaper
    form: the 1-D rows come first and are applied before the cube.
    ``.csv`` / ``.txt``: rows of 1 number (all channels) or 3 numbers (R, G, B, the
    .cube column order, not OpenCV's BGR) separated by commas, semicolons or spaces;
    ``#`` starts a comment. ``.npy``: an (N,), (N, 1) or (N, 3) array.
    Rows are outputs for inputs evenly spaced over the domain (0..1 unless the .cube
    says otherwise); in between, values are interpolated linearly (1-D) or
    trilinearly (3-D); inputs outside the domain are clamped to it.

How it runs
    A 1-D file is a per-channel curve: a lookup table for uint8/uint16 (exposed by
    ``Filter.table``) and exact linear interpolation with ``remap`` on a 1 x N row
    for float32, on every backend. A 3-D cube is trilinear interpolation written
    with backend primitives: the cube is laid out as an N x N^2 image (slice ``b``
    at columns ``b*N .. b*N+N-1``), two bilinear ``remap`` calls sample the two
    blue slices around each pixel and a blend by the blue fraction finishes the
    trilinear weight. It runs on the device on opencl and cuda (cpu runs the same
    calls on numpy), with the cube uploaded once and cached. Cubes above 128 nodes
    a side (layout wider than ``remap`` coordinates allow) run in numpy on the
    host, counted as ``lut (3-D cube on host)`` off the cpu. Small cubes are first
    refined to 33+ nodes by an integer factor (the same trilinear function), which
    keeps fixed-point ``remap`` weights (1/32 pixel in some OpenCV builds) accurate.
    Gray images take the luma of the cube at (v, v, v): a lookup table too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from cvfilters.core.context import Context
from cvfilters.core.pixels import LUMA_BGR
from cvfilters.core.types import Image
from cvfilters.filters._shared.lut_device import _interp_rows, apply_cube
from cvfilters.filters._shared.lut_files import load_lut
from cvfilters.filters._shared.lut_model import FILTER, SCALES, LutFile
from cvfilters.filters.color import Curve, PointOp
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import POINT
from cvfilters.registry.params import Param


def _lut_float(ctx: Context, img: Image, *, file: str, scale: str, stamp: Any = None) -> Image:
    """Float32 with a 1-D file, or a gray image with a cube: on the device with remap."""
    lut = load_lut(file, scale)
    be = ctx.backend
    if lut.cube is not None:  # gray image: (v, v, v) through the cube, then luma
        colour = apply_cube(ctx.with_info(channels=3), be.merge([img, img, img]), lut)
        return be.clip(be.transform(colour, LUMA_BGR[None, :]), 0.0, 1.0)
    table = lut.table
    if table is None:
        raise ValueError(f"{file}: has neither a 1-D table nor a cube")
    single = len(table.curves()) == 1
    gray = ctx.info.channels == 1
    if single:
        planes, columns = ([img] if gray else be.split(img)), [0] * (1 if gray else 3)
    else:
        planes, columns = ([img] * 3 if gray else be.split(img)), [0, 1, 2]
    out = [be.clip(p, 0.0, 1.0) for p in _interp_rows(ctx, lut, table, planes, columns, 1.0)]
    if gray and not single:
        return be.clip(be.transform(be.merge(out), LUMA_BGR[None, :]), 0.0, 1.0)
    return out[0] if gray else be.merge(out)


def _curves(params: Mapping[str, Any], full: float) -> list[Curve]:
    lut = load_lut(params["file"], params["scale"])
    if lut.cube is not None or lut.table is None:
        return [lut.gray_curve()]
    return lut.table.curves()


_OP = PointOp(FILTER, _curves, _lut_float)


def _op_params(params: Mapping[str, Any], lut: LutFile) -> dict[str, Any]:
    # The file's stamp is part of the table cache key: an edited file builds a new table.
    return {"file": params["file"], "scale": params["scale"], "stamp": lut.stamp}


def lut_table(params: Mapping[str, Any], spec: Any) -> np.ndarray | None:
    """The lookup table of a ``lut`` step, in ``Filter.table``'s form: a 1-D file, or a cube on a gray spec.

    None for a 3-D cube on a colour spec (not a per-channel table: see
    :func:`lut_file_of`) and for float32. Not declared as ``Filter.table`` because that
    declaration makes a filter a table for every parameter value (fusion relies on it).
    """
    lut = load_lut(params["file"], params["scale"])
    if lut.cube is not None and spec.channels != 1:
        return None
    return _OP.table(_op_params(params, lut), spec)


def lut_file_of(params: Mapping[str, Any]) -> LutFile:
    """The parsed file behind a ``lut`` step (its 1-D ``table`` and/or 3-D ``cube``)."""
    return load_lut(params["file"], params.get("scale", "auto"))


def _check(params: dict[str, Any]) -> str | None:
    load_lut(params["file"], params["scale"])  # raises ParameterError naming the file
    return None


def _run(ctx: Context, img: Image, *, file: str, scale: str) -> Image:
    lut = load_lut(file, scale)
    if lut.cube is None or ctx.info.channels == 1:
        return _OP.run(ctx, img, _op_params({"file": file, "scale": scale}, lut))
    return apply_cube(ctx, img, lut)


_EXAMPLE = "fixtures/warm.cube"  # shown by `cvfilters info lut`; relative to a checkout of the repository

lut = register(
    FILTER, category="cube", summary="Apply a LUT file: a .cube colour cube (3-D) or a 1-D table per channel.",
    footprint=POINT,
    params=(
        Param("file", "path", None, required=True, example=_EXAMPLE,
              help="a .cube file (LUT_3D_SIZE and/or LUT_1D_SIZE) or a 1-D table (.csv/.txt rows of 1 or "
                   "3 values R,G,B, or .npy); @path works too (inside a pipeline file, relative to its folder)"),
        Param("scale", "choice", "auto", choices=tuple(SCALES),
              help="full-scale value of a .csv/.txt/.npy table: auto takes 1, 255 or 65535, the smallest "
                   "at or above its largest value; .cube values are always 0..1"),
    ),
    description="""``out = LUT(in)``: a 3-D cube interpolates trilinearly between its nodes
    (``out = sum over the 8 corners of w_b w_g w_r * node``); a 1-D table interpolates
    linearly per channel. Inputs outside the file's domain are clamped to it; outputs
    are clipped to 0..1 of full scale. .cube columns (and 3-column tables) are R, G, B.

    Runs on every backend with lookup tables (1-D, uint8/uint16), ``remap`` (1-D
    float32; 3-D cubes up to 128 nodes, on the device on opencl and cuda) or numpy
    (larger cubes, a counted host fallback). Gray images get the luma of the LUT's
    colour for (v, v, v).""",
    check=_check,
    # No ``table`` hook: whether a file is a per-channel table depends on the file, and
    # fusion picks table filters by declaration; ``lut_table`` gives the table of 1-D files.
)(_run)
