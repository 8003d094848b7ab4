"""Feathering and vignettes: soft, position-dependent masks (masked filtering and blends: :mod:`.blend`).

Conventions of the family
-------------------------
- Positions (``center``) are fractions of the image width and height; ``[0.5,0.5]`` is
  the centre. Formulas are evaluated at pixel centres ``(x + 0.5, y + 0.5)``.
- Radii of radial effects (``vignette``, ``feather:mode=radial``, ``vignette_effect`` in
  the core_image style) are fractions of the half-diagonal ``0.5 * sqrt(W^2 + H^2)``:
  1 reaches the corners. The GPUImage style keeps GPUImage's texture coordinates.
- Edge widths and feather radii (``feather:mode=edges``, ``feather_mask``, the
  ``feather`` of ``masked`` and ``blend``) are in pixels.
- Colours are fractions of full scale in OpenCV's order: one value for every channel
  (alpha included on BGRA images, as the warp ``fill``), ``[gray, alpha]``, ``[B,G,R]``
  (opaque) or ``[B,G,R,A]``; a gray image uses the BT.601 luma of a BGR colour. On
  images without alpha, an explicit colour alpha is an opacity.
- Masks (``mask=``) are image files or shape texts, see :mod:`cvfilters.filters.masks`.

Every mask, weight and constant colour plane is built on the host once per image size
and parameters and kept on the device (``ctx.backend.cached``); per image, only device
arithmetic runs (multiply, add_weighted, divide, threshold, and the sub-pipeline).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import cv2
import numpy as np

from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.pixels import premultiply, split_color, unpremultiply
from cvfilters.core.types import FeatherMethod, Image
from cvfilters.engine.sampling import center_coords
from cvfilters.filters import masks
from cvfilters.filters._shared.common import center_param
from cvfilters.filters.masks import FEATHER_METHODS, feather_param, once, replicate
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import Footprint, Positional, Rect, Window, whole
from cvfilters.registry.params import Param

FALLOFFS = ("linear", "smoothstep")
_F32 = np.dtype(np.float32)


# ---------------------------------------------------------------------------- shared helpers
def smoothstep(edge0: float, edge1: float, x: np.ndarray) -> np.ndarray:
    """GLSL ``smoothstep``: ``t^2 (3 - 2t)`` with ``t = clip((x - edge0) / (edge1 - edge0), 0, 1)``.

    ``edge1 < edge0`` gives the mirrored ramp (as GPUs compute it); equal edges a step at ``edge0``.
    """
    if edge1 == edge0:
        return (x >= edge0).astype(np.float64)
    t = np.clip((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def falloff_curve(t: np.ndarray, falloff: str) -> np.ndarray:
    """``t`` (0..1) through the falloff: linear ``t`` or smoothstep ``3t^2 - 2t^3``."""
    return t if falloff == "linear" else t * t * (3.0 - 2.0 * t)


def _scaled_mix(ctx: Context, img: Image, key: Hashable, planes: Callable[[], tuple[np.ndarray, np.ndarray]]) -> Image:
    """``img * keep + add * full_scale`` on the device, ``(keep, add) = planes()`` built once per key.

    ``img`` has the colour channels of ``ctx.info`` (1 or 3); ``keep`` is (H, W) and ``add``
    (H, W, C), both in 0..1; ``planes`` only runs when the device copies are not cached.
    """
    be, spec = ctx.backend, ctx.info
    c = spec.channels
    shape = (spec.height, spec.width) if c == 1 else (spec.height, spec.width, c)
    keep_dev = be.cached((key, "keep", c), lambda: replicate(planes()[0].astype(np.float32), c))
    add_dev = be.cached((key, "add", c, spec.dtype.str), lambda: np.ascontiguousarray(
        (planes()[1] * spec.max_value).astype(np.float32).reshape(shape)))
    return be.add_weighted(be.multiply(img, keep_dev, dtype=_F32), 1.0, add_dev, 1.0, dtype=spec.dtype)


def _toward_color(ctx: Context, img: Image, key: Hashable, amount: Callable[[], np.ndarray],
                  color: tuple[float, ...]) -> Image:
    """``img + a * (colour - img)`` with ``a = amount() * colour alpha`` for 1- or 3-channel images."""
    values, alpha = split_color(color, ctx.info.channels, bgra=False)

    @once
    def planes() -> tuple[np.ndarray, np.ndarray]:
        a = amount().astype(np.float64) * alpha
        return 1.0 - a, a[:, :, None] * np.asarray(values, np.float64)[None, None, :]

    return _scaled_mix(ctx, img, (key, color), planes)


def _lerp_color_premultiplied(ctx: Context, img: Image, key: Hashable, weight: Callable[[], np.ndarray],
                              color: tuple[float, ...]) -> Image:
    """4 channels: premultiplied ``w * img + (1 - w) * colour``, colour alpha included."""
    be, spec = ctx.backend, ctx.info
    values, alpha = split_color(color, 3, bgra=True)
    key = (key, color)
    w3 = be.cached((key, "w3"), lambda: replicate(weight().astype(np.float32), 3))
    w1 = be.cached((key, "w1"), lambda: weight().astype(np.float32))
    color_add = be.cached((key, "c3"), lambda: np.ascontiguousarray(
        ((1.0 - weight().astype(np.float64))[:, :, None] * alpha * np.asarray(values)[None, None, :])
        .astype(np.float32)))
    alpha_add = be.cached((key, "a1"), lambda: ((1.0 - weight().astype(np.float64)) * alpha).astype(np.float32))
    color_p, alpha_p = premultiply(be, img, spec)
    color_p = be.add_weighted(be.multiply(color_p, w3), 1.0, color_add, 1.0)
    alpha_p = be.add_weighted(be.multiply(alpha_p, w1), 1.0, alpha_add, 1.0)
    return unpremultiply(be, color_p, alpha_p, spec)


def _fade_to_transparent(ctx: Context, img: Image, key: Hashable, weight: Callable[[], np.ndarray]) -> Image:
    """Multiply alpha by ``w``; images without alpha get ``w`` as their alpha (BGRA out)."""
    be, spec = ctx.backend, ctx.info
    if spec.channels == 4:
        *color, alpha = be.split(img)
        w1 = be.cached((key, "w1"), lambda: weight().astype(np.float32))
        return be.merge([*color, be.multiply(alpha, w1, dtype=spec.dtype)])

    def plane() -> np.ndarray:
        scaled = weight().astype(np.float64) * spec.max_value
        return (np.rint(scaled) if spec.dtype.kind == "u" else scaled).astype(spec.dtype)

    alpha = be.cached((key, "alpha", spec.dtype.str), plane)
    color = be.split(img) if spec.channels == 3 else [img] * 3
    return be.merge([*color, alpha])


def _with_colors(ctx: Context, img: Image, run: Any) -> Image:
    """Run ``run(ctx, colour)`` on the colour channels and put alpha back (4 channels)."""
    if ctx.info.channels != 4:
        return run(ctx, img)
    *color, alpha = ctx.backend.split(img)
    out = run(ctx.with_info(channels=3), ctx.backend.merge(color))
    return ctx.backend.merge([*ctx.backend.split(out), alpha])


# ---------------------------------------------------------------------------- vignette (kept)
def vignette_factor(width: int, height: int, center: tuple[float, float], radius: float,
                    intensity: float, window: Rect | None = None) -> np.ndarray:
    """The (height, width) float32 factor of :func:`vignette`, evaluated at pixel centres.

    ``window`` ``(y0, y1, x0, x1)``: only those rows and columns (the same values).
    """
    y0, y1, x0, x1 = window or (0, height, 0, width)
    half_diagonal = 0.5 * np.hypot(width, height)
    x = (np.arange(x0, x1, dtype=np.float32) + 0.5 - center[0] * width) / (radius * half_diagonal)
    y = (np.arange(y0, y1, dtype=np.float32) + 0.5 - center[1] * height) / (radius * half_diagonal)
    r2 = y[:, None] ** 2 + x[None, :] ** 2
    return np.clip(1.0 - intensity * r2, 0.0, 1.0).astype(np.float32)


def _vignette_footprint(params: Mapping[str, Any], spec: ImageInfo) -> Footprint:
    def run(ctx: Context, img: Image, window: Window) -> Image:
        full = window.full
        factor = vignette_factor(full.width, full.height, params["center"], params["radius"], params["intensity"],
                                 window.rect)
        mask = factor if ctx.info.channels == 1 else np.repeat(factor[:, :, None], ctx.info.channels, axis=2)
        return ctx.backend.multiply(img, mask, dtype=ctx.info.dtype)

    return Positional(run)


@register(
    footprint=_vignette_footprint,
    category="feather",
    summary="Darken towards the corners with a radial falloff.",
    params=[
        center_param("centre of the vignette; [0.5,0.5] is the image centre"),
        Param("radius", "float", 1.0, min=0.01, max=10.0, unit="fraction of half-diagonal",
              help="distance at which intensity=1 reaches black; 1 = the corners"),
        Param("intensity", "float", 0.75, min=0.0, max=2.0,
              help="darkening at distance R: the corners keep 1 - intensity of their brightness with radius=1 "
                   "(0.75: a quarter); 0 leaves the image unchanged, 2 blacks out everything beyond 0.71 R"),
    ],
)
def vignette(ctx: Context, img: Image, *, center: tuple[float, float], radius: float, intensity: float) -> Image:
    """``out = in * clip(1 - intensity * (r / R)^2, 0, 1)``.

    ``r`` is the distance of a pixel centre from ``center``, ``R = radius * half
    diagonal``. With the defaults the corners keep a quarter of their brightness and the
    average pixel three quarters; every step of ``intensity`` across its range darkens
    the whole frame visibly (the mean factor is ``1 - intensity / 3`` until black clips).
    The factor is built once per size and parameters and kept on the device; alpha is kept.
    """
    spec = ctx.info
    key = ("vignette", spec.size, spec.channels, center, radius, intensity)

    def mask() -> np.ndarray:
        factor = vignette_factor(spec.width, spec.height, center, radius, intensity)
        return factor if spec.channels == 1 else np.repeat(factor[:, :, None], spec.channels, axis=2)

    return ctx.backend.multiply(img, ctx.backend.cached(key, mask), dtype=spec.dtype)


# ---------------------------------------------------------------------------- feather
def edge_weight(width: int, height: int, radius: float, shape: str = "rect", falloff: str = "linear") -> np.ndarray:
    """The (H, W) weight of ``feather:mode=edges``: 1 inside, fading to 0 at the border.

    ``d`` is the distance of a pixel centre from the frame: ``min(x, W - x, y, H - y)``
    for ``rect``; for ``ellipse``, from the inscribed ellipse (semi-axes W/2, H/2)
    measured along the ray from the image centre, ``d = |v| (1 - rho) / rho`` with
    ``rho = sqrt((vx / (W/2))^2 + (vy / (H/2))^2)``. ``w = falloff(clip(d / radius, 0, 1))``.
    """
    x, y = center_coords(width, height)
    if shape == "rect":
        d = np.minimum(np.minimum(x, width - x), np.minimum(y, height - y))
    else:
        a, b = width / 2.0, height / 2.0
        vx, vy = x - a, y - b
        rho = np.sqrt((vx / a) ** 2 + (vy / b) ** 2)
        length = np.hypot(vx, vy)
        ray = np.where(rho > 0, length / np.where(rho > 0, rho, 1.0), min(a, b))
        d = np.maximum(ray * (1.0 - rho), 0.0)
    if radius <= 0:
        return np.ones((height, width), np.float32)
    return falloff_curve(np.clip(d / radius, 0.0, 1.0), falloff).astype(np.float32)


def radial_weight(width: int, height: int, center: tuple[float, float], inner: float, outer: float,
                  falloff: str = "linear") -> np.ndarray:
    """The (H, W) weight of ``feather:mode=radial``: ``1 - falloff(clip((d - inner) / (outer - inner), 0, 1))``.

    ``d`` is the distance from ``center`` over the half-diagonal; ``outer <= inner`` is a hard edge at ``inner``.
    """
    x, y = center_coords(width, height)
    d = np.hypot(x - center[0] * width, y - center[1] * height) / (0.5 * math.hypot(width, height))
    t = np.clip((d - inner) / (outer - inner), 0.0, 1.0) if outer > inner else (d > inner).astype(np.float64)
    return (1.0 - falloff_curve(t, falloff)).astype(np.float32)


def brighten_amount(width: int, height: int, center: tuple[float, float], size: float) -> np.ndarray:
    """The (H, W) brightness added by ``feather:mode=brighten``, as a fraction of full scale.

    ``v = d^2 / (s2 * size)``: ``d^2 = dx^2 + dy^2`` with the offset along the longer side
    scaled by ``min(W, H) / max(W, H)`` and ``s2 = (W/2)^2 + (H/2)^2`` (the squared
    distance from the centre to a corner).
    """
    x, y = center_coords(width, height)
    dx, dy = x - center[0] * width, y - center[1] * height
    ratio = min(width, height) / max(width, height)
    if width > height:
        dx = dx * ratio
    else:
        dy = dy * ratio
    s2 = (width / 2.0) ** 2 + (height / 2.0) ** 2
    return ((dx**2 + dy**2) / (s2 * size)).astype(np.float32)


def _feather_info(params: Mapping[str, Any], spec: ImageInfo) -> ImageInfo:
    if params["mode"] != "brighten" and params["fill"] == "transparent" and spec.channels != 4:
        return spec.with_(channels=4)
    return spec


@register(
    footprint=whole("the mask is placed on and feathered over the whole image"),
    linear=True,
    category="feather",
    summary="Feather the image: fade its edges or a radial zone to a colour or transparency, or brighten outward.",
    alpha="all",
    output_info=_feather_info,
    params=[
        Param("mode", "choice", "edges", choices=("edges", "radial", "brighten"),
              help="edges: fade the border inward; radial: fade outside a circle around center; "
                   "brighten: the classic OpenCV 'PS feather' brightening with squared distance"),
        Param("radius", "float", 20.0, min=0.0, max=4096.0, unit="px",
              help="edges: width of the fade from the border inward (0: no fade)"),
        Param("shape", "choice", "rect", choices=("rect", "ellipse"),
              help="edges: fade from the image rectangle (rect) or from its inscribed ellipse"),
        center_param("radial, brighten: centre of the effect; [0.5,0.5] is the image centre"),
        Param("inner", "float", 0.5, min=0.0, max=4.0, unit="fraction of half-diagonal",
              help="radial: untouched within this distance of center"),
        Param("outer", "float", 1.0, min=0.0, max=4.0, unit="fraction of half-diagonal",
              help="radial: fully faded beyond this distance (<= inner: a hard edge)"),
        Param("falloff", "choice", "linear", choices=FALLOFFS,
              help="edges, radial: shape of the fade: linear, or smoothstep (3t^2 - 2t^3, soft at both ends)"),
        Param("fill", "choice", "color", choices=("color", "transparent"),
              help="edges, radial: fade to `color`, or to transparent (adds an alpha channel to gray and BGR "
                   "images: the output is BGRA)"),
        Param("color", "color", (1.0, 1.0, 1.0), min=0.0, max=1.0, unit="fraction of full scale",
              help="edges, radial with fill=color: the colour faded to (white, #ff8000, rgb(...), [r,g,b]); one "
                   "value is every channel, alpha too on images with alpha; on images without alpha, its alpha "
                   "is an opacity"),
        Param("size", "float", 0.5, min=0.01, max=10.0, unit="fraction of squared half-diagonal",
              help="brighten: the squared distance (over the squared half-diagonal) where full white is "
                   "added; larger values brighten less (the tutorial's mSize)"),
    ],
)
def feather(ctx: Context, img: Image, *, mode: str, radius: float, shape: str, center: tuple[float, float],
            inner: float, outer: float, falloff: str, fill: str, color: tuple[float, ...], size: float) -> Image:
    """Three senses of "feather", chosen by ``mode``.

    ``edges``: ``w = falloff(clip(d / radius, 0, 1))`` with ``d`` the distance in pixels
    of a pixel centre from the image border (``shape=rect``: ``min(x, W - x, y, H - y)``)
    or from the inscribed ellipse along the ray from the centre (``shape=ellipse``).

    ``radial``: ``w = 1 - falloff(clip((r - inner) / (outer - inner), 0, 1))`` with ``r``
    the distance from ``center`` over the half-diagonal ``0.5 * sqrt(W^2 + H^2)``.

    Both then fade: ``fill=color``: ``out = w * in + (1 - w) * colour`` (on premultiplied
    colour for BGRA images, colour alpha included; on images without alpha the colour's
    alpha is an opacity); ``fill=transparent``: ``alpha_out = w * alpha`` (gray and BGR
    images become BGRA with ``alpha = w``). falloff: linear ``t``, smoothstep
    ``3t^2 - 2t^3``.

    ``brighten`` (the OpenCV "PS filter" feather of the 2012 tutorials):
    ``out = min(in + v * full_scale, full_scale)`` on colour channels, alpha kept, with
    ``v = d^2 / (s2 * size)``; ``d^2 = dx^2 + dy^2`` from ``center`` with the offset along
    the longer side multiplied by ``min(W, H) / max(W, H)``, and ``s2 = (W/2)^2 + (H/2)^2``.
    The tutorial's integer centre ``W >> 1`` becomes the pixel-centre convention here.

    Weights are built once per size and parameters and kept on the device.
    """
    spec = ctx.info
    key: tuple[Any, ...]
    if mode == "brighten":
        key = ("feather-brighten", spec.size, center, size, spec.max_value)

        def add(c: Context, colour: Image) -> Image:
            chans = c.info.channels
            plane = c.backend.cached((key, chans), lambda: replicate(
                brighten_amount(spec.width, spec.height, center, size) * np.float32(spec.max_value), chans))
            out = c.backend.add_weighted(colour, 1.0, plane, 1.0, dtype=spec.dtype)  # integers saturate
            return c.backend.threshold(out, 1.0, 1.0, cv2.THRESH_TRUNC) if spec.dtype == _F32 else out

        return _with_colors(ctx, img, add)
    if mode == "edges":
        key = ("feather-edges", spec.size, radius, shape, falloff)
        weight = once(lambda: edge_weight(spec.width, spec.height, radius, shape, falloff))
    else:
        key = ("feather-radial", spec.size, center, inner, outer, falloff)
        weight = once(lambda: radial_weight(spec.width, spec.height, center, inner, outer, falloff))
    if fill == "transparent":
        return _fade_to_transparent(ctx, img, key, weight)
    if spec.channels == 4:
        return _lerp_color_premultiplied(ctx, img, key, weight, color)
    return _toward_color(ctx, img, key, lambda: 1.0 - weight().astype(np.float64), color)


# ---------------------------------------------------------------------------- feather_mask
@register(
    footprint=whole("the mask is placed on and feathered over the whole image"),
    category="feather",
    summary="Soften a mask's edges (the image itself, or the alpha of BGRA): Gaussian or distance ramp.",
    alpha="all",
    params=[
        feather_param("radius", 5.0, "feather radius: Gaussian sigma = radius / 3.5, or the ramp width of the "
                      "distance method"),
        Param("method", "choice", "gaussian", choices=FEATHER_METHODS,
              help="gaussian (GIMP's feather, spreads both ways) or distance (OpenCV FeatherBlender's "
                   "min(1, distanceTransform / radius) ramp inside the mask, after binarising at 0.5)"),
    ],
)
def feather_mask(ctx: Context, img: Image, *, radius: float, method: FeatherMethod) -> Image:
    """Feather a mask: on BGRA images the alpha channel (colour kept), otherwise every channel.

    ``gaussian``: ``out = G_sigma * m`` with ``sigma = radius / 3.5`` (GIMP), kernel side
    ``2 * ceil(3 * sigma) + 1``, replicated border.

    ``distance``: ``out = min(1, d / radius)`` where ``d`` is the L1 distance transform
    (``cv2.DIST_L1``, 3x3) of ``m > 0.5``: the distance of each pixel inside the mask
    to the nearest pixel outside (OpenCV ``detail::FeatherBlender``'s weight map with
    sharpness ``k = 1 / radius``). Devices compute ``d`` by repeated 3x3-cross erosions.

    Values are taken as fractions of full scale; the result has the image's dtype.
    """
    be, spec = ctx.backend, ctx.info
    full = spec.max_value

    def soften(plane: Image) -> Image:
        values = be.convert(plane, np.float32, 1.0 / full)
        return be.convert(masks.feather_plane(be, values, radius, method), spec.dtype, full)

    planes = be.split(img)
    if spec.channels == 4:
        return be.merge([*planes[:3], soften(planes[3])])
    out = [soften(p) for p in planes]
    return out[0] if spec.channels == 1 else be.merge(out)


# ---------------------------------------------------------------------------- vignette_effect
def vignette_effect_amount(width: int, height: int, *, style: str, center: tuple[float, float], radius: float,
                           falloff: float, intensity: float, start: float, end: float,
                           aspect_correct: bool) -> np.ndarray:
    """The (H, W) amount ``a`` of :func:`vignette_effect` (``out = in + a * (colour - in)``)."""
    x, y = center_coords(width, height)
    if style == "core_image":
        d = np.hypot(x - center[0] * width, y - center[1] * height) / (0.5 * math.hypot(width, height))
        ramp = smoothstep(radius, radius + falloff, d)
    else:
        dx, dy = x / width - center[0], y / height - center[1]
        if aspect_correct:
            dy = dy * (height / width)
        ramp = smoothstep(start, end, np.hypot(dx, dy))
    return (intensity * ramp).astype(np.float64)


@register(
    footprint=whole("the falloff is measured from the centre of the whole image"),
    category="feather",
    summary="Vignette towards a colour: Core Image's CIVignetteEffect or GPUImage's smoothstep vignette.",
    params=[
        Param("style", "choice", "core_image", choices=("core_image", "gpuimage"),
              help="core_image: CIVignetteEffect's radius/falloff/intensity; gpuimage: GPUImageVignetteFilter's "
                   "start/end in texture coordinates"),
        center_param("centre of the vignette; [0.5,0.5] is the image centre"),
        Param("radius", "float", 0.5, min=0.0, max=4.0, unit="fraction of half-diagonal",
              help="core_image: the image is untouched within this distance of center"),
        Param("falloff", "float", 0.5, min=0.0, max=4.0, unit="fraction of half-diagonal",
              help="core_image: width of the smoothstep transition beyond radius (0: a hard edge)"),
        Param("intensity", "float", 1.0, min=-1.0, max=1.0,
              help="strength: 1 reaches the colour, negative values push away from it (brighten towards "
                   "black's opposite); gpuimage uses it too (1 = GPUImage)"),
        Param("color", "color", (0.0, 0.0, 0.0), min=0.0, max=1.0, unit="fraction of full scale",
              help="colour of the vignette (black, navy, #402000, rgb(...), [r,g,b]); an explicit alpha is an "
                   "opacity"),
        Param("start", "float", 0.3, min=0.0, max=2.0, unit="texture coordinates",
              help="gpuimage: distance from center where the vignette starts (GPUImage vignetteStart)"),
        Param("end", "float", 0.75, min=0.0, max=2.0, unit="texture coordinates",
              help="gpuimage: distance where it reaches the colour (GPUImage vignetteEnd)"),
        Param("aspect_correct", "bool", False,
              help="gpuimage: measure y in units of the width (a circle, not an ellipse, on non-square images)"),
    ],
)
def vignette_effect(ctx: Context, img: Image, *, style: str, center: tuple[float, float], radius: float,
                    falloff: float, intensity: float, color: tuple[float, ...], start: float, end: float,
                    aspect_correct: bool) -> Image:
    """``out = in + a * (colour - in)`` (``mix(in, colour, a)``), alpha kept.

    ``style=core_image`` (CIVignetteEffect's parameters; Apple does not publish its
    kernel, so this is its documented behaviour written as a formula):
    ``a = intensity * smoothstep(radius, radius + falloff, r)`` with ``r`` the distance
    from ``center`` over the half-diagonal: untouched inside ``radius``, reaching the
    colour ``falloff`` further out; ``falloff=0`` is a hard edge.

    ``style=gpuimage`` (GPUImageVignetteFilter's fragment shader):
    ``a = intensity * smoothstep(start, end, distance(uv, center))`` with ``uv = ((x +
    0.5) / W, (y + 0.5) / H)`` texture coordinates; ``aspect_correct`` scales the y offset
    by ``H / W``.

    ``smoothstep(e0, e1, x) = t^2 (3 - 2t)``, ``t = clip((x - e0) / (e1 - e0), 0, 1)``.
    The colour's alpha is an opacity (multiplies ``a``). Parameters of the other style
    are ignored. The factor planes are built once per size and kept on the device.
    """
    spec = ctx.info
    key = ("vignette_effect", spec.size, style, center, radius, falloff, intensity, start, end, aspect_correct)
    return _toward_color(ctx, img, key, lambda: vignette_effect_amount(
        spec.width, spec.height, style=style, center=center, radius=radius, falloff=falloff, intensity=intensity,
        start=start, end=end, aspect_correct=aspect_correct), color)
