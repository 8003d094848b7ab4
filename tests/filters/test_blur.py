"""Blurs against independent references: scipy.ndimage, numpy formulas, kernels built here."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from scipy import ndimage

import cvfilters as cvf
from cvfilters.engine.pipeline import Pipeline
from cvfilters.engine.tiles import plan, process
from cvfilters.filters.blur import median_filter, tilt_shift_mask
from tests.conftest import PARITY_TOLERANCE, photo, photo16, visible


def per_channel(fn, image: np.ndarray) -> np.ndarray:
    values = image.astype(np.float64)
    if values.ndim == 2:
        return fn(values)
    return np.dstack([fn(values[..., c]) for c in range(values.shape[2])])


def footprint_size(image: np.ndarray, size: int) -> tuple[int, ...]:
    return (size, size) + (1,) * (image.ndim - 2)


# ----------------------------------------------------------------------------- median
def noise(shape: tuple[int, ...], dtype: type, levels: int | None = None, seed: int = 0) -> np.ndarray:
    """Random images with a chosen number of distinct values (to reach each median method)."""
    rng = np.random.default_rng(seed)
    if dtype == np.uint16:
        values = rng.integers(0, 65536, size=shape) if levels is None else rng.integers(0, levels, size=shape) * 61
        return values.astype(np.uint16)
    values = rng.random(shape) if levels is None else rng.integers(0, levels, size=shape) / levels
    return values.astype(np.float32)


MEDIAN_CASES = [
    # (id, image factory, size): the comment names the method the image reaches
    ("uint8-photo-15", lambda: photo(40, 52, 3, np.uint8), 15),  # cv2.medianBlur, any size for uint8
    ("uint8-noise-31", lambda: noise((45, 50), np.float32).__mul__(255).astype(np.uint8), 31),
    ("uint16-photo-5", lambda: photo(30, 34, 3, np.uint16), 5),  # cv2.medianBlur (size <= 5)
    ("float32-photo-3", lambda: photo(30, 34, 1, np.float32), 3),
    ("uint16-photo-9", lambda: photo(40, 52, 3, np.uint16), 9),  # <= 256 values: uint8 ranks
    ("float32-photo-7", lambda: photo(40, 52, 4, np.float32)[..., :3].copy(), 7),
    ("uint16-noise-7", lambda: noise((41, 47), np.uint16), 7),  # <= 65536 values: uint16 ranks
    ("uint16-noise-21", lambda: noise((30, 60, 3), np.uint16, seed=3), 21),
    ("uint16-levels-11", lambda: noise((40, 40), np.uint16, levels=900), 11),  # few high bytes: byte by byte
    ("uint16-noise-51", lambda: noise((70, 66), np.uint16, seed=4), 51),
    ("float32-levels-9", lambda: noise((35, 45, 3), np.float32, levels=5000), 9),
    ("float32-noise-7", lambda: noise((260, 270), np.float32), 7),  # > 65536 values: numpy selection
    ("float32-noise-13", lambda: noise((300, 230), np.float32, seed=5), 13),
]


@pytest.mark.parametrize(("factory", "size"), [c[1:] for c in MEDIAN_CASES], ids=[c[0] for c in MEDIAN_CASES])
def test_median_matches_scipy(factory, size: int) -> None:
    image = factory()
    out = cvf.apply(image, "median_blur", size=size, backend="cpu")
    expected = ndimage.median_filter(image, size=footprint_size(image, size), mode="nearest")
    assert out.dtype == image.dtype and out.shape == image.shape
    np.testing.assert_array_equal(out, expected)


def test_median_cases_reach_every_method() -> None:
    distinct = {c[0]: len(np.unique(c[1]())) for c in MEDIAN_CASES}
    assert distinct["uint16-photo-9"] <= 256 and distinct["float32-photo-7"] <= 256
    assert 256 < distinct["uint16-noise-7"] <= 65536 and 256 < distinct["float32-levels-9"] <= 65536
    assert distinct["float32-noise-7"] > 65536 and distinct["float32-noise-13"] > 65536


@pytest.mark.parametrize(("dtype", "size", "on_host"), [
    (np.uint16, 9, True),  # cv2.medianBlur takes uint16 only up to size 5
    (np.uint16, 5, False),
    (np.uint8, 9, False),  # uint8 at any size
])
def test_median_on_device_is_exact_and_counts_the_host_step(backend: str, dtype: type, size: int,
                                                            on_host: bool) -> None:
    image = noise((33, 37, 3), np.uint16, seed=7)
    image = image if dtype == np.uint16 else (image >> 8).astype(np.uint8)
    out, report = Pipeline([("median_blur", {"size": size})]).run(image, backend=backend)
    expected = ndimage.median_filter(image, size=(size, size, 1), mode="nearest")
    np.testing.assert_array_equal(out, expected)
    assert report.counters.fallbacks == ({"median": 1} if on_host and backend != "cpu" else {})


@pytest.mark.parametrize("block_cost", [0, 10**9], ids=["byte-by-byte", "selection"])
@pytest.mark.parametrize(("shape", "size", "seed"), [((41, 47), 7, 0), ((30, 33, 3), 15, 1), ((60, 64), 51, 2)])
def test_median_16_bit_methods_both_exact(monkeypatch, block_cost: int, shape, size: int, seed: int) -> None:
    from cvfilters.filters import blur

    monkeypatch.setattr(blur, "BLOCK_COST", block_cost)  # force one method or the other
    image = noise(shape, np.uint16, seed=seed)
    out = median_filter(image, size)
    np.testing.assert_array_equal(out, ndimage.median_filter(image, size=footprint_size(image, size), mode="nearest"))


def test_median_filter_function_keeps_extreme_values() -> None:
    image = np.zeros((9, 9), np.float32)
    image[4, 4] = np.float32(3.4e38)
    image[0, :] = -np.float32(1e-30)
    np.testing.assert_array_equal(median_filter(image, 7), ndimage.median_filter(image, 7, mode="nearest"))


# ----------------------------------------------------------------------------- bilateral
def bilateral_reference(image: np.ndarray, d: int, sigma_color: float, sigma_space: float,
                        pad: str = "reflect") -> np.ndarray:
    """OpenCV's bilateral filter in numpy: a disc of radius d // 2, L1 colour distance, reflect101
    (``pad`` is numpy's name of the border: "reflect" is OpenCV's reflect101, "edge" replicate)."""
    values = image.astype(np.float64)
    if values.ndim == 2:
        values = values[..., None]
    radius = d // 2
    padded = np.pad(values, ((radius, radius), (radius, radius), (0, 0)), mode=pad)
    height, width = values.shape[:2]
    total = np.zeros_like(values)
    weights = np.zeros(values.shape[:2])
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            if math.hypot(dx, dy) > radius:
                continue
            shifted = padded[radius + dy : radius + dy + height, radius + dx : radius + dx + width]
            distance = np.abs(shifted - values).sum(axis=2)
            w = math.exp(-(dx * dx + dy * dy) / (2 * sigma_space**2)) * np.exp(-distance**2 / (2 * sigma_color**2))
            total += w[..., None] * shifted
            weights += w
    out = total / weights[..., None]
    return out[..., 0] if image.ndim == 2 else out


@pytest.mark.parametrize(("dtype", "channels"), [(np.uint8, 1), (np.uint8, 3), (np.uint16, 1), (np.float32, 3)])
def test_bilateral_matches_numpy_reference(dtype: type, channels: int) -> None:
    image = photo(30, 36, channels, dtype)
    full = {np.uint8: 255.0, np.uint16: 65535.0, np.float32: 1.0}[dtype]
    out = cvf.apply(image, "bilateral", d=7, sigma_color=0.12, sigma_space=3.0, backend="cpu")
    expected = bilateral_reference(image, 7, 0.12 * full, 3.0)
    # cv2 tabulates the colour weight (per level for uint8, 4096 bins over the value range for float)
    assert np.abs(out.astype(np.float64) - expected).max() <= 0.003 * full + (0.5 if dtype == np.uint8 else 0)


@pytest.mark.parametrize(("dtype", "channels", "border"),
                         [(np.uint8, 3, "reflect101"), (np.uint16, 1, "replicate"), (np.float32, 4, "wrap")])
def test_bilateral_device_matches_cpu(device_backend: str, dtype: type, channels: int, border: str) -> None:
    image = photo(40, 44, channels, dtype)
    params = {"d": 0, "sigma_color": 0.2, "sigma_space": 2.0, "border": border}
    expected = cvf.apply(image, "bilateral", backend="cpu", **params)
    actual = cvf.apply(image, "bilateral", backend=device_backend, **params)
    assert np.abs(visible(actual) - visible(expected)).max() <= PARITY_TOLERANCE[np.dtype(dtype)] + 1e-9


@pytest.mark.parametrize(("d", "sigma_space", "border", "pad"), [
    (9, 2.0, "wrap", "wrap"),  # radius 4, more than round(1.5 sigma_space) = 3
    (0, 2.0, "wrap", "wrap"),  # d = 0: radius round(1.5 sigma_space) = 3
    (7, 3.0, "replicate", "edge"),
])
def test_bilateral_radius_and_border_match_numpy_reference(d: int, sigma_space: float, border: str, pad: str) -> None:
    # OpenCV's radius (bilateral_filter.dispatch.cpp): d / 2, or cvRound(1.5 sigma_space) when d <= 0;
    # a wrapped border needs the image padded by at least that much before OpenCV filters it.
    image = np.random.default_rng(3).random((24, 30, 3)).astype(np.float32)  # far pixels unlike near ones
    out = cvf.apply(image, "bilateral", d=d, sigma_color=0.15, sigma_space=sigma_space, border=border, backend="cpu")
    expected = bilateral_reference(image, d if d > 0 else 7, 0.15, sigma_space, pad=pad)
    assert np.abs(out - expected).max() <= 0.003


def test_bilateral_opaque_alpha_equals_three_channels_and_keeps_edges() -> None:
    bgr = photo(30, 30, 3, np.uint16)
    bgra = np.dstack([bgr, np.full(bgr.shape[:2], 65535, np.uint16)])
    three = cvf.apply(bgr, "bilateral", backend="cpu")
    four = cvf.apply(bgra, "bilateral", backend="cpu")
    assert np.abs(four[..., :3].astype(np.int64) - three).max() <= 1
    np.testing.assert_array_equal(four[..., 3], 65535)
    step = np.zeros((20, 20), np.uint8)
    step[:, 10:] = 200
    np.testing.assert_array_equal(cvf.apply(step, "bilateral", sigma_color=0.1, backend="cpu"), step)


# ----------------------------------------------------------------------------- motion blur
def line_kernel_reference(length: float, angle: float) -> np.ndarray:
    """The documented kernel, built another way: distances to a densely sampled segment."""
    half = (length - 1) / 2
    reach = int(math.ceil(half)) + 1
    t = np.linspace(-half, half, 20001)
    points = np.stack([t * math.cos(math.radians(angle)), -t * math.sin(math.radians(angle))], axis=1)
    kernel = np.zeros((2 * reach + 1, 2 * reach + 1))
    for row in range(2 * reach + 1):
        for col in range(2 * reach + 1):
            d = np.hypot(points[:, 0] - (col - reach), points[:, 1] - (row - reach)).min()
            kernel[row, col] = max(0.0, 1.0 - d)
    return kernel / kernel.sum()


@pytest.mark.parametrize(("length", "angle"), [(9.0, 0.0), (9.0, 180.0), (5.0, 90.0), (4.0, 0.0), (1.0, 33.0)])
def test_motion_blur_axis_aligned_is_a_box(length: float, angle: float) -> None:
    image = photo(24, 30, 3, np.float32)
    out = cvf.apply(image, "motion_blur", length=length, angle=angle, backend="cpu")
    taps = np.ones(int(length)) if length % 2 else np.r_[0.5, np.ones(int(length) - 1), 0.5]
    kernel = (taps / taps.sum())[None, :] if angle % 180 == 0 else (taps / taps.sum())[:, None]
    expected = per_channel(lambda p: ndimage.correlate(p, kernel, mode="nearest"), image)
    np.testing.assert_allclose(out, expected, atol=1e-5)


@pytest.mark.parametrize(("length", "angle", "border"), [(12.5, 30.0, "replicate"), (25.0, -60.0, "reflect101"),
                                                          (7.0, 45.0, "wrap"), (16.0, 100.0, "constant")])
def test_motion_blur_matches_numpy_line_kernel(length: float, angle: float, border: str) -> None:
    mode = {"replicate": "nearest", "reflect101": "mirror", "wrap": "wrap", "constant": "constant"}[border]
    image = photo(36, 40, 1, np.float32)
    out = cvf.apply(image, "motion_blur", length=length, angle=angle, border=border, backend="cpu")
    expected = ndimage.correlate(image.astype(np.float64), line_kernel_reference(length, angle), mode=mode)
    np.testing.assert_allclose(out, expected, atol=3e-4)


def test_motion_blur_uint8_on_device(backend: str) -> None:
    image = photo(30, 40, 3, np.uint8)
    out = cvf.apply(image, "motion_blur", length=11.0, angle=30.0, backend=backend)
    kernel = line_kernel_reference(11.0, 30.0)
    expected = per_channel(lambda p: ndimage.correlate(p, kernel, mode="nearest"), image)
    assert np.abs(out - np.round(expected)).max() <= 1


# ----------------------------------------------------------------------------- zoom blur
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_zoom_blur_amount_zero_is_identity(dtype: type) -> None:
    image = photo(20, 26, 3, dtype)
    np.testing.assert_array_equal(cvf.apply(image, "zoom_blur", amount=0.0, backend="cpu"), image)
    with_alpha = photo(20, 26, 4, dtype)  # identical where visible (premultiplied round trip)
    out = cvf.apply(with_alpha, "zoom_blur", amount=0.0, center=(0.1, 0.9), backend="cpu")
    assert np.abs(visible(out) - visible(with_alpha)).max() <= PARITY_TOLERANCE[np.dtype(dtype)]


@pytest.mark.parametrize(("center", "amount"), [((0.5, 0.5), 20.0), ((0.2, 0.7), 6.0), ((0.95, 0.05), 300.0)])
def test_zoom_blur_of_a_ramp_follows_the_documented_scales(backend: str, center, amount: float) -> None:
    # Bilinear sampling is exact on a linear ramp, so the mean of the scaled copies is
    # in(c) + (in(p) - in(c)) * mean_j(s_j) with the scales the docstring gives.
    height, width = 40, 60
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    ramp = lambda xx, yy: (xx + 2 * yy) / 200 + 0.1  # noqa: E731
    image = ramp(x, y).astype(np.float32)
    out = cvf.apply(image, "zoom_blur", center=center, amount=amount, backend=backend)
    cx, cy = center[0] * width - 0.5, center[1] * height - 0.5
    reach = max(math.hypot(px - cx, py - cy) for px in (0, width - 1) for py in (0, height - 1))
    n = min(10, max(1, math.ceil(math.log2(amount + 1))))
    last = 1 - min(amount / reach, 0.95)
    scales = last ** (np.arange(2**n) / (2**n - 1))
    expected = ramp(cx, cy) + (image - ramp(cx, cy)) * scales.mean()
    np.testing.assert_allclose(out, expected, atol=2e-3)


@pytest.mark.parametrize(("center", "amount"), [((0.9, 0.9), 4.0), ((0.1, 0.1), 4.0), ((0.1, 0.1), 1.0)])
def test_zoom_blur_reach_is_the_farthest_corner(center, amount: float) -> None:
    # 10 x 8 px: the centre (8.5, 6.7) px is farthest from corner (0, 0), (0.5, 0.3) from (9, 7),
    # both at R = hypot(8.5, 6.7); a reach one pixel short changes the scales by ~1 %.
    y, x = np.mgrid[0:8, 0:10].astype(np.float64)
    image = ((x + y) / 10).astype(np.float32)
    out = cvf.apply(image, "zoom_blur", center=center, amount=amount, backend="cpu")
    c = (center[0] * 10 - 0.5 + center[1] * 8 - 0.5) / 10
    n = math.ceil(math.log2(amount + 1))
    scales = (1 - amount / math.hypot(8.5, 6.7)) ** (np.arange(2**n) / (2**n - 1))
    np.testing.assert_allclose(out, c + (image - c) * scales.mean(), atol=1e-3)


def test_zoom_blur_up_to_amount_one_averages_two_copies() -> None:
    # n = ceil(log2(amount + 1)) = 1: the scales are 1 and 1 - min(amount / R, 0.95) = 0.05
    # (2 x 2 px, R = hypot(0.5, 0.5)); four copies would average to 0.39, not 0.525.
    # remap samples at 1/32 px: up to 0.03 off on this ramp of slope 1 a pixel.
    image = np.array([[0, 1], [1, 2]], np.float32)
    out = cvf.apply(image, "zoom_blur", amount=1.0, backend="cpu")
    np.testing.assert_allclose(out, 1 + (image - 1) * (1 + 0.05) / 2, atol=0.04)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_zoom_blur_keeps_integer_types_and_rounds(dtype: type) -> None:
    image = photo(20, 26, 3, dtype)
    out = cvf.apply(image, "zoom_blur", amount=8.0, backend="cpu")
    in_float = cvf.apply(image.astype(np.float32), "zoom_blur", amount=8.0, backend="cpu")
    assert out.dtype == dtype
    assert np.abs(out - np.rint(in_float)).max() <= 1


def test_zoom_blur_about_a_corner_replicates_the_edge() -> None:
    # centre (0, 0) is the corner of pixel (0, 0): samples fall up to half a pixel outside
    flat = np.full((8, 10), 0.5, np.float32)
    np.testing.assert_allclose(cvf.apply(flat, "zoom_blur", center=(0.0, 0.0), amount=5.0, backend="cpu"),
                               flat, atol=1e-6)


def test_zoom_blur_of_one_pixel_is_that_pixel() -> None:
    pixel = np.array([[[10, 20, 30]]], np.uint8)  # the farthest corner is the centre: R = 0
    np.testing.assert_array_equal(cvf.apply(pixel, "zoom_blur", amount=20.0, backend="cpu"), pixel)


def test_zoom_blur_streaks_grow_with_distance() -> None:
    rng = np.random.default_rng(1)
    image = rng.random((81, 81)).astype(np.float32)
    out = cvf.apply(image, "zoom_blur", amount=30.0, backend="cpu")
    change = np.abs(out - image)
    assert change[40, 40] < 1e-6  # the centre does not move
    assert change[35:46, 35:46].mean() < change[:10, :10].mean()


# ----------------------------------------------------------------------------- tilt-shift
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_tilt_shift_band_is_sharp_and_far_rows_are_blurred(backend: str, dtype: type) -> None:
    height = 60
    image = photo(height, 40, 3, dtype)
    params = {"center": 0.4, "band": 0.2, "falloff": 0.15, "sigma": 2.0}
    out = cvf.apply(image, "tilt_shift", backend=backend, **params)
    blurred = cvf.apply(image, "gaussian_blur", sigma=2.0, backend=backend)
    y = (np.arange(height) + 0.5) / height
    inside = np.abs(y - 0.4) <= 0.1
    far = np.abs(y - 0.4) >= 0.1 + 0.15
    assert inside.sum() >= 10 and far.sum() >= 20
    np.testing.assert_array_equal(out[inside], image[inside])
    tolerance = 1e-6 if dtype == np.float32 else 0
    assert np.abs(out[far].astype(np.float64) - blurred[far]).max() <= tolerance
    # between them, the documented smoothstep blend
    t = np.clip((np.abs(y - 0.4) - 0.1) / 0.15, 0, 1)
    m = (t * t * (3 - 2 * t))[:, None, None]
    expected = image + m * (blurred.astype(np.float64) - image)
    step = 1.0 if dtype != np.float32 else 1e-6
    assert np.abs(out - (np.round(expected) if dtype != np.float32 else expected)).max() <= step


def test_tilt_shift_hard_edge_with_zero_falloff() -> None:
    image = photo(40, 20, 1, np.float32)
    out = cvf.apply(image, "tilt_shift", center=0.5, band=0.5, falloff=0.0, sigma=3.0, backend="cpu")
    blurred = cvf.apply(image, "gaussian_blur", sigma=3.0, backend="cpu")
    np.testing.assert_array_equal(out[10:30], image[10:30])
    np.testing.assert_allclose(out[:10], blurred[:10], atol=1e-6)
    np.testing.assert_allclose(out[30:], blurred[30:], atol=1e-6)


def test_tilt_shift_rows_on_the_band_edge_are_sharp() -> None:
    """A row centre exactly on the band's edge (``|y - center| = band / 2``) has weight 0, hard edge or not.

    Height 8: row centres ``(i + 0.5) / 8``; band 0.375 about 0.5 puts rows 2 and 5 on its edges
    (exact binary fractions). With falloff 0.25, rows 1 and 6 are ``(0.3125 - 0.1875) / 0.25 = 0.5``
    of the way out: smoothstep 0.5. The weight is float32, as documented.
    """
    hard = tilt_shift_mask(8, 0.5, 0.375, 0.0)
    soft = tilt_shift_mask(8, 0.5, 0.375, 0.25)
    assert hard.dtype == np.float32 and soft.dtype == np.float32 and hard.shape == (8,)
    np.testing.assert_array_equal(hard, [1, 1, 0, 0, 0, 0, 1, 1])
    np.testing.assert_array_equal(soft, [1, 0.5, 0, 0, 0, 0, 0.5, 1])
    image = photo(8, 12, 3, np.float32)
    out = cvf.apply(image, "tilt_shift", center=0.5, band=0.375, falloff=0.0, sigma=1.0, backend="cpu")
    blurred = cvf.apply(image, "gaussian_blur", sigma=1.0, backend="cpu")
    np.testing.assert_array_equal(out[2:6], image[2:6])
    np.testing.assert_allclose(out[[0, 1, 6, 7]], blurred[[0, 1, 6, 7]], atol=1e-6)


# ----------------------------------------------------------------------------- gaussian: automatic size, borders
# OpenCV's rule for ksize=0 (imgproc/src/smooth.dispatch.cpp, createGaussianKernels):
# ksize = cvRound(sigma * (depth == CV_8U ? 3 : 4) * 2 + 1) | 1, written out by hand per case.
AUTO_KSIZE = [
    # (dtype, sigma, ksize): round(2 * 4 sigma + 1) | 1, or 2 * 3 sigma + 1 for uint8
    (np.float32, 1.3, 11),  # round(11.4) = 11
    (np.float32, 0.7, 7),  # round(6.6) = 7
    (np.float32, 1.1, 11),  # round(9.8) = 10, made odd: 11 (without the + 1: 9)
    (np.float32, 2.0, 17),
    (np.uint16, 2.0, 17),
    (np.uint8, 1.3, 9),  # round(8.8) = 9
    (np.uint8, 2.0, 13),
]


def gaussian_taps(sigma: float, ksize: int) -> np.ndarray:
    x = np.arange(ksize) - ksize // 2
    taps = np.exp(-(x**2) / (2 * sigma**2))
    return taps / taps.sum()


@pytest.mark.parametrize(("dtype", "sigma", "ksize"), AUTO_KSIZE)
def test_gaussian_automatic_size_follows_opencvs_rule(dtype: type, sigma: float, ksize: int) -> None:
    """The default ksize=0: the response to a line is exactly the hand-computed taps over that support."""
    full = {np.uint8: 255.0, np.uint16: 65535.0, np.float32: 1.0}[dtype]
    image = np.zeros((5, 41), dtype)
    image[:, 20] = full  # a vertical line: each row's response is the 1-D kernel
    out = cvf.apply(image, "gaussian_blur", sigma=sigma, backend="cpu")
    expected = np.zeros(41)
    expected[20 - ksize // 2 : 21 + ksize // 2] = gaussian_taps(sigma, ksize) * full
    # Integer depths run OpenCV's bit-exact fixed-point Gaussian (quantized taps, one rounding):
    # measured up to 1.1 levels (uint8) and 0.63 (uint16) off the exact taps here.
    tolerance = {np.float32: 1e-6, np.uint16: 1.0, np.uint8: 1.5}[dtype]
    for row in out:
        np.testing.assert_allclose(row.astype(np.float64), expected, atol=tolerance)
    if dtype == np.float32:  # the support ends exactly where the rule says
        assert out[2, 20 - ksize // 2] > 0 and out[2, 19 - ksize // 2] == 0


def test_gaussian_automatic_size_of_uint16_reaches_four_sigma() -> None:
    """uint16 takes the 8-sigma kernel (not uint8's 6 sigma): its tails carry whole levels."""
    image = np.zeros((3, 41), np.uint16)
    image[:, 20] = 65535
    out = cvf.apply(image, "gaussian_blur", sigma=2.0, backend="cpu")
    # tap 8 of a 17-tap kernel, sigma 2: exp(-8) / sum = 6.7e-5 of full scale = 4.4 levels
    tap8 = math.exp(-8.0) / sum(math.exp(-(x * x) / 8.0) for x in range(-8, 9)) * 65535
    assert round(tap8) == 4
    assert out[1, 12] == round(tap8) and out[1, 28] == round(tap8) and out[1, 11] == 0


def test_gaussian_given_ksize_matches_cv2() -> None:
    image = photo(30, 36, 3, np.uint8)
    out = cvf.apply(image, "gaussian_blur", sigma=3.0, ksize=5, border="reflect101", backend="cpu")
    np.testing.assert_array_equal(out, cv2.GaussianBlur(image, (5, 5), 3.0, borderType=cv2.BORDER_REFLECT_101))


SCIPY_MODE = {"reflect101": "mirror", "replicate": "nearest", "reflect": "reflect", "wrap": "wrap",
              "constant": "constant"}


def gradient_field(height: int = 23, width: int = 29) -> np.ndarray:
    """A float32 image whose two sides differ, so every border mode reads different values."""
    y, x = np.mgrid[0:height, 0:width]
    return (0.02 * x + 0.3 * np.sin(0.37 * y) + 0.01 * (x * y % 7)).astype(np.float32)


@pytest.mark.parametrize("border", list(SCIPY_MODE))
@pytest.mark.parametrize(("name", "params", "reference"), [
    # the automatic size (sigma 1.5, float: 13 taps) with scipy's radius set to match: 6 px
    ("gaussian_blur", {"sigma": 1.5},
     lambda p, mode: ndimage.gaussian_filter(p, 1.5, mode=mode, truncate=6 / 1.5)),
    ("box_blur", {"size": 5}, lambda p, mode: ndimage.uniform_filter(p, 5, mode=mode)),
    ("box_blur", {"size": 4},  # even size: anchor at size // 2, one more pixel before than after
     lambda p, mode: ndimage.correlate(p, np.full((4, 4), 1 / 16), mode=mode, origin=0)),
], ids=["gaussian-auto", "box-5", "box-4"])
def test_every_border_mode_is_its_own(backend: str, name: str, params: dict, reference, border: str) -> None:
    """Each border mode equals its scipy reference and none of the other modes' references."""
    image = gradient_field()
    out = cvf.apply(image, name, border=border, backend=backend, **params)
    references = {mode: reference(image.astype(np.float64), scipy_mode) for mode, scipy_mode in SCIPY_MODE.items()}
    np.testing.assert_allclose(out, references[border], atol=2e-5)
    for other, expected in references.items():
        if other != border:
            assert np.abs(out - expected).max() > 1e-3, f"{border} looks like {other}"


def test_gaussian_and_median_on_a_genuine_16_bit_photo() -> None:
    """16-bit detail below one 8-bit step survives: scipy in float64, rounded, within 1 level."""
    image = photo16(channels=1)
    assert len(np.unique(image)) > 20000
    out = cvf.apply(image, "gaussian_blur", sigma=1.5, backend="cpu")
    expected = ndimage.gaussian_filter(image.astype(np.float64), 1.5, mode="mirror", truncate=6 / 1.5)
    assert np.abs(out - np.rint(expected)).max() <= 1  # OpenCV's fixed-point 16-bit Gaussian
    median = cvf.apply(image, "median_blur", size=7, backend="cpu")  # > 256 values: the uint16 ranks path
    np.testing.assert_array_equal(median, ndimage.median_filter(image, 7, mode="nearest"))


def test_gaussian_automatic_size_of_uint8_is_cv2s() -> None:
    """uint8 with ksize=0 takes OpenCV's 6-sigma kernel, bit for bit (not the 8-sigma one of other depths)."""
    image = (noise((40, 48, 3), np.float32, seed=2) * 255).astype(np.uint8)  # tails of a few levels count
    out = cvf.apply(image, "gaussian_blur", sigma=3.0, border="reflect101", backend="cpu")
    np.testing.assert_array_equal(out, cv2.GaussianBlur(image, (0, 0), 3.0, borderType=cv2.BORDER_REFLECT_101))


@pytest.mark.parametrize(("d", "sigma_space"), [(0, 2.0), (0, 5.0), (25, 1.0), (25, 8.0)])
def test_bilateral_in_small_tiles_equals_the_whole_image(d: int, sigma_space: float) -> None:
    """The tiles' halo covers OpenCV's radius (d // 2, or round(1.5 sigma_space) for d = 0): no seams."""
    image = np.random.default_rng(5).random((37, 29, 3)).astype(np.float32)
    pipe = Pipeline([(cvf.get_filter("bilateral"), {"d": d, "sigma_color": 0.3, "sigma_space": sigma_space,
                                                      "border": "reflect101"})])
    np.testing.assert_array_equal(process(image, pipe, tile_size=7), pipe(image, backend="cpu"))


def test_tilt_shift_with_wrap_border_in_small_tiles_equals_the_whole_image() -> None:
    """border=wrap reads the opposite edge of the image: tiles must not wrap their own edges instead."""
    image = photo(37, 29, 3, np.float32)
    pipe = Pipeline([(cvf.get_filter("tilt_shift"), {"center": 0.5, "band": 0.2, "falloff": 0.25, "sigma": 2.0,
                                                       "border": "wrap"})])
    whole = cvf.apply(image, "tilt_shift", center=0.5, band=0.2, falloff=0.25, sigma=2.0, border="wrap", backend="cpu")
    np.testing.assert_array_equal(process(image, pipe, tile_size=7), whole)
    explained = "\n".join(plan(pipe, image.shape, np.dtype(np.float32)).explain())  # what --explain prints
    assert "border=wrap: whole image: border=wrap reads the opposite edge of the image" in explained


def distinct_values_image(count: int, shape: tuple[int, int], seed: int) -> np.ndarray:
    """A float32 image holding exactly ``count`` distinct values, shuffled."""
    values = np.arange(shape[0] * shape[1]) % count
    return np.random.default_rng(seed).permutation(values).reshape(shape).astype(np.float32)


@pytest.mark.parametrize("count", [256, 257])
def test_median_filter_of_257_values_is_exact(count: int) -> None:
    """256 distinct values fit uint8 ranks; the 257th must not wrap to rank 0."""
    image = distinct_values_image(count, (30, 34), seed=4)
    np.testing.assert_array_equal(median_filter(image, 7), ndimage.median_filter(image, size=7, mode="nearest"))


def test_median_filter_of_65537_values_in_strips_is_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """More values than uint16 ranks take the strip-by-strip selection: exact at every strip's edge."""
    monkeypatch.setattr("cvfilters.filters.blur.SELECT_CHUNK_BYTES", 2000)  # a few rows a strip
    image = distinct_values_image(65537, (257, 256), seed=6)
    np.testing.assert_array_equal(median_filter(image, 3), ndimage.median_filter(image, size=3, mode="nearest"))
