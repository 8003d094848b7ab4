"""Tone filters: per-channel curves (levels, tone curve, gamma, exposure ...), run as lookup tables.

Every filter here is a :func:`~.color.point_filter`: a lookup table for uint8 and
uint16 on every backend (``Filter.table``), and for float32 either an exact device
form (``exposure``, ``brightness_contrast``, ``threshold``) or numpy on the host,
counted as a fallback off the cpu. Values, clipping, rounding and gray images follow
the conventions of :mod:`.color`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import cv2
import numpy as np

from cvfilters.core.context import Context
from cvfilters.filters.color import CHANNELS, Curve, point_filter
from cvfilters.registry.params import Param


def _per_channel(curve: Curve, channel: str) -> list[Curve | None]:
    if channel == "all":
        return [curve]
    return [curve if c == channel else None for c in CHANNELS]


def channel_param() -> Param:
    """The ``channel`` parameter of curve filters."""
    return Param("channel", "choice", "all", choices=("all", *CHANNELS),
                 help="apply to all colour channels or to one (b, g or r); on gray images see `info levels`")


def levels_curve(in_black: float, in_white: float, gamma: float, out_black: float, out_white: float) -> Curve:
    """The curve of ``levels`` on normalised values."""

    def curve(v: np.ndarray) -> np.ndarray:
        t = np.clip((v - in_black) / (in_white - in_black), 0.0, 1.0)
        return out_black + (out_white - out_black) * t ** (1.0 / gamma)

    return curve


def pchip(points: Sequence[Sequence[float]]) -> Curve:
    """Monotone cubic (Fritsch-Carlson / PCHIP) interpolation through ``points`` ``[[x, y], ...]``.

    ``x`` must increase strictly. Between control points the curve is a cubic Hermite
    spline whose slopes are the weighted harmonic means of the neighbouring secant
    slopes (0 at local extrema), so it never overshoots and is monotone wherever the
    points are; end slopes use the one-sided three-point rule (scipy's
    ``PchipInterpolator``). Two points give a straight line. Outside ``[x0, xn]`` the
    end values are held.
    """
    xy = np.asarray(points, dtype=np.float64)
    x, y = xy[:, 0], xy[:, 1]
    h = np.diff(x)
    delta = np.diff(y) / h
    slopes = np.full(len(x), delta[0])
    if len(x) > 2:
        w1, w2 = 2 * h[1:] + h[:-1], h[1:] + 2 * h[:-1]
        same_sign = np.sign(delta[:-1]) * np.sign(delta[1:]) > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = (w1 + w2) / (w1 / delta[:-1] + w2 / delta[1:])
        slopes[1:-1] = np.where(same_sign, mean, 0.0)
        slopes[0] = _end_slope(h[0], h[1], delta[0], delta[1])
        slopes[-1] = _end_slope(h[-1], h[-2], delta[-1], delta[-2])

    def curve(v: np.ndarray) -> np.ndarray:
        t = np.clip(np.asarray(v, dtype=np.float64), x[0], x[-1])
        k = np.clip(np.searchsorted(x, t, side="right") - 1, 0, len(x) - 2)
        hk = h[k]
        s = (t - x[k]) / hk
        return ((1 + 2 * s) * (1 - s) ** 2 * y[k] + s * (1 - s) ** 2 * hk * slopes[k]
                + s * s * (3 - 2 * s) * y[k + 1] + s * s * (s - 1) * hk * slopes[k + 1])

    return curve


def _end_slope(h0: float, h1: float, m0: float, m1: float) -> float:
    slope = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    if np.sign(slope) != np.sign(m0):
        return 0.0
    if np.sign(m0) != np.sign(m1) and abs(slope) > abs(3 * m0):
        return 3 * m0
    return slope


# ---------------------------------------------------------------- float32 device forms
def _float_scale(ctx: Context, img: Any, alpha: float, beta: float) -> Any:
    return ctx.backend.clip(ctx.backend.convert(img, np.float32, alpha, beta), 0.0, 1.0)


# ---------------------------------------------------------------- filters
def _check_levels(params: dict[str, Any]) -> str | None:
    if params["in_white"] <= params["in_black"]:
        return f"in_white={params['in_white']:g} must be above in_black={params['in_black']:g}"
    return None


levels = point_filter(
    "levels",
    lambda p, full: _per_channel(levels_curve(p["in_black"], p["in_white"], p["gamma"], p["out_black"],
                                              p["out_white"]), p["channel"]),
    category="tone",
    summary="Input/output levels with a midtone gamma, on all channels or one.",
    params=[
        # Defaults: a mild stretch, ImageMagick's `-level 5%,95%` (0 and 1 leave the image unchanged).
        Param("in_black", "float", 0.05, min=0.0, max=0.99, unit="fraction of full scale",
              help="input value mapped to out_black (and everything below it)"),
        Param("in_white", "float", 0.95, min=0.01, max=1.0, unit="fraction of full scale",
              help="input value mapped to out_white (and everything above it); above in_black"),
        Param("gamma", "float", 1.0, min=0.1, max=10.0,
              help="midtone gamma: above 1 brightens, below 1 darkens (the exponent is 1/gamma)"),
        Param("out_black", "float", 0.0, min=0.0, max=1.0, unit="fraction of full scale",
              help="darkest output value"),
        Param("out_white", "float", 1.0, min=0.0, max=1.0, unit="fraction of full scale",
              help="brightest output value; below out_black inverts"),
        channel_param(),
    ],
    check=_check_levels,
    description="""``t = clip((in - in_black) / (in_white - in_black), 0, 1)``;
    ``out = out_black + (out_white - out_black) * t ^ (1 / gamma)``.

    Values are fractions of full scale (Photoshop's 0..255 levels divided by 255). With
    ``channel=b|g|r`` only that channel changes. Gray images act as (v, v, v) reduced to
    BT.601 luma: ``all`` applies the curve, one channel mixes it in by that channel's
    luma weight. Runs as a lookup table (uint8/uint16).""",
)


def _check_points(params: dict[str, Any]) -> str | None:
    points = np.asarray(params["points"], dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 2 or len(points) < 2:
        return "points must be at least 2 [x, y] pairs, e.g. [[0,0],[0.5,0.6],[1,1]]"
    if points.min() < 0 or points.max() > 1:
        return "points must have x and y between 0 and 1"
    if np.any(np.diff(points[:, 0]) <= 0):
        return "points must have strictly increasing x"
    return None


tone_curve = point_filter(
    "tone_curve", lambda p, full: _per_channel(pchip(p["points"]), p["channel"]),
    category="tone",
    summary="Tone curve through control points (monotone cubic), on all channels or one.",
    params=[
        # Default: a gentle S (contrast) curve; [[0,0],[1,1]] is the identity.
        Param("points", "kernel", ((0.0, 0.0), (0.25, 0.2), (0.75, 0.85), (1.0, 1.0)),
              unit="fraction of full scale",
              help="control points [[x,y],...] (x input, y output, 0..1, x increasing), "
                   "e.g. [[0,0],[0.25,0.2],[0.75,0.85],[1,1]] (the default S curve; [[0,0],[1,1]] is the "
                   "identity) or @curve.csv (rows x,y)"),
        channel_param(),
    ],
    check=_check_points,
    description="""``out = C(in)``: C passes through every control point ``[x, y]`` and
    interpolates them with a monotone cubic (Fritsch-Carlson PCHIP): it does not
    overshoot, and is monotone wherever the points are. Below the first and above the
    last x, the end y is held. ``channel`` and gray images as in ``levels``. Runs as a
    lookup table (uint8/uint16).""",
)

gamma = point_filter(
    "gamma", lambda p, full: [lambda v: v ** (1.0 / p["gamma"])],
    category="tone",
    summary="Gamma correction: out = in ^ (1 / gamma); gamma above 1 brightens.",
    # Default: CIGammaAdjust's default inputPower 0.75, i.e. out = in ^ 0.75.
    params=[Param("gamma", "float", 1.0 / 0.75, min=0.1, max=10.0,
                  help="above 1 brightens midtones, below 1 darkens them; 1 = unchanged; the default 1/0.75 "
                       "is Core Image's CIGammaAdjust power 0.75")],
    description="""``out = in ^ (1 / gamma)`` on values normalised to 0..1.

    The photo-editor meaning (Photoshop/GIMP levels midtone): ``gamma=2.2`` brightens
    like decoding to display, ``1/2.2`` darkens. Black and white stay fixed. Runs as a
    lookup table (uint8/uint16).""",
)

exposure = point_filter(
    "exposure", lambda p, full: [lambda v: v * 2.0 ** p["ev"]],
    category="tone",
    summary="Exposure in stops: out = in * 2 ^ ev.",
    # Default: half a stop brighter (Core Image's CIExposureAdjust EV 0.5); 0 = unchanged.
    params=[Param("ev", "float", 0.5, min=-10.0, max=10.0, unit="EV (stops)",
                  help="+1 doubles every value, -1 halves it, 0 leaves the image; results clip at full scale")],
    float_device=lambda ctx, img, *, ev: _float_scale(ctx, img, 2.0 ** ev, 0.0),
    description="""``out = clip(in * 2 ^ ev, 0, full)``, linear in the stored values (no
    gamma decoding). Runs as a lookup table (uint8/uint16) and on the device for float32.""",
)


def _brightness_contrast_curves(p: Mapping[str, Any], full: float) -> list[Curve]:
    contrast, offset = p["contrast"], p["brightness"] * full / 255.0
    if full == 1.0:
        return [lambda v: v * contrast + offset]

    def curve(v: np.ndarray) -> np.ndarray:
        # OpenCV's convertScaleAbs arithmetic: float32 operands, one fused multiply-add
        # (the product of two float32 values is exact in float64), rounded to float32.
        x = np.rint(v * full).astype(np.float32).astype(np.float64)
        fused = x * float(np.float32(contrast)) + float(np.float32(offset))
        return fused.astype(np.float32).astype(np.float64) / full

    return [curve]


brightness_contrast = point_filter(
    "brightness_contrast", _brightness_contrast_curves,
    category="tone",
    summary="out = in * contrast + brightness (cv2.convertScaleAbs for uint8), saturated.",
    params=[
        # Defaults: contrast 1.2 pivoting on mid-grey (-0.1 x 255 offsets the gain), as
        # CIColorControls' contrast does; brightness=0, contrast=1 leave the image unchanged.
        Param("brightness", "float", -25.5, min=-255.0, max=255.0, unit="8-bit levels",
              help="added after the contrast gain; in 0..255 units (x257 for uint16, /255 for float32); "
                   "the default -25.5 keeps mid-grey fixed under the default contrast"),
        Param("contrast", "float", 1.2, min=0.0, max=10.0,
              help="gain around 0 (black stays black when brightness=0); 1 = unchanged"),
    ],
    float_device=lambda ctx, img, *, brightness, contrast: _float_scale(ctx, img, contrast, brightness / 255.0),
    description="""``out = saturate(in * contrast + brightness * full / 255)``.

    For uint8 this is ``cv2.convertScaleAbs(img, alpha=contrast, beta=brightness)``
    bit for bit wherever ``in * contrast + brightness >= 0`` (convertScaleAbs takes the
    absolute value of negative results; this filter clips them to 0). The table is
    computed with OpenCV's float32 arithmetic. Runs as a lookup table (uint8/uint16)
    and on the device for float32.""",
)


def _posterize_curve(levels: int) -> Curve:
    def curve(v: np.ndarray) -> np.ndarray:
        # float64, and an epsilon so exact bin edges (v * levels a whole number) do not floor down on rounding error.
        scaled = np.asarray(v, dtype=np.float64) * levels + 1e-9
        return np.minimum(np.floor(scaled), levels - 1) / (levels - 1)

    return curve


posterize = point_filter(
    "posterize", lambda p, full: [_posterize_curve(p["levels"])],
    category="tone",
    summary="Reduce each channel to a number of evenly spaced levels.",
    params=[Param("levels", "int", 4, min=2, max=256,
                  help="output levels per channel, 0 and full scale included; 2 = black or white")],
    description="""``out = min(floor(in * levels), levels - 1) / (levels - 1)``.

    The input range is cut into ``levels`` equal bins, mapped to evenly spaced values
    from 0 to full scale (GPUImage's posterize with full-range output). ``levels=256``
    leaves uint8 unchanged. Runs as a lookup table (uint8/uint16).""",
)

solarize = point_filter(
    "solarize", lambda p, full: [lambda v: np.where(np.asarray(v, dtype=np.float64) >= p["threshold"], 1.0 - v, v)],
    category="tone",
    summary="Invert the values at or above a threshold (Sabattier effect).",
    params=[Param("threshold", "float", 0.5, min=0.0, max=1.0, unit="fraction of full scale",
                  help="values at or above it are inverted; 0 inverts everything, 1 only full scale")],
    description="""``out = max - in`` where ``in >= threshold * max``, else ``out = in``
    (Pillow's ``ImageOps.solarize``). Runs as a lookup table (uint8/uint16).""",
)


def _threshold_device(ctx: Context, img: Any, *, value: float, invert: bool) -> Any:
    return ctx.backend.threshold(img, value, 1.0, cv2.THRESH_BINARY_INV if invert else cv2.THRESH_BINARY)


threshold = point_filter(
    "threshold",
    lambda p, full: [lambda v: (v <= p["value"]) if p["invert"] else (v > p["value"])],
    category="tone",
    summary="Binary threshold per channel at a fraction of full scale.",
    params=[
        Param("value", "float", 0.5, min=0.0, max=1.0, unit="fraction of full scale",
              help="values above it become full scale, the others 0"),
        Param("invert", "bool", False, help="swap the outputs: above the value becomes 0"),
    ],
    float_device=_threshold_device,
    description="""``out = max if in > value * max else 0`` per channel (``cv2.THRESH_BINARY``;
    ``invert=true`` is ``THRESH_BINARY_INV``). Colour channels are thresholded
    independently; use ``grayscale`` first for a black-and-white result. Runs as a
    lookup table (uint8/uint16) and on the device for float32.""",
)
