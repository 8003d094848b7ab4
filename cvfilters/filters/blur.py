"""Blurs: Gaussian, box, median, bilateral, motion, zoom and tilt-shift."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from cvfilters.backends import auto_gaussian_ksize
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.pixels import to_float32_same_units
from cvfilters.core.types import Image
from cvfilters.filters._shared.common import border_param, center_param, with_border
from cvfilters.filters._shared.correlation import respond
from cvfilters.filters._shared.kernels import line_kernel
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import Footprint, Halo, Positional, Window, local, square, whole
from cvfilters.registry.params import MAX_KERNEL_SIDE, Param

__all__ = ["median_filter"]

MAX_MEDIAN_SIZE = 101
LARGE_MEDIAN_SIZE = 51  # float32 images with many distinct values cost ~size^2 (see median_blur)
OPENCV_MEDIAN_MAX = 5  # cv2.medianBlur takes sizes above 5 for uint8 images only
# One block of the byte-by-byte median costs about as much as selecting among 5 window values
# (measured on 1080p: ~20 ns against ~4 ns per pixel and channel).
BLOCK_COST = 5
SELECT_CHUNK_BYTES = 64 << 20  # working memory of one strip of the sliding-window median
MAX_ZOOM_STEPS = 10  # 2**10 samples along the longest streak


def _gaussian_halo(params: Mapping[str, Any], spec: ImageInfo) -> Halo:
    """Half the kernel: the given ksize, or OpenCV's automatic one for the dtype the blur sees."""
    return Halo.square((params["ksize"] or auto_gaussian_ksize(params["sigma"], spec.dtype)) // 2)


def _bilateral_reach(params: Mapping[str, Any], spec: ImageInfo) -> int:
    """OpenCV's radius: ``d // 2``, or ``round(1.5 sigma_space)`` for d = 0 (one more for safety)."""
    return (params["d"] // 2 if params["d"] > 0 else round(1.5 * params["sigma_space"])) + 1


@register(
    footprint=local(_gaussian_halo),
    linear=True,
    category="blur",
    summary="Gaussian blur with standard deviation sigma (px).",
    params=[
        Param("sigma", "float", 2.0, min=0.1, max=100.0, unit="px", help="standard deviation of the Gaussian"),
        Param("ksize", "int", 0, min=0, max=MAX_KERNEL_SIDE, odd=True, unit="px",
              help="kernel width and height; 0 = automatic "
                   "(OpenCV's rule: 6 sigma + 1 for uint8, 8 sigma + 1 otherwise)"),
        border_param(),
    ],
    alpha="premultiply",
)
def gaussian_blur(ctx: Context, img: Image, *, sigma: float, ksize: int, border: str) -> Image:
    """Gaussian blur, ``cv2.GaussianBlur`` with the same sigma in x and y.

    ``out = G * in`` with ``G(x, y) ~ exp(-(x^2 + y^2) / (2 sigma^2))`` normalised over a
    ``ksize`` square. Integer images are rounded and saturated; on images with alpha the
    blur runs on premultiplied colour, so transparent regions do not darken the edges.
    """
    return _gaussian(ctx, img, sigma, ksize, border)


def _gaussian(ctx: Context, img: Image, sigma: float, ksize: int, border: str) -> Image:
    size = ksize or auto_gaussian_ksize(sigma, ctx.info.dtype)
    return with_border(ctx, img, (size // 2, size // 2), border,
                       lambda im, b: ctx.backend.gaussian(im, (size, size), sigma, b))


@register(
    footprint=local(lambda p, spec: Halo.kernel(p["size"], p["size"])),
    linear=True,
    category="blur",
    summary="Box blur: the mean over a size x size square.",
    params=[
        Param("size", "int", 5, min=1, max=MAX_KERNEL_SIDE, unit="px", help="side of the square window"),
        border_param(),
    ],
    alpha="premultiply",
)
def box_blur(ctx: Context, img: Image, *, size: int, border: str) -> Image:
    """``out = mean of in over a size x size window`` anchored at its centre (``cv2.blur``).

    For an even ``size`` the anchor is ``size // 2`` (one more pixel before it than after).
    """
    return with_border(ctx, img, (size, size), border, lambda im, b: ctx.backend.box(im, (size, size), b))


# ----------------------------------------------------------------------------- median
@register(
    footprint=square(lambda p, spec: p["size"] // 2),
    unbounded=True,
    category="blur",
    summary="Median filter: the middle value of each size x size window, per channel.",
    params=[Param("size", "int", 5, min=1, max=MAX_MEDIAN_SIZE, odd=True, unit="px", large=LARGE_MEDIAN_SIZE,
                  help="side of the square window (odd); exact for every dtype (cuda uint8: within 1 level); "
                       "above 51 needs --allow-large")],
    alpha="premultiply",
)
def median_blur(ctx: Context, img: Image, *, size: int) -> Image:
    """``out = median of in over a size x size window``, per channel; edges replicate (``aaa|abc``).

    Exact for every dtype and size on the cpu and opencl backends, never through a lossy
    conversion (on cuda, 1-channel uint8 runs OpenCV's CUDA median, which its own tests
    hold to within 1 level):

    - uint8, any size, and uint16/float32 up to size 5: ``cv2.medianBlur``, on the device.
    - uint16/float32 from size 7 (``cv2.medianBlur`` takes only uint8 there) run on the
      host (a counted ``median`` fallback on device backends), on the ranks of the image's
      distinct values, a lossless relabelling (the median commutes with monotone maps):

      * at most 256 distinct values (8-bit sources): uint8 ranks through
        ``cv2.medianBlur``, as fast as uint8 at any size;
      * at most 65536 (every uint16 image, float32 from 16-bit sources): uint16 ranks,
        either selected window by window (numpy partial sort, cost ~ ``size^2``: about
        0.5 s per megapixel and channel at size 7, 3 s at 25) or byte by byte
        (:func:`_median_ranks16`: one uint8 ``cv2.medianBlur`` per distinct high byte of
        the result, cost independent of size, up to ~8 s per megapixel and channel),
        whichever is estimated cheaper;
      * more (float32 with arbitrary values): window-by-window selection.

      Sizes above 51 need ``--allow-large``: the selection grows with ``size^2``.
    """
    if ctx.info.dtype == np.uint8 or size <= OPENCV_MEDIAN_MAX:
        return ctx.backend.median(img, size)
    return ctx.backend.on_host(img, lambda host: median_filter(host, size), "median")


def median_filter(image: np.ndarray, size: int) -> np.ndarray:
    """Exact per-channel median over ``size`` x ``size`` windows, replicated border, any dtype.

    See :func:`median_blur` for the method chosen per image.
    """
    if image.dtype == np.uint16:
        values = np.flatnonzero(np.bincount(image.ravel(), minlength=65536)).astype(np.uint16)
    else:
        values = np.unique(image)
    if len(values) > 65536:
        return _median_select(image, size)
    rank_type = np.uint8 if len(values) <= 256 else np.uint16
    ranks = np.searchsorted(values, image).astype(rank_type)
    filtered = cv2.medianBlur(ranks, size) if rank_type == np.uint8 else _median_ranks16(ranks, size)
    return values[filtered].reshape(image.shape)


def _median_ranks16(ranks: np.ndarray, size: int) -> np.ndarray:
    """Median of uint16 ranks: window selection, or byte by byte with uint8 ``cv2.medianBlur``.

    Byte by byte: the high byte of the median is the median of the high bytes; a pixel
    whose median lies in block ``h`` (values ``256 h .. 256 h + 255``) takes as low byte
    the median of ``clip(v - 256 h, 0, 255)``, a monotone map of its window: one
    ``cv2.medianBlur`` per distinct high byte, over the rows that need it. That costs about
    as much as selecting from ``BLOCK_COST`` window values per block, so it runs when
    ``blocks * BLOCK_COST < size^2``.
    """
    reach = size // 2
    high = cv2.medianBlur((ranks >> 8).astype(np.uint8), size).reshape(ranks.shape)
    blocks = np.unique(high)
    if len(blocks) * BLOCK_COST >= size * size:
        return _median_select(ranks, size)
    padding = ((reach, reach), (reach, reach)) + ((0, 0),) * (ranks.ndim - 2)
    padded = np.pad(ranks, padding, mode="edge").astype(np.int32)
    low = np.zeros(ranks.shape, np.uint8)
    for block in blocks:
        chosen = high == block
        rows = np.flatnonzero(chosen.reshape(chosen.shape[0], -1).any(axis=1))
        top, bottom = rows[0], rows[-1] + 1
        clamped = np.clip(padded[top : bottom + 2 * reach] - 256 * int(block), 0, 255).astype(np.uint8)
        filtered = cv2.medianBlur(clamped, size).reshape(clamped.shape)
        filtered = filtered[reach : reach + bottom - top, reach : reach + ranks.shape[1]]
        band = chosen[top:bottom]
        low[top:bottom][band] = filtered[band]
    return (high.astype(np.uint16) << 8) | low


def _median_select(image: np.ndarray, size: int) -> np.ndarray:
    """Median by partial sorting of every window (numpy), strip by strip, one channel at a time."""
    if image.ndim == 3:
        return np.dstack([_median_select(image[..., c], size) for c in range(image.shape[2])])
    reach, middle = size // 2, size * size // 2
    height, width = image.shape
    padded = np.pad(image, reach, mode="edge")
    out = np.empty_like(image)
    rows = max(1, SELECT_CHUNK_BYTES // (width * size * size * image.itemsize))
    for top in range(0, height, rows):
        bottom = min(top + rows, height)
        windows = sliding_window_view(padded[top : bottom + 2 * reach], (size, size))
        flat = windows.reshape(bottom - top, width, size * size)
        out[top:bottom] = np.partition(flat, middle, axis=-1)[..., middle]
    return out


# ----------------------------------------------------------------------------- bilateral
@register(
    footprint=square(_bilateral_reach),
    linear=True,
    category="blur",
    summary="Bilateral filter: edge-preserving smoothing by distance and colour difference.",
    params=[
        Param("d", "int", 9, min=0, max=49, unit="px",
              help="diameter of the neighbourhood; 0 = from sigma_space (2 round(1.5 sigma_space) + 1)"),
        # Default: about 75 levels of uint8, the sigmaColor of OpenCV's bilateralFilter(img, 9, 75, 75) tutorial.
        Param("sigma_color", "float", 0.3, min=0.001, max=1.0, unit="fraction of full scale",
              help="colour difference weighted exp(-1/2): 0.1 is 25.5 levels of uint8, 6554 of uint16, 0.1 of float32"),
        Param("sigma_space", "float", 5.0, min=0.5, max=16.0, unit="px", help="spatial standard deviation"),
        border_param(),
    ],
    alpha="premultiply",
)
def bilateral(ctx: Context, img: Image, *, d: int, sigma_color: float, sigma_space: float, border: str) -> Image:
    """``out(p) = sum_q w(p, q) in(q) / sum_q w(p, q)`` over a disc of diameter ``d``.

    ``w = exp(-|p - q|^2 / (2 sigma_space^2)) * exp(-c(p, q)^2 / (2 (sigma_color *
    full_scale)^2))`` for ``|p - q| <= d / 2``, where the colour distance ``c`` is the sum
    of the absolute B, G, R differences (``cv2.bilateralFilter``). ``cv2`` takes uint8 and float32 with 1 or 3 channels:
    uint16 images run as float32 scaled to 0..1 (exact: every uint16 value survives the
    round trip) and are rounded back; with alpha the premultiplied colour is filtered as
    one 3-channel image and alpha on its own.
    """
    be, spec = ctx.backend, ctx.info
    reach = d // 2 if d > 0 else round(1.5 * sigma_space)

    def run(image: Image) -> Image:
        return with_border(ctx, image, (reach, reach), border,
                           lambda im, b: be.bilateral(im, d, sigma_color * scale, sigma_space, b))

    if spec.dtype == np.uint16:
        scale = 1.0
        image = be.convert(img, np.float32, 1.0 / spec.max_value)
    else:
        scale, image = spec.max_value, img
    if spec.channels == 4:
        *colour, alpha = be.split(image)
        out = be.merge([*be.split(run(be.merge(colour))), run(alpha)])
    else:
        out = run(image)
    return be.convert(out, np.uint16, spec.max_value) if spec.dtype == np.uint16 else out


# ----------------------------------------------------------------------------- motion, zoom, tilt-shift
@register(
    footprint=square(lambda p, spec: math.ceil(p["length"] / 2) + 1),
    linear=True,
    category="blur",
    summary="Motion blur: average along a straight line of a given length and angle.",
    params=[
        Param("length", "float", 20.0, min=1.0, max=250.0, unit="px",
              help="length of the streak; 1 leaves the image unchanged"),
        Param("angle", "float", 0.0, min=-360.0, max=360.0, unit="deg",
              help="direction of the motion, counter-clockwise from +x (0 horizontal, 90 vertical)"),
        border_param("replicate"),
    ],
    alpha="premultiply",
)
def motion_blur(ctx: Context, img: Image, *, length: float, angle: float, border: str) -> Image:
    """``out = L * in``: correlation with a normalised anti-aliased line kernel ``L``.

    ``L(p) ~ max(0, 1 - dist(p, S))`` for the segment ``S`` of ``length - 1`` px through
    the kernel's centre at ``angle`` (so a horizontal streak of odd length averages exactly
    ``length`` pixels), divided by its sum. It runs through ``convolve``'s generic path.
    """
    return respond(ctx, img, (line_kernel(length, angle),), border, output="clip")


@register(
    footprint=whole("streaks point at the centre of the whole image"),
    linear=True,
    category="blur",
    summary="Zoom blur: radial streaks towards a centre, like Core Image's CIZoomBlur.",
    params=[
        center_param("centre of the zoom; [0.5,0.5] is the image centre"),
        Param("amount", "float", 20.0, min=0.0, max=500.0, unit="px",
              help="streak length at the corner farthest from the centre (0 leaves the image unchanged)"),
    ],
    alpha="premultiply",
)
def zoom_blur(ctx: Context, img: Image, *, center: tuple[float, float], amount: float) -> Image:
    """``out(p) = mean_j in(c + (p - c) * s_j)``: copies scaled about ``c`` and averaged.

    The scales ``s_j = q^j`` (j = 0 .. N - 1) run geometrically from 1 to
    ``1 - amount / R`` (``R`` the distance from ``c`` to the farthest corner; capped at
    0.95 of the way to ``c``), so a pixel's streak is proportional to its distance from
    ``c``. ``N = 2^n`` with ``n = ceil(log2(amount + 1))`` (at most 1024) keeps samples
    about 1 px apart at the far corner; they are gathered by ``n`` doublings
    ``I <- (I + zoom(I, q^(2^k))) / 2``, each one bilinear ``remap`` on the device,
    computed in float32.
    """
    spec, be = ctx.info, ctx.backend
    cx, cy = center[0] * spec.width - 0.5, center[1] * spec.height - 0.5
    reach = max(math.hypot(x - cx, y - cy) for x in (0, spec.width - 1) for y in (0, spec.height - 1))
    if amount == 0.0 or reach == 0.0:
        return img
    steps = min(MAX_ZOOM_STEPS, max(1, math.ceil(math.log2(amount + 1.0))))
    ratio = (1.0 - min(amount / reach, 0.95)) ** (1.0 / (2**steps - 1))
    out = to_float32_same_units(ctx, img)
    for step in range(steps):
        scale = ratio ** (2**step)
        map_x, map_y = (_zoom_map_cached(ctx, cx, cy, scale, axis) for axis in (0, 1))
        out = be.add_weighted(out, 0.5, be.remap(out, map_x, map_y, cv2.INTER_LINEAR, cv2.BORDER_REPLICATE), 0.5)
    return out if spec.dtype == np.float32 else be.convert(out, spec.dtype)


def _zoom_map_cached(ctx: Context, cx: float, cy: float, scale: float, axis: int) -> Any:
    """The device copy of a :func:`_zoom_map`, built once per size, centre, scale and axis."""
    spec = ctx.info
    return ctx.backend.cached(("zoom_blur", spec.size, cx, cy, scale, axis),
                         lambda: _zoom_map(spec.width, spec.height, cx, cy, scale, axis))


def _zoom_map(width: int, height: int, cx: float, cy: float, scale: float, axis: int) -> np.ndarray:
    """Source x (axis 0) or y (axis 1) of a zoom by ``scale`` about ``(cx, cy)``, float32."""
    if axis == 0:
        coords = cx + (np.arange(width, dtype=np.float64) - cx) * scale
        return np.tile(coords.astype(np.float32), (height, 1))
    coords = cy + (np.arange(height, dtype=np.float64) - cy) * scale
    return np.tile(coords.astype(np.float32)[:, None], (1, width))


def tilt_shift_mask(height: int, center: float, band: float, falloff: float) -> np.ndarray:
    """The (height,) float32 blend weight of :func:`tilt_shift`: 0 in the band, 1 far from it."""
    y = (np.arange(height, dtype=np.float64) + 0.5) / height
    outside = np.abs(y - center) - band / 2.0
    t = np.clip(outside / falloff, 0.0, 1.0) if falloff > 0 else (outside > 0).astype(np.float64)
    return (t * t * (3.0 - 2.0 * t)).astype(np.float32)


def _tilt_shift_footprint(params: Mapping[str, Any], spec: ImageInfo) -> Footprint:
    if params["border"] == "wrap":
        return whole("border=wrap reads the opposite edge of the image")

    def run(ctx: Context, img: Image, window: Window) -> Image:
        y0, y1, _, _ = window.rect
        column = tilt_shift_mask(window.full.height, params["center"], params["band"], params["falloff"])[y0:y1]
        return _tilt_shift_blend(ctx, img, _rows_weight(column, ctx.info), params["sigma"], params["border"])

    return Positional(run, _gaussian_halo({"ksize": 0, "sigma": params["sigma"]}, spec))


def _rows_weight(column: np.ndarray, spec: ImageInfo) -> np.ndarray:
    """A per-row weight spread over an image of ``spec``."""
    plane = np.repeat(column[:, None], spec.width, axis=1)
    return plane if spec.channels == 1 else np.repeat(plane[:, :, None], spec.channels, axis=2)


def _tilt_shift_blend(ctx: Context, img: Image, weight: Any, sigma: float, border: str) -> Image:
    be = ctx.backend
    detail = be.add_weighted(_gaussian(ctx, img, sigma, 0, border), 1.0, img, -1.0, dtype=np.float32)
    return be.add_weighted(img, 1.0, be.multiply(detail, weight), 1.0, dtype=ctx.info.dtype)


@register(
    footprint=_tilt_shift_footprint,
    linear=True,
    category="blur",
    summary="Tilt-shift: a sharp horizontal band fading into Gaussian blur above and below.",
    params=[
        Param("center", "float", 0.5, min=0.0, max=1.0, unit="fraction of height",
              help="vertical position of the middle of the sharp band (0 top, 1 bottom)"),
        Param("band", "float", 0.2, min=0.0, max=1.0, unit="fraction of height", help="height of the sharp band"),
        Param("falloff", "float", 0.25, min=0.0, max=1.0, unit="fraction of height",
              help="distance over which sharp fades into fully blurred (smoothstep); 0 is a hard edge"),
        Param("sigma", "float", 6.0, min=0.1, max=100.0, unit="px", help="standard deviation of the blur"),
        border_param(),
    ],
    alpha="premultiply",
)
def tilt_shift(ctx: Context, img: Image, *, center: float, band: float, falloff: float, sigma: float,
               border: str) -> Image:
    """``out = in + m(y) * (G * in - in)``, a per-row blend of the image and its Gaussian blur.

    ``G * in`` is ``gaussian_blur(sigma)``; ``m(y) = smoothstep(clip((|y - center| -
    band / 2) / falloff, 0, 1))`` with ``y`` the row centre as a fraction of the height:
    rows inside the band are the input unchanged, rows ``falloff`` beyond it the blur. The
    mask is built once per size and kept on the device; the blend is ``multiply`` and
    ``add_weighted`` there.
    """
    spec = ctx.info
    weight = ctx.backend.cached(("tilt_shift", spec.size, spec.channels, center, band, falloff),
                           lambda: _rows_weight(tilt_shift_mask(spec.height, center, band, falloff), spec))
    return _tilt_shift_blend(ctx, img, weight, sigma, border)
