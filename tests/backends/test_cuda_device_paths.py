"""The cuda backend's device paths on a stand-in ``cv2.cuda`` (issue 26's mutation triage).

No CUDA build here. ``cv2.cuda.GpuMat`` is replaced by :class:`DeviceMat` (a numpy array
with GpuMat's constructors, ROI views, ``upload``/``download``, ``convertTo`` and
``copyTo``) and each ``cv2.cuda`` function the backend calls by one that does what
OpenCV's CUDA module documents, on the host. The backend under test is the real
:class:`CudaBackend` (its own ``is_native``, ``to_device``, ``to_host``, ``crop``), so
these reach the lines tests/backends/test_cuda_backend.py's fake devices replace. The
references are numpy or ``cv2`` called directly, exact unless stated. Nothing here runs
CUDA code: a real device is checked by ``bench/gpu_check.sh``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
import pytest

from cvfilters.backends import cuda as cuda_module
from cvfilters.backends.cuda import NO_CUDA_BUILD, CudaBackend

DEPTHS: dict[np.dtype[Any], int] = {np.dtype(np.uint8): cv2.CV_8U, np.dtype(np.uint16): cv2.CV_16U,
                                    np.dtype(np.int16): cv2.CV_16S, np.dtype(np.int32): cv2.CV_32S,
                                    np.dtype(np.float32): cv2.CV_32F}
DTYPES: dict[int, np.dtype[Any]] = {depth: dtype for dtype, depth in DEPTHS.items()}


class DeviceMat:
    """A stand-in for ``cv2.cuda.GpuMat`` over a numpy array: ``GpuMat()``, ``GpuMat(rows, cols, type)`` and
    the ROI ``GpuMat(parent, (y0, y1), (x0, x1))`` (a view: writes reach the parent)."""

    def __init__(self, *args: Any) -> None:
        self.a: np.ndarray = np.empty((0, 0), np.uint8)
        if len(args) == 3 and isinstance(args[0], DeviceMat):
            (y0, y1), (x0, x1) = args[1], args[2]
            assert 0 <= y0 <= y1 <= args[0].a.shape[0] and 0 <= x0 <= x1 <= args[0].a.shape[1]
            self.a = args[0].a[y0:y1, x0:x1]
        elif len(args) == 3:
            rows, cols, kind = (int(v) for v in args)
            step = cv2.CV_MAKETYPE(0, 2)  # 1 << CV_CN_SHIFT (3 in OpenCV 4, 5 in OpenCV 5)
            depth, channels = kind % step, kind // step + 1
            self.a = np.zeros((rows, cols) if channels == 1 else (rows, cols, channels), DTYPES[depth])
        elif args:
            raise TypeError(f"no GpuMat constructor takes {args!r}")

    def upload(self, array: np.ndarray) -> None:
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
            raise TypeError("upload takes a contiguous numpy array")
        self.a = array.copy()

    def download(self) -> np.ndarray:
        return np.array(self.a)

    def depth(self) -> int:
        return DEPTHS[self.a.dtype]

    def channels(self) -> int:
        return 1 if self.a.ndim == 2 else int(self.a.shape[2])

    def type(self) -> int:
        return int(cv2.CV_MAKETYPE(self.depth(), self.channels()))

    def size(self) -> tuple[int, int]:
        return int(self.a.shape[1]), int(self.a.shape[0])

    def clone(self) -> DeviceMat:
        return _mat(self.a.copy())

    def convertTo(self, rtype: int, alpha: float = 1.0, beta: float = 0.0) -> DeviceMat:
        """GpuMat::convertTo: ``saturate(a * alpha + beta)``, rounded for integers; ``rtype < 0``: the same depth."""
        dtype = self.a.dtype if rtype < 0 else DTYPES[rtype]
        values = self.a.astype(np.float64) * alpha + beta
        if np.issubdtype(dtype, np.integer):
            values = np.rint(values).clip(np.iinfo(dtype).min, np.iinfo(dtype).max)
        return _mat(values.astype(dtype))

    def copyTo(self, *mask_dst: DeviceMat, dst: DeviceMat | None = None) -> None:
        """``copyTo(dst=dst)``, or ``copyTo(mask, dst)``: this image where the mask is set (any depth here)."""
        if mask_dst:
            mask, dst = mask_dst
            m = mask.a != 0
            assert dst is not None and m.shape[:2] == self.a.shape[:2]
            dst.a[...] = np.where(m if m.ndim == self.a.ndim else m[..., None], self.a, dst.a)
            return
        assert dst is not None and dst.a.shape == self.a.shape and dst.a.dtype == self.a.dtype
        dst.a[...] = self.a


def _mat(array: np.ndarray) -> DeviceMat:
    mat = DeviceMat()
    mat.a = np.ascontiguousarray(array)
    return mat


class _Applier:
    """A ``cv2.cuda.Filter``: made for one source type, which ``apply`` asserts (as OpenCV's filters do)."""

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray], src_type: int) -> None:
        self.fn, self.src_type = fn, src_type

    def apply(self, image: DeviceMat) -> DeviceMat:
        assert image.type() == self.src_type, "the filter was made for another source type"
        return _mat(self.fn(image.a))


def _hist_even(plane: DeviceMat, size: int, lower: int, upper: int) -> DeviceMat:
    """cuda::histEven: a 1 x size CV_32SC1 histogram of one 8- or 16-bit plane."""
    assert plane.channels() == 1 and (lower, upper) == (0, size)
    return _mat(np.bincount(plane.a.ravel(), minlength=size)[:size].astype(np.int32).reshape(1, size))


def _min_max(plane: DeviceMat) -> tuple[float, float]:
    assert plane.channels() == 1
    return float(plane.a.min()), float(plane.a.max())


FUNCTIONS: dict[str, Any] = {
    "split": lambda m: [_mat(p) for p in cv2.split(m.a)],
    "merge": lambda planes: _mat(cv2.merge([p.a for p in planes])),
    "histEven": _hist_even,
    "minMax": _min_max,
    "equalizeHist": lambda m: _mat(cv2.equalizeHist(m.a)),
    "bitwise_not": lambda m: _mat(cv2.bitwise_not(m.a)),
    "cvtColor": lambda m, code: _mat(cv2.cvtColor(m.a, code)),
    "sqrt": lambda m: _mat(np.sqrt(m.a)),
    "min": lambda x, y: _mat(np.minimum(x.a, y.a)),
    "max": lambda x, y: _mat(np.maximum(x.a, y.a)),
    "compare": lambda x, y, op: _mat(cv2.compare(x.a, y.a, op)),
    "createGaussianFilter": lambda stype, dtype, ksize, sx, sy, bx, by: _Applier(
        lambda a: cv2.GaussianBlur(a, ksize, sx, sigmaY=sy, borderType=bx).astype(DTYPES[dtype]), stype),
    "createSeparableLinearFilter": lambda stype, dtype, kx, ky, anchor, bx, by: _Applier(
        lambda a: cv2.sepFilter2D(a, dtype, kx, ky, anchor=anchor, borderType=bx), stype),
    "createSobelFilter": lambda stype, dtype, dx, dy, ksize, scale, bx, by: _Applier(
        lambda a: cv2.Sobel(a, dtype, dx, dy, ksize=ksize, scale=scale, borderType=bx), stype),
}


def on_stand_ins(monkeypatch: pytest.MonkeyPatch, functions: dict[str, Any]) -> CudaBackend:
    """The real CudaBackend on DeviceMat images, its cv2.cuda functions ``functions``."""
    monkeypatch.setattr(cv2.cuda, "GpuMat", DeviceMat)
    for name, fn in functions.items():
        monkeypatch.setattr(cv2.cuda, name, fn, raising=False)
    monkeypatch.setattr(cuda_module, "_cuda", functions.get)
    return CudaBackend()


@pytest.fixture
def device(monkeypatch: pytest.MonkeyPatch) -> CudaBackend:
    """The real CudaBackend on DeviceMat images, its cv2.cuda functions the stand-ins above."""
    return on_stand_ins(monkeypatch, FUNCTIONS)


def _image(shape: tuple[int, ...], dtype: type, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, np.iinfo(dtype).max + 1, shape, dtype)
    return rng.random(shape, np.float32)


# ---------------------------------------------------------------- build lookups and the probe
def test_cuda_looks_a_function_up_in_this_builds_cv2_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cuda_module._cuda("GpuMat") is cv2.cuda.GpuMat
    assert cuda_module._cuda("noSuchCudaFunction") is None
    monkeypatch.delattr(cv2, "cuda")  # a build without the cuda submodule at all
    assert cuda_module._cuda("GpuMat") is None


class _Info:
    def __init__(self, device: int, named: bool) -> None:
        self.device, self.named = device, named
        if named:
            self.name = lambda: f"Fake GPU {device}"

    def deviceID(self) -> int:
        return self.device

    def majorVersion(self) -> int:
        return 8

    def minorVersion(self) -> int:
        return 6


@pytest.mark.parametrize(("named", "expected"), [(True, "Fake GPU 2"), (False, "CUDA device 2 (compute 8.6)")])
def test_probe_names_the_current_device(monkeypatch: pytest.MonkeyPatch, named: bool, expected: str) -> None:
    monkeypatch.setattr(cv2.cuda, "getCudaEnabledDeviceCount", lambda: 3)
    monkeypatch.setattr(cv2.cuda, "getDevice", lambda: 2)
    monkeypatch.setattr(cv2.cuda, "DeviceInfo", lambda device: _Info(device, named), raising=False)
    status = CudaBackend.probe()
    assert (status.name, status.available, status.device, status.is_gpu) == ("cuda", True, expected, True)


def test_probe_names_a_device_whose_info_fails_plainly(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(device: int) -> Any:
        raise cv2.error("no DeviceInfo")

    monkeypatch.setattr(cv2.cuda, "getCudaEnabledDeviceCount", lambda: 1)
    monkeypatch.setattr(cv2.cuda, "getDevice", lambda: 0)
    monkeypatch.setattr(cv2.cuda, "DeviceInfo", failing, raising=False)
    assert CudaBackend.probe().device == "CUDA device"


@pytest.mark.parametrize(("count", "build", "reason"), [
    (0, "Unavailable: cudaarithm", NO_CUDA_BUILD),
    (0, "  NVIDIA CUDA:                   YES (ver 12.4)", "no CUDA device found"),
    (-1, "  NVIDIA CUDA:                   YES (ver 12.4)",
     "the NVIDIA driver is missing or older than OpenCV's CUDA runtime"),
])
def test_probe_reasons_in_full(monkeypatch: pytest.MonkeyPatch, count: int, build: str, reason: str) -> None:
    monkeypatch.setattr(cv2.cuda, "getCudaEnabledDeviceCount", lambda: count)
    monkeypatch.setattr(cv2, "getBuildInformation", lambda: build)
    status = CudaBackend.probe()
    assert (status.name, status.available, status.reason) == ("cuda", False, reason)


def test_probe_quotes_the_drivers_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> int:
        raise cv2.error("  driver exploded \n")

    monkeypatch.setattr(cv2.cuda, "getCudaEnabledDeviceCount", broken)
    status = CudaBackend.probe()
    assert (status.name, status.available, status.reason) == ("cuda", False, "CUDA probe failed: driver exploded")


# ---------------------------------------------------------------- residency
def test_upload_crop_convert_and_download(device: CudaBackend) -> None:
    image = _image((9, 11, 3), np.uint8)
    view = image[::-1, 1:]  # not contiguous: uploaded as a contiguous copy
    up = device.to_device(view)
    assert device.is_native(up)
    np.testing.assert_array_equal(device.to_host(up), view)
    np.testing.assert_array_equal(device.to_host(device.crop(up, 2, 3, 5, 4)), view[3:7, 2:7])
    np.testing.assert_array_equal(device.to_host(device.convert(up, np.float32)), view.astype(np.float32))
    np.testing.assert_allclose(device.to_host(device.convert(up, np.float32, 0.5, 0.25)),
                               view.astype(np.float32) * 0.5 + 0.25, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(device.to_host(device.convert(up, np.uint16, 300.0, -7.0)),
                                  np.clip(view * 300.0 - 7.0, 0, 65535).astype(np.uint16))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("channels", [1, 3])
def test_concat_on_the_device(device: CudaBackend, axis: int, channels: int) -> None:
    """Three images of different lengths along ``axis``: np.concatenate, no fallback."""
    lengths = (3, 5, 2)
    shapes = [((n, 7) if axis == 0 else (6, n)) + ((channels,) if channels > 1 else ()) for n in lengths]
    parts = [_image(shape, np.uint16, seed) for seed, shape in enumerate(shapes)]
    out = device.concat([device.upload(p) for p in parts], axis)
    assert device.is_native(out)
    np.testing.assert_array_equal(device.download(out), np.concatenate(parts, axis=axis))
    assert not device.counters.fallbacks


def test_concat_that_cuda_cannot_do_falls_back(device: CudaBackend) -> None:
    a, b = _image((4, 6), np.uint8), _image((3, 6), np.uint8, 2)
    host = device.concat([device.upload(a), b], 0)  # one host image
    np.testing.assert_array_equal(device.download(host), cv2.vconcat([a, b]))
    with pytest.raises(cv2.error):  # two types: cv2.vconcat says so
        device.concat([device.upload(a), device.upload(b.astype(np.uint16))], 0)
    with pytest.raises(cv2.error):  # widths differ (the heights agree: hconcat would take them)
        device.concat([device.upload(a), device.upload(_image((4, 5), np.uint8))], 0)
    assert device.counters.fallbacks == {"concat": 1}
    for axis in (0, 1):  # one image
        np.testing.assert_array_equal(device.download(device.concat([device.upload(a)], axis)), a)


# ---------------------------------------------------------------- statistics
@pytest.mark.parametrize(("dtype", "levels"), [(np.uint8, 256), (np.uint16, 65536)])
@pytest.mark.parametrize("channels", [1, 3])
def test_calc_hist_on_the_device(device: CudaBackend, dtype: type, levels: int, channels: int) -> None:
    image = _image((13, 9) if channels == 1 else (13, 9, channels), dtype)
    counts = device.calc_hist(device.upload(image), channels, levels)
    planes = [image] if channels == 1 else [image[..., c] for c in range(channels)]
    expected = np.stack([np.bincount(p.ravel(), minlength=levels) for p in planes])
    assert isinstance(counts, np.ndarray) and counts.dtype == np.int64
    np.testing.assert_array_equal(counts, expected)
    assert not device.counters.fallbacks


def test_calc_hist_of_another_depth_falls_back_to_host_counts(device: CudaBackend) -> None:
    image = _image((13, 9, 3), np.uint8)
    expected = np.stack([np.bincount(image[..., c].ravel(), minlength=65536) for c in range(3)])
    for given in (device.upload(image), image):  # 8-bit levels counted as 16-bit (cv2 does it); a host image
        counts = device.calc_hist(given, 3, 65536)
        assert isinstance(counts, np.ndarray) and counts.dtype == np.int64
        np.testing.assert_array_equal(counts, expected)
    assert device.counters.fallbacks == {"calc_hist": 2}


@pytest.mark.parametrize("channels", [1, 3])
def test_min_max_on_the_device(device: CudaBackend, channels: int) -> None:
    image = _image((13, 9) if channels == 1 else (13, 9, channels), np.float32) * 5 - 1
    planes = [image] if channels == 1 else [image[..., c] for c in range(channels)]
    per_channel = [(float(p.min()), float(p.max())) for p in planes]
    assert device.min_max(device.upload(image), channels) == per_channel
    pooled = device.min_max(device.upload(image), channels, pooled=True)
    assert pooled == [(float(image.min()), float(image.max()))]
    assert not device.counters.fallbacks


def test_min_max_of_a_host_image_falls_back(device: CudaBackend) -> None:
    image = _image((5, 4, 3), np.uint8)
    expected = [(float(image[..., c].min()), float(image[..., c].max())) for c in range(3)]
    assert device.min_max(image, 3) == expected
    assert device.min_max(image, 3, pooled=True) == [(float(image.min()), float(image.max()))]
    assert device.counters.fallbacks == {"min_max": 2}


def test_equalize_hist_on_the_device_and_of_a_host_image(device: CudaBackend) -> None:
    image = _image((13, 9), np.uint8) // 3
    np.testing.assert_array_equal(device.download(device.equalize_hist(device.upload(image))),
                                  cv2.equalizeHist(image))
    assert not device.counters.fallbacks
    np.testing.assert_array_equal(device.download(device.equalize_hist(image)), cv2.equalizeHist(image))
    assert device.counters.fallbacks == {"equalize_hist": 1}


# ---------------------------------------------------------------- separable filters
KX: np.ndarray = cv2.getGaussianKernel(5, 1.1, cv2.CV_32F)
KY: np.ndarray = np.array([[-1.0], [2.5], [-0.5]], np.float32)
SEPARABLE: list[tuple[str, Callable[[Any, Any], Any], Callable[[np.ndarray], np.ndarray]]] = [
    ("gaussian", lambda be, im: be.gaussian(im, (5, 7), 1.3, cv2.BORDER_REFLECT),
     lambda a: cv2.GaussianBlur(a, (5, 7), 1.3, borderType=cv2.BORDER_REFLECT)),
    ("sep_filter2d", lambda be, im: be.sep_filter2d(im, KX, KY, cv2.BORDER_REPLICATE),
     lambda a: cv2.sepFilter2D(a, -1, KX, KY, borderType=cv2.BORDER_REPLICATE)),
    ("sep_filter2d-delta-float", lambda be, im: be.sep_filter2d(im, KX, KY, cv2.BORDER_CONSTANT, 3.0, cv2.CV_32F),
     lambda a: cv2.sepFilter2D(a, cv2.CV_32F, KX, KY, delta=3.0, borderType=cv2.BORDER_CONSTANT)),
    ("sep_filter2d-delta-one", lambda be, im: be.sep_filter2d(im, KX, KY, cv2.BORDER_REPLICATE, 1.0, cv2.CV_32F),
     lambda a: cv2.sepFilter2D(a, cv2.CV_32F, KX, KY, delta=1.0, borderType=cv2.BORDER_REPLICATE)),
    ("sep_filter2d-delta", lambda be, im: be.sep_filter2d(im, KX, KY, cv2.BORDER_REFLECT_101, 20.0),
     lambda a: cv2.sepFilter2D(a, -1, KX, KY, delta=20.0, borderType=cv2.BORDER_REFLECT_101)),
    ("sobel", lambda be, im: be.sobel(im, cv2.CV_32F, 1, 0, 3, cv2.BORDER_REFLECT_101),
     lambda a: cv2.Sobel(a, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REFLECT_101)),
    ("sobel-same-depth", lambda be, im: be.sobel(im, -1, 0, 1, 5, cv2.BORDER_REPLICATE),
     lambda a: cv2.Sobel(a, -1, 0, 1, ksize=5, borderType=cv2.BORDER_REPLICATE)),
]


@pytest.mark.parametrize(("name", "run", "reference"), SEPARABLE, ids=[case[0] for case in SEPARABLE])
@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_separable_filters_on_the_device(device: CudaBackend, name: str, run: Callable[[Any, Any], Any],
                                         reference: Callable[[np.ndarray], np.ndarray], channels: int,
                                         dtype: type) -> None:
    """Within one level of cv2 (8 bits: the float32 path rounds once, as cv2 does) or float32 precision."""
    image = _image((12, 10) if channels == 1 else (12, 10, channels), dtype)
    actual, expected = device.download(run(device, device.upload(image))), reference(image)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    tolerance = 1.0 if np.issubdtype(expected.dtype, np.integer) else 1e-4 * max(1.0, float(np.abs(expected).max()))
    assert float(np.abs(actual.astype(np.float64) - expected).max()) <= tolerance
    assert not device.counters.fallbacks


def test_each_separable_filter_keeps_its_own_cached_object(device: CudaBackend) -> None:
    """Two Gaussians and a Sobel on one backend: each result is its own filter's (the cache keys differ)."""
    image = _image((12, 10, 3), np.float32)
    cases: list[tuple[Callable[[Any], Any], Callable[[np.ndarray], np.ndarray]]] = [
        (lambda im: device.gaussian(im, (5, 5), 1.0, cv2.BORDER_REFLECT_101),
         lambda a: cv2.GaussianBlur(a, (5, 5), 1.0, borderType=cv2.BORDER_REFLECT_101)),
        (lambda im: device.gaussian(im, (5, 5), 2.0, cv2.BORDER_REFLECT_101),
         lambda a: cv2.GaussianBlur(a, (5, 5), 2.0, borderType=cv2.BORDER_REFLECT_101)),
        (lambda im: device.sobel(im, -1, 1, 0, 3, cv2.BORDER_REFLECT_101),
         lambda a: cv2.Sobel(a, -1, 1, 0, ksize=3, borderType=cv2.BORDER_REFLECT_101)),
    ]
    for run, reference in cases:
        np.testing.assert_allclose(device.download(run(device.upload(image))), reference(image), rtol=0, atol=1e-5)
    assert not device.counters.fallbacks


# ---------------------------------------------------------------- element-wise primitives and their guards
def test_element_wise_primitives_stay_on_the_device(device: CudaBackend) -> None:
    a, b = _image((6, 5, 3), np.uint8), _image((6, 5, 3), np.uint8, 2)
    up = device.upload
    np.testing.assert_array_equal(device.download(device.bitwise_not(up(a))), 255 - a)
    np.testing.assert_array_equal(device.download(device.cvt_color(up(a), cv2.COLOR_BGR2GRAY)),
                                  cv2.cvtColor(a, cv2.COLOR_BGR2GRAY))
    np.testing.assert_array_equal(device.download(device.minimum(up(a), up(b))), np.minimum(a, b))
    np.testing.assert_array_equal(device.download(device.maximum(up(a), up(b))), np.maximum(a, b))
    np.testing.assert_array_equal(device.download(device.compare(up(a), up(b), cv2.CMP_LT)),
                                  np.where(a < b, 255, 0).astype(np.uint8))
    mask = np.where(a > b, 255, 0).astype(np.uint8)
    np.testing.assert_array_equal(device.download(device.select(up(mask), up(a), up(b))), np.where(mask > 0, a, b))
    f = a.astype(np.float32)
    np.testing.assert_allclose(device.download(device.sqrt(up(f))), np.sqrt(f), rtol=1e-7)
    assert not device.counters.fallbacks


def test_a_host_operand_falls_back_to_the_cpu(device: CudaBackend) -> None:
    """One operand on the host: the cpu's primitive on both, counted by name (cv2 called directly as reference)."""
    a, b = _image((6, 5, 3), np.uint8), _image((6, 5, 3), np.uint8, 2)
    mask = np.where(a > b, 255, 0).astype(np.uint8)
    up, down = device.upload, device.download
    for x, y in ((a, up(b)), (up(a), b)):
        np.testing.assert_array_equal(down(device.minimum(x, y)), cv2.min(a, b))
        np.testing.assert_array_equal(down(device.maximum(x, y)), cv2.max(a, b))
        np.testing.assert_array_equal(down(device.compare(x, y, cv2.CMP_GE)), cv2.compare(a, b, cv2.CMP_GE))
    for m, yes, no in ((mask, up(a), up(b)), (up(mask), a, up(b)), (up(mask), up(a), b)):
        np.testing.assert_array_equal(down(device.select(m, yes, no)), np.where(mask > 0, a, b))
    f = a.astype(np.float32)
    np.testing.assert_allclose(down(device.sqrt(f)), cv2.sqrt(f), rtol=1e-7)
    np.testing.assert_array_equal(down(device.bitwise_not(a)), cv2.bitwise_not(a))
    assert device.counters.fallbacks == {"minimum": 2, "maximum": 2, "compare": 2, "select": 3, "sqrt": 1,
                                         "bitwise_not": 1}


def test_operands_of_two_types_or_sizes_go_to_cv2(device: CudaBackend) -> None:
    """cudaarithm's min, max and compare take two images of one type and size: others run on the cpu, where
    cv2 takes two types (OpenCV 5) and refuses two sizes."""
    a, b = _image((6, 5), np.uint8), _image((6, 5), np.uint8, 2).astype(np.float32)
    up, down = device.upload, device.download
    np.testing.assert_array_equal(down(device.minimum(up(a), up(b))), cv2.min(a, b))
    np.testing.assert_array_equal(down(device.maximum(up(a), up(b))), cv2.max(a, b))
    np.testing.assert_array_equal(down(device.compare(up(a), up(b), cv2.CMP_LE)), cv2.compare(a, b, cv2.CMP_LE))
    assert device.counters.fallbacks == {"minimum": 1, "maximum": 1, "compare": 1}
    narrow = _image((6, 4), np.uint8)
    for call in (device.minimum, device.maximum, lambda x, y: device.compare(x, y, cv2.CMP_EQ)):
        with pytest.raises(cv2.error):
            call(up(a), up(narrow))


def test_select_falls_back_where_copy_to_cannot_take_the_mask_or_operands(device: CudaBackend) -> None:
    """GpuMat::copyTo wants an 8-bit mask of one or the image's channels and operands of one type and size."""
    a, b = _image((6, 5), np.uint8), _image((6, 5), np.uint8, 2)
    mask = np.where(a > b, 255, 0).astype(np.uint8)
    for m, size in ((mask.astype(np.uint16), 5), (mask[..., None].repeat(2, axis=2), 5), (mask[:5], 5), (mask, 4)):
        yes, no = a[:, :size], b[:, :size]
        with pytest.raises(cv2.error):  # as cv2.copyTo on the cpu (the reference) refuses them
            cv2.copyTo(yes, m, dst=no.copy())
        with pytest.raises(cv2.error):
            device.select(device.upload(m), device.upload(yes), device.upload(no))
    # two types: the cpu's (cv2.copyTo reallocates its destination as yes's type, see the triage notes)
    device.select(device.upload(mask), device.upload(a), device.upload(b.astype(np.float32)))
    assert device.counters.fallbacks == {"select": 1}
