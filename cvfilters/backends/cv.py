"""Primitives shared by the cpu and opencl backends.

OpenCV's transparent API accepts numpy arrays and ``cv2.UMat`` in the same calls, so
one implementation serves both; the subclasses only decide where images live.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from cvfilters.backends.base import CV_DEPTH, Backend, pooled_ranges
from cvfilters.core.types import DType


def _depth(dtype: DType | None) -> int:
    return -1 if dtype is None else CV_DEPTH[np.dtype(dtype)]


class CvBackend(Backend):
    """cv2 calls on whatever array type the subclass keeps images in."""

    def convert(self, image: Any, dtype: DType, alpha: float = 1.0, beta: float = 0.0) -> Any:
        # addWeighted with a zero second weight is Mat::convertTo(alpha, beta) for any array type.
        return cv2.addWeighted(image, alpha, image, 0.0, beta, dtype=_depth(dtype))

    def split(self, image: Any) -> list[Any]:
        return list(cv2.split(image))

    def merge(self, planes: Sequence[Any]) -> Any:
        return cv2.merge(list(planes))

    def pad(self, image: Any, top: int, bottom: int, left: int, right: int, border: int,
            value: float = 0.0) -> Any:
        return cv2.copyMakeBorder(image, top, bottom, left, right, border, value=(value,) * 4)

    def gaussian(self, image: Any, ksize: tuple[int, int], sigma: float, border: int) -> Any:
        return cv2.GaussianBlur(image, ksize, sigma, sigmaY=sigma, borderType=border)

    def box(self, image: Any, ksize: tuple[int, int], border: int) -> Any:
        return cv2.blur(image, ksize, borderType=border)

    def filter2d(self, image: Any, kernel: np.ndarray, border: int, delta: float = 0.0,
                 ddepth: int = -1) -> Any:
        return cv2.filter2D(image, ddepth, kernel, delta=delta, borderType=border)

    def sep_filter2d(self, image: Any, kernel_x: np.ndarray, kernel_y: np.ndarray, border: int,
                     delta: float = 0.0, ddepth: int = -1) -> Any:
        return cv2.sepFilter2D(image, ddepth, kernel_x, kernel_y, delta=delta, borderType=border)

    def sobel(self, image: Any, ddepth: int, dx: int, dy: int, ksize: int, border: int) -> Any:
        return cv2.Sobel(image, ddepth, dx, dy, ksize=ksize, borderType=border)

    def magnitude(self, x: Any, y: Any) -> Any:
        return cv2.magnitude(x, y)

    def abs_convert(self, image: Any, dtype: DType, alpha: float = 1.0) -> Any:
        if np.dtype(dtype) == np.uint8:
            return cv2.convertScaleAbs(image, alpha=alpha)
        # Python scalars are ambiguous in cv2 (a float is Scalar(v, 0, 0, 0); a tuple is
        # an array for 1x1 images), so arithmetic with constants goes through convert(). The
        # negation is float32 (no int16 saturation of -32768), float64 for a float64 result
        # (a float32 step would round |-0.1| and overflow |-1e300|).
        negation = np.float64 if np.dtype(dtype) == np.float64 else np.float32
        return self.convert(cv2.max(image, self.convert(image, negation, -1.0)), dtype, alpha)

    def clip(self, image: Any, low: float, high: float) -> Any:
        below_high = cv2.threshold(image, high, high, cv2.THRESH_TRUNC)[1]
        negated = self.convert(below_high, np.float32, -1.0)
        return self.convert(cv2.threshold(negated, -low, -low, cv2.THRESH_TRUNC)[1], np.float32, -1.0)

    def lut(self, image: Any, table: np.ndarray) -> Any:
        if len(table) == 256:
            return cv2.LUT(image, table if table.ndim == 1 else table.reshape(256, 1, -1))
        # cv2.LUT is 8-bit only: a 65536-row table is indexed by numpy (host images; opencl overrides).
        if table.ndim == 1:
            return table[image]
        columns = table.reshape(len(table), -1)
        return columns[image, np.arange(columns.shape[1])]

    def transform(self, image: Any, matrix: np.ndarray) -> Any:
        return cv2.transform(image, np.asarray(matrix, np.float64))

    def threshold(self, image: Any, thresh: float, maxval: float, kind: int) -> Any:
        return cv2.threshold(image, thresh, maxval, kind)[1]

    def calc_hist(self, image: Any, channels: int, levels: int) -> np.ndarray:
        planes = [image] if channels == 1 else cv2.split(image)
        rows = [cv2.calcHist([plane], [0], None, [levels], [0, levels]) for plane in planes]
        # OpenCV 5 returns (levels,), 4.x (levels, 1); a UMat input gives a UMat
        return np.stack([np.rint(np.asarray(self.to_host(r), np.float64).reshape(-1)) for r in rows]).astype(np.int64)

    def min_max(self, image: Any, channels: int, pooled: bool = False) -> list[tuple[float, float]]:
        planes: Sequence[Any]
        if pooled and isinstance(image, np.ndarray) and image.flags.c_contiguous:
            planes = [image.reshape(image.shape[0], -1)]  # the channels side by side: no split
        else:
            planes = [image] if channels == 1 else cv2.split(image)
        ranges = [(float(lo), float(hi)) for lo, hi, *_ in map(cv2.minMaxLoc, planes)]
        return pooled_ranges(ranges) if pooled else ranges

    def equalize_hist(self, image: Any) -> Any:
        return cv2.equalizeHist(image)

    def clahe(self, image: Any, clip_limit: float, tiles: tuple[int, int]) -> Any:
        return cv2.createCLAHE(clip_limit, tiles).apply(image)

    def median(self, image: Any, ksize: int) -> Any:
        return cv2.medianBlur(image, ksize)

    def bilateral(self, image: Any, diameter: int, sigma_color: float, sigma_space: float, border: int) -> Any:
        return cv2.bilateralFilter(image, diameter, sigma_color, sigma_space, borderType=border)

    def morphology(self, image: Any, op: int, kernel: np.ndarray, iterations: int, border: int) -> Any:
        return cv2.morphologyEx(image, op, kernel, iterations=iterations, borderType=border)

    def multiply(self, a: Any, b: Any, scale: float = 1.0, dtype: DType | None = None) -> Any:
        return cv2.multiply(a, b, scale=scale, dtype=_depth(dtype))

    def divide(self, a: Any, b: Any, scale: float = 1.0, dtype: DType | None = None) -> Any:
        return cv2.divide(a, b, scale=scale, dtype=_depth(dtype))

    def add_weighted(self, a: Any, wa: float, b: Any, wb: float, gamma: float = 0.0,
                     dtype: DType | None = None) -> Any:
        return cv2.addWeighted(a, wa, b, wb, gamma, dtype=_depth(dtype))

    def bitwise_not(self, image: Any) -> Any:
        return cv2.bitwise_not(image)

    def flip(self, image: Any, code: int) -> Any:
        return cv2.flip(image, code)

    def resize(self, image: Any, size: tuple[int, int], interpolation: int) -> Any:
        return cv2.resize(image, size, interpolation=interpolation)

    def cvt_color(self, image: Any, code: int) -> Any:
        return cv2.cvtColor(image, code)

    def remap(self, image: Any, map_x: Any, map_y: Any, interpolation: int, border: int,
              value: float = 0.0) -> Any:
        return cv2.remap(image, map_x, map_y, interpolation, borderMode=border, borderValue=(value,) * 4)

    def concat(self, images: Sequence[Any], axis: int) -> Any:
        return (cv2.vconcat if axis == 0 else cv2.hconcat)(list(images))

    def sqrt(self, image: Any) -> Any:
        return cv2.sqrt(image)

    def minimum(self, a: Any, b: Any) -> Any:
        return cv2.min(a, b)

    def maximum(self, a: Any, b: Any) -> Any:
        return cv2.max(a, b)

    def compare(self, a: Any, b: Any, op: int) -> Any:
        return cv2.compare(a, b, op)

    def select(self, mask: Any, yes: Any, no: Any) -> Any:
        # copyTo writes yes into dst where the mask is set; dst starts as a copy of no
        return cv2.copyTo(yes, mask, dst=cv2.copyTo(no, None))  # type: ignore[call-overload]  # None: no mask

