"""Pixel facts, written once: full scale per dtype, BT.601 luma, premultiplied alpha, unit floats.

This is the lowest layer: it knows numpy and the backend primitives' names, nothing of
filters. Every module that needs one of these facts imports it from here.

- :func:`full_scale`: the value of full intensity, 255, 65535, or 1.0 for float images.
- :data:`BT601_BGR` / :data:`LUMA_BGR`: the luma weights of B, G, R (``cv2.COLOR_BGR2GRAY``).
- :func:`premultiply` / :func:`unpremultiply`: colour times alpha and back, in float32
  0..1, with one :data:`ALPHA_EPSILON`.
- :func:`to_unit_float` (0..1) and :func:`to_float32_same_units` (the image's own units):
  two conversions with names that say which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from cvfilters.core.types import Image

if TYPE_CHECKING:
    from cvfilters.backends.base import Backend

BT601_BGR = (0.114, 0.587, 0.299)
"""BT.601 luma weights of B, G, R: ``Y = 0.114 B + 0.587 G + 0.299 R`` (``cv2.COLOR_BGR2GRAY``)."""
LUMA_BGR = np.array(BT601_BGR)
""":data:`BT601_BGR` as a float64 array, for matrix products."""
ALPHA_EPSILON = 1e-12
"""Added to alpha before un-premultiplying, so fully transparent pixels divide to 0, not NaN."""


class InfoLike(Protocol):
    """What these helpers read of an :class:`~cvfilters.core.context.ImageInfo` (which sits above this module)."""

    @property
    def dtype(self) -> np.dtype[Any]: ...

    @property
    def max_value(self) -> float: ...


class ContextLike(Protocol):
    """What these helpers read of a :class:`~cvfilters.core.context.Context`."""

    @property
    def backend(self) -> Backend: ...

    @property
    def info(self) -> InfoLike: ...


def is_gray(image: np.ndarray) -> bool:
    """Whether a host image with 3 or 4 channels has B = G = R everywhere (a gray picture stored as colour)."""
    return image.ndim == 3 and image.shape[2] in (3, 4) and bool(
        np.array_equal(image[..., 0], image[..., 1]) and np.array_equal(image[..., 1], image[..., 2]))


def full_scale(dtype: np.dtype[Any] | type) -> float:
    """The value of full intensity of a dtype: 255, 65535 (the integer maximum), or 1.0 for float images."""
    dtype = np.dtype(dtype)
    return float(np.iinfo(dtype).max) if dtype.kind in "ui" else 1.0


def split_color(color: tuple[float, ...], channels: int, *, bgra: bool) -> tuple[tuple[float, ...], float]:
    """``(colour, alpha)`` of a colour parameter (fractions of full scale) for 1 or 3 colour channels.

    Colour parameters hold RGB(A) values, as people write colours
    (:data:`cvfilters.registry.params.COLOR_SYNTAX`); this is where they become the image's BGR
    order. One value is every channel: alpha too where ``bgra`` (``[0]`` is transparent
    black), else opaque. Two values are gray and alpha, three RGB (opaque), four RGBA.
    One colour channel takes the BT.601 luma.
    """
    values = tuple(float(v) for v in color)
    bgr: tuple[float, ...]
    if len(values) == 1:
        bgr, alpha = values * 3, values[0] if bgra else 1.0
    elif len(values) == 2:
        bgr, alpha = (values[0],) * 3, values[1]
    else:
        bgr, alpha = values[2::-1], values[3] if len(values) == 4 else 1.0
    if channels == 1:
        return (sum(w * c for w, c in zip(BT601_BGR, bgr, strict=True)),), alpha
    return bgr, alpha


def premultiply(be: Backend, image: Image, spec: InfoLike) -> tuple[Image, Image]:
    """``(colour * alpha, alpha)`` of a 4-channel native image of ``be``, float32 0..1."""
    *color, alpha = be.split(be.convert(image, np.float32, 1.0 / spec.max_value))
    return be.multiply(be.merge(color), be.merge([alpha] * 3)), alpha


def unpremultiply(be: Backend, color: Image, alpha: Image, spec: InfoLike) -> Image:
    """The ``spec`` image of premultiplied float32 colour and alpha (both clipped to 0..1)."""
    alpha = be.clip(alpha, 0.0, 1.0)
    divisor = be.convert(be.merge([alpha] * 3), np.float32, 1.0, ALPHA_EPSILON)
    straight = be.clip(be.divide(color, divisor), 0.0, 1.0)
    return be.convert(be.merge([*be.split(straight), alpha]), spec.dtype, spec.max_value)


def to_unit_float(ctx: ContextLike, img: Image) -> Image:
    """The image as float32 in 0..1 of full scale (a copy for float32 input)."""
    return ctx.backend.convert(img, np.float32, 1.0 / ctx.info.max_value)


def from_unit_float(ctx: ContextLike, img: Image) -> Image:
    """A float32 0..1 image back in ``ctx.info.dtype`` (rounded and saturated for integers)."""
    return ctx.backend.convert(img, ctx.info.dtype, ctx.info.max_value)


def to_float32_same_units(ctx: ContextLike, img: Image) -> Image:
    """The image as float32 in its own units, 0..255 stays 0..255 (a no-op for float32 images)."""
    return img if ctx.info.dtype == np.float32 else ctx.backend.convert(img, np.float32)
