"""The opencl backend (cvfilters/backends/opencl.py): its probe, UMat residency, crop, and the 16-bit
tables and histograms it runs on the host.

The probe's answers are checked against stand-ins for ``cv2.ocl`` (no platform, a device that is
not available, a CPU and a GPU device, a driver raising ``cv2.error``), with the whole
``Availability`` written out. The backend's own tests need a real OpenCL device (pocl here:
``OPENCV_OPENCL_DEVICE=:CPU:``) and run when the matrix has opencl; references are numpy
(slicing, ``table[image]``, ``np.bincount``), exact, with the fallbacks counted per primitive.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from cvfilters.backends import Availability, get_backend
from cvfilters.backends.opencl import OpenclBackend

RNG = np.random.default_rng(26)
NO_PLATFORM = Availability("opencl", False, reason="OpenCV found no OpenCL platform (install an OpenCL driver, "
                           "e.g. Debian's pocl-opencl-icd or a GPU vendor's ICD)")
NOT_AVAILABLE = Availability("opencl", False, reason="OpenCV's default OpenCL device (a GPU unless "
                             "OPENCV_OPENCL_DEVICE says otherwise) is not available; "
                             "OPENCV_OPENCL_DEVICE=:CPU: selects a CPU driver such as pocl")


class StandInDevice:
    """What ``cv2.ocl.Device.getDefault()`` answers about one device."""

    def __init__(self, available: bool = True, kind: int = cv2.ocl.Device_TYPE_CPU,
                 name: str = "pthread-stand-in", vendor: str = "Stand-in Vendor") -> None:
        self._available, self._kind, self._name, self._vendor = available, kind, name, vendor

    def available(self) -> bool:
        return self._available

    def type(self) -> int:
        return self._kind

    def name(self) -> str:
        return self._name

    def vendorName(self) -> str:  # OpenCV's name
        return self._vendor


def _stand_in(monkeypatch: pytest.MonkeyPatch, have: Any, device: Any = None) -> None:
    """``cv2.ocl`` answering ``haveOpenCL()`` with ``have()`` and ``Device.getDefault()`` with ``device()``."""
    monkeypatch.setattr(cv2.ocl, "haveOpenCL", have)
    monkeypatch.setattr(cv2.ocl, "setUseOpenCL", lambda flag: None)  # the process's real flag stays as it is
    monkeypatch.setattr(cv2.ocl, "Device", type("Device", (), {"getDefault": staticmethod(device or StandInDevice)}))


def test_probe_without_a_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    _stand_in(monkeypatch, lambda: False)
    assert OpenclBackend.probe() == NO_PLATFORM


def test_probe_with_a_device_that_is_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    _stand_in(monkeypatch, lambda: True, lambda: StandInDevice(available=False))
    assert OpenclBackend.probe() == NOT_AVAILABLE


@pytest.mark.parametrize(("kind", "label", "gpu"), [
    (cv2.ocl.Device_TYPE_CPU, "CPU", False), (cv2.ocl.Device_TYPE_ACCELERATOR, "CPU", False),
    (cv2.ocl.Device_TYPE_GPU, "GPU", True), (cv2.ocl.Device_TYPE_DGPU, "GPU", True),
    (cv2.ocl.Device_TYPE_IGPU, "GPU", True),
])
def test_probe_names_the_device_and_whether_it_is_a_gpu(monkeypatch: pytest.MonkeyPatch, kind: int, label: str,
                                                        gpu: bool) -> None:
    _stand_in(monkeypatch, lambda: True, lambda: StandInDevice(kind=kind, name="Dev 1", vendor="ACME"))
    status = OpenclBackend.probe()
    assert status == Availability("opencl", True, device=f"Dev 1 ({label}, ACME)", is_gpu=gpu)
    assert status.is_gpu is gpu


def test_probe_reports_a_failing_driver_by_its_last_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail() -> Any:
        raise cv2.error("OpenCV(5.1.0) ocl.cpp:1234: error: (-220)\nin function 'initializeContextFromHandle'\n"
                        "clGetPlatformIDs failed: -1001 \n\n")

    want = Availability("opencl", False, reason="OpenCL probe failed: clGetPlatformIDs failed: -1001")
    _stand_in(monkeypatch, fail)
    assert OpenclBackend.probe() == want
    _stand_in(monkeypatch, lambda: True, fail)  # the device query failing
    assert OpenclBackend.probe() == want


# ------------------------------------------------------------------ on a real device


@pytest.fixture
def ocl(device_backend: str) -> OpenclBackend:
    if device_backend != "opencl":
        pytest.skip("the opencl backend's own tests")
    be = get_backend("opencl")
    assert isinstance(be, OpenclBackend)
    return be


def test_probe_of_the_real_device(ocl: OpenclBackend) -> None:
    device = cv2.ocl.Device.getDefault()
    status = OpenclBackend.probe()
    assert status.available and status.name == "opencl" and status.reason == ""
    assert status.device.startswith(f"{device.name()} (") and status.device.endswith(f", {device.vendorName()})")
    assert status.is_gpu is bool(device.type() & cv2.ocl.Device_TYPE_GPU)


def test_a_new_backend_turns_opencl_on(ocl: OpenclBackend) -> None:
    cv2.ocl.setUseOpenCL(False)
    try:
        OpenclBackend()
        assert cv2.ocl.useOpenCL() is True  # OpenCV would otherwise run its CPU code on every UMat
    finally:
        cv2.ocl.setUseOpenCL(True)


@pytest.mark.parametrize("array", [
    RNG.integers(0, 256, (5, 7, 3), dtype=np.uint8)[:, ::2],  # a strided view
    RNG.integers(0, 65536, (4, 6), dtype=np.uint16)[::-1],  # negative strides
    RNG.random((3, 4, 4)).astype(np.float32),
], ids=["view", "reversed", "float"])
def test_to_device_and_back(ocl: OpenclBackend, array: np.ndarray) -> None:
    native = ocl.to_device(array)
    assert isinstance(native, cv2.UMat) and ocl.is_native(native)
    host = ocl.to_host(native)
    assert isinstance(host, np.ndarray) and host.dtype == array.dtype
    np.testing.assert_array_equal(host, array)
    assert not ocl.is_native(array) and not ocl.is_native(cv2.cuda.GpuMat())


def test_crop(ocl: OpenclBackend) -> None:
    array = RNG.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    crop = ocl.crop(ocl.to_device(array), 1, 2, 5, 3)
    assert isinstance(crop, cv2.UMat)
    np.testing.assert_array_equal(crop.get(), array[2:5, 1:6])


def test_lut_of_256_rows_on_the_device(ocl: OpenclBackend) -> None:
    array = RNG.integers(0, 256, (4, 5, 3), dtype=np.uint8)
    before = ocl.counters.snapshot()
    table = RNG.integers(0, 256, 256, dtype=np.uint8)
    out = ocl.lut(ocl.to_device(array), table)
    assert isinstance(out, cv2.UMat)
    np.testing.assert_array_equal(out.get(), table[array])
    per_channel = RNG.integers(0, 256, (256, 3), dtype=np.uint8)
    np.testing.assert_array_equal(ocl.lut(ocl.to_device(array), per_channel).get(),
                                  np.stack([per_channel[array[..., c], c] for c in range(3)], axis=-1))
    assert not ocl.counters.since(before).fallbacks


def test_lut_of_65536_rows_falls_back_counted(ocl: OpenclBackend) -> None:
    array = RNG.integers(0, 65536, (4, 5), dtype=np.uint16)
    table = RNG.integers(0, 65536, 65536, dtype=np.uint16)
    before = ocl.counters.snapshot()
    out = ocl.lut(ocl.to_device(array), table)
    assert isinstance(out, cv2.UMat)
    np.testing.assert_array_equal(out.get(), table[array])
    since = ocl.counters.since(before)
    assert since.fallbacks == {"lut": 1} and (since.uploads, since.downloads) == (0, 0)


def test_calc_hist_of_8_bits_on_the_device(ocl: OpenclBackend) -> None:
    array = RNG.integers(0, 256, (6, 7, 3), dtype=np.uint8)
    before = ocl.counters.snapshot()
    hist = ocl.calc_hist(ocl.to_device(array), 3, 256)
    assert isinstance(hist, np.ndarray) and hist.dtype == np.int64
    np.testing.assert_array_equal(hist, [np.bincount(array[..., c].ravel(), minlength=256) for c in range(3)])
    gray = ocl.calc_hist(ocl.to_device(array[..., 1].copy()), 1, 256)
    np.testing.assert_array_equal(gray, [np.bincount(array[..., 1].ravel(), minlength=256)])
    assert not ocl.counters.since(before).fallbacks


@pytest.mark.parametrize("channels", [1, 3])
def test_calc_hist_of_16_bits_falls_back_counted(ocl: OpenclBackend, channels: int) -> None:
    array = RNG.integers(0, 65536, (5, 6, channels), dtype=np.uint16)
    array[0, :2] = 65535  # the top level counted
    before = ocl.counters.snapshot()
    hist = ocl.calc_hist(ocl.to_device(array), channels, 65536)
    assert isinstance(hist, np.ndarray) and hist.dtype == np.int64  # statistics stay on the host
    np.testing.assert_array_equal(hist, [np.bincount(array[..., c].ravel(), minlength=65536) for c in range(channels)])
    since = ocl.counters.since(before)
    assert since.fallbacks == {"calc_hist": 1} and (since.uploads, since.downloads) == (0, 0)
