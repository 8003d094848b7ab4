"""feather_mask, feather_plane and weight_map called directly, against numpy written out.

References: the Gaussian as a separable sum of shifted copies of the edge-padded mask with
the weights ``exp(-x^2 / 2 sigma^2)``, ``|x| <= ceil(3 sigma)``, normalised (GIMP's
``sigma = radius / 3.5``); the distance ramp as ``min(1, d / radius)`` with ``d`` the L1
distance of each pixel above 0.5 to the nearest pixel at or below it, found by brute force.
float32 results within 1e-6 (OpenCV sums in float32).

``feather_plane`` on a device erodes instead of calling ``cv2.distanceTransform``; that path
runs here on :class:`BoxedDevice`, whose images are wrappers no cv2 call takes: each primitive
is the cpu backend's on a host copy (``DeviceBackend.fallback``), so the device's arithmetic
runs and a result left on the host is seen by its type.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from cvfilters.backends.cpu import host
from cvfilters.core.types import FeatherMethod
from cvfilters.filters.masks.feathering import feather_mask, feather_plane, gaussian_ksize, gaussian_sigma, weight_map
from tests.boxed_device import Boxed, BoxedDevice

TOLERANCE = 1e-6


def mask() -> np.ndarray:
    """16 x 21: a 7-deep block touching the left edge with a hole, a diagonal arm, soft and 0.5 values."""
    m = np.zeros((16, 21), np.float32)
    m[1:15, 0:9] = 1.0
    m[6:8, 4] = 0.0  # a hole
    for i in range(6):
        m[3 + i, 10 + i] = m[4 + i, 10 + i] = 1.0  # a diagonal arm two pixels thick
    m[12:15, 12:20] = 0.7  # above 0.5: inside for the distance method
    m[1:3, 14:20] = 0.5  # exactly 0.5: outside
    m[0, 0:9] = 0.3
    return m


def gaussian(values: np.ndarray, sigma: float) -> np.ndarray:
    """The Gaussian with a kernel of ``2 ceil(3 sigma) + 1`` taps and a replicated border, in float64."""
    half = math.ceil(3 * sigma)
    taps = np.exp(-np.arange(-half, half + 1) ** 2 / (2 * sigma**2))
    taps /= taps.sum()
    height, width = values.shape
    padded = np.pad(values.astype(np.float64), half, mode="edge")
    rows = sum(t * padded[i : i + height, :] for i, t in enumerate(taps))
    return np.asarray(sum(t * rows[:, i : i + width] for i, t in enumerate(taps)))


def ramp(values: np.ndarray, radius: float) -> np.ndarray:
    """``min(1, d / radius)``, ``d`` the L1 distance from a pixel above 0.5 to the nearest one not above."""
    inside = values > 0.5
    ys, xs = np.nonzero(~inside)
    yy, xx = np.mgrid[0 : values.shape[0], 0 : values.shape[1]]
    distance = (np.abs(yy[..., None] - ys) + np.abs(xx[..., None] - xs)).min(axis=-1)
    return np.minimum(1.0, np.where(inside, distance, 0) / radius)


def assert_close(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == np.float32 and actual.shape == expected.shape, (actual.dtype, actual.shape)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=TOLERANCE)


def test_the_mask_reaches_every_case() -> None:
    m = mask()
    assert ramp(m, 1.0).max() == 1.0 and ramp(m, 4.0).max() == 1.0  # some pixel is 4 or more deep
    assert (m == 0.5).any() and (m[:, 0] == 1.0).any()


def test_gimp_sigma_and_kernel_side() -> None:
    assert gaussian_sigma(7.0) == 2.0 and gaussian_sigma(1.75) == 0.5
    assert [gaussian_ksize(s) for s in (2.0, 0.5, 1 / 3.5)] == [13, 5, 3]


# ---------------------------------------------------------------- feather_mask
@pytest.mark.parametrize("radius", [1.0, 3.5, 7.0])
def test_gaussian_is_gimps_feather(radius: float) -> None:
    m = mask()
    assert_close(feather_mask(m, radius), gaussian(m, radius / 3.5))  # the default method
    assert_close(feather_mask(m, radius, method="gaussian"), gaussian(m, radius / 3.5))


@pytest.mark.parametrize("radius", [1.0, 2.5, 4.0])
def test_distance_is_the_l1_ramp_of_the_binarised_mask(radius: float) -> None:
    m = mask()
    assert_close(feather_mask(m, radius, method="distance"), ramp(m, radius))


def test_radius_zero_returns_the_mask_binarised_only_for_distance() -> None:
    m = mask()
    assert_close(feather_mask(m, 0.0), m)
    assert_close(feather_mask(m, 0, method="distance"), (m > 0.5).astype(np.float64))


def test_small_radii_are_accepted() -> None:
    m = mask()
    assert_close(feather_mask(m, 0.5), gaussian(m, 0.5 / 3.5))
    assert_close(feather_mask(m, 0.5, method="distance"), ramp(m, 0.5))


@pytest.mark.parametrize(("radius", "shown"), [(-1.0, "-1.0"), (math.nan, "nan"), (math.inf, "inf")])
def test_a_negative_or_non_finite_radius_is_refused(radius: float, shown: str) -> None:
    methods: tuple[FeatherMethod, ...] = ("gaussian", "distance")
    for method in methods:
        with pytest.raises(ValueError, match=rf"^radius must be a finite number >= 0, not {shown}$"):
            feather_mask(mask(), radius, method=method)


def test_an_unknown_method_is_refused_naming_both() -> None:
    with pytest.raises(ValueError, match=r"^method must be one of gaussian, distance, not 'box'$"):
        feather_mask(mask(), 2.0, method="box")  # type: ignore[arg-type]


# ---------------------------------------------------------------- feather_plane on the host
@pytest.mark.parametrize("radius", [0.0, 1.0, 3.5])
def test_plane_gaussian_on_the_host(radius: float) -> None:
    m = mask()
    expected = m if radius == 0 else gaussian(m, radius / 3.5)
    assert_close(np.asarray(feather_plane(host(), m, radius, "gaussian")), expected)


@pytest.mark.parametrize("radius", [0.0, 1.0, 2.5])
def test_plane_distance_on_the_host(radius: float) -> None:
    m = mask()
    expected = (m > 0.5).astype(np.float64) if radius == 0 else ramp(m, radius)
    assert_close(np.asarray(feather_plane(host(), m, radius, "distance")), expected)


# ---------------------------------------------------------------- feather_plane on a device
class FeatherDevice(BoxedDevice):
    """The stand-in device, with feather_plane's primitives run on host copies (counted fallbacks)."""

    def threshold(self, image: Any, thresh: float, maxval: float, kind: int) -> Any:
        return self.fallback("threshold", image, thresh, maxval, kind)

    def convert(self, image: Any, dtype: Any, alpha: float = 1.0, beta: float = 0.0) -> Any:
        return self.fallback("convert", image, dtype, alpha, beta)

    def morphology(self, image: Any, op: int, kernel: np.ndarray, iterations: int, border: int) -> Any:
        return self.fallback("morphology", image, op, kernel, iterations, border)

    def add_weighted(self, a: Any, wa: float, b: Any, wb: float, gamma: float = 0.0, dtype: Any = None) -> Any:
        return self.fallback("add_weighted", a, wa, b, wb, gamma, dtype)

    def gaussian(self, image: Any, ksize: tuple[int, int], sigma: float, border: int) -> Any:
        return self.fallback("gaussian", image, ksize, sigma, border)


def on_device(radius: float, method: FeatherMethod) -> np.ndarray:
    out = feather_plane(FeatherDevice(), Boxed(mask()), radius, method)
    assert isinstance(out, Boxed), f"a device image, not {type(out).__name__}"
    return out.array


@pytest.mark.parametrize("radius", [1.0, 2.5, 3.0, 4.0])
def test_device_erosions_give_the_l1_ramp(radius: float) -> None:
    # min(d, n) = sum_{i<n} erode^i(B) with n = ceil(radius); the image border counts as inside
    assert_close(on_device(radius, "distance"), ramp(mask(), radius))


def test_device_radius_zero_is_the_binarised_mask() -> None:
    assert_close(on_device(0.0, "distance"), (mask() > 0.5).astype(np.float64))


def test_device_gaussian() -> None:
    assert_close(on_device(3.5, "gaussian"), gaussian(mask(), 1.0))


# ---------------------------------------------------------------- weight_map
def test_weight_map_defaults_to_the_mask_as_it_is() -> None:
    m = mask()
    assert_close(weight_map(m, 21, 16), m)
    assert_close(weight_map(m, 21, 16, feather=0.0, method="distance"), m)  # no feather: not binarised


def test_weight_map_inverts_before_feathering() -> None:
    m = mask()
    assert_close(weight_map(m, 21, 16, invert=True), 1.0 - m)
    assert_close(weight_map(m, 21, 16, feather=2.0, method="distance", invert=True), ramp(1.0 - m, 2.0))


@pytest.mark.parametrize("feather", [1.0, 3.5])
def test_weight_map_feathers_with_the_method_asked(feather: float) -> None:
    m = mask()
    assert_close(weight_map(m, 21, 16, feather=feather), gaussian(m, feather / 3.5))
    assert_close(weight_map(m, 21, 16, feather=feather, method="distance"), ramp(m, feather))
