"""run_image, info_of, to_backend, from_backend and device_name (cvfilters/backends/execution.py).

Fast (tiny arrays, bodies written here): each body records what it received and does its work
with numpy or cv2 on a host copy (the backend's uncounted ``to_host``/``to_device``), so the
counters hold only run_image's own transfers. References are numpy slicing, ``np.dstack`` and
``cv2.cvtColor`` called directly, and the counts a run must make (one upload and one download
for a host image on a device backend, none on cpu or for a device image on its own backend);
every comparison is exact. Device cases run on each device backend of the matrix (opencl on
pocl here: ``OPENCV_OPENCL_DEVICE=:CPU:``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, cast

import cv2
import numpy as np
import pytest

import cvfilters.backends as backends
from cvfilters.backends import Availability, Counters, get_backend
from cvfilters.backends.execution import device_name, from_backend, info_of, run_image, to_backend
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.defaults import active_channel_order, get_defaults, set_defaults
from cvfilters.core.errors import InvalidImageError

NATIVE: dict[str, Any] = {"cpu": np.ndarray, "opencl": cv2.UMat, "cuda": cv2.cuda.GpuMat}
RNG = np.random.default_rng(26)
LAYOUT = "is not H x W or H x W x C with C in 1, 2 (gray + alpha), 3, 4"


def image(shape: tuple[int, ...], dtype: type = np.uint8) -> np.ndarray:
    """Distinct random values (a swapped or dropped channel shows)."""
    if np.dtype(dtype).kind == "f":
        return RNG.random(shape).astype(dtype)
    return RNG.integers(0, np.iinfo(dtype).max, shape, endpoint=True).astype(dtype)


class Recorder:
    """A body applying ``fn`` (numpy in, numpy out) on a host copy; records what it was given."""

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray] = lambda a: a,
                 info: Callable[[ImageInfo], ImageInfo] = lambda i: i) -> None:
        self.fn, self.info = fn, info
        self.seen: list[tuple[Context, Any, np.ndarray, str]] = []

    def __call__(self, ctx: Context, native: Any) -> tuple[Any, ImageInfo]:
        be = ctx.backend
        host = np.array(be.to_host(native))  # a copy: the cpu backend's to_host is the image itself
        self.seen.append((ctx, native, host, active_channel_order()))
        return be.to_device(np.ascontiguousarray(self.fn(host.copy()))), self.info(ctx.info)


def counted(counters: Counters) -> tuple[int, int]:
    return counters.uploads, counters.downloads


# ------------------------------------------------------------------ info_of


@pytest.mark.parametrize(("shape", "dtype", "channels"), [
    ((2, 3), np.uint8, 1), ((2, 3, 1), np.uint16, 1), ((4, 5, 3), np.float32, 3), ((1, 1, 4), np.uint8, 4),
    ((3, 1, 3), np.uint16, 3),
])
def test_info_of_an_array_and_a_umat(shape: tuple[int, ...], dtype: type, channels: int) -> None:
    array: np.ndarray = np.zeros(shape, dtype)
    want = ImageInfo(shape[0], shape[1], channels, np.dtype(dtype))
    assert info_of(array) == want
    assert info_of(cv2.UMat(array)) == want  # a UMat keeps no trailing axis of 1: still 1 channel


@pytest.mark.parametrize(("array", "message"), [
    (np.zeros((4,), np.uint8), f"image shape (4,) {LAYOUT}"),
    (np.zeros((2, 2, 2, 3), np.uint8), f"image shape (2, 2, 2, 3) {LAYOUT}"),
    (np.zeros((4, 4, 2), np.uint8), f"image shape (4, 4, 2) {LAYOUT}"),
    (np.zeros((4, 4, 5), np.float32), f"image shape (4, 4, 5) {LAYOUT}"),
    (np.zeros((4, 4, 0), np.uint8), f"image shape (4, 4, 0) {LAYOUT}"),
    (np.zeros((4, 4), np.int32), "image dtype int32 is not supported (use uint8, uint16 or float32)"),
    (np.zeros((4, 4, 3), np.float64), "image dtype float64 is not supported (use uint8, uint16 or float32)"),
    (np.zeros((4, 4), np.int16), "image dtype int16 is not supported (use uint8, uint16 or float32)"),
    (np.zeros((0, 4), np.uint8), "image is empty (0 pixels)"),
    (np.zeros((3, 0, 3), np.float32), "image is empty (0 pixels)"),
    (np.zeros((0, 0), np.uint16), "image is empty (0 pixels)"),
])
def test_info_of_refuses(array: np.ndarray, message: str) -> None:
    with pytest.raises(InvalidImageError) as caught:
        info_of(array)
    assert str(caught.value) == message


def test_info_of_refuses_a_umat_by_what_it_holds_and_other_types() -> None:
    with pytest.raises(InvalidImageError, match=r"^image dtype int32 is not supported \(use uint8"):
        info_of(cv2.UMat(np.zeros((3, 3), np.int32)))
    with pytest.raises(InvalidImageError) as caught:
        info_of(cast(Any, [[1, 2]]))
    assert str(caught.value) == "expected a numpy array, cv2.UMat or cv2.cuda.GpuMat, not list"


class StandInGpuMat:
    """Answers ``size``/``channels``/``depth`` for ``array`` as OpenCV's GpuMat does (no CUDA here; a
    Python subclass of cv2.cuda.GpuMat crashes the interpreter when freed)."""

    DEPTHS = {np.dtype(np.uint8): cv2.CV_8U, np.dtype(np.uint16): cv2.CV_16U, np.dtype(np.float32): cv2.CV_32F,
              np.dtype(np.float64): cv2.CV_64F, np.dtype(np.int16): cv2.CV_16S}

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def size(self) -> tuple[int, int]:
        return self.array.shape[1], self.array.shape[0]  # cv::Size: width first

    def channels(self) -> int:
        return 1 if self.array.ndim == 2 else self.array.shape[2]

    def depth(self) -> int:
        return self.DEPTHS[self.array.dtype]


def gpumat(array: np.ndarray) -> Any:
    return StandInGpuMat(array)


def test_info_of_a_gpumat(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidImageError) as caught:
        info_of(cv2.cuda.GpuMat())  # a real one, empty: no CUDA needed to make it
    assert str(caught.value) == "image is empty (0 pixels)"
    monkeypatch.setattr(cv2.cuda, "GpuMat", StandInGpuMat)
    assert info_of(gpumat(np.zeros((3, 5, 4), np.uint16))) == ImageInfo(3, 5, 4, np.dtype(np.uint16))
    assert info_of(gpumat(np.zeros((2, 7), np.float32))) == ImageInfo(2, 7, 1, np.dtype(np.float32))
    assert info_of(gpumat(np.zeros((6, 1, 3), np.uint8))) == ImageInfo(6, 1, 3, np.dtype(np.uint8))
    for depth in (np.float64, np.int16):  # depths cvfilters does not run: refused (named int8)
        with pytest.raises(InvalidImageError) as caught:
            info_of(gpumat(np.zeros((2, 2), depth)))
        assert str(caught.value) == "image dtype int8 is not supported (use uint8, uint16 or float32)"
    with pytest.raises(InvalidImageError) as caught:
        info_of(gpumat(np.zeros((2, 2, 5), np.uint8)))
    assert str(caught.value) == f"image shape ? {LAYOUT}"  # a GpuMat has no shape attribute


# ------------------------------------------------------------------ run_image, host images


@pytest.mark.parametrize("shape", [(3, 5), (3, 5, 1), (3, 5, 3), (2, 4, 4)])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_run_restores_kind_dtype_and_shape(backend: str, shape: tuple[int, ...], dtype: type) -> None:
    array = image(shape, dtype)
    body = Recorder(lambda a: a[..., 0] if a.ndim == 3 and a.shape[2] == 1 else a)  # cv2 drops a trailing 1
    out, be, counters = run_image(array, backend, body)
    assert be is get_backend(backend)
    assert isinstance(out, np.ndarray) and out.flags.c_contiguous
    assert out.dtype == dtype and out.shape == shape
    np.testing.assert_array_equal(out, array)
    (ctx, native, seen, order), = body.seen
    assert ctx.backend is be and isinstance(native, NATIVE[backend])
    assert ctx.info == ImageInfo(shape[0], shape[1], 1 if len(shape) == 2 else shape[2], np.dtype(dtype))
    np.testing.assert_array_equal(seen.reshape(shape), array)
    assert order == "bgr"
    assert counted(counters) == ((0, 0) if backend == "cpu" else (1, 1))


def test_counters_are_those_of_the_run(backend: str) -> None:
    array = image((4, 4, 3))
    for _ in range(2):  # the second run's counters are its own, not the backend's running total
        assert counted(run_image(array, backend, Recorder())[2]) == ((0, 0) if backend == "cpu" else (1, 1))


def test_a_new_spec_keeps_the_body_shape_and_the_result_is_contiguous(backend: str) -> None:
    array = image((4, 6, 1), np.uint16)
    body = Recorder(lambda a: a.reshape(4, 6)[:, ::2], lambda i: i.with_(width=3))
    out, _, _ = run_image(array, backend, body)
    assert out.shape == (4, 3) and out.flags.c_contiguous  # the spec changed: no reshape to the input's
    np.testing.assert_array_equal(out, array[:, ::2, 0])

    def view(ctx: Context, native: Any) -> tuple[Any, ImageInfo]:
        return (native[:, ::-1] if isinstance(native, np.ndarray) else native), ctx.info

    gray = image((3, 4))
    flipped, _, _ = run_image(gray, "cpu", view)  # the body's result is a view with negative strides
    assert flipped.flags.c_contiguous
    np.testing.assert_array_equal(flipped, gray[:, ::-1])


@pytest.mark.parametrize("channels", [3, 4])
def test_rgb_is_swapped_around_the_body(backend: str, channels: int) -> None:
    """The body sees BGR(A) whatever the caller's order: its channel 0 is blue."""
    array = image((3, 5, channels))
    for order, blue in (("rgb", 2), ("bgr", 0)):
        body = Recorder(lambda a: np.dstack([np.zeros_like(a[..., 0]), a[..., 1:]]))  # blue := 0
        out, _, counters = run_image(array, backend, body, channel_order=order)
        (_, _, seen, active), = body.seen
        swapped = [2, 1, 0, 3][:channels] if order == "rgb" else list(range(channels))
        np.testing.assert_array_equal(seen, array[..., swapped])
        want = array.copy()
        want[..., blue] = 0
        np.testing.assert_array_equal(out, want)
        assert active == order
        assert counted(counters) == ((0, 0) if backend == "cpu" else (1, 1))
    assert active_channel_order() == get_defaults()["channel_order"]


def test_the_process_default_order_applies(backend: str) -> None:
    array = image((2, 3, 3))
    before = get_defaults()["channel_order"]
    set_defaults(channel_order="rgb")
    try:
        body = Recorder()
        run_image(array, backend, body)
    finally:
        set_defaults(channel_order=before)  # type: ignore[arg-type]
    np.testing.assert_array_equal(body.seen[0][2], array[..., ::-1])


def test_rgb_swap_back_follows_the_result_channels(backend: str) -> None:
    rgb, rgba, gray = image((3, 4, 3)), image((3, 4, 4)), image((3, 4))
    to_gray = Recorder(lambda a: cv2.cvtColor(a, cv2.COLOR_BGR2GRAY), lambda i: i.with_(channels=1))
    out, _, _ = run_image(rgb, backend, to_gray, channel_order="rgb")
    np.testing.assert_array_equal(out, cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))
    no_alpha = Recorder(lambda a: a[..., :3], lambda i: i.with_(channels=3))
    out, _, _ = run_image(rgba, backend, no_alpha, channel_order="rgb")
    np.testing.assert_array_equal(out, rgba[..., :3])
    tint = Recorder(lambda a: np.dstack([a, np.zeros_like(a), 255 - a]), lambda i: i.with_(channels=3))  # B, G, R
    out, _, _ = run_image(gray, backend, tint, channel_order="rgb")
    np.testing.assert_array_equal(out, np.dstack([255 - gray, np.zeros_like(gray), gray]))  # R, G, B


def test_chw_layout_and_float64_cross_back(backend: str) -> None:
    chw = image((3, 4, 5), np.float32).astype(np.float64)
    body = Recorder()
    out, _, _ = run_image(chw, backend, body, layout="chw")
    assert body.seen[0][0].info == ImageInfo(4, 5, 3, np.dtype(np.float32))
    assert out.shape == (3, 4, 5) and out.dtype == np.float64
    np.testing.assert_array_equal(out, chw)


@pytest.mark.parametrize(("array", "message"), [
    (np.zeros((4, 4, 5), np.uint8), f"image shape (4, 4, 5) {LAYOUT}"),
    (np.zeros((0, 4, 3), np.uint16), "image is empty (0 pixels)"),
])
def test_run_refuses_before_the_body(backend: str, array: np.ndarray, message: str) -> None:
    body = Recorder()
    with pytest.raises(InvalidImageError) as caught:
        run_image(array, backend, body)
    assert str(caught.value) == message and body.seen == []


# ------------------------------------------------------------------ device images and auto


def _device_image(name: str, array: np.ndarray) -> Any:
    return get_backend(name).to_device(array)  # not counted


def test_a_device_image_stays_on_its_backend(device_backend: str) -> None:
    array = image((3, 5, 3))
    native = _device_image(device_backend, array)
    body = Recorder(lambda a: 255 - a)
    out, be, counters = run_image(native, device_backend, body)
    assert be is get_backend(device_backend) and isinstance(out, NATIVE[device_backend])
    assert body.seen[0][1] is native  # handed over as it is
    assert counted(counters) == (0, 0)
    np.testing.assert_array_equal(be.to_host(out), 255 - array)
    auto, be, _ = run_image(native, "auto", Recorder())  # auto runs a device image where it lives
    assert be.name == device_backend and isinstance(auto, NATIVE[device_backend])


def test_a_device_image_on_cpu_comes_back_as_a_device_image(device_backend: str) -> None:
    array = image((4, 3, 4), np.uint16)
    native = _device_image(device_backend, array)
    device = get_backend(device_backend)
    before = device.counters.snapshot()
    body = Recorder(lambda a: a[::-1])
    out, be, counters = run_image(native, "cpu", body, channel_order="rgb")
    assert be.name == "cpu" and isinstance(body.seen[0][1], np.ndarray) and counted(counters) == (0, 0)
    np.testing.assert_array_equal(body.seen[0][2], array[..., [2, 1, 0, 3]])
    assert isinstance(out, NATIVE[device_backend])
    np.testing.assert_array_equal(device.to_host(out), array[::-1])
    assert counted(device.counters.since(before)) == (1, 1)  # one copy to the host and one back


def test_to_and_from_backend(device_backend: str) -> None:
    array = image((2, 3, 1))
    cpu, device = get_backend("cpu"), get_backend(device_backend)
    assert to_backend(array, cpu) is array
    native = cast(Any, to_backend(array, device))
    assert isinstance(native, NATIVE[device_backend])
    np.testing.assert_array_equal(device.to_host(native), array[..., 0])
    host = cast(Any, to_backend(native, cpu))
    assert isinstance(host, np.ndarray) and host.shape == (2, 3)
    back = from_backend(native, device, array, reshape=True)
    assert isinstance(back, np.ndarray) and back.shape == (2, 3, 1)
    assert from_backend(native, device, array, reshape=False).shape == (2, 3)
    assert from_backend(native, device, native, reshape=True) is native
    assert isinstance(from_backend(host, cpu, native, reshape=True), NATIVE[device_backend])
    assert to_backend(native, device) is native  # (last: mypy narrows native by `is`)


@pytest.fixture
def device_as_gpu(device_backend: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """``auto`` would pick ``device_backend`` for a large image (pocl answers as the GPU it is not)."""
    if device_backend == "opencl":
        monkeypatch.setitem(backends._PROBED, "cuda", Availability("cuda", False, reason="stand-in"))
        real = backends.availability("opencl")
        monkeypatch.setitem(backends._PROBED, "opencl", Availability("opencl", True, real.device, is_gpu=True))
    return device_backend


def test_point_only_work_stays_on_cpu_under_auto(device_as_gpu: str) -> None:
    array = np.zeros((512, 512), np.uint8)  # AUTO_MIN_PIXELS
    out, be, counters = run_image(array, "auto", Recorder())
    assert be.name == device_as_gpu and counted(counters) == (1, 1) and isinstance(out, np.ndarray)
    _, be, counters = run_image(array, "auto", Recorder(), point_only=True)
    assert be.name == "cpu" and counted(counters) == (0, 0)
    _, be, _ = run_image(array[:511], "auto", Recorder())
    assert be.name == "cpu"


def test_device_name(backend: str) -> None:
    name = device_name(get_backend(backend))
    if backend == "cpu":
        assert name.startswith(f"{os.cpu_count()} cores, ")
    elif backend == "opencl":
        assert name.startswith(cv2.ocl.Device.getDefault().name())
    else:
        assert name
