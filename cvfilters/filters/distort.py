"""Distortions: swirl, bulge, pinch, stretch and sphere, all warp kernels.

Each filter is a function from output to source pixel coordinates registered with
:func:`~cvfilters.filters.warp.warp_kernel`, so it runs as one cached ``remap`` on every
backend and exposes ``Filter.maps``. Conventions (see :mod:`cvfilters.filters.warp`):
``center`` is a fraction of the image (``[0.5, 0.5]`` = the centre, pixel coordinate
``u * width - 0.5``); ``radius`` is a fraction of ``min(width, height)``; distances are
measured in pixels, so the effects are round on any aspect ratio.

Formulas follow scikit-image's ``swirl`` and GPUImage's distortion shaders, rewritten
for numpy. GPUImage measures distances in fractions of the width (y scaled by the
aspect ratio about the line y = 0.5); measuring in pixels from ``center`` gives the
same result when the image is square or the centre is on that line, and keeps
off-centre circles round and centred elsewhere.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cvfilters.filters._shared.common import center_param
from cvfilters.filters.warp import center_px, radius_px, warp_kernel
from cvfilters.registry.params import Param


def _radius_param(default: float, help_text: str) -> Param:
    return Param("radius", "float", default, min=0.01, max=4.0, unit="fraction of min(width, height)",
                 help=help_text)


def _offsets(x: np.ndarray, y: np.ndarray, center: tuple[float, float], width: int,
             height: int) -> tuple[float, float, np.ndarray, np.ndarray]:
    cx, cy = center_px(center, width, height)
    return cx, cy, x - cx, y - cy


# ------------------------------------------------------------------ swirl
def swirl_coords(x: np.ndarray, y: np.ndarray, *, width: int, height: int, center: tuple[float, float],
                 radius: float, strength: float, rotation: float) -> tuple[Any, Any]:
    """scikit-image's swirl mapping (``skimage.transform.swirl``)."""
    cx, cy, dx, dy = _offsets(x, y, center, width, height)
    decay = radius_px(radius, width, height) * math.log(2) / 5.0
    turn = math.radians(rotation) + strength * np.exp(-np.hypot(dx, dy) / decay)
    # c + rho (cos, sin)(phi + turn), written as the offset turned by `turn` (no arctan2 needed)
    cos, sin = np.cos(turn), np.sin(turn)
    return cx + dx * cos - dy * sin, cy + dx * sin + dy * cos


swirl = warp_kernel(
    swirl_coords, "swirl",
    category="distort",
    summary="Swirl: turn the image around a centre, most near it, fading out at the radius.",
    params=[
        center_param("centre of the swirl; [0.5,0.5] is the image centre"),
        _radius_param(0.75, "extent of the swirl: the turn has decayed to 1/1000 of `strength` at this distance"),
        Param("strength", "float", 5.0, min=-20.0, max=20.0, unit="rad",
              help="turn at the centre in radians, counter-clockwise on screen (negative: clockwise); "
                   "0 = only `rotation`"),
        Param("rotation", "float", 0.0, min=-360.0, max=360.0, unit="deg",
              help="additional counter-clockwise rotation of the whole image"),
    ],
    border="reflect101",
    description="""Swirl, the formula of ``skimage.transform.swirl`` (its oracle in the tests).

    For an output pixel at distance ``rho`` and angle ``phi`` from the centre ``c``::

        theta = rotation + strength * exp(-rho / (R ln2 / 5)) + phi
        source = c + rho * (cos theta, sin theta)

    with ``R = radius * min(width, height)`` pixels (the turn decays to 1/1000 of
    ``strength`` at ``rho = R``; scikit-image's ``radius`` is ``R``) and ``rotation`` in
    degrees (scikit-image takes radians). The default border, reflect101, is
    scikit-image's ``mode="reflect"``.
    """,
)


# ------------------------------------------------------------------ bulge
def bulge_coords(x: np.ndarray, y: np.ndarray, *, width: int, height: int, center: tuple[float, float],
                 radius: float, scale: float) -> tuple[Any, Any]:
    """GPUImage's bulge distortion (GPUImageBulgeDistortionFilter), distances in pixels."""
    cx, cy, dx, dy = _offsets(x, y, center, width, height)
    r = radius_px(radius, width, height)
    dist = np.hypot(dx, dy)
    percent = np.where(dist < r, (1.0 - (r - dist) / r * scale) ** 2, 1.0)
    return cx + dx * percent, cy + dy * percent


bulge = warp_kernel(
    bulge_coords, "bulge",
    category="distort",
    summary="Bulge: magnify (or shrink) a disc as if seen through a lens, GPUImage style.",
    params=[
        center_param("centre of the bulge; [0.5,0.5] is the image centre"),
        _radius_param(0.25, "radius of the affected disc"),
        Param("scale", "float", 0.5, min=-1.0, max=1.0,
              help="amount: positive magnifies the centre, negative shrinks it, 0 leaves the image unchanged"),
    ],
    border="replicate",
    description="""Bulge, GPUImage's ``GPUImageBulgeDistortionFilter``.

    For an output pixel at offset ``d`` (distance ``|d|``) from the centre ``c``, with
    ``R = radius * min(width, height)`` pixels::

        source = c + d * (1 - (R - |d|) / R * scale)^2     if |d| < R
        source = c + d                                     otherwise

    Positive ``scale`` magnifies the disc (1 pulls every pixel towards the centre's
    colour), negative shrinks it; 0 is the identity. Distances are in pixels (GPUImage
    uses fractions of the width: the same on a square image). Border: replicate
    (GPUImage's clamp-to-edge).
    """,
)


# ------------------------------------------------------------------ pinch
def pinch_coords(x: np.ndarray, y: np.ndarray, *, width: int, height: int, center: tuple[float, float],
                 radius: float, scale: float) -> tuple[Any, Any]:
    """GPUImage's pinch distortion (GPUImagePinchDistortionFilter), falloff over the radius."""
    cx, cy, dx, dy = _offsets(x, y, center, width, height)
    r = radius_px(radius, width, height)
    dist = np.hypot(dx, dy)
    percent = np.where(dist < r, 1.0 + (r - dist) / r * scale, 1.0)
    return cx + dx * percent, cy + dy * percent


pinch = warp_kernel(
    pinch_coords, "pinch",
    category="distort",
    summary="Pinch: pull the image in towards a centre (or push it out), GPUImage style.",
    params=[
        center_param("centre of the pinch; [0.5,0.5] is the image centre"),
        _radius_param(0.5, "radius of the affected disc"),
        Param("scale", "float", 0.5, min=-2.0, max=2.0,
              help="amount: positive pinches (the centre shrinks away), negative magnifies, 0 = unchanged"),
    ],
    border="replicate",
    description="""Pinch, GPUImage's ``GPUImagePinchDistortionFilter``.

    For an output pixel at offset ``d`` from the centre ``c``, with ``R = radius *
    min(width, height)`` pixels::

        source = c + d * (1 + (R - |d|) / R * scale)     if |d| < R
        source = c + d                                   otherwise

    GPUImage writes the falloff as ``(0.5 - |d|) / 0.5`` with ``|d|`` in fractions of
    the width, whatever the radius: the same formula at ``R`` = half the width, and a
    seam at ``|d| = R`` for other radii, which measuring the falloff over ``R`` avoids.
    0 is the identity. Border: replicate (GPUImage's clamp-to-edge).
    """,
)


# ------------------------------------------------------------------ stretch
def stretch_coords(x: np.ndarray, y: np.ndarray, *, width: int, height: int, center: tuple[float, float],
                   strength: float) -> tuple[Any, Any]:
    """GPUImage's stretch distortion (GPUImageStretchDistortionFilter), with a strength."""
    cx, cy, dx, dy = _offsets(x, y, center, width, height)
    out = []
    for c, d, half in ((cx, dx, width / 2.0), (cy, dy, height / 2.0)):
        n = np.abs(d) / half  # distance from the centre in half-sizes (GPUImage's normalised coordinate)
        t = np.clip((n - 0.25) / 0.25, 0.0, 1.0)
        smooth = t * t * (3.0 - 2.0 * t)  # GLSL smoothstep(0.25, 0.5, n)
        out.append(c + d * (1.0 - 0.5 * strength * (1.0 - smooth)))
    return out[0], out[1]


stretch = warp_kernel(
    stretch_coords, "stretch",
    category="distort",
    summary="Stretch: magnify the middle of the image along both axes, GPUImage style.",
    params=[
        center_param("centre of the stretch; [0.5,0.5] is the image centre"),
        Param("strength", "float", 1.0, min=-2.0, max=2.0,
              help="1 is GPUImage's stretch (the centre magnified 2x), 0 leaves the image unchanged, "
                   "negative shrinks the centre"),
    ],
    border="replicate",
    description="""Stretch, GPUImage's ``GPUImageStretchDistortionFilter`` with a strength.

    Per axis, independently: ``n = |p - c| / (size / 2)`` is the distance from the
    centre in half-widths (x) or half-heights (y), and::

        source = c + (p - c) * (1 - strength / 2 * (1 - smoothstep(0.25, 0.5, n)))

    ``strength = 1`` is GPUImage's ``0.5 n + 0.5 smoothstep(0.25, 0.5, n) n`` (the
    middle quarter magnified 2x, the outer half unchanged); 0 is the identity.
    Border: replicate (GPUImage's clamp-to-edge).
    """,
)


# ------------------------------------------------------------------ sphere
def sphere_coords(x: np.ndarray, y: np.ndarray, *, width: int, height: int, center: tuple[float, float],
                  radius: float, refractive_index: float) -> tuple[Any, Any]:
    """GPUImage's sphere refraction (GPUImageSphereRefractionFilter); NaN (no source) outside the sphere."""
    _, _, dx, dy = _offsets(x, y, center, width, height)
    r = radius_px(radius, width, height)
    ux, uy = dx / r, dy / r  # the sphere's normal is (ux, uy, nz), already of unit length
    u2 = ux * ux + uy * uy
    inside = u2 <= 1.0
    nz = np.sqrt(np.clip(1.0 - u2, 0.0, None))
    # GLSL refract(I, N, eta) with I = (0, 0, -1): k = 1 - eta^2 (1 - (N.I)^2), N.I = -nz
    k = 1.0 - refractive_index**2 * u2
    factor = np.where(k >= 0.0, refractive_index * nz - np.sqrt(np.clip(k, 0.0, None)), 0.0)
    rx, ry = factor * ux, factor * uy  # x and y of the refracted ray, in [-1, 1]
    src_x = np.where(inside, (rx + 1.0) * 0.5 * width - 0.5, np.nan)
    src_y = np.where(inside, (ry + 1.0) * 0.5 * height - 0.5, np.nan)
    return src_x, src_y


sphere = warp_kernel(
    sphere_coords, "sphere",
    category="distort",
    summary="Glass sphere: the whole image refracted, upside down, through a ball, GPUImage style.",
    params=[
        center_param("centre of the sphere; [0.5,0.5] is the image centre"),
        _radius_param(0.25, "radius of the sphere"),
        Param("refractive_index", "float", 0.71, min=0.0, max=2.0,
              help="ratio of refractive indices (GLSL refract's eta): 0.71 is GPUImage's glass look; 0 shows "
                   "the whole image turned 180 degrees, 1 a single colour; above 1 the rim reflects totally"),
    ],
    border="constant",
    description="""Sphere refraction, GPUImage's ``GPUImageSphereRefractionFilter``.

    Inside the sphere (``|d| <= R``, ``d`` the offset from the centre, ``R = radius *
    min(width, height)`` pixels) the surface normal is ``N = (d / R, sqrt(1 - |d/R|^2))``;
    the viewing ray ``(0, 0, -1)`` is refracted with GLSL's ``refract(I, N, eta)``
    (``eta = refractive_index``; total internal reflection gives the zero vector) and
    its ``(x, y)`` in ``[-1, 1]`` picks the source texture coordinate
    ``(x + 1) / 2, (y + 1) / 2`` of the whole image, so the sphere shows the entire
    image, inverted, wherever it sits. Outside the sphere there is no source: with
    ``border=constant`` (default) those pixels are the ``fill`` colour, transparent
    black by default (GPUImage multiplies them by 0); other borders fill them with
    that border's rule far outside the image. The rim is a hard edge, as in GPUImage.
    """,
)
