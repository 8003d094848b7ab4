"""Region-limited filtering and blends: ``masked`` and ``blend`` (the feather family).

Masks are image files or shape texts (:mod:`cvfilters.filters.masks`), softened by a feather
radius in pixels; weights and constant planes are built once per size and parameters
and kept on the device, and the mix runs as device arithmetic in premultiplied alpha.
Conventions of positions and colours: see :mod:`.feather`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import cv2
import numpy as np

from cvfilters.core.arrays import ImageValue
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.pixels import full_scale, split_color, unpremultiply
from cvfilters.core.types import FeatherMethod, Image
from cvfilters.filters import masks
from cvfilters.filters._shared.common import color_channels
from cvfilters.filters.masks import FEATHER_METHODS, feather_param, once, replicate
from cvfilters.io import reading
from cvfilters.registry.catalog import register
from cvfilters.registry.footprints import whole
from cvfilters.registry.params import Param

BLEND_MODES = ("normal", "multiply", "screen", "overlay", "soft_light", "darken", "lighten", "difference", "add")
_F32 = np.dtype(np.float32)


# ---------------------------------------------------------------------------- masked
def _mask_params(required: bool) -> list[Param]:
    example = "ellipse:0.5,0.5,0.3,0.4"
    return [
        Param("mask", "mask", None, required=required, example=example, unit="file or shape",
                  help="where the effect applies: an image file (@mask.png: gray, or the alpha of RGBA; stretched "
                       "to the image) or a quoted shape 'rect:x,y,w,h', 'ellipse:cx,cy,rx,ry', 'circle:cx,cy,r', "
                       "'polygon:x1,y1,x2,y2,...' in fractions of width/height or pixels with px"
                       + ("" if required else "; none: everywhere")),
        feather_param(),
        Param("feather_method", "choice", "gaussian", choices=FEATHER_METHODS,
              help="gaussian (GIMP: sigma = feather / 3.5, both ways) or distance (FeatherBlender: "
                   "min(1, distanceTransform / feather), inward)"),
        Param("invert", "bool", False, help="use the inverse of the mask (the effect applies outside it)"),
    ]


def _weight_key(mask: str | None, feather: float, method: FeatherMethod, invert: bool, spec: ImageInfo) -> Hashable:
    return ("mask", None if mask is None else masks.source_key(mask), feather, method, invert, spec.size)


def _weight(mask: str | None, feather: float, method: FeatherMethod, invert: bool, spec: ImageInfo) -> np.ndarray:
    if mask is None:
        ones = np.ones((spec.height, spec.width), np.float32)
        return (1.0 - ones) if invert else ones
    return masks.weight_map(mask, spec.width, spec.height, feather=feather, method=method, invert=invert)


@register(
    footprint=whole("the mask is placed on the whole image"),
    category="blend",
    summary="Apply a filter or sub-pipeline only inside a (feathered) mask.",
    alpha="all",
    params=[
        *_mask_params(required=True)[:1],
        Param("filter", "pipeline", None, required=True, example="gaussian_blur:sigma=4", unit="spec",
                      help="the filter(s) to apply inside the mask, quoted: 'gaussian_blur:sigma=8 | pixellate', "
                           "or @steps.yaml; they must keep size, channels and dtype"),
        *_mask_params(required=True)[1:],
    ],
)
def masked(ctx: Context, img: Image, *, mask: str, filter: str, feather: float, feather_method: FeatherMethod,
           invert: bool) -> Image:
    """``out = F(in) * w + in * (1 - w)``, ``w`` the mask (inverted if asked, then feathered).

    CLI syntax (quote the nested spec and shapes; the nested spec may hold ``|``)::

        masked:mask=@face.png,feather=20,filter='gaussian_blur:sigma=8'
        masked:mask='ellipse:0.5,0.4,0.25,0.3',feather=15,filter='pixellate:size=8 | grayscale'
        masked:mask='rect:0,0,1,0.5',invert=true,filter=@steps.yaml

    ``F`` runs on the whole image on the same backend (so neighbourhood filters see
    real pixels across the mask edge); BGRA images mix premultiplied colour and alpha.
    The nested spec is parsed when the step is parsed (a bad step is a usage error),
    its ``@file`` values relative to the pipeline file's folder, and written back in
    canonical form; ``filter=@steps.yaml`` is kept as the file's path and the file read
    when the step runs (files may nest 4 levels; one that includes itself is refused;
    inline specs nest 2 levels, the quotes available). ``w`` is built once
    per size and parameters and kept on the device; see :mod:`cvfilters.filters.masks` for mask
    files, shapes and the two feather methods. In Python: ``cvfilters.apply_masked``.
    """
    spec = ctx.info
    key = _weight_key(mask, feather, feather_method, invert, spec)
    return masks.masked_composite(ctx, img, masks.parse_steps(filter), key,
                                  lambda: _weight(mask, feather, feather_method, invert, spec))


# ---------------------------------------------------------------------------- blend
def _source(image: str | ImageValue | None, color: tuple[float, ...],
            spec: ImageInfo) -> tuple[np.ndarray, np.ndarray]:
    """Host ``(colour (H, W, C), alpha (H, W))`` of the blend source, float32 0..1, straight colour.

    A source image of another size is resized premultiplied (no dark fringe at soft edges).
    """
    colors = color_channels(spec)
    if image is None:
        solid, opacity = split_color(color, colors, bgra=spec.channels == 4)
        plane = np.broadcast_to(np.asarray(solid, np.float32), (spec.height, spec.width, colors))
        return np.ascontiguousarray(plane), np.full((spec.height, spec.width), opacity, np.float32)
    src = image.bgr() if isinstance(image, ImageValue) else reading.read(image)
    values = src.astype(np.float32) / np.float32(full_scale(src.dtype))
    if values.ndim == 2:
        col, alpha = values[:, :, None], np.ones(values.shape, np.float32)
    else:
        col = values[:, :, :3]
        alpha = values[:, :, 3] if values.shape[2] == 4 else np.ones(values.shape[:2], np.float32)
    if colors == 1 and col.shape[2] == 3:
        col = cv2.cvtColor(np.ascontiguousarray(col), cv2.COLOR_BGR2GRAY)[:, :, None]
    elif colors == 3 and col.shape[2] == 1:
        col = np.repeat(col, 3, axis=2)
    if (col.shape[1], col.shape[0]) != spec.size:
        shrink = spec.width <= col.shape[1] and spec.height <= col.shape[0]
        inter = cv2.INTER_AREA if shrink else cv2.INTER_LINEAR
        premul = cv2.resize(np.ascontiguousarray(col * alpha[:, :, None]), spec.size, interpolation=inter)
        alpha = np.clip(cv2.resize(alpha, spec.size, interpolation=inter), 0.0, 1.0)
        premul = premul.reshape(spec.height, spec.width, -1)
        col = np.where(alpha[:, :, None] > 0, premul / np.maximum(alpha[:, :, None], 1e-12), 0.0)
    col = np.clip(col, 0.0, 1.0).astype(np.float32).reshape(spec.height, spec.width, colors)
    return np.ascontiguousarray(col), alpha.astype(np.float32)


def _relu(be: Any, x: Image) -> Image:
    return be.threshold(x, 0.0, 0.0, cv2.THRESH_TOZERO)


def _above(be: Any, x: Image, level: float) -> Image:
    """1 where ``x > level``, else 0."""
    return be.threshold(x, level, 1.0, cv2.THRESH_BINARY)


def _one_minus(be: Any, x: Image) -> Image:
    return be.convert(x, np.float32, -1.0, 1.0)


def _select(be: Any, where: Any, yes: Any, no: Any) -> Image:
    """``yes`` where ``where`` is 1, else ``no`` (``where`` a float32 0/1 image)."""
    return be.select(be.convert(where, np.uint8), yes, no)


def blend_function(be: Any, mode: str, cb: Any, cs: Any) -> Any:
    """The W3C separable blend function ``B(Cb, Cs)`` on float32 device images (0..1).

    normal ``Cs``; multiply ``Cb Cs``; screen ``Cb + Cs - Cb Cs``; overlay
    ``HardLight(Cs, Cb)``: ``2 Cb Cs`` if ``Cb <= 0.5`` else ``1 - 2 (1 - Cb)(1 - Cs)``;
    soft_light: ``Cb - (1 - 2Cs) Cb (1 - Cb)`` if ``Cs <= 0.5`` else
    ``Cb + (2Cs - 1)(D(Cb) - Cb)`` with ``D(Cb) = ((16 Cb - 12) Cb + 4) Cb`` if
    ``Cb <= 0.25`` else ``sqrt(Cb)``; darken ``min``; lighten ``max``; difference
    ``|Cb - Cs|``; add ``min(1, Cb + Cs)`` (linear dodge).
    """
    if mode == "normal":
        return cs
    if mode == "multiply":
        return be.multiply(cb, cs)
    if mode == "screen":
        return be.add_weighted(be.add_weighted(cb, 1.0, cs, 1.0), 1.0, be.multiply(cb, cs), -1.0)
    if mode == "overlay":
        low = be.multiply(cb, cs, 2.0)
        high = _one_minus(be, be.multiply(_one_minus(be, cb), _one_minus(be, cs), 2.0))
        return _select(be, _above(be, cb, 0.5), high, low)
    if mode == "darken":
        return be.minimum(cb, cs)
    if mode == "lighten":
        return be.maximum(cb, cs)
    if mode == "difference":
        return be.add_weighted(_relu(be, be.add_weighted(cb, 1.0, cs, -1.0)), 1.0,
                               _relu(be, be.add_weighted(cs, 1.0, cb, -1.0)), 1.0)
    if mode == "add":
        return be.threshold(be.add_weighted(cb, 1.0, cs, 1.0), 1.0, 1.0, cv2.THRESH_TRUNC)
    # soft_light
    cb = be.clip(cb, 0.0, 1.0)
    poly = be.multiply(be.convert(be.multiply(be.convert(cb, np.float32, 16.0, -12.0), cb), np.float32, 1.0, 4.0), cb)
    d = _select(be, _above(be, cb, 0.25), be.sqrt(cb), poly)
    low = be.add_weighted(cb, 1.0, be.multiply(be.convert(cs, np.float32, -2.0, 1.0),
                                                be.multiply(cb, _one_minus(be, cb))), -1.0)
    high = be.add_weighted(cb, 1.0, be.multiply(be.convert(cs, np.float32, 2.0, -1.0),
                                                 be.add_weighted(d, 1.0, cb, -1.0)), 1.0)
    return _select(be, _above(be, cs, 0.5), high, low)


@register(
    footprint=whole("the source and mask are stretched to the whole image"),
    category="blend",
    summary="Blend a second image or a colour over the image: 9 modes, opacity, optional feathered mask.",
    alpha="all",
    params=[
        Param("source", "file", None, unit="file", image=True,
                  help="the image blended over this one (@file, or an array / PIL image from Python; stretched to "
                       "this image's size, resampled premultiplied); none: the solid `color`"),
        Param("color", "color", (0.0, 0.0, 0.0), min=0.0, max=1.0, unit="fraction of full scale",
              help="solid source colour when no source is given (red, #ff8000, rgb(...), [r,g,b]); one value "
                   "is every channel, alpha too on images with alpha"),
        Param("mode", "choice", "normal", choices=BLEND_MODES,
              help="W3C blend mode: normal, multiply, screen, overlay, soft_light, darken, lighten, difference, "
                   "add (linear dodge, clipped)"),
        Param("opacity", "float", 0.5, min=0.0, max=1.0, unit="fraction",
              help="source opacity (multiplies the source's alpha and the mask)"),
        *_mask_params(required=False),
    ],
)
def blend(ctx: Context, img: Image, *, source: str | ImageValue | None, color: tuple[float, ...], mode: str,
          opacity: float, mask: str | None, feather: float, feather_method: FeatherMethod, invert: bool) -> Image:
    """W3C Compositing and Blending, source-over with a separable blend mode.

    The source (``source`` image, else ``color``) has straight colour ``Cs`` and alpha
    ``as = alpha_src * opacity * w`` (``w`` the optional mask, inverted if asked, then
    feathered); the backdrop (this image) has ``Cb`` and ``ab`` (1 without alpha)::

        Cs' = (1 - ab) Cs + ab B(Cb, Cs)
        co  = as Cs' + ab Cb (1 - as)          (premultiplied result)
        ao  = as + ab (1 - as)
        out = co / ao

    Without alpha this is ``out = Cb + as (B(Cb, Cs) - Cb)``. ``B`` is the blend mode's
    function (W3C; ``add`` is ``min(1, Cb + Cs)``)::

        normal Cs    multiply Cb Cs    screen Cb + Cs - Cb Cs    darken min    lighten max
        overlay      2 Cb Cs if Cb <= 0.5 else 1 - 2 (1 - Cb)(1 - Cs)
        soft_light   Cb - (1 - 2 Cs) Cb (1 - Cb) if Cs <= 0.5 else Cb + (2 Cs - 1)(D(Cb) - Cb),
                     D(Cb) = ((16 Cb - 12) Cb + 4) Cb if Cb <= 0.25 else sqrt(Cb)
        difference   |Cb - Cs|         add min(1, Cb + Cs)

    A source image of another size is stretched to this one, resampled on premultiplied
    colour, so its soft or transparent edges leave no dark fringe; a gray source over a
    BGR image is replicated, a BGR source over gray takes its luma. The source planes,
    ``as`` and ``1 - as`` are built once per size and parameters and kept on the device;
    the blend itself is device arithmetic (multiply, add_weighted, divide, threshold).
    """
    be, spec = ctx.backend, ctx.info
    colors = color_channels(spec)
    stamp = source.key() if isinstance(source, ImageValue) else None if source is None else masks.file_stamp(source)
    # a colour's alpha depends on the image having alpha (one value: alpha too), so that is in the key
    src_key = ("blend-src", stamp, None if source is not None else (color, spec.channels == 4),
               spec.size, colors)
    alpha_key = (src_key, opacity, _weight_key(mask, feather, feather_method, invert, spec))

    planes = once(lambda: _source(source, color, spec))
    source_alpha = once(lambda: (planes()[1] * np.float32(opacity)
                                 * _weight(mask, feather, feather_method, invert, spec)).astype(np.float32))
    cs = be.cached((src_key, "color"), lambda: planes()[0].reshape(
        (spec.height, spec.width) if colors == 1 else (spec.height, spec.width, colors)))
    a_s = be.cached((alpha_key, "as", colors), lambda: replicate(source_alpha(), colors))
    full = spec.max_value
    if spec.channels != 4:
        cb = be.convert(img, np.float32, 1.0 / full)
        mixed = blend_function(be, mode, cb, cs)
        out = be.add_weighted(be.multiply(be.add_weighted(mixed, 1.0, cb, -1.0), a_s), 1.0, cb, 1.0)
        return be.convert(out, spec.dtype, full)
    *backdrop, ab = be.split(be.convert(img, np.float32, 1.0 / full))
    cb, ab3 = be.merge(backdrop), be.merge([ab] * 3)
    a_s1 = be.cached((alpha_key, "as", 1), source_alpha)
    rest3 = be.cached((alpha_key, "1-as", 3), lambda: replicate((1.0 - source_alpha()).astype(np.float32), 3))
    rest1 = be.cached((alpha_key, "1-as", 1), lambda: (1.0 - source_alpha()).astype(np.float32))
    mixed = blend_function(be, mode, cb, cs)
    cs_prime = be.add_weighted(cs, 1.0, be.multiply(ab3, be.add_weighted(mixed, 1.0, cs, -1.0)), 1.0)
    co = be.add_weighted(be.multiply(a_s, cs_prime), 1.0, be.multiply(be.multiply(ab3, cb), rest3), 1.0)
    ao = be.add_weighted(a_s1, 1.0, be.multiply(ab, rest1), 1.0)
    return unpremultiply(be, co, ao, spec)
