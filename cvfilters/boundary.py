"""Images crossing the Python API's boundary: what callers hold in, the same kind back out.

Inside, cvfilters runs on uint8, uint16 or float32 arrays (or ``cv2.UMat`` /
``cv2.cuda.GpuMat``) of 1, 3 or 4 channels in BGR(A) order, H x W x C. At the
boundary of ``apply``, ``Pipeline`` runs and ``Pipeline.map``:

- PIL images (modes L, LA, RGB, RGBA, I;16, F) become arrays and come back as PIL
  images of the same mode; they are RGB by nature, whatever ``channel_order`` says.
- Any object with ``__dlpack__`` or ``__array__`` (a torch or cupy tensor on the host,
  an xarray, ...) is taken as a numpy array without a copy where its layout allows;
  the result is a numpy array.
- ``layout="chw"``: C x H x W arrays (torch's layout) are read as H x W x C and
  the result is C x H x W again.
- float64 runs as float32 (OpenCV's primitives take float32) and comes back float64:
  values keep their meaning (0..1 is black..white), precision is float32's.
- int16 runs as float32 with ``f = (v + 32768) / 65535`` (the full int16 range is
  0..1, so every level survives) and comes back rounded to int16.
- Gray + alpha (2 channels, PIL's LA) runs as BGRA with the gray repeated and comes
  back as gray (BT.601 luma, exact where B, G and R stayed equal) + alpha.
- ``channel_order="rgb"``: R and B are swapped on the way in and out (alpha and
  1-channel images untouched), so every colour-aware filter, matrix, palette and luma
  weight is right by construction. The swap runs where the image lives (device
  included; see :func:`swap_native`).

Anything else is refused with one line naming what is allowed.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, TypeVar

import cv2
import numpy as np

from .context import SUPPORTED_DTYPES
from .defaults import active_channel_order
from .errors import InvalidImageError

Layout = Literal["hwc", "chw"]
LAYOUTS = ("hwc", "chw")
PIL_MODES = {"L": (np.uint8, 1), "LA": (np.uint8, 2), "RGB": (np.uint8, 3), "RGBA": (np.uint8, 4),
             "I;16": (np.uint16, 1), "F": (np.float32, 1)}
INT16_OFFSET, INT16_SCALE = 32768.0, 65535.0
DTYPE_NOTE = ("Python: float64 runs as float32 and returns float64; int16 runs as float32 f = (v + 32768) / 65535 "
              "and returns int16; PIL images (L, LA, RGB, RGBA, I;16, F) return PIL images")
_F32, _F64, _I16 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int16)


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


@dataclass(frozen=True)
class Entry:
    """How one image crossed in, so that its result crosses back out as the same kind of thing."""

    order: str
    pil: bool = False
    dtype: np.dtype | None = None
    chw: bool = False
    gray_alpha: bool = False


def is_pil(image: Any) -> bool:
    """True for a PIL image (without importing Pillow when the caller never did)."""
    module = sys.modules.get("PIL.Image")
    return module is not None and isinstance(image, module.Image)


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


def enter(image: Any, order: str, layout: str = "hwc", what: str = "image") -> tuple[Any, Entry]:
    """The internal form of ``image`` (host conversions only; see :func:`swap_native`) and how it came in."""
    if layout not in LAYOUTS:
        raise InvalidImageError(f"layout={layout!r} is not one of {', '.join(LAYOUTS)}")
    if is_device(image):
        if layout != "hwc":
            raise InvalidImageError(f"{what}: layout='chw' applies to host arrays, not {type(image).__name__}")
        return image, Entry(order)
    pil = is_pil(image)
    if pil:
        array, order = _from_pil(image, what), "rgb"
    else:
        array = as_array(image, what)
    chw = layout == "chw" and array.ndim == 3
    if chw:
        array = array.transpose(1, 2, 0)
    original = array.dtype
    array = _internal_dtype(array, what)
    gray_alpha = array.ndim == 3 and array.shape[2] == 2
    if gray_alpha:
        gray, alpha = array[..., 0], array[..., 1]
        array = np.dstack([gray, gray, gray, alpha])
    if chw and not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    return array, Entry(order, pil, original if original != array.dtype else None, chw, gray_alpha)


def leave(result: Any, entry: Entry) -> Any:
    """The result of a run in the form its input came in (see :func:`enter`)."""
    if not isinstance(result, np.ndarray):
        return result
    out = result
    if entry.gray_alpha and out.ndim == 3 and out.shape[2] == 4:
        out = np.dstack([_gray_of(out[..., :3], entry.order), out[..., 3]])
    if entry.dtype is not None and out.dtype == _F32:
        out = _from_float32(out, entry.dtype)
    if entry.chw and out.ndim == 3:
        out = np.ascontiguousarray(out.transpose(2, 0, 1))
    if entry.pil:
        return _to_pil(out)
    return out


def swap_native(be: Any, native: Any, channels: int) -> Any:
    """R and B swapped on the backend where ``native`` lives (3 or 4 channels; others unchanged)."""
    if channels == 3:
        return be.cvt_color(native, cv2.COLOR_RGB2BGR)
    if channels == 4:
        return be.cvt_color(native, cv2.COLOR_RGBA2BGRA)
    return native


def swap_rb(array: np.ndarray) -> np.ndarray:
    """A host array with channels 0 and 2 swapped (RGB <-> BGR, alpha kept); gray returned as is."""
    if array.ndim != 3 or array.shape[2] not in (3, 4):
        return array
    if array.dtype in SUPPORTED_DTYPES:
        code = cv2.COLOR_RGB2BGR if array.shape[2] == 3 else cv2.COLOR_RGBA2BGRA
        return cv2.cvtColor(np.ascontiguousarray(array), code)
    return np.ascontiguousarray(array[..., [2, 1, 0, 3][: array.shape[2]]])


def host_bgr(image: Any, order: str, what: str = "image") -> np.ndarray:
    """A host array in BGR(A) order of a numpy array, array-like or PIL image (whose order is RGB); dtype kept."""
    if is_pil(image):
        return swap_rb(_from_pil(image, what))
    array = as_array(image, what)
    return swap_rb(array) if order == "rgb" else array


def _internal_dtype(array: np.ndarray, what: str) -> np.ndarray:
    if array.dtype in SUPPORTED_DTYPES:
        return array
    if array.dtype == _F64:
        return array.astype(np.float32)
    if array.dtype == _I16:
        return ((array.astype(np.float32) + np.float32(INT16_OFFSET)) / np.float32(INT16_SCALE)).astype(np.float32)
    raise InvalidImageError(f"{what}: dtype {array.dtype} is not supported "
                            "(use uint8, uint16, int16, float32 or float64)")


def _from_float32(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == _I16:
        levels = np.rint(out.astype(np.float64) * INT16_SCALE - INT16_OFFSET)
        return np.clip(levels, -32768, 32767).astype(np.int16)
    return out.astype(dtype)


def _gray_of(color: np.ndarray, order: str) -> np.ndarray:
    """The gray plane of (H, W, 3) colour: channel 0 where B, G and R are equal, else BT.601 luma."""
    if np.array_equal(color[..., 0], color[..., 1]) and np.array_equal(color[..., 1], color[..., 2]):
        return color[..., 0]
    code = cv2.COLOR_RGB2GRAY if order == "rgb" else cv2.COLOR_BGR2GRAY
    return cv2.cvtColor(np.ascontiguousarray(color), code)


def _from_pil(image: Any, what: str) -> np.ndarray:
    if image.mode not in PIL_MODES:
        raise InvalidImageError(f"{what}: PIL mode {image.mode} is not supported (use {', '.join(PIL_MODES)}; "
                                f"image.convert('RGB') for the others)")
    dtype, _ = PIL_MODES[image.mode]
    return np.asarray(image).astype(dtype, copy=False)


def _to_pil(array: np.ndarray) -> Any:
    from PIL import Image

    channels = 1 if array.ndim == 2 else array.shape[2]
    mode = next((m for m, (dt, c) in PIL_MODES.items() if np.dtype(dt) == array.dtype and c == channels), None)
    if mode is None:
        raise InvalidImageError(f"the result ({array.dtype}, {channels} channels) has no PIL mode; "
                                "pass a numpy array to get it as one")
    if channels == 1 and array.ndim == 3:
        array = array[..., 0]
    return Image.fromarray(np.ascontiguousarray(array))  # Pillow picks ``mode`` from the dtype and shape


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
        array, _ = enter(image, order or "bgr", what=what)
        if is_device(array):
            array = array.get() if isinstance(array, cv2.UMat) else array.download()
        array = np.array(array, copy=True)
        array.setflags(write=False)
        self._array = array
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


__all__ = ["DTYPE_NOTE", "LAYOUTS", "ArrayLike", "Entry", "ImageValue", "Layout", "Many", "SupportsArray",
           "SupportsDLPack", "as_array", "enter", "host_bgr", "is_device", "is_pil", "leave", "swap_native", "swap_rb"]
