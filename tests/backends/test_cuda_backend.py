"""The cuda backend: probe and host fallbacks everywhere, primitive parity on a CUDA device.

Without CUDA the primitives are exercised on a *fake device*: a CudaBackend whose
device images are numpy arrays (transfers are identities) and whose build has no
``cv2.cuda`` function, so every primitive takes the counted fallback path. The same
cases run against a real ``GpuMat`` when OpenCV has CUDA and sees a device.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import pytest

from cvfilters.backends import cuda as cuda_module
from cvfilters.backends import get_backend
from cvfilters.backends.base import Backend
from cvfilters.backends.cpu import CpuBackend
from cvfilters.backends.cuda import NO_CUDA_BUILD, CudaBackend
from cvfilters.core.errors import BackendUnavailableError
from tests.conftest import CUDA_PRIMITIVE_TOLERANCE

HAS_CUDA = cv2.cuda.getCudaEnabledDeviceCount() > 0
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs OpenCV built with CUDA and a CUDA device")

B101, REPLICATE, REFLECT, WRAP, CONSTANT = (cv2.BORDER_REFLECT_101, cv2.BORDER_REPLICATE, cv2.BORDER_REFLECT,
                                             cv2.BORDER_WRAP, cv2.BORDER_CONSTANT)
HEIGHT, WIDTH = 40, 48
_rng = np.random.default_rng(7)
KERNEL = (_rng.random((5, 5)) - 0.3).astype(np.float32)
KERNEL_X = cv2.getGaussianKernel(7, 1.4, cv2.CV_32F)
KERNEL_Y = np.array([[-1.0], [2.5], [-0.5]], np.float32)
TABLE = (255 - np.arange(256) // 2).astype(np.uint8)
MAP_X = _rng.uniform(-3, WIDTH + 3, (30, 36)).astype(np.float32)
MAP_Y = _rng.uniform(-3, HEIGHT + 3, (30, 36)).astype(np.float32)
GRAY_CODE = {1: cv2.COLOR_GRAY2BGR, 3: cv2.COLOR_BGR2GRAY, 4: cv2.COLOR_BGRA2GRAY}


class FakeDevice(CudaBackend):
    """A CudaBackend whose device images are numpy arrays: transfers are identities."""

    def is_native(self, image: Any) -> bool:
        return isinstance(image, np.ndarray)

    def to_device(self, array: np.ndarray) -> np.ndarray:
        return array

    def to_host(self, image: np.ndarray) -> np.ndarray:
        return image


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeDevice:
    """A fake device on an OpenCV build without any cv2.cuda function."""
    monkeypatch.setattr(cuda_module, "_cuda", lambda name: None)
    return FakeDevice()


def images(dtype: type, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Two test images; the second has no zeros (a divisor)."""
    rng = np.random.default_rng(channels)
    shape = (HEIGHT, WIDTH) if channels == 1 else (HEIGHT, WIDTH, channels)
    if dtype in (np.uint8, np.uint16):
        top = np.iinfo(dtype).max + 1
        return rng.integers(0, top, shape, dtype), rng.integers(1, top, shape, dtype)
    return rng.random(shape, np.float32), rng.uniform(0.25, 1.0, shape).astype(np.float32)


def _float(image: np.ndarray) -> np.ndarray:
    integer = np.issubdtype(image.dtype, np.integer)
    return image.astype(np.float32) / np.iinfo(image.dtype).max if integer else image


def _uint8(image: np.ndarray) -> np.ndarray:
    return np.round(_float(image) * 255).astype(np.uint8)


def _channels(image: np.ndarray) -> int:
    return 1 if image.ndim == 2 else image.shape[2]


def _channel_table(image: np.ndarray) -> np.ndarray:
    channels = 1 if image.ndim == 2 else image.shape[2]
    return np.stack([np.roll(TABLE, 40 * c) for c in range(channels)], axis=-1).reshape(256, 1, channels)


@dataclass(frozen=True)
class Case:
    """One primitive call ``run(backend, a, b)`` on host images ``a`` and ``b``."""

    name: str
    run: Callable[[Backend, np.ndarray, np.ndarray], Any]
    exact: bool = False
    fake: bool = True  # False: needs GpuMat methods (convertTo, ROI, copyTo), so a real device
    primitive: str = ""  # a row of CUDA_PRIMITIVE_TOLERANCE: what OpenCV's own CUDA tests allow


CASES = [
    Case("gaussian", lambda be, a, b: be.gaussian(be.upload(a), (7, 7), 1.5, B101), primitive="gaussian"),
    Case("gaussian-from-sigma", lambda be, a, b: be.gaussian(be.upload(a), (0, 5), 2.0, REPLICATE),
         primitive="gaussian"),
    Case("gaussian-wide", lambda be, a, b: be.gaussian(be.upload(a), (0, 0), 9.0, REFLECT), primitive="gaussian"),
    Case("box", lambda be, a, b: be.box(be.upload(a), (5, 5), B101)),
    Case("box-even-constant", lambda be, a, b: be.box(be.upload(a), (4, 6), CONSTANT)),
    Case("filter2d", lambda be, a, b: be.filter2d(be.upload(a), KERNEL, REFLECT)),
    Case("filter2d-delta-float", lambda be, a, b: be.filter2d(be.upload(a), KERNEL, CONSTANT, 0.25, cv2.CV_32F)),
    Case("filter2d-delta", lambda be, a, b: be.filter2d(be.upload(a), KERNEL, B101, 0.125)),
    Case("sep_filter2d", lambda be, a, b: be.sep_filter2d(be.upload(a), KERNEL_X, KERNEL_Y, B101)),
    Case("sep_filter2d-delta", lambda be, a, b: be.sep_filter2d(be.upload(a), KERNEL_X, KERNEL_Y, CONSTANT,
                                                                3.0, cv2.CV_32F)),
    Case("sobel", lambda be, a, b: be.sobel(be.upload(a), cv2.CV_32F, 1, 0, 3, B101)),
    Case("sobel-scharr", lambda be, a, b: be.sobel(be.upload(a), cv2.CV_32F, 0, 1, -1, REPLICATE)),
    Case("sobel-same-depth", lambda be, a, b: be.sobel(be.upload(a), -1, 1, 1, 5, REFLECT)),
    Case("magnitude", lambda be, a, b: be.magnitude(be.upload(_float(a)), be.upload(_float(b)))),
    Case("abs_convert", lambda be, a, b: be.abs_convert(be.upload(_float(a) - _float(b)), a.dtype, 2.0)),
    Case("threshold", lambda be, a, b: be.threshold(be.upload(a), float(a.max()) / 2, float(a.max()),
                                                    cv2.THRESH_BINARY), exact=True),
    Case("median", lambda be, a, b: be.median(be.upload(_uint8(a)), 5), primitive="median"),
    Case("bilateral", lambda be, a, b: be.bilateral(be.upload(np.ascontiguousarray(_uint8(a)[..., :3])), 5, 30.0,
                                                    3.0, B101)),
    Case("morphology", lambda be, a, b: [be.morphology(be.upload(a), op, np.ones((3, 5), np.uint8), 2, CONSTANT)
                                         for op in (cv2.MORPH_ERODE, cv2.MORPH_DILATE, cv2.MORPH_GRADIENT)],
         exact=True),
    Case("transform", lambda be, a, b: be.transform(be.upload(_float(a)), np.eye(_channels(a), _channels(a) + 1))),
    Case("clip", lambda be, a, b: be.clip(be.upload(_float(a) * 2 - 0.5), 0.0, 1.0), exact=True),
    Case("lut", lambda be, a, b: be.lut(be.upload(_uint8(a)), TABLE), exact=True),
    Case("lut-per-channel", lambda be, a, b: be.lut(be.upload(_uint8(a)), _channel_table(a)), exact=True),
    Case("multiply", lambda be, a, b: be.multiply(be.upload(a), be.upload(b), 0.5)),
    Case("multiply-to-float", lambda be, a, b: be.multiply(be.upload(a), be.upload(b), 1.0, np.float32)),
    Case("multiply-mixed-depths", lambda be, a, b: be.multiply(be.upload(a), be.upload(_float(b)), 1.0, a.dtype)),
    Case("add_weighted-narrowing", lambda be, a, b: be.add_weighted(be.upload(_float(a)), 200.0, be.upload(_float(b)),
                                                                    55.0, 0.0, np.uint8)),
    Case("divide", lambda be, a, b: be.divide(be.upload(a), be.upload(b), 2.0)),
    Case("add_weighted", lambda be, a, b: be.add_weighted(be.upload(a), 0.3, be.upload(b), 0.7, 0.02)),
    Case("bitwise_not", lambda be, a, b: be.bitwise_not(be.upload(a)), exact=True),
    Case("flip", lambda be, a, b: [be.flip(be.upload(a), code) for code in (0, 1, -1)], exact=True),
    Case("pad", lambda be, a, b: [be.pad(be.upload(a), 1, 2, 3, 4, border, 0.5)
                                  for border in (B101, REPLICATE, REFLECT, WRAP, CONSTANT)], exact=True),
    Case("split", lambda be, a, b: be.split(be.upload(a)), exact=True),
    Case("merge", lambda be, a, b: be.merge(be.split(be.upload(a))[::-1]), exact=True),
    Case("resize-nearest", lambda be, a, b: be.resize(be.upload(a), (23, 61), cv2.INTER_NEAREST), exact=True),
    Case("resize-linear-up", lambda be, a, b: be.resize(be.upload(a), (67, 53), cv2.INTER_LINEAR)),
    Case("resize-linear-down", lambda be, a, b: be.resize(be.upload(a), (21, 17), cv2.INTER_LINEAR)),
    Case("resize-area", lambda be, a, b: be.resize(be.upload(a), (16, 10), cv2.INTER_AREA), primitive="resize-area"),
    Case("resize-area-fractional", lambda be, a, b: be.resize(be.upload(a), (21, 17), cv2.INTER_AREA),
         primitive="resize-area"),
    Case("resize-cubic", lambda be, a, b: be.resize(be.upload(a), (67, 53), cv2.INTER_CUBIC)),
    Case("remap", lambda be, a, b: be.remap(be.upload(a), MAP_X, MAP_Y, cv2.INTER_LINEAR, CONSTANT, 0.5)),
    Case("remap-device-maps", lambda be, a, b: be.remap(be.upload(a), be.upload(MAP_X), be.upload(MAP_Y),
                                                        cv2.INTER_LINEAR, REFLECT)),
    Case("remap-nearest", lambda be, a, b: be.remap(be.upload(a), MAP_X, MAP_Y, cv2.INTER_NEAREST, B101)),
    Case("cvt_color", lambda be, a, b: be.cvt_color(be.upload(a), GRAY_CODE[1 if a.ndim == 2 else a.shape[2]])),
    Case("convert", lambda be, a, b: be.convert(be.upload(a), np.float32, 1 / 255, 0.1), fake=False),
    Case("convert-to-uint8", lambda be, a, b: be.convert(be.upload(a), np.uint8, 0.5 if a.dtype == np.uint8
                                                         else 200.0, 3.0), fake=False),
    Case("filter2d-on-crop", lambda be, a, b: be.filter2d(be.crop(be.upload(a), 5, 4, 30, 25), KERNEL, B101),
         fake=False),
    Case("filters-on-crop", lambda be, a, b: [
        op(be.crop(be.upload(a), 5, 4, 30, 25)) for op in (
            lambda im: be.gaussian(im, (5, 5), 1.0, REFLECT), lambda im: be.box(im, (3, 3), B101),
            lambda im: be.sobel(im, cv2.CV_32F, 1, 0, 3, REPLICATE),
            lambda im: be.resize(im, (13, 11), cv2.INTER_AREA), lambda im: be.resize(im, (45, 40), cv2.INTER_LINEAR),
            lambda im: be.remap(im, MAP_X, MAP_Y, cv2.INTER_LINEAR, REPLICATE))], fake=False),
    Case("crop-concat", lambda be, a, b: [be.concat([be.crop(be.upload(a), 3, 2, 20, 15),
                                                     be.crop(be.upload(b), 1, 1, 20, 15)], axis)
                                          for axis in (0, 1)], exact=True, fake=False),
]
PARAMS = [pytest.param(kind, case, id=f"{kind}-{case.name}", marks=[needs_cuda] if kind == "cuda" else [])
          for kind in ("fake", "cuda") for case in CASES if kind == "cuda" or case.fake]


def _host(backend: Backend, result: Any) -> Any:
    return [backend.download(r) for r in result] if isinstance(result, list) else backend.download(result)


def _assert_close(actual: Any, expected: Any, exact: bool, primitive: str = "") -> None:
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            _assert_close(a, e, exact, primitive)
        return
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    if exact:
        assert np.array_equal(*(np.ascontiguousarray(x).view(np.uint8) for x in (actual, expected)))
        return
    # one rounding step (two for 16 bits, as in conftest's PARITY_TOLERANCE), else float32
    # precision, or what OpenCV's own CUDA test of the primitive allows where that is more
    levels, relative = CUDA_PRIMITIVE_TOLERANCE.get(primitive, (1.0, 1e-4))
    steps = max(levels, {np.dtype(np.uint16): 2.0}.get(expected.dtype, 1.0))
    integer = np.issubdtype(expected.dtype, np.integer)
    tolerance = steps if integer else max(relative, 1e-4) * max(1.0, float(np.abs(expected).max()))
    difference = float(np.abs(actual.astype(np.float64) - expected.astype(np.float64)).max())
    assert difference <= tolerance, f"max difference {difference} > {tolerance}"


# ---------------------------------------------------------------- probe
@pytest.mark.skipif(HAS_CUDA, reason="OpenCV sees a CUDA device here")
def test_probe_says_why_cuda_is_unavailable() -> None:
    status = CudaBackend.probe()
    assert not status.available and status.reason
    with pytest.raises(BackendUnavailableError, match=re.escape(status.reason)):
        get_backend("cuda")


@pytest.mark.parametrize(("count", "build", "reason"), [
    (0, "Unavailable: cudaarithm", NO_CUDA_BUILD),
    (0, "  NVIDIA CUDA:                   YES (ver 12.4)", "no CUDA device found"),
    (-1, "  NVIDIA CUDA:                   YES (ver 12.4)", "NVIDIA driver is missing"),
])
def test_probe_reasons(monkeypatch: pytest.MonkeyPatch, count: int, build: str, reason: str) -> None:
    monkeypatch.setattr(cv2.cuda, "getCudaEnabledDeviceCount", lambda: count)
    monkeypatch.setattr(cv2, "getBuildInformation", lambda: build)
    status = CudaBackend.probe()
    assert not status.available and reason in status.reason


def test_probe_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> int:
        raise cv2.error("driver exploded")

    monkeypatch.setattr(cv2.cuda, "getCudaEnabledDeviceCount", broken)
    status = CudaBackend.probe()
    assert not status.available and "CUDA probe failed" in status.reason


@pytest.mark.skipif(HAS_CUDA, reason="needs the DeviceInfo of a build without CUDA")
def test_probe_names_a_device_even_when_device_info_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cv2.cuda, "getCudaEnabledDeviceCount", lambda: 1)
    status = CudaBackend.probe()
    assert status.available and status.is_gpu and status.device


@needs_cuda
def test_probe_finds_the_device() -> None:
    status = CudaBackend.probe()
    assert status.available and status.is_gpu and status.device


# ---------------------------------------------------------------- fallbacks
def test_absent_cuda_function_falls_back_to_cpu(fake: FakeDevice) -> None:
    image, _ = images(np.uint8, 3)
    result = fake.download(fake.gaussian(fake.upload(image), (5, 5), 1.2, B101))
    np.testing.assert_array_equal(result, CpuBackend().gaussian(image, (5, 5), 1.2, B101))
    assert fake.counters.fallbacks == {"gaussian": 1}
    assert (fake.counters.uploads, fake.counters.downloads) == (1, 1)  # the fallback's own transfers are not counted


def test_fallback_moves_lists_of_images(fake: FakeDevice) -> None:
    image, _ = images(np.float32, 4)
    planes = fake.split(fake.upload(image))
    merged = fake.merge(planes[::-1])
    np.testing.assert_array_equal(fake.download(merged), image[..., ::-1])
    assert fake.counters.fallbacks == {"split": 1, "merge": 1}


def test_fallback_transfers_are_instance_methods(fake: FakeDevice) -> None:
    moved: list[str] = []
    fake.to_host = lambda image: moved.append("down") or image  # type: ignore[method-assign]
    fake.to_device = lambda array: moved.append("up") or array  # type: ignore[method-assign]
    a, b = images(np.uint8, 1)
    fake.add_weighted(a, 0.5, b, 0.5)
    assert moved == ["down", "down", "up"]
    assert fake.counters.fallbacks["add_weighted"] == 1 and fake.counters.uploads == 0


@pytest.mark.parametrize("interpolation", [cv2.INTER_NEAREST, cv2.INTER_LINEAR], ids=["nearest", "linear"])
@pytest.mark.parametrize(("src", "dst"), [((48, 40), (67, 53)), ((48, 40), (21, 17)), ((7, 5), (23, 19)),
                                          ((61, 47), (30, 94)), ((48, 40), (24, 20))])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32], ids=["uint8", "float32"])
def test_resize_maps_sample_like_cv2_resize(interpolation: int, src: tuple[int, int], dst: tuple[int, int],
                                            dtype: type) -> None:
    """The maps the device's resize remaps with reproduce cv2.resize (checked with cv2.remap here)."""
    image, _ = images(dtype, 3)
    image = cv2.resize(image, src, interpolation=cv2.INTER_NEAREST)
    map_x, map_y = (cuda_module._resize_map(interpolation, src, dst, axis) for axis in (0, 1))
    actual = cv2.remap(image, map_x, map_y, interpolation, borderMode=REPLICATE)
    _assert_close(actual, cv2.resize(image, dst, interpolation=interpolation), interpolation == cv2.INTER_NEAREST)


# ---------------------------------------------------------------- parity with cpu
@pytest.mark.parametrize(("kind", "case"), PARAMS)
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32], ids=["uint8", "uint16", "float32"])
@pytest.mark.parametrize("channels", [1, 3, 4], ids=["1ch", "3ch", "4ch"])
def test_matches_cpu(request: pytest.FixtureRequest, kind: str, case: Case, dtype: type, channels: int) -> None:
    backend = request.getfixturevalue("fake") if kind == "fake" else CudaBackend()
    a, b = images(dtype, channels)
    cpu = CpuBackend()
    expected = case.run(cpu, a, b)
    actual = _host(backend, case.run(backend, a, b))
    _assert_close(actual, expected, case.exact, case.primitive)
    if kind == "fake":
        assert sum(backend.counters.fallbacks.values()) >= 1


@needs_cuda
def test_device_results_stay_on_device() -> None:
    backend = CudaBackend()
    a, b = images(np.uint8, 3)
    result = backend.add_weighted(backend.gaussian(backend.upload(a), (5, 5), 1.0, B101), 0.5, backend.upload(b), 0.5)
    assert backend.is_native(result)
    assert not backend.counters.fallbacks and (backend.counters.uploads, backend.counters.downloads) == (2, 0)


@needs_cuda
def test_kernels_over_32_taps_fall_back() -> None:
    backend = CudaBackend()
    a, _ = images(np.float32, 1)
    backend.gaussian(backend.upload(a), (0, 0), 9.0, B101)
    backend.gaussian(backend.upload(a), (33, 33), 0, B101)
    assert backend.counters.fallbacks["gaussian"] == 2


# ---------------------------------------------------------------- OpenCV's CUDA semantics, simulated
# A fake GpuMat and fake cv2.cuda functions that behave as OpenCV's CUDA sources say (the
# median leaves its border columns unwritten, morphology pads with reflect101 and zero-fills
# between iterations, divide truncates, CLAHE may reject 16 bits, the LUT asserts its channels):
# the backend must give cv2's results anyway, on the device path. These check the plumbing
# and the adaptations, not a GPU: nothing here runs CUDA code.
class FakeGpuMat:
    def __init__(self, array: np.ndarray) -> None:
        self.a = np.ascontiguousarray(array)

    def depth(self) -> int:
        return {np.dtype(np.uint8): cv2.CV_8U, np.dtype(np.uint16): cv2.CV_16U, np.dtype(np.int16): cv2.CV_16S,
                np.dtype(np.float32): cv2.CV_32F}[self.a.dtype]

    def channels(self) -> int:
        return 1 if self.a.ndim == 2 else self.a.shape[2]

    def size(self) -> tuple[int, int]:
        return self.a.shape[1], self.a.shape[0]

    def type(self) -> int:
        return cv2.CV_MAKETYPE(self.depth(), self.channels())

    def clone(self) -> FakeGpuMat:
        return FakeGpuMat(self.a.copy())

    def copyTo(self, mask: FakeGpuMat, dst: FakeGpuMat) -> None:
        m = mask.a != 0
        dst.a[...] = np.where(m if m.ndim == self.a.ndim else m[..., None], self.a, dst.a)

    def convertTo(self, depth: int, alpha: float = 1.0, beta: float = 0.0) -> FakeGpuMat:
        """``saturate(a * alpha + beta)``, rounded for integers (GpuMat::convertTo)."""
        dtype = {cv2.CV_8U: np.uint8, cv2.CV_16U: np.uint16, cv2.CV_16S: np.int16, cv2.CV_32F: np.float32}[depth]
        values = self.a.astype(np.float64) * alpha + beta
        if np.issubdtype(dtype, np.integer):
            values = np.rint(values).clip(*_limits(dtype))
        return FakeGpuMat(values.astype(dtype))


def _limits(dtype: type) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return info.min, info.max


class SimulatedDevice(CudaBackend):
    """A CudaBackend on FakeGpuMat images; transfers copy arrays in and out."""

    def is_native(self, image: Any) -> bool:
        return isinstance(image, FakeGpuMat)

    def to_device(self, array: np.ndarray) -> FakeGpuMat:
        return FakeGpuMat(array)

    def to_host(self, image: FakeGpuMat) -> np.ndarray:
        return image.a.copy()

    def crop(self, image: FakeGpuMat, x: int, y: int, width: int, height: int) -> FakeGpuMat:
        return FakeGpuMat(image.a[y : y + height, x : x + width])


class _Applier:
    def __init__(self, fn: Callable[..., np.ndarray]) -> None:
        self.fn = fn
        self.calls = 0

    def apply(self, image: FakeGpuMat, *stream: Any) -> FakeGpuMat:
        self.calls += 1
        return FakeGpuMat(self.fn(image.a))

    transform = apply


def _median_filter(kind: int, size: int) -> _Applier:
    def run(a: np.ndarray) -> np.ndarray:
        # filtering.cpp MedianFilter: CV_Assert(windowSize >= 3; windowSize / 2 < rows and cols)
        if size < 3 or size // 2 >= min(a.shape[:2]):
            raise cv2.error("median: window assertion")
        out = cv2.medianBlur(a, size)
        out[:, : size // 2] = out[:, a.shape[1] - size // 2 :] = 7  # the border columns are never written
        return out
    return _Applier(run)


def _morphology_filter(op: int, kind: int, kernel: np.ndarray, iterations: int = 1) -> _Applier:
    def run(a: np.ndarray) -> np.ndarray:
        rect = bool(np.all(kernel != 0))
        if rect or iterations == 1:  # OpenCV enlarges a rectangle itself; both sides pad with reflect101
            return cv2.morphologyEx(a, op, kernel, iterations=iterations, borderType=cv2.BORDER_REFLECT_101)
        out = cv2.morphologyEx(a, op, kernel, borderType=cv2.BORDER_REFLECT_101)
        for _ in range(iterations - 1):  # later passes read a zero-filled buffer around the image
            out = cv2.morphologyEx(out, op, kernel, borderType=cv2.BORDER_CONSTANT, borderValue=0)
        return out
    return _Applier(run)


def _clahe(clip: float, tiles: tuple[int, int]) -> _Applier:
    def run(a: np.ndarray) -> np.ndarray:
        if a.dtype != np.uint8:
            raise cv2.error("this build's cuda::CLAHE takes CV_8UC1 only")
        return cv2.createCLAHE(clip, tiles).apply(a)
    return _Applier(run)


def _lookup_table(table: np.ndarray) -> _Applier:
    lut_cn = 1 if table.ndim == 2 else table.shape[2]

    def run(a: np.ndarray) -> np.ndarray:
        cn = 1 if a.ndim == 2 else a.shape[2]
        if a.dtype != np.uint8 or cn not in (1, 3) or lut_cn not in (1, cn):  # lut.cu's assertions
            raise cv2.error("LookUpTable::transform assertion")
        return cv2.LUT(a, table.reshape(256, 1, lut_cn) if lut_cn > 1 else table.reshape(256))
    return _Applier(run)


def _divide(x: FakeGpuMat, y: FakeGpuMat, scale: float = 1.0, dtype: int = -1) -> FakeGpuMat:
    a, b = x.a.astype(np.float64), y.a.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(b != 0, a * scale / b, 0.0)
    if np.issubdtype(x.a.dtype, np.integer) and dtype in (-1, x.depth()):
        q = np.trunc(q) if scale == 1 else np.round(q)  # div_mat.cu: integer a / b at scale 1
        return FakeGpuMat(q.clip(*_limits(x.a.dtype)).astype(x.a.dtype))
    return FakeGpuMat(q.astype(np.float32))


SIMULATED = {
    "split": lambda m: [FakeGpuMat(p) for p in cv2.split(m.a)],
    "merge": lambda planes: FakeGpuMat(cv2.merge([p.a for p in planes])),
    "copyMakeBorder": lambda m, *sides_border, value=(0,): FakeGpuMat(cv2.copyMakeBorder(m.a, *sides_border,
                                                                                        value=value)),
    "createMedianFilter": _median_filter,
    "createMorphologyFilter": _morphology_filter,
    "createCLAHE": _clahe,
    "createLookUpTable": _lookup_table,
    "divide": _divide,
    "abs": lambda m: FakeGpuMat(np.abs(m.a.astype(np.int32)).clip(0, 32767).astype(m.a.dtype)
                                if m.a.dtype == np.int16 else np.abs(m.a)),
    "subtract": lambda x, y: FakeGpuMat(cv2.subtract(x.a, y.a)),
    "Stream_Null": lambda: None,
    "sqrt": lambda m: FakeGpuMat(np.sqrt(m.a)),
    "min": lambda x, y: FakeGpuMat(np.minimum(x.a, y.a)),
    "max": lambda x, y: FakeGpuMat(np.maximum(x.a, y.a)),
    "compare": lambda x, y, op: FakeGpuMat(cv2.compare(x.a, y.a, op)),
}


@pytest.fixture
def simulated(monkeypatch: pytest.MonkeyPatch) -> SimulatedDevice:
    for name, fn in SIMULATED.items():
        monkeypatch.setattr(cv2.cuda, name, fn, raising=False)
    monkeypatch.setattr(cuda_module, "_cuda", lambda name: SIMULATED.get(name))
    return SimulatedDevice()


def _run(backend: SimulatedDevice, primitive: str, image: np.ndarray, *args: Any) -> np.ndarray:
    return backend.download(getattr(backend, primitive)(backend.upload(image), *args))


@pytest.mark.parametrize("size", [3, 7, 15])
def test_median_pads_so_every_column_is_written(simulated: SimulatedDevice, size: int) -> None:
    image, _ = images(np.uint8, 1)
    np.testing.assert_array_equal(_run(simulated, "median", image, size), cv2.medianBlur(image, size))
    assert not simulated.counters.fallbacks


def test_median_smaller_than_3_or_than_the_image_never_reaches_cuda(simulated: SimulatedDevice) -> None:
    image, _ = images(np.uint8, 1)
    np.testing.assert_array_equal(_run(simulated, "median", image, 1), image)
    tiny = image[:3, :4].copy()
    np.testing.assert_array_equal(_run(simulated, "median", tiny, 7), cv2.medianBlur(tiny, 7))  # padded first
    assert simulated.counters.fallbacks == {"median": 1}


ELLIPSE5 = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))


@pytest.mark.parametrize("op", [cv2.MORPH_ERODE, cv2.MORPH_DILATE, cv2.MORPH_OPEN, cv2.MORPH_GRADIENT,
                                cv2.MORPH_TOPHAT, cv2.MORPH_BLACKHAT])
@pytest.mark.parametrize("border", [CONSTANT, REPLICATE, B101])
def test_morphology_iterations_of_an_ellipse_match_cv2(simulated: SimulatedDevice, op: int, border: int) -> None:
    image, _ = images(np.uint8, 1)
    expected = cv2.morphologyEx(image, op, ELLIPSE5, iterations=3, borderType=border)
    np.testing.assert_array_equal(_run(simulated, "morphology", image, op, ELLIPSE5, 3, border), expected)
    assert not simulated.counters.fallbacks


def test_morphology_borders_cuda_cannot_give_fall_back(simulated: SimulatedDevice) -> None:
    image, _ = images(np.uint8, 4)
    lopsided = np.array([[1, 1, 0], [0, 1, 0], [0, 1, 1]], np.uint8)  # not mirror-symmetric
    for kernel, border in [(lopsided, CONSTANT), (lopsided, REFLECT), (np.ones((4, 4), np.uint8), REPLICATE)]:
        expected = cv2.morphologyEx(image, cv2.MORPH_ERODE, kernel, iterations=2, borderType=border)
        np.testing.assert_array_equal(_run(simulated, "morphology", image, cv2.MORPH_ERODE, kernel, 2, border),
                                      expected)
    assert simulated.counters.fallbacks == {"morphology": 3}


def test_clahe_16_bit_falls_back_where_the_build_lacks_it(simulated: SimulatedDevice) -> None:
    eight, _ = images(np.uint8, 1)
    sixteen, _ = images(np.uint16, 1)
    np.testing.assert_array_equal(_run(simulated, "clahe", eight, 2.0, (4, 4)),
                                  cv2.createCLAHE(2.0, (4, 4)).apply(eight))
    assert not simulated.counters.fallbacks
    np.testing.assert_array_equal(_run(simulated, "clahe", sixteen, 2.0, (4, 4)),
                                  cv2.createCLAHE(2.0, (4, 4)).apply(sixteen))
    assert simulated.counters.fallbacks == {"clahe": 1}


def test_lut_with_a_per_channel_table_needs_three_channels(simulated: SimulatedDevice) -> None:
    table = np.stack([TABLE, TABLE[::-1], np.roll(TABLE, 9)], axis=-1)  # 256 x 3
    gray, _ = images(np.uint8, 1)
    colour, _ = images(np.uint8, 3)
    np.testing.assert_array_equal(_run(simulated, "lut", colour, table), cv2.LUT(colour, table.reshape(256, 1, 3)))
    assert not simulated.counters.fallbacks
    with pytest.raises(cv2.error) as on_cpu:
        CpuBackend().lut(gray, table)
    with pytest.raises(cv2.error) as routed:  # to the host, where cv2.LUT says what is wrong
        _run(simulated, "lut", gray, table)
    assert "LookUpTable::transform" not in str(routed.value) and str(routed.value) == str(on_cpu.value)


def test_integer_divide_rounds_like_cv2(simulated: SimulatedDevice) -> None:
    a, b = images(np.uint8, 1)
    out = simulated.download(simulated.divide(simulated.upload(a), simulated.upload(b)))
    np.testing.assert_array_equal(out, cv2.divide(a, b))  # cuda::divide alone would truncate
    assert not simulated.counters.fallbacks


def test_abs_convert_of_int16_stays_on_the_device(simulated: SimulatedDevice) -> None:
    derivative = cv2.Sobel(images(np.uint8, 1)[0], cv2.CV_16S, 1, 0)
    out = simulated.download(simulated.abs_convert(simulated.upload(derivative), np.dtype(np.uint8), 0.5))
    np.testing.assert_array_equal(out, cv2.convertScaleAbs(derivative, alpha=0.5))
    assert not simulated.counters.fallbacks


def test_filter_objects_are_a_bounded_lru(simulated: SimulatedDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda_module, "FILTER_ENTRIES", 4)
    image, _ = images(np.uint8, 1)
    for shift in range(10):  # one table per frame, as equalize on a video
        simulated.lut(simulated.upload(image), np.roll(TABLE, shift))
    cache = simulated._local.filters  # this thread's cache
    assert len(cache) == 4
    keys = list(cache)  # the last four tables (shifts 6..9)
    simulated.lut(simulated.upload(image), np.roll(TABLE, 6))  # a hit: no new object, moved to the end
    assert list(cache) == keys[1:] + keys[:1]


def test_every_capability_row_cites_its_source() -> None:
    for name, row in cuda_module.CAPABILITIES.items():
        assert row.source and row.functions and row.depths, name
        assert hasattr(CudaBackend, name), f"{name}: no such primitive"


def test_new_primitives_run_on_the_device_and_match_cv2(simulated: SimulatedDevice) -> None:
    """sqrt, minimum/maximum, compare/select (added to the Backend by issue 13) use cv2.cuda."""
    a, b = images(np.float32, 3)
    up = simulated.upload
    np.testing.assert_allclose(simulated.download(simulated.sqrt(up(a))), cv2.sqrt(a), rtol=1e-6)
    np.testing.assert_array_equal(simulated.download(simulated.minimum(up(a), up(b))), cv2.min(a, b))
    np.testing.assert_array_equal(simulated.download(simulated.maximum(up(a), up(b))), cv2.max(a, b))
    mask = cv2.compare(a, b, cv2.CMP_GT)
    np.testing.assert_array_equal(simulated.download(simulated.compare(up(a), up(b), cv2.CMP_GT)), mask)
    gray_mask = np.ascontiguousarray(mask[..., 0])
    for m in (mask, gray_mask):
        expected = CpuBackend().select(m, a, b)
        np.testing.assert_array_equal(simulated.download(simulated.select(up(m), up(a), up(b))), expected)
    assert not simulated.counters.fallbacks
