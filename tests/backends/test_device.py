"""DeviceBackend's counted fallbacks: device images copied to the host, run on the cpu backend, copied back.

The device is a stand-in whose images are ``Boxed`` wrappers around numpy arrays. No cv2 call
takes a wrapper, so one that reaches the cpu backend unconverted fails there, and a result left
on the host where a device image is due is seen by its type. References are numpy written out
(``cv2.compare``'s convention: 255 where true, 0 elsewhere); float results within 1e-6 relative,
integer ones exact.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from tests.boxed_device import Boxed, BoxedDevice

RNG = np.random.default_rng(26)
A = RNG.integers(0, 256, (5, 7, 3), dtype=np.uint8)
B = RNG.integers(0, 256, (5, 7, 3), dtype=np.uint8)
B[0, :, :] = A[0, :, :]  # some equal pixels for the comparisons


@pytest.fixture
def device() -> BoxedDevice:
    return BoxedDevice()


def _host(result: Any) -> np.ndarray:
    assert isinstance(result, Boxed), f"a device image, not {type(result).__name__}"
    return result.array


def _quiet(device: BoxedDevice) -> None:
    """The fallbacks' copies are not pipeline transfers."""
    assert (device.counters.uploads, device.counters.downloads, device.counters.constants) == (0, 0, 0)


def test_sqrt_falls_back_counted(device: BoxedDevice) -> None:
    values = np.array([[0.0, 1.0, 2.25], [4.0, 9.0, 0.01]], np.float32)
    root = _host(device.sqrt(Boxed(values)))
    assert root.dtype == np.float32
    np.testing.assert_allclose(root, [[0.0, 1.0, 1.5], [2.0, 3.0, 0.1]], rtol=1e-6)
    device.sqrt(Boxed(values))
    assert device.counters.fallbacks == {"sqrt": 2}
    _quiet(device)


def test_minimum_and_maximum_fall_back_counted(device: BoxedDevice) -> None:
    assert np.array_equal(_host(device.minimum(Boxed(A), Boxed(B))), np.minimum(A, B))
    assert np.array_equal(_host(device.maximum(Boxed(A), Boxed(B))), np.maximum(A, B))
    assert device.counters.fallbacks == {"minimum": 1, "maximum": 1}
    _quiet(device)


@pytest.mark.parametrize(("op", "holds"), [(cv2.CMP_GT, np.greater), (cv2.CMP_LE, np.less_equal),
                                           (cv2.CMP_EQ, np.equal), (cv2.CMP_NE, np.not_equal)])
def test_compare_falls_back_with_255_where_true(device: BoxedDevice, op: int, holds: Any) -> None:
    mask = _host(device.compare(Boxed(A), Boxed(B), op))
    assert mask.dtype == np.uint8 and np.array_equal(mask, np.where(holds(A, B), 255, 0))
    assert device.counters.fallbacks == {"compare": 1}
    _quiet(device)


def test_select_falls_back_taking_yes_where_the_mask_is_set(device: BoxedDevice) -> None:
    mask = np.where(A[..., 0] > 127, 255, 0).astype(np.uint8)
    chosen = _host(device.select(Boxed(mask), Boxed(A), Boxed(B)))
    assert np.array_equal(chosen, np.where(mask[..., None] > 0, A, B))
    assert 0 < np.count_nonzero(mask) < mask.size
    assert device.counters.fallbacks == {"select": 1}
    _quiet(device)


def test_lists_and_tuples_of_device_images_go_to_the_host(device: BoxedDevice) -> None:
    planes = [A[..., c].copy() for c in range(3)]
    merged = _host(device.fallback("merge", [Boxed(p) for p in planes]))
    assert np.array_equal(merged, A)
    mixed = (Boxed(planes[0]), planes[1], Boxed(planes[2]))  # host arrays in the list are taken as they are
    assert np.array_equal(_host(device.fallback("merge", mixed)), A)
    assert device.counters.fallbacks == {"merge": 2}
    _quiet(device)


def test_a_list_result_comes_back_as_a_list_of_device_images(device: BoxedDevice) -> None:
    planes = device.fallback("split", Boxed(A))
    assert isinstance(planes, list) and len(planes) == 3
    for channel, plane in enumerate(planes):
        assert np.array_equal(_host(plane), A[..., channel])
    assert device.counters.fallbacks == {"split": 1}


def test_host_results_stay_on_the_host(device: BoxedDevice) -> None:
    histogram = device.fallback("calc_hist", Boxed(A[..., 0].copy()), 1, 256, host_result=True)
    assert isinstance(histogram, np.ndarray)
    assert np.array_equal(histogram.reshape(-1), np.bincount(A[..., 0].ravel(), minlength=256))
    ranges = device.fallback("min_max", Boxed(A), 3, host_result=True)
    assert ranges == [(float(A[..., c].min()), float(A[..., c].max())) for c in range(3)]
    assert device.counters.fallbacks == {"calc_hist": 1, "min_max": 1}
    _quiet(device)


def test_each_thread_and_each_backend_counts_its_own(device: BoxedDevice) -> None:
    other = BoxedDevice()
    device.sqrt(Boxed(np.ones((2, 2), np.float32)))
    assert device.counters.fallbacks == {"sqrt": 1} and not other.counters.fallbacks
