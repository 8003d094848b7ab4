"""The cpu backend's probe, as ``cvfilters backends`` reports it, its pass-through transfers, and the
messages of ``get_backend`` for a name it does not know."""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest

from cvfilters.backends import get_backend
from cvfilters.backends.base import Availability
from cvfilters.backends.cpu import CpuBackend, host
from cvfilters.core.errors import UsageError


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


def test_an_unknown_backend_name_lists_the_ones_to_choose_from() -> None:
    """A typo in ``--backend``: one line naming it and the four names, comma separated, written out here."""
    with pytest.raises(UsageError) as caught:
        get_backend("metal")
    assert str(caught.value) == "unknown backend 'metal'; choose one of auto, cpu, opencl, cuda"
    assert get_backend("cpu") is host()
