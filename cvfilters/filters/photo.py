"""Photo adjustments: white balance, temperature and tint, vibrance, highlights and shadows, denoise.

None of these has a backend primitive (they are OpenCV's xphoto and photo algorithms,
or per-pixel formulas across channels with powers and maxima), so each runs on the
host through the counted ``Backend.on_host`` (one download and one upload per step on a
device backend, shown by ``--explain``). Every one takes uint8, uint16 and float32
(0..1) and 1, 3 or 4 channels (alpha passes through); the exact handling of each depth
is in each filter's description.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from cvfilters.core.context import Context
from cvfilters.core.pixels import LUMA_BGR, full_scale
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import POINT, square, whole
from cvfilters.registry.params import Param


def _host(ctx: Context, img: Any, compute: Callable[[np.ndarray], np.ndarray], label: str) -> Any:
    """``compute`` on a host copy shaped (H, W) or (H, W, C), the result in the input's dtype."""
    spec = ctx.info

    def run(host: np.ndarray) -> np.ndarray:
        shape = (spec.height, spec.width) if spec.channels == 1 else (spec.height, spec.width, spec.channels)
        return np.ascontiguousarray(compute(np.ascontiguousarray(host.reshape(shape))))  # xphoto needs contiguous

    return ctx.backend.on_host(img, run, label)


def to_unit(array: np.ndarray) -> np.ndarray:
    """float64 values normalised to 0..1 (uint8 / 255, uint16 / 65535, float32 as is)."""
    return array.astype(np.float64) / full_scale(array.dtype)


def from_unit(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """0..1 values clipped and stored as ``dtype`` (integers rounded half to even)."""
    values = np.clip(values, 0.0, 1.0)
    if np.dtype(dtype).kind == "u":
        return np.rint(values * full_scale(dtype)).astype(dtype)
    return values.astype(dtype)


def to_uint16(array: np.ndarray) -> np.ndarray:
    """A uint16 copy for algorithms without float32 support (float32 0..1 -> 0..65535, rounded)."""
    return array if array.dtype == np.uint16 else from_unit(to_unit(array), np.dtype(np.uint16))


# ------------------------------------------------------------------ white balance
def _balance(bgr: np.ndarray, method: str, saturation: float | None, percent: float) -> np.ndarray:
    xphoto = cv2.xphoto
    if method == "simple":
        # SimpleWB takes uint8 and float32 (not uint16): deeper images are balanced in float32.
        values = bgr if bgr.dtype == np.uint8 else to_unit(bgr).astype(np.float32)
        wb = xphoto.createSimpleWB()
        wb.setP(percent)
        if values.dtype == np.float32:
            wb.setInputMax(1.0)
            wb.setOutputMax(1.0)
        out = wb.balanceWhite(values)
        return out if bgr.dtype == np.uint8 else from_unit(out.astype(np.float64), bgr.dtype)
    values = bgr if bgr.dtype == np.uint8 else to_uint16(bgr)
    estimator: Any = xphoto.createGrayworldWB() if method == "grayworld" else xphoto.createLearningBasedWB()
    if method == "learning" and values.dtype == np.uint16:
        estimator.setRangeMaxVal(65535)
    if saturation is not None:
        estimator.setSaturationThreshold(saturation)
    out = estimator.balanceWhite(values)
    return out if out.dtype == bgr.dtype else from_unit(to_unit(out), bgr.dtype)


@register(
    footprint=whole("the white point is estimated from the whole image"),
    category="photo",
    summary="Automatic white balance: gray world, simple stretch or learning-based (OpenCV xphoto).",
    params=[
        Param("method", "choice", "simple", choices=("simple", "grayworld", "learning"),
              help="simple: stretch each channel between its percentiles (GIMP's auto white balance; keeps a white "
                   "cup on a warm table white); grayworld: scale B, G, R so their means agree (turns scenes of one "
                   "dominant colour towards its complement); learning: OpenCV's learned illuminant estimate"),
        Param("saturation", "float", None, min=0.0, max=1.0, unit="fraction",
              help="grayworld and learning: pixels more saturated than this are left out of the estimate; "
                   "automatic: OpenCV's defaults, 0.9 (grayworld) and 0.98 (learning)"),
        Param("percent", "float", 2.0, min=0.0, max=49.0, unit="%",
              help="simple: share of the darkest and brightest values of each channel clipped before the stretch"),
    ],
)
def white_balance(ctx: Context, img: Any, *, method: str, saturation: float | None, percent: float) -> Any:
    """``cv2.xphoto``'s ``SimpleWB`` (the default), ``GrayworldWB`` or ``LearningBasedWB`` on the colour channels.

    The default is the stretch photo tools use for "auto white balance" (GIMP's Colors >
    Auto > White Balance): the gray-world assumption fails on scenes dominated by one
    colour (a white cup on a warm wooden table turns blue), the stretch does not.

    - grayworld: the gains make the channel means of the pixels whose saturation
      ``(max - min) / max`` is below ``saturation`` equal (the gray-world assumption);
    - simple: each channel is stretched linearly so that its ``percent`` % darkest
      values become 0 and its ``percent`` % brightest full scale;
    - learning: the illuminant is estimated by OpenCV's pre-trained model and divided out.

    uint8 and uint16 run as they are (simple: uint16 in float32), float32 goes through
    uint16 (1/65535 steps). Gray (1-channel) images have no colour cast and are
    returned unchanged. Host only (no backend primitive): counted off the cpu.
    """
    if ctx.info.channels == 1:
        return img
    return _host(ctx, img, lambda bgr: _balance(bgr, method, saturation, percent), "white_balance (xphoto on host)")


# ------------------------------------------------------------------ temperature and tint
# Robertson's isotemperature lines (Wyszecki & Stiles, Color Science, 2nd ed., table 1(3.11)):
# reciprocal megakelvin r, CIE 1960 (u, v) of the Planckian locus, slope t of the isotherm.
# Row 325 carries u = 0.24792 (the published table's misprint 0.24702 corrected).
ROBERTSON = np.array([
    (0, 0.18006, 0.26352, -0.24341), (10, 0.18066, 0.26589, -0.25479), (20, 0.18133, 0.26846, -0.26876),
    (30, 0.18208, 0.27119, -0.28539), (40, 0.18293, 0.27407, -0.30470), (50, 0.18388, 0.27709, -0.32675),
    (60, 0.18494, 0.28021, -0.35156), (70, 0.18611, 0.28342, -0.37915), (80, 0.18740, 0.28668, -0.40955),
    (90, 0.18880, 0.28997, -0.44278), (100, 0.19032, 0.29326, -0.47888), (125, 0.19462, 0.30141, -0.58204),
    (150, 0.19962, 0.30921, -0.70471), (175, 0.20525, 0.31647, -0.84901), (200, 0.21142, 0.32312, -1.0182),
    (225, 0.21807, 0.32909, -1.2168), (250, 0.22511, 0.33439, -1.4512), (275, 0.23247, 0.33904, -1.7298),
    (300, 0.24010, 0.34308, -2.0637), (325, 0.24792, 0.34655, -2.4681), (350, 0.25591, 0.34951, -2.9641),
    (375, 0.26400, 0.35200, -3.5814), (400, 0.27218, 0.35407, -4.3633), (425, 0.28039, 0.35577, -5.3762),
    (450, 0.28863, 0.35714, -6.7262), (475, 0.29685, 0.35823, -8.5955), (500, 0.30505, 0.35907, -11.324),
    (525, 0.31320, 0.35968, -15.628), (550, 0.32129, 0.36011, -23.325), (575, 0.32931, 0.36038, -40.770),
    (600, 0.33724, 0.36051, -116.45),
])
TINT_SCALE = 3000.0  # tint units per unit of (u, v) distance along the isotherm (Adobe's DNG/Lightroom scale)
# Bradford cone response and linear sRGB (D65) -> XYZ.
BRADFORD = np.array([[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]])
SRGB_TO_XYZ = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                        [0.0193339, 0.1191920, 0.9503041]])


def white_xy(temperature: float, tint: float) -> tuple[float, float]:
    """CIE 1931 ``(x, y)`` of a white of correlated colour ``temperature`` (K) shifted by ``tint``.

    Robertson's method: the point on the Planckian locus interpolated in reciprocal
    temperature, moved ``tint / 3000`` along the (interpolated, unit) isotherm;
    positive tint moves it to the green side, so correcting for it turns a picture
    magenta (Lightroom's convention).
    """
    r = 1.0e6 / temperature
    i = int(np.clip(np.searchsorted(ROBERTSON[:, 0], r, side="right") - 1, 0, len(ROBERTSON) - 2))
    (r0, u0, v0, t0), (r1, u1, v1, t1) = ROBERTSON[i], ROBERTSON[i + 1]
    f = (r - r0) / (r1 - r0)
    u, v = u0 + f * (u1 - u0), v0 + f * (v1 - v0)
    d0, d1 = np.array([1.0, t0]) / np.hypot(1.0, t0), np.array([1.0, t1]) / np.hypot(1.0, t1)
    direction = d0 + f * (d1 - d0)
    du, dv = direction / np.hypot(*direction)
    u, v = u - du * tint / TINT_SCALE, v - dv * tint / TINT_SCALE
    return 1.5 * u / (u - 4.0 * v + 2.0), v / (u - 4.0 * v + 2.0)


@lru_cache(maxsize=64)
def temperature_matrix(temperature: float, tint: float, target_temperature: float, target_tint: float) -> np.ndarray:
    """3 x 3 linear-sRGB matrix (RGB order) taking the white ``(temperature, tint)`` to the target white.

    Bradford chromatic adaptation: ``M = S^-1 B^-1 diag(B w_target / B w_source) B S``,
    S linear sRGB to XYZ, B the Bradford cone matrix, w the XYZ (Y = 1) of each white.
    """
    def xyz(temp: float, shift: float) -> np.ndarray:
        x, y = white_xy(temp, shift)
        return np.array([x / y, 1.0, (1.0 - x - y) / y])

    gains = (BRADFORD @ xyz(target_temperature, target_tint)) / (BRADFORD @ xyz(temperature, tint))
    adapt = np.linalg.solve(BRADFORD, np.diag(gains) @ BRADFORD)
    matrix = np.linalg.solve(SRGB_TO_XYZ, adapt @ SRGB_TO_XYZ)
    matrix.setflags(write=False)
    return matrix


def srgb_decode(v: np.ndarray) -> np.ndarray:
    """sRGB transfer function, encoded 0..1 -> linear light."""
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def srgb_encode(v: np.ndarray) -> np.ndarray:
    """Linear light 0..1 -> sRGB encoded (the inverse of :func:`srgb_decode`)."""
    v = np.clip(v, 0.0, 1.0)
    return np.where(v <= 0.0031308, v * 12.92, 1.055 * v ** (1 / 2.4) - 0.055)


def _as_colour(values: np.ndarray) -> tuple[np.ndarray, bool]:
    return (np.repeat(values[..., None], 3, axis=2), True) if values.ndim == 2 else (values, False)


def _as_input(values: np.ndarray, gray: bool) -> np.ndarray:
    return values @ LUMA_BGR if gray else values


@register(
    footprint=POINT,
    category="photo",
    summary="Temperature and tint: adapt the white of a scene to another white (Core Image's CITemperatureAndTint).",
    params=[
        # Default: treat the scene's white as 8000 K and show it as 6500 K: a warming look.
        Param("temperature", "float", 8000.0, min=1700.0, max=50000.0, unit="K",
              help="colour temperature of the picture's white (Core Image's neutral); above target_temperature "
                   "warms the picture, below cools it; equal to target_temperature (and tint equal to "
                   "target_tint) leaves it unchanged"),
        Param("tint", "float", 0.0, min=-150.0, max=150.0,
              help="green-magenta shift of the picture's white, Lightroom's units: positive turns the picture "
                   "magenta, negative green"),
        Param("target_temperature", "float", 6500.0, min=1700.0, max=50000.0, unit="K",
              help="the white it becomes (Core Image's targetNeutral); 6500 K is about the display's white"),
        Param("target_tint", "float", 0.0, min=-150.0, max=150.0, help="tint of the target white"),
    ],
)
def temperature_tint(ctx: Context, img: Any, *, temperature: float, tint: float, target_temperature: float,
                     target_tint: float) -> Any:
    """Chromatic adaptation in linear light from the white ``(temperature, tint)`` to the target white.

    Each white is the CIE xy of Robertson's isotemperature lines (the Planckian locus,
    moved ``tint / 3000`` along the isotherm: Adobe's and Lightroom's temperature/tint
    model); the pixel, decoded from sRGB to linear light, is multiplied by the Bradford
    adaptation matrix between the two whites (:func:`temperature_matrix`), clipped and
    encoded back. As in CITemperatureAndTint, ``neutral`` is the picture's white and
    ``targetNeutral`` the white it is shown as. Gray (1-channel) images become the
    BT.601 luma of the result. Host only (no backend primitive): counted off the cpu.
    """
    matrix = temperature_matrix(temperature, tint, target_temperature, target_tint)
    bgr_matrix = matrix[::-1, ::-1]

    def compute(host: np.ndarray) -> np.ndarray:
        colour, gray = _as_colour(to_unit(host))
        linear = srgb_decode(colour) @ bgr_matrix.T
        return from_unit(_as_input(srgb_encode(linear), gray), host.dtype)

    return _host(ctx, img, compute, "temperature_tint (linear light on host)")


# ------------------------------------------------------------------ vibrance
@register(
    footprint=POINT,
    category="photo",
    summary="Vibrance: raise the saturation of muted colours more than of vivid ones.",
    params=[
        Param("amount", "float", 0.5, min=-1.0, max=1.0,
              help="positive boosts muted colours most, negative mutes them; 0 leaves the image unchanged"),
    ],
)
def vibrance(ctx: Context, img: Any, *, amount: float) -> Any:
    """``out = Y + (in - Y) * (1 + amount * (1 - s))`` per pixel, clipped.

    ``Y`` is the BT.601 luma and ``s = max(B, G, R) - min(B, G, R)`` the pixel's chroma
    (0 for grays, 1 for pure primaries), so the saturation gain falls from
    ``1 + amount`` on nearly gray pixels to 1 on fully saturated ones: muted colours
    gain most and skin and sky tones do not clip (the idea of Core Image's CIVibrance and
    Photoshop's vibrance). Grays are unchanged; gray (1-channel) images are returned as
    they are. Host only: counted off the cpu.
    """
    if ctx.info.channels == 1:
        return img

    def compute(host: np.ndarray) -> np.ndarray:
        colour = to_unit(host)
        luma = (colour @ LUMA_BGR)[..., None]
        chroma = (colour.max(axis=2) - colour.min(axis=2))[..., None]
        return from_unit(luma + (colour - luma) * (1.0 + amount * (1.0 - chroma)), host.dtype)

    return _host(ctx, img, compute, "vibrance (on host)")


# ------------------------------------------------------------------ highlights and shadows
def tone_luma(y: np.ndarray, shadows: float, highlights: float) -> np.ndarray:
    """The new luma of :func:`highlights_shadows` for luma ``y`` (0..1)."""
    lift = np.clip(y ** (1.0 / (shadows + 1.0)) - 0.76 * y ** (2.0 / (shadows + 1.0)) - y, 0.0, 1.0)
    inverse = 1.0 - y
    cut = np.clip(1.0 - (inverse ** (1.0 / (2.0 - highlights)) - 0.8 * inverse ** (2.0 / (2.0 - highlights))) - y,
                  -1.0, 0.0)
    return y + lift + cut


@register(
    footprint=POINT,
    category="photo",
    summary="Lighten the shadows and darken the highlights, keeping the colours (GPUImage's highlight/shadow).",
    params=[
        Param("shadows", "float", 0.5, min=0.0, max=1.0,
              help="lightens dark tones; 0 leaves them (Core Image's CIHighlightShadowAdjust shadowAmount)"),
        Param("highlights", "float", 0.7, min=0.0, max=1.0,
              help="below 1 darkens bright tones; 1 leaves them (CIHighlightShadowAdjust highlightAmount)"),
    ],
)
def highlights_shadows(ctx: Context, img: Any, *, shadows: float, highlights: float) -> Any:
    """GPUImage's GPUImageHighlightShadowFilter curves on the BT.601 luma ``Y``; colour scaled to follow.

    ``lift = clip(Y^(1/(s+1)) - 0.76 Y^(2/(s+1)) - Y, 0, 1)``,
    ``cut = clip(1 - ((1-Y)^(1/(2-h)) - 0.8 (1-Y)^(2/(2-h))) - Y, -1, 0)``,
    ``Y' = Y + lift + cut`` and ``out = in * Y' / Y`` (``Y'`` where ``Y = 0``), clipped.
    ``shadows=0, highlights=1`` is the identity. Host only: counted off the cpu.
    """
    def compute(host: np.ndarray) -> np.ndarray:
        colour = to_unit(host)
        y = colour if colour.ndim == 2 else colour @ LUMA_BGR
        new = tone_luma(y, shadows, highlights)
        gain = np.divide(new, y, out=np.ones_like(y), where=y > 1e-9)
        out = colour * (gain if colour.ndim == 2 else gain[..., None])
        dark = y <= 1e-9
        out[dark] = new[dark][..., None] if colour.ndim == 3 else new[dark]
        return from_unit(out, host.dtype)

    return _host(ctx, img, compute, "highlights_shadows (on host)")


# ------------------------------------------------------------------ denoise
def _denoise(host: np.ndarray, strength: float, color_strength: float, template: int, search: int) -> np.ndarray:
    if host.dtype == np.uint8:
        if host.ndim == 3:
            return cv2.fastNlMeansDenoisingColored(host, None, strength, color_strength, template, search)
        return cv2.fastNlMeansDenoising(host, None, strength, template, search)
    deep = to_uint16(host)
    out = cv2.fastNlMeansDenoising(deep, [strength * 257.0], None, template, search, cv2.NORM_L1)
    return out if host.dtype == np.uint16 else to_unit(out).astype(host.dtype)


@register(
    footprint=square(lambda p, spec: p["template"] // 2 + p["search"] // 2 + 1),
    category="photo",
    summary="Non-local means denoising (cv2.fastNlMeansDenoising / Colored), uint8 and uint16.",
    params=[
        # Defaults: OpenCV's documented h = hColor = 10, template 7, search 21.
        Param("strength", "float", 10.0, min=0.0, max=100.0, unit="8-bit levels",
              help="filter strength h: larger removes more noise and more detail (x257 for 16-bit)"),
        Param("color_strength", "float", 10.0, min=0.0, max=100.0, unit="8-bit levels",
              help="uint8 colour: strength on the colour (chroma) channels"),
        Param("template", "int", 7, min=3, max=21, odd=True, unit="px", help="side of the patches compared"),
        Param("search", "int", 21, min=3, max=63, odd=True, large=35, unit="px",
              help="side of the window searched for similar patches (time grows with its square)"),
    ],
)
def denoise(ctx: Context, img: Any, *, strength: float, color_strength: float, template: int, search: int) -> Any:
    """Non-local means: each pixel becomes the weighted mean of the pixels whose surrounding patches look alike.

    uint8: ``cv2.fastNlMeansDenoisingColored(h=strength, hColor=color_strength)`` for
    colour (in CIE Lab), ``cv2.fastNlMeansDenoising`` for gray. uint16: the ``NORM_L1``
    variant of ``cv2.fastNlMeansDenoising`` (OpenCV's only 16-bit form), with
    ``h = 257 strength`` on all colour channels together; float32 goes through uint16.
    Alpha passes through. Host only (no backend primitive): counted off the cpu.
    """
    return _host(ctx, img, lambda host: _denoise(host, strength, color_strength, template, search),
                 "denoise (non-local means on host)")


__all__ = ["denoise", "highlights_shadows", "temperature_matrix", "temperature_tint", "tone_luma", "vibrance",
           "white_balance", "white_xy"]
