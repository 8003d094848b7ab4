"""Custom operators: convolution with any kernel, and derivative filters."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from ..context import Context
from ..params import Param
from ..registry import register
from .common import border_param, with_border


def _check_convolve(params: dict[str, Any]) -> str | None:
    if params["normalize"] and abs(sum(map(sum, params["kernel"]))) < 1e-12:
        return "normalize=true needs a kernel whose values do not sum to 0"
    return None


def prepare_kernel(kernel: tuple[tuple[float, ...], ...], *, mode: str = "correlate",
                   normalize: bool = False, scale: float = 1.0) -> np.ndarray:
    """The float32 correlation kernel that ``cv2.filter2D`` runs for these settings."""
    array = np.asarray(kernel, dtype=np.float64)
    if mode == "convolve":
        array = array[::-1, ::-1]
    if normalize:
        array = array / array.sum()
    return (array * scale).astype(np.float32)


@register(
    category="convolve",
    summary="Correlate or convolve with any 2-D kernel, plus bias and scale.",
    params=[
        Param("kernel", "kernel", None, required=True, example=((0, -1, 0), (-1, 5, -1), (0, -1, 0)),
              help="2-D matrix: [[0,-1,0],[-1,5,-1],[0,-1,0]], or @file (.txt/.csv rows, .npy, .json)"),
        Param("mode", "choice", "correlate", choices=("correlate", "convolve"),
              help="correlate applies the kernel as written (cv2.filter2D); convolve flips it in x and y first"),
        Param("normalize", "bool", False, help="divide the kernel by the sum of its values"),
        Param("bias", "float", 0.0, min=-1.0, max=1.0, unit="fraction of full scale",
              help="added after filtering: 0.5 is 128 for uint8, 32768 for uint16, 0.5 for float32"),
        Param("scale", "float", 1.0, min=-1000.0, max=1000.0, help="multiplies the kernel (after normalize)"),
        border_param(),
    ],
    alpha="premultiply",
    check=_check_convolve,
)
def convolve(ctx: Context, img: Any, *, kernel: tuple[tuple[float, ...], ...], mode: str, normalize: bool,
             bias: float, scale: float, border: str) -> Any:
    """``out = scale * (kernel (*) image) + bias * full_scale``, saturated to the image's dtype.

    ``(*)`` is correlation (``mode=correlate``, what ``cv2.filter2D`` computes:
    ``out(x, y) = sum k(i, j) * in(x + i - ax, y + j - ay)``) or convolution
    (``mode=convolve``, the kernel flipped in both axes). The anchor is the kernel's
    centre ``(w // 2, h // 2)``. Pixels outside the image come from the ``border`` mode.
    """
    matrix = prepare_kernel(kernel, mode=mode, normalize=normalize, scale=scale)
    delta = bias * ctx.spec.max_value
    rows, cols = matrix.shape
    return with_border(ctx, img, (cols, rows), border, lambda im, b: ctx.be.filter2d(im, matrix, b, delta))


def _check_sobel(params: dict[str, Any]) -> str | None:
    if params["magnitude"]:
        return None
    if params["dx"] + params["dy"] == 0:
        return "dx + dy must be at least 1 (or set magnitude=true)"
    if params["ksize"] > 1 and max(params["dx"], params["dy"]) >= params["ksize"]:
        return f"derivative order {max(params['dx'], params['dy'])} needs ksize > order"
    return None


@register(
    category="convolve",
    summary="Sobel derivative (absolute value) or gradient magnitude.",
    params=[
        Param("dx", "int", 1, min=0, max=2, help="order of the derivative in x"),
        Param("dy", "int", 0, min=0, max=2, help="order of the derivative in y"),
        Param("ksize", "int", 3, min=1, max=7, odd=True, unit="px", help="aperture: 1, 3, 5 or 7"),
        Param("magnitude", "bool", False, help="sqrt(Gx^2 + Gy^2) of the first derivatives; dx, dy are ignored"),
        Param("scale", "float", 1.0, min=0.0, max=1000.0, help="multiplies the result before saturation"),
        border_param(),
    ],
    alpha="premultiply",
    check=_check_sobel,
)
def sobel(ctx: Context, img: Any, *, dx: int, dy: int, ksize: int, magnitude: bool, scale: float,
          border: str) -> Any:
    """Sobel derivative computed in float32 (``cv2.Sobel``), stored as ``|d| * scale``.

    The absolute value keeps one convention for every dtype (like
    ``cv2.convertScaleAbs``); integer results saturate at full scale.
    """
    be = ctx.be
    reach = (ksize // 2 + 1, ksize // 2 + 1)

    def derivative(ox: int, oy: int) -> Any:
        return with_border(ctx, img, reach, border, lambda im, b: be.sobel(im, cv2.CV_32F, ox, oy, ksize, b))

    result = be.magnitude(derivative(1, 0), derivative(0, 1)) if magnitude else derivative(dx, dy)
    return be.abs_convert(result, ctx.spec.dtype, scale)
