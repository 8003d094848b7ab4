"""The element-wise primitives filters used to emulate (sqrt, minimum/maximum, compare/select),
and the cv2 primitives of CvBackend (cvfilters/backends/cv.py) on the cpu backend.

Checked against numpy on every backend, and as counted host fallbacks on a device
backend whose device lacks them (the fake cuda device of test_cuda_backend).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
import pytest

from cvfilters.backends import get_backend
from cvfilters.backends.cpu import host
from tests.backends.test_cuda_backend import FakeDevice, fake  # noqa: F401  (fixture)

RNG = np.random.default_rng(7)
A = RNG.random((9, 11, 3), np.float32)
B = RNG.random((9, 11, 3), np.float32)
B[0, :4] = A[0, :4]  # ties: compare and select must treat equality as the op says


def run(name: str, op: Callable[..., Any], *arrays: np.ndarray) -> np.ndarray:
    be = get_backend(name)
    out = op(be, *(be.upload(a) for a in arrays))
    return be.download(out)


def test_sqrt(backend: str) -> None:
    np.testing.assert_allclose(run(backend, lambda be, a: be.sqrt(a), A), np.sqrt(A), rtol=2e-7, atol=0)


def test_minimum_and_maximum(backend: str) -> None:
    np.testing.assert_array_equal(run(backend, lambda be, a, b: be.minimum(a, b), A, B), np.minimum(A, B))
    np.testing.assert_array_equal(run(backend, lambda be, a, b: be.maximum(a, b), A, B), np.maximum(A, B))


@pytest.mark.parametrize(("op", "numpy_op"), [(cv2.CMP_GT, np.greater), (cv2.CMP_GE, np.greater_equal),
                                              (cv2.CMP_EQ, np.equal)])
def test_compare_gives_255_where_true(backend: str, op: int, numpy_op: Callable[..., Any]) -> None:
    mask = run(backend, lambda be, a, b: be.compare(a, b, op), A, B)
    assert mask.dtype == np.uint8
    np.testing.assert_array_equal(mask, numpy_op(A, B).astype(np.uint8) * 255)


def test_select_by_a_mask_of_the_images_channels_or_one(backend: str) -> None:
    mask = (A > B).astype(np.uint8) * 255
    picked = run(backend, lambda be, m, a, b: be.select(m, a, b), mask, A, B)
    np.testing.assert_array_equal(picked, np.where(A > B, A, B))
    plane = np.ascontiguousarray(mask[:, :, 0])
    picked = run(backend, lambda be, m, a, b: be.select(m, a, b), plane, A, B)
    np.testing.assert_array_equal(picked, np.where(plane[:, :, None] > 0, A, B))
    # the inputs are not written to
    np.testing.assert_array_equal(run(backend, lambda be, m, a, b: (be.select(m, a, b), b)[1], mask, A, B), B)


def test_device_without_the_primitives_falls_back_counted(fake: FakeDevice) -> None:  # noqa: F811
    mask = (A > B).astype(np.uint8) * 255
    np.testing.assert_array_equal(fake.select(mask, A, B), np.where(A > B, A, B))
    np.testing.assert_array_equal(fake.maximum(A, B), np.maximum(A, B))
    assert fake.counters.fallbacks == {"select": 1, "maximum": 1}


def test_one_cpu_backend_per_process() -> None:
    """get_backend("cpu") is the host every device fallback runs on, not another instance."""
    assert get_backend("cpu") is host()


# The cv2 primitives of CvBackend (cvfilters/backends/cv.py), on the cpu backend, against numpy
# formulas or cv2 called directly with every argument spelled out: exact unless said.
CPU: Any = get_backend("cpu")  # host arrays in, numpy arrays out
GREY = RNG.integers(0, 256, (7, 9), dtype=np.uint8)
KERNEL = RNG.random((3, 3)).astype(np.float32)


def test_pad_defaults_to_zero_and_keeps_the_border_and_value() -> None:
    """A constant border is 0 unless given; the border kind and the value are both used."""
    np.testing.assert_array_equal(CPU.pad(GREY, 1, 2, 3, 1, cv2.BORDER_CONSTANT), np.pad(GREY, ((1, 2), (3, 1))))
    np.testing.assert_array_equal(CPU.pad(GREY, 1, 2, 3, 1, cv2.BORDER_CONSTANT, 7.0),
                                  np.pad(GREY, ((1, 2), (3, 1)), constant_values=7))
    np.testing.assert_array_equal(CPU.pad(GREY, 2, 1, 1, 2, cv2.BORDER_REFLECT_101),
                                  np.pad(GREY, ((2, 1), (1, 2)), mode="reflect"))


@pytest.mark.parametrize("border", [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE])
def test_filter2d_keeps_delta_and_border(border: int) -> None:
    """delta defaults to 0 and is added when given; the border is the caller's, not cv2's default."""
    want = cv2.filter2D(GREY.astype(np.float32), cv2.CV_32F, KERNEL, delta=0.0, borderType=border)
    np.testing.assert_array_equal(CPU.filter2d(GREY.astype(np.float32), KERNEL, border), want)
    shifted = cv2.filter2D(GREY.astype(np.float32), cv2.CV_32F, KERNEL, delta=3.0, borderType=border)
    np.testing.assert_allclose(shifted, want + 3, rtol=1e-6)  # the reference itself adds the 3
    np.testing.assert_array_equal(CPU.filter2d(GREY.astype(np.float32), KERNEL, border, 3.0), shifted)
    kx, ky = KERNEL[0].reshape(1, 3), KERNEL[:, 0].reshape(3, 1)
    sep = cv2.sepFilter2D(GREY.astype(np.float32), cv2.CV_32F, kx, ky, delta=0.0, borderType=border)
    np.testing.assert_array_equal(CPU.sep_filter2d(GREY.astype(np.float32), kx, ky, border), sep)
    sep3 = cv2.sepFilter2D(GREY.astype(np.float32), cv2.CV_32F, kx, ky, delta=3.0, borderType=border)
    np.testing.assert_array_equal(CPU.sep_filter2d(GREY.astype(np.float32), kx, ky, border, 3.0), sep3)


def test_sobel_keeps_ksize_and_border() -> None:
    """A 5-tap Sobel with a constant border is not cv2's default 3-tap reflected one."""
    want = cv2.Sobel(GREY, cv2.CV_32F, 1, 0, ksize=5, borderType=cv2.BORDER_CONSTANT)
    np.testing.assert_array_equal(CPU.sobel(GREY, cv2.CV_32F, 1, 0, 5, cv2.BORDER_CONSTANT), want)
    # the left column of a 3-tap x derivative with zeros outside: 2*g[y, 1] + g[y-1, 1] + g[y+1, 1]
    g = np.pad(GREY.astype(np.float32), 1)
    np.testing.assert_array_equal(CPU.sobel(GREY, cv2.CV_32F, 1, 0, 3, cv2.BORDER_CONSTANT)[:, 0],
                                  g[:-2, 2] + 2 * g[1:-1, 2] + g[2:, 2])


def test_gaussian_keeps_sigma_and_border() -> None:
    """sigma 0.8 over 9 taps with zeros outside, not the sigma cv2 derives from 9 taps (1.7) nor a reflected border."""
    image = RNG.random((12, 14), np.float32)
    x = np.arange(-4, 5, dtype=np.float64)
    taps = np.exp(-x * x / (2 * 0.8**2))
    taps /= taps.sum()
    padded = np.pad(image.astype(np.float64), 4)
    rows = sum(t * padded[:, i:i + 14] for i, t in enumerate(taps))
    want = sum(t * rows[i:i + 12] for i, t in enumerate(taps))
    np.testing.assert_allclose(CPU.gaussian(image, (9, 9), 0.8, cv2.BORDER_CONSTANT), want, rtol=0, atol=1e-6)


def test_abs_convert_is_the_scaled_magnitude_in_the_dtype() -> None:
    """saturate(|x| * alpha) as uint8 (rounded), float32 or float64; alpha defaults to 1."""
    x = np.array([[-3.7, 2.2, -200.0, 0.5, -0.1]], np.float32)
    np.testing.assert_array_equal(CPU.abs_convert(x, np.uint8), [[4, 2, 200, 0, 0]])
    np.testing.assert_array_equal(CPU.abs_convert(x, np.uint8, 2.0), [[7, 4, 255, 1, 0]])
    half = CPU.abs_convert(x, np.float32, 0.5)
    assert half.dtype == np.float32
    np.testing.assert_array_equal(half, np.abs(x) * np.float32(0.5))
    np.testing.assert_array_equal(CPU.abs_convert(x, np.float32), np.abs(x))
    deep = CPU.abs_convert(x, np.uint16, 400.0)  # a uint16 result, rounded and saturated
    assert deep.dtype == np.uint16
    np.testing.assert_array_equal(deep, [[1480, 880, 65535, 200, 40]])
    d = np.array([[-0.1, 0.3, -1e300, 2.5]], np.float64)  # -0.1 and -1e300 have no float32 twin
    wide = CPU.abs_convert(d, np.float64)
    assert wide.dtype == np.float64
    np.testing.assert_array_equal(wide, np.abs(d))  # exact: no float32 step
    # a 16-bit Sobel response: convertScaleAbs to uint8, and |-32768| = 32768 (no int16 saturation)
    s = np.array([[-32768, -5, 300, 7]], np.int16)
    np.testing.assert_array_equal(CPU.abs_convert(s, np.uint8), [[255, 5, 255, 7]])
    np.testing.assert_array_equal(CPU.abs_convert(s, np.float32), [[32768, 5, 300, 7]])


def test_lut_of_256_rows_on_every_backend(backend: str) -> None:
    """cv2.LUT serves a device image too (numpy indexing would not take a cv2.UMat)."""
    table = (255 - np.arange(256)).astype(np.uint8)
    np.testing.assert_array_equal(run(backend, lambda be, g: be.lut(g, table), GREY), 255 - GREY)


def test_lut_tables_of_256_and_65536_rows_one_or_per_channel() -> None:
    """A (N,) table maps every channel, a (N, C) table channel c by column c."""
    rgb = RNG.integers(0, 256, (4, 5, 3), dtype=np.uint8)
    table = (255 - np.arange(256)).astype(np.uint8)
    per_channel = np.stack([table, np.arange(256, dtype=np.uint8), table // 2], axis=1)
    np.testing.assert_array_equal(CPU.lut(GREY, table), 255 - GREY)
    np.testing.assert_array_equal(CPU.lut(rgb, per_channel), np.stack([255 - rgb[..., 0], rgb[..., 1],
                                                                       (255 - rgb[..., 2]) // 2], axis=2))
    deep = RNG.integers(0, 65536, (4, 5, 3), dtype=np.uint16)
    table16 = (65535 - np.arange(65536)).astype(np.uint16)
    np.testing.assert_array_equal(CPU.lut(deep, table16), 65535 - deep)
    per16 = np.stack([table16, np.arange(65536, dtype=np.uint16), table16 // 2], axis=1)
    out = CPU.lut(deep, per16)
    assert out.shape == deep.shape
    np.testing.assert_array_equal(out, np.stack([65535 - deep[..., 0], deep[..., 1],
                                                 (65535 - deep[..., 2]) // 2], axis=2))


@pytest.mark.parametrize("channels", [1, 2, 3])
def test_calc_hist_counts_each_channel_as_int64(channels: int) -> None:
    """Shape (channels, levels), int64 counts equal to numpy's bincount of each channel."""
    image = RNG.integers(0, 256, (6, 7, channels), dtype=np.uint8)
    image = image[..., 0] if channels == 1 else image
    hist = CPU.calc_hist(image, channels, 256)
    assert hist.dtype == np.int64 and hist.shape == (channels, 256)
    planes = image.reshape(-1, channels)
    np.testing.assert_array_equal(hist, [np.bincount(planes[:, c], minlength=256) for c in range(channels)])


@pytest.mark.parametrize("channels", [1, 2, 3])
def test_min_max_per_channel_and_pooled(channels: int) -> None:
    """Each channel's (min, max), or one pair over all channels when pooled."""
    image = RNG.random((5, 6, channels), np.float32)
    image = image[..., 0] if channels == 1 else image
    planes = image.reshape(-1, channels)
    want = [(float(planes[:, c].min()), float(planes[:, c].max())) for c in range(channels)]
    assert CPU.min_max(image, channels) == want
    assert CPU.min_max(image, channels, pooled=True) == [(float(image.min()), float(image.max()))]
    view = image[1:, ::2]  # not contiguous: split per channel, then pooled
    assert CPU.min_max(view, channels, pooled=True) == [(float(view.min()), float(view.max()))]


@pytest.mark.parametrize(("code", "numpy_flip"), [(0, np.flipud), (1, np.fliplr), (-1, lambda a: a[::-1, ::-1])])
def test_flip_by_code(code: int, numpy_flip: Callable[[np.ndarray], np.ndarray]) -> None:
    """Code 0 flips rows, 1 columns, -1 both."""
    np.testing.assert_array_equal(CPU.flip(GREY, code), numpy_flip(GREY))


def test_convert_scales_shifts_and_casts() -> None:
    """saturate(rint(x * alpha + beta)) in the dtype asked for; alpha 1 and beta 0 unless given."""
    x = np.array([[-3.3, 0.2, 10.4, 300.7]], np.float32)
    same = CPU.convert(x, np.float32)
    assert same.dtype == np.float32
    np.testing.assert_array_equal(same, x)
    bytes_ = CPU.convert(x, np.uint8, 2.0, 3.0)
    assert bytes_.dtype == np.uint8
    np.testing.assert_array_equal(bytes_, [[0, 3, 24, 255]])  # -3.6, 3.4, 23.8, 604.4 rounded and saturated
    np.testing.assert_allclose(CPU.convert(x, np.float64, 0.5, -1.0), x.astype(np.float64) * 0.5 - 1, rtol=1e-7)


def test_clip_to_the_range_as_float32(backend: str) -> None:
    """Values below low become low, above high become high; the result is float32."""
    x = (A - 0.5) * 4  # -2 .. 2
    clipped = run(backend, lambda be, a: be.clip(a, -0.75, 1.25), x)
    assert clipped.dtype == np.float32
    np.testing.assert_array_equal(clipped, np.clip(x, np.float32(-0.75), np.float32(1.25)))
    grey = CPU.clip(GREY, 40, 200)  # an 8-bit image comes back as float32 too
    assert grey.dtype == np.float32
    np.testing.assert_array_equal(grey, np.clip(GREY, 40, 200).astype(np.float32))


def test_multiply_divide_and_add_weighted_keep_scale_weights_and_dtype() -> None:
    """The source depth unless a dtype is given; scale 1 unless given; gamma added."""
    a = RNG.integers(1, 16, (5, 6), dtype=np.uint8)
    b = RNG.integers(1, 16, (5, 6), dtype=np.uint8)
    wide, fa, fb = np.int64, a.astype(np.float64), b.astype(np.float64)
    product = CPU.multiply(a, b)
    assert product.dtype == np.uint8
    np.testing.assert_array_equal(product, a.astype(wide) * b)  # at most 225: no saturation
    halves = CPU.multiply(a, b, 0.5, np.float32)
    assert halves.dtype == np.float32
    np.testing.assert_array_equal(halves, fa * fb * 0.5)
    quotient = CPU.divide(a, b)
    assert quotient.dtype == np.uint8
    np.testing.assert_array_equal(quotient, np.rint(fa / fb))  # halves rounded to even, as cv2 does
    scaled = CPU.divide(a, b, 3.0, np.float64)
    assert scaled.dtype == np.float64
    np.testing.assert_allclose(scaled, 3 * fa / fb, rtol=1e-7)  # cv2 divides 8-bit inputs in float32
    mix = CPU.add_weighted(a, 0.25, b, 0.5)
    assert mix.dtype == np.uint8
    blend = CPU.add_weighted(a, 0.25, b, 0.5, 10.0, np.float32)
    assert blend.dtype == np.float32
    np.testing.assert_array_equal(blend, 0.25 * fa + 0.5 * fb + 10)
    np.testing.assert_array_equal(mix, np.rint(0.25 * fa + 0.5 * fb))


def test_threshold_box_and_resize_keep_their_arguments() -> None:
    """An inverted threshold at 100 giving 200; a 3x3 mean with zeros outside; a 3x area reduction."""
    np.testing.assert_array_equal(CPU.threshold(GREY, 100, 200, cv2.THRESH_BINARY_INV), np.where(GREY > 100, 0, 200))
    image = RNG.random((6, 9), np.float32)
    padded = np.pad(image.astype(np.float64), 1)
    mean = sum(padded[i:i + 6, j:j + 9] for i in range(3) for j in range(3)) / 9
    np.testing.assert_allclose(CPU.box(image, (3, 3), cv2.BORDER_CONSTANT), mean, rtol=0, atol=1e-6)
    area = CPU.resize(image, (3, 2), cv2.INTER_AREA)
    np.testing.assert_allclose(area, image.reshape(2, 3, 3, 3).mean(axis=(1, 3)), rtol=0, atol=1e-6)


def test_split_merge_and_cvt_color() -> None:
    """Planes in channel order, merged back; BGR to RGB reverses the channels."""
    rgb = RNG.integers(0, 256, (4, 5, 3), dtype=np.uint8)
    planes = CPU.split(rgb)
    assert len(planes) == 3
    for c, plane in enumerate(planes):
        np.testing.assert_array_equal(plane, rgb[..., c])
    np.testing.assert_array_equal(CPU.merge(planes), rgb)
    np.testing.assert_array_equal(CPU.cvt_color(rgb, cv2.COLOR_BGR2RGB), rgb[..., ::-1])


def test_remap_keeps_interpolation_border_and_value() -> None:
    """Half a pixel to the right, bilinear: the mean of neighbours, the border replicated or the value;
    two pixels to the right, nearest, constant border: zeros unless a value is given."""
    image = RNG.random((5, 6), np.float32)
    ys, xs = np.mgrid[0:5, 0:6].astype(np.float32)

    def shifted(dx: float, interpolation: int, border: int, *value: float) -> np.ndarray:
        return CPU.remap(image, xs + np.float32(dx), ys, interpolation, border, *value)

    def halfway(pad_mode: str, **kw: Any) -> np.ndarray:
        p = np.pad(image.astype(np.float64), ((0, 0), (0, 1)), pad_mode, **kw)
        return (p[:, :-1] + p[:, 1:]) / 2

    np.testing.assert_allclose(shifted(0.5, cv2.INTER_LINEAR, cv2.BORDER_REPLICATE), halfway("edge"), atol=1e-6)
    np.testing.assert_allclose(shifted(0.5, cv2.INTER_LINEAR, cv2.BORDER_CONSTANT, 7.0),
                               halfway("constant", constant_values=7.0), atol=1e-6)
    np.testing.assert_array_equal(shifted(2, cv2.INTER_NEAREST, cv2.BORDER_CONSTANT),
                                  np.pad(image, ((0, 0), (0, 2)))[:, 2:])


def test_morphology_bilateral_and_clahe_keep_their_arguments() -> None:
    """Each argument reaches cv2 (called here with every argument spelled out): a dilation by an
    asymmetric kernel twice with a reflected border, a 3-pixel bilateral with a constant border, CLAHE on 2x2 tiles."""
    kernel = np.array([[1, 1, 0]], np.uint8)  # the pixel and its left neighbour
    dilated = CPU.morphology(GREY, cv2.MORPH_DILATE, kernel, 2, cv2.BORDER_REFLECT_101)
    np.testing.assert_array_equal(dilated, cv2.morphologyEx(GREY, cv2.MORPH_DILATE, kernel, anchor=(-1, -1),
                                                            iterations=2, borderType=cv2.BORDER_REFLECT_101))
    g = GREY.astype(np.int64)  # by hand: column 0 sees g[1] through the reflected border, later ones g[x-2 .. x]
    np.testing.assert_array_equal(dilated[:, 0], np.maximum(g[:, 0], g[:, 1]))
    np.testing.assert_array_equal(dilated[:, 2:], np.maximum(np.maximum(g[:, :-2], g[:, 1:-1]), g[:, 2:]))
    image = RNG.integers(0, 256, (16, 16), dtype=np.uint8)
    np.testing.assert_array_equal(CPU.bilateral(image, 3, 40.0, 9.0, cv2.BORDER_CONSTANT),
                                  cv2.bilateralFilter(image, d=3, sigmaColor=40.0, sigmaSpace=9.0,
                                                      borderType=cv2.BORDER_CONSTANT))
    low = (image // 4 + 96).astype(np.uint8)
    np.testing.assert_array_equal(CPU.clahe(low, 3.0, (2, 2)),
                                  cv2.createCLAHE(clipLimit=3.0, tileGridSize=(2, 2)).apply(low))
