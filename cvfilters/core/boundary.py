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

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from cvfilters.core.arrays import LAYOUTS, PIL_MODES, as_array, is_device, is_pil, pil_array
from cvfilters.core.context import SUPPORTED_DTYPES
from cvfilters.core.depths import float32_to_int16, int16_to_float32
from cvfilters.core.errors import InvalidImageError
from cvfilters.core.pixels import is_gray

DTYPE_NOTE = ("Python: float64 runs as float32 and returns float64; int16 runs as float32 f = (v + 32768) / 65535 "
              "and returns int16; PIL images (L, LA, RGB, RGBA, I;16, F) return PIL images")
_F32, _F64, _I16 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int16)


@dataclass(frozen=True)
class Entry:
    """How one image crossed in, so that its result crosses back out as the same kind of thing."""

    order: str
    pil: bool = False
    dtype: np.dtype | None = None
    chw: bool = False
    gray_alpha: bool = False


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
        array, order = pil_array(image, what), "rgb"
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
        out = np.dstack([_gray_plane(out[..., :3], entry.order), out[..., 3]])
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


def _internal_dtype(array: np.ndarray, what: str) -> np.ndarray:
    if array.dtype in SUPPORTED_DTYPES:
        return array
    if array.dtype == _F64:
        return array.astype(np.float32)
    if array.dtype == _I16:
        return int16_to_float32(array)
    raise InvalidImageError(f"{what}: dtype {array.dtype} is not supported "
                            "(use uint8, uint16, int16, float32 or float64)")


def _from_float32(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == _I16:
        return float32_to_int16(out)
    return out.astype(dtype)


def _gray_plane(color: np.ndarray, order: str) -> np.ndarray:
    """The gray plane of (H, W, 3) colour: channel 0 where B, G and R are equal, else BT.601 luma."""
    if is_gray(color):
        return color[..., 0]
    code = cv2.COLOR_RGB2GRAY if order == "rgb" else cv2.COLOR_BGR2GRAY
    return cv2.cvtColor(np.ascontiguousarray(color), code)


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


__all__ = ["DTYPE_NOTE", "Entry", "enter", "leave", "swap_native"]
