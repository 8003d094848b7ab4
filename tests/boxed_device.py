"""A stand-in device backend for tests: its images are ``Boxed`` wrappers no cv2 call takes.

DeviceBackend's primitives come first (those it does not run on a device fall back to the host,
counted); CvBackend and ``crop`` fill the abstract rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cvfilters.backends.base import Availability
from cvfilters.backends.cv import CvBackend
from cvfilters.backends.device import DeviceBackend


class Boxed:
    """A device image: an array only the device backend knows how to read."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


class BoxedDevice(DeviceBackend, CvBackend):
    """A device whose images are :class:`Boxed`; uploads and downloads copy."""

    name = "boxed"

    @classmethod
    def probe(cls) -> Availability:
        return Availability("boxed", True)

    def is_native(self, image: Any) -> bool:
        return isinstance(image, Boxed)

    def to_device(self, array: np.ndarray) -> Boxed:
        assert isinstance(array, np.ndarray), f"to_device of {type(array).__name__}"
        return Boxed(array.copy())

    def to_host(self, image: Boxed) -> np.ndarray:
        return image.array.copy()

    def crop(self, image: Boxed, x: int, y: int, width: int, height: int) -> Boxed:
        return Boxed(image.array[y : y + height, x : x + width])
