"""Geometry for pipelines: resize, crop and pad, each declaring the size it outputs.

These change the canvas, so each declares ``output_info`` (like ``rotate:expand=true``)
and a pipeline carries the new size to the steps after it. ``crop`` and ``pad`` move
whole pixels (every channel, alpha included: alpha policy "all"); ``resize``
interpolates on premultiplied colour. All three run with backend primitives
(``resize``, ``crop``, ``pad``) on every backend.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import cv2
import numpy as np

from cvfilters.backends import BORDER_HELP, BORDERS
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.errors import ParameterError
from cvfilters.engine.sampling import fill_param, fill_values
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import Footprint, copied, whole
from cvfilters.registry.params import Param

#: ``resize`` interpolations: name -> OpenCV flag (nearest samples the pixel whose centre is nearest).
RESIZE_INTERPOLATIONS: dict[str, int] = {
    "area": cv2.INTER_AREA,
    "linear": cv2.INTER_LINEAR,
    "cubic": cv2.INTER_CUBIC,
    "lanczos": cv2.INTER_LANCZOS4,
    "nearest": cv2.INTER_NEAREST_EXACT,
}
MAX_SIDE = 32768
# Above these, --allow-large (Python: cvfilters.allow_large()) is needed: a typo such as width=40000 for
# 4000 would otherwise allocate gigabytes.
LARGE_SIDE = 8192
LARGE_PAD = 1024
MAX_PAD = 4096


# ------------------------------------------------------------------ resize
Plan = tuple[tuple[int, int], tuple[int, int, int, int]]


def resize_plan(params: Mapping[str, Any], width: int, height: int) -> Plan:
    """``((scaled_w, scaled_h), (x, y, out_w, out_h))``: the size the image is resized to, then the crop.

    - ``width`` and ``height`` both 0: ``scale`` times the size.
    - one of them 0: that side follows the aspect ratio.
    - both given: ``fit=stretch`` resizes to exactly that size; ``contain`` fits the
      image inside it, keeping the aspect ratio (one side may come out smaller);
      ``cover`` fills it, keeping the aspect ratio, and crops the overflow evenly
      from both sides (centred).

    Sides are rounded to whole pixels and are at least 1.
    """
    target_w, target_h, fit = params["width"], params["height"], params["fit"]
    if target_w and target_h and fit != "stretch":
        factor = (min if fit == "contain" else max)(target_w / width, target_h / height)
        scaled = (max(1, round(width * factor)), max(1, round(height * factor)))
        if fit == "contain":
            return scaled, (0, 0, *scaled)
        out_w, out_h = min(target_w, scaled[0]), min(target_h, scaled[1])
        return scaled, ((scaled[0] - out_w) // 2, (scaled[1] - out_h) // 2, out_w, out_h)
    if target_w and target_h:
        scaled = (target_w, target_h)
    elif target_w:
        scaled = (target_w, max(1, round(height * target_w / width)))
    elif target_h:
        scaled = (max(1, round(width * target_h / height)), target_h)
    else:
        scale = params["scale"]
        scaled = (max(1, round(width * scale)), max(1, round(height * scale)))
    return scaled, (0, 0, *scaled)


def _resize_info(params: Mapping[str, Any], spec: ImageInfo) -> ImageInfo:
    _, (_, _, out_w, out_h) = resize_plan(params, spec.width, spec.height)
    return spec.with_(width=out_w, height=out_h)


def _check_resize_size(scaled: tuple[int, int]) -> None:
    if max(scaled) > MAX_SIDE:
        raise ParameterError("resize", "", f"the result would be {scaled[0]} x {scaled[1]} px; at most {MAX_SIDE} "
                             "px a side")


@register(
    footprint=whole("cv2.resize's sampling depends on the whole size and cannot run on a crop; a remap "
                    "quantises its weights otherwise (more than a level apart)"),
    linear=True,
    category="geometry",
    summary="Resize by a scale or to a width and/or height (stretch, contain or cover); changes the size.",
    params=[
        Param("width", "int", 0, min=0, max=MAX_SIDE, large=LARGE_SIDE, unit="px",
              help="output width; 0 = from height and the aspect ratio (or from scale when height is 0 too)"),
        Param("height", "int", 0, min=0, max=MAX_SIDE, large=LARGE_SIDE, unit="px",
              help="output height; 0 = from width and the aspect ratio (or from scale when width is 0 too)"),
        # Default: half size, so `-f resize` shows what it does (ImageMagick's -resize 50%).
        Param("scale", "float", 0.5, min=0.001, max=32.0, large=16.0, unit="factor",
              help="used when width and height are both 0: 0.5 halves, 2 doubles, 1 keeps the size"),
        Param("fit", "choice", "stretch", choices=("stretch", "contain", "cover"),
              help="with width and height both given: stretch to exactly that size, contain (fit inside, keep "
                   "the aspect ratio) or cover (fill it, keep the aspect ratio, crop the overflow centred)"),
        Param("interpolation", "choice", "area", choices=tuple(RESIZE_INTERPOLATIONS),
              help="area (pixel-area average: best for shrinking), linear (bilinear), cubic (bicubic 4x4), "
                   "lanczos (Lanczos-4, 8x8), nearest (the pixel whose centre is nearest)"),
    ],
    alpha="premultiply",
    output_info=_resize_info,
)
def resize(ctx: Context, img: Any, *, width: int, height: int, scale: float, fit: str, interpolation: str) -> Any:
    """``cv2.resize`` to the size :func:`resize_plan` works out, then the centred crop of ``fit=cover``.

    Pixel centres map as OpenCV's (and scikit-image's) resize: output ``x`` samples
    ``(x + 0.5) * w_in / w_out - 0.5``. Integer images are rounded and saturated;
    float32 results of cubic and lanczos may overshoot 0..1 slightly, as the kernels do.
    Colour is resized premultiplied by alpha.
    """
    params = {"width": width, "height": height, "scale": scale, "fit": fit}
    scaled, (x, y, out_w, out_h) = resize_plan(params, ctx.info.width, ctx.info.height)
    _check_resize_size(scaled)
    out = img if scaled == ctx.info.size else ctx.backend.resize(img, scaled, RESIZE_INTERPOLATIONS[interpolation])
    return out if (out_w, out_h) == scaled else ctx.backend.crop(out, x, y, out_w, out_h)


# ------------------------------------------------------------------ crop
def crop_box(params: Mapping[str, Any], spec: ImageInfo) -> tuple[int, int, int, int]:
    """``(x, y, width, height)`` of the region ``crop`` keeps: the request clipped to the image.

    Raises
    ------
    ParameterError
        If ``x`` or ``y`` lies outside the image (nothing would be left).
    """
    x, y = params["x"], params["y"]
    for name, start, side in (("x", x, spec.width), ("y", y, spec.height)):
        if start >= side:
            raise ParameterError("crop", name, f"={start} is outside the image ({spec.width} x {spec.height} px)")
    width = min(params["width"] or spec.width, spec.width - x)
    height = min(params["height"] or spec.height, spec.height - y)
    return x, y, width, height


def _crop_info(params: Mapping[str, Any], spec: ImageInfo) -> ImageInfo:
    _, _, width, height = crop_box(params, spec)
    return spec.with_(width=width, height=height)


def _crop_footprint(params: Mapping[str, Any], spec: ImageInfo) -> Footprint:
    x, y, _, _ = crop_box(params, spec)
    return copied(lambda start, stop, _: np.arange(start, stop) + y, lambda start, stop, _: np.arange(start, stop) + x)


@register(
    footprint=_crop_footprint,
    linear=True,
    category="geometry",
    summary="Keep a rectangle of the image (x, y, width, height in px); changes the size.",
    params=[
        Param("x", "int", 0, min=0, max=MAX_SIDE, unit="px", example=48, help="left edge of the region"),
        Param("y", "int", 0, min=0, max=MAX_SIDE, unit="px", example=32, help="top edge of the region"),
        Param("width", "int", 0, min=0, max=MAX_SIDE, unit="px", example=160,
              help="width of the region; 0 = to the right edge (a region past the edge is cut there)"),
        Param("height", "int", 0, min=0, max=MAX_SIDE, unit="px", example=160,
              help="height of the region; 0 = to the bottom edge (a region past the edge is cut there)"),
    ],
    alpha="all",
    output_info=_crop_info,
    identity="with no region given (x=0, y=0, width=0, height=0) the whole image is kept",
)
def crop(ctx: Context, img: Any, *, x: int, y: int, width: int, height: int) -> Any:
    """``out = in[y : y + height, x : x + width]``, every channel, exact.

    The region is clipped to the image (ImageMagick's ``-crop`` does the same); a
    region that starts outside the image is an error naming ``x`` or ``y``. The result
    is a copy, so the border rules of later steps see its own edges.
    """
    box = crop_box({"x": x, "y": y, "width": width, "height": height}, ctx.info)
    if box == (0, 0, *ctx.info.size):
        return img
    # A device region (UMat, GpuMat) shares its parent: later border rules would read the parent's
    # pixels beyond the region. A same-type convert copies it into an image of its own.
    return ctx.backend.convert(ctx.backend.crop(img, *box), ctx.info.dtype)


# ------------------------------------------------------------------ pad
def _pad_info(params: Mapping[str, Any], spec: ImageInfo) -> ImageInfo:
    return spec.with_(width=spec.width + params["left"] + params["right"],
                      height=spec.height + params["top"] + params["bottom"])


def _pad_param(name: str) -> Param:
    return Param(name, "int", 0, min=0, max=MAX_PAD, large=LARGE_PAD, unit="px", example=16,
                 help=f"pixels added at the {name}")


def _pad_footprint(params: Mapping[str, Any], spec: ImageInfo) -> Footprint:
    mode = BORDERS[params["border"]]

    def axis(before: int, side: int) -> Callable[[int, int, ImageInfo], np.ndarray]:
        # OpenCV's own rule (copyMakeBorder uses it), -1 outside for the constant border
        return lambda start, stop, _: np.array([cv2.borderInterpolate(p - before, side, mode)
                                                for p in range(start, stop)])

    def fill(full: ImageInfo) -> tuple[float, ...]:
        return fill_values(params["fill"], full, premultiplied=False)

    return copied(axis(params["top"], spec.height), axis(params["left"], spec.width),
                  fill if params["border"] == "constant" else None)


@register(
    footprint=_pad_footprint,
    linear=True,
    category="geometry",
    summary="Add pixels around the image (top, bottom, left, right) with a border rule; changes the size.",
    params=[
        _pad_param("top"), _pad_param("bottom"), _pad_param("left"), _pad_param("right"),
        Param("border", "choice", "constant", choices=tuple(BORDERS),
              help="what the new pixels hold: " + BORDER_HELP.split(": ", 1)[1].replace(", default", "")
                   + "; constant (default) uses `fill`"),
        fill_param(),
    ],
    alpha="all",
    output_info=_pad_info,
    identity="with every side 0 nothing is added",
)
def pad(ctx: Context, img: Any, *, top: int, bottom: int, left: int, right: int, border: str,
        fill: tuple[float, ...]) -> Any:
    """``cv2.copyMakeBorder``: the image in the middle, ``top``/``bottom``/``left``/``right`` new pixels around it.

    ``border=constant`` fills them with ``fill`` (one value for every channel, alpha
    included: transparent black on BGRA by default); the other rules repeat, mirror or
    wrap the image's own pixels (``np.pad``'s edge, symmetric, reflect and wrap modes).
    """
    sides = (top, bottom, left, right)
    if not any(sides):
        return img
    mode = BORDERS[border]
    values = fill_values(fill, ctx.info, premultiplied=False) if border == "constant" else (0.0,)
    if len(set(values)) == 1:
        return ctx.backend.pad(img, *sides, mode, values[0])
    planes = ctx.backend.split(img)
    return ctx.backend.merge([ctx.backend.pad(p, *sides, mode, v) for p, v in zip(planes, values, strict=True)])


__all__ = ["crop", "crop_box", "pad", "resize", "resize_plan"]
