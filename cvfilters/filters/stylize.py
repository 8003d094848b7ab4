"""Stylize: whole-image looks (pixellate, Kuwahara, oil paint, photo-module stylization).

Device-friendly looks are written over backend primitives (pixellate, kuwahara). The
algorithms OpenCV only has on the host (``cv2.xphoto.oilPainting``, the photo module's
domain-transform filters, ``cv2.pyrMeanShiftFiltering``) download the image once, run
on 8-bit BGR and upload the result once (see :func:`on_host_8bit_bgr`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import cv2
import numpy as np

from cvfilters.backends import BORDERS
from cvfilters.core.context import Context, ImageInfo
from cvfilters.filters._shared.common import border_param
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import Footprint, Geometric, Rect, square, whole
from cvfilters.registry.params import Param


def _pixellate_footprint(params: Mapping[str, Any], spec: ImageInfo) -> Footprint:
    """Whole cells: a tile reads the cells it touches (snapped to multiples of ``size`` from the corner)."""
    size = params["size"]

    def snap(low: int, high: int, side: int) -> tuple[int, int]:
        return low - low % size, min(side, -(-high // size) * size)

    def source(out_rect: Rect, full: ImageInfo) -> Rect:
        return (*snap(out_rect[0], out_rect[1], full.height), *snap(out_rect[2], out_rect[3], full.width))

    def run(ctx: Context, crop: Any, crop_rect: Rect, out_rect: Rect, full: ImageInfo) -> Any:
        out = np.asarray(_cells(ctx, crop, size))
        y, x = out_rect[0] - crop_rect[0], out_rect[2] - crop_rect[2]
        return np.ascontiguousarray(out[y : y + out_rect[1] - out_rect[0], x : x + out_rect[3] - out_rect[2]])

    return Geometric(source=source, run=run)


@register(
    footprint=_pixellate_footprint,
    linear=True,
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
    return _cells(ctx, img, size)


def _cells(ctx: Context, img: Any, size: int) -> Any:
    be = ctx.backend
    width, height = ctx.info.size
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


# ---------------------------------------------------------------------------------------
# Shared pieces of the whole-image looks (stylize and cartoon families)
# ---------------------------------------------------------------------------------------
# Rec. 709 luma weights in BGR order, as GPUImage's shaders use them (W = 0.2125, 0.7154, 0.0721).
LUMA_709_BGR = np.array([[0.0721, 0.7154, 0.2125]], dtype=np.float64)

EIGHT_BIT_NOTE = ("Runs on the host (OpenCV has no device version of it): one download and one\n"
                  "upload on device backends. The algorithm needs 8-bit BGR: uint16 and float32\n"
                  "input is converted to 8-bit and back, so the result has 8-bit precision in the\n"
                  "input's dtype; gray input is expanded to BGR and converted back to gray.")


def with_note(note: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Append a shared paragraph to a filter function's docstring (put below ``@register``)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__doc__ = inspect.cleandoc(fn.__doc__ or "") + "\n\n" + note
        return fn

    return decorate


def luma(ctx: Context, img_float: Any) -> Any:
    """One float32 plane of Rec. 709 luminance of a float32 image (the plane itself for gray)."""
    if ctx.info.channels == 1:
        return img_float
    return ctx.backend.transform(img_float, LUMA_709_BGR)


def to_channels(ctx: Context, plane: Any) -> Any:
    """One plane copied into every channel of the image (1 or 3)."""
    return plane if ctx.info.channels == 1 else ctx.backend.merge([plane] * ctx.info.channels)


def host_to_8bit(array: np.ndarray) -> np.ndarray:
    """uint8 copy of a host image: uint16 / 257 and float32 * 255, rounded and saturated."""
    if array.dtype == np.uint8:
        return array
    if array.dtype == np.uint16:
        return ((array.astype(np.uint32) + 128) // 257).astype(np.uint8)
    return np.rint(np.clip(array, 0.0, 1.0) * np.float32(255.0)).astype(np.uint8)


def host_from_8bit(array8: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A uint8 host image in ``dtype`` (uint16 x 257, float32 / 255)."""
    if dtype == np.uint8:
        return array8
    if dtype == np.uint16:
        return array8.astype(np.uint16) * np.uint16(257)
    return array8.astype(np.float32) / np.float32(255.0)


def on_host_8bit_bgr(ctx: Context, img: Any, run: Callable[[np.ndarray], np.ndarray], label: str) -> Any:
    """Run a host-only 8-bit BGR algorithm with one download and one upload.

    The image is downloaded once (counted as ``label`` in the host fallbacks on device
    backends), converted to 8-bit and from gray to BGR; ``run`` maps that to an 8-bit
    BGR result, which goes back to the input's channel count and dtype.
    """
    spec = ctx.info

    def compute(host: np.ndarray) -> np.ndarray:
        bgr = host_to_8bit(host).reshape(spec.height, spec.width, spec.channels)
        if spec.channels == 1:
            bgr = cv2.cvtColor(bgr, cv2.COLOR_GRAY2BGR)
        out = run(np.ascontiguousarray(bgr))
        if spec.channels == 1:
            out = cv2.cvtColor(out, cv2.COLOR_BGR2GRAY)
        return host_from_8bit(out, spec.dtype)

    return ctx.backend.on_host(img, compute, label)


# ---------------------------------------------------------------------------------------
# Kuwahara: on the device, from box filters
# ---------------------------------------------------------------------------------------
# Window statistics are taken on values scaled to these levels (the dtype's own for integers).
KUWAHARA_LEVELS = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0, np.dtype(np.float32): 255.0}
# Outside the exact 8-bit path, a later window wins only if its variance (summed over
# channels) is lower by more than this fraction of full scale squared: exact ties (flat
# areas on both sides of an edge) then resolve the same way whatever the device's rounding.
KUWAHARA_TIE = 1e-6
# The exact path sums 8-bit levels and their squares in float32, exact below 2^24.
KUWAHARA_EXACT_MAX_SIDE = 16


@register(
    footprint=square(lambda p, spec: p["radius"] + 1),
    category="stylize",
    summary="Kuwahara: each pixel takes the mean of the least-varying of its four quadrant windows.",
    params=[
        Param("radius", "int", 4, min=1, max=30, unit="px",
              help="each quadrant window is (radius + 1) x (radius + 1) pixels with the pixel at a corner"),
        border_param("replicate"),
    ],
    alpha="premultiply",
)
def kuwahara(ctx: Context, img: Any, *, radius: int, border: str) -> Any:
    """GPUImage's Kuwahara filter (Kyprianidis et al.), built from window sums on the device.

    The four windows of n x n pixels (n = radius + 1) that have the pixel at a corner
    are visited in the order top-left, top-right, bottom-right, bottom-left. Two
    window-sum filters over the padded image give, per channel, the sum ``S`` and the
    sum of squares ``Q`` of every window (the cost does not grow with the radius); the
    output is the mean ``S / n^2`` of the window with the smallest total variance
    ``sum_c (n^2 Q_c - S_c^2) / n^4`` (GPUImage's rule); ties go to the earlier window.

    uint8 images (radius <= 15) take an exact path: sums of 8-bit levels in float32 and
    the variance test in float64 are whole numbers, so every backend makes the same
    choice. Other depths use normalised box filters in float64, and a later window must
    be lower by more than 1e-6 of full scale squared. Edges use ``border`` (GPUImage
    clamps: replicate). The mean is rounded to the input dtype; images with alpha are
    filtered as premultiplied colour (float32).
    """
    be, spec = ctx.backend, ctx.info
    n = radius + 1
    area = float(n * n)
    levels = KUWAHARA_LEVELS[np.dtype(spec.dtype)]
    exact = spec.dtype == np.uint8 and n <= KUWAHARA_EXACT_MAX_SIDE
    work = be.convert(img, np.float32 if exact else np.float64, levels / spec.max_value)
    values = be.pad(work, radius, radius, radius, radius, BORDERS[border])
    if exact:
        ones = np.ones(n, dtype=np.float32)

        def window_sum(x: Any) -> Any:
            return be.convert(be.sep_filter2d(x, ones, ones, cv2.BORDER_REPLICATE), np.float64)

        margin = 0.5
    else:

        def window_sum(x: Any) -> Any:
            return be.convert(be.box(x, (n, n), cv2.BORDER_REPLICATE), np.float64, area)

        margin = KUWAHARA_TIE * area * area * levels * levels
    sums, squares = window_sum(values), window_sum(be.multiply(values, values))
    anchor = n // 2  # the filters' anchor for an n x n window
    ones_row = np.ones((1, spec.channels), dtype=np.float64)
    best_sum: Any = None  # the first window's sums, then the running best (a native image)
    best_spread: Any = None
    for dx, dy in ((0, 0), (radius, 0), (radius, radius), (0, radius)):
        x, y = anchor + dx, anchor + dy
        total = be.crop(sums, x, y, spec.width, spec.height)
        square = be.crop(squares, x, y, spec.width, spec.height)
        spread = be.add_weighted(square, area, be.multiply(total, total), -1.0)  # n^4 * variance
        if not exact:
            spread = be.abs_convert(spread, np.float64)
        if spec.channels > 1:
            spread = be.transform(spread, ones_row)
        if best_sum is None:
            best_sum, best_spread = total, spread
            continue
        # take = 1 where best_spread - spread > margin, else 0
        take = be.threshold(be.add_weighted(best_spread, 1.0, spread, -1.0), margin, 1.0, cv2.THRESH_BINARY)
        best_spread = be.add_weighted(best_spread, 1.0,
                                      be.multiply(take, be.add_weighted(spread, 1.0, best_spread, -1.0)), 1.0)
        take_all = take if spec.channels == 1 else be.merge([take] * spec.channels)
        best_sum = be.add_weighted(best_sum, 1.0,
                                   be.multiply(take_all, be.add_weighted(total, 1.0, best_sum, -1.0)), 1.0)
    return be.convert(best_sum, spec.dtype, spec.max_value / (levels * area))


# ---------------------------------------------------------------------------------------
# Host-only looks: xphoto, photo and imgproc algorithms without a device version
# ---------------------------------------------------------------------------------------
@register(
    footprint=whole("cv2.xphoto.oilPainting reads a neighbourhood whose extent it does not document"),
    category="stylize",
    summary="Oil painting: each pixel takes the mean colour of the most frequent intensity around it.",
    params=[
        Param("size", "int", 4, min=1, max=50, unit="px",
              help="neighbourhood radius: the window is (2 size + 1) x (2 size + 1) pixels"),
        Param("dyn_ratio", "int", 8, min=1, max=128,
              help="intensity bins are 8-bit gray levels divided by this: larger = fewer bins, flatter strokes"),
    ],
)
@with_note(EIGHT_BIT_NOTE)
def oil_paint(ctx: Context, img: Any, *, size: int, dyn_ratio: int) -> Any:
    """``cv2.xphoto.oilPainting(src, size, dyn_ratio)`` (Holzmann's oil-painting effect).

    For every pixel, the gray levels (divided by ``dyn_ratio``) of its
    (2 size + 1)^2 neighbourhood are histogrammed; the output is the mean colour of
    the neighbours in the most frequent bin. Alpha passes through.
    """
    return on_host_8bit_bgr(ctx, img, lambda bgr: cv2.xphoto.oilPainting(bgr, size, dyn_ratio), "oil_paint")


@register(
    footprint=whole("domain-transform filtering is recursive over the whole image"),
    category="stylize",
    summary="Painterly stylization: edge-aware smoothing with darkened edges (cv2.stylization).",
    params=[
        Param("sigma_s", "float", 60.0, min=0.0, max=200.0, unit="px", help="spatial extent of the smoothing"),
        Param("sigma_r", "float", 0.45, min=0.0, max=1.0, unit="fraction of full scale",
              help="colour difference that still counts as one region; larger = flatter"),
    ],
)
@with_note(EIGHT_BIT_NOTE)
def stylization(ctx: Context, img: Any, *, sigma_s: float, sigma_r: float) -> Any:
    """``cv2.stylization(src, sigma_s, sigma_r)``: domain-transform smoothing (Gastal and
    Oliveira 2011) with enhanced edges, an abstracted, painted look. Alpha passes through.
    """
    return on_host_8bit_bgr(ctx, img, lambda bgr: cv2.stylization(bgr, sigma_s=sigma_s, sigma_r=sigma_r),
                            "stylization")


@register(
    footprint=whole("domain-transform filtering is recursive over the whole image"),
    category="stylize",
    summary="Detail enhancement: amplifies fine detail over an edge-aware base (cv2.detailEnhance).",
    params=[
        Param("sigma_s", "float", 10.0, min=0.0, max=200.0, unit="px", help="spatial extent of the base layer"),
        Param("sigma_r", "float", 0.15, min=0.0, max=1.0, unit="fraction of full scale",
              help="colour difference treated as an edge; larger = more detail amplified"),
    ],
)
@with_note(EIGHT_BIT_NOTE)
def detail_enhance(ctx: Context, img: Any, *, sigma_s: float, sigma_r: float) -> Any:
    """``cv2.detailEnhance(src, sigma_s, sigma_r)``: the image is split into an
    edge-preserving smooth base (domain transform) and a detail layer, and the detail
    layer is amplified. Alpha passes through.
    """
    return on_host_8bit_bgr(ctx, img, lambda bgr: cv2.detailEnhance(bgr, sigma_s=sigma_s, sigma_r=sigma_r),
                            "detail_enhance")


EDGE_PRESERVING_FLAGS = {"recursive": cv2.RECURS_FILTER, "normconv": cv2.NORMCONV_FILTER}


@register(
    footprint=whole("domain-transform filtering is recursive over the whole image"),
    category="stylize",
    summary="Edge-preserving smoothing by the domain transform (cv2.edgePreservingFilter).",
    params=[
        Param("sigma_s", "float", 60.0, min=0.0, max=200.0, unit="px", help="spatial extent of the smoothing"),
        Param("sigma_r", "float", 0.4, min=0.0, max=1.0, unit="fraction of full scale",
              help="colour difference treated as an edge; larger = smoother across edges"),
        Param("flags", "choice", "recursive", choices=tuple(EDGE_PRESERVING_FLAGS),
              help="recursive (RECURS_FILTER, faster) or normconv (NORMCONV_FILTER, normalised convolution)"),
    ],
)
@with_note(EIGHT_BIT_NOTE)
def edge_preserving(ctx: Context, img: Any, *, sigma_s: float, sigma_r: float, flags: str) -> Any:
    """``cv2.edgePreservingFilter(src, flags, sigma_s, sigma_r)`` (Gastal and Oliveira's
    domain transform): smooths within regions and keeps their edges. Alpha passes through.
    """
    code = EDGE_PRESERVING_FLAGS[flags]
    return on_host_8bit_bgr(
        ctx, img, lambda bgr: cv2.edgePreservingFilter(bgr, flags=code, sigma_s=sigma_s, sigma_r=sigma_r),
        "edge_preserving")


@register(
    footprint=whole("pyramid mean-shift segmentation works on image pyramids of the whole image"),
    category="stylize",
    summary="Mean-shift filtering: flattens colour regions, keeps their borders (cv2.pyrMeanShiftFiltering).",
    params=[
        Param("spatial_radius", "float", 10.0, min=1.0, max=100.0, unit="px", help="spatial window radius (sp)"),
        Param("color_radius", "float", 24.0, min=1.0, max=255.0, unit="8-bit levels",
              help="colour window radius (sr): colours closer than this are averaged together"),
        Param("max_level", "int", 1, min=0, max=4,
              help="pyramid levels: > 0 works coarse to fine (faster, crisper region borders); "
                   "reduced to what the image size allows"),
    ],
)
@with_note(EIGHT_BIT_NOTE)
def mean_shift(ctx: Context, img: Any, *, spatial_radius: float, color_radius: float, max_level: int) -> Any:
    """``cv2.pyrMeanShiftFiltering(src, sp, sr, maxLevel)``: every pixel moves in joint
    (x, y, B, G, R) space to the mean of its neighbours within ``spatial_radius`` px and
    ``color_radius`` levels until it settles (5 iterations or a shift below 1), and
    takes the colour it settles at. Alpha passes through.
    """
    smallest = min(ctx.info.width, ctx.info.height)
    levels = min(max_level, max(0, int(np.log2(smallest)) - 1))
    return on_host_8bit_bgr(
        ctx, img, lambda bgr: cv2.pyrMeanShiftFiltering(bgr, spatial_radius, color_radius, maxLevel=levels),
        "mean_shift")
