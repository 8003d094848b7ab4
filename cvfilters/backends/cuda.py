"""The cuda backend: OpenCV's CUDA modules, images kept in ``cv2.cuda.GpuMat``.

Needs OpenCV built with CUDA and the contrib modules cudaarithm, cudafilters,
cudaimgproc and cudawarping (the PyPI wheels have none). Builds differ in which of
those they include, so each ``cv2.cuda`` function is looked up when a primitive runs.

What each ``cv2.cuda`` call takes is one table, :data:`cvfilters.backends.cuda_capabilities.CAPABILITIES` (primitive ->
functions, depths, channel counts, borders, kernel limits, each row citing the OpenCV
header, source or test it was read from), and one guard, :meth:`CudaBackend.supports`,
decides from it whether a primitive runs on the device. Channel counts a function lacks
run plane by plane (split/merge) where the row allows it; a delta, an output depth a
filter lacks, mixed operand depths and narrowing arithmetic outputs (which cudaarithm
lacks) go through float32. Where OpenCV's CUDA semantics differ from ``cv2`` the backend
adapts (see each primitive): the median's unwritten border columns are padded away,
morphology with non-rectangular elements iterates one pass at a time, integer division
runs in float32 (``cuda::divide`` truncates), CLAHE runs on the default stream.

Everything else falls back to the cpu backend, counted in ``counters.fallbacks``:
functions this build lacks (with the PyPI wheels all but convert, crop and concat), and
every call outside its row of the table. ``cv2.cuda.create*`` objects live in a bounded
LRU cache (:data:`FILTER_ENTRIES`), keyed by kind, image type and parameters (large
tables by a digest).

Nothing of this module has run on a real GPU in this project's tests so far: the
device branches are written against OpenCV's sources and checked by
``bench/gpu_check.sh`` where a CUDA device exists.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import Any

import cv2
import numpy as np

from cvfilters.backends.base import CV_DEPTH, Availability, auto_gaussian_ksize, pooled_ranges
from cvfilters.backends.cuda_capabilities import CAPABILITIES, LINEAR_DEPTHS, NO_64F, SEPARABLE_DEPTHS
from cvfilters.backends.device import DeviceBackend
from cvfilters.core.types import DType

NO_CUDA_BUILD = ("OpenCV was built without CUDA (the PyPI wheels are); build OpenCV with CUDA "
                 "and the contrib CUDA modules to use this backend")
FILTER_ENTRIES = 64  # cv2.cuda filter objects kept (least recently used dropped first)
# cv2's type stubs describe a build without CUDA (no cv2.cuda functions): the module as Any.
CUDA: Any = cv2.cuda


def _cuda(name: str) -> Callable[..., Any] | None:
    """``cv2.cuda.<name>`` when this OpenCV build has it, else None."""
    module = getattr(cv2, "cuda", None)
    return getattr(module, name) if hasattr(module, name) else None


def _depth(dtype: DType | None) -> int:
    return -1 if dtype is None else CV_DEPTH[np.dtype(dtype)]


def _kernel_key(kernel: np.ndarray) -> tuple[Hashable, ...]:
    """A cache key for a kernel or table: its shape, dtype and a digest of its bytes."""
    import hashlib  # here: a cpu run never needs it

    return kernel.shape, kernel.dtype.str, hashlib.blake2b(np.ascontiguousarray(kernel).tobytes(),
                                                           digest_size=16).digest()


def _mirror_symmetric(kernel: np.ndarray) -> bool:
    """An odd-sized element equal to its left-right and up-down mirror images.

    For such an element every border (reflect101, replicate, reflect, the neutral
    constant) only repeats pixels already inside the window, so erosion and dilation
    give the same result whichever the device pads with.
    """
    k = np.asarray(kernel) != 0
    return k.shape[0] % 2 == 1 and k.shape[1] % 2 == 1 and bool((k == k[::-1]).all() and (k == k[:, ::-1]).all())


def _device_name() -> str:
    """``DeviceInfo.name()`` of the current device; the index and compute capability where it is unbound."""
    try:
        info = CUDA.DeviceInfo(CUDA.getDevice())
        if hasattr(info, "name"):
            return info.name()
        return f"CUDA device {info.deviceID()} (compute {info.majorVersion()}.{info.minorVersion()})"
    except (AttributeError, cv2.error, SystemError):  # a failing constructor surfaces as SystemError
        return "CUDA device"


class CudaBackend(DeviceBackend):
    """Images are ``cv2.cuda.GpuMat``; every upload and download is counted.

    Attributes
    ----------
    counters : Counters
        Uploads and downloads (numpy remap maps included), cached constants (resize maps
        too) and host fallbacks per primitive; a fallback's own transfers are not uploads.

    Notes
    -----
    Every primitive runs on the default stream (CLAHE included, given ``Stream_Null()``),
    so a result is complete when :meth:`download` returns. ``cv2.cuda.create*`` objects
    are cached per kind, image type and parameters in a least-recently-used cache of
    :data:`FILTER_ENTRIES` entries, so per-frame tables (equalize, match_histogram on
    video) do not keep one device object per frame; one cache per thread (the objects
    hold scratch buffers, so threads do not share them).
    """

    name = "cuda"

    @classmethod
    def probe(cls) -> Availability:
        try:
            count = CUDA.getCudaEnabledDeviceCount()
        except (AttributeError, cv2.error) as exc:
            return Availability("cuda", False, reason=f"CUDA probe failed: {str(exc).strip()}")
        if count == 0 and not re.search(r"NVIDIA CUDA:\s*YES", cv2.getBuildInformation()):
            return Availability("cuda", False, reason=NO_CUDA_BUILD)
        if count <= 0:
            return Availability("cuda", False, reason="no CUDA device found" if count == 0 else
                                "the NVIDIA driver is missing or older than OpenCV's CUDA runtime")
        return Availability("cuda", True, device=_device_name(), is_gpu=True)

    # ------------------------------------------------------------ residency
    def is_native(self, image: Any) -> bool:
        return isinstance(image, CUDA.GpuMat)

    def to_device(self, array: np.ndarray) -> Any:
        image = CUDA.GpuMat()
        image.upload(np.ascontiguousarray(array))
        return image

    def to_host(self, image: Any) -> np.ndarray:
        return image.download()

    def crop(self, image: Any, x: int, y: int, width: int, height: int) -> Any:
        return CUDA.GpuMat(image, (y, y + height), (x, x + width))

    # ------------------------------------------------------------ the guard
    def supports(self, primitive: str, *images: Any, border: int | None = None, taps: int = 0) -> bool:
        """Whether ``primitive`` runs on the device for these images, by its row of :data:`CAPABILITIES`.

        The build must have the row's functions (and split/merge where planes run); each
        image must be a device image of a listed depth whose channel count the call takes
        or, where the row allows, splits into planes; ``border`` must be listed and
        ``taps`` within ``max_taps``.
        """
        cap = CAPABILITIES[primitive]
        if any(_cuda(name) is None for name in cap.functions):
            return False
        if border is not None and (cap.borders is None or border not in cap.borders):
            return False
        if cap.max_taps is not None and taps > cap.max_taps:
            return False
        for image in images:
            if not self.is_native(image) or image.depth() not in cap.depths:
                return False
            channels = image.channels()
            if not cap.takes_channels(image.depth(), channels) and not (
                    cap.planes and channels <= 4 and _cuda("split") is not None and _cuda("merge") is not None):
                return False
        return True

    def _planes(self, primitive: str, image: Any, run: Callable[[Any], Any]) -> Any:
        """``run(image)``, or ``run`` on each plane when the call lacks this channel count."""
        if CAPABILITIES[primitive].takes_channels(image.depth(), image.channels()):
            return run(image)
        return CUDA.merge([run(plane) for plane in CUDA.split(image)])

    def _filter(self, key: Hashable, create: Callable[[], Any]) -> Any:
        """The cached ``cv2.cuda`` object for ``key``: an LRU of :data:`FILTER_ENTRIES` entries per thread
        (the objects hold scratch buffers, so threads do not share them)."""
        filters = getattr(self._local, "filters", None)
        if filters is None:
            filters = self._local.filters = OrderedDict()
        try:
            filters.move_to_end(key)
            return filters[key]
        except KeyError:
            made = filters[key] = create()
            if len(filters) > FILTER_ENTRIES:
                filters.popitem(last=False)
            return made

    def _separable(self, primitive: str, image: Any, key: tuple[Hashable, ...], create: Callable[[int, int], Any],
                   target: int, delta: float) -> Any:
        """Apply the cached separable filter ``create(src_type, dst_depth)`` and add ``delta``."""
        direct = delta == 0 and target in SEPARABLE_DEPTHS
        depth = target if direct else cv2.CV_32F
        out = self._planes(primitive, image, lambda img: self._filter(
            (*key, img.type(), depth), lambda: create(img.type(), depth)).apply(img))
        return out if direct else out.convertTo(target, alpha=1.0, beta=delta)

    # ------------------------------------------------------------ primitives
    def convert(self, image: Any, dtype: DType, alpha: float = 1.0, beta: float = 0.0) -> Any:
        return image.convertTo(_depth(dtype), alpha=alpha, beta=beta)

    def split(self, image: Any) -> list[Any]:
        if not self.supports("split", image):
            return self.fallback("split", image)
        return list(CUDA.split(image))

    def merge(self, planes: Sequence[Any]) -> Any:
        planes = list(planes)
        if not (1 <= len(planes) <= 4 and self.supports("merge", *planes) and len({p.depth() for p in planes}) == 1):
            return self.fallback("merge", planes)
        return CUDA.merge(planes)

    def pad(self, image: Any, top: int, bottom: int, left: int, right: int, border: int,
            value: float = 0.0) -> Any:
        if not self.supports("pad", image, border=border):
            return self.fallback("pad", image, top, bottom, left, right, border, value)
        return CUDA.copyMakeBorder(image, top, bottom, left, right, border, value=(value,) * 4)

    def gaussian(self, image: Any, ksize: tuple[int, int], sigma: float, border: int) -> Any:
        if self.supports("gaussian", image, border=border) and (sigma > 0 or min(ksize) > 0):
            depth = np.uint8 if image.depth() == cv2.CV_8U else np.float32  # the rule tells 8-bit from others
            size = tuple(k if k > 0 else auto_gaussian_ksize(sigma, depth) for k in ksize)  # as cv2 sizes it
            if self.supports("gaussian", image, border=border, taps=max(size)) and all(k % 2 for k in size):
                return self._separable("gaussian", image, ("gaussian", size, sigma, border),
                                       lambda t, d: CUDA.createGaussianFilter(t, d, size, sigma, sigma, border,
                                                                                  border),
                                       image.depth(), 0.0)
        return self.fallback("gaussian", image, ksize, sigma, border)

    def box(self, image: Any, ksize: tuple[int, int], border: int) -> Any:
        if self.supports("filter2d", image, border=border) and image.depth() == cv2.CV_16U:
            width, height = ksize  # NPP has no 16-bit box filter: a normalised linear filter instead
            return self.filter2d(image, np.full((height, width), 1.0 / (width * height), np.float32), border)
        if not self.supports("box", image, border=border):
            return self.fallback("box", image, ksize, border)
        size = tuple(ksize)
        return self._planes("box", image, lambda img: self._filter(
            ("box", img.type(), size, border),
            lambda: CUDA.createBoxFilter(img.type(), -1, size, (-1, -1), border)).apply(img))

    def filter2d(self, image: Any, kernel: np.ndarray, border: int, delta: float = 0.0,
                 ddepth: int = -1) -> Any:
        if not self.supports("filter2d", image, border=border):
            return self.fallback("filter2d", image, kernel, border, delta, ddepth)
        depth = image.depth()
        target = depth if ddepth < 0 else ddepth
        direct = delta == 0 and target == depth and depth in LINEAR_DEPTHS
        # cv::cuda::LinearFilter reads the parent image around a ROI (a crop): on a copy it extrapolates
        # at the crop's edges, as cv2.filter2D does on a numpy view
        work = image.clone() if direct or depth == cv2.CV_32F else image.convertTo(cv2.CV_32F)
        out = self._planes("filter2d", work, lambda img: self._filter(
            ("linear", img.type(), border, *_kernel_key(kernel)),
            lambda: CUDA.createLinearFilter(img.type(), -1, kernel, (-1, -1), border)).apply(img))
        return out if direct else out.convertTo(target, alpha=1.0, beta=delta)

    def sep_filter2d(self, image: Any, kernel_x: np.ndarray, kernel_y: np.ndarray, border: int,
                     delta: float = 0.0, ddepth: int = -1) -> Any:
        if not self.supports("sep_filter2d", image, border=border, taps=max(np.size(kernel_x), np.size(kernel_y))):
            return self.fallback("sep_filter2d", image, kernel_x, kernel_y, border, delta, ddepth)
        return self._separable("sep_filter2d", image,
                               ("separable", border, *_kernel_key(kernel_x), *_kernel_key(kernel_y)),
                               lambda t, d: CUDA.createSeparableLinearFilter(t, d, kernel_x, kernel_y, (-1, -1),
                                                                                 border, border),
                               image.depth() if ddepth < 0 else ddepth, delta)

    def sobel(self, image: Any, ddepth: int, dx: int, dy: int, ksize: int, border: int) -> Any:
        if not self.supports("sobel", image, border=border, taps=ksize):
            return self.fallback("sobel", image, ddepth, dx, dy, ksize, border)
        return self._separable("sobel", image, ("sobel", dx, dy, ksize, border),
                               lambda t, d: CUDA.createSobelFilter(t, d, dx, dy, ksize, 1.0, border, border),
                               image.depth() if ddepth < 0 else ddepth, 0.0)

    def magnitude(self, x: Any, y: Any) -> Any:
        if not self.supports("magnitude", x, y) or x.type() != y.type():
            return self.fallback("magnitude", x, y)
        # keywords pick the (x, y) overload; positionally the (xy, magnitude) one would match
        return CUDA.magnitude(x=x.reshape(1), y=y.reshape(1)).reshape(x.channels())

    def abs_convert(self, image: Any, dtype: DType, alpha: float = 1.0) -> Any:
        # cuda::abs takes 16S as well as 32F: the int16 derivatives of uint8 images stay on the device
        if not self.supports("abs_convert", image):
            return self.fallback("abs_convert", image, dtype, alpha)
        return CUDA.abs(image).convertTo(_depth(dtype), alpha=alpha, beta=0.0)

    def clip(self, image: Any, low: float, high: float) -> Any:
        if not self.supports("clip", image):
            return self.fallback("clip", image, low, high)
        below_high = CUDA.threshold(image, high, high, cv2.THRESH_TRUNC)[1]
        negated = CUDA.threshold(below_high.convertTo(cv2.CV_32F, alpha=-1.0), -low, -low, cv2.THRESH_TRUNC)[1]
        return negated.convertTo(cv2.CV_32F, alpha=-1.0)

    def lut(self, image: Any, table: np.ndarray) -> Any:
        table = np.asarray(table)
        per_channel = table.size == 768 and table.ndim >= 2 and table.shape[-1] == 3
        # LookUpTable::transform asserts lut_cn == 1 || lut_cn == cn: a 3-channel table needs a 3-channel image
        if (not self.supports("lut", image) or table.dtype != np.uint8 or not (table.size == 256 or per_channel)
                or (per_channel and image.channels() != 3)):
            return self.fallback("lut", image, table)
        shape = (1, 256, 3) if per_channel else (1, 256)
        return self._filter(("lut", *_kernel_key(table)),
                            lambda: CUDA.createLookUpTable(table.reshape(shape))).transform(image)

    def transform(self, image: Any, matrix: np.ndarray) -> Any:
        return self.fallback("transform", image, matrix)  # cv2.cuda has no per-pixel matrix transform

    def threshold(self, image: Any, thresh: float, maxval: float, kind: int) -> Any:
        if not self.supports("threshold", image):
            return self.fallback("threshold", image, thresh, maxval, kind)
        return CUDA.threshold(image, thresh, maxval, kind)[1]

    def calc_hist(self, image: Any, channels: int, levels: int) -> np.ndarray:
        depth = cv2.CV_8U if levels == 256 else cv2.CV_16U
        if not self.supports("calc_hist", image) or image.depth() != depth:
            return self.fallback("calc_hist", image, channels, levels, host_result=True)
        planes = [image] if channels == 1 else CUDA.split(image)
        rows = [CUDA.histEven(plane, levels, 0, levels).download().reshape(-1) for plane in planes]
        return np.stack(rows).astype(np.int64)

    def min_max(self, image: Any, channels: int, pooled: bool = False) -> list[tuple[float, float]]:
        if not self.supports("min_max", image):
            return self.fallback("min_max", image, channels, pooled, host_result=True)
        planes = [image] if channels == 1 else CUDA.split(image)
        ranges = [(float(lo), float(hi)) for lo, hi in map(CUDA.minMax, planes)]
        return pooled_ranges(ranges) if pooled else ranges

    def equalize_hist(self, image: Any) -> Any:
        if not self.supports("equalize_hist", image):
            return self.fallback("equalize_hist", image)
        return CUDA.equalizeHist(image)

    def clahe(self, image: Any, clip_limit: float, tiles: tuple[int, int]) -> Any:
        if self.supports("clahe", image):
            clahe = self._filter(("clahe", clip_limit, tiles), lambda: CUDA.createCLAHE(clip_limit, tiles))
            try:  # the default stream, as every other primitive: the result is complete on return
                return clahe.apply(image, CUDA.Stream_Null())
            except cv2.error:  # a build whose cuda::CLAHE takes CV_8UC1 only (16-bit came later)
                pass
        return self.fallback("clahe", image, clip_limit, tiles)

    def median(self, image: Any, ksize: int) -> Any:
        """cuda::createMedianFilter on a replicate-padded copy, cropped back.

        The CUDA kernel needs ``ksize >= 3`` and ``ksize / 2`` below both sides, and leaves
        the border columns unwritten (OpenCV's own test compares only the interior), so the
        image is padded by ``ksize // 2`` with cv2.medianBlur's replicated border first.
        OpenCV's test allows 1 level in the interior: this path is not bit-exact.
        """
        if not self.supports("median", image) or ksize < 3 or not self.supports("pad", image):
            return self.fallback("median", image, ksize)
        reach = ksize // 2
        width, height = image.size()
        padded = CUDA.copyMakeBorder(image, reach, reach, reach, reach, cv2.BORDER_REPLICATE)
        out = self._filter(("median", ksize), lambda: CUDA.createMedianFilter(cv2.CV_8UC1, ksize)).apply(padded)
        return self.crop(out, reach, reach, width, height)

    def bilateral(self, image: Any, diameter: int, sigma_color: float, sigma_space: float, border: int) -> Any:
        if not self.supports("bilateral", image, border=border):
            return self.fallback("bilateral", image, diameter, sigma_color, sigma_space, border)
        return CUDA.bilateralFilter(image, diameter, sigma_color, sigma_space, borderMode=border)

    def morphology(self, image: Any, op: int, kernel: np.ndarray, iterations: int, border: int) -> Any:
        """cuda morphology, which pads with reflect101 whatever cv2's border would be.

        Runs on the device for border reflect101, and for replicate, reflect and the
        neutral constant where the element is mirror-symmetric (then every border gives
        the same result). A non-rectangular element with ``iterations >= 2`` would read
        cuda's zero-filled buffer at the edges, so it runs one pass at a time.
        """
        symmetric_border = border in (cv2.BORDER_REPLICATE, cv2.BORDER_REFLECT, cv2.BORDER_CONSTANT)
        if not self.supports("morphology", image, border=cv2.BORDER_REFLECT_101 if (
                symmetric_border and _mirror_symmetric(kernel)) else border):
            return self.fallback("morphology", image, op, kernel, iterations, border)
        rect = bool(np.all(np.asarray(kernel) != 0))
        if rect or iterations == 1:
            return self._morph(image, op, kernel, iterations)
        def erode(img: Any) -> Any:
            return self._passes(img, cv2.MORPH_ERODE, kernel, iterations)

        def dilate(img: Any) -> Any:
            return self._passes(img, cv2.MORPH_DILATE, kernel, iterations)

        compose: dict[int, Callable[[Any], Any]] = {
            cv2.MORPH_ERODE: erode, cv2.MORPH_DILATE: dilate,
            cv2.MORPH_OPEN: lambda img: dilate(erode(img)), cv2.MORPH_CLOSE: lambda img: erode(dilate(img)),
            cv2.MORPH_GRADIENT: lambda img: CUDA.subtract(dilate(img), erode(img)),
            cv2.MORPH_TOPHAT: lambda img: CUDA.subtract(img, dilate(erode(img))),
            cv2.MORPH_BLACKHAT: lambda img: CUDA.subtract(erode(dilate(img)), img),
        }
        return compose[op](image)

    def _passes(self, image: Any, op: int, kernel: np.ndarray, iterations: int) -> Any:
        for _ in range(iterations):
            image = self._morph(image, op, kernel, 1)
        return image

    def _morph(self, image: Any, op: int, kernel: np.ndarray, iterations: int) -> Any:
        key = ("morphology", op, _kernel_key(kernel), iterations)
        return self._planes("morphology", image, lambda img: self._filter(
            (*key, img.type()), lambda: CUDA.createMorphologyFilter(op, img.type(), kernel,
                                                                         iterations=iterations)).apply(img))

    def _arithmetic(self, name: str, call: Callable[[Any, Any, int], Any], a: Any, b: Any,
                    dtype: DType | None, exact_depths: frozenset[int] = NO_64F) -> Any | None:
        """``call(a, b, work depth)`` on the device, in the output depth; None where it cannot run.

        cudaarithm wants operands of one type and has no narrowing outputs (32F to 8U, ...),
        so mixed depths, narrowing results and target depths outside ``exact_depths`` are
        computed in float32 and converted after (rounding and saturating, as cv2 does).
        """
        if (not self.supports(name, a, b) or a.size() != b.size() or a.channels() != b.channels()
                or (a.type() != b.type() and dtype is None)):  # cv2 raises for mixed types without dtype
            return None
        target = a.depth() if dtype is None else _depth(dtype)
        if a.type() == b.type() and target in exact_depths and (target == a.depth() or target == cv2.CV_32F):
            return call(a, b, target)
        x, y = (m if m.depth() == cv2.CV_32F else m.convertTo(cv2.CV_32F) for m in (a, b))
        out = call(x, y, cv2.CV_32F)
        return out if target == cv2.CV_32F else out.convertTo(target)

    def multiply(self, a: Any, b: Any, scale: float = 1.0, dtype: DType | None = None) -> Any:
        out = self._arithmetic("multiply", lambda x, y, d: CUDA.multiply(x, y, scale=scale, dtype=d), a, b, dtype)
        return self.fallback("multiply", a, b, scale, dtype) if out is None else out

    def divide(self, a: Any, b: Any, scale: float = 1.0, dtype: DType | None = None) -> Any:
        """``a * scale / b``; integer results through float32, as cuda::divide truncates them at scale 1.

        Where ``b`` is 0, cuda::divide gives 0 for every depth (``cv2.divide`` gives 0 for
        integers, IEEE inf/nan for floats): callers keep divisors away from 0.
        """
        out = self._arithmetic("divide", lambda x, y, d: CUDA.divide(x, y, scale=scale, dtype=d), a, b, dtype,
                               exact_depths=frozenset({cv2.CV_32F}))
        return self.fallback("divide", a, b, scale, dtype) if out is None else out

    def add_weighted(self, a: Any, wa: float, b: Any, wb: float, gamma: float = 0.0,
                     dtype: DType | None = None) -> Any:
        out = self._arithmetic("add_weighted",
                               lambda x, y, d: CUDA.addWeighted(x, wa, y, wb, gamma, dtype=d), a, b, dtype)
        return self.fallback("add_weighted", a, wa, b, wb, gamma, dtype) if out is None else out

    def bitwise_not(self, image: Any) -> Any:
        if not self.supports("bitwise_not", image):
            return self.fallback("bitwise_not", image)
        return CUDA.bitwise_not(image)

    def flip(self, image: Any, code: int) -> Any:
        if not self.supports("flip", image):
            return self.fallback("flip", image, code)
        return self._planes("flip", image, lambda img: CUDA.flip(img, code))

    def resize(self, image: Any, size: tuple[int, int], interpolation: int) -> Any:
        if not self.supports("resize", image):
            return self.fallback("resize", image, size, interpolation)
        (src_w, src_h), (dst_w, dst_h) = image.size(), tuple(size)
        if interpolation == cv2.INTER_AREA and src_w > dst_w and src_h > dst_h and _cuda("resize") is not None:
            return self._planes("resize", image,
                                lambda img: CUDA.resize(img, (dst_w, dst_h), interpolation=cv2.INTER_AREA))
        if interpolation not in (cv2.INTER_NEAREST, cv2.INTER_LINEAR):
            return self.fallback("resize", image, size, interpolation)
        map_x, map_y = (self.cached(("cuda-resize", interpolation, (src_w, src_h), (dst_w, dst_h), axis),
                                    partial(_resize_map, interpolation, (src_w, src_h), (dst_w, dst_h), axis))
                        for axis in (0, 1))
        return self._planes("resize", image, lambda img: CUDA.remap(
            img, map_x, map_y, interpolation, borderMode=cv2.BORDER_REPLICATE))

    def cvt_color(self, image: Any, code: int) -> Any:
        if _cuda("cvtColor") is not None and self.is_native(image):
            try:
                return CUDA.cvtColor(image, code)
            except cv2.error:  # a code or depth this build's cv::cuda::cvtColor does not implement
                pass
        return self.fallback("cvt_color", image, code)

    def remap(self, image: Any, map_x: Any, map_y: Any, interpolation: int, border: int,
              value: float = 0.0) -> Any:
        maps: list[Any] = [m if self.is_native(m) else np.asarray(m) for m in (map_x, map_y)]
        if (not self.supports("remap", image, border=border) or interpolation != cv2.INTER_LINEAR
                or any(m.type() != cv2.CV_32FC1 if self.is_native(m) else m.dtype != np.float32 or m.ndim != 2
                       for m in maps)):
            return self.fallback("remap", image, map_x, map_y, interpolation, border, value)
        device_maps = [m if self.is_native(m) else self.upload(m) for m in maps]  # moved per call, like images
        return self._planes("remap", image, lambda img: CUDA.remap(
            img, *device_maps, interpolation, borderMode=border, borderValue=(value,) * 4))

    def sqrt(self, image: Any) -> Any:
        if not self.supports("sqrt", image):
            return self.fallback("sqrt", image)
        return CUDA.sqrt(image)

    def minimum(self, a: Any, b: Any) -> Any:
        if not self.supports("minimum", a, b) or a.type() != b.type() or a.size() != b.size():
            return self.fallback("minimum", a, b)
        return CUDA.min(a, b)

    def maximum(self, a: Any, b: Any) -> Any:
        if not self.supports("maximum", a, b) or a.type() != b.type() or a.size() != b.size():
            return self.fallback("maximum", a, b)
        return CUDA.max(a, b)

    def compare(self, a: Any, b: Any, op: int) -> Any:
        if not self.supports("compare", a, b) or a.type() != b.type() or a.size() != b.size():
            return self.fallback("compare", a, b, op)
        return CUDA.compare(a, b, op)

    def select(self, mask: Any, yes: Any, no: Any) -> Any:
        if (not self.supports("select", yes, no) or not self.is_native(mask) or mask.depth() != cv2.CV_8U
                or mask.channels() not in (1, yes.channels()) or yes.type() != no.type()
                or not yes.size() == no.size() == mask.size()):
            return self.fallback("select", mask, yes, no)
        out = no.clone()
        yes.copyTo(mask, out)  # GpuMat::copyTo(mask, dst): yes where the mask is set, no elsewhere
        return out

    def concat(self, images: Sequence[Any], axis: int) -> Any:
        images = list(images)
        shared = 1 if axis == 1 else 0  # hconcat keeps the height (size()[1]), vconcat the width
        if not all(map(self.is_native, images)) or len({image.type() for image in images}) != 1:
            return self.fallback("concat", images, axis)
        sizes: list[tuple[int, int]] = [image.size() for image in images]
        if len({s[shared] for s in sizes}) != 1:
            return self.fallback("concat", images, axis)
        total = sum(s[1 - shared] for s in sizes)
        width, height = (total, sizes[0][1]) if axis == 1 else (sizes[0][0], total)
        out = CUDA.GpuMat(height, width, images[0].type())
        x = y = 0
        for image, (w, h) in zip(images, sizes, strict=True):
            image.copyTo(dst=self.crop(out, x, y, w, h))
            x, y = (x + w, y) if axis == 1 else (x, y + h)
        return out


def _resize_map(interpolation: int, src_size: tuple[int, int], dst_size: tuple[int, int], axis: int) -> np.ndarray:
    """The x (``axis`` 0) or y (1) map of the source coordinates ``cv2.resize`` samples.

    INTER_NEAREST takes ``floor(i * scale)``; INTER_LINEAR pixel centres
    ``(i + 0.5) * scale - 0.5`` clamped to the image, as cv2's resize computes them.
    """
    src, dst = src_size[axis], dst_size[axis]
    scale = 1.0 / (dst / src)  # cv2.resize's inverse scale, in double precision
    i = np.arange(dst, dtype=np.float64)
    if interpolation == cv2.INTER_NEAREST:
        coords = np.minimum(np.floor(i * scale), src - 1).astype(np.float32)
    else:
        coords = np.clip((i + 0.5) * scale - 0.5, 0, src - 1).astype(np.float32)
    width, height = dst_size
    return np.tile(coords, (height, 1)) if axis == 0 else np.tile(coords[:, None], (1, width))
