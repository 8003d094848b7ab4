"""Running work on one image: validate it, choose the backend, move it there and back.

Below the registry and the pipeline: a filter object called on an image
(``Filter.__call__``) and a pipeline run both go through :func:`run_image`, which
knows nothing of filters, only of a ``body(ctx, native) -> (native, spec)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import cv2
import numpy as np

from cvfilters.backends import Backend, Counters, availability, get_backend, native_backend, select
from cvfilters.core import boundary
from cvfilters.core.context import SUPPORTED_CHANNELS, SUPPORTED_DTYPES, Context, ImageInfo
from cvfilters.core.defaults import resolve_channel_order, running_in
from cvfilters.core.errors import InvalidImageError
from cvfilters.core.types import Image, ImageT

_CV_DTYPE: dict[int, np.dtype[Any]] = {
    cv2.CV_8U: np.dtype(np.uint8), cv2.CV_16U: np.dtype(np.uint16), cv2.CV_32F: np.dtype(np.float32)}

Body = Callable[[Context, Image], tuple[Image, ImageInfo]]
"""``body(ctx, native) -> (native result, its spec)``: the work run on the chosen backend."""


def run_image(image: Any, backend: str, body: Body, *, channel_order: str | None = None,
              layout: str = "hwc", point_only: bool = False) -> tuple[Any, Backend, Counters]:
    """Run ``body`` on ``image`` on a backend: upload once, download once.

    ``image`` crosses the Python boundary first (:mod:`cvfilters.core.boundary`: PIL images,
    array-likes, float64/int16, ``layout``), and an RGB(A) image (``channel_order``, or
    the process default) has R and B swapped on the device before ``body`` and back after
    it, so ``body`` always sees BGR(A). ``point_only`` work stays on cpu under ``auto``
    (:func:`cvfilters.backends.select`).

    Returns
    -------
    (result, backend, counters)
        The result has the input's kind, type (and shape, when the spec is unchanged);
        the counters are what this run added to the backend's.
    """
    host, entry = boundary.enter(image, resolve_channel_order(channel_order), layout)
    spec = info_of(host)
    be = select(backend, host, spec.pixels, point_only=point_only)
    before = be.counters.snapshot()
    native = to_backend(host, be)
    swap = entry.order == "rgb"
    if swap:
        native = boundary.swap_native(be, native, spec.channels)
    with running_in(entry.order):
        native, current = body(Context(be, spec), native)
    if swap:
        native = boundary.swap_native(be, native, current.channels)
    out = from_backend(native, be, host, reshape=current == spec)
    return boundary.leave(out, entry), be, be.counters.since(before)


def info_of(image: Image) -> ImageInfo:
    """The :class:`ImageInfo` of an image, validating what cvfilters processes."""
    if isinstance(image, np.ndarray):
        spec = ImageInfo(image.shape[0], image.shape[1], 1 if image.ndim == 2 else image.shape[-1],
                         image.dtype) if image.ndim in (2, 3) else None
    elif isinstance(image, cv2.cuda.GpuMat):
        width, height = image.size()
        spec = ImageInfo(height, width, image.channels(), _CV_DTYPE.get(image.depth(), np.dtype(np.int8)))
    elif isinstance(image, cv2.UMat):
        return info_of(image.get())  # a UMat does not expose its shape: read it once
    else:
        raise InvalidImageError(f"expected a numpy array, cv2.UMat or cv2.cuda.GpuMat, not {type(image).__name__}")
    if spec is None or spec.channels not in SUPPORTED_CHANNELS:
        shape = getattr(image, "shape", "?")
        raise InvalidImageError(f"image shape {shape} is not H x W or H x W x C with C in 1, 2 (gray + alpha), 3, 4")
    if spec.dtype not in SUPPORTED_DTYPES:
        raise InvalidImageError(f"image dtype {spec.dtype} is not supported (use uint8, uint16 or float32)")
    if spec.height == 0 or spec.width == 0:
        raise InvalidImageError("image is empty (0 pixels)")
    return spec


def to_backend(image: Image, be: Backend) -> Image:
    """``image`` as a native image of ``be`` (counted as one upload when it moves)."""
    if be.is_native(image):
        return image
    if isinstance(image, np.ndarray):
        return be.upload(image)
    return be.upload(get_backend(native_backend(image) or "cpu").download(image))


def from_backend(native: Image, be: Backend, original: ImageT, *, reshape: bool) -> ImageT:
    """A native result of ``be`` in the type of ``original`` (its shape too, when ``reshape``)."""
    if isinstance(original, np.ndarray):
        # cv2 drops a trailing axis of length 1 and slicing may leave a view: restore both.
        host = np.ascontiguousarray(be.download(native))
        result: Image = host.reshape(original.shape) if reshape else host
        return cast(ImageT, result)
    # a device image comes back as the same kind of device image (be, or the backend it lives on)
    if be.is_native(original):
        return cast(ImageT, native)
    return cast(ImageT, get_backend(native_backend(original) or "cpu").upload(be.download(native)))


def device_name(be: Backend) -> str:
    """The device a backend runs on, as its probe reported it."""
    return availability(be.name).device
