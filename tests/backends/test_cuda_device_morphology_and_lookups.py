"""The cuda backend's morphology, bilateral, median, magnitude, abs, LUT and CLAHE on a stand-in ``cv2.cuda``.

tests/backends/test_cuda_device_paths.py's ``DeviceMat`` and tests/backends/test_cuda_device_guards.py's stand-ins,
plus stand-ins for ``createMorphologyFilter``, ``subtract``, ``bilateralFilter``, ``magnitude``, ``abs``,
``createMedianFilter``, ``createLookUpTable``, ``createCLAHE`` (issue 26's mutation triage). Each does what OpenCV's
source does, on the host with cv2, and refuses what it refuses (read in opencv_contrib: cudafilters/src/filtering.cpp,
cudaimgproc/src/bilateral_filter.cpp and histogram.cpp, cudaarithm/src/cuda/polar_cart.cu, math.cu and lut.cu).
Arguments follow OpenCV's Python bindings: None for an int or float argument is its default (0 where it has none),
a float for an int is a TypeError. References are cv2 called directly on the host arrays, or numpy;
``counters.fallbacks`` says what ran on the cpu.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np
import pytest

from cvfilters.backends.cuda import CudaBackend
from tests.backends.test_cuda_device_guards import MORE
from tests.backends.test_cuda_device_paths import DeviceMat, _Applier, _image, _mat, on_stand_ins

ERODE, DILATE = cv2.MORPH_ERODE, cv2.MORPH_DILATE
OPS = [ERODE, DILATE, cv2.MORPH_OPEN, cv2.MORPH_CLOSE, cv2.MORPH_GRADIENT, cv2.MORPH_TOPHAT, cv2.MORPH_BLACKHAT]
B101, REPLICATE, REFLECT, CONSTANT = (cv2.BORDER_REFLECT_101, cv2.BORDER_REPLICATE, cv2.BORDER_REFLECT,
                                      cv2.BORDER_CONSTANT)


def _check(condition: bool, what: str) -> None:
    """CV_Assert: a cv2.error."""
    if not condition:
        raise cv2.error(f"stand-in CV_Assert: {what}")


def _int(value: Any, default: int) -> int:
    """An int argument as the bindings read it: None is its default, a float is refused."""
    if value is None:
        return default
    if not isinstance(value, (int, np.integer)):
        raise TypeError(f"Argument is required to be an integer, not {value!r}")
    return int(value)


def _float(value: Any, default: float) -> float:
    return default if value is None else float(value)


def _gpu(src: Any) -> DeviceMat:
    """``InputArray::getGpuMat``: a host array is refused ("available only for cuda::GpuMat and cuda::HostMem")."""
    if not isinstance(src, DeviceMat):
        raise cv2.error("stand-in: getGpuMat is available only for cuda::GpuMat and cuda::HostMem")
    return src


def _input(src: Any) -> tuple[np.ndarray, bool]:
    """``getInputMat``: a GpuMat as it is, a host array uploaded (the binding then returns a host array)."""
    return (src.a, False) if isinstance(src, DeviceMat) else (np.asarray(src), True)


def _reshape(self: DeviceMat, cn: int, rows: int = 0) -> DeviceMat:
    """GpuMat::reshape(cn): the same row of values read as ``cn`` channels."""
    assert rows == 0
    height = self.a.shape[0]
    per_row = self.a.size // height
    assert per_row % cn == 0
    return _mat(self.a.reshape((height, per_row // cn) if cn == 1 else (height, per_row // cn, cn)))


# ---------------------------------------------------------------- the stand-ins
def _morph_pass(op: int, src_type: int, kernel: Any, anchor: tuple[int, int], iterations: int) -> _Applier:
    """filtering.cpp MorphologyFilter: CV_Assert(op ERODE or DILATE; srcType 8UC1, 8UC4, 32FC1, 32FC4). The element
    is ``kernel.convertTo(CV_8U)``; a full rectangle iterated becomes one larger rectangle, its anchor scaled. apply:
    CV_Assert(src.type() == srcType); the first pass reads the source padded with BORDER_DEFAULT (reflect101), each
    later one a copy in a zero-filled buffer."""
    _check(op in (ERODE, DILATE), "op == MORPH_ERODE || op == MORPH_DILATE")
    _check(src_type in (cv2.CV_8UC1, cv2.CV_8UC4, cv2.CV_32FC1, cv2.CV_32FC4), "srcType 8UC1, 8UC4, 32FC1, 32FC4")
    element = np.asarray(kernel)
    height, width = element.shape
    ax, ay = (width // 2 if anchor[0] == -1 else anchor[0]), (height // 2 if anchor[1] == -1 else anchor[1])
    if iterations > 1 and np.count_nonzero(element) == element.size:
        ax, ay = ax * iterations, ay * iterations
        element = np.ones((height + (iterations - 1) * (height - 1), width + (iterations - 1) * (width - 1)))
        iterations = 1
    mask = np.clip(np.rint(element), 0, 255).astype(np.uint8)
    run = cv2.erode if op == ERODE else cv2.dilate

    def passes(a: np.ndarray) -> np.ndarray:
        out = run(a, mask, anchor=(ax, ay), borderType=B101)
        for _ in range(1, iterations):
            out = run(out, mask, anchor=(ax, ay), borderType=CONSTANT, borderValue=0)
        return out
    return _Applier(passes, src_type)


def _subtract(x: DeviceMat, y: DeviceMat) -> DeviceMat:
    """cuda::subtract of two images of one type, saturating as cv2.subtract."""
    _check(x.type() == y.type() and x.size() == y.size(), "operands of one type and size")
    return _mat(cv2.subtract(x.a, y.a))


def _create_morphology_filter(op: Any, src_type: Any, kernel: Any, anchor: tuple[int, int] = (-1, -1),
                              iterations: Any = 1) -> Any:
    """cuda::createMorphologyFilter: erode or dilate, or the MorphologyExFilter compositions of both (the same
    type, element, anchor and iterations) with cuda::subtract."""
    op, src_type, iterations = _int(op, 0), _int(src_type, 0), _int(iterations, 1)
    if op in (ERODE, DILATE):
        return _morph_pass(op, src_type, kernel, anchor, iterations)
    erode, dilate = (_morph_pass(o, src_type, kernel, anchor, iterations).apply for o in (ERODE, DILATE))
    compose: dict[int, Callable[[DeviceMat], DeviceMat]] = {
        cv2.MORPH_OPEN: lambda s: dilate(erode(s)), cv2.MORPH_CLOSE: lambda s: erode(dilate(s)),
        cv2.MORPH_GRADIENT: lambda s: _subtract(dilate(s), erode(s)),
        cv2.MORPH_TOPHAT: lambda s: _subtract(s, dilate(erode(s))),
        cv2.MORPH_BLACKHAT: lambda s: _subtract(erode(dilate(s)), s)}
    _check(op in compose, "Unknown morphological operation")
    return SimpleNamespace(apply=compose[op])


def _bilateral_filter(src: Any, kernel_size: Any, sigma_color: Any, sigma_spatial: Any, dst: Any = None,
                      borderMode: Any = cv2.BORDER_DEFAULT, stream: Any = None) -> DeviceMat:
    """cuda::bilateralFilter (bilateral_filter.cpp): sigmas <= 0 are 1, the radius is kernel_size / 2 or
    cvRound(1.5 sigma_spatial) where kernel_size <= 0; CV_Assert(depth 8U, 16U, 16S, 32F with 1, 3, 4 channels
    (its funcs table); border reflect101, replicate, constant, reflect or wrap). Its kernel is not cv2's:
    test_bilateral_filter.cpp allows 1 level (1e-3 for float) against cv::bilateralFilter, which stands in here."""
    image = _gpu(src)
    size, border = _int(kernel_size, 0), _int(borderMode, cv2.BORDER_DEFAULT)
    color, spatial = _float(sigma_color, 0.0), _float(sigma_spatial, 0.0)
    color, spatial = (1.0 if color <= 0 else color), (1.0 if spatial <= 0 else spatial)
    radius = int(np.rint(spatial * 1.5)) if size <= 0 else size // 2
    _check(image.depth() in (cv2.CV_8U, cv2.CV_16U, cv2.CV_16S, cv2.CV_32F) and image.channels() in (1, 3, 4),
           "funcs[depth][channels - 1] != 0")
    _check(border in (B101, REPLICATE, CONSTANT, REFLECT, cv2.BORDER_WRAP), "borderMode")
    return _mat(cv2.bilateralFilter(image.a, max(radius, 1) * 2 + 1, color, spatial, borderType=border))


def _magnitude(*xy: Any, x: Any = None, y: Any = None, magnitude: Any = None, stream: Any = None) -> Any:
    """cuda::magnitude(x, y) (polar_cart.cu): CV_Assert(x.depth() == CV_32F; y of x's type and size), a CV_32FC1
    result of x's size (it reads one float per pixel: one channel here). Positionally the (xy) overload."""
    _check(not xy, "the positional overload is magnitude(xy): interleaved CV_32FC2")
    (xa, host), (ya, _) = _input(x), _input(y)
    _check(xa.dtype == np.float32 and xa.ndim == 2, "x.depth() == CV_32F (one float per pixel)")
    _check(ya.dtype == xa.dtype and ya.shape == xa.shape, "y.type() == x.type() && y.size() == x.size()")
    out = cv2.magnitude(xa, ya)
    return out if host else _mat(out)


def _abs(src: Any, dst: Any = None, stream: Any = None) -> Any:
    """cuda::abs (math.cu): any depth up to 64F, the source's type; a host array is uploaded and returned."""
    array, host = _input(src)
    return np.abs(array) if host else _mat(np.abs(array))


def _create_median_filter(src_type: Any, window_size: Any, partition: Any = 128) -> _Applier:
    """cuda::createMedianFilter (filtering.cpp MedianFilter, without the wavelet matrix): CV_8UC1 only, CV_Assert
    (windowSize >= 3; windowSize / 2 < rows, cols); its kernel reads the source as 8UC1 (asserted here) and
    leaves a border of windowSize / 2 unwritten (test_filters.cpp Median compares the interior only)."""
    src_type, size = _int(src_type, 0), _int(window_size, 0)
    _check(src_type == cv2.CV_8UC1, "only CV_8UC1")
    _check(size >= 3, "windowSize >= 3")
    reach = size // 2

    def run(a: np.ndarray) -> np.ndarray:
        _check(reach < a.shape[0] and reach < a.shape[1], "kernel < src.rows && kernel < src.cols")
        out = cv2.medianBlur(a, size)
        out[:reach] = out[-reach:] = 7  # never written by the kernel
        out[:, :reach] = out[:, -reach:] = 7
        return out
    return _Applier(run, src_type)


class _LookUpTable:
    """cuda::createLookUpTable (lut.cu): a host table read as ``Mat(1, 256, type)``, CV_Assert(depth 8U, 1 x 256);
    transform: CV_Assert(src 8UC1 or 8UC3; lut_cn == 1 || lut_cn == cn), a host source uploaded."""

    def __init__(self, lut: Any) -> None:
        table = np.asarray(lut)
        self.channels = 1 if table.ndim < 3 else table.shape[2]
        _check(table.dtype == np.uint8, "d_lut.depth() == CV_8U")
        _check(table.size == 256 * self.channels, "d_lut.rows == 1 && d_lut.cols == 256")
        self.table = table.reshape(256, 1, self.channels)

    def transform(self, src: Any, dst: Any = None, stream: Any = None) -> Any:
        array, host = _input(src)
        cn = 1 if array.ndim == 2 else array.shape[2]
        _check(array.dtype == np.uint8 and cn in (1, 3), "src.type() == CV_8UC1 || src.type() == CV_8UC3")
        _check(self.channels in (1, cn), "lut_cn == 1 || lut_cn == cn")
        out = cv2.LUT(array, self.table if self.channels > 1 else self.table.reshape(256))
        return out if host else _mat(out)


class _Clahe:
    """cuda::CLAHE (histogram.cpp CLAHE_Impl::apply): ``_src.getGpuMat()``, CV_Assert(type CV_8UC1 or CV_16UC1);
    test_histogram.cpp allows 1 level against cv::CLAHE, which stands in here."""

    def __init__(self, clip_limit: Any = 40.0, tile_grid_size: tuple[int, int] = (8, 8)) -> None:
        self.clip, self.tiles = _float(clip_limit, 40.0), tile_grid_size

    def apply(self, src: Any, stream: Any, dst: Any = None) -> DeviceMat:
        image = _gpu(src)
        _check(image.type() in (cv2.CV_8UC1, cv2.CV_16UC1), "type == CV_8UC1 || type == CV_16UC1")
        return _mat(cv2.createCLAHE(self.clip, self.tiles).apply(image.a))


STAND_INS: dict[str, Any] = {
    **MORE,
    "createMorphologyFilter": _create_morphology_filter,
    "subtract": _subtract,
    "bilateralFilter": _bilateral_filter,
    "magnitude": _magnitude,
    "abs": _abs,
    "createMedianFilter": _create_median_filter,
    "createLookUpTable": _LookUpTable,
    "createCLAHE": _Clahe,
    "Stream_Null": object,
}


@pytest.fixture
def device(monkeypatch: pytest.MonkeyPatch) -> CudaBackend:
    """The real CudaBackend on DeviceMat images (with GpuMat::reshape), with the stand-ins above."""
    monkeypatch.setattr(DeviceMat, "reshape", _reshape, raising=False)
    return on_stand_ins(monkeypatch, STAND_INS)


def _shape(channels: int) -> tuple[int, ...]:
    return (11, 13) if channels == 1 else (11, 13, channels)


# ---------------------------------------------------------------- morphology
RECTS = [np.ones((3, 3), np.uint8), np.ones((2, 2), np.uint8), np.ones((2, 3), np.uint8), np.ones((4, 1), np.uint8)]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(("dtype", "channels"), [(np.uint8, 1), (np.uint8, 3), (np.uint8, 4), (np.float32, 1)])
def test_morphology_with_rectangles_on_the_device_as_cv2(device: CudaBackend, op: int, dtype: type,
                                                         channels: int) -> None:
    """Rectangles of even and odd sides, 1 to 3 iterations: cv2's result (which, as cuda, makes one larger
    rectangle of the iterations: repeated passes differ at the edges for even sides), all on the device."""
    image = _image(_shape(channels), dtype)
    for kernel in RECTS:
        for iterations in (1, 2, 3):
            out = device.download(device.morphology(device.upload(image), op, kernel, iterations, B101))
            np.testing.assert_array_equal(out, cv2.morphologyEx(image, op, kernel, iterations=iterations,
                                                                borderType=B101))
    assert not device.counters.fallbacks


CROSS = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))
LOPSIDED = np.array([[1, 1, 0], [0, 1, 0], [0, 1, 1]], np.uint8)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_morphology_with_other_elements_iterates_one_pass_at_a_time(device: CudaBackend, op: int,
                                                                     dtype: type) -> None:
    """A cross and a lopsided element, 1 and 2 iterations: cv2's result on the device (cuda's own iterations
    would read zeros around the image)."""
    image = _image((12, 10), dtype)
    for kernel in (CROSS, LOPSIDED):
        for iterations in (1, 2):
            out = device.download(device.morphology(device.upload(image), op, kernel, iterations, B101))
            np.testing.assert_array_equal(out, cv2.morphologyEx(image, op, kernel, iterations=iterations,
                                                                borderType=B101))
    assert not device.counters.fallbacks


UPRIGHT = np.array([[1, 1, 1], [1, 1, 1], [0, 1, 0]], np.uint8)  # mirror-symmetric left-right only
ELEMENTS_AND_PLACES: list[tuple[str, np.ndarray, bool]] = [
    ("ellipse", cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)), True),
    ("weighted square", np.array([[2, 1, 1], [1, 1, 1], [1, 1, 1]], np.uint8), True),  # nonzero: a square
    ("upright", UPRIGHT, False), ("sideways", np.ascontiguousarray(UPRIGHT.T), False),
    ("even height", np.ones((2, 3), np.uint8), False), ("even width", np.ones((3, 2), np.uint8), False),
    ("weighted diagonal", np.array([[0, 1, 2], [1, 1, 1], [2, 1, 0]], np.uint8), False),  # nonzero: lopsided
]


@pytest.mark.parametrize(("name", "kernel", "on_device"), ELEMENTS_AND_PLACES, ids=[e[0] for e in ELEMENTS_AND_PLACES])
def test_morphology_with_other_borders_runs_on_the_device_only_for_mirror_symmetric_elements(
        device: CudaBackend, name: str, kernel: np.ndarray, on_device: bool) -> None:
    """cuda pads with reflect101: replicate, reflect and the neutral constant give its result only for odd
    elements equal to both mirror images (any nonzero value is in the element); others run on the cpu."""
    image = _image((12, 10), np.uint8)
    for border in (REPLICATE, REFLECT, CONSTANT):
        out = device.download(device.morphology(device.upload(image), ERODE, kernel, 1, border))
        np.testing.assert_array_equal(out, cv2.morphologyEx(image, ERODE, kernel, borderType=border))
    assert device.counters.fallbacks == ({} if on_device else {"morphology": 3})


def test_morphology_of_images_cuda_cannot_take_runs_on_the_cpu(device: CudaBackend) -> None:
    """16 bits (cuda's filter takes 8U and 32F) and a host image: cv2's result on the cpu."""
    image = _image((9, 8), np.uint16)
    kernel = np.ones((3, 3), np.uint8)
    for given in (device.upload(image), image):
        np.testing.assert_array_equal(device.download(device.morphology(given, DILATE, kernel, 2, B101)),
                                      cv2.dilate(image, kernel, iterations=2, borderType=B101))
    assert device.counters.fallbacks == {"morphology": 2}


# ---------------------------------------------------------------- bilateral
@pytest.mark.parametrize(("dtype", "channels", "sigma_color"), [(np.uint8, 1, 40.0), (np.uint8, 3, 40.0),
                                                                (np.float32, 1, 0.3)])
def test_bilateral_on_the_device_with_each_border_and_size(device: CudaBackend, dtype: type, channels: int,
                                                           sigma_color: float) -> None:
    """cv2.bilateralFilter's result within OpenCV's own test tolerance (1 level, 1e-3 for float): a diameter
    of 3 and one from sigma_space (0), each border cuda and cv2 share, on the device."""
    image = _image((14, 12) if channels == 1 else (14, 12, channels), dtype)
    tolerance = 1.0 if dtype == np.uint8 else 1e-3
    for border in (B101, REPLICATE, CONSTANT, REFLECT):
        for diameter, sigma_space in ((3, 4.0), (0, 1.5)):
            out = device.download(device.bilateral(device.upload(image), diameter, sigma_color, sigma_space, border))
            expected = cv2.bilateralFilter(image, diameter, sigma_color, sigma_space, borderType=border)
            assert out.dtype == expected.dtype
            np.testing.assert_allclose(out, expected, rtol=0, atol=tolerance)
    assert not device.counters.fallbacks


def test_bilateral_the_device_cannot_take_runs_on_the_cpu(device: CudaBackend) -> None:
    """A host image, and a border cuda refuses (BORDER_ISOLATED): cv2's result with the caller's border."""
    image = _image((14, 12), np.uint8)
    isolated = B101 | cv2.BORDER_ISOLATED
    for given, border in ((image, REPLICATE), (device.upload(image), isolated)):
        np.testing.assert_array_equal(device.download(device.bilateral(given, 5, 40.0, 3.0, border)),
                                      cv2.bilateralFilter(image, 5, 40.0, 3.0, borderType=border))
    assert device.counters.fallbacks == {"bilateral": 2}


# ---------------------------------------------------------------- magnitude and abs_convert
@pytest.mark.parametrize("channels", [1, 3])
def test_magnitude_on_the_device_of_each_channel(device: CudaBackend, channels: int) -> None:
    x, y = _image(_shape(channels), np.float32) - 0.5, _image(_shape(channels), np.float32, 2) - 0.5
    out = device.download(device.magnitude(device.upload(x), device.upload(y)))
    np.testing.assert_allclose(out, np.hypot(x, y), rtol=1e-6)
    assert out.shape == x.shape and not device.counters.fallbacks


def test_magnitude_of_a_host_operand_runs_on_the_cpu(device: CudaBackend) -> None:
    x, y = _image((7, 6), np.float32) - 0.5, _image((7, 6), np.float32, 2) - 0.5
    for a, b in ((x, device.upload(y)), (device.upload(x), y)):
        np.testing.assert_allclose(device.download(device.magnitude(a, b)), cv2.magnitude(x, y), rtol=1e-6)
    assert device.counters.fallbacks == {"magnitude": 2}


def test_abs_convert_on_the_device_with_the_default_alpha(device: CudaBackend) -> None:
    """The default scale is 1: cv2.convertScaleAbs for uint8 (int16 and float32 sources), |x| for float32."""
    derivative = cv2.Sobel(_image((9, 8), np.uint8), cv2.CV_16S, 1, 0)
    signed = _image((9, 8, 3), np.float32) * 300 - 150
    for image in (derivative, signed):
        np.testing.assert_array_equal(device.download(device.abs_convert(device.upload(image), np.uint8)),
                                      cv2.convertScaleAbs(image))
    np.testing.assert_array_equal(device.download(device.abs_convert(device.upload(signed), np.float32)),
                                  np.abs(signed))
    assert not device.counters.fallbacks


def test_abs_convert_of_a_host_image_runs_on_the_cpu(device: CudaBackend) -> None:
    derivative = cv2.Sobel(_image((9, 8), np.uint8), cv2.CV_16S, 0, 1)
    np.testing.assert_array_equal(device.download(device.abs_convert(derivative, np.uint8, 0.5)),
                                  cv2.convertScaleAbs(derivative, alpha=0.5))
    assert device.counters.fallbacks == {"abs_convert": 1}


# ---------------------------------------------------------------- median
def test_median_on_the_device_for_two_sizes(device: CudaBackend) -> None:
    """cv2.medianBlur within OpenCV's test tolerance (1 level), every row and column written; a second size on
    the same backend uses its own filter."""
    image = _image((15, 13), np.uint8)
    for ksize in (3, 5, 3):
        np.testing.assert_allclose(device.download(device.median(device.upload(image), ksize)),
                                   cv2.medianBlur(image, ksize), rtol=0, atol=1)
    assert not device.counters.fallbacks


def test_median_of_images_cuda_cannot_take_runs_on_the_cpu(device: CudaBackend) -> None:
    """cuda's median takes 8UC1 only: three channels, 16 bits and float32 run on the cpu."""
    for image in (_image((9, 8, 3), np.uint8), _image((9, 8), np.uint16), _image((9, 8), np.float32)):
        np.testing.assert_array_equal(device.download(device.median(device.upload(image), 3)),
                                      cv2.medianBlur(image, 3))
    assert device.counters.fallbacks == {"median": 3}


# ---------------------------------------------------------------- lut and clahe
TABLE = ((np.arange(256) * 7 + 3) % 256).astype(np.uint8)
PER_CHANNEL = np.stack([TABLE, TABLE[::-1], np.roll(TABLE, 9)], axis=-1)  # 256 x 3


@pytest.mark.parametrize(("channels", "table"), [(1, TABLE), (3, TABLE), (3, PER_CHANNEL),
                                                 (3, PER_CHANNEL.reshape(256, 1, 3))],
                         ids=["grey", "one-table", "per-channel", "per-channel-cv2-layout"])
def test_lut_on_the_device(device: CudaBackend, channels: int, table: np.ndarray) -> None:
    """One table or one per channel (256 x 3, or cv2.LUT's own 256 x 1 x 3): cv2.LUT's result on the device."""
    image = _image(_shape(channels), np.uint8)
    np.testing.assert_array_equal(device.download(device.lut(device.upload(image), table)),
                                  cv2.LUT(image, table.reshape(256, 1, -1) if table.size == 768 else table))
    assert not device.counters.fallbacks


def test_lut_the_device_cannot_take_runs_on_the_cpu(device: CudaBackend) -> None:
    """Four channels (cuda's transform takes 1 or 3), a host image, and a float table (cv2.LUT gives its depth,
    cuda's table is 8-bit): cv2.LUT's result on the cpu."""
    four, grey = _image((7, 6, 4), np.uint8), _image((7, 6), np.uint8)
    floats = TABLE.astype(np.float32) / 255
    for given, expected in ((device.upload(four), cv2.LUT(four, TABLE)), (grey, cv2.LUT(grey, TABLE))):
        np.testing.assert_array_equal(device.download(device.lut(given, TABLE)), expected)
    out = device.download(device.lut(device.upload(grey), floats))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, cv2.LUT(grey, floats))
    assert device.counters.fallbacks == {"lut": 3}


def test_clahe_on_the_device_keeps_one_object_per_limit_and_grid(device: CudaBackend) -> None:
    for image in (_image((32, 24), np.uint8) // 4, _image((32, 24), np.uint16) // 16):
        for clip, tiles in ((2.0, (4, 4)), (4.0, (2, 3)), (2.0, (2, 3))):
            np.testing.assert_array_equal(device.download(device.clahe(device.upload(image), clip, tiles)),
                                          cv2.createCLAHE(clip, tiles).apply(image))
    assert not device.counters.fallbacks


def test_clahe_of_a_host_image_runs_on_the_cpu_with_its_limit(device: CudaBackend) -> None:
    image = _image((32, 24), np.uint8) // 4
    np.testing.assert_array_equal(device.download(device.clahe(image, 2.0, (4, 4))),
                                  cv2.createCLAHE(2.0, (4, 4)).apply(image))
    assert device.counters.fallbacks == {"clahe": 1}
