"""Warps: geometric transforms, each defined by where an output pixel samples the input.

A warp kernel is a Python function that maps OUTPUT pixel coordinates to SOURCE
coordinates. :func:`warp_kernel` turns one into a registered filter: its float32 remap
maps are built once per image size and parameters, kept on the device
(``ctx.backend.cached``), and every run is one ``ctx.backend.remap`` on whatever backend runs it.
The built-in warps (rotate, affine, perspective here; swirl, bulge, pinch, stretch and
sphere in :mod:`cvfilters.filters.distort`) are warp kernels too: one code path.

Coordinate convention (every warp, and the functions given to :func:`warp_kernel`):
pixels, origin at the centre of the top-left pixel, x to the right, y down; integer
coordinates are pixel centres and the image spans ``[-0.5, width - 0.5] x [-0.5,
height - 0.5]`` (OpenCV's ``remap``/``warpAffine`` convention). Positions given as
fractions of the image (``center``) are texture coordinates as in GPUImage and Core
Image: ``x = u * width - 0.5``, ``y = v * height - 0.5``, so ``[0.5, 0.5]`` is the exact
centre. Radii given as fractions are fractions of ``min(width, height)`` (0.5 = the
circle inscribed in the image, whatever its orientation), and distances are measured
in pixels, so circles stay circles on non-square images.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.types import AlphaPolicy, Category, Image
from cvfilters.engine.sampling import (
    OUTSIDE,
    fill_param,
    index_grid,
    interpolation_param,
    remap,
    remapped,
    warp_border_param,
)
from cvfilters.registry.catalog import Filter, register
from cvfilters.registry.footprints import Footprint, Rect, copied
from cvfilters.registry.params import Param
from cvfilters.registry.signatures import check_keywords

#: Parameters every warp kernel declares after its own; not passed to the coordinate function.
SAMPLING_PARAMS = ("interpolation", "border", "fill")
CoordFn = Callable[..., tuple[Any, Any]]
SizeFn = Callable[[Mapping[str, Any], int, int], tuple[int, int]]

CONVENTION_NOTE = """\
Coordinates: pixels, origin at the centre of the top-left pixel, x right, y down;
the image spans [-0.5, width - 0.5] x [-0.5, height - 0.5], and a position given as
fractions (u, v) of the image is (u * width - 0.5, v * height - 0.5). Each output
pixel samples the input at the source coordinates of the formula with
`interpolation`; outside the input `border` applies (constant: the `fill` colour).
The float32 maps are built once per image size and parameters and kept on the
device; Filter.maps(params, spec) returns them."""


# ------------------------------------------------------------------ conventions
def center_px(center: tuple[float, float], width: int, height: int) -> tuple[float, float]:
    """Pixel coordinates of a position given as fractions of the image (``[0.5, 0.5]`` = centre)."""
    return center[0] * width - 0.5, center[1] * height - 0.5


def radius_px(radius: float, width: int, height: int) -> float:
    """Pixels of a radius given as a fraction of ``min(width, height)``."""
    return radius * min(width, height)


# ------------------------------------------------------------------ warp kernels
def evaluate_maps(fn: CoordFn, values: Mapping[str, Any], width: int, height: int,
                  out_size: tuple[int, int] | None = None, name: str = "warp",
                  window: Rect | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Run a coordinate function over the output grid: float32 ``(map_x, map_y)``.

    Parameters
    ----------
    fn : callable
        ``fn(x, y, *, width, height, **values) -> (src_x, src_y)``.
    values : mapping
        The warp's own parameters (without interpolation, border and fill).
    width, height : int
        Size of the input image.
    out_size : (int, int), optional
        ``(width, height)`` of the output; the input's by default.
    window : (y0, y1, x0, x1), optional
        Only these output rows and columns (a tile; the same values as the whole maps there).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        C-contiguous float32 maps of shape ``(out_height, out_width)``; non-finite
        source coordinates become :data:`OUTSIDE` (the border applies there).
    """
    out_w, out_h = out_size or (width, height)
    if window is None:
        x, y = index_grid(out_w, out_h)
    else:
        y0, y1, x0, x1 = window
        x, y = index_grid(x1 - x0, y1 - y0)
        x += x0
        y += y0
        out_w, out_h = x1 - x0, y1 - y0
    result = fn(x, y, width=width, height=height, **values)
    try:
        src_x, src_y = result
        maps = [np.broadcast_to(np.asarray(m, dtype=np.float64), (out_h, out_w)) for m in (src_x, src_y)]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"warp kernel {name!r}: the coordinate function must return (src_x, src_y) arrays "
                         f"broadcastable to the output grid {(out_h, out_w)} ({exc})") from None
    return tuple(np.ascontiguousarray(np.where(np.isfinite(m), m, OUTSIDE), dtype=np.float32)  # type: ignore[return-value]
                 for m in maps)


def warp_kernel(fn: CoordFn, name: str | None = None, *, summary: str, params: Iterable[Param] = (),
                interpolation: str = "linear", border: str = "constant", fill: tuple[float, ...] = (0.0,),
                category: Category = "warp", alpha: AlphaPolicy = "premultiply", output_size: SizeFn | None = None,
                check: Callable[[dict[str, Any]], str | None] | None = None, description: str | None = None,
                replace: bool = False) -> Filter:
    """Register a warp defined by a function from output to source coordinates.

    Parameters
    ----------
    fn : callable
        ``fn(x, y, *, width, height, **params) -> (src_x, src_y)``. ``x`` and ``y`` are
        float64 arrays of shape ``(out_height, out_width)`` holding the coordinates of
        every output pixel centre (origin at the centre of the top-left pixel, x right,
        y down); ``width`` and ``height`` are the INPUT image's size in pixels (use
        them to stay resolution-independent, e.g. ``radius * min(width, height)``);
        the warp's own declared parameters come as keywords with their resolved
        values. It returns the source coordinates to sample, in the same convention
        (arrays broadcastable to the grid's shape; NaN or inf means "no source": the
        border rule applies, the fill colour with ``border=constant``). It runs once
        per image size and parameters, on the host, vectorised over the whole grid;
        a tiled run (:mod:`cvfilters.engine.tiles`) calls it on each tile's grid, so it
        must work element by element (no reductions over the grid).
    name : str, optional
        snake_case filter name; ``fn.__name__`` by default.
    summary : str
        One line for ``cvfilters list``.
    params : iterable of Param
        The warp's own parameters. ``interpolation``, ``border`` and ``fill`` are
        added after them (``width`` and ``height`` are reserved too).
    interpolation : {"nearest", "linear", "cubic", "lanczos"}
        Default of the ``interpolation`` parameter.
    border : {"constant", "replicate", "reflect", "reflect101", "wrap"}
        Default of the ``border`` parameter.
    fill : tuple of float
        Default of the ``fill`` parameter (fractions of full scale; see :func:`fill_values`).
    category : str
        Registry category ("warp").
    alpha : {"premultiply", "all"}
        Alpha policy: interpolating warps run on premultiplied colour; "all" suits
        exact (nearest, whole-pixel) warps.
    output_size : callable, optional
        ``output_size(params, width, height) -> (out_width, out_height)`` for warps
        that change the canvas (``rotate`` with ``expand``); the size is kept otherwise.
    check : callable, optional
        Cross-parameter validation returning a problem description or None.
    description : str, optional
        Formula and conventions for ``cvfilters info``; ``fn``'s docstring by default.
        A note on the coordinate convention is appended.
    replace : bool
        Allow replacing a registered filter of the same name.

    Returns
    -------
    Filter
        Registered; ``Filter.maps(params, spec)`` returns the host float32 maps, it runs
        through :func:`cvfilters.apply`, pipelines and ``Pipeline.parse("<name>")``.

    Examples
    --------
    >>> def shift(x, y, *, width, height, dx):
    ...     return x - dx, y
    >>> flt = warp_kernel(shift, "shift_right", summary="Move right by dx pixels.",
    ...                   params=[Param("dx", "float", 3.0, min=-100, max=100, unit="px", help="shift")])
    """
    if not callable(fn):
        raise TypeError(f"warp_kernel: fn must be callable, not {type(fn).__name__}")
    filter_name = name or fn.__name__
    own = tuple(params)
    reserved = {*SAMPLING_PARAMS, "width", "height"} & {p.name for p in own}
    if reserved:
        raise ValueError(f"warp kernel {filter_name!r}: parameter names {sorted(reserved)} are reserved")
    check_keywords(filter_name, fn, own, given=("width", "height"))
    declared = (*own, interpolation_param(interpolation), warp_border_param(border), fill_param(fill))
    for param in declared[len(own):]:
        param.coerce(param.default, filter_name)  # reject bad defaults now, not at the first run
    defaults = {p.name: p.default for p in own}

    def geometry(values: Mapping[str, Any]) -> dict[str, Any]:
        return {**defaults, **{k: v for k, v in values.items() if k not in SAMPLING_PARAMS}}

    def out_size(values: Mapping[str, Any], spec: ImageInfo) -> tuple[int, int]:
        if output_size is None:
            return spec.size
        width, height = output_size(values, spec.width, spec.height)
        return max(1, int(width)), max(1, int(height))

    def maps(values: Mapping[str, Any], spec: ImageInfo) -> tuple[np.ndarray, np.ndarray]:
        geom = geometry(values)
        return evaluate_maps(fn, geom, spec.width, spec.height, out_size(geom, spec), filter_name)

    def run(ctx: Context, img: Image, **values: Any) -> Image:
        geom = geometry(values)
        key = ("warp_kernel", filter_name, fn, ctx.info.size, tuple(sorted(geom.items())))
        built: list[tuple[np.ndarray, np.ndarray]] = []

        def both() -> tuple[np.ndarray, np.ndarray]:
            if not built:
                built.append(maps(geom, ctx.info))
            return built[0]

        map_x = ctx.backend.cached((*key, "x"), lambda: both()[0])
        map_y = ctx.backend.cached((*key, "y"), lambda: both()[1])
        return remap(ctx, img, map_x, map_y, values["interpolation"], values["border"], values["fill"],
                     premultiplied=alpha == "premultiply")

    def output_info(values: Mapping[str, Any], spec: ImageInfo) -> ImageInfo:
        width, height = out_size(geometry(values), spec)
        return spec.with_(width=width, height=height)

    def footprint(values: Mapping[str, Any], spec: ImageInfo) -> Footprint:
        geom = geometry(values)
        size = out_size(geom, spec)
        return remapped(lambda rect: evaluate_maps(fn, geom, spec.width, spec.height, size, filter_name, rect),
                        output_info(values, spec), values["interpolation"], values["border"], values["fill"],
                        premultiplied=alpha == "premultiply")

    text = inspect.cleandoc(description or fn.__doc__ or summary)
    return register(filter_name, category=category, summary=summary, params=declared, alpha=alpha, check=check,
                    output_info=output_info if output_size is not None else None, maps=maps,
                    footprint=footprint, description=f"{text}\n\n{CONVENTION_NOTE}", linear=True, replace=replace)(run)


# ------------------------------------------------------------------ flip (exact, cv2.flip)
_FLIP_CODES = {"horizontal": 1, "vertical": 0, "both": -1}


def flip_coords(x: np.ndarray, y: np.ndarray, *, width: int, height: int, axis: str) -> tuple[Any, Any]:
    """Source of a mirrored pixel: ``(width - 1 - x, y)``, ``(x, height - 1 - y)`` or both."""
    src_x = width - 1 - x if axis in ("horizontal", "both") else x
    src_y = height - 1 - y if axis in ("vertical", "both") else y
    return src_x, src_y


def _flip_maps(params: Mapping[str, Any], spec: ImageInfo) -> tuple[np.ndarray, np.ndarray]:
    return evaluate_maps(flip_coords, {"axis": params.get("axis", "horizontal")}, spec.width, spec.height,
                         name="flip")


def _flip_footprint(params: Mapping[str, Any], spec: ImageInfo) -> Footprint:
    axis = params["axis"]

    def mirrored(side: int, flipped: bool) -> Callable[[int, int, ImageInfo], np.ndarray]:
        return lambda start, stop, _: side - 1 - np.arange(start, stop) if flipped else np.arange(start, stop)

    return copied(mirrored(spec.height, axis in ("vertical", "both")),
                  mirrored(spec.width, axis in ("horizontal", "both")),
                  maps=lambda rect: evaluate_maps(flip_coords, {"axis": axis}, spec.width, spec.height, None, "flip",
                                                  rect))


@register(
    footprint=_flip_footprint,
    linear=True,
    category="warp",
    summary="Mirror the image horizontally, vertically or both.",
    params=[Param("axis", "choice", "horizontal", choices=tuple(_FLIP_CODES),
                  help="horizontal mirrors left-right, vertical top-bottom, both rotates by 180 degrees")],
    alpha="all",
    maps=_flip_maps,
)
def flip(ctx: Context, img: Image, *, axis: str) -> Image:
    """Exact mirror (``cv2.flip``); every channel, alpha included, moves with the pixels.

    Source of output pixel ``(x, y)``: ``(width - 1 - x, y)`` (horizontal),
    ``(x, height - 1 - y)`` (vertical) or both; ``Filter.maps`` returns those
    coordinates so pipelines can compose the flip with other warps, while running it
    alone copies pixels without interpolation.
    """
    return ctx.backend.flip(img, _FLIP_CODES[axis])


# ------------------------------------------------------------------ rotate
def rotated_size(angle: float, width: int, height: int) -> tuple[int, int]:
    """Width and height of the bounding box of a ``width`` x ``height`` image turned by ``angle`` degrees.

    The box of the pixel extent, rounded up (a hair of tolerance keeps multiples of 90
    degrees exact).
    """
    theta = math.radians(angle)
    c, s = abs(math.cos(theta)), abs(math.sin(theta))
    return (max(1, math.ceil(width * c + height * s - 1e-6)), max(1, math.ceil(width * s + height * c - 1e-6)))


def rotate_coords(x: np.ndarray, y: np.ndarray, *, width: int, height: int, angle: float,
                  expand: bool) -> tuple[Any, Any]:
    """Inverse rotation about the centres of the output and input canvases."""
    theta = math.radians(angle)
    c, s = math.cos(theta), math.sin(theta)
    out_w, out_h = rotated_size(angle, width, height) if expand else (width, height)
    dx, dy = x - (out_w - 1) / 2.0, y - (out_h - 1) / 2.0
    return (width - 1) / 2.0 + c * dx - s * dy, (height - 1) / 2.0 + s * dx + c * dy


def _rotate_size(params: Mapping[str, Any], width: int, height: int) -> tuple[int, int]:
    return rotated_size(params["angle"], width, height) if params["expand"] else (width, height)


rotate = warp_kernel(
    rotate_coords, "rotate",
    summary="Rotate counter-clockwise by an angle in degrees about the image centre.",
    params=[
        Param("angle", "float", 15.0, min=-360.0, max=360.0, unit="deg",
              help="rotation angle, counter-clockwise as seen on screen (negative: clockwise)"),
        Param("expand", "bool", False,
              help="enlarge the canvas to the bounding box of the rotated image (the output size changes); "
                   "false keeps the size and crops the corners"),
    ],
    output_size=_rotate_size,
    description="""Rotation by ``angle`` degrees counter-clockwise on screen about the image centre.

    Forward (source to output), like ``cv2.getRotationMatrix2D(center, angle, 1)``::

        [x']   [ cos a  sin a] [x - cx]   [cx']
        [y'] = [-sin a  cos a] [y - cy] + [cy']

    with ``(cx, cy) = ((width - 1) / 2, (height - 1) / 2)`` the input's centre and
    ``(cx', cy')`` the output's. Each output pixel samples the inverse rotation. With
    ``expand`` the output is ``ceil(w |cos a| + h |sin a|)`` x ``ceil(w |sin a| + h |cos a|)``
    (the bounding box of the rotated image, nothing cropped); otherwise the size is
    kept and the corners are cut. Uncovered pixels take the border (fill colour,
    transparent black on BGRA by default). Multiples of 90 degrees with nearest
    interpolation move whole pixels exactly.
    """,
)


# ------------------------------------------------------------------ affine and perspective
def _matrix_check(rows: int, label: str) -> Callable[[dict[str, Any]], str | None]:
    def check(values: dict[str, Any]) -> str | None:
        matrix = np.asarray(values["matrix"], dtype=np.float64)
        if matrix.shape != (rows, 3):
            return f"matrix must be {rows}x3 ({label}), not {matrix.shape[0]}x{matrix.shape[1]}"
        if abs(np.linalg.det(matrix[:, :2] if rows == 2 else matrix)) < 1e-12:
            return "matrix is singular (not invertible): it maps the image onto a line or a point"
        return None

    return check


def affine_coords(x: np.ndarray, y: np.ndarray, *, width: int, height: int,
                  matrix: tuple[tuple[float, ...], ...]) -> tuple[Any, Any]:
    """Source coordinates: the inverse of the 2x3 source-to-output matrix applied to ``(x, y)``."""
    forward = np.vstack([np.asarray(matrix, dtype=np.float64), [0.0, 0.0, 1.0]])
    inverse = np.linalg.inv(forward)
    return (inverse[0, 0] * x + inverse[0, 1] * y + inverse[0, 2],
            inverse[1, 0] * x + inverse[1, 1] * y + inverse[1, 2])


affine = warp_kernel(
    affine_coords, "affine",
    summary="Affine transform by a 2x3 matrix mapping source to output pixels (cv2.warpAffine).",
    params=[Param("matrix", "kernel", ((1.0, 0.2, 0.0), (0.0, 1.0, 0.0)), unit="px",
                  help="2x3 matrix [[a,b,c],[d,e,f]]: a source pixel (x, y) lands at "
                       "(a x + b y + c, d x + e y + f); the default shears right by 0.2 px per row")],
    check=_matrix_check(2, "affine"),
    description="""Affine warp, the same as ``cv2.warpAffine(src, matrix, (width, height))``.

    The matrix maps source to output: ``(x', y') = M @ (x, y, 1)`` in pixel
    coordinates with the origin at the centre of the top-left pixel. Each output pixel
    samples ``M^-1`` of its position; the output keeps the input's size. The matrix
    must be invertible. Uncovered pixels take the border.
    """,
)


def perspective_coords(x: np.ndarray, y: np.ndarray, *, width: int, height: int,
                       matrix: tuple[tuple[float, ...], ...]) -> tuple[Any, Any]:
    """Source coordinates: the inverse homography applied to ``(x, y, 1)``, divided by its third row."""
    inverse = np.linalg.inv(np.asarray(matrix, dtype=np.float64))
    w = inverse[2, 0] * x + inverse[2, 1] * y + inverse[2, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(np.abs(w) > 1e-12, 1.0 / w, np.nan)  # the horizon line has no source
        return ((inverse[0, 0] * x + inverse[0, 1] * y + inverse[0, 2]) * scale,
                (inverse[1, 0] * x + inverse[1, 1] * y + inverse[1, 2]) * scale)


perspective = warp_kernel(
    perspective_coords, "perspective",
    summary="Perspective transform by a 3x3 homography mapping source to output pixels (cv2.warpPerspective).",
    params=[Param("matrix", "kernel", ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0002, 0.0001, 1.0)), unit="px",
                  help="3x3 homography H: a source pixel (x, y) lands at (X/W, Y/W) with (X, Y, W) = H (x, y, 1); "
                       "the default tilts the image away towards the bottom right")],
    check=_matrix_check(3, "homography"),
    description="""Perspective warp, the same as ``cv2.warpPerspective(src, matrix, (width, height))``.

    The homography maps source to output: ``(X, Y, W) = H @ (x, y, 1)``, output pixel
    ``(X / W, Y / W)``, in pixel coordinates with the origin at the centre of the
    top-left pixel. Each output pixel samples ``H^-1`` of its position divided by the
    third component; points on the horizon (third component 0) have no source and
    take the border. The matrix must be invertible; an affine ``H`` (last row
    ``[0, 0, 1]``) equals ``affine`` with its first two rows.
    """,
)
