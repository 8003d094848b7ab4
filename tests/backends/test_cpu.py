"""The cpu backend's probe, as ``cvfilters backends`` reports it, and its pass-through transfers."""

from __future__ import annotations

import os

import cv2
import numpy as np

from cvfilters.backends.base import Availability
from cvfilters.backends.cpu import CpuBackend, host


def test_the_probe_names_the_cores_and_opencvs_threads() -> None:
    before = cv2.getNumThreads()
    try:
        cv2.setNumThreads(3)
        assert CpuBackend.probe() == Availability("cpu", True, device=f"{os.cpu_count()} cores, 3 OpenCV threads")
    finally:
        cv2.setNumThreads(before)


def test_arrays_stay_where_they_are() -> None:
    backend, array = host(), np.arange(24, dtype=np.uint8).reshape(4, 6)
    assert backend is host() and backend.is_native(array) and not backend.is_native(cv2.UMat(array))
    for move in (backend.to_device, backend.to_host, backend.upload, backend.download):
        assert move(array) is array
    view = backend.crop(array, 1, 2, 3, 2)
    assert np.shares_memory(view, array) and view.tolist() == [[13, 14, 15], [19, 20, 21]]
