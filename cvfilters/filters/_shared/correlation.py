"""The correlation engine every kernel runs through: odd-sized, separable when rank 1, any border.

See :mod:`cvfilters.filters.convolve` for the depth policy.
"""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np

from cvfilters.backends import auto_gaussian_ksize
from cvfilters.core.context import Context
from cvfilters.core.types import Image
from cvfilters.filters._shared.common import with_border
from cvfilters.filters._shared.kernels import KernelData, gaussian_kernel

SEPARABLE_TOLERANCE = 1e-6  # rank-1 when the second singular value is at most this fraction of the first
SEPARABLE_MIN_SIDE = 3  # measured: 3x3 already runs 1.8x faster as two passes on cpu, the same on pocl


def prepare_kernel(kernel: KernelData | np.ndarray, *, mode: str = "correlate",
                   normalize: bool = False, scale: float = 1.0) -> np.ndarray:
    """The odd-sized float32 correlation kernel, anchored at its centre, for these settings.

    ``mode=convolve`` flips the kernel in x and y. An even side is padded with a zero so
    the anchor is explicit: after the last tap for ``correlate`` (OpenCV's and scipy's
    anchor ``w // 2``) and before the first for ``convolve`` (the flipped kernel's anchor
    ``w // 2 - 1``, scipy's ``ndimage.convolve``).
    """
    array = np.asarray(kernel, dtype=np.float64)
    if mode == "convolve":
        array = array[::-1, ::-1]
    if normalize:
        array = array / array.sum()
    rows, cols = array.shape
    if rows % 2 and cols % 2:
        return (array * scale).astype(np.float32)
    odd = np.zeros((rows | 1, cols | 1), np.float32)
    top, left = (rows % 2 == 0, cols % 2 == 0) if mode == "convolve" else (0, 0)
    odd[top : top + rows, left : left + cols] = array * scale
    return odd


def separate(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(kernel_x, kernel_y)`` with ``outer(kernel_y, kernel_x) == matrix`` if ``matrix`` is rank 1.

    Rank 1 within :data:`SEPARABLE_TOLERANCE` (second singular value relative to the
    first); None for kernels that are not, or are smaller than 3 x 3 (a 1-D kernel runs as
    it is).
    """
    if min(matrix.shape) < SEPARABLE_MIN_SIDE:
        return None
    u, s, vt = np.linalg.svd(matrix.astype(np.float64))
    if s[0] == 0.0 or s[1] > SEPARABLE_TOLERANCE * s[0]:
        return None
    ky, kx = u[:, 0] * math.sqrt(s[0]), vt[0] * math.sqrt(s[0])
    if ky.sum() < 0:
        kx, ky = -kx, -ky
    return kx.astype(np.float32).reshape(1, -1), ky.astype(np.float32).reshape(-1, 1)


@lru_cache(maxsize=128)
def _plan(shape: tuple[int, int], data: bytes) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    matrix = np.frombuffer(data, dtype=np.float32).reshape(shape)
    return matrix, separate(matrix)


def correlate(ctx: Context, img: Image, matrix: np.ndarray, border: str, *, delta: float = 0.0,
              ddepth: int = -1) -> Image:
    """The one path every kernel runs through: ``sum k(i, j) * in(x + i - a, y + j - a) + delta``.

    ``matrix`` is any 2-D kernel (:func:`prepare_kernel` makes it odd-sized); rank-1
    kernels of 3 x 3 and up run separably. ``ddepth=-1`` stores the image's dtype
    (rounded, saturated), ``cv2.CV_32F`` the float32 response.
    """
    matrix = prepare_kernel(matrix)
    full, factors = _plan(matrix.shape, np.ascontiguousarray(matrix).tobytes())
    rows, cols = full.shape
    if factors is None:
        run = lambda im, b: ctx.backend.filter2d(im, full, b, delta, ddepth)  # noqa: E731
    else:
        kx, ky = factors
        run = lambda im, b: ctx.backend.sep_filter2d(im, kx, ky, b, delta, ddepth)  # noqa: E731
    return with_border(ctx, img, (cols // 2, rows // 2), border, run)


def _response_depth(matrix: np.ndarray, dtype: np.dtype) -> int:
    """int16 when an integer kernel on uint8 cannot overflow it (exact, and what cv2 users run); else float32."""
    if dtype == np.uint8 and np.array_equal(matrix, np.round(matrix)) and np.abs(matrix).sum() * 255 <= 32767:
        return cv2.CV_16S
    return cv2.CV_32F


def respond(ctx: Context, img: Image, kernels: tuple[np.ndarray, ...], border: str, *, output: str,
            scale: float = 1.0, bias: float = 0.0) -> Image:
    """Run one kernel (``output`` clip or absolute) or an x/y pair (magnitude), then store.

    - ``clip``: ``saturate(scale * (K * in) + bias)``, one pass in the image's dtype;
    - ``absolute``: ``saturate(|scale * (K * in)| + bias)``;
    - ``magnitude``: ``saturate(scale * sqrt((Kx * in)^2 + (Ky * in)^2) + bias)``.

    ``bias`` is a fraction of full scale; ``saturate`` rounds and clamps integer results.
    """
    be, dtype, delta = ctx.backend, ctx.info.dtype, bias * ctx.info.max_value
    if output == "clip":
        (matrix,) = kernels
        return correlate(ctx, img, prepare_kernel(matrix, scale=scale), border, delta=delta)
    if output == "absolute":
        (matrix,) = kernels
        response = correlate(ctx, img, prepare_kernel(matrix), border, ddepth=_response_depth(matrix, dtype))
        if delta == 0.0:
            return be.abs_convert(response, dtype, scale)
        return be.convert(be.abs_convert(response, np.float32, scale), dtype, 1.0, delta)
    gx, gy = (correlate(ctx, img, prepare_kernel(k), border, ddepth=cv2.CV_32F) for k in kernels)
    return be.convert(be.magnitude(gx, gy), dtype, scale, delta)


def gaussian_blurred(ctx: Context, image: Image, sigma: float, border: str) -> Image:
    """The image blurred by :func:`gaussian_kernel` through :func:`correlate`, as float32 in its own units.

    An integer image is filtered straight into float32 (the same sums as converting it first,
    without the float copy). The kernel spans OpenCV's automatic size for the image's dtype
    (6 sigma + 1 for uint8, 8 sigma + 1 otherwise), the same as ``gaussian_blur``'s.
    """
    return correlate(ctx, image, gaussian_kernel(sigma, auto_gaussian_ksize(sigma, ctx.info.dtype)), border,
                     ddepth=cv2.CV_32F)


