"""Display copies (cvfilters.viz.sheets.display): depth and channel conversion, alpha over white, fitting.

References: exact values worked out by hand (``v * 255 / 65535`` is ``v / 257``; alpha over
white is ``(c * a + 255 * (255 - a)) / 255``), OpenCV's own float-to-integer conversion, and
``cv2.resize`` at the size, place and interpolation written out here (the geometry is what
is tested; 0 tolerance throughout).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from cvfilters.viz.sheets.display import convert_channels, convert_depth, fit, shrink_by, to_display

WHITE = 255


def noise(height: int, width: int, channels: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (height, width, channels), dtype=np.uint8)


# ---------------------------------------------------------------- depth
def test_convert_depth_scales_to_each_depth() -> None:
    levels16 = np.arange(65536, dtype=np.uint16)
    np.testing.assert_array_equal(convert_depth(levels16, np.uint8), np.rint(levels16 / 257))  # no ties
    levels8 = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(convert_depth(levels8, np.uint16), levels8.astype(np.uint32) * 257)
    as_float = convert_depth(levels8, np.float32)
    assert as_float.dtype == np.float32
    np.testing.assert_allclose(as_float, levels8 / 255, rtol=1e-6, atol=0)
    assert convert_depth(levels8, np.uint8) is levels8


def test_convert_depth_clips_float_input_to_0_1() -> None:
    values = np.array([-0.2, 0.0, 0.5, 1.0, 1.3], np.float32)
    np.testing.assert_array_equal(convert_depth(values, np.uint8), [0, 0, 128, 255, 255])  # 127.5 to even
    np.testing.assert_array_equal(convert_depth(values, np.uint16), [0, 0, 32768, 65535, 65535])


@pytest.mark.parametrize(("dtype", "depth"), [(np.uint8, cv2.CV_8U), (np.uint16, cv2.CV_16U)])
def test_convert_depth_rounds_float32_like_opencv(dtype: type, depth: int) -> None:
    """Values next to a half level: float32 products, as OpenCV scales (a float64 product rounds
    128 of these 765, and 32640 of 196605, the other way)."""
    full = np.iinfo(dtype).max
    half = ((np.arange(full) + 0.5) / full).astype(np.float32)
    values = np.concatenate([half, np.nextafter(half, np.float32(0)), np.nextafter(half, np.float32(1))])[None, :]
    expected = cv2.addWeighted(values, float(full), values, 0.0, 0.0, dtype=depth)  # Mat::convertTo(full)
    np.testing.assert_array_equal(convert_depth(values, dtype), expected)


# ---------------------------------------------------------------- channels
@pytest.mark.parametrize("shape", [(3, 5), (3, 5, 1)])
def test_gray_becomes_bgr_and_opaque_bgra(shape: tuple[int, ...]) -> None:
    gray = noise(3, 5, 1).reshape(shape)
    plane = gray.reshape(3, 5)
    np.testing.assert_array_equal(convert_channels(gray, 3), np.dstack([plane] * 3))
    np.testing.assert_array_equal(convert_channels(gray, 4), np.dstack([plane] * 3 + [np.full((3, 5), 255)]))


def test_bgr_becomes_opaque_bgra_and_nothing_is_dropped() -> None:
    bgr = noise(3, 5)
    np.testing.assert_array_equal(convert_channels(bgr, 4), np.dstack([bgr, np.full((3, 5), 255)]))
    assert convert_channels(bgr, 3) is bgr
    with pytest.raises(ValueError, match="^cannot reduce 4 channels to 3$"):
        convert_channels(noise(3, 5, 4), 3)


# ---------------------------------------------------------------- to_display
def test_to_display_blends_partial_alpha_over_white() -> None:
    colour = noise(16, 16, 3, seed=1).astype(np.int64)
    alpha = np.arange(256).reshape(16, 16, 1)
    shown = to_display(np.dstack([colour, alpha]).astype(np.uint8))
    exact = (colour * alpha + WHITE * (255 - alpha)) / 255  # never exactly .5: 255 is odd
    assert shown.dtype == np.uint8
    np.testing.assert_array_equal(shown, np.rint(exact))


def test_to_display_of_16_bit_gray() -> None:
    gray = np.array([[0, 257, 65535]], np.uint16)
    np.testing.assert_array_equal(to_display(gray), [[[0] * 3, [1] * 3, [255] * 3]])


# ---------------------------------------------------------------- fit
def placed(box: tuple[int, int], image: np.ndarray, top: int, left: int) -> np.ndarray:
    """A white ``box`` (height, width) with ``image`` at (top, left)."""
    canvas = np.full((*box, 3), WHITE, np.uint8)
    canvas[top:top + image.shape[0], left:left + image.shape[1]] = image
    return canvas


@pytest.mark.parametrize(("shape", "size", "top", "left"), [
    ((15, 50), (20, 6), 7, 0),    # wide: the width limits, factor 0.4, centred vertically
    ((50, 15), (6, 20), 0, 7),    # tall: the height limits
])
def test_fit_shrinks_by_area_keeping_the_aspect_centred(shape: tuple[int, int], size: tuple[int, int], top: int,
                                                        left: int) -> None:
    image = noise(*shape)
    out = fit(image, 20, 20)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, placed((20, 20), cv2.resize(image, size, interpolation=cv2.INTER_AREA),
                                              top, left))


def test_fit_enlarges_by_repeating_pixels() -> None:
    image = noise(4, 6)
    out = fit(image, 12, 12)  # factor 2: each pixel a 2 x 2 block, 8 rows centred in 12
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, placed((12, 12), image.repeat(2, axis=0).repeat(2, axis=1), 2, 0))
    out = fit(noise(8, 10, seed=2), 15, 15)  # factor 1.5, still nearest
    np.testing.assert_array_equal(out, placed((15, 15), cv2.resize(noise(8, 10, seed=2), (15, 12),
                                                                   interpolation=cv2.INTER_NEAREST), 1, 0))


@pytest.mark.parametrize(("shape", "size"), [((1, 30), (10, 1)), ((30, 1), (1, 10))])
def test_fit_keeps_a_thin_side_one_pixel(shape: tuple[int, int], size: tuple[int, int]) -> None:
    image = noise(*shape)
    out = fit(image, 10, 10)  # factor 1/3: the thin side rounds to 0, kept at 1
    line = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    np.testing.assert_array_equal(out, placed((10, 10), line, (10 - size[1]) // 2, (10 - size[0]) // 2))


# ---------------------------------------------------------------- shrink_by
def test_shrink_by_area_average_with_the_callers_rounding() -> None:
    image = noise(20, 30)
    out = shrink_by(image, 0.35, round)  # 10.5 -> 10 (to even), 7.0 -> 7
    np.testing.assert_array_equal(out, cv2.resize(image, (10, 7), interpolation=cv2.INTER_AREA))
    assert shrink_by(image, 0.02, int).shape == (1, 1, 3)  # each side at least 1
    assert shrink_by(noise(10, 100), 0.05, int).shape == (1, 5, 3)
    assert shrink_by(noise(100, 10), 0.05, int).shape == (5, 1, 3)
