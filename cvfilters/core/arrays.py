"""Arrays as callers hold them, seen as numpy: array-likes, PIL images, R/B order, images as parameter values.

The low half of the Python boundary (:mod:`cvfilters.core.boundary` is the other): no
dtype or layout conversion, so parameters (:mod:`cvfilters.registry.params`), ``io`` and the
statistics can use it from below the pipeline.

- :func:`as_array`: a numpy view of anything with ``__dlpack__`` or ``__array__``,
  without a copy where it allows.
- :func:`pil_array`: the pixels of a PIL image of a supported mode (RGB by nature).
- :func:`swap_rb`: RGB <-> BGR on the host (alpha kept, gray untouched).
- :func:`host_bgr`: a caller's image as a BGR(A) host array (``write``).
- :class:`ImageValue`: an image given as a parameter value (match_histogram's
  reference, blend's source), hashable by content, read in the run's channel order.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from typing import Any, Literal, Protocol, TypeAlias, TypeVar

import cv2
import numpy as np

from cvfilters.core.defaults import active_channel_order
from cvfilters.core.errors import InvalidImageError

Layout = Literal["hwc", "chw"]
LAYOUTS = ("hwc", "chw")
PIL_MODES = {"L": (np.uint8, 1), "LA": (np.uint8, 2), "RGB": (np.uint8, 3), "RGBA": (np.uint8, 4),
             "I;16": (np.uint16, 1), "F": (np.float32, 1)}
_CVT_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32))  # what cv2.cvtColor takes


class SupportsArray(Protocol):
    """An array-like numpy can view: ``__array__`` (xarray, pandas, most tensors)."""

    def __array__(self) -> Any: ...


class SupportsDLPack(Protocol):
    """A tensor that exports DLPack (torch, cupy and jax on the host, numpy)."""

    def __dlpack__(self) -> Any: ...


# What the typed API takes besides ndarrays and PIL images; the result of these is an ndarray.
ArrayLike: TypeAlias = "SupportsArray | SupportsDLPack"
_T = TypeVar("_T")
# Many images for Pipeline.map: not Iterable, which an ndarray batch would match too.
Many: TypeAlias = Sequence[_T] | Iterator[_T]


def is_pil(image: Any) -> bool:
    """True for a PIL image (without importing Pillow when the caller never did)."""
    # Another thread may be importing Pillow right now: until its Image class exists, no PIL image can.
    image_class = getattr(sys.modules.get("PIL.Image"), "Image", None)
    return image_class is not None and isinstance(image, image_class)


def is_device(image: Any) -> bool:
    return isinstance(image, (cv2.UMat, cv2.cuda.GpuMat))

def as_array(image: Any, what: str = "image") -> np.ndarray:
    """A numpy view of an array-like (``__dlpack__``, ``__array__``), without a copy where it allows."""
    if isinstance(image, np.ndarray):
        return image
    if hasattr(image, "__dlpack__"):
        try:
            return np.from_dlpack(image)
        except (BufferError, TypeError, ValueError, RuntimeError):
            pass  # another device or a dtype numpy lacks: __array__ may still copy it to the host
    if hasattr(image, "__array__"):
        try:
            array = np.asarray(image)
        except Exception as exc:  # noqa: BLE001 (a third-party __array__ raises anything)
            raise InvalidImageError(f"{what}: {type(image).__name__}.__array__ failed ({_first_line(exc)})") from None
        if array.dtype != object:
            return array
    raise InvalidImageError(f"{what}: expected a numpy array, PIL image, cv2.UMat, cv2.cuda.GpuMat or an object "
                            f"with __array__ or __dlpack__, not {type(image).__name__}")


def swap_rb(array: np.ndarray) -> np.ndarray:
    """A host array with channels 0 and 2 swapped (RGB <-> BGR, alpha kept); gray returned as is."""
    if array.ndim != 3 or array.shape[2] not in (3, 4):
        return array
    if array.dtype in _CVT_DTYPES:
        code = cv2.COLOR_RGB2BGR if array.shape[2] == 3 else cv2.COLOR_RGBA2BGRA
        return cv2.cvtColor(np.ascontiguousarray(array), code)
    return np.ascontiguousarray(array[..., [2, 1, 0, 3][: array.shape[2]]])


def host_bgr(image: Any, order: str, what: str = "image") -> np.ndarray:
    """A host array in BGR(A) order of a numpy array, array-like or PIL image (whose order is RGB); dtype kept."""
    if is_pil(image):
        return swap_rb(pil_array(image, what))
    array = as_array(image, what)
    return swap_rb(array) if order == "rgb" else array


def pil_array(image: Any, what: str = "image") -> np.ndarray:
    """The pixels of a PIL image (RGB(A) order), or a one-line error for an unsupported mode."""
    if image.mode not in PIL_MODES:
        raise InvalidImageError(f"{what}: PIL mode {image.mode} is not supported (use {', '.join(PIL_MODES)}; "
                                f"image.convert('RGB') for the others)")
    dtype, _ = PIL_MODES[image.mode]
    return np.asarray(image).astype(dtype, copy=False)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class ImageValue:
    """An image given from Python as a parameter value (match_histogram's reference, blend's source).

    Hashable by content, so caches keyed by parameters work; its colours are in the
    caller's channel order (the run's, or RGB for a PIL image) and :meth:`bgr` gives
    them in the BGR order filters compute in.
    """

    __slots__ = ("_array", "_digest", "_order")

    def __init__(self, image: Any, what: str = "image") -> None:
        order = "rgb" if is_pil(image) else None
        if isinstance(image, cv2.UMat):
            array = image.get()
        elif isinstance(image, cv2.cuda.GpuMat):
            array = image.download()
        else:
            array = pil_array(image, what) if order else as_array(image, what)
        if array.dtype not in _CVT_DTYPES or array.ndim not in (2, 3):
            raise InvalidImageError(f"{what}: dtype {array.dtype}, shape {array.shape} is not an image "
                                    "(use uint8, uint16 or float32, H x W or H x W x C)")
        array = np.array(array, copy=True)
        array.setflags(write=False)
        self._array = array
        import hashlib  # here: only these arrays need it

        self._digest = hashlib.blake2b(np.ascontiguousarray(array).tobytes(), digest_size=16).hexdigest()
        self._order = order

    @property
    def order(self) -> str:
        """The channel order of the colours: RGB for PIL images, else the order of the run in progress."""
        return self._order or active_channel_order()

    def key(self) -> tuple[Any, ...]:
        """A cache key naming the content and the order it is read in."""
        return ("array", self._digest, self._array.shape, self._array.dtype.str, self.order)

    def bgr(self) -> np.ndarray:
        """The image (read-only) in BGR(A) order for the run in progress."""
        return swap_rb(self._array) if self.order == "rgb" else self._array

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ImageValue) and other._digest == self._digest and other._order == self._order \
            and other._array.shape == self._array.shape and other._array.dtype == self._array.dtype

    def __hash__(self) -> int:
        return hash((self._digest, self._order))

    def __str__(self) -> str:
        shape = "x".join(str(n) for n in self._array.shape)
        return f"<{'PIL image' if self._order else 'array'} {shape} {self._array.dtype}>"

    __repr__ = __str__


__all__ = ["LAYOUTS", "PIL_MODES", "ArrayLike", "ImageValue", "Layout", "Many", "SupportsArray", "SupportsDLPack",
           "as_array", "host_bgr", "is_device", "is_pil", "pil_array", "swap_rb"]
