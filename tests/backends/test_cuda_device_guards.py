"""The cuda backend's guard and host-side bookkeeping on a stand-in ``cv2.cuda`` (issue 26's mutation triage).

tests/backends/test_cuda_device_paths.py's ``DeviceMat`` and stand-ins, plus stand-ins for the cudaarithm calls
``supports`` sends work to (threshold, copyMakeBorder, flip, multiply, divide, addWeighted) and the box filter.
Each stand-in refuses what OpenCV's CUDA function refuses (channel counts, operands of two types, narrowing
outputs), so a guard that lets such work through fails here. References are cv2 called directly on the host
arrays, or numpy; ``counters.fallbacks`` says what ran on the cpu.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from cvfilters.backends import cuda as cuda_module
from cvfilters.backends.cuda import CudaBackend
from tests.backends.test_cuda_device_paths import DEPTHS, FUNCTIONS, DeviceMat, _Applier, _image, _mat, on_stand_ins


def _one_of(mat: DeviceMat, channels: tuple[int, ...]) -> np.ndarray:
    assert mat.channels() in channels, f"this cv2.cuda call takes {channels} channels, not {mat.channels()}"
    return mat.a


def _arithmetic(op: Any) -> Any:
    """A cudaarithm binary call: operands of one type, an output depth no narrower than theirs (-1: theirs)."""
    def call(x: DeviceMat, y: DeviceMat, scale: float = 1.0, dtype: int = -1) -> DeviceMat:
        assert x.type() == y.type(), "cudaarithm takes operands of one type"
        assert isinstance(dtype, int) and (dtype < 0 or dtype >= x.depth()), "cudaarithm has no narrowing outputs"
        return _mat(op(x.a, y.a, scale=scale, dtype=dtype))
    return call


MORE: dict[str, Any] = {
    **FUNCTIONS,
    "threshold": lambda m, thresh, maxval, kind: (thresh, _mat(cv2.threshold(m.a, thresh, maxval, kind)[1])),
    "copyMakeBorder": lambda m, top, bottom, left, right, border, value=(0.0,) * 4: _mat(
        cv2.copyMakeBorder(m.a, top, bottom, left, right, border, value=value)),
    "flip": lambda m, code: _mat(cv2.flip(_one_of(m, (1, 3, 4)), code)),
    "multiply": _arithmetic(lambda x, y, scale, dtype: cv2.multiply(x, y, scale=scale, dtype=dtype)),
    "divide": _arithmetic(lambda x, y, scale, dtype: cv2.divide(x, y, scale=scale, dtype=dtype)),
    "addWeighted": lambda x, wa, y, wb, gamma, dtype=-1: _arithmetic(
        lambda p, q, scale, dtype: cv2.addWeighted(p, wa, q, wb, gamma, dtype=dtype))(x, y, dtype=dtype),
    "createBoxFilter": lambda stype, ddepth, ksize, anchor, border: _Applier(
        lambda a: cv2.boxFilter(a, ddepth, ksize, anchor=anchor, borderType=border), stype),
}


@pytest.fixture
def device(monkeypatch: pytest.MonkeyPatch) -> CudaBackend:
    """The real CudaBackend on DeviceMat images, with the stand-ins above."""
    return on_stand_ins(monkeypatch, MORE)


# ---------------------------------------------------------------- supports: channel counts and planes
@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_flip_runs_on_the_device_plane_by_plane_where_cuda_lacks_the_channel_count(
        device: CudaBackend, channels: int) -> None:
    """cuda::flip takes 1, 3, 4 channels: 2 run plane by plane (split/merge), still on the device."""
    image = _image((7, 5, channels) if channels > 1 else (7, 5), np.uint16)
    for code in (0, 1, -1):
        np.testing.assert_array_equal(device.download(device.flip(device.upload(image), code)), cv2.flip(image, code))
    assert not device.counters.fallbacks


def test_more_than_four_channels_go_to_the_cpu(device: CudaBackend) -> None:
    """Five channels: no cuda call takes them and split/merge stop at 4, so flip and threshold run on the cpu."""
    image = _image((6, 4, 5), np.uint8)
    np.testing.assert_array_equal(device.download(device.flip(device.upload(image), 1)), image[:, ::-1])
    np.testing.assert_array_equal(device.download(device.threshold(device.upload(image), 100, 255,
                                                                   cv2.THRESH_BINARY)),
                                  np.where(image > 100, 255, 0).astype(np.uint8))
    assert device.counters.fallbacks == {"flip": 1, "threshold": 1}


def test_a_build_without_split_runs_other_channel_counts_on_the_cpu(device: CudaBackend,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    image = _image((6, 4, 2), np.uint8)
    for missing in ("split", "merge"):
        monkeypatch.setattr(cuda_module, "_cuda", {k: v for k, v in MORE.items() if k != missing}.get)
        np.testing.assert_array_equal(device.download(device.flip(device.upload(image), 0)), image[::-1])
    assert device.counters.fallbacks == {"flip": 2}


def test_a_four_channel_float_box_runs_plane_by_plane(device: CudaBackend) -> None:
    """NPP's box filter takes 32FC1 only: four float channels run as four planes on the device."""
    image = _image((9, 8, 4), np.float32)
    out = device.download(device.box(device.upload(image), (3, 5), cv2.BORDER_REPLICATE))
    np.testing.assert_allclose(out, cv2.blur(image, (3, 5), borderType=cv2.BORDER_REPLICATE), rtol=0, atol=1e-6)
    assert not device.counters.fallbacks


# ---------------------------------------------------------------- supports: taps
def test_a_kernel_of_32_taps_runs_on_the_device_and_33_on_the_cpu(device: CudaBackend) -> None:
    """cuda's separable filters take kernels of at most 32 coefficients."""
    image = _image((40, 38), np.float32)
    for taps in (32, 33):
        kernel = np.full((taps, 1), 1.0 / taps, np.float32)
        out = device.download(device.sep_filter2d(device.upload(image), kernel, kernel, cv2.BORDER_REFLECT_101))
        np.testing.assert_allclose(out, cv2.sepFilter2D(image, -1, kernel, kernel,
                                                        borderType=cv2.BORDER_REFLECT_101), rtol=0, atol=1e-5)
    assert device.counters.fallbacks == {"sep_filter2d": 1}


# ---------------------------------------------------------------- pad, flip, threshold, clip
def test_pad_on_the_device_with_each_side_and_value(device: CudaBackend) -> None:
    image = _image((5, 6, 3), np.uint8)
    up, down = device.upload, device.download
    np.testing.assert_array_equal(down(device.pad(up(image), 1, 2, 3, 4, cv2.BORDER_CONSTANT, 7.0)),
                                  cv2.copyMakeBorder(image, 1, 2, 3, 4, cv2.BORDER_CONSTANT, value=(7, 7, 7, 7)))
    np.testing.assert_array_equal(down(device.pad(up(image), 2, 0, 1, 3, cv2.BORDER_CONSTANT)),
                                  cv2.copyMakeBorder(image, 2, 0, 1, 3, cv2.BORDER_CONSTANT, value=0))
    np.testing.assert_array_equal(down(device.pad(up(image), 3, 1, 0, 2, cv2.BORDER_REFLECT)),
                                  cv2.copyMakeBorder(image, 3, 1, 0, 2, cv2.BORDER_REFLECT))
    assert not device.counters.fallbacks


def test_pad_with_a_border_cuda_lacks_or_a_host_image_runs_on_the_cpu(device: CudaBackend) -> None:
    image = _image((5, 6), np.float32)
    isolated = cv2.BORDER_REFLECT_101 | cv2.BORDER_ISOLATED
    np.testing.assert_array_equal(device.download(device.pad(device.upload(image), 1, 1, 2, 2, isolated)),
                                  cv2.copyMakeBorder(image, 1, 1, 2, 2, isolated))
    np.testing.assert_array_equal(device.download(device.pad(image, 1, 0, 0, 1, cv2.BORDER_CONSTANT, 2.0)),
                                  cv2.copyMakeBorder(image, 1, 0, 0, 1, cv2.BORDER_CONSTANT, value=2.0))
    assert device.counters.fallbacks == {"pad": 2}


def test_flip_and_threshold_of_a_host_image_run_on_the_cpu(device: CudaBackend) -> None:
    image = _image((5, 6), np.uint8)
    np.testing.assert_array_equal(device.download(device.flip(image, -1)), image[::-1, ::-1])
    np.testing.assert_array_equal(device.download(device.threshold(image, 90, 200, cv2.THRESH_BINARY_INV)),
                                  np.where(image > 90, 0, 200).astype(np.uint8))
    assert device.counters.fallbacks == {"flip": 1, "threshold": 1}


def test_threshold_on_the_device(device: CudaBackend) -> None:
    image = _image((5, 6, 3), np.float32) * 10
    out = device.download(device.threshold(device.upload(image), 4.0, 9.0, cv2.THRESH_BINARY))
    np.testing.assert_array_equal(out, np.where(image > 4.0, 9.0, 0.0).astype(np.float32))
    out = device.download(device.threshold(device.upload(image), 4.0, 9.0, cv2.THRESH_TOZERO_INV))
    np.testing.assert_array_equal(out, np.where(image > 4.0, 0.0, image).astype(np.float32))
    assert not device.counters.fallbacks


def test_clip_on_the_device_and_of_other_images(device: CudaBackend) -> None:
    """Two truncations on the device for float32 (the lower one on the negated image); other depths on the cpu."""
    image = _image((6, 5, 3), np.float32) * 10 - 3
    out = device.download(device.clip(device.upload(image), -1.5, 4.25))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.clip(image, -1.5, 4.25))
    assert not device.counters.fallbacks
    np.testing.assert_array_equal(device.download(device.clip(image, 0.5, 2.0)), np.clip(image, 0.5, 2.0))
    assert device.counters.fallbacks == {"clip": 1}


# ---------------------------------------------------------------- multiply, divide, add_weighted
def _arithmetic_cases(device: CudaBackend) -> list[tuple[str, Any, Any]]:
    """(name, backend call, cv2 reference) for each binary primitive with distinct weights, scale and gamma."""
    return [
        ("multiply", lambda a, b, **kw: device.multiply(a, b, **kw), lambda a, b, **kw: cv2.multiply(a, b, **kw)),
        ("multiply", lambda a, b, **kw: device.multiply(a, b, 0.75, **kw),
         lambda a, b, **kw: cv2.multiply(a, b, scale=0.75, **kw)),
        ("divide", lambda a, b, **kw: device.divide(a, b, 3.0, **kw),
         lambda a, b, **kw: cv2.divide(a, b, scale=3.0, **kw)),
        ("add_weighted", lambda a, b, **kw: device.add_weighted(a, 0.25, b, 1.5, **kw),
         lambda a, b, **kw: cv2.addWeighted(a, 0.25, b, 1.5, 0.0, **kw)),
        ("add_weighted", lambda a, b, **kw: device.add_weighted(a, 0.5, b, -0.25, 6.0, **kw),
         lambda a, b, **kw: cv2.addWeighted(a, 0.5, b, -0.25, 6.0, **kw)),
    ]


def _check(actual: np.ndarray, expected: np.ndarray) -> None:
    """Exact for float32 within float32 precision; integers within one level (cv2 rounds from double)."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    tolerance = 1.0 if np.issubdtype(expected.dtype, np.integer) else 1e-5 * max(1.0, float(np.abs(expected).max()))
    assert float(np.abs(actual.astype(np.float64) - expected).max()) <= tolerance


@pytest.mark.parametrize(("adtype", "bdtype", "dtype"), [
    (np.uint8, np.uint8, None), (np.uint8, np.uint8, np.float32), (np.uint8, np.uint8, np.uint16),
    (np.float32, np.float32, None), (np.float32, np.float32, np.uint8), (np.uint8, np.float32, np.float32),
    (np.uint16, np.uint8, np.int16)])
def test_arithmetic_on_the_device_in_each_output_depth(device: CudaBackend, adtype: type, bdtype: type,
                                                        dtype: type | None) -> None:
    """Same or mixed operand types, widening and narrowing outputs: cv2's result, all on the device."""
    a, b = _image((6, 5, 3), adtype), _image((6, 5, 3), bdtype, 2)
    b = (np.maximum(b, 1) if np.issubdtype(bdtype, np.integer) else b + 0.5).astype(bdtype)  # no zero divisors
    kw = {} if dtype is None else {"dtype": DEPTHS[np.dtype(dtype)]}
    for _, run, reference in _arithmetic_cases(device):
        out = device.download(run(device.upload(a), device.upload(b), **({} if dtype is None else {"dtype": dtype})))
        _check(out, reference(a, b, **kw))
    assert not device.counters.fallbacks


def test_arithmetic_the_device_cannot_take_runs_on_the_cpu(device: CudaBackend) -> None:
    """A host operand (either side) and mixed types without a dtype run on the cpu with the caller's dtype;
    operands of two channel counts run there too."""
    a, b = _image((6, 5, 3), np.uint8), _image((6, 5, 3), np.uint8, 2) + 1
    up = device.upload
    for x, y in ((a, up(b)), (up(a), b)):
        _check(device.download(device.multiply(x, y, 0.5, np.float32)), cv2.multiply(a, b, scale=0.5,
                                                                                     dtype=cv2.CV_32F))
        _check(device.download(device.divide(x, y, 2.0, np.float32)), cv2.divide(a, b, scale=2.0, dtype=cv2.CV_32F))
        _check(device.download(device.add_weighted(x, 0.5, y, 2.0, 1.0, np.float32)),
               cv2.addWeighted(a, 0.5, b, 2.0, 1.0, dtype=cv2.CV_32F))
    assert device.counters.fallbacks == {"multiply": 2, "divide": 2, "add_weighted": 2}
    wide = b.astype(np.uint16) * 300  # two types, no dtype: the cpu's (cv2 takes them in OpenCV 5)
    _check(device.download(device.multiply(up(a), up(wide))), cv2.multiply(a, wide))
    assert device.counters.fallbacks["multiply"] == 3
    plane = b[..., 0]  # two channel counts: the cpu's (this cv2 takes a one-channel operand)
    _check(device.download(device.divide(up(a), up(plane), 1.0, np.float32)), cv2.divide(a, plane, dtype=cv2.CV_32F))
    assert device.counters.fallbacks == {"multiply": 3, "divide": 3, "add_weighted": 2}


# ---------------------------------------------------------------- split and merge
def test_split_and_merge_of_one_to_four_planes_on_the_device(device: CudaBackend) -> None:
    image = _image((5, 4, 4), np.uint16)
    planes = device.split(device.upload(image))
    assert all(device.is_native(p) for p in planes)
    for p, c in zip(planes, range(4), strict=True):
        np.testing.assert_array_equal(device.download(p), image[..., c])
    for n in (1, 2, 4):
        np.testing.assert_array_equal(device.download(device.merge(planes[:n])).reshape(5, 4, n), image[..., :n])
    assert not device.counters.fallbacks


def test_merge_cuda_cannot_take_runs_on_the_cpu(device: CudaBackend) -> None:
    """Five planes, a host plane, planes of two depths: cv2.merge on the cpu; a host image's split too."""
    image = _image((5, 4, 5), np.uint8)
    planes = [device.upload(np.ascontiguousarray(image[..., c])) for c in range(5)]
    np.testing.assert_array_equal(device.download(device.merge(planes)), image)
    np.testing.assert_array_equal(device.download(device.merge([image[..., 0], planes[1]])), image[..., :2])
    with pytest.raises(cv2.error):  # two depths: cv2.merge refuses them
        device.merge([planes[0], device.upload(image[..., 1].astype(np.uint16))])
    assert [device.download(p).tolist() for p in device.split(image[..., :3])] == [
        image[..., c].tolist() for c in range(3)]
    assert device.counters.fallbacks == {"merge": 2, "split": 1}


# ---------------------------------------------------------------- gaussian's own guard and sizes
GAUSSIAN_CASES: list[tuple[type, tuple[int, int], float, int, bool]] = [
    (np.uint8, (0, 0), 1.3, cv2.BORDER_REFLECT_101, True),  # sized from sigma by the 8-bit rule
    (np.float32, (0, 0), 1.3, cv2.BORDER_REFLECT_101, True),  # by the float rule
    (np.float32, (0, 0), 0.8, cv2.BORDER_REPLICATE, True),
    (np.float32, (5, 5), 0.0, cv2.BORDER_REPLICATE, True),  # sigma from the size
    (np.float32, (1, 5), 1.0, cv2.BORDER_REFLECT, True),
    (np.float32, (1, 1), 0.0, cv2.BORDER_REFLECT, True),
    (np.uint8, (3, 5), 1.0, cv2.BORDER_REFLECT_101, True),
    (np.float32, (0, 0), 10.0, cv2.BORDER_REFLECT_101, False),  # 61 taps: more than cuda's 32
    (np.float32, (3, 3), 1.0, cv2.BORDER_REFLECT_101 | cv2.BORDER_ISOLATED, False),  # a border cuda lacks
]


@pytest.mark.parametrize(("dtype", "ksize", "sigma", "border", "on_device"), GAUSSIAN_CASES)
def test_gaussian_sizes_and_falls_back_as_cv2_sizes_it(device: CudaBackend, dtype: type, ksize: tuple[int, int],
                                                         sigma: float, border: int, on_device: bool) -> None:
    """cv2.GaussianBlur's result, exact (the stand-in is cv2's filter of the size the backend chose), on the
    device where cuda takes it."""
    image = _image((40, 36), dtype)
    expected = cv2.GaussianBlur(image, ksize, sigma, borderType=border)
    np.testing.assert_array_equal(device.download(device.gaussian(device.upload(image), ksize, sigma, border)),
                                  expected)
    np.testing.assert_array_equal(device.download(device.gaussian(image, ksize, sigma, border)), expected)  # cpu
    assert device.counters.fallbacks == {"gaussian": 1 if on_device else 2}


def test_gaussian_without_size_or_sigma_is_refused_as_cv2_refuses_it(device: CudaBackend) -> None:
    image = _image((9, 8), np.float32)
    with pytest.raises(cv2.error):
        cv2.GaussianBlur(image, (0, 0), 0.0)
    with pytest.raises(cv2.error):
        device.gaussian(device.upload(image), (0, 0), 0.0, cv2.BORDER_REFLECT_101)
