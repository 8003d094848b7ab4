"""Built-in filters against independent references: scipy.ndimage, numpy formulas, hand-checked arrays."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

import cvfilters as cvf
from cvfilters.backends import BORDERS
from tests.conftest import photo

# cvfilters border name -> scipy.ndimage mode
SCIPY_MODE = {"reflect101": "mirror", "replicate": "nearest", "reflect": "reflect", "wrap": "wrap",
              "constant": "constant"}
ASYMMETRIC = np.array([[1, 2, 0, -1, 3], [0, -2, 5, 1, 0], [2, 0, -1, 0, 1]], dtype=np.float64)


def planes(image: np.ndarray) -> list[np.ndarray]:
    return [image] if image.ndim == 2 else [image[..., c] for c in range(image.shape[2])]


def per_channel(fn, image: np.ndarray) -> np.ndarray:
    results = [fn(p.astype(np.float64)) for p in planes(image)]
    return results[0] if image.ndim == 2 else np.dstack(results)


@pytest.mark.parametrize("border", list(BORDERS))
@pytest.mark.parametrize("mode", ["correlate", "convolve"])
def test_convolve_float_matches_scipy(backend: str, border: str, mode: str) -> None:
    image = photo(31, 45, 3, np.float32)
    out = cvf.apply(image, "convolve", kernel=ASYMMETRIC, mode=mode, border=border, backend=backend)
    scipy_fn = ndimage.correlate if mode == "correlate" else ndimage.convolve
    expected = per_channel(lambda p: scipy_fn(p, ASYMMETRIC, mode=SCIPY_MODE[border], cval=0.0), image)
    np.testing.assert_allclose(out, expected, atol=2e-5)


@pytest.mark.parametrize("border", ["reflect101", "wrap"])
def test_convolve_uint8_rounds_and_saturates(border: str) -> None:
    image = photo(20, 24, 1, np.uint8)
    out = cvf.apply(image, "convolve", kernel=ASYMMETRIC, border=border, bias=0.25, scale=0.5, backend="cpu")
    exact = 0.5 * ndimage.correlate(image.astype(np.float64), ASYMMETRIC, mode=SCIPY_MODE[border]) + 0.25 * 255
    expected = np.clip(np.round(exact), 0, 255)
    assert np.abs(out.astype(np.float64) - expected).max() <= 1  # float32 kernel arithmetic may flip a .5


def test_convolve_normalize_bias_scale_formula() -> None:
    image = photo(16, 16, 1, np.float32)
    kernel = np.array([[1.0, 2.0, 1.0]])
    out = cvf.apply(image, "convolve", kernel=kernel, normalize=True, bias=0.1, scale=2.0, backend="cpu")
    expected = 2.0 * ndimage.correlate(image.astype(np.float64), kernel / 4.0, mode="mirror") + 0.1
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_convolve_identity_kernel_is_exact_for_uint16() -> None:
    image = photo(9, 11, 3, np.uint16)
    np.testing.assert_array_equal(cvf.apply(image, "convolve", kernel=[[0, 0, 0], [0, 1, 0], [0, 0, 0]]), image)


@pytest.mark.parametrize("sigma", [1.0, 2.5])
def test_gaussian_matches_scipy(backend: str, sigma: float) -> None:
    image = photo(40, 50, 3, np.float32)
    radius = int(4 * sigma + 0.5)  # scipy's default truncate=4.0
    out = cvf.apply(image, "gaussian_blur", sigma=sigma, ksize=2 * radius + 1, backend=backend)
    expected = per_channel(lambda p: ndimage.gaussian_filter(p, sigma, mode="mirror", truncate=4.0), image)
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_box_blur_matches_scipy_uniform_filter() -> None:
    image = photo(30, 30, 1, np.float32)
    out = cvf.apply(image, "box_blur", size=5, border="replicate", backend="cpu")
    np.testing.assert_allclose(out, ndimage.uniform_filter(image.astype(np.float64), 5, mode="nearest"), atol=1e-5)


def test_sobel_hand_computed() -> None:
    # I(x, y) = 10 x + y^2 on a 4 x 5 grid; Sobel 3x3 dx = 8 * 10 = 80 inside; reflect101
    # makes the first and last columns mirror their neighbours, so their derivative is 0.
    y, x = np.mgrid[0:4, 0:5]
    image = (10 * x + y * y).astype(np.float32)
    dx = cvf.apply(image, "sobel", dx=1, dy=0, backend="cpu")
    expected_dx = np.array([[0, 80, 80, 80, 0]] * 4, dtype=np.float32)
    np.testing.assert_allclose(dx, expected_dx, atol=1e-4)
    # dy of y^2 with [1,2,1] smoothing in x (constant in x) -> 4 * (I(y+1) - I(y-1)) = 4 * 4y = 16 y;
    # reflect101 at y=0 and y=3 gives 0.
    dy = cvf.apply(image, "sobel", dx=0, dy=1, backend="cpu")
    expected_dy = np.array([[0] * 5, [16] * 5, [32] * 5, [0] * 5], dtype=np.float32)
    np.testing.assert_allclose(dy, expected_dy, atol=1e-4)
    magnitude = cvf.apply(image, "sobel", magnitude=True, backend="cpu")
    np.testing.assert_allclose(magnitude, np.hypot(expected_dx, expected_dy), atol=1e-3)


def test_sobel_uint8_saturates_absolute_value() -> None:
    image = np.zeros((5, 6), np.uint8)
    image[:, 3:] = 200  # a step: |dx| = 4 * 200 = 800 -> saturates at 255
    out = cvf.apply(image, "sobel", backend="cpu")
    np.testing.assert_array_equal(out[:, 2:4], 255)
    np.testing.assert_array_equal(out[:, [0, 5]], 0)


def vignette_reference(width: int, height: int, x: float, y: float, center, radius, intensity) -> float:
    half_diagonal = 0.5 * (width**2 + height**2) ** 0.5
    r = ((x + 0.5 - center[0] * width) ** 2 + (y + 0.5 - center[1] * height) ** 2) ** 0.5
    return min(1.0, max(0.0, 1 - intensity * (r / (radius * half_diagonal)) ** 2))


@pytest.mark.parametrize(("center", "radius", "intensity"), [((0.5, 0.5), 1.0, 1.0), ((0.2, 0.7), 0.5, 2.0)])
def test_vignette_formula_at_sample_pixels(backend: str, center, radius, intensity) -> None:
    image = np.full((30, 40, 3), 0.8, np.float32)
    out = cvf.apply(image, "vignette", center=center, radius=radius, intensity=intensity, backend=backend)
    for x, y in [(0, 0), (39, 29), (20, 15), (5, 25), (33, 3)]:
        expected = 0.8 * vignette_reference(40, 30, x, y, center, radius, intensity)
        np.testing.assert_allclose(out[y, x], expected, atol=1e-5)


def test_vignette_keeps_alpha_and_zero_intensity_is_identity() -> None:
    image = photo(20, 20, 4, np.uint8)
    out = cvf.apply(image, "vignette", intensity=2.0)
    np.testing.assert_array_equal(out[..., 3], image[..., 3])
    np.testing.assert_array_equal(cvf.apply(image, "vignette", intensity=0.0), image)


@pytest.mark.parametrize(("height", "width", "size"), [(32, 48, 8), (37, 50, 8), (5, 3, 4), (20, 20, 30)])
def test_pixellate_equals_block_means(backend: str, height: int, width: int, size: int) -> None:
    image = photo(height, width, 3, np.float32)
    out = cvf.apply(image, "pixellate", size=size, backend=backend)
    expected = np.empty_like(image)
    for y in range(0, height, size):
        for x in range(0, width, size):
            cell = image[y : y + size, x : x + size]
            expected[y : y + size, x : x + size] = cell.reshape(-1, 3).mean(axis=0)
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_invert_grayscale_flip_formulas() -> None:
    image = photo(10, 12, 3, np.uint16)
    np.testing.assert_array_equal(cvf.apply(image, "invert"), 65535 - image)
    floats = photo(10, 12, 3, np.float32)
    np.testing.assert_allclose(cvf.apply(floats, "invert"), 1 - floats, atol=1e-7)
    gray = cvf.apply(floats, "grayscale")
    luma = 0.114 * floats[..., 0] + 0.587 * floats[..., 1] + 0.299 * floats[..., 2]
    for channel in range(3):
        np.testing.assert_allclose(gray[..., channel], luma, atol=1e-5)
    np.testing.assert_array_equal(cvf.apply(image, "flip", axis="horizontal"), image[:, ::-1])
    np.testing.assert_array_equal(cvf.apply(image, "flip", axis="vertical"), image[::-1])
    np.testing.assert_array_equal(cvf.apply(image, "flip", axis="both"), image[::-1, ::-1])


def test_premultiplied_blur_leaves_no_dark_fringe(backend: str) -> None:
    # A white disk on a fully transparent black background: a straight-alpha blur
    # would pull black into the soft edge; premultiplied blur keeps it white.
    yy, xx = np.mgrid[0:40, 0:40]
    alpha = np.where(np.hypot(xx - 20, yy - 20) < 10, 255, 0).astype(np.uint8)
    image = np.dstack([np.where(alpha > 0, 255, 0).astype(np.uint8)] * 3 + [alpha])
    out = cvf.apply(image, "gaussian_blur", sigma=3, backend=backend)
    edge = out[..., 3] >= 8  # visible after blurring
    assert edge.sum() > image[..., 3].astype(bool).sum()  # alpha spread outwards
    assert out[..., :3][edge].min() >= 250


def test_alpha_fully_opaque_matches_three_channel_result() -> None:
    bgr = photo(24, 24, 3, np.uint8)
    bgra = np.dstack([bgr, np.full(bgr.shape[:2], 255, np.uint8)])
    three = cvf.apply(bgr, "gaussian_blur", sigma=2)
    four = cvf.apply(bgra, "gaussian_blur", sigma=2)
    assert np.abs(four[..., :3].astype(int) - three).max() <= 1
    np.testing.assert_array_equal(four[..., 3], 255)


@pytest.mark.parametrize("kernel", [
    [[0, 0, 0], [1, 2, 1], [3, 0, 1]],  # one zero edge row: nothing may be trimmed
    [[0, 1, 0], [0, 2, 5], [0, 1, 0]],  # one zero edge column
    [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 1, -2, 3, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]],  # zero pairs: trimmed
    [[0, 0, 0], [0, 0, 0], [0, 0, 0]],  # all zero: the bias alone
    [[0, 0, 0, 0], [0, 0, 2, 0]],  # even sides with zero edges
])
def test_convolve_kernels_with_zero_edges_match_scipy(kernel: list[list[float]]) -> None:
    """Zero outer rows and columns may be dropped only in pairs, keeping the anchor where it is."""
    image = photo(17, 21, 1, np.float32)
    out = cvf.apply(image, "convolve", kernel=kernel, bias=0.125, border="replicate", backend="cpu")
    k = np.asarray(kernel, float)
    # scipy's origin for even sides: the anchor after the last tap's centre, as cvfilters documents for correlate
    expected = ndimage.correlate(image.astype(np.float64), k, mode="nearest") + 0.125
    np.testing.assert_allclose(out, expected, atol=2e-6)
