"""Morphology against scipy.ndimage grey morphology with the same footprint.

The seven filters are built by ``_define`` and ``_params`` when the module is imported, so
running ``dilate`` says nothing about a filter they build later (mutation testing switches a
mutant on after the import): the tests at the end call them, compare what they declare with
``cvfilters info`` written out, and run the filter they register against scipy.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import cv2
import numpy as np
import pytest
from scipy import ndimage

import cvfilters as cvf
from cvfilters.core.context import ImageInfo
from cvfilters.engine.tiles import process
from cvfilters.filters.morphology import OPERATIONS, _define, _params
from cvfilters.registry import catalog as registry
from cvfilters.registry.footprints import Halo, Local
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


# ---------------------------------------------------------------- the factory (_define, _params)
SHAPE = {"name": "shape", "type": "choice", "default": "ellipse", "choices": ["ellipse", "rect", "cross"],
         "unit": "", "help": "structuring element: ellipse (a disc), rect (a square) or cross (a plus sign)",
         "required": False}
ITERATIONS = {"name": "iterations", "type": "int", "default": 1, "min": 1, "max": 20, "unit": "",
              "help": "times the dilation/erosion is applied (OpenCV: open is n erosions then n dilations)",
              "required": False}


def size_param(default: int) -> dict[str, Any]:
    """``cvfilters info top_hat --json``'s size, with the default of the filter."""
    return {"name": "size", "type": "int", "default": default, "min": 1, "max": 99, "unit": "px",
            "help": "width and height of the structuring element (odd, so its centre is a pixel)",
            "required": False, "odd": True}


@pytest.fixture
def fresh() -> Iterator[str]:
    """A filter name no other test uses, unregistered after the test."""
    name = f"test_morph_{uuid.uuid4().hex[:8]}"
    yield name
    registry.unregister(name)


@pytest.mark.parametrize("default_size", [3, 15])
def test_params_are_declared_as_cvfilters_info_shows(default_size: int) -> None:
    assert [p.describe() for p in _params(default_size)] == [SHAPE, size_param(default_size), ITERATIONS]


def test_define_declares_a_filter_as_cvfilters_info_shows(fresh: str) -> None:
    _define(fresh, cv2.MORPH_GRADIENT, "A test gradient.", "``out = d - e``", 3)
    assert registry.get(fresh).info() == {
        "name": fresh, "category": "morphology", "summary": "A test gradient.", "alpha": "premultiply",
        "linear": False, "float_range": "kept: float values outside 0..1 (HDR light, signed values) pass through",
        "description": "``out = d - e``; ``B`` is the structuring element of ``shape`` and ``size``, ``n`` is\n"
                       "``iterations``.\n\nPer channel (cv2.morphologyEx); out-of-image pixels never win "
                       "(OpenCV's default\nneutral constant border, the same as replicating the edge for these "
                       "elements).\nWith alpha, works on premultiplied colour.",
        "footprint": "local: each output pixel from the input within a halo of 2 px",
        "params": [SHAPE, size_param(3), ITERATIONS]}


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_define_runs_its_operation_with_the_chosen_element(fresh: str, dtype: type) -> None:
    # float32 values outside 0..1 pass through (unbounded): a clamp to 0..1 first would change them
    _define(fresh, cv2.MORPH_GRADIENT, "A test gradient.", "``out = d - e``", 3)
    image = photo(19, 23, 3, np.uint8)
    if dtype == np.float32:
        image = image.astype(np.float32) / 64 - 1.0
    out = cvf.apply(image, fresh, shape="cross", size=5, iterations=2, backend="cpu")
    np.testing.assert_allclose(out, reference("morph_gradient", image, FOOTPRINTS["cross", 5], 2), atol=1e-6)


@pytest.mark.parametrize(("size", "iterations", "reach"), [(3, 1, 2), (5, 2, 8), (7, 3, 18)])
def test_halo_is_n_erosions_then_n_dilations(size: int, iterations: int, reach: int) -> None:
    # each pass reaches size // 2 px; open chains n erosions and n dilations (reach written out)
    spec = ImageInfo(64, 64, 3, np.dtype(np.uint8))
    footprint = registry.get("open").footprint_for({"shape": "rect", "size": size, "iterations": iterations}, spec)
    assert footprint == Local(Halo.square(reach))
    assert isinstance(footprint.halo.top, int)


def test_open_in_tiles_equals_the_whole_image() -> None:
    # 7 px tiles with the halo of 2 erosions and 2 dilations of a 5 px element (8 px): a smaller halo
    # reads the tile's edge where the whole image has neighbours
    image = photo(31, 37, 1, np.uint8)
    whole = cvf.apply(image, "open", shape="rect", size=5, iterations=2, backend="cpu")
    np.testing.assert_array_equal(whole, reference("open", image, np.ones((5, 5), bool), 2))
    np.testing.assert_array_equal(process(image, "open:shape=rect,size=5,iterations=2", tile_size=7), whole)
