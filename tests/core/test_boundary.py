"""cvfilters.core.boundary: what crosses the Python API in comes back out as the same kind,
checked against numpy formulas (BT.601 luma, the int16 mapping) and hand-built arrays."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from cvfilters.core import boundary
from cvfilters.core.errors import InvalidImageError

RNG = np.random.default_rng(7)


def bt601(r: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 0.299 * r.astype(float) + 0.587 * g.astype(float) + 0.114 * b.astype(float)


@pytest.mark.parametrize("order", ["bgr", "rgb"])
def test_gray_alpha_comes_back_as_bt601_luma_of_the_channels_in_their_order(order):
    colour = RNG.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    alpha = RNG.integers(0, 256, (6, 8), dtype=np.uint8)
    out = boundary.leave(np.dstack([colour, alpha]), boundary.Entry(order, gray_alpha=True))
    first, third = colour[..., 0], colour[..., 2]
    r, b = (third, first) if order == "bgr" else (first, third)
    assert out.shape == (6, 8, 2)
    np.testing.assert_allclose(out[..., 0], bt601(r, colour[..., 1], b), atol=1)
    np.testing.assert_array_equal(out[..., 1], alpha)


@pytest.mark.parametrize("equal", [(0, 1), (1, 2), (0, 2)])
def test_two_equal_channels_are_not_gray_yet(equal):
    colour = RNG.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    colour[..., equal[1]] = colour[..., equal[0]]
    out = boundary.leave(np.dstack([colour, colour[..., 0]]), boundary.Entry("bgr", gray_alpha=True))
    np.testing.assert_allclose(out[..., 0], bt601(colour[..., 2], colour[..., 1], colour[..., 0]), atol=1)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_equal_channels_come_back_exactly(dtype):
    gray = (RNG.random((6, 8)) * (1 if dtype == np.float32 else np.iinfo(dtype).max)).astype(dtype)
    out = boundary.leave(np.dstack([gray, gray, gray, gray]), boundary.Entry("rgb", gray_alpha=True))
    np.testing.assert_array_equal(out[..., 0], gray)


def test_gray_alpha_goes_in_as_bgra_with_the_gray_repeated_and_back_exactly():
    gray_alpha = RNG.integers(0, 256, (5, 7, 2), dtype=np.uint8)
    inside, entry = boundary.enter(gray_alpha, "bgr")
    np.testing.assert_array_equal(inside, gray_alpha[..., [0, 0, 0, 1]])
    np.testing.assert_array_equal(boundary.leave(inside, entry), gray_alpha)


def test_int16_maps_onto_0_to_1_and_every_level_comes_back():
    levels = np.arange(-32768, 32768, dtype=np.int16).reshape(256, 256)
    inside, entry = boundary.enter(levels, "bgr")
    assert inside.dtype == np.float32
    np.testing.assert_allclose(inside, (levels.astype(np.float64) + 32768) / 65535, atol=1e-7)
    back = boundary.leave(inside, entry)
    assert back.dtype == np.int16
    np.testing.assert_array_equal(back, levels)


def test_float64_runs_as_float32_and_comes_back_float64():
    image = RNG.random((4, 5, 3))
    inside, entry = boundary.enter(image, "bgr")
    assert inside.dtype == np.float32
    back = boundary.leave(inside, entry)
    assert back.dtype == np.float64
    np.testing.assert_allclose(back, image, atol=1e-7)


def test_chw_is_read_as_hwc_and_returned_as_chw():
    chw = RNG.integers(0, 256, (3, 4, 6), dtype=np.uint8)
    inside, entry = boundary.enter(chw, "bgr", layout="chw")
    assert inside.shape == (4, 6, 3) and inside.flags.c_contiguous
    np.testing.assert_array_equal(inside[..., 1], chw[1])
    back = boundary.leave(inside, entry)
    np.testing.assert_array_equal(back, chw)
    assert back.flags.c_contiguous
    two_d, entry2 = boundary.enter(chw[0], "bgr", layout="chw")  # a 2-D array has no channel axis to move
    np.testing.assert_array_equal(boundary.leave(two_d, entry2), chw[0])


@pytest.mark.parametrize(("mode", "shape", "dtype"), [
    ("L", (4, 6), np.uint8), ("LA", (4, 6, 2), np.uint8), ("RGB", (4, 6, 3), np.uint8),
    ("RGBA", (4, 6, 4), np.uint8), ("I;16", (4, 6), np.uint16), ("F", (4, 6), np.float32),
])
def test_pil_images_come_back_as_pil_images_of_their_mode(mode, shape, dtype):
    array = (RNG.random(shape) * (1 if dtype == np.float32 else np.iinfo(dtype).max)).astype(dtype)
    picture = Image.fromarray(array)
    assert picture.mode == mode
    inside, entry = boundary.enter(picture, "bgr")
    assert entry.order == "rgb" and entry.pil  # PIL images are RGB whatever the default says
    back = boundary.leave(inside, entry)
    assert isinstance(back, Image.Image) and back.mode == mode
    np.testing.assert_array_equal(np.asarray(back), np.asarray(picture))


def test_results_that_are_not_arrays_pass_and_bad_inputs_are_refused():
    assert boundary.leave("a report", boundary.Entry("bgr")) == "a report"
    with pytest.raises(InvalidImageError, match="layout='xyz'"):
        boundary.enter(np.zeros((2, 2), np.uint8), "bgr", layout="xyz")
    with pytest.raises(InvalidImageError, match=r"^image: dtype int8 is not supported \(use uint8, uint16, int16, "
                                                 r"float32 or float64\)$"):
        boundary.enter(np.zeros((2, 2), np.int8), "bgr")
    with pytest.raises(InvalidImageError, match=r"^the result \(uint16, 3 channels\) has no PIL mode; pass a numpy "
                                                 r"array to get it as one$"):
        boundary.leave(np.zeros((2, 2, 3), np.uint16), boundary.Entry("rgb", pil=True))


def test_a_one_channel_result_of_a_pil_input_is_a_pil_l_image():
    result = RNG.integers(0, 256, (4, 6, 1), dtype=np.uint8)
    back = boundary.leave(result, boundary.Entry("rgb", pil=True))
    assert back.mode == "L"
    np.testing.assert_array_equal(np.asarray(back), result[..., 0])
