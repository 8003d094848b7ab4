"""Histogram operations: whole-image statistics applied as per-pixel operations.

Every filter here measures the whole image once (a histogram of its levels,
percentiles, a minimum and maximum) and applies the result with per-pixel primitives
(``lut``, ``convert``, ``threshold``, ``add_weighted``) that run on every backend.

Where the statistics are computed
    With the backend's ``calc_hist``, ``min_max`` and ``clahe`` primitives: on the
    device where the backend has them (OpenCL: 8-bit histograms and CLAHE; CUDA:
    ``histEven`` for 8/16-bit, ``minMax``, ``createCLAHE``), otherwise from one host
    copy counted in ``counters.fallbacks`` and shown by ``--explain``. Only the small
    result (the counts) comes to the host; the table built from it runs on the device.

Levels
    uint8 images have 256 levels and uint16 65536. float32 images are taken as 0..1 and
    quantised to 65536 levels (``round(clip(x, 0, 1) * 65535)``) by the level-based
    filters (``equalize``, ``clahe``, ``match_histogram``, ``auto_levels``,
    ``threshold_otsu``); their float32 results therefore have 16-bit precision.

Colour
    ``space`` chooses what colour images are processed on: the luma/lightness channel
    of ycrcb (Y, BT.601; linear in B, G, R, the same on every backend, the default),
    lab (L*) or hsv (V = max(B, G, R)), converted back with the other channels kept;
    or ``per_channel`` (B, G and R independently, which shifts colours). uint8 images
    are converted with 8-bit ``cvtColor``; uint16 and float32 through float32, the luma
    channel quantised to 16-bit levels. Alpha passes through untouched. ycrcb is the
    default because OpenCV converts it identically on every backend; its OpenCL
    kernels for lab and hsv round differently from its CPU code (8-bit Lab to BGR: up
    to 2 levels; float32 Lab: up to 0.4 L*; 8-bit HSV to BGR: 1 level), so those
    spaces differ slightly between the cpu and opencl backends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import cv2
import numpy as np

from cvfilters.backends.base import pooled_ranges
from cvfilters.core.arrays import ImageValue
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.errors import CvfError, ParameterError
from cvfilters.core.types import Image
from cvfilters.filters._shared import clahe as clahe_tiles
from cvfilters.filters._shared.histogram_files import (
    HISTOGRAM_SUFFIXES,
    _file_key,
    _reference,
    _reference_counts_cached,
    load_histogram,
    save_histogram,
)
from cvfilters.filters._shared.histograms import (
    equalize_table,
    histogram,
    histogram_panel,
    host_array,
    match_table,
    otsu_level,
    percentile_level,
)
from cvfilters.filters._shared.levels import (
    FLOAT_LEVELS,
    SPACE_CHOICES,
    SPACE_HELP,
    LevelView,
    apply_tables,
    host_context,
    level_view,
    view_counts,
)
from cvfilters.registry import catalog as registry
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import Footprint, Global, Window, square, whole
from cvfilters.registry.params import Param

_F32 = np.dtype(np.float32)


def otsu_threshold(image: Image) -> float:
    """Otsu's threshold of an image's luminance, in the image's units (see ``threshold_otsu``).

    uint8 and uint16: the level ``t`` (pixels ``> t`` are foreground). float32: the
    midpoint ``(t + 0.5) / 65535`` above the 16-bit level ``t``.
    """
    array = host_array(image)
    ctx = host_context(array)
    gray = _luma_plane(ctx, array)
    return _otsu_value(ctx.with_info(channels=1), gray)



def _is_histogram_file(reference: str | ImageValue) -> bool:
    return isinstance(reference, str) and reference.lower().endswith(HISTOGRAM_SUFFIXES)


def _check_match(params: dict[str, Any]) -> str | None:
    try:
        data = _reference(params["reference"])
    except ValueError as exc:
        return f"reference={exc}"
    if _is_histogram_file(params["reference"]) and params["space"] != "per_channel" \
            and data.shape[0] != 1:
        return (f"reference={params['reference']} holds {data.shape[0]} channels; space={params['space']} "
                "matches one (save it with space=" + params["space"] + ")")
    return None


# ---------------------------------------------------------------- two passes
def _two_pass(measure: Callable[..., Any], apply: Callable[..., Image], *, merge: Callable[[Sequence[Any]], Any] | None
              = None, measures: str = "a histogram of levels") -> Callable[[Mapping[str, Any], ImageInfo], Footprint]:
    """The :class:`Global` footprint of a filter ``apply(ctx, img, measure(ctx, img, **p), **p)``.

    ``merge`` combines the measures of tiles (default: their sum, for histograms).
    """
    def rule(params: Mapping[str, Any], spec: ImageInfo) -> Footprint:
        return Global(statistics=lambda ctx, img, window: measure(ctx, img, **params, part=window.measured),
                      merge=merge or _summed, apply=lambda ctx, img, stats, window: apply(ctx, img, stats, **params),
                      measures=measures)

    return rule


def _all(image: Any) -> Any:
    return image


def _summed(partials: Sequence[Any]) -> Any:
    return sum(partials[1:], start=partials[0])


def _counts(ctx: Context, img: Image, space: str, part: Callable[[Any], Any] = _all) -> np.ndarray:
    """The histogram(s) of the levels a filter on ``space`` processes (of ``part`` of the image)."""
    view = level_view(ctx, img, space)
    return ctx.backend.calc_hist(part(view.image), view.channels, view.levels)


# ---------------------------------------------------------------- filters
@register(
    footprint=_two_pass(lambda ctx, img, *, space, part: _counts(ctx, img, space, part),
                        lambda *a, **p: _equalized(*a, **p)),
    category="histogram",
    summary="Global histogram equalisation (cv2.equalizeHist), on luminance or per channel.",
    params=[Param("space", "choice", "ycrcb", choices=SPACE_CHOICES, help=SPACE_HELP)],
)
def equalize(ctx: Context, img: Image, *, space: str) -> Image:
    """Spread the levels so their cumulative distribution becomes a straight line.

    ``out = round((cdf(in) - cdf_min) / (N - cdf_min) * (L - 1))`` with ``cdf`` the
    cumulative histogram, ``cdf_min`` the count of the lowest level present, ``N`` the
    pixel count and ``L`` the levels (256 for uint8: ``cv2.equalizeHist`` bit for bit;
    65536 for uint16 and float32, which ``equalizeHist`` cannot do). A constant image
    is unchanged. Colour images are equalised on the luma channel of ``space`` or per
    channel. One histogram per image (host statistics, see the module notes), then a
    lookup table on the device.
    """
    view = level_view(ctx, img, space)
    if view.levels == 256 and view.channels == ctx.info.channels:  # uint8 grey, or per channel
        if view.channels == 1:
            return ctx.backend.equalize_hist(view.image)  # the same table, in one OpenCV call
        return ctx.backend.merge([ctx.backend.equalize_hist(plane) for plane in ctx.backend.split(view.image)])
    return _equalized(ctx, img, view_counts(ctx, view), space=space, view=view)


def _equalized(ctx: Context, img: Image, counts: np.ndarray, *, space: str, view: LevelView | None = None) -> Image:
    """Equalise ``img`` with the histogram ``counts`` (of the whole image, when ``img`` is a tile);
    ``view``: ``img``'s level view when the caller has made it."""
    view = view or level_view(ctx, img, space)
    return apply_tables(ctx, img, view, [equalize_table(c) for c in counts], counts)


def _clahe_rule(params: Mapping[str, Any], spec: ImageInfo) -> Footprint:
    """CLAHE in two passes (:mod:`cvfilters.filters._shared.clahe`): the tiles' histograms, then per piece."""
    clip_limit, tiles, space = params["clip_limit"], params["tiles"], params["space"]
    made: dict[int, tuple[np.ndarray, list[np.ndarray]]] = {}

    def planes(ctx: Context, img: Image) -> tuple[Any, list[np.ndarray]]:
        view = level_view(ctx, img, space)
        host = np.asarray(view.image)
        return view, [host] if view.channels == 1 else [host[..., c] for c in range(view.channels)]

    def statistics(ctx: Context, img: Image, window: Window) -> np.ndarray:
        view, found = planes(ctx, img)
        y0, _, x0, _ = window.inner or window.rect
        return np.stack([clahe_tiles.tile_counts(window.measured(p), y0, x0, spec.height, spec.width, tiles,
                                                 view.levels) for p in found])

    def apply(ctx: Context, img: Image, counts: np.ndarray, window: Window) -> Image:
        entry = made.get(id(counts))
        if entry is None or entry[0] is not counts:
            dtype = np.dtype(np.uint8 if counts.shape[-1] == 256 else np.uint16)
            entry = made[id(counts)] = (counts, [
                clahe_tiles.tables(c, clip_limit, spec.height, spec.width, tiles, dtype) for c in counts])
        view, found = planes(ctx, img)
        out = [clahe_tiles.interpolate(p, window.y0, window.x0, spec.height, spec.width, tiles, table)
               for p, table in zip(found, entry[1], strict=True)]
        return view.restore(out[0] if len(out) == 1 else ctx.backend.merge(out))

    return Global(statistics=statistics, merge=_summed, apply=apply, measures="the histograms of the CLAHE tiles")


@register(
    footprint=_clahe_rule,
    category="histogram",
    summary="Contrast-limited adaptive histogram equalisation (cv2.createCLAHE), on luminance.",
    params=[
        Param("clip_limit", "float", 2.0, min=0.0, max=100.0, unit="x uniform bin height",
              help="each tile's histogram is clipped at clip_limit x (tile pixels / levels), at least 1 pixel, "
                   "and the excess spread evenly; 0 disables clipping (plain adaptive equalisation)"),
        Param("tiles", "int", 8, min=1, max=64, unit="tiles per side",
              help="the image is cut into tiles x tiles regions, each with its own table, blended bilinearly"),
        Param("space", "choice", "ycrcb", choices=SPACE_CHOICES, help=SPACE_HELP),
    ],
)
def clahe(ctx: Context, img: Image, *, clip_limit: float, tiles: int, space: str) -> Image:
    """OpenCV's CLAHE (``cv2.createCLAHE(clip_limit, (tiles, tiles)).apply``) on 8- or 16-bit levels.

    Per tile: ``h'(v) = min(h(v), c) + excess / L`` with ``c = max(clip_limit * P / L, 1)``
    (``P`` tile pixels, ``L`` levels), equalised like ``equalize``; each pixel blends
    the tables of its four nearest tiles bilinearly. uint8 uses 256 levels and uint16
    65536, as OpenCV does: for uint16 the clip height is relative to 65536 levels, so
    data with few distinct levels (8-bit data scaled up) changes little; convert such
    images to uint8 first. float32 is quantised to uint16 levels (clipped to 0..1) and
    processed like uint16, with 16-bit precision. Runs through the backend's ``clahe``
    primitive (OpenCL has an 8-bit kernel; other cases are counted host fallbacks).
    """
    be = ctx.backend
    view = level_view(ctx, img, space)
    planes = [view.image] if view.channels == 1 else be.split(view.image)
    out = [be.clahe(plane, clip_limit, (tiles, tiles)) for plane in planes]
    return view.restore(out[0] if len(out) == 1 else be.merge(out))


@register(
    footprint=_two_pass(lambda ctx, img, *, reference, space, part: _counts(ctx, img, space, part),
                        lambda ctx, img, counts, **p: _matched(ctx, img, counts, **p)),
    category="histogram",
    summary="Match the histogram of a reference image or saved histogram (CDF-to-LUT).",
    params=[
        Param("reference", "path", None, required=True, example="fixtures/chelsea.jpg", image=True,
              help="reference image (any format cvfilters reads, or an array / PIL image from Python), or a "
                   "histogram file (.npy/.json written by cvfilters.filters.histogram.save_histogram); @file on "
                   "the command line"),
        Param("space", "choice", "per_channel", choices=SPACE_CHOICES,
              help="per_channel (default) matches B, G and R to the reference's B, G and R, carrying its colour "
                   "cast; ycrcb (Y), lab (L*) or hsv (V) match only the luma channel, colour kept. "
                   "Ignored for gray images"),
    ],
    check=_check_match,
)
def match_histogram(ctx: Context, img: Image, *, reference: str | ImageValue, space: str) -> Image:
    """Map each level to the reference level with the same cumulative share of pixels.

    ``T(v) = interp(Fs(v), Fr(r), r)``, rounded: ``Fs`` is the image's cumulative
    distribution, ``Fr`` the reference's at the levels ``r`` it contains (linear
    interpolation; ``skimage.exposure.match_histograms`` in table form). Colour images
    match B, G, R per channel or one luma channel (``space``); a gray reference serves
    all three channels, a colour reference a gray image by its BT.601 luma. Levels of
    references of another depth are scaled (uint8 ``k`` is ``257 k`` in uint16). An
    image matched to itself is unchanged. The reference is read once and cached; one
    histogram of the image (host statistics), then a lookup table on the device.
    """
    view = level_view(ctx, img, space)
    return _matched(ctx, img, view_counts(ctx, view), reference=reference, space=space, view=view)


def _matched(ctx: Context, img: Image, counts: np.ndarray, *, reference: str | ImageValue, space: str,
             view: LevelView | None = None) -> Image:
    view = view or level_view(ctx, img, space)
    try:
        ref = _reference_counts_cached(_file_key(reference), ctx.info.channels, space)
    except (OSError, ValueError, CvfError) as exc:
        raise ParameterError("match_histogram", "reference", f"={reference} cannot be used ({exc})") from None
    if len(ref) == 1 and len(counts) > 1:
        ref = np.repeat(ref, len(counts), axis=0)
    if len(ref) != len(counts):
        raise ParameterError("match_histogram", "reference",
                             f"={reference} holds {len(ref)} channels; this image needs {len(counts)}")
    tables = [match_table(c, r) for c, r in zip(counts, ref, strict=True)]
    return apply_tables(ctx, img, view, tables, counts)


def _stretch(ctx: Context, img: Image, low: float, high: float, linked: bool) -> Image:
    """Map the ``low`` and ``1 - high`` percentiles of each channel (or of all) to 0 and full scale."""
    return _stretched(ctx, img, _counts(ctx, img, "per_channel"), low=low, high=high, linked=linked)


def _stretched(ctx: Context, img: Image, counts: np.ndarray, *, low: float, high: float, linked: bool = True) -> Image:
    be, spec = ctx.backend, ctx.info
    float_image = spec.dtype == _F32
    unit = 1.0 / (FLOAT_LEVELS - 1) if float_image else 1.0
    groups = [counts.sum(axis=0)] if linked else list(counts)
    ranges = [(percentile_level(c, low) * unit, percentile_level(c, 1.0 - high) * unit) for c in groups]

    def stretched(plane: Image, lo: float, hi: float) -> Any:
        if hi <= lo:
            return plane
        alpha = spec.max_value / (hi - lo)
        out = be.convert(plane, spec.dtype, alpha, -lo * alpha)
        return be.clip(out, 0.0, 1.0) if float_image else out

    if len(ranges) == 1:
        return stretched(img, *ranges[0])
    return be.merge([stretched(p, lo, hi) for p, (lo, hi) in zip(be.split(img), ranges, strict=True)])


_LOW = Param("low", "float", 0.001, min=0.0, max=0.49, unit="fraction of pixels",
             help="share of the darkest pixels clipped to black (0.001 = 0.1%, Photoshop's default)")
_HIGH = Param("high", "float", 0.001, min=0.0, max=0.49, unit="fraction of pixels",
              help="share of the brightest pixels clipped to full scale")


@register(
    footprint=_two_pass(lambda ctx, img, *, part, **p: _counts(ctx, img, "per_channel", part),
                        lambda *a, **p: _stretched(*a, **p)),
    category="histogram",
    summary="Stretch each channel between its low and high percentiles (Photoshop's Auto Levels).",
    params=[_LOW, _HIGH,
            Param("linked", "bool", False,
                  help="one range from all colour channels together (keeps hues, = auto_contrast) "
                       "instead of one per channel (also neutralises colour casts)")],
)
def auto_levels(ctx: Context, img: Image, *, low: float, high: float, linked: bool) -> Image:
    """``out = clip((in - p_lo) / (p_hi - p_lo), 0, 1) * full``, rounded for integers.

    ``p_lo`` and ``p_hi`` are the ``100 low`` and ``100 (1 - high)`` percentiles
    (``np.percentile``, linear interpolation) of each channel, or of all colour
    channels pooled when ``linked``. A channel with ``p_hi <= p_lo`` is unchanged.
    Percentiles come from one histogram of levels (float32: 16-bit levels, 0..1); the
    stretch itself is ``convert`` on the device.
    """
    return _stretch(ctx, img, low, high, linked)


@register(
    footprint=_two_pass(lambda ctx, img, *, part, **p: _counts(ctx, img, "per_channel", part),
                        lambda *a, **p: _stretched(*a, **p)),
    category="histogram",
    summary="Stretch all channels together between low and high percentiles (Auto Contrast).",
    params=[_LOW, _HIGH],
)
def auto_contrast(ctx: Context, img: Image, *, low: float, high: float) -> Image:
    """``auto_levels`` with ``linked=true``: one range for B, G and R, so hues are kept.

    ``out = clip((in - p_lo) / (p_hi - p_lo), 0, 1) * full`` with the percentiles of
    all colour channels pooled (Photoshop's Auto Contrast, "enhance monochromatic
    contrast"; Pillow's ``ImageOps.autocontrast`` is per channel, i.e. ``auto_levels``).
    """
    return _stretch(ctx, img, low, high, True)


@register(
    footprint=_two_pass(lambda *a, **p: _ranges(*a, **p), lambda *a, **p: _normalized(*a, **p),
                        merge=lambda partials: _widest(partials), measures="the minimum and maximum of each channel"),
    unbounded=True,
    category="histogram",
    summary="Min-max normalisation to the full range (cv2.normalize NORM_MINMAX).",
    params=[Param("linked", "bool", True,
                  help="one minimum and maximum over all colour channels (cv2.normalize) instead of per channel")],
)
def normalize(ctx: Context, img: Image, *, linked: bool) -> Image:
    """``out = (in - min) * full / (max - min)``, rounded for integers; float32 to 0..1.

    ``min`` and ``max`` are exact (float32 values outside 0..1 included, so HDR data
    is brought into range), over all colour channels (``linked``, like
    ``cv2.normalize(..., NORM_MINMAX)``) or per channel. A constant channel is
    unchanged (``cv2.normalize`` would make it 0). One host copy for the minimum and
    maximum (``min_max``), then ``convert`` on the device.
    """
    return _normalized(ctx, img, _ranges(ctx, img, linked=linked), linked=linked)


def _ranges(ctx: Context, img: Image, part: Callable[[Any], Any] = _all, *, linked: bool = False,
            **_: Any) -> list[tuple[float, float]]:
    """The minimum and maximum of each channel (of ``part`` of the image), or of all channels when ``linked``."""
    return ctx.backend.min_max(part(img), ctx.info.channels, pooled=linked)


def _widest(partials: Sequence[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    return [pooled_ranges(channel)[0] for channel in zip(*partials, strict=True)]


def _normalized(ctx: Context, img: Image, ranges: list[tuple[float, float]], *, linked: bool) -> Image:
    be, spec = ctx.backend, ctx.info
    if linked:
        ranges = pooled_ranges(ranges)

    def stretched(plane: Image, lo: float, hi: float) -> Image:
        if not hi > lo or (lo, hi) == (0.0, spec.max_value):  # constant, or already the full range
            return plane
        alpha = spec.max_value / (hi - lo)
        out = be.convert(plane, spec.dtype, alpha, -lo * alpha)
        return be.clip(out, 0.0, 1.0) if spec.dtype == _F32 else out

    if len(ranges) == 1:
        return stretched(img, *ranges[0])
    return be.merge([stretched(p, lo, hi) for p, (lo, hi) in zip(be.split(img), ranges, strict=True)])


def _luma_plane(ctx: Context, img: Image) -> Image:
    return img if ctx.info.channels == 1 else ctx.backend.cvt_color(img, cv2.COLOR_BGR2GRAY)


def _otsu_value(ctx: Context, gray: Any) -> float:
    """Otsu's threshold of a native 1-channel image, in its units (float32: between 16-bit levels)."""
    return _otsu_of(_counts(ctx, gray, "per_channel"), ctx.info.dtype)


def _otsu_of(counts: np.ndarray, dtype: np.dtype) -> float:
    """Otsu's threshold from the histogram of a gray plane, in its units (float32: between 16-bit levels)."""
    level = otsu_level(counts[0])
    return float(level) if dtype != _F32 else (level + 0.5) / (FLOAT_LEVELS - 1)


@register(
    footprint=_two_pass(lambda *a, **p: _luma_counts(*a, **p), lambda *a, **p: _thresholded(*a, **p),
                        measures="a histogram of the luma"),
    category="histogram",
    summary="Black and white at Otsu's automatic threshold of the luminance.",
    params=[Param("invert", "bool", False, help="swap the outputs: pixels above the threshold become 0")],
)
def threshold_otsu(ctx: Context, img: Image, *, invert: bool) -> Image:
    """``out = full if Y > t else 0`` with Otsu's ``t`` (``cvfilters.filters.histogram.otsu_threshold``).

    ``t`` maximises the between-class variance ``w0 w1 (mu0 - mu1)^2`` of the levels
    ``<= t`` and ``> t`` of the BT.601 luma ``Y`` (the image itself if gray; float32:
    16-bit levels). Colour images get the binary result in B, G and R. One histogram
    (host statistics), then the ``threshold`` filter with ``value = t / full``.
    """
    return _thresholded(ctx, img, _luma_counts(ctx, img), invert=invert)


def _luma_counts(ctx: Context, img: Image, part: Callable[[Any], Any] = _all, **_: Any) -> np.ndarray:
    """The histogram of the levels of the luma, or of the gray image (of ``part`` of it)."""
    return _counts(ctx.with_info(channels=1), _luma_plane(ctx, img), "per_channel", part)


def _thresholded(ctx: Context, img: Image, counts: np.ndarray, *, invert: bool) -> Image:
    gray_ctx = ctx.with_info(channels=1)
    gray = _luma_plane(ctx, img)
    value = _otsu_of(counts, ctx.info.dtype) / ctx.info.max_value
    fixed = registry.get("threshold")
    binary = fixed.run(gray_ctx, gray, fixed.resolve({"value": min(value, 1.0), "invert": invert}))
    return binary if ctx.info.channels == 1 else ctx.backend.cvt_color(binary, cv2.COLOR_GRAY2BGR)


@register(
    footprint=square(lambda p, spec: p["block_size"] // 2 + 1),
    category="histogram",
    summary="Local threshold against the mean or Gaussian-weighted mean of each neighbourhood.",
    params=[
        Param("method", "choice", "gaussian", choices=("gaussian", "mean"),
              help="local mean: gaussian (weighted, sigma from the block size like OpenCV) or mean (box)"),
        Param("block_size", "int", 11, min=3, max=255, odd=True, unit="px",
              help="side of the square neighbourhood (odd)"),
        Param("c", "float", 0.01, min=-1.0, max=1.0, unit="fraction of full scale",
              help="subtracted from the local mean: a pixel is foreground where in > mean - c "
                   "(0.01 = 2.55 levels of 255)"),
        Param("invert", "bool", False, help="swap the outputs: foreground becomes 0"),
    ],
)
def adaptive_threshold(ctx: Context, img: Image, *, method: str, block_size: int, c: float, invert: bool) -> Image:
    """``out = full if Y > m(x, y) - c * full else 0`` (``invert``: the complement).

    ``m`` is the mean of the ``block_size`` square around each pixel (``mean``: box;
    ``gaussian``: Gaussian weights with OpenCV's sigma for the size) with replicated
    edges, computed in float32 and rounded to the image's levels for integer images:
    for uint8 this is
    ``cv2.adaptiveThreshold`` (ADAPTIVE_THRESH_MEAN_C / GAUSSIAN_C, THRESH_BINARY) bit
    for bit with ``C = c * 255``, and it extends to uint16 and float32. ``Y`` is the
    BT.601 luma for colour images, whose result is copied into B, G and R. Runs on the
    device (box or Gaussian, a difference, a threshold); no host statistics.
    """
    be, spec = ctx.backend, ctx.info
    gray = _luma_plane(ctx, img)
    values = gray if spec.dtype == _F32 else be.convert(gray, np.float32)
    size = (block_size, block_size)
    local = (be.box(values, size, cv2.BORDER_REPLICATE) if method == "mean"
             else be.gaussian(values, size, 0.0, cv2.BORDER_REPLICATE))
    if spec.dtype != _F32:  # the mean rounded to the image's levels, as OpenCV does
        local = be.convert(be.convert(local, spec.dtype), np.float32)
    margin = be.add_weighted(values, 1.0, local, -1.0, c * spec.max_value, dtype=np.float32)
    kind = cv2.THRESH_BINARY_INV if invert else cv2.THRESH_BINARY
    binary = be.convert(be.threshold(margin, 0.0, spec.max_value, kind), spec.dtype)
    return binary if spec.channels == 1 else be.cvt_color(binary, cv2.COLOR_GRAY2BGR)


def _paste(ctx: Context, img: Image, patch: Any, x: int, y: int, width: int, height: int) -> Image:
    """``img`` with the ``width`` x ``height`` region at (x, y) replaced by ``patch`` (crop and concat)."""
    be = ctx.backend
    full_w, full_h = ctx.info.size
    middle = [part for part in (be.crop(img, 0, y, x, height) if x else None, patch,
                                be.crop(img, x + width, y, full_w - x - width, height) if x + width < full_w else None)
              if part is not None]
    band = middle[0] if len(middle) == 1 else be.concat(middle, axis=1)
    rows = [part for part in (be.crop(img, 0, 0, full_w, y) if y else None, band,
                              be.crop(img, 0, y + height, full_w, full_h - y - height) if y + height < full_h else None)
            if part is not None]
    return rows[0] if len(rows) == 1 else be.concat(rows, axis=0)


@register(
    footprint=whole("draws the histogram of the whole image at one place of it"),
    category="histogram",
    summary="Draw the image's histogram as a translucent panel onto it (camera-style display).",
    params=[
        Param("position", "point", (1.0, 0.0), min=0.0, max=1.0, unit="fraction of free space",
              help="where the panel sits: [0,0] top-left, [1,0] top-right (default), [1,1] bottom-right, "
                   "[0.5,0.5] centred; the panel always stays inside the image"),
        Param("size", "point", (0.4, 0.3), min=0.01, max=1.0, unit="fraction of width, height",
              help="panel width and height (at least 1 px)"),
        Param("opacity", "float", 0.7, min=0.0, max=1.0,
              help="0 leaves the image unchanged, 1 replaces the panel area by the chart on black"),
        Param("log", "bool", False, help="bar heights on a log1p scale (shows small counts next to a spike)"),
    ],
)
def histogram_overlay(ctx: Context, img: Image, *, position: tuple[float, float], size: tuple[float, float],
                      opacity: float, log: bool) -> Image:
    """``out = (1 - opacity) * in + opacity * panel`` inside the panel, ``in`` elsewhere.

    The panel is black with each colour channel's histogram (B, G, R, or gray) filled
    in its own channel at full scale: ``min(256, panel width)`` bins (at least 2) over
    the full range, heights relative to the largest bin. It is
    ``round(size * (width, height))`` pixels, placed at ``round(position * (free
    space))``. One histogram (host statistics); the panel is drawn on the host,
    uploaded, and blended on the device.
    """
    be, spec = ctx.backend, ctx.info
    width = min(spec.width, max(1, round(size[0] * spec.width)))
    height = min(spec.height, max(1, round(size[1] * spec.height)))
    x = round(position[0] * (spec.width - width))
    y = round(position[1] * (spec.height - height))
    levels = img if spec.dtype != _F32 else be.convert(img, np.uint16, FLOAT_LEVELS - 1.0)
    host = ctx.backend.host_copy(levels, "calc_hist")
    counts = histogram(host, bins=max(2, min(256, width)))
    counts = counts if counts.ndim == 2 else counts[None, :]
    panel = histogram_panel(counts, width, height, log=log) * spec.max_value
    panel = panel[..., 0] if spec.channels == 1 else panel
    patch = be.add_weighted(be.crop(img, x, y, width, height), 1.0 - opacity, be.upload(panel.astype(spec.dtype)),
                            opacity)
    return _paste(ctx, img, patch, x, y, width, height)


__all__ = ["load_histogram", "otsu_threshold", "save_histogram"]
