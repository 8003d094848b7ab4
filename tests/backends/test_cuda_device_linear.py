"""The cuda backend's linear filters on a stand-in ``cv2.cuda`` (issue 26's mutation triage).

tests/backends/test_cuda_device_paths.py's ``DeviceMat`` and stand-ins, with
tests/backends/test_cuda_device_guards.py's cudaarithm calls, plus stand-ins for the
cudafilters factories ``filter2d``, ``box``, ``sep_filter2d`` and ``sobel`` call:
``createLinearFilter`` (which nothing stood in for, so the 16-bit box route and all of
``filter2d``'s device branch never ran), and stricter ``createBoxFilter``,
``createSeparableLinearFilter`` and ``createSobelFilter``. Each refuses, with a
``cv2.error``, what opencv_contrib modules/cudafilters/src/filtering.cpp asserts (read at
opencv_contrib 54a7c7c; cited at each check), and reads ``None`` as OpenCV's Python
bindings do (the argument's default). They compute in float32 as the CUDA kernels do
(a float sum, then ``saturate_cast``), on host arrays padded by ``cv2.copyMakeBorder``
(which takes all five cuda borders, wrap included). References are ``cv2`` called
directly on the host arrays: exact for float32 within float32 precision, integers within
one level (cv2 rounds its own sums).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import cv2
import numpy as np
import pytest

from cvfilters.backends.cuda import CudaBackend
from tests.backends.test_cuda_device_guards import MORE
from tests.backends.test_cuda_device_paths import DEPTHS, _Applier, _image, _mat, on_stand_ins

# filtering.cpp's borderMode asserts (LinearFilter, SeparableLinearFilter) and cudaarithm's copyMakeBorder, which
# NPPBoxFilter::apply pads with: REFLECT101, REPLICATE, CONSTANT, REFLECT, WRAP (no BORDER_ISOLATED flag).
CUDA_BORDERS = frozenset({cv2.BORDER_REFLECT_101, cv2.BORDER_REPLICATE, cv2.BORDER_CONSTANT, cv2.BORDER_REFLECT,
                          cv2.BORDER_WRAP})
# LinearFilter: CV_Assert(sdepth == CV_8U || sdepth == CV_16U || sdepth == CV_32F); CV_Assert(scn == 1 || scn == 4)
LINEAR_TYPES = frozenset(cv2.CV_MAKETYPE(d, c) for d in (cv2.CV_8U, cv2.CV_16U, cv2.CV_32F) for c in (1, 4))
# NPPBoxFilter: CV_Assert(srcType == CV_8UC1 || srcType == CV_8UC4 || srcType == CV_32FC1)
BOX_TYPES = frozenset({cv2.CV_8UC1, cv2.CV_8UC4, cv2.CV_32FC1})
# SeparableLinearFilter: the set entries of rowFilterFuncs[sdepth][cn - 1] and columnFilterFuncs[ddepth][cn - 1]
SEPARABLE_DEPTHS = frozenset({cv2.CV_8U, cv2.CV_16U, cv2.CV_16S, cv2.CV_32S, cv2.CV_32F})
SEPARABLE_CHANNELS = frozenset({1, 3, 4})
MAX_SEPARABLE_TAPS = 32  # CV_Assert(rowKernel_.cols > 0 && rowKernel_.cols <= 32), the same for the column kernel
ISOLATED = cv2.BORDER_REFLECT_101 | cv2.BORDER_ISOLATED  # a border cv2 takes and cuda does not


def _assert(condition: bool, what: str) -> None:
    """OpenCV's CV_Assert: a cv2.error naming the failed condition."""
    if not condition:
        raise cv2.error(f"Assertion failed: {what}")


def _arg(value: Any, default: Any) -> Any:
    """OpenCV's Python bindings read None for an int, double or Point argument as its default (0 for none)."""
    return default if value is None else value


def _split_type(kind: int) -> tuple[int, int]:
    step = cv2.CV_MAKETYPE(0, 2)  # 1 << CV_CN_SHIFT, as DeviceMat reads it
    return kind % step, kind // step + 1


def _types(src_type: Any, dst_type: Any) -> tuple[int, int]:
    """create*Filter: ``if (dstType < 0) dstType = srcType``, then ``CV_MAKE_TYPE(depth(dstType), cn(srcType))``."""
    src, dst = int(_arg(src_type, 0)), int(_arg(dst_type, 0))
    return src, cv2.CV_MAKETYPE(_split_type(src if dst < 0 else dst)[0], _split_type(src)[1])


def _point(anchor: Any) -> tuple[int, int]:
    """A Point argument: None is the default (-1, -1); anything but two numbers is refused, as the bindings do."""
    if anchor is None:
        return -1, -1
    if not isinstance(anchor, Sequence) or len(anchor) != 2:
        raise TypeError(f"a Point is two numbers, not {anchor!r}")
    return int(anchor[0]), int(anchor[1])


def _anchor(anchor: int, ksize: int) -> int:
    """filtering.cpp normalizeAnchor: any negative anchor is the centre ``ksize >> 1``; else it must lie inside."""
    anchor = ksize >> 1 if anchor < 0 else anchor
    _assert(0 <= anchor < ksize, "0 <= anchor && anchor < ksize")
    return anchor


def _kernel(kernel: Any) -> np.ndarray:
    """An InputArray kernel as the binding's Mat (None: empty; 1-D: a column), then ``convertTo(kernel32F, CV_32F)``."""
    array = np.zeros((0, 0), np.float32) if kernel is None else np.asarray(kernel)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"a kernel of {array.dtype} is no Mat")
    array = array.reshape(-1, 1) if array.ndim == 1 else array
    _assert(array.ndim == 2, "kernel.channels() == 1")
    return array.astype(np.float32)


def _correlate(a: np.ndarray, kernel: np.ndarray, point: tuple[int, int], border: int) -> np.ndarray:
    """The float32 sum of ``kernel`` around each pixel (anchor ``point``), outside pixels by ``border``."""
    (kh, kw), (ax, ay) = kernel.shape, point
    padded = cv2.copyMakeBorder(a.astype(np.float32), ay, kh - 1 - ay, ax, kw - 1 - ax, border)  # constant: 0
    out = cv2.filter2D(padded, cv2.CV_32F, kernel, anchor=point, borderType=cv2.BORDER_CONSTANT)
    return out[ay: ay + a.shape[0], ax: ax + a.shape[1]]


def _saturate(values: np.ndarray, depth: int) -> np.ndarray:
    """``saturate_cast<D>`` of a float sum: to the nearest (ties to even) and clamped for integers."""
    dtype = np.dtype({v: k for k, v in DEPTHS.items()}[depth])
    if np.issubdtype(dtype, np.integer):
        values = np.clip(np.rint(values), np.iinfo(dtype).min, np.iinfo(dtype).max)
    return values.astype(dtype)


def create_linear_filter(src_type: Any, dst_type: Any, kernel: Any, anchor: Any = None,
                         border_mode: Any = None) -> _Applier:
    """cuda::createLinearFilter (filtering.cpp LinearFilter): no limit on the kernel's size."""
    src, dst = _types(src_type, dst_type)
    matrix, border = _kernel(kernel), _arg(border_mode, cv2.BORDER_REFLECT_101)
    _assert(src in LINEAR_TYPES, "sdepth == CV_8U || sdepth == CV_16U || sdepth == CV_32F; scn == 1 || scn == 4")
    _assert(dst == src, "dstType == srcType")
    _assert(border in CUDA_BORDERS, "borderMode == BORDER_REFLECT101 || ... || borderMode == BORDER_WRAP")
    ax, ay = _point(anchor)
    point = _anchor(ax, matrix.shape[1]), _anchor(ay, matrix.shape[0])
    return _Applier(lambda a: _saturate(_correlate(a, matrix, point, border), _split_type(src)[0]), src)


def create_box_filter(src_type: Any, dst_type: Any, ksize: tuple[int, int], anchor: Any = None,
                      border_mode: Any = None) -> _Applier:
    """cuda::createBoxFilter (NPPBoxFilter); apply pads with cuda::copyMakeBorder, which asserts the border."""
    src, dst = _types(src_type, dst_type)
    _assert(src in BOX_TYPES, "srcType == CV_8UC1 || srcType == CV_8UC4 || srcType == CV_32FC1")
    _assert(dst == src, "dstType == srcType")
    width, height = ksize
    ax, ay = _point(anchor)
    point, border = (_anchor(ax, width), _anchor(ay, height)), _arg(border_mode, cv2.BORDER_REFLECT_101)
    mean = np.full((height, width), 1.0 / (width * height), np.float32)

    def run(a: np.ndarray) -> np.ndarray:
        _assert(border in CUDA_BORDERS, "copyMakeBorder: borderType == BORDER_REFLECT_101 || ... || BORDER_WRAP")
        return _saturate(_correlate(a, mean, point, border), _split_type(src)[0])

    return _Applier(run, src)


def create_separable_linear_filter(src_type: Any, dst_type: Any, row_kernel: Any, column_kernel: Any,
                                   anchor: Any = None, row_border: Any = None,
                                   column_border: Any = None) -> _Applier:
    """cuda::createSeparableLinearFilter: the row pass into a CV_32F buffer, the column pass into ``dstType``."""
    src, dst = _types(src_type, dst_type)
    (sdepth, cn), ddepth = _split_type(src), _split_type(dst)[0]
    rows, columns = (_kernel(k).reshape(1, -1) for k in (row_kernel, column_kernel))  # kernel32F.reshape(1, 1)
    row_mode = _arg(row_border, cv2.BORDER_REFLECT_101)
    column_mode = row_mode if _arg(column_border, -1) < 0 else column_border
    _assert(row_mode in CUDA_BORDERS and column_mode in CUDA_BORDERS, "rowBorderMode, columnBorderMode")
    _assert(0 < rows.size <= MAX_SEPARABLE_TAPS and 0 < columns.size <= MAX_SEPARABLE_TAPS,
            "rowKernel_.cols > 0 && rowKernel_.cols <= 32 (and the column kernel's)")
    ax, ay = _point(anchor)
    x, y = _anchor(ax, rows.size), _anchor(ay, columns.size)
    _assert(sdepth in SEPARABLE_DEPTHS and cn in SEPARABLE_CHANNELS, "rowFilter_ != 0")
    _assert(ddepth in SEPARABLE_DEPTHS, "columnFilter_ != 0")
    return _Applier(lambda a: _saturate(_correlate(_correlate(a, rows, (x, 0), row_mode), columns.T, (0, y),
                                                   column_mode), ddepth), src)


def create_sobel_filter(src_type: Any, dst_type: Any, dx: int, dy: int, ksize: Any = None, scale: Any = None,
                        row_border: Any = None, column_border: Any = None) -> _Applier:
    """cuda::createSobelFilter -> createDerivFilter: getDerivKernels(dx, dy, ksize, false, CV_32F), the scale on
    the smoothing kernel, then createSeparableLinearFilter (cv2.getDerivKernels refuses what cv:: does)."""
    kx, ky = cv2.getDerivKernels(dx, dy, _arg(ksize, 3), normalize=False, ktype=cv2.CV_32F)
    factor = float(_arg(scale, 1.0))
    kx, ky = (kx * factor, ky) if dx == 0 else (kx, ky * factor)
    return create_separable_linear_filter(src_type, dst_type, kx, ky, (-1, -1), row_border, column_border)


LINEAR: dict[str, Any] = {
    **MORE,
    "createLinearFilter": create_linear_filter,
    "createBoxFilter": create_box_filter,
    "createSeparableLinearFilter": create_separable_linear_filter,
    "createSobelFilter": create_sobel_filter,
}


@pytest.fixture
def device(monkeypatch: pytest.MonkeyPatch) -> CudaBackend:
    """The real CudaBackend on DeviceMat images, with the linear filters above."""
    return on_stand_ins(monkeypatch, LINEAR)


def _shape(channels: int) -> tuple[int, ...]:
    return (13, 11) if channels == 1 else (13, 11, channels)


def _check(actual: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype and shape; integers within one level, float32 within float32 precision of the magnitudes."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    scale = max(1.0, float(np.abs(expected).max()))
    tolerance = 1.0 if np.issubdtype(expected.dtype, np.integer) else 1e-5 * scale
    assert float(np.abs(actual.astype(np.float64) - expected).max()) <= tolerance


# 5 rows and 7 columns, weights summing to 1, none alike: an anchor off the centre on either axis moves the result
KERNEL: np.ndarray = np.random.default_rng(7).random((5, 7), np.float32)
KERNEL /= KERNEL.sum()
OTHER_KERNEL: np.ndarray = np.array([[0.0, -1.0, 0.0], [-1.0, 5.0, -1.0], [0.0, -1.0, 0.0]], np.float32)


# ---------------------------------------------------------------- the stand-ins themselves
def test_the_stand_ins_refuse_what_opencvs_cuda_filters_assert() -> None:
    """So that a backend handing cuda a type, border, anchor or kernel it lacks fails here as on a device."""
    refused: list[Callable[[], Any]] = [
        lambda: create_linear_filter(cv2.CV_16SC1, -1, KERNEL),  # 16S
        lambda: create_linear_filter(cv2.CV_8UC3, -1, KERNEL),  # three channels
        lambda: create_linear_filter(cv2.CV_8UC1, cv2.CV_32F, KERNEL),  # another output depth
        lambda: create_linear_filter(cv2.CV_8UC1, -1, KERNEL, (7, -1)),  # anchor outside the kernel
        lambda: create_linear_filter(cv2.CV_8UC1, -1, KERNEL, (-1, -1), ISOLATED),
        lambda: create_linear_filter(cv2.CV_8UC1, -1, None),  # an empty kernel: no anchor inside it
        lambda: create_box_filter(cv2.CV_16UC1, -1, (3, 3)),
        lambda: create_box_filter(cv2.CV_8UC1, -1, (3, 3), (-1, -1), ISOLATED).apply(_mat(np.zeros((4, 4), np.uint8))),
        lambda: create_separable_linear_filter(cv2.CV_8UC2, -1, KERNEL[0], KERNEL[0]),  # two channels
        lambda: create_separable_linear_filter(cv2.CV_8UC1, -1, np.ones(33), np.ones(3)),  # 33 taps
        lambda: create_separable_linear_filter(cv2.CV_8UC1, -1, np.ones(3), np.ones(3), (-1, -1), ISOLATED),
        lambda: create_sobel_filter(cv2.CV_32FC1, -1, 1, 0, 3, 1.0, cv2.BORDER_REPLICATE, ISOLATED),
    ]
    for make in refused:
        with pytest.raises(cv2.error):
            make()
    with pytest.raises(TypeError):  # an anchor that is no Point
        create_linear_filter(cv2.CV_8UC1, -1, KERNEL, cv2.BORDER_REPLICATE)



# ---------------------------------------------------------------- filter2d
FILTER2D_CASES: list[tuple[type, int, int, float, int]] = [
    (np.uint8, 1, cv2.BORDER_REPLICATE, 0.0, -1),  # cuda's own 8UC1 filter
    (np.uint8, 4, cv2.BORDER_REFLECT, 0.0, -1),
    (np.uint8, 3, cv2.BORDER_CONSTANT, 0.0, -1),  # plane by plane: cuda takes 1 or 4 channels
    (np.uint16, 1, cv2.BORDER_REPLICATE, 0.0, -1),
    (np.float32, 4, cv2.BORDER_REFLECT_101, 0.0, -1),
    (np.float32, 1, cv2.BORDER_REPLICATE, -0.75, -1),
    (np.uint8, 1, cv2.BORDER_REPLICATE, 2.5, -1),  # a delta: through float32, rounded once
    (np.float32, 1, cv2.BORDER_REFLECT, 1.0, -1),  # a delta of exactly 1
    (np.uint8, 3, cv2.BORDER_REPLICATE, 0.0, cv2.CV_32F),  # another output depth
    (np.uint16, 4, cv2.BORDER_REPLICATE, 3.0, cv2.CV_32F),
    (np.int16, 1, cv2.BORDER_REPLICATE, 0.0, -1),  # 16S: cuda's linear filter lacks it, float32 instead
    (np.int16, 3, cv2.BORDER_REFLECT, -2.0, cv2.CV_32F),
]


@pytest.mark.parametrize(("dtype", "channels", "border", "delta", "ddepth"), FILTER2D_CASES)
def test_filter2d_on_the_device_is_cv2_filter2d(device: CudaBackend, dtype: type, channels: int, border: int,
                                                delta: float, ddepth: int) -> None:
    """cv2.filter2D's result (anchor at the centre of a 5 x 7 kernel, the border, delta and output depth asked),
    all on the device: catches a delta or output depth dropped, a kernel anchored off its centre, the default
    border instead of the caller's, a depth handed to cuda's filter that it lacks."""
    image = _image(_shape(channels), dtype)
    out = device.filter2d(device.upload(image), KERNEL, border, delta, ddepth)
    assert device.is_native(out)
    _check(device.download(out), cv2.filter2D(image, ddepth, KERNEL, delta=delta, borderType=border))
    assert not device.counters.fallbacks


# ---------------------------------------------------------------- box
@pytest.mark.parametrize(("dtype", "channels"), [(np.uint16, 1), (np.uint16, 3), (np.uint16, 4), (np.uint8, 1),
                                                 (np.uint8, 4), (np.uint8, 3), (np.float32, 1)])
def test_box_on_the_device_is_cv2_blur(device: CudaBackend, dtype: type, channels: int) -> None:
    """A 5 x 3 box (wider than high) is cv2.blur's mean on the device: 16-bit images through cuda's linear filter
    (NPP has no 16-bit box), the others through cuda's box filter. Catches the 16-bit route sent to the cpu or
    to NPP, a wrong normalisation (w / h for w * h), the default border, the box's anchor off its centre."""
    image = _image(_shape(channels), dtype)
    out = device.box(device.upload(image), (5, 3), cv2.BORDER_REPLICATE)
    _check(device.download(out), cv2.blur(image, (5, 3), borderType=cv2.BORDER_REPLICATE))
    assert not device.counters.fallbacks


def test_each_kernel_and_box_size_keeps_its_own_cached_filter(device: CudaBackend) -> None:
    """Two kernels and two box sizes on one backend and image type: each result its own (the cache keys differ)."""
    image = _image((13, 11), np.uint8)
    up, down = device.upload, device.download
    for kernel in (KERNEL, OTHER_KERNEL):
        _check(down(device.filter2d(up(image), kernel, cv2.BORDER_REPLICATE)),
               cv2.filter2D(image, -1, kernel, borderType=cv2.BORDER_REPLICATE))
    for ksize in ((5, 3), (3, 5)):
        _check(down(device.box(up(image), ksize, cv2.BORDER_REFLECT)),
               cv2.blur(image, ksize, borderType=cv2.BORDER_REFLECT))
    assert not device.counters.fallbacks


# ---------------------------------------------------------------- the guards: host images, borders, taps
KX: np.ndarray = cv2.getGaussianKernel(5, 1.1, cv2.CV_32F)
KY: np.ndarray = np.array([[-1.0], [2.5], [-0.5]], np.float32)


def test_linear_filters_the_device_cannot_take_run_on_the_cpu(device: CudaBackend) -> None:
    """A host image, or a border cuda lacks (BORDER_ISOLATED), runs on the cpu, counted under the primitive the
    caller asked for (a 16-bit box is ``box`` there too): cv2's results."""
    wide, narrow = _image((13, 11), np.uint16), _image((13, 11, 4), np.uint8)
    up, down = device.upload, device.download
    for run in (lambda im: im, up):
        for border in ((ISOLATED,) if run is up else (cv2.BORDER_REPLICATE, ISOLATED)):
            _check(down(device.filter2d(run(narrow), KERNEL, border)),
                   cv2.filter2D(narrow, -1, KERNEL, borderType=border))
            for image in (wide, narrow):
                _check(down(device.box(run(image), (5, 3), border)), cv2.blur(image, (5, 3), borderType=border))
            _check(down(device.sep_filter2d(run(narrow), KX, KY, border)),
                   cv2.sepFilter2D(narrow, -1, KX, KY, borderType=border))
            _check(down(device.sobel(run(narrow), cv2.CV_16S, 1, 0, 3, border)),
                   cv2.Sobel(narrow, cv2.CV_16S, 1, 0, ksize=3, borderType=border))
    assert device.counters.fallbacks == {"filter2d": 3, "box": 6, "sep_filter2d": 3, "sobel": 3}


def test_a_separable_kernel_over_32_taps_on_either_axis_runs_on_the_cpu(device: CudaBackend) -> None:
    """cuda's separable filter takes at most 32 taps per kernel: the longer of the two decides."""
    image = _image((40, 38), np.float32)
    long, short = np.full((33, 1), 1.0 / 33, np.float32), KY
    for kx, ky in ((long, short), (short, long), (long[:32] * 33 / 32, short)):
        _check(device.download(device.sep_filter2d(device.upload(image), kx, ky, cv2.BORDER_REFLECT_101)),
               cv2.sepFilter2D(image, -1, kx, ky, borderType=cv2.BORDER_REFLECT_101))
    assert device.counters.fallbacks == {"sep_filter2d": 2}


def test_separable_filters_from_float_to_8_bits_on_the_device(device: CudaBackend) -> None:
    """ddepth CV_8U (0) is an output depth, not "the source's" (-1): float32 in, saturated uint8 out, as cv2;
    a column kernel of 5 taps anchored at its centre."""
    image = _image((13, 11, 3), np.float32) * 300 - 20
    up, down = device.upload, device.download
    _check(down(device.sep_filter2d(up(image), KY, KX, cv2.BORDER_REPLICATE, ddepth=cv2.CV_8U)),
           cv2.sepFilter2D(image, cv2.CV_8U, KY, KX, borderType=cv2.BORDER_REPLICATE))
    _check(down(device.sobel(up(image), cv2.CV_8U, 0, 1, 3, cv2.BORDER_REFLECT)),
           cv2.Sobel(image, cv2.CV_8U, 0, 1, ksize=3, borderType=cv2.BORDER_REFLECT))
    assert not device.counters.fallbacks
