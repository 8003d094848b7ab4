"""The cpu backend: OpenCV on numpy arrays. Always available."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import cv2
import numpy as np

from cvfilters.backends.base import Availability
from cvfilters.backends.cv import CvBackend


class CpuBackend(CvBackend):
    """Images are numpy arrays; nothing moves, so nothing is counted."""

    name = "cpu"

    @classmethod
    def probe(cls) -> Availability:
        threads = cv2.getNumThreads()
        return Availability("cpu", True, device=f"{os.cpu_count()} cores, {threads} OpenCV threads")

    def is_native(self, image: Any) -> bool:
        return isinstance(image, np.ndarray)

    def to_device(self, array: np.ndarray) -> np.ndarray:
        return array

    def to_host(self, image: np.ndarray) -> np.ndarray:
        return image

    def upload(self, array: np.ndarray) -> np.ndarray:
        return array

    def download(self, image: np.ndarray) -> np.ndarray:
        return image

    def crop(self, image: Any, x: int, y: int, width: int, height: int) -> np.ndarray:
        return image[y : y + height, x : x + width]


@cache
def host() -> CpuBackend:
    """The one cpu backend of the process: ``get_backend("cpu")`` and every device backend's fallbacks."""
    return CpuBackend()
