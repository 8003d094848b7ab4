"""Cartoon looks at their decision points: ties at a threshold, the reach of toon's smoothing, edges=none.

References are built here: Gaussian taps and the 3 x 3 Sobel in numpy, ``cv2.bilateralFilter``
called directly, GPUImage's crosshatch rule (``<=``) from tests/filters/test_cartoon.py.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.errors import ParameterError
from tests.conftest import photo
from tests.filters.test_cartoon import crosshatch_reference


def step_image(height: int, width: int, low: float, high: float) -> np.ndarray:
    """A gray float32 image: ``low`` left of column ``width // 2``, ``high`` from it on."""
    image = np.full((height, width), low, np.float32)
    image[:, width // 2 :] = high
    return image


def smoothed_sobel_magnitude(image: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian of ``2 round(4 sigma) + 1`` normalised taps, then the 3 x 3 Sobel, replicated edges (float64)."""
    reach = round(4 * sigma)
    x = np.arange(-reach, reach + 1)
    taps = np.exp(-(x**2) / (2 * sigma**2))
    taps /= taps.sum()
    p = np.pad(image.astype(np.float64), reach, mode="edge")
    rows = sum(t * p[:, i : i + image.shape[1]] for i, t in enumerate(taps))
    smooth = sum(t * rows[i : i + image.shape[0]] for i, t in enumerate(taps))
    q = np.pad(smooth, 1, mode="edge")
    gx = (q[:-2, 2:] + 2 * q[1:-1, 2:] + q[2:, 2:]) - (q[:-2, :-2] + 2 * q[1:-1, :-2] + q[2:, :-2])
    gy = (q[2:, :-2] + 2 * q[2:, 1:-1] + q[2:, 2:]) - (q[:-2, :-2] + 2 * q[:-2, 1:-1] + q[:-2, 2:])
    return np.hypot(gx, gy)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("sigma", "threshold"), [(0.5, 2e-4), (1.1, 3e-5)])
def test_toon_smoothing_reaches_round_4_sigma(sigma: float, threshold: float) -> None:
    """A step's outline at a low threshold spans the Gaussian's reach, ``round(4 sigma)``, plus the Sobel's 1 px.

    The thresholds sit between the magnitude at that last column (the kernel's outermost tap)
    and 0 beyond it, both far from the threshold (more than 1e-5 of full scale).
    """
    image = step_image(5, 40, 0.25, 0.75)
    out = cvf.apply(image, "toon", smoothing=sigma, threshold=threshold, levels=10, backend="cpu")
    magnitude = smoothed_sobel_magnitude(image, sigma)
    assert np.abs(magnitude - threshold).min() > 1.5e-5  # every pixel decided
    outline = out == 0  # posterized 0.25 and 0.75 are 0.3 and 0.8: only outlines are black
    np.testing.assert_array_equal(outline, magnitude >= threshold)
    reach = round(4 * sigma) + 1
    np.testing.assert_array_equal(np.flatnonzero(outline[2]), np.arange(20 - reach, 20 + reach))


def test_toon_magnitude_exactly_at_the_threshold_is_an_outline() -> None:
    """``1 - step(threshold, |grad|)``: a step of 0.25 has Sobel magnitude 4 x 0.25 = 1 exactly: black at 1."""
    image = step_image(4, 10, 0.5, 0.75)
    out = cvf.apply(image, "toon", smoothing=0.0, threshold=1.0, levels=4, backend="cpu")
    expected = np.where(np.arange(10) < 5, 0.5, 0.75).astype(np.float32) * np.ones((4, 1), np.float32)
    expected[:, 4:6] = 0.0  # the two columns either side of the step
    np.testing.assert_array_equal(out, expected)


def test_crosshatch_lines_include_their_width() -> None:
    """``mod(u + v, spacing) <= line_width`` with whole numbers (the defaults, 12 and 1): the limit is on the line."""
    image = photo(40, 50, 3, np.uint8)
    out = cvf.apply(image, "crosshatch", backend="cpu")
    np.testing.assert_array_equal(out[..., 0] == 255, crosshatch_reference(image, 12, 1))
    with pytest.raises(ParameterError, match="line_width=12 must be smaller than spacing=12"):
        cvf.get_filter("crosshatch").resolve({"spacing": 12, "line_width": 12})


def test_cartoon_uint8_without_edges_is_the_bilateral_alone() -> None:
    """edges=none, quantize=none on uint8: the classic recipe's colour, ``cv2.bilateralFilter`` with no outline."""
    image = photo(30, 36, 3, np.uint8)
    out = cvf.apply(image, "cartoon", edges="none", quantize="none", passes=1, scale=1.0, diameter=5,
                    sigma_color=40.0, sigma_space=3.0, backend="cpu")
    np.testing.assert_array_equal(out, cv2.bilateralFilter(image, 5, 40.0, 3.0, borderType=cv2.BORDER_REPLICATE))


def test_cartoon_with_nothing_to_do_says_so_in_full() -> None:
    """edges=none, quantize=none and passes=0 are refused with the whole documented sentence, unaltered."""
    with pytest.raises(ParameterError) as refused:
        cvf.get_filter("cartoon").resolve({"edges": "none", "quantize": "none", "passes": 0})
    assert str(refused.value).endswith(": edges=none, quantize=none and passes=0 leave nothing to do")


def test_cartoon_float32_colour_is_the_bilateral_at_sigma_color_over_255() -> None:
    """float32 0..1: ``sigma_color`` is in 8-bit levels, so cv2.bilateralFilter gets ``sigma_color / 255`` exactly."""
    image = photo(30, 36, 3, np.float32)
    out = cvf.apply(image, "cartoon", edges="none", quantize="none", passes=1, scale=1.0, diameter=5,
                    sigma_color=40.0, sigma_space=3.0, backend="cpu")
    expected = cv2.bilateralFilter(image, 5, 40.0 / 255, 3.0, borderType=cv2.BORDER_REPLICATE)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-6)


def test_cartoon_scale_down_to_one_pixel_smooths_to_the_mean_colour() -> None:
    """A scale that rounds the image to 1 x 1 px: the area resize is the mean colour, spread back everywhere.

    20 x 24 px at scale 0.05 is round(1.2) x round(1.0) = 1 x 1 (never less): every pixel is the image's
    mean colour (numpy, float64), within float32 rounding (1e-5).
    """
    image = photo(20, 24, 3, np.float32)
    out = cvf.apply(image, "cartoon", edges="none", quantize="none", passes=1, scale=0.05, backend="cpu")
    mean = image.astype(np.float64).mean(axis=(0, 1))
    np.testing.assert_allclose(out, np.broadcast_to(mean, image.shape), rtol=0, atol=1e-5)
