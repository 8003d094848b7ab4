"""The opencl backend: OpenCV's transparent API, images kept in ``cv2.UMat``.

The device is OpenCV's default OpenCL device, which honours ``OPENCV_OPENCL_DEVICE``
(``:CPU:`` selects a CPU driver such as pocl, ``:GPU:`` a GPU). OpenCV runs its CPU
code on a UMat when it has no OpenCL kernel for an operation (in OpenCV 5:
GaussianBlur, 16-bit CLAHE, medianBlur above 5, adaptiveThreshold): the result is the
same, only slower, and it is not a counted fallback (no copy leaves OpenCV).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from cvfilters.backends.base import Availability
from cvfilters.backends.cv import CvBackend
from cvfilters.backends.device import DeviceBackend


class OpenclBackend(CvBackend, DeviceBackend):
    """Images are ``cv2.UMat``; every upload and download is counted.

    The cv2 calls are :class:`CvBackend`'s; this class overrides what differs on a
    UMat: 16-bit tables and 16-bit histograms, which OpenCV runs on the host only.
    """

    name = "opencl"

    def __init__(self) -> None:
        super().__init__()
        cv2.ocl.setUseOpenCL(True)

    @classmethod
    def probe(cls) -> Availability:
        try:
            if not cv2.ocl.haveOpenCL():
                return Availability("opencl", False, reason="OpenCV found no OpenCL platform "
                                    "(install an OpenCL driver, e.g. Debian's pocl-opencl-icd or a GPU vendor's ICD)")
            cv2.ocl.setUseOpenCL(True)
            device = cv2.ocl.Device.getDefault()
            if not device.available():
                return Availability("opencl", False, reason="OpenCV's default OpenCL device (a GPU unless "
                                    "OPENCV_OPENCL_DEVICE says otherwise) is not available; "
                                    "OPENCV_OPENCL_DEVICE=:CPU: selects a CPU driver such as pocl")
            is_gpu = bool(device.type() & cv2.ocl.Device_TYPE_GPU)
            kind = "GPU" if is_gpu else "CPU"
            return Availability("opencl", True, device=f"{device.name()} ({kind}, {device.vendorName()})",
                                is_gpu=is_gpu)
        except cv2.error as exc:  # a broken ICD makes the probe itself fail
            return Availability("opencl", False, reason=f"OpenCL probe failed: {str(exc).strip().splitlines()[-1]}")

    def is_native(self, image: Any) -> bool:
        return isinstance(image, cv2.UMat)

    def to_device(self, array: np.ndarray) -> cv2.UMat:
        return cv2.UMat(np.ascontiguousarray(array))

    def to_host(self, image: cv2.UMat) -> np.ndarray:
        return image.get()

    def crop(self, image: Any, x: int, y: int, width: int, height: int) -> cv2.UMat:
        return cv2.UMat(image, (y, y + height), (x, x + width))

    def lut(self, image: Any, table: np.ndarray) -> cv2.UMat:
        if len(table) == 256:
            return super().lut(image, table)
        return self.fallback("lut", image, table)  # cv2.LUT is 8-bit only; a 65536-row table indexes on the host

    def calc_hist(self, image: Any, channels: int, levels: int) -> np.ndarray:
        if levels == 256:
            return super().calc_hist(image, channels, levels)
        return self.fallback("calc_hist", image, channels, levels, host_result=True)  # OpenCL's kernel is 8-bit
