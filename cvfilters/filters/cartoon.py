"""Cartoon: outlines over flat colour, colour quantization and line art.

The device does what it can: luminance, median, box, Sobel and Laplacian filters,
bilateral smoothing, resizing, thresholds and masks all run through ``ctx.backend``
primitives. What OpenCV only has on the host (k-means) runs
on the host with one download and one upload per filter.

Decisions that turn a value into a line or a colour are made so that backends agree:
outlines come from whole-number 8-bit luminance sums compared with half-integer
thresholds (identical everywhere), float thresholds keep a margin above float32
rounding, and colour is smoothed in float32 before it is quantized, so a pixel can
only change level where its smoothed value lies within rounding (~1e-7) of a step.

:func:`quantize_palette` is the Python entry point to k-means quantization: it
returns the quantized image and the palette.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import cv2
import numpy as np

from cvfilters.core.context import Context
from cvfilters.core.pixels import from_unit_float, to_unit_float
from cvfilters.filters._shared.quantize import quantize_palette, quantize_unit
from cvfilters.filters.stylize import luma, to_channels
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import square, whole
from cvfilters.registry.params import Param

SEED_MAX = 2**31 - 1
# Decision margin for float thresholds, far above float32 rounding differences between
# devices and far below any visible change: ties go the same way on every backend.
MARGIN = 1e-5


@register(
    footprint=whole("k-means palette fitted on the whole image"),
    category="cartoon",
    summary="k-means colour quantization to k colours (palette available via quantize_palette).",
    params=[
        Param("k", "int", 8, min=2, max=256, unit="colours", help="number of colours (fewer if the image has fewer)"),
        Param("attempts", "int", 3, min=1, max=20, help="k-means++ seedings tried; the most compact result wins"),
        Param("seed", "int", 0, min=0, max=SEED_MAX, help="random seed: the same seed gives the same result"),
        Param("space", "choice", "bgr", choices=("bgr", "lab"),
              help="colour space of the distances: bgr, or lab (CIE L*a*b*, perceptual); gray images ignore it"),
    ],
)
def quantize(ctx: Context, img: Any, *, k: int, attempts: int, seed: int, space: str) -> Any:
    """Every pixel takes the nearest of ``k`` colours found by k-means.

    The centres minimise ``sum ||c - centre(c)||^2`` over the pixels (Lloyd's
    algorithm with k-means++ seeding, the best of ``attempts``, fitted on at most
    32768 pixels chosen with ``seed``; at most 30 iterations); distances are taken in
    BGR or CIE L*a*b*. The palette is rounded to the input dtype, so the output has at
    most ``k`` distinct colours. Runs on the host (one download, one upload on device
    backends) and works on uint8, uint16 and float32 directly. Alpha passes through.
    ``cvfilters.quantize_palette`` returns the palette as well.
    """
    spec = ctx.info

    def compute(host: np.ndarray) -> np.ndarray:
        planes = host.reshape(spec.height, spec.width, spec.channels)
        return quantize_palette(planes, k, attempts=attempts, seed=seed, space=space)[0]

    return ctx.backend.on_host(img, compute, "quantize (k-means on host)")


# ---------------------------------------------------------------------------------------
# GPUImage toon and smooth toon (device)
# ---------------------------------------------------------------------------------------
def _toon(ctx: Context, colour: Any, *, threshold: float, levels: int, source: str, smoothing: float = 0.0) -> Any:
    """GPUImage's toon shader on a float32 0..1 image (the intensity smoothed first when asked); float32 0..1."""
    be, spec = ctx.backend, ctx.info
    if source == "red" and spec.channels == 3:
        intensity = be.split(colour)[2]
    else:
        intensity = luma(ctx, colour)
    if smoothing > 0:
        size = int(round(smoothing * 4)) * 2 + 1
        intensity = be.gaussian(intensity, (size, size), smoothing, cv2.BORDER_REPLICATE)
    gx = be.sobel(intensity, cv2.CV_32F, 1, 0, 3, cv2.BORDER_REPLICATE)
    gy = be.sobel(intensity, cv2.CV_32F, 0, 1, 3, cv2.BORDER_REPLICATE)
    # keep = 1 - step(threshold, mag): 1 where mag < threshold (ties, within MARGIN, are edges)
    keep = be.threshold(be.magnitude(gx, gy), threshold - MARGIN, 1.0, cv2.THRESH_BINARY_INV)
    steps = be.convert(colour, np.uint16, float(levels))  # round(c * levels)
    posterized = be.convert(steps, np.float32, 1.0 / levels)
    return be.multiply(posterized, to_channels(ctx, keep))


TOON_PARAMS = [
    Param("threshold", "float", 0.2, min=0.0, max=6.0, unit="full scale per px",
          help="Sobel gradient magnitude of the intensity (0..1 scale) at which a pixel becomes outline"),
    Param("levels", "int", 10, min=1, max=255,
          help="posterization: each channel is rounded to a multiple of 1/levels (levels + 1 values)"),
    Param("source", "choice", "luminance", choices=("luminance", "red"),
          help="intensity the edges are found on: Rec. 709 luminance, or the red channel as GPUImage's "
               "shader samples it"),
]


@register(
    # the Gaussian of the smoothing (its kernel reaches round(4 sigma) px) before the Sobel (1 px, one more for safety)
    footprint=square(lambda p, spec: (int(round(p["smoothing"] * 4)) if p["smoothing"] > 0 else 0) + 2),
    category="cartoon",
    summary="GPUImage toon: black Sobel outlines over posterized colour.",
    params=[
        Param("threshold", "float", 0.3, min=0.0, max=6.0, unit="full scale per px",
              help="Sobel gradient magnitude of the (smoothed) intensity at which a pixel becomes outline"),
        *TOON_PARAMS[1:],
        Param("smoothing", "float", 2.0, min=0.0, max=20.0, unit="px",
              help="Gaussian sigma applied to the intensity before the Sobel: texture (fur, grass, noise) stops "
                   "speckling black; 0 with threshold 0.2 is GPUImage's shader exactly"),
    ],
)
def toon(ctx: Context, img: Any, *, threshold: float, levels: int, source: str, smoothing: float) -> Any:
    """GPUImage's GPUImageToonFilter, on the device, with outlines found on a smoothed intensity.

    With ``I`` the intensity (Rec. 709 luminance, or the red channel like GPUImage)
    in 0..1, Gaussian-smoothed by ``smoothing`` px (GPUImage: none, which sprays black
    speckles over fur and foliage: 12 specks of at most 4 px on the cat photo at these
    defaults against 351 at GPUImage's), and its 3 x 3 Sobel derivatives ``h``, ``v`` (edges clamped):
    ``out = floor(c * levels + 0.5) / levels * (1 - step(threshold, length(h, v)))``,
    i.e. pixels whose gradient magnitude reaches ``threshold`` are black and the
    others are posterized. Computed in float32 and rounded back to the input dtype;
    alpha passes through.
    """
    return from_unit_float(ctx, _toon(ctx, to_unit_float(ctx, img), threshold=threshold, levels=levels, source=source,
                                      smoothing=smoothing))


@register(
    footprint=square(lambda p, spec: int(round(p["blur"] * 4)) + 2),
    category="cartoon",
    summary="GPUImage smooth toon: Gaussian blur, then toon (fewer, cleaner outlines).",
    params=[
        Param("blur", "float", 2.0, min=0.1, max=50.0, unit="px", help="standard deviation of the Gaussian blur"),
        *TOON_PARAMS,
    ],
)
def smooth_toon(ctx: Context, img: Any, *, blur: float, threshold: float, levels: int, source: str) -> Any:
    """GPUImage's GPUImageSmoothToonFilter: a Gaussian blur of standard deviation
    ``blur`` (kernel 8 sigma + 1, edges clamped) removes fine texture, then
    :func:`toon` draws outlines and posterizes. Device primitives in float32; alpha
    passes through.
    """
    size = int(round(blur * 4)) * 2 + 1
    blurred = ctx.backend.gaussian(to_unit_float(ctx, img), (size, size), blur, cv2.BORDER_REPLICATE)
    return from_unit_float(ctx, _toon(ctx, blurred, threshold=threshold, levels=levels, source=source))


# ---------------------------------------------------------------------------------------
# Cartoon (device edges and smoothing, host k-means)
# ---------------------------------------------------------------------------------------
def adaptive_offset(sensitivity: float) -> float:
    """Adaptive edges: levels by which an outline pixel is darker than its block mean."""
    return 2.0 + 18.0 * (1.0 - sensitivity)


def laplacian_threshold(sensitivity: float) -> float:
    """Laplacian edges: response (8-bit levels) from which a pixel is an outline."""
    return 4.0 + 60.0 * (1.0 - sensitivity)


LAPLACIAN_3X3 = np.array([[1, 1, 1], [1, -8, 1], [1, 1, 1]], dtype=np.float32)


def cartoon_edges(ctx: Context, img: Any, *, edges: str, edge_blur: int, block: int, sensitivity: float,
                  thickness: int) -> Any:
    """Float32 outline mask (1 = outline) of ``img``, found on its median-blurred 8-bit luminance.

    Every value compared is a whole number (8-bit levels, exact sums of them) and every
    threshold sits half-way between whole numbers, so the mask is the same on every backend.
    """
    be, spec = ctx.backend, ctx.info
    gray = be.convert(img, np.uint8, 255.0 / spec.max_value)
    if spec.channels == 3:
        gray = be.cvt_color(gray, cv2.COLOR_BGR2GRAY)
    if edge_blur > 1:
        gray = be.median(gray, edge_blur)
    values = be.convert(gray, np.float32)
    if edges == "adaptive":
        # cv2.adaptiveThreshold's rule: outline where gray <= mean(block) - C, evaluated as
        # block^2 * (gray - mean + C) <= 0 on whole numbers (the box sum times block^2).
        area = float(block * block)
        offset = round(adaptive_offset(sensitivity) * area)
        mean = be.box(values, (block, block), cv2.BORDER_REPLICATE)
        score = be.add_weighted(values, area, mean, -area, float(offset))
        mask = be.threshold(score, 0.5, 1.0, cv2.THRESH_BINARY_INV)
    else:
        # Laplacian (8-neighbour): positive where the pixel is darker than its surround.
        response = be.filter2d(values, LAPLACIAN_3X3, cv2.BORDER_REPLICATE, ddepth=cv2.CV_32F)
        limit = float(np.ceil(laplacian_threshold(sensitivity)))
        mask = be.threshold(response, limit - 0.5, 1.0, cv2.THRESH_BINARY)
    if thickness > 1:
        disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (thickness, thickness))
        mask = be.morphology(mask, cv2.MORPH_DILATE, disc, 1, cv2.BORDER_REPLICATE)
    return mask


def smooth_colour(ctx: Context, colour: Any, *, passes: int, scale: float, diameter: int, sigma_color: float,
                  sigma_space: float, full: float = 1.0) -> Any:
    """Repeated bilateral filtering at a reduced scale, resized back.

    ``colour`` is float32 0..1 (``full=1``) or uint8 (``full=255``); ``sigma_color`` is
    in 8-bit levels either way.
    """
    be, spec = ctx.backend, ctx.info
    if passes == 0:
        return colour
    small_size = (max(1, round(spec.width * scale)), max(1, round(spec.height * scale)))
    reduced = small_size != spec.size
    work = be.resize(colour, small_size, cv2.INTER_AREA) if reduced else colour
    for _ in range(passes):
        work = be.bilateral(work, diameter, sigma_color * full / 255.0, sigma_space, cv2.BORDER_REPLICATE)
    return be.resize(work, spec.size, cv2.INTER_LINEAR) if reduced else work


def _check_cartoon(params: dict[str, Any]) -> str | None:
    if params["edges"] == "none" and params["quantize"] == "none" and params["passes"] == 0:
        return "edges=none, quantize=none and passes=0 leave nothing to do"
    return None


@register(
    footprint=whole("bilateral passes run on the image resized, and a k-means palette on the whole image"),
    category="cartoon",
    summary="Cartoon: dark outlines over smoothed, quantized colour (the classic OpenCV recipe).",
    params=[
        Param("edges", "choice", "adaptive", choices=("adaptive", "laplacian", "none"),
              help="outline detector on the median-blurred luminance: adaptive (threshold), laplacian, or none"),
        Param("edge_blur", "int", 7, min=1, max=15, odd=True, unit="px",
              help="median filter size applied to the luminance first; larger = fewer, smoother outlines"),
        Param("block", "int", 9, min=3, max=99, odd=True, unit="px",
              help="adaptive: side of the neighbourhood a pixel is compared with"),
        Param("sensitivity", "float", 0.5, min=0.0, max=1.0,
              help="more outlines as it rises: adaptive: a pixel darker than its block mean by "
                   "2 + 18 (1 - s) levels is an outline; laplacian: a response of 4 + 60 (1 - s) levels"),
        Param("thickness", "int", 2, min=1, max=15, unit="px",
              help="outline width: the outline mask is dilated by a disc of this diameter (1 = as found)"),
        Param("passes", "int", 5, min=0, max=20, help="bilateral filter passes that flatten the colour"),
        Param("scale", "float", 0.5, min=0.05, max=1.0, unit="fraction of the size",
              help="the bilateral passes run on the image resized by this factor (faster, broader smoothing)"),
        Param("diameter", "int", 9, min=3, max=31, unit="px at the reduced scale",
              help="bilateral neighbourhood diameter"),
        Param("sigma_color", "float", 20.0, min=1.0, max=255.0, unit="8-bit levels",
              help="bilateral colour sigma: colours this far apart are hardly mixed"),
        Param("sigma_space", "float", 7.0, min=0.5, max=50.0, unit="px at the reduced scale",
              help="bilateral spatial sigma"),
        Param("quantize", "choice", "kmeans", choices=("kmeans", "posterize", "none"),
              help="colour quantization after smoothing: kmeans (k-means to `colors` colours), posterize to `levels` "
                   "values per channel, or none"),
        Param("colors", "int", 8, min=2, max=64, unit="colours", help="quantize=kmeans: number of colours"),
        Param("levels", "int", 5, min=2, max=32, help="quantize=posterize: values per channel"),
        Param("seed", "int", 0, min=0, max=SEED_MAX, help="quantize=kmeans: random seed (same seed, same result)"),
    ],
    check=_check_cartoon,
)
def cartoon(ctx: Context, img: Any, *, edges: str, edge_blur: int, block: int, sensitivity: float, thickness: int,
            passes: int, scale: float, diameter: int, sigma_color: float, sigma_space: float, quantize: str,
            colors: int, levels: int, seed: int) -> Any:
    """``out = quantize(smooth(colour)) * (1 - outline)``.

    - outline (device): the image's 8-bit luminance is median-filtered (``edge_blur``);
      ``adaptive`` marks pixels darker than the mean of their ``block`` x ``block``
      neighbourhood by ``C = 2 + 18 (1 - sensitivity)`` levels (``cv2.adaptiveThreshold``'s
      rule), ``laplacian`` marks pixels whose 8-neighbour Laplacian (surround minus centre)
      reaches ``4 + 60 (1 - sensitivity)`` levels; the mask is dilated to ``thickness``.
    - smooth (device): the colour, in float32, is resized by ``scale`` (area), filtered
      ``passes`` times by a bilateral filter (``diameter``, ``sigma_color`` levels,
      ``sigma_space`` px) and resized back (linear).
    - quantize: ``kmeans`` to ``colors`` colours (host, seeded, one download and one
      upload; see ``quantize``), ``posterize`` to ``levels`` values per channel
      (``round(c (levels - 1)) / (levels - 1)``, device), or ``none``.

    The luminance for the outlines is 8-bit (uint16 and float32 are converted). With
    ``quantize=none`` (the classic recipe) the colour path of uint8 images is uint8
    throughout, at the recipe's speed: ``cv2.bilateralFilter`` on 8-bit values and the
    outlines as a 0/1 multiply. Otherwise it is float32, so a quantizer's bucket edges
    do not move with 8-bit rounding (which differs by a level between backends'
    resizes). The result has the input dtype. Alpha passes through.
    """
    be, spec = ctx.backend, ctx.info
    if spec.dtype == np.uint8 and quantize == "none":
        return _cartoon_8bit(ctx, img, edges=edges, edge_blur=edge_blur, block=block, sensitivity=sensitivity,
                             thickness=thickness, passes=passes, scale=scale, diameter=diameter,
                             sigma_color=sigma_color, sigma_space=sigma_space)
    colour = smooth_colour(ctx, to_unit_float(ctx, img), passes=passes, scale=scale, diameter=diameter,
                           sigma_color=sigma_color, sigma_space=sigma_space)
    if quantize == "kmeans":
        def kmeans(host: np.ndarray) -> np.ndarray:
            planes = host.reshape(spec.height, spec.width, spec.channels)
            labels, palette = quantize_unit(planes, colors, attempts=1, seed=seed, space="bgr")
            return palette[labels].reshape(planes.shape)

        colour = be.on_host(colour, kmeans, "cartoon (k-means on host)")
    elif quantize == "posterize":
        steps = be.convert(colour, np.uint16, float(levels - 1))
        colour = be.convert(steps, np.float32, 1.0 / (levels - 1))
    if edges != "none":
        mask = cartoon_edges(ctx, img, edges=edges, edge_blur=edge_blur, block=block, sensitivity=sensitivity,
                             thickness=thickness)
        keep = be.convert(mask, np.float32, -1.0, 1.0)
        colour = be.multiply(colour, to_channels(ctx, keep))
    return from_unit_float(ctx, colour)


def _cartoon_8bit(ctx: Context, img: Any, *, edges: str, edge_blur: int, block: int, sensitivity: float,
                  thickness: int, passes: int, scale: float, diameter: int, sigma_color: float,
                  sigma_space: float) -> Any:
    """:func:`cartoon` on a uint8 image without quantizing (the classic recipe), every colour step in uint8."""
    be = ctx.backend
    colour = smooth_colour(ctx, img, passes=passes, scale=scale, diameter=diameter, sigma_color=sigma_color,
                           sigma_space=sigma_space, full=255.0)
    if edges != "none":
        mask = cartoon_edges(ctx, img, edges=edges, edge_blur=edge_blur, block=block, sensitivity=sensitivity,
                             thickness=thickness)
        keep = be.convert(mask, np.uint8, -1.0, 1.0)
        colour = be.multiply(colour, to_channels(ctx, keep))
    return colour


# ---------------------------------------------------------------------------------------
# Pencil sketch
# ---------------------------------------------------------------------------------------
# Added to both sides of the dodge ratio: flat areas stay exactly white, and the ratio
# amplifies float32 rounding differences between devices at most 64 times.
DODGE_EPSILON = 1.0 / 64
@register(
    footprint=whole("pencil sketch and domain-transform filters are recursive over the whole image"),
    category="cartoon",
    summary="Pencil sketch: graphite (gray) or coloured pencil (color), colour dodge of the blurred negative.",
    params=[
        Param("mode", "choice", "gray", choices=("gray", "color"),
              help="gray: graphite strokes; color: coloured pencil, the strokes in the photo's colours on white"),
        Param("blur", "float", 6.0, min=0.5, max=50.0, unit="px",
              help="standard deviation of the blur of the negative; larger = broader, softer strokes"),
        Param("strength", "float", 1.5, min=0.1, max=5.0,
              help="line darkness: out = 1 - strength (1 - sketch); 1 = as drawn, > 1 darker lines"),
        Param("shading", "float", 0.2, min=0.0, max=1.0,
              help="how much of the original tone shades the paper: multiplies by 1 - shading + shading * tone "
                   "(the luminance for gray, each channel for color)"),
    ],
)
def sketch(ctx: Context, img: Any, *, mode: str, blur: float, strength: float, shading: float) -> Any:
    """Pencil drawing, on the device (float32).

    With ``Y`` the luminance, the colour dodge of ``Y`` by its blurred negative
    ``B = G_blur * (1 - Y)`` is ``D = min(1, (Y + e) / (1 - B + e))`` with ``e = 1/64``:
    white where the image is flat, strokes along edges; ``L = clip(1 - strength (1 - D))``.

    - ``gray``: graphite, ``out = L * (1 - shading + shading Y)`` in every channel.
    - ``color``: coloured pencil, the strokes take the photo's colour ``C`` on white
      paper: ``out = (1 - (1 - L)(1 - C)) * (1 - shading + shading C)`` per channel.
      (Dodging each channel on its own, the other common recipe, draws rainbow fringes
      where the channels' edges differ; the strokes here are the luminance's.)

    Alpha passes through.
    """
    be = ctx.backend
    unit = to_unit_float(ctx, img)
    gray = luma(ctx, unit)
    size = int(round(blur * 4)) * 2 + 1
    blurred = be.gaussian(be.convert(gray, np.float32, -1.0, 1.0), (size, size), blur, cv2.BORDER_REPLICATE)
    dodge = be.clip(be.divide(be.convert(gray, np.float32, 1.0, DODGE_EPSILON),
                              be.convert(blurred, np.float32, -1.0, 1.0 + DODGE_EPSILON)), 0.0, 1.0)
    lines = be.clip(be.convert(dodge, np.float32, strength, 1.0 - strength), 0.0, 1.0)
    tone = gray
    if mode == "color":
        stroke = be.multiply(to_channels(ctx, be.convert(lines, np.float32, -1.0, 1.0)),
                             be.convert(unit, np.float32, -1.0, 1.0))
        lines, tone = be.convert(stroke, np.float32, -1.0, 1.0), unit
    else:
        lines, tone = to_channels(ctx, lines), to_channels(ctx, gray)
    if shading > 0:
        lines = be.multiply(lines, be.convert(tone, np.float32, shading, 1.0 - shading))
    return from_unit_float(ctx, lines)


# ---------------------------------------------------------------------------------------
# GPUImage halftone and crosshatch (device, cached masks)
# ---------------------------------------------------------------------------------------
def halftone_distance(width: int, height: int, size: int) -> np.ndarray:
    """Distance (px) of each pixel centre from the centre of its size x size cell."""
    x = np.arange(width, dtype=np.float64) + 0.5
    y = np.arange(height, dtype=np.float64) + 0.5
    dx = x - (np.floor(x / size) + 0.5) * size
    dy = y - (np.floor(y / size) + 0.5) * size
    return np.hypot(dy[:, None], dx[None, :]).astype(np.float32)


@register(
    footprint=whole("the dot grid is anchored to the whole image"),
    category="cartoon",
    summary="GPUImage halftone: black dots on white, dot size from the darkness of each cell.",
    params=[Param("size", "int", 8, min=2, max=512, unit="px",
                  help="side of the square cells (dot spacing); cells start at the top-left corner")],
)
def halftone(ctx: Context, img: Any, *, size: int) -> Any:
    """GPUImage's GPUImageHalftoneFilter in pixels.

    The image is cut into ``size`` x ``size`` cells; with ``Y`` the cell's mean
    Rec. 709 luminance (0..1; GPUImage samples the cell centre, the mean does not
    alias), a pixel is black when its distance to the cell centre is below
    ``size / 2 * (1 - Y)`` and white otherwise. The result is black and white in the
    image's channel count and dtype; alpha passes through. Device primitives
    (area resize, nearest resize, threshold) and one cached distance map.
    """
    be, spec = ctx.backend, ctx.info
    grid_w, grid_h = -(-spec.width // size), -(-spec.height // size)
    gray = luma(ctx, to_unit_float(ctx, img))
    padded = be.pad(gray, 0, grid_h * size - spec.height, 0, grid_w * size - spec.width, cv2.BORDER_REPLICATE)
    means = be.resize(padded, (grid_w, grid_h), cv2.INTER_AREA)
    radius = be.convert(means, np.float32, -0.5 * size, 0.5 * size)
    radius = be.crop(be.resize(radius, (grid_w * size, grid_h * size), cv2.INTER_NEAREST), 0, 0,
                     spec.width, spec.height)
    distance = be.cached(("halftone", spec.size, size), lambda: halftone_distance(spec.width, spec.height, size))
    # white (1) where radius - distance <= 0
    white = be.threshold(be.add_weighted(radius, 1.0, distance, -1.0), 0.0, 1.0, cv2.THRESH_BINARY_INV)
    return from_unit_float(ctx, to_channels(ctx, white))


# (luminance below which the family is drawn, direction of the lines, offset in spacings)
CROSSHATCH_FAMILIES = ((1.0, 1, 0.0), (0.75, -1, 0.0), (0.5, 1, 0.5), (0.3, -1, 0.5))


def crosshatch_lines(width: int, height: int, spacing: float, line_width: float, family: int) -> np.ndarray:
    """Float32 mask (1 = on a line) of one GPUImage crosshatch family at pixel centres."""
    _, direction, offset = CROSSHATCH_FAMILIES[family]
    x = np.arange(width, dtype=np.float64) + 0.5
    y = np.arange(height, dtype=np.float64) + 0.5
    phase = np.mod(x[None, :] + direction * y[:, None] - offset * spacing, spacing)
    return (phase <= line_width).astype(np.float32)


def _check_crosshatch(params: dict[str, Any]) -> str | None:
    if params["line_width"] >= params["spacing"]:
        return f"line_width={params['line_width']:g} must be smaller than spacing={params['spacing']:g}"
    return None


@register(
    footprint=whole("the hatching lines are placed on the whole image"),
    category="cartoon",
    summary="GPUImage crosshatch: up to four families of diagonal lines, more where the image is darker.",
    params=[
        Param("spacing", "float", 12.0, min=2.0, max=256.0, unit="px", help="distance between hatch lines"),
        Param("line_width", "float", 1.0, min=0.0, max=64.0, unit="px",
              help="hatch line width, measured along x + y as GPUImage does"),
    ],
    check=_check_crosshatch,
)
def crosshatch(ctx: Context, img: Any, *, spacing: float, line_width: float) -> Any:
    """GPUImage's GPUImageCrosshatchFilter in pixels.

    With ``Y`` the Rec. 709 luminance (0..1) and ``(u, v)`` the pixel centre, a pixel
    is black when one of the four families below applies, white otherwise:
    ``Y < 1``: ``mod(u + v, spacing) <= line_width``; ``Y < 0.75``:
    ``mod(u - v, spacing) <= line_width``; ``Y < 0.5``: ``mod(u + v - spacing/2, spacing)
    <= line_width``; ``Y < 0.3``: ``mod(u - v - spacing/2, spacing) <= line_width``.
    (GPUImage works in texture coordinates, fractions of the image size; here the
    spacing is in pixels so the lines stay at 45 degrees.) The luminance limits have a
    1e-5 margin so pure white stays unhatched on every backend. Black and white in the
    image's channel count and dtype; alpha passes through. Device primitives with four
    cached line masks.
    """
    be, spec = ctx.backend, ctx.info
    gray = luma(ctx, to_unit_float(ctx, img))
    hatched: Any = None  # a native image once the first family is drawn
    for family, (limit, _, _) in enumerate(CROSSHATCH_FAMILIES):
        dark = be.threshold(gray, limit - MARGIN, 1.0, cv2.THRESH_BINARY_INV)  # 1 where Y < limit
        lines = be.cached(("crosshatch", spec.size, spacing, line_width, family),
                          partial(crosshatch_lines, spec.width, spec.height, spacing, line_width, family))
        drawn = be.multiply(dark, lines)
        hatched = drawn if hatched is None else be.add_weighted(hatched, 1.0, drawn, 1.0)
    white = be.threshold(hatched, 0.5, 1.0, cv2.THRESH_BINARY_INV)
    return from_unit_float(ctx, to_channels(ctx, white))


__all__ = ["cartoon", "crosshatch", "halftone", "quantize", "quantize_palette", "sketch",
           "smooth_toon", "toon"]
