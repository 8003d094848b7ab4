"""Looks: bloom, film grain, chroma key, and the cell effects crystallize, pointillize and hex_pixellate.

- ``bloom`` and ``grain`` run with device primitives (Gaussian blur, weighted sums);
  grain's noise field is generated once per size, seed and parameters on the host and
  kept on the device (``Backend.cached``), so the same seed gives the same grain.
- ``crystallize`` and ``pointillize`` are Voronoi cells around seeded, jittered points
  (Core Image's CICrystallize and CIPointillize): each pixel copies the colour of its
  cell's point, which is a ``remap`` whose source coordinates are whole pixels (exact
  on every backend); the maps are built once per size and parameters.
- ``hex_pixellate`` averages hexagonal cells (CIHexagonalPixellate) and ``chroma_key``
  turns a key colour into transparency: both on the host (no primitive averages
  labelled regions or measures chroma distances), counted off the cpu.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.pixels import from_unit_float, split_color, to_unit_float
from cvfilters.engine.sampling import OUTSIDE, fill_param, remap
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import POINT, square, whole
from cvfilters.registry.params import Param

SEED_MAX = 2**31 - 1


def _seed_param() -> Param:
    return Param("seed", "int", 0, min=0, max=SEED_MAX, help="random seed: the same seed gives the same result")


# ------------------------------------------------------------------ bloom
@register(
    footprint=square(lambda p, spec: round(3 * p["radius"])),
    category="looks",
    summary="Bloom: a soft glow around the bright parts (Core Image's CIBloom, with a highlight threshold).",
    params=[
        # Defaults: CIBloom's radius 10 and intensity 0.5.
        Param("radius", "float", 10.0, min=0.5, max=200.0, unit="px", help="standard deviation of the glow's blur"),
        Param("intensity", "float", 0.5, min=0.0, max=4.0, help="strength of the glow; 0 leaves the image unchanged"),
        Param("threshold", "float", 0.5, min=0.0, max=0.95, unit="fraction of full scale",
              help="only values above it glow (0: the whole image glows, as CIBloom)"),
    ],
)
def bloom(ctx: Context, img: Any, *, radius: float, intensity: float, threshold: float) -> Any:
    """``out = screen(in, intensity * G_radius(bright))`` on values 0..1, per channel.

    ``bright = clip((in - threshold) / (1 - threshold), 0, 1)`` keeps the highlights,
    ``G_radius`` is a Gaussian blur (kernel 6 radius + 1, edges clamped), and
    ``screen(a, b) = a + b - a b`` brightens without passing full scale. Device
    primitives in float32; alpha passes through.
    """
    be = ctx.backend
    x = to_unit_float(ctx, img)
    bright = be.clip(be.convert(x, np.float32, 1.0 / (1.0 - threshold), -threshold / (1.0 - threshold)), 0.0, 1.0)
    size = 2 * round(3 * radius) + 1
    glow = be.convert(be.gaussian(bright, (size, size), radius, cv2.BORDER_REPLICATE), np.float32, intensity)
    screened = be.add_weighted(be.add_weighted(x, 1.0, glow, 1.0), 1.0, be.multiply(x, glow), -1.0)
    return from_unit_float(ctx, be.clip(screened, 0.0, 1.0))


# ------------------------------------------------------------------ grain
def grain_field(height: int, width: int, channels: int, size: float, seed: int, monochrome: bool) -> np.ndarray:
    """Film grain: float32 noise of standard deviation 1, shape (H, W) or (H, W, channels).

    Gaussian white noise from ``numpy.random.default_rng(seed)`` (one plane, or one per
    channel unless ``monochrome``), blurred by a Gaussian of standard deviation ``size``
    px (grain clumps; 0 = per-pixel noise) and rescaled to unit standard deviation.
    """
    rng = np.random.default_rng(seed)
    planes = 1 if monochrome or channels == 1 else channels
    noise = rng.standard_normal((height, width, planes)).astype(np.float32)
    if size > 0:
        ksize = 2 * round(3 * size) + 1
        blurred = cv2.GaussianBlur(noise, (ksize, ksize), size, borderType=cv2.BORDER_REFLECT_101)
        noise = np.asarray(blurred, dtype=np.float32).reshape(noise.shape)
    spread = float(noise.std())
    noise = noise / spread if spread > 0 else noise
    if channels == 1:
        return np.ascontiguousarray(noise[..., 0])
    return np.ascontiguousarray(np.repeat(noise, channels, axis=2) if planes == 1 else noise)


@register(
    footprint=whole("the noise field is drawn for the whole image from one seed"),
    category="looks",
    summary="Film grain: seeded, reproducible Gaussian noise, clumped to a grain size.",
    params=[
        Param("amount", "float", 0.04, min=0.0, max=1.0, unit="fraction of full scale",
              help="standard deviation of the grain; 0 leaves the image unchanged"),
        Param("size", "float", 0.8, min=0.0, max=20.0, unit="px",
              help="grain size: the blur of the noise (0 = independent pixels)"),
        Param("monochrome", "bool", True, help="the same grain on every channel (film); false: colour noise"),
        _seed_param(),
    ],
)
def grain(ctx: Context, img: Any, *, amount: float, size: float, monochrome: bool, seed: int) -> Any:
    """``out = clip(in + amount * N)`` on values 0..1, ``N`` the :func:`grain_field` of the seed.

    The field depends only on the size, channel count, grain size, seed and
    ``monochrome``: the same call gives the same grain (and a different seed a
    different one). It is built on the host once and kept on the device; the sum runs
    with device primitives. Alpha passes through.
    """
    spec, be = ctx.info, ctx.backend
    key = ("grain", spec.size, spec.channels, size, seed, monochrome)
    noise = be.cached(key, lambda: grain_field(spec.height, spec.width, spec.channels, size, seed, monochrome))
    return from_unit_float(ctx, be.clip(be.add_weighted(to_unit_float(ctx, img), 1.0, noise, amount), 0.0, 1.0))


# ------------------------------------------------------------------ chroma key
KB, KR = 0.114, 0.299  # BT.601: Cb = (B - Y) / (2 (1 - KB)), Cr = (R - Y) / (2 (1 - KR))


def chroma(bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BT.601 ``(Y, Cb, Cr)`` of float BGR values 0..1 (Cb, Cr in -0.5..0.5)."""
    y = bgr @ np.array([KB, 1.0 - KB - KR, KR])
    return y, (bgr[..., 0] - y) / (2 * (1 - KB)), (bgr[..., 2] - y) / (2 * (1 - KR))


def from_chroma(y: np.ndarray, cb: np.ndarray, cr: np.ndarray) -> np.ndarray:
    """BGR from BT.601 ``(Y, Cb, Cr)`` (the inverse of :func:`chroma`)."""
    b = y + 2 * (1 - KB) * cb
    r = y + 2 * (1 - KR) * cr
    g = (y - KB * b - KR * r) / (1.0 - KB - KR)
    return np.stack([b, g, r], axis=-1)


def smoothstep(edge0: float, edge1: float, x: np.ndarray) -> np.ndarray:
    """0 below ``edge0``, 1 above ``edge1``, ``3t^2 - 2t^3`` between (a step when the edges meet)."""
    if edge1 <= edge0:
        return (x > edge0).astype(np.float64)
    t = np.clip((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


#: Below this chroma (BT.601 Cb, Cr length) a key colour is neutral: ``distance=auto`` measures in Lab.
NEUTRAL_KEY = 0.1
DISTANCES = ("auto", "lab", "rgb", "chroma")


def key_distance(bgr: np.ndarray, key: tuple[float, ...], distance: str) -> np.ndarray:
    """Distance of float BGR values 0..1 from the key colour, on a 0..1-ish scale per :data:`DISTANCES`.

    ``chroma``: Euclidean in BT.601 (Cb, Cr) (ignores lightness: green screens with shadows);
    ``rgb``: Euclidean in RGB / sqrt(3) (ImageMagick's ``-fuzz``); ``lab``: CIE76 Delta E / 100
    (sRGB values, D65); ``auto``: chroma for a coloured key, Lab for a neutral one (white,
    black, grey), whose chroma distance would match every neutral pixel.
    """
    key_bgr = np.asarray(key, dtype=np.float64)
    if distance == "auto":
        _, key_cb, key_cr = chroma(key_bgr)
        distance = "chroma" if np.hypot(key_cb, key_cr) >= NEUTRAL_KEY else "lab"
    if distance == "chroma":
        _, cb, cr = chroma(bgr)
        _, key_cb, key_cr = chroma(key_bgr)
        return np.asarray(np.hypot(cb - key_cb, cr - key_cr))
    if distance == "rgb":
        return np.asarray(np.linalg.norm(bgr - key_bgr, axis=-1) / np.sqrt(3.0))
    lab = cv2.cvtColor(np.ascontiguousarray(bgr, np.float32), cv2.COLOR_BGR2Lab).astype(np.float64)
    key_lab = cv2.cvtColor(key_bgr.astype(np.float32).reshape(1, 1, 3), cv2.COLOR_BGR2Lab)[0, 0]
    return np.asarray(np.linalg.norm(lab - key_lab, axis=-1) / 100.0)


def key_out(bgr: np.ndarray, key: tuple[float, ...], tolerance: float, softness: float,
            spill: float, distance: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """``(colour, alpha)`` of :func:`chroma_key` for float BGR values 0..1."""
    y, cb, cr = chroma(bgr)
    _, key_cb, key_cr = chroma(np.asarray(key, dtype=np.float64))
    alpha = smoothstep(tolerance, tolerance + softness, key_distance(bgr, key, distance))
    length = float(np.hypot(key_cb, key_cr))
    if spill > 0 and length > 1e-9:
        ux, uy = key_cb / length, key_cr / length
        towards = np.maximum(cb * ux + cr * uy, 0.0) * spill
        bgr = from_chroma(y, cb - towards * ux, cr - towards * uy)
    return np.clip(bgr, 0.0, 1.0), alpha


def _key_info(params: Mapping[str, Any], spec: ImageInfo) -> ImageInfo:
    return spec.with_(channels=4)


@register(
    footprint=POINT,
    category="looks",
    summary="Chroma key: a key colour becomes transparent (tolerance, soft edge, spill suppression); adds alpha.",
    params=[
        # The example keys out the astronaut's orange suit in the gallery.
        Param("color", "color", (0.0, 1.0, 0.0), min=0.0, max=1.0, unit="fraction of full scale",
              example=(0.9, 0.35, 0.16),
              help="the key colour (green screen by default): a CSS name, #rrggbb, rgb(...) or [r,g,b] fractions"),
        Param("tolerance", "float", 0.15, min=0.0, max=1.5,
              help="distance from the key within which pixels become fully transparent (see `distance`)"),
        Param("softness", "float", 0.1, min=0.0, max=1.5,
              help="width of the transition to opaque beyond the tolerance (0: a hard edge)"),
        Param("spill", "float", 0.5, min=0.0, max=1.0,
              help="removes this share of every pixel's chroma towards the key colour (green fringes); 0 keeps it"),
        Param("distance", "choice", "auto", choices=DISTANCES,
              help="how far a pixel is from the key: chroma (BT.601 Cb, Cr; ignores shadows on a green screen), "
                   "rgb (Euclidean / sqrt 3, ImageMagick's -fuzz), lab (Delta E / 100), auto: chroma for a "
                   "coloured key, lab for a neutral one (white, black, grey backgrounds)"),
    ],
    alpha="all",
    output_info=_key_info,
)
def chroma_key(ctx: Context, img: Any, *, color: tuple[float, ...], tolerance: float, softness: float,
               spill: float, distance: str) -> Any:
    """Alpha from the distance to the key colour; the output has 4 channels (BGRA).

    ``d`` is the pixel's distance from the key (``distance``): with ``(Y, Cb, Cr)`` BT.601
    (``Cb = (B - Y) / 1.772``, ``Cr = (R - Y) / 1.402``), ``chroma`` is the Euclidean
    distance of ``(Cb, Cr)``; ``rgb`` the Euclidean RGB distance / sqrt(3) (0..1, as
    ImageMagick's ``-fuzz``); ``lab`` CIE76 Delta E / 100; ``auto`` is chroma for a key
    whose chroma reaches 0.1 and Lab for a neutral key, so "remove the white background"
    keeps a photo's subject (a chroma distance matches every neutral pixel).
    ``alpha = smoothstep(tolerance, tolerance + softness, d)`` (0 = keyed out), times
    the input's alpha if it had one. Spill suppression then removes ``spill`` times the
    positive component of the pixel's chroma along the key's chroma direction, keeping
    ``Y`` (green fringes turn neutral); a neutral key has no spill direction. Gray images
    are keyed as (v, v, v). Host only: counted off the cpu.
    """
    spec = ctx.info
    key, _ = split_color(color, 3, bgra=False)

    def compute(host: np.ndarray) -> np.ndarray:
        values = host.reshape(spec.height, spec.width, spec.channels).astype(np.float64) / spec.max_value
        bgr = np.repeat(values, 3, axis=2) if spec.channels == 1 else values[..., :3]
        colour, alpha = key_out(bgr, key, tolerance, softness, spill, distance)
        if spec.channels == 4:
            alpha = alpha * values[..., 3]
        out = np.dstack([colour, alpha])
        if spec.dtype == np.float32:
            return out.astype(np.float32)
        return np.rint(out * spec.max_value).astype(spec.dtype)

    return ctx.backend.on_host(img, compute, "chroma_key (on host)")


# ------------------------------------------------------------------ Voronoi cells
@lru_cache(maxsize=16)
def cell_points(width: int, height: int, spacing: float, seed: int) -> np.ndarray:
    """Seeded cell points, float64 (N, 2) ``(x, y)`` pixel centres: one per ``spacing`` square, jittered.

    Point ``(i, j)`` (row-major index) is ``((i + u) spacing, (j + v) spacing)`` with
    ``u, v`` uniform in [0, 1) from ``numpy.random.default_rng(seed)``, rounded to the
    nearest pixel centre and kept inside the image.
    """
    nx, ny = int(np.ceil(width / spacing)), int(np.ceil(height / spacing))
    jitter = np.random.default_rng(seed).random((ny, nx, 2))
    grid_y, grid_x = np.mgrid[0:ny, 0:nx]
    x = np.clip(np.rint((grid_x + jitter[..., 0]) * spacing), 0, width - 1)
    y = np.clip(np.rint((grid_y + jitter[..., 1]) * spacing), 0, height - 1)
    points = np.stack([x.ravel(), y.ravel()], axis=1)
    points.setflags(write=False)
    return points


@lru_cache(maxsize=16)
def voronoi(width: int, height: int, spacing: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, squared distance)`` of every pixel: the index of the nearest :func:`cell_points` point.

    A pixel's nearest point lies in its own grid square or one of the 24 around it
    (every point is within ``spacing * sqrt(2)`` of its square, and squares three
    away are farther), so only those are compared; ties go to the lower index.
    """
    nx, ny = int(np.ceil(width / spacing)), int(np.ceil(height / spacing))
    points = cell_points(width, height, spacing, seed)
    x = np.arange(width, dtype=np.float64)[None, :]
    y = np.arange(height, dtype=np.float64)[:, None]
    cell_x, cell_y = np.floor(x / spacing).astype(np.int64), np.floor(y / spacing).astype(np.int64)
    best = np.full((height, width), np.inf)
    labels = np.zeros((height, width), np.int64)
    for dy in range(-2, 3):
        for dx in range(-2, 3):
            cx, cy = cell_x + dx, cell_y + dy
            valid = (cx >= 0) & (cx < nx) & (cy >= 0) & (cy < ny)
            index = np.where(valid, np.clip(cy, 0, ny - 1) * nx + np.clip(cx, 0, nx - 1), 0)
            dist = np.where(valid, (points[index, 0] - x) ** 2 + (points[index, 1] - y) ** 2, np.inf)
            closer = (dist < best) | ((dist == best) & (index < labels))
            best = np.where(closer, dist, best)
            labels = np.where(closer, index, labels)
    labels.setflags(write=False)
    best.setflags(write=False)
    return labels, best


def cell_maps(width: int, height: int, spacing: float, seed: int, dot: float | None) -> tuple[np.ndarray, np.ndarray]:
    """float32 remap maps sending each pixel to its cell's point (outside the dot: :data:`OUTSIDE`)."""
    labels, distance = voronoi(width, height, spacing, seed)
    points = cell_points(width, height, spacing, seed)
    map_x, map_y = points[labels, 0], points[labels, 1]
    if dot is not None:
        outside = distance > (dot * spacing) ** 2
        map_x, map_y = np.where(outside, OUTSIDE, map_x), np.where(outside, OUTSIDE, map_y)
    return np.ascontiguousarray(map_x, np.float32), np.ascontiguousarray(map_y, np.float32)


def _run_cells(ctx: Context, img: Any, name: str, spacing: float, seed: int, dot: float | None,
               fill: tuple[float, ...]) -> Any:
    spec = ctx.info
    key = (name, spec.size, spacing, seed, dot)
    built: list[tuple[np.ndarray, np.ndarray]] = []

    def maps() -> tuple[np.ndarray, np.ndarray]:
        if not built:
            built.append(cell_maps(spec.width, spec.height, spacing, seed, dot))
        return built[0]

    map_x = ctx.backend.cached((*key, "x"), lambda: maps()[0])
    map_y = ctx.backend.cached((*key, "y"), lambda: maps()[1])
    # Whole-pixel source coordinates: linear interpolation copies them exactly on every backend.
    return remap(ctx, img, map_x, map_y, "linear", "constant", fill, premultiplied=False)


@register(
    footprint=whole("Voronoi cells are seeded over the whole image"),
    category="looks",
    summary="Crystallize: Voronoi polygons, each the colour at its seeded point (Core Image's CICrystallize).",
    params=[
        # Default: CICrystallize's radius 20.
        Param("radius", "float", 20.0, min=2.0, max=1000.0, unit="px",
              help="cell size: one point per radius x radius square, jittered"),
        _seed_param(),
    ],
    alpha="all",
)
def crystallize(ctx: Context, img: Any, *, radius: float, seed: int) -> Any:
    """Each pixel takes the colour (alpha included) of the nearest of the :func:`cell_points`.

    One point per ``radius`` square of the image, placed at random in it (seeded), so
    the cells are irregular polygons about ``radius`` across (Voronoi cells). A ``remap``
    with whole-pixel sources, built once per size and parameters.
    """
    return _run_cells(ctx, img, "crystallize", radius, seed, None, (0.0,))


@register(
    footprint=whole("dots are seeded over the whole image"),
    category="looks",
    summary="Pointillize: round dots of the colour at seeded points on a paper colour (Core Image's CIPointillize).",
    params=[
        Param("radius", "float", 20.0, min=2.0, max=1000.0, unit="px",
              help="spacing of the dots: one per radius x radius square, jittered"),
        Param("dot", "float", 0.5, min=0.05, max=2.0, unit="fraction of radius",
              help="dot radius as a fraction of the spacing (dots are cut where cells meet)"),
        fill_param((1.0,)),
        _seed_param(),
    ],
    alpha="all",
)
def pointillize(ctx: Context, img: Any, *, radius: float, dot: float, fill: tuple[float, ...], seed: int) -> Any:
    """Crystallize's cells drawn as dots: pixels within ``dot * radius`` of their cell's point take its colour.

    The other pixels take ``fill`` (white paper by default; see the fill parameter of
    the warps). A ``remap`` with whole-pixel sources, built once per size and parameters.
    """
    return _run_cells(ctx, img, "pointillize", radius, seed, dot, fill)


# ------------------------------------------------------------------ hexagons
@lru_cache(maxsize=16)
def hex_labels(width: int, height: int, size: float) -> np.ndarray:
    """Index of the hexagon (pointy-top, circumradius ``size``) that each pixel centre falls in.

    Centres sit on rows ``1.5 size`` apart, ``sqrt(3) size`` apart along a row, odd rows
    shifted by half that; a pixel belongs to the nearest centre (hexagons are the
    Voronoi cells of that lattice).
    """
    step_x, step_y = np.sqrt(3.0) * size, 1.5 * size
    x = np.arange(width, dtype=np.float64)[None, :]
    y = np.arange(height, dtype=np.float64)[:, None]
    cols = int(np.ceil(width / step_x)) + 3  # columns -1 .. ceil(width / step_x) + 1
    row0 = np.floor(y / step_y).astype(np.int64)
    best = np.full((height, width), np.inf)
    labels = np.zeros((height, width), np.int64)
    for dr in (0, 1):  # a cell reaches `size` above and below its centre, rows are 1.5 size apart:
        row = row0 + dr  # the nearest centre is in the row at or just below the pixel's
        shift = (row % 2) * step_x / 2
        col0 = np.floor((x - shift) / step_x).astype(np.int64)
        for dc in (0, 1):
            col = col0 + dc
            dist = (col * step_x + shift - x) ** 2 + (row * step_y - y) ** 2
            closer = dist < best
            best = np.where(closer, dist, best)
            labels = np.where(closer, (row + 1) * cols + col + 1, labels)
    _, dense = np.unique(labels, return_inverse=True)
    dense = dense.reshape(height, width)
    dense.setflags(write=False)
    return dense


@register(
    footprint=whole("the hexagon grid is anchored to the whole image"),
    linear=True,
    category="looks",
    summary="Hexagonal pixellate: hexagons of the mean colour they cover (Core Image's CIHexagonalPixellate).",
    params=[Param("size", "float", 8.0, min=1.0, max=1000.0, unit="px",
                  help="hexagon circumradius (centre to corner)")],
    alpha="premultiply",
)
def hex_pixellate(ctx: Context, img: Any, *, size: float) -> Any:
    """Each pixel takes the mean of the pixels in its hexagon (:func:`hex_labels`), per channel.

    Means are exact (float64 sums) and rounded to the dtype; colour is averaged
    premultiplied by alpha. Host only (no primitive averages labelled regions):
    counted off the cpu.
    """
    spec = ctx.info

    def compute(host: np.ndarray) -> np.ndarray:
        labels = hex_labels(spec.width, spec.height, size).ravel()
        values = host.reshape(-1, spec.channels).astype(np.float64)
        counts = np.bincount(labels)
        means = np.stack([np.bincount(labels, values[:, c]) / counts for c in range(spec.channels)], axis=1)
        out = means[labels].reshape(host.shape)
        if spec.dtype.kind == "u":
            out = np.rint(out)
        return out.astype(spec.dtype)

    return ctx.backend.on_host(img, compute, "hex_pixellate (on host)")


__all__ = ["bloom", "cell_points", "chroma_key", "crystallize", "grain", "grain_field", "hex_labels",
           "hex_pixellate", "key_out", "pointillize", "voronoi"]
