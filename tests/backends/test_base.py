"""The Backend base class: its counters, its constant cache, host copies and the shared helpers.

The device is the ``Boxed`` stand-in (tests/boxed_device.py): its images are wrappers no numpy
call takes, so a copy that is due but not made is seen by its type. Expected values are written
out by hand; the automatic Gaussian size is checked against ``cv2.GaussianBlur`` itself (the
smallest odd size giving OpenCV's ``ksize=0`` result, exactly).
"""

from __future__ import annotations

import threading
from collections import Counter

import cv2
import numpy as np
import pytest

from cvfilters.backends import base
from cvfilters.backends.base import Availability, Counters, auto_gaussian_ksize, pooled_ranges
from tests.boxed_device import Boxed, BoxedDevice


class Sharing(BoxedDevice):
    """A device whose copies share the host array's memory (and its strides), as a view would."""

    def to_device(self, array: np.ndarray) -> Boxed:
        return Boxed(array)

    def to_host(self, image: Boxed) -> np.ndarray:
        return image.array


@pytest.fixture
def device() -> BoxedDevice:
    return BoxedDevice()


def test_pooled_ranges_is_one_pair_over_the_channels() -> None:
    assert pooled_ranges([(0.0, 5.0), (-1.0, 3.0), (2.0, 9.0)]) == [(-1.0, 9.0)]
    assert pooled_ranges([(4.0, 4.0)]) == [(4.0, 4.0)]


@pytest.mark.parametrize(("sigma", "dtype"), [
    (1.0, np.uint8), (1.4, np.uint8), (2.25, np.uint8),  # 3 sigma a side for uint8
    (0.5, np.float32), (1.0, np.float32), (1.075, np.float32), (1.4, np.float32), (2.0, np.uint16),
])
def test_auto_gaussian_ksize_is_opencvs_own(sigma: float, dtype: type) -> None:
    """The size OpenCV picks for ``ksize=0``: the smallest odd size whose blur is the same, bit for bit."""
    image: np.ndarray = (np.random.default_rng(3).random((40, 40)) * 255).astype(dtype)
    automatic = cv2.GaussianBlur(image, (0, 0), sigma)
    same = [k for k in range(1, 41, 2) if np.array_equal(automatic, cv2.GaussianBlur(image, (k, k), sigma))]
    assert auto_gaussian_ksize(sigma, np.dtype(dtype)) == same[0]


def test_availability_as_dict() -> None:
    assert Availability("opencl", False, device="gpu0", reason="no driver", is_gpu=True).as_dict() == {
        "name": "opencl", "available": False, "device": "gpu0", "reason": "no driver", "gpu": True}
    assert Availability("cpu", True).as_dict() == {"name": "cpu", "available": True, "device": "", "reason": "",
                                                   "gpu": False}


def test_counters_snapshot_is_a_copy_and_since_is_the_difference() -> None:
    counters = Counters(3, 2, 1, Counter({"median": 2}))
    earlier = counters.snapshot()
    counters.uploads += 4
    counters.downloads += 5
    counters.constants += 6
    counters.fallbacks["median"] += 1
    counters.fallbacks["kmeans"] += 2
    assert earlier == Counters(3, 2, 1, Counter({"median": 2}))  # the fallbacks too are copied
    assert counters.since(earlier) == Counters(4, 5, 6, Counter({"median": 1, "kmeans": 2}))


def test_uploads_and_downloads_are_counted_per_thread(device: BoxedDevice) -> None:
    array = np.arange(6, dtype=np.uint8).reshape(2, 3)
    image = device.upload(array)
    assert isinstance(image, Boxed) and np.array_equal(image.array, array)
    device.upload(array)
    assert np.array_equal(device.download(image), array)
    device.download(image)
    assert device.counters is device.counters  # one record per thread, kept
    assert (device.counters.uploads, device.counters.downloads) == (2, 2)
    seen: list[Counters] = []
    thread = threading.Thread(target=lambda: seen.append(device.counters.snapshot()))
    thread.start()
    thread.join()
    assert seen == [Counters()]


def test_cached_builds_and_uploads_once_per_key(device: BoxedDevice) -> None:
    built: list[str] = []

    def factory(key: str) -> np.ndarray:
        built.append(key)
        return np.full((2, 2), len(built), np.uint8)

    first = device.cached("a", lambda: factory("a"))
    assert isinstance(first, Boxed) and np.array_equal(first.array, np.full((2, 2), 1, np.uint8))
    assert device.cached("a", lambda: factory("a")) is first
    device.cached("b", lambda: factory("b"))
    assert built == ["a", "b"] and device.counters.constants == 2
    assert device.counters.uploads == 0  # constants are not pipeline uploads


def test_cached_evicts_the_least_recently_used(device: BoxedDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "CACHE_ENTRIES", 3)
    built: list[int] = []

    def get(key: int) -> None:
        def factory() -> np.ndarray:
            built.append(key)
            return np.zeros(1)
        device.cached(key, factory)

    for key in (0, 1, 2):
        get(key)
    get(0)  # used again: 1 is now the least recently used
    get(3)  # a fourth entry evicts 1
    get(0)
    get(2)
    assert built == [0, 1, 2, 3]
    get(1)
    assert built == [0, 1, 2, 3, 1]
    assert device.counters.constants == 5


def test_cached_keeps_the_value_stored_first(device: BoxedDevice) -> None:
    """A factory that stores the same key meanwhile (as a concurrent thread would): its value is kept."""
    inner = device.cached("k", lambda: (device.cached("k", lambda: np.ones(1)), np.zeros(1))[1])
    assert np.array_equal(inner.array, np.ones(1))
    assert device.cached("k", lambda: np.full(1, 7.0)) is inner
    assert device.counters.constants == 1


def test_host_copy_is_free_for_arrays_and_counted_for_device_images() -> None:
    device = Sharing()
    array = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert device.host_copy(array, "stats") is array
    assert device.counters.fallbacks == Counter()
    strided = Boxed(array[:, ::2])
    copy = device.host_copy(strided, "stats")
    assert isinstance(copy, np.ndarray) and copy.flags.c_contiguous and np.array_equal(copy, array[:, ::2])
    device.host_copy(strided, "stats")
    assert device.counters.fallbacks == Counter({"stats": 2})
    assert (device.counters.uploads, device.counters.downloads) == (0, 0)


def test_on_host_runs_on_a_host_copy_and_returns_a_device_image() -> None:
    device = Sharing()
    array = np.arange(6, dtype=np.uint8).reshape(2, 3)
    assert np.array_equal(device.on_host(array, lambda a: a + 1, "kmeans"), array + 1)
    assert device.counters.fallbacks == Counter()
    seen: list[type] = []

    def compute(host: np.ndarray) -> np.ndarray:
        seen.append(type(host))
        return (host * 2)[:, ::2]  # not contiguous: made so before the upload

    result = device.on_host(Boxed(array), compute, "kmeans")
    assert seen == [np.ndarray]
    assert isinstance(result, Boxed) and result.array.flags.c_contiguous
    assert np.array_equal(result.array, (array * 2)[:, ::2])
    assert device.counters.fallbacks == Counter({"kmeans": 1})
    assert (device.counters.uploads, device.counters.downloads) == (0, 0)
