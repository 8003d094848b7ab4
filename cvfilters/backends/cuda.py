"""The cuda backend: OpenCV's CUDA modules, images kept in ``cv2.cuda.GpuMat``.

Needs OpenCV built with CUDA and the contrib modules cudaarithm, cudafilters,
cudaimgproc and cudawarping (the PyPI wheels have none). Builds differ in which of
those they include, so each ``cv2.cuda`` function is looked up when a primitive runs.

On the device, when the build has the function: convert, crop, concat (``GpuMat``
itself), split, merge, pad, multiply, divide, add_weighted, bitwise_not, abs_convert,
clip and magnitude (float32), flip (8U/16U/32S/32F), lut (uint8 image and table, 1 or 3
channels), cvt_color (codes the build implements), gaussian, sobel and sep_filter2d
(kernels of at most 32 taps, depth 8U/16U/16S/32S/32F), box (8U/16U/32F), filter2d
(8U/16U/16S/32F), remap (INTER_LINEAR, float32 maps) and resize (INTER_NEAREST and
INTER_LINEAR through ``cuda.remap`` with cached maps that sample like ``cv2.resize``,
since ``cuda.resize`` samples at pixel corners; INTER_AREA when both sides shrink).
Channel counts a CUDA function lacks run plane by plane (split/merge); a delta, an
output depth a filter lacks, mixed operand depths and narrowing arithmetic outputs
(which cudaarithm lacks) go through float32.

Everything else falls back to the cpu backend, counted in ``counters.fallbacks``:
primitives whose function this build lacks (with the PyPI wheels all but convert,
crop and concat), 64-bit images in filters, larger kernels, nearest and cubic remap
and cubic resize (CUDA truncates where ``cv2`` rounds, and its cubic uses a = -0.5
where ``cv2`` uses -0.75), other interpolations, non-float32 maps, non-uint8 tables,
rejected cvtColor codes, and 64-bit or mismatched (size, channels) arithmetic operands.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Hashable, Sequence
from typing import Any

import cv2
import numpy as np

from .base import CV_DEPTH, Availability, auto_gaussian_ksize
from .device import DeviceBackend

NO_CUDA_BUILD = ("OpenCV was built without CUDA (the PyPI wheels are); build OpenCV with CUDA "
                 "and the contrib CUDA modules to use this backend")
MAX_TAPS = 32  # cv::cuda separable filters take kernels of at most 32 coefficients
_BORDERS = frozenset({cv2.BORDER_REFLECT_101, cv2.BORDER_REPLICATE, cv2.BORDER_CONSTANT,
                      cv2.BORDER_REFLECT, cv2.BORDER_WRAP})
_SEPARABLE_DEPTHS = frozenset({cv2.CV_8U, cv2.CV_16U, cv2.CV_16S, cv2.CV_32S, cv2.CV_32F})
_LINEAR_DEPTHS = frozenset({cv2.CV_8U, cv2.CV_16U, cv2.CV_32F})
_WARP_DEPTHS = frozenset({cv2.CV_8U, cv2.CV_16U, cv2.CV_16S, cv2.CV_32F})
_FLIP_DEPTHS = frozenset({cv2.CV_8U, cv2.CV_16U, cv2.CV_32S, cv2.CV_32F})
_ALL_DEPTHS = frozenset(CV_DEPTH.values())


def _cuda(name: str) -> Callable[..., Any] | None:
    """``cv2.cuda.<name>`` when this OpenCV build has it, else None."""
    module = getattr(cv2, "cuda", None)
    return getattr(module, name) if hasattr(module, name) else None


def _depth(dtype: np.dtype | None) -> int:
    return -1 if dtype is None else CV_DEPTH[np.dtype(dtype)]


def _kernel_key(kernel: np.ndarray) -> tuple[Hashable, ...]:
    return kernel.shape, kernel.dtype.str, kernel.tobytes()


def _device_name() -> str:
    """``DeviceInfo.name()`` of the current device; the index and compute capability where it is unbound."""
    try:
        info = cv2.cuda.DeviceInfo(cv2.cuda.getDevice())
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
    stream : cv2.cuda.Stream
        The stream for batch work, created on first use. Primitives run on the default
        stream, so a result is complete when :meth:`download` returns.

    Notes
    -----
    ``cv2.cuda.create*Filter`` objects are cached per kind, image type and parameters,
    in each thread (they hold scratch buffers, so threads do not share them).
    """

    name = "cuda"

    def __init__(self) -> None:
        super().__init__()
        self._stream: Any = None

    @property
    def stream(self) -> Any:
        if self._stream is None:
            self._stream = cv2.cuda.Stream()
        return self._stream

    @classmethod
    def probe(cls) -> Availability:
        try:
            count = cv2.cuda.getCudaEnabledDeviceCount()
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
        return isinstance(image, cv2.cuda.GpuMat)

    def to_device(self, array: np.ndarray) -> Any:
        image = cv2.cuda.GpuMat()
        image.upload(np.ascontiguousarray(array))
        return image

    def to_host(self, image: Any) -> np.ndarray:
        return image.download()

    def crop(self, image: Any, x: int, y: int, width: int, height: int) -> Any:
        return cv2.cuda.GpuMat(image, (y, y + height), (x, x + width))

    # ------------------------------------------------------------ helpers
    def _fits(self, image: Any, depths: Collection[int], border: int | None = None) -> bool:
        """Whether ``image`` is a device image of a depth (and border) the cuda call takes.

        Any channel count up to 4 fits: :meth:`_planes` splits what a function lacks.
        """
        return (self.is_native(image) and image.depth() in depths and (border is None or border in _BORDERS)
                and image.channels() <= 4 and _cuda("split") is not None and _cuda("merge") is not None)

    def _planes(self, image: Any, channels: Collection[int], run: Callable[[Any], Any]) -> Any:
        """``run(image)``, or ``run`` on each plane when the cuda function lacks this channel count."""
        if image.channels() in channels:
            return run(image)
        return cv2.cuda.merge([run(plane) for plane in cv2.cuda.split(image)])

    def _filter(self, key: Hashable, create: Callable[[], Any]) -> Any:
        """A cached ``cv2.cuda`` filter object; one set per thread (they hold scratch buffers)."""
        filters = getattr(self._local, "filters", None)
        if filters is None:
            filters = self._local.filters = {}
        if key not in filters:
            filters[key] = create()
        return filters[key]

    def _separable(self, image: Any, key: tuple[Hashable, ...], create: Callable[[int, int], Any],
                   target: int, delta: float) -> Any:
        """Apply the cached separable filter ``create(src_type, dst_depth)`` and add ``delta``."""
        direct = delta == 0 and target in _SEPARABLE_DEPTHS
        depth = target if direct else cv2.CV_32F
        out = self._planes(image, (1, 3, 4), lambda img: self._filter(
            (*key, img.type(), depth), lambda: create(img.type(), depth)).apply(img))
        return out if direct else out.convertTo(target, alpha=1.0, beta=delta)

    # ------------------------------------------------------------ primitives
    def convert(self, image: Any, dtype: np.dtype, alpha: float = 1.0, beta: float = 0.0) -> Any:
        return image.convertTo(_depth(dtype), alpha=alpha, beta=beta)

    def split(self, image: Any) -> list[Any]:
        if _cuda("split") is None or not self.is_native(image) or image.channels() > 4:
            return self.fallback("split", image)
        return list(cv2.cuda.split(image))

    def merge(self, planes: Sequence[Any]) -> Any:
        planes = list(planes)
        if (_cuda("merge") is None or not 1 <= len(planes) <= 4 or not all(map(self.is_native, planes))
                or any(p.channels() != 1 for p in planes) or len({p.depth() for p in planes}) != 1):
            return self.fallback("merge", planes)
        return cv2.cuda.merge(planes)

    def pad(self, image: Any, top: int, bottom: int, left: int, right: int, border: int,
            value: float = 0.0) -> Any:
        make_border = _cuda("copyMakeBorder")
        if make_border is None or not self._fits(image, _ALL_DEPTHS - {cv2.CV_64F}, border):
            return self.fallback("pad", image, top, bottom, left, right, border, value)
        return make_border(image, top, bottom, left, right, border, value=(value,) * 4)

    def gaussian(self, image: Any, ksize: tuple[int, int], sigma: float, border: int) -> Any:
        create = _cuda("createGaussianFilter")
        if create is not None and self._fits(image, _SEPARABLE_DEPTHS, border) and (sigma > 0 or min(ksize) > 0):
            depth = np.uint8 if image.depth() == cv2.CV_8U else np.float32  # the rule tells 8-bit from others
            size = tuple(k if k > 0 else auto_gaussian_ksize(sigma, depth) for k in ksize)  # as cv2 sizes it
            if max(size) <= MAX_TAPS and all(k % 2 for k in size):
                return self._separable(image, ("gaussian", size, sigma, border),
                                       lambda t, d: create(t, d, size, sigma, sigma, border, border),
                                       image.depth(), 0.0)
        return self.fallback("gaussian", image, ksize, sigma, border)

    def box(self, image: Any, ksize: tuple[int, int], border: int) -> Any:
        create = _cuda("createBoxFilter")
        if _cuda("createLinearFilter") is not None and self._fits(image, (cv2.CV_16U,), border):
            width, height = ksize  # NPP has no 16-bit box filter: a normalised linear filter instead
            return self.filter2d(image, np.full((height, width), 1.0 / (width * height), np.float32), border)
        if create is None or not self._fits(image, (cv2.CV_8U, cv2.CV_32F), border):
            return self.fallback("box", image, ksize, border)
        size = tuple(ksize)
        channels = (1, 4) if image.depth() == cv2.CV_8U else (1,)  # NPP: 8UC1, 8UC4, 32FC1
        return self._planes(image, channels, lambda img: self._filter(
            ("box", img.type(), size, border), lambda: create(img.type(), -1, size, (-1, -1), border)).apply(img))

    def filter2d(self, image: Any, kernel: np.ndarray, border: int, delta: float = 0.0,
                 ddepth: int = -1) -> Any:
        create = _cuda("createLinearFilter")
        if create is None or not self._fits(image, _WARP_DEPTHS, border):
            return self.fallback("filter2d", image, kernel, border, delta, ddepth)
        depth = image.depth()
        target = depth if ddepth < 0 else ddepth
        direct = delta == 0 and target == depth and depth in _LINEAR_DEPTHS
        # cv::cuda::LinearFilter reads the parent image around a ROI (a crop): on a copy it extrapolates
        # at the crop's edges, as cv2.filter2D does on a numpy view
        work = image.clone() if direct or depth == cv2.CV_32F else image.convertTo(cv2.CV_32F)
        out = self._planes(work, (1, 4), lambda img: self._filter(
            ("linear", img.type(), border, *_kernel_key(kernel)),
            lambda: create(img.type(), -1, kernel, (-1, -1), border)).apply(img))
        return out if direct else out.convertTo(target, alpha=1.0, beta=delta)

    def sep_filter2d(self, image: Any, kernel_x: np.ndarray, kernel_y: np.ndarray, border: int,
                     delta: float = 0.0, ddepth: int = -1) -> Any:
        create = _cuda("createSeparableLinearFilter")
        if (create is None or not self._fits(image, _SEPARABLE_DEPTHS, border)
                or max(np.size(kernel_x), np.size(kernel_y)) > MAX_TAPS):
            return self.fallback("sep_filter2d", image, kernel_x, kernel_y, border, delta, ddepth)
        return self._separable(image, ("separable", border, *_kernel_key(kernel_x), *_kernel_key(kernel_y)),
                               lambda t, d: create(t, d, kernel_x, kernel_y, (-1, -1), border, border),
                               image.depth() if ddepth < 0 else ddepth, delta)

    def sobel(self, image: Any, ddepth: int, dx: int, dy: int, ksize: int, border: int) -> Any:
        create = _cuda("createSobelFilter")
        if create is None or not self._fits(image, _SEPARABLE_DEPTHS, border) or ksize > MAX_TAPS:
            return self.fallback("sobel", image, ddepth, dx, dy, ksize, border)
        return self._separable(image, ("sobel", dx, dy, ksize, border),
                               lambda t, d: create(t, d, dx, dy, ksize, 1.0, border, border),
                               image.depth() if ddepth < 0 else ddepth, 0.0)

    def magnitude(self, x: Any, y: Any) -> Any:
        if (_cuda("magnitude") is None or not (self.is_native(x) and self.is_native(y))
                or x.type() != y.type() or x.depth() != cv2.CV_32F):
            return self.fallback("magnitude", x, y)
        # keywords pick the (x, y) overload; positionally the (xy, magnitude) one would match
        return cv2.cuda.magnitude(x=x.reshape(1), y=y.reshape(1)).reshape(x.channels())

    def abs_convert(self, image: Any, dtype: np.dtype, alpha: float = 1.0) -> Any:
        if _cuda("abs") is None or not self._fits(image, (cv2.CV_32F,)):
            return self.fallback("abs_convert", image, dtype, alpha)
        return cv2.cuda.abs(image).convertTo(_depth(dtype), alpha=alpha, beta=0.0)

    def clip(self, image: Any, low: float, high: float) -> Any:
        threshold = _cuda("threshold")
        if threshold is None or not self._fits(image, (cv2.CV_32F,)):
            return self.fallback("clip", image, low, high)
        below_high = threshold(image, high, high, cv2.THRESH_TRUNC)[1]
        negated = threshold(below_high.convertTo(cv2.CV_32F, alpha=-1.0), -low, -low, cv2.THRESH_TRUNC)[1]
        return negated.convertTo(cv2.CV_32F, alpha=-1.0)

    def lut(self, image: Any, table: np.ndarray) -> Any:
        table = np.asarray(table)
        if (_cuda("createLookUpTable") is None or not self._fits(image, (cv2.CV_8U,))
                or image.channels() not in (1, 3) or table.dtype != np.uint8
                or not (table.size == 256 or table.ndim >= 2 and table.shape[-1] == 3 and table.size == 768)):
            return self.fallback("lut", image, table)
        shape = (1, 256) if table.size == 256 else (1, 256, 3)
        key = ("lut", shape, table.tobytes())
        return self._filter(key, lambda: cv2.cuda.createLookUpTable(table.reshape(shape))).transform(image)

    def transform(self, image: Any, matrix: np.ndarray) -> Any:
        return self.fallback("transform", image, matrix)  # cv2.cuda has no per-pixel matrix transform

    def threshold(self, image: Any, thresh: float, maxval: float, kind: int) -> Any:
        if _cuda("threshold") is None or not self._fits(image, (cv2.CV_8U, cv2.CV_16U, cv2.CV_32F)):
            return self.fallback("threshold", image, thresh, maxval, kind)
        return cv2.cuda.threshold(image, thresh, maxval, kind)[1]

    def calc_hist(self, image: Any, channels: int, levels: int) -> np.ndarray:
        depth = cv2.CV_8U if levels == 256 else cv2.CV_16U
        if _cuda("histEven") is None or not self._fits(image, (depth,)):
            return self.fallback("calc_hist", image, channels, levels, host_result=True)
        planes = [image] if channels == 1 else cv2.cuda.split(image)
        rows = [cv2.cuda.histEven(plane, levels, 0, levels).download().reshape(-1) for plane in planes]
        return np.stack(rows).astype(np.int64)

    def min_max(self, image: Any, channels: int) -> list[tuple[float, float]]:
        if _cuda("minMax") is None or not self.is_native(image):
            return self.fallback("min_max", image, channels, host_result=True)
        planes = [image] if channels == 1 else cv2.cuda.split(image)
        return [tuple(float(v) for v in cv2.cuda.minMax(plane)) for plane in planes]  # type: ignore[misc]

    def equalize_hist(self, image: Any) -> Any:
        if _cuda("equalizeHist") is None or not self._fits(image, (cv2.CV_8U,)) or image.channels() != 1:
            return self.fallback("equalize_hist", image)
        return cv2.cuda.equalizeHist(image)

    def clahe(self, image: Any, clip_limit: float, tiles: tuple[int, int]) -> Any:
        if _cuda("createCLAHE") is None or not self._fits(image, (cv2.CV_8U, cv2.CV_16U)) or image.channels() != 1:
            return self.fallback("clahe", image, clip_limit, tiles)
        return self._filter(("clahe", clip_limit, tiles), lambda: cv2.cuda.createCLAHE(clip_limit, tiles)).apply(
            image, self.stream)

    def median(self, image: Any, ksize: int) -> Any:
        if _cuda("createMedianFilter") is None or not self._fits(image, (cv2.CV_8U,)) or image.channels() != 1:
            return self.fallback("median", image, ksize)
        return self._filter(("median", ksize), lambda: cv2.cuda.createMedianFilter(cv2.CV_8UC1, ksize)).apply(image)

    def bilateral(self, image: Any, diameter: int, sigma_color: float, sigma_space: float, border: int) -> Any:
        if (_cuda("bilateralFilter") is None or not self._fits(image, (cv2.CV_8U, cv2.CV_32F), border)
                or image.channels() not in (1, 3) or border == cv2.BORDER_WRAP):
            return self.fallback("bilateral", image, diameter, sigma_color, sigma_space, border)
        return cv2.cuda.bilateralFilter(image, diameter, sigma_color, sigma_space, borderMode=border)

    def morphology(self, image: Any, op: int, kernel: np.ndarray, iterations: int, border: int) -> Any:
        # cv::cuda morphology filters take 8UC1/8UC4/32FC1 and have no border argument: their
        # constant border matches cv2's default (BORDER_CONSTANT with the neutral value) only.
        if (_cuda("createMorphologyFilter") is None or not self._fits(image, (cv2.CV_8U, cv2.CV_32F))
                or border != cv2.BORDER_CONSTANT):
            return self.fallback("morphology", image, op, kernel, iterations, border)
        channels = (1, 4) if image.depth() == cv2.CV_8U else (1,)
        key = ("morphology", op, _kernel_key(kernel), iterations)
        return self._planes(image, channels, lambda img: self._filter(
            (*key, img.type()), lambda: cv2.cuda.createMorphologyFilter(op, img.type(), kernel,
                                                                         iterations=iterations)).apply(img))

    def _arithmetic(self, name: str, call: Callable[[Any, Any, int], Any], a: Any, b: Any,
                    dtype: np.dtype | None) -> Any | None:
        """``call(a, b, work depth)`` on the device, in the output depth; None where it cannot run.

        cudaarithm wants operands of one type and has no narrowing outputs (32F to 8U, ...),
        so mixed depths and narrowing results are computed in float32 and converted after.
        """
        if (_cuda(name) is None or not (self.is_native(a) and self.is_native(b)) or a.size() != b.size()
                or a.channels() != b.channels() or cv2.CV_64F in (a.depth(), b.depth())
                or (a.type() != b.type() and dtype is None)):  # cv2 raises for mixed types without dtype
            return None
        target = a.depth() if dtype is None else _depth(dtype)
        if a.type() == b.type() and (target == a.depth() or target in (cv2.CV_32F, cv2.CV_64F)):
            return call(a, b, target)
        out = call(*(m if m.depth() == cv2.CV_32F else m.convertTo(cv2.CV_32F) for m in (a, b)), cv2.CV_32F)
        return out if target == cv2.CV_32F else out.convertTo(target)

    def multiply(self, a: Any, b: Any, scale: float = 1.0, dtype: np.dtype | None = None) -> Any:
        out = self._arithmetic("multiply", lambda x, y, d: cv2.cuda.multiply(x, y, scale=scale, dtype=d), a, b, dtype)
        return self.fallback("multiply", a, b, scale, dtype) if out is None else out

    def divide(self, a: Any, b: Any, scale: float = 1.0, dtype: np.dtype | None = None) -> Any:
        out = self._arithmetic("divide", lambda x, y, d: cv2.cuda.divide(x, y, scale=scale, dtype=d), a, b, dtype)
        return self.fallback("divide", a, b, scale, dtype) if out is None else out

    def add_weighted(self, a: Any, wa: float, b: Any, wb: float, gamma: float = 0.0,
                     dtype: np.dtype | None = None) -> Any:
        out = self._arithmetic("addWeighted", lambda x, y, d: cv2.cuda.addWeighted(x, wa, y, wb, gamma, dtype=d),
                               a, b, dtype)
        return self.fallback("add_weighted", a, wa, b, wb, gamma, dtype) if out is None else out

    def bitwise_not(self, image: Any) -> Any:
        if _cuda("bitwise_not") is None or not self._fits(image, _ALL_DEPTHS - {cv2.CV_64F}):
            return self.fallback("bitwise_not", image)
        return cv2.cuda.bitwise_not(image)

    def flip(self, image: Any, code: int) -> Any:
        if _cuda("flip") is None or not self._fits(image, _FLIP_DEPTHS):
            return self.fallback("flip", image, code)
        return self._planes(image, (1, 3, 4), lambda img: cv2.cuda.flip(img, code))

    def resize(self, image: Any, size: tuple[int, int], interpolation: int) -> Any:
        if _cuda("remap") is None or not self._fits(image, _WARP_DEPTHS):
            return self.fallback("resize", image, size, interpolation)
        (src_w, src_h), (dst_w, dst_h) = image.size(), tuple(size)
        if interpolation == cv2.INTER_AREA and src_w > dst_w and src_h > dst_h and _cuda("resize") is not None:
            return self._planes(image, (1, 3, 4),
                                lambda img: cv2.cuda.resize(img, (dst_w, dst_h), interpolation=cv2.INTER_AREA))
        if interpolation not in (cv2.INTER_NEAREST, cv2.INTER_LINEAR):
            return self.fallback("resize", image, size, interpolation)
        map_x, map_y = (self.cached(("cuda-resize", interpolation, (src_w, src_h), (dst_w, dst_h), axis),
                                    lambda axis=axis: _resize_map(interpolation, (src_w, src_h), (dst_w, dst_h), axis))
                        for axis in (0, 1))
        return self._planes(image, (1, 3, 4), lambda img: cv2.cuda.remap(
            img, map_x, map_y, interpolation, borderMode=cv2.BORDER_REPLICATE))

    def cvt_color(self, image: Any, code: int) -> Any:
        if _cuda("cvtColor") is not None and self.is_native(image):
            try:
                return cv2.cuda.cvtColor(image, code)
            except cv2.error:  # a code or depth this build's cv::cuda::cvtColor does not implement
                pass
        return self.fallback("cvt_color", image, code)

    def remap(self, image: Any, map_x: Any, map_y: Any, interpolation: int, border: int,
              value: float = 0.0) -> Any:
        maps = [m if self.is_native(m) else np.asarray(m) for m in (map_x, map_y)]
        if (_cuda("remap") is None or interpolation != cv2.INTER_LINEAR or not self._fits(image, _WARP_DEPTHS, border)
                or any(m.type() != cv2.CV_32FC1 if self.is_native(m) else m.dtype != np.float32 or m.ndim != 2
                       for m in maps)):
            return self.fallback("remap", image, map_x, map_y, interpolation, border, value)
        device_maps = [m if self.is_native(m) else self.upload(m) for m in maps]  # moved per call, like images
        return self._planes(image, (1, 3, 4), lambda img: cv2.cuda.remap(
            img, *device_maps, interpolation, borderMode=border, borderValue=(value,) * 4))

    def concat(self, images: Sequence[Any], axis: int) -> Any:
        images = list(images)
        sizes = [image.size() if self.is_native(image) else None for image in images]
        shared = 1 if axis == 1 else 0  # hconcat keeps the height (size()[1]), vconcat the width
        if None in sizes or len({image.type() for image in images}) != 1 or len({s[shared] for s in sizes}) != 1:
            return self.fallback("concat", images, axis)
        total = sum(s[1 - shared] for s in sizes)
        width, height = (total, sizes[0][1]) if axis == 1 else (sizes[0][0], total)
        out = cv2.cuda.GpuMat(height, width, images[0].type())
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
