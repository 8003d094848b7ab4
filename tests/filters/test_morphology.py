"""Morphology against scipy.ndimage grey morphology with the same footprint."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

import cvfilters as cvf
from cvfilters.filters.morphology import OPERATIONS
from tests.conftest import photo

# The structuring elements written out (cv2.getStructuringElement's, checked below).
FOOTPRINTS = {
    ("rect", 3): np.ones((3, 3), bool),
    ("cross", 5): np.array([[0, 0, 1, 0, 0]] * 2 + [[1] * 5] + [[0, 0, 1, 0, 0]] * 2, bool),
    ("ellipse", 7): np.array([[0, 0, 0, 1, 0, 0, 0], [0, 1, 1, 1, 1, 1, 0]] + [[1] * 7] * 3
                             + [[0, 1, 1, 1, 1, 1, 0], [0, 0, 0, 1, 0, 0, 0]], bool),
}


def grey(op, image: np.ndarray, footprint: np.ndarray, times: int) -> np.ndarray:
    """Apply a scipy grey operation ``times`` times per channel; mode nearest (never wins at the border)."""
    fp = footprint if image.ndim == 2 else footprint[:, :, None]
    out = image
    for _ in range(times):
        out = op(out, footprint=fp, mode="nearest")
    return out


def reference(name: str, image: np.ndarray, footprint: np.ndarray, n: int) -> np.ndarray:
    def dilate(x, k=n):
        return grey(ndimage.grey_dilation, x, footprint, k)

    def erode(x, k=n):
        return grey(ndimage.grey_erosion, x, footprint, k)

    if name == "dilate":
        return dilate(image)
    if name == "erode":
        return erode(image)
    if name == "open":
        return dilate(erode(image))
    if name == "close":
        return erode(dilate(image))
    if name == "morph_gradient":
        return dilate(image) - erode(image)
    if name == "top_hat":
        return image - dilate(erode(image))
    return erode(dilate(image)) - image  # black_hat


def test_operations_table_is_complete() -> None:
    assert set(OPERATIONS) == {"dilate", "erode", "open", "close", "morph_gradient", "top_hat", "black_hat"}


@pytest.mark.parametrize(("shape", "size"), list(FOOTPRINTS))
def test_footprints_are_opencv_elements(shape: str, size: int) -> None:
    from cvfilters.filters.morphology import structuring_element

    np.testing.assert_array_equal(structuring_element(shape, size).astype(bool), FOOTPRINTS[shape, size])


@pytest.mark.parametrize("name", list(OPERATIONS))
@pytest.mark.parametrize(("shape", "size"), list(FOOTPRINTS))
@pytest.mark.parametrize("iterations", [1, 2])
def test_matches_scipy_grey_morphology(name: str, shape: str, size: int, iterations: int) -> None:
    image = photo(26, 31, 3, np.uint8)
    out = cvf.apply(image, name, shape=shape, size=size, iterations=iterations, backend="cpu")
    np.testing.assert_array_equal(out, reference(name, image, FOOTPRINTS[shape, size], iterations))


@pytest.mark.parametrize("name", list(OPERATIONS))
@pytest.mark.parametrize(("dtype", "channels"), [(np.uint16, 1), (np.float32, 3)])
def test_matches_scipy_for_16_bit_and_float(name: str, dtype: type, channels: int) -> None:
    image = photo(21, 17, channels, dtype)
    out = cvf.apply(image, name, shape="ellipse", size=7, iterations=1, backend="cpu")
    expected = reference(name, image, FOOTPRINTS["ellipse", 7], 1)
    np.testing.assert_allclose(out, expected, atol=0 if dtype == np.uint16 else 1e-7)


@pytest.mark.parametrize("name", ["dilate", "morph_gradient", "black_hat"])
def test_device_matches_scipy(backend: str, name: str) -> None:
    image = photo(24, 28, 3, np.uint8)
    out = cvf.apply(image, name, shape="cross", size=5, iterations=2, backend=backend)
    np.testing.assert_array_equal(out, reference(name, image, FOOTPRINTS["cross", 5], 2))


def test_border_pixels_never_win() -> None:
    # A bright image edge must not be eroded by a dark outside (nor a dark edge dilated by a bright one).
    image = np.full((9, 9), 200, np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, "erode", shape="rect", size=5, backend="cpu"), image)
    np.testing.assert_array_equal(cvf.apply(image, "dilate", shape="rect", size=5, backend="cpu"), image)
    np.testing.assert_array_equal(cvf.apply(image, "top_hat", size=5, backend="cpu"), 0)


def test_dilate_grows_a_point_into_the_element() -> None:
    image = np.zeros((15, 15), np.float32)
    image[7, 7] = 1.0
    out = cvf.apply(image, "dilate", shape="ellipse", size=7, backend="cpu")
    expected = np.zeros_like(image)
    expected[4:11, 4:11] = FOOTPRINTS["ellipse", 7]
    np.testing.assert_array_equal(out, expected)
    twice = cvf.apply(image, "dilate", shape="cross", size=5, iterations=2, backend="cpu")
    assert twice[7, 3] == 1.0 and twice[3, 7] == 1.0 and twice[7, 2] == 0.0 and twice[5, 5] == 1.0
