"""The cuda backend's resize and remap on a stand-in ``cv2.cuda`` (issue 26's mutation triage).

tests/backends/test_cuda_device_paths.py's ``DeviceMat`` and stand-ins, plus ``cv2.cuda.resize`` and
``cv2.cuda.remap`` written from opencv_contrib's cudawarping sources (cited at each rule they follow): the
depths and channel counts their function tables hold, the maps and borders ``remap`` asserts, INTER_AREA
turned into INTER_LINEAR where a side does not shrink, nearest sampling by truncation, and the Python
binding's reading of None as an argument's default. Values come from ``cv2.resize``/``cv2.remap`` on the host
arrays. References are cv2 called directly; ``counters`` say what ran on the cpu and what was uploaded.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from cvfilters.backends import cuda as cuda_module
from cvfilters.backends.cuda import CudaBackend
from tests.backends.test_cuda_device_guards import _check, _one_of
from tests.backends.test_cuda_device_paths import FUNCTIONS, DeviceMat, _image, _mat, on_stand_ins

NEAREST, LINEAR, CUBIC, AREA = cv2.INTER_NEAREST, cv2.INTER_LINEAR, cv2.INTER_CUBIC, cv2.INTER_AREA
# cudawarping remap.cpp / resize.cpp: funcs[depth][channels - 1] holds 8U, 16U, 16S, 32F of 1, 3, 4 channels
WARP_DEPTHS = (cv2.CV_8U, cv2.CV_16U, cv2.CV_16S, cv2.CV_32F)
# remap.cpp: CV_Assert(borderMode == BORDER_REFLECT101 || ... REPLICATE || CONSTANT || REFLECT || WRAP)
REMAP_BORDERS = (cv2.BORDER_REFLECT_101, cv2.BORDER_REPLICATE, cv2.BORDER_CONSTANT, cv2.BORDER_REFLECT,
                 cv2.BORDER_WRAP)


def _warpable(src: Any) -> np.ndarray:
    """The source array, where resize and remap have a function for its type (else their error)."""
    assert isinstance(src, DeviceMat), "cv2.cuda's warps take a GpuMat source"
    assert src.depth() in WARP_DEPTHS, "Unsupported input type"
    return _one_of(src, (1, 3, 4))


def _resize(src: Any, dsize: Any, dst: Any = None, fx: float = 0.0, fy: float = 0.0,
            interpolation: int | None = LINEAR, stream: Any = None) -> DeviceMat:
    """cuda::resize(src, dsize[, dst[, fx[, fy[, interpolation[, stream]]]]]), interpolation INTER_LINEAR by default.

    cudawarping/src/cuda/resize.cu: "change to linear if area interpolation upscaling": INTER_AREA runs as
    INTER_LINEAR unless both sides shrink (``fx, fy`` there are source / destination, ``<= 1`` turns it).
    """
    a = _warpable(src)
    assert dst is None and stream is None and (fx, fy) == (0.0, 0.0)
    interpolation = LINEAR if interpolation is None else interpolation  # the binding: None is the default
    assert interpolation in (NEAREST, LINEAR, CUBIC, AREA, cv2.INTER_LANCZOS4)  # resize.cpp's CV_Assert
    width, height = dsize  # None: no size and no scale, which resize.cpp's CV_Assert refuses
    if interpolation == AREA and (width >= a.shape[1] or height >= a.shape[0]):
        interpolation = LINEAR
    return _mat(cv2.resize(a, (width, height), interpolation=interpolation))


def _remap(src: Any, xmap: Any, ymap: Any, interpolation: int | None, dst: Any = None,
           borderMode: int | None = cv2.BORDER_CONSTANT, borderValue: Any = None,
           stream: Any = None) -> DeviceMat:
    """cuda::remap(src, xmap, ymap, interpolation[, dst[, borderMode[, borderValue[, stream]]]]) (remap.cpp).

    Asserts maps of CV_32FC1 and one size, INTER_NEAREST/LINEAR/CUBIC and the five borders. None is what the
    binding makes of it: the default (BORDER_CONSTANT, a zero Scalar), 0 (INTER_NEAREST) for the required
    interpolation; a borderValue longer than 4 is refused (cv2.remap's binding, the same converter, says so).
    Nearest samples at ``__float2int_rz`` (opencv2/core/cuda/filters.hpp PointFilter): truncated, where
    cv2.remap rounds.
    """
    a = _warpable(src)
    assert dst is None and stream is None
    for m in (xmap, ymap):
        assert isinstance(m, DeviceMat) and m.type() == cv2.CV_32FC1, "xmap.type() == CV_32F && ymap.type() == CV_32F"
    assert xmap.size() == ymap.size()
    interpolation = NEAREST if interpolation is None else interpolation
    border = cv2.BORDER_CONSTANT if borderMode is None else borderMode
    assert interpolation in (NEAREST, LINEAR, CUBIC) and border in REMAP_BORDERS
    x, y = (np.trunc(m.a) if interpolation == NEAREST else m.a for m in (xmap, ymap))
    return _mat(cv2.remap(a, x, y, interpolation, borderMode=border, borderValue=borderValue))


WARPS: dict[str, Any] = {**FUNCTIONS, "resize": _resize, "remap": _remap}


@pytest.fixture
def device(monkeypatch: pytest.MonkeyPatch) -> CudaBackend:
    """The real CudaBackend on DeviceMat images, with cv2.cuda's resize and remap stood in."""
    return on_stand_ins(monkeypatch, WARPS)


def _shaped(height: int, width: int, channels: int, dtype: type, seed: int = 1) -> np.ndarray:
    return _image((height, width) if channels == 1 else (height, width, channels), dtype, seed)


# ---------------------------------------------------------------- resize through remap (nearest, linear)
# sizes (width, height) whose sampling points fall on whole, half and quarter pixels
RESIZES = [((8, 12), (16, 3)), ((16, 12), (4, 3)), ((12, 8), (3, 16))]


@pytest.mark.parametrize(("src", "dst"), RESIZES)
@pytest.mark.parametrize("interpolation", [NEAREST, LINEAR])
@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_nearest_and_linear_resize_run_on_the_device_as_cv2_resizes(
        device: CudaBackend, src: tuple[int, int], dst: tuple[int, int], interpolation: int, channels: int,
        dtype: type) -> None:
    """cv2.resize's result (within one level or float32 precision) from cuda's remap with the backend's maps,
    2 channels plane by plane; wrong maps, a swapped axis, area sampling of a shrink or nearest sampled at linear
    centres all move pixels."""
    image = _shaped(src[1], src[0], channels, dtype)
    out = device.download(device.resize(device.upload(image), dst, interpolation))
    _check(out, cv2.resize(image, dst, interpolation=interpolation))
    assert not device.counters.fallbacks


def test_resize_maps_are_built_once_per_size_and_interpolation(device: CudaBackend) -> None:
    """Two maps per (interpolation, source size, destination size), reused: a key shared between the axes
    would hand the x map to the y axis."""
    image = _shaped(12, 8, 3, np.float32)
    for _ in range(2):
        _check(device.download(device.resize(device.upload(image), (16, 3), LINEAR)),
               cv2.resize(image, (16, 3), interpolation=LINEAR))
    assert device.counters.constants == 2
    _check(device.download(device.resize(device.upload(image), (16, 3), NEAREST)),
           cv2.resize(image, (16, 3), interpolation=NEAREST))
    assert device.counters.constants == 4
    assert not device.counters.fallbacks


# ---------------------------------------------------------------- INTER_AREA and other interpolations
@pytest.mark.parametrize(("src", "dst"), [((16, 12), (4, 3)), ((15, 14), (4, 5))])
@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_area_shrink_runs_on_the_device_with_cuda_resize(device: CudaBackend, src: tuple[int, int],
                                                         dst: tuple[int, int], channels: int, dtype: type) -> None:
    """Both sides shrinking: cuda::resize's INTER_AREA (cv2.resize's here), 2 channels plane by plane; another
    interpolation (the binding's INTER_LINEAR default) averages other pixels."""
    image = _shaped(src[1], src[0], channels, dtype)
    out = device.download(device.resize(device.upload(image), dst, AREA))
    np.testing.assert_array_equal(out, cv2.resize(image, dst, interpolation=AREA))
    assert not device.counters.fallbacks


@pytest.mark.parametrize(("src", "dst", "interpolation"), [
    ((8, 16), (8, 4), AREA),  # the width kept: cuda::resize would run INTER_LINEAR
    ((16, 8), (4, 8), AREA),  # the height kept
    ((8, 6), (16, 12), AREA),  # enlarged
    ((8, 6), (4, 12), AREA),  # one side enlarged
    ((8, 6), (20, 15), CUBIC),  # cuda's cubic is not cv2's
    ((16, 12), (5, 4), cv2.INTER_LANCZOS4),
])
def test_what_cuda_resizes_otherwise_than_cv2_runs_on_the_cpu(device: CudaBackend, src: tuple[int, int],
                                                                dst: tuple[int, int], interpolation: int) -> None:
    """cv2.resize's exact result, counted as a fallback; INTER_AREA where a side does not shrink, which
    cuda::resize samples as INTER_LINEAR, included."""
    image = _shaped(src[1], src[0], 3, np.uint8)
    out = device.download(device.resize(device.upload(image), dst, interpolation))
    np.testing.assert_array_equal(out, cv2.resize(image, dst, interpolation=interpolation))
    assert device.counters.fallbacks == {"resize": 1}


def test_a_build_without_cuda_resize_shrinks_by_area_on_the_cpu(device: CudaBackend,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Builds differ in what they hold: without cv2.cuda.resize, INTER_AREA runs on the cpu; remap still resizes."""
    monkeypatch.delattr(cv2.cuda, "resize")
    monkeypatch.setattr(cuda_module, "_cuda", {k: v for k, v in WARPS.items() if k != "resize"}.get)
    image = _shaped(12, 16, 3, np.uint8)
    np.testing.assert_array_equal(device.download(device.resize(device.upload(image), (4, 3), AREA)),
                                  cv2.resize(image, (4, 3), interpolation=AREA))
    assert device.counters.fallbacks == {"resize": 1}
    _check(device.download(device.resize(device.upload(image), (4, 3), LINEAR)),
           cv2.resize(image, (4, 3), interpolation=LINEAR))
    assert device.counters.fallbacks == {"resize": 1}


@pytest.mark.parametrize("interpolation", [NEAREST, LINEAR, AREA])
def test_resize_of_images_cuda_cannot_take_runs_on_the_cpu(device: CudaBackend, interpolation: int) -> None:
    """A host image, and five channels (no cuda warp takes them, nor split/merge): cv2.resize's result on the cpu."""
    host, five = _shaped(12, 16, 3, np.uint8), _shaped(12, 16, 5, np.uint8)
    for image, given in ((host, host), (five, device.upload(five))):
        np.testing.assert_array_equal(device.download(device.resize(given, (4, 3), interpolation)),
                                      cv2.resize(image, (4, 3), interpolation=interpolation))
    assert device.counters.fallbacks == {"resize": 2}


# ---------------------------------------------------------------- remap
def _maps(height: int, width: int, src_height: int, src_width: int) -> tuple[np.ndarray, np.ndarray]:
    """Float32 maps sampling between pixels and up to 3 pixels outside the source on every side."""
    x = np.linspace(-3.0, src_width + 2.0, width, dtype=np.float32)
    y = np.linspace(-3.0, src_height + 2.0, height, dtype=np.float32)
    return np.tile(x, (height, 1)) + 0.125, np.tile(y[:, None], (1, width)) + 0.375


@pytest.mark.parametrize("border", REMAP_BORDERS)
@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_remap_runs_on_the_device_with_host_or_device_maps(device: CudaBackend, border: int, channels: int,
                                                           dtype: type) -> None:
    """cv2.remap's result (within one level or float32 precision: 2 channels run plane by plane) with the
    caller's border and constant value; host maps
    uploaded on each call (counted), device maps used as they are."""
    image = _shaped(10, 12, channels, dtype)
    map_x, map_y = _maps(9, 17, 10, 12)
    expected = cv2.remap(image, map_x, map_y, LINEAR, borderMode=border, borderValue=(7.0,) * 4)
    up = device.upload(image)
    device_x, device_y = device.upload(map_x), device.upload(map_y)
    uploads = device.counters.uploads
    _check(device.download(device.remap(up, map_x, map_y, LINEAR, border, 7.0)), expected)
    assert device.counters.uploads == uploads + 2
    _check(device.download(device.remap(up, device_x, device_y, LINEAR, border, 7.0)), expected)
    assert device.counters.uploads == uploads + 2
    assert not device.counters.fallbacks


def test_remap_pads_with_zero_unless_given_a_value(device: CudaBackend) -> None:
    """The constant border's default value is 0, as cv2.remap's."""
    image = _shaped(10, 12, 3, np.float32) + 1
    map_x, map_y = _maps(9, 17, 10, 12)
    out = device.download(device.remap(device.upload(image), map_x, map_y, LINEAR, cv2.BORDER_CONSTANT))
    np.testing.assert_array_equal(out, cv2.remap(image, map_x, map_y, LINEAR, borderMode=cv2.BORDER_CONSTANT))
    assert not device.counters.fallbacks


def test_remap_cuda_cannot_take_runs_on_the_cpu(device: CudaBackend) -> None:
    """cv2.remap's result on the cpu for: nearest and cubic (cuda truncates where cv2 rounds; its cubic is
    another kernel), a border cuda lacks, a host image, five channels."""
    image = _shaped(10, 12, 3, np.uint8)
    map_x, map_y = _maps(9, 17, 10, 12)
    up = device.upload(image)
    inside_x, inside_y = np.clip(map_x, 0, 10.5), np.clip(map_y, 0, 8.5)  # BORDER_TRANSPARENT leaves the rest unset
    cases: list[tuple[Any, Any, Any, int, int, np.ndarray]] = [
        (up, map_x, map_y, NEAREST, cv2.BORDER_REPLICATE, image),
        (up, map_x, map_y, CUBIC, cv2.BORDER_REFLECT, image),
        (up, inside_x, inside_y, LINEAR, cv2.BORDER_TRANSPARENT, image),
        (image, map_x, map_y, LINEAR, cv2.BORDER_WRAP, image),
        (device.upload(five := _shaped(10, 12, 5, np.uint8)), map_x, map_y, LINEAR, cv2.BORDER_WRAP, five),
    ]
    for given, mx, my, interpolation, border, host in cases:
        expected = cv2.remap(host, mx, my, interpolation, borderMode=border, borderValue=(5.0,) * 4)
        out = device.download(device.remap(given, mx, my, interpolation, border, 5.0))
        np.testing.assert_array_equal(out, expected)
    assert device.counters.fallbacks == {"remap": len(cases)}
